//! The supervisor as a supervisor: jailed workers, cancel, ordering, reaping, admission, hard
//! kills and shutdown, each shown with real processes (read from /proc).

use std::time::{Duration, Instant};

use sandbox_tests::procfs::alive;
use sandbox_tests::{Server, eventually, procfs, rpc_error_type, statuses};
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

/// What `list_runtimes` reports in `health.cgroups`, with and without a delegated subtree.
const CGROUPS_DELEGATED: &str =
    "cgroup v2 delegated: each worker gets its own memory.max, pids.max and cpu.max";
const CGROUPS_UNAVAILABLE: &str = "cgroup v2 caps unavailable (no delegated cgroup v2 subtree with the memory, pids and cpu controllers); workers are limited by rlimits, fuel and deadlines";

/// The cgroup v2 path of a process (the `0::` line of `/proc/<pid>/cgroup`).
fn cgroup_of(pid: u32) -> String {
    let cgroups = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
    cgroups
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .unwrap_or_else(|| panic!("process {pid} is in no cgroup v2 hierarchy: {cgroups}"))
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
    assert_eq!(
        procfs::process_group(py),
        Some(py),
        "each worker leads its own process group"
    );
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

    // The cgroup state the server reports is the one its workers are in: a worker in a cgroup
    // of its own (`worker-<session>-<generation>`) means delegation; without it a worker stays
    // in the server's cgroup.
    let runtimes = server.call("list_runtimes", json!({})).await?;
    let reported = runtimes.value["health"]["cgroups"]
        .as_str()
        .expect("health.cgroups is a string");
    let worker_cgroup = cgroup_of(py);
    if worker_cgroup.ends_with("/worker-jailed-1") {
        assert_eq!(
            reported, CGROUPS_DELEGATED,
            "the worker is in {worker_cgroup}"
        );
    } else {
        assert_eq!(
            worker_cgroup,
            cgroup_of(server.pid),
            "without delegation a worker stays in the server's cgroup"
        );
        assert_eq!(
            reported, CGROUPS_UNAVAILABLE,
            "the worker is in {worker_cgroup}"
        );
    }
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
    let message = server.progress_messages()[seen].clone();
    let execution_id = message
        .split_whitespace()
        .nth(1)
        .expect("execution id")
        .to_owned();
    assert!(execution_id.starts_with("exec-"), "{message}");

    // Two calls queue behind the loop; each is listed as queued before the next is sent.
    let queue = |code: &'static str| {
        let server = server.clone();
        tokio::spawn(async move {
            server
                .exec("python", code, json!({ "session_id": "c" }))
                .await
        })
    };
    let doomed = queue("ran_doomed = True\nn = -1");
    // The loop runs once the state of the call before it is kept (just behind its answer).
    let listed = server
        .wait_for_executions("c", Duration::from_secs(5), |l| {
            statuses(l) == ["running", "queued"]
        })
        .await?;
    assert_eq!(statuses(&listed), ["running", "queued"], "{listed:?}");
    assert_eq!(listed[0]["execution_id"], execution_id.as_str());
    let doomed_id = listed[1]["execution_id"].as_str().unwrap().to_owned();
    let kept = queue("ran_kept = True");
    let listed = server
        .wait_for_executions("c", Duration::from_secs(5), |l| l.len() == 3)
        .await?;
    assert_eq!(statuses(&listed), ["running", "queued", "queued"]);

    // Cancelling a queued call removes it from the queue: it never runs.
    let cancelled = server
        .call("cancel_execution", json!({ "execution_id": doomed_id }))
        .await?;
    assert!(cancelled.bool("cancelled"), "{cancelled:?}");
    assert_eq!(cancelled.str("status"), "cancelled", "{cancelled:?}");
    let doomed = doomed.await??;
    assert!(doomed.is_error, "{doomed:?}");
    assert_eq!(doomed.str("error_type"), "cancelled", "{doomed:?}");
    assert_eq!(doomed.str("execution_id"), doomed_id);
    assert!(
        doomed
            .str("error_message")
            .starts_with("cancelled while waiting for the session's previous execution"),
        "{doomed:?}"
    );
    assert_eq!(doomed.u64("fuel_consumed"), 0, "nothing ran: {doomed:?}");
    let listed = server.executions_of("c").await?;
    assert_eq!(statuses(&listed), ["running", "queued"], "{listed:?}");
    assert_eq!(listed[0]["execution_id"], execution_id.as_str());

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
    // The call queued behind the loop ran after the cancel; the cancelled one never did.
    let kept = kept.await??;
    assert!(!kept.is_error, "{kept:?}");
    let state = server
        .exec(
            "python",
            "('ran_doomed' in globals(), 'ran_kept' in globals(), n > 0)",
            json!({ "session_id": "c" }),
        )
        .await?;
    assert_eq!(state.str("result"), "(False, True, True)", "{state:?}");

    for (id, outcome) in [(&execution_id, "cancelled"), (&doomed_id, "cancelled")] {
        let again = server
            .call("cancel_execution", json!({ "execution_id": id }))
            .await?;
        assert!(!again.bool("cancelled"), "{again:?}");
        assert_eq!(again.str("status"), "already_finished");
        assert_eq!(again.str("outcome"), outcome, "{again:?}");
    }
    let unknown = server
        .call_refused("cancel_execution", json!({ "execution_id": "exec-nope" }))
        .await?;
    assert_eq!(
        rpc_error_type(&unknown),
        Some("invalid_argument"),
        "{unknown:?}"
    );
    assert_eq!(unknown.data.as_ref().unwrap()["argument"], "execution_id");

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
async fn cancelling_a_finished_execution_changes_nothing() -> anyhow::Result<()> {
    let server = Server::start().await?;
    server.forbid_own_host_paths();
    let done = server
        .exec("python", "x = 6 * 7\nx", json!({ "session_id": "f" }))
        .await?;
    assert_eq!(done.str("result"), "42");
    let failed = server
        .exec("python", "1 / 0", json!({ "session_id": "f" }))
        .await?;
    assert_eq!(failed.str("error_type"), "runtime_error");
    for (reply, outcome) in [(&done, "completed"), (&failed, "runtime_error")] {
        let id = reply.str("execution_id");
        let late = server
            .call("cancel_execution", json!({ "execution_id": id }))
            .await?;
        assert!(!late.is_error, "{late:?}");
        assert!(!late.bool("cancelled"), "{late:?}");
        assert_eq!(late.str("status"), "already_finished", "{late:?}");
        assert_eq!(late.str("outcome"), outcome, "{late:?}");
        assert_eq!(late.str("execution_id"), id);
    }
    let after = server
        .exec("python", "x", json!({ "session_id": "f" }))
        .await?;
    assert_eq!(
        after.str("result"),
        "42",
        "the session is untouched: {after:?}"
    );
    assert!(!after.bool("session_restarted"));
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_a_command_stops_it_and_its_interpreter_run() -> anyhow::Result<()> {
    let server = std::sync::Arc::new(Server::start().await?);
    server.forbid_own_host_paths();
    server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "cmd", "fuel_budget": 1_000_000_000_000u64 }),
        )
        .await?;
    server
        .exec(
            "python",
            "kept = 'yes'\nopen('spin.py', 'w').write(\"open('spinning', 'w').close()\\nn = 0\\nwhile True:\\n    n += 1\\n\")",
            json!({ "session_id": "cmd" }),
        )
        .await?;
    // `mark` is the file that proves the command reached what the cancel must stop: the shell's
    // own `sleep`, or an interpreter run (the script writes it once it runs).
    for (command, mark) in [
        ("echo before > a.txt; sleep 60; echo after > b.txt", "a.txt"),
        (
            "echo before > a.txt; python spin.py; echo after > b.txt",
            "spinning",
        ),
    ] {
        let app = server.workspace_of("cmd").expect("workspace");
        let _ = std::fs::remove_file(app.join(mark));
        let call = {
            let server = server.clone();
            tokio::spawn(async move {
                server
                    .call(
                        "execute_command",
                        json!({ "command": command, "session_id": "cmd", "timeout": 120 }),
                    )
                    .await
            })
        };
        let listed = server
            .wait_for_executions("cmd", Duration::from_secs(10), |l| {
                statuses(l) == ["running"]
            })
            .await?;
        assert!(
            eventually(Duration::from_secs(10), || app.join(mark).is_file()).await,
            "{command}: {mark} was written"
        );
        let id = listed[0]["execution_id"].as_str().unwrap().to_owned();
        let started = Instant::now();
        let cancelled = server
            .call("cancel_execution", json!({ "execution_id": id }))
            .await?;
        assert!(cancelled.bool("cancelled"), "{command}: {cancelled:?}");
        assert_eq!(
            cancelled.str("status"),
            "cancelled",
            "{command}: {cancelled:?}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{command}: {:?}",
            started.elapsed()
        );
        let reply = call.await??;
        assert!(reply.is_error, "{command}: {reply:?}");
        assert_eq!(reply.str("error_type"), "cancelled", "{command}: {reply:?}");
        assert_eq!(reply.u64("exit_code"), 130, "{command}: {reply:?}");
        assert!(!reply.bool("worker_killed"), "{command}: {reply:?}");
        assert!(
            !app.join("b.txt").exists(),
            "{command}: nothing after the cancelled command ran"
        );
    }
    let state = server
        .exec("python", "kept", json!({ "session_id": "cmd" }))
        .await?;
    assert_eq!(
        state.str("result"),
        "'yes'",
        "the interpreter kept its state: {state:?}"
    );
    assert!(!state.bool("session_restarted"), "{state:?}");
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
            "import os, time\nlog = []",
            json!({ "session_id": "q" }),
        )
        .await?;
    server
        .exec("python", "import time", json!({ "session_id": "p" }))
        .await?;
    // The first call holds the session until the test opens its gate; every later call is
    // sent only once the server lists the one before it, so the arrival order is known.
    let gate = server.workspace_of("q").expect("workspace").join("gate");
    let mut calls = Vec::new();
    for i in 0..5 {
        let code = if i == 0 {
            "while not os.path.exists('gate'):\n    time.sleep(0.01)\nlog.append(0)".to_owned()
        } else {
            format!("log.append({i})")
        };
        let server2 = server.clone();
        calls.push(tokio::spawn(async move {
            server2
                .exec("python", &code, json!({ "session_id": "q" }))
                .await
        }));
        // Listed once it is registered; its status turns "running" once it holds the session.
        let listed = server
            .wait_for_executions("q", Duration::from_secs(10), |l| {
                l.len() == i + 1 && l[0]["status"] == "running"
            })
            .await?;
        assert_eq!(statuses(&listed)[0], "running", "{listed:?}");
        assert!(
            statuses(&listed)[1..].iter().all(|s| *s == "queued"),
            "{listed:?}"
        );
    }
    std::fs::write(&gate, "")?;
    for call in calls {
        let reply = call.await??;
        assert!(!reply.is_error, "{reply:?}");
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
    let info = server
        .call("get_workspace_info", json!({ "session_id": "brief" }))
        .await?;
    let expires = info.str("expires_at").to_owned();
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

/// A memory budget no test here comes near (1 TiB), so only the session count can refuse.
const UNBOUNDED_MEMORY: u64 = 1 << 40;

/// What admission counts an unmeasured session of `runtime` for.
fn expected(runtime: sandbox_protocol::Runtime) -> u64 {
    runtime.expected_use_bytes()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_session_limit_alone_refuses_a_session_beyond_it() -> anyhow::Result<()> {
    let server = Server::start_with_env(&[
        ("SANDBOX_MAX_SESSIONS", "2"),
        ("SANDBOX_MEMORY_BUDGET_BYTES", &UNBOUNDED_MEMORY.to_string()),
    ])
    .await?;
    server.forbid_own_host_paths();
    server
        .exec("python", "kept = 1", json!({ "session_id": "one" }))
        .await?;
    let large = server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "two", "flavor": "large" }),
        )
        .await?;
    assert!(
        !large.is_error,
        "the memory budget does not bind: {large:?}"
    );
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
            json!({ "language": "python", "session_id": "four", "memory_bytes": 64 << 20 }),
        )
        .await?;
    assert_eq!(full.str("error_type"), "resources_exhausted", "{full:?}");
    let usage = &full.value["usage"];
    assert_eq!(usage["sessions"], 2, "{full:?}");
    assert_eq!(usage["max_sessions"], 2, "{full:?}");
    assert_eq!(usage["shortage"], "sessions", "{full:?}");
    let python = expected(sandbox_protocol::Runtime::Python);
    assert!(
        usage["memory_in_use_bytes"].as_u64().unwrap() >= 2 * python,
        "two sessions count for at least their expected use: {full:?}"
    );
    assert_eq!(usage["memory_requested_bytes"], python);
    assert_eq!(usage["memory_budget_bytes"], UNBOUNDED_MEMORY);
    assert!(
        full.str("error_message")
            .starts_with("no capacity for a new session: 2 of 2 sessions in use"),
        "{full:?}"
    );
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
    assert_eq!(room.str("result"), "2");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_memory_cap_is_a_limit_and_the_budget_counts_what_sessions_use() -> anyhow::Result<()> {
    use sandbox_protocol::Runtime;
    let python = expected(Runtime::Python);
    let javascript = expected(Runtime::JavaScript);
    // Room for five idle Python sessions (no pool, so nothing else counts), whatever their
    // caps: a large flavor's 4 GiB is a limit on its guest, not a reservation.
    let budget = 5 * python;
    let server = Server::start_with_env(&[
        ("SANDBOX_MAX_SESSIONS", "64"),
        ("SANDBOX_MEMORY_BUDGET_BYTES", &budget.to_string()),
        ("SANDBOX_WORKER_POOL", "0"),
    ])
    .await?;
    server.forbid_own_host_paths();
    server
        .exec("python", "kept = 1", json!({ "session_id": "one" }))
        .await?;
    // Idle: its state kept (that goes on just behind the answer, and holds the session).
    server.settled("one").await?;
    let large = server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "two", "flavor": "large" }),
        )
        .await?;
    assert!(
        !large.is_error,
        "4 GiB of cap fit {budget} bytes of budget: {large:?}"
    );
    for id in ["three", "four", "five"] {
        let created = server
            .call(
                "create_session",
                json!({ "language": "python", "session_id": id }),
            )
            .await?;
        assert!(!created.is_error, "{id}: {created:?}");
    }
    // The budget is full; the one session with a worker ("one", idle) is suspended to make
    // room for a sixth, and nothing more can give way for a seventh.
    let one = procfs::worker_of_session(server.pid, "one").expect("one's worker");
    let six = server
        .call(
            "create_session",
            json!({ "language": "javascript", "session_id": "six", "memory_bytes": 32 << 20 }),
        )
        .await?;
    assert!(!six.is_error, "an idle session gave way: {six:?}");
    assert!(
        eventually(Duration::from_secs(5), || !procfs::all_workers()
            .contains(&one))
        .await,
        "one's worker was stopped"
    );
    let refused = server
        .call(
            "create_session",
            json!({ "language": "javascript", "session_id": "seven", "memory_bytes": 32 << 20 }),
        )
        .await?;
    assert_eq!(
        refused.str("error_type"),
        "resources_exhausted",
        "{refused:?}"
    );
    let usage = &refused.value["usage"];
    assert_eq!(usage["shortage"], "memory_budget", "{refused:?}");
    assert_eq!(usage["sessions"], 6, "{refused:?}");
    assert_eq!(usage["memory_budget_bytes"], budget);
    assert_eq!(usage["memory_requested_bytes"], javascript);
    assert!(
        usage["memory_in_use_bytes"].as_u64().unwrap() + javascript > budget,
        "{refused:?}"
    );
    assert!(
        refused
            .str("error_message")
            .starts_with("the memory budget is used up: sessions and pre-started workers use"),
        "{refused:?}"
    );
    server
        .call("destroy_session", json!({ "session_id": "two" }))
        .await?;
    let room = server
        .exec("javascript", "2", json!({ "session_id": "six" }))
        .await?;
    assert!(!room.is_error, "room is back after a destroy: {room:?}");
    let kept = server
        .exec("python", "kept", json!({ "session_id": "one" }))
        .await?;
    assert_eq!(
        kept.str("result"),
        "1",
        "the suspended session resumes whole"
    );
    assert_eq!(kept.str("state_after_restart"), "resumed", "{kept:?}");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn when_memory_is_short_idle_sessions_are_suspended_and_resume_their_state()
