//! `unzip` and `zipinfo` (src/zipfile.rs's format), behaving as Info-ZIP's unzip 6.0 does for
//! the lines agents type: `unzip x.zip`, `-o`, `-n`, `-d DIR`, `-l`, `-v`, `-t`, `-p`, `-q`,
//! `-j`, `-C`, member patterns and `-x` (Info-ZIP wildcards: `*` crosses `/`), and `unzip -Z1`
//! / `zipinfo -1` (the names). Lines and statuses are Info-ZIP's (`Archive:`, `  inflating:`,
//! `-l`'s table; 1 a warning, 9 no archive, 11 a pattern matching nothing, 81 a method or
//! encryption not available here). Every other option is refused by name (status 10).
//!
//! Names are hostile: a leading `/` and every `..` part go (with Info-ZIP's warnings), nothing
//! is written through a symbolic link already below the destination (the link is not
//! followed: the member is refused), links in the archive are made last (Info-ZIP's
//! "deferred" links), and a file being replaced is unlinked first, so that a link in its place
//! is never written through.

use std::fs;
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};

use crate::glob::Glob;
use crate::own::reason;
use crate::zipfile::{Archive, DEFLATED, DataError, Member, ReadError};

/// Info-ZIP's statuses.
const WARNING: i32 = 1;
const ERROR: i32 = 2;
const BROKEN: i32 = 3;
const NOT_FOUND: i32 = 9;
const BAD_OPTIONS: i32 = 10;
const NO_MATCH: i32 = 11;
const UNSUPPORTED: i32 = 81;

/// What to do with the members.
#[derive(Clone, Copy, PartialEq, Default)]
enum Mode {
    #[default]
    Extract,
    List,
    Verbose,
    Test,
    Pipe,
    /// `-c`: each file's data on stdout after its `extracting:` line.
    Cat,
    Names,
}

/// What replaces a file already there.
#[derive(Clone, Copy, PartialEq, Default)]
enum Replace {
    #[default]
    Ask,
    Always,
    Never,
}

#[derive(Default)]
struct Options {
    mode: Mode,
    replace: Replace,
    quiet: u8,
    junk: bool,
    fold: bool,
    /// `-K`: set-user-ID and set-group-ID bits kept.
    keep_setid: bool,
    dest: Option<String>,
    archive: Option<String>,
    includes: Vec<String>,
    excludes: Vec<String>,
}

const USAGE: &str = "UnZip 6.00 of 20 April 2009 (the sandbox's own, Info-ZIP's lines).\n\n\
Usage: unzip [-Z] [-opts[modifiers]] file[.zip] [list] [-x xlist] [-d exdir]\n  \
Default action is to extract files in list, except those in xlist, to exdir.\n\n  \
-p  extract files to pipe, no messages     -l  list files (short format)\n  \
-c  extract files to stdout, with names\n  \
-t  test compressed archive data           -v  list verbosely\n  \
-d  extract files into exdir               -Z1 names only (as zipinfo -1)\n\n\
modifiers:\n  \
-n  never overwrite existing files         -q  quiet mode (-qq => quieter)\n  \
-o  overwrite files WITHOUT prompting      -j  junk paths (do not make directories)\n  \
-C  match filenames case-insensitively     -K  keep setuid/setgid permissions\n\
Other Info-ZIP options (-a -f -u -z -P -X ...) are not available here.";

