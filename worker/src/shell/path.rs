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

use std::io;
use std::os::fd::AsRawFd;
use std::path::{Component, Path, PathBuf};

use cap_std::fs::MetadataExt;
use rustix::io::Errno;
use sandbox_protocol::confined::{self, ConfinedError, EntryKind, Root};

use super::FsView;
use crate::quota::{self, Amount, SharedQuota};

mod ops;

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
pub(crate) use confined::describe;

/// An I/O error with an errno, for the refusals commands share with the kernel's wording.
pub(crate) fn errno(code: Errno) -> FsError {
    FsError::Io(code.into())
}

/// The refusal of a FIFO, socket or device where a regular file is needed.
fn not_regular() -> FsError {
    FsError::Io(io::Error::other("not a regular file"))
}

/// Lexically normalises `arg` against `cwd` into an absolute guest path.
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

/// The file type, as the commands tell them apart.
pub(crate) use sandbox_protocol::confined::EntryKind as Kind;

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
        let kind = Kind::of(m.file_type());
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
            ConfinedError::NotRegular(EntryKind::Dir) => errno(Errno::ISDIR),
            ConfinedError::NotRegular(_) => not_regular(),
            ConfinedError::NotDirectory(_) => errno(Errno::NOTDIR),
            ConfinedError::Symlink => errno(Errno::LOOP),
            ConfinedError::BadPath => errno(Errno::INVAL),
            ConfinedError::Io(e) => self.io_error(e),
            other => FsError::Io(io::Error::other(other.to_string())),
        }
    }
}

/// How `ls -l` shows an absolute symlink target outside every mount.
pub(crate) const OUTSIDE_TARGET: &str = "<outside the sandbox>";

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
            return Err(errno(Errno::NOENT));
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
            .ok_or_else(|| errno(Errno::NOENT))?;
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
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::shell::Mount;
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
                Mount {
                    guest: "/app".into(),
                    host: app.path().into(),
                    writable: true,
                },
                Mount {
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

    /// Makes `fifo`, `sock` and `to_fifo` (a link to the FIFO) in a host directory: the files
    /// whose opening could block (shared with the shell's tests). The socket lives as long as
    /// the listener returned.
    pub(crate) fn special_files(dir: &Path) -> std::os::unix::net::UnixListener {
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            dir.join("fifo"),
            rustix::fs::Mode::from_raw_mode(0o644),
        )
        .unwrap();
        let listener = std::os::unix::net::UnixListener::bind(dir.join("sock")).unwrap();
        symlink("fifo", dir.join("to_fifo")).unwrap();
        listener
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
            mounts: vec![Mount {
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
        escape("touch", f.fs.touch(&touch, true, None));
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
        let _listener = special_files(f.app.path());
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
