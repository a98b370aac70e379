//! The lexer: Python and JavaScript source as [`Token`]s, with brackets matched, and the small
//! queries every other scan asks of them ([`Source`]).
//!
//! It only has to be right about what matters for advice (comments and string contents are not
//! code, brackets nest, Python blocks follow indentation) and it has to be safe on anything:
//! it is linear in the input, never fails (anything unexpected becomes a one-byte operator),
//! and slices only at ASCII positions, so arbitrary UTF-8 cannot make it panic.
//!
//! Its operators and keyword lists are data, in `words/scan.toml`.

use sandbox_protocol::Language;

use crate::words::list;

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Ident,
    Number,
    /// A string literal; `text` is what is between the quotes, escapes left as written.
    Str,
    /// A JavaScript regular-expression literal.
    Regex,
    Op,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Token<'a> {
    pub kind: Kind,
    pub text: &'a str,
    /// 1-based line of the token's start.
    pub line: u32,
    /// First token of a logical line (Python: outside brackets; JavaScript: of a physical line).
    pub line_start: bool,
    /// Indentation (columns) of the line the token starts, when `line_start`.
    pub indent: u32,
    /// Bracket depth before the token.
    pub depth: u32,
}

/// Tokens plus the index of each bracket's partner (`NONE` when unmatched or not a bracket).
pub(crate) struct Source<'a> {
    pub language: Language,
    /// The code the tokens point into.
    pub code: &'a str,
    pub tokens: Vec<Token<'a>>,
    pub partner: Vec<usize>,
}

pub(crate) const NONE: usize = usize::MAX;

/// Bytes of identifiers: ASCII letters, digits and `_`, all of non-ASCII UTF-8, and `$` in
/// JavaScript.
fn is_ident_byte(b: u8, language: Language) -> bool {
    b.is_ascii_alphanumeric()
        || b == b'_'
        || b >= 0x80
        || (b == b'$' && language == Language::JavaScript)
}

impl<'a> Source<'a> {
    /// Tokenises `code`. Never fails: anything unexpected becomes a one-byte operator.
    pub fn new(code: &'a str, language: Language) -> Self {
        let tokens = lex(code, language);
        let partner = match_brackets(&tokens);
        Self {
            language,
            code,
            tokens,
            partner,
        }
    }

    /// The source text from token `from` to the end of token `to` (inclusive), as written.
    pub fn text(&self, from: usize, to: usize) -> &'a str {
        let offset = |t: &Token<'a>| t.text.as_ptr() as usize - self.code.as_ptr() as usize;
        let (Some(a), Some(b)) = (self.tokens.get(from), self.tokens.get(to)) else {
            return "";
        };
        let (start, end) = (offset(a), offset(b) + b.text.len());
        if start > end {
            return "";
        }
        self.code.get(start..end).unwrap_or("")
    }

    /// True when token `i` is the operator or word `text` (not a string with that content).
    pub fn is(&self, i: usize, text: &str) -> bool {
        self.tokens
            .get(i)
            .is_some_and(|t| t.text == text && matches!(t.kind, Kind::Op | Kind::Ident))
    }

    /// The identifier at `i`, if token `i` is one.
    pub fn ident(&self, i: usize) -> Option<&'a str> {
        self.tokens
            .get(i)
            .filter(|t| t.kind == Kind::Ident)
            .map(|t| t.text)
    }

    /// True when token `i` follows a `.` or `?.` (an attribute, not a free name).
    pub fn is_member(&self, i: usize) -> bool {
        i > 0 && (self.is(i - 1, ".") || self.is(i - 1, "?."))
    }

    /// The dotted name starting at `i` (`os.path.join`) and the index after it.
    pub fn dotted(&self, i: usize) -> Option<(String, usize)> {
        let mut name = self.ident(i)?.to_owned();
        let mut j = i + 1;
        while self.is(j, ".") {
            match self.ident(j + 1) {
                Some(part) => {
                    name.push('.');
                    name.push_str(part);
                    j += 2;
                }
                None => break,
            }
        }
        Some((name, j))
    }

    /// The dotted callee ending just before the `(` at `open` (`json.load` for `json.load(`).
    pub fn callee(&self, open: usize) -> Option<String> {
        if open == 0 || !self.is(open, "(") {
            return None;
        }
        let mut start = open - 1;
        self.ident(start)?;
        while start >= 2 && self.is(start - 1, ".") && self.ident(start - 2).is_some() {
            start -= 2;
        }
        let parts: Vec<&str> = (start..open)
            .step_by(2)
            .map(|k| self.tokens[k].text)
            .collect();
        Some(parts.join("."))
    }

    /// Start indices of the statements: logical lines, split at top-level `;` and, in Python,
    /// after the `:` that ends a compound statement's header (`for x in y: total += x`).
    pub fn statements(&self) -> Vec<(usize, usize)> {
        let mut spans = Vec::new();
        let mut start = 0;
        let n = self.tokens.len();
        let mut i = 0;
        while i < n {
            let t = &self.tokens[i];
            if i > start && t.line_start && (self.language == Language::Python || t.depth == 0) {
                spans.push((start, i));
                start = i;
            }
            let base = self.tokens[start].depth;
            if t.kind == Kind::Op && t.depth == base {
                let split = t.text == ";"
                    || (t.text == ":"
                        && self.language == Language::Python
                        && self.ident(start).is_some_and(is_python_compound));
                if split {
                    spans.push((start, i + 1));
                    start = i + 1;
                }
            }
            i += 1;
        }
        if start < n {
            spans.push((start, n));
        }
        spans.retain(|(a, b)| a < b);
        spans
    }
}

