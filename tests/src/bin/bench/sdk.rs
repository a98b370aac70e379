//! The "official SDK" figures (issue 24): a server driven by the official MCP Python SDK, a
//! client that validates every result against the tool's outputSchema, as the Python and
//! TypeScript SDKs do. `runtimes/sdk-bench.py` measures (it installs the pinned SDK in a venv of
//! its own and prints JSON); this module runs it on our server or a peer's command line
//! (`--sdk-against`) and turns its report into rows: warm calls and ping with p50 and p90, what
//! a call costs above ping, the first call of a new session, a CPU-bound cell, and the sizes of
//! the trivial result and of the output schemas.
//!
//! Without Python 3 or the SDK (no venv module, no registry) the rows say `n/a` and why; the
//! rest of the benchmark is not affected.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::Value as Json;

use crate::suite::Plan;
use crate::table::{Row, Target, Value};

/// The driver, from the source tree this benchmark was built from.
const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../runtimes/sdk-bench.py");
/// The driver's exit status when the SDK cannot be had (no venv, no registry).
const SDK_UNAVAILABLE: i32 = 3;
/// How long one server's figures may take before the run is given up: the warm rounds, three
/// CPU-bound cells of about a second each and the first calls take a minute or two; a venv is
/// installed once.
const RUN_LIMIT: Duration = Duration::from_secs(15 * 60);
/// Samples of a first call: new sessions, or on a server without sessions fresh servers (each
/// started anew, which can take seconds).
pub const FIRST_CALLS: usize = 5;

/// The label prefix of every row of this section.
const PREFIX: &str = "official SDK";

/// One figure of the driver's report: its key there, its row's label, and its target.
struct Figure {
    key: &'static str,
    label: &'static str,
    target: Target,
}

/// The rows, in the table's order. `*_above_ping` are derived here from `*_warm` and `ping`.
const FIGURES: [Figure; 14] = [
    Figure {
        key: "ping",
        label: "MCP ping",
        target: Target::None,
    },
    Figure {
        key: "python_warm",
        label: "python: warm execute_code, print(sum(range(10)))",
        target: Target::None,
    },
    Figure {
        key: "python_above_ping",
        label: "python: warm execute_code above ping",
        target: Target::AtMostMs(1.0),
    },
    Figure {
        key: "python_warm_unvalidated",
        label: "python: the same with the SDK's output validation off",
        target: Target::None,
    },
    Figure {
        key: "javascript_warm",
        label: "javascript: warm execute_code, console.log(sum of 0..9)",
        target: Target::None,
    },
    Figure {
        key: "javascript_above_ping",
        label: "javascript: warm execute_code above ping",
        target: Target::AtMostMs(0.8),
    },
    Figure {
        key: "python_first_call",
        label: "python: new session, first call (without sessions: a fresh server's)",
        target: Target::None,
    },
    Figure {
        key: "javascript_first_call",
        label: "javascript: new session, first call (without sessions: a fresh server's)",
        target: Target::None,
    },
    Figure {
        key: "python_cpu_bound",
        label: "python: print(sum(i*i for i in range(3_000_000)))",
        target: Target::None,
    },
    Figure {
        key: "python_cpu_bound_native",
        label: "the same loop in native CPython (the bench's own python3, once per run)",
        target: Target::None,
    },
    Figure {
        key: "python_cpu_bound_over_native",
        label: "python: the CPU-bound cell over native CPython (best run over best run)",
        target: Target::AtMostTimesNative(6.0),
    },
    Figure {
        key: "python_structured_bytes",
        label: "structuredContent of the trivial Python success",
        target: Target::AtMostSize(400),
    },
    Figure {
        key: "code_tool_schema_bytes",
        label: "execute_code's outputSchema",
        target: Target::AtMostSize(3_000),
    },
    Figure {
        key: "all_schemas_bytes",
        label: "all output schemas together (tools/list)",
        target: Target::AtMostSize(10_000),
    },
];

/// The rows of the driver's `--scientific-starts` run (our server with its pool off): issue
/// 25's targets for a session started from the memory image.
const SCIENTIFIC_FIGURES: [Figure; 4] = [
    Figure {
        key: "scientific_first_call",
        label: "python, no pool: new session, first call",
        target: Target::AtMostMs(8.0),
    },
    Figure {
        key: "scientific_import_pandas",
        label: "python, no pool: then import pandas",
        target: Target::AtMostMs(15.0),
    },
    Figure {
        key: "scientific_created_by_call",
        label: "python, no pool: a session created by its first execute_code (one call)",
        target: Target::None,
    },
    Figure {
        key: "javascript_no_pool_first_call",
        label: "javascript, no pool: new session, first call",
        target: Target::AtMostMs(8.0),
    },
];

