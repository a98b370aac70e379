//! Numbers and over-long strings: every numeric argument outside its bounds (or of the wrong
//! type) is a JSON-RPC error -32602 with `data.error_type == "invalid_argument"` naming the
//! argument, answered at once, and the server keeps answering; the bounds are in each tool's
//! inputSchema; the values at the bounds are accepted. The issue's reproducer (`ttl_seconds`
//! of 10^13) is one of them.

use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use rmcp::model::ErrorData;
use sandbox_tests::{Reply, Server, procfs};
use serde_json::{Value, json};

const TEN_TO_13: u64 = 10_000_000_000_000;

/// `(field, lowest, highest)` of the bounded create_session numbers.
const CREATE_BOUNDS: [(&str, u64, u64); 3] = [
    ("fuel_budget", 1_000_000, 5_000_000_000_000),
    ("memory_bytes", 33_554_432, 4_294_967_296),
    ("ttl_seconds", 1, 2_592_000),
];

/// A server whose admission never refuses the large sessions of the boundary checks.
async fn server() -> Result<Server> {
    let server =
        Server::start_with_env(&[("SANDBOX_MEMORY_BUDGET_BYTES", &(1u64 << 44).to_string())])
            .await?;
    server.forbid_own_host_paths();
    Ok(server)
}

/// Calls a tool within 5 s; a tool result, or the JSON-RPC error.
async fn call(server: &Server, tool: &str, args: &Value) -> Result<Result<Reply, ErrorData>> {
    tokio::time::timeout(Duration::from_secs(5), server.call_rpc(tool, args.clone()))
        .await
        .with_context(|| format!("{tool} {args}: no answer within 5 s"))?
}

/// Expects -32602 with `data.error_type == "invalid_argument"` and, when `argument` is given,
/// `data.argument == argument`.
async fn expect_invalid(
    server: &Server,
    tool: &str,
    args: Value,
    argument: Option<&str>,
) -> Result<()> {
    let error = match call(server, tool, &args).await? {
        Err(error) => error,
        Ok(reply) if reply.is_error => bail!("{tool} {args}: a tool error: {}", reply.text),
        Ok(_) => bail!("{tool} {args}: accepted"),
    };
    server.host_paths().check_error(tool, &error);
    ensure!(
        error.code.0 == -32602,
        "{tool} {args}: code {:?}",
        error.code
    );
    let data = error.data.clone().unwrap_or(Value::Null);
    ensure!(
        data["error_type"] == "invalid_argument",
        "{tool} {args}: data {data} ({})",
        error.message
    );
    if let Some(argument) = argument {
        ensure!(
            data["argument"] == argument,
            "{tool} {args}: data.argument should be {argument}: {data}"
        );
    }
    Ok(())
}

/// `base` with `field` set to `value`.
fn with(base: &Value, field: &str, value: Value) -> Value {
    let mut args = base.clone();
    args[field] = value;
    args
}

