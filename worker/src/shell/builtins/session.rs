//! Built-ins about the shell itself and small utilities: `cd`, `pwd`, variables (`export`,
//! `unset`, `env`, `printenv`, `set`), `true`/`false`/`exit`, `which`/`type`/`help` and
//! `sleep`.

use std::time::{Duration, Instant};

use rustix::io::Errno;

use super::scripts::keeping_zero;
use super::{BUILTINS, find};
use crate::shell::exec::{Abort, Ctx, Options};
use crate::shell::expand::declaration;
use crate::shell::guest_fs::{Access, Kind, errno};

pub(super) fn true_(_: &mut Ctx<'_, '_>, _: &[String]) -> Result<i32, Abort> {
    Ok(0)
}

pub(super) fn false_(_: &mut Ctx<'_, '_>, _: &[String]) -> Result<i32, Abort> {
    Ok(1)
}

pub(super) fn exit(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let code = match args.first().map(|n| (n, n.parse::<i64>())) {
        None => ctx.sh.status,
        Some((_, Ok(v))) => (v & 0xFF) as i32,
        Some((n, Err(_))) => {
            ctx.warn(format_args!("{n}: numeric argument required"));
            2
        }
    };
    Err(Abort::Exit(code))
}

/// `exec REDIRECTION...`: the redirections become the script's own streams, to its end (or
/// the end of the subshell it runs in; a redirected block puts its streams back, as bash's
/// undo does). `exec COMMAND [ARG...]`: the command runs in the script's place, so the script
/// ends with its status, its `EXIT` trap not run.
pub(super) fn exec(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    // With redirections only, the executor made them the script's (`Shell::exec_streams`).
    let command = match args.first().map(String::as_str) {
        None => return Ok(0),
        Some("--") => &args[1..],
        Some(flag @ ("-c" | "-l" | "-a")) => {
            ctx.warn(format_args!(
                "{flag}: not supported here (no environment to clear, no login shell, no \
                 argv[0] to set): run the command without it"
            ));
            return Ok(2);
        }
        Some(flag) if flag.starts_with('-') && flag.len() > 1 => {
            ctx.warn(format_args!("{flag}: invalid option"));
            ctx.warn("usage: exec [-cl] [-a name] [command [argument ...]] [redirection ...]");
            return Ok(2);
        }
        Some(_) => args,
    };
    if command.is_empty() {
        return Ok(0);
    }
    let status = (ctx.sh).run_argv(command, ctx.out, ctx.err, ctx.stdin.clone())?;
    ctx.sh.traps.remove(&crate::shell::exec::EXIT_TRAP);
    Err(Abort::Exit(status))
}

pub(super) fn pwd(ctx: &mut Ctx<'_, '_>, _: &[String]) -> Result<i32, Abort> {
    let text = format!("{}\n", ctx.cwd());
    ctx.outs(&text);
    Ok(0)
}

pub(super) fn cd(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let args: Vec<&String> = args
        .iter()
        .filter(|a| !matches!(a.as_str(), "-L" | "-P"))
        .collect();
    if args.len() > 1 {
        ctx.warn("too many arguments");
        return Ok(1);
    }
    let vars = &ctx.sh.state.vars;
    let (target, print) = match args.first().map(|s| s.as_str()) {
        None | Some("~") => (
            vars.get("HOME").cloned().unwrap_or_else(|| "/app".into()),
            false,
        ),
        Some("-") => match vars.get("OLDPWD") {
            Some(old) => (old.clone(), true),
            None => {
                ctx.warn("OLDPWD not set");
                return Ok(1);
            }
        },
        Some(dir) => (dir.to_string(), false),
    };
    // Where it is among the mounts from its text; what it is, from inside the sandbox; and
    // when nothing is there, whether the sandbox refused the path (a link out of its mount),
    // to say so, as after a tool's failure.
    let checked = (ctx.fs().place(ctx.cwd(), &target, Access::Read)).and_then(|r| {
        match ctx.sh.file_info(&target, true).map(|info| info.kind) {
            Some(Kind::Dir) => Ok(r),
            Some(_) => Err(errno(Errno::NOTDIR)),
            None => Err(ctx
                .resolve(&target, Access::Read, true)
                .err()
                .unwrap_or_else(|| errno(Errno::NOENT))),
        }
    });
    match checked {
        Ok(r) => {
            let old = std::mem::replace(&mut ctx.sh.state.cwd, r.guest.clone());
            ctx.sh.state.vars.insert("OLDPWD".into(), old);
            ctx.sh.state.vars.insert("PWD".into(), r.guest.clone());
            if print {
                ctx.outs(&format!("{}\n", r.guest));
            }
            Ok(0)
        }
        Err(e) => {
            ctx.fail(&target, &e);
            Ok(1)
        }
    }
}

