//! JSON text as jq 1.6 writes it: numbers as doubles in their shortest form (`1.0` is `1`,
//! `1e17` is `1e+17`, integers past 2^53 lose their last digits), strings with jq's escapes
//! (`\u007f` too, and with `-a` every non-ASCII character as `\uXXXX`), and either compact
//! or indented (`--indent n`, `--tab`), keys in their order or sorted (`-S`).

use super::value::Val;

/// How values are written.
#[derive(Clone, Copy, Debug, Default)]
pub struct Style {
    /// Spaces per level (0: compact); ignored with `tab`.
    pub indent: usize,
    pub tab: bool,
    pub sort_keys: bool,
    pub ascii: bool,
}

impl Style {
    /// jq's compact form (`-c`, `tojson`, `tostring`, error messages).
    pub const COMPACT: Style = Style {
        indent: 0,
        tab: false,
        sort_keys: false,
        ascii: false,
    };
}

/// `x` as jq 1.6 prints a number: the shortest digits that read back as `x`, in fixed
/// notation unless the exponent is below -4 or more than 15 digits past them (then
/// `1e+17`, `1e-05`: a sign and at least two digits); infinities as the largest double
/// and NaN as `null`.
pub fn number(x: f64) -> String {
    if x.is_nan() {
        return "null".into();
    }
    let x = if x.is_infinite() {
        f64::MAX.copysign(x)
    } else {
        x
    };
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // Rust's `{:e}` is the shortest round-tripping form: `d.ddde[-]x`.
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    let decpt = exp + 1;
    let n = digits.len() as i32;
    let mut out = String::new();
    if x < 0.0 {
        out.push('-');
    }
    if decpt <= -4 || decpt > n + 15 {
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = decpt - 1;
        out.push('e');
        out.push(if e < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", e.abs()));
    } else if decpt <= 0 {
        out.push_str("0.");
        out.push_str(&"0".repeat((-decpt) as usize));
        out.push_str(&digits);
    } else if decpt >= n {
        out.push_str(&digits);
        out.push_str(&"0".repeat((decpt - n) as usize));
    } else {
        out.push_str(&digits[..decpt as usize]);
        out.push('.');
        out.push_str(&digits[decpt as usize..]);
    }
    out
}

/// A number value as a double, as jq 1.6 holds every number.
pub fn as_f64(v: &Val) -> Option<f64> {
    match v {
        Val::Int(i) => Some(*i as f64),
        Val::Float(f) => Some(*f),
        Val::Num(n) => Some(n.parse::<f64>().unwrap_or(f64::NAN)),
        _ => None,
    }
}

/// `s` as a JSON string, quotes included.
pub fn string(out: &mut String, s: &str, ascii: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c if ascii && !c.is_ascii() => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `v` written in `style`, without a final newline.
pub fn value(v: &Val, style: Style) -> String {
    let mut out = String::new();
    write(&mut out, v, style, 0);
    out
}

fn newline(out: &mut String, style: Style, level: usize) {
    out.push('\n');
    if style.tab {
        out.push_str(&"\t".repeat(level));
    } else {
        out.push_str(&" ".repeat(style.indent * level));
    }
}

fn write(out: &mut String, v: &Val, style: Style, level: usize) {
    let pretty = style.tab || style.indent > 0;
    match v {
        Val::Null => out.push_str("null"),
        Val::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Val::Int(_) | Val::Float(_) | Val::Num(_) => {
            out.push_str(&number(as_f64(v).unwrap_or(f64::NAN)));
        }
        Val::Str(s) => string(out, s, style.ascii),
        Val::Arr(a) if a.is_empty() => out.push_str("[]"),
        Val::Arr(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if pretty {
                    newline(out, style, level + 1);
                }
                write(out, x, style, level + 1);
            }
            if pretty {
                newline(out, style, level);
            }
            out.push(']');
        }
        Val::Obj(o) if o.is_empty() => out.push_str("{}"),
        Val::Obj(o) => {
            out.push('{');
            let mut entries: Vec<_> = o.iter().collect();
            if style.sort_keys {
                entries.sort_by(|a, b| a.0.cmp(b.0));
            }
            for (i, (k, x)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if pretty {
                    newline(out, style, level + 1);
                }
                string(out, k, style.ascii);
                out.push(':');
                if pretty {
                    out.push(' ');
                }
                write(out, x, style, level + 1);
            }
            if pretty {
                newline(out, style, level);
            }
            out.push('}');
        }
    }
}

/// jq's name for the type of `v`.
pub fn type_name(v: &Val) -> &'static str {
    match v {
        Val::Null => "null",
        Val::Bool(_) => "boolean",
        Val::Int(_) | Val::Float(_) | Val::Num(_) => "number",
        Val::Str(_) => "string",
        Val::Arr(_) => "array",
        Val::Obj(_) => "object",
    }
}

/// `v` as jq's error messages show it: compact, cut to 11 bytes and `...` when longer.
pub fn truncated(v: &Val) -> String {
    let text = value(v, Style::COMPACT);
    if text.len() <= 14 {
        return text;
    }
    let mut end = 11;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_jq_1_6_prints_them() {
        let cases = [
            (1.0, "1"),
            (1e300, "1e+300"),
            (1e20, "1e+20"),
            (3.14159, "3.14159"),
            (0.1 + 0.2, "0.30000000000000004"),
            (-0.0, "-0"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (123456789012.0, "123456789012"),
            (1.5e17, "1.5e+17"),
            (12345678901234567890.0, "12345678901234567000"),
            (1e15, "1000000000000000"),
            (1e16, "1e+16"),
            (-1e-7, "-1e-07"),
            (f64::INFINITY, "1.7976931348623157e+308"),
            (f64::NAN, "null"),
            (123.0e-2, "1.23"),
        ];
        for (x, text) in cases {
            assert_eq!(number(x), text, "{x}");
        }
    }

    #[test]
    fn strings_with_jq_escapes() {
        let mut out = String::new();
        string(&mut out, "\u{0}\u{1f}\u{7f}\u{8}\u{c}\t\n\r\"\\/é😀", false);
        assert_eq!(out, r#""\u0000\u001f\u007f\b\f\t\n\r\"\\/é😀""#);
        out.clear();
        string(&mut out, "é😀", true);
        assert_eq!(out, r#""\u00e9\ud83d\ude00""#);
    }
}
