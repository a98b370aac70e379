//! The grammar: lists of and/or chains of pipelines of simple commands with assignments and
//! redirections.
//!
//! The whole script is parsed before anything runs, so a syntax error anywhere means nothing ran.
//! Control flow (`if`, `for`, `while`, `case`, functions, subshells, background jobs) is refused
//! with a message pointing at the interpreters, which is where an agent should put logic.

use super::lexer::{self, Op, Tok, Tokens, USE_INTERPRETER, Word};

/// A whole script: and/or lists separated by `;` or newlines.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Script {
    pub items: Vec<AndOr>,
}

/// `a && b || c`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AndOr {
    pub first: Pipeline,
    pub rest: Vec<(Connector, Pipeline)>,
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
    pub commands: Vec<Command>,
}

/// `NAME=value ... word ... redirection ...` in any order after the assignments.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Command {
    pub assigns: Vec<(String, Word)>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
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
    /// `> file`
    Write(Word),
    /// `>> file`
    Append(Word),
    /// `n>&m`: `fd` becomes a copy of `m`.
    Dup(u32),
    /// `n>&-`
    Close,
    /// `&> file` / `>& file`: stdout and stderr.
    WriteBoth(Word),
    /// `&>> file`
    AppendBoth(Word),
    /// `<<EOF` (the body) or `<<< word` (the word plus a newline).
    HereDoc(Word),
    HereString(Word),
}

/// Words that start control flow in a POSIX shell.
const RESERVED: [&str; 16] = [
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "function", "select", "{", "}",
];

/// Parses a script.
///
/// # Errors
/// A bash-like message (`syntax error near unexpected token ...`, or what is not supported).
pub(crate) fn parse(src: &str) -> Result<Script, String> {
    let Tokens { toks, bodies } = lexer::tokenize(src)?;
    let mut p = Parser {
        toks,
        bodies,
        pos: 0,
    };
    p.script()
}

struct Parser {
    toks: Vec<Tok>,
    bodies: Vec<Word>,
    pos: usize,
}

