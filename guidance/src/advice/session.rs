//! Advice about the session and the service around the code rather than the code itself: a
//! cancelled call, a crashed worker, no capacity, an unknown session, a refused argument, and
//! the server's own failures.

use serde_json::json;

use super::super::docs::{ERRORS, SESSIONS};
use super::super::{MAX_ECHOED_CODE, NextCall, clip, fmt_bytes};
use super::draft::Draft;
use super::evidence::valid_session_id;

impl Draft<'_, '_> {
    pub(super) fn cancelled(&mut self) {
        self.summary = if self.f.state_lost {
            "The execution was cancelled by the client and had to be stopped by force: variables from earlier calls are gone; files in /app remain.".to_owned()
        } else {
            "The execution was cancelled by the client; the session kept its state.".to_owned()
        };
        self.restart_explained = true;
        self.doc(SESSIONS);
        self.fix("Re-run the code when ready; if it was cancelled for taking too long, check it first with get_execution_guidance {code, language} for endless loops and expensive imports.");
        self.fix("Make long work resumable: process in chunks across calls and keep progress in a variable or a file in /app.");
        if self.f.state_lost {
            self.fix("Re-run your setup code (imports, data loading): the interpreter is fresh.");
        }
        self.next =
            Some(self.workspace_info_call("see which variables and files the session still has"));
    }

    pub(super) fn worker_crashed(&mut self) {
        let f = self.f;
        self.summary = "The sandbox process died during the call. The next call starts a fresh interpreter: variables, functions and imports are gone; files in /app are kept.".to_owned();
        self.restart_explained = true;
        self.doc(SESSIONS);
        self.fix("Re-run your setup code (imports, variable definitions, data loading) before continuing.");
        if f.memory_cap > 0 && f.memory_bytes as f64 >= 0.9 * f.memory_cap as f64 {
            self.fix(format!(
                "Memory was at {} of the {} cap when it died: reduce memory use (process in chunks) or use flavor \"medium\"/\"large\".",
                fmt_bytes(f.memory_bytes),
                fmt_bytes(f.memory_cap)
            ));
        }
        if let Some((name, line)) = self.code.recursion.first().cloned() {
            self.fix(format!("`{name}` (line {line}) is recursive: very deep recursion can crash the interpreter; rewrite it as a loop."));
        }
        self.fix("If the same code crashes again, it is the cause: split it into smaller calls to find the part that fails.");
        self.next = self.rerun(None, "the session restarts with a fresh interpreter on this call; files in /app are still there").or_else(|| {
            Some(self.list_files_call("check that the session is back; files in /app survived"))
        });
    }

    pub(super) fn resources_exhausted(&mut self) {
        self.summary =
            "The server is at capacity (sessions or memory) and could not run this call now."
                .to_owned();
        self.doc(SESSIONS);
        self.fix("Destroy sessions you no longer need with destroy_session {session_id}: each one holds memory until it is destroyed or expires.");
        self.fix("Retry in a few seconds: idle sessions expire and running calls finish.");
        self.fix("Ask for less: flavor \"small\" or a lower memory_bytes, and reuse your default session (omit session_id) instead of creating new ones.");
        self.next = Some(self.workspace_info_call(
            "see the session's state before deciding which sessions to destroy",
        ));
    }

    pub(super) fn invalid_session(&mut self) {
        let id = self.f.session_id;
        self.summary = format!(
            "Session '{}' does not exist: it was never created, was destroyed, or expired after being idle (its files were deleted).",
            clip(id, 64)
        );
        self.restart_explained = true;
        self.doc(SESSIONS);
        self.fix("Run without session_id to use your default session for the language, or create a new one with create_session.");
        self.fix("State does not carry over: re-run the setup code and recreate the files the old session had.");
        if !valid_session_id(id) {
            self.fix("Session ids are 1-64 letters, digits, '-' or '_', starting with a letter or digit.");
        }
        self.next = if !self.f.code.trim().is_empty() && self.f.code.len() <= MAX_ECHOED_CODE {
            Some(NextCall::new(
                "execute_code",
                json!({"code": self.f.code, "language": self.lang()}),
                "run the code in your default session",
            ))
        } else {
            Some(NextCall::new(
                "create_session",
                json!({"language": self.lang()}),
                "a new session to run the code in",
            ))
        };
    }

    pub(super) fn system_error(&mut self) {
        self.summary = format!(
            "The sandbox failed internally ({}); this is not a bug in your code.",
            clip(self.message(), 200)
        );
        self.doc(ERRORS);
        self.fix("Retry the call once: most internal failures are transient.");
        self.fix("If it fails again, use a new session (create_session) and re-run the setup code there.");
        self.next = self.rerun(None, "retry once").or_else(|| {
            Some(NextCall::new(
                "create_session",
                json!({"language": self.lang()}),
                "a fresh session",
            ))
        });
    }

    // -----------------------------------------------------------------------------------------

    pub(super) fn invalid_argument(&mut self) {
        let message = clip(self.message(), 200);
        // The server writes `argument: why` for one argument.
        let argument = message
            .split_once(':')
            .map(|(name, _)| name.trim())
            .filter(|name| {
                !name.is_empty()
                    && name.len() <= 40
                    && name.chars().all(|c| c.is_ascii_lowercase() || c == '_')
            });
        self.summary = if message.is_empty() {
            "The call was refused: an argument is missing, of the wrong type or out of bounds. Nothing ran; the session is unchanged.".to_owned()
        } else {
            format!(
                "The call was refused because of an argument: {message}. Nothing ran; the session is unchanged."
            )
        };
        self.restart_explained = true;
        self.fix(match argument {
            Some(name) => format!("Correct `{name}` as the message says and send the same call again; the other arguments can stay as they are."),
            None => "Correct the argument the message names and send the same call again; the other arguments can stay as they are.".to_owned(),
        });
        self.fix("Each argument's type and bounds are in the tool's input schema; leave optional arguments out to get the defaults.");
    }
}
