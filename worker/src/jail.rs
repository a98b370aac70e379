//! The jail a worker puts itself in before any guest code runs, on the assumption that a guest
//! may one day escape Wasmtime and run native code in this process.
//!
//! The supervisor names the layers it wants on the command line (`--jail
//! seccomp,landlock,netns,nproc,fds`) and those it requires (`--require ...`): a required layer
//! that cannot be applied makes the worker refuse to serve. The layers, in the order they go on:
//!
//! 1. [`early`], first thing in `main` while the process still has one thread: close every
//!    inherited descriptor above stderr (`fds`), then unshare a user and a network namespace
//!    (`netns`), mapping our own uid and gid 1:1 so the files we create keep their owner. The
//!    socket to the supervisor is a pathname Unix socket, which connects across network
//!    namespaces; inside ours there is only a loopback interface, and it is down.
//! 2. In [`enter`], after the socket is connected and the module mapped, before any other
//!    thread exists: `RLIMIT_NPROC` (`nproc`), counted per user namespace, so only meaningful in
//!    our own.
//! 3. Landlock: files only beneath the session's directories (read-write), `/data`, the shared
//!    volume as mounted and the module cache (read-only); no execute right anywhere; no TCP
//!    (ABI 4), no abstract Unix sockets or signals out of the worker (ABI 6).
//! 4. seccomp: an allow-list of the system calls the worker makes (see [`ALLOWED`]); anything
//!    else fails with `EPERM`. No exec, no fork (`clone` only for threads), no new sockets, no
//!    rlimit changes, no ptrace, mount, namespaces, keyrings, BPF, perf or io_uring.
//!
//! `sandbox-worker jail-check` runs the same code on itself with no file allowed and prints the
//! resulting [`JailReport`]: the supervisor's view of what this host supports.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use sandbox_protocol::{JailReport, Layer, LayerSet, LayerState};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

/// Threads a worker may run besides one Tokio worker per CPU: main, epoch ticker, guest,
/// two overlapping shell threads, and wasmtime-wasi's blocking pool (it starts threads on
/// demand and keeps idle ones for 10 s). The whole e2e suite peaked at 10 threads per worker
/// on 2 CPUs; a thread bomb stops here long before the machine notices.
const NPROC_BASE: u64 = 32;

/// The newest Landlock ABI this code knows the rights of. Best effort: on an older kernel the
/// rights it lacks are not handled (the kernel cannot deny what it does not know).
const LANDLOCK_ABI: landlock::ABI = landlock::ABI::V10;

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

/// The layers `argv` asks for: all of them for `jail-check`, the `--jail` value for `serve` and
/// `jail-probe`, none otherwise. A malformed value asks for nothing here; the argument parser
/// reports it.
pub fn requested_by(args: &[String]) -> LayerSet {
    match args.first().map(String::as_str) {
        Some("jail-check") => LayerSet::all(),
        Some("serve" | "jail-probe") => args
            .windows(2)
            .find(|w| w[0] == "--jail")
            .and_then(|w| LayerSet::parse(&w[1]).ok())
            .unwrap_or_default(),
        _ => LayerSet::EMPTY,
    }
}

/// Step 1 of the jail. Must run first in `main`: `unshare(CLONE_NEWUSER)` needs a process with
/// one thread, and nothing may have opened a descriptor that we would close under its feet.
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
    if spec.requested.contains(Layer::Nproc) {
        report.nproc = match limit_threads(early.own_user_namespace) {
            Ok(limit) => {
                report.nproc_limit = limit;
                LayerState::Enforced(format!("{limit} threads"))
            }
            Err(why) => LayerState::Unavailable(why),
        };
    }
    if spec.requested.contains(Layer::Landlock) {
        report.landlock = match landlock(spec) {
            Ok(how) => LayerState::Enforced(how),
            Err(why) => LayerState::Unavailable(why),
        };
    }
    if spec.requested.contains(Layer::Seccomp) {
        report.seccomp = match seccomp() {
            Ok(()) => LayerState::Enforced(String::new()),
            Err(why) => LayerState::Unavailable(why),
        };
    }
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

