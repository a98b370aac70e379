//! One install into one session, and its answer as a client sees it ([`InstallReport`]): what
//! `install_package` returns and what `pip install` in `execute_command` reports line by line.
//! The install itself goes to [`python`](super::python) or [`javascript`](super::javascript)
//! by the session's runtime, staged in a fresh server-owned directory.

use std::path::{Path, PathBuf};

use sandbox_protocol::confined::{ConfinedError, Root, Usage};
use sandbox_protocol::{ErrorType, Runtime};
use schemars::JsonSchema;
use serde::Serialize;

use super::{InstallRefusal, Sources, entry_names, javascript, normalize, python};
use crate::workspace::{Staging, StateDirs};

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

/// Prepares an install of `package` (at `version`, Python only) into the session whose runtime
/// is `runtime` and whose `/app` is `app`: checked, fetched and unpacked in a fresh directory of
/// `dirs`, with nothing in the session yet. [`Staged::growth`] says what it would add to the
/// session's files, and [`Staged::move_in`] moves it in.
///
/// # Errors
/// An [`InstallRefusal`] the model can act on: a bad or native-only name, an unknown package,
/// no package source, or a hostile archive.
pub async fn stage(
    runtime: Runtime,
    package: &str,
    version: Option<&str>,
    dirs: &StateDirs,
    data_dir: Option<&Path>,
    sources: &Sources,
) -> Result<Staged, InstallRefusal> {
    let staging = dirs
        .staging()
        .map_err(|e| InstallRefusal::system("cannot create a staging directory", e))?;
    match runtime {
        Runtime::JavaScript => javascript::stage_js(package, data_dir, staging, sources),
        Runtime::Python => python::stage(package, version, staging, data_dir, sources).await,
    }
}

/// An install checked and unpacked in the server's staging directory, not yet in the session.
#[derive(Debug)]
pub struct Staged {
    installation: Installation,
    /// `None` when nothing needs to move (a vendored or compiled-in package).
    files: Option<StagedFiles>,
}

/// What moves into the session, and where.
#[derive(Debug)]
pub(super) struct StagedFiles {
    /// Holds the staged tree: dropping it removes the staging directory.
    pub staging: Staging,
    /// The directory of staging whose entries move.
    pub from: Root,
    /// The directories of `/app` they go into, one component each (`.packages`, or
    /// `node_modules` and a scope), created when missing.
    pub into: Vec<String>,
    /// `(name in from, name in into)` of each entry that moves, replacing what has its name.
    pub entries: Vec<(PathBuf, PathBuf)>,
    /// Normalised distribution names whose older `.dist-info` directories in `into` are
    /// removed (Python).
    pub replaces_dists: Vec<String>,
}

impl Staged {
    /// An install that moves nothing into the session.
    pub(super) fn nothing_to_move(installation: Installation) -> Self {
        Self {
            installation,
            files: None,
        }
    }

    /// An install whose `files` move into the session.
    pub(super) fn files(installation: Installation, files: StagedFiles) -> Self {
        Self {
            installation,
            files: Some(files),
        }
    }

