//! What a session runs on: its [`Runtime`] (its language's, for good) and the limits that
//! follow from it.
//!
//! Fuel stands behind the timeout: unless the client set `fuel_budget` (a deterministic cap,
//! used as given), an execution gets enough fuel to compute until its timeout on its runtime
//! ([`Runtime::fuel_until`]), and at least the flavor's fuel times [`Runtime::fuel_factor`].
//! So a long computation is stopped by its timeout, softly and with the session's state kept,
//! not by running out of fuel.
//!
//! A Python session's memory cap is at least [`PYTHON_MIN_MEMORY`]. A memory cap is a limit,
//! not a reservation: admission counts what workers really use (see `memory`).

use std::time::Duration;

use sandbox_protocol::{Language, Runtime};

#[cfg(test)]
use crate::config::FUEL_RANGE;
use crate::config::{SessionLimits, default_execution_fuel};

/// The least memory cap a Python session gets. Importing pandas takes about 63 MiB of linear
/// memory and numpy, pandas, scipy and scikit-learn together 115 MiB, before any data: with
/// less, a model's first analysis would end in `out_of_memory`.
pub const PYTHON_MIN_MEMORY: u64 = 512 << 20;

/// What a new session is asked to be, before admission.
#[derive(Debug, Clone)]
pub struct SessionSpec {
    /// The runtime it runs on: its language's.
    pub runtime: Runtime,
    /// The limits as the flavor and the client's overrides give them, before the runtime's
    /// adjustments ([`SessionSpec::limits_on`]).
    pub limits: SessionLimits,
    /// The client set `fuel_budget`: it is used as given, whatever the runtime.
    pub fuel_explicit: bool,
    /// Idle time until the session is removed.
    pub ttl: Duration,
}

impl SessionSpec {
    /// A session of `language`, nothing chosen explicitly.
    pub fn new(language: Language, limits: SessionLimits, ttl: Duration) -> Self {
        Self {
            runtime: Runtime::default_for(language),
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

    /// The limits of this session on its own runtime.
    pub fn limits(&self) -> SessionLimits {
        self.limits_on(self.runtime)
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
        Runtime::Python => PYTHON_MIN_MEMORY,
        Runtime::JavaScript => 0,
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
        for runtime in Runtime::ALL {
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
        assert_eq!(
            python,
            Runtime::Python.fuel_until(long).min(*FUEL_RANGE.end())
        );
        assert!(Runtime::Python.fuel_until(long) > *FUEL_RANGE.end() / 2);
        assert!(spec.execution_fuel(Runtime::Python, long) <= *FUEL_RANGE.end());

        spec.fuel_explicit = true;
        spec.limits.fuel = 2_000_000_000;
        for runtime in Runtime::ALL {
            assert_eq!(
                spec.execution_fuel(runtime, long),
                2_000_000_000,
                "a deterministic cap"
            );
            assert_eq!(spec.limits_on(runtime).fuel, 2_000_000_000);
        }
    }

    #[test]
    fn python_gets_more_fuel_and_memory_unless_the_client_chose() {
        let mut spec = spec(Language::Python);
        spec.limits.memory_bytes = 64 << 20;
        let javascript = spec.limits_on(Runtime::JavaScript);
        assert_eq!(
            javascript.memory_bytes, spec.limits.memory_bytes,
            "JavaScript keeps its cap"
        );
        let python = spec.limits();
        assert_eq!(python, spec.limits_on(Runtime::Python));
        assert!(python.fuel >= spec.limits.fuel * Runtime::Python.fuel_factor());
        assert_eq!(python.memory_bytes, PYTHON_MIN_MEMORY);

        spec.fuel_explicit = true;
        spec.limits.memory_bytes = 2 << 30;
        let chosen = spec.limits();
        assert_eq!(chosen.fuel, spec.limits.fuel, "explicit fuel is kept");
        assert_eq!(chosen.memory_bytes, 2 << 30, "a larger cap is kept");

        spec.fuel_explicit = false;
        spec.limits.fuel = *FUEL_RANGE.end();
        assert_eq!(
            spec.limits().fuel,
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
}
