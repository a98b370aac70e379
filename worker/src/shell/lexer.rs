//! Token recognition: splits a script into words, operators and newlines, and reads here-document
//! bodies.
//!
//! Quoting is resolved here but expansion is not: a [`Word`] keeps which of its parts were quoted
//! (quoted text is never split, globbed or tilde-expanded) and where `$NAME` references are, so
//! [`super::expand`] can do the rest with the values current when the command runs. Everything
//! the shell does not support (`$(...)`, backquotes, `$((...))`) is refused here with a message
//! that says what to use instead, before anything has run.

/// Where to point users for anything this shell deliberately does not do.
pub(crate) const USE_INTERPRETER: &str = "use python -c or node -e";

/// One piece of a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    /// Text. `quoted` text (inside quotes or after a backslash) is taken literally by expansion.
    Lit { text: String, quoted: bool },
    /// `$NAME`, `${NAME}`, `${NAME:-default}`, `${NAME-default}`, `$?`, `$1`, `$@`...
    Param {
        name: String,
        quoted: bool,
        default: Option<Default>,
    },
}

/// The fallback of `${NAME:-word}` (`when_empty`) or `${NAME-word}`, taken literally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Default {
    pub text: String,
    pub when_empty: bool,
}

/// A shell word before expansion.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Word {
    pub parts: Vec<Part>,
}

impl Word {
    /// The word's text when it has no quoting and no parameters (reserved words, `!`, fd numbers).
    pub(crate) fn plain(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [
                Part::Lit {
                    text,
                    quoted: false,
                },
            ] => Some(text),
            _ => None,
        }
    }

    /// The text with quotes removed and parameters left as written (here-document delimiters).
    fn raw(&self) -> String {
        self.parts
            .iter()
            .map(|p| match p {
                Part::Lit { text, .. } => text.clone(),
                Part::Param { name, .. } => format!("${name}"),
            })
            .collect()
    }

    fn has_quotes(&self) -> bool {
        self.parts.iter().any(|p| match p {
            Part::Lit { quoted, .. } | Part::Param { quoted, .. } => *quoted,
        })
    }

    fn push_lit(&mut self, text: &str, quoted: bool) {
        if let Some(Part::Lit {
            text: last,
            quoted: q,
        }) = self.parts.last_mut()
            && *q == quoted
        {
            last.push_str(text);
            return;
        }
        self.parts.push(Part::Lit {
            text: text.to_string(),
            quoted,
        });
    }
}

/// Operators, named after POSIX's grammar tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// `|`
    Pipe,
    /// `|&` (stdout and stderr into the pipe)
    PipeBoth,
    /// `&&`
    AndIf,
    /// `||`
    OrIf,
    /// `;`
    Semi,
    /// `<`
    Less,
    /// `>` or `>|`
    Great,
    /// `>>`
    DGreat,
    /// `>&`
    GreatAnd,
    /// `<&`
    LessAnd,
    /// `&>`
    AndGreat,
    /// `&>>`
    AndDGreat,
    /// `<<<`
    TLess,
    /// `&` (background: refused by the parser)
    Amp,
    /// `;;` (only meaningful in `case`: refused)
    DSemi,
    /// `(` and `)` (subshells: refused)
    LParen,
    RParen,
}

