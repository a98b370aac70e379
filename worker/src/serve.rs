//! The worker's connection to its supervisor: a reader thread for frames and a guest thread
//! that owns the interpreter.
//!
//! The guest thread runs the interpreter and writes every report itself. The reader thread (the
//! process's main thread) forwards executions to it, turns `Cancel` into the shared [`Control`]
//! flag that the epoch callback watches, and ends the process when the supervisor says
//! `Shutdown` or closes the socket, so a worker never outlives its connection.

use std::io;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};

use sandbox_protocol::{
    ExecuteRequest, ExecutionReport, FrameError, Language, PROTOCOL_VERSION, Request, Response,
    read_frame_blocking, write_frame_blocking,
};

use crate::command::ShellRunner;
use crate::engine::{self, engine, load_module};
use crate::host::{Control, SessionConfig, build_linker};
use crate::{ReadyClock, WorkerError, javascript, python};

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
    let link = Link {
        requests,
        writer: writer.clone(),
        control: control.clone(),
    };

    let mut shell = ShellRunner::new(&args);
    engine::start_epoch_ticker();
    let module = match load_module(engine(), &args.module) {
        Ok(module) => module,
        Err(e) => return Err(fail(&writer, WorkerError::Engine(e))),
    };
    let linker = match build_linker(engine()) {
        Ok(linker) => linker,
        Err(e) => return Err(fail(&writer, WorkerError::Runtime(format!("{e:#}")))),
    };

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
