//! Built-ins that run more shell: `sh`/`bash` (a child shell), `source`/`.` (this shell),
//! `./script` by path (by its `#!` line or extension), `xargs`, and `timeout`.

use std::time::{Duration, Instant};

use super::args::{Opts, opts};
use super::find as find_builtin;
use super::io::read_input;
use super::trap::{signal_name, signal_number};
use crate::shell::exec::{Abort, Ctx, Input};
use crate::shell::guest_fs::{Access, Kind};

/// Reads a script or program file given by a guest path.
fn read_script(ctx: &mut Ctx<'_, '_>, path: &str) -> Option<String> {
    read_input(ctx, path).map(|d| String::from_utf8_lossy(&d).into_owned())
}

pub(super) fn sh(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    // -e, -u, -x, -l and -s change nothing in a child shell here; options end at the script.
    let (short, long) = ("+ceuxls", "login=l norc=s noprofile=s");
    // bash's own words for an option it does not know: `sh: -q: invalid option`.
    let mut leading = args
        .iter()
        .take_while(|a| a.len() > 1 && a.starts_with('-') && *a != "--");
    let known = |a: &str| match a.strip_prefix("--") {
        Some(name) => long
            .split_whitespace()
            .any(|p| p.starts_with(&format!("{name}="))),
        None => a[1..].chars().all(|c| short[1..].contains(c)),
    };
    if let Some(bad) = leading.find(|a| !known(a)) {
        ctx.warn(format_args!("{bad}: invalid option"));
        return Ok(2);
    }
    let Some(o) = opts(ctx, args, short, long) else {
        return Ok(2);
    };
    let mut args = o.operands.as_slice();
    let command = if o.has('c') {
        let Some((src, rest)) = args.split_first() else {
            ctx.warn("-c: option requires an argument");
            return Ok(2);
        };
        args = rest;
        Some(src.clone())
    } else {
        None
    };
    let streams = (Input::default(), ctx.out, ctx.err);
    if let Some(src) = command {
        let positional = if args.is_empty() {
            vec![ctx.name.clone()]
        } else {
            args.to_vec()
        };
        let fds = (ctx.stdin.clone(), ctx.out, ctx.err);
        return ctx.sh.run_source(&src, Some(positional), fds, true);
    }
    match args.first() {
        Some(file) => {
            let Some(src) = read_script(ctx, file) else {
                return Ok(127);
            };
            ctx.sh.run_source(&src, Some(args.to_vec()), streams, true)
        }
        None => {
            let src = String::from_utf8_lossy(ctx.stdin.all()).into_owned();
            ctx.sh.run_source(&src, None, streams, true)
        }
    }
}

pub(super) fn source(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some((file, rest)) = args.split_first() else {
        ctx.warn("filename argument required");
        return Ok(2);
    };
    let Some(src) = read_script(ctx, file) else {
        return Ok(1);
    };
    // `$1`... are the arguments, when there are any.
    let positional = (!rest.is_empty()).then(|| keeping_zero(ctx, rest.iter().cloned()));
    let fds = (ctx.stdin.clone(), ctx.out, ctx.err);
    // `return` ends the sourced script.
    ctx.sh.returnable += 1;
    let result = ctx.sh.run_source(&src, positional, fds, false);
    ctx.sh.returnable -= 1;
    match result {
        Err(Abort::Return(code)) => Ok(code),
        other => other,
    }
}

/// New positional parameters for the running script: `$0` stays, `args` are `$1`... (what
/// `source FILE ARGS` and `set -- ARGS` do).
pub(super) fn keeping_zero(ctx: &Ctx<'_, '_>, args: impl Iterator<Item = String>) -> Vec<String> {
    let zero = ctx
        .sh
        .positional
        .first()
        .cloned()
        .unwrap_or_else(|| "sh".into());
    std::iter::once(zero).chain(args).collect()
}

