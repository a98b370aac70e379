//! Advice about files: paths outside the sandbox or on a read-only mount (`path_restriction`,
//! and runtime errors that are really about a path), files that do not exist in this session's
//! `/app`, and a full disk (`disk_quota`: the quota of all files, or the size cap of one). The
//! words, and the texts that mark a failed file operation, live in `words/files.toml`.

use sandbox_protocol::{FLAVORS, Flavor, Language};
use serde_json::json;

use super::super::analyze::{
    PathClass, app_file_name, classify_path, is_file_call, writes_on_line,
};
use super::super::docs::WORKSPACE;
use super::super::{NextCall, clip, fmt_bytes};
use super::draft::Draft;
use super::evidence::{quoted, tail, valid_session_id};
use crate::words::{self, say};

impl Draft<'_, '_> {
    pub(super) fn path_restriction(&mut self) {
        let message = self.f.error_message.unwrap_or("");
        let path = quoted(message)
            .or_else(|| unquoted_refused_path(message))
            .or_else(|| quoted(tail(self.f.stderr, 2000)))
            .map(str::to_owned);
        // os.makedirs reports the root it stopped at ('/'), not the path the code named.
        let path = match path {
            Some(p) if p != "/" => Some(p),
            other => self.restricted_path_in_code().or(other),
        };
        let path = path
            .as_deref()
            .unwrap_or(words::text("errors.unknown_path"));
        // The server reports writes to read-only mounts the same way.
        let read_only = ["/data", "/shared"]
            .iter()
            .any(|root| path == *root || path.starts_with(&format!("{root}/")));
        let class = if read_only {
            PathClass::ReadOnly
        } else {
            PathClass::Outside
        };
        self.path_advice(path, class);
    }

    /// A runtime error that is a failed file operation: advice about the path, and true. False
    /// when the evidence is about something else.
    pub(super) fn file_failure(&mut self, lower: &str) -> bool {
        let Some(path) = self.file_error_path(lower) else {
            return false;
        };
        // A URL handed to a reader (`pd.read_json('https://...')`) is a download, not a file:
        // the network is the cause, whatever the reader says of the path.
        if is_url(&path) {
            self.rule("no_network");
            self.state_note();
            return true;
        }
        let in_call = true;
        // /shared is read-only (and mounted only when the operator configured a volume), so a
        // failed write there is never a file missing from /app.
        let shared = path == "/shared" || path.starts_with("/shared/");
        match classify_path(&path, in_call) {
            _ if shared => {
                self.path_advice(&path, PathClass::ReadOnly);
                self.state_note();
            }
            class @ (PathClass::Outside | PathClass::ReadOnly) => {
                self.path_advice(&path, class);
                self.state_note();
            }
            _ => self.file_not_found(&path),
        }
        true
    }

    /// The first path literal in the code that is outside the sandbox.
    fn outside_path_in_code(&self) -> Option<String> {
        self.code
            .strings
            .iter()
            .find(|s| {
                let in_call = s.call.as_deref().is_some_and(is_file_call);
                matches!(
                    classify_path(s.text, in_call),
                    PathClass::Outside | PathClass::ReadOnly
                )
            })
            .map(|s| s.text.to_owned())
    }

    /// The first path literal in the code that is outside the sandbox, on a read-only mount,
    /// or under /shared (read-only unless the operator made it writable).
    fn restricted_path_in_code(&self) -> Option<String> {
        self.outside_path_in_code().or_else(|| {
            self.code
                .strings
                .iter()
                .find(|s| s.text == "/shared" || s.text.starts_with("/shared/"))
                .map(|s| s.text.to_owned())
        })
    }

