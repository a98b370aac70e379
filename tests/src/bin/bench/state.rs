//! Issue 28's figures: what sessions as values cost, end to end through our MCP client. A
//! checkpoint of a plain Python session and of one holding pandas and a 50 MB DataFrame, a
//! restore, a fork from the live state, and the first call after the session's worker was
//! killed (a new worker resumes the state), per runtime; and what a checkpoint takes on disk.

use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::json;

use crate::subject::{JAVASCRIPT, Lang, PYTHON, Subject, call_ok};
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
