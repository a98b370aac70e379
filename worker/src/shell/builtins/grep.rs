//! `grep`: basic, extended and fixed patterns ([`posix`](super::posix)), the common output
//! modes (`-n -c -l -L -o -q`, context lines) and recursive search.
//!
//! A file with a NUL byte in its first block is binary and only reported as matching, like GNU
//! grep. Recursive search goes through [`walk`]: symlinks below its operands are skipped, and the
//! deadline is checked per line.

use std::collections::VecDeque;
use std::io::BufRead;

use regex::bytes::Regex;

use super::args::{Opts, count_option, opts};
use super::io::{self, Source, Unit, each_unit, file_source, lines, read_input};
use super::posix::{Syntax, build};
use super::walk::{Event, Node, Order, Step, walk};
use crate::shell::exec::{Abort, Ctx};
use crate::shell::glob::Glob;
use crate::shell::path::{Access, FsError, Kind, Resolved};

/// Long options, mapped to the letters of [`SHORT`] (some letters exist only for a long name).
const LONGS: &str = "ignore-case=i invert-match=v line-number=n count=c recursive=r \
    dereference-recursive=R files-with-matches=l files-without-match=L extended-regexp=E \
    fixed-strings=F basic-regexp=G word-regexp=w line-regexp=x only-matching=o quiet=q silent=q \
    no-messages=s with-filename=H no-filename=h max-count=m after-context=A before-context=B \
    context=C regexp=e include=N exclude=X exclude-dir=Z text=a binary-files=U color=K colour=K";

const SHORT: &str = "ivnclLrREFGwxoqsHhaIPm:A:B:C:e:f:N:X:Z:U:K:";

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

/// What the command line asked for.
struct GrepOpts {
    matcher: Matcher,
    invert: bool,
    line_numbers: bool,
    count: bool,
    files_with: bool,
    files_without: bool,
    quiet: bool,
    only: bool,
    suppress: bool,
    recursive: bool,
    /// Lines are prefixed with the file's name.
    names: bool,
    max: Option<u64>,
    before: usize,
    after: usize,
    /// -A, -B or -C was given (even 0): groups are separated by `--`.
    context: bool,
    /// `--include`, `--exclude`, `--exclude-dir` of a recursive search.
    include: Vec<Glob>,
    exclude: Vec<Glob>,
    exclude_dir: Vec<Glob>,
}

impl GrepOpts {
    /// Whether a recursive search looks into a file of this name.
    fn wanted(&self, name: &str) -> bool {
        (self.include.is_empty() || self.include.iter().any(|p| p.matches(name)))
            && !self.exclude.iter().any(|p| p.matches(name))
    }

