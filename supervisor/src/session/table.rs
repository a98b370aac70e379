//! The session table: every session of the supervisor by owner and id, the pool of pre-started
//! workers, and admission. A session is admitted when the session count allows one more and
//! its runtime's expected use fits next to what sessions and pooled workers really use (see
//! [`memory`]): within the memory budget, and leaving the host's reserve free. The same check
//! runs when a session moves to a costlier runtime before its first worker, and before the pool
//! starts a worker. Idle sessions are reaped here, and their ids remembered a while so a late
//! call hears "expired".

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::Utc;
use sandbox_protocol::Runtime;

use super::{Owner, Session, SessionSpec};
use crate::config::SupervisorConfig;
use crate::memory::{self, Footprint, ProcFs};
use crate::metrics::{AdmissionLevels, Levels, Refusal};
use crate::pool::{Pooled, WorkerPool, worker_shape};
use crate::runtimes::Runtimes;
use crate::worker::Worker;
use crate::workspace::StateDirs;

/// How many reaped session ids are remembered, so a late call hears "expired" instead of
/// silently getting a fresh session.
const REMEMBERED_EXPIRED: usize = 1024;

/// How long the pool waits after a worker failed to start before trying again; each failure
/// in a row doubles the wait, up to [`POOL_RETRY_MAX`] (a broken host is not retried, and
/// logged, every few seconds forever).
const POOL_RETRY: Duration = Duration::from_secs(5);
const POOL_RETRY_MAX: Duration = Duration::from_secs(300);

/// The wait after one more failure in a row, when the last wait was `previous`.
fn next_retry(previous: Option<Duration>) -> Duration {
    previous.map_or(POOL_RETRY, |wait| (wait * 2).min(POOL_RETRY_MAX))
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
    pool: Arc<WorkerPool>,
    /// The workers' memory as last measured, by pid.
    measured: Mutex<HashMap<u32, Footprint>>,
    proc_fs: ProcFs,
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

/// Counts a refusal by the limit it hit.
fn count_refusal(usage: &Usage) {
    let limit = match usage.shortage {
        Some(Shortage::Sessions) => Refusal::Sessions,
        Some(Shortage::HostMemory) => Refusal::HostMemory,
        Some(Shortage::MemoryBudget) | None => Refusal::MemoryBudget,
    };
    crate::metrics::global().refused(limit);
}

/// Which admission limit a refused request hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Shortage {
    /// The most sessions at once.
    Sessions,
    /// The memory budget, against what sessions and pooled workers use.
    MemoryBudget,
    /// The host's available memory, less what it keeps free.
    HostMemory,
}

/// What sessions and pooled workers use against the admission limits. Memory figures count
/// measured use (PSS plus a quarter), never less than each runtime's expected use; a session's
/// memory cap is a limit on its guest, not a reservation.
#[derive(Debug, Clone, Default, serde::Serialize, schemars::JsonSchema)]
pub struct Usage {
    pub sessions: usize,
    pub max_sessions: usize,
    /// Pre-started workers waiting for sessions (counted in `memory_in_use_bytes`).
    pub pooled_workers: usize,
    pub memory_in_use_bytes: u64,
    pub memory_budget_bytes: u64,
    /// The host's `MemAvailable` when checked, and what admission keeps free of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_available_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_reserve_bytes: Option<u64>,
    /// What the refused request would use (its runtime's expected use).
    pub memory_requested_bytes: u64,
    /// Which limit it hit, when refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shortage: Option<Shortage>,
}

impl Usage {
    /// The first limit a request of `memory_requested_bytes` hits, if any (`count_new`: it is
    /// one more session).
    fn shortage(&self, count_new: bool) -> Option<Shortage> {
        if count_new && self.sessions >= self.max_sessions {
            return Some(Shortage::Sessions);
        }
        if self.memory_in_use_bytes + self.memory_requested_bytes > self.memory_budget_bytes {
            return Some(Shortage::MemoryBudget);
        }
        match (self.host_available_bytes, self.host_reserve_bytes) {
            (Some(available), Some(reserve))
                if available < self.memory_requested_bytes + reserve =>
            {
                Some(Shortage::HostMemory)
            }
            _ => None,
        }
    }

