//! The interpreters of a session's shell: `python -c CODE`, `python script.py`, `node -e CODE`
//! and `node script.js` each run in a fresh instance of that runtime (CPython from its memory
//! image, QuickJS-NG from its module), whatever the session's language, as a real shell starts
//! a new process: over the session's own directories, with its memory cap, its output caps,
//! the command line's fuel, deadline and cancel flag; it is dropped with its report. The
//! session's own interpreter and its state are not touched, so nothing a shell's `python -c`
//! does is in the session's variables, nor can it see them: only the files are shared.
//!
//! The session's own runtime starts from what the worker mapped for the session; the other
//! language's module is mapped on first use (the jail allows reading its directory, the runtime
//! cache, as it does for the session's own module), so a worker that never runs the other
//! language pays nothing for it.
//!
//! A fresh instance shares the worker's `RLIMIT_DATA` with the session's interpreter, which
//! may hold a large state: its memory is bounded by what is left under that limit
//! ([`crate::data_limit`]), see [`HOST_RESERVE`].

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use sandbox_protocol::{ErrorKind, ExecuteRequest, ExecutionReport, Language, Mount, Runtime};
use wasmtime::{ExternType, Linker, Module};

use crate::engine::load_module;
use crate::host::{Control, HostState, SessionConfig};

/// What the worker keeps free under its `RLIMIT_DATA`, besides a fresh instance's linear
/// memory and the session's output caps (its captures), while that instance runs: Wasmtime's
/// instance and store, the request's copy of its stdin, CPython's fd-0 channel of figures, the
/// shell thread's allocator arena. Measured with a Python session of 1 GiB (RLIMIT_DATA
/// 1280 MiB) holding 700 MiB (linear memory 763 MiB, VmData 845 MiB): a fresh CPython from its
/// image (64 MiB) that allocated 100 MiB raised VmData to 1027 MiB at its peak, its linear
/// memory (164 MiB) and 18 MiB of the host's. Holding 900 MiB (VmData 1046 MiB), the fresh
/// instance got 151 MiB, its 300 MiB allocation raised `MemoryError`, VmData peaked at
/// 1127 MiB, and the worker and the session went on. A JavaScript session of 512 MiB
/// (RLIMIT_DATA 1280 MiB) holding a 300 MiB string and its rollback copy (VmData 684 MiB) ran
/// a fresh QuickJS and a fresh CPython of 100 MiB each with VmData at most 869 MiB.
pub const HOST_RESERVE: u64 = 64 << 20;

/// A linear memory that grows by less than this past its start would fail at once: a fresh
/// instance is started only with this much room beyond its initial memory.
const MIN_GROWTH: u64 = 16 << 20;

/// A fresh interpreter the shell may start, as the supervisor names it (`--companion-*` for
/// the other language; the session's own for its language).
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

