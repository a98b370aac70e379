//! Sessions: who owns each ([`crate::owner`]), the runtime it runs on and its limits ([`setup`]), its
//! worker, workspace and expiry, and the table of them all with admission ([`table`]).
//!
//! A session belongs to the client that created it: the table is keyed by owner and id, so
//! another client never sees it and may use the same id for a session of its own. A session
//! owns at most one worker at a time, behind an async mutex: executions of one session queue in
//! arrival order (tokio's mutex is fair), different sessions run in parallel. A worker that died
//! or was killed is replaced on the session's next call, and that call's result says so.
//!
//! A session whose worker is about to start, with nothing yet in its directories, adopts a
//! pre-started worker of its shape from the pool ([`crate::pool`]) together with that worker's
//! directories, so its call does not wait for an interpreter to start. A session made by
//! `create_session` when the pool has no such worker starts its own behind the answer
//! ([`Session::start_ahead`]), so the start overlaps the client's turn-around.

mod checkpoints;
mod durable;
mod resume;
mod setup;
mod table;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use sandbox_protocol::{
    CommandRequest, DiskCharge, ExecuteRequest, ExecutionKind, ExecutionReport, Language, Request,
    Runtime,
};
use tokio_util::sync::CancellationToken;

pub use crate::owner::{Owner, valid_session_id};
pub use checkpoints::{Checkpoint, MAX_LABEL_CHARS, StateError, Taken};
pub use setup::{PYTHON_MIN_MEMORY, SessionSpec};
pub use table::{CreateError, SessionTable, Usage};

use crate::config::{SessionLimits, SupervisorConfig};
use crate::metrics::{Crash, Kill};
use crate::pool::{WorkerPool, worker_shape};
use crate::runtimes::Runtimes;
pub use crate::worker::ExecFailure;
use crate::worker::{SpawnError, SpawnRequest, Worker, WorkerLine};
use crate::workspace::{SessionFiles, StateDirs};

/// One session.
#[derive(Debug)]
pub struct Session {
    pub id: String,
    pub owner: Owner,
    /// Its runtime and limits: see [`Session::runtime`] and [`Session::limits`].
    spec: SessionSpec,
    pub created_at: DateTime<Utc>,
    pub ttl: Duration,
    /// The key of its executions: the nonce of the directory it was created with, kept when
    /// it adopts a pooled worker's directory.
    key: String,
    /// Its directories (`/app`, `/tmp`), reached only through capability handles: replaced only
    /// while untouched and held by nobody else (see [`Session::adopt_pooled`]).
    files: Mutex<Arc<SessionFiles>>,
    /// Where it takes a pre-started worker from, and the state directory its files live in.
    pool: Arc<WorkerPool>,
    dirs: Arc<StateDirs>,
    last_used: Mutex<DateTime<Utc>>,
    /// Pid of the current worker (0: none), readable without waiting for the runner's queue.
    worker_pid: AtomicU32,
    /// A worker has run something for it: without one now, it uses no memory (see
    /// `memory`). A worker started ahead ([`Session::start_ahead`]) sets it only when it takes
    /// its first call: until then the session counts for its runtime's expected use, as
    /// before any start, and giving the worker up frees nothing admission counts.
    started: std::sync::atomic::AtomicBool,
    /// Executions run and fuel they used, over the session's life.
    pub executions: std::sync::atomic::AtomicU64,
    pub fuel_used: std::sync::atomic::AtomicU64,
    /// Shared so that the keeping of a call's state can hold it after the call is answered
    /// (see [`Session::keep_state_behind`]).
    runner: Arc<tokio::sync::Mutex<Runner>>,
    /// The runner is held by background work, not by a call: keeping the state of a call
    /// already answered, or starting a worker ahead of the first call. A look at the
    /// interpreter waits for that instead of giving up (see [`Session::execute`]);
    /// `background_done` tells it when the work lets go.
    held_in_background: std::sync::atomic::AtomicBool,
    background_done: tokio::sync::Notify,
    /// The current worker's connection, for a disk charge asked while an execution holds the
    /// runner (see [`Session::reserve_disk`]).
    line: Mutex<Option<Arc<WorkerLine>>>,
    /// Installs into the session, one at a time (a worker answers one disk charge at a time).
    installs: tokio::sync::Mutex<()>,
    /// Its checkpoints, oldest first (see [`checkpoints`]).
    checkpoints: Mutex<Vec<Checkpoint>>,
    /// What orders changes to its state log (see [`resume`]).
    state_log: Arc<resume::StateLog>,
    /// It outlives the server: its record is kept beside its files ([`durable`]).
    durable: bool,
}

/// What a session is made of: a new one's, or one a previous server kept ([`durable`]).
struct Parts {
    id: String,
    owner: Owner,
    spec: SessionSpec,
    key: String,
    files: SessionFiles,
    created_at: DateTime<Utc>,
    last_used: DateTime<Utc>,
    durable: bool,
    kept: Option<Kept>,
}

