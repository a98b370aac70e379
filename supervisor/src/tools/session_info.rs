//! What clients are told about a session and its limits: `create_session`'s answer, the
//! session part of `get_workspace_info`, and the limits `list_runtimes` and the capability
//! manifest show for the defaults and for each flavor. One shape for the limits everywhere.

use std::collections::BTreeMap;

use sandbox_protocol::Flavor;
use schemars::JsonSchema;
use serde::Serialize;

use crate::config::SessionLimits;
use crate::report::rfc3339;
use crate::session::Session;

/// What `create_session` returns.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionInfo {
    pub session_id: String,
    pub language: String,
    /// The interpreter: python (CPython 3.15 with numpy, pandas, scipy, scikit-learn,
    /// matplotlib) or javascript.
    pub runtime: String,
    /// RFC 3339.
    pub created_at: String,
    /// When the session expires if left idle (RFC 3339); every call extends it.
    pub expires_at: String,
    pub ttl_seconds: u64,
    pub limits: LimitsInfo,
}

impl SessionInfo {
    pub fn of(session: &Session) -> Self {
        let limits = session.limits();
        SessionInfo {
            session_id: session.id.clone(),
            language: session.language().to_string(),
            runtime: session.runtime().to_string(),
            created_at: rfc3339(session.created_at),
            expires_at: rfc3339(session.expires_at()),
            ttl_seconds: session.ttl.as_secs(),
            limits: LimitsInfo {
                flavor: limits.flavor,
                limits: Limits::from(&limits),
            },
        }
    }
}

/// A session's limits.
#[derive(Debug, Serialize, JsonSchema)]
pub struct LimitsInfo {
    pub flavor: Flavor,
    #[serde(flatten)]
    pub limits: Limits,
}

/// Limits as clients see them, wherever they are shown.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Limits {
    pub cpus: u32,
    /// The largest single file.
    pub disk_file_bytes: u64,
    /// Most bytes /app and /tmp may hold together (the disk quota).
    pub disk_quota_bytes: u64,
    /// Most files, directories and links /app and /tmp may hold together.
    pub disk_quota_files: u64,
    pub memory_bytes: u64,
    pub fuel_budget: u64,
    pub timeout_seconds: f64,
    pub stdout_cap_bytes: usize,
    pub stderr_cap_bytes: usize,
}

impl From<&SessionLimits> for Limits {
    fn from(limits: &SessionLimits) -> Self {
        Limits {
            cpus: limits.cpus,
            disk_file_bytes: limits.disk_bytes,
            disk_quota_bytes: limits.disk_quota_bytes,
            disk_quota_files: limits.disk_quota_files,
            memory_bytes: limits.memory_bytes,
            fuel_budget: limits.fuel,
            timeout_seconds: limits.timeout.as_secs_f64(),
            stdout_cap_bytes: limits.stdout_cap,
            stderr_cap_bytes: limits.stderr_cap,
        }
    }
}

/// Every flavor's limits by name (`small`, `medium`, `large`).
pub fn flavor_table() -> BTreeMap<&'static str, Limits> {
    Flavor::ALL
        .iter()
        .map(|f| (f.name(), Limits::from(&SessionLimits::from(*f))))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_info_names_the_runtime_and_its_limits() {
        use sandbox_protocol::{Language, Runtime};

        use crate::session::{Owner, SessionSpec, SessionTable};

        let (_state, sessions) = SessionTable::for_tests(u64::MAX / 2);
        let spec = SessionSpec::new(
            Language::Python,
            SessionLimits::from(Flavor::Small),
            std::time::Duration::from_secs(60),
        );
        let session = sessions.create(&Owner::local(), "s", spec).unwrap();
        let info = serde_json::to_value(SessionInfo::of(&session)).unwrap();
        assert_eq!(
            (&info["language"], &info["runtime"]),
            (&json!("python"), &json!("python"))
        );
        let small = SessionLimits::from(Flavor::Small);
        assert_eq!(
            info["limits"]["fuel_budget"],
            crate::config::default_execution_fuel(small.fuel, Runtime::Python, small.timeout)
        );
    }

    #[test]
    fn limits_read_the_same_everywhere() {
        let table = serde_json::to_value(flavor_table()).unwrap();
        assert_eq!(
            table["small"],
            json!({
                "cpus": 1,
                "memory_bytes": 1u64 << 30,
                "fuel_budget": 10_000_000_000u64,
                "timeout_seconds": 30.0,
                "stdout_cap_bytes": 1 << 20,
                "stderr_cap_bytes": 1 << 20,
                "disk_file_bytes": 256u64 << 20,
                "disk_quota_bytes": 1u64 << 30,
                "disk_quota_files": 20_000,
            })
        );
        assert_eq!(table.as_object().unwrap().len(), 3);
        let info = LimitsInfo {
            flavor: Flavor::Large,
            limits: Limits::from(&SessionLimits::from(Flavor::Large)),
        };
        let mut expected = table["large"].clone();
        expected["flavor"] = json!("large");
        assert_eq!(serde_json::to_value(info).unwrap(), expected);
    }
}
