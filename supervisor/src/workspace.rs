//! The host side of sessions' files: the state directory's layout, each session's own
//! directory (mounted as `/app` and `/tmp`), listing a workspace, and emptying or deleting it.
//!
//! Every access goes through the confined layer ([`sandbox_protocol::confined`]): a path is
//! resolved beneath a directory handle, a guest-made link is listed but never followed, and
//! deletion survives whatever a guest built. Each session gets a fresh directory named
//! `<id>.<nonce>`, so a recreated session id never finds an earlier session's files, and two
//! clients may use the same id without sharing anything. A pre-started worker's directory is
//! `_pooled.<nonce>` (no session id starts with `_`); the session that adopts it gets the link
//! `<id>.<nonce>` to it, for operators (the server itself never goes through a link).
//!
//! Nothing is left behind: a live server holds an exclusive lock on its state directory's
//! `.lock` file; at start-up a server clears what a dead predecessor left in its own directory,
//! and [`sweep_stale`] removes the default-location directories (`$TMPDIR/sandbox-mcp-<pid>`) of
//! servers that died without cleaning up (SIGKILL), whose locks nobody holds.

use std::io;
use std::path::{Path, PathBuf};

use sandbox_protocol::confined::{ConfinedError, EntryKind, Root, Usage, WalkLimits, usage_of};
use schemars::JsonSchema;
use serde::Serialize;

use crate::config::{
    STATE_EMPTY, STATE_SESSIONS, STATE_SOCKETS, STATE_STAGING, create_private_dir,
};

/// The file a live server keeps locked (flock) in its state directory; it holds its pid.
pub const STATE_LOCK: &str = ".lock";

/// The name of a default-location state directory: `sandbox-mcp-<pid>` in `$TMPDIR`.
pub const DEFAULT_STATE_PREFIX: &str = "sandbox-mcp-";

/// The directories of a session's checkpoints and of its interpreter's state, beside `app`
/// and `tmp`.
const CHECKPOINTS: &str = "checkpoints";
const STATE: &str = "state";

/// Most entries listed; a workspace with more says so instead of producing a huge reply.
const MAX_LISTED: usize = 1000;

/// Deepest directory level listed; deeper trees are marked truncated.
const MAX_LISTED_DEPTH: usize = 32;

/// Directories the sandbox itself keeps in `/app` (installed packages), hidden unless asked.
pub const SYSTEM_DIRS: [&str; 2] = [".packages", "node_modules"];

/// One file in `/app`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FileEntry {
    /// Path relative to /app.
    pub path: String,
    pub size: u64,
    pub kind: EntryKind,
}

/// The files of a workspace.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Listing {
    pub files: Vec<FileEntry>,
    pub total_bytes: u64,
    /// True when more than the listed entries exist.
    pub truncated: bool,
}

/// Lists a workspace recursively, sorted by path, never following a link.
pub fn list(root: &Root, include_system: bool) -> Listing {
    let skip: &[&str] = if include_system { &[] } else { &SYSTEM_DIRS };
    let walk = root.walk(
        WalkLimits {
            max_entries: MAX_LISTED,
            max_depth: MAX_LISTED_DEPTH,
        },
        skip,
    );
    Listing {
        total_bytes: walk.entries.iter().map(|e| e.size).sum(),
        truncated: walk.truncated,
        files: walk
            .entries
            .into_iter()
            .map(|e| FileEntry {
                path: e.path,
                size: e.size,
                kind: e.kind,
            })
            .collect(),
    }
}

/// What a session's files in /app and /tmp hold together, as its worker's disk quota counts
/// them (`confined::usage_of`); the count stops past `max_entries`.
pub fn usage(files: &SessionFiles, max_entries: u64) -> Usage {
    usage_of(&[&files.app, &files.tmp], max_entries)
}

/// Deletes everything inside `root` (not `root` itself) and returns what was there.
///
/// # Errors
/// When something could not be deleted; what could be is gone.
pub fn empty(root: &Root) -> Result<Listing, ConfinedError> {
    let listing = list(root, true);
    root.remove_children()?;
    Ok(listing)
}

