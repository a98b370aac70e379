//! `find`, as GNU findutils behaves (uutils' findutils needs Oniguruma's C and nix, which do not
//! build for WASI): starting points, an expression of tests, actions and operators (`!`/`-not`,
//! `-a`/juxtaposition, `-o`/`-or`, `( )`, GNU's precedence), the global options `-maxdepth`,
//! `-mindepth`, `-depth`, `-L`/`-H`/`-P`, and GNU's order: each directory before its entries
//! (after them with `-depth` or `-delete`), entries in directory order.
//!
//! Nothing here can start a process: `-exec`, `-execdir`, `-ok`, `-okdir` are refused, pointing
//! at `find ... -print0 | xargs -0 CMD` (the shell's xargs runs commands).

use std::fs::{self, Metadata};
use std::io::{self, Write};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::glob;
use crate::own::reason;

/// How `-perm`'s bits must be set: exactly (`MODE`), all of them (`-MODE`), any (`/MODE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PermMatch {
    Exactly,
    All,
    Any,
}

/// `-perm`'s operand: an octal mode (`755`) or a symbolic one as chmod's (`u+x`, `g=w,o+r`,
/// uucore's parser, which `chmod` uses too), applied to no bits, after an optional `-` or `/`.
fn parse_perm(operand: &str) -> Option<(PermMatch, u32)> {
    let (how, spec) = match operand.as_bytes().first() {
        Some(b'-') => (PermMatch::All, &operand[1..]),
        Some(b'/') => (PermMatch::Any, &operand[1..]),
        _ => (PermMatch::Exactly, operand),
    };
    // GNU find compiles the mode as chmod does and applies it to no bits with no umask.
    if spec.is_empty() {
        return None;
    }
    let mode = uucore::mode::parse_chmod(0, spec, false, 0).ok()?;
    Some((how, mode))
}

/// How a number compares: `+N`, `-N` or `N`.
#[derive(Debug, Clone, Copy)]
enum Cmp {
    More(u64),
    Less(u64),
    Exactly(u64),
}

impl Cmp {
    fn parse(s: &str) -> Option<(Self, &str)> {
        let (make, digits): (fn(u64) -> Cmp, &str) = match s.as_bytes().first()? {
            b'+' => (Cmp::More, &s[1..]),
            b'-' => (Cmp::Less, &s[1..]),
            _ => (Cmp::Exactly, s),
        };
        let end = digits
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(digits.len());
        let n = digits[..end].parse().ok()?;
        Some((make(n), &digits[end..]))
    }

    fn holds(self, value: u64) -> bool {
        match self {
            Cmp::More(n) => value > n,
            Cmp::Less(n) => value < n,
            Cmp::Exactly(n) => value == n,
        }
    }
}

/// One node of the expression.
#[derive(Debug)]
enum Expr {
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    /// `,`: both, the value of the right one.
    Comma(Box<Expr>, Box<Expr>),
    True,
    False,
    Name(String, bool),
    Path(String, bool),
    Type(Vec<char>),
    /// `-size`: the comparison and the unit's bytes.
    Size(Cmp, u64),
    Newer(SystemTime),
    /// `-mtime`/`-mmin`: the comparison and the unit's seconds.
    Age(Cmp, u64),
    Empty,
    Links(Cmp),
    /// `-perm`: how the bits must be set, and the bits.
    Perm(PermMatch, u32),
    /// `-executable`: its owner may run it (a directory: search it), what follows a link.
    Executable,
    Print,
    Print0,
    Printf(String),
    Delete,
    Prune,
    Quit,
}

/// The command line's expression and global options.
struct Find {
    expr: Expr,
    max_depth: Option<usize>,
    min_depth: usize,
    depth_first: bool,
    /// `-L`: follow every link.
    follow: bool,
    now: SystemTime,
}

/// One file met on the way.
struct Entry<'a> {
    /// As shown: the starting point, then `/name`s.
    path: &'a str,
    /// The starting point this entry is below.
    start: &'a str,
    depth: usize,
    meta: &'a Metadata,
}

/// The state of the walk: output, status, whether to stop.
#[derive(Default)]
struct Walk {
    out: Vec<u8>,
    failed: bool,
    quit: bool,
    /// Set by `-prune` for the entry being evaluated.
    prune: bool,
}

