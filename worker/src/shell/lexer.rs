//! Token recognition: splits a script into words, operators and newlines, and reads here-document
//! bodies.
//!
//! Quoting is resolved here but expansion is not: a [`Word`] keeps which of its parts were quoted
//! (quoted text is never split, globbed or tilde-expanded) and where `$NAME` references are, so
//! [`super::expand`] can do the rest with the values current when the command runs. Everything
//! the shell does not support (`$(...)`, backquotes, `$((...))`, brace expansion) is refused here,
//! at its first character, with a message that says what to use instead. Refusing at the opener
//! is also what keeps this lexer one linear pass with no recursion, whatever a client sends (see
//! [`super::parser`] for why no shell-parsing crate does this job).

/// Where to point users for anything this shell deliberately does not do.
pub(crate) const USE_INTERPRETER: &str = "use python -c or node -e";

/// Operators, longest first so that `&>>` is never read as `&>` and `>`.
const OPERATORS: [&str; 20] = [
    "&>>", "<<<", "<<-", "&&", "||", "|&", ";;", ">>", ">&", ">|", "<&", "&>", "<<", "|", "&", ";",
    "<", ">", "(", ")",
];

/// One piece of a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    /// Text. `quoted` text (inside quotes or after a backslash) is taken literally by expansion.
    Lit { text: String, quoted: bool },
    /// `$NAME`, `${NAME}`, `${NAME:-fallback}`, `${NAME-fallback}`, `$?`, `$1`, `$@`...
    Param {
        name: String,
        quoted: bool,
        fallback: Option<Fallback>,
    },
}

