//! The worker's end of its supervisor connection, as the threads that answer on it share it.
//!
//! The reader (`serve.rs`) hands the supervisor's executions to the guest thread as [`Job`]s,
//! whose reports go back to the supervisor (a shell command line's `python`/`node` never reaches
//! the guest thread: it runs in a fresh interpreter, `companion.rs`). [`Outbox`] is the writing half every thread shares, and the way any of them tells
//! the main thread that the worker is done ([`Ended`], or an error), so that only `main` exits.
//! [`Link`] is everything the guest thread holds.

use std::os::unix::net::UnixStream;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard};

use sandbox_protocol::{
    ErrorKind, ExecuteRequest, ExecutionReport, FrameError, GuestError, JailReport, Language,
    ReadyInfo, Response, SNAPSHOT_PART, SnapshotInfo, write_frame_blocking,
};

use crate::host::Control;
use crate::{ReadyClock, WorkerError};

/// An execution for the guest thread, from the supervisor.
#[derive(Debug)]
pub struct Job {
    pub request: ExecuteRequest,
}

/// What the guest thread is asked to do, in arrival order.
#[derive(Debug)]
pub enum Task {
    /// An execution.
    Run(Job),
    /// A snapshot of the interpreter for the supervisor ([`sandbox_protocol::Request::Snapshot`]).
    Snapshot,
    /// The interpreter's state layer, sent now ([`sandbox_protocol::Request::SendState`]).
    SendState,
    /// Replace the interpreter with this state's.
    Restore(StateBytes),
}

/// When a new interpreter sets the session up (CPython's wake of its driver in an instance
/// of the memory image; QuickJS's runtime and context).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeAt {
    /// Before the worker says it is ready: a new session.
    Start,
    /// When the first request that runs guest code or takes its state comes. A worker started
    /// to resume a saved state (`--resume`) is given that state first, which replaces the
    /// whole interpreter: a set-up before it (~10 ms of CPython, ~14 ms of QuickJS) would be
    /// thrown away.
    FirstNeed,
}

/// A state to restore, as the guest thread reads it. Dropped before the restore is answered:
/// a mapped file is the supervisor's to change again once it has the answer.
#[derive(Debug)]
pub enum StateBytes {
    /// The parts of [`sandbox_protocol::Request::RestorePart`] put together.
    Parts(Vec<u8>),
    /// The file of a [`sandbox_protocol::Request::RestoreFile`], mapped read-only.
    Mapped(MappedState),
}

impl std::ops::Deref for StateBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Self::Parts(bytes) => bytes,
            Self::Mapped(mapped) => mapped.bytes(),
        }
    }
}

/// The first bytes of a state file, mapped read-only and private. A mapping costs no page of
/// the worker's: reading 2.4 MB into a fresh buffer costs ~3.5 ms on these machines (each new
/// page is a fault), mapping the page cache's pages ~0.2 ms.
///
/// The supervisor only appends to a state file, and puts off cutting one back while a restore
/// of it is in flight (`StateLog::lend`), so the mapped bytes neither change nor go away; were
/// the file cut anyway, a read past its end would end the worker (`SIGBUS`), which the
/// supervisor treats as any worker's death.
#[derive(Debug)]
pub struct MappedState {
    at: std::ptr::NonNull<std::ffi::c_void>,
    len: usize,
}

// SAFETY: the mapping is read-only and owned by this value alone; any thread may read or unmap it.
unsafe impl Send for MappedState {}

impl MappedState {
    /// Maps the first `len` bytes of `file` (populated, so the restore takes no fault on them).
    ///
    /// # Errors
    /// When the file is shorter than `len`, or cannot be mapped; `len` must not be zero.
    pub fn map(file: &std::fs::File, len: usize) -> std::io::Result<Self> {
        let size = file.metadata()?.len();
        if len == 0 || size < len as u64 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("the state file holds {size} bytes, not {len}"),
            ));
        }
        // SAFETY: a fresh private read-only mapping at an address the kernel picks, over
        // `len` bytes the file has; it aliases no Rust object.
        let at = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                rustix::mm::ProtFlags::READ,
                rustix::mm::MapFlags::PRIVATE | rustix::mm::MapFlags::POPULATE,
                file,
                0,
            )
        }?;
        let at = std::ptr::NonNull::new(at)
            .ok_or_else(|| std::io::Error::other("the kernel mapped the state at address 0"))?;
        Ok(Self { at, len })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `len` readable bytes at `at`, mapped until `self` drops; nothing writes them
        // (a private read-only mapping of a file the supervisor only appends to).
        unsafe { std::slice::from_raw_parts(self.at.as_ptr().cast::<u8>(), self.len) }
    }
}

