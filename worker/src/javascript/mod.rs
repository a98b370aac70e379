//! A JavaScript session: our QuickJS-NG guest (`runtimes/js-guest`), a WASI reactor whose
//! `sb_eval` export runs one snippet as global script code in a context that lives as long as
//! the instance, so `var`, `let`, `const` and functions persist.
//!
//! A reactor's wasm stack is empty between calls, so after every execution that returned a copy
//! of linear memory is a complete snapshot of the session. When an execution traps (fuel, hard
//! deadline, stack exhaustion), the snapshot is written into a fresh instance and the session
//! continues from the state before that execution: it is rolled back, not lost.
//!
//! How the guest is instantiated and called, and what its answers mean, is in `guest.rs`.

mod guest;

use std::path::Path;
use std::sync::Arc;

use sandbox_protocol::{
    ExecuteRequest, ExecutionKind, ExecutionReport, FrameError, Language, Response, Restart,
    SNAPSHOT_PART, StateAfterRestart,
};
use wasmtime::{Linker, Module, Result};

use self::guest::{EvalResult, Guest, STARTUP_FUEL};
use crate::WorkerError;
use crate::connection::{Link, Task, WakeAt};
use crate::host::{Control, HostState, Outcome, SessionConfig, classify_trap, fuel_for};

/// QuickJS-NG version vendored by rquickjs 0.14.0.
pub const QUICKJS_VERSION: &str = "0.16.2";

/// Lists the global bindings user code created, as JSON: the properties of `globalThis` that
/// were not there when the session started (`var`, functions, assignments) and the script
/// scope's `let`/`const`/`class` bindings, which QuickJS keeps off `globalThis` (the guest's
/// `__sandboxLexicals` names them; a binding still in its temporal dead zone is skipped).
const INSPECT: &str = r#"(() => {
  const base = new Set(globalThis.__sandboxBaseline || []);
  const found = new Map();
  for (const name of Object.getOwnPropertyNames(globalThis)) {
    if (base.has(name) || name === "__sandboxBaseline") continue;
    try { found.set(name, globalThis[name]); } catch (e) { }
  }
  const lexicals = typeof __sandboxLexicals === "function" ? __sandboxLexicals() : [];
  for (const name of lexicals) {
    try { found.set(name, (0, eval)(name)); } catch (e) { }
  }
  const isClass = (f) => {
    const proto = Object.getOwnPropertyDescriptor(f, "prototype");
    return proto !== undefined && proto.writable === false;
  };
  const variables = [];
  for (const name of [...found.keys()].sort()) {
    const value = found.get(name);
    const type = value === null ? "null"
      : Array.isArray(value) ? "array"
      : typeof value !== "function" ? typeof value
      : isClass(value) ? "class" : "function";
    let repr;
    try { repr = typeof value === "function" ? `[${type} ${value.name}]` : JSON.stringify(value) ?? String(value); }
    catch (e) { repr = String(value); }
    if (repr.length > 120) repr = repr.slice(0, 117) + "...";
    variables.push({ name, type, repr });
  }
  return JSON.stringify({ variables, modules: [], imported: [] });
})()"#;

/// Remembers the built-in globals right after start-up, for [`INSPECT`].
const BASELINE: &str = "Object.defineProperty(globalThis, '__sandboxBaseline', { value: Object.getOwnPropertyNames(globalThis), enumerable: false }); undefined";

/// What [`JsSession::settle`] copies into the rollback point.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stale {
    Nothing,
    /// The pages the state layer after the execution sent: every other page is as the last
    /// snapshot holds it (a trivial call changes a few dozen of the memory's thousand pages).
    Pages(Vec<u32>),
    /// The whole memory (4 MiB or more: about a fifth of a warm call to copy).
    Whole,
}

/// A QuickJS instance with its runtime and context created before its session was known
/// ([`JsSession::wake_ahead`]), and the copy of its memory taken then.
pub struct WokenAhead {
    guest: Guest,
    snapshot: Vec<u8>,
    base_bytes: usize,
    /// The guest paths of its directories after `/app`, in order.
    mounts: Vec<String>,
}

/// One JavaScript session.
pub struct JsSession<'m> {
    module: &'m Module,
    linker: &'m Linker<HostState>,
    workspace: &'m Path,
    config: SessionConfig,
    control: Arc<Control>,
    guest: Guest,
    /// Linear memory after the last execution that returned (once [`JsSession::settle`] ran).
    snapshot: Vec<u8>,
    /// What of the memory the last execution that returned left is not in `snapshot` yet:
    /// copied after the report is sent.
    snapshot_stale: Stale,
    cell: i32,
    /// The instance's runtime and context are not created yet ([`WakeAt::FirstNeed`]): a
    /// restore or [`JsSession::wake`] comes first.
    asleep: bool,
    /// What a fresh instance's memory is ([`crate::snapshot::module_identity`]), and its size.
    identity: String,
    base_bytes: usize,
    /// What of its memory the supervisor has (see [`crate::snapshot::Tracker`]).
    tracker: crate::snapshot::Tracker,
    /// It runs one execution and is dropped with its report ([`JsSession::start_alone`]): it
    /// keeps no rollback point.
    alone: bool,
}

