//! The table's upkeep, run by the server's background loops: idle sessions reaped, the pool of
//! pre-started workers kept full (failures retried less and less often), and the one worker
//! start readiness waits for when there is no pool.

use std::sync::Arc;
use std::time::Duration;

use sandbox_protocol::Runtime;

use super::{REMEMBERED_EXPIRED, SessionKey, SessionTable};
use crate::memory;
use crate::pool::{Pooled, worker_shape};
use crate::runtimes::{Manifest, Runtimes};
use crate::session::{Session, SessionSpec};
use crate::worker::{SpawnRequest, Worker};

/// How long the pool waits after a worker failed to start before trying again; each failure
/// in a row doubles the wait, up to [`POOL_RETRY_MAX`] (a broken host is not retried, and
/// logged, every few seconds forever).
const POOL_RETRY: Duration = Duration::from_secs(5);

const POOL_RETRY_MAX: Duration = Duration::from_secs(300);

/// The wait after one more failure in a row, when the last wait was `previous`.
fn next_retry(previous: Option<Duration>) -> Duration {
    previous.map_or(POOL_RETRY, |wait| (wait * 2).min(POOL_RETRY_MAX))
}

impl SessionTable {
    /// Suspends every session idle past the configured time (`suspend_idle_secs`): its worker
    /// stops, its state stays on disk, and its next call resumes it. Busy sessions are never
    /// idle.
    pub fn suspend_idle(&self) {
        let Some(after) = self.config.suspend_idle else {
            return;
        };
        let idle: Vec<Arc<Session>> = self
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .filter(|s| s.has_worker() && s.idle_for() >= after)
            .cloned()
            .collect();
        for session in idle {
            session.suspend("after the session was idle");
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
            // Remembered first: a call that arrives once the session is out of the table is
            // told it expired, never given a new session of that id.
            {
                let mut expired = self.expired.lock().unwrap_or_else(|e| e.into_inner());
                expired.push_back((owner.clone(), id.clone()));
                if expired.len() > REMEMBERED_EXPIRED {
                    expired.pop_front();
                }
            }
            if let Some(session) = self.destroy(&owner, &id).await {
                crate::metrics::global().session_reaped(session.runtime());
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
                if manifest.module(runtime).is_none() {
                    continue;
                }
                if let Err(usage) = self.usage_for(runtime.expected_use_bytes()).admit(false) {
                    tracing::debug!(%runtime, %usage, "no room to pool a worker");
                    break;
                }
                match self.start_pooled(runtime, &manifest).await {
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

    /// Keeps a fork server up for each runtime of the manifest (the newest one: the memory
    /// images may come after the first), for as long as the server runs.
    pub async fn keep_fork_servers(&self, runtimes: &Runtimes) {
        let config = &self.config;
        self.pool
            .forks
            .keep_up_forever(config, || async {
                let manifest = runtimes.keep_trying(config).await;
                Runtime::ALL
                    .into_iter()
                    .filter_map(|runtime| {
                        let module = manifest.module(runtime)?.clone();
                        Some((runtime, module, manifest.extras(runtime)))
                    })
                    .collect()
            })
            .await;
    }

    /// Starts one worker and stops it again, to learn whether workers start on this host when
    /// no pool tells (readiness waits for a worker to have started).
    pub async fn probe_worker_start(&self, runtimes: &Runtimes) {
        // Readiness reports the interpreters' failure until a retry succeeds.
        let manifest = runtimes.keep_trying(&self.config).await;
        let Some(runtime) = Runtime::ALL
            .into_iter()
            .find(|runtime| manifest.module(*runtime).is_some())
        else {
            return;
        };
        match self.start_pooled(runtime, &manifest).await {
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
    async fn start_pooled(&self, runtime: Runtime, manifest: &Manifest) -> Result<Pooled, String> {
        let module = manifest
            .module(runtime)
            .ok_or_else(|| format!("no {runtime} interpreter in the manifest"))?;
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
        let extras = manifest.extras(runtime);
        let fork_server = self.pool.forks.get(runtime, module, &extras);
        let request = SpawnRequest::new(&files, module, 1, runtime, &limits).with_extras(&extras);
        match Worker::spawn(&self.config, request, fork_server.as_ref()).await {
            Ok((worker, ready)) => {
                tracing::debug!(pid = worker.pid(), %runtime, startup_ms = ready.startup_us as f64 / 1000.0, from_image = ready.from_image, "worker pooled");
                // Its first layer of state (every page it wrote) is taken while it waits.
                if let Err(e) = worker.send_state_now().await {
                    tracing::debug!(pid = worker.pid(), error = %e, "a pooled worker's state was not asked for");
                }
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
