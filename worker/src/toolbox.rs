//! The WebAssembly commands of `execute_command`: uutils coreutils' tools, with grep, find,
//! sed, du and stat of the toolbox's own, built as one wasm32-wasip1 program
//! (`runtimes/toolbox`, see [`sandbox_protocol::TOOLBOX_FILE`]). The shell
//! runs each command line's tool in a fresh instance of it, inside the same sandbox as the
//! interpreters: the session's preopened directories (writes charged to the disk quota by the
//! same shadows), its memory cap, the command line's fuel, deadline and cancel flag, and capped
//! output. No host code touches the files such a command names: WASI resolves every path
//! beneath a preopened directory. The one exception is a question, not an access: the
//! permission bits WASI cannot say, which a tool asks through `sandbox.file_mode` and the
//! shell's confined view answers ([`crate::host::file_mode`], [`ToolCall::modes`]).
//!
//! The module is mapped before the jail, like the interpreters (the jail may hide its file);
//! each command instantiates it from an [`InstancePre`], so a command costs its own start, not
//! the module's.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use wasmtime::{InstancePre, Linker, Store, Trap, UpdateDeadline};

use crate::capture::Capture;
use crate::engine::{EngineError, load_module};
use crate::host::{
    BrokenPipe, Control, HostState, SessionConfig, SharedFileModes, SoftInterrupt, new_store,
};

/// The commands of the toolbox, sorted: the list the toolbox program itself is built with.
pub const COMMANDS: &[&str] = &include!("../../runtimes/toolbox/src/commands.rs");

/// The most a tool may write to stdout in one run: as much as a pipe of the shell holds (the
/// shell's pipe cap is this number), since a tool's output is often piped or redirected into a
/// file; the client's own caps apply later, to what reaches it. Past this,
/// the run says on its stderr that its output was cut. A tool writing into a pipe stops
/// instead, at the pipe's room ([`ToolCall::pipe_room`]).
pub const TOOL_OUTPUT_CAP: usize = 32 << 20;
const TOOL_STDERR_CAP: usize = 1 << 20;

/// The toolbox's module, mapped and linked: what a worker (or a fork server, for every worker
/// it forks) loads before its jail.
#[derive(Clone)]
pub struct ToolboxModule(InstancePre<HostState>);

impl std::fmt::Debug for ToolboxModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolboxModule").finish_non_exhaustive()
    }
}

impl ToolboxModule {
    /// Maps the compiled toolbox at `cwasm` and links it.
    ///
    /// # Errors
    /// When it cannot be mapped, or does not link (another build of the worker).
    pub fn load(cwasm: &Path, linker: &Linker<HostState>) -> Result<Self, EngineError> {
        let module = load_module(crate::engine::engine(), cwasm)?;
        let pre = linker
            .instantiate_pre(&module)
            .map_err(|e| EngineError::Compile {
                path: cwasm.to_path_buf(),
                message: format!("the toolbox does not link: {e:#}"),
            })?;
        Ok(Self(pre))
    }

    /// The toolbox of the session whose `/app` is `workspace`, with `config`'s directories and
    /// limits.
    pub fn for_session(&self, workspace: &Path, config: &SessionConfig) -> Toolbox {
        let mut config = config.clone();
        config.stdout_cap = TOOL_OUTPUT_CAP;
        config.stderr_cap = TOOL_STDERR_CAP;
        Toolbox {
            pre: self.0.clone(),
            workspace: workspace.to_path_buf(),
            config,
        }
    }
}

/// The toolbox of one session, ready to instantiate.
pub struct Toolbox {
    pre: InstancePre<HostState>,
    /// The session's directories and limits, as its interpreter has them.
    workspace: PathBuf,
    config: SessionConfig,
}

impl std::fmt::Debug for Toolbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Toolbox").finish_non_exhaustive()
    }
}

