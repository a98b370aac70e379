//! The host side of a session's `/app`: listing its files for `get_workspace_info` and emptying
//! it for `reset_workspace`. Symlinks are listed, never followed, so a guest-made link cannot
//! make the server walk or delete anything outside the workspace.

use std::fs;
use std::path::Path;

use schemars::JsonSchema;
use serde::Serialize;

/// Most entries listed; a workspace with more says so instead of producing a huge reply.
const MAX_LISTED: usize = 1000;

/// Directories the sandbox itself keeps in `/app` (installed packages), hidden unless asked.
pub const SYSTEM_DIRS: [&str; 2] = [".packages", "node_modules"];

/// One file in `/app`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FileEntry {
    /// Path relative to /app.
    pub path: String,
    pub size: u64,
    /// "file", "dir" or "symlink".
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

/// Lists `root` recursively, sorted by path.
pub fn list(root: &Path, include_system: bool) -> Listing {
    let mut listing = Listing::default();
    walk(root, root, include_system, &mut listing);
    listing.files.sort_by(|a, b| a.path.cmp(&b.path));
    listing
}

fn walk(root: &Path, dir: &Path, include_system: bool, listing: &mut Listing) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(relative) = path.strip_prefix(root) else {
            continue;
        };
        let relative = relative.to_string_lossy().into_owned();
        if !include_system && dir == root && SYSTEM_DIRS.contains(&relative.as_str()) {
            continue;
        }
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        let kind = if meta.file_type().is_symlink() {
            "symlink"
        } else if meta.is_dir() {
            "dir"
        } else {
            "file"
        };
        if listing.files.len() >= MAX_LISTED {
            listing.truncated = true;
            return;
        }
        let size = if kind == "file" { meta.len() } else { 0 };
        listing.total_bytes += size;
        listing.files.push(FileEntry {
            path: relative,
            size,
            kind,
        });
        if kind == "dir" {
            walk(root, &path, include_system, listing);
        }
    }
}

/// Deletes everything inside `root` (not `root` itself) and returns what was there.
pub fn empty(root: &Path) -> Listing {
    let listing = list(root, true);
    if let Ok(entries) = fs::read_dir(root) {
        for entry in entries.flatten() {
            let path = entry.path();
            let is_dir = fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
            let removed = if is_dir {
                fs::remove_dir_all(&path)
            } else {
                fs::remove_file(&path)
            };
            if let Err(e) = removed {
                tracing::warn!(error = %e, "cannot remove a workspace entry");
            }
        }
    }
    listing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_relative_paths_hides_system_dirs_and_never_follows_links() {
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret"), "x").unwrap();
        let root = tempfile::tempdir().unwrap();
        fs::create_dir_all(root.path().join("data/sub")).unwrap();
        fs::write(root.path().join("data/sub/a.csv"), "1,2\n").unwrap();
        fs::write(root.path().join("b.txt"), "hello").unwrap();
        fs::create_dir_all(root.path().join(".packages/pkg")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("link")).unwrap();
        let listing = list(root.path(), false);
        let paths: Vec<&str> = listing.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            ["b.txt", "data", "data/sub", "data/sub/a.csv", "link"]
        );
        assert_eq!(listing.total_bytes, 9);
        assert!(
            list(root.path(), true)
                .files
                .iter()
                .any(|f| f.path == ".packages")
        );

        let emptied = empty(root.path());
        assert_eq!(emptied.files.len(), 7);
        assert_eq!(fs::read_dir(root.path()).unwrap().count(), 0);
        assert!(
            outside.path().join("secret").exists(),
            "links are removed, not followed"
        );
    }
}
