//! What bounds a session's interpreter besides time: its linear memory ([`MemoryLimiter`]) and
//! its fuel, the CPU allowance of an execution ([`fuel_for`], [`FuelGauge`]).

use std::time::Instant;

use wasmtime::{ResourceLimiter, Result};

/// Fuel granted beyond an execution's budget. The budget itself is enforced softly: once it is
/// used up the interpreter is interrupted like on a timeout and keeps its state. The reserve
/// (about a quarter second of CPU) pays for unwinding and printing the traceback; only code that
/// burns through it too is trapped.
pub const FUEL_RESERVE: u64 = 2_000_000_000;

/// A pessimistic rate of fuel use (units per second) for code whose fuel counter has not been
/// written back. Compiled wasm keeps fuel in a register and only stores it at calls, so a loop
/// without calls (`while True: pass` inside CPython's eval loop) shows the same reading at every
/// epoch tick; its real use is estimated from the time spent at that reading.
const STALE_FUEL_RATE: f64 = 1.2e10;

/// Function tables of our interpreters have a few thousand entries; growth past this is hostile
/// or a bug.
const MAX_TABLE_ELEMENTS: usize = 1 << 20;

/// The fuel to put in the store for an execution with this budget.
pub fn fuel_for(budget: u64) -> u64 {
    budget.saturating_add(FUEL_RESERVE)
}

/// Caps linear memory and remembers that the guest hit the cap, so an allocation failure is
/// reported as `out_of_memory` without reading any message text.
#[derive(Debug)]
pub struct MemoryLimiter {
    cap: usize,
    pub hit_cap: bool,
    /// Largest size granted so far: the memory's current size, since memories never shrink.
    pub granted: usize,
}

impl MemoryLimiter {
    /// A limiter that grants linear memory up to `cap` bytes.
    pub fn new(cap: usize) -> Self {
        Self {
            cap,
            hit_cap: false,
            granted: 0,
        }
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _max: Option<usize>,
    ) -> Result<bool> {
        if desired > self.cap {
            self.hit_cap = true;
            return Ok(false);
        }
        self.granted = self.granted.max(desired);
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _max: Option<usize>,
    ) -> Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}

/// Reads the fuel left of an execution, allowing for a counter that has not been written back
/// since the last tick (see [`STALE_FUEL_RATE`]).
#[derive(Debug, Default)]
pub struct FuelGauge {
    /// The last reading and when it was first seen.
    reading: Option<(u64, Instant)>,
}

impl FuelGauge {
    /// Fuel left at `now`, given the store's `reading`.
    pub fn estimate_left(&mut self, reading: u64, now: Instant) -> u64 {
        match self.reading {
            Some((seen, since)) if seen == reading => {
                let stale = (now - since).as_secs_f64() * STALE_FUEL_RATE;
                reading.saturating_sub(stale as u64)
            }
            _ => {
                self.reading = Some((reading, now));
                reading
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn fuel_and_memory_bounds() {
        assert_eq!(fuel_for(10), 10 + FUEL_RESERVE);
        assert_eq!(fuel_for(u64::MAX), u64::MAX, "saturates");

        let mut limiter = MemoryLimiter::new(100);
        assert!(limiter.memory_growing(0, 60, None).unwrap());
        assert!(limiter.memory_growing(60, 100, None).unwrap());
        assert!(!limiter.hit_cap);
        assert!(!limiter.memory_growing(100, 101, None).unwrap());
        assert!(
            limiter.hit_cap,
            "the refusal is remembered for out_of_memory"
        );
        assert_eq!(limiter.granted, 100, "a refused size is never granted");
        assert!(limiter.table_growing(0, 1 << 20, None).unwrap());
        assert!(!limiter.table_growing(0, (1 << 20) + 1, None).unwrap());
    }

    #[test]
    fn a_fuel_counter_that_is_not_written_back_is_estimated_from_time() {
        let mut gauge = FuelGauge::default();
        let start = Instant::now();
        assert_eq!(gauge.estimate_left(5_000_000_000, start), 5_000_000_000);
        // The same reading 0.1 s later: 0.1 s at the pessimistic rate is presumed spent.
        let later = start + Duration::from_millis(100);
        assert_eq!(
            gauge.estimate_left(5_000_000_000, later),
            5_000_000_000 - (0.1 * STALE_FUEL_RATE) as u64
        );
        assert_eq!(
            gauge.estimate_left(1_000, later + Duration::from_secs(1)),
            1_000,
            "a new reading is taken as is"
        );
        assert_eq!(
            gauge.estimate_left(1_000, later + Duration::from_secs(2)),
            0,
            "never below zero"
        );
    }
}
