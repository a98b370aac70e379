//! The `netns` layer's namespaces: a user namespace (mapping our own uid and gid 1:1, so the
//! files we create keep their owner) and, owned by it, a network namespace with nothing in it
//! but a loopback interface that is down.
//!
//! An exec'd worker unshares both as the first thing in `main` ([`own_network`]). A forked
//! worker would pay for the same on its session's first call: creating a network namespace
//! takes the kernel 0.4-0.5 ms here, the pair with its id maps 0.7-0.8 ms. So its fork server,
//! as it forks the next session's worker ahead (its spare, while nobody waits), makes the pair
//! ahead too ([`SpareNamespaces::make`]), in a child born into them that it ends at once, and
//! keeps them by descriptor; the worker joins them ([`SpareNamespaces::join`]) in two `setns`
//! calls. They are still that worker's own: nothing else ever joins them, and the server
//! closes its descriptors as it forks.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::errno_name;

/// Why a process is not in namespaces of its own.
pub(super) enum Unshare {
    /// Nothing changed: the kernel (or its configuration) does not allow it.
    Refused(String),
    /// The namespaces exist but the id maps could not be written.
    Broken(String),
}

/// Moves this process into a new user namespace and a new network namespace. It must have one
/// thread, which `CLONE_NEWUSER` requires.
pub(super) fn own_network() -> Result<(), Unshare> {
    // Read before the unshare: inside the new namespace, unmapped, they read as the overflow
    // ids (65534).
    let ids = own_ids();
    // SAFETY: unshare takes flags only; the caller is single-threaded (see above).
    if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) } != 0 {
        return Err(Unshare::Refused(refused(&io::Error::last_os_error())));
    }
    map_ids("/proc/self", ids).map_err(Unshare::Broken)
}

/// This process's effective uid and gid.
fn own_ids() -> (libc::uid_t, libc::gid_t) {
    // SAFETY: plain getters without arguments.
    unsafe { (libc::geteuid(), libc::getegid()) }
}

/// A user and a network namespace made ahead for the next forked worker, kept by descriptor.
#[derive(Debug)]
pub struct SpareNamespaces {
    user: OwnedFd,
    net: OwnedFd,
}

impl SpareNamespaces {
    /// Makes the pair: clones a child into new namespaces, writes their id maps from here,
    /// opens them, and kills and reaps the child. Call only while this process has one thread
    /// (as a fork server does), so that the child, a copy of it, holds no lock.
    ///
    /// # Errors
    /// When the kernel refuses the namespaces or their maps (the child is ended either way).
    pub fn make() -> Result<Self, String> {
        // SAFETY: a plain getter.
        let parent = unsafe { libc::getpid() };
        let flags = (libc::CLONE_NEWUSER | libc::CLONE_NEWNET | libc::SIGCHLD) as libc::c_ulong;
        // SAFETY: with no new stack the child continues here on a copy of this stack, as after
        // fork(2); it makes only async-signal-safe calls and never returns (see below).
        let pid = unsafe { libc::syscall(libc::SYS_clone, flags, 0usize, 0usize, 0usize, 0usize) };
        if pid == -1 {
            return Err(refused(&io::Error::last_os_error()));
        }
        if pid == 0 {
            // The child only holds the namespaces open until it is killed, and dies with its
            // parent (checked after the prctl: the parent may have died before it).
            // SAFETY: prctl, getppid, pause and _exit are async-signal-safe system calls.
            unsafe {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                if libc::getppid() != parent {
                    libc::_exit(0);
                }
                loop {
                    libc::pause();
                }
            }
        }
        let pid = pid as libc::pid_t;
        let kept = Self::open(&format!("/proc/{pid}"), own_ids());
        // SAFETY: our own child, which we reap at once: its pid is not reused before.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
        kept
    }

    /// Maps the ids of the namespaces of the process at `proc_dir` and opens them.
    fn open(proc_dir: &str, ids: (libc::uid_t, libc::gid_t)) -> Result<Self, String> {
        map_ids(proc_dir, ids)?;
        let open = |ns: &str| {
            File::open(format!("{proc_dir}/ns/{ns}"))
                .map(OwnedFd::from)
                .map_err(|e| format!("cannot open the {ns} namespace: {e}"))
        };
        Ok(Self {
            user: open("user")?,
            net: open("net")?,
        })
    }

    /// Moves this process into the pair, as [`own_network`] would have. It must have one
    /// thread, which joining a user namespace requires. The descriptors close either way.
    ///
    /// # Errors
    /// When the kernel refuses; the process may then be in the user namespace alone.
    pub(super) fn join(self) -> Result<(), String> {
        for (ns, flag, what) in [
            (&self.user, libc::CLONE_NEWUSER, "user"),
            (&self.net, libc::CLONE_NEWNET, "network"),
        ] {
            // SAFETY: setns on a namespace descriptor we own; the caller is single-threaded.
            if unsafe { libc::setns(ns.as_raw_fd(), flag) } != 0 {
                let e = io::Error::last_os_error();
                return Err(format!(
                    "cannot join the {what} namespace made ahead ({})",
                    errno_name(e.raw_os_error().unwrap_or(0))
                ));
            }
        }
        Ok(())
    }
}

/// Writes the id maps of the process at `proc_dir` (`/proc/self` or `/proc/PID` of a child in
/// a namespace it was just born into): `(uid, gid)`, ours as seen from outside it, 1:1.
fn map_ids(proc_dir: &str, (uid, gid): (libc::uid_t, libc::gid_t)) -> Result<(), String> {
    // Without CAP_SETGID in the parent namespace, gid_map can only be written after setgroups
    // is denied; a kernel without the file (before 3.19) has no such rule.
    match std::fs::write(format!("{proc_dir}/setgroups"), "deny") {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot deny setgroups: {e}")),
    }
    std::fs::write(format!("{proc_dir}/uid_map"), format!("{uid} {uid} 1"))
        .map_err(|e| format!("cannot map uid {uid}: {e}"))?;
    std::fs::write(format!("{proc_dir}/gid_map"), format!("{gid} {gid} 1"))
        .map_err(|e| format!("cannot map gid {gid}: {e}"))
}

fn refused(e: &io::Error) -> String {
    format!(
        "the kernel refused a user and network namespace ({})",
        errno_name(e.raw_os_error().unwrap_or(0))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inode of one of `pid`'s namespaces, as `/proc` shows it (`net:[4026531840]`).
    fn namespace_of(pid: &str, ns: &str) -> String {
        std::fs::read_link(format!("/proc/{pid}/ns/{ns}"))
            .map(|link| link.display().to_string())
            .unwrap_or_default()
    }

    #[test]
    fn spare_namespaces_are_new_and_the_process_that_made_them_stays_out() {
        // The test harness runs tests on threads, so only the making is tried here (a clone,
        // not an unshare or a join); joining is covered by the worker e2e tests, where a
        // forked worker reports its namespaces.
        let before = namespace_of("self", "net");
        let spare = match SpareNamespaces::make() {
            Ok(spare) => spare,
            // A kernel without unprivileged user namespaces: nothing to check.
            Err(why) => return eprintln!("skipped: {why}"),
        };
        assert_eq!(namespace_of("self", "net"), before);
        let fd = spare.net.as_raw_fd().to_string();
        let kept = std::fs::read_link(format!("/proc/self/fd/{fd}"))
            .map(|link| link.display().to_string())
            .unwrap_or_default();
        assert!(kept.starts_with("net:["), "{kept}");
        assert_ne!(kept, before, "a spare network namespace must be a new one");
    }
}
