//! The built-in commands: the table of names, usages and implementations, the dispatch of a
//! command line to one of them, and what they share (GNU-style option parsing, opening inputs).
//!
//! There are no external programs: a name that is not in [`BUILTINS`] exits 127 with the list of
//! what is available, so an agent learns at once what it can use. `/bin/ls`-style paths to a
//! built-in run the built-in; other paths are scripts run by [`session::run_file`].

mod files;
mod grep;
mod interp;
mod sed;
mod session;
mod text;

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};

use super::exec::{Abort, Ctx, MAX_READ, StdinReader};
use super::path::{Access, FsError};

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

const fn b(name: &'static str, run: Run, usage: &'static str, about: &'static str) -> Builtin {
    Builtin {
        name,
        run,
        usage,
        about,
    }
}

/// Every command, sorted by name.
pub(crate) static BUILTINS: &[Builtin] = &[
    b(
        ".",
        session::source,
        ". FILE [ARGS]",
        "run a shell script in this shell (same as source)",
    ),
    b(
        "[",
        session::test,
        "[ EXPR ]",
        "evaluate a condition (same as test)",
    ),
    b(
        "basename",
        session::basename,
        "basename NAME [SUFFIX]",
        "strip directory and suffix from a path",
    ),
    b(
        "bash",
        session::sh,
        "bash [-c SCRIPT | FILE] [ARGS]",
        "run a script in a child shell (this shell)",
    ),
    b(
        "cat",
        text::cat,
        "cat [-n] [FILE...]",
        "concatenate files to stdout",
    ),
    b(
        "cd",
        session::cd,
        "cd [DIR | -]",
        "change directory (persists between calls)",
    ),
    b(
        "chmod",
        files::chmod,
        "chmod MODE FILE...",
        "change permission bits (octal or [ugoa][+-=][rwx])",
    ),
    b(
        "cp",
        files::cp,
        "cp [-r] [-f] [-n] SRC... DEST",
        "copy files and directories",
    ),
    b(
        "cut",
        text::cut,
        "cut -d DELIM -f LIST | -c LIST [-s] [FILE...]",
        "select fields or characters of lines",
    ),
    b(
        "date",
        session::date,
        "date [-u] [+FORMAT]",
        "print the date and time (UTC)",
    ),
    b(
        "dirname",
        session::dirname,
        "dirname PATH...",
        "strip the last component of a path",
    ),
    b(
        "du",
        files::du,
        "du [-s] [-h] [-a] [-c] [PATH...]",
        "disk usage of files and directories",
    ),
    b(
        "echo",
        text::echo,
        "echo [-n] [-e] [ARG...]",
        "print arguments",
    ),
    b(
        "env",
        session::env,
        "env [NAME=VALUE...] [COMMAND [ARG...]]",
        "print the environment, or run a command with more of it",
    ),
    b(
        "exit",
        session::exit,
        "exit [N]",
        "stop the script with status N",
    ),
    b(
        "export",
        session::export,
        "export [NAME[=VALUE]...]",
        "set variables (all variables are exported)",
    ),
    b("false", session::false_, "false", "exit with status 1"),
    b(
        "find",
        files::find,
        "find [PATH...] [-name PAT] [-iname PAT] [-path PAT] [-type f|d|l] [-maxdepth N] [-mindepth N] [-empty] [-not|!]",
        "search for files in a directory tree",
    ),
    b(
        "grep",
        grep::grep,
        "grep [-iwvxnclLhHoqsrRFE] [-m N] [-A N] [-B N] [-C N] [-e PAT] [--include GLOB] PATTERN [FILE...]",
        "print lines matching a regular expression",
    ),
    b(
        "head",
        text::head,
        "head [-n N | -N] [-c N] [FILE...]",
        "first lines of files",
    ),
    b(
        "help",
        session::help,
        "help [COMMAND]",
        "list the commands, or describe one",
    ),
    b(
        "ls",
        files::ls,
        "ls [-laA1RhdrtS] [PATH...]",
        "list directory contents",
    ),
    b(
        "mkdir",
        files::mkdir,
        "mkdir [-p] DIR...",
        "make directories",
    ),
    b(
        "mv",
        files::mv,
        "mv [-f] [-n] SRC... DEST",
        "move or rename files",
    ),
    b(
        "node",
        interp::node,
        "node FILE [ARGS] | node -e CODE",
        "run JavaScript in the session's interpreter",
    ),
    b(
        "pip",
        interp::pip,
        "pip install [-r FILE] NAME[==VERSION]... | pip list",
        "install Python packages into the session",
    ),
    b(
        "pip3",
        interp::pip,
        "pip3 install NAME[==VERSION]...",
        "same as pip",
    ),
    b(
        "printenv",
        session::printenv,
        "printenv [NAME...]",
        "print environment variables",
    ),
    b(
        "printf",
        text::printf,
        "printf FORMAT [ARG...]",
        "format and print data",
    ),
    b("pwd", session::pwd, "pwd", "print the working directory"),
    b(
        "python",
        interp::python,
        "python FILE [ARGS] | python -c CODE [ARGS] | python -m MODULE [ARGS]",
        "run Python in the session's interpreter",
    ),
    b(
        "python3",
        interp::python,
        "python3 FILE [ARGS] | python3 -c CODE [ARGS]",
        "same as python",
    ),
    b(
        "qjs",
        interp::node,
        "qjs FILE [ARGS] | qjs -e CODE",
        "same as node",
    ),
    b(
        "realpath",
        session::realpath,
        "realpath PATH...",
        "print the absolute, normalised path",
    ),
    b(
        "rm",
        files::rm,
        "rm [-r] [-f] [-d] PATH...",
        "remove files or directories",
    ),
    b(
        "rmdir",
        files::rmdir,
        "rmdir [-p] DIR...",
        "remove empty directories",
    ),
    b(
        "sed",
        sed::sed,
        "sed [-n] [-E] [-i] [-e SCRIPT]... [SCRIPT] [FILE...]",
        "stream editor: s/RE/REPL/[gip N], p, d, q with line, $ and /RE/ addresses",
    ),
    b(
        "seq",
        text::seq,
        "seq [-s SEP] [-w] [FIRST [INCR]] LAST",
        "print a sequence of numbers",
    ),
    b(
        "set",
        session::set,
        "set [-euxo pipefail] [+euxo pipefail] [-- ARGS]",
        "set options for this call: -e, -o pipefail, -x (-u accepted); or $1... with --",
    ),
    b(
        "sh",
        session::sh,
        "sh [-c SCRIPT | FILE] [ARGS]",
        "run a script in a child shell (this shell)",
    ),
    b(
        "sleep",
        session::sleep,
        "sleep SECONDS",
        "wait (bounded by the deadline)",
    ),
    b(
        "sort",
        text::sort,
        "sort [-rnufbu] [-k N[,M]] [-t SEP] [FILE...]",
        "sort lines",
    ),
    b(
        "source",
        session::source,
        "source FILE [ARGS]",
        "run a shell script in this shell",
    ),
    b(
        "tail",
        text::tail,
        "tail [-n N | -N | -n +N] [-c N] [FILE...]",
        "last lines of files",
    ),
    b(
        "tee",
        text::tee,
        "tee [-a] [FILE...]",
        "copy stdin to stdout and files",
    ),
    b(
        "test",
        session::test,
        "test EXPR",
        "evaluate a condition (-e -f -d -s -z -n = != -eq -ne -lt -le -gt -ge ! -a -o)",
    ),
    b(
        "touch",
        files::touch,
        "touch [-c] FILE...",
        "create files or update their times",
    ),
    b(
        "tr",
        text::tr,
        "tr [-d] [-s] [-c] SET1 [SET2]",
        "translate, squeeze or delete characters",
    ),
    b("true", session::true_, "true", "exit with status 0"),
    b(
        "type",
        session::type_,
        "type NAME...",
        "say how a name would be run",
    ),
    b(
        "uniq",
        text::uniq,
        "uniq [-c] [-d] [-u] [-i] [FILE]",
        "drop or count repeated adjacent lines",
    ),
    b("unset", session::unset, "unset NAME...", "remove variables"),
    b(
        "wc",
        text::wc,
        "wc [-l] [-w] [-c] [-m] [FILE...]",
        "count lines, words and bytes",
    ),
    b(
        "which",
        session::which,
        "which NAME...",
        "say whether a command is available",
    ),
    b(
        "xargs",
        session::xargs,
        "xargs [-n N] [-I STR] [-0] [-d DELIM] [COMMAND [ARG...]]",
        "run a command with arguments read from stdin",
    ),
];

