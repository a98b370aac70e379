//! CPython 3.15 (a reactor) driven by pushes: the driver's source is the first `turn`, which sets
//! the session up and returns; every execution is then one `turn` of [`SERVE_ONE`], with the
//! request handed over on fd 0 beforehand and the driver's status record read back afterwards.
//! Between executions no guest frame is alive and the store is the host's, as in the JavaScript
//! session: fuel and deadlines are set before the call, and the interpreter could be imaged or
//! snapshotted there.

use std::any::Any;
use std::path::Path;

use sandbox_protocol::{ErrorKind, ExecuteRequest, ExecutionReport, GuestError, Language};
use wasmtime::{AsContextMut, Linker, Memory, Module, Result, Store, TypedFunc, format_err};

use super::{
    Build, DRIVER, Fd0, PRELOAD_FUEL, STARTUP_FUEL, frame_request, lost_interpreter_report,
    parse_figures, parse_status,
};
use crate::WorkerError;
use crate::connection::{Link, Reply};
use crate::host::{
    DriverChannel, HostState, Outcome, SessionConfig, SoftInterrupt, classify_trap, clear_sigint,
    fuel_for, new_store,
};

/// The source of every execution's turn: the driver's function that serves one request.
const SERVE_ONE: &str = "_sandbox_serve()\n";

/// Put before the driver's source in the first turn: the driver then returns once the session
/// is set up instead of pulling requests forever.
const PUSHED_MARK: &str = "_sandbox_pushed = True\n";

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

/// One CPython instance with its session set up.
struct Interpreter {
    store: Store<HostState>,
    memory: Memory,
    alloc: TypedFunc<i32, i32>,
    turn: TypedFunc<(i32, i32), i32>,
    cell: u64,
}

impl Interpreter {
    /// Instantiates CPython and runs `preload` and the driver in its first turn: the
    /// interpreter's version once the driver reported ready.
    fn start(
        module: &Module,
        linker: &Linker<HostState>,
        workspace: &Path,
        config: &SessionConfig,
        build: Build,
        link: &Link,
        preload: &str,
    ) -> Result<(Self, String)> {
        let mut state = HostState::new(
            workspace,
            build.env,
            build.args,
            config,
            build.soft,
            link.control.clone(),
        )?;
        state.driver = Some(Box::new(Fd0::default()));
        let fuel = if preload.is_empty() {
            STARTUP_FUEL
        } else {
            PRELOAD_FUEL
        };
        let mut store = new_store(module.engine(), state, fuel)?;
        let instance = linker.instantiate(&mut store, module)?;
        let memory = instance
            .get_memory(&mut store, "memory")
            .ok_or_else(|| format_err!("CPython exports no memory"))?;
        store.data_mut().memory = Some(memory);
        // The plain reactor needs `_initialize`; a snapshot was initialised when it was made
        // and no longer exports it.
        if let Ok(initialize) = instance.get_typed_func::<(), ()>(&mut store, "_initialize") {
            initialize.call(&mut store, ())?;
        }
        let mut interpreter = Self {
            alloc: instance.get_typed_func(&mut store, "host_alloc")?,
            turn: instance.get_typed_func(&mut store, "turn")?,
            store,
            memory,
            cell: 0,
        };
        let started = interpreter.run_turn(&format!("{preload}{PUSHED_MARK}{DRIVER}"));
        let written = interpreter.fd0().take_written();
        let (stderr, _) = interpreter.store.data_mut().stderr.take();
        let failed = |why: String| {
            format_err!(
                "{why}; stderr: {}",
                String::from_utf8_lossy(&stderr).trim_end()
            )
        };
        started.map_err(|e| failed(format!("{e:#}")))?;
        match parse_status(&written) {
            Some(status) if status.kind == "ready" => Ok((interpreter, status.message)),
            _ => Err(failed("the driver did not report ready".into())),
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
        let len = i32::try_from(source.len())?;
        let at = self.alloc.call(&mut self.store, len)?;
        if at <= 0 {
            return Err(format_err!("CPython had no memory for a turn's source"));
        }
        self.memory
            .write(&mut self.store, at as usize, source.as_bytes())?;
        // Its value says nothing the driver's status does not.
        self.turn.call(&mut self.store, (at, len)).map(drop)
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

/// Runs the pushed Python session until the supervisor goes away.
///
/// # Errors
/// When the interpreter cannot start, at first or after a restart.
pub(super) fn serve(
    module: &Module,
    linker: &Linker<HostState>,
    workspace: &Path,
    config: &SessionConfig,
    build: Build,
    link: Link,
) -> Result<(), WorkerError> {
    let mut preload = build.preload;
    // The report of an execution that ended the previous interpreter, sent once the next one
    // is ready (so the caller hears about the restart and can continue at once).
    let mut carried: Option<(ExecutionReport, Reply)> = None;
    loop {
        let (mut interpreter, version) =
            Interpreter::start(module, linker, workspace, config, build, &link, preload)
                .map_err(|e| WorkerError::Runtime(format!("CPython failed to start: {e:#}")))?;
        preload = "";
        let sent = match carried.take() {
            Some((report, reply)) => link.deliver(reply, report),
            None => link.send_ready(Language::Python, version),
        };
        if sent.is_err() {
            return Ok(());
        }
        loop {
            let Some(job) = link.next_job() else {
                return Ok(());
            };
            match interpreter.execute(&job.request) {
                Ok(report) => {
                    if link.deliver(job.reply, report).is_err() {
                        return Ok(());
                    }
                }
                Err(report) => {
                    carried = Some((report, job.reply));
                    break;
                }
            }
        }
    }
}
