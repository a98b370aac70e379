//! The MCP face of the supervisor: tool definitions, argument checks, and the mapping of
//! sessions and executions to tool results.
//!
//! Guest failures (an exception, a timeout) are tool results with `isError: true` and the
//! structured details; protocol errors (`invalid_params`) are only for arguments that make no
//! sense, as the rmcp docs recommend. Those carry a machine-readable `data.error_type`:
//! `invalid_argument` (with the argument's name) or `invalid_session`.
//!
//! Every session-scoped call acts for the client that made it ([`Owner`]): a stdio client, an
//! HTTP principal named by its token, or one HTTP MCP session. Another client's session is
//! answered exactly like one that does not exist.

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

use crate::config::{
    FUEL_RANGE, Flavor, MAX_TIMEOUT, MEMORY_RANGE, SessionLimits, SupervisorConfig, TTL_RANGE,
};
use crate::executions::Executions;
use crate::guidance;
use crate::packages;
use crate::report::ExecuteCodeResult;
use crate::runtimes::{RUNTIMES, Runtimes};
use crate::session::{CreateError, Owner, Session, SessionTable, Work, valid_session_id};
use crate::tools;

/// The shortest timeout an execution may ask for: less could not even start an interpreter.
const MIN_TIMEOUT_SECS: f64 = 0.1;

/// Largest `context` accepted by `get_execution_guidance`.
const MAX_CONTEXT_BYTES: usize = 64 << 10;

/// Longest `execution_id` accepted (ours are 37 characters).
const MAX_EXECUTION_ID_LEN: usize = 128;

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
    /// Wall-clock limit in seconds, from 0.1 to 300 (default: the session's, 30 for small). On
    /// timeout the code is interrupted and the session keeps its state when the interpreter
    /// allows.
    #[serde(default)]
    #[schemars(range(min = 0.1, max = 300))]
    pub timeout: Option<f64>,
    /// Size of the session if this call creates it: small (default), medium or large.
    #[serde(default)]
    pub flavor: Option<Flavor>,
}

/// Arguments of `execute_command`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExecuteCommandArgs {
    /// A shell command line over the session's files: pipes, &&, ||, ;, redirects, quotes,
    /// globs, $VARS, cd. Built-ins: ls cat echo pwd cd mkdir rm cp mv touch head tail wc grep
    /// find sort uniq sed tr cut du env tee ...; `python FILE|-c CODE` and `node FILE|-e CODE`
    /// run in the session's interpreter; `pip install NAME` installs a package.
    pub command: String,
    /// Session whose files (and interpreter) to use. Default: your default session for
    /// `language`.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Which default session to use without session_id: "python" (default) or "javascript".
    #[serde(default)]
    pub language: Option<LanguageArg>,
    /// Wall-clock limit in seconds, from 0.1 to 300 (default: the session's).
    #[serde(default)]
    #[schemars(range(min = 0.1, max = 300))]
    pub timeout: Option<f64>,
}

/// Arguments of the tools that act on an existing session.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SessionRefArgs {
    /// The session. Default: your default session for `language` (python first).
    #[serde(default)]
    pub session_id: Option<String>,
    /// Which default session to use without session_id.
    #[serde(default)]
    pub language: Option<LanguageArg>,
}

/// Arguments of `get_workspace_info`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WorkspaceInfoArgs {
    /// The session. Default: your default session for `language` (python first).
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub language: Option<LanguageArg>,
    /// Also list installed packages (/app/.packages, /app/node_modules).
    #[serde(default)]
    pub include_system_files: Option<bool>,
}

/// Arguments of `install_package`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct InstallPackageArgs {
    /// Distribution name as on PyPI (e.g. "tabulate"), or an npm package name for JavaScript.
    /// A name only: paths, URLs, extras, markers and options are refused.
    pub package: String,
    /// Exact version, e.g. "0.9.0" (or "==0.9.0"). Default: the newest pure-Python release.
    #[serde(default)]
    pub version: Option<String>,
    /// Session to install into. Default: your default session for `language`.
    #[serde(default)]
    pub session_id: Option<String>,
    /// "python" (default) or "javascript", when session_id is not given.
    #[serde(default)]
    pub language: Option<LanguageArg>,
}

/// Arguments of `list_available_packages`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListPackagesArgs {
    /// "python" or "javascript"; default both.
    #[serde(default)]
    pub language: Option<LanguageArg>,
    /// Also list what this session installed.
    #[serde(default)]
    pub session_id: Option<String>,
}

/// Arguments of `get_execution_guidance`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GuidanceArgs {
    /// The code you are about to run (it is analysed, not executed).
    pub code: String,
    pub language: LanguageArg,
    /// What the code is for, or what went wrong last time (optional).
    #[serde(default)]
    pub context: Option<String>,
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
    /// Fuel per execution (CPU allowance; about 10^10 per second), from 10^6 to 5×10^12.
    /// Overrides the flavor's.
    #[serde(default)]
    #[schemars(range(min = 1_000_000, max = 5_000_000_000_000_u64))]
    pub fuel_budget: Option<u64>,
    /// Interpreter memory cap in bytes, from 33554432 (32 MiB) to 4294967296 (4 GiB). Overrides
    /// the flavor's.
    #[serde(default)]
    #[schemars(range(min = 33_554_432, max = 4_294_967_296_u64))]
    pub memory_bytes: Option<u64>,
    /// Default timeout in seconds for this session's executions, from 0.1 to 300.
    #[serde(default)]
    #[schemars(range(min = 0.1, max = 300))]
    pub timeout: Option<f64>,
    /// Idle time in seconds before the session and its files are removed, from 1 to 2592000
    /// (30 days; default 86400).
    #[serde(default)]
    #[schemars(range(min = 1, max = 2_592_000))]
    pub ttl_seconds: Option<u64>,
    /// Save variables that serialise (Python: pickle; JavaScript: JSON, e.g. `_state`) after
    /// each successful call and restore them automatically if the interpreter is restarted.
    #[serde(default)]
    pub auto_persist_globals: Option<bool>,
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
    /// The largest single file.
    pub disk_file_bytes: u64,
    /// Most bytes /app and /tmp may hold together (the disk quota).
    pub disk_quota_bytes: u64,
    /// Most files, directories and links /app and /tmp may hold together.
    pub disk_quota_files: u64,
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
    sources: packages::Sources,
    /// Measured first-import fuel (stdlib and vendored), for guidance.
    imports: Arc<guidance::ImportFuelTable>,
    default_sessions: Arc<Mutex<HashMap<Language, String>>>,
    /// Who this connection acts for, unless a request names an HTTP principal.
    connection_owner: Owner,
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