impl Op {
    pub(crate) fn text(self) -> &'static str {
        match self {
            Op::Pipe => "|",
            Op::PipeBoth => "|&",
            Op::AndIf => "&&",
            Op::OrIf => "||",
            Op::Semi => ";",
            Op::Less => "<",
            Op::Great => ">",
            Op::DGreat => ">>",
            Op::GreatAnd => ">&",
            Op::LessAnd => "<&",
            Op::AndGreat => "&>",
            Op::AndDGreat => "&>>",
            Op::TLess => "<<<",
            Op::Amp => "&",
            Op::DSemi => ";;",
            Op::LParen => "(",
            Op::RParen => ")",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tok {
    Word(Word),
    /// The digit right before a redirection operator (`2>`).
    IoNumber(u32),
    Op(Op),
    Newline,
    /// `<<WORD` or `<<-WORD`; the body, read at the end of the line, is `bodies[index]`.
    HereDoc(usize),
}

/// The script as tokens, plus the here-document bodies they refer to.
#[derive(Debug, Default)]
pub(crate) struct Tokens {
    pub toks: Vec<Tok>,
    pub bodies: Vec<Word>,
}

/// A here-document whose body starts after the current line.
struct Pending {
    index: usize,
    delimiter: String,
    /// A quoted delimiter (`<<'EOF'`) makes the body literal.
    literal: bool,
    /// `<<-` strips leading tabs from the body and the delimiter line.
    strip_tabs: bool,
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    out: Tokens,
    pending: Vec<Pending>,
}

/// Splits `src` into tokens.
///
/// # Errors
/// A message for unterminated quotes and for unsupported syntax (command substitution,
/// arithmetic, unusual parameter expansions).
pub(crate) fn tokenize(src: &str) -> Result<Tokens, String> {
    let mut lx = Lexer {
        chars: src.chars().collect(),
        pos: 0,
        out: Tokens::default(),
        pending: Vec::new(),
    };
    lx.run()?;
    Ok(lx.out)
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Whether `name` is a valid shell variable name.
pub(crate) fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(is_name_start) && chars.all(is_name_char)
}

impl Lexer {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn starts_with(&self, s: &str) -> bool {
        s.chars()
            .enumerate()
            .all(|(i, c)| self.peek_at(i) == Some(c))
    }

    fn push(&mut self, tok: Tok) {
        self.out.toks.push(tok);
    }

    fn run(&mut self) -> Result<(), String> {
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' => self.pos += 1,
                '\n' => {
                    self.pos += 1;
                    self.read_heredoc_bodies();
                    self.push(Tok::Newline);
                }
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '\\' if self.peek_at(1) == Some('\n') => self.pos += 2,
                '|' | '&' | ';' | '<' | '>' | '(' | ')' => self.operator()?,
                _ => {
                    let word = self.word()?;
                    let next = self.peek();
                    match word.plain() {
                        Some(digits)
                            if matches!(next, Some('<' | '>'))
                                && digits.len() <= 2
                                && digits.chars().all(|c| c.is_ascii_digit()) =>
                        {
                            self.push(Tok::IoNumber(digits.parse().unwrap_or(u32::MAX)));
                        }
                        _ => self.push(Tok::Word(word)),
                    }
                }
            }
        }
        // A here-document started on the last line has no body to read.
        self.read_heredoc_bodies();
        Ok(())
    }

    fn operator(&mut self) -> Result<(), String> {
        const OPS: [(&str, Op); 17] = [
            ("&>>", Op::AndDGreat),
            ("<<<", Op::TLess),
            ("&&", Op::AndIf),
            ("||", Op::OrIf),
            ("|&", Op::PipeBoth),
            (";;", Op::DSemi),
            (">>", Op::DGreat),
            (">&", Op::GreatAnd),
            (">|", Op::Great),
            ("<&", Op::LessAnd),
            ("&>", Op::AndGreat),
            ("|", Op::Pipe),
            ("&", Op::Amp),
            (";", Op::Semi),
            ("<", Op::Less),
            (">", Op::Great),
            ("(", Op::LParen),
        ];
        if self.starts_with("<<") && !self.starts_with("<<<") {
            return self.heredoc();
        }
        if self.peek() == Some(')') {
            self.pos += 1;
            self.push(Tok::Op(Op::RParen));
            return Ok(());
        }
        for (text, op) in OPS {
            if self.starts_with(text) {
                self.pos += text.chars().count();
                self.push(Tok::Op(op));
                return Ok(());
            }
        }
        Err(format!(
            "unexpected character `{}`",
            self.peek().unwrap_or(' ')
        ))
    }

