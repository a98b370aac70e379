//! Runs a parsed script: and/or lists, pipelines, compound commands (groups, subshells, `if`,
//! loops, `case`, `((...))`, `[[ ... ]]`), functions, redirections and assignments, and hands
//! each simple command to its built-in with a [`Ctx`] holding where its stdin, stdout and
//! stderr go. Word expansion calls back into the shell through [`Env`] for variables and
//! command substitution.
//!
//! Pipeline stages run one after another; each stage's stdout is buffered (up to [`PIPE_CAP`])
//! and becomes the next stage's stdin. A full buffer tells the producer to stop, which is how
//! `seq 1 1e12 | head -1` ends (like SIGPIPE: a WebAssembly tool ends at its first write past
//! it, status 141, a loop of the shell at its next iteration); a consumer that then reads the
//! whole cut input gets a warning, so no silent data loss. Multi-stage pipelines, `( ... )` and `$(...)` run in a copy
//! of the shell's state (variables, cwd, functions, options, positional parameters), as bash
//! runs them in subshells (`cd x | cat` does not change directory).
//!
//! The deadline and cancel flag are checked before every command ([`Shell::check`]), at every
//! loop iteration, and by built-ins inside their loops; they end the whole script with
//! [`Abort`]. `break`, `continue` and `return` travel up as [`Abort`] too, to the loop or
//! function that takes them. Nesting at run time is bounded: functions by [`MAX_FUNCTION_DEPTH`],
//! commands running commands by [`MAX_NESTING`], scripts by [`MAX_DEPTH`], and all of it
//! together by the native stack it may use ([`MAX_STACK`]).
//!
//! `set -e` follows POSIX: a failure does not stop the script inside the condition of `if`,
//! `while` or `until`, in any but the last command of `&&`/`||`, or under `!`; that holds for
//! everything such a command runs (function bodies included).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Display;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::arrays::Elements;
use super::builtins;
use super::expand::{self, Env, Error as ExpandError, MAX_EXPANSION, Unmatched};
use super::glob::Glob;
use super::guest_fs::{Access, Fs, FsError, Resolved};
use super::lexer::Word;
use super::parser::{
    self, AndOr, ArrayAssign, ArrayValue, CaseEnd, Command, Compound, Cond, Connector, Function,
    Pipeline, Redirect, RedirectKind, Script, Simple,
};
use super::streams::{Io, PIPE_CAP};
// The built-ins reach the streams through here, with the shell they belong to.
pub(crate) use super::streams::{Input, Target};
use super::{Arrays, Interpreters, ShellLimits, ShellState};

/// The most a built-in reads whole into memory (a script or program file, `pip install -r`).
pub(crate) const MAX_READ: u64 = PIPE_CAP as u64;

/// How deep `sh FILE`, `sh -c`, `source` and `./script` may nest (a script running itself).
pub(crate) const MAX_DEPTH: usize = 8;

/// How deep commands may run other commands (`env env ...`, `xargs xargs ...`, scripts): each
/// level is native stack, and overflowing it would kill the worker.
pub(crate) const MAX_NESTING: usize = 64;

/// How deep functions may call functions (bash's `FUNCNEST`): a runaway recursion ends with a
/// message instead of taking the worker's stack.
pub(crate) const MAX_FUNCTION_DEPTH: usize = 100;

/// Native stack the shell may use below where it started: the shell thread has 2 MiB, and a
/// WebAssembly tool or interpreter call at the deepest point needs room of its own. Every
/// compound command and function call checks it, so no combination of nesting (functions in
/// loops in substitutions in `eval`...) can overflow.
const MAX_STACK: usize = 900 << 10;

/// Most bytes all shell variables may hold together; they persist in the session.
pub(crate) const MAX_VARS: usize = 32 << 20;

/// What stops a script (or part of it) early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Abort {
    Timeout,
    Cancelled,
    /// The `exit` built-in, with its status.
    Exit(i32),
    /// `return N`: ends the running function or sourced script.
    Return(i32),
    /// `break N`: ends N enclosing loops.
    Break(usize),
    /// `continue N`: ends N-1 enclosing loops and goes on with the next iteration of the Nth.
    Continue(usize),
    /// An assignment to a read-only variable (`x=2`, `x[1]=2`, not `x=2 cmd`): as in bash,
    /// the rest of the line being run is abandoned with status 1, whatever loops and
    /// functions it was in; the script (or `eval`, or sourced file) goes on at its next line,
    /// and a subshell (whatever `eval` or sourced file inside) ends with status 1.
    Line,
}

/// `set` options. They last for one call (a session-wide `set -e` would make later, unrelated
/// calls stop at their first failure), and a child shell (`sh -c`, `sh FILE`) starts without.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Options {
    /// `-e`: stop at the first failing command (outside conditions, `&&`/`||` lists and `!`).
    pub errexit: bool,
    /// `-o pipefail`: a pipeline fails when any stage fails.
    pub pipefail: bool,
    /// `-x`: print each command, expanded, on stderr.
    pub xtrace: bool,
    /// `-u`: expanding an unset variable (not `$@`, not `${X:-...}`) ends the script.
    pub nounset: bool,
    /// `shopt -s nullglob`: a pattern that matches nothing expands to nothing.
    pub nullglob: bool,
    /// `shopt -s failglob`: a pattern that matches nothing fails its command.
    pub failglob: bool,
}

/// A command's assignments, expanded.
type Assignments = Vec<(String, String)>;

/// The variables `local` saved in one function call, to put back when it returns (with the
/// elements past 0 of an array).
pub(crate) type LocalFrame = Vec<(String, Option<String>, Option<BTreeMap<usize, String>>)>;

/// What a subshell restores when it ends.
struct Saved {
    state: ShellState,
    options: Options,
    functions: HashMap<String, Rc<Function>>,
    positional: Vec<String>,
    locals: Vec<LocalFrame>,
}

/// The interpreter of one `execute` call.
pub(crate) struct Shell<'a> {
    /// Shared with the toolbox's commands, which look modes up through it (`sandbox.file_mode`).
    pub fs: Arc<Fs>,
    pub state: &'a mut ShellState,
    pub interpreters: &'a mut dyn Interpreters,
    limits: &'a ShellLimits,
    pub io: Io,
    /// `$?`.
    pub status: i32,
    /// `$0`, `$1`, ... of the running script or function.
    pub positional: Vec<String>,
    /// The first guest path refused by confinement.
    pub restriction: Option<String>,
    /// Script nesting (`sh`, `source`), bounded by [`MAX_DEPTH`].
    depth: usize,
    /// Command nesting, bounded by [`MAX_NESTING`].
    nesting: usize,
    /// `set` options, for this call (and inherited by `source`, not by child shells).
    pub options: Options,
    /// Functions defined in this call (they do not persist between calls).
    pub functions: HashMap<String, Rc<Function>>,
    /// One frame per running function call, for `local`.
    pub locals: Vec<LocalFrame>,
    /// Loops running around the current command (`break` and `continue` need one).
    pub loops: usize,
    /// Functions and sourced scripts running (`return` needs one).
    pub returnable: usize,
    /// While above zero, `set -e` does not stop the script (conditions, `&&`/`||`, `!`).
    errexit_off: usize,
    /// Variables made read-only (`readonly`, `declare -r`) in this call.
    pub readonly: HashSet<String>,
    /// Variables given the integer attribute (`declare -i`) in this call: what is assigned to
    /// them is evaluated as arithmetic.
    pub integers: HashSet<String>,
    /// `pushd`'s remembered directories, oldest first (for the call, as `set`'s options).
    pub dir_stack: Vec<String>,
    /// A running `timeout`'s deadline (see [`Shell::deadline`]).
    pub inner_deadline: Option<Instant>,
    /// Subshells running around the current command: an expansion error (`${X:?}`, `set -u`)
    /// ends a subshell with status 1 but the shell itself with 127, as in bash.
    subshells: usize,
    /// Where `getopts` is inside a cluster of options (`-ab`): the `OPTIND` it was at and the
    /// character it reads next.
    pub getopts_at: (usize, usize),
    /// The status of the last command substitution, for a command that is only assignments.
    subst_status: Option<i32>,
    /// Where the stack was when the shell started (see [`MAX_STACK`]).
    stack_base: usize,
    /// Where the running script's commands read and write unless redirected: the outcome's
    /// streams at top level, the calling command's inside `sh FILE` or a redirected compound
    /// command.
    base_in: Input,
    base_out: Target,
    pub(super) base_err: Target,
    /// The script's descriptors 3 to 9 (`exec 3> log`, a block's `3>&1`).
    extra_fds: ExtraFds,
    /// When the shell started (`$SECONDS`).
    started: Instant,
    /// `$RANDOM`'s generator (xorshift32, never 0): seeded from the clock, or by assigning
    /// `RANDOM=N` for a repeatable sequence, as in bash.
    random: u32,
    /// `trap`'s commands by signal number ([`EXIT_TRAP`], [`ERR_TRAP`] or a signal's): `EXIT`'s
    /// runs when the script, its subshell or child shell ends, `ERR`'s after a command fails
    /// where `set -e` would stop (outside functions, as bash without `set -E`); signals never
    /// reach the sandbox's shell, so their traps are kept for `trap -p` and never run.
    pub traps: BTreeMap<u32, String>,
    /// This call already listed the commands there are after a "command not found": later
    /// ones say only that, as bash does.
    pub listed_commands: bool,
}