/// A bad argument: JSON-RPC invalid params, with `data.error_type = "invalid_argument"` and the
/// argument's name.
pub(crate) fn invalid_argument(argument: &str, message: impl Into<String>) -> McpError {
    McpError::invalid_params(
        message.into(),
        Some(json!({ "error_type": "invalid_argument", "argument": argument })),
    )
}

/// A session this client does not have: never created, expired, or another client's (which
/// is answered exactly like one that never existed).
fn no_session(id: &str, expired: bool) -> McpError {
    let message = if expired {
        format!(
            "session {id:?} expired after being idle and was removed with its files; start a new one with create_session, or call execute_code without session_id"
        )
    } else {
        format!("no session {id:?}; execute_code creates one on first use")
    };
    McpError::invalid_params(
        message,
        Some(json!({ "error_type": "invalid_session", "session_id": id })),
    )
}

fn check_session_id(id: &str) -> Result<(), McpError> {
    if valid_session_id(id) {
        return Ok(());
    }
    Err(invalid_argument(
        "session_id",
        format!(
            "invalid session_id {}: use 1-64 letters, digits, '-' or '_', starting with a letter or digit",
            packages::names::quote(id)
        ),
    ))
}

fn timeout_arg(seconds: Option<f64>, default: Duration) -> Result<Duration, McpError> {
    match seconds {
        None => Ok(default),
        Some(s) if s.is_finite() && s >= MIN_TIMEOUT_SECS && s <= MAX_TIMEOUT.as_secs_f64() => {
            Ok(Duration::from_secs_f64(s))
        }
        Some(s) => Err(invalid_argument(
            "timeout",
            format!(
                "timeout must be from {MIN_TIMEOUT_SECS} to {} seconds, got {s}",
                MAX_TIMEOUT.as_secs()
            ),
        )),
    }
}

/// `value` when it lies in `range`, else an `invalid_argument` error naming the bounds.
fn bounded(
    argument: &str,
    value: u64,
    range: &std::ops::RangeInclusive<u64>,
    unit: &str,
) -> Result<u64, McpError> {
    if range.contains(&value) {
        return Ok(value);
    }
    Err(invalid_argument(
        argument,
        format!(
            "{argument} must be between {} and {}{unit}, got {value}",
            range.start(),
            range.end()
        ),
    ))
}

/// `text` when it is at most `max` bytes, else an `invalid_argument` error.
fn bounded_text<'a>(argument: &str, text: &'a str, max: usize) -> Result<&'a str, McpError> {
    if text.len() <= max {
        return Ok(text);
    }
    Err(invalid_argument(
        argument,
        format!("{argument} is {} bytes, the limit is {max}", text.len()),
    ))
}

