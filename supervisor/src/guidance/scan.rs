//! A small lexer for Python and JavaScript and the facts the guidance reads off its tokens:
//! imports, loops with their bounds, recursion, names used but not defined, path literals.
//!
//! It is not a parser. It only has to be right about what matters for advice (comments and
//! string contents are not code, brackets nest, Python blocks follow indentation) and it has to
//! be safe on anything: every scan is linear in the input, recursion is depth-bounded, and
//! slicing happens only at ASCII positions, so arbitrary UTF-8 cannot make it panic.

use std::collections::{HashMap, HashSet};

use sandbox_protocol::Language;

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

/// Multi-character operators of both languages, longest first.
#[rustfmt::skip]
const OPERATORS: [&str; 39] = [
    ">>>=", "...", "===", "!==", "**=", "//=", ">>=", "<<=", "&&=", "||=", "??=", ">>>", "**", "//",
    "==", "!=", "<=", ">=", "->", ":=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", "=>",
    "&&", "||", "??", "?.", "++", "--", "<<", ">>", "::",
];

/// Keywords after which a JavaScript `/` starts a regular expression, not a division.
#[rustfmt::skip]
const JS_REGEX_AFTER: [&str; 14] = [
    "return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do",
    "else", "yield", "await",
];

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

    pub fn is(&self, i: usize, text: &str) -> bool {
        self.tokens
            .get(i)
            .is_some_and(|t| t.text == text && matches!(t.kind, Kind::Op | Kind::Ident))
    }

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

fn is_python_compound(word: &str) -> bool {
    matches!(
        word,
        "for"
            | "while"
            | "if"
            | "elif"
            | "else"
            | "with"
            | "try"
            | "except"
            | "finally"
            | "def"
            | "class"
            | "async"
    )
}

