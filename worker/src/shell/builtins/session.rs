//! Built-ins about the shell itself: `cd`, `pwd`, variables (`export`, `unset`, `env`,
//! `printenv`), `test`/`[`, `true`/`false`/`exit`, scripts (`sh`, `bash`, `source`, `.`,
//! `./script`), `xargs`, `which`/`type`/`help`, and small utilities (`basename`, `dirname`,
//! `realpath`, `date`, `sleep`).

use std::time::{Duration, Instant};

use super::files::base_name;
use super::{BUILTINS, MONTHS, civil, find as find_builtin, now_secs, opts, read_input};
use crate::shell::exec::{Abort, Ctx, Input};
use crate::shell::lexer::is_name;
use crate::shell::path::{Access, Kind};

pub(super) fn true_(_: &mut Ctx<'_, '_>, _: &[String]) -> Result<i32, Abort> {
    Ok(0)
}

pub(super) fn false_(_: &mut Ctx<'_, '_>, _: &[String]) -> Result<i32, Abort> {
    Ok(1)
}

pub(super) fn exit(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let code = match args.first() {
        None => ctx.sh.status,
        Some(n) => match n.parse::<i64>() {
            Ok(v) => (v & 0xFF) as i32,
            Err(_) => {
                ctx.warn(format_args!("{n}: numeric argument required"));
                2
            }
        },
    };
    Err(Abort::Exit(code))
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
    let checked = ctx.resolve(&target, Access::Read, true).and_then(|r| {
        let m = ctx.fs().stat(&r)?;
        if m.is_dir() {
            Ok(r)
        } else {
            Err(crate::shell::path::errno(
                crate::shell::path::errnos::ENOTDIR,
            ))
        }
    });
    match checked {
        Ok(r) => {
            let old = std::mem::replace(&mut ctx.sh.state.cwd, r.guest.clone());
            ctx.sh.state.vars.insert("OLDPWD".into(), old);
            ctx.sh.state.vars.insert("PWD".into(), r.guest.clone());
            if print {
                let text = format!("{}\n", r.guest);
                ctx.outs(&text);
            }
            Ok(0)
        }
        Err(e) => {
            ctx.fail(&target, &e);
            Ok(1)
        }
    }
}

/// `declare -x NAME="value"`, as bash's `export` prints.
fn declare_line(name: &str, value: &str) -> String {
    let escaped = value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('$', "\\$");
    format!("declare -x {name}=\"{escaped}\"\n")
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
            .map(|(k, v)| declare_line(k, v))
            .collect();
        ctx.outs(&text);
        return Ok(0);
    }
    let mut status = 0;
    for a in args {
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
        }
    }
    Ok(status)
}

pub(super) fn set(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    if args.is_empty() {
        print_env(ctx);
        return Ok(0);
    }
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if a == "--" {
            let mut positional = vec![
                ctx.sh
                    .positional
                    .first()
                    .cloned()
                    .unwrap_or_else(|| "sh".into()),
            ];
            positional.extend(args[i..].iter().cloned());
            ctx.sh.positional = positional;
            return Ok(0);
        }
        let on = a.starts_with('-');
        if !on && !a.starts_with('+') || a.len() < 2 {
            ctx.warn(format_args!(
                "{a}: invalid option (use -e, -u, -x, -o pipefail, or -- ARGS)"
            ));
            return Ok(2);
        }
        for flag in a[1..].chars() {
            let o = &mut ctx.sh.options;
            match flag {
                'e' => o.errexit = on,
                'u' => o.nounset = on,
                'x' => o.xtrace = on,
                'o' => {
                    let name = args.get(i).cloned().unwrap_or_default();
                    i += 1;
                    match name.as_str() {
                        "pipefail" => o.pipefail = on,
                        "errexit" => o.errexit = on,
                        "nounset" => o.nounset = on,
                        "xtrace" => o.xtrace = on,
                        _ => {
                            ctx.warn(format_args!("{name}: invalid option name (supported: errexit, nounset, pipefail, xtrace)"));
                            return Ok(2);
                        }
                    }
                }
                other => {
                    ctx.warn(format_args!(
                        "-{other}: invalid option (supported: -e, -u, -x, -o pipefail)"
                    ));
                    return Ok(2);
                }
            }
        }
    }
    Ok(0)
}

