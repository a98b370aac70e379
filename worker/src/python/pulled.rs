//! CPython 3.12 (a WASI command) driven by pulls: `_start` runs the driver as `python -c`, and
//! it never returns. While it runs, the store is borrowed by Wasmtime, so executions cannot be
//! pushed in from outside; the driver's read of fd 0 reaches [`StdinFeed`], where the request
//! boundary is. There the host reports the previous execution (from the driver's status record
//! and the captures), blocks for the next request, refuels the store and re-arms the deadlines,
//! then hands the request bytes to the driver.

use std::any::Any;

use sandbox_protocol::{ErrorKind, ExecutionReport, GuestError, Language};
use wasmtime::{AsContextMut, Caller, Linker, Module, Result, Store, format_err};

use super::{
    Build, Fd0, STARTUP_FUEL, frame_request, lost_interpreter_report, parse_figures, parse_status,
};
use crate::WorkerError;
use crate::connection::{Job, Link, Reply};
use crate::host::{
    DriverChannel, HostState, SessionConfig, SoftInterrupt, clear_sigint, fuel_for, new_store,
};

/// Where the session is in the driver's read/execute/report cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The interpreter is starting; the first boundary means it is ready.
    Starting,
    /// An execution has been handed to the driver.
    Executing,
}

/// fd 0 of the pulling driver: the channel, and the session's side of the boundary.
pub(super) struct StdinFeed {
    pub(super) fd0: Fd0,
    phase: Phase,
    cell: u64,
    link: Link,
    /// The report of an execution that killed the previous interpreter, sent once this one is
    /// ready (so the caller hears about the restart and can continue at once).
    carried: Option<(ExecutionReport, Reply)>,
    /// Where the report of the execution in progress goes.
    reply: Option<Reply>,
    /// Set when the supervisor went away while we waited for a request.
    shutdown: bool,
}

impl StdinFeed {
    /// The channel of a starting interpreter.
    pub(super) fn new(link: Link, carried: Option<(ExecutionReport, Reply)>) -> Self {
        Self {
            fd0: Fd0::default(),
            phase: Phase::Starting,
            cell: 0,
            link,
            carried,
            reply: None,
            shutdown: false,
        }
    }

    /// Takes the feed back out of a Python store.
    fn take_from(state: &mut HostState) -> Box<StdinFeed> {
        let driver: Box<dyn Any> = state
            .driver
            .take()
            .expect("the feed lives as long as the store");
        driver
            .downcast()
            .expect("the driver of a pulled Python store is its feed")
    }

    /// Reports what just finished, waits for the next request and arms it.
    fn request_boundary(&mut self, caller: &mut Caller<'_, HostState>) -> Result<()> {
        let fuel_left = caller.get_fuel()?;
        let state = caller.data_mut();
        let channel = self.fd0.take_written();
        let status = parse_status(&channel).expect("checked by the caller");
        let sent = match self.phase {
            Phase::Starting => match self.carried.take() {
                Some((report, reply)) => self.link.deliver(reply, report),
                None => self
                    .link
                    .send_ready(Language::Python, status.message.clone(), false),
            },
            Phase::Executing => {
                let mut outcome = status.into_outcome(state);
                outcome.figures = parse_figures(&channel);
                let report = state.finish(fuel_left, outcome, None);
                self.link
                    .deliver(self.reply.take().unwrap_or(Reply::Socket), report)
            }
        };
        let next = match sent {
            Ok(()) => self.link.next_job(),
            Err(_) => None,
        };
        let Some(Job { request, reply }) = next else {
            self.shutdown = true;
            return Err(format_err!("the supervisor closed the connection"));
        };
        self.reply = Some(reply);
        self.cell += 1;
        self.fd0.hand_over(frame_request(self.cell, &request));
        self.phase = Phase::Executing;
        state.begin(&request);
        if let SoftInterrupt::PythonSignal(words) = state.soft {
            clear_sigint(&mut caller.as_context_mut(), words);
        }
        caller.set_fuel(fuel_for(request.fuel))?;
        Ok(())
    }
}

