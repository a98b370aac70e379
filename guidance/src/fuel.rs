//! The fuel analysis of an execution result (attached from half the budget on): how much of the budget the call used,
//! a status by the hardening PRD's thresholds (< 50 % efficient, 50–75 % moderate, 75–90 %
//! warning, ≥ 90 % critical), and from 75 % on a recommended budget with the likely causes
//! read off the code (measured import costs, loops, large data).
//!
//! Below 75 % nothing looks at the code, so the analysis of an ordinary result costs nothing.
//! What it says lives in `words/fuel.toml`.

use sandbox_protocol::Language;
use schemars::JsonSchema;
use serde::Serialize;

use super::analyze::{CodeFacts, HEAVY_IMPORT_FUEL};
use super::{MAX_SUGGESTED_FUEL, fmt_bytes, fmt_fuel, nice_round_up};
use crate::inventory::ImportFuelTable;
use crate::words::{self, say};

/// How close the execution came to its budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FuelStatus {
    /// Under 50 %: nothing to do.
    Efficient,
    /// 50–75 %: fine, but similar code with more data may need more.
    Moderate,
    /// 75–90 %: raise the budget for similar workloads.
    Warning,
    /// 90 % and above (or out of fuel): raise the budget before running similar code again.
    Critical,
}

impl FuelStatus {
    fn of(pct: f64) -> Self {
        if pct >= 90.0 {
            FuelStatus::Critical
        } else if pct >= 75.0 {
            FuelStatus::Warning
        } else if pct >= 50.0 {
            FuelStatus::Moderate
        } else {
            FuelStatus::Efficient
        }
    }
}

/// Fuel use of one execution against its budget.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FuelAnalysis {
    /// The result's own `fuel_consumed` and `fuel_budget`: not repeated in it.
    #[serde(skip)]
    #[schemars(skip)]
    pub consumed: u64,
    #[serde(skip)]
    #[schemars(skip)]
    pub budget: u64,
    /// consumed / budget in percent, one decimal.
    pub utilization_pct: f64,
    pub status: FuelStatus,
    /// What to do, from 50 % on (informational below 75 %).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recommendation: Option<String>,
    /// A budget with headroom for similar code (warning and critical only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggested_fuel_budget: Option<u64>,
    /// What in the code likely used the fuel (warning and critical only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub likely_causes: Vec<String>,
}

/// Analyses the fuel of one execution of `code`.
pub fn fuel_analysis(
    consumed: u64,
    budget: u64,
    code: &str,
    language: Language,
    imports: &ImportFuelTable,
) -> FuelAnalysis {
    // The status uses the exact ratio: 49.99 % is still efficient even if it shows as 50.0.
    let exact = if budget == 0 {
        0.0
    } else {
        consumed as f64 / budget as f64 * 100.0
    };
    let pct = (exact * 10.0).round() / 10.0;
    let status = FuelStatus::of(exact);
    let mut analysis = FuelAnalysis {
        consumed,
        budget,
        utilization_pct: pct,
        status,
        recommendation: None,
        suggested_fuel_budget: None,
        likely_causes: Vec::new(),
    };
    match status {
        FuelStatus::Efficient => {}
        FuelStatus::Moderate => {
            analysis.recommendation = Some(say!(
                "recommendation.moderate",
                pct = pct,
                budget = fmt_fuel(budget)
            ));
        }
        FuelStatus::Warning | FuelStatus::Critical => {
            let factor = if status == FuelStatus::Critical { 3 } else { 2 };
            let suggested = nice_round_up(consumed.max(1).saturating_mul(factor))
                .min(MAX_SUGGESTED_FUEL)
                .max(budget);
            let causes = likely_causes(consumed, code, language, imports);
            let raise = if suggested > budget {
                analysis.suggested_fuel_budget = Some(suggested);
                say!(
                    "recommendation.raise",
                    suggested = suggested,
                    fuel = fmt_fuel(suggested)
                )
            } else {
                words::text("recommendation.split").to_owned()
            };
            let id = if status == FuelStatus::Critical {
                "recommendation.critical"
            } else {
                "recommendation.warning"
            };
            analysis.recommendation = Some(say!(
                id,
                pct = pct,
                budget = fmt_fuel(budget),
                raise = raise
            ));
            analysis.likely_causes = causes;
        }
    }
    analysis
}

/// What in `code` plausibly consumed `consumed` fuel, most significant first.
pub(crate) fn likely_causes(
    consumed: u64,
    code: &str,
    language: Language,
    imports: &ImportFuelTable,
) -> Vec<String> {
    let facts = CodeFacts::new(code, language);
    let mut causes = import_causes(&facts, consumed, imports);
    causes.extend(loop_causes(&facts));
    for (name, line) in facts.recursion.iter().take(2) {
        causes.push(say!("cause.recursion", name = name, line = line));
    }
    for (what, line, bytes) in facts.large_allocations().into_iter().take(2) {
        causes.push(say!(
            "cause.large_data",
            what = what,
            line = line,
            bytes = fmt_bytes(bytes)
        ));
    }
    if causes.is_empty() {
        causes.push(words::text("cause.computation").to_owned());
    }
    causes.truncate(8);
    causes
}

/// First imports: the measured heavy ones with their share of this run, then third-party
/// ones nobody measured.
fn import_causes(facts: &CodeFacts<'_>, consumed: u64, imports: &ImportFuelTable) -> Vec<String> {
    let mut causes = Vec::new();
    let mut measured = facts.measured_imports(imports);
    measured.sort_by_key(|m| std::cmp::Reverse(m.2.fuel));
    for (_, name, cost) in measured
        .iter()
        .filter(|m| m.2.fuel >= HEAVY_IMPORT_FUEL.max(consumed / 50))
        .take(4)
    {
        let share = if consumed > 0 {
            let pct = (cost.fuel as f64 / consumed as f64 * 100.0).min(100.0);
            say!("cause.share", pct = format!("{pct:.0}"))
        } else {
            String::new()
        };
        causes.push(say!(
            "cause.import",
            name = name,
            fuel = fmt_fuel(cost.fuel),
            share = share
        ));
    }
    for import in facts.unmeasured_imports(imports).into_iter().take(3) {
        causes.push(say!("cause.unmeasured_import", module = import.module));
    }
    causes
}

/// Loops: one that never ends, the deepest nesting, then the biggest top-level loops.
fn loop_causes(facts: &CodeFacts<'_>) -> Vec<String> {
    let mut causes = Vec::new();
    let mut loops: Vec<_> = facts.loops.iter().collect();
    loops.sort_by(|a, b| {
        (b.unknown_levels, b.total_known as u64).cmp(&(a.unknown_levels, a.total_known as u64))
    });
    for l in loops.iter().filter(|l| l.endless).take(1) {
        causes.push(say!("cause.endless_loop", header = l.header, line = l.line));
    }
    let deepest = facts.loops.iter().map(|l| l.depth).max().unwrap_or(0);
    if deepest >= 2
        && let Some(l) = facts.loops.iter().find(|l| l.depth == deepest)
    {
        causes.push(say!("cause.nested_loops", depth = deepest, line = l.line));
    }
    for l in loops.iter().filter(|l| !l.endless && l.depth == 1).take(2) {
        let size = if l.unknown_levels == 0 {
            say!("cause.known_size", count = fmt_fuel(l.total_known as u64))
        } else {
            words::text("cause.unknown_size").to_owned()
        };
        causes.push(say!(
            "cause.loop",
            header = super::clip(&l.header, 60),
            line = l.line,
            size = size
        ));
    }
    causes
}
