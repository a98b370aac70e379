//! `sandbox-files`: what the worker's shell language asks about files before any command runs,
//! answered here, inside the session's sandbox, where WASI resolves every path beneath the
//! session's preopened directories (so no host code stats or lists a guest path for the shell):
//!
//! - `glob PATTERN`: pathname expansion of one field. A backslash quotes the next character
//!   (the shell escapes what was quoted); `/` separates components. Prints the matches sorted,
//!   each followed by a NUL; nothing when none match.
//! - `stat -L|-P [--] PATH...`: one line per path, `KIND SIZE MODE MTIME` (`f d l p`, bytes,
//!   octal permission bits, nanoseconds since the epoch) or `-` when there is none; `-L` follows a
//!   last symbolic link, `-P` does not (`test -L`).
//! - `same A B`: status 0 when both name the same file (`test A -ef B`), else 1.
//! - `read MAX PATH`: the first MAX bytes of a regular file (`< file`, `source FILE`, a script
//!   the shell runs); status 3 when it holds more, 1 with the reason on stderr when it cannot
//!   be read.
//! - `write PATH` / `append PATH`: stdin written to a regular file, created if missing (mode
//!   0666 less the umask), truncated first by `write` (`>`, `>>`); 1 with the reason on stderr.
//!
//! `--mount GUEST` (before the operation, once per mount) names the session's mount points: a
//! directory above them (`/`) is not in any preopened directory, so its entries are the mounts'
//! next components, and it is a directory of mode 0555.
//!
//! This is no command of the toolbox's list: the shell runs it by name, and a guest that runs it
//! gets no more than WASI gives any command.

use std::ffi::OsString;
use std::path::Path;
use std::time::UNIX_EPOCH;

use crate::above_mounts;
use crate::glob::Glob;
use crate::guest_path::normalize;

/// The most paths one pattern expands to (as the shell's own limit was).
const MAX_MATCHES: usize = 100_000;

/// The session's mount points and the shell's working directory.
struct Layout {
    mounts: Vec<String>,
    cwd: String,
}

pub fn main(args: impl Iterator<Item = OsString>) -> i32 {
    let mut args = args.skip(1).map(|a| a.to_string_lossy().into_owned());
    let mut mounts = Vec::new();
    let op = loop {
        match args.next() {
            Some(flag) if flag == "--mount" => mounts.extend(args.next()),
            Some(op) => break op,
            None => return usage(),
        }
    };
    let cwd = std::env::var("PWD").unwrap_or_else(|_| "/".into());
    let layout = Layout { mounts, cwd };
    let rest: Vec<String> = args.collect();
    match (op.as_str(), rest.as_slice()) {
        ("glob", [pattern]) => {
            let mut out = Vec::new();
            for path in layout.expand(pattern) {
                out.extend_from_slice(path.as_bytes());
                out.push(0);
            }
            print_bytes(&out)
        }
        ("stat", [how, paths @ ..]) if how == "-L" || how == "-P" => {
            let paths = paths.strip_prefix(&["--".to_owned()]).unwrap_or(paths);
            let mut out = String::new();
            for path in paths {
                out.push_str(&layout.stat_line(path, how == "-L"));
                out.push('\n');
            }
            print_bytes(out.as_bytes())
        }
        ("write", [path]) => layout.write(path, false),
        ("append", [path]) => layout.write(path, true),
        ("read", [max, path]) => match max.parse() {
            Ok(max) => layout.read(path, max),
            Err(_) => usage(),
        },
        ("same", [a, b]) => {
            let id = |p: &str| uucore::fs::FileInformation::from_path(layout.host_path(p), true);
            match (id(a), id(b)) {
                (Ok(x), Ok(y)) if x == y => 0,
                _ => 1,
            }
        }
        _ => usage(),
    }
}

fn usage() -> i32 {
    eprintln!(
        "sandbox-files: [--mount GUEST]... glob PATTERN | stat -L|-P [--] PATH... | same A B \
         | read MAX PATH | write PATH | append PATH"
    );
    2
}

