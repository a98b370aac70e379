//! Limits: timeouts (soft interrupt, state kept), fuel, memory and output caps.

use std::time::Duration;

use sandbox_tests::Server;
use serde_json::json;

/// A session whose fuel never binds first, so the wall clock is what stops the code.
async fn unmetered(server: &Server, language: &str, id: &str) -> anyhow::Result<()> {
    let created = server
        .call(
            "create_session",
            json!({ "language": language, "session_id": id, "fuel_budget": 1_000_000_000_000u64 }),
        )
        .await?;
    assert!(!created.is_error, "{created:?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn python_timeouts_interrupt_and_keep_state() -> anyhow::Result<()> {
    let server = Server::start().await?;
    unmetered(&server, "python", "py-timeout").await?;
    let session = json!({ "session_id": "py-timeout", "timeout": 2 });
    server
        .exec("python", "kept = 'yes'", session.clone())
        .await?;

    let spin = server
        .exec("python", "while True: pass", session.clone())
        .await?;
    assert!(spin.is_error);
    assert_eq!(spin.str("error_type"), "timeout", "{spin:?}");
    assert!(
        spin.elapsed < Duration::from_millis(3000),
        "answered in {:?}",
        spin.elapsed
    );
    assert!(!spin.bool("session_restarted"));

    let sleep = server
        .exec("python", "import time\ntime.sleep(100)", session.clone())
        .await?;
    assert_eq!(sleep.str("error_type"), "timeout", "{sleep:?}");
    assert!(
        sleep.elapsed < Duration::from_millis(3000),
        "sleep answered in {:?}",
        sleep.elapsed
    );

    let after = server.exec("python", "kept", session.clone()).await?;
    assert_eq!(
        after.str("result"),
        "'yes'",
        "state survives the interrupts: {after:?}"
    );

    // Code that swallows the interrupt is stopped by force; the interpreter is replaced, and
    // the session's state before the call is put back into the new one.
    let stubborn = "import time\nwhile True:\n    try:\n        time.sleep(10)\n    except KeyboardInterrupt:\n        pass";
    let forced = server
        .exec(
            "python",
            stubborn,
            json!({ "session_id": "py-timeout", "timeout": 1 }),
        )
        .await?;
    assert_eq!(forced.str("error_type"), "timeout", "{forced:?}");
    assert!(forced.bool("session_restarted"));
    assert_eq!(forced.str("state_after_restart"), "rolled_back");
    assert!(
        forced.elapsed < Duration::from_millis(2500),
        "{:?}",
        forced.elapsed
    );
    let back = server.exec("python", "kept", session.clone()).await?;
    assert_eq!(
        back.str("result"),
        "'yes'",
        "the state before the forced call is back: {back:?}"
    );
    let works = server.exec("python", "print('working')", session).await?;
    assert_eq!(works.str("stdout"), "working\n");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn javascript_timeouts_interrupt_and_keep_state() -> anyhow::Result<()> {
    let server = Server::start().await?;
    unmetered(&server, "javascript", "js-timeout").await?;
    let session = json!({ "session_id": "js-timeout", "timeout": 2 });
    server
        .exec("javascript", "let kept = 'yes'", session.clone())
        .await?;
    let spin = server
        .exec("javascript", "for (;;) {}", session.clone())
        .await?;
    assert_eq!(spin.str("error_type"), "timeout", "{spin:?}");
    assert!(
        spin.elapsed < Duration::from_millis(3000),
        "answered in {:?}",
        spin.elapsed
    );
    // A sleep past the deadline is cut short there; the few steps after it must not turn the
    // cut-short run into a success.
    let slept = server
        .exec("javascript", "os.sleep(60000); 'finished'", session.clone())
        .await?;
    assert_eq!(slept.str("error_type"), "timeout", "{slept:?}");
    assert!(slept.is_null("result"), "{slept:?}");
    let after = server.exec("javascript", "kept", session).await?;
    assert_eq!(after.str("result"), "\"yes\"");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fuel_budget_is_a_deterministic_cap() -> anyhow::Result<()> {
    let server = Server::start().await?;
    for (language, id) in [("javascript", "js-capped"), ("python", "py-capped")] {
        let created = server
            .call(
                "create_session",
                json!({ "language": language, "session_id": id, "fuel_budget": 10_000_000_000u64 }),
            )
            .await?;
        assert!(!created.is_error, "{created:?}");
    }
    let js = server
        .exec(
            "javascript",
            "let i = 0; for (;;) { i++ }",
            json!({ "session_id": "js-capped", "timeout": 120 }),
        )
        .await?;
    assert_eq!(js.str("error_type"), "out_of_fuel", "{js:?}");
    assert!(js.u64("fuel_consumed") >= 10_000_000_000);
    assert_eq!(
        js.u64("fuel_budget"),
        10_000_000_000,
        "as given, whatever the timeout"
    );
    let py = server
        .exec(
            "python",
            "n = 0\nwhile True:\n    n += 1",
            json!({ "session_id": "py-capped", "timeout": 120 }),
        )
        .await?;
    assert_eq!(py.str("error_type"), "out_of_fuel", "{py:?}");
    assert_eq!(py.u64("fuel_budget"), 10_000_000_000);
    let after = server
        .exec("python", "n > 0", json!({ "session_id": "py-capped" }))
        .await?;
    assert_eq!(
        after.str("result"),
        "True",
        "state kept after the fuel interrupt: {after:?}"
    );
    server.stop().await
}

/// Issue 25: at default settings the timeout, not the fuel, stops a CPU-bound cell (softly,
/// state kept), and work that fits in the timeout finishes, on every runtime.
#[tokio::test(flavor = "multi_thread")]
async fn fuel_stands_behind_the_timeout_by_default() -> anyhow::Result<()> {
    let server = Server::start().await?;
    for (language, setup, spin) in [
        ("python", "kept = 'yes'", "while True: pass"),
        ("javascript", "var kept = 'yes'", "for (;;) {}"),
    ] {
        let session = json!({ "session_id": format!("{language}-spin"), "timeout": 2 });
        server.exec(language, setup, session.clone()).await?;
        let stopped = server.exec(language, spin, session.clone()).await?;
        assert_eq!(
            stopped.str("error_type"),
            "timeout",
            "{language}: {stopped:?}"
        );
        assert!(
            stopped.elapsed >= Duration::from_millis(1900)
                && stopped.elapsed < Duration::from_millis(4000),
            "{language}: stopped after {:?}",
            stopped.elapsed
        );
        assert!(!stopped.bool("session_restarted"), "{stopped:?}");
        let after = server.exec(language, "kept", session).await?;
        assert!(after.str("result").contains("yes"), "{language}: {after:?}");
    }
    // Issue 25's CPU-bound cell: 7.4 × 10^9 fuel on CPython 3.15, about a second, and it
    // finishes at default settings.
    let squares = server
        .exec("python", "sum(i * i for i in range(3_000_000))", json!({}))
        .await?;
    assert_eq!(squares.str("result"), "8999995500000500000", "{squares:?}");
    assert!(squares.u64("fuel_consumed") > 5_000_000_000, "{squares:?}");
    assert!(squares.u64("fuel_budget") >= 300_000_000_000, "{squares:?}");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn memory_cap_is_an_error_not_a_crash() -> anyhow::Result<()> {
    let server = Server::start().await?;
    server
        .exec("python", "small = [1, 2, 3]", json!({}))
        .await?;
    let big = server
        .exec("python", "huge = bytearray(1536 * 1024 * 1024)", json!({}))
        .await?;
    assert_eq!(big.str("error_type"), "out_of_memory", "{big:?}");
    let after = server.exec("python", "sum(small)", json!({})).await?;
    assert_eq!(after.str("result"), "6");
    // Memory filled by many small objects: every page up to the cap is written, so the state
    // layer after the call is as large as the memory. The worker sends it in parts as it makes
    // it; it used to build it whole and abort on the allocation (worker_crashed, state lost).
    let grid = server
        .exec(
            "python",
            "SIZE = 20_000\ngrid = [[0] * SIZE for _ in range(SIZE)]",
            json!({}),
        )
        .await?;
    assert_eq!(grid.str("error_type"), "out_of_memory", "{grid:?}");
    assert!(!grid.bool("session_restarted"), "{grid:?}");
    let after = server.exec("python", "sum(small)", json!({})).await?;
    assert_eq!(after.str("result"), "6", "{after:?}");

    let created = server
        .call(
            "create_session",
            json!({ "language": "javascript", "session_id": "js-small", "memory_bytes": 64 << 20 }),
        )
        .await?;
    assert_eq!(created.value["limits"]["memory_bytes"], 64 << 20);
    let small_js = json!({ "session_id": "js-small" });
    server
        .exec("javascript", "let small = [1, 2, 3]", small_js.clone())
        .await?;
    let js = server
        .exec(
            "javascript",
            "let a = []; for (;;) a.push(new Array(100000).fill(1))",
            small_js.clone(),
        )
        .await?;
    assert_eq!(js.str("error_type"), "out_of_memory", "{js:?}");
    let js_after = server.exec("javascript", "small.length", small_js).await?;
    assert_eq!(js_after.str("result"), "3");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn output_is_capped_and_flagged() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let flood = server
        .exec(
            "python",
            "import sys\nfor _ in range(3000):\n    sys.stdout.write('x' * 1000)\n'done'",
            json!({}),
        )
        .await?;
    assert!(
        !flood.is_error,
        "a flood is not an error: {:?}",
        flood.value["error_message"]
    );
    assert!(flood.bool("stdout_truncated"));
    assert_eq!(
        (flood.bool("success"), flood.str("error_type")),
        (true, "output_limit")
    );
    assert_eq!(flood.str("stdout").len(), 1 << 20);
    assert_eq!(flood.str("result"), "'done'");
    assert!(flood.text.len() < 16 * 1024, "the text block stays short");
    let js = server
        .exec(
            "javascript",
            "for (let i = 0; i < 30000; i++) console.log('y'.repeat(100))",
            json!({}),
        )
        .await?;
    assert!(js.bool("stdout_truncated"));
    assert_eq!(js.str("error_type"), "output_limit");
    server.stop().await
}
