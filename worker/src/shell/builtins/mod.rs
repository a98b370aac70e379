//! The built-in commands: the table of names, usages and implementations, and the dispatch of a
//! command line to one of them or to a WebAssembly tool. What the built-ins share lives in
//! [`args`] (option parsing) and [`io`] (reading a program or a list from a file).
//!
//! There are no host programs, and no built-in touches a file a tool could: every command that
//! touches files is a tool of the session's toolbox ([`crate::toolbox`], inside the sandbox,
//! where WASI confines its paths). The built-ins are the shell's own commands, those that change
//! its state or run other commands (cd, export, set, source, echo, printf, test, read, xargs,
//! the interpreters...); no name is both. Any other
//! name exits 127, "command not found", with the list of what is available, so an agent learns
//! at once what it can use. `/bin/ls`-style paths to a built-in or a tool run it; other paths
//! are scripts run by [`scripts::run_file`].

mod alias;
mod args;
mod cond;
mod control;
mod df;
mod find_exec;
mod free;
mod interp;
mod io;
mod jobs;
mod printf;
mod scripts;
mod session;
mod trap;

use super::exec::{Abort, Ctx};
use crate::shell::guest_fs::{Access, FsError};
use crate::toolbox::ToolEnd;
pub(crate) use alias::Aliases;
pub(crate) use cond::{binary_test, unary_test};
pub(crate) use jobs::{Jobs, SHELL_PID};

/// A built-in's entry point: the context and the arguments after the name.
pub(crate) type Run = fn(&mut Ctx<'_, '_>, &[String]) -> Result<i32, Abort>;

/// One built-in command.
pub(crate) struct Builtin {
    pub name: &'static str,
    pub run: Run,
    /// Synopsis, shown by `help` and `NAME --help`.
    pub usage: &'static str,
    /// One line saying what it does.
    pub about: &'static str,
}

/// Builds [`BUILTINS`] from one line per command: `name => function, usage, about;`.
macro_rules! table {
    ($($name:literal => $run:path, $usage:literal, $about:literal;)*) => {
        /// Every command, sorted by name.
        pub(crate) static BUILTINS: &[Builtin] = &[
            $(Builtin { name: $name, run: $run, usage: $usage, about: $about },)*
        ];
    };
}

