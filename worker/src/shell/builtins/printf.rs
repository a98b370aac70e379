//! The printers: `echo` and `printf` (C's conversions, with the widths and precisions bounded),
//! with the backslash escapes they share.

use crate::shell::exec::{Abort, Ctx};

/// The byte of a one-letter C escape (`\n`, `\t`, `\r`, `\a`, `\b`, `\f`, `\v`) after its
/// backslash: the escapes `echo -e`, `printf` and `tr` all read alike.
pub(super) fn control_escape(c: u8) -> Option<u8> {
    Some(match c {
        b'n' => b'\n',
        b't' => b'\t',
        b'r' => b'\r',
        b'a' => 7,
        b'b' => 8,
        b'f' => 12,
        b'v' => 11,
        _ => return None,
    })
}

/// Backslash escapes of `echo -e` and `printf`; `false` means `\c` was met (stop output).
fn escapes(s: &[u8], out: &mut Vec<u8>) -> bool {
    let mut i = 0;
    while i < s.len() {
        if s[i] != b'\\' || i + 1 == s.len() {
            out.push(s[i]);
            i += 1;
            continue;
        }
        let c = s[i + 1];
        i += 2;
        let plain = control_escape(c).or(match c {
            b'e' | b'E' => Some(27),
            b'\\' => Some(b'\\'),
            _ => None,
        });
        if let Some(plain) = plain {
            out.push(plain);
            continue;
        }
        // `\0NNN` (echo) or `\NNN` (printf): up to three octal digits after `\0`, two more
        // after `\1`-`\7`; `\xHH`: up to two hex digits.
        let (radix, max, first) = match c {
            b'c' => return false,
            b'0' => (8, 3, 0),
            b'1'..=b'7' => (8, 2, u32::from(c - b'0')),
            b'x' => (16, 2, 0),
            _ => {
                out.extend([b'\\', c]);
                continue;
            }
        };
        let digit = |d: &u8| char::from(*d).to_digit(radix);
        let n = s[i..]
            .iter()
            .take(max)
            .take_while(|d| digit(d).is_some())
            .count();
        if c == b'x' && n == 0 {
            out.extend_from_slice(b"\\x");
            continue;
        }
        let v = s[i..i + n]
            .iter()
            .fold(first, |v, d| v * radix + digit(d).unwrap_or(0));
        out.push((v & 0xFF) as u8);
        i += n;
    }
    true
}

/// How many bytes the escape sequence at the start of `s` (a backslash) spans, as [`escapes`]
/// reads it.
fn escape_len(s: &[u8]) -> usize {
    let (max, digit): (usize, fn(&u8) -> bool) = match s.get(1) {
        None => return 1,
        Some(b'0') => (3, |c| (b'0'..=b'7').contains(c)),
        Some(b'1'..=b'7') => (2, |c| (b'0'..=b'7').contains(c)),
        Some(b'x') => (2, u8::is_ascii_hexdigit),
        Some(_) => return 2,
    };
    2 + s[2..].iter().take(max).take_while(|c| digit(c)).count()
}

pub(super) fn echo(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let mut newline = true;
    let mut interpret = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let Some(flags) = a.strip_prefix('-') else {
            break;
        };
        if flags.is_empty() || !flags.chars().all(|c| matches!(c, 'n' | 'e' | 'E')) {
            break;
        }
        for c in flags.chars() {
            match c {
                'n' => newline = false,
                'e' => interpret = true,
                _ => interpret = false,
            }
        }
        i += 1;
    }
    let text = args[i..].join(" ");
    let mut out = Vec::new();
    if interpret {
        if !escapes(text.as_bytes(), &mut out) {
            ctx.out(&out);
            return Ok(0);
        }
    } else {
        out.extend_from_slice(text.as_bytes());
    }
    if newline {
        out.push(b'\n');
    }
    ctx.out(&out);
    Ok(0)
}

/// The widest field `printf` honours (`%999999999d` would otherwise allocate gigabytes).
const MAX_PRINTF_WIDTH: usize = 1 << 20;

/// The longest precision honoured by `printf`: Rust's formatter panics past 65535,
/// and nothing sensible needs more.
const MAX_PRECISION: usize = 4096;

