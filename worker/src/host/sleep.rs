//! The shadow of `poll_oneoff` for clock-only subscriptions, which is how `time.sleep` reaches
//! the host. Epoch interruption cannot reach a guest blocked inside the host, so without this
//! shadow `time.sleep(100)` would ignore every timeout: here a sleep wakes at the execution's
//! soft deadline or on cancel. Subscriptions on descriptors go to wasmtime-wasi.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use wasmtime::{Caller, Linker, Result};
use wasmtime_wasi::p1::wasi_snapshot_preview1 as wasi;
use wiggle::GuestMemory;

use super::guest_memory::{
    errno, memory_and_state, read_le, read_u32, read_u64, write_bytes, write_u32,
};
use super::state::HostState;

/// Size of a WASI p1 `subscription` and of an `event`.
const SUBSCRIPTION_SIZE: usize = 48;
const EVENT_SIZE: usize = 32;

/// More subscriptions in one call than any guest needs; a larger count is refused (`EINVAL`).
const MAX_SUBSCRIPTIONS: usize = 4096;

/// Adds the shadow of `poll_oneoff`.
///
/// # Errors
/// When Wasmtime refuses the definition (a build defect).
pub(super) fn add_to_linker(linker: &mut Linker<HostState>) -> Result<()> {
    linker.func_wrap(
        "wasi_snapshot_preview1",
        "poll_oneoff",
        |mut caller: Caller<'_, HostState>,
         subs: i32,
         events: i32,
         count: i32,
         nevents: i32|
         -> Result<i32> {
            let (mem, state) = memory_and_state(&mut caller)?;
            if let Some(errno) = poll_clocks(mem, state, subs, events, count, nevents) {
                return Ok(errno);
            }
            let mut gm = GuestMemory::Unshared(mem);
            wasmtime_wasi::runtime::in_tokio(wasi::poll_oneoff(
                &mut state.wasi,
                &mut gm,
                subs,
                events,
                count,
                nevents,
            ))
        },
    )?;
    Ok(())
}

/// `poll_oneoff` for clock-only subscriptions; `None` hands the call to wasmtime-wasi.
///
/// Sleeps until the earliest subscription is due, but never past the execution's soft deadline,
/// and wakes early on cancel. An early wake reports the earliest clock as fired: the guest sees a
/// completed sleep, and the pending soft interrupt stops it at its next instruction.
fn poll_clocks(
    mem: &mut [u8],
    state: &HostState,
    subs: i32,
    events: i32,
    count: i32,
    nevents: i32,
) -> Option<i32> {
    let (subs, events, count) = (
        subs as u32 as usize,
        events as u32 as usize,
        count as u32 as usize,
    );
    if count == 0 || count > MAX_SUBSCRIPTIONS {
        return Some(errno::INVAL);
    }
    let due = match clock_subscriptions(mem, state, subs, count)? {
        Ok(due) => due,
        Err(errno) => return Some(errno),
    };
    let start = Instant::now();
    let earliest = due.iter().map(|(_, w)| *w).min()?;
    sleep_until(state, start, start + earliest);
    let elapsed = start.elapsed();
    let mut fired: Vec<u64> = due
        .iter()
        .filter(|(_, wait)| *wait <= elapsed)
        .map(|(userdata, _)| *userdata)
        .collect();
    if fired.is_empty() {
        // Woken early by the deadline or a cancel: report the earliest clock as fired.
        fired.extend(
            due.iter()
                .find(|(_, wait)| *wait == earliest)
                .map(|(u, _)| *u),
        );
    }
    let mut written = 0usize;
    for userdata in fired {
        let at = events.checked_add(written * EVENT_SIZE)?;
        let mut event = [0u8; EVENT_SIZE];
        event[..8].copy_from_slice(&userdata.to_le_bytes());
        // error = 0 (success), type = 0 (clock); the fd_readwrite part stays zero.
        if !write_bytes(mem, at, &event) {
            return Some(errno::FAULT);
        }
        written += 1;
    }
    if !write_u32(mem, nevents as u32 as usize, written as u32) {
        return Some(errno::FAULT);
    }
    Some(errno::SUCCESS)
}

/// The `(userdata, wait from now)` of `count` clock subscriptions at `subs`. `None` when one is
/// not a clock or lies outside memory (wasmtime-wasi answers those); `Err(errno)` for an
/// absolute time on an unknown clock.
fn clock_subscriptions(
    mem: &[u8],
    state: &HostState,
    subs: usize,
    count: usize,
) -> Option<Result<Vec<(u64, Duration)>, i32>> {
    let mut due = Vec::with_capacity(count);
    for i in 0..count {
        let at = subs.checked_add(i * SUBSCRIPTION_SIZE)?;
        let userdata = read_u64(mem, at)?;
        if *mem.get(at + 8)? != 0 {
            return None; // an fd subscription: let wasmtime-wasi handle it
        }
        let clock_id = read_u32(mem, at + 16)?;
        let timeout = read_u64(mem, at + 24)?;
        let absolute = read_le::<2>(mem, at + 40).map(u16::from_le_bytes)? & 1 == 1;
        let wait = if absolute {
            let now = match clock_id {
                0 => SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .ok()?
                    .as_nanos(),
                1 => state.clock_base.elapsed().as_nanos(),
                _ => return Some(Err(errno::INVAL)),
            };
            Duration::from_nanos(u64::try_from(u128::from(timeout).saturating_sub(now)).ok()?)
        } else {
            Duration::from_nanos(timeout)
        };
        due.push((userdata, wait));
    }
    Some(Ok(due))
}