table! {
    "." => scripts::source, ". FILE [ARGS]", "run a shell script in this shell (same as source)";
    ":" => control::colon, ": [ARG...]", "do nothing, successfully";
    "[" => cond::test, "[ EXPR ]", "evaluate a condition (same as test)";
    "alias" => alias::alias, "alias [-p] [NAME[=VALUE]...]",
        "define or list aliases (a script expands none, as in bash: use a function)";
    "bash" => scripts::sh, "bash [-c SCRIPT | FILE] [ARGS]",
        "run a script in a child shell (this shell)";
    "break" => control::break_, "break [N]", "leave the innermost N loops";
    "cd" => session::cd, "cd [DIR | -]", "change directory (persists between calls)";
    "command" => control::command, "command [-v | -V] NAME [ARG...]",
        "run NAME ignoring functions, or say what each NAME is (-v, -V)";
    "continue" => control::continue_, "continue [N]",
        "go on with the next iteration of the Nth loop";
    "declare" => control::declare, "declare [-aixrgp] NAME[=VALUE | =(WORD...)]...",
        "set variables (local in a function); -a indexed arrays (no -A)";
    "df" => df::df, "df [-ahHikmPT] [-B SIZE] [--total] [FILE...]",
        "the session's disk space: its disk quota (bytes, or files with -i), used and free";
    "dirs" => session::dirs, "dirs [-clpv]", "print the directory stack of pushd";
    "disown" => jobs::disown, "disown [-ahr] [%JOB | PID]...",
        "forget background jobs (they have ended: a job runs to completion here)";
    "echo" => printf::echo, "echo [-n] [-e] [ARG...]", "print arguments";
    "env" => session::env, "env [NAME=VALUE...] [COMMAND [ARG...]]",
        "print the environment, or run a command with more of it";
    "eval" => control::eval, "eval [ARG...]",
        "run the arguments as a command line in this shell";
    "exec" => session::exec, "exec [COMMAND [ARG...]] [REDIRECTION...]",
        "run a command in the script's place (the script ends with it), or redirect the \
         script's own streams (exec > log 2>&1)";
    "exit" => session::exit, "exit [N]", "stop the script with status N";
    "export" => session::export, "export [NAME[=VALUE]...]",
        "set variables (all variables are exported)";
    "false" => session::false_, "false", "exit with status 1";
    "free" => free::free, "free [-b|-k|-m|-g|-h] [--si] [-t] [-w]",
        "the memory a program here may use: the session's memory cap, and what is free of it";
    "getopts" => control::getopts, "getopts OPTSTRING NAME [ARG...]",
        "parse options: the next one into NAME, its value into OPTARG";
    "help" => session::help, "help [COMMAND]", "list the commands, or describe one";
    "jobs" => jobs::jobs, "jobs [-lnprs] [%JOB...]",
        "list running background jobs (none: a job runs to completion before the next command)";
    "kill" => jobs::kill, "kill [-s SIGNAL | -SIGNAL] PID | %JOB... | kill -l [SIGNAL]",
        "send a signal: background jobs have ended already; $$ is this shell";
    "let" => control::let_, "let EXPR...",
        "evaluate arithmetic expressions (status 1 when the last is 0)";
    "local" => control::local, "local [-a] NAME[=VALUE | =(WORD...)]...",
        "make variables local to the running function";
    "mapfile" => control::mapfile, "mapfile [-t] [-n COUNT] [-s COUNT] [-d DELIM] [NAME]",
        "read the lines of stdin into the indexed array NAME (MAPFILE)";
    "node" => interp::node, "node FILE [ARGS] | node -e CODE",
        "run JavaScript in a fresh interpreter (the session's files, not its variables)";
    "nohup" => jobs::nohup, "nohup COMMAND [ARG...]",
        "run a command (no hangup ever comes, and output stays where it goes)";
    "pip" => interp::pip, "pip install [-r FILE] NAME[==VERSION]... | pip list",
        "install Python packages into the session";
    "pip3" => interp::pip, "pip3 install NAME[==VERSION]...", "same as pip";
    "popd" => session::popd, "popd", "return to the directory pushd left";
    "printenv" => session::printenv, "printenv [NAME...]", "print environment variables";
    "printf" => printf::printf, "printf [-v VAR] FORMAT [ARG...]",
        "format and print data (into VAR with -v)";
    "pushd" => session::pushd, "pushd [DIR]",
        "change to DIR, remembering where the shell was (popd returns)";
    "pwd" => session::pwd, "pwd", "print the working directory";
    "python" => interp::python,
        "python FILE [ARGS] | python -c CODE [ARGS] | python -m MODULE [ARGS]",
        "run Python in a fresh interpreter (the session's files, not its variables)";
    "python3" => interp::python, "python3 FILE [ARGS] | python3 -c CODE [ARGS]",
        "same as python";
    "qjs" => interp::node, "qjs FILE [ARGS] | qjs -e CODE", "same as node";
    "read" => control::read, "read [-r] [-a ARRAY] [-p PROMPT] [-d DELIM] [NAME...]",
        "read a line of stdin into variables (split on IFS)";
    "readarray" => control::mapfile,
        "readarray [-t] [-n COUNT] [-s COUNT] [-d DELIM] [NAME]", "same as mapfile";
    "readonly" => control::readonly, "readonly NAME[=VALUE]...",
        "set variables that later assignments may not change";
    "return" => control::return_, "return [N]",
        "leave the running function or sourced script";
    "set" => session::set, "set [-euxo pipefail] [+euxo pipefail] [-- ARGS]",
        "set options for this call: -e, -u, -o pipefail, -x; or $1... with --";
    "sh" => scripts::sh, "sh [-c SCRIPT | FILE] [ARGS]",
        "run a script in a child shell (this shell)";
    "shift" => control::shift, "shift [N]", "drop the first N positional parameters";
    "shopt" => session::shopt, "shopt [-s | -u] [-pq] [nullglob | failglob]...",
        "set bash's nullglob and failglob for this call";
    "sleep" => session::sleep, "sleep SECONDS", "wait (bounded by the deadline)";
    "source" => scripts::source, "source FILE [ARGS]", "run a shell script in this shell";
    "test" => cond::test, "test EXPR",
        "evaluate a condition (-e -f -d -s -z -n = != -eq -ne -lt -le -gt -ge ! -a -o)";
    "timeout" => scripts::timeout, "timeout [-s SIGNAL] [-v] DURATION COMMAND [ARG...]",
        "run a command, stopping it after DURATION (status 124)";
    "trap" => trap::trap, "trap [-lp] [ACTION] SIGNAL...",
        "run ACTION when the script ends (EXIT) or a command fails (ERR)";
    "true" => session::true_, "true", "exit with status 0";
    "type" => session::type_, "type NAME...", "say how a name would be run";
    "typeset" => control::declare, "typeset [-ixrg] NAME[=VALUE]...", "same as declare";
    "umask" => session::umask, "umask [-p] [-S] [MODE]",
        "print the mask new files get (0022: files 0644, directories 0755)";
    "unalias" => alias::unalias, "unalias [-a] NAME...", "remove aliases";
    "unset" => session::unset, "unset NAME...", "remove variables";
    "wait" => jobs::wait, "wait [-fn] [-p VAR] [%JOB | PID]...",
        "the exit status of background jobs (each ran to completion when started)";
    "which" => session::which, "which NAME...", "say whether a command is available";
    "xargs" => scripts::xargs, "xargs [-n N] [-I STR] [-0] [-d DELIM] [-P N] [COMMAND [ARG...]]",
        "run a command with arguments read from stdin";
}