/// `unzip` (`zipinfo` is `unzip -Z`).
pub fn main(name: &str, args: super::Args) -> i32 {
    let words = crate::getopt::words(args);
    let parsed = if name == "zipinfo" {
        parse_zipinfo(&words)
    } else if words.first().is_some_and(|w| w.starts_with("-Z")) {
        let mut rest = words.clone();
        rest[0] = format!("-{}", &words[0][2..]);
        if rest[0] == "-" {
            rest.remove(0);
        }
        parse_zipinfo(&rest)
    } else {
        parse(&words)
    };
    let o = match parsed {
        Ok(Some(o)) => o,
        Ok(None) => {
            println!("{USAGE}");
            return 0;
        }
        Err(message) => {
            eprintln!("{name}:  {message}");
            return BAD_OPTIONS;
        }
    };
    let Some(given) = o.archive.clone() else {
        println!("{USAGE}");
        return BAD_OPTIONS;
    };
    let Some(path) = [
        given.clone(),
        format!("{given}.zip"),
        format!("{given}.ZIP"),
    ]
    .into_iter()
    .find(|p| fs::metadata(p).is_ok_and(|m| m.is_file())) else {
        eprintln!("{name}:  cannot find or open {given}, {given}.zip or {given}.ZIP.");
        return NOT_FOUND;
    };
    let heading = o.quiet == 0 && !matches!(o.mode, Mode::Pipe | Mode::Names);
    if heading {
        println!("Archive:  {path}");
    }
    let data = match fs::read(&path) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{name}:  cannot read {path}: {}", reason(&e));
            return NOT_FOUND;
        }
    };
    let archive = match Archive::read(data) {
        Ok(a) => a,
        Err(ReadError::NotZip) => {
            eprintln!(
                "  End-of-central-directory signature not found.  Either this file is not\n  \
                 a zipfile, or it constitutes one disk of a multi-part archive.  In the\n  \
                 latter case the central directory and zipfile comment will be found on\n  \
                 the last disk(s) of this archive.\n\
                 {name}:  cannot find zipfile directory in one of {given} or\n        \
                 {given}.zip, and cannot find {given}.ZIP, period."
            );
            return NOT_FOUND;
        }
        Err(ReadError::Broken) => {
            eprintln!(
                "error [{path}]:  the central directory is not where it should be (a broken or partial zip file)"
            );
            return BROKEN;
        }
    };
    if archive.members.is_empty() {
        eprintln!("warning [{path}]:  zipfile is empty");
        return WARNING;
    }
    let mut status = 0;
    let globs =
        |list: &[String]| -> Vec<Glob> { list.iter().map(|p| Glob::new(p, o.fold)).collect() };
    let (includes, excludes) = (globs(&o.includes), globs(&o.excludes));
    let mut hit_in = vec![false; includes.len()];
    let mut hit_ex = vec![false; excludes.len()];
    let mut chosen = Vec::new();
    for m in &archive.members {
        let inc: Vec<usize> = (0..includes.len())
            .filter(|&i| includes[i].matches(&m.name))
            .collect();
        let exc: Vec<usize> = (0..excludes.len())
            .filter(|&i| excludes[i].matches(&m.name))
            .collect();
        for &i in &exc {
            hit_ex[i] = true;
        }
        if !exc.is_empty() || (!includes.is_empty() && inc.is_empty()) {
            continue;
        }
        for &i in &inc {
            hit_in[i] = true;
        }
        chosen.push(m);
    }
    let listing = matches!(o.mode, Mode::List | Mode::Verbose | Mode::Names);
    let missed = hit_in.iter().any(|hit| !hit);
    status = status.max(match o.mode {
        Mode::List => list(&chosen, o.quiet),
        Mode::Verbose => verbose(&chosen, o.quiet),
        Mode::Names => {
            for m in &chosen {
                println!("{}", m.name);
            }
            0
        }
        Mode::Test => {
            let unmatched: Vec<&str> = (hit_in.iter().zip(&o.includes))
                .filter(|(hit, _)| !**hit)
                .map(|(_, name)| name.as_str())
                .collect();
            let code = test(&archive, &chosen, &path, o.quiet, &unmatched);
            hit_in.fill(true);
            code.max(if missed { NO_MATCH } else { 0 })
        }
        Mode::Pipe => pipe(&archive, &chosen, None),
        Mode::Cat => pipe(&archive, &chosen, Some(o.quiet)),
        Mode::Extract => Extraction::new(&o).run(&archive, &chosen),
    });
    // A listing says nothing of patterns that matched nothing, and fails only when nothing
    // at all matched; the others say each, and fail; an exclusion that matched nothing is
    // only said.
    if listing {
        if chosen.is_empty() && !includes.is_empty() {
            status = status.max(NO_MATCH);
        }
        return status;
    }
    for (i, hit) in hit_in.iter().enumerate() {
        if !hit {
            eprintln!("caution: filename not matched:  {}", o.includes[i]);
            status = status.max(NO_MATCH);
        }
    }
    for (i, hit) in hit_ex.iter().enumerate() {
        if !hit {
            eprintln!("caution: excluded filename not matched:  {}", o.excludes[i]);
        }
    }
    status
}

/// Info-ZIP's options of unzip that are not implemented, said by name when refused.
const REFUSED: &str = "aAbBDeEfFiILMNOsSTuUVWXYz$:^";