/// Samples of [`SCIENTIFIC_FIGURES`].
const SCIENTIFIC_STARTS: usize = 10;

/// What the driver said about one server.
#[derive(Debug)]
pub enum Report {
    /// Its figures: the SDK's name and version, the server's, and the figures by key.
    Measured {
        sdk: String,
        server: String,
        figures: serde_json::Map<String, Json>,
    },
    /// The section cannot be measured here, and why (`n/a`).
    Unavailable(String),
    /// The driver ran but the server could not be measured, and why.
    Failed(String),
}

/// Runs the driver on `command` (with `env` added to the server's environment) and reads its
/// report. Never an error: what goes wrong is the report's [`Report::Unavailable`] or
/// [`Report::Failed`].
pub async fn measure(command: &[String], env: &[(&str, &Path)], plan: &Plan) -> Report {
    let counts = [
        "--calls".to_owned(),
        plan.warm_calls.to_string(),
        "--first-calls".to_owned(),
        FIRST_CALLS.to_string(),
    ];
    run_driver(&counts, command, env).await
}

/// The CPU-bound cell's loop run natively by the driver's CPython (`--native-only`), once per
/// run: [`with_native`] puts it beside every server's figures, so that each column's ratio is
/// to the same native runs.
pub async fn measure_native() -> Report {
    run_driver(&["--native-only".to_owned()], &[], &[]).await
}

/// `report` with the native figure of `native` (from [`measure_native`]); a native run that
/// failed is the figure's failure, said where the figure is.
pub fn with_native(mut report: Report, native: &Report) -> Report {
    const KEY: &str = "python_cpu_bound_native";
    if let Report::Measured { figures, .. } = &mut report {
        let figure = match native {
            Report::Measured {
                figures: native, ..
            } => native.get(KEY).cloned(),
            Report::Unavailable(why) | Report::Failed(why) => {
                Some(serde_json::json!({ "failed": format!("the native run: {why}") }))
            }
        };
        if let Some(figure) = figure {
            figures.insert(KEY.to_owned(), figure);
        }
    }
    report
}

/// As [`measure`], the driver's `--scientific-starts` figures of our server (`command`), with
/// its worker pool off: new sessions start from the memory image or not at all.
pub async fn measure_scientific_starts(command: &[String], env: &[(&str, &Path)]) -> Report {
    let no_pool = Path::new("0");
    let mut env = env.to_vec();
    env.push(("SANDBOX_WORKER_POOL", no_pool));
    let args = [
        "--scientific-starts".to_owned(),
        SCIENTIFIC_STARTS.to_string(),
    ];
    run_driver(&args, command, &env).await
}

/// Runs the driver with `args` on `command` and reads its report.
async fn run_driver(args: &[String], command: &[String], env: &[(&str, &Path)]) -> Report {
    let mut driver = tokio::process::Command::new("python3");
    driver
        .arg(SCRIPT)
        .args(args)
        .arg("--")
        .args(command)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let output = match driver.spawn() {
        Ok(child) => tokio::time::timeout(RUN_LIMIT, child.wait_with_output()).await,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Report::Unavailable(
                "python3 not found: these rows need Python 3 to run the official MCP SDK".into(),
            );
        }
        Err(error) => return Report::Unavailable(format!("python3 {SCRIPT}: {error}")),
    };
    let output = match output {
        Ok(Ok(output)) => output,
        Ok(Err(error)) => return Report::Failed(format!("{SCRIPT}: {error}")),
        Err(_) => return Report::Failed(format!("{SCRIPT} took over {RUN_LIMIT:?}")),
    };
    // The driver's last line on stderr says what went wrong (a traceback ends with it too).
    let stderr = String::from_utf8_lossy(&output.stderr);
    let last_words = stderr
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| l.strip_prefix("sdk-bench: ").unwrap_or(l).to_owned());
    match (output.status.code(), last_words) {
        (Some(0), _) => match parse(&output.stdout) {
            Ok(report) => report,
            Err(error) => Report::Failed(format!("{error:#}")),
        },
        (Some(SDK_UNAVAILABLE), why) => {
            Report::Unavailable(why.unwrap_or_else(|| "the SDK cannot be had".into()))
        }
        (_, Some(why)) => Report::Failed(why),
        (_, None) => Report::Failed(format!("{SCRIPT}: {}", output.status)),
    }
}