impl Walk {
    fn flush(&mut self) {
        let _ = io::stdout().write_all(&self.out);
        self.out.clear();
    }

    fn error(&mut self, message: String) {
        self.flush();
        eprintln!("find: {message}");
        self.failed = true;
    }
}

/// A parse error: GNU's wording where it has one.
type Parsed<T> = Result<T, String>;

struct Parser<'a> {
    args: &'a [String],
    at: usize,
    /// An action was given: no implicit `-print`.
    acted: bool,
    find: Find,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.args.get(self.at).map(String::as_str)
    }

    fn value(&mut self, option: &str) -> Parsed<String> {
        let v = self
            .args
            .get(self.at)
            .ok_or_else(|| format!("missing argument to `{option}'"))?;
        self.at += 1;
        Ok(v.clone())
    }

    /// `or := and (-o and)*`
    fn or(&mut self) -> Parsed<Expr> {
        let mut left = self.and()?;
        while matches!(self.peek(), Some("-o" | "-or")) {
            self.at += 1;
            let right = self.and()?;
            left = Expr::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn comma(&mut self) -> Parsed<Expr> {
        let mut left = self.or()?;
        while self.peek() == Some(",") {
            self.at += 1;
            let right = self.or()?;
            left = Expr::Comma(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    /// `and := not ((-a)? not)*`
    fn and(&mut self) -> Parsed<Expr> {
        let mut left = self.not()?;
        loop {
            match self.peek() {
                None | Some("-o" | "-or" | ")" | ",") => return Ok(left),
                Some("-a" | "-and") => self.at += 1,
                _ => {}
            }
            let right = self.not()?;
            left = Expr::And(Box::new(left), Box::new(right));
        }
    }

    fn not(&mut self) -> Parsed<Expr> {
        match self.peek() {
            Some("!" | "-not") => {
                self.at += 1;
                Ok(Expr::Not(Box::new(self.not()?)))
            }
            _ => self.primary(),
        }
    }

    fn primary(&mut self) -> Parsed<Expr> {
        let Some(word) = self.peek().map(str::to_owned) else {
            return Err("expected an expression".into());
        };
        self.at += 1;
        let w = word.as_str();
        Ok(match w {
            "(" => {
                if self.peek() == Some(")") {
                    return Err("invalid expression; empty parentheses are not allowed.".into());
                }
                let inner = self.comma()?;
                if self.peek() != Some(")") {
                    return Err(
                        "invalid expression; I was expecting to find a ')' somewhere \
                                but did not see one."
                            .into(),
                    );
                }
                self.at += 1;
                inner
            }
            ")" => return Err("invalid expression; you have too many ')'".into()),
            "-true" => Expr::True,
            "-false" => Expr::False,
            "-name" | "-iname" => {
                let p = self.value(w)?;
                Expr::Name(p, w == "-iname")
            }
            "-path" | "-wholename" | "-ipath" | "-iwholename" => {
                let p = self.value(w)?;
                Expr::Path(p, w.starts_with("-i"))
            }
            "-type" | "-xtype" => {
                let v = self.value(w)?;
                let kinds: Vec<char> = v.split(',').filter_map(|k| k.chars().next()).collect();
                if let Some(bad) = v
                    .split(',')
                    .find(|k| k.len() != 1 || !"fdlpsbcD".contains(*k))
                {
                    return Err(format!("Unknown argument to {w}: {bad}"));
                }
                Expr::Type(kinds)
            }
            "-size" => {
                let v = self.value(w)?;
                let bad = || format!("invalid -size type in `{v}'");
                let (cmp, unit) = Cmp::parse(&v).ok_or_else(bad)?;
                let unit = match unit {
                    "" | "b" => 512,
                    "c" => 1,
                    "w" => 2,
                    "k" => 1 << 10,
                    "M" => 1 << 20,
                    "G" => 1 << 30,
                    _ => return Err(bad()),
                };
                Expr::Size(cmp, unit)
            }
            "-mtime" | "-mmin" => {
                let v = self.value(w)?;
                let (cmp, rest) = Cmp::parse(&v)
                    .filter(|(_, rest)| rest.is_empty())
                    .ok_or_else(|| format!("invalid argument `{v}' to `{w}'"))?;
                let _ = rest;
                Expr::Age(cmp, if w == "-mtime" { 86400 } else { 60 })
            }
            "-newer" => {
                let f = self.value(w)?;
                let meta = fs::metadata(&f).map_err(|e| format!("'{f}': {}", reason(&e)))?;
                Expr::Newer(meta.modified().unwrap_or(UNIX_EPOCH))
            }
            "-links" => {
                let v = self.value(w)?;
                let (cmp, _) = Cmp::parse(&v)
                    .filter(|(_, rest)| rest.is_empty())
                    .ok_or_else(|| format!("invalid argument `{v}' to `{w}'"))?;
                Expr::Links(cmp)
            }
            "-empty" => Expr::Empty,
            "-perm" => {
                let v = self.value(w)?;
                let (how, bits) = parse_perm(&v).ok_or_else(|| format!("invalid mode `{v}'"))?;
                Expr::Perm(how, bits)
            }
            "-executable" => Expr::Executable,
            "-print" => {
                self.acted = true;
                Expr::Print
            }
            "-print0" => {
                self.acted = true;
                Expr::Print0
            }
            "-printf" => {
                self.acted = true;
                Expr::Printf(self.value(w)?)
            }
            "-ls" | "-fls" | "-fprint" | "-fprint0" | "-fprintf" => {
                return Err(format!(
                    "{w} is not supported here; use -print, -print0 or -printf (and a \
                     redirection)"
                ));
            }
            "-delete" => {
                self.acted = true;
                self.find.depth_first = true;
                Expr::Delete
            }
            "-prune" => Expr::Prune,
            "-quit" => Expr::Quit,
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                return Err(format!(
                    "{w} cannot run here: a WebAssembly tool cannot start a process. Use \
                     `find ... -print0 | xargs -0 CMD` instead (xargs runs commands), e.g. \
                     find . -name '*.py' -print0 | xargs -0 grep -n TODO"
                ));
            }
            "-maxdepth" | "-mindepth" => {
                let v = self.value(w)?;
                let n: usize = v.parse().map_err(|_| {
                    format!("Expected a positive decimal integer argument to {w}, but got `{v}'")
                })?;
                if w == "-maxdepth" {
                    self.find.max_depth = Some(n);
                } else {
                    self.find.min_depth = n;
                }
                Expr::True
            }
            "-depth" | "-d" => {
                self.find.depth_first = true;
                Expr::True
            }
            "-follow" => {
                self.find.follow = true;
                Expr::True
            }
            "-xdev" | "-mount" | "-noleaf" | "-ignore_readdir_race" | "-nowarn" | "-warn" => {
                Expr::True
            }
            "-regex" | "-iregex" | "-user" | "-group" | "-uid" | "-gid" | "-nouser"
            | "-nogroup" | "-newermt" | "-atime" | "-amin" | "-ctime" | "-cmin" | "-inum"
            | "-samefile" | "-lname" | "-ilname" | "-readable" | "-writable" => {
                return Err(format!(
                    "{w} is not supported here (-name -iname -path -ipath -type -size -newer \
                     -mtime -mmin -empty -links -perm -executable -maxdepth -mindepth -prune are)"
                ));
            }
            other if other.starts_with('-') && other.len() > 1 => {
                return Err(format!("unknown predicate `{other}'"));
            }
            other => {
                return Err(format!(
                    "paths must precede expression: `{other}'\nUsage: find [-H] [-L] [-P] \
                     [path...] [expression]"
                ));
            }
        })
    }
}

pub fn main(args: super::Args) -> i32 {
    let args: Vec<String> = args
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut at = 0;
    let mut follow = false;
    while let Some(a) = args.get(at) {
        match a.as_str() {
            "-L" => follow = true,
            "-H" | "-P" => follow = false,
            "--help" => {
                println!(
                    "Usage: find [-H] [-L] [-P] [path...] [expression]\n\
                     tests: -name -iname -path -ipath -type -size -newer -mtime -mmin -empty \
                     -links -true -false\nactions: -print -print0 -printf -delete -prune -quit\n\
                     options: -maxdepth -mindepth -depth\noperators: ( ) ! -not -a -and -o -or ,\n\
                     -exec cannot run here: use find ... -print0 | xargs -0 CMD"
                );
                return 0;
            }
            _ => break,
        }
        at += 1;
    }
    let first_test = args[at..]
        .iter()
        .position(|a| (a.starts_with('-') && a.len() > 1) || a == "!" || a == "(")
        .map_or(args.len(), |p| p + at);
    let starts: Vec<String> = if first_test == at {
        vec![".".into()]
    } else {
        args[at..first_test].to_vec()
    };
    let mut parser = Parser {
        args: &args[first_test..],
        at: 0,
        acted: false,
        find: Find {
            expr: Expr::True,
            max_depth: None,
            min_depth: 0,
            depth_first: false,
            follow,
            now: SystemTime::now(),
        },
    };
    let expr = if parser.args.is_empty() {
        Ok(Expr::True)
    } else {
        parser.comma().and_then(|e| match parser.peek() {
            None => Ok(e),
            Some(")") => Err("invalid expression; you have too many ')'".into()),
            Some(other) => Err(format!("unexpected `{other}'")),
        })
    };
    let expr = match expr {
        Ok(e) => e,
        Err(message) => {
            eprintln!("find: {message}");
            return 1;
        }
    };
    let mut find = parser.find;
    find.expr = if parser.acted {
        expr
    } else {
        Expr::And(Box::new(expr), Box::new(Expr::Print))
    };
    let mut walk = Walk::default();
    for start in &starts {
        if walk.quit {
            break;
        }
        // A starting point's link is followed when it ends with `/`, as the kernel resolves it
        // for GNU find.
        let meta = if find.follow || start.ends_with('/') {
            fs::metadata(start)
        } else {
            fs::symlink_metadata(start)
        };
        match meta {
            Ok(meta) => visit(&find, &mut walk, start, start, 0, &meta),
            Err(e) => walk.error(format!("'{start}': {}", reason(&e))),
        }
    }
    walk.flush();
    i32::from(walk.failed)
}

/// Visits `path` (and below it, if a directory).
fn visit(find: &Find, walk: &mut Walk, path: &str, start: &str, depth: usize, meta: &Metadata) {
    let entry = Entry {
        path,
        start,
        depth,
        meta,
    };
    let here = depth >= find.min_depth;
    walk.prune = false;
    if here && !find.depth_first {
        eval(find, walk, &find.expr, &entry);
        if walk.out.len() > 64 << 10 {
            walk.flush();
        }
    }
    let descend =
        meta.is_dir() && !walk.prune && !walk.quit && find.max_depth.is_none_or(|m| depth < m);
    if descend {
        match fs::read_dir(path) {
            Ok(entries) => {
                for child in entries {
                    if walk.quit {
                        break;
                    }
                    let child = match child {
                        Ok(c) => c,
                        Err(e) => {
                            walk.error(format!("'{path}': {}", reason(&e)));
                            continue;
                        }
                    };
                    let name = child.file_name().to_string_lossy().into_owned();
                    let child_path = if path.ends_with('/') {
                        format!("{path}{name}")
                    } else {
                        format!("{path}/{name}")
                    };
                    let meta = if find.follow {
                        fs::metadata(&child_path).or_else(|_| fs::symlink_metadata(&child_path))
                    } else {
                        fs::symlink_metadata(&child_path)
                    };
                    match meta {
                        Ok(meta) => visit(find, walk, &child_path, start, depth + 1, &meta),
                        Err(e) => walk.error(format!("'{child_path}': {}", reason(&e))),
                    }
                }
            }
            Err(e) => walk.error(format!("'{path}': {}", reason(&e))),
        }
    }
    if here && find.depth_first && !walk.quit {
        eval(find, walk, &find.expr, &entry);
    }
}

/// The last component of a path as find names it (`-name`, `%f`).
fn base_name(path: &str) -> &str {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return "/";
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed)
}

/// `find -type`'s letter of a file type: WASI's std tells files, directories and links apart
/// (sockets and devices need an unstable API), so anything else is `p`.
pub fn kind_char(meta: &Metadata) -> char {
    let t = meta.file_type();
    if t.is_symlink() {
        'l'
    } else if t.is_dir() {
        'd'
    } else if t.is_file() {
        'f'
    } else {
        'p'
    }
}

fn eval(find: &Find, walk: &mut Walk, expr: &Expr, e: &Entry<'_>) -> bool {
    match expr {
        Expr::And(a, b) => eval(find, walk, a, e) && !walk.quit && eval(find, walk, b, e),
        Expr::Or(a, b) => eval(find, walk, a, e) || eval(find, walk, b, e),
        Expr::Comma(a, b) => {
            eval(find, walk, a, e);
            eval(find, walk, b, e)
        }
        Expr::Not(a) => !eval(find, walk, a, e),
        Expr::True => true,
        Expr::False => false,
        Expr::Name(p, fold) => glob::Glob::new(p, *fold).matches(base_name(e.path)),
        Expr::Path(p, fold) => glob::Glob::new(p, *fold).matches(e.path),
        Expr::Type(kinds) => kinds.contains(&kind_char(e.meta)),
        Expr::Size(cmp, unit) => {
            let size = e.meta.len();
            cmp.holds(size.div_ceil(*unit))
        }
        Expr::Newer(t) => e.meta.modified().is_ok_and(|m| m > *t),
        Expr::Age(cmp, unit) => {
            let modified = e.meta.modified().unwrap_or(UNIX_EPOCH);
            let age = find.now.duration_since(modified).map_or(0, |d| d.as_secs());
            if *unit == 60 {
                // -mmin: GNU compares the age in minutes, rounded up.
                cmp.holds(age.div_ceil(60))
            } else {
                cmp.holds(age / unit)
            }
        }
        Expr::Empty => {
            if e.meta.is_dir() {
                fs::read_dir(e.path).is_ok_and(|mut d| d.next().is_none())
            } else {
                e.meta.is_file() && e.meta.len() == 0
            }
        }
        Expr::Links(cmp) => cmp.holds(links(e.meta)),
        Expr::Perm(how, want) => {
            let have = mode_of(e.path, e.meta);
            match how {
                PermMatch::Exactly => have == *want,
                PermMatch::All => have & want == *want,
                PermMatch::Any => *want == 0 || have & want != 0,
            }
        }
        // As access(2) sees it: through a link to what it names.
        Expr::Executable => fs::metadata(e.path).is_ok_and(|m| mode_of(e.path, &m) & 0o100 != 0),
        Expr::Print => {
            walk.out.extend_from_slice(e.path.as_bytes());
            walk.out.push(b'\n');
            true
        }
        Expr::Print0 => {
            walk.out.extend_from_slice(e.path.as_bytes());
            walk.out.push(0);
            true
        }
        Expr::Printf(format) => {
            let text = printf(format, e);
            walk.out.extend_from_slice(&text);
            true
        }
        Expr::Delete => {
            if e.path == "." || e.path == "./" {
                return true;
            }
            let removed = if e.meta.is_dir() {
                fs::remove_dir(e.path)
            } else {
                fs::remove_file(e.path)
            };
            match removed {
                Ok(()) => true,
                Err(err) => {
                    walk.error(format!("cannot delete '{}': {}", e.path, reason(&err)));
                    false
                }
            }
        }
        Expr::Prune => {
            if !find.depth_first {
                walk.prune = true;
            }
            true
        }
        Expr::Quit => {
            walk.quit = true;
            true
        }
    }
}

/// Hard links: WASI's std does not say them (`nlink` is unstable there); one each.
fn links(_meta: &Metadata) -> u64 {
    1
}

/// The permission bits of the file at `path` whose metadata is `meta` (`%m`, `-perm`, stat's
/// `%a`): WASI preview 1 carries no modes, so the sandbox's host says them
/// ([`uucore::fs::sandbox_mode`]).
#[cfg(target_os = "wasi")]
pub fn mode_of(path: impl AsRef<Path>, meta: &Metadata) -> u32 {
    uucore::fs::sandbox_mode(path.as_ref(), meta)
}

/// The permission bits of `meta` (the native build the unit tests run).
#[cfg(not(target_os = "wasi"))]
pub fn mode_of(_path: impl AsRef<Path>, meta: &Metadata) -> u32 {
    std::os::unix::fs::MetadataExt::mode(meta) & 0o7777
}

/// `ls -l`-style permissions (`-rwsr-xr-x`, `drwxrwxrwt`): the type letter and [`mode_of`]'s
/// bits, as coreutils writes them.
pub fn mode_string(path: impl AsRef<Path>, meta: &Metadata) -> String {
    uucore::fs::display_permissions_unix(type_bits(meta) | mode_of(path, meta), true)
}

/// The file type bits of a mode (`S_IFREG`, ...), as `stat`'s `%f` shows them.
pub fn type_bits(meta: &Metadata) -> u32 {
    use uucore::fs::mode::{S_IFDIR, S_IFIFO, S_IFLNK, S_IFREG};
    match kind_char(meta) {
        'l' => S_IFLNK,
        'd' => S_IFDIR,
        'f' => S_IFREG,
        _ => S_IFIFO,
    }
}

/// Seconds since the epoch, and nanoseconds, of a time.
fn epoch(t: SystemTime) -> (i64, u32) {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => (d.as_secs() as i64, d.subsec_nanos()),
        Err(e) => (-(e.duration().as_secs() as i64), 0),
    }
}

/// A UTC calendar time: year, month, day, hour, minute, second, weekday (0 = Sunday).
pub fn civil(secs: i64) -> (i64, u32, u32, u32, u32, u32, u32) {
    let days = secs.div_euclid(86400);
    let rem = secs.rem_euclid(86400);
    // Howard Hinnant's days-from-civil, inverted.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let weekday = (days + 4).rem_euclid(7) as u32;
    (
        if m <= 2 { y + 1 } else { y },
        m,
        d,
        (rem / 3600) as u32,
        (rem % 3600 / 60) as u32,
        (rem % 60) as u32,
        weekday,
    )
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/// `%T<k>`-style time fields (UTC: the sandbox has no time zone).
fn time_field(t: SystemTime, k: char) -> String {
    let (secs, nanos) = epoch(t);
    let (y, mo, d, h, mi, s, wd) = civil(secs);
    match k {
        '@' => format!("{secs}.{nanos:09}0"),
        'Y' => y.to_string(),
        'y' => format!("{:02}", y % 100),
        'm' => format!("{mo:02}"),
        'd' => format!("{d:02}"),
        'e' => format!("{d:2}"),
        'H' => format!("{h:02}"),
        'M' => format!("{mi:02}"),
        'S' => format!("{s:02}.{nanos:09}0"),
        'T' | '+' if k == 'T' => format!("{h:02}:{mi:02}:{s:02}.{nanos:09}0"),
        '+' => format!("{y}-{mo:02}-{d:02}+{h:02}:{mi:02}:{s:02}.{nanos:09}0"),
        'F' => format!("{y}-{mo:02}-{d:02}"),
        'D' => format!("{mo:02}/{d:02}/{:02}", y % 100),
        'R' => format!("{h:02}:{mi:02}"),
        'b' | 'h' => MONTHS[(mo - 1) as usize].to_owned(),
        'a' => DAYS[wd as usize].to_owned(),
        'j' => {
            let jan1 = civil_days(y, 1, 1);
            format!("{:03}", secs.div_euclid(86400) - jan1 + 1)
        }
        's' => secs.to_string(),
        other => format!("%T{other}"),
    }
}

/// Days since the epoch of a UTC date.
fn civil_days(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// ctime(3)'s format: `Sat Nov 29 01:31:02.1234567890 2026` as find's `%t` prints it.
fn ctime(t: SystemTime) -> String {
    let (secs, nanos) = epoch(t);
    let (y, mo, d, h, mi, s, wd) = civil(secs);
    format!(
        "{} {} {d:2} {h:02}:{mi:02}:{s:02}.{nanos:09}0 {y}",
        DAYS[wd as usize],
        MONTHS[(mo - 1) as usize]
    )
}

/// `-printf`'s directives and escapes.
fn printf(format: &str, e: &Entry<'_>) -> Vec<u8> {
    let mut out = String::new();
    let c: Vec<char> = format.chars().collect();
    let mut i = 0;
    let modified = e.meta.modified().unwrap_or(UNIX_EPOCH);
    let accessed = e.meta.accessed().unwrap_or(modified);
    while i < c.len() {
        match c[i] {
            '\\' if i + 1 < c.len() => {
                i += 1;
                match c[i] {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    '0' => out.push('\0'),
                    '\\' => out.push('\\'),
                    'a' => out.push('\x07'),
                    'r' => out.push('\r'),
                    'c' => return out.into_bytes(),
                    other => {
                        out.push('\\');
                        out.push(other);
                    }
                }
                i += 1;
            }
            '%' if i + 1 < c.len() => {
                i += 1;
                // Flags and width: `%-10s`, `%5p`.
                let mut spec = String::new();
                while i < c.len() && (c[i] == '-' || c[i].is_ascii_digit() || c[i] == '.') {
                    spec.push(c[i]);
                    i += 1;
                }
                let Some(&d) = c.get(i) else { break };
                i += 1;
                let value = match d {
                    '%' => "%".to_owned(),
                    'p' => e.path.to_owned(),
                    'f' => base_name(e.path).to_owned(),
                    'h' => match e.path.trim_end_matches('/').rsplit_once('/') {
                        Some(("", _)) => "/".to_owned(),
                        Some((dir, _)) => dir.to_owned(),
                        None => ".".to_owned(),
                    },
                    'P' => {
                        let rest = e.path.strip_prefix(e.start).unwrap_or(e.path);
                        rest.trim_start_matches('/').to_owned()
                    }
                    'H' => e.start.to_owned(),
                    's' => e.meta.len().to_string(),
                    'k' => e.meta.len().div_ceil(1024).to_string(),
                    'b' => e.meta.len().div_ceil(512).to_string(),
                    'd' => e.depth.to_string(),
                    'y' => kind_char(e.meta).to_string(),
                    'Y' => fs::metadata(e.path)
                        .map_or('N', |m| kind_char(&m))
                        .to_string(),
                    'm' => format!("{:o}", mode_of(e.path, e.meta)),
                    'M' => mode_string(e.path, e.meta),
                    'n' => links(e.meta).to_string(),
                    'l' => {
                        if e.meta.file_type().is_symlink() {
                            fs::read_link(e.path)
                                .map(|l| l.to_string_lossy().into_owned())
                                .unwrap_or_default()
                        } else {
                            String::new()
                        }
                    }
                    'u' | 'g' => "root".to_owned(),
                    'U' | 'G' => "0".to_owned(),
                    't' => ctime(modified),
                    'a' => ctime(accessed),
                    'c' => ctime(modified),
                    'T' | 'A' | 'C' => {
                        let Some(&k) = c.get(i) else { break };
                        i += 1;
                        time_field(if d == 'A' { accessed } else { modified }, k)
                    }
                    other => format!("%{other}"),
                };
                out.push_str(&pad(&value, &spec));
            }
            ch => {
                out.push(ch);
                i += 1;
            }
        }
    }
    out.into_bytes()
}

/// A value padded as `%-10s`/`%10s` would.
fn pad(value: &str, spec: &str) -> String {
    let left = spec.starts_with('-');
    let width: usize = spec
        .trim_start_matches('-')
        .split('.')
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or(0);
    if left {
        format!("{value:<width$}")
    } else {
        format!("{value:>width$}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perm_operands_read_as_gnu_find_reads_them() {
        use PermMatch::*;
        assert_eq!(parse_perm("755"), Some((Exactly, 0o755)));
        assert_eq!(parse_perm("-u+x"), Some((All, 0o100)));
        assert_eq!(parse_perm("/u=x,g=x"), Some((Any, 0o110)));
        assert_eq!(parse_perm("-111"), Some((All, 0o111)));
        assert_eq!(
            parse_perm("+x"),
            Some((Exactly, 0o111)),
            "who left out is a"
        );
        assert_eq!(parse_perm("u+rwx-w"), Some((Exactly, 0o500)));
        assert_eq!(parse_perm("-u+s"), Some((All, 0o4000)));
        assert_eq!(parse_perm("o+t"), Some((Exactly, 0o1000)));
        assert_eq!(parse_perm("g=rw,o=r"), Some((Exactly, 0o064)));
        for bad in ["", "-", "888", "17777", "u+q", "z+x", "ux"] {
            assert_eq!(parse_perm(bad), None, "{bad}");
        }
    }

    #[test]
    fn calendar() {
        assert_eq!(civil(0), (1970, 1, 1, 0, 0, 0, 4));
        assert_eq!(civil(1_700_000_000).0, 2023);
        assert_eq!(civil_days(2023, 11, 14), 1_700_000_000 / 86400);
    }
}