/// Parses unzip's command line: options anywhere (`unzip x.zip -d out`), bundled (`-oq`);
/// `-d` takes a value; after `-x` the operands are exclusions. `Ok(None)` asks for the usage.
fn parse(words: &[String]) -> Result<Option<Options>, String> {
    if words.is_empty() {
        return Ok(None);
    }
    let mut o = Options::default();
    let mut i = 0;
    let mut excluding = false;
    while i < words.len() {
        let word = &words[i];
        i += 1;
        if !word.starts_with('-') || word == "-" {
            if o.archive.is_none() {
                o.archive = Some(word.clone());
            } else if excluding {
                o.excludes.push(word.clone());
            } else {
                o.includes.push(word.clone());
            }
            continue;
        }
        if word == "--help" {
            return Ok(None);
        }
        if word.starts_with("--") {
            return Err(format!(
                "long options ({word}) are not supported: unzip has single-letter ones"
            ));
        }
        let letters: Vec<char> = word[1..].chars().collect();
        let mut j = 0;
        while j < letters.len() {
            let c = letters[j];
            j += 1;
            match c {
                'l' => o.mode = Mode::List,
                'v' => o.mode = Mode::Verbose,
                't' => o.mode = Mode::Test,
                'p' => o.mode = Mode::Pipe,
                'c' => o.mode = Mode::Cat,
                'o' => o.replace = Replace::Always,
                'n' => o.replace = Replace::Never,
                'q' => o.quiet += 1,
                'j' => o.junk = true,
                'C' => o.fold = true,
                'K' => o.keep_setid = true,
                'x' => excluding = true,
                'h' => return Ok(None),
                'd' => {
                    let rest: String = letters[j..].iter().collect();
                    let dir = if !rest.is_empty() {
                        rest
                    } else if i < words.len() {
                        i += 1;
                        words[i - 1].clone()
                    } else {
                        return Err("-d option requires an argument (the directory)".into());
                    };
                    o.dest = Some(dir);
                    j = letters.len();
                }
                'Z' => {
                    return Err("-Z must be the first option (zipinfo mode)".into());
                }
                c if REFUSED.contains(c) || c.is_ascii_alphanumeric() => {
                    return Err(format!(
                        "option -{c} is not supported here (supported: -l -v -t -p -c -o -n \
                         -q -j -C -K -d DIR -x, and -Z1)"
                    ));
                }
                c => return Err(format!("invalid option -{c}")),
            }
        }
    }
    Ok(Some(o))
}

/// zipinfo's command line (or unzip's after `-Z`): only `-1` and `-2` (the names) are here.
fn parse_zipinfo(words: &[String]) -> Result<Option<Options>, String> {
    let mut o = Options {
        mode: Mode::Names,
        ..Options::default()
    };
    let mut names_only = false;
    let mut excluding = false;
    for word in words {
        if let Some(letters) = word.strip_prefix('-').filter(|l| !l.is_empty()) {
            for c in letters.chars() {
                match c {
                    '1' | '2' => names_only = true,
                    'x' => excluding = true,
                    c => {
                        return Err(format!(
                            "zipinfo option -{c} is not supported here (only -1 and -2, the \
                             names)"
                        ));
                    }
                }
            }
        } else if o.archive.is_none() {
            o.archive = Some(word.clone());
        } else if excluding {
            o.excludes.push(word.clone());
        } else {
            o.includes.push(word.clone());
        }
    }
    if !names_only {
        return Err(
            "zipinfo's long listings are not available here; -1 lists the names (unzip -l and \
             unzip -v list sizes and times)"
                .into(),
        );
    }
    Ok(Some(o))
}

/// `YYYY-MM-DD HH:MM` of a member (UTC): its `UT` time, else its DOS fields as they are
/// (a zero date is `1980-00-00`, as Info-ZIP shows it).
fn when(m: &Member) -> String {
    let (y, mo, d, h, mi) = match m.mtime {
        Some(t) => {
            let (y, mo, d, h, mi, _, _) = crate::find::civil(t);
            (y, mo, d, h, mi)
        }
        None => (
            1980 + i64::from(m.dos_date >> 9),
            u32::from((m.dos_date >> 5) & 0xf),
            u32::from(m.dos_date & 0x1f),
            u32::from(m.dos_time >> 11),
            u32::from((m.dos_time >> 5) & 0x3f),
        ),
    };
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}")
}

