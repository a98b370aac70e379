//! The worker's session from connection to end: connect to the supervisor, load the
//! interpreter, enter the jail, then serve until the supervisor is done with us.
//!
//! Once jailed, the work is spread over threads: the reader forwards executions to the guest
//! thread, turns `Cancel` into the shared [`Control`] flag that the epoch callback watches, and
//! starts shell command lines ([`ShellRunner`]); the guest thread owns the interpreter and
//! writes every report itself. The main thread waits for the first of them to end the worker
//! through the [`Outbox`] (the supervisor said `Shutdown` or hung up, the interpreter failed,
//! the protocol versions differ) and returns why to `main`, the only place that exits. So a
//! worker never outlives its connection.
//!
//! Between loading the module and starting any thread, the worker enters its jail
//! ([`crate::jail::enter`]); `jail-probe` stops there and reports what it could still do.

use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{self, Sender};

use sandbox_protocol::{
    JailReport, Language, PROTOCOL_VERSION, Request, Response, Runtime, read_frame_blocking,
};
use wasmtime::{Linker, Module};

use crate::command::ShellRunner;
use crate::companion::{Companion, CompanionArgs};
use crate::connection::{Ended, Ending, Job, Link, MappedState, Outbox, StateBytes, Task, WakeAt};
use crate::engine::{self, LazyModule, engine, load_module};
use crate::host::{Control, HostState, SessionConfig, build_linker};
use crate::jail::{self, JailArgs, JailSpec};
use crate::toolbox::ToolboxModule;
use crate::{ReadyClock, WorkerError, javascript, probe, python, snapshot};

/// The largest snapshot a worker takes in to restore: a whole wasm32 memory, uncompressed, and
/// its page list.
const MAX_RESTORE: usize = (4 << 30) + (8 << 20);

/// What `sandbox-worker serve` was started with.
#[derive(Debug, Clone)]
pub struct ServeArgs {
    pub runtime: Runtime,
    pub socket: PathBuf,
    pub workspace: PathBuf,
    pub module: PathBuf,
    /// The interpreter compiled with its memory image, when precompile made one.
    pub image: Option<PathBuf>,
    /// The compiled toolbox of `execute_command`'s WebAssembly commands.
    pub toolbox: Option<PathBuf>,
    /// The other language's interpreter, for `python`/`node` in this session's shell.
    pub companion: Option<CompanionArgs>,
    pub wasm_sha256: String,
    /// A restore of the session's state comes first (`--resume`): the interpreter waits for it
    /// before setting a session up (see [`WakeAt::FirstNeed`]), in either language.
    pub resume: bool,
    pub config: SessionConfig,
    /// The jail layers asked for and required, and what `main` did before anything else.
    pub jail: JailArgs,
    /// `jail-probe` (tests only): attack the jail and report instead of serving.
    pub probe: bool,
}

/// What a worker maps before it serves: the interpreter's module (or its memory image, with the
/// module itself mapped only if the image fails), the linker, and, in a child of a fork server,
/// the interpreter the server instantiated from the image before any session asked for it.
pub struct Loaded {
    module: LazyModule,
    image: Option<Module>,
    linker: Linker<HostState>,
    pristine: Option<python::Pristine>,
    /// The toolbox of `execute_command`, when the server has one and it loads.
    toolbox: Option<ToolboxModule>,
    /// The other language's interpreter, when a fork server mapped it for its workers
    /// ([`Loaded::map_companion`]).
    companion: Option<Module>,
    /// A spare's JavaScript instance, woken before its session ([`Loaded::wake_ahead`]).
    js_ahead: Option<javascript::WokenAhead>,
    /// What a fresh instance's memory is, of the module and of its image (named before the
    /// jail, which may hide the image's file).
    module_identity: String,
    image_identity: String,
}

