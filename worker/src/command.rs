//! `execute_command` inside the worker: the shell (`shell/`) runs on a thread of its own over
//! the session's mounts, and every `python`/`node` it starts runs on that thread in a fresh
//! interpreter of that runtime ([`Companion`]), as a shell starts a process: it shares the
//! session's files, never its interpreter's variables, whichever the session's language. The
//! shell's cwd and variables persist between commands of the session.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sandbox_protocol::{
    CommandRequest, DiskCharge, ErrorKind, ExecuteRequest, ExecutionKind, ExecutionReport,
    GuestError, Language, Response,
};

use crate::companion::Companion;
use crate::connection::{Ended, Outbox};
use crate::host::{Control, SessionConfig};
use crate::quota::{Amount, SharedQuota};
use crate::shell::{
    self, FsView, InterpreterRun, Interpreters, ShellError, ShellLimits, ShellState, ToolBudget,
};
use crate::toolbox::Toolbox;

/// Starts shell command lines for one session.
pub struct ShellRunner {
    fs: FsView,
    state: Arc<Mutex<ShellState>>,
    language: Language,
    stdout_cap: usize,
    stderr_cap: usize,
    /// The session's disk quota, shared with the guest's WASI host.
    quota: Option<SharedQuota>,
    /// The WebAssembly commands, when the server has them.
    toolbox: Option<Arc<Toolbox>>,
    /// The fresh interpreters of `python`/`node`: the session's language's and the other's,
    /// when the server has it.
    interpreters: Vec<Arc<dyn FreshRuns>>,
}

/// A runtime's fresh interpreters as the shell starts them: a [`Companion`], or a stand-in in
/// tests.
pub trait FreshRuns: Send + Sync {
    /// The language it runs.
    fn language(&self) -> Language;

    /// Runs `request` in a fresh instance; `Err` says, for stderr, why it could not start.
    ///
    /// # Errors
    /// When no instance could start.
    fn run(
        &self,
        request: &ExecuteRequest,
        control: Arc<Control>,
    ) -> Result<ExecutionReport, String>;

    /// The session's memory cap and what a fresh instance may have of it now.
    fn memory(&self) -> (u64, u64);
}

impl FreshRuns for Companion {
    fn language(&self) -> Language {
        Companion::language(self)
    }

    fn memory(&self) -> (u64, u64) {
        Companion::memory(self)
    }

    fn run(
        &self,
        request: &ExecuteRequest,
        control: Arc<Control>,
    ) -> Result<ExecutionReport, String> {
        Companion::run(self, request, control)
    }
}

impl ShellRunner {
    /// The shell of a `language` session over `/app` (`workspace`) and the session's mounts.
    pub fn new(language: Language, workspace: &Path, config: &SessionConfig) -> Self {
        Self {
            fs: FsView::of_session(workspace, &config.mounts),
            state: Arc::default(),
            language,
            stdout_cap: config.stdout_cap,
            stderr_cap: config.stderr_cap,
            quota: config.quota.clone(),
            toolbox: None,
            interpreters: Vec::new(),
        }
    }

    /// The same shell, running `toolbox`'s commands.
    #[must_use]
    pub fn with_toolbox(self, toolbox: Option<Toolbox>) -> Self {
        Self {
            toolbox: toolbox.map(Arc::new),
            ..self
        }
    }

    /// The shell with the fresh interpreters its `python`/`node` command lines run in.
    #[must_use]
    pub fn with_interpreters(self, interpreters: impl IntoIterator<Item = Companion>) -> Self {
        let interpreters = interpreters.into_iter();
        Self {
            interpreters: interpreters
                .map(|c| Arc::new(c) as Arc<dyn FreshRuns>)
                .collect(),
            ..self
        }
    }

