//! The limits of one session, built from a [`FlavorSpec`] of the protocol's flavor table, and the
//! bounds every limit an operator or a client may set must stay within.

use std::ops::RangeInclusive;
use std::time::Duration;

pub use sandbox_protocol::{
    FUEL_RANGE, MAX_TIMEOUT, MEMORY_RANGE, default_execution_fuel, flavor_execution_fuel,
};
use sandbox_protocol::{Flavor, FlavorSpec};

/// Bounds for a default execution timeout in seconds: at least one, at most [`MAX_TIMEOUT`].
pub const TIMEOUT_SECS_RANGE: RangeInclusive<u64> = 1..=MAX_TIMEOUT.as_secs();

/// Bounds for a session's idle time to live in seconds: at most 30 days. The expiry is a date:
/// an unbounded TTL overflowed the date arithmetic and hung the request.
pub const TTL_RANGE: RangeInclusive<u64> = 1..=30 * 24 * 3600;

/// Bounds for a disk quota in bytes: below 1 MiB a session could not even install a small
/// package; 16 TiB is beyond any disk a sandbox host should lend one session.
pub const DISK_QUOTA_BYTES_RANGE: RangeInclusive<u64> = (1 << 20)..=(16 << 40);

/// Bounds for a disk quota in entries: a handful of files at least; ten million entries would
/// take a count of the tree (at the limit) far longer than a call should.
pub const DISK_QUOTA_FILES_RANGE: RangeInclusive<u64> = 10..=10_000_000;

/// Bounds for the HTTP header timeout in seconds: a second at least (a head crossing a slow
/// link); beyond five minutes a trickling client would hold its connection for nothing.
pub const HTTP_HEADER_TIMEOUT_SECS_RANGE: RangeInclusive<u64> = 1..=300;

/// Bounds for the HTTP idle timeout in seconds: at most an hour (an idle connection holds a
/// descriptor and a slot).
pub const HTTP_IDLE_TIMEOUT_SECS_RANGE: RangeInclusive<u64> = 1..=3600;

/// Bounds for the HTTP connection caps (all, and per client address): one at least; a million
/// is beyond any open-file limit a host would give one process.
pub const HTTP_CONNECTIONS_RANGE: RangeInclusive<u64> = 1..=1_000_000;

/// The default largest `code` (execute_code, get_execution_guidance) and `command`
/// (execute_command): bigger is almost certainly data that belongs in a file under /app.
pub const DEFAULT_MAX_CODE_BYTES: usize = 1 << 20;

/// Bounds for the largest `code` / `command`: a few lines at least; at most 16 MiB, well inside
/// the worker protocol's 64 MiB frame.
pub const MAX_CODE_BYTES_RANGE: RangeInclusive<u64> = 256..=(16 << 20);

/// The largest JSON-RPC message read from a client (an HTTP request body, a stdio line) when
/// `code` may hold `max_code_bytes`: JSON may spell one byte of code in six (a control
/// character is `\u0001`), and 1 MiB more carries the other arguments and the envelope. Code a
/// little over its limit must still be read whole, so that it is answered `invalid_argument`
/// naming the limit rather than refused with a bare HTTP 413 or, on stdio, dropped unanswered.
pub const fn max_message_bytes(max_code_bytes: usize) -> usize {
    max_code_bytes.saturating_mul(6).saturating_add(1 << 20)
}

/// Limits of one session. Every execution of the session runs under them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionLimits {
    /// The flavor these limits started from.
    pub flavor: Flavor,
    /// CPU share (see [`FlavorSpec::cpus`]): the worker's `cpu.max` quota with delegated
    /// cgroups, and the scale of its RLIMIT_CPU backstop.
    pub cpus: u32,
    /// Memory cap of the interpreter (WebAssembly linear memory, at most 4 GiB).
    pub memory_bytes: u64,
    /// Fuel per execution (about 10^10 per second of CPU).
    pub fuel: u64,
    /// Default wall-clock timeout of an execution.
    pub timeout: Duration,
    /// Most bytes of stdout one execution keeps.
    pub stdout_cap: usize,
    /// Most bytes of stderr one execution keeps.
    pub stderr_cap: usize,
    /// Largest file the session may write (RLIMIT_FSIZE of its worker).
    pub disk_bytes: u64,
    /// Most bytes the session's files in /app and /tmp may hold together (its disk quota,
    /// enforced by the worker).
    pub disk_quota_bytes: u64,
    /// Most files, directories and links /app and /tmp may hold together.
    pub disk_quota_files: u64,
}