impl Loaded {
    /// Maps what `args` names. An image that does not load costs its session the start-up
    /// time, nothing more.
    ///
    /// # Errors
    /// When the module (without a usable image) cannot be mapped or the linker not built.
    pub fn load(args: &ServeArgs) -> Result<Self, WorkerError> {
        let image = args.image.as_deref().and_then(|cwasm| {
            load_module(engine(), cwasm)
                .inspect_err(|e| tracing::warn!(error = %e, "memory image unusable: starting cold"))
                .ok()
        });
        let module = match image {
            Some(_) => LazyModule::new(args.module.clone()),
            None => LazyModule::mapped(args.module.clone()).map_err(WorkerError::Engine)?,
        };
        let linker = build_linker(engine()).map_err(|e| WorkerError::Runtime(format!("{e:#}")))?;
        // Without it, the shell keeps its language and built-ins; file commands are missing.
        let toolbox = args.toolbox.as_deref().and_then(|cwasm| {
            ToolboxModule::load(cwasm, &linker)
                .inspect_err(|e| tracing::warn!(error = %e, "toolbox unusable: no file commands"))
                .ok()
        });
        Ok(Self {
            module,
            image,
            linker,
            pristine: None,
            js_ahead: None,
            toolbox,
            companion: None,
            module_identity: snapshot::module_identity(&args.wasm_sha256, None),
            image_identity: snapshot::module_identity(&args.wasm_sha256, args.image.as_deref()),
        })
    }

    /// A fork server's step: maps the other language's interpreter once, for every worker it
    /// forks (a worker started alone maps it on its first run of that language instead).
    pub fn map_companion(&mut self, args: &ServeArgs) {
        let Some(companion) = &args.companion else {
            return;
        };
        match companion.map() {
            Ok(module) => self.companion = Some(module),
            Err(e) => {
                tracing::warn!(error = %e, "the other language's interpreter is not mapped ahead");
            }
        }
    }

    /// A fork server's step: instantiates the memory image with `args`' directories (the
    /// server's placeholders, laid out as every session's) and wakes it, so that each forked
    /// worker finds its interpreter instantiated and woken. Whether there is one now.
    pub fn instantiate_image(&mut self, args: &ServeArgs) -> bool {
        if args.runtime.language() != Language::Python {
            return false;
        }
        let Some(image) = &self.image else {
            return false;
        };
        let build = python::Build::of(&args.wasm_sha256);
        // The base layer asks the kernel which pages the wake wrote (a forked worker opens its
        // own descriptors).
        snapshot::watch::open();
        match python::Pristine::instantiate(
            image,
            &self.linker,
            &args.workspace,
            &args.config,
            (build, &self.image_identity),
        ) {
            Ok(pristine) => self.pristine = Some(pristine),
            Err(e) => {
                tracing::warn!(error = %format!("{e:#}"), "cannot instantiate the memory image ahead")
            }
        }
        self.pristine.is_some()
    }

    /// A fork server's spare's step, in the child: wakes its copy of the server's interpreter
    /// over `args`' (the server's) directories before any session asks for it
    /// ([`python::Pristine::wake_ahead`]). A copy that does not wake is dropped: its worker
    /// then starts from the image.
    pub fn wake_ahead(&mut self, args: &ServeArgs) {
        if args.runtime.language() == Language::JavaScript {
            self.wake_javascript_ahead(args);
            return;
        }
        let Some(pristine) = self.pristine.as_mut() else {
            return;
        };
        let build = python::Build::of(&args.wasm_sha256);
        if let Err(e) = pristine.wake_ahead(&args.workspace, &args.config, build) {
            tracing::warn!(error = %format!("{e:#}"), "the spare's interpreter did not wake");
            self.pristine = None;
        }
    }

    /// [`Loaded::wake_ahead`] for JavaScript: a QuickJS instance of the module, its runtime
    /// and context created ([`javascript::JsSession::wake_ahead`]). On a current-thread Tokio
    /// runtime of its own, as the Python wake (the spare forks no more, but its threads would
    /// outlive the wake for nothing).
    fn wake_javascript_ahead(&mut self, args: &ServeArgs) {
        let woken = self
            .module
            .get()
            .map_err(|e| e.to_string())
            .and_then(|module| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .map_err(|e| e.to_string())?;
                let _inside = runtime.enter();
                javascript::JsSession::wake_ahead(
                    module,
                    &self.linker,
                    &args.workspace,
                    &args.config,
                )
                .map_err(|e| format!("{e:#}"))
            });
        match woken {
            Ok(woken) => self.js_ahead = Some(woken),
            Err(e) => tracing::warn!(error = %e, "the spare's interpreter did not wake"),
        }
    }

    /// The full state layer of the interpreter [`Loaded::instantiate_image`] woke, for the
    /// supervisor (once): its workers' first layers apply to it.
    pub fn take_base(&mut self) -> Option<Vec<u8>> {
        self.pristine.as_mut().and_then(python::Pristine::take_base)
    }
}

