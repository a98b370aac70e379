//! Where a snippet's work goes: loops with their estimated fuel, endless loops, recursion,
//! large constant allocations (memory) and sleeps (wall time, no fuel). What it says lives in
//! `words/analysis.toml`.

use sandbox_protocol::Language;

use super::super::scan::{self, LoopInfo};
use super::super::{MAX_SUGGESTED_FUEL, clip, fmt_bytes, fmt_fuel};
use super::facts::{CodeFacts, fmt_count, saturate};
use super::findings::Analysis;
use crate::words::{self, say};

/// Fuel per loop iteration: (low, expected, high). Python measured 5.1×10^3 for `x += i`
/// over `range(10**6)`; QuickJS 850 for the same loop. The range covers heavier bodies.
const ITERATION_FUEL_PYTHON: (f64, f64, f64) = (2_000.0, 5_000.0, 20_000.0);
const ITERATION_FUEL_JS: (f64, f64, f64) = (300.0, 900.0, 5_000.0);

/// Iterations assumed for a loop over data of unknown size: (low, expected, high). The first
/// unknown level is the data (rows, lines, files); loops nested in it usually walk something
/// small (the cells of a row), hence the smaller numbers for the inner levels.
const UNKNOWN_ITERATIONS: (f64, f64, f64) = (10.0, 1_000.0, 100_000.0);
const UNKNOWN_INNER_ITERATIONS: (f64, f64, f64) = (3.0, 30.0, 1_000.0);

/// Reports loops (at most 500), recursion, large data and sleeps, with their fuel, memory and
/// wall-time contributions.
pub(super) fn loop_findings(facts: &CodeFacts<'_>, out: &mut Analysis, budget: u64) {
    let mut deepest = 0;
    for l in facts.loops.iter().take(500) {
        deepest = deepest.max(l.depth);
        if l.endless {
            endless_loop(l, budget, out);
        } else {
            bounded_loop(facts.language(), l, budget, out);
        }
    }
    if deepest >= 3 {
        out.suggest(words::text("deep_loops.suggestion"));
    }
    recursion_findings(facts, out);
    for (what, line, bytes) in facts.large_allocations().into_iter().take(10) {
        out.find(
            "large_data",
            Some(line),
            say!("large_data.finding", what = what, bytes = fmt_bytes(bytes)),
        );
        out.memory_need = out.memory_need.saturating_add(bytes);
    }
    sleep_findings(facts, out);
}

/// A loop without an exit: it takes the whole budget and blocks the code.
fn endless_loop(l: &LoopInfo, budget: u64, out: &mut Analysis) {
    out.find(
        "infinite_loop_risk",
        Some(l.line),
        say!("endless_loop.finding", header = l.header, line = l.line),
    );
    out.block(say!(
        "endless_loop.warning",
        header = l.header,
        line = l.line
    ));
    out.fuel.push((
        say!("endless_loop.fuel", line = l.line),
        budget,
        budget,
        budget,
    ));
}

/// A loop that ends: its fuel range from its known bounds and assumptions for unknown ones.
fn bounded_loop(language: Language, l: &LoopInfo, budget: u64, out: &mut Analysis) {
    let (low, expected, high) = loop_fuel(language, l);
    let size = match l.bound {
        Some(b) if l.unknown_levels == 0 => {
            say!("loop.known_size", count = fmt_count(l.total_known.max(b)))
        }
        Some(_) | None if l.unknown_levels > 0 => words::text("loop.unknown_size").to_owned(),
        _ => String::new(),
    };
    out.find(
        "loops",
        Some(l.line),
        format!("`{}` ({size})", clip(&l.header, 80)),
    );
    if l.depth >= 2 {
        out.find(
            "nested_loops",
            Some(l.line),
            say!("loop.nested", line = l.line, depth = l.depth),
        );
    }
    out.fuel
        .push((say!("loop.fuel", line = l.line), low, expected, high));
    if l.unknown_levels == 0 && expected as f64 > MAX_SUGGESTED_FUEL as f64 {
        out.block(say!(
            "loop.too_big",
            line = l.line,
            count = fmt_count(l.total_known),
            fuel = fmt_fuel(expected),
            max = fmt_fuel(MAX_SUGGESTED_FUEL)
        ));
    } else if l.unknown_levels == 0 && expected > budget / 2 {
        out.suggest(say!(
            "loop.big",
            line = l.line,
            count = fmt_count(l.total_known),
            fuel = fmt_fuel(expected)
        ));
    }
}

