//! Issue 28's figures: what sessions as values cost, end to end through our MCP client. A
//! checkpoint of a plain Python session and of one holding pandas and a 50 MB DataFrame, a
//! restore, a fork from the live state, and the first call after the session's worker was
//! killed (a new worker resumes the state), per runtime; and what a checkpoint takes on disk.
//! [`suspended_rows`]: a thousand idle Python sessions suspended, on a server of their own.

use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::json;

use sandbox_tests::bench_support::{self, CommandServer};

use crate::subject::{JAVASCRIPT, Lang, PYTHON, SharedClient, Subject, call_ok};
use crate::suite::label;
use crate::table::{Row, Target, Value};

/// Samples per figure (each a few tens of milliseconds).
const SAMPLES: usize = 12;

/// A plain session's state after a few calls, per language.
fn setup(lang: Lang) -> &'static str {
    if lang.language == "python" {
        "data = {i: str(i) for i in range(1000)}\nsquare = lambda n: n * n\nclass Point:\n    def __init__(self, x): self.x = x\np = Point(3)"
    } else {
        "var data = Array.from({length: 1000}, (_, i) => String(i)); const square = (n) => n * n; class Point { constructor(x) { this.x = x } }; var p = new Point(3);"
    }
}

/// Every state figure, for both runtimes.
pub async fn state_rows(subject: &Subject) -> Vec<Row> {
    let mut rows = Vec::new();
    for lang in [PYTHON, JAVASCRIPT] {
        let measured = measure(subject, lang, setup(lang), SAMPLES).await;
        let (checkpoint, restore, fork, resume, size) = match measured {
            Ok(figures) => figures,
            Err(e) => {
                let why = || Value::missing("failed", &format!("{e:#}"));
                (why(), why(), why(), why(), why())
            }
        };
        rows.push(Row::new(
            label(lang, "checkpoint_session"),
            Target::AtMostMs(20.0),
            checkpoint,
        ));
        rows.push(Row::new(
            label(lang, "restore_session"),
            Target::AtMostMs(30.0),
            restore,
        ));
        rows.push(Row::new(
            label(lang, "fork_session (live state)"),
            Target::AtMostMs(50.0),
            fork,
        ));
        rows.push(Row::new(
            label(lang, "first call after the worker was killed (resumed)"),
            Target::AtMostMs(30.0),
            resume,
        ));
        rows.push(Row::new(
            label(lang, "checkpoint on disk"),
            Target::None,
            size,
        ));
    }
    let big = "import numpy as np\nimport pandas as pd\ndf = pd.DataFrame(np.random.rand(6_250_000, 1), columns=['x'])\nint(df.memory_usage().sum())";
    let value = match measure(subject, PYTHON, big, 4).await {
        Ok((checkpoint, ..)) => checkpoint,
        Err(e) => Value::missing("failed", &format!("{e:#}")),
    };
    rows.push(Row::new(
        label(PYTHON, "checkpoint_session, pandas and a 50 MB DataFrame"),
        Target::AtMostMs(150.0),
        value,
    ));
    rows
}

