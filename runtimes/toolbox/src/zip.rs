//! `zip` (src/zipfile.rs's format), behaving as Info-ZIP's zip 3.0 does for the lines agents
//! type: `zip -r out.zip dir`, `zip -r -q out.zip . -x '*.git*'`, `zip out.zip a b`, `-j`,
//! `-0`..`-9`, `-u`, `-f`, `-d`, `-m`, `-D`, `-y`, `-i`, `-T`. Its messages are Info-ZIP's and,
//! as Info-ZIP's are, on stdout (`  adding: a.txt (deflated 40%)`, `\tzip warning: name not
//! matched: x`, `zip error: Nothing to do! (out.zip)`), with its statuses (12 nothing to do, 16
//! bad arguments, 18 a file not read). Every other option of Info-ZIP's is refused by name
//! (status 16). Names are Info-ZIP's: leading `/` and `./` go, `../` stays.

use std::borrow::Cow;
use std::fs;

use crate::find::mode_of;
use crate::glob::Glob;
use crate::guest_path::normalize;
use crate::own::reason;
use crate::zipfile::{self, Archive, DEFLATED, Member, Output, STORED};

/// Info-ZIP's statuses.
const NOTHING_TO_DO: i32 = 12;
const BAD_ARGUMENTS: i32 = 16;
const ZIP_ERROR: i32 = 3;
const READ_ERROR: i32 = 18;
const WRITE_ERROR: i32 = 15;

/// The long options implemented, and the short letter each stands for.
const LONG: &[(&str, char)] = &[
    ("recurse-paths", 'r'),
    ("quiet", 'q'),
    ("junk-paths", 'j'),
    ("no-dir-entries", 'D'),
    ("symlinks", 'y'),
    ("move", 'm'),
    ("update", 'u'),
    ("freshen", 'f'),
    ("delete", 'd'),
    ("exclude", 'x'),
    ("include", 'i'),
    ("test", 'T'),
    ("help", 'h'),
    ("store-only", '0'),
    ("compress-1", '1'),
    ("compress-9", '9'),
];

/// Info-ZIP's options of more than one letter (`-db`, `-FS`, ...), refused as a whole.
const MULTI: &[&str] = &[
    "db", "dc", "dd", "dg", "ds", "du", "dv", "FF", "FS", "FI", "ll", "MM", "nw", "sb", "sc", "sd",
    "sf", "so", "sp", "su", "sU", "sv", "tt", "TT", "UN", "ws", "h2",
];

/// What a `zip` command line asks for.
#[derive(Default)]
struct Options {
    recurse: bool,
    quiet: bool,
    junk: bool,
    no_dirs: bool,
    symlinks: bool,
    moving: bool,
    update: bool,
    freshen: bool,
    delete: bool,
    test: bool,
    level: u32,
    excludes: Vec<Glob>,
    includes: Vec<Glob>,
    archive: Option<String>,
    names: Vec<String>,
}

/// Zip's error lines: a blank line, then `zip error: ...`, on stdout.
fn fail(status: i32, message: &str) -> i32 {
    println!("\nzip error: {message}");
    status
}

