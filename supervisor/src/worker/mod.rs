//! One `sandbox-worker` process as the supervisor sees it: the typed request/response exchange
//! over its socket, the hard kill, and how its end is described. How it is started is [`plan`]
//! (decided and validated first, purely) and [`spawn`] (carried out, jailed, under a guard).

pub mod fork_server;
pub mod plan;
pub mod spawn;

use std::sync::Arc;
use std::time::Duration;

#[allow(deprecated, reason = "see Worker")]
use interprocess::local_socket::tokio::{RecvHalf, SendHalf, prelude::*};
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use sandbox_protocol::{
    DiskCharge, ExecutionReport, FrameError, LayerKind, PROTOCOL_VERSION, ReadyInfo, Request,
    Response, RestoreInfo, SNAPSHOT_PART, SnapshotInfo, WorkerExit, read_frame, write_frame,
};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

pub use plan::{PlanError, SpawnPlan, SpawnRequest};
pub use spawn::SpawnError;

use crate::config::SupervisorConfig;
use fork_server::ForkServer;
use spawn::WorkerProcess;

/// How long a new worker may take to connect and report a ready interpreter. CPython starts in
/// about 60 ms; this only guards against a wedged process.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(20);

/// How long after an execution's timeout (or a cancel) the supervisor waits for the worker's own
/// answer before killing it. The worker interrupts at once, traps 0.4 s later if the guest
/// ignores the interrupt, and then needs a few tens of milliseconds to roll back (JavaScript)
/// or start a fresh interpreter (Python): an idle host answers within 0.5 s. The kill is a
/// backstop for a worker that is wedged, and it loses the session's variables, so the grace
/// leaves a loaded host (a 2-core CI machine running the whole suite) several times the
/// worker's need: at 1.5 s, killed workers were seen there that would have answered.
pub const KILL_GRACE: Duration = Duration::from_secs(3);

/// How long a worker may take to answer a [`Request::ChargeDisk`]: a count of the session's
/// files (at most its quota of entries, 10^5 at most) takes milliseconds; this only guards
/// against a wedged worker.
const CHARGE_TIMEOUT: Duration = Duration::from_secs(10);

/// Why an execution got no report from the worker.
#[derive(Debug)]
pub enum ExecFailure {
    /// The worker did not answer by `timeout + KILL_GRACE` and was killed.
    Killed { cancelled: bool },
    /// The worker died or broke the protocol after it took the execution (`Started`); `exit`
    /// says how it ended.
    Crashed { exit: String },
    /// The worker died before it took the execution: none of it ran, so it may run again on a
    /// fresh worker (the session does, see `Session::execute`).
    NotTaken { exit: String },
    /// Cancelled while waiting for the session's previous execution: nothing ran.
    CancelledWhileQueued,
}

/// How long a worker may take to snapshot or restore its interpreter (copying and compressing
/// up to its whole memory) before it is taken for stalled.
const STATE_TIMEOUT: Duration = Duration::from_secs(60);

/// The largest snapshot taken in: a whole wasm32 memory, uncompressed, and its page list.
pub const MAX_SNAPSHOT: usize = (4 << 30) + (8 << 20);

/// What one frame does to an answer being read ([`Worker::state_answer`]).
enum Step<T> {
    /// A part of it: read on.
    More,
    Done(T),
    /// Not part of the exchange: the worker broke the protocol.
    Unexpected,
}

/// Why a worker gave no snapshot or did not restore one.
#[derive(Debug, thiserror::Error)]
pub enum StateFailure {
    /// The worker said why; it and its interpreter are as they were.
    #[error("{0}")]
    Refused(String),
    /// The worker died, stalled or broke the protocol, and was killed.
    #[error("the worker was lost: {0}")]
    Lost(String),
}

/// A running worker and its connection. Dropping it kills the worker's process group and
/// removes its cgroup.
#[derive(Debug)]
#[allow(
    deprecated,
    reason = "split halves let a cancel be written while a reply is being read"
)]
pub struct Worker {
    process: WorkerProcess,
    /// Read only by whoever holds the worker (`&mut`): the session's runner.
    reader: RecvHalf,
    /// Shared with [`WorkerLine`]s, so that a disk charge can be asked while an execution
    /// runs.
    line: Arc<WorkerLine>,
    /// The interpreter's states sent after executions, not yet taken by the session.
    states: StateInbox,
}