/// What a kept session brings beside its files.
struct Kept {
    executions: u64,
    fuel_used: u64,
    checkpoints: Vec<Checkpoint>,
    /// Why its first call starts a new worker (when it has a state to resume).
    lost: Option<String>,
}

/// Disk space reserved for files the server is about to move into a session (an install),
/// from [`Session::reserve_disk`]. When no worker counts the session's files, it holds the
/// session's queue, so that no worker starts (and counts) before the files are in: keep it
/// until they are.
#[must_use = "the reservation holds only while it is kept"]
pub struct DiskGrant<'a> {
    _runner: Option<tokio::sync::MutexGuard<'a, Runner>>,
    _install: tokio::sync::MutexGuard<'a, ()>,
}

/// How many times one call starts a fresh worker for an execution that its worker died before
/// taking (see [`ExecFailure::NotTaken`]).
const NOT_TAKEN_RETRIES: usize = 3;

/// One try at running an execution on the session's worker.
struct Attempt {
    outcome: Result<ExecutionReport, ExecFailure>,
    /// Why the previous worker is gone, when this try had to start a new one.
    replaced_worker: Option<String>,
    /// The new worker took over the session's state (see [`resume`]).
    resumed: bool,
    /// ... as the call before the last one left it (see [`Execution::missing_last_call`]).
    missing_last_call: bool,
    /// The fuel the execution was given.
    fuel_budget: u64,
}

/// Why a session's worker is started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    /// For a call or a checkpoint that uses it at once.
    ForUse,
    /// Ahead of a new session's first call ([`Session::start_ahead`]).
    Ahead,
}

/// The worker side of a session, behind the session's queue.
#[derive(Debug, Default)]
struct Runner {
    worker: Option<Worker>,
    /// Counts workers started, so each gets a fresh socket name.
    generation: u64,
    /// Why the previous worker is gone, told to the next call.
    lost: Option<String>,
    /// The current worker took over the session's state after the previous one was lost
    /// (told to the next call).
    resumed: bool,
    /// The previous worker died after it answered a call and before it sent the state that
    /// call left: the log ends at the call before (told to the next call).
    missing_last_call: bool,
}

/// What a session is asked to run.
#[derive(Debug, Clone)]
pub enum Work {
    /// Code for the interpreter (`execute_code`).
    Code(String),
    /// A shell command line (`execute_command`).
    Command(String),
    /// The interpreter's own description of its state (`get_workspace_info`).
    Inspect,
}

impl Work {
    /// The worker request that runs it (built for each try: a retry may be on another
    /// runtime's limits, and the code is small next to its trip through JSON).
    fn to_request(&self, execution_id: String, fuel: u64, timeout: Duration) -> Request {
        let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        match self {
            Work::Code(code) => Request::Execute(ExecuteRequest::user(
                execution_id,
                code.clone(),
                fuel,
                timeout_ms,
            )),
            Work::Inspect => Request::Execute(ExecuteRequest {
                kind: ExecutionKind::Inspect,
                ..ExecuteRequest::user(execution_id, String::new(), fuel, timeout_ms)
            }),
            Work::Command(command) => Request::Command(CommandRequest {
                execution_id,
                command: command.clone(),
                fuel,
                timeout_ms,
            }),
        }
    }
}

/// What one execution produced.
#[derive(Debug)]
pub struct Execution {
    pub execution_id: String,
    /// The fuel it was given (see `setup::SessionSpec::execution_fuel`).
    pub fuel_budget: u64,
    pub outcome: Result<ExecutionReport, ExecFailure>,
    /// Set when this call had to start a new worker because the previous one was gone.
    pub replaced_worker: Option<String>,
    /// The worker that replaced a lost one took over the session's state (variables as the
    /// last call that returned left them).
    pub resumed: bool,
    /// ... but as the call before the last one left them: the last call's worker died after
    /// it answered, before it sent the state that call left.
    pub missing_last_call: bool,
}

/// One execution asked of a session.
#[derive(Debug)]
pub struct Job<'a> {
    pub execution_id: String,
    pub work: Work,
    pub timeout: Duration,
    /// Cancelled by `cancel_execution` or by the client's own request being cancelled.
    pub cancel: &'a CancellationToken,
}

/// What starting a session's worker takes: the configuration and the compiled interpreters.
#[derive(Debug, Clone, Copy)]
pub struct Host<'a> {
    pub config: &'a SupervisorConfig,
    pub runtimes: &'a Runtimes,
}

/// Why a session could not run code at all.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("the interpreters are not available: {0}")]
    Runtimes(String),
    #[error(
        "the {0} runtime is not installed on this server (runtimes/prepare.sh left it out); use a session on another runtime"
    )]
    NotInstalled(Runtime),
    #[error("starting the session's worker failed: {0}")]
    Spawn(#[from] SpawnError),
}

