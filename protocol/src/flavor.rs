//! Session sizes, stated once: the supervisor sets a session's limits from them, guidance
//! suggests the next size up from them, and the docs page quotes them; with the bounds of the
//! limits both read (memory, timeout, fuel) and the default fuel of an execution.

use std::ops::RangeInclusive;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::Runtime;

/// Session sizes (from the seed: small 1 CPU / 1 GiB, medium 2 CPU / 2 GiB, large 4 CPU /
/// 4 GiB). A flavor sets every limit of a session; explicit arguments override single limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Flavor {
    #[default]
    Small,
    Medium,
    Large,
}

/// The numbers behind one [`Flavor`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlavorSpec {
    pub flavor: Flavor,
    /// A share of the machine, not a thread count: guest code always runs on one thread. With
    /// delegated cgroup v2 it is the worker's `cpu.max` quota (N × 100 ms per 100 ms); without
    /// cgroups it scales the RLIMIT_CPU backstop.
    pub cpus: u32,
    /// Linear-memory cap of the interpreter.
    pub memory_bytes: u64,
    /// Fuel per execution (about 10^10 per second of CPU).
    pub fuel: u64,
    /// Default wall-clock timeout of an execution.
    pub timeout_secs: u64,
    /// Cap of each of stdout and stderr per execution.
    pub output_bytes: usize,
    /// The largest single file (RLIMIT_FSIZE).
    pub disk_file_bytes: u64,
    /// The disk quota of /app and /tmp together: bytes, and files + directories + links.
    pub disk_quota_bytes: u64,
    pub disk_quota_files: u64,
}

/// Small, medium, large, in increasing size.
pub const FLAVORS: [FlavorSpec; 3] = [
    FlavorSpec {
        flavor: Flavor::Small,
        cpus: 1,
        memory_bytes: 1 << 30,
        fuel: 10_000_000_000,
        timeout_secs: 30,
        output_bytes: 1 << 20,
        disk_file_bytes: 256 << 20,
        disk_quota_bytes: 1 << 30,
        disk_quota_files: 20_000,
    },
    FlavorSpec {
        flavor: Flavor::Medium,
        cpus: 2,
        memory_bytes: 2 << 30,
        fuel: 50_000_000_000,
        timeout_secs: 60,
        output_bytes: 4 << 20,
        disk_file_bytes: 1 << 30,
        disk_quota_bytes: 4 << 30,
        disk_quota_files: 50_000,
    },
    FlavorSpec {
        flavor: Flavor::Large,
        cpus: 4,
        memory_bytes: 4 << 30,
        fuel: 200_000_000_000,
        timeout_secs: 120,
        output_bytes: 16 << 20,
        disk_file_bytes: 4 << 30,
        disk_quota_bytes: 16 << 30,
        disk_quota_files: 100_000,
    },
];

impl Flavor {
    pub const ALL: [Flavor; 3] = [Flavor::Small, Flavor::Medium, Flavor::Large];

    /// The name clients use (`"small"`, …).
    pub fn name(self) -> &'static str {
        match self {
            Flavor::Small => "small",
            Flavor::Medium => "medium",
            Flavor::Large => "large",
        }
    }

    /// The flavor of a name, if it is one.
    pub fn from_name(name: &str) -> Option<Flavor> {
        Flavor::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Its numbers.
    pub fn spec(self) -> &'static FlavorSpec {
        match self {
            Flavor::Small => &FLAVORS[0],
            Flavor::Medium => &FLAVORS[1],
            Flavor::Large => &FLAVORS[2],
        }
    }
}

impl FlavorSpec {
    /// The flavor's name.
    pub fn name(&self) -> &'static str {
        self.flavor.name()
    }
}

/// The smallest flavor whose fuel and memory both cover the need, if any does.
pub fn flavor_for(fuel: u64, memory_bytes: u64) -> Option<&'static FlavorSpec> {
    FLAVORS
        .iter()
        .find(|f| f.fuel >= fuel && f.memory_bytes >= memory_bytes)
}

/// Bounds for a session's memory cap: below 32 MiB CPython cannot start; 4 GiB is all a 32-bit
/// WebAssembly memory can address.
pub const MEMORY_RANGE: RangeInclusive<u64> = (32 << 20)..=(4 << 30);

/// The longest timeout an execution may ask for. MCP clients give up on a request after a few
/// minutes; an execution must finish (or be stopped) well before that.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(300);

/// Bounds for a fuel budget: below 10^6 not even an empty cell runs; 5×10^12 is 170 s of
/// numpy's fastest loops and over 800 s of a Python loop on CPython 3.15.
pub const FUEL_RANGE: RangeInclusive<u64> = 1_000_000..=5_000_000_000_000;

/// The fuel of an execution whose client did not set `fuel_budget`: enough to compute until
/// `timeout` on `runtime` ([`Runtime::fuel_until`]), so the timeout stops a long computation
/// softly (state kept) rather than the fuel, and at least the flavor's `flavor_fuel` times the
/// runtime's [`Runtime::fuel_factor`]; within [`FUEL_RANGE`].
pub fn default_execution_fuel(flavor_fuel: u64, runtime: Runtime, timeout: Duration) -> u64 {
    flavor_fuel
        .saturating_mul(runtime.fuel_factor())
        .max(runtime.fuel_until(timeout))
        .clamp(*FUEL_RANGE.start(), *FUEL_RANGE.end())
}

/// The fuel an execution in a session of `flavor` on `runtime` gets by default: its fuel and
/// its timeout as the flavor table states them.
pub fn flavor_execution_fuel(flavor: &FlavorSpec, runtime: Runtime) -> u64 {
    default_execution_fuel(
        flavor.fuel,
        runtime,
        Duration::from_secs(flavor.timeout_secs),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_flavor_order_and_grows() {
        for (spec, flavor) in FLAVORS.iter().zip(Flavor::ALL) {
            assert_eq!(spec.flavor, flavor);
            assert_eq!(flavor.spec(), spec);
            assert_eq!(Flavor::from_name(flavor.name()), Some(flavor));
        }
        for pair in FLAVORS.windows(2) {
            assert!(pair[0].fuel < pair[1].fuel && pair[0].memory_bytes < pair[1].memory_bytes);
        }
        assert_eq!(
            flavor_for(20_000_000_000, 1 << 30).map(FlavorSpec::name),
            Some("medium")
        );
        assert_eq!(flavor_for(u64::MAX, 0), None);
    }
}