-> anyhow::Result<()> {
    use sandbox_protocol::Runtime;
    // Room for two Python sessions; no suspension for idle time alone.
    let server = Server::start_with_env(&[
        (
            "SANDBOX_MEMORY_BUDGET_BYTES",
            &(2 * expected(Runtime::Python)).to_string(),
        ),
        ("SANDBOX_WORKER_POOL", "0"),
        ("SANDBOX_SUSPEND_IDLE_SECS", "0"),
    ])
    .await?;
    server.forbid_own_host_paths();
    let first = server
        .exec(
            "python",
            "rows = [1, 2, 3]\ndef total():\n    return sum(rows)",
            json!({ "session_id": "saved" }),
        )
        .await?;
    assert!(!first.is_error, "{first:?}");
    let saved_worker = procfs::worker_of_session(server.pid, "saved").expect("its worker");
    server
        .exec("python", "plain = 1", json!({ "session_id": "plain" }))
        .await?;

    // A third session suspends the one idle longest ("saved"), and is admitted at once.
    let admitted = server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "third" }),
        )
        .await?;
    assert!(
        !admitted.is_error,
        "an idle session made room: {admitted:?}"
    );
    assert!(
        eventually(Duration::from_secs(5), || !procfs::all_workers()
            .contains(&saved_worker))
        .await,
        "its worker was stopped"
    );
    let plain = server
        .exec("python", "plain", json!({ "session_id": "plain" }))
        .await?;
    assert_eq!(
        plain.str("result"),
        "1",
        "the other session kept its worker"
    );
    assert!(!plain.bool("session_restarted"));

    let back = server
        .exec("python", "total()", json!({ "session_id": "saved" }))
        .await?;
    assert_eq!(
        back.str("result"),
        "6",
        "its state came back whole: {back:?}"
    );
    assert!(back.bool("session_restarted"), "{back:?}");
    assert_eq!(back.str("state_after_restart"), "resumed");
    assert!(
        back.str("restart_reason")
            .contains("to free memory for new sessions"),
        "{back:?}"
    );
    server.stop().await
}

