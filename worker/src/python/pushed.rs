//! CPython 3.15 (a reactor) driven by pushes: the driver's source is the first `turn`, which sets
//! the session up and returns; every execution is then one `turn` of [`SERVE_ONE`], with the
//! request handed over on fd 0 beforehand and the driver's status record read back afterwards.
//! Between executions no guest frame is alive and the store is the host's, as in the JavaScript
//! session: fuel and deadlines are set before the call, and the interpreter could be imaged or
//! snapshotted there.

use std::any::Any;
use std::path::Path;
use std::sync::Arc;

use sandbox_protocol::{
    ErrorKind, ExecuteRequest, ExecutionReport, FrameError, GuestError, Language, Response,
    RestoreInfo, Runtime, SNAPSHOT_PART,
};
use wasmtime::{AsContextMut, Linker, Memory, Module, Result, Store, TypedFunc, format_err};

use super::{
    Build, DRIVER, Fd0, PRELOAD_FUEL, STARTUP_FUEL, frame_request, lost_interpreter_report,
    parse_figures, parse_status,
};
use crate::WorkerError;
use crate::connection::{Link, Task, WakeAt};
use crate::host::{
    Control, DriverChannel, HostState, Outcome, SessionConfig, SoftInterrupt, classify_trap,
    clear_sigint, fuel_for, new_store,
};

/// The source of every execution's turn: the driver's function that serves one request.
const SERVE_ONE: &str = "_sandbox_serve()\n";

/// The first turn of an interpreter started from a memory image: the driver does what depends
/// on the session (its import paths, new random seeds) and reports ready.
const WAKE: &str = "_sandbox_wake()\n";

/// The half of a wake that depends on the session's directories, for an instance woken before
/// it had a session (a fork server's spare: [`Pristine::wake_ahead`]).
const SETTLE: &str = "_sandbox_settle()\n";

/// A spare's trivial cell before it has a session ([`Pristine::wake_ahead`]).
const REHEARSE: &str = "_sandbox_rehearse()\n";

/// fd 0 of a pushed driver: nothing happens at a read but handing over the request.
impl DriverChannel for Fd0 {
    fn write(&mut self, bytes: &[u8]) {
        Fd0::write(self, bytes);
    }

    fn read(&mut self, max: usize) -> &[u8] {
        Fd0::read(self, max)
    }

    fn handing_over(&self) -> bool {
        Fd0::handing_over(self)
    }
}

/// What the host calls in a CPython instance: its memory, and the two exports a turn needs.
struct Exports {
    memory: Memory,
    alloc: TypedFunc<i32, i32>,
    turn: TypedFunc<(i32, i32), i32>,
}

impl Exports {
    /// Instantiates `module` in `store` and initialises it (a snapshot was initialised when it
    /// was made and no longer exports `_initialize`).
    fn bind(
        store: &mut Store<HostState>,
        module: &Module,
        linker: &Linker<HostState>,
    ) -> Result<Self> {
        let instance = linker.instantiate(&mut *store, module)?;
        let memory = instance
            .get_memory(&mut *store, "memory")
            .ok_or_else(|| format_err!("CPython exports no memory"))?;
        store.data_mut().memory = Some(memory);
        if let Ok(initialize) = instance.get_typed_func::<(), ()>(&mut *store, "_initialize") {
            initialize.call(&mut *store, ())?;
        }
        Ok(Self {
            alloc: instance.get_typed_func(&mut *store, "host_alloc")?,
            turn: instance.get_typed_func(&mut *store, "turn")?,
            memory,
        })
    }

    /// Runs `source` as one turn in `__main__`.
    fn run_turn(&self, store: &mut Store<HostState>, source: &str) -> Result<()> {
        let len = i32::try_from(source.len())?;
        let at = self.alloc.call(&mut *store, len)?;
        if at <= 0 {
            return Err(format_err!("CPython had no memory for a turn's source"));
        }
        self.memory
            .write(&mut *store, at as usize, source.as_bytes())?;
        // Its value says nothing the driver's status does not.
        self.turn.call(&mut *store, (at, len)).map(drop)
    }
}