fn print_bytes(bytes: &[u8]) -> i32 {
    use std::io::Write;
    match std::io::stdout().write_all(bytes) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

/// `dir/name` without doubling the slash; `name` alone in the working directory (`""`).
fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// Whether the unescaped characters of `comp` make it a pattern.
fn has_glob(comp: &str) -> bool {
    let mut chars = comp.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '*' | '?' | '[' => return true,
            _ => {}
        }
    }
    false
}

/// `comp` with its quoting backslashes taken out.
fn unescape(comp: &str) -> String {
    let mut out = String::with_capacity(comp.len());
    let mut chars = comp.chars();
    while let Some(c) = chars.next() {
        out.push(if c == '\\' {
            chars.next().unwrap_or('\\')
        } else {
            c
        });
    }
    out
}

impl Layout {
    /// The absolute guest path of `path`.
    fn host_path(&self, path: &str) -> String {
        normalize(&self.cwd, path)
    }

    /// Whether the absolute `path` is in no mount (the sandbox answers for it, not WASI).
    fn is_virtual(&self, path: &str) -> bool {
        !self.mounts.iter().any(|m| above_mounts::within(path, m))
    }

    /// Whether `path` is `/` or a directory above a mount.
    fn is_virtual_dir(&self, abs: &str) -> bool {
        above_mounts::is_above(abs, self.mounts.iter().map(String::as_str))
    }

    /// The names in the directory `dir` (as the field spells it; `""` is the working
    /// directory), or nothing when it cannot be read.
    fn entries(&self, dir: &str) -> Vec<String> {
        let abs = self.host_path(if dir.is_empty() { "." } else { dir });
        if self.is_virtual(&abs) {
            return above_mounts::names_toward(&abs, self.mounts.iter().map(String::as_str));
        }
        let Ok(read) = std::fs::read_dir(&abs) else {
            return Vec::new();
        };
        read.filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    }

    /// Pathname expansion of one field, sorted; empty when nothing matches.
    fn expand(&self, field: &str) -> Vec<String> {
        let comps: Vec<&str> = field.split('/').filter(|c| !c.is_empty()).collect();
        let Some(last_glob) = comps.iter().rposition(|c| has_glob(c)) else {
            return Vec::new();
        };
        let mut paths = vec![String::from(if field.starts_with('/') { "/" } else { "" })];
        for comp in &comps[..=last_glob] {
            paths = if has_glob(comp) {
                self.matching(&paths, comp)
            } else {
                let name = unescape(comp);
                paths.iter().map(|p| join(p, &name)).collect()
            };
            if paths.is_empty() {
                return paths;
            }
        }
        // What follows the last pattern, and a trailing slash, keep only the paths that exist
        // (as directories, for the slash).
        let rest: Vec<String> = comps[last_glob + 1..].iter().map(|c| unescape(c)).collect();
        let rest = rest.join("/");
        let dir_only = field.ends_with('/');
        if !rest.is_empty() || dir_only {
            paths = paths
                .into_iter()
                .map(|p| if rest.is_empty() { p } else { join(&p, &rest) })
                .filter(|p| {
                    let abs = self.host_path(p);
                    if dir_only {
                        self.is_virtual_dir(&abs) || Path::new(&abs).is_dir()
                    } else {
                        self.is_virtual_dir(&abs) || std::fs::symlink_metadata(&abs).is_ok()
                    }
                })
                .map(|p| if dir_only { p + "/" } else { p })
                .collect();
        }
        paths.sort();
        paths
    }

    /// The entries of the directories `dirs` whose names the pattern `comp` matches (hidden
    /// ones only when it starts with a dot), at most [`MAX_MATCHES`].
    fn matching(&self, dirs: &[String], comp: &str) -> Vec<String> {
        let pattern = Glob::new(comp, false);
        let dotted = comp.strip_prefix('\\').unwrap_or(comp).starts_with('.');
        let mut found = Vec::new();
        for dir in dirs {
            for name in self.entries(dir) {
                let hidden = name.starts_with('.') && !dotted;
                if !hidden && pattern.matches(&name) {
                    found.push(join(dir, &name));
                }
            }
            if found.len() >= MAX_MATCHES {
                found.truncate(MAX_MATCHES);
                break;
            }
        }
        found
    }

