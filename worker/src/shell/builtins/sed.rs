//! `sed`: the one-liner subset agents use. Commands `s/RE/REPL/FLAGS` (flags `g`, `p`, `i`, N),
//! `p`, `d`, `q`, `=`, `y/abc/xyz/`, `a TEXT`, `i TEXT`, `c TEXT`, each with an optional address
//! (`N`, `$`, `/RE/`) or range (`A,B`) and `!`; options `-n`, `-E`/`-r`, `-e`, `-i` (in place,
//! through the confined filesystem). Blocks (`{...}`), hold space and branches are refused with
//! a pointer to the interpreters.

use regex::bytes::Regex;

use super::grep::{Syntax, build};
use super::{lines, opts, read_input};
use crate::shell::exec::{Abort, Ctx};
use crate::shell::lexer::USE_INTERPRETER;
use crate::shell::path::{Access, FsError};

#[derive(Debug, Clone)]
enum Addr {
    Line(u64),
    Last,
    Re(Regex),
}

#[derive(Debug, Clone)]
enum Cmd {
    Subst {
        re: Regex,
        repl: Vec<Piece>,
        global: bool,
        nth: usize,
        print: bool,
    },
    Print,
    Delete,
    Quit(i32),
    LineNumber,
    Translate(Vec<(char, char)>),
    Append(String),
    Insert(String),
    Change(String),
}

/// A piece of a replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(Vec<u8>),
    /// `&` (0) or `\1`..`\9`.
    Group(usize),
}

#[derive(Debug, Clone)]
struct Command {
    from: Option<Addr>,
    to: Option<Addr>,
    negate: bool,
    cmd: Cmd,
    /// Inside an `A,B` range.
    active: bool,
}

