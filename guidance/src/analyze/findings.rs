//! The accumulator the analysis passes write into ([`Analysis`]): patterns in order of
//! discovery, bounded lists of findings, warnings and suggestions, and the fuel contributions
//! that become the estimate. The estimate's words live in `words/analysis.toml`.

use std::collections::HashSet;

use sandbox_protocol::Language;

use super::super::fmt_fuel;
use super::HEAVY_IMPORT_FUEL;
use super::{Finding, FuelEstimate, FuelItem, ImportInfo};
use crate::words::{self, say};

/// Fuel a trivial call costs (measured: `pass` in Python, an expression in QuickJS).
const BASE_FUEL_PYTHON: u64 = 460_000;
const BASE_FUEL_JS: u64 = 100_000;

/// Modules that share dependencies cost less together than the sum of their single imports:
/// measured on five combinations, the extra over the most expensive one was 0–39 % (median
/// 12 %) of the rest. A quarter keeps the expectation on the safe side.
const SHARED_IMPORT_FACTOR: f64 = 0.25;

/// Accumulates findings while the passes run.
#[derive(Default)]
pub(super) struct Analysis {
    /// The patterns found so far (for "already reported").
    pub(super) patterns: HashSet<&'static str>,
    /// The same patterns in the order they were first found (the order clients see).
    pub(super) order: Vec<String>,
    pub(super) findings: Vec<Finding>,
    pub(super) imports: Vec<ImportInfo>,
    pub(super) warnings: Vec<String>,
    pub(super) suggestions: Vec<String>,
    /// (source, low, expected, high) fuel contributions.
    pub(super) fuel: Vec<(String, u64, u64, u64)>,
    /// Measured first-import costs (name, fuel); they overlap, so they are estimated together.
    pub(super) import_costs: Vec<(String, u64)>,
    /// Bytes of large data the code builds.
    pub(super) memory_need: u64,
    /// Wall time of the sleeps with a constant duration.
    pub(super) sleep_seconds: f64,
    /// The code will fail as written (unavailable module, path outside, endless loop, ...):
    /// no `execute_code` is proposed until it is fixed.
    pub(super) blocking: bool,
}

impl Analysis {
    /// A finding of `pattern`, at `line` when it is at one place.
    pub(super) fn find(
        &mut self,
        pattern: &'static str,
        line: Option<u32>,
        detail: impl Into<String>,
    ) {
        if self.patterns.insert(pattern) {
            self.order.push(pattern.to_owned());
        }
        // Keep the output bounded on generated code with thousands of loops.
        if self.findings.len() < 40 {
            self.findings.push(Finding {
                pattern: pattern.to_owned(),
                line,
                detail: detail.into(),
            });
        }
    }

    /// A warning: something that will fail or surprise in this sandbox.
    pub(super) fn warn(&mut self, text: impl Into<String>) {
        if self.warnings.len() < 30 {
            self.warnings.push(text.into());
        }
    }

    /// A warning about something that makes the code fail as written.
    pub(super) fn block(&mut self, text: impl Into<String>) {
        self.blocking = true;
        self.warn(text);
    }

    /// A concrete change or step.
    pub(super) fn suggest(&mut self, text: impl Into<String>) {
        if self.suggestions.len() < 20 {
            self.suggestions.push(text.into());
        }
    }

    /// The fuel estimate: the base cost of a call, the imports together, and every other
    /// contribution added up, with the largest items named.
    pub(super) fn estimate(&self, language: Language, budget: u64) -> FuelEstimate {
        let base = match language {
            Language::Python => BASE_FUEL_PYTHON,
            Language::JavaScript => BASE_FUEL_JS,
        };
        let mut items: Vec<FuelItem> = Vec::new();
        let (mut low, mut expected, mut high) = (base, base, base);

        // Imports overlap: between the most expensive one and the sum.
        if !self.import_costs.is_empty() {
            let sum: u64 = self.import_costs.iter().map(|(_, f)| *f).sum();
            let max = self.import_costs.iter().map(|(_, f)| *f).max().unwrap_or(0);
            let shared = max + ((sum - max) as f64 * SHARED_IMPORT_FACTOR) as u64;
            low += max;
            expected += shared;
            high = high.saturating_add(sum);
            let names: Vec<String> = self
                .import_costs
                .iter()
                .filter(|(_, f)| *f >= HEAVY_IMPORT_FUEL)
                .map(|(n, f)| format!("{n} {}", fmt_fuel(*f)))
                .collect();
            let label = if names.is_empty() {
                words::text("estimate.light_imports").to_owned()
            } else {
                say!("estimate.imports", names = names.join(", "))
            };
            items.push(FuelItem {
                source: label,
                fuel: shared,
            });
        }
        for (source, l, e, h) in &self.fuel {
            low = low.saturating_add(*l);
            expected = expected.saturating_add(*e);
            high = high.saturating_add(*h);
            items.push(FuelItem {
                source: source.clone(),
                fuel: *e,
            });
        }
        items.sort_by_key(|i| std::cmp::Reverse(i.fuel));
        items.truncate(8);
        let shown: Vec<String> = items
            .iter()
            .take(4)
            .map(|i| format!("{} ~{}", i.source, fmt_fuel(i.fuel)))
            .collect();
        let share = expected as f64 / budget as f64 * 100.0;
        let mut summary = say!(
            "estimate.summary",
            expected = fmt_fuel(expected),
            low = fmt_fuel(low),
            high = fmt_fuel(high),
            share = format!("{share:.0}"),
            budget = fmt_fuel(budget)
        );
        if !shown.is_empty() {
            summary = format!("{summary}: {}", shown.join("; "));
        }
        FuelEstimate {
            low,
            expected,
            high,
            summary,
            breakdown: items,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_keep_their_order_and_lists_stay_bounded() {
        let mut a = Analysis::default();
        for i in 0..50 {
            a.find("loops", Some(i), "x");
            a.block(format!("w{i}"));
            a.suggest(format!("s{i}"));
        }
        a.find("file_io", None, "y");
        a.find("loops", None, "z");
        assert_eq!(a.order, ["loops", "file_io"]);
        assert_eq!(
            (a.findings.len(), a.warnings.len(), a.suggestions.len()),
            (40, 30, 20)
        );
        assert!(a.blocking);
    }

    #[test]
    fn estimate_overlaps_imports_and_adds_the_rest() {
        let mut a = Analysis::default();
        a.import_costs = vec![
            ("asyncio".into(), 1_000_000_000),
            ("json".into(), 200_000_000),
        ];
        a.fuel.push(("loop at line 3".into(), 10, 20, 30));
        let e = a.estimate(Language::Python, 10_000_000_000);
        assert_eq!(e.low, 460_000 + 1_000_000_000 + 10);
        assert_eq!(e.expected, 460_000 + 1_050_000_000 + 20);
        assert_eq!(e.high, 460_000 + 1_200_000_000 + 30);
        assert_eq!(e.breakdown[0].source, "imports: asyncio 1B, json 200M");
        assert!(
            e.summary
                .starts_with("~1.05B fuel (1B–1.2B), 11% of a 10B budget: imports"),
            "{}",
            e.summary
        );
    }
}
