//! `tr`: translate, squeeze (`-s`) and delete (`-d`) bytes of stdin, with sets written as
//! coreutils reads them: escapes, ranges, `[:class:]`es and the complement (`-c`).

use super::args::opts;
use super::io::{Unit, read_each};
use super::printf::control_escape;
use crate::shell::exec::{Abort, Ctx};

/// The bytes of a `[:class:]` of `tr`.
fn class_members(class: &[u8]) -> Option<impl Iterator<Item = u8>> {
    let member: fn(&u8) -> bool = match class {
        b"alpha" => u8::is_ascii_alphabetic,
        b"digit" => u8::is_ascii_digit,
        b"alnum" => u8::is_ascii_alphanumeric,
        b"lower" => u8::is_ascii_lowercase,
        b"upper" => u8::is_ascii_uppercase,
        b"space" => |c| c.is_ascii_whitespace() || *c == 11,
        b"blank" => |c| *c == b' ' || *c == b'\t',
        b"punct" => u8::is_ascii_punctuation,
        b"xdigit" => u8::is_ascii_hexdigit,
        b"cntrl" => u8::is_ascii_control,
        b"print" => |c| (32..127).contains(c),
        b"graph" => u8::is_ascii_graphic,
        _ => return None,
    };
    Some((0..=255u8).filter(move |c| member(c)))
}

/// The items of a `tr` set before ranges are expanded: each byte, and whether it was written
/// escaped or came from a class (neither can be part of a range: `a\-z` is three bytes).
fn tr_items(spec: &str) -> Result<Vec<(u8, bool)>, String> {
    let b = spec.as_bytes();
    let mut items = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let class = b[i..]
            .strip_prefix(b"[:")
            .and_then(|r| Some(&r[..r.windows(2).position(|w| w == b":]")?]));
        if b[i] == b'\\' && i + 1 < b.len() {
            let octal = b[i + 1..]
                .iter()
                .take(3)
                .take_while(|c| (b'0'..=b'7').contains(c))
                .count();
            let value = b[i + 1..i + 1 + octal]
                .iter()
                .fold(0u32, |v, d| v * 8 + u32::from(d - b'0'));
            let byte = match b[i + 1] {
                _ if octal > 0 => u8::try_from(value).unwrap_or(255),
                other => control_escape(other).unwrap_or(other),
            };
            items.push((byte, true));
            i += 1 + octal.max(1);
        } else if let Some(class) = class {
            let name = String::from_utf8_lossy(class);
            let members =
                class_members(class).ok_or_else(|| format!("invalid character class '{name}'"))?;
            items.extend(members.map(|c| (c, true)));
            i += class.len() + 4;
        } else {
            items.push((b[i], false));
            i += 1;
        }
    }
    Ok(items)
}

/// A `tr` set expanded to bytes: escapes, ranges and `[:class:]`es.
fn tr_set(spec: &str) -> Result<Vec<u8>, String> {
    let items = tr_items(spec)?;
    let mut out = Vec::new();
    let mut j = 0;
    while j < items.len() {
        let lo = items[j].0;
        match items.get(j + 1..j + 3) {
            Some(&[(b'-', false), (hi, _)]) => {
                if hi < lo {
                    let (lo, hi) = (char::from(lo), char::from(hi));
                    return Err(format!(
                        "range-endpoints of '{lo}-{hi}' are in reverse collating sequence order"
                    ));
                }
                out.extend(lo..=hi);
                j += 3;
            }
            _ => {
                out.push(lo);
                j += 1;
            }
        }
    }
    Ok(out)
}

pub(super) fn tr(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = opts(ctx, args, "dscC", "delete=d squeeze-repeats=s complement=c") else {
        return Ok(1);
    };
    let (delete, squeeze, complement) = (o.has('d'), o.has('s'), o.has('c') || o.has('C'));
    let need = if delete != squeeze { 1 } else { 2 };
    if o.operands.len() < need {
        ctx.warn("missing operand");
        return Ok(1);
    }
    if o.operands.len() > 2 || (delete && !squeeze && o.operands.len() > 1) {
        ctx.warn(format_args!(
            "extra operand '{}'",
            o.operands.last().map_or("", String::as_str)
        ));
        return Ok(1);
    }
    let mut sets = match o
        .operands
        .iter()
        .map(|s| tr_set(s))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(s) => s,
        Err(e) => {
            ctx.warn(e);
            return Ok(1);
        }
    };
    if complement {
        sets[0] = (0..=255u8).filter(|c| !sets[0].contains(c)).collect();
    }
    let member = |set: &[u8]| {
        let mut table = [false; 256];
        set.iter().for_each(|&c| table[usize::from(c)] = true);
        table
    };
    let in1 = member(&sets[0]);
    // The set whose repeats -s squeezes: the last set given.
    let squeezed = member(if squeeze {
        sets.last().map_or(&[][..], Vec::as_slice)
    } else {
        &[]
    });
    let mut map: [u8; 256] = std::array::from_fn(|i| i as u8);
    if !delete && sets.len() == 2 {
        let Some(&last) = sets[1].last() else {
            ctx.warn("when not truncating set1, string2 must be non-empty");
            return Ok(1);
        };
        for (i, &c) in sets[0].iter().enumerate() {
            map[usize::from(c)] = *sets[1].get(i).unwrap_or(&last);
        }
    }
    let mut last: Option<u8> = None;
    read_each(ctx, "-", Unit::Chunk, |ctx, chunk| {
        let mut out = Vec::with_capacity(chunk.len());
        for &c in chunk {
            if delete && in1[usize::from(c)] {
                continue;
            }
            let c = map[usize::from(c)];
            if !(squeezed[usize::from(c)] && last == Some(c)) {
                out.push(c);
            }
            last = Some(c);
        }
        ctx.out(&out)
    })?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tr_sets() {
        assert_eq!(tr_set("a-e").unwrap(), b"abcde");
        assert_eq!(tr_set("\\n\\t\\\\").unwrap(), b"\n\t\\");
        assert_eq!(tr_set("[:digit:]").unwrap(), b"0123456789");
        assert_eq!(tr_set("a\\-z").unwrap(), b"a-z");
        assert!(tr_set("z-a").is_err());
        assert!(tr_set("[:nope:]").is_err());
    }
}
