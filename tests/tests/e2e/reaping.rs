//! Nothing left behind: a worker that dies while its session is idle is reaped at once (no
//! zombie waits for the session's next call, which then reports the restart); a server killed
//! with SIGKILL leaves its state directory, and the next server started in the same place
//! removes it (default location in $TMPDIR, or the same SANDBOX_STATE_DIR); a live server's
//! directory and another user's are never touched, and two servers cannot share one (the
//! second says why).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use sandbox_tests::host::{self, Snapshot};
use sandbox_tests::{Server, eventually, pinned_pool, procfs, server_binary};
use serde_json::json;

/// The state of `pid` in /proc (`'Z'` for a zombie), if it exists.
fn state_of(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?.1.chars().next()
}

/// For both kinds of worker a session can have, each pinned (never left to chance): one it
/// started itself (no pool), and a pre-started one it adopted (the test waits for the pool).
#[tokio::test(flavor = "multi_thread")]
async fn a_worker_that_dies_while_idle_is_reaped_at_once() -> Result<()> {
    for adopted in [false, true] {
        idle_death_is_reaped(adopted)
            .await
            .with_context(|| format!("adopted: {adopted}"))?;
    }
    Ok(())
}

async fn idle_death_is_reaped(adopted: bool) -> Result<()> {
    let server = Server::start_with_env(&[pinned_pool(adopted)]).await?;
    let pid = server.first_call("idle", adopted, "kept = 1").await?;
    // Idle: the call's state kept (it is kept just behind the answer).
    server.settled("idle").await?;
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
    // The next call's new worker resumes the session's state and says why.
    let next = server
        .exec(
            "python",
            "'kept' in globals()",
            json!({ "session_id": "idle" }),
        )
        .await?;
    ensure!(!next.is_error, "{next:?}");
    assert_eq!(next.str("result"), "True");
    ensure!(next.bool("session_restarted"), "{next:?}");
    assert_eq!(next.str("state_after_restart"), "resumed");
    ensure!(
        next.str("restart_reason").contains("died while idle"),
        "{}",
        next.str("restart_reason")
    );
    server.stop().await
}

/// Starts a server (without a pool, which these tests do not need) whose state directory is
/// the default one in `tmpdir`; returns it with its state directory.
async fn default_location_server(tmpdir: &std::path::Path) -> Result<(Server, PathBuf)> {
    default_location_server_as(None, tmpdir).await
}

/// [`default_location_server`] run as `uid` (root only).
async fn default_location_server_as(
    uid: Option<u32>,
    tmpdir: &std::path::Path,
) -> Result<(Server, PathBuf)> {
    let tmpdir = tmpdir.to_string_lossy().into_owned();
    // An empty SANDBOX_STATE_DIR means unset: the server picks $TMPDIR/sandbox-mcp-<pid>.
    let server = Server::start_as(
        uid,
        &[
            ("SANDBOX_STATE_DIR", ""),
            ("TMPDIR", &tmpdir),
            ("SANDBOX_WORKER_POOL", "0"),
        ],
    )
    .await?;
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
    let env = [
        ("SANDBOX_STATE_DIR", state_text.as_str()),
        ("SANDBOX_WORKER_POOL", "0"),
    ];
    let first = Server::start_with_env(&env).await?;
    first
        .python("work", "open('user-data.txt', 'w').write('private')")
        .await?;
    let leftover = sandbox_tests::host::workspace_of(&state, "work").context("workspace")?;
    // A second server on the same directory refuses to start, and says why. (Its stdin is
    // closed: a server that did start would read EOF and exit without that message.)
    let second = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::process::Command::new(server_binary())
            .envs(env)
            .env("RUST_LOG", "warn")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .output(),
    )
    .await
    .context("the second server did not exit within 30 s")??;
    let stderr = String::from_utf8_lossy(&second.stderr);
    ensure!(
        !second.status.success()
            && stderr.contains(&format!(
                "the state directory is in use by another sandbox-mcp (pid {})",
                first.pid
            )),
        "two servers shared one state directory, or the refusal does not say so: {}\n{stderr}",
        second.status
    );
    ensure!(leftover.join("user-data.txt").is_file());
    ensure!(procfs::signal(first.pid, "KILL"));
    ensure!(eventually(Duration::from_secs(5), || !procfs::alive(first.pid)).await);
    ensure!(
        leftover.join("user-data.txt").is_file(),
        "SIGKILL leaves it"
    );
    // The next server on that directory clears what the dead one left.
    let next = Server::start_with_env(&env).await?;
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

/// The sweep of dead servers' directories touches only this user's: a SIGKILLed server of
/// another user (`nobody`) leaves a state directory of the same name pattern, private, with a
/// free lock, that root could delete; the next server sweeps its own user's dead directory
/// (the control) and leaves that one exactly as it was.
#[tokio::test(flavor = "multi_thread")]
async fn the_sweep_never_touches_another_users_state_directory() -> Result<()> {
    const NOBODY: u32 = 65534;
    host::require_root("starting a server as another user")?;
    let tmpdir = tempfile::tempdir()?;
    // Like /tmp: anyone may create directories there, and only remove their own.
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(tmpdir.path(), std::fs::Permissions::from_mode(0o1777))?;
    }
    let (ours, our_dir) = default_location_server(tmpdir.path()).await?;
    let (theirs, their_dir) = default_location_server_as(Some(NOBODY), tmpdir.path()).await?;
    theirs
        .python("work", "open('user-data.txt', 'w').write('theirs')")
        .await?;
    for server in [&ours, &theirs] {
        ensure!(procfs::signal(server.pid, "KILL"));
        ensure!(eventually(Duration::from_secs(5), || !procfs::alive(server.pid)).await);
    }
    // Their workers die with their server (PDEATHSIG); none may still be writing there.
    let theirs_text = their_dir.to_string_lossy().into_owned();
    ensure!(
        eventually(Duration::from_secs(5), || procfs::all_workers()
            .iter()
            .all(|w| !procfs::cmdline(*w).contains(&theirs_text)))
        .await,
        "the dead server's workers are gone"
    );
    {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::symlink_metadata(&their_dir)?;
        ensure!(
            meta.uid() == NOBODY && meta.mode() & 0o077 == 0,
            "a private directory of nobody's: {meta:?}"
        );
    }
    let before = Snapshot::of(&their_dir);
    ensure!(
        before
            .paths()
            .iter()
            .any(|p| p.ends_with("app/user-data.txt")),
        "{before:?}"
    );
    let (next, _) = default_location_server(tmpdir.path()).await?;
    ensure!(
        eventually(Duration::from_secs(10), || !our_dir.exists()).await,
        "our own dead server's directory is swept (the control)"
    );
    ensure!(
        Snapshot::of(&their_dir) == before,
        "another user's directory was touched"
    );
    next.stop().await?;
    drop((ours, theirs));
    Ok(())
}