    fn heredoc(&mut self) -> Result<(), String> {
        self.pos += 2;
        let strip_tabs = self.peek() == Some('-');
        if strip_tabs {
            self.pos += 1;
        }
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.pos += 1;
        }
        let delim = match self.peek() {
            Some(c) if !matches!(c, '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')') => {
                self.word()?
            }
            _ => return Err("here-document needs a delimiter word after `<<`".into()),
        };
        let index = self.out.bodies.len();
        self.out.bodies.push(Word::default());
        self.pending.push(Pending {
            index,
            delimiter: delim.raw(),
            literal: delim.has_quotes(),
            strip_tabs,
        });
        self.push(Tok::HereDoc(index));
        Ok(())
    }

    /// Reads the bodies of the here-documents started on the line just ended.
    fn read_heredoc_bodies(&mut self) {
        for p in std::mem::take(&mut self.pending) {
            let mut body = String::new();
            while self.pos < self.chars.len() {
                let start = self.pos;
                while self.peek().is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
                let mut line: String = self.chars[start..self.pos].iter().collect();
                if self.peek() == Some('\n') {
                    self.pos += 1;
                }
                if p.strip_tabs {
                    line = line.trim_start_matches('\t').to_string();
                }
                if line == p.delimiter || line.trim_end_matches('\r') == p.delimiter {
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            self.out.bodies[p.index] = if p.literal {
                Word {
                    parts: vec![Part::Lit {
                        text: body,
                        quoted: true,
                    }],
                }
            } else {
                heredoc_word(&body)
            };
        }
    }

    /// Reads one word: unquoted text, quoted strings, escapes and parameters, up to a blank or an
    /// operator.
    fn word(&mut self) -> Result<Word, String> {
        let mut w = Word::default();
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => break,
                '\\' => {
                    self.pos += 1;
                    match self.peek() {
                        None => w.push_lit("\\", true),
                        Some('\n') => self.pos += 1,
                        Some(c) => {
                            self.pos += 1;
                            w.push_lit(&c.to_string(), true);
                        }
                    }
                }
                '\'' => {
                    self.pos += 1;
                    let start = self.pos;
                    while self.peek().is_some_and(|c| c != '\'') {
                        self.pos += 1;
                    }
                    if self.peek().is_none() {
                        return Err("unexpected end of file: unterminated single quote".into());
                    }
                    let text: String = self.chars[start..self.pos].iter().collect();
                    self.pos += 1;
                    w.parts.push(Part::Lit { text, quoted: true });
                }
                '"' => {
                    self.pos += 1;
                    self.double_quoted(&mut w)?;
                }
                '$' => self.dollar(&mut w, false)?,
                '`' => {
                    return Err(format!(
                        "command substitution (`...`) is not supported; {USE_INTERPRETER}"
                    ));
                }
                '{' if w.parts.is_empty() && self.brace_expansion_ahead() => {
                    return Err(format!(
                        "brace expansion ({{a,b}}) is not supported; {USE_INTERPRETER}"
                    ));
                }
                _ => {
                    self.pos += 1;
                    w.push_lit(&c.to_string(), false);
                }
            }
        }
        Ok(w)
    }

    /// `{a,b}` or `{1..3}` at the start of a word: bash would expand it, we refuse rather than
    /// pass it on literally and surprise.
    fn brace_expansion_ahead(&self) -> bool {
        let mut i = self.pos + 1;
        let mut depth = 1;
        let mut inner = String::new();
        while let Some(&c) = self.chars.get(i) {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return inner.contains(',') || inner.contains("..");
                    }
                }
                ' ' | '\t' | '\n' | ';' | '|' | '&' | '\'' | '"' => return false,
                _ => {}
            }
            inner.push(c);
            i += 1;
        }
        false
    }

    /// The inside of `"..."`, after the opening quote.
    fn double_quoted(&mut self, w: &mut Word) -> Result<(), String> {
        let before = w.parts.len();
        loop {
            match self.peek() {
                None => return Err("unexpected end of file: unterminated double quote".into()),
                Some('"') => {
                    self.pos += 1;
                    break;
                }
                Some('\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some(c @ ('$' | '`' | '"' | '\\')) => {
                            self.pos += 1;
                            w.push_lit(&c.to_string(), true);
                        }
                        Some('\n') => self.pos += 1,
                        _ => w.push_lit("\\", true),
                    }
                }
                Some('$') => self.dollar(w, true)?,
                Some('`') => {
                    return Err(format!(
                        "command substitution (`...`) is not supported; {USE_INTERPRETER}"
                    ));
                }
                Some(c) => {
                    self.pos += 1;
                    w.push_lit(&c.to_string(), true);
                }
            }
        }
        if w.parts.len() == before {
            // `""` is an empty argument, not nothing.
            w.parts.push(Part::Lit {
                text: String::new(),
                quoted: true,
            });
        }
        Ok(())
    }

    /// `$...` at the current position.
    fn dollar(&mut self, w: &mut Word, quoted: bool) -> Result<(), String> {
        self.pos += 1;
        match self.peek() {
            Some('(') => {
                let what = if self.peek_at(1) == Some('(') {
                    "arithmetic expansion $((...))"
                } else {
                    "command substitution $(...)"
                };
                Err(format!("{what} is not supported; {USE_INTERPRETER}"))
            }
            Some('{') => {
                self.pos += 1;
                let start = self.pos;
                while self.peek().is_some_and(|c| c != '}') {
                    self.pos += 1;
                }
                if self.peek().is_none() {
                    return Err("unexpected end of file: unterminated ${".into());
                }
                let inner: String = self.chars[start..self.pos].iter().collect();
                self.pos += 1;
                w.parts.push(param_in_braces(&inner, quoted)?);
                Ok(())
            }
            Some(c) if is_name_start(c) => {
                let start = self.pos;
                while self.peek().is_some_and(is_name_char) {
                    self.pos += 1;
                }
                let name = self.chars[start..self.pos].iter().collect();
                w.parts.push(Part::Param {
                    name,
                    quoted,
                    default: None,
                });
                Ok(())
            }
            Some(c @ ('?' | '$' | '#' | '@' | '*' | '!' | '-' | '0'..='9')) => {
                self.pos += 1;
                w.parts.push(Part::Param {
                    name: c.to_string(),
                    quoted,
                    default: None,
                });
                Ok(())
            }
            _ => {
                w.push_lit("$", quoted);
                Ok(())
            }
        }
    }
}

