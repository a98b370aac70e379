//! What a worker process may not do, applied between fork and exec.
//!
//! Only async-signal-safe calls run in `pre_exec`: no allocation, no locks, no logging.

use nix::sys::prctl;
use nix::sys::resource::{Resource, setrlimit};
use nix::sys::signal::Signal;
use nix::unistd::{getpid, getppid};
use tokio::process::Command;

/// Installs the `pre_exec` hook: no core dumps, killed when the supervisor dies, no privilege
/// gain through exec.
pub fn apply(command: &mut Command) {
    let supervisor = getpid();
    // SAFETY: the closure runs in the forked child before exec and only makes raw syscalls
    // through nix (prctl, getppid, setrlimit), which are async-signal-safe; it allocates nothing
    // (errors are built from errno values) and touches no lock or shared state.
    unsafe {
        command.pre_exec(move || {
            prctl::set_pdeathsig(Signal::SIGKILL)?;
            // The supervisor may have died between fork and prctl: then nobody would kill us.
            if getppid() != supervisor {
                return Err(nix::errno::Errno::ESRCH.into());
            }
            setrlimit(Resource::RLIMIT_CORE, 0, 0)?;
            prctl::set_no_new_privs()?;
            Ok(())
        });
    }
}