impl Session {
    fn new(parts: Parts, pool: Arc<WorkerPool>, dirs: Arc<StateDirs>) -> Self {
        let Parts {
            id,
            owner,
            spec,
            key,
            files,
            created_at,
            last_used,
            durable,
            kept,
        } = parts;
        let kept = kept.map_or((0, 0, Vec::new(), None, false), |k| {
            (k.executions, k.fuel_used, k.checkpoints, k.lost, true)
        });
        let (executions, fuel_used, checkpoints, lost, started) = kept;
        Self {
            id,
            owner,
            ttl: spec.ttl,
            spec,
            created_at,
            key,
            files: Mutex::new(Arc::new(files)),
            pool,
            dirs,
            last_used: Mutex::new(last_used),
            worker_pid: AtomicU32::new(0),
            // A kept session counts like a suspended one: no memory until its next call.
            started: started.into(),
            executions: executions.into(),
            fuel_used: fuel_used.into(),
            runner: Arc::new(tokio::sync::Mutex::new(Runner {
                lost,
                ..Runner::default()
            })),
            held_in_background: false.into(),
            background_done: tokio::sync::Notify::new(),
            line: Mutex::new(None),
            installs: tokio::sync::Mutex::new(()),
            checkpoints: Mutex::new(checkpoints),
            state_log: Arc::default(),
            durable,
        }
    }

    /// When the session expires if it stays idle from now (the latest date chrono can hold for
    /// a TTL past it; TTLs are bounded, this only keeps the arithmetic total).
    pub fn expires_at(&self) -> DateTime<Utc> {
        let last = *self.last_used.lock().unwrap_or_else(|e| e.into_inner());
        chrono::Duration::from_std(self.ttl)
            .ok()
            .and_then(|ttl| last.checked_add_signed(ttl))
            .unwrap_or(DateTime::<Utc>::MAX_UTC)
    }

    /// The key of this session's executions: unique, unlike the id, which two owners may
    /// share.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Its directories now. Holding them keeps the session on them (see
    /// [`Session::adopt_pooled`]): hold them while working in them, not longer.
    pub fn files(&self) -> Arc<SessionFiles> {
        self.files.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// When it was last used.
    fn last_used(&self) -> DateTime<Utc> {
        *self.last_used.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|e| e.into_inner()) = Utc::now();
    }

    fn idle_for(&self) -> Duration {
        let last = *self.last_used.lock().unwrap_or_else(|e| e.into_inner());
        (Utc::now() - last).to_std().unwrap_or_default()
    }

    /// Its runtime, limits and TTL as created: what a fork of it gets.
    pub fn spec(&self) -> SessionSpec {
        self.spec.clone()
    }

    /// The runtime the session runs on: its language's.
    pub fn runtime(&self) -> Runtime {
        self.spec.runtime
    }

    /// The language of its code.
    pub fn language(&self) -> Language {
        self.spec.runtime.language()
    }

    /// The limits its executions run under.
    pub fn limits(&self) -> SessionLimits {
        self.spec.limits()
    }

    /// The fuel of one execution with `timeout` on the session's runtime.
    pub fn execution_fuel(&self, timeout: Duration) -> u64 {
        self.spec.execution_fuel(self.runtime(), timeout)
    }

