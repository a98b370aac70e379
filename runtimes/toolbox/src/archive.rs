//! `tar` (create, extract, list; gzip on `-z` and detected when reading; `-C`, `-v`, `-f -`)
//! on the `tar` crate, and `gzip`, `gunzip`, `zcat` on `flate2`, behaving as GNU tar and gzip
//! do for the common lines (`tar czf out.tgz dir`, `tar xzf out.tgz -C dest`, `tar tf x.tar`,
//! `gzip -k f`, `zcat f.gz`). Member names are GNU's, written as they are (`./a` stays `./a`;
//! leading `/` and `../` parts go); owners, which WASI preview 1 does not say, are the ones
//! `ls -l` shows ([`OWNER`], [`GROUP`]); modes are the files' own, read and set through the
//! sandbox's host ([`crate::find::mode_of`], [`uucore::fs::sandbox_set_mode`]); bzip2 and xz
//! are refused.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;

use crate::find::mode_of;
use crate::getopt::{Long, parse, parse_or_say, words};
use crate::guest_path::normalize;
use crate::own::reason;
use crate::usage::{GROUP, OWNER};

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

pub fn tar(args: super::Args) -> i32 {
    let mut args = words(args);
    // GNU's old style: the first word is a bundle of letters without a dash (`tar czf x.tgz`).
    if let Some(first) = args.first()
        && !first.starts_with('-')
        && !first.is_empty()
        && first.chars().all(|c| "cxtzfvCjJkop".contains(c))
    {
        args[0] = format!("-{first}");
    }
    let Some(o) = parse_or_say("tar", &args, "cxtf:zvC:jJkopX:", TAR_LONG) else {
        return 2;
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
    if o.has('c') {
        if o.operands.is_empty() {
            eprintln!("tar: Cowardly refusing to create an empty archive");
            return 2;
        }
        return match create(&file, &o.operands, o.has('z'), dir.as_deref(), &excludes) {
            // With `-f -` stdout is the archive: the files listed go to stderr.
            Ok((listed, code)) => {
                if verbose && file == "-" {
                    eprint!("{listed}");
                } else if verbose {
                    print!("{listed}");
                }
                code
            }
            Err(message) => {
                eprintln!("tar: {message}");
                2
            }
        };
    }
    let extract = o.has('x').then_some(Extract {
        keep_old: o.has('k'),
        same_permissions: o.has('p'),
    });
    match read_archive(&file, extract, verbose, dir.as_deref(), &o.operands) {
        Ok((out, code)) => {
            print!("{out}");
            code
        }
        Err(message) => {
            eprintln!("tar: {message}");
            2
        }
    }
}

/// `tar c`: writes the archive, and returns the names `-v` lists and the exit status.
fn create(
    file: &str,
    operands: &[String],
    gzip: bool,
    dir: Option<&Path>,
    excludes: &[String],
) -> Result<(String, i32), String> {
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
    let cwd = std::env::current_dir()
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "/".to_owned());
    let mut creating = Creating {
        builder: tar::Builder::new(out),
        base: dir.map_or_else(|| PathBuf::from("."), Path::to_path_buf),
        excludes,
        archive: (file != "-").then(|| normalize(&cwd, file)),
        cwd,
        listed: String::new(),
        removed: HashSet::new(),
        failed: false,
    };
    for operand in operands {
        // GNU drops an operand's trailing slashes (`dir/` is walked as `dir`), all but the root's.
        let path = match operand.trim_end_matches('/') {
            "" if operand.starts_with('/') => "/",
            path => path,
        };
        creating.add(path);
    }
    let inner = creating
        .builder
        .into_inner()
        .map_err(|e| format!("write error: {}", reason(&e)))?;
    drop(inner);
    if creating.failed {
        eprintln!("tar: Exiting with failure status due to previous errors");
    }
    Ok((creating.listed, if creating.failed { 2 } else { 0 }))
}

