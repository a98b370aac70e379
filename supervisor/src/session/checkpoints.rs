//! Sessions as values. A checkpoint is a session's interpreter, as a snapshot its worker takes
//! between executions, and a copy of its `/app`, kept in the session's own directory
//! (`checkpoints/<id>/state` and `checkpoints/<id>/app`) and paid for from its disk quota.
//! Restoring one puts both back; a fork starts a new session from the live state or from a
//! checkpoint. `/tmp` is scratch and is never captured.
//!
//! Checkpoints are found by id in the session's own list, never through a path a client named,
//! so another session's checkpoint id answers like a missing one. The snapshot bytes are the
//! guest's: only a worker reads them, and only into a fresh instance of the same interpreter
//! build, after checking every size (`worker/src/snapshot.rs`).

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use sandbox_protocol::DiskCharge;
use sandbox_protocol::confined::{ConfinedError, CopyLimits, Follow, Root, Usage};
use schemars::JsonSchema;
use serde::Serialize;

use super::resume::Newest;
use super::{Host, Runner, Session, SessionError};
use crate::config::SessionLimits;
use crate::metrics::Crash;
use crate::worker::{MAX_SNAPSHOT, StateFailure, Worker};
use crate::workspace::SessionFiles;

/// The most checkpoints one session keeps.
pub const MAX_CHECKPOINTS: usize = 32;

/// The longest label kept, in characters.
pub const MAX_LABEL_CHARS: usize = 200;

/// A checkpoint id: this prefix and as many lowercase hex digits.
const CHECKPOINT_PREFIX: &str = "cp-";
const CHECKPOINT_DIGITS: usize = 10;

/// Whether `id` is a checkpoint id as this server makes them (and so a safe directory name).
pub fn valid_checkpoint_id(id: &str) -> bool {
    id.strip_prefix(CHECKPOINT_PREFIX).is_some_and(|digits| {
        digits.len() == CHECKPOINT_DIGITS
            && digits
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// A checkpoint's snapshot file and its copy of `/app`, inside its directory.
const STATE_FILE: &str = "state";
const APP_COPY: &str = "app";

/// The deepest `/app` a checkpoint or fork copies.
const MAX_COPY_DEPTH: usize = 256;

/// One checkpoint, as `get_workspace_info` lists it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Checkpoint {
    pub checkpoint_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Disk it takes (snapshot and copy of /app), counted in the session's quota.
    pub bytes: u64,
    pub created_at: DateTime<Utc>,
    /// Files and directories it holds, counted in the quota too.
    #[serde(skip)]
    pub entries: u64,
    /// The length of its state: its state file may be longer (a link to the session's log,
    /// which went on growing; see `resume::link_into`).
    #[serde(skip)]
    pub state_bytes: u64,
}

/// A new checkpoint and what it cost.
#[derive(Debug)]
pub struct Taken {
    pub checkpoint: Checkpoint,
    pub took: Duration,
    /// The interpreter's memory, and the compressed snapshot of what differs from a fresh one.
    pub memory_bytes: u64,
    pub state_bytes: u64,
    /// Guest descriptors open at the time: a restore finds them closed.
    pub open_descriptors: Vec<u32>,
}

/// Why a checkpoint, restore or fork did not happen.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("this session has no checkpoint {0:?}")]
    NoCheckpoint(String),
    #[error(
        "this session already keeps {MAX_CHECKPOINTS} checkpoints, the most one may; restore or fork from one, or destroy the session"
    )]
    TooMany,
    #[error(
        "the checkpoint does not fit the session's disk quota ({} of {} bytes, {} of {} files used)",
        .0.used_bytes, .0.quota_bytes, .0.used_entries, .0.quota_entries
    )]
    Quota(DiskCharge),
    #[error(transparent)]
    Start(#[from] SessionError),
    #[error("the interpreter's state could not be {what}: {failure}")]
    Worker {
        what: &'static str,
        failure: StateFailure,
    },
    #[error("the session's files could not be copied: {0}")]
    Files(String),
}

impl Session {
    /// The session's checkpoints, oldest first.
    pub fn checkpoints(&self) -> Vec<Checkpoint> {
        self.checkpoint_list().clone()
    }

