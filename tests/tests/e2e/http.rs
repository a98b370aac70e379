//! MCP over Streamable HTTP: a bearer token is required, each MCP session keeps its own
//! sandboxes across requests, and SIGTERM stops the service and its workers.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use sandbox_tests::{procfs, raw_http, server_binary};
use serde_json::{Value, json};

/// One HTTP/1.1 POST to /mcp (Connection: close); returns status, session id and the JSON-RPC
/// messages of the body (plain JSON or SSE `data:` lines).
fn post(
    port: u16,
    token: &str,
    session: Option<&str>,
    body: &Value,
) -> (u16, Option<String>, Vec<Value>) {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
    );
    if let Some(id) = session {
        head.push_str(&format!(
            "Mcp-Session-Id: {id}\r\nMcp-Protocol-Version: 2025-06-18\r\n"
        ));
    }
    let response = raw_http::exchange(port, &head, &body.to_string());
    let messages = response
        .body
        .lines()
        .filter_map(|l| {
            l.strip_prefix("data:")
                .map(str::trim)
                .or_else(|| l.starts_with('{').then_some(l))
        })
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (response.status, response.header("mcp-session-id"), messages)
}

/// A new MCP session: initialize + initialized. Returns its id.
fn open_session(port: u16, token: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "e2e", "version": "1"}}});
    let (status, session, messages) = post(port, token, None, &init);
    assert_eq!(status, 200, "{messages:?}");
    assert_eq!(
        messages.last().unwrap()["result"]["serverInfo"]["name"],
        "sandbox-mcp"
    );
    let session = session.expect("mcp-session-id");
    let (status, _, _) = post(
        port,
        token,
        Some(&session),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    assert_eq!(status, 202);
    session
}

fn run_code(port: u16, token: &str, session: &str, id: u64, code: &str) -> Value {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "execute_code", "arguments": {"language": "python", "code": code}}});
    let (status, _, messages) = post(port, token, Some(session), &call);
    assert_eq!(status, 200);
    let reply = messages
        .into_iter()
        .rev()
        .find(|m| m["id"] == id)
        .expect("a response");
    reply["result"]["structuredContent"].clone()
}

/// A server process killed when the test ends before it stopped it (a failed assertion), so
/// that its workers do not outlive the test run.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

#[test]
fn streamable_http_serves_sessions_behind_a_token() {
    let port = 20_000 + (std::process::id() % 20_000) as u16;
    let state = tempfile::tempdir().unwrap();
    let mut server = KillOnDrop(
        std::process::Command::new(server_binary())
            .args(["--http", &format!("127.0.0.1:{port}")])
            .env("SANDBOX_HTTP_TOKEN", "s3cret")
            .env("SANDBOX_STATE_DIR", state.path().join("state"))
            .env("RUST_LOG", "warn")
            .stdin(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the server did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (status, _, _) = post(
        port,
        "wrong",
        None,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"}),
    );
    assert_eq!(status, 401, "a wrong token is refused");

    let a = open_session(port, "s3cret");
    assert_eq!(run_code(port, "s3cret", &a, 2, "x = 41")["success"], true);
    assert_eq!(
        run_code(port, "s3cret", &a, 3, "x + 1")["result"],
        "42",
        "state persists across requests"
    );
    let b = open_session(port, "s3cret");
    assert_eq!(
        run_code(port, "s3cret", &b, 2, "x")["error_name"],
        "NameError",
        "each MCP session has its own sandbox"
    );

    let serving: Vec<String> = (procfs::session_workers(server.0.id()).into_iter())
        .map(procfs::cmdline)
        .collect();
    assert_eq!(serving.len(), 2, "{serving:#?}");
    // Shutdown ends the pre-started workers too.
    let workers: Vec<u32> = procfs::workers_of(server.0.id())
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    assert!(procfs::signal(server.0.id(), "TERM"));
    let status = server.0.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let left: Vec<String> = (workers.iter())
        .filter(|w| procfs::all_workers().contains(w))
        .map(|w| procfs::cmdline(*w))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert!(!state.path().join("state").exists());
}

/// A request body is read as far as the largest code needs in its longest JSON spelling, and no
/// further. Code one byte over the default 1 MiB limit, every byte a control character, is a
/// 6 MiB body: rmcp's own 4 MiB cap refused it with a bare 413 instead of the `invalid_argument`
/// that names the limit. A body past the cap is refused as soon as it crosses it.
#[tokio::test(flavor = "multi_thread")]
async fn request_bodies_are_read_as_far_as_the_code_limit_needs() {
    const TOKEN: &str = "body-limit-0123456789abcdef";
    const LIMIT: usize = 1 << 20;
    let server = sandbox_tests::HttpServer::start(&[("SANDBOX_HTTP_TOKEN", TOKEN)])
        .await
        .unwrap();
    let client = server.connect(Some(TOKEN)).await.unwrap();
    let over = json!({ "language": "python", "code": "\u{1}".repeat(LIMIT + 1) });
    let error = client
        .call_refused("execute_code", over)
        .await
        .expect("answered over HTTP");
    assert_eq!(
        sandbox_tests::rpc_error_type(&error),
        Some("invalid_argument"),
        "{error:?}"
    );
    assert!(
        error.message.contains(&format!("the limit is {LIMIT}")),
        "{error:?}"
    );

    // Past the cap (6 × 1 MiB + 1 MiB), without waiting for the rest of what Content-Length
    // announces: 413 once the cap is crossed. The client sends no byte beyond it, so it reads
    // the answer whatever the timing.
    let cap = 7 << 20;
    let port = server.port();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        2 * cap
    )
    .unwrap();
    stream.write_all(&vec![b' '; cap + 1]).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(
        answer.starts_with("HTTP/1.1 413"),
        "a body past {cap} bytes is refused: {}",
        answer.lines().next().unwrap_or_default()
    );

    let fresh = server.connect(Some(TOKEN)).await.unwrap();
    let ok = fresh.exec("python", "6 * 7", json!({})).await.unwrap();
    assert_eq!(ok.str("result"), "42", "{ok:?}");
}
