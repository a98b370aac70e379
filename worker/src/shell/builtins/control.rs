//! Built-ins of the shell language itself: `:`, `break`, `continue`, `return`, `local`,
//! `shift`, `eval`, `let`, `read`, `getopts`, `command`, `declare`/`typeset`, `readonly` and
//! `mapfile`/`readarray` (indexed arrays; associative ones are refused). `break`, `continue` and `return` end
//! loops and functions by returning an [`Abort`] that the loop or function call in
//! [`crate::shell::exec`] takes.

use crate::shell::arith;
use crate::shell::exec::{Abort, Ctx};
use crate::shell::expand::{self, Env};
use crate::shell::lexer::is_name;

/// The reserved words, for `type` and `command -v`.
pub(super) const KEYWORDS: [&str; 20] = [
    "!", "[[", "]]", "case", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if",
    "in", "then", "time", "until", "while", "{", "}",
];

/// `command NAME [ARGS]` runs `NAME` as a command even when a function has that name;
/// `command -v NAME...` says what each name is (a function, keyword or built-in: the name; a
/// WebAssembly tool: its `/usr/bin` path) and fails when one is none of these; `-V` says it in
/// words.
pub(super) fn command(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let mut rest = args;
    let mut mode = None;
    while let Some(first) = rest.first() {
        match first.as_str() {
            "-v" => mode = Some('v'),
            "-V" => mode = Some('V'),
            "-p" => {}
            "--" => {
                rest = &rest[1..];
                break;
            }
            _ => break,
        }
        rest = &rest[1..];
    }
    let Some(mode) = mode else {
        if rest.is_empty() {
            return Ok(0);
        }
        let stdin = ctx.stdin.clone();
        return ctx.sh.run_argv(rest, ctx.out, ctx.err, stdin);
    };
    let mut status = 0;
    for name in rest {
        let what = if ctx.sh.functions.contains_key(name) {
            Some((name.clone(), "a function".to_string()))
        } else if KEYWORDS.contains(&name.as_str()) {
            Some((name.clone(), "a shell keyword".to_string()))
        } else if super::find(name).is_some() {
            Some((name.clone(), "a shell builtin".to_string()))
        } else if ctx.sh.interpreters.has_tool(name) {
            let path = format!("/usr/bin/{name}");
            Some((path.clone(), path))
        } else {
            None
        };
        match (what, mode) {
            (Some((short, _)), 'v') => {
                ctx.outs(&format!("{short}\n"));
            }
            (Some((_, long)), _) => {
                ctx.outs(&format!("{name} is {long}\n"));
            }
            (None, 'v') => status = 1,
            (None, _) => {
                ctx.warn(format_args!("{name}: not found"));
                status = 1;
            }
        }
    }
    Ok(status)
}

/// `declare`/`typeset [-ixrg] NAME[=VALUE]...`: assignments (local inside a function, unless
/// `-g`); `-a` makes indexed arrays, `-A` (associative arrays) ends the script with status 2.
/// The attributes `declare`, `typeset` and `local` were given (`-i`, `-r`, `-g`, `-p`; `-x`
/// changes nothing, every variable being exported; `+i` takes `-i` away).
#[derive(Default)]
struct Attributes {
    integer: Option<bool>,
    /// `-a`: the names are indexed arrays.
    array: bool,
    readonly: bool,
    global: bool,
    print: bool,
}

/// Splits `args` into attributes and `NAME[=VALUE]` words; `None` (after a message) for an
/// attribute this shell does not have, which must never be ignored.
///
/// # Errors
/// `-A` ends the script: the lines after it would use the name as an indexed array, where
/// `m[key]=v` quietly sets `m[0]` (`key` is 0 as arithmetic), and no later check could tell
/// every such use (`m[$k]`, `${!m[@]}`) from a meant one.
fn attributes(
    ctx: &mut Ctx<'_, '_>,
    args: &[String],
) -> Result<Option<(Attributes, Vec<String>)>, Abort> {
    let mut attrs = Attributes::default();
    let mut words = args.iter();
    let mut names = Vec::new();
    while let Some(a) = words.next() {
        if a == "--" {
            names.extend(words.by_ref().cloned());
            break;
        }
        let Some(flags) = a.strip_prefix('-').or_else(|| a.strip_prefix('+')) else {
            names.push(a.clone());
            continue;
        };
        let on = a.starts_with('-');
        for flag in flags.chars() {
            match (flag, on) {
                ('A', _) => {
                    ctx.warn(
                        "-A: associative arrays are not supported, so the script stops here; \
                         use python -c or node -e",
                    );
                    return Err(Abort::Exit(2));
                }
                ('a', true) => attrs.array = true,
                ('f' | 'F', _) => {
                    ctx.warn(format_args!("-{flag}: listing functions is not supported"));
                    return Ok(None);
                }
                ('i', on) => attrs.integer = Some(on),
                ('r', true) => attrs.readonly = true,
                ('g', true) => attrs.global = true,
                ('p', true) => attrs.print = true,
                ('x', true) => {}
                _ => {
                    let sign = if on { '-' } else { '+' };
                    ctx.warn(format_args!(
                        "{sign}{flag}: not supported (supported: -a, -i, +i, -r, -x, -g, -p)"
                    ));
                    return Ok(None);
                }
            }
        }
    }
    Ok(Some((attrs, names)))
}

