//! Text built-ins: `cat`, `head`, `tail`, `wc`, `sort`, `uniq`, `tr`, `cut`, `tee`, `echo`,
//! `printf`, `seq`, with coreutils' output formats for the common flags.
//!
//! Filters stream line by line where they can and check the deadline inside their loops; the
//! ones that need all of their input (`sort`, `tail`) read at most [`MAX_READ`] bytes. Producers
//! stop as soon as their output is not read any more (a full pipe or a capped stdout).
//!
//! [`MAX_READ`]: crate::shell::exec::MAX_READ

use std::cmp::Ordering;
use std::io::BufRead;

use super::{Opts, lines, next_line, open_input, opts, parse_count, read_input};
use crate::shell::exec::{Abort, Ctx};
use crate::shell::path::{Access, FsError};

/// The inputs of a filter: its operands, or stdin when there are none.
fn inputs(o: &Opts) -> Vec<String> {
    if o.operands.is_empty() {
        vec!["-".into()]
    } else {
        o.operands.clone()
    }
}

pub(super) fn cat(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = opts(ctx, args, "nu", &[("number", 'n')]) else {
        return Ok(1);
    };
    let number = o.has('n');
    let mut status = 0;
    let mut lineno = 0u64;
    // A file without a final newline continues its last line into the next file, as in cat.
    let mut at_line_start = true;
    let mut line = Vec::new();
    for f in inputs(&o) {
        let Some(mut src) = open_input(ctx, &f) else {
            status = 1;
            continue;
        };
        loop {
            ctx.check()?;
            let more = if number {
                match next_line(&mut src, &mut line) {
                    Ok(true) => {
                        let mut ok = true;
                        if at_line_start {
                            lineno += 1;
                            ok = ctx.outs(&format!("{lineno:6}\t"));
                        }
                        at_line_start = line.ends_with(b"\n");
                        ok && ctx.out(&line)
                    }
                    Ok(false) => break,
                    Err(e) => {
                        ctx.fail(&f, &FsError::Io(e));
                        status = 1;
                        break;
                    }
                }
            } else {
                let chunk = match src.fill_buf() {
                    Ok([]) => break,
                    Ok(chunk) => chunk.to_vec(),
                    Err(e) => {
                        ctx.fail(&f, &FsError::Io(e));
                        status = 1;
                        break;
                    }
                };
                src.consume(chunk.len());
                ctx.out(&chunk)
            };
            if !more {
                return Ok(status);
            }
        }
    }
    Ok(status)
}

/// `-5` means `-n 5` for head and tail, and tail's `+5` means `-n +5`.
fn numeric_shorthand(args: &[String], plus: bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in args {
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        // `-n -3` is a value, not a shorthand.
        let is_value = out
            .last()
            .is_some_and(|p| matches!(p.as_str(), "-n" | "-c" | "--lines" | "--bytes"));
        if is_value {
            out.push(a.clone());
        } else if let Some(n) = a.strip_prefix('-').filter(|n| digits(n)) {
            out.push("-n".into());
            out.push(n.into());
        } else if plus && a.strip_prefix('+').is_some_and(digits) {
            out.push("-n".into());
            out.push(a.clone());
        } else {
            out.push(a.clone());
        }
    }
    out
}

/// A `-n`/`-c` count: `N`, `-N` (head: all but the last N) or `+N` (tail: from the Nth).
struct Count {
    n: u64,
    sign: Option<char>,
}

fn parse_signed_count(ctx: &mut Ctx<'_, '_>, what: &str, s: &str) -> Option<Count> {
    let (sign, digits) = match s.chars().next() {
        Some(c @ ('-' | '+')) => (Some(c), &s[1..]),
        _ => (None, s),
    };
    Some(Count {
        n: parse_count(ctx, what, digits)?,
        sign,
    })
}

fn header(ctx: &mut Ctx<'_, '_>, many: bool, first: bool, name: &str) -> bool {
    if !many {
        return true;
    }
    let name = if name == "-" { "standard input" } else { name };
    let text = format!("{}==> {name} <==\n", if first { "" } else { "\n" });
    ctx.outs(&text)
}

pub(super) fn head(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let args = numeric_shorthand(args, false);
    let longs = [
        ("lines", 'n'),
        ("bytes", 'c'),
        ("quiet", 'q'),
        ("verbose", 'v'),
    ];
    let Some(o) = opts(ctx, &args, "n:c:qv", &longs) else {
        return Ok(1);
    };
    let bytes = o.value('c').is_some() && o.value('n').is_none();
    let spec = if bytes { o.value('c') } else { o.value('n') }
        .unwrap_or("10")
        .to_string();
    let what = if bytes {
        "number of bytes"
    } else {
        "number of lines"
    };
    let Some(count) = parse_signed_count(ctx, what, &spec) else {
        return Ok(1);
    };
    let files = inputs(&o);
    let many = (files.len() > 1 || o.has('v')) && !o.has('q');
    let mut status = 0;
    for (i, f) in files.iter().enumerate() {
        if count.sign == Some('-') {
            // All but the last N: needs the whole input.
            let Some(data) = read_input(ctx, f) else {
                status = 1;
                continue;
            };
            if !header(ctx, many, i == 0, f) {
                return Ok(status);
            }
            let n = usize::try_from(count.n).unwrap_or(usize::MAX);
            let keep = if bytes {
                &data[..data.len().saturating_sub(n)]
            } else {
                let ends = line_ends(&data);
                let k = ends.len().saturating_sub(n);
                &data[..if k == 0 { 0 } else { ends[k - 1] }]
            };
            if !ctx.out(keep) {
                return Ok(status);
            }
            continue;
        }
        let Some(mut src) = open_input(ctx, f) else {
            status = 1;
            continue;
        };
        if !header(ctx, many, i == 0, f) {
            return Ok(status);
        }
        if bytes {
            let mut left = count.n;
            while left > 0 {
                ctx.check()?;
                let chunk = match src.fill_buf() {
                    Ok([]) => break,
                    Ok(c) => c[..c.len().min(usize::try_from(left).unwrap_or(usize::MAX))].to_vec(),
                    Err(e) => {
                        ctx.fail(f, &FsError::Io(e));
                        status = 1;
                        break;
                    }
                };
                src.consume(chunk.len());
                left -= chunk.len() as u64;
                if !ctx.out(&chunk) {
                    return Ok(status);
                }
            }
        } else {
            let mut line = Vec::new();
            for _ in 0..count.n {
                ctx.check()?;
                match next_line(&mut src, &mut line) {
                    Ok(true) => {
                        if !ctx.out(&line) {
                            return Ok(status);
                        }
                    }
                    Ok(false) => break,
                    Err(e) => {
                        ctx.fail(f, &FsError::Io(e));
                        status = 1;
                        break;
                    }
                }
            }
        }
    }
    Ok(status)
}

/// Offsets just after each line (the last line may lack its `\n`).
fn line_ends(data: &[u8]) -> Vec<usize> {
    let mut ends: Vec<usize> = data
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .map(|(i, _)| i + 1)
        .collect();
    if !data.is_empty() && !data.ends_with(b"\n") {
        ends.push(data.len());
    }
    ends
}