/// `-l`: Info-ZIP's short table.
fn list(members: &[&Member], quiet: u8) -> i32 {
    if quiet < 2 {
        println!("  Length      Date    Time    Name\n---------  ---------- -----   ----");
    }
    let mut total = 0;
    for m in members {
        println!("{:>9}  {}   {}", m.size, when(m), m.name);
        total += m.size;
    }
    if quiet < 2 {
        let files = if members.len() == 1 { "file" } else { "files" };
        println!(
            "---------                     -------\n{total:>9}                     {} {files}",
            members.len()
        );
    }
    0
}

/// unzip's ratio (per mille, rounded), as the percentage `-v` shows.
fn ratio(size: u64, compressed: u64) -> i64 {
    if size == 0 {
        return 0;
    }
    let (uc, c) = (i128::from(size), i128::from(compressed));
    let per_mille = (1000 * (uc - c).abs() + uc / 2) / uc;
    let pct = ((per_mille + 5) / 10) as i64;
    if uc >= c { pct } else { -pct }
}

/// `-v`: Info-ZIP's long table. Compressed sizes are flate2's (see
/// [`zipfile::deflate`]), which may differ from what Info-ZIP's zip makes.
fn verbose(members: &[&Member], quiet: u8) -> i32 {
    if quiet < 2 {
        println!(
            " Length   Method    Size  Cmpr    Date    Time   CRC-32   Name\n\
             --------  ------  ------- ---- ---------- ----- --------  ----"
        );
    }
    let (mut size, mut compressed) = (0, 0);
    for m in members {
        let method = match m.method {
            0 => "Stored".to_owned(),
            DEFLATED => format!(
                "Defl:{}",
                ["N", "X", "F", "S"][usize::from((m.flags >> 1) & 3)]
            ),
            12 => "BZip2".to_owned(),
            n => format!("Unk:{n:03}"),
        };
        println!(
            "{:>8}  {method:<6} {:>8} {:>3}% {} {:08x}  {}",
            m.size,
            m.compressed,
            ratio(m.size, m.compressed),
            when(m),
            m.crc,
            m.name
        );
        size += m.size;
        compressed += m.compressed;
    }
    if quiet < 2 {
        let files = if members.len() == 1 { "file" } else { "files" };
        println!(
            "--------          -------  ---                            -------\n\
             {size:>8}         {compressed:>8} {:>3}%                            {} {files}",
            ratio(size, compressed),
            members.len()
        );
    }
    0
}

/// What a member that cannot be read says (after `   skipping: NAME  ` or as an error) and
/// the status it gives.
fn refusal(e: &DataError) -> (String, i32) {
    match e {
        DataError::Encrypted => (
            "encrypted (password-protected) entries are not supported here".into(),
            UNSUPPORTED,
        ),
        DataError::Method(n) => (format!("unsupported compression method {n}"), UNSUPPORTED),
        DataError::Corrupt => ("invalid compressed data".into(), ERROR),
        DataError::Crc(got, want) => (format!("bad CRC {got:08x}  (should be {want:08x})"), ERROR),
    }
}

/// `-t`: every member read and checked.
/// Patterns that matched nothing (`unmatched`) are said (on stdout, as Info-ZIP's `-t` says
/// them) and count as an error in the summary.
fn test(archive: &Archive, members: &[&Member], path: &str, quiet: u8, unmatched: &[&str]) -> i32 {
    let mut status = 0;
    for m in members {
        match archive.contents(m) {
            Ok(_) if quiet == 0 => println!("    testing: {:<22}   OK", m.name),
            Ok(_) => {}
            Err(e @ (DataError::Encrypted | DataError::Method(_))) => {
                let (why, code) = refusal(&e);
                eprintln!("   skipping: {:<22}  {why}", m.name);
                status = status.max(code);
            }
            Err(e) => {
                let (why, code) = refusal(&e);
                println!("    testing: {:<22}   {why}", m.name);
                status = status.max(code);
            }
        }
    }
    for name in unmatched {
        println!("caution: filename not matched:  {name}");
    }
    if status == ERROR || status == 0 {
        if status == 0 && unmatched.is_empty() {
            if quiet < 2 {
                println!("No errors detected in compressed data of {path}.");
            }
        } else {
            println!("At least one error was detected in {path}.");
        }
    }
    status
}

