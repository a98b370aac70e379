//! `tree` as tree 2.1.0 (Debian bookworm's `tree` package) prints it when its output is not a
//! terminal: the listing (the operand's line, then `├── `/`└── ` entries under `│   `
//! indentation, or tree's ASCII `|-- `/`` `-- ``/`|   ` when the locale is not UTF-8, as in
//! `LC_ALL=C`), entries sorted by name as strcoll sorts them in the C and C.UTF-8 locales (byte
//! order), and the final `N directories, M files` report. Its options `-a -d -f -i -l -L -P -I
//! -F -s -h -r -t -n -o`, `--noreport --dirsfirst --filesfirst --prune --filelimit`, `--sort`
//! (name, size, mtime), `--help --version`, parsed as tree 2.1.0 parses them (an option's value
//! is the next word, never attached), and `-C` where tree colours nothing (no `$TERM`, as in the
//! sandbox). Everything else tree knows (permissions, owners, dates, colours on a terminal,
//! XML/JSON/HTML output, gitignore, charsets...) is refused by name, exit status 1 as tree's
//! usage errors. Written from tree's documented and observed behaviour, including its quirks (a
//! missing operand is `NAME  [error opening dir]` and status 2; the top directory counts in the
//! report when it has entries; `-P` does not filter directories; `--prune` with `-L` prunes
//! the directories at the last level).

use std::collections::HashSet;
use std::ffi::OsStr;
use std::fs::{self, Metadata};
use std::io::Write;
use std::path::Path;
use std::time::UNIX_EPOCH;

/// tree 2.1.0's short usage, which it prints on stderr after an invalid option.
const USAGE: &str = "usage: tree [-acdfghilnpqrstuvxACDFJQNSUX] [-L level [-R]] [-H  baseHREF]
\t[-T title] [-o filename] [-P pattern] [-I pattern] [--gitignore]
\t[--gitfile[=]file] [--matchdirs] [--metafirst] [--ignore-case]
\t[--nolinks] [--hintro[=]file] [--houtro[=]file] [--inodes] [--device]
\t[--sort[=]<name>] [--dirsfirst] [--filesfirst] [--filelimit #] [--si]
\t[--du] [--prune] [--charset[=]X] [--timefmt[=]format] [--fromfile]
\t[--fflinks] [--info] [--infofile[=]file] [--noreport] [--version]
\t[--help] [--] [directory ...]
";

const HELP: &str = "  ------- Listing options (of tree 2.1.0's, those this tree has) -------
  -a            All files are listed.
  -d            List directories only.
  -l            Follow symbolic links like directories.
  -f            Print the full path prefix for each file.
  -L level      Descend only level directories deep.
  -P pattern    List only those files that match the pattern given.
  -I pattern    Do not list files that match the given pattern.
  --prune       Prune empty directories from the output.
  --noreport    Turn off file/directory count at end of tree listing.
  --filelimit # Do not descend dirs with more than # files in them.
  -o filename   Output to file instead of stdout.
  ------- File options -------
  -s            Print the size in bytes of each file.
  -h            Print the size in a more human readable way.
  -F            Appends '/', '=', '*', '@', '|' or '>' as per ls -F.
  ------- Sorting options -------
  -t            Sort files by last modification time.
  -r            Reverse the order of the sort.
  --dirsfirst   List directories before files.
  --filesfirst  List files before directories.
  --sort X      Select sort: name,size,mtime.
  ------- Graphics options -------
  -i            Don't print indentation lines.
  -n            Turn colorization off always.
  ------- Miscellaneous options -------
  --version     Print version and exit.
  --help        Print usage and this help message and exit.
  --            Options processing terminator.
Not here: -c -g -p -q -u -v -x -A -C (on a terminal) -D -J -N -Q -R -S -U -X -H -T, --inodes,
--device, --nolinks, --charset, --si, --du, --timefmt, --ignore-case, --matchdirs, --metafirst,
--gitignore, --gitfile, --info, --infofile, --hintro, --houtro, --fromfile, --fflinks.
";

/// How entries are ordered (tree's `basesort`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sort {
    Name,
    Mtime,
    Size,
}

/// Directories before files, or after (tree's `topsort`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum First {
    Neither,
    Dirs,
    Files,
}

struct Options {
    all: bool,
    dirs_only: bool,
    full_path: bool,
    no_indent: bool,
    follow: bool,
    /// The deepest level listed, counted from 0 (tree's `Level`: `-L N` is N - 1); -1: all.
    level: i64,
    patterns: Vec<Vec<u8>>,
    ignores: Vec<Vec<u8>>,
    no_report: bool,
    first: First,
    classify: bool,
    size: bool,
    human: bool,
    reverse: bool,
    sort: Sort,
    prune: bool,
    file_limit: i64,
    /// Unicode line drawing (a UTF-8 charset), else ASCII.
    utf8_lines: bool,
    /// Names are read as UTF-8 characters (a UTF-8 locale), else as bytes.
    multibyte: bool,
}