pub(super) fn tail(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let args = numeric_shorthand(args, true);
    let longs = [
        ("lines", 'n'),
        ("bytes", 'c'),
        ("quiet", 'q'),
        ("verbose", 'v'),
        ("follow", 'f'),
    ];
    let Some(o) = opts(ctx, &args, "n:c:qvfF", &longs) else {
        return Ok(1);
    };
    if o.has('f') || o.has('F') {
        ctx.warn("following a file (-f) is not supported: a command line runs to completion");
        return Ok(1);
    }
    let bytes = o.value('c').is_some() && o.value('n').is_none();
    let spec = if bytes { o.value('c') } else { o.value('n') }
        .unwrap_or("10")
        .to_string();
    let what = if bytes {
        "number of bytes"
    } else {
        "number of lines"
    };
    let Some(count) = parse_signed_count(ctx, what, &spec) else {
        return Ok(1);
    };
    let files = inputs(&o);
    let many = (files.len() > 1 || o.has('v')) && !o.has('q');
    let mut status = 0;
    for (i, f) in files.iter().enumerate() {
        ctx.check()?;
        let Some(data) = read_input(ctx, f) else {
            status = 1;
            continue;
        };
        if !header(ctx, many, i == 0, f) {
            return Ok(status);
        }
        let n = usize::try_from(count.n).unwrap_or(usize::MAX);
        let from = if bytes {
            if count.sign == Some('+') {
                n.saturating_sub(1).min(data.len())
            } else {
                data.len().saturating_sub(n)
            }
        } else {
            let ends = line_ends(&data);
            if count.sign == Some('+') {
                match n.saturating_sub(1) {
                    0 => 0,
                    k => ends.get(k - 1).copied().unwrap_or(data.len()),
                }
            } else {
                let k = ends.len().saturating_sub(n);
                if k == 0 { 0 } else { ends[k - 1] }
            }
        };
        if !ctx.out(&data[from..]) {
            return Ok(status);
        }
    }
    Ok(status)
}

#[derive(Default, Clone, Copy)]
struct Counts {
    lines: u64,
    words: u64,
    chars: u64,
    bytes: u64,
}

pub(super) fn wc(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let longs = [
        ("lines", 'l'),
        ("words", 'w'),
        ("bytes", 'c'),
        ("chars", 'm'),
    ];
    let Some(o) = opts(ctx, args, "lwcm", &longs) else {
        return Ok(1);
    };
    let mut show = [o.has('l'), o.has('w'), o.has('m'), o.has('c')];
    if !show.iter().any(|&s| s) {
        show = [true, true, false, true];
    }
    let named = !o.operands.is_empty();
    let files = inputs(&o);
    let mut status = 0;
    let mut results: Vec<(Counts, String)> = Vec::new();
    let mut regular_total = 0u64;
    let mut any_stream = false;
    for f in &files {
        let Some(mut src) = open_input(ctx, f) else {
            status = 1;
            continue;
        };
        let mut c = Counts::default();
        let mut in_word = false;
        loop {
            ctx.check()?;
            let chunk = match src.fill_buf() {
                Ok([]) => break,
                Ok(chunk) => chunk,
                Err(e) => {
                    ctx.fail(f, &FsError::Io(e));
                    status = 1;
                    break;
                }
            };
            for &b in chunk {
                c.bytes += 1;
                if b & 0xC0 != 0x80 {
                    c.chars += 1;
                }
                if b == b'\n' {
                    c.lines += 1;
                }
                let blank = b.is_ascii_whitespace();
                if !blank && !in_word {
                    c.words += 1;
                }
                in_word = !blank;
            }
            let n = chunk.len();
            src.consume(n);
        }
        if f == "-" {
            any_stream = true;
        } else {
            regular_total += c.bytes;
        }
        results.push((c, f.clone()));
    }
    // coreutils: no padding for one count of one input; otherwise as wide as the total size,
    // and at least 7 when an input is not a regular file.
    let width = if files.len() == 1 && show.iter().filter(|&&s| s).count() == 1 {
        1
    } else {
        let digits = regular_total.to_string().len();
        if any_stream { digits.max(7) } else { digits }
    };
    let mut total = Counts::default();
    for (c, _) in &results {
        total.lines += c.lines;
        total.words += c.words;
        total.chars += c.chars;
        total.bytes += c.bytes;
    }
    if results.len() > 1 {
        results.push((total, "total".into()));
    }
    for (c, name) in results {
        let values = [c.lines, c.words, c.chars, c.bytes];
        let mut line = String::new();
        for (v, _) in values.iter().zip(show).filter(|(_, s)| *s) {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(&format!("{v:>width$}"));
        }
        if named {
            line.push(' ');
            line.push_str(&name);
        }
        line.push('\n');
        ctx.outs(&line);
    }
    Ok(status)
}

/// One `-k` key of sort.
#[derive(Debug, Clone, Default)]
struct Key {
    start: usize,
    end: Option<usize>,
    numeric: bool,
    human: bool,
    reverse: bool,
    fold: bool,
    blanks: bool,
}

/// The fields of a line: with a separator, split on it; without, each field starts with the blanks
/// before it (coreutils' rule, which matters for string keys without `-b`).
fn fields(line: &[u8], sep: Option<u8>) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    match sep {
        Some(s) => {
            let mut start = 0;
            for (i, &b) in line.iter().enumerate() {
                if b == s {
                    out.push((start, i));
                    start = i + 1;
                }
            }
            out.push((start, line.len()));
        }
        None => {
            let mut i = 0;
            while i < line.len() {
                let start = i;
                while i < line.len() && matches!(line[i], b' ' | b'\t') {
                    i += 1;
                }
                while i < line.len() && !matches!(line[i], b' ' | b'\t') {
                    i += 1;
                }
                out.push((start, i));
            }
        }
    }
    out
}

fn key_slice<'l>(line: &'l [u8], key: &Key, sep: Option<u8>) -> &'l [u8] {
    let f = fields(line, sep);
    let Some(&(start, _)) = f.get(key.start.saturating_sub(1)) else {
        return &[];
    };
    let end = match key.end {
        Some(e) => f
            .get(e.saturating_sub(1))
            .map_or(line.len(), |&(_, end)| end),
        None => line.len(),
    };
    let mut s = &line[start..end.max(start)];
    if key.blanks {
        while let [b' ' | b'\t', rest @ ..] = s {
            s = rest;
        }
    }
    s
}

/// The leading number of `s` (after blanks) as `sort -n` reads it; 0 when there is none.
fn leading_number(s: &[u8]) -> f64 {
    let text = String::from_utf8_lossy(s);
    let t = text.trim_start();
    let mut end = 0;
    let b = t.as_bytes();
    if end < b.len() && (b[end] == b'-' || b[end] == b'+') {
        end += 1;
    }
    while end < b.len() && b[end].is_ascii_digit() {
        end += 1;
    }
    if end < b.len() && b[end] == b'.' {
        end += 1;
        while end < b.len() && b[end].is_ascii_digit() {
            end += 1;
        }
    }
    t[..end].parse().unwrap_or(0.0)
}

/// `sort -h`: a number with an optional K/M/G/T/P/E suffix.
fn human_number(s: &[u8]) -> f64 {
    let n = leading_number(s);
    let text = String::from_utf8_lossy(s);
    let t = text.trim_start().trim_start_matches(['-', '+']);
    let suffix = t
        .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.')
        .chars()
        .next();
    let power = match suffix {
        Some('K' | 'k') => 1,
        Some('M') => 2,
        Some('G') => 3,
        Some('T') => 4,
        Some('P') => 5,
        Some('E') => 6,
        _ => 0,
    };
    n * 1024f64.powi(power)
}