    fn checkpoint_list(&self) -> std::sync::MutexGuard<'_, Vec<Checkpoint>> {
        self.checkpoints.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes a checkpoint once the executions queued before it are done: the interpreter (a
    /// worker is started first if the session has none) and a copy of `/app`, labelled `label`.
    ///
    /// # Errors
    /// See [`StateError`]; nothing is kept of a checkpoint that failed.
    pub async fn checkpoint(
        self: &Arc<Self>,
        host: Host<'_>,
        label: Option<String>,
    ) -> Result<Taken, StateError> {
        let started = Instant::now();
        // Disk requests one at a time, taken before the queue as installs take them.
        let installs = self.installs.lock().await;
        let mut runner = self.runner.lock().await;
        self.touch();
        if self.checkpoint_list().len() >= MAX_CHECKPOINTS {
            return Err(StateError::TooMany);
        }
        let checkpoint_id = format!(
            "{CHECKPOINT_PREFIX}{}",
            &uuid::Uuid::new_v4().simple().to_string()[..CHECKPOINT_DIGITS]
        );
        // A worker holds the session's disk quota, checkpoints included (and one started now
        // resumes the state the log holds).
        self.live_worker(&mut runner, host).await?;
        // The log holds the state after the last execution: the checkpoint is a link to it,
        // whatever the state's size. Otherwise the worker takes a snapshot.
        let (files, limits, log, id) = (
            self.files(),
            self.limits(),
            self.state_log.clone(),
            checkpoint_id.clone(),
        );
        let linked =
            blocking(move || write_checkpoint(&files, &id, StateSource::Log(&log), &limits))
                .await?;
        let written = match linked {
            Some(written) => written,
            None => {
                let (state, info) = self.snapshot(&mut runner, host).await?;
                let (files, limits, id) = (self.files(), self.limits(), checkpoint_id.clone());
                let newest = Newest {
                    memory_bytes: info.memory_bytes,
                    descriptors: info.open_descriptors,
                };
                blocking(move || {
                    write_checkpoint(&files, &id, StateSource::Bytes(&state, newest), &limits)
                })
                .await?
                .expect("a snapshot is always written")
            }
        };
        let checkpoint = Checkpoint {
            checkpoint_id,
            label,
            bytes: written.usage.bytes,
            entries: written.usage.entries,
            created_at: Utc::now(),
            state_bytes: written.state_bytes,
        };
        let mut all = self.checkpoints();
        all.push(checkpoint.clone());
        if let Err(e) = self.hold_checkpoints(&mut runner, &all, &installs).await {
            let (files, id) = (self.files(), checkpoint.checkpoint_id.clone());
            blocking(move || {
                remove_checkpoint(&files, &id);
                Ok(())
            })
            .await?;
            return Err(e);
        }
        self.checkpoint_list().push(checkpoint.clone());
        // Before the answer: a checkpoint the client was told of outlives a restart.
        self.keep_record_async().await;
        Ok(Taken {
            took: started.elapsed(),
            memory_bytes: written.newest.memory_bytes,
            state_bytes: checkpoint.state_bytes,
            open_descriptors: written.newest.descriptors,
            checkpoint,
        })
    }

    /// Puts the session back as checkpoint `checkpoint_id` left it, once the executions queued
    /// before it are done: its interpreter, then its `/app`. The checkpoint stays.
    ///
    /// # Errors
    /// See [`StateError`]. A refused snapshot changes nothing; a failure while `/app` is being
    /// put back leaves the interpreter restored and says what of the files failed.
    pub async fn restore(
        self: &Arc<Self>,
        host: Host<'_>,
        checkpoint_id: &str,
    ) -> Result<Duration, StateError> {
        let started = Instant::now();
        let installs = self.installs.lock().await;
        let mut runner = self.runner.lock().await;
        self.touch();
        let (state, saved_app) = self.saved_state(checkpoint_id).await?;
        self.restore_interpreter(&mut runner, host, &state, Some(checkpoint_id))
            .await?;
        let (files, limits) = (self.files(), self.limits());
        blocking(move || {
            crate::workspace::empty(&files.app)?;
            saved_app.copy_contents_into(&files.app, copy_limits(&limits))
        })
        .await?;
        // The files changed under the worker's running total: have them counted afresh.
        self.hold_checkpoints(&mut runner, &self.checkpoints(), &installs)
            .await?;
        Ok(started.elapsed())
    }

    /// Makes `target` (a new session of the same owner, runtime and limits) a copy of this
    /// one: of its live state (as its last finished execution left it) or of checkpoint
    /// `checkpoint_id`; its `/app` first, then its interpreter.
    ///
    /// # Errors
    /// See [`StateError`]; the caller destroys `target`.
    pub async fn fork_into(
        self: &Arc<Self>,
        host: Host<'_>,
        target: &Arc<Session>,
        checkpoint_id: Option<&str>,
    ) -> Result<(), StateError> {
        let mut runner = self.runner.lock().await;
        self.touch();
        let (state, app) = match checkpoint_id {
            Some(id) => self.saved_state(id).await?,
            None => {
                let (files, log) = (self.files(), self.state_log.clone());
                let state = match blocking(move || super::resume::read_live(&files, &log)).await? {
                    Some(state) => state,
                    None => self.snapshot(&mut runner, host).await?.0,
                };
                let app = self.files().app.try_clone().map_err(ConfinedError::from);
                (state, app.map_err(|e| StateError::Files(e.to_string()))?)
            }
        };
        // Copied while this session's queue is held: no execution changes /app meanwhile.
        let (to, limits) = (target.files(), target.limits());
        blocking(move || app.copy_contents_into(&to.app, copy_limits(&limits))).await?;
        drop(runner);
        let mut runner = target.runner.lock().await;
        target
            .restore_interpreter(&mut runner, host, &state, None)
            .await
    }

    /// A snapshot of the interpreter, from a worker started first if there is none. A worker
    /// lost meanwhile is the session's loss, told to its next call.
    async fn snapshot(
        self: &Arc<Self>,
        runner: &mut Runner,
        host: Host<'_>,
    ) -> Result<(Vec<u8>, sandbox_protocol::SnapshotInfo), StateError> {
        let worker = self.live_worker(runner, host).await?;
        let taken = worker.snapshot().await;
        taken.map_err(|failure| self.state_failed(runner, failure, "saved"))
    }

    /// Replaces the interpreter with `state` (checkpoint `checkpoint_id`'s, when it is one of
    /// this session's), on a worker started first if there is none, and makes it the session's
    /// kept state. The session then owes its next call no restart notice.
    async fn restore_interpreter(
        self: &Arc<Self>,
        runner: &mut Runner,
        host: Host<'_>,
        state: &[u8],
        checkpoint_id: Option<&str>,
    ) -> Result<(), StateError> {
        let worker = self.live_worker(runner, host).await?;
        let restored = worker.restore(state).await;
        restored.map_err(|failure| self.state_failed(runner, failure, "restored"))?;
        runner.lost = None;
        runner.resumed = false;
        runner.missing_last_call = false;
        // The checkpoint's own file becomes the log when it holds just that state: nothing
        // is written.
        if let (Some(id), Some(newest)) = (checkpoint_id, Newest::of(state)) {
            let (files, log, id) = (self.files(), self.state_log.clone(), id.to_owned());
            let len = state.len() as u64;
            let linked = blocking(move || {
                let dir = files.checkpoints.open_dir_nofollow(Path::new(&id))?;
                let adopted =
                    super::resume::adopt_as_log(&files, &log, &dir, STATE_FILE, (len, newest))?;
                Ok(adopted)
            })
            .await;
            match linked {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(session = %self.id, error = %e, "cannot link a checkpoint as the log; writing it")
                }
            }
        }
        self.replace_state(state.to_vec()).await;
        Ok(())
    }