/// The layers of state a worker sends after each execution that returned
/// ([`Response::StatePart`]), put together.
#[derive(Debug, Default)]
struct StateInbox {
    partial: Vec<u8>,
    layers: Vec<StateLayer>,
    /// A layer was dropped: the layers after it apply to a state the session lacks.
    lost: bool,
    /// The base layer of the fork server that forked the worker, which its
    /// [`LayerKind::OverBase`] layer applies to.
    base: Option<Arc<Vec<u8>>>,
    /// An execution was answered and the layer it left is still to come
    /// ([`ExecutionReport::state_follows`]; see [`Worker::receive_state`]).
    due: bool,
}

/// A layer of state the worker sent was dropped (larger than any memory): the layers after it,
/// until a full one, are dropped too.
#[derive(Debug, Clone, Copy)]
pub struct LayerLost;

/// One layer of an interpreter's state: `full` replaces every layer before it. Shared, since
/// a fork server's base layer is the first layer of every session its workers start.
#[derive(Debug)]
pub struct StateLayer {
    pub bytes: Arc<Vec<u8>>,
    pub full: bool,
}

impl StateInbox {
    /// An inbox for a worker forked by a server whose base layer is `base`.
    fn over(base: Option<Arc<Vec<u8>>>) -> Self {
        Self {
            base,
            ..Self::default()
        }
    }

    /// Takes one part; a layer larger than any memory is dropped, and so is every layer
    /// after it until the next full one (it would apply to a state the session lacks). A
    /// layer over the fork server's base is kept as the base (full) and then it.
    fn absorb(&mut self, data: Vec<u8>, last: bool, kind: LayerKind) {
        if last {
            self.due = false;
        }
        let full = kind.replaces();
        if self.lost && !full {
            return;
        }
        if self.partial.len() + data.len() > MAX_SNAPSHOT {
            tracing::error!("a state layer larger than any memory; dropped");
            self.partial = Vec::new();
            self.layers.clear();
            self.lost = true;
            return;
        }
        if last && full {
            self.lost = false;
        }
        let bytes = if last && self.partial.is_empty() {
            // A layer of one part (nearly every one): kept as it came.
            data
        } else {
            self.partial.extend_from_slice(&data);
            if !last {
                return;
            }
            std::mem::take(&mut self.partial)
        };
        if kind == LayerKind::OverBase {
            let Some(base) = self.base.clone() else {
                tracing::error!(
                    "a state layer over a base this worker's fork server never sent; dropped"
                );
                self.layers.clear();
                self.lost = true;
                return;
            };
            self.layers.push(StateLayer {
                bytes: base,
                full: true,
            });
        }
        self.layers.push(StateLayer {
            bytes: Arc::new(bytes),
            full: kind == LayerKind::Full,
        });
    }
}

/// Takes a frame that any read loop over a worker may meet between the ones it waits for: a
/// state layer's part (kept in `states`), the answer to a disk charge (handed to whoever asked,
/// through `line`) and an execution's `Started`. Returns the frame when it is none of these,
/// for the loop to look at; a loop that waits for one of these itself matches it first.
fn take_incidental(
    line: &WorkerLine,
    states: &mut StateInbox,
    response: Response,
) -> Option<Response> {
    match response {
        Response::StatePart { data, last, kind } => states.absorb(data, last, kind),
        Response::DiskCharged(charge) => line.deliver_charge(charge),
        Response::Started { .. } => {}
        other => return Some(other),
    }
    None
}

/// The worker's connection as another task may use it while the worker's holder waits for an
/// execution: it writes whole frames, and takes the answer to a disk charge that the holder's
/// read loop hands over ([`Worker::execute`] reads every frame while it runs).
#[derive(Debug)]
#[allow(deprecated, reason = "see Worker")]
pub struct WorkerLine {
    writer: tokio::sync::Mutex<SendHalf>,
    /// Where the answer to the charge in flight goes (one at a time: the session serialises
    /// its installs).
    charge: std::sync::Mutex<Option<oneshot::Sender<DiskCharge>>>,
}

impl WorkerLine {
    async fn send(&self, request: &Request) -> Result<(), FrameError> {
        write_frame(&mut *self.writer.lock().await, request).await
    }