/// What a session's files in /app and /tmp hold together, counted as its disk quota counts
/// them, off the async threads (the count is bounded: it stops at twice the entry quota).
async fn disk_usage(session: &Arc<Session>) -> sandbox_protocol::confined::Usage {
    let session = session.clone();
    let max = session.limits.disk_quota_files.saturating_mul(2);
    tokio::task::spawn_blocking(move || crate::workspace::usage(&session.files, max))
        .await
        .unwrap_or_default()
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
        connection_owner: Owner,
    ) -> Self {
        let data_dir = config.data_dir.clone();
        Self {
            config,
            sessions,
            runtimes,
            executions,
            sources: packages::Sources::from_env(),
            imports: Arc::new(guidance::ImportFuelTable::load(data_dir.as_deref())),
            default_sessions: Arc::default(),
            connection_owner,
        }
    }

    /// Who a request acts for: the HTTP principal its token names, else this connection.
    fn owner(&self, ctx: &RequestContext<RoleServer>) -> Owner {
        crate::http::principal_of(&ctx.extensions).map_or_else(
            || self.connection_owner.clone(),
            |name| Owner::principal(&name),
        )
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
                disk_quota_bytes: session.limits.disk_quota_bytes,
                disk_quota_files: session.limits.disk_quota_files,
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
        owner: &Owner,
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
        if let Some(session) = self.sessions.get(owner, &id) {
            if session.language != language {
                return Err(invalid_argument(
                    "language",
                    format!(
                        "session {id:?} runs {}, not {language}; use language {:?} or another session_id",
                        session.language,
                        session.language.as_str()
                    ),
                )
                .into());
            }
            return Ok(session);
        }
        if self.sessions.expired(owner, &id) {
            return Err(Refusal::Tool {
                error_type: "invalid_session",
                message: format!(
                    "session {id:?} expired after being idle and was removed with its files; start a new one with create_session, or call execute_code without session_id"
                ),
                session_id: id,
            });
        }
        match self.sessions.create(
            owner,
            &id,
            language,
            self.limits_for(flavor),
            self.config.session_ttl,
        ) {
            Ok(session) => Ok(session),
            // Two calls raced to create it: use the winner's.
            Err(CreateError::Exists(_)) => self
                .sessions
                .get(owner, &id)
                .ok_or_else(|| no_session(&id, false).into()),
            Err(CreateError::ResourcesExhausted(usage)) => Err(Refusal::Tool {
                error_type: "resources_exhausted",
                message: format!(
                    "{usage}; wait for idle sessions to expire and retry, or destroy_session one you no longer need"
                ),
                session_id: id,
            }),
            Err(e @ CreateError::ClientLimit { .. }) => Err(Refusal::Tool {
                error_type: "resources_exhausted",
                message: format!(
                    "{e} ({}); destroy_session one you no longer need, or reuse one with session_id",
                    self.config.principal_max_sessions
                ),
                session_id: id,
            }),
            Err(e) => Err(Refusal::Invalid(McpError::internal_error(
                e.to_string(),
                None,
            ))),
        }
    }

    /// The answer to a code or command call whose session could not be had: a protocol error
    /// for a bad argument, or a failed result the model can act on.
    fn refused(&self, refusal: Refusal, language: Language) -> Result<CallToolResult, McpError> {
        match refusal {
            Refusal::Invalid(e) => Err(e),
            Refusal::Tool {
                error_type,
                message,
                session_id,
            } => {
                let mut result =
                    ExecuteCodeResult::refused(&session_id, language, error_type, message);
                self.teach(
                    &mut result,
                    language,
                    "",
                    0,
                    self.config.defaults.timeout,
                    None,
                );
                Ok(tool_result(to_value(&result)?, true, result.to_text()))
            }
        }
    }

    /// Installs a package into a session and makes its running interpreter see it.
    async fn install(
        &self,
        session: &Arc<Session>,
        package: &str,
        version: Option<&str>,
        ctx: &RequestContext<RoleServer>,
    ) -> (bool, serde_json::Value) {
        let refused = |r: packages::InstallRefusal| {
            (
                false,
                json!({
                    "success": false,
                    "package": package,
                    "session_id": session.id,
                    "error_type": r.error_type,
                    "error_message": r.message,
                    "actionable_guidance": r.alternatives,
                }),
            )
        };
        let staging = match self.sessions.dirs().staging() {
            Ok(staging) => staging,
            Err(e) => {
                return refused(packages::InstallRefusal {
                    error_type: "system_error",
                    message: format!("cannot create a staging directory: {e}"),
                    alternatives: vec![],
                });
            }
        };
        if session.language == Language::JavaScript {
            return match packages::install_js(
                package,
                self.config.data_dir.as_deref(),
                &session.files.app,
                &staging,
                &self.sources,
            ) {
                Ok(mut value) => {
                    value["session_id"] = json!(session.id);
                    (true, value)
                }
                Err(r) => refused(r),
            };
        }
        if let Err(refusal) = packages::python_requirement(package, version) {
            return refused(refusal);
        }
        let vendored = packages::vendored_python(self.config.data_dir.as_deref());
        let wanted = packages::normalize(package);
        if let Some((import, v)) = vendored
            .iter()
            .find(|(_, v)| packages::normalize(&v.package) == wanted)
        {
            return (
                true,
                json!({
                    "success": true,
                    "package": package,
                    "session_id": session.id,
                    "installed_version": v.version.clone().unwrap_or_else(|| "vendored".into()),
                    "dependencies_installed": [],
                    "import_names": [import],
                    "message": format!("{package} is vendored (read-only under /data): `import {import}` works in every session"),
                }),
            );
        }
        match packages::install_python(
            package,
            version,
            &session.files.app,
            &staging,
            &self.sources,
        )
        .await
        {
            Ok(installed) => {
                if session.has_worker() {
                    // The running interpreter cached that /app/.packages had nothing.
                    let _ = self
                        .run_work(
                            session,
                            Work::Code(packages::PYTHON_REFRESH.into()),
                            Duration::from_secs(10),
                            ctx,
                        )
                        .await;
                }
                (
                    true,
                    json!({
                        "success": true,
                        "package": installed.package,
                        "session_id": session.id,
                        "installed_version": installed.version,
                        "dependencies_installed": installed.dependencies,
                        "import_names": installed.import_names,
                        "location": "/app/.packages",
                        "message": "importable in the next execute_code, no sys.path changes needed",
                    }),
                )
            }
            Err(r) => refused(r),
        }
    }

    /// The language a session-scoped call means: the session's own when it exists, else the
    /// one asked for, else Python.
    fn language_for(
        &self,
        owner: &Owner,
        session_id: Option<&str>,
        asked: Option<LanguageArg>,
    ) -> Language {
        session_id
            .and_then(|id| self.sessions.get(owner, id))
            .map(|s| s.language)
            .or(asked.map(Language::from))
            .unwrap_or(Language::Python)
    }

    /// An existing session for the tools that inspect or clear one.
    fn existing_session(
        &self,
        owner: &Owner,
        id: Option<&str>,
        language: Option<LanguageArg>,
    ) -> Result<Arc<Session>, McpError> {
        if let Some(id) = id {
            check_session_id(id)?;
            return self
                .sessions
                .get(owner, id)
                .ok_or_else(|| no_session(id, self.sessions.expired(owner, id)));
        }
        let defaults = self
            .default_sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let order = match language {
            Some(l) => vec![Language::from(l)],
            None => vec![Language::Python, Language::JavaScript],
        };
        order
            .into_iter()
            .find_map(|l| defaults.get(&l).and_then(|id| self.sessions.get(owner, id)))
            .ok_or_else(|| {
                McpError::invalid_params(
                    "no default session yet: run execute_code first, or pass session_id",
                    Some(json!({ "error_type": "invalid_session" })),
                )
            })
    }

    /// Runs `work` in `session` as a registered execution (cancellable by id, reported through
    /// progress notifications) and builds the client's result.
    async fn run_work(
        &self,
        session: &Arc<Session>,
        work: Work,
        timeout: Duration,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<ExecuteCodeResult, McpError> {
        let work_text = match &work {
            Work::Code(code) | Work::Command(code) => Some(code.clone()),
            Work::Inspect => None,
        };
        let execution_id = format!("exec-{}", uuid::Uuid::new_v4().simple());
        let owner = &session.owner;
        if owner.capped()
            && self.executions.in_flight(owner) >= self.config.principal_max_executions
        {
            let mut result = ExecuteCodeResult::refused(
                &session.id,
                session.language,
                "resources_exhausted",
                format!(
                    "this client already has {} executions running or queued, the most one client may have at once; wait for one to finish (or cancel_execution it) and retry",
                    self.config.principal_max_executions
                ),
            );
            self.teach(&mut result, session.language, "", 0, timeout, None);
            return Ok(result);
        }
        let cancel =
            self.executions
                .register(&execution_id, (owner, session.key(), &session.id), &ctx.ct);
        let progress = self.report_progress(ctx, &execution_id);
        let executions = self.executions.clone();
        let started = session
            .execute(
                &self.config,
                &self.runtimes,
                execution_id.clone(),
                work,
                timeout,
                &cancel,
                || executions.mark_running(&execution_id),
            )
            .await;
        if let Some(progress) = progress {
            progress.abort();
        }
        let code = match &work_text {
            Some(text) => text.as_str(),
            None => "",
        };
        let mut result = match started {
            Ok(execution) => ExecuteCodeResult::new(session, execution),
            Err(e) => ExecuteCodeResult::refused(
                &session.id,
                session.language,
                "system_error",
                e.to_string(),
            ),
        };
        self.executions.finish(
            &execution_id,
            result.error_type.as_deref().unwrap_or("completed"),
        );
        let disk = if result.error_type.as_deref() == Some("disk_quota") {
            let usage = disk_usage(session).await;
            Some(guidance::DiskFacts {
                quota_bytes: session.limits.disk_quota_bytes,
                quota_files: session.limits.disk_quota_files,
                used_bytes: usage.bytes,
                used_files: usage.entries,
                file_cap_bytes: session.limits.disk_bytes,
            })
        } else {
            None
        };
        self.teach(
            &mut result,
            session.language,
            code,
            session.limits.memory_bytes,
            timeout,
            disk,
        );
        Ok(result)
    }

    /// Adds fuel analysis to every result, and advice to failures and truncated output
    /// (`disk` quotes the session's disk quota and usage in `disk_quota` advice).
    fn teach(
        &self,
        result: &mut ExecuteCodeResult,
        language: Language,
        code: &str,
        memory_cap: u64,
        timeout: Duration,
        disk: Option<guidance::DiskFacts>,
    ) {
        if result.fuel_budget > 0 {
            result.fuel_analysis = Some(guidance::fuel_analysis(
                result.fuel_consumed,
                result.fuel_budget,
                code,
                language,
                &self.imports,
            ));
        }
        let truncated = result.stdout_truncated || result.stderr_truncated;
        let error_type = match (&result.error_type, truncated) {
            (Some(kind), _) => kind.clone(),
            (None, true) => "output_limit".to_owned(),
            (None, false) => return,
        };
        let mut facts = guidance::ErrorFacts::new(language, &error_type, code, &result.session_id);
        facts.error_name = result.error_name.as_deref();
        facts.error_message = result.error_message.as_deref();
        facts.stderr = &result.stderr;
        facts.fuel_consumed = result.fuel_consumed;
        facts.fuel_budget = result.fuel_budget;
        facts.memory_bytes = result.memory_bytes;
        facts.memory_cap = memory_cap;
        facts.timeout_secs = timeout.as_secs_f64();
        facts.stdout_truncated = result.stdout_truncated;
        facts.state_lost = result.state_after_restart.as_deref() == Some("lost");
        facts.disk = disk;
        let advice = guidance::advise_with(&facts, &self.imports);
        result.with_advice(advice);
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
                let status = executions.status(&execution_id).unwrap_or("finishing");
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
        description = tools::EXECUTE_CODE,
        output_schema = schema_for_output::<ExecuteCodeResult>(),
        annotations(title = "Execute code", read_only_hint = false, destructive_hint = false, open_world_hint = false)
    )]
    async fn execute_code(
        &self,
        Parameters(args): Parameters<ExecuteCodeArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        if args.code.trim().is_empty() {
            return Err(invalid_argument("code", "code must not be empty"));
        }
        // Bigger code is almost certainly data that belongs in a file under /app.
        let max = self.config.max_code_bytes;
        if args.code.len() > max {
            return Err(invalid_argument(
                "code",
                format!(
                    "code is {} bytes, the limit is {max}; write large data to a file under /app in smaller pieces",
                    args.code.len()
                ),
            ));
        }
        let language = Language::from(args.language);
        let owner = self.owner(&ctx);
        let timeout = args
            .timeout
            .map(|t| timeout_arg(Some(t), Duration::ZERO))
            .transpose()?;
        let session =
            match self.resolve_session(&owner, args.session_id.as_deref(), language, args.flavor) {
                Ok(session) => session,
                Err(refusal) => return self.refused(refusal, language),
            };
        let timeout = timeout.unwrap_or(session.limits.timeout);
        let started = std::time::SystemTime::now();
        let result = self
            .run_work(&session, Work::Code(args.code), timeout, &ctx)
            .await?;
        let mut reply = tool_result(to_value(&result)?, !result.success, result.to_text());
        // Images the code wrote to /app come back as image content.
        reply
            .content
            .extend(crate::resources::new_images(&session.files.app, started));
        Ok(reply)
    }

    #[tool(
        description = tools::CANCEL_EXECUTION,
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
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let id = bounded_text("execution_id", &args.execution_id, MAX_EXECUTION_ID_LEN)?;
        let owner = self.owner(&ctx);
        if self.executions.cancel(&owner, id) {
            // Wait for the execution to answer its caller, so the status is final.
            let deadline =
                tokio::time::Instant::now() + crate::worker::KILL_GRACE + Duration::from_secs(1);
            while self.executions.is_live(id) && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let status = self
                .executions
                .outcome(&owner, id)
                .unwrap_or_else(|| "cancelling".into());
            return Ok(CallToolResult::structured(json!({
                "cancelled": true,
                "execution_id": id,
                "status": status,
            })));
        }
        match self.executions.outcome(&owner, id) {
            Some(outcome) => Ok(CallToolResult::structured(json!({
                "cancelled": false,
                "execution_id": id,
                "status": "already_finished",
                "outcome": outcome,
            }))),
            None => Err(invalid_argument(
                "execution_id",
                format!(
                    "no execution {} is running or recently finished; get_workspace_info lists running executions",
                    packages::names::quote(id)
                ),
            )),
        }
    }

    #[tool(
        description = tools::CREATE_SESSION,
        output_schema = schema_for_output::<SessionInfo>(),
        annotations(title = "Create session", read_only_hint = false, destructive_hint = false, open_world_hint = false)
    )]
    async fn create_session(
        &self,
        Parameters(args): Parameters<CreateSessionArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let owner = self.owner(&ctx);
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
            limits.fuel = bounded("fuel_budget", fuel, &FUEL_RANGE, "")?;
        }
        if let Some(memory) = args.memory_bytes {
            limits.memory_bytes = bounded(
                "memory_bytes",
                memory,
                &MEMORY_RANGE,
                " bytes (32 MiB to 4 GiB)",
            )?;
        }
        limits.timeout = timeout_arg(args.timeout, limits.timeout)?;
        limits.auto_persist_globals = args.auto_persist_globals.unwrap_or(false);
        let ttl = match args.ttl_seconds {
            Some(secs) => Duration::from_secs(bounded(
                "ttl_seconds",
                secs,
                &TTL_RANGE,
                " seconds (30 days)",
            )?),
            None => self.config.explicit_session_ttl,
        };
        let language = Language::from(args.language);
        match self.sessions.create(&owner, &id, language, limits, ttl) {
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
            Err(CreateError::Exists(id)) => Err(invalid_argument(
                "session_id",
                format!(
                    "session {id:?} already exists; use it with execute_code, or destroy_session it first"
                ),
            )),
            Err(e @ CreateError::ClientLimit { .. }) => {
                let message = format!(
                    "{e} ({}); destroy_session one you no longer need",
                    self.config.principal_max_sessions
                );
                let value = json!({
                    "success": false,
                    "error_type": "resources_exhausted",
                    "error_message": message,
                    "actionable_guidance": [
                        "destroy_session a session you no longer need",
                        "reuse an existing session by passing its session_id to execute_code",
                    ],
                });
                Ok(tool_result(
                    value,
                    true,
                    format!("ERROR resources_exhausted: {message}"),
                ))
            }
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
            Err(other) => Err(McpError::internal_error(other.to_string(), None)),
        }
    }

    #[tool(
        description = tools::DESTROY_SESSION,
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
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        check_session_id(&args.session_id)?;
        let owner = self.owner(&ctx);
        match self.sessions.destroy(&owner, &args.session_id).await {
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
            None => Err(no_session(
                &args.session_id,
                self.sessions.expired(&owner, &args.session_id),
            )),
        }
    }

    #[tool(
        description = tools::EXECUTE_COMMAND,
        output_schema = schema_for_output::<ExecuteCodeResult>(),
        annotations(title = "Execute command", read_only_hint = false, destructive_hint = true, open_world_hint = false)
    )]
    async fn execute_command(
        &self,
        Parameters(args): Parameters<ExecuteCommandArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        if args.command.trim().is_empty() {
            return Err(invalid_argument("command", "command must not be empty"));
        }
        bounded_text("command", &args.command, self.config.max_code_bytes)?;
        let timeout = args
            .timeout
            .map(|t| timeout_arg(Some(t), Duration::ZERO))
            .transpose()?;
        let owner = self.owner(&ctx);
        let language = self.language_for(&owner, args.session_id.as_deref(), args.language);
        let session = match self.resolve_session(&owner, args.session_id.as_deref(), language, None)
        {
            Ok(session) => session,
            Err(refusal) => return self.refused(refusal, language),
        };
        if let Some(requirements) = pip_install_args(&args.command) {
            return Ok(self.pip_install(&session, requirements, &ctx).await);
        }
        let timeout = timeout.unwrap_or(session.limits.timeout);
        let result = self
            .run_work(&session, Work::Command(args.command), timeout, &ctx)
            .await?;
        Ok(tool_result(
            to_value(&result)?,
            !result.success,
            result.to_text(),
        ))
    }

    #[tool(
        description = tools::GET_WORKSPACE_INFO,
        annotations(
            title = "Workspace info",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn get_workspace_info(
        &self,
        Parameters(args): Parameters<WorkspaceInfoArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let owner = self.owner(&ctx);
        let session = self.existing_session(&owner, args.session_id.as_deref(), args.language)?;
        let running = self.executions.list(session.key());
        // Only ask a live, idle interpreter: never start one, never queue behind user code.
        let (state, memory_bytes, note) = if !session.has_worker() {
            (
                None,
                None,
                Some("the interpreter has not started yet (or was reset): no variables"),
            )
        } else if !running.is_empty() {
            (
                None,
                None,
                Some("an execution is running: variables are shown when the session is idle"),
            )
        } else {
            let inspected = self
                .run_work(&session, Work::Inspect, Duration::from_secs(10), &ctx)
                .await?;
            let state = inspected
                .result
                .as_deref()
                .and_then(|r| serde_json::from_str::<serde_json::Value>(r).ok());
            (state, Some(inspected.memory_bytes), None)
        };
        let listing = crate::workspace::list(
            &session.files.app,
            args.include_system_files.unwrap_or(false),
        );
        let state = state.unwrap_or_else(|| json!({}));
        let info = Self::session_info(&session);
        let usage = disk_usage(&session).await;
        let value = json!({
            "session_id": session.id,
            "language": session.language.as_str(),
            "created_at": info.created_at,
            "expires_at": info.expires_at,
            "limits": info.limits,
            "variables": state.get("variables").cloned().unwrap_or(json!([])),
            "modules": state.get("modules").cloned().unwrap_or(json!([])),
            "imported_modules": state.get("imported").cloned().unwrap_or(json!([])),
            "files": listing.files,
            "files_total_bytes": listing.total_bytes,
            "files_truncated": listing.truncated,
            "memory_bytes": memory_bytes,
            "disk_usage": {
                "covers": "/app and /tmp together",
                "bytes_used": usage.bytes,
                "bytes_quota": session.limits.disk_quota_bytes,
                "entries_used": usage.entries,
                "entries_quota": session.limits.disk_quota_files,
                "exact": usage.complete,
            },
            "executions_run": session.executions.load(std::sync::atomic::Ordering::Relaxed),
            "fuel_used_total": session.fuel_used.load(std::sync::atomic::Ordering::Relaxed),
            "running_executions": running,
            "note": note,
        });
        let text = format!(
            "session {} ({}): {} variables, {} files ({} bytes), {} running executions; disk quota: {} of {} bytes and {} of {} files, directories and links used (/app and /tmp)",
            session.id,
            session.language,
            value["variables"].as_array().map_or(0, Vec::len),
            listing.files.len(),
            listing.total_bytes,
            value["running_executions"].as_array().map_or(0, Vec::len),
            usage.bytes,
            session.limits.disk_quota_bytes,
            usage.entries,
            session.limits.disk_quota_files,
        );
        Ok(tool_result(value, false, text))
    }

    #[tool(
        description = tools::RESET_WORKSPACE,
        annotations(
            title = "Reset workspace",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn reset_workspace(
        &self,
        Parameters(args): Parameters<SessionRefArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let owner = self.owner(&ctx);
        let session = self.existing_session(&owner, args.session_id.as_deref(), args.language)?;
        let deleted = match session.reset().await {
            Ok(deleted) => deleted,
            Err(e) => {
                tracing::error!(session = %session.id, error = %e, "reset could not delete everything");
                let message = format!(
                    "the interpreter state was cleared, but some files could not be deleted ({e}); the session is usable"
                );
                return Ok(tool_result(
                    json!({
                        "session_id": session.id,
                        "success": false,
                        "error_type": "system_error",
                        "error_message": message,
                        "actionable_guidance": ["retry reset_workspace", "destroy_session and start a new session"],
                    }),
                    true,
                    message,
                ));
            }
        };
        let paths: Vec<&str> = deleted.files.iter().map(|f| f.path.as_str()).collect();
        let text = format!(
            "reset session {}: interpreter state cleared, {} files/directories deleted from /app",
            session.id,
            paths.len()
        );
        Ok(tool_result(
            json!({
                "session_id": session.id,
                "state_cleared": true,
                "deleted_files": paths,
                "deleted_count": paths.len(),
                "deleted_bytes": deleted.total_bytes,
                "message": "variables, functions and imports are gone; /app and /tmp are empty; the session id is unchanged",
            }),
            false,
            text,
        ))
    }

    #[tool(
        description = tools::INSTALL_PACKAGE,
        annotations(
            title = "Install package",
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = true
        )
    )]
    async fn install_package(
        &self,
        Parameters(args): Parameters<InstallPackageArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        bounded_text("package", &args.package, packages::names::MAX_NAME_LEN * 4)?;
        if let Some(version) = &args.version {
            bounded_text("version", version, packages::names::MAX_VERSION_LEN * 4)?;
        }
        let owner = self.owner(&ctx);
        let language = self.language_for(&owner, args.session_id.as_deref(), args.language);
        let session = match self.resolve_session(&owner, args.session_id.as_deref(), language, None)
        {
            Ok(session) => session,
            Err(Refusal::Invalid(e)) => return Err(e),
            Err(Refusal::Tool {
                error_type,
                message,
                ..
            }) => {
                return Ok(tool_result(
                    json!({ "success": false, "error_type": error_type, "error_message": message }),
                    true,
                    message,
                ));
            }
        };
        let (ok, value) = self
            .install(&session, &args.package, args.version.as_deref(), &ctx)
            .await;
        let text = value["message"]
            .as_str()
            .or(value["error_message"].as_str())
            .unwrap_or_default()
            .to_owned();
        Ok(tool_result(value, !ok, text))
    }

    #[tool(
        description = tools::LIST_AVAILABLE_PACKAGES,
        annotations(
            title = "List available packages",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn list_available_packages(
        &self,
        Parameters(args): Parameters<ListPackagesArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let language = args.language.map(Language::from);
        let mut value = json!({});
        if language != Some(Language::JavaScript) {
            let vendored = packages::vendored_python(self.config.data_dir.as_deref());
            let mut categories: std::collections::BTreeMap<String, Vec<serde_json::Value>> =
                Default::default();
            for (import, v) in &vendored {
                let category = v.category.clone().unwrap_or_else(|| "other".into());
                categories.entry(category).or_default().push(json!({
                    "import": import,
                    "package": v.package,
                    "version": v.version,
                    "first_import_fuel": v.fuel,
                    "first_import_ms": v.ms,
                    "needs_bigger_fuel_budget": v.over_default_budget.unwrap_or(false),
                }));
            }
            value["python"] = json!({
                "location": "/data/site-packages (read-only, already on sys.path)",
                "import_pattern": "import name  (e.g. import yaml, from openpyxl import Workbook)",
                "default_fuel_budget": self.config.defaults.fuel,
                "by_category": categories,
                "not_available": "packages with compiled extensions (numpy, pandas, scipy, lxml, pillow, ...); there is no network",
            });
        }
        if language != Some(Language::Python) {
            value["javascript"] = serde_json::from_str(packages::JS_CATALOG).unwrap_or(json!({}));
        }
        if let Some(id) = &args.session_id {
            check_session_id(id)?;
            let owner = self.owner(&ctx);
            let session = self
                .sessions
                .get(&owner, id)
                .ok_or_else(|| no_session(id, self.sessions.expired(&owner, id)))?;
            value["installed"] = match session.language {
                Language::Python => json!(
                    packages::installed_python(&session.files.app)
                        .into_iter()
                        .map(|(dist, version)| json!({ "package": dist, "version": version }))
                        .collect::<Vec<_>>()
                ),
                Language::JavaScript => json!(packages::installed_js(&session.files.app)),
            };
        }
        let text = format!(
            "{} vendored Python imports; JavaScript: {}",
            value["python"]["by_category"].as_object().map_or(0, |c| c
                .values()
                .map(|v| v.as_array().map_or(0, Vec::len))
                .sum::<usize>()),
            value["javascript"]["packages"]
                .as_object()
                .map_or(0, serde_json::Map::len)
        );
        Ok(tool_result(value, false, text))
    }

    #[tool(
        description = tools::GET_EXECUTION_GUIDANCE,
        output_schema = schema_for_output::<guidance::ExecutionGuidance>(),
        annotations(title = "Execution guidance", read_only_hint = true, open_world_hint = false)
    )]
    async fn get_execution_guidance(
        &self,
        Parameters(args): Parameters<GuidanceArgs>,
    ) -> Result<CallToolResult, McpError> {
        bounded_text("code", &args.code, self.config.max_code_bytes)?;
        if let Some(context) = &args.context {
            bounded_text("context", context, MAX_CONTEXT_BYTES)?;
        }
        let report = guidance::analyze(
            &args.code,
            Language::from(args.language),
            args.context.as_deref(),
            &self.imports,
            self.config.defaults.fuel,
        );
        let value = to_value(&report)?;
        let text = format!(
            "patterns: {}; warnings: {}",
            value["detected_patterns"].as_array().map_or(0, Vec::len),
            value["warnings"].as_array().map_or(0, Vec::len)
        );
        Ok(tool_result(value, false, text))
    }

    #[tool(
        description = tools::LIST_RUNTIMES,
        annotations(
            title = "List runtimes",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn list_runtimes(&self) -> Result<CallToolResult, McpError> {
        let limits = &self.config.defaults;
        let vendored = packages::vendored_python(self.config.data_dir.as_deref());
        let runtimes: Vec<_> = RUNTIMES
            .iter()
            .map(|r| {
                let mut runtime = json!({
                    "name": r.name,
                    "language": r.language.as_str(),
                    "version": r.version,
                    "engine": r.engine,
                    "capabilities": r.capabilities,
                    "notes": r.notes,
                    "default_limits": limits_json(limits),
                });
                match r.language {
                    Language::Python => {
                        let mut names: Vec<String> = vendored
                            .values()
                            .map(|v| v.package.clone())
                            .filter(|p| p != "stdlib")
                            .collect();
                        names.sort();
                        names.dedup();
                        runtime["vendored_packages"] =
                            json!({ "count": names.len(), "names": names });
                    }
                    Language::JavaScript => {
                        // Modules, helpers and packages with signatures, examples and API notes
                        // (the [value, err] tuple returns).
                        runtime["library"] =
                            serde_json::from_str(packages::JS_CATALOG).unwrap_or_default();
                    }
                }
                runtime
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
                "running_executions": self.executions.count(),
                "isolation": format!(
                    "one sandbox-worker process per session: WebAssembly (Wasmtime) with fuel, epoch deadlines and a memory cap; rlimits (RLIMIT_DATA, NOFILE, FSIZE, CPU, CORE=0), no_new_privs, own process group, PDEATHSIG; {}",
                    self.config.jail.summary()
                ),
                "jail": self.config.jail.health(),
                "cgroups": self.config.cgroups.describe_public(),
                "per_client_caps": {
                    "applies_to": "HTTP clients (a named principal, or one MCP session)",
                    "max_sessions": self.config.principal_max_sessions,
                    "max_executions_in_flight": self.config.principal_max_executions,
                },
            },
        })))
    }
}

