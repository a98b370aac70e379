//! `sandbox-guidance`: what sandbox-mcp tells a model it can act on. Advice for failed
//! executions ([`advise`]), a fuel analysis on every result ([`fuel_analysis`]), code analysis
//! without running it ([`analyze`], behind the `get_execution_guidance` tool), the documentation
//! pages served as MCP resources ([`docs::DOCS`]), and the one catalogue of what the
//! interpreters hold ([`inventory`]: compiled-in packages and measured import costs,
//! [`ImportFuelTable`]), which the supervisor's packages read too.
//!
//! It depends on `sandbox-protocol` only (for the error classes, runtimes, flavors and limits
//! both sides share), never on the supervisor, which calls it from its tools and reports.
//!
//! Everything here is a pure function of its inputs (the one exception is
//! [`ImportFuelTable::load`], which reads an optional data file), so the tools can call it on
//! every result without locking or I/O, and the tests need no sandbox. The code analysis is
//! deliberately light text analysis on a small lexer ([`scan`]): it must never panic and must
//! stay linear on hostile input, because `get_execution_guidance` accepts arbitrary text.
//!
//! Each part is split by family: [`advice`] by failure (syntax, names and imports, runtime
//! exceptions, files, limits, memory, the JavaScript host, packages, the session), [`analyze`]
//! by finding (imports, loops, paths, host APIs, state, the recommended session) and [`scan`]
//! by what it reads off the tokens. Session sizes come from the one table in
//! [`sandbox_protocol::FLAVORS`], which the docs pages are checked against.

pub mod advice;
pub mod analyze;
pub mod docs;
pub mod fixture;
pub mod fuel;
pub mod inventory;
mod modules;
mod scan;
mod words;

use sandbox_protocol::Language;
use schemars::JsonSchema;
use serde::Serialize;

pub use crate::inventory::{ImportCost, ImportFuelTable};
pub use advice::{Advice, DiskFacts, ErrorFacts, advise, advise_with};
pub use analyze::{ExecutionGuidance, analyze};
pub use docs::{DOCS, Doc, doc};
pub use fuel::{FuelAnalysis, FuelStatus, fuel_analysis};

/// The modules Python `code` imports, in order of appearance and as written (`pandas`,
/// `sklearn.linear_model`): `import`, `from ... import`, `__import__("x")` and
/// `importlib.import_module("x")`. Comments and strings are not code, and relative imports are
/// the user's own, so neither counts. Linear and panic-free on any input, like every scan here.
pub fn python_imports(code: &str) -> Vec<String> {
    let src = scan::Source::new(code, Language::Python);
    scan::imports(&src)
        .into_iter()
        .filter(|i| i.kind == scan::ImportKind::Python)
        .map(|i| i.module)
        .collect()
}

/// A tool call the model can make next, with arguments that are valid for that tool.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct NextCall {
    /// Tool name, e.g. `create_session`.
    pub tool: String,
    /// The arguments object to pass as is.
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub arguments: serde_json::Value,
    /// Why this call helps.
    pub reason: String,
}

impl NextCall {
    fn new(tool: &str, arguments: serde_json::Value, reason: impl Into<String>) -> Self {
        Self {
            tool: tool.to_owned(),
            arguments,
            reason: reason.into(),
        }
    }
}

/// The largest fuel budget guidance ever proposes: the most a call can have (about 170 s of
/// CPU in numpy's loops, 15 minutes in a Python loop), far beyond what an interactive call
/// should need; above it the advice is to split the work.
pub const MAX_SUGGESTED_FUEL: u64 = 5_000_000_000_000;

/// The longest `timeout` (seconds) an execution may ask for.
pub const MAX_TIMEOUT_SECS: u64 = sandbox_protocol::MAX_TIMEOUT.as_secs();

/// The largest interpreter memory (a 32-bit WebAssembly memory addresses 4 GiB).
pub const MAX_MEMORY_BYTES: u64 = *sandbox_protocol::MEMORY_RANGE.end();

/// Code up to this size is repeated in a suggested `execute_code` call; longer code would bloat
/// every failed result, so the advice describes the call instead.
const MAX_ECHOED_CODE: usize = 4 * 1024;

/// `n` rounded up to 1, 2, 2.5 or 5 times a power of ten, so suggested budgets read well
/// (30000000000 rather than 29873456120).
pub fn nice_round_up(n: u64) -> u64 {
    if n <= 10 {
        return n.max(1);
    }
    let mut magnitude: u64 = 1;
    while magnitude <= n / 10 {
        magnitude *= 10;
    }
    for step in [10, 20, 25, 30, 50, 100] {
        let candidate = magnitude.saturating_mul(step) / 10;
        if candidate >= n {
            return candidate;
        }
    }
    magnitude.saturating_mul(10)
}

