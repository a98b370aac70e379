//! What a session runs on: its [`Runtime`] and the limits that follow from it.
//!
//! A session starts on its language's default runtime unless its creator names one. Until its
//! first worker starts, a Python session whose creator did not name a runtime may still move to
//! the scientific one (the code it is first asked to run decides, in `tools::execute_code`).
//! From its first worker on, the runtime is fixed for the session's life: a restart or a reset
//! keeps it, because the model has already seen that interpreter's answers.
//!
//! Fuel stands behind the timeout: unless the client set `fuel_budget` (a deterministic cap,
//! used as given), an execution gets enough fuel to compute until its timeout on its runtime
//! ([`Runtime::fuel_until`]), and at least the flavor's fuel times [`Runtime::fuel_factor`].
//! So a long computation is stopped by its timeout, softly and with the session's state kept,
//! not by running out of fuel.
//!
//! The scientific runtime costs more memory too: its cap is at least [`SCIENTIFIC_MIN_MEMORY`].
//! A memory cap is a limit, not a reservation: admission counts what workers really use (see
//! `memory`).

use std::sync::Mutex;
use std::time::Duration;

use sandbox_protocol::{Language, Runtime};

#[cfg(test)]
use crate::config::FUEL_RANGE;
use crate::config::{SessionLimits, default_execution_fuel};

/// The least memory cap a scientific session gets. Importing pandas takes about 63 MiB of
/// linear memory and numpy, pandas, scipy and scikit-learn together 115 MiB, before any data:
/// with less, a model's first analysis would end in `out_of_memory`.
pub const SCIENTIFIC_MIN_MEMORY: u64 = 512 << 20;

/// What a new session is asked to be, before admission.
#[derive(Debug, Clone)]
pub struct SessionSpec {
    /// The runtime it starts on.
    pub runtime: Runtime,
    /// The client named the runtime (`create_session`'s `runtime`): it is never changed.
    pub runtime_explicit: bool,
    /// The limits as the flavor and the client's overrides give them, before the runtime's
    /// adjustments ([`SessionSpec::limits_on`]).
    pub limits: SessionLimits,
    /// The client set `fuel_budget`: it is used as given, whatever the runtime.
    pub fuel_explicit: bool,
    /// Idle time until the session is removed.
    pub ttl: Duration,
}

impl SessionSpec {
    /// A session of `language` on its default runtime, nothing chosen explicitly.
    pub fn new(language: Language, limits: SessionLimits, ttl: Duration) -> Self {
        Self {
            runtime: Runtime::default_for(language),
            runtime_explicit: false,
            limits,
            fuel_explicit: false,
            ttl,
        }
    }

    /// The limits of this session if it runs on `runtime`; its fuel is an execution's with
    /// the session's default timeout.
    pub fn limits_on(&self, runtime: Runtime) -> SessionLimits {
        let mut limits = self.limits.clone();
        limits.fuel = self.execution_fuel(runtime, limits.timeout);
        limits.memory_bytes = limits.memory_bytes.max(min_memory(runtime));
        limits
    }

    /// The fuel of one execution on `runtime` with `timeout`: the client's `fuel_budget` as
    /// given, else enough to outlast the timeout and at least the flavor's scaled fuel.
    pub fn execution_fuel(&self, runtime: Runtime, timeout: Duration) -> u64 {
        if self.fuel_explicit {
            return self.limits.fuel;
        }
        default_execution_fuel(self.limits.fuel, runtime, timeout)
    }
}

/// The least memory cap a session on `runtime` gets.
fn min_memory(runtime: Runtime) -> u64 {
    match runtime {
        Runtime::PythonScientific => SCIENTIFIC_MIN_MEMORY,
        Runtime::Python | Runtime::JavaScript => 0,
    }
}

/// A session's spec and the runtime it is on now.
#[derive(Debug)]
pub(super) struct Setup {
    spec: SessionSpec,
    current: Mutex<Current>,
}

#[derive(Debug, Clone, Copy)]
struct Current {
    runtime: Runtime,
    /// A worker has been started on `runtime`: it may no longer change.
    started: bool,
}

impl Setup {
    pub(super) fn new(spec: SessionSpec) -> Self {
        let current = Current {
            runtime: spec.runtime,
            started: false,
        };
        Self {
            spec,
            current: Mutex::new(current),
        }
    }

    fn current(&self) -> std::sync::MutexGuard<'_, Current> {
        self.current.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn spec(&self) -> &SessionSpec {
        &self.spec
    }

    pub(super) fn runtime(&self) -> Runtime {
        self.current().runtime
    }

    pub(super) fn limits(&self) -> SessionLimits {
        self.spec.limits_on(self.runtime())
    }

    /// Whether a session now on `current` may go to `runtime`: its creator did not name one, no
    /// worker has started, and the language stays.
    fn allows(&self, current: &Current, runtime: Runtime) -> bool {
        !self.spec.runtime_explicit
            && !current.started
            && runtime.language() == current.runtime.language()
    }

    /// Whether the session may still move to `runtime` (another runtime than its own).
    pub(super) fn may_move_to(&self, runtime: Runtime) -> bool {
        let current = self.current();
        current.runtime != runtime && self.allows(&current, runtime)
    }

