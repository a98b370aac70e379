//! Helpers for the advice tests: facts with a session, a budget and a memory cap; advice that
//! must always hold (a summary, two fixes, known docs, a `next_call` whose arguments the tool
//! accepts); and a search through the advice's text.

use sandbox_protocol::{ErrorType, Language};

use super::super::{MAX_MEMORY_BYTES, MAX_SUGGESTED_FUEL, MAX_TIMEOUT_SECS, NextCall};
use super::evidence::valid_session_id;
use super::{Advice, ErrorFacts, advise};

/// The tools' argument schemas, for checking every `next_call`.
pub(super) fn check_arguments(call: &NextCall) {
    let args = call
        .arguments
        .as_object()
        .unwrap_or_else(|| panic!("{call:?}: arguments must be an object"));
    let (required, optional): (&[&str], &[&str]) = match call.tool.as_str() {
        "execute_code" => (&["code", "language"], &["session_id", "timeout"]),
        "execute_command" => (&["command"], &["session_id", "timeout"]),
        "create_session" => (
            &["language"],
            &[
                "session_id",
                "flavor",
                "fuel_budget",
                "memory_bytes",
                "timeout",
                "ttl_seconds",
                "auto_persist_globals",
                "runtime",
            ],
        ),
        "destroy_session" => (&["session_id"], &[]),
        "reset_workspace" | "get_workspace_info" => (&[], &["session_id", "language"]),
        "install_package" => (&["package"], &["version", "session_id", "language"]),
        "list_available_packages" => (&[], &["language", "session_id"]),
        "get_execution_guidance" => (&["code", "language"], &["context"]),
        "list_runtimes" => (&[], &[]),
        other => panic!("unknown tool {other}"),
    };
    for key in required {
        assert!(args.contains_key(*key), "{call:?}: missing {key}");
    }
    for (key, value) in args {
        assert!(
            required.contains(&key.as_str()) || optional.contains(&key.as_str()),
            "{call:?}: unexpected {key}"
        );
        match key.as_str() {
            "language" => assert!(
                matches!(value.as_str(), Some("python" | "javascript")),
                "{call:?}"
            ),
            "session_id" => assert!(valid_session_id(value.as_str().unwrap()), "{call:?}"),
            "runtime" => assert!(
                matches!(value.as_str(), Some("python" | "javascript")),
                "{call:?}"
            ),
            "flavor" => assert!(
                matches!(value.as_str(), Some("small" | "medium" | "large")),
                "{call:?}"
            ),
            "fuel_budget" => {
                let v = value.as_u64().unwrap();
                assert!(v > 0 && v <= MAX_SUGGESTED_FUEL, "{call:?}");
            }
            "memory_bytes" => {
                assert!((32 << 20..=MAX_MEMORY_BYTES).contains(&value.as_u64().unwrap()))
            }
            "timeout" => {
                let t = value.as_f64().unwrap();
                assert!(t > 0.0 && t <= MAX_TIMEOUT_SECS as f64, "{call:?}");
            }
            "code" | "package" | "command" => {
                assert!(!value.as_str().unwrap().trim().is_empty(), "{call:?}")
            }
            "auto_persist_globals" => assert!(value.is_boolean()),
            _ => {}
        }
    }
    assert!(!call.reason.is_empty());
}

pub(super) fn check(advice: &Advice) {
    assert!(advice.actionable_guidance.len() >= 2, "{advice:#?}");
    assert!(!advice.summary.is_empty());
    assert!(
        advice
            .related_docs
            .iter()
            .all(|d| super::super::docs::doc(d).is_some()),
        "{advice:?}"
    );
    if let Some(call) = &advice.next_call {
        check_arguments(call);
    }
}

pub(super) fn facts<'a>(language: Language, error_type: &str, code: &'a str) -> ErrorFacts<'a> {
    let error_type = ErrorType::from_name(error_type).expect("an error type");
    let mut f = ErrorFacts::new(language, error_type, code, "s1");
    f.fuel_budget = 10_000_000_000;
    f.memory_cap = 1 << 30;
    f.timeout_secs = 30.0;
    f
}

pub(super) fn py_error<'a>(
    error_type: &str,
    code: &'a str,
    name: &'a str,
    message: &'a str,
    stderr: &'a str,
) -> Advice {
    error(Language::Python, error_type, code, [name, message, stderr])
}

pub(super) fn js_error<'a>(
    error_type: &str,
    code: &'a str,
    name: &'a str,
    message: &'a str,
    stderr: &'a str,
) -> Advice {
    error(
        Language::JavaScript,
        error_type,
        code,
        [name, message, stderr],
    )
}

/// Checked advice for an error with its name, message and stderr.
fn error<'a>(
    language: Language,
    error_type: &str,
    code: &'a str,
    evidence: [&'a str; 3],
) -> Advice {
    let [name, message, stderr] = evidence;
    let mut f = facts(language, error_type, code);
    f.error_name = Some(name);
    f.error_message = Some(message);
    f.stderr = stderr;
    let advice = advise(&f);
    check(&advice);
    advice
}

pub(super) fn says(advice: &Advice, needle: &str) -> bool {
    advice.summary.contains(needle)
        || advice
            .actionable_guidance
            .iter()
            .any(|g| g.contains(needle))
}
