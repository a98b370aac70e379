//! The supervisor as a supervisor: jailed workers, cancel, ordering, reaping, admission, hard
//! kills and shutdown, each shown with real processes (read from /proc).

use std::time::{Duration, Instant};

use sandbox_tests::procfs::alive;
use sandbox_tests::{Server, eventually, procfs};
use serde_json::json;

fn limit_of(pid: u32, name: &str) -> String {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap_or_default();
    let line = limits
        .lines()
        .find(|l| l.starts_with(name))
        .unwrap_or_default()
        .to_owned();
    // "Max data size   1342177280   1342177280   bytes": the soft limit.
    line[name.len()..]
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn workers_are_jailed() -> anyhow::Result<()> {
    let server = Server::start().await?;
    server
        .exec("python", "1", json!({ "session_id": "jailed" }))
        .await?;
    server
        .call(
            "create_session",
            json!({ "language": "javascript", "session_id": "big", "flavor": "medium" }),
        )
        .await?;
    server
        .exec("javascript", "1", json!({ "session_id": "big" }))
        .await?;
    let py = procfs::worker_of_session(server.pid, "jailed").expect("python worker");
    let js = procfs::worker_of_session(server.pid, "big").expect("javascript worker");

    assert_eq!(
        limit_of(py, "Max data size"),
        ((1u64 << 30) + (256 << 20)).to_string()
    );
    assert_eq!(
        limit_of(js, "Max data size"),
        (2 * (2u64 << 30) + (256 << 20)).to_string()
    );
    assert_eq!(limit_of(py, "Max open files"), "256");
    assert_eq!(limit_of(py, "Max core file size"), "0");
    assert_eq!(limit_of(py, "Max file size"), (256u64 << 20).to_string());
    assert_eq!(limit_of(js, "Max file size"), (1u64 << 30).to_string());
    assert_eq!(limit_of(py, "Max cpu time"), "14400");

    let status = std::fs::read_to_string(format!("/proc/{py}/status"))?;
    assert!(
        status
            .lines()
            .any(|l| l.starts_with("NoNewPrivs:") && l.ends_with('1')),
        "{status}"
    );
    let stat = std::fs::read_to_string(format!("/proc/{py}/stat"))?;
    let pgrp: u32 = stat
        .rsplit_once(") ")
        .unwrap()
        .1
        .split_whitespace()
        .nth(2)
        .unwrap()
        .parse()?;
    assert_eq!(pgrp, py, "each worker leads its own process group");
    let environ = std::fs::read(format!("/proc/{py}/environ"))?;
    let keys: Vec<String> = environ
        .split(|b| *b == 0)
        .filter(|e| !e.is_empty())
        .map(|e| {
            String::from_utf8_lossy(e)
                .split('=')
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert!(
        keys.iter().all(|k| k == "RUST_LOG"),
        "only allow-listed variables reach a worker: {keys:?}"
    );
    let stdout = std::fs::read_link(format!("/proc/{py}/fd/1"))?;
    assert_eq!(
        stdout,
        std::path::Path::new("/dev/null"),
        "a worker never holds the MCP channel"
    );

    // The per-file disk cap bites as an error the guest sees, not a dead worker.
    let big_file = server
        .exec(
            "python",
            "chunk = bytes(1 << 20)\nwith open('big.bin', 'wb') as f:\n    for _ in range(300):\n        f.write(chunk)",
            json!({ "session_id": "jailed" }),
        )
        .await?;
    assert!(big_file.is_error, "{big_file:?}");
    assert!(
        big_file.str("error_message").contains("File too large"),
        "{big_file:?}"
    );
    let alive = server
        .exec(
            "python",
            "import os\nos.remove('big.bin')\n'ok'",
            json!({ "session_id": "jailed" }),
        )
        .await?;
    assert_eq!(alive.str("result"), "'ok'");

    let runtimes = server.call("list_runtimes", json!({})).await?;
    assert!(
        runtimes.value["health"]["cgroups"]
            .as_str()
            .unwrap()
            .contains("cgroup")
    );
    assert_eq!(
        runtimes.value["flavors"]["large"]["memory_bytes"],
        4u64 << 30
    );
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn cancel_stops_running_and_queued_executions() -> anyhow::Result<()> {
    let server = std::sync::Arc::new(Server::start().await?);
    server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "c", "fuel_budget": 1_000_000_000_000u64 }),
        )
        .await?;
    server
        .exec("python", "n = 0", json!({ "session_id": "c" }))
        .await?;
    let seen = server.progress_messages().len();
    let running = {
        let server = server.clone();
        tokio::spawn(async move {
            server
                .exec_with_progress(
                    "python",
                    "while True:\n    n += 1",
                    json!({ "session_id": "c", "timeout": 60 }),
                    "spin",
                )
                .await
        })
    };
    assert!(
        eventually(Duration::from_secs(5), || server.progress_messages().len()
            > seen)
        .await,
        "a progress notification names the execution"
    );
    let queued = {
        let server = server.clone();
        tokio::spawn(async move {
            server
                .exec("python", "n = -1", json!({ "session_id": "c" }))
                .await
        })
    };
    let message = server.progress_messages()[seen].clone();
    let execution_id = message
        .split_whitespace()
        .nth(1)
        .expect("execution id")
        .to_owned();
    assert!(execution_id.starts_with("exec-"), "{message}");

    let started = Instant::now();
    let cancelled = server
        .call("cancel_execution", json!({ "execution_id": execution_id }))
        .await?;
    assert!(
        cancelled.bool("cancelled"),
        "{cancelled:?} {:?}",
        server.progress_messages()
    );
    assert_eq!(cancelled.str("status"), "cancelled");
    assert!(started.elapsed() < Duration::from_secs(3));
    let spin = running.await??;
    assert_eq!(spin.str("error_type"), "cancelled", "{spin:?}");
    assert!(
        !spin.bool("session_restarted"),
        "a cancel keeps the session"
    );
    // The queued execution ran after the cancel.
    assert!(!queued.await??.is_error);
    let n = server
        .exec("python", "n", json!({ "session_id": "c" }))
        .await?;
    assert_eq!(n.str("result"), "-1");

    let again = server
        .call("cancel_execution", json!({ "execution_id": execution_id }))
        .await?;
    assert!(!again.bool("cancelled"));
    assert_eq!(again.str("status"), "already_finished");
    assert!(
        server
            .call("cancel_execution", json!({ "execution_id": "exec-nope" }))
            .await
            .is_err()
    );

    // Abandoning a request makes the client send notifications/cancelled: the loop stops.
    let abandoned = tokio::time::timeout(
        Duration::from_millis(500),
        server.exec(
            "python",
            "while True:\n    n += 1",
            json!({ "session_id": "c", "timeout": 60 }),
        ),
    )
    .await;
    assert!(abandoned.is_err(), "still running when abandoned");
    let started = Instant::now();
    let next = server
        .exec("python", "n > 0", json!({ "session_id": "c" }))
        .await?;
    assert_eq!(next.str("result"), "True", "{next:?}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the abandoned loop was stopped: {:?}",
        started.elapsed()
    );
    std::sync::Arc::into_inner(server)
        .expect("sole owner")
        .stop()
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn one_session_queues_in_order_while_sessions_run_in_parallel() -> anyhow::Result<()> {
    let server = std::sync::Arc::new(Server::start().await?);
    server
        .exec(
            "python",
            "import time\nlog = []",
            json!({ "session_id": "q" }),
        )
        .await?;
    server
        .exec("python", "import time", json!({ "session_id": "p" }))
        .await?;
    let mut calls = Vec::new();
    for i in 0..5 {
        let server = server.clone();
        calls.push(tokio::spawn(async move {
            server
                .exec(
                    "python",
                    &format!("time.sleep(0.1)\nlog.append({i})"),
                    json!({ "session_id": "q" }),
                )
                .await
        }));
        tokio::time::sleep(Duration::from_millis(15)).await;
    }
    for call in calls {
        assert!(!call.await??.is_error);
    }
    let log = server
        .exec("python", "log", json!({ "session_id": "q" }))
        .await?;
    assert_eq!(log.str("result"), "[0, 1, 2, 3, 4]", "arrival order");

    let started = Instant::now();
    let (a, b) = tokio::join!(
        server.exec("python", "time.sleep(1)", json!({ "session_id": "q" })),
        server.exec("python", "time.sleep(1)", json!({ "session_id": "p" })),
    );
    assert!(!a?.is_error && !b?.is_error);
    assert!(
        started.elapsed() < Duration::from_millis(1800),
        "two sessions overlap: {:?}",
        started.elapsed()
    );
    std::sync::Arc::into_inner(server)
        .expect("sole owner")
        .stop()
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn idle_sessions_expire_with_their_files() -> anyhow::Result<()> {
    let server = Server::start_with_env(&[("SANDBOX_SESSION_TTL_SECS", "1")]).await?;
    let first = server
        .exec(
            "python",
            "open('f.txt', 'w').write('x')",
            json!({ "session_id": "brief" }),
        )
        .await?;
    assert!(!first.is_error);
    let expires = first.str("expires_at").to_owned();
    assert!(expires.ends_with('Z'), "{expires}");
    let workspace = server
        .workspace_of("brief")
        .expect("the session's workspace");
    assert!(workspace.join("f.txt").is_file());
    let pid = procfs::worker_of_session(server.pid, "brief").expect("worker");
    assert!(
        eventually(Duration::from_secs(5), || !workspace.exists()).await,
        "reaped"
    );
    assert!(
        eventually(Duration::from_secs(2), || !procfs::all_workers()
            .contains(&pid))
        .await
    );
    let late = server
        .exec("python", "1", json!({ "session_id": "brief" }))
        .await?;
    assert!(late.is_error);
    assert_eq!(late.str("error_type"), "invalid_session", "{late:?}");
    assert!(late.str("error_message").contains("expired"));
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn admission_refuses_beyond_capacity_and_harms_nobody() -> anyhow::Result<()> {
    let server = Server::start_with_env(&[
        ("SANDBOX_MAX_SESSIONS", "2"),
        ("SANDBOX_MEMORY_BUDGET_BYTES", &(5u64 << 29).to_string()),
    ])
    .await?;
    server
        .exec("python", "kept = 1", json!({ "session_id": "one" }))
        .await?;
    let medium = server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "two", "flavor": "medium" }),
        )
        .await?;
    assert!(
        medium.is_error,
        "1 GiB + 2 GiB exceed the 2.5 GiB budget: {medium:?}"
    );
    assert_eq!(medium.str("error_type"), "resources_exhausted");
    let created = server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "two" }),
        )
        .await?;
    assert!(!created.is_error, "{created:?}");
    let refused = server
        .exec("javascript", "1", json!({ "session_id": "three" }))
        .await?;
    assert!(refused.is_error);
    assert_eq!(
        refused.str("error_type"),
        "resources_exhausted",
        "{refused:?}"
    );
    assert!(refused.str("error_message").contains("destroy_session"));
    let full = server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "four" }),
        )
        .await?;
    assert_eq!(full.str("error_type"), "resources_exhausted");
    assert_eq!(full.value["usage"]["sessions"], 2);
    let kept = server
        .exec("python", "kept", json!({ "session_id": "one" }))
        .await?;
    assert_eq!(kept.str("result"), "1", "running sessions are unharmed");
    server
        .call("destroy_session", json!({ "session_id": "two" }))
        .await?;
    let room = server
        .exec("javascript", "2", json!({ "session_id": "three" }))
        .await?;
    assert!(!room.is_error, "capacity is back after a destroy: {room:?}");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hung_worker_is_killed_and_replaced() -> anyhow::Result<()> {
    let server = std::sync::Arc::new(Server::start().await?);
    server
        .exec("python", "x = 1", json!({ "session_id": "hang" }))
        .await?;
    let pid = procfs::worker_of_session(server.pid, "hang").expect("worker");
    let call = {
        let server = server.clone();
        tokio::spawn(async move {
            server
                .exec(
                    "python",
                    "import time\ntime.sleep(5)",
                    json!({ "session_id": "hang", "timeout": 1 }),
                )
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        procfs::signal(pid, "STOP"),
        "freeze the worker: it can no longer answer"
    );
    let started = Instant::now();
    let reply = call.await??;
    assert_eq!(reply.str("error_type"), "timeout", "{reply:?}");
    assert!(reply.bool("worker_killed"), "{reply:?}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(
        eventually(Duration::from_secs(2), || !procfs::all_workers()
            .contains(&pid))
        .await,
        "killed and reaped"
    );
    let next = server
        .exec(
            "python",
            "'x' in globals()",
            json!({ "session_id": "hang" }),
        )
        .await?;
    assert!(next.bool("session_restarted"));
    assert_eq!(next.str("result"), "False");
    std::sync::Arc::into_inner(server)
        .expect("sole owner")
        .stop()
        .await
}

/// Starts a server with a few live workers and returns it with their pids.
async fn busy_server() -> anyhow::Result<(Server, Vec<u32>)> {
    let server = Server::start().await?;
    for (i, language) in ["python", "javascript", "python"].iter().enumerate() {
        server
            .exec(language, "1", json!({ "session_id": format!("s{i}") }))
            .await?;
    }
    let workers: Vec<u32> = procfs::workers_of(server.pid)
        .into_iter()
        .map(|(pid, _)| pid)
        .collect();
    assert_eq!(workers.len(), 3);
    Ok((server, workers))
}

#[tokio::test(flavor = "multi_thread")]
async fn stdin_eof_shuts_down_cleanly() -> anyhow::Result<()> {
    let (server, workers) = busy_server().await?;
    let (pid, state_dir) = (server.pid, server.state_dir.clone());
    assert!(server.workspace_of("s0").is_some_and(|w| w.is_dir()));
    let started = Instant::now();
    server.stop().await?;
    assert!(
        eventually(Duration::from_secs(2), || !alive(pid)).await,
        "server exits within 2 s"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(workers.iter().all(|w| !alive(*w)), "no worker survives");
    assert!(!state_dir.exists(), "sockets and workspaces are removed");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_shuts_down_cleanly() -> anyhow::Result<()> {
    let (server, workers) = busy_server().await?;
    assert!(procfs::signal(server.pid, "TERM"));
    assert!(
        eventually(Duration::from_secs(2), || !alive(server.pid)).await,
        "server exits within 2 s"
    );
    assert!(workers.iter().all(|w| !alive(*w)));
    assert!(!server.state_dir.exists());
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_supervisor_leaves_no_worker_behind() -> anyhow::Result<()> {
    let (server, workers) = busy_server().await?;
    assert!(procfs::signal(server.pid, "KILL"));
    assert!(
        eventually(Duration::from_secs(2), || workers
            .iter()
            .all(|w| !alive(*w)))
        .await,
        "PDEATHSIG and socket EOF end every worker"
    );
    Ok(())
}
