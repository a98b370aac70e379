//! `std.sprintf` / `std.printf` / `FILE.printf`: C printf formatting with
//! exactly quickjs-libc's rules (flags `0#+- '`, width and precision with
//! `*`, the `l` modifier for 64-bit integers, conversions `c d i o u x X s e
//! f g a E F G A %`). Each conversion is rendered by wasi-libc's own
//! `snprintf`, as quickjs-libc does, so `%g`, `%a` and friends are C-exact.

use std::ffi::{CString, c_char, c_double, c_int, c_longlong};

use rquickjs::{Ctx, Exception, Value, convert::Coerced};

use crate::util;

/// The longest conversion spec quickjs-libc accepts (its `fmtbuf` is 32
/// bytes, NUL and the `ll` it may insert included).
const MAX_SPEC: usize = 28;

/// Widths and precisions above this are refused: C would try to produce a
/// gigabyte of padding, we would rather say no.
const MAX_WIDTH: i64 = 1 << 20;

/// One argument for a single-conversion `snprintf` call.
enum Arg<'a> {
    Int(c_int),
    Long(c_longlong),
    Double(c_double),
    Str(&'a CString),
}

/// Format `args[0]` with the rest of `args`, returning UTF-8 bytes.
///
/// # Errors
/// TypeError for an invalid conversion, ReferenceError for a missing
/// argument (quickjs-libc's messages), RangeError for an absurd width, and
/// whatever converting an argument throws.
pub fn format<'js>(ctx: &Ctx<'js>, args: &[Value<'js>]) -> rquickjs::Result<Vec<u8>> {
    let mut out = Vec::new();
    let Some(fmt) = args.first() else {
        return Ok(out);
    };
    let fmt = util::to_string(ctx, fmt).ok_or(rquickjs::Error::Exception)?;
    let fmt = fmt.as_bytes();
    let mut next = 1;
    let mut p = 0;
    while p < fmt.len() {
        let start = p;
        while p < fmt.len() && fmt[p] != b'%' {
            p += 1;
        }
        out.extend_from_slice(&fmt[start..p]);
        if p >= fmt.len() {
            break;
        }
        p += 1;
        let mut spec = vec![b'%'];
        while let Some(&c) = fmt.get(p).filter(|c| b"0#+- '".contains(c)) {
            spec.push(c);
            p += 1;
        }
        p = width(ctx, fmt, p, args, &mut next, &mut spec)?;
        if fmt.get(p) == Some(&b'.') {
            spec.push(b'.');
            p = width(ctx, fmt, p + 1, args, &mut next, &mut spec)?;
        }
        let long = fmt.get(p) == Some(&b'l');
        if long {
            p += 1;
        }
        let Some(&conv) = fmt.get(p) else {
            return Err(invalid(ctx));
        };
        p += 1;
        if spec.len() > MAX_SPEC {
            return Err(invalid(ctx));
        }
        match conv {
            b'%' => out.push(b'%'),
            b'c' => {
                let arg = take(ctx, args, &mut next)?;
                let code = if arg.is_string() {
                    util::string_lossy(ctx, &arg)
                        .chars()
                        .next()
                        .map_or(0, u32::from)
                } else {
                    arg.get::<Coerced<i32>>()?.0 as u32
                };
                let c = char::from_u32(code).unwrap_or('\u{FFFD}');
                out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            }
            b'd' | b'i' | b'o' | b'u' | b'x' | b'X' => {
                let v = take(ctx, args, &mut next)?.get::<Coerced<i64>>()?.0;
                if long {
                    spec.extend_from_slice(b"ll");
                    spec.push(conv);
                    render(&mut out, spec, Arg::Long(v))?;
                } else {
                    spec.push(conv);
                    // C's `(int)` truncation, as quickjs-libc does.
                    render(&mut out, spec, Arg::Int(v as i32))?;
                }
            }
            b's' => {
                let arg = take(ctx, args, &mut next)?;
                let s = util::to_string(ctx, &arg).ok_or(rquickjs::Error::Exception)?;
                // C strings end at the first NUL, as in quickjs-libc.
                let s = s.split('\0').next().unwrap_or_default();
                let s = CString::new(s).unwrap_or_default();
                spec.push(b's');
                render(&mut out, spec, Arg::Str(&s))?;
            }
            b'e' | b'f' | b'g' | b'a' | b'E' | b'F' | b'G' | b'A' => {
                let v = take(ctx, args, &mut next)?.get::<Coerced<f64>>()?.0;
                spec.push(conv);
                render(&mut out, spec, Arg::Double(v))?;
            }
            _ => return Err(invalid(ctx)),
        }
    }
    Ok(out)
}

