//! Latency and throughput of code calls on a [`Subject`]: the first call of new sessions (paced
//! and in a burst), warm calls, first imports, and executions per second from concurrent tasks
//! on the one connection.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::subject::{Lang, Subject};

/// `create_session` on `lang` plus the first call of `code` in it, timed together. The session
/// stays for the caller to destroy (unless its call failed: then it is destroyed here).
async fn timed_new_session(
    subject: &Subject,
    lang: Lang,
    code: &str,
) -> Result<(String, Duration)> {
    let started = Instant::now();
    let id = subject.create_session(lang).await?;
    if let Err(error) = subject.run(lang, code, Some(&id)).await {
        subject.destroy_session(&id).await;
        return Err(error);
    }
    Ok((id, started.elapsed()))
}

/// `samples` new sessions, each timed from `create_session` to the end of its first call of
/// `code`, destroyed afterwards, each after the runtime's [`Lang::refill_pause`]. One unmeasured
/// session first, so loading the interpreter once is not counted.
///
/// # Errors
/// When a session cannot be created or its call fails.
pub async fn paced_new_sessions(
    subject: &Subject,
    lang: Lang,
    code: &str,
    samples: usize,
) -> Result<Vec<Duration>> {
    let (warm_up, _) = timed_new_session(subject, lang, code).await?;
    subject.destroy_session(&warm_up).await;
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples {
        tokio::time::sleep(lang.refill_pause).await;
        let (id, elapsed) = timed_new_session(subject, lang, code).await?;
        subject.destroy_session(&id).await;
        times.push(elapsed);
    }
    Ok(times)
}

/// `count` new sessions back to back, all kept until the last is timed (so none hands its
/// worker back): what a client opening many sessions at once meets once a pool is empty.
///
/// # Errors
/// When a session cannot be created or its call fails (the ones made are destroyed).
pub async fn burst_of_new_sessions(
    subject: &Subject,
    lang: Lang,
    count: usize,
) -> Result<Vec<Duration>> {
    tokio::time::sleep(lang.refill_pause).await;
    let mut made = Vec::with_capacity(count);
    let timed = async {
        let mut times = Vec::with_capacity(count);
        for _ in 0..count {
            let (id, elapsed) = timed_new_session(subject, lang, lang.trivial).await?;
            made.push(id);
            times.push(elapsed);
        }
        anyhow::Ok(times)
    }
    .await;
    for id in &made {
        subject.destroy_session(id).await;
    }
    timed
}

/// What warm calls measured: the time of each call, and the execution time each result
/// reported (`execution_time_ms`, when the server reports one).
pub struct WarmCalls {
    pub calls: Vec<Duration>,
    pub reported_executions: Vec<Duration>,
}

/// `iterations` calls of the trivial cell in one session (after 20 unmeasured ones), or on the
/// connection when the server has no sessions.
///
/// # Errors
/// When a call fails.
pub async fn warm_calls(subject: &Subject, lang: Lang, iterations: usize) -> Result<WarmCalls> {
    let session = subject.session_if_any(lang).await?;
    let measured = async {
        let mut warm = WarmCalls {
            calls: Vec::with_capacity(iterations),
            reported_executions: Vec::with_capacity(iterations),
        };
        for i in 0..iterations + 20 {
            let (result, elapsed) = subject.run(lang, lang.trivial, session.as_deref()).await?;
            if i < 20 {
                continue;
            }
            warm.calls.push(elapsed);
            let reported = result
                .structured_content
                .as_ref()
                .and_then(|s| s["execution_time_ms"].as_f64());
            warm.reported_executions
                .extend(reported.map(|ms| Duration::from_secs_f64(ms / 1000.0)));
        }
        anyhow::Ok(warm)
    }
    .await;
    if let Some(id) = &session {
        subject.destroy_session(id).await;
    }
    measured
}

