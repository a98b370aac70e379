//! awk's `printf` and `sprintf`: C's conversions (`%d %i %o %x %X %u %c %s %e %E %f %F %g %G
//! %%`) with flags (`-+ #0`), width, precision and `*`, written out here as Rust's `format!`
//! has no `%g` and no C exponents.

use super::value::Value;

/// Formats `args` by `fmt`; strings of numbers use `convfmt`. Missing arguments are "" or 0.
pub fn sprintf(fmt: &str, args: &[Value], convfmt: &str) -> String {
    let c: Vec<char> = fmt.chars().collect();
    let mut out = String::new();
    let mut next = 0;
    let arg = |next: &mut usize| {
        let v = args.get(*next).cloned().unwrap_or_default();
        *next += 1;
        v
    };
    let mut i = 0;
    while i < c.len() {
        if c[i] != '%' {
            out.push(c[i]);
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        let mut flags = String::new();
        while i < c.len() && "-+ #0".contains(c[i]) {
            flags.push(c[i]);
            i += 1;
        }
        let mut width: Option<i64> = None;
        if c.get(i) == Some(&'*') {
            width = Some(arg(&mut next).num() as i64);
            i += 1;
        } else {
            while i < c.len() && c[i].is_ascii_digit() {
                width = Some(
                    width
                        .unwrap_or(0)
                        .saturating_mul(10)
                        .saturating_add(i64::from(c[i] as u8 - b'0')),
                );
                i += 1;
            }
        }
        let mut precision: Option<usize> = None;
        if c.get(i) == Some(&'.') {
            i += 1;
            if c.get(i) == Some(&'*') {
                precision = Some(arg(&mut next).num().max(0.0) as usize);
                i += 1;
            } else {
                let mut p = 0usize;
                while i < c.len() && c[i].is_ascii_digit() {
                    p = p
                        .saturating_mul(10)
                        .saturating_add(usize::from(c[i] as u8 - b'0'));
                    i += 1;
                }
                precision = Some(p);
            }
        }
        // Length modifiers mean nothing in awk.
        while i < c.len() && "hlLqjzt".contains(c[i]) {
            i += 1;
        }
        let Some(&conv) = c.get(i) else {
            out.extend(&c[start..]);
            break;
        };
        i += 1;
        if let Some(w) = width {
            if w < 0 {
                flags.push('-');
                width = Some(-w);
            }
        }
        let width = width.unwrap_or(0).min(1 << 20) as usize;
        let precision = precision.map(|p| p.min(1 << 20));
        let body = match conv {
            '%' => {
                out.push('%');
                continue;
            }
            'd' | 'i' => {
                let n = arg(&mut next).num();
                integer(n, &flags, precision, 10, false)
            }
            'o' | 'x' | 'X' | 'u' => {
                let n = arg(&mut next).num();
                let radix = match conv {
                    'o' => 8,
                    'u' => 10,
                    _ => 16,
                };
                let n = if n < 0.0 { (n as i64) as u64 as f64 } else { n };
                integer(n, &flags, precision, radix, conv == 'X')
            }
            'c' => match arg(&mut next) {
                Value::Num(n) => char::from_u32(n as u32)
                    .map(String::from)
                    .unwrap_or_default(),
                v => v
                    .str(convfmt)
                    .chars()
                    .next()
                    .map(String::from)
                    .unwrap_or_default(),
            },
            's' => {
                let s = arg(&mut next).str(convfmt);
                match precision {
                    Some(p) => s.chars().take(p).collect(),
                    None => s,
                }
            }
            'e' | 'E' | 'f' | 'F' | 'g' | 'G' => {
                let n = arg(&mut next).num();
                float(n, conv, &flags, precision.unwrap_or(6))
            }
            _ => {
                // Not a conversion: printed as written.
                out.extend(&c[start..i]);
                continue;
            }
        };
        pad(
            &mut out,
            &body,
            width,
            &flags,
            matches!(
                conv,
                'd' | 'i' | 'o' | 'x' | 'X' | 'u' | 'e' | 'E' | 'f' | 'F' | 'g' | 'G'
            ) && !(precision.is_some() && matches!(conv, 'd' | 'i' | 'o' | 'x' | 'X' | 'u')),
        );
    }
    out
}

fn pad(out: &mut String, body: &str, width: usize, flags: &str, zero_ok: bool) {
    let len = body.chars().count();
    if len >= width {
        out.push_str(body);
    } else if flags.contains('-') {
        out.push_str(body);
        out.extend(std::iter::repeat_n(' ', width - len));
    } else if flags.contains('0') && zero_ok && !body.ends_with("inf") && !body.ends_with("nan") {
        // Zeros go after the sign (and 0x).
        let split = if body.starts_with("0x") || body.starts_with("0X") {
            2
        } else if body.starts_with(['-', '+', ' ']) {
            1
        } else {
            0
        };
        out.push_str(&body[..split]);
        out.extend(std::iter::repeat_n('0', width - len));
        out.push_str(&body[split..]);
    } else {
        out.extend(std::iter::repeat_n(' ', width - len));
        out.push_str(body);
    }
}

fn integer(n: f64, flags: &str, precision: Option<usize>, radix: u32, upper: bool) -> String {
    if n.is_nan() || n.is_infinite() {
        return float(n, 'f', flags, 0);
    }
    let neg = n < 0.0;
    let m = n.abs().trunc();
    let m = if m >= 1.8e19 { u64::MAX } else { m as u64 };
    let mut digits = match radix {
        8 => format!("{m:o}"),
        16 if upper => format!("{m:X}"),
        16 => format!("{m:x}"),
        _ => m.to_string(),
    };
    if let Some(p) = precision {
        if p == 0 && m == 0 {
            digits.clear();
        }
        while digits.len() < p {
            digits.insert(0, '0');
        }
    }
    if flags.contains('#') && m != 0 {
        match radix {
            8 if !digits.starts_with('0') => digits.insert(0, '0'),
            16 => digits.insert_str(0, if upper { "0X" } else { "0x" }),
            _ => {}
        }
    }
    sign(neg, flags, radix == 10) + &digits
}

fn sign(neg: bool, flags: &str, signed: bool) -> String {
    if neg {
        "-".into()
    } else if signed && flags.contains('+') {
        "+".into()
    } else if signed && flags.contains(' ') {
        " ".into()
    } else {
        String::new()
    }
}

/// `%e`, `%f`, `%g` as C prints them.
fn float(n: f64, conv: char, flags: &str, precision: usize) -> String {
    // C prints the sign of a negative zero too (`-0.000000`), as GNU awk's printf does.
    let neg = n.is_sign_negative();
    let a = n.abs();
    let upper = conv.is_ascii_uppercase();
    let body = if a.is_nan() {
        "nan".to_string()
    } else if a.is_infinite() {
        "inf".to_string()
    } else {
        match conv.to_ascii_lowercase() {
            'f' => {
                let mut s = format!("{a:.precision$}");
                if flags.contains('#') && precision == 0 {
                    s.push('.');
                }
                s
            }
            'e' => exponent(a, precision, flags.contains('#')),
            _ => {
                let p = if precision == 0 { 1 } else { precision };
                let e = exponent(a, p - 1, false);
                let x: i32 = e
                    .rsplit('e')
                    .next()
                    .and_then(|x| x.parse().ok())
                    .unwrap_or(0);
                let mut s = if x < -4 || x >= p as i32 {
                    e
                } else {
                    let decimals = (p as i32 - 1 - x).max(0) as usize;
                    format!("{a:.decimals$}")
                };
                if !flags.contains('#') {
                    s = trim_zeros(&s);
                }
                s
            }
        }
    };
    let body = if upper {
        body.to_ascii_uppercase()
    } else {
        body
    };
    let neg = neg && !(a == 0.0 && !n.is_sign_negative());
    sign(neg, flags, true) + &body
}

/// `d.ddde+XX`.
fn exponent(a: f64, precision: usize, point: bool) -> String {
    let s = format!("{a:.precision$e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut m = mantissa.to_string();
    if point && !m.contains('.') {
        m.push('.');
    }
    format!("{m}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

fn trim_zeros(s: &str) -> String {
    let (mantissa, exp) = match s.find('e') {
        Some(at) => (&s[..at], &s[at..]),
        None => (s, ""),
    };
    if !mantissa.contains('.') {
        return s.to_string();
    }
    let m = mantissa.trim_end_matches('0').trim_end_matches('.');
    format!("{m}{exp}")
}