    /// Moves the session to `runtime` if it still may: checked under the same lock a worker
    /// start takes, so a worker never starts on a runtime other than the one reported.
    pub(super) fn move_to(&self, runtime: Runtime) -> bool {
        let mut current = self.current();
        let allowed = self.allows(&current, runtime);
        if allowed {
            current.runtime = runtime;
        }
        allowed
    }

    /// Fixes the runtime for good (a worker is starting on it) and returns it with its limits.
    pub(super) fn start(&self) -> (Runtime, SessionLimits) {
        let runtime = {
            let mut current = self.current();
            current.started = true;
            current.runtime
        };
        (runtime, self.spec.limits_on(runtime))
    }
}

#[cfg(test)]
mod tests {
    use sandbox_protocol::Flavor;

    use super::*;

    fn spec(language: Language) -> SessionSpec {
        SessionSpec::new(
            language,
            SessionLimits::from(Flavor::Small),
            Duration::from_secs(60),
        )
    }

    #[test]
    fn fuel_outlasts_the_timeout_unless_the_client_set_it() {
        let mut spec = spec(Language::Python);
        let timeout = spec.limits.timeout;
        for runtime in [
            Runtime::Python,
            Runtime::PythonScientific,
            Runtime::JavaScript,
        ] {
            let fuel = spec.limits_on(runtime).fuel;
            let seconds_of_cpu = fuel as f64 / runtime.fuel_per_second() as f64;
            assert!(
                seconds_of_cpu >= 1.5 * timeout.as_secs_f64(),
                "{runtime}: {fuel} fuel is {seconds_of_cpu} s of CPU for a {timeout:?} timeout"
            );
            assert!(fuel >= spec.limits.fuel * runtime.fuel_factor());
        }
        let long = Duration::from_secs(300);
        let python = spec.execution_fuel(Runtime::Python, long);
        assert!(
            python > spec.execution_fuel(Runtime::Python, timeout),
            "a longer timeout buys more"
        );
        assert_eq!(python, Runtime::Python.fuel_until(long));
        assert!(Runtime::PythonScientific.fuel_until(long) > *FUEL_RANGE.end() / 2);
        assert!(spec.execution_fuel(Runtime::PythonScientific, long) <= *FUEL_RANGE.end());

        spec.fuel_explicit = true;
        spec.limits.fuel = 2_000_000_000;
        for runtime in [Runtime::Python, Runtime::PythonScientific] {
            assert_eq!(
                spec.execution_fuel(runtime, long),
                2_000_000_000,
                "a deterministic cap"
            );
            assert_eq!(spec.limits_on(runtime).fuel, 2_000_000_000);
        }
    }

    #[test]
    fn the_scientific_runtime_gets_more_fuel_and_memory_unless_the_client_chose() {
        let mut spec = spec(Language::Python);
        spec.limits.memory_bytes = 64 << 20;
        let default = spec.limits_on(Runtime::Python);
        assert_eq!(
            default.memory_bytes, spec.limits.memory_bytes,
            "the default runtime keeps its cap"
        );
        let scientific = spec.limits_on(Runtime::PythonScientific);
        assert!(scientific.fuel > default.fuel);
        assert_eq!(scientific.memory_bytes, SCIENTIFIC_MIN_MEMORY);

        spec.fuel_explicit = true;
        spec.limits.memory_bytes = 2 << 30;
        let chosen = spec.limits_on(Runtime::PythonScientific);
        assert_eq!(chosen.fuel, spec.limits.fuel, "explicit fuel is kept");
        assert_eq!(chosen.memory_bytes, 2 << 30, "a larger cap is kept");

        spec.fuel_explicit = false;
        spec.limits.fuel = *FUEL_RANGE.end();
        assert_eq!(
            spec.limits_on(Runtime::PythonScientific).fuel,
            *FUEL_RANGE.end(),
            "the factor never leaves the bounds"
        );
        spec.limits.fuel = 1;
        spec.limits.timeout = Duration::from_secs(10_000);
        assert_eq!(
            spec.execution_fuel(Runtime::JavaScript, spec.limits.timeout),
            *FUEL_RANGE.end(),
            "neither does the timeout"
        );
    }

    #[test]
    fn a_session_moves_only_before_its_first_worker_and_only_if_nobody_chose() {
        let setup = Setup::new(spec(Language::Python));
        assert_eq!(setup.runtime(), Runtime::Python);
        assert!(
            !setup.may_move_to(Runtime::JavaScript),
            "never another language"
        );
        assert!(!setup.move_to(Runtime::JavaScript));
        assert!(setup.may_move_to(Runtime::PythonScientific));
        assert!(setup.move_to(Runtime::PythonScientific));
        assert_eq!(setup.runtime(), Runtime::PythonScientific);
        assert_eq!(
            setup.limits(),
            setup.spec().limits_on(Runtime::PythonScientific)
        );
        let (runtime, limits) = setup.start();
        assert_eq!(runtime, Runtime::PythonScientific);
        assert_eq!(limits.fuel, setup.limits().fuel);
        assert!(!setup.may_move_to(Runtime::Python), "fixed once started");
        assert!(!setup.move_to(Runtime::Python));
        assert_eq!(setup.runtime(), Runtime::PythonScientific);

        let explicit = Setup::new(SessionSpec {
            runtime_explicit: true,
            ..spec(Language::Python)
        });
        assert!(!explicit.may_move_to(Runtime::PythonScientific));
        assert!(!explicit.move_to(Runtime::PythonScientific));
        assert_eq!(explicit.runtime(), Runtime::Python);
    }
}
