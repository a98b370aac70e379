//! Small helpers shared by the other modules: lossless-enough conversion of
//! JS values to Rust strings, JSON string escaping for the result document,
//! and length capping. Nothing here runs user JavaScript except `to_string`
//! (which applies ToString and may call a user `toString`).

use rquickjs::{Ctx, Value, qjs};

/// Longest value repr / message / stack we hand back, in chars. Bounds the
/// result document no matter what the cell produced.
pub const MAX_TEXT: usize = 10_000;

/// ToString(`v`) as a Rust string. Lone surrogates and other bytes that are
/// not valid UTF-8 become U+FFFD rather than failing. Returns `None` if
/// ToString threw (the exception is left pending for the caller to catch).
pub fn to_string(ctx: &Ctx<'_>, v: &Value<'_>) -> Option<String> {
    if v.is_string() {
        return Some(string_lossy(ctx, v));
    }
    // SAFETY: `ctx` is the live context `v` belongs to; JS_ToCStringLen applies
    // ToString, returns a NUL-terminated buffer of `len` bytes that we copy and
    // release with JS_FreeCString, or NULL with an exception pending.
    unsafe {
        let mut len = 0;
        let p = qjs::JS_ToCStringLen(ctx.as_raw().as_ptr(), &mut len, v.as_raw());
        if p.is_null() {
            return None;
        }
        let bytes = std::slice::from_raw_parts(p as *const u8, len);
        let s = wtf8_lossy(bytes);
        qjs::JS_FreeCString(ctx.as_raw().as_ptr(), p);
        Some(s)
    }
}

/// A JS string value as a Rust string (lossy for lone surrogates). Callers
/// must pass a string; anything else yields a placeholder.
pub fn string_lossy(ctx: &Ctx<'_>, v: &Value<'_>) -> String {
    if !v.is_string() {
        return String::from("[not a string]");
    }
    let raw = v.as_raw();
    // SAFETY: `raw` is a string value owned by a live Value in `ctx`; for a
    // string JS_ToCStringLen cannot run user code. The buffer is copied and
    // freed before returning. NULL only on allocation failure.
    unsafe {
        let mut len = 0;
        let p = qjs::JS_ToCStringLen(ctx.as_raw().as_ptr(), &mut len, raw);
        if p.is_null() {
            // Out of memory while converting: drop the pending exception so
            // it does not leak into the next operation.
            let _ = ctx.catch();
            return String::from("[string conversion failed: out of memory]");
        }
        let bytes = std::slice::from_raw_parts(p as *const u8, len);
        let s = wtf8_lossy(bytes);
        qjs::JS_FreeCString(ctx.as_raw().as_ptr(), p);
        s
    }
}

/// QuickJS encodes a lone UTF-16 surrogate as its 3-byte generalized UTF-8
/// form (`ED A0..BF 80..BF`), which is not valid UTF-8. Turn each such
/// sequence into one U+FFFD (as Node does) instead of three, then decode the
/// rest lossily.
fn wtf8_lossy(bytes: &[u8]) -> String {
    if std::str::from_utf8(bytes).is_ok() {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let mut fixed = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == 0xED
            && i + 2 < bytes.len()
            && (0xA0..=0xBF).contains(&bytes[i + 1])
            && (0x80..=0xBF).contains(&bytes[i + 2])
        {
            fixed.extend_from_slice("\u{FFFD}".as_bytes());
            i += 3;
        } else {
            fixed.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&fixed).into_owned()
}

/// Truncate `s` to at most `max` chars, marking the cut so nobody mistakes a
/// capped value for the real one.
pub fn cap(mut s: String, max: usize) -> String {
    if let Some((idx, _)) = s.char_indices().nth(max) {
        let dropped = s[idx..].chars().count();
        s.truncate(idx);
        s.push_str(&format!("… [{dropped} more characters]"));
    }
    s
}

/// Append `s` to `out` as a JSON string literal.
pub fn push_json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}