/// [`Shell::traps`]' key for `trap ... EXIT` (bash's signal 0).
pub(crate) const EXIT_TRAP: u32 = 0;
/// [`Shell::traps`]' key for `trap ... ERR`, after every signal's (bash lists it last).
pub(crate) const ERR_TRAP: u32 = 1000;

/// The address of a local of the caller's frame: how deep the stack is.
#[inline(never)]
fn stack_position() -> usize {
    let marker = 0u8;
    std::ptr::addr_of!(marker) as usize
}

impl<'a> Shell<'a> {
    pub(crate) fn new(
        fs: Arc<Fs>,
        state: &'a mut ShellState,
        interpreters: &'a mut dyn Interpreters,
        limits: &'a ShellLimits,
    ) -> Self {
        Self {
            fs,
            state,
            interpreters,
            limits,
            io: Io::new(limits.stdout_cap, limits.stderr_cap),
            status: 0,
            positional: vec!["sh".into()],
            restriction: None,
            depth: 0,
            nesting: 0,
            options: Options::default(),
            functions: HashMap::new(),
            locals: Vec::new(),
            loops: 0,
            returnable: 0,
            errexit_off: 0,
            readonly: HashSet::new(),
            integers: HashSet::new(),
            dir_stack: Vec::new(),
            inner_deadline: None,
            subshells: 0,
            getopts_at: (0, 0),
            subst_status: None,
            stack_base: stack_position(),
            base_in: Input::default(),
            base_out: Target::Stdout,
            base_err: Target::Stderr,
            extra_fds: ExtraFds::default(),
            started: Instant::now(),
            random: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.subsec_nanos() | 1),
            traps: BTreeMap::new(),
            listed_commands: false,
        }
    }

    /// Errors out once the deadline passed or the call was cancelled.
    ///
    /// # Errors
    /// [`Abort::Cancelled`] or [`Abort::Timeout`].
    pub(crate) fn check(&self) -> Result<(), Abort> {
        if self.limits.cancel.load(Ordering::Relaxed) {
            return Err(Abort::Cancelled);
        }
        if Instant::now() >= self.deadline() {
            return Err(Abort::Timeout);
        }
        Ok(())
    }

    /// Whether the shell may nest one level deeper (see [`MAX_STACK`]); a message when not.
    fn room_to_nest(&mut self) -> bool {
        if stack_position().abs_diff(self.stack_base) < MAX_STACK {
            return true;
        }
        self.io
            .write(self.base_err, b"sh: nested too deeply (out of stack)\n");
        false
    }

    /// Remembers the first confinement refusal.
    pub(crate) fn record(&mut self, e: &FsError) {
        if let Some(p) = e.restricted()
            && self.restriction.is_none()
        {
            self.restriction = Some(p.to_string());
        }
    }

    /// `sh: msg` on the current stderr.
    fn complain(&mut self, msg: impl Display) {
        let line = format!("sh: {msg}\n");
        self.io.write(self.base_err, line.as_bytes());
    }

    /// What a failed expansion means for the command: status 1, or the end of the script.
    fn expansion_failed(&mut self, e: ExpandError) -> Result<i32, Abort> {
        match e {
            ExpandError::Stopped(a) => Err(a),
            // bash (not in POSIX mode) abandons the rest of the line being run.
            ExpandError::Fatal(msg) => {
                self.complain(msg);
                Err(Abort::Line)
            }
            ExpandError::Unset(msg) => {
                self.complain(msg);
                Err(Abort::Exit(if self.subshells > 0 { 1 } else { 127 }))
            }
            other => {
                self.complain(other);
                Ok(1)
            }
        }
    }

    pub(crate) fn run_script(&mut self, script: &Script) -> Result<i32, Abort> {
        for item in &script.items {
            self.run_item(item)?;
        }
        Ok(self.status)
    }

    /// One and/or list of a script, in the foreground or (`&`) in the background.
    fn run_item(&mut self, item: &AndOr) -> Result<i32, Abort> {
        if item.background {
            self.run_background(item)
        } else {
            self.run_and_or(item)
        }
    }

    /// `list &`: an asynchronous list. The worker runs one command at a time, so it runs to
    /// completion here, as bash runs one: in a subshell, `set -e` not reacting to it, its
    /// stdin the script's (empty, as bash's `/dev/null` for a job at the top; a pipe or a
    /// redirection around it, as in bash). The line goes on with status 0 and `$!` set;
    /// `wait` gives the job's status (see `builtins::jobs`).
    fn run_background(&mut self, list: &AndOr) -> Result<i32, Abort> {
        let status = self.subshell(|sh| sh.run_and_or(list))?;
        self.state.jobs.ended(status);
        self.status = 0;
        Ok(0)
    }

    /// Runs a script read line by line (the command line, a sourced file, `eval`'s text): an
    /// [`Abort::Line`] abandons the rest of its line only, with status 1; inside a subshell
    /// it ends the subshell, as in bash.
    pub(crate) fn run_lines(&mut self, script: &Script) -> Result<i32, Abort> {
        let mut items = script.items.iter();
        while let Some(item) = items.next() {
            if let Err(abort) = self.run_item(item) {
                if abort != Abort::Line || self.subshells > 0 {
                    return Err(abort);
                }
                self.status = 1;
                if !item.ends_line {
                    items.by_ref().find(|rest| rest.ends_line);
                }
            }
        }
        Ok(self.status)
    }

    /// Runs `script` as a condition (`if`, `while`): `set -e` does not apply inside.
    fn run_condition(&mut self, script: &Script) -> Result<i32, Abort> {
        self.errexit_off += 1;
        let result = self.run_script(script);
        self.errexit_off -= 1;
        result
    }

    fn run_and_or(&mut self, list: &AndOr) -> Result<i32, Abort> {
        // `set -e` only reacts to the last pipeline of a list, and not to a negated one.
        let shielded = !list.rest.is_empty() || list.first.negated;
        self.status = self.run_pipeline(&list.first, shielded)?;
        let mut final_ran = !shielded;
        for (i, (connector, pipeline)) in list.rest.iter().enumerate() {
            let run = match connector {
                Connector::And => self.status == 0,
                Connector::Or => self.status != 0,
            };
            if run {
                let shielded = i + 1 < list.rest.len() || pipeline.negated;
                self.status = self.run_pipeline(pipeline, shielded)?;
                final_ran = !shielded;
            }
        }
        if self.errexit_off == 0 && final_ran && self.status != 0 {
            let last = list.rest.last().map_or(&list.first, |(_, p)| p);
            if reports_its_own_failure(last) {
                self.run_err_trap()?;
            }
            if self.options.errexit {
                return Err(Abort::Exit(self.status));
            }
        }
        Ok(self.status)
    }

    /// Runs the `ERR` trap for the command that just failed (not inside a function: bash
    /// without `set -E`); `$?` is the failure's before, during and after it.
    fn run_err_trap(&mut self) -> Result<(), Abort> {
        if !self.locals.is_empty() {
            return Ok(());
        }
        // Not again for a failure inside the trap itself.
        let Some(action) = self.traps.remove(&ERR_TRAP) else {
            return Ok(());
        };
        let status = self.status;
        let streams = (self.base_in.clone(), self.base_out, self.base_err);
        let result = self.eval(&action, streams);
        self.traps.entry(ERR_TRAP).or_insert(action);
        self.status = status;
        result.map(drop)
    }

    /// Runs the `EXIT` trap, when one is set, as the script (or subshell, or child shell)
    /// ends with `result`: with `$?` its status, and an `exit N` in the trap is the status
    /// then. A deadline or cancel ends everything at once.
    pub(crate) fn run_exit_trap(&mut self, result: Result<i32, Abort>) -> Result<i32, Abort> {
        let status = match &result {
            Ok(code) | Err(Abort::Exit(code) | Abort::Return(code)) => *code,
            Err(Abort::Break(_) | Abort::Continue(_)) => self.status,
            Err(Abort::Line) => 1,
            Err(Abort::Timeout | Abort::Cancelled) => return result,
        };
        let Some(action) = self.traps.remove(&EXIT_TRAP) else {
            return result;
        };
        self.status = status;
        let streams = (self.base_in.clone(), self.base_out, self.base_err);
        match self.eval(&action, streams) {
            Err(stop @ (Abort::Exit(_) | Abort::Timeout | Abort::Cancelled)) => Err(stop),
            _ => {
                self.status = status;
                result
            }
        }
    }

    fn run_pipeline(&mut self, p: &Pipeline, shielded: bool) -> Result<i32, Abort> {
        let Some(posix) = p.timed else {
            return self.run_pipeline_itself(p, shielded);
        };
        let (wall, cpu) = (Instant::now(), process_cpu_time());
        let result = self.run_pipeline_itself(p, shielded);
        let (real, cpu) = (wall.elapsed(), process_cpu_time().saturating_sub(cpu));
        // The worker's CPU time (its interpreters and tools included) is one clock here:
        // it is all `user`.
        let times = [("real", real), ("user", cpu), ("sys", Duration::ZERO)];
        let text: String = if posix {
            (times.iter())
                .map(|(name, t)| format!("{name} {:.2}\n", t.as_secs_f64()))
                .collect()
        } else {
            let lines = times.iter().map(|(name, t)| {
                let secs = t.as_secs_f64();
                format!("{name}\t{}m{:.3}s\n", (secs / 60.0).floor(), secs % 60.0)
            });
            std::iter::once("\n".to_owned()).chain(lines).collect()
        };
        self.io.write(self.base_err, text.as_bytes());
        result
    }

    fn run_pipeline_itself(&mut self, p: &Pipeline, shielded: bool) -> Result<i32, Abort> {
        self.errexit_off += usize::from(shielded);
        let result = if let [only] = p.commands.as_slice() {
            self.run_command(only, self.base_in.clone(), self.base_out)
        } else {
            self.subshell(|sh| sh.run_stages(&p.commands))
        };
        self.errexit_off -= usize::from(shielded);
        let status = result?;
        Ok(if p.negated {
            i32::from(status == 0)
        } else {
            status
        })
    }

    fn run_stages(&mut self, commands: &[Command]) -> Result<i32, Abort> {
        let mut input = self.base_in.clone();
        let mut status = 0;
        for (i, cmd) in commands.iter().enumerate() {
            let last = i + 1 == commands.len();
            let out = if last {
                self.base_out
            } else {
                self.io.open_pipe()
            };
            // Each stage is a subshell: `exit` (or `break`...) ends only that stage.
            let result = ended_subshell(self.run_command(cmd, input, out));
            input = if last {
                Input::default()
            } else {
                self.io.close_pipe()
            };
            let code = result?;
            // `set -o pipefail`: the last stage that failed decides.
            if !self.options.pipefail || code != 0 {
                status = code;
            }
        }
        Ok(status)
    }

    /// Runs `f` in a copy of the shell's state, as bash runs a subshell: variables, cwd,
    /// functions, options and positional parameters come back as they were, and `exit` ends
    /// only the subshell.
    fn subshell(&mut self, f: impl FnOnce(&mut Self) -> Result<i32, Abort>) -> Result<i32, Abort> {
        let saved = Saved {
            state: self.state.clone(),
            options: self.options,
            functions: self.functions.clone(),
            positional: self.positional.clone(),
            locals: self.locals.clone(),
        };
        // What `exec` redirects inside ends with it.
        let streams = (self.base_in.clone(), self.base_out, self.base_err);
        let extra = self.extra_fds.clone();
        let files = self.io.file_count();
        // A subshell starts without the caller's traps and runs its own `EXIT` trap.
        let traps = std::mem::take(&mut self.traps);
        self.subshells += 1;
        let result = f(self);
        let result = self.run_exit_trap(result);
        self.subshells -= 1;
        self.traps = traps;
        *self.state = saved.state;
        self.options = saved.options;
        self.functions = saved.functions;
        self.positional = saved.positional;
        self.locals = saved.locals;
        (self.base_in, self.base_out, self.base_err) = streams;
        self.extra_fds = extra;
        self.close_files_kept_since(files);
        ended_subshell(result)
    }

    /// Runs `f` with the script's default streams set to these (a redirected compound command,
    /// a pipeline stage, a substitution), and puts the old ones back. A frame that changes no
    /// stream has nothing to put back: what `exec` redirected inside it (in an `if`, a loop, a
    /// function) stays, as in bash.
    fn with_streams<T>(
        &mut self,
        streams: (Input, Target, Target),
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let unchanged = streams.0.same(&self.base_in)
            && streams.1 == self.base_out
            && streams.2 == self.base_err;
        let saved = (
            std::mem::replace(&mut self.base_in, streams.0),
            std::mem::replace(&mut self.base_out, streams.1),
            std::mem::replace(&mut self.base_err, streams.2),
        );
        let result = f(self);
        if !unchanged {
            (self.base_in, self.base_out, self.base_err) = saved;
        }
        result
    }

    /// The session's disk quota, when it has one (`df`).
    pub(crate) fn quota(&self) -> Option<&crate::quota::SharedQuota> {
        self.limits.quota.as_ref()
    }

    /// What descriptor `fd` reads, when it is open for reading (`read -u`).
    pub(crate) fn input_fd(&self, fd: u32, stdin: &Input) -> Option<Input> {
        match fd {
            0 => Some(stdin.clone()),
            1 | 2 => None,
            n => match self.extra_fds.get(n as usize - 3)? {
                Some(Fd::In(input)) => Some(input.clone()),
                _ => None,
            },
        }
    }

    /// `exec` with redirections only: they become the script's default streams (and its
    /// descriptors 3 to 9), and a file they opened stays open to the end of the call.
    fn exec_streams(&mut self, fds: Fds) {
        let extra = fds.extra.iter().flatten();
        for fd in extra.chain([&Fd::Out(fds.out), &Fd::Out(fds.err)]) {
            if let Fd::Out(t) = fd {
                self.io.keep_open(*t);
            }
        }
        (self.base_in, self.base_out, self.base_err) = (fds.stdin, fds.out, fds.err);
        self.extra_fds = fds.extra;
    }

    fn run_command(&mut self, cmd: &Command, stdin: Input, out: Target) -> Result<i32, Abort> {
        // The files of its `<(...)` and `>(...)` go when the command ends (a loop makes no pile
        // of them), once each `>(...)` has read what the command wrote into its file.
        let (temporaries, readers) = (self.io.temporaries.len(), self.io.readers.len());
        let result = self.run_command_itself(cmd, stdin, out);
        let read = match result {
            Ok(_) => self.run_readers(readers, out),
            Err(_) => Ok(()),
        };
        self.io.readers.truncate(readers);
        self.remove_temporaries(temporaries);
        let status = result?;
        read?;
        Ok(status)
    }

    /// Runs the `>(...)` made since `mark`, oldest first, each reading what the command wrote
    /// into its file, with the streams the command had before its own redirections (bash
    /// expands them first: `tee >(wc -l) > copy` counts on the shell's stdout). `$?` stays
    /// the command's.
    fn run_readers(&mut self, mark: usize, out: Target) -> Result<(), Abort> {
        let readers = self.io.readers.split_off(mark.min(self.io.readers.len()));
        let (status, subst_status) = (self.status, self.subst_status);
        for (path, script) in readers {
            self.check()?;
            if !self.room_to_nest() {
                break;
            }
            let stdin = match self.read_file(&path, PIPE_CAP as u64) {
                Ok((data, truncated)) => Input::new(data, truncated),
                Err(e) => {
                    self.redirect_error(&path, &e);
                    continue;
                }
            };
            let streams = (stdin, out, self.base_err);
            let saved_loops = std::mem::take(&mut self.loops);
            let saved_returnable = std::mem::take(&mut self.returnable);
            let result = self.with_streams(streams, |sh| sh.subshell(|sh| sh.run_script(&script)));
            self.loops = saved_loops;
            self.returnable = saved_returnable;
            result?;
        }
        (self.status, self.subst_status) = (status, subst_status);
        Ok(())
    }

    fn run_command_itself(
        &mut self,
        cmd: &Command,
        stdin: Input,
        out: Target,
    ) -> Result<i32, Abort> {
        match cmd {
            Command::Simple(simple) => self.run_simple(simple, stdin, out),
            Command::Function(f) => {
                self.functions.insert(f.name.clone(), Rc::clone(f));
                Ok(0)
            }
            Command::Compound { body, redirects } => {
                self.check()?;
                if !self.room_to_nest() {
                    return Ok(126);
                }
                let mark = self.io.file_count();
                let mut fds = Fds {
                    stdin,
                    out,
                    err: self.base_err,
                    extra: self.extra_fds.clone(),
                };
                let result = match self.apply_redirects(redirects, &mut fds) {
                    Ok(true) => {
                        let streams = (fds.stdin, fds.out, fds.err);
                        // The block's own descriptors 3 to 9, put back after it as bash's undo
                        // does (a block without redirections keeps what `exec` opened in it).
                        let extra = std::mem::replace(&mut self.extra_fds, fds.extra);
                        let result = self.with_streams(streams, |sh| sh.run_compound(body));
                        if !redirects.is_empty() {
                            self.extra_fds = extra;
                        }
                        result
                    }
                    Ok(false) => Ok(1),
                    Err(e) => Err(e),
                };
                self.close_files(mark);
                result
            }
        }
    }

    fn run_compound(&mut self, body: &Compound) -> Result<i32, Abort> {
        match body {
            Compound::Group(script) => self.run_script(script),
            Compound::Subshell(script) => self.subshell(|sh| sh.run_script(script)),
            Compound::If {
                branches,
                otherwise,
            } => {
                for (cond, then) in branches {
                    if self.run_condition(cond)? == 0 {
                        return self.run_script(then);
                    }
                }
                match otherwise {
                    Some(script) => self.run_script(script),
                    None => Ok(0),
                }
            }
            Compound::For { var, words, body } => {
                let items = match words {
                    Some(words) => {
                        let mut items = Vec::new();
                        for w in words {
                            match expand::fields(w, self) {
                                Ok(f) => items.extend(f),
                                Err(e) => return self.expansion_failed(e),
                            }
                        }
                        items
                    }
                    None => self.positional.get(1..).unwrap_or_default().to_vec(),
                };
                self.run_loop(body, |sh, n| {
                    let Some(item) = items.get(n) else {
                        return Ok(false);
                    };
                    Ok(sh.set_var(var, item.clone()))
                })
            }
            Compound::ArithFor {
                init,
                cond,
                step,
                body,
            } => {
                if self.arith_command(init)?.is_none() {
                    return Ok(1);
                }
                self.run_loop(body, |sh, n| {
                    if n > 0 && sh.arith_command(step)?.is_none() {
                        return Ok(false);
                    }
                    if cond.parts.is_empty() {
                        return Ok(true);
                    }
                    Ok(sh.arith_command(cond)?.is_some_and(|v| v != 0))
                })
            }
            Compound::Loop { until, cond, body } => self.run_loop(body, |sh, _| {
                let status = sh.run_condition(cond)?;
                Ok((status == 0) != *until)
            }),
            Compound::Case { word, arms } => {
                let subject = match expand::text(word, self) {
                    Ok(s) => s,
                    Err(e) => return self.expansion_failed(e),
                };
                let mut status = 0;
                let mut fall_into = false;
                for arm in arms {
                    let mut hit = fall_into;
                    for p in &arm.patterns {
                        if hit {
                            break;
                        }
                        let pattern = match expand::pattern(p, self) {
                            Ok(p) => p,
                            Err(e) => return self.expansion_failed(e),
                        };
                        hit = Glob::new(&pattern, false).matches(&subject);
                    }
                    if !hit {
                        continue;
                    }
                    status = if arm.body.items.is_empty() {
                        0
                    } else {
                        self.run_script(&arm.body)?
                    };
                    match arm.end {
                        CaseEnd::Break => break,
                        CaseEnd::FallThrough => fall_into = true,
                        CaseEnd::TryNext => fall_into = false,
                    }
                }
                Ok(status)
            }
            Compound::Arith(expr) => Ok(match self.arith_command(expr)? {
                Some(v) => i32::from(v == 0),
                None => 1,
            }),
            Compound::Cond(cond) => match self.eval_cond(cond) {
                Ok(true) => Ok(0),
                Ok(false) => Ok(1),
                Err(CondError::Expand(e)) => self.expansion_failed(e),
                Err(CondError::Message(msg)) => {
                    self.complain(msg);
                    Ok(2)
                }
            },
        }
    }

    /// The value of an arithmetic word; `None` after a message when it is not a valid
    /// expression (the command then fails, and the script goes on, as with bash's `((...))`).
    fn arith_command(&mut self, expr: &Word) -> Result<Option<i64>, Abort> {
        match expand::arithmetic(expr, self) {
            Ok(v) => Ok(Some(v)),
            Err(ExpandError::Stopped(a)) => Err(a),
            Err(e) => {
                self.complain(e);
                Ok(None)
            }
        }
    }

    /// Runs a loop: `next(shell, n)` says whether iteration `n` runs (and sets it up), then
    /// `body` runs. The deadline is checked at every iteration; `break` and `continue` end
    /// here or travel on to an outer loop.
    fn run_loop(
        &mut self,
        body: &Script,
        mut next: impl FnMut(&mut Self, usize) -> Result<bool, Abort>,
    ) -> Result<i32, Abort> {
        self.loops += 1;
        let result = (|| {
            let mut status = 0;
            let mut n = 0;
            loop {
                self.check()?;
                if self.io.pipe_full(self.base_out) {
                    // The reader will see no more: bash's loop would die of SIGPIPE here.
                    return Ok(141);
                }
                let go = match next(self, n) {
                    Ok(go) => go,
                    Err(Abort::Break(1)) => return Ok(0),
                    Err(Abort::Break(k)) => return Err(Abort::Break(k - 1)),
                    Err(Abort::Continue(1)) => {
                        n += 1;
                        continue;
                    }
                    Err(Abort::Continue(k)) => return Err(Abort::Continue(k - 1)),
                    Err(other) => return Err(other),
                };
                if !go {
                    return Ok(status);
                }
                n += 1;
                match self.run_script(body) {
                    Ok(s) => status = s,
                    Err(Abort::Break(1)) => return Ok(0),
                    Err(Abort::Break(k)) => return Err(Abort::Break(k - 1)),
                    Err(Abort::Continue(1)) => status = 0,
                    Err(Abort::Continue(k)) => return Err(Abort::Continue(k - 1)),
                    Err(other) => return Err(other),
                }
            }
        })();
        self.loops -= 1;
        result
    }

    /// Evaluates `[[ ... ]]`.
    fn eval_cond(&mut self, cond: &Cond) -> Result<bool, CondError> {
        Ok(match cond {
            Cond::Or(a, b) => self.eval_cond(a)? || self.eval_cond(b)?,
            Cond::And(a, b) => self.eval_cond(a)? && self.eval_cond(b)?,
            Cond::Not(a) => !self.eval_cond(a)?,
            Cond::Word(w) => !expand::text(w, self)?.is_empty(),
            Cond::Unary(op, w) => {
                let arg = expand::text(w, self)?;
                if op == "-v" {
                    return Ok(self.state.vars.contains_key(&arg));
                }
                let mut ctx = self.ctx("[[");
                builtins::unary_test(&mut ctx, op, &arg)
            }
            Cond::Binary(a, op, b) => {
                let left = expand::text(a, self)?;
                match op.as_str() {
                    "==" | "=" | "!=" => {
                        let pattern = expand::pattern(b, self)?;
                        let hit = Glob::new(&pattern, false).matches(&left);
                        hit == (op != "!=")
                    }
                    "=~" => {
                        let source = expand::regex(b, self)?;
                        let re = regex::Regex::new(&source).map_err(|e| {
                            CondError::Message(format!("[[: invalid regular expression: {e}"))
                        })?;
                        re.is_match(&left)
                    }
                    _ => {
                        let right = expand::text(b, self)?;
                        let mut ctx = self.ctx("[[");
                        builtins::binary_test(&mut ctx, &left, op, &right)
                            .map_err(CondError::Message)?
                    }
                }
            }
        })
    }

    /// A context for a built-in helper run on the script's own streams.
    fn ctx(&mut self, name: &str) -> Ctx<'_, 'a> {
        let (out, err, stdin) = (self.base_out, self.base_err, self.base_in.clone());
        Ctx {
            sh: self,
            out,
            err,
            stdin,
            name: name.into(),
        }
    }

    /// Expands a command's words and assignment values, within [`MAX_EXPANSION`] together.
    fn expand_command(&mut self, cmd: &Simple) -> Result<(Vec<String>, Assignments), ExpandError> {
        let mut size = 0;
        let mut argv: Vec<String> = Vec::new();
        for w in &cmd.words {
            // `local x=$y`, `export x=$y` and `declare x=$y` take their assignments whole, as
            // bash does.
            let declaration = argv.first().is_some_and(|name| {
                matches!(
                    name.as_str(),
                    "local" | "export" | "readonly" | "declare" | "typeset"
                )
            });
            let expanded = if declaration && parser::assignment_word(w) {
                vec![expand::text(w, self)?]
            } else {
                expand::fields(w, self)?
            };
            for f in expanded {
                size += f.len();
                if size > MAX_EXPANSION {
                    return Err(ExpandError::TooLong);
                }
                argv.push(f);
            }
        }
        let mut assigns = Vec::new();
        for (k, v) in &cmd.assigns {
            let v = expand::text(v, self)?;
            size += v.len();
            if size > MAX_EXPANSION {
                return Err(ExpandError::TooLong);
            }
            assigns.push((k.clone(), v));
        }
        Ok((argv, assigns))
    }

    fn run_simple(&mut self, cmd: &Simple, stdin: Input, out: Target) -> Result<i32, Abort> {
        self.check()?;
        self.subst_status = None;
        let (argv, assigns) = match self.expand_command(cmd) {
            Ok(x) => x,
            Err(e) => return self.expansion_failed(e),
        };
        if self.options.xtrace {
            let words: Vec<String> = assigns
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .chain(argv.iter().cloned())
                .collect();
            let line = format!("+ {}\n", words.join(" "));
            self.io.write(self.base_err, line.as_bytes());
        }
        let mark = self.io.file_count();
        let mut fds = Fds {
            stdin,
            out,
            err: self.base_err,
            extra: self.extra_fds.clone(),
        };
        let redirected = match self.apply_redirects(&cmd.redirects, &mut fds) {
            Ok(r) => r,
            Err(e) => {
                self.close_files(mark);
                return Err(e);
            }
        };
        let result = if !redirected {
            Ok(1)
        } else if argv.len() == 1 && argv[0] == "exec" && !self.functions.contains_key("exec") {
            // `exec` with redirections only: they are the script's from here on.
            self.exec_streams(fds);
            self.close_files(mark);
            return Ok(self.subst_status.unwrap_or(0));
        } else if argv.is_empty() {
            // Assigning a read-only variable abandons the rest of the line, as in bash; the
            // assignments before it hold.
            let readonly = |k: &String| self.readonly.contains(k) && k != "RANDOM";
            let refused = (assigns.iter().map(|(k, _)| k))
                .chain(cmd.arrays.iter().map(|a| &a.name))
                .find(|k| readonly(k))
                .cloned();
            let mut status = self.subst_status.unwrap_or(0);
            for (k, v) in assigns {
                if refused.as_ref() == Some(&k) {
                    break;
                }
                if !self.set_var(&k, v) {
                    status = 1;
                }
            }
            if let Some(k) = refused {
                self.complain(format_args!("{k}: readonly variable"));
                self.close_files(mark);
                return Err(Abort::Line);
            }
            match self.assign_arrays(&cmd.arrays, &[]) {
                Ok(true) => Ok(self.subst_status.map_or(status, |s| s.max(status))),
                Ok(false) => Ok(1),
                Err(e) => self.expansion_failed(e),
            }
        } else if !self.room_for(&assigns) {
            Ok(1)
        } else if !cmd.arrays.is_empty() {
            Ok(self.refuse_array_prefix())
        } else {
            // `NAME=value cmd`: the values only hold for that command.
            let saved: Vec<(String, Option<String>)> = assigns
                .iter()
                .map(|(k, _)| (k.clone(), self.state.vars.get(k).cloned()))
                .collect();
            for (k, v) in assigns {
                // A read-only name keeps its value: bash complains and runs the command.
                if self.readonly.contains(&k) {
                    self.complain(format_args!("{k}: readonly variable"));
                } else {
                    self.state.vars.insert(k, v);
                }
            }
            // Names of `readonly NAME=(...)` and `declare -r NAME=(...)` that were not
            // read-only before: the command's own list still assigns them.
            let made_readonly: Vec<String> = (cmd.declared.iter())
                .map(|list| list.name.clone())
                .filter(|name| !self.readonly.contains(name))
                .collect();
            // The command's descriptors 3 to 9 (`f 3> log`, `read -u 3 x 3< f`) for its run.
            let extra = std::mem::replace(&mut self.extra_fds, fds.extra);
            let mut result = match self.functions.get(&argv[0]).cloned() {
                Some(f) => self.call_function(&f, &argv, (fds.stdin.clone(), fds.out, fds.err)),
                None => self.run_argv(&argv, fds.out, fds.err, fds.stdin.clone()),
            };
            self.extra_fds = extra;
            // `declare -a NAME=(...)`: the list, once `declare` made NAME (local, say).
            if matches!(result, Ok(0)) && !cmd.declared.is_empty() {
                result = match self.assign_arrays(&cmd.declared, &made_readonly) {
                    Ok(true) => Ok(0),
                    Ok(false) => Ok(1),
                    Err(e) => self.expansion_failed(e),
                };
            }
            for (k, old) in saved {
                match old {
                    Some(v) => self.state.vars.insert(k, v),
                    None => self.state.vars.remove(&k),
                };
            }
            if fds.stdin.truncated && fds.stdin.was_consumed() {
                let msg = format!(
                    "sh: warning: the input of {} was cut at {} MiB (pipe limit); its result is incomplete\n",
                    argv[0],
                    PIPE_CAP >> 20
                );
                self.io.write(self.base_err, msg.as_bytes());
            }
            result
        };
        self.close_files(mark);
        result
    }

    /// Calls a function: `argv[1..]` become `$1`..., `local` variables and the positional
    /// parameters come back when it returns.
    fn call_function(
        &mut self,
        f: &Function,
        argv: &[String],
        streams: (Input, Target, Target),
    ) -> Result<i32, Abort> {
        if self.locals.len() >= MAX_FUNCTION_DEPTH {
            let msg = format!(
                "sh: {}: maximum function nesting level exceeded ({MAX_FUNCTION_DEPTH})\n",
                f.name
            );
            self.io.write(streams.2, msg.as_bytes());
            return Ok(1);
        }
        if !self.room_to_nest() {
            return Ok(126);
        }
        let zero = self
            .positional
            .first()
            .cloned()
            .unwrap_or_else(|| "sh".into());
        let args = std::iter::once(zero)
            .chain(argv[1..].iter().cloned())
            .collect();
        let saved_positional = std::mem::replace(&mut self.positional, args);
        let saved_loops = std::mem::take(&mut self.loops);
        self.locals.push(Vec::new());
        self.returnable += 1;
        let result = self.with_streams(streams, |sh| {
            let (stdin, out) = (sh.base_in.clone(), sh.base_out);
            sh.run_command(&f.body, stdin, out)
        });
        self.returnable -= 1;
        if let Some(frame) = self.locals.pop() {
            for (name, old, elements) in frame.into_iter().rev() {
                self.state.arrays.restore(&name, elements);
                match old {
                    Some(v) => self.state.vars.insert(name, v),
                    None => self.state.vars.remove(&name),
                };
            }
        }
        self.loops = saved_loops;
        self.positional = saved_positional;
        match result {
            Err(Abort::Return(code)) => Ok(code),
            other => other,
        }
    }

    /// `$(...)`: runs `script` in a subshell with its stdout captured.
    fn capture(&mut self, script: &Script) -> Result<Vec<u8>, Abort> {
        self.check()?;
        if !self.room_to_nest() {
            return Ok(Vec::new());
        }
        let pipe = self.io.open_pipe();
        let streams = (self.base_in.clone(), pipe, self.base_err);
        let saved_loops = std::mem::take(&mut self.loops);
        let saved_returnable = std::mem::take(&mut self.returnable);
        let result = self.with_streams(streams, |sh| {
            sh.subshell(|sh| {
                // bash runs substitutions without `set -e` (unless in POSIX mode).
                sh.options.errexit = false;
                sh.run_script(script)
            })
        });
        self.loops = saved_loops;
        self.returnable = saved_returnable;
        let captured = self.io.close_pipe();
        let status = result?;
        // `$?` is the substitution's status for the rest of the command's expansions (bash).
        self.subst_status = Some(status);
        self.status = status;
        Ok(captured.all().to_vec())
    }

    /// Runs `eval`'s text in this shell.
    ///
    /// # Errors
    /// As [`Shell::run_argv`].
    pub(crate) fn eval(&mut self, src: &str, fds: (Input, Target, Target)) -> Result<i32, Abort> {
        if !self.room_to_nest() {
            return Ok(126);
        }
        let script = match parser::parse(src) {
            Ok(s) => s,
            Err(msg) => {
                self.io
                    .write(fds.2, format!("sh: eval: {msg}\n").as_bytes());
                return Ok(2);
            }
        };
        self.with_streams(fds, |sh| sh.run_lines(&script))
    }

    /// When commands stop: the command line's deadline, or a running `timeout`'s before it.
    pub(crate) fn deadline(&self) -> Instant {
        self.inner_deadline.map_or(self.limits.deadline, |inner| {
            inner.min(self.limits.deadline)
        })
    }

    /// bash's dynamic variables, computed when read.
    fn dynamic_var(&mut self, name: &str) -> Option<String> {
        let since_epoch = || {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
        };
        Some(match name {
            "RANDOM" => {
                let mut x = self.random;
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                self.random = x;
                (x % 32768).to_string()
            }
            "SECONDS" => self.started.elapsed().as_secs().to_string(),
            "EPOCHSECONDS" => since_epoch().as_secs().to_string(),
            "EPOCHREALTIME" => {
                let t = since_epoch();
                format!("{}.{:06}", t.as_secs(), t.subsec_micros())
            }
            // There is no process to name: fixed, harmless values (as `$$`).
            "BASHPID" => "1".into(),
            "PPID" => "0".into(),
            _ => return None,
        })
    }

    /// A variable's value, the dynamic ones included.
    pub(crate) fn var(&mut self, name: &str) -> Option<String> {
        self.dynamic_var(name)
            .or_else(|| self.state.vars.get(name).cloned())
    }

    /// Sets a shell variable; `false` (after a message) when it is read-only or the variables
    /// would hold more than [`MAX_VARS`].
    pub(crate) fn set_var(&mut self, name: &str, value: String) -> bool {
        if self.readonly.contains(name) && name != "RANDOM" {
            self.complain(format_args!("{name}: readonly variable"));
            return false;
        }
        self.store_var(name, value)
    }

    /// [`Shell::set_var`] once the caller has checked that `name` may be assigned.
    fn store_var(&mut self, name: &str, value: String) -> bool {
        if name == "RANDOM" {
            // Seeds the sequence (bash); xorshift needs a state other than 0.
            self.random = value.trim().parse::<i64>().map_or(1, |n| (n as u32) | 1);
            return true;
        }
        let Some(value) = self.integer_checked(name, value) else {
            return false;
        };
        if !self.room_for(&[(name.to_string(), value.clone())]) {
            return false;
        }
        self.state.vars.insert(name.to_string(), value);
        true
    }

    /// `value` as `name` takes it: evaluated as arithmetic when `name` has the integer
    /// attribute (each of its elements, for an array), as is otherwise; `None` after a message
    /// when it does not evaluate.
    fn integer_checked(&mut self, name: &str, value: String) -> Option<String> {
        if !self.integers.contains(name) {
            return Some(value);
        }
        match super::arith::eval(&value, self) {
            Ok(n) => Some(n.to_string()),
            Err(why) => {
                self.complain(format_args!("{value}: {why}"));
                None
            }
        }
    }

    /// `a[1]=x cmd`: bash's meaning is murky; refused.
    fn refuse_array_prefix(&mut self) -> i32 {
        self.complain("an array assignment before a command is not supported");
        2
    }

    /// Runs a command's array assignments; `false` (after a message) when one failed.
    /// `made_readonly`: names the command itself just made read-only (`readonly a=(...)`),
    /// which its own list still assigns.
    fn assign_arrays(
        &mut self,
        list: &[ArrayAssign],
        made_readonly: &[String],
    ) -> Result<bool, ExpandError> {
        let mut ok = true;
        for a in list {
            if self.readonly.contains(&a.name) && !made_readonly.contains(&a.name) {
                self.complain(format_args!("{}: readonly variable", a.name));
                ok = false;
                continue;
            }
            match &a.value {
                ArrayValue::Element(index, word) => {
                    let i = expand::arithmetic(index, self)?;
                    let value = expand::text(word, self)?;
                    let Some(at) = self.element_index(&a.name, i) else {
                        self.complain(format_args!("{}[{i}]: bad array subscript", a.name));
                        ok = false;
                        continue;
                    };
                    let value = match a.append {
                        true => self.element(&a.name, at).unwrap_or_default() + &value,
                        false => value,
                    };
                    ok &= self.store_element(&a.name, at, value);
                }
                ArrayValue::List(items) => {
                    let mut values: Vec<(Option<usize>, String)> = Vec::new();
                    let mut size = 0;
                    for (index, word) in items {
                        let index = match index {
                            Some(w) => {
                                let i = expand::arithmetic(w, self)?;
                                match usize::try_from(i) {
                                    Ok(i) => Some(i),
                                    Err(_) => {
                                        return Err(ExpandError::Failed(format!(
                                            "{}[{i}]: bad array subscript",
                                            a.name
                                        )));
                                    }
                                }
                            }
                            None => None,
                        };
                        let expanded = match index {
                            Some(_) => vec![expand::text(word, self)?],
                            None => expand::fields(word, self)?,
                        };
                        for (n, v) in expanded.into_iter().enumerate() {
                            size += v.len();
                            if size > MAX_EXPANSION {
                                return Err(ExpandError::TooLong);
                            }
                            values.push((index.filter(|_| n == 0), v));
                        }
                    }
                    let mut next = if a.append {
                        self.last_index(&a.name).map_or(0, |i| i + 1)
                    } else {
                        self.state.vars.remove(&a.name);
                        self.state.arrays.remove(&a.name);
                        0
                    };
                    self.state.arrays.declare(&a.name);
                    for (index, v) in values {
                        let at = index.unwrap_or(next);
                        if !self.store_element(&a.name, at, v) {
                            ok = false;
                            break;
                        }
                        next = at + 1;
                    }
                }
            }
        }
        Ok(ok)
    }

    /// Where subscript `i` of `name` points (negative counts back from its end); `None` before
    /// its start.
    pub(crate) fn element_index(&mut self, name: &str, i: i64) -> Option<usize> {
        if i >= 0 {
            return usize::try_from(i).ok();
        }
        let end = self.last_index(name).map_or(0, |l| l as i64 + 1);
        usize::try_from(end + i).ok()
    }

    /// The highest index set in `name`.
    fn last_index(&mut self, name: &str) -> Option<usize> {
        self.array_values(name).last()
    }

    /// Element `at` of `name` (element 0 is the variable).
    pub(crate) fn element(&mut self, name: &str, at: usize) -> Option<String> {
        self.array_values(name).get(at).map(str::to_owned)
    }

    /// The elements of `name`: the one reader of arrays, which joins the variable (element 0)
    /// with the elements past 0 kept in [`Arrays`].
    pub(crate) fn array_values(&mut self, name: &str) -> Elements<'_> {
        let first = self.var(name);
        self.state.arrays.elements(name, first)
    }

    /// Sets element `at` of `name` (making it an array past 0); `false` after a message when
    /// it is read-only or the variables would hold more than [`MAX_VARS`].
    pub(crate) fn set_element(&mut self, name: &str, at: usize, value: String) -> bool {
        if self.readonly.contains(name) {
            self.complain(format_args!("{name}: readonly variable"));
            return false;
        }
        self.store_element(name, at, value)
    }

    /// [`Shell::set_element`] once the caller has checked that `name` may be assigned.
    fn store_element(&mut self, name: &str, at: usize, value: String) -> bool {
        if at == 0 {
            return self.store_var(name, value);
        }
        let Some(value) = self.integer_checked(name, value) else {
            return false;
        };
        let vars: usize = self.state.vars.iter().map(|(k, v)| k.len() + v.len()).sum();
        let after = self.state.arrays.bytes() - self.state.arrays.size_of(name, at)
            + Arrays::element_size(&value)
            + name.len();
        if vars + after > MAX_VARS {
            self.too_large();
            return false;
        }
        self.state.arrays.set(name, at, value);
        true
    }

    /// Makes `name` the array of `values` (from index 0), as `mapfile` and `read -a` do;
    /// `false` after a message when it cannot take them.
    pub(crate) fn fill_array(&mut self, name: &str, values: Vec<String>) -> bool {
        if self.readonly.contains(name) {
            self.complain(format_args!("{name}: readonly variable"));
            return false;
        }
        self.unset_var(name);
        self.state.arrays.declare(name);
        for (i, v) in values.into_iter().enumerate() {
            if !self.set_element(name, i, v) {
                return false;
            }
        }
        true
    }

    /// Unsets `name` whole: the variable and its elements.
    pub(crate) fn unset_var(&mut self, name: &str) {
        self.state.vars.remove(name);
        self.state.arrays.remove(name);
    }

    fn too_large(&mut self) {
        let msg = format!(
            "sh: variables too large (over {} MiB together)\n",
            MAX_VARS >> 20
        );
        self.io.write(self.base_err, msg.as_bytes());
    }

    /// Whether the variables can take these values (replacing their current ones).
    fn room_for(&mut self, assigns: &[(String, String)]) -> bool {
        let current: usize = self
            .state
            .vars
            .iter()
            .map(|(k, v)| k.len() + v.len())
            .sum::<usize>()
            + self.state.arrays.bytes();
        let replaced: usize = assigns
            .iter()
            .filter_map(|(k, _)| self.state.vars.get(k).map(|v| k.len() + v.len()))
            .sum();
        let added: usize = assigns.iter().map(|(k, v)| k.len() + v.len()).sum();
        if current - replaced.min(current) + added <= MAX_VARS {
            return true;
        }
        self.too_large();
        false
    }

    /// The path a redirection names; `Ok(None)` after a message when it is not one word.
    fn redirect_path(&mut self, w: &Word) -> Result<Option<String>, Abort> {
        let fields = match expand::fields(w, self) {
            Ok(f) => f,
            Err(e) => return self.expansion_failed(e).map(|_| None),
        };
        if let [one] = fields.as_slice() {
            return Ok(Some(one.clone()));
        }
        let text = expand::text(w, self).unwrap_or_default();
        self.complain(format_args!("{text}: ambiguous redirect"));
        Ok(None)
    }

    /// Applies redirections left to right; `false` (after a message) when one fails.
    fn apply_redirects(&mut self, redirects: &[Redirect], fds: &mut Fds) -> Result<bool, Abort> {
        for r in redirects {
            if self.apply_redirect(r, fds)?.is_none() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// One redirection; `None` (after a message) when it fails.
    fn apply_redirect(&mut self, r: &Redirect, fds: &mut Fds) -> Result<Option<()>, Abort> {
        match &r.kind {
            RedirectKind::Read(w) => {
                let Some(path) = self.redirect_path(w)? else {
                    return Ok(None);
                };
                let read = self.read_redirect(&path, fds);
                let Ok(input) = read.map_err(|e| self.redirect_error(&path, &e)) else {
                    return Ok(None);
                };
                if !fds.put(r.fd, Fd::In(input)) {
                    return Ok(self.bad_descriptor(r.fd));
                }
            }
            RedirectKind::Write {
                target,
                append,
                both,
            } => {
                let Some(path) = self.redirect_path(target)? else {
                    return Ok(None);
                };
                let to = match path.as_str() {
                    "/dev/null" => Target::Null,
                    "/dev/stdout" => fds.out,
                    "/dev/stderr" => fds.err,
                    _ => {
                        let opened = self.open_output(&path, *append);
                        let Ok(to) = opened.map_err(|e| self.redirect_error(&path, &e)) else {
                            return Ok(None);
                        };
                        to
                    }
                };
                if *both {
                    fds.out = to;
                    fds.err = to;
                } else if !fds.put(r.fd, Fd::Out(to)) {
                    return Ok(self.bad_descriptor(r.fd));
                }
            }
            RedirectKind::Dup(from) => {
                let Some(open) = fds.get(*from) else {
                    return Ok(self.bad_descriptor(*from));
                };
                if !fds.put(r.fd, open) {
                    return Ok(self.bad_descriptor(*from));
                }
            }
            RedirectKind::Close => fds.close(r.fd),
            RedirectKind::Here { body, newline } => {
                let empty = Word::default();
                let mut text = match expand::text(body.get().unwrap_or(&empty), self) {
                    Ok(t) => t,
                    Err(e) => return self.expansion_failed(e).map(|_| None),
                };
                if *newline {
                    text.push('\n');
                }
                if !fds.put(r.fd, Fd::In(Input::new(text.into_bytes(), false))) {
                    return Ok(self.bad_descriptor(r.fd));
                }
            }
        }
        Ok(Some(()))
    }

    /// bash's message for a redirection to or from a descriptor that is not open that way.
    fn bad_descriptor(&mut self, fd: u32) -> Option<()> {
        self.complain(format_args!("{fd}: Bad file descriptor"));
        None
    }

    fn read_redirect(&mut self, path: &str, fds: &Fds) -> Result<Input, FsError> {
        match path {
            "/dev/null" => return Ok(Input::default()),
            "/dev/stdin" => return Ok(fds.stdin.clone()),
            _ => {}
        }
        let (data, truncated) = self.read_file(path, PIPE_CAP as u64)?;
        Ok(Input::new(data, truncated))
    }

    fn redirect_error(&mut self, path: &str, e: &FsError) {
        self.record(e);
        self.io
            .write(self.base_err, format!("sh: {path}: {e}\n").as_bytes());
    }

    /// Runs one command line's words (after expansion and redirection).
    ///
    /// # Errors
    /// When the deadline passes, the call is cancelled, or `exit` runs.
    pub(crate) fn run_argv(
        &mut self,
        argv: &[String],
        out: Target,
        err: Target,
        stdin: Input,
    ) -> Result<i32, Abort> {
        self.check()?;
        let Some(name) = argv.first() else {
            return Ok(0);
        };
        if self.nesting >= MAX_NESTING {
            let msg = format!(
                "sh: {name}: commands nested too deeply (more than {MAX_NESTING} levels)\n"
            );
            self.io.write(err, msg.as_bytes());
            return Ok(126);
        }
        self.nesting += 1;
        let mut ctx = Ctx {
            sh: self,
            out,
            err,
            stdin,
            name: name.clone(),
        };
        let result = builtins::dispatch(&mut ctx, argv);
        self.nesting -= 1;
        result
    }

    /// Runs shell source (`sh -c`, `sh FILE`, `source FILE`, `./script`) with the caller's
    /// streams. `isolated` runs it in a copy of the state (a child shell) and ends `exit` there.
    ///
    /// # Errors
    /// As [`Shell::run_argv`] (and `exit` when not isolated).
    pub(crate) fn run_source(
        &mut self,
        src: &str,
        positional: Option<Vec<String>>,
        fds: (Input, Target, Target),
        isolated: bool,
    ) -> Result<i32, Abort> {
        let (stdin, out, err) = fds;
        if self.depth >= MAX_DEPTH {
            let msg = format!("sh: scripts nested too deeply (more than {MAX_DEPTH} levels)\n");
            self.io.write(err, msg.as_bytes());
            return Ok(126);
        }
        let script = match parser::parse(src) {
            Ok(s) => s,
            Err(msg) => {
                self.io.write(err, format!("sh: {msg}\n").as_bytes());
                return Ok(2);
            }
        };
        let saved_base = (
            std::mem::replace(&mut self.base_in, stdin),
            std::mem::replace(&mut self.base_out, out),
            std::mem::replace(&mut self.base_err, err),
        );
        let saved_positional = positional.map(|p| std::mem::replace(&mut self.positional, p));
        let saved_state = isolated.then(|| (self.state.clone(), std::mem::take(&mut self.options)));
        let saved_status = self.status;
        // A child shell's `break` and `return` cannot reach the caller's loops and functions.
        let saved_frames = isolated.then(|| {
            (
                std::mem::take(&mut self.loops),
                std::mem::take(&mut self.returnable),
                std::mem::take(&mut self.locals),
                self.functions.clone(),
                std::mem::take(&mut self.subshells),
                std::mem::take(&mut self.traps),
            )
        });
        self.depth += 1;
        let mut result = self.run_lines(&script);
        if isolated {
            result = self.run_exit_trap(result);
        }
        self.depth -= 1;
        if let Some((loops, returnable, locals, functions, subshells, traps)) = saved_frames {
            (self.loops, self.returnable, self.locals) = (loops, returnable, locals);
            (self.functions, self.subshells, self.traps) = (functions, subshells, traps);
        }
        (self.base_in, self.base_out, self.base_err) = saved_base;
        if let Some(p) = saved_positional {
            self.positional = p;
        }
        if let Some((s, options)) = saved_state {
            *self.state = s;
            self.options = options;
            self.status = saved_status;
        }
        if isolated {
            ended_subshell(result)
        } else {
            result
        }
    }
}

/// The CPU time this process used so far, all its threads together.
fn process_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

/// Whether a failure of `pipeline` runs the `ERR` trap: a compound command that runs other
/// commands (`{ }`, `if`, loops, `case`) already ran it for the one inside that failed.
fn reports_its_own_failure(pipeline: &Pipeline) -> bool {
    match pipeline.commands.as_slice() {
        [Command::Compound { body, .. }] => matches!(
            **body,
            Compound::Subshell(_) | Compound::Arith(_) | Compound::Cond(_)
        ),
        _ => true,
    }
}

/// What ends a subshell (or a pipeline stage, or a child shell) ends only there: `exit` and
/// `return` give its status, `break` and `continue` have no loop to reach.
fn ended_subshell(result: Result<i32, Abort>) -> Result<i32, Abort> {
    match result {
        Err(Abort::Exit(code) | Abort::Return(code)) => Ok(code),
        Err(Abort::Break(_) | Abort::Continue(_)) => Ok(0),
        Err(Abort::Line) => Ok(1),
        other => other,
    }
}

/// Why `[[ ... ]]` could not be evaluated.
enum CondError {
    Expand(ExpandError),
    /// A bad operand or regular expression: status 2.
    Message(String),
}

impl From<ExpandError> for CondError {
    fn from(e: ExpandError) -> Self {
        Self::Expand(e)
    }
}

/// `NAME[i]` (as arithmetic names an element, its subscript evaluated): the name and `i`.
fn element_name(name: &str) -> Option<(&str, i64)> {
    let (array, index) = name.strip_suffix(']')?.split_once('[')?;
    Some((array, index.parse().ok()?))
}

impl super::arith::Vars for Shell<'_> {
    fn get_var(&mut self, name: &str) -> Option<String> {
        match element_name(name) {
            Some((array, i)) => {
                let at = self.element_index(array, i)?;
                self.element(array, at)
            }
            None => self.var(name),
        }
    }

    fn set_var_arith(&mut self, name: &str, value: String) -> Result<(), String> {
        if let Some((array, i)) = element_name(name) {
            let Some(at) = self.element_index(array, i) else {
                return Err(format!("{array}[{i}]: bad array subscript"));
            };
            return match self.set_element(array, at, value) {
                true => Ok(()),
                false => Err(format!("{name}: cannot set the variable")),
            };
        }
        if self.readonly.contains(name) {
            return Err(format!("{name}{}", super::arith::READ_ONLY));
        }
        if self.set_var(name, value) {
            Ok(())
        } else {
            Err(format!("{name}: cannot set the variable"))
        }
    }
}

