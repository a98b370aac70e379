//! A small POSIX-like shell for the `execute_command` tool, run host-side in the worker (not in
//! WebAssembly) over the session's files.
//!
//! It owns the command language, bash's as agents type it (tokens from [`lexer`], grammar in
//! [`parser`] with compound commands and functions, expansion in [`expand`] with patterns from
//! [`glob`] and arithmetic from [`arith`], execution in [`exec`] over the [`streams`]) and the
//! built-in commands that change its state or run other commands ([`builtins`]). Nothing else
//! of the host is reachable: there are no host programs; every command that touches files is a
//! WebAssembly tool of the toolbox, which runs inside the sandbox where WASI resolves its
//! paths, and is reached, like the interpreters, through the [`Interpreters`] the worker passes
//! in. What the language itself does with files (redirections, globs, `test`, `cd`, `source`)
//! and the toolbox's two mode calls go through [`guest_fs`], the only host code on guest paths:
//! it refuses anything
//! outside the mounts, writes to read-only mounts, and symlinks leading out, and does every
//! operation through a handle on the mount's root (never through a host path); and no message
//! ever contains a host path.
//!
//! Output is capped like the interpreters' (truncation is flagged, never an error); the deadline
//! and the cancel flag are checked between commands, at every iteration of a shell loop, and
//! inside every built-in loop that can be long. Parsing is linear and its nesting bounded, and so
//! is execution (functions, substitutions, scripts), so no script can overflow the shell
//! thread's stack or run past its deadline.
//! Everything a command adds to `/app` and `/tmp` (files, directories, links, bytes), through
//! its tools or the shell's own redirections (both WASI), is charged to the session's disk quota
//! first by the WASI layer, and a refusal makes the outcome `disk_quota`.

/// The directories above the mounts: the toolbox's rule, so that the shell and `sandbox-files`
/// show the same ones.
#[path = "../../../runtimes/toolbox/src/above_mounts.rs"]
mod above_mounts;
mod arith;
mod arrays;
mod builtins;
mod exec;
mod expand;
mod files;
/// Shell patterns: the toolbox's matcher, so that the shell and `find -name` match alike.
#[path = "../../../runtimes/toolbox/src/glob.rs"]
mod glob;
mod guest_fs;
/// Guest paths made absolute: the toolbox's rule, so that the shell and `sandbox-files` agree.
#[path = "../../../runtimes/toolbox/src/guest_path.rs"]
mod guest_path;
mod lexer;
mod parser;
mod streams;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use sandbox_protocol::Language;

use crate::host::SharedFileModes;
use crate::quota::{self, SharedQuota};
use crate::toolbox::{ToolCall, ToolEnd, ToolRun, Toolbox};
pub use arrays::Arrays;
use exec::{Abort, Shell};

/// Exit status of a command line stopped at its deadline (as `timeout(1)`).
pub const EXIT_TIMEOUT: i32 = 124;

/// Exit status of a cancelled command line (as after SIGINT).
pub const EXIT_CANCELLED: i32 = 130;

/// Exit status of a script with a syntax error (as bash).
pub const EXIT_SYNTAX: i32 = 2;

/// Exit status when a built-in panicked (EX_SOFTWARE); the outcome then has no `error`, only
/// this status and a message on stderr.
pub const EXIT_INTERNAL: i32 = 70;

/// One guest-visible directory tree (`/app`, `/tmp`, `/data`, `/shared`) and where it lives on
/// the host.
pub use sandbox_protocol::Mount;

/// The guest's view of the filesystem: `/app` is read-write and the home and initial cwd.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FsView {
    pub mounts: Vec<Mount>,
}

impl FsView {
    /// A session's view: its workspace as `/app`, then its other mounts.
    pub fn of_session(workspace: &std::path::Path, mounts: &[Mount]) -> Self {
        let app = Mount {
            guest: "/app".into(),
            host: workspace.to_path_buf(),
            writable: true,
        };
        Self {
            mounts: std::iter::once(app).chain(mounts.iter().cloned()).collect(),
        }
    }

    /// The permission bits of this view's files, as an interpreter's `host.call` asks for them
    /// (the mounts are opened at the first question, so a session that never asks opens
    /// nothing).
    pub fn file_modes(self) -> SharedFileModes {
        Arc::new(guest_fs::LazyFs::new(self))
    }
}