/// The driver's JSON report.
///
/// # Errors
/// When it is not the JSON object the driver prints.
fn parse(stdout: &[u8]) -> Result<Report> {
    let report: Json = serde_json::from_slice(stdout).context("the driver's report")?;
    let text = |key: &str| {
        report[key]
            .as_str()
            .map(str::to_owned)
            .with_context(|| format!("the driver's report has no {key:?}"))
    };
    let Some(figures) = report["figures"].as_object() else {
        bail!("the driver's report has no figures");
    };
    Ok(Report::Measured {
        sdk: text("sdk")?,
        server: text("server")?,
        figures: figures.clone(),
    })
}

/// The label of a row of this section.
fn label(figure: &Figure) -> String {
    format!("{PREFIX}, {}", figure.label)
}

/// A figure of the report as a table value: samples become p50 and p90, sizes bytes (naming
/// another server's code tool, whose schema stands in for execute_code's), and what was not
/// measured says why.
fn value_of(figure: &Json) -> Value {
    if let Some(why) = figure["n/a"].as_str() {
        return Value::missing("n/a", why);
    }
    if let Some(why) = figure["failed"].as_str() {
        return Value::missing("failed", why);
    }
    if let Some(samples) = figure["samples_ms"].as_array() {
        let samples: Vec<Duration> = samples
            .iter()
            .filter_map(Json::as_f64)
            .map(|ms| Duration::from_secs_f64(ms / 1000.0))
            .collect();
        if samples.is_empty() {
            return Value::Missing("failed: no samples".into());
        }
        return Value::latency_p90(samples);
    }
    if let Some(bytes) = figure["bytes"].as_u64() {
        let of = figure["tool"]
            .as_str()
            .filter(|tool| *tool != "execute_code")
            .map(|tool| format!("{tool}'s"));
        return Value::Size { bytes, of };
    }
    Value::Missing(format!("failed: an unknown figure {figure}"))
}

/// `call` above `ping`: the difference of their p50s and p90s, or why it cannot be had.
fn above_ping(call: &Value, ping: &Value) -> Value {
    match (call, ping) {
        (
            Value::LatencyP90 {
                p50_ms: call_p50,
                p90_ms: call_p90,
                ..
            },
            Value::LatencyP90 {
                p50_ms: ping_p50,
                p90_ms: ping_p90,
                ..
            },
        ) => Value::AbovePing {
            p50_ms: call_p50 - ping_p50,
            p90_ms: call_p90 - ping_p90,
        },
        (Value::Missing(why), _) | (_, Value::Missing(why)) => Value::Missing(why.clone()),
        _ => Value::Missing("failed: not latencies".into()),
    }
}

/// `cell` as a multiple of the same loop run natively (`native`, whose report names the
/// CPython that ran it), or why it cannot be had: the best (fastest) run of each, since both
/// can only be slowed by the machine, and native runs here fall into two groups almost a
/// factor of two apart, so that a median says more about the machine's phase than about us.
fn over_native(cell: Option<&Json>, native: Option<&Json>) -> Value {
    let best = |figure: Option<&Json>| {
        let figure = figure?;
        let samples = figure["samples_ms"].as_array()?;
        samples
            .iter()
            .filter_map(Json::as_f64)
            .min_by(f64::total_cmp)
    };
    match (best(cell), best(native)) {
        (Some(cell_ms), Some(native_ms)) if native_ms > 0.0 => Value::TimesNative {
            times: cell_ms / native_ms,
            native_ms,
            python: native
                .and_then(|figure| figure["python"].as_str())
                .unwrap_or("?")
                .to_owned(),
        },
        _ => {
            let missing = |figure: Option<&Json>| match figure {
                Some(figure) => value_of(figure),
                None => Value::Missing("failed: not in the driver's report".into()),
            };
            match (missing(cell), missing(native)) {
                (Value::Missing(why), _) | (_, Value::Missing(why)) => Value::Missing(why),
                _ => Value::Missing("failed: not latencies".into()),
            }
        }
    }
}

/// The section's values by label, from one server's report (every row: what the report cannot
/// give says why).
pub fn values(report: &Report) -> Vec<(String, Value)> {
    values_of(report, &FIGURES)
}

