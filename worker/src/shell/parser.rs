//! The grammar: lists of and/or chains of pipelines of commands, where a command is a simple
//! command (assignments, words, redirections), a compound command (`{ ...; }`, `( ... )`,
//! `if`, `for` and `for ((...))`, `while`, `until`, `case`, `((...))`, `[[ ... ]]`) with its
//! redirections, or a function definition (`name() body`, `function name body`).
//!
//! The whole script is parsed before anything runs, so a syntax error anywhere means nothing ran.
//! What stays unsupported is refused here with a message: `select` and `coproc` (indexed
//! arrays are parsed: `NAME=(...)`, `NAME[i]=value`). A list ended by `&` is marked
//! [`AndOr::background`].
//!
//! Why this is not `brush-parser` (the maintained bash parser): the command line comes from the
//! client and is parsed in the worker, on the shell thread, before any deadline can be checked.
//! brush-parser 0.4 takes exponential time on short unbalanced input (`( ( ( …` with 20 parens
//! takes 34 ms and doubles with each paren; a here-document body of 16 `$(` takes 3 s in its word
//! parser) and recurses once per nesting level without a bound, so `{ ` repeated 400 times
//! overflows the shell thread's 2 MiB stack and aborts the worker. Neither can be interrupted
//! from outside. This parser is recursive descent with one token of lookahead and no
//! backtracking: every character is read once (the lexer reads on demand, and a `$(...)` inside a
//! word is parsed by this same parser from the same lexer), so parsing is linear in the input.
//! Its recursion is bounded: every compound command and every opener inside a word (`$(`, `` ` ``,
//! `${`, `$((`), and every `(` or `!` of `[[ ]]`, takes a level from
//! [`MAX_PARSE_DEPTH`](super::lexer::MAX_PARSE_DEPTH), and past it the script is a syntax error,
//! so 10,000 `(` or `if` cost a few microseconds and a bounded stack. `shell-words` does not fit
//! either: it returns unquoted strings, so `'*.txt'` and `*.txt` become the same word.

use std::rc::Rc;

use super::lexer::{self, HereBody, Lexer, Part, Tok, Word, unsupported};

/// A list of and/or chains separated by `;` or newlines: a script, a body, a condition.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Script {
    pub items: Vec<AndOr>,
}

/// `a && b || c`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AndOr {
    pub first: Pipeline,
    pub rest: Vec<(Connector, Pipeline)>,
    /// Whether a newline (or the end of the list) follows it, not `;`: bash abandons the rest
    /// of the line being run up to here after an assignment to a read-only variable.
    pub ends_line: bool,
    /// Ended by `&`: an asynchronous list (see `Shell::run_background`).
    pub background: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Connector {
    And,
    Or,
}

/// `[!] a | b | c`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pipeline {
    pub negated: bool,
    /// `time [-p]`: its times go to stderr when it ends (`Some(true)`: POSIX's format).
    pub timed: Option<bool>,
    pub commands: Vec<Command>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Command {
    Simple(Simple),
    Compound {
        body: Box<Compound>,
        redirects: Vec<Redirect>,
    },
    /// Defines a function when it runs.
    Function(Rc<Function>),
}

/// `name() body`: `body` is a compound command with its redirections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Function {
    pub name: String,
    pub body: Command,
}

/// `NAME=value ... word ... redirection ...` in any order after the assignments.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Simple {
    pub assigns: Vec<(String, Word)>,
    /// `NAME=(...)`, `NAME[i]=value` and their `+=` before the words.
    pub arrays: Vec<ArrayAssign>,
    /// `declare`/`local`/`typeset NAME=(...)`: the name stays a word of the command, and the
    /// list is assigned once the command has run.
    pub declared: Vec<ArrayAssign>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
}

/// An assignment to an indexed array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ArrayAssign {
    pub name: String,
    /// `+=`: the list goes after the last element; the value is appended to the element's.
    pub append: bool,
    pub value: ArrayValue,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ArrayValue {
    /// `(word [i]=word ...)`: each word may give its index (an arithmetic word).
    List(Vec<(Option<Word>, Word)>),
    /// `NAME[i]=word`.
    Element(Word, Word),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Compound {
    /// `{ list; }`
    Group(Script),
    /// `( list )`: runs in a copy of the shell's state.
    Subshell(Script),
    /// `if c1; then b1; elif c2; then b2; else b3; fi`
    If {
        branches: Vec<(Script, Script)>,
        otherwise: Option<Script>,
    },
    /// `for var [in words]; do body; done` (no `in`: the positional parameters).
    For {
        var: String,
        words: Option<Vec<Word>>,
        body: Script,
    },
    /// `for ((init; cond; step)); do body; done`
    ArithFor {
        init: Word,
        cond: Word,
        step: Word,
        body: Script,
    },
    /// `while cond; do body; done`, or `until` when `until`.
    Loop {
        until: bool,
        cond: Script,
        body: Script,
    },
    /// `case word in pattern|pattern) body;; ... esac`
    Case { word: Word, arms: Vec<CaseArm> },
    /// `(( expression ))`
    Arith(Word),
    /// `[[ expression ]]`
    Cond(Cond),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CaseArm {
    pub patterns: Vec<Word>,
    pub body: Script,
    pub end: CaseEnd,
}

/// How a `case` arm ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CaseEnd {
    /// `;;`: the `case` is done.
    Break,
    /// `;&`: the next arm's body runs too.
    FallThrough,
    /// `;;&`: the next arms' patterns are tried too.
    TryNext,
}

/// The expression of `[[ ... ]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cond {
    Or(Box<Cond>, Box<Cond>),
    And(Box<Cond>, Box<Cond>),
    Not(Box<Cond>),
    /// `-f word`, `-z word`...
    Unary(String, Word),
    /// `a == pattern`, `a =~ regex`, `a -lt b`, `a < b`...
    Binary(Word, String, Word),
    /// `word`: true when not empty.
    Word(Word),
}

