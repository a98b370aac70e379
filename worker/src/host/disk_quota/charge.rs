//! Charging the session's quota from inside a shadow: the state and memory borrowed together
//! with wiggle's hostcall fuel, what a descriptor or path names now, and the charge-call-release
//! shape every growing call shares.

use std::collections::HashMap;

use wasmtime::{AsContextMut, Caller, Result};
use wasmtime_wasi::p1::wasi_snapshot_preview1::WasiSnapshotPreview1;
use wasmtime_wasi::p1::{WasiP1Ctx, types};
use wasmtime_wasi::runtime::in_tokio;
use wiggle::{GuestMemory, GuestPtr};

use crate::host::guest_memory::{errno, memory_and_state};
use crate::host::guest_quota::Opened;
use crate::host::state::HostState;
use crate::quota::{Amount, lock};

/// Our state and the guest's memory, with the hostcall fuel set as wiggle's generated glue sets
/// it for every call it makes: the calls made from a shadow spend that fuel too, and without a
/// refill a long run of them would fail with `NOMEM`.
pub(super) fn parts<'a>(
    caller: &'a mut Caller<'_, HostState>,
) -> Result<(&'a mut [u8], &'a mut HostState)> {
    let fuel = caller.as_context_mut().hostcall_fuel();
    let (mem, state) = memory_and_state(caller)?;
    state.wasi.set_hostcall_fuel(fuel);
    Ok((mem, state))
}

/// A guest descriptor number as wasmtime-wasi's type.
pub(super) fn fd(n: i32) -> types::Fd {
    types::Fd::from(n as u32)
}

/// The regular file behind a descriptor: its size and link count; `None` for anything else.
pub(super) fn regular_file(
    wasi: &mut WasiP1Ctx,
    gm: &mut GuestMemory<'_>,
    n: i32,
) -> Option<types::Filestat> {
    let stat = in_tokio(wasi.fd_filestat_get(gm, fd(n))).ok()?;
    (stat.filetype == types::Filetype::RegularFile).then_some(stat)
}

/// What the path names now (symlinks followed as `lookup` says), or `None`.
pub(super) fn path_stat(
    wasi: &mut WasiP1Ctx,
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
    wasi: &mut WasiP1Ctx,
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
pub(super) fn charge(
    state: &mut HostState,
    gm: &mut GuestMemory<'_>,
    growth: Amount,
) -> Result<(), i32> {
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
pub(super) fn with_charge(
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
pub(super) fn release(state: &HostState, amount: Amount) {
    if let Some(guest) = &state.quota
        && amount != Amount::ZERO
    {
        lock(&guest.quota).release(amount);
    }
}

/// Whether growth through the guest descriptor `n` is charged.
pub(super) fn is_charged(state: &HostState, n: i32) -> bool {
    state.quota.as_ref().is_some_and(|g| g.charged(n).is_some())
}