/// One directory entry, as tree keeps it (`struct _info`).
struct Entry {
    name: Vec<u8>,
    /// What the entry names is a directory (through a link).
    is_dir: bool,
    /// A link's target, as it reads.
    link: Option<Vec<u8>>,
    /// The entry's own metadata (a link's own), and its target's (`None`: a dangling link).
    own: Metadata,
    target: Option<Metadata>,
    path: Vec<u8>,
    /// Which directory it is, to tell a link back to a directory already listed (`-l`): the
    /// directory's path with every link resolved. tree compares inodes, which WASI does not say.
    key: String,
    /// `--prune`'s whole tree: the entries read below, and why they could not be.
    child: Option<Vec<Entry>>,
    err: Option<String>,
}

#[derive(Default)]
struct Totals {
    dirs: u64,
    files: u64,
}

struct Tree {
    o: Options,
    out: Vec<u8>,
    /// The directories met so far (tree's inode table; never emptied, as tree's).
    seen: HashSet<String>,
    /// Directories that could not be opened or were over `--filelimit` (exit status 2).
    errors: u32,
    /// `dirs[level]`: 1 when more entries follow at that level, 2 at its last, 0 past it.
    dirs: Vec<u8>,
}

fn refuse(what: &str) -> i32 {
    eprintln!("tree: {what} is not supported here");
    1
}

/// tree's `long_arg`: `--name=VALUE` or `--name VALUE` for a word starting with `--name`.
fn long_value(
    args: &[String],
    word: &str,
    prefix: &str,
    next: &mut usize,
) -> Option<Result<String, String>> {
    let rest = word.strip_prefix(prefix)?;
    Some(if let Some(value) = rest.strip_prefix('=') {
        if value.is_empty() {
            Err(format!("tree: Missing argument to {prefix}="))
        } else {
            Ok(value.to_owned())
        }
    } else if let Some(value) = args.get(*next) {
        *next += 1;
        Ok(value.clone())
    } else {
        Err(format!("tree: Missing argument to {prefix}"))
    })
}

/// C's `atoi`: leading blanks, a sign, digits; 0 when there are none.
fn atoi(text: &str) -> i64 {
    let t = text.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let n = digits
        .bytes()
        .take_while(u8::is_ascii_digit)
        .fold(0i64, |n, d| {
            n.saturating_mul(10).saturating_add(i64::from(d - b'0'))
        });
    if neg { -n } else { n }
}

/// C's `strtoul(text, NULL, 0)`: decimal, `0x` hexadecimal or `0` octal; 0 when none.
fn strtoul(text: &str) -> i64 {
    let t = text.trim_start();
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (radix, digits) = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        if h.starts_with(|c: char| c.is_ascii_hexdigit()) {
            (16, h)
        } else {
            (8, "0")
        }
    } else if t.starts_with('0') {
        (8, t)
    } else {
        (10, t)
    };
    let n = digits
        .chars()
        .map_while(|c| c.to_digit(radix))
        .fold(0i64, |n, d| {
            n.saturating_mul(i64::from(radix))
                .saturating_add(i64::from(d))
        });
    // strtoul negates in unsigned arithmetic: `-1` is ULONG_MAX, which tree's int level reads
    // as -1 again.
    if neg { n.wrapping_neg() } else { n }
}

/// Whether the locale the environment names reads UTF-8 (`LC_ALL`, else `LC_CTYPE`, else
/// `LANG`, as setlocale looks); `less` asks it too.
pub(crate) fn utf8_locale() -> bool {
    let value = ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(|v| !v.is_empty())
        .unwrap_or_default()
        .to_ascii_lowercase();
    value.ends_with(".utf-8") || value.ends_with(".utf8") || value.contains(".utf-8@")
}

