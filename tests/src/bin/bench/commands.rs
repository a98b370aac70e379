//! Issue 29's figures: `execute_command` end to end through our MCP client, in one session
//! over a tree of its own. A warm `ls -la` (target p50 ≤ 3 ms), a warm `sha256sum`, and
//! `find . -name '*.py' | xargs grep -n TODO` over a tree of 1,000 files (≤ 150 ms): all
//! WebAssembly tools of the toolbox, a fresh instance per command (xargs is the shell's).

use std::time::Duration;

use anyhow::{Context, Result, ensure};
use serde_json::json;

use crate::subject::{PYTHON, Subject, call_ok};
use crate::table::{Row, Target, Value};

/// Samples of the warm figures, and of the tree search (each a few tens of milliseconds).
const WARM_SAMPLES: usize = 100;
const SEARCH_SAMPLES: usize = 10;

/// Makes the search's tree: 1,000 files in 20 directories, a tenth of them `.py` files with a
/// TODO line.
const TREE: &str = "import os\n\
for d in range(20):\n    os.makedirs(f'tree/d{d}', exist_ok=True)\n    \
for f in range(50):\n        ext = 'py' if f % 10 == 0 else 'txt'\n        \
with open(f'tree/d{d}/f{f}.{ext}', 'w') as out:\n            \
out.write('x = 1\\n' * 20 + '# TODO: look at this\\n')\n\
for f in range(20):\n    open(f'file{f}.txt', 'w').write('line\\n' * 10)";

/// The three figures.
pub async fn command_rows(subject: &Subject) -> Vec<Row> {
    let measured = measure(subject).await;
    let (ls, tool, search) = match measured {
        Ok(figures) => figures,
        Err(e) => {
            let why = || Value::missing("failed", &format!("{e:#}"));
            (why(), why(), why())
        }
    };
    vec![
        Row::new(
            "execute_command: warm `ls -la` (WebAssembly tool), 20 files",
            Target::AtMostMs(3.0),
            ls,
        ),
        Row::new(
            "execute_command: warm `sha256sum file0.txt` (WebAssembly tool)",
            Target::None,
            tool,
        ),
        Row::new(
            "execute_command: find . -name '*.py' | xargs grep -n TODO, 1,000 files",
            Target::AtMostMs(150.0),
            search,
        ),
    ]
}

async fn measure(subject: &Subject) -> Result<(Value, Value, Value)> {
    let session = subject.create_session(PYTHON).await?;
    let client = &subject.client;
    call_ok(
        client,
        "execute_code",
        subject.code_arguments(PYTHON, TREE, Some(&session)),
    )
    .await
    .context("making the tree")?;
    let command = |line: &str| json!({ "command": line, "session_id": session, "timeout": 60 });
    let times = |line: &'static str, samples: usize| {
        let args = command(line);
        async move {
            let mut taken = Vec::with_capacity(samples);
            for _ in 0..samples + 3 {
                let (result, elapsed) = call_ok(client, "execute_command", args.clone())
                    .await
                    .with_context(|| line.to_string())?;
                let out = &result.structured_content.as_ref().context("no result")?["stdout"];
                ensure!(
                    out.as_str().is_some_and(|s| !s.is_empty()),
                    "{line}: no output"
                );
                taken.push(elapsed);
            }
            // The first calls warm the worker up (and map the toolbox's pages).
            Ok::<Vec<Duration>, anyhow::Error>(taken.split_off(3))
        }
    };
    let ls = times("ls -la", WARM_SAMPLES).await?;
    let tool = times("sha256sum file0.txt", WARM_SAMPLES).await?;
    let search = times(
        "cd /app/tree && find . -name '*.py' | xargs grep -n TODO",
        SEARCH_SAMPLES,
    )
    .await?;
    subject.destroy_session(&session).await;
    Ok((
        Value::latency(ls),
        Value::latency(tool),
        Value::latency(search),
    ))
}