/// (low, expected, high) fuel of all iterations of a loop's body.
fn loop_fuel(language: Language, l: &LoopInfo) -> (u64, u64, u64) {
    let (il, ie, ih) = match language {
        Language::Python => ITERATION_FUEL_PYTHON,
        Language::JavaScript => ITERATION_FUEL_JS,
    };
    let (ul, ue, uh) = UNKNOWN_ITERATIONS;
    let (nl, ne, nh) = UNKNOWN_INNER_ITERATIONS;
    let inner = l.unknown_levels.saturating_sub(1).min(64) as i32;
    let iterations = |first: f64, nested: f64| {
        if l.unknown_levels == 0 {
            l.total_known
        } else {
            l.total_known * first * nested.powi(inner)
        }
    };
    (
        saturate(iterations(ul, nl) * il),
        saturate(iterations(ue, ne) * ie),
        saturate((iterations(uh, nh) * ih).min(1e16)),
    )
}

/// Functions that call themselves overflow the fixed stack on deep inputs.
fn recursion_findings(facts: &CodeFacts<'_>, out: &mut Analysis) {
    for (name, line) in facts.recursion.iter().take(10) {
        out.find(
            "recursion",
            Some(*line),
            say!("recursion.finding", name = name),
        );
    }
    if !facts.recursion.is_empty() {
        let names: Vec<&str> = facts
            .recursion
            .iter()
            .map(|(n, _)| n.as_str())
            .take(3)
            .collect();
        out.suggest(say!("recursion.suggestion", names = names.join(", ")));
    }
}

/// Sleeps take wall time, not fuel: their constant durations add to the timeout.
fn sleep_findings(facts: &CodeFacts<'_>, out: &mut Analysis) {
    let src = &facts.src;
    for (callee, _, open) in &facts.calls {
        let seconds_per_unit = match (facts.language(), callee.as_str()) {
            (Language::Python, "time.sleep" | "sleep" | "asyncio.sleep") => 1.0,
            (Language::JavaScript, "os.sleep" | "setTimeout" | "os.setTimeout") => 0.001,
            _ => continue,
        };
        let close = src.partner[*open];
        if close == scan::NONE {
            continue;
        }
        let depth = src.tokens[*open].depth + 1;
        let args: Vec<usize> = (*open + 1..close)
            .filter(|&k| src.is(k, ",") && src.tokens[k].depth == depth)
            .collect();
        // setTimeout(fn, ms): the delay is the second argument.
        let (from, to) = if callee.ends_with("setTimeout") {
            match args.first() {
                Some(&comma) => (comma + 1, args.get(1).copied().unwrap_or(close)),
                None => continue,
            }
        } else {
            (*open + 1, args.first().copied().unwrap_or(close))
        };
        if let Some(v) = scan::const_value(src, from, to) {
            out.sleep_seconds += v.max(0.0) * seconds_per_unit;
            out.find(
                "sleep",
                Some(src.tokens[*open].line),
                say!(
                    "sleep.finding",
                    callee = callee,
                    seconds = format!("{:.1}", v.max(0.0) * seconds_per_unit)
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn sleep_durations_table() {
        let cases: [(Language, &str, f64); 5] = [
            (Language::Python, "time.sleep(2.5)", 2.5),
            (
                Language::Python,
                "import asyncio\nawait asyncio.sleep(1)\nsleep(n)",
                1.0,
            ),
            (Language::JavaScript, "os.sleep(1500)", 1.5),
            (
                Language::JavaScript,
                "setTimeout(() => 1, 250); os.setTimeout(f, 250)",
                0.5,
            ),
            (Language::JavaScript, "setTimeout(f)", 0.0),
        ];
        for (language, code, seconds) in cases {
            let facts = CodeFacts::new(code, language);
            let mut out = Analysis::default();
            sleep_findings(&facts, &mut out);
            assert_eq!(out.sleep_seconds, seconds, "{code}");
        }
    }

    #[test]
    fn loop_fuel_grows_with_unknown_levels() {
        let facts = CodeFacts::new(
            "for r in rows:\n    for c in r:\n        pass\nfor i in range(100):\n    pass",
            Language::Python,
        );
        let fuel: Vec<(u64, u64, u64)> = facts
            .loops
            .iter()
            .map(|l| loop_fuel(Language::Python, l))
            .collect();
        assert_eq!(fuel[0], (20_000, 5_000_000, 2_000_000_000));
        assert_eq!(fuel[1], (60_000, 150_000_000, 2_000_000_000_000));
        assert_eq!(fuel[2], (200_000, 500_000, 2_000_000));
    }
}
