//! Runs a parsed script: and/or lists, pipelines, redirections and assignments, and hands each
//! simple command to its built-in with a [`Ctx`] holding where its stdin, stdout and stderr go.
//!
//! Pipeline stages run one after another; each stage's stdout is buffered (up to [`PIPE_CAP`])
//! and becomes the next stage's stdin. A full buffer tells the producer to stop, which is how
//! `seq 1 1e12 | head -1` ends (like SIGPIPE); a consumer that then reads the whole cut input gets
//! a warning, so no silent data loss. Multi-stage pipelines run in a copy of the shell state, as
//! bash runs them in subshells (`cd x | cat` does not change directory).
//!
//! The deadline and cancel flag are checked before every command ([`Shell::check`]) and by
//! built-ins inside their loops; they end the whole script with [`Abort`].

use std::fmt::Display;
use std::io::Read;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::builtins;
use super::expand::{self, MAX_EXPANSION, Scope, TooLong};
use super::lexer::Word;
use super::parser::{self, AndOr, Command, Connector, Pipeline, Redirect, RedirectKind, Script};
use super::path::{Access, Fs, FsError, Resolved};
use super::streams::{Io, PIPE_CAP};
// The built-ins reach the streams through here, with the shell they belong to.
pub(crate) use super::streams::{Input, Target, WRITE_BUDGET};
use super::{Interpreters, ShellLimits, ShellState};

/// The most a command reads whole into memory (`sort`, `tail`, `sed -i`, a script file).
pub(crate) const MAX_READ: u64 = 64 << 20;

/// How deep `sh FILE`, `sh -c`, `source` and `./script` may nest (a script running itself).
pub(crate) const MAX_DEPTH: usize = 8;

/// How deep commands may run other commands (`env env ...`, `xargs xargs ...`, scripts): each
/// level is native stack, and overflowing it would kill the worker.
pub(crate) const MAX_NESTING: usize = 64;

/// Most bytes all shell variables may hold together; they persist in the session.
pub(crate) const MAX_VARS: usize = 32 << 20;

/// What stops a script early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Abort {
    Timeout,
    Cancelled,
    /// The `exit` built-in, with its status.
    Exit(i32),
}

/// `set` options. They last for one call (a session-wide `set -e` would make later, unrelated
/// calls stop at their first failure), and a child shell (`sh -c`, `sh FILE`) starts without.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Options {
    /// `-e`: stop at the first failing command (outside `&&`/`||` lists and `!`).
    pub errexit: bool,
    /// `-o pipefail`: a pipeline fails when any stage fails.
    pub pipefail: bool,
    /// `-x`: print each command, expanded, on stderr.
    pub xtrace: bool,
    /// `-u`: accepted; unset variables still expand to nothing.
    pub nounset: bool,
}

/// The interpreter of one `execute` call.
pub(crate) struct Shell<'a> {
    pub fs: Fs,
    pub state: &'a mut ShellState,
    pub interpreters: &'a mut dyn Interpreters,
    limits: &'a ShellLimits,
    pub io: Io,
    /// `$?`.
    pub status: i32,
    /// `$0`, `$1`, ... of the running script.
    pub positional: Vec<String>,
    /// The first guest path refused by confinement.
    pub restriction: Option<String>,
    /// Script nesting (`sh`, `source`), bounded by [`MAX_DEPTH`].
    depth: usize,
    /// Command nesting, bounded by [`MAX_NESTING`].
    nesting: usize,
    /// `set` options, for this call (and inherited by `source`, not by child shells).
    pub options: Options,
    /// Where the running script's commands read and write unless redirected: the outcome's
    /// streams at top level, the calling command's inside `sh FILE`.
    base_in: Input,
    base_out: Target,
    base_err: Target,
}

impl<'a> Shell<'a> {
    pub(crate) fn new(
        fs: Fs,
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
            base_in: Input::default(),
            base_out: Target::Stdout,
            base_err: Target::Stderr,
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
        if Instant::now() >= self.limits.deadline {
            return Err(Abort::Timeout);
        }
        Ok(())
    }

    /// Remembers the first confinement refusal.
    pub(crate) fn record(&mut self, e: &FsError) {
        if let Some(p) = e.restricted()
            && self.restriction.is_none()
        {
            self.restriction = Some(p.to_string());
        }
    }

    pub(crate) fn run_script(&mut self, script: &Script) -> Result<i32, Abort> {
        for item in &script.items {
            self.run_and_or(item)?;
        }
        Ok(self.status)
    }

