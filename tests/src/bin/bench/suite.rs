//! The figures row by row, with their labels and targets: what is measured on any server
//! ([`common_rows`]: new sessions, warm calls, throughput, the idle process tree) and what only
//! our server offers ([`runtime_rows`], [`density_rows`], [`fuel_rows`]).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;

use crate::fuel;
use crate::latency::{self, Load};
use crate::memory;
use crate::subject::{JAVASCRIPT, Lang, PYTHON, Subject};
use crate::table::{Row, Target, Value};

/// How many samples each kind of figure takes.
pub struct Plan {
    /// Warm calls per runtime (the command line's ITERATIONS).
    pub warm_calls: usize,
    /// Paced new sessions per runtime.
    pub new_sessions: usize,
    /// New sessions in a burst, per runtime.
    pub burst: usize,
    /// New sessions per first-import figure.
    pub imports: usize,
    /// New Python sessions whose first call imports numpy and pandas.
    pub data_science: usize,
    /// The throughput run's shape.
    pub load: Load,
}

impl Plan {
    pub fn new(warm_calls: usize) -> Plan {
        Plan {
            warm_calls,
            new_sessions: 10,
            burst: 10,
            imports: 3,
            data_science: 5,
            load: Load {
                tasks: 8,
                warm_up: Duration::from_secs(1),
                window: Duration::from_secs(3),
            },
        }
    }
}

/// The label of a figure of `lang`.
pub fn label(lang: Lang, what: &str) -> String {
    format!("{}: {what}", lang.label)
}

/// A measurement's value, or its failure as a one-line `failed: ...`.
fn settle(measured: Result<Value>) -> Value {
    measured.unwrap_or_else(|error| Value::missing("failed", &format!("{error:#}")))
}

/// Latency percentiles of measured samples, or the failure.
fn latency_of(samples: Result<Vec<std::time::Duration>>) -> Value {
    settle(samples.map(Value::latency))
}

pub const FIRST_CALL: &str = "new session, first call";
pub const BURST: &str = "new session, burst without pauses";
pub const WARM: &str = "warm execute_code";
pub const WARM_REPORTED: &str = "warm execute_code, execution time the worker reports";

/// The warm-call latencies, and the execution times the results reported.
async fn warm_values(subject: &Subject, lang: Lang, plan: &Plan) -> (Value, Value) {
    match latency::warm_calls(subject, lang, plan.warm_calls).await {
        Ok(warm) if warm.reported_executions.is_empty() => (
            Value::latency(warm.calls),
            Value::Missing("n/a: its results report no execution_time_ms".into()),
        ),
        Ok(warm) => (
            Value::latency(warm.calls),
            Value::latency(warm.reported_executions),
        ),
        Err(error) => {
            let failed = settle(Err(error));
            (failed.clone(), failed)
        }
    }
}

/// The first-call target: 10 ms.
fn first_call_target(_lang: Lang) -> Target {
    Target::AtMostMs(10.0)
}

fn warm_target(lang: Lang) -> Target {
    Target::AtMostMs(if lang == JAVASCRIPT { 0.5 } else { 1.0 })
}

/// The rows of `lang`'s sessions: the first call of paced new sessions, a burst, and warm
/// calls (with the execution time the worker reports). A server without sessions gets `n/a`
/// for the session figures (the caller measures its first call after connecting).
async fn session_rows(subject: &Subject, lang: Lang, plan: &Plan) -> Vec<Row> {
    let (first, burst, (warm, reported)) = if !subject.runs(lang) {
        let why = format!(
            "n/a: its tool {} does not run {}",
            subject.tool.name, lang.language
        );
        let missing = Value::Missing(why);
        (missing.clone(), missing.clone(), (missing.clone(), missing))
    } else if subject.has_sessions() {
        let first = latency::paced_new_sessions(subject, lang, lang.trivial, plan.new_sessions);
        let first = latency_of(first.await);
        let burst = latency_of(latency::burst_of_new_sessions(subject, lang, plan.burst).await);
        (first, burst, warm_values(subject, lang, plan).await)
    } else {
        let why = Value::Missing("n/a: the server has no create_session".into());
        (why.clone(), why, warm_values(subject, lang, plan).await)
    };
    vec![
        Row::new(label(lang, FIRST_CALL), first_call_target(lang), first),
        Row::new(label(lang, BURST), Target::None, burst),
        Row::new(label(lang, WARM), warm_target(lang), warm),
        Row::new(label(lang, WARM_REPORTED), Target::None, reported),
    ]
}

/// For each of `langs` its [`session_rows`]; then the throughput of Python and JavaScript.
pub async fn common_rows(subject: &Arc<Subject>, langs: &[Lang], plan: &Plan) -> Vec<Row> {
    let mut rows = Vec::new();
    for &lang in langs {
        rows.extend(session_rows(subject, lang, plan).await);
    }
    for (lang, floor) in [(PYTHON, 1500.0), (JAVASCRIPT, 4000.0)] {
        let value = if subject.runs(lang) {
            let rate = latency::throughput(subject, lang, &plan.load).await;
            settle(rate.map(|per_second| Value::Rate { per_second }))
        } else {
            Value::Missing(format!("n/a: does not run {}", lang.language))
        };
        let what = format!(
            "executions/s, {} sessions on one connection",
            plan.load.tasks
        );
        rows.push(Row::new(
            label(lang, &what),
            Target::AtLeastPerSecond(floor),
            value,
        ));
    }
    rows
}