    /// Runs `job`, starting the worker on `host` first if needed; `on_start` is called once
    /// the job leaves the session's queue.
    ///
    /// # Errors
    /// When no worker can be started; an execution that fails is an `Ok` with a failed outcome.
    pub async fn execute(
        self: &Arc<Self>,
        host: Host<'_>,
        job: Job<'_>,
        on_start: impl FnOnce(),
    ) -> Result<Execution, SessionError> {
        let Job {
            execution_id,
            work,
            timeout,
            cancel,
        } = job;

        // Executions of a session queue here in arrival order; a cancel removes one from the
        // queue without running it. A look at the interpreter's state never queues: behind a
        // long execution it would hold its caller (get_workspace_info) for as long.
        let not_run = |execution_id| {
            Ok(Execution {
                execution_id,
                fuel_budget: self.execution_fuel(timeout),
                outcome: Err(ExecFailure::CancelledWhileQueued),
                replaced_worker: None,
                resumed: false,
                missing_last_call: false,
            })
        };
        let mut runner = if matches!(work, Work::Inspect) {
            match self.inspecting_runner().await {
                Some(runner) => runner,
                None => return not_run(execution_id),
            }
        } else {
            tokio::select! {
                runner = self.runner.clone().lock_owned() => runner,
                () = cancel.cancelled() => return not_run(execution_id),
            }
        };
        on_start();
        self.touch();
        let mut attempts = 0;
        let attempt = loop {
            attempts += 1;
            let attempt = self
                .attempt(&mut runner, host, (&work, &execution_id, timeout), cancel)
                .await?;
            match attempt.outcome {
                // The worker died before it took the job (the exit watch had not seen the death
                // yet): none of it ran, so it runs on a fresh worker, as after an idle death.
                Err(ExecFailure::NotTaken { exit }) if attempts < NOT_TAKEN_RETRIES => {
                    tracing::warn!(session = %self.id, %exit, "the worker died before it took the execution; running it on a fresh worker");
                    crate::metrics::global().worker_crashed(self.runtime(), Crash::Idle);
                    let why = format!("the previous worker died while idle ({exit})");
                    self.lose_worker(&mut runner, why);
                }
                _ => break attempt,
            }
        };
        let Attempt {
            mut outcome,
            replaced_worker,
            resumed,
            missing_last_call,
            fuel_budget,
        } = attempt;
        let state_due = matches!(&outcome, Ok(report) if report.state_follows);
        // A durable session's state is kept before the call is answered, and so is a look's
        // (a caller that looked finds the session idle, its state all kept); any other
        // call's just behind its answer.
        let keep_behind = state_due && !self.durable && !matches!(work, Work::Inspect);
        if state_due && !keep_behind {
            self.receive_state(&mut runner).await;
        }
        self.keep_states(&mut runner).await;
        self.roll_back_lost(&mut runner, &mut outcome).await;
        if let Ok(report) = &outcome {
            self.executions.fetch_add(1, Ordering::Relaxed);
            self.fuel_used
                .fetch_add(report.fuel_consumed, Ordering::Relaxed);
        }
        self.settle(&mut runner, &outcome);
        self.touch();
        if keep_behind {
            self.keep_state_behind(runner);
        }
        Ok(Execution {
            execution_id,
            fuel_budget,
            outcome,
            replaced_worker,
            resumed,
            missing_last_call,
        })
    }

    /// The runner for a look at the interpreter's state, which never queues behind an
    /// execution (it would hold its caller, get_workspace_info, for as long), but waits for
    /// background work (the keeping of an answered call's state, a worker started ahead);
    /// `None` when an execution holds the runner.
    async fn inspecting_runner(&self) -> Option<tokio::sync::OwnedMutexGuard<Runner>> {
        let released = self.background_done.notified();
        tokio::pin!(released);
        released.as_mut().enable();
        if let Ok(runner) = self.runner.clone().try_lock_owned() {
            return Some(runner);
        }
        if !self.held_in_background.load(Ordering::SeqCst) {
            return None;
        }
        tokio::select! {
            runner = self.runner.clone().lock_owned() => Some(runner),
            () = released => self.runner.clone().try_lock_owned().ok(),
        }
    }

    /// Keeps the state layer the worker sends after answering (see
    /// [`ExecutionReport::state_follows`]) behind the call's answer: `runner` stays held, so
    /// the session's next call (a checkpoint, a fork, a reset) comes after it.
    fn keep_state_behind(self: &Arc<Self>, mut runner: tokio::sync::OwnedMutexGuard<Runner>) {
        self.held_in_background.store(true, Ordering::SeqCst);
        let session = self.clone();
        tokio::spawn(async move {
            session.receive_state(&mut runner).await;
            session.keep_states(&mut runner).await;
            session.held_in_background.store(false, Ordering::SeqCst);
            drop(runner);
            session.background_done.notify_waiters();
        });
    }

    /// Waits for the state layer of the call the worker just answered. A worker that dies
    /// first (killed a moment after it answered) took that call's changes with it: the next
    /// call starts a new worker from the state before them and says so.
    async fn receive_state(&self, runner: &mut Runner) {
        let Some(worker) = runner.worker.as_mut() else {
            return;
        };
        let pid = worker.pid();
        let Err(why) = worker.receive_state().await else {
            return;
        };
        if self.worker_pid.load(Ordering::SeqCst) != pid {
            // Stopped on purpose (destroy, reset, shutdown): nothing to tell.
            runner.worker = None;
            return;
        }
        tracing::warn!(session = %self.id, pid, %why, "the worker died after it answered, before it sent the state the call left");
        crate::metrics::global().worker_crashed(self.runtime(), Crash::Idle);
        self.lose_worker(
            runner,
            format!(
                "the previous worker died just after it answered the last call, before it sent the state that call left ({why})"
            ),
        );
        runner.missing_last_call = true;
    }

