//! Token recognition: reads a script one token at a time for [`super::parser`] (words,
//! operators, newlines), with here-document bodies and everything nested inside words.
//!
//! Quoting is resolved here but expansion is not: a [`Word`] keeps which of its parts were quoted
//! (quoted text is never split, globbed, brace- or tilde-expanded) and where its expansions are
//! (`$NAME`, `${NAME...}` with their operand words, `$(...)` and backquotes as parsed scripts,
//! `$((...))` and bash's old `$[...]` as the word of their expression), so [`super::expand`] can
//! do the rest with the values current when the command runs. `$'...'` (C-like escapes) is
//! resolved here, into quoted text.
//!
//! The parser pulls tokens on demand because a word can hold a whole script (`$(...)`): the
//! lexer hands the text after `$(` to [`parser::parse_nested`], which reads tokens from this
//! same lexer up to the matching `)`. Every such opener (and every compound command the parser
//! opens) goes through [`Lexer::enter`], which refuses more than [`MAX_PARSE_DEPTH`] levels, so
//! the recursion is bounded and every character is still read once: parsing stays linear in
//! the input whatever a client sends.

use std::cell::OnceCell;
use std::rc::Rc;

use super::parser::{self, Script};

/// Where to point users for anything this shell deliberately does not do.
pub(crate) const USE_INTERPRETER: &str = "use python -c or node -e";

/// Deepest nesting of compound commands, command substitutions, `${...}` operands and
/// arithmetic expansions together: each level is native stack in the parser (and later in the
/// executor), on a shell thread with 2 MiB of it, and real scripts stay far below.
pub(crate) const MAX_PARSE_DEPTH: usize = 64;

/// Operators, longest first so that `&>>` is never read as `&>` and `>`.
const OPERATORS: [&str; 22] = [
    "&>>", ";;&", "<<<", "<<-", "&&", "||", "|&", ";;", ";&", ">>", ">&", ">|", "<&", "&>", "<<",
    "|", "&", ";", "<", ">", "(", ")",
];

/// One piece of a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    /// Text. `quoted` text (inside quotes or after a backslash) is taken literally by expansion.
    Lit { text: String, quoted: bool },
    /// `$NAME`, `${NAME}`, `${NAME<op>...}`, `$?`, `$1`, `$@`...
    Param {
        name: String,
        quoted: bool,
        op: Option<Box<ParamOp>>,
    },
    /// `${NAME[...]<op>...}`: an element of an array, all of them, or their indices.
    Element {
        name: String,
        index: Index,
        quoted: bool,
        op: Option<Box<ParamOp>>,
    },
    /// `$(...)` or `` `...` ``: the script's stdout, trailing newlines removed.
    Command { script: Box<Script>, quoted: bool },
    /// `$((...))`: the expression's text (after its own expansions) is evaluated.
    Arith { expr: Word, quoted: bool },
    /// `<(...)`: the path of a file holding the script's stdout (bash's `/dev/fd/63`; pipelines
    /// here run one stage after another, so the script runs first).
    Input { script: Box<Script> },
    /// `>(...)`: the path of a file the command writes, which the script then reads as its
    /// stdin (bash runs it beside the command; here it runs when the command has ended).
    Output { script: Box<Script> },
}

/// The subscript of `${NAME[...]}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Index {
    /// `[@]` (`at`) or `[*]`: every element.
    All { at: bool },
    /// `${!NAME[@]}` / `${!NAME[*]}`: the indices that are set.
    Keys { at: bool },
    /// `[expr]`: one element, `expr` an arithmetic word (negative counts from the end).
    At(Word),
}

/// What `${NAME<op>...}` does with the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ParamOp {
    /// `${#NAME}`
    Length,
    /// `${NAME:-word}` (`colon`: also when empty) or `${NAME-word}`.
    Default { word: Word, colon: bool },
    /// `${NAME:=word}` / `${NAME=word}`
    Assign { word: Word, colon: bool },
    /// `${NAME:+word}` / `${NAME+word}`
    Alternative { word: Word, colon: bool },
    /// `${NAME:?message}` / `${NAME?message}`
    Error { word: Word, colon: bool },
    /// `${NAME#pattern}` (shortest) / `${NAME##pattern}` (`longest`).
    RemovePrefix { pattern: Word, longest: bool },
    /// `${NAME%pattern}` / `${NAME%%pattern}`
    RemoveSuffix { pattern: Word, longest: bool },
    /// `${NAME/pattern/with}`, `//` (`all`), `/#` (`anchor` `#`) and `/%` (`anchor` `%`).
    Replace {
        pattern: Word,
        with: Word,
        all: bool,
        anchor: Option<char>,
    },
    /// `${NAME:offset}` / `${NAME:offset:length}` (arithmetic words).
    Slice { offset: Word, length: Option<Word> },
    /// `${NAME^^}` / `${NAME^}` (`upper`), `${NAME,,}` / `${NAME,}`: the case of all (`all`)
    /// or the first character.
    Case { upper: bool, all: bool },
    /// `${NAME@Q}` and bash's other transformations: `Q` quoted for reuse as input, `E` with
    /// `$'...'` escapes decoded, `U`/`u`/`L` case, `A` as an assignment, `a` its attributes
    /// (`K` is `Q` for a plain variable).
    Transform(char),
}

