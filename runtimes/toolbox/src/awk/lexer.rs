//! awk's tokens: the program text cut into numbers, strings, regex literals, names and
//! operators, with the line each starts on (for syntax errors). Whether `/` starts a regex
//! or divides depends on the token before it, so the lexer decides that as it goes.

/// One token.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Num(f64),
    Str(String),
    Regex(String),
    /// A name directly followed by `(`: a call of a user function.
    Func(String),
    Name(String),
    Builtin(&'static str),
    /// Keywords and operators, by their spelling.
    Op(&'static str),
    Newline,
    Eof,
}

impl Tok {
    pub fn is(&self, op: &str) -> bool {
        matches!(self, Tok::Op(o) if *o == op)
    }

    /// How a syntax error names it.
    pub fn show(&self) -> String {
        match self {
            Tok::Num(n) => n.to_string(),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Regex(r) => format!("/{r}/"),
            Tok::Func(n) | Tok::Name(n) => n.clone(),
            Tok::Builtin(b) => (*b).to_string(),
            Tok::Op(o) => (*o).to_string(),
            Tok::Newline => "end of line".into(),
            Tok::Eof => "end of file".into(),
        }
    }
}

const KEYWORDS: &[&str] = &[
    "BEGIN", "END", "function", "func", "if", "else", "while", "for", "do", "break", "continue",
    "next", "nextfile", "exit", "return", "delete", "in", "getline", "print", "printf",
];

pub const BUILTINS: &[&str] = &[
    "length", "substr", "index", "split", "sub", "gsub", "match", "sprintf", "tolower", "toupper",
    "int", "sqrt", "exp", "log", "sin", "cos", "atan2", "rand", "srand", "system", "close",
    "fflush",
];

/// Operators, longest first so that `**=` wins over `*`.
const OPS: &[&str] = &[
    "**=", "&&", "||", "==", "<=", ">=", "!=", "++", "--", "+=", "-=", "*=", "/=", "%=", "^=",
    ">>", "!~", "**", "{", "}", "(", ")", "[", "]", ";", ",", "+", "-", "*", "/", "%", "^", "!",
    ">", "<", "|", "?", ":", "~", "$", "=",
];

/// Cuts `src` into tokens with their lines; the error is a message and its line.
pub fn lex(src: &str) -> Result<Vec<(Tok, usize)>, (String, usize)> {
    let c: Vec<char> = src.chars().collect();
    let mut out: Vec<(Tok, usize)> = Vec::new();
    let mut i = 0;
    let mut line = 1;
    while i < c.len() {
        let ch = c[i];
        // After an operand `/` divides; anywhere else it opens a regex.
        let operand_before = matches!(
            out.last().map(|t| &t.0),
            Some(Tok::Num(_) | Tok::Str(_) | Tok::Name(_) | Tok::Builtin(_))
        ) || out.last().is_some_and(|t| {
            t.0.is(")") || t.0.is("]") || t.0.is("++") || t.0.is("--") || t.0.is("$")
        });
        match ch {
            ' ' | '\t' | '\r' => i += 1,
            '\\' if c.get(i + 1) == Some(&'\n') => {
                i += 2;
                line += 1;
            }
            '\\' if c.get(i + 1) == Some(&'\r') && c.get(i + 2) == Some(&'\n') => {
                i += 3;
                line += 1;
            }
            '\n' => {
                out.push((Tok::Newline, line));
                line += 1;
                i += 1;
            }
            '#' => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
            }
            '"' => {
                let start = line;
                i += 1;
                let mut s = String::new();
                loop {
                    match c.get(i) {
                        None | Some('\n') => return Err(("runaway string constant".into(), start)),
                        Some('"') => break,
                        Some('\\') => {
                            i += 1;
                            match c.get(i) {
                                Some('\n') => line += 1,
                                Some(&e) => i += escape(&c, i, e, &mut s) - 1,
                                None => s.push('\\'),
                            }
                        }
                        Some(&x) => s.push(x),
                    }
                    i += 1;
                }
                i += 1;
                out.push((Tok::Str(s), start));
            }
            '/' if !operand_before => {
                i += 1;
                let mut r = String::new();
                let mut in_bracket = false;
                loop {
                    match c.get(i) {
                        None | Some('\n') => {
                            return Err(("runaway regular expression".into(), line));
                        }
                        Some('/') if !in_bracket => break,
                        Some('[') if !in_bracket => {
                            in_bracket = true;
                            r.push('[');
                            // `]` first in a bracket (also after `^`) is literal.
                            if c.get(i + 1) == Some(&'^') {
                                r.push('^');
                                i += 1;
                            }
                            if c.get(i + 1) == Some(&']') {
                                r.push(']');
                                i += 1;
                            }
                        }
                        Some(']') if in_bracket => {
                            in_bracket = false;
                            r.push(']');
                        }
                        Some('\\') if i + 1 < c.len() => {
                            let e = c[i + 1];
                            i += 1;
                            match e {
                                '/' | '"' => r.push(e),
                                't' => r.push('\t'),
                                'n' => r.push('\n'),
                                'r' => r.push('\r'),
                                'f' => r.push('\x0c'),
                                'v' => r.push('\x0b'),
                                'a' => r.push('\x07'),
                                x if in_bracket
                                    && x.is_ascii_punctuation()
                                    && x != '\\'
                                    && x != ']' =>
                                {
                                    r.push(x)
                                }
                                x => {
                                    r.push('\\');
                                    r.push(x);
                                }
                            }
                        }
                        Some(&x) => r.push(x),
                    }
                    i += 1;
                }
                i += 1;
                out.push((Tok::Regex(r), line));
            }
            '0'..='9' | '.' if ch != '.' || c.get(i + 1).is_some_and(char::is_ascii_digit) => {
                let start = i;
                while i < c.len() && c[i].is_ascii_digit() {
                    i += 1;
                }
                if c.get(i) == Some(&'.') {
                    i += 1;
                    while i < c.len() && c[i].is_ascii_digit() {
                        i += 1;
                    }
                }
                if matches!(c.get(i), Some('e' | 'E')) {
                    let mut j = i + 1;
                    if matches!(c.get(j), Some('+' | '-')) {
                        j += 1;
                    }
                    if c.get(j).is_some_and(char::is_ascii_digit) {
                        i = j;
                        while i < c.len() && c[i].is_ascii_digit() {
                            i += 1;
                        }
                    }
                }
                let text: String = c[start..i].iter().collect();
                out.push((Tok::Num(text.parse().unwrap_or(0.0)), line));
            }
            x if x.is_ascii_alphabetic() || x == '_' => {
                let start = i;
                while i < c.len() && (c[i].is_ascii_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
                let word: String = c[start..i].iter().collect();
                let tok = if let Some(k) = KEYWORDS.iter().find(|k| **k == word) {
                    Tok::Op(if *k == "func" { "function" } else { k })
                } else if let Some(b) = BUILTINS.iter().find(|b| **b == word) {
                    Tok::Builtin(b)
                } else if c.get(i) == Some(&'(') {
                    Tok::Func(word)
                } else {
                    Tok::Name(word)
                };
                out.push((tok, line));
            }
            _ => {
                let rest: String = c[i..c.len().min(i + 3)].iter().collect();
                let Some(op) = OPS.iter().find(|o| rest.starts_with(**o)) else {
                    return Err((format!("syntax error at or near {ch}"), line));
                };
                i += op.chars().count();
                let op = match *op {
                    "**" => "^",
                    "**=" => "^=",
                    o => o,
                };
                out.push((Tok::Op(op), line));
            }
        }
    }
    out.push((Tok::Eof, line));
    Ok(out)
}

/// Appends the escape `\e` (at `c[i]`) of a string to `s`; returns how many characters it used.
pub fn escape(c: &[char], i: usize, e: char, s: &mut String) -> usize {
    match e {
        'n' => s.push('\n'),
        't' => s.push('\t'),
        'r' => s.push('\r'),
        '\\' => s.push('\\'),
        '"' => s.push('"'),
        '/' => s.push('/'),
        'a' => s.push('\x07'),
        'b' => s.push('\x08'),
        'f' => s.push('\x0c'),
        'v' => s.push('\x0b'),
        '0'..='7' => {
            let mut n = 0u32;
            let mut used = 0;
            while used < 3 && c.get(i + used).is_some_and(|d| ('0'..='7').contains(d)) {
                n = n * 8 + c[i + used].to_digit(8).unwrap_or(0);
                used += 1;
            }
            s.push(char::from_u32(n).unwrap_or('\u{fffd}'));
            return used;
        }
        // Kept whole, as mawk does, so that "\." still means a literal dot in a regex.
        other => {
            s.push('\\');
            s.push(other);
        }
    }
    1
}

/// Processes the escapes of a command-line value (`-v`, `-F`, `NAME=VAL` operands).
pub fn unescape(v: &str) -> String {
    let c: Vec<char> = v.chars().collect();
    let mut s = String::new();
    let mut i = 0;
    while i < c.len() {
        if c[i] == '\\' && i + 1 < c.len() {
            i += 1 + escape(&c, i + 1, c[i + 1], &mut s);
        } else {
            s.push(c[i]);
            i += 1;
        }
    }
    s
}