pub fn main(args: super::Args) -> i32 {
    let args: Vec<String> = args
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let multibyte = utf8_locale();
    let utf8_lines = match std::env::var("TREE_CHARSET") {
        Ok(cs) => cs.eq_ignore_ascii_case("utf-8") || cs.eq_ignore_ascii_case("utf8"),
        Err(_) => multibyte,
    };
    let mut o = Options {
        all: false,
        dirs_only: false,
        full_path: false,
        no_indent: false,
        follow: false,
        level: -1,
        patterns: Vec::new(),
        ignores: Vec::new(),
        no_report: false,
        first: First::Neither,
        classify: false,
        size: false,
        human: false,
        reverse: false,
        sort: Sort::Name,
        prune: false,
        file_limit: 0,
        utf8_lines,
        multibyte,
    };
    let mut operands: Vec<String> = Vec::new();
    let mut output: Option<String> = None;
    let mut version = false;
    let mut colour = false;
    let mut options = true;
    let mut next = 0;
    while next < args.len() {
        let word = args[next].clone();
        next += 1;
        if !(options && word.starts_with('-') && word.len() > 1) {
            operands.push(word);
            continue;
        }
        if word.starts_with("--") {
            match word.as_str() {
                "--" => options = false,
                "--help" => {
                    crate::own::emit(format!("{USAGE}{HELP}").as_bytes());
                    return 0;
                }
                "--version" => version = true,
                "--noreport" => o.no_report = true,
                "--dirsfirst" => o.first = First::Dirs,
                "--filesfirst" => o.first = First::Files,
                "--prune" => o.prune = true,
                "--inodes" | "--device" | "--nolinks" | "--si" | "--du" | "--ignore-case"
                | "--matchdirs" | "--fromfile" | "--metafirst" | "--gitignore" | "--info"
                | "--fflinks" => return refuse(&word),
                _ => {
                    if let Some(value) = long_value(&args, &word, "--filelimit", &mut next) {
                        match value {
                            Ok(v) => o.file_limit = atoi(&v),
                            Err(e) => {
                                eprintln!("{e}");
                                return 1;
                            }
                        }
                        continue;
                    }
                    if let Some(value) = long_value(&args, &word, "--sort", &mut next) {
                        let v = match value {
                            Ok(v) => v,
                            Err(e) => {
                                eprintln!("{e}");
                                return 1;
                            }
                        };
                        o.sort = match v.to_ascii_lowercase().as_str() {
                            "name" => Sort::Name,
                            "size" => Sort::Size,
                            "mtime" => Sort::Mtime,
                            "version" | "ctime" => return refuse(&format!("--sort={v}")),
                            _ => {
                                eprint!("tree: Sort type '{v}' not valid, should be one of: ");
                                println!("name,version,size,mtime,ctime");
                                return 1;
                            }
                        };
                        continue;
                    }
                    let known = [
                        "--charset",
                        "--timefmt",
                        "--gitfile",
                        "--infofile",
                        "--hintro",
                        "--houtro",
                    ];
                    if let Some(name) = known.iter().find(|k| word.starts_with(*k)) {
                        return refuse(name);
                    }
                    eprint!("tree: Invalid argument `{word}'.\n{USAGE}");
                    return 1;
                }
            }
            continue;
        }
        for c in word[1..].chars() {
            match c {
                'a' => o.all = true,
                'd' => o.dirs_only = true,
                'f' => o.full_path = true,
                'i' => o.no_indent = true,
                'l' => o.follow = true,
                's' => o.size = true,
                'h' => {
                    o.human = true;
                    o.size = true;
                }
                'F' => o.classify = true,
                'r' => o.reverse = true,
                't' => o.sort = Sort::Mtime,
                'n' => {}
                'C' => colour = true,
                'P' | 'I' | 'L' | 'o' => {
                    let Some(value) = args.get(next).cloned() else {
                        eprintln!("tree: Missing argument to -{c} option.");
                        return 1;
                    };
                    next += 1;
                    match c {
                        'P' => o.patterns.push(value.into_bytes()),
                        'I' => o.ignores.push(value.into_bytes()),
                        'o' => output = Some(value),
                        _ => {
                            o.level = strtoul(&value) - 1;
                            if o.level < 0 {
                                eprintln!("tree: Invalid level, must be greater than 0.");
                                return 1;
                            }
                        }
                    }
                }
                'p' => return refuse("-p (permissions)"),
                'u' | 'g' => return refuse(&format!("-{c} (owners)")),
                'D' | 'c' => return refuse(&format!("-{c} (dates)")),
                'q' | 'N' | 'Q' => return refuse(&format!("-{c} (name quoting)")),
                'A' | 'S' => return refuse(&format!("-{c} (terminal line graphics)")),
                'X' | 'J' | 'H' | 'T' | 'R' => {
                    return refuse(&format!("-{c} (XML, JSON and HTML output)"));
                }
                'v' | 'U' | 'x' => return refuse(&format!("-{c}")),
                _ => {
                    eprint!("tree: Invalid argument -`{c}'.\n{USAGE}");
                    return 1;
                }
            }
        }
    }
    // tree colours only with $TERM set; without it (the sandbox's shell sets none) -C changes
    // nothing. With it, colours are not here.
    let term = std::env::var_os("TERM").is_some();
    let no_color = std::env::var("NO_COLOR").is_ok_and(|v| !v.is_empty());
    if term && (colour || (std::env::var_os("CLICOLOR_FORCE").is_some() && !no_color)) {
        return refuse("-C (colours)");
    }
    let mut file = match &output {
        None => None,
        Some(name) => match fs::File::create(name) {
            Ok(f) => Some(f),
            Err(_) => {
                eprintln!("tree: invalid filename '{name}'");
                return 1;
            }
        },
    };
    if o.dirs_only {
        // "You'll just get nothing otherwise."
        o.prune = false;
    }
    let mut tree = Tree {
        o,
        out: Vec::new(),
        seen: HashSet::new(),
        errors: 0,
        dirs: vec![0; 2],
    };
    if version {
        let copy = if tree.o.utf8_lines { "©" } else { "(c)" };
        tree.out.extend_from_slice(
            format!(
                "tree v2.1.0 {copy} 1996 - 2022 by Steve Baker, Thomas Moore, Francesc Rocher, \
                 Florian Sesser, Kyosuke Tokoro\n"
            )
            .as_bytes(),
        );
    } else {
        if operands.is_empty() {
            operands.push(".".into());
        }
        tree.emit(&operands);
    }
    let written = match &mut file {
        Some(f) => f.write_all(&tree.out).is_ok(),
        None => crate::own::emit(&tree.out),
    };
    if !written {
        eprintln!("tree: write error");
        return 1;
    }
    if tree.errors > 0 { 2 } else { 0 }
}