/// One command of the toolbox to run.
#[derive(Debug)]
pub struct ToolCall<'a> {
    /// The command's name and arguments (`argv[0]` is the command's name).
    pub argv: &'a [String],
    /// The shell's working directory (a guest path).
    pub cwd: &'a str,
    /// The shell's variables.
    pub env: &'a [(String, String)],
    pub stdin: &'a [u8],
    /// When stdout is a pipe: the bytes it still takes. A tool that writes more ends there,
    /// as a process ends at SIGPIPE once its reader is gone ([`ToolEnd::BrokenPipe`]); the
    /// stages of a pipeline run one after another, so without this `yes | head -1` would run
    /// until the deadline.
    pub pipe_room: Option<usize>,
    /// Where `sandbox.file_mode` looks modes up (the shell's view of the session's mounts).
    pub modes: Option<SharedFileModes>,
    pub deadline: Instant,
    pub cancel: &'a Arc<AtomicBool>,
    /// The fuel it may burn.
    pub fuel: u64,
}

/// How a command of the toolbox ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolEnd {
    /// It exited with this status.
    Exited(i32),
    /// It wrote more than its stdout pipe takes ([`ToolCall::pipe_room`]) and was stopped
    /// there, as by SIGPIPE (a shell says status 141).
    BrokenPipe,
    /// The command line's deadline passed.
    TimedOut,
    Cancelled,
    OutOfFuel,
    /// It trapped (a bug of the tool, or its memory cap): the message.
    Failed(String),
}

/// What a command of the toolbox did.
#[derive(Debug)]
pub struct ToolRun {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub end: ToolEnd,
    pub fuel_consumed: u64,
    /// Whether it read all of its stdin (a reader that stops early, `head -1`, does not).
    pub read_all: bool,
}

impl Toolbox {
    /// Whether `name` is a command of the toolbox.
    pub fn has(name: &str) -> bool {
        COMMANDS.binary_search(&name).is_ok()
    }

    /// Runs `call` in a fresh instance and says what it did.
    pub fn run(&self, call: &ToolCall<'_>) -> ToolRun {
        let mut env: Vec<(&str, &str)> = call
            .env
            .iter()
            .filter(|(name, _)| name != "PWD")
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .collect();
        env.push(("PWD", call.cwd));
        let args: Vec<&str> = call.argv.iter().map(String::as_str).collect();
        let failed = |message: String| ToolRun {
            stdout: Vec::new(),
            stderr: Vec::new(),
            end: ToolEnd::Failed(message),
            fuel_consumed: 0,
            read_all: false,
        };
        let state = match HostState::new(
            &self.workspace,
            &env,
            &args,
            &self.config,
            SoftInterrupt::None,
            Arc::new(Control::default()),
        ) {
            Ok(state) => state,
            Err(e) => return failed(format!("cannot open the session's directories: {e:#}")),
        };
        let mut store = match new_store(self.pre.module().engine(), state, call.fuel) {
            Ok(store) => store,
            Err(e) => return failed(format!("{e:#}")),
        };
        store.data_mut().piped_stdin = call.stdin.iter().copied().collect();
        store.data_mut().file_modes = call.modes.clone();
        if let Some(room) = call.pipe_room {
            let state = store.data_mut();
            state.stdout = Capture::new(room.min(TOOL_OUTPUT_CAP));
            state.stdout_is_pipe = true;
        }
        let (deadline, cancel) = (call.deadline, call.cancel.clone());
        store.epoch_deadline_callback(move |_| {
            if cancel.load(Ordering::Relaxed) || Instant::now() >= deadline {
                Ok(UpdateDeadline::Interrupt)
            } else {
                Ok(UpdateDeadline::Continue(1))
            }
        });
        let end = self.start(&mut store, call);
        let fuel_consumed = call.fuel.saturating_sub(store.get_fuel().unwrap_or(0));
        let state = store.data_mut();
        let read_all = state.piped_stdin.is_empty();
        let (stdout, cut) = state.stdout.take();
        let mut stderr = state.stderr.take().0;
        if cut && end != ToolEnd::BrokenPipe {
            stderr.extend_from_slice(
                format!(
                    "{}: its output was cut at {} MiB (a command's most); write less, or in \
                     parts\n",
                    call.argv[0],
                    TOOL_OUTPUT_CAP >> 20
                )
                .as_bytes(),
            );
        }
        ToolRun {
            stdout,
            stderr,
            end,
            fuel_consumed,
            read_all,
        }
    }