    /// Hands a charge's answer to whoever asked for it; an answer nobody waits for any more
    /// (it gave up) is dropped.
    fn deliver_charge(&self, charge: DiskCharge) {
        let waiting = self.charge.lock().unwrap_or_else(|e| e.into_inner()).take();
        match waiting {
            Some(waiting) => {
                let _ = waiting.send(charge);
            }
            None => tracing::debug!(?charge, "a disk charge answered after its caller gave up"),
        }
    }

    /// Asks the worker to charge `bytes` and `entries` to the session's disk quota while
    /// another task holds the worker and reads its frames. The answer arrives through
    /// `answer`, which the holder's read loop fills; if the holder stops reading first, the
    /// caller reads it itself ([`Worker::read_charge`]).
    ///
    /// # Errors
    /// When the worker's socket is closed.
    pub async fn ask_charge(
        &self,
        bytes: u64,
        entries: u64,
    ) -> Result<oneshot::Receiver<DiskCharge>, FrameError> {
        self.ask_disk(Request::ChargeDisk { bytes, entries }).await
    }

    /// Sends `request` (a `ChargeDisk` or a `HoldDisk`), whose answer comes as for
    /// [`WorkerLine::ask_charge`].
    async fn ask_disk(
        &self,
        request: Request,
    ) -> Result<oneshot::Receiver<DiskCharge>, FrameError> {
        let (answer, answered) = oneshot::channel();
        *self.charge.lock().unwrap_or_else(|e| e.into_inner()) = Some(answer);
        self.send(&request).await?;
        Ok(answered)
    }
}

impl Worker {
    /// Starts a worker for one session and waits until its interpreter is ready: plans it
    /// ([`SpawnPlan::build`], which refuses before anything exists), launches it under a
    /// guard, then greets it.
    ///
    /// # Errors
    /// See [`SpawnError`].
    pub async fn spawn(
        config: &SupervisorConfig,
        request: SpawnRequest<'_>,
        fork_server: Option<&Arc<ForkServer>>,
    ) -> Result<(Self, ReadyInfo), SpawnError> {
        let plan = SpawnPlan::build(config, &request)?;
        // A jail probe attacks instead of serving: only `serve` workers are forked.
        let fork_server = fork_server.filter(|_| plan.serves());
        let (guard, stream) = spawn::launch(&plan, fork_server).await?;
        #[allow(deprecated, reason = "see Worker")]
        let (reader, writer) = stream.split();
        widen_send_buffer(&writer);
        let mut worker = Self {
            process: guard.disarm(),
            reader,
            line: Arc::new(WorkerLine {
                writer: tokio::sync::Mutex::new(writer),
                charge: std::sync::Mutex::new(None),
            }),
            states: StateInbox::over(fork_server.and_then(|server| server.base())),
        };
        let ready = tokio::time::timeout(STARTUP_TIMEOUT, worker.handshake()).await;
        match ready {
            Ok(Ok(info)) => {
                config.jail.record(&info.jail);
                if !info.forked {
                    // Exec'd after all (the fork server refused): no layer of it is over
                    // the server's base.
                    worker.states.base = None;
                }
                Ok((worker, info))
            }
            Ok(Err(e)) => {
                let exit = worker.kill().await;
                Err(match e {
                    SpawnError::Died(_) => SpawnError::Died(exit),
                    other => other,
                })
            }
            Err(_) => {
                worker.kill().await;
                Err(SpawnError::ConnectTimeout)
            }
        }
    }

    async fn handshake(&mut self) -> Result<ReadyInfo, SpawnError> {
        let died = |e: FrameError| SpawnError::Died(e.to_string());
        self.line
            .send(&Request::Hello {
                protocol_version: PROTOCOL_VERSION,
            })
            .await
            .map_err(died)?;
        match read_frame::<Response>(&mut self.reader)
            .await
            .map_err(died)?
        {
            Some(Response::Ready(info)) => Ok(info),
            Some(Response::Failed { message }) => Err(SpawnError::Failed(message)),
            Some(other) => Err(SpawnError::Failed(format!(
                "unexpected first message {other:?}"
            ))),
            None => Err(SpawnError::Died(String::new())),
        }
    }

    pub fn pid(&self) -> u32 {
        self.process.pid
    }

