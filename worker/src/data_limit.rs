//! How much of its `RLIMIT_DATA` the worker uses: what a fresh interpreter of the shell
//! (`companion.rs`, which asks it) may still take without the kernel refusing the worker memory.
//!
//! The supervisor sets the limit (its `rlimits_for`: the session's memory cap, twice for a
//! JavaScript worker's rollback copy, plus 256 MiB for the host). Past it a `mmap` fails, and a
//! failed host allocation aborts the worker, taking the session with it; so a fresh instance
//! beside a session that holds a large state must stay within what is left. The kernel counts
//! the limit against `VmData` (private writable mappings: linear memories, the heap), which only
//! `/proc/self/status` tells; the jail hides `/proc`, so the file is opened before the jail
//! ([`open`]) and read again from its start each time.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Mutex;

/// `/proc/self/status` of this process, opened before the jail.
static STATUS: Mutex<Option<(u32, File)>> = Mutex::new(None);

/// What the worker's data segment holds and may hold, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataUse {
    /// `VmData` now.
    pub used: u64,
    /// The soft `RLIMIT_DATA`.
    pub limit: u64,
}

impl DataUse {
    /// What is left under the limit.
    pub fn left(&self) -> u64 {
        self.limit.saturating_sub(self.used)
    }
}

/// Opens this process's `/proc/self/status` for [`current`]: called by a worker before it
/// enters its jail (a forked worker calls it itself, so the file names its own process).
pub fn open() {
    let mut status = STATUS.lock().unwrap_or_else(|e| e.into_inner());
    if status
        .as_ref()
        .is_some_and(|(pid, _)| *pid == std::process::id())
    {
        return;
    }
    *status = File::open("/proc/self/status")
        .inspect_err(|e| tracing::debug!(error = %e, "no /proc/self/status: fresh interpreters are bounded by the memory cap only"))
        .ok()
        .map(|file| (std::process::id(), file));
}

/// The worker's data use against its limit; `None` without a limit, or when `VmData` cannot
/// be read ([`open`] was not called, or failed).
pub fn current() -> Option<DataUse> {
    let limit = data_limit()?;
    let used = read_used()?;
    Some(DataUse { used, limit })
}

/// `VmData` now, from the file [`open`] opened.
fn read_used() -> Option<u64> {
    let status = STATUS.lock().unwrap_or_else(|e| e.into_inner());
    let (pid, file) = status.as_ref()?;
    if *pid != std::process::id() {
        return None;
    }
    // The whole file is about 1.5 KiB; a read from offset 0 makes the kernel write it afresh.
    let mut buf = [0u8; 4096];
    let read = file.read_at(&mut buf, 0).ok()?;
    vm_data(&String::from_utf8_lossy(&buf[..read]))
}

/// `VmData` of a `/proc/<pid>/status` text, in bytes.
fn vm_data(status: &str) -> Option<u64> {
    let line = status.lines().find_map(|l| l.strip_prefix("VmData:"))?;
    let kib: u64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    Some(kib << 10)
}

/// The soft `RLIMIT_DATA`; `None` when unlimited.
fn data_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct we pass, and nothing else.
    if unsafe { libc::getrlimit(libc::RLIMIT_DATA, &mut limit) } != 0 {
        return None;
    }
    (limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_data_is_read_in_bytes() {
        let status =
            "Name:\tsandbox-worker\nVmPeak:\t  900 kB\nVmData:\t  123456 kB\nVmStk:\t 132 kB\n";
        assert_eq!(vm_data(status), Some(123_456 << 10));
        assert_eq!(vm_data("Name:\tx\n"), None);
    }

    #[test]
    fn the_status_file_is_read_again_at_each_call() {
        open();
        let before = read_used().expect("a reading");
        let held = std::hint::black_box(vec![1u8; 64 << 20]);
        let during = read_used().expect("a reading");
        assert!(during >= before + (60 << 20), "{before} then {during}");
        drop(held);
    }
}