/// One redirection of file descriptor `fd` (0, 1 or 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    pub fd: u32,
    pub kind: RedirectKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RedirectKind {
    /// `< file`
    Read(Word),
    /// `> file`, or `>> file` when `append`; with `both` (`&> file`, `&>> file`, `>& file`)
    /// stdout and stderr go there.
    Write {
        target: Word,
        append: bool,
        both: bool,
    },
    /// `n>&m`: `fd` becomes a copy of `m`.
    Dup(u32),
    /// `n>&-`
    Close,
    /// `<<EOF` (the body as written) or `<<< word` (the word and, with `newline`, a newline).
    Here { body: HereBody, newline: bool },
}

/// Binary operators of `[[ ]]` written as words.
const COND_BINARY: [&str; 13] = [
    "=", "==", "!=", "=~", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef",
];

/// Unary operators of `[[ ]]`.
const COND_UNARY: [&str; 17] = [
    "-e", "-f", "-d", "-s", "-r", "-w", "-x", "-L", "-h", "-z", "-n", "-p", "-S", "-b", "-c", "-v",
    "-a",
];

/// Parses a script.
///
/// # Errors
/// A bash-like message (`syntax error near unexpected token ...`, or what is not supported).
pub(crate) fn parse(src: &str) -> Result<Script, String> {
    parse_at_depth(src, 0)
}

/// Parses a script found inside another at nesting `depth` (backquotes, `eval`).
///
/// # Errors
/// As [`parse`].
pub(crate) fn parse_at_depth(src: &str, depth: usize) -> Result<Script, String> {
    let mut lx = Lexer::new(src, depth);
    let mut p = Parser {
        lx: &mut lx,
        peeked: None,
    };
    let script = p.list(&[])?;
    match p.next()? {
        Tok::Eof => Ok(script),
        other => Err(unexpected(&other)),
    }
}

/// The script of a `$(...)` whose `$(` the lexer just read, through its `)`.
///
/// # Errors
/// As [`parse`]; an unclosed `$(` is an unexpected end of file.
pub(crate) fn parse_nested(lx: &mut Lexer) -> Result<Script, String> {
    let mut p = Parser { lx, peeked: None };
    let script = p.list(&[")"])?;
    match p.next()? {
        Tok::Op(")") => Ok(script),
        other => Err(unexpected(&other)),
    }
}

fn unexpected(tok: &Tok) -> String {
    let text = match tok {
        Tok::Eof => return "syntax error: unexpected end of file".into(),
        Tok::Op(op) => op.to_string(),
        Tok::Newline => "newline".into(),
        Tok::Word(w) => w.plain().unwrap_or("word").into(),
        Tok::IoNumber(n) => n.to_string(),
        Tok::HereDoc(_) => "<<".into(),
    };
    format!("syntax error near unexpected token `{text}'")
}

struct Parser<'l> {
    lx: &'l mut Lexer,
    peeked: Option<Tok>,
}