    /// Checks the request: `Err` with the shortage named when a limit is hit.
    fn admit(mut self, count_new: bool) -> Result<Self, Self> {
        match self.shortage(count_new) {
            None => Ok(self),
            Some(shortage) => {
                self.shortage = Some(shortage);
                Err(self)
            }
        }
    }
}

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mib = |bytes: u64| bytes >> 20;
        match self.shortage {
            Some(Shortage::Sessions) => write!(
                f,
                "no capacity for a new session: {} of {} sessions in use",
                self.sessions, self.max_sessions
            ),
            Some(Shortage::HostMemory) => write!(
                f,
                "the host is short of memory: {} MiB available, {} MiB kept free, {} MiB needed",
                mib(self.host_available_bytes.unwrap_or(0)),
                mib(self.host_reserve_bytes.unwrap_or(0)),
                mib(self.memory_requested_bytes),
            ),
            Some(Shortage::MemoryBudget) | None => write!(
                f,
                "the memory budget is used up: sessions and pre-started workers use {} MiB of {} MiB, {} MiB more needed",
                mib(self.memory_in_use_bytes),
                mib(self.memory_budget_bytes),
                mib(self.memory_requested_bytes),
            ),
        }
    }
}

impl SessionTable {
    /// A table over the state directory's sessions (created here), with a pool of the sizes
    /// configured (none when workers are jail probes, which attack instead of serving).
    ///
    /// # Errors
    /// When the state directory's parts cannot be created.
    pub fn new(config: Arc<SupervisorConfig>) -> std::io::Result<Self> {
        let dirs = Arc::new(StateDirs::create(&config.state_dir)?);
        let sizes = if config.jail.entry == crate::jail_layers::WorkerEntry::Serve {
            config.worker_pool.clone()
        } else {
            crate::config::PoolSizes::none()
        };
        Ok(Self {
            config,
            dirs,
            sessions: Mutex::default(),
            expired: Mutex::default(),
            pool: Arc::new(WorkerPool::new(sizes)),
            measured: Mutex::default(),
            proc_fs: ProcFs::default(),
        })
    }

    /// A table in a fresh state directory (kept as long as the returned guard) whose memory
    /// budget is `budget`, for tests; it sees no host memory figures unless given a fake
    /// `/proc` ([`SessionTable::with_proc_fs`]).
    #[cfg(test)]
    pub(crate) fn for_tests(budget: u64) -> (tempfile::TempDir, Self) {
        let state = tempfile::tempdir().expect("a temporary directory");
        let mut config = SupervisorConfig::new(
            "/nonexistent/sandbox-worker".into(),
            "/nonexistent/runtimes".into(),
            state.path().join("state"),
        );
        config.memory_budget = budget;
        let mut table = Self::new(Arc::new(config)).expect("a state directory");
        table.proc_fs = ProcFs("/nonexistent/proc".into());
        (state, table)
    }

    /// The same table reading the host's memory and workers' footprints from `proc`.
    #[cfg(test)]
    pub(crate) fn with_proc_fs(mut self, proc: ProcFs) -> Self {
        self.proc_fs = proc;
        self
    }

    /// The state directory's parts (staging for package installs).
    pub fn dirs(&self) -> &Arc<StateDirs> {
        &self.dirs
    }

    /// Current use against the admission limits.
    pub fn usage(&self) -> Usage {
        self.usage_for(0)
    }

    /// Current use, with `requested` bytes asked for.
    fn usage_for(&self, requested: u64) -> Usage {
        let sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        self.usage_of(sessions.values(), requested)
    }