/// The fallback of `${NAME:-word}` (`when_empty`) or `${NAME-word}`, taken literally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fallback {
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
            [Part::Lit { text, quoted }] if !quoted => Some(text),
            _ => None,
        }
    }

    fn push_lit(&mut self, text: &str, quoted: bool) {
        match self.parts.last_mut() {
            Some(Part::Lit {
                text: last,
                quoted: q,
            }) if *q == quoted => last.push_str(text),
            _ => self.parts.push(Part::Lit {
                text: text.to_string(),
                quoted,
            }),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tok {
    Word(Word),
    /// The digits right before a redirection operator (`2>`).
    IoNumber(u32),
    /// One of [`OPERATORS`] other than the here-document openers.
    Op(&'static str),
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
/// arithmetic, brace expansion, unusual parameter expansions).
pub(crate) fn tokenize(src: &str) -> Result<Tokens, String> {
    let mut lx = Lexer::new(src.chars().collect());
    lx.run()?;
    Ok(lx.out)
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Whether `name` is a valid shell variable name.
pub(crate) fn is_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(is_name_char)
}

fn unsupported(what: &str) -> String {
    format!("{what} is not supported; {USE_INTERPRETER}")
}

impl Lexer {
    fn new(chars: Vec<char>) -> Self {
        Self {
            chars,
            pos: 0,
            out: Tokens::default(),
            pending: Vec::new(),
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek();
        self.pos += usize::from(c.is_some());
        c
    }

    /// Consumes `s` if the input continues with it.
    fn eat(&mut self, s: &str) -> bool {
        let n = s.chars().count();
        let found = self
            .chars
            .get(self.pos..self.pos + n)
            .is_some_and(|ahead| ahead.iter().copied().eq(s.chars()));
        if found {
            self.pos += n;
        }
        found
    }

    /// Consumes characters while `keep` holds and returns them.
    fn take_while(&mut self, keep: impl Fn(char) -> bool) -> String {
        let start = self.pos;
        while self.peek().is_some_and(&keep) {
            self.pos += 1;
        }
        self.chars[start..self.pos].iter().collect()
    }

    fn run(&mut self) -> Result<(), String> {
        while let Some(c) = self.peek() {
            if matches!(c, ' ' | '\t' | '\r') {
                self.pos += 1;
            } else if self.eat("\\\n") {
                // A line continuation between words joins the lines.
            } else if c == '\n' {
                self.pos += 1;
                self.read_heredoc_bodies();
                self.out.toks.push(Tok::Newline);
            } else if c == '#' {
                self.take_while(|c| c != '\n');
            } else if let Some(op) = OPERATORS.into_iter().find(|op| self.eat(op)) {
                if op == "<<" || op == "<<-" {
                    self.heredoc(op == "<<-")?;
                } else {
                    self.out.toks.push(Tok::Op(op));
                }
            } else {
                let word = self.word()?;
                let tok = match word.plain() {
                    Some(digits)
                        if matches!(self.peek(), Some('<' | '>'))
                            && digits.len() <= 2
                            && digits.chars().all(|c| c.is_ascii_digit()) =>
                    {
                        Tok::IoNumber(digits.parse().unwrap_or(u32::MAX))
                    }
                    _ => Tok::Word(word),
                };
                self.out.toks.push(tok);
            }
        }
        // A here-document started on the last line has no body to read.
        self.read_heredoc_bodies();
        Ok(())
    }

    fn heredoc(&mut self, strip_tabs: bool) -> Result<(), String> {
        self.take_while(|c| c == ' ' || c == '\t');
        if self.peek().is_none_or(|c| "\n;&|<>()".contains(c)) {
            return Err("here-document needs a delimiter word after `<<`".into());
        }
        let delimiter = self.word()?;
        let index = self.out.bodies.len();
        self.out.bodies.push(Word::default());
        self.pending.push(Pending {
            index,
            // Quotes are removed and parameters left as written (`<<"$X"` ends at `$X`).
            delimiter: delimiter
                .parts
                .iter()
                .map(|p| match p {
                    Part::Lit { text, .. } => text.clone(),
                    Part::Param { name, .. } => format!("${name}"),
                })
                .collect(),
            literal: delimiter.parts.iter().any(|p| {
                matches!(
                    p,
                    Part::Lit { quoted: true, .. } | Part::Param { quoted: true, .. }
                )
            }),
            strip_tabs,
        });
        self.out.toks.push(Tok::HereDoc(index));
        Ok(())
    }

    /// Reads the bodies of the here-documents started on the line just ended.
    fn read_heredoc_bodies(&mut self) {
        for p in std::mem::take(&mut self.pending) {
            let mut body = String::new();
            while self.peek().is_some() {
                let mut line = self.take_while(|c| c != '\n');
                self.bump();
                if p.strip_tabs {
                    line = line.trim_start_matches('\t').to_string();
                }
                if line.trim_end_matches('\r') == p.delimiter {
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
                    match self.bump() {
                        None => w.push_lit("\\", true),
                        Some('\n') => {}
                        Some(c) => w.push_lit(c.encode_utf8(&mut [0; 4]), true),
                    }
                }
                '\'' => {
                    self.pos += 1;
                    let text = self.take_while(|c| c != '\'');
                    if self.bump().is_none() {
                        return Err("unexpected end of file: unterminated single quote".into());
                    }
                    w.parts.push(Part::Lit { text, quoted: true });
                }
                '"' => {
                    self.pos += 1;
                    self.double_quoted(&mut w)?;
                }
                '$' => self.dollar(&mut w, false)?,
                '`' => return Err(unsupported("command substitution (`...`)")),
                '{' if w.parts.is_empty() && self.brace_expansion_ahead() => {
                    return Err(unsupported("brace expansion ({a,b})"));
                }
                _ => {
                    self.pos += 1;
                    w.push_lit(c.encode_utf8(&mut [0; 4]), false);
                }
            }
        }
        Ok(w)
    }

    /// `{a,b}` or `{1..3}` at the start of a word: bash would expand it, we refuse rather than
    /// pass it on literally and surprise.
    fn brace_expansion_ahead(&self) -> bool {
        let mut depth = 0;
        for (i, &c) in self.chars[self.pos..].iter().enumerate() {
            match c {
                '{' => depth += 1,
                '}' if depth == 1 => {
                    let inner: String = self.chars[self.pos + 1..self.pos + i].iter().collect();
                    return inner.contains(',') || inner.contains("..");
                }
                '}' => depth -= 1,
                // The end of the word (or a quote): scanning no further keeps the lexer linear.
                ' ' | '\t' | '\r' | '\n' | ';' | '|' | '&' | '<' | '>' | '(' | ')' | '\'' | '"' => {
                    return false;
                }
                _ => {}
            }
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
                            w.push_lit(c.encode_utf8(&mut [0; 4]), true);
                        }
                        Some('\n') => self.pos += 1,
                        _ => w.push_lit("\\", true),
                    }
                }
                Some('$') => self.dollar(w, true)?,
                Some('`') => return Err(unsupported("command substitution (`...`)")),
                Some(c) => {
                    self.pos += 1;
                    w.push_lit(c.encode_utf8(&mut [0; 4]), true);
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
        let name = match self.peek() {
            Some('(') if self.chars.get(self.pos + 1) == Some(&'(') => {
                return Err(unsupported("arithmetic expansion $((...))"));
            }
            Some('(') => return Err(unsupported("command substitution $(...)")),
            Some('{') => {
                self.pos += 1;
                let inner = self.take_while(|c| c != '}');
                if self.bump().is_none() {
                    return Err("unexpected end of file: unterminated ${".into());
                }
                w.parts.push(param_in_braces(&inner, quoted)?);
                return Ok(());
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => self.take_while(is_name_char),
            Some(c @ ('?' | '$' | '#' | '@' | '*' | '!' | '-' | '0'..='9')) => {
                self.pos += 1;
                c.to_string()
            }
            _ => {
                w.push_lit("$", quoted);
                return Ok(());
            }
        };
        w.parts.push(Part::Param {
            name,
            quoted,
            fallback: None,
        });
        Ok(())
    }
}

/// `${...}`: a name with an optional `:-` or `-` fallback.
fn param_in_braces(inner: &str, quoted: bool) -> Result<Part, String> {
    let bad = || {
        format!(
            "bad substitution: ${{{inner}}} (only ${{NAME}}, ${{NAME:-default}} and ${{NAME-default}} are supported)"
        )
    };
    let (name, fallback) = match inner.find(['-', ':']) {
        None => (inner, None),
        Some(i) => {
            let (name, rest) = inner.split_at(i);
            let fallback = if let Some(text) = rest.strip_prefix(":-") {
                Fallback {
                    text: text.into(),
                    when_empty: true,
                }
            } else if i > 0 && rest.starts_with('-') {
                Fallback {
                    text: rest[1..].into(),
                    when_empty: false,
                }
            } else {
                return Err(bad());
            };
            (name, Some(fallback))
        }
    };
    let special = name.len() == 1 && "?$#@*!".contains(name);
    let positional = !name.is_empty() && name.chars().all(|c| c.is_ascii_digit());
    if !(is_name(name) || special || positional) {
        return Err(bad());
    }
    Ok(Part::Param {
        name: name.into(),
        quoted,
        fallback,
    })
}

/// The body of an unquoted here-document: `$` expansions and `\$`, `` \` ``, `\\` and
/// backslash-newline escapes apply; nothing is split or globbed, and a `$` that starts nothing
/// this shell expands stays text as written.
fn heredoc_word(body: &str) -> Word {
    let mut lx = Lexer::new(body.chars().collect());
    // A `${` after the last `}` can never close: it is text, without looking ahead each time.
    let last_close = lx.chars.iter().rposition(|&c| c == '}');
    let mut w = Word::default();
    while let Some(c) = lx.peek() {
        let next = lx.chars.get(lx.pos + 1).copied();
        match (c, next) {
            ('\\', Some(escaped @ ('$' | '`' | '\\' | '\n'))) => {
                lx.pos += 2;
                if escaped != '\n' {
                    w.push_lit(escaped.encode_utf8(&mut [0; 4]), true);
                }
            }
            ('$', Some('{')) if last_close.is_none_or(|end| end < lx.pos) => {
                lx.pos += 1;
                w.push_lit("$", true);
            }
            ('$', _) => {
                let (start, before) = (lx.pos, w.parts.len());
                if lx.dollar(&mut w, true).is_err() {
                    // `$(` leaves its `$`, a bad `${...}` all of it, as text; what is left
                    // behind is never read twice, which keeps this linear.
                    w.parts.truncate(before);
                    let end = if next == Some('{') { lx.pos } else { start + 1 };
                    let text: String = lx.chars[start..end].iter().collect();
                    w.push_lit(&text, true);
                    lx.pos = end;
                }
            }
            _ => {
                lx.pos += 1;
                w.push_lit(c.encode_utf8(&mut [0; 4]), true);
            }
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
            fallback: None,
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
        assert_eq!(t[2], Tok::Op("|"));
        assert_eq!(t[5], Tok::Op("&&"));
        assert_eq!(t[8], Tok::Op(";"));
        assert_eq!(t[10], Tok::Op("||"));
        assert_eq!(t[12], Tok::Newline);
        let t = tokenize("a&>>b<<<c>|d").unwrap().toks;
        assert_eq!(t[1], Tok::Op("&>>"));
        assert_eq!(t[3], Tok::Op("<<<"));
        assert_eq!(t[5], Tok::Op(">|"));
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
                fallback: Some(d), ..
            } => assert!(d.when_empty && d.text == "d e"),
            other => panic!("{other:?}"),
        }
        match &words("${X-}")[0][0] {
            Part::Param {
                fallback: Some(d), ..
            } => assert!(!d.when_empty && d.text.is_empty()),
            other => panic!("{other:?}"),
        }
        for bad in ["${X/a/b}", "${X:=a}", "${-a}", "${:-a}", "${}"] {
            assert!(
                tokenize(bad).unwrap_err().contains("bad substitution"),
                "{bad}"
            );
        }
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
        let t = tokenize("cat <<E\n$(ls) ${X/y} $\nE").unwrap();
        assert_eq!(t.bodies[0].parts, vec![lit("$(ls) ${X/y} $\n", true)]);
        let t = tokenize("cat <<E\n${A/$B} ${ $C\nE").unwrap();
        assert_eq!(
            t.bodies[0].parts,
            vec![lit("${A/$B} ${ ", true), param("C", true), lit("\n", true)]
        );
        assert!(tokenize("cat <<\n").is_err());
    }
}
