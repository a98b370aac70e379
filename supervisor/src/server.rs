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
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use sandbox_protocol::Language;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::config::{MAX_TIMEOUT, SupervisorConfig};
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
    /// Wall-clock limit in seconds (default 30, max 300). On timeout the code is interrupted
    /// and the session keeps its state when the interpreter allows.
    #[serde(default)]
    pub timeout: Option<f64>,
}

/// Arguments of `create_session`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateSessionArgs {
    /// "python" or "javascript".
    pub language: LanguageArg,
    /// Your own id (letters, digits, - and _; up to 64). Omit for a generated one.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Fuel per execution (CPU allowance; about 10^10 per second). Default 10000000000.
    #[serde(default)]
    pub fuel_budget: Option<u64>,
    /// Default timeout in seconds for this session's executions (max 300).
    #[serde(default)]
    pub timeout: Option<f64>,
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
    pub limits: LimitsInfo,
}

/// A session's limits.
#[derive(Debug, Serialize, JsonSchema)]
pub struct LimitsInfo {
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
    default_sessions: Arc<Mutex<HashMap<Language, String>>>,
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
    ) -> Self {
        Self {
            config,
            sessions,
            runtimes,
            default_sessions: Arc::default(),
        }
    }

    fn session_info(session: &Session) -> SessionInfo {
        SessionInfo {
            session_id: session.id.clone(),
            language: session.language.to_string(),
            created_at: rfc3339(session.created_at),
            expires_at: rfc3339(session.expires_at()),
            limits: LimitsInfo {
                memory_bytes: session.limits.memory_bytes,
                fuel_budget: session.limits.fuel,
                timeout_seconds: session.limits.timeout.as_secs_f64(),
                stdout_cap_bytes: session.limits.stdout_cap,
                stderr_cap_bytes: session.limits.stderr_cap,
            },
        }
    }

    /// The session an `execute_code` call runs in, created on demand.
    fn resolve_session(
        &self,
        id: Option<&str>,
        language: Language,
    ) -> Result<Arc<Session>, McpError> {
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
                            "default-{}-{}",
                            language,
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
                )));
            }
            return Ok(session);
        }
        if self.sessions.expired(&id) {
            return Err(invalid(format!(
                "session {id:?} expired after being idle and was removed with its files; call create_session (or execute_code without session_id) to start a new one"
            )));
        }
        match self.sessions.create(
            &id,
            language,
            self.config.defaults.clone(),
            self.config.session_ttl,
        ) {
            Ok(session) => Ok(session),
            // Two calls raced to create it: use the winner's.
            Err(CreateError::Exists(_)) => self
                .sessions
                .get(&id)
                .ok_or_else(|| invalid("session vanished")),
            Err(e) => Err(McpError::internal_error(e.to_string(), None)),
        }
    }
}

#[tool_router]
impl SandboxServer {
    #[tool(
        description = "Run Python or JavaScript code in a persistent sandboxed session and return stdout, stderr, the value of the last expression (`result`), timing and fuel used. Variables, functions and imports persist between calls in the same session (omit session_id to use your default session for the language). Files go under /app (the working directory). No network or subprocesses. On failure `error_type` says what happened (syntax_error, runtime_error, missing_module, timeout, out_of_fuel, out_of_memory, ...).",
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
        let session = self.resolve_session(args.session_id.as_deref(), language)?;
        let timeout = timeout_arg(args.timeout, session.limits.timeout)?;
        let execution = session
            .execute(&self.config, &self.runtimes, args.code, timeout, &ctx.ct)
            .await
            .map_err(|e| {
                McpError::internal_error(crate::redact(&self.config, &e.to_string()), None)
            })?;
        let result = ExecuteCodeResult::new(&session, execution);
        let text = result.to_text();
        let is_error = !result.success;
        let value = serde_json::to_value(&result)
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let mut reply = if is_error {
            CallToolResult::structured_error(value)
        } else {
            CallToolResult::structured(value)
        };
        reply.content = vec![ContentBlock::text(text)];
        Ok(reply)
    }

    #[tool(
        description = "Create a sandbox session explicitly, e.g. to choose its id or a larger fuel budget. Usually unnecessary: execute_code creates sessions on demand. Errors if the id already exists.",
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
        let mut limits = self.config.defaults.clone();
        if let Some(fuel) = args.fuel_budget {
            if fuel == 0 {
                return Err(invalid("fuel_budget must be positive"));
            }
            limits.fuel = fuel;
        }
        limits.timeout = timeout_arg(args.timeout, limits.timeout)?;
        let session = self
            .sessions
            .create(&id, args.language.into(), limits, self.config.session_ttl)
            .map_err(|e| match e {
                CreateError::Exists(id) => invalid(format!(
                    "session {id:?} already exists; use it with execute_code, or destroy_session it first"
                )),
                other => McpError::internal_error(crate::redact(&self.config, &other.to_string()), None),
            })?;
        let info = serde_json::to_value(Self::session_info(&session))
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        Ok(CallToolResult::structured(info))
    }

    #[tool(
        description = "Stop a session: its interpreter is killed and its /app files are deleted.",
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
        description = "List the available language runtimes with exact versions, capabilities and default limits.",
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
                    "default_limits": {
                        "memory_bytes": limits.memory_bytes,
                        "fuel_budget": limits.fuel,
                        "timeout_seconds": limits.timeout.as_secs_f64(),
                        "stdout_cap_bytes": limits.stdout_cap,
                        "stderr_cap_bytes": limits.stderr_cap,
                    },
                })
            })
            .collect();
        Ok(CallToolResult::structured(json!({ "runtimes": runtimes })))
    }
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