struct Parser<'s> {
    c: Vec<char>,
    i: usize,
    syntax: Syntax,
    src: &'s str,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.c.get(self.i).copied()
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.i += 1;
        }
    }

    /// Text up to an unescaped `delim`; `\delim` becomes `delim`, other escapes are kept.
    fn delimited(&mut self, delim: char) -> Result<String, String> {
        let mut out = String::new();
        loop {
            match self.peek() {
                None => return Err(format!("unterminated `s' command in '{}'", self.src)),
                Some('\\') => {
                    self.i += 1;
                    match self.peek() {
                        Some(c) if c == delim => out.push(c),
                        Some('n') if delim != 'n' => out.push_str("\\n"),
                        Some(c) => {
                            out.push('\\');
                            out.push(c);
                        }
                        None => return Err("trailing backslash".into()),
                    }
                    self.i += 1;
                }
                Some(c) if c == delim => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(c) => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
    }

    fn regex(
        &mut self,
        pattern: &str,
        ignore_case: bool,
        last: &mut Option<Regex>,
    ) -> Result<Regex, String> {
        if pattern.is_empty() {
            return last
                .clone()
                .ok_or_else(|| "no previous regular expression".to_string());
        }
        let re = build(&[pattern.to_string()], self.syntax, ignore_case, false)?;
        *last = Some(re.clone());
        Ok(re)
    }

    fn address(&mut self, last: &mut Option<Regex>) -> Result<Option<Addr>, String> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                let start = self.i;
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.i += 1;
                }
                let n: String = self.c[start..self.i].iter().collect();
                Ok(Some(Addr::Line(
                    n.parse().map_err(|_| "invalid line number")?,
                )))
            }
            Some('$') => {
                self.i += 1;
                Ok(Some(Addr::Last))
            }
            Some(d @ ('/' | '\\')) => {
                self.i += 1;
                let delim = if d == '\\' {
                    let d = self.peek().ok_or("unexpected end of address")?;
                    self.i += 1;
                    d
                } else {
                    '/'
                };
                let p = self.delimited(delim)?;
                let ci = self.peek() == Some('I');
                if ci {
                    self.i += 1;
                }
                Ok(Some(Addr::Re(self.regex(&p, ci, last)?)))
            }
            _ => Ok(None),
        }
    }

    /// The rest of an `a`/`i`/`c` command: `a text`, `a\` newline text (GNU one-liner forms).
    fn text_arg(&mut self) -> String {
        if self.peek() == Some('\\') {
            self.i += 1;
            if self.peek() == Some('\n') {
                self.i += 1;
            }
        }
        self.skip_blanks();
        let start = self.i;
        while self.peek().is_some_and(|c| c != '\n') {
            self.i += 1;
        }
        self.c[start..self.i].iter().collect()
    }

    fn parse(&mut self) -> Result<Vec<Command>, String> {
        let mut cmds = Vec::new();
        let mut last_re = None;
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\n' | ';')) {
                self.i += 1;
            }
            if self.peek().is_none() {
                return Ok(cmds);
            }
            let from = self.address(&mut last_re)?;
            let to = if from.is_some() && self.peek() == Some(',') {
                self.i += 1;
                Some(self.address(&mut last_re)?.ok_or("unexpected `,'")?)
            } else {
                None
            };
            self.skip_blanks();
            let negate = self.peek() == Some('!');
            if negate {
                self.i += 1;
                self.skip_blanks();
            }
            let Some(letter) = self.peek() else {
                return Err("missing command".into());
            };
            self.i += 1;
            let cmd = match letter {
                's' => {
                    let delim = self.peek().ok_or("unterminated `s' command")?;
                    if delim == '\n' || delim == '\\' {
                        return Err("unterminated `s' command".into());
                    }
                    self.i += 1;
                    let pattern = self.delimited(delim)?;
                    let repl = self.delimited(delim)?;
                    let (mut global, mut print, mut ci, mut nth) = (false, false, false, 1usize);
                    while let Some(f) = self.peek() {
                        match f {
                            'g' => global = true,
                            'p' => print = true,
                            'i' | 'I' => ci = true,
                            '0'..='9' => {
                                let start = self.i;
                                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                                    self.i += 1;
                                }
                                let n: String = self.c[start..self.i].iter().collect();
                                nth = n
                                    .parse()
                                    .ok()
                                    .filter(|&n| n > 0)
                                    .ok_or("number option to `s' command may not be zero")?;
                                continue;
                            }
                            'w' | 'e' | 'm' | 'M' => {
                                return Err(format!("the `{f}' flag of `s' is not supported"));
                            }
                            _ => break,
                        }
                        self.i += 1;
                    }
                    Cmd::Subst {
                        re: self.regex(&pattern, ci, &mut last_re)?,
                        repl: replacement(&repl),
                        global,
                        nth,
                        print,
                    }
                }
                'y' => {
                    let delim = self.peek().ok_or("unterminated `y' command")?;
                    self.i += 1;
                    let a: Vec<char> = self.delimited(delim)?.chars().collect();
                    let b: Vec<char> = self.delimited(delim)?.chars().collect();
                    if a.len() != b.len() {
                        return Err("strings for `y' command are different lengths".into());
                    }
                    Cmd::Translate(a.into_iter().zip(b).collect())
                }
                'p' => Cmd::Print,
                'd' => Cmd::Delete,
                '=' => Cmd::LineNumber,
                'q' => {
                    self.skip_blanks();
                    let start = self.i;
                    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        self.i += 1;
                    }
                    let code: String = self.c[start..self.i].iter().collect();
                    Cmd::Quit(code.parse().unwrap_or(0))
                }
                'a' => Cmd::Append(self.text_arg()),
                'i' => Cmd::Insert(self.text_arg()),
                'c' => Cmd::Change(self.text_arg()),
                '{' | '}' | 'h' | 'H' | 'g' | 'G' | 'x' | 'n' | 'N' | 'D' | 'P' | 'b' | 't'
                | 'T' | ':' => {
                    return Err(format!(
                        "the `{letter}' command is not supported here; {USE_INTERPRETER}"
                    ));
                }
                other => return Err(format!("unknown command: `{other}'")),
            };
            cmds.push(Command {
                from,
                to,
                negate,
                cmd,
                active: false,
            });
            self.skip_blanks();
            match self.peek() {
                None | Some(';' | '\n' | '}') => {}
                Some(c) => return Err(format!("extra characters after command (`{c}')")),
            }
        }
    }
}