    /// The session's worker, started first when it has none or it died while idle.
    async fn live_worker<'r>(
        self: &Arc<Self>,
        runner: &'r mut Runner,
        host: Host<'_>,
    ) -> Result<&'r mut Worker, SessionError> {
        self.notice_idle_death(runner);
        if runner.worker.is_none() {
            // Why the previous worker is gone is still owed to the next execution.
            runner.lost = self
                .start_worker(runner, host, super::Start::ForUse)
                .await?;
        }
        Ok(runner.worker.as_mut().expect("started above"))
    }

    /// A snapshot or restore that failed: a lost worker is forgotten (the next call starts
    /// another and says why).
    fn state_failed(
        &self,
        runner: &mut Runner,
        failure: StateFailure,
        what: &'static str,
    ) -> StateError {
        if let StateFailure::Lost(why) = &failure {
            crate::metrics::global().worker_crashed(self.runtime(), Crash::Execution);
            self.lose_worker(
                runner,
                format!(
                    "the previous worker died while the interpreter's state was {what} ({why})"
                ),
            );
        }
        StateError::Worker { what, failure }
    }

    /// The snapshot of checkpoint `checkpoint_id` and a handle on its copy of `/app`.
    async fn saved_state(&self, checkpoint_id: &str) -> Result<(Vec<u8>, Root), StateError> {
        let state_bytes = self
            .checkpoint_list()
            .iter()
            .find(|c| c.checkpoint_id == checkpoint_id)
            .map(|c| c.state_bytes)
            .ok_or_else(|| StateError::NoCheckpoint(checkpoint_id.to_owned()))?;
        let (files, id) = (self.files(), checkpoint_id.to_owned());
        blocking(move || {
            let dir = files.checkpoints.open_dir_nofollow(Path::new(&id))?;
            let state = read_state(&dir, state_bytes)?;
            Ok((state, dir.open_dir_nofollow(Path::new(APP_COPY))?))
        })
        .await
    }

    /// Has a new worker count the session's checkpoints against its disk quota, as its
    /// predecessor did (after a restart of the worker, or of the server).
    ///
    /// # Errors
    /// When the worker died meanwhile (it is forgotten).
    pub(super) async fn hold_kept_checkpoints(
        &self,
        runner: &mut Runner,
    ) -> Result<(), SessionError> {
        let checkpoints = self.checkpoints();
        if checkpoints.is_empty() {
            return Ok(());
        }
        // The queue is held here, so waiting for an install (which may wait for the queue)
        // could deadlock: while one runs, this worker holds them at the next checkpoint or
        // restore instead.
        let Ok(installs) = self.installs.try_lock() else {
            tracing::debug!(session = %self.id, "an install runs: the checkpoints are held later");
            return Ok(());
        };
        match self.hold_checkpoints(runner, &checkpoints, &installs).await {
            Ok(()) => Ok(()),
            // Its files and checkpoints were within the quota when written; a quota that
            // cannot hold them now refuses the guest's next write, which says so.
            Err(StateError::Quota(charge)) => {
                tracing::warn!(session = %self.id, used_bytes = charge.used_bytes, quota_bytes = charge.quota_bytes, "the session's checkpoints and files exceed its disk quota");
                Ok(())
            }
            Err(e) => Err(SessionError::Spawn(crate::worker::SpawnError::Died(
                e.to_string(),
            ))),
        }
    }

    /// Has the worker count `checkpoints` against the session's disk quota (and its files
    /// afresh), one disk request at a time with installs: the caller holds their lock, taken
    /// before the session's queue (the order installs take them in).
    async fn hold_checkpoints(
        &self,
        runner: &mut Runner,
        checkpoints: &[Checkpoint],
        _one_at_a_time: &tokio::sync::MutexGuard<'_, ()>,
    ) -> Result<(), StateError> {
        let bytes = checkpoints.iter().map(|c| c.bytes).sum();
        let entries = checkpoints.iter().map(|c| c.entries).sum();
        let Some(worker) = runner.worker.as_mut() else {
            return Err(StateError::Worker {
                what: "counted",
                failure: StateFailure::Lost("the session has no worker".into()),
            });
        };
        match worker.hold_disk(bytes, entries).await {
            Ok(charge) if charge.granted => Ok(()),
            Ok(charge) => Err(StateError::Quota(charge)),
            Err(why) => Err(self.state_failed(runner, StateFailure::Lost(why), "counted")),
        }
    }
}