fn compare_key(a: &[u8], b: &[u8], key: &Key) -> Ordering {
    let ord = if key.numeric || key.human {
        let f = if key.human {
            human_number
        } else {
            leading_number
        };
        f(a).partial_cmp(&f(b)).unwrap_or(Ordering::Equal)
    } else if key.fold {
        a.to_ascii_uppercase().cmp(&b.to_ascii_uppercase())
    } else {
        a.cmp(b)
    };
    if key.reverse { ord.reverse() } else { ord }
}

fn parse_key(spec: &str, global: &Key) -> Option<Key> {
    let mut key = Key {
        numeric: global.numeric,
        human: global.human,
        reverse: global.reverse,
        fold: global.fold,
        blanks: global.blanks,
        ..Key::default()
    };
    let (start, end) = match spec.split_once(',') {
        Some((s, e)) => (s, Some(e)),
        None => (spec, None),
    };
    let split_opts = |s: &str| -> Option<(usize, String)> {
        let digits: String = s
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let field = digits.split('.').next()?.parse().ok()?;
        Some((field, s[digits.len()..].to_string()))
    };
    let (start, mut flags) = split_opts(start)?;
    if start == 0 {
        return None;
    }
    key.start = start;
    if let Some(e) = end {
        let (e, more) = split_opts(e)?;
        key.end = Some(e);
        flags.push_str(&more);
    }
    if !flags.is_empty() {
        key.numeric = false;
        key.human = false;
        key.reverse = false;
        key.fold = false;
        key.blanks = false;
    }
    for c in flags.chars() {
        match c {
            'n' => key.numeric = true,
            'h' => key.human = true,
            'r' => key.reverse = true,
            'f' => key.fold = true,
            'b' => key.blanks = true,
            _ => return None,
        }
    }
    Some(key)
}

pub(super) fn sort(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let longs = [
        ("reverse", 'r'),
        ("numeric-sort", 'n'),
        ("unique", 'u'),
        ("ignore-case", 'f'),
        ("key", 'k'),
        ("field-separator", 't'),
        ("human-numeric-sort", 'h'),
        ("output", 'o'),
        ("stable", 's'),
    ];
    let Some(o) = opts(ctx, args, "rnufbshk:t:o:", &longs) else {
        return Ok(2);
    };
    let global = Key {
        start: 1,
        end: None,
        numeric: o.has('n'),
        human: o.has('h'),
        reverse: o.has('r'),
        fold: o.has('f'),
        blanks: o.has('b'),
    };
    let sep = match o.value('t') {
        None => None,
        Some(t) if t.len() == 1 => Some(t.as_bytes()[0]),
        Some("\\t") => Some(b'\t'),
        Some(t) => {
            ctx.warn(format_args!("multi-character tab '{t}'"));
            return Ok(2);
        }
    };
    let mut keys = Vec::new();
    for spec in o.values('k') {
        match parse_key(spec, &global) {
            Some(k) => keys.push(k),
            None => {
                ctx.warn(format_args!("invalid key specification '{spec}'"));
                return Ok(2);
            }
        }
    }
    let mut data = Vec::new();
    for f in inputs(&o) {
        ctx.check()?;
        let Some(d) = read_input(ctx, &f) else {
            return Ok(2);
        };
        data.extend_from_slice(&d);
        if !data.is_empty() && !data.ends_with(b"\n") {
            data.push(b'\n');
        }
    }
    let mut all = lines(&data);
    let cmp_keys = |a: &[u8], b: &[u8]| -> Ordering {
        if keys.is_empty() {
            return compare_key(a, b, &global);
        }
        for k in &keys {
            let ord = compare_key(key_slice(a, k, sep), key_slice(b, k, sep), k);
            if ord != Ordering::Equal {
                return ord;
            }
        }
        Ordering::Equal
    };
    let last_resort = !o.has('u') && !o.has('s');
    all.sort_by(|a, b| {
        cmp_keys(a, b).then_with(|| {
            if !last_resort {
                Ordering::Equal
            } else if global.reverse {
                b.cmp(a)
            } else {
                a.cmp(b)
            }
        })
    });
    ctx.check()?;
    if o.has('u') {
        all.dedup_by(|b, a| cmp_keys(a, b) == Ordering::Equal);
    }
    let mut out = Vec::with_capacity(data.len());
    for l in all {
        out.extend_from_slice(l);
        out.push(b'\n');
    }
    if let Some(path) = o.value('o') {
        let path = path.to_string();
        let written = ctx
            .resolve(&path, Access::Write, true)
            .and_then(|r| ctx.fs().open_write(&r, false))
            .and_then(|mut f| {
                ctx.sh.io.written += out.len() as u64;
                std::io::Write::write_all(&mut f, &out).map_err(FsError::Io)
            });
        if let Err(e) = written {
            ctx.fail(format_args!("cannot create '{path}'"), &e);
            return Ok(2);
        }
        return Ok(0);
    }
    ctx.out(&out);
    Ok(0)
}

pub(super) fn uniq(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let longs = [
        ("count", 'c'),
        ("repeated", 'd'),
        ("unique", 'u'),
        ("ignore-case", 'i'),
    ];
    let Some(o) = opts(ctx, args, "cdui", &longs) else {
        return Ok(1);
    };
    if o.operands.len() > 1 {
        ctx.warn(format_args!(
            "extra operand '{}' (writing to a file: use > FILE)",
            o.operands[1]
        ));
        return Ok(1);
    }
    let f = o.operands.first().cloned().unwrap_or_else(|| "-".into());
    let Some(mut src) = open_input(ctx, &f) else {
        return Ok(1);
    };
    let same = |a: &[u8], b: &[u8]| {
        if o.has('i') {
            a.eq_ignore_ascii_case(b)
        } else {
            a == b
        }
    };
    let mut prev: Option<Vec<u8>> = None;
    let mut count = 0u64;
    let mut line = Vec::new();
    let emit = |ctx: &mut Ctx<'_, '_>, text: &[u8], n: u64| -> bool {
        if (o.has('d') && n < 2) || (o.has('u') && n > 1) {
            return true;
        }
        let body = text.strip_suffix(b"\n").unwrap_or(text);
        let prefix = if o.has('c') {
            format!("{n:7} ")
        } else {
            String::new()
        };
        ctx.outs(&prefix) && ctx.out(body) && ctx.out(b"\n")
    };
    loop {
        ctx.check()?;
        match next_line(&mut src, &mut line) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                ctx.fail(&f, &FsError::Io(e));
                return Ok(1);
            }
        }
        let body = line.strip_suffix(b"\n").unwrap_or(&line);
        match &prev {
            Some(p) if same(p.strip_suffix(b"\n").unwrap_or(p), body) => count += 1,
            _ => {
                if let Some(p) = prev.take()
                    && !emit(ctx, &p, count)
                {
                    return Ok(0);
                }
                prev = Some(line.clone());
                count = 1;
            }
        }
    }
    if let Some(p) = prev {
        emit(ctx, &p, count);
    }
    Ok(0)
}