fn lex(code: &str, language: Language) -> Vec<Token<'_>> {
    let b = code.as_bytes();
    let n = b.len();
    let python = language == Language::Python;
    let mut tokens: Vec<Token<'_>> = Vec::with_capacity(n / 4);
    let mut i = 0;
    let mut line: u32 = 1;
    let mut depth: u32 = 0;
    let mut line_begin = 0;
    let mut at_line_start = true;

    let indent_of = |from: usize| -> u32 {
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
    };

    while i < n {
        let c = b[i];
        match c {
            b'\n' => {
                line += 1;
                i += 1;
                line_begin = i;
                if !python || depth == 0 {
                    at_line_start = true;
                }
                continue;
            }
            b' ' | b'\t' | b'\r' | 0x0c => {
                i += 1;
                continue;
            }
            b'\\' if python && (b.get(i + 1) == Some(&b'\n') || b.get(i + 1) == Some(&b'\r')) => {
                // Explicit line continuation: the logical line goes on.
                i += 1;
                if b.get(i) == Some(&b'\r') {
                    i += 1;
                }
                if b.get(i) == Some(&b'\n') {
                    i += 1;
                    line += 1;
                }
                continue;
            }
            b'#' if python => {
                while i < n && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if !python && b.get(i + 1) == Some(&b'/') => {
                while i < n && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if !python && b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < n && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    if b[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i = (i + 2).min(n);
                continue;
            }
            _ => {}
        }

        let start_line = line;
        let line_start = std::mem::take(&mut at_line_start);
        let indent = if line_start { indent_of(line_begin) } else { 0 };
        let (kind, from, to, next) = if c == b'"' || c == b'\'' || (c == b'`' && !python) {
            let (from, to, next, lines) = scan_string(b, i, python);
            line += lines;
            (Kind::Str, from, to, next)
        } else if is_ident_byte(c, language) && !c.is_ascii_digit() {
            let mut j = i;
            while j < n && is_ident_byte(b[j], language) {
                j += 1;
            }
            let word = &b[i..j];
            let quote = b.get(j).copied();
            if python
                && matches!(quote, Some(b'"') | Some(b'\''))
                && word.len() <= 2
                && word
                    .iter()
                    .all(|c| matches!(c.to_ascii_lowercase(), b'r' | b'b' | b'u' | b'f'))
            {
                let (from, to, next, lines) = scan_string(b, j, python);
                line += lines;
                (Kind::Str, from, to, next)
            } else {
                (Kind::Ident, i, j, j)
            }
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            let mut j = i;
            while j < n {
                let d = b[j];
                let exponent_sign = (d == b'+' || d == b'-')
                    && j > i
                    && matches!(b[j - 1], b'e' | b'E')
                    && !(b.get(i + 1).is_some_and(|x| matches!(x, b'x' | b'X')));
                if d.is_ascii_alphanumeric() || d == b'_' || d == b'.' || exponent_sign {
                    j += 1;
                } else {
                    break;
                }
            }
            (Kind::Number, i, j, j)
        } else if c == b'/' && !python && regex_allowed(&tokens) {
            match scan_regex(b, i) {
                Some(end) => (Kind::Regex, i + 1, end, end + 1),
                None => (Kind::Op, i, i + 1, i + 1),
            }
        } else {
            let len = OPERATORS
                .iter()
                .find(|op| b[i..].starts_with(op.as_bytes()))
                .map_or(1, |op| op.len());
            // A lone non-ASCII byte cannot get here (it is an identifier byte), so `len` ends
            // on a character boundary.
            (Kind::Op, i, i + len, i + len)
        };

        let mut token_depth = depth;
        if kind == Kind::Op {
            match &b[from..to] {
                b"(" | b"[" | b"{" => depth = depth.saturating_add(1),
                b")" | b"]" | b"}" => {
                    depth = depth.saturating_sub(1);
                    token_depth = depth;
                }
                _ => {}
            }
        }
        tokens.push(Token {
            kind,
            text: &code[from..to],
            line: start_line,
            line_start,
            indent,
            depth: token_depth,
        });
        i = next.max(i + 1);
    }
    tokens
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

fn regex_allowed(tokens: &[Token<'_>]) -> bool {
    match tokens.last() {
        None => true,
        Some(t) => match t.kind {
            Kind::Op => !matches!(t.text, ")" | "]" | "}" | "++" | "--"),
            Kind::Ident => JS_REGEX_AFTER.contains(&t.text),
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

// ---------------------------------------------------------------------------------------------
// Numbers and small constant expressions (loop bounds, allocation sizes).

/// The value of a numeric literal: `1_000_000`, `1e6`, `0x10`, `10n`.
pub(crate) fn number_value(text: &str) -> Option<f64> {
    let t: String = text.chars().filter(|c| *c != '_').collect();
    let t = t.trim_end_matches(['n', 'j', 'J', 'l', 'L']);
    let lower = t.to_ascii_lowercase();
    if let Some(hex) = lower.strip_prefix("0x") {
        return u64::from_str_radix(hex, 16).ok().map(|v| v as f64);
    }
    if let Some(bin) = lower.strip_prefix("0b") {
        return u64::from_str_radix(bin, 2).ok().map(|v| v as f64);
    }
    if let Some(oct) = lower.strip_prefix("0o") {
        return u64::from_str_radix(oct, 8).ok().map(|v| v as f64);
    }
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Evaluates a constant arithmetic expression over tokens `[from, to)`: numbers, `+ - * / // %
/// **`, parentheses, and `int(...)`/`Number(...)`/`Math.floor(...)` wrappers. None for anything
/// else (names, calls), which the caller treats as an unknown bound.
pub(crate) fn const_value(src: &Source<'_>, from: usize, to: usize) -> Option<f64> {
    let mut p = ConstParser {
        src,
        pos: from,
        end: to.min(src.tokens.len()),
        depth: 0,
    };
    let v = p.expr()?;
    (p.pos == p.end && v.is_finite()).then_some(v)
}

struct ConstParser<'s, 'a> {
    src: &'s Source<'a>,
    pos: usize,
    end: usize,
    depth: u32,
}

impl ConstParser<'_, '_> {
    /// Deep enough for real code, shallow enough that `((((...` cannot exhaust the stack.
    const MAX_DEPTH: u32 = 24;

    fn peek(&self) -> Option<&str> {
        (self.pos < self.end).then(|| self.src.tokens[self.pos].text)
    }

    fn eat(&mut self, text: &str) -> bool {
        if self.pos < self.end
            && self.src.tokens[self.pos].text == text
            && self.src.tokens[self.pos].kind == Kind::Op
        {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expr(&mut self) -> Option<f64> {
        self.depth += 1;
        if self.depth > Self::MAX_DEPTH {
            return None;
        }
        let mut v = self.term()?;
        loop {
            if self.eat("+") {
                v += self.term()?;
            } else if self.eat("-") {
                v -= self.term()?;
            } else {
                break;
            }
        }
        self.depth -= 1;
        Some(v)
    }

    fn term(&mut self) -> Option<f64> {
        let mut v = self.unary()?;
        loop {
            if self.eat("*") {
                v *= self.unary()?;
            } else if self.eat("//") {
                let d = self.unary()?;
                v = if d == 0.0 {
                    return None;
                } else {
                    (v / d).floor()
                };
            } else if self.eat("/") {
                let d = self.unary()?;
                v = if d == 0.0 { return None } else { v / d };
            } else if self.eat("%") {
                let d = self.unary()?;
                v = if d == 0.0 { return None } else { v % d };
            } else {
                break;
            }
        }
        Some(v)
    }

    fn unary(&mut self) -> Option<f64> {
        if self.eat("-") {
            return Some(-self.unary()?);
        }
        if self.eat("+") {
            return self.unary();
        }
        let base = self.atom()?;
        if self.eat("**") {
            self.depth += 1;
            if self.depth > Self::MAX_DEPTH {
                return None;
            }
            let exp = self.unary()?;
            self.depth -= 1;
            return Some(base.powf(exp));
        }
        Some(base)
    }

    fn atom(&mut self) -> Option<f64> {
        let t = *self
            .src
            .tokens
            .get(self.pos)
            .filter(|_| self.pos < self.end)?;
        match t.kind {
            Kind::Number => {
                self.pos += 1;
                number_value(t.text)
            }
            Kind::Op if t.text == "(" => {
                self.pos += 1;
                let v = self.expr()?;
                self.eat(")").then_some(v)
            }
            Kind::Ident => {
                // int(1e6), Number(1e6), Math.floor(x), Math.pow(a, b)
                let mut name = t.text.to_owned();
                self.pos += 1;
                while self.peek() == Some(".") {
                    self.pos += 1;
                    let part = self.src.ident(self.pos).filter(|_| self.pos < self.end)?;
                    name.push('.');
                    name.push_str(part);
                    self.pos += 1;
                }
                if !self.eat("(") {
                    return None;
                }
                let first = self.expr()?;
                let value = match name.as_str() {
                    "int" | "Number" | "Math.floor" | "Math.trunc" | "round" | "Math.round"
                    | "parseInt" => first,
                    "Math.pow" | "pow" if self.eat(",") => first.powf(self.expr()?),
                    _ => return None,
                };
                self.eat(")").then_some(value)
            }
            _ => None,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Imports.

/// How a module is brought in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ImportKind {
    /// Python `import` / `from ... import` / `__import__("x")` / `importlib.import_module("x")`.
    Python,
    /// JavaScript `requireVendor("x")`.
    Vendor,
    /// JavaScript `require("x")` (Node, not available).
    Require,
    /// JavaScript `import ... from "x"` or `import("x")` (modules, not available in cells).
    EsImport,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ImportRef {
    /// Full dotted module name as written (`xml.etree.ElementTree`, `os.path`, `csv-simple`).
    pub module: String,
    /// For `from m import a, b`: the imported names (they may be submodules).
    pub names: Vec<String>,
    pub line: u32,
    pub kind: ImportKind,
}

/// Every import in the source, in order of appearance.
pub(crate) fn imports(src: &Source<'_>) -> Vec<ImportRef> {
    let mut out = Vec::new();
    let t = &src.tokens;
    for i in 0..t.len() {
        if t[i].kind != Kind::Ident {
            continue;
        }
        // `importlib.import_module("x")` is a member call; `x.import` is not an import.
        if src.is_member(i) && t[i].text != "import_module" {
            continue;
        }
        let line = t[i].line;
        match (src.language, t[i].text) {
            (Language::Python, "import") => {
                // `from m import ...` is handled at `from`; here only the plain form.
                if statement_starts_with_from(src, i) {
                    continue;
                }
                let mut j = i + 1;
                while let Some((module, next)) = src.dotted(j) {
                    out.push(ImportRef {
                        module,
                        names: Vec::new(),
                        line,
                        kind: ImportKind::Python,
                    });
                    j = next;
                    if src.is(j, "as") {
                        j += 2;
                    }
                    if !src.is(j, ",") {
                        break;
                    }
                    j += 1;
                }
            }
            (Language::Python, "from") => {
                if src.is(i + 1, ".") || src.is(i + 1, "...") {
                    continue; // relative import: the user's own package
                }
                let Some((module, mut j)) = src.dotted(i + 1) else {
                    continue;
                };
                if !src.is(j, "import") {
                    continue;
                }
                j += 1;
                let close = if src.is(j, "(") { src.partner[j] } else { NONE };
                if close != NONE {
                    j += 1;
                }
                let mut names = Vec::new();
                while let Some(name) = src.ident(j).or_else(|| src.is(j, "*").then_some("*")) {
                    names.push(name.to_owned());
                    j += 1;
                    if src.is(j, "as") {
                        j += 2;
                    }
                    if !src.is(j, ",") {
                        break;
                    }
                    j += 1;
                }
                out.push(ImportRef {
                    module,
                    names,
                    line,
                    kind: ImportKind::Python,
                });
            }
            (Language::Python, "__import__") | (Language::Python, "import_module") => {
                if let Some(module) = string_arg(src, i + 1) {
                    out.push(ImportRef {
                        module: module.to_owned(),
                        names: Vec::new(),
                        line,
                        kind: ImportKind::Python,
                    });
                }
            }
            (Language::JavaScript, word @ ("require" | "requireVendor")) => {
                if let Some(module) = string_arg(src, i + 1) {
                    out.push(ImportRef {
                        module: module.to_owned(),
                        names: Vec::new(),
                        line,
                        kind: if word == "require" {
                            ImportKind::Require
                        } else {
                            ImportKind::Vendor
                        },
                    });
                }
            }
            (Language::JavaScript, "import") => {
                if let Some(module) = string_arg(src, i + 1) {
                    out.push(ImportRef {
                        module: module.to_owned(),
                        names: Vec::new(),
                        line,
                        kind: ImportKind::EsImport,
                    });
                    continue;
                }
                // import x from "m"; import {a} from "m"; import "m"
                let mut j = i + 1;
                let limit = (i + 64).min(t.len());
                while j < limit && t[j].kind != Kind::Str && !src.is(j, ";") {
                    j += 1;
                }
                if j < limit && t[j].kind == Kind::Str && (src.is(j - 1, "from") || j == i + 1) {
                    out.push(ImportRef {
                        module: t[j].text.to_owned(),
                        names: Vec::new(),
                        line,
                        kind: ImportKind::EsImport,
                    });
                }
            }
            _ => {}
        }
    }
    out
}

fn statement_starts_with_from(src: &Source<'_>, i: usize) -> bool {
    let mut k = i;
    while k > 0 && !src.tokens[k].line_start && !src.is(k - 1, ";") {
        k -= 1;
        if src.is(k, "from") {
            return true;
        }
    }
    src.is(k, "from")
}

/// `("x")` right at `open`: the string literal argument.
fn string_arg<'a>(src: &Source<'a>, open: usize) -> Option<&'a str> {
    if !src.is(open, "(") {
        return None;
    }
    let t = src.tokens.get(open + 1)?;
    (t.kind == Kind::Str).then_some(t.text)
}

// ---------------------------------------------------------------------------------------------
// Loops.

/// One loop and what is known of its size.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LoopInfo {
    pub line: u32,
    /// 1 for a top-level loop, 2 inside another loop, ...
    pub depth: u32,
    /// Iterations of this loop per run of its enclosing code, when the bound is a constant.
    pub bound: Option<f64>,
    /// Iterations of this loop's body in total (the product of the enclosing known bounds,
    /// with unknown ones counted as `unknown_as`), for the fuel estimate.
    pub total_known: f64,
    /// How many enclosing-or-self bounds are unknown.
    pub unknown_levels: u32,
    /// `while True` / `for (;;)` with no `break` anywhere in its body.
    pub endless: bool,
    /// Short description: `for i in range(1000000)`, `while True`, `.forEach(...)`.
    pub header: String,
}

/// Every loop, with nesting.
pub(crate) fn loops(src: &Source<'_>) -> Vec<LoopInfo> {
    match src.language {
        Language::Python => python_loops(src),
        Language::JavaScript => js_loops(src),
    }
}

fn python_loops(src: &Source<'_>) -> Vec<LoopInfo> {
    let t = &src.tokens;
    let mut out = Vec::new();
    // Block loops: (indent, bound, token index).
    let mut stack: Vec<(u32, Option<f64>)> = Vec::new();
    // Comprehension loops of the current statement multiply each other.
    let mut inline: Vec<Option<f64>> = Vec::new();
    for i in 0..t.len() {
        let tok = &t[i];
        if tok.line_start {
            while stack
                .last()
                .is_some_and(|(indent, _)| *indent >= tok.indent)
            {
                stack.pop();
            }
            inline.clear();
        }
        if tok.kind != Kind::Ident || !matches!(tok.text, "for" | "while") || src.is_member(i) {
            continue;
        }
        let block = tok.line_start || (i > 0 && t[i - 1].line_start && src.is(i - 1, "async"));
        let (bound, header, endless) = if tok.text == "for" {
            let (bound, header) = python_for_bound(src, i);
            (bound, header, false)
        } else {
            let always = src.is(i + 1, "True")
                || (t
                    .get(i + 1)
                    .is_some_and(|n| n.kind == Kind::Number && n.text == "1"));
            let endless = always && block && !python_body_has_break(src, i);
            let header = if always {
                "while True".to_owned()
            } else {
                "while ...".to_owned()
            };
            (None, header, endless)
        };
        let enclosing: Vec<Option<f64>> = stack
            .iter()
            .map(|(_, b)| *b)
            .chain(inline.iter().copied())
            .collect();
        out.push(loop_info(tok.line, &enclosing, bound, endless, header));
        if block {
            stack.push((tok.indent, bound));
        } else {
            inline.push(bound);
        }
    }
    out
}

fn loop_info(
    line: u32,
    enclosing: &[Option<f64>],
    bound: Option<f64>,
    endless: bool,
    header: String,
) -> LoopInfo {
    let mut total = 1.0f64;
    let mut unknown = 0;
    for b in enclosing.iter().chain(std::iter::once(&bound)) {
        match b {
            Some(v) => total *= v.max(0.0),
            None => unknown += 1,
        }
    }
    LoopInfo {
        line,
        depth: enclosing.len() as u32 + 1,
        bound,
        total_known: total,
        unknown_levels: unknown,
        endless,
        header,
    }
}

/// The bound of `for ... in range(...)` or of a literal list, and a short header.
fn python_for_bound(src: &Source<'_>, i: usize) -> (Option<f64>, String) {
    let t = &src.tokens;
    let depth = t[i].depth;
    let limit = (i + 200).min(t.len());
    let Some(in_at) = (i + 1..limit).find(|&k| src.is(k, "in") && t[k].depth == depth) else {
        return (None, "for ...".to_owned());
    };
    let target: Vec<&str> = t[i + 1..in_at].iter().map(|t| t.text).collect();
    let target = target.join(" ").replace(" ,", ",");
    let j = in_at + 1;
    if src.ident(j) == Some("range") && src.is(j + 1, "(") && src.partner[j + 1] != NONE {
        let close = src.partner[j + 1];
        let args = top_level_args(src, j + 1, close);
        let value = |(a, b): &(usize, usize)| const_value(src, *a, *b);
        let bound = (|| match args.as_slice() {
            [stop] => value(stop),
            [start, stop] => Some(value(stop)? - value(start)?),
            [start, stop, step] => {
                let step = value(step)?;
                (step != 0.0).then_some(())?;
                Some(((value(stop)? - value(start)?) / step).ceil())
            }
            _ => None,
        })()
        .map(|v| v.max(0.0));
        return (bound, src.text(i, close).to_owned());
    }
    if (src.is(j, "[") || src.is(j, "(")) && src.partner[j] != NONE {
        let close = src.partner[j];
        let has_for = (j + 1..close).any(|k| src.is(k, "for"));
        if !has_for && close > j + 1 {
            let count = top_level_args(src, j, close).len();
            return (
                Some(count as f64),
                format!("for {target} in [{count} items]"),
            );
        }
    }
    let what = src
        .dotted(j)
        .map(|(name, _)| name)
        .unwrap_or_else(|| "...".into());
    (None, format!("for {target} in {what}"))
}

/// Comma-separated argument spans inside the brackets `open`..`close`.
fn top_level_args(src: &Source<'_>, open: usize, close: usize) -> Vec<(usize, usize)> {
    let depth = src.tokens[open].depth + 1;
    let mut spans = Vec::new();
    let mut start = open + 1;
    for k in open + 1..close {
        if src.is(k, ",") && src.tokens[k].depth == depth {
            spans.push((start, k));
            start = k + 1;
        }
    }
    if start < close {
        spans.push((start, close));
    }
    spans
}

fn python_body_has_break(src: &Source<'_>, header: usize) -> bool {
    let t = &src.tokens;
    let indent = t[header].indent;
    let mut k = header + 1;
    while k < t.len() {
        if t[k].line_start && t[k].indent <= indent {
            return false;
        }
        if t[k].kind == Kind::Ident && matches!(t[k].text, "break" | "return" | "raise") {
            return true;
        }
        k += 1;
    }
    false
}

fn js_loops(src: &Source<'_>) -> Vec<LoopInfo> {
    let t = &src.tokens;
    let mut out = Vec::new();
    // Open loops: (index where the body ends, bound).
    let mut stack: Vec<(usize, Option<f64>)> = Vec::new();
    for i in 0..t.len() {
        while stack.last().is_some_and(|(end, _)| i > *end) {
            stack.pop();
        }
        let tok = &t[i];
        if tok.kind != Kind::Ident {
            continue;
        }
        let iteration_method = src.is_member(i)
            && matches!(
                tok.text,
                "forEach" | "map" | "filter" | "reduce" | "some" | "every" | "find" | "flatMap"
            )
            && src.is(i + 1, "(");
        if iteration_method {
            let close = src.partner[i + 1];
            let enclosing: Vec<Option<f64>> = stack.iter().map(|(_, b)| *b).collect();
            out.push(loop_info(
                tok.line,
                &enclosing,
                None,
                false,
                format!(".{}(...)", tok.text),
            ));
            if close != NONE {
                stack.push((close, None));
            }
            continue;
        }
        if src.is_member(i) || !matches!(tok.text, "for" | "while") {
            continue;
        }
        let mut open = i + 1;
        if src.is(open, "await") {
            open += 1;
        }
        if !src.is(open, "(") || src.partner[open] == NONE {
            continue;
        }
        let close = src.partner[open];
        // `do { } while (x);`: the loop was the `do` block, nothing to push.
        if tok.text == "while" && i > 0 && src.is(i - 1, "}") {
            let block_open = src.partner[i - 1];
            if block_open != NONE && block_open > 0 && src.is(block_open - 1, "do") {
                continue;
            }
        }
        let (bound, header, always) = if tok.text == "for" {
            js_for_bound(src, open, close)
        } else {
            let always = close == open + 2
                && (src.is(open + 1, "true")
                    || t.get(open + 1)
                        .is_some_and(|n| n.kind == Kind::Number && n.text == "1"));
            (
                None,
                if always {
                    "while (true)".to_owned()
                } else {
                    "while (...)".to_owned()
                },
                always,
            )
        };
        let body_end = if src.is(close + 1, "{") && src.partner[close + 1] != NONE {
            src.partner[close + 1]
        } else {
            let depth = t.get(close + 1).map_or(0, |t| t.depth);
            (close + 1..t.len())
                .find(|&k| src.is(k, ";") && t[k].depth == depth)
                .unwrap_or(t.len())
        };
        let endless = always
            && !(close + 1..body_end.min(t.len())).any(|k| {
                t[k].kind == Kind::Ident && matches!(t[k].text, "break" | "return" | "throw")
            });
        let enclosing: Vec<Option<f64>> = stack.iter().map(|(_, b)| *b).collect();
        out.push(loop_info(tok.line, &enclosing, bound, endless, header));
        stack.push((body_end, bound));
    }
    out
}

/// `for (let i = A; i < B; i++)` gives B - A; `for (...;;)` is endless; `of`/`in` are unknown.
fn js_for_bound(src: &Source<'_>, open: usize, close: usize) -> (Option<f64>, String, bool) {
    let t = &src.tokens;
    let depth = t[open].depth + 1;
    let semis: Vec<usize> = (open + 1..close)
        .filter(|&k| src.is(k, ";") && t[k].depth == depth)
        .collect();
    let shown = || {
        let text = src.text(open, close);
        let mut end = text.len().min(60);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let ellipsis = if end < text.len() { " ...)" } else { "" };
        format!("for {}{ellipsis}", &text[..end])
    };
    let [first, second] = semis.as_slice() else {
        return (None, shown(), false);
    };
    if *second == first + 1 {
        return (None, "for (;;)".to_owned(), true);
    }
    let cmp = (first + 1..*second).find(|&k| {
        t[k].kind == Kind::Op && matches!(t[k].text, "<" | "<=" | ">" | ">=") && t[k].depth == depth
    });
    let start = (open + 1..*first)
        .find(|&k| src.is(k, "=") && t[k].depth == depth)
        .and_then(|eq| const_value(src, eq + 1, *first));
    let bound = cmp.and_then(|c| {
        let limit = const_value(src, c + 1, *second)?;
        let from = start?;
        let inclusive = matches!(t[c].text, "<=" | ">=");
        let span = if matches!(t[c].text, "<" | "<=") {
            limit - from
        } else {
            from - limit
        };
        Some((span + if inclusive { 1.0 } else { 0.0 }).max(0.0))
    });
    (bound, shown(), false)
}

// ---------------------------------------------------------------------------------------------
// Recursion.

/// Functions that call themselves: (name, line of the definition).
pub(crate) fn recursive_functions(src: &Source<'_>) -> Vec<(String, u32)> {
    let t = &src.tokens;
    let mut found: Vec<(String, u32)> = Vec::new();
    match src.language {
        Language::Python => {
            // Open defs: (indent, name, line).
            let mut open: Vec<(u32, &str, u32)> = Vec::new();
            for i in 0..t.len() {
                if t[i].line_start {
                    while open.last().is_some_and(|(ind, _, _)| *ind >= t[i].indent) {
                        open.pop();
                    }
                    let def_at = if src.is(i, "async") { i + 1 } else { i };
                    if src.is(def_at, "def")
                        && let Some(name) = src.ident(def_at + 1)
                    {
                        open.push((t[i].indent, name, t[i].line));
                        continue;
                    }
                }
                if t[i].kind == Kind::Ident
                    && src.is(i + 1, "(")
                    && !src.is_member(i)
                    && let Some((_, name, line)) =
                        open.iter().rev().find(|(_, n, _)| *n == t[i].text)
                    && !src.is(i.wrapping_sub(1), "def")
                    && !found.iter().any(|(n, _)| n == name)
                {
                    found.push(((*name).to_owned(), *line));
                }
            }
        }
        Language::JavaScript => {
            // Open functions: (index of the body's closing brace, name, line).
            let mut open: Vec<(usize, &str, u32)> = Vec::new();
            for i in 0..t.len() {
                while open.last().is_some_and(|(end, _, _)| i > *end) {
                    open.pop();
                }
                if let Some((name, body)) = js_function_at(src, i) {
                    if src.partner[body] != NONE {
                        open.push((src.partner[body], name, t[i].line));
                    }
                    continue;
                }
                if t[i].kind == Kind::Ident
                    && src.is(i + 1, "(")
                    && !src.is_member(i)
                    && let Some((_, name, line)) =
                        open.iter().rev().find(|(_, n, _)| *n == t[i].text)
                    && !found.iter().any(|(n, _)| n == name)
                {
                    found.push(((*name).to_owned(), *line));
                }
            }
        }
    }
    found
}

/// A named JavaScript function starting at `i`: `function f(...) {`, `const f = (...) => {`,
/// `const f = function (...) {`. Returns the name and the body's `{`.
fn js_function_at<'a>(src: &Source<'a>, i: usize) -> Option<(&'a str, usize)> {
    if src.is(i, "function") {
        let mut j = i + 1;
        if src.is(j, "*") {
            j += 1;
        }
        let name = src.ident(j)?;
        let close = *src.partner.get(j + 1).filter(|_| src.is(j + 1, "("))?;
        return (close != NONE && src.is(close + 1, "{")).then_some((name, close + 1));
    }
    if matches!(src.ident(i), Some("const" | "let" | "var")) && src.is(i + 2, "=") {
        let name = src.ident(i + 1)?;
        let mut j = i + 3;
        if src.is(j, "async") {
            j += 1;
        }
        if src.is(j, "function") {
            j += 1;
            if src.ident(j).is_some() {
                j += 1;
            }
        }
        let close = if src.is(j, "(") {
            src.partner[j]
        } else if src.ident(j).is_some() && src.is(j + 1, "=>") {
            j
        } else {
            return None;
        };
        if close == NONE {
            return None;
        }
        let mut k = close + 1;
        if src.is(k, "=>") {
            k += 1;
        }
        return src.is(k, "{").then_some((name, k));
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Names used but not defined (state from earlier calls).

#[rustfmt::skip]
const PY_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield", "match", "case", "type", "_",
];

#[rustfmt::skip]
const PY_BUILTINS: &[&str] = &[
    "ArithmeticError", "AssertionError", "AttributeError", "BaseException", "BaseExceptionGroup",
    "BlockingIOError", "BrokenPipeError", "BufferError", "BytesWarning", "ChildProcessError",
    "ConnectionAbortedError", "ConnectionError", "ConnectionRefusedError", "ConnectionResetError",
    "DeprecationWarning", "EOFError", "Ellipsis", "EncodingWarning", "EnvironmentError",
    "Exception", "ExceptionGroup", "FileExistsError", "FileNotFoundError", "FloatingPointError",
    "FutureWarning", "GeneratorExit", "IOError", "ImportError", "ImportWarning", "IndentationError",
    "IndexError", "InterruptedError", "IsADirectoryError", "KeyError", "KeyboardInterrupt",
    "LookupError", "MemoryError", "ModuleNotFoundError", "NameError", "NotADirectoryError",
    "NotImplemented", "NotImplementedError", "OSError", "OverflowError",
    "PendingDeprecationWarning", "PermissionError", "ProcessLookupError", "RecursionError",
    "ReferenceError", "ResourceWarning", "RuntimeError", "RuntimeWarning", "StopAsyncIteration",
    "StopIteration", "SyntaxError", "SyntaxWarning", "SystemError", "SystemExit", "TabError",
    "TimeoutError", "TypeError", "UnboundLocalError", "UnicodeDecodeError", "UnicodeEncodeError",
    "UnicodeError", "UnicodeTranslateError", "UnicodeWarning", "UserWarning", "ValueError",
    "Warning", "ZeroDivisionError", "__build_class__", "__debug__", "__doc__", "__import__",
    "__loader__", "__name__", "__package__", "__spec__", "__builtins__", "abs", "aiter", "all",
    "anext", "any", "ascii", "bin", "bool", "breakpoint", "bytearray", "bytes", "callable", "chr",
    "classmethod", "compile", "complex", "copyright", "credits", "delattr", "dict", "dir", "divmod",
    "enumerate", "eval", "exec", "exit", "filter", "float", "format", "frozenset", "getattr",
    "globals", "hasattr", "hash", "help", "hex", "id", "input", "int", "isinstance", "issubclass",
    "iter", "len", "license", "list", "locals", "map", "max", "memoryview", "min", "next", "object",
    "oct", "open", "ord", "pow", "print", "property", "quit", "range", "repr", "reversed", "round",
    "set", "setattr", "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple", "type",
    "vars", "zip", "self", "cls",
];

#[rustfmt::skip]
const JS_KEYWORDS: &[&str] = &[
    "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do",
    "else", "export", "extends", "finally", "for", "function", "if", "import", "in", "instanceof",
    "let", "new", "return", "super", "switch", "this", "throw", "try", "typeof", "var", "void",
    "while", "with", "yield", "async", "await", "of", "static", "get", "set", "null", "true",
    "false", "undefined", "NaN", "Infinity", "arguments", "from", "as",
];

/// Globals of the JavaScript sandbox: ECMAScript, QuickJS's std/os, and the sandbox helpers.
#[rustfmt::skip]
const JS_GLOBALS: &[&str] = &[
    "console", "Math", "JSON", "Object", "Array", "String", "Number", "Boolean", "Date", "RegExp",
    "Map", "Set", "WeakMap", "WeakSet", "WeakRef", "Promise", "Symbol", "Error", "TypeError",
    "RangeError", "SyntaxError", "ReferenceError", "EvalError", "URIError", "AggregateError",
    "InternalError", "parseInt", "parseFloat", "isNaN", "isFinite", "globalThis", "BigInt", "Proxy",
    "Reflect", "ArrayBuffer", "SharedArrayBuffer", "DataView", "Int8Array", "Uint8Array",
    "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array", "Float32Array",
    "Float64Array", "BigInt64Array", "BigUint64Array", "encodeURIComponent", "decodeURIComponent",
    "encodeURI", "decodeURI", "escape", "unescape", "eval", "Function", "Iterator", "Atomics",
    "queueMicrotask", "setTimeout", "clearTimeout", "setInterval", "clearInterval",
    "structuredClone", "std", "os", "print", "scriptArgs", "requireVendor", "readJson", "writeJson",
    "readText", "writeText", "appendText", "fileExists", "listFiles",
];

/// Names the code reads but never binds: they must come from earlier calls in the same session
/// (or are typos). In order of first use, at most `limit`.
pub(crate) fn free_names(src: &Source<'_>, limit: usize) -> Vec<(String, u32)> {
    let t = &src.tokens;
    let python = src.language == Language::Python;
    let mut defined: HashSet<&str> = HashSet::new();
    // Tokens that are not uses: binding sites, keyword-argument names, object keys, modules.
    let mut skip = vec![false; t.len()];
    let mut star_import = false;

    for (a, b) in src.statements() {
        if python {
            python_bindings(src, a, b, &mut defined, &mut skip, &mut star_import);
        } else {
            js_bindings(src, a, b, &mut defined, &mut skip);
        }
    }
    if star_import {
        return Vec::new(); // `from m import *` can bind anything
    }
    let (keywords, builtins) = if python {
        (PY_KEYWORDS, PY_BUILTINS)
    } else {
        (JS_KEYWORDS, JS_GLOBALS)
    };
    let mut seen: HashMap<&str, u32> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for (i, tok) in t.iter().enumerate() {
        if tok.kind != Kind::Ident || skip[i] || src.is_member(i) {
            continue;
        }
        let name = tok.text;
        if defined.contains(name)
            || keywords.contains(&name)
            || builtins.contains(&name)
            || name.starts_with("__")
            || !name
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        {
            continue;
        }
        if !seen.contains_key(name) {
            seen.insert(name, tok.line);
            order.push(name);
        }
    }
    order
        .into_iter()
        .take(limit)
        .map(|n| (n.to_owned(), seen[n]))
        .collect()
}

fn python_bindings<'a>(
    src: &Source<'a>,
    a: usize,
    b: usize,
    defined: &mut HashSet<&'a str>,
    skip: &mut [bool],
    star_import: &mut bool,
) {
    let t = &src.tokens;
    let base = t[a].depth;
    let mut first = a;
    if src.is(first, "async") {
        first += 1;
    }
    match src.ident(first) {
        Some("import") | Some("from") => {
            // Modules and imported names are binding sites, not uses.
            let mut after_import = src.ident(first) == Some("import");
            let mut k = first + 1;
            while k < b {
                if src.is(k, "import") {
                    after_import = true;
                } else if src.is(k, "*") {
                    *star_import = true;
                } else if t[k].kind == Kind::Ident {
                    skip[k] = true;
                    // `import a as b` binds b; `import a.b` binds a; `from m import x` binds x.
                    let binds = !src.is(k + 1, "as")
                        && ((k > 0 && src.is(k - 1, "as")) || (after_import && !src.is_member(k)));
                    let bound = binds.then_some(t[k].text);
                    if let Some(name) = bound {
                        defined.insert(name);
                    }
                }
                k += 1;
            }
            return;
        }
        Some("def") | Some("class") => {
            if let Some(name) = src.ident(first + 1) {
                defined.insert(name);
                skip[first + 1] = true;
            }
            if src.ident(first) == Some("def") && src.is(first + 2, "(") {
                let close = src.partner[first + 2];
                if close != NONE {
                    for k in first + 3..close {
                        let param = t[k].kind == Kind::Ident
                            && t[k].depth == base + 1
                            && (src.is(k - 1, "(")
                                || src.is(k - 1, ",")
                                || src.is(k - 1, "*")
                                || src.is(k - 1, "**"));
                        if param {
                            defined.insert(t[k].text);
                            skip[k] = true;
                        }
                    }
                }
            }
        }
        Some("global") | Some("nonlocal") => {
            skip[(first + 1).min(b)..b].fill(true);
            return;
        }
        _ => {}
    }
    // Targets before each top-level `=` (chained assignment binds them all).
    let eqs: Vec<usize> = (a..b)
        .filter(|&k| src.is(k, "=") && t[k].depth == base)
        .collect();
    if let Some(&last) = eqs.last() {
        for k in a..last {
            if is_python_target(src, k) {
                defined.insert(t[k].text);
                skip[k] = true;
            }
        }
    }
    // Annotated assignment: `x: int = 1` / `x: int`.
    if eqs.is_empty()
        && src.ident(a).is_some_and(|w| !PY_KEYWORDS.contains(&w))
        && src.is(a + 1, ":")
    {
        defined.insert(t[a].text);
        skip[a] = true;
    }
    for k in a..b {
        let tok = &t[k];
        if tok.kind == Kind::Ident {
            match tok.text {
                "for" => {
                    // for x, y in ...: comprehension and block loops alike.
                    let mut j = k + 1;
                    while j < b && !(src.is(j, "in") && t[j].depth == tok.depth) {
                        if t[j].kind == Kind::Ident && !src.is_member(j) {
                            defined.insert(t[j].text);
                            skip[j] = true;
                        }
                        j += 1;
                    }
                }
                "as" => {
                    if let Some(name) = src.ident(k + 1) {
                        defined.insert(name);
                        skip[k + 1] = true;
                    }
                }
                "lambda" => {
                    let mut j = k + 1;
                    while j < b && !(src.is(j, ":") && t[j].depth == tok.depth) {
                        if t[j].kind == Kind::Ident
                            && (src.is(j - 1, "lambda") || src.is(j - 1, ",") || src.is(j - 1, "*"))
                        {
                            defined.insert(t[j].text);
                            skip[j] = true;
                        }
                        j += 1;
                    }
                }
                _ => {
                    // Keyword argument `f(name=...)`.
                    if tok.depth > base
                        && src.is(k + 1, "=")
                        && k > 0
                        && (src.is(k - 1, "(") || src.is(k - 1, ","))
                    {
                        skip[k] = true;
                    }
                }
            }
        } else if tok.kind == Kind::Op && tok.text == ":=" && k > a && t[k - 1].kind == Kind::Ident
        {
            defined.insert(t[k - 1].text);
            skip[k - 1] = true;
        }
    }
}

/// A name being assigned: bare (not `x.a`, `x[i]` or `f(x)`), in a target list.
fn is_python_target(src: &Source<'_>, k: usize) -> bool {
    let t = &src.tokens;
    if t[k].kind != Kind::Ident || src.is_member(k) || PY_KEYWORDS.contains(&t[k].text) {
        return false;
    }
    let next_ok = match t.get(k + 1) {
        None => true,
        Some(n) => n.kind == Kind::Op && matches!(n.text, "," | "=" | ")" | "]" | ":"),
    };
    let prev_ok = k == 0
        || t[k].line_start
        || src.is(k - 1, ",")
        || src.is(k - 1, "*")
        || src.is(k - 1, "=")
        || src.is(k - 1, ";")
        || (src.is(k - 1, "(") || src.is(k - 1, "[")) && !is_subscript_or_call(src, k - 1);
    next_ok && prev_ok
}

/// `x[`, `f(`, `)(`: the bracket at `open` applies to what precedes it.
fn is_subscript_or_call(src: &Source<'_>, open: usize) -> bool {
    open > 0
        && match src.tokens[open - 1].kind {
            Kind::Ident => !PY_KEYWORDS.contains(&src.tokens[open - 1].text),
            Kind::Str | Kind::Number => true,
            Kind::Op => matches!(src.tokens[open - 1].text, ")" | "]"),
            Kind::Regex => false,
        }
}

fn js_bindings<'a>(
    src: &Source<'a>,
    a: usize,
    b: usize,
    defined: &mut HashSet<&'a str>,
    skip: &mut [bool],
) {
    let t = &src.tokens;
    for k in a..b {
        let tok = &t[k];
        if tok.kind == Kind::Op {
            if tok.text == "=>" && k > 0 {
                // (a, b) => ... / a => ...
                if t[k - 1].kind == Kind::Ident {
                    defined.insert(t[k - 1].text);
                    skip[k - 1] = true;
                } else if src.is(k - 1, ")") && src.partner[k - 1] != NONE {
                    bind_pattern(src, src.partner[k - 1], k - 1, defined, skip);
                }
            }
            continue;
        }
        if tok.kind != Kind::Ident || src.is_member(k) {
            continue;
        }
        match tok.text {
            "let" | "const" | "var" => {
                let depth = tok.depth;
                let mut j = k + 1;
                loop {
                    if src.ident(j).is_some() {
                        defined.insert(t[j].text);
                        skip[j] = true;
                    } else if (src.is(j, "[") || src.is(j, "{")) && src.partner[j] != NONE {
                        bind_pattern(src, j, src.partner[j], defined, skip);
                    }
                    // Next declarator: the `,` at this depth before the statement ends.
                    let mut next = None;
                    let mut m = j + 1;
                    while m < t.len() && m < b.max(j + 1) {
                        if t[m].depth == depth && src.is(m, ",") {
                            next = Some(m + 1);
                            break;
                        }
                        if t[m].depth < depth
                            || (t[m].depth == depth
                                && (src.is(m, ";") || src.is(m, "of") || src.is(m, "in")))
                        {
                            break;
                        }
                        m += 1;
                    }
                    match next {
                        Some(n) if n > j => j = n,
                        _ => break,
                    }
                }
            }
            "function" | "class" => {
                let mut j = k + 1;
                if src.is(j, "*") {
                    j += 1;
                }
                if let Some(name) = src.ident(j) {
                    defined.insert(name);
                    skip[j] = true;
                    j += 1;
                }
                if tok.text == "function" && src.is(j, "(") && src.partner[j] != NONE {
                    bind_pattern(src, j, src.partner[j], defined, skip);
                }
            }
            "catch" if src.is(k + 1, "(") && src.partner[k + 1] != NONE => {
                bind_pattern(src, k + 1, src.partner[k + 1], defined, skip);
            }
            "import" => {
                let mut j = k + 1;
                while j < b && t[j].kind != Kind::Str {
                    if t[j].kind == Kind::Ident && !matches!(t[j].text, "from" | "as") {
                        skip[j] = true;
                        if !src.is(j + 1, "as") {
                            defined.insert(t[j].text);
                        }
                    }
                    j += 1;
                }
            }
            _ => {
                // Object key `{ name: value }` or `{ name, ... }` shorthand key use stays a use.
                if src.is(k + 1, ":") && k > 0 && (src.is(k - 1, "{") || src.is(k - 1, ",")) {
                    skip[k] = true;
                }
                // Method or function declaration shape `name(params) {`.
                if src.is(k + 1, "(") && src.partner[k + 1] != NONE {
                    let close = src.partner[k + 1];
                    if src.is(close + 1, "{") && !JS_KEYWORDS.contains(&tok.text) {
                        defined.insert(tok.text);
                        skip[k] = true;
                        bind_pattern(src, k + 1, close, defined, skip);
                    }
                }
            }
        }
    }
}

/// Binds the names of a parameter list or destructuring pattern between `open` and `close`:
/// identifiers not used as keys (`{ key: name }` binds `name`) and not default values.
fn bind_pattern<'a>(
    src: &Source<'a>,
    open: usize,
    close: usize,
    defined: &mut HashSet<&'a str>,
    skip: &mut [bool],
) {
    let t = &src.tokens;
    let mut in_default = false;
    for j in open + 1..close.min(t.len()) {
        if src.is(j, "=") {
            in_default = true;
            continue;
        }
        if src.is(j, ",") || src.is(j, "{") || src.is(j, "[") {
            in_default = false;
            continue;
        }
        if t[j].kind == Kind::Ident && !in_default && !src.is_member(j) {
            skip[j] = true;
            if !src.is(j + 1, ":") {
                defined.insert(t[j].text);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Calls and string literals.

/// Every call `name(` with its dotted callee and line, e.g. ("os.readdir", 3, index of `(`).
pub(crate) fn calls(src: &Source<'_>) -> Vec<(String, u32, usize)> {
    let t = &src.tokens;
    let mut out = Vec::new();
    for i in 1..t.len() {
        if src.is(i, "(")
            && t[i - 1].kind == Kind::Ident
            && let Some(callee) = src.callee(i)
        {
            out.push((callee, t[i].line, i));
        }
    }
    out
}

/// A string literal and the call it is an argument of, if any (`open` for `open("x")`).
#[derive(Debug, Clone)]
pub(crate) struct StrLit<'a> {
    pub text: &'a str,
    pub line: u32,
    pub call: Option<String>,
}

pub(crate) fn strings<'a>(src: &Source<'a>) -> Vec<StrLit<'a>> {
    let t = &src.tokens;
    let mut out = Vec::new();
    for (i, tok) in t.iter().enumerate() {
        if tok.kind != Kind::Str {
            continue;
        }
        // The innermost enclosing call: walk back to the unmatched `(` at depth - 1.
        let mut call = None;
        if tok.depth > 0 {
            let mut k = i;
            let mut steps = 0;
            while k > 0 && steps < 64 {
                k -= 1;
                steps += 1;
                if t[k].depth < tok.depth {
                    if src.is(k, "(") {
                        call = src.callee(k);
                    }
                    break;
                }
            }
        }
        out.push(StrLit {
            text: tok.text,
            line: tok.line,
            call,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn py(code: &str) -> Source<'_> {
        Source::new(code, Language::Python)
    }

    fn js(code: &str) -> Source<'_> {
        Source::new(code, Language::JavaScript)
    }

    #[test]
    fn python_comments_and_strings_are_not_code() {
        let s = py("x = 'import os'  # import sys\ny = \"\"\"\nimport re\n\"\"\"\nimport json");
        let mods: Vec<String> = imports(&s).into_iter().map(|i| i.module).collect();
        assert_eq!(mods, ["json"]);
        assert_eq!(s.tokens.last().unwrap().line, 5);
    }

    #[test]
    fn python_imports_in_all_forms() {
        let s = py(
            "import os.path, json as j\nfrom xml.etree import ElementTree as ET\nfrom . import local\n\
             from collections import (Counter,\n  defaultdict)\nmod = __import__('yaml')\n\
             import importlib; m = importlib.import_module('bs4')",
        );
        let got: Vec<(String, Vec<String>)> = imports(&s)
            .into_iter()
            .map(|i| (i.module, i.names))
            .collect();
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            got,
            vec![
                ("os.path".to_string(), vec![]),
                ("json".to_string(), vec![]),
                ("xml.etree".to_string(), names(&["ElementTree"])),
                (
                    "collections".to_string(),
                    names(&["Counter", "defaultdict"])
                ),
                ("yaml".to_string(), vec![]),
                ("importlib".to_string(), vec![]),
                ("bs4".to_string(), vec![]),
            ]
        );
    }

    #[test]
    fn js_imports_requires_and_regexes() {
        let s = js(
            "const csv = requireVendor('csv-simple'); // require('x')\nconst fs = require(\"fs\");\n\
             import path from 'path';\nconst r = /require\\('y'\\)/g; const q = a / b / c;\n\
             const t = `import ${x} from 'z'`;",
        );
        let got: Vec<(String, ImportKind)> = imports(&s)
            .into_iter()
            .map(|i| (i.module, i.kind))
            .collect();
        assert_eq!(
            got,
            vec![
                ("csv-simple".to_string(), ImportKind::Vendor),
                ("fs".to_string(), ImportKind::Require),
                ("path".to_string(), ImportKind::EsImport),
            ]
        );
        assert!(s.tokens.iter().any(|t| t.kind == Kind::Regex));
    }

    #[test]
    fn python_loop_bounds_and_nesting() {
        let s = py(
            "for i in range(10**6):\n    x = i\nfor a in range(1, 101):\n    for b in range(0, 50, 2):\n        pass\n\
             total = sum(x*y for x in range(1_000) for y in range(10))\nwhile True:\n    pass\n",
        );
        let l = loops(&s);
        assert_eq!(l.len(), 6, "{l:?}");
        assert_eq!(l[0].bound, Some(1e6));
        assert_eq!(l[0].depth, 1);
        assert_eq!((l[1].bound, l[1].depth), (Some(100.0), 1));
        assert_eq!((l[2].bound, l[2].depth), (Some(25.0), 2));
        assert_eq!(l[2].total_known, 2500.0);
        assert_eq!(l[4].total_known, 10_000.0);
        assert!(l[5].endless);
        assert!(!l[0].endless);
    }

    #[test]
    fn python_while_true_with_break_is_not_endless() {
        let s = py("while True:\n    if done():\n        break\nprint(1)");
        assert!(!loops(&s)[0].endless);
    }

    #[test]
    fn js_loop_bounds_and_nesting() {
        let s = js(
            "for (let i = 0; i < 1e6; i++) { for (let j = 0; j <= 9; j++) s += j; }\n\
             for (const f of files) {}\nwhile (true) { x++ }\nitems.forEach(x => total += x);\n\
             do { n-- } while (n > 0);\nfor (;;) { if (x) break; }",
        );
        let l = loops(&s);
        let headers: Vec<&str> = l.iter().map(|l| l.header.as_str()).collect();
        assert_eq!(l.len(), 6, "{headers:?}");
        assert_eq!(l[0].bound, Some(1e6));
        assert_eq!((l[1].bound, l[1].depth), (Some(10.0), 2));
        assert_eq!(l[2].bound, None);
        assert!(l[3].endless);
        assert_eq!(l[4].header, ".forEach(...)");
        assert!(!l[5].endless);
    }

    #[test]
    fn constant_expressions() {
        let s = py("(10**6 + 2*3 - int(1e3)) // 2");
        assert_eq!(
            const_value(&s, 0, s.tokens.len()),
            Some((1e6 + 6.0 - 1e3) / 2.0)
        );
        let s = py("n * 2");
        assert_eq!(const_value(&s, 0, s.tokens.len()), None);
        let deep = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
        let s = py(&deep);
        assert_eq!(const_value(&s, 0, s.tokens.len()), None);
        assert_eq!(number_value("0x10"), Some(16.0));
        assert_eq!(number_value("1_000_000"), Some(1e6));
        assert_eq!(number_value("10n"), Some(10.0));
    }

    #[test]
    fn recursion_is_found() {
        let s = py("def fib(n):\n    return n if n < 2 else fib(n-1) + fib(n-2)\nprint(fib(10))");
        assert_eq!(recursive_functions(&s), vec![("fib".to_string(), 1)]);
        let s = py("def f(x):\n    return g(x)\ndef g(x):\n    return x\nf(1)");
        assert!(recursive_functions(&s).is_empty());
        let s = js(
            "function walk(n) { return n ? walk(n - 1) : 0 }\nconst go = (x) => { return go(x) }",
        );
        let names: Vec<String> = recursive_functions(&s).into_iter().map(|r| r.0).collect();
        assert_eq!(names, ["walk", "go"]);
    }

    #[test]
    fn python_free_names() {
        let s = py(
            "import json as j\nfrom os import path\ndef f(a, b=2, *args, **kw):\n    return a + b + c\n\
             class K: pass\nx, (y, z) = 1, (2, 3)\nfor i, v in enumerate(data):\n    total += v\n\
             d[key] = f(x, flag=True)\nw = [q for q in rows]\nwith open('a') as fh: pass\n\
             print(j, path, K, y, z, w, (m := 3), m, lambda u: u)\nobj.attr = 1\n",
        );
        let names: Vec<String> = free_names(&s, 20).into_iter().map(|n| n.0).collect();
        assert_eq!(names, ["c", "data", "total", "d", "key", "rows", "obj"]);
    }

    #[test]
    fn js_free_names() {
        let s = js(
            "const [files, err] = os.readdir('/app');\nlet a = 1, b = {k: 2};\nfunction f(p, q = r) { return p + q }\n\
             const g = (u, v) => u + v; const h = w => w;\nclass C { m(x) { return x + y } }\n\
             try { z() } catch (e) { console.log(e, obj.prop, {key: val}) }\nconsole.log(files, err, a, b, f, g, h, C, df);",
        );
        let names: Vec<String> = free_names(&s, 20).into_iter().map(|n| n.0).collect();
        assert_eq!(names, ["r", "y", "z", "obj", "val", "df"]);
    }

    #[test]
    fn star_import_disables_free_names() {
        assert!(free_names(&py("from math import *\nprint(pi)"), 10).is_empty());
    }

    #[test]
    fn strings_know_their_call() {
        let s = py("open('/etc/passwd').read()\nx = '/not/a/call'\npathlib.Path('/home/u', 'x')");
        let got: Vec<(&str, Option<String>)> =
            strings(&s).into_iter().map(|l| (l.text, l.call)).collect();
        assert_eq!(
            got,
            vec![
                ("/etc/passwd", Some("open".to_string())),
                ("/not/a/call", None),
                ("/home/u", Some("pathlib.Path".to_string())),
                ("x", Some("pathlib.Path".to_string())),
            ]
        );
    }

    #[test]
    fn statements_split_compound_headers() {
        let s = py("for x in y: total += x\nif a: b = 1; c = 2");
        assert_eq!(s.statements().len(), 5);
    }

    #[test]
    fn hostile_input_does_not_panic() {
        let inputs = [
            "\"\"\"unterminated",
            "'\\",
            "`${`",
            "/[/",
            "((((",
            "))))",
            "\\\n\\",
            "f'{'",
            "r'\\'",
            "0x",
            "1e",
            "é'x",
            "\u{0}\u{1}",
            "for",
            "for (",
            "while",
            "def",
            "import",
            "from",
            "from .",
            "import (",
            "x = = =",
            "`\\",
            "/*",
            "a /",
            "for i in range(",
        ];
        for code in inputs {
            for lang in [Language::Python, Language::JavaScript] {
                let s = Source::new(code, lang);
                let _ = (
                    imports(&s),
                    loops(&s),
                    free_names(&s, 5),
                    strings(&s),
                    calls(&s),
                );
                let _ = recursive_functions(&s);
            }
        }
    }
}