/// Looks a command up by name.
pub(crate) fn find(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// The names, for "command not found" and `help`.
pub(crate) fn names() -> String {
    BUILTINS
        .iter()
        .map(|b| b.name)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs a command line: a built-in, a script given by path, or "command not found".
pub(crate) fn dispatch(ctx: &mut Ctx<'_, '_>, argv: &[String]) -> Result<i32, Abort> {
    let name = argv[0].as_str();
    let builtin = find(name).or_else(|| {
        // `/bin/ls`, `/usr/bin/env python3`: the built-in of that name.
        let base = name.rsplit('/').next()?;
        let dir = &name[..name.len() - base.len()];
        matches!(
            dir,
            "/bin/" | "/usr/bin/" | "/usr/local/bin/" | "/sbin/" | "/usr/sbin/"
        )
        .then(|| find(base))
        .flatten()
    });
    if let Some(b) = builtin {
        if argv.get(1).is_some_and(|a| a == "--help") && !matches!(b.name, "echo" | "printf") {
            let text = format!("usage: {}\n{}\n", b.usage, b.about);
            ctx.outs(&text);
            return Ok(0);
        }
        return (b.run)(ctx, &argv[1..]);
    }
    if name.contains('/') {
        return session::run_file(ctx, argv);
    }
    let msg = format!(
        "{name}: command not found\nThis sandbox shell has only built-in commands (no external programs): {}\nRun `help` for details; use python -c or node -e for anything else.\n",
        names()
    );
    ctx.err(msg.as_bytes());
    Ok(127)
}

/// Parsed command-line options.
#[derive(Debug, Default)]
pub(crate) struct Opts {
    flags: Vec<char>,
    values: Vec<(char, String)>,
    pub operands: Vec<String>,
}

impl Opts {
    pub(crate) fn has(&self, c: char) -> bool {
        self.flags.contains(&c)
    }

    /// The last value given for an option.
    pub(crate) fn value(&self, c: char) -> Option<&str> {
        self.values
            .iter()
            .rev()
            .find(|(k, _)| *k == c)
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn values(&self, c: char) -> Vec<&str> {
        self.values
            .iter()
            .filter(|(k, _)| *k == c)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// Whether `a` was given after `b` (for options that override each other).
    pub(crate) fn later(&self, a: char, b: char) -> bool {
        let pos = |c| self.flags.iter().rposition(|&f| f == c);
        pos(a) > pos(b)
    }
}

/// GNU-style option parsing: clustered short flags (`-la`), values attached or separate
/// (`-n5`, `-n 5`), long options mapped to letters (`--recursive`, `--lines=5`), options after
/// operands, `--` ends options. `spec` lists the letters; a letter followed by `:` takes a value.
/// Prints the error and returns `None` on an unknown option or a missing value.
pub(crate) fn opts(
    ctx: &mut Ctx<'_, '_>,
    args: &[String],
    spec: &str,
    longs: &[(&str, char)],
) -> Option<Opts> {
    let takes_value = |c: char| spec.find(c).is_some_and(|i| spec[i + 1..].starts_with(':'));
    let known = |c: char| c != ':' && spec.contains(c);
    let mut o = Opts::default();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--" {
            o.operands.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let Some(&(_, c)) = longs.iter().find(|(n, _)| *n == name) else {
                ctx.warn(format_args!("unrecognized option '--{name}'"));
                return None;
            };
            if takes_value(c) {
                let value = match inline {
                    Some(v) => v,
                    None if i < args.len() => {
                        i += 1;
                        args[i - 1].clone()
                    }
                    None => {
                        ctx.warn(format_args!("option '--{name}' requires an argument"));
                        return None;
                    }
                };
                o.values.push((c, value));
            } else {
                o.flags.push(c);
            }
            continue;
        }
        if arg.len() < 2 || !arg.starts_with('-') {
            o.operands.push(arg.clone());
            continue;
        }
        let chars: Vec<char> = arg[1..].chars().collect();
        let mut j = 0;
        while j < chars.len() {
            let c = chars[j];
            j += 1;
            if !known(c) {
                ctx.warn(format_args!("invalid option -- '{c}'"));
                return None;
            }
            if takes_value(c) {
                let value = if j < chars.len() {
                    chars[j..].iter().collect()
                } else if i < args.len() {
                    i += 1;
                    args[i - 1].clone()
                } else {
                    ctx.warn(format_args!("option requires an argument -- '{c}'"));
                    return None;
                };
                o.values.push((c, value));
                break;
            }
            o.flags.push(c);
        }
    }
    Some(o)
}

/// Where a filter reads: stdin (`-`), or a confined file.
pub(crate) enum Source {
    Stdin(StdinReader),
    File(BufReader<File>),
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Source::Stdin(r) => r.read(buf),
            Source::File(r) => r.read(buf),
        }
    }
}

