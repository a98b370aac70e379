//! Durable sessions (`SANDBOX_DURABLE_SESSIONS`): sessions that outlive the server, even a
//! SIGKILL of it. Everything a session is already lives in its own directory (its `/app`, its
//! checkpoints, and its interpreter's state log, written before each call is answered: see
//! [`super::resume`]); what only the server's memory knew (its id, owner, runtime, limits, TTL
//! and list of checkpoints) is written beside them, as the session's record (`session.json`),
//! when the session is made, moves onto a pooled worker's directory, takes a checkpoint, and
//! at shutdown. A new server on the same state directory reads the records back and takes the
//! sessions over: each resumes, on its next call, from the state after its last call that
//! returned, and says so (`session_restarted`, `state_after_restart: "resumed"`).
//!
//! Only owners who can come back have records ([`LastingOwner`]): the stdio client and the
//! principals of the tokens file. An HTTP connection without a principal is a client of its
//! own, nobody can ever be it again, and its sessions end with the server as before.
//!
//! A record is the server's own file in a directory no guest reaches, but it is read back as
//! untrusted all the same: its size is capped, its fields must be known, the session id, the
//! checkpoint ids and every limit are checked against what a client could have asked for. A
//! directory without a record (a pooled worker's, a connection's session, one killed before its
//! record was written) is deleted; one whose record cannot be read is left for an operator and
//! logged.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use sandbox_protocol::confined::{ConfinedError, Follow};
use sandbox_protocol::{Flavor, Runtime};
use serde::{Deserialize, Serialize};

use super::{Checkpoint, Kept, Parts, Session, SessionSpec, valid_session_id};
use crate::config::{
    DISK_QUOTA_BYTES_RANGE, DISK_QUOTA_FILES_RANGE, FUEL_RANGE, MAX_TIMEOUT, MEMORY_RANGE,
    SessionLimits, TTL_RANGE,
};
use crate::owner::LastingOwner;
use crate::pool::WorkerPool;
use crate::workspace::{SessionFiles, StateDirs};

/// The record, in the session's directory, and where a new one is written before it replaces
/// it (so a kill mid-write leaves the previous record whole).
const RECORD: &str = "session.json";
const NEXT_RECORD: &str = "session.json.next";

/// The largest record read back: 32 checkpoints with labels of 200 characters fit in 16 KiB.
const MAX_RECORD_BYTES: u64 = 64 << 10;

/// The record format's version: a record of another version is not taken over.
const VERSION: u32 = 1;

/// Bounds on the limits a client cannot set beyond a flavor's (checked on reading back).
const MAX_CPUS: u32 = 256;
const MAX_OUTPUT_CAP: usize = 1 << 30;
const MAX_FILE_BYTES: u64 = 16 << 40;
const MAX_PRINCIPAL_CHARS: usize = 256;

/// What the server's memory knows of a session and its directory does not hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    version: u32,
    id: String,
    owner: LastingOwner,
    /// The key of its executions (the nonce of the directory it was made with).
    key: String,
    runtime: Runtime,
    limits: RecordLimits,
    fuel_explicit: bool,
    ttl_secs: u64,
    created_at: DateTime<Utc>,
    last_used: DateTime<Utc>,
    executions: u64,
    fuel_used: u64,
    checkpoints: Vec<RecordCheckpoint>,
}

/// [`SessionLimits`] as a record spells them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordLimits {
    flavor: Flavor,
    cpus: u32,
    memory_bytes: u64,
    fuel: u64,
    timeout_ms: u64,
    stdout_cap: usize,
    stderr_cap: usize,
    disk_bytes: u64,
    disk_quota_bytes: u64,
    disk_quota_files: u64,
}

/// A [`Checkpoint`] as a record spells it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordCheckpoint {
    checkpoint_id: String,
    label: Option<String>,
    bytes: u64,
    entries: u64,
    state_bytes: u64,
    created_at: DateTime<Utc>,
}