pub fn main(args: super::Args) -> i32 {
    let words = crate::getopt::words(args);
    let o = match parse(&words) {
        Ok(Some(o)) => o,
        Ok(None) => return 0,
        Err(message) => return fail(BAD_ARGUMENTS, &message),
    };
    let Some(archive) = o.archive.clone() else {
        return fail(
            BAD_ARGUMENTS,
            "Invalid command arguments (nothing to select from)",
        );
    };
    if archive == "-" {
        return fail(
            BAD_ARGUMENTS,
            "Invalid command arguments (an archive on stdout is not supported here)",
        );
    }
    // Info-ZIP adds `.zip` to a name without a suffix.
    let base = archive.rsplit('/').next().unwrap_or(&archive);
    let given = archive.clone();
    let archive = if base.contains('.') {
        archive
    } else {
        format!("{archive}.zip")
    };
    let old = match fs::read(&archive) {
        Ok(data) => match Archive::read(data) {
            Ok(a) => Some(a),
            Err(_) => {
                return fail(
                    ZIP_ERROR,
                    &format!("Zip file structure invalid ({archive})"),
                );
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return fail(
                ZIP_ERROR,
                &format!("Could not open {archive}: {}", reason(&e)),
            );
        }
    };
    if o.delete {
        return delete(&o, &archive, old);
    }
    run(&o, &given, &archive, old)
}

/// Parses Info-ZIP's command line: options anywhere, bundled (`-rq9`); `-x` and `-i` take
/// every following word up to the next option; the first operand is the archive. `Ok(None)`
/// after `-h`.
fn parse(words: &[String]) -> Result<Option<Options>, String> {
    let mut o = Options {
        level: 6,
        ..Options::default()
    };
    let mut i = 0;
    let mut only_names = false;
    while i < words.len() {
        let word = &words[i];
        i += 1;
        if only_names || word == "-" || !word.starts_with('-') {
            if o.archive.is_none() {
                o.archive = Some(word.clone());
            } else {
                o.names.push(word.clone());
            }
            continue;
        }
        if word == "--" {
            only_names = true;
            continue;
        }
        let letters: Vec<char> = if let Some(long) = word.strip_prefix("--") {
            let long = long.split('=').next().unwrap_or(long);
            match LONG.iter().find(|(name, _)| *name == long) {
                Some((_, c)) => vec![*c],
                None => {
                    return Err(format!(
                        "Invalid command arguments (long option '{long}' {})",
                        if KNOWN_LONG.contains(&long) {
                            "is not supported here"
                        } else {
                            "not supported"
                        }
                    ));
                }
            }
        } else {
            word[1..].chars().collect()
        };
        let mut j = 0;
        while j < letters.len() {
            let c = letters[j];
            j += 1;
            let two: String = letters[j - 1..letters.len().min(j + 1)].iter().collect();
            let c = if MULTI.contains(&two.as_str()) {
                '\0'
            } else {
                c
            };
            match c {
                '0'..='9' => o.level = c.to_digit(10).unwrap_or(6),
                'r' => o.recurse = true,
                'q' => o.quiet = true,
                'j' => o.junk = true,
                'D' => o.no_dirs = true,
                'y' => o.symlinks = true,
                'm' => o.moving = true,
                'u' => o.update = true,
                'f' => o.freshen = true,
                'd' => o.delete = true,
                'T' => o.test = true,
                'h' => {
                    println!("{HELP}");
                    return Ok(None);
                }
                'x' | 'i' => {
                    let rest: String = letters[j..].iter().collect();
                    let mut list = Vec::new();
                    if !rest.is_empty() {
                        list.push(rest);
                    }
                    while i < words.len() && (!words[i].starts_with('-') || words[i] == "-") {
                        list.push(words[i].clone());
                        i += 1;
                    }
                    if list.is_empty() {
                        let what = if c == 'x' {
                            "exclude files matching patterns"
                        } else {
                            "include only files matching patterns"
                        };
                        return Err(format!(
                            "Invalid command arguments (option '{c}' ({what}) requires a value)"
                        ));
                    }
                    if list.iter().any(|p| p.starts_with('@')) {
                        return Err(format!(
                            "Invalid command arguments (-{c} @file lists are not supported here)"
                        ));
                    }
                    let globs = list.iter().map(|p| Glob::new(p, false));
                    if c == 'x' {
                        o.excludes.extend(globs);
                    } else {
                        o.includes.extend(globs);
                    }
                    j = letters.len();
                }
                _ => {
                    let name = if c == '\0' { two } else { c.to_string() };
                    return Err(format!(
                        "Invalid command arguments (option -{name} is not supported here; \
                         supported: -r -q -j -D -y -m -u -f -d -x -i -T -0..-9)"
                    ));
                }
            }
        }
    }
    Ok(Some(o))
}

/// Info-ZIP's long options that are not implemented, refused by name rather than unknown.
const KNOWN_LONG: &[&str] = &[
    "append",
    "ascii",
    "adjust-sfx",
    "temp-path",
    "entry-comments",
    "fix",
    "fixfix",
    "filesync",
    "grow",
    "latest-time",
    "to-crlf",
    "from-crlf",
    "license",
    "suffixes",
    "output-file",
    "encrypt",
    "password",
    "split-size",
    "split-pause",
    "split-bell",
    "split-verbose",
    "test-command",
    "verbose",
    "version",
    "no-extra",
    "archive-comment",
    "unicode",
    "show-files",
    "display-bytes",
    "display-counts",
    "display-dots",
    "display-globaldots",
    "display-usize",
    "display-volume",
    "copy-entries",
    "difference-archive",
    "compression-method",
    "recurse-patterns",
    "wild-stop-dirs",
    "nw",
    "no-wild",
];

const HELP: &str = "Usage: zip [-options] zipfile [file ...] [-x pattern ...] [-i pattern ...]\n  \
-r   recurse into directories     -j   junk (don't record) directory names\n  \
-q   quiet operation              -D   do not add directory entries\n  \
-0   store only                   -1..-9  compress faster..better (default 6)\n  \
-u   update: only changed or new files\n  \
-f   freshen: only changed files already in the archive\n  \
-d   delete entries in zipfile    -m   move into zipfile (delete OS files)\n  \
-y   store symbolic links as the link instead of the referenced file\n  \
-x   exclude the following names  -i   include only the following names\n  \
-T   test zipfile integrity\n\
Other Info-ZIP options (encryption, splitting, comments, -@, ...) are not available here.";

/// One thing found to add: the name it goes in as, and where it is.
struct Found {
    name: String,
    path: String,
    kind: Kind,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    File,
    Dir,
    Link,
}

/// Collects what the names say (walking directories with `-r`), as Info-ZIP does before it
/// adds anything: a name that is not there is warned of, then forgotten.
fn collect(o: &Options, archive_abs: &str, cwd: &str) -> (Vec<Found>, bool) {
    let mut found = Vec::new();
    let mut missed = false;
    for name in &o.names {
        // Wildcards are the shell's: a name is a path (`'*.txt'` quoted is not matched).
        if fs::symlink_metadata(name).is_err() {
            if !o.quiet {
                println!("\tzip warning: name not matched: {name}");
            }
            missed = true;
            continue;
        }
        walk(o, name, archive_abs, cwd, &mut found, true);
    }
    (found, missed)
}

/// The name Info-ZIP stores for `path`: without leading `/` and `./` parts (`../` stays).
fn entry_name(path: &str) -> String {
    let mut name = path;
    loop {
        if let Some(rest) = name.strip_prefix("./") {
            name = rest;
        } else if let Some(rest) = name.strip_prefix('/') {
            name = rest;
        } else {
            break;
        }
    }
    if name == "." {
        String::new()
    } else {
        name.to_owned()
    }
}

fn walk(
    o: &Options,
    path: &str,
    archive_abs: &str,
    cwd: &str,
    found: &mut Vec<Found>,
    operand: bool,
) {
    let Ok(lmeta) = fs::symlink_metadata(path) else {
        return;
    };
    let link = lmeta.file_type().is_symlink();
    let kind = if link && o.symlinks {
        Kind::Link
    } else {
        match fs::metadata(path) {
            Ok(m) if m.is_dir() => Kind::Dir,
            Ok(_) => Kind::File,
            Err(_) => {
                if operand && !o.quiet {
                    println!("\tzip warning: name not matched: {path}");
                }
                return;
            }
        }
    };
    if normalize(cwd, path) == archive_abs {
        return;
    }
    let trimmed = path.trim_end_matches('/');
    let trimmed = if trimmed.is_empty() { "/" } else { trimmed };
    let mut name = entry_name(trimmed);
    if kind == Kind::Dir && !name.is_empty() {
        name.push('/');
    }
    let full = name.clone();
    if o.junk {
        name = name.rsplit('/').next().unwrap_or(&name).to_owned();
    }
    let wanted = !name.is_empty()
        && !(kind == Kind::Dir && (o.no_dirs || o.junk))
        && !o.excludes.iter().any(|g| g.matches(&full))
        && (o.includes.is_empty() || o.includes.iter().any(|g| g.matches(&full)));
    if wanted && !found.iter().any(|f| f.name == name) {
        found.push(Found {
            name,
            path: path.to_owned(),
            kind,
        });
    }
    if kind == Kind::Dir && o.recurse {
        let base = path.trim_end_matches('/');
        let Ok(entries) = fs::read_dir(path) else {
            return;
        };
        for entry in entries.flatten() {
            let child = entry.file_name().to_string_lossy().into_owned();
            let child = match base {
                "." => child,
                "" => format!("/{child}"),
                _ => format!("{base}/{child}"),
            };
            walk(o, &child, archive_abs, cwd, found, false);
        }
    }
}

/// The member for what was found, its data as it goes in, and the method's word for the
/// `adding:` line.
fn pack(o: &Options, f: &Found) -> Result<(Member, Vec<u8>), String> {
    let meta = if f.kind == Kind::Link {
        fs::symlink_metadata(&f.path)
    } else {
        fs::metadata(&f.path)
    }
    .map_err(|e| reason(&e))?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs() as i64);
    let (type_bits, perms) = match f.kind {
        Kind::Dir => (0o040000, mode_of(&f.path, &meta)),
        Kind::Link => (0o120000, 0o777),
        Kind::File => (0o100000, mode_of(&f.path, &meta)),
    };
    let mut member = zipfile::new_member(&f.name, type_bits | perms, mtime);
    let data = match f.kind {
        Kind::Dir => Vec::new(),
        Kind::Link => fs::read_link(&f.path)
            .map_err(|e| reason(&e))?
            .to_string_lossy()
            .into_owned()
            .into_bytes(),
        Kind::File => fs::read(&f.path).map_err(|e| reason(&e))?,
    };
    member.size = data.len() as u64;
    member.crc = zipfile::crc32(&data);
    member.internal = u16::from(zipfile::looks_like_text(&data));
    // Info-ZIP keeps as they are: empty files, directories, links, `-0`, and what deflate
    // does not make smaller.
    let packed = (o.level > 0 && !data.is_empty() && f.kind == Kind::File)
        .then(|| zipfile::deflate(&data, o.level))
        .filter(|p| p.len() < data.len());
    let data = match packed {
        Some(p) => {
            member.method = DEFLATED;
            // Info-ZIP's flags for the level (zipinfo's defX / defF / defN).
            member.flags = match o.level {
                8 | 9 => 2,
                1 | 2 => 4,
                _ => 0,
            };
            p
        }
        None => {
            member.method = STORED;
            data
        }
    };
    member.compressed = data.len() as u64;
    Ok((member, data))
}

