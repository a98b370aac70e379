//! Durable sessions (`SANDBOX_DURABLE_SESSIONS=1`): a server killed with SIGKILL, or ended
//! with SIGTERM, leaves its sessions in its state directory, and a new server on that directory
//! gives them back to their owners with every variable, file and checkpoint: over HTTP to the
//! principals of a tokens file, on stdio to the stdio client. A session of an HTTP client
//! without a principal (the shared token) ends with its server, as without the setting.

use std::io::Write;

use anyhow::{Result, ensure};
use sandbox_tests::{Client, HttpServer, HttpStart, Reply, Server};
use serde_json::json;

use crate::sessions_as_values::{JS_PROBE, JS_STATE, PYTHON_PROBE, PYTHON_STATE};

const ALICE: &str = "alice-durable-token-71c3";
const BOB: &str = "bob-durable-token-a0e2";
const SHARED: &str = "shared-durable-token-5d8f";

async fn run(client: &Client, language: &str, session: &str, code: &str) -> Result<Reply> {
    let reply = client
        .exec(language, code, json!({ "session_id": session }))
        .await?;
    ensure!(!reply.is_error, "{code}\n-> {reply:?}");
    Ok(reply)
}

/// A reply that resumed a kept session: it says the worker is new and the state came back.
fn ensure_resumed(reply: &Reply) -> Result<()> {
    ensure!(reply.bool("session_restarted"), "{reply:?}");
    ensure!(reply.str("state_after_restart") == "resumed", "{reply:?}");
    Ok(())
}

