//! Background jobs: `cmd &` and the built-ins that ask about them (`wait`, `jobs`, `kill`,
//! `disown`, `nohup`), and the record they read ([`Jobs`], part of the session's shell state).
//!
//! A worker runs one command at a time, so an asynchronous list (`cmd &`) runs to completion
//! where it stands, in a subshell (its stdin empty, as bash's `/dev/null`), and the line
//! goes on with status 0 and `$!` set (see `Shell::run_background`). What it wrote arrives
//! before what the next command writes, which bash also allows. Everything after follows from
//! the job having ended: `wait` (all jobs), `wait $!`, `wait %N` and `wait -n` give its status
//! as bash would once it ended, `jobs` lists nothing running, `kill $!` finds no such process,
//! and a job that never ends (a server) holds the call until its timeout. Job numbers and
//! process IDs are the shell's own (`$$` is 1; jobs count from 1000).

use std::collections::VecDeque;

use super::args::bash_opts;
use super::trap::{signal_name, signal_number, signal_table};
use crate::shell::exec::{Abort, Ctx};

/// How many finished jobs `wait PID` still knows (bash keeps a list of the same kind).
const REMEMBERED: usize = 256;

/// The process ID of the shell itself (`$$`).
pub(crate) const SHELL_PID: u32 = 1;

/// The first process ID a background job gets.
const FIRST_JOB_PID: u32 = 1000;

/// The session's background jobs, all of them ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Jobs {
    /// `$!`: the process ID of the last job started.
    last: Option<u32>,
    next_pid: u32,
    /// This call's jobs that no `wait` or `disown` has taken yet, oldest first: bash's job
    /// table, where `%N`, `wait -n` and `disown` look.
    table: Vec<Job>,
    /// Every job's status by process ID, newest last, for `wait PID` (which bash answers for a
    /// job even after it left the table).
    statuses: VecDeque<(u32, i32)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Job {
    number: usize,
    pid: u32,
    status: i32,
}

impl Default for Jobs {
    fn default() -> Self {
        Self {
            last: None,
            next_pid: FIRST_JOB_PID,
            table: Vec::new(),
            statuses: VecDeque::new(),
        }
    }
}

impl Jobs {
    /// Records a job that ended with `status`; its process ID.
    pub(crate) fn ended(&mut self, status: i32) -> u32 {
        let pid = self.next_pid;
        self.next_pid = self.next_pid.checked_add(1).unwrap_or(FIRST_JOB_PID);
        self.last = Some(pid);
        // As bash numbers them: one past the highest in the table.
        let number = self.table.last().map_or(1, |j| j.number + 1);
        if self.table.len() == REMEMBERED {
            self.table.remove(0);
        }
        self.table.push(Job {
            number,
            pid,
            status,
        });
        if self.statuses.len() == REMEMBERED {
            self.statuses.pop_front();
        }
        self.statuses.push_back((pid, status));
        pid
    }

    /// A call starts with no jobs in the table, as an interactive bash has reported and
    /// forgotten the jobs that ended before its next prompt; `$!` and `wait PID` still know
    /// them.
    pub(crate) fn new_call(&mut self) {
        self.table.clear();
    }

    /// `$!`.
    pub(crate) fn last_pid(&self) -> Option<u32> {
        self.last
    }

    /// The job in the table that `spec` names (`%N`, `%%`, `%+`, `%-`, or a process ID).
    fn find(&self, spec: &Spec) -> Option<usize> {
        match *spec {
            Spec::Current => self.table.len().checked_sub(1),
            Spec::Previous => self.table.len().checked_sub(2),
            Spec::Number(n) => self.table.iter().position(|j| j.number == n),
            Spec::Pid(pid) => self.table.iter().position(|j| j.pid == pid),
        }
    }

    fn status_of(&self, pid: u32) -> Option<i32> {
        self.statuses
            .iter()
            .rev()
            .find(|(p, _)| *p == pid)
            .map(|&(_, status)| status)
    }
}

/// What a job operand names.
enum Spec {
    Current,
    Previous,
    Number(usize),
    Pid(u32),
}

