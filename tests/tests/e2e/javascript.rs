//! JavaScript sessions: persistence, results, console and errors.

use sandbox_tests::{Reply, Server};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn bindings_persist_between_calls() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let first = server
        .exec("javascript", "var a = 1; let b = 2; const c = 3; function f() { return 4 }\nclass K { v() { return 5 } }", json!({}))
        .await?;
    assert!(!first.is_error, "{first:?}");
    let second = server
        .exec("javascript", "console.log(a + b + c + f() + new K().v()); console.error('warn!'); ({ sum: a + b, list: [1, 2] })", json!({}))
        .await?;
    assert!(!second.is_error, "{second:?}");
    assert_eq!(second.str("stdout"), "15\n");
    assert_eq!(second.str("stderr"), "warn!\n");
    assert_eq!(second.str("result"), "{ sum: 3, list: [ 1, 2 ] }");
    assert!(
        second.text.starts_with("[javascript session "),
        "{}",
        second.text
    );
    let string = server.exec("javascript", "'abc'", json!({})).await?;
    assert_eq!(string.str("result"), "\"abc\"");
    let promise = server
        .exec(
            "javascript",
            "Promise.resolve(6).then(v => v * 7)",
            json!({}),
        )
        .await?;
    assert_eq!(promise.str("result"), "42");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn errors_point_at_the_cell() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let syntax = server.exec("javascript", "let = ;", json!({})).await?;
    assert!(syntax.is_error);
    assert_eq!(syntax.str("error_type"), "syntax_error");
    let thrown = server
        .exec(
            "javascript",
            "function bad() {\n  return undefinedThing.x;\n}\nbad();",
            json!({}),
        )
        .await?;
    assert!(thrown.is_error);
    assert_eq!(thrown.str("error_type"), "runtime_error");
    assert_eq!(thrown.str("error_name"), "ReferenceError");
    assert!(
        thrown.str("stderr").contains("<cell 2>:2"),
        "{}",
        thrown.str("stderr")
    );
    let caught = server
        .exec(
            "javascript",
            "try { null.x } catch (e) { 'caught ' + e.name }",
            json!({}),
        )
        .await?;
    assert!(!caught.is_error);
    assert_eq!(caught.str("result"), "\"caught TypeError\"");
    server.stop().await
}

/// The first answer of a call that traps: the error, the rollback, and the output written
/// before the trap.
fn assert_rolled_back(reply: &Reply, error_type: &str, messages: &[&str]) {
    assert!(reply.is_error, "{reply:?}");
    assert_eq!(reply.str("error_type"), error_type, "{reply:?}");
    assert!(messages.contains(&reply.str("error_message")), "{reply:?}");
    assert!(reply.bool("session_restarted"), "{reply:?}");
    assert_eq!(reply.str("state_after_restart"), "rolled_back", "{reply:?}");
    assert!(
        reply.str("restart_reason").ends_with(
            "; the JavaScript context was rolled back to its state before this execution"
        ),
        "{reply:?}"
    );
    assert!(!reply.bool("worker_killed"), "{reply:?}");
    assert_eq!(
        reply.str("stdout"),
        "before\n",
        "output before the trap is kept"
    );
}

/// The session after the rollback: `lost` (set by the call that trapped) is gone, `kept` (set
/// before) is there, and nothing reports another restart.
async fn assert_state_before_the_call(server: &Server, session: Value) {
    let after = server
        .exec("javascript", "JSON.stringify([typeof lost, kept])", session)
        .await
        .unwrap();
    assert!(!after.is_error, "{after:?}");
    assert!(!after.bool("session_restarted"), "{after:?}");
    let state: Value =
        serde_json::from_str(&serde_json::from_str::<String>(after.str("result")).unwrap())
            .unwrap();
    assert_eq!(
        state[0], "undefined",
        "the trapped call's `var lost` is gone: {after:?}"
    );
    assert_eq!(state[1], "still here", "{after:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn stack_exhaustion_rolls_the_context_back() -> anyhow::Result<()> {
    let server = Server::start().await?;
    server
        .exec("javascript", "var kept = 'still here'", json!({}))
        .await?;
    let deep = server
        .exec("javascript", "var lost = 1; console.log('before'); function down(n) { let a = [n, n + 1, n + 2]; return down(n + 1) + a[0] } down(0)", json!({}))
        .await?;
    assert_rolled_back(
        &deep,
        "stack_overflow",
        &["maximum call stack exceeded (recursion too deep)"],
    );
    assert_state_before_the_call(&server, json!({})).await;
    server.stop().await
}

/// 2^24 numbers: a native sort of them takes about 2 * 10^10 fuel (several seconds) without
/// QuickJS ever polling its interrupt handler, so only a hard trap stops it.
const NUMBERS: usize = 1 << 24;

/// Writes [`NUMBERS`] pseudo-random 32-bit numbers to the session's `numbers.bin` (from the
/// host: filling them in JavaScript would cost more fuel than the sort) and loads them into
/// `var data` with one native read; sets `var kept`. Returns the first numbers.
async fn load_numbers(server: &Server, session: &str) -> anyhow::Result<Vec<u32>> {
    let mut x: u32 = 0x9e37_79b9;
    let numbers: Vec<u32> = (0..NUMBERS)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        })
        .collect();
    let bytes: Vec<u8> = numbers.iter().flat_map(|n| n.to_le_bytes()).collect();
    let app = server
        .workspace_of(session)
        .expect("the session's workspace");
    std::fs::write(app.join("numbers.bin"), bytes)?;
    let loaded = server
        .exec(
            "javascript",
            &format!(
                "var kept = 'still here'; var data = new Uint32Array({NUMBERS}); var f = std.open('numbers.bin', 'rb'); f.read(data.buffer, 0, {}); f.close(); data[0]",
                NUMBERS * 4
            ),
            json!({ "session_id": session }),
        )
        .await?;
    assert_eq!(loaded.str("result"), numbers[0].to_string(), "{loaded:?}");
    Ok(numbers[..3].to_vec())
}

