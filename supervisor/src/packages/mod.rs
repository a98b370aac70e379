//! Packages: what is vendored (read-only under /data, measured first-import fuel) and what a
//! session installed ([`catalog`]), and installs ([`mod@install`], which answers
//! `install_package` and `pip install` in `execute_command` ([`requirements`]), through
//! [`python`] or [`javascript`]). What CPython has compiled in is the layer below's
//! ([`crate::inventory`]).
//!
//! Installs run on the host, never in the guest, and treat everything the client or the guest
//! controls as hostile:
//! - the name and version are checked as names ([`names`]) before any tool runs;
//! - Python wheels are fetched by one fixed pip command ([`pip`]) into a server-owned staging
//!   directory, checked and unpacked there by the server ([`wheel`]);
//! - only then do they move into the session's `/app/.packages` (or `/app/node_modules`)
//!   through the confined layer: the directory must be a real directory (a guest's symlink in
//!   its place is refused), and each entry replaces what had its name by rename, so a guest's
//!   link or hard link there is replaced, never written through.

pub mod catalog;
pub mod install;
pub mod javascript;
pub mod names;
pub mod pip;
pub mod provided;
pub mod python;
pub mod requirements;
pub mod wheel;

use sandbox_protocol::ErrorType;
use sandbox_protocol::confined::{ConfinedError, EntryKind, Root, Usage};
use schemars::JsonSchema;
use serde::Serialize;

pub use install::{InstallOutcome, InstallReport, Installation, Staged, stage};

/// Where installed Python packages live inside the workspace (on `sys.path` in the sandbox).
pub const PYTHON_PACKAGES_DIR: &str = ".packages";
/// Where installed JavaScript packages live inside the workspace (searched by requireVendor).
pub const JS_PACKAGES_DIR: &str = "node_modules";

/// The names and kinds (links not followed) of a directory's entries.
fn entry_names(dir: &Root) -> Vec<(String, EntryKind)> {
    let Ok(entries) = dir.dir().entries() else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let kind = EntryKind::of(e.metadata().ok()?.file_type());
            Some((e.file_name().to_string_lossy().into_owned(), kind))
        })
        .collect()
}

pub use crate::inventory::normalize;

/// Why an install did not happen, with advice; in a result as `error_type`, `error_message`
/// and `actionable_guidance`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct InstallRefusal {
    pub error_type: ErrorType,
    /// What went wrong, in one sentence.
    #[serde(rename = "error_message")]
    pub message: String,
    /// What to do instead, most useful first.
    #[serde(rename = "actionable_guidance")]
    pub alternatives: Vec<String>,
}

impl InstallRefusal {
    fn new(error_type: ErrorType, message: impl Into<String>) -> Self {
        Self {
            error_type,
            message: message.into(),
            alternatives: Vec::new(),
        }
    }

    fn with(mut self, alternative: impl Into<String>) -> Self {
        self.alternatives.push(alternative.into());
        self
    }

    fn system(what: &str, e: impl std::fmt::Display) -> Self {
        Self::new(ErrorType::SystemError, format!("{what}: {e}"))
    }

    /// The install does not fit in the session's disk quota: what it needs and what is free,
    /// from the worker's count (`charge`) and the install's measured `growth`. Nothing moved.
    pub fn disk_quota(package: &str, growth: Usage, charge: &sandbox_protocol::DiskCharge) -> Self {
        let at_least = if charge.exact { "" } else { "at least " };
        let free_bytes = charge.quota_bytes.saturating_sub(charge.used_bytes);
        let free_entries = charge.quota_entries.saturating_sub(charge.used_entries);
        Self::new(
            ErrorType::DiskQuota,
            format!(
                "disk_quota: installing {package} needs {} bytes and {} files, directories and links, but the session's disk quota (/app and /tmp together: {} bytes, {} entries) has only {} bytes and {} entries free ({at_least}{} bytes and {} entries in use); nothing was installed and the session is unchanged",
                growth.bytes,
                growth.entries,
                charge.quota_bytes,
                charge.quota_entries,
                free_bytes,
                free_entries,
                charge.used_bytes,
                charge.used_entries,
            ),
        )
        .with("delete files you no longer need (execute_command `du -s /app/* /tmp` shows what uses the space, then `rm -r PATH`), or call reset_workspace, then install again")
        .with("create_session with a larger flavor (a larger disk quota) and install there")
    }

    /// `dir` in `/app` is not a real directory: the guest put something else there.
    fn not_a_directory(dir: &str, error: &ConfinedError) -> Self {
        let what = match error {
            ConfinedError::NotDirectory(kind) => format!("a {}", kind.name()),
            other => other.to_string(),
        };
        Self::new(
            ErrorType::PathRestriction,
            format!(
                "/app/{dir} is {what}, not a directory: the server installs only into a real directory and never writes through a link"
            ),
        )
        .with(format!(
            "remove it with execute_command {{\"command\": \"rm -r /app/{dir}\"}} and call install_package again"
        ))
    }
}

/// Where `install_package` may get packages: the operator's settings (`SANDBOX_WHEELHOUSE`,
/// `SANDBOX_ALLOW_PYPI`, `SANDBOX_JS_PACKAGES`), read with all others in `config`.
pub use crate::config::PackageSources as Sources;