/// A shell variable name: a letter or `_`, then letters, digits and `_`.
pub(super) fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

pub(super) fn export(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let args: Vec<&String> = args
        .iter()
        .filter(|a| !matches!(a.as_str(), "-p" | "-n" | "--"))
        .collect();
    if args.is_empty() {
        let text: String = ctx
            .sh
            .state
            .vars
            .iter()
            .map(|(k, v)| declaration("x", k, v) + "\n")
            .collect();
        ctx.outs(&text);
        return Ok(0);
    }
    Ok(assign_each(ctx, &args))
}

/// `NAME[=VALUE]...` as export and declare take them: each valid name with a value is
/// assigned; the status is 1 if a name is not valid or a variable is read-only.
pub(super) fn assign_each<S: AsRef<str>>(ctx: &mut Ctx<'_, '_>, args: &[S]) -> i32 {
    let mut status = 0;
    for a in args {
        let a = a.as_ref();
        let (name, value) = match a.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (a, None),
        };
        if !is_name(name) {
            ctx.warn(format_args!("`{a}': not a valid identifier"));
            status = 1;
        } else if let Some(v) = value
            && !ctx.sh.set_var(name, v.to_string())
        {
            status = 1;
        }
    }
    status
}

/// The `set -o NAME` option `name` stands for.
fn option<'o>(o: &'o mut Options, name: &str) -> Option<&'o mut bool> {
    Some(match name {
        "errexit" => &mut o.errexit,
        "nounset" => &mut o.nounset,
        "xtrace" => &mut o.xtrace,
        "pipefail" => &mut o.pipefail,
        _ => return None,
    })
}

pub(super) fn set(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    if args.is_empty() {
        super::control::list_variables(ctx);
        return Ok(0);
    }
    let mut rest = args.iter();
    while let Some(a) = rest.next() {
        if a == "--" {
            ctx.sh.positional = keeping_zero(ctx, rest.cloned());
            return Ok(0);
        }
        let on = a.starts_with('-');
        if !(on || a.starts_with('+')) || a.len() < 2 {
            ctx.warn(format_args!(
                "{a}: invalid option (use -e, -u, -x, -o pipefail, or -- ARGS)"
            ));
            return Ok(2);
        }
        for flag in a[1..].chars() {
            let (name, refusal) = match flag {
                'e' => ("errexit", String::new()),
                'u' => ("nounset", String::new()),
                'x' => ("xtrace", String::new()),
                'o' => {
                    let Some(name) = rest.next().map(String::as_str) else {
                        let listing = option_listing(&mut ctx.sh.options, on);
                        ctx.outs(&listing);
                        return Ok(0);
                    };
                    let supported = "supported: errexit, nounset, pipefail, xtrace";
                    (name, format!("{name}: invalid option name ({supported})"))
                }
                other => (
                    "",
                    format!("-{other}: invalid option (supported: -e, -u, -x, -o pipefail)"),
                ),
            };
            let Some(value) = option(&mut ctx.sh.options, name) else {
                ctx.warn(refusal);
                return Ok(2);
            };
            *value = on;
        }
    }
    Ok(0)
}

/// bash's `set -o` options, in its order. Those this shell has show their state; the others
/// are in the state bash's non-interactive shell has them, which is this shell's too (brace
/// expansion on; no job control, history, `noclobber` or `noglob`).
const SET_O: [&str; 27] = [
    "allexport",
    "braceexpand",
    "emacs",
    "errexit",
    "errtrace",
    "functrace",
    "hashall",
    "histexpand",
    "history",
    "ignoreeof",
    "interactive-comments",
    "keyword",
    "monitor",
    "noclobber",
    "noexec",
    "noglob",
    "nolog",
    "notify",
    "nounset",
    "onecmd",
    "physical",
    "pipefail",
    "posix",
    "privileged",
    "verbose",
    "vi",
    "xtrace",
];