/// What `tar c` is at: the archive being written and what it has met on the way.
struct Creating<'a, W: Write> {
    builder: tar::Builder<W>,
    /// Where the files are read from: `-C DIR`, else the working directory.
    base: PathBuf,
    excludes: &'a [String],
    /// The archive's own path (absolute, lexical), never put into itself.
    archive: Option<String>,
    /// The working directory, which relative paths are made absolute against for that.
    cwd: String,
    /// What `-v` lists: the files as walked, a directory with a `/`.
    listed: String,
    /// The leading parts already said to be removed from names (GNU says each once).
    removed: HashSet<String>,
    /// Whether anything failed (said on stderr; GNU goes on and exits 2).
    failed: bool,
}

impl<W: Write> Creating<'_, W> {
    /// Adds the file at `path` (as walked: the operand, then `path/child`), a directory with
    /// what is below it in directory order (GNU's).
    fn add(&mut self, path: &str) {
        let (removed, name) = member_name(path);
        if !removed.is_empty() && self.removed.insert(removed.to_owned()) {
            eprintln!("tar: Removing leading `{removed}' from member names");
        }
        if path.is_empty() {
            eprintln!("tar: Substituting `.' for empty member name");
        }
        let base = path.rsplit('/').next().unwrap_or(path);
        if (self.excludes.iter()).any(|p| crate::glob::Glob::new(p, false).matches(base)) {
            return;
        }
        // An empty operand names nothing (joined to the base it would name the base).
        let source = if path.is_empty() {
            PathBuf::new()
        } else {
            self.base.join(path)
        };
        if self.archive.as_deref() == Some(&normalize(&self.cwd, &source.to_string_lossy())) {
            eprintln!("tar: {path}: file is the archive; not dumped");
            return;
        }
        if let Err(e) = self.add_file(path, &source, name) {
            eprintln!("tar: {path}: {e}");
            self.failed = true;
        }
    }

    /// Adds the file at `source` as the member `name`; `path` is how `-v` and errors say it.
    fn add_file(&mut self, path: &str, source: &Path, name: &str) -> Result<(), String> {
        let meta =
            fs::symlink_metadata(source).map_err(|e| format!("Cannot stat: {}", reason(&e)))?;
        let kind = meta.file_type();
        if kind.is_dir() {
            let mut dir = header(&meta, mode_of(source, &meta), tar::EntryType::Directory);
            append(
                &mut self.builder,
                &mut dir,
                &format!("{name}/"),
                None,
                io::empty(),
            )
            .map_err(|e| reason(&e))?;
            // The root walked is `/`, which ends in its `/` already.
            let path = path.strip_suffix('/').unwrap_or(path);
            self.listed.push_str(&format!("{path}/\n"));
            let entries =
                fs::read_dir(source).map_err(|e| format!("Cannot open: {}", reason(&e)))?;
            for entry in entries.flatten() {
                self.add(&format!("{path}/{}", entry.file_name().to_string_lossy()));
            }
            return Ok(());
        }
        if kind.is_symlink() {
            let target = fs::read_link(source).map_err(|e| reason(&e))?;
            let mut link = header(&meta, 0o777, tar::EntryType::Symlink);
            let target = target.to_string_lossy();
            append(
                &mut self.builder,
                &mut link,
                name,
                Some(&target),
                io::empty(),
            )
        } else if !kind.is_file() {
            // A FIFO (WASI's std tells no other kind apart): stored as one, never opened, as
            // GNU tar does.
            let mut fifo = header(&meta, mode_of(source, &meta), tar::EntryType::Fifo);
            append(&mut self.builder, &mut fifo, name, None, io::empty())
        } else {
            let data = File::open(source).map_err(|e| format!("Cannot open: {}", reason(&e)))?;
            let mut file = header(&meta, mode_of(source, &meta), tar::EntryType::Regular);
            append(&mut self.builder, &mut file, name, None, data)
        }
        .map_err(|e| reason(&e))?;
        self.listed.push_str(&format!("{path}\n"));
        Ok(())
    }
}

/// The member name GNU tar gives the file at `path` (its `safer_name_suffix`), with what it
/// removed to get it: leading `/`s, and everything up to the last `..` component, so that no
/// member climbs out of where it is extracted; `.` if nothing is left. Nothing else changes:
/// `./a` stays `./a` and `a//b` stays `a//b`.
fn member_name(path: &str) -> (&str, &str) {
    let bytes = path.as_bytes();
    let mut cut = 0;
    let mut at = 0;
    while at < bytes.len() {
        let part = &bytes[at..];
        if part.starts_with(b"..") && part.get(2).is_none_or(|&c| c == b'/') {
            cut = at + 2;
        }
        // On to the next component.
        at += part
            .iter()
            .position(|&c| c == b'/')
            .map_or(part.len(), |i| i + 1);
    }
    cut += bytes[cut..].iter().take_while(|&&c| c == b'/').count();
    let (removed, name) = path.split_at(cut);
    (removed, if name.is_empty() { "." } else { name })
}