fn unexpected(tok: Option<&Tok>) -> String {
    match tok {
        None => "syntax error: unexpected end of file".into(),
        Some(Tok::Newline) => "syntax error near unexpected token `newline'".into(),
        Some(Tok::Op(Op::Amp)) => {
            format!("background jobs (`&`) are not supported; run commands one after another")
        }
        Some(Tok::Op(Op::LParen | Op::RParen)) => {
            format!("subshells and functions `( ... )` are not supported; {USE_INTERPRETER}")
        }
        Some(Tok::Op(Op::DSemi)) => format!("`case` is not supported; {USE_INTERPRETER}"),
        Some(Tok::Op(op)) => format!("syntax error near unexpected token `{}'", op.text()),
        Some(Tok::Word(w)) => format!(
            "syntax error near unexpected token `{}'",
            w.plain().unwrap_or("word")
        ),
        Some(Tok::IoNumber(n)) => format!("syntax error near unexpected token `{n}'"),
        Some(Tok::HereDoc(_)) => "syntax error near unexpected token `<<'".into(),
    }
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn eat_op(&mut self, op: Op) -> bool {
        if self.peek() == Some(&Tok::Op(op)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn skip_newlines(&mut self) {
        while self.peek() == Some(&Tok::Newline) {
            self.pos += 1;
        }
    }

    fn script(&mut self) -> Result<Script, String> {
        let mut items = Vec::new();
        loop {
            while matches!(self.peek(), Some(Tok::Newline | Tok::Op(Op::Semi))) {
                if self.peek() == Some(&Tok::Op(Op::Semi)) && items.is_empty() {
                    return Err(unexpected(self.peek()));
                }
                self.pos += 1;
            }
            if self.peek().is_none() {
                return Ok(Script { items });
            }
            items.push(self.and_or()?);
            match self.peek() {
                None | Some(Tok::Newline | Tok::Op(Op::Semi)) => {}
                other => return Err(unexpected(other)),
            }
            // `a;;` and `a; ;` are errors in bash too.
            if self.eat_op(Op::Semi) && self.peek() == Some(&Tok::Op(Op::Semi)) {
                return Err(unexpected(self.peek()));
            }
        }
    }

    fn and_or(&mut self) -> Result<AndOr, String> {
        let first = self.pipeline()?;
        let mut rest = Vec::new();
        loop {
            let connector = if self.eat_op(Op::AndIf) {
                Connector::And
            } else if self.eat_op(Op::OrIf) {
                Connector::Or
            } else {
                return Ok(AndOr { first, rest });
            };
            self.skip_newlines();
            rest.push((connector, self.pipeline()?));
        }
    }

    fn pipeline(&mut self) -> Result<Pipeline, String> {
        let mut negated = false;
        while let Some(Tok::Word(w)) = self.peek()
            && w.plain() == Some("!")
        {
            negated = !negated;
            self.pos += 1;
        }
        let mut commands = vec![self.command()?];
        loop {
            if self.eat_op(Op::Pipe) {
            } else if self.eat_op(Op::PipeBoth) {
                if let Some(last) = commands.last_mut() {
                    last.redirects.push(Redirect {
                        fd: 2,
                        kind: RedirectKind::Dup(1),
                    });
                }
            } else {
                return Ok(Pipeline { negated, commands });
            }
            self.skip_newlines();
            commands.push(self.command()?);
        }
    }

    fn command(&mut self) -> Result<Command, String> {
        let mut cmd = Command::default();
        loop {
            match self.peek() {
                Some(Tok::Word(w)) => {
                    let w = w.clone();
                    if cmd.words.is_empty() {
                        if let Some(text) = w.plain()
                            && RESERVED.contains(&text)
                        {
                            return Err(format!(
                                "`{text}` (control flow) is not supported; {USE_INTERPRETER}"
                            ));
                        }
                        if let Some(assign) = assignment(&w) {
                            cmd.assigns.push(assign);
                            self.pos += 1;
                            continue;
                        }
                    }
                    if cmd.words.is_empty()
                        && cmd.assigns.is_empty()
                        && self.toks.get(self.pos + 1) == Some(&Tok::Op(Op::LParen))
                    {
                        return Err(format!("functions are not supported; {USE_INTERPRETER}"));
                    }
                    cmd.words.push(w);
                    self.pos += 1;
                }
                Some(Tok::IoNumber(n)) => {
                    let fd = *n;
                    self.pos += 1;
                    let r = self.redirect(fd)?;
                    cmd.redirects.push(r);
                }
                Some(Tok::Op(
                    Op::Less
                    | Op::Great
                    | Op::DGreat
                    | Op::GreatAnd
                    | Op::LessAnd
                    | Op::AndGreat
                    | Op::AndDGreat
                    | Op::TLess,
                ))
                | Some(Tok::HereDoc(_)) => {
                    let r = self.redirect(u32::MAX)?;
                    cmd.redirects.push(r);
                }
                other => {
                    if cmd.words.is_empty() && cmd.assigns.is_empty() && cmd.redirects.is_empty() {
                        return Err(unexpected(other));
                    }
                    return Ok(cmd);
                }
            }
        }
    }

    /// A redirection operator and its target; `fd` is `u32::MAX` when no number was written.
    fn redirect(&mut self, fd: u32) -> Result<Redirect, String> {
        let tok = self.peek().cloned();
        self.pos += 1;
        let default_fd = |d: u32| if fd == u32::MAX { d } else { fd };
        let (fd, kind) = match tok {
            Some(Tok::HereDoc(i)) => (default_fd(0), RedirectKind::HereDoc(self.bodies[i].clone())),
            Some(Tok::Op(op)) => {
                let target = match self.peek() {
                    Some(Tok::Word(w)) => w.clone(),
                    other => return Err(unexpected(other)),
                };
                self.pos += 1;
                match op {
                    Op::Less => (default_fd(0), RedirectKind::Read(target)),
                    Op::Great => (default_fd(1), RedirectKind::Write(target)),
                    Op::DGreat => (default_fd(1), RedirectKind::Append(target)),
                    Op::TLess => (default_fd(0), RedirectKind::HereString(target)),
                    Op::AndGreat => (1, RedirectKind::WriteBoth(target)),
                    Op::AndDGreat => (1, RedirectKind::AppendBoth(target)),
                    Op::GreatAnd | Op::LessAnd => {
                        let fd = default_fd(if op == Op::GreatAnd { 1 } else { 0 });
                        match target.plain() {
                            Some("-") => (fd, RedirectKind::Close),
                            Some(n) if n.chars().all(|c| c.is_ascii_digit()) => {
                                (fd, RedirectKind::Dup(n.parse().unwrap_or(u32::MAX)))
                            }
                            _ if op == Op::GreatAnd && fd == 1 => {
                                (1, RedirectKind::WriteBoth(target))
                            }
                            _ => {
                                return Err(format!(
                                    "syntax error: `{}` needs a file descriptor number",
                                    op.text()
                                ));
                            }
                        }
                    }
                    _ => return Err(unexpected(Some(&Tok::Op(op)))),
                }
            }
            other => return Err(unexpected(other.as_ref())),
        };
        let dup_target = match kind {
            RedirectKind::Dup(m) => m,
            _ => 0,
        };
        if fd > 2 || dup_target > 2 {
            return Err(format!(
                "only file descriptors 0, 1 and 2 can be redirected (got {})",
                fd.max(dup_target)
            ));
        }
        Ok(Redirect { fd, kind })
    }
}

/// `NAME=value` at the start of a command: the name must be unquoted and valid.
fn assignment(w: &Word) -> Option<(String, Word)> {
    let lexer::Part::Lit {
        text,
        quoted: false,
    } = w.parts.first()?
    else {
        return None;
    };
    let eq = text.find('=')?;
    let name = &text[..eq];
    if !lexer::is_name(name) {
        return None;
    }
    let mut value = w.clone();
    let rest = text[eq + 1..].to_string();
    if rest.is_empty() {
        value.parts.remove(0);
    } else {
        value.parts[0] = lexer::Part::Lit {
            text: rest,
            quoted: false,
        };
    }
    Some((name.to_string(), value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(cmd: &Command) -> Vec<&str> {
        cmd.words.iter().map(|w| w.plain().unwrap_or("?")).collect()
    }

    #[test]
    fn lists_and_pipelines() {
        let s = parse("a | b x && c || d; e\n\nf").unwrap();
        assert_eq!(s.items.len(), 3);
        let first = &s.items[0];
        assert_eq!(first.first.commands.len(), 2);
        assert_eq!(words(&first.first.commands[1]), ["b", "x"]);
        assert_eq!(first.rest[0].0, Connector::And);
        assert_eq!(first.rest[1].0, Connector::Or);
        assert_eq!(parse("").unwrap().items.len(), 0);
        assert_eq!(parse("a &&\n b |\n c").unwrap().items.len(), 1);
        assert!(parse("! a").unwrap().items[0].first.negated);
    }

    #[test]
    fn assignments_only_before_words() {
        let s = parse("A=1 B= echo C=2").unwrap();
        let c = &s.items[0].first.commands[0];
        assert_eq!(c.assigns.len(), 2);
        assert_eq!(c.assigns[1].1.parts.len(), 0);
        assert_eq!(words(c), ["echo", "C=2"]);
        let s = parse("'A'=1").unwrap();
        assert!(s.items[0].first.commands[0].assigns.is_empty());
    }

    #[test]
    fn redirections() {
        let s = parse("cmd >o 2>>e <i 2>&1 &>b >&2 |& x").unwrap();
        let r = &s.items[0].first.commands[0].redirects;
        assert_eq!(r[0].fd, 1);
        assert!(matches!(r[0].kind, RedirectKind::Write(_)));
        assert_eq!(r[1].fd, 2);
        assert!(matches!(r[1].kind, RedirectKind::Append(_)));
        assert!(matches!(r[2].kind, RedirectKind::Read(_)));
        assert_eq!(
            r[3],
            Redirect {
                fd: 2,
                kind: RedirectKind::Dup(1)
            }
        );
        assert!(matches!(r[4].kind, RedirectKind::WriteBoth(_)));
        assert_eq!(
            r[5],
            Redirect {
                fd: 1,
                kind: RedirectKind::Dup(2)
            }
        );
        assert_eq!(
            r[6],
            Redirect {
                fd: 2,
                kind: RedirectKind::Dup(1)
            }
        );
        assert!(parse("a 3>x").unwrap_err().contains("file descriptors"));
        assert!(parse("a >").unwrap_err().contains("unexpected"));
        assert!(parse(">x").is_ok());
    }

    #[test]
    fn errors() {
        assert!(
            parse("if true; then x; fi")
                .unwrap_err()
                .contains("python -c or node -e")
        );
        assert!(
            parse("for i in 1 2; do echo; done")
                .unwrap_err()
                .contains("not supported")
        );
        assert!(parse("echo if").is_ok());
        assert!(parse("(ls)").unwrap_err().contains("subshells"));
        assert!(parse("f() { ls; }").unwrap_err().contains("not supported"));
        assert!(parse("sleep 1 &").unwrap_err().contains("background"));
        assert!(parse("| a").unwrap_err().contains("`|'"));
        assert!(parse("a &&").unwrap_err().contains("end of file"));
        assert!(parse("a ;; b").is_err());
        assert!(parse("; a").is_err());
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
        // Shell syntax is mostly ASCII punctuation: build inputs from it as often as from
        // arbitrary text, so quotes, operators and nesting get exercised.
        const ALPHABET: &[u8] = b" \t\n|&;<>()$`'\"\\*?[]{}=#~!-abcdefxyz0189./";
        bolero::check!()
            .with_type::<(bool, Vec<u8>)>()
            .with_test_time(std::time::Duration::from_secs(seconds))
            .for_each(|(mapped, bytes)| {
                let text = if *mapped {
                    bytes
                        .iter()
                        .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
                        .collect()
                } else {
                    String::from_utf8_lossy(bytes).into_owned()
                };
                let _ = crate::shell::lexer::tokenize(&text);
                let _ = parse(&text);
            });
    }
}