/// Idle sessions give their workers back within a few seconds of their idle time, whatever
/// their number, and their next calls resume them with every variable; suspended sessions use
/// no worker memory.
#[tokio::test(flavor = "multi_thread")]
async fn idle_sessions_are_suspended_and_resume_with_their_state() -> anyhow::Result<()> {
    const IDLE_SECS: u64 = 2;
    let server = Server::start_with_env(&[("SANDBOX_SUSPEND_IDLE_SECS", "2")]).await?;
    let sessions: Vec<(String, &str)> = (0..80)
        .map(|n| {
            let language = if n % 4 == 0 { "python" } else { "javascript" };
            (format!("idle-{n}"), language)
        })
        .collect();
    for (n, (session, language)) in sessions.iter().enumerate() {
        let code = match *language {
            "python" => format!("value = {n}\ntwice = lambda: value * 2"),
            _ => format!("var value = {n}; const twice = () => value * 2"),
        };
        let reply = server
            .exec(language, &code, json!({ "session_id": session }))
            .await?;
        assert!(!reply.is_error, "{session}: {reply:?}");
    }
    let last_call = std::time::Instant::now();
    let (last, _) = sessions.last().expect("sessions");
    assert!(
        procfs::worker_of_session(server.pid, last).is_some(),
        "the session used last still has its worker"
    );
    let all_gone = eventually(Duration::from_secs(IDLE_SECS + 20), || {
        sessions
            .iter()
            .all(|(session, _)| procfs::worker_of_session(server.pid, session).is_none())
    })
    .await;
    assert!(all_gone, "every idle session gave its worker back");
    // Within the idle time and the check period of the last session's last call.
    assert!(
        last_call.elapsed() < Duration::from_secs(IDLE_SECS + 5 + 10),
        "{:?}",
        last_call.elapsed()
    );
    for (n, (session, language)) in sessions.iter().enumerate() {
        let reply = server
            .exec(language, "twice()", json!({ "session_id": session }))
            .await?;
        assert_eq!(
            reply.str("result"),
            (2 * n).to_string(),
            "{session}: {reply:?}"
        );
        assert_eq!(reply.str("state_after_restart"), "resumed", "{session}");
        assert!(
            reply.str("restart_reason").contains("suspended"),
            "{session}: {reply:?}"
        );
    }
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn the_reaper_leaves_a_session_with_a_running_execution_alone() -> anyhow::Result<()> {
    // The reaper looks every second (1 s TTL for on-demand sessions); the sessions here are
    // created with a 2 s TTL.
    let server =
        std::sync::Arc::new(Server::start_with_env(&[("SANDBOX_SESSION_TTL_SECS", "1")]).await?);
    server.forbid_own_host_paths();
    let create = |id: &'static str| {
        server.call(
            "create_session",
            json!({ "language": "python", "session_id": id, "ttl_seconds": 2 }),
        )
    };
    assert!(!create("busy").await?.is_error);
    server
        .python("busy", "import os, time\nopen('mine.txt', 'w').write('x')")
        .await?;
    let busy_app = server.workspace_of("busy").expect("workspace");
    let pid = procfs::worker_of_session(server.pid, "busy").expect("worker");
    let call = {
        let server = server.clone();
        tokio::spawn(async move {
            server
                .exec(
                    "python",
                    "while not os.path.exists('gate'):\n    time.sleep(0.01)\n'finished'",
                    json!({ "session_id": "busy", "timeout": 60 }),
                )
                .await
        })
    };
    server
        .wait_for_executions("busy", Duration::from_secs(10), |l| {
            statuses(l) == ["running"]
        })
        .await?;
    // A witness with the same TTL, last used after the busy session: once it is reaped, the
    // reaper has looked at the busy session idle past its TTL too.
    assert!(!create("witness").await?.is_error);
    assert!(server.workspace_of("witness").is_some());
    // No directory of the witness's at all: its own may move when it adopts a pooled worker.
    assert!(
        eventually(Duration::from_secs(15), || server
            .workspace_of("witness")
            .is_none())
        .await,
        "the witness was reaped"
    );
    let witness = server
        .exec("python", "1", json!({ "session_id": "witness" }))
        .await?;
    assert_eq!(witness.str("error_type"), "invalid_session", "{witness:?}");
    assert!(
        busy_app.join("mine.txt").is_file(),
        "the busy session's files stay"
    );
    assert!(procfs::alive(pid), "the busy session's worker runs on");
    std::fs::write(busy_app.join("gate"), "")?;
    let reply = call.await??;
    assert!(!reply.is_error, "{reply:?}");
    assert_eq!(reply.str("result"), "'finished'", "{reply:?}");
    assert!(!reply.bool("session_restarted"), "{reply:?}");
    // Idle from now on: it expires like any other.
    assert!(
        eventually(Duration::from_secs(15), || !busy_app.exists()).await,
        "reaped once idle"
    );
    std::sync::Arc::into_inner(server)
        .expect("sole owner")
        .stop()
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn capacity_comes_back_when_a_session_expires() -> anyhow::Result<()> {
    // One session at most; the reaper looks every second (1 s TTL for on-demand sessions).
    let server = Server::start_with_env(&[
        ("SANDBOX_MAX_SESSIONS", "1"),
        ("SANDBOX_SESSION_TTL_SECS", "1"),
    ])
    .await?;
    server.forbid_own_host_paths();
    let first = server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "first", "ttl_seconds": 3 }),
        )
        .await?;
    assert!(!first.is_error, "{first:?}");
    assert!(server.workspace_of("first").is_some());
    let full = server
        .exec("python", "1", json!({ "session_id": "second" }))
        .await?;
    assert_eq!(full.str("error_type"), "resources_exhausted", "{full:?}");
    assert!(
        // No directory of the session's at all: its own may move when it adopts a pooled
        // worker.
        eventually(Duration::from_secs(15), || server
            .workspace_of("first")
            .is_none())
        .await,
        "the first session expired"
    );
    let health = server.call("list_runtimes", json!({})).await?;
    assert_eq!(health.value["health"]["sessions"], 0, "{health:?}");
    let second = server
        .exec("python", "'room'", json!({ "session_id": "second" }))
        .await?;
    assert!(
        !second.is_error,
        "capacity is back after the expiry: {second:?}"
    );
    assert_eq!(second.str("result"), "'room'");
    let late = server
        .exec("python", "1", json!({ "session_id": "first" }))
        .await?;
    assert_eq!(late.str("error_type"), "invalid_session", "{late:?}");
    assert!(late.str("error_message").contains("expired"), "{late:?}");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hung_worker_is_killed_and_replaced() -> anyhow::Result<()> {
    let server = std::sync::Arc::new(Server::start().await?);
    server
        .exec("python", "x = 1", json!({ "session_id": "hang" }))
        .await?;
    let pid = procfs::worker_of_session(server.pid, "hang").expect("worker");
    let started_file = server
        .workspace_of("hang")
        .expect("workspace")
        .join("started");
    let call = {
        let server = server.clone();
        tokio::spawn(async move {
            server
                .exec(
                    "python",
                    "import time\nopen('started', 'w').close()\ntime.sleep(30)",
                    json!({ "session_id": "hang", "timeout": 1 }),
                )
                .await
        })
    };
    assert!(
        eventually(Duration::from_secs(5), || started_file.is_file()).await,
        "the worker is inside the call"
    );
    assert!(
        procfs::signal(pid, "STOP"),
        "freeze the worker: it can no longer answer"
    );
    let started = Instant::now();
    let reply = call.await??;
    assert_eq!(reply.str("error_type"), "timeout", "{reply:?}");
    assert!(reply.bool("worker_killed"), "{reply:?}");
    // Killed at the 1 s timeout plus the supervisor's KILL_GRACE (3 s), not at the sleep's end.
    assert!(
        started.elapsed() < Duration::from_millis(4500),
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
            "('x' in globals(), 'time' in globals())",
            json!({ "session_id": "hang" }),
        )
        .await?;
    assert!(next.bool("session_restarted"));
    assert_eq!(next.str("state_after_restart"), "resumed");
    assert_eq!(
        next.str("result"),
        "(True, False)",
        "the state before the killed call"
    );
    std::sync::Arc::into_inner(server)
        .expect("sole owner")
        .stop()
        .await
}

/// Starts a server with a few live workers (three sessions', the two of its full pool, its
/// two fork servers and their spares) and returns it with their pids.
async fn busy_server() -> anyhow::Result<(Server, Vec<u32>)> {
    let server = Server::start().await?;
    for (i, language) in ["python", "javascript", "python"].iter().enumerate() {
        server
            .exec(language, "1", json!({ "session_id": format!("s{i}") }))
            .await?;
    }
    let pooled = server.wait_for_pool(2).await?;
    let fork_servers = server.wait_for_fork_servers(2).await?;
    let spares = server.wait_for_spares(2).await?;
    assert_eq!(procfs::session_workers(server.pid).len(), 3);
    let workers: Vec<u32> = procfs::workers_of(server.pid)
        .into_iter()
        .map(|(pid, _)| pid)
        .collect();
    assert_eq!(workers.len(), 9, "{workers:?}");
    assert!(fork_servers.iter().all(|pid| workers.contains(pid)));
    assert!(spares.iter().all(|pid| workers.contains(pid)));
    assert!(pooled.iter().all(|pid| workers.contains(pid)));
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