/// Gives each of `names` (`NAME[=VALUE]`) the integer attribute (`Some(true)`, before its
/// value is assigned) or takes it away (`Some(false)`).
fn mark_integers(ctx: &mut Ctx<'_, '_>, integer: Option<bool>, names: &[String]) {
    for a in names {
        let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
        match integer {
            Some(true) => ctx.sh.integers.insert(name.to_owned()),
            Some(false) => ctx.sh.integers.remove(name),
            None => false,
        };
    }
}

pub(super) fn declare(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some((attrs, names)) = attributes(ctx, args)? else {
        return Ok(2);
    };
    if attrs.print || names.is_empty() {
        return print_declarations(ctx, &names);
    }
    mark_integers(ctx, attrs.integer, &names);
    let status = if !ctx.sh.locals.is_empty() && !attrs.global {
        assign_locals(ctx, &names, attrs.readonly)?
    } else if attrs.readonly {
        readonly(ctx, &names)?
    } else {
        super::session::assign_each(ctx, &names)
    };
    mark_arrays(ctx, attrs.array, &names);
    Ok(status)
}

/// `declare -a NAME...`: makes each name an indexed array (its value, if any, element 0).
fn mark_arrays(ctx: &mut Ctx<'_, '_>, array: bool, names: &[String]) {
    if !array {
        return;
    }
    for a in names {
        let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
        if !is_name(name) {
            continue;
        }
        if ctx.sh.state.arrays.is_array(name) || ctx.sh.var(name).is_some() {
            ctx.sh.state.arrays.declare(name);
        } else {
            ctx.sh.state.arrays.declare_unassigned(name);
        }
    }
}

/// `declare -p [NAME...]`: the variables as commands that set them; `declare` alone lists
/// every variable as bash's `set` does (`NAME=VALUE`, arrays as `NAME=([0]="x")`).
fn print_declarations(ctx: &mut Ctx<'_, '_>, names: &[String]) -> Result<i32, Abort> {
    if names.is_empty() {
        list_variables(ctx);
        return Ok(0);
    }
    let (mut text, mut status) = (String::new(), 0);
    let wanted = names.iter().cloned();
    for name in wanted {
        let flags = ctx.sh.attributes(&name);
        if ctx.sh.state.arrays.is_array(&name) {
            let elements = ctx.sh.array_values(&name);
            text.push_str(&expand::array_declaration(&flags, &name, &elements));
        } else if let Some(value) = ctx.sh.var(&name) {
            text.push_str(&expand::declaration(&flags, &name, &value));
        } else {
            ctx.warn(format_args!("{name}: not found"));
            status = 1;
            continue;
        }
        text.push('\n');
    }
    ctx.outs(&text);
    Ok(status)
}

/// A bare `declare` or `set`: every variable, scalars and arrays, by name, in the form the
/// shell reads back; an array declared and never assigned is not listed (bash).
pub(super) fn list_variables(ctx: &mut Ctx<'_, '_>) {
    let arrays = &ctx.sh.state.arrays;
    let mut names: Vec<String> = (ctx.sh.state.vars.keys().chain(arrays.names()))
        .cloned()
        .collect();
    names.sort();
    names.dedup();
    let mut text = String::new();
    for name in names {
        let line = if ctx.sh.state.arrays.is_array(&name) {
            let elements = ctx.sh.array_values(&name);
            if elements.unassigned() {
                continue;
            }
            format!("{name}={}", expand::array_value(&elements))
        } else {
            match ctx.sh.var(&name) {
                Some(value) => expand::listed_variable(&name, &value),
                None => continue,
            }
        };
        text.push_str(&line);
        text.push('\n');
    }
    ctx.outs(&text);
}

