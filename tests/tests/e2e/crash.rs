//! A worker killed mid-call: the call gets a clean `worker_crashed` answer, the next call
//! resumes the session from its state before that call and says so, other sessions and the MCP
//! stream are untouched.

use std::time::Duration;

use sandbox_tests::{Server, eventually, procfs};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn killing_a_worker_mid_call_is_a_clean_error() -> anyhow::Result<()> {
    let server = std::sync::Arc::new(Server::start().await?);
    server
        .exec(
            "python",
            "bystander = 'fine'",
            json!({ "session_id": "bystander" }),
        )
        .await?;
    server
        .exec("python", "doomed = 1", json!({ "session_id": "victim" }))
        .await?;
    let pid =
        procfs::worker_of_session(server.pid, "victim").expect("the victim's worker is running");

    let started = server
        .workspace_of("victim")
        .expect("the victim's workspace")
        .join("started");
    let call = {
        let server = server.clone();
        tokio::spawn(async move {
            server
                .exec(
                    "python",
                    "import time\nopen('started', 'w').close()\ntime.sleep(20)",
                    json!({ "session_id": "victim", "timeout": 60 }),
                )
                .await
        })
    };
    // Killed mid-call: the worker has started the execution.
    assert!(
        eventually(Duration::from_secs(10), || started.is_file()).await,
        "the execution started"
    );
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()?;
    assert!(killed.success());

    let crashed = tokio::time::timeout(Duration::from_secs(5), call).await???;
    assert!(crashed.is_error);
    assert_eq!(crashed.str("error_type"), "worker_crashed", "{crashed:?}");
    assert!(
        crashed.str("error_message").contains("SIGKILL"),
        "{crashed:?}"
    );
    assert_eq!(crashed.str("state_after_restart"), "rolled_back");

    let next = server
        .exec(
            "python",
            "('doomed' in globals(), 'started' in dir())",
            json!({ "session_id": "victim" }),
        )
        .await?;
    assert!(next.bool("session_restarted"), "{next:?}");
    assert_eq!(next.str("state_after_restart"), "resumed");
    assert_eq!(
        next.str("result"),
        "(True, False)",
        "the state before the crashed call"
    );
    assert_ne!(
        procfs::worker_of_session(server.pid, "victim"),
        Some(pid),
        "a new worker serves the session"
    );

    let other = server
        .exec("python", "bystander", json!({ "session_id": "bystander" }))
        .await?;
    assert_eq!(
        other.str("result"),
        "'fine'",
        "other sessions keep their state"
    );

    // No zombie: the killed worker was reaped.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    assert!(!stat.contains(") Z "), "worker {pid} left a zombie: {stat}");
    std::sync::Arc::into_inner(server)
        .expect("sole owner")
        .stop()
        .await
}

/// A call that lands on a worker killed an instant before (the server has not yet seen the
/// death) is never lost, nor is the session's state: the worker never took the call, so it runs
/// on a fresh worker that resumed the state after the last call that returned, and says so. Fifty rounds of "kill the idle worker,
/// call at once", for code and for command lines, in Python and JavaScript; every call runs.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_right_after_its_idle_worker_died_runs_on_a_fresh_worker() -> anyhow::Result<()> {
    // No pool: each round's fresh worker is a spawn, the same path whatever the timing.
    let server = Server::start_with_env(&[("SANDBOX_WORKER_POOL", "0")]).await?;
    let rounds = [
        ("python", "execute_code", 20),
        ("javascript", "execute_code", 15),
        ("python", "execute_command", 15),
    ];
    for (language, tool, count) in rounds {
        let session = format!("{language}-{tool}");
        let setup = match language {
            "python" => "kept = lambda n: n * 2",
            _ => "var kept = (n) => n * 2",
        };
        let first = server
            .exec(language, setup, json!({ "session_id": session }))
            .await?;
        assert!(!first.is_error, "{first:?}");
        for round in 0..count {
            // Idle: the previous call's state kept (it is kept just behind the answer).
            server.settled(&session).await?;
            let pid = procfs::worker_of_session(server.pid, &session)
                .unwrap_or_else(|| panic!("{session}: a worker before round {round}"));
            assert!(procfs::signal(pid, "KILL"), "SIGKILL to {pid}");
            let args = match tool {
                "execute_code" => json!({
                    "language": language, "session_id": session, "code": format!("kept({round})"),
                }),
                _ => json!({ "session_id": session, "command": format!("echo round {round}") }),
            };
            let reply = server.call(tool, args).await?;
            assert!(
                !reply.is_error,
                "{session} round {round}: the call was lost: {reply:?}"
            );
            match tool {
                "execute_code" => assert_eq!(reply.str("result"), (round * 2).to_string()),
                _ => assert_eq!(reply.str("stdout"), format!("round {round}\n")),
            }
            assert!(reply.bool("session_restarted"), "{reply:?}");
            assert!(
                reply.str("restart_reason").contains("died while idle"),
                "{reply:?}"
            );
            assert_eq!(reply.str("state_after_restart"), "resumed", "{reply:?}");
        }
    }
    server.stop().await
}

/// A call's state is kept just behind its answer: a worker killed in the moment after it
/// answered, before it sent the state that call left, takes that state with it. The answer
/// stands; the next call runs on a new worker from the state before that call and says so
/// (`rolled_back`, and why), instead of claiming the state the last call left.
#[tokio::test(flavor = "multi_thread")]
async fn a_worker_killed_before_it_sent_an_answered_calls_state_says_which_state_is_left()
-> anyhow::Result<()> {
    let server = Server::start().await?;
    let at = json!({ "session_id": "window", "timeout": 60 });
    let first = server.exec("python", "kept = 'first'", at.clone()).await?;
    assert!(!first.is_error, "{first:?}");
    server.settled("window").await?;
    let pid = procfs::worker_of_session(server.pid, "window").expect("its worker");
    // 160 MB of random bytes: a state that takes the worker far longer to send than the
    // kill below takes to land.
    let big = server
        .exec(
            "python",
            "import os\nbig = os.urandom(160 << 20)\nlen(big)",
            at.clone(),
        )
        .await?;
    assert!(procfs::signal(pid, "KILL"), "SIGKILL to {pid}");
    assert!(!big.is_error, "{big:?}");
    assert_eq!(big.str("result"), (160u64 << 20).to_string(), "{big:?}");

    let next = server
        .exec("python", "(kept, 'big' in globals())", at)
        .await?;
    assert!(!next.is_error, "{next:?}");
    assert_eq!(next.str("result"), "('first', False)", "{next:?}");
    assert!(next.bool("session_restarted"), "{next:?}");
    assert_eq!(next.str("state_after_restart"), "rolled_back", "{next:?}");
    let why = next.str("restart_reason");
    assert!(
        why.contains("before it sent the state that call left")
            && why.contains("the last call's changes"),
        "{next:?}"
    );
    server.stop().await
}