/// Sleeps from `start` until `wake`, but not past the soft deadline of the execution in
/// progress (not at all once it was interrupted), in slices so that a cancel is noticed within
/// a tick.
fn sleep_until(state: &HostState, start: Instant, mut wake: Instant) {
    if let Some(active) = &state.active {
        let limit = if active.interrupted.is_some() {
            start
        } else {
            active.soft_deadline
        };
        wake = wake.min(limit.max(start));
    }
    loop {
        let now = Instant::now();
        if now >= wake || (state.active.is_some() && state.control.cancel_requested()) {
            break;
        }
        std::thread::sleep((wake - now).min(crate::engine::EPOCH_TICK));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::clock::{InterruptCause, SoftInterrupt};
    use crate::host::state::tests::{host_state, request};

    /// Guest memory holding `subs` clock subscriptions at 0 (`(userdata, clock, timeout ns,
    /// absolute)`), events at 512 and `nevents` at 1020.
    fn subscriptions(subs: &[(u64, u32, u64, bool)]) -> Vec<u8> {
        let mut mem = vec![0u8; 1024];
        for (i, (userdata, clock, timeout, absolute)) in subs.iter().enumerate() {
            let at = i * SUBSCRIPTION_SIZE;
            mem[at..at + 8].copy_from_slice(&userdata.to_le_bytes());
            mem[at + 8] = 0; // a clock subscription
            mem[at + 16..at + 20].copy_from_slice(&clock.to_le_bytes());
            mem[at + 24..at + 32].copy_from_slice(&timeout.to_le_bytes());
            mem[at + 40..at + 42].copy_from_slice(&u16::from(*absolute).to_le_bytes());
        }
        mem
    }

    /// The userdata of the events `poll_clocks` wrote.
    fn fired(mem: &[u8]) -> Vec<u64> {
        let n = read_u32(mem, 1020).unwrap() as usize;
        (0..n)
            .map(|i| read_u64(mem, 512 + i * EVENT_SIZE).unwrap())
            .collect()
    }

    fn poll(mem: &mut [u8], state: &HostState, count: i32) -> Option<i32> {
        poll_clocks(mem, state, 0, 512, count, 1020)
    }

    #[test]
    fn sleeps_end_at_their_time_or_at_the_soft_deadline() {
        let (_dir, mut state) = host_state(SoftInterrupt::JsFlag);
        // No execution: a short sleep is slept; the earlier of two clocks fires.
        let mut mem = subscriptions(&[(7, 1, 3_600_000_000_000, false), (9, 1, 1_000_000, false)]);
        assert_eq!(poll(&mut mem, &state, 2), Some(errno::SUCCESS));
        assert_eq!(fired(&mem), [9]);
        // An absolute deadline in the past fires at once.
        let mut mem = subscriptions(&[(5, 1, 0, true), (6, 0, 0, true)]);
        assert_eq!(poll(&mut mem, &state, 2), Some(errno::SUCCESS));
        assert_eq!(fired(&mem), [5, 6]);

        // An interrupted execution sleeps no more: the hour-long sleep returns at once,
        // reported as fired so the guest reaches the pending interrupt.
        state.begin(&request("exec-1", 1_000, 30_000));
        state.active.as_mut().unwrap().interrupted = Some(InterruptCause::Timeout);
        let started = Instant::now();
        let mut mem = subscriptions(&[(1, 1, 3_600_000_000_000, false)]);
        assert_eq!(poll(&mut mem, &state, 1), Some(errno::SUCCESS));
        assert_eq!(fired(&mem), [1]);
        assert!(started.elapsed() < Duration::from_secs(60));

        // A cancel wakes a sleeping execution.
        state.begin(&request("exec-2", 1_000, 3_600_000));
        assert!(state.control.request_cancel("exec-2"));
        let started = Instant::now();
        let mut mem = subscriptions(&[(2, 1, 3_600_000_000_000, false)]);
        assert_eq!(poll(&mut mem, &state, 1), Some(errno::SUCCESS));
        assert_eq!(fired(&mem), [2]);
        assert!(started.elapsed() < Duration::from_secs(60));
    }

    #[test]
    fn polls_that_are_not_plain_sleeps_go_to_wasi() {
        let (_dir, state) = host_state(SoftInterrupt::JsFlag);
        let mut mem = subscriptions(&[(1, 1, 0, false)]);
        assert_eq!(
            poll(&mut mem, &state, 0),
            Some(errno::INVAL),
            "no subscription"
        );
        assert_eq!(poll(&mut mem, &state, 4097), Some(errno::INVAL), "too many");
        mem[8] = 1; // an fd_read subscription
        assert_eq!(poll(&mut mem, &state, 1), None);
        let mut mem = subscriptions(&[(1, 7, 0, true)]);
        assert_eq!(
            poll(&mut mem, &state, 1),
            Some(errno::INVAL),
            "an absolute time on an unknown clock"
        );
        let mut mem = subscriptions(&[(1, 1, 0, false)]);
        assert_eq!(
            poll(&mut mem, &state, 30),
            None,
            "subscriptions past the end of memory"
        );
        assert_eq!(
            poll_clocks(&mut mem, &state, 0, 1020, 1, 1020),
            Some(errno::FAULT),
            "no room for the event"
        );
    }
}
