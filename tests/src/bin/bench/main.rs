//! `sandbox-bench`: the figures of issue 14 ("Speed and density"), measured end to end on the
//! real server over MCP stdio and printed as one table with each figure's target.
//!
//!   cargo build --release -p sandbox-tests --bin sandbox-bench
//!   target/release/sandbox-bench [--check] [--against 'CMD ARGS'] [--sdk-against 'CMD ARGS']...
//!                                [--sdk-only] [--advice[=CORPUS,...]] [--state] [--commands]
//!                                [--memory] [ITERATIONS]
//!
//! - New sessions: `create_session` plus the first `execute_code`, timed together, per runtime
//!   (target p50 ≤ 10 ms; ≤ 50 ms with numpy and pandas imported).
//!   Samples are paced 300 ms apart ([`subject::Lang::refill_pause`]) so a pool of pre-started workers
//!   refilled in the background is measured fairly; a burst row makes 10 sessions back to
//!   back, which shows what an empty pool costs.
//! - Warm `execute_code` in one session, ITERATIONS calls (default 300): target p50 ≤ 1.0 ms
//!   for Python, ≤ 0.5 ms for JavaScript.
//! - Throughput: 8 sessions on the one stdio connection, each driven by its own task issuing
//!   trivial calls back to back, counted for 3 s after 1 s of warm-up (≥ 1500 Python and
//!   ≥ 4000 JavaScript executions/s).
//! - Memory: RSS and PSS (`/proc/PID/smaps_rollup`) of one idle session's worker per runtime,
//!   and of a fresh server's process tree; density: 50 Python + 50 JavaScript idle sessions on
//!   a server with its default configuration (≤ 4 GiB total RSS; a refusal is printed); and 60
//!   idle Python sessions with pandas imported, pool off (PSS ≤ 12 MiB each). `--memory`
//!   measures only these.
//! - Fuel metering's overhead (≤ 30 %), from `sandbox-worker fuel-overhead`, and the first
//!   import time and fuel of the heaviest vendored packages.
//! - Sessions as values ([`state`], issue 28): checkpoint (≤ 20 ms; ≤ 150 ms with pandas and a
//!   50 MB DataFrame), restore and resume after a kill (≤ 30 ms), fork (≤ 50 ms), per runtime;
//!   and 1,000 idle Python sessions suspended on a server of their own: its process tree before
//!   and after, their disk use, and a suspended session's first call (≤ 30 ms).
//!   `--state` measures only these (about two minutes).
//! - `execute_command` ([`commands`], issue 29): a warm `ls -la` (≤ 3 ms), a warm WebAssembly
//!   tool, and `find | xargs grep` over 1,000 files (≤ 150 ms). `--commands` measures only these.
//!
//! `--against 'CMD ARGS'` also starts another MCP stdio server from that command line and
//! prints its figures in a column beside ours (what it cannot be measured on says `n/a` and
//! why). Only the latency, throughput and process-tree figures apply to any server.
//!
//! - Through the official MCP Python SDK ([`sdk`], issue 24): ping and warm calls with p50 and
//!   p90, a warm call above ping (target ≤ 1.0 ms for Python, ≤ 0.8 ms for JavaScript), the
//!   same Python call with the SDK's output validation off, first calls, a CPU-bound cell, and
//!   the sizes of the trivial result (≤ 400 bytes) and of the output schemas (execute_code's
//!   ≤ 3,000 bytes, all ≤ 10,000). `n/a` when Python or the SDK cannot be had.
//!
//! `--sdk-against 'CMD ARGS'` (repeatable) measures another MCP stdio server through the SDK in
//! the same run, in a column of its own (`runtimes/sdk-peers.sh` installs peers and prints their
//! command lines). `--sdk-only` measures only the official-SDK rows (about a minute).
//!
//! `--advice` prints only the advice scores ([`advice`], issue 27): how often the first fix
//! names the cause on the tuned corpus, each blind corpus's tuned two thirds and its held-out
//! third, with the blind cases that miss; `--advice=blind3,tuned` scores only the corpora named.
//!
//! With `--check` the run also compares our p50s with the reference numbers recorded in
//! README.md (the table between the `sandbox-bench reference` markers) and exits with status 1
//! when one is more than [`reference::SLOWDOWN_LIMIT`] times worse: a developer's early warning
//! that a change made things slower. Run it on a quiet machine. It never runs under CI (`CI`
//! set): shared runners' timings say nothing about a change, so there it only says it skipped.
//! Timings are printed, never asserted by tests.

