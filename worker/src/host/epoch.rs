//! Where an execution's deadlines and fuel are acted on while guest code runs: the
//! epoch-deadline callback ([`on_epoch`]), every tick, and the call hook ([`on_host_call`]), at
//! every call the guest makes into the host; [`new_store`] installs both. At the soft deadline,
//! on cancel, or when the fuel is down to the reserve the interpreter is asked to stop by
//! itself, keeping its state; at the hard deadline it is trapped.

use std::time::Instant;

use wasmtime::{CallHook, Engine, Result, Store, StoreContextMut, UpdateDeadline};

use super::clock::{HARD_GRACE, InterruptCause, SoftInterrupt};
use super::limits::FUEL_RESERVE;
use super::sigint::raise_sigint;
use super::state::HostState;

/// A store for `state` that guest code can run in: its memory bounded by the state's limiter,
/// [`on_epoch`] called at every tick from the first, [`on_host_call`] at every host call, and
/// `fuel` to start with. Every interpreter instance (CPython's, QuickJS's, a build step's)
/// starts in one.
///
/// # Errors
/// When the engine does not meter fuel (a build defect).
pub fn new_store(engine: &Engine, state: HostState, fuel: u64) -> Result<Store<HostState>> {
    let mut store = Store::new(engine, state);
    store.limiter(|s| &mut s.limiter);
    store.epoch_deadline_callback(on_epoch);
    store.set_epoch_deadline(1);
    store.call_hook(on_host_call);
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
            return Ok(match interrupt(&mut ctx, cause, now) {
                Delivered::Softly => UpdateDeadline::Continue(1),
                Delivered::NotAsked => UpdateDeadline::Interrupt,
            });
        }
    }
    if now >= active.hard_deadline {
        return Ok(UpdateDeadline::Interrupt);
    }
    Ok(UpdateDeadline::Continue(1))
}

/// The call hook: when guest code calls into the host, its fuel counter has just been written
/// back (compiled code keeps it in a register between calls), so the reading is exact. A budget
/// used up is acted on here, at the first host call past it, rather than at the next tick,
/// whose timing is the scheduler's: the same code with the same budget stops at the same place
/// whenever it makes host calls (CPython's imports make hundreds, QuickJS polls its interrupt
/// flag through one). Code that makes none is still stopped by the tick, from an estimate.
///
/// # Errors
/// Never; the signature is Wasmtime's.
pub fn on_host_call(mut ctx: StoreContextMut<'_, HostState>, hook: CallHook) -> Result<()> {
    if !matches!(hook, CallHook::CallingHost) {
        return Ok(());
    }
    // The fast path of every host call: a budget not used up.
    if ctx.get_fuel().is_ok_and(|left| left > FUEL_RESERVE) {
        return Ok(());
    }
    // Nothing to deliver while the driver hands over between executions, to a guest without a
    // cooperative stop, outside an execution, or to one already asked to stop.
    let state = ctx.data();
    let nothing_to_deliver = state.driver.as_ref().is_some_and(|d| d.handing_over())
        || matches!(state.soft, SoftInterrupt::None)
        || state
            .active
            .as_ref()
            .is_none_or(|a| a.interrupted.is_some());
    if !nothing_to_deliver {
        // Only a cooperative stop is delivered here; a guest that has none is trapped by the
        // tick, where a trap is expected.
        interrupt(&mut ctx, InterruptCause::OutOfFuel, Instant::now());
    }
    Ok(())
}

/// How an interrupt reached the guest.
enum Delivered {
    /// Asked to stop by itself (a `KeyboardInterrupt`, QuickJS's flag).
    Softly,
    /// The guest has no cooperative stop: trap it.
    NotAsked,
}

/// Records `cause` on the execution in progress, starts its grace before the hard deadline and
/// asks the interpreter to stop by itself, where it can.
fn interrupt(
    ctx: &mut StoreContextMut<'_, HostState>,
    cause: InterruptCause,
    now: Instant,
) -> Delivered {
    let state = ctx.data_mut();
    let soft = state.soft;
    if let Some(active) = state.active.as_mut() {
        active.interrupted = Some(cause);
        active.hard_deadline = now + HARD_GRACE;
    }
    match soft {
        SoftInterrupt::PythonSignal(words) => raise_sigint(ctx, words),
        SoftInterrupt::JsFlag => ctx.data_mut().js_interrupt = true,
        SoftInterrupt::None => return Delivered::NotAsked,
    }
    Delivered::Softly
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

    /// `(module (import "sandbox" "should_interrupt" (func (result i32)))
    ///  (func (export "poll") (loop (br_if 0 (i32.eqz (call 0))))))`: QuickJS's interrupt
    /// handler, as a loop that makes one host call per turn; assembled by hand (no `wat` here).
    const POLL_UNTIL_ASKED: &[u8] = &[
        0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version 1
        0x01, 0x08, 0x02, 0x60, 0x00, 0x01, 0x7f, 0x60, 0x00, 0x00, // () -> i32, () -> ()
        0x02, 0x1c, 0x01, 0x07, b's', b'a', b'n', b'd', b'b', b'o', b'x', 0x10, b's', b'h', b'o',
        b'u', b'l', b'd', b'_', b'i', b'n', b't', b'e', b'r', b'r', b'u', b'p', b't', 0x00,
        0x00, // import sandbox.should_interrupt: type 0
        0x03, 0x02, 0x01, 0x01, // functions: one of type 1
        0x07, 0x08, 0x01, 0x04, b'p', b'o', b'l', b'l', 0x00, 0x01, // export "poll": func 1
        0x0a, 0x0c, 0x01, 0x0a, 0x00, 0x03, 0x40, 0x10, 0x00, 0x45, 0x0d, 0x00, 0x0b,
        0x0b, // loop { call 0; i32.eqz; br_if 0 }
    ];

    /// Runs [`POLL_UNTIL_ASKED`] with `budget` and no epoch tick at all; the fuel it consumed.
    fn poll_with_budget_and_no_tick(budget: u64) -> u64 {
        let engine = crate::engine::engine();
        let module = wasmtime::Module::new(engine, POLL_UNTIL_ASKED).unwrap();
        let linker = crate::host::linker::build_linker(engine).unwrap();
        let (_dir, state) = host_state(SoftInterrupt::JsFlag);
        let mut store = new_store(engine, state, crate::host::fuel_for(budget)).unwrap();
        store.set_epoch_deadline(u64::MAX / 2);
        store.data_mut().begin(&request("exec-1", budget, 30_000));
        let instance = linker.instantiate(&mut store, &module).unwrap();
        let poll = instance
            .get_typed_func::<(), ()>(&mut store, "poll")
            .unwrap();
        // Without the hook nothing asks it to stop: it would burn the reserve and trap.
        poll.call(&mut store, ()).unwrap();
        assert_eq!(
            store.data().active.as_ref().unwrap().interrupted,
            Some(InterruptCause::OutOfFuel)
        );
        crate::host::fuel_for(budget) - store.get_fuel().unwrap()
    }

    /// A budget is a deterministic cap for code that calls the host: it is stopped at the first
    /// host call past its budget, whatever the ticker does, and at the same place every time.
    #[test]
    fn a_budget_stops_the_guest_at_its_first_host_call_past_it() {
        let consumed = poll_with_budget_and_no_tick(1_000_000);
        assert!(
            (1_000_000..1_000_100).contains(&consumed),
            "stopped one turn past the budget: {consumed}"
        );
        assert_eq!(poll_with_budget_and_no_tick(1_000_000), consumed);
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
