//! Deleting what a guest built: `reset_workspace` and `destroy_session` succeed, in bounded
//! time, on workspaces holding links to victim directories and files, hard links to a victim
//! file, FIFOs, device nodes, `chmod 000` directories, 10^5 files and a chain of directories
//! 10^4 deep; they leave `/app` and `/tmp` empty (reset) or the session's host directory gone
//! (destroy), never touch anything a link points to, and a session re-created with the same id
//! starts empty. A session that adopted a pre-started worker keeps its files in that worker's
//! `_pooled.<key>` directory, which its `<id>.<key>` only links to: its destroy must remove
//! both, so each test says whether its sessions adopt one (never left to chance).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use sandbox_tests::host::{self, Snapshot, Victim};
use sandbox_tests::{Reply, Server, pinned_pool, procfs};
use serde_json::json;

/// Enough `..` to reach `/` from any workspace.
const TO_ROOT: &str = "../../../../../../../../../../../../../../..";

/// Time allowed for one reset or destroy of a pathological tree (generous for CI).
const BIG_TREE_LIMIT: Duration = Duration::from_secs(60);

/// Calls a deleting tool, failing on a JSON-RPC error, a tool error, or no answer in 120 s.
async fn delete(server: &Server, tool: &str, session: &str) -> Result<Reply> {
    let reply = tokio::time::timeout(
        Duration::from_secs(120),
        server.call(tool, json!({ "session_id": session })),
    )
    .await
    .with_context(|| format!("{tool} {session}: no answer in 120 s"))??;
    ensure!(!reply.is_error, "{tool} {session}: {reply:?}");
    server.host_paths().check_reply(tool, &reply);
    Ok(reply)
}

/// Entries below `dir` (not `dir` itself); links are not followed.
fn entries_below(dir: &Path) -> Vec<std::path::PathBuf> {
    Snapshot::of(dir)
        .paths()
        .into_iter()
        .filter(|p| !p.as_os_str().is_empty())
        .collect()
}

/// Fills a session with everything hostile that guest code and the host can plant: links out
/// of `/app` and `/tmp`, links and a hard link to the victim, a FIFO, a device node, and
/// `chmod 000` directories (made by the guest's shell and by the host).
async fn plant_hostile_tree(server: &Server, session: &str, victim: &Victim) -> Result<()> {
    server.python(session,
        "import os\nx = 41\nos.makedirs('a/b/c')\nopen('a/b/c/f.txt', 'w').write('f')\nopen('/tmp/t.txt', 'w').write('t')",
    )
    .await?;
    let app = server.workspace_of(session).context("workspace")?;
    let tmp = server.tmp_of(session).context("tmp")?;
    server.python(session,
        &format!(
            "import os\nos.symlink('{TO_ROOT}', 'up')\nos.symlink({:?}, 'a/vdir')\nos.symlink({:?}, 'vfile')\nos.symlink({:?}, '/tmp/vlink')\nos.symlink('{TO_ROOT}', '/tmp/up')",
            host::relative_path(&app.join("a"), &victim.path()).display(),
            host::relative_path(&app, &victim.file()).display(),
            host::relative_path(&tmp, &victim.path()).display(),
        ),
    )
    .await?;
    let shell = server
        .call(
            "execute_command",
            json!({
                "command": "mkdir -p locked/inner && echo x > locked/inner/f && chmod 000 locked/inner && chmod 000 locked",
                "session_id": session,
            }),
        )
        .await?;
    ensure!(!shell.is_error, "{shell:?}");
    std::os::unix::fs::symlink(victim.path(), app.join("abs_victim"))?;
    std::fs::hard_link(victim.file(), app.join("hl"))?;
    std::fs::hard_link(victim.file(), tmp.join("hl"))?;
    host::mkfifo(&app.join("fifo"))?;
    host::mkfifo(&tmp.join("fifo"))?;
    if host::is_root() {
        ensure!(host::mknod_char(&app.join("null"), 1, 3)?);
    }
    std::fs::create_dir_all(app.join("hostlocked/deeper"))?;
    std::fs::write(app.join("hostlocked/deeper/f"), "f")?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        app.join("hostlocked/deeper"),
        std::fs::Permissions::from_mode(0o000),
    )?;
    std::fs::set_permissions(
        app.join("hostlocked"),
        std::fs::Permissions::from_mode(0o000),
    )?;
    ensure!(app.join("up/etc/passwd").is_file(), "the links lead out");
    ensure!(app.join("a/vdir/secret.txt").is_file());
    ensure!(tmp.join("vlink/secret.txt").is_file());
    victim.assert_unchanged("planting");
    Ok(())
}

