//! Advice for a failed execution ("results that teach"): at least two concrete fixes that name
//! the module, path, line or numbers involved, the documentation pages to read, and when one
//! exists the tool call to make next, with valid arguments.
//!
//! The advice is derived from the error type and the raw evidence (exception name and message,
//! stderr, the code itself), so it also catches what the error type alone hides: a
//! `runtime_error` that is really a path outside the sandbox, a QuickJS `[value, error]` pair
//! used as a value, or a name lost in an interpreter restart.
//!
//! [`advise_with`] matches every [`ErrorType`] without a catch-all, so a new error type does
//! not compile until it has advice. Each family of failures lives in its own module and adds
//! its part to one `draft::Draft`: `syntax`, `names` (names and imports), `runtime`
//! (exceptions), `python2` (Python 2 habits), `files`, `limits` and `memory`, `js_host`,
//! `packages`, `session` (the service around the code), `silent` (bugs that show only as a
//! wrong value) and `command` (shell commands). Those that read the code's lines find its
//! indentation and blocks one way, through `code_lines`.

mod code_lines;
mod command;
mod draft;
mod evidence;
mod files;
mod frames;
mod js_host;
mod limits;
mod memory;
mod names;
mod notebook;
mod packages;
mod python2;
mod runtime;
mod session;
mod shell_habits;
mod silent;
mod stops;
mod syntax;

use sandbox_protocol::{ErrorType, Language, Runtime};
use schemars::JsonSchema;
use serde::Serialize;

use super::NextCall;
use crate::inventory::ImportFuelTable;
use draft::Draft;

/// What is known about a failed execution.
#[derive(Debug, Clone, Copy)]
pub struct ErrorFacts<'a> {
    pub language: Language,
    /// The runtime the session runs on (its language's default unless set).
    pub runtime: Runtime,
    pub error_type: ErrorType,
    /// Exception class or JS error name.
    pub error_name: Option<&'a str>,
    pub error_message: Option<&'a str>,
    pub stderr: &'a str,
    pub code: &'a str,
    /// `code` is an `execute_command` line (a shell script), not code in `language`.
    pub command: bool,
    pub session_id: &'a str,
    pub fuel_consumed: u64,
    pub fuel_budget: u64,
    /// Interpreter memory after the execution.
    pub memory_bytes: u64,
    /// The session's memory cap.
    pub memory_cap: u64,
    /// The timeout this execution ran under.
    pub timeout_secs: f64,
    pub stdout_truncated: bool,
    /// True when variables, functions and imports from earlier calls are gone.
    pub state_lost: bool,
    /// The session's disk quota and what its files use, for `disk_quota` (when known).
    pub disk: Option<DiskFacts>,
}

/// A session's disk limits and what its files in /app and /tmp hold, as counted after the
/// failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiskFacts {
    /// Most bytes /app and /tmp may hold together.
    pub quota_bytes: u64,
    /// Most files, directories and links /app and /tmp may hold together.
    pub quota_files: u64,
    pub used_bytes: u64,
    pub used_files: u64,
    /// The largest single file (RLIMIT_FSIZE).
    pub file_cap_bytes: u64,
}

impl<'a> ErrorFacts<'a> {
    /// Facts with the essentials; numbers zero and flags false until set.
    pub fn new(
        language: Language,
        error_type: ErrorType,
        code: &'a str,
        session_id: &'a str,
    ) -> Self {
        Self {
            language,
            runtime: Runtime::default_for(language),
            error_type,
            error_name: None,
            error_message: None,
            stderr: "",
            code,
            command: false,
            session_id,
            fuel_consumed: 0,
            fuel_budget: 0,
            memory_bytes: 0,
            memory_cap: 0,
            timeout_secs: 0.0,
            stdout_truncated: false,
            state_lost: false,
            disk: None,
        }
    }
}

/// Advice for one failure.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Advice {
    /// What went wrong, in this sandbox's terms.
    pub summary: String,
    /// Concrete fixes, most likely first (at least two).
    pub actionable_guidance: Vec<String>,
    /// Documentation resources to read (`sandbox://docs/...`).
    pub related_docs: Vec<String>,
    /// A ready tool call that moves things forward, when there is one.
    pub next_call: Option<NextCall>,
}

/// Advice for a failure, with import costs from the built-in tables (the standard library and
/// the interpreter's compiled-in packages).
pub fn advise(facts: &ErrorFacts) -> Advice {
    advise_with(facts, crate::inventory::import_costs())
}

