//! `sandbox-bench`: end-to-end latency of the real server over MCP stdio, for each runtime.
//! Targets: warm execute_code p50 ≤ 5 ms (Python, both runtimes) and ≤ 2 ms (JavaScript); first
//! call of a new session ≤ 150 ms; `import pandas` in a new scientific session ≤ 2 s.
//!
//!   cargo run --release -p sandbox-tests --bin sandbox-bench [-- [--check] [ITERATIONS]]
//!
//! With `--check` the run also compares every p50 with the reference numbers recorded in
//! README.md (the table between the `sandbox-bench reference` markers) and exits with status 1
//! when one is more than [`SLOWDOWN_LIMIT`] times worse: a developer's early warning that a
//! change made things slower. Run it on a quiet machine. It never runs under CI (`CI` set):
//! shared runners' timings say nothing about a change, so there it only prints why it skipped.

use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use sandbox_tests::Server;
use serde_json::{Value, json};

/// The README, whose benchmark table holds the reference numbers.
const README: &str = include_str!("../../../README.md");
/// The lines around the reference table in the README.
const TABLE_BEGIN: &str = "<!-- sandbox-bench reference: begin -->";
const TABLE_END: &str = "<!-- sandbox-bench reference: end -->";
/// How much worse than its reference a p50 may be before `--check` fails. Generous, because
/// machines differ; what it catches is a change that makes a path several times slower.
const SLOWDOWN_LIMIT: f64 = 3.0;

/// What is measured of each runtime: its name in the figures, the arguments that create a
/// session on it, a trivial cell, and the warm-call target (ms).
const RUNTIMES: [(&str, &str, &str, f64); 3] = [
    (
        "python",
        r#"{"language": "python", "runtime": "python"}"#,
        "x = 1\nx + 1",
        5.0,
    ),
    (
        "python-scientific",
        r#"{"language": "python", "runtime": "python-scientific"}"#,
        "x = 1\nx + 1",
        5.0,
    ),
    (
        "javascript",
        r#"{"language": "javascript"}"#,
        "var x = 1; x + 1",
        2.0,
    ),
];

/// A new session on `create` (the runtime's `create_session` arguments) and the time of its
/// first call of `code`: worker spawn, interpreter start, first execution.
async fn first_call(server: &Server, create: &Value, id: &str, code: &str) -> Result<Duration> {
    let mut args = create.clone();
    args["session_id"] = json!(id);
    let created = server.call("create_session", args).await?;
    ensure!(!created.is_error, "{created:?}");
    let language = create["language"].as_str().context("a language")?;
    let reply = server
        .exec(language, code, json!({ "session_id": id }))
        .await?;
    ensure!(!reply.is_error, "{reply:?}");
    server
        .call("destroy_session", json!({ "session_id": id }))
        .await?;
    Ok(reply.elapsed)
}

/// One measured figure: its label (as in the README table) and its p50 in milliseconds.
#[derive(Debug, Clone, PartialEq)]
struct Figure {
    label: String,
    p50_ms: f64,
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1000.0
}

fn report(label: &str, mut samples: Vec<Duration>, target_ms: f64) -> Figure {
    samples.sort();
    let (p50, p95) = (percentile(&samples, 0.5), percentile(&samples, 0.95));
    let verdict = if p50 <= target_ms { "meets" } else { "MISSES" };
    println!(
        "{label:<46} n={:<4} p50 {p50:>8.2} ms   p95 {p95:>8.2} ms   max {:>8.2} ms   target p50 <= {target_ms} ms: {verdict}",
        samples.len(),
        percentile(&samples, 1.0)
    );
    Figure {
        label: label.to_owned(),
        p50_ms: p50,
    }
}

/// The reference p50s of the README's table: rows `| label | p50 in ms |` between
/// [`TABLE_BEGIN`] and [`TABLE_END`] (the header and separator rows are skipped).
///
/// # Errors
/// When the markers are missing or a row does not parse: a broken table must not pass.
fn references(readme: &str) -> Result<Vec<Figure>> {
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
fn regressions(measured: &[Figure], reference: &[Figure]) -> Result<Vec<String>> {
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
fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false")
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<()> {
    let mut check = false;
    let mut iterations = 300usize;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--check" => check = true,
            other => {
                iterations = other.parse().with_context(|| {
                    format!("usage: sandbox-bench [--check] [ITERATIONS], not {other:?}")
                })?;
            }
        }
    }
    let reference = if check {
        if under_ci() {
            println!(
                "sandbox-bench --check: skipped under CI (CI is set); shared runners' timings are not comparable with the README's reference numbers"
            );
            return Ok(());
        }
        Some(references(README)?)
    } else {
        None
    };

    let server = Server::start().await?;
    println!("sandbox-bench: end-to-end over MCP stdio (rmcp client -> sandbox-mcp -> worker)");
    let mut measured = Vec::new();
    for (name, create, code, warm_target) in RUNTIMES {
        let create: Value = serde_json::from_str(create)?;
        let mut first = Vec::new();
        for i in 0..10 {
            first.push(first_call(&server, &create, &format!("bench-{name}-{i}"), code).await?);
        }
        measured.push(report(
            &format!("{name}: new session, first call"),
            first,
            150.0,
        ));

        let session = format!("bench-{name}-warm");
        let mut args = create.clone();
        args["session_id"] = json!(session);
        server.call("create_session", args).await?;
        let language = create["language"].as_str().context("a language")?;
        let session = json!({ "session_id": session });
        for _ in 0..20 {
            server.exec(language, code, session.clone()).await?;
        }
        let mut warm = Vec::with_capacity(iterations);
        for _ in 0..iterations {
            let reply = server.exec(language, code, session.clone()).await?;
            ensure!(!reply.is_error, "{reply:?}");
            warm.push(reply.elapsed);
        }
        measured.push(report(
            &format!("{name}: warm execute_code"),
            warm,
            warm_target,
        ));
    }
    // The first data-science call a model makes: pandas imported in a new scientific session.
    let scientific: Value = serde_json::from_str(RUNTIMES[1].1)?;
    let mut pandas = Vec::new();
    for i in 0..5 {
        let id = format!("bench-pandas-{i}");
        pandas.push(first_call(&server, &scientific, &id, "import pandas").await?);
    }
    measured.push(report(
        "python-scientific: new session, import pandas",
        pandas,
        2000.0,
    ));
    server.stop().await?;

    if let Some(reference) = reference {
        let worse = regressions(&measured, &reference)?;
        if !worse.is_empty() {
            eprintln!("sandbox-bench --check: FAILED, slower than the README's reference numbers:");
            for line in &worse {
                eprintln!("  {line}");
            }
            eprintln!(
                "(measured on a quiet machine? then this change made these paths slower; if the machine is just slower, re-measure and update the table in README.md)"
            );
            std::process::exit(1);
        }
        println!(
            "sandbox-bench --check: ok, every p50 within {SLOWDOWN_LIMIT}x of the README's reference numbers"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(label: &str, p50_ms: f64) -> Figure {
        Figure {
            label: label.to_owned(),
            p50_ms,
        }
    }

    #[test]
    fn the_readme_table_names_every_figure_the_benchmark_measures() {
        let reference = references(README).unwrap();
        let labels: Vec<&str> = reference.iter().map(|f| f.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "python: new session, first call",
                "python: warm execute_code",
                "python-scientific: new session, first call",
                "python-scientific: warm execute_code",
                "javascript: new session, first call",
                "javascript: warm execute_code",
                "python-scientific: new session, import pandas",
            ]
        );
        assert!(reference.iter().all(|f| f.p50_ms > 0.0));
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