/// Options of `pip install` that change nothing here and are accepted silently.
const HARMLESS_PIP_OPTIONS: [&str; 6] = [
    "-q",
    "--quiet",
    "-U",
    "--upgrade",
    "--user",
    "--no-cache-dir",
];

/// A command line that is only `pip install ...` (`pip3`, `python -m pip` too): its
/// requirements, or why an option is refused. `None` for anything else, which goes to the shell
/// (and the shell refuses `pip install` inside a longer command line).
fn pip_install_args(command: &str) -> Option<Result<Vec<String>, String>> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let rest = match words.as_slice() {
        ["pip" | "pip3", "install", rest @ ..]
        | ["python" | "python3", "-m", "pip", "install", rest @ ..] => rest,
        _ => return None,
    };
    // Shell syntax makes it a command line, not a plain install.
    if rest.is_empty()
        || rest
            .iter()
            .any(|w| w.contains(|c| ";&|<>$`'\"(){}*?\\".contains(c)))
    {
        return None;
    }
    let mut requirements = Vec::new();
    for word in rest {
        if word.starts_with('-') {
            if HARMLESS_PIP_OPTIONS.contains(word) {
                continue;
            }
            return Some(Err(format!(
                "pip option {} is not supported: install packages by name, e.g. `pip install tabulate==0.9.0`",
                packages::names::quote(word)
            )));
        }
        requirements.push((*word).to_owned());
    }
    Some(Ok(requirements))
}

