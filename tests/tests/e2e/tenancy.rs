//! Tenancy over Streamable HTTP, with rmcp's own HTTP client: each MCP session (one bearer
//! token) or each named principal (`SANDBOX_HTTP_TOKENS_FILE`) sees only its own sandboxes.
//! Another tenant's session id runs in a session of one's own, and every tool, resource and
//! cancel aimed at another tenant's session or execution is answered exactly as for one that
//! does not exist; a wrong token gets 401; and per-principal caps on sessions and concurrent
//! executions hold one principal back without touching the other.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use rmcp::model::{ErrorCode, ErrorData, ResourceContents};
use sandbox_tests::host::HostPaths;
use sandbox_tests::{Client, HttpServer};
use serde_json::{Value, json};

const TOKEN: &str = "tenancy-token-5c1e";
const ALICE: &str = "alice-token-83b0f2";
const BOB: &str = "bob-token-1d94aa";

fn uri(session: &str, path: &str) -> String {
    format!("sandbox://sessions/{session}/files/{path}")
}

/// Writes a tokens file naming alice and bob (with a comment and a blank line).
fn tokens_file() -> Result<tempfile::NamedTempFile> {
    let mut file = tempfile::NamedTempFile::new()?;
    writeln!(file, "# e2e principals\nalice:{ALICE}\n\nbob:{BOB}")?;
    file.flush()?;
    Ok(file)
}

/// Expects `secret` to be undefined in `session` as this client sees it: a NameError in a
/// session of its own, never the other tenant's value.
async fn secret_is_not_visible(client: &Client, session: &str, paths: &HostPaths) -> Result<()> {
    let reply = client
        .exec("python", "secret", json!({ "session_id": session }))
        .await?;
    paths.check_reply("secret", &reply);
    ensure!(
        reply.is_error,
        "another tenant's variable is visible: {reply:?}"
    );
    assert_eq!(reply.str("error_type"), "runtime_error", "{reply:?}");
    assert_eq!(reply.str("error_name"), "NameError", "{reply:?}");
    Ok(())
}

/// Asserts two errors are the same once the ids they are about are replaced: code, message and
/// data. Another tenant's session or execution must be indistinguishable from a missing one.
fn assert_same_modulo_id(
    what: &str,
    theirs: &ErrorData,
    their_id: &str,
    missing: &ErrorData,
    missing_id: &str,
) {
    let shape = |e: &ErrorData, id: &str| {
        (
            e.code,
            e.message.replace(id, "<id>"),
            e.data.as_ref().map(|d| d.to_string().replace(id, "<id>")),
        )
    };
    assert_eq!(
        shape(theirs, their_id),
        shape(missing, missing_id),
        "{what}: another tenant's id is told apart from a missing one"
    );
}

/// A JSON-RPC error from a tool call.
async fn rpc_error(client: &Client, tool: &str, args: Value) -> Result<ErrorData> {
    match client.call_rpc(tool, args.clone()).await? {
        Err(error) => Ok(error),
        Ok(reply) => bail!("{tool} {args}: a JSON-RPC error was expected, got {reply:?}"),
    }
}