impl<'m> JsSession<'m> {
    /// Instantiates the guest and creates its runtime and context.
    ///
    /// # Errors
    /// When the guest cannot be instantiated or initialised.
    pub fn start(
        module: &'m Module,
        linker: &'m Linker<HostState>,
        workspace: &'m Path,
        config: SessionConfig,
        control: Arc<Control>,
    ) -> Result<Self> {
        let mut session = Self::instantiate(module, linker, workspace, config, control)?;
        session.wake()?;
        Ok(session)
    }

    /// [`JsSession::start`] for one execution, after which it is dropped (a `node` command
    /// line of a session's shell): it keeps no copy of its memory to roll back to, since
    /// nothing of it outlives the report, and a trap just ends the execution (its report
    /// carries no restart: the session's own interpreter was not involved).
    ///
    /// # Errors
    /// When the guest cannot be instantiated or initialised.
    pub fn start_alone(
        module: &'m Module,
        linker: &'m Linker<HostState>,
        workspace: &'m Path,
        config: SessionConfig,
        control: Arc<Control>,
    ) -> Result<Self> {
        let mut session = Self::instantiate(module, linker, workspace, config, control)?;
        session.alone = true;
        session.wake()?;
        Ok(session)
    }

    /// Instantiates the guest, leaving its runtime and context to [`JsSession::wake`] or to a
    /// restore (which replaces the instance).
    ///
    /// # Errors
    /// When the guest cannot be instantiated.
    pub fn instantiate(
        module: &'m Module,
        linker: &'m Linker<HostState>,
        workspace: &'m Path,
        config: SessionConfig,
        control: Arc<Control>,
    ) -> Result<Self> {
        let guest = Guest::instantiate(module, linker, workspace, &config, control.clone())?;
        let base_bytes = guest.memory.data_size(&guest.store);
        let asleep = (Vec::new(), base_bytes, true);
        Ok(Self::around(
            (module, linker, workspace),
            config,
            control,
            guest,
            asleep,
        ))
    }

