//! `sed`, as GNU sed 4.x behaves (uutils' sed is not published for WASI's std): scripts from
//! `-e`, `-f` or the first operand; addresses (`N`, `$`, `/RE/` and `\cREc` with `I`, `first~step`,
//! ranges `A,B`, `A,+N`, `A,~N`, `0,/RE/`, `!`); blocks `{}`; the commands `s` (flags `g p N i
//! I m M w`; `&`, `\1`..`\9`, `\n`, `\U \L \u \l \E` in the replacement), `y`, `p P d D n N g G h
//! H x a i c = q Q b t T : z r w F l`; options `-n -E/-r -s -z -i[SUFFIX]` (in place, with a
//! backup when a suffix is given). Regular expressions are POSIX's ([`crate::posix`]):
//! back-references inside a pattern are refused.

use std::collections::HashMap;
use std::fs;
use std::io::{self, Read, Write};

use regex::bytes::Regex;

use crate::getopt::{Long, parse};
use crate::own::reason;
use crate::posix::{Syntax, build};

/// Most bytes of one pattern space: `s/x/&&&&/g` repeated must not exhaust memory.
const MAX_SPACE: usize = 256 << 20;

#[derive(Debug, Clone)]
enum Addr {
    Line(u64),
    Last,
    Re(Option<Regex>),
    /// `first~step`.
    Step(u64, u64),
    /// `0` (only as the start of `0,/RE/`).
    Zero,
}

#[derive(Debug, Clone)]
enum End {
    Addr(Addr),
    /// `,+N`
    Plus(u64),
    /// `,~N`
    Multiple(u64),
}

#[derive(Debug, Clone)]
enum Kind {
    /// `{`: the index of the command after its `}`.
    Block(usize),
    EndBlock,
    Subst(Box<Subst>),
    Translate(HashMap<char, char>),
    Print,
    PrintFirst,
    Delete,
    DeleteFirst,
    Next,
    NextAppend,
    Get,
    GetAppend,
    Hold,
    HoldAppend,
    Exchange,
    Append(String),
    Insert(String),
    Change(String),
    LineNumber,
    Quit(i32),
    QuitSilent(i32),
    /// `b`, `t`, `T`: the label (resolved to an index when the script is read).
    Branch(Option<String>, usize),
    BranchIf(Option<String>, usize),
    BranchUnless(Option<String>, usize),
    Label,
    Zap,
    ReadFile(String),
    WriteFile(String),
    FileName,
    List,
}

#[derive(Debug, Clone)]
struct Subst {
    re: Option<Regex>,
    repl: Vec<Piece>,
    global: bool,
    nth: usize,
    print: bool,
    write: Option<String>,
}

/// A part of a replacement.
#[derive(Debug, Clone)]
enum Piece {
    Lit(Vec<u8>),
    Group(usize),
    /// `\U`, `\L`, `\E`, `\u`, `\l`.
    Case(char),
}

#[derive(Debug, Clone)]
struct Cmd {
    from: Option<Addr>,
    to: Option<End>,
    negate: bool,
    kind: Kind,
    /// Inside a range: the line it ends at, when known (`+N`, a line number).
    active: bool,
    end_line: u64,
}

/// Reads a script.
struct Parser {
    c: Vec<char>,
    i: usize,
    syntax: Syntax,
}

type Parsed<T> = Result<T, String>;