    /// Charges files the supervisor is about to move into the session to its disk quota
    /// ([`Request::ChargeDisk`](sandbox_protocol::Request::ChargeDisk)), or sets what the
    /// session holds outside its files (`hold`:
    /// [`Request::HoldDisk`](sandbox_protocol::Request::HoldDisk)). A session without a quota
    /// grants everything.
    pub fn charge_disk(&self, bytes: u64, entries: u64, hold: bool) -> DiskCharge {
        let Some(quota) = &self.quota else {
            return DiskCharge {
                granted: true,
                used_bytes: 0,
                used_entries: 0,
                quota_bytes: u64::MAX,
                quota_entries: u64::MAX,
                exact: false,
            };
        };
        let mut quota = crate::quota::lock(quota);
        let limits = quota.limits();
        let amount = Amount { bytes, entries };
        let charged = if hold {
            quota.hold(amount)
        } else {
            quota.charge_install(amount)
        };
        let (granted, used, exact) = match charged {
            Ok(used) => (true, used, true),
            Err(refusal) => (false, refusal.used, refusal.exact),
        };
        DiskCharge {
            granted,
            used_bytes: used.bytes,
            used_entries: used.entries,
            quota_bytes: limits.bytes,
            quota_entries: limits.entries,
            exact,
        }
    }

    /// Runs `command` on a new thread; its report goes straight to the supervisor, and a
    /// supervisor that is gone ends the worker.
    pub fn start(&mut self, command: CommandRequest, outbox: Outbox, control: Arc<Control>) {
        let cancel = control.start_shell(&command.execution_id);
        let (fs, state, language) = (self.fs.clone(), self.state.clone(), self.language);
        let (toolbox, interpreters) = (self.toolbox.clone(), self.interpreters.clone());
        let limits = ShellLimits {
            stdout_cap: self.stdout_cap,
            stderr_cap: self.stderr_cap,
            deadline: Instant::now() + Duration::from_millis(command.timeout_ms),
            cancel: cancel.clone(),
            quota: self.quota.clone(),
        };
        let spawned = std::thread::Builder::new()
            .name("shell".into())
            // Tools and the other language's interpreter run WebAssembly on this thread.
            .stack_size(crate::engine::WASM_THREAD_STACK)
            .spawn(move || {
                let interpreters = WorkerInterpreters::new(&command, language, &limits, cancel)
                    .with_toolbox(toolbox)
                    .with_interpreters(interpreters, control.clone());
                let report = run(&command, &fs, &state, interpreters, &limits);
                control.end_shell();
                if outbox.send(&Response::Executed(report)).is_err() {
                    outbox.end(Ok(Ended::SupervisorGone));
                }
            });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start the shell thread");
        }
    }
}

/// Runs one command line over the session's files and reports it like an execution.
fn run(
    command: &CommandRequest,
    fs: &FsView,
    state: &Mutex<ShellState>,
    mut interpreters: WorkerInterpreters,
    limits: &ShellLimits,
) -> ExecutionReport {
    let started = Instant::now();
    let mut shell_state = state.lock().unwrap_or_else(|e| e.into_inner());
    let outcome = shell::execute(
        &command.command,
        fs,
        &mut shell_state,
        &mut interpreters,
        limits,
    );
    let error = command_error(outcome.error.as_ref(), outcome.exit_code);
    ExecutionReport {
        execution_id: command.execution_id.clone(),
        stdout: outcome.stdout,
        stderr: outcome.stderr,
        stdout_truncated: outcome.stdout_truncated,
        stderr_truncated: outcome.stderr_truncated,
        exit_code: outcome.exit_code,
        result: None,
        error,
        fuel_consumed: interpreters.fuel_consumed,
        duration_us: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
        memory_bytes: interpreters.memory_bytes,
        // A fresh interpreter's end is no restart of the session's.
        restart: None,
        figures: interpreters.figures,
        written: Vec::new(),
        state_follows: false,
    }
}

