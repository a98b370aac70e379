//! Nothing lost to a worker's death: after every execution that returned, the worker sends the
//! interpreter's state as a layer (the pages it changed, or all of them) before its report, and
//! the session keeps the layers in a log in its own directory (`state/log`, never mounted). A
//! worker that starts for a session with a log is given it first, so the session
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
//!
//! Only a durable session's call waits for its layer to be written ([`save`]): the layer must
//! outlive the server. Any other session outlives only a worker, and a worker's death cannot
//! take the layer from the server's memory: its call is answered first and the layer written
//! just behind it ([`save_behind`], in call order by ticket). Whatever reads or changes the
//! log takes its lock, which waits for the layers written behind (`StateLog::lock`), so a
//! resume, a checkpoint or a compaction always sees every call answered before it.

use std::collections::BTreeSet;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::OpenOptions;
use sandbox_protocol::confined::{ConfinedError, Follow, Root};

use sandbox_protocol::StateAfterRestart;

use super::checkpoints::blocking;
use super::{Runner, Session, SessionError};
use crate::metrics::Crash;
use crate::worker::{MAX_SNAPSHOT, SpawnError, StateFailure, StateLayer};
use crate::workspace::SessionFiles;

/// The log, where a full layer is written before it replaces the log, and where a compaction
/// writes the log that replaces it.
pub(super) const LOG: &str = "log";
const NEXT_LOG: &str = "log.next";
const COMPACTED_LOG: &str = "log.compacted";

/// The least the layers after a log's first may weigh before the log is compacted.
const MIN_TAIL_BYTES: u64 = 8 << 20;

/// The most layers appended after a log's first before it is compacted, whatever they weigh: a
/// call that changes a few bytes sends a layer of a few hundred, and a log must stay well within
/// what a worker parses ([`sandbox_protocol::snapshot::parse_layers`] takes 65,536 layers).
const MAX_TAIL_LAYERS: u64 = 4096;

/// One compaction at a time in the whole server: it holds a session's state in memory.
static COMPACTING: AtomicBool = AtomicBool::new(false);

/// What orders the changes to one session's log (the call path's appends and replacements, a
/// compaction's swap, a checkpoint's link), and what is known of it.
#[derive(Debug, Default)]
pub struct StateLog {
    inner: Mutex<LogState>,
    /// Signalled whenever a layer written behind its call is in the log (or given up).
    written: Condvar,
}

#[derive(Debug, Default)]
struct LogState {
    /// Bumped whenever the log is replaced or removed: a compaction of an older log is then
    /// thrown away.
    generation: u64,
    /// Layers appended since the log was last replaced (by a full layer or a compaction) in
    /// this server.
    tail_layers: u64,
    /// The log may not hold the state after the session's last execution (a layer could not
    /// be kept), until a full layer replaces it.
    stale: bool,
    /// What the log's newest layer says of the interpreter: its memory size and the guest
    /// descriptors it held open. Unknown (`None`) until a layer is kept in this server.
    newest: Option<Newest>,
    /// The longest checkpoint that is a link to the log's current file ([`link_into`]): once
    /// the log moves to another file, nothing appends to this one and it is cut back to that.
    linked: Option<u64>,
    /// Restores in flight that read the log's file in a worker ([`StateLog::lend`]), and the
    /// cuts [`retire`] put off meanwhile: a worker maps the file, and a read past a cut would
    /// end it.
    lent: usize,
    put_off: Vec<(std::fs::File, u64)>,
    /// Layers written behind their calls ([`save_behind`]): the tickets handed out, the last
    /// one done (every ticket up to it is in the log or given up), and tickets given up ahead
    /// of their turn (a writer cancelled at shutdown).
    tickets: u64,
    done: u64,
    given_up: BTreeSet<u64>,
}