/// `readonly NAME[=VALUE]...`: assigns, then refuses every later assignment and `unset` of
/// the names (for this call).
pub(super) fn readonly(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let mut status = 0;
    for a in args.iter().filter(|a| !a.starts_with('-')) {
        let (name, value) = match a.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (a.as_str(), None),
        };
        if !is_name(name) {
            ctx.warn(format_args!("`{a}': not a valid identifier"));
            status = 1;
            continue;
        }
        if let Some(v) = value
            && !ctx.sh.set_var(name, v.to_string())
        {
            status = 1;
            continue;
        }
        ctx.sh.readonly.insert(name.to_string());
    }
    Ok(status)
}

/// `mapfile`/`readarray [-t] [-n COUNT] [-s COUNT] [-d DELIM] [NAME]`: the lines of stdin
/// into the indexed array NAME (`MAPFILE`); `-t` drops each line's delimiter, `-s` skips the
/// first lines, `-n` stops after that many (0: all). `-u`, `-O`, `-C` and `-c` are refused.
pub(super) fn mapfile(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let (mut trim, mut count, mut skip, mut delim) = (false, 0usize, 0usize, b'\n');
    let mut names = Vec::new();
    let mut rest = args.iter();
    while let Some(a) = rest.next() {
        let Some(flags) = a.strip_prefix('-').filter(|f| !f.is_empty() && *a != "--") else {
            names.push(a.clone());
            continue;
        };
        for (i, flag) in flags.char_indices() {
            match flag {
                't' => trim = true,
                'n' | 's' | 'd' => {
                    let value = option_value(&flags[i + 1..], &mut rest);
                    if flag == 'd' {
                        delim = value.bytes().next().unwrap_or(0);
                    } else {
                        let Ok(n) = value.parse::<usize>() else {
                            ctx.warn(format_args!("{value}: invalid line count"));
                            return Ok(1);
                        };
                        if flag == 'n' {
                            count = n;
                        } else {
                            skip = n;
                        }
                    }
                    break;
                }
                other => {
                    ctx.warn(format_args!(
                        "-{other}: not supported (supported: -t, -n COUNT, -s COUNT, -d DELIM)"
                    ));
                    return Ok(2);
                }
            }
        }
    }
    let name = names.first().cloned().unwrap_or_else(|| "MAPFILE".into());
    if !is_name(&name) {
        ctx.warn(format_args!("`{name}': not a valid identifier"));
        return Ok(1);
    }
    ctx.check()?;
    let mut lines = Vec::new();
    let mut seen = 0usize;
    while count == 0 || lines.len() < count {
        let Some((mut bytes, ended)) = ctx.stdin.read_line(delim) else {
            break;
        };
        seen += 1;
        if seen <= skip {
            continue;
        }
        if ended && !trim {
            bytes.push(delim);
        }
        lines.push(String::from_utf8_lossy(&bytes).into_owned());
        if lines.len() % 4096 == 0 {
            ctx.check()?;
        }
    }
    Ok(if ctx.sh.fill_array(&name, lines) {
        0
    } else {
        1
    })
}