pub(super) fn unset(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    for a in args.iter().filter(|a| !matches!(a.as_str(), "-v" | "-f")) {
        ctx.sh.state.vars.remove(a);
    }
    Ok(0)
}

fn print_env(ctx: &mut Ctx<'_, '_>) {
    let text: String = ctx
        .sh
        .state
        .vars
        .iter()
        .map(|(k, v)| format!("{k}={v}\n"))
        .collect();
    ctx.outs(&text);
}

pub(super) fn env(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let mut i = 0;
    let mut set = Vec::new();
    let mut unset = Vec::new();
    while let Some(a) = args.get(i) {
        if a == "-u" {
            unset.extend(args.get(i + 1).cloned());
            i += 2;
        } else if a == "-i" || a == "-" {
            ctx.warn("-i (empty environment) is not supported");
            return Ok(125);
        } else if let Some((k, v)) = a.split_once('=').filter(|(k, _)| is_name(k)) {
            set.push((k.to_string(), v.to_string()));
            i += 1;
        } else {
            break;
        }
    }
    let saved = ctx.sh.state.vars.clone();
    for (k, v) in set {
        ctx.sh.state.vars.insert(k, v);
    }
    for k in unset {
        ctx.sh.state.vars.remove(&k);
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
        match ctx.sh.state.vars.get(a).cloned() {
            Some(v) => {
                ctx.outs(&format!("{v}\n"));
            }
            None => status = 1,
        }
    }
    Ok(status)
}

pub(super) fn basename(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = opts(ctx, args, "as:z", &[("multiple", 'a'), ("suffix", 's')]) else {
        return Ok(1);
    };
    let suffix = o.value('s').map(String::from);
    let (names, suffix): (Vec<String>, Option<String>) = if o.has('a') || suffix.is_some() {
        (o.operands.clone(), suffix)
    } else {
        match o.operands.as_slice() {
            [] => {
                ctx.warn("missing operand");
                return Ok(1);
            }
            [n] => (vec![n.clone()], None),
            [n, s] => (vec![n.clone()], Some(s.clone())),
            [_, _, extra, ..] => {
                ctx.warn(format_args!("extra operand '{extra}'"));
                return Ok(1);
            }
        }
    };
    let mut text = String::new();
    for n in names {
        let mut b = base_name(&n).to_string();
        if let Some(s) = &suffix
            && b.len() > s.len()
            && b.ends_with(s.as_str())
        {
            b.truncate(b.len() - s.len());
        }
        text.push_str(&b);
        text.push('\n');
    }
    ctx.outs(&text);
    Ok(0)
}

fn dir_name(p: &str) -> String {
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        return if p.starts_with('/') {
            "/".into()
        } else {
            ".".into()
        };
    }
    match t.rfind('/') {
        None => ".".into(),
        Some(i) => {
            let d = t[..i].trim_end_matches('/');
            if d.is_empty() { "/".into() } else { d.into() }
        }
    }
}

pub(super) fn dirname(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    if args.is_empty() {
        ctx.warn("missing operand");
        return Ok(1);
    }
    let text: String = args.iter().map(|a| format!("{}\n", dir_name(a))).collect();
    ctx.outs(&text);
    Ok(0)
}

pub(super) fn realpath(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = opts(ctx, args, "emsq", &[]) else {
        return Ok(1);
    };
    let mut status = 0;
    for a in &o.operands {
        let checked = ctx.resolve(a, Access::Read, true).and_then(|r| {
            if o.has('e') {
                ctx.fs().stat(&r)?;
            }
            Ok(ctx.fs().guest_of(&r))
        });
        match checked {
            Ok(g) => {
                ctx.outs(&format!("{g}\n"));
            }
            Err(e) => {
                ctx.fail(a, &e);
                status = 1;
            }
        }
    }
    Ok(status)
}

