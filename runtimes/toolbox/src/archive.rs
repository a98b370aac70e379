//! `tar` (create, extract, list; gzip on `-z` and detected when reading; `-C`, `-v`, `-f -`)
//! on the `tar` crate, and `gzip`, `gunzip`, `zcat` on `flate2`, behaving as GNU tar and gzip
//! do for the common lines (`tar czf out.tgz dir`, `tar xzf out.tgz -C dest`, `tar tf x.tar`,
//! `gzip -k f`, `zcat f.gz`). Owners in an archive are what WASI preview 1 lets the crate see
//! (none); modes are the files' own, read and set through the sandbox's host
//! ([`crate::find::mode_of`], [`uucore::fs::sandbox_set_mode`]); bzip2 and xz are refused.

use std::fs::{self, File};
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;

use crate::find::mode_of;
use crate::getopt::{Long, parse};
use crate::own::reason;

const TAR_LONG: &[Long] = &[
    ("create", 'c', false),
    ("extract", 'x', false),
    ("get", 'x', false),
    ("list", 't', false),
    ("file", 'f', true),
    ("gzip", 'z', false),
    ("gunzip", 'z', false),
    ("verbose", 'v', false),
    ("directory", 'C', true),
    ("exclude", 'X', true),
    ("bzip2", 'j', false),
    ("xz", 'J', false),
    ("keep-old-files", 'k', false),
    ("overwrite", 'O', false),
    ("no-same-owner", 'o', false),
    ("preserve-permissions", 'p', false),
    ("same-permissions", 'p', false),
    ("help", 'H', false),
];

/// Where a path goes in an archive: GNU tar drops leading `/` and `../`-free `./`.
fn member_name(path: &str) -> String {
    path.trim_start_matches('/').to_owned()
}

pub fn tar(args: super::Args) -> i32 {
    let mut args: Vec<String> = args
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    // GNU's old style: the first word is a bundle of letters without a dash (`tar czf x.tgz`).
    if let Some(first) = args.first()
        && !first.starts_with('-')
        && !first.is_empty()
        && first.chars().all(|c| "cxtzfvCjJkop".contains(c))
    {
        args[0] = format!("-{first}");
    }
    let o = match parse(&args, "cxtf:zvC:jJkopX:", TAR_LONG) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("tar: {e}\nTry 'tar --help' for more information.");
            return 2;
        }
    };
    if o.has('H') {
        println!(
            "Usage: tar -c|-x|-t [-z] [-v] [-f ARCHIVE] [-C DIR] [--exclude=PATTERN] [FILE]...\n\
             tar czf out.tgz dir; tar xzf out.tgz -C dest; tar tf out.tar. -j and -J (bzip2, \
             xz) are not available."
        );
        return 0;
    }
    if o.has('j') || o.has('J') {
        eprintln!("tar: bzip2 and xz are not available here; use -z (gzip)");
        return 2;
    }
    let modes = ['c', 'x', 't'].iter().filter(|m| o.has(**m)).count();
    if modes != 1 {
        eprintln!(
            "tar: You must specify one of the '-Acdtrux', '--delete' or '--test-label' options\n\
             Try 'tar --help' for more information."
        );
        return 2;
    }
    let file = o.value('f').unwrap_or("-").to_owned();
    let verbose = o.has('v');
    let excludes: Vec<String> = o.values('X').iter().map(|s| s.to_string()).collect();
    // `-C DIR` applies to what follows it; one directory for all is what agents write.
    let dir = o.value('C').map(PathBuf::from);
    let result = if o.has('c') {
        if o.operands.is_empty() {
            eprintln!("tar: Cowardly refusing to create an empty archive");
            return 2;
        }
        create(
            &file,
            &o.operands,
            o.has('z'),
            verbose,
            dir.as_deref(),
            &excludes,
        )
    } else {
        let extract = o.has('x').then_some(Extract {
            keep_old: o.has('k'),
            same_permissions: o.has('p'),
        });
        read_archive(&file, extract, verbose, dir.as_deref(), &o.operands)
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("tar: {message}");
            2
        }
    }
}