/// Looks a command up by name.
pub(crate) fn find(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// Runs a command line: a tool, a built-in, a script given by path, or "command not found".
pub(crate) fn dispatch(ctx: &mut Ctx<'_, '_>, argv: &[String]) -> Result<i32, Abort> {
    let name = argv[0].as_str();
    // `find -exec` runs commands, which a tool cannot: the shell runs them.
    if name == "find"
        && find_exec::wants_exec(argv)
        && let Some(ran) = find_exec::find_exec(ctx, argv)
    {
        return ran;
    }
    if let Some(tool) = tool_name(ctx, name) {
        return run_tool(ctx, tool, argv);
    }
    let builtin = find(name).or_else(|| {
        // `/bin/ls`, `/usr/bin/env python3`: the built-in of that name.
        let (dir, base) = name.rsplit_once('/')?;
        let system = ["/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin"];
        system.contains(&dir).then(|| find(base)).flatten()
    });
    if let Some(b) = builtin {
        if argv.get(1).is_some_and(|a| a == "--help") && !matches!(b.name, "echo" | "printf") {
            ctx.outs(&format!("usage: {}\n{}\n", b.usage, b.about));
            return Ok(0);
        }
        return (b.run)(ctx, &argv[1..]);
    }
    if name.contains('/') {
        return scripts::run_file(ctx, argv);
    }
    if let Some(why) = alias::not_expanded(ctx, name) {
        ctx.err(format!("{name}: command not found\n{why}").as_bytes());
        return Ok(127);
    }
    if std::mem::replace(&mut ctx.sh.listed_commands, true) {
        ctx.err(format!("{name}: command not found\n").as_bytes());
        return Ok(127);
    }
    let tools = crate::toolbox::COMMANDS.join(" ");
    let tools = if ctx.sh.interpreters.has_toolbox() {
        format!(" and these WebAssembly tools: {tools}")
    } else if crate::toolbox::Toolbox::has(name) {
        // A worker started without its toolbox (see `prepare`): say so rather than pretend.
        format!(" (its WebAssembly tools, {name} among them, are missing on this server)")
    } else {
        String::new()
    };
    let builtins: Vec<&str> = BUILTINS.iter().map(|b| b.name).collect();
    let msg = format!(
        "{name}: command not found\nThis sandbox shell has its built-in commands (no external \
         programs): {}{tools}\nRun `help` for details; use python -c or node -e for anything \
         else.\n",
        builtins.join(" ")
    );
    ctx.err(msg.as_bytes());
    Ok(127)
}

/// The toolbox command `name` runs (`sha256sum`, `/usr/bin/sha256sum`), if it is one.
fn tool_name<'n>(ctx: &Ctx<'_, '_>, name: &'n str) -> Option<&'n str> {
    let base = match name.rsplit_once('/') {
        Some((dir, base)) if ["/bin", "/usr/bin", "/usr/local/bin"].contains(&dir) => base,
        Some(_) => return None,
        None => name,
    };
    ctx.sh.interpreters.has_tool(base).then_some(base)
}

