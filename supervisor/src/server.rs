//! The MCP face of the supervisor: tool definitions, argument checks, and the mapping of
//! sessions and executions to tool results.
//!
//! Guest failures (an exception, a timeout) are tool results with `isError: true` and the
//! structured details; protocol errors (`invalid_params`) are only for arguments that make no
//! sense, as the rmcp docs recommend.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, ProgressNotificationParam, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use sandbox_protocol::Language;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::config::{Flavor, MAX_TIMEOUT, MEMORY_RANGE, SessionLimits, SupervisorConfig};
use crate::executions::Executions;
use crate::report::ExecuteCodeResult;
use crate::runtimes::{RUNTIMES, Runtimes};
use crate::session::{CreateError, Session, SessionTable, valid_session_id};

/// Largest source accepted by `execute_code`. Bigger code is almost certainly data that belongs
/// in a file under /app.
const MAX_CODE_BYTES: usize = 1 << 20;

const INSTRUCTIONS: &str = "Runs Python (CPython 3.12) and JavaScript (QuickJS-NG) in WebAssembly sandboxes. \
Each session keeps its interpreter alive between calls, so variables, functions and imports persist. \
Files live under /app (the working directory). No network, no subprocesses. \
Start with execute_code; call list_runtimes for versions and limits.";

/// The two languages, with the spellings models commonly use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LanguageArg {
    #[serde(alias = "py", alias = "python3")]
    Python,
    #[serde(alias = "js", alias = "node", alias = "nodejs")]
    Javascript,
}

impl From<LanguageArg> for Language {
    fn from(arg: LanguageArg) -> Self {
        match arg {
            LanguageArg::Python => Language::Python,
            LanguageArg::Javascript => Language::JavaScript,
        }
    }
}

/// Arguments of `execute_code`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExecuteCodeArgs {
    /// The source to run. Python: any statements; the value of a trailing expression is
    /// returned as `result`. JavaScript: global script code (not a module, no `import`).
    pub code: String,
    /// "python" or "javascript".
    pub language: LanguageArg,
    /// Session to run in. Omit it to use this connection's default session for the language
    /// (state persists across calls). An unknown id matching ^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$
    /// creates that session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Wall-clock limit in seconds (default: the session's, 30 for small; max 300). On timeout
    /// the code is interrupted and the session keeps its state when the interpreter allows.
    #[serde(default)]
    pub timeout: Option<f64>,
    /// Size of the session if this call creates it: small (default), medium or large.
    #[serde(default)]
    pub flavor: Option<Flavor>,
}

/// Arguments of `cancel_execution`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CancelExecutionArgs {
    /// The execution_id from a progress notification, get_workspace_info, or a result.
    pub execution_id: String,
}

/// Arguments of `create_session`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateSessionArgs {
    /// "python" or "javascript".
    pub language: LanguageArg,
    /// Your own id (letters, digits, - and _; up to 64). Omit for a generated one.
    #[serde(default)]
    pub session_id: Option<String>,
    /// small (1 CPU, 1 GiB, default), medium (2 CPU, 2 GiB) or large (4 CPU, 4 GiB); sets
    /// memory, fuel, timeout, output and disk limits together.
    #[serde(default)]
    pub flavor: Option<Flavor>,
    /// Fuel per execution (CPU allowance; about 10^10 per second). Overrides the flavor's.
    #[serde(default)]
    pub fuel_budget: Option<u64>,
    /// Interpreter memory cap in bytes (32 MiB to 4 GiB). Overrides the flavor's.
    #[serde(default)]
    pub memory_bytes: Option<u64>,
    /// Default timeout in seconds for this session's executions (max 300).
    #[serde(default)]
    pub timeout: Option<f64>,
    /// Idle time in seconds before the session and its files are removed (default 86400).
    #[serde(default)]
    pub ttl_seconds: Option<u64>,
}

/// Arguments of `destroy_session`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DestroySessionArgs {
    /// The session to stop; its workspace files are deleted.
    pub session_id: String,
}

/// What `create_session` returns.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionInfo {
    pub session_id: String,
    pub language: String,
    /// RFC 3339.
    pub created_at: String,
    /// When the session expires if left idle (RFC 3339); every call extends it.
    pub expires_at: String,
    pub ttl_seconds: u64,
    pub limits: LimitsInfo,
}