impl LogState {
    /// Ticket `number`'s turn is over: the next ticket may write.
    fn finish(&mut self, number: u64) {
        self.done = number;
        while self.given_up.remove(&(self.done + 1)) {
            self.done += 1;
        }
    }
}

/// What a log's newest layer says of the interpreter.
#[derive(Debug, Clone)]
pub struct Newest {
    pub memory_bytes: u64,
    pub descriptors: Vec<u32>,
}

impl Newest {
    /// What the newest of `layers` (framed, oldest first) says; `None` when it cannot be read.
    pub fn of(layers: &[u8]) -> Option<Self> {
        let parsed = sandbox_protocol::snapshot::parse_layers(layers).ok()?;
        let meta = &parsed.last()?.meta;
        Some(Self {
            memory_bytes: meta.memory_bytes,
            descriptors: meta.descriptors.clone(),
        })
    }
}

impl StateLog {
    /// The log, once every layer written behind a call before now is in it.
    fn lock(&self) -> MutexGuard<'_, LogState> {
        let state = self.lock_now();
        self.written
            .wait_while(state, |s| s.done < s.tickets)
            .unwrap_or_else(|e| e.into_inner())
    }

    /// The log as it is, with layers perhaps still to be written behind their calls.
    fn lock_now(&self) -> MutexGuard<'_, LogState> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A place in the order of the layers written behind their calls: taken on the call path,
    /// so the layers go into the log in the order of the calls.
    pub fn ticket(self: &Arc<Self>) -> Ticket {
        let mut state = self.lock_now();
        state.tickets += 1;
        Ticket {
            log: self.clone(),
            number: state.tickets,
            done: false,
        }
    }

    /// Waits (off the async threads) until every layer written behind a call is in the log.
    pub async fn settled(self: &Arc<Self>) {
        let pending = {
            let state = self.lock_now();
            state.done < state.tickets
        };
        if pending {
            let log = self.clone();
            let _ = tokio::task::spawn_blocking(move || drop(log.lock())).await;
        }
    }

    /// Takes over a log a previous server left: the longest of its checkpoints that are links
    /// to the log's file.
    pub fn adopt_linked(&self, linked: Option<u64>) {
        self.lock().linked = linked;
    }

    /// Lends the log's file to a worker that restores from it: no file of the log is cut back
    /// until the returned value drops (once the worker answered, or is gone).
    pub fn lend(self: &std::sync::Arc<Self>) -> Lent {
        self.lock().lent += 1;
        Lent(self.clone())
    }
}

/// One layer's place in the order of writes behind their calls ([`StateLog::ticket`]).
/// Dropped unwritten (its writer was cancelled at shutdown), it lets the next ones go and
/// marks the log stale: it no longer holds the whole state.
pub struct Ticket {
    log: Arc<StateLog>,
    number: u64,
    done: bool,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let mut state = self.log.lock_now();
        state.stale = true;
        if state.done + 1 == self.number {
            state.finish(self.number);
        } else {
            state.given_up.insert(self.number);
        }
        drop(state);
        self.log.written.notify_all();
    }
}

/// A log's file lent to a restoring worker ([`StateLog::lend`]).
pub struct Lent(std::sync::Arc<StateLog>);

impl Drop for Lent {
    fn drop(&mut self) {
        let put_off = {
            let mut state = self.0.lock();
            state.lent -= 1;
            if state.lent > 0 {
                return;
            }
            std::mem::take(&mut state.put_off)
        };
        for (file, len) in put_off {
            cut_back(&file, len);
        }
    }
}

/// Cuts `file` (a log's former file) back to `len`, the longest checkpoint linked to it.
fn cut_back(file: &std::fs::File, len: u64) {
    let cut = file.metadata().and_then(|m| {
        if m.len() > len {
            file.set_len(len)
        } else {
            Ok(())
        }
    });
    if let Err(e) = cut {
        tracing::warn!(error = %e, "cannot cut a checkpoint's state back to its length");
    }
}