    /// Writes the first `max` bytes of the regular file `path` to stdout: status 0, 3 when it
    /// holds more, 1 (the reason on stderr) when it cannot be read.
    fn read(&self, path: &str, max: u64) -> i32 {
        use std::io::Read;
        let abs = self.host_path(path);
        let fail = |why: String| {
            eprintln!("{why}");
            1
        };
        if self.is_virtual_dir(&abs) {
            return fail("Is a directory".into());
        }
        let meta = match std::fs::metadata(&abs) {
            Ok(meta) => meta,
            Err(e) => return fail(crate::own::reason(&e)),
        };
        if meta.is_dir() {
            return fail("Is a directory".into());
        }
        if !meta.is_file() {
            // The WASI layer would refuse to open it anyway (ENXIO): say what it is.
            return fail("not a regular file".into());
        }
        let mut data = Vec::new();
        let read = std::fs::File::open(&abs).and_then(|f| f.take(max + 1).read_to_end(&mut data));
        if let Err(e) = read {
            return fail(crate::own::reason(&e));
        }
        let more = data.len() as u64 > max;
        data.truncate(max as usize);
        match print_bytes(&data) {
            0 if more => 3,
            status => status,
        }
    }

    /// Writes stdin to the regular file `path`, created if missing, appended to or truncated
    /// first: status 0, or 1 with the reason on stderr.
    fn write(&self, path: &str, append: bool) -> i32 {
        let abs = self.host_path(path);
        if self.is_virtual_dir(&abs) {
            eprintln!("Is a directory");
            return 1;
        }
        let opened = std::fs::OpenOptions::new()
            .create(true)
            .append(append)
            .write(true)
            .truncate(!append)
            .open(&abs);
        let copied = opened.and_then(|mut file| {
            std::io::copy(&mut std::io::stdin().lock(), &mut file)?;
            std::io::Write::flush(&mut file)
        });
        match copied {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("{}", crate::own::reason(&e));
                1
            }
        }
    }

    /// `KIND SIZE MODE MTIME` of `path`, or `-`.
    fn stat_line(&self, path: &str, follow: bool) -> String {
        let abs = self.host_path(path);
        if self.is_virtual_dir(&abs) {
            return "d 0 555 0".into();
        }
        let meta = if follow {
            std::fs::metadata(&abs)
        } else {
            std::fs::symlink_metadata(&abs)
        };
        let Ok(meta) = meta else {
            return "-".into();
        };
        let kind = crate::find::kind_char(&meta);
        let mode = crate::find::mode_of(&abs, &meta);
        let mtime = (meta.modified().ok())
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        format!("{kind} {} {mode:o} {mtime}", meta.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Layout {
        Layout {
            mounts: vec![
                "/app".into(),
                "/data".into(),
                "/data/pycache".into(),
                "/tmp".into(),
            ],
            cwd: "/app".into(),
        }
    }

    #[test]
    fn above_the_mounts_is_a_directory_of_mount_names() {
        let l = layout();
        assert_eq!(l.entries("/"), ["app", "data", "tmp"]);
        assert!(l.is_virtual("/") && l.is_virtual("/etc") && !l.is_virtual("/app/x"));
        assert!(l.is_virtual_dir("/") && !l.is_virtual_dir("/etc"));
        assert!(!l.is_virtual("/data/pycache") && !l.is_virtual("/data"));
        assert_eq!(normalize("/app/sub", "../../../x/./y"), "/x/y");
    }

    #[test]
    fn quoting_and_components() {
        assert!(has_glob("*.py") && !has_glob("\\*.py") && has_glob("a\\*b*"));
        assert_eq!(unescape("a\\*b\\"), "a*b\\");
        assert_eq!(join("", "a"), "a");
        assert_eq!(join("/", "a"), "/a");
        assert_eq!(join("d", "a"), "d/a");
    }
}