/// Runs the toolbox command `tool` with `argv`'s arguments, in a fresh WebAssembly instance
/// inside the sandbox (see [`crate::toolbox`]), with what is piped in and the shell's cwd and
/// variables.
fn run_tool(ctx: &mut Ctx<'_, '_>, tool: &str, argv: &[String]) -> Result<i32, Abort> {
    ctx.check()?;
    let mut argv = argv.to_vec();
    argv[0] = tool.to_owned();
    // Arrays are not exported (bash).
    let arrays = &ctx.sh.state.arrays;
    let env: Vec<(String, String)> = (ctx.sh.state.vars.iter())
        .filter(|(name, _)| !arrays.is_array(name))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    let null_input = reads_dev_null(&mut argv);
    let stdin = if null_input {
        Vec::new()
    } else {
        ctx.stdin.rest().to_vec()
    };
    let cwd = ctx.cwd().to_owned();
    let pipe_room = ctx.sh.io.pipe_room(ctx.out);
    let modes = ctx.sh.fs.clone();
    let ran = (ctx.sh.interpreters).run_tool(&argv, &cwd, &env, &stdin, pipe_room, modes);
    if ran.read_all && !null_input {
        ctx.stdin.read_to_end();
    }
    ctx.out(&ran.stdout);
    let refused = match ran.end {
        ToolEnd::Exited(status) if status != 0 => refusal(ctx, &argv, &ran.stderr),
        _ => None,
    };
    ctx.err(&ran.stderr);
    if String::from_utf8_lossy(&ran.stderr).contains(SPECIAL_FILE) {
        ctx.warn(
            "the sandbox opens no FIFO, socket or device (a read of one could block past the \
             deadline): its commands read regular files",
        );
    }
    if let Some((arg, e)) = refused {
        match tool {
            "mkdir" => ctx.fail(format_args!("cannot create directory '{arg}'"), &e),
            _ => ctx.fail(arg, &e),
        }
    }

    match ran.end {
        ToolEnd::Exited(0) if tool == "rm" && refused_silently(ctx, &argv) => Ok(1),
        ToolEnd::Exited(status) => Ok(status),
        // Its reader takes no more: stopped as by SIGPIPE, which bash reports as 128 + 13.
        ToolEnd::BrokenPipe => {
            ctx.sh.io.cut_pipe(ctx.out);
            Ok(141)
        }
        ToolEnd::TimedOut => Err(Abort::Timeout),
        ToolEnd::Cancelled => Err(Abort::Cancelled),
        ToolEnd::OutOfFuel => {
            ctx.warn("stopped: out of fuel (the call's fuel budget)");
            Ok(137)
        }
        ToolEnd::Failed(why) => {
            ctx.warn(format_args!("stopped: {why}"));
            Ok(crate::shell::EXIT_INTERNAL)
        }
    }
}

/// Filters whose output never names their one input file, so that reading `/dev/null` is
/// reading an empty stdin.
const NULL_AS_STDIN: [&str; 11] = [
    "cat", "cut", "expand", "fold", "head", "nl", "rev", "sort", "tac", "tail", "unexpand",
];