    /// A file or directory that cannot be searched: reported unless `-s`.
    fn failed(&self, ctx: &mut Ctx<'_, '_>, run: &mut Run, name: &str, e: &FsError) {
        if self.suppress {
            ctx.sh.record(e);
        } else {
            ctx.fail(name, e);
        }
        run.errors = true;
    }
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

/// The patterns: `-e` and `-f` ones, or else the first operand (one per line of it).
fn patterns(ctx: &mut Ctx<'_, '_>, o: &Opts, operands: &mut Vec<String>) -> Option<Vec<String>> {
    let mut patterns: Vec<String> = o.values('e').iter().map(|s| s.to_string()).collect();
    if let Some(f) = o.value('f') {
        let data = read_input(ctx, f)?;
        patterns.extend(
            lines(&data)
                .iter()
                .map(|l| String::from_utf8_lossy(l).into_owned()),
        );
    }
    if patterns.is_empty() {
        if operands.is_empty() {
            ctx.warn("usage: grep [OPTION]... PATTERNS [FILE]...");
            return None;
        }
        patterns = operands.remove(0).split('\n').map(String::from).collect();
    }
    Some(patterns)
}

/// Parses the command line: the options, and the operands to search.
fn options(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Option<(GrepOpts, Vec<String>)> {
    let o = opts(ctx, args, SHORT, LONGS)?;
    if o.has('P') {
        ctx.warn(
            "-P (Perl regex) is not supported; -E covers most of it (\\d, \\w, \\s, non-greedy *?)",
        );
        return None;
    }
    let mut operands = o.operands.clone();
    let patterns = patterns(ctx, &o, &mut operands)?;
    let syntax = match (o.has('F'), o.has('E') && !o.later('G', 'E')) {
        (true, _) => Syntax::Fixed,
        (false, true) => Syntax::Extended,
        (false, false) => Syntax::Basic,
    };
    let re = build(&patterns, syntax, o.has('i'), o.has('x'))
        .map_err(|e| ctx.warn(e))
        .ok()?;
    let context = |c: char, ctx: &mut Ctx<'_, '_>| {
        let c = if o.value(c).is_some() { c } else { 'C' };
        count_option(ctx, &o, c, "context length argument").map(|n| n.unwrap_or(0) as usize)
    };
    let (after, before) = (context('A', ctx).ok()?, context('B', ctx).ok()?);
    let max = count_option(ctx, &o, 'm', "max count").ok()?;
    let recursive = o.has('r') || o.has('R');
    let mut globs = |c: char| -> Option<Vec<Glob>> {
        let compiled = o
            .values(c)
            .into_iter()
            .map(|p| Glob::new(p, false).map_err(|e| (p, e)));
        compiled
            .collect::<Result<_, _>>()
            .map_err(|(p, e)| ctx.warn(format_args!("invalid pattern '{p}': {e}")))
            .ok()
    };
    let (include, exclude, exclude_dir) = (globs('N')?, globs('X')?, globs('Z')?);
    let g = GrepOpts {
        matcher: Matcher {
            re,
            word: o.has('w'),
        },
        invert: o.has('v'),
        line_numbers: o.has('n'),
        count: o.has('c'),
        files_with: o.has('l'),
        files_without: o.has('L'),
        quiet: o.has('q'),
        only: o.has('o'),
        suppress: o.has('s'),
        recursive,
        names: !o.has('h') && (o.has('H') || operands.len() > 1 || recursive),
        max,
        before,
        after,
        context: ['A', 'B', 'C'].iter().any(|&c| o.value(c).is_some()),
        include,
        exclude,
        exclude_dir,
    };
    Some((g, operands))
}

pub(super) fn grep(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some((g, operands)) = options(ctx, args) else {
        return Ok(2);
    };
    // Without operands: stdin, or the working directory (its files shown without `./`).
    let (operands, top) = match operands.is_empty() {
        true if g.recursive => (vec![".".to_string()], Some(String::new())),
        true => (vec!["-".to_string()], None),
        false => (operands, None),
    };
    let mut run = Run::default();
    for arg in &operands {
        if run.stop {
            break;
        }
        if arg == "-" {
            let mut src: Source = Box::new(ctx.stdin.reader());
            search(ctx, &mut src, "(standard input)", &g, &mut run)?;
            continue;
        }
        let found = ctx
            .resolve(arg, Access::Read, true)
            .and_then(|r| Ok((ctx.fs().stat(&r)?, r)));
        match found {
            Err(e) => g.failed(ctx, &mut run, arg, &e),
            Ok((m, _)) if m.is_dir() && !g.recursive => {
                if !g.suppress {
                    ctx.warn(format_args!("{arg}: Is a directory"));
                }
                run.errors = true;
            }
            Ok((m, r)) if m.is_dir() => {
                let shown = top.as_deref().unwrap_or(arg);
                match Node::at(ctx, r, shown) {
                    Ok(start) => search_tree(ctx, start, &g, &mut run)?,
                    Err(e) => g.failed(ctx, &mut run, arg, &e),
                }
            }
            Ok((_, r)) => search_file(ctx, &r, arg, &g, &mut run)?,
        }
    }
    // -L succeeds when it lists something (grep >= 3.5).
    let success = if g.files_without {
        run.listed
    } else {
        run.matched
    };
    Ok(match (run.errors && !(g.quiet && run.matched), success) {
        (true, _) => 2,
        (false, true) => 0,
        (false, false) => 1,
    })
}

/// Searches the files below a directory, skipping symlinks and what `--include`,
/// `--exclude` and `--exclude-dir` leave out.
fn search_tree(
    ctx: &mut Ctx<'_, '_>,
    start: Node,
    g: &GrepOpts,
    run: &mut Run,
) -> Result<(), Abort> {
    walk(ctx, start, Order::FilesFirst, |ctx, event| {
        let n = match event {
            Event::Enter(n) => n,
            Event::Leave(_) => return Ok(Step::Into),
            Event::Unlistable(n, e) => {
                g.failed(
                    ctx,
                    run,
                    if n.shown.is_empty() { "." } else { &n.shown },
                    &e,
                );
                return Ok(Step::Into);
            }
        };
        let name = super::files::base_name(&n.shown);
        match n.meta.kind {
            Kind::Dir if n.depth > 0 && g.exclude_dir.iter().any(|p| p.matches(name)) => {
                Ok(Step::Over)
            }
            Kind::Dir => Ok(Step::Into),
            Kind::File if g.wanted(name) => {
                search_file(ctx, &n.node, &n.shown, g, run)?;
                Ok(if run.stop { Step::Stop } else { Step::Over })
            }
            _ => Ok(Step::Over),
        }
    })?;
    Ok(())
}

fn search_file(
    ctx: &mut Ctx<'_, '_>,
    node: &Resolved,
    shown: &str,
    g: &GrepOpts,
    run: &mut Run,
) -> Result<(), Abort> {
    match ctx.fs().open_read(node) {
        Ok(f) => search(ctx, &mut file_source(f), shown, g, run),
        Err(e) => {
            g.failed(ctx, run, shown, &e);
            Ok(())
        }
    }
}

/// Searches one input, printing as the options ask.
fn search(
    ctx: &mut Ctx<'_, '_>,
    src: &mut Source,
    name: &str,
    g: &GrepOpts,
    run: &mut Run,
) -> Result<(), Abort> {
    let binary = src
        .fill_buf()
        .is_ok_and(|b| b[..b.len().min(32 << 10)].contains(&0));
    let mut s = Search {
        g,
        name,
        binary,
        count: 0,
        lineno: 0,
        before: VecDeque::new(),
        after_left: 0,
        last_printed: 0,
    };
    if g.max != Some(0) {
        let ended = each_unit(ctx, src, name, Unit::Line, |ctx, line| {
            s.line(ctx, run, line)
        })?;
        run.errors |= ended == io::Ended::Failed;
    }
    if !run.stop {
        s.finish(ctx, run);
    }
    Ok(())
}

/// The state of searching one input.
struct Search<'g> {
    g: &'g GrepOpts,
    name: &'g str,
    /// Only "binary file matches" is said of it.
    binary: bool,
    count: u64,
    lineno: u64,
    /// Lines kept for `-B`.
    before: VecDeque<(u64, Vec<u8>)>,
    /// Lines still to print for `-A`.
    after_left: usize,
    last_printed: u64,
}

impl Search<'_> {
    /// Only names, counts or the status are printed, not lines.
    fn listing(&self) -> bool {
        let g = self.g;
        g.quiet || g.files_with || g.files_without || g.count || self.binary
    }

