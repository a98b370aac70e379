//! The server's background loops, started under one [`TaskTracker`] and stopped by one
//! [`CancellationToken`] (mini-redis's `Shutdown` is the model): the interpreters' memory
//! images, the idle reaper, the memory sampler admission reads, the pool filler, the first
//! worker start readiness waits for, and the service manager's readiness notice.
//!
//! [`Background::stop`] is one cancel and one wait: every loop has ended (each at its next await
//! point; a worker being started for the pool is dropped, and its spawn guard cleans up) before
//! the session table shuts down, so no worker is pooled after the pool was emptied.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::SupervisorConfig;
use crate::health::Health;
use crate::runtimes::Runtimes;
use crate::session::SessionTable;

/// How often idle sessions are looked for to suspend (within this of their idle time).
const SUSPEND_CHECK: Duration = Duration::from_secs(2);

/// The running loops.
#[derive(Debug)]
pub struct Background {
    tracker: TaskTracker,
    stop: CancellationToken,
}

/// What the loops work on.
#[derive(Debug, Clone)]
pub struct Shared {
    pub config: Arc<SupervisorConfig>,
    pub sessions: Arc<SessionTable>,
    pub runtimes: Arc<Runtimes>,
    pub health: Arc<Health>,
}

impl Background {
    /// Starts every loop; `probe` also starts one worker for readiness (a server without a pool
    /// that must report ready before any client asks).
    pub fn start(shared: &Shared, probe: bool) -> Self {
        let background = Self {
            tracker: TaskTracker::new(),
            stop: CancellationToken::new(),
        };
        // Compile the interpreters (or check the cache) while the client connects. Failures
        // are logged as they happen and tried again with back-off; the memory images follow.
        let Shared {
            config,
            sessions,
            runtimes,
            health,
        } = shared.clone();
        background.spawn({
            let (config, runtimes) = (config.clone(), runtimes.clone());
            async move { runtimes.complete_images(&config).await }
        });
        background.spawn({
            let sessions = sessions.clone();
            let period =
                (config.session_ttl / 4).clamp(Duration::from_secs(1), Duration::from_secs(60));
            async move {
                loop {
                    tokio::time::sleep(period).await;
                    sessions.reap_idle().await;
                }
            }
        });
        // Idle sessions give their workers back within a few seconds of their idle time.
        background.spawn({
            let sessions = sessions.clone();
            async move {
                loop {
                    tokio::time::sleep(SUSPEND_CHECK).await;
                    sessions.suspend_idle();
                }
            }
        });
        // Admission counts what workers use: measured here, never on a call's path.
        background.spawn({
            let sessions = sessions.clone();
            async move {
                loop {
                    sessions.sample_memory().await;
                    tokio::time::sleep(crate::memory::SAMPLE_PERIOD).await;
                }
            }
        });
        background.spawn({
            let (sessions, runtimes) = (sessions.clone(), runtimes.clone());
            async move { sessions.keep_pool_filled(&runtimes).await }
        });
        background.spawn({
            let (sessions, runtimes) = (sessions.clone(), runtimes.clone());
            async move { sessions.keep_fork_servers(&runtimes).await }
        });
        if probe {
            background.spawn({
                let (sessions, runtimes) = (sessions.clone(), runtimes.clone());
                async move { sessions.probe_worker_start(&runtimes).await }
            });
        }
        // The service manager (Type=notify) hears READY=1 once the server is ready.
        background.spawn(async move {
            crate::notify::status("compiling the interpreters and starting a worker");
            let readiness = health.until_ready().await;
            crate::notify::ready(&format!(
                "serving; sessions {} of at most {}, {} pooled workers",
                readiness.sessions, readiness.max_sessions, readiness.pooled_workers
            ));
        });
        background
    }

    /// Runs `work` until it ends or the loops are stopped.
    fn spawn(&self, work: impl Future<Output = ()> + Send + 'static) {
        let stop = self.stop.clone();
        self.tracker.spawn(async move {
            tokio::select! {
                () = stop.cancelled() => {}
                () = work => {}
            }
        });
    }

    /// A token cancelled when the loops stop (the HTTP transport stops with them).
    pub fn stop_token(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Stops every loop and waits until each has ended.
    pub async fn stop(self) {
        self.stop.cancel();
        self.tracker.close();
        self.tracker.wait().await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn one_stop_ends_every_loop_and_waits_for_them() {
        let background = Background {
            tracker: TaskTracker::new(),
            stop: CancellationToken::new(),
        };
        let ended = Arc::new(AtomicUsize::new(0));
        for _ in 0..3 {
            let ended = ended.clone();
            background.spawn(async move {
                // Ends only by being dropped: the guard counts the drop.
                struct Count(Arc<AtomicUsize>);
                impl Drop for Count {
                    fn drop(&mut self) {
                        self.0.fetch_add(1, Ordering::SeqCst);
                    }
                }
                let _count = Count(ended);
                std::future::pending::<()>().await;
            });
        }
        let token = background.stop_token();
        tokio::task::yield_now().await;
        assert_eq!(ended.load(Ordering::SeqCst), 0);
        background.stop().await;
        assert!(token.is_cancelled());
        assert_eq!(
            ended.load(Ordering::SeqCst),
            3,
            "every loop ended before stop returned"
        );
    }
}
