//! The session table: every session of the supervisor by owner and id, and admission. A session
//! is admitted when the session count allows one more and the memory budget has room for what it
//! reserves (its memory cap plus its runtime's worker overhead); the same budget is checked again
//! when a session moves to a costlier runtime before its first worker. Idle sessions are reaped
//! here, and their ids remembered a while so a late call hears "expired".

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex};

use chrono::Utc;
use sandbox_protocol::Runtime;

use super::{Owner, Session, SessionSpec, setup};
use crate::config::SupervisorConfig;
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

/// Why [`SessionTable::move_to`] left a session where it is.
#[derive(Debug, thiserror::Error)]
pub enum MoveError {
    /// Its creator named its runtime, or a worker already started on it.
    #[error("the session's runtime is fixed")]
    Fixed,
    /// The memory budget has no room for what it would reserve there.
    #[error("{0}")]
    ResourcesExhausted(Usage),
}

/// What the sessions use against the admission limits. Every session reserves its memory cap
/// plus its worker's own memory, which depends on its runtime
/// ([`Runtime::host_overhead_bytes`]).
#[derive(Debug, Clone, Default, serde::Serialize, schemars::JsonSchema)]
pub struct Usage {
    pub sessions: usize,
    pub max_sessions: usize,
    /// What all sessions reserve: each one's memory cap plus its worker's overhead.
    pub memory_reserved_bytes: u64,
    pub memory_budget_bytes: u64,
    /// What the refused session would reserve: `requested_memory_cap_bytes` +
    /// `requested_worker_overhead_bytes`.
    pub memory_requested_bytes: u64,
    pub requested_memory_cap_bytes: u64,
    /// The memory of its worker process beyond the cap (Wasmtime, the interpreter's code).
    pub requested_worker_overhead_bytes: u64,
}