/// Checkpoint, restore, fork and resume latencies of a session set up with `code`, and the
/// size of its last checkpoint.
async fn measure(
    subject: &Subject,
    lang: Lang,
    code: &str,
    samples: usize,
) -> Result<(Value, Value, Value, Value, Value)> {
    let session = subject.create_session(lang).await?;
    subject.run(lang, code, Some(&session)).await?;
    let client = &subject.client;
    let at = json!({ "session_id": session });
    let (mut checkpoints, mut restores, mut forks, mut resumes) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut last = (String::new(), 0);
    for _ in 0..samples {
        let (reply, took) = call_ok(client, "checkpoint_session", at.clone()).await?;
        checkpoints.push(took);
        let structured = reply.structured_content.context("a structured answer")?;
        last = (
            structured["checkpoint_id"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            structured["bytes"].as_u64().unwrap_or(0),
        );
    }
    for _ in 0..samples {
        let args = json!({ "session_id": session, "checkpoint_id": last.0 });
        restores.push(call_ok(client, "restore_session", args).await?.1);
    }
    for _ in 0..samples.min(6) {
        let (reply, took) = call_ok(client, "fork_session", at.clone()).await?;
        forks.push(took);
        if let Some(id) = reply
            .structured_content
            .as_ref()
            .and_then(|s| s["session_id"].as_str())
        {
            subject.destroy_session(id).await;
        }
    }
    for _ in 0..samples.min(6) {
        let worker = sandbox_tests::procfs::worker_of_session(subject.pid, &session)
            .context("the session's worker")?;
        sandbox_tests::procfs::signal(worker, "KILL");
        let gone = sandbox_tests::eventually(Duration::from_secs(5), || {
            !sandbox_tests::procfs::alive(worker)
        });
        anyhow::ensure!(gone.await, "the killed worker is gone");
        resumes.push(subject.run(lang, "1", Some(&session)).await?.1);
    }
    subject.destroy_session(&session).await;
    Ok((
        Value::latency(checkpoints),
        Value::latency(restores),
        Value::latency(forks),
        Value::latency(resumes),
        Value::Size {
            bytes: last.1,
            of: Some("snapshot and /app".into()),
        },
    ))
}

/// Python sessions in the suspended-sessions figure.
pub const SUSPENDED_SESSIONS: usize = 1000;

/// Sessions of the suspended figure whose first call is timed (each must see its variable).
const RESUMED_SAMPLES: usize = 12;

/// `count` Python sessions, each given a variable and then left idle until it is suspended, on
/// a server of its own (`SANDBOX_SUSPEND_IDLE_SECS=1`, room for them all): the server's process
/// tree before the first and once every one is suspended, what their states take on disk, and
/// the first call of a few of them afterwards (each must print its own variable). Issue 28:
/// suspended sessions cost disk, not memory.
pub async fn suspended_rows(count: usize) -> Vec<Row> {
    let label_of = |what: &str| label(PYTHON, &format!("{count} suspended sessions: {what}"));
    let measured = suspended(count).await;
    let (before, after, disk, resumed) = match measured {
        Ok(figures) => figures,
        Err(e) => {
            let why = || Value::missing("failed", &format!("{e:#}"));
            (why(), why(), why(), why())
        }
    };
    vec![
        Row::new(label_of("server before the first"), Target::None, before),
        Row::new(
            label_of("server once all are suspended"),
            Target::None,
            after,
        ),
        Row::new(
            label_of("their files and states on disk"),
            Target::None,
            disk,
        ),
        Row::new(
            label_of("first call of one (resumed)"),
            Target::AtMostMs(30.0),
            resumed,
        ),
    ]
}

async fn suspended(count: usize) -> Result<(Value, Value, Value, Value)> {
    let max_sessions = (count + 16).to_string();
    let server = std::sync::Arc::new(
        CommandServer::sandbox_mcp_with(&[
            ("SANDBOX_MAX_SESSIONS", &max_sessions),
            ("SANDBOX_SUSPEND_IDLE_SECS", "1"),
        ])
        .await?,
    );
    let state_dir = server.state_dir().context("the server's state directory")?;
    let subject = Subject::new(server.clone() as SharedClient, server.pid).await?;
    // One session first, so that both interpreters are compiled and the pool is full.
    let warm = subject.create_session(PYTHON).await?;
    subject.run(PYTHON, "1", Some(&warm)).await?;
    subject.destroy_session(&warm).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (memory, processes) = bench_support::tree_memory(subject.pid)?;
    let before = Value::Memory { memory, processes };

    let mut made = Vec::with_capacity(count);
    for n in 0..count {
        let id = subject.create_session(PYTHON).await?;
        subject
            .run(PYTHON, &format!("n = {n}"), Some(&id))
            .await
            .with_context(|| format!("session {n}"))?;
        made.push(id);
        if (n + 1) % 100 == 0 {
            eprintln!("sandbox-bench: {} sessions made", n + 1);
        }
    }
    // Suspended within the setting plus the 5 s the issue allows: then only the pool and the
    // fork servers are left below the server.
    let settled = sandbox_tests::eventually(Duration::from_secs(30), || {
        bench_support::tree_memory(subject.pid).is_ok_and(|(_, now)| now <= processes)
    })
    .await;
    anyhow::ensure!(
        settled,
        "sessions still hold workers 30 s after the last call"
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (memory, processes) = bench_support::tree_memory(subject.pid)?;
    let after = Value::Density {
        sessions: count,
        memory,
        processes,
        refused: None,
    };
    let disk = Value::Size {
        bytes: disk_use(&state_dir.join("sessions"))?,
        of: Some(format!("{count} sessions' directories")),
    };

    let mut resumes = Vec::new();
    for n in (0..count).step_by((count / RESUMED_SAMPLES).max(1)) {
        let (reply, took) = subject.run(PYTHON, "print(n)", Some(&made[n])).await?;
        let answer = reply.structured_content.unwrap_or_default();
        anyhow::ensure!(
            answer["stdout"].as_str().map(str::trim) == Some(n.to_string().as_str())
                && answer["state_after_restart"] == "resumed",
            "session {n} did not come back with its variable: {answer}"
        );
        resumes.push(took);
    }
    drop(subject);
    if let Ok(server) = std::sync::Arc::try_unwrap(server) {
        let _ = server.stop().await;
    }
    Ok((before, after, disk, Value::latency(resumes)))
}

/// The bytes of the files below `dir`, each file once however many links it has.
fn disk_use(dir: &std::path::Path) -> Result<u64> {
    use std::os::unix::fs::MetadataExt;
    let mut seen = std::collections::HashSet::new();
    let mut pending = vec![dir.to_path_buf()];
    let mut total = 0;
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let meta = entry.metadata()?;
            if meta.is_dir() {
                pending.push(entry.path());
            } else if seen.insert((meta.dev(), meta.ino())) {
                total += meta.blocks() * 512;
            }
        }
    }
    Ok(total)
}