enum Unshare {
    /// Nothing changed: the kernel (or its configuration) does not allow it.
    Refused(String),
    /// The namespaces exist but the id maps could not be written.
    Broken(String),
}

fn own_network() -> Result<(), Unshare> {
    // SAFETY: plain getters without arguments.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    // SAFETY: unshare takes flags only. The process is single-threaded here (first thing in
    // main), which CLONE_NEWUSER requires.
    if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) } != 0 {
        let e = io::Error::last_os_error();
        return Err(Unshare::Refused(format!(
            "the kernel refused a user and network namespace ({})",
            errno_name(e.raw_os_error().unwrap_or(0))
        )));
    }
    // Without CAP_SETGID in the parent namespace, gid_map can only be written after setgroups
    // is denied; a kernel without the file (before 3.19) has no such rule.
    match std::fs::write("/proc/self/setgroups", "deny") {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(Unshare::Broken(format!("cannot deny setgroups: {e}"))),
    }
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"))
        .map_err(|e| Unshare::Broken(format!("cannot map uid {uid}: {e}")))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"))
        .map_err(|e| Unshare::Broken(format!("cannot map gid {gid}: {e}")))?;
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

fn landlock(spec: &JailSpec) -> Result<String, String> {
    use landlock::{
        Access, AccessFs, AccessNet, BitFlags, LandlockStatus, PathBeneath, PathFd,
        RestrictSelfAttr, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
    };

    let abi = LANDLOCK_ABI;
    let handled = AccessFs::from_all(abi);
    // Read and list; never execute.
    let read = AccessFs::ReadFile | AccessFs::ReadDir;
    // Everything a guest does to its own files, through WASI or the shell. Not: execute,
    // device nodes, FIFOs, sockets (nothing binds one), device ioctls, connecting to sockets.
    let write = read
        | AccessFs::WriteFile
        | AccessFs::RemoveDir
        | AccessFs::RemoveFile
        | AccessFs::MakeDir
        | AccessFs::MakeReg
        | AccessFs::MakeSym
        | AccessFs::Refer
        | AccessFs::Truncate;
    // cap-std changes permissions through /proc/self/fd (fchmod cannot use an O_PATH handle);
    // opening that directory later would be denied, so open and cache it now. The handle
    // grants nothing: Landlock checks each file reached through it by its real path.
    let _ = rustix_linux_procfs::proc_self_fd();
    let running = threads();
    let error = |e: landlock::RulesetError| e.to_string();
    let ruleset = Ruleset::default()
        .handle_access(handled)
        .map_err(error)?
        .handle_access(AccessNet::from_all(abi))
        .map_err(error)?
        .scope(Scope::from_all(abi))
        .map_err(error)?;
    let mut created = ruleset
        .create()
        .map_err(error)?
        // Landlock ABI 8 restricts every thread at once; older kernels drop the flag (best
        // effort) and restrict only this thread, which is why the worker starts its threads
        // after the jail (checked below).
        .all_threads(true)
        .map_err(error)?;
    let allowed = (spec.read_write.iter().map(|p| (p, write)))
        .chain(spec.read_only.iter().map(|p| (p, read)));
    for (path, access) in allowed {
        let Ok(fd) = PathFd::new(path) else {
            // Nothing there means nothing to allow: a rule would only widen access.
            tracing::warn!(path = %path.display(), "no Landlock rule for a missing path");
            continue;
        };
        let access: BitFlags<AccessFs> = if path.is_dir() {
            access
        } else {
            access & AccessFs::from_file(abi)
        };
        created = created
            .add_rule(PathBeneath::new(fd, access & handled))
            .map_err(error)?;
    }
    let status = created.restrict_self().map_err(error)?;
    let abi = match status.landlock {
        LandlockStatus::Available { effective_abi, .. } => effective_abi as i32,
        LandlockStatus::NotEnabled => return Err("Landlock is built but not enabled".into()),
        LandlockStatus::NotImplemented => return Err("the kernel has no Landlock".into()),
    };
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(format!("Landlock ABI {abi} enforced nothing"));
    }
    if !status.all_threads && running > 1 {
        // Only this thread is restricted: not a jail. (A defect of ours: the worker starts
        // its threads after the jail.)
        return Err(format!(
            "Landlock ABI {abi} restricts only the calling thread and {running} threads run"
        ));
    }
    Ok(format!("ABI {abi}"))
}