/// The server's state directory: sessions, sockets and staging, each private to the server.
#[derive(Debug)]
pub struct StateDirs {
    path: PathBuf,
    sessions: Root,
    staging: Root,
    /// The locked `.lock` file: held (open) for the server's life.
    _lock: std::fs::File,
}

/// The directories of one session.
#[derive(Debug)]
pub struct SessionFiles {
    /// The session's directory name under `sessions/` (`<id>.<nonce>`).
    pub name: String,
    /// The nonce alone: names the worker's socket and cgroup.
    pub key: String,
    /// The session's directory itself: holds its record (`session::durable`) beside the
    /// directories below; never mounted.
    pub root: Root,
    /// `/app`.
    pub app: Root,
    /// `/tmp`.
    pub tmp: Root,
    /// The session's checkpoints, one directory each; never mounted, so no guest reaches them.
    pub checkpoints: Root,
    /// The interpreter's state after its last execution (`session::resume`); never mounted.
    pub state: Root,
    /// Host paths of `/app` and `/tmp`, only to hand to the worker as its preopens (server-made
    /// directories; the guest cannot rename a preopen's root).
    pub app_path: PathBuf,
    pub tmp_path: PathBuf,
    /// The link `<id>.<nonce>` naming a pooled directory after the session that adopted it.
    pub alias: Option<String>,
}

impl SessionFiles {
    /// True when `/app` and `/tmp` hold nothing, nor its checkpoints and state: no tool, no
    /// guest and no execution has written here, so the session may move to other directories
    /// without losing anything.
    pub fn is_untouched(&self) -> bool {
        let empty = |root: &Root| {
            root.dir()
                .entries()
                .is_ok_and(|mut entries| entries.next().is_none())
        };
        empty(&self.app) && empty(&self.tmp) && empty(&self.checkpoints) && empty(&self.state)
    }
}

/// The name prefix of pooled workers' directories (see the module documentation).
const POOLED_PREFIX: &str = "_pooled";

/// A private scratch directory under `staging/`, deleted when dropped.
#[derive(Debug)]
pub struct Staging {
    pub root: Root,
    /// Its host path, for tools the server runs on it (pip's `--dest`).
    pub path: PathBuf,
    name: String,
    parent: Root,
}

impl Drop for Staging {
    fn drop(&mut self) {
        if let Err(e) = self.parent.remove_tree(Path::new(&self.name)) {
            tracing::warn!(error = %e, "cannot remove a staging directory");
        }
    }
}

impl StateDirs {
    /// Locks the state directory for this server, clears what a dead predecessor left in it,
    /// and creates its parts (mode 0700).
    ///
    /// # Errors
    /// When another live server holds the directory, or a directory cannot be created.
    pub fn create(state_dir: &Path) -> io::Result<Self> {
        Self::open(state_dir, false)
    }

    /// [`StateDirs::create`], keeping the sessions' directories a predecessor left when
    /// `keep_sessions` (durable sessions): its sockets and scratch are cleared all the same.
    ///
    /// # Errors
    /// When another live server holds the directory, or a directory cannot be created.
    pub fn open(state_dir: &Path, keep_sessions: bool) -> io::Result<Self> {
        create_private_dir(state_dir).map_err(io::Error::other)?;
        let root = Root::open_ambient(state_dir)?;
        let lock = lock_state_dir(&root)?;
        for part in [STATE_SESSIONS, STATE_SOCKETS, STATE_STAGING, STATE_EMPTY] {
            if keep_sessions && part == STATE_SESSIONS {
                create_private_dir(&state_dir.join(part)).map_err(io::Error::other)?;
                continue;
            }
            // Leftovers of a server killed before it could clean up (we hold the lock now).
            if let Err(e) = root.remove_tree(Path::new(part)) {
                tracing::warn!(part, error = %e, "cannot clear a predecessor's state");
            }
            create_private_dir(&state_dir.join(part)).map_err(io::Error::other)?;
        }
        Ok(Self {
            path: state_dir.to_path_buf(),
            sessions: Root::open_ambient(&state_dir.join(STATE_SESSIONS))?,
            staging: Root::open_ambient(&state_dir.join(STATE_STAGING))?,
            _lock: lock,
        })
    }