/// `zip` adding, updating (`-u`) or freshening (`-f`).
fn run(o: &Options, given: &str, archive: &str, old: Option<Archive>) -> i32 {
    let cwd = std::env::current_dir()
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "/".to_owned());
    let archive_abs = normalize(&cwd, archive);
    let (found, missed) = collect(o, &archive_abs, &cwd);
    let old_members = old.as_ref().map_or(&[][..], |a| a.members.as_slice());
    let mut outputs: Vec<Output<'_>> = old_members
        .iter()
        .map(|m| Output {
            member: m.clone(),
            data: Cow::Borrowed(old.as_ref().and_then(|a| a.raw(m)).unwrap_or_default()),
        })
        .collect();
    let mut changed = false;
    let mut status = 0;
    let mut added = Vec::new();
    for f in &found {
        let at = outputs.iter().position(|out| out.member.name == f.name);
        if (o.update || o.freshen)
            && let Some(at) = at
        {
            let mtime = fs::metadata(&f.path)
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs() as i64);
            let m = &outputs[at].member;
            let new = zipfile::to_dos(mtime);
            if (new.0, new.1) <= (m.dos_date, m.dos_time) {
                continue;
            }
        }
        if o.freshen && at.is_none() {
            continue;
        }
        let (member, data) = match pack(o, f) {
            Ok(packed) => packed,
            Err(e) => {
                println!("\tzip warning: could not open for reading: {}", f.path);
                let _ = e;
                status = READ_ERROR;
                continue;
            }
        };
        if !o.quiet {
            let verb = if at.is_some() { "updating" } else { "  adding" };
            let method = if member.method == DEFLATED {
                "deflated"
            } else {
                "stored"
            };
            let pct = if member.method == DEFLATED {
                zipfile::percent(member.size, member.compressed)
            } else {
                0
            };
            println!("{verb}: {} ({method} {pct}%)", f.name);
        }
        let output = Output {
            member,
            data: Cow::Owned(data),
        };
        match at {
            Some(at) => outputs[at] = output,
            None => outputs.push(output),
        }
        changed = true;
        added.push(f);
    }
    if !changed {
        // Info-ZIP's `-u` and `-f` say nothing when everything is up to date.
        if (o.update || o.freshen) && old.is_some() && !found.is_empty() {
            return NOTHING_TO_DO;
        }
        // With `-r`, a name not there was likely meant as a pattern: Info-ZIP says how.
        if o.recurse && missed && found.is_empty() {
            let names = o.names.join(" ");
            return fail(
                NOTHING_TO_DO,
                &format!("Nothing to do! (try: zip -r {given} . -i {names})"),
            );
        }
        return fail(NOTHING_TO_DO, &format!("Nothing to do! ({archive})"));
    }
    if let Err(code) = save(archive, &outputs) {
        return code;
    }
    if o.test
        && let Err(code) = test(archive, o.quiet)
    {
        return code;
    }
    if o.moving {
        for f in added.iter().filter(|f| f.kind != Kind::Dir) {
            let _ = fs::remove_file(&f.path);
        }
        for f in added.iter().rev().filter(|f| f.kind == Kind::Dir) {
            let _ = fs::remove_dir(&f.path);
        }
    }
    status
}