/// `strftime` for the common conversions, in UTC.
fn strftime(fmt: &str, secs: i64) -> String {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const LONG_DAYS: [&str; 7] = [
        "Sunday",
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
    ];
    const LONG_MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    let c = civil(secs);
    let mut out = String::new();
    let mut chars = fmt.chars();
    while let Some(ch) = chars.next() {
        if ch != '%' {
            out.push(ch);
            continue;
        }
        let Some(mut spec) = chars.next() else {
            out.push('%');
            break;
        };
        let colon = spec == ':';
        if colon {
            spec = chars.next().unwrap_or('z');
        }
        let m = c.month as usize - 1;
        let piece = match spec {
            'Y' => c.year.to_string(),
            'y' => format!("{:02}", c.year.rem_euclid(100)),
            'C' => format!("{:02}", c.year.div_euclid(100)),
            'm' => format!("{:02}", c.month),
            'd' => format!("{:02}", c.day),
            'e' => format!("{:>2}", c.day),
            'H' => format!("{:02}", c.hour),
            'k' => format!("{:>2}", c.hour),
            'I' => format!("{:02}", (c.hour + 11) % 12 + 1),
            'l' => format!("{:>2}", (c.hour + 11) % 12 + 1),
            'M' => format!("{:02}", c.minute),
            'S' => format!("{:02}", c.second),
            'p' => if c.hour < 12 { "AM" } else { "PM" }.into(),
            'P' => if c.hour < 12 { "am" } else { "pm" }.into(),
            'j' => format!("{:03}", c.yday),
            'a' => DAYS[c.weekday as usize].into(),
            'A' => LONG_DAYS[c.weekday as usize].into(),
            'b' | 'h' => MONTHS[m].into(),
            'B' => LONG_MONTHS[m].into(),
            'u' => (if c.weekday == 0 { 7 } else { c.weekday }).to_string(),
            'w' => c.weekday.to_string(),
            's' => secs.to_string(),
            'N' => "000000000".into(),
            'Z' => "UTC".into(),
            'z' if colon => "+00:00".into(),
            'z' => "+0000".into(),
            'F' => format!("{}-{:02}-{:02}", c.year, c.month, c.day),
            'T' => format!("{:02}:{:02}:{:02}", c.hour, c.minute, c.second),
            'R' => format!("{:02}:{:02}", c.hour, c.minute),
            'D' => format!("{:02}/{:02}/{:02}", c.month, c.day, c.year.rem_euclid(100)),
            'c' => format!(
                "{} {} {:>2} {:02}:{:02}:{:02} {}",
                DAYS[c.weekday as usize], MONTHS[m], c.day, c.hour, c.minute, c.second, c.year
            ),
            'n' => "\n".into(),
            't' => "\t".into(),
            '%' => "%".into(),
            other => format!("%{other}"),
        };
        out.push_str(&piece);
    }
    out
}

pub(super) fn date(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let mut secs = now_secs();
    let mut format = "%a %b %e %H:%M:%S %Z %Y".to_string();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if let Some(f) = a.strip_prefix('+') {
            format = f.to_string();
        } else if matches!(a.as_str(), "-u" | "--utc" | "--universal") {
        } else if a == "-I" || a == "--iso-8601" || a == "-Idate" {
            format = "%F".into();
        } else if a == "-Iseconds" || a == "--iso-8601=seconds" {
            format = "%FT%T%:z".into();
        } else if a == "-R" || a == "--rfc-email" {
            format = "%a, %d %b %Y %H:%M:%S +0000".into();
        } else if a == "-d" || a == "--date" || a.starts_with("--date=") || a.starts_with("-d") {
            let value = if let Some(v) = a.strip_prefix("--date=") {
                v.to_string()
            } else if a.len() > 2 && a.starts_with("-d") {
                a[2..].to_string()
            } else {
                i += 1;
                args.get(i - 1).cloned().unwrap_or_default()
            };
            match value.strip_prefix('@').and_then(|v| v.parse().ok()) {
                Some(v) => secs = v,
                None if value == "now" => {}
                None => {
                    ctx.warn(format_args!(
                        "invalid date '{value}' (only @SECONDS and now are supported)"
                    ));
                    return Ok(1);
                }
            }
        } else {
            ctx.warn(format_args!("invalid option or operand '{a}'"));
            return Ok(1);
        }
    }
    let text = format!("{}\n", strftime(&format, secs));
    ctx.outs(&text);
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

/// Evaluates a `test` expression (POSIX precedence: `!`, then `-a`, then `-o`).
struct TestEval<'t, 'c, 'a> {
    args: &'t [String],
    i: usize,
    ctx: &'t mut Ctx<'c, 'a>,
    error: Option<String>,
    /// Recursion depth of `!` and `(`: bounded so `[ ! ! ! ... ]` cannot overflow the stack.
    depth: usize,
}