/// One CPython instance with its session set up.
struct Interpreter {
    store: Store<HostState>,
    exports: Exports,
    cell: u64,
    /// The module it is an instance of (a restore makes a fresh one), what that module's
    /// memory starts as ([`crate::snapshot::module_identity`]) and how large it starts.
    module: Module,
    identity: String,
    base_bytes: usize,
    /// What of its memory the supervisor has (see [`crate::snapshot::Tracker`]).
    tracker: crate::snapshot::Tracker,
}

impl Interpreter {
    /// Instantiates CPython (from `module` or its memory image) with an empty fd 0 and the
    /// session's preopens, with `fuel` for its first turn.
    fn instantiate(
        module: &Module,
        linker: &Linker<HostState>,
        workspace: &Path,
        config: &SessionConfig,
        build: Build,
        control: Arc<Control>,
        fuel: u64,
    ) -> Result<Self> {
        let mut state = build.host_state(workspace, config, control)?;
        state.driver = Some(Box::new(Fd0::default()));
        let mut store = new_store(module.engine(), state, fuel)?;
        let exports = Exports::bind(&mut store, module, linker)?;
        let base_bytes = exports.memory.data_size(&store);
        Ok(Self {
            store,
            exports,
            cell: 0,
            module: module.clone(),
            identity: String::new(),
            base_bytes,
            tracker: crate::snapshot::Tracker::default(),
        })
    }

    /// [`Interpreter::instantiate`] for an instance laid out as the runtime's memory image
    /// (made from it, or to make it): `config`'s directories must be the imaged layout, since
    /// the image's C library keeps the descriptors it found.
    ///
    /// # Errors
    /// When they are another, or the instance cannot be made.
    fn instantiate_imaged(
        module: &Module,
        linker: &Linker<HostState>,
        (workspace, config): (&Path, &SessionConfig),
        build: Build,
        control: Arc<Control>,
        fuel: u64,
    ) -> Result<Self> {
        if !matches_imaged_layout(build.runtime, config) {
            return Err(format_err!(
                "the directories are not the runtime's imaged layout"
            ));
        }
        Self::instantiate(module, linker, workspace, config, build, control, fuel)
    }

    /// A snapshot of the interpreter between executions.
    fn snapshot(&mut self, config: &SessionConfig) -> (Vec<u8>, sandbox_protocol::SnapshotInfo) {
        let tracker = std::mem::take(&mut self.tracker);
        let taken = crate::snapshot::take(self.at_rest(config), &tracker);
        self.tracker = tracker;
        taken
    }

    /// Sends the layer of its state the supervisor does not have yet, in parts.
    fn send_state_layer(&mut self, config: &SessionConfig, link: &Link) -> Result<(), FrameError> {
        let mut tracker = std::mem::take(&mut self.tracker);
        let sent =
            crate::snapshot::layer_of(self.at_rest(config), &mut tracker, SNAPSHOT_PART, |part| {
                link.send_state(part)
            });
        self.tracker = tracker;
        sent
    }

    /// Has the kernel watch the memory from now on, if the last layer left it unwatched (see
    /// [`crate::snapshot::Tracker::watch_from_now`]).
    fn watch_from_now(&mut self) {
        let memory = self.exports.memory.data(&self.store);
        self.tracker.watch_from_now(memory);
    }