impl ServeArgs {
    /// Whether `other` names the same interpreter (runtime, module, image and build), so that
    /// what was loaded for one serves the other.
    pub fn same_interpreter(&self, other: &ServeArgs) -> bool {
        self.runtime == other.runtime
            && self.module == other.module
            && self.image == other.image
            && self.toolbox == other.toolbox
            && self.companion == other.companion
            && self.wasm_sha256 == other.wasm_sha256
    }
}

/// Serves one session until the supervisor is done with it, and says how it ended.
///
/// # Errors
/// Connection, module-loading and jail failures before anything is served, a protocol version
/// mismatch, and an interpreter that cannot start or go on. The supervisor has been told why
/// (`Failed`) of all but the connection's own failures.
pub fn run(args: ServeArgs, ready_clock: ReadyClock) -> Result<Ended, WorkerError> {
    serve(args, ready_clock, None)
}

/// [`run`] for a worker whose modules are mapped already: a fork server's child.
///
/// # Errors
/// As [`run`].
pub fn run_loaded(
    args: ServeArgs,
    ready_clock: ReadyClock,
    loaded: Loaded,
) -> Result<Ended, WorkerError> {
    serve(args, ready_clock, Some(loaded))
}

fn serve(
    args: ServeArgs,
    ready_clock: ReadyClock,
    loaded: Option<Loaded>,
) -> Result<Ended, WorkerError> {
    let stream = UnixStream::connect(&args.socket).map_err(|source| WorkerError::Connect {
        socket: args.socket.clone(),
        source,
    })?;
    // A state layer (hundreds of kilobytes after each call) or a snapshot goes out in one
    // write instead of a round trip per default-sized buffer (the kernel caps it at
    // net.core.wmem_max).
    if let Err(e) = rustix::net::sockopt::set_socket_send_buffer_size(&stream, SEND_BUFFER) {
        tracing::debug!(error = %e, "the connection keeps its default send buffer");
    }
    let mut reader = stream.try_clone()?;
    let (outbox, endings) = Outbox::new(stream);
    let forked = loaded.is_some();
    tracing::debug!(us = ready_clock.elapsed_us(), forked, "connected");
    let loaded = match loaded {
        Some(loaded) => loaded,
        None => Loaded::load(&args).map_err(|e| outbox.fail(e))?,
    };
    let toolbox = (loaded.toolbox.as_ref()).map(|t| t.for_session(&args.workspace, &args.config));
    let shell = ShellRunner::new(args.runtime.language(), &args.workspace, &args.config)
        .with_toolbox(toolbox)
        .with_interpreters(fresh_interpreters(&args, &loaded));
    tracing::debug!(us = ready_clock.elapsed_us(), forked, "modules mapped");

    // The jail, while this is the only thread: the socket is connected and the module mapped,
    // so from here on nothing needs a path outside the session's directories.
    let plan = args
        .probe
        .then(|| probe::Plan::new(&args.workspace, &args.module));
    crate::snapshot::watch::open();
    crate::data_limit::open();
    let jail = match enter_jail(&args) {
        Ok(report) => report,
        Err(e) => {
            let e = outbox.fail(WorkerError::Jail(e));
            linger(&mut reader);
            return Err(e);
        }
    };
    tracing::debug!(?jail, us = ready_clock.elapsed_us(), "jailed");
    if let Some(plan) = plan {
        let report = probe::attack(&plan, &jail);
        let _ = outbox.send(&Response::Failed { message: report });
        linger(&mut reader);
        return Ok(Ended::Probed);
    }
    // The first threads start only now, inside the jail: Landlock before ABI 8 restricts only
    // the calling thread and the threads it starts later. A spare's interpreter is adopted
    // before any (on this thread, which is running already: a thread takes 0.1-0.4 ms to start
    // in a new worker, more on a busy machine), then the guest's thread starts, then the
    // others beside it.
    let control = Arc::new(Control::default());
    let (jobs, requests) = mpsc::channel();
    let link = Link {
        requests,
        outbox: outbox.clone(),
        control: control.clone(),
        jail,
        ready_clock,
        forked,
    };
    spawn_guest(args, loaded, link)?;
    engine::start_epoch_ticker();
    start_file_runtime();
    let reading = Reader {
        stream: Inbound::new(reader),
        jobs,
        restoring: Vec::new(),
        shell,
        control,
        outbox,
    };
    std::thread::Builder::new()
        .name("reader".into())
        .spawn(move || reading.run())?;
    // Every thread holds the outbox; if all of them end without a word, one panicked.
    endings.recv().unwrap_or_else(|_| {
        Err(WorkerError::Runtime(
            "every thread of the worker ended without saying why".into(),
        ))
    })
}

