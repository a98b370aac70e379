//! The only host code that touches guest paths, and it opens no file there: every command that
//! touches files is a WebAssembly tool ([`crate::toolbox`]) whose paths WASI resolves, and what
//! the shell language itself does with files (globs, file tests, `cd`, the files it reads whole,
//! its output redirections) is asked of one of them ([`super::files`]). Two callers remain:
//! - after a tool, `cd`, a read, a redirection or a script failed, the shell resolves the path
//!   to say why a refused one was refused (`path_restriction`): a lookup, nothing opened;
//! - the toolbox's `sandbox.file_mode` and `sandbox.set_file_mode` ([`FileModes`], what `ls -l`,
//!   `stat`, `find -perm`, `chmod`, `cp`, `mkdir -m` and `tar` read and set): WASI preview 1 has
//!   no modes.
//!
//! A guest path is normalised lexically against the guest cwd (`.` and `..` never climb above
//! `/`), mapped to the mount with the longest matching guest prefix, and refused when it lies
//! outside every mount or when a write targets a read-only mount. What comes out, a
//! [`Resolved`], names a mount and a path *relative to that mount's root*: never a host path.
//!
//! The capability model: [`Fs::new`] opens each mount's host directory once, as a [`Root`] of
//! the confined layer (`sandbox_protocol::confined`), and every operation is a method of [`Fs`]
//! that hands the relative path to that root's cap-std `Dir`. The kernel resolves it beneath
//! the root (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS`), in the same system call
//! that does the operation: a symlink that stays inside the mount is followed, and one that
//! leads out (absolute, or climbing with `..`) fails the operation with [`FsError::Escape`].
//! Nothing is canonicalised and then opened, so a directory that a guest swaps for a symlink
//! between two calls (possible on a mount shared with another session) cannot send the second
//! call out of the mount; at worst it lands elsewhere in the same mount, which the guest could
//! write anyway.
//!
//! [`Fs::resolve`] also looks the path up once, so a refusal is reported early and names the
//! guest path; that lookup only decides the message, never what an operation then touches. With
//! `follow == false` the last component is not followed; the components above it are followed
//! beneath the root as always.
//!
//! Host paths never leave this module in messages: errors carry guest paths or the `strerror`
//! text only. `/` and any directory above a mount point are virtual read-only directories whose
//! entries are the mounts, so `cd /` and `echo /*` work.

use std::io;
use std::path::{Path, PathBuf};

use cap_std::fs::{MetadataExt, Permissions, PermissionsExt};
use rustix::io::Errno;
use sandbox_protocol::confined::{self, Root};

use super::{FsView, above_mounts};
use crate::host::FileModes;

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
    /// `/` or a directory above a mount point, which the tools cannot read: WASI has only the
    /// mounts beneath it.
    #[error("path_restriction: no directory to read above the mounts (accessible: {mounts})")]
    AboveMounts { guest: String, mounts: String },
    #[error("{}", describe(.0))]
    Io(#[from] io::Error),
}

impl FsError {
    /// The guest path refused by confinement, if that is what this is.
    pub(crate) fn restricted(&self) -> Option<&str> {
        match self {
            FsError::Outside { guest, .. }
            | FsError::ReadOnly { guest, .. }
            | FsError::Escape { guest, .. }
            | FsError::AboveMounts { guest, .. } => Some(guest),
            FsError::Io(_) => None,
        }
    }

    /// The error as a program outside the shell sees it: an errno (`EROFS` for a read-only
    /// mount, `EACCES` for a refusal of confinement).
    fn into_errno(self) -> io::Error {
        match self {
            FsError::Io(e) => e,
            FsError::ReadOnly { .. } => Errno::ROFS.into(),
            _ => Errno::ACCESS.into(),
        }
    }