    /// The connection as another task may use it while this worker's holder waits.
    /// The layers of state the worker sent since this was last asked, oldest first; `Err`
    /// when one was dropped, so the session's state is no longer what its log holds.
    pub fn take_states(&mut self) -> Result<Vec<StateLayer>, LayerLost> {
        if self.states.lost {
            return Err(LayerLost);
        }
        Ok(std::mem::take(&mut self.states.layers))
    }

    pub fn line(&self) -> Arc<WorkerLine> {
        self.line.clone()
    }

    /// Charges `bytes` and `entries` that the supervisor is about to move into the session to
    /// its disk quota, while nobody else reads this worker's frames.
    ///
    /// # Errors
    /// When the worker is gone, wedged or broke the protocol: it has been killed, and the
    /// session's files must be counted without it.
    pub async fn charge_disk(&mut self, bytes: u64, entries: u64) -> Result<DiskCharge, String> {
        let answered = match self.line.ask_charge(bytes, entries).await {
            Ok(answered) => answered,
            Err(e) => return Err(format!("{e}; {}", self.kill().await)),
        };
        self.read_charge(answered).await
    }

    /// Makes `bytes` and `entries` what the session keeps outside its files (its checkpoints)
    /// and pays for from its disk quota: more is granted only when it fits, and the session's
    /// files are counted afresh either way.
    ///
    /// # Errors
    /// As [`Worker::charge_disk`].
    pub async fn hold_disk(&mut self, bytes: u64, entries: u64) -> Result<DiskCharge, String> {
        let asked = self.line.ask_disk(Request::HoldDisk { bytes, entries });
        let answered = match asked.await {
            Ok(answered) => answered,
            Err(e) => return Err(format!("{e}; {}", self.kill().await)),
        };
        self.read_charge(answered).await
    }

    /// The interpreter's state between executions: a snapshot the worker takes once the
    /// executions before it are done, and what it holds.
    ///
    /// # Errors
    /// [`StateFailure::Refused`] when the worker could not take one (it goes on);
    /// [`StateFailure::Lost`] when it died, stalled or broke the protocol (it was killed).
    pub async fn snapshot(&mut self) -> Result<(Vec<u8>, SnapshotInfo), StateFailure> {
        if let Err(e) = self.line.send(&Request::Snapshot).await {
            return Err(StateFailure::Lost(format!("{e}; {}", self.kill().await)));
        }
        let mut bytes = Vec::new();
        let info = self
            .state_answer("a snapshot", |response| match response {
                Response::SnapshotPart { data } if bytes.len() + data.len() <= MAX_SNAPSHOT => {
                    bytes.extend_from_slice(&data);
                    Step::More
                }
                Response::Snapshotted(info) => Step::Done(info),
                _ => Step::Unexpected,
            })
            .await?;
        Ok((bytes, info))
    }

    /// Asks the worker for its state layer now (a pooled worker's first, full one, taken while
    /// it waits); read, like every layer, by whoever next reads its frames.
    ///
    /// # Errors
    /// When the worker's connection is gone.
    pub async fn send_state_now(&self) -> Result<(), String> {
        self.line
            .send(&Request::SendState)
            .await
            .map_err(|e| e.to_string())
    }

    /// Replaces the worker's interpreter with the state in `snapshot` (taken of the same
    /// interpreter build, by any worker).
    ///
    /// # Errors
    /// [`StateFailure::Refused`] when the worker refused it (its interpreter is unchanged);
    /// [`StateFailure::Lost`] when it died, stalled or broke the protocol (it was killed).
    pub async fn restore(&mut self, snapshot: &[u8]) -> Result<RestoreInfo, StateFailure> {
        let mut parts = snapshot.chunks(SNAPSHOT_PART).peekable();
        if parts.peek().is_none() {
            return Err(StateFailure::Refused("an empty snapshot".into()));
        }
        while let Some(part) = parts.next() {
            let request = Request::RestorePart {
                data: part.to_vec(),
                last: parts.peek().is_none(),
            };
            if let Err(e) = self.line.send(&request).await {
                return Err(StateFailure::Lost(format!("{e}; {}", self.kill().await)));
            }
        }
        self.restored().await
    }