    /// Makes a fresh directory for a new session with `/app` and `/tmp` in it.
    ///
    /// # Errors
    /// When the directories cannot be created.
    pub fn create_session(&self, id: &str) -> Result<SessionFiles, ConfinedError> {
        self.create_files(id)
    }

    /// Makes a fresh directory with `/app` and `/tmp` for a pre-started worker.
    ///
    /// # Errors
    /// When the directories cannot be created.
    pub fn create_pooled(&self) -> Result<SessionFiles, ConfinedError> {
        self.create_files(POOLED_PREFIX)
    }

    fn create_files(&self, prefix: &str) -> Result<SessionFiles, ConfinedError> {
        let key = uuid::Uuid::new_v4().simple().to_string()[..8].to_owned();
        let name = format!("{prefix}.{key}");
        let dir = self.sessions.create_private_dir(&name)?;
        let made = (|| {
            let app = dir.create_private_dir("app")?;
            let tmp = dir.create_private_dir("tmp")?;
            let checkpoints = dir.create_private_dir(CHECKPOINTS)?;
            let state = dir.create_private_dir(STATE)?;
            Ok::<_, ConfinedError>((app, tmp, checkpoints, state))
        })();
        let (app, tmp, checkpoints, state) = match made {
            Ok(dirs) => dirs,
            Err(e) => {
                let _ = self.sessions.remove_tree(Path::new(&name));
                return Err(e);
            }
        };
        Ok(self.session_files(name, key, dir, (app, tmp, checkpoints, state)))
    }

    fn session_files(
        &self,
        name: String,
        key: String,
        root: Root,
        (app, tmp, checkpoints, state): (Root, Root, Root, Root),
    ) -> SessionFiles {
        let base = self.path.join(STATE_SESSIONS).join(&name);
        SessionFiles {
            app_path: base.join("app"),
            tmp_path: base.join("tmp"),
            name,
            key,
            root,
            app,
            tmp,
            checkpoints,
            state,
            alias: None,
        }
    }

    /// The sessions' directories a predecessor left (see [`StateDirs::open`]), opened as they
    /// were made; the links naming adopted directories are removed (whoever keeps a directory
    /// names it again), and an entry that is not a whole session directory is deleted.
    pub fn kept_sessions(&self) -> Vec<SessionFiles> {
        let Ok(entries) = self.sessions.dir().entries() else {
            return Vec::new();
        };
        let names: Vec<String> = entries
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        let mut kept = Vec::new();
        for name in names {
            let opened = (|| {
                let root = self.sessions.open_dir_nofollow(Path::new(&name))?;
                let part = |part: &str| root.open_dir_nofollow(Path::new(part));
                let parts = (part("app")?, part("tmp")?, part(CHECKPOINTS)?, part(STATE)?);
                Ok::<_, ConfinedError>((root, parts))
            })();
            match (opened, name.rsplit_once('.')) {
                (Ok((root, parts)), Some((_, key))) if !key.is_empty() => {
                    let key = key.to_owned();
                    kept.push(self.session_files(name, key, root, parts));
                }
                _ => {
                    if let Err(e) = self.sessions.remove_tree(Path::new(&name)) {
                        tracing::warn!(entry = %name, error = %e, "cannot remove a leftover in the sessions' directory");
                    }
                }
            }
        }
        kept
    }

    /// Names a pooled directory after session `id`, which adopted it: links `<id>.<nonce>` to
    /// it. A failure only costs operators the name, so it is logged, not returned.
    pub fn adopted(&self, id: &str, mut files: SessionFiles) -> SessionFiles {
        let alias = format!("{id}.{}", files.key);
        match self.sessions.dir().symlink(&files.name, &alias) {
            Ok(()) => files.alias = Some(alias),
            Err(e) => tracing::warn!(session = id, error = %e, "cannot name an adopted directory"),
        }
        files
    }

    /// Deletes a session's directory with everything in it.
    ///
    /// # Errors
    /// When something could not be deleted.
    pub fn remove_session(&self, files: &SessionFiles) -> Result<(), ConfinedError> {
        if let Some(alias) = &files.alias {
            // A link: removed, never followed.
            self.sessions.remove_tree(Path::new(alias))?;
        }
        self.sessions.remove_tree(Path::new(&files.name))
    }