fn create(
    file: &str,
    operands: &[String],
    gzip: bool,
    verbose: bool,
    dir: Option<&Path>,
    excludes: &[String],
) -> Result<i32, String> {
    let out: Box<dyn Write> = if file == "-" {
        Box::new(io::stdout())
    } else {
        Box::new(File::create(file).map_err(|e| format!("{file}: Cannot open: {}", reason(&e)))?)
    };
    let out: Box<dyn Write> = if gzip {
        Box::new(GzEncoder::new(out, Compression::default()))
    } else {
        out
    };
    let mut builder = tar::Builder::new(out);
    builder.follow_symlinks(false);
    let base = dir.map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let mut status = 0;
    let mut stripped = false;
    // Files listed go to stderr with -v and -f - (stdout is the archive), else stdout.
    let mut listed = Vec::new();
    for operand in operands {
        if operand.starts_with('/') && !stripped {
            eprintln!("tar: Removing leading `/' from member names");
            stripped = true;
        }
        let source = base.join(operand);
        let mut failed = false;
        let added = add(
            &mut builder,
            &source,
            &member_name(operand),
            excludes,
            (&mut listed, &mut failed),
        );
        if let Err(e) = added {
            eprintln!("tar: {operand}: {e}");
            failed = true;
        }
        if failed {
            status = 2;
        }
    }
    let inner = builder
        .into_inner()
        .map_err(|e| format!("write error: {}", reason(&e)))?;
    drop(inner);
    if verbose {
        let text = listed.join("\n") + if listed.is_empty() { "" } else { "\n" };
        if file == "-" {
            eprint!("{text}");
        } else {
            print!("{text}");
        }
    }
    if status != 0 {
        eprintln!("tar: Exiting with failure status due to previous errors");
    }
    Ok(status)
}

/// Adds `source` as `name`, a directory with what is below it in directory order (GNU's);
/// `seen` gathers the names added and whether anything below failed (said on stderr, as GNU
/// goes on and exits 2).
fn add<W: Write>(
    builder: &mut tar::Builder<W>,
    source: &Path,
    name: &str,
    excludes: &[String],
    seen: (&mut Vec<String>, &mut bool),
) -> Result<(), String> {
    let (listed, failed) = seen;
    let base = name
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(name);
    if excludes
        .iter()
        .any(|p| crate::glob::Glob::new(p, false).matches(base))
    {
        return Ok(());
    }
    let meta = fs::symlink_metadata(source).map_err(|e| format!("Cannot stat: {}", reason(&e)))?;
    if meta.is_dir() {
        let dir_name = format!("{}/", name.trim_end_matches('/'));
        let shown = if name.is_empty() || name == "." {
            "./".to_owned()
        } else {
            dir_name.clone()
        };
        let mut header = tar::Header::new_gnu();
        set_times(&mut header, &meta);
        header.set_mode(mode_of(source, &meta));
        header.set_size(0);
        header.set_entry_type(tar::EntryType::Directory);
        builder
            .append_data(&mut header, &shown, io::empty())
            .map_err(|e| reason(&e))?;
        listed.push(shown.clone());
        let entries = fs::read_dir(source).map_err(|e| format!("Cannot open: {}", reason(&e)))?;
        for entry in entries.flatten() {
            let child = entry.file_name().to_string_lossy().into_owned();
            let child_name = format!("{shown}{child}");
            let seen = (&mut *listed, &mut *failed);
            if let Err(e) = add(builder, &entry.path(), &child_name, excludes, seen) {
                eprintln!("tar: {child_name}: {e}");
                *failed = true;
            }
        }
        return Ok(());
    }
    if meta.file_type().is_symlink() {
        let target = fs::read_link(source).map_err(|e| reason(&e))?;
        let mut header = tar::Header::new_gnu();
        set_times(&mut header, &meta);
        header.set_entry_type(tar::EntryType::Symlink);
        header.set_mode(0o777);
        header.set_size(0);
        builder
            .append_link(&mut header, name, &target)
            .map_err(|e| reason(&e))?;
    } else if !meta.is_file() {
        // A FIFO (WASI's std tells no other kind apart): stored as one, never opened, as GNU
        // tar does.
        let mut header = tar::Header::new_gnu();
        set_times(&mut header, &meta);
        header.set_mode(mode_of(source, &meta));
        header.set_size(0);
        header.set_entry_type(tar::EntryType::Fifo);
        builder
            .append_data(&mut header, name, io::empty())
            .map_err(|e| reason(&e))?;
    } else {
        let mut file = File::open(source).map_err(|e| format!("Cannot open: {}", reason(&e)))?;
        let mut header = tar::Header::new_gnu();
        set_times(&mut header, &meta);
        header.set_mode(mode_of(source, &meta));
        header.set_size(meta.len());
        header.set_entry_type(tar::EntryType::Regular);
        builder
            .append_data(&mut header, name, &mut file)
            .map_err(|e| reason(&e))?;
    }
    listed.push(name.to_owned());
    Ok(())
}

