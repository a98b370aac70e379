//! `execute_command` inside the worker: the shell (`shell/`) runs on a thread of its own over
//! the session's mounts, and every `python`/`node` it starts becomes a job for the guest thread,
//! so it runs in the session's own interpreter (same variables, same limits). The shell's cwd
//! and variables persist between commands of the session.

use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sandbox_protocol::{
    CommandRequest, ErrorKind, ExecuteRequest, ExecutionKind, ExecutionReport, GuestError,
    Language, Response,
};

use crate::host::Control;
use crate::serve::{Job, Reply, ServeArgs, send_frame};
use crate::shell::{
    self, FsView, InterpreterRun, Interpreters, MountPoint, ShellError, ShellLimits, ShellState,
};

/// Starts shell command lines for one session.
pub struct ShellRunner {
    fs: FsView,
    state: Arc<Mutex<ShellState>>,
    language: Language,
    stdout_cap: usize,
    stderr_cap: usize,
}

impl ShellRunner {
    pub fn new(args: &ServeArgs) -> Self {
        let mut mounts = vec![MountPoint {
            guest: "/app".into(),
            host: args.workspace.clone(),
            writable: true,
        }];
        mounts.extend(args.config.mounts.iter().map(|m| MountPoint {
            guest: m.guest.clone(),
            host: m.host.clone(),
            writable: m.writable,
        }));
        Self {
            fs: FsView { mounts },
            state: Arc::default(),
            language: args.language,
            stdout_cap: args.config.stdout_cap,
            stderr_cap: args.config.stderr_cap,
        }
    }

    /// Runs `command` on a new thread; its report goes straight to the supervisor.
    pub fn start(
        &mut self,
        command: CommandRequest,
        jobs: Sender<Job>,
        writer: Arc<Mutex<std::os::unix::net::UnixStream>>,
        control: Arc<Control>,
    ) {
        let cancel = control.start_shell(&command.execution_id);
        let (fs, state, language) = (self.fs.clone(), self.state.clone(), self.language);
        let limits = ShellLimits {
            stdout_cap: self.stdout_cap,
            stderr_cap: self.stderr_cap,
            deadline: Instant::now() + Duration::from_millis(command.timeout_ms),
            cancel: cancel.clone(),
        };
        let spawned = std::thread::Builder::new()
            .name("shell".into())
            .spawn(move || {
                let report = run(&command, &fs, &state, language, jobs, &limits, cancel);
                control.end_shell();
                if send_frame(&writer, &Response::Executed(report)).is_err() {
                    std::process::exit(0); // the supervisor is gone
                }
            });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start the shell thread");
        }
    }
}

fn run(
    command: &CommandRequest,
    fs: &FsView,
    state: &Mutex<ShellState>,
    language: Language,
    jobs: Sender<Job>,
    limits: &ShellLimits,
    cancel: Arc<AtomicBool>,
) -> ExecutionReport {
    let started = Instant::now();
    let mut interpreters = WorkerInterpreters {
        jobs,
        language,
        fuel: command.fuel,
        deadline: limits.deadline,
        parent: command.execution_id.clone(),
        runs: 0,
        fuel_consumed: 0,
        memory_bytes: 0,
        restart: None,
        _cancel: cancel,
    };
    let mut shell_state = state.lock().unwrap_or_else(|e| e.into_inner());
    let outcome = shell::execute(
        &command.command,
        fs,
        &mut shell_state,
        &mut interpreters,
        limits,
    );
    let error = match &outcome.error {
        Some(e) => Some(GuestError {
            kind: match e {
                ShellError::Syntax(_) => ErrorKind::Syntax,
                ShellError::Timeout => ErrorKind::Timeout,
                ShellError::Cancelled => ErrorKind::Cancelled,
                ShellError::PathRestriction(_) => ErrorKind::PathRestriction,
            },
            name: None,
            message: e.to_string(),
        }),
        None if outcome.exit_code != 0 => Some(GuestError {
            kind: ErrorKind::CommandFailed,
            name: None,
            message: format!("the command exited with status {}", outcome.exit_code),
        }),
        None => None,
    };
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
        restart: interpreters.restart,
    }
}

/// The shell's way into the session's interpreter.
struct WorkerInterpreters {
    jobs: Sender<Job>,
    language: Language,
    fuel: u64,
    deadline: Instant,
    /// The command's execution id; runs are `<parent>/<n>`, so a cancel of the command reaches
    /// the interpreter too.
    parent: String,
    runs: u32,
    fuel_consumed: u64,
    memory_bytes: u64,
    restart: Option<sandbox_protocol::Restart>,
    /// Kept so the flag lives as long as the command (the shell polls its own clone).
    _cancel: Arc<AtomicBool>,
}

impl Interpreters for WorkerInterpreters {
    fn run(
        &mut self,
        language: Language,
        code: &str,
        argv: &[String],
        stdin: &[u8],
    ) -> InterpreterRun {
        if language != self.language {
            let (wanted, have) = (language.as_str(), self.language.as_str());
            return InterpreterRun {
                stderr: format!(
                    "{wanted}: not available in this {have} session; run it in a {wanted} session (execute_code with language \"{wanted}\")\n"
                )
                .into_bytes(),
                exit_code: 127,
                ..InterpreterRun::default()
            };
        }
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return InterpreterRun {
                exit_code: shell::EXIT_TIMEOUT,
                ..InterpreterRun::default()
            };
        }
        self.runs += 1;
        let (reply, reports) = mpsc::channel();
        let request = ExecuteRequest {
            execution_id: format!("{}/{}", self.parent, self.runs),
            code: code.to_owned(),
            fuel: self.fuel,
            timeout_ms: u64::try_from(left.as_millis()).unwrap_or(u64::MAX),
            kind: ExecutionKind::User,
            argv: argv.to_vec(),
            stdin: stdin.to_vec(),
        };
        if self
            .jobs
            .send(Job {
                request,
                reply: Reply::Shell(reply),
            })
            .is_err()
        {
            return InterpreterRun {
                stderr: b"the interpreter is gone\n".to_vec(),
                exit_code: 1,
                ..InterpreterRun::default()
            };
        }
        let Ok(report) = reports.recv() else {
            return InterpreterRun {
                stderr: b"the interpreter is gone\n".to_vec(),
                exit_code: 1,
                ..InterpreterRun::default()
            };
        };
        self.fuel_consumed += report.fuel_consumed;
        self.memory_bytes = report.memory_bytes;
        if report.restart.is_some() {
            self.restart = report.restart.clone();
        }
        let mut stderr = report.stderr;
        if let Some(error) = &report.error {
            if matches!(
                error.kind,
                ErrorKind::Timeout | ErrorKind::Cancelled | ErrorKind::OutOfFuel
            ) {
                stderr.extend_from_slice(format!("{}\n", error.message).as_bytes());
            }
        }
        InterpreterRun {
            stdout: report.stdout,
            stderr,
            exit_code: report.exit_code,
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
}
