//! The result of `execute_code` as a client sees it: the structured JSON (with its schema) and
//! the short text rendering for clients that only read text.

use sandbox_protocol::{ErrorKind, ExecutionReport, Language, StateAfterRestart};
use schemars::JsonSchema;
use serde::Serialize;

use crate::guidance::{Advice, FuelAnalysis, NextCall};
use crate::session::{Execution, Session};
use crate::worker::ExecFailure;

/// Longest stdout/stderr excerpt repeated in the text block; the structured result has it all.
const TEXT_EXCERPT: usize = 8 * 1024;

/// The structured result of `execute_code`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ExecuteCodeResult {
    /// True when the code ran to completion without an uncaught error.
    pub success: bool,
    /// What the code printed (UTF-8; invalid bytes replaced), up to the session's output cap.
    pub stdout: String,
    /// Error output, including the traceback of an uncaught error.
    pub stderr: String,
    /// 0 on success; the `sys.exit` status when the code gave one; otherwise 1.
    pub exit_code: i32,
    pub execution_time_ms: f64,
    /// Fuel (deterministic CPU units, about 10^10 per second) this execution used.
    pub fuel_consumed: u64,
    /// Fuel this execution was allowed.
    pub fuel_budget: u64,
    pub session_id: String,
    /// Identifies this execution (for cancel_execution).
    pub execution_id: String,
    pub language: String,
    /// Repr of the value of the last expression, as a notebook cell shows it; null when the
    /// code does not end in an expression or it evaluated to None/undefined.
    pub result: Option<String>,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    /// Null on success. One of: syntax_error, runtime_error, missing_module, timeout,
    /// cancelled, out_of_fuel, out_of_memory, stack_overflow, worker_crashed, system_error.
    pub error_type: Option<String>,
    /// Exception class or JS error name (e.g. ZeroDivisionError, TypeError), when known.
    pub error_name: Option<String>,
    /// One-line description of the failure.
    pub error_message: Option<String>,
    /// True when the supervisor had to kill the worker process (it did not answer in time);
    /// output produced before the kill is lost with it.
    pub worker_killed: bool,
    /// True when the interpreter was replaced during or right before this execution.
    pub session_restarted: bool,
    /// What the restart cost: "rolled_back" (state from before this call restored),
    /// "lost" (variables, functions and imports are gone; files in /app remain), or null.
    pub state_after_restart: Option<String>,
    /// Why the interpreter was restarted, when it was.
    pub restart_reason: Option<String>,
    /// Linear memory of the interpreter after the execution.
    pub memory_bytes: u64,
    /// When the session expires if left idle (RFC 3339).
    pub expires_at: String,
    /// With auto_persist_globals: what was restored into the fresh interpreter before this
    /// execution, and what could not be.
    pub state_restored: Option<crate::persist::Restored>,
    /// Fuel used against the budget: utilization %, status (efficient, moderate, warning,
    /// critical) and, from 75 %, a recommendation with likely causes.
    pub fuel_analysis: Option<FuelAnalysis>,
    /// What went wrong, in this sandbox's terms (on failure or truncated output).
    pub guidance_summary: Option<String>,
    /// Concrete fixes, most likely first (on failure or truncated output).
    pub actionable_guidance: Vec<String>,
    /// Documentation to read with resources/read (sandbox://docs/...).
    pub related_docs: Vec<String>,
    /// A ready tool call (name and arguments) that moves things forward, when there is one.
    pub next_call: Option<NextCall>,
}

/// The error type names of the result schema.
pub fn error_type_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Syntax => "syntax_error",
        ErrorKind::Runtime | ErrorKind::Exit => "runtime_error",
        ErrorKind::MissingModule => "missing_module",
        ErrorKind::Timeout => "timeout",
        ErrorKind::Cancelled => "cancelled",
        ErrorKind::OutOfFuel => "out_of_fuel",
        ErrorKind::OutOfMemory => "out_of_memory",
        ErrorKind::StackOverflow => "stack_overflow",
        ErrorKind::System => "system_error",
        ErrorKind::PathRestriction => "path_restriction",
        ErrorKind::DiskQuota => "disk_quota",
        ErrorKind::CommandFailed => "command_failed",
    }
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

impl ExecuteCodeResult {
    /// The result of an execution that could not start (no capacity, expired session, ...);
    /// also the blank that [`ExecuteCodeResult::new`] fills in.
    pub fn refused(
        session_id: &str,
        language: Language,
        error_type: &str,
        message: String,
    ) -> Self {
        Self {
            success: false,
            stdout: String::new(),
            stderr: String::new(),
            exit_code: 1,
            execution_time_ms: 0.0,
            fuel_consumed: 0,
            fuel_budget: 0,
            session_id: session_id.to_owned(),
            execution_id: String::new(),
            language: language.to_string(),
            result: None,
            stdout_truncated: false,
            stderr_truncated: false,
            error_type: Some(error_type.to_owned()),
            error_name: None,
            error_message: Some(message),
            worker_killed: false,
            session_restarted: false,
            state_after_restart: None,
            restart_reason: None,
            memory_bytes: 0,
            expires_at: String::new(),
            state_restored: None,
            fuel_analysis: None,
            guidance_summary: None,
            actionable_guidance: Vec::new(),
            related_docs: Vec::new(),
            next_call: None,
        }
    }

