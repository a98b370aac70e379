//! Running work in a session for a tool: the engine ([`crate::engine::Sandbox::run`]) registers,
//! queues and teaches the execution; here the MCP request's cancellation and progress token are
//! handed to it, and a call whose session could not be had is answered.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolResult, ProgressNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use sandbox_protocol::{Language, Runtime};

use super::reply;
use super::sessions::Refusal;
use crate::engine::{Call, Lesson};
use crate::report::ExecuteCodeResult;
use crate::server::SandboxServer;
use crate::session::{Session, Work};

/// How often a progress notification goes out while an execution runs.
const PROGRESS_PERIOD: Duration = Duration::from_secs(1);

impl SandboxServer {
    /// Runs `work` in `session` for the MCP request `ctx`: cancelled with the request, reported
    /// through progress notifications when the client asked for them.
    pub(crate) async fn run_work(
        &self,
        session: &Arc<Session>,
        work: Work,
        timeout: Duration,
        ctx: &RequestContext<RoleServer>,
    ) -> ExecuteCodeResult {
        let call = Call {
            cancel: &ctx.ct,
            progress: Box::new(|execution_id| self.report_progress(ctx, execution_id)),
        };
        self.sandbox.run(session, work, timeout, call).await
    }

    /// The answer to a code or command call whose session could not be had: a protocol error
    /// for a bad argument, or a failed result the model can act on.
    pub(crate) fn refused(
        &self,
        refusal: Refusal,
        language: Language,
    ) -> Result<CallToolResult, McpError> {
        match refusal {
            Refusal::Invalid(e) => Err(e),
            Refusal::Tool {
                error_type,
                message,
                session_id,
            } => {
                let runtime = Runtime::default_for(language);
                let mut result =
                    ExecuteCodeResult::refused(&session_id, runtime, error_type, message);
                let lesson = Lesson::nothing_ran(language, self.sandbox.config.defaults.timeout);
                self.sandbox.teach(&mut result, &lesson);
                reply::execution(&result)
            }
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
        let executions = self.sandbox.executions.clone();
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
                tokio::time::sleep(PROGRESS_PERIOD).await;
            }
        }))
    }
}
