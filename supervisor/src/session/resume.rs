//! Nothing lost to a worker's death: after every execution that returned, the worker sends the
//! interpreter's state as a layer (the pages it changed, or all of them), and the session keeps
//! the layers in a log in its own directory (`state/log`, never mounted) before the call is
//! answered. A worker that starts for a session with a log is given it first, so the session
//! goes on from the state after its last call that returned, whatever ended the worker before
//! (a kill while idle, a crash during a call, the reaper, an idle suspension).
//!
//! A full layer replaces the log (written beside it, then renamed over it); another is appended.
//! The worker sends a full layer only first: per-call layers are the pages the call changed,
//! stored uncompressed so that they cost the call almost nothing. Once the layers after the
//! first outweigh it (and a few megabytes), the supervisor compacts the log off the call path
//! ([`compact`]): one compressed layer holding each page as the newest layer has it, then the
//! layers appended meanwhile, renamed over the log. So a log stays within about twice the
//! state, and no call waits for it.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::OpenOptions;
use sandbox_protocol::confined::{ConfinedError, Follow};

use sandbox_protocol::StateAfterRestart;

use super::checkpoints::blocking;
use super::{Runner, Session, SessionError};
use crate::metrics::Crash;
use crate::worker::{MAX_SNAPSHOT, SpawnError, StateFailure, StateLayer};
use crate::workspace::SessionFiles;

/// The log, where a full layer is written before it replaces the log, and where a compaction
/// writes the log that replaces it.
const LOG: &str = "log";
const NEXT_LOG: &str = "log.next";
const COMPACTED_LOG: &str = "log.compacted";

/// The least the layers after a log's first may weigh before the log is compacted.
const MIN_TAIL_BYTES: u64 = 8 << 20;

/// One compaction at a time in the whole server: it holds a session's state in memory.
static COMPACTING: AtomicBool = AtomicBool::new(false);

/// What orders the changes to one session's log: the call path's appends and replacements,
/// and a compaction's swap.
#[derive(Debug, Default)]
pub struct StateLog {
    /// Bumped whenever the log is replaced or removed: a compaction of an older log is then
    /// thrown away.
    generation: Mutex<u64>,
}

