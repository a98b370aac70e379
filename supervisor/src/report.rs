//! The result of `execute_code` as a client sees it: the structured JSON (with its schema), the
//! short text rendering for clients that only read text, and the pictures the code drew (sent
//! as image content; the JSON lists them without their bytes).

use sandbox_protocol::{ErrorType, ExecutionReport, Figure, Runtime, StateAfterRestart};
use schemars::JsonSchema;
use serde::Serialize;

use crate::guidance::{Advice, FuelAnalysis, NextCall};
use crate::session::{ExecFailure, Execution, Session};

/// Longest stdout/stderr excerpt repeated in the text block; the structured result has it all.
const TEXT_EXCERPT: usize = 8 * 1024;

/// The structured result of `execute_code` and `execute_command`. Lean for clients that
/// validate every result against the output schema: a field with nothing to say is left out
/// (never `null` or `[]`), so a trivial success carries only what is always meaningful.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ExecuteCodeResult {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
    pub exit_code: i32,
    pub execution_time_ms: f64,
    /// Deterministic CPU units.
    pub fuel_consumed: u64,
    pub fuel_budget: u64,
    pub session_id: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub execution_id: String,
    /// The session's runtime (python or javascript): the language of the call, so it is left
    /// out of the structured result and named in the text block.
    #[serde(skip)]
    #[schemars(skip)]
    pub runtime: String,
    /// The language of the code, to say which session a refusal was for.
    #[serde(skip)]
    #[schemars(skip)]
    pub language: String,
    /// Repr of the last expression's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    #[serde(skip_serializing_if = "is_false")]
    pub stdout_truncated: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub stderr_truncated: bool,
    /// Class of failure (output_limit may come with success).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_type: Option<ErrorType>,
    /// e.g. ZeroDivisionError, TypeError.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Killed for not answering: output lost.
    #[serde(skip_serializing_if = "is_false")]
    pub worker_killed: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub session_restarted: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_after_restart: Option<StateAfterRestart>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restart_reason: Option<String>,
    #[serde(skip_serializing_if = "is_zero")]
    pub memory_bytes: u64,
    /// From half the budget on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fuel_analysis: Option<FuelAnalysis>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guidance_summary: Option<String>,
    /// Fixes, most likely first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub actionable_guidance: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related_docs: Vec<String>,
    /// The call to make next (tool, arguments).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_call: Option<NextCall>,
    /// Sent as image content.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<FigureInfo>,
    /// Decisions the server made itself.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The pictures' bytes, sent as image content rather than in the JSON.
    #[serde(skip)]
    #[schemars(skip)]
    pub figure_data: Vec<Figure>,
    /// The files beneath `/app` the execution wrote, as the worker saw them (guest names).
    #[serde(skip)]
    #[schemars(skip)]
    pub written: Vec<String>,
}

fn is_false(value: &bool) -> bool {
    !*value
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// One picture of [`ExecuteCodeResult::figures`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FigureInfo {
    pub mime: String,
    pub bytes: usize,
}

