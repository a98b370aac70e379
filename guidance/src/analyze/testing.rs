//! Helpers for the analysis tests: run the analysis with the built-in import table and the
//! default budget, and look for patterns and warnings in the result.

use sandbox_protocol::Language;

use super::{ExecutionGuidance, analyze};
use crate::inventory::imports::ImportFuelTable;

pub(super) fn table() -> ImportFuelTable {
    crate::inventory::import_costs().clone()
}

/// The default flavor's fuel and timeout, as a server passes them.
pub(super) const DEFAULTS: (u64, std::time::Duration) =
    (10_000_000_000, std::time::Duration::from_secs(30));

pub(super) fn py(code: &str) -> ExecutionGuidance {
    analyze(code, Language::Python, None, &table(), DEFAULTS)
}

pub(super) fn js(code: &str) -> ExecutionGuidance {
    analyze(code, Language::JavaScript, None, &table(), DEFAULTS)
}

pub(super) fn has(g: &ExecutionGuidance, pattern: &str) -> bool {
    g.detected_patterns.iter().any(|p| p == pattern)
}

pub(super) fn warned(g: &ExecutionGuidance, needle: &str) -> bool {
    g.warnings.iter().any(|w| w.contains(needle))
}
