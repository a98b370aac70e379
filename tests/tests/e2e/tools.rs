//! The session tools and bad input.

use sandbox_tests::{Reply, Server};
use serde_json::json;

/// The message of a refused call: a JSON-RPC error, or a tool error rmcp produced while
/// validating the arguments. Panics when the call was accepted.
fn refusal(outcome: anyhow::Result<Reply>) -> String {
    match outcome {
        Err(e) => e.to_string(),
        Ok(reply) if reply.is_error && reply.value.is_null() => reply.text,
        Ok(reply) => panic!("must be refused, got {reply:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_are_created_used_and_destroyed() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let tools = server.tool_names().await?;
    for tool in [
        "execute_code",
        "create_session",
        "destroy_session",
        "list_runtimes",
    ] {
        assert!(
            tools.iter().any(|t| t == tool),
            "{tool} listed in {tools:?}"
        );
    }
    let created = server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "mine" }),
        )
        .await?;
    assert!(!created.is_error);
    assert_eq!(created.str("session_id"), "mine");
    assert!(created.str("created_at").ends_with('Z') && created.str("expires_at").ends_with('Z'));
    let again = server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "mine" }),
        )
        .await;
    assert!(again.unwrap_err().to_string().contains("already exists"));

    server
        .exec("python", "v = 'in mine'", json!({ "session_id": "mine" }))
        .await?;
    let other = server
        .exec("python", "v", json!({ "session_id": "on-demand" }))
        .await?;
    assert_eq!(
        other.str("error_name"),
        "NameError",
        "sessions are isolated"
    );
    let mine = server
        .exec("python", "v", json!({ "session_id": "mine" }))
        .await?;
    assert_eq!(mine.str("result"), "'in mine'");

    let wrong_language = server
        .exec("javascript", "1", json!({ "session_id": "mine" }))
        .await;
    assert!(
        wrong_language.is_err(),
        "a python session does not run javascript"
    );

    let destroyed = server
        .call("destroy_session", json!({ "session_id": "mine" }))
        .await?;
    assert!(destroyed.bool("destroyed"));
    assert!(
        server
            .call("destroy_session", json!({ "session_id": "mine" }))
            .await
            .is_err()
    );
    let recreated = server
        .exec(
            "python",
            "'v' in globals()",
            json!({ "session_id": "mine" }),
        )
        .await?;
    assert_eq!(
        recreated.str("result"),
        "False",
        "a destroyed id starts fresh"
    );

    let runtimes = server.call("list_runtimes", json!({})).await?;
    let listed = runtimes.value["runtimes"].as_array().expect("runtimes");
    let versions: Vec<&str> = listed
        .iter()
        .filter_map(|r| r["version"].as_str())
        .collect();
    assert_eq!(versions, ["CPython 3.12.0", "QuickJS-NG 0.16.2"]);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_arguments_are_clear_errors() -> anyhow::Result<()> {
    let server = Server::start().await?;
    for (args, expect) in [
        (
            json!({ "language": "python", "code": "1", "session_id": "../etc" }),
            "invalid session_id",
        ),
        (
            json!({ "language": "python", "code": "1", "session_id": "a b" }),
            "invalid session_id",
        ),
        (json!({ "language": "cobol", "code": "1" }), "cobol"),
        (json!({ "language": "python" }), "code"),
        (
            json!({ "language": "python", "code": "   " }),
            "must not be empty",
        ),
        (
            json!({ "language": "python", "code": "1", "timeout": -1 }),
            "timeout",
        ),
        (
            json!({ "language": "python", "code": "1", "timeout": 100000 }),
            "timeout",
        ),
    ] {
        let err = refusal(server.call("execute_code", args.clone()).await);
        assert!(err.contains(expect), "{args}: {err}");
    }
    let huge = "x = 1\n".repeat(300_000);
    let err = refusal(server.exec("python", &huge, json!({})).await);
    assert!(err.contains("limit"), "{err}");
    let ok = server.exec("python", "'still serving'", json!({})).await?;
    assert_eq!(ok.str("result"), "'still serving'");
    server.stop().await
}