impl Record {
    /// The record of `session` as it is now; `None` when its owner cannot come back.
    pub fn of(session: &Session) -> Option<Self> {
        let owner = session.owner.lasting()?;
        let limits = &session.spec.limits;
        Some(Self {
            version: VERSION,
            id: session.id.clone(),
            owner,
            key: session.key.clone(),
            runtime: session.spec.runtime,
            limits: RecordLimits {
                flavor: limits.flavor,
                cpus: limits.cpus,
                memory_bytes: limits.memory_bytes,
                fuel: limits.fuel,
                timeout_ms: u64::try_from(limits.timeout.as_millis()).unwrap_or(u64::MAX),
                stdout_cap: limits.stdout_cap,
                stderr_cap: limits.stderr_cap,
                disk_bytes: limits.disk_bytes,
                disk_quota_bytes: limits.disk_quota_bytes,
                disk_quota_files: limits.disk_quota_files,
            },
            fuel_explicit: session.spec.fuel_explicit,
            ttl_secs: session.ttl.as_secs(),
            created_at: session.created_at,
            last_used: session.last_used(),
            executions: session
                .executions
                .load(std::sync::atomic::Ordering::Relaxed),
            fuel_used: session.fuel_used.load(std::sync::atomic::Ordering::Relaxed),
            checkpoints: session
                .checkpoints()
                .into_iter()
                .map(|c| RecordCheckpoint {
                    checkpoint_id: c.checkpoint_id,
                    label: c.label,
                    bytes: c.bytes,
                    entries: c.entries,
                    state_bytes: c.state_bytes,
                    created_at: c.created_at,
                })
                .collect(),
        })
    }

    /// Parses and checks a record read back (see the module documentation).
    fn parse(bytes: &[u8]) -> Result<Self, String> {
        let record: Self = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        record.check()?;
        Ok(record)
    }

    fn check(&self) -> Result<(), String> {
        let l = &self.limits;
        let checks = [
            (self.version == VERSION, "an unknown version"),
            (valid_session_id(&self.id), "an invalid session id"),
            (
                self.key.len() == 8 && self.key.bytes().all(|b| b.is_ascii_hexdigit()),
                "an invalid key",
            ),
            (
                match &self.owner {
                    LastingOwner::Local => true,
                    LastingOwner::Principal { name } => {
                        !name.is_empty() && name.chars().count() <= MAX_PRINCIPAL_CHARS
                    }
                },
                "an invalid owner",
            ),
            ((1..=MAX_CPUS).contains(&l.cpus), "cpus out of bounds"),
            (
                MEMORY_RANGE.contains(&l.memory_bytes),
                "memory out of bounds",
            ),
            (FUEL_RANGE.contains(&l.fuel), "fuel out of bounds"),
            (
                (1..=MAX_TIMEOUT.as_millis() as u64).contains(&l.timeout_ms),
                "timeout out of bounds",
            ),
            (
                l.stdout_cap <= MAX_OUTPUT_CAP && l.stderr_cap <= MAX_OUTPUT_CAP,
                "output caps out of bounds",
            ),
            (l.disk_bytes <= MAX_FILE_BYTES, "file size out of bounds"),
            (
                DISK_QUOTA_BYTES_RANGE.contains(&l.disk_quota_bytes)
                    && DISK_QUOTA_FILES_RANGE.contains(&l.disk_quota_files),
                "disk quota out of bounds",
            ),
            (TTL_RANGE.contains(&self.ttl_secs), "TTL out of bounds"),
            (
                self.checkpoints.len() <= super::checkpoints::MAX_CHECKPOINTS,
                "too many checkpoints",
            ),
            (
                self.checkpoints.iter().all(|c| {
                    super::checkpoints::valid_checkpoint_id(&c.checkpoint_id)
                        && c.state_bytes <= crate::worker::MAX_SNAPSHOT as u64 * 2
                        && c.label.as_ref().is_none_or(|l| {
                            l.chars().count() <= super::checkpoints::MAX_LABEL_CHARS
                        })
                }),
                "an invalid checkpoint",
            ),
        ];
        match checks.iter().find(|(ok, _)| !ok) {
            Some((_, why)) => Err(format!("the record has {why}")),
            None => Ok(()),
        }
    }