/// Starts wasmtime-wasi's Tokio runtime, which the guest's first file call would otherwise
/// start on the guest thread (its worker threads, before a new session's first answer): on a
/// thread of its own, beside the interpreter's adoption. A guest that gets there first waits
/// for the same runtime, as before.
fn start_file_runtime() {
    let started = std::thread::Builder::new()
        .name("file-runtime".into())
        .spawn(|| wasmtime_wasi::runtime::in_tokio(async {}));
    if let Err(e) = started {
        tracing::debug!(error = %e, "the guest's first file call starts the file runtime");
    }
}

/// The fresh interpreters of the session's shell: its own runtime's, from the module or image
/// this worker mapped for the session (never its instance: a shell's `python` does not share
/// the session's variables), and the other language's when the server has it.
fn fresh_interpreters(args: &ServeArgs, loaded: &Loaded) -> Vec<Companion> {
    let dirs = || (args.workspace.clone(), args.config.clone());
    // The image when it loaded, else the module, which a run then starts cold.
    let own_module = match &loaded.image {
        Some(image) => Some(image.clone()),
        None => loaded.module.get().ok().cloned(),
    };
    let own = CompanionArgs {
        runtime: args.runtime,
        module: args.module.clone(),
        image: (loaded.image.as_ref()).and(args.image.clone()),
        wasm_sha256: args.wasm_sha256.clone(),
        // The session's own directories are its runtime's.
        mounts: Vec::new(),
    };
    let mut fresh = vec![Companion::new(
        own,
        loaded.linker.clone(),
        dirs(),
        own_module,
    )];
    if let Some(other) = args.companion.clone() {
        let mapped = loaded.companion.clone();
        fresh.push(Companion::new(other, loaded.linker.clone(), dirs(), mapped));
    }
    fresh
}

/// Enters the jail `args` asks for, allowing the session's own directories.
fn enter_jail(args: &ServeArgs) -> Result<JailReport, jail::JailError> {
    let mounts: Vec<(PathBuf, bool)> = (args.config.mounts.iter())
        .map(|m| (m.host.clone(), m.writable))
        .collect();
    let (read_write, mut read_only) =
        jail::paths_for_session(&args.workspace, &mounts, &args.module);
    // The other language's interpreter reads its own directories (read-only, for its
    // instances only).
    let companion = args.companion.iter().flat_map(|c| &c.mounts);
    read_only.extend(companion.map(|m| m.host.clone()));
    let spec = JailSpec {
        requested: args.jail.requested,
        required: args.jail.required,
        read_write,
        read_only,
    };
    jail::enter(&spec, &args.jail.early)
}

/// Starts the guest thread: it runs the session's interpreter until the supervisor goes away,
/// then ends the worker (with the error, when the interpreter failed).
fn spawn_guest(args: ServeArgs, mut loaded: Loaded, link: Link) -> Result<(), WorkerError> {
    let wake = if args.resume {
        WakeAt::FirstNeed
    } else {
        WakeAt::Start
    };
    // A spare's interpreter is adopted here, on the main thread, before the guest thread
    // exists (see `python::adopt_before_threads`).
    let adopted = match (args.runtime.language(), &loaded.image) {
        (Language::Python, Some(_)) => loaded.pristine.take().and_then(|pristine| {
            python::adopt_before_threads(
                pristine,
                &loaded.image_identity,
                (&args.workspace, &args.config),
                python::Build::of(&args.wasm_sha256),
                (&link, wake),
            )
        }),
        _ => None,
    };
    let outbox = link.outbox.clone();
    std::thread::Builder::new()
        .name("guest".into())
        .stack_size(crate::engine::WASM_THREAD_STACK)
        .spawn(move || {
            let Loaded {
                module,
                image,
                linker,
                pristine,
                js_ahead,
                module_identity,
                image_identity,
                toolbox: _,
                companion: _,
            } = loaded;
            let served = match args.runtime.language() {
                Language::Python => python::serve(
                    python::Modules {
                        module: &module,
                        image: image.as_ref(),
                        pristine,
                        adopted,
                        module_identity: &module_identity,
                        image_identity: &image_identity,
                    },
                    &linker,
                    &args.workspace,
                    &args.config,
                    python::Build::of(&args.wasm_sha256),
                    (link, wake),
                ),
                Language::JavaScript => {
                    module
                        .get()
                        .map_err(WorkerError::Engine)
                        .and_then(|module| {
                            javascript::serve(
                                (module, &module_identity),
                                (&linker, js_ahead),
                                &args.workspace,
                                &args.config,
                                (link, wake),
                            )
                        })
                }
            };
            outbox.end(served.map(|()| Ended::SupervisorGone));
        })?;
    Ok(())
}