/// The interpreter a script file asks for: its `#!` line, else its extension, else the shell.
fn interpreter_of(path: &str, src: &str) -> &'static str {
    let first = src.lines().next().unwrap_or("");
    match first.strip_prefix("#!") {
        Some(line) if line.contains("python") => "python",
        Some(line) if line.contains("node") || line.contains("qjs") => "node",
        Some(_) => "sh",
        None if path.ends_with(".py") => "python",
        None if path.ends_with(".js") || path.ends_with(".mjs") => "node",
        None => "sh",
    }
}

/// `./script`, `/app/run.sh`, `bin/tool.py`: runs a file by its `#!` line or its extension;
/// everything else is a shell script. As in bash, a file without an execute bit is refused
/// (status 126, "Permission denied": `chmod +x` it, or run `sh FILE`), so a script that works
/// here works on the machine it is written for.
pub(super) fn run_file(ctx: &mut Ctx<'_, '_>, argv: &[String]) -> Result<i32, Abort> {
    let path = &argv[0];
    let found = (ctx.fs().place(ctx.cwd(), path, Access::Read)).and_then(|r| {
        match ctx.sh.file_info(path, true) {
            Some(info) => Ok((info, r)),
            None => Err(ctx
                .sh
                .explained(path, Access::Read, b"No such file or directory")),
        }
    });
    let node = match found {
        Ok((info, _)) if info.kind == Kind::Dir => {
            ctx.warn("Is a directory");
            return Ok(126);
        }
        Ok((info, _)) if info.mode & 0o111 == 0 => {
            ctx.warn("Permission denied");
            return Ok(126);
        }
        Ok((_, r)) => r,
        Err(e) => {
            ctx.fail("sh", &e);
            return Ok(127);
        }
    };
    let Some(src) = read_script(ctx, path) else {
        return Ok(126);
    };
    match interpreter_of(path, &src) {
        "sh" => {
            let fds = (ctx.stdin.clone(), ctx.out, ctx.err);
            ctx.sh.run_source(&src, Some(argv.to_vec()), fds, true)
        }
        kind => {
            let args: Vec<String> = std::iter::once(node.guest)
                .chain(argv[1..].iter().cloned())
                .collect();
            ctx.name = kind.into();
            match find_builtin(kind) {
                Some(b) => (b.run)(ctx, &args),
                None => Ok(127),
            }
        }
    }
}

/// Splits `xargs` input into items: blanks and newlines separate, quotes and backslashes group
/// (a quote does not span lines). Not shell words: `#` starts no comment here.
fn xargs_items(data: &str) -> Result<Vec<String>, String> {
    let mut items = Vec::new();
    // The item being read, once anything (even `''`) started it.
    let mut current: Option<String> = None;
    let mut chars = data.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => items.extend(current.take()),
            '\'' | '"' => {
                let item = current.get_or_insert_default();
                loop {
                    match chars.next() {
                        Some(q) if q == c => break,
                        Some('\n') | None => {
                            let which = if c == '\'' { "single" } else { "double" };
                            return Err(format!("unmatched {which} quote"));
                        }
                        Some(o) => item.push(o),
                    }
                }
            }
            '\\' => current.get_or_insert_default().extend(chars.next()),
            o => current.get_or_insert_default().push(o),
        }
    }
    items.extend(current);
    Ok(items)
}

/// The items `xargs` reads from its input: separated by NULs (`-0`), by a delimiter (`-d`),
/// by lines (`-I`), or split like words.
fn xargs_input(data: &str, o: &Opts) -> Result<Vec<String>, String> {
    let delim = match o.value('d') {
        _ if o.has('0') => Some('\0'),
        Some("\\n") => Some('\n'),
        Some("\\t") => Some('\t'),
        Some("\\0") => Some('\0'),
        Some(d) => Some(d.chars().next().unwrap_or('\n')),
        None => None,
    };
    if let Some(d) = delim {
        let mut items: Vec<String> = data.split(d).map(String::from).collect();
        if items.last().is_some_and(String::is_empty) {
            items.pop();
        }
        return Ok(items);
    }
    if o.value('I').is_some() {
        return Ok(data
            .lines()
            .map(str::trim_start)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect());
    }
    xargs_items(data)
}

