//! The WASI p1 calls that grow a session's files, shadowed (like `fd_write` in `host.rs`) so the
//! quota is charged before wasmtime-wasi does the work, and a growth that does not fit is refused
//! with errno `DQUOT` (19): Python raises `OSError(errno.EDQUOT, ...)`, which its driver
//! classifies `disk_quota`, and QuickJS's helpers throw an `EDQUOT` error.
//!
//! Which descriptors are charged: the preopens of `/app` and `/tmp`, and every descriptor opened
//! beneath them ([`GuestQuota`] knows where each descriptor was opened, updated by `path_open`
//! and `fd_renumber`). Writes
//! to stdout/stderr, `/data` and the shared volume are not charged.
//!
//! What is charged, before the call (and given back when the call fails):
//! - `path_open` with `O_CREAT` of a file that did not exist: one entry (see [`path_open`]);
//! - `path_create_directory`, `path_link`: one entry; `path_symlink`: one entry and its text;
//! - `fd_write`/`fd_pwrite` on a charged regular file: the bytes past its current end (appends
//!   always grow), adjusted to what was really written;
//! - `fd_filestat_set_size`: the growth (a shrink is released).
//!
//! `path_unlink_file` and `path_remove_directory` release one entry each; bytes of deleted files
//! come back at the next recount (a deleted file may still be open). `path_rename` and
//! `path_link` from the writable shared volume into `/app` or `/tmp` answer `XDEV`, so the guest
//! copies instead, and the copy is charged (Python's `shutil.move` does that); from a read-only
//! mount wasmtime-wasi refuses them itself (`EPERM`).

use std::collections::HashMap;

use sandbox_protocol::{ErrorKind, GuestError};
use wasmtime::{AsContextMut, Caller, Linker, Result};
use wasmtime_wasi::p1::wasi_snapshot_preview1::{self as p1, WasiSnapshotPreview1};
use wasmtime_wasi::p1::{WasiP1Ctx, types};
use wasmtime_wasi::runtime::in_tokio;
use wiggle::{GuestMemory, GuestPtr};

use super::{Amount, SharedQuota, lock};
use crate::host::{self, HostState, iovecs, read_u32};

/// WASI errno values the shadows answer with themselves.
mod errno {
    pub const SUCCESS: i32 = 0;
    pub const DQUOT: i32 = 19;
    pub const FAULT: i32 = 21;
    pub const NOENT: i32 = 44;
    pub const XDEV: i32 = 75;
}

/// `oflags` bits of `path_open`.
const OFLAGS_CREAT: i32 = 1;
const OFLAGS_DIRECTORY: i32 = 2;
const OFLAGS_EXCL: i32 = 4;
const OFLAGS_TRUNC: i32 = 8;

/// `fdflags` bit of `path_open`: every write appends.
const FDFLAGS_APPEND: i32 = 1;

/// Where a guest descriptor was opened, as far as the quota cares.
#[derive(Debug, Clone, Copy)]
struct Opened {
    /// Beneath `/app` or `/tmp`: growth is charged.
    charged: bool,
    /// Beneath a writable mount (uncharged and writable: the shared volume).
    writable: bool,
    /// Every write appends.
    append: bool,
}

/// The quota as one interpreter instance sees it: the shared tracker, and where each of the
/// guest's descriptors was opened (beneath `/app` or `/tmp`, or another mount).
#[derive(Debug)]
pub struct GuestQuota {
    quota: SharedQuota,
    fds: HashMap<u32, Opened>,
    /// The charged file written last and its length after that write. Asking wasmtime-wasi for
    /// a file's length costs two round trips to its blocking thread pool, so a run of writes
    /// to one file (the usual pattern) asks once. Anything else that may change a length
    /// (another open, a truncation, a renumbering, a new execution) forgets it.
    last_write: Option<(u32, u64)>,
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
        }
    }

    /// Forgets the length of the file written last: something else may change it (the shell
    /// between executions).
    pub fn forget_lengths(&mut self) {
        self.last_write = None;
    }

    /// The descriptor, when growth through it is charged.
    fn charged(&self, fd: i32) -> Option<Opened> {
        self.fds.get(&(fd as u32)).filter(|o| o.charged).copied()
    }

    /// Whether a link or rename from `from` to `to` would bring files into the quota that were
    /// never charged (from the writable shared volume). A read-only source is left to
    /// wasmtime-wasi, which refuses it (`EPERM`).
    fn would_import(&self, from: i32, to: i32) -> bool {
        let source = self.fds.get(&(from as u32));
        self.charged(to).is_some() && source.is_some_and(|o| !o.charged && o.writable)
    }

    /// The quota's refusal count (a mark for [`explain_failure`]).
    pub fn refusals(&self) -> u64 {
        lock(&self.quota).refusals()
    }
}