/// A shell word before expansion.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Word {
    pub parts: Vec<Part>,
}

impl Word {
    /// The word's text when it has no quoting and no expansions (reserved words, `!`, fd
    /// numbers).
    pub(crate) fn plain(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [Part::Lit { text, quoted }] if !quoted => Some(text),
            _ => None,
        }
    }

    /// An unquoted word of this text.
    pub(crate) fn lit(text: &str) -> Self {
        let mut w = Self::default();
        w.push_lit(text, false);
        w
    }

    pub(crate) fn push_lit(&mut self, text: &str, quoted: bool) {
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

    fn push_char(&mut self, c: char, quoted: bool) {
        self.push_lit(c.encode_utf8(&mut [0; 4]), quoted);
    }
}

/// A here-document's body, filled in when the lexer reaches the end of its line (after the
/// redirection that refers to it was parsed).
pub(crate) type HereBody = Rc<OnceCell<Word>>;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tok {
    Word(Word),
    /// The digits right before a redirection operator (`2>`).
    IoNumber(u32),
    /// One of [`OPERATORS`] other than the here-document openers.
    Op(&'static str),
    Newline,
    /// `<<WORD` or `<<-WORD`.
    HereDoc(HereBody),
    Eof,
}

/// A here-document whose body starts after the current line.
struct Pending {
    body: HereBody,
    delimiter: String,
    /// A quoted delimiter (`<<'EOF'`) makes the body literal.
    literal: bool,
    /// `<<-` strips leading tabs from the body and the delimiter line.
    strip_tabs: bool,
}

/// Where a word ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// A blank or an operator character: a command's word.
    Blank,
    /// The `}` of `${NAME<op>word}`.
    Brace,
    /// The `/` or `}` after the pattern of `${NAME/pattern/with}`.
    Slash,
    /// The `:` or `}` after the offset of `${NAME:offset:length}`.
    Colon,
    /// The `)` that closes `$((...))` or `((...))` (the parentheses inside are counted).
    Arith,
    /// The `]` that closes bash's old `$[...]` (the brackets inside are counted).
    Bracket,
    /// The right side of `[[ x =~ regex ]]`: a blank outside parentheses; `(`, `)` and `|`
    /// are part of it.
    Regex,
    /// Never: a here-document body, where only `$`, backquotes and backslashes are special.
    Heredoc,
}

pub(crate) struct Lexer {
    chars: Vec<char>,
    pos: usize,
    pending: Vec<Pending>,
    /// Nesting of compound commands and openers inside words (see [`MAX_PARSE_DEPTH`]).
    depth: usize,
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Whether `name` is a valid shell variable name.
pub(crate) fn is_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(is_name_char)
}

/// The message for syntax this shell refuses.
pub(crate) fn unsupported(what: &str) -> String {
    format!("{what} is not supported; {USE_INTERPRETER}")
}

impl Lexer {
    pub(crate) fn new(src: &str, depth: usize) -> Self {
        Self {
            chars: src.chars().collect(),
            pos: 0,
            pending: Vec::new(),
            depth,
        }
    }

