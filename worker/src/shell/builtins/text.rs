//! Text filters: `cat`, `head`, `tail`, `wc`, `uniq`, `cut`, `tee`, with coreutils' output
//! formats for the common flags.
//!
//! They stream a line or a chunk at a time where they can ([`io::each_unit`]) and check the
//! deadline inside their loops; `tail` and `head -n -N` read at most [`MAX_READ`] bytes.
//! Producers stop as soon as their output is not read any more (a full pipe or a capped stdout).
//!
//! [`MAX_READ`]: crate::shell::exec::MAX_READ

use regex::bytes::Regex;

use super::args::{Opts, opts, parse_count};
use super::io::{self, Ended, Unit, each_input, line_ends, read_each, read_input};
use crate::shell::exec::{Abort, Ctx};
use crate::shell::path::Access;

pub(super) fn cat(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = opts(ctx, args, "nu", "number=n") else {
        return Ok(1);
    };
    let number = o.has('n');
    let mut lineno = 0u64;
    // A file without a final newline continues its last line into the next file, as in cat.
    let mut at_line_start = true;
    let unit = if number { Unit::Line } else { Unit::Chunk };
    each_input(ctx, &o.operands_or("-"), unit, |ctx, data| {
        if number && at_line_start {
            lineno += 1;
            if !ctx.outs(&format!("{lineno:6}\t")) {
                return false;
            }
        }
        at_line_start = data.ends_with(b"\n");
        ctx.out(data)
    })
}

/// `-5` means `-n 5` for head and tail, and tail's `+5` means `-n +5`.
fn numeric_shorthand(args: &[String], plus: bool) -> Vec<String> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mut out: Vec<String> = Vec::new();
    for a in args {
        // `-n -3` is a value, not a shorthand.
        let is_value = out
            .last()
            .is_some_and(|p| matches!(p.as_str(), "-n" | "-c" | "--lines" | "--bytes"));
        if !is_value
            && (a.strip_prefix('-').is_some_and(digits)
                || plus && a.strip_prefix('+').is_some_and(digits))
        {
            out.push("-n".into());
            out.push(a.strip_prefix('-').unwrap_or(a).into());
        } else {
            out.push(a.clone());
        }
    }
    out
}

/// What `head` or `tail` keeps of each input: lines or bytes, `n` of them, and how they count:
/// `-N` (head: all but the last N) or `+N` (tail: from the Nth on).
struct Span {
    bytes: bool,
    n: usize,
    sign: Option<char>,
}

impl Span {
    /// The part of `data` that head (or tail) prints.
    fn of<'d>(&self, data: &'d [u8], tail: bool) -> &'d [u8] {
        let ends = (!self.bytes).then(|| line_ends(data));
        let units = ends.as_ref().map_or(data.len(), Vec::len);
        // The offset just after `k` units.
        let offset = |k: usize| match (&ends, k) {
            (_, 0) => 0,
            (Some(ends), k) => ends[k - 1],
            (None, k) => k,
        };
        let n = self.n.min(units);
        let (from, to) = match (tail, self.sign) {
            (false, Some('-')) => (0, units - n),
            (false, _) => (0, n),
            (true, Some('+')) => (self.n.saturating_sub(1).min(units), units),
            (true, _) => (units - n, units),
        };
        &data[offset(from)..offset(to)]
    }
}

/// The options of `head` and `tail`, the span to print, and whether to print `==> NAME <==`.
fn head_tail_options(
    ctx: &mut Ctx<'_, '_>,
    args: &[String],
    tail: bool,
) -> Option<(Opts, Span, bool)> {
    let args = numeric_shorthand(args, tail);
    let (short, longs) = match tail {
        true => ("n:c:qvfF", "lines=n bytes=c quiet=q verbose=v follow=f"),
        false => ("n:c:qv", "lines=n bytes=c quiet=q verbose=v"),
    };
    let o = opts(ctx, &args, short, longs)?;
    if o.has('f') || o.has('F') {
        ctx.warn("following a file (-f) is not supported: a command line runs to completion");
        return None;
    }
    let bytes = o.value('c').is_some() && o.value('n').is_none();
    let spec = if bytes { o.value('c') } else { o.value('n') }.unwrap_or("10");
    let sign = spec.chars().next().filter(|c| matches!(c, '-' | '+'));
    let what = if bytes {
        "number of bytes"
    } else {
        "number of lines"
    };
    let n = parse_count(ctx, what, &spec[sign.map_or(0, |_| 1)..])?;
    let many = (o.operands.len() > 1 || o.has('v')) && !o.has('q');
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    Some((o, Span { bytes, n, sign }, many))
}