#[tokio::test(flavor = "multi_thread")]
async fn the_issue_reproducer_is_answered_within_five_seconds() -> Result<()> {
    let server = server().await?;
    expect_invalid(
        &server,
        "create_session",
        json!({ "language": "python", "ttl_seconds": TEN_TO_13 }),
        Some("ttl_seconds"),
    )
    .await?;
    ensure!(procfs::alive(server.pid), "the server is alive");
    let alive = server.exec("python", "1 + 1", json!({})).await?;
    assert_eq!(alive.str("result"), "2", "and answers: {alive:?}");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn numbers_outside_their_bounds_are_invalid_arguments() -> Result<()> {
    let server = server().await?;
    server
        .exec("python", "1", json!({ "session_id": "args" }))
        .await?;
    let out_of_range = [
        json!(0),
        json!(-1),
        json!(1e30),
        json!(TEN_TO_13),
        json!(u64::MAX),
        json!(300.5),
    ];
    let timeouts = [
        (
            "execute_code",
            json!({ "language": "python", "code": "1", "session_id": "args" }),
        ),
        (
            "execute_command",
            json!({ "command": "echo hi", "session_id": "args" }),
        ),
        ("create_session", json!({ "language": "python" })),
    ];
    // `(tool, arguments, the argument data.argument must name)`; a type error need not name it.
    let mut cases: Vec<(&str, Value, Option<&str>)> = Vec::new();
    for (tool, base) in &timeouts {
        for value in &out_of_range {
            cases.push((tool, with(base, "timeout", value.clone()), Some("timeout")));
        }
        cases.push((tool, with(base, "timeout", json!("30")), None));
    }
    let create = json!({ "language": "python" });
    for (field, low, high) in CREATE_BOUNDS {
        // In u64 range but out of bounds: named.
        let values: std::collections::BTreeSet<u64> =
            [0, low - 1, high + 1, TEN_TO_13, u64::MAX].into();
        for value in values {
            if (low..=high).contains(&value) {
                continue;
            }
            cases.push((
                "create_session",
                with(&create, field, json!(value)),
                Some(field),
            ));
        }
        // Not a u64 at all: a type error.
        for value in [json!(-1), json!(1e30), json!("30"), json!(1.5)] {
            cases.push(("create_session", with(&create, field, value), None));
        }
    }
    // Every case is checked; the wrong answers are reported together.
    let mut failures = Vec::new();
    for (tool, args, argument) in &cases {
        if let Err(e) = expect_invalid(&server, tool, args.clone(), *argument).await {
            failures.push(format!("{e:#}"));
        }
    }
    ensure!(
        failures.is_empty(),
        "{} of {} refusals are wrong:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );

    // The server still answers, and no session was created by the refusals.
    ensure!(procfs::alive(server.pid));
    let alive = server
        .exec("python", "1 + 1", json!({ "session_id": "args" }))
        .await?;
    assert_eq!(alive.str("result"), "2", "{alive:?}");
    let health = server.call("list_runtimes", json!({})).await?;
    assert_eq!(
        health.value["health"]["sessions"], 1,
        "refused calls made no session: {health:?}"
    );
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn values_at_the_bounds_are_accepted() -> Result<()> {
    let server = server().await?;
    let mut n = 0;
    for (field, low, high) in CREATE_BOUNDS {
        for value in [low, high] {
            n += 1;
            let id = format!("bound-{n}");
            let created = match call(
                &server,
                "create_session",
                &json!({ "language": "python", "session_id": id, field: value }),
            )
            .await?
            {
                Ok(reply) => reply,
                Err(error) => bail!("{field} = {value} is in bounds: {error:?}"),
            };
            ensure!(!created.is_error, "{field} = {value}: {created:?}");
            // A one-second ttl may already have expired: the answer does not matter.
            let _ = server
                .call("destroy_session", json!({ "session_id": id }))
                .await;
        }
    }
    for timeout in [json!(0.5), json!(300), json!(300.0)] {
        let ran = server
            .exec(
                "python",
                "6 * 7",
                json!({ "session_id": "t", "timeout": timeout }),
            )
            .await?;
        assert_eq!(ran.str("result"), "42", "timeout {timeout}: {ran:?}");
        let created = server
            .call(
                "create_session",
                json!({ "language": "python", "session_id": "tt", "timeout": timeout }),
            )
            .await?;
        ensure!(!created.is_error, "{created:?}");
        server
            .call("destroy_session", json!({ "session_id": "tt" }))
            .await?;
    }
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn the_bounds_are_in_the_input_schemas() -> Result<()> {
    let server = server().await?;
    let tools = server.tools().await?;
    let property = |tool: &str, field: &str| -> Result<Value> {
        let tool = tools
            .iter()
            .find(|t| t.name == tool)
            .with_context(|| format!("no tool {tool}"))?;
        let schema = serde_json::to_value(&*tool.input_schema)?;
        Ok(schema["properties"][field].clone())
    };
    for tool in ["execute_code", "execute_command", "create_session"] {
        let timeout = property(tool, "timeout")?;
        assert_eq!(
            timeout["maximum"].as_f64(),
            Some(300.0),
            "{tool}.timeout: {timeout}"
        );
        let exclusive = timeout["exclusiveMinimum"].as_f64() == Some(0.0);
        let minimum = timeout["minimum"]
            .as_f64()
            .is_some_and(|m| (0.0..1.0).contains(&m));
        ensure!(
            exclusive || minimum,
            "{tool}.timeout has a lower bound: {timeout}"
        );
    }
    for (field, low, high) in CREATE_BOUNDS {
        let schema = property("create_session", field)?;
        assert_eq!(schema["minimum"].as_u64(), Some(low), "{field}: {schema}");
        assert_eq!(schema["maximum"].as_u64(), Some(high), "{field}: {schema}");
    }
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn over_long_strings_are_invalid_params() -> Result<()> {
    let server = server().await?;
    let long_code = format!("x = 1\n#{}\n", "a".repeat(1 << 20));
    let cases = [
        (
            "execute_code",
            json!({ "language": "python", "code": "1", "session_id": "s".repeat(65) }),
        ),
        (
            "create_session",
            json!({ "language": "python", "session_id": "s".repeat(65) }),
        ),
        (
            "cancel_execution",
            json!({ "execution_id": "e".repeat(10_000) }),
        ),
        (
            "install_package",
            json!({ "package": "p".repeat(10_000), "session_id": "long" }),
        ),
        (
            "execute_code",
            json!({ "language": "python", "code": long_code, "session_id": "long" }),
        ),
        (
            "execute_command",
            json!({ "command": format!("echo {}", "a".repeat(1 << 20)), "session_id": "long" }),
        ),
    ];
    for (tool, args) in cases {
        let summary: String = args.to_string().chars().take(120).collect();
        match call(&server, tool, &args).await? {
            Err(error) => {
                ensure!(error.code.0 == -32602, "{tool} {summary}: {error:?}");
                server.host_paths().check_error(tool, &error);
            }
            Ok(reply) => {
                let reply: String = format!("{reply:?}").chars().take(300).collect();
                bail!("{tool} {summary}: expected -32602, got {reply}")
            }
        }
    }
    let alive = server.exec("python", "1 + 1", json!({})).await?;
    assert_eq!(alive.str("result"), "2");
    server.stop().await
}
