//! `trap`: the commands the shell runs when its script ends (`EXIT`, as `trap 'rm -f "$tmp"'
//! EXIT` cleans up) or a command fails (`ERR`), kept in [`crate::shell::exec::Shell::traps`] and
//! run by the executor. Signals are accepted by name or number as bash accepts them, but no
//! signal ever reaches the sandbox's shell, so their traps only show in `trap -p`; `DEBUG` and
//! `RETURN` are refused rather than silently never run.

use crate::shell::exec::{Abort, Ctx, ERR_TRAP, EXIT_TRAP};
use crate::shell::expand::single_quoted;

/// Linux's signal names by number, as `trap -p` prints them (with `SIG`).
const SIGNALS: [&str; 31] = [
    "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2",
    "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG",
    "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS",
];

/// `trap [-p] [ACTION] [SIGNAL...]`, `trap - SIGNAL...`, `trap -l`.
pub(super) fn trap(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let mut rest = args;
    let mut print = false;
    while let Some(first) = rest.first() {
        match first.as_str() {
            "--" => {
                rest = &rest[1..];
                break;
            }
            "-p" => print = true,
            "-l" => {
                ctx.outs(&signal_table());
                return Ok(0);
            }
            // `trap - INT` resets: `-` is an action, not an option.
            "-" => break,
            other if other.starts_with('-') && other.len() > 1 => {
                ctx.warn(format_args!("{other}: invalid option"));
                ctx.warn("usage: trap [-lp] [[ACTION] SIGNAL_SPEC ...]");
                return Ok(2);
            }
            _ => break,
        }
        rest = &rest[1..];
    }
    if print || rest.is_empty() {
        return list(ctx, rest);
    }
    // One operand that names a signal resets it (POSIX: `trap INT`).
    let (action, signals) = match rest {
        [only] if number_of(only).is_ok() => ("-", rest),
        [action, signals @ ..] => (action.as_str(), signals),
        [] => unreachable!("handled above"),
    };
    let mut status = 0;
    for spec in signals {
        match number_of(spec) {
            Ok(number) if action == "-" => {
                ctx.sh.traps.remove(&number);
            }
            Ok(number) => {
                ctx.sh.traps.insert(number, action.to_owned());
            }
            Err(why) => {
                ctx.warn(why);
                status = 1;
            }
        }
    }
    Ok(status)
}

/// `trap -p [SIGNAL...]`: the traps set (those named), as commands that set them again.
fn list(ctx: &mut Ctx<'_, '_>, specs: &[String]) -> Result<i32, Abort> {
    let mut wanted = Vec::new();
    let mut status = 0;
    for spec in specs {
        match number_of(spec) {
            Ok(number) => wanted.push(number),
            Err(why) => {
                ctx.warn(why);
                status = 1;
            }
        }
    }
    let text: String = (ctx.sh.traps.iter())
        .filter(|(number, _)| wanted.is_empty() || wanted.contains(number))
        .map(|(number, action)| format!("trap -- {} {}\n", single_quoted(action), name_of(*number)))
        .collect();
    ctx.outs(&text);
    Ok(status)
}

/// The trap number a signal specification names: `EXIT` or `0`, `ERR`, a signal by name (any
/// case, with or without `SIG`) or number; why not, in bash's words or ours.
fn number_of(spec: &str) -> Result<u32, String> {
    let upper = spec.to_ascii_uppercase();
    let name = upper.strip_prefix("SIG").unwrap_or(&upper);
    match name {
        "EXIT" | "0" => return Ok(EXIT_TRAP),
        "ERR" => return Ok(ERR_TRAP),
        "DEBUG" | "RETURN" => {
            return Err(format!(
                "{spec}: this shell does not run {name} traps (there is no step or return hook)"
            ));
        }
        _ => {}
    }
    signal_number(name).ok_or_else(|| format!("{spec}: invalid signal specification"))
}

/// The number of a signal named (any case, with or without `SIG`) or numbered as `kill -l`
/// lists them (1 to 31), as `trap` and `timeout -s` take them.
pub(super) fn signal_number(spec: &str) -> Option<u32> {
    let upper = spec.to_ascii_uppercase();
    let name = upper.strip_prefix("SIG").unwrap_or(&upper);
    let by_number = name
        .parse::<u32>()
        .ok()
        .filter(|n| (1..=SIGNALS.len() as u32).contains(n));
    let by_name =
        || (SIGNALS.iter().position(|s| *s == name)).and_then(|i| u32::try_from(i + 1).ok());
    by_number.or_else(by_name)
}

