//! Confinement of every file access of the shell to the session's mounts.
//!
//! A guest path is normalised lexically against the guest cwd (`.` and `..` never climb above
//! `/`), mapped to the mount with the longest matching guest prefix, and refused when it lies
//! outside every mount or when a write targets a read-only mount. What comes out, a [`Resolved`],
//! names a mount and a path *relative to that mount's root*: never a host path.
//!
//! The capability model: [`Fs::new`] opens each mount's host directory once, as a
//! [`Root`] of the confined layer (`sandbox_protocol::confined`), and every file operation of
//! every command is a method of [`Fs`] that hands the relative path to that root's cap-std `Dir`.
//! The kernel resolves it beneath the root (`openat2` with `RESOLVE_BENEATH |
//! RESOLVE_NO_MAGICLINKS`), in the same system call that does the operation: a symlink that stays
//! inside the mount is followed, and one that leads out (absolute, or climbing with `..`) fails
//! the operation with [`FsError::Escape`]. Nothing is canonicalised and then opened, so a
//! directory that a guest swaps for a symlink between two calls (possible on a mount shared with
//! another session) cannot send the second call out of the mount; at worst it lands elsewhere in
//! the same mount, which the guest could write anyway.
//!
//! [`Fs::resolve`] also looks the path up once, so a refusal is reported early and names the
//! guest path; that lookup only decides the message, never what an operation then touches. With
//! `follow == false` the last component is not followed (so `rm link` removes the link, and
//! `ls -l link` shows it); the components above it are followed beneath the root as always.
//! Directory walks ([`Fs::list`]) hand out children that are *not* followed: walkers look at them
//! with [`Fs::lstat`] and never descend into a symlink.
//!
//! Reads of regular files go through `Root::open_regular`, which refuses FIFOs, sockets and
//! devices without blocking on them; writes open non-blocking and check the type on the
//! descriptor. Recursive removal is `Root::remove_tree`, which never follows a link.
//!
//! Growth of `/app` and `/tmp` is charged to the session's disk quota here, before it happens:
//! a created file, directory or link is an entry, and what is written through the [`QuotaFile`]
//! that [`Fs::open_write`] returns is charged as the file grows. A refusal is an I/O error whose
//! text is the refusal (`disk_quota: ...`). A rename from an uncharged mount into a charged one
//! is `EXDEV`, so `mv` copies, and the copy is charged.
//!
//! Host paths never leave this module in messages: errors carry guest paths or the `strerror`
//! text only. `/` and any directory above a mount point are virtual read-only directories whose
//! entries are the mounts, so `ls /` and `cd /` work.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Component, Path, PathBuf};

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt, SystemTimeSpec};
use cap_std::fs::{MetadataExt, OpenOptions, OpenOptionsExt, Permissions, PermissionsExt};
use rustix::fs::OFlags;
use sandbox_protocol::confined::{self, ConfinedError, EntryKind, Follow, Root};

use super::FsView;
use crate::quota::{self, Amount, QuotaFile, SharedQuota};

/// Whether an operation only looks or also changes something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Write,
}

/// Why a guest path may not be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FsError {
    #[error("path_restriction: outside the sandbox (accessible: {mounts})")]
    Outside { guest: String, mounts: String },
    #[error("path_restriction: {mount} is read-only")]
    ReadOnly { guest: String, mount: String },
    #[error("path_restriction: a symbolic link leads outside {mount} (or does not resolve)")]
    Escape { guest: String, mount: String },
    #[error("{}", describe(.0))]
    Io(#[from] io::Error),
}

impl FsError {
    /// The guest path refused by confinement, if that is what this is.
    pub(crate) fn restricted(&self) -> Option<&str> {
        match self {
            FsError::Outside { guest, .. }
            | FsError::ReadOnly { guest, .. }
            | FsError::Escape { guest, .. } => Some(guest),
            FsError::Io(_) => None,
        }
    }

    /// The underlying I/O error kind, for commands that react to "not found" or "exists".
    pub(crate) fn io_kind(&self) -> Option<io::ErrorKind> {
        match self {
            FsError::Io(e) => Some(e.kind()),
            _ => None,
        }
    }
}

/// The `strerror` text of an I/O error, as coreutils prints it (without std's `(os error N)`).
pub(crate) fn describe(e: &io::Error) -> String {
    confined::describe(e)
}

/// An I/O error with an errno, for the refusals commands share with the kernel's wording.
pub(crate) fn errno(code: i32) -> FsError {
    FsError::Io(io::Error::from_raw_os_error(code))
}

/// The refusal of a FIFO, socket or device where a regular file is needed.
fn not_regular() -> FsError {
    FsError::Io(io::Error::other("not a regular file"))
}

/// Linux errno values used for coreutils-like messages.
pub(crate) mod errnos {
    pub const ENOENT: i32 = 2;
    pub const EBUSY: i32 = 16;
    pub const EEXIST: i32 = 17;
    pub const EXDEV: i32 = 18;
    pub const ENOTDIR: i32 = 20;
    pub const EISDIR: i32 = 21;
    pub const EINVAL: i32 = 22;
    pub const EFBIG: i32 = 27;
    pub const ELOOP: i32 = 40;
}

