//! Liveness and readiness, for orchestrators (`GET /healthz`, `GET /readyz`) and the service
//! manager (`READY=1` through [`crate::notify`]).
//!
//! Live: the server answers. Ready: the interpreters are compiled and a worker can start, which
//! is known from the last worker start (the pool's refills, sessions' own starts, or one probe
//! when no pool is configured): a host where starts began to fail (the state directory gone,
//! descriptors or processes exhausted) stops being ready until one succeeds again. A full server
//! stays ready: admission answers its clients with `resources_exhausted`, and routing new
//! clients elsewhere is the balancer's choice, not a reason to cut off its present sessions.
//!
//! `/readyz` answers anyone who reaches the port, without a token: its reasons (a failed
//! compile, a failing worker start) pass through the same [`Redactor`] as tool answers, so no
//! host path leaves the server there either.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::config::SupervisorConfig;
use crate::metrics::LastStart;
use crate::redact::Redactor;
use crate::runtimes::{CompileStatus, Runtimes};
use crate::session::SessionTable;

/// What the health endpoints look at.
#[derive(Debug)]
pub struct Health {
    config: Arc<SupervisorConfig>,
    runtimes: Arc<Runtimes>,
    sessions: Arc<SessionTable>,
    /// Takes host paths out of the reasons readiness gives.
    redactor: Arc<Redactor>,
    started: Instant,
    /// The transport is up: listening (HTTP) or talking to its client (stdio).
    serving: AtomicBool,
}

/// The readiness report (`GET /readyz`'s body).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Readiness {
    pub ready: bool,
    /// The transport is up (false only for a moment at start-up).
    pub serving: bool,
    /// `compiled`, `compiling` or `failed: <why>; retrying (attempt N in S s)`.
    pub interpreters: String,
    /// `started`, `not yet` or `failing: <why>`.
    pub worker_start: String,
    pub sessions: usize,
    pub max_sessions: usize,
    pub pooled_workers: usize,
    pub uptime_seconds: u64,
}

impl Health {
    pub fn new(
        config: Arc<SupervisorConfig>,
        runtimes: Arc<Runtimes>,
        sessions: Arc<SessionTable>,
        redactor: Arc<Redactor>,
    ) -> Self {
        Self {
            config,
            runtimes,
            sessions,
            redactor,
            started: Instant::now(),
            serving: AtomicBool::new(false),
        }
    }

    /// Marks the transport up: the HTTP listener is bound, or stdio is being served.
    pub fn mark_serving(&self) {
        self.serving.store(true, Ordering::SeqCst);
    }

    /// Whether the server can serve a new session now, and why not.
    pub fn readiness(&self) -> Readiness {
        let interpreters = match self.runtimes.status() {
            CompileStatus::Compiling => Err("compiling".to_owned()),
            CompileStatus::Compiled => Ok("compiled".to_owned()),
            CompileStatus::Retrying {
                error,
                attempts,
                retry_in,
            } => Err(format!(
                "failed: {error}; retrying (attempt {} in {} s)",
                attempts + 1,
                retry_in.as_secs()
            )),
        };
        let worker_start = match crate::metrics::global().last_start() {
            LastStart::Succeeded(_) => Ok("started".to_owned()),
            LastStart::None => Err("not yet".to_owned()),
            LastStart::Failed(why) => Err(format!("failing: {why}")),
        };
        let usage = self.sessions.usage();
        let serving = self.serving.load(Ordering::SeqCst);
        let ready = serving && interpreters.is_ok() && worker_start.is_ok();
        let (mut interpreters, mut worker_start) = (
            interpreters.unwrap_or_else(|e| e),
            worker_start.unwrap_or_else(|e| e),
        );
        self.redactor.redact_in_place(&mut interpreters);
        self.redactor.redact_in_place(&mut worker_start);
        Readiness {
            ready,
            serving,
            interpreters,
            worker_start,
            sessions: usage.sessions,
            max_sessions: usage.max_sessions,
            pooled_workers: usage.pooled_workers,
            uptime_seconds: self.started.elapsed().as_secs(),
        }
    }

    /// Waits until the server is ready; returns the report that said so. A server whose
    /// interpreters fail to compile is not until a retry succeeds: it waits on (the service
    /// manager's start timeout decides), and readiness says why.
    pub async fn until_ready(&self) -> Readiness {
        loop {
            let readiness = self.readiness();
            if readiness.ready {
                return readiness;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// True when no pool will start a worker by itself, so readiness needs a probe start.
    pub fn needs_probe(&self) -> bool {
        self.config.jail.entry == crate::jail_layers::WorkerEntry::Serve
            && self.config.worker_pool.iter().all(|(_, size)| size == 0)
    }

    /// The session table, for the metrics' levels.
    pub fn sessions(&self) -> &SessionTable {
        &self.sessions
    }
}