    fn spec(&self) -> SessionSpec {
        let l = &self.limits;
        SessionSpec {
            runtime: self.runtime,
            limits: SessionLimits {
                flavor: l.flavor,
                cpus: l.cpus,
                memory_bytes: l.memory_bytes,
                fuel: l.fuel,
                timeout: Duration::from_millis(l.timeout_ms),
                stdout_cap: l.stdout_cap,
                stderr_cap: l.stderr_cap,
                disk_bytes: l.disk_bytes,
                disk_quota_bytes: l.disk_quota_bytes,
                disk_quota_files: l.disk_quota_files,
            },
            fuel_explicit: self.fuel_explicit,
            ttl: Duration::from_secs(self.ttl_secs),
        }
    }
}

/// Writes `record` into the session's directory, replacing the previous one whole.
///
/// # Errors
/// When it cannot be written; the previous record (if any) is then still in place.
pub fn write(files: &SessionFiles, record: &Record) -> Result<(), ConfinedError> {
    let bytes = serde_json::to_vec(record).map_err(std::io::Error::other)?;
    let dir = files.root.dir();
    let _ = dir.remove_file(NEXT_RECORD);
    let mut next = files.root.create_new_file(Path::new(NEXT_RECORD))?;
    next.write_all(&bytes)?;
    drop(next);
    dir.rename(NEXT_RECORD, dir, RECORD)?;
    Ok(())
}