    /// Replaces the worker's interpreter with the state in the first `len` bytes of `file`,
    /// which the worker reads itself: its descriptor goes with the request, so no byte of the
    /// state crosses the socket.
    ///
    /// # Errors
    /// As [`Worker::restore`]; a request that could not carry the descriptor is
    /// [`StateFailure::Refused`] with nothing sent (the state may then go as bytes).
    pub async fn restore_file(
        &mut self,
        file: &std::fs::File,
        len: u64,
    ) -> Result<RestoreInfo, StateFailure> {
        use std::os::fd::AsFd;
        use tokio::io::AsyncWriteExt;
        let frame = sandbox_protocol::encode(&Request::RestoreFile { len })
            .map_err(|e| StateFailure::Refused(e.to_string()))?;
        {
            let mut writer = self.line.writer.lock().await;
            #[allow(deprecated, reason = "see Worker")]
            let SendHalf::UdSocket(half) = &*writer;
            let fds = [file.as_fd()];
            let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
            let mut ancillary = rustix::net::SendAncillaryBuffer::new(&mut space);
            if !ancillary.push(rustix::net::SendAncillaryMessage::ScmRights(&fds)) {
                return Err(StateFailure::Refused("no room for a descriptor".into()));
            }
            // The socket is non-blocking; the connection is idle and the frame small, so it
            // goes at once (the descriptor with its first byte), or not at all.
            let sent = rustix::net::sendmsg(
                half.as_fd(),
                &[std::io::IoSlice::new(&frame)],
                &mut ancillary,
                rustix::net::SendFlags::NOSIGNAL,
            )
            .map_err(|e| StateFailure::Refused(format!("cannot pass the state's file: {e}")))?;
            if sent < frame.len()
                && let Err(e) = writer.write_all(&frame[sent..]).await
            {
                drop(writer);
                return Err(StateFailure::Lost(format!("{e}; {}", self.kill().await)));
            }
        }
        self.restored().await
    }

    /// The worker's answer to a restore.
    async fn restored(&mut self) -> Result<RestoreInfo, StateFailure> {
        let restored = self
            .state_answer("an answer to a restore", |response| match response {
                Response::Restored(restored) => Step::Done(restored),
                _ => Step::Unexpected,
            })
            .await;
        if restored.is_ok() {
            // Layers of the interpreter it replaced (a pooled worker's first) are of no state
            // the session has.
            self.states = StateInbox::over(self.states.base.take());
        }
        restored
    }

    /// Reads frames until `take` has the answer, handing disk charges over, keeping state
    /// layers and skipping acknowledgements, for at most [`STATE_TIMEOUT`].
    async fn state_answer<T>(
        &mut self,
        what: &str,
        mut take: impl FnMut(Response) -> Step<Result<T, String>>,
    ) -> Result<T, StateFailure> {
        let read = async {
            loop {
                let response = match read_frame::<Response>(&mut self.reader).await {
                    Ok(Some(response)) => response,
                    Ok(None) => return Err("the worker closed its connection".to_owned()),
                    Err(e) => return Err(e.to_string()),
                };
                if let Some(response) = take_incidental(&self.line, &mut self.states, response) {
                    match take(response) {
                        Step::More => {}
                        Step::Done(answer) => return Ok(answer),
                        Step::Unexpected => {
                            return Err(format!("an unexpected frame instead of {what}"));
                        }
                    }
                }
            }
        };
        match tokio::time::timeout(STATE_TIMEOUT, read).await {
            Ok(Ok(Ok(answer))) => Ok(answer),
            Ok(Ok(Err(refused))) => Err(StateFailure::Refused(refused)),
            Ok(Err(why)) => Err(StateFailure::Lost(format!("{why}; {}", self.kill().await))),
            Err(_) => Err(StateFailure::Lost(format!(
                "no {what} within {} s; {}",
                STATE_TIMEOUT.as_secs(),
                self.kill().await
            ))),
        }
    }

