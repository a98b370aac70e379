//! Workers forked by a fork server (one per runtime, its interpreter mapped and its memory image
//! instantiated): each session still gets its own state, directories, rlimits and jail, and
//! shows its own command line; the next session's worker is forked and woken ahead (a spare),
//! a JavaScript one with its QuickJS runtime made and then fitted to its session (heap limit,
//! clock), and one killed before any session took it is reaped and made again; a fork server killed
//! costs nothing but speed (the worker is exec'd, and the server comes back); a forked worker
//! killed mid-call is answered and reaped like any other.

use std::path::Path;
use std::time::Duration;

use sandbox_tests::{Server, eventually, procfs};
use serde_json::json;

/// The server's log lines that contain every one of `needles`.
fn log_lines(log: &Path, needles: &[&str]) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|line| needles.iter().all(|n| line.contains(n)))
        .map(str::to_owned)
        .collect()
}

/// Waits (at most 60 s: the interpreters may still be compiling) until the log has `count`
/// lines with every one of `needles`.
async fn wait_for_log(log: &Path, needles: &[&str], count: usize) {
    let found = eventually(Duration::from_secs(60), || {
        log_lines(log, needles).len() >= count
    })
    .await;
    assert!(found, "no {count} log lines with {needles:?}");
}

/// A server without a pool, its logs in `log`, once both fork servers are up.
async fn forking_server(log: &Path) -> anyhow::Result<Server> {
    forking_server_with(log, &[]).await
}

/// [`forking_server`] with more of the environment set.
async fn forking_server_with(log: &Path, env: &[(&str, &str)]) -> anyhow::Result<Server> {
    let env: Vec<(&str, &str)> = [("SANDBOX_WORKER_POOL", "0")]
        .into_iter()
        .chain(env.iter().copied())
        .collect();
    let server = Server::start_logged(&env, log).await?;
    wait_for_log(log, &["fork server up", "runtime=python"], 1).await;
    wait_for_log(log, &["fork server up", "runtime=javascript"], 1).await;
    Ok(server)
}

/// Whether the log says that `session`'s worker was forked.
fn forked(log: &Path, session: &str) -> bool {
    !log_lines(
        log,
        &[
            "worker ready",
            &format!("session={session} "),
            "forked=true",
        ],
    )
    .is_empty()
}

/// A line of `/proc/<pid>/status` or `limits`, by its start.
fn proc_line(pid: u32, file: &str, start: &str) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/{file}"))
        .unwrap_or_default()
        .lines()
        .find(|line| line.starts_with(start))
        .unwrap_or_default()
        .to_owned()
}

/// The Python fork server's spare, once it has one (at most 60 s).
async fn python_spare(server: &Server) -> u32 {
    spare_of(server, "python").await
}

/// The spare of `runtime`'s fork server, once it has one (at most 60 s).
async fn spare_of(server: &Server, runtime: &str) -> u32 {
    let mut spare = None;
    let shows = format!(" --runtime {runtime}");
    let made = eventually(Duration::from_secs(60), || {
        spare = (procfs::spares(server.pid).into_iter())
            .find(|pid| procfs::cmdline(*pid).contains(&shows));
        spare.is_some()
    })
    .await;
    assert!(
        made,
        "no {runtime} spare: {:?}",
        procfs::workers_of(server.pid)
    );
    spare.expect("found")
}

/// Asserts that the supervisor's child `pid` (`what`) is reaped within `limit`: not even a
/// zombie is left among its children.
async fn assert_reaped(server: &Server, pid: u32, what: &str, limit: Duration) {
    let reaped = eventually(limit, || {
        procfs::workers_of(server.pid)
            .iter()
            .all(|(child, _)| *child != pid)
    })
    .await;
    assert!(
        reaped,
        "{what} is reaped by the supervisor: {:?}",
        procfs::workers_of(server.pid)
    );
}

