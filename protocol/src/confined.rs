//! The confined filesystem layer: every host-side access made on behalf of a session goes
//! through a [`Root`], a capability handle on one directory. The supervisor uses it for
//! resources, packages, workspace listings, reset and destroy; a worker's shell uses it for every
//! built-in command over `/app`, `/tmp`, `/data` and the shared volume.
//!
//! Paths handed to a [`Root`] are resolved by the kernel beneath its handle: cap-std calls
//! `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS` (and resolves by hand, one component
//! at a time, where `openat2` is missing). A symlink that stays inside is followed, like
//! Wasmtime does for the guest; `..`, an absolute symlink or one that climbs out fails with an
//! escape error ([`is_escape`]). Nothing is canonicalised and then opened, so a directory swapped
//! for a symlink between two calls cannot redirect the second.
//!
//! Guest-made trees are hostile in shape as well as in links:
//! - [`Root::remove_tree`] deletes whatever a guest built (links, `chmod 000` directories,
//!   10^5 files, 10^4 levels) while holding two descriptors at a time, and never follows a link;
//! - [`Root::open_regular`] refuses FIFOs, sockets and devices without blocking on them;
//! - [`Root::walk`] lists without following links, with bounds on entries and depth;
//! - [`usage_of`] counts entries and bytes for disk quotas the same way, with bounded
//!   descriptors at any depth;
//! - [`Root::replace_from`] moves a server-made entry in by `renameat`, so a guest's hard link
//!   or symlink at the destination is replaced, never written through.

use std::collections::HashSet;
use std::ffi::{CString, OsStr, OsString};
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;
use std::time::SystemTime;

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, File, FileTypeExt, Metadata, OpenOptions, OpenOptionsExt};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};

/// Where `remove_tree` reads directory entries in batches: the most names held at once.
const REMOVE_BATCH: usize = 65_536;

/// How often `remove_tree` re-lists a directory that refilled while it was being emptied
/// (something still writing into it) before giving up.
const REMOVE_RETRIES: usize = 8;

/// The file types a session can hold, as far as host-side code cares. Listings show them as
/// `file`, `dir`, `symlink`, `fifo`, `socket` or `device`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    Fifo,
    Socket,
    #[serde(rename = "device")]
    CharDevice,
    #[serde(rename = "device")]
    BlockDevice,
}

impl EntryKind {
    /// The kind of a cap-std file type.
    pub fn of(file_type: cap_std::fs::FileType) -> Self {
        if file_type.is_symlink() {
            EntryKind::Symlink
        } else if file_type.is_dir() {
            EntryKind::Dir
        } else if file_type.is_file() {
            EntryKind::File
        } else if file_type.is_fifo() {
            EntryKind::Fifo
        } else if file_type.is_socket() {
            EntryKind::Socket
        } else if file_type.is_char_device() {
            EntryKind::CharDevice
        } else {
            EntryKind::BlockDevice
        }
    }

    /// How messages name it.
    pub fn name(self) -> &'static str {
        match self {
            EntryKind::File => "file",
            EntryKind::Dir => "directory",
            EntryKind::Symlink => "symbolic link",
            EntryKind::Fifo => "FIFO",
            EntryKind::Socket => "socket",
            EntryKind::CharDevice => "character device",
            EntryKind::BlockDevice => "block device",
        }
    }
}

/// Why a confined operation was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfinedError {
    /// The path, or a symlink on it, leads outside the root.
    #[error("the path leads outside its directory")]
    Escape,
    /// Not a plain relative path (absolute, empty, or with `..`) where one was required.
    #[error("not a plain relative path")]
    BadPath,
    /// The last component is a symlink and the operation does not follow links.
    #[error("is a symbolic link")]
    Symlink,
    /// A regular file was required.
    #[error("not a regular file (a {})", .0.name())]
    NotRegular(EntryKind),
    /// A real directory was required.
    #[error("not a directory (a {})", .0.name())]
    NotDirectory(EntryKind),
    /// Over a size or count limit.
    #[error("{what} is over the limit of {limit}")]
    TooLarge { what: String, limit: u64 },
    #[error("{}", describe(.0))]
    Io(io::Error),
}

impl From<io::Error> for ConfinedError {
    fn from(e: io::Error) -> Self {
        if is_escape(&e) {
            ConfinedError::Escape
        } else {
            ConfinedError::Io(e)
        }
    }
}

impl ConfinedError {
    /// The I/O error kind underneath, if any.
    pub fn io_kind(&self) -> Option<io::ErrorKind> {
        match self {
            ConfinedError::Io(e) => Some(e.kind()),
            _ => None,
        }
    }
}

/// The `strerror` text of an I/O error without std's `(os error N)`, so messages read like
/// coreutils' and carry no path.
pub fn describe(e: &io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

/// True for the error cap-std gives when a path or a symlink on it leads outside the root.
/// (cap-std builds it as `PermissionDenied` with a fixed text; a unit test pins that text, so an
/// upgrade that changes it fails loudly instead of turning escapes into plain permission errors.)
pub fn is_escape(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::PermissionDenied
        && e.raw_os_error().is_none()
        && e.to_string() == "a path led outside of the filesystem"
}

/// Whether the last component of a path may be a symlink that is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follow {
    /// Follow it (it must still resolve beneath the root).
    Yes,
    /// Refuse it ([`ConfinedError::Symlink`]).
    No,
}

/// One entry found by [`Root::walk`].
#[derive(Debug, Clone)]
pub struct WalkEntry {
    /// Relative to the walked root, `/`-separated (lossy UTF-8 for names that are not).
    pub path: String,
    pub kind: EntryKind,
    /// Bytes, for regular files; 0 otherwise.
    pub size: u64,
    pub modified: Option<SystemTime>,
}

/// What [`Root::walk`] found.
#[derive(Debug, Clone, Default)]
pub struct Walk {
    /// Sorted by path.
    pub entries: Vec<WalkEntry>,
    /// More entries exist than were listed (the entry or depth bound was hit).
    pub truncated: bool,
}

impl Walk {
    /// Lists `dir` (at `prefix`, `depth` levels down) into the walk and returns its
    /// subdirectories to enter, by raw name and path; `None` once the entry bound is hit.
    fn list_dir(
        &mut self,
        dir: &Root,
        prefix: &str,
        depth: usize,
        limits: WalkLimits,
        skip: &[&str],
    ) -> Option<Vec<(OsString, String)>> {
        let mut subdirs = Vec::new();
        let Ok(entries) = dir.dir.entries() else {
            return Some(subdirs);
        };
        for entry in entries.flatten() {
            let raw_name = entry.file_name();
            let name = raw_name.to_string_lossy();
            if skip.contains(&name.as_ref()) {
                continue;
            }
            if self.entries.len() >= limits.max_entries {
                self.truncated = true;
                return None;
            }
            // The entry's own metadata, never its target's.
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            let kind = EntryKind::of(meta.file_type());
            let path = if prefix.is_empty() {
                name.into_owned()
            } else {
                format!("{prefix}/{name}")
            };
            if kind == EntryKind::Dir {
                if depth + 1 > limits.max_depth {
                    self.truncated = true;
                } else {
                    subdirs.push((raw_name.clone(), path.clone()));
                }
            }
            self.entries.push(WalkEntry {
                path,
                kind,
                size: if kind == EntryKind::File {
                    meta.len()
                } else {
                    0
                },
                modified: meta
                    .modified()
                    .ok()
                    .map(cap_std::time::SystemTime::into_std),
            });
        }
        Some(subdirs)
    }
}