/// The numbers are as they were before the sort that trapped.
async fn assert_unsorted(server: &Server, session: &str, first: &[u32]) {
    let unsorted = server
        .exec(
            "javascript",
            "[data[0], data[1], data[2]].join(',')",
            json!({ "session_id": session }),
        )
        .await
        .unwrap();
    let first: Vec<String> = first.iter().map(u32::to_string).collect();
    assert_eq!(
        unsorted.str("result"),
        format!("\"{}\"", first.join(",")),
        "the array is as it was before the sort: {unsorted:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hard_fuel_trap_rolls_the_context_back() -> anyhow::Result<()> {
    let server = Server::start().await?;
    // A fixed budget of 10^10 (by default the fuel would outlast the timeout).
    let created = server
        .call(
            "create_session",
            json!({ "language": "javascript", "session_id": "fuel", "fuel_budget": 10_000_000_000u64 }),
        )
        .await?;
    assert!(!created.is_error, "{created:?}");
    let session = json!({ "session_id": "fuel", "timeout": 120 });
    server.exec("javascript", "1", session.clone()).await?;
    let numbers = load_numbers(&server, "fuel").await?;
    // The budget runs out inside the sort: the soft interrupt goes unseen, and the trap comes
    // when the fuel reserve is gone or 0.4 s later, whichever is first.
    let sorted = server
        .exec(
            "javascript",
            "var lost = 1; console.log('before'); data.sort(); 'sorted'",
            session.clone(),
        )
        .await?;
    assert_rolled_back(
        &sorted,
        "out_of_fuel",
        &[
            "the execution used up its fuel budget (its CPU allowance)",
            "the execution used up its fuel budget (its CPU allowance) and did not stop when interrupted",
        ],
    );
    assert!(sorted.u64("fuel_consumed") > 10_000_000_000, "{sorted:?}");
    assert_state_before_the_call(&server, json!({ "session_id": "fuel" })).await;
    assert_unsorted(&server, "fuel", &numbers).await;
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hard_deadline_rolls_the_context_back() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let created = server
        .call(
            "create_session",
            json!({ "language": "javascript", "session_id": "deadline", "fuel_budget": 1_000_000_000_000u64 }),
        )
        .await?;
    assert!(!created.is_error, "{created:?}");
    let numbers = load_numbers(&server, "deadline").await?;
    // Fuel never binds: the 0.5 s timeout interrupts, the sort does not notice, and the hard
    // deadline (0.4 s later) traps it.
    let sorted = server
        .exec(
            "javascript",
            "var lost = 1; console.log('before'); data.sort(); 'sorted'",
            json!({ "session_id": "deadline", "timeout": 0.5 }),
        )
        .await?;
    assert_rolled_back(
        &sorted,
        "timeout",
        &["the execution exceeded its 0.5 s timeout and did not stop when interrupted"],
    );
    assert_state_before_the_call(&server, json!({ "session_id": "deadline" })).await;
    assert_unsorted(&server, "deadline", &numbers).await;
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn cells_can_be_re_run_with_repl_semantics() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let js = |code: &'static str| server.exec("javascript", code, json!({}));
    let first = js("let n = 1; const k = 2; class A {}; function getN() { return n }").await?;
    assert!(!first.is_error, "{first:?}");
    // The model re-sends a fixed cell: a later top-level declaration replaces the earlier one,
    // as in the Chrome DevTools console and Deno's REPL; closures see the new binding.
    let again =
        js("let n = 2; const k = 3; class A { x() { return 1 } }\n[n, k, getN(), new A().x()]")
            .await?;
    assert!(!again.is_error, "{again:?}");
    assert_eq!(again.str("result"), "[ 2, 3, 2, 1 ]");
    // Within one cell a redeclaration is still a syntax error, and const stays read-only.
    let twice = js("let z = 1; let z = 2").await?;
    assert!(twice.is_error);
    assert_eq!(twice.str("error_type"), "syntax_error");
    let assign = js("k = 5").await?;
    assert!(assign.is_error);
    assert!(
        assign.str("error_message").contains("read-only"),
        "{assign:?}"
    );
    // A binding left uninitialised by a failed cell can be declared again.
    let failed = js("let q = (() => { throw new Error('boom') })()").await?;
    assert!(failed.is_error);
    let fixed = js("let q = 7; q").await?;
    assert!(!fixed.is_error, "{fixed:?}");
    assert_eq!(fixed.str("result"), "7");
    // var and let of one name still clash, as in every console.
    let clash = js("var n = 1").await?;
    assert!(clash.is_error);
    assert!(
        clash.str("error_message").contains("redeclaration of 'n'"),
        "{clash:?}"
    );
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn workspace_info_lists_let_const_and_classes() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let at = json!({ "session_id": "lexicals" });
    let defined = server
        .exec(
            "javascript",
            "let count = 3; const config = { debug: true }; class Point {}; var legacy = 'v'; function helper() {}\nlet pending = (() => { throw new Error('never initialised') })",
            at.clone(),
        )
        .await?;
    assert!(!defined.is_error, "{defined:?}");
    // A cell that fails while initialising leaves its binding in the temporal dead zone.
    let failed = server
        .exec(
            "javascript",
            "let broken = (() => { throw new Error('x') })()",
            at.clone(),
        )
        .await?;
    assert!(failed.is_error);
    let info = server.call("get_workspace_info", at).await?;
    assert!(!info.is_error, "{info:?}");
    let listed: Vec<(String, String, String)> = info.value["variables"]
        .as_array()
        .expect("variables")
        .iter()
        .map(|v| {
            let field = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
            (field("name"), field("type"), field("repr"))
        })
        .collect();
    let expected = [
        ("Point", "class", "[class Point]"),
        ("config", "object", "{\"debug\":true}"),
        ("count", "number", "3"),
        ("helper", "function", "[function helper]"),
        ("legacy", "string", "\"v\""),
        ("pending", "function", "[function pending]"),
    ];
    let expected: Vec<(String, String, String)> = expected
        .iter()
        .map(|(n, t, r)| ((*n).to_owned(), (*t).to_owned(), (*r).to_owned()))
        .collect();
    assert_eq!(listed, expected, "the uninitialised `broken` is not listed");
    server.stop().await
}

/// Timers as in Node: a timer fires after its delay, pending timers run before the call ends,
/// in order of due time, and a timer due after the call's timeout never runs: the call ends as
/// a timeout, with advice that names the timer.
#[tokio::test(flavor = "multi_thread")]
async fn timers_fire_after_their_delay_within_the_timeout() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let s = json!({ "session_id": "timers" });
    let waited = server
        .exec(
            "javascript",
            "const t0 = Date.now();\nsetTimeout(() => console.log('late', Date.now() - t0 >= 1000), 1000);\nsetTimeout(() => console.log('early', Date.now() - t0 >= 300), 300);\nawait new Promise(r => setTimeout(r, 100));\nconsole.log('awaited', Date.now() - t0 >= 100);",
            s.clone(),
        )
        .await?;
    assert!(!waited.is_error, "{waited:?}");
    assert_eq!(
        waited.str("stdout"),
        "awaited true\nearly true\nlate true\n",
        "{waited:?}"
    );
    let ms = waited.value["execution_time_ms"].as_f64().unwrap_or(0.0);
    assert!(ms >= 1000.0, "the call waited for its last timer: {ms} ms");

    let past = server
        .exec(
            "javascript",
            "console.log('scheduled');\nsetTimeout(() => console.log('fired'), 60000);",
            json!({ "session_id": "timers", "timeout": 1 }),
        )
        .await?;
    assert!(past.is_error, "{past:?}");
    assert_eq!(past.str("error_type"), "timeout", "{past:?}");
    assert_eq!(
        past.str("stdout"),
        "scheduled\n",
        "the timer never ran: {past:?}"
    );
    let ms = past.value["execution_time_ms"].as_f64().unwrap_or(f64::MAX);
    assert!(ms < 10_000.0, "it ended at its timeout: {ms} ms");
    let fixes = past.value["actionable_guidance"].to_string();
    assert!(fixes.contains("setTimeout"), "{past:?}");
    // The session goes on.
    let after = server.exec("javascript", "1 + 1", s).await?;
    assert_eq!(after.str("result"), "2", "{after:?}");
    server.stop().await
}