/// `set -o` (`NAME  on|off` lines) or `set +o` (the commands that set them again).
fn option_listing(options: &mut Options, as_table: bool) -> String {
    let mut text = String::new();
    for name in SET_O {
        let on = match option(options, name) {
            Some(value) => *value,
            None => matches!(name, "braceexpand" | "hashall" | "interactive-comments"),
        };
        if as_table {
            let state = if on { "on" } else { "off" };
            text.push_str(&format!("{name:<15}\t{state}\n"));
        } else {
            let sign = if on { '-' } else { '+' };
            text.push_str(&format!("set {sign}o {name}\n"));
        }
    }
    text
}

/// bash's `shopt` options this shell has; [`UNSUPPORTED_SHOPT`] are refused by name.
const SHOPT: [&str; 2] = ["failglob", "nullglob"];

/// bash's other `shopt` options that change what a command line means: refused, never
/// ignored (`**` without `globstar` matches as `*` does, as in bash).
const UNSUPPORTED_SHOPT: [&str; 12] = [
    "dotglob",
    "extglob",
    "globstar",
    "nocaseglob",
    "nocasematch",
    "expand_aliases",
    "lastpipe",
    "inherit_errexit",
    "globasciiranges",
    "xpg_echo",
    "extquote",
    "patsub_replacement",
];

/// `shopt [-s | -u] [-pq] [NAME...]`: bash's `nullglob` and `failglob`.
pub(super) fn shopt(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let (mut set, mut print, mut quiet) = (None, false, false);
    let mut names = Vec::new();
    for a in args {
        match a.as_str() {
            "-s" => set = Some(true),
            "-u" => set = Some(false),
            "-p" => print = true,
            "-q" => quiet = true,
            "-o" => {
                ctx.warn("-o: use set -o (set -e, -u, -x, -o pipefail)");
                return Ok(2);
            }
            flag if flag.starts_with('-') && flag.len() > 1 => {
                ctx.warn(format_args!("{flag}: invalid option"));
                ctx.warn("usage: shopt [-pqsu] [optname ...]");
                return Ok(2);
            }
            name => names.push(name),
        }
    }
    let mut status = 0;
    for name in &names {
        if UNSUPPORTED_SHOPT.contains(name) {
            ctx.warn(format_args!(
                "{name}: not supported by this shell (supported: {})",
                SHOPT.join(", ")
            ));
            return Ok(1);
        }
        if !SHOPT.contains(name) {
            ctx.warn(format_args!("{name}: invalid shell option name"));
            status = 1;
        }
    }
    if status != 0 {
        return Ok(status);
    }
    // No names: bash lists every option (with `-s`, those on; with `-u`, those off) and sets
    // nothing; the status is 0.
    let listing = names.is_empty();
    if let (Some(on), false) = (set, listing) {
        for name in &names {
            *shopt_option(&mut ctx.sh.options, name) = on;
        }
        return Ok(0);
    }
    let listed = if listing { SHOPT.to_vec() } else { names };
    let mut text = String::new();
    for name in &listed {
        let on = *shopt_option(&mut ctx.sh.options, name);
        if set.is_some_and(|wanted| wanted != on) {
            continue;
        }
        status |= i32::from(!on && !listing);
        if print {
            text.push_str(&format!("shopt -{} {name}\n", if on { 's' } else { 'u' }));
        } else {
            text.push_str(&format!("{name:<15}\t{}\n", if on { "on" } else { "off" }));
        }
    }
    if !quiet {
        ctx.outs(&text);
    }
    Ok(status)
}

/// The option a supported `shopt` name stands for.
fn shopt_option<'o>(o: &'o mut Options, name: &str) -> &'o mut bool {
    if name == "nullglob" {
        &mut o.nullglob
    } else {
        &mut o.failglob
    }
}

