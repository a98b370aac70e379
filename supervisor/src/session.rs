//! The session table: which sessions exist, who owns them, their workers, workspaces and expiry.
//!
//! A session belongs to the client that created it ([`Owner`]): the table is keyed by owner and
//! id, so another client never sees it and may use the same id for a session of its own.
//! A session owns at most one worker at a time, behind an async mutex: executions of one session
//! queue in arrival order (tokio's mutex is fair), different sessions run in parallel. A worker
//! that died or was killed is replaced on the session's next call, and that call's result says so.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use sandbox_protocol::{
    CommandRequest, ExecuteRequest, ExecutionKind, ExecutionReport, Language, Request,
};
use tokio_util::sync::CancellationToken;

use crate::config::{SessionLimits, SupervisorConfig};
use crate::runtimes::Runtimes;
use crate::worker::{ExecFailure, SpawnError, Worker};
use crate::workspace::{SessionFiles, StateDirs};

/// How many reaped session ids are remembered, so a late call hears "expired" instead of
/// silently getting a fresh session.
const REMEMBERED_EXPIRED: usize = 1024;

/// Session ids: what a model may choose, and safe as a file name.
pub fn valid_session_id(id: &str) -> bool {
    let mut chars = id.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric())
        && id.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Who a session belongs to. Only its owner can see it, use it, or cancel its executions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Owner {
    id: Arc<str>,
    kind: OwnerKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum OwnerKind {
    /// The one client on stdio.
    Local,
    /// One MCP session over HTTP (no named principal).
    Connection,
    /// A principal named by its HTTP token; all its MCP sessions share its sessions.
    Principal,
}

impl Owner {
    /// The stdio client.
    pub fn local() -> Self {
        Self {
            id: "local".into(),
            kind: OwnerKind::Local,
        }
    }

    /// A new HTTP connection (MCP session) of its own.
    pub fn connection() -> Self {
        Self {
            id: uuid::Uuid::new_v4().simple().to_string().into(),
            kind: OwnerKind::Connection,
        }
    }

    /// A named principal.
    pub fn principal(name: &str) -> Self {
        Self {
            id: name.into(),
            kind: OwnerKind::Principal,
        }
    }

    /// Whether the per-client caps apply (HTTP clients; the stdio client has the server alone).
    pub fn capped(&self) -> bool {
        self.kind != OwnerKind::Local
    }
}

impl std::fmt::Display for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            OwnerKind::Local => f.write_str("stdio"),
            OwnerKind::Connection => write!(f, "connection {}", &self.id[..8.min(self.id.len())]),
            OwnerKind::Principal => write!(f, "principal {}", self.id),
        }
    }
}

/// One session.
#[derive(Debug)]
pub struct Session {
    pub id: String,
    pub owner: Owner,
    pub language: Language,
    pub limits: SessionLimits,
    pub created_at: DateTime<Utc>,
    pub ttl: Duration,
    /// Its directories (`/app`, `/tmp`), reached only through capability handles.
    pub files: SessionFiles,
    last_used: Mutex<DateTime<Utc>>,
    /// Pid of the current worker (0: none), readable without waiting for the runner's queue.
    worker_pid: AtomicU32,
    /// Executions run and fuel they used, over the session's life.
    pub executions: std::sync::atomic::AtomicU64,
    pub fuel_used: std::sync::atomic::AtomicU64,
    runner: tokio::sync::Mutex<Runner>,
}

/// The worker side of a session, behind the session's queue.
#[derive(Debug, Default)]
struct Runner {
    worker: Option<Worker>,
    /// Counts workers started, so each gets a fresh socket name.
    generation: u64,
    /// Why the previous worker is gone, told to the next call.
    lost: Option<String>,
    /// The interpreter is fresh after a loss: restore saved state before the next execution.
    needs_restore: bool,
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

/// What one execution produced.
#[derive(Debug)]
pub struct Execution {
    pub execution_id: String,
    pub outcome: Result<ExecutionReport, ExecFailure>,
    /// Set when this call had to start a new worker because the previous one was gone.
    pub replaced_worker: Option<String>,
    /// What `auto_persist_globals` brought back before this execution, when it restored.
    pub restored: Option<crate::persist::Restored>,
}

/// Why a session could not run code at all.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("the interpreters are not available: {0}")]
    Runtimes(String),
    #[error("starting the session's worker failed: {0}")]
    Spawn(#[from] SpawnError),
}

impl Session {
    /// When the session expires if it stays idle from now (the latest date chrono can hold for
    /// a TTL past it; TTLs are bounded, this only keeps the arithmetic total).
    pub fn expires_at(&self) -> DateTime<Utc> {
        let last = *self.last_used.lock().unwrap_or_else(|e| e.into_inner());
        chrono::Duration::from_std(self.ttl)
            .ok()
            .and_then(|ttl| last.checked_add_signed(ttl))
            .unwrap_or(DateTime::<Utc>::MAX_UTC)
    }