impl Drop for MappedState {
    fn drop(&mut self) {
        // SAFETY: the mapping `map` made, unmapped once; no reference to it outlives `self`.
        if let Err(e) = unsafe { rustix::mm::munmap(self.at.as_ptr(), self.len) } {
            tracing::warn!(error = %e, "cannot unmap a restored state");
        }
    }
}

/// How a worker stopped without an error; the process exits with
/// [`sandbox_protocol::WorkerExit::Done`] for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The supervisor said `Shutdown`.
    Shutdown,
    /// The supervisor closed the connection, or a frame could not be written to it.
    SupervisorGone,
    /// `jail-probe` (tests only) reported its attacks on the jail instead of serving.
    Probed,
}

/// Why the worker is done: what the main thread waits for and returns to `main`.
pub type Ending = Result<Ended, WorkerError>;

/// The writing half of the connection, shared by the guest, reader and shell threads, and the
/// way each of them ends the worker.
#[derive(Debug, Clone)]
pub struct Outbox {
    writer: Arc<Mutex<UnixStream>>,
    endings: Sender<Ending>,
}

impl Outbox {
    /// The outbox writing to `stream`, and where the main thread hears that the worker is done.
    pub fn new(stream: UnixStream) -> (Self, Receiver<Ending>) {
        let (endings, done) = mpsc::channel();
        let outbox = Self {
            writer: Arc::new(Mutex::new(stream)),
            endings,
        };
        (outbox, done)
    }

    /// Sends one response frame.
    ///
    /// # Errors
    /// When the supervisor has gone away.
    pub fn send(&self, response: &Response) -> Result<(), FrameError> {
        write_frame_blocking(&mut *self.writer(), response)
    }

    /// Tells the supervisor why this worker cannot serve (a `Failed` frame), and returns the
    /// error for `main` to exit with.
    pub fn fail(&self, error: WorkerError) -> WorkerError {
        report_failure(&mut self.writer(), &error);
        error
    }

    /// Ends the worker: the main thread returns `ending` to `main`. An error is told to the
    /// supervisor first, as [`Outbox::fail`] does. The writer stays locked until the ending is
    /// queued, so it comes before the ending of a thread that saw the supervisor react to the
    /// `Failed` frame (it hangs up, and the reader sees the connection close).
    pub fn end(&self, ending: Ending) {
        let mut writer = self.writer();
        if let Err(error) = &ending {
            report_failure(&mut writer, error);
        }
        // No receiver: the main thread already has the first ending, the one that counts.
        let _ = self.endings.send(ending);
    }

    fn writer(&self) -> MutexGuard<'_, UnixStream> {
        self.writer.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The report of an execution cancelled before it began.
fn not_run(execution_id: String) -> ExecutionReport {
    ExecutionReport {
        execution_id,
        stdout: Vec::new(),
        stderr: Vec::new(),
        stdout_truncated: false,
        stderr_truncated: false,
        exit_code: 1,
        result: None,
        error: Some(GuestError {
            kind: ErrorKind::Cancelled,
            name: None,
            message: "the execution was cancelled before it began: none of it ran, and the session state is intact".into(),
        }),
        fuel_consumed: 0,
        duration_us: 0,
        memory_bytes: 0,
        restart: None,
        figures: Vec::new(),
        written: Vec::new(),
        state_follows: false,
    }
}

/// Logs `error` and sends it as a `Failed` frame; a supervisor that is gone cannot read it.
fn report_failure(writer: &mut UnixStream, error: &WorkerError) {
    tracing::error!(error = %error, "worker failed");
    let failed = Response::Failed {
        message: error.to_string(),
    };
    let _ = write_frame_blocking(writer, &failed);
}

/// The guest thread's end of the connection.
pub struct Link {
    /// The executions to run, from the reader and from shell command lines, and the
    /// supervisor's snapshots and restores.
    pub requests: Receiver<Task>,
    pub outbox: Outbox,
    /// Cancel requests for the execution in progress, set by the reader.
    pub control: Arc<Control>,
    /// The jail this worker is in, for [`ReadyInfo`].
    pub jail: JailReport,
    /// Started with the process (or the fork), for [`ReadyInfo::startup_us`].
    pub ready_clock: ReadyClock,
    /// Forked by a fork server, for [`ReadyInfo::forked`].
    pub forked: bool,
}

impl Link {
    /// The next task, waiting for it; `None` once the reader is gone (or, for a supervisor's
    /// job, once the supervisor is). A job whose cancel overtook it (the reader read the
    /// `Cancel` before this thread took the job) is answered at once as cancelled, without
    /// running, and the wait goes on: the interpreter never saw it, so the session is exactly
    /// as it was. A supervisor's job is acknowledged (`Started`) before it is handed over: a
    /// worker that dies before that ran none of it, and the supervisor runs it again on a
    /// fresh worker.
    pub fn next_task(&self) -> Option<Task> {
        loop {
            let job = match self.requests.recv().ok()? {
                Task::Run(job) => job,
                other => return Some(other),
            };
            if !self
                .control
                .cancelled_before_start(&job.request.execution_id)
            {
                let started = Response::Started {
                    execution_id: job.request.execution_id.clone(),
                };
                self.send(&started).ok()?;
                return Some(Task::Run(job));
            }
            tracing::debug!(execution_id = %job.request.execution_id, "cancelled before it began");
            let report = not_run(job.request.execution_id);
            if self.deliver(report).is_err() {
                return None;
            }
        }
    }