/// Destroys `session` and expects everything that held its files gone from the host: its
/// directories, and the directory it adopted with a pre-started worker, which its name only
/// links to.
async fn destroy_leaving_nothing(server: &Server, session: &str) -> Result<()> {
    let storage = host::session_storage(&server.state_dir, session);
    ensure!(
        !storage.is_empty(),
        "{session}: no host directory to destroy"
    );
    delete(server, "destroy_session", session).await?;
    let left = host::still_there(&storage);
    ensure!(
        left.is_empty(),
        "{session}: host directories left: {left:?}"
    );
    Ok(())
}

/// Expects a destroyed session to be gone from the host and a new session with its id to
/// start empty.
async fn assert_destroyed_and_reusable(server: &Server, session: &str) -> Result<()> {
    let left = host::host_dirs_of(&server.state_dir, session);
    ensure!(
        left.is_empty(),
        "{session}: host directories left: {left:?}"
    );
    let created = server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": session }),
        )
        .await?;
    ensure!(!created.is_error, "{created:?}");
    let info = server
        .call("get_workspace_info", json!({ "session_id": session }))
        .await?;
    ensure!(!info.is_error, "{info:?}");
    assert_eq!(info.value["files"], json!([]), "{session} starts empty");
    let fresh = server
        .python(session, "import os\n('x' in globals(), os.listdir('.'))")
        .await?;
    assert_eq!(fresh.str("result"), "(False, [])", "{session}: {fresh:?}");
    Ok(())
}

/// Starts a server whose sessions have directories of their own (`adopted: false`, no pool),
/// or adopt a pre-started worker with its directories (`adopted: true`, a pool of one Python
/// worker that [`Server::first_call`] waits for): which of the two a test exercises is never
/// left to chance.
async fn server_with(adopted: bool) -> Result<Server> {
    let server = Server::start_with_env(&[pinned_pool(adopted)]).await?;
    server.forbid_own_host_paths();
    Ok(server)
}

#[tokio::test(flavor = "multi_thread")]
async fn reset_and_destroy_remove_links_fifos_and_locked_dirs_without_following() -> Result<()> {
    for adopted in [false, true] {
        hostile_tree_reset_and_destroy(adopted)
            .await
            .with_context(|| format!("adopted: {adopted}"))?;
    }
    Ok(())
}

async fn hostile_tree_reset_and_destroy(adopted: bool) -> Result<()> {
    let victim = Victim::new()?;
    let server = server_with(adopted).await?;
    server.first_call("hostile", adopted, "pass").await?;

    plant_hostile_tree(&server, "hostile", &victim).await?;
    delete(&server, "reset_workspace", "hostile").await?;
    let app = server.workspace_of("hostile").context("workspace")?;
    let tmp = server.tmp_of("hostile").context("tmp")?;
    assert_eq!(
        entries_below(&app),
        Vec::<std::path::PathBuf>::new(),
        "/app is empty"
    );
    assert_eq!(
        entries_below(&tmp),
        Vec::<std::path::PathBuf>::new(),
        "/tmp is empty"
    );
    victim.assert_unchanged("reset");
    let after = server
        .python("hostile", "('x' in globals(), 6 * 7)")
        .await?;
    assert_eq!(
        after.str("result"),
        "(False, 42)",
        "the session keeps working"
    );

    plant_hostile_tree(&server, "hostile", &victim).await?;
    destroy_leaving_nothing(&server, "hostile").await?;
    victim.assert_unchanged("destroy");
    assert_destroyed_and_reusable(&server, "hostile").await?;
    victim.assert_unchanged("re-create");
    server.stop().await
}