/// `lexically normalises `arg` against `cwd` into an absolute guest path.
pub(crate) fn normalize(cwd: &str, arg: &str) -> String {
    let base = if arg.starts_with('/') { "" } else { cwd };
    let mut parts: Vec<&str> = Vec::new();
    for comp in base.split('/').chain(arg.split('/')) {
        match comp {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    format!("/{}", parts.join("/"))
}

/// `dir/name` without doubling the slash.
pub(crate) fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// The guest path of `rel` beneath the mount at `mount` (`.` components are dropped).
fn guest_path(mount: &str, rel: &Path) -> String {
    let mut out = mount.to_string();
    for comp in rel.components() {
        if let Component::Normal(name) = comp {
            out = join(&out, &name.to_string_lossy());
        }
    }
    out
}

/// The file type, as far as the commands care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
    Symlink,
    Other,
}

/// What `stat` tells the commands.
#[derive(Debug, Clone)]
pub(crate) struct Meta {
    pub kind: Kind,
    pub len: u64,
    pub mode: u32,
    pub nlink: u64,
    /// Seconds since the epoch.
    pub mtime: i64,
    /// 512-byte blocks allocated (disk usage).
    pub blocks: u64,
}

impl Meta {
    fn of(m: &cap_std::fs::Metadata) -> Self {
        let ft = m.file_type();
        let kind = if ft.is_symlink() {
            Kind::Symlink
        } else if ft.is_dir() {
            Kind::Dir
        } else if ft.is_file() {
            Kind::File
        } else {
            Kind::Other
        };
        Self {
            kind,
            len: m.len(),
            mode: m.mode(),
            nlink: m.nlink(),
            mtime: m.mtime(),
            blocks: m.blocks(),
        }
    }

    /// A virtual directory: read-only, empty, dated at the epoch.
    fn virtual_dir() -> Self {
        Self {
            kind: Kind::Dir,
            len: 0,
            mode: 0o40555,
            nlink: 2,
            mtime: 0,
            blocks: 0,
        }
    }

    pub(crate) fn is_dir(&self) -> bool {
        self.kind == Kind::Dir
    }
}

/// Where a resolved guest path lives.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    /// `/` or a directory above a mount point: nothing on the host behind it.
    Virtual,
    /// A mount point itself (index into [`Fs::mounts`]).
    MountRoot(usize),
    /// Something beneath a mount's root: normal components only, never empty.
    Beneath { mount: usize, rel: PathBuf },
}

/// A guest path that passed confinement: a mount and a path beneath its root, for the methods
/// of the [`Fs`] that made it.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    /// Normalised absolute guest path.
    pub guest: String,
    place: Place,
    /// Operations on it follow a symlink in its last component (beneath the root).
    follow: bool,
    /// Guest path of the mount it is in (`/` for virtual directories).
    pub mount: String,
    /// It is the mount point itself, which is never removed or renamed.
    pub mount_root: bool,
    pub writable: bool,
}

impl Resolved {
    pub(crate) fn is_virtual(&self) -> bool {
        self.place == Place::Virtual
    }

    /// The refusal for a file operation on a virtual directory (nothing to open there).
    fn virtual_refusal(&self) -> FsError {
        FsError::ReadOnly {
            guest: self.guest.clone(),
            mount: self.guest.clone(),
        }
    }

    /// The refusal for a symlink on this path that leads out of its mount.
    fn escape(&self) -> FsError {
        FsError::Escape {
            guest: self.guest.clone(),
            mount: self.mount.clone(),
        }
    }

    /// An I/O error met on this path: the confined layer's escape error becomes the refusal.
    fn io_error(&self, e: io::Error) -> FsError {
        if confined::is_escape(&e) {
            self.escape()
        } else {
            FsError::Io(e)
        }
    }

    fn confined_error(&self, e: ConfinedError) -> FsError {
        match e {
            ConfinedError::Escape => self.escape(),
            ConfinedError::NotRegular(EntryKind::Dir) => errno(errnos::EISDIR),
            ConfinedError::NotRegular(_) => not_regular(),
            ConfinedError::NotDirectory(_) => errno(errnos::ENOTDIR),
            ConfinedError::Symlink => errno(errnos::ELOOP),
            ConfinedError::BadPath => errno(errnos::EINVAL),
            ConfinedError::Io(e) => self.io_error(e),
            other => FsError::Io(io::Error::other(other.to_string())),
        }
    }
}

/// One entry of a directory listing.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub name: String,
    /// Not followed: look at it with [`Fs::lstat`].
    pub node: Resolved,
}

struct Mount {
    guest: String,
    /// The handle every access goes through; `None` when the host directory could not be opened
    /// (every access then fails with ENOENT).
    root: Option<Root>,
    /// Host spellings of the root (as configured, and as the kernel names the open handle),
    /// only to show an absolute link target that points into the mount as a guest path. Never
    /// opened.
    host_names: Vec<PathBuf>,
    writable: bool,
    /// What is added here counts against the session's disk quota (`/app`, `/tmp`).
    charged: bool,
}

/// The mounts of a session, each with its root handle.
pub(crate) struct Fs {
    /// Longest guest path first, so the first match is the longest prefix.
    mounts: Vec<Mount>,
    /// The session's disk quota, for the charged mounts.
    quota: Option<SharedQuota>,
}