/// How one allowed system call is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Any arguments.
    Any,
    /// `clone`: threads only (`CLONE_THREAD`), and no namespace or parent flags.
    Thread,
    /// `socketpair`: `AF_UNIX` only (Tokio's signal pipe in wasmtime-wasi's runtime).
    UnixPair,
    /// `prlimit64(0, _, NULL, _)`: reading our own limits (glibc's getrlimit).
    ReadOwnLimits,
    /// `fcntl` with a command that only touches our own descriptor flags.
    FdFlags,
    /// `prctl(PR_SET_NAME | PR_GET_NAME)`: thread names.
    ThreadName,
    /// `tgkill` to a thread of this process (abort raises SIGABRT on itself).
    OwnProcess,
    /// `fchmodat`/`fchmod` without the setuid and setgid bits (argument `n` is the mode).
    /// Landlock does not govern chmod, so this is what keeps an escaped guest from planting a
    /// set-id file for another local user to run.
    PlainMode(u8),
    /// Answered `ENOSYS`, so glibc falls back to `clone`, whose flags seccomp can see
    /// (`clone3` passes them in memory).
    NotImplemented,
}

/// The allow-list: every system call the worker makes after the jail, found by tracing the
/// whole e2e suite through the worker (both languages, shell, packages, timeouts, kills,
/// restarts), plus the rest of the families WASI preview 1 maps onto (`fd_sync` → fsync,
/// `path_link` → linkat...). Anything else fails with `EPERM`.
pub const ALLOWED: &[(&str, Check)] = &[
    // Memory: allocator, Wasmtime's linear memories, guard pages and code, thread stacks.
    ("brk", Check::Any),
    ("mmap", Check::Any),
    ("munmap", Check::Any),
    ("mprotect", Check::Any),
    ("mremap", Check::Any),
    ("madvise", Check::Any),
    // Threads and synchronisation.
    ("clone", Check::Thread),
    ("clone3", Check::NotImplemented),
    ("futex", Check::Any),
    ("set_robust_list", Check::Any),
    ("rseq", Check::Any),
    ("gettid", Check::Any),
    ("getpid", Check::Any),
    ("getppid", Check::Any),
    ("sched_getaffinity", Check::Any),
    ("sched_yield", Check::Any),
    ("prctl", Check::ThreadName),
    ("exit", Check::Any),
    ("exit_group", Check::Any),
    ("tgkill", Check::OwnProcess),
    // Signals: Wasmtime turns SIGSEGV/SIGILL/SIGFPE into traps and returns from the handler.
    ("rt_sigaction", Check::Any),
    ("rt_sigprocmask", Check::Any),
    ("rt_sigreturn", Check::Any),
    ("sigaltstack", Check::Any),
    ("restart_syscall", Check::Any),
    // Time.
    ("clock_gettime", Check::Any),
    ("clock_getres", Check::Any),
    ("clock_nanosleep", Check::Any),
    ("nanosleep", Check::Any),
    ("gettimeofday", Check::Any),
    // Randomness (WASI random_get, hash seeds).
    ("getrandom", Check::Any),
    // Descriptors.
    ("close", Check::Any),
    ("dup", Check::Any),
    ("dup3", Check::Any),
    ("fcntl", Check::FdFlags),
    ("lseek", Check::Any),
    ("read", Check::Any),
    ("readv", Check::Any),
    ("pread64", Check::Any),
    ("preadv", Check::Any),
    ("preadv2", Check::Any),
    ("write", Check::Any),
    ("writev", Check::Any),
    ("pwrite64", Check::Any),
    ("pwritev", Check::Any),
    ("pwritev2", Check::Any),
    ("fstat", Check::Any),
    ("fstatfs", Check::Any),
    ("fchmod", Check::PlainMode(1)),
    ("ftruncate", Check::Any),
    ("fsync", Check::Any),
    ("fdatasync", Check::Any),
    ("fallocate", Check::Any),
    ("fadvise64", Check::Any),
    ("ppoll", Check::Any),
    // Files beneath directory handles (WASI paths, the confined layer of the shell).
    ("openat", Check::Any),
    ("openat2", Check::Any),
    ("newfstatat", Check::Any),
    ("statx", Check::Any),
    ("getdents64", Check::Any),
    ("readlinkat", Check::Any),
    ("mkdirat", Check::Any),
    ("unlinkat", Check::Any),
    ("renameat2", Check::Any),
    ("symlinkat", Check::Any),
    ("linkat", Check::Any),
    ("fchmodat", Check::PlainMode(2)),
    ("utimensat", Check::Any),
    ("faccessat2", Check::Any),
    // The connected socket to the supervisor (std's UnixStream reads with recv).
    ("recvfrom", Check::Any),
    ("sendto", Check::Any),
    ("recvmsg", Check::Any),
    ("sendmsg", Check::Any),
    ("socketpair", Check::UnixPair),
    // wasmtime-wasi's Tokio runtime.
    ("epoll_create1", Check::Any),
    ("epoll_ctl", Check::Any),
    ("epoll_pwait", Check::Any),
    ("eventfd2", Check::Any),
    // Limits, read only.
    ("prlimit64", Check::ReadOwnLimits),
    // x86_64 only: the older calls glibc and std still use there.
    #[cfg(target_arch = "x86_64")]
    ("readlink", Check::Any),
    #[cfg(target_arch = "x86_64")]
    ("renameat", Check::Any),
    #[cfg(target_arch = "x86_64")]
    ("poll", Check::Any),
    #[cfg(target_arch = "x86_64")]
    ("epoll_wait", Check::Any),
    #[cfg(target_arch = "x86_64")]
    ("dup2", Check::Any),
];