pub(super) fn unset(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    // `unset -f NAME` removes functions; `-v` (the default) variables.
    let functions = args.iter().any(|a| a == "-f");
    let mut status = 0;
    for a in args.iter().filter(|a| !matches!(a.as_str(), "-v" | "-f")) {
        if functions {
            ctx.sh.functions.remove(a);
        } else if let Some((name, index)) = a.strip_suffix(']').and_then(|e| e.split_once('[')) {
            // `unset 'a[i]'`: one element (the subscript is arithmetic).
            if ctx.sh.readonly.contains(name) {
                ctx.warn(format_args!("{name}: cannot unset: readonly variable"));
                status = 1;
                continue;
            }
            let at = crate::shell::arith::eval(index, &mut *ctx.sh)
                .ok()
                .and_then(|i| ctx.sh.element_index(name, i));
            match at {
                Some(0) => {
                    ctx.sh.state.vars.remove(name);
                }
                Some(at) => ctx.sh.state.arrays.unset(name, at),
                None => {
                    ctx.warn(format_args!("{a}: bad array subscript"));
                    status = 1;
                }
            }
        } else if ctx.sh.readonly.contains(a) {
            ctx.warn(format_args!("{a}: cannot unset: readonly variable"));
            status = 1;
        } else {
            ctx.sh.unset_var(a);
        }
    }
    Ok(status)
}

fn print_env(ctx: &mut Ctx<'_, '_>) {
    // Arrays are not exported (bash).
    let arrays = &ctx.sh.state.arrays;
    let text: String = (ctx.sh.state.vars.iter())
        .filter(|(k, _)| !arrays.is_array(k))
        .map(|(k, v)| format!("{k}={v}\n"))
        .collect();
    ctx.outs(&text);
}

pub(super) fn env(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let mut i = 0;
    let saved = ctx.sh.state.vars.clone();
    while let Some(a) = args.get(i) {
        if a == "-u" {
            if let Some(name) = args.get(i + 1) {
                ctx.sh.state.vars.remove(name);
            }
            i += 2;
        } else if a == "-i" || a == "-" {
            ctx.warn("-i (empty environment) is not supported");
            ctx.sh.state.vars = saved;
            return Ok(125);
        } else if let Some((k, v)) = a.split_once('=').filter(|(k, _)| is_name(k)) {
            ctx.sh.state.vars.insert(k.to_string(), v.to_string());
            i += 1;
        } else {
            break;
        }
    }
    let result = if i == args.len() {
        print_env(ctx);
        Ok(0)
    } else {
        let stdin = ctx.stdin.clone();
        ctx.sh.run_argv(&args[i..], ctx.out, ctx.err, stdin)
    };
    ctx.sh.state.vars = saved;
    result
}

pub(super) fn printenv(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    if args.is_empty() {
        print_env(ctx);
        return Ok(0);
    }
    let mut status = 0;
    for a in args {
        if ctx.sh.state.arrays.is_array(a) {
            status = 1;
            continue;
        }
        match ctx.sh.state.vars.get(a).cloned() {
            Some(v) => {
                ctx.outs(&format!("{v}\n"));
            }
            None => status = 1,
        }
    }
    Ok(status)
}

/// The file-creation mask the sandbox's files are made with (0644 files, 0755 directories).
const UMASK: u32 = 0o022;

/// `umask [-p] [-S] [MODE]`: prints the mask files are made with here; asking for another is
/// refused (the sandbox's tools make files with this one), never ignored.
pub(super) fn umask(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let (mut symbolic, mut reusable, mut mode) = (false, false, None);
    for a in args {
        match a.as_str() {
            flags if flags.len() > 1 && flags.starts_with('-') => {
                for c in flags[1..].chars() {
                    match c {
                        'S' => symbolic = true,
                        'p' => reusable = true,
                        _ => {
                            ctx.warn(format_args!("-{c}: invalid option"));
                            ctx.warn("usage: umask [-p] [-S] [mode]");
                            return Ok(2);
                        }
                    }
                }
            }
            m => mode = Some(m),
        }
    }
    let symbolic_text = "u=rwx,g=rx,o=rx";
    if let Some(m) = mode {
        let octal = u32::from_str_radix(m, 8).ok();
        if m.chars().next().is_some_and(|c| c.is_ascii_digit()) && octal.is_none_or(|n| n > 0o777) {
            ctx.warn(format_args!("{m}: octal number out of range"));
            return Ok(1);
        }
        if octal == Some(UMASK) || m == symbolic_text {
            return Ok(0);
        }
        ctx.warn(format_args!(
            "{m}: this sandbox makes files 0644 and directories 0755 (umask 0022) and cannot \
             change that; use chmod on what you made"
        ));
        return Ok(1);
    }
    let text = match (symbolic, reusable) {
        (false, false) => format!("{UMASK:04o}"),
        (false, true) => format!("umask {UMASK:04o}"),
        (true, false) => symbolic_text.to_owned(),
        (true, true) => format!("umask -S {symbolic_text}"),
    };
    ctx.outs(&format!("{text}\n"));
    Ok(0)
}

