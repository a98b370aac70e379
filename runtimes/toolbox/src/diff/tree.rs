//! What the two operands are and, for directories, what GNU diff compares in them: a
//! directory and a file (`diff dir file` compares `dir/file`), `-N`'s missing files as empty,
//! and the walk over two directories (`-r`, `-x`/`-X`): names in byte order, `Only in DIR:
//! NAME`, `Common subdirectories: A and B`, `File A is a directory while file B is a regular
//! file`, and a `diff OPTIONS A B` line before each pair of files that differ.

use std::fs;
use std::io::{self, Read, Write};
use std::time::SystemTime;

use super::Options;
use super::print::{self, Input};

/// What a path is, following links.
enum Kind {
    Stdin,
    Dir,
    File,
    Missing(io::Error),
}

fn kind(path: &str) -> Kind {
    if path == "-" {
        return Kind::Stdin;
    }
    match fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Kind::Dir,
        Ok(_) => Kind::File,
        Err(e) => Kind::Missing(e),
    }
}

/// Compares the operands `from` and `to`, printing to `out`; the status GNU exits with.
pub fn top(o: &Options, from: &str, to: &str, out: &mut dyn Write) -> i32 {
    let mut walk = Walk { o, out };
    match (kind(from), kind(to)) {
        (Kind::Dir, Kind::Dir) => walk.dirs(from, to, Side::Both),
        (Kind::Stdin, Kind::Dir) | (Kind::Dir, Kind::Stdin) => {
            eprintln!("diff: cannot compare '-' to a directory");
            2
        }
        // `diff dir file`: the file of that name in the directory.
        (Kind::Dir, Kind::File) => walk.top_files(&join(from, base(to)), to),
        (Kind::File, Kind::Dir) => walk.top_files(from, &join(to, base(from))),
        (Kind::Missing(a), Kind::Missing(b)) => {
            eprintln!("diff: {from}: {}", reason(&a));
            eprintln!("diff: {to}: {}", reason(&b));
            2
        }
        (Kind::Missing(_), Kind::Dir) if o.new_file => walk.dirs(from, to, Side::To),
        (Kind::Dir, Kind::Missing(_)) if o.new_file => walk.dirs(from, to, Side::From),
        _ => walk.top_files(from, to),
    }
}

/// Which sides of a pair exist (`-N` compares a missing one as empty).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Both,
    From,
    To,
}

struct Walk<'a> {
    o: &'a Options,
    out: &'a mut dyn Write,
}