/// Classifies a failed execution as `disk_quota` when a growth was refused during it (since
/// `mark`): JavaScript reports `EDQUOT` as a plain `Error`, and code may turn Python's `OSError`
/// into another exception. The message gets the quota's numbers and what to do.
pub fn explain_failure(guest: &GuestQuota, mark: u64, error: &mut GuestError) {
    let q = lock(&guest.quota);
    let Some(refusal) = q.refusal_since(mark) else {
        return;
    };
    if matches!(error.kind, ErrorKind::Runtime | ErrorKind::DiskQuota) {
        error.kind = ErrorKind::DiskQuota;
        error.message = format!("{}; {refusal}", error.message);
    }
}

/// Our state and the guest's memory, with the hostcall fuel set as wiggle's generated glue sets
/// it for every call it makes: the calls made from a shadow spend that fuel too, and without a
/// refill a long run of them would fail with `NOMEM`.
fn parts<'a>(caller: &'a mut Caller<'_, HostState>) -> Result<(&'a mut [u8], &'a mut HostState)> {
    let fuel = caller.as_context_mut().hostcall_fuel();
    let (mem, state) = host::memory_and_state(caller)?;
    state.wasi.set_hostcall_fuel(fuel);
    Ok((mem, state))
}

fn fd(n: i32) -> types::Fd {
    types::Fd::from(n as u32)
}

/// The regular file behind a descriptor: its size and link count; `None` for anything else.
fn regular_file(
    wasi: &mut wasmtime_wasi::p1::WasiP1Ctx,
    gm: &mut GuestMemory<'_>,
    n: i32,
) -> Option<types::Filestat> {
    let stat = in_tokio(wasi.fd_filestat_get(gm, fd(n))).ok()?;
    (stat.filetype == types::Filetype::RegularFile).then_some(stat)
}

/// What the path names now (symlinks followed as `lookup` says), or `None`.
fn path_stat(
    wasi: &mut wasmtime_wasi::p1::WasiP1Ctx,
    gm: &mut GuestMemory<'_>,
    dirfd: i32,
    lookup: i32,
    path: i32,
    len: i32,
) -> Option<types::Filestat> {
    let flags = types::Lookupflags::from_bits_truncate(lookup as u32);
    let path = GuestPtr::<str>::new((path as u32, len as u32));
    in_tokio(wasi.path_filestat_get(gm, fd(dirfd), flags, path)).ok()
}

/// Bytes of charged files the guest deleted while it still has them open: they take disk space
/// that no walk of the directories sees.
fn hidden_bytes(
    wasi: &mut wasmtime_wasi::p1::WasiP1Ctx,
    gm: &mut GuestMemory<'_>,
    fds: &HashMap<u32, Opened>,
) -> Option<u64> {
    let mut total = 0u64;
    for (&n, _) in fds.iter().filter(|(_, o)| o.charged) {
        if let Some(stat) = regular_file(wasi, gm, n as i32)
            && stat.nlink == 0
        {
            total = total.saturating_add(stat.size);
        }
    }
    Some(total)
}

/// Charges `growth` for the guest: `Err(DQUOT)` when it does not fit.
fn charge(state: &mut HostState, gm: &mut GuestMemory<'_>, growth: Amount) -> Result<(), i32> {
    let HostState { wasi, quota, .. } = state;
    let Some(guest) = quota.as_ref() else {
        return Ok(());
    };
    let mut q = lock(&guest.quota);
    q.charge(growth, || hidden_bytes(wasi, gm, &guest.fds))
        .map_err(|_| errno::DQUOT)
}