/// The send buffer asked for the connection to the supervisor.
const SEND_BUFFER: usize = 4 << 20;

/// The supervisor's end of the connection as the reader reads it: every read is a `recvmsg`
/// that keeps the descriptors a frame brings ([`Request::RestoreFile`]); a plain `read` would
/// drop them.
struct Inbound {
    stream: UnixStream,
    /// Descriptors received and not yet taken, oldest first (a few at most).
    descriptors: std::collections::VecDeque<std::os::fd::OwnedFd>,
}

/// Descriptors kept waiting at most; more are closed at once (the supervisor sends one per
/// restore).
const MAX_WAITING_DESCRIPTORS: usize = 4;

impl Inbound {
    fn new(stream: UnixStream) -> Self {
        Self {
            stream,
            descriptors: std::collections::VecDeque::new(),
        }
    }
}

impl std::io::Read for Inbound {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};
        let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
        let mut ancillary = RecvAncillaryBuffer::new(&mut space);
        let received = rustix::net::recvmsg(
            &self.stream,
            &mut [std::io::IoSliceMut::new(buf)],
            &mut ancillary,
            RecvFlags::CMSG_CLOEXEC,
        )?;
        for message in ancillary.drain() {
            if let RecvAncillaryMessage::ScmRights(fds) = message {
                for fd in fds {
                    if self.descriptors.len() < MAX_WAITING_DESCRIPTORS {
                        self.descriptors.push_back(fd);
                    }
                }
            }
        }
        Ok(received.bytes)
    }
}

/// The reader thread: every frame from the supervisor.
struct Reader {
    stream: Inbound,
    /// Executions, snapshots and restores for the guest thread.
    jobs: Sender<Task>,
    /// The parts of a snapshot to restore received so far.
    restoring: Vec<u8>,
    shell: ShellRunner,
    control: Arc<Control>,
    outbox: Outbox,
}

impl Reader {
    /// Reads until the supervisor is done, then ends the worker. When the guest thread is gone,
    /// it stops without a word: the guest thread ended the worker itself.
    fn run(mut self) {
        if let Some(ending) = self.read_until_done() {
            self.outbox.end(ending);
        }
    }