    /// Reads this worker's frames until the answer to the charge in flight, whether it comes
    /// through `answered` (handed over by an execution's read loop that ended since) or on the
    /// socket.
    ///
    /// # Errors
    /// As [`Worker::charge_disk`].
    pub async fn read_charge(
        &mut self,
        mut answered: oneshot::Receiver<DiskCharge>,
    ) -> Result<DiskCharge, String> {
        if let Ok(charge) = answered.try_recv() {
            return Ok(charge);
        }
        let read = async {
            loop {
                match read_frame::<Response>(&mut self.reader).await {
                    Ok(Some(Response::DiskCharged(charge))) => return Ok(charge),
                    Ok(Some(response)) => {
                        if let Some(other) = take_incidental(&self.line, &mut self.states, response)
                        {
                            return Err(format!("unexpected {other:?}"));
                        }
                    }
                    Ok(None) => return Err("the worker closed its connection".to_owned()),
                    Err(e) => return Err(e.to_string()),
                }
            }
        };
        let outcome = tokio::time::timeout(CHARGE_TIMEOUT, read).await;
        self.line
            .charge
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        match outcome {
            Ok(Ok(charge)) => Ok(charge),
            Ok(Err(why)) => Err(format!("{why}; {}", self.kill().await)),
            Err(_) => Err(format!(
                "no answer to a disk charge within {} s; {}",
                CHARGE_TIMEOUT.as_secs(),
                self.kill().await
            )),
        }
    }

    /// Runs one execution. Cancelling `cancel` asks the worker to interrupt it (state kept); a
    /// worker that does not answer by `timeout + KILL_GRACE` (or `KILL_GRACE` after a cancel) is
    /// killed.
    ///
    /// # Errors
    /// [`ExecFailure`] when no report came; the worker is dead afterwards either way.
    pub async fn execute(
        &mut self,
        request: &Request,
        cancel: &CancellationToken,
    ) -> Result<ExecutionReport, ExecFailure> {
        let (execution_id, timeout_ms) = match request {
            Request::Execute(r) => (r.execution_id.clone(), r.timeout_ms),
            Request::Command(c) => (c.execution_id.clone(), c.timeout_ms),
            other => unreachable!("not an execution: {other:?}"),
        };
        let timeout = Duration::from_millis(timeout_ms);
        if self.line.send(request).await.is_err() {
            // Nothing was delivered: the worker is gone and ran none of it.
            return Err(ExecFailure::NotTaken {
                exit: self.wait_or_kill().await,
            });
        }
        // Set by the worker's `Started`: from then on a death may have cut the execution short.
        let mut taken = false;
        let outcome = {
            let deadline = tokio::time::sleep(timeout + KILL_GRACE);
            tokio::pin!(deadline);
            let mut cancelled = false;
            let (reader, line, states) = (&mut self.reader, &self.line, &mut self.states);
            loop {
                // A fresh read per frame: a read completes (or fails) before the next begins,
                // and the select below never drops one half-way except at the deadline,
                // after which the worker is killed and its socket never read again.
                let reply = read_frame::<Response>(&mut *reader);
                tokio::pin!(reply);
                let frame = loop {
                    tokio::select! {
                        // A reply that is in wins over a deadline that passed while this task
                        // waited for a thread (a loaded host wakes both at once).
                        biased;
                        reply = &mut reply => break Ok(reply),
                        () = &mut deadline => break Err(ExecFailure::Killed { cancelled }),
                        () = cancel.cancelled(), if !cancelled => {
                            cancelled = true;
                            let cancel = Request::Cancel { execution_id: execution_id.clone() };
                            let _ = line.send(&cancel).await;
                            let sooner = tokio::time::Instant::now() + KILL_GRACE;
                            if sooner < deadline.deadline() {
                                deadline.as_mut().reset(sooner);
                            }
                        }
                    }
                };
                match frame {
                    Ok(Ok(Some(Response::Started { execution_id: id }))) if id == execution_id => {
                        taken = true;
                    }
                    Ok(Ok(Some(response))) => {
                        if let Some(other) = take_incidental(line, states, response) {
                            break Ok(Ok(Some(other)));
                        }
                    }
                    other => break other,
                }
            }
        };
        match outcome {
            Ok(Ok(Some(Response::Executed(report)))) if report.execution_id == execution_id => {
                self.states.due = report.state_follows;
                Ok(report)
            }
            Ok(Ok(Some(other))) => {
                tracing::error!(pid = self.process.pid, reply = ?other, "worker broke the protocol");
                Err(ExecFailure::Crashed {
                    exit: self.kill().await,
                })
            }
            Ok(Ok(None) | Err(_)) => {
                let exit = self.wait_or_kill().await;
                Err(if taken {
                    ExecFailure::Crashed { exit }
                } else {
                    ExecFailure::NotTaken { exit }
                })
            }
            Err(killed) => {
                self.kill().await;
                Err(killed)
            }
        }
    }