/// `-p`: the members' data on stdout, nothing else; `-c` (`cat` with the quiet level): each
/// after its `extracting:` line and followed by a newline, unless quiet.
fn pipe(archive: &Archive, members: &[&Member], cat: Option<u8>) -> i32 {
    let mut status = 0;
    let mut out = io::stdout().lock();
    for m in members.iter().filter(|m| !m.is_dir()) {
        match archive.contents(m) {
            Ok(data) => {
                let head = match cat {
                    Some(0) => format!("{:>11}: {:<22}  \n", verb(m), m.name),
                    _ => String::new(),
                };
                let tail = if cat == Some(0) { &b"\n"[..] } else { &[] };
                let wrote = (out.write_all(head.as_bytes()))
                    .and_then(|()| out.write_all(&data))
                    .and_then(|()| out.write_all(tail));
                if wrote.is_err() {
                    return 50;
                }
            }
            Err(e) => {
                let (why, code) = refusal(&e);
                eprintln!("   skipping: {:<22}  {why}", m.name);
                status = status.max(code);
            }
        }
    }
    status
}

/// A member's name made safe, Info-ZIP's way: a leading `/` goes (warned of on stderr), and
/// so does every `..` part (warned of on stdout); `.` and empty parts go too. Returns the
/// parts left and the status the warnings give.
fn safe_parts(name: &str) -> (Vec<&str>, i32) {
    let mut status = 0;
    let mut parts = Vec::new();
    let mut climbed = false;
    for part in name.split('/') {
        match part {
            "" | "." => {}
            ".." => climbed = true,
            p => parts.push(p),
        }
    }
    if climbed {
        println!("warning:  skipped \"../\" path component(s) in {name}");
        status = WARNING;
    }
    if name.starts_with('/') {
        eprintln!("warning:  stripped absolute path spec from {name}");
        status = WARNING;
    }
    (parts, status)
}

/// Where extraction is at.
struct Extraction {
    dest: PathBuf,
    /// How the destination is written before a name (`out/`, or nothing for `.`).
    shown: String,
    replace: Replace,
    quiet: u8,
    junk: bool,
    /// The permission bits kept from a Unix mode (set-user-ID and set-group-ID only on `-K`).
    mode_mask: u32,
    /// Directories made, with their mode and time, set once everything is out.
    dirs: Vec<(PathBuf, Option<u32>, i64)>,
    /// Links to make once everything else is out: where, what it says, the name shown.
    links: Vec<(PathBuf, String, String)>,
    status: i32,
}

impl Extraction {
    fn new(o: &Options) -> Self {
        let shown = match o.dest.as_deref() {
            None | Some(".") => String::new(),
            Some(d) => format!("{}/", d.trim_end_matches('/')),
        };
        Extraction {
            dest: PathBuf::from(o.dest.as_deref().unwrap_or(".")),
            shown,
            replace: o.replace,
            quiet: o.quiet,
            junk: o.junk,
            mode_mask: if o.keep_setid { 0o7777 } else { 0o1777 },
            dirs: Vec::new(),
            links: Vec::new(),
            status: 0,
        }
    }

    fn run(mut self, archive: &Archive, members: &[&Member]) -> i32 {
        if !self.dest.exists()
            && let Err(e) = fs::create_dir(&self.dest)
        {
            eprintln!(
                "checkdir:  cannot create extraction directory: {}\n           {}",
                self.dest.display(),
                reason(&e)
            );
            return ERROR;
        }
        for m in members {
            self.member(archive, m);
        }
        if !self.links.is_empty() && self.quiet == 0 {
            println!("finishing deferred symbolic links:");
        }
        for (path, target, shown) in std::mem::take(&mut self.links) {
            if self.quiet == 0 {
                println!("  {shown:<22} -> {target}");
            }
            let _ = fs::remove_file(&path);
            if let Err(e) = uu_ln::symlink(Path::new(&target), &path) {
                eprintln!(
                    "error:  cannot create symbolic link {shown}: {}",
                    reason(&e)
                );
                self.status = self.status.max(ERROR);
            }
        }
        // Deepest first, so that a directory's own mode never stops what goes below it.
        for (path, mode, mtime) in self.dirs.iter().rev() {
            if let Some(mode) = mode {
                let _ = crate::archive::set_mode(path, mode & self.mode_mask);
            }
            set_time(path, *mtime);
        }
        self.status
    }

