//! The grammar: lists of and/or chains of pipelines of simple commands with assignments and
//! redirections.
//!
//! The whole script is parsed before anything runs, so a syntax error anywhere means nothing ran.
//! Control flow (`if`, `for`, `while`, `case`, functions, subshells, background jobs) is refused
//! with a message pointing at the interpreters, which is where an agent should put logic.
//!
//! Why this is not `brush-parser` (the maintained bash parser): the command line comes from the
//! client and is parsed in the worker, on the shell thread, before any deadline can be checked.
//! brush-parser 0.4 takes exponential time on short unbalanced input (`( ( ( …` with 20 parens
//! takes 34 ms and doubles with each paren; a here-document body of 16 `$(` takes 3 s in its word
//! parser) and recurses once per nesting level, so `{ ` repeated 400 times overflows the shell
//! thread's 2 MiB stack and aborts the worker. Neither can be interrupted from outside. This
//! grammar has no nesting at all (the lexer refuses every opener), so one linear pass with no
//! recursion parses anything a client sends. `shell-words` does not fit either: it returns
//! unquoted strings, so `'*.txt'` and `*.txt` (or `'$HOME'` and `$HOME`) become the same word.

use super::lexer::{self, Part, Tok, Tokens, USE_INTERPRETER, Word};

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
    Here { body: Word, newline: bool },
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
    let mut items = Vec::new();
    loop {
        while let Some(tok @ (Tok::Newline | Tok::Op(";"))) = p.peek() {
            // A script may not start with `;` (a `;` alone on a later line is let through).
            if items.is_empty() && *tok != Tok::Newline {
                return Err(unexpected(Some(tok)));
            }
            p.pos += 1;
        }
        if p.peek().is_none() {
            return Ok(Script { items });
        }
        items.push(p.and_or()?);
        match p.next() {
            None | Some(Tok::Newline) => {}
            // `a; ;` is an error in bash too.
            Some(Tok::Op(";")) if p.peek() != Some(&Tok::Op(";")) => {}
            other => return Err(unexpected(other.as_ref())),
        }
    }
}

fn unexpected(tok: Option<&Tok>) -> String {
    let text = match tok {
        None => return "syntax error: unexpected end of file".into(),
        Some(Tok::Op("&")) => {
            return "background jobs (`&`) are not supported; run commands one after another"
                .into();
        }
        Some(Tok::Op("(" | ")")) => {
            return format!(
                "subshells and functions `( ... )` are not supported; {USE_INTERPRETER}"
            );
        }
        Some(Tok::Op(";;")) => return format!("`case` is not supported; {USE_INTERPRETER}"),
        Some(Tok::Op(op)) => op.to_string(),
        Some(Tok::Newline) => "newline".into(),
        Some(Tok::Word(w)) => w.plain().unwrap_or("word").into(),
        Some(Tok::IoNumber(n)) => n.to_string(),
        Some(Tok::HereDoc(_)) => "<<".into(),
    };
    format!("syntax error near unexpected token `{text}'")
}

struct Parser {
    toks: Vec<Tok>,
    bodies: Vec<Word>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn next(&mut self) -> Option<Tok> {
        let tok = self.toks.get(self.pos).cloned();
        self.pos += 1;
        tok
    }

    fn skip_newlines(&mut self) {
        while self.peek() == Some(&Tok::Newline) {
            self.pos += 1;
        }
    }

    fn and_or(&mut self) -> Result<AndOr, String> {
        let first = self.pipeline()?;
        let mut rest = Vec::new();
        loop {
            let connector = match self.peek() {
                Some(Tok::Op("&&")) => Connector::And,
                Some(Tok::Op("||")) => Connector::Or,
                _ => return Ok(AndOr { first, rest }),
            };
            self.pos += 1;
            self.skip_newlines();
            rest.push((connector, self.pipeline()?));
        }
    }

    fn pipeline(&mut self) -> Result<Pipeline, String> {
        let mut negated = false;
        while matches!(self.peek(), Some(Tok::Word(w)) if w.plain() == Some("!")) {
            negated = !negated;
            self.pos += 1;
        }
        let mut commands = vec![self.command()?];
        while let Some(&Tok::Op(op @ ("|" | "|&"))) = self.peek() {
            // `a |& b` is `a 2>&1 | b`.
            if op == "|&"
                && let Some(last) = commands.last_mut()
            {
                last.redirects.push(Redirect {
                    fd: 2,
                    kind: RedirectKind::Dup(1),
                });
            }
            self.pos += 1;
            self.skip_newlines();
            commands.push(self.command()?);
        }
        Ok(Pipeline { negated, commands })
    }

