//! The shadows that grow files by writing or creating them: `fd_write`/`fd_pwrite` on a charged
//! regular file ([`write`]) and `path_open` with `O_CREAT` or `O_TRUNC` ([`path_open`]).

use wasmtime::{Caller, Result};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p1::types;
use wasmtime_wasi::p1::wasi_snapshot_preview1::{self as p1, WasiSnapshotPreview1};
use wasmtime_wasi::runtime::in_tokio;
use wiggle::GuestMemory;

use super::charge::{charge, fd, parts, path_stat, regular_file, release};
use crate::host::guest_memory::{errno, iovecs, read_u32};
use crate::host::guest_quota::Opened;
use crate::host::state::HostState;
use crate::quota::{Amount, lock};

/// `oflags` bits of `path_open`.
const OFLAGS_CREAT: i32 = 1;
const OFLAGS_DIRECTORY: i32 = 2;
const OFLAGS_EXCL: i32 = 4;
const OFLAGS_TRUNC: i32 = 8;

/// `fdflags` bit of `path_open`: every write appends.
const FDFLAGS_APPEND: i32 = 1;

/// The hostcall fuel a write to a file gets at least: wiggle's own per-call default, so small
/// writes spend what they always did.
const WRITE_FUEL_FLOOR: usize = 128 << 20;

/// The arguments of one `fd_write` (`offset == None`) or `fd_pwrite`, to hand to wasmtime-wasi
/// from whichever branch of [`write`] decides to.
#[derive(Clone, Copy)]
struct WriteCall {
    n: i32,
    iovs: i32,
    iovs_len: i32,
    offset: Option<i64>,
    nwritten: i32,
}

impl WriteCall {
    /// wasmtime-wasi's `fd_write` or `fd_pwrite`.
    fn run(&self, wasi: &mut WasiP1Ctx, gm: &mut GuestMemory<'_>) -> Result<i32> {
        let Self {
            n,
            iovs,
            iovs_len,
            offset,
            nwritten,
        } = *self;
        match offset {
            None => in_tokio(p1::fd_write(wasi, gm, n, iovs, iovs_len, nwritten)),
            Some(at) => in_tokio(p1::fd_pwrite(wasi, gm, n, iovs, iovs_len, at, nwritten)),
        }
    }
}