/// A session's limits.
#[derive(Debug, Serialize, JsonSchema)]
pub struct LimitsInfo {
    pub flavor: Flavor,
    pub cpus: u32,
    pub disk_file_bytes: u64,
    pub memory_bytes: u64,
    pub fuel_budget: u64,
    pub timeout_seconds: f64,
    pub stdout_cap_bytes: usize,
    pub stderr_cap_bytes: usize,
}

/// The MCP server. Cloned per request by rmcp; the session table is shared by all connections,
/// default sessions belong to this connection.
#[derive(Clone)]
pub struct SandboxServer {
    config: Arc<SupervisorConfig>,
    sessions: Arc<SessionTable>,
    runtimes: Arc<Runtimes>,
    executions: Arc<Executions>,
    default_sessions: Arc<Mutex<HashMap<Language, String>>>,
}

/// Why an execution could not even start: a protocol error for bad arguments, or a tool error
/// result the model can act on (no capacity, expired session).
enum Refusal {
    Invalid(McpError),
    Tool {
        error_type: &'static str,
        message: String,
        session_id: String,
    },
}

impl From<McpError> for Refusal {
    fn from(e: McpError) -> Self {
        Refusal::Invalid(e)
    }
}

fn invalid(message: impl Into<String>) -> McpError {
    McpError::invalid_params(message.into(), None)
}

fn check_session_id(id: &str) -> Result<(), McpError> {
    if valid_session_id(id) {
        return Ok(());
    }
    Err(invalid(format!(
        "invalid session_id {id:?}: use 1-64 letters, digits, '-' or '_', starting with a letter or digit"
    )))
}

fn timeout_arg(seconds: Option<f64>, default: Duration) -> Result<Duration, McpError> {
    match seconds {
        None => Ok(default),
        Some(s) if s.is_finite() && s > 0.0 && s <= MAX_TIMEOUT.as_secs_f64() => {
            Ok(Duration::from_secs_f64(s))
        }
        Some(s) => Err(invalid(format!(
            "timeout must be between 0 and {} seconds, got {s}",
            MAX_TIMEOUT.as_secs()
        ))),
    }
}