/// `%1`, `%%`, `%+`, `%-`, `1234`; `None` for anything else (`%name` included: the jobs have
/// no command text to match).
fn spec(arg: &str) -> Option<Spec> {
    match arg.strip_prefix('%') {
        Some("%" | "+" | "") => Some(Spec::Current),
        Some("-") => Some(Spec::Previous),
        Some(n) => n.parse().ok().filter(|&n| n > 0).map(Spec::Number),
        None => arg.parse().ok().map(Spec::Pid),
    }
}

/// `wait [-fn] [-p VAR] [ID...]`: the status of the jobs named (the last one's), of the next
/// job (`-n`), or 0 once every job is waited for.
pub(super) fn wait(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = bash_opts(ctx, args, "fnp:", "wait [-fn] [-p var] [id ...]") else {
        return Ok(2);
    };
    if let Some(var) = o.value('p').filter(|v| !crate::shell::lexer::is_name(v)) {
        ctx.warn(format_args!("`{var}': not a valid identifier"));
        return Ok(1);
    }
    let jobs = &mut ctx.sh.state.jobs;
    if o.operands.is_empty() && !o.has('n') {
        jobs.table.clear();
        return Ok(0);
    }
    let mut status = 127;
    let mut waited = None;
    if o.operands.is_empty() {
        // `-n` alone: the next job to end; none left is 127, silently, as in bash.
        if !jobs.table.is_empty() {
            let job = jobs.table.remove(0);
            (status, waited) = (job.status, Some(job.pid));
        }
    }
    for arg in &o.operands {
        let jobs = &mut ctx.sh.state.jobs;
        let Some(named) = spec(arg) else {
            ctx.warn(format_args!("`{arg}': not a pid or valid job spec"));
            status = 1;
            continue;
        };
        match (jobs.find(&named), named) {
            (Some(at), _) => {
                let job = jobs.table.remove(at);
                (status, waited) = (job.status, Some(job.pid));
            }
            (None, Spec::Pid(pid)) => match jobs.status_of(pid) {
                Some(known) => (status, waited) = (known, Some(pid)),
                None => {
                    ctx.warn(format_args!("pid {pid} is not a child of this shell"));
                    status = 127;
                }
            },
            (None, _) => {
                ctx.warn(format_args!("{arg}: no such job"));
                status = 127;
            }
        }
        if o.has('n') && waited.is_some() {
            break;
        }
    }
    if let (Some(var), Some(pid)) = (o.value('p'), waited)
        && !ctx.sh.set_var(var, pid.to_string())
    {
        ctx.warn(format_args!("{var}: cannot set the variable"));
        return Ok(1);
    }
    Ok(status)
}

/// `jobs [-lnprs] [JOBSPEC...]`: every job has ended by the time `jobs` runs, so there is none
/// running or stopped to list.
pub(super) fn jobs(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = bash_opts(
        ctx,
        args,
        "lnprsx",
        "jobs [-lnprs] [jobspec ...] or jobs -x command [args]",
    ) else {
        return Ok(2);
    };
    if o.has('x') {
        ctx.warn("-x: this shell cannot run a command with job specs replaced");
        return Ok(2);
    }
    let mut status = 0;
    for arg in &o.operands {
        if spec(arg).and_then(|s| ctx.sh.state.jobs.find(&s)).is_none() {
            ctx.warn(format_args!("{arg}: no such job"));
            status = 1;
        }
    }
    Ok(status)
}

/// `disown [-ahr] [ID...]`: takes jobs out of the table (the current one by default).
pub(super) fn disown(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = bash_opts(
        ctx,
        args,
        "ahr",
        "disown [-h] [-ar] [jobspec ... | pid ...]",
    ) else {
        return Ok(2);
    };
    // `-h` keeps a job in the table and only spares it SIGHUP, which never comes here.
    let keep = o.has('h');
    if o.has('a') || o.has('r') {
        // `-r`: the running ones, and none is.
        if o.has('a') && !keep {
            ctx.sh.state.jobs.table.clear();
        }
        return Ok(0);
    }
    let current = ["%+".to_owned()];
    let (names, shown): (&[String], bool) = match o.operands.as_slice() {
        [] => (&current, false),
        named => (named, true),
    };
    let mut status = 0;
    for arg in names {
        let jobs = &mut ctx.sh.state.jobs;
        match spec(arg).and_then(|s| jobs.find(&s)) {
            Some(at) if !keep => drop(jobs.table.remove(at)),
            Some(_) => {}
            None => {
                let arg = if shown { arg.as_str() } else { "current" };
                ctx.warn(format_args!("{arg}: no such job"));
                status = 1;
            }
        }
    }
    Ok(status)
}

