//! The built-in commands: the table of names, usages and implementations, and the dispatch of a
//! command line to one of them. What the commands share lives in [`args`] (option parsing),
//! [`io`] (inputs, lines, per-operand errors), [`walk`] (tree walks) and [`posix`] (regular
//! expressions); name patterns are the shell's own [`Glob`](crate::shell::glob::Glob).
//!
//! There are no host programs: a name the session's toolbox has runs that WebAssembly tool
//! ([`crate::toolbox`], inside the sandbox), even when a built-in of the name exists, so that
//! every command that touches files goes through WASI's confinement; those built-ins are the
//! fallback of a session without a toolbox. The shell's own commands (cd, export, echo, printf,
//! test, xargs, the interpreters...) are not in the toolbox. Any other name exits 127 with the
//! list of what is available, so an agent learns at once what it can use. `/bin/ls`-style paths
//! to a built-in or a tool run it; other paths are scripts run by [`scripts::run_file`].

mod args;
mod cond;
mod control;
mod copy;
mod files;
mod find;
mod grep;
mod interp;
mod io;
mod posix;
mod printf;
mod scripts;
mod sed;
mod session;
mod sort;
mod text;
mod tr;
mod walk;

use super::exec::{Abort, Ctx};
use crate::shell::path::{Access, Kind};
use crate::toolbox::ToolEnd;
pub(crate) use cond::{binary_test, unary_test};

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
    "basename" => session::basename, "basename NAME [SUFFIX]",
        "strip directory and suffix from a path";
    "bash" => scripts::sh, "bash [-c SCRIPT | FILE] [ARGS]",
        "run a script in a child shell (this shell)";
    "break" => control::break_, "break [N]", "leave the innermost N loops";
    "cat" => text::cat, "cat [-n] [FILE...]", "concatenate files to stdout";
    "cd" => session::cd, "cd [DIR | -]", "change directory (persists between calls)";
    "chmod" => files::chmod, "chmod MODE FILE...",
        "change permission bits (octal or [ugoa][+-=][rwx])";
    "command" => control::command, "command [-v | -V] NAME [ARG...]",
        "run NAME ignoring functions, or say what each NAME is (-v, -V)";
    "continue" => control::continue_, "continue [N]",
        "go on with the next iteration of the Nth loop";
    "cp" => copy::cp, "cp [-r] [-f] [-n] SRC... DEST", "copy files and directories";
    "cut" => text::cut, "cut -d DELIM -f LIST | -c LIST [-s] [FILE...]",
        "select fields or characters of lines";
    "date" => session::date, "date [-u] [-d DATE] [+FORMAT]", "print the date and time (UTC)";
    "declare" => control::declare, "declare [-ixrg] NAME[=VALUE]...",
        "set variables (local in a function); no arrays (-a, -A)";
    "dirname" => session::dirname, "dirname PATH...", "strip the last component of a path";
    "du" => find::du, "du [-s] [-h] [-a] [-c] [PATH...]", "disk usage of files and directories";
    "echo" => printf::echo, "echo [-n] [-e] [ARG...]", "print arguments";
    "env" => session::env, "env [NAME=VALUE...] [COMMAND [ARG...]]",
        "print the environment, or run a command with more of it";
    "eval" => control::eval, "eval [ARG...]",
        "run the arguments as a command line in this shell";
    "exit" => session::exit, "exit [N]", "stop the script with status N";
    "export" => session::export, "export [NAME[=VALUE]...]",
        "set variables (all variables are exported)";
    "false" => session::false_, "false", "exit with status 1";
    "find" => find::find,
        "find [PATH...] [-name PAT] [-iname PAT] [-path PAT] [-type f|d|l] [-maxdepth N] \
         [-mindepth N] [-empty] [-not|!]",
        "search for files in a directory tree";
    "getopts" => control::getopts, "getopts OPTSTRING NAME [ARG...]",
        "parse options: the next one into NAME, its value into OPTARG";
    "grep" => grep::grep,
        "grep [-iwvxnclLhHoqsrRFE] [-m N] [-A N] [-B N] [-C N] [-e PAT] [--include GLOB] \
         PATTERN [FILE...]",
        "print lines matching a regular expression";
    "head" => text::head, "head [-n N | -N] [-c N] [FILE...]", "first lines of files";
    "help" => session::help, "help [COMMAND]", "list the commands, or describe one";
    "let" => control::let_, "let EXPR...",
        "evaluate arithmetic expressions (status 1 when the last is 0)";
    "local" => control::local, "local NAME[=VALUE]...",
        "make variables local to the running function";
    "ls" => files::ls, "ls [-laA1RhdrtS] [PATH...]", "list directory contents";
    "mapfile" => control::mapfile, "mapfile", "(arrays are not supported)";
    "mkdir" => files::mkdir, "mkdir [-p] DIR...", "make directories";
    "mv" => copy::mv, "mv [-f] [-n] SRC... DEST", "move or rename files";
    "node" => interp::node, "node FILE [ARGS] | node -e CODE",
        "run JavaScript in the session's interpreter";
    "pip" => interp::pip, "pip install [-r FILE] NAME[==VERSION]... | pip list",
        "install Python packages into the session";
    "pip3" => interp::pip, "pip3 install NAME[==VERSION]...", "same as pip";
    "printenv" => session::printenv, "printenv [NAME...]", "print environment variables";
    "printf" => printf::printf, "printf FORMAT [ARG...]", "format and print data";
    "pwd" => session::pwd, "pwd", "print the working directory";
    "python" => interp::python,
        "python FILE [ARGS] | python -c CODE [ARGS] | python -m MODULE [ARGS]",
        "run Python in the session's interpreter";
    "python3" => interp::python, "python3 FILE [ARGS] | python3 -c CODE [ARGS]",
        "same as python";
    "qjs" => interp::node, "qjs FILE [ARGS] | qjs -e CODE", "same as node";
    "read" => control::read, "read [-r] [-p PROMPT] [-d DELIM] [NAME...]",
        "read a line of stdin into variables (split on IFS)";
    "readarray" => control::mapfile, "readarray", "(arrays are not supported)";
    "readonly" => control::readonly, "readonly NAME[=VALUE]...",
        "set variables that later assignments may not change";
    "realpath" => session::realpath, "realpath PATH...", "print the absolute, normalised path";
    "return" => control::return_, "return [N]",
        "leave the running function or sourced script";
    "rm" => files::rm, "rm [-r] [-f] [-d] PATH...", "remove files or directories";
    "rmdir" => files::rmdir, "rmdir [-p] DIR...", "remove empty directories";
    "sed" => sed::sed, "sed [-n] [-E] [-i] [-e SCRIPT]... [SCRIPT] [FILE...]",
        "stream editor: s/RE/REPL/[gip N], p, d, q with line, $ and /RE/ addresses";
    "seq" => printf::seq, "seq [-s SEP] [-w] [FIRST [INCR]] LAST", "print a sequence of numbers";
    "set" => session::set, "set [-euxo pipefail] [+euxo pipefail] [-- ARGS]",
        "set options for this call: -e, -u, -o pipefail, -x; or $1... with --";
    "sh" => scripts::sh, "sh [-c SCRIPT | FILE] [ARGS]",
        "run a script in a child shell (this shell)";
    "shift" => control::shift, "shift [N]", "drop the first N positional parameters";
    "sleep" => session::sleep, "sleep SECONDS", "wait (bounded by the deadline)";
    "sort" => sort::sort, "sort [-rnufbu] [-k N[,M]] [-t SEP] [FILE...]", "sort lines";
    "source" => scripts::source, "source FILE [ARGS]", "run a shell script in this shell";
    "tail" => text::tail, "tail [-n N | -N | -n +N] [-c N] [FILE...]", "last lines of files";
    "tee" => text::tee, "tee [-a] [FILE...]", "copy stdin to stdout and files";
    "test" => cond::test, "test EXPR",
        "evaluate a condition (-e -f -d -s -z -n = != -eq -ne -lt -le -gt -ge ! -a -o)";
    "touch" => files::touch, "touch [-c] [-d DATE] FILE...", "create files or update their times";
    "tr" => tr::tr, "tr [-d] [-s] [-c] SET1 [SET2]", "translate, squeeze or delete characters";
    "true" => session::true_, "true", "exit with status 0";
    "type" => session::type_, "type NAME...", "say how a name would be run";
    "typeset" => control::declare, "typeset [-ixrg] NAME[=VALUE]...", "same as declare";
    "uniq" => text::uniq, "uniq [-c] [-d] [-u] [-i] [FILE]",
        "drop or count repeated adjacent lines";
    "unset" => session::unset, "unset NAME...", "remove variables";
    "wc" => text::wc, "wc [-l] [-w] [-c] [-m] [FILE...]", "count lines, words and bytes";
    "which" => session::which, "which NAME...", "say whether a command is available";
    "xargs" => scripts::xargs, "xargs [-n N] [-I STR] [-0] [-d DELIM] [COMMAND [ARG...]]",
        "run a command with arguments read from stdin";
}

