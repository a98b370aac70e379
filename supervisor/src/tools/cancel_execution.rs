//! `cancel_execution`: stops a running or queued execution of this client's by its id, and
//! waits (briefly) for it to answer its caller so the status it reports is final.

use std::time::Duration;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::{bounded_text, invalid_argument};
use super::reply;
use crate::packages::names::quote;
use crate::server::SandboxServer;

/// What the model reads about `cancel_execution`.
pub const DESCRIPTION: &str = "Stop a running or queued execution: an interrupt first (session state kept), a kill if ignored.";

/// Longest `execution_id` accepted (ours are 37 characters).
const MAX_EXECUTION_ID_LEN: usize = 128;

/// How often the cancelled execution is checked for having answered.
const POLL: Duration = Duration::from_millis(10);

/// Arguments of `cancel_execution`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CancelExecutionArgs {
    /// From a progress notification, get_workspace_info or a result.
    pub execution_id: String,
}

/// What `cancel_execution` answers.
#[derive(Debug, Serialize)]
struct Cancellation<'a> {
    /// True when this call stopped it.
    cancelled: bool,
    execution_id: &'a str,
    /// How it ended ("cancelled", "timeout", ...), "cancelling" while it still winds down, or
    /// "already_finished".
    status: String,
    /// How an execution that had already finished ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    outcome: Option<String>,
}

#[tool_router(router = cancel_execution_router, vis = "pub(crate)")]
impl SandboxServer {
    #[tool(
        description = DESCRIPTION,
        annotations(
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
        if self.sandbox.executions.cancel(&owner, id) {
            // Wait for the execution to answer its caller, so the status is final.
            let deadline =
                tokio::time::Instant::now() + crate::worker::KILL_GRACE + Duration::from_secs(1);
            while self.sandbox.executions.is_live(id) && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(POLL).await;
            }
            let status = self
                .sandbox
                .executions
                .outcome(&owner, id)
                .unwrap_or_else(|| "cancelling".into());
            return reply::data(&Cancellation {
                cancelled: true,
                execution_id: id,
                status,
                outcome: None,
            });
        }
        match self.sandbox.executions.outcome(&owner, id) {
            Some(outcome) => reply::data(&Cancellation {
                cancelled: false,
                execution_id: id,
                status: "already_finished".into(),
                outcome: Some(outcome),
            }),
            None => Err(invalid_argument(
                "execution_id",
                format!(
                    "no execution {} is running or recently finished; get_workspace_info lists running executions",
                    quote(id)
                ),
            )),
        }
    }
}
