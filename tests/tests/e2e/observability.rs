//! What an operator watches on the HTTP service: `/healthz`, `/readyz` (and why not ready) and
//! the Prometheus `/metrics`, whose counters follow what really happened to executions,
//! workers, sessions and admission.

use std::io::{Read, Write};
use std::time::Duration;

use sandbox_tests::{HttpServer, eventually, procfs, raw_http};
use serde_json::{Value, json};

const TOKEN: &str = "observability-token-0123456789";

/// One plain HTTP/1.1 request without a token; returns status, content type and body.
fn request(server: &HttpServer, method: &str, path: &str) -> (u16, String, String) {
    let response = raw_http::exchange(server.port(), &format!("{method} {path} HTTP/1.1\r\n"), "");
    let content_type = response.header("content-type").unwrap_or_default();
    (response.status, content_type, response.body)
}

/// The value of the series `series` (name and labels, exactly as exposed), if present.
fn series(metrics: &str, series: &str) -> Option<f64> {
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
}

fn scrape(server: &HttpServer) -> String {
    let (status, content_type, body) = request(server, "GET", "/metrics");
    assert_eq!(status, 200, "{body}");
    assert!(
        content_type.starts_with("application/openmetrics-text"),
        "{content_type}"
    );
    body
}

/// Waits until `/metrics` shows `want` for `name`; fails with the last scrape.
async fn expect_series(server: &HttpServer, name: &str, want: f64) {
    let mut last = String::new();
    let seen = eventually(Duration::from_secs(10), || {
        last = scrape(server);
        series(&last, name) == Some(want)
    })
    .await;
    assert!(seen, "{name} never became {want}:\n{last}");
}