/// `==> NAME <==` before each input when there are several.
fn header(ctx: &mut Ctx<'_, '_>, many: bool, first: bool, name: &str) -> bool {
    let name = if name == "-" { "standard input" } else { name };
    !many
        || ctx.outs(&format!(
            "{}==> {name} <==\n",
            if first { "" } else { "\n" }
        ))
}

pub(super) fn head(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    head_tail(ctx, args, false)
}

pub(super) fn tail(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    head_tail(ctx, args, true)
}

fn head_tail(ctx: &mut Ctx<'_, '_>, args: &[String], tail: bool) -> Result<i32, Abort> {
    let Some((o, span, many)) = head_tail_options(ctx, args, tail) else {
        return Ok(1);
    };
    let mut status = 0;
    for (i, f) in o.operands_or("-").iter().enumerate() {
        ctx.check()?;
        if tail || span.sign == Some('-') {
            // Counted from the end: needs the whole input.
            let Some(data) = read_input(ctx, f) else {
                status = 1;
                continue;
            };
            if !header(ctx, many, i == 0, f) || !ctx.out(span.of(&data, tail)) {
                return Ok(status);
            }
            continue;
        }
        // Counted from the start: streamed, and only what is printed is read.
        let Some(mut src) = io::open_input(ctx, f) else {
            status = 1;
            continue;
        };
        if !header(ctx, many, i == 0, f) {
            return Ok(status);
        }
        let (mut left, mut closed) = (span.n, false);
        let unit = if span.bytes { Unit::Chunk } else { Unit::Line };
        let ended = if left == 0 {
            Ended::Done
        } else {
            io::each_unit(ctx, &mut src, f, unit, |ctx, data| {
                let piece = if span.bytes {
                    &data[..left.min(data.len())]
                } else {
                    data
                };
                left -= if span.bytes { piece.len() } else { 1 };
                closed = !ctx.out(piece);
                left > 0 && !closed
            })?
        };
        if closed {
            return Ok(status);
        }
        if ended == Ended::Failed {
            status = 1;
        }
    }
    Ok(status)
}

/// What `wc` counts.
#[derive(Default, Clone, Copy)]
struct Counts {
    lines: u64,
    words: u64,
    chars: u64,
    bytes: u64,
}

impl Counts {
    fn add(&mut self, chunk: &[u8], in_word: &mut bool) {
        for &b in chunk {
            self.bytes += 1;
            self.chars += u64::from(b & 0xC0 != 0x80);
            self.lines += u64::from(b == b'\n');
            let blank = b.is_ascii_whitespace();
            self.words += u64::from(!blank && !*in_word);
            *in_word = !blank;
        }
    }

    fn plus(&self, c: &Counts) -> Counts {
        Counts {
            lines: self.lines + c.lines,
            words: self.words + c.words,
            chars: self.chars + c.chars,
            bytes: self.bytes + c.bytes,
        }
    }
}

pub(super) fn wc(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = opts(ctx, args, "lwcm", "lines=l words=w bytes=c chars=m") else {
        return Ok(1);
    };
    let mut show = [o.has('l'), o.has('w'), o.has('m'), o.has('c')];
    if !show.contains(&true) {
        show = [true, true, false, true];
    }
    let files = o.operands_or("-");
    let mut status = 0;
    let mut results: Vec<(Counts, &str)> = Vec::new();
    let mut total = Counts::default();
    for f in &files {
        let (mut c, mut in_word) = (Counts::default(), false);
        if read_each(ctx, f, Unit::Chunk, |_, chunk| {
            c.add(chunk, &mut in_word);
            true
        })? == Ended::Failed
        {
            status = 1;
            continue;
        }
        total = total.plus(&c);
        results.push((c, f));
    }
    // coreutils: no padding for one count of one input; otherwise as wide as the total size of
    // the regular files, and at least 7 when an input is not a regular file.
    let regular: u64 = results
        .iter()
        .filter(|(_, f)| *f != "-")
        .map(|(c, _)| c.bytes)
        .sum();
    let width = if files.len() == 1 && show.iter().filter(|&&s| s).count() == 1 {
        1
    } else if files.iter().any(|f| f == "-") {
        regular.to_string().len().max(7)
    } else {
        regular.to_string().len()
    };
    if results.len() > 1 {
        results.push((total, "total"));
    }
    let mut text = String::new();
    for (c, name) in results {
        let values = [c.lines, c.words, c.chars, c.bytes];
        let shown: Vec<String> = values
            .iter()
            .zip(show)
            .filter(|(_, s)| *s)
            .map(|(v, _)| format!("{v:>width$}"))
            .collect();
        text.push_str(&shown.join(" "));
        if !o.operands.is_empty() {
            text.push(' ');
            text.push_str(name);
        }
        text.push('\n');
    }
    ctx.outs(&text);
    Ok(status)
}