/// System calls the jail exists to deny; a unit test keeps them off [`ALLOWED`].
pub const DENIED: &[&str] = &[
    "execve",
    "execveat",
    "fork",
    "vfork",
    "socket",
    "connect",
    "bind",
    "listen",
    "accept",
    "accept4",
    "setrlimit",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "mount",
    "umount2",
    "pivot_root",
    "unshare",
    "setns",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "kill",
    "chroot",
    "init_module",
    "finit_module",
    "kexec_load",
    "open_by_handle_at",
    "name_to_handle_at",
    "setuid",
    "setgid",
    "ioctl",
];

/// The number of a system call by name, on the architecture we are built for.
pub fn syscall_number(name: &str) -> Option<i64> {
    let nr = match name {
        "brk" => libc::SYS_brk,
        "mmap" => libc::SYS_mmap,
        "munmap" => libc::SYS_munmap,
        "mprotect" => libc::SYS_mprotect,
        "mremap" => libc::SYS_mremap,
        "madvise" => libc::SYS_madvise,
        "clone" => libc::SYS_clone,
        "clone3" => libc::SYS_clone3,
        "futex" => libc::SYS_futex,
        "set_robust_list" => libc::SYS_set_robust_list,
        "rseq" => libc::SYS_rseq,
        "gettid" => libc::SYS_gettid,
        "getpid" => libc::SYS_getpid,
        "getppid" => libc::SYS_getppid,
        "sched_getaffinity" => libc::SYS_sched_getaffinity,
        "sched_yield" => libc::SYS_sched_yield,
        "prctl" => libc::SYS_prctl,
        "exit" => libc::SYS_exit,
        "exit_group" => libc::SYS_exit_group,
        "tgkill" => libc::SYS_tgkill,
        "rt_sigaction" => libc::SYS_rt_sigaction,
        "rt_sigprocmask" => libc::SYS_rt_sigprocmask,
        "rt_sigreturn" => libc::SYS_rt_sigreturn,
        "sigaltstack" => libc::SYS_sigaltstack,
        "restart_syscall" => libc::SYS_restart_syscall,
        "clock_gettime" => libc::SYS_clock_gettime,
        "clock_getres" => libc::SYS_clock_getres,
        "clock_nanosleep" => libc::SYS_clock_nanosleep,
        "nanosleep" => libc::SYS_nanosleep,
        "gettimeofday" => libc::SYS_gettimeofday,
        "getrandom" => libc::SYS_getrandom,
        "close" => libc::SYS_close,
        "dup" => libc::SYS_dup,
        "dup3" => libc::SYS_dup3,
        "fcntl" => libc::SYS_fcntl,
        "lseek" => libc::SYS_lseek,
        "read" => libc::SYS_read,
        "readv" => libc::SYS_readv,
        "pread64" => libc::SYS_pread64,
        "preadv" => libc::SYS_preadv,
        "preadv2" => libc::SYS_preadv2,
        "write" => libc::SYS_write,
        "writev" => libc::SYS_writev,
        "pwrite64" => libc::SYS_pwrite64,
        "pwritev" => libc::SYS_pwritev,
        "pwritev2" => libc::SYS_pwritev2,
        "fstat" => libc::SYS_fstat,
        "fstatfs" => libc::SYS_fstatfs,
        "ftruncate" => libc::SYS_ftruncate,
        "fsync" => libc::SYS_fsync,
        "fdatasync" => libc::SYS_fdatasync,
        "fallocate" => libc::SYS_fallocate,
        "fadvise64" => libc::SYS_fadvise64,
        "ppoll" => libc::SYS_ppoll,
        "openat" => libc::SYS_openat,
        "openat2" => libc::SYS_openat2,
        "newfstatat" => libc::SYS_newfstatat,
        "statx" => libc::SYS_statx,
        "getdents64" => libc::SYS_getdents64,
        "readlinkat" => libc::SYS_readlinkat,
        "mkdirat" => libc::SYS_mkdirat,
        "unlinkat" => libc::SYS_unlinkat,
        "renameat2" => libc::SYS_renameat2,
        "symlinkat" => libc::SYS_symlinkat,
        "linkat" => libc::SYS_linkat,
        "fchmodat" => libc::SYS_fchmodat,
        "fchmod" => libc::SYS_fchmod,
        "utimensat" => libc::SYS_utimensat,
        "faccessat2" => libc::SYS_faccessat2,
        "recvfrom" => libc::SYS_recvfrom,
        "sendto" => libc::SYS_sendto,
        "recvmsg" => libc::SYS_recvmsg,
        "sendmsg" => libc::SYS_sendmsg,
        "socketpair" => libc::SYS_socketpair,
        "epoll_create1" => libc::SYS_epoll_create1,
        "epoll_ctl" => libc::SYS_epoll_ctl,
        "epoll_pwait" => libc::SYS_epoll_pwait,
        "eventfd2" => libc::SYS_eventfd2,
        "prlimit64" => libc::SYS_prlimit64,
        // The denied ones, for the tests.
        "execve" => libc::SYS_execve,
        "execveat" => libc::SYS_execveat,
        "socket" => libc::SYS_socket,
        "connect" => libc::SYS_connect,
        "bind" => libc::SYS_bind,
        "listen" => libc::SYS_listen,
        "accept4" => libc::SYS_accept4,
        "ptrace" => libc::SYS_ptrace,
        "process_vm_readv" => libc::SYS_process_vm_readv,
        "process_vm_writev" => libc::SYS_process_vm_writev,
        "mount" => libc::SYS_mount,
        "umount2" => libc::SYS_umount2,
        "pivot_root" => libc::SYS_pivot_root,
        "unshare" => libc::SYS_unshare,
        "setns" => libc::SYS_setns,
        "keyctl" => libc::SYS_keyctl,
        "add_key" => libc::SYS_add_key,
        "request_key" => libc::SYS_request_key,
        "bpf" => libc::SYS_bpf,
        "perf_event_open" => libc::SYS_perf_event_open,
        "userfaultfd" => libc::SYS_userfaultfd,
        "io_uring_setup" => libc::SYS_io_uring_setup,
        "io_uring_enter" => libc::SYS_io_uring_enter,
        "io_uring_register" => libc::SYS_io_uring_register,
        "kill" => libc::SYS_kill,
        "chroot" => libc::SYS_chroot,
        "init_module" => libc::SYS_init_module,
        "finit_module" => libc::SYS_finit_module,
        "kexec_load" => libc::SYS_kexec_load,
        "open_by_handle_at" => libc::SYS_open_by_handle_at,
        "name_to_handle_at" => libc::SYS_name_to_handle_at,
        "setuid" => libc::SYS_setuid,
        "setgid" => libc::SYS_setgid,
        "ioctl" => libc::SYS_ioctl,
        #[cfg(target_arch = "x86_64")]
        "readlink" => libc::SYS_readlink,
        #[cfg(target_arch = "x86_64")]
        "renameat" => libc::SYS_renameat,
        #[cfg(target_arch = "x86_64")]
        "poll" => libc::SYS_poll,
        #[cfg(target_arch = "x86_64")]
        "epoll_wait" => libc::SYS_epoll_wait,
        #[cfg(target_arch = "x86_64")]
        "dup2" => libc::SYS_dup2,
        #[cfg(target_arch = "x86_64")]
        "fork" => libc::SYS_fork,
        #[cfg(target_arch = "x86_64")]
        "vfork" => libc::SYS_vfork,
        #[cfg(target_arch = "x86_64")]
        "accept" => libc::SYS_accept,
        #[cfg(target_arch = "x86_64")]
        "setrlimit" => libc::SYS_setrlimit,
        _ => return None,
    };
    Some(nr)
}

