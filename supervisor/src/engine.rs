//! The engine the tools call: one [`Sandbox`] per server owns the configuration, the
//! interpreters, the session table, the executions in flight and the measured import costs, and
//! offers the domain verbs (the limits of a new session, running work in a session, teaching a
//! result). The MCP handler (`server.rs`, `tools/`) translates arguments into calls on it and
//! results back; nothing here knows MCP beyond the result types it builds.

use std::sync::Arc;
use std::time::Duration;

use sandbox_protocol::confined::Usage;
use sandbox_protocol::{ErrorType, Flavor, Language, Runtime, StateAfterRestart};
use tokio_util::sync::CancellationToken;

use crate::config::{SessionLimits, SupervisorConfig};
use crate::executions::Executions;
use crate::guidance;
use crate::report::ExecuteCodeResult;
use crate::runtimes::Runtimes;
use crate::session::{CreateError, Host, Job, Owner, Session, SessionSpec, SessionTable, Work};

/// The sandbox service: what every connection shares.
#[derive(Debug)]
pub struct Sandbox {
    pub config: Arc<SupervisorConfig>,
    pub sessions: Arc<SessionTable>,
    pub runtimes: Arc<Runtimes>,
    pub executions: Arc<Executions>,
    /// Measured first-import fuel (stdlib, vendored and compiled in), for guidance.
    pub imports: Arc<guidance::ImportFuelTable>,
}

/// What a call brings to an execution besides its work: its cancellation (the client's own
/// request being cancelled) and how to report progress once the execution has its id.
pub struct Call<'a> {
    pub cancel: &'a CancellationToken,
    /// Starts progress reports for the execution id; the task is stopped when the execution
    /// ends.
    pub progress: StartProgress<'a>,
}

/// Starts a task reporting an execution's progress, given its id (none: nobody asked).
pub type StartProgress<'a> =
    Box<dyn FnOnce(&str) -> Option<tokio::task::JoinHandle<()>> + Send + 'a>;

/// What advice about a result is based on, besides the result itself.
pub struct Lesson<'a> {
    pub language: Language,
    /// The code or command that ran ("" when none did).
    pub code: &'a str,
    /// `code` is an `execute_command` line, not code in `language`.
    pub command: bool,
    /// The interpreter's memory cap (0 when nothing ran).
    pub memory_cap: u64,
    pub timeout: Duration,
    /// The session's disk quota and use, for `disk_quota` advice.
    pub disk: Option<guidance::DiskFacts>,
}

/// Why a call could not have its session.
#[derive(Debug)]
pub enum Unavailable {
    /// It exists and runs another language than the call's.
    OtherLanguage(Language),
    /// It expired (idle) and was removed with its files.
    Expired,
    /// Another call created it at the same moment, and it was gone again before this one
    /// could use it.
    Vanished,
    /// Admission or the client's cap refused a new one: a result the model can act on.
    Refused {
        error_type: ErrorType,
        message: String,
    },
    /// The server's own failure.
    Internal(String),
}

impl Sandbox {
    /// What starting a session's worker takes.
    pub fn host(&self) -> Host<'_> {
        Host {
            config: &self.config,
            runtimes: &self.runtimes,
        }
    }

    /// The service over `sessions`, with the import costs of the data directory's vendored
    /// packages and of CPython's compiled-in ones, read once.
    pub fn new(
        config: Arc<SupervisorConfig>,
        sessions: Arc<SessionTable>,
        runtimes: Arc<Runtimes>,
        executions: Arc<Executions>,
    ) -> Self {
        let mut imports = guidance::ImportFuelTable::load(config.data_dir.as_deref());
        crate::inventory::add_compiled_in(&mut imports);
        Self {
            config,
            sessions,
            runtimes,
            executions,
            imports: Arc::new(imports),
        }
    }

    /// The limits of a new session: the flavor's (or the configured defaults).
    pub fn limits_for(&self, flavor: Option<Flavor>) -> SessionLimits {
        match flavor {
            Some(flavor) => SessionLimits::from(flavor),
            None => self.config.defaults.clone(),
        }
    }

    /// `owner`'s session `id` for a call in `language`, created on demand with `flavor`'s
    /// limits.
    ///
    /// # Errors
    /// When it runs another language, expired, or cannot be created.
    pub fn session_for(
        &self,
        owner: &Owner,
        id: &str,
        language: Language,
        flavor: Option<Flavor>,
    ) -> Result<Arc<Session>, Unavailable> {
        if let Some(session) = self.sessions.get(owner, id) {
            let runs = session.language();
            return if runs == language {
                Ok(session)
            } else {
                Err(Unavailable::OtherLanguage(runs))
            };
        }
        if self.sessions.expired(owner, id) {
            return Err(Unavailable::Expired);
        }
        let spec = SessionSpec::new(language, self.limits_for(flavor), self.config.session_ttl);
        match self.sessions.create(owner, id, spec) {
            Ok(session) => Ok(session),
            // Two calls raced to create it: use the winner's.
            Err(CreateError::Exists(_)) => {
                self.sessions.get(owner, id).ok_or(Unavailable::Vanished)
            }
            Err(CreateError::ResourcesExhausted(usage)) => Err(Unavailable::Refused {
                error_type: ErrorType::ResourcesExhausted,
                message: format!(
                    "{usage}; wait for idle sessions to expire and retry, or destroy_session one you no longer need"
                ),
            }),
            Err(e @ CreateError::ClientLimit { .. }) => Err(Unavailable::Refused {
                error_type: ErrorType::ResourcesExhausted,
                message: format!(
                    "{e} ({}); destroy_session one you no longer need, or reuse one with session_id",
                    self.config.principal_max_sessions
                ),
            }),
            Err(e) => Err(Unavailable::Internal(e.to_string())),
        }
    }

    /// Runs `work` in `session` as a registered execution (cancellable by id and by the call's
    /// own token, reported through `call.progress`) and builds the client's result, taught;
    /// every failure, including one to start, is a failed result.
    pub async fn run(
        &self,
        session: &Arc<Session>,
        work: Work,
        timeout: Duration,
        call: Call<'_>,
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
            call.cancel,
        );
        let progress = (call.progress)(&execution_id);
        let executions = self.executions.clone();
        let host = self.host();
        let job = Job {
            execution_id: execution_id.clone(),
            work,
            timeout,
            cancel: &cancel,
        };
        let started = session
            .execute(host, job, || executions.mark_running(&execution_id))
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
            command: tool == Some("execute_command"),
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
    pub fn teach(&self, result: &mut ExecuteCodeResult, lesson: &Lesson<'_>) {
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
            // Output past the cap is the one class that comes with success (the schema and
            // the README say so): the call ran, and what it printed was cut.
            (None, true) => *result.error_type.insert(ErrorType::OutputLimit),
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
        facts.command = lesson.command;
        facts.disk = lesson.disk;
        facts.runtime = runtime;
        let advice = guidance::advise_with(&facts, &self.imports);
        result.with_advice(advice);
    }
}

impl Lesson<'_> {
    /// The lesson of a call that ran nothing (it was refused before it started).
    pub fn nothing_ran(language: Language, timeout: Duration) -> Self {
        Lesson {
            language,
            code: "",
            command: false,
            memory_cap: 0,
            timeout,
            disk: None,
        }
    }
}

/// What a session's files in /app and /tmp hold together, counted as its disk quota counts
/// them, off the async threads (the count is bounded: it stops at twice the entry quota).
pub async fn disk_usage(session: &Arc<Session>) -> Usage {
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