/// Charges `growth`, runs the delegated WASI call, and gives the charge back when the call
/// failed: the one shape of every shadow that may grow the session's files.
fn with_charge(
    state: &mut HostState,
    gm: &mut GuestMemory<'_>,
    growth: Amount,
    call: impl FnOnce(&mut WasiP1Ctx, &mut GuestMemory<'_>) -> Result<i32>,
) -> Result<i32> {
    if let Err(errno) = charge(state, gm, growth) {
        return Ok(errno);
    }
    let errno = call(&mut state.wasi, gm)?;
    if errno != errno::SUCCESS {
        release(state, growth);
    }
    Ok(errno)
}

/// Gives back a charge whose growth did not happen, or space certainly freed.
fn release(state: &HostState, amount: Amount) {
    if let Some(guest) = &state.quota
        && amount != Amount::ZERO
    {
        lock(&guest.quota).release(amount);
    }
}

/// The descriptor a successful `path_open` wrote at `at`.
fn opened_fd(mem: &[u8], at: i32) -> Option<u32> {
    read_u32(mem, at as u32 as usize)
}

/// wasmtime-wasi's `fd_write` (`offset == None`) or `fd_pwrite`.
fn delegate_write(
    wasi: &mut wasmtime_wasi::p1::WasiP1Ctx,
    gm: &mut GuestMemory<'_>,
    n: i32,
    iovs: i32,
    iovs_len: i32,
    offset: Option<i64>,
    nwritten: i32,
) -> Result<i32> {
    match offset {
        None => in_tokio(p1::fd_write(wasi, gm, n, iovs, iovs_len, nwritten)),
        Some(at) => in_tokio(p1::fd_pwrite(wasi, gm, n, iovs, iovs_len, at, nwritten)),
    }
}

/// `fd_write` (`offset == None`) and `fd_pwrite` on a descriptor above stderr: charged when it is
/// a regular file beneath `/app` or `/tmp`, else straight to wasmtime-wasi.
///
/// # Errors
/// A trap from wasmtime-wasi.
pub fn write(
    caller: &mut Caller<'_, HostState>,
    n: i32,
    iovs: i32,
    iovs_len: i32,
    offset: Option<i64>,
    nwritten: i32,
) -> Result<i32> {
    let (mem, state) = parts(caller)?;
    let opened = state.quota.as_ref().and_then(|g| g.charged(n));
    let Some(opened) = opened else {
        let mut gm = GuestMemory::Unshared(mem);
        return delegate_write(
            &mut state.wasi,
            &mut gm,
            n,
            iovs,
            iovs_len,
            offset,
            nwritten,
        );
    };
    let Some(vecs) = iovecs(mem, iovs, iovs_len) else {
        return Ok(errno::FAULT);
    };
    // wasmtime-wasi writes the first non-empty buffer per call (the guest's libc loops); what
    // it really wrote is settled below, whatever it does.
    let planned = vecs
        .iter()
        .map(|&(_, len)| len as u64)
        .find(|&len| len > 0)
        .unwrap_or(0);
    let mut gm = GuestMemory::Unshared(mem);
    let known = state
        .quota
        .as_ref()
        .and_then(|g| g.last_write)
        .filter(|&(last, _)| last == n as u32)
        .map(|(_, size)| size);
    let size = match known {
        Some(size) => size,
        None => match regular_file(&mut state.wasi, &mut gm, n) {
            Some(stat) => stat.size,
            None => {
                return delegate_write(
                    &mut state.wasi,
                    &mut gm,
                    n,
                    iovs,
                    iovs_len,
                    offset,
                    nwritten,
                );
            }
        },
    };
    let pos = match offset {
        _ if opened.append => size,
        Some(at) => at as u64,
        None => state.wasi.fd_tell(&mut gm, fd(n)).unwrap_or(size),
    };
    let growth = pos.saturating_add(planned).saturating_sub(size);
    if let Err(errno) = charge(state, &mut gm, Amount::bytes(growth)) {
        return Ok(errno);
    }
    let result = delegate_write(
        &mut state.wasi,
        &mut gm,
        n,
        iovs,
        iovs_len,
        offset,
        nwritten,
    );
    let written = match &result {
        Ok(errno::SUCCESS) => read_u32(mem, nwritten as u32 as usize).map_or(0, u64::from),
        _ => 0,
    };
    let end = pos.saturating_add(written);
    let grew = end.saturating_sub(size);
    if let Some(guest) = state.quota.as_mut() {
        guest.last_write = match &result {
            Ok(errno::SUCCESS) => Some((n as u32, size.max(end))),
            _ => None,
        };
        let mut q = lock(&guest.quota);
        if grew < growth {
            q.release(Amount::bytes(growth - grew));
        } else {
            q.add(Amount::bytes(grew - growth));
        }
    }
    result
}

/// `path_open`: a file it creates beneath `/app` or `/tmp` is one entry, and a file it truncates
/// gives its bytes back.
///
/// With `O_CREAT` (and no `O_EXCL`) the file is first opened without it: the usual rewrite of an
/// existing file succeeds at once, and only `ENOENT` means a new file, charged and then created.
/// That costs one extra open for a new file instead of a stat (two round trips to wasmtime-wasi's
/// blocking pool) for every open; the price is that rewriting an existing file does not give its
/// old bytes back until the next count.
#[allow(clippy::too_many_arguments, reason = "WASI p1's signature")]
fn path_open(
    caller: &mut Caller<'_, HostState>,
    dirfd: i32,
    lookup: i32,
    path: i32,
    len: i32,
    oflags: i32,
    base: i64,
    inheriting: i64,
    fdflags: i32,
    out: i32,
) -> Result<i32> {
    let (mem, state) = parts(caller)?;
    let open = |state: &mut HostState, mem: &mut [u8], oflags: i32| -> Result<i32> {
        let mut gm = GuestMemory::Unshared(mem);
        in_tokio(p1::path_open(
            &mut state.wasi,
            &mut gm,
            dirfd,
            lookup,
            path,
            len,
            oflags,
            base,
            inheriting,
            fdflags,
            out,
        ))
    };
    let Some(guest) = state.quota.as_mut() else {
        return open(state, mem, oflags);
    };
    // It may truncate the file written last, or reuse its number.
    guest.forget_lengths();
    let origin = guest.fds.get(&(dirfd as u32)).copied();
    let charged = origin.is_some_and(|o| o.charged);
    let (creat, excl, trunc) = (
        oflags & OFLAGS_CREAT != 0,
        oflags & OFLAGS_EXCL != 0,
        oflags & OFLAGS_TRUNC != 0,
    );
    let mut created = false;
    let mut freed = 0;
    let errno = if !charged || !(creat || trunc) {
        open(state, mem, oflags)?
    } else if creat {
        let first = if excl {
            errno::NOENT
        } else {
            open(state, mem, oflags & !OFLAGS_CREAT)?
        };
        if first == errno::NOENT {
            let growth = Amount::entries(1);
            let mut gm = GuestMemory::Unshared(&mut *mem);
            if let Err(errno) = charge(state, &mut gm, growth) {
                return Ok(errno);
            }
            let errno = open(state, mem, oflags)?;
            if errno == errno::SUCCESS {
                created = true;
            } else {
                release(state, growth);
            }
            errno
        } else {
            first
        }
    } else {
        // O_TRUNC alone (rare): what it frees.
        let mut gm = GuestMemory::Unshared(&mut *mem);
        freed = path_stat(&mut state.wasi, &mut gm, dirfd, lookup, path, len)
            .filter(|s| s.filetype == types::Filetype::RegularFile)
            .map_or(0, |s| s.size);
        open(state, mem, oflags)?
    };
    if errno != errno::SUCCESS {
        return Ok(errno);
    }
    let Some(new_fd) = opened_fd(mem, out) else {
        return Ok(errno);
    };
    if let Some(guest) = state.quota.as_mut() {
        // A reused number must not keep the marks of the descriptor it had.
        guest.fds.remove(&new_fd);
        if let Some(origin) = origin {
            let append = fdflags & FDFLAGS_APPEND != 0;
            guest.fds.insert(new_fd, Opened { append, ..origin });
            // A file just created or truncated is empty: its first write needs no stat.
            if charged && (created || trunc) && oflags & OFLAGS_DIRECTORY == 0 {
                guest.last_write = Some((new_fd, 0));
            }
        }
    }
    release(state, Amount::bytes(freed));
    Ok(errno)
}

/// Adds the shadows of the calls that grow files. `fd_write` is shadowed in `host.rs` and comes
/// here through [`write`].
///
/// # Errors
/// When Wasmtime refuses a definition (a build defect).
pub fn add_to_linker(linker: &mut Linker<HostState>) -> Result<()> {
    const MODULE: &str = "wasi_snapshot_preview1";

    linker.func_wrap(
        MODULE,
        "fd_pwrite",
        |mut caller: Caller<'_, HostState>,
         n: i32,
         iovs: i32,
         iovs_len: i32,
         offset: i64,
         nwritten: i32|
         -> Result<i32> { write(&mut caller, n, iovs, iovs_len, Some(offset), nwritten) },
    )?;

    linker.func_wrap(
        MODULE,
        "path_open",
        |mut caller: Caller<'_, HostState>,
         dirfd: i32,
         lookup: i32,
         path: i32,
         len: i32,
         oflags: i32,
         base: i64,
         inheriting: i64,
         fdflags: i32,
         out: i32|
         -> Result<i32> {
            path_open(
                &mut caller,
                dirfd,
                lookup,
                path,
                len,
                oflags,
                base,
                inheriting,
                fdflags,
                out,
            )
        },
    )?;

    linker.func_wrap(
        MODULE,
        "fd_filestat_set_size",
        |mut caller: Caller<'_, HostState>, n: i32, size: i64| -> Result<i32> {
            let (mem, state) = parts(&mut caller)?;
            if let Some(guest) = state.quota.as_mut() {
                guest.forget_lengths();
            }
            let mut gm = GuestMemory::Unshared(mem);
            let charged = state.quota.as_ref().and_then(|g| g.charged(n)).is_some();
            let current = if charged {
                regular_file(&mut state.wasi, &mut gm, n).map(|s| s.size)
            } else {
                None
            };
            let wanted = size as u64;
            let growth = current.map_or(0, |c| wanted.saturating_sub(c));
            if let Err(errno) = charge(state, &mut gm, Amount::bytes(growth)) {
                return Ok(errno);
            }
            let errno = in_tokio(p1::fd_filestat_set_size(&mut state.wasi, &mut gm, n, size))?;
            if errno != errno::SUCCESS {
                release(state, Amount::bytes(growth));
            } else if let Some(current) = current {
                release(state, Amount::bytes(current.saturating_sub(wanted)));
            }
            Ok(errno)
        },
    )?;

    linker.func_wrap(
        MODULE,
        "path_create_directory",
        |mut caller: Caller<'_, HostState>, dirfd: i32, path: i32, len: i32| -> Result<i32> {
            let (mem, state) = parts(&mut caller)?;
            let mut gm = GuestMemory::Unshared(mem);
            let charged = state
                .quota
                .as_ref()
                .and_then(|g| g.charged(dirfd))
                .is_some();
            let growth = if charged {
                Amount::entries(1)
            } else {
                Amount::ZERO
            };
            with_charge(state, &mut gm, growth, |wasi, gm| {
                in_tokio(p1::path_create_directory(wasi, gm, dirfd, path, len))
            })
        },
    )?;

    linker.func_wrap(
        MODULE,
        "path_symlink",
        |mut caller: Caller<'_, HostState>,
         old: i32,
         old_len: i32,
         dirfd: i32,
         new: i32,
         new_len: i32|
         -> Result<i32> {
            let (mem, state) = parts(&mut caller)?;
            let mut gm = GuestMemory::Unshared(mem);
            let charged = state
                .quota
                .as_ref()
                .and_then(|g| g.charged(dirfd))
                .is_some();
            let growth = if charged {
                Amount {
                    bytes: old_len as u32 as u64,
                    entries: 1,
                }
            } else {
                Amount::ZERO
            };
            with_charge(state, &mut gm, growth, |wasi, gm| {
                in_tokio(p1::path_symlink(
                    wasi, gm, old, old_len, dirfd, new, new_len,
                ))
            })
        },
    )?;

    linker.func_wrap(
        MODULE,
        "path_link",
        |mut caller: Caller<'_, HostState>,
         old_fd: i32,
         lookup: i32,
         old: i32,
         old_len: i32,
         new_fd: i32,
         new: i32,
         new_len: i32|
         -> Result<i32> {
            let (mem, state) = parts(&mut caller)?;
            let mut gm = GuestMemory::Unshared(mem);
            if state
                .quota
                .as_ref()
                .is_some_and(|g| g.would_import(old_fd, new_fd))
            {
                // Its bytes would enter the quota unseen (and could grow through the shared
                // volume): the guest copies instead.
                return Ok(errno::XDEV);
            }
            let to = state
                .quota
                .as_ref()
                .is_some_and(|g| g.charged(new_fd).is_some());
            let growth = if to { Amount::entries(1) } else { Amount::ZERO };
            with_charge(state, &mut gm, growth, |wasi, gm| {
                in_tokio(p1::path_link(
                    wasi, gm, old_fd, lookup, old, old_len, new_fd, new, new_len,
                ))
            })
        },
    )?;

    linker.func_wrap(
        MODULE,
        "path_rename",
        |mut caller: Caller<'_, HostState>,
         old_fd: i32,
         old: i32,
         old_len: i32,
         new_fd: i32,
         new: i32,
         new_len: i32|
         -> Result<i32> {
            let (mem, state) = parts(&mut caller)?;
            if let Some(g) = &state.quota
                && g.would_import(old_fd, new_fd)
            {
                // A tree from the shared volume would enter the quota unseen: copy instead.
                return Ok(errno::XDEV);
            }
            let mut gm = GuestMemory::Unshared(mem);
            in_tokio(p1::path_rename(
                &mut state.wasi,
                &mut gm,
                old_fd,
                old,
                old_len,
                new_fd,
                new,
                new_len,
            ))
        },
    )?;

    for (name, remove) in [
        ("path_unlink_file", unlink as Remove),
        ("path_remove_directory", remove_directory as Remove),
    ] {
        linker.func_wrap(
            MODULE,
            name,
            move |mut caller: Caller<'_, HostState>,
                  dirfd: i32,
                  path: i32,
                  len: i32|
                  -> Result<i32> {
                let (mem, state) = parts(&mut caller)?;
                let mut gm = GuestMemory::Unshared(mem);
                let errno = remove(&mut state.wasi, &mut gm, dirfd, path, len)?;
                if errno == errno::SUCCESS
                    && state
                        .quota
                        .as_ref()
                        .and_then(|g| g.charged(dirfd))
                        .is_some()
                {
                    // One entry less, exactly; the bytes come back at the next count.
                    release(state, Amount::entries(1));
                }
                Ok(errno)
            },
        )?;
    }

    linker.func_wrap(
        MODULE,
        "fd_renumber",
        |mut caller: Caller<'_, HostState>, from: i32, to: i32| -> Result<i32> {
            let (mem, state) = parts(&mut caller)?;
            let mut gm = GuestMemory::Unshared(mem);
            let errno = in_tokio(p1::fd_renumber(&mut state.wasi, &mut gm, from, to))?;
            if errno == errno::SUCCESS
                && let Some(guest) = state.quota.as_mut()
            {
                guest.forget_lengths();
                guest.fds.remove(&(to as u32));
                if let Some(opened) = guest.fds.remove(&(from as u32)) {
                    guest.fds.insert(to as u32, opened);
                }
            }
            Ok(errno)
        },
    )?;
    Ok(())
}