    /// What `session` counts for now: its worker's measured use, its runtime's expected use
    /// before its first worker, and nothing while it has lost or given up its worker (its next
    /// call starts one again without asking admission, like any restart).
    fn demand_of(&self, session: &Session, measured: &HashMap<u32, Footprint>) -> u64 {
        let pid = session.worker_pid.load(Ordering::SeqCst);
        if pid == 0 && session.started.load(Ordering::SeqCst) {
            return 0;
        }
        memory::demand(session.runtime(), measured.get(&pid).copied())
    }

    /// Stops the workers of idle `auto_persist_globals` sessions, longest idle first, until
    /// `shortfall` bytes are freed (as admission counts them, and as the host will see them).
    /// Only sessions idle for the configured time qualify; their variables come back on their
    /// next call. Returns the bytes freed.
    fn evict_idle(&self, sessions: &HashMap<SessionKey, Arc<Session>>, shortfall: u64) -> u64 {
        let Some(min_idle) = self.config.evict_idle else {
            return 0;
        };
        let mut candidates: Vec<&Arc<Session>> = sessions
            .values()
            .filter(|s| {
                s.limits().auto_persist_globals && s.has_worker() && s.idle_for() >= min_idle
            })
            .collect();
        candidates.sort_by_key(|s| std::cmp::Reverse(s.idle_for()));
        let mut freed = 0;
        for session in candidates {
            if freed >= shortfall {
                break;
            }
            let demand = {
                let measured = self.measured.lock().unwrap_or_else(|e| e.into_inner());
                self.demand_of(session, &measured)
            };
            if session.evict() {
                freed += demand;
            }
        }
        freed
    }

    /// Admits a new session of `runtime` next to `sessions`, evicting idle persistent workers
    /// first when memory is what is short.
    fn admit_new(
        &self,
        sessions: &HashMap<SessionKey, Arc<Session>>,
        runtime: Runtime,
    ) -> Result<(), Usage> {
        let requested = runtime.expected_use_bytes();
        let refused = match self.usage_of(sessions.values(), requested).admit(true) {
            Ok(_) => return Ok(()),
            Err(refused) => refused,
        };
        let shortfall = match refused.shortage {
            Some(Shortage::MemoryBudget) => {
                refused.memory_in_use_bytes + requested - refused.memory_budget_bytes
            }
            Some(Shortage::HostMemory) => {
                let (available, reserve) = (
                    refused.host_available_bytes.unwrap_or(0),
                    refused.host_reserve_bytes.unwrap_or(0),
                );
                (requested + reserve).saturating_sub(available)
            }
            Some(Shortage::Sessions) | None => return Err(refused),
        };
        let freed = self.evict_idle(sessions, shortfall);
        if freed == 0 {
            return Err(refused);
        }
        let mut usage = self.usage_of(sessions.values(), requested);
        // The killed workers' memory reaches MemAvailable a moment later.
        usage.host_available_bytes = usage.host_available_bytes.map(|a| a + freed);
        usage.admit(true).map(drop)
    }

