//! What a trap or host error that ended a guest call means for the client ([`classify_trap`]):
//! the interpreter's exit, fuel, a deadline or cancel it did not obey, stack or memory
//! exhaustion, or a crash. Decided from the trap code and what the host recorded (the interrupt
//! cause, a refused `memory.grow`), never from message text.

use sandbox_protocol::{ErrorKind, GuestError};
use wasmtime::Trap;

use super::clock::InterruptCause;
use super::state::HostState;

/// Classifies a trap or error that ended a guest call during `state.active`.
pub fn classify_trap(err: &wasmtime::Error, state: &HostState) -> GuestError {
    if let Some(exit) = err.downcast_ref::<wasmtime_wasi::I32Exit>() {
        return GuestError {
            kind: ErrorKind::Exit,
            name: Some("SystemExit".into()),
            message: format!("the interpreter exited with status {}", exit.0),
        };
    }
    let (kind, message) = match err.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => (
            ErrorKind::OutOfFuel,
            "the execution used up its fuel budget (its CPU allowance)".into(),
        ),
        Some(Trap::Interrupt) => ignored_interrupt(state),
        Some(Trap::StackOverflow) => (
            ErrorKind::StackOverflow,
            "maximum call stack exceeded (recursion too deep)".into(),
        ),
        // A refused memory.grow explains the crash that follows it.
        _ if state.limiter.hit_cap => (
            ErrorKind::OutOfMemory,
            "the interpreter ran out of memory (session memory cap reached)".into(),
        ),
        Some(trap) => (
            ErrorKind::System,
            format!("the interpreter crashed: {trap}"),
        ),
        None => (
            ErrorKind::System,
            "the interpreter failed inside the host".into(),
        ),
    };
    GuestError {
        kind,
        name: None,
        message,
    }
}

/// An interrupt trap: the execution did not stop by itself after the soft interrupt. Without a
/// recorded cause it was the deadline (an interpreter with no cooperative stop).
fn ignored_interrupt(state: &HostState) -> (ErrorKind, String) {
    let active = state.active.as_ref();
    match active.and_then(|a| a.interrupted).unwrap_or(InterruptCause::Timeout) {
        InterruptCause::Timeout => (
            ErrorKind::Timeout,
            format!(
                "the execution exceeded its {:.1} s timeout and did not stop when interrupted",
                active.map_or(0.0, |a| a.timeout.as_secs_f64())
            ),
        ),
        InterruptCause::Cancel => (
            ErrorKind::Cancelled,
            "the execution was cancelled and did not stop when interrupted".into(),
        ),
        InterruptCause::OutOfFuel => (
            ErrorKind::OutOfFuel,
            "the execution used up its fuel budget (its CPU allowance) and did not stop when interrupted".into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use wasmtime::format_err;

    use super::*;
    use crate::host::clock::SoftInterrupt;
    use crate::host::state::tests::{host_state, request};

    #[test]
    fn traps_are_classified_by_what_stopped_the_guest() {
        let (_dir, mut state) = host_state(SoftInterrupt::JsFlag);
        state.begin(&request("exec-1", 1_000, 2_500));
        let kind = |error: wasmtime::Error, state: &HostState| {
            let classified = classify_trap(&error, state);
            (classified.kind, classified.message)
        };
        assert_eq!(kind(Trap::OutOfFuel.into(), &state).0, ErrorKind::OutOfFuel);
        assert_eq!(
            kind(Trap::StackOverflow.into(), &state).0,
            ErrorKind::StackOverflow
        );
        assert_eq!(
            kind(Trap::Interrupt.into(), &state),
            (
                ErrorKind::Timeout,
                "the execution exceeded its 2.5 s timeout and did not stop when interrupted".into()
            ),
            "an interrupt without a recorded cause is the deadline"
        );
        for (cause, expected) in [
            (InterruptCause::Cancel, ErrorKind::Cancelled),
            (InterruptCause::OutOfFuel, ErrorKind::OutOfFuel),
            (InterruptCause::Timeout, ErrorKind::Timeout),
        ] {
            state.active.as_mut().unwrap().interrupted = Some(cause);
            let (kind, message) = kind(Trap::Interrupt.into(), &state);
            assert_eq!(kind, expected);
            assert!(
                message.ends_with("did not stop when interrupted"),
                "{message}"
            );
        }
        let exit = classify_trap(&wasmtime_wasi::I32Exit(3).into(), &state);
        assert_eq!(
            (exit.kind, exit.name.as_deref()),
            (ErrorKind::Exit, Some("SystemExit"))
        );
        assert_eq!(
            kind(Trap::MemoryOutOfBounds.into(), &state).0,
            ErrorKind::System
        );
        assert_eq!(
            kind(format_err!("host failure"), &state).0,
            ErrorKind::System
        );
        // A refused memory.grow explains the crash that follows it.
        state.limiter.hit_cap = true;
        assert_eq!(
            kind(Trap::UnreachableCodeReached.into(), &state).0,
            ErrorKind::OutOfMemory
        );
        assert_eq!(
            kind(Trap::OutOfFuel.into(), &state).0,
            ErrorKind::OutOfFuel,
            "fuel is named before memory"
        );
    }
}