    fn command(&mut self) -> Result<Command, String> {
        let mut cmd = Command::default();
        loop {
            match self.peek().cloned() {
                Some(Tok::Word(w)) => {
                    self.pos += 1;
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
                            continue;
                        }
                        if cmd.assigns.is_empty() && self.peek() == Some(&Tok::Op("(")) {
                            return Err(format!("functions are not supported; {USE_INTERPRETER}"));
                        }
                    }
                    cmd.words.push(w);
                }
                Some(Tok::IoNumber(fd)) => {
                    self.pos += 1;
                    cmd.redirects.push(self.redirect(Some(fd))?);
                }
                Some(
                    Tok::HereDoc(_)
                    | Tok::Op("<" | ">" | ">|" | ">>" | ">&" | "<&" | "&>" | "&>>" | "<<<"),
                ) => cmd.redirects.push(self.redirect(None)?),
                other if cmd == Command::default() => return Err(unexpected(other.as_ref())),
                _ => return Ok(cmd),
            }
        }
    }

    /// A redirection operator and its target; `fd` is the number written before it, if any.
    fn redirect(&mut self, fd: Option<u32>) -> Result<Redirect, String> {
        let op = match self.next() {
            Some(Tok::HereDoc(i)) => {
                let body = self.bodies[i].clone();
                let kind = RedirectKind::Here {
                    body,
                    newline: false,
                };
                return checked(fd.unwrap_or(0), kind);
            }
            Some(Tok::Op(op)) => op,
            other => return Err(unexpected(other.as_ref())),
        };
        let target = match self.next() {
            Some(Tok::Word(w)) => w,
            other => return Err(unexpected(other.as_ref())),
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
                    body: target,
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
            _ => return Err(unexpected(Some(&Tok::Op(op)))),
        };
        checked(fd, kind)
    }
}

/// Refuses descriptors other than stdin, stdout and stderr (there is nothing else to point at).
fn checked(fd: u32, kind: RedirectKind) -> Result<Redirect, String> {
    let highest = match kind {
        RedirectKind::Dup(m) => fd.max(m),
        _ => fd,
    };
    if highest > 2 {
        return Err(format!(
            "only file descriptors 0, 1 and 2 can be redirected (got {highest})"
        ));
    }
    Ok(Redirect { fd, kind })
}

/// `NAME=value` at the start of a command: the name must be unquoted and valid.
fn assignment(w: &Word) -> Option<(String, Word)> {
    let Part::Lit {
        text,
        quoted: false,
    } = w.parts.first()?
    else {
        return None;
    };
    let (name, rest) = text.split_once('=')?;
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
    Some((name.to_string(), value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(cmd: &Command) -> Vec<&str> {
        cmd.words.iter().map(|w| w.plain().unwrap_or("?")).collect()
    }

    fn write(target: &str, append: bool, both: bool) -> RedirectKind {
        RedirectKind::Write {
            target: Word {
                parts: vec![Part::Lit {
                    text: target.into(),
                    quoted: false,
                }],
            },
            append,
            both,
        }
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
        assert!(!parse("! ! a").unwrap().items[0].first.negated);
        assert_eq!(parse("a;").unwrap().items.len(), 1);
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
        let s = parse("A=x=y").unwrap();
        let value = &s.items[0].first.commands[0].assigns[0].1;
        assert_eq!(value.plain(), Some("x=y"));
    }

    #[test]
    fn redirections() {
        let s = parse("cmd >o 2>>e <i 2>&1 &>b >&2 |& x").unwrap();
        let r = &s.items[0].first.commands[0].redirects;
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
        let s = parse("a &>>b >&f 2>&- >|c <<<w").unwrap();
        let r = &s.items[0].first.commands[0].redirects;
        assert_eq!(r[0].kind, write("b", true, true));
        assert_eq!(r[1].kind, write("f", false, true));
        assert_eq!((r[2].fd, &r[2].kind), (2, &RedirectKind::Close));
        assert_eq!(r[3].kind, write("c", false, false));
        assert!(matches!(
            r[4].kind,
            RedirectKind::Here { newline: true, .. }
        ));
        assert!(parse("a 3>x").unwrap_err().contains("file descriptors"));
        assert!(parse("a 2>&3").unwrap_err().contains("file descriptors"));
        assert!(
            parse("a 2>&f")
                .unwrap_err()
                .contains("needs a file descriptor")
        );
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
        assert!(parse("a ;; b").unwrap_err().contains("case"));
        assert!(parse("; a").is_err());
        assert!(parse("a; ; b").is_err());
        assert!(parse("a\n; b").is_ok());
        assert!(parse("f () { ls; }").unwrap_err().contains("functions"));
        assert!(parse("a\n\n|b").unwrap_err().contains("`|'"));
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

    /// Inputs that hang or overflow recursive shell parsers (see the module docs) parse at once.
    #[test]
    fn deep_nesting_is_refused_in_linear_time() {
        let started = std::time::Instant::now();
        for src in [
            "( ".repeat(100_000),
            "{ ".repeat(100_000),
            "if a; then ".repeat(20_000),
            "$(".repeat(100_000),
            format!("cat <<E\n{}\nE", "$(".repeat(100_000)),
            format!("cat <<E\n{}\nE", "${".repeat(100_000)),
            format!("cat <<E\n{}}}\nE", "${".repeat(100_000)),
            format!("cat <<E\n{}\nE", "${X/}".repeat(100_000)),
            "a | ".repeat(100_000) + "a",
            "{$<".repeat(100_000),
        ] {
            let _ = parse(&src);
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }
}