/// Deepest nesting of `!` and `(` in a `test` expression.
const MAX_TEST_DEPTH: usize = 128;

const UNARY: [&str; 15] = [
    "-e", "-f", "-d", "-s", "-r", "-w", "-x", "-L", "-h", "-z", "-n", "-p", "-S", "-b", "-c",
];
const BINARY: [&str; 14] = [
    "=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef",
];

impl TestEval<'_, '_, '_> {
    fn next(&mut self) -> Option<&String> {
        let a = self.args.get(self.i);
        self.i += 1;
        a
    }

    fn or(&mut self) -> bool {
        let mut v = self.and();
        while self.args.get(self.i).is_some_and(|a| a == "-o") {
            self.i += 1;
            let r = self.and();
            v = v || r;
        }
        v
    }

    fn and(&mut self) -> bool {
        let mut v = self.not();
        while self.args.get(self.i).is_some_and(|a| a == "-a") {
            self.i += 1;
            let r = self.not();
            v = v && r;
        }
        v
    }

    fn not(&mut self) -> bool {
        if self.depth > MAX_TEST_DEPTH {
            self.error = Some("expression nested too deeply".into());
            self.i = self.args.len();
            return false;
        }
        if self.args.get(self.i).is_some_and(|a| a == "!") && self.i + 1 < self.args.len() {
            self.i += 1;
            self.depth += 1;
            let v = !self.not();
            self.depth -= 1;
            return v;
        }
        self.primary()
    }

    fn primary(&mut self) -> bool {
        let rest = self.args.len().saturating_sub(self.i);
        let Some(a) = self.next().cloned() else {
            self.error = Some("argument expected".into());
            return false;
        };
        if a == "(" && rest >= 3 {
            self.depth += 1;
            let v = self.or();
            self.depth -= 1;
            if self.next().is_none_or(|c| c != ")") {
                self.error = Some("')' expected".into());
            }
            return v;
        }
        if rest >= 3 && BINARY.contains(&self.args[self.i].as_str()) {
            let op = self.next().cloned().unwrap_or_default();
            let b = self.next().cloned().unwrap_or_default();
            return self.binary(&a, &op, &b);
        }
        if rest >= 2 && UNARY.contains(&a.as_str()) {
            let b = self.next().cloned().unwrap_or_default();
            return self.unary(&a, &b);
        }
        !a.is_empty()
    }

    fn unary(&mut self, op: &str, arg: &str) -> bool {
        match op {
            "-z" => return arg.is_empty(),
            "-n" => return !arg.is_empty(),
            _ => {}
        }
        // A probe of a path outside the sandbox is simply false (not a refusal to report).
        let follow = !matches!(op, "-L" | "-h");
        let Ok(r) = self.ctx.resolve(arg, Access::Read, follow) else {
            return false;
        };
        let meta = if follow {
            self.ctx.fs().stat(&r).ok()
        } else {
            self.ctx.fs().lstat(&r).ok()
        };
        let Some(m) = meta else { return false };
        match op {
            "-e" | "-r" => true,
            "-f" => m.kind == Kind::File,
            "-d" => m.kind == Kind::Dir,
            "-s" => m.len > 0,
            "-w" => r.writable && m.mode & 0o222 != 0,
            "-x" => m.mode & 0o111 != 0,
            "-L" | "-h" => m.kind == Kind::Symlink,
            _ => false,
        }
    }

    fn int(&mut self, s: &str) -> i64 {
        match s.trim().parse() {
            Ok(v) => v,
            Err(_) => {
                self.error = Some(format!("{s}: integer expression expected"));
                0
            }
        }
    }

    fn binary(&mut self, a: &str, op: &str, b: &str) -> bool {
        match op {
            "=" | "==" => a == b,
            "!=" => a != b,
            "<" => a < b,
            ">" => a > b,
            "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge" => {
                let (x, y) = (self.int(a), self.int(b));
                match op {
                    "-eq" => x == y,
                    "-ne" => x != y,
                    "-lt" => x < y,
                    "-le" => x <= y,
                    "-gt" => x > y,
                    _ => x >= y,
                }
            }
            _ => {
                let mtime = |ctx: &Ctx<'_, '_>, p: &str| {
                    ctx.resolve(p, Access::Read, true)
                        .ok()
                        .and_then(|r| ctx.fs().stat(&r).ok())
                        .map(|m| m.mtime)
                };
                let (x, y) = (mtime(self.ctx, a), mtime(self.ctx, b));
                match op {
                    "-nt" => x > y,
                    "-ot" => x.is_some() && (y.is_none() || x < y),
                    _ => {
                        let canon = |ctx: &Ctx<'_, '_>, p: &str| {
                            ctx.resolve(p, Access::Read, true)
                                .ok()
                                .map(|r| ctx.fs().guest_of(&r))
                        };
                        let (x, y) = (canon(self.ctx, a), canon(self.ctx, b));
                        x.is_some() && x == y
                    }
                }
            }
        }
    }
}