    fn run_and_or(&mut self, list: &AndOr) -> Result<i32, Abort> {
        self.status = self.run_pipeline(&list.first)?;
        // `set -e` only reacts to the last pipeline of a list, and not to a negated one (bash).
        let mut final_ran = list.rest.is_empty() && !list.first.negated;
        for (i, (connector, pipeline)) in list.rest.iter().enumerate() {
            let run = match connector {
                Connector::And => self.status == 0,
                Connector::Or => self.status != 0,
            };
            if run {
                self.status = self.run_pipeline(pipeline)?;
                final_ran = i + 1 == list.rest.len() && !pipeline.negated;
            }
        }
        if self.options.errexit && final_ran && self.status != 0 {
            return Err(Abort::Exit(self.status));
        }
        Ok(self.status)
    }

    fn run_pipeline(&mut self, p: &Pipeline) -> Result<i32, Abort> {
        let status = if let [only] = p.commands.as_slice() {
            self.run_command(only, self.base_in.clone(), self.base_out)?
        } else {
            let saved_state = self.state.clone();
            let result = self.run_stages(&p.commands);
            *self.state = saved_state;
            result?
        };
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
            // Each stage is a subshell: `exit` ends only that stage.
            let result = match self.run_command(cmd, input, out) {
                Err(Abort::Exit(code)) => Ok(code),
                other => other,
            };
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

    fn scope(&self) -> Scope<'_> {
        Scope {
            vars: &self.state.vars,
            positional: &self.positional,
            status: self.status,
            fs: &self.fs,
            cwd: &self.state.cwd,
            deadline: self.limits.deadline,
            cancel: &self.limits.cancel,
        }
    }

    /// Expands a command's words and assignment values, within [`MAX_EXPANSION`] together.
    fn expand_command(
        &self,
        cmd: &Command,
    ) -> Result<(Vec<String>, Vec<(String, String)>), TooLong> {
        let scope = self.scope();
        let mut size = 0;
        let mut argv = Vec::new();
        for w in &cmd.words {
            for f in expand::fields(w, &scope)? {
                size += f.len();
                if size > MAX_EXPANSION {
                    return Err(TooLong);
                }
                argv.push(f);
            }
        }
        let mut assigns = Vec::new();
        for (k, v) in &cmd.assigns {
            let v = expand::text(v, &scope)?;
            size += v.len();
            if size > MAX_EXPANSION {
                return Err(TooLong);
            }
            assigns.push((k.clone(), v));
        }
        Ok((argv, assigns))
    }