    /// A path outside the sandbox or on a read-only mount: where to put the file instead.
    fn path_advice(&mut self, path: &str, class: PathClass) {
        let name = app_file_name(path);
        self.doc_first(WORKSPACE);
        let rule = match class {
            PathClass::ReadOnly if path.starts_with("/shared") => "read_only.shared",
            PathClass::ReadOnly => "read_only.data",
            // A device (/dev/urandom, /dev/null as an operand): there is no /dev to copy from.
            _ if path.starts_with("/dev/") => "device",
            _ => "outside",
        };
        self.rule_with(rule, &[("path", &clip(path, 200)), ("name", &name)]);
        self.next = Some(self.workspace_info_call(words::text("errors.list_reason")));
    }

    /// The path of a failed file operation, when the evidence is one.
    fn file_error_path(&self, lower: &str) -> Option<String> {
        let name = self.f.error_name.unwrap_or("");
        let file_error = matches!(
            name,
            "FileNotFoundError" | "PermissionError" | "IsADirectoryError" | "NotADirectoryError"
        ) || words::list("errors.needles")
            .iter()
            .any(|needle| lower.contains(needle.as_str()));
        if file_error {
            let quoted_path = quoted(self.f.error_message.unwrap_or(""))
                .or_else(|| quoted(tail(self.f.stderr, 2000)))
                .map(str::to_owned);
            // os.makedirs reports the root it stopped at ('/'), not the path the code named.
            if quoted_path.as_deref().is_none_or(|p| p == "/") {
                return self.restricted_path_in_code().or(quoted_path);
            }
            return quoted_path;
        }
        // QuickJS: std.open / std.loadFile return null and the next call fails on it.
        let readers = words::list("errors.js_null_readers");
        let js_null = self.f.language == Language::JavaScript
            && lower.contains("null")
            && self.code.calls.iter().any(|(c, _, _)| readers.contains(c));
        if !js_null {
            return None;
        }
        self.outside_path_in_code().or_else(|| {
            self.code
                .strings
                .iter()
                .find(|s| {
                    s.call
                        .as_deref()
                        .is_some_and(|c| readers.iter().any(|r| r == c))
                })
                .map(|s| s.text.to_owned())
        })
    }

    /// A path inside `/app` that does not exist (yet) in this session.
    fn file_not_found(&mut self, path: &str) {
        if let Some(dir) = self.missing_directory(path) {
            self.fix(say!("not_found.directory", dir = clip(&dir, 200)));
        }
        self.rule_with("not_found", &[("path", &clip(path, 200))]);
        self.doc(WORKSPACE);
        if self.f.state_lost {
            self.fix(words::text("not_found.state_lost"));
        }
        self.next = Some(self.workspace_info_call(words::text("errors.list_reason")));
    }

    /// The directory a write into `path` needs and lacks: pandas names it ("non-existent
    /// directory: 'out'"); otherwise the directory part of a path the code writes to.
    fn missing_directory(&self, path: &str) -> Option<String> {
        let message = self.f.error_message.unwrap_or("");
        if message.to_lowercase().contains("non-existent directory") {
            return quoted(message).map(str::to_owned);
        }
        let relative = path.strip_prefix("/app/").unwrap_or(path);
        let (dir, _) = relative.rsplit_once('/')?;
        // Written where the path is named (`open('out/a.txt', 'w')`), or at the failing line
        // through a name that holds it (`p = Path('out/a.txt')` ... `p.write_text(...)`).
        // A path the code builds (`f'out/run_{i}.json'`) is named by no literal: a write at the
        // failing line is the evidence then.
        let failing_line = self.location().filter(|l| l.current).map(|l| l.line);
        let writes_there = failing_line.is_some_and(|line| writes_on_line(&self.code, line));
        let named = |text: &str| text == path || text == relative;
        let written = self
            .code
            .strings
            .iter()
            .filter(|s| named(s.text))
            .any(|s| writes_on_line(&self.code, s.line) || writes_there)
            || (writes_there && !self.code.strings.iter().any(|s| named(s.text)));
        (written && !dir.is_empty() && !dir.starts_with('/')).then(|| dir.to_owned())
    }