/// Which of `pid`'s namespaces `ns` is (`net:[4026531840]`).
fn namespace_of(pid: u32, ns: &str) -> String {
    std::fs::read_link(format!("/proc/{pid}/ns/{ns}"))
        .map(|link| link.display().to_string())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn new_sessions_are_forked_with_their_own_state_directories_limits_and_jail()
-> anyhow::Result<()> {
    let scratch = tempfile::tempdir()?;
    let log = scratch.path().join("server.log");
    // The workers' jail reports and wakes are logged at debug.
    let logged = "info,sandbox_worker::serve=debug,sandbox_worker::python::pushed=debug";
    let server = forking_server_with(&log, &[("RUST_LOG", logged)]).await?;
    server.forbid_own_host_paths();
    let probe = "import random, os\n(random.random(), sorted(os.listdir('/app')), os.getcwd())";
    let mut draws = Vec::new();
    let mut namespaces = vec![
        namespace_of(server.pid, "net"),
        namespace_of(server.pid, "user"),
    ];
    for session in ["forked-1", "forked-2"] {
        // The fork server forks and wakes the next session's worker, with its namespaces, once
        // idle for 40 ms.
        let spare = python_spare(&server).await;
        server
            .call(
                "create_session",
                json!({ "language": "python", "session_id": session }),
            )
            .await?;
        let first = server
            .exec("python", probe, json!({ "session_id": session }))
            .await?;
        assert!(!first.is_error, "{first:?}");
        assert!(
            first.str("result").ends_with(", [], '/app')"),
            "its own empty /app: {first:?}"
        );
        // The spare rehearsed a cell that printed before its session came: none of it shows.
        assert_eq!(first.str("stdout"), "", "{first:?}");
        draws.push(first.str("result").to_owned());
        let wrote = server
            .exec(
                "python",
                &format!("open('mine.txt', 'w').write('{session}')"),
                json!({ "session_id": session }),
            )
            .await?;
        assert!(!wrote.is_error, "{wrote:?}");
        assert!(forked(&log, session), "{session} was forked");

        let pid = procfs::worker_of_session(server.pid, session).expect("its worker");
        assert_eq!(pid, spare, "{session} took the spare made ahead for it");
        let cmdline = procfs::cmdline(pid);
        assert!(
            cmdline.contains(" serve --runtime python ")
                && cmdline.contains(&format!("/{session}.")),
            "a forked worker shows its own command line: {cmdline}"
        );
        assert!(
            procfs::workers_of(server.pid)
                .iter()
                .any(|(child, _)| *child == pid),
            "the supervisor's child, not the fork server's"
        );
        // What the supervisor's pre_exec gives an exec'd worker, the fork gives a forked one.
        assert!(proc_line(pid, "status", "NoNewPrivs:").ends_with('1'));
        assert!(
            proc_line(pid, "limits", "Max data size")
                .contains(&((1u64 << 30) + (256 << 20)).to_string()),
            "{}",
            proc_line(pid, "limits", "Max data size")
        );
        assert!(proc_line(pid, "limits", "Max cpu time").contains("14400"));
        assert_eq!(
            procfs::process_group(pid),
            Some(pid),
            "it leads its own process group"
        );
        // And it jailed itself as an exec'd worker does.
        let seccomp = proc_line(pid, "status", "Seccomp:");
        assert!(seccomp.ends_with('2'), "seccomp filter on: {seccomp}");
        // Its own network and user namespaces: not the supervisor's, not another worker's,
        // whether it made them or joined the ones its fork server made ahead for it.
        for ns in ["net", "user"] {
            let mine = namespace_of(pid, ns);
            assert!(mine.starts_with(&format!("{ns}:[")), "{ns}: {mine}");
            assert!(
                !namespaces.contains(&mine),
                "{session}'s {ns} is its own: {mine}"
            );
            namespaces.push(mine);
        }
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
    assert!(
        !log_lines(&log, &["jailed", "made ahead by the fork server"]).is_empty(),
        "the fork server made a worker's namespaces ahead"
    );
    assert!(
        log_lines(&log, &["woke for the session", "woken_ahead=true"]).len() >= 2,
        "each spare woke before its session came"
    );
    assert_ne!(
        draws[0], draws[1],
        "each forked interpreter draws its own seeds"
    );
    let other = server
        .exec(
            "python",
            "open('mine.txt').read()",
            json!({ "session_id": "forked-1" }),
        )
        .await?;
    assert_eq!(other.str("result"), "'forked-1'", "{other:?}");

    let js = server
        .exec(
            "javascript",
            "console.log(6 * 7)",
            json!({ "session_id": "forked-js" }),
        )
        .await?;
    assert_eq!(js.str("stdout"), "42\n", "{js:?}");
    assert!(forked(&log, "forked-js"));
    server.stop().await
}

/// Fills the heap with 1 MiB strings until QuickJS refuses, then lets them go.
const FILL_THE_HEAP: &str = "let kept = []; let said; \
    try { for (;;) kept.push('x'.repeat(1 << 20) + kept.length); } \
    catch (e) { said = String(e); } kept = null; said";

#[tokio::test(flavor = "multi_thread")]
async fn a_javascript_session_takes_a_spare_woken_ahead_with_its_own_cap_clock_and_seeds()
-> anyhow::Result<()> {
    let scratch = tempfile::tempdir()?;
    let log = scratch.path().join("server.log");
    let logged = "info,sandbox_worker::javascript=debug";
    let server = forking_server_with(&log, &[("RUST_LOG", logged)]).await?;
    let mut draws = Vec::new();
    for session in ["js-spare-1", "js-spare-2"] {
        let spare = spare_of(&server, "javascript").await;
        let created = server
            .call(
                "create_session",
                json!({ "language": "javascript", "session_id": session, "memory_bytes": 64 << 20 }),
            )
            .await?;
        assert!(!created.is_error, "{created:?}");
        // The spare's runtime was made for the fork server's cap; the session's heap limit is
        // three quarters of its own 64 MiB: QuickJS refuses by itself, below the host's cap,
        // and the session goes on.
        let filled = server
            .exec(
                "javascript",
                FILL_THE_HEAP,
                json!({ "session_id": session }),
            )
            .await?;
        assert!(
            !filled.is_error && filled.str("result").contains("out of memory"),
            "{filled:?}"
        );
        assert!(
            filled.u64("memory_bytes") < 60 << 20,
            "QuickJS stopped at the session's heap limit: {filled:?}"
        );
        // Its clock goes on from the spare's (never back), and its seeds are its own.
        let probe = server
            .exec(
                "javascript",
                "const t0 = performance.now(); [t0 >= 0 && performance.now() >= t0, Math.random()].join(' ')",
                json!({ "session_id": session }),
            )
            .await?;
        let said = probe.str("result").trim_matches('"').to_owned();
        assert!(said.starts_with("true 0."), "{probe:?}");
        draws.push(said);
        assert!(forked(&log, session), "{session} was forked");
        let pid = procfs::worker_of_session(server.pid, session).expect("its worker");
        assert_eq!(pid, spare, "{session} took the spare made ahead for it");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert_ne!(draws[0], draws[1], "each spare draws its own numbers");
    assert!(
        log_lines(
            &log,
            &["javascript", "woke for the session", "woken_ahead=true"]
        )
        .len()
            >= 2,
        "each JavaScript spare woke before its session came"
    );
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_fork_server_costs_nothing_but_speed_and_comes_back() -> anyhow::Result<()> {
    let scratch = tempfile::tempdir()?;
    let log = scratch.path().join("server.log");
    let server = forking_server(&log).await?;
    let python_server = procfs::fork_servers(server.pid)
        .into_iter()
        .find(|pid| procfs::cmdline(*pid).contains(" --runtime python "))
        .expect("the Python fork server");
    assert!(procfs::signal(python_server, "KILL"));
    assert!(eventually(Duration::from_secs(5), || !procfs::alive(python_server)).await);

    // A session starting now gets a worker all the same.
    let meanwhile = server
        .exec("python", "6 * 7", json!({ "session_id": "meanwhile" }))
        .await?;
    assert_eq!(meanwhile.str("result"), "42", "{meanwhile:?}");

    // The server comes back, reaped (no zombie), and forks again.
    wait_for_log(&log, &["fork server up", "runtime=python"], 2).await;
    assert!(
        procfs::workers_of(server.pid)
            .iter()
            .all(|(pid, state)| *pid != python_server || *state != 'Z'),
        "the dead fork server is reaped"
    );
    let after = server
        .exec("python", "6 * 7", json!({ "session_id": "after" }))
        .await?;
    assert_eq!(after.str("result"), "42", "{after:?}");
    assert!(forked(&log, "after"), "forked by the new fork server");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_spare_killed_before_its_session_is_reaped_and_made_again() -> anyhow::Result<()> {
    let scratch = tempfile::tempdir()?;
    let log = scratch.path().join("server.log");
    let server = forking_server(&log).await?;
    let spare = python_spare(&server).await;
    assert!(procfs::signal(spare, "KILL"));
    // The supervisor's child: reaped by it (no zombie), though no session ever had it.
    assert_reaped(&server, spare, "the killed spare", Duration::from_secs(10)).await;
    // The next session is forked all the same, and the server makes a new spare after it.
    let next = server
        .exec("python", "6 * 7", json!({ "session_id": "next" }))
        .await?;
    assert_eq!(next.str("result"), "42", "{next:?}");
    assert!(forked(&log, "next"));
    let again = python_spare(&server).await;
    assert_ne!(again, spare);
    let after = server
        .exec("python", "6 * 7", json!({ "session_id": "after" }))
        .await?;
    assert_eq!(after.str("result"), "42", "{after:?}");
    assert_eq!(
        procfs::worker_of_session(server.pid, "after"),
        Some(again),
        "the new spare took the next session"
    );
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forked_worker_killed_mid_call_is_answered_and_reaped() -> anyhow::Result<()> {
    let scratch = tempfile::tempdir()?;
    let log = scratch.path().join("server.log");
    let server = std::sync::Arc::new(forking_server(&log).await?);
    let first = server
        .exec("python", "x = 1", json!({ "session_id": "doomed" }))
        .await?;
    assert!(!first.is_error, "{first:?}");
    assert!(forked(&log, "doomed"));
    let worker = procfs::worker_of_session(server.pid, "doomed").expect("its worker");
    let running = tokio::spawn({
        let server = server.clone();
        async move {
            server
                .exec(
                    "python",
                    "import time\ntime.sleep(20)",
                    json!({ "session_id": "doomed" }),
                )
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(procfs::signal(worker, "KILL"));
    let crashed = running.await??;
    assert_eq!(crashed.str("error_type"), "worker_crashed", "{crashed:?}");
    assert_reaped(&server, worker, "the killed worker", Duration::from_secs(5)).await;
    let next = server
        .exec("python", "6 * 7", json!({ "session_id": "doomed" }))
        .await?;
    assert_eq!(next.str("result"), "42", "{next:?}");
    assert!(next.bool("session_restarted"), "{next:?}");
    std::sync::Arc::into_inner(server)
        .expect("sole owner")
        .stop()
        .await
}