/// A signal's name without `SIG` (`TERM` for 15), as `kill -l` prints it.
pub(super) fn signal_name(number: u32) -> &'static str {
    SIGNALS[number as usize - 1]
}

/// The signals by number, five to a line, as `trap -l` and `kill -l` print them.
pub(super) fn signal_table() -> String {
    let names: Vec<String> = (1..=SIGNALS.len())
        .map(|n| format!("{n:2}) SIG{}", SIGNALS[n - 1]))
        .collect();
    let lines: Vec<String> = names.chunks(5).map(|row| row.join("\t")).collect();
    format!("{}\n", lines.join("\n"))
}

/// How `trap -p` names a trap number.
fn name_of(number: u32) -> String {
    match number {
        EXIT_TRAP => "EXIT".into(),
        ERR_TRAP => "ERR".into(),
        n => format!("SIG{}", signal_name(n)),
    }
}

#[cfg(test)]
mod tests {
    use crate::shell::tests::Sandbox;

    #[test]
    fn exit_traps_run_when_their_shell_ends() {
        let mut s = Sandbox::new();
        assert_eq!(s.ok("trap 'echo bye' EXIT; echo hi"), "hi\nbye\n");
        // `$?` is the script's status, which the trap keeps unless it exits itself.
        let (out, _, status) = s.sh("trap 'echo \"status $?\"' EXIT; exit 4");
        assert_eq!((out.as_str(), status), ("status 4\n", 4));
        assert_eq!(s.sh("trap 'exit 7' EXIT; true").2, 7);
        let (out, _, status) = s.sh("set -e; trap 'echo cleanup' 0; false; echo no");
        assert_eq!((out.as_str(), status), ("cleanup\n", 1));
        // A subshell, a substitution and a child shell run their own, not the caller's.
        assert_eq!(
            s.ok("trap 'echo outer' EXIT; (trap 'echo sub' EXIT; echo in); x=$(trap 'echo s' EXIT; echo v); echo \"[$x]\"; sh -c \"trap 'echo child' EXIT\""),
            "in\nsub\n[v\ns]\nchild\nouter\n"
        );
        // A trap removed, a cleanup that removes a file, traps do not outlive their call.
        assert_eq!(s.ok("trap 'echo no' EXIT; trap - EXIT; echo yes"), "yes\n");
        assert_eq!(
            s.ok("tmp=/tmp/t.$$; trap 'rm -f \"$tmp\"' EXIT; echo x > \"$tmp\"; cat \"$tmp\""),
            "x\n"
        );
        assert_eq!(s.ok("ls /tmp; trap -p"), "");
    }

    #[test]
    fn err_traps_run_for_the_command_that_failed() {
        let mut s = Sandbox::new();
        // As bash: once per failure, not again for the `{ }` or loop around it, not inside a
        // function (no `set -E`) but for the call, and for a subshell and a pipeline.
        assert_eq!(
            s.ok("trap 'echo err $?' ERR; false; { false; }; for i in 1; do false; done; if false; then :; fi; false || true; f() { false; echo inf; }; f; g() { return 3; }; g; (exit 3); echo x | false; true"),
            "err 1\nerr 1\nerr 1\ninf\nerr 3\nerr 3\nerr 1\n"
        );
        let (out, _, status) = s.sh("set -e; trap 'echo failed' ERR; false; echo no");
        assert_eq!((out.as_str(), status), ("failed\n", 1));
    }

    #[test]
    fn traps_print_as_bash_and_refuse_what_they_cannot_do() {
        let mut s = Sandbox::new();
        assert_eq!(
            s.ok("trap 'echo bye' EXIT; trap 'echo it'\\''s' int 15; trap '' HUP; trap -p; trap - INT; trap -p INT TERM"),
            "trap -- 'echo bye' EXIT\ntrap -- '' SIGHUP\ntrap -- 'echo it'\\''s' SIGINT\ntrap -- 'echo it'\\''s' SIGTERM\ntrap -- 'echo it'\\''s' SIGTERM\nbye\n"
        );
        assert_eq!(
            s.ok("trap -l | head -1"),
            " 1) SIGHUP\t 2) SIGINT\t 3) SIGQUIT\t 4) SIGILL\t 5) SIGTRAP\n"
        );
        let (_, err, status) = s.sh("trap 'x' FOO");
        assert_eq!(
            (err.as_str(), status),
            ("trap: FOO: invalid signal specification\n", 1)
        );
        let (_, err, status) = s.sh("trap 'x' DEBUG");
        assert!(
            err.contains("does not run DEBUG traps") && status == 1,
            "{err}"
        );
        assert_eq!(s.sh("trap -x").2, 2);
    }
}