    /// A fresh private scratch directory.
    ///
    /// # Errors
    /// When it cannot be created.
    pub fn staging(&self) -> Result<Staging, ConfinedError> {
        let name = uuid::Uuid::new_v4().simple().to_string();
        let root = self.staging.create_private_dir(&name)?;
        Ok(Staging {
            root,
            path: self.path.join(STATE_STAGING).join(&name),
            name,
            parent: self.staging.try_clone()?,
        })
    }
}

/// Opens (creating it) and locks the state directory's lock file, and writes our pid in it.
fn lock_state_dir(root: &Root) -> io::Result<std::fs::File> {
    use std::io::Write;
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true).write(true).create(true);
    cap_fs_ext::OpenOptionsFollowExt::follow(&mut options, cap_fs_ext::FollowSymlinks::No);
    let file = root.dir().open_with(STATE_LOCK, &options)?.into_std();
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {}
        Err(rustix::io::Errno::WOULDBLOCK) => {
            let mut holder = String::new();
            let _ = std::io::Read::read_to_string(&mut &file, &mut holder);
            return Err(io::Error::other(format!(
                "the state directory is in use by another sandbox-mcp (pid {}); give each server its own SANDBOX_STATE_DIR",
                holder.trim()
            )));
        }
        Err(e) => return Err(e.into()),
    }
    file.set_len(0)?;
    write!(&file, "{}", std::process::id())?;
    Ok(file)
}

/// Removes the default-location state directories (`sandbox-mcp-<pid>`) in `parent` that were
/// left by servers that died without cleaning up, and returns their names. A directory counts
/// as stale only when it is a real directory owned by this user and its lock is free (or, for
/// a directory without a lock file, its pid is gone or runs something else). Links, other
/// users' directories and live servers' directories are left alone.
pub fn sweep_stale(parent: &Path, own: &Path) -> Vec<String> {
    let Ok(dir) = Root::open_ambient(parent) else {
        return Vec::new();
    };
    let Ok(entries) = dir.dir().entries() else {
        return Vec::new();
    };
    let own_name = own.file_name().map(|n| n.to_os_string());
    let me = rustix::process::geteuid().as_raw();
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        if Some(&name) == own_name.as_ref() {
            continue;
        }
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(DEFAULT_STATE_PREFIX))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        // A real directory (not followed if it is a link), ours, private.
        let Ok(candidate) = dir.open_dir_nofollow(Path::new(&name)) else {
            continue;
        };
        let Ok(meta) = candidate.dir().dir_metadata() else {
            continue;
        };
        use cap_std::fs::MetadataExt;
        if meta.uid() != me || meta.mode() & 0o077 != 0 {
            continue;
        }
        if !is_stale(&candidate, pid) {
            continue;
        }
        drop(candidate);
        match dir.remove_tree(Path::new(&name)) {
            Ok(()) => removed.push(name.to_string_lossy().into_owned()),
            Err(e) => {
                tracing::warn!(dir = ?name, error = %e, "cannot remove a dead server's state")
            }
        }
    }
    removed
}