/// What a header says of a file besides its type, mode and size: its time (the tar crate's
/// `set_metadata` is for Unix and Windows only). Owners are 0: WASI does not say them.
fn set_times(header: &mut tar::Header, meta: &fs::Metadata) {
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    header.set_mtime(mtime);
    header.set_uid(0);
    header.set_gid(0);
}

/// Opens an archive for reading, gunzipping it when it starts with gzip's magic.
fn open_archive(file: &str) -> Result<Box<dyn Read>, String> {
    let mut raw: Box<dyn Read> = if file == "-" {
        Box::new(io::stdin())
    } else {
        Box::new(BufReader::new(
            File::open(file).map_err(|e| format!("{file}: Cannot open: {}", reason(&e)))?,
        ))
    };
    let mut magic = [0u8; 2];
    let mut got = 0;
    while got < 2 {
        match raw.read(&mut magic[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) => return Err(format!("{file}: Cannot read: {}", reason(&e))),
        }
    }
    let chained: Box<dyn Read> = Box::new(io::Cursor::new(magic[..got].to_vec()).chain(raw));
    Ok(if got == 2 && magic == [0x1f, 0x8b] {
        Box::new(MultiGzDecoder::new(chained))
    } else {
        chained
    })
}

/// How `tar x` writes members: `-k` keeps a file that exists (an error, as GNU's), `-p` sets
/// the members' modes as they are (set-user-ID and set-group-ID aside), else less the umask.
#[derive(Debug, Clone, Copy)]
struct Extract {
    keep_old: bool,
    same_permissions: bool,
}

/// The umask `tar x` (without `-p`) and the sandbox's new files apply.
const UMASK: u32 = 0o022;

fn read_archive(
    file: &str,
    extract: Option<Extract>,
    verbose: bool,
    dir: Option<&Path>,
    only: &[String],
) -> Result<i32, String> {
    let mut archive = tar::Archive::new(open_archive(file)?);
    archive.set_preserve_mtime(true);
    let dest = dir.map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let mut out = String::new();
    let mut status = 0;
    let mut found = vec![false; only.len()];
    let mut dir_modes = Vec::new();
    let entries = archive
        .entries()
        .map_err(|e| format!("This does not look like a tar archive ({})", reason(&e)))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| {
            format!("This does not look like a tar archive ({})\ntar: Exiting with failure status due to previous errors", reason(&e))
        })?;
        let name = entry
            .path()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = if entry.header().entry_type().is_dir() && !name.ends_with('/') {
            format!("{name}/")
        } else {
            name
        };
        if !only.is_empty() {
            let hit = only.iter().position(|o| {
                let o = o.trim_end_matches('/');
                name.trim_end_matches('/') == o || name.starts_with(&format!("{o}/"))
            });
            match hit {
                Some(i) => found[i] = true,
                None => continue,
            }
        }
        if verbose && extract.is_none() {
            out.push_str(&long_line(&entry, &name));
        } else if verbose || extract.is_none() {
            out.push_str(&name);
            out.push('\n');
        }
        if let Some(how) = extract
            && let Err(e) = unpack(&mut entry, &name, &dest, how, &mut dir_modes)
        {
            eprintln!("tar: {name}: {e}");
            status = 2;
        }
    }
    // Deepest first, so a parent's mode never stops a child's from being set.
    for (path, bits) in dir_modes.iter().rev() {
        if let Err(e) = set_mode(path, *bits) {
            eprintln!("tar: {}: {e}", path.display());
            status = 2;
        }
    }
    for (i, hit) in found.iter().enumerate() {
        if !hit {
            eprintln!("tar: {}: Not found in archive", only[i]);
            status = 2;
        }
    }
    print!("{out}");
    if status != 0 {
        eprintln!("tar: Exiting with failure status due to previous errors");
    }
    Ok(status)
}