    /// The key of this session's executions and worker (its directory nonce): unique, unlike
    /// the id, which two owners may share.
    pub fn key(&self) -> &str {
        &self.files.key
    }

    fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|e| e.into_inner()) = Utc::now();
    }

    fn idle_for(&self) -> Duration {
        let last = *self.last_used.lock().unwrap_or_else(|e| e.into_inner());
        (Utc::now() - last).to_std().unwrap_or_default()
    }

    /// Runs `code`, starting the worker first if needed.
    ///
    /// # Errors
    /// When no worker can be started; an execution that fails is an `Ok` with a failed outcome.
    #[allow(clippy::too_many_arguments, reason = "one call site, all distinct")]
    pub async fn execute(
        self: &Arc<Self>,
        config: &SupervisorConfig,
        runtimes: &Runtimes,
        execution_id: String,
        work: Work,
        timeout: Duration,
        cancel: &CancellationToken,
        on_start: impl FnOnce(),
    ) -> Result<Execution, SessionError> {
        // Executions of a session queue here in arrival order; a cancel removes one from the
        // queue without running it.
        let mut runner = tokio::select! {
            runner = self.runner.lock() => runner,
            () = cancel.cancelled() => {
                return Ok(Execution {
                    execution_id,
                    outcome: Err(ExecFailure::CancelledWhileQueued),
                    replaced_worker: None,
                    restored: None,
                });
            }
        };
        on_start();
        self.touch();
        // A worker that died while idle (killed, OOM-killed) is noticed here, before the
        // request is sent, so this call restarts the session instead of failing.
        if let Some(exit) = runner.worker.as_mut().and_then(Worker::exited) {
            runner.worker = None;
            self.worker_pid.store(0, Ordering::SeqCst);
            runner.lost = Some(format!("the previous worker died while idle ({exit})"));
            runner.needs_restore = true;
        }
        // A fresh interpreter of an auto-persist session starts from the saved state (and, in
        // JavaScript, with `_state` defined), whether it is the first or replaces a lost one.
        let fresh_worker = runner.worker.is_none();
        let replaced_worker = if fresh_worker {
            let lost = runner.lost.take();
            let manifest = runtimes
                .manifest(config)
                .await
                .map_err(SessionError::Runtimes)?;
            let module = manifest.module(self.language).ok_or_else(|| {
                SessionError::Runtimes(format!("no {} interpreter", self.language))
            })?;
            runner.generation += 1;
            let (worker, ready) = Worker::spawn(
                config,
                module,
                &self.files,
                runner.generation,
                self.language,
                &self.limits,
            )
            .await
            .inspect_err(|_| runner.lost = lost.clone())?;
            tracing::info!(
                session = %self.id,
                pid = worker.pid(),
                version = %ready.runtime_version,
                startup_ms = ready.startup_us as f64 / 1000.0,
                "worker ready"
            );
            self.worker_pid.store(worker.pid(), Ordering::SeqCst);
            self.watch_exit(worker.pid());
            runner.worker = Some(worker);
            lost
        } else {
            None
        };
        let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        let fuel = self.limits.fuel;
        let id = execution_id.clone();
        let request = match work {
            Work::Code(code) => Request::Execute(ExecuteRequest::user(id, code, fuel, timeout_ms)),
            Work::Inspect => Request::Execute(ExecuteRequest {
                kind: ExecutionKind::Inspect,
                ..ExecuteRequest::user(id, String::new(), fuel, timeout_ms)
            }),
            Work::Command(command) => Request::Command(CommandRequest {
                execution_id: id,
                command,
                fuel,
                timeout_ms,
            }),
        };
        let persist = self.limits.auto_persist_globals;
        let user_code = matches!(&request, Request::Execute(r) if r.kind == ExecutionKind::User);
        let restore_first = persist && (runner.needs_restore || fresh_worker);
        let worker = runner.worker.as_mut().expect("started above");
        let restored = if restore_first {
            crate::persist::restore(worker, self.language).await
        } else {
            None
        };
        let outcome = worker.execute(request, cancel).await;
        if let Ok(report) = &outcome {
            self.executions.fetch_add(1, Ordering::Relaxed);
            self.fuel_used
                .fetch_add(report.fuel_consumed, Ordering::Relaxed);
        }
        match &outcome {
            Ok(report)
                if report
                    .restart
                    .as_ref()
                    .is_some_and(|r| r.state == sandbox_protocol::StateAfterRestart::Lost) =>
            {
                runner.needs_restore = true;
            }
            Ok(report) if persist && user_code && report.error.is_none() => {
                if let Some(worker) = runner.worker.as_mut() {
                    crate::persist::save(worker, self.language).await;
                }
                runner.needs_restore = false;
            }
            Ok(_) => runner.needs_restore &= !restore_first,
            Err(_) => runner.needs_restore = true,
        }
        if let Err(failure) = &outcome {
            runner.worker = None;
            self.worker_pid.store(0, Ordering::SeqCst);
            runner.lost = Some(match failure {
                ExecFailure::Killed { cancelled: false } => {
                    "the previous worker was killed after a timeout it did not answer".to_owned()
                }
                ExecFailure::Killed { cancelled: true } => {
                    "the previous worker was killed after a cancel it did not answer".to_owned()
                }
                ExecFailure::Crashed { exit } => format!("the previous worker crashed ({exit})"),
                ExecFailure::CancelledWhileQueued => unreachable!("the worker was not asked"),
            });
        }
        self.touch();
        Ok(Execution {
            execution_id,
            outcome,
            replaced_worker,
            restored,
        })
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
            let Ok(mut runner) = session.runner.try_lock() else {
                return; // an execution holds the worker: it sees the death itself
            };
            let Some(worker) = runner.worker.as_mut().filter(|w| w.pid() == pid) else {
                return;
            };
            if let Some(exit) = worker.exited() {
                tracing::warn!(session = %session.id, pid, %exit, "worker died while idle");
                runner.worker = None;
                session.worker_pid.store(0, Ordering::SeqCst);
                runner.lost = Some(format!("the previous worker died while idle ({exit})"));
                runner.needs_restore = true;
            }
        });
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
        runner.needs_restore = false;
        self.touch();
        let session = self.clone();
        let emptied = tokio::task::spawn_blocking(move || {
            let tmp = crate::workspace::empty(&session.files.tmp);
            let app = crate::workspace::empty(&session.files.app);
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
        crate::worker::kill_group(self.worker_pid.load(Ordering::SeqCst));
        let mut runner = self.runner.lock().await;
        self.worker_pid.store(0, Ordering::SeqCst);
        if let Some(worker) = runner.worker.take() {
            worker.shutdown().await;
        }
    }
}

