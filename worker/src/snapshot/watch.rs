//! Which pages of a linear memory were written, asked of the kernel rather than found by
//! comparing: `/proc/self/pagemap` says which pages are private copies (written since the
//! instance began: [`written_pages`]), and a userfaultfd in asynchronous write-protect mode
//! with `PAGEMAP_SCAN` says which were written since they were last asked about
//! ([`Watch::take_written`]), so the state after a call costs the pages that call wrote, not
//! every page the session ever wrote.
//!
//! A page written by every call (the interpreter's allocator and stack, a few dozen pages of
//! CPython's) would take a write fault after every call. After [`HOT_AFTER`] calls in a row a
//! page is left unprotected and named written every time instead ([`Watch::take_written`]),
//! which costs hashing it (at most [`MAX_HOT`] pages). Every [`HOT_REFRESH`] calls the watch
//! protects them again, so a page no longer written every call goes back to costing nothing.
//! A fault costs about as much as the `ioctl` that protects a run of pages: only a walk that
//! protects as it goes (`PM_SCAN_WP_MATCHING`) is cheaper, and it would protect the hot pages
//! too, so the walk only reads, and the written runs are protected after it.
//!
//! Both descriptors are opened before the jail ([`open`]): the jail lets `ioctl` through only on
//! them, and only with the three commands used here (`jail::seccomp`). The kernel resolves a
//! write to a protected page by itself (`UFFD_FEATURE_WP_ASYNC`): nothing waits and no message
//! is ever read. A kernel without these (before 6.7, or userfaultfd refused) leaves the pagemap
//! alone, and a state layer then looks at every written page, which is only slower.

use std::fs::File;
use std::ops::Range;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::FileExt;
use std::sync::Mutex;

use super::PAGE;

/// The descriptors this process watches its memory with (see [`open`]).
struct Kernel {
    /// The process that opened them: a forked child opens its own.
    pid: u32,
    pagemap: File,
    /// The userfaultfd, in asynchronous write-protect mode; `None` where the kernel refused it.
    faults: Option<OwnedFd>,
}

static KERNEL: Mutex<Option<Kernel>> = Mutex::new(None);

/// `ioctl` request numbers (`_IOWR` of the structures below).
pub const UFFDIO_API: u64 = 0xc018_aa3f;
pub const UFFDIO_REGISTER: u64 = 0xc020_aa00;
pub const UFFDIO_WRITEPROTECT: u64 = 0xc018_aa06;
pub const PAGEMAP_SCAN: u64 = 0xc060_6610;

const UFFD_API: u64 = 0xaa;
/// Only faults from user mode would be delivered: what an unprivileged process may ask for.
const UFFD_USER_MODE_ONLY: libc::c_int = 1;
const UFFD_FEATURE_WP_UNPOPULATED: u64 = 1 << 13;
const UFFD_FEATURE_WP_ASYNC: u64 = 1 << 15;
const UFFDIO_REGISTER_MODE_WP: u64 = 1 << 1;
const UFFDIO_WRITEPROTECT_MODE_WP: u64 = 1 << 0;
const PM_SCAN_CHECK_WPASYNC: u64 = 1 << 1;
const PAGE_IS_WRITTEN: u64 = 1 << 1;
const PAGE_IS_FILE: u64 = 1 << 2;
const PAGE_IS_PRESENT: u64 = 1 << 3;
const PAGE_IS_SWAPPED: u64 = 1 << 4;
const PAGE_IS_PFNZERO: u64 = 1 << 5;

#[repr(C)]
struct UffdioApi {
    api: u64,
    features: u64,
    ioctls: u64,
}

#[repr(C)]
struct UffdioRange {
    start: u64,
    len: u64,
}

#[repr(C)]
struct UffdioRegister {
    range: UffdioRange,
    mode: u64,
    ioctls: u64,
}

#[repr(C)]
struct UffdioWriteprotect {
    range: UffdioRange,
    mode: u64,
}