    /// Opens one more level of nesting.
    ///
    /// # Errors
    /// Past [`MAX_PARSE_DEPTH`] levels.
    pub(crate) fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_PARSE_DEPTH {
            return Err(format!(
                "syntax error: nested too deeply (more than {MAX_PARSE_DEPTH} levels of compound \
                 commands, substitutions and expansions)"
            ));
        }
        Ok(())
    }

    pub(crate) fn leave(&mut self) {
        self.depth -= 1;
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    /// The character right after the last token, if it follows with no blank (`((`).
    pub(crate) fn next_char(&self) -> Option<char> {
        self.peek()
    }

    /// Steps over the character [`Lexer::next_char`] returned.
    pub(crate) fn skip_char(&mut self) {
        self.pos += 1;
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek();
        self.pos += usize::from(c.is_some());
        c
    }

    fn starts_with(&self, s: &str) -> bool {
        (self.pos..)
            .zip(s.chars())
            .all(|(i, c)| self.chars.get(i) == Some(&c))
    }

    /// Consumes characters while `keep` holds and returns them.
    fn take_while(&mut self, keep: impl Fn(char) -> bool) -> String {
        let start = self.pos;
        while self.peek().is_some_and(&keep) {
            self.pos += 1;
        }
        self.chars[start..self.pos].iter().collect()
    }

    /// The next token.
    ///
    /// # Errors
    /// Unterminated quotes and substitutions, unsupported syntax, nesting past the limit.
    pub(crate) fn next_token(&mut self) -> Result<Tok, String> {
        loop {
            match self.peek() {
                Some(' ' | '\t' | '\r') => self.pos += 1,
                // A line continuation between words joins the lines.
                Some('\\') if self.at(1) == Some('\n') => self.pos += 2,
                Some('#') => {
                    self.take_while(|c| c != '\n');
                }
                _ => break,
            }
        }
        let Some(c) = self.peek() else {
            // A here-document started on the last line has no body to read.
            self.read_heredoc_bodies()?;
            return Ok(Tok::Eof);
        };
        if c == '\n' {
            self.pos += 1;
            self.read_heredoc_bodies()?;
            return Ok(Tok::Newline);
        }
        if let Some(op) = OPERATORS.into_iter().find(|op| self.starts_with(op)) {
            if (op == "<" || op == ">") && self.at(1) == Some('(') {
                return self.process_substitution(op == "<");
            }
            self.pos += op.len();
            if op == "<<" || op == "<<-" {
                return self.heredoc(op == "<<-");
            }
            return Ok(Tok::Op(op));
        }
        if c.is_ascii_digit() {
            let digits = self.chars[self.pos..]
                .iter()
                .take(3)
                .take_while(|c| c.is_ascii_digit())
                .count();
            if digits <= 2 && matches!(self.at(digits), Some('<' | '>')) {
                let n: String = self.chars[self.pos..self.pos + digits].iter().collect();
                self.pos += digits;
                return Ok(Tok::IoNumber(n.parse().unwrap_or(u32::MAX)));
            }
        }
        Ok(Tok::Word(self.word(End::Blank, false)?))
    }

    /// `<(...)` (`reads`) or `>(...)` at the current position: a word of its own.
    fn process_substitution(&mut self, reads: bool) -> Result<Tok, String> {
        self.pos += 2;
        self.enter()?;
        let script = Box::new(parser::parse_nested(self)?);
        self.leave();
        if self.peek().is_some_and(|c| !" \t\r\n;&|<>()".contains(c)) {
            let shape = if reads { "<(...)" } else { ">(...)" };
            return Err(format!(
                "process substitution `{shape}` must be a word of its own"
            ));
        }
        let part = if reads {
            Part::Input { script }
        } else {
            Part::Output { script }
        };
        Ok(Tok::Word(Word { parts: vec![part] }))
    }

    fn heredoc(&mut self, strip_tabs: bool) -> Result<Tok, String> {
        self.take_while(|c| c == ' ' || c == '\t');
        if self.peek().is_none_or(|c| "\n;&|<>()".contains(c)) {
            return Err("here-document needs a delimiter word after `<<`".into());
        }
        let start = self.pos;
        self.word(End::Blank, false)?;
        let raw: String = self.chars[start..self.pos].iter().collect();
        let literal = raw.contains(['\'', '"', '\\']);
        // Quotes are removed and expansions left as written (`<<"$X"` ends at `$X`).
        let delimiter = raw.chars().filter(|c| !"'\"\\".contains(*c)).collect();
        let body = HereBody::default();
        self.pending.push(Pending {
            body: Rc::clone(&body),
            delimiter,
            literal,
            strip_tabs,
        });
        Ok(Tok::HereDoc(body))
    }

    /// Reads the bodies of the here-documents started on the line just ended.
    fn read_heredoc_bodies(&mut self) -> Result<(), String> {
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
            let word = if p.literal {
                let mut w = Word::default();
                w.push_lit(&body, true);
                w
            } else {
                let mut lx = Lexer::new(&body, self.depth);
                let mut w = lx.word(End::Heredoc, true)?;
                if w.parts.is_empty() {
                    w.push_lit("", true);
                }
                w
            };
            let _ = p.body.set(word);
        }
        Ok(())
    }

    /// The right side of `[[ x =~ regex ]]`, read right after the `=~` token.
    ///
    /// # Errors
    /// As [`Lexer::next_token`].
    pub(crate) fn regex_word(&mut self) -> Result<Word, String> {
        self.take_while(|c| c == ' ' || c == '\t');
        self.word(End::Regex, false)
    }

    /// The expression of `((...))` after its `((`, through the closing `))`.
    ///
    /// # Errors
    /// When it is not closed.
    pub(crate) fn arith_body(&mut self) -> Result<Word, String> {
        self.enter()?;
        let expr = self.word(End::Arith, false)?;
        self.leave();
        if self.peek() == Some(')') && self.at(1) == Some(')') {
            self.pos += 2;
            Ok(expr)
        } else {
            Err("syntax error: `((' without its `))'".into())
        }
    }

    /// Reads one word up to `end`. `dq`: inside double quotes (or a here-document), where
    /// only `$`, backquotes and some backslashes are special and everything is quoted.
    fn word(&mut self, end: End, dq: bool) -> Result<Word, String> {
        let mut w = Word::default();
        let mut parens = 0usize;
        while let Some(c) = self.peek() {
            match (end, c) {
                (
                    End::Blank,
                    ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')',
                ) => {
                    break;
                }
                (End::Brace | End::Slash | End::Colon, '}')
                | (End::Slash, '/')
                | (End::Colon, ':') => break,
                (End::Regex, ' ' | '\t' | '\r' | '\n') if parens == 0 => break,
                (End::Regex, ';' | '&' | '<' | '>') if parens == 0 => break,
                (End::Bracket, '[') => {
                    parens += 1;
                    self.pos += 1;
                    w.push_char(c, false);
                    continue;
                }
                (End::Bracket, ']') => {
                    if parens == 0 {
                        break;
                    }
                    parens -= 1;
                    self.pos += 1;
                    w.push_char(c, false);
                    continue;
                }
                (End::Arith | End::Regex, '(') => {
                    parens += 1;
                    self.pos += 1;
                    w.push_char(c, false);
                    continue;
                }
                (End::Arith | End::Regex, ')') => {
                    if parens == 0 {
                        break;
                    }
                    parens -= 1;
                    self.pos += 1;
                    w.push_char(c, false);
                    continue;
                }
                _ => {}
            }
            match c {
                '\\' => {
                    self.pos += 1;
                    let special = if dq { "$`\"\\\n" } else { "" };
                    match self.peek() {
                        None => w.push_lit("\\", true),
                        Some('\n') => self.pos += 1,
                        Some(e) if end == End::Heredoc && !"$`\\".contains(e) => {
                            w.push_lit("\\", true);
                        }
                        Some(e)
                            if dq && !special.contains(e) && !(e == '}' && end != End::Heredoc) =>
                        {
                            w.push_lit("\\", true);
                        }
                        Some(e) => {
                            self.pos += 1;
                            w.push_char(e, true);
                        }
                    }
                }
                '\'' if !dq => {
                    self.pos += 1;
                    let text = self.take_while(|c| c != '\'');
                    if self.bump().is_none() {
                        return Err("unexpected end of file: unterminated single quote".into());
                    }
                    w.parts.push(Part::Lit { text, quoted: true });
                }
                '"' if end != End::Heredoc => {
                    self.pos += 1;
                    self.double_quoted(&mut w)?;
                }
                '$' => self.dollar(&mut w, dq)?,
                '`' => self.backquoted(&mut w, dq)?,
                _ => {
                    self.pos += 1;
                    w.push_char(c, dq);
                }
            }
        }
        if end == End::Bracket && self.peek().is_none() {
            return Err("unexpected end of file: unterminated $[".into());
        }
        if end == End::Arith && self.peek().is_none() {
            return Err("unexpected end of file: unterminated arithmetic `((`".into());
        }
        Ok(w)
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
                            w.push_char(c, true);
                        }
                        Some('\n') => self.pos += 1,
                        _ => w.push_lit("\\", true),
                    }
                }
                Some('$') => self.dollar(w, true)?,
                Some('`') => self.backquoted(w, true)?,
                Some(c) => {
                    self.pos += 1;
                    w.push_char(c, true);
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

    /// `` `...` ``: the text up to the closing backquote, with `\$`, `` \` `` and `\\`
    /// unescaped, parsed as a script.
    fn backquoted(&mut self, w: &mut Word, quoted: bool) -> Result<(), String> {
        self.pos += 1;
        let mut src = String::new();
        loop {
            match self.bump() {
                None => return Err("unexpected end of file: unterminated backquote".into()),
                Some('`') => break,
                Some('\\') => match self.peek() {
                    Some(c @ ('$' | '`' | '\\')) => {
                        self.pos += 1;
                        src.push(c);
                    }
                    Some('"') if quoted => {
                        self.pos += 1;
                        src.push('"');
                    }
                    _ => src.push('\\'),
                },
                Some(c) => src.push(c),
            }
        }
        self.enter()?;
        let script = parser::parse_at_depth(&src, self.depth)?;
        self.leave();
        w.parts.push(Part::Command {
            script: Box::new(script),
            quoted,
        });
        Ok(())
    }

    /// `$...` at the current position.
    fn dollar(&mut self, w: &mut Word, quoted: bool) -> Result<(), String> {
        self.pos += 1;
        let name = match self.peek() {
            Some('(') if self.at(1) == Some('(') => {
                self.pos += 2;
                self.enter()?;
                let expr = self.word(End::Arith, false)?;
                self.leave();
                if !(self.peek() == Some(')') && self.at(1) == Some(')')) {
                    return Err("syntax error: `$((' without its `))'".into());
                }
                self.pos += 2;
                w.parts.push(Part::Arith { expr, quoted });
                return Ok(());
            }
            // `$[...]`: bash's old spelling of `$((...))`.
            Some('[') => {
                self.pos += 1;
                self.enter()?;
                let expr = self.word(End::Bracket, false)?;
                self.leave();
                self.pos += 1;
                w.parts.push(Part::Arith { expr, quoted });
                return Ok(());
            }
            Some('(') => {
                self.pos += 1;
                self.enter()?;
                let script = parser::parse_nested(self)?;
                self.leave();
                w.parts.push(Part::Command {
                    script: Box::new(script),
                    quoted,
                });
                return Ok(());
            }
            Some('{') => {
                self.pos += 1;
                self.enter()?;
                let part = self.braced(quoted)?;
                self.leave();
                w.parts.push(part);
                return Ok(());
            }
            Some('\'') if !quoted => {
                self.pos += 1;
                return self.ansi_c_quoted(w);
            }
            // `$"..."` (a translated string) is just the string here.
            Some('"') if !quoted => return Ok(()),
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
            op: None,
        });
        Ok(())
    }

    /// `$'...'` after the `$'`: bash's C-like escapes, quoted.
    fn ansi_c_quoted(&mut self, w: &mut Word) -> Result<(), String> {
        let text = self.ansi_c(true)?;
        w.parts.push(Part::Lit { text, quoted: true });
        Ok(())
    }

    /// The text up to the closing `'` (`closed`) or the end, with bash's C-like escapes
    /// decoded.
    fn ansi_c(&mut self, closed: bool) -> Result<String, String> {
        let unterminated = || "unexpected end of file: unterminated $'".to_string();
        let mut text = String::new();
        loop {
            match self.bump() {
                None if closed => return Err(unterminated()),
                None => break,
                Some('\'') if closed => break,
                Some('\\') => {
                    let Some(e) = self.bump() else {
                        if closed {
                            return Err(unterminated());
                        }
                        text.push('\\');
                        break;
                    };
                    let simple = match e {
                        'n' => Some('\n'),
                        't' => Some('\t'),
                        'r' => Some('\r'),
                        'a' => Some('\x07'),
                        'b' => Some('\x08'),
                        'e' | 'E' => Some('\x1b'),
                        'f' => Some('\x0c'),
                        'v' => Some('\x0b'),
                        '\\' | '\'' | '"' | '?' => Some(e),
                        _ => None,
                    };
                    if let Some(c) = simple {
                        text.push(c);
                        continue;
                    }
                    let (radix, max) = match e {
                        'x' => (16, 2),
                        'u' => (16, 4),
                        'U' => (16, 8),
                        '0'..='7' => {
                            self.pos -= 1;
                            (8, 3)
                        }
                        other => {
                            text.push('\\');
                            text.push(other);
                            continue;
                        }
                    };
                    let digits = self.take_while_max(|c| c.is_digit(radix), max);
                    match u32::from_str_radix(&digits, radix)
                        .ok()
                        .and_then(char::from_u32)
                    {
                        Some(c) => text.push(c),
                        None => {
                            text.push('\\');
                            text.push(e);
                            text.push_str(&digits);
                        }
                    }
                }
                Some(c) => text.push(c),
            }
        }
        Ok(text)
    }

    /// Consumes at most `max` characters while `keep` holds.
    fn take_while_max(&mut self, keep: impl Fn(char) -> bool, max: usize) -> String {
        let start = self.pos;
        while self.pos - start < max && self.peek().is_some_and(&keep) {
            self.pos += 1;
        }
        self.chars[start..self.pos].iter().collect()
    }

    /// `${...}` after the `${`, through the closing `}`.
    fn braced(&mut self, quoted: bool) -> Result<Part, String> {
        let start = self.pos;
        let bad = |lx: &mut Self| {
            let end = lx.chars[lx.pos..]
                .iter()
                .position(|&c| c == '}' || c == '\n')
                .map_or(lx.chars.len(), |i| lx.pos + i + 1);
            let text: String = lx.chars[start..end].iter().take(40).collect();
            let more = if end - start > 40 { "..." } else { "" };
            format!("bad substitution: ${{{text}{more}")
        };
        // `${#NAME}` is a length; `${#}` is `$#`.
        let length = self.peek() == Some('#') && self.at(1).is_some_and(|c| c != '}');
        if length {
            self.pos += 1;
        }
        // `${!NAME}` expands the variable NAME names; `${!PREFIX*}` lists names. The `!` stays
        // in the name for [`super::expand`] (`$!` alone is `!`).
        let indirect = !length
            && self.peek() == Some('!')
            && self
                .at(1)
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        if indirect {
            self.pos += 1;
        }
        let mut name = match self.peek() {
            Some(c) if c.is_ascii_alphabetic() || c == '_' => self.take_while(is_name_char),
            Some(c) if c.is_ascii_digit() => self.take_while(|c| c.is_ascii_digit()),
            Some(c @ ('?' | '$' | '#' | '@' | '*' | '!' | '-')) => {
                self.pos += 1;
                c.to_string()
            }
            _ => return Err(bad(self)),
        };
        if indirect {
            let listing = matches!(self.peek(), Some('*' | '@')) && self.at(1) == Some('}');
            name = match listing {
                true => format!("!{name}{}", self.bump().unwrap_or('*')),
                false => format!("!{name}"),
            };
        }
        let index = if self.peek() == Some('[') && !name.starts_with('!') {
            Some(self.subscript()?)
        } else if indirect && self.peek() == Some('[') {
            match (self.at(1), self.at(2)) {
                (Some(c @ ('@' | '*')), Some(']')) => {
                    self.pos += 3;
                    name.remove(0);
                    Some(Index::Keys { at: c == '@' })
                }
                _ => return Err(unsupported("indirection through an array element")),
            }
        } else {
            None
        };
        let part = |name: String, op: Option<ParamOp>| match index {
            Some(index) => Part::Element {
                name,
                index,
                quoted,
                op: op.map(Box::new),
            },
            None => Part::Param {
                name,
                quoted,
                op: op.map(Box::new),
            },
        };
        if length {
            if self.bump() != Some('}') {
                return Err(bad(self));
            }
            return Ok(part(name, Some(ParamOp::Length)));
        }
        let operand = |lx: &mut Self, end: End| lx.word(end, quoted);
        // A pattern is a pattern even inside double quotes (`"${p##*/}"`), as in bash.
        let pattern = |lx: &mut Self, end: End| lx.word(end, false);
        let op = match self.bump() {
            Some('}') => None,
            Some('@') => match self.bump() {
                Some(c @ ('Q' | 'E' | 'U' | 'u' | 'L' | 'A' | 'a' | 'K' | 'k')) => {
                    Some(ParamOp::Transform(c))
                }
                Some('P') => return Err(unsupported("`${NAME@P}` (prompt strings)")),
                _ => {
                    self.pos -= 1;
                    return Err(bad(self));
                }
            },
            Some(c @ ('^' | ',')) => {
                let all = self.peek() == Some(c);
                self.pos += usize::from(all);
                Some(ParamOp::Case {
                    upper: c == '^',
                    all,
                })
            }
            Some(':') => match self.peek() {
                Some(c @ ('-' | '=' | '+' | '?')) => {
                    self.pos += 1;
                    let word = operand(self, End::Brace)?;
                    Some(with_operand(c, word, true))
                }
                _ => {
                    let offset = operand(self, End::Colon)?;
                    let length = if self.peek() == Some(':') {
                        self.pos += 1;
                        Some(operand(self, End::Brace)?)
                    } else {
                        None
                    };
                    Some(ParamOp::Slice { offset, length })
                }
            },
            Some(c @ ('-' | '=' | '+' | '?')) => {
                let word = operand(self, End::Brace)?;
                Some(with_operand(c, word, false))
            }
            Some(c @ ('#' | '%')) => {
                let longest = self.peek() == Some(c);
                self.pos += usize::from(longest);
                let pattern = pattern(self, End::Brace)?;
                Some(if c == '#' {
                    ParamOp::RemovePrefix { pattern, longest }
                } else {
                    ParamOp::RemoveSuffix { pattern, longest }
                })
            }
            Some('/') => {
                let (all, anchor) = match self.peek() {
                    Some('/') => (true, None),
                    Some(c @ ('#' | '%')) => (false, Some(c)),
                    _ => (false, None),
                };
                self.pos += usize::from(all || anchor.is_some());
                let pattern = pattern(self, End::Slash)?;
                let with = if self.peek() == Some('/') {
                    self.pos += 1;
                    operand(self, End::Brace)?
                } else {
                    Word::default()
                };
                Some(ParamOp::Replace {
                    pattern,
                    with,
                    all,
                    anchor,
                })
            }
            _ => {
                self.pos -= 1;
                return Err(bad(self));
            }
        };
        if op.is_some() && self.bump() != Some('}') {
            return Err("unexpected end of file: unterminated ${".into());
        }
        Ok(part(name, op))
    }

    /// `[@]`, `[*]` or `[expr]` after a name in `${...}`, at its `[`.
    fn subscript(&mut self) -> Result<Index, String> {
        if let (Some(c @ ('@' | '*')), Some(']')) = (self.at(1), self.at(2)) {
            self.pos += 3;
            return Ok(Index::All { at: c == '@' });
        }
        self.pos += 1;
        self.enter()?;
        let expr = self.word(End::Bracket, false)?;
        self.leave();
        self.pos += 1;
        if expr.parts.is_empty() {
            return Err("bad array subscript".into());
        }
        Ok(Index::At(expr))
    }
}