/// Whether the state directory `candidate` (named for `pid`) belongs to no live server.
fn is_stale(candidate: &Root, pid: u32) -> bool {
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true);
    cap_fs_ext::OpenOptionsFollowExt::follow(&mut options, cap_fs_ext::FollowSymlinks::No);
    match candidate.dir().open_with(STATE_LOCK, &options) {
        // Our lock is held for a server's whole life: a free lock means a dead server. (The
        // lock is released when this file handle closes.)
        Ok(file) => {
            rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok()
        }
        // No lock file: a server too old to write one, or one still starting. Its pid decides.
        Err(_) => {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|comm| comm.trim() != "sandbox-mcp")
                || !Path::new(&format!("/proc/{pid}")).exists()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn lists_relative_paths_hides_system_dirs_and_never_follows_links() {
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret"), "x").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root_path = dir.path();
        fs::create_dir_all(root_path.join("data/sub")).unwrap();
        fs::write(root_path.join("data/sub/a.csv"), "1,2\n").unwrap();
        fs::write(root_path.join("b.txt"), "hello").unwrap();
        fs::create_dir_all(root_path.join(".packages/pkg")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root_path.join("link")).unwrap();
        let root = Root::open_ambient(root_path).unwrap();
        let listing = list(&root, false);
        let paths: Vec<&str> = listing.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            ["b.txt", "data", "data/sub", "data/sub/a.csv", "link"]
        );
        assert_eq!(listing.total_bytes, 9);
        assert!(
            list(&root, true)
                .files
                .iter()
                .any(|f| f.path == ".packages")
        );

        let emptied = empty(&root).unwrap();
        assert_eq!(emptied.files.len(), 7);
        assert_eq!(fs::read_dir(root_path).unwrap().count(), 0);
        assert!(
            outside.path().join("secret").exists(),
            "links are removed, not followed"
        );
    }

    #[test]
    fn a_state_directory_has_one_server_and_is_cleared_for_the_next() {
        let state = tempfile::tempdir().unwrap();
        let first = StateDirs::create(state.path()).unwrap();
        let files = first.create_session("s").unwrap();
        fs::write(files.app_path.join("left.txt"), "x").unwrap();
        let second = StateDirs::create(state.path()).unwrap_err();
        assert!(
            second.to_string().contains("in use by another sandbox-mcp"),
            "{second}"
        );
        drop(first);
        let third = StateDirs::create(state.path()).unwrap();
        assert!(
            !files.app_path.exists(),
            "a dead server's sessions are cleared"
        );
        drop(third);
    }

    #[test]
    fn stale_state_directories_of_dead_servers_are_swept() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("keep"), "k").unwrap();
        let private = |path: &Path| {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(path, fs::Permissions::from_mode(0o700)).unwrap();
        };
        // A dead server: its lock is free.
        let dead = tmp.path().join("sandbox-mcp-999999991");
        drop(StateDirs::create(&dead).unwrap());
        fs::write(dead.join("sessions/leftover"), "x").unwrap();
        // A live one: its lock is held.
        let live_path = tmp.path().join("sandbox-mcp-999999992");
        let live = StateDirs::create(&live_path).unwrap();
        // A legacy one without a lock, for a pid that does not exist.
        let legacy = tmp.path().join("sandbox-mcp-999999993");
        fs::create_dir(&legacy).unwrap();
        private(&legacy);
        // Not ours to touch: a link, an unrelated name, a directory others may read.
        std::os::unix::fs::symlink(outside.path(), tmp.path().join("sandbox-mcp-999999994"))
            .unwrap();
        fs::create_dir(tmp.path().join("sandbox-mcp-other")).unwrap();
        let open = tmp.path().join("sandbox-mcp-999999995");
        fs::create_dir(&open).unwrap();
        let own = tmp
            .path()
            .join(format!("sandbox-mcp-{}", std::process::id()));
        let mut removed = sweep_stale(tmp.path(), &own);
        removed.sort();
        assert_eq!(removed, ["sandbox-mcp-999999991", "sandbox-mcp-999999993"]);
        assert!(live_path.join(STATE_SESSIONS).is_dir());
        assert!(outside.path().join("keep").exists());
        assert!(tmp.path().join("sandbox-mcp-999999994").is_symlink());
        assert!(open.is_dir() && tmp.path().join("sandbox-mcp-other").is_dir());
        drop(live);
    }

    #[test]
    fn every_session_gets_a_fresh_directory() {
        let state = tempfile::tempdir().unwrap();
        let dirs = StateDirs::create(state.path()).unwrap();
        let first = dirs.create_session("s1").unwrap();
        fs::write(first.app_path.join("left.txt"), "old").unwrap();
        let second = dirs.create_session("s1").unwrap();
        assert_ne!(first.name, second.name);
        assert_eq!(list(&second.app, true).files.len(), 0);
        dirs.remove_session(&first).unwrap();
        assert!(!first.app_path.exists());
        assert!(second.tmp_path.is_dir());
        let staging = dirs.staging().unwrap();
        let path = staging.path.clone();
        assert!(path.is_dir());
        drop(staging);
        assert!(!path.exists());
    }
}
