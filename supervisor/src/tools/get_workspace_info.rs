//! `get_workspace_info`: describes a session without running user code: its interpreter's
//! variables and modules (asked only of a live, idle interpreter), its files in /app, its
//! limits and disk quota use, and its executions in flight.

use std::sync::atomic::Ordering;
use std::time::Duration;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::args::SessionSelector;
use super::reply;
use super::session_info::{LimitsInfo, SessionInfo};
use crate::engine::disk_usage;
use crate::executions::ExecutionInfo;
use crate::server::SandboxServer;
use crate::session::{Checkpoint, Session, Work};
use crate::workspace::FileEntry;

/// What the model reads about `get_workspace_info`.
pub const DESCRIPTION: &str = "Describe a session without running code: variables, modules, files in /app, checkpoints, limits, disk use, running executions, expiry.";

/// How long the interpreter may take to describe its state.
const INSPECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Arguments of `get_workspace_info`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WorkspaceInfoArgs {
    #[serde(flatten)]
    pub session: SessionSelector,
    /// Also list installed packages.
    #[serde(default)]
    pub include_system_files: Option<bool>,
}

/// What `get_workspace_info` answers.
#[derive(Debug, Serialize)]
struct WorkspaceInfo<'a> {
    session_id: &'a str,
    language: &'static str,
    runtime: &'static str,
    created_at: String,
    expires_at: String,
    limits: LimitsInfo,
    /// The interpreter's own description (name, type, short repr), `[]` when not asked.
    variables: Value,
    modules: Value,
    imported_modules: Value,
    files: &'a [FileEntry],
    files_total_bytes: u64,
    files_truncated: bool,
    /// The interpreter's linear memory, when it was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    memory_bytes: Option<u64>,
    disk_usage: DiskUsage,
    executions_run: u64,
    fuel_used_total: u64,
    running_executions: Vec<ExecutionInfo>,
    /// Saved states to restore_session or fork_session from, oldest first.
    checkpoints: Vec<Checkpoint>,
    /// Why variables are not shown, when they are not.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'static str>,
}

/// The session's disk quota and what it uses.
#[derive(Debug, Serialize)]
struct DiskUsage {
    covers: &'static str,
    bytes_used: u64,
    bytes_quota: u64,
    entries_used: u64,
    entries_quota: u64,
    /// False when the count stopped early (the numbers are then a lower bound).
    exact: bool,
}

/// What the interpreter said about its state, if it was asked.
#[derive(Debug, Default)]
struct InterpreterState {
    state: Option<Value>,
    memory_bytes: Option<u64>,
    note: Option<&'static str>,
}

impl InterpreterState {
    fn field(&self, name: &str) -> Value {
        self.state
            .as_ref()
            .and_then(|state| state.get(name).cloned())
            .unwrap_or_else(|| Value::Array(Vec::new()))
    }
}

#[tool_router(router = get_workspace_info_router, vis = "pub(crate)")]
impl SandboxServer {
    #[tool(
        description = DESCRIPTION,
        annotations(
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
        let session = self.existing_session(&owner, &args.session)?;
        let running = self.sandbox.executions.list(session.key());
        let interpreter = self
            .interpreter_state(&session, running.is_empty(), &ctx)
            .await;
        let listing = crate::workspace::list(
            &session.files().app,
            args.include_system_files.unwrap_or(false),
        );
        let mut usage = disk_usage(&session).await;
        let checkpoints = session.checkpoints();
        for checkpoint in &checkpoints {
            usage.bytes += checkpoint.bytes;
            usage.entries += checkpoint.entries;
        }
        let SessionInfo {
            created_at,
            expires_at,
            limits,
            ..
        } = SessionInfo::of(&session);
        let (bytes_quota, entries_quota) = (
            limits.limits.disk_quota_bytes,
            limits.limits.disk_quota_files,
        );
        let info = WorkspaceInfo {
            session_id: &session.id,
            language: session.language().as_str(),
            runtime: session.runtime().as_str(),
            created_at,
            expires_at,
            limits,
            variables: interpreter.field("variables"),
            modules: interpreter.field("modules"),
            imported_modules: interpreter.field("imported"),
            files: &listing.files,
            files_total_bytes: listing.total_bytes,
            files_truncated: listing.truncated,
            memory_bytes: interpreter.memory_bytes,
            disk_usage: DiskUsage {
                covers: "/app, /tmp and checkpoints together",
                bytes_used: usage.bytes,
                bytes_quota,
                entries_used: usage.entries,
                entries_quota,
                exact: usage.complete,
            },
            executions_run: session.executions.load(Ordering::Relaxed),
            fuel_used_total: session.fuel_used.load(Ordering::Relaxed),
            running_executions: running,
            checkpoints,
            note: interpreter.note,
        };
        let text = format!(
            "session {} ({}): {} variables, {} files ({} bytes), {} running executions; disk quota: {} of {} bytes and {} of {} files, directories and links used (/app, /tmp and {} checkpoints)",
            session.id,
            info.runtime,
            info.variables.as_array().map_or(0, Vec::len),
            listing.files.len(),
            listing.total_bytes,
            info.running_executions.len(),
            usage.bytes,
            bytes_quota,
            usage.entries,
            entries_quota,
            info.checkpoints.len(),
        );
        reply::structured(&info, false, text)
    }

    /// Asks the interpreter for its state, only when it is live and idle: never start one,
    /// never queue behind user code.
    async fn interpreter_state(
        &self,
        session: &std::sync::Arc<Session>,
        idle: bool,
        ctx: &RequestContext<RoleServer>,
    ) -> InterpreterState {
        if !session.has_worker() {
            return InterpreterState {
                note: Some("the interpreter has not started yet (or was reset): no variables"),
                ..InterpreterState::default()
            };
        }
        if !idle {
            return InterpreterState {
                note: Some("an execution is running: variables are shown when the session is idle"),
                ..InterpreterState::default()
            };
        }
        let inspected = self
            .run_work(session, Work::Inspect, INSPECT_TIMEOUT, ctx)
            .await;
        let state = inspected
            .result
            .as_deref()
            .and_then(|r| serde_json::from_str::<Value>(r).ok());
        // An execution that started meanwhile holds the interpreter: the look is not queued.
        let note = state
            .is_none()
            .then_some("an execution is running: variables are shown when the session is idle");
        InterpreterState {
            state,
            memory_bytes: Some(inspected.memory_bytes),
            note,
        }
    }
}