/// Parse a width or precision at `p` (digits, or `*` taking an argument)
/// into `spec`; returns the position after it.
fn width<'js>(
    ctx: &Ctx<'js>,
    fmt: &[u8],
    mut p: usize,
    args: &[Value<'js>],
    next: &mut usize,
    spec: &mut Vec<u8>,
) -> rquickjs::Result<usize> {
    let value = if fmt.get(p) == Some(&b'*') {
        p += 1;
        let v = take(ctx, args, next)?.get::<Coerced<i32>>()?.0;
        spec.extend_from_slice(v.to_string().as_bytes());
        i64::from(v)
    } else {
        let start = p;
        while fmt.get(p).is_some_and(u8::is_ascii_digit) {
            p += 1;
        }
        let digits = &fmt[start..p];
        if digits.len() > MAX_SPEC {
            return Err(invalid(ctx));
        }
        spec.extend_from_slice(digits);
        std::str::from_utf8(digits)
            .ok()
            .and_then(|d| d.parse::<i64>().ok())
            .unwrap_or(0)
    };
    if value.abs() > MAX_WIDTH {
        return Err(Exception::throw_range(
            ctx,
            "printf: width or precision too large",
        ));
    }
    Ok(p)
}

fn take<'js>(
    ctx: &Ctx<'js>,
    args: &[Value<'js>],
    next: &mut usize,
) -> rquickjs::Result<Value<'js>> {
    let Some(v) = args.get(*next) else {
        return Err(Exception::throw_reference(
            ctx,
            "missing argument for conversion specifier",
        ));
    };
    *next += 1;
    Ok(v.clone())
}

fn invalid(ctx: &Ctx<'_>) -> rquickjs::Error {
    Exception::throw_type(ctx, "invalid conversion specifier in format string")
}

/// Append the `snprintf` rendering of one conversion to `out`.
fn render(out: &mut Vec<u8>, spec: Vec<u8>, arg: Arg<'_>) -> rquickjs::Result<()> {
    let spec = CString::new(spec).map_err(|_| rquickjs::Error::Unknown)?;
    // First ask for the length, then render into a buffer of that size.
    let needed = snprintf(std::ptr::null_mut(), 0, &spec, &arg);
    let Ok(needed) = usize::try_from(needed) else {
        return Ok(()); // C reports an encoding error; print nothing, like C
    };
    let mut buf = vec![0u8; needed + 1];
    snprintf(buf.as_mut_ptr().cast(), buf.len(), &spec, &arg);
    buf.truncate(needed);
    out.extend_from_slice(&buf);
    Ok(())
}

fn snprintf(buf: *mut c_char, len: usize, spec: &CString, arg: &Arg<'_>) -> c_int {
    // SAFETY: `spec` is a NUL-terminated format holding exactly one
    // conversion, built by `format` from a fixed alphabet (flags, digits,
    // '.', an optional "ll", one conversion letter; never '*' or '$'), and
    // `arg` has the C type that conversion reads: c_int for d/i/o/u/x/X,
    // c_longlong for the "ll" forms, c_double for e/f/g/a, and a
    // NUL-terminated string for s. `buf` is either null with `len` 0 (a
    // length query) or valid for `len` writable bytes.
    unsafe {
        match arg {
            Arg::Int(v) => libc::snprintf(buf, len, spec.as_ptr(), *v),
            Arg::Long(v) => libc::snprintf(buf, len, spec.as_ptr(), *v),
            Arg::Double(v) => libc::snprintf(buf, len, spec.as_ptr(), *v),
            Arg::Str(s) => libc::snprintf(buf, len, spec.as_ptr(), s.as_ptr()),
        }
    }
}
