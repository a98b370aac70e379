//! One install into one session, and its answer as a client sees it ([`InstallReport`]): what
//! `install_package` returns and what `pip install` in `execute_command` reports line by line.
//! The install itself goes to [`python`](super::python) or [`javascript`](super::javascript)
//! by the session's runtime, staged in a fresh server-owned directory.

use std::path::Path;

use sandbox_protocol::confined::Root;
use sandbox_protocol::{ErrorType, Runtime};
use schemars::JsonSchema;
use serde::Serialize;

use super::{InstallRefusal, Sources, javascript, python};
use crate::workspace::StateDirs;

/// A package made importable in a session.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Installation {
    /// The version now importable ("vendored" when the server ships it without a version).
    pub installed_version: String,
    /// Other distributions installed with it, as `name==version`.
    pub dependencies_installed: Vec<String>,
    /// What to `import` (Python only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub import_names: Option<Vec<String>>,
    /// Where its files went, when they were copied into the session's workspace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// How to use it, in one sentence.
    pub message: String,
    /// Whether a running Python interpreter must refresh its import caches to see it (it may
    /// have cached that `/app/.packages` held nothing).
    #[serde(skip)]
    pub refresh_interpreter: bool,
}

/// How an install ended.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum InstallOutcome {
    Installed(Installation),
    Refused(InstallRefusal),
    /// No session could be had for the install (no capacity, an expired session).
    NoSession {
        error_type: ErrorType,
        error_message: String,
    },
}

/// The answer to one install.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct InstallReport {
    /// True when the package is importable now.
    success: bool,
    /// The package asked for (absent when no session could be had).
    #[serde(skip_serializing_if = "Option::is_none")]
    package: Option<String>,
    /// The session installed into (absent when no session could be had).
    #[serde(skip_serializing_if = "Option::is_none")]
    session_id: Option<String>,
    #[serde(flatten)]
    outcome: InstallOutcome,
}

impl InstallReport {
    /// The answer for an install of `package` into session `session_id`.
    pub fn new(
        package: &str,
        session_id: &str,
        outcome: Result<Installation, InstallRefusal>,
    ) -> Self {
        Self {
            success: outcome.is_ok(),
            package: Some(package.to_owned()),
            session_id: Some(session_id.to_owned()),
            outcome: match outcome {
                Ok(installation) => InstallOutcome::Installed(installation),
                Err(refusal) => InstallOutcome::Refused(refusal),
            },
        }
    }

    /// The answer when no session could be had for the install.
    pub fn no_session(error_type: ErrorType, message: String) -> Self {
        Self {
            success: false,
            package: None,
            session_id: None,
            outcome: InstallOutcome::NoSession {
                error_type,
                error_message: message,
            },
        }
    }

    /// True when the package is importable now.
    pub fn succeeded(&self) -> bool {
        self.success
    }

    pub fn outcome(&self) -> &InstallOutcome {
        &self.outcome
    }

    /// The class of failure, on failure.
    pub fn error_type(&self) -> Option<ErrorType> {
        match &self.outcome {
            InstallOutcome::Installed(_) => None,
            InstallOutcome::Refused(refusal) => Some(refusal.error_type),
            InstallOutcome::NoSession { error_type, .. } => Some(*error_type),
        }
    }

    /// The one sentence a text-only client reads: how to use the package, or what went wrong.
    pub fn message(&self) -> &str {
        match &self.outcome {
            InstallOutcome::Installed(installation) => &installation.message,
            InstallOutcome::Refused(refusal) => &refusal.message,
            InstallOutcome::NoSession { error_message, .. } => error_message,
        }
    }
}

/// Installs `package` (at `version`, Python only) into the session whose runtime is `runtime`
/// and whose `/app` is `app`, staging it in a fresh directory of `dirs`.
///
/// # Errors
/// An [`InstallRefusal`] the model can act on: a bad or native-only name, an unknown package,
/// no package source, a hostile archive, or a guest-made link where packages go.
pub async fn install(
    runtime: Runtime,
    app: &Root,
    package: &str,
    version: Option<&str>,
    dirs: &StateDirs,
    data_dir: Option<&Path>,
    sources: &Sources,
) -> Result<Installation, InstallRefusal> {
    let staging = dirs
        .staging()
        .map_err(|e| InstallRefusal::system("cannot create a staging directory", e))?;
    match runtime {
        Runtime::JavaScript => javascript::install_js(package, data_dir, app, &staging, sources),
        Runtime::Python => {
            python::install(package, version, app, &staging, data_dir, sources).await
        }
        Runtime::PythonScientific => {
            python::install_scientific(package, version, app, &staging, sources).await
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn installation() -> Installation {
        Installation {
            installed_version: "0.9.0".into(),
            dependencies_installed: vec!["wcwidth==0.2.6".into()],
            import_names: Some(vec!["tabulate".into()]),
            location: Some("/app/.packages".into()),
            message: "importable in the next execute_code, no sys.path changes needed".into(),
            refresh_interpreter: true,
        }
    }

    /// The JSON clients got when results were built by hand, key for key.
    #[test]
    fn reports_serialise_as_clients_know_them() {
        let installed = InstallReport::new("tabulate", "s1", Ok(installation()));
        assert!(installed.succeeded() && installed.error_type().is_none());
        assert_eq!(
            serde_json::to_value(&installed).unwrap(),
            json!({
                "success": true,
                "package": "tabulate",
                "session_id": "s1",
                "installed_version": "0.9.0",
                "dependencies_installed": ["wcwidth==0.2.6"],
                "import_names": ["tabulate"],
                "location": "/app/.packages",
                "message": "importable in the next execute_code, no sys.path changes needed",
            })
        );
        let vendored_js = InstallReport::new(
            "csv-simple",
            "s2",
            Ok(Installation {
                installed_version: "vendored".into(),
                dependencies_installed: Vec::new(),
                import_names: None,
                location: None,
                message: "use requireVendor".into(),
                refresh_interpreter: false,
            }),
        );
        assert_eq!(
            serde_json::to_value(&vendored_js).unwrap(),
            json!({
                "success": true,
                "package": "csv-simple",
                "session_id": "s2",
                "installed_version": "vendored",
                "dependencies_installed": [],
                "message": "use requireVendor",
            })
        );
        let refused = InstallReport::new(
            "numpy",
            "s1",
            Err(InstallRefusal::new(ErrorType::NativePackage, "no").with("use statistics")),
        );
        assert_eq!(refused.message(), "no");
        assert_eq!(refused.error_type(), Some(ErrorType::NativePackage));
        assert_eq!(
            serde_json::to_value(&refused).unwrap(),
            json!({
                "success": false,
                "package": "numpy",
                "session_id": "s1",
                "error_type": "native_package",
                "error_message": "no",
                "actionable_guidance": ["use statistics"],
            })
        );
        let no_session = InstallReport::no_session(ErrorType::ResourcesExhausted, "full".into());
        assert!(!no_session.succeeded());
        assert_eq!(
            serde_json::to_value(&no_session).unwrap(),
            json!({ "success": false, "error_type": "resources_exhausted", "error_message": "full" })
        );
    }
}