pub(super) fn test(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let args = if ctx.name == "[" {
        match args.split_last() {
            Some((last, rest)) if last == "]" => rest,
            _ => {
                ctx.warn("missing `]'");
                return Ok(2);
            }
        }
    } else {
        args
    };
    if args.is_empty() {
        return Ok(1);
    }
    let mut e = TestEval {
        args,
        i: 0,
        ctx,
        error: None,
        depth: 0,
    };
    let v = e.or();
    if e.error.is_none() && e.i < args.len() {
        e.error = Some(format!("{}: unexpected operator", args[e.i]));
    }
    if let Some(msg) = e.error {
        ctx.warn(msg);
        return Ok(2);
    }
    Ok(i32::from(!v))
}

/// Reads a script or program file given by a guest path.
fn read_script(ctx: &mut Ctx<'_, '_>, path: &str) -> Option<String> {
    read_input(ctx, path).map(|d| String::from_utf8_lossy(&d).into_owned())
}

pub(super) fn sh(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let mut i = 0;
    let mut command = None;
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "-c" => {
                i += 1;
                let Some(src) = args.get(i) else {
                    ctx.warn("-c: option requires an argument");
                    return Ok(2);
                };
                command = Some(src.clone());
                i += 1;
                break;
            }
            "-e" | "-u" | "-x" | "-l" | "--login" | "-s" | "--norc" | "--noprofile" => i += 1,
            "--" => {
                i += 1;
                break;
            }
            s if s.starts_with('-') && s.len() > 1 => {
                // Combined flags such as `-ec`.
                if s.contains('c') && s[1..].chars().all(|c| "eculx".contains(c)) {
                    command = args.get(i + 1).cloned();
                    i += 2;
                    break;
                }
                ctx.warn(format_args!("{s}: invalid option"));
                return Ok(2);
            }
            _ => break,
        }
    }
    let stdin = ctx.stdin.clone();
    let fds = (stdin.clone(), ctx.out, ctx.err);
    if let Some(src) = command {
        let mut positional: Vec<String> = args[i..].to_vec();
        if positional.is_empty() {
            positional.push(ctx.name.clone());
        }
        return ctx.sh.run_source(&src, Some(positional), fds, true);
    }
    match args.get(i) {
        Some(file) => {
            let file = file.clone();
            let Some(src) = read_script(ctx, &file) else {
                return Ok(127);
            };
            let positional = args[i..].to_vec();
            ctx.sh.run_source(
                &src,
                Some(positional),
                (Input::default(), ctx.out, ctx.err),
                true,
            )
        }
        None => {
            let src = String::from_utf8_lossy(stdin.all()).into_owned();
            ctx.sh
                .run_source(&src, None, (Input::default(), ctx.out, ctx.err), true)
        }
    }
}

pub(super) fn source(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(file) = args.first().cloned() else {
        ctx.warn("filename argument required");
        return Ok(2);
    };
    let Some(src) = read_script(ctx, &file) else {
        return Ok(1);
    };
    let positional = (args.len() > 1).then(|| {
        let mut p = vec![
            ctx.sh
                .positional
                .first()
                .cloned()
                .unwrap_or_else(|| "sh".into()),
        ];
        p.extend(args[1..].iter().cloned());
        p
    });
    let fds = (ctx.stdin.clone(), ctx.out, ctx.err);
    ctx.sh.run_source(&src, positional, fds, false)
}

