//! The epoch-deadline callback ([`on_epoch`]) and the store that runs it ([`new_store`]): the one place that acts on an execution's
//! deadlines and fuel while guest code runs. At the soft deadline, on cancel, or when the fuel
//! is down to the reserve it asks the interpreter to stop by itself, keeping its state; at the
//! hard deadline it traps.

use std::time::Instant;

use wasmtime::{Engine, Result, Store, StoreContextMut, UpdateDeadline};

use super::clock::{HARD_GRACE, InterruptCause, SoftInterrupt};
use super::limits::FUEL_RESERVE;
use super::sigint::raise_sigint;
use super::state::HostState;

/// A store for `state` that guest code can run in: its memory bounded by the state's limiter,
/// [`on_epoch`] called at every tick from the first, and `fuel` to start with. Every interpreter
/// instance (CPython's, QuickJS's, a build step's) starts in one.
///
/// # Errors
/// When the engine does not meter fuel (a build defect).
pub fn new_store(engine: &Engine, state: HostState, fuel: u64) -> Result<Store<HostState>> {
    let mut store = Store::new(engine, state);
    store.limiter(|s| &mut s.limiter);
    store.epoch_deadline_callback(on_epoch);
    store.set_epoch_deadline(1);
    store.set_fuel(fuel)?;
    Ok(store)
}

/// The epoch-deadline callback: runs every [`crate::engine::EPOCH_TICK`] while guest code runs.
///
/// # Errors
/// Never; the signature is Wasmtime's.
pub fn on_epoch(mut ctx: StoreContextMut<'_, HostState>) -> Result<UpdateDeadline> {
    let now = Instant::now();
    let fuel_left = ctx.get_fuel().unwrap_or(u64::MAX);
    let state = ctx.data_mut();
    // The Python driver reads its request in a few calls, microseconds apart: an interrupt in
    // between would leave half of it unread. Wait for the next tick.
    if state.driver.as_ref().is_some_and(|d| d.handing_over()) {
        return Ok(UpdateDeadline::Continue(1));
    }
    let cancel = state.control.cancel_requested();
    let soft = state.soft;
    let Some(active) = state.active.as_mut() else {
        return Ok(UpdateDeadline::Continue(1));
    };
    if active.interrupted.is_none() {
        let cause = if cancel {
            Some(InterruptCause::Cancel)
        } else if active.fuel.estimate_left(fuel_left, now) <= FUEL_RESERVE {
            Some(InterruptCause::OutOfFuel)
        } else if now >= active.soft_deadline {
            Some(InterruptCause::Timeout)
        } else {
            None
        };
        if let Some(cause) = cause {
            active.interrupted = Some(cause);
            active.hard_deadline = now + HARD_GRACE;
            match soft {
                SoftInterrupt::PythonSignal(words) => raise_sigint(&mut ctx, words),
                SoftInterrupt::JsFlag => ctx.data_mut().js_interrupt = true,
                SoftInterrupt::None => return Ok(UpdateDeadline::Interrupt),
            }
            return Ok(UpdateDeadline::Continue(1));
        }
    }
    if now >= active.hard_deadline {
        return Ok(UpdateDeadline::Interrupt);
    }
    Ok(UpdateDeadline::Continue(1))
}

#[cfg(test)]
mod tests {
    use wasmtime::{AsContextMut, Store};

    use super::*;
    use crate::host::state::tests::{host_state, request};

    /// Runs the epoch callback once on a store holding `state`.
    fn tick(store: &mut Store<HostState>) -> UpdateDeadline {
        on_epoch(store.as_context_mut()).unwrap()
    }

    fn is_interrupt(update: &UpdateDeadline) -> bool {
        matches!(update, UpdateDeadline::Interrupt)
    }

    #[test]
    fn the_epoch_callback_interrupts_softly_then_traps() {
        let engine = crate::engine::engine();
        let (_dir, state) = host_state(SoftInterrupt::JsFlag);
        let mut store = Store::new(engine, state);
        store.set_fuel(u64::MAX).unwrap();
        assert!(
            !is_interrupt(&tick(&mut store)),
            "no execution: nothing to do"
        );

        // Cancel: the soft interrupt first, the trap only at the hard deadline.
        store
            .data_mut()
            .begin(&request("exec-1", 1_000_000, 30_000));
        assert!(store.data().control.request_cancel("exec-1"));
        assert!(!is_interrupt(&tick(&mut store)));
        assert!(store.data().js_interrupt, "QuickJS is asked to stop");
        let active = store.data().active.as_ref().unwrap();
        assert_eq!(active.interrupted, Some(InterruptCause::Cancel));
        assert!(active.hard_deadline <= Instant::now() + HARD_GRACE);
        assert!(!is_interrupt(&tick(&mut store)), "grace for the guest");
        store.data_mut().active.as_mut().unwrap().hard_deadline = Instant::now();
        assert!(is_interrupt(&tick(&mut store)), "the hard deadline traps");

        // The soft deadline, and fuel down to the reserve.
        store.data_mut().begin(&request("exec-2", 1_000_000, 0));
        assert!(!is_interrupt(&tick(&mut store)));
        assert_eq!(
            store.data().active.as_ref().unwrap().interrupted,
            Some(InterruptCause::Timeout)
        );
        store
            .data_mut()
            .begin(&request("exec-3", 1_000_000, 30_000));
        store.set_fuel(FUEL_RESERVE).unwrap();
        assert!(!is_interrupt(&tick(&mut store)));
        assert_eq!(
            store.data().active.as_ref().unwrap().interrupted,
            Some(InterruptCause::OutOfFuel)
        );

        // Without a cooperative stop, the soft deadline traps at once.
        let (_dir, state) = host_state(SoftInterrupt::None);
        let mut store = Store::new(engine, state);
        store.set_fuel(u64::MAX).unwrap();
        store.data_mut().begin(&request("exec-4", 1_000_000, 0));
        assert!(is_interrupt(&tick(&mut store)));
    }

    /// A driver channel in the middle of handing a request over, or done with it.
    struct HandingOver(bool);

    impl crate::host::DriverChannel for HandingOver {
        fn write(&mut self, _bytes: &[u8]) {}
        fn before_read(&mut self, _caller: &mut wasmtime::Caller<'_, HostState>) -> Result<()> {
            Ok(())
        }
        fn read(&mut self, _max: usize) -> &[u8] {
            &[]
        }
        fn handing_over(&self) -> bool {
            self.0
        }
    }

    /// No interrupt, soft or hard, lands while the driver reads its request: it would cut the
    /// request in two. It comes at the first tick after.
    #[test]
    fn no_interrupt_lands_while_the_driver_reads_its_request() {
        let (_dir, state) = host_state(SoftInterrupt::None);
        let mut store = Store::new(crate::engine::engine(), state);
        store.set_fuel(u64::MAX).unwrap();
        store.data_mut().driver = Some(Box::new(HandingOver(true)));
        store.data_mut().begin(&request("exec-1", 1_000_000, 0));
        assert!(store.data().control.request_cancel("exec-1"));
        for _ in 0..3 {
            assert!(!is_interrupt(&tick(&mut store)), "the driver is reading");
        }
        assert_eq!(store.data().active.as_ref().unwrap().interrupted, None);
        store.data_mut().driver = Some(Box::new(HandingOver(false)));
        assert!(is_interrupt(&tick(&mut store)), "then the deadline traps");
    }
}
