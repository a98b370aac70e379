//! `grep`, and the translation of POSIX regular expressions (basic and extended, GNU flavour)
//! into the `regex` crate's syntax that `sed` shares.
//!
//! Matching is on bytes (`regex::bytes`), so files that are not UTF-8 still work; a file with a
//! NUL byte in its first block is binary and only reported as matching, like GNU grep. Recursive
//! search never follows symlinks below its operands and checks the deadline per line.

use std::collections::VecDeque;

use regex::bytes::{Regex, RegexBuilder};

use super::{next_line, open_input, opts, parse_count};
use crate::shell::exec::{Abort, Ctx};
use crate::shell::expand::Pattern;
use crate::shell::path::{Access, FsError, Kind, Resolved, join};

/// Translates a POSIX regex (`basic`: BRE, else ERE) into `regex` syntax.
///
/// # Errors
/// For back-references (which the `regex` crate cannot match) and unterminated brackets.
pub(crate) fn translate(p: &str, basic: bool) -> Result<String, String> {
    let c: Vec<char> = p.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    // Where `*` is literal and `^` is an anchor: at the start, after `(` and `|`.
    let mut at_start = true;
    while i < c.len() {
        let ch = c[i];
        let was_start = at_start;
        at_start = false;
        match ch {
            '\\' if i + 1 < c.len() => {
                let n = c[i + 1];
                i += 2;
                match n {
                    '(' | ')' | '|' | '{' | '}' | '+' | '?' if basic => {
                        out.push(n);
                        at_start = n == '(' || n == '|';
                    }
                    '1'..='9' => {
                        return Err(
                            "back-references (\\1...) are not supported; use python -c".into()
                        );
                    }
                    '`' => out.push_str("\\A"),
                    '\'' => out.push_str("\\z"),
                    '<' | '>' | 'b' | 'B' | 'w' | 'W' | 's' | 'S' | 'd' | 'D' | 'n' | 't' => {
                        out.push('\\');
                        out.push(n);
                    }
                    other if other.is_ascii_alphanumeric() => out.push(other),
                    other => {
                        out.push('\\');
                        out.push(other);
                    }
                }
                continue;
            }
            '\\' => out.push_str("\\\\"),
            '[' => {
                let (class, used) = bracket(&c[i..])?;
                out.push_str(&class);
                i += used;
                continue;
            }
            '*' if was_start => out.push_str("\\*"),
            '^' if !was_start => out.push_str("\\^"),
            '^' => {
                out.push('^');
                at_start = true;
            }
            '$' => {
                let end = i + 1 == c.len()
                    || (basic
                        && c.get(i + 1) == Some(&'\\')
                        && matches!(c.get(i + 2), Some(')' | '|')))
                    || (!basic && matches!(c.get(i + 1), Some(')' | '|')));
                out.push_str(if end { "$" } else { "\\$" });
            }
            '(' | ')' | '|' | '+' | '?' | '{' | '}' if basic => {
                out.push('\\');
                out.push(ch);
            }
            '(' | '|' => {
                out.push(ch);
                at_start = true;
            }
            '{' => {
                // An ERE `{` that does not start a valid interval is literal.
                let rest: String = c[i + 1..].iter().take_while(|&&x| x != '}').collect();
                let valid = c[i + 1..].contains(&'}')
                    && !rest.is_empty()
                    && rest.chars().all(|x| x.is_ascii_digit() || x == ',')
                    && rest.chars().next().is_some_and(|x| x.is_ascii_digit());
                out.push_str(if valid && !was_start { "{" } else { "\\{" });
            }
            '}' => {
                // Closing an interval opened above; a stray `}` is literal.
                let open = out
                    .rfind('{')
                    .is_some_and(|o| !out[o..].contains('}') && !out[..o].ends_with('\\'));
                out.push_str(if open { "}" } else { "\\}" });
            }
            other => out.push(other),
        }
        i += 1;
    }
    Ok(out)
}