mod advice;
mod commands;
mod foreign;
mod fuel;
mod latency;
mod memory;
mod reference;
mod sdk;
mod state;
mod subject;
mod suite;
mod table;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use sandbox_tests::bench_support::CommandServer;
use sandbox_tests::{host, server_binary};

use crate::foreign::Connected;
use crate::subject::{JAVASCRIPT, PYTHON, SharedClient, Subject};
use crate::suite::Plan;
use crate::table::{Row, Value};

/// Idle sessions per language in the density figure.
const DENSITY_PER_LANGUAGE: usize = 50;
/// Issue 25's idle Python sessions with pandas, started from the memory image.
const SCIENTIFIC_SESSIONS: usize = 60;
/// Connections made for a first-call figure of a server without sessions (each starts it).
const FOREIGN_FIRST_CALLS: usize = 3;

/// What the command line asks for.
#[derive(Debug, PartialEq)]
struct Options {
    check: bool,
    /// The other server's command line, split into words.
    against: Option<Vec<String>>,
    /// Servers measured through the official SDK beside ours, command lines split into words.
    sdk_against: Vec<Vec<String>>,
    /// Only the official-SDK rows.
    sdk_only: bool,
    /// Only the advice corpora's scores.
    advice: bool,
    /// The advice corpora to score (`--advice=tuned,blind3`); all when empty.
    advice_corpora: Vec<String>,
    /// Only the sessions-as-values figures.
    state: bool,
    /// Only `execute_command`'s figures.
    commands: bool,
    /// Only the memory figures.
    memory: bool,
    /// Only the usage.
    help: bool,
    iterations: usize,
}

const USAGE: &str = "usage: sandbox-bench [--check] [--against 'CMD ARGS'] [--sdk-against 'CMD ARGS']... [--sdk-only] [--advice[=CORPUS,...]] [--state] [--commands] [--memory] [ITERATIONS]";

fn parse_options(args: impl IntoIterator<Item = String>) -> Result<Options> {
    let mut options = Options {
        check: false,
        against: None,
        sdk_against: Vec::new(),
        sdk_only: false,
        advice: false,
        advice_corpora: Vec::new(),
        state: false,
        commands: false,
        memory: false,
        help: false,
        iterations: 300,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "--check" {
            options.check = true;
        } else if arg == "--sdk-only" {
            options.sdk_only = true;
        } else if arg == "--advice" {
            options.advice = true;
        } else if let Some(corpora) = arg.strip_prefix("--advice=") {
            options.advice = true;
            options.advice_corpora = corpora.split(',').map(str::to_owned).collect();
        } else if arg == "--state" {
            options.state = true;
        } else if arg == "--commands" {
            options.commands = true;
        } else if arg == "--memory" {
            options.memory = true;
        } else if arg == "--help" || arg == "-h" {
            options.help = true;
        } else if let Some(command) = arg.strip_prefix("--against=") {
            options.against = Some(foreign::split_command(command)?);
        } else if arg == "--against" {
            let command = args
                .next()
                .with_context(|| format!("--against needs a command; {USAGE}"))?;
            options.against = Some(foreign::split_command(&command)?);
        } else if let Some(command) = arg.strip_prefix("--sdk-against=") {
            options.sdk_against.push(foreign::split_command(command)?);
        } else if arg == "--sdk-against" {
            let command = args
                .next()
                .with_context(|| format!("--sdk-against needs a command; {USAGE}"))?;
            options.sdk_against.push(foreign::split_command(&command)?);
        } else {
            options.iterations = match arg.parse() {
                Ok(n) if n > 0 => n,
                _ => bail!("{USAGE}, not {arg:?}"),
            };
        }
    }
    if options.sdk_only && (options.check || options.against.is_some()) {
        bail!("--sdk-only measures neither --check's figures nor --against's; {USAGE}");
    }
    Ok(options)
}