/// The error of a command line: the shell's own failure, else a non-zero exit status.
fn command_error(error: Option<&ShellError>, exit_code: i32) -> Option<GuestError> {
    match error {
        Some(e) => Some(GuestError {
            kind: match e {
                ShellError::Syntax(_) => ErrorKind::Syntax,
                ShellError::Timeout => ErrorKind::Timeout,
                ShellError::Cancelled => ErrorKind::Cancelled,
                ShellError::PathRestriction(_) => ErrorKind::PathRestriction,
                ShellError::DiskQuota(_) => ErrorKind::DiskQuota,
            },
            name: None,
            message: e.to_string(),
        }),
        None if exit_code != 0 => Some(GuestError {
            kind: ErrorKind::CommandFailed,
            name: None,
            message: format!("the command exited with status {exit_code}"),
        }),
        None => None,
    }
}

/// The shell's way to the fresh interpreters of one command line.
struct WorkerInterpreters {
    /// The session's language (named when the other one is missing).
    language: Language,
    fuel: u64,
    deadline: Instant,
    /// The command's execution id; runs are `<parent>/<n>`, so a cancel of the command reaches
    /// the interpreter too.
    parent: String,
    runs: u32,
    fuel_consumed: u64,
    memory_bytes: u64,
    /// Pictures the command's Python runs drew (a script that plots returns its figures too).
    figures: Vec<sandbox_protocol::Figure>,
    /// The command's cancel flag (the shell polls its own clone): a run is not started once it
    /// is set, and a run that starts just before it is set inherits it (`Control`).
    cancel: Arc<AtomicBool>,
    /// The session's WebAssembly commands.
    toolbox: Option<Arc<Toolbox>>,
    /// The fresh interpreters, by language.
    interpreters: Vec<Arc<dyn FreshRuns>>,
    /// The worker's cancel control their runs answer to.
    control: Arc<Control>,
}

impl WorkerInterpreters {
    fn new(
        command: &CommandRequest,
        language: Language,
        limits: &ShellLimits,
        cancel: Arc<AtomicBool>,
    ) -> Self {
        Self {
            language,
            fuel: command.fuel,
            deadline: limits.deadline,
            parent: command.execution_id.clone(),
            runs: 0,
            fuel_consumed: 0,
            memory_bytes: 0,
            figures: Vec::new(),
            cancel,
            toolbox: None,
            interpreters: Vec::new(),
            control: Arc::default(),
        }
    }

    fn with_toolbox(self, toolbox: Option<Arc<Toolbox>>) -> Self {
        Self { toolbox, ..self }
    }

    fn with_interpreters(
        self,
        interpreters: Vec<Arc<dyn FreshRuns>>,
        control: Arc<Control>,
    ) -> Self {
        Self {
            interpreters,
            control,
            ..self
        }
    }

    /// Why no run of `language` may start now: no interpreter of it on this server, a cancel
    /// that arrived between two commands of the line, or no time left. Else the interpreter
    /// and the time left.
    fn refusal(
        &self,
        language: Language,
    ) -> Result<(Arc<dyn FreshRuns>, Duration), InterpreterRun> {
        let found = (self.interpreters.iter()).find(|i| i.language() == language);
        let Some(interpreter) = found.cloned() else {
            let (wanted, have) = (language.as_str(), self.language.as_str());
            return Err(InterpreterRun {
                stderr: format!(
                    "{wanted}: not available in this {have} session; run it in a {wanted} session (execute_code with language \"{wanted}\")\n"
                )
                .into_bytes(),
                exit_code: 127,
                ..InterpreterRun::default()
            });
        };
        if self.cancel.load(Ordering::SeqCst) {
            return Err(InterpreterRun {
                exit_code: shell::EXIT_CANCELLED,
                ..InterpreterRun::default()
            });
        }
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(InterpreterRun {
                exit_code: shell::EXIT_TIMEOUT,
                ..InterpreterRun::default()
            });
        }
        Ok((interpreter, left))
    }

    /// Adds a run's report to the command's totals and turns it into what the shell sees; an
    /// interpreter stopped by the host explains itself on stderr.
    fn account(&mut self, report: ExecutionReport) -> InterpreterRun {
        self.fuel_consumed += report.fuel_consumed;
        self.memory_bytes = report.memory_bytes;
        let room = sandbox_protocol::MAX_FIGURES.saturating_sub(self.figures.len());
        self.figures.extend(report.figures.into_iter().take(room));
        let mut stderr = report.stderr;
        // A run stopped by the host, or ended by a trap the interpreter never saw (a stack
        // overflow), has no message of its own on stderr: the shell's user would see a status
        // and nothing else.
        if let Some(error) = &report.error
            && (matches!(
                error.kind,
                ErrorKind::Timeout | ErrorKind::Cancelled | ErrorKind::OutOfFuel
            ) || !String::from_utf8_lossy(&stderr).contains(error.message.as_str()))
        {
            stderr.extend_from_slice(format!("{}\n", error.message).as_bytes());
        }
        InterpreterRun {
            stdout: report.stdout,
            stderr,
            exit_code: report.exit_code,
        }
    }
}

