//! Advice about the session and the service around the code rather than the code itself: a
//! cancelled call, a crashed worker, no capacity, an unknown session, a refused argument, and
//! the server's own failures. Its words live in `words/session.toml`.

use serde_json::json;

use super::super::docs::{ERRORS, SESSIONS};
use super::super::{MAX_ECHOED_CODE, NextCall, clip, fmt_bytes};
use super::draft::Draft;
use super::evidence::valid_session_id;
use crate::words::{self, say};

impl Draft<'_, '_> {
    pub(super) fn cancelled(&mut self) {
        self.restart_explained = true;
        self.doc(SESSIONS);
        self.rule("cancelled");
        if self.f.state_lost {
            self.rule("cancelled_forced");
        }
        self.next = Some(self.workspace_info_call(words::text("cancelled.next")));
    }

    pub(super) fn worker_crashed(&mut self) {
        let f = self.f;
        self.rule("worker_crashed");
        self.restart_explained = true;
        self.doc(SESSIONS);
        if f.memory_cap > 0 && f.memory_bytes as f64 >= 0.9 * f.memory_cap as f64 {
            self.fix(say!(
                "worker_crashed.memory",
                used = fmt_bytes(f.memory_bytes),
                cap = fmt_bytes(f.memory_cap)
            ));
        }
        if let Some((name, line)) = self.code.recursion.first().cloned() {
            self.fix(say!("worker_crashed.recursion", name = name, line = line));
        }
        self.fix(words::text("worker_crashed.again"));
        self.next = self
            .rerun(None, words::text("worker_crashed.rerun"))
            .or_else(|| Some(self.list_files_call(words::text("worker_crashed.list_files"))));
    }

    pub(super) fn resources_exhausted(&mut self) {
        self.rule("resources_exhausted");
        self.doc(SESSIONS);
        self.next = Some(self.workspace_info_call(words::text("resources_exhausted.next")));
    }

    pub(super) fn invalid_session(&mut self) {
        let id = self.f.session_id;
        self.rule_with("invalid_session", &[("id", &clip(id, 64))]);
        self.restart_explained = true;
        self.doc(SESSIONS);
        if !valid_session_id(id) {
            self.fix(words::text("invalid_session.malformed"));
        }
        self.next = if !self.f.code.trim().is_empty() && self.f.code.len() <= MAX_ECHOED_CODE {
            Some(NextCall::new(
                "execute_code",
                json!({"code": self.f.code, "language": self.lang()}),
                words::text("invalid_session.run_default"),
            ))
        } else {
            Some(NextCall::new(
                "create_session",
                json!({"language": self.lang()}),
                words::text("invalid_session.create"),
            ))
        };
    }

    pub(super) fn system_error(&mut self) {
        self.rule_with("system_error", &[("message", &clip(self.message(), 200))]);
        self.doc(ERRORS);
        self.next = self
            .rerun(None, words::text("system_error.retry"))
            .or_else(|| {
                Some(NextCall::new(
                    "create_session",
                    json!({"language": self.lang()}),
                    words::text("system_error.create"),
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
            words::text("invalid_argument.unexplained").to_owned()
        } else {
            say!("invalid_argument.refused", message = message)
        };
        self.restart_explained = true;
        self.fix(match argument {
            Some(name) => say!("invalid_argument.named", name = name),
            None => words::text("invalid_argument.unnamed").to_owned(),
        });
        self.fix(words::text("invalid_argument.schema"));
    }
}