/// A session's place in the table: its owner and the id the owner chose.
type SessionKey = (Owner, String);

/// All sessions of the supervisor.
#[derive(Debug)]
pub struct SessionTable {
    config: Arc<SupervisorConfig>,
    dirs: Arc<StateDirs>,
    sessions: Mutex<HashMap<SessionKey, Arc<Session>>>,
    expired: Mutex<VecDeque<SessionKey>>,
}

/// Why `create` refused.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    #[error("a session with id {0:?} already exists")]
    Exists(String),
    #[error("cannot create the session workspace: {0}")]
    Workspace(String),
    #[error("{0}")]
    ResourcesExhausted(Usage),
    #[error("this client already has {sessions} sessions, the most one client may hold at once")]
    ClientLimit { sessions: usize },
}

/// What the sessions use against the admission limits.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Usage {
    pub sessions: usize,
    pub max_sessions: usize,
    /// Sum of the memory caps of all sessions.
    pub memory_reserved_bytes: u64,
    pub memory_budget_bytes: u64,
    /// What the refused session asked for.
    pub memory_requested_bytes: u64,
}

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "no capacity for a new session: {} of {} sessions in use, {} MiB of {} MiB memory reserved, {} MiB requested",
            self.sessions,
            self.max_sessions,
            self.memory_reserved_bytes >> 20,
            self.memory_budget_bytes >> 20,
            self.memory_requested_bytes >> 20
        )
    }
}

impl SessionTable {
    /// A table over the state directory's sessions (created here).
    ///
    /// # Errors
    /// When the state directory's parts cannot be created.
    pub fn new(config: Arc<SupervisorConfig>) -> std::io::Result<Self> {
        let dirs = Arc::new(StateDirs::create(&config.state_dir)?);
        Ok(Self {
            config,
            dirs,
            sessions: Mutex::default(),
            expired: Mutex::default(),
        })
    }

    /// The state directory's parts (staging for package installs).
    pub fn dirs(&self) -> &Arc<StateDirs> {
        &self.dirs
    }

    /// Current use against the admission limits.
    pub fn usage(&self) -> Usage {
        let sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        Usage {
            sessions: sessions.len(),
            max_sessions: self.config.max_sessions,
            memory_reserved_bytes: sessions.values().map(|s| s.limits.memory_bytes).sum(),
            memory_budget_bytes: self.config.memory_budget,
            memory_requested_bytes: 0,
        }
    }