#[repr(C)]
struct PmScanArg {
    size: u64,
    flags: u64,
    start: u64,
    end: u64,
    walk_end: u64,
    vec: u64,
    vec_len: u64,
    max_pages: u64,
    category_inverted: u64,
    category_mask: u64,
    category_anyof_mask: u64,
    return_mask: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct PageRegion {
    start: u64,
    end: u64,
    categories: u64,
}

/// Opens this process's pagemap and userfaultfd for later snapshots and state layers: called by
/// a worker before it enters its jail (a forked worker calls it itself: both name the process
/// that opened them, and replace ones it may have inherited).
pub fn open() {
    let mut kernel = KERNEL.lock().unwrap_or_else(|e| e.into_inner());
    if kernel.as_ref().is_some_and(|k| k.pid == std::process::id()) {
        return;
    }
    *kernel = None; // an inherited userfaultfd names the parent's memory
    let opened = File::open("/proc/self/pagemap")
        .inspect_err(|e| tracing::debug!(error = %e, "no pagemap: snapshots take every page"))
        .ok()
        .map(|pagemap| Kernel {
            pid: std::process::id(),
            pagemap,
            faults: write_protect_faults(),
        });
    *kernel = opened;
}

/// A userfaultfd whose write-protection the kernel resolves by itself, or `None`.
fn write_protect_faults() -> Option<OwnedFd> {
    let flags = libc::O_CLOEXEC | libc::O_NONBLOCK | UFFD_USER_MODE_ONLY;
    // SAFETY: a plain system call; the descriptor it returns is ours alone.
    let fd = unsafe { libc::syscall(libc::SYS_userfaultfd, flags) };
    if fd < 0 {
        tracing::debug!(error = %std::io::Error::last_os_error(), "no userfaultfd");
        return None;
    }
    // SAFETY: a descriptor just returned by the kernel, owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
    let mut api = UffdioApi {
        api: UFFD_API,
        features: UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED,
        ioctls: 0,
    };
    // SAFETY: UFFDIO_API reads and writes exactly a `uffdio_api`.
    if unsafe { libc::ioctl(fd.as_raw_fd(), UFFDIO_API as _, &raw mut api) } != 0 {
        tracing::debug!(error = %std::io::Error::last_os_error(), "no asynchronous write-protection");
        return None;
    }
    Some(fd)
}

/// The descriptors the jail must let `ioctl` through on: the userfaultfd and the pagemap, when
/// both are open.
pub fn descriptors() -> Option<(RawFd, RawFd)> {
    let kernel = KERNEL.lock().unwrap_or_else(|e| e.into_inner());
    let kernel = kernel.as_ref()?;
    Some((
        kernel.faults.as_ref()?.as_raw_fd(),
        kernel.pagemap.as_raw_fd(),
    ))
}

/// Pagemap bits (see the kernel's `Documentation/admin-guide/mm/pagemap.rst`).
const PM_PRESENT: u64 = 1 << 63;
const PM_SWAPPED: u64 = 1 << 62;
const PM_FILE_OR_SHARED: u64 = 1 << 61;
const PM_UFFD_WP: u64 = 1 << 57;

/// For each page of `memory`, whether it may differ from a fresh instance's: private anonymous,
/// or swapped out since it was last written. `None` when the kernel cannot say.
///
/// A swap entry that carries the write-protect bit is a page nobody wrote since a [`Watch`]
/// protected it: the marker the watch leaves on a page never touched (which is all pagemap shows
/// of it), or a page swapped out unwritten. Either holds what it held when the watch last
/// protected it, which the tracker of the memory has sent: a full snapshot of a watched memory
/// adds the pages its tracker sent (`snapshot::capture`).
pub fn written_pages(memory: &[u8]) -> Option<Vec<bool>> {
    let kernel = KERNEL.lock().unwrap_or_else(|e| e.into_inner());
    written_pages_locked(&kernel.as_ref()?.pagemap, memory)
}

/// Calls in a row that write a page before it is left unprotected (see the module's doc).
const HOT_AFTER: u8 = 3;
/// The most pages left unprotected: each is hashed after every call.
const MAX_HOT: usize = 256;
/// Calls after which the pages left unprotected are protected again.
const HOT_REFRESH: u32 = 64;

/// A linear memory whose writes the kernel records: registered with the userfaultfd and
/// write-protected, so that each write un-protects its page and marks it written.
#[derive(Debug)]
pub struct Watch {
    /// The memory's first address.
    start: usize,
    /// How much of it is watched: the memory's size when it was last armed or scanned.
    len: usize,
    /// Pages left unprotected because every recent call wrote them (indices, ascending).
    hot: Vec<usize>,
    /// For each page, how many calls in a row wrote it (up to [`HOT_AFTER`]), and the pages
    /// the last call wrote.
    streak: Vec<u8>,
    last_written: Vec<usize>,
    /// Calls since the hot pages were last protected again.
    since_refresh: u32,
}

impl Watch {
    /// Starts watching `memory` (whose pages are, from now on, "not written"), or `None` when
    /// the kernel cannot.
    pub fn arm(memory: &[u8]) -> Option<Self> {
        let start = memory.as_ptr() as usize;
        if !start.is_multiple_of(PAGE) || !memory.len().is_multiple_of(PAGE) {
            return None;
        }
        let kernel = KERNEL.lock().unwrap_or_else(|e| e.into_inner());
        let faults = kernel.as_ref()?.faults.as_ref()?.as_raw_fd();
        protect(faults, start..start + memory.len())?;
        Some(Self::new(start, memory.len()))
    }

