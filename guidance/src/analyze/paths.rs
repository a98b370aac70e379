//! File paths in code and what they mean in the sandbox: inside the workspace, under the
//! read-only `/data`, outside the sandbox altogether (host paths, home directories, Windows
//! paths, `..` above `/app`), or not a path at all. Advice for file errors classifies paths the
//! same way. The host roots and file functions it knows, and what it says, live in
//! `words/analysis.toml`.

use std::collections::HashSet;

use super::super::clip;
use super::super::scan::{self, Kind};
use super::facts::CodeFacts;
use super::findings::Analysis;
use crate::words::{self, say};

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
        if in_file_call || words::list("paths.host_roots").iter().any(|r| under(r)) {
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

/// Calls whose string arguments are file paths.
pub(crate) fn is_file_call(callee: &str) -> bool {
    let last = callee.rsplit('.').next().unwrap_or(callee);
    listed("paths.file_calls", last) || callee == "tarfile.open"
}

/// True when the list `id` holds `name`.
fn listed(id: &str, name: &str) -> bool {
    words::list(id).iter().any(|n| n == name)
}

/// Calls that write: a write function, or `open` with a writing mode among the arguments.
fn is_write_call(callee: &str, args_text: &str) -> bool {
    let last = callee.rsplit('.').next().unwrap_or(callee);
    listed("paths.write_calls", last)
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
                    say!("read_only_path.finding", path = shown),
                );
                out.block(say!(
                    "read_only_path.warning",
                    path = shown,
                    line = lit.line
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
    let why = words::text(if path.starts_with("/mnt/data") {
        "outside_path.why.mnt_data"
    } else if path.starts_with('~') {
        "outside_path.why.home"
    } else if path.contains("..") {
        "outside_path.why.dot_dot"
    } else if path.as_bytes().get(1) == Some(&b':') {
        "outside_path.why.windows"
    } else {
        "outside_path.why.host"
    });
    out.block(say!(
        "outside_path.warning",
        path = shown,
        line = line,
        why = why
    ));
    out.suggest(say!("outside_path.suggestion", name = app_file_name(path)));
}

/// True when a call on `line` writes (a write function, or `open` in a writing mode).
pub(crate) fn writes_on_line(facts: &CodeFacts<'_>, line: u32) -> bool {
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
