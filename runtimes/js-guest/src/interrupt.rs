//! The interrupt path: the `sandbox.should_interrupt` import, the handler
//! QuickJS polls while running JS, and the per-cell "why did we stop" flags
//! that `eval` uses to classify the outcome.
//!
//! QuickJS calls the handler every few thousand interpreter steps (function
//! calls and backward jumps). When it returns true QuickJS throws an
//! uncatchable `InternalError: interrupted`, which unwinds all the way out of
//! the cell, through `try`/`catch`.
//!
//! The flags are plain statics in linear memory (not wasm globals), so they
//! are part of the host's memory snapshot like everything else.

use std::sync::atomic::{AtomicBool, Ordering};

#[link(wasm_import_module = "sandbox")]
unsafe extern "C" {
    /// Host decides (deadline, fuel, cancellation). Nonzero = stop now.
    fn should_interrupt() -> i32;
}

/// The host asked us to stop during the current cell. Sticky for the rest of
/// the cell so that cleanup code we run afterwards (draining jobs) is cut short
/// as well instead of getting a fresh budget.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The shadow-stack guard fired during the current cell (see `stack_low`).
static STACK_EXHAUSTED: AtomicBool = AtomicBool::new(false);

/// Minimum shadow stack that must remain when QuickJS polls us. On WASI,
/// QuickJS-NG disables its own stack-overflow check (`stack_limit = 0`), so
/// unbounded JS recursion would run the C shadow stack past its bottom and
/// trap. Polls are ~10k interpreter steps apart, so this margin is only
/// best-effort: a fast recursion can still blow through it between two polls
/// (then the module traps and the host restores its snapshot).
const STACK_MARGIN: usize = 1 << 20;

unsafe extern "C" {
    /// Linker-provided lowest address of the shadow stack region.
    static __stack_low: u8;
}

/// Bytes of shadow stack left below the current frame.
fn stack_remaining() -> usize {
    let probe = 0u8;
    // `black_box` keeps `probe` in memory, so its address is (close to) the
    // current shadow stack pointer.
    let sp = std::hint::black_box(&probe) as *const u8 as usize;
    // Only the address of the linker symbol is taken (safe); it is never read.
    let low = std::ptr::addr_of!(__stack_low) as usize;
    sp.saturating_sub(low)
}

/// Called at the start of each cell.
pub fn reset() {
    INTERRUPTED.store(false, Ordering::Relaxed);
    STACK_EXHAUSTED.store(false, Ordering::Relaxed);
}

/// The host's interrupt fired during this cell.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// The shadow-stack guard fired during this cell.
pub fn stack_exhausted() -> bool {
    STACK_EXHAUSTED.load(Ordering::Relaxed)
}

/// The handler installed on the QuickJS runtime.
pub fn poll() -> bool {
    if INTERRUPTED.load(Ordering::Relaxed) || STACK_EXHAUSTED.load(Ordering::Relaxed) {
        return true;
    }
    if stack_remaining() < STACK_MARGIN {
        STACK_EXHAUSTED.store(true, Ordering::Relaxed);
        return true;
    }
    // SAFETY: a plain host import with no arguments; the host implements it
    // without touching our memory.
    let stop = unsafe { should_interrupt() } != 0;
    if stop {
        INTERRUPTED.store(true, Ordering::Relaxed);
    }
    stop
}
