//! awk's values and their conversions: numbers (doubles), strings, and the "strnum" of input
//! (a field that looks numeric compares as a number), with number-to-string by CONVFMT/OFMT
//! (integers print as integers) and string-to-number by the longest numeric prefix.

use super::format::sprintf;

#[derive(Debug, Clone, Default)]
pub enum Value {
    #[default]
    Uninit,
    Num(f64),
    Str(String),
    /// Input that looks like a number: a string that compares numerically.
    StrNum(String, f64),
}

impl Value {
    /// A value read from input: a strnum if it looks like a number.
    pub fn input(s: String) -> Value {
        match looks_numeric(&s) {
            Some(n) => Value::StrNum(s, n),
            None => Value::Str(s),
        }
    }

    pub fn num(&self) -> f64 {
        match self {
            Value::Uninit => 0.0,
            Value::Num(n) | Value::StrNum(_, n) => *n,
            Value::Str(s) => prefix_number(s),
        }
    }

    /// The string, numbers converted with `convfmt`.
    pub fn str(&self, convfmt: &str) -> String {
        match self {
            Value::Uninit => String::new(),
            Value::Num(n) => num_to_str(*n, convfmt),
            Value::Str(s) | Value::StrNum(s, _) => s.clone(),
        }
    }

    pub fn truthy(&self) -> bool {
        match self {
            Value::Uninit => false,
            Value::Num(n) | Value::StrNum(_, n) => *n != 0.0,
            Value::Str(s) => !s.is_empty(),
        }
    }

    /// Whether comparisons with it are numeric (when the other side is too).
    pub fn numeric(&self) -> bool {
        !matches!(self, Value::Str(_))
    }
}

/// A number as awk prints it: integral values as integers, others through `fmt`.
pub fn num_to_str(n: f64, fmt: &str) -> String {
    if n == n.trunc() && n.abs() < 1e16 {
        if n == 0.0 {
            return "0".into();
        }
        return format!("{}", n as i64);
    }
    if n.is_nan() {
        return if n.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if n.is_infinite() {
        return if n < 0.0 { "-inf" } else { "inf" }.into();
    }
    sprintf(fmt, &[Value::Num(n)], fmt)
}

/// The number a whole string stands for, if it looks like one (blanks around allowed).
pub fn looks_numeric(s: &str) -> Option<f64> {
    let t = s.trim_matches(|c| c == ' ' || c == '\t' || c == '\n');
    if t.is_empty() {
        return None;
    }
    let (n, used) = number_prefix(t);
    (used == t.len() && used > 0).then_some(n)
}

/// The number at the start of `s` (after blanks), 0 if none: strtod without hex or inf.
pub fn prefix_number(s: &str) -> f64 {
    let t = s.trim_start_matches(|c| c == ' ' || c == '\t' || c == '\n');
    number_prefix(t).0
}

fn number_prefix(t: &str) -> (f64, usize) {
    let b = t.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - digits_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let f = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        digits += i - f;
    }
    if digits == 0 {
        return (0.0, 0);
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            i = j;
        }
    }
    (t[..i].parse().unwrap_or(0.0), i)
}