/// `./script`, `/app/run.sh`, `bin/tool.py`: runs a file by its `#!` line or its extension;
/// everything else is a shell script.
pub(super) fn run_file(ctx: &mut Ctx<'_, '_>, argv: &[String]) -> Result<i32, Abort> {
    let path = &argv[0];
    let found = ctx.resolve(path, Access::Read, true).and_then(|r| {
        let m = ctx.fs().stat(&r)?;
        Ok((r, m))
    });
    let node = match found {
        Ok((_, m)) if m.is_dir() => {
            ctx.warn(format_args!("Is a directory"));
            return Ok(126);
        }
        Ok((r, _)) => r,
        Err(e) => {
            ctx.fail("sh", &e);
            return Ok(127);
        }
    };
    let Some(src) = read_script(ctx, path) else {
        return Ok(126);
    };
    let first = src.lines().next().unwrap_or("");
    let kind = if let Some(shebang) = first.strip_prefix("#!") {
        if shebang.contains("python") {
            "python"
        } else if shebang.contains("node") || shebang.contains("qjs") {
            "node"
        } else {
            "sh"
        }
    } else if path.ends_with(".py") {
        "python"
    } else if path.ends_with(".js") || path.ends_with(".mjs") {
        "node"
    } else {
        "sh"
    };
    match kind {
        "python" | "node" => {
            let mut args = vec![node.guest.clone()];
            args.extend(argv[1..].iter().cloned());
            ctx.name = kind.into();
            let b = find_builtin(kind).map(|b| b.run);
            match b {
                Some(run) => run(ctx, &args),
                None => Ok(127),
            }
        }
        _ => {
            let fds = (ctx.stdin.clone(), ctx.out, ctx.err);
            ctx.sh.run_source(&src, Some(argv.to_vec()), fds, true)
        }
    }
}

/// Splits `xargs` input into items: blanks and newlines separate, quotes and backslashes group.
fn xargs_items(data: &str) -> Result<Vec<String>, String> {
    let mut items = Vec::new();
    let mut cur = String::new();
    let mut has = false;
    let mut chars = data.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if has {
                    items.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            '\'' | '"' => {
                has = true;
                loop {
                    match chars.next() {
                        Some(q) if q == c => break,
                        Some('\n') | None => {
                            return Err(format!(
                                "unmatched {} quote",
                                if c == '\'' { "single" } else { "double" }
                            ));
                        }
                        Some(o) => cur.push(o),
                    }
                }
            }
            '\\' => {
                has = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            o => {
                has = true;
                cur.push(o);
            }
        }
    }
    if has {
        items.push(cur);
    }
    Ok(items)
}