    pub(super) fn disk_quota(&mut self) {
        // RLIMIT_FSIZE (one file too large) or the quota of all files together.
        let evidence = self.evidence();
        let one_file = words::list("disk_quota.file_too_large")
            .iter()
            .any(|e| evidence.contains(e.as_str()));
        let disk = self.f.disk;
        self.summary = match (disk, one_file) {
            (Some(d), true) => say!(
                "disk_quota.one_file_summary",
                file_cap = fmt_bytes(d.file_cap_bytes),
                quota = fmt_bytes(d.quota_bytes),
            ),
            (None, true) => words::text("disk_quota.one_file_summary_unknown").to_owned(),
            (Some(d), false) => say!(
                "disk_quota.quota_summary",
                quota = fmt_bytes(d.quota_bytes),
                quota_files = d.quota_files,
                used = fmt_bytes(d.used_bytes),
                used_files = d.used_files,
            ),
            (None, false) => words::text("disk_quota.quota_summary_unknown").to_owned(),
        };
        self.doc(WORKSPACE);
        // Out of entries, not bytes (a file per item): fewer, larger files is the fix.
        if let Some(d) = disk.filter(|d| !one_file && d.quota_files > 0) {
            let entries_full = d.used_files + d.used_files / 100 >= d.quota_files;
            let bytes_left = d.used_bytes + d.quota_bytes / 10 < d.quota_bytes;
            if entries_full && bytes_left {
                self.fix(say!(
                    "disk_quota.too_many_files",
                    quota_files = d.quota_files
                ));
            }
        }
        self.rule(if self.python() {
            "disk_quota.python"
        } else {
            "disk_quota.javascript"
        });
        self.larger_disk_flavors(one_file);
        self.next = if valid_session_id(self.f.session_id) {
            Some(NextCall::new(
                "execute_command",
                json!({"command": "du -sh /app /tmp", "session_id": self.f.session_id}),
                words::text("disk_quota.du_reason"),
            ))
        } else {
            Some(self.workspace_info_call(words::text("disk_quota.space_reason")))
        };
    }

    /// The flavors whose per-file cap (`one_file`) or quota is larger than this session's.
    fn larger_disk_flavors(&mut self, one_file: bool) {
        let disk = self.f.disk;
        let bigger: Vec<String> = FLAVORS
            .iter()
            .filter(|fl| match disk {
                Some(d) if one_file => fl.disk_file_bytes > d.file_cap_bytes,
                Some(d) => {
                    fl.disk_quota_bytes > d.quota_bytes || fl.disk_quota_files > d.quota_files
                }
                // Unknown: the flavors above the default one.
                None => fl.flavor != Flavor::Small,
            })
            .map(|fl| {
                if one_file {
                    say!(
                        "disk_quota.flavor_file_cap",
                        flavor = fl.name(),
                        size = fmt_bytes(fl.disk_file_bytes),
                    )
                } else {
                    say!(
                        "disk_quota.flavor_quota",
                        flavor = fl.name(),
                        size = fmt_bytes(fl.disk_quota_bytes),
                        files = fl.disk_quota_files,
                    )
                }
            })
            .collect();
        if !bigger.is_empty() {
            self.fix(say!(
                "disk_quota.larger_flavors",
                flavors = bigger.join(" or ")
            ));
        }
    }
}

/// `/home/user` from the shell's "path_restriction: /home/user is outside the sandbox's
/// mounts or not writable", which does not quote the path.
fn unquoted_refused_path(message: &str) -> Option<&str> {
    let rest = message.split_once("path_restriction:")?.1.trim_start();
    let path = rest
        .split_once(" is ")
        .map_or(rest, |(path, _)| path)
        .trim();
    (path.starts_with('/') && !path.contains(char::is_whitespace) && path.len() <= 1024)
        .then_some(path)
}

/// True when `path` is a URL (`https://...`, `s3://...`): a scheme of letters, then `://`.
fn is_url(path: &str) -> bool {
    path.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}