/// `cat /dev/null` and its like: the sandbox has no `/dev` (a tool opening `/dev/null` finds
/// no such file), so a filter of [`NULL_AS_STDIN`] whose only operand is `/dev/null` reads `-`
/// from an empty stdin instead, which is what GNU prints for it (nothing). Whether `argv` was
/// changed so. Only a command line whose one non-option argument is `/dev/null` qualifies (an
/// option's separate value, as in `head -n 5`, makes it ambiguous: left alone). Other uses of `/dev/null` as an operand still fail as a missing file: a tool that prints
/// its operands' names (`wc`, `grep -c`) would print `-` in its place.
fn reads_dev_null(argv: &mut [String]) -> bool {
    if !NULL_AS_STDIN.contains(&argv[0].as_str()) {
        return false;
    }
    let only_null = {
        let mut only = operands(argv);
        matches!((only.next(), only.next()), (Some(a), None) if a == "/dev/null")
    };
    if !only_null || argv[1..].iter().any(|a| a == "-" || a == "--") {
        return false;
    }
    for arg in &mut argv[1..] {
        if arg == "/dev/null" {
            *arg = "-".into();
        }
    }
    true
}

/// The arguments of a tool's command line that may be paths: neither options nor empty.
fn operands(argv: &[String]) -> impl Iterator<Item = &String> {
    argv[1..]
        .iter()
        .filter(|a| !a.starts_with('-') && !a.is_empty())
}

/// The operands of `argv` that may name files: for a tool whose first operand is its program
/// or pattern (`sed '/(.)\1/p' f`, `grep PATTERN f`, `awk PROGRAM f`, `chmod MODE f`) unless an
/// option gave it, that first operand is not a path, even when it starts with `/`.
fn file_operands(argv: &[String]) -> impl Iterator<Item = &String> {
    let program_first = match argv[0].as_str() {
        "sed" => !argv[1..].iter().any(|a| {
            a.starts_with("-e")
                || a.starts_with("-f")
                || a.starts_with("--expression")
                || a.starts_with("--file")
        }),
        "grep" | "egrep" | "fgrep" => !argv[1..].iter().any(|a| {
            a.starts_with("-e")
                || a.starts_with("-f")
                || a.starts_with("--regexp")
                || a.starts_with("--file")
        }),
        "awk" => !argv[1..]
            .iter()
            .any(|a| a.starts_with("-f") || a.starts_with("--file")),
        // chmod's MODE, unless `--reference` or a mode that looks like an option (`-w`) gave it.
        "chmod" => !argv[1..].iter().any(|a| {
            a.starts_with("--reference")
                || a.strip_prefix('-')
                    .is_some_and(|l| l.starts_with(|c: char| "rwxXstugoa=+,01234567".contains(c)))
        }),
        _ => false,
    };
    operands(argv).skip(usize::from(program_first))
}

/// `rm -f` says nothing of a path it cannot reach (to WASI, one through a link out of the mount
/// does not exist), and succeeds; the shell says that the path was refused, as its built-in
/// did, and the command fails.
fn refused_silently(ctx: &mut Ctx<'_, '_>, argv: &[String]) -> bool {
    for arg in operands(argv) {
        if let Err(e) = ctx.resolve(arg, Access::Write, false)
            && e.restricted().is_some()
        {
            ctx.fail(arg, &e);
            return true;
        }
    }
    false
}

/// `strerror(ENXIO)`: what opening a FIFO, socket or device gets in the sandbox (the WASI
/// layer refuses them before the host's `open(2)` could block on one).
const SPECIAL_FILE: &str = "No such device or address";

/// What WASI says when the sandbox refuses a path: `..` or a link out of a mount (EPERM,
/// ENOTCAPABLE), a write to a read-only mount (EPERM, EACCES, EROFS). A path outside every
/// mount is just ENOENT to a WASI program.
const REFUSALS: [&str; 5] = [
    "Operation not permitted",
    "Permission denied",
    "Capabilities insufficient",
    "Read-only file system",
    "(os error 63)",
];

/// The tools that change every path they are given.
const WRITERS: [&str; 8] = [
    "chmod", "mkdir", "rmdir", "rm", "touch", "truncate", "unlink", "tee",
];