pub(super) fn xargs(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    // Options end at the first operand: the command's own options are its business.
    let Some(o) = opts(
        ctx,
        args,
        "+n:I:d:0rtP:",
        "null=0 no-run-if-empty=r verbose=t max-args=n delimiter=d replace=I max-procs=P",
    ) else {
        return Ok(1);
    };
    // `-P N`: at most N runs at once. One command runs at a time here, which is one of the
    // schedules GNU's allows (its outputs may interleave in any order).
    if let Some(procs) = o.value('P').filter(|p| p.parse::<u64>().is_err()) {
        ctx.warn(format_args!("invalid number \"{procs}\" for -P option"));
        ctx.err(b"Try 'xargs --help' for more information.\n");
        return Ok(1);
    }
    let max_args = match o
        .value('n')
        .map(|v| v.parse::<usize>().ok().filter(|n| *n > 0))
    {
        Some(None) => {
            ctx.warn("invalid number for -n option");
            return Ok(1);
        }
        n => n.flatten().unwrap_or(usize::MAX),
    };
    let command = if o.operands.is_empty() {
        vec!["echo".to_string()]
    } else {
        o.operands.clone()
    };
    let data = String::from_utf8_lossy(ctx.stdin.all()).into_owned();
    let items = match xargs_input(&data, &o) {
        Ok(items) => items,
        Err(e) => {
            ctx.warn(e);
            return Ok(1);
        }
    };
    let runs: Vec<Vec<String>> = match o.value('I') {
        Some(r) => items
            .iter()
            .map(|item| command.iter().map(|a| a.replace(r, item)).collect())
            .collect(),
        None if items.is_empty() && o.has('r') => Vec::new(),
        None if items.is_empty() => vec![command.clone()],
        None => items
            .chunks(max_args)
            .map(|chunk| [&command[..], chunk].concat())
            .collect(),
    };
    let mut status = 0;
    for argv in runs {
        ctx.check()?;
        if o.has('t') {
            ctx.err(format!("{}\n", argv.join(" ")).as_bytes());
        }
        match ctx.sh.run_argv(&argv, ctx.out, ctx.err, Input::default())? {
            0 => {}
            127 => return Ok(127),
            255 => {
                ctx.warn(format_args!(
                    "{}: exited with status 255; aborting",
                    argv[0]
                ));
                return Ok(124);
            }
            _ => status = 123,
        }
    }
    Ok(status)
}

