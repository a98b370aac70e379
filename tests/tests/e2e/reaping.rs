//! Nothing left behind: a worker that dies while its session is idle is reaped at once (no
//! zombie waits for the session's next call, which then reports the restart); a server killed
//! with SIGKILL leaves its state directory, and the next server started in the same place
//! removes it (default location in $TMPDIR, or the same SANDBOX_STATE_DIR); a live server's
//! directory is never touched, and two servers cannot share one.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use sandbox_tests::{Server, eventually, procfs};
use serde_json::json;

/// The state of `pid` in /proc (`'Z'` for a zombie), if it exists.
fn state_of(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?.1.chars().next()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_that_dies_while_idle_is_reaped_at_once() -> Result<()> {
    let server = Server::start().await?;
    server.python("idle", "kept = 1").await?;
    let pid = procfs::worker_of_session(server.pid, "idle").context("the worker runs")?;
    ensure!(procfs::signal(pid, "KILL"));
    // Reaped without any call to the session: the process is gone, not a zombie.
    let reaped = eventually(Duration::from_secs(5), || state_of(pid).is_none()).await;
    ensure!(
        reaped,
        "the dead worker {pid} is still there: state {:?}",
        state_of(pid)
    );
    ensure!(
        procfs::workers_of(server.pid)
            .iter()
            .all(|(_, s)| *s != 'Z'),
        "no zombie worker: {:?}",
        procfs::workers_of(server.pid)
    );
    // The next call starts a fresh interpreter and says why.
    let next = server
        .exec(
            "python",
            "'kept' in globals()",
            json!({ "session_id": "idle" }),
        )
        .await?;
    ensure!(!next.is_error, "{next:?}");
    assert_eq!(next.str("result"), "False");
    ensure!(next.bool("session_restarted"), "{next:?}");
    ensure!(
        next.str("restart_reason").contains("died while idle"),
        "{}",
        next.str("restart_reason")
    );
    server.stop().await
}

/// Starts a server whose state directory is the default one in `tmpdir`; returns it with its
/// state directory.
async fn default_location_server(tmpdir: &std::path::Path) -> Result<(Server, PathBuf)> {
    let tmpdir = tmpdir.to_string_lossy().into_owned();
    // An empty SANDBOX_STATE_DIR means unset: the server picks $TMPDIR/sandbox-mcp-<pid>.
    let server = Server::start_with_env(&[("SANDBOX_STATE_DIR", ""), ("TMPDIR", &tmpdir)]).await?;
    let dir = PathBuf::from(&tmpdir).join(format!("sandbox-mcp-{}", server.pid));
    ensure!(
        dir.is_dir(),
        "the default state directory {}",
        dir.display()
    );
    Ok((server, dir))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_servers_state_is_swept_by_the_next_one() -> Result<()> {
    let tmpdir = tempfile::tempdir()?;
    let (first, first_dir) = default_location_server(tmpdir.path()).await?;
    first
        .python("work", "open('user-data.txt', 'w').write('private')")
        .await?;
    let leftover =
        sandbox_tests::host::workspace_of(&first_dir, "work").context("the session's workspace")?;
    ensure!(leftover.join("user-data.txt").is_file());
    // A live server's directory survives another server's start.
    let (second, second_dir) = default_location_server(tmpdir.path()).await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    ensure!(
        first_dir.join("sessions").is_dir(),
        "a live server's state was swept"
    );
    // SIGKILL: no shutdown, so the state directory and the user's file stay behind.
    ensure!(procfs::signal(first.pid, "KILL"));
    ensure!(eventually(Duration::from_secs(5), || !procfs::alive(first.pid)).await);
    ensure!(
        leftover.join("user-data.txt").is_file(),
        "SIGKILL leaves it"
    );
    let (third, third_dir) = default_location_server(tmpdir.path()).await?;
    ensure!(
        eventually(Duration::from_secs(10), || !first_dir.exists()).await,
        "the dead server's state directory is swept"
    );
    ensure!(second_dir.join("sessions").is_dir() && third_dir.join("sessions").is_dir());
    second.stop().await?;
    third.stop().await?;
    drop(first);
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_state_directory_is_one_servers_and_cleared_for_the_next() -> Result<()> {
    let scratch = tempfile::tempdir()?;
    let state = scratch.path().join("state");
    let state_text = state.to_string_lossy().into_owned();
    let first = Server::start_with_env(&[("SANDBOX_STATE_DIR", &state_text)]).await?;
    first
        .python("work", "open('user-data.txt', 'w').write('private')")
        .await?;
    let leftover = sandbox_tests::host::workspace_of(&state, "work").context("workspace")?;
    // A second server on the same directory refuses to start.
    let second = Server::start_with_env(&[("SANDBOX_STATE_DIR", &state_text)]).await;
    ensure!(second.is_err(), "two servers shared one state directory");
    ensure!(leftover.join("user-data.txt").is_file());
    ensure!(procfs::signal(first.pid, "KILL"));
    ensure!(eventually(Duration::from_secs(5), || !procfs::alive(first.pid)).await);
    ensure!(
        leftover.join("user-data.txt").is_file(),
        "SIGKILL leaves it"
    );
    // The next server on that directory clears what the dead one left.
    let next = Server::start_with_env(&[("SANDBOX_STATE_DIR", &state_text)]).await?;
    ensure!(!leftover.exists(), "a dead server's sessions are cleared");
    let again = next
        .exec(
            "python",
            "import os\nos.listdir('.')",
            json!({ "session_id": "work" }),
        )
        .await?;
    assert_eq!(again.str("result"), "[]");
    next.stop().await?;
    drop(first);
    Ok(())
}
