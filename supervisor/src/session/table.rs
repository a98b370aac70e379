//! The session table: every session of the supervisor by owner and id, and the pool of
//! pre-started workers. Sessions are created (after [`admission`]), looked up, destroyed and
//! shut down here; idle sessions are reaped by the [`upkeep`] loops, and their ids remembered a
//! while so a late call hears "expired".

mod admission;
mod upkeep;

pub use admission::Usage;
use admission::count_refusal;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use chrono::Utc;

use super::{Owner, Parts, Session, SessionSpec};
use crate::config::SupervisorConfig;
use crate::memory::{Footprint, ProcFs};
use crate::metrics::{AdmissionLevels, Levels, Refusal};
use crate::pool::WorkerPool;
use crate::worker::fork_server::ForkServers;
use crate::workspace::StateDirs;

/// How many reaped session ids are remembered, so a late call hears "expired" instead of
/// silently getting a fresh session.
const REMEMBERED_EXPIRED: usize = 1024;

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

impl SessionTable {
    /// A table over the state directory's sessions (created here), with a pool of the sizes
    /// configured (none when workers are jail probes, which attack instead of serving).
    ///
    /// # Errors
    /// When the state directory's parts cannot be created.
    pub fn new(config: Arc<SupervisorConfig>) -> std::io::Result<Self> {
        let dirs = Arc::new(StateDirs::open(&config.state_dir, config.durable_sessions)?);
        let serving = config.jail.entry == crate::jail_layers::WorkerEntry::Serve;
        let sizes = if serving {
            config.worker_pool.clone()
        } else {
            crate::config::PoolSizes::none()
        };
        let forks = ForkServers::new(serving && config.fork_servers);
        let pool = Arc::new(WorkerPool::new(sizes, forks));
        let mut sessions = HashMap::new();
        if config.durable_sessions {
            for session in super::durable::take_over(&dirs, &pool) {
                let key = (session.owner.clone(), session.id.clone());
                sessions.insert(key, Arc::new(session));
            }
            if !sessions.is_empty() {
                tracing::info!(
                    sessions = sessions.len(),
                    "sessions taken over from the previous server"
                );
            }
        }
        Ok(Self {
            config,
            dirs,
            sessions: Mutex::new(sessions),
            expired: Mutex::default(),
            pool,
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
        let session = Arc::new(Session::new(
            Parts {
                id: id.to_owned(),
                owner: owner.clone(),
                spec,
                key: files.key.clone(),
                files,
                created_at: now,
                last_used: now,
                durable: self.config.durable_sessions && owner.lasting().is_some(),
                kept: None,
            },
            self.pool.clone(),
            self.dirs.clone(),
        ));
        session.keep_record();
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

    /// Kills every worker, concurrently. With durable sessions, the sessions that outlive the
    /// server have their records written afresh and the other sessions' and pooled workers'
    /// directories are removed; otherwise the whole state directory goes afterwards (see
    /// `crate::shutdown`).
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
        let durable = self.config.durable_sessions;
        for session in sessions {
            let dirs = self.dirs.clone();
            stopping.spawn(async move {
                session.stop().await;
                if !durable {
                    return;
                }
                tokio::task::spawn_blocking(move || {
                    if session.durable {
                        session.keep_record();
                    } else if let Err(e) = dirs.remove_session(&session.files()) {
                        tracing::warn!(session = %session.id, error = %e, "cannot remove a session directory");
                    }
                })
                .await
                .ok();
            });
        }
        for pooled in pooled {
            let dirs = self.dirs.clone();
            stopping.spawn(async move {
                pooled.worker.shutdown().await;
                if durable && let Err(e) = dirs.remove_session(&pooled.files) {
                    tracing::warn!(error = %e, "cannot remove a pooled worker's directory");
                }
            });
        }
        while stopping.join_next().await.is_some() {}
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