/// Writes the archive out.
fn save(archive: &str, outputs: &[Output<'_>]) -> Result<(), i32> {
    let bytes = zipfile::write(outputs).map_err(|e| fail(ZIP_ERROR, &e))?;
    fs::write(archive, bytes).map_err(|e| {
        fail(
            WRITE_ERROR,
            &format!("Could not create output file ({archive}): {}", reason(&e)),
        )
    })
}

/// `-T`: every member read back and checked, as Info-ZIP's `unzip -tqq` run by zip does.
fn test(archive: &str, quiet: bool) -> Result<(), i32> {
    let ok = fs::read(archive)
        .ok()
        .and_then(|d| Archive::read(d).ok())
        .is_some_and(|a| a.members.iter().all(|m| a.contents(m).is_ok()));
    if !ok {
        println!("test of {archive} FAILED");
        return Err(fail(
            8,
            "Zip file invalid, could not spawn unzip, or wrong unzip (original files unmodified)",
        ));
    }
    if !quiet {
        println!("test of {archive} OK");
    }
    Ok(())
}

/// `zip -d`: the members that match the names (Info-ZIP wildcards, `*` across `/`) go.
fn delete(o: &Options, archive: &str, old: Option<Archive>) -> i32 {
    let Some(old) = old else {
        return fail(ZIP_ERROR, &format!("Nothing to do! ({archive})"));
    };
    let globs: Vec<Glob> = o.names.iter().map(|n| Glob::new(n, false)).collect();
    let mut hit = vec![false; globs.len()];
    let mut kept = Vec::new();
    for m in &old.members {
        let matched: Vec<usize> = (0..globs.len())
            .filter(|&i| globs[i].matches(&m.name))
            .collect();
        if matched.is_empty() {
            kept.push(Output {
                member: m.clone(),
                data: Cow::Borrowed(old.raw(m).unwrap_or_default()),
            });
        } else {
            for i in matched {
                hit[i] = true;
            }
            if !o.quiet {
                println!("deleting: {}", m.name);
            }
        }
    }
    if !o.quiet {
        for (i, name) in o.names.iter().enumerate() {
            if !hit[i] {
                println!("\tzip warning: name not matched: {name}");
            }
        }
    }
    if kept.len() == old.members.len() {
        return fail(NOTHING_TO_DO, &format!("Nothing to do! ({archive})"));
    }
    if kept.is_empty() && !o.quiet {
        println!("\tzip warning: zip file empty");
    }
    match save(archive, &kept) {
        Ok(()) => 0,
        Err(code) => code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_lose_leading_slashes_and_dots_only() {
        for (path, name) in [
            ("a.txt", "a.txt"),
            ("./a.txt", "a.txt"),
            ("/tmp/x", "tmp/x"),
            ("../a", "../a"),
            (".", ""),
            ("././src", "src"),
        ] {
            assert_eq!(entry_name(path), name, "{path}");
        }
    }

    #[test]
    fn options_are_info_zips_or_refused_by_name() {
        let parse = |line: &str| {
            let words: Vec<String> = line.split(' ').map(str::to_owned).collect();
            parse(&words)
        };
        let o = parse("-r -q out.zip . -x *.git* *.o -9").unwrap().unwrap();
        assert!(o.recurse && o.quiet && o.level == 9);
        assert_eq!(o.archive.as_deref(), Some("out.zip"));
        assert_eq!(o.names, ["."]);
        assert_eq!(o.excludes.len(), 2);
        let o = parse("-rj0 a b").unwrap().unwrap();
        assert!(o.recurse && o.junk && o.level == 0);
        for (line, name) in [
            ("-e a.zip b", "-e"),
            ("-ds 1m a b", "-ds"),
            ("-rP x a b", "-P"),
        ] {
            let e = parse(line).err().unwrap();
            assert!(
                e.contains(&format!("option {name} is not supported")),
                "{e}"
            );
        }
        assert!(
            parse("--encrypt a b")
                .err()
                .unwrap()
                .contains("is not supported here")
        );
        assert!(
            parse("--bogus a b")
                .err()
                .unwrap()
                .ends_with("'bogus' not supported)")
        );
    }

    /// Where Info-ZIP is at hand: its unzip tests and lists our archive as we wrote it, and we
    /// read its archives, written to a file and streamed to a pipe (data descriptors).
    #[test]
    fn info_zip_reads_ours_and_we_read_its() {
        use std::process::Command;
        let has = |tool: &str| Command::new(tool).arg("-h").output().is_ok();
        if !has("zip") || !has("unzip") {
            return;
        }
        let dir = std::env::temp_dir().join(format!("toolbox-zip-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let tree = dir.join("tree");
        fs::create_dir_all(tree.join("sub")).unwrap();
        let files = [
            ("a.txt", "apple\n".repeat(3)),
            ("big.txt", "0123456789\n".repeat(5000)),
            ("empty", String::new()),
            ("sub/x.csv", "a,b\n1,2\n".into()),
        ];
        for (name, text) in &files {
            fs::write(tree.join(name), text).unwrap();
        }
        let ours = dir.join("ours.zip").to_string_lossy().into_owned();
        let o = Options {
            recurse: true,
            quiet: true,
            level: 9,
            names: vec![tree.to_string_lossy().into_owned()],
            ..Options::default()
        };
        assert_eq!(run(&o, &ours, &ours, None), 0);
        let tested = Command::new("unzip").args(["-tq", &ours]).output().unwrap();
        assert!(tested.status.success(), "{tested:?}");
        let listed = Command::new("unzip").args(["-Z1", &ours]).output().unwrap();
        let ours_read = Archive::read(fs::read(&ours).unwrap()).unwrap();
        let names: Vec<&str> = ours_read.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            String::from_utf8_lossy(&listed.stdout)
                .lines()
                .collect::<Vec<_>>(),
            names
        );
        let shell = |line: &str| {
            let ran = Command::new("sh")
                .args(["-c", line])
                .current_dir(&dir)
                .output()
                .unwrap();
            assert!(ran.status.success(), "{line}: {ran:?}");
        };
        shell("zip -qr theirs.zip tree && zip -qr - tree > piped.zip");
        for archive in ["theirs.zip", "piped.zip"] {
            let read = Archive::read(fs::read(dir.join(archive)).unwrap()).unwrap();
            assert_eq!(read.members.len(), files.len() + 2, "{archive}");
            for (name, text) in &files {
                let m = (read.members.iter())
                    .find(|m| m.name == format!("tree/{name}"))
                    .unwrap();
                assert_eq!(
                    read.contents(m).unwrap(),
                    text.as_bytes(),
                    "{archive} {name}"
                );
            }
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}
