//! The disk quota as one interpreter instance sees it ([`GuestQuota`]): the session's shared
//! quota, where each of the guest's descriptors was opened, and the length of the file written
//! last. The WASI shadows that charge it are in `disk_quota/`; [`explain_failure`] names a
//! refusal in the report of the execution it failed.

use std::collections::HashMap;

use sandbox_protocol::{ErrorKind, GuestError};

use crate::quota::{SharedQuota, lock};

/// Where a guest descriptor was opened, as far as the quota cares.
#[derive(Debug, Clone, Copy)]
pub(super) struct Opened {
    /// Beneath `/app` or `/tmp`: growth is charged.
    pub(super) charged: bool,
    /// Beneath a writable mount (uncharged and writable: the shared volume).
    pub(super) writable: bool,
    /// Every write appends.
    pub(super) append: bool,
}

/// The quota as one interpreter instance sees it: the shared tracker, and where each of the
/// guest's descriptors was opened (beneath `/app` or `/tmp`, or another mount).
#[derive(Debug)]
pub struct GuestQuota {
    pub(super) quota: SharedQuota,
    /// Where each guest descriptor was opened (updated by `path_open` and `fd_renumber`).
    pub(super) fds: HashMap<u32, Opened>,
    /// The charged file written last and its length after that write. Asking wasmtime-wasi for
    /// a file's length costs two round trips to its blocking thread pool, so a run of writes
    /// to one file (the usual pattern) asks once. Anything else that may change a length
    /// (another open, a truncation, a renumbering, a new execution) forgets it.
    pub(super) last_write: Option<(u32, u64)>,
    /// A write to a charged file failed with `EFBIG` during the execution in progress: the
    /// file reached the largest size a file may have (RLIMIT_FSIZE). Cleared when one starts.
    pub(super) file_cap_reached: bool,
}

impl GuestQuota {
    /// The tracker for a guest whose preopens are `/app` at fd 3 and `mounts` (guest path,
    /// writable) from fd 4 on, in order (how wasmtime-wasi numbers the preopens it was given).
    pub fn new(quota: SharedQuota, mounts: &[(&str, bool)]) -> Self {
        let mut fds = HashMap::new();
        {
            let q = lock(&quota);
            for (i, &(guest, writable)) in
                std::iter::once(&("/app", true)).chain(mounts).enumerate()
            {
                let opened = Opened {
                    charged: writable && q.covers(guest),
                    writable,
                    append: false,
                };
                fds.insert(3 + i as u32, opened);
            }
        }
        Self {
            quota,
            fds,
            last_write: None,
            file_cap_reached: false,
        }
    }

    /// Forgets the length of the file written last: something else may change it (the shell
    /// between executions).
    pub fn forget_lengths(&mut self) {
        self.last_write = None;
    }

    /// Forgets what the execution before saw: the lengths, and a file that reached its cap.
    pub fn begin_execution(&mut self) {
        self.forget_lengths();
        self.file_cap_reached = false;
    }

    /// The descriptor, when growth through it is charged.
    pub(super) fn charged(&self, fd: i32) -> Option<Opened> {
        self.fds.get(&(fd as u32)).filter(|o| o.charged).copied()
    }

    /// Whether a link or rename from `from` to `to` would bring files into the quota that were
    /// never charged (from the writable shared volume). A read-only source is left to
    /// wasmtime-wasi, which refuses it (`EPERM`).
    pub(super) fn would_import(&self, from: i32, to: i32) -> bool {
        let source = self.fds.get(&(from as u32));
        self.charged(to).is_some() && source.is_some_and(|o| !o.charged && o.writable)
    }

    /// The quota's refusal count (a mark for [`explain_failure`]).
    pub fn refusals(&self) -> u64 {
        lock(&self.quota).refusals()
    }
}

/// Classifies a failed execution as `disk_quota` when a growth was refused during it (since
/// `mark`), or a file reached the largest size a file may have: JavaScript reports `EDQUOT`
/// and `EFBIG` as a plain `Error`, and code may turn Python's `OSError` into another
/// exception. The message gets the quota's numbers and what to do.
pub fn explain_failure(guest: &GuestQuota, mark: u64, error: &mut GuestError) {
    if !matches!(error.kind, ErrorKind::Runtime | ErrorKind::DiskQuota) {
        return;
    }
    let q = lock(&guest.quota);
    if let Some(refusal) = q.refusal_since(mark) {
        error.kind = ErrorKind::DiskQuota;
        error.message = format!("{}; {refusal}", error.message);
    } else if guest.file_cap_reached {
        error.kind = ErrorKind::DiskQuota;
        error.message = format!("{}; {FILE_CAP_REACHED}", error.message);
    }
}

/// What a write that failed with `EFBIG` means here, for the message of the failed execution.
const FILE_CAP_REACHED: &str = "disk_quota: a file reached the largest size one file may have in this session (the flavor's per-file cap); write it in parts (several files), write less, or create_session with a larger flavor";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quota::{Quota, QuotaLimits};

    fn error(kind: ErrorKind) -> GuestError {
        GuestError {
            kind,
            name: Some("Error".into()),
            message: "Error: EFBIG: File too large, writeText 'big.bin'".into(),
        }
    }

    /// A write that failed with `EFBIG` makes a plain runtime error `disk_quota`, with the
    /// per-file cap named; the next execution starts without the mark.
    #[test]
    fn a_file_at_its_cap_explains_the_failure() {
        let limits = QuotaLimits {
            bytes: 1 << 20,
            entries: 10,
        };
        let mut guest = GuestQuota::new(Quota::new(limits, Vec::new()).into_shared(), &[]);
        let mark = guest.refusals();
        let mut plain = error(ErrorKind::Runtime);
        explain_failure(&guest, mark, &mut plain);
        assert_eq!(plain.kind, ErrorKind::Runtime, "no write was refused");

        guest.file_cap_reached = true;
        let mut at_cap = error(ErrorKind::Runtime);
        explain_failure(&guest, mark, &mut at_cap);
        assert_eq!(at_cap.kind, ErrorKind::DiskQuota);
        assert!(at_cap.message.contains("largest size one file may have"));
        // Another class of failure keeps its class.
        let mut oom = error(ErrorKind::OutOfMemory);
        explain_failure(&guest, mark, &mut oom);
        assert_eq!(oom.kind, ErrorKind::OutOfMemory);

        guest.begin_execution();
        let mut next = error(ErrorKind::Runtime);
        explain_failure(&guest, mark, &mut next);
        assert_eq!(next.kind, ErrorKind::Runtime);
    }
}
