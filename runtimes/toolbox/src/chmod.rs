//! `chmod`, as GNU coreutils 9's: `MODE[,MODE]...` (symbolic as `[ugoa]*([-+=]([rwxXst]*|[ugo]))+`
//! or octal, parsed by uucore's `mode`, with the umask applied where no `ugoa` is given),
//! `--reference=RFILE`, `-R`, `-c`, `-v`, `-f`, `--preserve-root`, and the modes that look like
//! options (`chmod -w f`), including GNU's warning when the umask kept a bit such a mode named.
//! uutils' chmod is for Unix only (file descriptors, `PermissionsExt`): WASI preview 1 has no
//! modes, so the bits are read and set through the sandbox's two host calls
//! ([`crate::find::mode_of`], [`set_mode`]), which resolve the path beneath the session's
//! mounts. The sandbox's own rules show as chmod's errors: a mount point keeps its mode (said,
//! not failed, so `chmod -R 755 .` in `/app` changes everything beneath), and the
//! set-user-ID and set-group-ID bits are refused by name.

use std::fs::{self, Metadata};
use std::io::{self, ErrorKind};
use std::path::Path;

use crate::getopt::{self, Long};
use crate::own::reason;

/// The umask of every session (WASI has none; the sandbox's files are made with 022).
const UMASK: u32 = 0o022;

/// The set-user-ID and set-group-ID bits, which the sandbox never sets.
const SETID_BITS: u32 = 0o6000;

const USAGE: &str = "Try 'chmod --help' for more information.";

const HELP: &str = "\
Usage: chmod [OPTION]... MODE[,MODE]... FILE...
  or:  chmod [OPTION]... OCTAL-MODE FILE...
  or:  chmod [OPTION]... --reference=RFILE FILE...
Change the mode of each FILE to MODE.
With --reference, change the mode of each FILE to that of RFILE.

  -c, --changes          like verbose but report only when a change is made
  -f, --silent, --quiet  suppress most error messages
  -v, --verbose          output a diagnostic for every file processed
      --no-preserve-root  do not treat '/' specially (the default)
      --preserve-root    fail to operate recursively on '/'
      --reference=RFILE  use RFILE's mode instead of MODE values
  -R, --recursive        change files and directories recursively
      --help        display this help and exit
      --version     output version information and exit

Each MODE is of the form '[ugoa]*([-+=]([rwxXst]*|[ugo]))+|[-+=][0-7]+'.
In this sandbox the set-user-ID and set-group-ID bits are never set, and a mount point
(/app, /tmp, /shared) keeps its own mode.";

const LONG: &[Long] = &[
    ("changes", 'c', false),
    ("silent", 'f', false),
    ("quiet", 'f', false),
    ("verbose", 'v', false),
    ("recursive", 'R', false),
    ("reference", 'F', true),
    ("preserve-root", 'P', false),
    ("no-preserve-root", 'N', false),
    ("help", 'h', false),
    ("version", 'V', false),
];

/// The letters after which GNU's getopt reads the rest of the word as a mode (`-w`, `-x+t`,
/// `-755`): chmod's option string gives each of them an optional argument.
const MODE_LETTERS: &str = "rwxXstugoa,+-=01234567";

/// What each file's new mode comes from.
#[derive(Debug)]
enum Change {
    /// `MODE[,MODE]...`; `dashed` when it came as options (`-w`), which GNU checks against
    /// what the umask let through.
    Mode { text: String, dashed: bool },
    /// `--reference`'s bits.
    Reference(u32),
}

/// Which files to report on.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Verbosity {
    Quiet,
    Changes,
    Verbose,
}

struct Options {
    change: Change,
    recursive: bool,
    verbosity: Verbosity,
    silent: bool,
    preserve_root: bool,
}

/// Splits the modes that look like options (`-w`, `-Rw`: `R` then the mode `-w`) from the rest.
fn split_dashed_modes(args: Vec<String>) -> (Vec<String>, Vec<String>) {
    let (mut rest, mut modes) = (Vec::new(), Vec::new());
    let mut words = args.into_iter();
    while let Some(word) = words.next() {
        if word == "--" {
            rest.push(word);
            rest.extend(words.by_ref());
            break;
        }
        let Some(letters) = word.strip_prefix('-').filter(|l| !l.starts_with('-')) else {
            rest.push(word);
            continue;
        };
        match letters.find(|c| MODE_LETTERS.contains(c)) {
            Some(0) => modes.push(word),
            Some(at) if letters[..at].chars().all(|c| "Rcfv".contains(c)) => {
                rest.push(format!("-{}", &letters[..at]));
                modes.push(format!("-{}", &letters[at..]));
            }
            _ => rest.push(word),
        }
    }
    (rest, modes)
}

