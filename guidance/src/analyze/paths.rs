//! File paths in code and what they mean in the sandbox: inside the workspace, under the
//! read-only `/data`, outside the sandbox altogether (host paths, home directories, Windows
//! paths, `..` above `/app`), or not a path at all. Advice for file errors classifies paths the
//! same way.

use std::collections::HashSet;

use super::super::clip;
use super::super::scan::{self, Kind};
use super::facts::CodeFacts;
use super::findings::Analysis;

/// What a path literal means in the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathClass {
    /// Under /app, /tmp, /data or /shared, or relative and staying under /app.
    Inside,
    /// Under /data (read-only).
    ReadOnly,
    /// An absolute host path, a home directory, a Windows path or `..` escaping /app.
    Outside,
    /// Not a path.
    NotAPath,
}

/// Classifies a string as a path. `in_file_call` says the string is an argument of a
/// file-system call, which makes any absolute path a path (otherwise only well-known host
/// roots count, so "/api/users" in a URL builder is not flagged).
pub(crate) fn classify_path(text: &str, in_file_call: bool) -> PathClass {
    const HOST_ROOTS: &[&str] = &[
        "/etc",
        "/home",
        "/Users",
        "/usr",
        "/var",
        "/root",
        "/opt",
        "/mnt",
        "/proc",
        "/sys",
        "/dev",
        "/bin",
        "/sbin",
        "/lib",
        "/srv",
        "/private",
        "/Volumes",
        "/workspace",
        "/content",
        "/kaggle",
        "/code",
        "/project",
        "/sandbox",
        "/mnt/data",
        "/media",
        "/run",
        "/boot",
    ];
    let text = text.trim();
    if text.is_empty() || text.len() > 4096 || text.contains('\n') {
        return PathClass::NotAPath;
    }
    let under = |root: &str| text == root || text.starts_with(&format!("{root}/"));
    if text.starts_with('/') {
        if text.starts_with("//") {
            return PathClass::NotAPath;
        }
        if under("/data") {
            return PathClass::ReadOnly;
        }
        if ["/app", "/tmp", "/shared"].iter().any(|r| under(r)) {
            return if escapes(text) {
                PathClass::Outside
            } else {
                PathClass::Inside
            };
        }
        if text.contains(' ') && !in_file_call {
            return PathClass::NotAPath;
        }
        if in_file_call || HOST_ROOTS.iter().any(|r| under(r)) {
            return PathClass::Outside;
        }
        return PathClass::NotAPath;
    }
    let bytes = text.as_bytes();
    let windows = bytes.len() >= 3
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && (bytes[2] == b'\\' || bytes[2] == b'/');
    if windows || text == "~" || text.starts_with("~/") {
        return PathClass::Outside;
    }
    if (in_file_call || text.contains('/')) && escapes(&format!("/app/{text}")) {
        return PathClass::Outside;
    }
    if in_file_call {
        PathClass::Inside
    } else {
        PathClass::NotAPath
    }
}

/// True when `..` components climb above the first directory of an absolute path.
fn escapes(path: &str) -> bool {
    let mut depth: i32 = 0;
    for part in path.split('/').filter(|p| !p.is_empty() && *p != ".") {
        if part == ".." {
            depth -= 1;
            if depth < 1 {
                return true;
            }
        } else {
            depth += 1;
        }
    }
    false
}

/// Functions whose string arguments are file paths (matched on the last part of the callee).
#[rustfmt::skip]
const FILE_CALLS: &[&str] = &[
    "open", "Path", "listdir", "scandir", "walk", "stat", "exists", "isfile", "isdir", "remove",
    "unlink", "rmdir", "mkdir", "makedirs", "rename", "replace", "chdir", "read_text", "write_text",
    "read_bytes", "write_bytes", "copy", "copyfile", "copytree", "rmtree", "move", "glob", "iglob",
    "read_csv", "connect", "loadFile", "writeFile", "readdir", "lstat", "realpath", "readJson",
    "writeJson", "readText", "writeText", "appendText", "fileExists", "listFiles", "fdopen",
    "ZipFile", "TarFile", "load_workbook", "getsize", "abspath",
];

/// Functions that write, delete or rename (for "/data is read-only").
#[rustfmt::skip]
const WRITE_CALLS: &[&str] = &[
    "write_text", "write_bytes", "remove", "unlink", "rmdir", "mkdir", "makedirs", "rename",
    "writeFile", "writeJson", "writeText", "appendText", "rmtree", "copy", "copyfile", "move",
];

/// Calls whose string arguments are file paths.
pub(crate) fn is_file_call(callee: &str) -> bool {
    let last = callee.rsplit('.').next().unwrap_or(callee);
    FILE_CALLS.contains(&last) || callee == "tarfile.open"
}

/// Calls that write: a write function, or `open` with a writing mode among the arguments.
fn is_write_call(callee: &str, args_text: &str) -> bool {
    let last = callee.rsplit('.').next().unwrap_or(callee);
    WRITE_CALLS.contains(&last)
        || (matches!(last, "open" | "fdopen")
            && ["'w", "\"w", "'a", "\"a", "'x", "\"x", "'r+", "\"r+"]
                .iter()
                .any(|m| args_text.contains(m)))
}

