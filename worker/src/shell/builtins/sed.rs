//! `sed`: the one-liner subset agents use. Commands `s/RE/REPL/FLAGS` (flags `g`, `p`, `i`, N),
//! `p`, `d`, `q`, `=`, `y/abc/xyz/`, `a TEXT`, `i TEXT`, `c TEXT`, each with an optional address
//! (`N`, `$`, `/RE/`) or range (`A,B`) and `!`; options `-n`, `-E`/`-r`, `-e`, `-i` (in place,
//! through the confined filesystem). Blocks (`{...}`), hold space and branches are refused with
//! a pointer to the interpreters.

use regex::bytes::Regex;

use super::args::opts;
use super::io::{lines, read_input, write_file};
use super::posix::{Syntax, build};
use crate::shell::exec::{Abort, Ctx};
use crate::shell::path::Access;

/// Most bytes sed produces for one call (and one pattern space): `s/x/&&&&&&&&/g` over a big
/// input must not exhaust memory.
const MAX_OUTPUT: usize = 64 << 20;

/// Where a command applies.
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
        /// In the syntax of `regex`'s `Captures::expand` (`${1}`, `$$`).
        repl: Vec<u8>,
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

/// A command with its addresses.
#[derive(Debug, Clone)]
struct Command {
    from: Option<Addr>,
    to: Option<Addr>,
    negate: bool,
    cmd: Cmd,
    /// Inside an `A,B` range.
    active: bool,
}

/// Reads a script: a cursor over its text, and the last regex (an empty `//` reuses it).
struct Parser<'s> {
    /// The whole script, for messages.
    src: &'s str,
    rest: &'s str,
    syntax: Syntax,
    last_re: Option<Regex>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.rest.chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.rest = &self.rest[c.len_utf8()..];
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        self.peek() == Some(c) && self.bump().is_some()
    }

    /// The run of characters at the cursor for which `keep` holds.
    fn take_while(&mut self, keep: impl Fn(char) -> bool) -> &str {
        let n = self.rest.find(|c| !keep(c)).unwrap_or(self.rest.len());
        let (taken, rest) = self.rest.split_at(n);
        self.rest = rest;
        taken
    }

    fn skip_blanks(&mut self) {
        self.take_while(|c| c == ' ' || c == '\t');
    }

    /// Text up to an unescaped `delim`; `\delim` becomes `delim`, other escapes are kept.
    fn delimited(&mut self, delim: char) -> Result<String, String> {
        let mut out = String::new();
        loop {
            match self.bump() {
                None => return Err(format!("unterminated `s' command in '{}'", self.src)),
                Some(c) if c == delim => return Ok(out),
                Some('\\') => match self.bump() {
                    Some(c) if c == delim => out.push(c),
                    Some(c) => out.extend(['\\', c]),
                    None => return Err("trailing backslash".into()),
                },
                Some(c) => out.push(c),
            }
        }
    }

    fn regex(&mut self, pattern: &str, ignore_case: bool) -> Result<Regex, String> {
        if pattern.is_empty() {
            return self
                .last_re
                .clone()
                .ok_or_else(|| "no previous regular expression".into());
        }
        let re = build(&[pattern.to_string()], self.syntax, ignore_case, false)?;
        self.last_re = Some(re.clone());
        Ok(re)
    }

    fn address(&mut self) -> Result<Option<Addr>, String> {
        let delim = match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                let n = self.take_while(|c| c.is_ascii_digit());
                return Ok(Some(Addr::Line(
                    n.parse().map_err(|_| "invalid line number")?,
                )));
            }
            Some('$') => {
                self.bump();
                return Ok(Some(Addr::Last));
            }
            Some('/') => '/',
            Some('\\') => {
                self.bump();
                self.peek().ok_or("unexpected end of address")?
            }
            _ => return Ok(None),
        };
        self.bump();
        let pattern = self.delimited(delim)?;
        let ignore_case = self.eat('I');
        Ok(Some(Addr::Re(self.regex(&pattern, ignore_case)?)))
    }

    /// The rest of an `a`/`i`/`c` command: `a text`, `a\` newline text (GNU one-liner forms).
    fn text_arg(&mut self) -> String {
        if self.eat('\\') {
            self.eat('\n');
        }
        self.skip_blanks();
        self.take_while(|c| c != '\n').to_string()
    }

    /// `s/RE/REPL/FLAGS`, after the `s`.
    fn substitution(&mut self) -> Result<Cmd, String> {
        let delim = self
            .bump()
            .filter(|&d| d != '\n' && d != '\\')
            .ok_or("unterminated `s' command")?;
        let pattern = self.delimited(delim)?;
        let repl = replacement(&self.delimited(delim)?);
        let (mut global, mut print, mut ignore_case, mut nth) = (false, false, false, 1);
        loop {
            match self.peek() {
                Some('g') => global = true,
                Some('p') => print = true,
                Some('i' | 'I') => ignore_case = true,
                Some('0'..='9') => {
                    let n = self.take_while(|c| c.is_ascii_digit());
                    let n = n.parse().ok().filter(|&n| n > 0);
                    nth = n.ok_or("number option to `s' command may not be zero")?;
                    continue;
                }
                Some(f @ ('w' | 'e' | 'm' | 'M')) => {
                    return Err(format!("the `{f}' flag of `s' is not supported"));
                }
                _ => break,
            }
            self.bump();
        }
        let re = self.regex(&pattern, ignore_case)?;
        Ok(Cmd::Subst {
            re,
            repl,
            global,
            nth,
            print,
        })
    }

    /// The command after the addresses, from its letter on.
    fn command(&mut self) -> Result<Cmd, String> {
        Ok(match self.bump().ok_or("missing command")? {
            's' => self.substitution()?,
            'y' => {
                let delim = self.bump().ok_or("unterminated `y' command")?;
                let from: Vec<char> = self.delimited(delim)?.chars().collect();
                let to: Vec<char> = self.delimited(delim)?.chars().collect();
                if from.len() != to.len() {
                    return Err("strings for `y' command are different lengths".into());
                }
                Cmd::Translate(from.into_iter().zip(to).collect())
            }
            'p' => Cmd::Print,
            'd' => Cmd::Delete,
            '=' => Cmd::LineNumber,
            'q' => {
                self.skip_blanks();
                Cmd::Quit(self.take_while(|c| c.is_ascii_digit()).parse().unwrap_or(0))
            }
            'a' => Cmd::Append(self.text_arg()),
            'i' => Cmd::Insert(self.text_arg()),
            'c' => Cmd::Change(self.text_arg()),
            c if "{}hHgGxnNDPbtT:".contains(c) => {
                return Err(format!(
                    "the `{c}' command is not supported here; use python -c or node -e"
                ));
            }
            other => return Err(format!("unknown command: `{other}'")),
        })
    }

    fn parse(&mut self) -> Result<Vec<Command>, String> {
        let mut cmds = Vec::new();
        loop {
            self.take_while(|c| matches!(c, ' ' | '\t' | '\n' | ';'));
            if self.peek().is_none() {
                return Ok(cmds);
            }
            let from = self.address()?;
            let to = match from.is_some() && self.eat(',') {
                true => Some(self.address()?.ok_or("unexpected `,'")?),
                false => None,
            };
            self.skip_blanks();
            let negate = self.eat('!');
            self.skip_blanks();
            let cmd = self.command()?;
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

/// A sed replacement (`&`, `\1`-`\9`, `\n`, `\t`, `\&`, `\\`) in the syntax of `regex`'s
/// `Captures::expand`.
fn replacement(s: &str) -> Vec<u8> {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '&' => out.push_str("${0}"),
            '$' => out.push_str("$$"),
            '\\' => match chars.next() {
                Some(d @ '0'..='9') => out.extend(['$', '{', d, '}']),
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('$') => out.push_str("$$"),
                Some(other) => out.push(other),
                None => out.push('\\'),
            },
            c => out.push(c),
        }
    }
    out.into_bytes()
}