    fn prefix(&self, lineno: u64, sep: char) -> String {
        let mut p = String::new();
        if self.g.names {
            p.push_str(self.name);
            p.push(sep);
        }
        if self.g.line_numbers {
            p.push_str(&format!("{lineno}{sep}"));
        }
        p
    }

    /// Takes one line; `false` to stop reading this input (and `run.stop` for all of them).
    fn line(&mut self, ctx: &mut Ctx<'_, '_>, run: &mut Run, line: &[u8]) -> bool {
        let g = self.g;
        self.lineno += 1;
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        let lineno = self.lineno;
        if (g.matcher.find(body, 0).is_some()) == g.invert {
            if self.after_left > 0 && !self.listing() {
                self.after_left -= 1;
                self.last_printed = lineno;
                run.stop = !ctx.out(&[self.prefix(lineno, '-').as_bytes(), body, b"\n"].concat());
                return !run.stop;
            }
            if g.before > 0 {
                self.before.push_back((lineno, body.to_vec()));
                if self.before.len() > g.before {
                    self.before.pop_front();
                }
            }
            return true;
        }
        self.count += 1;
        run.matched = true;
        if g.quiet {
            run.stop = true;
            return false;
        }
        let enough = g.max.is_some_and(|max| self.count >= max);
        if self.listing() {
            return !(g.files_with || g.files_without || self.binary || enough);
        }
        let mut text = Vec::new();
        let first_shown = self.before.front().map_or(lineno, |(n, _)| *n);
        if g.context && run.printed_any && first_shown > self.last_printed + 1 {
            text.extend_from_slice(b"--\n");
        }
        for (n, l) in std::mem::take(&mut self.before) {
            text.extend_from_slice(&[self.prefix(n, '-').as_bytes(), &l, b"\n"].concat());
        }
        if g.only {
            // Each non-empty match on a line of its own.
            let mut from = 0;
            while let Some((s, e)) = g.matcher.find(body, from) {
                if e > s {
                    text.extend_from_slice(
                        &[self.prefix(lineno, ':').as_bytes(), &body[s..e], b"\n"].concat(),
                    );
                }
                from = if e == s { e + 1 } else { e };
                if from > body.len() {
                    break;
                }
            }
        } else {
            text.extend_from_slice(&[self.prefix(lineno, ':').as_bytes(), body, b"\n"].concat());
        }
        run.printed_any = true;
        self.last_printed = lineno;
        self.after_left = g.after;
        run.stop = !ctx.out(&text);
        !run.stop && !enough
    }

    /// After the input: the count, the name for `-l`/`-L`, or "binary file matches".
    fn finish(&self, ctx: &mut Ctx<'_, '_>, run: &mut Run) {
        let (g, name, count) = (self.g, self.name, self.count);
        let text = if g.count {
            if g.names {
                format!("{name}:{count}\n")
            } else {
                format!("{count}\n")
            }
        } else if g.files_with && count > 0 {
            format!("{name}\n")
        } else if g.files_without && count == 0 {
            run.listed = true;
            format!("{name}\n")
        } else {
            if self.binary && count > 0 && !g.quiet && !g.files_with && !g.files_without {
                ctx.err(format!("grep: {name}: binary file matches\n").as_bytes());
            }
            return;
        };
        run.stop |= !ctx.outs(&text);
    }
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