/// Bounds of [`Root::walk`].
#[derive(Debug, Clone, Copy)]
pub struct WalkLimits {
    pub max_entries: usize,
    /// Directories deeper than this are listed but not entered.
    pub max_depth: usize,
}

/// Bounds of [`Root::copy_tree_into`].
#[derive(Debug, Clone, Copy)]
pub struct CopyLimits {
    pub max_bytes: u64,
    pub max_files: u64,
    pub max_depth: usize,
}

/// What the trees below some roots hold, as a disk quota counts it ([`usage_of`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Bytes of regular files (a file with several hard links counts once) and of symlink
    /// texts. Apparent sizes: a sparse file counts its full length.
    pub bytes: u64,
    /// Files, directories, links and anything else below the roots (not the roots).
    pub entries: u64,
    /// False when counting stopped early (more than the entry bound, a directory that could not
    /// be read, a tree moved while it was counted): the numbers are then a lower bound.
    pub complete: bool,
}

/// A directory handle that every path is resolved beneath.
#[derive(Debug)]
pub struct Root {
    dir: Dir,
}

impl Root {
    /// Opens a directory the server made or was configured with. Never call it with a path a
    /// guest or a client chose: that is what the other methods are for.
    ///
    /// # Errors
    /// When `path` is not an openable directory.
    pub fn open_ambient(path: &Path) -> io::Result<Self> {
        Dir::open_ambient_dir(path, cap_std::ambient_authority()).map(|dir| Self { dir })
    }

    /// The cap-std handle, for operations this module does not wrap (the shell's commands).
    /// It confines every path exactly as the methods here do.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// Another handle on the same directory.
    ///
    /// # Errors
    /// When the descriptor cannot be duplicated.
    pub fn try_clone(&self) -> io::Result<Self> {
        self.dir.try_clone().map(|dir| Self { dir })
    }

    /// Creates the directory `name` (mode 0700; it must not exist yet) and opens it.
    ///
    /// # Errors
    /// When `name` is not a single component, exists, or cannot be created.
    pub fn create_private_dir(&self, name: &str) -> Result<Root, ConfinedError> {
        let name = single_component(Path::new(name))?;
        let mut builder = cap_std::fs::DirBuilder::new();
        cap_std::fs::DirBuilderExt::mode(&mut builder, 0o700);
        self.dir.create_dir_with(&name, &builder)?;
        self.open_dir_nofollow(Path::new(&name))
    }

    /// Opens the directory at `rel`, following symlinks that stay beneath this root (as the
    /// guest's own view of the mount does).
    ///
    /// # Errors
    /// Escapes, and I/O errors (`ENOTDIR` for a non-directory).
    pub fn open_dir(&self, rel: &Path) -> Result<Root, ConfinedError> {
        let rel = plain_relative(rel)?;
        Ok(Root {
            dir: self.dir.open_dir(&rel)?,
        })
    }