    /// The underlying I/O error kind, for commands that react to "not found" or "exists".
    fn io_kind(&self) -> Option<io::ErrorKind> {
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

pub(crate) use super::guest_path::normalize;

/// The file type, as the commands tell them apart.
pub(crate) use sandbox_protocol::confined::EntryKind as Kind;

/// What a lookup tells: the permission bits for [`FileModes`]; the type and size for the unit
/// tests.
#[derive(Debug, Clone)]
pub(crate) struct Meta {
    #[cfg(test)]
    pub kind: Kind,
    #[cfg(test)]
    pub len: u64,
    pub mode: u32,
}

impl Meta {
    fn of(m: &cap_std::fs::Metadata) -> Self {
        Self {
            #[cfg(test)]
            kind: Kind::of(m.file_type()),
            #[cfg(test)]
            len: m.len(),
            mode: m.mode(),
        }
    }

    /// A virtual directory: read-only, empty.
    fn virtual_dir() -> Self {
        Self {
            #[cfg(test)]
            kind: Kind::Dir,
            #[cfg(test)]
            len: 0,
            mode: 0o40555,
        }
    }

    #[cfg(test)]
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
    mount: String,
    /// It is the mount point itself, which is never removed or renamed.
    mount_root: bool,
}

impl Resolved {
    pub(crate) fn is_virtual(&self) -> bool {
        self.place == Place::Virtual
    }

    /// It is a mount point itself (`/app`, `/tmp`, `/shared`): the sandbox's, not the guest's.
    pub(crate) fn is_mount_root(&self) -> bool {
        self.mount_root
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
}

struct Mount {
    guest: String,
    /// The handle every access goes through; `None` when the host directory could not be opened
    /// (every access then fails with ENOENT).
    root: Option<Root>,
    writable: bool,
}

/// The mounts of a session, each with its root handle.
pub(crate) struct Fs {
    /// Longest guest path first, so the first match is the longest prefix.
    mounts: Vec<Mount>,
}

impl std::fmt::Debug for Fs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Guest paths only: the host directories behind them never leave this module.
        let mounts: Vec<&str> = self.mounts.iter().map(|m| m.guest.as_str()).collect();
        f.debug_struct("Fs")
            .field("mounts", &mounts)
            .finish_non_exhaustive()
    }
}

/// The permission bits a mount point shows ([`FileModes::mode`]).
pub(crate) const MOUNT_POINT_MODE: u32 = 0o755;

/// The toolbox's `sandbox.file_mode`: the bits of a guest path resolved as every access here.
impl FileModes for Fs {
    fn mode(&self, guest_path: &str, follow: bool) -> Option<u32> {
        // Placed by its text: the one lookup is the stat below, confined by the mount's root
        // handle (a refusal and a missing file both answer `None`).
        let node = (self.lexical(normalize("/", guest_path), Access::Read, follow)).ok()?;
        if node.is_virtual() {
            return Some(Meta::virtual_dir().mode & 0o7777);
        }
        if node.is_mount_root() {
            // The host directory behind a mount is private to the server (0700); the guest
            // sees a directory as GNU tools show a fresh one, and `chmod` leaves it alone.
            return Some(MOUNT_POINT_MODE);
        }
        // Resolved with `follow`, which `lstat` keeps.
        self.lstat(&node).ok().map(|meta| meta.mode & 0o7777)
    }

    fn set_mode(&self, guest_path: &str, mode: u32) -> io::Result<()> {
        let node = self
            .resolve("/", guest_path, Access::Write, true)
            .map_err(FsError::into_errno)?;
        if node.is_virtual() || node.is_mount_root() || mode & SETID_BITS != 0 {
            return Err(Errno::PERM.into());
        }
        Fs::set_mode(self, &node, mode).map_err(FsError::into_errno)
    }
}

/// A session's [`Fs`] opened at its first use: what an interpreter's store holds for the mode
/// frames of `host.call` (see [`crate::host::file_mode::door`]).
#[derive(Debug)]
pub(crate) struct LazyFs {
    view: FsView,
    fs: std::sync::OnceLock<Fs>,
}

impl LazyFs {
    pub(crate) fn new(view: FsView) -> Self {
        Self {
            view,
            fs: std::sync::OnceLock::new(),
        }
    }

    fn fs(&self) -> &Fs {
        self.fs.get_or_init(|| Fs::new(&self.view))
    }
}

impl FileModes for LazyFs {
    fn mode(&self, guest_path: &str, follow: bool) -> Option<u32> {
        self.fs().mode(guest_path, follow)
    }