    /// `None` when the guest thread is gone.
    fn read_until_done(&mut self) -> Option<Ending> {
        loop {
            match read_frame_blocking::<Request>(&mut self.stream) {
                Ok(Some(Request::Hello { protocol_version }))
                    if protocol_version != PROTOCOL_VERSION =>
                {
                    return Some(Err(WorkerError::ProtocolMismatch {
                        ours: PROTOCOL_VERSION,
                        theirs: protocol_version,
                    }));
                }
                Ok(Some(Request::Hello { .. })) => {}
                Ok(Some(Request::Execute(request))) => {
                    let job = Job { request };
                    self.jobs.send(Task::Run(job)).ok()?;
                }
                Ok(Some(Request::Snapshot)) => self.jobs.send(Task::Snapshot).ok()?,
                Ok(Some(Request::SendState)) => self.jobs.send(Task::SendState).ok()?,
                Ok(Some(Request::RestoreFile { len })) => {
                    let began = std::time::Instant::now();
                    let state = match self.stream.descriptors.pop_front() {
                        Some(fd) if len <= MAX_RESTORE as u64 => {
                            // From the file's start, whatever its offset: a short or unmappable
                            // file is refused as no snapshot.
                            let file = std::fs::File::from(fd);
                            match MappedState::map(&file, len as usize) {
                                Ok(mapped) => StateBytes::Mapped(mapped),
                                Err(e) => {
                                    tracing::debug!(error = %e, "a state file not mapped");
                                    StateBytes::Parts(Vec::new())
                                }
                            }
                        }
                        Some(_) => {
                            tracing::warn!(
                                "dropping the connection after a snapshot past any memory"
                            );
                            return Some(Ok(Ended::SupervisorGone));
                        }
                        None => StateBytes::Parts(Vec::new()),
                    };
                    tracing::debug!(
                        us = began.elapsed().as_micros() as u64,
                        len,
                        "state file mapped"
                    );
                    self.jobs.send(Task::Restore(state)).ok()?;
                }
                Ok(Some(Request::RestorePart { data, last })) => {
                    // A snapshot is bounded by the memory cap (4 GiB at most), and the
                    // supervisor sends only what a worker gave it: past that it is no snapshot.
                    if self.restoring.len() + data.len() > MAX_RESTORE {
                        tracing::warn!("dropping the connection after a snapshot past any memory");
                        return Some(Ok(Ended::SupervisorGone));
                    }
                    self.restoring.extend_from_slice(&data);
                    if last {
                        let snapshot = std::mem::take(&mut self.restoring);
                        self.jobs
                            .send(Task::Restore(StateBytes::Parts(snapshot)))
                            .ok()?;
                    }
                }
                Ok(Some(Request::Command(command))) => {
                    // Taken at once: the shell thread starts now (see `Response::Started`).
                    let started = Response::Started {
                        execution_id: command.execution_id.clone(),
                    };
                    if self.outbox.send(&started).is_err() {
                        return Some(Ok(Ended::SupervisorGone));
                    }
                    self.shell
                        .start(command, self.outbox.clone(), self.control.clone());
                }
                Ok(Some(Request::Cancel { execution_id })) => {
                    let found = self.control.request_cancel(&execution_id);
                    tracing::debug!(%execution_id, found, "cancel requested");
                }
                Ok(Some(
                    request @ (Request::ChargeDisk { bytes, entries }
                    | Request::HoldDisk { bytes, entries }),
                )) => {
                    let hold = matches!(request, Request::HoldDisk { .. });
                    let charge = self.shell.charge_disk(bytes, entries, hold);
                    tracing::debug!(
                        bytes,
                        entries,
                        hold,
                        granted = charge.granted,
                        "disk charged"
                    );
                    if self.outbox.send(&Response::DiskCharged(charge)).is_err() {
                        return Some(Ok(Ended::SupervisorGone));
                    }
                }
                Ok(Some(Request::Shutdown)) => return Some(Ok(Ended::Shutdown)),
                Ok(None) => return Some(Ok(Ended::SupervisorGone)),
                Err(e) => {
                    tracing::warn!(error = %e, "dropping the connection after a bad frame");
                    return Some(Ok(Ended::SupervisorGone));
                }
            }
        }
    }
}

/// Waits until the supervisor hangs up (it kills a worker that answered `Failed`), so it reads
/// our last frame before it sees the socket close.
fn linger(reader: &mut UnixStream) {
    while let Ok(Some(_)) = read_frame_blocking::<Request>(reader) {}
}

#[cfg(test)]
mod tests {
    use sandbox_protocol::{ExecuteRequest, write_frame_blocking};

    use super::*;

    /// A reader over one end of a socket pair, the supervisor's end, the guest thread's jobs
    /// and the main thread's endings.
    fn connected_reader() -> (
        Reader,
        UnixStream,
        mpsc::Receiver<Task>,
        mpsc::Receiver<Ending>,
    ) {
        let (worker, supervisor) = UnixStream::pair().unwrap();
        let (outbox, endings) = Outbox::new(worker.try_clone().unwrap());
        let (jobs, received) = mpsc::channel();
        let config = SessionConfig {
            mounts: Vec::new(),
            memory_bytes: 1 << 20,
            stdout_cap: 1,
            stderr_cap: 1,
            quota: None,
            clock_since: None,
        };
        let reader = Reader {
            stream: Inbound::new(worker),
            jobs,
            restoring: Vec::new(),
            shell: ShellRunner::new(
                Language::Python,
                std::path::Path::new("/nonexistent"),
                &config,
            ),
            control: Arc::default(),
            outbox,
        };
        (reader, supervisor, received, endings)
    }

    fn send(supervisor: &mut UnixStream, request: &Request) {
        write_frame_blocking(supervisor, request).unwrap();
    }