    /// Sends one part of the interpreter's state after an execution (a layer of its kind; see
    /// [`crate::snapshot::Tracker::layer_in_parts`]), as it is made.
    ///
    /// # Errors
    /// When the supervisor has gone away.
    pub fn send_state(&self, part: crate::snapshot::LayerPart) -> Result<(), FrameError> {
        self.send(&Response::StatePart {
            data: part.data,
            last: part.last,
            kind: part.kind,
        })
    }

    /// Sends a snapshot in parts, then what it holds (or why there is none).
    ///
    /// # Errors
    /// When the supervisor has gone away.
    pub fn send_snapshot(
        &self,
        snapshot: Result<(Vec<u8>, SnapshotInfo), String>,
    ) -> Result<(), FrameError> {
        let info = match snapshot {
            Ok((bytes, info)) => {
                for part in bytes.chunks(SNAPSHOT_PART) {
                    self.send(&Response::SnapshotPart {
                        data: part.to_vec(),
                    })?;
                }
                Ok(info)
            }
            Err(why) => Err(why),
        };
        self.send(&Response::Snapshotted(info))
    }

    /// Delivers an execution's report to the supervisor.
    ///
    /// # Errors
    /// When the supervisor has gone away.
    pub fn deliver(&self, report: ExecutionReport) -> Result<(), FrameError> {
        self.send(&Response::Executed(report))
    }

    /// Sends one response frame.
    ///
    /// # Errors
    /// When the supervisor has gone away.
    pub fn send(&self, response: &Response) -> Result<(), FrameError> {
        self.outbox.send(response)
    }

    /// Tells the supervisor that the interpreter is ready for its first execution.
    ///
    /// # Errors
    /// When the supervisor has gone away.
    pub fn send_ready(
        &self,
        language: Language,
        runtime_version: String,
        from_image: bool,
    ) -> Result<(), FrameError> {
        self.send(&Response::Ready(ReadyInfo {
            language,
            runtime_version,
            startup_us: self.ready_clock.elapsed_us(),
            from_image,
            forked: self.forked,
            jail: self.jail.clone(),
        }))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::io::{self, ErrorKind};

    use sandbox_protocol::read_frame_blocking;

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
            figures: Vec::new(),
            written: Vec::new(),
            state_follows: false,
        }
    }

    /// A link whose socket's other end is returned, as the supervisor holds it, with the
    /// receiver of the worker's endings.
    pub(crate) fn link() -> (Link, UnixStream, Receiver<Ending>) {
        let (link, _jobs, supervisor, endings) = link_with_jobs();
        (link, supervisor, endings)
    }

    /// [`link`], with the sending end of its jobs.
    fn link_with_jobs() -> (Link, Sender<Task>, UnixStream, Receiver<Ending>) {
        let (worker, supervisor) = UnixStream::pair().unwrap();
        let (jobs, requests) = mpsc::channel();
        let (outbox, endings) = Outbox::new(worker);
        let link = Link {
            requests,
            outbox,
            control: Arc::default(),
            jail: JailReport::default(),
            ready_clock: ReadyClock::start(),
            forked: false,
        };
        (link, jobs, supervisor, endings)
    }