/// `kill [-s SIG | -n NUM | -SIG] ID...`, `kill -l [SIG...]`. A job has always ended, so it
/// finds no process; the shell's own `$$` gets the signal as bash would: a trapped one runs
/// its trap, an ignored or harmless one does nothing, any other ends the script with 128 + N.
pub(super) fn kill(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    const USAGE: &str =
        "usage: kill [-s sigspec | -n signum | -sigspec] pid | jobspec ... or kill -l [sigspec]";
    let mut signal = 15;
    let mut rest = args;
    match rest.first().map(String::as_str) {
        Some("-l" | "-L") => return list_signals(ctx, &rest[1..]),
        Some("-s" | "-n") => {
            let Some(number) = rest.get(1).and_then(|s| signal_number(s).or(zero(s))) else {
                let what = rest.get(1).map_or("", String::as_str);
                ctx.warn(format_args!("{what}: invalid signal specification"));
                return Ok(1);
            };
            (signal, rest) = (number, &rest[2..]);
        }
        Some("--") => rest = &rest[1..],
        Some(flag) if flag.len() > 1 && flag.starts_with('-') && spec(flag).is_none() => {
            let Some(number) = signal_number(&flag[1..]).or(zero(&flag[1..])) else {
                ctx.warn(format_args!("{}: invalid signal specification", &flag[1..]));
                return Ok(1);
            };
            (signal, rest) = (number, &rest[1..]);
            if rest.first().is_some_and(|a| a == "--") {
                rest = &rest[1..];
            }
        }
        _ => {}
    }
    if rest.is_empty() {
        ctx.warn(USAGE);
        return Ok(2);
    }
    let mut status = 0;
    for arg in rest {
        let failed = match spec(arg) {
            Some(Spec::Pid(SHELL_PID)) => return to_the_shell(ctx, signal),
            Some(Spec::Pid(pid)) => format!("({pid}) - No such process"),
            Some(named) if ctx.sh.state.jobs.find(&named).is_some() => format!(
                "{arg}: the job has already ended (a background job runs to completion before \
                 the next command here)"
            ),
            Some(_) => format!("{arg}: no such job"),
            None => format!("{arg}: arguments must be process or job IDs"),
        };
        ctx.warn(failed);
        status = 1;
    }
    Ok(status)
}

/// Signal 0, which `kill` takes (to ask whether a process exists) and `kill -l` does not list.
fn zero(spec: &str) -> Option<u32> {
    (spec == "0").then_some(0)
}

/// `kill SIGNAL $$`.
fn to_the_shell(ctx: &mut Ctx<'_, '_>, signal: u32) -> Result<i32, Abort> {
    if signal == 0 {
        return Ok(0);
    }
    if let Some(action) = ctx.sh.traps.get(&signal).cloned() {
        let streams = (ctx.stdin.clone(), ctx.out, ctx.err);
        let status = ctx.sh.status;
        ctx.sh.eval(&action, streams)?;
        ctx.sh.status = status;
        return Ok(0);
    }
    match signal_name(signal) {
        // Ignored by default.
        "CHLD" | "CONT" | "URG" | "WINCH" => Ok(0),
        "STOP" | "TSTP" | "TTIN" | "TTOU" => {
            ctx.warn("the shell cannot be stopped here (it has no job control)");
            Ok(1)
        }
        _ => Err(Abort::Exit(128 + signal as i32)),
    }
}