pub(super) fn sleep(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    if args.is_empty() {
        ctx.warn("missing operand");
        return Ok(1);
    }
    let mut total = 0.0f64;
    for a in args {
        let (num, mult) = match a.chars().last() {
            Some('s') => (&a[..a.len() - 1], 1.0),
            Some('m') => (&a[..a.len() - 1], 60.0),
            Some('h') => (&a[..a.len() - 1], 3600.0),
            Some('d') => (&a[..a.len() - 1], 86400.0),
            _ => (a.as_str(), 1.0),
        };
        match num.parse::<f64>() {
            Ok(v) if v >= 0.0 && v.is_finite() => total += v * mult,
            _ => {
                ctx.warn(format_args!("invalid time interval '{a}'"));
                return Ok(1);
            }
        }
    }
    let end = Instant::now() + Duration::from_secs_f64(total.min(1e9));
    loop {
        ctx.check()?;
        let now = Instant::now();
        if now >= end {
            return Ok(0);
        }
        std::thread::sleep((end - now).min(Duration::from_millis(20)));
    }
}

/// How `which` and `type` describe a built-in.
fn describe(name: &str) -> Option<String> {
    let b = find(name)?;
    Some(match b.name {
        "python" | "python3" => {
            "a shell builtin (runs the session's Python interpreter)".to_string()
        }
        "node" | "qjs" => "a shell builtin (runs the session's JavaScript interpreter)".to_string(),
        _ => "a shell builtin".to_string(),
    })
}

pub(super) fn which(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let mut status = 0;
    for a in args.iter().filter(|a| !a.starts_with('-')) {
        if ctx.sh.interpreters.has_tool(a) {
            // Where `/usr/bin/NAME` runs it from.
            ctx.outs(&format!("/usr/bin/{a}\n"));
        } else if find(a).is_some() {
            ctx.outs(&format!("{a}: shell built-in command\n"));
        } else {
            ctx.err(
                format!("which: no {a} in (shell built-ins; run `help` for the list)\n").as_bytes(),
            );
            status = 1;
        }
    }
    Ok(status)
}

/// `type [-afptP] NAME...`: how each name would run, in words, or with `-t` as one word
/// (`function`, `keyword`, `builtin`, `file`), with `-p`/`-P` as the path of the tool it runs.
pub(super) fn type_(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let (mut flags, mut names) = (String::new(), Vec::new());
    for a in args {
        match a.strip_prefix('-') {
            Some(f) if !f.is_empty() && names.is_empty() => {
                if let Some(bad) = f.chars().find(|c| !"afptP".contains(*c)) {
                    ctx.warn(format_args!("-{bad}: invalid option"));
                    ctx.warn("usage: type [-afptP] name [name ...]");
                    return Ok(2);
                }
                flags.push_str(f);
            }
            _ => names.push(a),
        }
    }
    let has = |c: char| flags.contains(c);
    let mut status = 0;
    for a in names {
        // Every way the name runs, in the order the shell tries them.
        let mut ways: Vec<(&str, String)> = Vec::new();
        if !has('f') && !has('P') && ctx.sh.functions.contains_key(a) {
            ways.push(("function", "a function".into()));
        }
        if !has('P') && super::control::KEYWORDS.contains(&a.as_str()) {
            ways.push(("keyword", "a shell keyword".into()));
        }
        if let Some(d) = describe(a).filter(|_| !has('P')) {
            ways.push(("builtin", d));
        }
        if ctx.sh.interpreters.has_tool(a) {
            ways.push(("file", format!("/usr/bin/{a}")));
        }
        if ways.is_empty() {
            if !has('t') && !has('p') && !has('P') {
                ctx.warn(format_args!("{a}: not found"));
            }
            status = 1;
            continue;
        }
        if !has('a') {
            ways.truncate(1);
        }
        let mut text = String::new();
        for (kind, what) in ways {
            if has('t') {
                text.push_str(&format!("{kind}\n"));
            } else if has('p') || has('P') {
                if kind == "file" {
                    text.push_str(&format!("{what}\n"));
                }
            } else if kind == "file" {
                text.push_str(&format!(
                    "{a} is {what} (a WebAssembly tool in the sandbox)\n"
                ));
            } else {
                text.push_str(&format!("{a} is {what}\n"));
            }
        }
        ctx.outs(&text);
    }
    Ok(status)
}