    fn run_command(&mut self, cmd: &Command, stdin: Input, out: Target) -> Result<i32, Abort> {
        self.check()?;
        let (argv, assigns) = match self.expand_command(cmd) {
            Ok(x) => x,
            Err(e) => {
                self.io
                    .write(self.base_err, format!("sh: {e}\n").as_bytes());
                return Ok(1);
            }
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
        };
        let redirected = self.apply_redirects(&cmd.redirects, &mut fds);
        let result = if !redirected {
            Ok(1)
        } else if argv.is_empty() {
            let mut status = 0;
            for (k, v) in assigns {
                if !self.set_var(&k, v) {
                    status = 1;
                }
            }
            Ok(status)
        } else if !self.room_for(&assigns) {
            Ok(1)
        } else {
            // `NAME=value cmd`: the values only hold for that command.
            let saved: Vec<(String, Option<String>)> = assigns
                .iter()
                .map(|(k, _)| (k.clone(), self.state.vars.get(k).cloned()))
                .collect();
            for (k, v) in assigns {
                self.state.vars.insert(k, v);
            }
            let result = self.run_argv(&argv, fds.out, fds.err, fds.stdin.clone());
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
        self.io.close_files(mark);
        result
    }

    /// Sets a shell variable; `false` (after a message) when the variables would hold more than
    /// [`MAX_VARS`].
    pub(crate) fn set_var(&mut self, name: &str, value: String) -> bool {
        if !self.room_for(&[(name.to_string(), value.clone())]) {
            return false;
        }
        self.state.vars.insert(name.to_string(), value);
        true
    }

    /// Whether the variables can take these values (replacing their current ones).
    fn room_for(&mut self, assigns: &[(String, String)]) -> bool {
        let current: usize = self.state.vars.iter().map(|(k, v)| k.len() + v.len()).sum();
        let replaced: usize = assigns
            .iter()
            .filter_map(|(k, _)| self.state.vars.get(k).map(|v| k.len() + v.len()))
            .sum();
        let added: usize = assigns.iter().map(|(k, v)| k.len() + v.len()).sum();
        if current - replaced.min(current) + added <= MAX_VARS {
            return true;
        }
        let msg = format!(
            "sh: variables too large (over {} MiB together)\n",
            MAX_VARS >> 20
        );
        self.io.write(self.base_err, msg.as_bytes());
        false
    }

    fn redirect_path(&mut self, w: &Word) -> Option<String> {
        let fields = expand::fields(w, &self.scope()).unwrap_or_default();
        if let [one] = fields.as_slice() {
            return Some(one.clone());
        }
        let text = expand::text(w, &self.scope()).unwrap_or_default();
        self.io.write(
            self.base_err,
            format!("sh: {text}: ambiguous redirect\n").as_bytes(),
        );
        None
    }

    /// Applies redirections left to right; `false` (after a message) when one fails.
    fn apply_redirects(&mut self, redirects: &[Redirect], fds: &mut Fds) -> bool {
        redirects
            .iter()
            .all(|r| self.apply_redirect(r, fds).is_some())
    }

    /// One redirection; `None` (after a message) when it fails.
    fn apply_redirect(&mut self, r: &Redirect, fds: &mut Fds) -> Option<()> {
        match &r.kind {
            RedirectKind::Read(w) => {
                let path = self.redirect_path(w)?;
                let read = self.read_redirect(&path, fds);
                let input = read.map_err(|e| self.redirect_error(&path, &e)).ok()?;
                if r.fd == 0 {
                    fds.stdin = input;
                }
            }
            RedirectKind::Write {
                target,
                append,
                both,
            } => {
                let path = self.redirect_path(target)?;
                let to = match path.as_str() {
                    "/dev/null" => Target::Null,
                    "/dev/stdout" => fds.out,
                    "/dev/stderr" => fds.err,
                    _ => {
                        let opened = self
                            .fs
                            .resolve(&self.state.cwd, &path, Access::Write, true)
                            .and_then(|res| self.io.open_file(&self.fs, &res, *append));
                        opened.map_err(|e| self.redirect_error(&path, &e)).ok()?
                    }
                };
                if *both {
                    fds.out = to;
                    fds.err = to;
                } else {
                    fds.set(r.fd, to);
                }
            }
            RedirectKind::Dup(1) => fds.set(r.fd, fds.out),
            RedirectKind::Dup(2) => fds.set(r.fd, fds.err),
            RedirectKind::Dup(_) => {}
            RedirectKind::Close if r.fd == 0 => fds.stdin = Input::default(),
            RedirectKind::Close => fds.set(r.fd, Target::Null),
            RedirectKind::Here { body, newline } => {
                let expanded = expand::text(body, &self.scope());
                let mut text = expanded
                    .map_err(|e| {
                        self.io
                            .write(self.base_err, format!("sh: {e}\n").as_bytes())
                    })
                    .ok()?;
                if *newline {
                    text.push('\n');
                }
                fds.stdin = Input::new(text.into_bytes(), false);
            }
        }
        Some(())
    }

    fn read_redirect(&mut self, path: &str, fds: &Fds) -> Result<Input, FsError> {
        match path {
            "/dev/null" => return Ok(Input::default()),
            "/dev/stdin" => return Ok(fds.stdin.clone()),
            _ => {}
        }
        let r = self.fs.resolve(&self.state.cwd, path, Access::Read, true)?;
        let file = self.fs.open_read(&r)?;
        let mut data = Vec::new();
        file.take(PIPE_CAP as u64 + 1).read_to_end(&mut data)?;
        let truncated = data.len() > PIPE_CAP;
        data.truncate(PIPE_CAP);
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
        self.depth += 1;
        let result = self.run_script(&script);
        self.depth -= 1;
        (self.base_in, self.base_out, self.base_err) = saved_base;
        if let Some(p) = saved_positional {
            self.positional = p;
        }
        if let Some((s, options)) = saved_state {
            *self.state = s;
            self.options = options;
            self.status = saved_status;
        }
        match result {
            Err(Abort::Exit(code)) if isolated => Ok(code),
            other => other,
        }
    }
}

/// A command's streams while its redirections are applied.
struct Fds {
    stdin: Input,
    out: Target,
    err: Target,
}

impl Fds {
    fn set(&mut self, fd: u32, t: Target) {
        match fd {
            1 => self.out = t,
            2 => self.err = t,
            _ => {}
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