/// Writes one member below `dest`. The tar crate's own `unpack` always fails under WASI (it
/// sets permissions, which WASI preview 1 cannot): this makes directories, files and links,
/// and sets the file's time. A member that would land outside `dest` (`..`) is refused, and a
/// leading `/` is dropped, as GNU tar does.
fn unpack<R: Read>(
    entry: &mut tar::Entry<'_, R>,
    name: &str,
    dest: &Path,
    how: Extract,
    dir_modes: &mut Vec<(PathBuf, u32)>,
) -> Result<(), String> {
    let mut target = dest.to_path_buf();
    for part in Path::new(name).components() {
        match part {
            std::path::Component::Normal(p) => target.push(p),
            std::path::Component::CurDir | std::path::Component::RootDir => {}
            _ => return Err("Member name contains '..'".into()),
        }
    }
    let kind = entry.header().entry_type();
    if let Some(parent) = target.parent() {
        fs::create_dir_all(parent).map_err(|e| format!("Cannot mkdir: {}", reason(&e)))?;
    }
    let bits = entry.header().mode().unwrap_or(0o644) & 0o1777;
    let bits = if how.same_permissions {
        bits
    } else {
        bits & 0o777 & !UMASK
    };
    if kind.is_dir() {
        return match fs::create_dir(&target) {
            // Set once every member is out, as GNU tar does: a directory without write
            // permission would refuse the members that go into it.
            Ok(()) => {
                dir_modes.push((target, bits));
                Ok(())
            }
            Err(_) if target.is_dir() => Ok(()),
            Err(e) => Err(format!("Cannot mkdir: {}", reason(&e))),
        };
    }
    if kind.is_symlink() {
        let link = entry
            .link_name()
            .ok()
            .flatten()
            .ok_or("a link without a target")?
            .into_owned();
        let _ = fs::remove_file(&target);
        // uu_ln's symlink goes through rustix, which has WASI's (std's is unstable there).
        return uu_ln::symlink(&link, &target).map_err(|e| {
            format!(
                "Cannot create symlink to '{}': {}",
                link.display(),
                reason(&e)
            )
        });
    }
    if !kind.is_file() {
        return Err("Cannot extract: not a file, directory or link (skipped)".into());
    }
    let mut options = fs::OpenOptions::new();
    options.write(true);
    if how.keep_old {
        options.create_new(true);
    } else {
        options.create(true).truncate(true);
    }
    let mut file = options
        .open(&target)
        .map_err(|e| format!("Cannot open: {}", reason(&e)))?;
    io::copy(entry, &mut file).map_err(|e| format!("Cannot write: {}", reason(&e)))?;
    if let Ok(mtime) = entry.header().mtime() {
        let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(mtime);
        let _ = file.set_modified(when);
    }
    set_mode(&target, bits)
}

/// Sets a member's permission bits: under WASI through the sandbox's host, which has them.
fn set_mode(path: &Path, bits: u32) -> Result<(), String> {
    #[cfg(target_os = "wasi")]
    let set = uucore::fs::sandbox_set_mode(path, bits);
    #[cfg(not(target_os = "wasi"))]
    let set = {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(bits))
    };
    set.map_err(|e| format!("Cannot change mode to {}: {}", mode_text(bits), reason(&e)))
}

/// A mode as GNU tar's messages write it (`rwxr-xr-x`).
fn mode_text(bits: u32) -> String {
    uucore::fs::display_permissions_unix(bits, false)
}

/// `tar tv`'s line: `-rw-r--r-- root/root 26 2026-11-29 01:54 a.txt`.
fn long_line<R: Read>(entry: &tar::Entry<'_, R>, name: &str) -> String {
    let h = entry.header();
    let kind = match h.entry_type() {
        t if t.is_dir() => 'd',
        t if t.is_symlink() => 'l',
        t if t.is_fifo() => 'p',
        _ => '-',
    };
    let mode = h.mode().unwrap_or(0o644);
    let mut perms = String::from(kind);
    perms.push_str(&mode_text(mode & 0o7777));
    let user = h
        .username()
        .ok()
        .flatten()
        .filter(|u| !u.is_empty())
        .map_or_else(|| h.uid().unwrap_or(0).to_string(), str::to_owned);
    let group = h
        .groupname()
        .ok()
        .flatten()
        .filter(|g| !g.is_empty())
        .map_or_else(|| h.gid().unwrap_or(0).to_string(), str::to_owned);
    let (y, mo, d, hh, mi, _, _) = crate::find::civil(h.mtime().unwrap_or(0) as i64);
    let link = match h.link_name() {
        Ok(Some(target)) if kind == 'l' => format!(" -> {}", target.to_string_lossy()),
        _ => String::new(),
    };
    format!(
        "{perms} {user}/{group} {:>8} {y}-{mo:02}-{d:02} {hh:02}:{mi:02} {name}{link}\n",
        h.size().unwrap_or(0)
    )
}

const GZIP_LONG: &[Long] = &[
    ("stdout", 'c', false),
    ("to-stdout", 'c', false),
    ("decompress", 'd', false),
    ("uncompress", 'd', false),
    ("keep", 'k', false),
    ("force", 'f', false),
    ("quiet", 'q', false),
    ("verbose", 'v', false),
    ("test", 't', false),
    ("list", 'l', false),
    ("recursive", 'r', false),
    ("suffix", 'S', true),
    ("best", '9', false),
    ("fast", '1', false),
    ("name", 'N', false),
    ("no-name", 'n', false),
    ("help", 'h', false),
];

