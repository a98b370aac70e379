//! `grep`, as GNU grep 3.x behaves: basic (default), extended (`-E`), fixed (`-F`) and `-P`
//! patterns ([`crate::posix`]), the output modes (`-n -c -l -L -o -q -h -H`, context lines with
//! `--` between groups, `-m`), recursive search (`-r`, `-R`, `--include`, `--exclude`,
//! `--exclude-dir`) in directory order, and GNU's statuses: 0 a line matched, 1 none did, 2
//! an error (unless `-q` matched).
//!
//! A file with a NUL byte in its first 32 KiB is binary: for it grep says only "binary file
//! matches" (on stderr, as GNU grep 3.8 does), unless `-a`.

use std::collections::VecDeque;
use std::fs;
use std::io::{self, Read, Write};
use std::path::Path;

use regex::bytes::Regex;

use crate::getopt::{Long, parse};
use crate::glob;
use crate::own::reason;
use crate::posix::{Syntax, build};

const SHORT: &str = "ivnclLrREFGPwxoqsHhaIyzUZm:A:B:C:e:f:#";

const LONG: &[Long] = &[
    ("ignore-case", 'i', false),
    ("no-ignore-case", '\u{1}', false),
    ("invert-match", 'v', false),
    ("line-number", 'n', false),
    ("count", 'c', false),
    ("files-with-matches", 'l', false),
    ("files-without-match", 'L', false),
    ("recursive", 'r', false),
    ("dereference-recursive", 'R', false),
    ("extended-regexp", 'E', false),
    ("fixed-strings", 'F', false),
    ("basic-regexp", 'G', false),
    ("perl-regexp", 'P', false),
    ("word-regexp", 'w', false),
    ("line-regexp", 'x', false),
    ("only-matching", 'o', false),
    ("quiet", 'q', false),
    ("silent", 'q', false),
    ("no-messages", 's', false),
    ("with-filename", 'H', false),
    ("no-filename", 'h', false),
    ("text", 'a', false),
    ("null-data", 'z', false),
    ("null", 'Z', false),
    ("max-count", 'm', true),
    ("after-context", 'A', true),
    ("before-context", 'B', true),
    ("context", 'C', true),
    ("regexp", 'e', true),
    ("file", 'f', true),
    ("include", '\u{2}', true),
    ("exclude", '\u{3}', true),
    ("exclude-dir", '\u{4}', true),
    ("color", '\u{5}', true),
    ("colour", '\u{5}', true),
    ("binary-files", '\u{6}', true),
    ("label", '\u{7}', true),
    ("help", '\u{8}', false),
];

/// What the command line asked for.
struct Grep {
    re: Regex,
    /// `-w`: a match counts only between non-word characters.
    word: bool,
    invert: bool,
    line_numbers: bool,
    count: bool,
    files_with: bool,
    files_without: bool,
    quiet: bool,
    only: bool,
    suppress: bool,
    /// `-R`: links below the operands are followed too.
    follow: bool,
    names: bool,
    /// `-Z`: a NUL after file names instead of `:`/newline.
    null_names: bool,
    text: bool,
    max: Option<u64>,
    before: usize,
    after: usize,
    /// -A, -B or -C was given: groups are separated by `--`.
    context: bool,
    include: Vec<String>,
    exclude: Vec<String>,
    exclude_dir: Vec<String>,
    /// `-z`: records end with NUL instead of a newline.
    eol: u8,
    label: String,
}

/// Per-run state.
#[derive(Default)]
struct Run {
    out: Vec<u8>,
    printed_any: bool,
    matched: bool,
    listed: bool,
    errors: bool,
    stop: bool,
}