/// The descriptor flags of every open for writing: a FIFO must not block the shell, and a
/// terminal must not become its controlling one.
fn nonblocking() -> i32 {
    // The flag values fit in the C `int` that open(2) takes.
    (OFlags::NONBLOCK | OFlags::NOCTTY).bits() as i32
}

/// `/proc/self/fd/N`: the kernel's own name for an open descriptor, which cannot be swapped for
/// another file.
fn proc_fd(fd: &impl AsRawFd) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

impl Fs {
    /// Opens every mount's root once. A mount whose host directory cannot be opened stays in
    /// the view (its guest path is still "inside"), and every access to it fails with ENOENT.
    pub(crate) fn new(view: &FsView) -> Self {
        let mut mounts: Vec<Mount> = view
            .mounts
            .iter()
            .map(|m| {
                // The host directory comes from the supervisor, never from the guest.
                let root = Root::open_ambient(&m.host).ok();
                let mut host_names = vec![m.host.clone()];
                // Reading the magic link opens nothing; it only spells the handle's directory.
                if let Some(real) = root
                    .as_ref()
                    .and_then(|r| std::fs::read_link(proc_fd(r.dir())).ok())
                    && !host_names.contains(&real)
                {
                    host_names.push(real);
                }
                Mount {
                    guest: normalize("/", &m.guest),
                    root,
                    host_names,
                    writable: m.writable,
                    charged: false,
                }
            })
            .collect();
        mounts.sort_by_key(|m| std::cmp::Reverse(m.guest.len()));
        Self {
            mounts,
            quota: None,
        }
    }

    /// Charges growth of the mounts `quota` covers to it.
    pub(crate) fn with_quota(mut self, quota: Option<SharedQuota>) -> Self {
        if let Some(q) = &quota {
            let q = quota::lock(q);
            for m in &mut self.mounts {
                m.charged = m.writable && q.covers(&m.guest);
            }
        }
        self.quota = quota;
        self
    }

    /// The quota that growth at `r` is charged to, if any.
    fn quota_of(&self, r: &Resolved) -> Option<&SharedQuota> {
        let index = match &r.place {
            Place::Virtual => return None,
            Place::MountRoot(index) | Place::Beneath { mount: index, .. } => *index,
        };
        self.mounts
            .get(index)
            .filter(|m| m.charged)
            .and(self.quota.as_ref())
    }

    /// Charges `growth` at `r`: refused with the quota's own message.
    fn charge(&self, r: &Resolved, growth: Amount) -> Result<(), FsError> {
        match self.quota_of(r) {
            Some(q) => quota::lock(q)
                .charge(growth, || None)
                .map_err(|refusal| FsError::Io(refusal.into())),
            None => Ok(()),
        }
    }

    /// Gives back a charge whose growth did not happen, or space certainly freed.
    fn release(&self, r: &Resolved, amount: Amount) {
        if let Some(q) = self.quota_of(r) {
            quota::lock(q).release(amount);
        }
    }

    /// The guest mount points, sorted, for messages.
    pub(crate) fn mount_names(&self) -> String {
        let mut names: Vec<&str> = self.mounts.iter().map(|m| m.guest.as_str()).collect();
        names.sort_unstable();
        names.join(", ")
    }

    fn mount_of(&self, guest: &str) -> Option<usize> {
        self.mounts.iter().position(|m| {
            m.guest == "/"
                || guest == m.guest
                || (guest.starts_with(&m.guest) && guest.as_bytes()[m.guest.len()] == b'/')
        })
    }

    /// `/` or a directory above a mount point.
    fn is_virtual(&self, guest: &str) -> bool {
        guest == "/"
            || self.mounts.iter().any(|m| {
                m.guest.starts_with(guest) && m.guest.as_bytes().get(guest.len()) == Some(&b'/')
            })
    }

    /// Resolves `arg` (relative to the guest `cwd`) for `access`, following a symlink in the
    /// last component only when `follow`.
    ///
    /// # Errors
    /// Confinement refusals, and I/O errors met while looking the path up (`ENOTDIR`,
    /// `ELOOP`...). A path that does not exist yet is not an error.
    pub(crate) fn resolve(
        &self,
        cwd: &str,
        arg: &str,
        access: Access,
        follow: bool,
    ) -> Result<Resolved, FsError> {
        self.resolve_guest(normalize(cwd, arg), access, follow)
    }

    /// [`Fs::resolve`] for a normalised absolute guest path.
    ///
    /// # Errors
    /// As [`Fs::resolve`].
    pub(crate) fn resolve_guest(
        &self,
        guest: String,
        access: Access,
        follow: bool,
    ) -> Result<Resolved, FsError> {
        let Some(index) = self.mount_of(&guest) else {
            if self.is_virtual(&guest) {
                if access == Access::Write {
                    let mount = guest.clone();
                    return Err(FsError::ReadOnly { guest, mount });
                }
                return Ok(Resolved {
                    guest,
                    place: Place::Virtual,
                    follow,
                    mount: "/".into(),
                    mount_root: false,
                    writable: false,
                });
            }
            return Err(FsError::Outside {
                guest,
                mounts: self.mount_names(),
            });
        };
        let m = &self.mounts[index];
        if access == Access::Write && !m.writable {
            return Err(FsError::ReadOnly {
                guest,
                mount: m.guest.clone(),
            });
        }
        if m.root.is_none() {
            return Err(errno(errnos::ENOENT));
        }
        let rest = if m.guest == "/" {
            &guest[..]
        } else {
            &guest[m.guest.len()..]
        };
        let rel: PathBuf = rest.split('/').filter(|c| !c.is_empty()).collect();
        let mount_root = rel.as_os_str().is_empty();
        let place = if mount_root {
            Place::MountRoot(index)
        } else {
            Place::Beneath { mount: index, rel }
        };
        let node = Resolved {
            guest,
            place,
            follow,
            mount: m.guest.clone(),
            mount_root,
            writable: m.writable,
        };
        // The early lookup: a refusal now names the guest path. What exists or not is for the
        // operation to find out.
        match self.metadata(&node, follow) {
            Ok(_) => Ok(node),
            Err(e) if e.io_kind() == Some(io::ErrorKind::NotFound) => Ok(node),
            Err(e) => Err(e),
        }
    }