impl BufRead for Source {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match self {
            Source::Stdin(r) => r.fill_buf(),
            Source::File(r) => r.fill_buf(),
        }
    }

    fn consume(&mut self, amt: usize) {
        match self {
            Source::Stdin(r) => r.consume(amt),
            Source::File(r) => r.consume(amt),
        }
    }
}

/// Opens an input operand; prints `NAME: ARG: error` and returns `None` when it cannot.
pub(crate) fn open_input(ctx: &mut Ctx<'_, '_>, arg: &str) -> Option<Source> {
    match arg {
        "-" | "/dev/stdin" => return Some(Source::Stdin(ctx.stdin.reader())),
        "/dev/null" => return Some(Source::Stdin(super::exec::Input::default().reader())),
        _ => {}
    }
    let opened = ctx
        .resolve(arg, Access::Read, true)
        .and_then(|r| ctx.fs().open_read(&r));
    match opened {
        Ok(f) => Some(Source::File(BufReader::with_capacity(64 << 10, f))),
        Err(e) => {
            ctx.fail(arg, &e);
            None
        }
    }
}

/// Reads a whole input operand (at most [`MAX_READ`] bytes); prints the error and returns `None`
/// when it cannot.
pub(crate) fn read_input(ctx: &mut Ctx<'_, '_>, arg: &str) -> Option<Vec<u8>> {
    if arg == "-" || arg == "/dev/stdin" {
        return Some(ctx.stdin.all().to_vec());
    }
    let mut src = open_input(ctx, arg)?;
    let mut data = Vec::new();
    match (&mut src).take(MAX_READ + 1).read_to_end(&mut data) {
        Ok(_) if data.len() as u64 > MAX_READ => {
            ctx.warn(format_args!(
                "{arg}: file too large for the shell (over {} MiB); use python",
                MAX_READ >> 20
            ));
            None
        }
        Ok(_) => Some(data),
        Err(e) => {
            ctx.fail(arg, &FsError::Io(e));
            None
        }
    }
}