/// Reports file I/O, paths outside the sandbox and writes under the read-only `/data`.
pub(super) fn path_findings(facts: &CodeFacts<'_>, out: &mut Analysis) {
    if let Some((callee, line, _)) = facts
        .calls
        .iter()
        .find(|(callee, _, _)| is_file_call(callee) && callee != "connect")
    {
        out.find("file_io", Some(*line), format!("{callee}(...)"));
    }
    let mut reported = HashSet::new();
    for lit in &facts.strings {
        let in_file_call = lit.call.as_deref().is_some_and(is_file_call);
        let class = classify_path(lit.text, in_file_call);
        if matches!(class, PathClass::NotAPath | PathClass::Inside) || !reported.insert(lit.text) {
            continue;
        }
        if reported.len() > 20 {
            break;
        }
        match class {
            PathClass::Outside => outside_path(lit.text, lit.line, out),
            PathClass::ReadOnly if writes_on_line(facts, lit.line) => {
                let shown = clip(lit.text, 120);
                out.find(
                    "paths_outside_workspace",
                    Some(lit.line),
                    format!("writes to '{shown}'"),
                );
                out.block(format!(
                    "'{shown}' (line {}) is under /data, which is read-only (vendored packages); write to /app or /tmp instead",
                    lit.line
                ));
            }
            _ => {}
        }
    }
}

/// A path outside the sandbox at `line`: why it cannot work and the relative name to use.
fn outside_path(path: &str, line: u32, out: &mut Analysis) {
    let shown = clip(path, 120);
    out.find("paths_outside_workspace", Some(line), format!("'{shown}'"));
    let why = if path.starts_with("/mnt/data") {
        "there is no /mnt/data here; the workspace is /app"
    } else if path.starts_with('~') {
        "there is no home directory; the working directory is /app"
    } else if path.contains("..") {
        "`..` cannot climb out of /app"
    } else if path.as_bytes().get(1) == Some(&b':') {
        "Windows paths do not exist in the sandbox"
    } else {
        "host paths do not exist in the sandbox"
    };
    out.block(format!(
        "'{shown}' (line {line}) is outside the sandbox: {why}. Only /app (workspace and working directory), /tmp (scratch), /data (read-only) and /shared (if configured) exist"
    ));
    out.suggest(format!(
        "Put the file in /app and refer to it by a relative name, e.g. '{}'.",
        app_file_name(path)
    ));
}

/// True when a call on `line` writes (a write function, or `open` in a writing mode).
fn writes_on_line(facts: &CodeFacts<'_>, line: u32) -> bool {
    facts.calls.iter().any(|(callee, at, open)| {
        *at == line && {
            let close = facts.src.partner[*open];
            let args: String = if close == scan::NONE {
                String::new()
            } else {
                facts.src.tokens[*open..=close]
                    .iter()
                    .map(|t| match t.kind {
                        Kind::Str => format!("'{}'", t.text),
                        _ => t.text.to_owned(),
                    })
                    .collect()
            };
            is_write_call(callee, &args)
        }
    })
}

/// `data.csv` for `/home/me/data.csv`: the file name, as a relative path under /app.
pub(crate) fn app_file_name(path: &str) -> String {
    let name = path
        .rsplit(['/', '\\'])
        .find(|p| !p.is_empty() && *p != ".." && *p != "." && *p != "~")
        .unwrap_or("data.txt");
    clip(name, 60)
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn path_classes() {
        assert_eq!(classify_path("/app/x", false), PathClass::Inside);
        assert_eq!(classify_path("/app/../etc", false), PathClass::Outside);
        assert_eq!(classify_path("x/../../y", true), PathClass::Outside);
        assert_eq!(classify_path("x/../y", true), PathClass::Inside);
        assert_eq!(
            classify_path("/data/site-packages", false),
            PathClass::ReadOnly
        );
        assert_eq!(classify_path("/home/u/x", false), PathClass::Outside);
        assert_eq!(classify_path("/weird/x", true), PathClass::Outside);
        assert_eq!(classify_path("/weird/x", false), PathClass::NotAPath);
        assert_eq!(classify_path("~/x", false), PathClass::Outside);
        assert_eq!(classify_path("//cdn/x", true), PathClass::NotAPath);
        assert_eq!(classify_path("hello world", false), PathClass::NotAPath);
    }

    #[test]
    fn write_calls_and_file_names_table() {
        let writes = [
            ("open", "('x', 'w')", true),
            ("open", "('data.csv')", false),
            ("io.open", "('x', \"a+\")", true),
            ("os.remove", "('x')", true),
            ("shutil.copy", "('a', 'b')", true),
            ("json.load", "(f)", false),
        ];
        for (callee, args, want) in writes {
            assert_eq!(is_write_call(callee, args), want, "{callee}{args}");
        }
        let names = [
            ("/home/me/data.csv", "data.csv"),
            ("C:\\Users\\me\\a.txt", "a.txt"),
            ("~/", "data.txt"),
            ("../..", "data.txt"),
        ];
        for (path, want) in names {
            assert_eq!(app_file_name(path), want, "{path}");
        }
    }
}