/// Clone flags that a thread never needs and that would leave the worker's namespaces,
/// re-parent the child or make it a vfork.
const CLONE_FORBIDDEN: u64 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_PARENT
    | libc::CLONE_VFORK
    | libc::CLONE_PTRACE
    | libc::CLONE_UNTRACED) as u64;

/// `fcntl` commands on our own descriptors: duplicate, get/set close-on-exec, get/set status
/// flags (non-blocking). Not F_SETOWN/F_SETSIG (signals to others), not leases or locks.
const FCNTL_ALLOWED: [u64; 6] = [
    libc::F_DUPFD as u64,
    libc::F_DUPFD_CLOEXEC as u64,
    libc::F_GETFD as u64,
    libc::F_SETFD as u64,
    libc::F_GETFL as u64,
    libc::F_SETFL as u64,
];

fn condition(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, String> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Qword, op, value).map_err(|e| e.to_string())
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(conditions).map_err(|e| e.to_string())
}

fn rules_for(check: Check, pid: u64) -> Result<Vec<SeccompRule>, String> {
    Ok(match check {
        Check::Any | Check::NotImplemented => Vec::new(),
        Check::Thread => vec![rule(vec![
            condition(
                0,
                SeccompCmpOp::MaskedEq(libc::CLONE_THREAD as u64),
                libc::CLONE_THREAD as u64,
            )?,
            condition(0, SeccompCmpOp::MaskedEq(CLONE_FORBIDDEN), 0)?,
        ])?],
        Check::UnixPair => vec![rule(vec![condition(
            0,
            SeccompCmpOp::Eq,
            libc::AF_UNIX as u64,
        )?])?],
        Check::ReadOwnLimits => vec![rule(vec![
            condition(0, SeccompCmpOp::Eq, 0)?,
            condition(2, SeccompCmpOp::Eq, 0)?,
        ])?],
        Check::FdFlags => FCNTL_ALLOWED
            .iter()
            .map(|cmd| rule(vec![condition(1, SeccompCmpOp::Eq, *cmd)?]))
            .collect::<Result<_, _>>()?,
        Check::ThreadName => [libc::PR_SET_NAME, libc::PR_GET_NAME]
            .iter()
            .map(|op| rule(vec![condition(0, SeccompCmpOp::Eq, *op as u64)?]))
            .collect::<Result<_, _>>()?,
        Check::OwnProcess => vec![rule(vec![condition(0, SeccompCmpOp::Eq, pid)?])?],
        Check::PlainMode(arg) => vec![rule(vec![condition(
            arg,
            SeccompCmpOp::MaskedEq(u64::from(libc::S_ISUID | libc::S_ISGID)),
            0,
        )?])?],
    })
}

