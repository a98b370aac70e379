//! The other language's interpreter in a session's shell: `node -e CODE` or `node script.js` in
//! a Python session, `python -c CODE` or `python script.py` in a JavaScript one. Each such run
//! is a fresh instance of that interpreter (CPython from its memory image, QuickJS-NG from its
//! module) over the session's own directories, with its memory cap, its output caps, the
//! command line's fuel, deadline and cancel flag; it is dropped with its report. The session's
//! own interpreter and its state are not touched, so nothing a `node -e` does is in the
//! session's variables, only in its files.
//!
//! The module is mapped on first use (the jail allows reading its directory, the runtime
//! cache, as it does for the session's own module), so a worker that never runs the other
//! language pays nothing for it.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use sandbox_protocol::{ExecuteRequest, ExecutionReport, Language, Mount, Runtime};
use wasmtime::{Linker, Module};

use crate::engine::load_module;
use crate::host::{Control, HostState, SessionConfig};

/// The other language's interpreter, as the supervisor names it (`--companion-*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompanionArgs {
    pub runtime: Runtime,
    /// The compiled interpreter.
    pub module: PathBuf,
    /// Its memory image, when it has one (CPython's: a run starts from it, not cold).
    pub image: Option<PathBuf>,
    pub wasm_sha256: String,
    /// Read-only directories only its instances preopen, besides the session's.
    pub mounts: Vec<Mount>,
}

/// The other language's interpreter for one session's shell.
pub struct Companion {
    args: CompanionArgs,
    linker: Linker<HostState>,
    workspace: PathBuf,
    config: SessionConfig,
    /// Mapped on the first run; why not, when it could not be.
    module: OnceLock<Result<Module, String>>,
}

impl std::fmt::Debug for Companion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Companion")
            .field("args", &self.args)
            .finish_non_exhaustive()
    }
}

impl Companion {
    /// The interpreter `args` names, for the session whose `/app` is `workspace` and whose
    /// directories and limits `config` holds, with its module when it is mapped already (a
    /// fork server's, see [`CompanionArgs::map`]). Its instances preopen the session's
    /// directories and its own: in its memory image's order, when it has one.
    pub fn new(
        args: CompanionArgs,
        linker: Linker<HostState>,
        (workspace, mut config): (PathBuf, SessionConfig),
        mapped: Option<Module>,
    ) -> Self {
        config.mounts.extend(args.mounts.iter().cloned());
        if let Some(layout) = args.runtime.imaged_layout() {
            let at = |guest: &str| {
                layout
                    .iter()
                    .position(|g| *g == guest)
                    .unwrap_or(usize::MAX)
            };
            config.mounts.sort_by_key(|m| at(&m.guest));
        }
        let module = OnceLock::new();
        if let Some(mapped) = mapped {
            let _ = module.set(Ok(mapped));
        }
        Self {
            args,
            linker,
            workspace,
            config,
            module,
        }
    }

    /// The language it runs.
    pub fn language(&self) -> Language {
        self.args.runtime.language()
    }

    /// Runs `request` in a fresh instance and reports it like an execution; `Err` says why it
    /// could not start, in words for the command line's stderr (the details, which may name
    /// host paths, go to the worker's log only).
    ///
    /// # Errors
    /// The module does not map, or the interpreter does not start.
    pub fn run(
        &self,
        request: &ExecuteRequest,
        control: Arc<Control>,
    ) -> Result<ExecutionReport, String> {
        let language = self.language();
        // A memory cap too small for the other interpreter is the one cause a caller can fix
        // (RLIMIT_DATA and the linear memory both follow it): say it with the numbers.
        let cap_mib = self.config.memory_bytes >> 20;
        // Measured: CPython from its image starts in 80 MiB, not in 64.
        let needs = match language {
            Language::Python => "CPython from its image needs about 80 MiB",
            Language::JavaScript => "QuickJS needs a few MiB",
        };
        let failed = |what: &str, e: String| {
            tracing::warn!(%language, error = %e, "{what}");
            format!(
                "the {language} interpreter {what} in this session (its memory cap is {cap_mib} MiB; {needs}: a session with a larger memory_bytes or flavor may run it)"
            )
        };
        let module = self
            .module()
            .map_err(|e| failed("cannot be loaded", e.to_owned()))?;
        match language {
            Language::Python => crate::python::run_alone(
                module,
                &self.linker,
                (&self.workspace, &self.config),
                crate::python::Build::of(&self.args.wasm_sha256),
                control,
                request,
            )
            .map_err(|e| failed("could not start", format!("{e:#}"))),
            Language::JavaScript => {
                let mut session = crate::javascript::JsSession::start(
                    module,
                    &self.linker,
                    &self.workspace,
                    self.config.clone(),
                    control,
                )
                .map_err(|e| failed("could not start", format!("{e:#}")))?;
                (session.execute(request)).map_err(|e| failed("failed", e.to_string()))
            }
        }
    }

    /// The module a run instantiates, mapped on the first run unless it came mapped.
    fn module(&self) -> Result<&Module, &str> {
        let mapped = self.module.get_or_init(|| self.args.map());
        mapped.as_ref().map_err(String::as_str)
    }
}

impl CompanionArgs {
    /// Maps the module a run instantiates: CPython's memory image (a run wakes its driver; the
    /// interpreter alone has none), QuickJS-NG's module. A fork server maps it once for every
    /// worker it forks: CPython's image takes ~90 ms to map, which a worker's first `python`
    /// would otherwise pay.
    ///
    /// # Errors
    /// Why it cannot be mapped (the message may name host paths: for the log only).
    pub fn map(&self) -> Result<Module, String> {
        let path = match self.runtime.language() {
            Language::Python => (self.image.as_ref()).ok_or("it has no memory image")?,
            Language::JavaScript => &self.module,
        };
        load_module(crate::engine::engine(), path).map_err(|e| e.to_string())
    }
}