/// Everything measured on our server, started with its default configuration: one server for
/// the latencies, throughput, workers and imports; a fresh one for the idle tree and density;
/// then the fuel overhead.
async fn measure_ours(plan: &Plan) -> Result<Vec<Row>> {
    let server = Arc::new(CommandServer::sandbox_mcp().await?);
    let subject = Arc::new(Subject::new(Arc::clone(&server) as SharedClient, server.pid).await?);
    let mut rows = suite::common_rows(&subject, &[PYTHON, JAVASCRIPT], plan).await;
    let heaviest = host::data_dir()
        .context("runtimes/data not found next to sandbox-mcp")
        .and_then(|data| {
            let text = std::fs::read_to_string(data.join("import-fuel.json"))?;
            fuel::heaviest_imports(&text, 3)
        });
    rows.extend(suite::runtime_rows(&subject, plan, heaviest).await);
    rows.extend(state::state_rows(&subject).await);
    rows.extend(commands::command_rows(&subject).await);
    drop(subject);
    stop(server).await;

    rows.extend(memory_rows().await?);
    rows.extend(state::suspended_rows(state::SUSPENDED_SESSIONS).await);

    let worker = server_binary().with_file_name("sandbox-worker");
    let runtimes: Option<PathBuf> = host::data_dir().and_then(|d| d.parent().map(Into::into));
    rows.extend(suite::fuel_rows(&worker, runtimes.as_deref()).await);
    Ok(rows)
}

/// The memory figures, each on a fresh server: its idle process tree, then the density of
/// idle sessions of both languages; then, on a server with its pool off, idle Python sessions
/// with pandas imported.
async fn memory_rows() -> Result<Vec<Row>> {
    let server = Arc::new(CommandServer::sandbox_mcp().await?);
    let subject = Subject::new(Arc::clone(&server) as SharedClient, server.pid).await?;
    let mut rows = vec![suite::idle_tree_row(&subject).await];
    rows.extend(suite::density_rows(&subject, DENSITY_PER_LANGUAGE).await);
    drop(subject);
    stop(server).await;

    let server = Arc::new(CommandServer::sandbox_mcp_with(&[("SANDBOX_WORKER_POOL", "0")]).await?);
    let subject = Subject::new(Arc::clone(&server) as SharedClient, server.pid).await?;
    rows.push(suite::scientific_sessions_row(&subject, SCIENTIFIC_SESSIONS).await);
    drop(subject);
    stop(server).await;
    Ok(rows)
}

/// Closes our server's connection once nothing else holds it.
async fn stop(server: Arc<CommandServer>) {
    if let Ok(server) = Arc::try_unwrap(server) {
        let _ = server.stop().await;
    }
}