/// `getopts OPTSTRING NAME [ARG...]`: the next option of the arguments (or of `$1`...) into
/// `NAME`, its value into `OPTARG`, and the index of the next argument into `OPTIND`; status 1
/// at the end of the options. A leading `:` in OPTSTRING reports errors through `NAME` (`?`,
/// `:`) instead of messages.
pub(super) fn getopts(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let [spec, name, given @ ..] = args else {
        ctx.warn("usage: getopts OPTSTRING NAME [ARG...]");
        return Ok(2);
    };
    let words: Vec<String> = if given.is_empty() {
        ctx.sh.positional.get(1..).unwrap_or_default().to_vec()
    } else {
        given.to_vec()
    };
    let silent = spec.starts_with(':');
    let optind = (ctx.sh.state.vars.get("OPTIND"))
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1);
    let mut at = match ctx.sh.getopts_at {
        (i, at) if i == optind => at,
        _ => 0,
    };
    let set = |ctx: &mut Ctx<'_, '_>, k: &str, v: String| ctx.sh.set_var(k, v);
    let Some(word) = words.get(optind - 1) else {
        set(ctx, name, "?".into());
        return Ok(1);
    };
    let chars: Vec<char> = word.chars().collect();
    if at == 0 {
        if word == "--" {
            set(ctx, "OPTIND", (optind + 1).to_string());
            set(ctx, name, "?".into());
            return Ok(1);
        }
        if chars.len() < 2 || chars[0] != '-' {
            set(ctx, name, "?".into());
            return Ok(1);
        }
        at = 1;
    }
    let c = chars[at];
    at += 1;
    let mut next = optind;
    let known = c != ':' && spec.contains(c);
    let takes_value = known && spec[spec.find(c).unwrap_or(0) + c.len_utf8()..].starts_with(':');
    ctx.sh.state.vars.remove("OPTARG");
    if !known {
        if silent {
            set(ctx, "OPTARG", c.to_string());
        } else {
            ctx.warn(format_args!("illegal option -- {c}"));
        }
        set(ctx, name, "?".into());
    } else if takes_value {
        if at < chars.len() {
            set(ctx, "OPTARG", chars[at..].iter().collect());
            at = chars.len();
        } else if let Some(value) = words.get(optind) {
            set(ctx, "OPTARG", value.clone());
            next += 1;
        } else if silent {
            set(ctx, "OPTARG", c.to_string());
            set(ctx, name, ":".into());
            at = chars.len();
            return finish_getopts(ctx, next, at, chars.len());
        } else {
            ctx.warn(format_args!("option requires an argument -- {c}"));
            set(ctx, name, "?".into());
            return finish_getopts(ctx, next, chars.len(), chars.len());
        }
        set(ctx, name, c.to_string());
    } else {
        set(ctx, name, c.to_string());
    }
    finish_getopts(ctx, next, at, chars.len())
}

/// Moves `OPTIND` past the current word once its options are all read.
fn finish_getopts(
    ctx: &mut Ctx<'_, '_>,
    optind: usize,
    at: usize,
    len: usize,
) -> Result<i32, Abort> {
    let (optind, at) = if at >= len {
        (optind + 1, 0)
    } else {
        (optind, at)
    };
    ctx.sh.set_var("OPTIND", optind.to_string());
    ctx.sh.getopts_at = (optind, at);
    Ok(0)
}

pub(super) fn colon(_: &mut Ctx<'_, '_>, _: &[String]) -> Result<i32, Abort> {
    Ok(0)
}

/// The `N` of `break N`/`continue N`/`shift N`, 1 when absent; `None` after a message.
fn count(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Option<usize> {
    match args.first() {
        None => Some(1),
        Some(n) => match n.parse::<usize>() {
            Ok(n) => Some(n),
            Err(_) => {
                ctx.warn(format_args!("{n}: numeric argument required"));
                None
            }
        },
    }
}

/// `break [N]` and `continue [N]`.
fn leave_loop(
    ctx: &mut Ctx<'_, '_>,
    args: &[String],
    end: fn(usize) -> Abort,
) -> Result<i32, Abort> {
    if ctx.sh.loops == 0 {
        ctx.warn("only meaningful in a `for', `while', or `until' loop");
        return Ok(0);
    }
    match count(ctx, args) {
        Some(0) => {
            ctx.warn("0: loop count out of range");
            Ok(1)
        }
        Some(n) => Err(end(n.min(ctx.sh.loops))),
        None => Ok(2),
    }
}

pub(super) fn break_(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    leave_loop(ctx, args, Abort::Break)
}

pub(super) fn continue_(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    leave_loop(ctx, args, Abort::Continue)
}

pub(super) fn return_(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    if ctx.sh.returnable == 0 {
        ctx.warn("can only `return' from a function or sourced script");
        return Ok(2);
    }
    let code = match args.first().map(|n| (n, n.parse::<i64>())) {
        None => ctx.sh.status,
        Some((_, Ok(v))) => (v & 0xFF) as i32,
        Some((n, Err(_))) => {
            ctx.warn(format_args!("{n}: numeric argument required"));
            2
        }
    };
    Err(Abort::Return(code))
}

pub(super) fn local(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some((attrs, names)) = attributes(ctx, args)? else {
        return Ok(2);
    };
    mark_integers(ctx, attrs.integer, &names);
    let status = assign_locals(ctx, &names, attrs.readonly)?;
    mark_arrays(ctx, attrs.array, &names);
    Ok(status)
}

/// Makes each of `args` (`NAME[=VALUE]`) local to the running function, then read-only when
/// `readonly`.
fn assign_locals(ctx: &mut Ctx<'_, '_>, args: &[String], readonly: bool) -> Result<i32, Abort> {
    if ctx.sh.locals.is_empty() {
        ctx.warn("can only be used in a function");
        return Ok(1);
    }
    let mut status = 0;
    for a in args {
        let (name, value) = match a.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (a.as_str(), None),
        };
        if !is_name(name) {
            ctx.warn(format_args!("`{a}': not a valid identifier"));
            status = 1;
            continue;
        }
        let old = ctx.sh.state.vars.get(name).cloned();
        if ctx
            .sh
            .locals
            .last()
            .is_some_and(|f| !f.iter().any(|(n, ..)| n == name))
        {
            // The caller's array (past element 0) comes back when the function returns.
            let elements = ctx.sh.state.arrays.take(name);
            if let Some(frame) = ctx.sh.locals.last_mut() {
                frame.push((name.to_string(), old, elements));
            }
        }
        match value {
            Some(v) => {
                if !ctx.sh.set_var(name, v) {
                    status = 1;
                }
            }
            None => {
                ctx.sh.state.vars.remove(name);
            }
        }
        if readonly {
            ctx.sh.readonly.insert(name.to_string());
        }
    }
    Ok(status)
}

