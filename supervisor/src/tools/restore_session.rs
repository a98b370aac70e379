//! `restore_session`: puts a session back exactly as one of its checkpoints saved it.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::checkpoint_session::{milliseconds, state_refused};
use super::reply;
use crate::server::SandboxServer;

/// What the model reads about `restore_session`.
pub const DESCRIPTION: &str = "Put a session back exactly as a checkpoint saved it (variables and /app). The checkpoint stays.";

/// Arguments of `restore_session`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RestoreSessionArgs {
    pub session_id: String,
    pub checkpoint_id: String,
}

/// What `restore_session` answers.
#[derive(Debug, Serialize)]
struct Restored<'a> {
    session_id: &'a str,
    checkpoint_id: &'a str,
    took_ms: f64,
}

#[tool_router(router = restore_session_router, vis = "pub(crate)")]
impl SandboxServer {
    #[tool(
        description = DESCRIPTION,
        annotations(idempotent_hint = true, open_world_hint = false)
    )]
    async fn restore_session(
        &self,
        Parameters(args): Parameters<RestoreSessionArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let session = self.named_session(&ctx, args.session_id)?;
        let took = match session
            .restore(self.sandbox.host(), &args.checkpoint_id)
            .await
        {
            Ok(took) => took,
            Err(e) => return state_refused(&session.id, &e),
        };
        let answer = Restored {
            session_id: &session.id,
            checkpoint_id: &args.checkpoint_id,
            took_ms: milliseconds(took),
        };
        tracing::info!(session = %session.id, checkpoint = %args.checkpoint_id, took_ms = answer.took_ms, "session restored");
        let text = format!(
            "session {} restored to checkpoint {}",
            answer.session_id, answer.checkpoint_id
        );
        reply::structured(&answer, false, text)
    }
}