impl Interpreters for WorkerInterpreters {
    fn run(
        &mut self,
        language: Language,
        code: &str,
        argv: &[String],
        stdin: &[u8],
    ) -> InterpreterRun {
        let (interpreter, left) = match self.refusal(language) {
            Ok(found) => found,
            Err(refused) => return refused,
        };
        self.runs += 1;
        let request = ExecuteRequest {
            execution_id: format!("{}/{}", self.parent, self.runs),
            code: code.to_owned(),
            fuel: self.fuel,
            timeout_ms: u64::try_from(left.as_millis()).unwrap_or(u64::MAX),
            kind: ExecutionKind::User,
            argv: argv.to_vec(),
            stdin: stdin.to_vec(),
        };
        // On this thread; the session's own interpreter is not involved.
        match interpreter.run(&request, self.control.clone()) {
            Ok(report) => self.account(report),
            Err(why) => InterpreterRun {
                stderr: format!("{}: {why}\n", language.as_str()).into_bytes(),
                exit_code: 127,
                ..InterpreterRun::default()
            },
        }
    }

    fn pip_install(&mut self, requirements: &[String]) -> InterpreterRun {
        InterpreterRun {
            stderr: format!(
                "pip install runs on the server, not inside a command line: call execute_command with just `pip install {}`, or the install_package tool\n",
                requirements.join(" ")
            )
            .into_bytes(),
            exit_code: 1,
            ..InterpreterRun::default()
        }
    }

    fn narrow_deadline(&mut self, deadline: Instant) -> Instant {
        std::mem::replace(&mut self.deadline, deadline)
    }