    fn set_mode(&self, guest_path: &str, mode: u32) -> io::Result<()> {
        FileModes::set_mode(self.fs(), guest_path, mode)
    }
}

/// The set-user-ID and set-group-ID bits, which the jail refuses to set.
pub(crate) const SETID_BITS: u32 = 0o6000;

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
                Mount {
                    guest: normalize("/", &m.guest),
                    root,
                    writable: m.writable,
                }
            })
            .collect();
        mounts.sort_by_key(|m| std::cmp::Reverse(m.guest.len()));
        Self { mounts }
    }

    /// The refusal of the virtual directory `guest` (see [`FsError::AboveMounts`]).
    pub(crate) fn above_mounts(&self, guest: String) -> FsError {
        FsError::AboveMounts {
            guest,
            mounts: self.mount_names(),
        }
    }

    /// The guest paths of the session's mounts (names, not handles).
    pub(crate) fn mount_points(&self) -> impl Iterator<Item = &str> + Clone {
        self.mounts.iter().map(|m| m.guest.as_str())
    }

    /// Whether the mount that holds the guest path `arg` (relative to `cwd`, lexically) is
    /// writable.
    pub(crate) fn writable_at(&self, cwd: &str, arg: &str) -> bool {
        let guest = normalize(cwd, arg);
        self.mount_of(&guest)
            .is_some_and(|i| self.mounts[i].writable)
    }

    /// The guest mount points, sorted, for messages.
    fn mount_names(&self) -> String {
        let mut names: Vec<&str> = self.mounts.iter().map(|m| m.guest.as_str()).collect();
        names.sort_unstable();
        names.join(", ")
    }

    fn mount_of(&self, guest: &str) -> Option<usize> {
        (self.mounts.iter()).position(|m| above_mounts::within(guest, &m.guest))
    }

    /// `/` or a directory above a mount point.
    fn is_virtual(&self, guest: &str) -> bool {
        above_mounts::is_above(guest, self.mount_points())
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

    /// The place of `arg` (relative to the guest `cwd`) among the mounts, decided from the
    /// path's text alone: nothing is looked up, so a link out of the mount is not seen here
    /// (whatever then opens the path through WASI meets it).
    ///
    /// # Errors
    /// A path outside every mount, or a write access to a read-only mount.
    pub(crate) fn place(&self, cwd: &str, arg: &str, access: Access) -> Result<Resolved, FsError> {
        self.lexical(normalize(cwd, arg), access, true)
    }

    /// [`Fs::resolve`] for a normalised absolute guest path.
    ///
    /// # Errors
    /// As [`Fs::resolve`].
    fn resolve_guest(
        &self,
        guest: String,
        access: Access,
        follow: bool,
    ) -> Result<Resolved, FsError> {
        let node = self.lexical(guest, access, follow)?;
        if node.is_virtual() {
            return Ok(node);
        }
        // The early lookup: a refusal now names the guest path. What exists or not is for the
        // operation to find out.
        match self.metadata(&node, follow) {
            Ok(_) => Ok(node),
            Err(e) if e.io_kind() == Some(io::ErrorKind::NotFound) => Ok(node),
            Err(e) => Err(e),
        }
    }

    /// The lexical part of [`Fs::resolve_guest`] (see [`Fs::place`]).
    ///
    /// # Errors
    /// As [`Fs::place`], and ENOENT for a mount whose directory could not be opened.
    fn lexical(&self, guest: String, access: Access, follow: bool) -> Result<Resolved, FsError> {
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
        Ok(Resolved {
            guest,
            place,
            follow,
            mount: m.guest.clone(),
            mount_root,
        })
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
    #[cfg(test)]
    pub(crate) fn stat(&self, r: &Resolved) -> Result<Meta, FsError> {
        self.metadata(r, true)
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
        assert_eq!(f.fs.stat(&d).unwrap().len, 1);
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
    fn virtual_root_is_read_only() {
        let f = fixture();
        let root = f.fs.resolve("/app", "/", Access::Read, true).unwrap();
        assert!(root.is_virtual());
        assert!(f.fs.resolve("/", "/", Access::Write, true).is_err());
        assert!(f.fs.resolve("/", "/new", Access::Write, true).is_err());
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
        // ...but nothing below it.
        assert!(
            f.fs.resolve("/app", "out/secret", Access::Read, false)
                .is_err()
        );
        let inside = f.fs.resolve("/app", "inside", Access::Read, true).unwrap();
        assert!(f.fs.stat(&inside).unwrap().is_dir());
        f.assert_outside_untouched();
    }

    #[test]
    fn errors_never_show_host_paths() {
        let f = fixture();
        let e =
            f.fs.resolve("/app", "sub/missing", Access::Read, true)
                .unwrap();
        let err = f.fs.stat(&e).unwrap_err().to_string();
        assert_eq!(err, "No such file or directory");
        let err = f.fs.set_mode(&e, 0o600).unwrap_err().to_string();
        assert_eq!(err, "No such file or directory");
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
        let read = resolve("sub/secret", Access::Read, true);
        let unlink = resolve("sub/secret", Access::Write, false);
        let chmod = resolve("sub/secret", Access::Write, true);
        f.swap_sub_for_a_link_out();

        let escape = |what: &str, r: Result<(), FsError>| {
            assert!(matches!(r, Err(FsError::Escape { .. })), "{what}: {r:?}");
        };
        escape("stat", f.fs.stat(&read).map(drop));
        escape("lstat", f.fs.lstat(&unlink).map(drop));
        escape("chmod", f.fs.set_mode(&chmod, 0o600));
        f.assert_outside_untouched();
        // The real directory kept everything, and the link is what `sub` is now.
        assert_eq!(names(&a.join("sub.real")), ["d", "secret"]);
        assert_eq!(
            fs::read_to_string(a.join("sub.real/secret")).unwrap(),
            "decoy"
        );
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
        // The link itself is fine to look at.
        let up =
            f.fs.resolve("/app", "sub/up", Access::Write, false)
                .unwrap();
        assert_eq!(f.fs.lstat(&up).unwrap().kind, Kind::Symlink);
        f.assert_outside_untouched();
    }
}
