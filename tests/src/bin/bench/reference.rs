//! `--check`: the README's reference table (p50s in milliseconds, between the
//! `sandbox-bench reference` markers) and the comparison of a run's figures with it.

use anyhow::{Context, Result, bail, ensure};

use crate::table::Row;

/// The README, whose benchmark table holds the reference numbers.
pub const README: &str = include_str!("../../../../README.md");
/// The lines around the reference table in the README.
const TABLE_BEGIN: &str = "<!-- sandbox-bench reference: begin -->";
const TABLE_END: &str = "<!-- sandbox-bench reference: end -->";
/// How much worse than its reference a p50 may be before `--check` fails. Generous, because
/// machines differ; what it catches is a change that makes a path several times slower.
pub const SLOWDOWN_LIMIT: f64 = 3.0;

/// The figures `--check` compares, in the README table's order: the latencies whose labels do
/// not depend on data files (the heaviest default-Python imports are named by
/// `import-fuel.json`, so they are printed but not checked).
pub const CHECKED_FIGURES: [&str; 8] = [
    "python: new session, first call",
    "python: new session, burst without pauses",
    "python: warm execute_code",
    "javascript: new session, first call",
    "javascript: new session, burst without pauses",
    "javascript: warm execute_code",
    "python: new session, import numpy and pandas",
    "python: new session, import pandas",
];

/// One measured figure: its label (as in the README table) and its p50 in milliseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub label: String,
    pub p50_ms: f64,
}

/// Our figures among `rows` that `--check` compares ([`CHECKED_FIGURES`]); one that failed to
/// be measured is left out, so the comparison reports it as no longer measured.
pub fn checked_figures(rows: &[Row]) -> Vec<Figure> {
    rows.iter()
        .filter(|row| CHECKED_FIGURES.contains(&row.label.as_str()))
        .filter_map(|row| {
            Some(Figure {
                label: row.label.clone(),
                p50_ms: row.ours.p50_ms()?,
            })
        })
        .collect()
}

/// The reference p50s of the README's table: rows `| label | p50 in ms |` between
/// [`TABLE_BEGIN`] and [`TABLE_END`] (the header and separator rows are skipped).
///
/// # Errors
/// When the markers are missing or a row does not parse: a broken table must not pass.
pub fn references(readme: &str) -> Result<Vec<Figure>> {
    let start = readme
        .find(TABLE_BEGIN)
        .with_context(|| format!("README.md has no {TABLE_BEGIN:?}"))?
        + TABLE_BEGIN.len();
    let length = readme[start..]
        .find(TABLE_END)
        .with_context(|| format!("README.md has no {TABLE_END:?} after the table"))?;
    let mut figures = Vec::new();
    for line in readme[start..start + length].lines().map(str::trim) {
        if line.is_empty() {
            continue;
        }
        let cells: Vec<&str> = line
            .strip_prefix('|')
            .and_then(|l| l.strip_suffix('|'))
            .with_context(|| format!("not a table row: {line:?}"))?
            .split('|')
            .map(str::trim)
            .collect();
        ensure!(cells.len() == 2, "a row needs 2 cells: {line:?}");
        let is_separator = cells.iter().all(|c| c.chars().all(|ch| "-: ".contains(ch)));
        if is_separator || cells[1].starts_with("p50") {
            continue;
        }
        let p50_ms: f64 = cells[1]
            .parse()
            .with_context(|| format!("not a number of milliseconds: {line:?}"))?;
        ensure!(p50_ms > 0.0, "a reference must be positive: {line:?}");
        figures.push(Figure {
            label: cells[0].to_owned(),
            p50_ms,
        });
    }
    ensure!(!figures.is_empty(), "the reference table is empty");
    Ok(figures)
}