    fn nothing_pending(supervisor: &mut UnixStream) -> bool {
        supervisor.set_nonblocking(true).unwrap();
        let pending = read_frame_blocking::<Response>(supervisor);
        supervisor.set_nonblocking(false).unwrap();
        matches!(pending, Err(FrameError::Io(e)) if e.kind() == ErrorKind::WouldBlock)
    }

    #[test]
    fn reports_go_to_the_supervisor() {
        let (link, mut supervisor, _) = link();
        link.deliver(report("exec-1")).unwrap();
        match read_frame_blocking::<Response>(&mut supervisor).unwrap() {
            Some(Response::Executed(sent)) => assert_eq!(sent, report("exec-1")),
            other => panic!("{other:?}"),
        }
        assert!(nothing_pending(&mut supervisor));

        link.outbox
            .send(&Response::Executed(report("exec-4")))
            .unwrap();
        assert!(matches!(
            read_frame_blocking::<Response>(&mut supervisor).unwrap(),
            Some(Response::Executed(r)) if r.execution_id == "exec-4"
        ));
    }

    /// A job whose cancel came before the guest thread took it is answered cancelled without
    /// reaching the interpreter; the next job is handed over as usual.
    #[test]
    fn a_job_cancelled_before_it_began_is_answered_without_running() {
        let (link, jobs, mut supervisor, _endings) = link_with_jobs();
        let job = |id: &str| {
            Task::Run(Job {
                request: ExecuteRequest::user(id.into(), "1".into(), 1, 1),
            })
        };
        jobs.send(job("exec-1")).unwrap();
        jobs.send(job("exec-2")).unwrap();
        assert!(
            !link.control.request_cancel("exec-1"),
            "exec-1 has not begun"
        );
        let Some(Task::Run(next)) = link.next_task() else {
            panic!("the job after it")
        };
        assert_eq!(next.request.execution_id, "exec-2");
        match read_frame_blocking::<Response>(&mut supervisor).unwrap() {
            Some(Response::Executed(report)) => {
                assert_eq!(report.execution_id, "exec-1");
                let error = report.error.expect("an error");
                assert_eq!(error.kind, sandbox_protocol::ErrorKind::Cancelled);
                assert!(error.message.contains("none of it ran"), "{error:?}");
            }
            other => panic!("{other:?}"),
        }
        // The job handed over was acknowledged first; the cancelled one never was.
        assert_eq!(
            read_frame_blocking::<Response>(&mut supervisor).unwrap(),
            Some(Response::Started {
                execution_id: "exec-2".into()
            })
        );
        assert!(nothing_pending(&mut supervisor));
        drop(jobs);
        assert!(link.next_task().is_none(), "the reader is gone");
    }

    #[test]
    fn a_worker_that_cannot_serve_says_why_before_it_exits() {
        let (link, mut supervisor, endings) = link();
        let error = link
            .outbox
            .fail(WorkerError::Runtime("no interpreter".into()));
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

        // Ending with an error says why too, and the main thread hears it.
        link.outbox.end(Err(WorkerError::Runtime("gone".into())));
        assert!(matches!(
            read_frame_blocking::<Response>(&mut supervisor).unwrap(),
            Some(Response::Failed { message }) if message == "interpreter failure: gone"
        ));
        assert!(matches!(
            endings.recv().unwrap(),
            Err(WorkerError::Runtime(_))
        ));
        // An ending without an error sends nothing.
        link.outbox.end(Ok(Ended::Shutdown));
        assert_eq!(endings.recv().unwrap().unwrap(), Ended::Shutdown);
        assert!(nothing_pending(&mut supervisor));
    }

    #[test]
    fn a_supervisor_that_went_away_is_an_error_not_a_hang() {
        let (link, supervisor, endings) = link();
        drop(supervisor);
        assert!(link.send(&Response::Executed(report("exec-1"))).is_err());
        assert!(link.deliver(report("exec-1")).is_err());
        assert!(
            link.send_ready(Language::Python, "3.15".into(), false)
                .is_err()
        );
        // Ending still reaches the main thread.
        link.outbox.end(Err(WorkerError::Runtime("gone".into())));
        assert!(endings.recv().unwrap().is_err());
    }
}