    /// A session around `guest`: its rollback point `snapshot` (empty while `asleep`, before
    /// its runtime and context exist) and the size its memory started at.
    fn around(
        (module, linker, workspace): (&'m Module, &'m Linker<HostState>, &'m Path),
        config: SessionConfig,
        control: Arc<Control>,
        guest: Guest,
        (snapshot, base_bytes, asleep): (Vec<u8>, usize, bool),
    ) -> Self {
        Self {
            module,
            linker,
            workspace,
            config,
            control,
            guest,
            snapshot,
            snapshot_stale: Stale::Nothing,
            cell: 0,
            asleep,
            identity: String::new(),
            base_bytes,
            tracker: crate::snapshot::Tracker::default(),
            alone: false,
        }
    }

    /// Creates the runtime and context of an instance that has none yet; nothing otherwise.
    ///
    /// # Errors
    /// When the guest cannot initialise.
    pub fn wake(&mut self) -> Result<()> {
        if !self.asleep {
            return Ok(());
        }
        let guest = &mut self.guest;
        guest.store.set_fuel(STARTUP_FUEL)?;
        guest.init(self.config.memory_bytes)?;
        guest.run(BASELINE.as_bytes(), 0)?;
        if !self.alone {
            self.snapshot = guest.memory.data(&guest.store).to_vec();
        }
        self.asleep = false;
        Ok(())
    }

    /// An instance created and woken before its session is known (a fork server's spare), in
    /// `workspace`'s directories with `config`'s: what [`JsSession::adopt`] takes over.
    ///
    /// # Errors
    /// When the guest cannot be instantiated or initialised.
    pub fn wake_ahead(
        module: &Module,
        linker: &Linker<HostState>,
        workspace: &Path,
        config: &SessionConfig,
    ) -> Result<WokenAhead> {
        let mut session =
            JsSession::instantiate(module, linker, workspace, config.clone(), Arc::default())?;
        session.wake()?;
        let mounts = config.mounts.iter().map(|m| m.guest.clone()).collect();
        Ok(WokenAhead {
            guest: session.guest,
            snapshot: session.snapshot,
            base_bytes: session.base_bytes,
            mounts,
        })
    }

    /// The session of `workspace` with `config`, in the instance `woken` ahead: it moves into
    /// the session's directories, settings and cancel control, its clock going on, and its
    /// heap takes the session's cap. Its rollback point is the memory it was woken with; the
    /// heap limit there is the spare's until the first execution's state replaces it (a
    /// rollback sets the session's again: [`JsSession::rollback`]).
    ///
    /// # Errors
    /// When the session's directories are laid out otherwise than the spare's (a shared
    /// volume: the guest's libc holds the descriptors of the spare's), or the guest refuses
    /// the new limit; then the caller starts an instance of its own.
    pub fn adopt(
        (module, linker): (&'m Module, &'m Linker<HostState>),
        workspace: &'m Path,
        config: SessionConfig,
        control: Arc<Control>,
        woken: WokenAhead,
    ) -> Result<Self> {
        let WokenAhead {
            mut guest,
            snapshot,
            base_bytes,
            mounts,
        } = woken;
        if !config.preopens_in_order(&mounts) {
            return Err(wasmtime::format_err!(
                "the session's directories are not the spare's"
            ));
        }
        let config = config.continuing_clock(guest.store.data().clock_base());
        let state = Guest::host_state(workspace, &config, control.clone())?;
        guest.take_state(state);
        guest.limit_heap(config.memory_bytes)?;
        let awake = (snapshot, base_bytes, false);
        Ok(Self::around(
            (module, linker, workspace),
            config,
            control,
            guest,
            awake,
        ))
    }

    /// Names the module's initial memory in this session's snapshots.
    pub fn with_identity(mut self, identity: &str) -> Self {
        self.identity = identity.to_owned();
        self
    }

    /// A snapshot of the context between executions (as the last one that returned left it).
    pub fn take_snapshot(&mut self) -> (Vec<u8>, sandbox_protocol::SnapshotInfo) {
        self.settle();
        let tracker = std::mem::take(&mut self.tracker);
        let taken = crate::snapshot::take(self.at_rest(), &tracker);
        self.tracker = tracker;
        taken
    }

    /// Sends the layer of its state the supervisor does not have yet, in parts.
    pub fn send_state_layer(&mut self, link: &Link) -> Result<(), FrameError> {
        self.state_layer(|part| link.send_state(part))
    }

    /// The layer of its state the supervisor does not have yet, handed to `emit` in parts.
    fn state_layer<E>(
        &mut self,
        emit: impl FnMut(crate::snapshot::LayerPart) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut tracker = std::mem::take(&mut self.tracker);
        let sent = crate::snapshot::layer_of(self.at_rest(), &mut tracker, SNAPSHOT_PART, emit);
        // The layer holds every page the execution changed: only those need copying.
        if let (Stale::Whole, Some(pages)) = (&self.snapshot_stale, tracker.last_changes()) {
            self.snapshot_stale = Stale::Pages(pages.to_vec());
        }
        self.tracker = tracker;
        sent
    }

    fn at_rest(&mut self) -> crate::snapshot::AtRest<'_> {
        crate::snapshot::AtRest {
            store: &mut self.guest.store,
            memory: self.guest.memory,
            base_bytes: self.base_bytes,
            module: &self.identity,
            cell: u64::try_from(self.cell).unwrap_or(0),
            first_free: 4 + self.config.mounts.len() as u32,
        }
    }

    /// Replaces the context with `bytes`' (a snapshot of this module): written into a fresh
    /// instance, which becomes the rollback point too. On failure nothing changes.
    ///
    /// # Errors
    /// When the snapshot is malformed, of another module, or over the memory cap.
    pub fn restore(&mut self, bytes: &[u8]) -> Result<sandbox_protocol::RestoreInfo> {
        let started = std::time::Instant::now();
        let layers = crate::snapshot::parse_layers(bytes)?;
        let config = SessionConfig {
            clock_since: Some(crate::snapshot::clock_since(&layers)),
            ..self.config.clone()
        };
        let mut guest = Guest::instantiate(
            self.module,
            self.linker,
            self.workspace,
            &config,
            self.control.clone(),
        )?;
        let base_bytes = guest.memory.data_size(&guest.store);
        crate::snapshot::restore_into(
            &layers,
            &mut guest.store,
            guest.memory,
            &self.identity,
            config.memory_bytes,
        )?;
        let last = layers.last().map_or(0, |l| l.meta.memory_bytes);
        self.guest = guest;
        self.base_bytes = base_bytes;
        self.cell = layers
            .last()
            .map_or(0, |l| i32::try_from(l.meta.cell).unwrap_or(0));
        self.tracker.sync(self.guest.memory.data(&self.guest.store));
        self.snapshot_stale = Stale::Whole;
        self.settle();
        // A state is taken only of a context that exists.
        self.asleep = false;
        Ok(sandbox_protocol::RestoreInfo {
            took_us: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
            memory_bytes: last,
        })
    }