    /// Sends `request` with `fd` attached to its first byte, as the supervisor passes a file.
    fn send_with_fd(supervisor: &UnixStream, request: &Request, fd: std::os::fd::BorrowedFd<'_>) {
        use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags};
        let frame = sandbox_protocol::encode(request).unwrap();
        let fds = [fd];
        let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut ancillary = SendAncillaryBuffer::new(&mut space);
        assert!(ancillary.push(SendAncillaryMessage::ScmRights(&fds)));
        let sent = rustix::net::sendmsg(
            supervisor,
            &[std::io::IoSlice::new(&frame)],
            &mut ancillary,
            SendFlags::empty(),
        )
        .unwrap();
        assert_eq!(sent, frame.len());
    }

    /// A state to restore comes as a file whose descriptor rides with the request: the reader
    /// reads its first `len` bytes itself; a request without a descriptor restores nothing.
    #[test]
    fn a_state_file_passed_with_the_request_is_read_by_the_worker() {
        use std::io::Write;
        use std::os::fd::AsFd;
        let (reader, mut supervisor, jobs, endings) = connected_reader();
        let thread = std::thread::spawn(move || reader.run());
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(b"the state, then bytes past it").unwrap();
        send_with_fd(&supervisor, &Request::RestoreFile { len: 9 }, file.as_fd());
        let Task::Restore(state) = jobs.recv().unwrap() else {
            panic!("a restore")
        };
        assert_eq!(&*state, b"the state");
        send(&mut supervisor, &Request::RestoreFile { len: 9 });
        let Task::Restore(state) = jobs.recv().unwrap() else {
            panic!("a restore")
        };
        assert!(state.is_empty(), "no descriptor, no state");
        send_with_fd(&supervisor, &Request::RestoreFile { len: 99 }, file.as_fd());
        let Task::Restore(state) = jobs.recv().unwrap() else {
            panic!("a restore")
        };
        assert!(state.is_empty(), "a file shorter than said is no state");
        send(&mut supervisor, &Request::Shutdown);
        thread.join().unwrap();
        assert_eq!(endings.recv().unwrap().unwrap(), Ended::Shutdown);
    }

    #[test]
    fn the_reader_forwards_executions_and_ends_on_shutdown_or_hang_up() {
        let (reader, mut supervisor, jobs, endings) = connected_reader();
        let control = reader.control.clone();
        let thread = std::thread::spawn(move || reader.run());
        send(
            &mut supervisor,
            &Request::Hello {
                protocol_version: PROTOCOL_VERSION,
            },
        );
        let request = ExecuteRequest::user("exec-1".into(), "1".into(), 1, 1);
        send(&mut supervisor, &Request::Execute(request.clone()));
        let Task::Run(job) = jobs.recv().unwrap() else {
            panic!("an execution")
        };
        assert_eq!(job.request, request);
        let cancelled = control.start_shell("exec-2");
        send(
            &mut supervisor,
            &Request::Cancel {
                execution_id: "exec-2".into(),
            },
        );
        send(&mut supervisor, &Request::Shutdown);
        thread.join().unwrap();
        assert!(
            cancelled.load(std::sync::atomic::Ordering::SeqCst),
            "the cancel reached it"
        );
        assert_eq!(endings.recv().unwrap().unwrap(), Ended::Shutdown);

        let (reader, supervisor, _jobs, endings) = connected_reader();
        drop(supervisor);
        reader.run();
        assert_eq!(endings.recv().unwrap().unwrap(), Ended::SupervisorGone);
    }

    #[test]
    fn another_protocol_version_is_refused_and_said_so() {
        let (reader, mut supervisor, _jobs, endings) = connected_reader();
        send(
            &mut supervisor,
            &Request::Hello {
                protocol_version: PROTOCOL_VERSION + 1,
            },
        );
        reader.run();
        let ending = endings.recv().unwrap();
        assert!(
            matches!(ending, Err(WorkerError::ProtocolMismatch { .. })),
            "{ending:?}"
        );
        assert_eq!(ending.unwrap_err().exit_code(), 6);
        assert!(matches!(
            read_frame_blocking::<Response>(&mut supervisor).unwrap(),
            Some(Response::Failed { message }) if message.starts_with("protocol version mismatch")
        ));
    }

    #[test]
    fn a_reader_whose_guest_thread_is_gone_leaves_the_ending_to_it() {
        let (reader, mut supervisor, jobs, endings) = connected_reader();
        drop(jobs);
        let request = ExecuteRequest::user("exec-1".into(), "1".into(), 1, 1);
        send(&mut supervisor, &Request::Execute(request));
        reader.run();
        assert!(endings.try_recv().is_err(), "no ending of its own");
    }
}