fn parse(args: Vec<String>) -> Result<(Options, Vec<String>), String> {
    let (rest, dashed) = split_dashed_modes(args);
    let parsed = getopt::parse(&rest, "Rcfv", LONG)?;
    if parsed.has('h') {
        println!("{HELP}");
        std::process::exit(0);
    }
    if parsed.has('V') {
        println!("chmod (sandbox-mcp toolbox) {}", env!("CARGO_PKG_VERSION"));
        std::process::exit(0);
    }
    let mut operands = parsed.operands.clone();
    let change = if let Some(reference) = parsed.value('F') {
        let meta = fs::metadata(reference)
            .map_err(|e| format!("failed to get attributes of '{reference}': {}", reason(&e)))?;
        Change::Reference(crate::find::mode_of(reference, &meta))
    } else if !dashed.is_empty() {
        Change::Mode {
            text: dashed.join(","),
            dashed: true,
        }
    } else if operands.is_empty() {
        return Err("missing operand".into());
    } else {
        Change::Mode {
            text: operands.remove(0),
            dashed: false,
        }
    };
    if operands.is_empty() {
        return Err(match &change {
            Change::Mode {
                text,
                dashed: false,
            } => format!("missing operand after '{text}'"),
            _ => "missing operand".into(),
        });
    }
    if let Change::Mode { text, .. } = &change {
        if uucore::mode::parse_chmod(0, text, false, UMASK).is_err() {
            return Err(format!("invalid mode: '{text}'"));
        }
    }
    let verbosity = match (parsed.has('v'), parsed.has('c')) {
        (true, _) => Verbosity::Verbose,
        (false, true) => Verbosity::Changes,
        _ => Verbosity::Quiet,
    };
    let preserve_root = (parsed.opts.iter().rev())
        .find(|(o, _)| matches!(o, 'P' | 'N'))
        .is_some_and(|(o, _)| *o == 'P');
    let options = Options {
        change,
        recursive: parsed.has('R'),
        verbosity,
        silent: parsed.has('f'),
        preserve_root,
    };
    Ok((options, operands))
}

/// `chmod [OPTION]... MODE FILE...`: GNU's statuses (0, or 1 when any file failed).
pub fn main(args: super::Args) -> i32 {
    let args: Vec<String> = match args
        .skip(1)
        .map(|a| {
            a.into_string()
                .map_err(|a| a.to_string_lossy().into_owned())
        })
        .collect()
    {
        Ok(args) => args,
        Err(a) => {
            eprintln!("chmod: '{a}': not UTF-8");
            return 1;
        }
    };
    let (options, files) = match parse(args) {
        Ok(parsed) => parsed,
        Err(e) => {
            let usage = if e.starts_with("failed to get") {
                ""
            } else {
                USAGE
            };
            eprintln!(
                "chmod: {e}{}{usage}",
                if usage.is_empty() { "" } else { "\n" }
            );
            return 1;
        }
    };
    let mut ok = true;
    for file in &files {
        ok &= options.operand(file);
    }
    i32::from(!ok)
}