/// `path`'s directory with every link resolved, made absolute against the working directory
/// (`-l`'s identity of a directory).
pub fn resolve(path: &str) -> String {
    let mut pending: Vec<String> = Vec::new();
    let absolute = if path.starts_with('/') {
        path.to_owned()
    } else {
        let cwd = std::env::current_dir()
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "/".into());
        format!("{cwd}/{path}")
    };
    pending.extend(absolute.split('/').rev().map(str::to_owned));
    let mut done: Vec<String> = Vec::new();
    let mut hops = 0;
    while let Some(part) = pending.pop() {
        match part.as_str() {
            "" | "." => continue,
            ".." => {
                done.pop();
                continue;
            }
            _ => {}
        }
        let candidate = format!("/{}", [done.join("/"), part.clone()].join("/"));
        let candidate = candidate.replace("//", "/");
        match fs::read_link(&candidate) {
            Ok(target) if hops < 40 => {
                hops += 1;
                let target = target.to_string_lossy().into_owned();
                if target.starts_with('/') {
                    done.clear();
                }
                pending.extend(target.split('/').rev().map(str::to_owned));
            }
            _ => done.push(part),
        }
    }
    format!("/{}", done.join("/"))
}

fn mtime(meta: &Metadata) -> i64 {
    match meta.modified() {
        Ok(t) => match t.duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_secs() as i64,
            Err(e) => {
                let d = e.duration();
                -(d.as_secs() as i64) - i64::from(d.subsec_nanos() > 0)
            }
        },
        Err(_) => 0,
    }
}

/// `ls -F`'s mark of a file (tree's `Ftype`): `/` a directory (none under `-d`), `@` a link,
/// `*` an executable file, `|` a FIFO, `=` a socket.
fn mark(path: &Path, meta: &Metadata, dirs_only: bool) -> Option<char> {
    let t = meta.file_type();
    if t.is_dir() {
        return (!dirs_only).then_some('/');
    }
    if t.is_symlink() {
        return Some('@');
    }
    if t.is_file() {
        return (crate::find::mode_of(path, meta) & 0o111 != 0).then_some('*');
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_socket() {
            return Some('=');
        }
        if t.is_fifo() {
            return Some('|');
        }
    }
    None
}

/// `path` joined to `name` as tree joins them: without a second `/` after one.
fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut path = dir.to_vec();
    if !dir.ends_with(b"/") {
        path.push(b'/');
    }
    path.extend_from_slice(name);
    path
}

/// A key's `name` below `key` (lossily: keys only tell directories apart).
fn join_key(key: &str, name: &[u8]) -> String {
    format!("{key}/{}", String::from_utf8_lossy(name))
}

/// The path of these bytes: names read from directories, `/`, and operands, which are all
/// `OsStr` bytes (names that are not UTF-8 stay as they are).
fn path_of(bytes: &[u8]) -> &Path {
    // SAFETY: the bytes are `OsStr::as_encoded_bytes` of names and operands, joined with `/`
    // (ASCII), which `from_encoded_bytes_unchecked` allows.
    Path::new(unsafe { OsStr::from_encoded_bytes_unchecked(bytes) })
}

/// Whether `name` matches `-P`/`-I`'s pattern `pat`: tree's wildcards (`*` not across `/`,
/// `**`, `?`, `[...]` with ranges and `^`, `\` quoting, a final `/` matching directories only)
/// and `|` between alternatives. A malformed pattern (`|` first or last, an open `[`) counts as a
/// match, as tree's -1 does.
fn matches(name: &[u8], pat: &[u8], is_dir: bool) -> bool {
    alternatives(name, pat, is_dir) != 0
}

fn alternatives(name: &[u8], pat: &[u8], is_dir: bool) -> i32 {
    match pat.iter().position(|&c| c == b'|') {
        None => wild(name, pat, is_dir),
        Some(bar) if bar == 0 || bar + 1 == pat.len() => -1,
        Some(bar) => match wild(name, &pat[..bar], is_dir) {
            0 => alternatives(name, &pat[bar + 1..], is_dir),
            m => m,
        },
    }
}