impl Env for Shell<'_> {
    fn param(&mut self, name: &str) -> Option<String> {
        match name {
            "?" => Some(self.status.to_string()),
            // There is no process to name: a fixed, harmless value for `tmp.$$` file names.
            "$" => Some(builtins::SHELL_PID.to_string()),
            "!" => Some(
                self.state
                    .jobs
                    .last_pid()
                    .map(|p| p.to_string())
                    .unwrap_or_default(),
            ),
            "#" => Some(self.positional.len().saturating_sub(1).to_string()),
            "@" | "*" => Some(self.positional.get(1..).unwrap_or_default().join(" ")),
            // bash -c's flags, in its order: hashall and braceexpand are always on here.
            "-" => {
                let o = &self.options;
                let flags = [
                    (o.errexit, 'e'),
                    (true, 'h'),
                    (o.nounset, 'u'),
                    (o.xtrace, 'x'),
                ];
                let mut text: String = (flags.iter()).filter(|f| f.0).map(|f| f.1).collect();
                text.push_str("Bc");
                Some(text)
            }
            n if n.chars().all(|c| c.is_ascii_digit()) => {
                let i: usize = n.parse().ok()?;
                if i == 0 {
                    Some(
                        self.positional
                            .first()
                            .cloned()
                            .unwrap_or_else(|| "sh".into()),
                    )
                } else {
                    self.positional.get(i).cloned()
                }
            }
            n => self.var(n),
        }
    }

    fn positional(&self) -> Vec<String> {
        self.positional.get(1..).unwrap_or_default().to_vec()
    }

    fn assign(&mut self, name: &str, value: String) -> Result<(), ExpandError> {
        // `${a[3]:=x}`: the element (its subscript already evaluated).
        let element = element_name(name).and_then(|(n, i)| Some((n, usize::try_from(i).ok()?)));
        let done = match element {
            Some((array, at)) => self.set_element(array, at, value),
            None => self.set_var(name, value),
        };
        if done {
            Ok(())
        } else {
            Err(ExpandError::Failed(format!(
                "{name}: cannot set the variable"
            )))
        }
    }

    fn substitute(&mut self, script: &Script) -> Result<String, ExpandError> {
        let out = self.capture(script).map_err(ExpandError::Stopped)?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    fn input_file(&mut self, script: &Script) -> Result<String, ExpandError> {
        // `$?` is not the substitution's: bash's runs beside the command.
        let (status, subst_status) = (self.status, self.subst_status);
        let out = self.capture(script).map_err(ExpandError::Stopped)?;
        (self.status, self.subst_status) = (status, subst_status);
        self.temporary_file(&out).map_err(|why| {
            ExpandError::Failed(format!(
                "process substitution: cannot write its file: {why}"
            ))
        })
    }

    fn output_file(&mut self, script: &Script) -> Result<String, ExpandError> {
        let path = self.temporary_file(b"").map_err(|why| {
            ExpandError::Failed(format!("process substitution: cannot make its file: {why}"))
        })?;
        self.io
            .readers
            .push((path.clone(), Rc::new(script.clone())));
        Ok(path)
    }

    fn expand_pathname(&mut self, pattern: &str) -> Vec<String> {
        self.pathnames(pattern)
    }

    fn attributes(&self, name: &str) -> String {
        let name = name.split_once('[').map_or(name, |(n, _)| n);
        let array = self.state.arrays.is_array(name).then_some('a');
        let integer = self.integers.contains(name).then_some('i');
        let readonly = self.readonly.contains(name).then_some('r');
        array.into_iter().chain(integer).chain(readonly).collect()
    }

    fn elements(&mut self, name: &str) -> Elements<'_> {
        self.array_values(name)
    }

    fn warn(&mut self, msg: &str) {
        self.complain(msg);
    }

    fn names_starting(&self, prefix: &str) -> Vec<String> {
        (self.state.vars.keys())
            .filter(|name| name.starts_with(prefix))
            .cloned()
            .collect()
    }

    fn unmatched(&self) -> Unmatched {
        if self.options.failglob {
            Unmatched::Fail
        } else if self.options.nullglob {
            Unmatched::Nothing
        } else {
            Unmatched::Literal
        }
    }

    fn stopped(&self) -> Option<Abort> {
        self.check().err()
    }

    fn nounset(&self) -> bool {
        self.options.nounset
    }
}

