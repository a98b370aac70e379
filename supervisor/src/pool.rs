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

use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::Mutex;
use std::time::Duration;

use sandbox_protocol::Runtime;

use crate::config::SessionLimits;
use crate::worker::Worker;
use crate::workspace::SessionFiles;

/// How many idle workers the pool keeps per runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolSizes(BTreeMap<Runtime, usize>);

impl PoolSizes {
    /// The most one runtime's pool may hold: a pool is a head start, not capacity.
    pub const MAX_PER_RUNTIME: usize = 32;

    /// No pool at all: every worker starts when its session needs it.
    pub fn none() -> Self {
        Self(BTreeMap::new())
    }

    /// How many idle workers of `runtime` are kept ready.
    pub fn of(&self, runtime: Runtime) -> usize {
        self.0.get(&runtime).copied().unwrap_or(0)
    }

    /// Every runtime with a pool, and its size.
    pub fn iter(&self) -> impl Iterator<Item = (Runtime, usize)> + '_ {
        self.0.iter().map(|(r, n)| (*r, *n)).filter(|(_, n)| *n > 0)
    }
}

impl Default for PoolSizes {
    /// Two of each runtime, so two sessions created at once both start at once (an idle
    /// Python worker started from the memory image uses about 8.5 MiB of its own).
    fn default() -> Self {
        Self(BTreeMap::from([
            (Runtime::Python, 2),
            (Runtime::JavaScript, 2),
        ]))
    }
}

impl FromStr for PoolSizes {
    type Err = String;

    /// `python=2,javascript=2`; a runtime left out gets no pool, and `0`
    /// or an empty string means no pool at all.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut sizes = BTreeMap::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if part == "0" {
                continue;
            }
            let (name, count) = part
                .split_once('=')
                .ok_or_else(|| format!("{part:?} is not RUNTIME=COUNT"))?;
            let runtime = Runtime::from_name(name.trim())
                .ok_or_else(|| format!("unknown runtime {name:?} (python, javascript)"))?;
            let count: usize = count
                .trim()
                .parse()
                .map_err(|_| format!("{count:?} is not a count"))?;
            if count > Self::MAX_PER_RUNTIME {
                return Err(format!(
                    "{count} pooled {runtime} workers is more than {}",
                    Self::MAX_PER_RUNTIME
                ));
            }
            if sizes.insert(runtime, count).is_some() {
                return Err(format!("{runtime} is given twice"));
            }
        }
        Ok(Self(sizes))
    }
}

impl std::fmt::Display for PoolSizes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.iter().map(|(r, n)| format!("{r}={n}")).collect();
        if parts.is_empty() {
            f.write_str("0")
        } else {
            f.write_str(&parts.join(","))
        }
    }
}

/// The part of a session's limits its worker is started with: the rest (fuel, timeout,
/// persistence) travels with each request, so any session of this shape can use the worker.
pub fn worker_shape(limits: &SessionLimits) -> SessionLimits {
    SessionLimits {
        fuel: 0,
        timeout: Duration::ZERO,
        auto_persist_globals: false,
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

/// The idle pre-started workers.
#[derive(Debug)]
pub struct WorkerPool {
    sizes: PoolSizes,
    idle: Mutex<Vec<Pooled>>,
    /// Woken when a worker is taken, so the refill starts at once.
    taken: tokio::sync::Notify,
}

impl WorkerPool {
    pub fn new(sizes: PoolSizes) -> Self {
        Self {
            sizes,
            idle: Mutex::default(),
            taken: tokio::sync::Notify::new(),
        }
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<Pooled>> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A live idle worker of `runtime` started with `shape`, if the pool has one. One found dead
    /// on the way is left for [`WorkerPool::prune_dead`], which removes its workspace too.
    pub fn take(&self, runtime: Runtime, shape: &SessionLimits) -> Option<Pooled> {
        let mut idle = self.idle();
        let found = idle.iter_mut().position(|pooled| {
            pooled.runtime == runtime && pooled.shape == *shape && pooled.worker.exited().is_none()
        })?;
        let taken = idle.swap_remove(found);
        drop(idle);
        self.taken.notify_one();
        Some(taken)
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

    /// Waits until a worker is taken, or `period` passed.
    pub async fn wait_for_take(&self, period: Duration) {
        let _ = tokio::time::timeout(period, self.taken.notified()).await;
    }

    /// Empties the pool (at shutdown): the caller stops the workers.
    pub fn drain(&self) -> Vec<Pooled> {
        self.idle().drain(..).collect()
    }
}

#[cfg(test)]
mod tests {
    use sandbox_protocol::Flavor;

    use super::*;

    #[test]
    fn pool_sizes_parse_strictly() {
        let sizes: PoolSizes = "python=3, javascript=1".parse().unwrap();
        assert_eq!(sizes.of(Runtime::Python), 3);
        assert_eq!(sizes.of(Runtime::JavaScript), 1);
        assert_eq!(sizes.to_string(), "python=3,javascript=1");
        let old: PoolSizes = "python-scientific=1,javascript=0".parse().unwrap();
        assert_eq!(old.to_string(), "python=1", "the old name of CPython 3.15");
        for none in ["", "0", " 0 "] {
            let sizes: PoolSizes = none.parse().unwrap();
            assert_eq!(sizes, PoolSizes::none(), "{none:?}");
            assert_eq!(sizes.to_string(), "0");
        }
        assert_eq!(PoolSizes::default().to_string(), "python=2,javascript=2");
        for bad in [
            "python",
            "ruby=1",
            "python=-1",
            "python=x",
            "python=1,python=2",
            "python=1,python-scientific=2",
            "javascript=33",
        ] {
            assert!(bad.parse::<PoolSizes>().is_err(), "{bad:?} must be refused");
        }
    }

    #[test]
    fn a_worker_shape_ignores_what_travels_with_each_request() {
        let small = SessionLimits::from(Flavor::Small);
        let mut other = small.clone();
        other.fuel *= 2;
        other.timeout += Duration::from_secs(5);
        other.auto_persist_globals = true;
        assert_eq!(worker_shape(&small), worker_shape(&other));
        other.memory_bytes /= 2;
        assert_ne!(worker_shape(&small), worker_shape(&other));
        assert_ne!(
            worker_shape(&small),
            worker_shape(&SessionLimits::from(Flavor::Large))
        );
    }
}