    fn at_rest(&mut self, config: &SessionConfig) -> crate::snapshot::AtRest<'_> {
        crate::snapshot::AtRest {
            store: &mut self.store,
            memory: self.exports.memory,
            base_bytes: self.base_bytes,
            module: &self.identity,
            cell: self.cell,
            first_free: first_free_descriptor(config),
        }
    }

    /// A fresh instance of this interpreter's module with `bytes`' state written into it: the
    /// session as it was when the snapshot was taken, with this session's directories and
    /// limits. The current interpreter is untouched.
    fn restored(
        &self,
        bytes: &[u8],
        linker: &Linker<HostState>,
        workspace: &Path,
        config: &SessionConfig,
        build: Build,
        control: Arc<Control>,
    ) -> Result<Self> {
        let began = std::time::Instant::now();
        let layers = crate::snapshot::parse_layers(bytes)?;
        let parsed = elapsed_us(began);
        let config = SessionConfig {
            clock_since: Some(crate::snapshot::clock_since(&layers)),
            ..config.clone()
        };
        let mut fresh = Self::instantiate(
            &self.module,
            linker,
            workspace,
            &config,
            build,
            control,
            STARTUP_FUEL,
        )?;
        let instantiated = elapsed_us(began);
        crate::snapshot::restore_into(
            &layers,
            &mut fresh.store,
            fresh.exports.memory,
            &self.identity,
            config.memory_bytes,
        )?;
        fresh.identity = self.identity.clone();
        fresh.cell = layers.last().map_or(0, |l| l.meta.cell);
        let written = elapsed_us(began);
        let memory = fresh.exports.memory.data(&fresh.store);
        fresh.tracker.sync(memory);
        tracing::debug!(
            parsed,
            instantiated,
            written,
            synced = elapsed_us(began),
            "restored (µs since the restore began)"
        );
        Ok(fresh)
    }

    /// Instantiates CPython and sets the session up in its first turn: from an image, a wake of
    /// the driver (now, or when a request first needs it); otherwise `preload` and the driver.
    fn start(
        start: Start<'_>,
        identity: &str,
        linker: &Linker<HostState>,
        workspace: &Path,
        config: &SessionConfig,
        build: Build,
        link: &Link,
    ) -> Result<(Self, Woken)> {
        let control = link.control.clone();
        let mut interpreter;
        let version = match start {
            Start::Image { image, wake } => {
                interpreter = Self::instantiate(
                    image,
                    linker,
                    workspace,
                    config,
                    build,
                    control,
                    STARTUP_FUEL,
                )?;
                tracing::debug!(
                    us = link.ready_clock.elapsed_us(),
                    "instantiated from the image"
                );
                match wake {
                    WakeAt::Start => Woken::Version(interpreter.wake()?),
                    WakeAt::FirstNeed => Woken::NotYet,
                }
            }
            Start::Cold { module, preload } => {
                let fuel = if preload.is_empty() {
                    STARTUP_FUEL
                } else {
                    PRELOAD_FUEL
                };
                interpreter =
                    Self::instantiate(module, linker, workspace, config, build, control, fuel)?;
                Woken::Version(interpreter.first_turn(&format!("{preload}{DRIVER}"), "ready")?)
            }
        };
        interpreter.identity = identity.to_owned();
        Ok((interpreter, version))
    }

    /// Takes over a pristine interpreter for this session: its host state (descriptors, limits,
    /// captures, cancel control) is replaced by the session's, which is all an instantiation
    /// gives an instance besides its memory, then its driver is woken again, for this session
    /// (now, or when a request first needs it: see [`WakeAt`]).
    fn adopt(
        pristine: Pristine,
        identity: &str,
        workspace: &Path,
        config: &SessionConfig,
        build: Build,
        (link, wake): (&Link, WakeAt),
    ) -> Result<(Self, Woken)> {
        let Pristine {
            mut interpreter,
            woken_ahead,
            ..
        } = pristine;
        let size = interpreter.exports.memory.data_size(&interpreter.store);
        if size > config.memory_bytes {
            return Err(format_err!(
                "the image's memory ({size} bytes) is over the session's cap"
            ));
        }
        let config = config.continuing_clock(interpreter.store.data().clock_base());
        let state = build.host_state(workspace, &config, link.control.clone())?;
        interpreter.take_state(state)?;
        tracing::debug!(
            us = link.ready_clock.elapsed_us(),
            "adopted the fork server's interpreter"
        );
        let woken = match wake {
            WakeAt::Start => {
                // Woken ahead, its seeds are its own already: only the session's directories
                // are left to look at.
                let version = if woken_ahead {
                    interpreter.first_turn(SETTLE, "ready")?
                } else {
                    interpreter.wake()?
                };
                tracing::debug!(
                    us = link.ready_clock.elapsed_us(),
                    woken_ahead,
                    "woke for the session"
                );
                Woken::Version(version)
            }
            WakeAt::FirstNeed => Woken::NotYet,
        };
        interpreter.identity = identity.to_owned();
        Ok((interpreter, woken))
    }

    /// Gives the instance `state` (its descriptors, limits, captures, cancel control and WASI
    /// generators) in place of the one it had, which closes with it (a fork server's
    /// placeholder directories, say).
    fn take_state(&mut self, mut state: HostState) -> Result<()> {
        state.driver = Some(Box::new(Fd0::default()));
        state.memory = Some(self.exports.memory);
        state.limiter.granted = self.store.data().limiter.granted;
        drop(std::mem::replace(self.store.data_mut(), state));
        self.store.set_fuel(STARTUP_FUEL)
    }

    /// Runs the driver's wake (what depends on the session: import paths, random seeds): the
    /// first turn of an instance of the memory image. The interpreter's version.
    fn wake(&mut self) -> Result<String> {
        self.first_turn(WAKE, "ready")
    }

    /// A fork server's wake of its instance, and the full layer of the state it leaves: the
    /// base of its workers' first layers (see [`Pristine`]). Run on a current-thread Tokio
    /// runtime of its own, dropped before it returns: wasmtime-wasi would otherwise start its
    /// multi-threaded one for the guest's file calls, and a process with threads cannot fork.
    fn wake_as_base(&mut self, config: &SessionConfig) -> Result<Vec<u8>> {
        let runtime = tokio::runtime::Builder::new_current_thread().build()?;
        let _inside = runtime.enter();
        self.wake()?;
        let mut base = Vec::new();
        let mut tracker = std::mem::take(&mut self.tracker);
        let made =
            crate::snapshot::layer_of(self.at_rest(config), &mut tracker, usize::MAX, |part| {
                base.extend_from_slice(&part.data);
                Ok::<(), std::convert::Infallible>(())
            });
        let Ok(()) = made;
        tracker.made_base(self.exports.memory.data(&self.store));
        self.tracker = tracker;
        Ok(base)
    }

    /// Runs a first turn whose driver must report `expected`: the status's message.
    fn first_turn(&mut self, source: &str, expected: &str) -> Result<String> {
        let ran = self.run_turn(source);
        let written = self.fd0().take_written();
        let (stderr, _) = self.store.data_mut().stderr.take();
        let failed = |why: String| {
            format_err!(
                "{why}; stderr: {}",
                String::from_utf8_lossy(&stderr).trim_end()
            )
        };
        ran.map_err(|e| failed(format!("{e:#}")))?;
        match parse_status(&written) {
            Some(status) if status.kind == expected => Ok(status.message),
            Some(status) => Err(failed(format!(
                "the driver reported {} ({}), not {expected}",
                status.kind, status.message
            ))),
            None => Err(failed(format!("the driver did not report {expected}"))),
        }
    }

    fn fd0(&mut self) -> &mut Fd0 {
        let driver: &mut dyn Any = self
            .store
            .data_mut()
            .driver
            .as_deref_mut()
            .expect("a pushed store keeps its fd 0");
        driver
            .downcast_mut()
            .expect("the driver of a pushed Python store is its fd 0")
    }

    /// Runs `source` as one turn in `__main__`.
    fn run_turn(&mut self, source: &str) -> Result<()> {
        self.exports.run_turn(&mut self.store, source)
    }

    /// Runs one execution. `Err` carries the report of an execution that ended this
    /// interpreter (a trap or an exit): the session must start a new one.
    fn execute(&mut self, request: &ExecuteRequest) -> Result<ExecutionReport, ExecutionReport> {
        self.cell += 1;
        let framed = frame_request(self.cell, request);
        self.fd0().hand_over(framed);
        let state = self.store.data_mut();
        state.begin(request);
        if let SoftInterrupt::PythonSignal(words) = state.soft {
            clear_sigint(&mut self.store.as_context_mut(), words);
        }
        let ran = self
            .store
            .set_fuel(fuel_for(request.fuel))
            .and_then(|()| self.run_turn(SERVE_ONE));
        let fuel_left = self.store.get_fuel().unwrap_or(0);
        let written = self.fd0().take_written();
        self.fd0().hand_over(Vec::new());
        let state = self.store.data_mut();
        if let Err(trap) = ran {
            let error = classify_trap(&trap, state);
            return Err(lost_interpreter_report(state, fuel_left, error));
        }
        let outcome = match parse_status(&written) {
            Some(status) => {
                let mut outcome = status.into_outcome(state);
                outcome.figures = parse_figures(&written);
                outcome
            }
            None => Outcome {
                error: Some(GuestError {
                    kind: ErrorKind::System,
                    name: None,
                    message: "the Python driver ended the execution without reporting it \
                              (user code may have replaced it)"
                        .into(),
                }),
                ..Outcome::default()
            },
        };
        Ok(state.finish(fuel_left, outcome, None))
    }
}