    /// Opens the real directory at `rel`: its last component may not be a symlink (the ones
    /// above it are followed beneath the root).
    ///
    /// # Errors
    /// [`ConfinedError::NotDirectory`] for anything but a directory, escapes, I/O errors.
    pub fn open_dir_nofollow(&self, rel: &Path) -> Result<Root, ConfinedError> {
        let rel = plain_relative(rel)?;
        match self.dir.open_dir_nofollow(&rel) {
            Ok(dir) => Ok(Root { dir }),
            Err(e) if is_errno(&e, rustix::io::Errno::LOOP) => {
                Err(ConfinedError::NotDirectory(EntryKind::Symlink))
            }
            Err(e) if is_errno(&e, rustix::io::Errno::NOTDIR) => {
                let kind = self.kind_of(&rel).unwrap_or(EntryKind::File);
                Err(ConfinedError::NotDirectory(kind))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The real directory `name` in this root, created (mode 0755) when missing. A symlink, a
    /// file or anything else in its place is refused, never replaced: it is the guest's.
    ///
    /// # Errors
    /// [`ConfinedError::NotDirectory`] when something else has the name.
    pub fn ensure_dir(&self, name: &Path) -> Result<Root, ConfinedError> {
        let name = single_component(name)?;
        match self.dir.create_dir(&name) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e.into()),
        }
        self.open_dir_nofollow(Path::new(&name))
    }

    /// The kind of the entry at `rel`, without following a symlink there.
    ///
    /// # Errors
    /// When it does not exist or cannot be examined.
    pub fn kind_of(&self, rel: &Path) -> Result<EntryKind, ConfinedError> {
        let rel = plain_relative(rel)?;
        Ok(EntryKind::of(self.dir.symlink_metadata(&rel)?.file_type()))
    }

    /// Opens the regular file at `rel` for reading. FIFOs, sockets and devices are refused
    /// without blocking (the open is non-blocking and the type is checked on the descriptor,
    /// so a swap between a check and the open cannot fool it).
    ///
    /// # Errors
    /// [`ConfinedError::NotRegular`], [`ConfinedError::Symlink`] (with [`Follow::No`]), escapes
    /// and I/O errors.
    pub fn open_regular(
        &self,
        rel: &Path,
        follow: Follow,
    ) -> Result<(File, Metadata), ConfinedError> {
        self.open_regular_with(rel, follow, false)
    }

    /// [`Root::open_regular`], open for writing too (to cut a file back, say).
    ///
    /// # Errors
    /// As [`Root::open_regular`].
    pub fn open_regular_writable(
        &self,
        rel: &Path,
        follow: Follow,
    ) -> Result<(File, Metadata), ConfinedError> {
        self.open_regular_with(rel, follow, true)
    }

    fn open_regular_with(
        &self,
        rel: &Path,
        follow: Follow,
        write: bool,
    ) -> Result<(File, Metadata), ConfinedError> {
        let rel = plain_relative(rel)?;
        let mut options = OpenOptions::new();
        options
            .read(true)
            .write(write)
            .custom_flags((OFlags::NONBLOCK | OFlags::NOCTTY).bits() as i32);
        if follow == Follow::No {
            options.follow(FollowSymlinks::No);
        }
        let file = match self.dir.open_with(&rel, &options) {
            Ok(file) => file,
            Err(e) if follow == Follow::No && is_errno(&e, rustix::io::Errno::LOOP) => {
                return Err(ConfinedError::Symlink);
            }
            Err(e) => return Err(e.into()),
        };
        let meta = file.metadata()?;
        let kind = EntryKind::of(meta.file_type());
        if kind != EntryKind::File {
            return Err(ConfinedError::NotRegular(kind));
        }
        // Regular files ignore O_NONBLOCK; clear it anyway so the handle behaves normally.
        let fd = file.as_fd();
        let flags = rustix::fs::fcntl_getfl(fd).map_err(io::Error::from)?;
        rustix::fs::fcntl_setfl(fd, flags - OFlags::NONBLOCK).map_err(io::Error::from)?;
        Ok((file, meta))
    }

    /// Reads the regular file at `rel`, refusing one larger than `limit` bytes.
    ///
    /// # Errors
    /// As [`Root::open_regular`], and [`ConfinedError::TooLarge`].
    pub fn read_regular(
        &self,
        rel: &Path,
        follow: Follow,
        limit: u64,
    ) -> Result<Vec<u8>, ConfinedError> {
        let (file, meta) = self.open_regular(rel, follow)?;
        let too_large = |size: u64| ConfinedError::TooLarge {
            what: format!("a file of {size} bytes"),
            limit,
        };
        if meta.len() > limit {
            return Err(too_large(meta.len()));
        }
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        // A file that grows while it is read stops at the limit too.
        file.take(limit + 1).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > limit {
            return Err(too_large(bytes.len() as u64));
        }
        Ok(bytes)
    }

    /// Creates the regular file `rel` (it must not exist; mode 0644) and its missing parent
    /// directories, for writing. Used in server-owned staging directories.
    ///
    /// # Errors
    /// When it exists, escapes, or cannot be created.
    pub fn create_new_file(&self, rel: &Path) -> Result<File, ConfinedError> {
        let rel = plain_relative(rel)?;
        if let Some(parent) = rel.parent().filter(|p| !p.as_os_str().is_empty()) {
            self.dir.create_dir_all(parent)?;
        }
        let mut options = OpenOptions::new();
        options
            .write(true)
            .create_new(true)
            .follow(FollowSymlinks::No)
            .mode(0o644);
        Ok(self.dir.open_with(&rel, &options)?)
    }

    /// Lists the tree below this root without following any symlink: links are entries of
    /// their own, FIFOs and devices are listed but never opened.
    ///
    /// `skip_top` names top-level entries to leave out (with everything below them).
    pub fn walk(&self, limits: WalkLimits, skip_top: &[&str]) -> Walk {
        /// A directory still to list: its name in `parent`, which stays open only while such
        /// entries below it remain.
        struct Pending {
            parent: Rc<Root>,
            name: OsString,
            path: String,
            depth: usize,
        }
        let mut walk = Walk::default();
        let Ok(top) = self.try_clone() else {
            return walk;
        };
        // Depth-first; a directory is opened only when its turn comes, so the open descriptors
        // are bounded by the depth (at most `max_depth`), never by how many subdirectories one
        // directory holds.
        let mut stack: Vec<Pending> = Vec::new();
        let mut current = Some((Rc::new(top), String::new(), 0));
        loop {
            if let Some((dir, prefix, depth)) = current.take() {
                let skip = if depth == 0 { skip_top } else { &[] };
                let Some(subdirs) = walk.list_dir(&dir, &prefix, depth, limits, skip) else {
                    break; // the entry bound
                };
                for (name, path) in subdirs.into_iter().rev() {
                    let parent = dir.clone();
                    stack.push(Pending {
                        parent,
                        name,
                        path,
                        depth: depth + 1,
                    });
                }
            }
            let Some(next) = stack.pop() else {
                break;
            };
            if let Ok(dir) = next.parent.open_dir_nofollow(Path::new(&next.name)) {
                current = Some((Rc::new(dir), next.path, next.depth));
            }
        }
        walk.entries.sort_by(|a, b| a.path.cmp(&b.path));
        walk
    }

    /// What the tree below this root holds; see [`usage_of`].
    pub fn usage(&self, max_entries: u64) -> Usage {
        usage_of(&[self], max_entries)
    }

    /// Deletes the entry `name` of this root and, for a directory, everything below it, whatever
    /// a guest did to it. A missing entry is not an error.
    ///
    /// Links are removed, never followed. Directories without permissions (`chmod 000` by the
    /// guest) are made accessible first, which a server that is not root needs. The walk goes
    /// down by name and back up by `..`, checking each parent's identity, so it holds two
    /// descriptors at any depth.
    ///
    /// # Errors
    /// When something cannot be removed, or the tree is moved while it is being removed.
    pub fn remove_tree(&self, name: &Path) -> Result<(), ConfinedError> {
        let name = single_component(name)?;
        remove_tree_at(self.dir.as_fd(), &cstring(&name)?).map_err(ConfinedError::from)
    }

    /// Deletes everything inside this root (not the root itself), as [`Root::remove_tree`]
    /// does for each entry. Every entry is tried; the first error is returned.
    ///
    /// # Errors
    /// As [`Root::remove_tree`].
    pub fn remove_children(&self) -> Result<(), ConfinedError> {
        let dir = readable_dir(self.dir.as_fd())?;
        let fd = dir.as_fd();
        // The guest may have taken our own permissions away (the shell's `chmod 000 /app`).
        let _ = rustix::fs::fchmod(fd, Mode::from_raw_mode(0o700));
        let mut first_error = None;
        for _ in 0..REMOVE_RETRIES {
            let (names, more) = read_names(fd, REMOVE_BATCH)?;
            for (name, _) in &names {
                if let Err(e) = remove_tree_at(fd, name) {
                    first_error.get_or_insert(e);
                }
            }
            if !more {
                break;
            }
        }
        match first_error {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// Moves the entry `name` of `from` to `to_name` in this root, replacing what is there: a
    /// guest's link, file or directory under that name is removed (not followed), then the
    /// entry is renamed in. Both roots must be on one filesystem (they are: everything lives
    /// in the server's state directory).
    ///
    /// # Errors
    /// When either name is not a single component, or the removal or rename fails.
    pub fn replace_from(
        &self,
        to_name: &Path,
        from: &Root,
        name: &Path,
    ) -> Result<(), ConfinedError> {
        let to_name = cstring(&single_component(to_name)?)?;
        let name = cstring(&single_component(name)?)?;
        let mut last = None;
        // A running guest may recreate the name between the removal and the rename; the
        // rename itself never follows the destination, so retrying is safe.
        for _ in 0..3 {
            remove_tree_at(self.dir.as_fd(), &to_name)?;
            match rustix::fs::renameat(from.dir.as_fd(), &*name, self.dir.as_fd(), &*to_name) {
                Ok(()) => return Ok(()),
                Err(e) => last = Some(io::Error::from(e)),
            }
        }
        Err(last.map_or(ConfinedError::BadPath, ConfinedError::Io))
    }

    /// Copies the directory `src` of this root into `to` as `to_name` (which must not exist):
    /// directories and regular files only; symlinks, FIFOs and devices are skipped, so a
    /// package cannot smuggle a link in.
    ///
    /// # Errors
    /// [`ConfinedError::TooLarge`] over `limits`, and I/O errors.
    pub fn copy_tree_into(
        &self,
        src: &Path,
        to: &Root,
        to_name: &Path,
        limits: CopyLimits,
    ) -> Result<(), ConfinedError> {
        let source = self.open_dir_nofollow(src)?;
        let to_name = single_component(to_name)?;
        let target = to.create_private_dir(&to_name.to_string_lossy())?;
        source.copy_contents(target, limits, false).map(drop)
    }

    /// Copies everything in this root into `into` (which should be empty): directories,
    /// regular files and symlinks (as links, their text copied, never followed); FIFOs,
    /// sockets and devices are skipped. What a session's `/app` holds, for a checkpoint or a
    /// fork. Returns the bytes and entries copied, as a disk quota counts them.
    ///
    /// # Errors
    /// [`ConfinedError::TooLarge`] over `limits`, and I/O errors; what was copied stays.
    pub fn copy_contents_into(
        &self,
        into: &Root,
        limits: CopyLimits,
    ) -> Result<Usage, ConfinedError> {
        self.try_clone()?
            .copy_contents(into.try_clone()?, limits, true)
    }

    fn copy_contents(
        self,
        into: Root,
        limits: CopyLimits,
        links: bool,
    ) -> Result<Usage, ConfinedError> {
        let mut copied = Usage {
            complete: true,
            ..Usage::default()
        };
        let mut files = 0u64;
        let mut stack = vec![(self, into, 0usize)];
        while let Some((from, into, depth)) = stack.pop() {
            for entry in from.dir.entries()? {
                let entry = entry?;
                let name = PathBuf::from(entry.file_name());
                let kind = EntryKind::of(entry.metadata()?.file_type());
                let copies = matches!(kind, EntryKind::Dir | EntryKind::File)
                    || (links && kind == EntryKind::Symlink);
                if !copies {
                    continue;
                }
                copied.entries += 1;
                if kind != EntryKind::Dir {
                    files += 1;
                    if files > limits.max_files {
                        return Err(ConfinedError::TooLarge {
                            what: "the number of files".into(),
                            limit: limits.max_files,
                        });
                    }
                }
                match kind {
                    EntryKind::Dir => {
                        if depth + 1 > limits.max_depth {
                            return Err(ConfinedError::TooLarge {
                                what: "the directory depth".into(),
                                limit: limits.max_depth as u64,
                            });
                        }
                        let sub_from = from.open_dir_nofollow(&name)?;
                        into.dir.create_dir(&name)?;
                        let sub_into = into.open_dir_nofollow(&name)?;
                        stack.push((sub_from, sub_into, depth + 1));
                    }
                    EntryKind::File => {
                        let (mut input, _) = from.open_regular(&name, Follow::No)?;
                        let mut output = into.create_new_file(&name)?;
                        let budget = limits.max_bytes.saturating_sub(copied.bytes);
                        copied.bytes += io::copy(&mut (&mut input).take(budget + 1), &mut output)?;
                        if copied.bytes > limits.max_bytes {
                            return Err(ConfinedError::TooLarge {
                                what: "the total size".into(),
                                limit: limits.max_bytes,
                            });
                        }
                    }
                    EntryKind::Symlink => {
                        let text = from.dir.read_link_contents(&name)?;
                        copied.bytes += text.as_os_str().len() as u64;
                        into.dir.symlink_contents(&text, &name)?;
                    }
                    _ => {}
                }
            }
        }
        Ok(copied)
    }
}

impl From<Dir> for Root {
    /// A directory handle obtained beneath another root is a root of its own.
    fn from(dir: Dir) -> Self {
        Self { dir }
    }
}

/// `rel` as a path of normal components only (no root, no `..`, not empty).
///
/// # Errors
/// [`ConfinedError::BadPath`] otherwise.
pub fn plain_relative(rel: &Path) -> Result<PathBuf, ConfinedError> {
    let mut out = PathBuf::new();
    for component in rel.components() {
        match component {
            Component::Normal(c) => out.push(c),
            Component::CurDir => {}
            _ => return Err(ConfinedError::BadPath),
        }
    }
    if out.as_os_str().is_empty() {
        return Err(ConfinedError::BadPath);
    }
    Ok(out)
}

/// `name` as exactly one normal component.
fn single_component(name: &Path) -> Result<OsString, ConfinedError> {
    let mut components = name.components();
    match (components.next(), components.next()) {
        (Some(Component::Normal(c)), None) => Ok(c.to_os_string()),
        _ => Err(ConfinedError::BadPath),
    }
}

fn cstring(name: &OsStr) -> Result<CString, ConfinedError> {
    CString::new(name.as_bytes()).map_err(|_| ConfinedError::BadPath)
}

fn is_errno(e: &io::Error, errno: rustix::io::Errno) -> bool {
    e.raw_os_error() == Some(errno.raw_os_error())
}

/// Counts what the trees below `roots` hold together, for disk quotas: every entry (file,
/// directory, symlink, anything else) and the bytes of regular files and symlink texts, each
/// inode once across all roots (hard links). Nothing is followed, and nothing but directories is
/// opened; nothing is changed (a directory a guest made unreadable is not counted, and the
/// result says so).
///
/// Bounded: it stops once more than `max_entries` entries are counted, and it holds at most
/// three descriptors at any depth: it goes down by name and back up by `..`, checking each
/// parent's identity, like the removal walk, so neither 10^4 levels nor a directory of 10^5
/// subdirectories runs into the descriptor limit.
pub fn usage_of(roots: &[&Root], max_entries: u64) -> Usage {
    let mut counter = UsageCounter {
        usage: Usage {
            complete: true,
            ..Usage::default()
        },
        linked: HashSet::new(),
        max_entries,
    };
    for root in roots {
        if counter.count_tree(root.dir.as_fd()).is_err() {
            counter.usage.complete = false;
        }
    }
    counter.usage
}

/// The state of one [`usage_of`].
struct UsageCounter {
    usage: Usage,
    /// Inodes with more than one link already counted.
    linked: HashSet<(u64, u64)>,
    max_entries: u64,
}

impl UsageCounter {
    fn over(&self) -> bool {
        self.usage.entries > self.max_entries
    }

    /// Counts the tree below the directory `top`, depth first.
    fn count_tree(&mut self, top: BorrowedFd<'_>) -> io::Result<()> {
        /// One directory on the way down: who it is, and its subdirectories still to count.
        struct Level {
            identity: (u64, u64),
            pending: Vec<CString>,
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        // A readable descriptor of its own (cap-std's handle may be O_PATH).
        let mut current = rustix::fs::openat(top, c".", flags, Mode::empty())?;
        let pending = self.count_dir(current.as_fd())?;
        let mut levels = vec![Level {
            identity: identity(current.as_fd())?,
            pending,
        }];
        while let Some(level) = levels.last_mut() {
            if self.over() {
                self.usage.complete = false;
                return Ok(());
            }
            if let Some(name) = level.pending.pop() {
                let child = match rustix::fs::openat(
                    current.as_fd(),
                    name.as_c_str(),
                    flags | OFlags::NOFOLLOW,
                    Mode::empty(),
                ) {
                    Ok(child) => child,
                    // Unreadable (a guest's `chmod 000`) or gone: its contents are not counted.
                    Err(_) => {
                        self.usage.complete = false;
                        continue;
                    }
                };
                let pending = self.count_dir(child.as_fd()).unwrap_or_else(|_| {
                    self.usage.complete = false;
                    Vec::new()
                });
                levels.push(Level {
                    identity: identity(child.as_fd())?,
                    pending,
                });
                current = child;
                continue;
            }
            levels.pop();
            let Some(parent) = levels.last() else {
                break;
            };
            let up = rustix::fs::openat(current.as_fd(), c"..", flags, Mode::empty())?;
            if identity(up.as_fd())? != parent.identity {
                // The tree was moved while it was counted: stop rather than count elsewhere.
                self.usage.complete = false;
                return Ok(());
            }
            current = up;
        }
        Ok(())
    }

    /// Counts the entries of the open directory `fd`; returns the names of its subdirectories.
    fn count_dir(&mut self, fd: BorrowedFd<'_>) -> io::Result<Vec<CString>> {
        let mut dir = rustix::fs::Dir::read_from(fd)?;
        let mut subdirs = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry?;
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            if entry.file_type() == FileType::Directory {
                self.usage.entries += 1;
                subdirs.push(name.to_owned());
            } else {
                let stat = match rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(stat) => stat,
                    Err(rustix::io::Errno::NOENT) => continue, // removed meanwhile
                    Err(e) => return Err(e.into()),
                };
                self.usage.entries += 1;
                let size = u64::try_from(stat.st_size).unwrap_or(0);
                match FileType::from_raw_mode(stat.st_mode) {
                    FileType::Directory => subdirs.push(name.to_owned()),
                    // A file with several links counts once (its first link seen).
                    FileType::RegularFile
                        if stat.st_nlink <= 1 || self.linked.insert((stat.st_dev, stat.st_ino)) =>
                    {
                        self.usage.bytes = self.usage.bytes.saturating_add(size);
                    }
                    FileType::Symlink => {
                        self.usage.bytes = self.usage.bytes.saturating_add(size);
                    }
                    _ => {}
                }
            }
            if self.over() {
                break;
            }
        }
        Ok(subdirs)
    }
}

/// `(device, inode)`: what "the same directory" means when climbing back up by `..`.
fn identity(fd: BorrowedFd<'_>) -> io::Result<(u64, u64)> {
    let stat = rustix::fs::fstat(fd)?;
    Ok((stat.st_dev, stat.st_ino))
}

/// Up to `limit` entry names of a directory (not `.` or `..`) with their type when the
/// directory listing tells it; the flag says whether more names were left unread.
fn read_names(fd: BorrowedFd<'_>, limit: usize) -> io::Result<(Vec<(CString, FileType)>, bool)> {
    // A descriptor of its own, so every call reads from the first entry (and works when `fd`
    // is an O_PATH handle, which cap-std uses for directories).
    let mut dir = rustix::fs::Dir::new(readable_dir(fd)?)?;
    let mut names = Vec::new();
    while let Some(entry) = dir.read() {
        let entry = entry?;
        let name = entry.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        if names.len() >= limit {
            return Ok((names, true));
        }
        names.push((name.to_owned(), entry.file_type()));
    }
    Ok((names, false))
}

/// A readable descriptor on the directory `fd` (which may be an O_PATH handle), restoring its
/// owner's permissions when a guest removed them.
fn readable_dir(fd: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    match rustix::fs::openat(fd, c".", flags, Mode::empty()) {
        Err(rustix::io::Errno::ACCESS) => {
            chmod_through_proc(fd, 0o700)?;
            Ok(rustix::fs::openat(fd, c".", flags, Mode::empty())?)
        }
        other => Ok(other?),
    }
}

/// chmod of exactly the inode behind `fd` (an O_PATH handle is enough): `fchmod` refuses O_PATH
/// handles, and the magic link in /proc/self/fd cannot be swapped for another file.
fn chmod_through_proc(fd: BorrowedFd<'_>, mode: u32) -> io::Result<()> {
    let proc_path = format!("/proc/self/fd/{}", fd.as_raw_fd());
    Ok(rustix::fs::chmod(
        proc_path.as_str(),
        Mode::from_raw_mode(mode),
    )?)
}

/// Opens the directory `name` of `parent` for removal, without following a symlink. A
/// directory the guest made inaccessible is given back its owner's permissions first.
fn open_dir_for_removal(parent: BorrowedFd<'_>, name: &CString) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match rustix::fs::openat(parent, name.as_c_str(), flags, Mode::empty()) {
        Err(rustix::io::Errno::ACCESS) => {
            // An O_PATH handle needs no permission on the directory itself.
            let path = rustix::fs::openat(
                parent,
                name.as_c_str(),
                OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            chmod_through_proc(path.as_fd(), 0o700)?;
            Ok(rustix::fs::openat(
                parent,
                name.as_c_str(),
                flags,
                Mode::empty(),
            )?)
        }
        other => Ok(other?),
    }
}

/// Removes `name` in `dirfd` if it is not a directory (ignoring a missing one). Returns false
/// when it is a directory after all.
fn unlink_non_dir(dirfd: BorrowedFd<'_>, name: &CString) -> io::Result<bool> {
    match rustix::fs::unlinkat(dirfd, name.as_c_str(), AtFlags::empty()) {
        Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(true),
        Err(rustix::io::Errno::ISDIR) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Unlinks every non-directory entry of the open directory `fd` and returns the names of its
/// subdirectories.
fn clear_files(fd: BorrowedFd<'_>) -> io::Result<Vec<CString>> {
    // Ours again, whatever the guest set: entries can then be unlinked by a server that is
    // not root.
    let _ = rustix::fs::fchmod(fd, Mode::from_raw_mode(0o700));
    let mut subdirs = HashSet::new();
    loop {
        let (names, more) = read_names(fd, REMOVE_BATCH)?;
        let mut progress = false;
        for (name, file_type) in names {
            if subdirs.contains(&name) {
                continue;
            }
            progress = true;
            let is_dir = match file_type {
                FileType::Directory => true,
                FileType::Unknown => {
                    match rustix::fs::statat(fd, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW) {
                        Ok(stat) => FileType::from_raw_mode(stat.st_mode) == FileType::Directory,
                        Err(rustix::io::Errno::NOENT) => continue,
                        Err(e) => return Err(e.into()),
                    }
                }
                _ => false,
            };
            if is_dir || !unlink_non_dir(fd, &name)? {
                subdirs.insert(name);
            }
        }
        if !more || !progress {
            return Ok(subdirs.into_iter().collect());
        }
    }
}

/// One directory on the way down in [`remove_tree_at`].
struct Frame {
    /// Its name in its parent.
    name: CString,
    identity: (u64, u64),
    /// Subdirectories still to remove.
    pending: Vec<CString>,
    /// Times it was found refilled after being emptied.
    retries: usize,
}

fn remove_tree_at(root: BorrowedFd<'_>, name: &CString) -> io::Result<()> {
    match rustix::fs::statat(root, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW) {
        Err(rustix::io::Errno::NOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
        Ok(stat) if FileType::from_raw_mode(stat.st_mode) != FileType::Directory => {
            if unlink_non_dir(root, name)? {
                return Ok(());
            }
        }
        Ok(_) => {}
    }
    let mut current = match open_dir_for_removal(root, name) {
        Ok(fd) => fd,
        Err(e) if is_errno(&e, rustix::io::Errno::NOENT) => return Ok(()),
        // It became something else than a directory: remove that.
        Err(e)
            if is_errno(&e, rustix::io::Errno::NOTDIR) || is_errno(&e, rustix::io::Errno::LOOP) =>
        {
            unlink_non_dir(root, name)?;
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let mut stack = vec![Frame {
        name: name.clone(),
        identity: identity(current.as_fd())?,
        pending: clear_files(current.as_fd())?,
        retries: 0,
    }];
    loop {
        let frame = stack
            .last_mut()
            .expect("the loop ends when the stack is empty");
        if let Some(child) = frame.pending.pop() {
            match open_dir_for_removal(current.as_fd(), &child) {
                Ok(fd) => {
                    let identity = identity(fd.as_fd())?;
                    let pending = clear_files(fd.as_fd())?;
                    current = fd;
                    stack.push(Frame {
                        name: child,
                        identity,
                        pending,
                        retries: 0,
                    });
                }
                Err(e) if is_errno(&e, rustix::io::Errno::NOENT) => {}
                Err(e)
                    if is_errno(&e, rustix::io::Errno::NOTDIR)
                        || is_errno(&e, rustix::io::Errno::LOOP) =>
                {
                    unlink_non_dir(current.as_fd(), &child)?;
                }
                Err(e) => return Err(e),
            }
            continue;
        }
        // Empty now: climb to the parent and remove it from there.
        let done = stack.pop().expect("not empty");
        let parent = match stack.last() {
            None => None,
            Some(up) => {
                let parent = rustix::fs::openat(
                    current.as_fd(),
                    c"..",
                    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                )?;
                if identity(parent.as_fd())? != up.identity {
                    return Err(io::Error::other(
                        "the directory tree was moved while it was being removed",
                    ));
                }
                Some(parent)
            }
        };
        let parent_fd = parent.as_ref().map_or(root, AsFd::as_fd);
        match rustix::fs::unlinkat(parent_fd, done.name.as_c_str(), AtFlags::REMOVEDIR) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => {}
            // Something wrote into it meanwhile: empty it again, a bounded number of times.
            Err(rustix::io::Errno::NOTEMPTY) if done.retries < REMOVE_RETRIES => {
                let pending = clear_files(current.as_fd())?;
                stack.push(Frame {
                    pending,
                    retries: done.retries + 1,
                    ..done
                });
                continue;
            }
            Err(e) => return Err(e.into()),
        }
        match parent {
            None => return Ok(()),
            Some(parent) => current = parent,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    fn root(dir: &Path) -> Root {
        Root::open_ambient(dir).unwrap()
    }

    #[test]
    fn escapes_are_refused_and_recognised() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/in.txt"), "in").unwrap();
        symlink("../../../../../../..", dir.path().join("up")).unwrap();
        symlink(outside.path(), dir.path().join("abs")).unwrap();
        symlink("sub/in.txt", dir.path().join("inside")).unwrap();
        let r = root(dir.path());
        for escape in ["up/etc/passwd", "abs/secret", "up"] {
            let err = r
                .read_regular(Path::new(escape), Follow::Yes, 1 << 20)
                .unwrap_err();
            assert!(matches!(err, ConfinedError::Escape), "{escape}: {err:?}");
        }
        // The exact error cap-std builds for an escape, pinned.
        let raw = r.dir().open("abs/secret").unwrap_err();
        assert!(is_escape(&raw), "{raw:?}");
        assert!(matches!(
            r.read_regular(Path::new("../x"), Follow::Yes, 10),
            Err(ConfinedError::BadPath)
        ));
        assert_eq!(
            r.read_regular(Path::new("inside"), Follow::Yes, 10)
                .unwrap(),
            b"in"
        );
        assert!(matches!(
            r.read_regular(Path::new("inside"), Follow::No, 10),
            Err(ConfinedError::Symlink)
        ));
        assert!(matches!(
            r.read_regular(Path::new("sub/in.txt"), Follow::No, 1),
            Err(ConfinedError::TooLarge { .. })
        ));
        assert!(matches!(
            r.read_regular(Path::new("sub"), Follow::No, 10),
            Err(ConfinedError::NotRegular(EntryKind::Dir))
        ));
    }

    /// A file opened to be written (cut back) is a regular file inside the root, never one a
    /// link points at, and the write goes to that file.
    #[test]
    fn writable_opens_refuse_links_and_what_is_not_a_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("log"), "0123456789").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        symlink("log", dir.path().join("link")).unwrap();
        let r = root(dir.path());
        assert!(matches!(
            r.open_regular_writable(Path::new("link"), Follow::No),
            Err(ConfinedError::Symlink)
        ));
        // A directory is refused by the open itself (EISDIR).
        assert!(
            r.open_regular_writable(Path::new("sub"), Follow::No)
                .is_err()
        );
        let (file, meta) = r
            .open_regular_writable(Path::new("log"), Follow::No)
            .unwrap();
        assert_eq!(meta.len(), 10);
        file.set_len(4).unwrap();
        assert_eq!(std::fs::read(dir.path().join("log")).unwrap(), b"0123");
    }

    #[test]
    fn fifos_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            dir.path().join("pipe"),
            Mode::from_raw_mode(0o644),
        )
        .unwrap();
        let r = root(dir.path());
        assert!(matches!(
            r.read_regular(Path::new("pipe"), Follow::Yes, 10),
            Err(ConfinedError::NotRegular(EntryKind::Fifo))
        ));
        let walk = r.walk(
            WalkLimits {
                max_entries: 10,
                max_depth: 4,
            },
            &[],
        );
        assert_eq!(walk.entries[0].kind, EntryKind::Fifo);
    }

    #[test]
    fn ensure_dir_refuses_what_a_guest_put_in_its_place() {
        let outside = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        symlink(outside.path(), dir.path().join(".packages")).unwrap();
        std::fs::write(dir.path().join("node_modules"), "x").unwrap();
        let r = root(dir.path());
        assert!(matches!(
            r.ensure_dir(Path::new(".packages")),
            Err(ConfinedError::NotDirectory(EntryKind::Symlink))
        ));
        assert!(matches!(
            r.ensure_dir(Path::new("node_modules")),
            Err(ConfinedError::NotDirectory(EntryKind::File))
        ));
        assert!(r.ensure_dir(Path::new("fresh")).is_ok());
        assert!(
            r.ensure_dir(Path::new("fresh")).is_ok(),
            "an existing directory is fine"
        );
        assert!(matches!(
            r.ensure_dir(Path::new("a/b")),
            Err(ConfinedError::BadPath)
        ));
    }

    #[test]
    fn walk_lists_links_without_following_them() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(outside.path().join("hostdir")).unwrap();
        std::fs::write(outside.path().join("hostdir/secret"), "s").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        std::fs::write(dir.path().join("a/b/c.txt"), "abc").unwrap();
        std::fs::create_dir(dir.path().join(".packages")).unwrap();
        symlink(outside.path(), dir.path().join("link")).unwrap();
        let r = root(dir.path());
        let walk = r.walk(
            WalkLimits {
                max_entries: 100,
                max_depth: 8,
            },
            &[".packages"],
        );
        let paths: Vec<(&str, EntryKind, u64)> = walk
            .entries
            .iter()
            .map(|e| (e.path.as_str(), e.kind, e.size))
            .collect();
        assert_eq!(
            paths,
            [
                ("a", EntryKind::Dir, 0),
                ("a/b", EntryKind::Dir, 0),
                ("a/b/c.txt", EntryKind::File, 3),
                ("link", EntryKind::Symlink, 0),
            ]
        );
        assert!(!walk.truncated);
        let shallow = r.walk(
            WalkLimits {
                max_entries: 100,
                max_depth: 1,
            },
            &[],
        );
        assert!(shallow.truncated);
        assert!(shallow.entries.iter().all(|e| e.path != "a/b/c.txt"));
        let few = r.walk(
            WalkLimits {
                max_entries: 2,
                max_depth: 8,
            },
            &[],
        );
        assert!(few.truncated && few.entries.len() == 2);
    }

    /// A tree that is hostile in every way at once: links out, a link loop, 000 directories, a
    /// wide directory and a deep chain longer than PATH_MAX.
    fn hostile_tree(base: &Path, outside: &Path) {
        std::fs::create_dir_all(base.join("locked/inner")).unwrap();
        std::fs::write(base.join("locked/inner/f"), "x").unwrap();
        symlink(outside, base.join("out")).unwrap();
        symlink(outside, base.join("locked/inner/out")).unwrap();
        symlink("loop", base.join("loop")).unwrap();
        std::fs::create_dir(base.join("wide")).unwrap();
        for i in 0..3000 {
            std::fs::write(base.join(format!("wide/f{i}")), "").unwrap();
        }
        // 3000 levels of "d": a path of 6000 bytes, beyond PATH_MAX.
        let deep = root(base);
        let mut fd =
            rustix::fs::openat(deep.dir().as_fd(), ".", OFlags::RDONLY, Mode::empty()).unwrap();
        for _ in 0..3000 {
            rustix::fs::mkdirat(&fd, "d", Mode::from_raw_mode(0o755)).unwrap();
            fd = rustix::fs::openat(&fd, "d", OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())
                .unwrap();
        }
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(0)).unwrap();
        std::fs::set_permissions(
            base.join("locked/inner"),
            std::fs::Permissions::from_mode(0o000),
        )
        .unwrap();
        std::fs::set_permissions(base.join("locked"), std::fs::Permissions::from_mode(0o500))
            .unwrap();
    }

    fn assert_hostile_tree_removed() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("keep"), "k").unwrap();
        let parent = tempfile::tempdir().unwrap();
        let base = parent.path().join("ws");
        std::fs::create_dir(&base).unwrap();
        hostile_tree(&base, outside.path());
        let r = root(parent.path());
        r.remove_tree(Path::new("ws")).unwrap();
        assert!(!base.exists());
        assert_eq!(
            std::fs::read_to_string(outside.path().join("keep")).unwrap(),
            "k"
        );
        // remove_children keeps the root.
        std::fs::create_dir(&base).unwrap();
        hostile_tree(&base, outside.path());
        root(&base).remove_children().unwrap();
        assert_eq!(std::fs::read_dir(&base).unwrap().count(), 0);
        assert!(outside.path().join("keep").exists());
        r.remove_tree(Path::new("missing")).unwrap();
    }

    #[test]
    fn remove_tree_survives_hostile_trees() {
        assert_hostile_tree_removed();
    }

    /// The permission repairs only matter for a server that is not root: when the tests run as
    /// root, the same test runs again in a child process as `nobody`. The child runs a copy of
    /// this test binary in the scratch directory, which anyone may enter: `nobody` may not be
    /// able to reach the checkout (a 0700 home directory).
    #[test]
    fn remove_tree_survives_hostile_trees_without_root() {
        if let Some(marker) = std::env::var_os("CONFINED_TEST_CHILD") {
            assert!(!rustix::process::geteuid().is_root());
            assert_hostile_tree_removed();
            std::fs::write(marker, "ran").unwrap();
            return;
        }
        if !rustix::process::geteuid().is_root() {
            assert_hostile_tree_removed();
            return;
        }
        let scratch = tempfile::tempdir().unwrap();
        std::fs::set_permissions(scratch.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        // A hard link where it can be (no file open for writing that a concurrent fork could
        // inherit, which would make the exec fail with ETXTBSY), else a copy.
        let exe = scratch.path().join("confined-tests");
        let current = std::env::current_exe().unwrap();
        if std::fs::hard_link(&current, &exe).is_err() {
            std::fs::copy(&current, &exe).unwrap();
        }
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut child = std::process::Command::new(&exe);
        child
            .args([
                "--exact",
                "confined::tests::remove_tree_survives_hostile_trees_without_root",
            ])
            .env("CONFINED_TEST_CHILD", scratch.path().join("ran"))
            .env("TMPDIR", scratch.path());
        std::os::unix::process::CommandExt::uid(&mut child, 65534);
        let status = child.status().unwrap();
        assert!(status.success(), "the test as nobody failed: {status}");
        assert!(
            scratch.path().join("ran").exists(),
            "the child did not run the test"
        );
    }

    #[test]
    fn replace_from_replaces_links_without_writing_through_them() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("victim.py"), "original").unwrap();
        let staging = tempfile::tempdir().unwrap();
        std::fs::write(staging.path().join("mod.py"), "new").unwrap();
        std::fs::create_dir(staging.path().join("pkg")).unwrap();
        std::fs::write(staging.path().join("pkg/__init__.py"), "").unwrap();
        let target = tempfile::tempdir().unwrap();
        symlink(
            outside.path().join("victim.py"),
            target.path().join("mod.py"),
        )
        .unwrap();
        std::fs::hard_link(
            outside.path().join("victim.py"),
            target.path().join("hard.py"),
        )
        .unwrap();
        symlink(outside.path(), target.path().join("pkg")).unwrap();
        std::fs::write(staging.path().join("hard.py"), "new").unwrap();
        let (s, t) = (root(staging.path()), root(target.path()));
        for name in ["mod.py", "pkg", "hard.py"] {
            t.replace_from(Path::new(name), &s, Path::new(name))
                .unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(outside.path().join("victim.py")).unwrap(),
            "original"
        );
        assert_eq!(
            std::fs::read_to_string(target.path().join("mod.py")).unwrap(),
            "new"
        );
        assert!(target.path().join("pkg/__init__.py").is_file());
        assert!(!target.path().join("pkg").is_symlink());
        assert!(matches!(
            t.replace_from(Path::new("../x"), &s, Path::new("mod.py")),
            Err(ConfinedError::BadPath)
        ));
    }

    #[test]
    fn copy_tree_skips_links_and_keeps_limits() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        let src = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(src.path().join("pkg/lib")).unwrap();
        std::fs::write(src.path().join("pkg/index.js"), "1234").unwrap();
        std::fs::write(src.path().join("pkg/lib/a.js"), "56").unwrap();
        symlink(outside.path().join("secret"), src.path().join("pkg/leak")).unwrap();
        let to = tempfile::tempdir().unwrap();
        let limits = CopyLimits {
            max_bytes: 100,
            max_files: 10,
            max_depth: 8,
        };
        root(src.path())
            .copy_tree_into(
                Path::new("pkg"),
                &root(to.path()),
                Path::new("copy"),
                limits,
            )
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(to.path().join("copy/lib/a.js")).unwrap(),
            "56"
        );
        assert!(!to.path().join("copy/leak").exists());
        let tight = CopyLimits {
            max_bytes: 5,
            ..limits
        };
        assert!(matches!(
            root(src.path()).copy_tree_into(
                Path::new("pkg"),
                &root(to.path()),
                Path::new("c2"),
                tight
            ),
            Err(ConfinedError::TooLarge { .. })
        ));
    }

    #[test]
    fn new_files_never_replace_or_follow() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        symlink(outside.path().join("x"), dir.path().join("link")).unwrap();
        let r = root(dir.path());
        assert!(r.create_new_file(Path::new("link")).is_err());
        assert!(!outside.path().join("x").exists());
        std::io::Write::write_all(
            &mut r.create_new_file(Path::new("a/b/c.txt")).unwrap(),
            b"c",
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a/b/c.txt")).unwrap(),
            "c"
        );
        assert!(r.create_new_file(Path::new("a/b/c.txt")).is_err());
        let private = r.create_private_dir("p").unwrap();
        assert!(private.dir().dir_metadata().unwrap().is_dir());
        assert!(r.create_private_dir("p").is_err());
    }

    #[test]
    fn usage_counts_entries_and_bytes_without_following_links() {
        let app = tempfile::tempdir().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("big"), vec![0u8; 1 << 16]).unwrap();
        let a = app.path();
        std::fs::create_dir_all(a.join("d/e")).unwrap();
        std::fs::write(a.join("d/e/f.txt"), "12345").unwrap();
        std::fs::write(a.join("g.txt"), "123").unwrap();
        // A hard link counts as an entry, its bytes once (also across roots).
        std::fs::hard_link(a.join("g.txt"), a.join("d/g-link")).unwrap();
        std::fs::hard_link(a.join("g.txt"), tmp.path().join("g-in-tmp")).unwrap();
        // A link counts its text, never its target.
        symlink(outside.path(), a.join("out")).unwrap();
        let text = outside.path().as_os_str().len() as u64;
        let (app_root, tmp_root) = (root(a), root(tmp.path()));
        let usage = app_root.usage(1000);
        assert_eq!(
            usage,
            Usage {
                bytes: 5 + 3 + text,
                entries: 6,
                complete: true
            }
        );
        let both = usage_of(&[&app_root, &tmp_root], 1000);
        assert_eq!((both.bytes, both.entries), (5 + 3 + text, 7));
        // The bound stops the count, and says so.
        let bounded = app_root.usage(2);
        assert!(!bounded.complete && bounded.entries == 3, "{bounded:?}");
        // A directory a guest made unreadable is not counted, and the result says so.
        std::fs::set_permissions(a.join("d/e"), std::fs::Permissions::from_mode(0o000)).unwrap();
        let locked = app_root.usage(1000);
        let root_user = rustix::process::geteuid().is_root();
        assert_eq!(locked.complete, root_user, "{locked:?}");
        std::fs::set_permissions(a.join("d/e"), std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn usage_handles_deep_and_wide_trees_with_few_descriptors() {
        let dir = tempfile::tempdir().unwrap();
        let r = root(dir.path());
        // 3000 levels: more than RLIMIT_NOFILE would allow one descriptor per level.
        let mut deep = r.try_clone().unwrap();
        for _ in 0..3000 {
            deep = deep.ensure_dir(Path::new("d")).unwrap();
        }
        std::io::Write::write_all(&mut deep.create_new_file(Path::new("leaf")).unwrap(), b"xy")
            .unwrap();
        drop(deep);
        // 2000 subdirectories side by side, each with a file.
        for i in 0..2000 {
            let sub = r.ensure_dir(Path::new(&format!("w{i}"))).unwrap();
            std::io::Write::write_all(&mut sub.create_new_file(Path::new("f")).unwrap(), b"z")
                .unwrap();
        }
        let usage = r.usage(100_000);
        assert_eq!(
            usage,
            Usage {
                bytes: 2 + 2000,
                entries: 3000 + 1 + 4000,
                complete: true
            }
        );
        let r2 = root(dir.path());
        r2.remove_children().unwrap();
    }
}
