//! `sandbox-bench`: end-to-end latency of the real server over MCP stdio, printed, never
//! asserted. Targets: warm execute_code p50 ≤ 5 ms (Python) and ≤ 2 ms (JavaScript); first call
//! of a new session ≤ 150 ms.
//!
//!   cargo run --release -p sandbox-tests --bin sandbox-bench [-- ITERATIONS]

use std::time::Duration;

use sandbox_tests::Server;
use serde_json::json;

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1000.0
}

fn report(label: &str, mut samples: Vec<Duration>, target_ms: f64) {
    samples.sort();
    let (p50, p95) = (percentile(&samples, 0.5), percentile(&samples, 0.95));
    let verdict = if p50 <= target_ms { "meets" } else { "MISSES" };
    println!(
        "{label:<38} n={:<4} p50 {p50:>8.2} ms   p95 {p95:>8.2} ms   max {:>8.2} ms   target p50 <= {target_ms} ms: {verdict}",
        samples.len(),
        percentile(&samples, 1.0)
    );
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let iterations: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(300);
    let server = Server::start().await?;
    println!("sandbox-bench: end-to-end over MCP stdio (rmcp client -> sandbox-mcp -> worker)");

    for (language, code, warm_target) in [
        ("python", "x = 1\nx + 1", 5.0),
        ("javascript", "var x = 1; x + 1", 2.0),
    ] {
        // First call of a new session: worker spawn, interpreter start, first execution.
        let mut first = Vec::new();
        for i in 0..10 {
            let id = format!("bench-{language}-{i}");
            let reply = server
                .exec(language, code, json!({ "session_id": id }))
                .await?;
            anyhow::ensure!(!reply.is_error, "{reply:?}");
            first.push(reply.elapsed);
            server
                .call("destroy_session", json!({ "session_id": id }))
                .await?;
        }
        report(
            &format!("{language}: new session, first call"),
            first,
            150.0,
        );

        let session = json!({ "session_id": format!("bench-{language}-warm") });
        for _ in 0..20 {
            server.exec(language, code, session.clone()).await?;
        }
        let mut warm = Vec::with_capacity(iterations);
        for _ in 0..iterations {
            let reply = server.exec(language, code, session.clone()).await?;
            anyhow::ensure!(!reply.is_error, "{reply:?}");
            warm.push(reply.elapsed);
        }
        report(&format!("{language}: warm execute_code"), warm, warm_target);
    }
    server.stop().await
}