    /// What the session's files would hold more after [`Staged::move_in`] into `app`: the
    /// staged entries and the directories to create, less what they replace (a reinstall or
    /// an upgrade frees what it overwrites). Counted without following links.
    ///
    /// # Errors
    /// `path_restriction` when the guest put something other than a directory where the
    /// packages go.
    pub fn growth(&self, app: &Root) -> Result<Usage, InstallRefusal> {
        let Some(files) = &self.files else {
            return Ok(Usage::default());
        };
        let nothing = Usage {
            complete: true,
            ..Usage::default()
        };
        let (mut added, mut replaced) = (nothing, nothing);
        // The directories on the way, as far as they exist.
        let mut into = Some(
            app.try_clone()
                .map_err(|e| InstallRefusal::system("cannot open the session's workspace", e))?,
        );
        for (depth, name) in files.into.iter().enumerate() {
            let Some(parent) = into.take() else {
                added.entries += 1;
                continue;
            };
            match parent.open_dir_nofollow(Path::new(name)) {
                Ok(dir) => into = Some(dir),
                Err(ConfinedError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                    added.entries += 1;
                }
                Err(e) => {
                    return Err(InstallRefusal::not_a_directory(
                        &files.into[..=depth].join("/"),
                        &e,
                    ));
                }
            }
        }
        for (from_name, to_name) in &files.entries {
            add(&mut added, entry_usage(&files.from, from_name));
            if let Some(into) = &into {
                add(&mut replaced, entry_usage(into, to_name));
            }
        }
        if let Some(into) = &into {
            for name in stale_dist_infos(into, &files.replaces_dists) {
                add(&mut replaced, entry_usage(into, Path::new(&name)));
            }
        }
        Ok(Usage {
            bytes: added.bytes.saturating_sub(replaced.bytes),
            entries: added.entries.saturating_sub(replaced.entries),
            complete: added.complete && replaced.complete,
        })
    }

    /// Moves the staged files into `app` (each entry replaces what has its name, by rename, so
    /// a guest's link there is replaced, never written through) and says what was installed.
    ///
    /// # Errors
    /// `path_restriction` when a directory on the way is not a real directory, and system
    /// errors when a move fails.
    pub fn move_in(self, app: &Root) -> Result<Installation, InstallRefusal> {
        let Some(files) = self.files else {
            return Ok(self.installation);
        };
        let mut into = app
            .try_clone()
            .map_err(|e| InstallRefusal::system("cannot open the session's workspace", e))?;
        for (depth, name) in files.into.iter().enumerate() {
            into = into.ensure_dir(Path::new(name)).map_err(|e| {
                InstallRefusal::not_a_directory(&files.into[..=depth].join("/"), &e)
            })?;
        }
        let where_to = format!("/app/{}", files.into.join("/"));
        for name in stale_dist_infos(&into, &files.replaces_dists) {
            into.remove_tree(Path::new(&name))
                .map_err(|e| InstallRefusal::system("cannot remove an older version", e))?;
        }
        for (from_name, to_name) in &files.entries {
            into.replace_from(to_name, &files.from, from_name)
                .map_err(|e| {
                    InstallRefusal::system(&format!("cannot move the package into {where_to}"), e)
                })?;
        }
        drop(files.staging);
        Ok(self.installation)
    }
}

/// The `.dist-info` directories in `dir` of the distributions `dists` (normalised names): an
/// install of a new version replaces them.
fn stale_dist_infos(dir: &Root, dists: &[String]) -> Vec<String> {
    if dists.is_empty() {
        return Vec::new();
    }
    entry_names(dir)
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| {
            name.strip_suffix(".dist-info")
                .and_then(|stem| stem.rsplit_once('-'))
                .is_some_and(|(dist, _)| dists.contains(&normalize(dist)))
        })
        .collect()
}

/// What the entry `name` of `dir` holds, itself included, without following a link; nothing
/// when it does not exist.
fn entry_usage(dir: &Root, name: &Path) -> Usage {
    let Ok(meta) = dir.dir().symlink_metadata(name) else {
        return Usage {
            complete: true,
            ..Usage::default()
        };
    };
    let own = Usage {
        bytes: if meta.is_dir() { 0 } else { meta.len() },
        entries: 1,
        complete: true,
    };
    if !meta.is_dir() {
        return own;
    }
    match dir.open_dir_nofollow(name) {
        Ok(sub) => {
            let below = sub.usage(u64::MAX);
            Usage {
                bytes: below.bytes,
                entries: below.entries + 1,
                complete: below.complete,
            }
        }
        Err(_) => Usage {
            complete: false,
            ..own
        },
    }
}

fn add(total: &mut Usage, more: Usage) {
    total.bytes = total.bytes.saturating_add(more.bytes);
    total.entries = total.entries.saturating_add(more.entries);
    total.complete &= more.complete;
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