/// State that persists between `execute_command` calls of one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellState {
    /// Guest path of the working directory; starts at `/app`.
    pub cwd: String,
    /// Shell variables (all exported: `env` shows them).
    pub vars: BTreeMap<String, String>,
    /// Indexed arrays: their elements past 0 (element 0 is the variable in `vars`).
    pub arrays: Arrays,
    /// Background jobs (`cmd &`), for `$!`, `wait` and `kill`.
    pub(crate) jobs: builtins::Jobs,
    /// `alias` definitions (listed, never expanded).
    pub(crate) aliases: builtins::Aliases,
}

impl Default for ShellState {
    fn default() -> Self {
        let vars = [
            ("HOME", "/app"),
            ("PWD", "/app"),
            // Cosmetic: there are no host programs; `/bin/NAME` runs the built-in or tool NAME.
            ("PATH", "/bin"),
            ("LANG", "C.UTF-8"),
            // What `whoami`, `uname -n` and `type sh` say.
            ("USER", "somebody"),
            ("HOSTNAME", "localhost"),
            ("SHELL", "/bin/sh"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        Self {
            cwd: "/app".into(),
            vars,
            arrays: Arrays::default(),
            jobs: builtins::Jobs::default(),
            aliases: builtins::Aliases::default(),
        }
    }
}

/// The memory a program the shell starts may use (`free`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Memory {
    /// The session's memory cap, which each fresh interpreter has.
    pub cap: u64,
    /// What a fresh interpreter may have of it now.
    pub available: u64,
}

/// What a command that needs an interpreter asks of the worker.
pub trait Interpreters {
    /// `python FILE [ARGS]`, `python -c CODE [ARGS]`, `node|qjs FILE`, `node|qjs -e CODE`: run
    /// `code` in a fresh interpreter of `language` over the session's files (never the
    /// session's persistent one, as a real shell starts a new process), with `argv`
    /// (`sys.argv` / `scriptArgs`) and the piped `stdin` bytes.
    fn run(
        &mut self,
        language: Language,
        code: &str,
        argv: &[String],
        stdin: &[u8],
    ) -> InterpreterRun;

    /// `pip install NAME[==VER] ...`: the session's `install_package`.
    fn pip_install(&mut self, requirements: &[String]) -> InterpreterRun;

    /// The session's toolbox of WebAssembly commands ([`crate::toolbox`]), with what a command
    /// of it may use now; `None` for a session without one.
    fn toolbox(&self) -> Option<ToolBudget<'_>> {
        None
    }

    /// Counts the fuel a command of the toolbox burnt against the command line's.
    fn tool_burnt(&mut self, _fuel: u64) {}

    /// The memory a fresh interpreter may use; `None` when the session runs none.
    fn memory(&self) -> Option<Memory> {
        None
    }

    /// Makes `deadline` the one its runs and tools stop at (`timeout`'s, never later than the
    /// command line's); returns the one it replaces, to put back.
    fn narrow_deadline(&mut self, deadline: Instant) -> Instant {
        deadline
    }

    /// Whether `name` is one of the session's WebAssembly commands.
    fn has_tool(&self, name: &str) -> bool {
        self.has_toolbox() && Toolbox::has(name)
    }

    /// Whether the session has the toolbox at all.
    fn has_toolbox(&self) -> bool {
        self.toolbox().is_some()
    }

    /// Runs one of the session's WebAssembly commands: `argv` (`argv[0]` is its name) in the
    /// working directory `cwd`, with the shell's variables `env` and the piped `stdin`; when its
    /// stdout is a pipe, `pipe_room` is what the pipe still takes (see
    /// [`ToolCall::pipe_room`]); `modes` answers its questions about permission bits.
    fn run_tool(
        &mut self,
        argv: &[String],
        cwd: &str,
        env: &[(String, String)],
        stdin: &[u8],
        pipe_room: Option<usize>,
        modes: SharedFileModes,
    ) -> ToolRun {
        self.run_tool_as(argv, (cwd, env, stdin, pipe_room), modes, false)
    }