/// Reads one line (with its `\n`, if any) into `buf`; `false` at the end.
///
/// # Errors
/// Read errors.
pub(crate) fn next_line(src: &mut impl BufRead, buf: &mut Vec<u8>) -> io::Result<bool> {
    buf.clear();
    Ok(src.read_until(b'\n', buf)? > 0)
}

/// Splits text into lines without their `\n` (a last line without one counts too).
pub(crate) fn lines(data: &[u8]) -> Vec<&[u8]> {
    let mut v: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if data.is_empty() || data.ends_with(b"\n") {
        v.pop();
    }
    v
}

/// A count like `5`, for `-n` style options; prints the error on bad input.
pub(crate) fn parse_count(ctx: &mut Ctx<'_, '_>, what: &str, s: &str) -> Option<u64> {
    match s.trim().parse::<u64>() {
        Ok(n) => Some(n),
        Err(_) => {
            ctx.warn(format_args!("invalid {what}: '{s}'"));
            None
        }
    }
}

/// Sizes as `ls -h` and `du -h` print them: `512`, `4.0K`, `1.5M`, `12G` (rounded up).
pub(crate) fn human(n: u64) -> String {
    const UNITS: [&str; 6] = ["K", "M", "G", "T", "P", "E"];
    if n < 1024 {
        return n.to_string();
    }
    let mut value = n as f64;
    let mut unit = 0;
    value /= 1024.0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if value < 10.0 {
        let tenths = (value * 10.0).ceil() / 10.0;
        if tenths < 10.0 {
            return format!("{tenths:.1}{}", UNITS[unit]);
        }
        return format!("10{}", UNITS[unit]);
    }
    let whole = value.ceil();
    if whole >= 1024.0 && unit < UNITS.len() - 1 {
        return format!("1.0{}", UNITS[unit + 1]);
    }
    format!("{whole:.0}{}", UNITS[unit])
}