impl Usage {
    /// Whether what was requested fits the memory budget next to what is reserved.
    fn fits(&self) -> bool {
        self.memory_reserved_bytes + self.memory_requested_bytes <= self.memory_budget_bytes
    }
}

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "no capacity for a new session: {} of {} sessions in use, {} MiB of {} MiB memory reserved, {} MiB requested ({} MiB memory cap + {} MiB worker overhead)",
            self.sessions,
            self.max_sessions,
            self.memory_reserved_bytes >> 20,
            self.memory_budget_bytes >> 20,
            self.memory_requested_bytes >> 20,
            self.requested_memory_cap_bytes >> 20,
            self.requested_worker_overhead_bytes >> 20,
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

    /// A table in a fresh state directory (kept as long as the returned guard) whose memory
    /// budget is `budget`, for tests.
    #[cfg(test)]
    pub(crate) fn for_tests(budget: u64) -> (tempfile::TempDir, Self) {
        let state = tempfile::tempdir().expect("a temporary directory");
        let mut config = SupervisorConfig::new(
            "/nonexistent/sandbox-worker".into(),
            "/nonexistent/runtimes".into(),
            state.path().join("state"),
        );
        config.memory_budget = budget;
        let table = Self::new(Arc::new(config)).expect("a state directory");
        (state, table)
    }

    /// The state directory's parts (staging for package installs).
    pub fn dirs(&self) -> &Arc<StateDirs> {
        &self.dirs
    }

    /// Current use against the admission limits.
    pub fn usage(&self) -> Usage {
        let sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        self.usage_of(sessions.values(), 0, 0)
    }

    /// The use of `sessions`, with what a refused session asked for (its memory cap and its
    /// worker's overhead).
    fn usage_of<'a>(
        &self,
        sessions: impl Iterator<Item = &'a Arc<Session>>,
        requested_cap: u64,
        requested_overhead: u64,
    ) -> Usage {
        let (count, reserved) = sessions.fold((0, 0), |(count, reserved), session| {
            (count + 1, reserved + session.setup.reservation())
        });
        Usage {
            sessions: count,
            max_sessions: self.config.max_sessions,
            memory_reserved_bytes: reserved,
            memory_budget_bytes: self.config.memory_budget,
            memory_requested_bytes: requested_cap + requested_overhead,
            requested_memory_cap_bytes: requested_cap,
            requested_worker_overhead_bytes: requested_overhead,
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
                return Err(CreateError::ClientLimit { sessions: held });
            }
        }
        let usage = self.usage_of(
            sessions.values(),
            spec.limits_on(spec.runtime).memory_bytes,
            spec.runtime.host_overhead_bytes(),
        );
        if usage.sessions >= usage.max_sessions || !usage.fits() {
            return Err(CreateError::ResourcesExhausted(usage));
        }
        let files = self
            .dirs
            .create_session(id)
            .map_err(|e| CreateError::Workspace(e.to_string()))?;
        let now = Utc::now();
        let session = Arc::new(Session {
            id: id.to_owned(),
            owner: owner.clone(),
            ttl: spec.ttl,
            setup: setup::Setup::new(spec),
            created_at: now,
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

    /// Moves `session` to `runtime` before its first worker starts, when its creator did not
    /// name one and the memory budget has room for what it then reserves (the other sessions'
    /// reservations plus its own on `runtime`).
    ///
    /// # Errors
    /// [`MoveError::Fixed`] when the runtime may not change; [`MoveError::ResourcesExhausted`]
    /// when it does not fit, with the use and what it would reserve.
    pub fn move_to(&self, session: &Session, runtime: Runtime) -> Result<(), MoveError> {
        if !session.may_move_to(runtime) {
            return Err(MoveError::Fixed);
        }
        // Held while checking and moving, so no creation or other move sees a stale total.
        let sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        let spec = session.setup.spec();
        let others = sessions
            .values()
            .filter(|s| !std::ptr::eq(s.as_ref(), session));
        let mut usage = self.usage_of(
            others,
            spec.limits_on(runtime).memory_bytes,
            runtime.host_overhead_bytes(),
        );
        if !usage.fits() {
            // Reported with the session's own current reservation among what is reserved.
            usage.sessions += 1;
            usage.memory_reserved_bytes += session.setup.reservation();
            return Err(MoveError::ResourcesExhausted(usage));
        }
        if !session.setup.move_to(runtime) {
            return Err(MoveError::Fixed);
        }
        Ok(())
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
    use std::time::Duration;

    use sandbox_protocol::{Flavor, Language};

    use super::*;
    use crate::config::SessionLimits;

    const SMALL_CAP: u64 = 1 << 30;

    fn small(language: Language) -> SessionSpec {
        SessionSpec::new(
            language,
            SessionLimits::from(Flavor::Small),
            Duration::from_secs(60),
        )
    }

    #[test]
    fn admission_reserves_the_memory_cap_and_the_workers_overhead() {
        let python = SMALL_CAP + Runtime::Python.host_overhead_bytes();
        let javascript = SMALL_CAP + Runtime::JavaScript.host_overhead_bytes();
        // Room for exactly one Python and one JavaScript session, and not a byte more.
        let (_state, table) = SessionTable::for_tests(python + javascript);
        let owner = Owner::local();
        table.create(&owner, "py", small(Language::Python)).unwrap();
        table
            .create(&owner, "js", small(Language::JavaScript))
            .unwrap();
        assert_eq!(table.usage().memory_reserved_bytes, python + javascript);
        let Err(CreateError::ResourcesExhausted(usage)) =
            table.create(&owner, "third", small(Language::Python))
        else {
            panic!("a third session fits no budget");
        };
        assert_eq!(usage.sessions, 2);
        assert_eq!(usage.memory_reserved_bytes, python + javascript);
        assert_eq!(usage.memory_requested_bytes, python);
        assert_eq!(usage.requested_memory_cap_bytes, SMALL_CAP);
        assert_eq!(
            usage.requested_worker_overhead_bytes,
            Runtime::Python.host_overhead_bytes()
        );
        assert!(
            usage.to_string().ends_with(&format!(
                "MiB requested (1024 MiB memory cap + {} MiB worker overhead)",
                Runtime::Python.host_overhead_bytes() >> 20
            )),
            "{usage}"
        );

        // Without the overhead, the third session would have fitted a budget of three caps.
        let (_state, caps_only) = SessionTable::for_tests(3 * SMALL_CAP);
        for id in ["a", "b"] {
            caps_only
                .create(&owner, id, small(Language::Python))
                .unwrap();
        }
        assert!(matches!(
            caps_only.create(&owner, "c", small(Language::Python)),
            Err(CreateError::ResourcesExhausted(_))
        ));
    }

    #[test]
    fn a_move_to_a_costlier_runtime_is_admitted_like_a_new_session() {
        let scientific = Runtime::PythonScientific;
        let python = SMALL_CAP + Runtime::Python.host_overhead_bytes();
        let (_state, tight) = SessionTable::for_tests(python);
        let owner = Owner::local();
        let session = tight.create(&owner, "s", small(Language::Python)).unwrap();
        let Err(MoveError::ResourcesExhausted(usage)) = tight.move_to(&session, scientific) else {
            panic!("the scientific worker's overhead does not fit");
        };
        assert_eq!(
            (usage.sessions, usage.memory_reserved_bytes),
            (1, python),
            "the session's own reservation is counted as it stands"
        );
        assert_eq!(
            usage.memory_requested_bytes,
            SMALL_CAP + scientific.host_overhead_bytes()
        );
        assert_eq!(session.runtime(), Runtime::Python, "it stays where it is");

        let (_state, roomy) = SessionTable::for_tests(SMALL_CAP + scientific.host_overhead_bytes());
        let session = roomy.create(&owner, "s", small(Language::Python)).unwrap();
        roomy.move_to(&session, scientific).unwrap();
        assert_eq!(session.runtime(), scientific);
        assert_eq!(session.language(), Language::Python);
        assert_eq!(
            roomy.usage().memory_reserved_bytes,
            SMALL_CAP + scientific.host_overhead_bytes()
        );
        assert_eq!(
            session.limits().fuel,
            SessionLimits::from(Flavor::Small).fuel * scientific.fuel_factor()
        );
        assert!(matches!(
            roomy.move_to(&session, scientific),
            Err(MoveError::Fixed)
        ));

        let (_state, roomy) = SessionTable::for_tests(u64::MAX / 2);
        let pinned = roomy
            .create(
                &owner,
                "pinned",
                SessionSpec {
                    runtime_explicit: true,
                    ..small(Language::Python)
                },
            )
            .unwrap();
        assert!(matches!(
            roomy.move_to(&pinned, scientific),
            Err(MoveError::Fixed)
        ));
        let js = roomy
            .create(&owner, "js", small(Language::JavaScript))
            .unwrap();
        assert!(matches!(
            roomy.move_to(&js, scientific),
            Err(MoveError::Fixed)
        ));
    }
}