impl SandboxServer {
    /// `pip install A B==1.0` from execute_command, answered like a shell command.
    async fn pip_install(
        &self,
        session: &Arc<Session>,
        requirements: Result<Vec<String>, String>,
        ctx: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let (mut stdout, mut stderr) = (String::new(), String::new());
        let mut error_type: Option<String> = None;
        match requirements {
            Err(message) => {
                error_type = Some("invalid_package".into());
                stderr.push_str(&format!("ERROR: {message}\n"));
            }
            Ok(requirements) => {
                for requirement in &requirements {
                    let (name, version) = match requirement.split_once("==") {
                        Some((n, v)) => (n, Some(v)),
                        None => (requirement.as_str(), None),
                    };
                    let (ok, value) = self.install(session, name, version, ctx).await;
                    if ok {
                        stdout.push_str(&format!(
                            "Successfully installed {} {}\n",
                            name,
                            value["installed_version"].as_str().unwrap_or_default()
                        ));
                    } else {
                        error_type.get_or_insert_with(|| {
                            value["error_type"]
                                .as_str()
                                .unwrap_or("command_failed")
                                .to_owned()
                        });
                        stderr.push_str(&format!(
                            "ERROR: {}\n",
                            value["error_message"].as_str().unwrap_or_default()
                        ));
                    }
                }
            }
        }
        let failed = error_type.is_some();
        let mut result = ExecuteCodeResult::refused(
            &session.id,
            session.language,
            "command_failed",
            String::new(),
        );
        result.success = !failed;
        result.exit_code = i32::from(failed);
        result.error_type = error_type;
        result.error_message = failed.then(|| stderr.trim().to_owned());
        result.stdout = stdout;
        result.stderr = stderr;
        let text = result.to_text();
        tool_result(to_value(&result).unwrap_or_default(), failed, text)
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
        "disk_quota_bytes": limits.disk_quota_bytes,
        "disk_quota_files": limits.disk_quota_files,
    })
}