/// An interpreter instantiated from the memory image and woken, with placeholder directories,
/// and the full layer of its state: a fork server makes one, and each worker it forks adopts
/// its copy ([`Interpreter::adopt`]), so a new session neither maps nor instantiates anything,
/// and the pages every instance's wake writes (a few hundred) are written once and sent to the
/// supervisor once, as the base its workers' first layers apply to
/// ([`crate::snapshot::LayerKind::OverBase`]). A worker wakes its copy again for its own
/// session (new random seeds, its own `/app`): that rewrites a few pages only; a spare wakes
/// it before it has a session ([`Pristine::wake_ahead`]).
///
/// The server does not touch the image's other pages ahead: a fork copies the page-table
/// entries of every present page, and a worker faults in far fewer than the 16,000 a whole
/// memory has (measured: fork to connection 5 -> 2.5-3.3 ms, the first layer's page scan
/// 1.5 -> 0.5-0.7 ms, once the server stopped reading every page of the memory).
pub struct Pristine {
    interpreter: Interpreter,
    base: Option<Vec<u8>>,
    /// Whether this copy was woken again after the fork ([`Pristine::wake_ahead`]).
    woken_ahead: bool,
}

impl Pristine {
    /// Instantiates `image` (whose memory `identity` names, see
    /// [`crate::snapshot::module_identity`]) with `config`'s directories, which must be the
    /// imaged layout, and wakes it.
    ///
    /// # Errors
    /// When the layout is another, or the image cannot be instantiated or woken.
    pub fn instantiate(
        image: &Module,
        linker: &Linker<HostState>,
        workspace: &Path,
        config: &SessionConfig,
        (build, identity): (Build, &str),
    ) -> Result<Self> {
        let mut interpreter = Interpreter::instantiate_imaged(
            image,
            linker,
            (workspace, config),
            build,
            Arc::default(),
            STARTUP_FUEL,
        )?;
        interpreter.identity = identity.to_owned();
        let base = interpreter.wake_as_base(config)?;
        Ok(Self {
            interpreter,
            base: Some(base),
            woken_ahead: false,
        })
    }