/// A command's streams while its redirections are applied.
struct Fds {
    stdin: Input,
    out: Target,
    err: Target,
    /// Descriptors 3 to 9.
    extra: ExtraFds,
}

/// What descriptors 3 to [`parser::MAX_FD`] are open on (`exec 3> log`, `3<&0`, `3>&1`).
pub(crate) type ExtraFds = [Option<Fd>; parser::MAX_FD as usize - 2];

/// An open descriptor: one that writes somewhere, or one that reads.
#[derive(Debug, Clone)]
pub(crate) enum Fd {
    Out(Target),
    In(Input),
}

impl Fds {
    /// What `fd` is open on, if anything.
    fn get(&self, fd: u32) -> Option<Fd> {
        match fd {
            0 => Some(Fd::In(self.stdin.clone())),
            1 => Some(Fd::Out(self.out)),
            2 => Some(Fd::Out(self.err)),
            n => self.extra.get(n as usize - 3).cloned().flatten(),
        }
    }

    /// Opens `fd` on `to`; `false` when `to` cannot serve that end (stdin writing, stdout
    /// reading).
    fn put(&mut self, fd: u32, to: Fd) -> bool {
        match (fd, to) {
            (0, Fd::In(input)) => self.stdin = input,
            (1, Fd::Out(t)) => self.out = t,
            (2, Fd::Out(t)) => self.err = t,
            (0..=2, _) => return false,
            (n, to) => {
                if let Some(slot) = self.extra.get_mut(n as usize - 3) {
                    *slot = Some(to);
                }
            }
        }
        true
    }

