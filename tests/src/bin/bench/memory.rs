//! Memory figures: one idle session's worker (RSS and PSS from `smaps_rollup`), a server's
//! whole process tree, and density: how many idle sessions a server admits and what they hold.

use std::time::Duration;

use anyhow::{Context, Result};
use sandbox_tests::bench_support::{self, Memory};
use sandbox_tests::procfs;

use crate::subject::{JAVASCRIPT, Lang, PYTHON, Subject};
use crate::table::Value;

/// How long an idle session is left before its memory is read: the call's transient buffers
/// are freed and a pool's background refill has finished.
const SETTLE: Duration = Duration::from_millis(500);

/// The worker of a new `lang` session that has run one trivial call, idle.
///
/// # Errors
/// When the session fails, its worker is not found below the server, or cannot be read.
pub async fn idle_worker(subject: &Subject, lang: Lang) -> Result<Value> {
    let id = subject.create_session(lang).await?;
    let measured = async {
        subject.run(lang, lang.trivial, Some(&id)).await?;
        tokio::time::sleep(SETTLE).await;
        let pid = procfs::worker_of_session(subject.pid, &id)
            .with_context(|| format!("the worker of session {id} was not found"))?;
        bench_support::ensure_plausible(bench_support::memory_of(pid)?)
    }
    .await;
    subject.destroy_session(&id).await;
    Ok(Value::Memory {
        memory: measured?,
        processes: 1,
    })
}

/// The server's process tree, idle after one Python and one JavaScript call (each in a session
/// of its own when the server has sessions; languages it does not run are skipped).
///
/// # Errors
/// When a call fails or the server's memory cannot be read.
pub async fn idle_tree(subject: &Subject) -> Result<Value> {
    let mut sessions = Vec::new();
    let made = async {
        for lang in [PYTHON, JAVASCRIPT]
            .into_iter()
            .filter(|l| subject.runs(*l))
        {
            let session = subject.session_if_any(lang).await?;
            sessions.extend(session.clone());
            subject.run(lang, lang.trivial, session.as_deref()).await?;
        }
        tokio::time::sleep(SETTLE).await;
        bench_support::tree_memory(subject.pid)
    }
    .await;
    for id in &sessions {
        subject.destroy_session(id).await;
    }
    let (memory, processes) = made?;
    Ok(Value::Memory { memory, processes })
}

/// `per_language` idle Python and as many idle JavaScript sessions (alternating, each has run
/// one trivial call) on a server with its default configuration: the memory of the server and
/// every process below it once all are made. A refusal (`resources_exhausted`, or any failed
/// creation or first call) ends the run early and is reported in the figure, not as an error.
/// Every session is destroyed afterwards.
///
/// # Errors
/// When the server's memory cannot be read.
pub async fn density(subject: &Subject, per_language: usize) -> Result<Value> {
    let mut made = Vec::with_capacity(2 * per_language);
    let mut refused = None;
    for lang in [PYTHON, JAVASCRIPT].repeat(per_language) {
        match admit(subject, lang).await {
            Ok(id) => made.push(id),
            Err(why) => {
                refused = Some(why);
                break;
            }
        }
    }
    tokio::time::sleep(SETTLE).await;
    let measured = bench_support::tree_memory(subject.pid);
    for id in &made {
        subject.destroy_session(id).await;
    }
    let (memory, processes): (Memory, usize) = measured?;
    Ok(Value::Density {
        sessions: made.len(),
        memory,
        processes,
        refused,
    })
}

/// `count` idle Python sessions, each with pandas imported, on a server with its
/// worker pool off (issue 25: new sessions start from the memory image, whose pages they
/// share): the mean memory of their workers. A session that fails ends the run with an error.
///
/// # Errors
/// When a session fails or a worker's memory cannot be read.
pub async fn scientific_sessions(subject: &Subject, count: usize) -> Result<Value> {
    let mut made = Vec::with_capacity(count);
    let measured = async {
        for _ in 0..count {
            let id = subject.create_session(PYTHON).await?;
            made.push(id.clone());
            subject
                .run(
                    PYTHON,
                    "import pandas as pd\nprint(pd.__version__)",
                    Some(&id),
                )
                .await?;
        }
        tokio::time::sleep(SETTLE).await;
        let mut total = Memory::default();
        for id in &made {
            let pid = procfs::worker_of_session(subject.pid, id)
                .with_context(|| format!("the worker of session {id} was not found"))?;
            total = total + bench_support::ensure_plausible(bench_support::memory_of(pid)?)?;
        }
        anyhow::Ok(total)
    }
    .await;
    for id in &made {
        subject.destroy_session(id).await;
    }
    let total = measured?;
    let workers = count.max(1) as u64;
    Ok(Value::Memory {
        memory: Memory {
            rss_bytes: total.rss_bytes / workers,
            pss_bytes: total.pss_bytes / workers,
        },
        processes: 1,
    })
}

/// One idle session for [`density`]: created and given one trivial call. A refusal comes back
/// as its text (a JSON-RPC error's message and data, or a failed result's error).
async fn admit(subject: &Subject, lang: Lang) -> Result<String, String> {
    let id = subject.next_session_id(lang);
    let create = subject
        .session_arguments(lang, &id)
        .map_err(|e| e.to_string())?;
    match subject.client.call_rpc("create_session", create).await {
        Ok(Ok(reply)) if !reply.is_error => {}
        Ok(Ok(reply)) => {
            let kind = reply.value["error_type"].as_str().unwrap_or("error");
            let message = reply.value["error_message"].as_str().unwrap_or(&reply.text);
            return Err(format!("create_session: {kind}: {message}"));
        }
        Ok(Err(error)) => {
            let data = error.data.map(|d| format!(" {d}")).unwrap_or_default();
            return Err(format!("create_session: {}{data}", error.message));
        }
        Err(error) => return Err(format!("create_session: {error:#}")),
    }
    if let Err(error) = subject.run(lang, lang.trivial, Some(&id)).await {
        subject.destroy_session(&id).await;
        return Err(format!("first call: {error:#}"));
    }
    Ok(id)
}