/// Keywords that start a compound statement, whose header ends with `:`.
fn is_python_compound(word: &str) -> bool {
    list("scan.python_compound").iter().any(|k| k == word)
}

/// One pass over the source: the position and what the next token needs to know.
struct Lexer<'a> {
    code: &'a str,
    bytes: &'a [u8],
    language: Language,
    python: bool,
    tokens: Vec<Token<'a>>,
    /// The next byte to read.
    pos: usize,
    /// 1-based line at `pos`.
    line: u32,
    /// Bracket depth at `pos`.
    depth: u32,
    /// Where the physical line of `pos` begins (for its indentation).
    line_begin: usize,
    /// The next token starts a logical line.
    at_line_start: bool,
}

/// The tokens of `code`.
fn lex(code: &str, language: Language) -> Vec<Token<'_>> {
    let mut lexer = Lexer {
        code,
        bytes: code.as_bytes(),
        language,
        python: language == Language::Python,
        tokens: Vec::with_capacity(code.len() / 4),
        pos: 0,
        line: 1,
        depth: 0,
        line_begin: 0,
        at_line_start: true,
    };
    while lexer.pos < lexer.bytes.len() {
        if !lexer.skip_trivia() {
            lexer.token();
        }
    }
    lexer.tokens
}

impl<'a> Lexer<'a> {
    /// Skips one newline, blank, line continuation or comment at `pos`. False when a token
    /// starts there instead.
    fn skip_trivia(&mut self) -> bool {
        let b = self.bytes;
        let i = self.pos;
        match b[i] {
            b'\n' => {
                self.line += 1;
                self.pos = i + 1;
                self.line_begin = self.pos;
                if !self.python || self.depth == 0 {
                    self.at_line_start = true;
                }
            }
            b' ' | b'\t' | b'\r' | 0x0c => self.pos = i + 1,
            b'\\' if self.python && matches!(b.get(i + 1), Some(b'\n' | b'\r')) => {
                // Explicit line continuation: the logical line goes on.
                let mut j = i + 1;
                if b.get(j) == Some(&b'\r') {
                    j += 1;
                }
                if b.get(j) == Some(&b'\n') {
                    j += 1;
                    self.line += 1;
                }
                self.pos = j;
            }
            b'#' if self.python => self.pos = line_end(b, i),
            b'/' if !self.python && b.get(i + 1) == Some(&b'/') => self.pos = line_end(b, i),
            b'/' if !self.python && b.get(i + 1) == Some(&b'*') => {
                let mut j = i + 2;
                while j < b.len() && !(b[j] == b'*' && b.get(j + 1) == Some(&b'/')) {
                    if b[j] == b'\n' {
                        self.line += 1;
                    }
                    j += 1;
                }
                self.pos = (j + 2).min(b.len());
            }
            _ => return false,
        }
        true
    }

    /// Reads the token at `pos` and tracks the bracket depth.
    fn token(&mut self) {
        let i = self.pos;
        let start_line = self.line;
        let line_start = std::mem::take(&mut self.at_line_start);
        let indent = if line_start {
            indent_at(self.bytes, self.line_begin)
        } else {
            0
        };
        let (kind, from, to, next) = self.scan();
        let mut token_depth = self.depth;
        if kind == Kind::Op {
            match &self.bytes[from..to] {
                b"(" | b"[" | b"{" => self.depth = self.depth.saturating_add(1),
                b")" | b"]" | b"}" => {
                    self.depth = self.depth.saturating_sub(1);
                    token_depth = self.depth;
                }
                _ => {}
            }
        }
        self.tokens.push(Token {
            kind,
            text: &self.code[from..to],
            line: start_line,
            line_start,
            indent,
            depth: token_depth,
        });
        self.pos = next.max(i + 1);
    }