/// A member's header as GNU tar fills it from the file: its type, mode, size (a regular file's;
/// other members have no data), modification time, and owners. WASI says no owners: they are
/// the ones `ls -l` and `stat` show here ([`OWNER`], [`GROUP`], ids 0), so `tar tv` agrees.
fn header(meta: &fs::Metadata, mode: u32, kind: tar::EntryType) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(kind);
    header.set_mode(mode);
    header.set_size(if kind.is_file() { meta.len() } else { 0 });
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    header.set_mtime(mtime);
    header.set_uid(0);
    header.set_gid(0);
    // Both fit the 32 bytes a header has for them, so neither fails.
    let _ = header.set_username(OWNER);
    let _ = header.set_groupname(GROUP);
    header
}

/// Appends a member named exactly `name` (a link pointing at `link`): the tar crate's
/// `append_data` and `append_link` would rewrite it (`./a` as `a`, and `./` not at all). A name
/// or link longer than its 100-byte field goes first in a `././@LongLink` record, as GNU's do.
fn append<W: Write>(
    builder: &mut tar::Builder<W>,
    header: &mut tar::Header,
    name: &str,
    link: Option<&str>,
    data: impl Read,
) -> io::Result<()> {
    put_name(builder, &mut header.as_old_mut().name, name, b'L')?;
    if let Some(link) = link {
        put_name(builder, &mut header.as_old_mut().linkname, link, b'K')?;
    }
    header.set_cksum();
    builder.append(header, data)
}

