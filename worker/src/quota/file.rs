//! The shell's side of the quota: [`QuotaFile`], a file whose growth is charged before it is
//! written.

use std::fs::File;
use std::io::{self, Write};

use super::{Amount, SharedQuota, lock};

/// A file the shell writes: growth past its end is charged to the quota first, and a write that
/// does not fit fails with the refusal (`ErrorKind::QuotaExceeded`, the refusal as its text)
/// without writing anything. The shell writes each file sequentially through one handle, so
/// the position and size are tracked here rather than asked of the kernel.
#[derive(Debug)]
pub struct QuotaFile {
    file: File,
    /// `None` for files outside `/app` and `/tmp` (the shared volume), which are not charged.
    quota: Option<SharedQuota>,
    /// Where the next write lands.
    pos: u64,
    /// The file's length as far as this handle knows.
    size: u64,
    /// Bytes charged ahead of the writes ([`QuotaFile::reserve`]).
    reserved: u64,
}

impl QuotaFile {
    /// Wraps an open file whose next write lands at `pos` and whose length is `size`.
    pub fn new(file: File, quota: Option<SharedQuota>, pos: u64, size: u64) -> Self {
        Self {
            file,
            quota,
            pos,
            size,
            reserved: 0,
        }
    }

    /// Charges `bytes` of growth ahead of the writes, so a copy whose size is known is refused
    /// before any byte is written rather than cut at the quota.
    ///
    /// # Errors
    /// The refusal.
    pub fn reserve(&mut self, bytes: u64) -> io::Result<()> {
        if let Some(quota) = &self.quota {
            lock(quota).charge(Amount::bytes(bytes), || None)?;
            self.reserved = self.reserved.saturating_add(bytes);
        }
        Ok(())
    }

    /// The file itself, for metadata.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// As [`File::set_permissions`].
    ///
    /// # Errors
    /// As [`File::set_permissions`].
    pub fn set_permissions(&self, permissions: std::fs::Permissions) -> io::Result<()> {
        self.file.set_permissions(permissions)
    }

    /// As [`File::set_modified`].
    ///
    /// # Errors
    /// As [`File::set_modified`].
    pub fn set_modified(&self, time: std::time::SystemTime) -> io::Result<()> {
        self.file.set_modified(time)
    }
}

impl Write for QuotaFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let Some(quota) = self.quota.clone() else {
            return self.file.write(buf);
        };
        let end = self.pos.saturating_add(buf.len() as u64);
        let growth = end.saturating_sub(self.size);
        let from_reserve = growth.min(self.reserved);
        let charged = growth - from_reserve;
        lock(&quota).charge(Amount::bytes(charged), || None)?;
        self.reserved -= from_reserve;
        match self.file.write(buf) {
            Ok(n) => {
                let written_end = self.pos.saturating_add(n as u64);
                let grew = written_end.saturating_sub(self.size);
                // A short write grew the file less than planned: the rest goes back.
                let unused = growth - grew.min(growth);
                let back_to_reserve = unused.min(from_reserve);
                self.reserved += back_to_reserve;
                lock(&quota).release(Amount::bytes(unused - back_to_reserve));
                self.pos = written_end;
                self.size = self.size.max(written_end);
                Ok(n)
            }
            Err(e) => {
                self.reserved += from_reserve;
                lock(&quota).release(Amount::bytes(charged));
                Err(e)
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for QuotaFile {
    fn drop(&mut self) {
        // A reservation the writes did not use (the source shrank) is given back.
        if self.reserved > 0
            && let Some(quota) = &self.quota
        {
            lock(quota).release(Amount::bytes(self.reserved));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quota::{Quota, QuotaLimits};

    /// A quota of 1000 bytes over `app` as `/app`.
    fn quota(app: &tempfile::TempDir) -> Quota {
        let limits = QuotaLimits {
            bytes: 1000,
            entries: 10,
        };
        Quota::new(limits, vec![("/app".into(), app.path().to_path_buf())])
    }

    #[test]
    fn shell_writes_are_charged_and_refused_without_writing() {
        let app = tempfile::tempdir().unwrap();
        let shared = quota(&app).into_shared();
        let path = app.path().join("out");
        let open = || QuotaFile::new(File::create(&path).unwrap(), Some(shared.clone()), 0, 0);
        let mut f = open();
        f.write_all(&[1u8; 600]).unwrap();
        let e = f.write_all(&[1u8; 600]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::QuotaExceeded);
        assert!(e.to_string().starts_with("disk_quota: "), "{e}");
        drop(f);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 600);
        // A reservation refuses a copy before any byte is written.
        let mut f = open();
        assert!(f.reserve(1001).is_err());
        f.reserve(1000).unwrap();
        f.write_all(&[2u8; 400]).unwrap();
        drop(f);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 400);
        // The unused reservation was given back.
        assert_eq!(lock(&shared).usage().bytes, 400);
        // Files outside the quota are not charged.
        let mut free = QuotaFile::new(File::create(app.path().join("free")).unwrap(), None, 0, 0);
        free.write_all(&[0u8; 5000]).unwrap();
    }
}