impl Run {
    /// Flushes what is buffered when it grows (output is written in large pieces).
    fn flush(&mut self, force: bool) {
        if force || self.out.len() > 64 << 10 {
            if io::stdout().write_all(&self.out).is_err() {
                self.stop = true;
            }
            self.out.clear();
        }
    }
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

fn usage_error(message: &str) -> i32 {
    eprintln!(
        "grep: {message}\nUsage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information."
    );
    2
}

/// A context or count value: a non-negative number.
fn number(value: &str, what: &str) -> Result<u64, String> {
    value
        .trim()
        .parse::<u64>()
        .map_err(|_| format!("{value}: invalid {what} argument"))
}

pub fn main(args: super::Args) -> i32 {
    let args: Vec<String> = args
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let o = match parse(&args, SHORT, LONG) {
        Ok(o) => o,
        Err(e) => return usage_error(&e),
    };
    if o.has('\u{8}') {
        println!(
            "Usage: grep [OPTION]... PATTERNS [FILE]...\nSearch for PATTERNS in each FILE.\n\
             Options: -E -F -G -P -e PAT -f FILE -i -w -x -v -c -l -L -o -q -s -n -h -H -r -R\n\
             -m NUM -A NUM -B NUM -C NUM -a -z -Z --include=GLOB --exclude=GLOB \
             --exclude-dir=GLOB --color=never --label=LABEL\n\
             Exit status is 0 if any line is selected, 1 otherwise; 2 if an error occurred \
             (unless -q selected a line)."
        );
        return 0;
    }
    let mut operands = o.operands.clone();
    let mut patterns: Vec<String> = o.values('e').iter().map(|s| s.to_string()).collect();
    for f in o.values('f') {
        let data = if f == "-" {
            let mut d = Vec::new();
            io::stdin().read_to_end(&mut d).map(|_| d)
        } else {
            fs::read(f)
        };
        match data {
            Ok(d) => {
                let text = String::from_utf8_lossy(&d).into_owned();
                let text = text.strip_suffix('\n').unwrap_or(&text);
                if !d.is_empty() {
                    patterns.extend(text.split('\n').map(String::from));
                }
            }
            Err(e) => {
                eprintln!("grep: {f}: {}", reason(&e));
                return 2;
            }
        }
    }
    if !o.has('e') && !o.has('f') {
        if operands.is_empty() {
            return usage_error("no pattern given");
        }
        patterns = operands.remove(0).split('\n').map(String::from).collect();
    }
    // The last of -E, -F, -G, -P wins.
    let syntax = o
        .opts
        .iter()
        .rev()
        .find_map(|(c, _)| match c {
            'E' => Some(Syntax::Extended),
            'F' => Some(Syntax::Fixed),
            'G' => Some(Syntax::Basic),
            'P' => Some(Syntax::Perl),
            _ => None,
        })
        .unwrap_or(Syntax::Basic);
    let ignore_case = o
        .opts
        .iter()
        .rev()
        .find_map(|(c, _)| match c {
            'i' | 'y' => Some(true),
            '\u{1}' => Some(false),
            _ => None,
        })
        .unwrap_or(false);
    // -f of an empty file: no pattern, nothing matches.
    let re = if patterns.is_empty() {
        Regex::new("[^\\x00-\\x{10FFFF}]").map_err(|e| e.to_string())
    } else {
        build(&patterns, syntax, ignore_case, o.has('x'), false)
    };
    let re = match re {
        Ok(re) => re,
        Err(e) => {
            eprintln!("grep: {e}");
            return 2;
        }
    };
    let context = |c: char| -> Result<Option<u64>, String> {
        o.opts
            .iter()
            .rev()
            .find(|(x, _)| *x == c || *x == 'C' || *x == '#')
            .and_then(|(_, v)| v.as_deref())
            .map(|v| number(v, "context length"))
            .transpose()
    };
    let (after, before) = match (context('A'), context('B')) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("grep: {e}");
            return 2;
        }
    };
    let max = match o.value('m').map(|v| {
        // GNU grep takes a negative -m as "no limit".
        if v.trim().starts_with('-') {
            Ok(u64::MAX)
        } else {
            number(v, "max count")
        }
    }) {
        None => None,
        Some(Ok(m)) => Some(m),
        Some(Err(e)) => {
            eprintln!("grep: {e}");
            return 2;
        }
    };
    if let Some(b) = o.value('\u{6}')
        && !matches!(b, "binary" | "text" | "without-match")
    {
        eprintln!("grep: unknown binary-files type");
        return 2;
    }
    if let Some(c) = o.value('\u{5}')
        && !matches!(
            c,
            "never" | "auto" | "always" | "no" | "none" | "tty" | "if-tty"
        )
    {
        eprintln!("grep: invalid argument '{c}' for '--color'");
        return 2;
    }
    let recursive = o.has('r') || o.has('R');
    let g = Grep {
        re,
        word: o.has('w') && !o.has('x'),
        invert: o.has('v'),
        line_numbers: o.has('n'),
        count: o.has('c'),
        files_with: o.has('l'),
        files_without: o.has('L'),
        quiet: o.has('q'),
        only: o.has('o'),
        suppress: o.has('s'),
        follow: o.has('R'),
        names: o
            .opts
            .iter()
            .rev()
            .find_map(|(c, _)| match c {
                'H' => Some(true),
                'h' => Some(false),
                _ => None,
            })
            .unwrap_or(operands.len() > 1 || recursive),
        null_names: o.has('Z'),
        text: o.has('a') || o.value('\u{6}') == Some("text"),
        max,
        before: before.unwrap_or(0) as usize,
        after: after.unwrap_or(0) as usize,
        context: before.is_some() || after.is_some(),
        include: o.values('\u{2}').iter().map(|s| s.to_string()).collect(),
        exclude: o.values('\u{3}').iter().map(|s| s.to_string()).collect(),
        exclude_dir: o.values('\u{4}').iter().map(|s| s.to_string()).collect(),
        eol: if o.has('z') { 0 } else { b'\n' },
        label: o.value('\u{7}').unwrap_or("(standard input)").to_owned(),
    };
    // Without operands: stdin, or (recursive) the working directory, its files shown without
    // `./`.
    let (operands, implicit) = match operands.is_empty() {
        true if recursive => (vec![".".to_string()], true),
        true => (vec!["-".to_string()], false),
        false => (operands, false),
    };
    let mut run = Run::default();
    for arg in &operands {
        if run.stop {
            break;
        }
        if arg == "-" {
            let mut data = Vec::new();
            match io::stdin().read_to_end(&mut data) {
                Ok(_) => search(&data, &g.label, &g, &mut run),
                Err(e) => failed(&g, &mut run, "(standard input)", &e),
            }
            continue;
        }
        match fs::metadata(arg) {
            Err(e) => failed(&g, &mut run, arg, &e),
            Ok(m) if m.is_dir() && !recursive => {
                if !g.suppress {
                    eprintln!("grep: {arg}: Is a directory");
                }
                run.errors = true;
            }
            Ok(m) if m.is_dir() => {
                let shown = if implicit { "" } else { arg.as_str() };
                tree(Path::new(arg), shown, &g, &mut run);
            }
            Ok(_) if recursive && !g.wanted(base(arg), true) => {}
            Ok(_) => file(Path::new(arg), arg, &g, &mut run),
        }
    }
    run.flush(true);
    let success = if g.files_without {
        run.listed
    } else {
        run.matched
    };
    match (run.errors && !(g.quiet && run.matched), success) {
        (true, _) => 2,
        (false, true) => 0,
        (false, false) => 1,
    }
}