/// Advice for a failure, with import costs from `table` (the built-in tables plus the vendored
/// packages).
pub fn advise_with(facts: &ErrorFacts, table: &ImportFuelTable) -> Advice {
    let mut d = Draft::new(facts, table);
    // No catch-all: a new error type does not compile until it has advice here.
    match facts.error_type {
        // The code itself (syntax, runtime, names and imports).
        ErrorType::SyntaxError => d.syntax_error(),
        ErrorType::RuntimeError => d.runtime_error(),
        ErrorType::MissingModule => d.missing_module(),
        // Files.
        ErrorType::PathRestriction => d.path_restriction(),
        ErrorType::DiskQuota => d.disk_quota(),
        // Limits.
        ErrorType::OutOfFuel => d.out_of_fuel(),
        ErrorType::Timeout => d.timeout(),
        ErrorType::OutputLimit => d.output_limit(),
        ErrorType::OutOfMemory => d.out_of_memory(),
        ErrorType::StackOverflow => d.stack_overflow(),
        // Packages.
        ErrorType::InvalidPackage => d.invalid_package(),
        ErrorType::NativePackage => d.native_package(),
        ErrorType::PackageNotFound => d.package_not_found(),
        ErrorType::InstallDisabled => d.install_disabled(),
        // The session and the service around the code.
        ErrorType::Cancelled => d.cancelled(),
        ErrorType::WorkerCrashed => d.worker_crashed(),
        ErrorType::ResourcesExhausted => d.resources_exhausted(),
        ErrorType::InvalidSession => d.invalid_session(),
        ErrorType::InvalidArgument => d.invalid_argument(),
        ErrorType::CommandFailed => d.command_failed(),
        ErrorType::SystemError => d.system_error(),
    }
    d.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What every advice promises: a summary, two fixes, and documentation pages that exist.
    /// (Each `next_call` is checked against the real tools' input schemas end to end.)
    fn check(advice: &Advice) {
        assert!(advice.actionable_guidance.len() >= 2, "{advice:#?}");
        assert!(!advice.summary.is_empty());
        assert!(
            advice
                .related_docs
                .iter()
                .all(|d| crate::docs::doc(d).is_some()),
            "{advice:?}"
        );
    }

    #[test]
    fn every_error_type_gets_two_fixes_for_both_languages() {
        let types = ErrorType::ALL;
        for language in [Language::Python, Language::JavaScript] {
            for error_type in types {
                for code in ["", "x = 1", "é\u{0}'\"`"] {
                    let mut f = ErrorFacts::new(language, error_type, code, "");
                    check(&advise(&f));
                    f.state_lost = true;
                    f.stdout_truncated = true;
                    check(&advise(&f));
                }
            }
        }
    }

    #[test]
    fn hostile_evidence_does_not_panic() {
        let junk = [
            "'",
            "''",
            "<cell ",
            "<cell 99999999999999999999>, line x",
            "No module named ",
            "\u{fffd}'é'",
            " is not defined",
            "<cell 1>:",
        ];
        for s in junk {
            for language in [Language::Python, Language::JavaScript] {
                let mut f = ErrorFacts::new(language, ErrorType::RuntimeError, s, s);
                f.error_name = Some(s);
                f.error_message = Some(s);
                f.stderr = s;
                check(&advise(&f));
                f.error_type = ErrorType::MissingModule;
                check(&advise(&f));
                f.error_type = ErrorType::SyntaxError;
                check(&advise(&f));
            }
        }
    }

    #[test]
    fn every_error_type_has_its_own_summary() {
        // No two error types share advice: each summary is specific to its failure.
        let mut summaries: Vec<(ErrorType, String)> = Vec::new();
        for error_type in ErrorType::ALL {
            let f = ErrorFacts::new(Language::Python, error_type, "x = 1", "s1");
            let summary = advise(&f).summary;
            if let Some((other, _)) = summaries.iter().find(|(_, s)| *s == summary) {
                panic!("{error_type} and {other} share the summary {summary:?}");
            }
            summaries.push((error_type, summary));
        }
    }

    /// A command line that timed out is run again as a command line, with a longer timeout:
    /// execute_code would read the shell text as the language's code.
    #[test]
    fn a_command_that_timed_out_is_rerun_as_a_command() {
        let line = "python long_job.py | tail -n 5";
        let mut f = ErrorFacts::new(Language::JavaScript, ErrorType::Timeout, line, "s1");
        f.timeout_secs = 30.0;
        f.command = true;
        let advice = advise(&f);
        let next = advice.next_call.clone().expect("a rerun");
        assert_eq!(next.tool, "execute_command");
        assert_eq!(next.arguments["command"], line);
        assert_eq!(next.arguments["timeout"], 60);
        assert!(next.arguments.get("code").is_none());
        assert!(next.reason.contains("command line"), "{}", next.reason);
        assert!(
            (advice.actionable_guidance.iter()).any(|fix| fix.contains("execute_command {")),
            "{advice:#?}"
        );
        f.command = false;
        let next = advise(&f).next_call.expect("a rerun");
        assert_eq!(
            (next.tool.as_str(), &next.arguments["code"]),
            ("execute_code", &line.into())
        );
    }
}
