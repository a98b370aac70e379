//! The jail a worker puts itself in before any guest code runs, on the assumption that a guest
//! may one day escape Wasmtime and run native code in this process.
//!
//! The supervisor names the layers it wants on the command line (`--jail
//! seccomp,landlock,netns,nproc,fds`) and those it requires (`--require ...`): a required layer
//! that cannot be applied makes the worker refuse to serve. The layers, in the order they go on:
//!
//! 1. [`early`], first thing in `main` (after parsing its arguments) while the process still
//!    has one thread: close every inherited descriptor above stderr (`fds`), then unshare a user
//!    and a network namespace (`netns`), mapping our own uid and gid 1:1 so the files we create
//!    keep their owner. The socket to the supervisor is a pathname Unix socket, which connects
//!    across network namespaces; inside ours there is only a loopback interface, and it is down.
//!    A forked worker joins a pair its fork server made for it ahead (`namespaces.rs`).
//! 2. In [`enter`], after the socket is connected and the module mapped, before any other
//!    thread exists: `RLIMIT_NPROC` (`nproc`), counted per user namespace, so only meaningful in
//!    our own.
//! 3. Landlock (`landlock.rs`): files only beneath the session's directories (read-write),
//!    `/data`, the shared volume as mounted and the module cache (read-only); no execute right
//!    anywhere; no TCP (ABI 4), no abstract Unix sockets or signals out of the worker (ABI 6).
//! 4. seccomp (`seccomp.rs`): an allow-list of the system calls the worker makes (see
//!    [`ALLOWED`]); anything else fails with `EPERM`. No exec, no fork (`clone` only for
//!    threads), no new sockets, no rlimit changes, no ptrace, mount, namespaces, keyrings, BPF,
//!    perf or io_uring.
//!
//! `sandbox-worker jail-check` runs the same code on itself with no file allowed and prints the
//! resulting [`JailReport`]: the supervisor's view of what this host supports.

mod landlock;
mod namespaces;
mod seccomp;

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use sandbox_protocol::{JailReport, Layer, LayerSet, LayerState};

use self::landlock::landlock;
pub use self::namespaces::SpareNamespaces;
use self::namespaces::{Unshare, own_network};
use self::seccomp::seccomp;
pub use self::seccomp::{ALLOWED, Check, DENIED, filter, syscall_number};

/// Threads a worker may run besides one Tokio worker per CPU: main, socket reader, epoch
/// ticker, guest, two overlapping shell threads, and wasmtime-wasi's blocking pool (it starts
/// threads on demand and keeps idle ones for 10 s). The whole e2e suite peaked at 10 threads
/// per worker on 2 CPUs (before the reader had a thread of its own); a thread bomb stops here
/// long before the machine notices.
const NPROC_BASE: u64 = 32;

/// Why the worker refuses to serve.
#[derive(Debug, thiserror::Error)]
pub enum JailError {
    #[error("the jail layer {layer} is required but unavailable: {why}")]
    Required { layer: Layer, why: String },
    #[error("the jail could not be set up: {0}")]
    Setup(String),
}

/// What the supervisor asked for, and what the process may reach once jailed.
#[derive(Debug, Clone, Default)]
pub struct JailSpec {
    pub requested: LayerSet,
    /// Layers without which the worker must not serve.
    pub required: LayerSet,
    /// Directories the worker may read and write beneath (the session's `/app`, `/tmp`, a
    /// writable shared volume).
    pub read_write: Vec<PathBuf>,
    /// Directories the worker may only read beneath (`/data`, the module cache).
    pub read_only: Vec<PathBuf>,
}

/// The jail part of a worker's command line (`--jail`, `--require`), and what `main` did
/// about it before anything else ran.
#[derive(Debug, Clone, Default)]
pub struct JailArgs {
    pub requested: LayerSet,
    pub required: LayerSet,
    pub early: Early,
}

/// What [`early`] did, carried to [`enter`] (nothing can be reported before the socket is up).
#[derive(Debug, Clone, Default)]
pub struct Early {
    fds: LayerState,
    netns: LayerState,
    /// True when we are in a user namespace of our own, where RLIMIT_NPROC counts only us.
    own_user_namespace: bool,
    /// A half-done namespace switch: the process is in an inconsistent state and must not serve.
    broken: Option<String>,
}

/// Step 1 of the jail. Must run first in `main`, after nothing but parsing the command line
/// (pure: no thread, no descriptor): `unshare(CLONE_NEWUSER)` needs a process with one thread,
/// and nothing may have opened a descriptor that we would close under its feet.
pub fn early(requested: LayerSet) -> Early {
    let mut early = Early::default();
    if requested.contains(Layer::Fds) {
        early.fds = match close_inherited() {
            Ok(()) => LayerState::Enforced("closed".into()),
            Err(e) => LayerState::Unavailable(format!("close_range failed: {e}")),
        };
    }
    if requested.contains(Layer::Netns) {
        match own_network() {
            Ok(()) => {
                early.netns = LayerState::Enforced("own network namespace".into());
                early.own_user_namespace = true;
            }
            Err(Unshare::Refused(why)) => early.netns = LayerState::Unavailable(why),
            Err(Unshare::Broken(why)) => {
                early.netns = LayerState::Unavailable(why.clone());
                early.broken = Some(why);
            }
        }
    }
    early
}

