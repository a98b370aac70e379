//! `reset_workspace`: clears a session (its interpreter state and every file in /app and
//! /tmp) and keeps its id.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, tool, tool_router};
use sandbox_protocol::ErrorType;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::SessionSelector;
use super::reply;
use crate::server::SandboxServer;

/// What the model reads about `reset_workspace`.
pub const DESCRIPTION: &str =
    "Clear a session's variables, imports and files in /app and /tmp; its id stays valid.";

/// Arguments of `reset_workspace`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ResetWorkspaceArgs {
    #[serde(flatten)]
    pub session: SessionSelector,
}

/// What `reset_workspace` answers when everything was deleted.
#[derive(Debug, Serialize)]
struct Reset<'a> {
    session_id: &'a str,
    state_cleared: bool,
    deleted_files: Vec<&'a str>,
    deleted_count: usize,
    deleted_bytes: u64,
    message: &'static str,
}

/// What `reset_workspace` answers when some files could not be deleted.
#[derive(Debug, Serialize)]
struct PartlyReset<'a> {
    session_id: &'a str,
    success: bool,
    error_type: ErrorType,
    error_message: &'a str,
    actionable_guidance: [&'static str; 2],
}

#[tool_router(router = reset_workspace_router, vis = "pub(crate)")]
impl SandboxServer {
    #[tool(
        description = DESCRIPTION,
        annotations(
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn reset_workspace(
        &self,
        Parameters(args): Parameters<ResetWorkspaceArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let owner = self.owner(&ctx);
        let session = self.existing_session(&owner, &args.session)?;
        let deleted = match session.reset().await {
            Ok(deleted) => deleted,
            Err(e) => {
                tracing::error!(session = %session.id, error = %e, "reset could not delete everything");
                let message = format!(
                    "the interpreter state was cleared, but some files could not be deleted ({e}); the session is usable"
                );
                let partly = PartlyReset {
                    session_id: &session.id,
                    success: false,
                    error_type: ErrorType::SystemError,
                    error_message: &message,
                    actionable_guidance: [
                        "retry reset_workspace",
                        "destroy_session and start a new session",
                    ],
                };
                return reply::structured(&partly, true, message.clone());
            }
        };
        let paths: Vec<&str> = deleted.files.iter().map(|f| f.path.as_str()).collect();
        let text = format!(
            "reset session {}: interpreter state cleared, {} files/directories deleted from /app",
            session.id,
            paths.len()
        );
        let reset = Reset {
            session_id: &session.id,
            state_cleared: true,
            deleted_count: paths.len(),
            deleted_files: paths,
            deleted_bytes: deleted.total_bytes,
            message: "variables, functions and imports are gone; /app and /tmp are empty; the session id is unchanged",
        };
        reply::structured(&reset, false, text)
    }
}