/// Writes `text` into a header's name or link field, after a GNU long-name record of type
/// `long` when it does not fit (the field then holds its first 100 bytes).
fn put_name<W: Write>(
    builder: &mut tar::Builder<W>,
    field: &mut [u8; 100],
    text: &str,
    long: u8,
) -> io::Result<()> {
    let bytes = text.as_bytes();
    if bytes.len() > field.len() {
        let mut record = tar::Header::new_gnu();
        record.as_old_mut().name[..13].copy_from_slice(b"././@LongLink");
        record.set_entry_type(tar::EntryType::new(long));
        record.set_mode(0o644);
        record.set_mtime(0);
        record.set_size(bytes.len() as u64 + 1);
        record.set_cksum();
        builder.append(&record, bytes.chain(&[0u8][..]))?;
    }
    let kept = bytes.len().min(field.len());
    field.fill(0);
    field[..kept].copy_from_slice(&bytes[..kept]);
    Ok(())
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

/// `tar t` and `tar x` (`extract`): returns what goes to stdout (the names, or `-tv`'s long
/// lines) and the exit status.
fn read_archive(
    file: &str,
    extract: Option<Extract>,
    verbose: bool,
    dir: Option<&Path>,
    only: &[String],
) -> Result<(String, i32), String> {
    let mut archive = tar::Archive::new(open_archive(file)?);
    archive.set_preserve_mtime(true);
    let dest = dir.map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let mut out = String::new();
    let mut widths = Widths::default();
    let mut status = 0;
    let mut found = vec![false; only.len()];
    let mut dir_modes = Vec::new();
    // GNU says once per prefix that a name's leading `/` or `../` goes, listing too.
    let mut removed = HashSet::new();
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
        let (prefix, _) = member_name(&name);
        if !prefix.is_empty() && removed.insert(prefix.to_owned()) {
            eprintln!("tar: Removing leading `{prefix}' from member names");
        }
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
            let link = (entry.header().entry_type().is_symlink())
                .then(|| entry.link_name().ok().flatten())
                .flatten()
                .map(|l| l.to_string_lossy().into_owned());
            out.push_str(&widths.long_line(entry.header(), &name, link.as_deref()));
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
    if status != 0 {
        eprintln!("tar: Exiting with failure status due to previous errors");
    }
    Ok((out, status))
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
pub(crate) fn set_mode(path: &Path, bits: u32) -> Result<(), String> {
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

/// The columns of `tar tv`, as GNU tar pads them: owner, group and size are one field at least
/// 19 wide, widened for good by any longer line (so a listing's sizes stay right-aligned from
/// where a long one appeared).
struct Widths {
    owners_and_size: usize,
}

impl Default for Widths {
    fn default() -> Self {
        Widths {
            owners_and_size: 19,
        }
    }
}

impl Widths {
    /// One line: `-rw-r--r-- somebody/somegroup 26 2026-11-29 01:54 a.txt`; owners are the
    /// header's names, else its ids; a symbolic link's `link` (in full: the entry's, which a
    /// long-name record may hold) follows an arrow.
    fn long_line(&mut self, h: &tar::Header, name: &str, link: Option<&str>) -> String {
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
        let size = h.size().unwrap_or(0).to_string();
        let taken = user.len() + 1 + group.len() + 1 + size.len();
        self.owners_and_size = self.owners_and_size.max(taken);
        let size_width = self.owners_and_size - taken + size.len();
        let (y, mo, d, hh, mi, _, _) = crate::find::civil(h.mtime().unwrap_or(0) as i64);
        let link = link.map(|l| format!(" -> {l}")).unwrap_or_default();
        format!(
            "{perms} {user}/{group} {size:>size_width$} {y}-{mo:02}-{d:02} {hh:02}:{mi:02} \
             {name}{link}\n"
        )
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_names_are_gnus() {
        for (path, removed, name) in [
            (".", "", "."),
            ("./a.txt", "", "./a.txt"),
            ("dir", "", "dir"),
            ("./dir/sub", "", "./dir/sub"),
            ("a//b", "", "a//b"),
            ("...", "", "..."),
            ("a..b/c", "", "a..b/c"),
            ("/abs/f", "/", "abs/f"),
            ("//abs", "//", "abs"),
            ("/", "/", "."),
            ("..", "..", "."),
            ("../x", "../", "x"),
            ("dir/../top", "dir/../", "top"),
            ("dir/sub/..", "dir/sub/..", "."),
            ("dir/sub/../a", "dir/sub/../", "a"),
            ("a/../b/../c", "a/../b/../", "c"),
        ] {
            assert_eq!(member_name(path), (removed, name), "{path}");
        }
    }

    /// A scratch tree: `a.txt`, `sub/` (with `b` of 12345 bytes and a link `l` to it), `empty`.
    fn tree(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("toolbox-tar-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("sub")).unwrap();
        fs::write(dir.join("a.txt"), "apple\n").unwrap();
        fs::write(dir.join("sub/b"), "x".repeat(12345)).unwrap();
        fs::write(dir.join("empty"), "").unwrap();
        std::os::unix::fs::symlink("b", dir.join("sub/l")).unwrap();
        dir
    }

    fn sorted(text: &str) -> Vec<&str> {
        let mut lines: Vec<&str> = text.lines().collect();
        lines.sort_unstable();
        lines
    }

    /// `tar cf x.tar .` in the tree: members keep GNU's `./`, and the archive is not in itself.
    #[test]
    fn names_keep_their_dot_and_the_archive_stays_out() {
        let dir = tree("dot");
        let archive = dir.join("x.tar").to_string_lossy().into_owned();
        for (operands, listed) in [
            (
                vec!["."],
                vec!["./", "./a.txt", "./empty", "./sub/", "./sub/b", "./sub/l"],
            ),
            (vec!["./sub/"], vec!["./sub/", "./sub/b", "./sub/l"]),
            (
                vec!["sub//", "a.txt"],
                vec!["a.txt", "sub/", "sub/b", "sub/l"],
            ),
            (
                vec!["sub/.."],
                vec!["./", "a.txt", "empty", "sub/", "sub/b", "sub/l"],
            ),
        ] {
            let operands: Vec<String> = operands.iter().map(|o| o.to_string()).collect();
            let (verbose, status) = create(&archive, &operands, false, Some(&dir), &[]).unwrap();
            assert_eq!(status, 0, "{operands:?}");
            let (names, status) = read_archive(&archive, None, false, None, &[]).unwrap();
            assert_eq!(status, 0);
            assert_eq!(sorted(&names), listed, "{operands:?}");
            // `-v` lists the files as walked, `sub/..` and all.
            assert_eq!(verbose.lines().count(), listed.len(), "{verbose}");
            // Chosen members by their names as stored (`./sub` is `./sub/` and what is below).
            if operands == ["."] {
                let only = ["./sub".to_owned()];
                let (names, _) = read_archive(&archive, None, false, None, &only).unwrap();
                assert_eq!(sorted(&names), ["./sub/", "./sub/b", "./sub/l"]);
            }
        }
        // What comes out again is below the destination, `./` and all.
        let out = dir.join("out");
        fs::create_dir(&out).unwrap();
        create(&archive, &[".".to_owned()], false, Some(&dir), &[]).unwrap();
        let how = Extract {
            keep_old: false,
            same_permissions: false,
        };
        let (_, status) = read_archive(&archive, Some(how), false, Some(&out), &[]).unwrap();
        assert_eq!(status, 0);
        assert_eq!(fs::read_to_string(out.join("a.txt")).unwrap(), "apple\n");
        assert_eq!(fs::read_link(out.join("sub/l")).unwrap(), Path::new("b"));
        assert!(!out.join("x.tar").exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    /// `tar tv` pads owners and sizes as GNU does, and names the owners `ls -l` shows.
    #[test]
    fn long_listing_columns_are_gnus() {
        let mut widths = Widths::default();
        let line = |widths: &mut Widths, user: &str, size: u64| {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(tar::EntryType::Regular);
            h.set_mode(0o644);
            h.set_size(size);
            h.set_mtime(0);
            h.set_username(user).unwrap();
            h.set_groupname(user).unwrap();
            widths.long_line(&h, "f", None)
        };
        let date = "1970-01-01 00:00 f\n";
        assert_eq!(
            line(&mut widths, "root", 2),
            format!("-rw-r--r-- root/root         2 {date}")
        );
        assert_eq!(
            line(&mut widths, "somebody", 123456),
            format!("-rw-r--r-- somebody/somebody 123456 {date}")
        );
        // Wider from then on.
        assert_eq!(
            line(&mut widths, "root", 2),
            format!("-rw-r--r-- root/root              2 {date}")
        );
        let meta = fs::metadata(std::env::temp_dir()).unwrap();
        let h = header(&meta, 0o755, tar::EntryType::Directory);
        assert_eq!(h.username().unwrap(), Some(OWNER));
        assert_eq!(h.groupname().unwrap(), Some(GROUP));
    }

    /// Where GNU tar is at hand: it lists our archive (long names and all) as we do, and we list
    /// its as it does.
    #[test]
    fn gnu_tar_and_ours_list_alike() {
        let gnu = |args: &[&str]| {
            std::process::Command::new("tar")
                .args(args)
                .env("TZ", "UTC")
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        };
        if !gnu(&["--version"]).is_some_and(|v| v.contains("GNU tar")) {
            return;
        }
        let dir = tree("gnu");
        let deep = format!("sub/{}/{}", "d".repeat(120), "f".repeat(30));
        fs::create_dir_all(dir.join(&deep).parent().unwrap()).unwrap();
        fs::write(dir.join(&deep), "deep\n").unwrap();
        std::os::unix::fs::symlink("t".repeat(130), dir.join("sub/far")).unwrap();
        let ours = dir.join("ours.tar").to_string_lossy().into_owned();
        let operands = [".".to_owned(), "./sub".to_owned(), "a.txt".to_owned()];
        create(&ours, &operands, false, Some(&dir), &[]).unwrap();
        let theirs = dir.join("gnu.tar").to_string_lossy().into_owned();
        let root = dir.to_string_lossy();
        gnu(&["cf", &theirs, "-C", &root, "./sub", "a.txt"]).unwrap();
        for archive in [&ours, &theirs] {
            for (flag, verbose) in [("tf", false), ("tvf", true)] {
                let (listed, status) = read_archive(archive, None, verbose, None, &[]).unwrap();
                assert_eq!(status, 0);
                assert_eq!(Some(listed), gnu(&[flag, archive]), "{flag} {archive}");
            }
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}