impl StateLog {
    fn lock(&self) -> std::sync::MutexGuard<'_, u64> {
        self.generation.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Adds `layers` (oldest first) to the session's log; whether the log is due a compaction.
///
/// # Errors
/// When the log cannot be written: the session's state after this call is then not kept.
pub fn save(
    files: &SessionFiles,
    log: &StateLog,
    layers: &[StateLayer],
) -> Result<bool, ConfinedError> {
    let dir = files.state.dir();
    let mut generation = log.lock();
    for layer in layers {
        if layer.full {
            let _ = dir.remove_file(NEXT_LOG);
            let mut next = files.state.create_new_file(Path::new(NEXT_LOG))?;
            next.write_all(&layer.bytes)?;
            dir.rename(NEXT_LOG, dir, LOG)?;
            *generation += 1;
        } else {
            let mut options = OpenOptions::new();
            options.append(true).follow(FollowSymlinks::No);
            let mut log = dir.open_with(LOG, &options)?;
            log.write_all(&layer.bytes)?;
        }
    }
    drop(generation);
    Ok(compaction_due(files).unwrap_or(false))
}

/// Whether the layers after the log's first (full) one outweigh it and [`MIN_TAIL_BYTES`].
fn compaction_due(files: &SessionFiles) -> std::io::Result<bool> {
    let mut options = OpenOptions::new();
    options.read(true).follow(FollowSymlinks::No);
    let mut file = files.state.dir().open_with(LOG, &options)?;
    let size = file.metadata()?.len();
    let mut first = [0u8; 8];
    file.read_exact(&mut first)?;
    let tail = size.saturating_sub(8 + u64::from_le_bytes(first));
    Ok(tail > u64::from_le_bytes(first).max(MIN_TAIL_BYTES))
}

/// Replaces the session's log by one compressed full layer of the same state, followed by
/// whatever was appended while it was made; nothing when the log was replaced meanwhile, or
/// another compaction runs. Off the call path: a compaction that fails leaves the log as it was.
/// The log is the worker's bytes: parsed with every check a worker makes, and expanded to at
/// most `cap` (the session's memory cap), one compaction at a time in the whole server.
pub fn compact(files: &SessionFiles, log: &StateLog, cap: u64) {
    if COMPACTING.swap(true, Ordering::AcqRel) {
        return;
    }
    let started = std::time::Instant::now();
    let result = compact_now(files, log, cap);
    COMPACTING.store(false, Ordering::Release);
    match result {
        Ok(Some((before, after))) => tracing::debug!(
            before,
            after,
            took_ms = started.elapsed().as_secs_f64() * 1000.0,
            "state log compacted"
        ),
        Ok(None) => {}
        Err(e) => tracing::warn!(error = %e, "cannot compact a session's state log"),
    }
}

/// [`compact`]'s work: the log's size before and after, or `None` when it was replaced meanwhile.
fn compact_now(
    files: &SessionFiles,
    log: &StateLog,
    cap: u64,
) -> std::io::Result<Option<(u64, u64)>> {
    let dir = files.state.dir();
    let mut options = OpenOptions::new();
    options.read(true).follow(FollowSymlinks::No);
    let (generation, mut file, len) = {
        let generation = log.lock();
        let file = dir.open_with(LOG, &options)?;
        let len = file.metadata()?.len();
        (*generation, file, len)
    };
    if len > MAX_SNAPSHOT as u64 * 2 {
        return Ok(None);
    }
    let mut bytes = Vec::with_capacity(len as usize);
    (&mut file).take(len).read_to_end(&mut bytes)?;
    let compacted = sandbox_protocol::snapshot::compact(&bytes, cap)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    drop(bytes);
    let _ = dir.remove_file(COMPACTED_LOG);
    let mut out = files
        .state
        .create_new_file(Path::new(COMPACTED_LOG))
        .map_err(std::io::Error::other)?;
    out.write_all(&compacted)?;
    let current = log.lock();
    if *current != generation {
        let _ = dir.remove_file(COMPACTED_LOG);
        return Ok(None);
    }
    // The layers appended since it was read, still in order after the compacted one: the same
    // file (only a replacement renames another over it, and that bumps the generation).
    file.seek(SeekFrom::Start(len))?;
    let appended = std::io::copy(&mut file, &mut out)?;
    dir.rename(COMPACTED_LOG, dir, LOG)?;
    drop(current);
    Ok(Some((len, compacted.len() as u64 + appended)))
}

/// Makes `state` (a log of layers: a checkpoint's, or a snapshot) the session's whole log.
///
/// # Errors
/// When it cannot be written.
pub fn replace(files: &SessionFiles, log: &StateLog, state: &[u8]) -> Result<(), ConfinedError> {
    let layer = StateLayer {
        bytes: state.to_vec(),
        full: true,
    };
    save(files, log, std::slice::from_ref(&layer)).map(drop)
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

/// Whether the session has a state log (a worker started for it takes the state over).
pub fn has_state(files: &SessionFiles) -> bool {
    files
        .state
        .dir()
        .symlink_metadata(LOG)
        .is_ok_and(|m| m.is_file() && m.len() > 0)
}

/// When the session's state log was last written: the end of its last call that returned.
pub fn written_at(files: &SessionFiles) -> Option<chrono::DateTime<chrono::Utc>> {
    let modified = files
        .state
        .dir()
        .symlink_metadata(LOG)
        .ok()?
        .modified()
        .ok()?;
    Some(modified.into_std().into())
}

/// Forgets the session's state (`reset_workspace`, or a log no worker can take).
pub fn clear(files: &SessionFiles, log: &StateLog) {
    let mut generation = log.lock();
    *generation += 1;
    for name in [LOG, NEXT_LOG, COMPACTED_LOG] {
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
        let (files, log) = (self.files(), self.state_log.clone());
        match blocking(move || save(&files, &log, &layers)).await {
            Ok(false) => {}
            Ok(true) => {
                let (files, log) = (self.files(), self.state_log.clone());
                let cap = self.limits().memory_bytes;
                tokio::task::spawn_blocking(move || compact(&files, &log, cap));
            }
            Err(e) => {
                tracing::error!(session = %self.id, error = %e, "cannot keep the session's state");
            }
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
        let (files, log) = (self.files(), self.state_log.clone());
        let _ = tokio::task::spawn_blocking(move || clear(&files, &log)).await;
    }

    /// Makes `state` the session's state log: after a restore or a fork, the worker's
    /// interpreter is that state.
    pub(super) async fn replace_state(&self, state: Vec<u8>) {
        let (files, log) = (self.files(), self.state_log.clone());
        if let Err(e) = blocking(move || replace(&files, &log, &state)).await {
            tracing::error!(session = %self.id, error = %e, "cannot keep the session's restored state");
        }
    }
}
