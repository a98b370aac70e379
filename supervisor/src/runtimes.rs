//! The interpreters: compiled once per supervisor start by `sandbox-worker precompile` (a no-op
//! when the cache already holds them), and described for `list_runtimes`.

use std::process::Stdio;

use sandbox_protocol::{CachedModule, Language, ModuleManifest};
use tokio::io::AsyncBufReadExt;
use tokio::sync::OnceCell;

use crate::config::SupervisorConfig;

/// The precompiled interpreters, by language, as `precompile` reported them.
#[derive(Debug, Clone)]
pub struct Manifest {
    modules: ModuleManifest,
}

impl Manifest {
    /// The cached module of `language`, if precompile found its interpreter.
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
        compiled = ?modules.iter().filter(|(_, m)| m.compiled).map(|(l, _)| l.as_str()).collect::<Vec<_>>(),
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
    pub language: Language,
    pub version: &'static str,
    pub engine: &'static str,
    pub capabilities: &'static [&'static str],
    pub notes: &'static [&'static str],
}

/// The two runtimes, described once.
pub const RUNTIMES: [RuntimeInfo; 2] = [
    RuntimeInfo {
        language: Language::Python,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_precompile_manifest_is_read_by_language() {
        let line = br#"{"python":{"cwasm":"/c/py.cwasm","wasm_sha256":"aa","compiled":true},"javascript":{"cwasm":"/c/js.cwasm","wasm_sha256":"bb"}}"#;
        let manifest = Manifest {
            modules: parse_manifest(line).unwrap(),
        };
        let python = manifest.module(Language::Python).unwrap();
        assert_eq!(
            (python.cwasm.to_str(), python.compiled),
            (Some("/c/py.cwasm"), true)
        );
        let js = manifest.module(Language::JavaScript).unwrap();
        assert_eq!((js.wasm_sha256.as_str(), js.compiled), ("bb", false));
        assert!(parse_manifest(b"compiling...").is_err());
    }

    #[test]
    fn every_language_is_described() {
        for language in Language::ALL {
            assert!(
                RUNTIMES.iter().any(|r| r.language == language),
                "{language}"
            );
        }
    }
}