/// The last component of a path as written.
fn base(path: &str) -> &str {
    let trimmed = path.trim_end_matches('/');
    trimmed.rsplit('/').next().unwrap_or(trimmed)
}

/// A file or directory that cannot be searched: reported unless `-s`.
fn failed(g: &Grep, run: &mut Run, name: &str, e: &io::Error) {
    if !g.suppress {
        run.flush(true);
        eprintln!("grep: {name}: {}", reason(e));
    }
    run.errors = true;
}

impl Grep {
    /// Whether a recursive search looks into a file of this name (`operand`: named on the
    /// command line, where GNU applies only `--exclude`... and `--include` too).
    fn wanted(&self, name: &str, _operand: bool) -> bool {
        (self.include.is_empty()
            || self
                .include
                .iter()
                .any(|p| glob::Glob::new(p, false).matches(name)))
            && !self
                .exclude
                .iter()
                .any(|p| glob::Glob::new(p, false).matches(name))
    }

    /// The next match in `line` at or after `from`, honouring `-w`.
    fn find(&self, line: &[u8], from: usize) -> Option<(usize, usize)> {
        let mut pos = from;
        while pos <= line.len() {
            let m = self.re.find_at(line, pos)?;
            if !self.word {
                return Some((m.start(), m.end()));
            }
            let before = m.start() == 0 || !is_word(line[m.start() - 1]);
            let after = m.end() == line.len() || !is_word(line[m.end()]);
            if before && after {
                return Some((m.start(), m.end()));
            }
            // GNU retries a shorter match at the same start, then later starts.
            if let Some(shorter) = (m.start()..m.end()).rev().find(|&end| {
                (end == line.len() || !is_word(line[end]))
                    && before
                    && self
                        .re
                        .find_at(&line[..end], m.start())
                        .is_some_and(|s| s.start() == m.start() && s.end() == end)
            }) {
                return Some((m.start(), shorter));
            }
            pos = m.start() + 1;
        }
        None
    }
}

/// Searches the files below `dir` (shown as `shown`), in directory order as GNU grep does,
/// skipping links (unless `-R`) and what `--include`, `--exclude`, `--exclude-dir` leave out.
fn tree(dir: &Path, shown: &str, g: &Grep, run: &mut Run) {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            let name = if shown.is_empty() { "." } else { shown };
            return failed(g, run, name, &e);
        }
    };
    for entry in entries {
        if run.stop {
            return;
        }
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                failed(g, run, if shown.is_empty() { "." } else { shown }, &e);
                continue;
            }
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let child = match shown {
            "" => name.clone(),
            s if s.ends_with('/') => format!("{s}{name}"),
            s => format!("{s}/{name}"),
        };
        let Ok(mut kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() {
            if !g.follow {
                continue;
            }
            match fs::metadata(&path) {
                Ok(m) => kind = m.file_type(),
                Err(e) => {
                    failed(g, run, &child, &e);
                    continue;
                }
            }
        }
        if kind.is_dir() {
            if !g
                .exclude_dir
                .iter()
                .any(|p| glob::Glob::new(p, false).matches(&name))
            {
                tree(&path, &child, g, run);
            }
        } else if kind.is_file() && g.wanted(&name, false) {
            file(&path, &child, g, run);
        }
    }
}