    /// Runs one execution and reports it; a trap rolls the session back.
    ///
    /// # Errors
    /// When the session can neither be rolled back nor recreated: it cannot go on.
    pub fn execute(&mut self, request: &ExecuteRequest) -> Result<ExecutionReport, WorkerError> {
        self.settle();
        self.cell += 1;
        self.guest.store.data_mut().begin(request);
        let inspect;
        let request = match request.kind {
            ExecutionKind::User => request,
            ExecutionKind::Inspect => {
                inspect = ExecuteRequest {
                    code: INSPECT.into(),
                    ..request.clone()
                };
                &inspect
            }
        };
        if !request.argv.is_empty() {
            // `node FILE ARGS` from the shell: scriptArgs as in qjs.
            let args = serde_json::to_string(&request.argv).unwrap_or_else(|_| "[]".into());
            let set = ExecuteRequest {
                code: format!("globalThis.scriptArgs = {args}; undefined"),
                ..request.clone()
            };
            let _ = self.call_eval(&set);
        }
        self.guest.store.data_mut().piped_stdin = request.stdin.iter().copied().collect();
        let called = self.call_eval(request);
        self.guest.store.data_mut().piped_stdin.clear();
        let fuel_left = self.guest.store.get_fuel().unwrap_or(0);
        match called {
            Ok(result) => {
                let mut outcome = result.into_outcome(self.guest.store.data_mut());
                if request.kind == ExecutionKind::Inspect {
                    // The guest returns the repr of a JSON string: unquote it.
                    outcome.result = outcome
                        .result
                        .and_then(|r| serde_json::from_str::<String>(&r).ok());
                }
                // Even a thrown error leaves a consistent context (what ran before the throw
                // stays defined, as in Python), so it becomes the new rollback point.
                self.snapshot_stale = Stale::Whole;
                Ok(self.guest.store.data_mut().finish(fuel_left, outcome, None))
            }
            Err(trap) => self.recover(&trap, fuel_left),
        }
    }

    /// Reports an execution that trapped, after rolling the session back to the snapshot (or,
    /// failing that, starting a fresh context).
    ///
    /// # Errors
    /// When no context can be started any more.
    fn recover(
        &mut self,
        trap: &wasmtime::Error,
        fuel_left: u64,
    ) -> Result<ExecutionReport, WorkerError> {
        let error = classify_trap(trap, self.guest.store.data());
        if self.alone {
            let outcome = Outcome {
                error: Some(error),
                ..Outcome::default()
            };
            return Ok(self.guest.store.data_mut().finish(fuel_left, outcome, None));
        }
        let (stdout, stderr) = {
            let state = self.guest.store.data_mut();
            (state.stdout.take(), state.stderr.take())
        };
        let active = self.guest.store.data_mut().active.take();
        let restart = match self.rollback() {
            Ok(()) => Restart {
                reason: format!(
                    "{}; the JavaScript context was rolled back to its state before this execution",
                    error.message
                ),
                state: StateAfterRestart::RolledBack,
            },
            Err(e) => {
                tracing::error!(error = %e, "rollback failed, starting a fresh context");
                self.restart_fresh()?;
                Restart {
                    reason: format!(
                        "{}; the JavaScript context could not be restored and was recreated",
                        error.message
                    ),
                    state: StateAfterRestart::Lost,
                }
            }
        };
        // Report through the new instance's state, with the old execution's data.
        let state = self.guest.store.data_mut();
        state.active = active;
        state.stdout.push(&stdout.0);
        state.stderr.push(&stderr.0);
        let mut report = state.finish(
            fuel_left,
            Outcome {
                error: Some(error),
                ..Outcome::default()
            },
            Some(restart),
        );
        report.stdout_truncated |= stdout.1;
        report.stderr_truncated |= stderr.1;
        Ok(report)
    }

    /// Runs `request`'s code with its fuel and reads the guest's answer.
    fn call_eval(&mut self, request: &ExecuteRequest) -> Result<EvalResult> {
        self.guest.store.set_fuel(fuel_for(request.fuel))?;
        let packed = self.guest.run(request.code.as_bytes(), self.cell)?;
        self.guest.answer(packed)
    }

    /// Makes the memory the last execution left the rollback point, if it is not yet, and has
    /// the kernel watch it if the last layer left it unwatched: called after its report went
    /// out, and before the next execution in any case.
    pub fn settle(&mut self) {
        let memory = self.guest.memory.data(&self.guest.store);
        self.tracker.watch_from_now(memory);
        match std::mem::replace(&mut self.snapshot_stale, Stale::Nothing) {
            Stale::Nothing => {}
            Stale::Pages(pages) => {
                // A memory that grew holds zeros past the old end, but for the pages sent.
                self.snapshot.resize(memory.len(), 0);
                for page in pages {
                    let at = page as usize * crate::snapshot::PAGE;
                    let end = (at + crate::snapshot::PAGE).min(memory.len());
                    self.snapshot[at..end].copy_from_slice(&memory[at..end]);
                }
            }
            Stale::Whole => {
                self.snapshot.clear();
                self.snapshot.extend_from_slice(memory);
            }
        }
    }