    /// A fork server's spare's step, before it has a session: wakes its copy of the
    /// interpreter (new random seeds, its own), over the server's placeholder directories
    /// (`workspace`, `config`), so that the session that takes it over only settles it into its
    /// own directories; then rehearses a trivial cell of the driver's own, so that the pages
    /// every cell writes are this process's before the session's first (0.5-1 ms of it). The copy gets a new host state first: the server's WASI context holds
    /// generators every spare would share. On a current-thread Tokio runtime dropped before it
    /// returns, as the server's own wake: the worker enters its jail with one thread.
    ///
    /// # Errors
    /// When the driver does not report ready; the copy is then unusable.
    pub fn wake_ahead(
        &mut self,
        workspace: &Path,
        config: &SessionConfig,
        build: Build,
    ) -> Result<()> {
        let runtime = tokio::runtime::Builder::new_current_thread().build()?;
        let _inside = runtime.enter();
        let config = config.continuing_clock(self.interpreter.store.data().clock_base());
        let state = build.host_state(workspace, &config, Arc::default())?;
        self.interpreter.take_state(state)?;
        self.interpreter.wake()?;
        self.interpreter.first_turn(REHEARSE, "ok")?;
        self.woken_ahead = true;
        Ok(())
    }

    /// The full layer of the woken interpreter's state, for the supervisor (once).
    pub fn take_base(&mut self) -> Option<Vec<u8>> {
        self.base.take()
    }
}

/// A fork server's interpreter adopted for its session on the worker's main thread, before
/// the worker starts any other ([`adopt_before_threads`]); the guest thread serves it.
pub struct Adopted {
    interpreter: Interpreter,
    woken: Woken,
}

