//! Interop over Streamable HTTP with a client we did not write: the official MCP Python SDK
//! (`tests/sdk/interop.py`, pinned in `tests/sdk/requirements.txt`, provisioned on first use)
//! drives the real server behind a bearer token through one MCP session: the handshake, the
//! tool list, Python and JavaScript state across calls, progress notifications, cancelling by
//! execution id and by abandoning the request, and termination with DELETE.

use std::time::{Duration, Instant};

use anyhow::{Result, ensure};
use sandbox_tests::{HttpServer, procfs, sdk};
use serde_json::Value;

/// The bearer token the server is started with and the SDK client sends.
const TOKEN: &str = "sdk-interop-0123456789abcdef";

/// Every tool the server lists.
const TOOLS: [&str; 14] = [
    "cancel_execution",
    "checkpoint_session",
    "create_session",
    "destroy_session",
    "execute_code",
    "execute_command",
    "fork_session",
    "get_execution_guidance",
    "get_workspace_info",
    "install_package",
    "list_available_packages",
    "list_runtimes",
    "reset_workspace",
    "restore_session",
];

/// The tools with structured results: the SDK checks each successful result of theirs against
/// the tool's output schema.
const WITH_OUTPUT_SCHEMA: [&str; 4] = [
    "create_session",
    "execute_code",
    "execute_command",
    "get_execution_guidance",
];

/// How long the whole script may run (it takes about 4 s; each of its steps is bounded by 20 s).
const SCRIPT_LIMIT: Duration = Duration::from_secs(120);

#[tokio::test(flavor = "multi_thread")]
async fn the_official_python_sdk_works_over_streamable_http() -> Result<()> {
    let started = Instant::now();
    let python = tokio::task::spawn_blocking(sdk::provision).await??;
    println!(
        "SDK ready in {:?} ({})",
        started.elapsed(),
        python.display()
    );
    let server = HttpServer::start(&[("SANDBOX_HTTP_TOKEN", TOKEN)]).await?;
    let started = Instant::now();
    let report = sdk::run_script(
        &python,
        &sdk::script("interop.py"),
        &[&server.url, TOKEN],
        SCRIPT_LIMIT,
    )
    .await?;
    println!("the SDK script ran in {:?}", started.elapsed());
    handshake_and_tools(&report);
    state_across_calls(&report);
    progress(&report);
    cancellation(&report);
    sandboxes_after_termination(&server).await;
    termination(&report);
    Ok(())
}

fn str_of<'a>(facts: &'a Value, pointer: &str) -> &'a str {
    facts.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn handshake_and_tools(report: &sdk::Report) {
    report.judge("initialize", |facts| {
        ensure!(facts["server_name"] == "sandbox-mcp", "the server's name");
        println!("negotiated protocol {}", facts["protocol_version"]);
        Ok(())
    });
    report.judge("list_tools", |facts| {
        let mut names: Vec<&str> = facts["tools"]
            .as_object()
            .map(|tools| tools.keys().map(String::as_str).collect())
            .unwrap_or_default();
        names.sort_unstable();
        ensure!(names == TOOLS, "all 14 tools, in one page");
        ensure!(facts["next_cursor"].is_null(), "no second page");
        for tool in WITH_OUTPUT_SCHEMA {
            ensure!(
                facts["tools"][tool]["output_schema_type"] == "object",
                "{tool} has an object output schema"
            );
        }
        Ok(())
    });
}

fn state_across_calls(report: &sdk::Report) {
    for language in ["python", "javascript"] {
        report.judge(&format!("{language}_state"), |facts| {
            for call in ["first", "second"] {
                ensure!(facts[call]["success"] == true, "the {call} call succeeds");
            }
            ensure!(
                facts["second"]["result"] == "42",
                "the second call reads what the first defined"
            );
            ensure!(
                facts["first"]["session_id"] == facts["second"]["session_id"],
                "both ran in the MCP session's default session"
            );
            Ok(())
        });
    }
}