impl SandboxServer {
    /// The capability manifest.
    fn capabilities(&self) -> serde_json::Value {
        let flavors: serde_json::Map<String, serde_json::Value> = Flavor::ALL
            .iter()
            .map(|f| (f.name().to_owned(), limits_json(&f.limits())))
            .collect();
        json!({
            "server": { "name": "sandbox-mcp", "version": env!("CARGO_PKG_VERSION") },
            "runtimes": RUNTIMES.iter().map(|r| json!({
                "name": r.name, "version": r.version, "engine": r.engine,
                "capabilities": r.capabilities, "notes": r.notes,
            })).collect::<Vec<_>>(),
            "flavors": flavors,
            "default_limits": limits_json(&self.config.defaults),
            "filesystem": {
                "/app": "session workspace, read-write, working directory",
                "/tmp": "per-session scratch, read-write",
                "/data": "vendored packages, read-only",
                "/shared": self.config.shared_dir.as_ref().map(|(_, w)| if *w { "shared volume, read-write" } else { "shared volume, read-only" }),
            },
            "javascript_library": serde_json::from_str::<serde_json::Value>(packages::JS_CATALOG).unwrap_or_default(),
            "isolation": self.config.cgroups.describe_public(),
            "docs": guidance::DOCS.iter().map(|d| d.uri).collect::<Vec<_>>(),
        })
    }
}

