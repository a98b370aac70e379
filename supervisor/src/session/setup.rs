//! What a session runs on: its [`Runtime`] and the limits that follow from it.
//!
//! A session starts on its language's default runtime unless its creator names one. Until its
//! first worker starts, a Python session whose creator did not name a runtime may still move to
//! the scientific one (the code it is first asked to run decides, in `tools::execute_code`).
//! From its first worker on, the runtime is fixed for the session's life: a restart or a reset
//! keeps it, because the model has already seen that interpreter's answers.
//!
//! The scientific runtime costs more, and its limits say so: each execution gets the flavor's
//! fuel times [`Runtime::fuel_factor`] (unless the client set the fuel itself), and its memory
//! cap is at least [`SCIENTIFIC_MIN_MEMORY`]. A memory cap is a limit, not a reservation:
//! admission counts what workers really use (see `memory`).

use std::sync::Mutex;
use std::time::Duration;

use sandbox_protocol::{Language, Runtime};

use crate::config::{FUEL_RANGE, SessionLimits};

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

    /// The limits of this session if it runs on `runtime`.
    pub fn limits_on(&self, runtime: Runtime) -> SessionLimits {
        let mut limits = self.limits.clone();
        if !self.fuel_explicit {
            limits.fuel = limits
                .fuel
                .saturating_mul(runtime.fuel_factor())
                .min(*FUEL_RANGE.end());
        }
        limits.memory_bytes = limits.memory_bytes.max(min_memory(runtime));
        limits
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
    fn the_scientific_runtime_gets_more_fuel_and_memory_unless_the_client_chose() {
        let mut spec = spec(Language::Python);
        spec.limits.memory_bytes = 64 << 20;
        let default = spec.limits_on(Runtime::Python);
        assert_eq!(default, spec.limits, "the default runtime changes nothing");
        let scientific = spec.limits_on(Runtime::PythonScientific);
        assert_eq!(
            scientific.fuel,
            spec.limits.fuel * Runtime::PythonScientific.fuel_factor()
        );
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