fn rfc3339(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

impl SandboxServer {
    pub fn new(
        config: Arc<SupervisorConfig>,
        sessions: Arc<SessionTable>,
        runtimes: Arc<Runtimes>,
        executions: Arc<Executions>,
    ) -> Self {
        Self {
            config,
            sessions,
            runtimes,
            executions,
            default_sessions: Arc::default(),
        }
    }

    fn session_info(session: &Session) -> SessionInfo {
        SessionInfo {
            session_id: session.id.clone(),
            language: session.language.to_string(),
            created_at: rfc3339(session.created_at),
            expires_at: rfc3339(session.expires_at()),
            ttl_seconds: session.ttl.as_secs(),
            limits: LimitsInfo {
                flavor: session.limits.flavor,
                cpus: session.limits.cpus,
                disk_file_bytes: session.limits.disk_bytes,
                memory_bytes: session.limits.memory_bytes,
                fuel_budget: session.limits.fuel,
                timeout_seconds: session.limits.timeout.as_secs_f64(),
                stdout_cap_bytes: session.limits.stdout_cap,
                stderr_cap_bytes: session.limits.stderr_cap,
            },
        }
    }

    /// The limits of a new session: the flavor's (or the configured defaults), then overrides.
    fn limits_for(&self, flavor: Option<Flavor>) -> SessionLimits {
        match flavor {
            Some(flavor) => flavor.limits(),
            None => self.config.defaults.clone(),
        }
    }

    /// The session an `execute_code` call runs in, created on demand.
    fn resolve_session(
        &self,
        id: Option<&str>,
        language: Language,
        flavor: Option<Flavor>,
    ) -> Result<Arc<Session>, Refusal> {
        let id = match id {
            Some(id) => {
                check_session_id(id)?;
                id.to_owned()
            }
            None => {
                let mut defaults = self
                    .default_sessions
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                defaults
                    .entry(language)
                    .or_insert_with(|| {
                        format!(
                            "default-{language}-{}",
                            &uuid::Uuid::new_v4().simple().to_string()[..8]
                        )
                    })
                    .clone()
            }
        };
        if let Some(session) = self.sessions.get(&id) {
            if session.language != language {
                return Err(invalid(format!(
                    "session {id:?} runs {}, not {language}; use language {:?} or another session_id",
                    session.language,
                    session.language.as_str()
                ))
                .into());
            }
            return Ok(session);
        }
        if self.sessions.expired(&id) {
            return Err(Refusal::Tool {
                error_type: "invalid_session",
                message: format!(
                    "session {id:?} expired after being idle and was removed with its files; start a new one with create_session, or call execute_code without session_id"
                ),
                session_id: id,
            });
        }
        match self.sessions.create(
            &id,
            language,
            self.limits_for(flavor),
            self.config.session_ttl,
        ) {
            Ok(session) => Ok(session),
            // Two calls raced to create it: use the winner's.
            Err(CreateError::Exists(_)) => self
                .sessions
                .get(&id)
                .ok_or_else(|| invalid("session vanished").into()),
            Err(CreateError::ResourcesExhausted(usage)) => Err(Refusal::Tool {
                error_type: "resources_exhausted",
                message: format!(
                    "{usage}; wait for idle sessions to expire and retry, or destroy_session one you no longer need"
                ),
                session_id: id,
            }),
            Err(e) => Err(Refusal::Invalid(McpError::internal_error(
                crate::redact(&self.config, &e.to_string()),
                None,
            ))),
        }
    }

    /// Sends a progress notification every second while an execution runs, when the client
    /// asked for progress. The first one goes out at once and names the execution, so another
    /// request can cancel it.
    fn report_progress(
        &self,
        ctx: &RequestContext<RoleServer>,
        execution_id: &str,
    ) -> Option<tokio::task::JoinHandle<()>> {
        let token = ctx.meta.get_progress_token()?;
        let peer = ctx.peer.clone();
        let execution_id = execution_id.to_owned();
        let executions = self.executions.clone();
        Some(tokio::spawn(async move {
            let started = tokio::time::Instant::now();
            let mut tick = 0u32;
            loop {
                let status = executions
                    .list(None)
                    .into_iter()
                    .find(|e| e.execution_id == execution_id)
                    .map_or("finishing".to_owned(), |e| e.status);
                let message = format!(
                    "execution {execution_id} {status} ({:.0} s)",
                    started.elapsed().as_secs_f64()
                );
                let progress = ProgressNotificationParam::new(token.clone(), f64::from(tick))
                    .with_message(message);
                if peer.notify_progress(progress).await.is_err() {
                    return;
                }
                tick += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }))
    }
}

/// A structured tool result: `isError` from the value's `success`, the text block given.
fn tool_result(value: serde_json::Value, is_error: bool, text: String) -> CallToolResult {
    let mut reply = if is_error {
        CallToolResult::structured_error(value)
    } else {
        CallToolResult::structured(value)
    };
    reply.content = vec![ContentBlock::text(text)];
    reply
}

fn to_value<T: Serialize>(value: &T) -> Result<serde_json::Value, McpError> {
    serde_json::to_value(value).map_err(|e| McpError::internal_error(e.to_string(), None))
}

#[tool_router]
impl SandboxServer {
    #[tool(
        description = "Run Python or JavaScript code in a persistent sandboxed session and return stdout, stderr, the value of the last expression (`result`), timing and fuel used. Variables, functions and imports persist between calls in the same session (omit session_id to use your default session for the language). Files go under /app (the working directory). No network or subprocesses. On failure `error_type` says what happened (syntax_error, runtime_error, missing_module, timeout, out_of_fuel, out_of_memory, ...). Send a progressToken to receive the execution_id while it runs (for cancel_execution).",
        output_schema = schema_for_output::<ExecuteCodeResult>(),
        annotations(title = "Execute code", read_only_hint = false, destructive_hint = false, open_world_hint = false)
    )]
    async fn execute_code(
        &self,
        Parameters(args): Parameters<ExecuteCodeArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        if args.code.trim().is_empty() {
            return Err(invalid("code must not be empty"));
        }
        if args.code.len() > MAX_CODE_BYTES {
            return Err(invalid(format!(
                "code is {} bytes, the limit is {MAX_CODE_BYTES}; write large data to a file under /app in smaller pieces",
                args.code.len()
            )));
        }
        let language = Language::from(args.language);
        let session = match self.resolve_session(args.session_id.as_deref(), language, args.flavor)
        {
            Ok(session) => session,
            Err(Refusal::Invalid(e)) => return Err(e),
            Err(Refusal::Tool {
                error_type,
                message,
                session_id,
            }) => {
                let result = ExecuteCodeResult::refused(&session_id, language, error_type, message);
                return Ok(tool_result(to_value(&result)?, true, result.to_text()));
            }
        };
        let timeout = timeout_arg(args.timeout, session.limits.timeout)?;
        let execution_id = format!("exec-{}", uuid::Uuid::new_v4().simple());
        let cancel = self
            .executions
            .register(&execution_id, &session.id, &ctx.ct);
        let progress = self.report_progress(&ctx, &execution_id);
        let executions = self.executions.clone();
        let started = session
            .execute(
                &self.config,
                &self.runtimes,
                execution_id.clone(),
                args.code,
                timeout,
                &cancel,
                || executions.mark_running(&execution_id),
            )
            .await;
        if let Some(progress) = progress {
            progress.abort();
        }
        let execution = match started {
            Ok(execution) => execution,
            Err(e) => {
                self.executions.finish(&execution_id, "failed to start");
                let result = ExecuteCodeResult::refused(
                    &session.id,
                    language,
                    "system_error",
                    crate::redact(&self.config, &e.to_string()),
                );
                return Ok(tool_result(to_value(&result)?, true, result.to_text()));
            }
        };
        let result = ExecuteCodeResult::new(&session, execution);
        self.executions.finish(
            &execution_id,
            result.error_type.as_deref().unwrap_or("completed"),
        );
        Ok(tool_result(
            to_value(&result)?,
            !result.success,
            result.to_text(),
        ))
    }

    #[tool(
        description = "Stop a running or queued execution by its execution_id. Python gets a KeyboardInterrupt and JavaScript an interrupt (session state kept); code that ignores it is stopped by force. Returns {cancelled, status}.",
        annotations(
            title = "Cancel execution",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn cancel_execution(
        &self,
        Parameters(args): Parameters<CancelExecutionArgs>,
    ) -> Result<CallToolResult, McpError> {
        let id = args.execution_id;
        if self.executions.cancel(&id) {
            // Wait for the execution to answer its caller, so the status is final.
            let deadline =
                tokio::time::Instant::now() + crate::worker::KILL_GRACE + Duration::from_secs(1);
            while self.executions.is_live(&id) && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let status = self
                .executions
                .outcome(&id)
                .unwrap_or_else(|| "cancelling".into());
            return Ok(CallToolResult::structured(json!({
                "cancelled": true,
                "execution_id": id,
                "status": status,
            })));
        }
        match self.executions.outcome(&id) {
            Some(outcome) => Ok(CallToolResult::structured(json!({
                "cancelled": false,
                "execution_id": id,
                "status": "already_finished",
                "outcome": outcome,
            }))),
            None => Err(invalid(format!(
                "no execution {id:?} is running or recently finished; get_workspace_info lists running executions"
            ))),
        }
    }

    #[tool(
        description = "Create a sandbox session explicitly: choose its id, flavor (small/medium/large), fuel budget, memory, timeout or idle TTL. Usually unnecessary: execute_code creates sessions on demand. Errors if the id already exists.",
        output_schema = schema_for_output::<SessionInfo>(),
        annotations(title = "Create session", read_only_hint = false, destructive_hint = false, open_world_hint = false)
    )]
    async fn create_session(
        &self,
        Parameters(args): Parameters<CreateSessionArgs>,
    ) -> Result<CallToolResult, McpError> {
        let id = match args.session_id {
            Some(id) => {
                check_session_id(&id)?;
                id
            }
            None => format!(
                "session-{}",
                &uuid::Uuid::new_v4().simple().to_string()[..12]
            ),
        };
        let mut limits = self.limits_for(args.flavor);
        if let Some(fuel) = args.fuel_budget {
            if fuel == 0 {
                return Err(invalid("fuel_budget must be positive"));
            }
            limits.fuel = fuel;
        }
        if let Some(memory) = args.memory_bytes {
            if !MEMORY_RANGE.contains(&memory) {
                return Err(invalid(format!(
                    "memory_bytes must be between {} and {} (32 MiB to 4 GiB), got {memory}",
                    MEMORY_RANGE.start(),
                    MEMORY_RANGE.end()
                )));
            }
            limits.memory_bytes = memory;
        }
        limits.timeout = timeout_arg(args.timeout, limits.timeout)?;
        let ttl = match args.ttl_seconds {
            Some(0) => return Err(invalid("ttl_seconds must be positive")),
            Some(secs) => Duration::from_secs(secs),
            None => self.config.explicit_session_ttl,
        };
        let language = Language::from(args.language);
        match self.sessions.create(&id, language, limits, ttl) {
            Ok(session) => {
                let info = Self::session_info(&session);
                let text = format!(
                    "created {} session {} ({} flavor), expires {} if idle",
                    info.language,
                    info.session_id,
                    session.limits.flavor.name(),
                    info.expires_at
                );
                Ok(tool_result(to_value(&info)?, false, text))
            }
            Err(CreateError::Exists(id)) => Err(invalid(format!(
                "session {id:?} already exists; use it with execute_code, or destroy_session it first"
            ))),
            Err(CreateError::ResourcesExhausted(usage)) => {
                let value = json!({
                    "success": false,
                    "error_type": "resources_exhausted",
                    "error_message": usage.to_string(),
                    "usage": usage,
                    "actionable_guidance": [
                        "wait a minute for idle sessions to expire, then retry",
                        "destroy_session a session you no longer need",
                        "ask for a smaller flavor or memory_bytes",
                    ],
                });
                Ok(tool_result(
                    value,
                    true,
                    format!("ERROR resources_exhausted: {usage}"),
                ))
            }
            Err(other) => Err(McpError::internal_error(
                crate::redact(&self.config, &other.to_string()),
                None,
            )),
        }
    }

    #[tool(
        description = "Stop a session: its interpreter is killed (a running execution ends) and its /app files are deleted.",
        annotations(
            title = "Destroy session",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn destroy_session(
        &self,
        Parameters(args): Parameters<DestroySessionArgs>,
    ) -> Result<CallToolResult, McpError> {
        match self.sessions.destroy(&args.session_id).await {
            Some(session) => {
                self.default_sessions
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .retain(|_, id| *id != session.id);
                Ok(CallToolResult::structured(json!({
                    "destroyed": true,
                    "session_id": session.id,
                    "message": "the session's interpreter was stopped and its files deleted",
                })))
            }
            None => Err(invalid(format!(
                "no session {:?}; nothing to destroy",
                args.session_id
            ))),
        }
    }

    #[tool(
        description = "List the runtimes with exact versions, capabilities and limits, the session flavors, and server health (sessions in use, capacity, isolation).",
        annotations(
            title = "List runtimes",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn list_runtimes(&self) -> Result<CallToolResult, McpError> {
        let limits = &self.config.defaults;
        let runtimes: Vec<_> = RUNTIMES
            .iter()
            .map(|r| {
                json!({
                    "name": r.name,
                    "language": r.language.as_str(),
                    "version": r.version,
                    "engine": r.engine,
                    "capabilities": r.capabilities,
                    "notes": r.notes,
                    "default_limits": limits_json(limits),
                })
            })
            .collect();
        let flavors: serde_json::Map<String, serde_json::Value> = Flavor::ALL
            .iter()
            .map(|f| (f.name().to_owned(), limits_json(&f.limits())))
            .collect();
        let usage = self.sessions.usage();
        Ok(CallToolResult::structured(json!({
            "runtimes": runtimes,
            "flavors": flavors,
            "health": {
                "sessions": usage.sessions,
                "max_sessions": usage.max_sessions,
                "memory_reserved_bytes": usage.memory_reserved_bytes,
                "memory_budget_bytes": usage.memory_budget_bytes,
                "running_executions": self.executions.list(None).len(),
                "isolation": "one sandbox-worker process per session: WebAssembly (Wasmtime) with fuel, epoch deadlines and a memory cap; rlimits (RLIMIT_DATA, NOFILE, FSIZE, CPU, CORE=0), no_new_privs, own process group, PDEATHSIG",
                "cgroups": self.config.cgroups.describe(),
            },
        })))
    }
}

fn limits_json(limits: &SessionLimits) -> serde_json::Value {
    json!({
        "cpus": limits.cpus,
        "memory_bytes": limits.memory_bytes,
        "fuel_budget": limits.fuel,
        "timeout_seconds": limits.timeout.as_secs_f64(),
        "stdout_cap_bytes": limits.stdout_cap,
        "stderr_cap_bytes": limits.stderr_cap,
        "disk_file_bytes": limits.disk_bytes,
    })
}

#[tool_handler]
impl ServerHandler for SandboxServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "sandbox-mcp",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }
}