/// One alternative: 1 a match, 0 none, -1 a malformed pattern.
fn wild(name: &[u8], pat: &[u8], is_dir: bool) -> i32 {
    let (mut n, mut p) = (0, 0);
    let mut previous = 0u8;
    while p < pat.len() {
        let ok: i32;
        match pat[p] {
            b'[' => {
                p += 1;
                let negate = pat.get(p) == Some(&b'^');
                if negate {
                    p += 1;
                }
                let Some(&c) = name.get(n) else {
                    return 0;
                };
                let mut hit = false;
                loop {
                    match pat.get(p) {
                        None => return -1,
                        Some(b']') => break,
                        _ => {}
                    }
                    if pat[p] == b'\\' {
                        p += 1;
                    }
                    let Some(&lo) = pat.get(p) else {
                        return -1;
                    };
                    if pat.get(p + 1) == Some(&b'-') {
                        p += 2;
                        if pat.get(p) == Some(&b'\\') {
                            p += 1;
                        }
                        let Some(&hi) = pat.get(p) else {
                            return -1;
                        };
                        if lo <= c && c <= hi {
                            hit = true;
                        }
                    } else if c == lo {
                        hit = true;
                    }
                    p += 1;
                }
                n += 1;
                ok = i32::from(hit != negate);
            }
            b'*' => {
                p += 1;
                if p == pat.len() {
                    return i32::from(!name[n..].contains(&b'/'));
                }
                let mut m = 0;
                if pat[p] == b'*' {
                    p += 1;
                    if p == pat.len() {
                        return 1;
                    }
                    while n < name.len() {
                        m = wild(&name[n..], &pat[p..], is_dir);
                        if m != 0 {
                            break;
                        }
                        if previous == b'/' && pat[p] == b'/' && p + 1 < pat.len() {
                            m = wild(&name[n..], &pat[p + 1..], is_dir);
                            if m != 0 {
                                return m;
                            }
                        }
                        n += 1;
                        while n < name.len() && name[n] != b'/' {
                            n += 1;
                        }
                    }
                } else {
                    while n < name.len() {
                        m = wild(&name[n..], &pat[p..], is_dir);
                        n += 1;
                        if m != 0 || name.get(n) == Some(&b'/') {
                            break;
                        }
                    }
                }
                if m == 0 && (n == name.len() || name[n] == b'/') {
                    m = wild(&name[n..], &pat[p..], is_dir);
                }
                return m;
            }
            b'?' => {
                if n == name.len() {
                    return 0;
                }
                n += 1;
                ok = 1;
            }
            b'/' => {
                if p + 1 == pat.len() && n == name.len() {
                    return i32::from(is_dir);
                }
                ok = i32::from(name.get(n) == Some(&b'/'));
                n += 1;
            }
            c => {
                let want = if c == b'\\' {
                    p += 1;
                    match pat.get(p) {
                        Some(&w) => w,
                        // A final `\`: what follows the name's end matches it.
                        None => return i32::from(n == name.len()),
                    }
                } else {
                    c
                };
                ok = i32::from(name.get(n) == Some(&want));
                n += 1;
            }
        }
        previous = pat[p];
        p += 1;
        if ok < 1 {
            return ok;
        }
    }
    i32::from(n >= name.len())
}

impl Tree {
    /// The entries of `dir` that are listed (tree's `read_dir`); `Err` when it cannot be opened.
    fn read_dir(&self, dir: &[u8], key: &str) -> Result<Vec<Entry>, ()> {
        let reading = fs::read_dir(path_of(dir)).map_err(|_| ())?;
        let mut entries = Vec::new();
        for item in reading.flatten() {
            let name_os = item.file_name();
            let name = name_os.as_encoded_bytes().to_vec();
            if !self.o.all && name.first() == Some(&b'.') {
                continue;
            }
            let path = join(dir, &name);
            let Ok(own) = fs::symlink_metadata(path_of(&path)) else {
                continue;
            };
            let is_link = own.file_type().is_symlink();
            let target = if is_link {
                fs::metadata(path_of(&path)).ok()
            } else {
                None
            };
            let is_dir = if is_link {
                target.as_ref().is_some_and(Metadata::is_dir)
            } else {
                own.is_dir()
            };
            if !own.is_dir()
                && !(self.o.follow && is_dir)
                && !self.o.patterns.is_empty()
                && !self.o.patterns.iter().any(|p| matches(&name, p, is_dir))
            {
                continue;
            }
            if self.o.ignores.iter().any(|p| matches(&name, p, is_dir)) {
                continue;
            }
            if self.o.dirs_only && !is_dir {
                continue;
            }
            let link = is_link.then(|| {
                fs::read_link(path_of(&path)).map_or_else(
                    |_| b"[Error reading symbolic link information]".to_vec(),
                    |t| t.as_os_str().as_encoded_bytes().to_vec(),
                )
            });
            let key = if !is_dir || !self.o.follow {
                String::new()
            } else if is_link {
                resolve(&String::from_utf8_lossy(&path))
            } else {
                join_key(key, &name)
            };
            entries.push(Entry {
                name,
                is_dir,
                link,
                own,
                target,
                path,
                key,
                child: None,
                err: None,
            });
        }
        Ok(entries)
    }

