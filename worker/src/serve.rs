//! The worker's connection to its supervisor: a reader thread for frames and a guest thread
//! that owns the interpreter.
//!
//! The guest thread runs the interpreter and writes every report itself. The reader thread (the
//! process's main thread) forwards executions to it, turns `Cancel` into the shared [`Control`]
//! flag that the epoch callback watches, and ends the process when the supervisor says
//! `Shutdown` or closes the socket, so a worker never outlives its connection.
//!
//! Between loading the module and starting any thread, the worker enters its jail
//! ([`crate::jail::enter`]); `jail-probe` stops there and reports what it could still do.

use std::io;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};

use sandbox_protocol::{
    ExecuteRequest, ExecutionReport, FrameError, JailReport, Language, PROTOCOL_VERSION, Request,
    Response, read_frame_blocking, write_frame_blocking,
};

use crate::command::ShellRunner;
use crate::engine::{self, engine, load_module};
use crate::host::{Control, SessionConfig, build_linker};
use crate::jail::{self, JailArgs, JailSpec};
use crate::{ReadyClock, WorkerError, javascript, probe, python};

/// Native stack of the guest thread: Wasmtime runs wasm on it, and the engine allows 8 MiB of
/// wasm stack plus host frames.
const GUEST_THREAD_STACK: usize = 16 << 20;

/// What `sandbox-worker serve` was started with.
#[derive(Debug, Clone)]
pub struct ServeArgs {
    pub language: Language,
    pub socket: PathBuf,
    pub workspace: PathBuf,
    pub module: PathBuf,
    pub wasm_sha256: String,
    pub config: SessionConfig,
    /// The jail layers asked for and required, and what `main` did before anything else.
    pub jail: JailArgs,
    /// `jail-probe` (tests only): attack the jail and report instead of serving.
    pub probe: bool,
}

/// An execution for the guest thread, and where its report goes.
#[derive(Debug)]
pub struct Job {
    pub request: ExecuteRequest,
    pub reply: Reply,
}

/// Where a report goes: to the supervisor, or to the shell that asked for the run.
#[derive(Debug)]
pub enum Reply {
    Socket,
    Shell(mpsc::Sender<ExecutionReport>),
}

/// The guest thread's end of the connection.
pub struct Link {
    pub requests: Receiver<Job>,
    writer: Arc<Mutex<UnixStream>>,
    pub control: Arc<Control>,
    /// The jail this worker is in, for [`sandbox_protocol::ReadyInfo`].
    pub jail: JailReport,
}

impl Link {
    /// Delivers an execution's report where its job said.
    ///
    /// # Errors
    /// When the supervisor has gone away.
    pub fn deliver(&self, reply: Reply, report: ExecutionReport) -> Result<(), FrameError> {
        match reply {
            Reply::Socket => self.send(&Response::Executed(report)),
            Reply::Shell(shell) => {
                // The shell may have given up (cancel); nobody else wants the report.
                let _ = shell.send(report);
                Ok(())
            }
        }
    }

    /// Sends one response frame.
    ///
    /// # Errors
    /// When the supervisor has gone away.
    pub fn send(&self, response: &Response) -> Result<(), FrameError> {
        let mut writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        write_frame_blocking(&mut *writer, response)
    }
}

