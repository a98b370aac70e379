//! Shared harness for the end-to-end tests and the benchmark: starts the real `sandbox-mcp`
//! binary and talks to it with rmcp's MCP client, over stdio ([`Server`]) or Streamable HTTP
//! ([`HttpServer`]), as any MCP client would. [`host`] holds the host-side tools of the escape
//! tests: where a session lives on disk, snapshots of victim directories, FIFOs and device
//! nodes, and the check that no host path reaches a client.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ErrorData, NumberOrString, ProgressNotificationParam,
    ProgressToken, ReadResourceRequestParams, ReadResourceResult, RequestParamsMeta, Resource,
    ResourceContents, Tool,
};
use rmcp::service::{NotificationContext, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

/// The `sandbox-mcp` binary under test: `SANDBOX_MCP_BIN`, or the one cargo built next to this
/// executable (`target/<profile>/sandbox-mcp`; tests live in `target/<profile>/deps`).
///
/// # Panics
/// When the binaries cargo built are older than their sources: `cargo test` rebuilds the test
/// executables, never `sandbox-mcp` and `sandbox-worker`, so the tests would quietly run the
/// server as it was (`cargo build --release`, or `runtimes/prepare.sh`, brings them up to date).
pub fn server_binary() -> PathBuf {
    if let Some(bin) = std::env::var_os("SANDBOX_MCP_BIN") {
        return bin.into();
    }
    let exe = std::env::current_exe().expect("current_exe");
    let mut dir = exe.parent().expect("exe dir").to_path_buf();
    if dir.ends_with("deps") {
        dir.pop();
    }
    static CHECKED: std::sync::Once = std::sync::Once::new();
    CHECKED.call_once(|| {
        let binaries: [(&str, &[&str]); 2] = [
            ("sandbox-mcp", &["protocol", "guidance", "supervisor"]),
            (
                "sandbox-worker",
                &["protocol", "worker", "runtimes/python/driver.py"],
            ),
        ];
        for (bin, sources) in binaries {
            if let Some(stale) = stale_binary(&dir.join(bin), sources) {
                panic!("{stale}");
            }
        }
    });
    dir.join("sandbox-mcp")
}

/// Why `bin` is older than a source it is built from (`sources`: its crates, whose `src` and
/// manifest count, and files it embeds), if it is.
fn stale_binary(bin: &std::path::Path, sources: &[&str]) -> Option<String> {
    fn newest(path: &std::path::Path, newest_seen: &mut Option<(std::time::SystemTime, PathBuf)>) {
        let Ok(meta) = std::fs::metadata(path) else {
            return;
        };
        if meta.is_dir() {
            // Unit-test modules (`src/**/tests/`) are not in the binary: editing one after a
            // build must not stop the end-to-end tests.
            if path.file_name().is_some_and(|name| name == "tests") {
                return;
            }
            for entry in std::fs::read_dir(path).into_iter().flatten().flatten() {
                newest(&entry.path(), newest_seen);
            }
        } else if let Ok(modified) = meta.modified()
            && newest_seen.as_ref().is_none_or(|(t, _)| modified > *t)
        {
            *newest_seen = Some((modified, path.to_path_buf()));
        }
    }
    let built = std::fs::metadata(bin).and_then(|m| m.modified()).ok()?;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    let mut newest_seen = None;
    for source in sources {
        let path = root.join(source);
        if path.is_dir() {
            newest(&path.join("src"), &mut newest_seen);
            newest(&path.join("Cargo.toml"), &mut newest_seen);
        } else {
            newest(&path, &mut newest_seen);
        }
    }
    let (changed, source) = newest_seen?;
    (changed > built).then(|| {
        format!(
            "{} is older than {}: run `cargo build --release` (or runtimes/prepare.sh) before the end-to-end tests",
            bin.display(),
            source.display()
        )
    })
}

/// The pool setting that pins which kind of worker a test's first session gets: a worker it
/// starts itself (`adopted: false`: no pool), or one pre-started Python worker it adopts
/// (`adopted: true`; see [`Server::first_call`]).
pub fn pinned_pool(adopted: bool) -> (&'static str, &'static str) {
    (
        "SANDBOX_WORKER_POOL",
        if adopted { "python=1" } else { "0" },
    )
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

/// An MCP client connected to a server (over stdio or Streamable HTTP), with helpers for the
/// requests the tests make.
pub struct Client {
    service: RunningService<RoleClient, Recorder>,
    /// Host paths no tool result or JSON-RPC error may contain, once set with
    /// [`Client::forbid_host_paths`].
    forbidden: std::sync::Mutex<Option<host::HostPaths>>,
    /// Each tool's output schema, listed at the first call: every result is checked against
    /// it ([`schema_violations`]).
    output_schemas: tokio::sync::OnceCell<std::collections::HashMap<String, Arc<Value>>>,
}

/// A running server and an MCP client connected to it over stdio. Derefs to its [`Client`].
pub struct Server {
    client: Client,
    /// Process id of `sandbox-mcp`.
    pub pid: u32,
    /// The server's private state directory (sockets, workspaces); removed at its shutdown.
    pub state_dir: PathBuf,
    /// Keeps the parent of `state_dir` alive for the test.
    scratch: tempfile::TempDir,
}

/// One tool result: whether it is an error, and its structured content (or its text).
#[derive(Debug, Clone)]
pub struct Reply {
    pub is_error: bool,
    pub value: Value,
    pub text: String,
    /// Image content blocks: (MIME type, base64 data), in order.
    pub images: Vec<(String, String)>,
    pub elapsed: Duration,
    /// The tool's output schema, when it has one: the result was checked against it, and it
    /// says which fields may be left out (they have nothing to say).
    pub schema: Option<Arc<Value>>,
}

/// What an absent optional field reads as.
static ABSENT: Value = Value::Null;

impl Reply {
    /// The field `key` of the structured result; `null` for an optional field the result left
    /// out (its output schema declares it, and absent means "none").
    ///
    /// # Panics
    /// When the result has no such field and its schema does not declare it either (a renamed
    /// or dropped field fails the test, it never reads as "", false or 0), naming the field and
    /// showing the whole reply.
    pub fn field(&self, key: &str) -> &Value {
        match self.value.get(key) {
            Some(value) => value,
            None if self.declares(key) => &ABSENT,
            None => panic!(
                "the reply has no field {key:?} (is_error: {}): {}\ntext: {}",
                self.is_error, self.value, self.text
            ),
        }
    }

    /// Whether the tool's output schema declares `key` (so its absence means "none").
    fn declares(&self, key: &str) -> bool {
        self.schema
            .as_ref()
            .is_some_and(|schema| schema["properties"].get(key).is_some())
    }

    /// Whether the result carries `key` at all (an optional field with something to say).
    pub fn has(&self, key: &str) -> bool {
        self.value.get(key).is_some()
    }

    /// An array field; empty when the result left it out.
    ///
    /// # Panics
    /// When the field is neither an array nor a declared absent one.
    pub fn list(&self, key: &str) -> Vec<Value> {
        let value = self.field(key);
        if value.is_null() {
            return Vec::new();
        }
        self.typed(key, "an array", Value::as_array).clone()
    }

    /// A string field of the structured result.
    ///
    /// # Panics
    /// When the field is missing, null or not a string (see [`Reply::opt_str`] for a field that
    /// may be null).
    pub fn str(&self, key: &str) -> &str {
        self.typed(key, "a string", Value::as_str)
    }

    /// A string field that may be null (`None`).
    ///
    /// # Panics
    /// When the field is missing or neither a string nor null.
    pub fn opt_str(&self, key: &str) -> Option<&str> {
        if self.is_null(key) {
            None
        } else {
            Some(self.str(key))
        }
    }

    /// A boolean field of the structured result; false when the result left it out.
    ///
    /// # Panics
    /// When the field is missing (and not declared) or not a boolean.
    pub fn bool(&self, key: &str) -> bool {
        if self.field(key).is_null() && !self.has(key) {
            return false;
        }
        self.typed(key, "a boolean", Value::as_bool)
    }

    /// An unsigned integer field of the structured result.
    ///
    /// # Panics
    /// When the field is missing or not an unsigned integer.
    pub fn u64(&self, key: &str) -> u64 {
        self.typed(key, "an unsigned integer", Value::as_u64)
    }

    /// Whether the field says "nothing": left out of the result (declared by its schema), or
    /// JSON `null` in a result without one.
    ///
    /// # Panics
    /// When the field is missing and not declared.
    pub fn is_null(&self, key: &str) -> bool {
        self.field(key).is_null()
    }

    fn typed<'a, T>(
        &'a self,
        key: &str,
        what: &str,
        get: impl FnOnce(&'a Value) -> Option<T>,
    ) -> T {
        let value = self.field(key);
        match get(value) {
            Some(typed) => typed,
            None => panic!(
                "field {key:?} of the reply is {value}, not {what} (is_error: {}): {}",
                self.is_error, self.value
            ),
        }
    }

    fn of(result: CallToolResult, elapsed: Duration) -> Self {
        let text = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n");
        let images = result
            .content
            .iter()
            .filter_map(|c| c.as_image().map(|i| (i.mime_type.clone(), i.data.clone())))
            .collect();
        Reply {
            is_error: result.is_error.unwrap_or(false),
            value: result.structured_content.unwrap_or(Value::Null),
            text,
            images,
            elapsed,
            schema: None,
        }
    }
}

/// Checks a structured result against its tool's output schema as a validating client (the
/// official SDKs) does, for the plain schemas the server sends: required fields present, no
/// field the schema does not declare, types and enums respected, and never a `null` (absent
/// means none). Returns every violation, as JSON paths.
pub fn schema_violations(value: &Value, schema: &Value) -> Vec<String> {
    fn check(value: &Value, schema: &Value, path: &str, found: &mut Vec<String>) {
        if let Some(kind) = schema.get("type").and_then(Value::as_str) {
            let fits = match kind {
                "string" => value.is_string(),
                "integer" => value.is_i64() || value.is_u64(),
                "number" => value.is_number(),
                "boolean" => value.is_boolean(),
                "array" => value.is_array(),
                "object" => value.is_object(),
                _ => true,
            };
            if !fits {
                found.push(format!("{path}: {value} is not {kind}"));
                return;
            }
        }
        if let Some(Value::Array(allowed)) = schema.get("enum")
            && !allowed.contains(value)
        {
            found.push(format!("{path}: {value} is not one of {allowed:?}"));
        }
        if let Some(constant) = schema.get("const")
            && constant != value
        {
            found.push(format!("{path}: {value} is not {constant}"));
        }
        if let Some(number) = value.as_f64() {
            if let Some(low) = schema.get("minimum").and_then(Value::as_f64)
                && number < low
            {
                found.push(format!("{path}: {value} is below the minimum {low}"));
            }
            if let Some(high) = schema.get("maximum").and_then(Value::as_f64)
                && number > high
            {
                found.push(format!("{path}: {value} is above the maximum {high}"));
            }
        }
        // `oneOf`: exactly one variant fits; `anyOf`: at least one.
        for (key, exactly_one) in [("oneOf", true), ("anyOf", false)] {
            if let Some(Value::Array(variants)) = schema.get(key) {
                let fitting = variants
                    .iter()
                    .filter(|variant| {
                        let mut inner = Vec::new();
                        check(value, variant, path, &mut inner);
                        inner.is_empty()
                    })
                    .count();
                if fitting == 0 || (exactly_one && fitting > 1) {
                    found.push(format!(
                        "{path}: {value} fits {fitting} of the {key} variants"
                    ));
                }
            }
        }
        if let (Value::Object(map), Some(Value::Object(properties))) =
            (value, schema.get("properties"))
        {
            for required in schema["required"].as_array().into_iter().flatten() {
                let name = required.as_str().unwrap_or_default();
                if !map.contains_key(name) {
                    found.push(format!("{path}.{name}: required, missing"));
                }
            }
            for (name, child) in map {
                match properties.get(name) {
                    Some(child_schema) => {
                        check(child, child_schema, &format!("{path}.{name}"), found)
                    }
                    None => found.push(format!("{path}.{name}: not in the schema")),
                }
            }
        }
        if let (Value::Array(items), Some(item_schema)) = (value, schema.get("items")) {
            for (i, item) in items.iter().enumerate() {
                check(item, item_schema, &format!("{path}[{i}]"), found);
            }
        }
    }
    let mut found = Vec::new();
    check(value, schema, "$", &mut found);
    found
}

/// Every way a `next_call` (`{tool, arguments, reason}`) is not a call the server's tools
/// accept: an unknown tool, or arguments that break the tool's real input schema as the
/// server lists it (`tools`).
pub fn next_call_violations(call: &Value, tools: &[Tool]) -> Vec<String> {
    let name = call["tool"].as_str().unwrap_or_default();
    let Some(tool) = tools.iter().find(|t| t.name == name) else {
        return vec![format!("next_call names no tool: {call}")];
    };
    let mut found = Vec::new();
    if call["reason"].as_str().is_none_or(|r| r.trim().is_empty()) {
        found.push(format!("next_call to {name} gives no reason"));
    }
    let schema = Value::Object((*tool.input_schema).clone());
    for violation in schema_violations(&call["arguments"], &schema) {
        found.push(format!("next_call to {name}: {violation}"));
    }
    found
}

fn arguments_of(args: Value) -> Result<serde_json::Map<String, Value>> {
    let Value::Object(arguments) = args else {
        bail!("arguments must be an object")
    };
    Ok(arguments)
}

impl Client {
    /// Calls a tool. A protocol-level error (invalid params) is returned as `Err`.
    ///
    /// # Errors
    /// JSON-RPC errors and transport failures.
    pub async fn call(&self, tool: &str, args: Value) -> Result<Reply> {
        match self.call_rpc(tool, args).await? {
            Ok(reply) => Ok(reply),
            Err(error) => Err(ServiceError::McpError(error).into()),
        }
    }

    /// Calls a tool and tells a tool result (`Ok(Ok)`, maybe with `isError`) from a JSON-RPC
    /// error (`Ok(Err)`, with its code and data).
    ///
    /// # Errors
    /// Transport failures only.
    pub async fn call_rpc(&self, tool: &str, args: Value) -> Result<Result<Reply, ErrorData>> {
        let started = Instant::now();
        let params =
            CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments_of(args)?);
        match self.service.call_tool(params).await {
            Ok(result) => {
                let mut reply = Reply::of(result, started.elapsed());
                self.screen(tool, &reply.text);
                self.screen(tool, &reply.value.to_string());
                reply.schema = self.checked_against_schema(tool, &reply).await?;
                Ok(Ok(reply))
            }
            Err(ServiceError::McpError(e)) => {
                self.screen(tool, &e.message);
                self.screen(tool, &format!("{:?}", e.data));
                Ok(Err(e))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Calls a tool that must be refused with a JSON-RPC error, and returns that error.
    ///
    /// # Errors
    /// When the call was answered with a tool result (even a failed one), or the transport
    /// failed.
    pub async fn call_refused(&self, tool: &str, args: Value) -> Result<ErrorData> {
        match self.call_rpc(tool, args.clone()).await? {
            Err(error) => Ok(error),
            Ok(reply) => bail!("{tool} {args}: answered instead of refused: {reply:?}"),
        }
    }

    /// The executions `get_workspace_info` lists for a session (running or queued, oldest
    /// first), each with `execution_id`, `status` and `elapsed_ms`.
    ///
    /// # Errors
    /// When the session does not exist, or the listing is missing.
    pub async fn executions_of(&self, session_id: &str) -> Result<Vec<Value>> {
        let info = self
            .call("get_workspace_info", json!({ "session_id": session_id }))
            .await?;
        anyhow::ensure!(!info.is_error, "get_workspace_info {session_id}: {info:?}");
        info.field("running_executions")
            .as_array()
            .cloned()
            .with_context(|| format!("running_executions is not a list: {info:?}"))
    }

    /// Polls [`Client::executions_of`] until `check` holds for the listing, and returns that
    /// listing: how a test knows that a call reached the server (and is queued or running)
    /// before it sends the next one.
    ///
    /// # Errors
    /// When `check` does not hold within `limit` (the last listing is shown).
    pub async fn wait_for_executions(
        &self,
        session_id: &str,
        limit: Duration,
        check: impl Fn(&[Value]) -> bool,
    ) -> Result<Vec<Value>> {
        let deadline = Instant::now() + limit;
        loop {
            let listed = self.executions_of(session_id).await?;
            if check(&listed) {
                return Ok(listed);
            }
            if Instant::now() > deadline {
                bail!("{session_id}: the executions never matched within {limit:?}: {listed:?}");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// From now on, every tool result and JSON-RPC error this client receives is checked for
    /// `paths` (the test panics naming the leak): no host path may reach a client.
    pub fn forbid_host_paths(&self, paths: host::HostPaths) {
        *self.forbidden.lock().unwrap_or_else(|e| e.into_inner()) = Some(paths);
    }

    fn screen(&self, what: &str, text: &str) {
        let forbidden = self.forbidden.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(paths) = forbidden.as_ref() {
            paths.check(what, text);
        }
    }

    fn new(service: RunningService<RoleClient, Recorder>) -> Self {
        Client {
            service,
            forbidden: std::sync::Mutex::new(None),
            output_schemas: tokio::sync::OnceCell::new(),
        }
    }

    /// `execute_code` with a progress token, so the server reports the execution while it runs.
    ///
    /// # Errors
    /// As [`Client::call`].
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
        let mut params =
            CallToolRequestParams::new("execute_code").with_arguments(arguments_of(args)?);
        params.set_progress_token(ProgressToken(NumberOrString::String(
            token.to_owned().into(),
        )));
        let started = Instant::now();
        let result = self.service.call_tool(params).await?;
        let mut reply = Reply::of(result, started.elapsed());
        self.screen("execute_code", &reply.value.to_string());
        reply.schema = self.checked_against_schema("execute_code", &reply).await?;
        Ok(reply)
    }

    /// The output schema of `tool` (listed once per connection), after checking that a
    /// successful `reply` satisfies it: every test's result is validated as the official SDKs
    /// validate them.
    ///
    /// # Panics
    /// When the result does not satisfy the schema, naming every violation.
    async fn checked_against_schema(
        &self,
        tool: &str,
        reply: &Reply,
    ) -> Result<Option<Arc<Value>>> {
        let schemas = self
            .output_schemas
            .get_or_try_init(|| async {
                let tools = self.service.list_all_tools().await?;
                anyhow::Ok(
                    tools
                        .into_iter()
                        .filter_map(|t| {
                            let schema = Value::Object((*t.output_schema?).clone());
                            Some((t.name.to_string(), Arc::new(schema)))
                        })
                        .collect::<std::collections::HashMap<_, _>>(),
                )
            })
            .await?;
        let Some(schema) = schemas.get(tool) else {
            return Ok(None);
        };
        // As the SDKs do: a failed call's structured content is not checked (a refused
        // create_session answers with its refusal, not a session).
        if reply.is_error {
            return Ok(Some(schema.clone()));
        }
        let violations = schema_violations(&reply.value, schema);
        assert!(
            violations.is_empty(),
            "{tool}'s result does not satisfy its outputSchema: {violations:#?}\nresult: {}",
            reply.value
        );
        Ok(Some(schema.clone()))
    }

    /// Progress messages received so far, oldest first. (rmcp's client gives every request a
    /// progress token of its own, so messages are not told apart by the token we asked for.)
    pub fn progress_messages(&self) -> Vec<String> {
        let progress = self
            .service
            .service()
            .progress
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        progress.iter().map(|(_, m)| m.clone()).collect()
    }

    /// `execute_code` with optional extra arguments (`session_id`, `timeout`).
    ///
    /// # Errors
    /// As [`Client::call`].
    /// Runs Python in `session` and expects it to succeed.
    ///
    /// # Errors
    /// As [`Client::call`], and when the execution fails.
    pub async fn python(&self, session: &str, code: &str) -> Result<Reply> {
        let reply = self
            .exec("python", code, json!({ "session_id": session }))
            .await?;
        anyhow::ensure!(!reply.is_error, "{code}\n-> {reply:?}");
        Ok(reply)
    }

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
            .tools()
            .await?
            .into_iter()
            .map(|t| t.name.to_string())
            .collect())
    }

    /// The tools the server lists, with their schemas.
    ///
    /// # Errors
    /// Transport failures.
    pub async fn tools(&self) -> Result<Vec<Tool>> {
        Ok(self.service.list_all_tools().await?)
    }

    /// `resources/read` of one URI.
    ///
    /// # Errors
    /// The server's JSON-RPC error (`ServiceError::McpError`) or a transport failure.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ServiceError> {
        let read = self
            .service
            .read_resource(ReadResourceRequestParams::new(uri.to_owned()))
            .await;
        if let Err(ServiceError::McpError(e)) = &read {
            self.screen(uri, &e.message);
            self.screen(uri, &format!("{:?}", e.data));
        }
        read
    }

    /// `resources/read` of a URI that must be refused: the JSON-RPC error it gets within 5 s.
    ///
    /// # Errors
    /// When the resource is served (the error quotes what was served), no answer comes within
    /// 5 s, or the transport fails.
    pub async fn read_refused(&self, uri: &str) -> Result<ErrorData> {
        let read = tokio::time::timeout(Duration::from_secs(5), self.read_resource(uri))
            .await
            .with_context(|| format!("resources/read {uri}: no answer within 5 s"))?;
        match read {
            Err(ServiceError::McpError(error)) => Ok(error),
            Err(other) => Err(other).with_context(|| format!("resources/read {uri}")),
            Ok(served) => {
                let shown: Vec<String> = served
                    .contents
                    .iter()
                    .map(|c| {
                        let text = match c {
                            ResourceContents::TextResourceContents { text, .. } => text.clone(),
                            ResourceContents::BlobResourceContents { blob, .. } => blob.clone(),
                            other => format!("{other:?}"),
                        };
                        text.chars().take(200).collect()
                    })
                    .collect();
                bail!("resources/read {uri} was served: {shown:?}")
            }
        }
    }

    /// Every resource the server lists (all pages).
    ///
    /// # Errors
    /// As [`Client::read_resource`].
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ServiceError> {
        self.service.list_all_resources().await
    }

    /// The rmcp client itself, for requests the helpers above do not cover.
    pub fn service(&self) -> &RunningService<RoleClient, Recorder> {
        &self.service
    }

    /// Closes the connection.
    ///
    /// # Errors
    /// When the client task failed.
    pub async fn stop(self) -> Result<()> {
        self.service.cancel().await?;
        Ok(())
    }
}

impl std::ops::Deref for Server {
    type Target = Client;

    fn deref(&self) -> &Client {
        &self.client
    }
}

/// The worker pool of servers under test (a test may set `SANDBOX_WORKER_POOL` itself): one
/// pre-started worker of each small runtime, so the tests go through pooled workers, without a
/// scientific one, whose preloaded imports cost a second of CPU in every test's server.
pub const TEST_WORKER_POOL: &str = "python=1,javascript=1";

impl Server {
    /// Starts `sandbox-mcp` with extra environment variables.
    ///
    /// # Errors
    /// When the binary is missing or the MCP handshake fails.
    pub async fn start_with_env(env: &[(&str, &str)]) -> Result<Self> {
        Self::start_as(None, env).await
    }

    /// Starts `sandbox-mcp` as another user (`uid`, e.g. 65534 for nobody), with its state
    /// directory in a scratch directory that user may write. Needs root.
    ///
    /// That user runs a copy of the server, its worker and the runtimes beside them, made in
    /// the scratch directory (see [`host::public_copy_of_server`]): the checkout may sit where
    /// only root can enter (a 0700 home directory), and its location must not decide whether
    /// the test can run.
    ///
    /// # Errors
    /// As [`Server::start_with_env`], and when the copy cannot be made.
    pub async fn start_as(uid: Option<u32>, env: &[(&str, &str)]) -> Result<Self> {
        Self::start_inner(uid, env, None).await
    }

    /// Starts `sandbox-mcp` with extra environment variables, its logs (stderr) going to
    /// `log`, at `RUST_LOG`'s level when the test has one, `info` otherwise.
    ///
    /// # Errors
    /// As [`Server::start_with_env`], and when `log` cannot be created.
    pub async fn start_logged(env: &[(&str, &str)], log: &std::path::Path) -> Result<Self> {
        Self::start_inner(None, env, Some(log)).await
    }

    async fn start_inner(
        uid: Option<u32>,
        env: &[(&str, &str)],
        log: Option<&std::path::Path>,
    ) -> Result<Self> {
        let mut bin = server_binary();
        if !bin.is_file() {
            bail!(
                "{} not found: run `cargo build --release --workspace` first",
                bin.display()
            );
        }
        let scratch = tempfile::tempdir()?;
        let state_dir = scratch.path().join("state");
        if uid.is_some() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(scratch.path(), std::fs::Permissions::from_mode(0o777))?;
            bin = host::public_copy_of_server(&scratch.path().join("server"))?;
        }
        let mut command = tokio::process::Command::new(&bin);
        if let Some(uid) = uid {
            command.uid(uid).gid(uid);
        }
        let level = if log.is_some() { "info" } else { "warn" };
        command.env(
            "RUST_LOG",
            std::env::var("RUST_LOG").unwrap_or_else(|_| level.into()),
        );
        command.env("SANDBOX_STATE_DIR", &state_dir);
        command.env("SANDBOX_WORKER_POOL", TEST_WORKER_POOL);
        for (k, v) in env {
            command.env(k, v);
        }
        let mut transport = TokioChildProcess::builder(command);
        if let Some(log) = log {
            transport = transport.stderr(std::fs::File::create(log)?);
        }
        let (transport, _) = transport.spawn().context("spawning sandbox-mcp")?;
        let pid = transport.id().context("sandbox-mcp pid")?;
        let service = Recorder::default()
            .serve(transport)
            .await
            .context("MCP initialize")?;
        Ok(Self {
            client: Client::new(service),
            pid,
            state_dir,
            scratch,
        })
    }

    pub async fn start() -> Result<Self> {
        Self::start_with_env(&[]).await
    }

    /// Waits until `count` fork server processes run (at most 60 s: the interpreters may
    /// still be compiling) and returns their pids. A process may still be loading: its
    /// "fork server up" log line says when it forks.
    ///
    /// # Errors
    /// When they do not come up in time.
    pub async fn wait_for_fork_servers(&self, count: usize) -> Result<Vec<u32>> {
        self.wait_for_processes(count, "fork servers", procfs::fork_servers)
            .await
    }

    /// Waits until the fork servers hold `count` spares (the next sessions' workers, forked
    /// ahead; at most 60 s) and returns their pids.
    ///
    /// # Errors
    /// When they are not made in time.
    pub async fn wait_for_spares(&self, count: usize) -> Result<Vec<u32>> {
        self.wait_for_processes(count, "spares", procfs::spares)
            .await
    }

    /// Waits (at most 60 s) until `list` finds `count` of this server's processes (`what`).
    async fn wait_for_processes(
        &self,
        count: usize,
        what: &str,
        list: fn(u32) -> Vec<u32>,
    ) -> Result<Vec<u32>> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let pids = list(self.pid);
            if pids.len() >= count {
                return Ok(pids);
            }
            ensure!(
                Instant::now() < deadline,
                "{count} {what} never came up (running: {pids:?})"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until the pool holds `count` ready idle workers (as `list_runtimes` counts them;
    /// at most 60 s: the interpreters may still be compiling) and returns their pids.
    ///
    /// # Errors
    /// When the pool does not fill in time.
    pub async fn wait_for_pool(&self, count: usize) -> Result<Vec<u32>> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let health = self.call("list_runtimes", serde_json::json!({})).await?;
            let ready = health.field("health")["pooled_workers"]
                .as_u64()
                .unwrap_or(0);
            let pids = procfs::pooled_workers(self.pid);
            if ready >= count as u64 && pids.len() >= count {
                return Ok(pids);
            }
            ensure!(
                Instant::now() < deadline,
                "the pool never held {count} ready workers (ready: {ready}, processes: {pids:?})"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The first call of `session` on a server started with [`pinned_pool`]`(adopted)`: waits
    /// for the pool when `adopted`, runs the Python `code`, and checks that the session adopted
    /// the pre-started worker with its directory (or started a worker of its own), so a test
    /// never leaves to the pool's timing which path it exercises. Returns the session's worker
    /// pid.
    ///
    /// # Errors
    /// When the pool does not fill, the call fails, or the session went the other way.
    pub async fn first_call(&self, session: &str, adopted: bool, code: &str) -> Result<u32> {
        let pooled = if adopted {
            self.wait_for_pool(1).await?
        } else {
            Vec::new()
        };
        self.python(session, code).await?;
        let pid = procfs::worker_of_session(self.pid, session).context("the session's worker")?;
        ensure!(
            pooled.contains(&pid) == adopted,
            "{session}: adopted one of the pooled workers {pooled:?}: {pid}, expected {adopted}"
        );
        let adopted_dir = host::adopted_dir_of(&self.state_dir, session);
        ensure!(
            adopted_dir.is_some() == adopted,
            "{session}: adopted a pooled directory: {adopted_dir:?}, expected {adopted}"
        );
        Ok(pid)
    }

    /// Waits until the worker of `session_id` is idle, the state its last call left kept: the
    /// server keeps a call's state just behind the call's answer, and a look at the session
    /// (`get_workspace_info`) waits for that.
    ///
    /// # Errors
    /// When the look fails.
    pub async fn settled(&self, session_id: &str) -> Result<()> {
        let info = self
            .call("get_workspace_info", json!({ "session_id": session_id }))
            .await?;
        anyhow::ensure!(!info.is_error, "{info:?}");
        Ok(())
    }

    /// SIGKILLs the worker of `session_id` once it is idle, between calls ([`Server::settled`]),
    /// and waits until it is gone, as a chaos test or an OOM killer would.
    ///
    /// # Errors
    /// When the session has no worker or it does not die within 5 s.
    pub async fn kill_worker_of(&self, session_id: &str) -> Result<()> {
        self.settled(session_id).await?;
        let pid = procfs::worker_of_session(self.pid, session_id).context("the worker")?;
        anyhow::ensure!(procfs::signal(pid, "KILL"), "SIGKILL to {pid}");
        anyhow::ensure!(
            eventually(Duration::from_secs(5), || !procfs::alive(pid)).await,
            "the killed worker {pid} is gone"
        );
        Ok(())
    }

    /// The client side of the connection, for requests the helpers do not cover.
    pub fn client(&self) -> &RunningService<RoleClient, Recorder> {
        &self.client.service
    }

    /// The host directory mounted at the session's `/app` (see [`host::workspace_of`]).
    pub fn workspace_of(&self, session_id: &str) -> Option<PathBuf> {
        host::workspace_of(&self.state_dir, session_id)
    }

    /// The host directory mounted at the session's `/tmp`.
    pub fn tmp_of(&self, session_id: &str) -> Option<PathBuf> {
        host::tmp_of(&self.state_dir, session_id)
    }

    /// Host paths this server's replies must never contain.
    pub fn host_paths(&self) -> host::HostPaths {
        host::HostPaths::default()
            .with(&self.state_dir)
            .with(self.scratch.path())
    }

    /// Checks every later reply for this server's host paths (see
    /// [`Client::forbid_host_paths`]).
    pub fn forbid_own_host_paths(&self) {
        self.client.forbid_host_paths(self.host_paths());
    }

    /// Closes the connection (stdin EOF), which shuts the server down.
    pub async fn stop(self) -> Result<()> {
        self.client.stop().await
    }
}

/// `sandbox-mcp --http 127.0.0.1:<port>`: a server for many MCP clients. Killed when dropped.
pub struct HttpServer {
    child: std::process::Child,
    /// Process id of `sandbox-mcp`.
    pub pid: u32,
    /// `http://127.0.0.1:<port>/mcp`.
    pub url: String,
    /// The server's private state directory.
    pub state_dir: PathBuf,
    /// Keeps the parent of `state_dir` alive for the test.
    scratch: tempfile::TempDir,
}

/// How [`HttpServer::start_with`] starts the server.
#[derive(Debug, Clone, Default)]
pub struct HttpStart {
    /// Extra environment variables (`SANDBOX_*`).
    pub env: Vec<(String, String)>,
    /// The address to listen on (on a free port); 127.0.0.1 unless given. Clients still
    /// connect through 127.0.0.1.
    pub listen_ip: Option<std::net::IpAddr>,
    /// The open-file limit (soft and hard) the server starts under; the test's own otherwise.
    pub open_files: Option<u64>,
    /// A file for the server's stderr (its logs); inherited otherwise.
    pub log: Option<PathBuf>,
    /// The state directory, e.g. a previous server's (durable sessions); a fresh one
    /// otherwise.
    pub state_dir: Option<PathBuf>,
}

/// A TCP port nobody listens on right now.
fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    Ok(listener.local_addr()?.port())
}

impl HttpServer {
    /// Starts `sandbox-mcp --http` on a free loopback port with extra environment variables
    /// (`SANDBOX_HTTP_TOKEN`, `SANDBOX_HTTP_TOKENS_FILE`, ...) and waits until it listens.
    ///
    /// # Errors
    /// When the binary is missing, exits, or does not listen within 20 s.
    pub async fn start(env: &[(&str, &str)]) -> Result<Self> {
        Self::start_with(HttpStart {
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            ..HttpStart::default()
        })
        .await
    }

    /// Starts `sandbox-mcp --http` as `how` says, and waits until it listens.
    ///
    /// # Errors
    /// When the binary is missing, exits, or does not listen within 20 s.
    pub async fn start_with(how: HttpStart) -> Result<Self> {
        let bin = server_binary();
        if !bin.is_file() {
            bail!("{} not found", bin.display());
        }
        let scratch = tempfile::tempdir()?;
        let state_dir = how
            .state_dir
            .clone()
            .unwrap_or_else(|| scratch.path().join("state"));
        let port = free_port()?;
        let listen = how
            .listen_ip
            .unwrap_or(std::net::Ipv4Addr::LOCALHOST.into());
        let mut command = std::process::Command::new(&bin);
        command
            .args([
                "--http",
                &std::net::SocketAddr::new(listen, port).to_string(),
            ])
            .env(
                "RUST_LOG",
                std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()),
            )
            .env("SANDBOX_STATE_DIR", &state_dir)
            .env("SANDBOX_WORKER_POOL", TEST_WORKER_POOL)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null());
        for (k, v) in &how.env {
            command.env(k, v);
        }
        if let Some(log) = &how.log {
            command.stderr(std::fs::File::create(log)?);
        }
        if let Some(open_files) = how.open_files {
            let limit = libc::rlimit {
                rlim_cur: open_files,
                rlim_max: open_files,
            };
            // SAFETY: runs in the forked child before exec; setrlimit is async-signal-safe and
            // `limit` is a plain value copied into the closure.
            unsafe {
                std::os::unix::process::CommandExt::pre_exec(&mut command, move || {
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        let child = command.spawn().context("spawning sandbox-mcp --http")?;
        let mut server = Self {
            pid: child.id(),
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
            state_dir,
            scratch,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = server.child.try_wait()? {
                bail!("sandbox-mcp --http exited: {status}");
            }
            if Instant::now() > deadline {
                bail!("sandbox-mcp --http did not listen on {port}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(server)
    }

    /// A new MCP session with rmcp's Streamable HTTP client (reqwest), sending
    /// `Authorization: Bearer <token>` when a token is given. Each call is its own MCP session;
    /// its replies are checked for the server's host paths.
    ///
    /// # Errors
    /// When the handshake fails, e.g. 401 for a wrong token.
    pub async fn connect(&self, token: Option<&str>) -> Result<Client> {
        let mut config = StreamableHttpClientTransportConfig::with_uri(self.url.clone())
            .reinit_on_expired_session(false);
        if let Some(token) = token {
            config = config.auth_header(token);
        }
        let transport = StreamableHttpClientTransport::from_config(config);
        let service = tokio::time::timeout(
            Duration::from_secs(20),
            Recorder::default().serve(transport),
        )
        .await
        .context("MCP initialize over HTTP timed out")?
        .context("MCP initialize over HTTP")?;
        let client = Client::new(service);
        client.forbid_host_paths(self.host_paths());
        Ok(client)
    }

    /// The host directory mounted at the session's `/app`.
    pub fn workspace_of(&self, session_id: &str) -> Option<PathBuf> {
        host::workspace_of(&self.state_dir, session_id)
    }

    /// Host paths this server's replies must never contain.
    pub fn host_paths(&self) -> host::HostPaths {
        host::HostPaths::default()
            .with(&self.state_dir)
            .with(self.scratch.path())
    }

    /// The loopback port it listens on.
    pub fn port(&self) -> u16 {
        self.url
            .trim_end_matches("/mcp")
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("a port in the url")
    }
}

impl HttpServer {
    /// Sends `signal` (`KILL`, `TERM`) to the server and waits (at most 20 s) until it has
    /// exited; returns its exit status.
    ///
    /// # Errors
    /// When it is still running after 20 s.
    pub async fn end_with(mut self, signal: &str) -> Result<std::process::ExitStatus> {
        procfs::signal(self.pid, signal);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            if Instant::now() > deadline {
                bail!("sandbox-mcp did not exit within 20 s of SIG{signal}");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            return;
        }
        procfs::signal(self.pid, "TERM");
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `data.error_type` of a JSON-RPC error (`invalid_argument`, `invalid_session`, ...), if it
/// has one.
pub fn rpc_error_type(error: &ErrorData) -> Option<&str> {
    error.data.as_ref()?.get("error_type")?.as_str()
}

/// The statuses (`queued`, `running`) of a listing from [`Client::executions_of`], in order.
pub fn statuses(executions: &[Value]) -> Vec<&str> {
    executions
        .iter()
        .map(|e| e["status"].as_str().unwrap_or("(no status)"))
        .collect()
}

/// Waits until `check` holds or `limit` passes; returns whether it held (assert it: a wait
/// whose outcome is ignored proves nothing).
#[must_use = "assert the outcome of the wait"]
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

    /// Every live `sandbox-worker` process on the machine. A process that is exiting (killed,
    /// its address space being torn down: the kernel shows no command line any more) runs no
    /// code again and is not counted, whether or not it is a zombie yet.
    pub fn all_workers() -> Vec<u32> {
        processes()
            .into_iter()
            .filter(|(pid, _, state, comm)| {
                comm.starts_with("sandbox-worker") && *state != 'Z' && !cmdline(*pid).is_empty()
            })
            .map(|(pid, ..)| pid)
            .collect()
    }

    /// The command line of a process, arguments separated by spaces.
    pub fn cmdline(pid: u32) -> String {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default()
    }

    /// The worker serving `session_id`: its workspace path carries the id, or, when the session
    /// adopted a pre-started worker, the pooled directory its `<id>.<key>` link names.
    pub fn worker_of_session(server: u32, session_id: &str) -> Option<u32> {
        let mut markers = vec![format!("/{session_id}.")];
        if let Some(state_dir) = state_dir_of(server) {
            for dir in super::host::session_dirs(&state_dir, session_id) {
                if let Ok(target) = std::fs::read_link(&dir) {
                    markers.push(format!("/{}/", target.display()));
                }
            }
        }
        workers_of(server)
            .into_iter()
            .find(|(pid, state)| {
                let cmdline = cmdline(*pid);
                *state != 'Z' && markers.iter().any(|m| cmdline.contains(m))
            })
            .map(|(pid, _)| pid)
    }

    /// The live workers of `server` with their command lines, each read once: a worker just
    /// forked shows its fork server's command line until it writes its own, so two reads of
    /// one worker may disagree.
    fn live_workers(server: u32) -> Vec<(u32, String)> {
        workers_of(server)
            .into_iter()
            .filter(|(_, state)| *state != 'Z')
            .map(|(pid, _)| (pid, cmdline(pid)))
            .collect()
    }

    /// The `/<dir>/` markers of the pooled directories sessions adopted.
    fn adopted_dirs(server: u32) -> Vec<String> {
        state_dir_of(server)
            .and_then(|state| std::fs::read_dir(state.join("sessions")).ok())
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| std::fs::read_link(entry.path()).ok())
            .map(|target| format!("/{}/", target.display()))
            .collect()
    }

    /// Whether a worker's command line is an idle pre-started worker's: on a `_pooled.<key>`
    /// directory no session's link names yet.
    fn is_pooled(cmdline: &str, adopted: &[String]) -> bool {
        cmdline.contains("/_pooled.") && !adopted.iter().any(|a| cmdline.contains(a))
    }

    /// The idle pre-started workers of `server`.
    pub fn pooled_workers(server: u32) -> Vec<u32> {
        let adopted = adopted_dirs(server);
        live_workers(server)
            .into_iter()
            .filter(|(_, cmdline)| is_pooled(cmdline, &adopted))
            .map(|(pid, _)| pid)
            .collect()
    }

    /// The process group `pid` is in.
    pub fn process_group(pid: u32) -> Option<u32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit_once(") ")?
            .1
            .split_whitespace()
            .nth(2)?
            .parse()
            .ok()
    }

    /// The fork servers of `server` (`sandbox-worker fork-server`), live ones only.
    pub fn fork_servers(server: u32) -> Vec<u32> {
        live_workers_showing(server, " fork-server ")
    }

    /// The spares of `server`'s fork servers: workers forked ahead, idle until a session
    /// takes one (`sandbox-worker spare --runtime …`).
    pub fn spares(server: u32) -> Vec<u32> {
        live_workers_showing(server, " spare --runtime ")
    }

    /// The live workers of `server` whose command line shows `marker`.
    fn live_workers_showing(server: u32, marker: &str) -> Vec<u32> {
        live_workers(server)
            .into_iter()
            .filter(|(_, cmdline)| cmdline.contains(marker))
            .map(|(pid, _)| pid)
            .collect()
    }

    /// The live workers of `server` that serve sessions (not the idle pre-started ones).
    pub fn session_workers(server: u32) -> Vec<u32> {
        let adopted = adopted_dirs(server);
        live_workers(server)
            .into_iter()
            // `serve` only: not a precompile, jail check or fork server, nor a worker exiting.
            .filter(|(_, cmdline)| cmdline.contains(" serve ") && !is_pooled(cmdline, &adopted))
            .map(|(pid, _)| pid)
            .collect()
    }

    /// The state directory of `server`, from its environment (`SANDBOX_STATE_DIR`).
    pub fn state_dir_of(server: u32) -> Option<std::path::PathBuf> {
        let environ = std::fs::read(format!("/proc/{server}/environ")).ok()?;
        environ.split(|b| *b == 0).find_map(|entry| {
            let value = entry.strip_prefix(b"SANDBOX_STATE_DIR=")?;
            Some(std::path::PathBuf::from(
                String::from_utf8_lossy(value).into_owned(),
            ))
        })
    }

    /// Sends a signal with kill(1).
    pub fn signal(pid: u32, signal: &str) -> bool {
        std::process::Command::new("kill")
            .args([&format!("-{signal}"), &pid.to_string()])
            .status()
            .is_ok_and(|s| s.success())
    }
}

/// The host side of the escape tests: where a session lives on disk, snapshots of victim
/// directories, FIFOs and device nodes, and the check that replies carry no host path.
pub mod host {
    use std::collections::BTreeMap;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::path::{Component, Path, PathBuf};
    use std::time::SystemTime;

    use anyhow::{Context, Result, ensure};
    use rmcp::model::ErrorData;

    use crate::Reply;

    /// A session's host directories in the current layout,
    /// `{state_dir}/sessions/{session_id}.{8 hex digits}` (holding `app` and `tmp`), newest
    /// first. Empty under the old layout.
    pub fn session_dirs(state_dir: &Path, session_id: &str) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(state_dir.join("sessions")) else {
            return Vec::new();
        };
        let prefix = format!("{session_id}.");
        let mut found: Vec<(SystemTime, PathBuf)> = entries
            .flatten()
            .filter(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.strip_prefix(&prefix).is_some_and(|suffix| {
                    suffix.len() == 8 && suffix.chars().all(|c| c.is_ascii_hexdigit())
                })
            })
            .map(|e| {
                let modified = e
                    .metadata()
                    .and_then(|m| m.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                (modified, e.path())
            })
            .collect();
        found.sort_by_key(|f| std::cmp::Reverse(f.0));
        found.into_iter().map(|(_, p)| p).collect()
    }

    /// The host directory mounted at a session's `/app`: `sessions/{id}.{hex}/app` now,
    /// `workspaces/{id}` in the old layout (the saved binaries of before the fix).
    pub fn workspace_of(state_dir: &Path, session_id: &str) -> Option<PathBuf> {
        session_dirs(state_dir, session_id)
            .into_iter()
            .map(|d| d.join("app"))
            .find(|d| d.is_dir())
            .or_else(|| Some(state_dir.join("workspaces").join(session_id)).filter(|d| d.is_dir()))
    }

    /// The host directory mounted at a session's `/tmp`: the sibling `tmp` of its `app` now,
    /// `tmp/{id}` in the old layout.
    pub fn tmp_of(state_dir: &Path, session_id: &str) -> Option<PathBuf> {
        session_dirs(state_dir, session_id)
            .into_iter()
            .map(|d| d.join("tmp"))
            .find(|d| d.is_dir())
            .or_else(|| Some(state_dir.join("tmp").join(session_id)).filter(|d| d.is_dir()))
    }

    /// The `_pooled.<key>` directory a session adopted with its pre-started worker, where its
    /// files live (its `sessions/<id>.<key>` is then only a link to it); `None` for a session
    /// with directories of its own.
    pub fn adopted_dir_of(state_dir: &Path, session_id: &str) -> Option<PathBuf> {
        session_dirs(state_dir, session_id)
            .into_iter()
            .find_map(|dir| {
                let target = std::fs::read_link(&dir).ok()?;
                Some(dir.parent()?.join(target))
            })
    }

    /// Everything on the host that holds a session's files: its directories and, for a session
    /// that adopted a pre-started worker, the directory its link names. Taken before a destroy,
    /// to check after it that none is left (a check of the link alone would pass with the
    /// files still there).
    pub fn session_storage(state_dir: &Path, session_id: &str) -> Vec<PathBuf> {
        let mut found = host_dirs_of(state_dir, session_id);
        found.extend(adopted_dir_of(state_dir, session_id));
        found
    }

    /// The paths of `storage` that still exist (links not followed).
    pub fn still_there(storage: &[PathBuf]) -> Vec<PathBuf> {
        storage
            .iter()
            .filter(|p| std::fs::symlink_metadata(p).is_ok())
            .cloned()
            .collect()
    }

    /// Every host directory that belongs to a session, in either layout.
    pub fn host_dirs_of(state_dir: &Path, session_id: &str) -> Vec<PathBuf> {
        let mut dirs = session_dirs(state_dir, session_id);
        for old in [
            state_dir.join("workspaces").join(session_id),
            state_dir.join("tmp").join(session_id),
        ] {
            if std::fs::symlink_metadata(&old).is_ok() {
                dirs.push(old);
            }
        }
        dirs
    }

    /// The runtime directory the server uses (as the server finds it: next to its binary,
    /// `runtimes` or `../runtimes`, whichever holds the Python interpreter).
    pub fn runtime_dir() -> Option<PathBuf> {
        let bin = crate::server_binary();
        let dir = bin.parent()?;
        [dir.join("runtimes"), dir.join("../runtimes")]
            .into_iter()
            .find(|d| {
                d.join(sandbox_protocol::Runtime::Python.wasm_file_name())
                    .is_file()
            })
    }

    /// The host directory the server mounts at `/data` (`data` in [`runtime_dir`]).
    pub fn data_dir() -> Option<PathBuf> {
        runtime_dir().map(|d| d.join("data")).filter(|d| d.is_dir())
    }

    /// Makes `dir` hold what a server needs to run, as the server finds it: `bin/sandbox-mcp`,
    /// `bin/sandbox-worker` and `runtimes/` (interpreters, precompiled modules, `/data`), and
    /// returns the path of its `sandbox-mcp`. Every directory is 0755, so any user may run it
    /// wherever the checkout lies. Files are hard links (the runtimes hold hundreds of MB;
    /// links are instant and share the page cache), or copies on another file system.
    ///
    /// # Errors
    /// When the server, its worker or its runtimes are missing, or a file cannot be linked or
    /// copied.
    pub fn public_copy_of_server(dir: &Path) -> Result<PathBuf> {
        let bin = crate::server_binary();
        let worker = bin.with_file_name("sandbox-worker");
        let runtimes = runtime_dir().context("no runtime directory beside sandbox-mcp")?;
        let bin_dir = dir.join("bin");
        std::fs::create_dir_all(&bin_dir)?;
        public(dir)?;
        public(&bin_dir)?;
        let copied = bin_dir.join("sandbox-mcp");
        link_or_copy(&bin, &copied)?;
        link_or_copy(&worker, &bin_dir.join("sandbox-worker"))?;
        copy_tree(&runtimes, &dir.join("runtimes"))?;
        Ok(copied)
    }

    /// Sets a directory's mode to 0755.
    fn public(dir: &Path) -> Result<()> {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("chmod 755 {}", dir.display()))
    }

    fn link_or_copy(from: &Path, to: &Path) -> Result<()> {
        if std::fs::hard_link(from, to).is_err() {
            std::fs::copy(from, to)
                .with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
        }
        Ok(())
    }

    /// Recreates the tree `from` at `to`: directories 0755, files linked or copied, symlinks
    /// recreated with the same target.
    fn copy_tree(from: &Path, to: &Path) -> Result<()> {
        std::fs::create_dir_all(to)?;
        public(to)?;
        for entry in std::fs::read_dir(from).with_context(|| format!("{}", from.display()))? {
            let entry = entry?;
            let (source, target) = (entry.path(), to.join(entry.file_name()));
            let kind = entry.file_type()?;
            if kind.is_dir() {
                copy_tree(&source, &target)?;
            } else if kind.is_symlink() {
                std::os::unix::fs::symlink(std::fs::read_link(&source)?, &target)?;
            } else {
                link_or_copy(&source, &target)?;
            }
        }
        Ok(())
    }

    /// What a snapshot records of one entry.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum Entry {
        Dir {
            mode: u32,
            mtime: i128,
        },
        File {
            mode: u32,
            mtime: i128,
            len: u64,
            hash: u64,
        },
        Symlink {
            target: PathBuf,
        },
        /// FIFO, socket or device node: its `st_mode` and `st_rdev`.
        Other {
            mode: u32,
            rdev: u64,
        },
    }

    /// A recursive record of a host tree: names, types, permission bits, contents (hashed),
    /// link targets and modification times. Links are recorded, never followed.
    #[derive(Debug, Clone, PartialEq, Eq, Default)]
    pub struct Snapshot(pub BTreeMap<PathBuf, Entry>);

    impl Snapshot {
        /// Snapshots `root` (recorded as the empty path) and everything beneath it; a missing
        /// root gives an empty snapshot.
        pub fn of(root: &Path) -> Self {
            let mut snapshot = Snapshot::default();
            record(root, Path::new(""), &mut snapshot.0);
            snapshot
        }

        /// The same without modification times: what a tree holds, not when it was touched.
        pub fn without_times(&self) -> Self {
            Snapshot(
                self.0
                    .iter()
                    .map(|(path, entry)| {
                        let entry = match entry.clone() {
                            Entry::Dir { mode, .. } => Entry::Dir { mode, mtime: 0 },
                            Entry::File {
                                mode, len, hash, ..
                            } => Entry::File {
                                mode,
                                mtime: 0,
                                len,
                                hash,
                            },
                            other => other,
                        };
                        (path.clone(), entry)
                    })
                    .collect(),
            )
        }

        /// Relative paths recorded, sorted.
        pub fn paths(&self) -> Vec<PathBuf> {
            self.0.keys().cloned().collect()
        }
    }

    fn record(path: &Path, relative: &Path, into: &mut BTreeMap<PathBuf, Entry>) {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        let mtime = i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec());
        let mode = meta.permissions().mode();
        let kind = meta.file_type();
        let entry = if kind.is_symlink() {
            Entry::Symlink {
                target: std::fs::read_link(path).unwrap_or_default(),
            }
        } else if kind.is_dir() {
            Entry::Dir { mode, mtime }
        } else if kind.is_file() {
            Entry::File {
                mode,
                mtime,
                len: meta.len(),
                hash: fnv1a(&std::fs::read(path).unwrap_or_default()),
            }
        } else {
            Entry::Other {
                mode,
                rdev: meta.rdev(),
            }
        };
        let is_dir = matches!(entry, Entry::Dir { .. });
        into.insert(relative.to_path_buf(), entry);
        if is_dir && let Ok(children) = std::fs::read_dir(path) {
            for child in children.flatten() {
                record(&child.path(), &relative.join(child.file_name()), into);
            }
        }
    }

    fn fnv1a(bytes: &[u8]) -> u64 {
        bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
        })
    }

    /// A directory outside every sandbox that guest code must not be able to read or change:
    /// `secret.txt` (holding [`Victim::secret`]), `top_level.txt` (the same secret, as a
    /// `.dist-info` would hold it), `sub/nested.txt` (the secret again). Lives in
    /// `$TMPDIR/victim-*` (not `.tmp*`, so a guest may type its path without tripping the host
    /// path check).
    pub struct Victim {
        dir: tempfile::TempDir,
        /// A marker that must never show up in a reply.
        pub secret: String,
        before: Snapshot,
    }

    impl Victim {
        /// Creates the victim and snapshots it.
        ///
        /// # Errors
        /// File system failures.
        pub fn new() -> Result<Self> {
            let dir = tempfile::Builder::new().prefix("victim-").tempdir()?;
            let secret = format!(
                "VICTIM-SECRET-{}-{}",
                std::process::id(),
                SystemTime::now()
                    .duration_since(SystemTime::UNIX_EPOCH)?
                    .as_nanos()
            );
            std::fs::write(dir.path().join("secret.txt"), &secret)?;
            std::fs::write(dir.path().join("top_level.txt"), format!("{secret}\n"))?;
            std::fs::create_dir(dir.path().join("sub"))?;
            std::fs::write(
                dir.path().join("sub/nested.txt"),
                format!("nested:{secret}"),
            )?;
            let before = Snapshot::of(dir.path());
            Ok(Victim {
                dir,
                secret,
                before,
            })
        }

        /// The victim directory (canonical).
        pub fn path(&self) -> PathBuf {
            self.dir
                .path()
                .canonicalize()
                .unwrap_or_else(|_| self.dir.path().to_path_buf())
        }

        /// The victim's `secret.txt`.
        pub fn file(&self) -> PathBuf {
            self.path().join("secret.txt")
        }

        /// The victim's paths that changed, appeared or vanished since it was made ("" is
        /// the victim directory itself).
        pub fn changed(&self) -> Vec<PathBuf> {
            let now = Snapshot::of(self.dir.path());
            let mut changed: Vec<PathBuf> = self
                .before
                .0
                .keys()
                .chain(now.0.keys())
                .filter(|p| self.before.0.get(*p) != now.0.get(*p))
                .cloned()
                .collect();
            changed.sort();
            changed.dedup();
            changed
        }

        /// Panics with the difference when anything in the victim changed.
        pub fn assert_unchanged(&self, context: &str) {
            let changed = self.changed();
            if !changed.is_empty() {
                panic!(
                    "{context}: the victim directory outside the sandbox changed: {changed:?}\nbefore: {:?}\nafter: {:?}",
                    self.before,
                    Snapshot::of(self.dir.path())
                );
            }
        }
    }

    /// The relative path that leads from directory `from` to `to` (both canonicalised when
    /// they exist), as a guest would write it into a symlink in `from`.
    pub fn relative_path(from: &Path, to: &Path) -> PathBuf {
        let from = from.canonicalize().unwrap_or_else(|_| from.to_path_buf());
        let to = to.canonicalize().unwrap_or_else(|_| to.to_path_buf());
        let from: Vec<Component> = from.components().collect();
        let to: Vec<Component> = to.components().collect();
        let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
        let mut path = PathBuf::new();
        for _ in common..from.len() {
            path.push("..");
        }
        for c in &to[common..] {
            path.push(c.as_os_str());
        }
        path
    }

    /// Creates a FIFO (mkfifo(1)).
    ///
    /// # Errors
    /// When mkfifo fails.
    pub fn mkfifo(path: &Path) -> Result<()> {
        let status = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .context("running mkfifo")?;
        ensure!(status.success(), "mkfifo {} failed", path.display());
        Ok(())
    }

    /// Creates a character device node (mknod(1), root only); `Ok(false)` when not permitted.
    ///
    /// # Errors
    /// When mknod cannot be run.
    pub fn mknod_char(path: &Path, major: u32, minor: u32) -> Result<bool> {
        let status = std::process::Command::new("mknod")
            .arg(path)
            .args(["c", &major.to_string(), &minor.to_string()])
            .stderr(std::process::Stdio::null())
            .status()
            .context("running mknod")?;
        Ok(status.success())
    }

    /// Whether this process runs as root (device nodes, `chmod 000` semantics).
    pub fn is_root() -> bool {
        std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
    }

    /// For a test that needs root for `what` (CI runs the tests as root): an error as any
    /// other user. A test that cannot do its work fails instead of reporting a pass it did not
    /// earn; as another user, skip it by name (`cargo test ... -- --skip NAME`).
    ///
    /// # Errors
    /// When this process is not root.
    pub fn require_root(what: &str) -> Result<()> {
        ensure!(
            is_root(),
            "this test needs root for {what} (CI runs as root); as another user, skip it by name with `-- --skip`"
        );
        Ok(())
    }

    /// Host paths that must never reach a client: the server's state directory, the test's
    /// scratch directories (`$TMPDIR/.tmp*`), wheelhouses and victims added with `with`.
    #[derive(Debug, Clone)]
    pub struct HostPaths(Vec<String>);

    impl Default for HostPaths {
        fn default() -> Self {
            let scratch = std::env::temp_dir().join(".tmp");
            HostPaths(vec![scratch.to_string_lossy().into_owned()])
        }
    }

    impl HostPaths {
        /// Adds a path (and its canonical form).
        #[must_use]
        pub fn with(mut self, path: impl AsRef<Path>) -> Self {
            let path = path.as_ref();
            self.0.push(path.to_string_lossy().into_owned());
            if let Ok(canonical) = path.canonicalize() {
                self.0.push(canonical.to_string_lossy().into_owned());
            }
            self
        }

        /// The first host path `text` contains.
        pub fn leak_in(&self, text: &str) -> Option<&str> {
            self.0
                .iter()
                .find(|p| !p.is_empty() && text.contains(p.as_str()))
                .map(String::as_str)
        }

        /// Panics when `text` contains a host path.
        pub fn check(&self, context: &str, text: &str) {
            if let Some(path) = self.leak_in(text) {
                panic!("{context}: a host path ({path}) reached the client: {text}");
            }
        }

        /// Checks a tool result: its text blocks and its structured content.
        pub fn check_reply(&self, context: &str, reply: &Reply) {
            self.check(context, &reply.text);
            self.check(context, &reply.value.to_string());
        }

        /// Checks a JSON-RPC error: its message and data.
        pub fn check_error(&self, context: &str, error: &ErrorData) {
            self.check(context, &error.message);
            if let Some(data) = &error.data {
                self.check(context, &data.to_string());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::host::{self, HostPaths, Snapshot, Victim};

    #[test]
    fn a_victim_notices_writes_through_links_and_new_entries() {
        let victim = Victim::new().unwrap();
        assert!(victim.changed().is_empty());
        let sandbox = tempfile::tempdir().unwrap();
        let link = sandbox.path().join("link");
        symlink(host::relative_path(sandbox.path(), &victim.path()), &link).unwrap();
        assert_eq!(
            std::fs::read_to_string(link.join("secret.txt")).unwrap(),
            victim.secret,
            "the relative path leads to the victim"
        );
        std::fs::write(link.join("new.txt"), "x").unwrap();
        assert!(victim.changed().iter().any(|p| p.ends_with("new.txt")));
        let other = Victim::new().unwrap();
        std::fs::write(other.file(), "overwritten").unwrap();
        assert_eq!(other.changed(), [std::path::PathBuf::from("secret.txt")]);
    }

    #[test]
    fn snapshots_record_links_without_following_them() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("d")).unwrap();
        symlink("/etc", root.path().join("d/etc")).unwrap();
        let snapshot = Snapshot::of(root.path());
        assert_eq!(snapshot.paths().len(), 3, "{snapshot:?}");
        assert_eq!(
            snapshot.0[std::path::Path::new("d/etc")],
            host::Entry::Symlink {
                target: "/etc".into()
            }
        );
        assert_eq!(
            Snapshot::of(&root.path().join("missing")),
            Snapshot::default()
        );
    }

    #[test]
    fn workspaces_are_found_in_both_layouts() {
        let state = tempfile::tempdir().unwrap();
        assert_eq!(host::workspace_of(state.path(), "s1"), None);
        std::fs::create_dir_all(state.path().join("workspaces/s1")).unwrap();
        std::fs::create_dir_all(state.path().join("tmp/s1")).unwrap();
        assert_eq!(
            host::workspace_of(state.path(), "s1"),
            Some(state.path().join("workspaces/s1"))
        );
        assert_eq!(host::host_dirs_of(state.path(), "s1").len(), 2);
        std::fs::create_dir_all(state.path().join("sessions/s1.0a1b2c3d/app")).unwrap();
        std::fs::create_dir_all(state.path().join("sessions/s1.0a1b2c3d/tmp")).unwrap();
        std::fs::create_dir_all(state.path().join("sessions/s10.0a1b2c3d/app")).unwrap();
        assert_eq!(
            host::workspace_of(state.path(), "s1"),
            Some(state.path().join("sessions/s1.0a1b2c3d/app"))
        );
        assert_eq!(
            host::tmp_of(state.path(), "s1"),
            Some(state.path().join("sessions/s1.0a1b2c3d/tmp"))
        );
        assert_eq!(host::session_dirs(state.path(), "s1").len(), 1);
    }

    fn reply(value: serde_json::Value) -> crate::Reply {
        crate::Reply {
            is_error: false,
            value,
            text: String::new(),
            images: Vec::new(),
            elapsed: std::time::Duration::ZERO,
            schema: None,
        }
    }

    /// A field the output schema declares but the result left out reads as "none" (null,
    /// false, an empty list); a field it does not declare still fails the test.
    #[test]
    fn a_declared_field_left_out_reads_as_none() {
        let mut r = reply(serde_json::json!({ "success": true }));
        r.schema = Some(std::sync::Arc::new(serde_json::json!({
            "properties": {
                "success": { "type": "boolean" },
                "result": { "type": "string" },
                "session_restarted": { "type": "boolean" },
                "notes": { "type": "array", "items": { "type": "string" } },
            },
            "required": ["success"],
        })));
        assert!(r.is_null("result") && !r.has("result"));
        assert_eq!(r.opt_str("result"), None);
        assert!(!r.bool("session_restarted"));
        assert!(r.list("notes").is_empty());
        assert!(r.bool("success"));
        let undeclared = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = r.bool("renamed");
        }));
        assert!(undeclared.is_err(), "an undeclared field still fails");
        let absent_string = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = r.str("result");
        }));
        assert!(absent_string.is_err(), "str() wants a value");
    }

    /// Results are checked against their output schema as a validating SDK checks them.
    #[test]
    fn results_are_checked_against_their_output_schema() {
        let schema = serde_json::json!({
            "properties": {
                "success": { "type": "boolean" },
                "kind": { "type": "string", "enum": ["a", "b"] },
                "n": { "type": "integer" },
                "items": { "type": "array", "items": { "properties": { "x": { "type": "string" } }, "type": "object" } },
            },
            "required": ["success"],
            "type": "object",
        });
        let ok =
            serde_json::json!({ "success": true, "kind": "a", "n": 3, "items": [{ "x": "y" }] });
        assert!(crate::schema_violations(&ok, &schema).is_empty());
        let bad = serde_json::json!({ "kind": "c", "n": null, "extra": 1, "items": [{ "x": 1 }] });
        let found = crate::schema_violations(&bad, &schema);
        for expected in [
            "$.success: required, missing",
            "$.kind: \"c\" is not one of",
            "$.n: null is not integer",
            "$.extra: not in the schema",
            "$.items[0].x: 1 is not string",
        ] {
            assert!(
                found.iter().any(|f| f.starts_with(expected)),
                "{expected}: {found:?}"
            );
        }
    }

    #[test]
    fn reply_fields_are_read_with_their_types() {
        let r = reply(serde_json::json!({
            "s": "text", "b": false, "n": 7, "none": null, "list": [1],
        }));
        assert_eq!(r.str("s"), "text");
        assert_eq!(r.opt_str("s"), Some("text"));
        assert_eq!(r.opt_str("none"), None);
        assert!(!r.bool("b"));
        assert_eq!(r.u64("n"), 7);
        assert!(r.is_null("none") && !r.is_null("s"));
        assert_eq!(r.field("list"), &serde_json::json!([1]));
    }

    /// A renamed or dropped field fails the test instead of reading as "", false or 0, so a
    /// negative check (`!reply.bool("x")`, `reply.str("x").is_empty()`) cannot pass by accident.
    #[test]
    fn a_missing_field_fails_every_reader() {
        let r = reply(serde_json::json!({ "present": "x", "none": null, "n": 1 }));
        let panics = |read: &dyn Fn(&crate::Reply)| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read(&r)))
                .expect_err("the read must panic")
        };
        for read in [
            &(|r: &crate::Reply| {
                let _ = r.str("renamed");
            }) as &dyn Fn(&crate::Reply),
            &|r| {
                let _ = r.opt_str("renamed");
            },
            &|r| {
                let _ = r.bool("renamed");
            },
            &|r| {
                let _ = r.u64("renamed");
            },
            &|r| {
                let _ = r.is_null("renamed");
            },
            &|r| {
                let _ = r.field("renamed");
            },
        ] {
            let message = panics(read);
            let message = message
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_default();
            assert!(
                message.starts_with("the reply has no field \"renamed\"")
                    && message.contains(r#"{"n":1,"none":null,"present":"x"}"#),
                "names the field and shows the reply: {message}"
            );
        }
        // A field of another type is no answer either, nor is null where a string is expected.
        panics(&|r| {
            let _ = r.str("n");
        });
        panics(&|r| {
            let _ = r.str("none");
        });
        panics(&|r| {
            let _ = r.bool("present");
        });
        panics(&|r| {
            let _ = r.u64("present");
        });
        panics(&|r| {
            let _ = r.opt_str("n");
        });
    }

    #[test]
    fn host_paths_are_found_in_text() {
        let paths = HostPaths::default().with("/srv/state");
        assert_eq!(paths.leak_in("see /srv/state/x"), Some("/srv/state"));
        let scratch = std::env::temp_dir().join(".tmpAbC123");
        assert!(paths.leak_in(&scratch.display().to_string()).is_some());
        assert_eq!(paths.leak_in("/app/x.txt and /tmp/x"), None);
    }
}

pub mod bench_support;
pub mod corpus;
pub mod raw_http;
pub mod sdk;
