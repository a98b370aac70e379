//! `sort`: keys (`-k N[,M]` with per-key flags), separators, numeric and human-numeric order,
//! case folding, reverse, unique and stable sorts, as coreutils does them. It reads all of its
//! input (at most [`MAX_READ`](crate::shell::exec::MAX_READ) bytes per input).

use std::cmp::Ordering;

use super::args::{Opts, opts};
use super::io::{lines, read_input, write_file};
use crate::shell::exec::{Abort, Ctx};

/// One `-k` key of sort.
#[derive(Debug, Clone, Default)]
struct Key {
    start: usize,
    end: Option<usize>,
    numeric: bool,
    human: bool,
    reverse: bool,
    fold: bool,
    blanks: bool,
}

/// The fields of a line: with a separator, split on it; without, each field starts with the blanks
/// before it (coreutils' rule, which matters for string keys without `-b`).
fn fields(line: &[u8], sep: Option<u8>) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    match sep {
        Some(s) => {
            let mut start = 0;
            for (i, &b) in line.iter().enumerate() {
                if b == s {
                    out.push((start, i));
                    start = i + 1;
                }
            }
            out.push((start, line.len()));
        }
        None => {
            let mut i = 0;
            while i < line.len() {
                let start = i;
                while i < line.len() && matches!(line[i], b' ' | b'\t') {
                    i += 1;
                }
                while i < line.len() && !matches!(line[i], b' ' | b'\t') {
                    i += 1;
                }
                out.push((start, i));
            }
        }
    }
    out
}

fn key_slice<'l>(line: &'l [u8], key: &Key, sep: Option<u8>) -> &'l [u8] {
    let f = fields(line, sep);
    let Some(&(start, _)) = f.get(key.start.saturating_sub(1)) else {
        return &[];
    };
    let end = match key.end {
        Some(e) => f
            .get(e.saturating_sub(1))
            .map_or(line.len(), |&(_, end)| end),
        None => line.len(),
    };
    let mut s = &line[start..end.max(start)];
    if key.blanks {
        while let [b' ' | b'\t', rest @ ..] = s {
            s = rest;
        }
    }
    s
}

/// The leading number of `s` (after blanks) as `sort -n` reads it; 0 when there is none.
fn leading_number(s: &[u8]) -> f64 {
    let text = String::from_utf8_lossy(s);
    let t = text.trim_start();
    let mut end = 0;
    let b = t.as_bytes();
    if end < b.len() && (b[end] == b'-' || b[end] == b'+') {
        end += 1;
    }
    while end < b.len() && b[end].is_ascii_digit() {
        end += 1;
    }
    if end < b.len() && b[end] == b'.' {
        end += 1;
        while end < b.len() && b[end].is_ascii_digit() {
            end += 1;
        }
    }
    t[..end].parse().unwrap_or(0.0)
}

/// `sort -h`: a number with an optional K/M/G/T/P/E suffix.
fn human_number(s: &[u8]) -> f64 {
    let n = leading_number(s);
    let text = String::from_utf8_lossy(s);
    let t = text.trim_start().trim_start_matches(['-', '+']);
    let suffix = t
        .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.')
        .chars()
        .next();
    let power = match suffix {
        Some('K' | 'k') => 1,
        Some('M') => 2,
        Some('G') => 3,
        Some('T') => 4,
        Some('P') => 5,
        Some('E') => 6,
        _ => 0,
    };
    n * 1024f64.powi(power)
}

fn compare_key(a: &[u8], b: &[u8], key: &Key) -> Ordering {
    let ord = if key.numeric || key.human {
        let f = if key.human {
            human_number
        } else {
            leading_number
        };
        f(a).partial_cmp(&f(b)).unwrap_or(Ordering::Equal)
    } else if key.fold {
        a.to_ascii_uppercase().cmp(&b.to_ascii_uppercase())
    } else {
        a.cmp(b)
    };
    if key.reverse { ord.reverse() } else { ord }
}

fn parse_key(spec: &str, global: &Key) -> Option<Key> {
    let mut key = Key {
        numeric: global.numeric,
        human: global.human,
        reverse: global.reverse,
        fold: global.fold,
        blanks: global.blanks,
        ..Key::default()
    };
    let (start, end) = match spec.split_once(',') {
        Some((s, e)) => (s, Some(e)),
        None => (spec, None),
    };
    let split_opts = |s: &str| -> Option<(usize, String)> {
        let digits: String = s
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let field = digits.split('.').next()?.parse().ok()?;
        Some((field, s[digits.len()..].to_string()))
    };
    let (start, mut flags) = split_opts(start)?;
    if start == 0 {
        return None;
    }
    key.start = start;
    if let Some(e) = end {
        let (e, more) = split_opts(e)?;
        key.end = Some(e);
        flags.push_str(&more);
    }
    if !flags.is_empty() {
        key.numeric = false;
        key.human = false;
        key.reverse = false;
        key.fold = false;
        key.blanks = false;
    }
    for c in flags.chars() {
        match c {
            'n' => key.numeric = true,
            'h' => key.human = true,
            'r' => key.reverse = true,
            'f' => key.fold = true,
            'b' => key.blanks = true,
            _ => return None,
        }
    }
    Some(key)
}

/// How lines compare: by the keys (or the whole line), then as whole lines unless `-s`/`-u`.
struct Order {
    global: Key,
    keys: Vec<Key>,
    sep: Option<u8>,
    /// Equal keys keep the input order (`-s`, and `-u` which keeps the first).
    stable: bool,
}

