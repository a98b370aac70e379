//! The host side of sessions' files: the state directory's layout, each session's own
//! directory (mounted as `/app` and `/tmp`), listing a workspace, and emptying or deleting it.
//!
//! Every access goes through the confined layer ([`sandbox_protocol::confined`]): a path is
//! resolved beneath a directory handle, a guest-made link is listed but never followed, and
//! deletion survives whatever a guest built. Each session gets a fresh directory named
//! `<id>.<nonce>`, so a recreated session id never finds an earlier session's files, and two
//! clients may use the same id without sharing anything.

use std::io;
use std::path::{Path, PathBuf};

use sandbox_protocol::confined::{ConfinedError, EntryKind, Root, WalkLimits};
use schemars::JsonSchema;
use serde::Serialize;

use crate::config::{STATE_SESSIONS, STATE_SOCKETS, STATE_STAGING, create_private_dir};

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
    /// "file", "dir", "symlink", "fifo", "socket" or "device".
    pub kind: &'static str,
}

/// The files of a workspace.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Listing {
    pub files: Vec<FileEntry>,
    pub total_bytes: u64,
    /// True when more than the listed entries exist.
    pub truncated: bool,
}

/// How listings name a kind of entry.
fn kind_name(kind: EntryKind) -> &'static str {
    match kind {
        EntryKind::File => "file",
        EntryKind::Dir => "dir",
        EntryKind::Symlink => "symlink",
        EntryKind::Fifo => "fifo",
        EntryKind::Socket => "socket",
        EntryKind::CharDevice | EntryKind::BlockDevice => "device",
    }
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
                kind: kind_name(e.kind),
            })
            .collect(),
    }
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
}

/// The directories of one session.
#[derive(Debug)]
pub struct SessionFiles {
    /// The session's directory name under `sessions/` (`<id>.<nonce>`).
    pub name: String,
    /// The nonce alone: names the worker's socket and cgroup.
    pub key: String,
    /// `/app`.
    pub app: Root,
    /// `/tmp`.
    pub tmp: Root,
    /// Host paths of `/app` and `/tmp`, only to hand to the worker as its preopens (server-made
    /// directories; the guest cannot rename a preopen's root).
    pub app_path: PathBuf,
    pub tmp_path: PathBuf,
}

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
    /// Creates the state directory's parts (mode 0700) and opens them.
    ///
    /// # Errors
    /// When a directory cannot be created or opened.
    pub fn create(state_dir: &Path) -> io::Result<Self> {
        for part in [STATE_SESSIONS, STATE_SOCKETS, STATE_STAGING] {
            create_private_dir(&state_dir.join(part)).map_err(io::Error::other)?;
        }
        Ok(Self {
            path: state_dir.to_path_buf(),
            sessions: Root::open_ambient(&state_dir.join(STATE_SESSIONS))?,
            staging: Root::open_ambient(&state_dir.join(STATE_STAGING))?,
        })
    }

    /// Makes a fresh directory for a new session with `/app` and `/tmp` in it.
    ///
    /// # Errors
    /// When the directories cannot be created.
    pub fn create_session(&self, id: &str) -> Result<SessionFiles, ConfinedError> {
        let key = uuid::Uuid::new_v4().simple().to_string()[..8].to_owned();
        let name = format!("{id}.{key}");
        let dir = self.sessions.create_private_dir(&name)?;
        let made = (|| {
            let app = dir.create_private_dir("app")?;
            let tmp = dir.create_private_dir("tmp")?;
            Ok::<_, ConfinedError>((app, tmp))
        })();
        let (app, tmp) = match made {
            Ok(dirs) => dirs,
            Err(e) => {
                let _ = self.sessions.remove_tree(Path::new(&name));
                return Err(e);
            }
        };
        let base = self.path.join(STATE_SESSIONS).join(&name);
        Ok(SessionFiles {
            app_path: base.join("app"),
            tmp_path: base.join("tmp"),
            name,
            key,
            app,
            tmp,
        })
    }

    /// Deletes a session's directory with everything in it.
    ///
    /// # Errors
    /// When something could not be deleted.
    pub fn remove_session(&self, files: &SessionFiles) -> Result<(), ConfinedError> {
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