/// One runtime's fresh interpreters for one session's shell.
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
    /// directories and limits `config` holds, with its module when it is mapped already (the
    /// session's own, or a fork server's: see [`CompanionArgs::map`]). Its instances preopen
    /// the session's directories and its own: in its memory image's order, when it has one.
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

    /// Whether its instances start from a memory image (else cold, from the module).
    fn imaged(&self) -> bool {
        self.args.image.is_some() && self.args.runtime.imaged_layout().is_some()
    }

    /// Runs `request` in a fresh instance and reports it like an execution; `Err` says why it
    /// could not start, in words for the command line's stderr (the details, which may name
    /// host paths, go to the worker's log only). The report carries no restart: whatever
    /// ended the instance, the session's interpreter goes on untouched.
    ///
    /// # Errors
    /// The module does not map, there is no room for the instance, or it does not start.
    pub fn run(
        &self,
        request: &ExecuteRequest,
        control: Arc<Control>,
    ) -> Result<ExecutionReport, String> {
        let language = self.language();
        let module = self.module().map_err(|e| {
            tracing::warn!(%language, error = %e, "cannot be loaded");
            format!("the {language} interpreter cannot be loaded in this session")
        })?;
        let room = self.room(initial_memory(module))?;
        let mut config = self.config.clone();
        config.memory_bytes = usize::try_from(room.memory).unwrap_or(usize::MAX);
        let failed = |what: &str, e: String| {
            tracing::warn!(%language, error = %e, "{what}");
            room.refusal(language, &format!("{what} in this session"))
        };
        let mut report = match language {
            Language::Python => crate::python::run_alone(
                (module, self.imaged()),
                &self.linker,
                (&self.workspace, &config),
                crate::python::Build::of(&self.args.wasm_sha256),
                control,
                request,
            )
            .map_err(|e| failed("could not start", format!("{e:#}")))?,
            Language::JavaScript => {
                let mut session = crate::javascript::JsSession::start_alone(
                    module,
                    &self.linker,
                    &self.workspace,
                    config,
                    control,
                )
                .map_err(|e| failed("could not start", format!("{e:#}")))?;
                (session.execute(request)).map_err(|e| failed("failed", e.to_string()))?
            }
        };
        report.restart = None;
        if room.bounded()
            && report
                .error
                .as_ref()
                .is_some_and(|e| e.kind == ErrorKind::OutOfMemory)
        {
            report
                .stderr
                .extend_from_slice(room.oom_note(language).as_bytes());
        }
        Ok(report)
    }

    /// The language it runs.
    pub fn language(&self) -> Language {
        self.args.runtime.language()
    }

    /// The memory a fresh instance that starts with `initial` bytes may have: the session's
    /// cap, less when the worker's `RLIMIT_DATA` has not that much left beside the session's
    /// interpreter and [`HOST_RESERVE`]. `Err` when it cannot even start.
    fn room(&self, initial: u64) -> Result<Room, String> {
        let (cap, memory, usage) = self.memory_now();
        let room = Room {
            cap,
            memory,
            initial,
            usage,
        };
        let needs = (initial + MIN_GROWTH).min(cap.max(initial));
        if cap < initial {
            return Err(room.refusal(self.language(), "does not fit"));
        }
        if memory < needs {
            return Err(room.refusal(self.language(), "has no room"));
        }
        Ok(room)
    }

    /// The session's memory cap, what a fresh instance may have of it now (less when the
    /// worker's `RLIMIT_DATA` has not that much left beside the session's interpreter and
    /// [`HOST_RESERVE`]), and the worker's data use, when known.
    fn memory_now(&self) -> (u64, u64, Option<crate::data_limit::DataUse>) {
        let cap = self.config.memory_bytes as u64;
        let captures = (self.config.stdout_cap + self.config.stderr_cap) as u64;
        let left = crate::data_limit::current()
            .map(|u| (u.left().saturating_sub(HOST_RESERVE + captures), u));
        let memory = left.map_or(cap, |(left, _)| left.min(cap));
        (cap, memory, left.map(|(_, u)| u))
    }

    /// The session's memory cap and what a fresh instance may have of it now (`free`).
    pub fn memory(&self) -> (u64, u64) {
        let (cap, memory, _) = self.memory_now();
        (cap, memory)
    }

    /// The module a run instantiates, mapped on the first run unless it came mapped.
    fn module(&self) -> Result<&Module, &str> {
        let mapped = self.module.get_or_init(|| self.args.map());
        mapped.as_ref().map_err(String::as_str)
    }
}

/// The bytes of linear memory an instance of `module` starts with (CPython's image: the whole
/// interpreter as its image left it).
fn initial_memory(module: &Module) -> u64 {
    module
        .exports()
        .find_map(|e| match e.ty() {
            ExternType::Memory(m) => Some(m.minimum() * m.page_size()),
            _ => None,
        })
        .unwrap_or(0)
}