/// The figures more than [`SLOWDOWN_LIMIT`] times worse than their reference, as messages.
///
/// # Errors
/// When a measured figure has no reference or a reference was not measured: the table and the
/// benchmark must name the same figures.
pub fn regressions(measured: &[Figure], reference: &[Figure]) -> Result<Vec<String>> {
    let mut worse = Vec::new();
    for figure in measured {
        let Some(expected) = reference.iter().find(|r| r.label == figure.label) else {
            bail!(
                "README.md has no reference for {:?}: add it to the table",
                figure.label
            );
        };
        let ratio = figure.p50_ms / expected.p50_ms;
        if ratio > SLOWDOWN_LIMIT {
            worse.push(format!(
                "{}: p50 {:.2} ms is {ratio:.1}x the reference {:.2} ms (limit {SLOWDOWN_LIMIT}x)",
                figure.label, figure.p50_ms, expected.p50_ms
            ));
        }
    }
    if let Some(missing) = reference
        .iter()
        .find(|r| !measured.iter().any(|m| m.label == r.label))
    {
        bail!("the benchmark no longer measures {:?}", missing.label);
    }
    Ok(worse)
}

/// Whether this runs under CI (`CI` set to anything but "" or "false").
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::{Target, Value};

    fn figure(label: &str, p50_ms: f64) -> Figure {
        Figure {
            label: label.to_owned(),
            p50_ms,
        }
    }

    #[test]
    fn the_readme_table_names_every_figure_the_benchmark_checks() {
        let reference = references(README).unwrap();
        let labels: Vec<&str> = reference.iter().map(|f| f.label.as_str()).collect();
        assert_eq!(labels, CHECKED_FIGURES);
        assert!(reference.iter().all(|f| f.p50_ms > 0.0));
    }

    #[test]
    fn only_checked_latencies_become_figures() {
        let latency = |p50_ms| Value::Latency {
            p50_ms,
            p95_ms: p50_ms,
            count: 1,
        };
        let rows = [
            Row::new(CHECKED_FIGURES[0], Target::None, latency(9.0)),
            Row::new(
                "python: new session, import sympy",
                Target::None,
                latency(2000.0),
            ),
            Row::new(
                CHECKED_FIGURES[2],
                Target::None,
                Value::Missing("failed: x".into()),
            ),
            Row::new(
                CHECKED_FIGURES[7],
                Target::None,
                Value::Import {
                    p50_ms: 800.0,
                    fuel: 5,
                },
            ),
        ];
        assert_eq!(
            checked_figures(&rows),
            [
                figure(CHECKED_FIGURES[0], 9.0),
                figure(CHECKED_FIGURES[7], 800.0)
            ]
        );
    }

    #[test]
    fn tables_are_parsed_strictly() {
        let table = |rows: &str| format!("intro\n{TABLE_BEGIN}\n{rows}\n{TABLE_END}\nafter");
        let parsed = references(&table(
            "| figure | p50 (ms) |\n|---|---:|\n| a: warm | 0.5 |\n| b: first | 62 |",
        ))
        .unwrap();
        assert_eq!(parsed, [figure("a: warm", 0.5), figure("b: first", 62.0)]);
        assert!(references("no table here").is_err());
        assert!(
            references(&format!("{TABLE_BEGIN}\n| a | 1 |\n")).is_err(),
            "no end"
        );
        assert!(references(&table("| a | fast |")).is_err());
        assert!(references(&table("| a | 1 | 2 |")).is_err());
        assert!(references(&table("| a | 0 |")).is_err());
        assert!(references(&table("a | 1")).is_err());
        assert!(references(&table("| figure | p50 (ms) |\n|---|---:|")).is_err());
    }

    #[test]
    fn only_more_than_three_times_worse_is_a_regression() {
        let reference = [figure("warm", 0.5), figure("first", 60.0)];
        let ok = [figure("warm", 1.5), figure("first", 20.0)];
        assert!(regressions(&ok, &reference).unwrap().is_empty());
        let slow = [figure("warm", 1.51), figure("first", 180.0)];
        let worse = regressions(&slow, &reference).unwrap();
        assert_eq!(worse.len(), 1, "{worse:?}");
        assert!(worse[0].starts_with("warm: p50 1.51 ms is 3.0x the reference 0.50 ms"));
        assert!(regressions(&[figure("new", 1.0)], &reference).is_err());
        assert!(regressions(&[figure("warm", 1.0)], &reference).is_err());
    }
}
