//! The file operations of [`Fs`]: opening, listing, creating, removing, renaming, linking and
//! changing modes and times of resolved guest paths, each through the mount's root handle (see
//! the parent module for how a path gets there), and the guest spellings of real paths for
//! `realpath` and `ls -l`.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt, SystemTimeSpec};
use cap_std::fs::{MetadataExt, OpenOptions, OpenOptionsExt, Permissions, PermissionsExt};
use rustix::fs::OFlags;
use rustix::io::Errno;
use sandbox_protocol::confined::{self, Follow, Root};

use super::{
    Access, Entry, Fs, FsError, Kind, OUTSIDE_TARGET, Place, Resolved, errno, guest_path, join,
    normalize, not_regular,
};
use crate::quota::{Amount, QuotaFile};

/// The descriptor flags of every open for writing: a FIFO must not block the shell, and a
/// terminal must not become its controlling one.
fn nonblocking() -> i32 {
    // The flag values fit in the C `int` that open(2) takes.
    (OFlags::NONBLOCK | OFlags::NOCTTY).bits() as i32
}

impl Fs {
    /// Opens a regular file for reading (a symlink is followed beneath the root). Directories
    /// give `EISDIR`; FIFOs, sockets and devices are refused without blocking.
    ///
    /// # Errors
    /// As [`Fs::stat`], and the open itself.
    pub(crate) fn open_read(&self, r: &Resolved) -> Result<File, FsError> {
        if r.is_virtual() || r.mount_root {
            return Err(errno(Errno::ISDIR));
        }
        let (root, rel) = self.locate(r)?;
        // The usual message for a socket (whose open would say ENXIO); the descriptor check
        // below is what keeps a FIFO or device swapped in meanwhile out.
        if self
            .stat(r)
            .is_ok_and(|m| !matches!(m.kind, Kind::File | Kind::Dir | Kind::Symlink))
        {
            return Err(not_regular());
        }
        let (file, _) = root
            .open_regular(rel, Follow::Yes)
            .map_err(|e| r.confined_error(e))?;
        Ok(file.into_std())
    }

