//! The pool of pre-started workers: a new session's first call runs on a worker started before
//! the session existed, with that worker's directories as its own; the pool refills, replaces
//! a pooled worker that was killed, and is counted by admission; a session of another shape,
//! or one whose files are already written, starts its own worker; a session made by
//! `create_session` with no pooled worker for it starts its own behind the answer.

use std::time::Duration;

use sandbox_tests::{Server, eventually, host, procfs};
use serde_json::json;

/// Waits for `count` ready idle pooled workers of `server` and returns them.
async fn pooled(server: &Server, count: usize) -> Vec<u32> {
    server.wait_for_pool(count).await.expect("a full pool")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_session_runs_on_a_pre_started_worker_and_the_pool_refills() -> anyhow::Result<()> {
    let server = Server::start_with_env(&[("SANDBOX_WORKER_POOL", "python=1")]).await?;
    server.forbid_own_host_paths();
    let waiting = pooled(&server, 1).await;

    let first = server
        .exec(
            "python",
            "open('notes.txt', 'w').write('kept')\nx = 41\nx + 1",
            json!({ "session_id": "fresh" }),
        )
        .await?;
    assert!(!first.is_error, "{first:?}");
    assert_eq!(first.str("result"), "42");
    assert!(
        !first.bool("session_restarted") && first.is_null("restart_reason"),
        "an adopted worker is no restart: {first:?}"
    );
    let worker = procfs::worker_of_session(server.pid, "fresh").expect("the session's worker");
    assert_eq!(
        vec![worker],
        waiting,
        "the session adopted the pooled worker"
    );
    // Its files live in the adopted directory, which its usual name reaches.
    let app = server
        .workspace_of("fresh")
        .expect("the session's workspace");
    assert_eq!(std::fs::read_to_string(app.join("notes.txt"))?, "kept");
    let listed = server
        .call("get_workspace_info", json!({ "session_id": "fresh" }))
        .await?;
    assert!(listed.value.to_string().contains("notes.txt"), "{listed:?}");

    // The pool refills with another worker; the session keeps its own.
    let refilled = pooled(&server, 1).await;
    let health = server.call("list_runtimes", json!({})).await?;
    assert_eq!(health.field("health")["pooled_workers"], 1, "{health:?}");
    assert_eq!(health.field("health")["sessions"], 1, "{health:?}");
    assert_ne!(refilled, waiting);
    let again = server
        .exec("python", "x", json!({ "session_id": "fresh" }))
        .await?;
    assert_eq!(again.str("result"), "41");

    // Destroying the session removes the adopted directory and its name.
    let adopted = host::adopted_dir_of(&server.state_dir, "fresh")
        .expect("the session's name links the adopted directory");
    assert!(adopted.join("app/notes.txt").is_file(), "{adopted:?}");
    let storage = host::session_storage(&server.state_dir, "fresh");
    let destroyed = server
        .call("destroy_session", json!({ "session_id": "fresh" }))
        .await?;
    assert!(!destroyed.is_error, "{destroyed:?}");
    assert!(
        eventually(Duration::from_secs(5), || host::still_there(&storage)
            .is_empty())
        .await,
        "the name and the adopted directory are gone: {:?} left",
        host::still_there(&storage)
    );
    assert!(
        eventually(Duration::from_secs(5), || !procfs::all_workers()
            .contains(&worker))
        .await
    );
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pooled_worker_killed_while_idle_is_replaced_and_never_handed_out() -> anyhow::Result<()>
{
    let server = Server::start_with_env(&[("SANDBOX_WORKER_POOL", "javascript=1")]).await?;
    let victim = pooled(&server, 1).await[0];
    assert!(procfs::signal(victim, "KILL"));
    assert!(
        eventually(Duration::from_secs(10), || {
            let now = procfs::pooled_workers(server.pid);
            now.len() == 1 && now[0] != victim
        })
        .await,
        "a new worker replaces the killed one"
    );
    let reply = server
        .exec("javascript", "6 * 7", json!({ "session_id": "after" }))
        .await?;
    assert!(!reply.is_error, "{reply:?}");
    assert_eq!(reply.str("result"), "42");
    assert!(!reply.bool("session_restarted"), "{reply:?}");
    assert!(
        procfs::workers_of(server.pid)
            .iter()
            .all(|(pid, state)| *pid != victim || *state != 'Z'),
        "the killed worker was reaped"
    );
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_of_another_shape_or_with_files_start_their_own_worker() -> anyhow::Result<()> {
    let server = Server::start_with_env(&[("SANDBOX_WORKER_POOL", "python=1")]).await?;
    server.forbid_own_host_paths();
    let waiting = pooled(&server, 1).await;

    // Another memory cap: another worker shape.
    let created = server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "custom", "memory_bytes": 96 << 20 }),
        )
        .await?;
    assert!(!created.is_error, "{created:?}");
    let custom = server
        .exec("python", "1 + 1", json!({ "session_id": "custom" }))
        .await?;
    assert_eq!(custom.str("result"), "2");
    let own = procfs::worker_of_session(server.pid, "custom").expect("its worker");
    assert!(!waiting.contains(&own), "a custom session starts its own");

    // Files written before the first call (a package install) keep the session on its own
    // directories.
    let created = server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "written" }),
        )
        .await?;
    assert!(!created.is_error, "{created:?}");
    let app = server.workspace_of("written").expect("its workspace");
    std::fs::write(app.join("input.csv"), "a,b\n1,2\n")?;
    let read = server
        .exec(
            "python",
            "open('input.csv').read()",
            json!({ "session_id": "written" }),
        )
        .await?;
    assert_eq!(read.str("result"), "'a,b\\n1,2\\n'", "{read:?}");
    let written = procfs::worker_of_session(server.pid, "written").expect("its worker");
    assert!(!waiting.contains(&written));
    assert_eq!(
        procfs::pooled_workers(server.pid),
        waiting,
        "the pooled worker is still waiting"
    );
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_created_session_without_a_pooled_worker_starts_its_own_behind_the_answer()
-> anyhow::Result<()> {
    let server = Server::start_with_env(&[("SANDBOX_WORKER_POOL", "0")]).await?;
    server.forbid_own_host_paths();
    let created = server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "ahead" }),
        )
        .await?;
    assert!(!created.is_error, "{created:?}");
    assert!(
        eventually(Duration::from_secs(10), || procfs::worker_of_session(
            server.pid, "ahead"
        )
        .is_some())
        .await,
        "its worker starts before any call"
    );
    let started = procfs::worker_of_session(server.pid, "ahead").expect("its worker");
    // A look at it is no execution, and waits for the start instead of calling it one.
    let info = server
        .call("get_workspace_info", json!({ "session_id": "ahead" }))
        .await?;
    assert!(
        !info.value.to_string().contains("an execution is running"),
        "{info:?}"
    );
    // Files written after the start, before the first call, are there for it.
    let app = server.workspace_of("ahead").expect("its workspace");
    std::fs::write(app.join("input.csv"), "a,b\n1,2\n")?;
    let read = server
        .exec(
            "python",
            "open('input.csv').read()",
            json!({ "session_id": "ahead" }),
        )
        .await?;
    assert_eq!(read.str("result"), "'a,b\\n1,2\\n'", "{read:?}");
    assert!(
        !read.bool("session_restarted") && read.is_null("restart_reason"),
        "a worker started ahead is no restart: {read:?}"
    );
    assert_eq!(
        procfs::worker_of_session(server.pid, "ahead"),
        Some(started),
        "the first call ran on the worker started ahead"
    );

    // A session destroyed at once leaves no worker behind, started or starting.
    let brief: Vec<String> = (0..5).map(|round| format!("brief-{round}")).collect();
    for id in &brief {
        let created = server
            .call(
                "create_session",
                json!({ "language": "javascript", "session_id": id }),
            )
            .await?;
        assert!(!created.is_error, "{created:?}");
        let destroyed = server
            .call("destroy_session", json!({ "session_id": id }))
            .await?;
        assert!(!destroyed.is_error, "{destroyed:?}");
    }
    let left = || {
        brief
            .iter()
            .filter_map(|id| procfs::worker_of_session(server.pid, id))
            .collect::<Vec<u32>>()
    };
    assert!(
        eventually(Duration::from_secs(10), || left().is_empty()).await,
        "workers of destroyed sessions left: {:?}",
        left()
    );
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_pool_has_numpy_and_pandas_loaded_for_the_first_import() -> anyhow::Result<()> {
    // `python-scientific`, the old name of the Python runtime, still reads.
    let server = Server::start_with_env(&[("SANDBOX_WORKER_POOL", "python-scientific=1")]).await?;
    let waiting = pooled(&server, 1).await;
    // A new Python session adopts the pooled worker.
    let reply = server
        .exec(
            "python",
            "import sys\nloaded = 'pandas' in sys.modules\nimport pandas as pd\n(loaded, pd.DataFrame({'a': [1, 2]})['a'].sum())",
            json!({ "session_id": "analysis" }),
        )
        .await?;
    assert!(!reply.is_error, "{reply:?}");
    assert_eq!(
        reply.str("result"),
        "(True, np.int64(3))",
        "pandas was loaded before the call: {reply:?}"
    );
    let worker = procfs::worker_of_session(server.pid, "analysis").expect("its worker");
    assert_eq!(vec![worker], waiting, "it adopted the pooled worker");
    // The preload stays out of the user's namespace and of what the session reports imported.
    let info = server
        .call("get_workspace_info", json!({ "session_id": "analysis" }))
        .await?;
    assert_eq!(info.field("modules"), &json!(["pandas", "sys"]), "{info:?}");
    let variables = info.field("variables").to_string();
    assert!(variables.contains("\"loaded\""), "{info:?}");
    assert!(
        !variables.contains("_np") && !variables.contains("_pd"),
        "{info:?}"
    );
    server.stop().await
}