/// Serves one session until the supervisor goes away. Never returns normally: the process
/// exits when the connection ends.
///
/// # Errors
/// Connection or module-loading failures before anything is served.
pub fn run(args: ServeArgs, ready_clock: ReadyClock) -> Result<(), WorkerError> {
    let stream = UnixStream::connect(&args.socket).map_err(|source| WorkerError::Connect {
        socket: args.socket.clone(),
        source,
    })?;
    let mut reader = stream.try_clone().map_err(WorkerError::Io)?;
    let writer = Arc::new(Mutex::new(stream));
    let control = Arc::new(Control::default());
    let (requests_tx, requests) = mpsc::channel();
    let mut link = Link {
        requests,
        writer: writer.clone(),
        control: control.clone(),
        jail: JailReport::default(),
    };

    let mut shell = ShellRunner::new(&args);
    let module = match load_module(engine(), &args.module) {
        Ok(module) => module,
        Err(e) => return Err(fail(&writer, WorkerError::Engine(e))),
    };
    let linker = match build_linker(engine()) {
        Ok(linker) => linker,
        Err(e) => return Err(fail(&writer, WorkerError::Runtime(format!("{e:#}")))),
    };

    // The jail, while this is the only thread: the socket is connected and the module mapped,
    // so from here on nothing needs a path outside the session's directories.
    let plan = args
        .probe
        .then(|| probe::Plan::new(&args.workspace, &args.module));
    let mounts: Vec<(PathBuf, bool)> = (args.config.mounts.iter())
        .map(|m| (m.host.clone(), m.writable))
        .collect();
    let (read_write, read_only) = jail::paths_for_session(&args.workspace, &mounts, &args.module);
    let spec = JailSpec {
        requested: args.jail.requested,
        required: args.jail.required,
        read_write,
        read_only,
    };
    link.jail = match jail::enter(&spec, &args.jail.early) {
        Ok(report) => report,
        Err(e) => {
            let e = fail(&writer, WorkerError::Jail(e));
            linger(&mut reader);
            return Err(e);
        }
    };
    tracing::debug!(jail = ?link.jail, "jailed");
    if let Some(plan) = plan {
        let report = probe::attack(&plan, &link.jail);
        let _ = send_frame(&writer, &Response::Failed { message: report });
        linger(&mut reader);
        std::process::exit(0);
    }
    // The first threads start only now, inside the jail: Landlock before ABI 8 restricts only
    // the calling thread and the threads it starts later.
    engine::start_epoch_ticker();

    let guest_writer = writer.clone();
    std::thread::Builder::new()
        .name("guest".into())
        .stack_size(GUEST_THREAD_STACK)
        .spawn(move || {
            let served = match args.language {
                Language::Python => python::serve(
                    &module,
                    &linker,
                    &args.workspace,
                    &args.config,
                    &args.wasm_sha256,
                    link,
                    ready_clock,
                ),
                Language::JavaScript => javascript::serve(
                    &module,
                    &linker,
                    &args.workspace,
                    &args.config,
                    link,
                    ready_clock,
                ),
            };
            match served {
                Ok(()) => std::process::exit(0),
                Err(e) => {
                    let code = e.exit_code();
                    fail(&guest_writer, e);
                    std::process::exit(code);
                }
            }
        })
        .map_err(WorkerError::Io)?;

    loop {
        match read_frame_blocking::<Request>(&mut reader) {
            Ok(Some(Request::Hello { protocol_version }))
                if protocol_version != PROTOCOL_VERSION =>
            {
                let e = WorkerError::ProtocolMismatch {
                    ours: PROTOCOL_VERSION,
                    theirs: protocol_version,
                };
                let code = e.exit_code();
                fail(&writer, e);
                std::process::exit(code);
            }
            Ok(Some(Request::Hello { .. })) => {}
            Ok(Some(Request::Execute(request))) => {
                if requests_tx
                    .send(Job {
                        request,
                        reply: Reply::Socket,
                    })
                    .is_err()
                {
                    break; // the guest thread is gone and exits the process
                }
            }
            Ok(Some(Request::Command(command))) => {
                shell.start(
                    command,
                    requests_tx.clone(),
                    writer.clone(),
                    control.clone(),
                );
            }
            Ok(Some(Request::Cancel { execution_id })) => {
                let found = control.request_cancel(&execution_id);
                tracing::debug!(%execution_id, found, "cancel requested");
            }
            Ok(Some(Request::Shutdown)) | Ok(None) => break,
            Err(e) => {
                tracing::warn!(error = %e, "dropping the connection after a bad frame");
                break;
            }
        }
    }
    std::process::exit(0);
}

/// Sends one frame on the shared connection.
///
/// # Errors
/// When the supervisor has gone away.
pub fn send_frame(writer: &Arc<Mutex<UnixStream>>, response: &Response) -> Result<(), FrameError> {
    let mut w = writer.lock().unwrap_or_else(|e| e.into_inner());
    write_frame_blocking(&mut *w, response)
}

/// Waits until the supervisor hangs up (it kills a worker that answered `Failed`), so it reads
/// our last frame before it sees the socket close.
fn linger(reader: &mut UnixStream) {
    while let Ok(Some(_)) = read_frame_blocking::<Request>(reader) {}
}