pub(super) fn uniq(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = opts(
        ctx,
        args,
        "cdui",
        "count=c repeated=d unique=u ignore-case=i",
    ) else {
        return Ok(1);
    };
    if let Some(extra) = o.operands.get(1) {
        ctx.warn(format_args!(
            "extra operand '{extra}' (writing to a file: use > FILE)"
        ));
        return Ok(1);
    }
    let same = |a: &[u8], b: &[u8]| {
        if o.has('i') {
            a.eq_ignore_ascii_case(b)
        } else {
            a == b
        }
    };
    // Prints a group of `n` equal lines (or not, for -d and -u); `false` once output closed.
    let emit = |ctx: &mut Ctx<'_, '_>, line: &[u8], n: u64| {
        if (o.has('d') && n < 2) || (o.has('u') && n > 1) {
            return true;
        }
        let prefix = if o.has('c') {
            format!("{n:7} ")
        } else {
            String::new()
        };
        ctx.outs(&prefix) && ctx.out(line) && ctx.out(b"\n")
    };
    let mut prev: Option<(Vec<u8>, u64)> = None;
    let ended = read_each(ctx, &o.operands_or("-")[0], Unit::Line, |ctx, line| {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        match &mut prev {
            Some((p, count)) if same(p, line) => *count += 1,
            _ => {
                if let Some((p, count)) = prev.replace((line.to_vec(), 1)) {
                    return emit(ctx, &p, count);
                }
            }
        }
        true
    })?;
    match (ended, prev) {
        (Ended::Failed, _) => Ok(1),
        (Ended::Done, Some((p, count))) => {
            emit(ctx, &p, count);
            Ok(0)
        }
        _ => Ok(0),
    }
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
    let Some(o) = opts(
        ctx,
        args,
        "d:f:c:b:s",
        "delimiter=d fields=f characters=c bytes=b only-delimited=s",
    ) else {
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
    let delim = o.value('d').unwrap_or("\t").to_string();
    if delim.chars().count() != 1 {
        ctx.warn("the delimiter must be a single character");
        return Ok(1);
    }
    let splitter = Regex::new(&regex::escape(&delim)).expect("an escaped character is a regex");
    let selected = |i: usize| list.iter().any(|&(lo, hi)| lo <= i && i <= hi);
    each_input(ctx, &o.operands_or("-"), Unit::Line, |ctx, line| {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        let mut out = match mode {
            'b' => picked(body.chunks(1), selected).concat(),
            'c' => {
                let text = String::from_utf8_lossy(body);
                picked(text.split_inclusive(|_| true).map(str::as_bytes), selected).concat()
            }
            _ => match splitter.split(body).collect::<Vec<_>>() {
                parts if parts.len() > 1 => {
                    picked(parts.into_iter(), selected).join(delim.as_bytes())
                }
                _ if o.has('s') => return true,
                _ => body.to_vec(),
            },
        };
        out.push(b'\n');
        ctx.out(&out)
    })
}

/// The items whose 1-based positions `selected` picks.
fn picked<'a>(
    items: impl Iterator<Item = &'a [u8]>,
    selected: impl Fn(usize) -> bool,
) -> Vec<&'a [u8]> {
    items
        .enumerate()
        .filter(|(i, _)| selected(i + 1))
        .map(|(_, item)| item)
        .collect()
}

pub(super) fn tee(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = opts(ctx, args, "ai", "append=a") else {
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
    let mut stdout_open = true;
    read_each(ctx, "-", Unit::Chunk, |ctx, chunk| {
        stdout_open = stdout_open && ctx.out(chunk);
        for &t in &targets {
            ctx.sh.io.write(t, chunk);
        }
        true
    })?;
    ctx.sh.io.close_files(mark);
    Ok(status)
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
    fn cut_lists() {
        assert_eq!(
            cut_list("1,3-4,6-").unwrap(),
            vec![(1, 1), (3, 4), (6, usize::MAX)]
        );
        assert_eq!(cut_list("-2").unwrap(), vec![(1, 2)]);
        assert!(cut_list("0").is_none());
        assert!(cut_list("a").is_none());
    }
}