/// The figures of another server, by label: its idle tree first, while it is fresh, then the
/// common figures; a server without sessions has its first call measured after connecting.
/// What fails on it is a figure that cannot be measured there (`n/a`), not a failure of ours.
async fn measure_other(command: &[String], plan: &Plan) -> Result<Vec<(String, Value)>> {
    let connected = Connected::start(command).await?;
    let subject = Arc::clone(&connected.subject);
    eprintln!(
        "sandbox-bench: --against runs code with {:?} (code argument {:?}, languages {:?}, sessions: {})",
        subject.tool.name,
        subject.tool.code,
        subject.tool.languages,
        subject.has_sessions()
    );
    let mut rows = vec![suite::idle_tree_row(&subject).await];
    rows.extend(suite::common_rows(&subject, &[PYTHON, JAVASCRIPT], plan).await);
    let first_after_connecting: Vec<_> = [PYTHON, JAVASCRIPT]
        .into_iter()
        .filter(|lang| subject.runs(*lang) && !subject.has_sessions())
        .collect();
    drop(subject);
    connected.stop().await;
    for lang in first_after_connecting {
        let samples = foreign::first_calls_after_connecting(command, lang, FOREIGN_FIRST_CALLS);
        let value = match samples.await {
            Ok(times) => Value::latency(times),
            Err(error) => Value::missing("failed", &format!("{error:#}")),
        };
        let label = suite::label(lang, suite::FIRST_CALL);
        if let Some(row) = rows.iter_mut().find(|r| r.label == label) {
            row.ours = value;
        }
    }
    Ok(rows
        .into_iter()
        .map(|row| match row.ours {
            Value::Missing(why) if why.starts_with("failed: ") => {
                (row.label, Value::Missing(why.replacen("failed", "n/a", 1)))
            }
            value => (row.label, value),
        })
        .collect())
}

/// Our server's figures through the official SDK, on a server of its own (its state in a
/// scratch directory, as [`CommandServer::sandbox_mcp`] does).
async fn measure_ours_through_the_sdk(plan: &Plan, native: &sdk::Report) -> Result<Vec<Row>> {
    let scratch = tempfile::tempdir()?;
    let state = scratch.path().join("state");
    let command = [server_binary().to_string_lossy().into_owned()];
    let report = sdk::measure(&command, &[("SANDBOX_STATE_DIR", &state)], plan).await;
    let report = sdk::with_native(report, native);
    sdk::describe("sandbox-mcp", &report);
    let mut rows = sdk::rows(&report);
    let state = scratch.path().join("state-no-pool");
    let starts = sdk::measure_scientific_starts(&command, &[("SANDBOX_STATE_DIR", &state)]).await;
    rows.extend(sdk::scientific_start_rows(&starts));
    Ok(rows)
}

/// Puts a server's values (by label) in `column` of the rows that have one.
fn merge_column(rows: &mut [Row], column: usize, values: Vec<(String, Value)>) {
    for (label, value) in values {
        if let Some(row) = rows.iter_mut().find(|r| r.label == label) {
            row.set_other(column, value);
        }
    }
}

/// Puts the other server's figures (or why it could not be measured at all) beside ours.
fn merge_other(rows: &mut [Row], column: usize, theirs: &Result<Vec<(String, Value)>>) {
    for row in rows {
        row.set_other(
            column,
            match theirs {
                Ok(theirs) => theirs
                    .iter()
                    .find(|(label, _)| *label == row.label)
                    .map_or_else(
                        || Value::Missing("n/a: measured for sandbox-mcp only".into()),
                        |(_, value)| value.clone(),
                    ),
                Err(error) => Value::missing("n/a", &format!("{error:#}")),
            },
        );
    }
}

/// The table's other columns: `--against`'s, then one per `--sdk-against` server.
fn other_columns(options: &Options) -> Vec<String> {
    let against = options
        .against
        .iter()
        .map(|c| format!("--against {}", c.join(" ")));
    let sdk = options
        .sdk_against
        .iter()
        .map(|c| format!("SDK: {}", short_command(c)));
    against.chain(sdk).collect()
}

