//! `fork_session`: a new session made from another's live state or one of its checkpoints,
//! with a copy of its `/app`; the two then evolve independently.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::{check_session_id, invalid_argument};
use super::checkpoint_session::{milliseconds, state_refused};
use super::create_session::creation_refused;
use super::reply;
use crate::server::SandboxServer;
use crate::session::CreateError;

/// What the model reads about `fork_session`.
pub const DESCRIPTION: &str = "Copy a session (as its last call left it, or a checkpoint) and its /app into a new, independent session.";

/// Arguments of `fork_session`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ForkSessionArgs {
    pub session_id: String,
    #[serde(default)]
    pub new_session_id: Option<String>,
    #[serde(default)]
    pub checkpoint_id: Option<String>,
}

/// What `fork_session` answers.
#[derive(Debug, Serialize)]
struct Forked<'a> {
    session_id: &'a str,
    forked_from: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    checkpoint_id: Option<&'a str>,
    took_ms: f64,
}

#[tool_router(router = fork_session_router, vis = "pub(crate)")]
impl SandboxServer {
    #[tool(
        description = DESCRIPTION,
        annotations(destructive_hint = false, open_world_hint = false)
    )]
    async fn fork_session(
        &self,
        Parameters(args): Parameters<ForkSessionArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let started = std::time::Instant::now();
        let owner = self.owner(&ctx);
        let source = self.named_session(&ctx, args.session_id)?;
        let new_id = match &args.new_session_id {
            Some(id) => check_session_id(id)?.to_owned(),
            None => format!(
                "session-{}",
                &uuid::Uuid::new_v4().simple().to_string()[..12]
            ),
        };
        let sessions = &self.sandbox.sessions;
        // The source's runtime and limits, so that its state and /app fit; the TTL of a new
        // session made by `create_session` without one, as the issue asks of a fork.
        let mut spec = source.spec();
        spec.ttl = self.sandbox.config.explicit_session_ttl;
        let fork = match sessions.create(&owner, &new_id, spec) {
            Ok(fork) => fork,
            Err(CreateError::Exists(id)) => {
                return Err(invalid_argument(
                    "new_session_id",
                    format!(
                        "session {id:?} already exists; choose another new_session_id or leave it out"
                    ),
                ));
            }
            Err(e) => return creation_refused(self, e),
        };
        let checkpoint = args.checkpoint_id.as_deref();
        if let Err(e) = source
            .fork_into(self.sandbox.host(), &fork, checkpoint)
            .await
        {
            sessions.destroy(&owner, &new_id).await;
            return state_refused(&source.id, &e);
        }
        let answer = Forked {
            session_id: &fork.id,
            forked_from: &source.id,
            checkpoint_id: checkpoint,
            took_ms: milliseconds(started.elapsed()),
        };
        tracing::info!(session = %fork.id, from = %source.id, checkpoint, took_ms = answer.took_ms, "session forked");
        let text = format!(
            "forked session {} into new session {}",
            answer.forked_from, answer.session_id
        );
        reply::structured(&answer, false, text)
    }
}