/// Creates `count` empty files in a new directory `dir`.
fn plant_many_files(dir: &Path, count: usize) -> Result<()> {
    std::fs::create_dir(dir)?;
    for i in 0..count {
        std::fs::File::create(dir.join(format!("f{i}")))?;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn reset_and_destroy_cope_with_a_hundred_thousand_files() -> Result<()> {
    let server = server_with(false).await?;
    for (session, tool) in [("many-r", "reset_workspace"), ("many-d", "destroy_session")] {
        server.first_call(session, false, "x = 1").await?;
        let app = server.workspace_of(session).context("workspace")?;
        plant_many_files(&app.join("flat"), 100_000)?;
        let started = Instant::now();
        if tool == "reset_workspace" {
            delete(&server, tool, session).await?;
        } else {
            destroy_leaving_nothing(&server, session).await?;
        }
        let took = started.elapsed();
        assert!(took < BIG_TREE_LIMIT, "{tool} of 10^5 files took {took:?}");
        if tool == "reset_workspace" {
            assert!(entries_below(&app).is_empty(), "/app is empty");
            let alive = server.python(session, "import os\nos.listdir('.')").await?;
            assert_eq!(alive.str("result"), "[]");
        } else {
            assert_destroyed_and_reusable(&server, session).await?;
        }
    }
    assert!(procfs::alive(server.pid));
    server.stop().await
}

/// Builds a chain of `depth` directories `d/d/d/...` under `dir` (with `openat`/`mkdirat`, so
/// no path is ever longer than one name), with a file and a link to `victim` at the bottom.
fn plant_deep_chain(dir: &Path, depth: usize, victim: &Path) -> Result<()> {
    let script = "import os, sys\nfd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)\nfor _ in range(int(sys.argv[2])):\n    os.mkdir('d', dir_fd=fd)\n    nfd = os.open('d', os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)\n    os.close(fd)\n    fd = nfd\nos.close(os.open('bottom.txt', os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))\nos.symlink(sys.argv[3], 'vlink', dir_fd=fd)\n";
    let status = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(dir)
        .arg(depth.to_string())
        .arg(victim)
        .status()
        .context("python3 builds the chain")?;
    ensure!(status.success(), "building the chain failed");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn reset_and_destroy_cope_with_nesting_ten_thousand_deep() -> Result<()> {
    let victim = Victim::new()?;
    let server = server_with(false).await?;
    server.python("bystander", "kept = 1").await?;
    for (session, tool) in [("deep-r", "reset_workspace"), ("deep-d", "destroy_session")] {
        server.first_call(session, false, "x = 1").await?;
        let app = server.workspace_of(session).context("workspace")?;
        plant_deep_chain(&app, 10_000, &victim.path())?;
        let started = Instant::now();
        if tool == "reset_workspace" {
            delete(&server, tool, session).await?;
        } else {
            destroy_leaving_nothing(&server, session).await?;
        }
        let took = started.elapsed();
        assert!(
            took < BIG_TREE_LIMIT,
            "{tool} of a 10^4-deep chain took {took:?}"
        );
        victim.assert_unchanged(tool);
        if tool == "reset_workspace" {
            assert!(!app.join("d").exists(), "/app is empty");
            let alive = server.python(session, "import os\nos.listdir('.')").await?;
            assert_eq!(alive.str("result"), "[]");
        } else {
            assert_destroyed_and_reusable(&server, session).await?;
        }
    }
    assert!(procfs::alive(server.pid), "the server survived");
    let kept = server.python("bystander", "kept").await?;
    assert_eq!(kept.str("result"), "1", "other sessions are unharmed");
    server.stop().await
}

/// The server need not be root: run as `nobody`, it still deletes what its guests locked away
/// (the shell's `chmod 000` on directories, nested, and on /app's own subtree), where a plain
/// recursive delete fails with EACCES. As root (CI) permissions never get in the way, so only
/// this test shows the permission repairs work end to end.
#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_is_not_root_deletes_locked_trees() -> Result<()> {
    const NOBODY: u32 = 65534;
    host::require_root("starting a server as another user")?;
    // Both sessions adopt a pre-started worker: its directories were made by the server, as
    // `nobody`, before the session existed, and its name is only a link to them.
    let server = Server::start_as(Some(NOBODY), &[pinned_pool(true)]).await?;
    server.forbid_own_host_paths();
    for session in ["locked-reset", "locked-destroy"] {
        server.first_call(session, true,
            "import os\nos.makedirs('d/e/f')\nopen('d/e/f/x.txt', 'w').write('x')\nos.makedirs('g')\nopen('/tmp/t.txt', 'w').write('t')\nos.makedirs('/tmp/h/i')",
        )
        .await?;
        let locked = server
            .call(
                "execute_command",
                json!({ "session_id": session, "command": "chmod 000 d/e/f && chmod 500 d/e && chmod 000 d && chmod 000 g && chmod 000 /tmp/h" }),
            )
            .await?;
        ensure!(!locked.is_error, "{locked:?}");
        let app = server.workspace_of(session).context("workspace")?;
        let meta = std::fs::metadata(app.join("d"))?;
        ensure!(
            std::os::unix::fs::MetadataExt::uid(&meta) == NOBODY
                && std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777 == 0,
            "the guest's files belong to the server's user and are locked"
        );
    }
    let app = server.workspace_of("locked-reset").context("workspace")?;
    let tmp = server.tmp_of("locked-reset").context("tmp")?;
    delete(&server, "reset_workspace", "locked-reset").await?;
    ensure!(
        entries_below(&app).is_empty(),
        "reset left {:?}",
        entries_below(&app)
    );
    ensure!(
        entries_below(&tmp).is_empty(),
        "reset left {:?}",
        entries_below(&tmp)
    );
    server
        .python("locked-reset", "open('again.txt', 'w').write('usable')")
        .await?;

    let storage = host::session_storage(&server.state_dir, "locked-destroy");
    delete(&server, "destroy_session", "locked-destroy").await?;
    let left = host::still_there(&storage);
    ensure!(left.is_empty(), "destroy left {left:?}");
    let state_dir = server.state_dir.clone();
    server.stop().await?;
    ensure!(
        tokio::time::timeout(Duration::from_secs(10), async {
            while state_dir.exists() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await
        .is_ok(),
        "shutdown removes the whole state directory"
    );
    Ok(())
}