/// `text` with bash's `$'...'` escapes decoded (`${NAME@E}`).
pub(crate) fn ansi_c_decoded(text: &str) -> String {
    Lexer::new(text, 0).ansi_c(false).unwrap_or_default()
}

/// The operation of `${NAME<c>word}` for `c` one of `-`, `=`, `+`, `?`.
fn with_operand(c: char, word: Word, colon: bool) -> ParamOp {
    match c {
        '-' => ParamOp::Default { word, colon },
        '=' => ParamOp::Assign { word, colon },
        '+' => ParamOp::Alternative { word, colon },
        _ => ParamOp::Error { word, colon },
    }
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
            op: None,
        }
    }

    /// Every token of `src`, up to the end.
    fn tokenize(src: &str) -> Result<Vec<Tok>, String> {
        let mut lx = Lexer::new(src, 0);
        let mut toks = Vec::new();
        loop {
            match lx.next_token()? {
                Tok::Eof => return Ok(toks),
                t => toks.push(t),
            }
        }
    }

    fn words(src: &str) -> Vec<Vec<Part>> {
        tokenize(src)
            .unwrap()
            .into_iter()
            .filter_map(|t| match t {
                Tok::Word(w) => Some(w.parts),
                _ => None,
            })
            .collect()
    }

    fn body(t: &Tok) -> Vec<Part> {
        match t {
            Tok::HereDoc(b) => b.get().unwrap().parts.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn splits_words_and_operators() {
        let t = tokenize("ls -l|wc -l&&echo a;b||c\n").unwrap();
        assert_eq!(t.len(), 13);
        assert_eq!(t[2], Tok::Op("|"));
        assert_eq!(t[5], Tok::Op("&&"));
        assert_eq!(t[8], Tok::Op(";"));
        assert_eq!(t[10], Tok::Op("||"));
        assert_eq!(t[12], Tok::Newline);
        let t = tokenize("a&>>b<<<c>|d;;&e;&").unwrap();
        assert_eq!(t[1], Tok::Op("&>>"));
        assert_eq!(t[3], Tok::Op("<<<"));
        assert_eq!(t[5], Tok::Op(">|"));
        assert_eq!(t[7], Tok::Op(";;&"));
        assert_eq!(t[9], Tok::Op(";&"));
        assert!(matches!(words("cat <(ls)")[1][0], Part::Input { .. }));
        assert!(matches!(words("tee >(wc -l)")[1][0], Part::Output { .. }));
        assert!(matches!(words("echo > >(cat)")[1][0], Part::Output { .. }));
        assert!(
            tokenize("cat <(ls)x")
                .unwrap_err()
                .contains("word of its own")
        );
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
        assert_eq!(words("{a,b}"), vec![vec![lit("{a,b}", false)]]);
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
    fn parameters_and_substitutions() {
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
            Part::Param { op: Some(op), .. } => assert_eq!(
                **op,
                ParamOp::Default {
                    word: Word {
                        parts: vec![lit("d e", false)]
                    },
                    colon: true
                }
            ),
            other => panic!("{other:?}"),
        }
        match &words("${X//a/$Y}")[0][0] {
            Part::Param { op: Some(op), .. } => {
                assert!(matches!(**op, ParamOp::Replace { all: true, .. }));
            }
            other => panic!("{other:?}"),
        }
        match &words("${#X}")[0][0] {
            Part::Param { op: Some(op), .. } => assert_eq!(**op, ParamOp::Length),
            other => panic!("{other:?}"),
        }
        for bad in ["${-a}", "${:-a}", "${}", "${X!}"] {
            assert!(
                tokenize(bad).unwrap_err().contains("bad substitution"),
                "{bad}"
            );
        }
        assert!(matches!(
            &words("${a[i+1]}")[0][0],
            Part::Element { name, index: Index::At(_), op: None, .. } if name == "a"
        ));
        assert!(matches!(
            &words("${#a[@]}")[0][0],
            Part::Element { index: Index::All { at: true }, op: Some(op), .. }
                if **op == ParamOp::Length
        ));
        assert!(matches!(
            &words("${!a[*]}")[0][0],
            Part::Element {
                index: Index::Keys { at: false },
                ..
            }
        ));
        assert!(tokenize("${!a[0]}").unwrap_err().contains("not supported"));
        assert!(
            tokenize("${a[]}")
                .unwrap_err()
                .contains("bad array subscript")
        );
        assert_eq!(
            words("$'a\\tb\\x41\\101\\u00e9\\'\\q'"),
            vec![vec![lit("a\tbAAé'\\q", true)]]
        );
        assert!(tokenize("$'abc").is_err());
        assert!(matches!(
            words("$(echo a)")[0][0],
            Part::Command { quoted: false, .. }
        ));
        assert!(matches!(
            words("\"`echo a`\"")[0][0],
            Part::Command { quoted: true, .. }
        ));
        assert!(matches!(words("$((1+(2)))")[0][0], Part::Arith { .. }));
        assert!(tokenize("$(echo").is_err());
        assert!(tokenize("$((1+1)").is_err());
        assert!(tokenize("`echo").is_err());
    }

    #[test]
    fn io_numbers() {
        let t = tokenize("echo a#b # comment\n2>x 10>y").unwrap();
        assert_eq!(
            t[1],
            Tok::Word(Word {
                parts: vec![lit("a#b", false)]
            })
        );
        assert_eq!(t[2], Tok::Newline);
        assert_eq!(t[3], Tok::IoNumber(2));
        assert_eq!(t[6], Tok::IoNumber(10));
        let t = tokenize("echo 2 >x").unwrap();
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
        assert_eq!(
            body(&t[1]),
            vec![lit("hi ", true), param("X", true), lit("\n$y\n", true)]
        );
        assert_eq!(t.len(), 7);
        let t = tokenize("cat <<'E'\n$X\n\tE\nE\n").unwrap();
        assert_eq!(body(&t[1]), vec![lit("$X\n\tE\n", true)]);
        let t = tokenize("cat <<-E\n\tx\n\tE\n").unwrap();
        assert_eq!(body(&t[1]), vec![lit("x\n", true)]);
        let t = tokenize("cat <<E").unwrap();
        assert_eq!(body(&t[1]), vec![lit("", true)]);
        let t = tokenize("cat <<E\n'a' \"b\" \\n $\nE").unwrap();
        assert_eq!(body(&t[1]), vec![lit("'a' \"b\" \\n $\n", true)]);
        let t = tokenize("cat <<E\n$((1+1)) $(echo)\nE").unwrap();
        assert!(matches!(body(&t[1])[0], Part::Arith { quoted: true, .. }));
        assert!(tokenize("cat <<\n").is_err());
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = "$(".repeat(MAX_PARSE_DEPTH + 1);
        assert!(tokenize(&deep).unwrap_err().contains("nested too deeply"));
        let ok = format!("{}x{}", "$(".repeat(20), ")".repeat(20));
        assert!(tokenize(&ok).is_ok());
    }
}