/// `${...}`: a name with an optional `:-` or `-` fallback.
fn param_in_braces(inner: &str, quoted: bool) -> Result<Part, String> {
    let bad = || {
        Err(format!(
            "bad substitution: ${{{inner}}} (only ${{NAME}}, ${{NAME:-default}} and ${{NAME-default}} are supported)"
        ))
    };
    let (name, default) = match inner.find(['-', ':']) {
        None => (inner, None),
        Some(i) => {
            let rest = &inner[i..];
            if let Some(text) = rest.strip_prefix(":-") {
                (
                    &inner[..i],
                    Some(Default {
                        text: text.into(),
                        when_empty: true,
                    }),
                )
            } else if let Some(text) = rest.strip_prefix('-')
                && i > 0
            {
                (
                    &inner[..i],
                    Some(Default {
                        text: text.into(),
                        when_empty: false,
                    }),
                )
            } else {
                return bad();
            }
        }
    };
    let special = name.len() == 1 && "?$#@*!0123456789".contains(name);
    if !(is_name(name) || special || (!name.is_empty() && name.chars().all(|c| c.is_ascii_digit())))
    {
        return bad();
    }
    Ok(Part::Param {
        name: name.into(),
        quoted,
        default,
    })
}

/// The body of an unquoted here-document: `$` expansions and `\$`, `` \` ``, `\\` and
/// backslash-newline escapes apply; nothing is split or globbed.
fn heredoc_word(body: &str) -> Word {
    let mut w = Word::default();
    let chars: Vec<char> = body.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() && matches!(chars[i + 1], '$' | '`' | '\\' | '\n') {
            if chars[i + 1] != '\n' {
                w.push_lit(&chars[i + 1].to_string(), true);
            }
            i += 2;
        } else if c == '$' {
            let mut sub = Lexer {
                chars: chars[i..].to_vec(),
                pos: 0,
                out: Tokens::default(),
                pending: Vec::new(),
            };
            let before = w.parts.len();
            // A failed expansion in a here-document stays literal text.
            if sub.dollar(&mut w, true).is_ok() {
                i += sub.pos;
            } else {
                w.parts.truncate(before);
                w.push_lit("$", true);
                i += 1;
            }
        } else {
            w.push_lit(&c.to_string(), true);
            i += 1;
        }
    }
    if w.parts.is_empty() {
        w.push_lit("", true);
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(text: &str, quoted: bool) -> Part {
        Part::Lit {
            text: text.into(),
            quoted,
        }
    }

    fn param(name: &str, quoted: bool) -> Part {
        Part::Param {
            name: name.into(),
            quoted,
            default: None,
        }
    }

    fn words(src: &str) -> Vec<Vec<Part>> {
        tokenize(src)
            .unwrap()
            .toks
            .into_iter()
            .filter_map(|t| match t {
                Tok::Word(w) => Some(w.parts),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn splits_words_and_operators() {
        let t = tokenize("ls -l|wc -l&&echo a;b||c\n").unwrap().toks;
        assert_eq!(t.len(), 13);
        assert_eq!(t[2], Tok::Op(Op::Pipe));
        assert_eq!(t[5], Tok::Op(Op::AndIf));
        assert_eq!(t[8], Tok::Op(Op::Semi));
        assert_eq!(t[10], Tok::Op(Op::OrIf));
        assert_eq!(t[12], Tok::Newline);
    }

    #[test]
    fn quotes_and_escapes() {
        assert_eq!(words("'a b'"), vec![vec![lit("a b", true)]]);
        assert_eq!(
            words(r#"x"a $H\$\"b"'c'\ d"#),
            vec![vec![
                lit("x", false),
                lit("a ", true),
                param("H", true),
                lit("$\"b", true),
                lit("c ", true),
                lit("d", false),
            ]]
        );
        assert_eq!(words(r#""\n""#), vec![vec![lit("\\n", true)]]);
        assert_eq!(words("\"\""), vec![vec![lit("", true)]]);
        assert_eq!(words("a\\\nb"), vec![vec![lit("ab", false)]]);
        assert!(
            tokenize("'abc")
                .unwrap_err()
                .contains("unterminated single quote")
        );
        assert!(
            tokenize("\"abc")
                .unwrap_err()
                .contains("unterminated double quote")
        );
    }

    #[test]
    fn parameters() {
        assert_eq!(
            words("$A${B}$?$1"),
            vec![vec![
                param("A", false),
                param("B", false),
                param("?", false),
                param("1", false)
            ]]
        );
        assert_eq!(
            words("$ a$"),
            vec![vec![lit("$", false)], vec![lit("a$", false)]]
        );
        match &words("${X:-d e}")[0][0] {
            Part::Param {
                default: Some(d), ..
            } => assert!(d.when_empty && d.text == "d e"),
            other => panic!("{other:?}"),
        }
        assert!(
            tokenize("${X/a/b}")
                .unwrap_err()
                .contains("bad substitution")
        );
        assert!(tokenize("echo $(ls)").unwrap_err().contains("python -c"));
        assert!(
            tokenize("echo $((1+1))")
                .unwrap_err()
                .contains("arithmetic")
        );
        assert!(tokenize("echo `ls`").unwrap_err().contains("not supported"));
        assert!(tokenize("echo {a,b}").unwrap_err().contains("brace"));
        assert_eq!(words("{}"), vec![vec![lit("{}", false)]]);
    }

    #[test]
    fn comments_and_io_numbers() {
        let t = tokenize("echo a#b # comment\n2>x 10>y").unwrap().toks;
        assert_eq!(
            t[1],
            Tok::Word(Word {
                parts: vec![lit("a#b", false)]
            })
        );
        assert_eq!(t[2], Tok::Newline);
        assert_eq!(t[3], Tok::IoNumber(2));
        assert_eq!(t[6], Tok::IoNumber(10));
        let t = tokenize("echo 2 >x").unwrap().toks;
        assert_eq!(
            t[1],
            Tok::Word(Word {
                parts: vec![lit("2", false)]
            })
        );
    }

    #[test]
    fn heredocs() {
        let t = tokenize("cat <<EOF >out\nhi $X\n\\$y\nEOF\necho done").unwrap();
        assert_eq!(t.toks[1], Tok::HereDoc(0));
        assert_eq!(
            t.bodies[0].parts,
            vec![lit("hi ", true), param("X", true), lit("\n$y\n", true)]
        );
        assert_eq!(t.toks.len(), 7);
        let t = tokenize("cat <<'E'\n$X\n\tE\nE\n").unwrap();
        assert_eq!(t.bodies[0].parts, vec![lit("$X\n\tE\n", true)]);
        let t = tokenize("cat <<-E\n\tx\n\tE\n").unwrap();
        assert_eq!(t.bodies[0].parts, vec![lit("x\n", true)]);
        let t = tokenize("cat <<E").unwrap();
        assert_eq!(t.bodies[0].parts, vec![lit("", true)]);
        assert!(tokenize("cat <<\n").is_err());
    }
}