    fn new(start: usize, len: usize) -> Self {
        Self {
            start,
            len,
            hot: Vec::new(),
            streak: vec![0; len / PAGE],
            last_written: Vec::new(),
            since_refresh: 0,
        }
    }

    /// The pages of `memory` written since the watch was armed or last asked (page indices,
    /// in ranges, ascending), all of them watched again from now on, and the hot pages (left
    /// unprotected, written or not); `None` when the kernel cannot say (the memory moved, or
    /// is no longer registered): the watch is then useless and the caller looks at every
    /// written page instead.
    pub fn take_written(&mut self, memory: &[u8]) -> Option<Vec<Range<usize>>> {
        if memory.as_ptr() as usize != self.start || memory.len() < self.len {
            return None;
        }
        let kernel = KERNEL.lock().unwrap_or_else(|e| e.into_inner());
        let kernel = kernel.as_ref()?;
        let faults = kernel.faults.as_ref()?.as_raw_fd();
        // One walk finds every page without protection: those written since the last call,
        // and the hot ones. Only the written ones are protected again (a walk that protected
        // as it went would protect the hot ones too); the guest runs in neither step.
        let found = scan(
            kernel.pagemap.as_raw_fd(),
            self.start..self.start + self.len,
        )?;
        let cold: Vec<usize> = (found.into_iter().flatten())
            .filter(|page| self.hot.binary_search(page).is_err())
            .collect();
        let named = page_ranges(&merged(&cold, &self.hot));
        let promoted = self.follow_heat(&cold);
        let protect_again: Vec<usize> = (cold.iter().copied())
            .filter(|page| promoted.binary_search(page).is_err())
            .collect();
        for range in page_ranges(&protect_again) {
            write_protect(faults, self.page_span(&range), true)?;
        }
        self.hot = merged(&self.hot, &promoted);
        if self.since_refresh >= HOT_REFRESH {
            // Named above with what they hold now: watched like the rest from here on.
            for range in page_ranges(&std::mem::take(&mut self.hot)) {
                write_protect(faults, self.page_span(&range), true)?;
            }
            self.since_refresh = 0;
        }
        let mut written = named;
        // Memory the last call grew: each written page of it, then watched like the rest.
        if memory.len() > self.len {
            let grown = &memory[self.len..];
            let flags = written_pages_locked(&kernel.pagemap, grown)?;
            let first = self.len / PAGE;
            written.extend(
                flags
                    .iter()
                    .enumerate()
                    .filter(|(_, w)| **w)
                    .map(|(i, _)| first + i..first + i + 1),
            );
            protect(faults, self.start + self.len..self.start + memory.len())?;
            self.len = memory.len();
            self.streak.resize(self.len / PAGE, 0);
        }
        Some(written)
    }

    /// Counts the calls in a row that wrote each protected page (`written`, ascending: those
    /// this call wrote) and returns those that reached [`HOT_AFTER`], to be left unprotected
    /// (at most [`MAX_HOT`] in all).
    fn follow_heat(&mut self, written: &[usize]) -> Vec<usize> {
        self.since_refresh += 1;
        for &page in &self.last_written {
            if written.binary_search(&page).is_err()
                && let Some(streak) = self.streak.get_mut(page)
            {
                *streak = 0;
            }
        }
        let mut promoted = Vec::new();
        for &page in written {
            let Some(streak) = self.streak.get_mut(page) else {
                continue;
            };
            *streak = (*streak + 1).min(HOT_AFTER);
            if *streak == HOT_AFTER && self.hot.len() + promoted.len() < MAX_HOT {
                promoted.push(page);
            }
        }
        self.last_written = written.to_vec();
        promoted
    }

