//! Confinement of every file access of the shell to the session's mounts.
//!
//! A guest path is normalised lexically against the guest cwd (`.` and `..` never climb above
//! `/`), mapped to the mount with the longest matching guest prefix, and refused when it lies
//! outside every mount or when a write targets a read-only mount. Before a host path is handed to
//! any file operation, its deepest existing ancestor is canonicalised and must still lie inside
//! the mount's canonical host root, so a symlink planted in a mount cannot lead a command out of
//! it; the path handed out is that canonical one, so the operation does not walk through the
//! symlink again. With `follow == false` the last component is not followed (so `rm link` removes
//! the link, and `ls -l link` shows it) but everything above it is checked the same way.
//!
//! Directory walks ([`Fs::list`]) hand out children that are *not* followed: walkers look at them
//! with [`Fs::lstat`] and never descend into a symlink, and [`Fs::stat`] and [`Fs::open_read`]
//! re-resolve a symlink through the checks above before following it.
//!
//! Host paths never leave this module in messages: errors carry guest paths or the `strerror`
//! text only. `/` and any directory above a mount point are virtual read-only directories whose
//! entries are the mounts, so `ls /` and `cd /` work.
//!
//! The check and the use are separate system calls: a concurrent process that swaps a directory
//! for a symlink in between (possible only on a mount shared with another session) could win that
//! race. Closing it needs `openat2(RESOLVE_BENEATH)`-style resolution.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::FsView;

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
    let text = e.to_string();
    match text.find(" (os error ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// An I/O error with an errno, for the refusals commands share with the kernel's wording.
pub(crate) fn errno(code: i32) -> FsError {
    FsError::Io(io::Error::from_raw_os_error(code))
}

/// Linux errno values used for coreutils-like messages.
pub(crate) mod errnos {
    pub const ENOENT: i32 = 2;
    pub const EBUSY: i32 = 16;
    pub const ENOTDIR: i32 = 20;
    pub const EISDIR: i32 = 21;
    pub const EINVAL: i32 = 22;
    pub const EFBIG: i32 = 27;
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
    fn of(m: &fs::Metadata) -> Self {
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

/// A guest path that passed confinement.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    /// Normalised absolute guest path.
    pub guest: String,
    /// The host path (canonical above the last component); `None` for a virtual directory.
    host: Option<PathBuf>,
    /// Guest path of the mount it is in (`/` for virtual directories).
    pub mount: String,
    /// It is the mount point itself, which is never removed or renamed.
    pub mount_root: bool,
    pub writable: bool,
}

impl Resolved {
    /// The host path; `None` for virtual directories. Only for file operations: never print it.
    pub(crate) fn host(&self) -> Option<&Path> {
        self.host.as_deref()
    }

    pub(crate) fn is_virtual(&self) -> bool {
        self.host.is_none()
    }

    /// The host path, or `EISDIR`-like refusal for virtual directories (nothing to open there).
    pub(crate) fn host_or_err(&self) -> Result<&Path, FsError> {
        self.host.as_deref().ok_or_else(|| FsError::ReadOnly {
            guest: self.guest.clone(),
            mount: self.guest.clone(),
        })
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
    /// Canonical host root; `None` when it does not exist (every access then fails with ENOENT).
    root: Option<PathBuf>,
    writable: bool,
}

/// The mounts of a session with their canonical host roots.
pub(crate) struct Fs {
    /// Longest guest path first, so the first match is the longest prefix.
    mounts: Vec<Mount>,
}

enum Confine {
    Escape,
    Io(io::Error),
}

impl Fs {
    pub(crate) fn new(view: &FsView) -> Self {
        let mut mounts: Vec<Mount> = view
            .mounts
            .iter()
            .map(|m| Mount {
                guest: normalize("/", &m.guest),
                root: fs::canonicalize(&m.host).ok(),
                writable: m.writable,
            })
            .collect();
        mounts.sort_by_key(|m| std::cmp::Reverse(m.guest.len()));
        Self { mounts }
    }

    /// The guest mount points, sorted, for messages.
    pub(crate) fn mount_names(&self) -> String {
        let mut names: Vec<&str> = self.mounts.iter().map(|m| m.guest.as_str()).collect();
        names.sort_unstable();
        names.join(", ")
    }

    fn mount_of(&self, guest: &str) -> Option<&Mount> {
        self.mounts.iter().find(|m| {
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
    /// Confinement refusals, and I/O errors met while checking symlinks (`ENOTDIR`, `ELOOP`...).
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
        let Some(m) = self.mount_of(&guest) else {
            if self.is_virtual(&guest) {
                if access == Access::Write {
                    let mount = guest.clone();
                    return Err(FsError::ReadOnly { guest, mount });
                }
                return Ok(Resolved {
                    guest,
                    host: None,
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
        if access == Access::Write && !m.writable {
            return Err(FsError::ReadOnly {
                guest,
                mount: m.guest.clone(),
            });
        }
        let root = m.root.as_ref().ok_or_else(|| errno(errnos::ENOENT))?;
        let rest = if m.guest == "/" {
            &guest[..]
        } else {
            &guest[m.guest.len()..]
        };
        let mut host = root.clone();
        for comp in rest.split('/').filter(|c| !c.is_empty()) {
            host.push(comp);
        }
        let mount_root = host == *root;
        let host = match confine(root, host, follow || mount_root) {
            Ok(h) => h,
            Err(Confine::Io(e)) => return Err(FsError::Io(e)),
            Err(Confine::Escape) => {
                return Err(FsError::Escape {
                    guest,
                    mount: m.guest.clone(),
                });
            }
        };
        Ok(Resolved {
            guest,
            host: Some(host),
            mount: m.guest.clone(),
            mount_root,
            writable: m.writable,
        })
    }

    /// `lstat`: a symlink is reported as one.
    ///
    /// # Errors
    /// When the path does not exist or cannot be examined.
    pub(crate) fn lstat(&self, r: &Resolved) -> io::Result<Meta> {
        match &r.host {
            None => Ok(Meta::virtual_dir()),
            Some(h) => fs::symlink_metadata(h).map(|m| Meta::of(&m)),
        }
    }

    /// `stat`: a symlink is followed, if it stays inside its mount.
    ///
    /// # Errors
    /// As [`Fs::lstat`], plus confinement refusals for escaping symlinks.
    pub(crate) fn stat(&self, r: &Resolved) -> Result<Meta, FsError> {
        let meta = self.lstat(r)?;
        if meta.kind != Kind::Symlink {
            return Ok(meta);
        }
        let target = self.resolve_guest(r.guest.clone(), Access::Read, true)?;
        Ok(self.lstat(&target)?)
    }

    /// Re-resolves a node with its last component followed (see [`Fs::stat`]).
    ///
    /// # Errors
    /// As [`Fs::stat`].
    pub(crate) fn follow(&self, r: &Resolved, access: Access) -> Result<Resolved, FsError> {
        match &r.host {
            Some(h) if fs::symlink_metadata(h).is_ok_and(|m| m.file_type().is_symlink()) => {
                self.resolve_guest(r.guest.clone(), access, true)
            }
            _ => Ok(r.clone()),
        }
    }

    /// Opens a regular file for reading. Directories give `EISDIR`; FIFOs and devices are refused
    /// without being opened (opening a FIFO would block).
    ///
    /// # Errors
    /// As [`Fs::stat`], and the open itself.
    pub(crate) fn open_read(&self, r: &Resolved) -> Result<fs::File, FsError> {
        let r = self.follow(r, Access::Read)?;
        let meta = self.lstat(&r)?;
        match meta.kind {
            Kind::File => Ok(fs::File::open(r.host_or_err()?)?),
            Kind::Dir => Err(errno(errnos::EISDIR)),
            _ => Err(FsError::Io(io::Error::other("not a regular file"))),
        }
    }

    /// The entries of a directory (followed if `r` is a symlink), sorted by name, without `.`
    /// and `..`.
    ///
    /// # Errors
    /// When `r` is not a readable directory.
    pub(crate) fn list(&self, r: &Resolved) -> Result<Vec<Entry>, FsError> {
        let r = self.follow(r, Access::Read)?;
        let mut out = Vec::new();
        match &r.host {
            None => {
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
            }
            Some(host) => {
                for entry in fs::read_dir(host)? {
                    let entry = entry?;
                    let name: OsString = entry.file_name();
                    out.push(Entry {
                        name: name.to_string_lossy().into_owned(),
                        node: Resolved {
                            guest: join(&r.guest, &name.to_string_lossy()),
                            host: Some(host.join(&name)),
                            mount: r.mount.clone(),
                            mount_root: false,
                            writable: r.writable,
                        },
                    });
                }
                out.sort_by(|a, b| a.name.cmp(&b.name));
            }
        }
        Ok(out)
    }

    /// The canonical guest path of a resolved node (symlinks inside the mount resolved), for
    /// `realpath`.
    pub(crate) fn guest_of(&self, r: &Resolved) -> String {
        let Some(host) = &r.host else {
            return r.guest.clone();
        };
        self.mounts
            .iter()
            .filter(|m| m.guest == r.mount)
            .find_map(|m| {
                let rest = host.strip_prefix(m.root.as_ref()?).ok()?;
                let joined = join(&m.guest, &rest.to_string_lossy());
                Some(if joined.len() > 1 {
                    joined.trim_end_matches('/').to_string()
                } else {
                    joined
                })
            })
            .unwrap_or_else(|| r.guest.clone())
    }

    /// The text of a symlink for display. A target spelled as a host path inside a mount is
    /// shown as its guest path, one that names an existing guest path as written, and any other absolute
    /// target as `<outside the sandbox>`, so no host path is ever printed.
    pub(crate) fn link_text(&self, r: &Resolved) -> Option<String> {
        let target = fs::read_link(r.host()?).ok()?;
        if !target.is_absolute() {
            return Some(target.to_string_lossy().into_owned());
        }
        for m in &self.mounts {
            if let Some(root) = &m.root
                && let Ok(rest) = target.strip_prefix(root)
            {
                let joined = join(&m.guest, &rest.to_string_lossy());
                return Some(if joined.len() > 1 {
                    joined.trim_end_matches('/').to_string()
                } else {
                    joined
                });
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

/// Makes sure `host` (built as `root` + guest components) stays under `root`, and returns it with
/// every existing component canonical. Without `follow`, the last component is kept as is (not
/// followed) but its parent is checked.
fn confine(root: &Path, host: PathBuf, follow: bool) -> Result<PathBuf, Confine> {
    let (mut probe, last) = if follow {
        (host, None)
    } else {
        let name = host.file_name().map(|n| n.to_os_string());
        let mut parent = host;
        parent.pop();
        (parent, name)
    };
    let mut missing: Vec<OsString> = Vec::new();
    loop {
        match fs::canonicalize(&probe) {
            Ok(real) => {
                if !real.starts_with(root) {
                    return Err(Confine::Escape);
                }
                let mut out = real;
                for name in missing.iter().rev() {
                    out.push(name);
                }
                if let Some(name) = last {
                    out.push(name);
                }
                return Ok(out);
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound && probe != root => {
                // Something is there but does not resolve: a dangling symlink, whose target we
                // cannot vouch for (creating through it could land anywhere).
                if fs::symlink_metadata(&probe).is_ok() {
                    return Err(Confine::Escape);
                }
                match probe.file_name() {
                    Some(name) => missing.push(name.to_os_string()),
                    None => return Err(Confine::Io(e)),
                }
                probe.pop();
            }
            Err(e) => return Err(Confine::Io(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::MountPoint;
    use std::os::unix::fs::symlink;

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
    }

    #[test]
    fn maps_mounts_and_refuses_the_rest() {
        let f = fixture();
        let r = f.fs.resolve("/app", "sub", Access::Write, true).unwrap();
        assert_eq!(r.guest, "/app/sub");
        assert!(
            r.host()
                .unwrap()
                .starts_with(fs::canonicalize(f.app.path()).unwrap())
        );
        let r = f.fs.resolve("/app", "/app", Access::Write, false).unwrap();
        assert!(r.mount_root);
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
        assert!(f.fs.resolve("/", "data/d.txt", Access::Read, true).is_ok());
        let host = f.data.path().to_string_lossy().into_owned();
        assert!(f.fs.resolve("/app", &host, Access::Read, true).is_err());
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
        assert!(inside.host().unwrap().ends_with("sub"));
        assert_eq!(f.fs.link_text(&link).unwrap(), OUTSIDE_TARGET);
        symlink(fs::canonicalize(a).unwrap().join("sub"), a.join("abs")).unwrap();
        let abs = f.fs.resolve("/app", "abs", Access::Read, false).unwrap();
        assert_eq!(f.fs.link_text(&abs).unwrap(), "/app/sub");
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
    }
}