/// A `tr` set expanded to bytes: escapes, ranges and `[:class:]`es.
fn tr_set(spec: &str) -> Result<Vec<u8>, String> {
    let b = spec.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    // First resolve escapes into a list of (byte, was_escaped) so `\-` is not a range.
    let mut items: Vec<(u8, bool)> = Vec::new();
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            let (byte, used) = match b[i + 1] {
                b'n' => (b'\n', 2),
                b't' => (b'\t', 2),
                b'r' => (b'\r', 2),
                b'a' => (7, 2),
                b'b' => (8, 2),
                b'f' => (12, 2),
                b'v' => (11, 2),
                b'0'..=b'7' => {
                    let digits: Vec<u8> = b[i + 1..]
                        .iter()
                        .take(3)
                        .take_while(|c| (b'0'..=b'7').contains(c))
                        .copied()
                        .collect();
                    let v = digits
                        .iter()
                        .fold(0u32, |acc, d| acc * 8 + u32::from(d - b'0'));
                    (u8::try_from(v).unwrap_or(255), 1 + digits.len())
                }
                other => (other, 2),
            };
            items.push((byte, true));
            i += used;
        } else if b[i] == b'[' && b.get(i + 1) == Some(&b':') {
            let rest = &spec[i + 2..];
            let Some(end) = rest.find(":]") else {
                items.push((b'[', false));
                i += 1;
                continue;
            };
            let class = &rest[..end];
            let pred: fn(&u8) -> bool = match class {
                "alpha" => |c| c.is_ascii_alphabetic(),
                "digit" => |c| c.is_ascii_digit(),
                "alnum" => |c| c.is_ascii_alphanumeric(),
                "lower" => |c| c.is_ascii_lowercase(),
                "upper" => |c| c.is_ascii_uppercase(),
                "space" => |c| c.is_ascii_whitespace() || *c == 11,
                "blank" => |c| *c == b' ' || *c == b'\t',
                "punct" => |c| c.is_ascii_punctuation(),
                "xdigit" => |c| c.is_ascii_hexdigit(),
                "cntrl" => |c| c.is_ascii_control(),
                "print" => |c| (32..127).contains(c),
                "graph" => |c| c.is_ascii_graphic(),
                _ => return Err(format!("invalid character class '{class}'")),
            };
            for c in 0..=255u8 {
                if pred(&c) {
                    // Class members are never range ends.
                    items.push((c, true));
                }
            }
            i += 2 + end + 2;
        } else {
            items.push((b[i], false));
            i += 1;
        }
    }
    let mut j = 0;
    while j < items.len() {
        let (c, _) = items[j];
        if j + 2 < items.len() && items[j + 1] == (b'-', false) {
            let hi = items[j + 2].0;
            if hi < c {
                return Err(format!(
                    "range-endpoints of '{}-{}' are in reverse collating sequence order",
                    c as char, hi as char
                ));
            }
            out.extend(c..=hi);
            j += 3;
        } else {
            out.push(c);
            j += 1;
        }
    }
    Ok(out)
}

pub(super) fn tr(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let longs = [
        ("delete", 'd'),
        ("squeeze-repeats", 's'),
        ("complement", 'c'),
    ];
    let Some(o) = opts(ctx, args, "dscC", &longs) else {
        return Ok(1);
    };
    let (delete, squeeze, complement) = (o.has('d'), o.has('s'), o.has('c') || o.has('C'));
    let need = if delete && squeeze {
        2
    } else if delete || squeeze {
        1
    } else {
        2
    };
    if o.operands.len() < need {
        ctx.warn("missing operand");
        return Ok(1);
    }
    if o.operands.len() > 2 || (delete && !squeeze && o.operands.len() > 1) {
        ctx.warn(format_args!(
            "extra operand '{}'",
            o.operands.last().map_or("", String::as_str)
        ));
        return Ok(1);
    }
    let sets: Result<Vec<Vec<u8>>, String> = o.operands.iter().map(|s| tr_set(s)).collect();
    let mut sets = match sets {
        Ok(s) => s,
        Err(e) => {
            ctx.warn(e);
            return Ok(1);
        }
    };
    if complement {
        let set1 = &sets[0];
        sets[0] = (0..=255u8).filter(|c| !set1.contains(c)).collect();
    }
    let mut in1 = [false; 256];
    for &c in &sets[0] {
        in1[usize::from(c)] = true;
    }
    let mut map: [u8; 256] = std::array::from_fn(|i| i as u8);
    let translating = !delete && sets.len() == 2;
    if translating {
        let set2 = &sets[1];
        let Some(&last) = set2.last() else {
            ctx.warn("when not truncating set1, string2 must be non-empty");
            return Ok(1);
        };
        for (i, &c) in sets[0].iter().enumerate() {
            map[usize::from(c)] = *set2.get(i).unwrap_or(&last);
        }
    }
    // The set whose repeats -s squeezes: the last set given.
    let mut squeeze_set = [false; 256];
    if squeeze {
        for &c in sets.last().map_or(&[][..], Vec::as_slice) {
            squeeze_set[usize::from(c)] = true;
        }
    }
    let mut src = match open_input(ctx, "-") {
        Some(s) => s,
        None => return Ok(1),
    };
    let mut last: Option<u8> = None;
    loop {
        ctx.check()?;
        let chunk = match src.fill_buf() {
            Ok([]) => break,
            Ok(c) => c.to_vec(),
            Err(_) => break,
        };
        src.consume(chunk.len());
        let mut out = Vec::with_capacity(chunk.len());
        for &c in &chunk {
            if delete && in1[usize::from(c)] {
                continue;
            }
            let c = if translating { map[usize::from(c)] } else { c };
            if squeeze && squeeze_set[usize::from(c)] && last == Some(c) {
                continue;
            }
            last = Some(c);
            out.push(c);
        }
        if !ctx.out(&out) {
            break;
        }
    }
    Ok(0)
}

/// A cut `LIST`: `N`, `N-M`, `N-`, `-M`, comma-separated (1-based, inclusive).
fn cut_list(spec: &str) -> Option<Vec<(usize, usize)>> {
    let mut out = Vec::new();
    for part in spec.split(',') {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (
                if a.is_empty() { 1 } else { a.parse().ok()? },
                if b.is_empty() {
                    usize::MAX
                } else {
                    b.parse().ok()?
                },
            ),
            None => {
                let n = part.parse().ok()?;
                (n, n)
            }
        };
        if lo == 0 || hi < lo {
            return None;
        }
        out.push((lo, hi));
    }
    Some(out)
}