/// `module` imported as the first code of `samples` new sessions (paced like
/// [`paced_new_sessions`]): the time of each import's call and the fuel the last one reported
/// (`fuel_consumed`; 0 when the server reports none).
///
/// # Errors
/// When a session cannot be created or the import fails.
pub async fn first_imports(
    subject: &Subject,
    lang: Lang,
    module: &str,
    samples: usize,
) -> Result<(Vec<Duration>, u64)> {
    let code = format!("import {module}");
    let mut times = Vec::with_capacity(samples);
    let mut fuel = 0;
    for _ in 0..samples {
        tokio::time::sleep(lang.refill_pause).await;
        let id = subject.create_session(lang).await?;
        let ran = subject.run(lang, &code, Some(&id)).await;
        subject.destroy_session(&id).await;
        let (result, elapsed) = ran.with_context(|| code.clone())?;
        fuel = result
            .structured_content
            .as_ref()
            .and_then(|s| s["fuel_consumed"].as_u64())
            .unwrap_or(0);
        times.push(elapsed);
    }
    Ok((times, fuel))
}

/// `code` run `samples` times in one session (after one run to warm it): how long each call
/// took and the fuel the last one reported. With default settings, so the figure shows what
/// a model's CPU-bound cell gets (issue 25: the timeout, not the fuel, must stop it).
///
/// # Errors
/// When a session cannot be had or a run fails.
pub async fn cpu_bound(
    subject: &Subject,
    lang: Lang,
    code: &str,
    samples: usize,
) -> Result<(Vec<Duration>, u64)> {
    let id = subject.create_session(lang).await?;
    let measured = async {
        let mut times = Vec::with_capacity(samples);
        let mut fuel = 0;
        for i in 0..=samples {
            let (result, elapsed) = subject.run(lang, code, Some(&id)).await?;
            fuel = result
                .structured_content
                .as_ref()
                .and_then(|s| s["fuel_consumed"].as_u64())
                .unwrap_or(0);
            if i > 0 {
                times.push(elapsed);
            }
        }
        Ok::<_, anyhow::Error>((times, fuel))
    }
    .await;
    subject.destroy_session(&id).await;
    measured.with_context(|| code.to_owned())
}

/// How a throughput run is shaped.
pub struct Load {
    /// Concurrent tasks, each with its own session when the server has sessions.
    pub tasks: usize,
    /// Run before counting, so sessions are warm and the pipeline is full.
    pub warm_up: Duration,
    /// How long executions are counted.
    pub window: Duration,
}

/// Trivial executions per second on `lang`: [`Load::tasks`] tasks on the one connection, each
/// issuing calls back to back (MCP lets a client have many requests outstanding on one
/// connection; rmcp's client matches replies by id, so nothing serialises them on our side).
/// Calls that finish inside the window are counted.
///
/// # Errors
/// When sessions cannot be created or a call fails.
pub async fn throughput(subject: &Arc<Subject>, lang: Lang, load: &Load) -> Result<f64> {
    let mut sessions = Vec::with_capacity(load.tasks);
    let counted = async {
        for _ in 0..load.tasks {
            sessions.push(subject.session_if_any(lang).await?);
        }
        drive(subject, lang, load, &sessions).await
    }
    .await;
    for id in sessions.iter().flatten() {
        subject.destroy_session(id).await;
    }
    Ok(counted? as f64 / load.window.as_secs_f64())
}

/// Runs one task per entry of `sessions` (a session, or `None` for the connection) until the
/// load's window ends, and returns how many calls finished inside the window.
async fn drive(
    subject: &Arc<Subject>,
    lang: Lang,
    load: &Load,
    sessions: &[Option<String>],
) -> Result<u64> {
    let counted = Arc::new(AtomicU64::new(0));
    let count_from = Instant::now() + load.warm_up;
    let end = count_from + load.window;
    let mut tasks = tokio::task::JoinSet::new();
    for session in sessions {
        let session = session.clone();
        let (subject, counted) = (Arc::clone(subject), Arc::clone(&counted));
        tasks.spawn(async move {
            loop {
                subject.run(lang, lang.trivial, session.as_deref()).await?;
                let now = Instant::now();
                if now > end {
                    return anyhow::Ok(());
                }
                if now >= count_from {
                    counted.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
    }
    let mut outcome = Ok(());
    while let Some(joined) = tasks.join_next().await {
        if let Err(error) = joined.context("a throughput task panicked").and_then(|r| r) {
            outcome = Err(error);
        }
    }
    outcome.map(|()| counted.load(Ordering::Relaxed))
}
