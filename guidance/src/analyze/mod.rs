//! `get_execution_guidance`: what a snippet will need before it runs. It detects the patterns
//! that decide success in this sandbox (imports and their measured cost, loops and their
//! bounds, file paths, network, processes, threads, names from earlier calls, Node.js-isms in
//! QuickJS), estimates the fuel with a range, and recommends session settings.
//!
//! Each pass owns one family of findings and writes into one `findings::Analysis`; the same
//! facts (`CodeFacts`) feed the fuel analysis and the failure advice, so all three tell the
//! same story about a piece of code.

mod apis;
mod dependencies;
mod facts;
mod findings;
mod language;
mod loops;
mod paths;
mod session;

use std::collections::HashSet;
use std::time::Duration;

use sandbox_protocol::{Language, Runtime};
use schemars::JsonSchema;
use serde::Serialize;

use super::NextCall;
use crate::inventory::ImportFuelTable;
use findings::Analysis;

pub(crate) use facts::{CodeFacts, HEAVY_IMPORT_FUEL};
pub(crate) use language::looks_like_other_language;
pub(crate) use paths::{PathClass, app_file_name, classify_path, is_file_call, writes_on_line};

/// The analysis of one snippet, without running it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ExecutionGuidance {
    pub language: String,
    /// Pattern names found, e.g. `file_io`, `heavy_imports`, `nested_loops`, `state_reliance`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub detected_patterns: Vec<String>,
    /// Each finding with its line and what it means here.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// Every import with its measured first-import fuel, or its status: unmeasured,
    /// unavailable, no_effect, native, compiled_in, node_builtin, es_module, vendored.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub imports: Vec<ImportInfo>,
    pub estimated_fuel: FuelEstimate,
    pub recommended_session: SessionRecommendation,
    /// Things that will fail or surprise in this sandbox.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Concrete changes or steps.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<String>,
    /// The call to make next (create_session with the recommended settings, or execute_code).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_call: Option<NextCall>,
}

/// One detected pattern.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Finding {
    pub pattern: String,
    /// 1-based line in the code, when the pattern is at one place.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    pub detail: String,
}

/// An import and what it will cost or why it fails.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ImportInfo {
    pub module: String,
    pub line: u32,
    /// `measured` (fuel known), `unmeasured`, `unavailable` (not in this build),
    /// `no_effect` (imports but cannot work: network, processes, threads), `native` (C
    /// extension, cannot load in WASM), `compiled_in` (compiled into the sandbox's
    /// CPython), `node_builtin` / `es_module`
    /// (JavaScript, not available), `vendored` (JavaScript requireVendor).
    pub status: String,
    /// Distribution name, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// Measured fuel of the first import in a session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fuel: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A fuel estimate with its uncertainty.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FuelEstimate {
    pub low: u64,
    pub expected: u64,
    pub high: u64,
    /// One line, e.g. "~1.2B fuel (300M–6B): import pandas 900M, loop at line 4 ~250M".
    pub summary: String,
    /// Where the expected fuel goes, largest first.
    pub breakdown: Vec<FuelItem>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FuelItem {
    pub source: String,
    pub fuel: u64,
}

/// Session settings that fit the code.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SessionRecommendation {
    /// `default` (execute_code without session_id is fine), `new_session` (create_session
    /// with the settings below) or `same_session` (the code needs state from earlier calls).
    pub session_type: String,
    /// `small`, `medium` or `large`.
    pub flavor: String,
    pub fuel_budget: u64,
    pub timeout_seconds: u64,
    pub memory_bytes: u64,
    pub reason: String,
}

/// Analyses `code` for `get_execution_guidance`, priced with its runtime's measured import
/// costs (Python's compiled-in packages included). The default budget is what an execution gets with the default
/// flavor fuel and timeout (`sandbox_protocol::default_execution_fuel`).
pub fn analyze(
    code: &str,
    language: Language,
    context: Option<&str>,
    imports: &ImportFuelTable,
    (default_fuel_budget, default_timeout): (u64, Duration),
) -> ExecutionGuidance {
    let facts = CodeFacts::new(code, language);
    let mut out = Analysis::default();
    let runtime = Runtime::default_for(language);
    let default_fuel_budget =
        sandbox_protocol::default_execution_fuel(default_fuel_budget, runtime, default_timeout);

    dependencies::import_findings(&facts, imports, &mut out);
    loops::loop_findings(&facts, &mut out, default_fuel_budget);
    paths::path_findings(&facts, &mut out);
    apis::api_findings(&facts, &mut out);
    language::state_findings(&facts, &mut out);
    language::language_mismatch(&facts, &mut out);

    let context = context.unwrap_or("").to_lowercase();
    let estimate = out.estimate(language, default_fuel_budget);
    let session = session::recommend_session(
        &estimate,
        (&context, runtime),
        default_fuel_budget,
        &mut out,
    );
    let next_call = if out.blocking {
        None
    } else {
        session::session_next_call(code, runtime, &session, &context)
    };

    let mut patterns: Vec<String> = out.order.clone();
    patterns.dedup();
    ExecutionGuidance {
        language: language.to_string(),
        detected_patterns: patterns,
        findings: out.findings,
        imports: out.imports,
        estimated_fuel: estimate,
        recommended_session: session,
        warnings: dedup(out.warnings),
        suggestions: dedup(out.suggestions),
        next_call,
    }
}

/// `items` without repeats, in their first order.
fn dedup(items: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    items
        .into_iter()
        .filter(|s| seen.insert(s.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default flavor's fuel and timeout, as a server passes them.
    const DEFAULTS: (u64, Duration) = (10_000_000_000, Duration::from_secs(30));

    fn table() -> ImportFuelTable {
        crate::inventory::import_costs().clone()
    }

    #[test]
    fn never_panics_on_random_or_huge_input() {
        // A small deterministic generator: no extra dependency, reproducible failures.
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let alphabet = b"()[]{}'\"`\\/#*.=:;,\n\t forwhileimportdefconst0123456789_x$+-<>!?";
        let started = std::time::Instant::now();
        for round in 0..300 {
            let len = (next() % 400) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    let r = next();
                    if round % 3 == 0 {
                        r as u8
                    } else {
                        alphabet[(r as usize) % alphabet.len()]
                    }
                })
                .collect();
            let code = String::from_utf8_lossy(&bytes);
            for language in [Language::Python, Language::JavaScript] {
                let g = analyze(&code, language, Some(&code), &table(), DEFAULTS);
                assert!(g.estimated_fuel.low <= g.estimated_fuel.high);
                let _ = serde_json::to_string(&g).unwrap();
            }
        }
        // Huge inputs stay linear.
        let huge = "for i in range(10):\n    x = (1 + 2) * '/etc/passwd'[0]\n".repeat(40_000);
        let deep = "(".repeat(200_000) + &"[".repeat(200_000);
        let strings = "'".repeat(300_000);
        for code in [huge.as_str(), deep.as_str(), strings.as_str()] {
            for language in [Language::Python, Language::JavaScript] {
                let _ = analyze(code, language, None, &table(), DEFAULTS);
            }
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "took {:?}",
            started.elapsed()
        );
    }
}