impl Parser {
    fn peek(&self) -> Option<char> {
        self.c.get(self.i).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.i += 1;
        }
    }

    fn number(&mut self) -> Option<u64> {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        let s: String = self.c[start..self.i].iter().collect();
        s.parse().ok()
    }

    /// Text up to the unescaped delimiter `d`; `\d` becomes `d`, `\n` a newline where `regex`
    /// is false (else kept for the regex).
    fn delimited(&mut self, d: char, regex: bool) -> Parsed<String> {
        let mut out = String::new();
        loop {
            match self.bump() {
                None => return Err(format!("unterminated `s' command")),
                Some(c) if c == d => return Ok(out),
                Some('\\') => match self.bump() {
                    None => return Err("unterminated `s' command".into()),
                    Some(c) if c == d => out.push(c),
                    Some('n') if !regex => out.push('\n'),
                    Some('\n') => out.push('\n'),
                    Some(c) => {
                        out.push('\\');
                        out.push(c);
                    }
                },
                Some('[') if regex => {
                    // A bracket expression may hold the delimiter.
                    out.push('[');
                    let mut first = true;
                    if self.peek() == Some('^') {
                        out.push('^');
                        self.i += 1;
                    }
                    loop {
                        let Some(c) = self.bump() else {
                            return Err("unterminated address regex".into());
                        };
                        out.push(c);
                        if c == ']' && !first {
                            break;
                        }
                        if c == '[' && matches!(self.peek(), Some(':' | '.' | '=')) {
                            let kind = self.bump().unwrap_or(':');
                            out.push(kind);
                            while let Some(x) = self.bump() {
                                out.push(x);
                                if x == kind && self.peek() == Some(']') {
                                    out.push(']');
                                    self.i += 1;
                                    break;
                                }
                            }
                        }
                        first = false;
                    }
                }
                Some(c) => out.push(c),
            }
        }
    }

    fn regex(&mut self, d: char) -> Parsed<Option<Regex>> {
        let text = self.delimited(d, true)?;
        let mut fold = false;
        let mut multiline = false;
        // Address flags `I` and `M` follow here; s's flags are read by its caller.
        if d != '\0' {
            while let Some(f @ ('I' | 'M')) = self.peek() {
                self.i += 1;
                if f == 'I' {
                    fold = true;
                } else {
                    multiline = true;
                }
            }
        }
        self.compile(&text, fold, multiline)
    }

    fn compile(&self, text: &str, fold: bool, multiline: bool) -> Parsed<Option<Regex>> {
        if text.is_empty() {
            return Ok(None);
        }
        let flags = match (fold, multiline) {
            (true, true) => "(?im)",
            (true, false) => "(?i)",
            (false, true) => "(?m)",
            (false, false) => "",
        };
        let translated = build(&[text.to_owned()], self.syntax, false, false, true)
            .map(|r| r.as_str().to_owned())?;
        Regex::new(&format!("{flags}{translated}"))
            .map(Some)
            .map_err(|e| e.to_string())
    }

    fn address(&mut self) -> Parsed<Option<Addr>> {
        Ok(Some(match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                let n = self.number().unwrap_or(0);
                if self.peek() == Some('~') {
                    self.i += 1;
                    let step = self.number().unwrap_or(0);
                    Addr::Step(n, step)
                } else if n == 0 {
                    Addr::Zero
                } else {
                    Addr::Line(n)
                }
            }
            Some('$') => {
                self.i += 1;
                Addr::Last
            }
            Some('/') => {
                self.i += 1;
                Addr::Re(self.regex('/')?)
            }
            Some('\\') => {
                self.i += 1;
                let d = self.bump().ok_or("unexpected end of script")?;
                Addr::Re(self.regex(d)?)
            }
            _ => return Ok(None),
        }))
    }

    /// The text of `a`, `i`, `c`: GNU's one-line form (`a text`) or POSIX's (`a\` newline).
    fn text(&mut self) -> String {
        self.skip_blanks();
        if self.peek() == Some('\\') {
            self.i += 1;
            if self.peek() == Some('\n') {
                self.i += 1;
            }
        }
        let mut out = String::new();
        while let Some(c) = self.bump() {
            match c {
                '\n' => break,
                '\\' => match self.bump() {
                    Some('t') => out.push('\t'),
                    Some(x) => out.push(x),
                    None => {}
                },
                c => out.push(c),
            }
        }
        out
    }

    /// A label or file name: to the end of the line (or a `;` for labels).
    fn word(&mut self, semicolon_ends: bool) -> String {
        self.skip_blanks();
        let mut out = String::new();
        while let Some(c) = self.peek() {
            if c == '\n' || (semicolon_ends && (c == ';' || c == '}')) {
                break;
            }
            out.push(c);
            self.i += 1;
        }
        out.trim_end().to_owned()
    }

    fn script(&mut self) -> Parsed<Vec<Cmd>> {
        let mut cmds: Vec<Cmd> = Vec::new();
        let mut open: Vec<usize> = Vec::new();
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\n' | ';')) {
                self.i += 1;
            }
            let Some(c) = self.peek() else { break };
            if c == '#' {
                while self.peek().is_some_and(|c| c != '\n') {
                    self.i += 1;
                }
                continue;
            }
            let from = self.address()?;
            let mut to = None;
            if from.is_some() && self.peek() == Some(',') {
                self.i += 1;
                self.skip_blanks();
                to = Some(match self.peek() {
                    Some('+') => {
                        self.i += 1;
                        End::Plus(self.number().ok_or("expected a number after +")?)
                    }
                    Some('~') => {
                        self.i += 1;
                        End::Multiple(self.number().ok_or("expected a number after ~")?)
                    }
                    _ => End::Addr(self.address()?.ok_or("unexpected `,'")?),
                });
            }
            if matches!(from, Some(Addr::Zero)) && !matches!(to, Some(End::Addr(Addr::Re(_)))) {
                return Err("invalid usage of line address 0".into());
            }
            self.skip_blanks();
            let mut negate = false;
            while self.peek() == Some('!') {
                negate = true;
                self.i += 1;
                self.skip_blanks();
            }
            let name = self.bump().ok_or("missing command")?;
            let kind = match name {
                '{' => {
                    open.push(cmds.len());
                    Kind::Block(0)
                }
                '}' => {
                    if from.is_some() {
                        return Err("} doesn't want any addresses".into());
                    }
                    let start = open.pop().ok_or("unexpected `}'")?;
                    let after = cmds.len() + 1;
                    cmds[start].kind = Kind::Block(after);
                    Kind::EndBlock
                }
                's' => {
                    let d = self.bump().ok_or("unterminated `s' command")?;
                    let pattern = self.delimited(d, true)?;
                    let replacement = self.delimited(d, false)?;
                    let mut s = Subst {
                        re: None,
                        repl: pieces(&replacement),
                        global: false,
                        nth: 1,
                        print: false,
                        write: None,
                    };
                    let (mut fold, mut multiline) = (false, false);
                    loop {
                        match self.peek() {
                            Some('g') => s.global = true,
                            Some('p') => s.print = true,
                            Some('i' | 'I') => fold = true,
                            Some('m' | 'M') => multiline = true,
                            Some('e') => {
                                return Err("the e flag cannot run a command here".into());
                            }
                            Some('w') => {
                                self.i += 1;
                                s.write = Some(self.word(false));
                                break;
                            }
                            Some(c) if c.is_ascii_digit() => {
                                s.nth = self.number().unwrap_or(1).max(1) as usize;
                                continue;
                            }
                            _ => break,
                        }
                        self.i += 1;
                    }
                    s.re = self.compile(&pattern, fold, multiline)?;
                    Kind::Subst(Box::new(s))
                }
                'y' => {
                    let d = self.bump().ok_or("unterminated `y' command")?;
                    let a: Vec<char> = self.delimited(d, false)?.chars().collect();
                    let b: Vec<char> = self.delimited(d, false)?.chars().collect();
                    let unescape = |v: Vec<char>| -> Vec<char> {
                        let mut out = Vec::new();
                        let mut i = 0;
                        while i < v.len() {
                            if v[i] == '\\' && i + 1 < v.len() {
                                out.push(match v[i + 1] {
                                    'n' => '\n',
                                    't' => '\t',
                                    x => x,
                                });
                                i += 2;
                            } else {
                                out.push(v[i]);
                                i += 1;
                            }
                        }
                        out
                    };
                    let (a, b) = (unescape(a), unescape(b));
                    if a.len() != b.len() {
                        return Err("strings for `y' command are different lengths".into());
                    }
                    Kind::Translate(a.into_iter().zip(b).collect())
                }
                'p' => Kind::Print,
                'P' => Kind::PrintFirst,
                'd' => Kind::Delete,
                'D' => Kind::DeleteFirst,
                'n' => Kind::Next,
                'N' => Kind::NextAppend,
                'g' => Kind::Get,
                'G' => Kind::GetAppend,
                'h' => Kind::Hold,
                'H' => Kind::HoldAppend,
                'x' => Kind::Exchange,
                'z' => Kind::Zap,
                '=' => Kind::LineNumber,
                'F' => Kind::FileName,
                'l' => Kind::List,
                'a' => Kind::Append(self.text()),
                'i' => Kind::Insert(self.text()),
                'c' => Kind::Change(self.text()),
                'q' | 'Q' => {
                    self.skip_blanks();
                    let code = self.number().unwrap_or(0) as i32;
                    if name == 'q' {
                        Kind::Quit(code)
                    } else {
                        Kind::QuitSilent(code)
                    }
                }
                'b' | 't' | 'T' => {
                    let label = self.word(true);
                    let label = (!label.is_empty()).then_some(label);
                    match name {
                        'b' => Kind::Branch(label, 0),
                        't' => Kind::BranchIf(label, 0),
                        _ => Kind::BranchUnless(label, 0),
                    }
                }
                ':' => {
                    if from.is_some() {
                        return Err(": doesn't want any addresses".into());
                    }
                    let label = self.word(true);
                    if label.is_empty() {
                        return Err("\":\" lacks a label".into());
                    }
                    cmds.push(Cmd {
                        from: None,
                        to: None,
                        negate: false,
                        kind: Kind::Label,
                        active: false,
                        end_line: 0,
                    });
                    labels_push(&mut cmds, label);
                    continue;
                }
                'r' => Kind::ReadFile(self.word(false)),
                'w' => Kind::WriteFile(self.word(false)),
                'e' => return Err("e cannot run a command here (no processes in WASM)".into()),
                other => return Err(format!("unknown command: `{other}'")),
            };
            cmds.push(Cmd {
                from,
                to,
                negate,
                kind,
                active: false,
                end_line: 0,
            });
            // After a command: blanks, then `;`, `}`, `#` or a newline.
            self.skip_blanks();
            match self.peek() {
                _ if name == '{' => {}
                None | Some(';' | '\n' | '}' | '#') => {}
                Some(other) => return Err(format!("extra characters after command ({other})")),
            }
        }
        if !open.is_empty() {
            return Err("unmatched `{'".into());
        }
        resolve_labels(&mut cmds)?;
        Ok(cmds)
    }
}