/// The label of the idle process tree figure.
pub const IDLE_TREE: &str = "server process tree, idle after one Python and one JavaScript call";

/// The idle process tree of a freshly started server.
pub async fn idle_tree_row(subject: &Subject) -> Row {
    Row::new(
        IDLE_TREE,
        Target::None,
        settle(memory::idle_tree(subject).await),
    )
}

/// Our runtimes' own figures: Python's first call with numpy and pandas, each runtime's
/// idle worker, and first imports of the heaviest vendored packages (`heaviest` from
/// `import-fuel.json`, or why it could not be read).
pub async fn runtime_rows(
    subject: &Subject,
    plan: &Plan,
    heaviest: Result<Vec<(String, u64)>>,
) -> Vec<Row> {
    let data_science = "import numpy as np\nimport pandas as pd\npd.__version__";
    let first = latency::paced_new_sessions(subject, PYTHON, data_science, plan.data_science);
    let mut rows = vec![Row::new(
        label(PYTHON, "new session, import numpy and pandas"),
        Target::AtMostMs(50.0),
        latency_of(first.await),
    )];
    for lang in [PYTHON, JAVASCRIPT] {
        let value = settle(memory::idle_worker(subject, lang).await);
        rows.push(Row::new(
            label(lang, "idle worker memory (one session)"),
            Target::None,
            value,
        ));
    }
    let mut imports: Vec<(Lang, String)> = match heaviest {
        Ok(modules) => modules.into_iter().map(|(m, _)| (PYTHON, m)).collect(),
        Err(error) => {
            let why = Value::Missing(format!("failed: import-fuel.json: {error:#}"));
            rows.push(Row::new(
                label(PYTHON, "heaviest imports"),
                Target::None,
                why,
            ));
            Vec::new()
        }
    };
    imports.extend(["pandas", "sklearn"].map(|m| (PYTHON, m.to_owned())));
    // Issue 25's CPU-bound cell, at default settings: its time, and its fuel (fuel per second
    // is the one over the other; it sets what an execution gets by default).
    for (lang, code) in [
        (PYTHON, "sum(i * i for i in range(3_000_000))"),
        (PYTHON, "sum(i * i for i in range(3_000_000))"),
        (
            JAVASCRIPT,
            "let s = 0; for (let i = 0; i < 3e6; i++) s += i * i; s",
        ),
    ] {
        let measured = latency::cpu_bound(subject, lang, code, plan.imports).await;
        let value = settle(measured.map(|(times, fuel)| match Value::latency(times) {
            Value::Latency { p50_ms, .. } => Value::Import { p50_ms, fuel },
            other => other,
        }));
        rows.push(Row::new(
            label(lang, "CPU-bound: a 3-million-step loop, warm"),
            Target::None,
            value,
        ));
    }
    for (lang, module) in imports {
        let measured = latency::first_imports(subject, lang, &module, plan.imports).await;
        let value = settle(measured.map(|(times, fuel)| match Value::latency(times) {
            Value::Latency { p50_ms, .. } => Value::Import { p50_ms, fuel },
            other => other,
        }));
        rows.push(Row::new(
            label(lang, &format!("new session, import {module}")),
            Target::None,
            value,
        ));
    }
    rows
}

/// Density: how many idle sessions (half Python, half JavaScript) a server with its default
/// configuration admits, and the memory of its whole process tree, against 4 GiB.
pub async fn density_rows(subject: &Subject, per_language: usize) -> Vec<Row> {
    let what = format!(
        "density: {per_language} Python + {per_language} JavaScript idle sessions, server and workers"
    );
    let value = settle(memory::density(subject, per_language).await);
    vec![Row::new(what, Target::AtMostBytes(4 << 30), value)]
}

/// Issue 25's density of Python sessions: `count` idle sessions with pandas imported,
/// every one started from the memory image (the server's pool is off), against 12 MiB of PSS
/// each.
pub async fn scientific_sessions_row(subject: &Subject, count: usize) -> Row {
    Row::new(
        label(
            PYTHON,
            &format!("{count} idle sessions with pandas imported, no pool: memory per worker"),
        ),
        Target::PssAtMostBytes(12 << 20),
        settle(memory::scientific_sessions(subject, count).await),
    )
}

/// Fuel metering's overhead per language, from `sandbox-worker fuel-overhead`.
pub async fn fuel_rows(worker: &Path, runtimes: Option<&Path>) -> Vec<Row> {
    let measured = match runtimes {
        Some(runtimes) => fuel::measure_overheads(worker, runtimes).await,
        None => Err("the runtimes directory was not found next to sandbox-mcp".to_owned()),
    };
    fuel::OVERHEAD_PROGRAMS
        .iter()
        .enumerate()
        .map(|(i, (language, program))| {
            let value = match &measured {
                Ok(values) => values[i].clone(),
                Err(why) => Value::Missing(format!("not measured: {why}")),
            };
            let what = format!("{language}: fuel metering overhead, {program}");
            Row::new(what, Target::AtMostPercent(30.0), value)
        })
        .collect()
}