/// `fd_write` (`offset == None`) and `fd_pwrite` on a descriptor above stderr: charged when it is
/// a regular file beneath `/app` or `/tmp`, else straight to wasmtime-wasi.
///
/// # Errors
/// A trap from wasmtime-wasi.
pub(in crate::host) fn write(
    caller: &mut Caller<'_, HostState>,
    n: i32,
    iovs: i32,
    iovs_len: i32,
    offset: Option<i64>,
    nwritten: i32,
) -> Result<i32> {
    let call = WriteCall {
        n,
        iovs,
        iovs_len,
        offset,
        nwritten,
    };
    let (mem, state) = parts(caller)?;
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
    let opened = state.quota.as_ref().and_then(|g| g.charged(n));
    let Some(opened) = opened else {
        // Not charged (a file of the shared volume): written from the guest's memory all
        // the same, so one write of any size is not "Out of memory" (see below).
        allow_write_of(&mut state.wasi, planned, iovs_len);
        let mut gm = GuestMemory::Unshared(mem);
        return call.run(&mut state.wasi, &mut gm);
    };
    let mut gm = GuestMemory::Unshared(mem);
    let Some(size) = file_length(state, &mut gm, n) else {
        return call.run(&mut state.wasi, &mut gm);
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
    allow_write_of(&mut state.wasi, planned, iovs_len);
    let result = call.run(&mut state.wasi, &mut gm);
    let written = match &result {
        Ok(errno::SUCCESS) => Some(read_u32(mem, nwritten as u32 as usize).map_or(0, u64::from)),
        _ => None,
    };
    if matches!(result, Ok(errno::FBIG))
        && let Some(guest) = state.quota.as_mut()
    {
        guest.file_cap_reached = true;
    }
    settle_write(state, n, size, pos, growth, written);
    result
}

/// Lets the next write spend as much hostcall fuel as it writes (`planned` bytes from
/// `iovs_len` buffers). wiggle's hostcall fuel (128 MiB) bounds what a call may copy out of
/// the guest; past it wasmtime-wasi answers `NOMEM`, so `f.write(300 MiB)` failed as "Out of
/// memory" where POSIX writes what fits. A file is written straight from the guest's memory
/// (files block and the memory is unshared: nothing is copied), so the write may spend as
/// much as it writes; the file cap (RLIMIT_FSIZE) then shortens it, and the next write fails
/// with `EFBIG` as on Linux.
fn allow_write_of(wasi: &mut WasiP1Ctx, planned: u64, iovs_len: i32) {
    let iovec_bytes = (iovs_len as u32 as usize).saturating_mul(8);
    let fuel = usize::try_from(planned).map_or(usize::MAX, |p| p.saturating_add(iovec_bytes));
    wasi.set_hostcall_fuel(fuel.max(WRITE_FUEL_FLOOR));
}

/// The length of the charged regular file behind `n`: remembered from the last write to it, or
/// asked of wasmtime-wasi. `None` when it is not a regular file.
fn file_length(state: &mut HostState, gm: &mut GuestMemory<'_>, n: i32) -> Option<u64> {
    let known = state
        .quota
        .as_ref()
        .and_then(|g| g.last_write)
        .filter(|&(last, _)| last == n as u32)
        .map(|(_, size)| size);
    known.or_else(|| regular_file(&mut state.wasi, gm, n).map(|stat| stat.size))
}

/// Turns the charge of a write into what it really grew the file by (`written`: the bytes
/// written at `pos` into a file of `size` bytes, `None` when the write failed), and remembers the
/// file's new length for the next write.
fn settle_write(
    state: &mut HostState,
    n: i32,
    size: u64,
    pos: u64,
    growth: u64,
    written: Option<u64>,
) {
    let end = pos.saturating_add(written.unwrap_or(0));
    let grew = end.saturating_sub(size);
    if let Some(guest) = state.quota.as_mut() {
        guest.last_write = written.map(|_| (n as u32, size.max(end)));
        let mut q = lock(&guest.quota);
        if grew < growth {
            q.release(Amount::bytes(growth - grew));
        } else {
            q.add(Amount::bytes(grew - growth));
        }
    }
}

/// The arguments of one `path_open`, to run it with other `oflags`.
struct OpenCall {
    dirfd: i32,
    lookup: i32,
    path: i32,
    len: i32,
    base: i64,
    inheriting: i64,
    fdflags: i32,
    out: i32,
}

impl OpenCall {
    /// wasmtime-wasi's `path_open` with `oflags`.
    fn run(&self, state: &mut HostState, mem: &mut [u8], oflags: i32) -> Result<i32> {
        let mut gm = GuestMemory::Unshared(mem);
        in_tokio(p1::path_open(
            &mut state.wasi,
            &mut gm,
            self.dirfd,
            self.lookup,
            self.path,
            self.len,
            oflags,
            self.base,
            self.inheriting,
            self.fdflags,
            self.out,
        ))
    }
}

/// `path_open`: a file it creates beneath `/app` or `/tmp` is one entry, and a file it truncates
/// gives its bytes back. A FIFO, socket or device is refused with `ENXIO` (what Linux answers
/// for a socket) before it is opened ([`special_file`]).
///
/// With `O_CREAT` (and no `O_EXCL`) the file is first opened without it: the usual rewrite of an
/// existing file succeeds at once, and only `ENOENT` means a new file, charged and then created.
/// That costs one extra open for a new file instead of a stat (two round trips to wasmtime-wasi's
/// blocking pool) for every open; the price is that rewriting an existing file does not give its
/// old bytes back until the next count.
#[allow(clippy::too_many_arguments, reason = "WASI p1's signature")]
pub(super) fn path_open(
    mut caller: Caller<'_, HostState>,
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
    let call = OpenCall {
        dirfd,
        lookup,
        path,
        len,
        base,
        inheriting,
        fdflags,
        out,
    };
    let (mem, state) = parts(&mut caller)?;
    if oflags & OFLAGS_DIRECTORY == 0 && special_file(state, mem, (dirfd, lookup, path, len)) {
        return Ok(errno::NXIO);
    }
    let errno = open_charged(&call, state, mem, oflags)?;
    if errno == errno::SUCCESS
        && let Some(name) = guest_bytes(mem, path, len)
    {
        state.written.opened(dirfd, name, oflags, base);
    }
    Ok(errno)
}

/// Whether `call` names a FIFO, socket or device. Opening one would block in the host's
/// `open(2)` or `read(2)` (a FIFO without a writer), out of reach of the deadline and of
/// cancellation: the worker would hang until the supervisor kills it. A guest cannot make
/// one (WASI has no `mknod`, and the jail forbids it), but a read-only `/data` or a shared
/// volume may hold one. `wasmtime-wasi` calls a FIFO's type `Unknown`. `at` is the call's
/// directory, lookup flags, and path (pointer and length).
fn special_file(state: &mut HostState, mem: &mut [u8], at: (i32, i32, i32, i32)) -> bool {
    use types::Filetype;
    let (dirfd, lookup, path, len) = at;
    let mut gm = GuestMemory::Unshared(mem);
    let stat = path_stat(&mut state.wasi, &mut gm, dirfd, lookup, path, len);
    stat.is_some_and(|s| {
        matches!(
            s.filetype,
            Filetype::Unknown
                | Filetype::CharacterDevice
                | Filetype::BlockDevice
                | Filetype::SocketDgram
                | Filetype::SocketStream
        )
    })
}

/// `path_filestat_set_times` (`touch`, `os.utime`): `wasmtime-wasi` opens the file to set its
/// times, so a FIFO, socket or device is refused as [`path_open`] refuses it.
#[allow(clippy::too_many_arguments, reason = "WASI p1's signature")]
pub(super) fn path_filestat_set_times(
    mut caller: Caller<'_, HostState>,
    dirfd: i32,
    lookup: i32,
    path: i32,
    len: i32,
    atim: i64,
    mtim: i64,
    fst_flags: i32,
) -> Result<i32> {
    let (mem, state) = parts(&mut caller)?;
    if special_file(state, mem, (dirfd, lookup, path, len)) {
        return Ok(errno::NXIO);
    }
    let mut gm = GuestMemory::Unshared(mem);
    in_tokio(p1::path_filestat_set_times(
        &mut state.wasi,
        &mut gm,
        dirfd,
        lookup,
        path,
        len,
        atim,
        mtim,
        fst_flags,
    ))
}

/// `path_open`, charged when it creates or truncates beneath `/app` or `/tmp`.
fn open_charged(
    call: &OpenCall,
    state: &mut HostState,
    mem: &mut [u8],
    oflags: i32,
) -> Result<i32> {
    let (dirfd, lookup, path, len, fdflags, out) = (
        call.dirfd,
        call.lookup,
        call.path,
        call.len,
        call.fdflags,
        call.out,
    );
    let Some(guest) = state.quota.as_mut() else {
        return call.run(state, mem, oflags);
    };
    // It may truncate the file written last, or reuse its number.
    guest.forget_lengths();
    let origin = guest.fds.get(&(dirfd as u32)).copied();
    let charged = origin.is_some_and(|o| o.charged);
    let (creat, trunc) = (oflags & OFLAGS_CREAT != 0, oflags & OFLAGS_TRUNC != 0);
    let mut created = false;
    let mut freed = 0;
    let errno = if !charged || !(creat || trunc) {
        call.run(state, mem, oflags)?
    } else if creat {
        match open_creating(call, state, mem, oflags)? {
            Ok((errno, new)) => {
                created = new;
                errno
            }
            Err(errno) => return Ok(errno),
        }
    } else {
        // O_TRUNC alone (rare): what it frees.
        let mut gm = GuestMemory::Unshared(&mut *mem);
        freed = path_stat(&mut state.wasi, &mut gm, dirfd, lookup, path, len)
            .filter(|s| s.filetype == types::Filetype::RegularFile)
            .map_or(0, |s| s.size);
        call.run(state, mem, oflags)?
    };
    if errno != errno::SUCCESS {
        return Ok(errno);
    }
    let Some(new_fd) = read_u32(mem, out as u32 as usize) else {
        return Ok(errno);
    };
    // A file just created or truncated is empty: its first write needs no stat.
    let empty = charged && (created || trunc) && oflags & OFLAGS_DIRECTORY == 0;
    record_opened(state, new_fd, origin, fdflags, empty);
    release(state, Amount::bytes(freed));
    Ok(errno)
}

/// The `len` bytes of guest memory at `at`, when they are all there.
pub(super) fn guest_bytes(mem: &[u8], at: i32, len: i32) -> Option<&[u8]> {
    let start = at as u32 as usize;
    mem.get(start..start.checked_add(len as u32 as usize)?)
}

/// `path_open` with `O_CREAT` beneath `/app` or `/tmp`: the existing file if there is one, else
/// one entry charged and the file created. `Ok((errno, created))`, or `Err(DQUOT)`.
fn open_creating(
    call: &OpenCall,
    state: &mut HostState,
    mem: &mut [u8],
    oflags: i32,
) -> Result<Result<(i32, bool), i32>> {
    let first = if oflags & OFLAGS_EXCL != 0 {
        errno::NOENT
    } else {
        call.run(state, mem, oflags & !OFLAGS_CREAT)?
    };
    if first != errno::NOENT {
        return Ok(Ok((first, false)));
    }
    let growth = Amount::entries(1);
    let mut gm = GuestMemory::Unshared(&mut *mem);
    if let Err(errno) = charge(state, &mut gm, growth) {
        return Ok(Err(errno));
    }
    let errno = call.run(state, mem, oflags)?;
    if errno != errno::SUCCESS {
        release(state, growth);
    }
    Ok(Ok((errno, errno == errno::SUCCESS)))
}

/// Marks the descriptor a `path_open` beneath `origin` returned: charged like its directory,
/// appending as `fdflags` say, and `empty` when it was just created or truncated.
fn record_opened(
    state: &mut HostState,
    new_fd: u32,
    origin: Option<Opened>,
    fdflags: i32,
    empty: bool,
) {
    let Some(guest) = state.quota.as_mut() else {
        return;
    };
    // A reused number must not keep the marks of the descriptor it had.
    guest.fds.remove(&new_fd);
    if let Some(origin) = origin {
        let append = fdflags & FDFLAGS_APPEND != 0;
        guest.fds.insert(new_fd, Opened { append, ..origin });
        if empty {
            guest.last_write = Some((new_fd, 0));
        }
    }
}
