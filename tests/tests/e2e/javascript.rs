//! JavaScript sessions: persistence, results, console and errors.

use sandbox_tests::Server;
use serde_json::json;

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
    assert_eq!(second.str("language"), "javascript");
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

#[tokio::test(flavor = "multi_thread")]
async fn stack_exhaustion_rolls_the_context_back() -> anyhow::Result<()> {
    let server = Server::start().await?;
    server
        .exec("javascript", "var kept = 'still here'", json!({}))
        .await?;
    let deep = server
        .exec("javascript", "var lost = 1; function down(n) { let a = [n, n + 1, n + 2]; return down(n + 1) + a[0] } down(0)", json!({}))
        .await?;
    assert!(deep.is_error, "{deep:?}");
    assert_eq!(deep.str("error_type"), "stack_overflow");
    let after = server.exec("javascript", "kept", json!({})).await?;
    assert_eq!(after.str("result"), "\"still here\"", "{after:?}");
    server.stop().await
}