    /// Writes the snapshot into a fresh instance; no `sb_init`, the memory already holds the
    /// initialised runtime.
    fn rollback(&mut self) -> Result<()> {
        let mut guest = Guest::instantiate(
            self.module,
            self.linker,
            self.workspace,
            &self.config,
            self.control.clone(),
        )?;
        let have = guest.memory.data_size(&guest.store);
        if self.snapshot.len() > have {
            let pages = (self.snapshot.len() - have).div_ceil(65536) as u64;
            guest.memory.grow(&mut guest.store, pages)?;
        }
        guest.memory.data_mut(&mut guest.store)[..self.snapshot.len()]
            .copy_from_slice(&self.snapshot);
        // A rollback point taken before the session had its instance (a spare's, see
        // [`JsSession::adopt`]) holds the spare's heap limit.
        guest.limit_heap(self.config.memory_bytes)?;
        // The memory is again the state the supervisor has (taken after the same execution as
        // the last layer): the tracker keeps its hashes, but the kernel watched the old mapping.
        self.guest = guest;
        self.tracker.memory_replaced();
        Ok(())
    }

    /// Last resort when the snapshot cannot be restored: a brand-new context.
    ///
    /// # Errors
    /// When even that cannot start.
    fn restart_fresh(&mut self) -> Result<(), WorkerError> {
        let fresh = Self::start(
            self.module,
            self.linker,
            self.workspace,
            self.config.clone(),
            self.control.clone(),
        )
        .map_err(|e| {
            WorkerError::Runtime(format!("cannot recreate the JavaScript context: {e:#}"))
        })?;
        self.guest = fresh.guest;
        self.snapshot = fresh.snapshot;
        self.base_bytes = fresh.base_bytes;
        self.tracker.reset();
        Ok(())
    }
}

