//! `du` and `stat`, which uutils does not build for WASI (neither is in its wasm feature set:
//! they read `st_blocks`, owners and modes through libc). Both answer from what WASI preview 1
//! says of a file: its type, size and times. So a file's disk usage is what ext4 would allocate
//! for it ([`uucore::fs::sandbox_allocated`], as `ls -s` counts; `du -b`/`--apparent-size` is
//! exact), owners are [`OWNER`] and [`GROUP`], and modes are what the sandbox's host says (see
//! [`find::mode_of`](crate::find::mode_of)), the one thing WASI cannot.

use std::fs::{self, Metadata};
use std::io::{self, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use uucore::fs::{SANDBOX_BLOCK as BLOCK, sandbox_allocated};

use crate::find::{civil, mode_of, mode_string, type_bits};
use crate::getopt::{Long, parse_or_say, words};
use crate::own::reason;

/// The owner and group of every file, as `ls -l` prints them: WASI preview 1 says no owners,
/// and uu_ls off Unix names them so (with uid and gid 0 for `ls -n`). `stat` and `tar` say the
/// same, so a listing reads alike in every tool.
pub const OWNER: &str = "somebody";
/// See [`OWNER`].
pub const GROUP: &str = "somegroup";

/// GNU's `-h` form: one decimal under 10, rounded up, and a unit letter.
fn human(bytes: u64) -> String {
    if bytes < 1024 {
        return bytes.to_string();
    }
    let units = ['K', 'M', 'G', 'T', 'P', 'E'];
    let mut value = bytes as f64;
    let mut unit = 0;
    value /= 1024.0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if value < 10.0 {
        let tenths = (value * 10.0).ceil() / 10.0;
        if tenths >= 10.0 {
            return format!("{}{}", 10, units[unit]);
        }
        format!("{tenths:.1}{}", units[unit])
    } else {
        let whole = value.ceil();
        if whole >= 1024.0 && unit + 1 < units.len() {
            return format!("1.0{}", units[unit + 1]);
        }
        format!("{whole:.0}{}", units[unit])
    }
}

const DU_LONG: &[Long] = &[
    ("all", 'a', false),
    ("apparent-size", 'A', false),
    ("bytes", 'b', false),
    ("total", 'c', false),
    ("max-depth", 'd', true),
    ("human-readable", 'h', false),
    ("summarize", 's', false),
    ("null", '0', false),
    ("exclude", 'X', true),
    ("dereference", 'L', false),
    ("separate-dirs", 'S', false),
    ("help", 'H', false),
];

struct Du {
    all: bool,
    apparent: bool,
    human: bool,
    /// Units of the printed numbers: 1 (`-b`), 1024 (default, `-k`), 1 MiB (`-m`).
    unit: u64,
    max_depth: Option<usize>,
    eol: u8,
    exclude: Vec<String>,
    follow: bool,
    separate: bool,
    out: Vec<u8>,
    failed: bool,
}

impl Du {
    fn size_of(&self, meta: &Metadata) -> u64 {
        if self.apparent {
            // GNU's apparent size of a directory is its st_size too.
            meta.len()
        } else {
            sandbox_allocated(meta)
        }
    }

    fn show(&mut self, bytes: u64, path: &str) {
        let number = if self.human {
            human(bytes)
        } else {
            bytes.div_ceil(self.unit).to_string()
        };
        self.out.extend_from_slice(number.as_bytes());
        self.out.push(b'\t');
        self.out.extend_from_slice(path.as_bytes());
        self.out.push(self.eol);
    }

    /// The usage of `path` and below; prints what the options ask.
    fn walk(&mut self, path: &str, meta: &Metadata, depth: usize) -> u64 {
        let mut total = self.size_of(meta);
        let mut below = 0;
        if meta.is_dir() {
            match fs::read_dir(path) {
                Ok(entries) => {
                    for entry in entries.flatten() {
                        let name = entry.file_name().to_string_lossy().into_owned();
                        if self
                            .exclude
                            .iter()
                            .any(|p| crate::glob::Glob::new(p, false).matches(&name))
                        {
                            continue;
                        }
                        let child = if path.ends_with('/') {
                            format!("{path}{name}")
                        } else {
                            format!("{path}/{name}")
                        };
                        let meta = if self.follow {
                            fs::metadata(&child)
                        } else {
                            fs::symlink_metadata(&child)
                        };
                        match meta {
                            Ok(m) if m.is_dir() => {
                                let sub = self.walk(&child, &m, depth + 1);
                                if !self.separate {
                                    below += sub;
                                }
                            }
                            Ok(m) => {
                                let size = self.size_of(&m);
                                below += size;
                                if self.all && self.max_depth.is_none_or(|d| depth < d) {
                                    self.show(size, &child);
                                }
                            }
                            Err(e) => {
                                self.flush();
                                eprintln!("du: cannot access '{child}': {}", reason(&e));
                                self.failed = true;
                            }
                        }
                    }
                }
                Err(e) => {
                    self.flush();
                    eprintln!("du: cannot read directory '{path}': {}", reason(&e));
                    self.failed = true;
                }
            }
        }
        total += below;
        if (meta.is_dir() || depth == 0) && self.max_depth.is_none_or(|d| depth <= d) {
            self.show(total, path);
        }
        total
    }

    fn flush(&mut self) {
        let _ = io::stdout().write_all(&self.out);
        self.out.clear();
    }
}

pub fn du(args: super::Args) -> i32 {
    let args = words(args);
    let Some(o) = parse_or_say("du", &args, "aAbcd:hks0mLSxD", DU_LONG) else {
        return 1;
    };
    if o.has('H') {
        println!(
            "Usage: du [OPTION]... [FILE]...\nSummarize disk usage of each FILE, recursively \
             for directories.\n  -a -b --apparent-size -c -d N -h -k -m -s -0 -L -S \
             --exclude=PATTERN\nUnder WASI a file's blocks are unknown: usage is what ext4 \
             allocates for its size (4 KiB blocks)."
        );
        return 0;
    }
    let max_depth = match o.value('d').map(str::parse::<usize>) {
        None => None,
        Some(Ok(d)) => Some(d),
        Some(Err(_)) => {
            eprintln!("du: invalid maximum depth '{}'", o.value('d').unwrap_or(""));
            return 1;
        }
    };
    let summarize = o.has('s');
    if summarize && max_depth.is_some_and(|d| d > 0) {
        eprintln!("du: cannot both summarize and show all entries");
        return 1;
    }
    let unit = o
        .opts
        .iter()
        .rev()
        .find_map(|(c, _)| match c {
            'b' => Some(1),
            'k' => Some(1024),
            'm' => Some(1 << 20),
            _ => None,
        })
        .unwrap_or(1024);
    let mut du = Du {
        all: o.has('a'),
        apparent: o.has('A') || o.has('b'),
        human: o.has('h'),
        unit,
        max_depth: if summarize { Some(0) } else { max_depth },
        eol: if o.has('0') { 0 } else { b'\n' },
        exclude: o.values('X').iter().map(|s| s.to_string()).collect(),
        follow: o.has('L'),
        separate: o.has('S'),
        out: Vec::new(),
        failed: false,
    };
    let operands = if o.operands.is_empty() {
        vec![".".to_owned()]
    } else {
        o.operands.clone()
    };
    let mut grand = 0;
    for path in &operands {
        // An operand's link is followed when it ends with `/` (the path names the directory),
        // as the kernel resolves it for GNU du.
        let meta = if du.follow || path.ends_with('/') {
            fs::metadata(path)
        } else {
            fs::symlink_metadata(path)
        };
        match meta {
            Ok(meta) => grand += du.walk(path, &meta, 0),
            Err(e) => {
                du.flush();
                eprintln!("du: cannot access '{path}': {}", reason(&e));
                du.failed = true;
            }
        }
    }
    if o.has('c') {
        du.show(grand, "total");
    }
    du.flush();
    i32::from(du.failed)
}

const STAT_LONG: &[Long] = &[
    ("format", 'c', true),
    ("printf", 'p', true),
    ("dereference", 'L', false),
    ("terse", 't', false),
    ("file-system", 'f', false),
    ("help", 'H', false),
];

fn kind_name(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_symlink() {
        "symbolic link"
    } else if t.is_dir() {
        "directory"
    } else if t.is_file() && meta.len() == 0 {
        "regular empty file"
    } else if t.is_file() {
        "regular file"
    } else {
        "weird file"
    }
}

/// `2026-11-29 01:31:02.123456789 +0000`
fn stamp(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let (y, mo, day, h, mi, s, _) = civil(d.as_secs() as i64);
    format!(
        "{y}-{mo:02}-{day:02} {h:02}:{mi:02}:{s:02}.{:09} +0000",
        d.subsec_nanos()
    )
}

fn epoch_secs(t: SystemTime) -> String {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
        .to_string()
}

/// One file's line for `-c`/`--printf` FORMAT.
fn format_stat(format: &str, path: &str, meta: &Metadata, escapes: bool) -> String {
    let c: Vec<char> = format.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let modified = meta.modified().unwrap_or(UNIX_EPOCH);
    let accessed = meta.accessed().unwrap_or(modified);
    while i < c.len() {
        if escapes && c[i] == '\\' && i + 1 < c.len() {
            let escaped = match c[i + 1] {
                'n' => '\n',
                't' => '\t',
                '\\' => '\\',
                '"' => '"',
                '0' => '\0',
                other => {
                    out.push('\\');
                    other
                }
            };
            out.push(escaped);
            i += 2;
            continue;
        }
        if c[i] != '%' || i + 1 >= c.len() {
            out.push(c[i]);
            i += 1;
            continue;
        }
        i += 1;
        let mut spec = String::new();
        while i < c.len() && (c[i] == '-' || c[i].is_ascii_digit()) {
            spec.push(c[i]);
            i += 1;
        }
        let Some(&d) = c.get(i) else { break };
        i += 1;
        let blocks = sandbox_allocated(meta) / 512;
        let value = match d {
            '%' => "%".to_owned(),
            'n' => path.to_owned(),
            'N' => {
                if meta.file_type().is_symlink() {
                    let to = fs::read_link(path)
                        .map(|l| l.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    format!("'{path}' -> '{to}'")
                } else {
                    format!("'{path}'")
                }
            }
            's' => meta.len().to_string(),
            'F' => kind_name(meta).to_owned(),
            'a' => format!("{:o}", mode_of(path, meta)),
            'A' => mode_string(path, meta),
            'f' => format!("{:x}", type_bits(meta) | mode_of(path, meta)),
            'U' => OWNER.to_owned(),
            'G' => GROUP.to_owned(),
            'u' | 'g' => "0".to_owned(),
            'h' => "1".to_owned(),
            'b' => blocks.to_string(),
            'B' => "512".to_owned(),
            'o' => BLOCK.to_string(),
            'i' => "0".to_owned(),
            'x' => stamp(accessed),
            'y' => stamp(modified),
            'z' => stamp(modified),
            'w' => "-".to_owned(),
            'X' => epoch_secs(accessed),
            'Y' => epoch_secs(modified),
            'Z' => epoch_secs(modified),
            'W' => "0".to_owned(),
            other => format!("?{other}"),
        };
        let left = spec.starts_with('-');
        let width: usize = spec.trim_start_matches('-').parse().unwrap_or(0);
        if left {
            out.push_str(&format!("{value:<width$}"));
        } else {
            out.push_str(&format!("{value:>width$}"));
        }
    }
    out
}

/// GNU stat's default, multi-line form.
fn long_form(path: &str, meta: &Metadata) -> String {
    let name = if meta.file_type().is_symlink() {
        format_stat("%N", path, meta, false)
    } else {
        path.to_owned()
    };
    format!(
        "  File: {name}\n  Size: {:<15} Blocks: {:<10} IO Block: {:<6} {}\nDevice: 0,0\tInode: \
         0           Links: 1\nAccess: ({:04o}/{})  Uid: (    0/{OWNER})   Gid: (    \
         0/{GROUP})\nAccess: {}\nModify: {}\nChange: {}\n Birth: -\n",
        meta.len(),
        sandbox_allocated(meta) / 512,
        BLOCK,
        kind_name(meta),
        mode_of(path, meta),
        mode_string(path, meta),
        stamp(meta.accessed().unwrap_or(UNIX_EPOCH)),
        stamp(meta.modified().unwrap_or(UNIX_EPOCH)),
        stamp(meta.modified().unwrap_or(UNIX_EPOCH)),
    )
}

pub fn stat(args: super::Args) -> i32 {
    let args = words(args);
    let Some(o) = parse_or_say("stat", &args, "c:Ltf", STAT_LONG) else {
        return 1;
    };
    if o.has('H') {
        println!(
            "Usage: stat [OPTION]... FILE...\n  -L, --dereference  follow links\n  -c  \
             --format=FORMAT   %n %N %s %F %a %A %b %B %o %U %G %u %g %h %x %y %z %X %Y %Z\n  \
             --printf=FORMAT   the same, with backslash escapes and no newline\nUnder WASI \
             owners, modes and inodes are not known: they show fixed values."
        );
        return 0;
    }
    if o.has('f') {
        eprintln!("stat: -f (file system status) is not available in the sandbox");
        return 1;
    }
    if o.operands.is_empty() {
        eprintln!("stat: missing operand\nTry 'stat --help' for more information.");
        return 1;
    }
    let mut out = String::new();
    let mut failed = false;
    for path in &o.operands {
        let meta = if o.has('L') {
            fs::metadata(path)
        } else {
            fs::symlink_metadata(path)
        };
        let meta = match meta {
            Ok(m) => m,
            Err(e) => {
                let _ = io::stdout().write_all(out.as_bytes());
                out.clear();
                eprintln!("stat: cannot statx '{path}': {}", reason(&e));
                failed = true;
                continue;
            }
        };
        // The last of -c/--format/--printf wins.
        let chosen = o.opts.iter().rev().find(|(c, _)| *c == 'c' || *c == 'p');
        match chosen {
            Some(('c', Some(f))) => {
                out.push_str(&format_stat(f, path, &meta, false));
                out.push('\n');
            }
            Some((_, Some(f))) => out.push_str(&format_stat(f, path, &meta, true)),
            _ if o.has('t') => {
                out.push_str(&format_stat(
                    "%n %s %b %f %u %g 0 %i %h 0 0 %X %Y %Z %W %o",
                    path,
                    &meta,
                    false,
                ));
                out.push('\n');
            }
            _ => out.push_str(&long_form(path, &meta)),
        }
    }
    let _ = io::stdout().write_all(out.as_bytes());
    i32::from(failed)
}

#[cfg(test)]
mod tests {
    use super::human;
    use std::fs;
    use uucore::fs::sandbox_allocated;

    /// What ext4 allocates (`ls -s`, `du`, `stat %b`), from a file's type and size alone.
    #[test]
    fn allocation_is_what_ext4_gives_a_file_of_that_size() {
        let dir = std::env::temp_dir().join(format!("toolbox-alloc-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir(&dir).unwrap();
        let sized = |name: &str, len: usize| {
            fs::write(dir.join(name), vec![b'x'; len]).unwrap();
            sandbox_allocated(&fs::symlink_metadata(dir.join(name)).unwrap())
        };
        assert_eq!(sized("empty", 0), 0);
        assert_eq!(sized("small", 3), 4096);
        assert_eq!(sized("block", 4096), 4096);
        assert_eq!(sized("more", 4097), 8192);
        fs::create_dir(dir.join("sub")).unwrap();
        assert_eq!(
            sandbox_allocated(&fs::metadata(dir.join("sub")).unwrap()),
            4096
        );
        // A link's own: a short one lives in its inode, a long one takes a block.
        let link = |name: &str, target: String| {
            std::os::unix::fs::symlink(target, dir.join(name)).unwrap();
            sandbox_allocated(&fs::symlink_metadata(dir.join(name)).unwrap())
        };
        assert_eq!(link("short", "small".into()), 0);
        assert_eq!(link("long", "x".repeat(70)), 4096);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn human_sizes_as_gnu_prints_them() {
        assert_eq!(human(0), "0");
        assert_eq!(human(4096), "4.0K");
        assert_eq!(human(12288), "12K");
        assert_eq!(human(1536), "1.5K");
        assert_eq!(human(1_048_576), "1.0M");
    }
}