/// Reads the record in `files`: `Ok(None)` when there is none.
fn read(files: &SessionFiles) -> Result<Option<(Record, DateTime<Utc>)>, String> {
    let bytes = match files
        .root
        .read_regular(Path::new(RECORD), Follow::No, MAX_RECORD_BYTES)
    {
        Ok(bytes) => bytes,
        Err(e) if e.io_kind() == Some(std::io::ErrorKind::NotFound) => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let record = Record::parse(&bytes)?;
    // The state log is written after every call that returned: its time is the session's
    // last use when the server was killed before it could write the record again.
    let logged = super::resume::written_at(files).unwrap_or(record.last_used);
    let last_used = record.last_used.max(logged).min(Utc::now());
    Ok(Some((record, last_used)))
}

/// The sessions a predecessor left in `dirs` (opened with its sessions kept), taken over:
/// each with its files, its checkpoints that are whole, and the notice its next call gets.
/// Everything else in the sessions' directory is deleted, except directories whose record
/// cannot be read (left for an operator).
pub fn take_over(dirs: &Arc<StateDirs>, pool: &Arc<WorkerPool>) -> Vec<Session> {
    let mut found: Vec<(Record, DateTime<Utc>, SessionFiles)> = Vec::new();
    for files in dirs.kept_sessions() {
        match read(&files) {
            Ok(Some((record, last_used))) => found.push((record, last_used, files)),
            Ok(None) => remove(dirs, &files, "it has no record"),
            Err(why) => tracing::error!(
                dir = %files.name,
                %why,
                "a session's record cannot be read; its directory is left as it is"
            ),
        }
    }
    // Newest first: of two directories of one session (a kill while it moved onto a pooled
    // worker's), the one it moved to is kept.
    found.sort_by(|a, b| b.1.cmp(&a.1));
    let mut seen = HashSet::new();
    let mut sessions = Vec::new();
    for (record, last_used, files) in found {
        if !seen.insert((record.owner.clone(), record.id.clone())) {
            remove(
                dirs,
                &files,
                "a newer directory of the same session is kept",
            );
            continue;
        }
        let (checkpoints, linked) =
            super::checkpoints::settle_kept(&files, whole_checkpoints(&files, &record));
        let lost = super::resume::has_state(&files)
            .then(|| "the server was restarted; the session was kept on disk".to_owned());
        let own_name = format!("{}.{}", record.id, files.key);
        let files = if files.name == own_name {
            files
        } else {
            dirs.adopted(&record.id, files)
        };
        tracing::info!(session = %record.id, runtime = %record.runtime, checkpoints = checkpoints.len(), "session taken over from the previous server");
        let session = Session::new(
            Parts {
                id: record.id.clone(),
                owner: record.owner.clone().into(),
                spec: record.spec(),
                key: record.key.clone(),
                files,
                created_at: record.created_at,
                last_used,
                durable: true,
                kept: Some(Kept {
                    executions: record.executions,
                    fuel_used: record.fuel_used,
                    checkpoints,
                    lost,
                }),
            },
            pool.clone(),
            dirs.clone(),
        );
        session.state_log.adopt_linked(linked);
        sessions.push(session);
    }
    sessions
}

/// The record's checkpoints whose directories are there; the directories of checkpoints the
/// record does not list (taken while the server was killed, never answered) are deleted.
fn whole_checkpoints(files: &SessionFiles, record: &Record) -> Vec<Checkpoint> {
    let present: HashSet<String> = files
        .checkpoints
        .dir()
        .entries()
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    let listed: HashSet<&str> = record
        .checkpoints
        .iter()
        .map(|c| c.checkpoint_id.as_str())
        .collect();
    for stray in present
        .iter()
        .filter(|name| !listed.contains(name.as_str()))
    {
        if let Err(e) = files.checkpoints.remove_tree(Path::new(stray)) {
            tracing::warn!(session = %record.id, entry = %stray, error = %e, "cannot remove an unlisted checkpoint");
        }
    }
    record
        .checkpoints
        .iter()
        .filter(|c| present.contains(&c.checkpoint_id))
        .map(|c| Checkpoint {
            checkpoint_id: c.checkpoint_id.clone(),
            label: c.label.clone(),
            bytes: c.bytes,
            entries: c.entries,
            state_bytes: c.state_bytes,
            created_at: c.created_at,
        })
        .collect()
}

fn remove(dirs: &StateDirs, files: &SessionFiles, why: &str) {
    tracing::debug!(dir = %files.name, why, "removing a predecessor's session directory");
    if let Err(e) = dirs.remove_session(files) {
        tracing::warn!(dir = %files.name, error = %e, "cannot remove a predecessor's session directory");
    }
}

impl Session {
    /// Writes the session's record, when it is durable: its directory alone then brings it
    /// back after a restart. A failure is logged: the session goes on, only not past a
    /// restart.
    pub(super) fn keep_record(&self) {
        if !self.durable {
            return;
        }
        let Some(record) = Record::of(self) else {
            return;
        };
        if let Err(e) = write(&self.files(), &record) {
            tracing::error!(session = %self.id, error = %e, "cannot write the session's record; it will not outlive a restart");
        }
    }

    /// [`Session::keep_record`] off the async threads.
    pub(super) async fn keep_record_async(self: &Arc<Self>) {
        if !self.durable {
            return;
        }
        let session = self.clone();
        let _ = tokio::task::spawn_blocking(move || session.keep_record()).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Record {
        let now = Utc::now();
        Record {
            version: VERSION,
            id: "s1".into(),
            owner: LastingOwner::Principal {
                name: "alice".into(),
            },
            key: "0123abcd".into(),
            runtime: Runtime::Python,
            limits: RecordLimits {
                flavor: Flavor::default(),
                cpus: 1,
                memory_bytes: 512 << 20,
                fuel: 10_000_000_000,
                timeout_ms: 30_000,
                stdout_cap: 1 << 20,
                stderr_cap: 1 << 20,
                disk_bytes: 256 << 20,
                disk_quota_bytes: 1 << 30,
                disk_quota_files: 20_000,
            },
            fuel_explicit: false,
            ttl_secs: 3600,
            created_at: now,
            last_used: now,
            executions: 3,
            fuel_used: 1000,
            checkpoints: vec![RecordCheckpoint {
                checkpoint_id: "cp-0123456789".into(),
                label: Some("before".into()),
                bytes: 10,
                entries: 3,
                state_bytes: 0,
                created_at: now,
            }],
        }
    }

    #[test]
    fn a_record_reads_back_as_written() {
        let record = record();
        let bytes = serde_json::to_vec(&record).unwrap();
        assert_eq!(Record::parse(&bytes).unwrap(), record);
    }

    #[test]
    fn a_record_with_anything_out_of_bounds_is_refused() {
        let cases: Vec<(&str, Box<dyn Fn(&mut Record)>)> = vec![
            ("session id", Box::new(|r| r.id = "../etc".into())),
            ("key", Box::new(|r| r.key = "../x".into())),
            (
                "owner",
                Box::new(|r| {
                    r.owner = LastingOwner::Principal {
                        name: String::new(),
                    }
                }),
            ),
            ("memory", Box::new(|r| r.limits.memory_bytes = 1 << 40)),
            ("fuel", Box::new(|r| r.limits.fuel = 0)),
            ("timeout", Box::new(|r| r.limits.timeout_ms = 0)),
            ("quota", Box::new(|r| r.limits.disk_quota_files = 0)),
            ("TTL", Box::new(|r| r.ttl_secs = 0)),
            ("version", Box::new(|r| r.version = 99)),
            (
                "checkpoint",
                Box::new(|r| r.checkpoints[0].checkpoint_id = "../../app".into()),
            ),
        ];
        for (what, spoil) in cases {
            let mut bad = record();
            spoil(&mut bad);
            let bytes = serde_json::to_vec(&bad).unwrap();
            assert!(Record::parse(&bytes).is_err(), "{what} was accepted");
        }
        let mut extra = serde_json::to_value(record()).unwrap();
        extra["surprise"] = serde_json::json!(1);
        assert!(Record::parse(extra.to_string().as_bytes()).is_err());
        assert!(Record::parse(b"{").is_err());
    }

    #[test]
    fn the_next_server_takes_over_recorded_sessions_and_deletes_the_rest() {
        let state = tempfile::tempdir().unwrap();
        let pool = Arc::new(WorkerPool::new(
            crate::config::PoolSizes::none(),
            crate::worker::fork_server::ForkServers::new(false),
        ));
        let kept_files;
        {
            let dirs = StateDirs::open(state.path(), true).unwrap();
            let files = dirs.create_session("s1").unwrap();
            let mut recorded = record();
            recorded.key = files.key.clone();
            recorded.checkpoints.push(RecordCheckpoint {
                checkpoint_id: "cp-aaaaaaaaaa".into(),
                label: None,
                bytes: 1,
                entries: 1,
                state_bytes: 0,
                created_at: Utc::now(),
            });
            for id in ["cp-0123456789", "cp-bbbbbbbbbb"] {
                let dir = files.checkpoints.create_private_dir(id).unwrap();
                dir.create_new_file(Path::new("state")).unwrap();
            }
            write(&files, &recorded).unwrap();
            kept_files = files.name.clone();
            let unrecorded = dirs.create_session("s2").unwrap();
            drop(unrecorded);
            let pooled = dirs.create_pooled().unwrap();
            drop(pooled);
        }
        let dirs = Arc::new(StateDirs::open(state.path(), true).unwrap());
        let sessions = take_over(&dirs, &pool);
        assert_eq!(sessions.len(), 1);
        let session = &sessions[0];
        assert_eq!(session.id, "s1");
        assert_eq!(session.owner, crate::owner::Owner::principal("alice"));
        let ids: Vec<String> = session
            .checkpoints()
            .into_iter()
            .map(|c| c.checkpoint_id)
            .collect();
        assert_eq!(ids, ["cp-0123456789"], "only whole, listed checkpoints");
        let left: Vec<String> = std::fs::read_dir(state.path().join("sessions"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(left, [kept_files.clone()]);
        let checkpoints: Vec<String> = std::fs::read_dir(
            state
                .path()
                .join("sessions")
                .join(&kept_files)
                .join("checkpoints"),
        )
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
        assert_eq!(checkpoints, ["cp-0123456789"]);
    }
}