/// What one fresh instance may have, and why.
#[derive(Debug, Clone, Copy)]
struct Room {
    /// The session's memory cap.
    cap: u64,
    /// What the instance gets: the cap, or less when the worker's limit has less left.
    memory: u64,
    /// What it starts with.
    initial: u64,
    /// The worker's data use before it started, when known.
    usage: Option<crate::data_limit::DataUse>,
}

impl Room {
    /// Less than the session's cap, for lack of room beside the session's interpreter.
    fn bounded(&self) -> bool {
        self.memory < self.cap
    }

    /// Why the instance did not start (`what` it did), with the numbers and what to do.
    fn refusal(&self, language: Language, what: &str) -> String {
        let mib = |b: u64| b >> 20;
        let starts = format!("it starts with {} MiB", mib(self.initial).max(1));
        match self.usage {
            Some(usage) if self.bounded() => format!(
                "a fresh {language} interpreter {what}: the worker holds {} MiB of the {} MiB it may use (the session's interpreter and its variables), {} MiB are left after the host's share, and {starts}; free memory in the session (del large variables) or use a session with a larger memory_bytes or flavor",
                mib(usage.used),
                mib(usage.limit),
                mib(self.memory),
            ),
            _ => format!(
                "a fresh {language} interpreter {what}: its memory cap is {} MiB and {starts}; a session with a larger memory_bytes or flavor may run it",
                mib(self.cap),
            ),
        }
    }

    /// Said after an out-of-memory error of an instance that had less than the cap.
    fn oom_note(&self, language: Language) -> String {
        format!(
            "{language}: this fresh interpreter had {} MiB, not the session's {} MiB: the session's own interpreter holds the rest of the worker's memory\n",
            self.memory >> 20,
            self.cap >> 20,
        )
    }
}

impl CompanionArgs {
    /// Maps the module a run instantiates: CPython's memory image (a run wakes its driver),
    /// else its module (a run starts it cold); QuickJS-NG's module. A fork server maps it
    /// once for every worker it forks: CPython's image takes ~90 ms to map, which a worker's
    /// first `python` would otherwise pay.
    ///
    /// # Errors
    /// Why it cannot be mapped (the message may name host paths: for the log only).
    pub fn map(&self) -> Result<Module, String> {
        let path = match (self.runtime.language(), &self.image) {
            (Language::Python, Some(image)) => image,
            _ => &self.module,
        };
        load_module(crate::engine::engine(), path).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn room(memory: u64, usage: Option<(u64, u64)>) -> Room {
        Room {
            cap: 512 << 20,
            memory,
            initial: 64 << 20,
            usage: usage.map(|(used, limit)| crate::data_limit::DataUse { used, limit }),
        }
    }

    /// A refusal names what the caller can change: the session's memory (what it holds, what
    /// is left) when the worker's limit bounded the instance, else the memory cap.
    #[test]
    fn refusals_say_why_with_the_numbers() {
        let bounded = room(60 << 20, Some((644 << 20, 768 << 20)));
        assert!(bounded.bounded());
        assert_eq!(
            bounded.refusal(Language::Python, "has no room"),
            "a fresh python interpreter has no room: the worker holds 644 MiB of the 768 MiB it may use (the session's interpreter and its variables), 60 MiB are left after the host's share, and it starts with 64 MiB; free memory in the session (del large variables) or use a session with a larger memory_bytes or flavor"
        );
        let capped = Room {
            cap: 48 << 20,
            ..room(48 << 20, None)
        };
        assert!(!capped.bounded());
        assert_eq!(
            capped.refusal(Language::Python, "does not fit"),
            "a fresh python interpreter does not fit: its memory cap is 48 MiB and it starts with 64 MiB; a session with a larger memory_bytes or flavor may run it"
        );
        assert!(bounded.oom_note(Language::JavaScript).starts_with(
            "javascript: this fresh interpreter had 60 MiB, not the session's 512 MiB"
        ));
    }
}
