//! Nothing lost to a worker's death: after every execution that returned, the worker sends the
//! interpreter's state as a layer (the pages it changed, or all of them), and the session keeps
//! the layers in a log in its own directory (`state/log`, never mounted) before the call is
//! answered. A worker that starts for a session with a log is given it first, so the session
//! goes on from the state after its last call that returned, whatever ended the worker before
//! (a kill while idle, a crash during a call, the reaper, an idle suspension).
//!
//! A full layer replaces the log (written beside it, then renamed over it); another is appended.
//! The worker sends a full layer once the ones since the last outweigh it, so a log stays
//! within about twice the state.

use std::io::Write;
use std::path::Path;

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::OpenOptions;
use sandbox_protocol::confined::{ConfinedError, Follow};

use sandbox_protocol::StateAfterRestart;

use super::checkpoints::blocking;
use super::{Runner, Session, SessionError};
use crate::metrics::Crash;
use crate::worker::{MAX_SNAPSHOT, SpawnError, StateFailure, StateLayer};
use crate::workspace::SessionFiles;

/// The log, and where a full layer is written before it replaces the log.
const LOG: &str = "log";
const NEXT_LOG: &str = "log.next";

/// Adds `layers` (oldest first) to the session's log.
///
/// # Errors
/// When the log cannot be written: the session's state after this call is then not kept.
pub fn save(files: &SessionFiles, layers: &[StateLayer]) -> Result<(), ConfinedError> {
    let dir = files.state.dir();
    for layer in layers {
        if layer.full {
            let _ = dir.remove_file(NEXT_LOG);
            let mut next = files.state.create_new_file(Path::new(NEXT_LOG))?;
            next.write_all(&layer.bytes)?;
            dir.rename(NEXT_LOG, dir, LOG)?;
        } else {
            let mut options = OpenOptions::new();
            options.append(true).follow(FollowSymlinks::No);
            let mut log = dir.open_with(LOG, &options)?;
            log.write_all(&layer.bytes)?;
        }
    }
    Ok(())
}

/// Makes `state` (a log of layers: a checkpoint's, or a snapshot) the session's whole log.
///
/// # Errors
/// When it cannot be written.
pub fn replace(files: &SessionFiles, state: &[u8]) -> Result<(), ConfinedError> {
    let layer = StateLayer {
        bytes: state.to_vec(),
        full: true,
    };
    save(files, std::slice::from_ref(&layer))
}

/// The session's log, when it has one.
///
/// # Errors
/// When it exists but cannot be read.
pub fn read(files: &SessionFiles) -> Result<Option<Vec<u8>>, ConfinedError> {
    match files
        .state
        .read_regular(Path::new(LOG), Follow::No, MAX_SNAPSHOT as u64 * 2)
    {
        Ok(log) if log.is_empty() => Ok(None),
        Ok(log) => Ok(Some(log)),
        Err(e) if e.io_kind() == Some(std::io::ErrorKind::NotFound) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Forgets the session's state (`reset_workspace`, or a log no worker can take).
pub fn clear(files: &SessionFiles) {
    for name in [LOG, NEXT_LOG] {
        if let Err(e) = files.state.dir().remove_file(name)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(error = %e, "cannot remove a session's state log");
        }
    }
}

impl Session {
    /// Gives the session's new worker the session's state, when it has a log: the next call
    /// is told it was resumed. A log the worker refuses (another interpreter build) is dropped:
    /// the session then starts afresh, as the call is told.
    ///
    /// # Errors
    /// When the worker died taking it (it is forgotten).
    pub(super) async fn resume(&self, runner: &mut Runner) -> Result<(), SessionError> {
        let files = self.files();
        let log = match blocking(move || read(&files)).await {
            Ok(Some(log)) => log,
            Ok(None) => return Ok(()),
            Err(e) => {
                tracing::error!(session = %self.id, error = %e, "cannot read the session's state");
                return Ok(());
            }
        };
        let Some(worker) = runner.worker.as_mut() else {
            return Ok(());
        };
        let started = std::time::Instant::now();
        match worker.restore(&log).await {
            Ok(info) => {
                runner.resumed = true;
                tracing::info!(
                    session = %self.id,
                    bytes = log.len(),
                    memory_bytes = info.memory_bytes,
                    took_ms = started.elapsed().as_secs_f64() * 1000.0,
                    "session state resumed"
                );
                Ok(())
            }
            Err(StateFailure::Refused(why)) => {
                tracing::warn!(session = %self.id, %why, "the session's state cannot be resumed; starting afresh");
                self.forget_state().await;
                Ok(())
            }
            Err(StateFailure::Lost(why)) => {
                crate::metrics::global().worker_crashed(self.runtime(), Crash::Idle);
                self.lose_worker(
                    runner,
                    format!("the worker died while it took over the session's state ({why})"),
                );
                Err(SessionError::Spawn(SpawnError::Died(why)))
            }
        }
    }

    /// Keeps the layers of state the worker sent with the executions that just returned, before
    /// the call is answered.
    pub(super) async fn keep_states(&self, runner: &mut Runner) {
        let Some(worker) = runner.worker.as_mut() else {
            return;
        };
        let layers = worker.take_states();
        if layers.is_empty() {
            return;
        }
        let files = self.files();
        if let Err(e) = blocking(move || save(&files, &layers)).await {
            tracing::error!(session = %self.id, error = %e, "cannot keep the session's state");
        }
    }

    /// An execution whose interpreter had to be replaced inside the worker (a trap, an exit)
    /// left a fresh interpreter: the session's state before it is put back, and the report
    /// says the state was rolled back instead of lost.
    pub(super) async fn roll_back_lost(
        &self,
        runner: &mut Runner,
        outcome: &mut Result<sandbox_protocol::ExecutionReport, crate::worker::ExecFailure>,
    ) {
        let Ok(report) = outcome else { return };
        let Some(restart) = report.restart.as_mut() else {
            return;
        };
        if restart.state != StateAfterRestart::Lost {
            return;
        }
        runner.resumed = false;
        if self.resume(runner).await.is_err() || !std::mem::take(&mut runner.resumed) {
            return;
        }
        restart.state = StateAfterRestart::RolledBack;
        restart.reason = format!(
            "{}; the session's state before this execution was put back: variables, functions and imports are as the last call that returned left them",
            restart.reason
        );
    }

    /// Forgets the session's state: a reset.
    pub(super) async fn forget_state(&self) {
        let files = self.files();
        let _ = tokio::task::spawn_blocking(move || clear(&files)).await;
    }

    /// Makes `state` the session's state log: after a restore or a fork, the worker's
    /// interpreter is that state.
    pub(super) async fn replace_state(&self, state: Vec<u8>) {
        let files = self.files();
        if let Err(e) = blocking(move || replace(&files, &state)).await {
            tracing::error!(session = %self.id, error = %e, "cannot keep the session's restored state");
        }
    }
}