/// The values of `figures` in one server's report.
fn values_of(report: &Report, figures_wanted: &[Figure]) -> Vec<(String, Value)> {
    let figures = match report {
        Report::Measured { figures, .. } => figures,
        Report::Unavailable(why) => return every_row(figures_wanted, "n/a", why),
        Report::Failed(why) => return every_row(figures_wanted, "failed", why),
    };
    let measured = |key: &str| {
        figures.get(key).map_or_else(
            || Value::Missing("failed: not in the driver's report".into()),
            value_of,
        )
    };
    figures_wanted
        .iter()
        .map(|figure| {
            let value = if let Some(lang) = figure.key.strip_suffix("_above_ping") {
                above_ping(&measured(&format!("{lang}_warm")), &measured("ping"))
            } else if let Some(cell) = figure.key.strip_suffix("_over_native") {
                let native = format!("{cell}_native");
                over_native(figures.get(cell), figures.get(&native))
            } else {
                measured(figure.key)
            };
            (label(figure), value)
        })
        .collect()
}

/// Every row not measured: the first says why, the others refer to it (the reason can be long,
/// and a column of copies of it makes the table unreadable).
fn every_row(figures: &[Figure], prefix: &str, why: &str) -> Vec<(String, Value)> {
    let first = Value::missing(prefix, why);
    let rest = Value::Missing(format!("{prefix}: as above"));
    figures
        .iter()
        .enumerate()
        .map(|(i, f)| (label(f), if i == 0 { first.clone() } else { rest.clone() }))
        .collect()
}

/// Our rows of the section, with their targets.
pub fn rows(report: &Report) -> Vec<Row> {
    rows_of(report, &FIGURES)
}

/// Our rows of [`measure_scientific_starts`]'s report, with their targets.
pub fn scientific_start_rows(report: &Report) -> Vec<Row> {
    rows_of(report, &SCIENTIFIC_FIGURES)
}

fn rows_of(report: &Report, figures: &[Figure]) -> Vec<Row> {
    values_of(report, figures)
        .into_iter()
        .zip(figures)
        .map(|((label, value), figure)| Row::new(label, figure.target, value))
        .collect()
}

/// A peer's values: a failure there is a figure it cannot give (`n/a`), not a failure of ours.
pub fn peer_values(report: &Report) -> Vec<(String, Value)> {
    values(report)
        .into_iter()
        .map(|(label, value)| match value {
            Value::Missing(why) if why.starts_with("failed: ") => {
                (label, Value::Missing(why.replacen("failed", "n/a", 1)))
            }
            value => (label, value),
        })
        .collect()
}