/// `kill -l`: the table; `kill -l SIG...`: a number's name or a name's number, one per line.
fn list_signals(ctx: &mut Ctx<'_, '_>, specs: &[String]) -> Result<i32, Abort> {
    if specs.is_empty() {
        ctx.outs(&signal_table());
        return Ok(0);
    }
    let mut status = 0;
    for spec in specs {
        // An exit status 128 + N names signal N, as in bash.
        let by_status = spec
            .parse::<u32>()
            .ok()
            .map(|n| if n > 128 { n - 128 } else { n });
        match (by_status, signal_number(spec)) {
            (Some(n), Some(_)) => ctx.outs(&format!("{}\n", signal_name(n))),
            (None, Some(n)) => ctx.outs(&format!("{n}\n")),
            (Some(n), None) if n > 0 && signal_number(&n.to_string()).is_some() => {
                ctx.outs(&format!("{}\n", signal_name(n)))
            }
            _ => {
                ctx.warn(format_args!("{spec}: invalid signal specification"));
                status = 1;
                continue;
            }
        };
    }
    Ok(status)
}

/// `nohup COMMAND [ARG...]`: runs the command. Its output is never a terminal here, so there is
/// no `nohup.out`, and no hangup ever comes.
pub(super) fn nohup(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let command = match args.first().map(String::as_str) {
        Some("--") => &args[1..],
        Some("--version") => {
            ctx.outs("nohup (sandbox-mcp)\n");
            return Ok(0);
        }
        Some(flag) if flag.starts_with('-') && flag.len() > 1 => {
            match flag.strip_prefix("--") {
                Some(long) => ctx.warn(format_args!("unrecognized option '--{long}'")),
                None => ctx.warn(format_args!("invalid option -- '{}'", &flag[1..2])),
            }
            ctx.warn("Try 'nohup --help' for more information.");
            return Ok(125);
        }
        _ => args,
    };
    if command.is_empty() {
        ctx.warn("missing operand");
        ctx.err(b"Try 'nohup --help' for more information.\n");
        return Ok(125);
    }
    ctx.sh
        .run_argv(command, ctx.out, ctx.err, ctx.stdin.clone())
}

#[cfg(test)]
mod tests {
    use crate::shell::tests::Sandbox;

    /// Each line's output and status were taken from bash 5.2 (`bash -c`), with `wait` or a
    /// subshell where bash's job would otherwise race the next command.
    #[test]
    fn background_jobs_end_before_the_next_command_as_bash_would_see_them() {
        let mut s = Sandbox::new();
        assert_eq!(s.ok("echo a & wait; echo b"), "a\nb\n");
        assert_eq!(s.ok("(exit 3) & wait $!; echo $?"), "3\n");
        // A subshell: its assignments stay there; `set -e` does not see its failure.
        assert_eq!(s.ok("x=1 & wait; echo \"[$x]\""), "[]\n");
        assert_eq!(s.ok("set -e; false & wait; echo on"), "on\n");
        assert_eq!(s.ok("false & echo $?"), "0\n");
        // Its stdin: a pipe around it reaches it, the script's is empty.
        assert_eq!(s.ok("echo hi | { cat & wait; }"), "hi\n");
        assert_eq!(s.ok("cat & wait"), "");
        assert_eq!(
            s.ok("for i in 1 2; do echo $i & done; wait; echo done"),
            "1\n2\ndone\n"
        );
        assert_eq!(
            s.ok("(exit 4) & (exit 6) & wait %2; echo $?; wait %1; echo $?; wait -n; echo $?"),
            "6\n4\n127\n"
        );
        // `wait PID` still knows a job that left the table; `$!` lasts the session.
        assert_eq!(
            s.ok("sleep 0 & pid=$!; wait $pid; echo $?; wait $pid; echo $?"),
            "0\n0\n"
        );
        assert_eq!(s.ok("(exit 5) &"), "");
        assert_eq!(s.ok("wait $!; echo $?"), "5\n");
        assert_eq!(s.ok("sleep 0 & wait -p v -n; echo $? ${v:+set}"), "0 set\n");
        let (_, err, status) = s.sh("true & wait -p 1abc -n");
        assert_eq!(
            (err.as_str(), status),
            ("wait: `1abc': not a valid identifier\n", 1)
        );
        let (_, err, status) = s.sh("wait 99999");
        assert_eq!(
            (err.as_str(), status),
            ("wait: pid 99999 is not a child of this shell\n", 127)
        );
        let (_, err, status) = s.sh("wait abc");
        assert_eq!(
            (err.as_str(), status),
            ("wait: `abc': not a pid or valid job spec\n", 1)
        );
        let (_, err, status) = s.sh("wait -x");
        assert_eq!(
            (err.as_str(), status),
            (
                "wait: -x: invalid option\nwait: usage: wait [-fn] [-p var] [id ...]\n",
                2
            )
        );
        // The whole script is parsed first: `&;` is bash's syntax error.
        let (out, err, status) = s.sh("echo no; sleep 0 &;");
        assert!(
            out.is_empty() && err.contains("unexpected token `;'") && status == 2,
            "{out}{err}{status}"
        );
    }