/// A POSIX bracket expression starting at `c[0] == '['`, rewritten for `regex`: backslashes and
/// nested `[` are literal, `]` first is literal, `[:class:]` is kept.
fn bracket(c: &[char]) -> Result<(String, usize), String> {
    let mut out = String::from("[");
    let mut i = 1;
    if c.get(i) == Some(&'^') {
        out.push('^');
        i += 1;
    }
    let mut first = true;
    loop {
        let Some(&ch) = c.get(i) else {
            return Err("unmatched [, [^, [:, [., or [=".into());
        };
        match ch {
            ']' if !first => {
                out.push(']');
                return Ok((out, i + 1));
            }
            '[' if matches!(c.get(i + 1), Some(':' | '.' | '=')) => {
                let kind = c[i + 1];
                let rest: String = c[i + 2..].iter().collect();
                let close = format!("{kind}]");
                let Some(end) = rest.find(&close) else {
                    return Err("unmatched [, [^, [:, [., or [=".into());
                };
                let name = &rest[..end];
                if kind == ':' {
                    out.push_str(&format!("[:{name}:]"));
                } else {
                    for x in name.chars() {
                        out.push('\\');
                        out.push(x);
                    }
                }
                i += 2 + name.chars().count() + 2;
            }
            '\\' | '[' | ']' | '&' | '~' | '^' => {
                out.push('\\');
                out.push(ch);
                i += 1;
            }
            '-' if c.get(i + 1) == Some(&'-') => {
                out.push_str("\\-");
                i += 1;
            }
            other => {
                out.push(other);
                i += 1;
            }
        }
        first = false;
    }
}

/// Builds a regex for a list of patterns.
///
/// # Errors
/// The translation's or the regex crate's message.
pub(crate) fn build(
    patterns: &[String],
    mode: Syntax,
    ignore_case: bool,
    whole_line: bool,
) -> Result<Regex, String> {
    let mut alternatives = Vec::new();
    for p in patterns {
        let translated = match mode {
            Syntax::Fixed => regex::escape(p),
            Syntax::Basic => translate(p, true)?,
            Syntax::Extended => translate(p, false)?,
        };
        alternatives.push(format!("(?:{translated})"));
    }
    let mut re = alternatives.join("|");
    if whole_line {
        re = format!("^(?:{re})$");
    }
    RegexBuilder::new(&re)
        .case_insensitive(ignore_case)
        .size_limit(16 << 20)
        .build()
        .map_err(|e| match e {
            regex::Error::Syntax(s) => s
                .lines()
                .last()
                .unwrap_or("invalid regular expression")
                .trim()
                .to_string(),
            other => other.to_string(),
        })
}

/// How patterns are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Syntax {
    Basic,
    Extended,
    Fixed,
}