/// Step 1 of the jail in a worker forked by a fork server: the server closed every descriptor
/// it inherited when it started (its own step 1, always), and the child closed the server's
/// connection before this; what remains is the modules' mappings, which the worker needs, and
/// the server's placeholder directories, which close when the worker adopts its interpreter.
/// The namespaces are the ones the server made ahead (`spare`) when it has them and they can
/// be joined, else new ones as in [`early`].
pub fn early_forked(requested: LayerSet, spare: Option<SpareNamespaces>) -> Early {
    let mut rest = requested;
    rest.remove(Layer::Fds);
    let joined = match spare {
        Some(spare) if requested.contains(Layer::Netns) => spare
            .join()
            .inspect_err(|why| tracing::debug!(%why, "the worker makes its own namespaces"))
            .is_ok(),
        _ => false,
    };
    if joined {
        rest.remove(Layer::Netns);
    }
    let mut early = early(rest);
    if requested.contains(Layer::Fds) {
        early.fds = LayerState::Enforced("closed by the fork server".into());
    }
    if joined {
        early.netns =
            LayerState::Enforced("own network namespace (made ahead by the fork server)".into());
        early.own_user_namespace = true;
    }
    early
}

/// What a spare does ahead of its session's jail, in its own process (whose pid its session
/// keeps): opens the descriptors the jail's filter names and the worker reads (the memory
/// watch, `/proc/self/status`, and `/proc/<pid>/fd`, which rustix checks and caches for
/// cap-std's chmod: 0.2-0.3 ms), and compiles the seccomp filter, so that the session's first
/// call only installs it. Never in a fork server: a fork would inherit handles that name the
/// server's process.
pub fn prepare_ahead(requested: LayerSet) {
    crate::snapshot::watch::open();
    crate::data_limit::open();
    if requested.contains(Layer::Landlock) {
        let _ = rustix_linux_procfs::proc_self_fd();
    }
    if requested.contains(Layer::Seccomp) {
        seccomp::prepare();
    }
}

/// Steps 2 to 4 of the jail. Call once, after the socket is connected and the module loaded,
/// while the process has a single thread (Landlock before ABI 8 restricts only the calling
/// thread; seccomp is synchronised to all threads anyway).
///
/// # Errors
/// [`JailError::Required`] when a required layer is not in force; [`JailError::Setup`] when the
/// process is in a state it must not serve in.
pub fn enter(spec: &JailSpec, early: &Early) -> Result<JailReport, JailError> {
    if let Some(why) = &early.broken {
        return Err(JailError::Setup(why.clone()));
    }
    let mut report = JailReport {
        fds: early.fds.clone(),
        netns: early.netns.clone(),
        ..JailReport::default()
    };
    // What each layer costs a new session's first call (the debug log, in microseconds).
    let began = std::time::Instant::now();
    let since = |from: std::time::Instant| from.elapsed().as_micros() as u64;
    if spec.requested.contains(Layer::Nproc) {
        report.nproc = match limit_threads(early.own_user_namespace) {
            Ok(limit) => {
                report.nproc_limit = limit;
                LayerState::Enforced(format!("{limit} threads"))
            }
            Err(why) => LayerState::Unavailable(why),
        };
    }
    let landlock_began = std::time::Instant::now();
    if spec.requested.contains(Layer::Landlock) {
        report.landlock = match landlock(spec) {
            Ok(how) => LayerState::Enforced(how),
            Err(why) => LayerState::Unavailable(why),
        };
    }
    let landlock_us = since(landlock_began);
    let seccomp_began = std::time::Instant::now();
    if spec.requested.contains(Layer::Seccomp) {
        report.seccomp = match seccomp() {
            Ok(()) => LayerState::Enforced(String::new()),
            Err(why) => LayerState::Unavailable(why),
        };
    }
    tracing::debug!(
        landlock_us,
        seccomp_us = since(seccomp_began),
        us = since(began),
        "jail layers"
    );
    for layer in spec.required.iter() {
        match report.state(layer) {
            LayerState::Enforced(_) => {}
            LayerState::Unavailable(why) => {
                return Err(JailError::Required {
                    layer,
                    why: why.clone(),
                });
            }
            LayerState::NotRequested => {
                return Err(JailError::Required {
                    layer,
                    why: "the supervisor did not ask for it".into(),
                });
            }
        }
    }
    Ok(report)
}

/// `sandbox-worker jail-check`: every layer applied to this process with nothing allowed
/// beneath any directory, then the report. The caller prints it (stdout stays writable).
pub fn check(early: &Early) -> JailReport {
    let spec = JailSpec {
        requested: LayerSet::all(),
        ..JailSpec::default()
    };
    match enter(&spec, early) {
        Ok(report) => report,
        Err(e) => {
            let mut report = JailReport {
                fds: early.fds.clone(),
                netns: early.netns.clone(),
                ..JailReport::default()
            };
            report.netns = LayerState::Unavailable(e.to_string());
            report
        }
    }
}