    /// Reads the state layer the worker sends after answering an execution
    /// ([`ExecutionReport::state_follows`]), handing disk charges over, for at most
    /// [`STATE_TIMEOUT`]; at once when none is due.
    ///
    /// # Errors
    /// Why the layer never came (the worker died after it answered); the worker is dead
    /// afterwards.
    pub async fn receive_state(&mut self) -> Result<(), String> {
        let read = async {
            while self.states.due {
                match read_frame::<Response>(&mut self.reader).await {
                    Ok(Some(response)) => {
                        if let Some(other) = take_incidental(&self.line, &mut self.states, response)
                        {
                            return Err(format!(
                                "an unexpected frame instead of a state layer: {other:?}"
                            ));
                        }
                    }
                    Ok(None) => return Err("the worker closed its connection".to_owned()),
                    Err(e) => return Err(e.to_string()),
                }
            }
            Ok(())
        };
        match tokio::time::timeout(STATE_TIMEOUT, read).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(why)) => Err(format!("{why}; {}", self.wait_or_kill().await)),
            Err(_) => Err(format!(
                "no state layer within {} s; {}",
                STATE_TIMEOUT.as_secs(),
                self.kill().await
            )),
        }
    }

    /// How the worker ended, if it has (reaping it); `None` while it runs.
    pub fn exited(&mut self) -> Option<String> {
        match self.process.try_wait() {
            Ok(Some(status)) => Some(describe_exit(Some(status))),
            Ok(None) => None,
            Err(_) => Some("unknown".into()),
        }
    }

    /// Kills the whole process group and reaps the worker. Returns how it ended.
    pub async fn kill(&mut self) -> String {
        self.process.kill().await
    }

    /// A worker whose socket closed is usually dead already: give it a moment to be reaped with
    /// its real exit status (the signal that killed it), then make sure.
    async fn wait_or_kill(&mut self) -> String {
        match tokio::time::timeout(Duration::from_millis(500), self.process.wait()).await {
            Ok(status) => describe_exit(status),
            Err(_) => self.kill().await,
        }
    }

    /// Asks the worker to exit, then kills it regardless.
    pub async fn shutdown(mut self) {
        let _ = self.line.send(&Request::Shutdown).await;
        if tokio::time::timeout(Duration::from_millis(200), self.process.wait())
            .await
            .is_err()
        {
            self.kill().await;
        }
    }
}

/// The send buffer asked for a worker's connection: a state to restore (megabytes) goes out in
/// one write instead of a round trip per default-sized buffer (the kernel caps it at
/// net.core.wmem_max).
const SEND_BUFFER: usize = 4 << 20;

#[allow(deprecated, reason = "see Worker")]
fn widen_send_buffer(writer: &SendHalf) {
    use std::os::fd::AsFd;
    if let SendHalf::UdSocket(half) = writer
        && let Err(e) = rustix::net::sockopt::set_socket_send_buffer_size(half.as_fd(), SEND_BUFFER)
    {
        tracing::debug!(error = %e, "a worker's connection keeps its default send buffer");
    }
}

/// SIGKILL to the worker's process group, then to the worker itself in case the group is gone.
pub fn kill_group(pid: u32) {
    let Ok(raw) = i32::try_from(pid) else { return };
    if raw <= 0 {
        return;
    }
    let _ = killpg(Pid::from_raw(raw), Signal::SIGKILL);
    let _ = kill(Pid::from_raw(raw), Signal::SIGKILL);
}