pub(super) fn cut(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let longs = [
        ("delimiter", 'd'),
        ("fields", 'f'),
        ("characters", 'c'),
        ("bytes", 'b'),
        ("only-delimited", 's'),
    ];
    let Some(o) = opts(ctx, args, "d:f:c:b:s", &longs) else {
        return Ok(1);
    };
    let (mode, spec) = match (o.value('f'), o.value('c'), o.value('b')) {
        (Some(f), None, None) => ('f', f),
        (None, Some(c), None) => ('c', c),
        (None, None, Some(b)) => ('b', b),
        (None, None, None) => {
            ctx.warn("you must specify a list of bytes, characters, or fields");
            return Ok(1);
        }
        _ => {
            ctx.warn("only one type of list may be specified");
            return Ok(1);
        }
    };
    let Some(list) = cut_list(spec) else {
        ctx.warn(format_args!("invalid field value '{spec}'"));
        return Ok(1);
    };
    let delim = match o.value('d') {
        None => "\t".to_string(),
        Some(d) if d.chars().count() == 1 => d.to_string(),
        Some(_) => {
            ctx.warn("the delimiter must be a single character");
            return Ok(1);
        }
    };
    let selected = |i: usize| list.iter().any(|&(lo, hi)| lo <= i && i <= hi);
    let mut status = 0;
    let mut line = Vec::new();
    for f in inputs(&o) {
        let Some(mut src) = open_input(ctx, &f) else {
            status = 1;
            continue;
        };
        loop {
            ctx.check()?;
            match next_line(&mut src, &mut line) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    ctx.fail(&f, &FsError::Io(e));
                    status = 1;
                    break;
                }
            }
            let body = line.strip_suffix(b"\n").unwrap_or(&line);
            let mut out: Vec<u8> = match mode {
                'b' => body
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| selected(i + 1))
                    .map(|(_, &b)| b)
                    .collect(),
                'c' => {
                    let text = String::from_utf8_lossy(body);
                    let s: String = text
                        .chars()
                        .enumerate()
                        .filter(|(i, _)| selected(i + 1))
                        .map(|(_, c)| c)
                        .collect();
                    s.into_bytes()
                }
                _ => {
                    let d = delim.as_bytes();
                    let parts: Vec<&[u8]> = split_bytes(body, d);
                    if parts.len() == 1 {
                        if o.has('s') {
                            continue;
                        }
                        body.to_vec()
                    } else {
                        let chosen: Vec<&[u8]> = parts
                            .iter()
                            .enumerate()
                            .filter(|(i, _)| selected(i + 1))
                            .map(|(_, p)| *p)
                            .collect();
                        chosen.join(d)
                    }
                }
            };
            out.push(b'\n');
            if !ctx.out(&out) {
                return Ok(status);
            }
        }
    }
    Ok(status)
}

fn split_bytes<'a>(s: &'a [u8], d: &[u8]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i + d.len() <= s.len() {
        if &s[i..i + d.len()] == d {
            out.push(&s[start..i]);
            i += d.len();
            start = i;
        } else {
            i += 1;
        }
    }
    out.push(&s[start..]);
    out
}

pub(super) fn tee(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = opts(ctx, args, "ai", &[("append", 'a')]) else {
        return Ok(1);
    };
    let mark = ctx.sh.io.file_count();
    let mut targets = Vec::new();
    let mut status = 0;
    for f in &o.operands {
        let opened = ctx
            .resolve(f, Access::Write, true)
            .and_then(|r| ctx.sh.io.open_file(&ctx.sh.fs, &r, o.has('a')));
        match opened {
            Ok(t) => targets.push(t),
            Err(e) => {
                ctx.fail(f, &e);
                status = 1;
            }
        }
    }
    let mut src = ctx.stdin.reader();
    let mut stdout_open = true;
    loop {
        ctx.check()?;
        let chunk = match src.fill_buf() {
            Ok([]) | Err(_) => break,
            Ok(c) => c.to_vec(),
        };
        src.consume(chunk.len());
        if stdout_open {
            stdout_open = ctx.out(&chunk);
        }
        for &t in &targets {
            ctx.sh.io.write(t, &chunk);
        }
    }
    ctx.sh.io.close_files(mark);
    Ok(status)
}

/// Backslash escapes of `echo -e` and `printf`; `false` means `\c` was met (stop output).
fn escapes(s: &str, out: &mut Vec<u8>) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 == b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        i += 1;
        let c = b[i];
        i += 1;
        match c {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'v' => out.push(11),
            b'e' | b'E' => out.push(27),
            b'\\' => out.push(b'\\'),
            b'c' => return false,
            b'0' | b'1'..=b'7' => {
                // `\0NNN` (echo) or `\NNN` (printf): up to three octal digits after.
                let mut v = u32::from(c - b'0');
                let max = if c == b'0' { 3 } else { 2 };
                let mut n = 0;
                while n < max && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                    v = v * 8 + u32::from(b[i] - b'0');
                    i += 1;
                    n += 1;
                }
                out.push(u8::try_from(v & 0xFF).unwrap_or(0));
            }
            b'x' => {
                let mut v = 0u32;
                let mut n = 0;
                while n < 2 && i < b.len() && b[i].is_ascii_hexdigit() {
                    v = v * 16 + (b[i] as char).to_digit(16).unwrap_or(0);
                    i += 1;
                    n += 1;
                }
                if n == 0 {
                    out.extend_from_slice(b"\\x");
                } else {
                    out.push(u8::try_from(v).unwrap_or(0));
                }
            }
            other => {
                out.push(b'\\');
                out.push(other);
            }
        }
    }
    true
}

pub(super) fn echo(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let mut newline = true;
    let mut interpret = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let Some(flags) = a.strip_prefix('-') else {
            break;
        };
        if flags.is_empty() || !flags.chars().all(|c| matches!(c, 'n' | 'e' | 'E')) {
            break;
        }
        for c in flags.chars() {
            match c {
                'n' => newline = false,
                'e' => interpret = true,
                _ => interpret = false,
            }
        }
        i += 1;
    }
    let text = args[i..].join(" ");
    let mut out = Vec::new();
    if interpret {
        if !escapes(&text, &mut out) {
            ctx.out(&out);
            return Ok(0);
        }
    } else {
        out.extend_from_slice(text.as_bytes());
    }
    if newline {
        out.push(b'\n');
    }
    ctx.out(&out);
    Ok(0)
}

/// How many chars the escape sequence at the start of `s` (a backslash) spans, as [`escapes`]
/// reads it.
fn escape_len(s: &[char]) -> usize {
    let (max, digit): (usize, fn(&char) -> bool) = match s.get(1) {
        None => return 1,
        Some('0') => (3, |c| ('0'..='7').contains(c)),
        Some('1'..='7') => (2, |c| ('0'..='7').contains(c)),
        Some('x') => (2, char::is_ascii_hexdigit),
        Some(_) => return 2,
    };
    2 + s[2..].iter().take(max).take_while(|c| digit(c)).count()
}

/// The widest field `printf` honours (`%999999999d` would otherwise allocate gigabytes).
const MAX_PRINTF_WIDTH: usize = 1 << 20;

/// The longest precision honoured by `printf` and `seq`: Rust's formatter panics past 65535,
/// and nothing sensible needs more.
const MAX_PRECISION: usize = 4096;

/// A number argument for `printf %d`: decimal, `0x` hex, `0` octal, or `'c` (the char's code).
fn printf_int(s: &str) -> Option<i64> {
    let t = s.trim();
    if let Some(c) = t.strip_prefix('\'').or_else(|| t.strip_prefix('"')) {
        return Some(c.chars().next().map_or(0, |c| i64::from(u32::from(c))));
    }
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()?
    } else if body.len() > 1 && body.starts_with('0') {
        i64::from_str_radix(&body[1..], 8).ok()?
    } else {
        body.parse().ok()?
    };
    Some(if neg { -v } else { v })
}