impl DriverChannel for StdinFeed {
    fn write(&mut self, bytes: &[u8]) {
        self.fd0.write(bytes);
    }

    /// A read with nothing left to serve is a request boundary only when the driver has just
    /// written a status record; any other read of fd 0 (user code calling `os.read(0, ..)`)
    /// sees end of file.
    fn before_read(&mut self, caller: &mut Caller<'_, HostState>) -> Result<()> {
        if !self.fd0.handing_over() && parse_status(&self.fd0.written).is_some() {
            self.request_boundary(caller)?;
        }
        Ok(())
    }

    fn read(&mut self, max: usize) -> &[u8] {
        self.fd0.read(max)
    }

    fn handing_over(&self) -> bool {
        self.fd0.handing_over()
    }
}

/// Runs the pulled Python session until the supervisor goes away.
///
/// # Errors
/// When the interpreter cannot start, at first or after a restart.
pub(super) fn serve(
    module: &Module,
    linker: &Linker<HostState>,
    workspace: &std::path::Path,
    config: &SessionConfig,
    build: Build,
    link: Link,
) -> Result<(), WorkerError> {
    let mut feed = StdinFeed::new(link, None);
    loop {
        let control = feed.link.control.clone();
        let mut state = HostState::new(
            workspace, build.env, build.args, config, build.soft, control,
        )
        .map_err(|e| WorkerError::Runtime(format!("{e:#}")))?;
        state.driver = Some(Box::new(feed));
        let mut store = new_store(module.engine(), state, STARTUP_FUEL)
            .map_err(|e| WorkerError::Runtime(e.to_string()))?;
        // The driver only returns when the interpreter died, exited, or we are shutting down.
        let ended = run_driver(&mut store, module, linker);
        match restart_after(&mut store, ended)? {
            Some(restarted) => feed = restarted,
            None => return Ok(()),
        }
    }
}

/// Instantiates CPython in `store` and runs `_start`, which runs the driver.
fn run_driver(
    store: &mut Store<HostState>,
    module: &Module,
    linker: &Linker<HostState>,
) -> Result<()> {
    let instance = linker.instantiate(&mut *store, module)?;
    store.data_mut().memory = instance.get_memory(&mut *store, "memory");
    instance
        .get_typed_func::<(), ()>(&mut *store, "_start")?
        .call(&mut *store, ())
}

/// What follows the end of the driver: nothing when the supervisor went away (`None`); a new
/// interpreter, carrying the report of the execution that killed this one; or an error when it
/// died while starting.
fn restart_after(
    store: &mut Store<HostState>,
    ended: Result<()>,
) -> Result<Option<StdinFeed>, WorkerError> {
    let fuel_left = store.get_fuel().unwrap_or(0);
    let state = store.data_mut();
    let mut feed = StdinFeed::take_from(state);
    if feed.shutdown {
        return Ok(None);
    }
    if feed.phase == Phase::Starting {
        let (stderr, _) = state.stderr.take();
        let why = match &ended {
            Err(e) => format!("{e:#}"),
            Ok(()) => "exited during start-up".into(),
        };
        return Err(WorkerError::Runtime(format!(
            "CPython failed to start: {why}; stderr: {}",
            String::from_utf8_lossy(&stderr)
        )));
    }
    let error = match &ended {
        Err(e) => crate::host::classify_trap(e, state),
        Ok(()) => GuestError {
            kind: ErrorKind::Exit,
            name: Some("SystemExit".into()),
            message: "the interpreter exited (os._exit)".into(),
        },
    };
    let report = lost_interpreter_report(state, fuel_left, error);
    let reply = feed.reply.take().unwrap_or(Reply::Socket);
    Ok(Some(StdinFeed::new(feed.link, Some((report, reply)))))
}