impl Walk<'_> {
    /// Two operands that are not both directories.
    fn top_files(&mut self, from: &str, to: &str) -> i32 {
        match (kind(from), kind(to)) {
            (Kind::Missing(e), _) if !self.o.new_file => {
                eprintln!("diff: {from}: {}", reason(&e));
                2
            }
            (_, Kind::Missing(e)) if !self.o.new_file => {
                eprintln!("diff: {to}: {}", reason(&e));
                2
            }
            (Kind::Dir, _) | (_, Kind::Dir) => {
                let (a, b) = (describe(from), describe(to));
                self.write(format!("File {from} is {a} while file {to} is {b}\n").as_bytes());
                1
            }
            _ => self.files(from, to, false),
        }
    }

    /// Directories `from` and `to` (only one of them there when `side` says so).
    fn dirs(&mut self, from: &str, to: &str, side: Side) -> i32 {
        let mut names = Vec::new();
        for (dir, here) in [(from, side != Side::To), (to, side != Side::From)] {
            if !here {
                names.push(Vec::new());
                continue;
            }
            match list(dir, self.o) {
                Ok(list) => names.push(list),
                Err(e) => {
                    eprintln!("diff: {dir}: {}", reason(&e));
                    return 2;
                }
            }
        }
        let (a, b) = (&names[0], &names[1]);
        let mut all: Vec<&String> = a.iter().chain(b).collect();
        all.sort_by(|x, y| x.as_bytes().cmp(y.as_bytes()));
        all.dedup();
        let mut status = 0;
        for name in all {
            let (in_a, in_b) = (a.contains(name), b.contains(name));
            let (pa, pb) = (join(from, name), join(to, name));
            let one = match (in_a, in_b) {
                (true, true) => self.entry(&pa, &pb, Side::Both),
                (true, false) if self.o.new_file => self.entry(&pa, &pb, Side::From),
                (false, true) if self.o.new_file => self.entry(&pa, &pb, Side::To),
                _ => {
                    let dir = if in_a { from } else { to };
                    self.write(format!("Only in {dir}: {name}\n").as_bytes());
                    1
                }
            };
            status = status.max(one);
        }
        status
    }

    /// One name found in either directory.
    fn entry(&mut self, from: &str, to: &str, side: Side) -> i32 {
        let there = |path: &str, here: bool| if here { Some(kind(path)) } else { None };
        let (a, b) = (there(from, side != Side::To), there(to, side != Side::From));
        let dir = |k: &Option<Kind>| matches!(k, Some(Kind::Dir));
        for (path, k) in [(from, &a), (to, &b)] {
            if let Some(Kind::Missing(e)) = k {
                eprintln!("diff: {path}: {}", reason(e));
                return 2;
            }
        }
        let (a_dir, b_dir) = (dir(&a), dir(&b));
        let both_dirs = (a_dir || a.is_none()) && (b_dir || b.is_none());
        if both_dirs && self.o.recursive {
            return self.dirs(from, to, side);
        }
        if both_dirs {
            let line = format!("Common subdirectories: {from} and {to}\n");
            self.write(line.as_bytes());
            return 0;
        }
        if a_dir || b_dir {
            let (da, db) = (describe(from), describe(to));
            self.write(format!("File {from} is {da} while file {to} is {db}\n").as_bytes());
            return 1;
        }
        self.files_in_dir(from, to, side)
    }

    fn files_in_dir(&mut self, from: &str, to: &str, side: Side) -> i32 {
        let (a, b) = match side {
            Side::Both => (read(from), read(to)),
            Side::From => (read(from), Ok(Vec::new())),
            Side::To => (Ok(Vec::new()), read(to)),
        };
        self.pair(from, to, a, b, side, true)
    }

    /// Two files, either of which may be missing under `-N`, or stdin.
    fn files(&mut self, from: &str, to: &str, in_dir: bool) -> i32 {
        let missing = |p: &str| p != "-" && fs::metadata(p).is_err();
        let side = match (missing(from), missing(to)) {
            (true, _) => Side::To,
            (_, true) => Side::From,
            _ => Side::Both,
        };
        let stdin = (from == "-" || to == "-").then(|| {
            let mut bytes = Vec::new();
            io::stdin().read_to_end(&mut bytes).map(|_| bytes)
        });
        let get = |p: &str, here: bool| match (&stdin, here) {
            (_, false) => Ok(Vec::new()),
            (Some(Ok(bytes)), true) if p == "-" => Ok(bytes.clone()),
            (Some(Err(e)), true) if p == "-" => Err(io::Error::new(e.kind(), e.to_string())),
            _ => read(p),
        };
        let a = get(from, side != Side::To);
        let b = get(to, side != Side::From);
        self.pair(from, to, a, b, side, in_dir)
    }

    fn pair(
        &mut self,
        from: &str,
        to: &str,
        a: io::Result<Vec<u8>>,
        b: io::Result<Vec<u8>>,
        side: Side,
        in_dir: bool,
    ) -> i32 {
        let (a, b) = match (a, b) {
            (Ok(a), Ok(b)) => (a, b),
            (a, b) => {
                for (path, r) in [(from, a), (to, b)] {
                    if let Err(e) = r {
                        eprintln!("diff: {path}: {}", reason(&e));
                    }
                }
                return 2;
            }
        };
        let time = |path: &str, here: bool| {
            if !here {
                stamp(SystemTime::UNIX_EPOCH)
            } else if path == "-" {
                stamp(SystemTime::now())
            } else {
                let modified = fs::metadata(path).and_then(|m| m.modified());
                stamp(modified.unwrap_or_else(|_| SystemTime::now()))
            }
        };
        let from_input = Input {
            name: from,
            bytes: &a,
            time: time(from, side != Side::To),
        };
        let to_input = Input {
            name: to,
            bytes: &b,
            time: time(to, side != Side::From),
        };
        let (text, differ) = print::compare(self.o, &from_input, &to_input);
        if differ {
            // Before a diff of two files found in directories (not before one line saying they
            // differ), the command that would print it alone.
            let one_line = text.starts_with(b"Binary files ") || self.o.brief;
            if in_dir && !one_line {
                let line = format!("{} {} {}\n", self.o.command, c_quoted(from), c_quoted(to));
                self.write(line.as_bytes());
            }
            self.write(&text);
            1
        } else {
            if self.o.report_identical {
                self.write(format!("Files {from} and {to} are identical\n").as_bytes());
            }
            0
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        let _ = self.out.write_all(bytes);
    }
}