struct Matcher {
    re: Regex,
    word: bool,
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

impl Matcher {
    /// The next match at or after `from`, honouring `-w`.
    fn find(&self, line: &[u8], from: usize) -> Option<(usize, usize)> {
        let mut pos = from;
        while pos <= line.len() {
            let m = self.re.find_at(line, pos)?;
            if !self.word {
                return Some((m.start(), m.end()));
            }
            let before = m.start() == 0 || !is_word(line[m.start() - 1]);
            let after = m.end() == line.len() || !is_word(line[m.end()]);
            if before && after && m.end() > m.start() {
                return Some((m.start(), m.end()));
            }
            pos = m.start() + 1;
        }
        None
    }
}

struct GrepOpts {
    invert: bool,
    line_numbers: bool,
    count: bool,
    files_with: bool,
    files_without: bool,
    quiet: bool,
    only: bool,
    suppress: bool,
    names: bool,
    max: Option<u64>,
    before: usize,
    after: usize,
    /// -A, -B or -C was given (even 0): groups are separated by `--`.
    context: bool,
}

/// Per-run state: whether anything printed (for `--` separators) or matched.
#[derive(Default)]
struct Run {
    printed_any: bool,
    matched: bool,
    /// `-L` printed a name.
    listed: bool,
    errors: bool,
    /// Output closed, or `-q` matched: stop everything.
    stop: bool,
}

pub(super) fn grep(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let longs = [
        ("ignore-case", 'i'),
        ("invert-match", 'v'),
        ("line-number", 'n'),
        ("count", 'c'),
        ("recursive", 'r'),
        ("dereference-recursive", 'R'),
        ("files-with-matches", 'l'),
        ("files-without-match", 'L'),
        ("extended-regexp", 'E'),
        ("fixed-strings", 'F'),
        ("basic-regexp", 'G'),
        ("word-regexp", 'w'),
        ("line-regexp", 'x'),
        ("only-matching", 'o'),
        ("quiet", 'q'),
        ("silent", 'q'),
        ("no-messages", 's'),
        ("with-filename", 'H'),
        ("no-filename", 'h'),
        ("max-count", 'm'),
        ("after-context", 'A'),
        ("before-context", 'B'),
        ("context", 'C'),
        ("regexp", 'e'),
        ("include", 'N'),
        ("exclude", 'X'),
        ("exclude-dir", 'Z'),
        ("text", 'a'),
        ("binary-files", 'U'),
        ("color", 'K'),
        ("colour", 'K'),
    ];
    let Some(o) = opts(
        ctx,
        args,
        "ivnclLrREFGwxoqsHhaIPm:A:B:C:e:f:N:X:Z:U:K:",
        &longs,
    ) else {
        return Ok(2);
    };
    if o.has('P') {
        ctx.warn(
            "-P (Perl regex) is not supported; -E covers most of it (\\d, \\w, \\s, non-greedy *?)",
        );
        return Ok(2);
    }
    let mut operands = o.operands.clone();
    let mut patterns: Vec<String> = o.values('e').iter().map(|s| s.to_string()).collect();
    if let Some(f) = o.value('f') {
        let f = f.to_string();
        let Some(data) = super::read_input(ctx, &f) else {
            return Ok(2);
        };
        patterns.extend(
            super::lines(&data)
                .iter()
                .map(|l| String::from_utf8_lossy(l).into_owned()),
        );
    }
    if patterns.is_empty() {
        if operands.is_empty() {
            ctx.warn("usage: grep [OPTION]... PATTERNS [FILE]...");
            return Ok(2);
        }
        // A pattern with newlines is several patterns.
        patterns = operands.remove(0).split('\n').map(String::from).collect();
    }
    let syntax = if o.has('F') {
        Syntax::Fixed
    } else if o.has('E') && !o.later('G', 'E') {
        Syntax::Extended
    } else {
        Syntax::Basic
    };
    let re = match build(&patterns, syntax, o.has('i'), o.has('x')) {
        Ok(re) => re,
        Err(e) => {
            ctx.warn(e);
            return Ok(2);
        }
    };
    let matcher = Matcher {
        re,
        word: o.has('w'),
    };
    let recursive = o.has('r') || o.has('R');
    let context = |c: char, ctx: &mut Ctx<'_, '_>| -> Option<usize> {
        match o.value(c).or(o.value('C')) {
            Some(v) => parse_count(ctx, "context length argument", v).map(|n| n as usize),
            None => Some(0),
        }
    };
    let (Some(after), Some(before)) = (context('A', ctx), context('B', ctx)) else {
        return Ok(2);
    };
    let max = match o.value('m') {
        Some(v) => match parse_count(ctx, "max count", v) {
            Some(n) => Some(n),
            None => return Ok(2),
        },
        None => None,
    };
    let implicit_dot = operands.is_empty() && recursive;
    if operands.is_empty() {
        operands.push(if recursive { ".".into() } else { "-".into() });
    }
    let names = if o.has('h') {
        false
    } else {
        o.has('H') || operands.len() > 1 || recursive
    };
    let g = GrepOpts {
        invert: o.has('v'),
        line_numbers: o.has('n'),
        count: o.has('c'),
        files_with: o.has('l'),
        files_without: o.has('L'),
        quiet: o.has('q'),
        only: o.has('o'),
        suppress: o.has('s'),
        names,
        max,
        before,
        after,
        context: o.value('A').or(o.value('B')).or(o.value('C')).is_some(),
    };
    let include: Vec<Pattern> = o.values('N').iter().map(|p| Pattern::parse(p)).collect();
    let exclude: Vec<Pattern> = o.values('X').iter().map(|p| Pattern::parse(p)).collect();
    let exclude_dir: Vec<Pattern> = o.values('Z').iter().map(|p| Pattern::parse(p)).collect();
    let wanted = |name: &str| {
        (include.is_empty() || include.iter().any(|p| p.matches(name)))
            && !exclude.iter().any(|p| p.matches(name))
    };
    let mut run = Run::default();
    for arg in &operands {
        if run.stop {
            break;
        }
        if arg == "-" {
            let Some(mut src) = open_input(ctx, "-") else {
                continue;
            };
            grep_source(ctx, &mut src, "(standard input)", &matcher, &g, &mut run)?;
            continue;
        }
        let node = match ctx.resolve(arg, Access::Read, true).and_then(|r| {
            let m = ctx.fs().stat(&r)?;
            Ok((r, m))
        }) {
            Ok(x) => x,
            Err(e) => {
                if !g.suppress {
                    ctx.fail(arg, &e);
                } else {
                    ctx.sh.record(&e);
                }
                run.errors = true;
                continue;
            }
        };
        if node.1.is_dir() {
            if !recursive {
                if !g.suppress {
                    ctx.warn(format_args!("{arg}: Is a directory"));
                }
                run.errors = true;
                continue;
            }
            // Depth-first over sorted entries; symlinks below the operand are skipped.
            let mut stack: Vec<(Resolved, String)> = vec![(
                node.0,
                if implicit_dot {
                    String::new()
                } else {
                    arg.clone()
                },
            )];
            while let Some((dir, label)) = stack.pop() {
                if run.stop {
                    break;
                }
                ctx.check()?;
                let entries = match ctx.fs().list(&dir) {
                    Ok(e) => e,
                    Err(e) => {
                        if !g.suppress {
                            ctx.fail(if label.is_empty() { "." } else { &label }, &e);
                        }
                        run.errors = true;
                        continue;
                    }
                };
                let mut subdirs = Vec::new();
                for e in entries {
                    if run.stop {
                        break;
                    }
                    let shown = join(&label, &e.name);
                    let Ok(meta) = ctx.fs().lstat(&e.node) else {
                        continue;
                    };
                    match meta.kind {
                        Kind::Dir => {
                            if !exclude_dir.iter().any(|p| p.matches(&e.name)) {
                                subdirs.push((e.node, shown));
                            }
                        }
                        Kind::File if wanted(&e.name) => {
                            grep_file(ctx, &e.node, &shown, &matcher, &g, &mut run)?;
                        }
                        _ => {}
                    }
                }
                stack.extend(subdirs.into_iter().rev());
            }
        } else {
            grep_file(ctx, &node.0, arg, &matcher, &g, &mut run)?;
        }
    }
    // -L succeeds when it lists something (grep >= 3.5).
    let success = if g.files_without {
        run.listed
    } else {
        run.matched
    };
    Ok(if run.errors && !(g.quiet && run.matched) {
        2
    } else if success {
        0
    } else {
        1
    })
}

fn grep_file(
    ctx: &mut Ctx<'_, '_>,
    node: &Resolved,
    shown: &str,
    m: &Matcher,
    g: &GrepOpts,
    run: &mut Run,
) -> Result<(), Abort> {
    match ctx.fs().open_read(node) {
        Ok(f) => {
            let mut src = super::Source::File(std::io::BufReader::with_capacity(64 << 10, f));
            grep_source(ctx, &mut src, shown, m, g, run)
        }
        Err(e) => {
            if !g.suppress {
                ctx.fail(shown, &e);
            }
            run.errors = true;
            Ok(())
        }
    }
}

fn grep_source(
    ctx: &mut Ctx<'_, '_>,
    src: &mut super::Source,
    name: &str,
    m: &Matcher,
    g: &GrepOpts,
    run: &mut Run,
) -> Result<(), Abort> {
    use std::io::BufRead;
    let binary = src
        .fill_buf()
        .is_ok_and(|b| b[..b.len().min(32 << 10)].contains(&0));
    let prefix = |lineno: u64, sep: char| -> String {
        let mut p = String::new();
        if g.names {
            p.push_str(name);
            p.push(sep);
        }
        if g.line_numbers {
            p.push_str(&lineno.to_string());
            p.push(sep);
        }
        p
    };
    let mut count = 0u64;
    let mut lineno = 0u64;
    let mut line = Vec::new();
    let mut before: VecDeque<(u64, Vec<u8>)> = VecDeque::new();
    let mut after_left = 0usize;
    let mut last_printed = 0u64;
    let listing = g.quiet || g.files_with || g.files_without || g.count || binary;
    loop {
        if g.max == Some(0) {
            break;
        }
        ctx.check()?;
        match next_line(src, &mut line) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                if !g.suppress {
                    ctx.fail(name, &FsError::Io(e));
                }
                run.errors = true;
                break;
            }
        }
        lineno += 1;
        let body = line.strip_suffix(b"\n").unwrap_or(&line);
        let hit = m.find(body, 0).is_some() != g.invert;
        if !hit {
            if after_left > 0 && !listing {
                after_left -= 1;
                let text = [prefix(lineno, '-').as_bytes(), body, b"\n"].concat();
                last_printed = lineno;
                if !ctx.out(&text) {
                    run.stop = true;
                    return Ok(());
                }
            } else if g.before > 0 {
                before.push_back((lineno, body.to_vec()));
                if before.len() > g.before {
                    before.pop_front();
                }
            }
            continue;
        }
        count += 1;
        run.matched = true;
        if g.quiet {
            run.stop = true;
            return Ok(());
        }
        if listing {
            if g.files_with || g.files_without || binary {
                break;
            }
            if g.max.is_some_and(|mx| count >= mx) {
                break;
            }
            continue;
        }
        let mut text = Vec::new();
        let first_shown = before.front().map_or(lineno, |(n, _)| *n);
        if g.context && run.printed_any && first_shown > last_printed + 1 {
            text.extend_from_slice(b"--\n");
        }
        for (n, l) in before.drain(..) {
            text.extend_from_slice(prefix(n, '-').as_bytes());
            text.extend_from_slice(&l);
            text.push(b'\n');
        }
        if g.only {
            let mut from = 0;
            while let Some((s, e)) = m.find(body, from) {
                if e == s {
                    from = e + 1;
                    if from > body.len() {
                        break;
                    }
                    continue;
                }
                text.extend_from_slice(prefix(lineno, ':').as_bytes());
                text.extend_from_slice(&body[s..e]);
                text.push(b'\n');
                from = e;
            }
        } else {
            text.extend_from_slice(prefix(lineno, ':').as_bytes());
            text.extend_from_slice(body);
            text.push(b'\n');
        }
        run.printed_any = true;
        last_printed = lineno;
        after_left = g.after;
        if !ctx.out(&text) {
            run.stop = true;
            return Ok(());
        }
        if g.max.is_some_and(|mx| count >= mx) {
            break;
        }
    }
    if g.count {
        let text = if g.names {
            format!("{name}:{count}\n")
        } else {
            format!("{count}\n")
        };
        run.stop |= !ctx.outs(&text);
    } else if g.files_with && count > 0 {
        run.stop |= !ctx.outs(&format!("{name}\n"));
    } else if g.files_without && count == 0 {
        run.listed = true;
        run.stop |= !ctx.outs(&format!("{name}\n"));
    } else if binary && count > 0 && !g.quiet && !g.files_with && !g.files_without {
        ctx.err(format!("grep: {name}: binary file matches\n").as_bytes());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::shell::tests::Sandbox;

    #[test]
    fn grep_flags() {
        let mut s = Sandbox::new();
        s.write("f", "apple pie\nBanana split\ncherry\napple tart\n");
        s.write("g", "no fruit\n");
        s.write("src/a.py", "import os\nTODO: fix\n");
        s.write("src/deep/b.py", "x = 1  # TODO\n");
        s.write("src/c.txt", "TODO txt\n");
        s.write("bin.dat", "TODO\0binary\n");
        assert_eq!(s.ok("grep apple f"), "apple pie\napple tart\n");
        assert_eq!(s.ok("grep -i banana f"), "Banana split\n");
        assert_eq!(s.ok("grep -v apple f"), "Banana split\ncherry\n");
        assert_eq!(s.ok("grep -n apple f"), "1:apple pie\n4:apple tart\n");
        assert_eq!(s.ok("grep -c apple f g"), "f:2\ng:0\n");
        assert_eq!(s.ok("grep -l apple f g"), "f\n");
        assert_eq!(s.ok("grep -L apple f g"), "g\n");
        assert_eq!(s.ok("grep -h -e pie -e cherry f g"), "apple pie\ncherry\n");
        assert_eq!(s.ok("grep -E 'pie|tart' f"), "apple pie\napple tart\n");
        assert_eq!(s.ok("grep 'pie\\|tart' f"), "apple pie\napple tart\n");
        assert_eq!(s.ok("grep -F 'a.p' f; echo $?"), "1\n");
        assert_eq!(s.ok("grep -o 'ap*le' f"), "apple\napple\n");
        assert_eq!(s.ok("grep -w app f; echo $?"), "1\n");
        assert_eq!(s.ok("grep -x cherry f"), "cherry\n");
        assert_eq!(s.ok("grep -m1 apple f"), "apple pie\n");
        assert_eq!(s.ok("grep -q cherry f && echo found"), "found\n");
        assert_eq!(s.ok("grep -A1 Banana f"), "Banana split\ncherry\n");
        assert_eq!(s.ok("grep -B1 -n cherry f"), "2-Banana split\n3:cherry\n");
        assert_eq!(s.ok("grep -C0 apple f"), "apple pie\n--\napple tart\n");
        assert_eq!(s.ok("cat f | grep -c a"), "3\n");
        assert_eq!(
            s.ok("grep -rn TODO src"),
            "src/a.py:2:TODO: fix\nsrc/c.txt:1:TODO txt\nsrc/deep/b.py:1:x = 1  # TODO\n"
        );
        assert_eq!(
            s.ok("cd src; grep -rl TODO; cd .."),
            "a.py\nc.txt\ndeep/b.py\n"
        );
        assert_eq!(
            s.ok("grep -r --include='*.py' -l TODO ."),
            "./src/a.py\n./src/deep/b.py\n"
        );
        assert_eq!(
            s.ok("grep -r --exclude-dir=deep -l TODO src"),
            "src/a.py\nsrc/c.txt\n"
        );
        let (out, err, code) = s.sh("grep TODO bin.dat");
        assert_eq!(
            (out.as_str(), err.as_str(), code),
            ("", "grep: bin.dat: binary file matches\n", 0)
        );
        assert_eq!(s.sh("grep zzz f").2, 1);
        let (_, err, code) = s.sh("grep 'a[' f");
        assert!(err.starts_with("grep: ") && code == 2, "{err}");
        assert_eq!(
            s.sh("grep x nope").1,
            "grep: nope: No such file or directory\n"
        );
        assert_eq!(s.sh("grep x nope f").2, 2);
        assert_eq!(s.sh("grep -s x nope").1, "");
        assert_eq!(s.sh("grep x src").1, "grep: src: Is a directory\n");
        assert!(s.sh("grep -P x f").1.contains("not supported"));
        assert_eq!(s.sh("grep").2, 2);
        assert_eq!(s.ok("grep -E '^[a-z]+ [a-z]{3}$' f"), "apple pie\n");
        assert_eq!(s.ok("grep -c '' f"), "4\n");
    }

    fn bre(p: &str) -> String {
        translate(p, true).unwrap()
    }

    fn ere(p: &str) -> String {
        translate(p, false).unwrap()
    }

    fn is_match(p: &str, basic: bool, s: &str) -> bool {
        let mode = if basic {
            Syntax::Basic
        } else {
            Syntax::Extended
        };
        build(&[p.to_string()], mode, false, false)
            .unwrap()
            .is_match(s.as_bytes())
    }

    #[test]
    fn basic_regex_translation() {
        assert_eq!(bre("a\\(b\\)*c"), "a(b)*c");
        assert_eq!(bre("a+b?(c)|d{2}"), "a\\+b\\?\\(c\\)\\|d\\{2\\}");
        assert_eq!(bre("x\\{2,3\\}"), "x{2,3}");
        assert_eq!(bre("*a"), "\\*a");
        assert_eq!(bre("a^b$c$"), "a\\^b\\$c$");
        assert_eq!(bre("[]a\\[]"), "[\\]a\\\\\\[]");
        assert_eq!(bre("[[:digit:]]"), "[[:digit:]]");
        assert!(translate("\\(a\\)\\1", true).is_err());
        assert!(translate("[abc", true).is_err());
        assert!(is_match("^foo.*bar$", true, "foo x bar"));
        assert!(is_match("a\\|b", true, "b"));
        assert!(is_match("a+", true, "a+"));
        assert!(!is_match("a+", true, "aa"));
        assert!(is_match("\\<word\\>", true, "a word here"));
    }

    #[test]
    fn extended_regex_translation() {
        assert_eq!(ere("(a|b)+{2}"), "(a|b)+{2}");
        assert_eq!(ere("a{"), "a\\{");
        assert_eq!(ere("a{x}"), "a\\{x\\}");
        assert!(is_match("^(ab)+$", false, "abab"));
        assert!(is_match("[0-9]{3}-[0-9]{4}", false, "555-1234"));
        assert!(is_match("\\d+\\.\\d+", false, "v1.25"));
        assert!(is_match("a{", false, "a{"));
    }

    #[test]
    fn word_matching_retries_later_matches() {
        let m = Matcher {
            re: build(&["foo".into()], Syntax::Fixed, false, false).unwrap(),
            word: true,
        };
        assert_eq!(m.find(b"foobar foo", 0), Some((7, 10)));
        assert_eq!(m.find(b"foobar", 0), None);
        let ci = build(&["ÉTÉ".into()], Syntax::Fixed, true, false).unwrap();
        assert!(ci.is_match("un été chaud".as_bytes()));
    }
}