    /// Sends `request` to the session's worker, starting one first when there is none (or it
    /// died while idle), which takes over the session's state ([`resume`]).
    ///
    /// # Errors
    /// When no worker can be started.
    async fn attempt(
        self: &Arc<Self>,
        runner: &mut Runner,
        host: Host<'_>,
        (work, execution_id, timeout): (&Work, &str, Duration),
        cancel: &CancellationToken,
    ) -> Result<Attempt, SessionError> {
        self.notice_idle_death(runner);
        let fresh_worker = runner.worker.is_none();
        // A worker started since the last one was lost (for a checkpoint) leaves the notice
        // to this call.
        let replaced_worker = if fresh_worker {
            self.start_worker(runner, host, Start::ForUse).await?
        } else {
            runner.lost.take()
        };
        self.started.store(true, Ordering::SeqCst);
        let resumed = replaced_worker.is_some() && std::mem::take(&mut runner.resumed);
        let missing_last_call =
            replaced_worker.is_some() && std::mem::take(&mut runner.missing_last_call) && resumed;
        let fuel = self.execution_fuel(timeout);
        let request = work.to_request(execution_id.to_owned(), fuel, timeout);
        let worker = runner.worker.as_mut().expect("started above");
        Ok(Attempt {
            outcome: worker.execute(&request, cancel).await,
            fuel_budget: fuel,
            replaced_worker,
            resumed,
            missing_last_call,
        })
    }

    /// Notices a worker that died while idle (killed, OOM-killed) before anything is sent to
    /// it, so the call at hand restarts the session instead of failing.
    fn notice_idle_death(&self, runner: &mut Runner) {
        if let Some(exit) = runner.worker.as_mut().and_then(Worker::exited) {
            crate::metrics::global().worker_crashed(self.runtime(), Crash::Idle);
            self.lose_worker(
                runner,
                format!("the previous worker died while idle ({exit})"),
            );
        }
    }

    /// Starts the worker of a session just created, behind `create_session`'s answer: the
    /// client reads the answer and sends its first call meanwhile, and that call queues behind
    /// the start instead of paying for all of it. Only when the pool has no worker of the
    /// session's shape (adopting one is instant, and happens at the first call, once the
    /// client has written its files or not). The worker runs nothing until that call, so
    /// admission still counts the session at its runtime's expected use, and memory eviction
    /// passes it by (see [`Session::started`]). The runner is taken here, before anything
    /// else can queue: a destroy that comes first waits for the start and then stops it.
    pub fn start_ahead(self: &Arc<Self>, config: Arc<SupervisorConfig>, runtimes: Arc<Runtimes>) {
        if self.pool.has(self.runtime(), &worker_shape(&self.limits())) {
            return;
        }
        let Ok(mut runner) = self.runner.clone().try_lock_owned() else {
            return;
        };
        if runner.worker.is_some() {
            return;
        }
        self.held_in_background.store(true, Ordering::SeqCst);
        let session = self.clone();
        tokio::spawn(async move {
            let host = Host {
                config: &config,
                runtimes: &runtimes,
            };
            if let Err(e) = session.start_worker(&mut runner, host, Start::Ahead).await {
                // The first call starts it again and reports what fails.
                tracing::debug!(session = %session.id, error = %e, "a worker started ahead failed");
            }
            session.held_in_background.store(false, Ordering::SeqCst);
            drop(runner);
            session.background_done.notify_waiters();
        });
    }

    /// Starts a worker on the session's runtime, which is fixed from now on. Returns why the
    /// previous worker is gone, when one was.
    async fn start_worker(
        self: &Arc<Self>,
        runner: &mut Runner,
        host: Host<'_>,
        start: Start,
    ) -> Result<Option<String>, SessionError> {
        let Host { config, runtimes } = host;
        let lost = runner.lost.take();
        let manifest = runtimes
            .manifest(config)
            .await
            .map_err(SessionError::Runtimes)?;
        let (runtime, limits) = (self.runtime(), self.limits());
        let module = manifest
            .module(runtime)
            .ok_or(SessionError::NotInstalled(runtime))?;
        runner.generation += 1;
        // A worker started ahead has run nothing yet; and files may be written before the
        // first call, so the pool's workers are adopted then, never ahead.
        let adopted = match start {
            Start::Ahead => None,
            Start::ForUse => {
                self.started.store(true, Ordering::SeqCst);
                self.adopt_pooled(runtime, &limits)
            }
        };
        if let Some((worker, version)) = adopted {
            crate::metrics::global().worker_started(runtime, "pool");
            tracing::info!(session = %self.id, pid = worker.pid(), %runtime, %version, "pooled worker adopted");
            self.install_worker(runner, worker);
            return Ok(lost);
        }
        // The layers of the calls answered before are in the log (see [`resume`]).
        self.state_log.settled().await;
        let files = self.files();
        let extras = manifest.extras(runtime);
        let fork_server = self.pool.forks.get(runtime, module, &extras);
        // A session with a saved state has its worker wait for it: setting a fresh session
        // up first (CPython's wake) would be undone by the restore.
        let request = SpawnRequest::new(&files, module, runner.generation, runtime, &limits)
            .with_extras(&extras)
            .resuming(resume::has_state(&files));
        let (worker, ready) = Worker::spawn(config, request, fork_server.as_ref())
            .await
            .inspect_err(|e| {
                crate::metrics::global().worker_start_failed(runtime, &e.to_string());
                runner.lost = lost.clone();
            })?;
        let how = if ready.forked { "fork" } else { "spawn" };
        crate::metrics::global().worker_started(runtime, how);
        tracing::info!(
            session = %self.id,
            pid = worker.pid(),
            %runtime,
            version = %ready.runtime_version,
            startup_ms = ready.startup_us as f64 / 1000.0,
            from_image = ready.from_image,
            forked = ready.forked,
            "worker ready"
        );
        self.install_worker(runner, worker);
        if let Err(e) = self.resume(runner).await {
            runner.lost = lost;
            return Err(e);
        }
        if let Err(e) = self.hold_kept_checkpoints(runner).await {
            runner.lost = lost;
            return Err(e);
        }
        Ok(lost)
    }