/// Looks a command up by name.
pub(crate) fn find(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// The names of the built-ins that run (a tool of the session's toolbox shadows a built-in of
/// its name), for "command not found".
pub(crate) fn names(ctx: &Ctx<'_, '_>) -> String {
    let names: Vec<&str> = (BUILTINS.iter())
        .map(|b| b.name)
        .filter(|name| !ctx.sh.interpreters.has_tool(name))
        .collect();
    names.join(" ")
}

/// Runs a command line: a built-in, a script given by path, or "command not found".
pub(crate) fn dispatch(ctx: &mut Ctx<'_, '_>, argv: &[String]) -> Result<i32, Abort> {
    let name = argv[0].as_str();
    // The toolbox first: its tools confine their paths by WASI, as the interpreters' are.
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
    let tools = crate::toolbox::COMMANDS.join(" ");
    let tools = if ctx.sh.interpreters.has_toolbox() {
        format!(" and these WebAssembly tools: {tools}")
    } else {
        String::new()
    };
    let msg = format!(
        "{name}: command not found\nThis sandbox shell has its built-in commands (no external \
         programs): {}{tools}\nRun `help` for details; use python -c or node -e for anything \
         else.\n",
        names(ctx)
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
    let env: Vec<(String, String)> = (ctx.sh.state.vars.iter())
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    if let Some((arg, kind)) = special_operand(ctx, &argv) {
        ctx.warn(format_args!(
            "{arg}: not a regular file (a {kind}): the sandbox's commands read regular files \
             only"
        ));
        return Ok(1);
    }
    let stdin = ctx.stdin.all().to_vec();
    let cwd = ctx.cwd().to_owned();
    let ran = ctx.sh.interpreters.run_tool(&argv, &cwd, &env, &stdin);
    ctx.out(&ran.stdout);
    ctx.err(&ran.stderr);

    match ran.end {
        ToolEnd::Exited(status) => {
            if status != 0 {
                explain_refusal(ctx, &argv, &ran.stderr);
            } else if tool == "rm" && refused_silently(ctx, &argv) {
                return Ok(1);
            }
            Ok(status)
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

/// The arguments of a tool's command line that may be paths: neither options nor empty.
fn operands(argv: &[String]) -> impl Iterator<Item = &String> {
    argv[1..]
        .iter()
        .filter(|a| !a.starts_with('-') && !a.is_empty())
}

/// An operand that names a FIFO, socket or device: a WebAssembly tool that opened it would
/// block in the host's open(2) or read(2), out of the deadline's reach, so the tool does not
/// start (the built-ins refuse such files the same way).
fn special_operand(ctx: &Ctx<'_, '_>, argv: &[String]) -> Option<(String, &'static str)> {
    for arg in operands(argv) {
        let Ok(node) = ctx.resolve(arg, Access::Read, true) else {
            continue;
        };
        let kind = match ctx.fs().stat(&node).map(|m| m.kind) {
            Ok(Kind::Fifo) => "FIFO",
            Ok(Kind::Socket) => "socket",
            Ok(Kind::CharDevice | Kind::BlockDevice) => "device",
            _ => continue,
        };
        return Some((arg.clone(), kind));
    }
    None
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

/// A tool that failed over a path the sandbox refuses says only what WASI told it: "No such
/// file or directory", "Operation not permitted". The shell's own resolution of its operands
/// then says why (outside the mounts, a link out, a read-only mount) on stderr and makes the
/// command line's outcome `path_restriction`, as its built-ins' refusals do. An operand is
/// looked at when the tool named it or a directory on its way (`mkdir: cannot create directory
/// 'up'` of `mkdir -p up/x`), or when the tool said a refusal without naming one (cp).
fn explain_refusal(ctx: &mut Ctx<'_, '_>, argv: &[String], stderr: &[u8]) {
    let said = String::from_utf8_lossy(stderr);
    let denied = REFUSALS.iter().any(|r| said.contains(r));
    let accesses: &[Access] = if denied {
        &[Access::Read, Access::Write]
    } else {
        &[Access::Read]
    };
    for arg in operands(argv) {
        let named = said.contains(arg.as_str())
            || arg
                .match_indices('/')
                .map(|(at, _)| &arg[..at])
                .filter(|dir| !dir.is_empty())
                .any(|dir| said.contains(&format!("'{dir}'")) || said.contains(&format!("{dir}:")));
        if !named && !denied {
            continue;
        }
        for &access in accesses {
            if let Err(e) = ctx.resolve(arg, access, true)
                && e.restricted().is_some()
            {
                ctx.fail(arg, &e);
                return;
            }
        }
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
}