    /// Attaches advice (on failures and truncated output).
    pub fn with_advice(&mut self, advice: Advice) {
        self.guidance_summary = Some(advice.summary);
        self.actionable_guidance = advice.actionable_guidance;
        self.related_docs = advice.related_docs;
        self.next_call = advice.next_call;
    }

    /// Builds the client's view of one execution.
    pub fn new(session: &Session, execution: Execution) -> Self {
        let mut result = Self::refused(&session.id, session.language, "", String::new());
        result.error_type = None;
        result.error_message = None;
        result.fuel_budget = session.limits.fuel;
        result.execution_id = execution.execution_id;
        result.expires_at = session
            .expires_at()
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        result.state_restored = execution.restored;
        if let Some(why) = execution.replaced_worker {
            result.session_restarted = true;
            result.state_after_restart = Some("lost".into());
            result.restart_reason = Some(format!(
                "{why}; a fresh interpreter runs this call: variables, functions and imports from earlier calls are gone, files in /app are kept"
            ));
        }
        match execution.outcome {
            Ok(report) => result.fill_from_report(report),
            Err(ExecFailure::Killed { cancelled }) => {
                result.worker_killed = true;
                let (kind, what) = if cancelled {
                    ("cancelled", "was cancelled")
                } else {
                    ("timeout", "timed out")
                };
                result.error_type = Some(kind.into());
                result.error_message = Some(format!(
                    "the execution {what} and the worker did not respond, so it was killed; the next call starts a fresh interpreter (variables are lost, files in /app are kept)"
                ));
                result.state_after_restart = Some("lost".into());
            }
            Err(ExecFailure::CancelledWhileQueued) => {
                result.error_type = Some("cancelled".into());
                result.error_message = Some(
                    "cancelled while waiting for the session's previous execution; nothing ran and the session is unchanged".into(),
                );
            }
            Err(ExecFailure::Crashed { exit }) => {
                result.error_type = Some("worker_crashed".into());
                result.error_message = Some(format!(
                    "the sandbox worker died during the execution ({exit}); the next call starts a fresh interpreter (variables are lost, files in /app are kept)"
                ));
                result.state_after_restart = Some("lost".into());
            }
        }
        result
    }

    fn fill_from_report(&mut self, report: ExecutionReport) {
        self.success = report.error.is_none();
        self.stdout = lossy(&report.stdout);
        self.stderr = lossy(&report.stderr);
        self.stdout_truncated = report.stdout_truncated;
        self.stderr_truncated = report.stderr_truncated;
        self.exit_code = report.exit_code;
        self.execution_time_ms = report.duration_us as f64 / 1000.0;
        self.fuel_consumed = report.fuel_consumed;
        self.result = report.result;
        self.memory_bytes = report.memory_bytes;
        if let Some(error) = report.error {
            self.error_type = Some(error_type_name(error.kind).into());
            self.error_name = error.name;
            self.error_message = Some(error.message);
        }
        if let Some(restart) = report.restart {
            self.session_restarted = true;
            self.state_after_restart = Some(
                match restart.state {
                    StateAfterRestart::RolledBack => "rolled_back",
                    StateAfterRestart::Lost => "lost",
                }
                .into(),
            );
            self.restart_reason = Some(restart.reason);
        }
    }

    /// The text block: everything a text-only client needs, compactly.
    pub fn to_text(&self) -> String {
        let mut text = format!(
            "[{} session {} · {} · {:.1} ms · fuel {}]\n",
            self.language,
            self.session_id,
            match &self.error_type {
                None => "ok".to_owned(),
                Some(kind) => format!("ERROR {kind}"),
            },
            self.execution_time_ms,
            self.fuel_consumed
        );
        let mut section = |label: &str, body: &str, truncated: bool| {
            if body.is_empty() {
                return;
            }
            text.push_str(label);
            text.push_str(":\n");
            text.push_str(excerpt(body));
            if !body.ends_with('\n') {
                text.push('\n');
            }
            if truncated || body.len() > TEXT_EXCERPT {
                text.push_str("[... output truncated]\n");
            }
        };
        section("stdout", &self.stdout, self.stdout_truncated);
        section("stderr", &self.stderr, self.stderr_truncated);
        if let Some(value) = &self.result {
            text.push_str(&format!("result: {}\n", excerpt(value)));
        }
        if let Some(message) = &self.error_message {
            text.push_str(&format!("error: {message}\n"));
        }
        if let Some(reason) = &self.restart_reason {
            text.push_str(&format!("session restarted: {reason}\n"));
        }
        if let Some(restored) = &self.state_restored {
            text.push_str(&format!(
                "state restored: {} (not restored: {})\n",
                restored.restored.join(", "),
                restored.not_restored.join(", ")
            ));
        }
        if let Some(summary) = &self.guidance_summary {
            text.push_str(&format!("why: {summary}\n"));
        }
        for fix in self.actionable_guidance.iter().take(3) {
            text.push_str(&format!("fix: {fix}\n"));
        }
        if let Some(call) = &self.next_call {
            text.push_str(&format!("next call: {} {}\n", call.tool, call.arguments));
        }
        if let Some(fuel) = &self.fuel_analysis {
            if let Some(recommendation) = &fuel.recommendation {
                text.push_str(&format!("fuel: {recommendation}\n"));
            }
        }
        text
    }
}

/// At most [`TEXT_EXCERPT`] bytes, cut on a character boundary.
fn excerpt(text: &str) -> &str {
    if text.len() <= TEXT_EXCERPT {
        return text;
    }
    let mut cut = TEXT_EXCERPT;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    &text[..cut]
}