    fn member(&mut self, archive: &Archive, m: &Member) {
        let (mut parts, warned) = safe_parts(&m.name);
        self.status = self.status.max(warned);
        if self.junk {
            if m.is_dir() {
                return;
            }
            parts = parts.split_off(parts.len().saturating_sub(1));
        }
        if parts.is_empty() {
            return;
        }
        let rel = parts.join("/");
        let path = parts.iter().fold(self.dest.clone(), |p, part| p.join(part));
        let shown = format!("{}{rel}", self.shown);
        // Nothing goes through a link below the destination (one the archive made earlier
        // is not there yet: links come last).
        let mut at = self.dest.clone();
        // A directory's own name too: making it would be a no-op, and its mode would be set
        // through the link.
        let through = if m.is_dir() {
            parts.len()
        } else {
            parts.len() - 1
        };
        for part in &parts[..through] {
            at.push(part);
            if fs::symlink_metadata(&at).is_ok_and(|md| md.file_type().is_symlink()) {
                eprintln!(
                    "error:  {shown} not extracted: {} is a symbolic link, which is not followed",
                    at.display()
                );
                self.status = self.status.max(ERROR);
                return;
            }
        }
        if m.is_dir() {
            if fs::symlink_metadata(&path).is_ok_and(|md| md.is_dir()) {
                return;
            }
            if self.quiet == 0 {
                println!("   creating: {shown}/");
            }
            match fs::create_dir_all(&path) {
                Ok(()) => self
                    .dirs
                    .push((path, m.unix_mode().map(|md| md & 0o7777), m.modified())),
                Err(e) => {
                    eprintln!(
                        "checkdir error:  cannot create {shown}\n                 {}",
                        reason(&e)
                    );
                    self.status = self.status.max(ERROR);
                }
            }
            return;
        }
        if let Some(parent) = path.parent()
            && let Err(e) = fs::create_dir_all(parent)
        {
            eprintln!(
                "checkdir error:  cannot create {}\n                 {}",
                parent.display(),
                reason(&e)
            );
            self.status = self.status.max(ERROR);
            return;
        }
        if fs::symlink_metadata(&path).is_ok() && !self.may_replace(&shown) {
            return;
        }
        let data = match archive.contents(m) {
            Ok(data) => data,
            Err(e) => {
                let (why, code) = refusal(&e);
                if matches!(e, DataError::Encrypted | DataError::Method(_)) {
                    eprintln!("   skipping: {:<22}  {why}", m.name);
                } else {
                    println!("{:>11}: {shown:<22}  {why}", verb(m));
                }
                self.status = self.status.max(code);
                return;
            }
        };
        if m.is_symlink() {
            let target = String::from_utf8_lossy(&data).into_owned();
            if self.quiet == 0 {
                println!("    linking: {shown:<22}  -> {target} ");
            }
            self.links.push((path, target, shown));
            return;
        }
        if self.quiet == 0 {
            println!("{:>11}: {shown:<22}  ", verb(m));
        }
        // Unlinked first: a link in its place is replaced, never written through.
        if fs::symlink_metadata(&path).is_ok_and(|md| !md.is_dir()) {
            let _ = fs::remove_file(&path);
        }
        let written = fs::File::create(&path).and_then(|mut file| {
            file.write_all(&data)?;
            // On the handle written through: WASI may refuse times on a read-only one.
            let _ = file.set_modified(system_time(m.modified()));
            Ok(())
        });
        if let Err(e) = written {
            eprintln!("error:  cannot create {shown}\n        {}", reason(&e));
            self.status = self.status.max(ERROR);
            return;
        }
        // Unix modes as stored (set-user-ID and set-group-ID aside, without `-K`); others get
        // what the umask leaves.
        let mode = m.unix_mode().map_or(0o644, |md| md & self.mode_mask);
        let _ = crate::archive::set_mode(&path, mode);
    }