/// `pushd [DIR]`: remembers the working directory and changes to DIR (no DIR: swaps the two
/// on top); prints the stack as `dirs` does.
pub(super) fn pushd(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let args: Vec<&String> = args.iter().filter(|a| *a != "--").collect();
    let here = ctx.sh.state.cwd.clone();
    let target = match args.as_slice() {
        [] => match ctx.sh.dir_stack.pop() {
            Some(top) => top,
            None => {
                ctx.warn("no other directory");
                return Ok(1);
            }
        },
        [dir] if dir.starts_with(['-', '+']) && dir.len() > 1 => {
            ctx.warn(format_args!("{dir}: stack positions are not supported"));
            return Ok(2);
        }
        [dir] => (*dir).clone(),
        _ => {
            ctx.warn("too many arguments");
            return Ok(1);
        }
    };
    if cd(ctx, std::slice::from_ref(&target))? != 0 {
        if args.is_empty() {
            ctx.sh.dir_stack.push(target);
        }
        return Ok(1);
    }
    ctx.sh.dir_stack.push(here);
    print_dirs(ctx, "");
    Ok(0)
}

/// `popd`: changes to the directory `pushd` remembered last, and forgets it.
pub(super) fn popd(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    if let Some(a) = args.iter().find(|a| *a != "--") {
        ctx.warn(format_args!("{a}: stack positions are not supported"));
        return Ok(2);
    }
    let Some(top) = ctx.sh.dir_stack.pop() else {
        ctx.warn("directory stack empty");
        return Ok(1);
    };
    if cd(ctx, std::slice::from_ref(&top))? != 0 {
        ctx.sh.dir_stack.push(top);
        return Ok(1);
    }
    print_dirs(ctx, "");
    Ok(0)
}

/// `dirs [-clpv]`: the working directory, then what `pushd` remembered, newest first.
pub(super) fn dirs(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let mut flags = String::new();
    for a in args {
        match a.strip_prefix('-') {
            Some(f) if !f.is_empty() && f.chars().all(|c| "clpv".contains(c)) => flags.push_str(f),
            _ => {
                ctx.warn(format_args!("{a}: invalid option"));
                ctx.warn("usage: dirs [-clpv]");
                return Ok(2);
            }
        }
    }
    if flags.contains('c') {
        ctx.sh.dir_stack.clear();
        return Ok(0);
    }
    print_dirs(ctx, &flags);
    Ok(0)
}

/// The directory stack as `dirs` prints it with `flags` (`l`: no `~`; `p`: one per line; `v`:
/// numbered, one per line).
fn print_dirs(ctx: &mut Ctx<'_, '_>, flags: &str) {
    let home = ctx.sh.state.vars.get("HOME").cloned().unwrap_or_default();
    let shown = |dir: &str| match dir.strip_prefix(home.as_str()) {
        Some(rest)
            if !flags.contains('l')
                && !home.is_empty()
                && (rest.is_empty() || rest.starts_with('/')) =>
        {
            format!("~{rest}")
        }
        _ => dir.to_owned(),
    };
    let stack: Vec<String> = std::iter::once(ctx.sh.state.cwd.as_str())
        .chain(ctx.sh.dir_stack.iter().rev().map(String::as_str))
        .map(shown)
        .collect();
    let text = if flags.contains('v') {
        (stack.iter().enumerate())
            .map(|(i, d)| format!("{i:2}  {d}\n"))
            .collect()
    } else if flags.contains('p') {
        stack.iter().map(|d| format!("{d}\n")).collect()
    } else {
        format!("{}\n", stack.join(" "))
    };
    ctx.outs(&text);
}

