//! What a path means inside the sandbox: the JavaScript working directory
//! (`os.getcwd` / `os.chdir`, initially `/app`), lexical resolution of user
//! paths against it, and the directories the host preopened, which are the
//! only places that exist.
//!
//! Paths are resolved here, lexically (like Node's `path.resolve`), before
//! they reach `std::fs`, for two reasons. wasi-libc's own working directory is
//! `/`, where a relative path matches no preopen; and a path that climbs out
//! of a preopen (`../../etc/passwd`) should read as "no such file" rather than
//! wasi-libc's "capabilities insufficient". The host enforces the boundary
//! either way: this is about clear errors, not about security.

use std::cell::RefCell;

use crate::errno::{self, Errno};
use crate::guest_path;

/// The session workspace: initial working directory and `$HOME`.
pub const HOME: &str = "/app";

/// Longest path we accept, in bytes (Linux's PATH_MAX). Longer ones are a
/// mistake, and bounding them bounds the work of every function below.
const MAX_PATH: usize = 4096;

thread_local! {
    /// The working directory relative paths resolve against. Always absolute
    /// and normalised.
    static CWD: RefCell<String> = RefCell::new(String::from(HOME));
    /// Guest paths of the preopened directories (`/app`, `/tmp`, `/data`,
    /// ...), read from WASI once. A snapshot restored into a fresh instance
    /// keeps this list, which stays right: the host preopens the same
    /// directories in the same order for every instance of a session.
    static MOUNTS: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// The current working directory.
pub fn cwd() -> String {
    CWD.with(|c| c.borrow().clone())
}

/// Make `dir` (already resolved and checked to be a directory) the working
/// directory.
pub fn set_cwd(dir: String) {
    CWD.with(|c| *c.borrow_mut() = dir);
}

/// `path` as an absolute, normalised guest path, by the sandbox's one lexical
/// rule ([`guest_path::normalize`], which the shell and the toolbox use too):
/// relative paths start at the working directory, `.` and empty components
/// vanish, `..` removes the previous component and stops at `/`. Symlinks are
/// not consulted.
///
/// # Errors
/// `ENOENT` for an empty path (as open(2) says), `EINVAL` for a NUL byte,
/// `ENAMETOOLONG` beyond `MAX_PATH`.
pub fn resolve(path: &str) -> Result<String, Errno> {
    if path.is_empty() {
        return Err(errno::ENOENT);
    }
    if path.contains('\0') {
        return Err(errno::EINVAL);
    }
    if path.len() > MAX_PATH {
        return Err(errno::ENAMETOOLONG);
    }
    let out = guest_path::normalize(&cwd(), path);
    if out.len() > MAX_PATH {
        return Err(errno::ENAMETOOLONG);
    }
    Ok(out)
}

/// Where a resolved path lies.
#[derive(Debug, PartialEq, Eq)]
pub enum Place {
    /// `/` itself: a virtual directory whose entries are the mount points.
    Root,
    /// Inside (or at the root of) a preopened directory.
    Mounted,
    /// Anywhere else, which does not exist in the sandbox.
    Outside,
}

/// Classify an absolute, normalised path (from [`resolve`]).
pub fn place(abs: &str) -> Place {
    if abs == "/" {
        return Place::Root;
    }
    let inside = with_mounts(|mounts| {
        mounts.iter().any(|m| {
            abs.strip_prefix(m.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    });
    if inside {
        Place::Mounted
    } else {
        Place::Outside
    }
}

/// `resolve`, then refuse paths outside every preopened directory with
/// `ENOENT` (they do not exist here). `/` itself is refused too: callers
/// that can do something sensible with it check [`Place::Root`] first.
///
/// # Errors
/// As [`resolve`], plus `ENOENT` outside the mounts.
pub fn resolve_mounted(path: &str) -> Result<String, Errno> {
    let abs = resolve(path)?;
    match place(&abs) {
        Place::Mounted => Ok(abs),
        Place::Root | Place::Outside => Err(errno::ENOENT),
    }
}

/// The mount points (`["/app", "/tmp", "/data"]`), sorted.
pub fn mounts() -> Vec<String> {
    with_mounts(|m| m.to_vec())
}

fn with_mounts<R>(f: impl FnOnce(&[String]) -> R) -> R {
    MOUNTS.with(|cell| {
        let mut cell = cell.borrow_mut();
        let mounts = cell.get_or_insert_with(read_preopens);
        f(mounts)
    })
}

#[link(wasm_import_module = "wasi_snapshot_preview1")]
unsafe extern "C" {
    /// `fd_prestat_get(fd, *prestat) -> errno`; a prestat is
    /// `{ tag: u8 (0 = dir), pr_name_len: u32 }` (8 bytes, align 4).
    #[link_name = "fd_prestat_get"]
    fn wasi_fd_prestat_get(fd: i32, prestat: *mut u32) -> i32;
    /// `fd_prestat_dir_name(fd, *path, path_len) -> errno`.
    #[link_name = "fd_prestat_dir_name"]
    fn wasi_fd_prestat_dir_name(fd: i32, path: *mut u8, len: i32) -> i32;
}

/// Preopens are numbered from fd 3 without gaps; the first fd that is not
/// one (`EBADF`) ends the list. A safety cap keeps a broken host from making
/// this loop long.
fn read_preopens() -> Vec<String> {
    const FIRST_PREOPEN_FD: i32 = 3;
    const MAX_PREOPENS: i32 = 64;
    let mut out = Vec::new();
    for fd in FIRST_PREOPEN_FD..FIRST_PREOPEN_FD + MAX_PREOPENS {
        let mut prestat = [0u32; 2];
        // SAFETY: `prestat` is 8 writable, 4-aligned bytes, the size and
        // alignment of a WASI prestat; the host writes at most that.
        if unsafe { wasi_fd_prestat_get(fd, prestat.as_mut_ptr()) } != 0 {
            break;
        }
        if prestat[0] & 0xff != 0 {
            continue; // not a directory preopen
        }
        let len = prestat[1] as usize;
        if len > MAX_PATH {
            continue;
        }
        let mut name = vec![0u8; len];
        // SAFETY: `name` has exactly `len` writable bytes, the length the
        // host itself reported for this preopen's name.
        let rc = unsafe { wasi_fd_prestat_dir_name(fd, name.as_mut_ptr(), len as i32) };
        if rc != 0 {
            continue;
        }
        // Some hosts include a trailing NUL in the length.
        while name.last() == Some(&0) {
            name.pop();
        }
        if let Ok(name) = String::from_utf8(name) {
            // Normalise ("/app/" or "app" -> "/app") so prefix checks work.
            if let Ok(abs) = resolve_from_root(&name) {
                out.push(abs);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// `resolve` relative to `/` rather than the working directory.
fn resolve_from_root(name: &str) -> Result<String, Errno> {
    let mut rooted = String::from("/");
    rooted.push_str(name);
    resolve(&rooted)
}
