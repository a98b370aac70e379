//! Advice about files: paths outside the sandbox or on a read-only mount (`path_restriction`,
//! and runtime errors that are really about a path), files that do not exist in this session's
//! `/app`, and a full disk (`disk_quota`: the quota of all files, or the size cap of one).

use sandbox_protocol::{FLAVORS, Flavor, Language};
use serde_json::json;

use super::super::analyze::{PathClass, app_file_name, classify_path, is_file_call};
use super::super::docs::WORKSPACE;
use super::super::{NextCall, clip, fmt_bytes};
use super::draft::Draft;
use super::evidence::{quoted, tail, valid_session_id};

/// QuickJS file functions that return null (not an error) when the file is missing.
const JS_NULL_READERS: [&str; 4] = ["std.open", "std.loadFile", "readText", "readJson"];

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
        let path = path.as_deref().unwrap_or("that path");
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
        if class == PathClass::ReadOnly {
            let shared = path.starts_with("/shared");
            let root = if shared {
                "/shared (the shared volume, read-only and present only when the operator configured one)"
            } else {
                "/data (vendored packages)"
            };
            self.summary = format!("'{}' is on a read-only mount: {root}.", clip(path, 200));
            self.fix(format!("Write to /app instead: '{name}' (relative to the working directory /app) or '/app/{name}'; use /tmp for scratch files."));
            self.fix(if shared {
                "Files already in /shared can be read when the volume exists (`ls /shared` shows it); writes, deletes and renames there fail."
            } else {
                "Reading there works; only writes, deletes and renames fail."
            });
        } else {
            self.summary = format!(
                "'{}' is outside the sandbox's file system: only /app, /tmp, /data and /shared exist.",
                clip(path, 200)
            );
            self.fix(format!(
                "/app is the session's workspace and the working directory: copy what you need there and use a relative name such as '{name}' (or '/app/{name}')."
            ));
            self.fix("Only /app (read-write), /tmp (scratch, read-write), /data (read-only vendored packages) and /shared (if configured) exist; host paths such as /etc, /home, /Users, /mnt/data, C:\\ or ~, and `..` above /app, cannot be reached.");
            self.fix("The sandbox cannot see the user's machine: to work on a user's file, get its content and write it into /app from code first.");
        }
        self.next =
            Some(self.workspace_info_call("lists the files that exist in /app, with sizes"));
    }

    /// The path of a failed file operation, when the evidence is one.
    fn file_error_path(&self, lower: &str) -> Option<String> {
        let name = self.f.error_name.unwrap_or("");
        let file_error = matches!(
            name,
            "FileNotFoundError" | "PermissionError" | "IsADirectoryError" | "NotADirectoryError"
        ) || lower.contains("no such file")
            || lower.contains("enoent")
            || lower.contains("operation not permitted")
            || lower.contains("read-only file system");
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
        let js_null = self.f.language == Language::JavaScript
            && lower.contains("null")
            && self
                .code
                .calls
                .iter()
                .any(|(c, _, _)| JS_NULL_READERS.contains(&c.as_str()));
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
                        .is_some_and(|c| JS_NULL_READERS.contains(&c))
                })
                .map(|s| s.text.to_owned())
        })
    }

    /// A path inside `/app` that does not exist (yet) in this session.
    fn file_not_found(&mut self, path: &str) {
        let shown = clip(path, 200);
        self.summary =
            format!("'{shown}' does not exist in this session's /app (the working directory).");
        self.doc(WORKSPACE);
        self.fix(format!("List what is there first; '{shown}' is not in /app, so check the name's spelling, case and extension."));
        self.fix("Create the file before reading it: every session has its own /app, and a new, reset or expired session starts empty, so files written in another session are not here.");
        if self.f.state_lost {
            self.fix("The interpreter restarted, but files in /app survive restarts: a missing file was never written in this session.");
        }
        self.next =
            Some(self.workspace_info_call("lists the files that exist in /app, with sizes"));
    }

    pub(super) fn disk_quota(&mut self) {
        // RLIMIT_FSIZE (one file too large) or the quota of all files together.
        let evidence = self.evidence();
        let one_file = ["File too large", "EFBIG", "Errno 27"]
            .iter()
            .any(|e| evidence.contains(e));
        let disk = self.f.disk;
        self.summary = match (disk, one_file) {
            (Some(d), true) => format!(
                "A single file reached the largest size a file may have in this session, {} (all files together may hold {}).",
                fmt_bytes(d.file_cap_bytes),
                fmt_bytes(d.quota_bytes)
            ),
            (None, true) => "A single file reached the largest size a file may have in this session.".to_owned(),
            (Some(d), false) => format!(
                "The session's files reached its disk quota: /app and /tmp together may hold {} in {} files, directories and links, and now hold {} in {}.",
                fmt_bytes(d.quota_bytes),
                d.quota_files,
                fmt_bytes(d.used_bytes),
                d.used_files
            ),
            (None, false) => "A write hit the session's disk quota: the bytes or the number of files, directories and links in /app and /tmp together.".to_owned(),
        };
        self.doc(WORKSPACE);
        self.fix("See what uses the space: execute_command `du -sh /app /tmp` for the totals, `du -ab /app | sort -n | tail -20` for the largest files and directories, `find /app | wc -l` for the number of entries.");
        self.fix(if self.python() {
            "Delete what you no longer need, and write again: execute_command `rm -r /app/PATH`, or `os.remove(path)` / `shutil.rmtree(dir)` in code. Writes work again at once, in the same session, with your variables intact."
        } else {
            "Delete what you no longer need, and write again: execute_command `rm -r /app/PATH`, or `os.remove(path)` in code. Writes work again at once, in the same session, with your variables intact."
        });
        if self.python() {
            self.fix("Write less: aggregates instead of raw rows, or compress what you keep: `gzip.open('out.csv.gz', 'wt')` is often 5-10x smaller.");
        }
        self.fix("reset_workspace deletes every file in /app and /tmp at once; it also clears the session's variables and imports (irreversible).");
        self.larger_disk_flavors(one_file);
        self.next = if valid_session_id(self.f.session_id) {
            Some(NextCall::new(
                "execute_command",
                json!({"command": "du -sh /app /tmp", "session_id": self.f.session_id}),
                "shows how much /app and /tmp use, before deciding what to delete",
            ))
        } else {
            Some(self.workspace_info_call("see the files in the session and what uses the space"))
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
                    format!(
                        "\"{}\" ({} per file)",
                        fl.name(),
                        fmt_bytes(fl.disk_file_bytes)
                    )
                } else {
                    format!(
                        "\"{}\" ({} in {} files)",
                        fl.name(),
                        fmt_bytes(fl.disk_quota_bytes),
                        fl.disk_quota_files
                    )
                }
            })
            .collect();
        if !bigger.is_empty() {
            self.fix(format!(
                "A larger flavor allows more: create_session {{language, flavor}} with {}; it is a new session, so write or copy the files you need there.",
                bigger.join(" or ")
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