    /// [`locate`](Fs::locate) for an operation on an entry beneath a mount point: the mount
    /// point itself answers `at_mount_point` (it can be neither written, removed nor read as a
    /// link).
    fn locate_entry<'a>(
        &'a self,
        r: &'a Resolved,
        at_mount_point: Errno,
    ) -> Result<(&'a Root, &'a Path), FsError> {
        let located = self.locate(r)?;
        if r.mount_root {
            return Err(errno(at_mount_point));
        }
        Ok(located)
    }

    /// Opens (creating) a regular file for writing, truncated unless `append`. Directories give
    /// `EISDIR`; FIFOs, sockets and devices are refused, and the open cannot block on them. What
    /// is written through the returned file is charged to the disk quota as the file grows.
    ///
    /// # Errors
    /// When the target is a directory, virtual, not a regular file, or cannot be opened, or the
    /// disk quota has no room for a new file.
    pub(crate) fn open_write(&self, r: &Resolved, append: bool) -> Result<QuotaFile, FsError> {
        let (root, rel) = self.locate_entry(r, Errno::ISDIR)?;
        // The usual messages for what is there already...
        let existing = self.lstat(r).ok();
        if let Some(m) = &existing {
            match m.kind {
                Kind::File => {}
                Kind::Dir => return Err(errno(Errno::ISDIR)),
                _ => return Err(not_regular()),
            }
        }
        // A new file is a new entry.
        let created = if existing.is_none() {
            Amount::entries(1)
        } else {
            Amount::ZERO
        };
        self.charge(r, created)?;
        let opened = self.open_for_writing(root, rel, r, append);
        let file = match opened {
            Ok(file) => file,
            Err(e) => {
                self.release(r, created);
                return Err(e);
            }
        };
        let size = if append {
            file.metadata().map_err(FsError::Io)?.len()
        } else {
            // Truncated: its bytes are freed.
            self.release(r, Amount::bytes(existing.map_or(0, |m| m.len)));
            0
        };
        Ok(QuotaFile::new(file, self.quota_of(r).cloned(), size, size))
    }

    /// The open of [`Fs::open_write`], with the checks on the descriptor.
    fn open_for_writing(
        &self,
        root: &Root,
        rel: &Path,
        r: &Resolved,
        append: bool,
    ) -> Result<File, FsError> {
        let mut options = OpenOptions::new();
        options.write(true).create(true).custom_flags(nonblocking());
        if append {
            options.append(true);
        } else {
            options.truncate(true);
        }
        if !r.follow {
            options.follow(FollowSymlinks::No);
        }
        let file = root
            .dir()
            .open_with(rel, &options)
            .map_err(|e| r.io_error(e))?;
        // ...and the check that counts, on the descriptor: whatever was swapped in meanwhile.
        let meta = file.metadata().map_err(FsError::Io)?;
        if !meta.is_file() {
            return Err(if meta.is_dir() {
                errno(Errno::ISDIR)
            } else {
                not_regular()
            });
        }
        let file = file.into_std();
        let flags = rustix::fs::fcntl_getfl(&file).map_err(io::Error::from)?;
        rustix::fs::fcntl_setfl(&file, flags - OFlags::NONBLOCK).map_err(io::Error::from)?;
        Ok(file)
    }

    /// The entries of a directory (followed if `r` is a symlink), sorted by name, without `.`
    /// and `..`.
    ///
    /// # Errors
    /// When `r` is not a readable directory.
    pub(crate) fn list(&self, r: &Resolved) -> Result<Vec<Entry>, FsError> {
        let r = self.follow(r)?;
        let mut out = Vec::new();
        let (index, base) = match &r.place {
            Place::Virtual => {
                let prefix = if r.guest == "/" {
                    "/".to_string()
                } else {
                    format!("{}/", r.guest)
                };
                let mut names: Vec<&str> = self
                    .mounts
                    .iter()
                    .filter_map(|m| m.guest.strip_prefix(&prefix))
                    .filter_map(|rest| rest.split('/').next())
                    .filter(|n| !n.is_empty())
                    .collect();
                names.sort_unstable();
                names.dedup();
                for name in names {
                    let guest = join(&r.guest, name);
                    if let Ok(node) = self.resolve_guest(guest, Access::Read, false) {
                        out.push(Entry {
                            name: name.to_string(),
                            node,
                        });
                    }
                }
                return Ok(out);
            }
            Place::MountRoot(index) => (*index, PathBuf::new()),
            Place::Beneath { mount, rel } => (*mount, rel.clone()),
        };
        let (root, rel) = self.locate(&r)?;
        let entries = if r.mount_root {
            root.dir().entries()
        } else {
            root.dir().read_dir(rel)
        };
        for entry in entries.map_err(|e| r.io_error(e))? {
            let entry = entry.map_err(|e| r.io_error(e))?;
            let name: OsString = entry.file_name();
            let shown = name.to_string_lossy().into_owned();
            out.push(Entry {
                node: Resolved {
                    guest: join(&r.guest, &shown),
                    place: Place::Beneath {
                        mount: index,
                        rel: base.join(&name),
                    },
                    follow: false,
                    mount: r.mount.clone(),
                    mount_root: false,
                    writable: r.writable,
                },
                name: shown,
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// Creates a directory, with its missing parents when `parents` (an existing directory is
    /// then fine).
    ///
    /// # Errors
    /// When it exists (without `parents`), a parent is missing, or a link leads out.
    pub(crate) fn create_dir(&self, r: &Resolved, parents: bool) -> Result<(), FsError> {
        let (root, rel) = self.locate(r)?;
        if r.mount_root {
            return if parents {
                Ok(())
            } else {
                Err(errno(Errno::EXIST))
            };
        }
        // Every directory it makes is an entry: all of `mkdir -p a/b/c` fits, or none is made.
        let missing = if parents && self.quota_of(r).is_some() {
            rel.ancestors()
                .filter(|p| !p.as_os_str().is_empty())
                .take_while(|p| root.dir().metadata(p).is_err())
                .count() as u64
        } else {
            1
        };
        self.charge(r, Amount::entries(missing))?;
        let made = if parents {
            root.dir().create_dir_all(rel)
        } else {
            root.dir().create_dir(rel)
        };
        // A failed `-p` may have made some of them: keep that charge (a count corrects it).
        if made.is_err() && !parents {
            self.release(r, Amount::entries(missing));
        }
        made.map_err(|e| r.io_error(e))
    }

    /// Removes a file or a symlink (never what it points to).
    ///
    /// # Errors
    /// When it is a directory, is missing, or cannot be removed.
    pub(crate) fn remove_file(&self, r: &Resolved) -> Result<(), FsError> {
        let (root, rel) = self.locate_entry(r, Errno::ISDIR)?;
        root.dir()
            .remove_file_or_symlink(rel)
            .map_err(|e| r.io_error(e))
    }

    /// Removes an empty directory. A mount point is busy.
    ///
    /// # Errors
    /// When it is not an empty directory, or cannot be removed.
    pub(crate) fn remove_dir(&self, r: &Resolved) -> Result<(), FsError> {
        let (root, rel) = self.locate_entry(r, Errno::BUSY)?;
        root.dir().remove_dir(rel).map_err(|e| r.io_error(e))
    }

    /// Removes the node and, for a directory, everything below it, with `Root::remove_tree`:
    /// links are removed, never followed, and a guest's `chmod 000` does not stop it. A mount
    /// point is busy (callers empty it entry by entry instead).
    ///
    /// # Errors
    /// When something cannot be removed.
    pub(crate) fn remove_tree(&self, r: &Resolved) -> Result<(), FsError> {
        let Place::Beneath { rel, .. } = &r.place else {
            return Err(if r.is_virtual() {
                r.virtual_refusal()
            } else {
                errno(Errno::BUSY)
            });
        };
        let (root, _) = self.locate(r)?;
        let name = rel.file_name().ok_or_else(|| errno(Errno::INVAL))?;
        let parent = rel.parent().unwrap_or(Path::new(""));
        let dir = parent_root(root, parent, r)?;
        dir.remove_tree(Path::new(name))
            .map_err(|e| r.confined_error(e))
    }

    /// Renames `from` to `to` (the last component of each is not followed, so a link is moved
    /// or replaced, never written through). Mount points are busy.
    ///
    /// # Errors
    /// As rename(2); `EXDEV` between host filesystems.
    pub(crate) fn rename(&self, from: &Resolved, to: &Resolved) -> Result<(), FsError> {
        let (from_root, from_rel) = self.locate(from)?;
        let (to_root, to_rel) = self.locate(to)?;
        if from.mount_root || to.mount_root {
            return Err(errno(Errno::BUSY));
        }
        if from.writable && self.quota_of(to).is_some() && self.quota_of(from).is_none() {
            // From the shared volume it would enter the quota unseen: `mv` copies instead, and
            // the copy is charged.
            return Err(errno(Errno::XDEV));
        }
        from_root
            .dir()
            .rename(from_rel, to_root.dir(), to_rel)
            .map_err(|e| {
                // Name the side whose path leads out.
                if confined::is_escape(&e) && self.metadata(from, false).is_ok() {
                    to.io_error(e)
                } else {
                    from.io_error(e)
                }
            })
    }

    /// The text of a symlink, as written.
    ///
    /// # Errors
    /// When it is not a symlink or cannot be read.
    pub(crate) fn read_link(&self, r: &Resolved) -> Result<PathBuf, FsError> {
        let (root, rel) = self.locate_entry(r, Errno::INVAL)?;
        root.dir()
            .read_link_contents(rel)
            .map_err(|e| r.io_error(e))
    }

    /// Creates the symlink `at` with the text `target`, as written (it is only text: what it
    /// names is resolved, beneath a root, by whoever follows it later).
    ///
    /// # Errors
    /// When something exists at `at`, or it cannot be created.
    pub(crate) fn symlink(&self, target: &Path, at: &Resolved) -> Result<(), FsError> {
        let (root, rel) = self.locate(at)?;
        if at.mount_root {
            return Err(errno(Errno::EXIST));
        }
        let growth = Amount {
            bytes: target.as_os_str().len() as u64,
            entries: 1,
        };
        self.charge(at, growth)?;
        root.dir().symlink_contents(target, rel).map_err(|e| {
            self.release(at, growth);
            at.io_error(e)
        })
    }

    /// Sets the permission bits (a symlink is followed beneath the root).
    ///
    /// # Errors
    /// When it does not exist or cannot be changed.
    pub(crate) fn set_mode(&self, r: &Resolved, mode: u32) -> Result<(), FsError> {
        let (root, rel) = self.locate(r)?;
        root.dir()
            .set_permissions(rel, Permissions::from_mode(mode))
            .map_err(|e| r.io_error(e))
    }

    /// `touch`: sets the modification time of an existing file or directory to `at` (now when
    /// `None`), or creates an empty regular file when `create`.
    ///
    /// # Errors
    /// When it is neither a file nor a directory, or cannot be changed or created.
    pub(crate) fn touch(
        &self,
        r: &Resolved,
        create: bool,
        at: Option<SystemTime>,
    ) -> Result<(), FsError> {
        let (root, rel) = self.locate(r)?;
        let when = || {
            at.map_or(SystemTimeSpec::SymbolicNow, |t| {
                SystemTimeSpec::Absolute(cap_std::time::SystemTime::from_std(t))
            })
        };
        match self.lstat(r) {
            Ok(m) if m.kind == Kind::File || m.kind == Kind::Dir => {
                let set = if r.follow {
                    root.dir().set_mtime(rel, when())
                } else {
                    root.dir().set_symlink_times(rel, None, Some(when()))
                };
                set.map_err(|e| r.io_error(e))
            }
            Ok(_) => Err(not_regular()),
            Err(e @ FsError::Escape { .. }) => Err(e),
            Err(_) if !create => Ok(()),
            Err(_) => {
                let file = self.open_write(r, true)?;
                let at = at.unwrap_or_else(SystemTime::now);
                file.set_modified(at).map_err(FsError::Io)
            }
        }
    }

    /// Whether both nodes exist and are the same file (same device and inode, symlinks
    /// followed): a hard link counts, as for coreutils.
    pub(crate) fn same_file(&self, a: &Resolved, b: &Resolved) -> bool {
        match (self.raw_metadata(a, true), self.raw_metadata(b, true)) {
            (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
            _ => false,
        }
    }

    /// The canonical guest path of a resolved node (symlinks inside the mount resolved), for
    /// `realpath`. What does not exist yet is appended as written.
    pub(crate) fn guest_of(&self, r: &Resolved) -> String {
        let Ok((root, rel)) = self.locate(r) else {
            return r.guest.clone();
        };
        if r.mount_root {
            return r.guest.clone();
        }
        let mut probe = rel.to_path_buf();
        let mut missing: Vec<OsString> = Vec::new();
        loop {
            // cap-std's canonicalize resolves beneath the root and answers relative to it.
            let found = if probe.as_os_str().is_empty() {
                Ok(PathBuf::from("."))
            } else if r.follow || !missing.is_empty() {
                root.dir().canonicalize(&probe)
            } else {
                // The last component itself, not followed: canonical parent plus its name.
                let parent = probe.parent().unwrap_or(Path::new(""));
                let canonical = if parent.as_os_str().is_empty() {
                    Ok(PathBuf::from("."))
                } else {
                    root.dir().canonicalize(parent)
                };
                canonical.map(|p| p.join(probe.file_name().unwrap_or_default()))
            };
            match found {
                Ok(mut real) => {
                    for name in missing.iter().rev() {
                        real.push(name);
                    }
                    return guest_path(&r.mount, &real);
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => match probe.file_name() {
                    Some(name) => {
                        missing.push(name.to_os_string());
                        probe.pop();
                    }
                    None => return r.guest.clone(),
                },
                Err(_) => return r.guest.clone(),
            }
        }
    }

    /// The text of a symlink for display. A target spelled as a host path inside a mount is
    /// shown as its guest path, one that names an existing guest path as written, and any other
    /// absolute target as `<outside the sandbox>`, so no host path is ever printed.
    pub(crate) fn link_text(&self, r: &Resolved) -> Option<String> {
        let target = self.read_link(r).ok()?;
        if !target.is_absolute() {
            return Some(target.to_string_lossy().into_owned());
        }
        // String comparison only: nothing is opened through the target.
        for m in &self.mounts {
            for host in &m.host_names {
                if let Ok(rest) = target.strip_prefix(host) {
                    return Some(guest_path(&m.guest, rest));
                }
            }
        }
        // Text that names an existing guest path (a guest wrote it) is shown as written; a host
        // path that merely looks like one (host temp dirs live under /tmp too) is not.
        let text = target.to_string_lossy();
        let exists = self
            .resolve_guest(normalize("/", &text), Access::Read, false)
            .is_ok_and(|g| self.lstat(&g).is_ok());
        if exists {
            return Some(text.into_owned());
        }
        Some(OUTSIDE_TARGET.to_string())
    }
}

/// A root handle on the directory `parent` beneath the mount's root (in-mount links on the
/// way followed, as for any other path).
fn parent_root(root: &Root, parent: &Path, r: &Resolved) -> Result<Root, FsError> {
    if parent.as_os_str().is_empty() {
        return root.try_clone().map_err(FsError::Io);
    }
    // Opened beneath the mount (links inside it followed): a root of its own from here on.
    root.dir()
        .open_dir(parent)
        .map(Root::from)
        .map_err(|e| r.io_error(e))
}