    /// Makes `worker` the session's: its pid and connection are known without the runner, and
    /// its death while idle is watched.
    fn install_worker(self: &Arc<Self>, runner: &mut Runner, worker: Worker) {
        self.worker_pid.store(worker.pid(), Ordering::SeqCst);
        *self.line.lock().unwrap_or_else(|e| e.into_inner()) = Some(worker.line());
        self.watch_exit(worker.pid());
        runner.worker = Some(worker);
    }

    /// Takes a pooled worker of `runtime` started with these `limits`' shape, and moves the
    /// session onto its directories, when the session's own are untouched and nobody holds
    /// them (a tool writing into /app keeps the session where it is). The session's empty
    /// directories are removed.
    fn adopt_pooled(&self, runtime: Runtime, limits: &SessionLimits) -> Option<(Worker, String)> {
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        if Arc::strong_count(&files) != 1 || !files.is_untouched() {
            return None;
        }
        let pooled = self.pool.take(runtime, &worker_shape(limits))?;
        let adopted = Arc::new(self.dirs.adopted(&self.id, pooled.files));
        let own = std::mem::replace(&mut *files, adopted);
        drop(files);
        // Before its own directory goes: a kill in between leaves two records, and the
        // newer one wins.
        self.keep_record();
        // Empty directories: removing them takes a few system calls.
        if let Err(e) = self.dirs.remove_session(&own) {
            tracing::warn!(session = %self.id, error = %e, "cannot remove a session's unused directory");
        }
        Some((pooled.worker, pooled.version))
    }

    /// After an execution: counts a restart, and drops a worker that failed.
    fn settle(&self, runner: &mut Runner, outcome: &Result<ExecutionReport, ExecFailure>) {
        if let Some(restart) = outcome.as_ref().ok().and_then(|r| r.restart.as_ref()) {
            let kept = match restart.state {
                sandbox_protocol::StateAfterRestart::Lost => "lost",
                sandbox_protocol::StateAfterRestart::RolledBack => "rolled_back",
                sandbox_protocol::StateAfterRestart::Resumed => "resumed",
            };
            crate::metrics::global().interpreter_restarted(self.runtime(), kept);
        }
        match outcome {
            Ok(_) => {}
            Err(failure) => {
                let metrics = crate::metrics::global();
                match failure {
                    ExecFailure::Killed { cancelled } => {
                        let kill = if *cancelled {
                            Kill::Cancel
                        } else {
                            Kill::Timeout
                        };
                        metrics.worker_killed(self.runtime(), kill);
                    }
                    ExecFailure::Crashed { .. } => {
                        metrics.worker_crashed(self.runtime(), Crash::Execution);
                    }
                    ExecFailure::NotTaken { .. } => {
                        metrics.worker_crashed(self.runtime(), Crash::Idle);
                    }
                    ExecFailure::CancelledWhileQueued => {}
                }
                let why = match failure {
                    ExecFailure::Killed { cancelled: false } => {
                        "the previous worker was killed after a timeout it did not answer"
                            .to_owned()
                    }
                    ExecFailure::Killed { cancelled: true } => {
                        "the previous worker was killed after a cancel it did not answer".to_owned()
                    }
                    ExecFailure::Crashed { exit } => {
                        format!("the previous worker crashed ({exit})")
                    }
                    ExecFailure::NotTaken { exit } => {
                        format!("the previous worker died while idle ({exit})")
                    }
                    ExecFailure::CancelledWhileQueued => unreachable!("the worker was not asked"),
                };
                self.lose_worker(runner, why);
            }
        }
    }

    /// Forgets a worker that is gone: the next call starts a fresh one, which takes over the
    /// session's state, and is told `why`.
    fn lose_worker(&self, runner: &mut Runner, why: String) {
        runner.worker = None;
        self.forget_worker();
        runner.lost = Some(why);
    }

