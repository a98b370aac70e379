//! Running work in a session for a tool: the execution is registered (so `cancel_execution`
//! can stop it and progress notifications can name it), queued on the session, and its result
//! is taught: fuel analysis on every result, advice on failures and truncated output.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolResult, ProgressNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use sandbox_protocol::confined::Usage;
use sandbox_protocol::{ErrorType, Language, Runtime, StateAfterRestart};

use super::reply;
use super::sessions::Refusal;
use crate::guidance;
use crate::report::ExecuteCodeResult;
use crate::server::SandboxServer;
use crate::session::{Session, Work};

/// How often a progress notification goes out while an execution runs.
const PROGRESS_PERIOD: Duration = Duration::from_secs(1);

/// What advice about a result is based on, besides the result itself.
pub(crate) struct Lesson<'a> {
    pub language: Language,
    /// The code or command that ran ("" when none did).
    pub code: &'a str,
    /// The interpreter's memory cap (0 when nothing ran).
    pub memory_cap: u64,
    pub timeout: Duration,
    /// The session's disk quota and use, for `disk_quota` advice.
    pub disk: Option<guidance::DiskFacts>,
}

impl SandboxServer {
    /// Runs `work` in `session` as a registered execution (cancellable by id, reported through
    /// progress notifications) and builds the client's result; every failure, including one to
    /// start, is a failed result.
    pub(crate) async fn run_work(
        &self,
        session: &Arc<Session>,
        work: Work,
        timeout: Duration,
        ctx: &RequestContext<RoleServer>,
    ) -> ExecuteCodeResult {
        if let Some(refused) = self.over_execution_cap(session, timeout) {
            crate::metrics::global().refused(crate::metrics::Refusal::ClientExecutions);
            return refused;
        }
        let called = std::time::Instant::now();
        let (code, tool) = match &work {
            Work::Code(code) => (code.clone(), Some("execute_code")),
            Work::Command(command) => (command.clone(), Some("execute_command")),
            Work::Inspect => (String::new(), None),
        };
        let execution_id = format!("exec-{}", uuid::Uuid::new_v4().simple());
        // The tool call's span (see `guard`) names what it ran, for every log line under it.
        let span = tracing::Span::current();
        span.record("session_id", session.id.as_str());
        span.record("execution_id", execution_id.as_str());
        let cancel = self.executions.register(
            &execution_id,
            (&session.owner, session.key(), &session.id),
            &ctx.ct,
        );
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
        let mut result = match started {
            Ok(execution) => ExecuteCodeResult::new(session, execution),
            Err(e) => ExecuteCodeResult::refused(
                &session.id,
                session.runtime(),
                ErrorType::SystemError,
                e.to_string(),
            ),
        };
        self.executions.finish(
            &execution_id,
            result.error_type.map_or("completed", ErrorType::as_str),
        );
        if let Some(tool) = tool {
            crate::metrics::global().execution(&crate::metrics::ExecutionRecord {
                tool,
                runtime: Runtime::from_name(&result.runtime).unwrap_or_else(|| session.runtime()),
                error_type: result.error_type,
                seconds: called.elapsed().as_secs_f64(),
                fuel: result.fuel_consumed,
            });
        }
        let disk = match result.error_type {
            Some(ErrorType::DiskQuota) => Some(disk_facts(session).await),
            _ => None,
        };
        let lesson = Lesson {
            language: session.language(),
            code: &code,
            memory_cap: session.limits().memory_bytes,
            timeout,
            disk,
        };
        self.teach(&mut result, &lesson);
        result
    }

    /// The refusal of an execution past the client's cap on executions in flight (HTTP
    /// clients only), if this one is.
    fn over_execution_cap(
        &self,
        session: &Session,
        timeout: Duration,
    ) -> Option<ExecuteCodeResult> {
        let cap = self.config.principal_max_executions;
        if !session.owner.capped() || self.executions.in_flight(&session.owner) < cap {
            return None;
        }
        let mut result = ExecuteCodeResult::refused(
            &session.id,
            session.runtime(),
            ErrorType::ResourcesExhausted,
            format!(
                "this client already has {cap} executions running or queued, the most one client may have at once; wait for one to finish (or cancel_execution it) and retry"
            ),
        );
        self.teach(
            &mut result,
            &Lesson::nothing_ran(session.language(), timeout),
        );
        Some(result)
    }

    /// Adds a fuel analysis to a result that used half its budget or more (below that it has
    /// nothing to say), and advice to failures and truncated output.
    pub(crate) fn teach(&self, result: &mut ExecuteCodeResult, lesson: &Lesson<'_>) {
        let runtime = Runtime::from_name(&result.runtime)
            .unwrap_or_else(|| Runtime::default_for(lesson.language));
        if result.fuel_budget > 0 {
            let analysis = guidance::fuel_analysis(
                result.fuel_consumed,
                result.fuel_budget,
                lesson.code,
                lesson.language,
                &self.imports,
            );
            result.fuel_analysis =
                (analysis.status != guidance::FuelStatus::Efficient).then_some(analysis);
        }
        let truncated = result.stdout_truncated || result.stderr_truncated;
        let error_type = match (result.error_type, truncated) {
            (Some(kind), _) => kind,
            (None, true) => ErrorType::OutputLimit,
            (None, false) => return,
        };
        let mut facts =
            guidance::ErrorFacts::new(lesson.language, error_type, lesson.code, &result.session_id);
        facts.error_name = result.error_name.as_deref();
        facts.error_message = result.error_message.as_deref();
        facts.stderr = &result.stderr;
        facts.fuel_consumed = result.fuel_consumed;
        facts.fuel_budget = result.fuel_budget;
        facts.memory_bytes = result.memory_bytes;
        facts.memory_cap = lesson.memory_cap;
        facts.timeout_secs = lesson.timeout.as_secs_f64();
        facts.stdout_truncated = result.stdout_truncated;
        facts.state_lost = result.state_after_restart == Some(StateAfterRestart::Lost);
        facts.disk = lesson.disk;
        facts.runtime = runtime;
        let advice = guidance::advise_with(&facts, &self.imports);
        result.with_advice(advice);
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
                let lesson = Lesson::nothing_ran(language, self.config.defaults.timeout);
                self.teach(&mut result, &lesson);
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
                tokio::time::sleep(PROGRESS_PERIOD).await;
            }
        }))
    }
}

impl Lesson<'_> {
    /// The lesson of a call that ran nothing (it was refused before it started).
    pub(crate) fn nothing_ran(language: Language, timeout: Duration) -> Self {
        Lesson {
            language,
            code: "",
            memory_cap: 0,
            timeout,
            disk: None,
        }
    }
}

/// What a session's files in /app and /tmp hold together, counted as its disk quota counts
/// them, off the async threads (the count is bounded: it stops at twice the entry quota).
pub(crate) async fn disk_usage(session: &Arc<Session>) -> Usage {
    let session = session.clone();
    let max = session.limits().disk_quota_files.saturating_mul(2);
    tokio::task::spawn_blocking(move || crate::workspace::usage(&session.files(), max))
        .await
        .unwrap_or_default()
}

/// The session's disk quota and what it uses, for advice on a `disk_quota` failure.
async fn disk_facts(session: &Arc<Session>) -> guidance::DiskFacts {
    let usage = disk_usage(session).await;
    let limits = session.limits();
    guidance::DiskFacts {
        quota_bytes: limits.disk_quota_bytes,
        quota_files: limits.disk_quota_files,
        used_bytes: usage.bytes,
        used_files: usage.entries,
        file_cap_bytes: limits.disk_bytes,
    }
}
