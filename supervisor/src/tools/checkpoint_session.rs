//! `checkpoint_session`: saves a session's whole state (its interpreter and `/app`) as a
//! checkpoint of that session, to restore or fork from later; and how the three state tools
//! (this one, `restore_session`, `fork_session`) answer when they cannot.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, tool, tool_router};
use sandbox_protocol::ErrorType;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::invalid_argument;
use super::reply;
use crate::server::SandboxServer;
use crate::session::{MAX_LABEL_CHARS, StateError};
use crate::worker::StateFailure;

/// What the model reads about `checkpoint_session`.
pub const DESCRIPTION: &str = "Save a session's whole state (variables, functions, objects, imports and /app; not /tmp) to restore or fork later.";

/// Arguments of `checkpoint_session`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CheckpointSessionArgs {
    pub session_id: String,
    /// Shown in get_workspace_info.
    #[serde(default)]
    pub label: Option<String>,
}

/// What `checkpoint_session` answers.
#[derive(Debug, Serialize)]
struct Checkpointed<'a> {
    session_id: &'a str,
    checkpoint_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    label: Option<&'a str>,
    /// Disk the checkpoint takes (counted in the session's quota).
    bytes: u64,
    took_ms: f64,
    /// Files the code held open: a restore finds them closed.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

#[tool_router(router = checkpoint_session_router, vis = "pub(crate)")]
impl SandboxServer {
    #[tool(
        description = DESCRIPTION,
        annotations(destructive_hint = false, open_world_hint = false)
    )]
    async fn checkpoint_session(
        &self,
        Parameters(args): Parameters<CheckpointSessionArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let session = self.named_session(&ctx, args.session_id)?;
        if let Some(label) = &args.label
            && label.chars().count() > MAX_LABEL_CHARS
        {
            return Err(invalid_argument(
                "label",
                format!("at most {MAX_LABEL_CHARS} characters"),
            ));
        }
        let taken = match session.checkpoint(self.sandbox.host(), args.label).await {
            Ok(taken) => taken,
            Err(e) => return state_refused(&session.id, &e),
        };
        let note = (!taken.open_descriptors.is_empty()).then(|| {
            format!(
                "{} file(s) the code held open (descriptors {:?}) are closed after a restore; reopen them",
                taken.open_descriptors.len(),
                taken.open_descriptors
            )
        });
        let checkpoint = &taken.checkpoint;
        let answer = Checkpointed {
            session_id: &session.id,
            checkpoint_id: &checkpoint.checkpoint_id,
            label: checkpoint.label.as_deref(),
            bytes: checkpoint.bytes,
            took_ms: milliseconds(taken.took),
            note,
        };
        tracing::info!(
            session = %session.id,
            checkpoint = %checkpoint.checkpoint_id,
            bytes = checkpoint.bytes,
            state_bytes = taken.state_bytes,
            memory_bytes = taken.memory_bytes,
            took_ms = answer.took_ms,
            "checkpoint taken"
        );
        let text = format!(
            "checkpoint {} of session {} ({} bytes)",
            answer.checkpoint_id, answer.session_id, answer.bytes
        );
        reply::structured(&answer, false, text)
    }
}

/// Milliseconds, to a tenth.
pub(crate) fn milliseconds(took: std::time::Duration) -> f64 {
    (took.as_secs_f64() * 10_000.0).round() / 10.0
}

/// The answer of `checkpoint_session`, `restore_session` or `fork_session` when the session's
/// state could not be saved, put back or copied.
///
/// # Errors
/// As [`reply::failed`].
pub(crate) fn state_refused(
    session_id: &str,
    error: &StateError,
) -> Result<CallToolResult, McpError> {
    let message = error.to_string();
    let (error_type, guidance): (ErrorType, &[&str]) = match error {
        StateError::NoCheckpoint(_) => (
            ErrorType::InvalidArgument,
            &["get_workspace_info lists the session's checkpoints"],
        ),
        StateError::TooMany => (
            ErrorType::ResourcesExhausted,
            &["fork_session from a checkpoint into a new session, or destroy_session"],
        ),
        StateError::Quota(_) => (
            ErrorType::DiskQuota,
            &["delete files in /app or /tmp with execute_command (rm), then retry"],
        ),
        StateError::Worker {
            failure: StateFailure::Lost(_),
            ..
        } => (
            ErrorType::WorkerCrashed,
            &["retry: the session's next call starts a new worker"],
        ),
        StateError::Start(_) | StateError::Worker { .. } | StateError::Files(_) => (
            ErrorType::SystemError,
            &["retry once; if it fails again, go on without it"],
        ),
    };
    reply::failed(error_type, &message, Some(session_id), guidance)
}