impl Parser<'_> {
    fn peek(&mut self) -> Result<&Tok, String> {
        if self.peeked.is_none() {
            self.peeked = Some(self.lx.next_token()?);
        }
        Ok(self.peeked.as_ref().unwrap_or(&Tok::Eof))
    }

    fn next(&mut self) -> Result<Tok, String> {
        match self.peeked.take() {
            Some(t) => Ok(t),
            None => self.lx.next_token(),
        }
    }

    /// Whether the next token is the unquoted word `word`.
    fn peek_is(&mut self, word: &str) -> Result<bool, String> {
        Ok(matches!(self.peek()?, Tok::Word(w) if w.plain() == Some(word)))
    }

    fn skip_newlines(&mut self) -> Result<(), String> {
        while *self.peek()? == Tok::Newline {
            self.next()?;
        }
        Ok(())
    }

    /// Consumes the reserved word (or operator) `what`, or fails on what is there instead.
    fn expect(&mut self, what: &str) -> Result<(), String> {
        let tok = self.next()?;
        let found = match &tok {
            Tok::Word(w) => w.plain() == Some(what),
            Tok::Op(op) => *op == what,
            _ => false,
        };
        if found { Ok(()) } else { Err(unexpected(&tok)) }
    }

    /// Whether the next token ends the list being read: the end of input, or one of `ends`
    /// (reserved words and operators) in command position.
    fn at_end(&mut self, ends: &[&str]) -> Result<bool, String> {
        Ok(match self.peek()? {
            Tok::Eof => true,
            Tok::Word(w) => w.plain().is_some_and(|t| ends.contains(&t)),
            Tok::Op(op) => ends.contains(op),
            _ => false,
        })
    }

    /// A list up to one of `ends` (not consumed), possibly empty.
    fn list(&mut self, ends: &[&str]) -> Result<Script, String> {
        let mut items = Vec::new();
        loop {
            // A `;` alone on a later line is let through.
            while *self.peek()? == Tok::Newline
                || (!items.is_empty() && *self.peek()? == Tok::Op(";"))
            {
                self.next()?;
            }
            if self.at_end(ends)? {
                return Ok(Script { items });
            }
            let mut item = self.and_or()?;
            match self.peek()?.clone() {
                Tok::Op(separator @ (";" | "&")) => {
                    self.next()?;
                    item.background = separator == "&";
                    // `a; ;` and `a &;` are errors in bash too.
                    if *self.peek()? == Tok::Op(";") {
                        return Err(unexpected(&Tok::Op(";")));
                    }
                    // `a;` and `a &` at the end of a line end it.
                    item.ends_line = *self.peek()? == Tok::Newline || self.at_end(ends)?;
                }
                Tok::Newline => item.ends_line = true,
                _ if self.at_end(ends)? => {
                    item.ends_line = true;
                    items.push(item);
                    return Ok(Script { items });
                }
                _ => return Err(unexpected(&self.next()?)),
            }
            items.push(item);
        }
    }

    /// A list that must have at least one command (bodies and conditions).
    fn body(&mut self, ends: &[&str]) -> Result<Script, String> {
        let script = self.list(ends)?;
        if script.items.is_empty() {
            return Err(unexpected(&self.next()?));
        }
        Ok(script)
    }

    fn and_or(&mut self) -> Result<AndOr, String> {
        let first = self.pipeline()?;
        let mut rest = Vec::new();
        loop {
            let connector = match self.peek()? {
                Tok::Op("&&") => Connector::And,
                Tok::Op("||") => Connector::Or,
                _ => {
                    return Ok(AndOr {
                        first,
                        rest,
                        ends_line: false,
                        background: false,
                    });
                }
            };
            self.next()?;
            self.skip_newlines()?;
            rest.push((connector, self.pipeline()?));
        }
    }

    fn pipeline(&mut self) -> Result<Pipeline, String> {
        let mut timed = None;
        if self.peek_is("time")? {
            self.next()?;
            timed = Some(self.peek_is("-p")?);
            if timed == Some(true) {
                self.next()?;
            }
        }
        let mut negated = false;
        while self.peek_is("!")? {
            negated = !negated;
            self.next()?;
        }
        // `time` with no pipeline times nothing (bash prints zeros).
        let nothing = timed.is_some()
            && !negated
            && matches!(
                self.peek()?,
                Tok::Newline | Tok::Eof | Tok::Op(";" | "&" | ")" | ";;")
            );
        if nothing {
            return Ok(Pipeline {
                negated,
                timed,
                commands: vec![Command::Simple(Simple::default())],
            });
        }
        let mut commands = vec![self.command()?];
        while let Tok::Op(op @ ("|" | "|&")) = *self.peek()? {
            self.next()?;
            // `a |& b` is `a 2>&1 | b`.
            if op == "|&"
                && let Some(last) = commands.last_mut()
            {
                let dup = Redirect {
                    fd: 2,
                    kind: RedirectKind::Dup(1),
                };
                match last {
                    Command::Simple(s) => s.redirects.push(dup),
                    Command::Compound { redirects, .. } => redirects.push(dup),
                    Command::Function(_) => {}
                }
            }
            self.skip_newlines()?;
            commands.push(self.command()?);
        }
        Ok(Pipeline {
            negated,
            timed,
            commands,
        })
    }

    fn command(&mut self) -> Result<Command, String> {
        let reserved = match self.peek()? {
            Tok::Word(w) => w.plain().map(str::to_string),
            Tok::Op("(") => Some("(".to_string()),
            _ => None,
        };
        let body = match reserved.as_deref() {
            Some("if") => self.compound(Self::if_clause)?,
            Some("for") => self.compound(Self::for_clause)?,
            Some("while" | "until") => self.compound(Self::loop_clause)?,
            Some("case") => self.compound(Self::case_clause)?,
            Some("{") => self.compound(|p| {
                p.next()?;
                let body = p.body(&["}"])?;
                p.expect("}")?;
                Ok(Compound::Group(body))
            })?,
            Some("(") => self.compound(|p| {
                p.next()?;
                if p.lx.next_char() == Some('(') {
                    // `((`: an arithmetic command.
                    p.lx.skip_char();
                    return Ok(Compound::Arith(p.lx.arith_body()?));
                }
                let body = p.body(&[")"])?;
                p.expect(")")?;
                Ok(Compound::Subshell(body))
            })?,
            Some("[[") => self.compound(|p| {
                p.next()?;
                let cond = p.cond_or()?;
                p.expect("]]")?;
                Ok(Compound::Cond(cond))
            })?,
            Some("function") => {
                self.next()?;
                let name = match self.next()? {
                    Tok::Word(w) if w.plain().is_some() => w.plain().unwrap_or("").to_string(),
                    other => return Err(unexpected(&other)),
                };
                if *self.peek()? == Tok::Op("(") {
                    self.next()?;
                    self.expect(")")?;
                }
                return self.function_body(name);
            }
            Some("select") => return Err(unsupported("`select`")),
            Some("coproc") => return Err(unsupported("`coproc`")),
            Some(w @ ("then" | "else" | "elif" | "fi" | "do" | "done" | "esac" | "}" | "]]")) => {
                return Err(format!("syntax error near unexpected token `{w}'"));
            }
            _ => return self.simple(),
        };
        let mut redirects = Vec::new();
        while let Some(r) = self.maybe_redirect()? {
            redirects.push(r);
        }
        Ok(Command::Compound {
            body: Box::new(body),
            redirects,
        })
    }

    /// A compound command, one nesting level deeper.
    fn compound(
        &mut self,
        parse: impl FnOnce(&mut Self) -> Result<Compound, String>,
    ) -> Result<Compound, String> {
        self.lx.enter()?;
        let body = parse(self)?;
        self.lx.leave();
        Ok(body)
    }

    fn function_body(&mut self, name: String) -> Result<Command, String> {
        self.skip_newlines()?;
        let body = self.command()?;
        if !matches!(body, Command::Compound { .. }) {
            return Err(format!(
                "syntax error: the body of function `{name}' must be a compound command ({{ ...; }})"
            ));
        }
        Ok(Command::Function(Rc::new(Function { name, body })))
    }

    fn if_clause(&mut self) -> Result<Compound, String> {
        self.next()?;
        let mut branches = Vec::new();
        let mut otherwise = None;
        loop {
            let cond = self.body(&["then"])?;
            self.expect("then")?;
            let then = self.body(&["elif", "else", "fi"])?;
            branches.push((cond, then));
            match self.next()? {
                Tok::Word(w) if w.plain() == Some("elif") => continue,
                Tok::Word(w) if w.plain() == Some("else") => {
                    otherwise = Some(self.body(&["fi"])?);
                    self.expect("fi")?;
                }
                Tok::Word(w) if w.plain() == Some("fi") => {}
                other => return Err(unexpected(&other)),
            }
            return Ok(Compound::If {
                branches,
                otherwise,
            });
        }
    }

    /// `do list done`.
    fn do_group(&mut self) -> Result<Script, String> {
        self.skip_newlines()?;
        self.expect("do")?;
        let body = self.body(&["done"])?;
        self.expect("done")?;
        Ok(body)
    }

    fn for_clause(&mut self) -> Result<Compound, String> {
        self.next()?;
        if *self.peek()? == Tok::Op("(") && self.lx.next_char() == Some('(') {
            self.next()?;
            self.lx.skip_char();
            let header = self.lx.arith_body()?;
            let [init, cond, step] = split_arith_for(header)?;
            if *self.peek()? == Tok::Op(";") {
                self.next()?;
            }
            let body = self.do_group()?;
            return Ok(Compound::ArithFor {
                init,
                cond,
                step,
                body,
            });
        }
        let var = match self.next()? {
            Tok::Word(w) if w.plain().is_some_and(lexer::is_name) => {
                w.plain().unwrap_or("").to_string()
            }
            Tok::Word(_) => return Err("syntax error: `for': not a valid identifier".into()),
            other => return Err(unexpected(&other)),
        };
        self.skip_newlines()?;
        let mut words = None;
        if self.peek_is("in")? {
            self.next()?;
            let mut list = Vec::new();
            loop {
                match self.next()? {
                    Tok::Word(w) => list.push(w),
                    Tok::Op(";") | Tok::Newline => break,
                    other => return Err(unexpected(&other)),
                }
            }
            words = Some(list);
        } else if *self.peek()? == Tok::Op(";") {
            self.next()?;
        }
        let body = self.do_group()?;
        Ok(Compound::For { var, words, body })
    }

    fn loop_clause(&mut self) -> Result<Compound, String> {
        let until = matches!(self.next()?, Tok::Word(w) if w.plain() == Some("until"));
        let cond = self.body(&["do"])?;
        let body = self.do_group()?;
        Ok(Compound::Loop { until, cond, body })
    }

    fn case_clause(&mut self) -> Result<Compound, String> {
        self.next()?;
        let word = match self.next()? {
            Tok::Word(w) => w,
            other => return Err(unexpected(&other)),
        };
        self.skip_newlines()?;
        self.expect("in")?;
        let mut arms = Vec::new();
        loop {
            self.skip_newlines()?;
            if self.peek_is("esac")? {
                self.next()?;
                return Ok(Compound::Case { word, arms });
            }
            if *self.peek()? == Tok::Op("(") {
                self.next()?;
            }
            let mut patterns = Vec::new();
            loop {
                match self.next()? {
                    Tok::Word(w) => patterns.push(w),
                    other => return Err(unexpected(&other)),
                }
                match self.next()? {
                    Tok::Op("|") => {}
                    Tok::Op(")") => break,
                    other => return Err(unexpected(&other)),
                }
            }
            let body = self.list(&[";;", ";&", ";;&", "esac"])?;
            let end = match self.peek()? {
                Tok::Op(";;") => CaseEnd::Break,
                Tok::Op(";&") => CaseEnd::FallThrough,
                Tok::Op(";;&") => CaseEnd::TryNext,
                Tok::Word(_) => {
                    arms.push(CaseArm {
                        patterns,
                        body,
                        end: CaseEnd::Break,
                    });
                    continue;
                }
                _ => return Err(unexpected(&self.next()?)),
            };
            self.next()?;
            arms.push(CaseArm {
                patterns,
                body,
                end,
            });
        }
    }

    fn cond_or(&mut self) -> Result<Cond, String> {
        let mut left = self.cond_and()?;
        while *self.skip_cond_newlines()? == Tok::Op("||") {
            self.next()?;
            let right = self.cond_and()?;
            left = Cond::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn cond_and(&mut self) -> Result<Cond, String> {
        let mut left = self.cond_not()?;
        while *self.skip_cond_newlines()? == Tok::Op("&&") {
            self.next()?;
            let right = self.cond_not()?;
            left = Cond::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn skip_cond_newlines(&mut self) -> Result<&Tok, String> {
        self.skip_newlines()?;
        self.peek()
    }

    fn cond_not(&mut self) -> Result<Cond, String> {
        self.skip_newlines()?;
        if self.peek_is("!")? {
            self.next()?;
            self.lx.enter()?;
            let inner = self.cond_not()?;
            self.lx.leave();
            return Ok(Cond::Not(Box::new(inner)));
        }
        if *self.peek()? == Tok::Op("(") {
            self.next()?;
            self.lx.enter()?;
            let inner = self.cond_or()?;
            self.lx.leave();
            self.skip_newlines()?;
            self.expect(")")?;
            return Ok(inner);
        }
        let first = match self.next()? {
            Tok::Word(w) if w.plain() != Some("]]") => w,
            other => return Err(unexpected(&other)),
        };
        if let Some(op) = first.plain().filter(|op| COND_UNARY.contains(op)) {
            let operand_follows = matches!(self.peek()?, Tok::Word(w) if w.plain() != Some("]]"));
            if operand_follows {
                let op = op.to_string();
                let Tok::Word(arg) = self.next()? else {
                    return Err("syntax error in conditional expression".into());
                };
                return Ok(Cond::Unary(op, arg));
            }
        }
        let op = match self.peek()? {
            Tok::Word(w) => w
                .plain()
                .filter(|op| COND_BINARY.contains(op))
                .map(str::to_string),
            Tok::Op(op @ ("<" | ">")) => Some(op.to_string()),
            _ => None,
        };
        let Some(op) = op else {
            return Ok(Cond::Word(first));
        };
        self.next()?;
        let right = if op == "=~" {
            self.lx.regex_word()?
        } else {
            match self.next()? {
                Tok::Word(w) => w,
                other => return Err(unexpected(&other)),
            }
        };
        Ok(Cond::Binary(first, op, right))
    }

    fn simple(&mut self) -> Result<Command, String> {
        let mut cmd = Simple::default();
        loop {
            if let Some(r) = self.maybe_redirect()? {
                cmd.redirects.push(r);
                continue;
            }
            match self.peek()? {
                Tok::Word(_) => {}
                other if cmd == Simple::default() => {
                    let other = other.clone();
                    return Err(unexpected(&other));
                }
                _ => return Ok(Command::Simple(cmd)),
            }
            let Tok::Word(w) = self.next()? else {
                return Err("syntax error".into());
            };
            if let Some((name, append)) = array_start(&w)
                && *self.peek()? == Tok::Op("(")
            {
                let declaration =
                    |c: &str| matches!(c, "declare" | "typeset" | "local" | "export" | "readonly");
                if !(cmd.words.is_empty() || cmd.words[0].plain().is_some_and(declaration)) {
                    return Err(unexpected(&Tok::Op("(")));
                }
                let list = ArrayAssign {
                    name: name.clone(),
                    append,
                    value: ArrayValue::List(self.array_list()?),
                };
                if cmd.words.is_empty() {
                    cmd.arrays.push(list);
                    continue;
                }
                let declaring = (cmd.words[0].plain())
                    .is_some_and(|c| matches!(c, "declare" | "typeset" | "local" | "readonly"));
                if !declaring || append {
                    return Err(unsupported("an array list (`NAME=(...)`) as an argument"));
                }
                cmd.words.push(Word::lit(&name));
                cmd.declared.push(list);
                continue;
            }
            if cmd.words.is_empty() {
                if let Some(element) = element_assignment(&w) {
                    cmd.arrays.push(element);
                    continue;
                }
                if let Some(assign) = assignment(&w) {
                    cmd.assigns.push(assign);
                    continue;
                }
                if cmd.assigns.is_empty()
                    && cmd.redirects.is_empty()
                    && *self.peek()? == Tok::Op("(")
                {
                    let Some(name) = w.plain().map(str::to_string) else {
                        return Err(unexpected(&Tok::Op("(")));
                    };
                    self.next()?;
                    self.expect(")")?;
                    return self.function_body(name);
                }
            }
            cmd.words.push(w);
        }
    }

    /// The words of `NAME=(...)` from its `(` through its `)`, over lines.
    fn array_list(&mut self) -> Result<Vec<(Option<Word>, Word)>, String> {
        self.next()?;
        let mut items = Vec::new();
        loop {
            match self.next()? {
                Tok::Newline => {}
                Tok::Op(")") => return Ok(items),
                Tok::Word(w) => match subscripted(&w.parts, None) {
                    Some((index, false, value)) => items.push((Some(index), value)),
                    _ => items.push((None, w)),
                },
                other => return Err(unexpected(&other)),
            }
        }
    }

    /// A redirection if one comes next.
    fn maybe_redirect(&mut self) -> Result<Option<Redirect>, String> {
        let fd = match self.peek()? {
            Tok::IoNumber(fd) => Some(*fd),
            Tok::HereDoc(_)
            | Tok::Op("<" | ">" | ">|" | ">>" | ">&" | "<&" | "&>" | "&>>" | "<<<") => None,
            _ => return Ok(None),
        };
        if fd.is_some() {
            self.next()?;
        }
        self.redirect(fd).map(Some)
    }

    /// A redirection operator and its target; `fd` is the number written before it, if any.
    fn redirect(&mut self, fd: Option<u32>) -> Result<Redirect, String> {
        let op = match self.next()? {
            Tok::HereDoc(body) => {
                let kind = RedirectKind::Here {
                    body,
                    newline: false,
                };
                return checked(fd.unwrap_or(0), kind);
            }
            Tok::Op(op) => op,
            other => return Err(unexpected(&other)),
        };
        let target = match self.next()? {
            Tok::Word(w) => w,
            other => return Err(unexpected(&other)),
        };
        let write = |target, append, both| RedirectKind::Write {
            target,
            append,
            both,
        };
        let (fd, kind) = match op {
            "<" => (fd.unwrap_or(0), RedirectKind::Read(target)),
            ">" | ">|" => (fd.unwrap_or(1), write(target, false, false)),
            ">>" => (fd.unwrap_or(1), write(target, true, false)),
            "&>" => (1, write(target, false, true)),
            "&>>" => (1, write(target, true, true)),
            "<<<" => (
                fd.unwrap_or(0),
                RedirectKind::Here {
                    body: Rc::new(target.into()),
                    newline: true,
                },
            ),
            ">&" | "<&" => {
                let fd = fd.unwrap_or(if op == ">&" { 1 } else { 0 });
                match target.plain() {
                    Some("-") => (fd, RedirectKind::Close),
                    Some(n) if n.chars().all(|c| c.is_ascii_digit()) => {
                        (fd, RedirectKind::Dup(n.parse().unwrap_or(u32::MAX)))
                    }
                    // `>& file` is bash's old spelling of `&> file`.
                    _ if op == ">&" && fd == 1 => (1, write(target, false, true)),
                    _ => {
                        return Err(format!(
                            "syntax error: `{op}` needs a file descriptor number"
                        ));
                    }
                }
            }
            _ => return Err(unexpected(&Tok::Op(op))),
        };
        checked(fd, kind)
    }
}

/// `NAME=` or `NAME+=` (before a `(`): the name and whether it appends.
fn array_start(w: &Word) -> Option<(String, bool)> {
    let text = w.plain()?.strip_suffix('=')?;
    let (name, append) = match text.strip_suffix('+') {
        Some(name) => (name, true),
        None => (text, false),
    };
    lexer::is_name(name).then(|| (name.to_string(), append))
}

/// `NAME[i]=value` or `NAME[i]+=value`.
fn element_assignment(w: &Word) -> Option<ArrayAssign> {
    let text = leading_literal(w)?;
    let (name, rest) = text.split_once('[')?;
    if !lexer::is_name(name) {
        return None;
    }
    let (index, append, value) = subscripted(&w.parts, Some(rest))?;
    Some(ArrayAssign {
        name: name.to_string(),
        append,
        value: ArrayValue::Element(index, value),
    })
}

/// Splits `[i]=value` (`first`: the first part's text after its `[`, or `None` for a word
/// that starts with `[`) into the subscript, whether it is `+=`, and the value.
fn subscripted(parts: &[Part], first: Option<&str>) -> Option<(Word, bool, Word)> {
    let first = match first {
        Some(rest) => rest,
        None => match parts.first()? {
            Part::Lit {
                text,
                quoted: false,
            } => text.strip_prefix('[')?,
            _ => return None,
        },
    };
    let mut index = Word::default();
    for (i, part) in parts.iter().enumerate() {
        let text = match part {
            _ if i == 0 => first,
            Part::Lit {
                text,
                quoted: false,
            } => text.as_str(),
            other => {
                index.parts.push(other.clone());
                continue;
            }
        };
        let Some(close) = text.find(']') else {
            index.push_lit(text, false);
            continue;
        };
        let after = &text[close + 1..];
        let (append, rest) = match after.strip_prefix("+=") {
            Some(rest) => (true, rest),
            None => (false, after.strip_prefix('=')?),
        };
        index.push_lit(&text[..close], false);
        if index.parts.is_empty() {
            return None;
        }
        let mut value = Word::default();
        if !rest.is_empty() {
            value.push_lit(rest, false);
        }
        value.parts.extend(parts[i + 1..].iter().cloned());
        return Some((index, append, value));
    }
    None
}

/// Splits the header of `for ((init; cond; step))` at its two top-level `;`.
fn split_arith_for(header: Word) -> Result<[Word; 3], String> {
    let mut parts: Vec<Word> = vec![Word::default()];
    for part in header.parts {
        match part {
            Part::Lit {
                text,
                quoted: false,
            } => {
                let mut pieces = text.split(';');
                if let (Some(first), Some(last)) = (pieces.next(), parts.last_mut()) {
                    last.push_lit(first, false);
                }
                for piece in pieces {
                    parts.push(Word::lit(piece));
                }
            }
            other => {
                if let Some(last) = parts.last_mut() {
                    last.parts.push(other);
                }
            }
        }
    }
    <[Word; 3]>::try_from(parts)
        .map_err(|_| "syntax error: `for ((...))' needs three expressions separated by `;'".into())
}

/// Refuses descriptors past 9 (bash keeps those for itself, and scripts use 3 to 9).
fn checked(fd: u32, kind: RedirectKind) -> Result<Redirect, String> {
    let highest = match kind {
        RedirectKind::Dup(m) => fd.max(m),
        _ => fd,
    };
    if highest > MAX_FD {
        return Err(format!(
            "only file descriptors 0 to {MAX_FD} can be redirected (got {highest})"
        ));
    }
    Ok(Redirect { fd, kind })
}

/// The highest file descriptor a redirection may name.
pub(crate) const MAX_FD: u32 = 9;

/// Whether `w` is written `NAME=value` (an argument of `local` or `export`).
pub(crate) fn assignment_word(w: &Word) -> bool {
    assignment(w).is_some()
}

/// The unquoted text a word starts with, where an assignment's name must be.
fn leading_literal(w: &Word) -> Option<&String> {
    match w.parts.first()? {
        Part::Lit {
            text,
            quoted: false,
        } => Some(text),
        _ => None,
    }
}

/// `NAME=value` at the start of a command: the name must be unquoted and valid.
fn assignment(w: &Word) -> Option<(String, Word)> {
    let text = leading_literal(w)?;
    let (name, rest) = text.split_once('=')?;
    // `NAME+=value` appends: it is `NAME=${NAME}value`.
    let (name, append) = match name.strip_suffix('+') {
        Some(name) => (name, true),
        None => (name, false),
    };
    if !lexer::is_name(name) {
        return None;
    }
    let mut value = w.clone();
    if rest.is_empty() {
        value.parts.remove(0);
    } else {
        value.parts[0] = Part::Lit {
            text: rest.to_string(),
            quoted: false,
        };
    }
    if append {
        value.parts.insert(
            0,
            Part::Param {
                name: name.to_string(),
                quoted: true,
                op: None,
            },
        );
    }
    Some((name.to_string(), value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn simple(s: &Script, item: usize, stage: usize) -> &Simple {
        match &s.items[item].first.commands[stage] {
            Command::Simple(c) => c,
            other => panic!("{other:?}"),
        }
    }

    fn words(cmd: &Simple) -> Vec<&str> {
        cmd.words.iter().map(|w| w.plain().unwrap_or("?")).collect()
    }

    fn write(target: &str, append: bool, both: bool) -> RedirectKind {
        RedirectKind::Write {
            target: Word::lit(target),
            append,
            both,
        }
    }

    fn compound(src: &str) -> Compound {
        match &parse(src).unwrap().items[0].first.commands[0] {
            Command::Compound { body, .. } => (**body).clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn lists_and_pipelines() {
        let s = parse("a | b x && c || d; e\n\nf").unwrap();
        assert_eq!(s.items.len(), 3);
        let first = &s.items[0];
        assert_eq!(first.first.commands.len(), 2);
        assert_eq!(words(simple(&s, 0, 1)), ["b", "x"]);
        assert_eq!(first.rest[0].0, Connector::And);
        assert_eq!(first.rest[1].0, Connector::Or);
        assert_eq!(parse("").unwrap().items.len(), 0);
        assert_eq!(parse("a &&\n b |\n c").unwrap().items.len(), 1);
        assert!(parse("! a").unwrap().items[0].first.negated);
        assert!(!parse("! ! a").unwrap().items[0].first.negated);
        assert_eq!(parse("a;").unwrap().items.len(), 1);
    }

    #[test]
    fn assignments_only_before_words() {
        let s = parse("A=1 B= echo C=2").unwrap();
        let c = simple(&s, 0, 0);
        assert_eq!(c.assigns.len(), 2);
        assert_eq!(c.assigns[1].1.parts.len(), 0);
        assert_eq!(words(c), ["echo", "C=2"]);
        let s = parse("'A'=1").unwrap();
        assert!(simple(&s, 0, 0).assigns.is_empty());
        let s = parse("A=x=y").unwrap();
        assert_eq!(simple(&s, 0, 0).assigns[0].1.plain(), Some("x=y"));
    }

    #[test]
    fn redirections() {
        let s = parse("cmd >o 2>>e <i 2>&1 &>b >&2 |& x").unwrap();
        let r = &simple(&s, 0, 0).redirects;
        assert_eq!((r[0].fd, &r[0].kind), (1, &write("o", false, false)));
        assert_eq!((r[1].fd, &r[1].kind), (2, &write("e", true, false)));
        assert!(matches!(r[2].kind, RedirectKind::Read(_)));
        assert_eq!(
            r[3],
            Redirect {
                fd: 2,
                kind: RedirectKind::Dup(1)
            }
        );
        assert_eq!((r[4].fd, &r[4].kind), (1, &write("b", false, true)));
        assert_eq!(r[5].kind, RedirectKind::Dup(2));
        assert_eq!(
            r[6],
            Redirect {
                fd: 2,
                kind: RedirectKind::Dup(1)
            }
        );
        let s = parse("a &>>b >&f 2>&- >|c <<<w").unwrap();
        let r = &simple(&s, 0, 0).redirects;
        assert_eq!(r[0].kind, write("b", true, true));
        assert_eq!(r[1].kind, write("f", false, true));
        assert_eq!((r[2].fd, &r[2].kind), (2, &RedirectKind::Close));
        assert_eq!(r[3].kind, write("c", false, false));
        assert!(matches!(
            r[4].kind,
            RedirectKind::Here { newline: true, .. }
        ));
        assert!(parse("a 3>x 2>&9").is_ok());
        assert!(
            parse("a 10>x")
                .unwrap_err()
                .contains("file descriptors 0 to 9")
        );
        assert!(
            parse("a 2>&10")
                .unwrap_err()
                .contains("file descriptors 0 to 9")
        );
        assert!(
            parse("a 2>&f")
                .unwrap_err()
                .contains("needs a file descriptor")
        );
        assert!(parse("a >").unwrap_err().contains("unexpected"));
        assert!(parse(">x").is_ok());
        match &parse("{ a; } > o 2>&1").unwrap().items[0].first.commands[0] {
            Command::Compound { redirects, .. } => assert_eq!(redirects.len(), 2),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn compound_commands() {
        assert!(matches!(
            compound("if a; then b; elif c\nthen d; else e; fi"),
            Compound::If { ref branches, otherwise: Some(_) } if branches.len() == 2
        ));
        assert!(matches!(
            compound("for i in 1 2; do echo $i; done"),
            Compound::For { ref var, words: Some(ref w), .. } if var == "i" && w.len() == 2
        ));
        assert!(matches!(
            compound("for i\ndo echo; done"),
            Compound::For { words: None, .. }
        ));
        assert!(matches!(
            compound("for ((i=0; i<3; i++)); do echo; done"),
            Compound::ArithFor { .. }
        ));
        assert!(matches!(
            compound("until a; do b; done"),
            Compound::Loop { until: true, .. }
        ));
        match compound("case $x in (a|b) echo;; *) ;& c) x ;;& esac") {
            Compound::Case { arms, .. } => {
                assert_eq!(arms.len(), 3);
                assert_eq!(arms[0].patterns.len(), 2);
                assert_eq!(arms[1].end, CaseEnd::FallThrough);
                assert_eq!(arms[2].end, CaseEnd::TryNext);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(compound("case a in esac"), Compound::Case { .. }));
        assert!(matches!(compound("{ a; b; }"), Compound::Group(_)));
        assert!(matches!(compound("(a; b)"), Compound::Subshell(_)));
        assert!(matches!(compound("((x = 1 + (2)))"), Compound::Arith(_)));
        assert!(matches!(
            compound("[[ -f x && ( a == b* || ! c =~ ^(x|y)$ ) ]]"),
            Compound::Cond(Cond::And(..))
        ));
        let s = parse("f() { a; }; function g { b; }; function h() (c)").unwrap();
        assert_eq!(s.items.len(), 3);
        assert!(matches!(
            &s.items[2].first.commands[0],
            Command::Function(f) if f.name == "h"
        ));
        assert!(parse("echo if then }").is_ok());
    }

    #[test]
    fn errors() {
        for (src, says) in [
            ("if true; then x; fi; fi", "`fi'"),
            ("if true; then fi", "`fi'"),
            ("for i in 1 2; do done", "`done'"),
            ("while a; do b", "end of file"),
            ("{ a", "end of file"),
            ("(a", "end of file"),
            ("f() a", "compound"),
            ("sleep 1 &;", "`;'"),
            ("& a", "`&'"),
            ("| a", "`|'"),
            ("a &&", "end of file"),
            ("a ;; b", "`;;'"),
            ("; a", "`;'"),
            ("a; ; b", "`;'"),
            ("a\n\n|b", "`|'"),
            ("select x in a; do b; done", "not supported"),
            ("coproc a", "not supported"),
            ("a=(1 2", "end of file"),
            ("a=(1 ; 2)", "`;'"),
            ("export a=(1)", "not supported"),
            ("echo a=(1)", "`('"),
            ("echo $(ls", "end of file"),
            ("[[ a", "end of file"),
            ("for ((i=0; i<3)); do a; done", "three expressions"),
            ("case a in x) b;; y", "end of file"),
        ] {
            let err = parse(src).unwrap_err();
            assert!(err.contains(says), "{src}: {err}");
        }
        assert!(parse("a\n; b").is_ok());
        assert!(parse("a;\n;\n;b").is_ok());
        assert!(parse("echo }").is_ok());
    }

    /// Fuzz target: any command line a client sends is tokenized and parsed to a script or an
    /// error message, never a panic or a runaway recursion (the shell runs inside the worker,
    /// so a crash there would cost the session its interpreter).
    #[test]
    fn fuzz_shell_parser() {
        let seconds = std::env::var("SANDBOX_FUZZ_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(5);
        // Shell syntax is mostly ASCII punctuation and reserved words: build inputs from them
        // as often as from arbitrary text, so quotes, operators and nesting get exercised.
        const PIECES: &[&str] = &[
            " ",
            "\t",
            "\n",
            "|",
            "&",
            ";",
            "<",
            ">",
            "(",
            ")",
            "$",
            "`",
            "'",
            "\"",
            "\\",
            "*",
            "?",
            "[",
            "]",
            "{",
            "}",
            "=",
            "#",
            "~",
            "!",
            "-",
            "a",
            "x",
            "0",
            "1",
            "/",
            ".",
            ":",
            "%",
            "/",
            ",",
            "..",
            "if ",
            "then ",
            "elif ",
            "else ",
            "fi",
            "for ",
            "in ",
            "do ",
            "done",
            "while ",
            "until ",
            "case ",
            "esac",
            ";;",
            ";&",
            "$(",
            "$((",
            "((",
            "))",
            "${",
            "[[ ",
            " ]]",
            "=~",
            "function ",
            "f() ",
            "<<E\n",
            "\nE\n",
            "<<-'E'\n",
        ];
        bolero::check!()
            .with_type::<(bool, Vec<u8>)>()
            .with_test_time(std::time::Duration::from_secs(seconds))
            .for_each(|(mapped, bytes)| {
                let text = if *mapped {
                    bytes
                        .iter()
                        .map(|b| PIECES[usize::from(*b) % PIECES.len()])
                        .collect()
                } else {
                    String::from_utf8_lossy(bytes).into_owned()
                };
                let _ = parse(&text);
            });
    }

    /// Inputs that hang or overflow recursive shell parsers (see the module docs) are refused
    /// at once.
    #[test]
    fn deep_nesting_is_refused_in_linear_time() {
        let started = std::time::Instant::now();
        for src in [
            "( ".repeat(100_000),
            "{ ".repeat(100_000),
            "if a; then ".repeat(20_000),
            "while a; do ".repeat(20_000),
            "$(".repeat(100_000),
            "`".repeat(100_001),
            "$((".repeat(100_000),
            "((".repeat(100_000),
            "${x:-".repeat(100_000),
            "[[ ".to_string() + &"! ( ".repeat(100_000),
            format!("cat <<E\n{}\nE", "$(".repeat(100_000)),
            format!("cat <<E\n{}\nE", "${".repeat(100_000)),
            format!("cat <<E\n{}}}\nE", "${".repeat(100_000)),
            format!("cat <<E\n{}\nE", "${X/}".repeat(100_000)),
            "a | ".repeat(100_000) + "a",
            "{$<".repeat(100_000),
            "f() { ".repeat(100_000),
            "case a in a) ".repeat(100_000),
        ] {
            // Some of these are valid scripts (`${X/}` repeated): only the time matters.
            let _ = parse(&src);
        }
        for src in [
            "( ".repeat(100_000),
            "$(".repeat(100_000),
            "if a; then ".repeat(100),
        ] {
            assert!(parse(&src).unwrap_err().contains("nested too deeply"));
        }
        let long = "echo a; ".repeat(100_000);
        assert_eq!(parse(&long).unwrap().items.len(), 100_000);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }
}