/// The names in directory `dir` that `-x`/`-X` leave.
fn list(dir: &str, o: &Options) -> io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in fs::read_dir(dir)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if !o.exclude.iter().any(|g| g.matches(&name)) {
            names.push(name);
        }
    }
    Ok(names)
}

/// `dir/name`, with one slash between however many `dir` ends with.
fn join(dir: &str, name: &str) -> String {
    let trimmed = dir.trim_end_matches('/');
    if trimmed.is_empty() && dir.starts_with('/') {
        format!("/{name}")
    } else {
        format!("{trimmed}/{name}")
    }
}

/// The last part of a path (what `diff dir file` looks for in `dir`).
fn base(path: &str) -> &str {
    let trimmed = path.trim_end_matches('/');
    trimmed.rsplit('/').next().unwrap_or(trimmed)
}

/// GNU's words for what a path is, in `File A is ... while file B is ...`.
fn describe(path: &str) -> &'static str {
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => "a directory",
        Ok(m) if m.is_file() && m.len() == 0 => "a regular empty file",
        Ok(m) if m.is_file() => "a regular file",
        Ok(_) => "a special file",
        Err(_) => "a nonexistent file",
    }
}

fn read(path: &str) -> io::Result<Vec<u8>> {
    fs::read(path)
}

/// A header's time as GNU prints it, in the local time zone.
fn stamp(time: SystemTime) -> String {
    let local: chrono::DateTime<chrono::Local> = time.into();
    local.format("%Y-%m-%d %H:%M:%S%.9f %z").to_string()
}

/// An error as GNU words it: strerror's text, without Rust's ` (os error N)`.
pub fn reason(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "No such file or directory".to_owned(),
        io::ErrorKind::PermissionDenied => "Permission denied".to_owned(),
        _ => {
            let text = e.to_string();
            match text.find(" (os error") {
                Some(at) => text[..at].to_owned(),
                None => text,
            }
        }
    }
}

/// A file name as GNU diff puts it in its `diff ...` lines: as it is, or in double quotes with
/// C's escapes when it holds white space, quotes, backslashes, control or non-ASCII bytes.
pub fn c_quoted(name: &str) -> String {
    let plain = |b: u8| b.is_ascii_graphic() && b != b'"' && b != b'\\';
    if name.bytes().all(plain) {
        return name.to_owned();
    }
    let mut out = String::from("\"");
    for b in name.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\x07' => out.push_str("\\a"),
            b'\x08' => out.push_str("\\b"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\x0b' => out.push_str("\\v"),
            b'\x0c' => out.push_str("\\f"),
            b'\r' => out.push_str("\\r"),
            b' ' => out.push(' '),
            _ if plain(b) => out.push(char::from(b)),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}