fn target_arch() -> Result<seccompiler::TargetArch, String> {
    std::env::consts::ARCH
        .try_into()
        .map_err(|_| format!("no seccomp support for {}", std::env::consts::ARCH))
}

/// The two filters, built once: the allow-list (everything else `EPERM`), and the one that
/// answers `clone3` with `ENOSYS`.
///
/// # Errors
/// When a name has no number here or seccompiler rejects a rule: a defect of this file.
pub fn filters() -> Result<(BpfProgram, BpfProgram), String> {
    let arch = target_arch()?;
    // SAFETY: plain getter.
    let pid = unsafe { libc::getpid() } as u64;
    let mut allow: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let mut nosys: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for (name, check) in ALLOWED {
        let nr = syscall_number(name).ok_or_else(|| format!("no syscall number for {name}"))?;
        if *check == Check::NotImplemented {
            nosys.insert(nr, Vec::new());
        }
        allow.insert(nr, rules_for(*check, pid)?);
    }
    let compile = |rules, mismatch, matched| -> Result<BpfProgram, String> {
        let filter =
            SeccompFilter::new(rules, mismatch, matched, arch).map_err(|e| e.to_string())?;
        BpfProgram::try_from(filter).map_err(|e| e.to_string())
    };
    let allow = compile(
        allow,
        SeccompAction::Errno(libc::EPERM as u32),
        SeccompAction::Allow,
    )?;
    let nosys = compile(
        nosys,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
    )?;
    Ok((allow, nosys))
}