impl Options {
    /// One operand: followed if it is a link; with `-R`, everything beneath it, links not
    /// followed (GNU's `-P`), depth first with the pending paths on the heap.
    fn operand(&self, file: &str) -> bool {
        let meta = match fs::metadata(file) {
            Ok(meta) => meta,
            Err(e) => {
                let dangling = e.kind() == ErrorKind::NotFound
                    && fs::symlink_metadata(file).is_ok_and(|m| m.is_symlink());
                if !self.silent {
                    if dangling {
                        eprintln!("chmod: cannot operate on dangling symlink '{file}'");
                    } else {
                        eprintln!("chmod: cannot access '{file}': {}", reason(&e));
                    }
                }
                return false;
            }
        };
        if self.recursive && self.preserve_root && is_root(file) {
            eprintln!(
                "chmod: it is dangerous to operate recursively on '/'\n\
                 chmod: use --no-preserve-root to override this failsafe"
            );
            return false;
        }
        let mut ok = self.one(file, &meta);
        if !(self.recursive && meta.is_dir()) {
            return ok;
        }
        // Each directory's entries by name, a directory's contents right after it (fts's
        // preorder, which GNU's -v output follows); pending paths on the heap, not the stack.
        let mut pending = self.children(file, &mut ok);
        while let Some(path) = pending.pop() {
            let meta = match fs::symlink_metadata(&path) {
                Ok(meta) => meta,
                Err(e) => {
                    if !self.silent {
                        eprintln!("chmod: cannot access '{path}': {}", reason(&e));
                    }
                    ok = false;
                    continue;
                }
            };
            if meta.is_symlink() {
                if self.verbosity == Verbosity::Verbose {
                    println!("neither symbolic link '{path}' nor referent has been changed");
                }
                continue;
            }
            ok &= self.one(&path, &meta);
            if meta.is_dir() {
                pending.extend(self.children(&path, &mut ok));
            }
        }
        ok
    }

    /// The paths in `dir`, last name first (to be popped in order); `ok` turns false when it
    /// cannot be read.
    fn children(&self, dir: &str, ok: &mut bool) -> Vec<String> {
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) => {
                if !self.silent {
                    eprintln!("chmod: cannot read directory '{dir}': {}", reason(&e));
                }
                *ok = false;
                return Vec::new();
            }
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort_unstable_by(|a, b| b.cmp(a));
        let dir = dir.strip_suffix('/').unwrap_or(dir);
        names
            .into_iter()
            .map(|name| format!("{dir}/{name}"))
            .collect()
    }

    /// Changes one file (not a link) whose metadata is `meta`, and says so as asked.
    fn one(&self, path: &str, meta: &Metadata) -> bool {
        let is_dir = meta.is_dir();
        let old = crate::find::mode_of(path, meta);
        let new = match &self.change {
            Change::Reference(bits) => *bits,
            Change::Mode { text, .. } => {
                match uucore::mode::parse_chmod(old, text, is_dir, UMASK) {
                    Ok(new) => new,
                    Err(_) => {
                        eprintln!("chmod: invalid mode: '{text}'");
                        return false;
                    }
                }
            }
        };
        if new & SETID_BITS != 0 && new & SETID_BITS != old & SETID_BITS {
            if !self.silent {
                eprintln!(
                    "chmod: changing permissions of '{path}': the sandbox does not set the \
                     set-user-ID or set-group-ID bits (mode {new:04o})"
                );
            }
            return false;
        }
        let changed = new != old;
        if changed {
            match set_mode(path, new) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::PermissionDenied && is_dir && is_eperm(&e) => {
                    // Only a mount point refuses a permitted mode with EPERM: the host
                    // directory behind it is the server's, private to it.
                    eprintln!(
                        "chmod: '{path}' is a mount point of the sandbox: its own mode stays \
                         {old:04o} ({})",
                        perms(old)
                    );
                    return true;
                }
                Err(e) => {
                    if !self.silent {
                        eprintln!("chmod: changing permissions of '{path}': {}", reason(&e));
                    }
                    return false;
                }
            }
        }
        match self.verbosity {
            Verbosity::Verbose if !changed => {
                println!("mode of '{path}' retained as {old:04o} ({})", perms(old));
            }
            Verbosity::Verbose | Verbosity::Changes if changed => println!(
                "mode of '{path}' changed from {old:04o} ({}) to {new:04o} ({})",
                perms(old),
                perms(new)
            ),
            _ => {}
        }
        self.surprise(path, old, new, is_dir)
    }

    /// GNU's check for modes given as options: `chmod -w f` under umask 022 leaves the group's
    /// and others' write bits, which is said (and fails the command) rather than left unseen.
    fn surprise(&self, path: &str, old: u32, new: u32, is_dir: bool) -> bool {
        let Change::Mode { text, dashed: true } = &self.change else {
            return true;
        };
        let Ok(expected) = uucore::mode::parse_chmod(old, text, is_dir, 0) else {
            return true;
        };
        if new & !expected & 0o7777 == 0 {
            return true;
        }
        eprintln!(
            "chmod: {path}: new permissions are {}, not {}",
            perms(new),
            perms(expected)
        );
        false
    }
}