fn progress(report: &sdk::Report) {
    report.judge("progress", |facts| {
        ensure!(facts["result"]["result"] == "'slept'", "the call succeeds");
        let notes = facts["notifications"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        ensure!(!notes.is_empty(), "at least one progress notification");
        let values: Vec<f64> = notes
            .iter()
            .filter_map(|n| n["progress"].as_f64())
            .collect();
        ensure!(
            values.len() == notes.len(),
            "every notification has a progress value"
        );
        ensure!(
            values.windows(2).all(|w| w[0] < w[1]),
            "progress increases: {values:?}"
        );
        let id = str_of(facts, "/result/execution_id");
        ensure!(
            !id.is_empty() && notes.iter().all(|n| str_of(n, "/message").contains(id)),
            "every message names the execution"
        );
        println!("{} progress notifications in about 2.5 s", notes.len());
        Ok(())
    });
}

fn cancellation(report: &sdk::Report) {
    report.judge("cancel_execution", |facts| {
        let id = &facts["execution_id"];
        ensure!(
            id.as_str().is_some_and(|id| id.starts_with("exec-")),
            "an id from progress"
        );
        ensure!(
            facts["cancel"]["cancelled"] == true,
            "cancel_execution stopped it"
        );
        ensure!(facts["cancel"]["status"] == "cancelled", "its final status");
        ensure!(&facts["cancel"]["execution_id"] == id, "the one named");
        ensure!(
            facts["spin"]["error_type"] == "cancelled",
            "the call says so"
        );
        ensure!(
            &facts["spin"]["execution_id"] == id,
            "the call was that execution"
        );
        ensure!(
            facts["spin"]["session_restarted"] == false,
            "a cancel keeps the session"
        );
        ensure!(
            facts["after"]["result"] == "True",
            "its state is still there"
        );
        Ok(())
    });
    report.judge("request_cancellation", |facts| {
        ensure!(
            facts["answered_before_abandoned"] == false,
            "the call was abandoned while running"
        );
        let posted = facts["posted"].as_array().cloned().unwrap_or_default();
        ensure!(
            posted.iter().any(|m| m == "notifications/cancelled"),
            "the SDK sent notifications/cancelled"
        );
        ensure!(
            facts["after"]["result"] == "True",
            "the next call ran: the loop stopped"
        );
        ensure!(
            facts["after"]["session_restarted"] == false,
            "the session was kept"
        );
        ensure!(
            facts["late_cancel"]["status"] == "already_finished"
                && facts["late_cancel"]["outcome"] == "cancelled",
            "the abandoned execution ended as cancelled"
        );
        Ok(())
    });
}

/// With a shared token every MCP session is a client of its own, so after DELETE nobody can
/// reach its sandboxes again: the server destroys them, and their workers exit.
async fn sandboxes_after_termination(server: &HttpServer) {
    let mut left = Vec::new();
    let gone = sandbox_tests::eventually(Duration::from_secs(10), || {
        left = procfs::session_workers(server.pid);
        left.is_empty()
    })
    .await;
    assert!(
        gone,
        "after DELETE, {} session workers are still running: {left:?}",
        left.len()
    );
}

fn termination(report: &sdk::Report) {
    report.judge("termination", |facts| {
        let deletes = facts["delete_statuses"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        ensure!(deletes.len() == 1, "leaving the client sent one DELETE");
        println!("DELETE answered {}", deletes[0]);
        let warnings = facts["sdk_warnings"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        ensure!(
            warnings.is_empty(),
            "the SDK logged no warning (\"Session termination failed: <status>\" means it did \
             not expect the answer to DELETE): {warnings:?}"
        );
        ensure!(
            facts["old_session_status"] == 404,
            "a request with the terminated Mcp-Session-Id gets 404"
        );
        Ok(())
    });
}