pub(super) fn xargs(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    // Options end at the first operand: the command's own options are its business.
    let mut i = 0;
    let (mut max_args, mut replace, mut nul, mut delim, mut no_empty, mut trace) =
        (None, None, false, None, false, false);
    while let Some(a) = args.get(i) {
        let value = |i: &mut usize, a: &str, flag: &str| -> Option<String> {
            if a.len() > flag.len() {
                Some(a[flag.len()..].to_string())
            } else {
                *i += 1;
                args.get(*i).cloned()
            }
        };
        match a.as_str() {
            s if s.starts_with("-n") => {
                let v = value(&mut i, s, "-n");
                match v.and_then(|v| v.parse::<usize>().ok()).filter(|n| *n > 0) {
                    Some(n) => max_args = Some(n),
                    None => {
                        ctx.warn("invalid number for -n option");
                        return Ok(1);
                    }
                }
            }
            s if s.starts_with("-I") => replace = value(&mut i, s, "-I"),
            s if s.starts_with("-d") => {
                delim = value(&mut i, s, "-d").map(|d| match d.as_str() {
                    "\\n" => '\n',
                    "\\t" => '\t',
                    "\\0" => '\0',
                    other => other.chars().next().unwrap_or('\n'),
                });
            }
            "-0" | "--null" => nul = true,
            "-r" | "--no-run-if-empty" => no_empty = true,
            "-t" | "--verbose" => trace = true,
            "--" => {
                i += 1;
                break;
            }
            s if s.starts_with('-') && s.len() > 1 => {
                ctx.warn(format_args!("invalid option -- '{}'", &s[1..]));
                return Ok(1);
            }
            _ => break,
        }
        i += 1;
    }
    let command: Vec<String> = if i < args.len() {
        args[i..].to_vec()
    } else {
        vec!["echo".into()]
    };
    let data = String::from_utf8_lossy(ctx.stdin.all()).into_owned();
    let items: Vec<String> = if nul || delim.is_some() {
        let d = if nul { '\0' } else { delim.unwrap_or('\n') };
        let mut v: Vec<String> = data.split(d).map(String::from).collect();
        if v.last().is_some_and(String::is_empty) {
            v.pop();
        }
        v
    } else if replace.is_some() {
        data.lines()
            .map(|l| l.trim_start().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    } else {
        match xargs_items(&data) {
            Ok(v) => v,
            Err(e) => {
                ctx.warn(e);
                return Ok(1);
            }
        }
    };
    let mut runs: Vec<Vec<String>> = Vec::new();
    if let Some(r) = &replace {
        for item in &items {
            runs.push(
                command
                    .iter()
                    .map(|a| a.replace(r.as_str(), item))
                    .collect(),
            );
        }
    } else if items.is_empty() {
        if !no_empty {
            runs.push(command.clone());
        }
    } else {
        for chunk in items.chunks(max_args.unwrap_or(usize::MAX).min(items.len().max(1))) {
            let mut argv = command.clone();
            argv.extend(chunk.iter().cloned());
            runs.push(argv);
        }
    }
    let mut status = 0;
    for argv in runs {
        ctx.check()?;
        if trace {
            ctx.err(format!("{}\n", argv.join(" ")).as_bytes());
        }
        let code = ctx.sh.run_argv(&argv, ctx.out, ctx.err, Input::default())?;
        match code {
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

/// How `which` and `type` describe a built-in.
fn describe(name: &str) -> Option<String> {
    let b = find_builtin(name)?;
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
        if find_builtin(a).is_some() {
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

pub(super) fn type_(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let mut status = 0;
    for a in args.iter().filter(|a| !a.starts_with('-')) {
        match describe(a) {
            Some(d) => {
                ctx.outs(&format!("{a} is {d}\n"));
            }
            None => {
                ctx.warn(format_args!("{a}: not found"));
                status = 1;
            }
        }
    }
    Ok(status)
}

pub(super) fn help(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    if let Some(name) = args.first() {
        let Some(b) = find_builtin(name) else {
            ctx.warn(format_args!("no help topics match '{name}'"));
            return Ok(1);
        };
        let text = format!("usage: {}\n{}\n", b.usage, b.about);
        ctx.outs(&text);
        return Ok(0);
    }
    let mut text = String::from(
        "A small POSIX-like shell over the session's files. Every command is built in (there are no\n\
         external programs); paths are confined to the mounts (/app is home and read-write).\n\
         Syntax: pipes |, && || ; and newlines, redirections > >> < 2> 2>> 2>&1 &> <<EOF <<<,\n\
         quotes ' \" and \\, $VAR ${VAR} ${VAR:-default} $?, NAME=value, globs * ? [abc], # comments.\n\
         Not supported: $(...), `...`, if/for/while/case, functions, subshells, & (use python -c or node -e).\n\n\
         Commands:\n",
    );
    let width = BUILTINS.iter().map(|b| b.name.len()).max().unwrap_or(8);
    for b in BUILTINS {
        text.push_str(&format!("  {:<width$}  {}\n", b.name, b.about));
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
        assert_eq!(
            s.ok("basename /a/b/c.txt; basename /a/b/c.txt .txt; basename -a x/y z/"),
            "c.txt\nc\ny\nz\n"
        );
        assert_eq!(s.ok("dirname /a/b/c.txt a"), "/a/b\n.\n");
        assert_eq!(s.ok("pwd; true; echo $?; false; echo $?"), "/app\n0\n1\n");
        assert_eq!(
            s.ok("date -d @0 '+%Y-%m-%d %H:%M:%S %Z'"),
            "1970-01-01 00:00:00 UTC\n"
        );
        assert_eq!(s.ok("date -u -d @86400"), "Fri Jan  2 00:00:00 UTC 1970\n");
        assert!(
            regex::Regex::new(r"^\d{4}-\d\d-\d\d\n$")
                .unwrap()
                .is_match(&s.ok("date +%F"))
        );
        assert_eq!(s.ok("realpath x/../y /tmp/./z"), "/app/y\n/tmp/z\n");
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
    fn test_expressions() {
        let mut s = Sandbox::new();
        s.write("f", "x");
        s.write("empty", "");
        s.write("d/x", "");
        for (expr, want) in [
            ("-f f", 0),
            ("-f d", 1),
            ("-d d", 0),
            ("-e nope", 1),
            ("-s f", 0),
            ("-s empty", 1),
            ("-z ''", 0),
            ("-n ''", 1),
            ("abc", 0),
            ("''", 1),
            ("a = a", 0),
            ("a != a", 1),
            ("3 -gt 2", 0),
            ("3 -le 2", 1),
            ("! -f f", 1),
            ("-f f -a -d d", 0),
            ("-f nope -o -d d", 0),
            ("\\( -f f \\)", 0),
            ("-w f", 0),
            ("-w /data/d.txt", 1),
            ("-r /data/d.txt", 0),
            ("-f /etc/passwd", 1),
        ] {
            assert_eq!(s.sh(&format!("[ {expr} ]")).2, want, "[ {expr} ]");
            assert_eq!(s.sh(&format!("test {expr}")).2, want, "test {expr}");
        }
        assert_eq!(s.run("[ -f /etc/passwd ]").error, None);
        assert_eq!(s.sh("[ -f f").2, 2);
        assert_eq!(s.sh("[ x -eq 1 ]").1, "[: x: integer expression expected\n");
        assert_eq!(s.ok("[ -d d ] && echo dir || echo no"), "dir\n");
        assert_eq!(
            s.sh(&format!("[ {}x ]", "! ".repeat(100_000))).1,
            "[: expression nested too deeply\n"
        );
        assert_eq!(s.sh(&format!("[ {}x ]", "\\( ".repeat(100_000))).2, 2);
    }

    #[test]
    fn xargs_which_type_help() {
        let mut s = Sandbox::new();
        assert_eq!(s.ok("printf 'a\\nb c\\n' | xargs echo"), "a b c\n");
        assert_eq!(s.ok("printf 'a b c' | xargs -n 2 echo"), "a b\nc\n");
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
            "ls: shell built-in command\npython: shell built-in command\n"
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
        assert!(s.ok("help grep").starts_with("usage: grep"));
        assert!(s.ok("ls --help").starts_with("usage: ls"));
        assert_eq!(s.ok("echo --help"), "--help\n");
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
    fn command_nesting_is_bounded() {
        let mut s = Sandbox::new();
        let (_, err, code) = s.sh(&format!("{}echo hi", "env ".repeat(10_000)));
        assert!(err.contains("nested too deeply") && code == 126, "{err}");
        let (_, err, _) = s.sh(&format!("echo a | {}echo hi", "xargs ".repeat(10_000)));
        assert!(err.contains("nested too deeply"), "{err}");
        assert_eq!(s.ok(&format!("{}echo hi", "env ".repeat(50))), "hi\n");
    }

    #[test]
    fn dir_names() {
        assert_eq!(dir_name("a/b"), "a");
        assert_eq!(dir_name("a"), ".");
        assert_eq!(dir_name("/"), "/");
        assert_eq!(dir_name("/a"), "/");
        assert_eq!(dir_name("a/b/"), "a");
        assert_eq!(dir_name("a//b"), "a");
    }

    #[test]
    fn strftime_conversions() {
        let t = 1_709_210_096; // 2024-02-29 12:34:56 UTC, Thursday
        assert_eq!(strftime("%Y-%m-%d %H:%M:%S", t), "2024-02-29 12:34:56");
        assert_eq!(
            strftime("%a %b %e %T %Z %Y", t),
            "Thu Feb 29 12:34:56 UTC 2024"
        );
        assert_eq!(
            strftime("%F %j %u %s %%", t),
            "2024-02-29 060 4 1709210096 %"
        );
        assert_eq!(strftime("%I%p %:z %q", t), "12PM +00:00 %q");
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

    #[test]
    fn export_lines_escape() {
        assert_eq!(declare_line("A", "x\"$"), "declare -x A=\"x\\\"\\$\"\n");
    }
}