    /// `owner`'s session `id`; another owner's session of that id is not there for it.
    pub fn get(&self, owner: &Owner, id: &str) -> Option<Arc<Session>> {
        self.sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(owner.clone(), id.to_owned()))
            .cloned()
    }

    /// True when `owner`'s session `id` was reaped for being idle.
    pub fn expired(&self, owner: &Owner, id: &str) -> bool {
        self.expired
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(|(o, e)| o == owner && e == id)
    }

    /// Registers a new session and creates its workspace; the worker starts on first use.
    ///
    /// # Errors
    /// When the id is taken or the workspace cannot be created.
    pub fn create(
        &self,
        owner: &Owner,
        id: &str,
        language: Language,
        limits: SessionLimits,
        ttl: Duration,
    ) -> Result<Arc<Session>, CreateError> {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        let key = (owner.clone(), id.to_owned());
        if sessions.contains_key(&key) {
            return Err(CreateError::Exists(id.to_owned()));
        }
        if owner.capped() {
            let held = sessions.keys().filter(|(o, _)| o == owner).count();
            if held >= self.config.principal_max_sessions {
                return Err(CreateError::ClientLimit { sessions: held });
            }
        }
        let reserved: u64 = sessions.values().map(|s| s.limits.memory_bytes).sum();
        if sessions.len() >= self.config.max_sessions
            || reserved + limits.memory_bytes > self.config.memory_budget
        {
            return Err(CreateError::ResourcesExhausted(Usage {
                sessions: sessions.len(),
                max_sessions: self.config.max_sessions,
                memory_reserved_bytes: reserved,
                memory_budget_bytes: self.config.memory_budget,
                memory_requested_bytes: limits.memory_bytes,
            }));
        }
        let files = self
            .dirs
            .create_session(id)
            .map_err(|e| CreateError::Workspace(e.to_string()))?;
        let now = Utc::now();
        let session = Arc::new(Session {
            id: id.to_owned(),
            owner: owner.clone(),
            language,
            limits,
            created_at: now,
            ttl,
            files,
            last_used: Mutex::new(now),
            worker_pid: AtomicU32::new(0),
            executions: Default::default(),
            fuel_used: Default::default(),
            runner: tokio::sync::Mutex::default(),
        });
        self.expired
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|e| *e != key);
        sessions.insert(key, session.clone());
        Ok(session)
    }

    /// Removes `owner`'s session `id`: its worker is stopped and its directory deleted.
    pub async fn destroy(&self, owner: &Owner, id: &str) -> Option<Arc<Session>> {
        let session = self
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(owner.clone(), id.to_owned()))?;
        session.stop().await;
        self.remove_files(&session).await;
        Some(session)
    }

    /// Deletes a stopped session's directory off the async threads (a guest may have left 10^5
    /// files). A failure is logged: the id is free anyway (a new session gets a new directory),
    /// and shutdown removes the whole state directory.
    async fn remove_files(&self, session: &Arc<Session>) {
        let (dirs, session) = (self.dirs.clone(), session.clone());
        let id = session.id.clone();
        let removed =
            tokio::task::spawn_blocking(move || dirs.remove_session(&session.files)).await;
        match removed {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!(session = %id, error = %e, "cannot remove a session directory");
            }
            Err(e) => tracing::error!(session = %id, error = %e, "session removal panicked"),
        }
    }

    /// Stops and removes every session idle past its TTL. Busy sessions are never idle.
    pub async fn reap_idle(&self) {
        let idle: Vec<SessionKey> = self
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .filter(|s| s.idle_for() > s.ttl && s.runner.try_lock().is_ok())
            .map(|s| (s.owner.clone(), s.id.clone()))
            .collect();
        for (owner, id) in idle {
            tracing::info!(session = %id, %owner, "session expired");
            self.destroy(&owner, &id).await;
            let mut expired = self.expired.lock().unwrap_or_else(|e| e.into_inner());
            expired.push_back((owner, id));
            if expired.len() > REMEMBERED_EXPIRED {
                expired.pop_front();
            }
        }
    }

    /// Kills every worker and removes every workspace, concurrently.
    pub async fn shutdown(&self) {
        let sessions: Vec<Arc<Session>> = self
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
            .map(|(_, s)| s)
            .collect();
        let mut stopping = tokio::task::JoinSet::new();
        for session in sessions {
            stopping.spawn(async move { session.stop().await });
        }
        while stopping.join_next().await.is_some() {}
        // The directories go with the whole state directory (see `crate::shutdown`).
    }

    /// Sessions `owner` holds, for the per-client caps.
    pub fn held_by(&self, owner: &Owner) -> usize {
        self.sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .filter(|(o, _)| o == owner)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_follow_the_documented_pattern() {
        for ok in ["a", "A1", "my-session_2", &"x".repeat(64)] {
            assert!(valid_session_id(ok), "{ok}");
        }
        for bad in [
            "",
            "-a",
            "_a",
            "a b",
            "a/b",
            "../x",
            "é",
            &"x".repeat(65),
            "a.b",
        ] {
            assert!(!valid_session_id(bad), "{bad}");
        }
    }
}