/// "exit status 7 (could not apply a required jail layer)" for a status the worker chose (see
/// [`WorkerExit`]), "exit status 42" for any other, "killed by SIGKILL", or "unknown".
pub fn describe_exit(status: Option<std::process::ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(s) => match (s.code(), s.signal()) {
            (Some(code), _) => match WorkerExit::from_code(code) {
                Some(exit) => format!("exit status {code} ({})", exit.describe()),
                None => format!("exit status {code}"),
            },
            (None, Some(sig)) => match Signal::try_from(sig) {
                Ok(signal) => format!("killed by {signal}"),
                Err(_) => format!("killed by signal {sig}"),
            },
            _ => "unknown".into(),
        },
        None => "unknown".into(),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;

    use super::*;

    #[test]
    fn exits_are_described_for_the_operator_and_the_client() {
        // A wait status: exit code in the high byte, or the signal in the low bits.
        assert_eq!(
            describe_exit(Some(ExitStatus::from_raw(0))),
            "exit status 0 (finished)"
        );
        assert_eq!(
            describe_exit(Some(ExitStatus::from_raw(5 << 8))),
            "exit status 5 (interpreter failure)"
        );
        assert_eq!(
            describe_exit(Some(ExitStatus::from_raw(WorkerExit::Jail.code() << 8))),
            "exit status 7 (could not apply a required jail layer)"
        );
        assert_eq!(
            describe_exit(Some(ExitStatus::from_raw(42 << 8))),
            "exit status 42",
            "a status the worker does not choose"
        );
        assert_eq!(
            describe_exit(Some(ExitStatus::from_raw(Signal::SIGKILL as i32))),
            "killed by SIGKILL"
        );
        assert_eq!(
            describe_exit(Some(ExitStatus::from_raw(Signal::SIGSEGV as i32))),
            "killed by SIGSEGV"
        );
        assert_eq!(
            describe_exit(Some(ExitStatus::from_raw(100))),
            "killed by signal 100",
            "a signal number nix does not know"
        );
        assert_eq!(describe_exit(None), "unknown");
    }

    /// A layer due after an answered call is awaited until its last part, also when it is
    /// dropped (larger than any memory) or follows a dropped one.
    #[test]
    fn a_due_layer_is_awaited_until_its_last_part() {
        let mut inbox = StateInbox::over(None);
        inbox.due = true;
        inbox.absorb(vec![1; 3], false, LayerKind::Changes);
        assert!(inbox.due, "a part that is not the last");
        inbox.absorb(vec![2; 3], true, LayerKind::Changes);
        assert!(!inbox.due);
        assert_eq!(inbox.layers.len(), 1);
        inbox.lost = true;
        inbox.due = true;
        inbox.absorb(vec![3; 3], true, LayerKind::Changes);
        assert!(!inbox.due, "a layer dropped after a lost one still arrived");
    }

    /// A layer over the fork server's base is kept as the base (which replaces the log) and
    /// then it; one from a worker whose server sent no base applies to no state the session
    /// has, so it and the layers after it are dropped until a full one.
    #[test]
    fn a_layer_over_the_base_comes_after_the_base() {
        let base = Arc::new(vec![1u8; 10]);
        let mut inbox = StateInbox::over(Some(base.clone()));
        inbox.absorb(vec![2; 3], false, LayerKind::OverBase);
        inbox.absorb(vec![3; 3], true, LayerKind::OverBase);
        inbox.absorb(vec![4; 3], true, LayerKind::Changes);
        let layers: Vec<(Vec<u8>, bool)> = (inbox.layers.iter())
            .map(|l| (l.bytes.to_vec(), l.full))
            .collect();
        assert_eq!(
            layers,
            [
                (vec![1; 10], true),
                (vec![2, 2, 2, 3, 3, 3], false),
                (vec![4; 3], false),
            ]
        );
        assert!(
            Arc::ptr_eq(&inbox.layers[0].bytes, &base),
            "shared, not copied"
        );

        let mut orphan = StateInbox::over(None);
        orphan.absorb(vec![2; 3], true, LayerKind::OverBase);
        orphan.absorb(vec![4; 3], true, LayerKind::Changes);
        assert!(orphan.lost && orphan.layers.is_empty());
        orphan.absorb(vec![5; 3], true, LayerKind::Full);
        assert!(!orphan.lost && orphan.layers.len() == 1 && orphan.layers[0].full);
    }

    #[test]
    fn killing_a_group_never_signals_ourselves_or_everyone() {
        // 0 would be our own process group, and -1 (u32::MAX) every process we may signal.
        kill_group(0);
        kill_group(u32::MAX);
        kill_group(1 << 31);
        // Still here.
        assert!(std::process::id() > 0);
    }

    #[test]
    fn a_worker_gets_its_own_hard_deadline_before_it_is_killed() {
        /// The worker traps an execution that ignores its interrupt this long after the
        /// timeout (`HARD_GRACE` in the worker's `host.rs`), then reports.
        const WORKER_HARD_GRACE: Duration = Duration::from_millis(400);
        assert!(
            KILL_GRACE >= WORKER_HARD_GRACE * 3,
            "the supervisor kills only a worker that missed its own deadline by far"
        );
    }
}
