//! `destroy_session`: stops a session's interpreter and deletes its files; a default session
//! that is destroyed is named afresh on the next call that needs one.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::{check_session_id, no_session};
use super::reply;
use crate::server::SandboxServer;

/// What the model reads about `destroy_session`.
pub const DESCRIPTION: &str =
    "Kill a session's interpreter (ending any execution) and delete its files.";

/// Arguments of `destroy_session`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DestroySessionArgs {
    pub session_id: String,
}

/// What `destroy_session` answers.
#[derive(Debug, Serialize)]
struct Destroyed<'a> {
    destroyed: bool,
    session_id: &'a str,
    message: &'static str,
}

#[tool_router(router = destroy_session_router, vis = "pub(crate)")]
impl SandboxServer {
    #[tool(
        description = DESCRIPTION,
        annotations(
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn destroy_session(
        &self,
        Parameters(args): Parameters<DestroySessionArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let id = check_session_id(&args.session_id)?;
        let owner = self.owner(&ctx);
        let Some(session) = self.sandbox.sessions.destroy(&owner, id).await else {
            return Err(no_session(id, self.sandbox.sessions.expired(&owner, id)));
        };
        self.default_sessions.forget(&session.id);
        reply::data(&Destroyed {
            destroyed: true,
            session_id: &session.id,
            message: "the session's interpreter was stopped and its files deleted",
        })
    }
}