    /// The token at `pos`: (kind, text start, text end, index after it).
    fn scan(&mut self) -> (Kind, usize, usize, usize) {
        let (b, i) = (self.bytes, self.pos);
        let c = b[i];
        if c == b'"' || c == b'\'' || (c == b'`' && !self.python) {
            self.string(i)
        } else if is_ident_byte(c, self.language) && !c.is_ascii_digit() {
            let j = (i..b.len())
                .find(|&j| !is_ident_byte(b[j], self.language))
                .unwrap_or(b.len());
            if self.python && is_string_prefix(&b[i..j]) && matches!(b.get(j), Some(b'"' | b'\'')) {
                self.string(j)
            } else {
                (Kind::Ident, i, j, j)
            }
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            let j = number_end(b, i);
            (Kind::Number, i, j, j)
        } else if c == b'/' && !self.python && regex_allowed(&self.tokens) {
            match scan_regex(b, i) {
                Some(end) => (Kind::Regex, i + 1, end, end + 1),
                None => (Kind::Op, i, i + 1, i + 1),
            }
        } else {
            // Multi-character operators, longest first.
            let len = list("scan.operators")
                .iter()
                .find(|op| b[i..].starts_with(op.as_bytes()))
                .map_or(1, |op| op.len());
            // A lone non-ASCII byte cannot get here (it is an identifier byte), so `len` ends
            // on a character boundary.
            (Kind::Op, i, i + len, i + len)
        }
    }

    /// The string literal whose quote is at `q`; its newlines count as lines.
    fn string(&mut self, q: usize) -> (Kind, usize, usize, usize) {
        let (from, to, next, lines) = scan_string(self.bytes, q, self.python);
        self.line += lines;
        (Kind::Str, from, to, next)
    }
}

/// Columns of indentation at `from` (tabs to the next multiple of 8).
fn indent_at(b: &[u8], from: usize) -> u32 {
    let mut cols = 0u32;
    for &c in &b[from..] {
        match c {
            b' ' => cols += 1,
            b'\t' => cols = (cols / 8 + 1) * 8,
            0x0c => {}
            _ => break,
        }
    }
    cols
}

/// The index of the newline that ends the line at `from` (or the end of the input).
fn line_end(b: &[u8], from: usize) -> usize {
    (from..b.len()).find(|&j| b[j] == b'\n').unwrap_or(b.len())
}

/// Python string prefixes: `r`, `b`, `f`, `u` and pairs such as `rb`.
fn is_string_prefix(word: &[u8]) -> bool {
    word.len() <= 2
        && word
            .iter()
            .all(|c| matches!(c.to_ascii_lowercase(), b'r' | b'b' | b'u' | b'f'))
}

/// The end of the numeric literal starting at `i` (`1_000`, `1e-3`, `0x1F`, `10n`).
fn number_end(b: &[u8], i: usize) -> usize {
    let hex = b.get(i + 1).is_some_and(|x| matches!(x, b'x' | b'X'));
    let mut j = i;
    while j < b.len() {
        let d = b[j];
        let exponent_sign =
            (d == b'+' || d == b'-') && j > i && matches!(b[j - 1], b'e' | b'E') && !hex;
        if d.is_ascii_alphanumeric() || d == b'_' || d == b'.' || exponent_sign {
            j += 1;
        } else {
            break;
        }
    }
    j
}

/// Scans a string literal whose quote is at `q`. Returns (content start, content end, index
/// after the literal, newlines inside). Unterminated single-line strings end at the newline.
fn scan_string(b: &[u8], q: usize, python: bool) -> (usize, usize, usize, u32) {
    let n = b.len();
    let quote = b[q];
    let triple = python && b.get(q + 1) == Some(&quote) && b.get(q + 2) == Some(&quote);
    let template = quote == b'`';
    let from = if triple { q + 3 } else { q + 1 };
    let mut j = from;
    let mut lines = 0u32;
    let mut template_depth = 0u32;
    while j < n {
        let c = b[j];
        if c == b'\\' {
            if b.get(j + 1) == Some(&b'\n') {
                lines += 1;
            }
            j += 2;
            continue;
        }
        if template {
            if template_depth == 0 && c == b'`' {
                return (from, j, j + 1, lines);
            }
            if c == b'$' && b.get(j + 1) == Some(&b'{') {
                template_depth += 1;
                j += 2;
                continue;
            }
            if template_depth > 0 && c == b'{' {
                template_depth += 1;
            }
            if template_depth > 0 && c == b'}' {
                template_depth -= 1;
            }
            if c == b'\n' {
                lines += 1;
            }
        } else if triple {
            if c == quote && b.get(j + 1) == Some(&quote) && b.get(j + 2) == Some(&quote) {
                return (from, j, j + 3, lines);
            }
            if c == b'\n' {
                lines += 1;
            }
        } else {
            if c == quote {
                return (from, j, j + 1, lines);
            }
            if c == b'\n' {
                return (from, j, j, lines);
            }
        }
        j += 1;
    }
    (from, n, n, lines)
}