impl Order {
    /// The order the options ask for; `None` after the message.
    fn of(ctx: &mut Ctx<'_, '_>, o: &Opts) -> Option<Self> {
        let global = Key {
            start: 1,
            end: None,
            numeric: o.has('n'),
            human: o.has('h'),
            reverse: o.has('r'),
            fold: o.has('f'),
            blanks: o.has('b'),
        };
        let sep = match o.value('t') {
            None => None,
            Some("\\t") => Some(b'\t'),
            Some(t) if t.len() == 1 => Some(t.as_bytes()[0]),
            Some(t) => {
                ctx.warn(format_args!("multi-character tab '{t}'"));
                return None;
            }
        };
        let mut keys = Vec::new();
        for spec in o.values('k') {
            let Some(k) = parse_key(spec, &global) else {
                ctx.warn(format_args!("invalid key specification '{spec}'"));
                return None;
            };
            keys.push(k);
        }
        Some(Self {
            global,
            keys,
            sep,
            stable: o.has('u') || o.has('s'),
        })
    }

    fn by_keys(&self, a: &[u8], b: &[u8]) -> Ordering {
        if self.keys.is_empty() {
            return compare_key(a, b, &self.global);
        }
        let by = |k: &Key| compare_key(key_slice(a, k, self.sep), key_slice(b, k, self.sep), k);
        self.keys
            .iter()
            .map(by)
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        self.by_keys(a, b)
            .then_with(|| match (self.stable, self.global.reverse) {
                (true, _) => Ordering::Equal,
                (false, true) => b.cmp(a),
                (false, false) => a.cmp(b),
            })
    }
}

pub(super) fn sort(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let longs = "reverse=r numeric-sort=n unique=u ignore-case=f key=k field-separator=t \
        human-numeric-sort=h output=o stable=s";
    let Some(o) = opts(ctx, args, "rnufbshk:t:o:", longs) else {
        return Ok(2);
    };
    let Some(order) = Order::of(ctx, &o) else {
        return Ok(2);
    };
    let mut data = Vec::new();
    for f in o.operands_or("-") {
        ctx.check()?;
        let Some(d) = read_input(ctx, &f) else {
            return Ok(2);
        };
        data.extend_from_slice(&d);
        if !data.is_empty() && !data.ends_with(b"\n") {
            data.push(b'\n');
        }
    }
    let mut all = lines(&data);
    all.sort_by(|a, b| order.compare(a, b));
    ctx.check()?;
    if o.has('u') {
        all.dedup_by(|b, a| order.by_keys(a, b).is_eq());
    }
    let mut out = Vec::with_capacity(data.len());
    for l in all {
        out.extend_from_slice(l);
        out.push(b'\n');
    }
    let Some(path) = o.value('o') else {
        ctx.out(&out);
        return Ok(0);
    };
    if let Err(e) = write_file(ctx, path, &out) {
        ctx.fail(format_args!("cannot create '{path}'"), &e);
        return Ok(2);
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::shell::tests::Sandbox;

    #[test]
    fn sort_and_uniq() {
        let mut s = Sandbox::new();
        s.write("f", "b 2\na 10\nc 1\na 10\n");
        assert_eq!(s.ok("sort f"), "a 10\na 10\nb 2\nc 1\n");
        assert_eq!(s.ok("sort -r f"), "c 1\nb 2\na 10\na 10\n");
        assert_eq!(s.ok("sort -u f"), "a 10\nb 2\nc 1\n");
        assert_eq!(s.ok("sort -k2 -n f"), "c 1\nb 2\na 10\na 10\n");
        assert_eq!(s.ok("sort -k 2nr f"), "a 10\na 10\nb 2\nc 1\n");
        assert_eq!(
            s.ok("printf '3,x\n1,y\n2,z\n' | sort -t, -k1,1n"),
            "1,y\n2,z\n3,x\n"
        );
        assert_eq!(s.ok("printf '10\n9\n-1\nx\n' | sort -n"), "-1\nx\n9\n10\n");
        assert_eq!(s.ok("printf 'B\na\nC\n' | sort"), "B\nC\na\n");
        assert_eq!(s.ok("printf 'B\na\nC\n' | sort -f"), "a\nB\nC\n");
        assert_eq!(s.ok("printf '1K\n2M\n512\n' | sort -h"), "512\n1K\n2M\n");
        assert_eq!(s.ok("sort f -o sorted; cat sorted | head -n 1"), "a 10\n");
        assert_eq!(s.ok("sort f | uniq"), "a 10\nb 2\nc 1\n");
        assert_eq!(
            s.ok("sort f | uniq -c"),
            "      2 a 10\n      1 b 2\n      1 c 1\n"
        );
        assert_eq!(s.ok("sort f | uniq -d"), "a 10\n");
        assert_eq!(s.ok("sort f | uniq -u"), "b 2\nc 1\n");
        assert_eq!(s.ok("printf 'a\nA\nb\n' | uniq -i"), "a\nb\n");
        assert_eq!(s.sh("sort -k 0 f").2, 2);
    }

    #[test]
    fn sort_fields_keep_leading_blanks() {
        assert_eq!(fields(b"a  b c", None), vec![(0, 1), (1, 4), (4, 6)]);
        assert_eq!(fields(b"a,,b", Some(b',')), vec![(0, 1), (2, 2), (3, 4)]);
        let k = parse_key("2,2n", &Key::default()).unwrap();
        assert!(k.numeric && k.start == 2 && k.end == Some(2));
        assert_eq!(key_slice(b"x  10 y", &k, None), b"  10");
        assert!(parse_key("0", &Key::default()).is_none());
        assert_eq!(leading_number(b"  -3.5abc"), -3.5);
        assert_eq!(leading_number(b"abc"), 0.0);
        assert_eq!(human_number(b"2K"), 2048.0);
    }
}