async fn start(state_dir: &std::path::Path, env: &[(&str, &str)]) -> Result<HttpServer> {
    let mut all = vec![
        ("SANDBOX_DURABLE_SESSIONS".to_owned(), "1".to_owned()),
        // No idle worker is needed, and none is left behind by a kill.
        ("SANDBOX_WORKER_POOL".to_owned(), "0".to_owned()),
    ];
    all.extend(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    HttpServer::start_with(HttpStart {
        env: all,
        state_dir: Some(state_dir.to_owned()),
        ..HttpStart::default()
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_principals_sessions_survive_a_sigkill_and_a_sigterm_of_the_server() -> Result<()> {
    let scratch = tempfile::tempdir()?;
    let state_dir = scratch.path().join("state");
    let mut tokens = tempfile::NamedTempFile::new()?;
    writeln!(tokens, "alice:{ALICE}\nbob:{BOB}")?;
    tokens.flush()?;
    let tokens_path = tokens.path().to_str().unwrap().to_owned();
    let env = [("SANDBOX_HTTP_TOKENS_FILE", tokens_path.as_str())];

    let first = start(&state_dir, &env).await?;
    let alice = first.connect(Some(ALICE)).await?;
    run(&alice, "python", "py", PYTHON_STATE).await?;
    let saved = alice
        .call(
            "checkpoint_session",
            json!({ "session_id": "py", "label": "numbers ready" }),
        )
        .await?;
    ensure!(!saved.is_error, "{saved:?}");
    let checkpoint_id = saved.str("checkpoint_id").to_owned();
    run(
        &alice,
        "python",
        "py",
        "x = 1000\nopen('notes.txt', 'w').write('second')",
    )
    .await?;
    run(&alice, "javascript", "js", JS_STATE).await?;
    // Made but never used: it comes back too.
    let made = alice
        .call(
            "create_session",
            json!({ "session_id": "empty", "language": "python" }),
        )
        .await?;
    ensure!(!made.is_error, "{made:?}");
    let status = first.end_with("KILL").await?;
    ensure!(!status.success(), "SIGKILL: {status:?}");

    let second = start(&state_dir, &env).await?;
    let alice = second.connect(Some(ALICE)).await?;
    let probe = run(&alice, "python", "py", PYTHON_PROBE).await?;
    ensure_resumed(&probe)?;
    ensure!(
        probe.str("stdout") == "1001 2 3 25 90 1 False second ['notes.txt']\n",
        "{probe:?}"
    );
    let js = run(&alice, "javascript", "js", JS_PROBE).await?;
    ensure_resumed(&js)?;
    ensure!(js.str("stdout") == "6 2 true\n", "{js:?}");
    let empty = run(&alice, "python", "empty", "print('x' in globals())").await?;
    ensure!(empty.str("stdout") == "False\n", "{empty:?}");

    // The checkpoint came back with its label, and restores the state it saved.
    let info = alice
        .call("get_workspace_info", json!({ "session_id": "py" }))
        .await?;
    let listed = info.list("checkpoints");
    ensure!(listed.len() == 1, "{info:?}");
    ensure!(listed[0]["checkpoint_id"] == checkpoint_id.as_str());
    ensure!(listed[0]["label"] == "numbers ready");
    let restored = alice
        .call(
            "restore_session",
            json!({ "session_id": "py", "checkpoint_id": checkpoint_id }),
        )
        .await?;
    ensure!(!restored.is_error, "{restored:?}");
    let back = run(&alice, "python", "py", PYTHON_PROBE).await?;
    // The checkpoint was taken with bump() at 1 and the generator at 2.
    ensure!(
        back.str("stdout") == "42 2 3 25 90 1 False first ['notes.txt']\n",
        "{back:?}"
    );

    // Another principal still sees none of it.
    let bob = second.connect(Some(BOB)).await?;
    let foreign = bob
        .exec(
            "python",
            "print('add' in globals())",
            json!({ "session_id": "py" }),
        )
        .await?;
    ensure!(foreign.str("stdout") == "False\n", "{foreign:?}");

    // A graceful stop keeps the sessions as the last call left them.
    run(&alice, "python", "py", "x = 7").await?;
    run(&alice, "javascript", "js", "box.v = 40").await?;
    let status = second.end_with("TERM").await?;
    ensure!(status.success(), "SIGTERM: {status:?}");

    let third = start(&state_dir, &env).await?;
    let alice = third.connect(Some(ALICE)).await?;
    let probe = run(&alice, "python", "py", "print(add(1), bump())").await?;
    ensure_resumed(&probe)?;
    ensure!(probe.str("stdout") == "8 3\n", "{probe:?}");
    let js = run(&alice, "javascript", "js", JS_PROBE).await?;
    ensure!(js.str("stdout") == "41 3 true\n", "{js:?}");
    // Destroyed for good: the next server has nothing of it.
    let destroyed = alice
        .call("destroy_session", json!({ "session_id": "js" }))
        .await?;
    ensure!(!destroyed.is_error, "{destroyed:?}");
    third.end_with("KILL").await?;
    let fourth = start(&state_dir, &env).await?;
    let alice = fourth.connect(Some(ALICE)).await?;
    let gone = alice
        .exec(
            "javascript",
            "console.log(typeof box)",
            json!({ "session_id": "js" }),
        )
        .await?;
    ensure!(gone.str("stdout") == "undefined\n", "{gone:?}");
    ensure!(!gone.bool("session_restarted"), "{gone:?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_of_clients_without_a_principal_end_with_the_server() -> Result<()> {
    let scratch = tempfile::tempdir()?;
    let state_dir = scratch.path().join("state");
    let env = [("SANDBOX_HTTP_TOKEN", SHARED)];
    let first = start(&state_dir, &env).await?;
    let client = first.connect(Some(SHARED)).await?;
    run(
        &client,
        "python",
        "mine",
        "secret = 1\nopen('f.txt', 'w').write('x')",
    )
    .await?;
    first.end_with("KILL").await?;

    let second = start(&state_dir, &env).await?;
    let sessions = std::fs::read_dir(state_dir.join("sessions"))?.count();
    ensure!(sessions == 0, "{sessions} session directories were kept");
    let client = second.connect(Some(SHARED)).await?;
    let reply = client
        .exec(
            "python",
            "print('secret' in globals())",
            json!({ "session_id": "mine" }),
        )
        .await?;
    ensure!(reply.str("stdout") == "False\n", "{reply:?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_stdio_clients_sessions_survive_a_restart() -> Result<()> {
    let scratch = tempfile::tempdir()?;
    let state_dir = scratch.path().join("state");
    let dir = state_dir.to_str().unwrap();
    let env = [
        ("SANDBOX_DURABLE_SESSIONS", "1"),
        ("SANDBOX_STATE_DIR", dir),
        ("SANDBOX_WORKER_POOL", "0"),
    ];
    let first = Server::start_with_env(&env).await?;
    run(
        &first,
        "python",
        "notebook",
        "total = sum(range(10))\nsquare = lambda v: v * v",
    )
    .await?;
    let pid = first.pid;
    first.stop().await?;
    let exited = sandbox_tests::eventually(std::time::Duration::from_secs(20), || {
        !sandbox_tests::procfs::alive(pid)
    })
    .await;
    ensure!(
        exited,
        "the first server did not exit after its client left"
    );

    let second = Server::start_with_env(&env).await?;
    let reply = run(&second, "python", "notebook", "print(square(total))").await?;
    ensure_resumed(&reply)?;
    ensure!(reply.str("stdout") == "2025\n", "{reply:?}");
    second.stop().await
}