    /// [`Interpreters::run_tool`] for writing back what a redirection gathered (`argv` is
    /// `sandbox-files append`), or removing what `<(...)` wrote: it runs even when the call was stopped (a timeout, a cancel, its
    /// fuel spent), with [`WRITE_BACK_GRACE`] past the deadline and fuel of its own, as what a
    /// killed process wrote is in its file.
    fn write_back(
        &mut self,
        argv: &[String],
        cwd: &str,
        data: &[u8],
        modes: SharedFileModes,
    ) -> ToolRun {
        self.run_tool_as(argv, (cwd, &[], data, None), modes, true)
    }

    /// [`Interpreters::run_tool`], or [`Interpreters::write_back`] when `writing_back`.
    fn run_tool_as(
        &mut self,
        argv: &[String],
        (cwd, env, stdin, pipe_room): (&str, &[(String, String)], &[u8], Option<usize>),
        modes: SharedFileModes,
        writing_back: bool,
    ) -> ToolRun {
        let never = Arc::new(AtomicBool::new(false));
        let ran = match self.toolbox() {
            Some(budget) => budget.toolbox.run(&ToolCall {
                argv,
                cwd,
                env,
                stdin,
                pipe_room,
                modes: Some(modes),
                deadline: if writing_back {
                    budget.deadline.max(Instant::now() + WRITE_BACK_GRACE)
                } else {
                    budget.deadline
                },
                cancel: if writing_back { &never } else { budget.cancel },
                fuel: if writing_back {
                    WRITE_BACK_FUEL
                } else {
                    budget.fuel
                },
            }),
            None => ToolRun {
                stdout: Vec::new(),
                stderr: format!("{}: this server has no toolbox\n", argv[0]).into_bytes(),
                end: ToolEnd::Exited(127),
                fuel_consumed: 0,
                read_all: false,
            },
        };
        self.tool_burnt(ran.fuel_consumed);
        ran
    }
}

/// How long past the call's deadline a redirection's gathered output may still be written.
const WRITE_BACK_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// The fuel of writing back one redirection's output (at most 32 MiB: far below this).
const WRITE_BACK_FUEL: u64 = 20_000_000_000;

/// What a command of the toolbox may use: the session's toolbox, and the command line's
/// deadline, cancel flag and fuel left.
#[derive(Debug)]
pub struct ToolBudget<'a> {
    pub toolbox: &'a Toolbox,
    pub deadline: Instant,
    pub cancel: &'a Arc<AtomicBool>,
    pub fuel: u64,
}

/// The result of one interpreter run or package install.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InterpreterRun {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub exit_code: i32,
}

/// The bounds of one `execute` call.
#[derive(Debug, Clone)]
pub struct ShellLimits {
    /// Bytes of stdout kept; the rest is dropped and flagged.
    pub stdout_cap: usize,
    pub stderr_cap: usize,
    /// When the command line is stopped ([`ShellError::Timeout`]).
    pub deadline: Instant,
    /// Set by the worker to stop the command line ([`ShellError::Cancelled`]).
    pub cancel: Arc<AtomicBool>,
    /// The session's disk quota, charged for what commands write into `/app` and `/tmp`.
    pub quota: Option<SharedQuota>,
}

/// What went wrong with a command line as a whole (a command failing is just its exit code).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShellError {
    #[error("syntax error: {0}")]
    Syntax(String),
    #[error("the command line timed out")]
    Timeout,
    #[error("the command line was cancelled")]
    Cancelled,
    /// The first path refused by confinement, in guest form.
    #[error("path_restriction: {0} is outside the sandbox's mounts or not writable")]
    PathRestriction(String),
    /// A write the disk quota refused: the refusal, with the quota's numbers.
    #[error("{0}")]
    DiskQuota(String),
}

impl ShellError {
    /// A stable name for the error, for structured results (`syntax_error`, `timeout`,
    /// `cancelled`, `path_restriction`, `disk_quota`).
    pub fn kind(&self) -> &'static str {
        match self {
            ShellError::Syntax(_) => "syntax_error",
            ShellError::Timeout => "timeout",
            ShellError::Cancelled => "cancelled",
            ShellError::PathRestriction(_) => "path_restriction",
            ShellError::DiskQuota(_) => "disk_quota",
        }
    }
}