/// Labels are kept beside the script: a `Label` command's name, in a side table keyed by index.
fn labels_push(cmds: &mut [Cmd], label: String) {
    let last = cmds.len() - 1;
    cmds[last].kind = Kind::ReadFile(format!("\0label:{label}"));
}

fn resolve_labels(cmds: &mut [Cmd]) -> Parsed<()> {
    let mut at = HashMap::new();
    for (i, c) in cmds.iter_mut().enumerate() {
        if let Kind::ReadFile(name) = &c.kind
            && let Some(label) = name.strip_prefix("\0label:")
        {
            at.insert(label.to_owned(), i);
            c.kind = Kind::Label;
        }
    }
    let end = cmds.len();
    for c in cmds.iter_mut() {
        if let Kind::Branch(l, to) | Kind::BranchIf(l, to) | Kind::BranchUnless(l, to) = &mut c.kind
        {
            *to = match l {
                None => end,
                Some(l) => *at
                    .get(l)
                    .ok_or_else(|| format!("can't find label for jump to `{l}'"))?,
            };
        }
    }
    Ok(())
}

/// A replacement's pieces: `&`, `\1`..`\9`, `\n`, `\t`, case conversions, literal bytes.
fn pieces(text: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut lit = Vec::new();
    let mut chars = text.chars();
    let flush = |lit: &mut Vec<u8>, out: &mut Vec<Piece>| {
        if !lit.is_empty() {
            out.push(Piece::Lit(std::mem::take(lit)));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '&' => {
                flush(&mut lit, &mut out);
                out.push(Piece::Group(0));
            }
            '\\' => match chars.next() {
                Some(d @ '0'..='9') => {
                    flush(&mut lit, &mut out);
                    out.push(Piece::Group(d as usize - '0' as usize));
                }
                Some('n') => lit.push(b'\n'),
                Some('t') => lit.push(b'\t'),
                Some('r') => lit.push(b'\r'),
                Some(k @ ('U' | 'L' | 'E' | 'u' | 'l')) => {
                    flush(&mut lit, &mut out);
                    out.push(Piece::Case(k));
                }
                Some(x) => {
                    let mut buf = [0; 4];
                    lit.extend_from_slice(x.encode_utf8(&mut buf).as_bytes());
                }
                None => lit.push(b'\\'),
            },
            x => {
                let mut buf = [0; 4];
                lit.extend_from_slice(x.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    flush(&mut lit, &mut out);
    out
}

/// The replacement of one match.
fn expand(pieces: &[Piece], caps: &regex::bytes::Captures<'_>, out: &mut Vec<u8>) {
    // Case conversion: a lasting mode (\U, \L until \E) and a one-shot (\u, \l).
    let mut mode = 'E';
    let mut once: Option<char> = None;
    let push = |bytes: &[u8], mode: char, once: &mut Option<char>, out: &mut Vec<u8>| {
        if mode == 'E' && once.is_none() {
            out.extend_from_slice(bytes);
            return;
        }
        let text = String::from_utf8_lossy(bytes);
        let mut converted: String = match mode {
            'U' => text.to_uppercase(),
            'L' => text.to_lowercase(),
            _ => text.into_owned(),
        };
        if let Some(k) = once.take()
            && let Some(first) = converted.chars().next()
        {
            let rest = converted[first.len_utf8()..].to_owned();
            let first: String = if k == 'u' {
                first.to_uppercase().collect()
            } else {
                first.to_lowercase().collect()
            };
            converted = first + &rest;
        }
        out.extend_from_slice(converted.as_bytes());
    };
    for p in pieces {
        match p {
            Piece::Lit(bytes) => push(bytes, mode, &mut once, out),
            Piece::Group(n) => {
                if let Some(m) = caps.get(*n) {
                    push(m.as_bytes(), mode, &mut once, out);
                }
            }
            Piece::Case(k @ ('u' | 'l')) => once = Some(*k),
            Piece::Case(k) => mode = *k,
        }
    }
}

/// The lines of one run of the script: every file's, one after another (one file at a time
/// with -i/-s).
struct Input {
    /// The file each line is from, the line, and whether it ended with the separator.
    lines: Vec<(usize, Vec<u8>, bool)>,
    pos: usize,
}

impl Input {
    fn next(&mut self) -> Option<(usize, Vec<u8>, bool)> {
        let line = self.lines.get(self.pos)?.clone();
        self.pos += 1;
        Some(line)
    }

    fn at_end(&self) -> bool {
        self.pos >= self.lines.len()
    }
}

/// Splits `data` into lines ending with `eol`.
fn split(file: usize, data: &[u8], eol: u8, into: &mut Vec<(usize, Vec<u8>, bool)>) {
    let mut rest = data;
    while !rest.is_empty() {
        match rest.iter().position(|&b| b == eol) {
            Some(at) => {
                into.push((file, rest[..at].to_vec(), true));
                rest = &rest[at + 1..];
            }
            None => {
                into.push((file, rest.to_vec(), false));
                rest = &[];
            }
        }
    }
}

/// Reads an input file (`-`: stdin); the message on failure.
fn read(name: &str, in_place: bool) -> Result<Vec<u8>, String> {
    if name == "-" && !in_place {
        let mut d = Vec::new();
        return io::stdin()
            .read_to_end(&mut d)
            .map(|_| d)
            .map_err(|e| format!("sed: read error on stdin: {}", reason(&e)));
    }
    match fs::metadata(name) {
        Ok(m) if m.is_dir() => {
            if in_place {
                Err(format!("sed: couldn't edit {name}: not a regular file"))
            } else {
                Err(format!("sed: read error on {name}: Is a directory"))
            }
        }
        _ => fs::read(name).map_err(|e| format!("sed: can't read {name}: {}", reason(&e))),
    }
}

/// The state of running the script.
struct Machine<'a> {
    cmds: Vec<Cmd>,
    quiet: bool,
    eol: u8,
    files: &'a [String],
    hold: Vec<u8>,
    lineno: u64,
    /// Text queued by `a`, `r`, `R` for the end of the cycle.
    append: Vec<Vec<u8>>,
    out: Vec<u8>,
    /// Files opened by `w` (their contents, written at the end).
    writes: Vec<(String, Vec<u8>)>,
    /// A `q`/`Q` ran: its status.
    quit: Option<i32>,
    last_re: Option<Regex>,
}

/// How a cycle ended.
enum Flow {
    /// Print the pattern space (unless -n) and go on.
    End,
    /// Start the next cycle without printing (`d`).
    Delete,
    /// `D`: restart with what is left, without reading.
    Restart,
    /// `q`: print, then stop; `Q`: stop.
    Quit(bool),
}

impl Machine<'_> {
    fn matches(&mut self, a: &Addr, line: &[u8], last: bool) -> bool {
        match a {
            Addr::Line(n) => self.lineno == *n,
            Addr::Last => last,
            Addr::Zero => false,
            Addr::Step(first, step) => {
                if *step == 0 {
                    self.lineno == *first
                } else {
                    self.lineno >= *first && (self.lineno - first) % step == 0
                }
            }
            Addr::Re(re) => {
                let re = match re {
                    Some(re) => {
                        self.last_re = Some(re.clone());
                        re.clone()
                    }
                    None => match &self.last_re {
                        Some(re) => re.clone(),
                        None => return false,
                    },
                };
                re.is_match(line)
            }
        }
    }

    /// Whether command `i` applies to this line (updating its range).
    fn selected(&mut self, i: usize, space: &[u8], last: bool) -> bool {
        let cmd = self.cmds[i].clone();
        let hit = match (&cmd.from, &cmd.to) {
            (None, _) => true,
            (Some(from), None) => self.matches(from, space, last),
            (Some(from), Some(to)) => {
                if cmd.active {
                    let ends = match to {
                        End::Addr(Addr::Line(n)) => self.lineno >= *n,
                        End::Plus(_) => self.lineno >= cmd.end_line,
                        End::Multiple(m) => *m == 0 || self.lineno % m == 0,
                        End::Addr(a) => self.matches(a, space, last),
                    };
                    if ends {
                        self.cmds[i].active = false;
                    }
                    true
                } else {
                    let starts = match from {
                        Addr::Zero => self.lineno == 1,
                        other => self.matches(other, space, last),
                    };
                    if starts {
                        let (active, end_line) = match to {
                            End::Addr(Addr::Line(n)) => (*n > self.lineno, *n),
                            End::Plus(n) => (*n > 0, self.lineno + n),
                            End::Multiple(m) => (*m > 0 && self.lineno % m != 0, 0),
                            End::Addr(Addr::Last) => (!last, 0),
                            End::Addr(a) if matches!(from, Addr::Zero) => {
                                (!self.matches(a, space, last), 0)
                            }
                            End::Addr(_) => (true, 0),
                        };
                        self.cmds[i].active = active;
                        self.cmds[i].end_line = end_line;
                    }
                    starts
                }
            }
        };
        hit != cmd.negate
    }

    fn emit(&mut self, bytes: &[u8], newline: bool) {
        self.out.extend_from_slice(bytes);
        if newline {
            self.out.push(self.eol);
        }
        if self.out.len() > 64 << 10 {
            let _ = io::stdout().write_all(&self.out);
            self.out.clear();
        }
    }

    fn write_to(&mut self, file: &str, bytes: &[u8]) {
        let mut line = bytes.to_vec();
        line.push(self.eol);
        if file == "/dev/stdout" {
            self.emit(bytes, true);
            return;
        }
        if file == "/dev/stderr" {
            let _ = io::stderr().write_all(&line);
            return;
        }
        match self.writes.iter_mut().find(|(f, _)| f == file) {
            Some((_, data)) => data.extend_from_slice(&line),
            None => self.writes.push((file.to_owned(), line)),
        }
    }

    fn flush_append(&mut self) {
        for text in std::mem::take(&mut self.append) {
            self.emit(&text, false);
        }
    }

    /// Runs the script over one input; the status of a `q`, if one ran.
    fn run(&mut self, input: &mut Input) -> Result<(), String> {
        let mut space: Vec<u8> = Vec::new();
        let mut newline = true;
        let mut file = 0usize;
        let mut restart = false;
        loop {
            if !restart {
                let Some((f, line, nl)) = input.next() else {
                    break;
                };
                file = f;
                space = line;
                newline = nl;
                self.lineno += 1;
            }
            restart = false;
            let mut substituted = false;
            let mut pc = 0;
            let mut flow = Flow::End;
            while pc < self.cmds.len() {
                let last = input.at_end();
                if !self.selected(pc, &space, last) {
                    pc = match self.cmds[pc].kind {
                        Kind::Block(after) => after,
                        _ => pc + 1,
                    };
                    continue;
                }
                let kind = self.cmds[pc].kind.clone();
                pc += 1;
                match kind {
                    Kind::Block(_) | Kind::EndBlock | Kind::Label => {}
                    Kind::Subst(s) => {
                        let re = match &s.re {
                            Some(re) => {
                                self.last_re = Some(re.clone());
                                re.clone()
                            }
                            None => self
                                .last_re
                                .clone()
                                .ok_or("no previous regular expression")?,
                        };
                        if let Some(new) = substitute(&re, &s, &space) {
                            if new.len() > MAX_SPACE {
                                return Err("the pattern space grew past 256 MiB".into());
                            }
                            space = new;
                            substituted = true;
                            if s.print {
                                self.emit(&space.clone(), true);
                            }
                            if let Some(w) = &s.write {
                                self.write_to(w, &space.clone());
                            }
                        }
                    }
                    Kind::Translate(map) => {
                        let text = String::from_utf8_lossy(&space);
                        space = text
                            .chars()
                            .map(|c| *map.get(&c).unwrap_or(&c))
                            .collect::<String>()
                            .into_bytes();
                    }
                    Kind::Print => self.emit(&space.clone(), true),
                    Kind::PrintFirst => {
                        let first = space.split(|&b| b == b'\n').next().unwrap_or(&[]).to_vec();
                        self.emit(&first, true);
                    }
                    Kind::Delete => {
                        flow = Flow::Delete;
                        break;
                    }
                    Kind::DeleteFirst => match space.iter().position(|&b| b == b'\n') {
                        Some(at) => {
                            space.drain(..=at);
                            flow = Flow::Restart;
                            break;
                        }
                        None => {
                            flow = Flow::Delete;
                            break;
                        }
                    },
                    Kind::Next => {
                        if input.at_end() {
                            // GNU: with no next line, n prints and ends without running the
                            // rest.
                            break;
                        }
                        if !self.quiet {
                            self.emit(&space.clone(), newline);
                        }
                        self.flush_append();
                        let (f, line, nl) = input.next().unwrap_or_default();
                        file = f;
                        space = line;
                        newline = nl;
                        self.lineno += 1;
                    }
                    Kind::NextAppend => {
                        if input.at_end() {
                            // GNU prints the pattern space when N has no next line.
                            break;
                        }
                        self.flush_append();
                        let (f, line, nl) = input.next().unwrap_or_default();
                        file = f;
                        space.push(b'\n');
                        space.extend_from_slice(&line);
                        newline = nl;
                        self.lineno += 1;
                    }
                    Kind::Get => space = self.hold.clone(),
                    Kind::GetAppend => {
                        space.push(b'\n');
                        space.extend_from_slice(&self.hold.clone());
                    }
                    Kind::Hold => self.hold = space.clone(),
                    Kind::HoldAppend => {
                        self.hold.push(b'\n');
                        self.hold.extend_from_slice(&space);
                    }
                    Kind::Exchange => std::mem::swap(&mut space, &mut self.hold),
                    Kind::Zap => space.clear(),
                    Kind::Append(text) => {
                        let mut t = text.into_bytes();
                        t.push(b'\n');
                        self.append.push(t);
                    }
                    Kind::Insert(text) => {
                        self.emit(text.as_bytes(), true);
                    }
                    Kind::Change(text) => {
                        let cmd = &self.cmds[pc - 1];
                        // In a range, the text replaces the whole range: printed at its end.
                        if cmd.to.is_none() || !cmd.active || cmd.negate {
                            self.emit(text.as_bytes(), true);
                        }
                        flow = Flow::Delete;
                        break;
                    }
                    Kind::LineNumber => {
                        let n = self.lineno.to_string();
                        self.out.extend_from_slice(n.as_bytes());
                        self.out.push(b'\n');
                    }
                    Kind::FileName => {
                        let name = self.files.get(file).map_or("-", String::as_str).to_owned();
                        self.out.extend_from_slice(name.as_bytes());
                        self.out.push(b'\n');
                    }
                    Kind::List => {
                        let listed = list(&space);
                        self.emit(listed.as_bytes(), true);
                    }
                    Kind::Quit(code) => {
                        self.quit = Some(code);
                        flow = Flow::Quit(true);
                        break;
                    }
                    Kind::QuitSilent(code) => {
                        self.quit = Some(code);
                        flow = Flow::Quit(false);
                        break;
                    }
                    Kind::Branch(_, to) => pc = to,
                    Kind::BranchIf(_, to) => {
                        if substituted {
                            substituted = false;
                            pc = to;
                        }
                    }
                    Kind::BranchUnless(_, to) => {
                        if !substituted {
                            pc = to;
                        } else {
                            substituted = false;
                        }
                    }
                    Kind::ReadFile(name) => {
                        if let Ok(mut data) = fs::read(&name)
                            && !data.is_empty()
                        {
                            if !data.ends_with(b"\n") {
                                data.push(b'\n');
                            }
                            self.append.push(data);
                        }
                    }
                    Kind::WriteFile(name) => self.write_to(&name, &space.clone()),
                }
            }
            match flow {
                Flow::End => {
                    if !self.quiet {
                        self.emit(&space.clone(), newline || !input.at_end());
                    }
                }
                Flow::Quit(print) => {
                    if print && !self.quiet {
                        self.emit(&space.clone(), newline || !input.at_end());
                    }
                    self.flush_append();
                    return Ok(());
                }
                Flow::Delete => {}
                Flow::Restart => {
                    self.flush_append();
                    restart = true;
                    continue;
                }
            }
            self.flush_append();
        }
        Ok(())
    }
}

/// `l`'s unambiguous form of the pattern space.
fn list(space: &[u8]) -> String {
    let mut out = String::new();
    for &b in space {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            0x0b => out.push_str("\\v"),
            b'\r' => out.push_str("\\r"),
            0x20..=0x7e => out.push(b as char),
            other => out.push_str(&format!("\\{other:03o}")),
        }
    }
    out.push('$');
    out
}

/// `s` on one pattern space: the new one, if anything was replaced.
fn substitute(re: &Regex, s: &Subst, space: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut last = 0;
    let mut count = 0;
    let mut replaced = false;
    let mut at = 0;
    while at <= space.len() {
        let Some(caps) = re.captures_at(space, at) else {
            break;
        };
        let m = caps.get(0)?;
        // An empty match right after the previous match is skipped (GNU: `s/x*/-/g`).
        if m.start() == m.end() && m.start() == last && replaced && m.start() > 0 {
            at = m.start() + 1;
            if at > space.len() {
                break;
            }
            continue;
        }
        count += 1;
        if count >= s.nth {
            out.extend_from_slice(&space[last..m.start()]);
            expand(&s.repl, &caps, &mut out);
            last = m.end();
            replaced = true;
            if !s.global {
                break;
            }
        }
        at = if m.end() > m.start() {
            m.end()
        } else {
            // Past an empty match: copy one character.
            let step = space[m.end()..]
                .iter()
                .position(|_| true)
                .map_or(1, |_| utf8_len(space[m.end()]));
            m.end() + step
        };
    }
    if !replaced {
        return None;
    }
    out.extend_from_slice(&space[last..]);
    Some(out)
}

fn utf8_len(b: u8) -> usize {
    match b {
        0xf0.. => 4,
        0xe0.. => 3,
        0xc0.. => 2,
        _ => 1,
    }
}

const SHORT: &str = "nrEsuzi::e:f:l:";

const LONG: &[Long] = &[
    ("quiet", 'n', false),
    ("silent", 'n', false),
    ("regexp-extended", 'E', false),
    ("separate", 's', false),
    ("unbuffered", 'u', false),
    ("null-data", 'z', false),
    ("in-place", 'I', false),
    ("expression", 'e', true),
    ("file", 'f', true),
    ("line-length", 'l', true),
    ("posix", 'p', false),
    ("debug", 'd', false),
    ("sandbox", 'S', false),
    ("follow-symlinks", 'F', false),
    ("help", 'h', false),
];

pub fn main(args: super::Args) -> i32 {
    let mut args: Vec<String> = args
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    // -i takes its suffix attached only (`-i.bak`, `--in-place=.bak`): split it off first.
    let mut in_place: Option<String> = None;
    args.retain(|a| {
        if let Some(suffix) = a.strip_prefix("--in-place") {
            in_place = Some(suffix.trim_start_matches('=').to_owned());
            return false;
        }
        if a.starts_with('-') && !a.starts_with("--") && a.len() > 1 {
            let body = &a[1..];
            // The letters before an `i` are flags without values (-ni.bak, -Ei).
            if let Some(at) = body.find('i')
                && body[..at].chars().all(|c| "nrEsuz".contains(c))
                && !body[..at].contains('e')
            {
                in_place = Some(body[at + 1..].to_owned());
                if at == 0 {
                    return false;
                }
            }
        }
        true
    });
    // Strip the `i...` part of bundles like -ni.bak.
    for a in args.iter_mut() {
        if a.starts_with('-')
            && !a.starts_with("--")
            && let Some(at) = a.find('i')
            && a[1..at].chars().all(|c| "nrEsuz".contains(c))
        {
            a.truncate(at);
        }
    }
    let o = match parse(&args, "nrEsuze:f:l:", LONG) {
        Ok(o) => o,
        Err(e) => {
            eprintln!(
                "sed: {e}\nUsage: sed [OPTION]... {{script-only-if-no-other-script}} [input-file]..."
            );
            return 1;
        }
    };
    let _ = SHORT;
    if o.has('h') {
        println!(
            "Usage: sed [OPTION]... {{script-only-if-no-other-script}} [input-file]...\n\n  \
             -n, --quiet, --silent    suppress automatic printing of pattern space\n  \
             -e script                add the script to the commands to be executed\n  \
             -f script-file           add the contents of script-file to the commands\n  \
             -i[SUFFIX], --in-place[=SUFFIX]  edit files in place (makes backup if SUFFIX \
             supplied)\n  -E, -r                   use extended regular expressions\n  \
             -s, --separate           consider files as separate\n  \
             -z, --null-data          separate lines by NUL characters"
        );
        return 0;
    }
    let mut operands = o.operands.clone();
    let mut script = String::new();
    let mut any = false;
    for (c, v) in &o.opts {
        match (c, v) {
            ('e', Some(v)) => {
                if any {
                    script.push('\n');
                }
                script.push_str(v);
                any = true;
            }
            ('f', Some(f)) => {
                let text = if f == "-" {
                    let mut s = String::new();
                    io::stdin().read_to_string(&mut s).map(|_| s)
                } else {
                    fs::read_to_string(f)
                };
                match text {
                    Ok(t) => {
                        if any {
                            script.push('\n');
                        }
                        script.push_str(t.strip_suffix('\n').unwrap_or(&t));
                        any = true;
                    }
                    Err(e) => {
                        eprintln!("sed: couldn't open file {f}: {}", reason(&e));
                        return 1;
                    }
                }
            }
            _ => {}
        }
    }
    if !any {
        if operands.is_empty() {
            eprintln!("Usage: sed [OPTION]... {{script-only-if-no-other-script}} [input-file]...");
            return 1;
        }
        script = operands.remove(0);
    }
    let quiet = o.has('n') || script.starts_with("#n\n") || script == "#n";
    let syntax = if o.has('E') || o.has('r') {
        Syntax::Extended
    } else {
        Syntax::Basic
    };
    let mut parser = Parser {
        c: script.chars().collect(),
        i: 0,
        syntax,
    };
    let cmds = match parser.script() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("sed: -e expression #1, char {}: {e}", parser.i);
            return 1;
        }
    };
    let eol = if o.has('z') { 0 } else { b'\n' };
    if operands.is_empty() {
        if in_place.is_some() {
            eprintln!("sed: no input files");
            return 1;
        }
        operands.push("-".into());
    }
    let mut m = Machine {
        cmds,
        quiet,
        eol,
        files: &operands,
        hold: Vec::new(),
        lineno: 0,
        append: Vec::new(),
        out: Vec::new(),
        writes: Vec::new(),
        quit: None,
        last_re: None,
    };
    let mut status = 0;
    let separate = in_place.is_some() || o.has('s');
    let mut units: Vec<Vec<usize>> = Vec::new();
    if separate {
        units.extend((0..operands.len()).map(|i| vec![i]));
    } else {
        units.push((0..operands.len()).collect());
    }
    for unit in units {
        if separate {
            // Each file is a stream of its own: its lines count from 1, `$` is its last.
            m.lineno = 0;
            for cmd in &mut m.cmds {
                cmd.active = false;
            }
        }
        let mut input = Input {
            lines: Vec::new(),
            pos: 0,
        };
        for &i in &unit {
            match read(&operands[i], in_place.is_some()) {
                Ok(data) => split(i, &data, eol, &mut input.lines),
                Err(message) => {
                    let _ = io::stdout().write_all(&m.out);
                    m.out.clear();
                    eprintln!("{message}");
                    status = 2;
                    if in_place.is_some() {
                        continue;
                    }
                }
            }
        }
        if in_place.is_some() && input.lines.is_empty() && status == 2 {
            continue;
        }
        if in_place.is_some() {
            // Each file's output goes back into it.
            let saved = std::mem::take(&mut m.out);
            let _ = io::stdout().write_all(&saved);
            if let Err(e) = m.run(&mut input) {
                eprintln!("sed: {e}");
                return 4;
            }
            let name = &operands[unit[0]];
            let edited = std::mem::take(&mut m.out);
            if let Some(suffix) = in_place.as_deref().filter(|s| !s.is_empty()) {
                let backup = if suffix.contains('*') {
                    let (dir, base) = match name.rsplit_once('/') {
                        Some((d, b)) => (format!("{d}/"), b),
                        None => (String::new(), name.as_str()),
                    };
                    let named = suffix.replace('*', base);
                    if named.contains('/') {
                        named
                    } else {
                        format!("{dir}{named}")
                    }
                } else {
                    format!("{name}{suffix}")
                };
                if let Err(e) = fs::copy(name, &backup) {
                    eprintln!("sed: cannot rename {name}: {}", reason(&e));
                    return 4;
                }
            }
            if let Err(e) = fs::write(name, &edited) {
                eprintln!("sed: couldn't write {name}: {}", reason(&e));
                return 4;
            }
        } else if let Err(e) = m.run(&mut input) {
            let _ = io::stdout().write_all(&m.out);
            eprintln!("sed: {e}");
            return 4;
        }
        if m.quit.is_some() {
            break;
        }
    }
    let _ = io::stdout().write_all(&m.out);
    for (file, data) in &m.writes {
        if let Err(e) = fs::write(file, data) {
            eprintln!("sed: couldn't open file {file}: {}", reason(&e));
            status = 4;
        }
    }
    if let Err(e) = io::stdout().flush() {
        eprintln!("sed: couldn't flush stdout: {}", reason(&e));
        return 4;
    }
    m.quit.unwrap_or(status)
}