impl From<&FlavorSpec> for SessionLimits {
    /// Every limit as the flavor table states it.
    fn from(spec: &FlavorSpec) -> Self {
        SessionLimits {
            flavor: spec.flavor,
            cpus: spec.cpus,
            memory_bytes: spec.memory_bytes,
            fuel: spec.fuel,
            timeout: Duration::from_secs(spec.timeout_secs),
            stdout_cap: spec.output_bytes,
            stderr_cap: spec.output_bytes,
            disk_bytes: spec.disk_file_bytes,
            disk_quota_bytes: spec.disk_quota_bytes,
            disk_quota_files: spec.disk_quota_files,
        }
    }
}

impl From<Flavor> for SessionLimits {
    /// The limits of a session of this flavor.
    fn from(flavor: Flavor) -> Self {
        SessionLimits::from(flavor.spec())
    }
}

impl Default for SessionLimits {
    /// The default flavor's limits.
    fn default() -> Self {
        SessionLimits::from(Flavor::default())
    }
}

#[cfg(test)]
mod tests {
    use sandbox_protocol::FLAVORS;

    use super::*;

    #[test]
    fn limits_are_the_flavor_tables_numbers() {
        for spec in &FLAVORS {
            let limits = SessionLimits::from(spec.flavor);
            assert_eq!(limits.flavor, spec.flavor);
            assert_eq!(limits.cpus, spec.cpus);
            assert_eq!(limits.memory_bytes, spec.memory_bytes);
            assert_eq!(limits.fuel, spec.fuel);
            assert_eq!(limits.timeout.as_secs(), spec.timeout_secs);
            assert_eq!(
                (limits.stdout_cap, limits.stderr_cap),
                (spec.output_bytes, spec.output_bytes)
            );
            assert_eq!(limits.disk_bytes, spec.disk_file_bytes);
            assert_eq!(limits.disk_quota_bytes, spec.disk_quota_bytes);
            assert_eq!(limits.disk_quota_files, spec.disk_quota_files);
        }
        let small = SessionLimits::default();
        assert_eq!(
            (small.flavor, small.cpus, small.memory_bytes),
            (Flavor::Small, 1, 1 << 30)
        );
    }

    #[test]
    fn every_flavor_lies_within_the_bounds_clients_and_operators_get() {
        for spec in &FLAVORS {
            assert!(MEMORY_RANGE.contains(&spec.memory_bytes), "{spec:?}");
            assert!(FUEL_RANGE.contains(&spec.fuel), "{spec:?}");
            assert!(TIMEOUT_SECS_RANGE.contains(&spec.timeout_secs), "{spec:?}");
            assert!(
                DISK_QUOTA_BYTES_RANGE.contains(&spec.disk_quota_bytes),
                "{spec:?}"
            );
            assert!(
                DISK_QUOTA_FILES_RANGE.contains(&spec.disk_quota_files),
                "{spec:?}"
            );
        }
        assert!(MAX_CODE_BYTES_RANGE.contains(&(DEFAULT_MAX_CODE_BYTES as u64)));
    }

    #[test]
    fn the_largest_code_fits_a_message_in_its_worst_json_spelling() {
        let code = "\u{1}".repeat(DEFAULT_MAX_CODE_BYTES);
        let message = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "execute_code", "arguments": {"language": "python", "code": code}}});
        let spelled = serde_json::to_string(&message).unwrap().len();
        assert!(spelled > 6 * DEFAULT_MAX_CODE_BYTES, "{spelled}");
        assert!(
            spelled < max_message_bytes(DEFAULT_MAX_CODE_BYTES),
            "{spelled}"
        );
    }
}
