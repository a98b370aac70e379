//! Kill-the-worker chaos: under concurrent load on 8 sessions of both languages, SIGKILL random
//! workers at random moments (at least 200 kills, bounded in time). The supervisor must never
//! die, every call must get a result or a clean error within its timeout plus a second, every
//! session keeps its state (killed or not), and nothing leaks: no zombie, no orphan, no
//! session's files after its destroy (an adopted session's pooled directory included), no
//! socket or workspace after shutdown.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use sandbox_tests::{Server, host, procfs};
use serde_json::json;

/// Kills to reach, and the wall-clock bound of the whole run.
const KILLS: usize = 200;
const RUN_LIMIT: Duration = Duration::from_secs(90);
/// Timeout given to every call under load.
const CALL_TIMEOUT: f64 = 5.0;

/// A tiny deterministic PRNG (xorshift), so a failing run can be replayed from its seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Sessions 0..6 are victims; 6 and 7 are never killed and must keep their state.
fn session(i: usize) -> (String, &'static str) {
    (
        format!("chaos-{i}"),
        if i.is_multiple_of(2) {
            "python"
        } else {
            "javascript"
        },
    )
}

/// What a successful call must answer.
struct Expected {
    stdout: String,
    stderr: String,
    result: Option<String>,
}

/// Call `n` of session `i` in `language` (`kind` 0..4), with the exact answer it must get. Every
/// answer names the session and most name the call, so crossed replies cannot pass.
fn call(language: &str, kind: usize, i: usize, n: u64) -> (String, Expected) {
    let expect = |stdout: String, stderr: String, result: Option<String>| Expected {
        stdout,
        stderr,
        result,
    };
    match (language, kind) {
        ("python", 0) => (
            format!("print({i}, {n})"),
            expect(format!("{i} {n}\n"), String::new(), None),
        ),
        ("python", 1) => (
            format!("({i}, sum(k * k for k in range(20000)))"),
            expect(
                String::new(),
                String::new(),
                Some(format!("({i}, 2666466670000)")),
            ),
        ),
        ("python", 2) => (
            format!("import time\ntime.sleep(0.05)\n({i}, {n})"),
            expect(String::new(), String::new(), Some(format!("({i}, {n})"))),
        ),
        ("python", _) => (
            format!("import os\n({i}, os.write(1, b'\\xff{{\"jsonrpc\":\"2.0\"}}\\n' * 100))"),
            expect(
                "\u{fffd}{\"jsonrpc\":\"2.0\"}\n".repeat(100),
                String::new(),
                Some(format!("({i}, 1900)")),
            ),
        ),
        (_, 0) => (
            format!("console.log({i}, {n})"),
            expect(format!("{i} {n}\n"), String::new(), None),
        ),
        (_, 1) => (
            format!(
                "[{i}, (() => {{ let s = 0; for (let k = 0; k < 100000; k++) s += k; return s }})()]"
            ),
            expect(
                String::new(),
                String::new(),
                Some(format!("[ {i}, 4999950000 ]")),
            ),
        ),
        (_, 2) => (
            format!("[{i}, {n}, JSON.stringify(Array.from({{length: 1000}}, (_, k) => k)).length]"),
            expect(
                String::new(),
                String::new(),
                Some(format!("[ {i}, {n}, 3891 ]")),
            ),
        ),
        (_, _) => (
            format!("console.error('\\u0000\\ufffd'.repeat(1000)); [{i}, {n}]"),
            expect(
                String::new(),
                format!("{}\n", "\u{0}\u{fffd}".repeat(1000)),
                Some(format!("[ {i}, {n} ]")),
            ),
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killing_workers_under_load_never_hurts_the_server() -> anyhow::Result<()> {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_nanos() as u64
        | 1;
    eprintln!("chaos seed {seed}");
    let server = Arc::new(Server::start().await?);
    // The first two sessions (one of each language) adopt the pool's pre-started workers, so
    // both kinds of session are killed, restarted and destroyed below.
    server.wait_for_pool(2).await?;
    for i in 0..8 {
        let (id, language) = session(i);
        let set = if language == "python" {
            format!("marker = {i}")
        } else {
            format!("var marker = {i}")
        };
        let reply = server
            .exec(language, &set, json!({ "session_id": id }))
            .await?;
        assert!(!reply.is_error, "{reply:?}");
        // The marker's state kept before the kills begin (it is kept just behind the answer).
        server.settled(&id).await?;
        if i < 2 {
            assert!(
                host::adopted_dir_of(&server.state_dir, &id).is_some(),
                "{id} adopted a pre-started worker"
            );
        }
    }

    let stop = Arc::new(AtomicBool::new(false));
    let calls = Arc::new(AtomicUsize::new(0));
    let mut load = Vec::new();
    for i in 0..8 {
        let (server, stop, calls) = (server.clone(), stop.clone(), calls.clone());
        load.push(tokio::spawn(async move {
            let (id, language) = session(i);
            let mut rng = Rng(seed ^ ((i as u64 + 1) * 0x9e37_79b9_7f4a_7c15));
            let mut n = 0u64;
            while !stop.load(Ordering::SeqCst) {
                n += 1;
                let (code, expected) = call(language, rng.below(4), i, n);
                let started = Instant::now();
                let reply = server
                    .exec(
                        language,
                        &code,
                        json!({ "session_id": id, "timeout": CALL_TIMEOUT }),
                    )
                    .await;
                let elapsed = started.elapsed();
                let reply = reply
                    .unwrap_or_else(|e| panic!("session {id}: protocol error under chaos: {e}"));
                assert!(
                    elapsed < Duration::from_secs_f64(CALL_TIMEOUT + 1.0),
                    "session {id}: answered in {elapsed:?}"
                );
                if reply.is_error {
                    let kind = reply.str("error_type");
                    assert!(
                        kind == "worker_crashed" || (i < 6 && kind == "system_error"),
                        "session {id}: unexpected {kind}: {reply:?}"
                    );
                    assert!(i < 6, "a protected session failed: {reply:?}");
                } else {
                    // Every answer is this call's own: a reply crossed with another session's
                    // or another call's has other output.
                    assert_eq!(reply.str("session_id"), id, "{reply:?}");
                    assert_eq!(
                        (
                            reply.str("stdout"),
                            reply.str("stderr"),
                            reply.opt_str("result")
                        ),
                        (
                            expected.stdout.as_str(),
                            expected.stderr.as_str(),
                            expected.result.as_deref()
                        ),
                        "session {id}, call {n}: {code}"
                    );
                }
                calls.fetch_add(1, Ordering::SeqCst);
            }
        }));
    }

    let mut rng = Rng(seed);
    let mut kills = 0;
    let started = Instant::now();
    while kills < KILLS && started.elapsed() < RUN_LIMIT {
        tokio::time::sleep(Duration::from_millis(5 + rng.below(30) as u64)).await;
        let victim = session(rng.below(6)).0;
        if let Some(pid) = procfs::worker_of_session(server.pid, &victim)
            && procfs::signal(pid, "KILL")
        {
            kills += 1;
        }
        assert!(
            procfs::processes()
                .iter()
                .any(|(pid, ..)| *pid == server.pid),
            "the supervisor died"
        );
    }
    stop.store(true, Ordering::SeqCst);
    for task in load {
        task.await?;
    }
    eprintln!(
        "chaos: {kills} kills, {} calls in {:?}",
        calls.load(Ordering::SeqCst),
        started.elapsed()
    );
    assert!(kills >= KILLS, "only {kills} kills in {RUN_LIMIT:?}");

    // Every session kept its state: the protected ones in their workers, the victims through
    // every kill (each new worker resumed the state after the last call that returned).
    for i in 0..8 {
        let (id, language) = session(i);
        let marker = server
            .exec(language, "marker", json!({ "session_id": id }))
            .await?;
        assert_eq!(marker.str("result"), i.to_string(), "{marker:?}");
    }
    // Every killed worker was reaped: no zombie children.
    let zombies: Vec<u32> = procfs::workers_of(server.pid)
        .into_iter()
        .filter(|(_, s)| *s == 'Z')
        .map(|(p, _)| p)
        .collect();
    assert!(zombies.is_empty(), "zombies: {zombies:?}");
    // Eventually: the pool may be refilling, and a worker just killed may still be exiting
    // (its command line already gone); a leaked worker stays and fails this.
    let settled = sandbox_tests::eventually(Duration::from_secs(5), || {
        procfs::session_workers(server.pid).len() == 8
    })
    .await;
    let workers = procfs::session_workers(server.pid);
    let described: Vec<(u32, String)> = workers
        .iter()
        .map(|pid| (*pid, procfs::cmdline(*pid)))
        .collect();
    let links: Vec<(String, String)> = procfs::state_dir_of(server.pid)
        .and_then(|state| std::fs::read_dir(state.join("sessions")).ok())
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| {
            let target = std::fs::read_link(entry.path())
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            (entry.file_name().to_string_lossy().into_owned(), target)
        })
        .collect();
    assert!(
        settled,
        "one worker per session: {described:#?}\npooled: {:?}\nsessions/: {links:#?}",
        procfs::pooled_workers(server.pid)
    );

    // Destroying every session removes all that held its files, the directory an adopted
    // session only links to included.
    let mut storage = Vec::new();
    for i in 0..8 {
        let (id, _) = session(i);
        storage.extend(host::session_storage(&server.state_dir, &id));
        let destroyed = server
            .call("destroy_session", json!({ "session_id": id }))
            .await?;
        assert!(!destroyed.is_error, "{destroyed:?}");
    }
    assert!(
        storage
            .iter()
            .any(|p| p.to_string_lossy().contains("/_pooled.")),
        "{storage:?}"
    );
    assert!(
        sandbox_tests::eventually(Duration::from_secs(5), || host::still_there(&storage)
            .is_empty())
        .await,
        "left after destroy_session: {:?}",
        host::still_there(&storage)
    );

    let (pid, state_dir) = (server.pid, server.state_dir.clone());
    Arc::into_inner(server).expect("sole owner").stop().await?;
    assert!(
        sandbox_tests::eventually(Duration::from_secs(3), || {
            !procfs::processes().iter().any(|(p, ..)| *p == pid)
        })
        .await,
        "the server exits"
    );
    assert!(
        workers.iter().all(|w| !procfs::all_workers().contains(w)),
        "no orphan workers"
    );
    assert!(!state_dir.exists(), "no leftover sockets or workspaces");
    Ok(())
}