/// The result of one `execute` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellOutcome {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    /// The last command's status, like bash (124 on timeout, 130 on cancel, 2 on syntax errors).
    pub exit_code: i32,
    /// Syntax error, timeout or cancel; otherwise the first confinement refusal, if any, else
    /// the last disk quota refusal (the script went on after it, like after any failing
    /// command).
    pub error: Option<ShellError>,
}

/// Runs a command line over the session's files. `state` keeps the cwd and variables for the
/// next call; a multi-stage pipeline's changes do not persist (bash runs those in subshells).
pub fn execute(
    script: &str,
    fs: &FsView,
    state: &mut ShellState,
    interpreters: &mut dyn Interpreters,
    limits: &ShellLimits,
) -> ShellOutcome {
    let parsed = match parser::parse(script) {
        Ok(p) => p,
        Err(msg) => return syntax_error(msg, limits),
    };
    // Refusals of this call, including those of interpreter runs it makes, are the ones after
    // this mark.
    let quota_mark = limits.quota.as_ref().map(|q| quota::lock(q).refusals());
    let fs = Arc::new(guest_fs::Fs::new(fs));
    state.jobs.new_call();
    let mut shell = Shell::new(fs, state, interpreters, limits);
    // A panic in a built-in must not take the worker (and the session's interpreter) down with
    // it. The shell's state is plain data, so what a half-run command left behind is consistent
    // enough to report and go on.
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let result = shell.check().and_then(|()| shell.run_lines(&parsed));
        shell.run_exit_trap(result)
    }));
    shell.remove_temporaries(0);
    let (exit_code, error) = match run {
        Ok(Ok(code) | Err(Abort::Exit(code) | Abort::Return(code))) => {
            let refused = limits.quota.as_ref().zip(quota_mark).and_then(|(q, mark)| {
                let q = quota::lock(q);
                q.refusal_since(mark)
                    .map(|r| ShellError::DiskQuota(r.to_string()))
            });
            // A command line whose writes were refused failed, even when the command that
            // wrote (a producer cut short) did not say so.
            let code = if refused.is_some() && code == 0 {
                1
            } else {
                code
            };
            let restricted = shell.restriction.take().map(ShellError::PathRestriction);
            (code, restricted.or(refused))
        }
        // `break` and `continue` refuse to run outside a loop, and the command line's lines
        // take an abandoned line's end, so these never get here.
        Ok(Err(Abort::Break(_) | Abort::Continue(_) | Abort::Line)) => (shell.status, None),
        Ok(Err(Abort::Timeout)) => {
            shell.io.write(
                streams::Target::Stderr,
                b"sh: timed out: the command line ran past its deadline\n",
            );
            (EXIT_TIMEOUT, Some(ShellError::Timeout))
        }
        Ok(Err(Abort::Cancelled)) => {
            shell.io.write(streams::Target::Stderr, b"sh: cancelled\n");
            (EXIT_CANCELLED, Some(ShellError::Cancelled))
        }
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".into());
            shell.io.write(
                streams::Target::Stderr,
                format!("sh: internal error: {msg}\n").as_bytes(),
            );
            (EXIT_INTERNAL, None)
        }
    };
    shell.close_all_files();
    ShellOutcome {
        stdout: std::mem::take(&mut shell.io.stdout.buf),
        stderr: std::mem::take(&mut shell.io.stderr.buf),
        stdout_truncated: shell.io.stdout.truncated,
        stderr_truncated: shell.io.stderr.truncated,
        exit_code,
        error,
    }
}

/// The outcome of a script that did not parse: nothing ran.
fn syntax_error(msg: String, limits: &ShellLimits) -> ShellOutcome {
    let mut stderr = format!("sh: {msg}\n").into_bytes();
    let truncated = stderr.len() > limits.stderr_cap;
    stderr.truncate(limits.stderr_cap);
    ShellOutcome {
        stdout: Vec::new(),
        stderr,
        stdout_truncated: false,
        stderr_truncated: truncated,
        exit_code: EXIT_SYNTAX,
        error: Some(ShellError::Syntax(msg)),
    }
}

#[cfg(test)]
pub(crate) mod tests;