/// A command line for a column header: the program's file name (not its directory) and its
/// arguments, without `env NAME=VALUE` prefixes.
fn short_command(command: &[String]) -> String {
    let mut words = command.iter().map(String::as_str).peekable();
    if words.peek() == Some(&"env") {
        words.next();
        while words.peek().is_some_and(|w| w.contains('=')) {
            words.next();
        }
    }
    let words: Vec<&str> = words.collect();
    let Some((program, args)) = words.split_first() else {
        return command.join(" ");
    };
    let name = program.rsplit('/').next().unwrap_or(program);
    std::iter::once(name)
        .chain(args.iter().copied())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `--check`: exits with status 1 when a checked p50 is more than
/// [`reference::SLOWDOWN_LIMIT`] times its README reference.
///
/// # Errors
/// When the README and the benchmark do not name the same checked figures.
fn check(rows: &[Row], reference: &[reference::Figure]) -> Result<()> {
    let worse = reference::regressions(&reference::checked_figures(rows), reference)?;
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
        "sandbox-bench --check: ok, every p50 within {}x of the README's reference numbers",
        reference::SLOWDOWN_LIMIT
    );
    Ok(())
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<()> {
    let options = parse_options(std::env::args().skip(1))?;
    if options.help {
        println!(
            "{USAGE}\n(the figures each option measures: the doc comment of tests/src/bin/bench/main.rs)"
        );
        return Ok(());
    }
    if options.advice {
        return advice::report(&options.advice_corpora).await;
    }
    if options.state {
        let server = Arc::new(CommandServer::sandbox_mcp().await?);
        let subject = Subject::new(Arc::clone(&server) as SharedClient, server.pid).await?;
        let mut rows = state::state_rows(&subject).await;
        drop(subject);
        stop(server).await;
        rows.extend(state::suspended_rows(state::SUSPENDED_SESSIONS).await);
        println!("{}", table::render(&rows, &[]));
        return Ok(());
    }
    if options.memory {
        let rows = memory_rows().await?;
        println!("{}", table::render(&rows, &[]));
        return Ok(());
    }
    if options.commands {
        let server = Arc::new(CommandServer::sandbox_mcp().await?);
        let subject = Subject::new(Arc::clone(&server) as SharedClient, server.pid).await?;
        let rows = commands::command_rows(&subject).await;
        drop(subject);
        stop(server).await;
        println!("{}", table::render(&rows, &[]));
        return Ok(());
    }
    let reference = if options.check {
        if reference::under_ci() {
            println!(
                "sandbox-bench --check: skipped under CI (CI is set); shared runners' timings are not comparable with the README's reference numbers"
            );
            return Ok(());
        }
        Some(reference::references(reference::README)?)
    } else {
        None
    };
    let started = Instant::now();
    let plan = Plan::new(options.iterations);
    println!(
        "sandbox-bench: end to end over MCP stdio (rmcp client -> server -> workers; the \"official SDK\" rows through the MCP Python SDK)"
    );
    let mut rows = Vec::new();
    if !options.sdk_only {
        rows.extend(measure_ours(&plan).await?);
    }
    if let Some(command) = &options.against {
        merge_other(&mut rows, 0, &measure_other(command, &plan).await);
    }
    // The CPU-bound cell's native runs, once for every column.
    let native = sdk::measure_native().await;
    let mut sdk_rows = measure_ours_through_the_sdk(&plan, &native).await?;
    let columns = other_columns(&options);
    let first_sdk_column = usize::from(options.against.is_some());
    for (i, command) in options.sdk_against.iter().enumerate() {
        let report = sdk::with_native(sdk::measure(command, &[], &plan).await, &native);
        sdk::describe(&short_command(command), &report);
        merge_column(
            &mut sdk_rows,
            first_sdk_column + i,
            sdk::peer_values(&report),
        );
    }
    rows.extend(sdk_rows);
    println!("{}", table::render(&rows, &columns));
    println!("({:.0} s in all)", started.elapsed().as_secs_f64());
    if let Some(reference) = reference {
        check(&rows, &reference)?;
    }
    let failed: Vec<&str> = rows
        .iter()
        .filter(|r| r.ours.failed())
        .map(|r| r.label.as_str())
        .collect();
    if !failed.is_empty() {
        bail!("these figures could not be measured on sandbox-mcp: {failed:?}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options> {
        parse_options(args.iter().map(|a| (*a).to_owned()))
    }

    #[test]
    fn the_command_line_is_read() {
        assert_eq!(
            parse(&[]).unwrap(),
            Options {
                check: false,
                against: None,
                sdk_against: Vec::new(),
                sdk_only: false,
                advice: false,
                advice_corpora: Vec::new(),
                state: false,
                commands: false,
                memory: false,
                help: false,
                iterations: 300
            }
        );
        let some = parse(&["--advice=blind3,tuned"]).unwrap();
        assert!(some.advice);
        assert_eq!(some.advice_corpora, ["blind3", "tuned"]);
        let all = parse(&[
            "--check",
            "--against",
            "npx -y '@pydantic/mcp-run-python' stdio",
            "50",
        ])
        .unwrap();
        assert!(all.check);
        assert_eq!(all.iterations, 50);
        assert_eq!(
            all.against.unwrap(),
            ["npx", "-y", "@pydantic/mcp-run-python", "stdio"]
        );
        let joined = parse(&["--against=target/release/sandbox-mcp"]).unwrap();
        assert_eq!(joined.against.unwrap(), ["target/release/sandbox-mcp"]);
        let peers = parse(&["--sdk-against", "eryx serve", "--sdk-against=x 'a b'"]).unwrap();
        assert_eq!(peers.sdk_against, [vec!["eryx", "serve"], vec!["x", "a b"]]);
        assert!(
            parse(&["--sdk-only", "--sdk-against", "eryx serve"])
                .unwrap()
                .sdk_only
        );
        assert!(parse(&["--advice"]).unwrap().advice);
        assert!(parse(&["--commands"]).unwrap().commands);
        assert!(parse(&["--memory"]).unwrap().memory);
        assert!(parse(&["--help"]).unwrap().help);
    }

    #[test]
    fn the_other_server_s_figures_go_beside_ours_by_label() {
        let latency = |p50_ms| Value::Latency {
            p50_ms,
            p95_ms: p50_ms,
            count: 1,
        };
        let mut rows = [
            Row::new("a", table::Target::None, latency(1.0)),
            Row::new("b", table::Target::None, latency(2.0)),
        ];
        merge_other(&mut rows, 0, &Ok(vec![("a".to_owned(), latency(9.0))]));
        assert_eq!(rows[0].other(0), Some(&latency(9.0)));
        assert_eq!(
            rows[1].other(0),
            Some(&Value::Missing("n/a: measured for sandbox-mcp only".into()))
        );
        merge_other(&mut rows, 0, &Err(anyhow::anyhow!("deno: not found")));
        assert!(
            rows.iter()
                .all(|r| r.other(0) == Some(&Value::Missing("n/a: deno: not found".into())))
        );
        merge_column(&mut rows, 2, vec![("b".to_owned(), latency(3.0))]);
        assert_eq!(rows[0].other(2), None, "not measured there");
        assert_eq!(rows[1].other(2), Some(&latency(3.0)));
        assert_eq!(rows[1].other(1), None);
    }

    #[test]
    fn column_headers_name_the_servers_briefly() {
        let options = parse(&[
            "--against",
            "npx -y x",
            "--sdk-against",
            "/w/target/sdk-peers/eryx/bin/eryx serve",
            "--sdk-against",
            "env 'PATH=/a:/b' /w/bin/mcp-run-python stdio",
        ])
        .unwrap();
        assert_eq!(
            other_columns(&options),
            [
                "--against npx -y x",
                "SDK: eryx serve",
                "SDK: mcp-run-python stdio"
            ]
        );
    }

    #[test]
    fn a_bad_command_line_is_refused() {
        assert!(parse(&["--against"]).is_err());
        assert!(parse(&["--against", "a 'b"]).is_err());
        assert!(parse(&["0"]).is_err());
        assert!(parse(&["fast"]).is_err());
        assert!(parse(&["--sdk-against"]).is_err());
        assert!(parse(&["--sdk-only", "--check"]).is_err());
        assert!(parse(&["--sdk-only", "--against", "x"]).is_err());
    }
}