    fn toolbox(&self) -> Option<ToolBudget<'_>> {
        Some(ToolBudget {
            toolbox: self.toolbox.as_deref()?,
            deadline: self.deadline,
            cancel: &self.cancel,
            fuel: self.fuel.saturating_sub(self.fuel_consumed),
        })
    }

    fn tool_burnt(&mut self, fuel: u64) {
        self.fuel_consumed += fuel;
    }

    fn memory(&self) -> Option<shell::Memory> {
        let fresh = (self.interpreters.iter())
            .find(|i| i.language() == self.language)
            .or(self.interpreters.first())?;
        let (cap, available) = fresh.memory();
        Some(shell::Memory { cap, available })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use sandbox_protocol::{Restart, StateAfterRestart};

    use super::*;

    /// A session's `/app` in a temporary directory, with `t.py` in it.
    fn workspace() -> (tempfile::TempDir, FsView) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.py"), "print('from t')\n").unwrap();
        let fs = FsView {
            mounts: vec![crate::shell::Mount {
                guest: "/app".into(),
                host: dir.path().to_path_buf(),
                writable: true,
            }],
        };
        (dir, fs)
    }

    /// The fuel of a test command line: enough for the toolbox's `cat` of a small file.
    const COMMAND_FUEL: u64 = 1_000_000_000;

    fn request(line: &str) -> CommandRequest {
        CommandRequest {
            execution_id: "exec-cmd".into(),
            command: line.into(),
            fuel: COMMAND_FUEL,
            timeout_ms: 30_000,
        }
    }

    fn limits(deadline: Instant) -> ShellLimits {
        ShellLimits {
            stdout_cap: 1 << 20,
            stderr_cap: 1 << 20,
            deadline,
            cancel: Arc::new(AtomicBool::new(false)),
            quota: None,
        }
    }

    /// Runs `line` in a fresh shell over `fs` (its `/app` first) with the toolbox of
    /// `target/runtimes`, its interpreter runs going to `fresh`.
    fn run_line(
        line: &str,
        fs: &FsView,
        fresh: Arc<dyn FreshRuns>,
        limits: &ShellLimits,
    ) -> ExecutionReport {
        let command = request(line);
        let cancel = limits.cancel.clone();
        let config = SessionConfig {
            mounts: Vec::new(),
            memory_bytes: 256 << 20,
            stdout_cap: limits.stdout_cap,
            stderr_cap: limits.stderr_cap,
            quota: None,
            clock_since: None,
        };
        let toolbox = crate::toolbox::test_module().for_session(&fs.mounts[0].host, &config);
        let interpreters = WorkerInterpreters::new(&command, Language::Python, limits, cancel)
            .with_toolbox(Some(Arc::new(toolbox)))
            .with_interpreters(vec![fresh], Arc::default());
        run(
            &command,
            fs,
            &Mutex::new(ShellState::default()),
            interpreters,
            limits,
        )
    }

    /// A report for `request`, as the guest thread would send it.
    fn report_for(request: &ExecuteRequest, stdout: &str, fuel: u64) -> ExecutionReport {
        ExecutionReport {
            execution_id: request.execution_id.clone(),
            stdout: stdout.as_bytes().to_vec(),
            stderr: Vec::new(),
            stdout_truncated: false,
            stderr_truncated: false,
            exit_code: 0,
            result: None,
            error: None,
            fuel_consumed: fuel,
            duration_us: 10,
            memory_bytes: 7 << 20,
            restart: None,
            figures: Vec::new(),
            written: Vec::new(),
            state_follows: false,
        }
    }

    /// Stands in for fresh Python interpreters: answers every run with its closure and keeps
    /// the requests it saw.
    struct FakePython {
        answer: Box<dyn Fn(&ExecuteRequest) -> ExecutionReport + Send + Sync>,
        seen: Mutex<Vec<ExecuteRequest>>,
    }

    impl FreshRuns for FakePython {
        fn language(&self) -> Language {
            Language::Python
        }

        fn memory(&self) -> (u64, u64) {
            (256 << 20, 200 << 20)
        }

        fn run(
            &self,
            request: &ExecuteRequest,
            _control: Arc<Control>,
        ) -> Result<ExecutionReport, String> {
            self.seen.lock().unwrap().push(request.clone());
            Ok((self.answer)(request))
        }
    }

    /// A [`FakePython`] answering with `answer`.
    fn fake(
        answer: impl Fn(&ExecuteRequest) -> ExecutionReport + Send + Sync + 'static,
    ) -> Arc<FakePython> {
        Arc::new(FakePython {
            answer: Box::new(answer),
            seen: Mutex::default(),
        })
    }

    /// What `fake` was asked to run.
    fn seen(fake: &FakePython) -> Vec<ExecuteRequest> {
        fake.seen.lock().unwrap().clone()
    }

    /// Runs a command line in a Python session against `answer`.
    fn execute(
        line: &str,
        answer: impl Fn(&ExecuteRequest) -> ExecutionReport + Send + Sync + 'static,
    ) -> (ExecutionReport, Vec<ExecuteRequest>) {
        let (_dir, fs) = workspace();
        let python = fake(answer);
        let limits = limits(Instant::now() + Duration::from_secs(30));
        let report = run_line(line, &fs, python.clone(), &limits);
        (report, seen(&python))
    }

    #[test]
    fn interpreter_runs_are_children_of_the_command() {
        let (report, seen) = execute("python t.py one two; python -c 'print(2)'", |r| {
            report_for(r, &format!("{}\n", r.execution_id), 100)
        });
        assert_eq!(report.execution_id, "exec-cmd");
        assert!(report.error.is_none(), "{report:?}");
        assert_eq!(report.exit_code, 0);
        assert_eq!(report.stdout, b"exec-cmd/1\nexec-cmd/2\n");
        // The runs' fuel adds up, with what reading `t.py` inside the sandbox burnt (a toolbox
        // instance: thousands of units, not millions).
        let read = report.fuel_consumed - 200;
        assert!((1..10_000_000).contains(&read), "{}", report.fuel_consumed);
        assert_eq!(report.memory_bytes, 7 << 20);
        assert!(report.restart.is_none());
        let ids: Vec<&str> = seen.iter().map(|r| r.execution_id.as_str()).collect();
        assert_eq!(ids, ["exec-cmd/1", "exec-cmd/2"]);
        assert_eq!(seen[0].code, "print('from t')\n");
        assert_eq!(seen[0].argv, ["/app/t.py", "one", "two"]);
        assert_eq!(seen[1].code, "print(2)");
        assert_eq!(seen[1].argv, ["-c"]);
        for run in &seen {
            assert_eq!(run.fuel, COMMAND_FUEL, "each run gets the command's fuel");
            assert_eq!(run.kind, ExecutionKind::User);
            assert!(run.timeout_ms <= 30_000 && run.timeout_ms > 25_000);
        }
    }

    /// A run whose error the interpreter never printed (a trap: stack overflow) says it on
    /// the command's stderr; one it printed (a traceback) is not said twice.
    #[test]
    fn a_run_s_error_is_on_stderr_once() {
        let failed = |r: &ExecuteRequest, stderr: &[u8], kind, message: &str| ExecutionReport {
            stderr: stderr.to_vec(),
            exit_code: 1,
            error: Some(GuestError {
                kind,
                name: None,
                message: message.into(),
            }),
            ..report_for(r, "", 5)
        };
        let (report, _) = execute("python -c 'f()'; python -c '1/0'", move |r| {
            if r.code == "f()" {
                failed(
                    r,
                    b"",
                    ErrorKind::StackOverflow,
                    "maximum recursion (stack)",
                )
            } else {
                let traceback = b"Traceback\nZeroDivisionError: division by zero\n";
                failed(r, traceback, ErrorKind::Runtime, "division by zero")
            }
        });
        assert_eq!(
            String::from_utf8_lossy(&report.stderr),
            "maximum recursion (stack)\nTraceback\nZeroDivisionError: division by zero\n"
        );
    }

    #[test]
    fn a_failed_run_fails_the_command_and_restarts_nothing() {
        let (report, _) = execute("python t.py; echo after", |r| ExecutionReport {
            stderr: b"Traceback\n".to_vec(),
            exit_code: 1,
            error: Some(GuestError {
                kind: ErrorKind::Timeout,
                name: None,
                message: "the execution exceeded its 1.0 s timeout".into(),
            }),
            restart: Some(Restart {
                reason: "restarted".into(),
                state: StateAfterRestart::Lost,
            }),
            ..report_for(r, "", 9)
        });
        // The line goes on after a failed command (no `set -e`), and ends with `echo`'s status.
        assert_eq!(report.stdout, b"after\n");
        assert_eq!(
            report.stderr, b"Traceback\nthe execution exceeded its 1.0 s timeout\n",
            "the interpreter's own stop is explained on stderr"
        );
        assert_eq!(report.exit_code, 0);
        assert!(report.error.is_none());
        assert!(
            report.restart.is_none(),
            "a fresh interpreter's end is no restart of the session's"
        );

        let (report, _) = execute("python t.py", |r| ExecutionReport {
            exit_code: 3,
            error: Some(GuestError {
                kind: ErrorKind::Exit,
                name: Some("SystemExit".into()),
                message: "exit 3".into(),
            }),
            ..report_for(r, "", 1)
        });
        assert_eq!(report.exit_code, 3);
        let error = report.error.expect("a failed command");
        assert_eq!(error.kind, ErrorKind::CommandFailed);
        assert_eq!(error.message, "the command exited with status 3");
    }

    #[test]
    fn the_other_language_and_pip_are_refused_without_a_run() {
        let (report, seen) = execute("node -e '1'", |r| report_for(r, "", 0));
        assert!(seen.is_empty(), "nothing ran: {seen:?}");
        assert_eq!(report.exit_code, 127);
        assert_eq!(
            String::from_utf8_lossy(&report.stderr),
            "javascript: not available in this python session; run it in a javascript session (execute_code with language \"javascript\")\n"
        );
        assert_eq!(report.error.unwrap().kind, ErrorKind::CommandFailed);

        let (report, seen) = execute("pip install tabulate; echo next", |r| report_for(r, "", 0));
        assert!(seen.is_empty());
        assert!(
            String::from_utf8_lossy(&report.stderr).starts_with(
                "pip install runs on the server, not inside a command line: call execute_command with just `pip install tabulate`"
            ),
            "{report:?}"
        );
        assert_eq!(report.stdout, b"next\n");
    }

    /// A fresh interpreter that cannot start (no room, no module) says why on stderr, with
    /// the status of a command that could not run.
    #[test]
    fn an_interpreter_that_cannot_start_says_why() {
        struct Unstartable;
        impl FreshRuns for Unstartable {
            fn language(&self) -> Language {
                Language::Python
            }
            fn run(&self, _: &ExecuteRequest, _: Arc<Control>) -> Result<ExecutionReport, String> {
                Err("a fresh python interpreter has no room in this session".into())
            }
            fn memory(&self) -> (u64, u64) {
                (256 << 20, 0)
            }
        }
        let (_dir, fs) = workspace();
        let limits = limits(Instant::now() + Duration::from_secs(30));
        let report = run_line(
            "python t.py; echo status=$?",
            &fs,
            Arc::new(Unstartable),
            &limits,
        );
        assert_eq!(
            String::from_utf8_lossy(&report.stderr),
            "python: a fresh python interpreter has no room in this session\n"
        );
        assert_eq!(report.stdout, b"status=127\n");
    }

    #[test]
    fn shell_failures_map_to_their_error_kinds() {
        let (_dir, fs) = workspace();
        let cases: [(&str, Duration, bool, ErrorKind, i32); 4] = [
            (
                "echo 'open",
                Duration::from_secs(30),
                false,
                ErrorKind::Syntax,
                2,
            ),
            (
                "cat /etc/passwd",
                Duration::from_secs(30),
                false,
                ErrorKind::PathRestriction,
                1,
            ),
            (
                "python t.py",
                Duration::ZERO,
                false,
                ErrorKind::Timeout,
                shell::EXIT_TIMEOUT,
            ),
            (
                "sleep 5",
                Duration::from_secs(30),
                true,
                ErrorKind::Cancelled,
                shell::EXIT_CANCELLED,
            ),
        ];
        for (line, left, cancelled, kind, exit_code) in cases {
            let python = fake(|r| report_for(r, "ran\n", 1));
            let limits = limits(Instant::now() + left);
            limits.cancel.store(cancelled, Ordering::SeqCst);
            let report = run_line(line, &fs, python.clone(), &limits);
            let error = report.error.unwrap_or_else(|| panic!("{line}: no error"));
            assert_eq!(error.kind, kind, "{line}: {error:?}");
            assert_eq!(report.exit_code, exit_code, "{line}");
            assert!(seen(&python).is_empty(), "{line}: no interpreter ran");
        }
    }

    #[test]
    fn a_cancelled_command_starts_no_interpreter_run() {
        // What `Control::request_cancel` does when the command line is between two commands:
        // only the shell's flag can be set, since no interpreter run is current.
        let python = fake(|r| report_for(r, "ran\n", 1));
        let cancel = Arc::new(AtomicBool::new(true));
        let limits = limits(Instant::now() + Duration::from_secs(30));
        let mut interpreters =
            WorkerInterpreters::new(&request("python"), Language::Python, &limits, cancel)
                .with_interpreters(vec![python.clone()], Arc::default());
        let run = interpreters.run(Language::Python, "while True: pass", &[], &[]);
        assert!(
            seen(&python).is_empty(),
            "a cancelled command must not start a run nobody will cancel: {run:?}"
        );
    }
}