/// A checkpoint made by linking the session's log ([`link_into`]).
#[derive(Debug)]
pub struct Linked {
    /// The length of the log when linked: the checkpoint's state is that much of the file.
    pub bytes: u64,
    pub newest: Newest,
}

/// Runs `swap` (which renames another file over the log, or removes it), then cuts the log's
/// former file back to the longest checkpoint linked to it: nothing appends to it any more.
fn retire<T>(
    root: &Root,
    state: &mut LogState,
    swap: impl FnOnce() -> std::io::Result<T>,
) -> std::io::Result<T> {
    let former = state.linked.and_then(|_| open_to_cut(root, LOG));
    let swapped = swap()?;
    if let (Some(former), Some(len)) = (former, state.linked.take()) {
        if state.lent > 0 {
            state.put_off.push((former, len));
        } else {
            cut_back(&former, len);
        }
    }
    Ok(swapped)
}

/// Links the session's log into checkpoint directory `dir` as `name`, when the log holds the
/// state after the session's last execution: the checkpoint is then that much of the file,
/// taken in no time whatever the state's size. `None` when it does not (no log, a stale one,
/// or one whose newest layer this server has not seen): the worker is asked for a snapshot.
///
/// # Errors
/// When the link cannot be made.
pub fn link_into(
    files: &SessionFiles,
    log: &StateLog,
    dir: &sandbox_protocol::confined::Root,
    name: &str,
) -> std::io::Result<Option<Linked>> {
    let mut state = log.lock();
    let Some(newest) = state.newest.clone().filter(|_| !state.stale) else {
        return Ok(None);
    };
    let meta = match files.state.dir().symlink_metadata(LOG) {
        Ok(meta) if meta.is_file() && meta.len() > 0 => meta,
        Ok(_) => return Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    files.state.dir().hard_link(LOG, dir.dir(), name)?;
    let bytes = meta.len();
    state.linked = Some(state.linked.map_or(bytes, |l| l.max(bytes)));
    Ok(Some(Linked { bytes, newest }))
}

/// The regular file `name` of `root` (never through a link), open to be cut back.
pub(super) fn open_to_cut(root: &Root, name: &str) -> Option<std::fs::File> {
    let opened = root.open_regular_writable(Path::new(name), Follow::No);
    opened.ok().map(|(file, _)| file.into_std())
}

/// What tells a state file from another, and how long it is: (device, inode, length).
///
/// # Errors
/// When its metadata cannot be read.
pub(super) fn identity(file: &std::fs::File) -> std::io::Result<(u64, u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    file.metadata().map(|m| (m.dev(), m.ino(), m.len()))
}

/// Makes file `name` of checkpoint directory `dir` the session's log (a restore of that
/// checkpoint, whose state of `len` bytes says `newest`), when the file holds exactly that
/// state: a link, nothing written; or when it is the log's own file, grown past this state
/// only by the log (no longer checkpoint is linked to it): cut back. False, changing nothing,
/// otherwise.
///
/// # Errors
/// When the link or the swap fails; the log is then as it was.
pub fn adopt_as_log(
    files: &SessionFiles,
    log: &StateLog,
    dir: &Root,
    name: &str,
    (len, newest): (u64, Newest),
) -> Result<bool, ConfinedError> {
    let log_dir = files.state.dir();
    let mut state = log.lock();
    let (file, _) = dir.open_regular_writable(Path::new(name), Follow::No)?;
    let file = file.into_std();
    let (dev, ino, size) = identity(&file)?;
    let current = open_to_cut(&files.state, LOG).and_then(|f| identity(&f).ok());
    if size != len {
        // The log's own file, grown past the checkpoint: cut back when no other checkpoint
        // linked to it is longer.
        let is_log = current.is_some_and(|(d, i, _)| (d, i) == (dev, ino));
        // Nor while a worker reads the file (see `StateLog::lend`).
        if !(is_log && state.linked == Some(len)) || state.lent > 0 {
            return Ok(false);
        }
        file.set_len(len)?;
        state.generation += 1;
        state.stale = false;
        state.newest = Some(newest);
        return Ok(true);
    }
    let _ = log_dir.remove_file(NEXT_LOG);
    dir.dir().hard_link(name, log_dir, NEXT_LOG)?;
    retire(&files.state, &mut state, || {
        log_dir.rename(NEXT_LOG, log_dir, LOG)
    })?;
    // A rename between two links of one file does nothing: the file was the log already.
    let _ = log_dir.remove_file(NEXT_LOG);
    state.generation += 1;
    state.stale = false;
    state.newest = Some(newest);
    // Appends to the log now grow the checkpoint's file: it is cut back when the log moves on.
    state.linked = Some(len);
    Ok(true)
}

/// The session's log when it holds the state after its last execution (as [`link_into`]).
///
/// # Errors
/// When it exists but cannot be read.
pub fn read_live(files: &SessionFiles, log: &StateLog) -> Result<Option<Vec<u8>>, ConfinedError> {
    let state = log.lock();
    if state.stale || state.newest.is_none() {
        return Ok(None);
    }
    read(files)
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
    let mut state = log.lock();
    save_locked(files, &mut state, layers)?;
    let tail_layers = state.tail_layers;
    drop(state);
    Ok(compaction_due(files, tail_layers).unwrap_or(false))
}

/// [`save`] for a call already answered: waits for `ticket`'s turn (the layers of the calls
/// before), then adds `layers`; whether the log is due a compaction.
///
/// # Errors
/// When the log cannot be written: the session's state after this call is then not kept.
pub fn save_behind(
    files: &SessionFiles,
    mut ticket: Ticket,
    layers: &[StateLayer],
) -> Result<bool, ConfinedError> {
    let log = ticket.log.clone();
    let state = log.lock_now();
    let mut state = log
        .written
        .wait_while(state, |s| s.done + 1 < ticket.number)
        .unwrap_or_else(|e| e.into_inner());
    let kept = save_locked(files, &mut state, layers);
    state.finish(ticket.number);
    ticket.done = true;
    let tail_layers = state.tail_layers;
    drop(state);
    log.written.notify_all();
    kept?;
    Ok(compaction_due(files, tail_layers).unwrap_or(false))
}

/// [`save`]'s work, with the log locked.
fn save_locked(
    files: &SessionFiles,
    state: &mut LogState,
    layers: &[StateLayer],
) -> Result<(), ConfinedError> {
    let dir = files.state.dir();
    let kept = (|| {
        for layer in layers {
            if layer.full {
                let _ = dir.remove_file(NEXT_LOG);
                let mut next = files.state.create_new_file(Path::new(NEXT_LOG))?;
                next.write_all(&layer.bytes)?;
                retire(&files.state, state, || dir.rename(NEXT_LOG, dir, LOG))?;
                state.generation += 1;
                state.stale = false;
                state.tail_layers = 0;
            } else {
                let mut options = OpenOptions::new();
                options.append(true).follow(FollowSymlinks::No);
                let mut log = dir.open_with(LOG, &options)?;
                log.write_all(&layer.bytes)?;
                state.tail_layers += 1;
            }
        }
        Ok::<_, ConfinedError>(())
    })();
    match kept {
        Ok(()) => {
            if let Some(newest) = layers.last() {
                state.newest = Newest::of(&newest.bytes);
            }
            Ok(())
        }
        Err(e) => {
            state.stale = true;
            Err(e)
        }
    }
}

/// Whether the layers after the log's first (full) one outweigh it and [`MIN_TAIL_BYTES`], or
/// are more than [`MAX_TAIL_LAYERS`] (`tail_layers` of them were appended in this server).
fn compaction_due(files: &SessionFiles, tail_layers: u64) -> std::io::Result<bool> {
    if tail_layers > MAX_TAIL_LAYERS {
        return Ok(true);
    }
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
        let state = log.lock();
        let file = match dir.open_with(LOG, &options) {
            // Cleared (a reset, a restore, a deletion) since the compaction was due.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            opened => opened?,
        };
        let len = file.metadata()?.len();
        (state.generation, file, len)
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
    let mut current = log.lock();
    if current.generation != generation {
        let _ = dir.remove_file(COMPACTED_LOG);
        return Ok(None);
    }
    // The layers appended since it was read, still in order after the compacted one: the same
    // file (only a replacement renames another over it, and that bumps the generation).
    file.seek(SeekFrom::Start(len))?;
    let appended = std::io::copy(&mut file, &mut out)?;
    retire(&files.state, &mut current, || {
        dir.rename(COMPACTED_LOG, dir, LOG)
    })?;
    current.tail_layers = 0;
    drop(current);
    Ok(Some((len, compacted.len() as u64 + appended)))
}

/// Makes `state` (a log of layers: a checkpoint's, or a snapshot) the session's whole log.
///
/// # Errors
/// When it cannot be written.
pub fn replace(files: &SessionFiles, log: &StateLog, state: &[u8]) -> Result<(), ConfinedError> {
    let layer = StateLayer {
        bytes: Arc::new(state.to_vec()),
        full: true,
    };
    save(files, log, std::slice::from_ref(&layer)).map(drop)
}

/// Forgets the session's log after a layer was lost: it no longer holds the session's state.
fn lose(files: &SessionFiles, log: &StateLog) {
    clear(files, log);
    log.lock().stale = true;
}

/// The session's log opened for reading, and its length, when it has one.
///
/// # Errors
/// When it exists but cannot be opened.
fn open_log(files: &SessionFiles) -> Result<Option<(std::fs::File, u64)>, ConfinedError> {
    match files.state.open_regular(Path::new(LOG), Follow::No) {
        Ok((_, meta)) if meta.len() == 0 => Ok(None),
        Ok((_, meta)) if meta.len() > MAX_SNAPSHOT as u64 * 2 => {
            Err(std::io::Error::other("the session's state log is larger than any state").into())
        }
        Ok((file, meta)) => Ok(Some((file.into_std(), meta.len()))),
        Err(e) if e.io_kind() == Some(std::io::ErrorKind::NotFound) => Ok(None),
        Err(e) => Err(e),
    }
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
    let dir = files.state.dir();
    let mut state = log.lock();
    state.generation += 1;
    state.stale = false;
    state.newest = None;
    for name in [LOG, NEXT_LOG, COMPACTED_LOG] {
        let removed = if name == LOG {
            retire(&files.state, &mut state, || dir.remove_file(name))
        } else {
            dir.remove_file(name)
        };
        if let Err(e) = removed
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
        // Before the file is opened: a compaction meanwhile must not cut it under the worker.
        let _lent = self.state_log.lend();
        let files = self.files();
        let opened = match blocking(move || open_log(&files)).await {
            Ok(Some(opened)) => opened,
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
        // The worker reads the log itself; should the descriptor not go, the bytes do.
        let (file, len) = opened;
        let mut restored = worker.restore_file(&file, len).await;
        if let Err(StateFailure::Refused(why)) = &restored {
            tracing::debug!(session = %self.id, %why, "the log's file was not taken; sending its bytes");
            let files = self.files();
            match blocking(move || read(&files)).await {
                Ok(Some(log)) => restored = worker.restore(&log).await,
                Ok(None) => return Ok(()),
                Err(e) => {
                    tracing::error!(session = %self.id, error = %e, "cannot read the session's state");
                    return Ok(());
                }
            }
        }
        match restored {
            Ok(info) => {
                runner.resumed = true;
                tracing::info!(
                    session = %self.id,
                    bytes = len,
                    memory_bytes = info.memory_bytes,
                    took_ms = started.elapsed().as_secs_f64() * 1000.0,
                    worker_ms = info.took_us as f64 / 1000.0,
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

    /// Keeps the layers of state the worker sent with the executions that just returned: a
    /// durable session's before the call is answered, any other's just behind it.
    pub(super) async fn keep_states(&self, runner: &mut Runner) {
        let Some(worker) = runner.worker.as_mut() else {
            return;
        };
        let layers = match worker.take_states() {
            Ok(layers) if layers.is_empty() => return,
            Ok(layers) => layers,
            Err(crate::worker::LayerLost) => {
                tracing::error!(session = %self.id, "a state layer was lost: the session's state is no longer kept");
                let (files, log) = (self.files(), self.state_log.clone());
                let _ = tokio::task::spawn_blocking(move || lose(&files, &log)).await;
                return;
            }
        };
        let (files, log) = (self.files(), self.state_log.clone());
        if !self.durable {
            // Answered first: only the server's death could lose the layer, and this
            // session ends with the server.
            let ticket = log.ticket();
            let (id, cap) = (self.id.clone(), self.limits().memory_bytes);
            tokio::task::spawn_blocking(move || match save_behind(&files, ticket, &layers) {
                Ok(false) => {}
                Ok(true) => compact(&files, &log, cap),
                Err(e) => {
                    tracing::error!(session = %id, error = %e, "cannot keep the session's state");
                }
            });
            return;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use sandbox_protocol::snapshot::{PAGE, Packing, SnapshotMeta, encode, framed_layer};

    /// A layer of one page filled with `value`, holding descriptor 7 open.
    fn layer(value: u8, full: bool) -> StateLayer {
        let meta = SnapshotMeta {
            module: "test-module".into(),
            cell: 1,
            clock_ns: 0,
            memory_bytes: 65536,
            descriptors: vec![7],
        };
        let page = vec![value; PAGE];
        let bytes = framed_layer(&encode(&meta, &[0], |_| &page, Packing::Stored));
        StateLayer {
            bytes: Arc::new(bytes),
            full,
        }
    }

    fn len_of(dir: &sandbox_protocol::confined::Root, name: &str) -> u64 {
        dir.dir().symlink_metadata(name).unwrap().len()
    }

    #[test]
    fn a_checkpoint_links_the_log_and_is_cut_back_to_its_length_when_the_log_moves_on() {
        let state = tempfile::tempdir().unwrap();
        let dirs = crate::workspace::StateDirs::create(state.path()).unwrap();
        let files = dirs.create_session("s").unwrap();
        let log = StateLog::default();
        let checkpoint = files.checkpoints.create_private_dir("cp").unwrap();
        assert!(
            link_into(&files, &log, &checkpoint, "none")
                .unwrap()
                .is_none(),
            "no log yet"
        );

        save(&files, &log, &[layer(1, true)]).unwrap();
        let linked = link_into(&files, &log, &checkpoint, "state")
            .unwrap()
            .expect("a current log is linked");
        assert_eq!(linked.newest.descriptors, [7]);
        assert_eq!(linked.newest.memory_bytes, 65536);
        assert_eq!(len_of(&checkpoint, "state"), linked.bytes);

        // Appended after the checkpoint: the linked file grows, the checkpoint is its start.
        save(&files, &log, &[layer(2, false)]).unwrap();
        assert!(len_of(&checkpoint, "state") > linked.bytes);
        // The log moves to another file: the checkpoint's file is cut back to its state.
        let whole = read(&files).unwrap().unwrap();
        replace(&files, &log, &whole).unwrap();
        assert_eq!(len_of(&checkpoint, "state"), linked.bytes);
        assert_eq!(len_of(&files.state, LOG), whole.len() as u64);

        // A restore of the checkpoint makes its file the log: appends grow it, and it is cut
        // back to the checkpoint's state once the log moves on.
        let state_bytes = linked.bytes;
        let newest = Newest::of(&read(&files).unwrap().unwrap()).unwrap();
        assert!(adopt_as_log(&files, &log, &checkpoint, "state", (state_bytes, newest)).unwrap());
        save(&files, &log, &[layer(4, false)]).unwrap();
        assert!(len_of(&checkpoint, "state") > state_bytes);
        assert!(files.state.dir().symlink_metadata(NEXT_LOG).is_err());
        let whole = read(&files).unwrap().unwrap();
        replace(&files, &log, &whole).unwrap();
        assert_eq!(len_of(&checkpoint, "state"), state_bytes);

        // Restoring the newest checkpoint linked to the log's own file cuts the log back.
        let again = files.checkpoints.create_private_dir("cp2").unwrap();
        let linked = link_into(&files, &log, &again, "state").unwrap().unwrap();
        save(&files, &log, &[layer(5, false)]).unwrap();
        let newest = linked.newest.clone();
        assert!(adopt_as_log(&files, &log, &again, "state", (linked.bytes, newest)).unwrap());
        assert_eq!(len_of(&files.state, LOG), linked.bytes);

        // A log that missed a layer is never linked, until a full layer replaces it.
        log.lock().stale = true;
        assert!(
            link_into(&files, &log, &checkpoint, "stale")
                .unwrap()
                .is_none()
        );
        assert!(read_live(&files, &log).unwrap().is_none());
        save(&files, &log, &[layer(3, true)]).unwrap();
        assert!(
            link_into(&files, &log, &checkpoint, "again")
                .unwrap()
                .is_some()
        );
    }

    /// A worker maps the log's file while it restores from it: a cut meanwhile would end it,
    /// so the log's former file is cut back only once the last restore is done.
    #[test]
    fn a_lent_log_file_is_cut_back_only_when_every_restore_of_it_is_done() {
        let state = tempfile::tempdir().unwrap();
        let dirs = crate::workspace::StateDirs::create(state.path()).unwrap();
        let files = dirs.create_session("s").unwrap();
        let log = std::sync::Arc::new(StateLog::default());
        let checkpoint = files.checkpoints.create_private_dir("cp").unwrap();
        save(&files, &log, &[layer(1, true)]).unwrap();
        let linked = link_into(&files, &log, &checkpoint, "state")
            .unwrap()
            .unwrap();
        save(&files, &log, &[layer(2, false)]).unwrap();
        let grown = len_of(&checkpoint, "state");
        assert!(grown > linked.bytes);

        let first = log.lend();
        let second = log.lend();
        // While lent, the log's own file is not made a checkpoint's by a cut either.
        let newest = linked.newest.clone();
        assert!(!adopt_as_log(&files, &log, &checkpoint, "state", (linked.bytes, newest)).unwrap());
        let whole = read(&files).unwrap().unwrap();
        replace(&files, &log, &whole).unwrap();
        assert_eq!(len_of(&checkpoint, "state"), grown, "not cut while lent");
        drop(first);
        assert_eq!(
            len_of(&checkpoint, "state"),
            grown,
            "one restore still reads it"
        );
        drop(second);
        assert_eq!(
            len_of(&checkpoint, "state"),
            linked.bytes,
            "cut once both are done"
        );
        // Nothing is put off once nothing is lent.
        let again = files.checkpoints.create_private_dir("cp2").unwrap();
        let linked = link_into(&files, &log, &again, "state").unwrap().unwrap();
        save(&files, &log, &[layer(3, false)]).unwrap();
        let whole = read(&files).unwrap().unwrap();
        replace(&files, &log, &whole).unwrap();
        assert_eq!(len_of(&again, "state"), linked.bytes);
        assert!(log.lock().put_off.is_empty());
    }

    /// Layers written behind their calls go into the log in the order of their tickets,
    /// whatever order their writers run in; whoever reads the log waits for them; a ticket
    /// dropped unwritten lets the next ones go and leaves the log stale.
    #[test]
    fn layers_written_behind_their_calls_land_in_call_order_and_readers_wait_for_them() {
        let state = tempfile::tempdir().unwrap();
        let dirs = crate::workspace::StateDirs::create(state.path()).unwrap();
        let files = std::sync::Arc::new(dirs.create_session("s").unwrap());
        let log = std::sync::Arc::new(StateLog::default());
        let tickets: Vec<Ticket> = (0..4).map(|_| log.ticket()).collect();
        // The last writer starts first, the first last.
        let writers: Vec<_> = tickets
            .into_iter()
            .enumerate()
            .rev()
            .map(|(n, ticket)| {
                let files = files.clone();
                let handle = std::thread::spawn(move || {
                    save_behind(&files, ticket, &[layer(n as u8 + 1, n == 0)]).unwrap()
                });
                std::thread::sleep(std::time::Duration::from_millis(20));
                handle
            })
            .collect();
        // A reader waits for all four, then sees them oldest first.
        let whole = read_live(&files, &log).unwrap().unwrap();
        let layers = sandbox_protocol::snapshot::parse_layers(&whole).unwrap();
        let firsts: Vec<u8> = layers
            .iter()
            .map(|l| {
                let mut page = vec![0; 65536];
                l.write_into(&mut page).unwrap();
                page[0]
            })
            .collect();
        assert_eq!(firsts, [1, 2, 3, 4]);
        for writer in writers {
            writer.join().unwrap();
        }

        // A ticket given up (its writer cancelled) before the one after it is written.
        let given_up = log.ticket();
        let next = log.ticket();
        let writer = {
            let files = files.clone();
            std::thread::spawn(move || save_behind(&files, next, &[layer(9, false)]).unwrap())
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(!writer.is_finished(), "waits for the ticket before it");
        drop(given_up);
        writer.join().unwrap();
        let state = log.lock();
        assert!(state.stale, "a layer went missing");
        assert_eq!((state.done, state.tickets), (6, 6));
    }

    /// Layers of a few bytes each never outweigh the log's first, yet a log of too many of
    /// them is compacted all the same (a worker parses at most 65,536).
    #[test]
    fn a_log_of_many_small_layers_is_due_a_compaction() {
        let state = tempfile::tempdir().unwrap();
        let dirs = crate::workspace::StateDirs::create(state.path()).unwrap();
        let files = dirs.create_session("s").unwrap();
        let log = StateLog::default();
        assert!(!save(&files, &log, &[layer(1, true)]).unwrap());
        // A call that changed no page: a layer of its numbers only.
        let meta = SnapshotMeta {
            module: "test-module".into(),
            cell: 2,
            clock_ns: 0,
            memory_bytes: 65536,
            descriptors: vec![],
        };
        let unchanged = framed_layer(&encode(&meta, &[], |_| &[], Packing::Stored));
        assert!(unchanged.len() < 100);
        let tail: Vec<StateLayer> = (0..MAX_TAIL_LAYERS)
            .map(|_| StateLayer {
                bytes: Arc::new(unchanged.clone()),
                full: false,
            })
            .collect();
        assert!(!save(&files, &log, &tail).unwrap(), "not by weight");
        assert!(save(&files, &log, &[layer(3, false)]).unwrap(), "by count");
        compact(&files, &log, 1 << 20);
        let compacted = read_live(&files, &log).unwrap().unwrap();
        let layers = sandbox_protocol::snapshot::parse_layers(&compacted).unwrap();
        assert_eq!(layers.len(), 1);
        assert!(
            !save(&files, &log, &[layer(4, false)]).unwrap(),
            "counted afresh"
        );
        // A log cleared before its compaction ran is nothing to compact, and no failure.
        clear(&files, &log);
        assert!(compact_now(&files, &log, 1 << 20).unwrap().is_none());
    }
}