    /// Reaps the worker `pid` as soon as it dies while idle, so no zombie waits for the
    /// session's next call and the next call knows the interpreter is gone. (A worker that dies
    /// during an execution is reaped by that execution, which holds the runner.) The watch
    /// holds the session weakly: a destroyed session's watch ends with its worker.
    fn watch_exit(self: &Arc<Self>, pid: u32) {
        let pidfd = rustix::process::Pid::from_raw(pid as i32)
            .ok_or(rustix::io::Errno::INVAL)
            .and_then(|p| rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()));
        let registered = pidfd.map_err(std::io::Error::from).and_then(|pidfd| {
            // SAFETY: the AsyncFd owns the OwnedFd: the descriptor stays open and the same for
            // the AsyncFd's whole life, which is what `register` requires.
            unsafe { tokio::io::unix::AsyncFd::register(pidfd) }.map_err(std::io::Error::from)
        });
        let exited = match registered {
            Ok(exited) => exited,
            Err(e) => {
                tracing::debug!(pid, error = %e, "no exit watch for this worker; it is reaped on its next call");
                return;
            }
        };
        let session = Arc::downgrade(self);
        tokio::spawn(async move {
            // A pidfd turns readable when its process has exited.
            let _ = exited.readable().await;
            let Some(session) = session.upgrade() else {
                return;
            };
            if session.worker_pid.load(Ordering::SeqCst) != pid {
                return; // stopped on purpose (destroy, reset, shutdown) or already replaced
            }
            let Ok(mut runner) = session.runner.try_lock() else {
                return; // an execution holds the worker: it sees the death itself
            };
            let Some(worker) = runner.worker.as_mut().filter(|w| w.pid() == pid) else {
                return;
            };
            if let Some(exit) = worker.exited() {
                tracing::warn!(session = %session.id, pid, %exit, "worker died while idle");
                crate::metrics::global().worker_crashed(session.runtime(), Crash::Idle);
                let why = format!("the previous worker died while idle ({exit})");
                session.lose_worker(&mut runner, why);
            }
        });
    }

    /// Suspends an idle session (`why`: after its idle time, or for memory): its worker stops,
    /// its state stays on disk (see [`resume`]), and its next call resumes it and says so.
    /// Returns false, doing nothing, when the session is busy or has no worker.
    fn suspend(&self, why: &str) -> bool {
        let Ok(mut runner) = self.runner.try_lock() else {
            return false;
        };
        let Some(worker) = runner.worker.take() else {
            return false;
        };
        self.forget_worker();
        // A worker started ahead that ran nothing leaves nothing to tell.
        if self.started.load(Ordering::SeqCst) {
            runner.lost = Some(format!("the session was suspended {why}"));
        }
        tracing::info!(session = %self.id, pid = worker.pid(), why, "session suspended");
        crate::metrics::global().worker_killed(self.runtime(), Kill::Suspended);
        // Dropping it kills its process group; tokio reaps it.
        drop(worker);
        true
    }

    /// Clears what is known of the current worker without the runner.
    fn forget_worker(&self) {
        self.worker_pid.store(0, Ordering::SeqCst);
        self.line.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    /// Reserves disk space for `growth` that the server is about to move into the session's
    /// `/app` (an install), against the session's disk quota, before anything is moved. The
    /// worker's quota is the one authority: it charges the growth at once, exactly as it
    /// charges the guest's writes (counting the files afresh when the charge would cross a
    /// limit), even while an execution runs. A session without a live worker has its files
    /// counted here, and keeps its queue held until the grant is dropped.
    ///
    /// # Errors
    /// The refusal, with what the files hold and the quota: nothing was charged.
    pub async fn reserve_disk(
        &self,
        growth: sandbox_protocol::confined::Usage,
    ) -> Result<DiskGrant<'_>, DiskCharge> {
        let install = self.installs.lock().await;
        let (bytes, entries) = (growth.bytes, growth.entries);
        let line = self.line.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let busy = self.runner.try_lock().is_err();
        let (charge, runner) = match line {
            // An execution holds the worker: its read loop hands the answer over, or, if it
            // ends first, the answer is read here once the runner is free.
            Some(line) if busy => {
                let mut answered = match line.ask_charge(bytes, entries).await {
                    Ok(answered) => answered,
                    Err(e) => {
                        let runner = self.runner.lock().await;
                        return self.granted(
                            self.charged_or_counted(Err(e.to_string()), runner, growth)
                                .await,
                            install,
                        );
                    }
                };
                let first = tokio::select! {
                    biased;
                    charge = &mut answered => Ok(charge),
                    runner = self.runner.lock() => Err(runner),
                };
                match first {
                    Ok(Ok(charge)) => (charge, None),
                    // The worker is gone with the answer (its connection was dropped).
                    Ok(Err(_)) => {
                        let runner = self.runner.lock().await;
                        let gone = Err("the worker was stopped".to_owned());
                        self.charged_or_counted(gone, runner, growth).await
                    }
                    Err(mut runner) => {
                        let charged = match runner.worker.as_mut() {
                            Some(worker) if Arc::ptr_eq(&worker.line(), &line) => {
                                worker.read_charge(answered).await
                            }
                            _ => Err("the worker was replaced".to_owned()),
                        };
                        self.charged_or_counted(charged, runner, growth).await
                    }
                }
            }
            _ => {
                let mut runner = self.runner.lock().await;
                let charged = match runner.worker.as_mut() {
                    Some(worker) => match worker.exited() {
                        None => worker.charge_disk(bytes, entries).await,
                        Some(exit) => Err(exit),
                    },
                    None => Err("no live worker".to_owned()),
                };
                self.charged_or_counted(charged, runner, growth).await
            }
        };
        self.granted((charge, runner), install)
    }

    fn granted<'a>(
        &'a self,
        (charge, runner): (DiskCharge, Option<tokio::sync::MutexGuard<'a, Runner>>),
        install: tokio::sync::MutexGuard<'a, ()>,
    ) -> Result<DiskGrant<'a>, DiskCharge> {
        if charge.granted {
            Ok(DiskGrant {
                _runner: runner,
                _install: install,
            })
        } else {
            Err(charge)
        }
    }

    /// A charge the worker answered (the runner is released: the worker counts from now on),
    /// or, when it could not, the session's files counted here (the runner stays held).
    async fn charged_or_counted<'a>(
        &'a self,
        charged: Result<DiskCharge, String>,
        mut runner: tokio::sync::MutexGuard<'a, Runner>,
        growth: sandbox_protocol::confined::Usage,
    ) -> (DiskCharge, Option<tokio::sync::MutexGuard<'a, Runner>>) {
        match charged {
            Ok(charge) => return (charge, None),
            Err(why) if runner.worker.is_some() => {
                tracing::warn!(session = %self.id, %why, "the worker could not charge an install; counting the files");
                crate::metrics::global().worker_crashed(self.runtime(), Crash::Idle);
                self.lose_worker(
                    &mut runner,
                    format!("the previous worker died while idle ({why})"),
                );
            }
            Err(_) => {}
        }
        let limits = self.limits();
        let files = self.files();
        let used = tokio::task::spawn_blocking(move || {
            sandbox_protocol::confined::usage_of(&[&files.app, &files.tmp], u64::MAX)
        })
        .await
        .unwrap_or_default();
        let fits = used.bytes.saturating_add(growth.bytes) <= limits.disk_quota_bytes
            && used.entries.saturating_add(growth.entries) <= limits.disk_quota_files;
        let charge = DiskCharge {
            granted: fits,
            used_bytes: used.bytes,
            used_entries: used.entries,
            quota_bytes: limits.disk_quota_bytes,
            quota_entries: limits.disk_quota_files,
            exact: used.complete,
        };
        (charge, Some(runner))
    }

    /// True when an interpreter is running for this session.
    pub fn has_worker(&self) -> bool {
        self.worker_pid.load(Ordering::SeqCst) != 0
    }

    /// Clears the session: its interpreter is stopped (the next call starts a fresh one, which
    /// is not reported as a restart) and the files of /app and /tmp are deleted, whatever the
    /// guest did to them. Returns what /app held.
    ///
    /// # Errors
    /// When something could not be deleted (what could be is gone; the session stays usable).
    pub async fn reset(
        self: &Arc<Self>,
    ) -> Result<crate::workspace::Listing, sandbox_protocol::confined::ConfinedError> {
        self.stop().await;
        // Held while deleting, so no execution of this session starts meanwhile.
        let mut runner = self.runner.lock().await;
        runner.lost = None;
        runner.missing_last_call = false;
        self.touch();
        self.forget_state().await;
        let files = self.files();
        let emptied = tokio::task::spawn_blocking(move || {
            let tmp = crate::workspace::empty(&files.tmp);
            let app = crate::workspace::empty(&files.app);
            tmp.and(app)
        })
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string()).into()));
        drop(runner);
        emptied
    }

    /// Stops the worker, if any. A running execution is not waited for: its worker is killed
    /// first, which ends the execution (with a `worker_crashed` answer to its caller).
    async fn stop(&self) {
        // Cleared first: the exit watch then knows this death was asked for.
        crate::worker::kill_group(self.worker_pid.swap(0, Ordering::SeqCst));
        self.forget_worker();
        let mut runner = self.runner.lock().await;
        if let Some(worker) = runner.worker.take() {
            worker.shutdown().await;
        }
        // Nothing writes into its directory once it is stopped (it may be removed next).
        self.state_log.settled().await;
    }
}