/// `gzip`, `gunzip` (`gzip -d`) and `zcat` (`gzip -dc`).
pub fn gzip(name: &str, args: super::Args) -> i32 {
    let args: Vec<String> = args
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let o = match parse(&args, "cdkfqvtlrS:123456789Nnh", GZIP_LONG) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{name}: {e}\nTry `{name} --help' for more information.");
            return 1;
        }
    };
    if o.has('h') {
        println!(
            "Usage: {name} [OPTION]... [FILE]...\n  -c  write on standard output, keep files\n  \
             -d  decompress\n  -k  keep input files\n  -f  overwrite\n  -1..-9  speed or \
             compression\n  -S SUF  suffix (default .gz)"
        );
        return 0;
    }
    if o.has('r') || o.has('l') {
        eprintln!("{name}: -r and -l are not available here");
        return 1;
    }
    let decompress = name != "gzip" || o.has('d') || o.has('t');
    let to_stdout = name == "zcat" || o.has('c') || o.has('t');
    let keep = o.has('k') || to_stdout;
    let level = o
        .opts
        .iter()
        .rev()
        .find_map(|(c, _)| c.to_digit(10))
        .unwrap_or(6);
    let suffix = o.value('S').unwrap_or(".gz").to_owned();
    let files = if o.operands.is_empty() {
        vec!["-".to_owned()]
    } else {
        o.operands.clone()
    };
    let mut status = 0;
    for file in &files {
        let run = one(
            file,
            decompress,
            to_stdout,
            keep,
            o.has('f'),
            level,
            &suffix,
            o.has('t'),
        );
        if let Err(message) = run {
            eprintln!("{name}: {message}");
            status = 1;
        }
    }
    status
}

#[allow(clippy::too_many_arguments)]
fn one(
    file: &str,
    decompress: bool,
    to_stdout: bool,
    keep: bool,
    force: bool,
    level: u32,
    suffix: &str,
    test: bool,
) -> Result<(), String> {
    let input: Vec<u8> = if file == "-" {
        let mut d = Vec::new();
        io::stdin()
            .read_to_end(&mut d)
            .map_err(|e| format!("stdin: {}", reason(&e)))?;
        d
    } else {
        match fs::metadata(file) {
            Ok(m) if m.is_dir() => return Err(format!("{file} is a directory -- ignored")),
            _ => fs::read(file).map_err(|e| format!("{file}: {}", reason(&e)))?,
        }
    };
    let output = if decompress {
        let mut out = Vec::new();
        MultiGzDecoder::new(&input[..])
            .read_to_end(&mut out)
            .map_err(|_| format!("{file}: not in gzip format"))?;
        out
    } else {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::new(level));
        encoder.write_all(&input).map_err(|e| reason(&e))?;
        encoder.finish().map_err(|e| reason(&e))?
    };
    if test {
        return Ok(());
    }
    if to_stdout || file == "-" {
        io::stdout()
            .write_all(&output)
            .map_err(|e| format!("write error: {}", reason(&e)))?;
        return Ok(());
    }
    let target = if decompress {
        match file
            .strip_suffix(suffix)
            .or_else(|| file.strip_suffix(".tgz"))
        {
            Some(stem) if file.ends_with(".tgz") => format!("{stem}.tar"),
            Some(stem) if !stem.is_empty() => stem.to_owned(),
            _ => return Err(format!("{file}: unknown suffix -- ignored")),
        }
    } else {
        if file.ends_with(suffix) {
            return Err(format!("{file} already has {suffix} suffix -- unchanged"));
        }
        format!("{file}{suffix}")
    };
    if !force && fs::symlink_metadata(&target).is_ok() {
        return Err(format!("{target} already exists; not overwritten"));
    }
    fs::write(&target, &output).map_err(|e| format!("{target}: {}", reason(&e)))?;
    // As GNU gzip: the output keeps the input's mode and modification time.
    if let Ok(meta) = fs::metadata(file) {
        set_mode(Path::new(&target), mode_of(file, &meta) & 0o1777)
            .map_err(|e| format!("{target}: {e}"))?;
        if let (Ok(when), Ok(out)) = (meta.modified(), File::options().write(true).open(&target)) {
            let _ = out.set_modified(when);
        }
    }
    if !keep && let Err(e) = fs::remove_file(file) {
        return Err(format!("{file}: {}", reason(&e)));
    }
    Ok(())
}
