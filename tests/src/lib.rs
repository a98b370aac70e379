//! Shared harness for the end-to-end tests and the benchmark: starts the real `sandbox-mcp`
//! binary and talks to it with rmcp's MCP client over stdio, as any MCP client would.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

/// The `sandbox-mcp` binary under test: `SANDBOX_MCP_BIN`, or the one cargo built next to this
/// executable (`target/<profile>/sandbox-mcp`; tests live in `target/<profile>/deps`).
pub fn server_binary() -> PathBuf {
    if let Some(bin) = std::env::var_os("SANDBOX_MCP_BIN") {
        return bin.into();
    }
    let exe = std::env::current_exe().expect("current_exe");
    let mut dir = exe.parent().expect("exe dir").to_path_buf();
    if dir.ends_with("deps") {
        dir.pop();
    }
    dir.join("sandbox-mcp")
}

/// A running server and an MCP client connected to it.
pub struct Server {
    client: RunningService<RoleClient, ()>,
}

/// One tool result: whether it is an error, and its structured content (or its text).
#[derive(Debug, Clone)]
pub struct Reply {
    pub is_error: bool,
    pub value: Value,
    pub text: String,
    pub elapsed: Duration,
}

impl Reply {
    /// A string field of the structured result ("" when absent or null).
    pub fn str(&self, key: &str) -> &str {
        self.value.get(key).and_then(Value::as_str).unwrap_or("")
    }
    pub fn bool(&self, key: &str) -> bool {
        self.value
            .get(key)
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }
    pub fn u64(&self, key: &str) -> u64 {
        self.value.get(key).and_then(Value::as_u64).unwrap_or(0)
    }
    pub fn is_null(&self, key: &str) -> bool {
        self.value.get(key).is_none_or(Value::is_null)
    }
}

impl Server {
    /// Starts `sandbox-mcp` with extra environment variables.
    ///
    /// # Errors
    /// When the binary is missing or the MCP handshake fails.
    pub async fn start_with_env(env: &[(&str, &str)]) -> Result<Self> {
        let bin = server_binary();
        if !bin.is_file() {
            bail!(
                "{} not found: run `cargo build --release --workspace` first",
                bin.display()
            );
        }
        let mut command = tokio::process::Command::new(&bin);
        command.env(
            "RUST_LOG",
            std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()),
        );
        for (k, v) in env {
            command.env(k, v);
        }
        let transport = TokioChildProcess::new(command).context("spawning sandbox-mcp")?;
        let client = ().serve(transport).await.context("MCP initialize")?;
        Ok(Self { client })
    }

    pub async fn start() -> Result<Self> {
        Self::start_with_env(&[]).await
    }

    /// Calls a tool. A protocol-level error (invalid params) is returned as `Err`.
    ///
    /// # Errors
    /// JSON-RPC errors and transport failures.
    pub async fn call(&self, tool: &str, args: Value) -> Result<Reply> {
        let Value::Object(arguments) = args else {
            bail!("arguments must be an object")
        };
        let started = Instant::now();
        let result: CallToolResult = self
            .client
            .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
            .await?;
        let elapsed = started.elapsed();
        let text = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n");
        Ok(Reply {
            is_error: result.is_error.unwrap_or(false),
            value: result.structured_content.unwrap_or(Value::Null),
            text,
            elapsed,
        })
    }

    /// `execute_code` with optional extra arguments (`session_id`, `timeout`).
    ///
    /// # Errors
    /// As [`Server::call`].
    pub async fn exec(&self, language: &str, code: &str, extra: Value) -> Result<Reply> {
        let mut args = json!({ "language": language, "code": code });
        if let (Value::Object(args), Value::Object(extra)) = (&mut args, extra) {
            args.extend(extra);
        }
        self.call("execute_code", args).await
    }

    /// The tools the server lists.
    ///
    /// # Errors
    /// Transport failures.
    pub async fn tool_names(&self) -> Result<Vec<String>> {
        Ok(self
            .client
            .list_all_tools()
            .await?
            .into_iter()
            .map(|t| t.name.to_string())
            .collect())
    }

    /// Closes the connection (stdin EOF), which shuts the server down.
    pub async fn stop(self) -> Result<()> {
        self.client.cancel().await?;
        Ok(())
    }
}
