//! The interpreters: compiled once per supervisor start by `sandbox-worker precompile` (a no-op
//! when the cache already holds them), and described for `list_runtimes`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;

use sandbox_protocol::Language;
use serde::Deserialize;
use tokio::io::AsyncBufReadExt;
use tokio::sync::OnceCell;

use crate::config::SupervisorConfig;

/// One cached module, as the precompile step reports it.
#[derive(Debug, Clone, Deserialize)]
pub struct CachedModule {
    pub cwasm: PathBuf,
    pub wasm_sha256: String,
}

/// The precompiled interpreters, by language.
#[derive(Debug, Clone)]
pub struct Manifest {
    modules: HashMap<Language, CachedModule>,
}

impl Manifest {
    pub fn module(&self, language: Language) -> Option<&CachedModule> {
        self.modules.get(&language)
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
        .envs(std::env::var_os("RUST_LOG").map(|v| ("RUST_LOG", v)))
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
    let raw: HashMap<String, CachedModule> = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("precompile printed no manifest: {e}"))?;
    let mut modules = HashMap::new();
    for (name, module) in raw {
        let language = match name.as_str() {
            "python" => Language::Python,
            "javascript" => Language::JavaScript,
            _ => continue,
        };
        modules.insert(language, module);
    }
    tracing::info!(
        ms = started.elapsed().as_millis() as u64,
        "interpreters ready"
    );
    Ok(Manifest { modules })
}

/// What `list_runtimes` says about each interpreter.
pub struct RuntimeInfo {
    pub language: Language,
    pub name: &'static str,
    pub version: &'static str,
    pub engine: &'static str,
    pub capabilities: &'static [&'static str],
    pub notes: &'static [&'static str],
}

/// The two runtimes, described once.
pub const RUNTIMES: [RuntimeInfo; 2] = [
    RuntimeInfo {
        language: Language::Python,
        name: "python",
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
        language: Language::JavaScript,
        name: "javascript",
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