    fn close(&mut self, fd: u32) {
        match fd {
            0 => self.stdin = Input::default(),
            1 => self.out = Target::Null,
            2 => self.err = Target::Null,
            n => {
                if let Some(slot) = self.extra.get_mut(n as usize - 3) {
                    *slot = None;
                }
            }
        }
    }
}

/// What a built-in works with: the shell, its own streams and its name (for messages).
pub(crate) struct Ctx<'c, 'a> {
    pub sh: &'c mut Shell<'a>,
    pub out: Target,
    pub err: Target,
    pub stdin: Input,
    pub name: String,
}

impl Ctx<'_, '_> {
    /// Writes to stdout; `false` when the reader will not see it (stop producing).
    pub(crate) fn out(&mut self, data: &[u8]) -> bool {
        self.sh.io.write(self.out, data)
    }

    pub(crate) fn outs(&mut self, s: &str) -> bool {
        self.out(s.as_bytes())
    }

    pub(crate) fn err(&mut self, data: &[u8]) {
        self.sh.io.write(self.err, data);
    }

    /// `NAME: msg` on stderr.
    pub(crate) fn warn(&mut self, msg: impl Display) {
        let line = format!("{}: {msg}\n", self.name);
        self.err(line.as_bytes());
    }

    /// `NAME: what: error` on stderr, remembering a confinement refusal.
    pub(crate) fn fail(&mut self, what: impl Display, e: &FsError) {
        self.sh.record(e);
        self.warn(format_args!("{what}: {e}"));
    }

    /// # Errors
    /// See [`Shell::check`].
    pub(crate) fn check(&self) -> Result<(), Abort> {
        self.sh.check()
    }

    pub(crate) fn cwd(&self) -> &str {
        &self.sh.state.cwd
    }

    pub(crate) fn fs(&self) -> &Fs {
        &self.sh.fs
    }

    /// Resolves a path argument against the cwd (see [`Fs::resolve`]).
    ///
    /// # Errors
    /// See [`Fs::resolve`].
    pub(crate) fn resolve(
        &self,
        arg: &str,
        access: Access,
        follow: bool,
    ) -> Result<Resolved, FsError> {
        self.sh.fs.resolve(&self.sh.state.cwd, arg, access, follow)
    }
}