    /// Whether a file already at `shown` is replaced: `-o`, `-n`, or the answer read from
    /// stdin to Info-ZIP's question (on stderr); at the end of input, none is.
    fn may_replace(&mut self, shown: &str) -> bool {
        match self.replace {
            Replace::Always => return true,
            Replace::Never => return false,
            Replace::Ask => {}
        }
        loop {
            eprint!("replace {shown}? [y]es, [n]o, [A]ll, [N]one, [r]ename: ");
            let mut line = String::new();
            if io::stdin().lock().read_line(&mut line).unwrap_or(0) == 0 {
                eprintln!(" NULL\n(EOF or read error, treating as \"[N]one\" ...)");
                self.replace = Replace::Never;
                self.status = self.status.max(WARNING);
                return false;
            }
            match line.trim_end_matches('\n').chars().next() {
                Some('y') | Some('Y') => return true,
                Some('n') => return false,
                Some('A') => {
                    self.replace = Replace::Always;
                    return true;
                }
                Some('N') => {
                    self.replace = Replace::Never;
                    return false;
                }
                Some('r') => eprintln!("error:  renaming is not supported here"),
                _ => eprintln!("error:  invalid response [{}]", line.trim_end()),
            }
        }
    }
}

/// The word Info-ZIP writes before a member it takes out.
fn verb(m: &Member) -> &'static str {
    if m.method == DEFLATED {
        "inflating"
    } else {
        "extracting"
    }
}

/// Unix seconds as a `SystemTime` (before 1970 is 1970).
fn system_time(mtime: i64) -> std::time::SystemTime {
    std::time::UNIX_EPOCH + std::time::Duration::from_secs(mtime.max(0) as u64)
}

/// Sets a directory's modification time, where the system lets it.
fn set_time(path: &Path, mtime: i64) {
    if let Ok(file) = fs::File::open(path) {
        let _ = file.set_modified(system_time(mtime));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zipfile;
    use std::borrow::Cow;

    #[test]
    fn hostile_names_stay_below() {
        assert_eq!(safe_parts("../up.txt"), (vec!["up.txt"], WARNING));
        assert_eq!(safe_parts("/etc/x"), (vec!["etc", "x"], WARNING));
        assert_eq!(safe_parts("ok/../../x.txt"), (vec!["ok", "x.txt"], WARNING));
        assert_eq!(safe_parts("./a//b"), (vec!["a", "b"], 0));
        assert_eq!(safe_parts(".."), (vec![], WARNING));
    }

    #[test]
    fn ratios_are_unzips() {
        assert_eq!(ratio(5153, 171), 97);
        assert_eq!(ratio(5000, 23), 100);
        assert_eq!(ratio(73, 68), 7);
        assert_eq!(ratio(10, 12), -20);
    }

    /// An archive with a link `l -> ..` and a member `l/x`: nothing lands outside.
    #[test]
    fn nothing_is_written_through_a_link() {
        let dir = std::env::temp_dir().join(format!("toolbox-unzip-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let out = dir.join("out");
        fs::create_dir_all(&out).unwrap();
        std::os::unix::fs::symlink("..", out.join("pre")).unwrap();
        let member = |name: &str, mode: u32, data: &'static [u8]| {
            let mut m = zipfile::new_member(name, mode, 1_700_000_000);
            m.size = data.len() as u64;
            m.compressed = m.size;
            m.crc = zipfile::crc32(data);
            zipfile::Output {
                member: m,
                data: Cow::Borrowed(data),
            }
        };
        let bytes = zipfile::write(&[
            member("l", 0o120777, b".."),
            member("pre/", 0o040700, b""),
            member("pre/x", 0o100644, b"pwned"),
            member("l/y", 0o100644, b"pwned"),
            member("../z", 0o100600, b"safe"),
        ])
        .unwrap();
        let archive = Archive::read(bytes).unwrap();
        let o = Options {
            dest: Some(out.to_string_lossy().into_owned()),
            replace: Replace::Always,
            quiet: 2,
            ..Options::default()
        };
        let members: Vec<&Member> = archive.members.iter().collect();
        let status = Extraction::new(&o).run(&archive, &members);
        assert_eq!(status, ERROR);
        assert!(!dir.join("x").exists() && !dir.join("y").exists());
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o755, "not set through `pre`");
        // `l/y` came first and made `l` a directory, so the link could not be made there.
        assert!(fs::symlink_metadata(out.join("l")).unwrap().is_dir());
        assert_eq!(fs::read(out.join("z")).unwrap(), b"safe");
        assert_eq!(mode(&out.join("z")), 0o600);
        fs::remove_dir_all(&dir).unwrap();
    }
}