    /// The root handle of a node and its path beneath it (`.` for the mount point).
    fn locate<'a>(&'a self, r: &'a Resolved) -> Result<(&'a Root, &'a Path), FsError> {
        let (index, rel) = match &r.place {
            Place::Virtual => return Err(r.virtual_refusal()),
            Place::MountRoot(index) => (*index, Path::new(".")),
            Place::Beneath { mount, rel } => (*mount, rel.as_path()),
        };
        let root = self
            .mounts
            .get(index)
            .and_then(|m| m.root.as_ref())
            .ok_or_else(|| errno(errnos::ENOENT))?;
        Ok((root, rel))
    }

    /// The cap-std metadata of a real node, following its last component or not.
    fn raw_metadata(&self, r: &Resolved, follow: bool) -> Result<cap_std::fs::Metadata, FsError> {
        let (root, rel) = self.locate(r)?;
        let meta = if r.mount_root {
            root.dir().dir_metadata()
        } else if follow {
            root.dir().metadata(rel)
        } else {
            root.dir().symlink_metadata(rel)
        };
        meta.map_err(|e| r.io_error(e))
    }

    fn metadata(&self, r: &Resolved, follow: bool) -> Result<Meta, FsError> {
        if r.is_virtual() {
            return Ok(Meta::virtual_dir());
        }
        self.raw_metadata(r, follow).map(|m| Meta::of(&m))
    }

    /// The node's own metadata as it was resolved: a symlink is reported as one unless it was
    /// resolved with `follow`.
    ///
    /// # Errors
    /// When the path does not exist, cannot be examined, or leads out of its mount.
    pub(crate) fn lstat(&self, r: &Resolved) -> Result<Meta, FsError> {
        self.metadata(r, r.follow)
    }

    /// `stat`: a symlink is followed, if it stays inside its mount.
    ///
    /// # Errors
    /// As [`Fs::lstat`], plus confinement refusals for escaping symlinks.
    pub(crate) fn stat(&self, r: &Resolved) -> Result<Meta, FsError> {
        self.metadata(r, true)
    }

    /// The node with its last component followed from now on. A symlink that leads out of the
    /// mount is refused here already; one that dangles inside is left for the operation to
    /// report.
    ///
    /// # Errors
    /// As [`Fs::stat`].
    pub(crate) fn follow(&self, r: &Resolved) -> Result<Resolved, FsError> {
        if r.follow || !matches!(r.place, Place::Beneath { .. }) {
            return Ok(r.clone());
        }
        let mut followed = r.clone();
        followed.follow = true;
        if self
            .metadata(r, false)
            .is_ok_and(|m| m.kind == Kind::Symlink)
        {
            match self.metadata(&followed, true) {
                Ok(_) => {}
                Err(e) if e.io_kind() == Some(io::ErrorKind::NotFound) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(followed)
    }

    /// Opens a regular file for reading (a symlink is followed beneath the root). Directories
    /// give `EISDIR`; FIFOs, sockets and devices are refused without blocking.
    ///
    /// # Errors
    /// As [`Fs::stat`], and the open itself.
    pub(crate) fn open_read(&self, r: &Resolved) -> Result<File, FsError> {
        if r.is_virtual() || r.mount_root {
            return Err(errno(errnos::EISDIR));
        }
        let (root, rel) = self.locate(r)?;
        // The usual message for a socket (whose open would say ENXIO); the descriptor check
        // below is what keeps a FIFO or device swapped in meanwhile out.
        if self.stat(r).is_ok_and(|m| m.kind == Kind::Other) {
            return Err(not_regular());
        }
        let (file, _) = root
            .open_regular(rel, Follow::Yes)
            .map_err(|e| r.confined_error(e))?;
        Ok(file.into_std())
    }

    /// Opens (creating) a regular file for writing, truncated unless `append`. Directories give
    /// `EISDIR`; FIFOs, sockets and devices are refused, and the open cannot block on them. What
    /// is written through the returned file is charged to the disk quota as the file grows.
    ///
    /// # Errors
    /// When the target is a directory, virtual, not a regular file, or cannot be opened, or the
    /// disk quota has no room for a new file.
    pub(crate) fn open_write(&self, r: &Resolved, append: bool) -> Result<QuotaFile, FsError> {
        let (root, rel) = self.locate(r)?;
        if r.mount_root {
            return Err(errno(errnos::EISDIR));
        }
        // The usual messages for what is there already...
        let existing = self.lstat(r).ok();
        if let Some(m) = &existing {
            match m.kind {
                Kind::File => {}
                Kind::Dir => return Err(errno(errnos::EISDIR)),
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
                errno(errnos::EISDIR)
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
                Err(errno(errnos::EEXIST))
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
        let (root, rel) = self.locate(r)?;
        if r.mount_root {
            return Err(errno(errnos::EISDIR));
        }
        root.dir()
            .remove_file_or_symlink(rel)
            .map_err(|e| r.io_error(e))
    }

    /// Removes an empty directory. A mount point is busy.
    ///
    /// # Errors
    /// When it is not an empty directory, or cannot be removed.
    pub(crate) fn remove_dir(&self, r: &Resolved) -> Result<(), FsError> {
        let (root, rel) = self.locate(r)?;
        if r.mount_root {
            return Err(errno(errnos::EBUSY));
        }
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
                errno(errnos::EBUSY)
            });
        };
        let (root, _) = self.locate(r)?;
        let name = rel.file_name().ok_or_else(|| errno(errnos::EINVAL))?;
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
            return Err(errno(errnos::EBUSY));
        }
        if from.writable && self.quota_of(to).is_some() && self.quota_of(from).is_none() {
            // From the shared volume it would enter the quota unseen: `mv` copies instead, and
            // the copy is charged.
            return Err(errno(errnos::EXDEV));
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
        let (root, rel) = self.locate(r)?;
        if r.mount_root {
            return Err(errno(errnos::EINVAL));
        }
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
            return Err(errno(errnos::EEXIST));
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

    /// `touch`: sets the modification time of an existing file or directory to now, or creates
    /// an empty regular file when `create`.
    ///
    /// # Errors
    /// When it is neither a file nor a directory, or cannot be changed or created.
    pub(crate) fn touch(&self, r: &Resolved, create: bool) -> Result<(), FsError> {
        let (root, rel) = self.locate(r)?;
        match self.lstat(r) {
            Ok(m) if m.kind == Kind::File || m.kind == Kind::Dir => {
                let set = if r.follow {
                    root.dir().set_mtime(rel, SystemTimeSpec::SymbolicNow)
                } else {
                    root.dir()
                        .set_symlink_times(rel, None, Some(SystemTimeSpec::SymbolicNow))
                };
                set.map_err(|e| r.io_error(e))
            }
            Ok(_) => Err(not_regular()),
            Err(e @ FsError::Escape { .. }) => Err(e),
            Err(_) if !create => Ok(()),
            Err(_) => {
                let file = self.open_write(r, true)?;
                file.set_modified(std::time::SystemTime::now())
                    .map_err(FsError::Io)
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

/// How `ls -l` shows an absolute symlink target outside every mount.
pub(crate) const OUTSIDE_TARGET: &str = "<outside the sandbox>";

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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::shell::MountPoint;
    use std::fs;
    use std::os::unix::fs::{PermissionsExt as _, symlink};

    struct Fixture {
        app: tempfile::TempDir,
        data: tempfile::TempDir,
        outside: tempfile::TempDir,
        fs: Fs,
    }

    fn fixture() -> Fixture {
        let app = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret"), "s").unwrap();
        fs::set_permissions(
            outside.path().join("secret"),
            fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        fs::write(data.path().join("d.txt"), "d").unwrap();
        fs::create_dir(app.path().join("sub")).unwrap();
        let view = FsView {
            mounts: vec![
                MountPoint {
                    guest: "/app".into(),
                    host: app.path().into(),
                    writable: true,
                },
                MountPoint {
                    guest: "/data/".into(),
                    host: data.path().into(),
                    writable: false,
                },
            ],
        };
        let fs = Fs::new(&view);
        Fixture {
            app,
            data,
            outside,
            fs,
        }
    }

    /// The names in a host directory, sorted (shared with the shell's tests).
    pub(crate) fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    impl Fixture {
        /// Replaces the directory `/app/sub` by a symlink to the outside directory, as a guest
        /// racing the shell on a shared mount would, keeping the real one as `sub.real`.
        fn swap_sub_for_a_link_out(&self) {
            let a = self.app.path();
            fs::rename(a.join("sub"), a.join("sub.real")).unwrap();
            symlink(self.outside.path(), a.join("sub")).unwrap();
        }

        /// The outside directory holds only its secret, unchanged.
        fn assert_outside_untouched(&self) {
            assert_eq!(names(self.outside.path()), ["secret"]);
            let secret = self.outside.path().join("secret");
            assert_eq!(fs::read_to_string(&secret).unwrap(), "s");
            let mode = fs::metadata(&secret).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o644, "the secret's mode changed");
        }
    }

    #[test]
    fn normalizes_lexically() {
        assert_eq!(normalize("/app", "x/../y/./z"), "/app/y/z");
        assert_eq!(normalize("/app", "../../../etc"), "/etc");
        assert_eq!(normalize("/app/a", "/"), "/");
        assert_eq!(normalize("/", ".."), "/");
        assert_eq!(normalize("/app", "//data//x/"), "/data/x");
        assert_eq!(join("", "a"), "a");
        assert_eq!(join("/", "a"), "/a");
        assert_eq!(join("d", "a"), "d/a");
        assert_eq!(guest_path("/app", Path::new("./a/b")), "/app/a/b");
        assert_eq!(guest_path("/", Path::new("x")), "/x");
        assert_eq!(guest_path("/app", Path::new(".")), "/app");
    }

    #[test]
    fn maps_mounts_and_refuses_the_rest() {
        let f = fixture();
        let r = f.fs.resolve("/app", "sub", Access::Write, true).unwrap();
        assert_eq!(r.guest, "/app/sub");
        assert!(
            matches!(&r.place, Place::Beneath { rel, .. } if rel == Path::new("sub")),
            "{r:?}"
        );
        assert!(f.fs.stat(&r).unwrap().is_dir());
        let r = f.fs.resolve("/app", "/app", Access::Write, false).unwrap();
        assert!(r.mount_root);
        assert!(matches!(r.place, Place::MountRoot(_)));
        for bad in [
            "/etc/passwd",
            "/proc/self/environ",
            "../../etc",
            "/appx",
            "/ap",
        ] {
            let e = f.fs.resolve("/app", bad, Access::Read, true).unwrap_err();
            assert!(matches!(e, FsError::Outside { .. }), "{bad}: {e}");
            assert!(e.to_string().contains("/app, /data"));
        }
        let e =
            f.fs.resolve("/app", "/data/d.txt", Access::Write, true)
                .unwrap_err();
        assert_eq!(e.restricted(), Some("/data/d.txt"));
        assert_eq!(e.to_string(), "path_restriction: /data is read-only");
        let d = f.fs.resolve("/", "data/d.txt", Access::Read, true).unwrap();
        let mut text = String::new();
        io::Read::read_to_string(&mut f.fs.open_read(&d).unwrap(), &mut text).unwrap();
        assert_eq!(text, "d");
        let host = f.data.path().to_string_lossy().into_owned();
        assert!(f.fs.resolve("/app", &host, Access::Read, true).is_err());
    }

    #[test]
    fn a_missing_mount_directory_is_enoent() {
        let gone = tempfile::tempdir().unwrap();
        let path = gone.path().join("never-made");
        let fs = Fs::new(&FsView {
            mounts: vec![MountPoint {
                guest: "/app".into(),
                host: path,
                writable: true,
            }],
        });
        for arg in ["/app", "/app/x"] {
            let e = fs.resolve("/", arg, Access::Read, true).unwrap_err();
            assert_eq!(e.io_kind(), Some(io::ErrorKind::NotFound), "{arg}: {e}");
        }
    }

    #[test]
    fn virtual_root_lists_mounts_and_is_read_only() {
        let f = fixture();
        let root = f.fs.resolve("/app", "/", Access::Read, true).unwrap();
        assert!(root.is_virtual());
        let names: Vec<String> =
            f.fs.list(&root)
                .unwrap()
                .into_iter()
                .map(|e| e.name)
                .collect();
        assert_eq!(names, ["app", "data"]);
        assert!(f.fs.resolve("/", "/", Access::Write, true).is_err());
        assert!(f.fs.resolve("/", "/new", Access::Write, true).is_err());
        assert!(matches!(
            f.fs.open_write(&root, false),
            Err(FsError::ReadOnly { .. })
        ));
    }

    #[test]
    fn symlinks_out_of_the_mount_are_refused() {
        let f = fixture();
        let a = f.app.path();
        symlink(f.outside.path(), a.join("out")).unwrap();
        symlink(f.outside.path().join("secret"), a.join("secret")).unwrap();
        symlink("/nonexistent/dir", a.join("dangling")).unwrap();
        symlink("sub", a.join("inside")).unwrap();
        for bad in [
            "out",
            "out/secret",
            "secret",
            "out/new",
            "dangling/x",
            "dangling",
        ] {
            let e = f.fs.resolve("/app", bad, Access::Read, true).unwrap_err();
            assert!(matches!(e, FsError::Escape { .. }), "{bad}: {e}");
        }
        // The link itself may be looked at and removed.
        let link = f.fs.resolve("/app", "out", Access::Write, false).unwrap();
        assert_eq!(f.fs.lstat(&link).unwrap().kind, Kind::Symlink);
        assert!(matches!(f.fs.stat(&link), Err(FsError::Escape { .. })));
        assert!(matches!(f.fs.follow(&link), Err(FsError::Escape { .. })));
        assert!(matches!(f.fs.list(&link), Err(FsError::Escape { .. })));
        assert!(matches!(
            f.fs.open_read(&f.fs.resolve("/app", "secret", Access::Read, false).unwrap()),
            Err(FsError::Escape { .. })
        ));
        // ...but nothing below it.
        assert!(
            f.fs.resolve("/app", "out/secret", Access::Read, false)
                .is_err()
        );
        let inside = f.fs.resolve("/app", "inside", Access::Read, true).unwrap();
        assert_eq!(f.fs.guest_of(&inside), "/app/sub");
        assert!(f.fs.stat(&inside).unwrap().is_dir());
        assert_eq!(f.fs.link_text(&link).unwrap(), OUTSIDE_TARGET);
        symlink(fs::canonicalize(a).unwrap().join("sub"), a.join("abs")).unwrap();
        let abs = f.fs.resolve("/app", "abs", Access::Read, false).unwrap();
        assert_eq!(f.fs.link_text(&abs).unwrap(), "/app/sub");
        f.fs.remove_file(&link).unwrap();
        assert!(!a.join("out").exists());
        f.assert_outside_untouched();
    }

    #[test]
    fn errors_never_show_host_paths() {
        let f = fixture();
        let e =
            f.fs.resolve("/app", "sub/missing", Access::Read, true)
                .unwrap();
        let err = f.fs.open_read(&e).unwrap_err().to_string();
        assert_eq!(err, "No such file or directory");
        let err =
            f.fs.open_read(&f.fs.resolve("/app", "sub", Access::Read, true).unwrap())
                .unwrap_err()
                .to_string();
        assert_eq!(err, "Is a directory");
        let err =
            f.fs.open_read(&f.fs.resolve("/app", "/app", Access::Read, true).unwrap())
                .unwrap_err()
                .to_string();
        assert_eq!(err, "Is a directory");
    }

    #[test]
    fn realpath_answers_in_guest_paths() {
        let f = fixture();
        let a = f.app.path();
        fs::create_dir(a.join("sub/deep")).unwrap();
        symlink("sub/deep", a.join("short")).unwrap();
        let guest = |arg: &str, follow: bool| {
            let r = f.fs.resolve("/app", arg, Access::Read, follow).unwrap();
            f.fs.guest_of(&r)
        };
        assert_eq!(guest("short", true), "/app/sub/deep");
        assert_eq!(guest("short", false), "/app/short");
        assert_eq!(guest("short/new/more", true), "/app/sub/deep/new/more");
        assert_eq!(guest("/app", true), "/app");
        assert_eq!(guest("/data/d.txt", true), "/data/d.txt");
        assert_eq!(guest("/", true), "/");
    }

    /// With the old canonicalize-then-open code, the host path handed out by `resolve` went
    /// through `sub` again at the operation, so a swap in between wrote, read, listed and
    /// removed outside. Through the root handle, each operation resolves again beneath it.
    #[test]
    fn a_directory_swapped_for_a_link_after_resolve_leads_nowhere() {
        let f = fixture();
        let a = f.app.path();
        fs::write(a.join("sub/secret"), "decoy").unwrap();
        fs::create_dir(a.join("sub/d")).unwrap();
        fs::write(a.join("sub/d/f"), "f").unwrap();
        let resolve =
            |arg: &str, access, follow| f.fs.resolve("/app", arg, access, follow).unwrap();
        let write = resolve("sub/new.txt", Access::Write, true);
        let append = resolve("sub/secret", Access::Write, true);
        let read = resolve("sub/secret", Access::Read, true);
        let dir = resolve("sub", Access::Read, true);
        let unlink = resolve("sub/secret", Access::Write, false);
        let tree = resolve("sub/d", Access::Write, false);
        let mkdir = resolve("sub/made/deeper", Access::Write, true);
        let chmod = resolve("sub/secret", Access::Write, true);
        let touch = resolve("sub/touched", Access::Write, true);
        let moved = resolve("sub/secret", Access::Write, false);
        let into = resolve("sub/dropped", Access::Write, false);
        let kept = resolve("kept", Access::Write, false);
        fs::write(a.join("kept"), "k").unwrap();
        f.swap_sub_for_a_link_out();

        let escape = |what: &str, r: Result<(), FsError>| {
            assert!(matches!(r, Err(FsError::Escape { .. })), "{what}: {r:?}");
        };
        escape("write", f.fs.open_write(&write, false).map(drop));
        escape("append", f.fs.open_write(&append, true).map(drop));
        escape("read", f.fs.open_read(&read).map(drop));
        escape("list", f.fs.list(&dir).map(drop));
        escape("stat", f.fs.stat(&read).map(drop));
        escape("lstat", f.fs.lstat(&unlink).map(drop));
        escape("remove", f.fs.remove_file(&unlink));
        escape("remove_dir", f.fs.remove_dir(&tree));
        escape("remove_tree", f.fs.remove_tree(&tree));
        escape("mkdir -p", f.fs.create_dir(&mkdir, true));
        escape("chmod", f.fs.set_mode(&chmod, 0o600));
        escape("touch", f.fs.touch(&touch, true));
        escape("mv out", f.fs.rename(&moved, &kept));
        escape("mv in", f.fs.rename(&kept, &into));
        escape("ln -s", f.fs.symlink(Path::new("x"), &into));
        assert!(!f.fs.same_file(&read, &read));
        assert_eq!(f.fs.guest_of(&read), "/app/sub/secret");
        f.assert_outside_untouched();
        // The real directory kept everything, and the link is what `sub` is now.
        assert_eq!(names(&a.join("sub.real")), ["d", "secret"]);
        assert_eq!(
            fs::read_to_string(a.join("sub.real/secret")).unwrap(),
            "decoy"
        );
        assert_eq!(fs::read_to_string(a.join("kept")).unwrap(), "k");
    }

    /// A link in the middle of a path (`sub/up/...`, `up -> ../..`) is refused by every
    /// operation, even when `resolve` was fooled by a swap.
    #[test]
    fn links_in_the_middle_of_a_path_are_refused() {
        let f = fixture();
        let a = f.app.path();
        let outside_name = f.outside.path().file_name().unwrap().to_string_lossy();
        symlink(format!("../../{outside_name}"), a.join("sub/up")).unwrap();
        for arg in ["sub/up/secret", "sub/up/new", "sub/up", "sub/up/x/y"] {
            let e = f.fs.resolve("/app", arg, Access::Write, true).unwrap_err();
            assert!(matches!(e, FsError::Escape { .. }), "{arg}: {e}");
        }
        // The link itself is fine to look at and to remove.
        let up =
            f.fs.resolve("/app", "sub/up", Access::Write, false)
                .unwrap();
        assert_eq!(f.fs.lstat(&up).unwrap().kind, Kind::Symlink);
        let listed =
            f.fs.list(&f.fs.resolve("/app", "sub", Access::Read, true).unwrap())
                .unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(f.fs.lstat(&listed[0].node).unwrap().kind, Kind::Symlink);
        assert!(matches!(
            f.fs.list(&listed[0].node),
            Err(FsError::Escape { .. })
        ));
        f.fs.remove_tree(&up).unwrap();
        assert!(!a.join("sub/up").exists());
        f.assert_outside_untouched();
    }

    #[test]
    fn remove_tree_goes_through_in_mount_links_and_locked_directories() {
        let f = fixture();
        let a = f.app.path();
        fs::create_dir_all(a.join("sub/d/locked/inner")).unwrap();
        fs::write(a.join("sub/d/locked/inner/f"), "f").unwrap();
        symlink(f.outside.path(), a.join("sub/d/locked/out")).unwrap();
        fs::set_permissions(a.join("sub/d/locked"), fs::Permissions::from_mode(0o000)).unwrap();
        symlink("sub", a.join("via")).unwrap();
        // The parent is reached through an in-mount link; the tree is removed, the link kept.
        let d = f.fs.resolve("/app", "via/d", Access::Write, false).unwrap();
        f.fs.remove_tree(&d).unwrap();
        assert!(!a.join("sub/d").exists());
        assert!(a.join("via").is_symlink());
        // A link handed to remove_tree is removed itself.
        let via = f.fs.resolve("/app", "via", Access::Write, false).unwrap();
        f.fs.remove_tree(&via).unwrap();
        assert!(!a.join("via").exists() && a.join("sub").is_dir());
        // A mount point is never removed this way.
        let root = f.fs.resolve("/app", "/app", Access::Write, false).unwrap();
        assert_eq!(
            f.fs.remove_tree(&root).unwrap_err().to_string(),
            "Device or resource busy"
        );
        f.assert_outside_untouched();
    }

    #[test]
    fn fifos_sockets_and_devices_are_refused_without_blocking() {
        let f = fixture();
        let a = f.app.path();
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            a.join("fifo"),
            rustix::fs::Mode::from_raw_mode(0o644),
        )
        .unwrap();
        let _listener = std::os::unix::net::UnixListener::bind(a.join("sock")).unwrap();
        symlink("fifo", a.join("to_fifo")).unwrap();
        let (done, finished) = std::sync::mpsc::channel();
        let fs = f.fs;
        std::thread::spawn(move || {
            let mut results = Vec::new();
            for arg in ["fifo", "sock", "to_fifo"] {
                let r = fs.resolve("/app", arg, Access::Write, true).unwrap();
                results.push(fs.open_read(&r).map(drop).unwrap_err().to_string());
                results.push(fs.open_write(&r, false).map(drop).unwrap_err().to_string());
                results.push(fs.open_write(&r, true).map(drop).unwrap_err().to_string());
            }
            let _ = done.send(results);
        });
        let results = finished
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("opening a FIFO blocked");
        for r in results {
            assert!(r == "not a regular file", "{r}");
        }
    }

    #[test]
    fn writes_through_in_mount_links_and_hard_links_stay_inside() {
        let f = fixture();
        let a = f.app.path();
        fs::write(a.join("sub/target"), "t").unwrap();
        symlink("sub/target", a.join("soft")).unwrap();
        fs::hard_link(a.join("sub/target"), a.join("hard")).unwrap();
        symlink("sub/not-yet", a.join("dangling_inside")).unwrap();
        for arg in ["soft", "hard", "dangling_inside"] {
            let r = f.fs.resolve("/app", arg, Access::Write, true).unwrap();
            io::Write::write_all(&mut f.fs.open_write(&r, true).unwrap(), b"+").unwrap();
        }
        assert_eq!(fs::read_to_string(a.join("sub/target")).unwrap(), "t++");
        // Through a dangling link that stays inside, the kernel creates its target inside.
        assert_eq!(fs::read_to_string(a.join("sub/not-yet")).unwrap(), "+");
        let hard = f.fs.resolve("/app", "hard", Access::Read, true).unwrap();
        let soft = f.fs.resolve("/app", "soft", Access::Read, true).unwrap();
        assert!(f.fs.same_file(&hard, &soft));
        // Written without following, a link is not written through.
        let link = f.fs.resolve("/app", "soft", Access::Write, false).unwrap();
        assert!(f.fs.open_write(&link, false).is_err());
        assert_eq!(fs::read_to_string(a.join("sub/target")).unwrap(), "t++");
        f.assert_outside_untouched();
        assert_eq!(names(f.data.path()), ["d.txt"]);
    }
}
