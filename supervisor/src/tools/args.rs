//! What several tools' arguments share: the language a model names ([`LanguageArg`], with the
//! spellings models use) and the runtime ([`RuntimeArg`]), the selector of the session a call acts on ([`SessionSelector`],
//! flattened into each tool's arguments), and the checks of bounded arguments, whose failures
//! are JSON-RPC "invalid params" errors carrying `data.error_type` and the argument's name.

use std::ops::RangeInclusive;
use std::time::Duration;

use rmcp::ErrorData as McpError;
use sandbox_protocol::{ErrorType, Language, Runtime};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::config::MAX_TIMEOUT;
use crate::owner::valid_session_id;
use crate::packages::names::quote;

/// The shortest timeout an execution may ask for: less could not even start an interpreter.
const MIN_TIMEOUT_SECS: f64 = 0.1;

/// The two languages, with the spellings models commonly use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LanguageArg {
    #[serde(alias = "py", alias = "python3")]
    Python,
    #[serde(alias = "js", alias = "node", alias = "nodejs")]
    Javascript,
}

impl From<LanguageArg> for Language {
    /// The one place a model's spelling becomes the protocol's language.
    fn from(arg: LanguageArg) -> Self {
        match arg {
            LanguageArg::Python => Language::Python,
            LanguageArg::Javascript => Language::JavaScript,
        }
    }
}

/// The runtimes by the names clients use (`create_session`'s `runtime`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RuntimeArg {
    /// CPython 3.15; `python-scientific` is its old name.
    #[serde(alias = "python-scientific", alias = "scientific")]
    Python,
    Javascript,
}

impl From<RuntimeArg> for Runtime {
    /// The one place a client's runtime name becomes the protocol's runtime.
    fn from(arg: RuntimeArg) -> Self {
        match arg {
            RuntimeArg::Python => Runtime::Python,
            RuntimeArg::Javascript => Runtime::JavaScript,
        }
    }
}

/// Which session a call acts on: `session_id`, else this client's default session for
/// `language` (Python when neither is given). Flattened into the arguments of the tools that
/// act on one session.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct SessionSelector {
    /// Default: yours for `language`.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Default python.
    #[serde(default)]
    pub language: Option<LanguageArg>,
}

impl SessionSelector {
    /// The language asked for, if any.
    pub fn language(&self) -> Option<Language> {
        self.language.map(Language::from)
    }
}

/// A bad argument: JSON-RPC invalid params, with `data.error_type = "invalid_argument"` and the
/// argument's name.
pub fn invalid_argument(argument: &str, message: impl Into<String>) -> McpError {
    McpError::invalid_params(
        message.into(),
        Some(json!({ "error_type": ErrorType::InvalidArgument, "argument": argument })),
    )
}

/// The message for a session that expired while idle.
pub fn expired_message(id: &str) -> String {
    format!(
        "session {id:?} expired after being idle and was removed with its files; start a new one with create_session, or call execute_code without session_id"
    )
}

/// A session this client does not have: never created, expired, or another client's (which
/// is answered exactly like one that never existed).
pub fn no_session(id: &str, expired: bool) -> McpError {
    let message = if expired {
        expired_message(id)
    } else {
        format!("no session {id:?}; execute_code creates one on first use")
    };
    McpError::invalid_params(
        message,
        Some(json!({ "error_type": ErrorType::InvalidSession, "session_id": id })),
    )
}

/// `id` when it is a session id a client may choose.
///
/// # Errors
/// An `invalid_argument` error for `session_id`.
pub fn check_session_id(id: &str) -> Result<&str, McpError> {
    if valid_session_id(id) {
        return Ok(id);
    }
    Err(invalid_argument(
        "session_id",
        format!(
            "invalid session_id {}: use 1-64 letters, digits, '-' or '_', starting with a letter or digit",
            quote(id)
        ),
    ))
}