pub(super) fn help(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    if let Some(name) = args.first() {
        let Some(b) = find(name) else {
            if ctx.sh.interpreters.has_tool(name) {
                ctx.outs(&format!(
                    "{name}: a WebAssembly tool run inside the sandbox (GNU's options); \
                     `{name} --help` lists them\n"
                ));
                return Ok(0);
            }
            ctx.warn(format_args!("no help topics match '{name}'"));
            return Ok(1);
        };
        let text = format!("usage: {}\n{}\n", b.usage, b.about);
        ctx.outs(&text);
        return Ok(0);
    }
    let mut text = String::from(
        "A small POSIX-like shell over the session's files. Its commands are built in, or tools\n\
         run as WebAssembly inside the sandbox (no host programs); paths are confined to the\n\
         mounts (/app is home and read-write).\n\
         Syntax (bash's): pipes |, && || ; and newlines, redirections > >> < 2> 2>&1 &> <<EOF\n\
         <<<, quotes ' \" \\, $VAR ${VAR:-x} ${#VAR} ${VAR#pat} ${VAR/a/b} ${VAR:1:2}, $(...),\n\
         `...`, $((...)), {a,b} {1..9}, globs, if/elif/else, for, for ((...)), while, until,\n\
         case, { ...; }, ( ... ), ((...)), [[ ... ]], functions with local and return,\n\
         break/continue, read, shift, eval, indexed arrays (a=(x y) ${a[i]} \"${a[@]}\"\n\
         ${#a[@]} ${!a[@]} mapfile read -a). Not supported: &, associative arrays, select.\n\n\
         Commands:\n",
    );
    let width = BUILTINS.iter().map(|b| b.name.len()).max().unwrap_or(8);
    for b in BUILTINS {
        text.push_str(&format!("  {:<width$}  {}\n", b.name, b.about));
    }
    if ctx.sh.interpreters.has_toolbox() {
        text.push_str("\nWebAssembly tools (GNU options), run inside the sandbox:\n");
        for line in crate::toolbox::COMMANDS.chunks(10) {
            text.push_str(&format!("  {}\n", line.join(" ")));
        }
    }
    text.push_str("\nRun `help NAME` or `NAME --help` for a command's options.\n");
    ctx.outs(&text);
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::shell::tests::Sandbox;

    #[test]
    fn small_utilities() {
        let mut s = Sandbox::new();
        assert_eq!(s.ok("pwd; true; echo $?; false; echo $?"), "/app\n0\n1\n");
        assert_eq!(s.ok("printenv HOME LANG"), "/app\nC.UTF-8\n");
        assert_eq!(s.sh("printenv NOPE").2, 1);
        assert_eq!(s.ok("env X=1 printenv X; echo \"[$X]\""), "1\n[]\n");
        assert!(
            s.ok("env -u LANG env")
                .lines()
                .all(|l| !l.starts_with("LANG="))
        );
        assert_eq!(
            s.sh("export 1x=2").1,
            "export: `1x=2': not a valid identifier\n"
        );
        let started = std::time::Instant::now();
        s.ok("sleep 0.05");
        assert!(started.elapsed() >= std::time::Duration::from_millis(50));
        assert_eq!(s.sh("sleep x").2, 1);
    }

    #[test]
    fn set_options() {
        let mut s = Sandbox::new();
        assert_eq!(
            s.sh("set -e; echo a; false; echo never"),
            ("a\n".into(), String::new(), 1)
        );
        assert_eq!(
            s.ok("set -e; false || echo rescued; false && echo no; ! false; echo alive"),
            "rescued\nalive\n"
        );
        assert_eq!(s.sh("set -e; true && false; echo never").2, 1);
        assert_eq!(
            s.ok("false | true; echo $?; set -o pipefail; false | true; echo $?"),
            "0\n1\n"
        );
        assert_eq!(s.ok("set -euo pipefail; echo ok"), "ok\n");
        assert_eq!(
            s.ok("false; echo next-call-is-clean"),
            "next-call-is-clean\n"
        );
        assert_eq!(
            s.sh("set -x; echo hi $HOME"),
            ("hi /app\n".into(), "+ echo hi /app\n".into(), 0)
        );
        assert_eq!(
            s.ok("set -e; sh -c 'false; echo child-not-errexit'; echo parent"),
            "child-not-errexit\nparent\n"
        );
        assert_eq!(s.ok("set -- a b; echo $# $2"), "2 b\n");
        assert_eq!(s.sh("set -k").2, 2);
    }

    #[test]
    fn export_lines_escape() {
        assert_eq!(
            declaration("x", "A", "x\"$`"),
            "declare -x A=\"x\\\"\\$\\`\""
        );
    }
}
