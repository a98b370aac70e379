//! How a call can end, named once for both sides: [`ErrorType`] is the `error_type` field of
//! every tool result and error, and the key that guidance's advice is chosen by.

use serde::{Deserialize, Serialize};

use crate::message::ErrorKind;

/// Every class of failure the server can report. Serialised as the snake_case names clients
/// see (`"syntax_error"`, `"out_of_fuel"`, …); the output schemas enumerate [`ErrorType::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ErrorType {
    /// The code does not parse.
    SyntaxError,
    /// The code raised or threw (also a non-zero `sys.exit`).
    RuntimeError,
    /// An import or require of a module the sandbox does not have.
    MissingModule,
    /// The wall-clock budget ran out.
    Timeout,
    /// `cancel_execution` stopped it.
    Cancelled,
    /// The fuel (CPU) budget ran out.
    OutOfFuel,
    /// The interpreter hit its memory cap.
    OutOfMemory,
    /// Recursion too deep for the interpreter's stack.
    StackOverflow,
    /// Output passed the session's cap (the run itself may have succeeded).
    OutputLimit,
    /// A path outside the sandbox's mounts, or a write to a read-only one.
    PathRestriction,
    /// The session's disk quota is full.
    DiskQuota,
    /// A shell command line exited non-zero.
    CommandFailed,
    /// The worker process died during the call.
    WorkerCrashed,
    /// No capacity for another session or execution right now.
    ResourcesExhausted,
    /// The session does not exist (never created, expired, destroyed, or another client's).
    InvalidSession,
    /// An argument is missing, mistyped or out of bounds.
    InvalidArgument,
    /// install_package: the name or version is not a valid package requirement, or the
    /// package's files were refused.
    InvalidPackage,
    /// install_package: the package needs native code, which WebAssembly cannot load.
    NativePackage,
    /// install_package: no source has the package (or that version).
    PackageNotFound,
    /// install_package: installing from the index is turned off on this server.
    InstallDisabled,
    /// The server's own machinery failed.
    SystemError,
}

impl ErrorType {
    /// Every value, in declaration order.
    pub const ALL: [ErrorType; 21] = [
        ErrorType::SyntaxError,
        ErrorType::RuntimeError,
        ErrorType::MissingModule,
        ErrorType::Timeout,
        ErrorType::Cancelled,
        ErrorType::OutOfFuel,
        ErrorType::OutOfMemory,
        ErrorType::StackOverflow,
        ErrorType::OutputLimit,
        ErrorType::PathRestriction,
        ErrorType::DiskQuota,
        ErrorType::CommandFailed,
        ErrorType::WorkerCrashed,
        ErrorType::ResourcesExhausted,
        ErrorType::InvalidSession,
        ErrorType::InvalidArgument,
        ErrorType::InvalidPackage,
        ErrorType::NativePackage,
        ErrorType::PackageNotFound,
        ErrorType::InstallDisabled,
        ErrorType::SystemError,
    ];

    /// The wire name, as serde writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorType::SyntaxError => "syntax_error",
            ErrorType::RuntimeError => "runtime_error",
            ErrorType::MissingModule => "missing_module",
            ErrorType::Timeout => "timeout",
            ErrorType::Cancelled => "cancelled",
            ErrorType::OutOfFuel => "out_of_fuel",
            ErrorType::OutOfMemory => "out_of_memory",
            ErrorType::StackOverflow => "stack_overflow",
            ErrorType::OutputLimit => "output_limit",
            ErrorType::PathRestriction => "path_restriction",
            ErrorType::DiskQuota => "disk_quota",
            ErrorType::CommandFailed => "command_failed",
            ErrorType::WorkerCrashed => "worker_crashed",
            ErrorType::ResourcesExhausted => "resources_exhausted",
            ErrorType::InvalidSession => "invalid_session",
            ErrorType::InvalidArgument => "invalid_argument",
            ErrorType::InvalidPackage => "invalid_package",
            ErrorType::NativePackage => "native_package",
            ErrorType::PackageNotFound => "package_not_found",
            ErrorType::InstallDisabled => "install_disabled",
            ErrorType::SystemError => "system_error",
        }
    }

    /// The value for a name, if it is one.
    pub fn from_name(name: &str) -> Option<ErrorType> {
        ErrorType::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

impl From<ErrorKind> for ErrorType {
    /// What a worker's own classification is called on the wire (a guest `sys.exit(3)` is a
    /// runtime error to the client).
    fn from(kind: ErrorKind) -> Self {
        match kind {
            ErrorKind::Syntax => ErrorType::SyntaxError,
            ErrorKind::Runtime | ErrorKind::Exit => ErrorType::RuntimeError,
            ErrorKind::MissingModule => ErrorType::MissingModule,
            ErrorKind::Timeout => ErrorType::Timeout,
            ErrorKind::Cancelled => ErrorType::Cancelled,
            ErrorKind::OutOfFuel => ErrorType::OutOfFuel,
            ErrorKind::OutOfMemory => ErrorType::OutOfMemory,
            ErrorKind::StackOverflow => ErrorType::StackOverflow,
            ErrorKind::PathRestriction => ErrorType::PathRestriction,
            ErrorKind::DiskQuota => ErrorType::DiskQuota,
            ErrorKind::CommandFailed => ErrorType::CommandFailed,
            ErrorKind::System => ErrorType::SystemError,
        }
    }
}

impl std::fmt::Display for ErrorType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_names_are_the_wire_names_and_round_trip() {
        for t in ErrorType::ALL {
            let json = serde_json::to_value(t).unwrap();
            assert_eq!(json, serde_json::Value::String(t.as_str().to_owned()));
            assert_eq!(serde_json::from_value::<ErrorType>(json).unwrap(), t);
            assert_eq!(ErrorType::from_name(t.as_str()), Some(t));
        }
        assert_eq!(ErrorType::from_name("runtime"), None);
    }

    #[test]
    fn all_lists_every_value_once() {
        let mut names: Vec<&str> = ErrorType::ALL.iter().map(|t| t.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ErrorType::ALL.len());
    }

    #[test]
    fn worker_kinds_map_to_client_names() {
        assert_eq!(ErrorType::from(ErrorKind::Exit), ErrorType::RuntimeError);
        assert_eq!(ErrorType::from(ErrorKind::System), ErrorType::SystemError);
        assert_eq!(ErrorType::from(ErrorKind::DiskQuota).as_str(), "disk_quota");
    }
}