/// Expects the session-scoped tools to answer `foreign` (another tenant's session) exactly as
/// they answer `nobody` (no one's): a JSON-RPC error with `data.error_type == "invalid_session"`
/// and the same message once the ids are replaced.
async fn foreign_like_missing(
    client: &Client,
    foreign: &str,
    nobody: &str,
    paths: &HostPaths,
) -> Result<()> {
    for tool in ["get_workspace_info", "destroy_session", "reset_workspace"] {
        let theirs = rpc_error(client, tool, json!({ "session_id": foreign })).await?;
        let missing = rpc_error(client, tool, json!({ "session_id": nobody })).await?;
        paths.check_error(tool, &theirs);
        let error_type = |e: &ErrorData| {
            e.data
                .as_ref()
                .and_then(|d| d.get("error_type"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        assert_eq!(
            error_type(&theirs).as_deref(),
            Some("invalid_session"),
            "{tool}: {theirs:?}"
        );
        assert_eq!(error_type(&missing).as_deref(), Some("invalid_session"));
        assert_same_modulo_id(tool, &theirs, foreign, &missing, nobody);
    }
    Ok(())
}

/// Polls `client`'s get_workspace_info of `session` until an execution runs; its id.
async fn running_execution(client: &Client, session: &str) -> Result<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let info = client
            .call("get_workspace_info", json!({ "session_id": session }))
            .await?;
        if let Some(id) = info.value["running_executions"]
            .as_array()
            .and_then(|r| r.first())
            .and_then(|e| e["execution_id"].as_str())
        {
            return Ok(id.to_owned());
        }
        ensure!(Instant::now() < deadline, "no running execution: {info:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The HTTP status of an `initialize` POST with `token` (raw HTTP/1.1).
fn initialize_status(url: &str, token: Option<&str>) -> Result<u16> {
    let address = url
        .strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())
        .context("url")?;
    let mut stream = std::net::TcpStream::connect(address)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "e2e", "version": "1"}}})
    .to_string();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\n{auth}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let mut head = [0u8; 64];
    let n = stream.read(&mut head)?;
    let head = String::from_utf8_lossy(&head[..n]);
    head.split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .with_context(|| format!("no status in {head:?}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn http_clients_do_not_reach_each_others_sessions() -> Result<()> {
    let server = HttpServer::start(&[("SANDBOX_HTTP_TOKEN", TOKEN)]).await?;
    let paths = server.host_paths();
    let a = server.connect(Some(TOKEN)).await?;
    let b = server.connect(Some(TOKEN)).await?;

    a.python("s1", "secret = 42").await?;
    a.python(
        "a-only",
        "secret = 43\nopen('a.txt', 'w').write('A-FILE-CONTENT')",
    )
    .await?;
    a.python("a-only", "import time").await?;
    a.exec("python", "open('a-default.txt', 'w').write('x')", json!({}))
        .await?;

    // The same id from B is B's own session.
    secret_is_not_visible(&b, "s1", &paths).await?;
    foreign_like_missing(&b, "a-only", "zz-nobody", &paths).await?;

    // Resources: refused exactly like a session that does not exist, and not listed.
    let theirs = b.read_refused(&uri("a-only", "a.txt")).await?;
    let missing = b.read_refused(&uri("zz-nobody", "a.txt")).await?;
    paths.check_error("resources/read", &theirs);
    assert_eq!(theirs.code, ErrorCode::RESOURCE_NOT_FOUND, "{theirs:?}");
    assert_same_modulo_id("resources/read", &theirs, "a-only", &missing, "zz-nobody");
    ensure!(!theirs.message.contains("A-FILE-CONTENT"));
    let listed: Vec<String> = b
        .list_resources()
        .await?
        .into_iter()
        .map(|r| r.uri.clone())
        .collect();
    ensure!(
        !listed
            .iter()
            .any(|u| u.contains("a-only") || u.contains("a-default") || u.contains("a.txt")),
        "B lists A's files: {listed:?}"
    );
    let a_listed: Vec<String> = a
        .list_resources()
        .await?
        .into_iter()
        .map(|r| r.uri.clone())
        .collect();
    ensure!(
        a_listed.iter().any(|u| u.ends_with("/a-default.txt")),
        "A lists its own file: {a_listed:?}"
    );

    // Cancel: B cannot stop A's execution, and is told what an unknown id gets.
    let running = {
        let a = std::sync::Arc::new(a);
        let runner = a.clone();
        let task = tokio::spawn(async move {
            runner
                .exec(
                    "python",
                    "time.sleep(3)\n'done'",
                    json!({ "session_id": "a-only" }),
                )
                .await
        });
        let execution_id = running_execution(&a, "a-only").await?;
        let unknown = "exec-00000000000000000000000000000000";
        let theirs = rpc_error(
            &b,
            "cancel_execution",
            json!({ "execution_id": execution_id }),
        )
        .await?;
        let missing = rpc_error(&b, "cancel_execution", json!({ "execution_id": unknown })).await?;
        paths.check_error("cancel_execution", &theirs);
        assert_same_modulo_id(
            "cancel_execution",
            &theirs,
            &execution_id,
            &missing,
            unknown,
        );
        let done = task.await??;
        ensure!(!done.is_error, "A's execution was disturbed: {done:?}");
        assert_eq!(done.str("result"), "'done'");
        std::sync::Arc::into_inner(a).context("sole owner")?
    };

    // A's sessions are intact.
    let s1 = running.python("s1", "secret").await?;
    assert_eq!(s1.str("result"), "42");
    let own = running
        .python("a-only", "secret, open('a.txt').read()")
        .await?;
    assert_eq!(own.str("result"), "(43, 'A-FILE-CONTENT')");
    let read = running.read_resource(&uri("a-only", "a.txt")).await?;
    ensure!(
        matches!(&read.contents[0], ResourceContents::TextResourceContents { text, .. } if text == "A-FILE-CONTENT"),
        "{read:?}"
    );
    let b_own = b.python("s1", "'b'").await?;
    assert_eq!(b_own.str("result"), "'b'");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn named_principals_share_sessions_within_and_never_across() -> Result<()> {
    let tokens = tokens_file()?;
    let server =
        HttpServer::start(&[("SANDBOX_HTTP_TOKENS_FILE", tokens.path().to_str().unwrap())]).await?;
    let paths = server.host_paths().with(tokens.path());
    for wrong in [Some("nope"), Some("alice"), Some(&ALICE[1..]), None] {
        assert_eq!(
            initialize_status(&server.url, wrong)?,
            401,
            "token {wrong:?} is refused"
        );
        ensure!(
            server.connect(wrong).await.is_err(),
            "an MCP client with token {wrong:?} connected"
        );
    }

    let alice1 = server.connect(Some(ALICE)).await?;
    let alice2 = server.connect(Some(ALICE)).await?;
    let bob = server.connect(Some(BOB)).await?;
    alice1.python("s1", "secret = 42").await?;
    alice1
        .python("alice-only", "open('f.txt', 'w').write('alice')")
        .await?;
    let shared = alice2.python("s1", "secret").await?;
    assert_eq!(
        shared.str("result"),
        "42",
        "alice's two MCP sessions share s1"
    );

    secret_is_not_visible(&bob, "s1", &paths).await?;
    foreign_like_missing(&bob, "alice-only", "zz-nobody", &paths).await?;
    let theirs = bob.read_refused(&uri("alice-only", "f.txt")).await?;
    assert_eq!(theirs.code, ErrorCode::RESOURCE_NOT_FOUND, "{theirs:?}");

    let after = alice2.python("alice-only", "open('f.txt').read()").await?;
    assert_eq!(after.str("result"), "'alice'", "alice's files are intact");
    let still = alice1.python("s1", "secret").await?;
    assert_eq!(still.str("result"), "42");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_principal_session_cap_holds_back_only_that_principal() -> Result<()> {
    let tokens = tokens_file()?;
    let server = HttpServer::start(&[
        ("SANDBOX_HTTP_TOKENS_FILE", tokens.path().to_str().unwrap()),
        ("SANDBOX_PRINCIPAL_MAX_SESSIONS", "2"),
    ])
    .await?;
    let alice1 = server.connect(Some(ALICE)).await?;
    let alice2 = server.connect(Some(ALICE)).await?;
    let bob = server.connect(Some(BOB)).await?;
    alice1.python("a1", "1").await?;
    alice2.python("a2", "1").await?;
    let third = alice2
        .exec("python", "1", json!({ "session_id": "a3" }))
        .await?;
    ensure!(third.is_error, "alice's third session: {third:?}");
    assert_eq!(third.str("error_type"), "resources_exhausted", "{third:?}");
    let created = alice1
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "a4" }),
        )
        .await?;
    ensure!(
        created.is_error,
        "create_session beyond the cap: {created:?}"
    );
    assert_eq!(
        created.str("error_type"),
        "resources_exhausted",
        "{created:?}"
    );

    bob.python("b1", "1").await?;
    let bob2 = bob
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "b2" }),
        )
        .await?;
    ensure!(!bob2.is_error, "bob is not held back by alice: {bob2:?}");

    alice1
        .call("destroy_session", json!({ "session_id": "a1" }))
        .await?;
    alice2.python("a3", "'room again'").await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_principal_execution_cap_holds_back_only_that_principal() -> Result<()> {
    let tokens = tokens_file()?;
    let server = HttpServer::start(&[
        ("SANDBOX_HTTP_TOKENS_FILE", tokens.path().to_str().unwrap()),
        ("SANDBOX_PRINCIPAL_MAX_EXECUTIONS", "1"),
    ])
    .await?;
    let alice1 = std::sync::Arc::new(server.connect(Some(ALICE)).await?);
    let alice2 = server.connect(Some(ALICE)).await?;
    let bob = server.connect(Some(BOB)).await?;
    alice1.python("a1", "import time").await?;
    alice2.python("a2", "1").await?;
    bob.python("b1", "1").await?;

    let sleeper = {
        let alice1 = alice1.clone();
        tokio::spawn(async move {
            alice1
                .exec(
                    "python",
                    "time.sleep(2)\n'slept'",
                    json!({ "session_id": "a1" }),
                )
                .await
        })
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let health = alice2.call("list_runtimes", json!({})).await?;
        if health.value["health"]["running_executions"]
            .as_u64()
            .is_some_and(|n| n >= 1)
        {
            break;
        }
        ensure!(Instant::now() < deadline, "the sleep never ran: {health:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let second = alice2
        .exec("python", "1 + 1", json!({ "session_id": "a2" }))
        .await?;
    ensure!(
        !sleeper.is_finished(),
        "the check came too late to mean anything"
    );
    ensure!(second.is_error, "alice's second execution: {second:?}");
    assert_eq!(
        second.str("error_type"),
        "resources_exhausted",
        "{second:?}"
    );
    let other = bob.python("b1", "1 + 1").await?;
    assert_eq!(other.str("result"), "2", "bob is not held back");
    let slept = sleeper.await??;
    ensure!(!slept.is_error, "{slept:?}");
    assert_eq!(slept.str("result"), "'slept'");
    let later = alice2.python("a2", "1 + 1").await?;
    assert_eq!(
        later.str("result"),
        "2",
        "room again after the first finished"
    );
    Ok(())
}