fn close_inherited() -> io::Result<()> {
    // SAFETY: close_range only closes descriptors; nothing in this process holds one above 2
    // yet (this runs first in main), so no owner is left with a dangling descriptor.
    let rc = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) };
    if rc == 0 {
        return Ok(());
    }
    let error = io::Error::last_os_error();
    if error.raw_os_error() != Some(libc::ENOSYS) {
        return Err(error);
    }
    // Kernels before 5.9: close one by one up to the descriptor limit.
    // SAFETY: as above; closing a descriptor that is not open only returns EBADF.
    let max = unsafe { libc::sysconf(libc::_SC_OPEN_MAX) }.clamp(3, 1 << 20);
    for fd in 3..max {
        // SAFETY: see above.
        unsafe { libc::close(fd as i32) };
    }
    Ok(())
}

/// The RLIMIT_NPROC a worker gets on this machine.
pub fn nproc_limit() -> u64 {
    NPROC_BASE + cpus()
}

/// CPUs this process may run on: what Tokio sizes wasmtime-wasi's runtime by once /sys and
/// /proc are out of reach (its cgroup quota lookup then fails and it falls back to this).
fn cpus() -> u64 {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity writes at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            u64::try_from(libc::CPU_COUNT(&set)).unwrap_or(1).max(1)
        } else {
            1
        }
    }
}

fn limit_threads(own_user_namespace: bool) -> Result<u64, String> {
    // SAFETY: plain getter.
    if unsafe { libc::getuid() } == 0 {
        return Err(
            "the kernel exempts uid 0 from RLIMIT_NPROC (forks are denied by seccomp)".into(),
        );
    }
    if !own_user_namespace {
        return Err(
            "needs the worker's own user namespace: outside one the kernel counts every process of the user"
                .into(),
        );
    }
    let limit = nproc_limit();
    let rlimit = libc::rlimit {
        rlim_cur: limit,
        rlim_max: limit,
    };
    // SAFETY: setrlimit reads the struct we pass.
    if unsafe { libc::setrlimit(libc::RLIMIT_NPROC, &rlimit) } != 0 {
        return Err(format!("setrlimit failed: {}", io::Error::last_os_error()));
    }
    Ok(limit)
}

/// Threads of this process, from /proc/self/status (0 when it cannot be read).
fn threads() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|n| n.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// `ENOENT`, `EACCES`... for an errno value.
pub fn errno_name(errno: i32) -> String {
    let name = match errno {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::ESRCH => "ESRCH",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        libc::EBADF => "EBADF",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::EXDEV => "EXDEV",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::EINVAL => "EINVAL",
        libc::EMFILE => "EMFILE",
        libc::ETXTBSY => "ETXTBSY",
        libc::EROFS => "EROFS",
        libc::ENOSYS => "ENOSYS",
        libc::ELOOP => "ELOOP",
        libc::EAFNOSUPPORT => "EAFNOSUPPORT",
        libc::EADDRNOTAVAIL => "EADDRNOTAVAIL",
        libc::ENETDOWN => "ENETDOWN",
        libc::ENETUNREACH => "ENETUNREACH",
        libc::ECONNREFUSED => "ECONNREFUSED",
        libc::EHOSTUNREACH => "EHOSTUNREACH",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        other => return format!("errno {other}"),
    };
    name.to_owned()
}

/// The Landlock rules of a `serve` worker: its workspace and writable mounts read-write, the
/// read-only mounts and the directory of its module read-only.
pub fn paths_for_session(
    workspace: &Path,
    mounts: &[(PathBuf, bool)],
    module: &Path,
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut read_write = vec![workspace.to_path_buf()];
    let mut read_only = Vec::new();
    for (host, writable) in mounts {
        if *writable {
            read_write.push(host.clone());
        } else {
            read_only.push(host.clone());
        }
    }
    if let Some(cache) = module.parent() {
        read_only.push(cache.to_path_buf());
    }
    (read_write, read_only)
}

/// A path as a C string (for the probe's raw system calls).
pub fn c_path(path: &Path) -> Option<CString> {
    CString::new(path.as_os_str().as_bytes()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_paths_split_by_mode() {
        let (rw, ro) = paths_for_session(
            Path::new("/s/sessions/a.1/app"),
            &[
                (PathBuf::from("/s/sessions/a.1/tmp"), true),
                (PathBuf::from("/data"), false),
            ],
            Path::new("/cache/python.cwasm"),
        );
        assert_eq!(
            rw,
            [
                PathBuf::from("/s/sessions/a.1/app"),
                PathBuf::from("/s/sessions/a.1/tmp")
            ]
        );
        assert_eq!(ro, [PathBuf::from("/data"), PathBuf::from("/cache")]);
    }

    #[test]
    fn errno_names() {
        assert_eq!(errno_name(libc::EACCES), "EACCES");
        assert_eq!(errno_name(libc::EPERM), "EPERM");
        assert_eq!(errno_name(4242), "errno 4242");
    }
}