/// What a copy of a session's `/app` may take: what its quota allows.
fn copy_limits(limits: &SessionLimits) -> CopyLimits {
    CopyLimits {
        max_bytes: limits.disk_quota_bytes,
        max_files: limits.disk_quota_files,
        max_depth: MAX_COPY_DEPTH,
    }
}

/// Where a new checkpoint's state comes from.
enum StateSource<'a> {
    /// A snapshot the worker took, and what it says of the interpreter.
    Bytes(&'a [u8], Newest),
    /// The session's log, when it holds the state after the last execution (a link to it).
    Log(&'a super::resume::StateLog),
}

/// A checkpoint as written.
struct Written {
    /// The disk it takes, its directories counted.
    usage: Usage,
    state_bytes: u64,
    newest: Newest,
}

/// Writes checkpoint `id` of `files`: its state and a copy of `/app`. `None` (nothing written)
/// when the state was to come from a log that cannot give it; on failure nothing of it is left.
fn write_checkpoint(
    files: &SessionFiles,
    id: &str,
    source: StateSource<'_>,
    limits: &SessionLimits,
) -> Result<Option<Written>, ConfinedError> {
    let written = (|| {
        let dir = files.checkpoints.create_private_dir(id)?;
        let (state_bytes, newest) = match source {
            StateSource::Bytes(state, newest) => {
                let mut state_file = dir.create_new_file(Path::new(STATE_FILE))?;
                state_file.write_all(state)?;
                (state.len() as u64, newest)
            }
            StateSource::Log(log) => {
                match super::resume::link_into(files, log, &dir, STATE_FILE)? {
                    Some(linked) => (linked.bytes, linked.newest),
                    None => return Ok(None),
                }
            }
        };
        let app = dir.create_private_dir(APP_COPY)?;
        let copied = files.app.copy_contents_into(&app, copy_limits(limits))?;
        Ok(Some(Written {
            usage: Usage {
                bytes: copied.bytes + state_bytes,
                // The checkpoint's directory, its state file and its app directory.
                entries: copied.entries + 3,
                complete: true,
            },
            state_bytes,
            newest,
        }))
    })();
    if !matches!(written, Ok(Some(_))) {
        remove_checkpoint(files, id);
    }
    written
}

/// The first `state_bytes` of the state file in checkpoint directory `dir`: all of the
/// checkpoint's state (a file linked to the session's log may have grown past it).
///
/// # Errors
/// When it cannot be read, or is shorter.
fn read_state(dir: &Root, state_bytes: u64) -> Result<Vec<u8>, ConfinedError> {
    use std::io::Read;
    if state_bytes > MAX_SNAPSHOT as u64 * 2 {
        return Err(std::io::Error::other("a checkpoint's state past any memory").into());
    }
    let (file, _) = dir.open_regular(Path::new(STATE_FILE), Follow::No)?;
    let mut state = Vec::with_capacity(state_bytes as usize);
    file.take(state_bytes).read_to_end(&mut state)?;
    if state.len() as u64 != state_bytes {
        return Err(std::io::Error::other("a checkpoint's state is shorter than it was").into());
    }
    Ok(state)
}

/// Deletes checkpoint `id`'s directory; a failure is logged (the session's directory goes
/// with the session anyway).
fn remove_checkpoint(files: &SessionFiles, id: &str) {
    if let Err(e) = files.checkpoints.remove_tree(Path::new(id)) {
        tracing::warn!(checkpoint = id, error = %e, "cannot remove a checkpoint");
    }
}

/// Checks the checkpoints a previous server left in `files` (see `durable`): one whose state
/// file is shorter than its state is dropped; one whose file is the log's is linked to it (the
/// longest such length is returned, for the log to cut its file back to when it moves on);
/// another is cut back to its state (the log may have grown it before moving on).
pub(super) fn settle_kept(
    files: &SessionFiles,
    kept: Vec<Checkpoint>,
) -> (Vec<Checkpoint>, Option<u64>) {
    use super::resume::{identity, open_to_cut};
    let log = open_to_cut(&files.state, super::resume::LOG).and_then(|f| identity(&f).ok());
    let mut linked: Option<u64> = None;
    let mut whole = Vec::new();
    for checkpoint in kept {
        let id = &checkpoint.checkpoint_id;
        let file = files
            .checkpoints
            .open_dir_nofollow(Path::new(id))
            .ok()
            .and_then(|dir| open_to_cut(&dir, STATE_FILE));
        let Some((file, (dev, ino, len))) = file.and_then(|f| identity(&f).ok().map(|i| (f, i)))
        else {
            tracing::warn!(checkpoint = %id, "a kept checkpoint has no state; dropped");
            continue;
        };
        if len < checkpoint.state_bytes {
            tracing::warn!(checkpoint = %id, "a kept checkpoint's state is cut short; dropped");
            continue;
        }
        if log.is_some_and(|(log_dev, log_ino, _)| (log_dev, log_ino) == (dev, ino)) {
            linked = Some(linked.map_or(checkpoint.state_bytes, |l| l.max(checkpoint.state_bytes)));
        } else if len > checkpoint.state_bytes
            && let Err(e) = file.set_len(checkpoint.state_bytes)
        {
            tracing::warn!(checkpoint = %id, error = %e, "cannot cut a kept checkpoint back to its state");
        }
        whole.push(checkpoint);
    }
    (whole, linked)
}

/// Runs file work off the async threads (a join failure reads as a files error too).
pub(super) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ConfinedError> + Send + 'static,
) -> Result<T, StateError> {
    match tokio::task::spawn_blocking(work).await {
        Ok(done) => done.map_err(|e| StateError::Files(e.to_string())),
        Err(e) => Err(StateError::Files(e.to_string())),
    }
}