    fn compare(&self, a: &Entry, b: &Entry) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        if a.is_dir != b.is_dir {
            match self.o.first {
                First::Dirs => {
                    return if a.is_dir {
                        Ordering::Less
                    } else {
                        Ordering::Greater
                    };
                }
                First::Files => {
                    return if a.is_dir {
                        Ordering::Greater
                    } else {
                        Ordering::Less
                    };
                }
                First::Neither => {}
            }
        }
        let by_name = a.name.cmp(&b.name);
        let v = match self.o.sort {
            Sort::Name => by_name,
            Sort::Mtime => mtime(&a.own).cmp(&mtime(&b.own)).then(by_name),
            Sort::Size => b.own.len().cmp(&a.own.len()).then(by_name),
        };
        if self.o.reverse { v.reverse() } else { v }
    }

    fn sort(&self, entries: &mut [Entry]) {
        entries.sort_by(|a, b| self.compare(a, b));
    }

    /// `--prune`'s whole tree below `dir` (tree's `unix_getfulltree`): the entries, or none
    /// (empty, or past `-L`), and what kept it from being read.
    fn full_tree(
        &mut self,
        dir: &[u8],
        key: &str,
        level: i64,
    ) -> (Option<Vec<Entry>>, Option<String>) {
        if self.o.level >= 0 && level > self.o.level {
            return (None, None);
        }
        let Ok(mut entries) = self.read_dir(dir, key) else {
            return (None, Some("error opening dir".into()));
        };
        if entries.is_empty() {
            return (None, None);
        }
        if self.o.file_limit > 0 && entries.len() as i64 > self.o.file_limit {
            let err = format!(
                "{} entries exceeds filelimit, not opening dir",
                entries.len()
            );
            return (None, Some(err));
        }
        let mut kept = Vec::with_capacity(entries.len());
        for mut e in entries.drain(..) {
            if e.is_dir {
                if let Some(link) = &e.link {
                    if self.o.follow {
                        if self.seen.contains(&e.key) {
                            e.err = Some("recursive, not followed".into());
                        } else {
                            self.seen.insert(e.key.clone());
                            let path = self.link_path(dir, link);
                            let key = e.key.clone();
                            (e.child, e.err) = self.full_tree(&path, &key, level + 1);
                        }
                    }
                } else {
                    let path = if self.o.full_path && dir == b"/" {
                        join(b"", &e.name)
                    } else {
                        [dir, b"/", &e.name].concat()
                    };
                    self.seen.insert(e.key.clone());
                    let key = e.key.clone();
                    (e.child, e.err) = self.full_tree(&path, &key, level + 1);
                }
                if self.o.prune && e.child.is_none() {
                    continue;
                }
            }
            kept.push(e);
        }
        self.sort(&mut kept);
        if kept.is_empty() {
            return (None, None);
        }
        (Some(kept), None)
    }

    /// Where a link in `dir` to `link` leads, as tree names it (`-f` shows this path).
    fn link_path(&self, dir: &[u8], link: &[u8]) -> Vec<u8> {
        if link.starts_with(b"/") {
            link.to_vec()
        } else if self.o.full_path && dir == b"/" {
            join(b"", link)
        } else {
            [dir, b"/", link].concat()
        }
    }

    fn emit(&mut self, operands: &[String]) {
        let mut total = Totals::default();
        for operand in operands {
            let mut name = operand.clone();
            if self.o.full_path {
                while name.len() > 1 && name.ends_with('/') {
                    name.pop();
                }
            }
            let mut listed: Option<Vec<Entry>> = None;
            let mut count: i64 = -1;
            let own = fs::symlink_metadata(&name).ok();
            if let Some(meta) = &own {
                let key = if meta.is_symlink() {
                    format!("\0{name}")
                } else if self.o.follow {
                    resolve(&name)
                } else {
                    String::new()
                };
                self.seen.insert(key);
                let inside = if self.o.follow {
                    resolve(&name)
                } else {
                    String::new()
                };
                if self.o.prune {
                    let (entries, err) = self.full_tree(name.as_bytes(), &inside, 0);
                    count = if err.is_some() { -1 } else { 0 };
                    listed = entries;
                } else if let Ok(entries) = self.read_dir(name.as_bytes(), &inside) {
                    count = entries.len() as i64;
                    if !entries.is_empty() {
                        listed = Some(entries);
                    }
                }
                self.info(meta);
            }
            self.name(name.as_bytes());
            if self.o.classify
                && let Some(meta) = &own
                && let Some(c) = mark(Path::new(&name), meta, self.o.dirs_only)
            {
                self.out.push(c as u8);
            }
            if listed.is_none() && count != 0 {
                self.out.extend_from_slice(b"  [error opening dir]\n");
                if own.is_none() {
                    self.errors += 1;
                } else {
                    total.files += 1;
                }
            } else if self.o.file_limit > 0 && count > self.o.file_limit {
                self.out.extend_from_slice(
                    format!("  [{count} entries exceeds filelimit, not opening dir]\n").as_bytes(),
                );
                total.dirs += 1;
            } else {
                self.out.push(b'\n');
                if let Some(entries) = listed {
                    let inside = if self.o.follow {
                        resolve(&name)
                    } else {
                        String::new()
                    };
                    let sub = self.list(name.as_bytes(), &inside, entries, 1);
                    total.dirs += sub.dirs + 1;
                    total.files += sub.files;
                }
            }
        }
        if !self.o.no_report {
            let dirs = format!(
                "{} director{}",
                total.dirs,
                if total.dirs == 1 { "y" } else { "ies" }
            );
            let line = if self.o.dirs_only {
                format!("\n{dirs}\n")
            } else {
                let s = if total.files == 1 { "" } else { "s" };
                format!("\n{dirs}, {} file{s}\n", total.files)
            };
            self.out.extend_from_slice(line.as_bytes());
        }
    }

    /// The entries of the directory `dir` at depth `level` (tree's `listdir`).
    fn list(&mut self, dir: &[u8], key: &str, mut entries: Vec<Entry>, level: usize) -> Totals {
        let mut total = Totals::default();
        self.sort(&mut entries);
        if self.dirs.len() < level + 2 {
            self.dirs.resize(level + 2, 0);
        }
        let count = entries.len();
        self.dirs[level] = if count > 1 { 1 } else { 2 };
        for (at, mut e) in entries.into_iter().enumerate() {
            self.indent(level);
            self.info(&e.own);
            let mut shown = join(dir, &e.name);
            let mut inner = shown.clone();
            let mut descend = false;
            let mut err: Option<String> = None;
            let mut below: Option<Vec<Entry>> = None;
            if e.is_dir {
                total.dirs += 1;
                let found = self.seen.contains(&e.key);
                if !found {
                    self.seen.insert(e.key.clone());
                }
                if e.link.is_none() || self.o.follow {
                    descend = true;
                    if let Some(link) = &e.link {
                        if link.starts_with(b"/") {
                            inner = link.clone();
                        } else {
                            shown = self.link_path(dir, link);
                            inner = shown.clone();
                        }
                        if found {
                            err = Some("recursive, not followed".into());
                            descend = false;
                        }
                    }
                    if self.o.level >= 0 && level as i64 > self.o.level {
                        descend = false;
                    }
                    if descend {
                        if self.o.prune {
                            below = e.child.take();
                            err = e.err.take();
                        } else {
                            let child_key = if e.link.is_some() {
                                e.key.clone()
                            } else if self.o.follow {
                                join_key(key, &e.name)
                            } else {
                                String::new()
                            };
                            match self.read_dir(&inner, &child_key) {
                                Err(()) => {
                                    err = Some("error opening dir".into());
                                    self.errors += 1;
                                }
                                Ok(read) => {
                                    if self.o.file_limit > 0
                                        && read.len() as i64 > self.o.file_limit
                                    {
                                        err = Some(format!(
                                            "{} entries exceeds filelimit, not opening dir",
                                            read.len()
                                        ));
                                        self.errors += 1;
                                    } else if !read.is_empty() {
                                        below = Some(read);
                                    }
                                }
                            }
                        }
                        if below.is_none() {
                            descend = false;
                        }
                    }
                }
            } else {
                total.files += 1;
            }
            if self.o.full_path {
                self.name(&shown);
            } else {
                self.name(&e.name);
            }
            match &e.link {
                None => {
                    if self.o.classify
                        && let Some(c) = mark(path_of(&e.path), &e.own, self.o.dirs_only)
                    {
                        self.out.push(c as u8);
                    }
                }
                Some(link) => {
                    self.out.extend_from_slice(b" -> ");
                    let link = link.clone();
                    self.name(&link);
                    if self.o.classify
                        && let Some(target) = &e.target
                        && let Some(c) = mark(path_of(&e.path), target, self.o.dirs_only)
                    {
                        self.out.push(c as u8);
                    }
                }
            }
            if let Some(err) = err {
                self.out.extend_from_slice(format!("  [{err}]").as_bytes());
            }
            self.out.push(b'\n');
            if descend && let Some(below) = below {
                let child_key = if e.link.is_some() {
                    e.key.clone()
                } else if self.o.follow {
                    join_key(key, &e.name)
                } else {
                    String::new()
                };
                let sub = self.list(&inner, &child_key, below, level + 1);
                total.dirs += sub.dirs;
                total.files += sub.files;
            }
            if at + 2 == count {
                self.dirs[level] = 2;
            }
        }
        self.dirs[level] = 0;
        total
    }

    /// The indentation before an entry at depth `level` (tree's `indent`).
    fn indent(&mut self, level: usize) {
        if self.o.no_indent {
            return;
        }
        let (vert, tee, corner): (&str, &str, &str) = if self.o.utf8_lines {
            ("│\u{a0}\u{a0}", "├──", "└──")
        } else {
            ("|  ", "|--", "`--")
        };
        let mut i = 1;
        while i <= level && self.dirs[i] != 0 {
            let deeper = self.dirs.get(i + 1).is_some_and(|&d| d != 0);
            let piece = match (deeper, self.dirs[i] == 1) {
                (true, true) => vert,
                (true, false) => "   ",
                (false, true) => tee,
                (false, false) => corner,
            };
            self.out.extend_from_slice(piece.as_bytes());
            self.out.push(b' ');
            i += 1;
        }
    }

    /// `-s`/`-h`'s `[size]  ` before a name (tree's `fillinfo`).
    fn info(&mut self, meta: &Metadata) {
        if !self.o.size {
            return;
        }
        let size = meta.len();
        let text = if self.o.human {
            human(size)
        } else {
            format!("{size:>11}")
        };
        self.out.extend_from_slice(format!("[{text}]  ").as_bytes());
    }

    /// A name as tree prints it (its `printit`): in a UTF-8 locale printable characters as they
    /// are and others as `\ooo`; else bytes, with C escapes for `\a`..`\r`, `\\`, `\ ` for a
    /// space, and `\ooo` for what is not printable ASCII.
    fn name(&mut self, bytes: &[u8]) {
        if self.o.multibyte
            && let Ok(text) = std::str::from_utf8(bytes)
        {
            for c in text.chars() {
                if c.is_control() || c == '\u{2028}' || c == '\u{2029}' {
                    self.out
                        .extend_from_slice(format!("\\{:03o}", c as u32).as_bytes());
                } else {
                    let mut buf = [0; 4];
                    self.out
                        .extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
            return;
        }
        for &c in bytes {
            match c {
                7..=13 => {
                    self.out.push(b'\\');
                    self.out.push(b"abtnvfr"[usize::from(c - 7)]);
                }
                b'\\' | b' ' => {
                    self.out.push(b'\\');
                    self.out.push(c);
                }
                0x21..=0x7e => self.out.push(c),
                _ => self.out.extend_from_slice(format!("\\{c:03o}").as_bytes()),
            }
        }
    }
}

/// `-h`'s size (tree's `psize`): bytes below 1 KiB, else one decimal below 10 of a unit.
fn human(bytes: u64) -> String {
    const UNITS: &[u8] = b"BKMGTPEZY";
    let mut size = bytes;
    let mut unit = usize::from(size >= 1024);
    while size >= 1024 * 1024 {
        unit += 1;
        size /= 1024;
    }
    if unit == 0 {
        return format!("{size:>4}");
    }
    // tree divides in single precision.
    let value = f64::from(size as f32 / 1024f32);
    let u = UNITS[unit] as char;
    if size / 1024 >= 10 {
        format!("{value:>3.0}{u}")
    } else {
        format!("{value:>3.1}{u}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_as_tree_matches_them() {
        assert!(matches(b"a.txt", b"*.txt", false));
        assert!(!matches(b"a.txt", b"*.py", false));
        assert!(matches(b"run.sh", b"d*|*.sh", false));
        assert!(matches(b"d", b"d/", true));
        assert!(!matches(b"d", b"d/", false));
        assert!(!matches(b"dl", b"d/", true));
        assert!(matches(b"b", b"[a-c]", false));
        assert!(!matches(b"b", b"[^a-c]", false));
        assert!(matches(b"x", b"?", false));
        assert!(!matches(b"", b"?", false));
        assert!(matches(b"anything", b"|x", false));
        assert!(matches(b"a*b", b"a\\*b", false));
        assert!(matches(b"abc", b"**", false));
    }

    #[test]
    fn sizes_as_tree_shows_them() {
        assert_eq!(human(0), "   0");
        assert_eq!(human(1023), "1023");
        assert_eq!(human(4096), "4.0K");
        assert_eq!(human(5000), "4.9K");
        assert_eq!(human(10 * 1024), " 10K");
        assert_eq!(human(3 * 1024 * 1024), "3.0M");
    }

    #[test]
    fn numbers_as_c_reads_them() {
        assert_eq!(strtoul("0x10"), 16);
        assert_eq!(strtoul("010"), 8);
        assert_eq!(strtoul("abc"), 0);
        assert_eq!(atoi(" 12x"), 12);
    }
}