    /// Instantiates the toolbox in `store` and runs its `_start`.
    fn start(&self, store: &mut Store<HostState>, call: &ToolCall<'_>) -> ToolEnd {
        let ran = self.pre.instantiate(&mut *store).and_then(|instance| {
            // The shadows of the standard streams and of file writes read the guest's buffers
            // through it.
            store.data_mut().memory = instance.get_memory(&mut *store, "memory");
            let start = instance.get_typed_func::<(), ()>(&mut *store, "_start")?;
            start.call(&mut *store, ())
        });
        let Err(error) = ran else {
            return ToolEnd::Exited(0);
        };
        if let Some(exit) = error.downcast_ref::<wasmtime_wasi::I32Exit>() {
            return ToolEnd::Exited(exit.0);
        }
        if error.downcast_ref::<BrokenPipe>().is_some() {
            return ToolEnd::BrokenPipe;
        }
        match error.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) if call.cancel.load(Ordering::Relaxed) => ToolEnd::Cancelled,
            Some(Trap::Interrupt) => ToolEnd::TimedOut,
            Some(Trap::OutOfFuel) => ToolEnd::OutOfFuel,
            _ if store.data().limiter.hit_cap => {
                ToolEnd::Failed("out of memory (the session's memory cap)".into())
            }
            _ => ToolEnd::Failed(format!("{error:#}")),
        }
    }
}

/// The toolbox of `runtimes/prepare.sh` for the worker's unit tests, loaded as a worker loads
/// it: compiled into the runtime directory's cache (`SANDBOX_RUNTIME_DIR`, else
/// `target/runtimes`), then mapped and linked, once per test process; the epoch ticker that
/// enforces deadlines runs, as in a worker.
///
/// # Panics
/// When the runtime directory has no toolbox: the shell's tests run its commands, and skipping
/// them would hide that they did not run.
#[cfg(test)]
pub(crate) fn test_module() -> &'static ToolboxModule {
    static MODULE: std::sync::OnceLock<ToolboxModule> = std::sync::OnceLock::new();
    MODULE.get_or_init(|| {
        let dir = crate::engine::test_runtime_dir();
        let wasm = dir.join(sandbox_protocol::TOOLBOX_FILE);
        assert!(
            wasm.is_file(),
            "{}: no toolbox; run runtimes/prepare.sh first (the shell's unit tests run its \
             WebAssembly commands)",
            wasm.display()
        );
        let engine = crate::engine::engine();
        let cached = crate::engine::precompile(engine, "toolbox", &wasm, &dir.join("cache"))
            .unwrap_or_else(|e| panic!("{}: {e}", wasm.display()));
        let linker = crate::host::build_linker(engine).expect("the linker");
        crate::engine::start_epoch_ticker();
        ToolboxModule::load(&cached.cwasm, &linker)
            .unwrap_or_else(|e| panic!("{}: {e}", cached.cwasm.display()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_command_is_one_the_toolbox_program_runs() {
        let program = include_str!("../../runtimes/toolbox/src/main.rs");
        for name in COMMANDS {
            let arm = format!("\"{name}\" => ");
            assert!(
                program.contains(&arm),
                "{name} has no arm in the toolbox's main.rs"
            );
        }
        assert!(
            COMMANDS.windows(2).all(|w| w[0] < w[1]),
            "sorted, no duplicates"
        );
        assert!(Toolbox::has("sha256sum") && Toolbox::has("rm") && Toolbox::has("grep"));
        // The shell's own commands are not tools: they change its state, or run commands.
        for own in [
            "cd", "echo", "printf", "test", "xargs", "env", "python", "sh",
        ] {
            assert!(!Toolbox::has(own), "{own}");
        }
    }
}
