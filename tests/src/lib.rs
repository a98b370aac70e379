//! Shared harness for the end-to-end tests and the benchmark: starts the real `sandbox-mcp`
//! binary and talks to it with rmcp's MCP client over stdio, as any MCP client would.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, NumberOrString, ProgressNotificationParam,
    ProgressToken, RequestParamsMeta,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
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

/// The test client's handler: records progress notification messages.
#[derive(Debug, Default)]
pub struct Recorder {
    /// `(progress token, message)` of every notification, in arrival order.
    progress: std::sync::Mutex<Vec<(String, String)>>,
}

impl ClientHandler for Recorder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let token = match params.progress_token.0 {
            NumberOrString::String(s) => s.to_string(),
            NumberOrString::Number(n) => n.to_string(),
        };
        let message = params.message.unwrap_or_default();
        self.progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((token, message));
    }
}

/// A running server and an MCP client connected to it.
pub struct Server {
    client: RunningService<RoleClient, Recorder>,
    /// Process id of `sandbox-mcp`.
    pub pid: u32,
    /// The server's private state directory (sockets, workspaces); removed at its shutdown.
    pub state_dir: PathBuf,
    /// Keeps the parent of `state_dir` alive for the test.
    _scratch: tempfile::TempDir,
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
        let scratch = tempfile::tempdir()?;
        let state_dir = scratch.path().join("state");
        let mut command = tokio::process::Command::new(&bin);
        command.env(
            "RUST_LOG",
            std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()),
        );
        command.env("SANDBOX_STATE_DIR", &state_dir);
        for (k, v) in env {
            command.env(k, v);
        }
        let transport = TokioChildProcess::new(command).context("spawning sandbox-mcp")?;
        let pid = transport.id().context("sandbox-mcp pid")?;
        let client = Recorder::default()
            .serve(transport)
            .await
            .context("MCP initialize")?;
        Ok(Self {
            client,
            pid,
            state_dir,
            _scratch: scratch,
        })
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

    /// `execute_code` with a progress token, so the server reports the execution while it runs.
    ///
    /// # Errors
    /// As [`Server::call`].
    pub async fn exec_with_progress(
        &self,
        language: &str,
        code: &str,
        extra: Value,
        token: &str,
    ) -> Result<Reply> {
        let mut args = json!({ "language": language, "code": code });
        if let (Value::Object(args), Value::Object(extra)) = (&mut args, extra) {
            args.extend(extra);
        }
        let Value::Object(arguments) = args else {
            unreachable!()
        };
        let mut params = CallToolRequestParams::new("execute_code").with_arguments(arguments);
        params.set_progress_token(ProgressToken(NumberOrString::String(
            token.to_owned().into(),
        )));
        let started = Instant::now();
        let result = self.client.call_tool(params).await?;
        let elapsed = started.elapsed();
        Ok(Reply {
            is_error: result.is_error.unwrap_or(false),
            value: result.structured_content.unwrap_or(Value::Null),
            text: String::new(),
            elapsed,
        })
    }

    /// Progress messages received so far, oldest first. (rmcp's client gives every request a
    /// progress token of its own, so messages are not told apart by the token we asked for.)
    pub fn progress_messages(&self) -> Vec<String> {
        let progress = self
            .client
            .service()
            .progress
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        progress.iter().map(|(_, m)| m.clone()).collect()
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

    /// The client side of the connection, for requests the helpers above do not cover.
    pub fn client(&self) -> &RunningService<RoleClient, Recorder> {
        &self.client
    }

    /// Closes the connection (stdin EOF), which shuts the server down.
    pub async fn stop(self) -> Result<()> {
        self.client.cancel().await?;
        Ok(())
    }
}

/// Waits until `check` holds or `limit` passes; returns whether it held.
pub async fn eventually(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    check()
}

/// Reading processes from /proc (Linux), for tests about workers.
pub mod procfs {
    /// True until `pid` has fully exited. A killed multi-threaded process shows its leader as a
    /// zombie while other threads are still exiting (and still hold its files), so "zombie"
    /// alone is not "gone": only a zombie with no other thread is.
    pub fn alive(pid: u32) -> bool {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        let threads = std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, Iterator::count);
        !(stat.contains(") Z ") && threads <= 1)
    }

    /// `(pid, ppid, state, comm)` of every process.
    pub fn processes() -> Vec<(u32, u32, char, String)> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| {
                let pid: u32 = e.file_name().to_str()?.parse().ok()?;
                let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
                let (comm_part, rest) = stat.rsplit_once(") ")?;
                let comm = comm_part.split_once(" (")?.1.to_owned();
                let mut fields = rest.split_whitespace();
                let state = fields.next()?.chars().next()?;
                let ppid = fields.next()?.parse().ok()?;
                Some((pid, ppid, state, comm))
            })
            .collect()
    }

    /// Worker processes whose parent is `server` (zombies included, so tests can spot them).
    pub fn workers_of(server: u32) -> Vec<(u32, char)> {
        processes()
            .into_iter()
            .filter(|(_, ppid, _, comm)| *ppid == server && comm.starts_with("sandbox-worker"))
            .map(|(pid, _, state, _)| (pid, state))
            .collect()
    }

    /// Every live `sandbox-worker` process on the machine.
    pub fn all_workers() -> Vec<u32> {
        processes()
            .into_iter()
            .filter(|(_, _, state, comm)| comm.starts_with("sandbox-worker") && *state != 'Z')
            .map(|(pid, ..)| pid)
            .collect()
    }

    /// The command line of a process, arguments separated by spaces.
    pub fn cmdline(pid: u32) -> String {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default()
    }

    /// The worker serving `session_id` (its socket path carries the id).
    pub fn worker_of_session(server: u32, session_id: &str) -> Option<u32> {
        let marker = format!("/{session_id}.");
        workers_of(server)
            .into_iter()
            .find(|(pid, state)| *state != 'Z' && cmdline(*pid).contains(&marker))
            .map(|(pid, _)| pid)
    }

    /// Sends a signal with kill(1).
    pub fn signal(pid: u32, signal: &str) -> bool {
        std::process::Command::new("kill")
            .args([&format!("-{signal}"), &pid.to_string()])
            .status()
            .is_ok_and(|s| s.success())
    }
}