/// Parses a whole sed script (several `-e` parts are joined with newlines).
///
/// # Errors
/// A message saying what is wrong or unsupported.
fn parse_script(src: &str, syntax: Syntax) -> Result<Vec<Command>, String> {
    Parser {
        src,
        rest: src,
        syntax,
        last_re: None,
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
    /// Whether the command applies to this line (moving in and out of its range).
    fn selects(&mut self, lineno: u64, last: bool, line: &[u8]) -> bool {
        let hit = match (&self.from, &self.to) {
            (None, _) => true,
            (Some(a), None) => addr_matches(a, lineno, last, line),
            (Some(_), Some(b)) if self.active => {
                let end = match b {
                    Addr::Line(n) => lineno >= *n,
                    other => addr_matches(other, lineno, last, line),
                };
                self.active = !end;
                true
            }
            (Some(a), Some(b)) if addr_matches(a, lineno, last, line) => {
                // A line-number end at or before the start ends the range at once.
                self.active = !matches!(b, Addr::Line(n) if *n <= lineno)
                    && !(matches!(b, Addr::Last) && last);
                true
            }
            _ => false,
        };
        hit != self.negate
    }
}

/// `s///` over one line: the new line, or `None` when nothing matched.
fn substitute(re: &Regex, repl: &[u8], global: bool, nth: usize, line: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut last = None;
    for caps in re.captures_iter(line).skip(nth - 1) {
        let Some(m) = caps.get(0) else { continue };
        out.extend_from_slice(&line[last.unwrap_or(0)..m.start()]);
        caps.expand(repl, &mut out);
        last = Some(m.end());
        if !global || out.len() > MAX_OUTPUT {
            break;
        }
    }
    out.extend_from_slice(&line[last?..]);
    Some(out)
}

/// What the commands did with one line besides changing it.
#[derive(Debug, Default)]
struct LineEnd {
    /// Not printed (`d`, `c`).
    deleted: bool,
    quit: Option<i32>,
    /// Text printed after the line (`a`).
    appended: Vec<u8>,
}

/// Runs the commands over one line (the pattern `space`), printing into `out`.
fn run_line(
    cmds: &mut [Command],
    lineno: u64,
    last: bool,
    space: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> LineEnd {
    let print = |out: &mut Vec<u8>, text: &[u8]| {
        out.extend_from_slice(text);
        out.push(b'\n');
    };
    let mut end = LineEnd::default();
    for c in cmds.iter_mut() {
        if !c.selects(lineno, last, space) {
            continue;
        }
        match &c.cmd {
            Cmd::Subst {
                re,
                repl,
                global,
                nth,
                print: p,
            } => {
                if let Some(new) = substitute(re, repl, *global, *nth, space) {
                    *space = new;
                    if *p {
                        print(out, space);
                    }
                }
            }
            Cmd::Print => print(out, space),
            Cmd::LineNumber => print(out, lineno.to_string().as_bytes()),
            Cmd::Translate(map) => {
                let text = String::from_utf8_lossy(space);
                let mapped = |ch| map.iter().find(|(a, _)| *a == ch).map_or(ch, |(_, b)| *b);
                *space = text.chars().map(mapped).collect::<String>().into_bytes();
            }
            Cmd::Append(t) => print(&mut end.appended, t.as_bytes()),
            Cmd::Insert(t) => print(out, t.as_bytes()),
            Cmd::Delete | Cmd::Change(_) => {
                // A range's change text comes once, at its end.
                if let Cmd::Change(t) = &c.cmd
                    && !c.active
                {
                    print(out, t.as_bytes());
                }
                end.deleted = true;
                break;
            }
            Cmd::Quit(code) => {
                end.quit = Some(*code);
                break;
            }
        }
    }
    end
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
    let mut out = Vec::new();
    for (idx, line) in all.iter().enumerate() {
        if idx % 1024 == 0 {
            ctx.check()?;
        }
        let last = idx + 1 == all.len();
        let mut space = line.to_vec();
        let end = run_line(cmds, idx as u64 + 1, last, &mut space, &mut out);
        if !end.deleted && !quiet {
            out.extend_from_slice(&space);
            // A last line without its newline stays without.
            if !last || data.ends_with(b"\n") {
                out.push(b'\n');
            }
        }
        out.extend_from_slice(&end.appended);
        let too_large = out.len() > MAX_OUTPUT;
        if end.quit.is_some() || too_large {
            return Ok(Output {
                text: out,
                quit: end.quit,
                too_large: too_large && end.quit.is_none(),
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
    let longs = "quiet=n silent=n regexp-extended=E expression=e in-place=i file=f";
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
    let Some(o) = opts(ctx, &args, "nErie:f:s", longs) else {
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
    if o.has('i') {
        return in_place(ctx, &mut cmds, &operands, o.has('n'));
    }
    let inputs = if operands.is_empty() {
        vec!["-".to_string()]
    } else {
        operands
    };
    let mut data = Vec::new();
    let mut status = 0;
    for (i, f) in inputs.iter().enumerate() {
        let Some(d) = read_input(ctx, f) else {
            status = 2;
            continue;
        };
        data.extend_from_slice(&d);
        // Inputs are one stream of lines: a last line without `\n` ends where the next begins.
        if !data.is_empty() && !data.ends_with(b"\n") && i + 1 < inputs.len() {
            data.push(b'\n');
        }
    }
    let result = run_script(ctx, &mut cmds, &data, o.has('n'))?;
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

/// `sed -i`: runs the script over each file on its own and writes the result back.
fn in_place(
    ctx: &mut Ctx<'_, '_>,
    cmds: &mut [Command],
    files: &[String],
    quiet: bool,
) -> Result<i32, Abort> {
    if files.is_empty() {
        ctx.warn("no input files");
        return Ok(1);
    }
    let mut status = 0;
    for f in files {
        ctx.check()?;
        // Check writability first, so a read-only file is refused before anything happens.
        if let Err(e) = ctx.resolve(f, Access::Write, true) {
            ctx.fail(format_args!("couldn't edit {f}"), &e);
            status = 4;
            continue;
        }
        let Some(data) = read_input(ctx, f) else {
            status = 2;
            continue;
        };
        for c in cmds.iter_mut() {
            c.active = false;
        }
        let result = run_script(ctx, cmds, &data, quiet)?;
        if result.too_large {
            ctx.warn(format_args!(
                "couldn't edit {f}: output over {} MiB",
                MAX_OUTPUT >> 20
            ));
            status = 4;
            continue;
        }
        if let Err(e) = write_file(ctx, f, &result.text) {
            ctx.fail(format_args!("couldn't edit {f}"), &e);
            status = 4;
        }
        if let Some(code) = result.quit {
            return Ok(code);
        }
    }
    Ok(status)
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
        for (idx, line) in all.iter().enumerate() {
            let mut space = line.to_vec();
            let end = run_line(
                &mut cmds,
                idx as u64 + 1,
                idx + 1 == all.len(),
                &mut space,
                &mut out,
            );
            if !end.deleted && !quiet {
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
        assert_eq!(run("s/x/$1 \\$/", "x\n", false), "$1 $\n");
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
        assert_eq!(replacement(r"a&\1\n$\&"), b"a${0}${1}\n$$&");
    }
}
