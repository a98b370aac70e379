//! The interpreters, stated once: which languages there are, the names clients and the worker's
//! command line use for them, the file each is loaded from, where a session's directories appear
//! inside the sandbox, and the record of a precompiled module the worker hands the supervisor.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The interpreters a worker can host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Python,
    JavaScript,
}

impl Language {
    pub const ALL: [Language; 2] = [Language::Python, Language::JavaScript];

    /// The name clients use for it (`"python"`, `"javascript"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::JavaScript => "javascript",
        }
    }

    /// The language of a canonical name (as [`Language::as_str`] writes it).
    pub fn from_name(name: &str) -> Option<Language> {
        Language::ALL.into_iter().find(|l| l.as_str() == name)
    }

    /// The WebAssembly file of its interpreter, in the runtime directory.
    pub fn wasm_file_name(self) -> &'static str {
        match self {
            Language::Python => "python-3.12.0.wasm",
            Language::JavaScript => "quickjs-ng.wasm",
        }
    }
}

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A compiled interpreter in the module cache, as `sandbox-worker precompile` reports it (one
/// JSON line on its stdout: a map from [`Language`] to this record).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachedModule {
    /// The `.cwasm` file, named after the wasm's digest and the engine's settings.
    pub cwasm: PathBuf,
    pub wasm_sha256: String,
    /// True when this precompile compiled it (false: it was already cached).
    #[serde(default)]
    pub compiled: bool,
}

/// What `precompile` prints: every interpreter it found, by language.
pub type ModuleManifest = std::collections::BTreeMap<Language, CachedModule>;

/// A host directory preopened inside the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mount {
    /// Where the guest sees it: `/app`, `/tmp`, `/data`, `/shared`.
    pub guest: String,
    pub host: PathBuf,
    pub writable: bool,
}

/// Why a worker process ended, as its exit status says. The worker exits with
/// [`WorkerExit::code`]; the supervisor reads it back with [`WorkerExit::from_code`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerExit {
    /// It finished as asked (shutdown, or the supervisor went away).
    Done,
    /// A guest failure it could not survive.
    Failed,
    /// Bad command line.
    Usage,
    /// It could not reach the supervisor's socket, or lost it.
    Connect,
    /// The interpreter could not be loaded or compiled.
    Engine,
    /// The interpreter failed outside any guest code.
    Runtime,
    /// Supervisor and worker speak different protocol versions.
    ProtocolMismatch,
    /// A required jail layer could not be applied.
    Jail,
}

impl WorkerExit {
    const CODES: [(WorkerExit, i32); 8] = [
        (WorkerExit::Done, 0),
        (WorkerExit::Failed, 1),
        (WorkerExit::Usage, 2),
        (WorkerExit::Connect, 3),
        (WorkerExit::Engine, 4),
        (WorkerExit::Runtime, 5),
        (WorkerExit::ProtocolMismatch, 6),
        (WorkerExit::Jail, 7),
    ];

    /// The process exit status.
    pub fn code(self) -> i32 {
        Self::CODES
            .iter()
            .find(|(exit, _)| *exit == self)
            .map_or(1, |(_, code)| *code)
    }

    /// The reason behind a status, if the worker chose it.
    pub fn from_code(code: i32) -> Option<WorkerExit> {
        Self::CODES
            .iter()
            .find(|(_, c)| *c == code)
            .map(|(exit, _)| *exit)
    }

    /// In words for a log line or a `worker_crashed` answer.
    pub fn describe(self) -> &'static str {
        match self {
            WorkerExit::Done => "finished",
            WorkerExit::Failed => "failed",
            WorkerExit::Usage => "bad command line",
            WorkerExit::Connect => "lost the supervisor's socket",
            WorkerExit::Engine => "could not load the interpreter",
            WorkerExit::Runtime => "interpreter failure",
            WorkerExit::ProtocolMismatch => "protocol version mismatch",
            WorkerExit::Jail => "could not apply a required jail layer",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for l in Language::ALL {
            assert_eq!(Language::from_name(l.as_str()), Some(l));
            assert!(l.wasm_file_name().ends_with(".wasm"));
        }
        assert_eq!(Language::from_name("js"), None);
    }

    #[test]
    fn exit_codes_round_trip_and_are_distinct() {
        for (exit, code) in WorkerExit::CODES {
            assert_eq!(exit.code(), code);
            assert_eq!(WorkerExit::from_code(code), Some(exit));
        }
        assert_eq!(WorkerExit::from_code(99), None);
    }

    #[test]
    fn manifest_is_json_keyed_by_language() {
        let mut manifest = ModuleManifest::new();
        manifest.insert(
            Language::JavaScript,
            CachedModule {
                cwasm: "/c/js.cwasm".into(),
                wasm_sha256: "ab".into(),
                compiled: true,
            },
        );
        let json = serde_json::to_string(&manifest).unwrap();
        assert_eq!(
            serde_json::from_str::<ModuleManifest>(&json).unwrap(),
            manifest
        );
    }
}