/// A tool that failed over a path the sandbox refuses says only what WASI told it: "No such
/// file or directory", "Operation not permitted". The shell's own resolution of its operands
/// then finds the refused one, to say why (outside the mounts, a link out, a read-only mount)
/// and make the command line's outcome `path_restriction`, as the shell's own refusals do
/// (only paths are looked at: nothing is opened). An operand is
/// looked at when the tool named it or a directory on its way (`mkdir: cannot create directory
/// 'up'` of `mkdir -p up/x`), or when the tool named none of them (`cp: No such file or
/// directory`), said a refusal, or ran in a cwd above the mounts (`/`). `/` itself (or a
/// directory above a mount point) is no directory to WASI: a tool that failed to read it, named
/// or as its cwd (`ls /`, `cd /; ls`), is told that only the mounts can be read.
fn refusal(ctx: &Ctx<'_, '_>, argv: &[String], stderr: &[u8]) -> Option<(String, FsError)> {
    let said = String::from_utf8_lossy(stderr);
    let named = |arg: &str| {
        said.contains(&format!("'{arg}'"))
            || said.contains(&format!("{arg}:"))
            || arg
                .match_indices('/')
                .map(|(at, _)| &arg[..at])
                .filter(|dir| !dir.is_empty())
                .any(|dir| said.contains(&format!("'{dir}'")) || said.contains(&format!("{dir}:")))
    };
    let above_mounts = ctx
        .resolve(".", Access::Read, true)
        .is_ok_and(|r| r.is_virtual());
    let denied = REFUSALS.iter().any(|r| said.contains(r));
    let anonymous = !file_operands(argv).any(|arg| named(arg));
    // `mkdir /newtop` fails as WASI's "no such file" (no mount holds it): the write it was is
    // what the sandbox refused.
    let writes = WRITERS.contains(&argv[0].as_str());
    let accesses: &[Access] = if denied || writes {
        &[Access::Read, Access::Write]
    } else {
        &[Access::Read]
    };
    for arg in file_operands(argv) {
        if !named(arg) && !denied && !anonymous && !above_mounts {
            continue;
        }
        for &access in accesses {
            if let Err(e) = ctx.resolve(arg, access, true)
                && e.restricted().is_some()
            {
                return Some((arg.clone(), e));
            }
        }
    }
    let unreadable = file_operands(argv).find_map(|arg| {
        let dir = ctx.resolve(arg, Access::Read, true).ok()?;
        (named(arg) && dir.is_virtual()).then(|| (arg.clone(), dir.guest))
    });
    match unreadable {
        Some((arg, guest)) => Some((arg, ctx.fs().above_mounts(guest))),
        None if above_mounts && file_operands(argv).next().is_none() && named(".") => Some((
            ctx.cwd().to_owned(),
            ctx.fs().above_mounts(ctx.cwd().to_owned()),
        )),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_unique() {
        let names: Vec<&str> = BUILTINS.iter().map(|b| b.name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(names, sorted);
    }

    /// An unknown name is bash's "command not found" (127), with what there is instead; a
    /// worker without its toolbox says that its file commands are missing.
    #[test]
    fn unknown_commands_are_not_found() {
        use crate::shell::tests::{FakeInterpreters, Sandbox};
        let mut s = Sandbox::new();
        let (_, err, code) = s.sh("nosuch -x");
        assert_eq!(code, 127);
        assert!(err.starts_with("nosuch: command not found\n"), "{err}");
        assert!(err.contains("WebAssembly tools: arch awk"), "{err}");
        let limits = s.limits();
        let mut without = FakeInterpreters::default();
        let o = crate::shell::execute("ls", &s.view, &mut s.state, &mut without, &limits);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.exit_code, 127);
        assert!(err.starts_with("ls: command not found\n"), "{err}");
        assert!(
            err.contains("ls among them, are missing on this server"),
            "{err}"
        );
    }

    /// No built-in opens what a tool would: none has a tool's name, so which runs never depends
    /// on the order of the dispatch.
    #[test]
    fn no_built_in_is_a_tool() {
        for b in BUILTINS {
            assert!(!crate::toolbox::Toolbox::has(b.name), "{}", b.name);
        }
    }
}