/// Runs the JavaScript session until the supervisor goes away.
///
/// # Errors
/// When the guest cannot start, or cannot go on after a trap.
pub fn serve(
    (module, identity): (&Module, &str),
    (linker, ahead): (&Linker<HostState>, Option<WokenAhead>),
    workspace: &Path,
    config: &SessionConfig,
    (link, wake): (Link, WakeAt),
) -> Result<(), WorkerError> {
    let failed =
        |e: wasmtime::Error| WorkerError::Runtime(format!("QuickJS failed to start: {e:#}"));
    // A resumed session's state replaces whatever instance it has: a spare's buys nothing.
    let ahead = ahead.filter(|_| wake == WakeAt::Start);
    let adopted = ahead.and_then(|woken| {
        let adopted = JsSession::adopt(
            (module, linker),
            workspace,
            config.clone(),
            link.control.clone(),
            woken,
        );
        adopted
            .inspect_err(|e| tracing::debug!(error = %format!("{e:#}"), "a new instance instead of the spare's"))
            .ok()
    });
    let woken_ahead = adopted.is_some();
    let session = match adopted {
        Some(session) => session,
        None => {
            let mut session = JsSession::instantiate(
                module,
                linker,
                workspace,
                config.clone(),
                link.control.clone(),
            )
            .map_err(failed)?;
            if wake == WakeAt::Start {
                session.wake().map_err(failed)?;
            }
            session
        }
    };
    if wake == WakeAt::Start {
        tracing::debug!(
            us = link.ready_clock.elapsed_us(),
            woken_ahead,
            "woke for the session"
        );
    }
    if link
        .send_ready(Language::JavaScript, QUICKJS_VERSION.into(), false)
        .is_err()
    {
        return Ok(());
    }
    let mut session = session.with_identity(identity);
    while let Some(task) = link.next_task() {
        if !matches!(task, Task::Restore(_)) {
            // No state came to replace the instance: the session starts afresh after all.
            session.wake().map_err(failed)?;
        }
        let sent = match task {
            Task::Run(job) => {
                let mut report = session.execute(&job.request)?;
                // A call that trapped left the state the supervisor has (rolled back), or a
                // fresh context it replaces with that state: nothing new to send. Otherwise
                // the call is answered first and its layer follows, off the call's path.
                report.state_follows = report.restart.is_none();
                let follows = report.state_follows;
                let sent = link.deliver(report).and_then(|()| {
                    if follows {
                        session.send_state_layer(&link)
                    } else {
                        Ok(())
                    }
                });
                session.settle();
                sent
            }
            Task::Snapshot => link.send_snapshot(Ok(session.take_snapshot())),
            Task::SendState => {
                let sent = session.send_state_layer(&link);
                session.settle();
                sent
            }
            Task::Restore(bytes) => {
                let restored = session.restore(&bytes).map_err(|e| format!("{e:#}"));
                drop(bytes);
                link.send(&Response::Restored(restored))
            }
        };
        if sent.is_err() {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::OnceLock;

    use sandbox_protocol::ErrorKind;

    use super::*;
    use crate::engine::{compatibility_key, engine, load_module, sha256_hex};
    use crate::host::build_linker;

    /// The memory cap of the test sessions.
    const MEMORY: usize = 64 << 20;

    /// The QuickJS guest of `runtimes/prepare.sh`: its precompiled module when the cache has
    /// one, else compiled here.
    fn quickjs() -> &'static Module {
        static MODULE: OnceLock<Module> = OnceLock::new();
        MODULE.get_or_init(|| {
            let dir = crate::engine::test_runtime_dir();
            let wasm = dir.join("quickjs-ng.wasm");
            let bytes = std::fs::read(&wasm).unwrap_or_else(|e| {
                panic!("{}: {e} (run runtimes/prepare.sh first)", wasm.display())
            });
            let cwasm = dir.join("cache").join(format!(
                "javascript-{}-{}.cwasm",
                &sha256_hex(&bytes)[..16],
                compatibility_key(engine())
            ));
            if cwasm.is_file() {
                load_module(engine(), &cwasm).unwrap()
            } else {
                Module::new(engine(), &bytes).unwrap()
            }
        })
    }

    /// The configuration of a test session: no mounts, no quota, 1 MiB captures.
    fn test_config() -> SessionConfig {
        SessionConfig {
            mounts: Vec::new(),
            memory_bytes: MEMORY,
            stdout_cap: 1 << 20,
            stderr_cap: 1 << 20,
            quota: None,
            clock_since: None,
        }
    }

    /// Runs `test` on a thread with the guest thread's stack (Wasmtime runs wasm on the
    /// caller's native stack; the default 2 MiB is less than the wasm stack), with a linker
    /// and a fresh workspace.
    fn on_guest_stack(test: impl FnOnce(&Linker<HostState>, &Path) + Send + 'static) {
        std::thread::Builder::new()
            .stack_size(16 << 20)
            .spawn(move || {
                let linker = build_linker(engine()).unwrap();
                let workspace = tempfile::tempdir().unwrap();
                test(&linker, workspace.path());
            })
            .unwrap()
            .join()
            .unwrap();
    }

    /// Runs `test` with a fresh session (see [`on_guest_stack`]).
    fn with_session(test: impl FnOnce(&mut JsSession<'_>, &Path) + Send + 'static) {
        on_guest_stack(|linker, workspace| {
            let control = Arc::new(Control::default());
            let mut session =
                JsSession::start(quickjs(), linker, workspace, test_config(), control).unwrap();
            test(&mut session, workspace);
        });
    }

    fn request(code: &str) -> ExecuteRequest {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        ExecuteRequest::user(format!("exec-{n}"), code.into(), 10_000_000_000, 30_000)
    }

    fn run(session: &mut JsSession<'_>, code: &str) -> ExecutionReport {
        session
            .execute(&request(code))
            .expect("the session goes on")
    }

    /// The result of code that must succeed.
    fn value(session: &mut JsSession<'_>, code: &str) -> String {
        let report = run(session, code);
        assert!(report.error.is_none(), "{code}: {report:?}");
        report.result.unwrap_or_default()
    }

    const DEEP: &str = "var lost = 1; console.log('before'); function down(n) { let a = [n, n + 1, n + 2]; return down(n + 1) + a[0] } down(0)";

    #[test]
    fn a_trap_restores_the_state_after_the_last_call_that_returned() {
        with_session(|session, _| {
            value(session, "var kept = 'still here'");
            // A thrown error is not a trap: what ran before the throw stays.
            let thrown = run(session, "var partial = 1; null.x");
            assert_eq!(thrown.error.unwrap().kind, ErrorKind::Runtime);
            assert!(thrown.restart.is_none());

            let deep = run(session, DEEP);
            assert_eq!(deep.error.as_ref().unwrap().kind, ErrorKind::StackOverflow);
            let restart = deep.restart.expect("a restart");
            assert_eq!(restart.state, StateAfterRestart::RolledBack);
            assert!(restart.reason.ends_with(
                "; the JavaScript context was rolled back to its state before this execution"
            ));
            assert_eq!(deep.stdout, b"before\n", "output before the trap is kept");
            assert_eq!(
                value(session, "[typeof lost, kept, partial].join()"),
                r#""undefined,still here,1""#
            );
        });
    }

    /// A session started for one execution (a shell's `node`) keeps no rollback copy, and a
    /// trap just ends its execution: no restart, since it is dropped with its report.
    #[test]
    fn a_session_alone_keeps_no_rollback_point_and_reports_no_restart() {
        on_guest_stack(|linker, workspace| {
            let control = Arc::new(Control::default());
            let mut alone =
                JsSession::start_alone(quickjs(), linker, workspace, test_config(), control)
                    .unwrap();
            assert!(alone.snapshot.is_empty(), "no copy of its memory");
            let deep = run(&mut alone, DEEP);
            assert_eq!(deep.error.as_ref().unwrap().kind, ErrorKind::StackOverflow);
            assert!(deep.restart.is_none(), "{deep:?}");
            assert_eq!(deep.stdout, b"before\n", "output before the trap is kept");
        });
    }

    /// A snapshot carries every kind of value, closures and suspended generators included, and
    /// restoring it brings all of them back; one of another module changes nothing.
    #[test]
    fn a_snapshot_restores_closures_generators_and_classes() {
        with_session(|session, _| {
            session.identity = "test-module".into();
            value(
                session,
                "let x = 41; const add = (n) => x + n; class P { constructor(v) { this.v = v } get twice() { return this.v * 2 } }\n\
                 var p = new P(21); function* counter() { let i = 0; while (true) yield ++i } var it = counter(); it.next(); it.next();",
            );
            let (bytes, info) = session.take_snapshot();
            assert_eq!(info.bytes, bytes.len() as u64);
            assert!(info.changed_bytes > 0 && info.changed_bytes <= info.memory_bytes);
            value(session, "x = 1000; p = null; it.next(); var later = 1");
            let restored = session.restore(&bytes).expect("restore");
            assert_eq!(restored.memory_bytes, info.memory_bytes);
            assert_eq!(
                value(
                    session,
                    "[add(1), p.twice, it.next().value, typeof later].join()"
                ),
                r#""42,42,3,undefined""#
            );
            // The restored context is the rollback point and a base for the next snapshot.
            let (again, _) = session.take_snapshot();
            value(session, "x = 5");
            session
                .restore(&again)
                .expect("a snapshot of a restored context");
            assert_eq!(value(session, "x"), "41");
            // Another module's snapshot, or a damaged one, is refused and changes nothing.
            session.identity = "another-module".into();
            let refused = session.restore(&bytes).unwrap_err();
            assert!(
                format!("{refused:#}").contains("another interpreter build"),
                "{refused:#}"
            );
            assert!(session.restore(&bytes[..bytes.len() / 2]).is_err());
            assert_eq!(value(session, "x"), "41");
        });
    }

    /// After a state layer, the rollback point takes only the pages the layer sent, and a trap
    /// then restores the state after the last call that returned, memory growth included.
    #[test]
    fn the_rollback_point_follows_the_pages_each_layer_sent() {
        with_session(|session, _| {
            let layer = |session: &mut JsSession<'_>| {
                let sent = session.state_layer(|_| Ok::<(), ()>(()));
                assert!(sent.is_ok());
                session.settle();
            };
            value(session, "var kept = 'first'");
            layer(session);
            let before = session.guest.memory.data_size(&session.guest.store);
            value(
                session,
                "var big = new Array(2000000).fill(7); kept = 'second'",
            );
            assert!(matches!(session.snapshot_stale, Stale::Whole));
            layer(session);
            assert!(
                session.guest.memory.data_size(&session.guest.store) > before,
                "grown"
            );
            value(session, "big[5] = 8; kept = 'third'");
            layer(session);
            assert_eq!(
                session.snapshot,
                session.guest.memory.data(&session.guest.store),
                "the rollback point is the memory"
            );
            let deep = run(session, DEEP);
            assert_eq!(deep.restart.unwrap().state, StateAfterRestart::RolledBack);
            assert_eq!(
                value(session, "[kept, big.length, big[5], big[6]].join()"),
                r#""third,2000000,8,7""#
            );
        });
    }

    #[test]
    fn a_rollback_that_cannot_be_restored_starts_a_fresh_context() {
        with_session(|session, _| {
            value(session, "var kept = 'still here'");
            // A snapshot larger than the memory cap: the fresh instance cannot grow to hold it.
            session.settle();
            session.snapshot = vec![0; MEMORY + 65536];
            let deep = run(session, DEEP);
            assert_eq!(deep.error.as_ref().unwrap().kind, ErrorKind::StackOverflow);
            let restart = deep.restart.expect("a restart");
            assert_eq!(restart.state, StateAfterRestart::Lost);
            assert!(
                restart
                    .reason
                    .ends_with("; the JavaScript context could not be restored and was recreated"),
                "{}",
                restart.reason
            );
            assert_eq!(deep.stdout, b"before\n");
            assert_eq!(
                value(session, "[typeof lost, typeof kept].join()"),
                r#""undefined,undefined""#,
                "nothing of before survives"
            );
            // The fresh context has a snapshot of its own: the next trap rolls back to it.
            value(session, "var again = 2");
            let deep = run(session, DEEP);
            assert_eq!(deep.restart.unwrap().state, StateAfterRestart::RolledBack);
            assert_eq!(value(session, "again + (typeof lost)"), r#""2undefined""#);
        });
    }

    #[test]
    fn inspect_lists_what_user_code_defined() {
        with_session(|session, _| {
            value(
                session,
                "var greeting = 'hi'; function f() {} var list = [1, 2]; let hidden = 1; class Hidden {}",
            );
            let report = session
                .execute(&ExecuteRequest {
                    kind: ExecutionKind::Inspect,
                    ..request("ignored")
                })
                .unwrap();
            let state: serde_json::Value =
                serde_json::from_str(&report.result.expect("a listing")).unwrap();
            // Top-level `let`/`class` live in the script scope; the guest names them.
            assert_eq!(
                state["variables"],
                serde_json::json!([
                    { "name": "Hidden", "type": "class", "repr": "[class Hidden]" },
                    { "name": "f", "type": "function", "repr": "[function f]" },
                    { "name": "greeting", "type": "string", "repr": "\"hi\"" },
                    { "name": "hidden", "type": "number", "repr": "1" },
                    { "name": "list", "type": "array", "repr": "[1,2]" },
                ])
            );
        });
    }

    #[test]
    fn node_runs_get_script_args_and_piped_stdin() {
        with_session(|session, _| {
            let report = session
                .execute(&ExecuteRequest {
                    argv: vec!["-e".into(), "a".into(), "b".into()],
                    stdin: b"piped".to_vec(),
                    ..request("scriptArgs.join() + '|' + std.in.readAsString()")
                })
                .unwrap();
            assert_eq!(report.result.as_deref(), Some(r#""-e,a,b|piped""#));
            // Nothing is left for the next execution.
            assert_eq!(value(session, "std.in.readAsString()"), r#""""#);
        });
    }

    #[test]
    fn a_cancel_interrupts_and_keeps_the_context() {
        crate::engine::start_epoch_ticker();
        with_session(|session, _| {
            value(session, "var kept = 1");
            let control = session.control.clone();
            let request = request("var during = 1; for (;;) {}");
            let id = request.execution_id.clone();
            // One cancel, whether it lands before the run begins or while it loops: either
            // way it stops this run.
            let canceller = std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(20));
                control.request_cancel(&id);
            });
            let report = session.execute(&request).unwrap();
            canceller.join().unwrap();
            let error = report.error.expect("cancelled");
            assert_eq!(error.kind, ErrorKind::Cancelled, "{error:?}");
            assert_eq!(
                error.message,
                "the execution was cancelled (InternalError: interrupted); the session state is intact"
            );
            assert!(report.restart.is_none());
            assert_eq!(value(session, "kept + during"), "2");
        });
    }

    /// A spare's instance, woken for the fork server's settings, becomes a session's: in the
    /// session's directory, with its heap limit (also after a rollback) and its state from
    /// there on; a session whose directories are laid out otherwise is refused.
    #[test]
    fn an_instance_woken_ahead_is_adopted_with_the_sessions_settings() {
        on_guest_stack(|linker, workspace| {
            let spare_dir = tempfile::tempdir().unwrap();
            let roomy = SessionConfig {
                memory_bytes: 1 << 30,
                ..test_config()
            };
            let woken = JsSession::wake_ahead(quickjs(), linker, spare_dir.path(), &roomy).unwrap();
            let with_data = SessionConfig {
                mounts: vec![sandbox_protocol::Mount {
                    guest: "/data".into(),
                    host: workspace.to_path_buf(),
                    writable: false,
                }],
                ..test_config()
            };
            let control = Arc::new(Control::default());
            let refused = JsSession::adopt(
                (quickjs(), linker),
                workspace,
                with_data,
                control.clone(),
                woken,
            );
            assert!(refused.is_err(), "another layout of directories");

            let woken = JsSession::wake_ahead(quickjs(), linker, spare_dir.path(), &roomy).unwrap();
            let mut session = JsSession::adopt(
                (quickjs(), linker),
                workspace,
                test_config(),
                control,
                woken,
            )
            .unwrap();
            // A trap in the first execution rolls back to the memory the spare was woken with,
            // whose heap limit is the spare's: the session's is set again.
            let deep = run(&mut session, DEEP);
            assert_eq!(
                deep.restart.expect("a restart").state,
                StateAfterRestart::RolledBack
            );
            assert_eq!(
                value(&mut session, "var kept = 41; kept + 1"),
                "42",
                "the session goes on"
            );
            // Three quarters of the session's 64 MiB, not of the spare's GiB.
            let fill = "let a = []; try { for (;;) a.push('x'.repeat(1 << 20) + a.length) } \
                        catch (e) { a = a.length } a";
            let strings: usize = value(&mut session, fill).parse().unwrap();
            assert!((40..49).contains(&strings), "{strings} MiB strings");
        });
    }
}