/// A number argument for `printf %d`: decimal, `0x` hex, `0` octal, or `'c` (the char's code).
fn printf_int(s: &str) -> Option<i64> {
    let t = s.trim();
    if let Some(c) = t.strip_prefix('\'').or_else(|| t.strip_prefix('"')) {
        return Some(c.chars().next().map_or(0, |c| i64::from(u32::from(c))));
    }
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()?
    } else if body.len() > 1 && body.starts_with('0') {
        i64::from_str_radix(&body[1..], 8).ok()?
    } else {
        body.parse().ok()?
    };
    Some(if neg { -v } else { v })
}

/// C's `%e` (`1.500000e+00`).
fn c_exp(v: f64, prec: usize, upper: bool) -> String {
    let s = format!("{v:.prec$e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if exp < 0 { '-' } else { '+' };
    let e = if upper { 'E' } else { 'e' };
    format!("{mant}{e}{sign}{:02}", exp.abs())
}

/// C's `%g`.
fn c_general(v: f64, prec: usize, upper: bool) -> String {
    let p = if prec == 0 { 1 } else { prec };
    if v == 0.0 {
        return "0".into();
    }
    let exp = v.abs().log10().floor() as i32;
    let strip = |s: String| -> String {
        if s.contains('.') && !s.contains('e') && !s.contains('E') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if exp < -4 || exp >= p as i32 {
        let s = c_exp(v, p - 1, upper);
        let (mant, e) = s
            .split_once(if upper { 'E' } else { 'e' })
            .unwrap_or((&s, ""));
        let mant = if mant.contains('.') {
            mant.trim_end_matches('0').trim_end_matches('.')
        } else {
            mant
        };
        format!("{mant}{}{e}", if upper { 'E' } else { 'e' })
    } else {
        let decimals = usize::try_from(p as i32 - 1 - exp).unwrap_or(0);
        strip(format!("{v:.decimals$}"))
    }
}

/// One `%` conversion of a printf format: `%[flags][width][.precision]conversion`.
struct Conversion {
    flags: String,
    width: usize,
    precision: Option<usize>,
    conv: char,
}

impl Conversion {
    /// Parses the conversion at the start of `s` (a `%`); with its length in bytes, or `None`
    /// when the format ends before the conversion character.
    fn parse(s: &str) -> Option<(Self, usize)> {
        let digits = |s: &str| s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let body = &s[1..];
        let flags = body
            .find(|c: char| !"-+ 0#".contains(c))
            .unwrap_or(body.len());
        let width = digits(&body[flags..]);
        let mut rest = &body[flags + width..];
        let mut precision = None;
        if let Some(p) = rest.strip_prefix('.') {
            let n = digits(p);
            precision = Some(p[..n].parse::<usize>().unwrap_or(0).min(MAX_PRECISION));
            rest = &p[n..];
        }
        let conv = rest.chars().next()?;
        let width = body[flags..flags + width]
            .parse::<usize>()
            .unwrap_or(0)
            .min(MAX_PRINTF_WIDTH);
        let flags = body[..flags].to_string();
        Some((
            Self {
                flags,
                width,
                precision,
                conv,
            },
            s.len() - rest.len() + conv.len_utf8(),
        ))
    }

    /// The converted argument, before padding; `None` for an unknown conversion. A bad number
    /// is reported, counts as 0 and makes the status 1.
    fn convert(&self, ctx: &mut Ctx<'_, '_>, arg: &str, status: &mut i32) -> Option<String> {
        let mut invalid = || {
            ctx.warn(format_args!("'{arg}': invalid number"));
            *status = 1;
        };
        Some(match self.conv {
            's' => match self.precision {
                Some(p) => arg.chars().take(p).collect(),
                None => arg.to_string(),
            },
            'b' => {
                let mut v = Vec::new();
                escapes(arg.as_bytes(), &mut v);
                String::from_utf8_lossy(&v).into_owned()
            }
            'c' => arg.chars().next().map(String::from).unwrap_or_default(),
            'd' | 'i' | 'u' | 'x' | 'X' | 'o' => self.integer(match printf_int(arg) {
                _ if arg.is_empty() => 0,
                Some(v) => v,
                None => {
                    invalid();
                    0
                }
            }),
            'f' | 'F' | 'e' | 'E' | 'g' | 'G' => self.float(match arg.trim().parse() {
                _ if arg.is_empty() => 0.0,
                Ok(v) => v,
                Err(_) => {
                    invalid();
                    0.0
                }
            }),
            _ => return None,
        })
    }

    fn integer(&self, v: i64) -> String {
        let digits = match self.conv {
            'x' => format!("{v:x}"),
            'X' => format!("{v:X}"),
            'o' => format!("{v:o}"),
            _ => v.unsigned_abs().to_string(),
        };
        let digits = match self.precision {
            Some(p) if digits.len() < p => format!("{}{digits}", "0".repeat(p - digits.len())),
            _ => digits,
        };
        let signed = matches!(self.conv, 'd' | 'i');
        let sign = match (signed, v < 0) {
            (true, true) => "-",
            (true, false) if self.flags.contains('+') => "+",
            (true, false) if self.flags.contains(' ') => " ",
            _ => "",
        };
        format!("{sign}{digits}")
    }

    fn float(&self, v: f64) -> String {
        let p = self.precision.unwrap_or(6);
        let s = match self.conv {
            'f' | 'F' => format!("{v:.p$}"),
            'e' | 'E' => c_exp(v, p, self.conv == 'E'),
            _ => c_general(v, p, self.conv == 'G'),
        };
        if v >= 0.0 && self.flags.contains('+') {
            format!("+{s}")
        } else {
            s
        }
    }

    /// Pads `body` to the width: left-justified with `-`, zero-filled after the sign with `0`.
    fn pad(&self, body: &str, out: &mut Vec<u8>) {
        let len = body.chars().count();
        let fill = self.width.saturating_sub(len);
        if self.flags.contains('-') {
            out.extend_from_slice(body.as_bytes());
            out.extend(std::iter::repeat_n(b' ', fill));
        } else if self.flags.contains('0') && fill > 0 && !matches!(self.conv, 's' | 'b' | 'c') {
            let sign = if body.starts_with(['-', '+']) { 1 } else { 0 };
            out.extend_from_slice(&body.as_bytes()[..sign]);
            out.extend(std::iter::repeat_n(b'0', fill));
            out.extend_from_slice(&body.as_bytes()[sign..]);
        } else {
            out.extend(std::iter::repeat_n(b' ', fill));
            out.extend_from_slice(body.as_bytes());
        }
    }
}

pub(super) fn printf(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    // bash's `printf -v NAME`: the output goes into the variable instead.
    let (into, args) = match args {
        [v, name, rest @ ..] if v == "-v" => {
            if !crate::shell::lexer::is_name(name) {
                ctx.warn(format_args!("`{name}': not a valid identifier"));
                return Ok(2);
            }
            (Some(name.as_str()), rest)
        }
        [v] if v == "-v" => {
            ctx.warn("-v: option requires an argument");
            return Ok(2);
        }
        [dashes, rest @ ..] if dashes == "--" => (None, rest),
        _ => (None, args),
    };
    let Some((format, args)) = args.split_first() else {
        ctx.warn("usage: printf [-v VAR] FORMAT [ARGUMENT]...");
        return Ok(2);
    };
    let (out, status) = render(ctx, format, args, into.is_none())?;
    match into {
        Some(name) => {
            let value = String::from_utf8_lossy(&out).into_owned();
            Ok(if ctx.sh.set_var(name, value) {
                status
            } else {
                1
            })
        }
        None => {
            ctx.out(&out);
            Ok(status)
        }
    }
}

/// What `printf FORMAT ARGS` prints and its status; with `stream`, output beyond 16 MiB
/// goes out as it is made (a variable's value is bounded by the variables' own cap).
fn render(
    ctx: &mut Ctx<'_, '_>,
    format: &str,
    args: &[String],
    stream: bool,
) -> Result<(Vec<u8>, i32), Abort> {
    let fmt = format.as_bytes();
    let mut rest = args.iter();
    let mut out = Vec::new();
    let mut status = 0;
    loop {
        let mut consumed = false;
        let mut i = 0;
        while i < fmt.len() {
            match fmt[i] {
                b'\\' => {
                    let j = i + escape_len(&fmt[i..]);
                    if !escapes(&fmt[i..j], &mut out) {
                        return Ok((out, status));
                    }
                    i = j;
                }
                b'%' if fmt.get(i + 1) == Some(&b'%') => {
                    out.push(b'%');
                    i += 2;
                }
                b'%' => {
                    // `%` is ASCII: `i` is a char boundary.
                    let Some((conv, used)) = Conversion::parse(&format[i..]) else {
                        ctx.warn("missing format character");
                        return Ok((Vec::new(), 1));
                    };
                    let arg = rest.next();
                    consumed |= arg.is_some();
                    let Some(body) = conv.convert(ctx, arg.map_or("", String::as_str), &mut status)
                    else {
                        let spec = &format[i..i + used];
                        ctx.warn(format_args!(
                            "%{}: invalid conversion specification in '{spec}'",
                            conv.conv
                        ));
                        return Ok((Vec::new(), 1));
                    };
                    conv.pad(&body, &mut out);
                    i += used;
                }
                c => {
                    out.push(c);
                    i += 1;
                }
            }
        }
        // The format is reused while it consumes arguments.
        if !consumed || rest.len() == 0 {
            break;
        }
        ctx.check()?;
        if out.len() > (16 << 20) {
            if !stream {
                ctx.warn("printf -v: the value is too long (over 16 MiB)");
                return Ok((Vec::new(), 1));
            }
            if !ctx.out(&std::mem::take(&mut out)) {
                return Ok((Vec::new(), status));
            }
        }
    }
    Ok((out, status))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::shell::tests::Sandbox;

    #[test]
    fn echo_and_printf() {
        let mut s = Sandbox::new();
        assert_eq!(s.ok("echo -n a; echo b"), "ab\n");
        assert_eq!(s.ok("echo -e 'a\\tb\\n'"), "a\tb\n\n");
        assert_eq!(s.ok("echo 'a\\tb'"), "a\\tb\n");
        assert_eq!(s.ok("echo -x -n"), "-x -n\n");
        assert_eq!(s.ok("echo -e 'x\\cy'; echo"), "x\n");
        assert_eq!(s.ok("echo"), "\n");
        assert_eq!(
            s.ok("printf '%s-%d|%5s|%-3s|%03d|%.2f|%x\\n' a 42 r l 7 3.14159 255"),
            "a-42|    r|l  |007|3.14|ff\n"
        );
        assert_eq!(s.ok("printf '%s\\n' a b c"), "a\nb\nc\n");
        assert_eq!(s.ok("printf 'no newline'"), "no newline");
        assert_eq!(s.ok("printf '%%|%c|%e\\n' xyz 1500"), "%|x|1.500000e+03\n");
        let (out, err, code) = s.sh("printf '%d\\n' abc");
        assert_eq!((out.as_str(), code), ("0\n", 1));
        assert!(err.contains("invalid number"));
    }

    #[test]
    fn c_float_formats() {
        assert_eq!(c_exp(1.5, 6, false), "1.500000e+00");
        assert_eq!(c_exp(0.000123, 2, true), "1.23E-04");
        assert_eq!(c_general(0.0001, 6, false), "0.0001");
        assert_eq!(c_general(1e-5, 6, false), "1e-05");
        assert_eq!(c_general(123456789.0, 6, false), "1.23457e+08");
        assert_eq!(c_general(2.5, 6, false), "2.5");
        assert_eq!(printf_int("0x10"), Some(16));
        assert_eq!(printf_int("'A"), Some(65));
        assert_eq!(printf_int("-010"), Some(-8));
        assert_eq!(printf_int("x"), None);
    }

    #[test]
    fn echo_escapes() {
        let mut v = Vec::new();
        assert!(escapes(b"a\\tb\\x41\\0101\\\\", &mut v));
        assert_eq!(v, b"a\tbAA\\");
        let mut v = Vec::new();
        assert!(!escapes(b"a\\cb", &mut v));
        assert_eq!(v, b"a");
    }
}