/// C's `%e` (`1.500000e+00`).
fn c_exp(v: f64, prec: usize, upper: bool) -> String {
    let s = format!("{v:.prec$e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if exp < 0 { '-' } else { '+' };
    let e = if upper { 'E' } else { 'e' };
    format!("{mant}{e}{sign}{:02}", exp.abs())
}

/// C's `%g`.
fn c_general(v: f64, prec: usize, upper: bool) -> String {
    let p = if prec == 0 { 1 } else { prec };
    if v == 0.0 {
        return "0".into();
    }
    let exp = v.abs().log10().floor() as i32;
    let strip = |s: String| -> String {
        if s.contains('.') && !s.contains('e') && !s.contains('E') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if exp < -4 || exp >= p as i32 {
        let s = c_exp(v, p - 1, upper);
        let (mant, e) = s
            .split_once(if upper { 'E' } else { 'e' })
            .unwrap_or((&s, ""));
        let mant = if mant.contains('.') {
            mant.trim_end_matches('0').trim_end_matches('.')
        } else {
            mant
        };
        format!("{mant}{}{e}", if upper { 'E' } else { 'e' })
    } else {
        let decimals = usize::try_from(p as i32 - 1 - exp).unwrap_or(0);
        strip(format!("{v:.decimals$}"))
    }
}

pub(super) fn printf(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(format) = args.first() else {
        ctx.warn("usage: printf FORMAT [ARGUMENT]...");
        return Ok(2);
    };
    let mut rest = args[1..].iter();
    let mut out = Vec::new();
    let mut status = 0;
    let fmt: Vec<char> = format.chars().collect();
    loop {
        let mut consumed = false;
        let mut i = 0;
        while i < fmt.len() {
            let c = fmt[i];
            if c == '\\' {
                let j = i + escape_len(&fmt[i..]);
                let seq: String = fmt[i..j].iter().collect();
                if !escapes(&seq, &mut out) {
                    ctx.out(&out);
                    return Ok(status);
                }
                i = j;
                continue;
            }
            if c != '%' {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                i += 1;
                continue;
            }
            if fmt.get(i + 1) == Some(&'%') {
                out.push(b'%');
                i += 2;
                continue;
            }
            let start = i;
            i += 1;
            let mut flags = String::new();
            while i < fmt.len() && "-+ 0#".contains(fmt[i]) {
                flags.push(fmt[i]);
                i += 1;
            }
            let mut width = String::new();
            while i < fmt.len() && fmt[i].is_ascii_digit() {
                width.push(fmt[i]);
                i += 1;
            }
            let mut prec: Option<usize> = None;
            if i < fmt.len() && fmt[i] == '.' {
                i += 1;
                let mut p = String::new();
                while i < fmt.len() && fmt[i].is_ascii_digit() {
                    p.push(fmt[i]);
                    i += 1;
                }
                prec = Some(p.parse::<usize>().unwrap_or(0).min(MAX_PRECISION));
            }
            let Some(&conv) = fmt.get(i) else {
                ctx.warn(format_args!("missing format character"));
                return Ok(1);
            };
            i += 1;
            let arg = rest.next();
            consumed |= arg.is_some();
            let arg = arg.map_or("", String::as_str);
            let body = match conv {
                's' => match prec {
                    Some(p) => arg.chars().take(p).collect(),
                    None => arg.to_string(),
                },
                'b' => {
                    let mut v = Vec::new();
                    escapes(arg, &mut v);
                    String::from_utf8_lossy(&v).into_owned()
                }
                'c' => arg.chars().next().map(String::from).unwrap_or_default(),
                'd' | 'i' | 'u' | 'x' | 'X' | 'o' => {
                    let v = if arg.is_empty() {
                        0
                    } else {
                        printf_int(arg).unwrap_or_else(|| {
                            ctx.warn(format_args!("'{arg}': invalid number"));
                            status = 1;
                            0
                        })
                    };
                    let digits = match conv {
                        'x' => format!("{:x}", v),
                        'X' => format!("{:X}", v),
                        'o' => format!("{:o}", v),
                        _ => v.unsigned_abs().to_string(),
                    };
                    let digits = match prec {
                        Some(p) if digits.len() < p => {
                            format!("{}{digits}", "0".repeat(p - digits.len()))
                        }
                        _ => digits,
                    };
                    let sign = if matches!(conv, 'd' | 'i') && v < 0 {
                        "-"
                    } else if matches!(conv, 'd' | 'i') && flags.contains('+') {
                        "+"
                    } else if matches!(conv, 'd' | 'i') && flags.contains(' ') {
                        " "
                    } else {
                        ""
                    };
                    format!("{sign}{digits}")
                }
                'f' | 'F' | 'e' | 'E' | 'g' | 'G' => {
                    let v: f64 = if arg.is_empty() {
                        0.0
                    } else {
                        arg.trim().parse().unwrap_or_else(|_| {
                            ctx.warn(format_args!("'{arg}': invalid number"));
                            status = 1;
                            0.0
                        })
                    };
                    let p = prec.unwrap_or(6);
                    let s = match conv {
                        'f' | 'F' => format!("{v:.p$}"),
                        'e' | 'E' => c_exp(v, p, conv == 'E'),
                        _ => c_general(v, p, conv == 'G'),
                    };
                    if v >= 0.0 && flags.contains('+') {
                        format!("+{s}")
                    } else {
                        s
                    }
                }
                other => {
                    let spec: String = fmt[start..i].iter().collect();
                    ctx.warn(format_args!(
                        "%{other}: invalid conversion specification in '{spec}'"
                    ));
                    return Ok(1);
                }
            };
            let w: usize = width.parse::<usize>().unwrap_or(0).min(MAX_PRINTF_WIDTH);
            let len = body.chars().count();
            if len >= w {
                out.extend_from_slice(body.as_bytes());
            } else if flags.contains('-') {
                out.extend_from_slice(body.as_bytes());
                out.extend(std::iter::repeat_n(b' ', w - len));
            } else if flags.contains('0') && !matches!(conv, 's' | 'b' | 'c') {
                let (sign, digits) = match body.strip_prefix(['-', '+']) {
                    Some(d) => (&body[..1], d),
                    None => ("", body.as_str()),
                };
                out.extend_from_slice(sign.as_bytes());
                out.extend(std::iter::repeat_n(b'0', w - len));
                out.extend_from_slice(digits.as_bytes());
            } else {
                out.extend(std::iter::repeat_n(b' ', w - len));
                out.extend_from_slice(body.as_bytes());
            }
        }
        // The format is reused while it consumes arguments.
        if !consumed || rest.len() == 0 {
            break;
        }
        ctx.check()?;
        if out.len() > (16 << 20) && !ctx.out(&std::mem::take(&mut out)) {
            return Ok(status);
        }
    }
    ctx.out(&out);
    Ok(status)
}

/// A number as seq prints it: integers while everything is integral, else with the most
/// decimals of the operands.
fn seq_parse(s: &str) -> Option<(f64, usize)> {
    let v: f64 = s.trim().parse().ok()?;
    if !v.is_finite() {
        return None;
    }
    let decimals = match s.split_once('.') {
        Some((_, frac)) if !s.contains(['e', 'E']) => frac.len(),
        _ => 0,
    };
    Some((v, decimals))
}

pub(super) fn seq(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let mut sep = "\n".to_string();
    let mut equal_width = false;
    let mut nums = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let numeric = a.len() > 1
            && a.starts_with('-')
            && a[1..].starts_with(|c: char| c.is_ascii_digit() || c == '.');
        if a == "-s" || a == "--separator" {
            let Some(v) = args.get(i) else {
                ctx.warn("option requires an argument -- 's'");
                return Ok(1);
            };
            sep = v.clone();
            i += 1;
        } else if let Some(v) = a.strip_prefix("-s").filter(|_| !numeric) {
            sep = v.to_string();
        } else if a == "-w" || a == "--equal-width" {
            equal_width = true;
        } else if a.starts_with('-') && a.len() > 1 && !numeric {
            ctx.warn(format_args!("invalid option -- '{}'", &a[1..]));
            return Ok(1);
        } else {
            nums.push(a.clone());
        }
    }
    let parsed: Option<Vec<(f64, usize)>> = nums.iter().map(|n| seq_parse(n)).collect();
    let Some(parsed) = parsed.filter(|p| (1..=3).contains(&p.len())) else {
        if nums.is_empty() {
            ctx.warn("missing operand");
        } else if nums.len() > 3 {
            ctx.warn(format_args!("extra operand '{}'", nums[3]));
        } else {
            let bad = nums
                .iter()
                .find(|n| seq_parse(n).is_none())
                .cloned()
                .unwrap_or_default();
            ctx.warn(format_args!("invalid floating point argument: '{bad}'"));
        }
        return Ok(1);
    };
    let (first, step, last) = match parsed.as_slice() {
        [l] => ((1.0, 0), (1.0, 0), *l),
        [f, l] => (*f, (1.0, 0), *l),
        [f, s, l] => (*f, *s, *l),
        _ => return Ok(1),
    };
    if step.0 == 0.0 {
        ctx.warn(format_args!("invalid Zero increment value: '{}'", nums[1]));
        return Ok(1);
    }
    let decimals = first.1.max(step.1).min(MAX_PRECISION);
    let fmt = |v: f64| format!("{v:.decimals$}");
    let width = if equal_width {
        fmt(first.0).len().max(fmt(last.0).len())
    } else {
        0
    };
    let mut out = Vec::new();
    let mut n: u64 = 0;
    loop {
        // Multiplying (not accumulating) keeps float steps exact enough: `seq 0 0.1 1` ends at 1.0.
        let v = first.0 + step.0 * n as f64;
        // Rounding to the printed decimals only makes sense within f64's precision (and
        // 10^decimals must not overflow to infinity, which would make every value NaN).
        let v = if (1..=15).contains(&decimals) {
            let scale = 10f64.powi(i32::try_from(decimals).unwrap_or(0));
            (v * scale).round() / scale
        } else {
            v
        };
        if !v.is_finite() || (step.0 > 0.0 && v > last.0) || (step.0 < 0.0 && v < last.0) {
            break;
        }
        if n > 0 {
            out.extend_from_slice(sep.as_bytes());
        }
        let text = fmt(v);
        let text = if text.len() < width {
            match text.strip_prefix('-') {
                Some(d) => format!("-{}{d}", "0".repeat(width - text.len())),
                None => format!("{}{text}", "0".repeat(width - text.len())),
            }
        } else {
            text
        };
        out.extend_from_slice(text.as_bytes());
        n += 1;
        if out.len() >= 64 << 10 {
            ctx.check()?;
            if !ctx.out(&std::mem::take(&mut out)) {
                return Ok(0);
            }
        }
        // A step too small to change a huge value would loop forever: the deadline ends it.
        if n.is_multiple_of(1 << 20) {
            ctx.check()?;
        }
    }
    if n > 0 {
        out.push(b'\n');
    }
    ctx.out(&out);
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::shell::tests::Sandbox;

    #[test]
    fn cat_head_tail() {
        let mut s = Sandbox::new();
        s.write("f", "1\n2\n3\n4\n5\n");
        s.write("g", "x\ny");
        assert_eq!(s.ok("cat f g"), "1\n2\n3\n4\n5\nx\ny");
        assert_eq!(s.ok("cat -n g g"), "     1\tx\n     2\tyx\n     3\ty");
        assert_eq!(s.ok("echo in | cat - g"), "in\nx\ny");
        let (out, err, code) = s.sh("cat nope g");
        assert_eq!(
            (out.as_str(), err.as_str(), code),
            ("x\ny", "cat: nope: No such file or directory\n", 1)
        );
        assert_eq!(s.sh("mkdir d; cat d").1, "cat: d: Is a directory\n");
        assert_eq!(s.ok("head -n 2 f"), "1\n2\n");
        assert_eq!(s.ok("head -2 f; head -c 3 f; echo"), "1\n2\n1\n2\n");
        assert_eq!(s.ok("head -n -3 f"), "1\n2\n");
        assert_eq!(s.ok("head -n 1 f g"), "==> f <==\n1\n\n==> g <==\nx\n");
        assert_eq!(s.ok("tail -n 2 f"), "4\n5\n");
        assert_eq!(s.ok("tail -1 f; tail -n +4 f; tail +5 f"), "5\n4\n5\n5\n");
        assert_eq!(s.ok("tail -n 1 g; echo; tail -c 2 f"), "y\n5\n");
        assert_eq!(s.ok("seq 1 100 | tail -n 3"), "98\n99\n100\n");
        assert_eq!(s.ok("head f | tail -n 1"), "5\n");
        assert!(s.sh("head -n x f").1.contains("invalid number of lines"));
        assert_eq!(s.sh("tail -f f").2, 1);
    }

    #[test]
    fn wc_formats_like_coreutils() {
        let mut s = Sandbox::new();
        s.write("f", "one two\nthree\n");
        s.write("g", "x\n");
        assert_eq!(s.ok("wc -l f"), "2 f\n");
        // As wide as the total size (14 bytes: 2 digits).
        assert_eq!(s.ok("wc f"), " 2  3 14 f\n");
        assert_eq!(s.ok("wc -l f g"), " 2 f\n 1 g\n 3 total\n");
        assert_eq!(s.ok("cat f | wc"), "      2       3      14\n");
        assert_eq!(s.ok("cat f | wc -l"), "2\n");
        assert_eq!(s.ok("cat f | wc -w -c"), "      3      14\n");
        assert_eq!(s.ok("printf 'hé' | wc -m"), "2\n");
        assert_eq!(s.ok("printf '' | wc -l"), "0\n");
    }

    #[test]
    fn sort_and_uniq() {
        let mut s = Sandbox::new();
        s.write("f", "b 2\na 10\nc 1\na 10\n");
        assert_eq!(s.ok("sort f"), "a 10\na 10\nb 2\nc 1\n");
        assert_eq!(s.ok("sort -r f"), "c 1\nb 2\na 10\na 10\n");
        assert_eq!(s.ok("sort -u f"), "a 10\nb 2\nc 1\n");
        assert_eq!(s.ok("sort -k2 -n f"), "c 1\nb 2\na 10\na 10\n");
        assert_eq!(s.ok("sort -k 2nr f"), "a 10\na 10\nb 2\nc 1\n");
        assert_eq!(
            s.ok("printf '3,x\n1,y\n2,z\n' | sort -t, -k1,1n"),
            "1,y\n2,z\n3,x\n"
        );
        assert_eq!(s.ok("printf '10\n9\n-1\nx\n' | sort -n"), "-1\nx\n9\n10\n");
        assert_eq!(s.ok("printf 'B\na\nC\n' | sort"), "B\nC\na\n");
        assert_eq!(s.ok("printf 'B\na\nC\n' | sort -f"), "a\nB\nC\n");
        assert_eq!(s.ok("printf '1K\n2M\n512\n' | sort -h"), "512\n1K\n2M\n");
        assert_eq!(s.ok("sort f -o sorted; cat sorted | head -n 1"), "a 10\n");
        assert_eq!(s.ok("sort f | uniq"), "a 10\nb 2\nc 1\n");
        assert_eq!(
            s.ok("sort f | uniq -c"),
            "      2 a 10\n      1 b 2\n      1 c 1\n"
        );
        assert_eq!(s.ok("sort f | uniq -d"), "a 10\n");
        assert_eq!(s.ok("sort f | uniq -u"), "b 2\nc 1\n");
        assert_eq!(s.ok("printf 'a\nA\nb\n' | uniq -i"), "a\nb\n");
        assert_eq!(s.sh("sort -k 0 f").2, 2);
    }

    #[test]
    fn tr_cut_tee() {
        let mut s = Sandbox::new();
        assert_eq!(s.ok("echo Hello | tr a-z A-Z"), "HELLO\n");
        assert_eq!(s.ok("echo Hello | tr '[:upper:]' '[:lower:]'"), "hello\n");
        assert_eq!(s.ok("echo 'a1b2c3' | tr -d 0-9"), "abc\n");
        assert_eq!(s.ok("echo 'aaabbbccc' | tr -s ab"), "abccc\n");
        assert_eq!(s.ok("echo 'a b  c' | tr -s ' ' '\n'"), "a\nb\nc\n");
        assert_eq!(s.ok("echo 'abc123' | tr -cd '0-9'"), "123");
        assert_eq!(s.ok("echo abc | tr abc x"), "xxx\n");
        assert_eq!(s.sh("tr a").2, 1);
        s.write("csv", "name,age,city\nann,30,paris\nbob,25\nnodelim\n");
        assert_eq!(s.ok("cut -d, -f2 csv"), "age\n30\n25\nnodelim\n");
        assert_eq!(
            s.ok("cut -d, -f1,3 csv | head -n 2"),
            "name,city\nann,paris\n"
        );
        assert_eq!(s.ok("cut -d, -f2- -s csv"), "age,city\n30,paris\n25\n");
        assert_eq!(s.ok("cut -c1-3 csv | head -n 1"), "nam\n");
        assert_eq!(s.ok("echo 'héllo' | cut -c2"), "é\n");
        assert_eq!(s.ok("printf 'a\tb\n' | cut -f2"), "b\n");
        assert_eq!(s.sh("cut csv").2, 1);
        assert_eq!(s.ok("echo hi | tee t1 t2"), "hi\n");
        assert_eq!(s.read("t1") + &s.read("t2"), "hi\nhi\n");
        assert_eq!(
            s.ok("echo more | tee -a t1 > /dev/null; cat t1"),
            "hi\nmore\n"
        );
    }

    #[test]
    fn echo_printf_seq() {
        let mut s = Sandbox::new();
        assert_eq!(s.ok("echo -n a; echo b"), "ab\n");
        assert_eq!(s.ok("echo -e 'a\\tb\\n'"), "a\tb\n\n");
        assert_eq!(s.ok("echo 'a\\tb'"), "a\\tb\n");
        assert_eq!(s.ok("echo -x -n"), "-x -n\n");
        assert_eq!(s.ok("echo -e 'x\\cy'; echo"), "x\n");
        assert_eq!(s.ok("echo"), "\n");
        assert_eq!(
            s.ok("printf '%s-%d|%5s|%-3s|%03d|%.2f|%x\\n' a 42 r l 7 3.14159 255"),
            "a-42|    r|l  |007|3.14|ff\n"
        );
        assert_eq!(s.ok("printf '%s\\n' a b c"), "a\nb\nc\n");
        assert_eq!(s.ok("printf 'no newline'"), "no newline");
        assert_eq!(s.ok("printf '%%|%c|%e\\n' xyz 1500"), "%|x|1.500000e+03\n");
        let (out, err, code) = s.sh("printf '%d\\n' abc");
        assert_eq!((out.as_str(), code), ("0\n", 1));
        assert!(err.contains("invalid number"));
        assert_eq!(s.ok("seq 3"), "1\n2\n3\n");
        assert_eq!(s.ok("seq 2 4; seq 5 -2 1"), "2\n3\n4\n5\n3\n1\n");
        assert_eq!(s.ok("seq -s, 3; seq -w 8 10"), "1,2,3\n08\n09\n10\n");
        assert_eq!(s.ok("seq 0 0.5 1.5"), "0.0\n0.5\n1.0\n1.5\n");
        assert_eq!(s.ok("seq -1 1"), "-1\n0\n1\n");
        assert_eq!(s.ok("seq 5 1"), "");
        assert_eq!(s.sh("seq 1 0 5").2, 1);
        assert_eq!(s.sh("seq x").2, 1);
    }

    #[test]
    fn sort_fields_keep_leading_blanks() {
        assert_eq!(fields(b"a  b c", None), vec![(0, 1), (1, 4), (4, 6)]);
        assert_eq!(fields(b"a,,b", Some(b',')), vec![(0, 1), (2, 2), (3, 4)]);
        let k = parse_key("2,2n", &Key::default()).unwrap();
        assert!(k.numeric && k.start == 2 && k.end == Some(2));
        assert_eq!(key_slice(b"x  10 y", &k, None), b"  10");
        assert!(parse_key("0", &Key::default()).is_none());
        assert_eq!(leading_number(b"  -3.5abc"), -3.5);
        assert_eq!(leading_number(b"abc"), 0.0);
        assert_eq!(human_number(b"2K"), 2048.0);
    }

    #[test]
    fn tr_sets() {
        assert_eq!(tr_set("a-e").unwrap(), b"abcde");
        assert_eq!(tr_set("\\n\\t\\\\").unwrap(), b"\n\t\\");
        assert_eq!(tr_set("[:digit:]").unwrap(), b"0123456789");
        assert_eq!(tr_set("a\\-z").unwrap(), b"a-z");
        assert!(tr_set("z-a").is_err());
        assert!(tr_set("[:nope:]").is_err());
    }

    #[test]
    fn cut_lists() {
        assert_eq!(
            cut_list("1,3-4,6-").unwrap(),
            vec![(1, 1), (3, 4), (6, usize::MAX)]
        );
        assert_eq!(cut_list("-2").unwrap(), vec![(1, 2)]);
        assert!(cut_list("0").is_none());
        assert!(cut_list("a").is_none());
    }

    #[test]
    fn c_float_formats() {
        assert_eq!(c_exp(1.5, 6, false), "1.500000e+00");
        assert_eq!(c_exp(0.000123, 2, true), "1.23E-04");
        assert_eq!(c_general(0.0001, 6, false), "0.0001");
        assert_eq!(c_general(1e-5, 6, false), "1e-05");
        assert_eq!(c_general(123456789.0, 6, false), "1.23457e+08");
        assert_eq!(c_general(2.5, 6, false), "2.5");
        assert_eq!(printf_int("0x10"), Some(16));
        assert_eq!(printf_int("'A"), Some(65));
        assert_eq!(printf_int("-010"), Some(-8));
        assert_eq!(printf_int("x"), None);
    }

    #[test]
    fn echo_escapes() {
        let mut v = Vec::new();
        assert!(escapes("a\\tb\\x41\\0101\\\\", &mut v));
        assert_eq!(v, b"a\tbAA\\");
        let mut v = Vec::new();
        assert!(!escapes("a\\cb", &mut v));
        assert_eq!(v, b"a");
    }
}