/// True when a `/` after these tokens starts a regular expression (after an operator or a
/// keyword such as `return`), not a division.
fn regex_allowed(tokens: &[Token<'_>]) -> bool {
    match tokens.last() {
        None => true,
        Some(t) => match t.kind {
            Kind::Op => !matches!(t.text, ")" | "]" | "}" | "++" | "--"),
            Kind::Ident => list("scan.js_regex_after").iter().any(|k| k == t.text),
            _ => false,
        },
    }
}

/// The index of the closing `/` of a regex literal starting at `start`, or None when the line
/// ends first (then it was a division after all).
fn scan_regex(b: &[u8], start: usize) -> Option<usize> {
    let mut j = start + 1;
    let mut class = false;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 1,
            b'[' => class = true,
            b']' => class = false,
            b'/' if !class => return Some(j),
            b'\n' => return None,
            _ => {}
        }
        j += 1;
    }
    None
}

/// The partner of each bracket token (`NONE` for the rest and for unmatched ones).
fn match_brackets(tokens: &[Token<'_>]) -> Vec<usize> {
    let mut partner = vec![NONE; tokens.len()];
    let mut stack: Vec<usize> = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if t.kind != Kind::Op {
            continue;
        }
        let open = match t.text {
            "(" | "[" | "{" => {
                stack.push(i);
                continue;
            }
            ")" => "(",
            "]" => "[",
            "}" => "{",
            _ => continue,
        };
        if let Some(pos) = stack.iter().rposition(|&k| tokens[k].text == open) {
            // Unclosed brackets in between stay unmatched.
            let k = stack[pos];
            stack.truncate(pos);
            partner[k] = i;
            partner[i] = k;
        }
    }
    partner
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_string_contents_are_not_code_tokens() {
        let s = Source::new(
            "x = 'import os'  # import sys\ny = \"\"\"\nimport re\n\"\"\"\nimport json",
            Language::Python,
        );
        let code: Vec<&str> = s
            .tokens
            .iter()
            .filter(|t| t.kind != Kind::Str)
            .map(|t| t.text)
            .collect();
        assert_eq!(code, ["x", "=", "y", "=", "import", "json"]);
        assert_eq!(s.tokens.last().unwrap().line, 5);
    }

    #[test]
    fn statements_split_compound_headers() {
        let s = Source::new(
            "for x in y: total += x\nif a: b = 1; c = 2",
            Language::Python,
        );
        assert_eq!(s.statements().len(), 5);
    }

    #[test]
    fn tokens_know_kind_line_depth_and_indentation() {
        let s = Source::new(
            "if f(a, [b]):\n\tx = 0x1F + 1e-3 + rb'raw'\n",
            Language::Python,
        );
        let table: Vec<(Kind, &str, u32, u32)> = s
            .tokens
            .iter()
            .map(|t| (t.kind, t.text, t.line, t.depth))
            .collect();
        use Kind::*;
        #[rustfmt::skip]
        let expected = [
            (Ident, "if", 1, 0), (Ident, "f", 1, 0), (Op, "(", 1, 0), (Ident, "a", 1, 1),
            (Op, ",", 1, 1), (Op, "[", 1, 1), (Ident, "b", 1, 2), (Op, "]", 1, 1), (Op, ")", 1, 0),
            (Op, ":", 1, 0), (Ident, "x", 2, 0), (Op, "=", 2, 0), (Number, "0x1F", 2, 0),
            (Op, "+", 2, 0), (Number, "1e-3", 2, 0), (Op, "+", 2, 0), (Str, "raw", 2, 0),
        ];
        assert_eq!(table, expected);
        assert_eq!(s.tokens[10].indent, 8);
        assert!(s.tokens[10].line_start && !s.tokens[11].line_start);
        assert_eq!(s.partner[2], 8);
        assert_eq!(s.callee(2).as_deref(), Some("f"));
    }

    #[test]
    fn javascript_regexes_comments_and_templates() {
        let s = Source::new(
            "/* a\nb */ const r = /x\\/y/g; const q = a / b; // c\nconst t = `${x}`",
            Language::JavaScript,
        );
        let kinds: Vec<(Kind, &str)> = s
            .tokens
            .iter()
            .filter(|t| t.kind != Kind::Ident && t.kind != Kind::Op)
            .map(|t| (t.kind, t.text))
            .collect();
        assert_eq!(kinds, [(Kind::Regex, "x\\/y"), (Kind::Str, "${x}")]);
        assert_eq!(s.tokens.last().unwrap().line, 3);
    }
}