/// Parses a replacement: `&`, `\1`-`\9`, `\n`, `\t`, `\&`, `\\`.
fn replacement(s: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut text = Vec::new();
    let mut chars = s.chars();
    let flush = |text: &mut Vec<u8>, out: &mut Vec<Piece>| {
        if !text.is_empty() {
            out.push(Piece::Text(std::mem::take(text)));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '&' => {
                flush(&mut text, &mut out);
                out.push(Piece::Group(0));
            }
            '\\' => match chars.next() {
                Some(d @ '0'..='9') => {
                    flush(&mut text, &mut out);
                    out.push(Piece::Group(d as usize - '0' as usize));
                }
                Some('n') => text.push(b'\n'),
                Some('t') => text.push(b'\t'),
                Some(o) => {
                    let mut buf = [0u8; 4];
                    text.extend_from_slice(o.encode_utf8(&mut buf).as_bytes());
                }
                None => text.push(b'\\'),
            },
            other => {
                let mut buf = [0u8; 4];
                text.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    flush(&mut text, &mut out);
    out
}

/// Parses a whole sed script (several `-e` parts are joined with newlines).
///
/// # Errors
/// A message saying what is wrong or unsupported.
fn parse_script(src: &str, syntax: Syntax) -> Result<Vec<Command>, String> {
    Parser {
        c: src.chars().collect(),
        i: 0,
        syntax,
        src,
    }
    .parse()
}

fn addr_matches(a: &Addr, lineno: u64, last: bool, line: &[u8]) -> bool {
    match a {
        Addr::Line(n) => lineno == *n,
        Addr::Last => last,
        Addr::Re(re) => re.is_match(line),
    }
}

impl Command {
    fn selects(&mut self, lineno: u64, last: bool, line: &[u8]) -> bool {
        let hit = match (&self.from, &self.to) {
            (None, _) => true,
            (Some(a), None) => addr_matches(a, lineno, last, line),
            (Some(a), Some(b)) => {
                if self.active {
                    let end = match b {
                        Addr::Line(n) => lineno >= *n,
                        other => addr_matches(other, lineno, last, line),
                    };
                    if end {
                        self.active = false;
                    }
                    true
                } else if addr_matches(a, lineno, last, line) {
                    // A line-number end at or before the start ends the range at once.
                    self.active = !matches!(b, Addr::Line(n) if *n <= lineno)
                        && !(matches!(b, Addr::Last) && last);
                    true
                } else {
                    false
                }
            }
        };
        hit != self.negate
    }
}

/// Most bytes sed produces for one call (and one pattern space): `s/x/&&&&&&&&/g` over a big
/// input must not exhaust memory.
const MAX_OUTPUT: usize = 64 << 20;

fn substitute(
    re: &Regex,
    repl: &[Piece],
    global: bool,
    nth: usize,
    line: &[u8],
) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut last = 0;
    let mut seen = 0;
    let mut changed = false;
    for caps in re.captures_iter(line) {
        let Some(m) = caps.get(0) else { continue };
        seen += 1;
        if seen < nth {
            continue;
        }
        out.extend_from_slice(&line[last..m.start()]);
        for p in repl {
            match p {
                Piece::Text(t) => out.extend_from_slice(t),
                Piece::Group(g) => {
                    if let Some(g) = caps.get(*g) {
                        out.extend_from_slice(g.as_bytes());
                    }
                }
            }
        }
        last = m.end();
        changed = true;
        if !global || out.len() > MAX_OUTPUT {
            break;
        }
    }
    if !changed {
        return None;
    }
    out.extend_from_slice(&line[last..]);
    Some(out)
}

/// What running the script over some input produced.
struct Output {
    text: Vec<u8>,
    quit: Option<i32>,
    /// Stopped at [`MAX_OUTPUT`].
    too_large: bool,
}

/// Runs the commands over `data`, returning what sed prints.
fn run_script(
    ctx: &Ctx<'_, '_>,
    cmds: &mut [Command],
    data: &[u8],
    quiet: bool,
) -> Result<Output, Abort> {
    let all = lines(data);
    let ends_with_newline = data.ends_with(b"\n");
    let mut out = Vec::new();
    for (idx, line) in all.iter().enumerate() {
        if idx % 1024 == 0 {
            ctx.check()?;
        }
        let lineno = idx as u64 + 1;
        let last = idx + 1 == all.len();
        let newline: &[u8] = if last && !ends_with_newline {
            b""
        } else {
            b"\n"
        };
        let mut space = line.to_vec();
        let mut deleted = false;
        let mut appended: Vec<u8> = Vec::new();
        let mut quit = None;
        for c in cmds.iter_mut() {
            if !c.selects(lineno, last, &space) {
                continue;
            }
            match &c.cmd {
                Cmd::Subst {
                    re,
                    repl,
                    global,
                    nth,
                    print,
                } => {
                    if let Some(new) = substitute(re, repl, *global, *nth, &space) {
                        space = new;
                        if *print {
                            out.extend_from_slice(&space);
                            out.push(b'\n');
                        }
                    }
                }
                Cmd::Print => {
                    out.extend_from_slice(&space);
                    out.push(b'\n');
                }
                Cmd::Delete => {
                    deleted = true;
                    break;
                }
                Cmd::Quit(code) => {
                    quit = Some(*code);
                    break;
                }
                Cmd::LineNumber => out.extend_from_slice(format!("{lineno}\n").as_bytes()),
                Cmd::Translate(map) => {
                    let text = String::from_utf8_lossy(&space);
                    space = text
                        .chars()
                        .map(|ch| map.iter().find(|(a, _)| *a == ch).map_or(ch, |(_, b)| *b))
                        .collect::<String>()
                        .into_bytes();
                }
                Cmd::Append(t) => {
                    appended.extend_from_slice(t.as_bytes());
                    appended.push(b'\n');
                }
                Cmd::Insert(t) => {
                    out.extend_from_slice(t.as_bytes());
                    out.push(b'\n');
                }
                Cmd::Change(t) => {
                    if !c.active {
                        out.extend_from_slice(t.as_bytes());
                        out.push(b'\n');
                    }
                    deleted = true;
                    break;
                }
            }
        }
        if !deleted && !quiet {
            out.extend_from_slice(&space);
            out.extend_from_slice(newline);
        }
        out.extend_from_slice(&appended);
        if let Some(code) = quit {
            return Ok(Output {
                text: out,
                quit: Some(code),
                too_large: false,
            });
        }
        if out.len() > MAX_OUTPUT {
            return Ok(Output {
                text: out,
                quit: None,
                too_large: true,
            });
        }
    }
    Ok(Output {
        text: out,
        quit: None,
        too_large: false,
    })
}

pub(super) fn sed(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let longs = [
        ("quiet", 'n'),
        ("silent", 'n'),
        ("regexp-extended", 'E'),
        ("expression", 'e'),
        ("in-place", 'i'),
        ("file", 'f'),
    ];
    // `-i.bak` would take `.bak` as a value: accept and ignore a suffix (no backups are made).
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            if a.starts_with("-i") && a.len() > 2 && !a.starts_with("-i-") {
                "-i".to_string()
            } else {
                a.clone()
            }
        })
        .collect();
    let Some(o) = opts(ctx, &args, "nErie:f:s", &longs) else {
        return Ok(1);
    };
    let mut operands = o.operands.clone();
    let mut script: Vec<String> = o.values('e').iter().map(|s| s.to_string()).collect();
    if let Some(f) = o.value('f') {
        let f = f.to_string();
        let Some(data) = read_input(ctx, &f) else {
            return Ok(1);
        };
        script.push(String::from_utf8_lossy(&data).into_owned());
    }
    if script.is_empty() {
        if operands.is_empty() {
            ctx.warn("usage: sed [-n] [-E] [-i] SCRIPT [FILE...]");
            return Ok(1);
        }
        script.push(operands.remove(0));
    }
    let syntax = if o.has('E') || o.has('r') {
        Syntax::Extended
    } else {
        Syntax::Basic
    };
    let mut cmds = match parse_script(&script.join("\n"), syntax) {
        Ok(c) => c,
        Err(e) => {
            ctx.warn(format_args!("-e expression #1: {e}"));
            return Ok(1);
        }
    };
    let quiet = o.has('n');
    if o.has('i') {
        if operands.is_empty() {
            ctx.warn("no input files");
            return Ok(1);
        }
        let mut status = 0;
        for f in &operands {
            ctx.check()?;
            // Check writability first, so a read-only file is refused before anything happens.
            let target = match ctx.resolve(f, Access::Write, true) {
                Ok(t) => t,
                Err(e) => {
                    ctx.fail(format_args!("couldn't edit {f}"), &e);
                    status = 4;
                    continue;
                }
            };
            let Some(data) = read_input(ctx, f) else {
                status = 2;
                continue;
            };
            for c in cmds.iter_mut() {
                c.active = false;
            }
            let result = run_script(ctx, &mut cmds, &data, quiet)?;
            if result.too_large {
                ctx.warn(format_args!(
                    "couldn't edit {f}: output over {} MiB",
                    MAX_OUTPUT >> 20
                ));
                status = 4;
                continue;
            }
            ctx.sh.io.written += result.text.len() as u64;
            let written = ctx.fs().open_write(&target, false).and_then(|mut file| {
                std::io::Write::write_all(&mut file, &result.text).map_err(FsError::Io)
            });
            if let Err(e) = written {
                ctx.fail(format_args!("couldn't edit {f}"), &e);
                status = 4;
            }
            if let Some(code) = result.quit {
                return Ok(code);
            }
        }
        return Ok(status);
    }
    let mut data = Vec::new();
    let inputs = if operands.is_empty() {
        vec!["-".to_string()]
    } else {
        operands
    };
    let mut status = 0;
    for f in &inputs {
        match read_input(ctx, f) {
            Some(d) => {
                data.extend_from_slice(&d);
                if !data.is_empty() && !data.ends_with(b"\n") && f != inputs.last().unwrap_or(f) {
                    data.push(b'\n');
                }
            }
            None => status = 2,
        }
    }
    let result = run_script(ctx, &mut cmds, &data, quiet)?;
    ctx.out(&result.text);
    if result.too_large {
        ctx.warn(format_args!(
            "output over {} MiB: stopped",
            MAX_OUTPUT >> 20
        ));
        return Ok(4);
    }
    Ok(result.quit.unwrap_or(status))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::shell::tests::Sandbox;

    #[test]
    fn sed_command_lines() {
        let mut s = Sandbox::new();
        s.write("f", "one\ntwo\nthree\nfour\n");
        assert_eq!(s.ok("sed s/o/0/ f"), "0ne\ntw0\nthree\nf0ur\n");
        assert_eq!(s.ok("echo foo | sed 's/o/0/g'"), "f00\n");
        assert_eq!(s.ok("sed -n '2,3p' f"), "two\nthree\n");
        assert_eq!(s.ok("sed -n '/^t/p' f"), "two\nthree\n");
        assert_eq!(s.ok("sed '1d;$d' f"), "two\nthree\n");
        assert_eq!(s.ok("sed 2q f"), "one\ntwo\n");
        assert_eq!(s.ok("sed -n '$=' f"), "4\n");
        assert_eq!(s.ok("sed -E 's/(o+)/[\\1]/' f | head -n 1"), "[o]ne\n");
        assert_eq!(
            s.ok("sed -e 's/one/1/' -e 's/two/2/' f | head -n 2"),
            "1\n2\n"
        );
        assert_eq!(s.ok("sed 's/O/x/I' f | head -n 1"), "xne\n");
        assert_eq!(s.ok("sed -n 's/two/2/p' f"), "2\n");
        assert_eq!(s.ok("sed 'y/otw/OTW/' f | head -n 2"), "One\nTWO\n");
        assert_eq!(s.ok("sed '1i header' f | head -n 2"), "header\none\n");
        assert_eq!(s.ok("sed '$a footer' f | tail -n 2"), "four\nfooter\n");
        assert_eq!(
            s.ok("sed '2c changed' f | head -n 3"),
            "one\nchanged\nthree\n"
        );
        assert_eq!(s.ok("printf 'no newline' | sed s/no/yes/"), "yes newline");
        s.ok("sed -i 's/two/TWO/' f");
        assert_eq!(s.read("f"), "one\nTWO\nthree\nfour\n");
        s.ok("sed -i.bak -e '/^f/d' f");
        assert_eq!(s.read("f"), "one\nTWO\nthree\n");
        let (_, err, code) = s.sh("sed '{p}' f");
        assert!(err.contains("python -c") && code == 1, "{err}");
        assert_eq!(s.sh("sed 's/a/b' f").2, 1);
        assert_eq!(s.sh("sed -i s/a/b/").2, 1);
        assert!(
            s.sh("sed 's/\\(a\\)\\1/x/' f")
                .1
                .contains("back-references")
        );
    }

    fn run(script: &str, input: &str, quiet: bool) -> String {
        let mut cmds = parse_script(script, Syntax::Basic).unwrap();
        let mut out = Vec::new();
        let all = lines(input.as_bytes());
        // The same loop as run_script, without a Ctx (no deadline needed here).
        for (idx, line) in all.iter().enumerate() {
            let mut space = line.to_vec();
            let mut deleted = false;
            for c in cmds.iter_mut() {
                if !c.selects(idx as u64 + 1, idx + 1 == all.len(), &space) {
                    continue;
                }
                match &c.cmd {
                    Cmd::Subst {
                        re,
                        repl,
                        global,
                        nth,
                        ..
                    } => {
                        if let Some(n) = substitute(re, repl, *global, *nth, &space) {
                            space = n;
                        }
                    }
                    Cmd::Print => {
                        out.extend_from_slice(&space);
                        out.push(b'\n');
                    }
                    Cmd::Delete => {
                        deleted = true;
                        break;
                    }
                    _ => {}
                }
            }
            if !deleted && !quiet {
                out.extend_from_slice(&space);
                out.push(b'\n');
            }
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn substitutions() {
        assert_eq!(run("s/o/0/", "foo\n", false), "f0o\n");
        assert_eq!(run("s/o/0/g", "foo\n", false), "f00\n");
        assert_eq!(run("s/o/0/2", "fooo\n", false), "fo0o\n");
        assert_eq!(
            run("s/\\(f\\)\\(o*\\)/\\2\\1[&]/", "foo\n", false),
            "oof[foo]\n"
        );
        assert_eq!(run("s|/|\\||g", "a/b\n", false), "a|b\n");
        assert_eq!(run("s/a\\/b/x/", "a/b\n", false), "x\n");
        assert_eq!(run("s/x/a\\nb/", "x\n", false), "a\nb\n");
        assert_eq!(run("s/.*/\\&/", "x\n", false), "&\n");
    }

    #[test]
    fn addresses_and_ranges() {
        let input = "1\n2\n3\n4\n5\n";
        assert_eq!(run("2,4p", input, true), "2\n3\n4\n");
        assert_eq!(run("$p", input, true), "5\n");
        assert_eq!(run("/3/,$d", input, false), "1\n2\n");
        assert_eq!(run("2!d", input, false), "2\n");
        assert_eq!(run("/2/,/4/s/^/>/", input, false), "1\n>2\n>3\n>4\n5\n");
        assert_eq!(run("4,2p", input, true), "4\n");
        assert_eq!(run("1d;3d", input, false), "2\n4\n5\n");
    }

    #[test]
    fn refusals() {
        assert!(
            parse_script("{p}", Syntax::Basic)
                .unwrap_err()
                .contains("python -c")
        );
        assert!(
            parse_script("s/a/b", Syntax::Basic)
                .unwrap_err()
                .contains("unterminated")
        );
        assert!(parse_script("s/a/b/w f", Syntax::Basic).is_err());
        assert!(
            parse_script("k", Syntax::Basic)
                .unwrap_err()
                .contains("unknown command")
        );
        assert!(parse_script("y/ab/c/", Syntax::Basic).is_err());
        assert_eq!(
            replacement("a&\\1\\n"),
            vec![
                Piece::Text(b"a".to_vec()),
                Piece::Group(0),
                Piece::Group(1),
                Piece::Text(b"\n".to_vec())
            ]
        );
    }
}
