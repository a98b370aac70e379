//! What a worker process may not do, applied between fork and exec: resource limits, no core
//! dumps, death with the supervisor, no privilege gain, and (when delegated) its cgroup.
//!
//! Only async-signal-safe calls run in `pre_exec`: no allocation, no locks, no logging. Every
//! value the hook needs is computed before the fork.

use std::ffi::CString;

use nix::fcntl::{OFlag, open};
use nix::sys::prctl;
use nix::sys::resource::{Resource, setrlimit};
use nix::sys::signal::{SigHandler, Signal, signal};
use nix::sys::stat::Mode;
use nix::unistd::{getpid, getppid, write};
use tokio::process::Command;

/// The rlimits of one worker (derived from its session's limits by the worker's spawn plan).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JailLimits {
    /// RLIMIT_DATA: never RLIMIT_AS, which breaks Wasmtime's large virtual reservations.
    pub data_bytes: u64,
    pub open_files: u64,
    /// RLIMIT_FSIZE: the largest file the guest can write (it gets EFBIG, not a signal).
    pub file_bytes: u64,
    pub cpu_seconds: u64,
}

impl JailLimits {
    /// A fork server's own rlimits: none that a session's would set (each forked worker sets
    /// its session's), so a long-lived server never runs into its CPU time or data size.
    pub const FORK_SERVER: JailLimits = JailLimits {
        data_bytes: libc::RLIM_INFINITY,
        open_files: 1024,
        file_bytes: libc::RLIM_INFINITY,
        cpu_seconds: libc::RLIM_INFINITY,
    };
}

/// Installs the `pre_exec` hook. `cgroup_procs` is the `cgroup.procs` file of the worker's
/// cgroup, when cgroups are delegated: the child moves itself there before exec, so it never
/// runs outside its limits.
pub fn apply(command: &mut Command, limits: JailLimits, cgroup_procs: Option<CString>) {
    let supervisor = getpid();
    // SAFETY: the closure runs in the forked child before exec. It only makes raw syscalls
    // through nix (prctl, getppid, setrlimit, sigaction, open, write), which are
    // async-signal-safe; it allocates nothing (the cgroup path was allocated before the fork,
    // errors are built from errno values) and touches no lock or shared state.
    unsafe {
        command.pre_exec(move || {
            prctl::set_pdeathsig(Signal::SIGKILL)?;
            // The supervisor may have died between fork and prctl: then nobody would kill us.
            if getppid() != supervisor {
                return Err(nix::errno::Errno::ESRCH.into());
            }
            setrlimit(Resource::RLIMIT_CORE, 0, 0)?;
            setrlimit(Resource::RLIMIT_DATA, limits.data_bytes, limits.data_bytes)?;
            setrlimit(
                Resource::RLIMIT_NOFILE,
                limits.open_files,
                limits.open_files,
            )?;
            setrlimit(Resource::RLIMIT_FSIZE, limits.file_bytes, limits.file_bytes)?;
            // SIGXCPU at the soft limit ends the worker; the hard limit is the SIGKILL behind it.
            setrlimit(
                Resource::RLIMIT_CPU,
                limits.cpu_seconds,
                limits.cpu_seconds.saturating_add(5),
            )?;
            // A write past RLIMIT_FSIZE must fail with EFBIG for the guest to see, not kill us.
            signal(Signal::SIGXFSZ, SigHandler::SigIgn)?;
            prctl::set_no_new_privs()?;
            if let Some(procs) = &cgroup_procs {
                let fd = open(
                    procs.as_c_str(),
                    OFlag::O_WRONLY | OFlag::O_CLOEXEC,
                    Mode::empty(),
                )?;
                write(&fd, b"0")?;
            }
            Ok(())
        });
    }
}