/// One line on stderr saying what was measured, through which SDK and tool.
pub fn describe(name: &str, report: &Report) {
    match report {
        Report::Measured {
            sdk,
            server,
            figures,
        } => {
            let tool = figures["code_tool_schema_bytes"]["tool"]
                .as_str()
                .unwrap_or("?");
            eprintln!("sandbox-bench: official SDK ({sdk}) on {name}: {server}, code tool {tool}");
        }
        Report::Unavailable(why) => eprintln!("sandbox-bench: official SDK on {name}: n/a: {why}"),
        Report::Failed(why) => eprintln!("sandbox-bench: official SDK on {name}: failed: {why}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(json: &str) -> Report {
        parse(json.as_bytes()).unwrap()
    }

    fn value(values: &[(String, Value)], key: &str) -> Value {
        let figure = FIGURES.iter().find(|f| f.key == key).unwrap();
        let label = label(figure);
        values.iter().find(|(l, _)| *l == label).unwrap().1.clone()
    }

    #[test]
    fn the_cpu_bound_cell_is_a_multiple_of_the_same_loop_run_natively() {
        let measured = report(
            r#"{"sdk": "mcp 2.3.0", "server": "x 1", "figures": {
                "python_cpu_bound": {"samples_ms": [1200.0, 900.0, 1000.0]},
                "python_cpu_bound_native": {"samples_ms": [350.0, 180.0, 200.0],
                                            "python": "3.13.0"}}}"#,
        );
        // Best over best: 900 / 180.
        let ratio = value(&values(&measured), "python_cpu_bound_over_native");
        assert_eq!(
            ratio,
            Value::TimesNative {
                times: 5.0,
                native_ms: 180.0,
                python: "3.13.0".into()
            }
        );
        assert_eq!(Target::AtMostTimesNative(6.0).meets(&ratio), Some(true));
        assert_eq!(Target::AtMostTimesNative(4.5).meets(&ratio), Some(false));
        let without_native = report(
            r#"{"sdk": "mcp 2.3.0", "server": "x 1", "figures": {
                "python_cpu_bound": {"samples_ms": [900.0]}}}"#,
        );
        assert!(value(&values(&without_native), "python_cpu_bound_over_native").failed());
        // The run's one native figure goes into each server's report.
        let native = report(
            r#"{"sdk": "none", "server": "native CPython", "figures": {
                "python_cpu_bound_native": {"samples_ms": [300.0], "python": "3.11.7"}}}"#,
        );
        let joined = with_native(without_native, &native);
        assert_eq!(
            value(&values(&joined), "python_cpu_bound_over_native"),
            Value::TimesNative {
                times: 3.0,
                native_ms: 300.0,
                python: "3.11.7".into()
            }
        );
        let lost = with_native(joined, &Report::Failed("no python3".into()));
        let lost = value(&values(&lost), "python_cpu_bound_over_native");
        assert!(
            lost.failed() && format!("{lost:?}").contains("no python3"),
            "{lost:?}"
        );
    }

    #[test]
    fn a_report_becomes_every_row_with_above_ping_derived() {
        let measured = report(
            r#"{"sdk": "mcp 2.3.0", "server": "x 1", "figures": {
                "ping": {"samples_ms": [1.0, 1.0, 2.0]},
                "python_warm": {"samples_ms": [2.5, 3.0, 4.0]},
                "javascript_warm": {"n/a": "its tool run_python does not run JavaScript"},
                "python_cpu_bound": {"failed": "RuntimeError: out_of_fuel"},
                "python_structured_bytes": {"bytes": 17},
                "code_tool_schema_bytes": {"bytes": 125, "tool": "run_python"},
                "all_schemas_bytes": {"bytes": 125}}}"#,
        );
        let values = values(&measured);
        assert_eq!(values.len(), FIGURES.len());
        assert!(values.iter().all(|(l, _)| l.starts_with("official SDK, ")));
        assert_eq!(
            value(&values, "python_above_ping"),
            Value::AbovePing {
                p50_ms: 2.0,
                p90_ms: 2.0
            }
        );
        assert_eq!(
            value(&values, "javascript_above_ping"),
            Value::Missing("n/a: its tool run_python does not run JavaScript".into())
        );
        assert_eq!(
            value(&values, "code_tool_schema_bytes"),
            Value::Size {
                bytes: 125,
                of: Some("run_python's".into())
            }
        );
        assert!(value(&values, "python_cpu_bound").failed());
        assert!(
            value(&values, "python_first_call").failed(),
            "a figure missing from the report is a failure"
        );
        let peer = peer_values(&measured);
        assert!(peer.iter().all(|(_, v)| !v.failed()), "{peer:?}");
        let ours = rows(&measured);
        let targeted: Vec<_> = ours
            .iter()
            .filter(|r| r.target != Target::None)
            .map(|r| (r.label.as_str(), r.target.meets(&r.ours)))
            .collect();
        assert_eq!(
            targeted,
            [
                (
                    "official SDK, python: warm execute_code above ping",
                    Some(false)
                ),
                (
                    "official SDK, javascript: warm execute_code above ping",
                    None
                ),
                (
                    "official SDK, python: the CPU-bound cell over native CPython (best run over best run)",
                    None
                ),
                (
                    "official SDK, structuredContent of the trivial Python success",
                    Some(true)
                ),
                ("official SDK, execute_code's outputSchema", Some(true)),
                (
                    "official SDK, all output schemas together (tools/list)",
                    Some(true)
                ),
            ]
        );
    }

    #[test]
    fn no_sdk_is_n_a_on_every_row_and_a_broken_report_a_failure() {
        let unavailable = Report::Unavailable("`python3 -m venv` failed".into());
        let values = values(&unavailable);
        assert_eq!(values.len(), FIGURES.len());
        assert_eq!(
            values[0].1,
            Value::Missing("n/a: `python3 -m venv` failed".into())
        );
        assert!(
            values[1..]
                .iter()
                .all(|(_, v)| *v == Value::Missing("n/a: as above".into()))
        );
        assert!(parse(b"not json").is_err());
        assert!(parse(br#"{"sdk": "mcp 2.3.0", "server": "x"}"#).is_err());
        let failed = Report::Failed("exit status: 1: no tool takes code".into());
        assert!(rows(&failed).iter().all(|r| r.ours.failed()));
        assert!(peer_values(&failed).iter().all(|(_, v)| !v.failed()));
    }

    #[test]
    fn the_driver_exists_where_the_benchmark_looks_for_it() {
        assert!(Path::new(SCRIPT).is_file(), "{SCRIPT}");
    }
}