/// Fuel as a model reads it best: `229M`, `1.19B`, `10B`, `1T`.
pub fn fmt_fuel(n: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1_000_000_000_000, "T"),
        (1_000_000_000, "B"),
        (1_000_000, "M"),
        (1_000, "K"),
    ];
    for (size, unit) in UNITS {
        if n >= size {
            return format!("{}{unit}", short_decimal(n as f64 / size as f64));
        }
    }
    n.to_string()
}

/// Seconds as a model reads them: `30 s`, `0.5 s`, `2.25 s`.
pub fn fmt_secs(seconds: f64) -> String {
    format!("{} s", short_decimal(seconds))
}

/// Bytes in binary units: `256 MiB`, `1.5 GiB`.
pub fn fmt_bytes(n: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (size, unit) in UNITS {
        if n >= size {
            return format!("{} {unit}", short_decimal(n as f64 / size as f64));
        }
    }
    format!("{n} B")
}

/// Three significant digits at most, no trailing zeros.
fn short_decimal(x: f64) -> String {
    let text = if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    };
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// A session id derived from `base` that is valid (`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`) and
/// differs from it, for "create a new session with more X" suggestions.
fn derived_session_id(base: &str, suffix: &str) -> String {
    let clean: String = base
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    let clean = clean.trim_start_matches(['-', '_']);
    let clean = if clean.is_empty() { "session" } else { clean };
    // Do not stack suffixes: "x-fuel-30b" retried becomes "x-fuel-100b", not "x-fuel-30b-fuel-100b".
    let stem = clean
        .rsplit_once("-fuel-")
        .or_else(|| clean.rsplit_once("-mem-"))
        .map_or(clean, |(stem, _)| stem);
    let room = 63usize.saturating_sub(suffix.len() + 1).max(1);
    let stem: String = stem.chars().take(room).collect();
    let stem = if stem.is_empty() {
        "session".to_owned()
    } else {
        stem
    };
    format!("{stem}-{suffix}")
}

/// `s` cut to at most `max` bytes on a character boundary, with an ellipsis when cut.
fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut cut = max;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &s[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_round_up_reads_well() {
        assert_eq!(nice_round_up(0), 1);
        assert_eq!(nice_round_up(7), 7);
        assert_eq!(nice_round_up(11), 20);
        assert_eq!(nice_round_up(29_873_456_120), 30_000_000_000);
        assert_eq!(nice_round_up(30_000_000_000), 30_000_000_000);
        assert_eq!(nice_round_up(30_000_000_001), 50_000_000_000);
        assert_eq!(nice_round_up(21_000_000_000), 25_000_000_000);
        assert!(nice_round_up(u64::MAX) >= u64::MAX / 10);
    }

    #[test]
    fn fuel_and_bytes_format_compactly() {
        assert_eq!(fmt_fuel(228_600_000), "229M");
        assert_eq!(fmt_fuel(1_190_000_000), "1.19B");
        assert_eq!(fmt_fuel(10_000_000_000), "10B");
        assert_eq!(fmt_fuel(1_000_000_000_000), "1T");
        assert_eq!(fmt_fuel(999), "999");
        assert_eq!(fmt_bytes(256 << 20), "256 MiB");
        assert_eq!(fmt_bytes(3 << 29), "1.5 GiB");
    }

    #[test]
    fn derived_session_ids_are_valid_and_new() {
        let valid = |id: &str| {
            !id.is_empty()
                && id.len() <= 64
                && id.chars().next().unwrap().is_ascii_alphanumeric()
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        };
        for base in [
            "default-python-1a2b3c4d",
            "",
            "-_-",
            "x".repeat(64).as_str(),
            "é!",
        ] {
            let id = derived_session_id(base, "fuel-30b");
            assert!(valid(&id), "{id}");
            assert_ne!(id, base);
        }
        assert_eq!(
            derived_session_id("work-fuel-30b", "fuel-100b"),
            "work-fuel-100b"
        );
    }

    #[test]
    fn limits_sit_above_the_flavors_they_suggest() {
        use sandbox_protocol::FlavorSpec;
        use sandbox_protocol::flavor::flavor_for;

        assert_eq!(flavor_for(1, 1).map(FlavorSpec::name), Some("small"));
        assert_eq!(
            flavor_for(20_000_000_000, 1).map(FlavorSpec::name),
            Some("medium")
        );
        assert_eq!(flavor_for(1, 3 << 30).map(FlavorSpec::name), Some("large"));
        // Beyond every flavor, guidance proposes explicit budgets, capped by these limits.
        assert!(flavor_for(MAX_SUGGESTED_FUEL, 1).is_none());
        let largest = sandbox_protocol::FLAVORS[2];
        assert!(largest.memory_bytes <= MAX_MEMORY_BYTES);
        assert!(largest.timeout_secs <= MAX_TIMEOUT_SECS);
    }

    #[test]
    fn clip_respects_char_boundaries() {
        assert_eq!(clip("héllo", 2), "h…");
        assert_eq!(clip("abc", 3), "abc");
    }
}