#[tokio::test]
async fn health_readiness_and_metrics_follow_the_service() {
    let server = HttpServer::start(&[("SANDBOX_HTTP_TOKEN", TOKEN)])
        .await
        .unwrap();
    let (status, _, body) = request(&server, "GET", "/healthz");
    assert_eq!((status, body.as_str()), (200, r#"{"status":"ok"}"#));
    let mut readiness = Value::Null;
    let ready = eventually(Duration::from_secs(60), || {
        let (status, _, body) = request(&server, "GET", "/readyz");
        readiness = serde_json::from_str(&body).unwrap_or(Value::Null);
        status == 200
    })
    .await;
    assert!(ready, "never ready: {readiness}");
    assert_eq!(readiness["ready"], true);
    assert_eq!(readiness["interpreters"], "compiled");
    assert_eq!(readiness["worker_start"], "started");
    // The monitoring endpoints take GET only, and /mcp still wants its token.
    assert_eq!(request(&server, "POST", "/metrics").0, 405);
    assert_eq!(request(&server, "GET", "/mcp").0, 401);
    assert_eq!(request(&server, "GET", "/nothing").0, 404);

    let client = server.connect(Some(TOKEN)).await.unwrap();
    let ok = client
        .call(
            "execute_code",
            json!({"language": "python", "session_id": "obs", "code": "x = 6 * 7\nx"}),
        )
        .await
        .unwrap();
    assert_eq!(ok.str("result"), "42", "{ok:?}");
    let failed = client
        .call(
            "execute_code",
            json!({"language": "python", "session_id": "obs", "code": "1/0"}),
        )
        .await
        .unwrap();
    assert_eq!(failed.str("error_type"), "runtime_error");
    let js = client
        .call(
            "execute_command",
            json!({"language": "javascript", "session_id": "obs-js", "command": "echo hi"}),
        )
        .await
        .unwrap();
    assert!(js.bool("success"), "{js:?}");

    let metrics = scrape(&server);
    let count = |name: &str| series(&metrics, name).unwrap_or(0.0);
    assert_eq!(
        count(
            r#"sandbox_executions_total{tool="execute_code",language="python",runtime="python",outcome="success"}"#
        ),
        1.0,
        "{metrics}"
    );
    assert_eq!(
        count(
            r#"sandbox_executions_total{tool="execute_code",language="python",runtime="python",outcome="runtime_error"}"#
        ),
        1.0,
        "{metrics}"
    );
    assert_eq!(
        count(
            r#"sandbox_executions_total{tool="execute_command",language="javascript",runtime="javascript",outcome="success"}"#
        ),
        1.0,
        "{metrics}"
    );
    assert_eq!(
        count(r#"sandbox_execution_duration_seconds_count{language="python",runtime="python"}"#),
        2.0
    );
    assert!(count(r#"sandbox_execution_fuel_sum{language="python",runtime="python"}"#) > 0.0);
    assert_eq!(
        count(r#"sandbox_sessions{language="python",runtime="python"}"#),
        1.0
    );
    assert_eq!(
        count(r#"sandbox_sessions{language="javascript",runtime="javascript"}"#),
        1.0
    );
    assert_eq!(
        count(r#"sandbox_workers{language="python",runtime="python",role="session"}"#),
        1.0
    );
    assert_eq!(
        count(r#"sandbox_pool_target{language="python",runtime="python"}"#),
        1.0
    );
    // The pool refills behind the sessions that took its workers.
    expect_series(
        &server,
        r#"sandbox_workers{language="javascript",runtime="javascript",role="pooled"}"#,
        1.0,
    )
    .await;
    // Memory is sampled every 2 s, off the calls' path.
    let mut last = String::new();
    let measured = eventually(Duration::from_secs(10), || {
        last = scrape(&server);
        series(
            &last,
            r#"sandbox_worker_resident_memory_bytes{language="python",runtime="python",role="session"}"#,
        )
        .is_some_and(|bytes| bytes > 1e6)
    })
    .await;
    assert!(measured, "no resident memory measured:\n{last}");

    // A worker that dies while idle is a crash; the next call replaces it.
    let worker = procfs::worker_of_session(server.pid, "obs").expect("the session's worker");
    assert!(procfs::signal(worker, "KILL"));
    expect_series(
        &server,
        r#"sandbox_worker_crashes_total{language="python",runtime="python",reason="idle"}"#,
        1.0,
    )
    .await;
    // Code that ignores the interrupt at its deadline gets its interpreter restarted by force.
    let stubborn = client
        .call(
            "execute_code",
            json!({"language": "python", "session_id": "obs", "timeout": 0.5, "code":
                "import time\nwhile True:\n    try:\n        time.sleep(10)\n    except BaseException:\n        pass"}),
        )
        .await
        .unwrap();
    assert_eq!(stubborn.str("error_type"), "timeout", "{stubborn:?}");
    assert_eq!(
        stubborn.str("state_after_restart"),
        "rolled_back",
        "{stubborn:?}"
    );
    let metrics = scrape(&server);
    assert_eq!(
        series(
            &metrics,
            r#"sandbox_interpreter_restarts_total{language="python",runtime="python",reason="rolled_back"}"#
        ),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        series(
            &metrics,
            r#"sandbox_executions_total{tool="execute_code",language="python",runtime="python",outcome="timeout"}"#
        ),
        Some(1.0),
        "{metrics}"
    );
    assert!(
        series(
            &metrics,
            r#"sandbox_worker_starts_total{language="python",runtime="python",how="pool"}"#
        )
        .is_some_and(|n| n >= 1.0),
        "{metrics}"
    );
}

#[tokio::test]
async fn refusals_and_reaped_sessions_are_counted() {
    let server = HttpServer::start(&[
        ("SANDBOX_HTTP_TOKEN", TOKEN),
        ("SANDBOX_MAX_SESSIONS", "1"),
        ("SANDBOX_WORKER_POOL", "0"),
        ("SANDBOX_SESSION_TTL_SECS", "1"),
    ])
    .await
    .unwrap();
    let client = server.connect(Some(TOKEN)).await.unwrap();
    let first = client
        .call(
            "execute_code",
            json!({"language": "javascript", "session_id": "one", "code": "1 + 1"}),
        )
        .await
        .unwrap();
    assert!(first.bool("success"), "{first:?}");
    let second = client
        .call(
            "execute_code",
            json!({"language": "javascript", "session_id": "two", "code": "1 + 1"}),
        )
        .await
        .unwrap();
    assert_eq!(
        second.str("error_type"),
        "resources_exhausted",
        "{second:?}"
    );
    let metrics = scrape(&server);
    assert_eq!(
        series(
            &metrics,
            r#"sandbox_admission_refusals_total{limit="sessions"}"#
        ),
        Some(1.0),
        "{metrics}"
    );
    // Idle past its one-second TTL, the session is reaped (the reaper looks every second).
    expect_series(
        &server,
        r#"sandbox_sessions_reaped_total{language="javascript",runtime="javascript"}"#,
        1.0,
    )
    .await;
    expect_series(
        &server,
        r#"sandbox_sessions{language="javascript",runtime="javascript"}"#,
        0.0,
    )
    .await;
}

#[tokio::test]
async fn a_server_whose_workers_cannot_start_is_live_but_not_ready() {
    // A worker binary that exits at once: the interpreters never compile.
    let server = HttpServer::start(&[
        ("SANDBOX_HTTP_TOKEN", TOKEN),
        ("SANDBOX_WORKER_BIN", "/bin/false"),
    ])
    .await
    .unwrap();
    let mut readiness = Value::Null;
    let failed = eventually(Duration::from_secs(20), || {
        let (status, _, body) = request(&server, "GET", "/readyz");
        readiness = serde_json::from_str(&body).unwrap_or(Value::Null);
        status == 503
            && readiness["interpreters"]
                .as_str()
                .is_some_and(|s| s.starts_with("failed: "))
    })
    .await;
    assert!(failed, "{readiness}");
    assert_eq!(readiness["ready"], false);
    assert_eq!(request(&server, "GET", "/healthz").0, 200);
}

/// A precompile that is killed (a signal, the OOM killer) is not the end: the server tries
/// again with back-off, `/readyz` says it is retrying meanwhile, and the server becomes ready
/// and runs code once a retry succeeds. The worker binary here is the real one behind a script
/// that kills its own first `precompile` with SIGKILL.
#[tokio::test]
async fn a_killed_precompile_is_retried_until_the_server_is_ready() {
    let bin_dir = tempfile::tempdir().unwrap();
    let real = sandbox_tests::server_binary().with_file_name("sandbox-worker");
    let flag = bin_dir.path().join("killed-once");
    let worker = bin_dir.path().join("sandbox-worker");
    std::fs::write(
        &worker,
        format!(
            "#!/bin/sh\nif [ \"$1\" = precompile ] && [ ! -e '{flag}' ]; then : > '{flag}'; kill -9 $$; fi\nexec '{real}' \"$@\"\n",
            flag = flag.display(),
            real = real.display(),
        ),
    )
    .unwrap();
    std::fs::set_permissions(&worker, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let server = HttpServer::start(&[
        ("SANDBOX_HTTP_TOKEN", TOKEN),
        ("SANDBOX_WORKER_BIN", worker.to_str().unwrap()),
    ])
    .await
    .unwrap();
    let mut seen = Vec::new();
    let ready = eventually(Duration::from_secs(60), || {
        let (status, _, body) = request(&server, "GET", "/readyz");
        let readiness: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        let interpreters = readiness["interpreters"].as_str().unwrap_or_default();
        if seen.last().map(String::as_str) != Some(interpreters) {
            seen.push(interpreters.to_owned());
        }
        status == 200
    })
    .await;
    assert!(ready, "never ready: {seen:?}");
    assert!(flag.exists(), "the first precompile was killed");
    assert!(
        seen.iter()
            .any(|s| s.starts_with("failed: precompile failed (signal: 9")
                && s.contains("retrying (attempt 2 in")),
        "/readyz said it was retrying: {seen:?}"
    );
    assert_eq!(
        seen.last().map(String::as_str),
        Some("compiled"),
        "{seen:?}"
    );
    let client = server.connect(Some(TOKEN)).await.unwrap();
    let ran = client
        .call(
            "execute_code",
            json!({"language": "python", "code": "6 * 7"}),
        )
        .await
        .unwrap();
    assert_eq!(ran.str("result"), "42", "{ran:?}");
}

/// `/readyz` answers anyone who reaches the port: its reasons name no host path. A worker
/// binary that cannot be run (here: not executable) fails the compile with a message that
/// names the binary's path, which the server redacts.
#[tokio::test]
async fn readiness_reasons_carry_no_host_path() {
    let bin_dir = tempfile::tempdir().unwrap();
    let worker = bin_dir.path().join("sandbox-worker");
    std::fs::write(&worker, "not a program").unwrap();
    let server = HttpServer::start(&[
        ("SANDBOX_HTTP_TOKEN", TOKEN),
        ("SANDBOX_WORKER_BIN", worker.to_str().unwrap()),
    ])
    .await
    .unwrap();
    let paths = server.host_paths().with(bin_dir.path());
    let mut body = String::new();
    let failed = eventually(Duration::from_secs(20), || {
        let (status, _, text) = request(&server, "GET", "/readyz");
        body = text;
        status == 503 && body.contains("cannot run")
    })
    .await;
    assert!(failed, "{body}");
    paths.check("/readyz", &body);
    assert!(body.contains("<server>/sandbox-worker"), "{body}");
}

/// `--log-format json` on stdio: every line on stderr is one JSON object, and a tool call's
/// closing line carries its span's tool, session and execution ids (stdout stays MCP only).
#[test]
fn json_logs_name_the_session_and_execution_of_each_tool_call() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let state = tempfile::tempdir().unwrap();
    let mut server = Command::new(sandbox_tests::server_binary())
        .args(["--log-format", "json"])
        .env("RUST_LOG", "info")
        .env("SANDBOX_STATE_DIR", state.path().join("state"))
        .env("SANDBOX_WORKER_POOL", sandbox_tests::TEST_WORKER_POOL)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap());
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "e2e", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "execute_code",
            "arguments": {"language": "python", "session_id": "logged", "code": "6 * 7"}}}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    let mut reply = Value::Null;
    let mut line = String::new();
    while reply["id"] != 2 {
        line.clear();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "stdout closed");
        reply = serde_json::from_str(&line).expect("stdout carries only JSON-RPC");
    }
    let result = &reply["result"]["structuredContent"];
    assert_eq!(result["result"], "42", "{reply}");
    let execution_id = result["execution_id"].as_str().unwrap().to_owned();
    drop(stdin); // EOF: the server shuts down
    let mut stderr = String::new();
    server
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(server.wait().unwrap().success());
    let lines: Vec<Value> = stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let call = lines
        .iter()
        .find(|l| l["fields"]["message"] == "tool call" && l["span"]["tool"] == "execute_code")
        .unwrap_or_else(|| panic!("no tool call line in:\n{stderr}"));
    assert_eq!(call["span"]["name"], "tool_call", "{call}");
    assert_eq!(call["span"]["session_id"], "logged", "{call}");
    assert_eq!(
        call["span"]["execution_id"],
        execution_id.as_str(),
        "{call}"
    );
    assert_eq!(call["fields"]["outcome"], "success", "{call}");
    assert_eq!(call["level"], "INFO", "{call}");
}