fn file(path: &Path, shown: &str, g: &Grep, run: &mut Run) {
    match fs::read(path) {
        Ok(data) => search(&data, shown, g, run),
        Err(e) => failed(g, run, shown, &e),
    }
}

/// Searches one input, printing as the options ask.
fn search(data: &[u8], name: &str, g: &Grep, run: &mut Run) {
    let binary = !g.text && data[..data.len().min(32 << 10)].contains(&0) && g.eol != 0;
    let listing = g.quiet || g.files_with || g.files_without || g.count;
    let mut count = 0u64;
    let mut before: VecDeque<(u64, &[u8])> = VecDeque::new();
    let mut after_left = 0usize;
    let mut last_printed = 0u64;
    let mut lineno = 0u64;
    let prefix = |run: &mut Run, lineno: u64, mark: u8| {
        if g.names {
            run.out.extend_from_slice(name.as_bytes());
            if g.null_names {
                run.out.push(0);
            } else {
                run.out.push(mark);
            }
        }
        if g.line_numbers {
            run.out.extend_from_slice(lineno.to_string().as_bytes());
            run.out.push(mark);
        }
    };
    let body = data.strip_suffix(&[g.eol]).unwrap_or(data);
    let records: Box<dyn Iterator<Item = &[u8]>> = if data.is_empty() {
        Box::new(std::iter::empty())
    } else {
        Box::new(body.split(|&b| b == g.eol))
    };
    for line in records {
        if g.max.is_some_and(|m| count >= m) {
            // After the last match -m allows, GNU still prints its trailing context.
            if after_left > 0 && !listing && !binary {
                lineno += 1;
                if (g.find(line, 0).is_some()) == g.invert {
                    after_left -= 1;
                    last_printed = lineno;
                    prefix(run, lineno, b'-');
                    run.out.extend_from_slice(line);
                    run.out.push(g.eol);
                    continue;
                }
            }
            break;
        }
        lineno += 1;
        let hit = g.find(line, 0).is_some() != g.invert;
        if !hit {
            if listing || binary {
                continue;
            }
            if after_left > 0 {
                after_left -= 1;
                last_printed = lineno;
                prefix(run, lineno, b'-');
                run.out.extend_from_slice(line);
                run.out.push(g.eol);
            } else if g.before > 0 {
                before.push_back((lineno, line));
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
            return;
        }
        if g.files_with || g.files_without {
            break;
        }
        if listing || binary {
            continue;
        }
        if g.context {
            let first = before.front().map_or(lineno, |(n, _)| *n);
            if run.printed_any && (last_printed == 0 || last_printed + 1 < first) {
                run.out.extend_from_slice(b"--\n");
            }
        }
        for (n, l) in before.drain(..) {
            prefix(run, n, b'-');
            run.out.extend_from_slice(l);
            run.out.push(g.eol);
        }
        if g.only {
            if !g.invert {
                let mut at = 0;
                while let Some((s, e)) = g.find(line, at) {
                    if e > s {
                        prefix(run, lineno, b':');
                        run.out.extend_from_slice(&line[s..e]);
                        run.out.push(g.eol);
                    }
                    at = if e > s { e } else { e + 1 };
                    if at > line.len() {
                        break;
                    }
                }
            }
        } else {
            prefix(run, lineno, b':');
            run.out.extend_from_slice(line);
            run.out.push(g.eol);
        }
        run.printed_any = true;
        last_printed = lineno;
        after_left = g.after;
        run.flush(false);
        if run.stop {
            return;
        }
    }
    if g.count {
        if g.names {
            run.out.extend_from_slice(name.as_bytes());
            run.out
                .extend_from_slice(if g.null_names { b"\0" } else { b":" });
        }
        run.out.extend_from_slice(format!("{count}\n").as_bytes());
    }
    if g.files_with && count > 0 {
        run.out.extend_from_slice(name.as_bytes());
        run.out.push(if g.null_names { 0 } else { b'\n' });
    }
    if g.files_without && count == 0 {
        run.listed = true;
        run.out.extend_from_slice(name.as_bytes());
        run.out.push(if g.null_names { 0 } else { b'\n' });
    }
    if binary && count > 0 && !listing {
        run.flush(true);
        eprintln!("grep: {name}: binary file matches");
    }
    run.flush(false);
}