/// A date as clients see it: RFC 3339 in UTC, to the second.
pub fn rfc3339(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

impl ExecuteCodeResult {
    /// The result of an execution that could not start (no capacity, expired session, ...);
    /// also the blank that [`ExecuteCodeResult::new`] fills in.
    pub fn refused(
        session_id: &str,
        runtime: Runtime,
        error_type: ErrorType,
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
            language: runtime.language().to_string(),
            runtime: runtime.to_string(),
            result: None,
            stdout_truncated: false,
            stderr_truncated: false,
            error_type: Some(error_type),
            error_name: None,
            error_message: Some(message),
            worker_killed: false,
            session_restarted: false,
            state_after_restart: None,
            restart_reason: None,
            memory_bytes: 0,
            fuel_analysis: None,
            guidance_summary: None,
            actionable_guidance: Vec::new(),
            related_docs: Vec::new(),
            next_call: None,
            figures: Vec::new(),
            notes: Vec::new(),
            figure_data: Vec::new(),
            written: Vec::new(),
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
        let mut result = Self::refused(
            &session.id,
            session.runtime(),
            ErrorType::SystemError,
            String::new(),
        );
        result.error_type = None;
        result.error_message = None;
        result.fuel_budget = execution.fuel_budget;
        result.execution_id = execution.execution_id;
        if let Some(why) = execution.replaced_worker {
            result.session_restarted = true;
            result.restart_reason = Some(if execution.missing_last_call {
                result.state_after_restart = Some(StateAfterRestart::RolledBack);
                format!(
                    "{why}; a new worker took over the session's state as the call before the last one left it: the last call's changes to variables, functions and imports are gone (its output was answered), files in /app are kept"
                )
            } else if execution.resumed {
                result.state_after_restart = Some(StateAfterRestart::Resumed);
                format!(
                    "{why}; a new worker took over the session's state: variables, functions and imports are as the last call that returned left them, files in /app are kept"
                )
            } else {
                result.state_after_restart = Some(StateAfterRestart::Lost);
                format!(
                    "{why}; a fresh interpreter runs this call: variables, functions and imports from earlier calls are gone, files in /app are kept"
                )
            });
        }
        match execution.outcome {
            Ok(report) => result.fill_from_report(report),
            Err(ExecFailure::Killed { cancelled }) => {
                result.worker_killed = true;
                let (kind, what) = if cancelled {
                    (ErrorType::Cancelled, "was cancelled")
                } else {
                    (ErrorType::Timeout, "timed out")
                };
                result.error_type = Some(kind);
                result.error_message = Some(format!(
                    "the execution {what} and the worker did not respond, so it was killed; the next call continues from the session's state before this one (its changes to variables are lost, files in /app are kept)"
                ));
                result.state_after_restart = Some(StateAfterRestart::RolledBack);
            }
            Err(ExecFailure::CancelledWhileQueued) => {
                result.error_type = Some(ErrorType::Cancelled);
                result.error_message = Some(
                    "cancelled while waiting for the session's previous execution; nothing ran and the session is unchanged".into(),
                );
            }
            Err(ExecFailure::Crashed { exit }) => {
                result.error_type = Some(ErrorType::WorkerCrashed);
                result.error_message = Some(format!(
                    "the sandbox worker died during the execution ({exit}); the next call continues from the session's state before this one (its changes to variables are lost, files in /app are kept)"
                ));
                result.state_after_restart = Some(StateAfterRestart::RolledBack);
            }
            Err(ExecFailure::NotTaken { exit }) => {
                result.error_type = Some(ErrorType::WorkerCrashed);
                result.error_message = Some(format!(
                    "every fresh sandbox worker died before it could start the execution (the last: {exit}), so none of it ran; the server may be short of memory or processes: call list_runtimes for its health, then retry"
                ));
                result.state_after_restart = Some(StateAfterRestart::Lost);
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
            self.error_type = Some(ErrorType::from(error.kind));
            self.error_name = error.name;
            self.error_message = Some(error.message);
        }
        if let Some(restart) = report.restart {
            self.session_restarted = true;
            self.state_after_restart = Some(restart.state);
            self.restart_reason = Some(restart.reason);
        }
        self.figures = report
            .figures
            .iter()
            .map(|f| FigureInfo {
                mime: f.mime.clone(),
                bytes: f.data.len(),
            })
            .collect();
        self.figure_data = report.figures;
        self.written = report.written;
    }

    /// The text block: everything a text-only client needs, compactly.
    pub fn to_text(&self) -> String {
        let mut text = format!(
            "[{} session {} · {} · {:.1} ms · fuel {}]\n",
            self.runtime,
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
        if !self.figures.is_empty() {
            let sizes: Vec<String> = self
                .figures
                .iter()
                .map(|f| format!("{} {} bytes", f.mime, f.bytes))
                .collect();
            text.push_str(&format!(
                "figures: {} attached as images ({})\n",
                self.figures.len(),
                sizes.join(", ")
            ));
        }
        for note in &self.notes {
            text.push_str(&format!("note: {note}\n"));
        }
        if let Some(reason) = &self.restart_reason {
            text.push_str(&format!("session restarted: {reason}\n"));
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
        if let Some(fuel) = &self.fuel_analysis
            && let Some(recommendation) = &fuel.recommendation
        {
            text.push_str(&format!("fuel: {recommendation}\n"));
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

#[cfg(test)]
mod tests {
    use sandbox_protocol::{GuestError, Restart};

    use super::*;
    use crate::guidance::NextCall;

    /// A successful report; tests change what they look at.
    fn report() -> ExecutionReport {
        ExecutionReport {
            execution_id: "exec-1".into(),
            stdout: b"out\n".to_vec(),
            stderr: Vec::new(),
            stdout_truncated: false,
            stderr_truncated: false,
            exit_code: 0,
            result: Some("42".into()),
            error: None,
            fuel_consumed: 1234,
            duration_us: 1500,
            memory_bytes: 1 << 20,
            restart: None,
            figures: Vec::new(),
            written: Vec::new(),
            state_follows: false,
        }
    }

    fn filled(report: ExecutionReport) -> ExecuteCodeResult {
        let mut result =
            ExecuteCodeResult::refused("s", Runtime::Python, ErrorType::SystemError, String::new());
        result.error_type = None;
        result.error_message = None;
        result.fill_from_report(report);
        result
    }

    #[test]
    fn the_result_schema_enumerates_every_error_type() {
        let schema = serde_json::to_string(&schemars::schema_for!(ExecuteCodeResult)).unwrap();
        for t in ErrorType::ALL {
            assert!(
                schema.contains(&format!("\"{t}\"")),
                "{t} is not in the schema: {schema}"
            );
        }
    }

    #[test]
    fn a_refusal_is_a_failure_with_nothing_run() {
        let refused = ExecuteCodeResult::refused(
            "s1",
            Runtime::JavaScript,
            ErrorType::ResourcesExhausted,
            "no capacity".into(),
        );
        assert!(!refused.success);
        assert_eq!(refused.exit_code, 1);
        assert_eq!(
            (refused.language.as_str(), refused.runtime.as_str()),
            ("javascript", "javascript")
        );
        assert_eq!(refused.session_id, "s1");
        assert_eq!(refused.error_type, Some(ErrorType::ResourcesExhausted));
        assert_eq!(refused.error_message.as_deref(), Some("no capacity"));
        assert_eq!((refused.fuel_consumed, refused.fuel_budget), (0, 0));
        assert!(!refused.session_restarted && refused.state_after_restart.is_none());
        assert_eq!(
            refused.to_text(),
            "[javascript session s1 · ERROR resources_exhausted · 0.0 ms · fuel 0]\nerror: no capacity\n"
        );
    }

    #[test]
    fn a_report_fills_the_result() {
        let ok = filled(report());
        assert!(ok.success);
        assert_eq!(ok.stdout, "out\n");
        assert_eq!(ok.result.as_deref(), Some("42"));
        assert_eq!(ok.execution_time_ms, 1.5);
        assert_eq!(ok.fuel_consumed, 1234);
        assert_eq!(ok.memory_bytes, 1 << 20);
        assert_eq!((ok.error_type, ok.exit_code), (None, 0));
        assert!(!ok.session_restarted && ok.restart_reason.is_none());

        let failed = filled(ExecutionReport {
            stdout: b"caf\xc3".to_vec(),
            stderr: b"\xff\xfeboom\n".to_vec(),
            stdout_truncated: true,
            exit_code: 3,
            result: None,
            error: Some(GuestError {
                kind: sandbox_protocol::ErrorKind::Exit,
                name: Some("SystemExit".into()),
                message: "exit 3".into(),
            }),
            ..report()
        });
        assert!(!failed.success);
        assert_eq!(
            failed.stdout, "caf\u{fffd}",
            "a cut character is replaced, not dropped"
        );
        assert_eq!(failed.stderr, "\u{fffd}\u{fffd}boom\n");
        assert!(failed.stdout_truncated && !failed.stderr_truncated);
        assert_eq!(failed.exit_code, 3);
        assert_eq!(failed.error_type, Some(ErrorType::RuntimeError));
        assert_eq!(failed.error_name.as_deref(), Some("SystemExit"));
        assert_eq!(failed.error_message.as_deref(), Some("exit 3"));
    }

    #[test]
    fn figures_are_listed_without_their_bytes_and_named_in_the_text() {
        let png = |n: u8| Figure {
            mime: "image/png".into(),
            data: vec![0x89, b'P', b'N', b'G', n],
        };
        let mut result = filled(ExecutionReport {
            figures: vec![png(1), png(2)],
            ..report()
        });
        result.runtime = Runtime::Python.to_string();
        result.notes.push("a note".into());
        assert_eq!(result.figure_data, [png(1), png(2)]);
        let json = serde_json::to_value(&result).unwrap();
        assert_eq!(
            json["figures"],
            serde_json::json!([
                { "mime": "image/png", "bytes": 5 },
                { "mime": "image/png", "bytes": 5 },
            ])
        );
        assert!(json.get("figure_data").is_none(), "the bytes are not JSON");
        assert!(json.get("runtime").is_none(), "the call's language says it");
        assert!(json.get("language").is_none(), "the runtime names it");
        assert_eq!(
            result.to_text(),
            "[python session s · ok · 1.5 ms · fuel 1234]\nstdout:\nout\nresult: 42\nfigures: 2 attached as images (image/png 5 bytes, image/png 5 bytes)\nnote: a note\n"
        );
        let schema = serde_json::to_value(schemars::schema_for!(ExecuteCodeResult)).unwrap();
        assert!(schema["properties"].get("figure_data").is_none());
        assert!(schema["properties"].get("figures").is_some());
    }

    #[test]
    fn restarts_say_what_the_state_became() {
        for (state, name) in [
            (StateAfterRestart::RolledBack, "rolled_back"),
            (StateAfterRestart::Lost, "lost"),
        ] {
            let result = filled(ExecutionReport {
                restart: Some(Restart {
                    reason: "trapped".into(),
                    state,
                }),
                ..report()
            });
            assert!(result.session_restarted);
            assert_eq!(result.state_after_restart, Some(state));
            assert_eq!(
                serde_json::to_value(&result).unwrap()["state_after_restart"],
                name
            );
            assert_eq!(result.restart_reason.as_deref(), Some("trapped"));
            assert!(result.to_text().contains("session restarted: trapped\n"));
        }
    }

    #[test]
    fn the_text_block_is_short_and_cut_on_character_boundaries() {
        // 8 KiB of output whose last character straddles the excerpt's end.
        let long = format!("{}é{}", "a".repeat(TEXT_EXCERPT - 1), "b".repeat(100));
        let mut result = filled(ExecutionReport {
            stdout: long.clone().into_bytes(),
            stderr: b"warn".to_vec(),
            ..report()
        });
        let text = result.to_text();
        assert!(text.starts_with("[python session s · ok · 1.5 ms · fuel 1234]\nstdout:\n"));
        let shown = text
            .strip_prefix("[python session s · ok · 1.5 ms · fuel 1234]\nstdout:\n")
            .unwrap();
        assert_eq!(
            shown,
            format!(
                "{}\n[... output truncated]\nstderr:\nwarn\nresult: 42\n",
                "a".repeat(TEXT_EXCERPT - 1)
            ),
            "the excerpt stops before the character it would cut"
        );
        assert_eq!(excerpt(&long).len(), TEXT_EXCERPT - 1);
        assert_eq!(excerpt("short"), "short");
        let exact = "x".repeat(TEXT_EXCERPT);
        assert_eq!(excerpt(&exact), exact);

        // A truncated stream is flagged even when its excerpt is whole; advice shows three
        // fixes at most, then the next call.
        result.stdout = "tiny".into();
        result.stdout_truncated = true;
        result.stderr.clear();
        result.with_advice(Advice {
            summary: "too much output".into(),
            actionable_guidance: ["one", "two", "three", "four"].map(String::from).to_vec(),
            related_docs: vec!["sandbox://docs/errors".into()],
            next_call: Some(NextCall {
                tool: "execute_code".into(),
                arguments: serde_json::json!({ "code": "1" }),
                reason: "retry".into(),
            }),
        });
        assert_eq!(result.guidance_summary.as_deref(), Some("too much output"));
        assert_eq!(result.related_docs, ["sandbox://docs/errors"]);
        assert_eq!(
            result.to_text(),
            "[python session s · ok · 1.5 ms · fuel 1234]\nstdout:\ntiny\n[... output truncated]\nresult: 42\nwhy: too much output\nfix: one\nfix: two\nfix: three\nnext call: execute_code {\"code\":\"1\"}\n"
        );
    }
}