/// `timeout [-s SIGNAL] [-k DURATION] [--preserve-status] [-v] [--foreground] DURATION
/// COMMAND [ARG]...`, as GNU's: the command stops when DURATION (seconds, or with `s`, `m`,
/// `h`, `d`; 0 for none) has passed, and `timeout` exits 124 (128+9 with `-s KILL`, 128 plus
/// the signal with `--preserve-status`). A stopped command has nothing left to kill, so `-k`
/// has nothing to do after it.
pub(super) fn timeout(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = opts(
        ctx,
        args,
        "+s:k:vPF",
        "signal=s kill-after=k verbose=v preserve-status=P foreground=F",
    ) else {
        return Ok(125);
    };
    let Some((duration, command)) = o.operands.split_first().filter(|(_, c)| !c.is_empty()) else {
        ctx.warn("missing operand");
        ctx.warn("usage: timeout [OPTION] DURATION COMMAND [ARG]...");
        return Ok(125);
    };
    let seconds = |text: &str| -> Option<f64> {
        let (number, unit) = match text.char_indices().last() {
            Some((i, c @ ('s' | 'm' | 'h' | 'd'))) => (&text[..i], c),
            _ => (text, 's'),
        };
        let n: f64 = number
            .parse()
            .ok()
            .filter(|n: &f64| n.is_finite() && *n >= 0.0)?;
        Some(
            n * match unit {
                'm' => 60.0,
                'h' => 3600.0,
                'd' => 86400.0,
                _ => 1.0,
            },
        )
    };
    let Some(limit) = seconds(duration) else {
        ctx.warn(format_args!("invalid time interval '{duration}'"));
        return Ok(125);
    };
    if let Some(k) = o.value('k').filter(|k| seconds(k).is_none()) {
        ctx.warn(format_args!("invalid time interval '{k}'"));
        return Ok(125);
    }
    // GNU's signal 0 is `EXIT` (nothing sent); any other by name or number as `kill -l`.
    let signal = o.value('s').unwrap_or("TERM");
    let Some(number) = signal_number(signal).or((signal == "0").then_some(0)) else {
        ctx.warn(format_args!("'{signal}': invalid signal"));
        return Ok(125);
    };
    let outer = ctx.sh.deadline();
    let stop = (limit > 0.0)
        .then(|| Instant::now().checked_add(Duration::from_secs_f64(limit.min(1e9))))
        .flatten()
        .map_or(outer, |at| at.min(outer));
    let saved = ctx.sh.inner_deadline.replace(stop);
    let was = ctx.sh.interpreters.narrow_deadline(stop);
    let ran = ctx
        .sh
        .run_argv(command, ctx.out, ctx.err, ctx.stdin.clone());
    ctx.sh.interpreters.narrow_deadline(was);
    ctx.sh.inner_deadline = saved;
    // Its own deadline passed (not the command line's): the command was stopped.
    let timed_out = stop < outer && Instant::now() >= stop;
    match ran {
        Err(Abort::Timeout) if timed_out => {}
        Ok(crate::shell::EXIT_TIMEOUT) if timed_out => {}
        other => return other,
    }
    if o.has('v') {
        let name = if number == 0 {
            "EXIT"
        } else {
            signal_name(number)
        };
        ctx.warn(format_args!(
            "sending signal {name} to command '{}'",
            command[0]
        ));
    }
    Ok(match (o.has('P'), number) {
        (true, n) => 128 + n as i32,
        (false, 9) => 137,
        (false, _) => 124,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::shell::builtins::BUILTINS;
    use crate::shell::tests::Sandbox;

    #[test]
    fn timeout_stops_its_command_as_gnu_timeout() {
        let mut s = Sandbox::new();
        assert_eq!(s.ok("timeout 5 echo fast"), "fast\n");
        // Stopped: 124, the call goes on; `-s KILL` 137; `--preserve-status` 128 + TERM.
        let started = std::time::Instant::now();
        assert_eq!(
            s.ok("timeout 0.2 sleep 5; echo $?; timeout -s KILL 0.1 sleep 5; echo $?; timeout --preserve-status 0.1s sleep 5; echo $?"),
            "124\n137\n143\n"
        );
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{:?}",
            started.elapsed()
        );
        // A tool, a loop and a pipeline inside it stop too; the command's own status otherwise.
        assert_eq!(
            s.ok("timeout 0.3 sh -c 'while true; do :; done'; echo $?; timeout 1m sh -c 'exit 3'; echo $?; timeout 0 true; echo $?"),
            "124\n3\n0\n"
        );
        let (_, err, status) = s.sh("timeout -v 0.1 sleep 1");
        assert_eq!(
            (err.as_str(), status),
            ("timeout: sending signal TERM to command 'sleep'\n", 124)
        );
        // Any signal by name or number, as GNU's `-v` names it; 0 is EXIT.
        for (line, said, code) in [
            ("timeout -v -s 9 0.1 sleep 1", "KILL", 137),
            ("timeout -v -s sigusr1 0.1 sleep 1", "USR1", 124),
            ("timeout -v -s 0 0.1 sleep 1", "EXIT", 124),
            (
                "timeout -v -s WINCH --preserve-status 0.1 sleep 1",
                "WINCH",
                128 + 28,
            ),
        ] {
            let (_, err, status) = s.sh(line);
            let expected = format!("timeout: sending signal {said} to command 'sleep'\n");
            assert_eq!((err.as_str(), status), (expected.as_str(), code), "{line}");
        }
        assert_eq!(
            s.sh("timeout -s NOPE 1 true").1,
            "timeout: 'NOPE': invalid signal\n"
        );
        for bad in ["timeout 5", "timeout x sleep 1", "timeout -s NOPE 1 true"] {
            assert_eq!(s.sh(bad).2, 125, "{bad}");
        }
        assert_eq!(s.sh("timeout 1 no-such-command").2, 127);
    }

    #[test]
    fn xargs_which_type_help() {
        let mut s = Sandbox::new();
        assert_eq!(s.ok("printf 'a\\nb c\\n' | xargs echo"), "a b c\n");
        assert_eq!(s.ok("printf 'a b c' | xargs -n 2 echo"), "a b\nc\n");
        assert_eq!(s.ok("printf 'a b c' | xargs -P 4 -n 1 echo"), "a\nb\nc\n");
        let (_, err, code) = s.sh("echo a | xargs -P x echo");
        assert_eq!(
            (err.as_str(), code),
            (
                "xargs: invalid number \"x\" for -P option\nTry 'xargs --help' for more information.\n",
                1
            )
        );
        assert_eq!(
            s.ok("printf 'x\\ny\\n' | xargs -I {} echo item-{}"),
            "item-x\nitem-y\n"
        );
        assert_eq!(s.ok("printf 'a\\0b' | xargs -0 echo"), "a b\n");
        assert_eq!(s.ok("echo | xargs -r echo nothing"), "");
        s.write("t/1.tmp", "");
        s.write("t/2.tmp", "");
        s.ok("find t -name '*.tmp' | xargs rm");
        assert_eq!(s.ok("ls t"), "");
        assert_eq!(s.sh("echo a | xargs false").2, 123);
        assert_eq!(s.sh("echo a | xargs nosuchcmd").2, 127);
        assert_eq!(
            s.ok("which ls python"),
            "/usr/bin/ls\npython: shell built-in command\n"
        );
        assert_eq!(s.sh("which gcc").2, 1);
        assert_eq!(
            s.ok("type cd python3"),
            "cd is a shell builtin\npython3 is a shell builtin (runs the session's Python interpreter)\n"
        );
        let help = s.ok("help");
        for b in BUILTINS {
            assert!(
                help.contains(&format!("  {}", b.name)),
                "{} missing from help",
                b.name
            );
        }
        assert!(s.ok("help grep").contains("a WebAssembly tool"));
        assert!(s.ok("help cd").starts_with("usage: cd"));
        assert!(s.ok("ls --help").contains("Usage: ls"));
        assert_eq!(s.ok("echo --help"), "--help\n");
    }

    #[test]
    fn command_nesting_is_bounded() {
        let mut s = Sandbox::new();
        let (_, err, code) = s.sh(&format!("{}echo hi", "env ".repeat(10_000)));
        assert!(err.contains("nested too deeply") && code == 126, "{err}");
        let (_, err, _) = s.sh(&format!("echo a | {}echo hi", "xargs ".repeat(10_000)));
        assert!(err.contains("nested too deeply"), "{err}");
        assert_eq!(s.ok(&format!("{}echo hi", "env ".repeat(50))), "hi\n");
    }

    #[test]
    fn xargs_splitting() {
        assert_eq!(
            xargs_items("a b\n'c d' \"e\"\\ f").unwrap(),
            ["a", "b", "c d", "e f"]
        );
        assert!(xargs_items("'a").is_err());
        assert_eq!(xargs_items("  ").unwrap(), Vec::<String>::new());
    }
}