    /// The addresses of the pages `pages` (indices).
    fn page_span(&self, pages: &Range<usize>) -> Range<usize> {
        self.start + pages.start * PAGE..self.start + pages.end * PAGE
    }
}

/// The union of `a` and `b` (ascending indices, each without repeats), ascending.
fn merged(a: &[usize], b: &[usize]) -> Vec<usize> {
    let mut all = Vec::with_capacity(a.len() + b.len());
    all.extend_from_slice(a);
    all.extend_from_slice(b);
    all.sort_unstable();
    all.dedup();
    all
}

/// `pages` (ascending indices) as runs of consecutive pages.
fn page_ranges(pages: &[usize]) -> Vec<Range<usize>> {
    let mut ranges: Vec<Range<usize>> = Vec::new();
    for &page in pages {
        match ranges.last_mut() {
            Some(last) if last.end == page => last.end += 1,
            _ => ranges.push(page..page + 1),
        }
    }
    ranges
}

/// [`written_pages`] with the kernel's descriptors already in hand: asked with `PAGEMAP_SCAN`,
/// which also tells a page mapped to the shared zero page (read, never written: a forked worker
/// has many, from its fork server's reads) from a written one; or, on a kernel without it,
/// read from the pagemap, where both look alike.
fn written_pages_locked(pagemap: &File, memory: &[u8]) -> Option<Vec<bool>> {
    let start = memory.as_ptr() as usize;
    if !start.is_multiple_of(PAGE) {
        return None;
    }
    if let Some(written) = written_by_scan(pagemap.as_raw_fd(), memory) {
        return Some(written);
    }
    let count = memory.len().div_ceil(PAGE);
    let mut raw = vec![0u8; count * 8];
    pagemap
        .read_exact_at(&mut raw, (start / PAGE) as u64 * 8)
        .ok()?;
    Some(
        raw.chunks_exact(8)
            .map(|entry| {
                let bits = u64::from_le_bytes(entry.try_into().expect("eight bytes"));
                (bits & PM_SWAPPED != 0 && bits & PM_UFFD_WP == 0)
                    || (bits & PM_PRESENT != 0 && bits & PM_FILE_OR_SHARED == 0)
            })
            .collect(),
    )
}

/// [`written_pages`] by `PAGEMAP_SCAN`: a page is written when it is present, private, anonymous
/// and not the zero page, or swapped out without the write-protect bit (see [`written_pages`]).
fn written_by_scan(pagemap: RawFd, memory: &[u8]) -> Option<Vec<bool>> {
    let start = memory.as_ptr() as usize;
    let mut written = vec![false; memory.len().div_ceil(PAGE)];
    let categories = PAGE_IS_PRESENT | PAGE_IS_SWAPPED | PAGE_IS_FILE | PAGE_IS_PFNZERO;
    let regions = scan_regions(
        pagemap,
        start..start + memory.len(),
        ScanFor {
            flags: 0,
            category_mask: 0,
            category_anyof_mask: PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
            return_mask: categories | PAGE_IS_WRITTEN,
        },
    )?;
    for (pages, found) in regions {
        let present = found & PAGE_IS_PRESENT != 0 && found & (PAGE_IS_FILE | PAGE_IS_PFNZERO) == 0;
        let swapped = found & PAGE_IS_SWAPPED != 0 && found & PAGE_IS_WRITTEN != 0;
        if present || swapped {
            written[pages].fill(true);
        }
    }
    Some(written)
}

/// Registers `range` with the userfaultfd (again, if it already is) and write-protects it.
fn protect(faults: RawFd, range: Range<usize>) -> Option<()> {
    let len = (range.end - range.start) as u64;
    if len == 0 {
        return Some(());
    }
    let mut register = UffdioRegister {
        range: UffdioRange {
            start: range.start as u64,
            len,
        },
        mode: UFFDIO_REGISTER_MODE_WP,
        ioctls: 0,
    };
    // SAFETY: UFFDIO_REGISTER reads and writes exactly a `uffdio_register`; the range is memory
    // of this process that the caller holds.
    if unsafe { libc::ioctl(faults, UFFDIO_REGISTER as _, &raw mut register) } != 0 {
        tracing::debug!(error = %std::io::Error::last_os_error(), "userfaultfd registration refused");
        return None;
    }
    write_protect(faults, range, true)
}

/// Write-protects `range` of a registered memory (`on`), or lifts the protection.
fn write_protect(faults: RawFd, range: Range<usize>, on: bool) -> Option<()> {
    let mut protect = UffdioWriteprotect {
        range: UffdioRange {
            start: range.start as u64,
            len: (range.end - range.start) as u64,
        },
        mode: if on { UFFDIO_WRITEPROTECT_MODE_WP } else { 0 },
    };
    // SAFETY: UFFDIO_WRITEPROTECT reads exactly a `uffdio_writeprotect`.
    if unsafe { libc::ioctl(faults, UFFDIO_WRITEPROTECT as _, &raw mut protect) } != 0 {
        tracing::debug!(error = %std::io::Error::last_os_error(), "write-protection refused");
        return None;
    }
    Some(())
}

/// The pages of `range` without write-protection (written since they were last protected),
/// as page indices from the range's start.
fn scan(pagemap: RawFd, range: Range<usize>) -> Option<Vec<Range<usize>>> {
    let regions = scan_regions(
        pagemap,
        range,
        ScanFor {
            flags: PM_SCAN_CHECK_WPASYNC,
            category_mask: PAGE_IS_WRITTEN,
            category_anyof_mask: 0,
            return_mask: PAGE_IS_WRITTEN,
        },
    )?;
    Some(regions.into_iter().map(|(pages, _)| pages).collect())
}

/// What a `PAGEMAP_SCAN` asks for.
struct ScanFor {
    flags: u64,
    category_mask: u64,
    category_anyof_mask: u64,
    return_mask: u64,
}

/// The regions of `range` that `PAGEMAP_SCAN` matches with `what`: page indices from the
/// range's start, and their categories (of `what.return_mask`).
fn scan_regions(
    pagemap: RawFd,
    range: Range<usize>,
    what: ScanFor,
) -> Option<Vec<(Range<usize>, u64)>> {
    let mut regions = vec![PageRegion::default(); 512];
    let mut found = Vec::new();
    let mut from = range.start as u64;
    while from < range.end as u64 {
        let mut arg = PmScanArg {
            size: std::mem::size_of::<PmScanArg>() as u64,
            flags: what.flags,
            start: from,
            end: range.end as u64,
            walk_end: 0,
            vec: regions.as_mut_ptr() as u64,
            vec_len: regions.len() as u64,
            max_pages: 0,
            category_inverted: 0,
            category_mask: what.category_mask,
            category_anyof_mask: what.category_anyof_mask,
            return_mask: what.return_mask,
        };
        // SAFETY: PAGEMAP_SCAN reads a `pm_scan_arg` and writes at most `vec_len` regions into
        // `vec`, which holds that many.
        let count = unsafe { libc::ioctl(pagemap, PAGEMAP_SCAN as _, &raw mut arg) };
        let Ok(count) = usize::try_from(count) else {
            tracing::debug!(error = %std::io::Error::last_os_error(), "PAGEMAP_SCAN refused");
            return None;
        };
        for region in &regions[..count.min(regions.len())] {
            let start = (region.start as usize - range.start) / PAGE;
            let end = (region.end as usize - range.start).div_ceil(PAGE);
            found.push((start..end, region.categories));
        }
        if arg.walk_end <= from {
            return None; // no progress: never expected, never looped on
        }
        from = arg.walk_end;
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A private anonymous mapping of `pages` pages, unmapped on drop.
    struct Mapping(&'static mut [u8]);

    impl Mapping {
        fn new(pages: usize) -> Self {
            // SAFETY: a fresh private anonymous mapping, unmapped on drop; nothing else refers
            // to it.
            let base = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    pages * PAGE,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            assert_ne!(base, libc::MAP_FAILED);
            // SAFETY: the mapping is `pages` pages, readable and writable, and ours alone.
            Self(unsafe { std::slice::from_raw_parts_mut(base.cast::<u8>(), pages * PAGE) })
        }
    }

    impl Drop for Mapping {
        fn drop(&mut self) {
            // SAFETY: the mapping made in `new`, no longer borrowed.
            unsafe { libc::munmap(self.0.as_mut_ptr().cast(), self.0.len()) };
        }
    }

    #[test]
    fn the_kernel_tells_written_pages_from_untouched_ones() {
        open();
        let mapping = Mapping::new(16);
        mapping.0[3 * PAGE + 1] = 1;
        let _read = std::hint::black_box(mapping.0[7 * PAGE]);
        let Some(written) = written_pages(mapping.0) else {
            return; // no pagemap here: snapshots compare instead
        };
        assert_eq!(written.len(), 16);
        assert!(written[3], "the written page");
        assert!(!written[0] && !written[15], "pages never touched");
        if descriptors().is_some() {
            assert!(!written[7], "a page only read is the zero page");
        }
    }

    #[test]
    fn a_watch_names_the_pages_written_since_it_was_last_asked() {
        open();
        let mapping = Mapping::new(32);
        mapping.0[5 * PAGE] = 1; // before the watch: not reported
        let Some(mut watch) = Watch::arm(&mapping.0[..16 * PAGE]) else {
            assert!(
                descriptors().is_none(),
                "the kernel offers a watch: it must arm"
            );
            return;
        };
        mapping.0[3 * PAGE + 7] = 1;
        mapping.0[10 * PAGE] = 2;
        mapping.0[11 * PAGE] = 2;
        let _read = mapping.0[12 * PAGE] + mapping.0[5 * PAGE];
        // The markers the watch leaves on untouched pages are not written pages.
        let flags = written_pages(&mapping.0[..16 * PAGE]).expect("a pagemap");
        let flagged: Vec<usize> = (0..16).filter(|p| flags[*p]).collect();
        assert_eq!(
            flagged,
            [3, 5, 10, 11],
            "written before and after the watch began"
        );
        assert_eq!(
            watch.take_written(&mapping.0[..16 * PAGE]),
            Some(vec![3..4, 10..12])
        );
        assert_eq!(
            watch.take_written(&mapping.0[..16 * PAGE]),
            Some(vec![]),
            "protected again"
        );
        mapping.0[15 * PAGE] = 3;
        // The memory grew: written pages of the new part are named, and it is watched from now.
        mapping.0[20 * PAGE] = 4;
        assert_eq!(
            watch.take_written(&mapping.0[..24 * PAGE]),
            Some(vec![15..16, 20..21])
        );
        mapping.0[22 * PAGE] = 5;
        assert_eq!(
            watch.take_written(&mapping.0[..24 * PAGE]),
            Some(Vec::from([22..23]))
        );
        // Memory that is not the watched one is refused, not misread.
        let other = Mapping::new(24);
        let mut moved = Watch::new(other.0.as_ptr() as usize, other.0.len());
        assert_eq!(moved.take_written(other.0), None, "never registered");
    }

    /// A page every call writes is left unprotected and named after every call, written or
    /// not, until the watch protects it again; pages written now and then stay protected.
    #[test]
    fn pages_every_call_writes_are_left_unprotected_and_always_named() {
        open();
        let mapping = Mapping::new(16);
        let Some(mut watch) = Watch::arm(mapping.0) else {
            return; // no watch here (see the test above)
        };
        for _ in 0..HOT_AFTER {
            mapping.0[2 * PAGE] += 1;
            mapping.0[9 * PAGE] += 1;
            assert_eq!(watch.take_written(mapping.0), Some(vec![2..3, 9..10]));
        }
        assert_eq!(watch.hot, [2, 9], "written by every call");
        // Named though nothing wrote them, and a page written once is scanned as before.
        mapping.0[5 * PAGE] = 1;
        assert_eq!(watch.take_written(mapping.0), Some(vec![2..3, 5..6, 9..10]));
        // Protected again after HOT_REFRESH calls: then named only when written.
        let mut calls = 0;
        while !watch.hot.is_empty() {
            assert!(
                calls < HOT_REFRESH,
                "protected again within HOT_REFRESH calls"
            );
            watch.take_written(mapping.0).unwrap();
            calls += 1;
        }
        assert_eq!(watch.take_written(mapping.0), Some(vec![]));
        mapping.0[9 * PAGE] += 1;
        assert_eq!(watch.take_written(mapping.0), Some(vec![9..10]));
    }
}