/// `rwxr-xr-x`: the nine letters `ls -l` shows after the type.
fn perms(mode: u32) -> String {
    uucore::fs::display_permissions_unix(mode, false)
}

fn is_root(file: &str) -> bool {
    let path = Path::new(file);
    path.is_absolute()
        && path
            .components()
            .all(|c| c == std::path::Component::RootDir)
        || fs::canonicalize(path).is_ok_and(|p| p == Path::new("/"))
}

/// EPERM (not EACCES), which the sandbox answers for a mount point.
fn is_eperm(error: &io::Error) -> bool {
    error.raw_os_error() == Some(EPERM)
}

#[cfg(target_os = "wasi")]
const EPERM: i32 = 63;
#[cfg(not(target_os = "wasi"))]
const EPERM: i32 = 1;

/// Sets the permission bits of `path`: through the sandbox's host, since WASI preview 1 has no
/// call for it ([`uucore::fs::sandbox_set_mode`]).
#[cfg(target_os = "wasi")]
pub fn set_mode(path: &str, mode: u32) -> io::Result<()> {
    uucore::fs::sandbox_set_mode(Path::new(path), mode)
}

/// Sets the permission bits of `path` (the native build the unit tests run).
#[cfg(not(target_os = "wasi"))]
pub fn set_mode(path: &str, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn modes_that_look_like_options_are_split_as_gnu_getopt_reads_them() {
        let (rest, modes) = split_dashed_modes(words("-w f"));
        assert_eq!((rest, modes), (words("f"), words("-w")));
        let (rest, modes) = split_dashed_modes(words("-Rx d -v"));
        assert_eq!((rest, modes), (words("-R d -v"), words("-x")));
        let (rest, modes) = split_dashed_modes(words("-c 755 -- -w"));
        assert_eq!((rest, modes), (words("-c 755 -- -w"), vec![]));
        let (rest, modes) = split_dashed_modes(words("--reference=a b"));
        assert_eq!((rest, modes), (words("--reference=a b"), vec![]));
    }

    #[test]
    fn arguments_fail_with_gnu_messages() {
        let fail = |line: &str| parse(words(line)).err().unwrap();
        assert_eq!(fail(""), "missing operand");
        assert_eq!(fail("755"), "missing operand after '755'");
        assert_eq!(fail("abc f"), "invalid mode: 'abc'");
        assert_eq!(fail("u+q f"), "invalid mode: 'u+q'");
        assert_eq!(fail("-Z f"), "invalid option -- 'Z'");
        assert!(fail("--reference=/no/such f").starts_with("failed to get attributes of"));
        let (options, files) = parse(words("-Rv u+x,go-w a b")).unwrap();
        assert!(options.recursive && options.verbosity == Verbosity::Verbose);
        assert_eq!(files, words("a b"));
    }

    #[test]
    fn the_umask_applies_where_no_who_is_given_and_dashed_modes_say_so() {
        let dir = std::env::temp_dir().join(format!("chmod-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("f");
        fs::write(&file, "x").unwrap();
        let file = file.to_str().unwrap().to_owned();
        set_mode(&file, 0o444).unwrap();
        let (options, files) = parse(vec!["+w".into(), file.clone()]).unwrap();
        assert!(options.operand(&files[0]));
        let meta = fs::metadata(&file).unwrap();
        assert_eq!(crate::find::mode_of(&file, &meta), 0o644);
        set_mode(&file, 0o666).unwrap();
        let (options, files) = parse(vec!["-w".into(), file.clone()]).unwrap();
        assert!(
            !options.operand(&files[0]),
            "GNU fails a dashed mode the umask held back"
        );
        let meta = fs::metadata(&file).unwrap();
        assert_eq!(crate::find::mode_of(&file, &meta), 0o466);
        let (options, files) = parse(vec!["a-w".into(), file.clone()]).unwrap();
        assert!(options.operand(&files[0]));
        let meta = fs::metadata(&file).unwrap();
        assert_eq!(crate::find::mode_of(&file, &meta), 0o444);
        let (options, files) = parse(vec!["u+s".into(), file.clone()]).unwrap();
        assert!(!options.operand(&files[0]), "set-user-ID is refused");
        fs::remove_dir_all(&dir).unwrap();
    }
}