fn seccomp() -> Result<(), String> {
    let (allow, nosys) = filters()?;
    // clone3 is allowed by the allow-list and answered ENOSYS by the other filter: the kernel
    // runs every filter and the strictest answer wins (ERRNO over ALLOW), whatever the order.
    // The ENOSYS filter goes first so that, should the allow-list then be refused, the process
    // is left with a filter that only sends glibc to clone, not with a broken one.
    seccompiler::apply_filter_all_threads(&nosys)
        .map_err(|e| format!("the kernel refused a seccomp filter: {e}"))?;
    seccompiler::apply_filter_all_threads(&allow)
        .map_err(|e| format!("the kernel refused the seccomp allow-list: {e}"))
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
    fn requested_layers_come_from_the_command_line() {
        let args = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        let set = requested_by(&args("serve --language python --jail seccomp,netns --x y"));
        assert!(set.contains(Layer::Seccomp) && set.contains(Layer::Netns));
        assert!(!set.contains(Layer::Landlock));
        assert_eq!(requested_by(&args("jail-check")), LayerSet::all());
        assert_eq!(
            requested_by(&args("jail-probe --jail landlock")).to_string(),
            "landlock"
        );
        assert_eq!(requested_by(&args("serve --jail bogus")), LayerSet::EMPTY);
        assert_eq!(
            requested_by(&args("precompile --jail seccomp")),
            LayerSet::EMPTY
        );
    }

    #[test]
    fn every_allowed_and_denied_call_has_a_number() {
        for (name, _) in ALLOWED {
            assert!(syscall_number(name).is_some(), "{name}");
        }
        for name in DENIED {
            assert!(syscall_number(name).is_some(), "{name}");
        }
    }

    #[test]
    fn the_allow_list_omits_what_the_jail_is_for() {
        let allowed: Vec<&str> = ALLOWED.iter().map(|(n, _)| *n).collect();
        for name in DENIED {
            assert!(!allowed.contains(name), "{name} must not be allowed");
        }
        // Present, but only in their harmless forms.
        let check = |n: &str| ALLOWED.iter().find(|(a, _)| *a == n).map(|(_, c)| *c);
        assert_eq!(check("clone"), Some(Check::Thread));
        assert_eq!(check("clone3"), Some(Check::NotImplemented));
        assert_eq!(check("socketpair"), Some(Check::UnixPair));
        assert_eq!(check("prlimit64"), Some(Check::ReadOwnLimits));
        assert_eq!(check("fcntl"), Some(Check::FdFlags));
        assert_eq!(check("fchmodat"), Some(Check::PlainMode(2)));
        // What the worker provably needs.
        for needed in [
            "rt_sigreturn",
            "openat2",
            "recvfrom",
            "sendto",
            "exit_group",
        ] {
            assert!(allowed.contains(&needed), "{needed}");
        }
        let mut sorted = allowed.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), allowed.len(), "no duplicates");
    }

    #[test]
    fn the_filters_compile() {
        let (allow, nosys) = filters().unwrap();
        // One comparison per call at least; far below the kernel's 4096 instructions.
        assert!(allow.len() > ALLOWED.len() && allow.len() < 4096);
        assert!(nosys.len() < 16);
    }

    /// The filters at work, in a forked child (the test process must stay unfiltered).
    #[test]
    fn the_filters_deny_and_allow_what_they_should() {
        let (allow, nosys) = filters().unwrap();
        fn errno() -> i32 {
            // SAFETY: reads this thread's errno.
            unsafe { *libc::__errno_location() }
        }
        // SAFETY: the child only makes raw system calls (no allocation, no locks: the test
        // harness has other threads) and ends in _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let code = (|| {
                if seccompiler::apply_filter(&nosys).is_err()
                    || seccompiler::apply_filter(&allow).is_err()
                {
                    return 10;
                }
                // SAFETY: plain system calls with valid or null arguments, here and below.
                if unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) } != -1
                    || errno() != libc::EPERM
                {
                    return 11;
                }
                // SAFETY: see above.
                if unsafe { libc::syscall(libc::SYS_clone3, std::ptr::null::<u8>(), 0) } != -1
                    || errno() != libc::ENOSYS
                {
                    return 12;
                }
                // SAFETY: see above.
                if unsafe { libc::syscall(libc::SYS_clone, libc::SIGCHLD, 0, 0, 0, 0) } != -1
                    || errno() != libc::EPERM
                {
                    return 13;
                }
                let limit = libc::rlimit {
                    rlim_cur: 1,
                    rlim_max: 1,
                };
                // SAFETY: see above.
                if unsafe { libc::prlimit(0, libc::RLIMIT_NOFILE, &limit, std::ptr::null_mut()) }
                    != -1
                    || errno() != libc::EPERM
                {
                    return 14;
                }
                let mut old = limit;
                // SAFETY: see above.
                if unsafe { libc::prlimit(0, libc::RLIMIT_NOFILE, std::ptr::null(), &mut old) } != 0
                {
                    return 15;
                }
                // SAFETY: see above.
                if unsafe { libc::getppid() } <= 0 {
                    return 16;
                }
                0
            })();
            // SAFETY: ends the child without running the parent's destructors.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status), "status {status:#x}");
        assert_eq!(libc::WEXITSTATUS(status), 0, "see the step numbers above");
    }

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
