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
use sandbox_protocol::Runtime;
use tokio::process::Command;

use crate::config::SessionLimits;

/// Process memory beyond the interpreter's linear memory: Wasmtime, the mapped module, the guest
/// thread's 16 MiB stack, buffers for captured output. The same for every runtime: a module's
/// `.cwasm` is a file mapping RLIMIT_DATA does not count, so the scientific one (348 MB) needs
/// no more (measured: VmData 153 MB with numpy, pandas, scipy and scikit-learn imported, of
/// which 108 MiB linear memory; 39 MB for the default CPython at rest).
const MEMORY_HEADROOM: u64 = 256 << 20;

/// Open files a worker needs: the socket, stdio, a few preopened directories and whatever the
/// guest opens. Low enough that a file-handle leak in a guest stays contained.
const MAX_OPEN_FILES: u64 = 256;

/// CPU seconds per CPU of the flavor before the kernel stops a worker. A backstop only: fuel and
/// deadlines stop executions long before; this catches a worker spinning outside guest code.
/// The counter is per process, so a session that reaches it gets a fresh worker.
const CPU_SECONDS_PER_CPU: u64 = 4 * 3600;

/// The rlimits of one worker, derived from its session's limits.
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
    /// The rlimits of a worker of `runtime` for a session with `limits`.
    pub fn for_session(limits: &SessionLimits, runtime: Runtime) -> Self {
        // A JavaScript worker keeps a snapshot of linear memory for rollback: twice the cap.
        let copies = match runtime {
            Runtime::Python => 1,
            Runtime::JavaScript => 2,
        };
        Self {
            data_bytes: limits.memory_bytes * copies + MEMORY_HEADROOM,
            open_files: MAX_OPEN_FILES,
            file_bytes: limits.disk_bytes,
            cpu_seconds: CPU_SECONDS_PER_CPU * u64::from(limits.cpus.max(1)),
        }
    }
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
                limits.cpu_seconds + 5,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Flavor;

    #[test]
    fn limits_follow_the_session() {
        let small = JailLimits::for_session(&SessionLimits::from(Flavor::Small), Runtime::Python);
        assert_eq!(small.data_bytes, (1 << 30) + MEMORY_HEADROOM);
        assert_eq!(small.file_bytes, 256 << 20);
        let scientific =
            JailLimits::for_session(&SessionLimits::from(Flavor::Small), Runtime::Python);
        assert_eq!(scientific, small, "the module's mapping is not data");
        let js = JailLimits::for_session(&SessionLimits::from(Flavor::Large), Runtime::JavaScript);
        assert_eq!(js.data_bytes, 2 * (4u64 << 30) + MEMORY_HEADROOM);
        assert_eq!(js.cpu_seconds, 4 * CPU_SECONDS_PER_CPU);
    }
}