pub(super) fn shift(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(n) = count(ctx, args) else {
        return Ok(2);
    };
    let have = ctx.sh.positional.len().saturating_sub(1);
    if n > have {
        return Ok(1);
    }
    ctx.sh.positional.drain(1..=n);
    Ok(0)
}

pub(super) fn eval(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let src = args.join(" ");
    let fds = (ctx.stdin.clone(), ctx.out, ctx.err);
    ctx.sh.eval(&src, fds)
}

pub(super) fn let_(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    if args.is_empty() {
        ctx.warn("expression expected");
        return Ok(1);
    }
    let mut last = 0;
    for a in args {
        match arith::eval(a, &mut *ctx.sh) {
            Ok(v) => last = v,
            Err(e) => {
                ctx.warn(e);
                return Ok(1);
            }
        }
    }
    Ok(i32::from(last == 0))
}

/// `read`'s options.
struct ReadOptions {
    raw: bool,
    /// `-u FD`: the descriptor to read (0, stdin, by default).
    fd: u32,
    /// `-a NAME`: every field into the indexed array NAME.
    array: Option<String>,
    delim: u8,
    names: Vec<String>,
}

/// Parses `read`'s options; `Err(status)` after a message.
fn read_options(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<ReadOptions, i32> {
    let mut o = ReadOptions {
        raw: false,
        fd: 0,
        array: None,
        delim: b'\n',
        names: Vec::new(),
    };
    let mut rest = args.iter();
    while let Some(a) = rest.next() {
        if a == "--" {
            o.names.extend(rest.by_ref().cloned());
            break;
        }
        let Some(flags) = a.strip_prefix('-').filter(|f| !f.is_empty()) else {
            o.names.push(a.clone());
            continue;
        };
        for (i, flag) in flags.char_indices() {
            match flag {
                'r' => o.raw = true,
                // No terminal here: silent input and a timeout change nothing.
                's' | 'e' => {}
                'p' | 'd' | 't' | 'a' | 'u' => {
                    // The value is the rest of this argument or the next one.
                    let value = option_value(&flags[i + 1..], &mut rest);
                    if flag == 'u' {
                        let Some(fd) = value.parse().ok().filter(|fd| *fd <= 9) else {
                            ctx.warn(format_args!(
                                "{value}: invalid file descriptor specification"
                            ));
                            return Err(1);
                        };
                        o.fd = fd;
                    }
                    // `-p PROMPT` prints only when the input is a terminal, never here.
                    if flag == 'd' {
                        o.delim = value.bytes().next().unwrap_or(0);
                    }
                    if flag == 'a' {
                        o.array = Some(value);
                    }
                    break;
                }
                other => {
                    ctx.warn(format_args!(
                        "-{other}: invalid option (supported: -r, -a NAME, -p PROMPT, -d DELIM, -u FD, -s, -t)"
                    ));
                    return Err(2);
                }
            }
        }
    }
    if let Some(name) = &o.array {
        o.names = vec![name.clone()];
    }
    if o.names.is_empty() {
        o.names.push("REPLY".into());
    }
    if let Some(bad) = o.names.iter().find(|n| !is_name(n)) {
        ctx.warn(format_args!("`{bad}': not a valid identifier"));
        return Err(1);
    }
    Ok(o)
}

pub(super) fn read(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let o = match read_options(ctx, args) {
        Ok(o) => o,
        Err(status) => return Ok(status),
    };
    ctx.check()?;
    let Some(input) = ctx.sh.input_fd(o.fd, &ctx.stdin) else {
        ctx.warn(format_args!(
            "{}: invalid file descriptor: Bad file descriptor",
            o.fd
        ));
        return Ok(1);
    };
    // One logical line: without -r, a backslash at the end joins the next line.
    let mut line = String::new();
    let mut status = 0;
    loop {
        let Some((bytes, ended)) = input.read_line(o.delim) else {
            status = 1;
            break;
        };
        let text = String::from_utf8_lossy(&bytes);
        if !ended {
            status = 1;
        }
        if o.raw {
            line.push_str(&text);
            break;
        }
        let mut chars = text.chars();
        let mut continued = false;
        while let Some(c) = chars.next() {
            if c == '\\' {
                match chars.next() {
                    Some(next) => line.push(next),
                    None => continued = ended,
                }
            } else {
                line.push(c);
            }
        }
        if !continued {
            break;
        }
    }
    let ifs = ctx
        .sh
        .state
        .vars
        .get("IFS")
        .cloned()
        .unwrap_or_else(|| " \t\n".into());
    if let Some(name) = &o.array {
        let fields = split_all_for_read(&line, &ifs);
        if !ctx.sh.fill_array(name, fields) {
            status = 1;
        }
        return Ok(status);
    }
    let values = split_for_read(&line, &ifs, o.names.len());
    for (name, value) in o.names.iter().zip(values) {
        if !ctx.sh.set_var(name, value) {
            status = 1;
        }
    }
    Ok(status)
}

/// Splits a line into all its fields on `IFS`, as `read -a` does.
fn split_all_for_read(line: &str, ifs: &str) -> Vec<String> {
    let mut values = Vec::new();
    let mut rest = split_for_read(line, ifs, 2);
    while rest.len() == 2 {
        let (first, tail) = (rest.remove(0), rest.remove(0));
        values.push(first);
        if tail.is_empty() {
            return values;
        }
        rest = split_for_read(&tail, ifs, 2);
    }
    values.extend(rest.into_iter().filter(|v| !v.is_empty()));
    values
}

/// Splits a line into `n` values on `IFS` as `read` does: blanks in `IFS` around a separator
/// count once, and the last value takes the rest of the line (without trailing blanks).
fn split_for_read(line: &str, ifs: &str, n: usize) -> Vec<String> {
    let blank = |c: char| ifs.contains(c) && matches!(c, ' ' | '\t' | '\n');
    let sep = |c: char| ifs.contains(c);
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() && blank(chars[i]) {
        i += 1;
    }
    let mut values = Vec::new();
    while values.len() + 1 < n {
        let start = i;
        while i < chars.len() && !sep(chars[i]) {
            i += 1;
        }
        values.push(chars[start..i].iter().collect());
        // The separator: blanks, at most one other IFS character, blanks.
        while i < chars.len() && blank(chars[i]) {
            i += 1;
        }
        if i < chars.len() && sep(chars[i]) && !blank(chars[i]) {
            i += 1;
            while i < chars.len() && blank(chars[i]) {
                i += 1;
            }
        }
    }
    let mut end = chars.len();
    while end > i && blank(chars[end - 1]) {
        end -= 1;
    }
    values.push(chars[i..end].iter().collect());
    values
}

/// An option's value: the rest of its argument (`-d,`), or else the next argument (`-d ,`).
fn option_value<'a>(attached: &str, rest: &mut impl Iterator<Item = &'a String>) -> String {
    if attached.is_empty() {
        rest.next().cloned().unwrap_or_default()
    } else {
        attached.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::split_for_read;

    #[test]
    fn read_splits_on_ifs() {
        assert_eq!(split_for_read("  a  b  c  ", " \t\n", 2), ["a", "b  c"]);
        assert_eq!(split_for_read("a b", " \t\n", 3), ["a", "b", ""]);
        assert_eq!(split_for_read("  x y ", " \t\n", 1), ["x y"]);
        assert_eq!(split_for_read("a,,b", ",", 3), ["a", "", "b"]);
        assert_eq!(split_for_read("a , b", ", ", 2), ["a", "b"]);
        assert_eq!(split_for_read("  keep  ", "", 1), ["  keep  "]);
    }
}