#[tool_handler]
impl ServerHandler for SandboxServer {
    async fn list_resources(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, McpError> {
        let owner = self.owner(&context);
        let mut list = crate::resources::static_resources();
        let defaults: Vec<String> = self
            .default_sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        for id in defaults {
            let Some(session) = self.sessions.get(&owner, &id) else {
                continue;
            };
            let listing = crate::workspace::list(&session.files.app, false);
            list.extend(
                listing
                    .files
                    .iter()
                    .filter(|f| f.kind == "file")
                    .take(100)
                    .map(|f| {
                        rmcp::model::Resource::new(
                            crate::resources::file_uri(&id, &f.path),
                            f.path.clone(),
                        )
                        .with_description(format!("/app/{} in session {id}", f.path))
                    }),
            );
        }
        Ok(rmcp::model::ListResourcesResult::with_all_items(list))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, McpError> {
        Ok(rmcp::model::ListResourceTemplatesResult::with_all_items(
            crate::resources::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, McpError> {
        let uri = request.uri.as_str();
        let contents = if uri == crate::resources::CAPABILITIES {
            rmcp::model::ResourceContents::text(self.capabilities().to_string(), uri)
                .with_mime_type("application/json")
        } else if let Some(doc) = guidance::doc(uri) {
            rmcp::model::ResourceContents::text(doc.markdown, uri).with_mime_type("text/markdown")
        } else if let Some((id, relative)) = crate::resources::parse_file_uri(uri) {
            // Another client's session reads exactly like one that does not exist.
            let session = self
                .sessions
                .get(&self.owner(&context), id)
                .ok_or_else(|| McpError::resource_not_found(format!("no session {id:?}"), None))?;
            crate::resources::read_file(&session.files.app, &relative, uri)
                .map_err(|message| McpError::resource_not_found(message, None))?
        } else {
            return Err(McpError::resource_not_found(
                format!("unknown resource {uri}"),
                None,
            ));
        };
        Ok(rmcp::model::ReadResourceResult::new(vec![contents]).into())
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new(
            "sandbox-mcp",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(INSTRUCTIONS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every number a client can send has documented bounds in the schema the client sees
    /// (which the guard enforces), and every tool's description is the one in `tools.rs`.
    #[test]
    fn every_numeric_argument_has_bounds() {
        let tools = SandboxServer::tool_router().list_all();
        assert_eq!(tools.len(), 11);
        let mut numeric = Vec::new();
        for tool in &tools {
            let properties = tool.input_schema["properties"].as_object();
            for (name, schema) in properties.into_iter().flatten() {
                let types = schema["type"].to_string();
                if types.contains("integer") || types.contains("number") {
                    numeric.push(format!("{}.{name}", tool.name));
                    for key in ["minimum", "maximum"] {
                        assert!(
                            schema[key].is_number(),
                            "{}.{name} has no {key}: {schema}",
                            tool.name
                        );
                    }
                    let description = schema["description"].as_str().unwrap_or_default();
                    assert!(
                        description.contains(" to "),
                        "{}.{name}: the description states the bounds: {description}",
                        tool.name
                    );
                }
            }
        }
        numeric.sort();
        assert_eq!(
            numeric,
            [
                "create_session.fuel_budget",
                "create_session.memory_bytes",
                "create_session.timeout",
                "create_session.ttl_seconds",
                "execute_code.timeout",
                "execute_command.timeout",
            ]
        );
    }
}