/// A `timeout` argument in seconds as a duration, when given.
///
/// # Errors
/// An `invalid_argument` error when it is not from 0.1 to 300 seconds.
pub fn timeout_arg(seconds: Option<f64>) -> Result<Option<Duration>, McpError> {
    match seconds {
        None => Ok(None),
        Some(s) if s.is_finite() && s >= MIN_TIMEOUT_SECS && s <= MAX_TIMEOUT.as_secs_f64() => {
            Ok(Some(Duration::from_secs_f64(s)))
        }
        Some(s) => Err(invalid_argument(
            "timeout",
            format!(
                "timeout must be from {MIN_TIMEOUT_SECS} to {} seconds, got {s}",
                MAX_TIMEOUT.as_secs()
            ),
        )),
    }
}

/// `value` when it lies in `range`, else an `invalid_argument` error naming the bounds.
///
/// # Errors
/// An `invalid_argument` error for `argument`.
pub fn bounded(
    argument: &str,
    value: u64,
    range: &RangeInclusive<u64>,
    unit: &str,
) -> Result<u64, McpError> {
    if range.contains(&value) {
        return Ok(value);
    }
    Err(invalid_argument(
        argument,
        format!(
            "{argument} must be between {} and {}{unit}, got {value}",
            range.start(),
            range.end()
        ),
    ))
}

/// `text` when it is at most `max` bytes.
///
/// # Errors
/// An `invalid_argument` error for `argument`.
pub fn bounded_text<'a>(argument: &str, text: &'a str, max: usize) -> Result<&'a str, McpError> {
    if text.len() <= max {
        return Ok(text);
    }
    Err(invalid_argument(
        argument,
        format!("{argument} is {} bytes, the limit is {max}", text.len()),
    ))
}

/// `text` when it is not blank (`code`, `command`).
///
/// # Errors
/// An `invalid_argument` error for `argument`.
pub fn non_blank<'a>(argument: &str, text: &'a str) -> Result<&'a str, McpError> {
    if text.trim().is_empty() {
        return Err(invalid_argument(
            argument,
            format!("{argument} must not be empty"),
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argument_of(error: &McpError) -> &str {
        error.data.as_ref().unwrap()["argument"].as_str().unwrap()
    }

    #[test]
    fn bad_arguments_are_named() {
        assert!(check_session_id("ok-1_x").is_ok());
        assert_eq!(
            argument_of(&check_session_id("../x").unwrap_err()),
            "session_id"
        );
        assert_eq!(timeout_arg(None).unwrap(), None);
        assert_eq!(
            timeout_arg(Some(0.1)).unwrap(),
            Some(Duration::from_millis(100))
        );
        for bad in [0.0, 0.05, 300.5, f64::NAN, f64::INFINITY] {
            assert_eq!(argument_of(&timeout_arg(Some(bad)).unwrap_err()), "timeout");
        }
        assert_eq!(bounded("ttl_seconds", 5, &(1..=10), "").unwrap(), 5);
        let error = bounded("ttl_seconds", 11, &(1..=10), " seconds").unwrap_err();
        assert_eq!(
            error.message,
            "ttl_seconds must be between 1 and 10 seconds, got 11"
        );
        assert_eq!(argument_of(&non_blank("code", " \n").unwrap_err()), "code");
        assert_eq!(
            bounded_text("command", "12345678901", 10)
                .unwrap_err()
                .message,
            "command is 11 bytes, the limit is 10"
        );
        let expired = no_session("s", true);
        assert_eq!(expired.data.unwrap()["error_type"], "invalid_session");
    }

    #[test]
    fn models_spellings_are_languages() {
        for (spelling, language) in [
            ("python", Language::Python),
            ("py", Language::Python),
            ("python3", Language::Python),
            ("javascript", Language::JavaScript),
            ("js", Language::JavaScript),
            ("node", Language::JavaScript),
            ("nodejs", Language::JavaScript),
        ] {
            let arg: LanguageArg = serde_json::from_value(json!(spelling)).unwrap();
            assert_eq!(Language::from(arg), language, "{spelling}");
        }
        for runtime in Runtime::ALL {
            let arg: RuntimeArg = serde_json::from_value(json!(runtime.as_str())).unwrap();
            assert_eq!(Runtime::from(arg), runtime);
        }
        let arg: RuntimeArg = serde_json::from_value(json!("scientific")).unwrap();
        assert_eq!(Runtime::from(arg), Runtime::Python);
        let selector: SessionSelector = serde_json::from_value(json!({})).unwrap();
        assert!(selector.session_id.is_none() && selector.language().is_none());
    }
}