/// Adopts `pristine` for the session (see [`Interpreter::adopt`]) on the calling thread, when
/// the session's directories are the image's layout: a worker forked from a spare does this on
/// its main thread right after its jail, so that its readiness does not wait for the guest
/// thread to be created and scheduled (0.2-0.4 ms on an idle machine, milliseconds on a busy
/// one): it says the worker is ready from here, and the thread's start overlaps the
/// supervisor's first request. On a current-thread
/// Tokio runtime, as the spare's own wake: no thread starts here. `None` when it does not fit or
/// fails: the guest thread then starts the interpreter from the image, as it would have.
pub fn adopt_before_threads(
    pristine: Pristine,
    identity: &str,
    (workspace, config): (&Path, &SessionConfig),
    build: Build,
    (link, wake): (&Link, WakeAt),
) -> Option<Adopted> {
    if !matches_imaged_layout(build.runtime, config) {
        return None;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .inspect_err(|e| tracing::debug!(error = %e, "the guest thread adopts the interpreter"))
        .ok()?;
    let _inside = runtime.enter();
    let (interpreter, woken) = Interpreter::adopt(
        pristine,
        identity,
        workspace,
        config,
        build,
        (link, wake),
    )
    .inspect_err(|e| {
        tracing::warn!(error = %format!("{e:#}"), "cannot adopt the fork server's interpreter");
    })
    .ok()?;
    // Said here instead of by the guest thread (see `serve`). A link that fails now fails
    // the guest thread's first read too, which ends the worker as it would have.
    let _ = link.send_ready(Language::Python, woken.version(), true);
    Some(Adopted { interpreter, woken })
}

/// Where an interpreter starts from.
#[derive(Clone, Copy)]
enum Start<'a> {
    /// The runtime's module: the first turn runs `preload` and the driver.
    Cold {
        module: &'a Module,
        preload: &'a str,
    },
    /// A memory image of such a first turn ([`make_image`]): the first turn wakes the driver.
    Image { image: &'a Module, wake: WakeAt },
}

/// Whether a started interpreter's driver has reported ready.
enum Woken {
    /// It has, with the interpreter's version.
    Version(String),
    /// Not yet ([`WakeAt::FirstNeed`]).
    NotYet,
}

impl Woken {
    /// The version a Ready says: empty before the driver has said it (the restored state's
    /// driver says it next).
    fn version(&self) -> String {
        match self {
            Woken::Version(version) => version.clone(),
            Woken::NotYet => String::new(),
        }
    }
}

/// Runs the pushed Python session until the supervisor goes away. With `image` (the module
/// compiled with a memory image of [`make_image`]), every interpreter of the session starts
/// from it; should that fail, the session goes on from `module`. The first interpreter runs
/// its wake at `first_wake`; every later one (after an execution that ended one) at once.
///
/// # Errors
/// When the interpreter cannot start, at first or after a restart.
pub(super) fn serve(
    modules: super::Modules<'_>,
    linker: &Linker<HostState>,
    workspace: &Path,
    config: &SessionConfig,
    build: Build,
    (link, first_wake): (Link, WakeAt),
) -> Result<(), WorkerError> {
    let super::Modules {
        module,
        image,
        mut pristine,
        mut adopted,
        module_identity,
        image_identity,
    } = modules;
    let mut image = image.filter(|_| {
        let fits = matches_imaged_layout(build.runtime, config);
        if !fits {
            tracing::warn!("the session's directories are not the memory image's: starting cold");
        }
        fits
    });
    let mut preload = build.preload;
    let mut wake = first_wake;
    // The report of an execution that ended the previous interpreter, sent once the next one
    // is ready (so the caller hears about the restart and can continue at once).
    let mut carried: Option<ExecutionReport> = None;
    loop {
        // An interpreter adopted before the threads has said the worker is ready.
        let announced = adopted.is_some();
        let mut started = (adopted.take()).map(|adopted| (adopted.interpreter, adopted.woken));
        if let (None, Some(_), Some(ready)) = (&started, image, pristine.take()) {
            let adopted = Interpreter::adopt(
                ready,
                image_identity,
                workspace,
                config,
                build,
                (&link, wake),
            );
            match adopted {
                Ok(interpreter) => started = Some(interpreter),
                Err(e) => {
                    tracing::warn!(error = %format!("{e:#}"), "cannot adopt the fork server's interpreter");
                }
            }
        }
        if let (None, Some(imaged)) = (&started, image) {
            match Interpreter::start(
                Start::Image {
                    image: imaged,
                    wake,
                },
                image_identity,
                linker,
                workspace,
                config,
                build,
                &link,
            ) {
                Ok(interpreter) => started = Some(interpreter),
                Err(e) => {
                    tracing::warn!(error = %format!("{e:#}"), "cannot start from the memory image: starting cold");
                    image = None;
                }
            }
        }
        // The module is mapped only for this (see `LazyModule`).
        let start_cold = |preload| {
            let cold = Start::Cold {
                module: module.get()?,
                preload,
            };
            Interpreter::start(
                cold,
                module_identity,
                linker,
                workspace,
                config,
                build,
                &link,
            )
            .map_err(|e| WorkerError::Runtime(format!("CPython failed to start: {e:#}")))
        };
        let (mut interpreter, woken) = match started {
            Some(started) => started,
            None => start_cold(preload)?,
        };
        let (version, mut asleep) = (woken.version(), matches!(woken, Woken::NotYet));
        preload = "";
        wake = WakeAt::Start;
        let sent = match carried.take() {
            Some(report) => link.deliver(report),
            None if announced => Ok(()),
            None => link.send_ready(Language::Python, version, image.is_some()),
        };
        if sent.is_err() {
            return Ok(());
        }
        loop {
            let Some(task) = link.next_task() else {
                return Ok(());
            };
            if asleep && !matches!(task, Task::Restore(_)) {
                // No state came to replace it: the session starts afresh after all.
                if let Err(e) = interpreter.wake() {
                    tracing::warn!(error = %format!("{e:#}"), "cannot wake an instance of the memory image: starting cold");
                    image = None;
                    interpreter = start_cold(build.preload)?.0;
                }
                asleep = false;
            }
            let sent = match task {
                Task::Run(job) => match interpreter.execute(&job.request) {
                    Ok(mut report) => {
                        // Answered first: the layer is off the call's path (the supervisor
                        // keeps it before the session's next call).
                        report.state_follows = true;
                        let sent = link
                            .deliver(report)
                            .and_then(|()| interpreter.send_state_layer(config, &link));
                        interpreter.watch_from_now();
                        sent
                    }
                    Err(report) => {
                        carried = Some(report);
                        break;
                    }
                },
                Task::Snapshot => link.send_snapshot(Ok(interpreter.snapshot(config))),
                Task::SendState => {
                    let sent = interpreter.send_state_layer(config, &link);
                    interpreter.watch_from_now();
                    sent
                }
                Task::Restore(bytes) => {
                    let started = std::time::Instant::now();
                    let restored = interpreter.restored(
                        &bytes,
                        linker,
                        workspace,
                        config,
                        build,
                        link.control.clone(),
                    );
                    drop(bytes);
                    let answer = restored.map(|fresh| {
                        interpreter = fresh;
                        // A state is taken only between executions of a woken interpreter.
                        asleep = false;
                        RestoreInfo {
                            took_us: elapsed_us(started),
                            memory_bytes: interpreter.exports.memory.data_size(&interpreter.store)
                                as u64,
                        }
                    });
                    link.send(&Response::Restored(answer.map_err(|e| format!("{e:#}"))))
                }
            };
            if sent.is_err() {
                return Ok(());
            }
        }
    }
}

/// Microseconds since `started`.
fn elapsed_us(started: std::time::Instant) -> u64 {
    u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// The first guest descriptor past stdio, `/app` and the session's mounts.
fn first_free_descriptor(config: &SessionConfig) -> u32 {
    4 + config.mounts.len() as u32
}

/// Whether the session's preopened directories after `/app` are, in order, those of the
/// runtime's memory image.
fn matches_imaged_layout(runtime: Runtime, config: &SessionConfig) -> bool {
    (runtime.imaged_layout()).is_some_and(|layout| config.preopens_in_order(&layout))
}

/// Runs `request` in a fresh CPython, then drops it: a `python` command line of a session's
/// shell. It starts from its memory image (`imaged`) woken for `config`'s session, or cold from
/// the module with the driver (no preload: a server whose image is not made yet). Nothing of it
/// outlives the report.
///
/// # Errors
/// When the session's directories are not the image's layout, or CPython cannot start.
pub fn run_alone(
    (module, imaged): (&Module, bool),
    linker: &Linker<HostState>,
    (workspace, config): (&Path, &SessionConfig),
    build: Build,
    control: Arc<Control>,
    request: &ExecuteRequest,
) -> Result<ExecutionReport> {
    let mut interpreter = if imaged {
        let mut interpreter = Interpreter::instantiate_imaged(
            module,
            linker,
            (workspace, config),
            build,
            control,
            STARTUP_FUEL,
        )?;
        interpreter.wake()?;
        interpreter
    } else {
        let mut interpreter = Interpreter::instantiate(
            module,
            linker,
            workspace,
            config,
            build,
            control,
            STARTUP_FUEL,
        )?;
        interpreter.first_turn(DRIVER, "ready")?;
        interpreter
    };
    Ok(match interpreter.execute(request) {
        Ok(report) | Err(report) => report,
    })
}

/// Runs `source` as the only turn of a fresh CPython of `module` (no driver), with `fuel`: what
/// it wrote to stdout and stderr. For build steps (`compile-python`), not sessions.
///
/// # Errors
/// When CPython cannot start or the turn traps.
pub fn run_once(
    module: &Module,
    linker: &Linker<HostState>,
    workspace: &Path,
    config: &SessionConfig,
    build: Build,
    (source, fuel): (&str, u64),
) -> Result<(Vec<u8>, Vec<u8>)> {
    let mut interpreter = Interpreter::instantiate(
        module,
        linker,
        workspace,
        config,
        build,
        Arc::default(),
        fuel,
    )?;
    interpreter.run_turn(source)?;
    let state = interpreter.store.data_mut();
    Ok((state.stdout.take().0, state.stderr.take().0))
}

/// Instantiates CPython in `store`, whose host state the caller made (a measurement with its
/// own fd 0, say), and runs `source` as its only turn.
///
/// # Errors
/// When CPython cannot start or the turn traps.
pub fn run_turn_in(
    store: &mut Store<HostState>,
    module: &Module,
    linker: &Linker<HostState>,
    source: &str,
) -> Result<()> {
    Exports::bind(store, module, linker)?.run_turn(store, source)
}

/// A digest (hex) of everything a memory image of `build` depends on besides the engine: the
/// interpreter (`wasm_sha256`), the image format, the first turn (preload, driver), the
/// environment and arguments, and the directory layout. It names the image's `.cwasm`, so a
/// change to any of them makes a new image.
pub fn image_digest(wasm_sha256: &str, build: Build) -> String {
    let inputs = format!(
        "{}\0{wasm_sha256}\0{}\0{WAKE}\0{DRIVER}\0{:?}\0{:?}\0{:?}",
        super::image::FORMAT,
        build.preload,
        build.env,
        build.args,
        build.runtime.imaged_layout(),
    );
    crate::engine::sha256_hex(inputs.as_bytes())
}

/// The memory of a CPython of `module` after its first turn made for an image: the runtime's
/// packages preloaded, the driver loaded and not yet woken, every descriptor it opened closed.
/// `config` must preopen the runtime's [`Runtime::imaged_layout`].
///
/// # Errors
/// When CPython cannot start, its driver finds descriptors still open, or the directories
/// are not the layout.
pub fn make_image(
    module: &Module,
    linker: &Linker<HostState>,
    workspace: &Path,
    config: &SessionConfig,
    build: Build,
) -> Result<Vec<u8>> {
    let mut interpreter = Interpreter::instantiate_imaged(
        module,
        linker,
        (workspace, config),
        build,
        Arc::default(),
        PRELOAD_FUEL,
    )?;
    // Descriptors 0-2, /app, then the mounts: the first that must be closed.
    let first_free = first_free_descriptor(config);
    let source = format!("{}_sandbox_imaging = {first_free}\n{DRIVER}", build.preload);
    interpreter.first_turn(&source, "imaged")?;
    Ok(interpreter.exports.memory.data(&interpreter.store).to_vec())
}
