//! Admission: a session is admitted when the session count allows one more and its runtime's
//! expected use fits next to what sessions and pooled workers really use (see
//! [`crate::memory`]): within the memory budget, and leaving the host's reserve free. The same
//! check runs before the pool starts a worker. When memory is short, idle sessions that keep
//! their state on disk give up their workers first ([`SessionTable::evict_idle`]). The workers'
//! use is measured by the background sampler ([`SessionTable::sample_memory`]), never on a
//! call's path.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use sandbox_protocol::Runtime;

use super::{SessionKey, SessionTable};
use crate::memory::{self, Footprint};
use crate::metrics::Refusal;
use crate::session::Session;

/// Counts a refusal by the limit it hit.
pub(super) fn count_refusal(usage: &Usage) {
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
    pub(super) fn shortage(&self, count_new: bool) -> Option<Shortage> {
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
    pub(super) fn admit(mut self, count_new: bool) -> Result<Self, Self> {
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
    /// Current use against the admission limits.
    pub fn usage(&self) -> Usage {
        self.usage_for(0)
    }

    /// Current use, with `requested` bytes asked for.
    pub(super) fn usage_for(&self, requested: u64) -> Usage {
        let sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        self.usage_of(sessions.values(), requested)
    }

    /// What `session` counts for now: its worker's measured use, its runtime's expected use
    /// before its first worker, and nothing while it has lost or given up its worker (its next
    /// call starts one again without asking admission, like any restart).
    pub(super) fn demand_of(&self, session: &Session, measured: &HashMap<u32, Footprint>) -> u64 {
        let pid = session.worker_pid.load(Ordering::SeqCst);
        if pid == 0 && session.started.load(Ordering::SeqCst) {
            return 0;
        }
        memory::demand(session.runtime(), measured.get(&pid).copied())
    }

    /// Suspends idle sessions, longest idle first, until `shortfall` bytes are freed (as
    /// admission counts them, and as the host will see them): their state is on disk and
    /// their next call resumes it. Returns the bytes freed.
    pub(super) fn evict_idle(
        &self,
        sessions: &HashMap<SessionKey, Arc<Session>>,
        shortfall: u64,
    ) -> u64 {
        // A worker started ahead that has run nothing counts for its runtime's expected use
        // with or without its process: stopping it would free nothing admission counts.
        let mut candidates: Vec<&Arc<Session>> = sessions
            .values()
            .filter(|s| s.has_worker() && s.started.load(Ordering::SeqCst))
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
            if session.suspend("to free memory for new sessions") {
                freed += demand;
            }
        }
        freed
    }

    /// Admits a new session of `runtime` next to `sessions`, suspending idle sessions first
    /// when memory is what is short.
    pub(super) fn admit_new(
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
    pub(super) fn usage_of<'a>(
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
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use sandbox_protocol::{Flavor, Language};

    use super::*;
    use crate::config::SessionLimits;
    use crate::memory::ProcFs;
    use crate::session::table::CreateError;
    use crate::session::{Owner, SessionSpec};

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
