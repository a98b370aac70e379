//! Workers started before any session asks for them: a new session's first call finds its
//! interpreter already running (CPython takes about 25 ms to start from its memory image, or a
//! second without one, numpy and pandas preloaded; QuickJS a few milliseconds) instead of
//! waiting for it.
//!
//! Each pooled worker is started exactly as a session's would be, on a workspace of its own
//! (`sessions/pooled.<key>`), with the default limits of its runtime. A session whose first
//! worker would have that shape adopts one, workspace and all (see `Session::start_worker`);
//! its own empty directories are dropped. The pool only holds workers: keeping it full
//! (admission counts pooled workers like sessions, so a full server stops refilling it) is the
//! session table's background task, and a pooled worker that died is dropped when noticed.

use std::sync::Mutex;
use std::time::Duration;

use sandbox_protocol::Runtime;

use crate::config::{PoolSizes, SessionLimits};
use crate::worker::Worker;
use crate::worker::fork_server::ForkServers;
use crate::workspace::SessionFiles;

/// How long the refill waits after a worker was taken: the session that took it runs its first
/// call in the next milliseconds, cold (its caches, the pages it writes first), and a worker
/// started at the same moment competes with it for the cores (on two, it made that call
/// slower by about as much as the pool saves). A second session arriving meanwhile starts its
/// own worker, as it would while the refill runs.
const REFILL_DELAY: Duration = Duration::from_millis(40);

/// The part of a session's limits its worker is started with: the rest (fuel, timeout)
/// travels with each request, so any session of this shape can use the worker.
pub fn worker_shape(limits: &SessionLimits) -> SessionLimits {
    SessionLimits {
        fuel: 0,
        timeout: Duration::ZERO,
        ..limits.clone()
    }
}

/// A started, idle worker and the workspace it was started on.
#[derive(Debug)]
pub struct Pooled {
    pub runtime: Runtime,
    /// Its [`worker_shape`].
    pub shape: SessionLimits,
    pub files: SessionFiles,
    pub worker: Worker,
    /// Its interpreter's version, as it reported when ready.
    pub version: String,
}

impl Pooled {
    /// Whether it can serve a session of `runtime` whose limits have `shape`: the same, and
    /// alive.
    fn serves(&mut self, runtime: Runtime, shape: &SessionLimits) -> bool {
        self.runtime == runtime && self.shape == *shape && self.worker.exited().is_none()
    }
}

/// The idle pre-started workers, and the fork servers every worker is started from when it can
/// be.
#[derive(Debug)]
pub struct WorkerPool {
    sizes: PoolSizes,
    idle: Mutex<Vec<Pooled>>,
    /// Woken when a worker is taken, so the refill starts at once.
    taken: tokio::sync::Notify,
    pub forks: ForkServers,
}

impl WorkerPool {
    pub fn new(sizes: PoolSizes, forks: ForkServers) -> Self {
        Self {
            sizes,
            idle: Mutex::default(),
            taken: tokio::sync::Notify::new(),
            forks,
        }
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<Pooled>> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A live idle worker of `runtime` started with `shape`, if the pool has one. One found dead
    /// on the way is left for [`WorkerPool::prune_dead`], which removes its workspace too.
    pub fn take(&self, runtime: Runtime, shape: &SessionLimits) -> Option<Pooled> {
        let mut idle = self.idle();
        let found = idle
            .iter_mut()
            .position(|pooled| pooled.serves(runtime, shape))?;
        let taken = idle.swap_remove(found);
        drop(idle);
        self.taken.notify_one();
        Some(taken)
    }

    /// True when [`WorkerPool::take`] would find a worker now.
    pub fn has(&self, runtime: Runtime, shape: &SessionLimits) -> bool {
        self.idle()
            .iter_mut()
            .any(|pooled| pooled.serves(runtime, shape))
    }

    /// Adds a started worker.
    pub fn put(&self, pooled: Pooled) {
        self.idle().push(pooled);
    }

    /// Drops the idle workers that died (killed, OOM-killed) and returns their workspaces'
    /// files for removal.
    pub fn prune_dead(&self) -> Vec<SessionFiles> {
        let mut idle = self.idle();
        let mut dead = Vec::new();
        let mut i = 0;
        while i < idle.len() {
            if idle[i].worker.exited().is_some() {
                let pooled = idle.swap_remove(i);
                tracing::warn!(pid = pooled.worker.pid(), runtime = %pooled.runtime, "a pooled worker died while idle");
                dead.push(pooled.files);
            } else {
                i += 1;
            }
        }
        dead
    }

    /// The runtimes with fewer idle workers than their size, once per missing worker.
    pub fn missing(&self) -> Vec<Runtime> {
        let idle = self.idle();
        self.sizes
            .iter()
            .flat_map(|(runtime, size)| {
                let have = idle.iter().filter(|p| p.runtime == runtime).count();
                std::iter::repeat_n(runtime, size.saturating_sub(have))
            })
            .collect()
    }

    /// Pid and runtime of every idle worker (what admission counts them for).
    pub fn workers(&self) -> Vec<(u32, Runtime)> {
        self.idle()
            .iter()
            .map(|p| (p.worker.pid(), p.runtime))
            .collect()
    }

    /// Waits until a worker is taken and then [`REFILL_DELAY`] more, or until `period` passed.
    pub async fn wait_for_take(&self, period: Duration) {
        if tokio::time::timeout(period, self.taken.notified())
            .await
            .is_ok()
        {
            tokio::time::sleep(REFILL_DELAY).await;
        }
    }

    /// Empties the pool and stops the fork servers (at shutdown): the caller stops the
    /// workers.
    pub fn drain(&self) -> Vec<Pooled> {
        self.forks.stop();
        self.idle().drain(..).collect()
    }
}

#[cfg(test)]
mod tests {
    use sandbox_protocol::Flavor;

    use super::*;

    #[test]
    fn a_worker_shape_ignores_what_travels_with_each_request() {
        let small = SessionLimits::from(Flavor::Small);
        let mut other = small.clone();
        other.fuel *= 2;
        other.timeout += Duration::from_secs(5);
        assert_eq!(worker_shape(&small), worker_shape(&other));
        other.memory_bytes /= 2;
        assert_ne!(worker_shape(&small), worker_shape(&other));
        assert_ne!(
            worker_shape(&small),
            worker_shape(&SessionLimits::from(Flavor::Large))
        );
    }
}