/// Tells the supervisor why this worker cannot serve, and returns the error for the exit code.
fn fail(writer: &Arc<Mutex<UnixStream>>, error: WorkerError) -> WorkerError {
    tracing::error!(error = %error, "worker failed");
    let mut w = writer.lock().unwrap_or_else(|e| e.into_inner());
    let _ = write_frame_blocking(
        &mut *w,
        &Response::Failed {
            message: error.to_string(),
        },
    );
    error
}

impl From<io::Error> for WorkerError {
    fn from(e: io::Error) -> Self {
        WorkerError::Io(e)
    }
}

#[cfg(test)]
mod tests {
    use std::io::ErrorKind;

    use super::*;

    fn report(execution_id: &str) -> ExecutionReport {
        ExecutionReport {
            execution_id: execution_id.into(),
            stdout: b"out".to_vec(),
            stderr: Vec::new(),
            stdout_truncated: false,
            stderr_truncated: false,
            exit_code: 0,
            result: Some("1".into()),
            error: None,
            fuel_consumed: 1,
            duration_us: 1,
            memory_bytes: 1,
            restart: None,
        }
    }

    /// A link whose socket's other end is returned, as the supervisor holds it.
    fn link() -> (Link, UnixStream) {
        let (worker, supervisor) = UnixStream::pair().unwrap();
        let (_jobs, requests) = mpsc::channel();
        let link = Link {
            requests,
            writer: Arc::new(Mutex::new(worker)),
            control: Arc::default(),
            jail: JailReport::default(),
        };
        (link, supervisor)
    }

    fn nothing_pending(supervisor: &mut UnixStream) -> bool {
        supervisor.set_nonblocking(true).unwrap();
        let pending = read_frame_blocking::<Response>(supervisor);
        supervisor.set_nonblocking(false).unwrap();
        matches!(pending, Err(FrameError::Io(e)) if e.kind() == ErrorKind::WouldBlock)
    }

    #[test]
    fn reports_go_to_the_supervisor_or_back_to_the_shell_that_asked() {
        let (link, mut supervisor) = link();
        link.deliver(Reply::Socket, report("exec-1")).unwrap();
        match read_frame_blocking::<Response>(&mut supervisor).unwrap() {
            Some(Response::Executed(sent)) => assert_eq!(sent, report("exec-1")),
            other => panic!("{other:?}"),
        }

        // A run the shell started: its report goes to the shell, never to the socket.
        let (shell, reports) = mpsc::channel();
        link.deliver(Reply::Shell(shell), report("exec-2/1"))
            .unwrap();
        assert_eq!(reports.recv().unwrap(), report("exec-2/1"));
        assert!(nothing_pending(&mut supervisor));
        // A shell that gave up (cancel) is no error.
        let (shell, reports) = mpsc::channel();
        drop(reports);
        link.deliver(Reply::Shell(shell), report("exec-3/1"))
            .unwrap();
        assert!(nothing_pending(&mut supervisor));

        send_frame(&link.writer, &Response::Executed(report("exec-4"))).unwrap();
        assert!(matches!(
            read_frame_blocking::<Response>(&mut supervisor).unwrap(),
            Some(Response::Executed(r)) if r.execution_id == "exec-4"
        ));
    }

    #[test]
    fn a_worker_that_cannot_serve_says_why_before_it_exits() {
        let (link, mut supervisor) = link();
        let error = fail(&link.writer, WorkerError::Runtime("no interpreter".into()));
        assert_eq!(error.exit_code(), 5);
        assert_eq!(
            read_frame_blocking::<Response>(&mut supervisor).unwrap(),
            Some(Response::Failed {
                message: "interpreter failure: no interpreter".into()
            })
        );
        let io = WorkerError::from(io::Error::other("x"));
        assert!(matches!(io, WorkerError::Io(_)));
        assert_eq!(io.exit_code(), 3);
    }

    #[test]
    fn a_supervisor_that_went_away_is_an_error_not_a_hang() {
        let (link, supervisor) = link();
        drop(supervisor);
        assert!(link.send(&Response::Executed(report("exec-1"))).is_err());
        assert!(link.deliver(Reply::Socket, report("exec-1")).is_err());
        // The shell's path does not need the socket.
        let (shell, reports) = mpsc::channel();
        link.deliver(Reply::Shell(shell), report("exec-2/1"))
            .unwrap();
        assert_eq!(reports.recv().unwrap().execution_id, "exec-2/1");
    }
}