/// Calendar fields of a UTC time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Civil {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    /// 0 = Sunday.
    pub weekday: u32,
    /// 1-based day of the year.
    pub yday: u32,
}

pub(crate) const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Converts seconds since the epoch to UTC calendar fields (Howard Hinnant's civil_from_days).
pub(crate) fn civil(secs: i64) -> Civil {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    const CUM: [u32; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    let yday = CUM[month as usize - 1] + day + u32::from(leap && month > 2);
    Civil {
        year,
        month,
        day,
        hour: (rem / 3600) as u32,
        minute: (rem % 3600 / 60) as u32,
        second: (rem % 60) as u32,
        weekday: (days + 4).rem_euclid(7) as u32,
        yday,
    }
}

/// Seconds since the epoch now.
pub(crate) fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes_round_up_like_coreutils() {
        assert_eq!(human(0), "0");
        assert_eq!(human(1023), "1023");
        assert_eq!(human(1024), "1.0K");
        assert_eq!(human(1025), "1.1K");
        assert_eq!(human(4096), "4.0K");
        assert_eq!(human(10 * 1024 - 1), "10K");
        assert_eq!(human(123_456), "121K");
        assert_eq!(human(1536 * 1024), "1.5M");
        assert_eq!(human(1024 * 1024 * 1024 - 1), "1.0G");
    }

    #[test]
    fn civil_dates() {
        let c = civil(0);
        assert_eq!(
            (c.year, c.month, c.day, c.weekday, c.yday),
            (1970, 1, 1, 4, 1)
        );
        let c = civil(1_709_210_096); // 2024-02-29 12:34:56 UTC, a Thursday
        assert_eq!(
            (c.year, c.month, c.day, c.hour, c.minute, c.second),
            (2024, 2, 29, 12, 34, 56)
        );
        assert_eq!((c.weekday, c.yday), (4, 60));
        assert_eq!(civil(-1).year, 1969);
    }

    #[test]
    fn line_splitting() {
        assert_eq!(lines(b"a\nb\n"), vec![&b"a"[..], b"b"]);
        assert_eq!(lines(b"a\nb"), vec![&b"a"[..], b"b"]);
        assert_eq!(lines(b""), Vec::<&[u8]>::new());
        assert_eq!(lines(b"\n"), vec![&b""[..]]);
    }

    #[test]
    fn the_table_is_sorted_and_unique() {
        let names: Vec<&str> = BUILTINS.iter().map(|b| b.name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(names, sorted);
    }
}
