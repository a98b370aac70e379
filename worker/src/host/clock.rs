//! Time in a session: the deadlines of the execution in progress ([`ActiveExecution`]), why it
//! was asked to stop ([`InterruptCause`]), how an interpreter is asked to stop while keeping its
//! state ([`SoftInterrupt`]), and the guest's monotonic clock. The epoch callback that acts on
//! the deadlines is in `epoch.rs`; the sleep shadow that honours them in `sleep.rs`.

use std::time::{Duration, Instant};

use sandbox_protocol::{ErrorKind, ExecuteRequest};
use wasmtime_wasi::HostMonotonicClock;

use super::limits::FuelGauge;

/// How long an interpreter gets to stop by itself after the soft interrupt before it is trapped.
/// Long enough for a `KeyboardInterrupt` to unwind through `finally` blocks, short enough that
/// `timeout + grace` stays well inside the supervisor's own kill deadline.
pub const HARD_GRACE: Duration = Duration::from_millis(400);

/// Why an execution was asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InterruptCause {
    Timeout,
    Cancel,
    OutOfFuel,
}

impl InterruptCause {
    /// The error class of an execution stopped for this cause.
    pub fn kind(self) -> ErrorKind {
        match self {
            InterruptCause::Timeout => ErrorKind::Timeout,
            InterruptCause::Cancel => ErrorKind::Cancelled,
            InterruptCause::OutOfFuel => ErrorKind::OutOfFuel,
        }
    }
}

/// How an interpreter is asked to stop while keeping its state.
#[derive(Debug, Clone, Copy)]
pub enum SoftInterrupt {
    /// Set CPython's SIGINT bookkeeping words, exactly what its C signal handler does; the eval
    /// loop then raises `KeyboardInterrupt`. Addresses are specific to one binary.
    PythonSignal(&'static super::sigint::SigintWords),
    /// The QuickJS guest polls `sandbox.should_interrupt`, which returns this flag.
    JsFlag,
    /// No cooperative stop: trap at the soft deadline.
    None,
}

/// The execution in progress: its budget and deadlines.
#[derive(Debug)]
pub struct ActiveExecution {
    pub id: String,
    pub started: Instant,
    pub fuel_budget: u64,
    pub timeout: Duration,
    /// When the interpreter is asked to stop by itself.
    pub(super) soft_deadline: Instant,
    /// When it is trapped: [`HARD_GRACE`] after the soft deadline, or after an earlier soft
    /// interrupt (cancel, fuel).
    pub(super) hard_deadline: Instant,
    /// Set once the soft interrupt has been delivered.
    pub interrupted: Option<InterruptCause>,
    /// The fuel left, as the epoch callback last read it.
    pub(super) fuel: FuelGauge,
    /// The quota's refusal count when the execution started: a refusal after it explains a
    /// failure the interpreter only saw as an errno.
    pub(super) quota_mark: u64,
}

impl ActiveExecution {
    /// The clock of `req` starts now.
    pub(super) fn start(req: &ExecuteRequest, quota_mark: u64) -> Self {
        let now = Instant::now();
        let timeout = Duration::from_millis(req.timeout_ms);
        Self {
            id: req.execution_id.clone(),
            started: now,
            fuel_budget: req.fuel,
            timeout,
            soft_deadline: now + timeout,
            hard_deadline: now + timeout + HARD_GRACE,
            interrupted: None,
            fuel: FuelGauge::default(),
            quota_mark,
        }
    }

    /// The error for an execution the interpreter stopped by itself after our soft interrupt
    /// (`how` names what the guest saw, e.g. "KeyboardInterrupt"); the session state is intact.
    pub fn soft_stop_error(&self, cause: InterruptCause, how: &str) -> (ErrorKind, String) {
        let message = match cause {
            InterruptCause::Timeout => format!(
                "the execution exceeded its {:.1} s timeout and was interrupted ({how}); the session state is intact",
                self.timeout.as_secs_f64()
            ),
            InterruptCause::OutOfFuel => format!(
                "the execution used up its fuel budget of {} (its CPU allowance) and was interrupted ({how}); the session state is intact",
                self.fuel_budget
            ),
            InterruptCause::Cancel => {
                format!("the execution was cancelled ({how}); the session state is intact")
            }
        };
        (cause.kind(), message)
    }
}

/// WASI's monotonic clock, counted from an instant the host state also knows, so absolute-time
/// sleeps in `poll_oneoff` can be converted without asking wasmtime-wasi.
pub(super) struct SessionMonotonicClock(pub(super) Instant);

impl HostMonotonicClock for SessionMonotonicClock {
    fn resolution(&self) -> u64 {
        1
    }
    fn now(&self) -> u64 {
        u64::try_from(self.0.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soft_stops_say_that_the_state_is_intact() {
        let active = ActiveExecution::start(
            &ExecuteRequest::user("exec-1".into(), "1".into(), 77, 1_500),
            0,
        );
        assert_eq!(
            active.soft_stop_error(InterruptCause::Timeout, "KeyboardInterrupt"),
            (
                ErrorKind::Timeout,
                "the execution exceeded its 1.5 s timeout and was interrupted (KeyboardInterrupt); the session state is intact".into()
            )
        );
        assert_eq!(
            active.soft_stop_error(InterruptCause::OutOfFuel, "x").1,
            "the execution used up its fuel budget of 77 (its CPU allowance) and was interrupted (x); the session state is intact"
        );
        assert_eq!(
            active.soft_stop_error(InterruptCause::Cancel, "x"),
            (
                ErrorKind::Cancelled,
                "the execution was cancelled (x); the session state is intact".into()
            )
        );
    }

    #[test]
    fn deadlines_follow_the_timeout() {
        let active = ActiveExecution::start(
            &ExecuteRequest::user("exec-1".into(), "1".into(), 1, 2_000),
            3,
        );
        assert_eq!(
            active.soft_deadline - active.started,
            Duration::from_secs(2)
        );
        assert_eq!(active.hard_deadline - active.soft_deadline, HARD_GRACE);
        assert_eq!((active.interrupted, active.quota_mark), (None, 3));
    }
}