    /// The use of `sessions` and the pool, the host's memory, and `requested` bytes asked for.
    fn usage_of<'a>(
        &self,
        sessions: impl Iterator<Item = &'a Arc<Session>>,
        requested: u64,
    ) -> Usage {
        let measured = self.measured.lock().unwrap_or_else(|e| e.into_inner());
        let (count, sessions_use) = sessions.fold((0, 0), |(count, used), session| {
            (count + 1, used + self.demand_of(session, &measured))
        });
        let pooled = self.pool.workers();
        let pool_use: u64 = pooled
            .iter()
            .map(|(pid, runtime)| memory::demand(*runtime, measured.get(pid).copied()))
            .sum();
        drop(measured);
        let host = self.proc_fs.host_memory();
        Usage {
            sessions: count,
            max_sessions: self.config.max_sessions,
            pooled_workers: pooled.len(),
            memory_in_use_bytes: sessions_use + pool_use,
            memory_budget_bytes: self.config.memory_budget,
            host_available_bytes: host.map(|h| h.available),
            host_reserve_bytes: host.map(memory::host_reserve),
            memory_requested_bytes: requested,
            shortage: None,
        }
    }

    /// Measures every worker's memory (sessions' and pooled), off the async threads.
    pub async fn sample_memory(&self) {
        let mut pids: Vec<u32> = self
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .map(|s| s.worker_pid.load(Ordering::SeqCst))
            .filter(|pid| *pid != 0)
            .collect();
        pids.extend(self.pool.workers().into_iter().map(|(pid, _)| pid));
        let proc_fs = self.proc_fs.clone();
        if let Ok(measured) = tokio::task::spawn_blocking(move || proc_fs.footprints(pids)).await {
            *self.measured.lock().unwrap_or_else(|e| e.into_inner()) = measured;
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
    /// When the id is taken, the session does not fit the admission limits (the count, or the
    /// memory budget against what it reserves: its cap plus its runtime's worker overhead), or
    /// the workspace cannot be created.
    pub fn create(
        &self,
        owner: &Owner,
        id: &str,
        spec: SessionSpec,
    ) -> Result<Arc<Session>, CreateError> {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        let key = (owner.clone(), id.to_owned());
        if sessions.contains_key(&key) {
            return Err(CreateError::Exists(id.to_owned()));
        }
        if owner.capped() {
            let held = sessions.keys().filter(|(o, _)| o == owner).count();
            if held >= self.config.principal_max_sessions {
                crate::metrics::global().refused(Refusal::ClientSessions);
                return Err(CreateError::ClientLimit { sessions: held });
            }
        }
        self.admit_new(&sessions, spec.runtime)
            .inspect_err(count_refusal)
            .map_err(CreateError::ResourcesExhausted)?;
        let files = self
            .dirs
            .create_session(id)
            .map_err(|e| CreateError::Workspace(e.to_string()))?;
        let now = Utc::now();
        let session = Arc::new(Session {
            id: id.to_owned(),
            owner: owner.clone(),
            ttl: spec.ttl,
            spec,
            created_at: now,
            key: files.key.clone(),
            files: Mutex::new(Arc::new(files)),
            pool: self.pool.clone(),
            dirs: self.dirs.clone(),
            last_used: Mutex::new(now),
            worker_pid: AtomicU32::new(0),
            started: Default::default(),
            executions: Default::default(),
            fuel_used: Default::default(),
            runner: tokio::sync::Mutex::default(),
            line: Mutex::new(None),
            installs: tokio::sync::Mutex::new(()),
        });
        self.expired
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|e| *e != key);
        sessions.insert(key, session.clone());
        Ok(session)
    }

    /// Removes every session of `owner` (whose MCP session ended), as `destroy` does each.
    /// Returns how many there were.
    pub async fn destroy_all_of(&self, owner: &Owner) -> usize {
        let ids: Vec<String> = self
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .filter(|(o, _)| o == owner)
            .map(|(_, id)| id.clone())
            .collect();
        for id in &ids {
            self.destroy(owner, id).await;
        }
        ids.len()
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
        let files = session.files();
        let removed = tokio::task::spawn_blocking(move || dirs.remove_session(&files)).await;
        match removed {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!(session = %id, error = %e, "cannot remove a session directory");
            }
            // A blocking task not yet begun when the runtime shuts down is cancelled, not
            // failed: shutdown removes the whole state directory after it.
            Err(e) if e.is_cancelled() => {
                tracing::debug!(session = %id, "session removal left to shutdown");
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
            if let Some(session) = self.destroy(&owner, &id).await {
                crate::metrics::global().session_reaped(session.runtime());
            }
            let mut expired = self.expired.lock().unwrap_or_else(|e| e.into_inner());
            expired.push_back((owner, id));
            if expired.len() > REMEMBERED_EXPIRED {
                expired.pop_front();
            }
        }
    }

    /// Keeps the pool full while the server runs: after the interpreters are compiled, starts
    /// a worker for each one missing (when admission has room for it; a full server stops
    /// refilling), drops pooled workers that died, and waits for the next take.
    pub async fn keep_pool_filled(&self, runtimes: &Runtimes) {
        let mut retry = None;
        loop {
            // Failures are logged by the step and tried again; sessions say it too. Read each
            // time: the memory images may have come since.
            let manifest = runtimes.keep_trying(&self.config).await;
            for dead in self.pool.prune_dead() {
                if let Err(e) = self.dirs.remove_session(&dead) {
                    tracing::warn!(error = %e, "cannot remove a dead pooled worker's directory");
                }
            }
            let mut failed = false;
            for runtime in self.pool.missing() {
                let Some(module) = manifest.module(runtime) else {
                    continue;
                };
                if let Err(usage) = self.usage_for(runtime.expected_use_bytes()).admit(false) {
                    tracing::debug!(%runtime, %usage, "no room to pool a worker");
                    break;
                }
                match self.start_pooled(runtime, module).await {
                    Ok(pooled) => {
                        crate::metrics::global().worker_started(runtime, "pooled");
                        self.pool.put(pooled);
                    }
                    Err(e) => {
                        crate::metrics::global().worker_start_failed(runtime, &e);
                        tracing::warn!(%runtime, error = %e, "cannot pre-start a worker");
                        failed = true;
                        break;
                    }
                }
            }
            retry = failed.then(|| next_retry(retry));
            self.pool
                .wait_for_take(retry.unwrap_or(memory::SAMPLE_PERIOD))
                .await;
        }
    }

    /// Starts one worker and stops it again, to learn whether workers start on this host when
    /// no pool tells (readiness waits for a worker to have started).
    pub async fn probe_worker_start(&self, runtimes: &Runtimes) {
        // Readiness reports the interpreters' failure until a retry succeeds.
        let manifest = runtimes.keep_trying(&self.config).await;
        let Some((runtime, module)) = Runtime::ALL
            .into_iter()
            .find_map(|runtime| Some((runtime, manifest.module(runtime)?)))
        else {
            return;
        };
        match self.start_pooled(runtime, module).await {
            Ok(probe) => {
                crate::metrics::global().worker_started(runtime, "probe");
                probe.worker.shutdown().await;
                if let Err(e) = self.dirs.remove_session(&probe.files) {
                    tracing::warn!(error = %e, "cannot remove the probe worker's directory");
                }
            }
            Err(e) => {
                crate::metrics::global().worker_start_failed(runtime, &e);
                tracing::error!(%runtime, error = %e, "a worker cannot start");
            }
        }
    }

    /// Starts one pooled worker of `runtime` with a default session's limits, on directories
    /// of its own.
    async fn start_pooled(
        &self,
        runtime: Runtime,
        module: &sandbox_protocol::CachedModule,
    ) -> Result<Pooled, String> {
        let limits = SessionSpec::new(
            runtime.language(),
            self.config.defaults.clone(),
            self.config.session_ttl,
        )
        .limits_on(runtime);
        let files = self
            .dirs
            .create_pooled()
            .map_err(|e| format!("cannot create its directory: {e}"))?;
        match Worker::spawn(&self.config, module, &files, 1, runtime, &limits).await {
            Ok((worker, ready)) => {
                tracing::debug!(pid = worker.pid(), %runtime, startup_ms = ready.startup_us as f64 / 1000.0, from_image = ready.from_image, "worker pooled");
                Ok(Pooled {
                    runtime,
                    shape: worker_shape(&limits),
                    files,
                    worker,
                    version: ready.runtime_version,
                })
            }
            Err(e) => {
                let _ = self.dirs.remove_session(&files);
                Err(e.to_string())
            }
        }
    }

    /// Kills every worker and removes every workspace, concurrently.
    pub async fn shutdown(&self) {
        let pooled = self.pool.drain();
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
        for pooled in pooled {
            stopping.spawn(async move { pooled.worker.shutdown().await });
        }
        while stopping.join_next().await.is_some() {}
        // The directories go with the whole state directory (see `crate::shutdown`).
    }

    /// What the metrics show at a scrape: every session's runtime and whether it has a worker,
    /// the pool, and the workers' memory as last sampled.
    pub fn levels(&self) -> Levels {
        let usage = self.usage();
        let measured = self
            .measured
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let mut memory = Vec::new();
        let sessions = self
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .map(|s| {
                let pid = s.worker_pid.load(Ordering::SeqCst);
                if let Some(footprint) = measured.get(&pid).filter(|_| pid != 0) {
                    memory.push((s.runtime(), "session", *footprint));
                }
                (s.runtime(), pid != 0)
            })
            .collect();
        let pooled = self.pool.workers();
        for (pid, runtime) in &pooled {
            if let Some(footprint) = measured.get(pid) {
                memory.push((*runtime, "pooled", *footprint));
            }
        }
        Levels {
            sessions,
            pooled: pooled.into_iter().map(|(_, runtime)| runtime).collect(),
            pool_target: self.config.worker_pool.iter().collect(),
            memory,
            admission: AdmissionLevels {
                memory_in_use_bytes: usage.memory_in_use_bytes,
                memory_budget_bytes: usage.memory_budget_bytes,
                max_sessions: usage.max_sessions,
                host_available_bytes: usage.host_available_bytes,
            },
        }
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
    use std::time::Duration;

    use sandbox_protocol::{Flavor, Language};

    use super::*;
    use crate::config::SessionLimits;

    const MIB: u64 = 1 << 20;

    fn small(language: Language) -> SessionSpec {
        SessionSpec::new(
            language,
            SessionLimits::from(Flavor::Small),
            Duration::from_secs(60),
        )
    }

    fn refusal(result: Result<Arc<Session>, CreateError>) -> Usage {
        match result {
            Err(CreateError::ResourcesExhausted(usage)) => usage,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn a_memory_cap_is_a_limit_sessions_count_for_what_they_are_expected_to_use() {
        let python = Runtime::Python.expected_use_bytes();
        let javascript = Runtime::JavaScript.expected_use_bytes();
        // Room for exactly one Python and one JavaScript session, and not a byte more; each
        // has a 1 GiB cap, which is not reserved.
        let (_state, table) = SessionTable::for_tests(python + javascript);
        let owner = Owner::local();
        table.create(&owner, "py", small(Language::Python)).unwrap();
        table
            .create(&owner, "js", small(Language::JavaScript))
            .unwrap();
        assert_eq!(table.usage().memory_in_use_bytes, python + javascript);
        let usage = refusal(table.create(&owner, "third", small(Language::JavaScript)));
        assert_eq!(usage.shortage, Some(Shortage::MemoryBudget));
        assert_eq!(usage.sessions, 2);
        assert_eq!(usage.memory_in_use_bytes, python + javascript);
        assert_eq!(usage.memory_requested_bytes, javascript);
        assert_eq!(
            usage.to_string(),
            format!(
                "the memory budget is used up: sessions and pre-started workers use {} MiB of {} MiB, {} MiB more needed",
                (python + javascript) / MIB,
                (python + javascript) / MIB,
                javascript / MIB
            )
        );

        // A hundred small sessions fit in 4 GiB: their caps (100 GiB) are not what counts.
        let (_state, roomy) = SessionTable::for_tests(4 << 30);
        for i in 0..100 {
            let language = if i % 2 == 0 {
                Language::Python
            } else {
                Language::JavaScript
            };
            roomy
                .create(&owner, &format!("s{i}"), small(language))
                .unwrap();
        }
        assert_eq!(roomy.usage().sessions, 100);
    }

    #[test]
    fn measured_use_replaces_the_expectation_once_it_is_larger() {
        let (_state, table) = SessionTable::for_tests(1 << 30);
        let owner = Owner::local();
        let session = table
            .create(&owner, "big", small(Language::Python))
            .unwrap();
        session.worker_pid.store(4242, Ordering::SeqCst);
        let measure = |pss: u64| {
            let footprint = Footprint { rss: pss, pss };
            *table.measured.lock().unwrap() = HashMap::from([(4242, footprint)]);
        };
        measure(MIB);
        assert_eq!(
            table.usage().memory_in_use_bytes,
            Runtime::Python.expected_use_bytes(),
            "an idle worker counts for its runtime's expected use"
        );
        measure(800 * MIB);
        assert_eq!(
            table.usage().memory_in_use_bytes,
            1000 * MIB,
            "measured plus a quarter"
        );
        let usage = refusal(table.create(&owner, "next", small(Language::Python)));
        assert_eq!(usage.shortage, Some(Shortage::MemoryBudget));
        measure(100 * MIB);
        table
            .create(&owner, "next", small(Language::Python))
            .unwrap();
    }

    #[test]
    fn the_pool_retries_a_failing_start_less_and_less_often() {
        let mut waits = Vec::new();
        let mut retry = None;
        for _ in 0..8 {
            retry = Some(next_retry(retry));
            waits.push(retry.unwrap().as_secs());
        }
        assert_eq!(waits, [5, 10, 20, 40, 80, 160, 300, 300]);
    }

    #[test]
    fn a_session_that_gave_up_its_worker_counts_for_nothing_until_it_starts_one() {
        let (_state, table) = SessionTable::for_tests(u64::MAX / 2);
        let owner = Owner::local();
        let session = table.create(&owner, "s", small(Language::Python)).unwrap();
        let expected = Runtime::Python.expected_use_bytes();
        assert_eq!(
            table.usage().memory_in_use_bytes,
            expected,
            "before its first worker"
        );
        session.started.store(true, Ordering::SeqCst);
        session.worker_pid.store(77, Ordering::SeqCst);
        assert_eq!(table.usage().memory_in_use_bytes, expected, "with a worker");
        session.worker_pid.store(0, Ordering::SeqCst);
        assert_eq!(
            table.usage().memory_in_use_bytes,
            0,
            "evicted, or lost its worker"
        );
        assert_eq!(
            table.evict_idle(&table.sessions.lock().unwrap(), 1),
            0,
            "eviction is off unless configured"
        );
    }

    #[test]
    fn a_host_short_of_memory_refuses_whatever_the_budget_says() {
        let proc = tempfile::tempdir().unwrap();
        let meminfo = |available_mib: u64| {
            let text = format!(
                "MemTotal: {} kB\nMemAvailable: {} kB\n",
                1 << 20, // 1 GiB: the reserve is its floor, 256 MiB
                available_mib * 1024
            );
            std::fs::write(proc.path().join("meminfo"), text).unwrap();
        };
        let (_state, table) = SessionTable::for_tests(u64::MAX / 2);
        let table = table.with_proc_fs(ProcFs(proc.path().to_path_buf()));
        let owner = Owner::local();
        meminfo(256 + 31);
        let usage = refusal(table.create(&owner, "a", small(Language::Python)));
        assert_eq!(usage.shortage, Some(Shortage::HostMemory));
        assert_eq!(usage.host_reserve_bytes, Some(256 * MIB));
        assert_eq!(
            usage.to_string(),
            "the host is short of memory: 287 MiB available, 256 MiB kept free, 32 MiB needed"
        );
        meminfo(256 + 32);
        table.create(&owner, "a", small(Language::Python)).unwrap();
    }

    #[test]
    fn the_session_count_is_a_limit_of_its_own() {
        let (_state, table) = SessionTable::for_tests(u64::MAX / 2);
        let mut config = (*table.config).clone();
        config.max_sessions = 1;
        let table = SessionTable {
            config: Arc::new(config),
            ..table
        };
        let owner = Owner::local();
        table
            .create(&owner, "one", small(Language::Python))
            .unwrap();
        let usage = refusal(table.create(&owner, "two", small(Language::Python)));
        assert_eq!(usage.shortage, Some(Shortage::Sessions));
        assert_eq!(
            usage.to_string(),
            "no capacity for a new session: 1 of 1 sessions in use"
        );
    }
}