    #[test]
    fn jobs_kill_and_disown_see_jobs_that_have_ended() {
        let mut s = Sandbox::new();
        assert_eq!(s.ok("true & jobs; jobs -p"), "");
        let (_, err, status) = s.sh("jobs %3");
        assert_eq!((err.as_str(), status), ("jobs: %3: no such job\n", 1));
        assert_eq!(s.sh("jobs -z").2, 2);
        let (out, err, status) = s.sh("true & disown; echo $?; disown; echo $?");
        assert_eq!(
            (out.as_str(), err.as_str(), status),
            ("0\n1\n", "disown: current: no such job\n", 0)
        );
        let (_, err, status) = s.sh("sleep 0 & kill $!");
        assert!(
            err.ends_with(") - No such process\n") && status == 1,
            "{err}"
        );
        let (_, err, status) = s.sh("sleep 0 & kill %1");
        assert!(
            err.contains("%1: the job has already ended") && status == 1,
            "{err}"
        );
        assert_eq!(s.ok("kill -l 15 TERM 143"), "TERM\n15\nTERM\n");
        assert_eq!(
            s.ok("kill -l | head -1"),
            " 1) SIGHUP\t 2) SIGINT\t 3) SIGQUIT\t 4) SIGILL\t 5) SIGTRAP\n"
        );
        let (_, err, status) = s.sh("kill -FOO 1");
        assert_eq!(
            (err.as_str(), status),
            ("kill: FOO: invalid signal specification\n", 1)
        );
        let (_, err, status) = s.sh("kill abc");
        assert_eq!(
            (err.as_str(), status),
            ("kill: abc: arguments must be process or job IDs\n", 1)
        );
        assert_eq!(s.sh("kill -n 15").2, 2);
        // `$$` is the shell: signal 0 asks, a trap runs, an ignored signal does nothing, and
        // any other ends the script as the signal would.
        assert_eq!(s.ok("kill -s 0 $$; echo $?"), "0\n");
        assert_eq!(
            s.ok("trap 'echo got' TERM; kill $$; echo after $?"),
            "got\nafter 0\n"
        );
        assert_eq!(s.ok("trap '' HUP; kill -HUP $$; echo $?"), "0\n");
        let (out, _, status) = s.sh("echo a; kill $$; echo b");
        assert_eq!((out.as_str(), status), ("a\n", 143));
        assert_eq!(s.sh("kill -9 $$").2, 137);
    }

    #[test]
    fn nohup_runs_its_command() {
        let mut s = Sandbox::new();
        assert_eq!(s.ok("nohup echo hi"), "hi\n");
        assert_eq!(s.ok("nohup sh -c 'exit 3'; echo $?"), "3\n");
        let (_, err, status) = s.sh("nohup");
        assert_eq!(
            (err.as_str(), status),
            (
                "nohup: missing operand\nTry 'nohup --help' for more information.\n",
                125
            )
        );
        let (_, err, status) = s.sh("nohup -x true");
        assert!(
            err.starts_with("nohup: invalid option -- 'x'\n") && status == 125,
            "{err}"
        );
    }
}