/// `path_unlink_file` or `path_remove_directory`, delegated.
type Remove =
    fn(&mut wasmtime_wasi::p1::WasiP1Ctx, &mut GuestMemory<'_>, i32, i32, i32) -> Result<i32>;

fn unlink(
    wasi: &mut wasmtime_wasi::p1::WasiP1Ctx,
    gm: &mut GuestMemory<'_>,
    dirfd: i32,
    path: i32,
    len: i32,
) -> Result<i32> {
    in_tokio(p1::path_unlink_file(wasi, gm, dirfd, path, len))
}

fn remove_directory(
    wasi: &mut wasmtime_wasi::p1::WasiP1Ctx,
    gm: &mut GuestMemory<'_>,
    dirfd: i32,
    path: i32,
    len: i32,
) -> Result<i32> {
    in_tokio(p1::path_remove_directory(wasi, gm, dirfd, path, len))
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::time::Instant;

    use wasmtime::Linker;

    use super::super::{Quota, QuotaLimits};
    use crate::engine;
    use crate::host::{HostState, SessionConfig, build_linker};

    /// Writes timings of write-heavy loops to `/app/timings`, best of three: 10,000 buffered
    /// and 10,000 unbuffered writes of 100 bytes, and 2,000 small files.
    const BENCH: &str = r#"
import os, time
best = {}
for round in range(3):
    for name in ('buffered', 'unbuffered', 'files'):
        start = time.perf_counter()
        if name == 'buffered':
            with open('/app/w.txt', 'w') as f:
                for i in range(10000):
                    f.write('x' * 100)
        elif name == 'unbuffered':
            with open('/app/u.bin', 'wb', buffering=0) as f:
                for i in range(10000):
                    f.write(b'x' * 100)
        else:
            os.mkdir(f'/app/d{round}')
            for i in range(2000):
                with open(f'/app/d{round}/f{i}', 'w') as f:
                    f.write('y' * 100)
        took = time.perf_counter() - start
        best[name] = min(best.get(name, took), took)
with open('/app/timings', 'w') as f:
    f.write(' '.join(f'{k}={v * 1000:.2f}' for k, v in sorted(best.items())))
"#;

    fn runtime_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/runtimes")
    }

    fn timings(linker: &Linker<HostState>, quota: Option<QuotaLimits>) -> String {
        let engine = engine::engine();
        let dir = runtime_dir();
        let cached = engine::precompile(
            engine,
            "python",
            &dir.join("python-3.12.0.wasm"),
            &dir.join("cache"),
        )
        .expect("python module");
        let module = engine::load_module(engine, &cached.cwasm).expect("load");
        let app = tempfile::tempdir().expect("tempdir");
        let config = SessionConfig {
            mounts: Vec::new(),
            memory_bytes: 1 << 30,
            stdout_cap: 1 << 20,
            stderr_cap: 1 << 20,
            quota: quota.map(|limits| {
                Quota::new(limits, vec![("/app".into(), app.path().to_path_buf())]).into_shared()
            }),
        };
        let args = ["python", "-I", "-S", "-B", "-c", BENCH];
        let (status, _, stderr) = crate::python::run_to_completion(
            &module,
            linker,
            &args,
            app.path(),
            &config,
            u64::MAX / 4,
        )
        .expect("run");
        assert_eq!(status, 0, "{}", String::from_utf8_lossy(&stderr));
        std::fs::read_to_string(app.path().join("timings")).expect("timings")
    }

    /// The overhead of the quota's shadows on write-heavy guest code: wasmtime-wasi alone, our
    /// linker without a quota, and with one (that never refuses). Needs `target/runtimes`
    /// (`runtimes/prepare.sh`); run with `TMPDIR=/dev/shm cargo test --release -p
    /// sandbox-worker -- --ignored --nocapture overhead` (tmpfs keeps the disk's noise out).
    #[test]
    #[ignore = "benchmark; needs target/runtimes"]
    fn overhead_of_the_quota_shadows() {
        let engine = engine::engine();
        let mut plain: Linker<HostState> = Linker::new(engine);
        wasmtime_wasi::p1::add_to_linker_sync(&mut plain, |s: &mut HostState| &mut s.wasi)
            .expect("linker");
        let ours = build_linker(engine).expect("linker");
        let limits = QuotaLimits {
            bytes: 1 << 40,
            entries: 1 << 30,
        };
        let started = Instant::now();
        // Best of rounds, interleaved, so a busy machine disturbs all three alike.
        let mut best: Vec<std::collections::BTreeMap<String, f64>> = vec![Default::default(); 3];
        for round in 0..4 {
            let results = [
                timings(&plain, None),
                timings(&ours, None),
                timings(&ours, Some(limits)),
            ];
            for (i, t) in results.iter().enumerate() {
                println!("round {round}, setup {i}: {t}");
                for pair in t.split_whitespace() {
                    if let Some((name, ms)) = pair.split_once('=')
                        && let Ok(ms) = ms.parse::<f64>()
                    {
                        let slot = best[i].entry(name.to_owned()).or_insert(ms);
                        *slot = slot.min(ms);
                    }
                }
            }
        }
        for (what, b) in [
            "wasmtime-wasi only",
            "shadows, no quota",
            "shadows and quota",
        ]
        .iter()
        .zip(&best)
        {
            println!("best: {what:20} {b:?} (ms)");
        }
        println!("took {:?}", started.elapsed());
    }
}
