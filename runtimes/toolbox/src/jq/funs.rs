//! The native filters jq 1.6 has and jaq has not, or has otherwise: `tostring`/`tojson` with
//! jq's number forms, regexes (`_jq_match`, under `test`, `match`, `capture`, `scan`, `split`,
//! `sub`, `gsub` in `defs.jq`) with the `regex` crate and jq's flags and match objects, the
//! `@format`s, `input_filename`, `input_line_number`, `debug`, `stderr`, `halt` and
//! `halt_error` as jq writes them.

use std::cell::RefCell;
use std::io::Write;

use jaq_core::box_iter::box_once;
use jaq_core::{Bind, Error, Exn, Native, ValT, ValXs};
use jaq_std::{Filter, run, v};

use super::print::{self, Style, type_name};
use super::value::Val;

thread_local! {
    /// Where the last input came from (`None`: stdin) and the line it ended on.
    pub static POSITION: RefCell<(Option<String>, usize, bool)> = const {
        RefCell::new((None, 0, false))
    };
    /// Output not yet written (`halt` and `halt_error` write it before they exit).
    pub static OUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Writes what is buffered to stdout.
pub fn flush() -> bool {
    OUT.with(|out| {
        let mut out = out.borrow_mut();
        let ok = std::io::stdout().write_all(&out).is_ok();
        out.clear();
        ok && std::io::stdout().flush().is_ok()
    })
}

/// Appends to the output, writing it out past 64 KiB.
pub fn write_out(bytes: &[u8]) -> bool {
    let full = OUT.with(|out| {
        let mut out = out.borrow_mut();
        out.extend_from_slice(bytes);
        out.len() > 1 << 16
    });
    !full || flush()
}

fn once<'a>(r: Result<Val, Error<Val>>) -> ValXs<'a, Val> {
    box_once(r.map_err(Exn::from))
}

fn err(msg: String) -> Error<Val> {
    Error::new(Val::from(msg))
}

/// jq's `tostring`: a string as it is, anything else as compact JSON.
pub fn to_string(v: &Val) -> String {
    match v {
        Val::Str(s) => s.to_string(),
        v => print::value(v, Style::COMPACT),
    }
}

/// The natives, by jq's names or `_jq_` ones that `defs.jq` wraps.
pub fn natives() -> Vec<Filter<Native<Val>>> {
    let vv = || -> Box<[Bind]> { Box::new([Bind::Var(()), Bind::Var(()), Bind::Var(())]) };
    let list: Vec<Filter<jaq_core::RunPtr<Val>>> = vec![
        ("_jq_tostring", v(0), |_, cv| {
            once(Ok(Val::from(to_string(&cv.1))))
        }),
        ("_jq_tojson", v(0), |_, cv| {
            once(Ok(Val::from(print::value(&cv.1, Style::COMPACT))))
        }),
        ("_jq_format", v(1), |_, mut cv| {
            let name = cv.0.pop_var();
            once(format(&to_string(&name), &cv.1))
        }),
        ("_jq_match", vv(), |_, mut cv| {
            let test = cv.0.pop_var();
            let flags = cv.0.pop_var();
            let re = cv.0.pop_var();
            once(regex_match(
                &cv.1,
                &re,
                &flags,
                matches!(test, Val::Bool(true)),
            ))
        }),
        ("input_filename", v(0), |_, _| {
            once(Ok(
                POSITION.with(|p| p.borrow().0.clone().map_or(Val::Null, Val::from))
            ))
        }),
        ("input_line_number", v(0), |_, _| {
            once(Ok(Val::Int(POSITION.with(|p| p.borrow().1) as isize)))
        }),
        ("_jq_debug", v(0), |_, cv| {
            let text = print::value(&cv.1, Style::COMPACT);
            eprintln!("[\"DEBUG:\",{text}]");
            once(Ok(cv.1))
        }),
        ("_jq_stderr", v(0), |_, cv| {
            eprint!("{}", print::value(&cv.1, Style::COMPACT));
            once(Ok(cv.1))
        }),
        ("setpath", v(2), |_, mut cv| {
            let value = cv.0.pop_var();
            let path = cv.0.pop_var();
            once(match &path {
                Val::Arr(p) => set_path(cv.1, p, value),
                _ => Err(err("Path must be specified as an array".into())),
            })
        }),
        ("delpaths", v(1), |_, mut cv| {
            let paths = cv.0.pop_var();
            let Val::Arr(paths) = paths else {
                return once(Err(err("Paths must be specified as an array".into())));
            };
            let mut paths: Vec<Val> = paths.iter().cloned().collect();
            paths.sort();
            let mut v = cv.1;
            for p in paths.iter().rev() {
                let Val::Arr(p) = p else {
                    return once(Err(err("Path must be specified as an array".into())));
                };
                v = match del_path(v, p) {
                    Ok(v) => v,
                    Err(e) => return once(Err(e)),
                };
            }
            once(Ok(v))
        }),
        ("_jq_infinite", v(0), |_, _| {
            once(Ok(Val::Float(f64::INFINITY)))
        }),
        ("_jq_nan", v(0), |_, _| once(Ok(Val::Float(f64::NAN)))),
        ("_jq_isnan", v(0), |_, cv| {
            once(Ok(Val::Bool(print::as_f64(&cv.1).is_some_and(f64::is_nan))))
        }),
        ("_jq_tostream", v(0), |_, cv| {
            let mut events = Vec::new();
            stream(&cv.1, &mut Vec::new(), &mut events);
            once(Ok(events.into_iter().collect()))
        }),
        // What jaq-std's definitions call: the formats under its names, and the rest
        // (hidden by defs.jq or not jq 1.6's) failing if ever reached.
        ("debug", v(0), |_, cv| {
            eprintln!("[\"DEBUG:\",{}]", print::value(&cv.1, Style::COMPACT));
            once(Ok(cv.1))
        }),
        ("escape_html", v(0), |_, cv| once(format("html", &cv.1))),
        ("escape_tsv", v(0), |_, cv| once(format("tsv", &cv.1))),
        ("encode_uri", v(0), |_, cv| once(format("uri", &cv.1))),
        ("decode_uri", v(0), |_, cv| once(format("urid", &cv.1))),
        ("encode_base64", v(0), |_, cv| once(format("base64", &cv.1))),
        ("decode_base64", v(0), |_, cv| {
            once(format("base64d", &cv.1))
        }),
        ("todateiso8601", v(0), |_, _| {
            once(Err(err("todateiso8601: see todate".into())))
        }),
        ("fromdateiso8601", v(0), |_, _| {
            once(Err(err("fromdateiso8601: see fromdate".into())))
        }),
        ("ilogb", v(0), |_, _| {
            once(Err(err("ilogb is not defined".into())))
        }),
        ("tgamma", v(0), |_, _| {
            once(Err(err("tgamma is not defined".into())))
        }),
        ("nextafter", v(2), |_, _| {
            once(Err(err("nextafter is not defined".into())))
        }),
        ("remainder", v(2), |_, _| {
            once(Err(err("remainder is not defined".into())))
        }),
        ("matches", v(2), |_, _| {
            once(Err(err("matches is not defined".into())))
        }),
        ("split_", v(2), |_, _| {
            once(Err(err("split_ is not defined".into())))
        }),
        ("split_matches", v(2), |_, _| {
            once(Err(err("split_matches is not defined".into())))
        }),
        ("halt", v(0), |_, _| {
            flush();
            std::process::exit(0)
        }),
        ("halt_error", v(1), |_, mut cv| {
            let code = cv.0.pop_var();
            let Some(code) = print::as_f64(&code) else {
                return once(Err(err("halt_error/1: number required".into())));
            };
            flush();
            match &cv.1 {
                Val::Str(s) => eprint!("{s}"),
                v => eprintln!("{}", print::value(v, Style::COMPACT)),
            }
            std::process::exit(code as i32)
        }),
    ];
    list.into_iter().map(run).collect()
}

fn index_error(v: &Val, key: &Val) -> Error<Val> {
    err(match key {
        Val::Str(k) => format!("Cannot index {} with string \"{k}\"", type_name(v)),
        k => format!("Cannot index {} with {}", type_name(v), type_name(k)),
    })
}

/// jq's `setpath`: `v` with `value` at `path`, making objects and arrays (padded with nulls)
/// on the way.
fn set_path(v: Val, path: &[Val], value: Val) -> Result<Val, Error<Val>> {
    use std::rc::Rc;
    let Some((key, rest)) = path.split_first() else {
        return Ok(value);
    };
    match (v, key) {
        (Val::Null, Val::Str(k)) => {
            let inner = set_path(Val::Null, rest, value)?;
            Ok(Val::from_map([(Val::Str(k.clone()), inner)])?)
        }
        (Val::Obj(mut o), Val::Str(k)) => {
            let old = o.get(k).cloned().unwrap_or(Val::Null);
            let inner = set_path(old, rest, value)?;
            Rc::make_mut(&mut o).insert(k.clone(), inner);
            Ok(Val::Obj(o))
        }
        (v @ (Val::Null | Val::Arr(_)), k @ (Val::Int(_) | Val::Float(_) | Val::Num(_))) => {
            let mut a: Vec<Val> = match v {
                Val::Arr(a) => a.iter().cloned().collect(),
                _ => Vec::new(),
            };
            let i = print::as_f64(k).unwrap_or(0.0) as isize;
            let i = if i < 0 { a.len() as isize + i } else { i };
            if i < 0 {
                return Err(err("Out of bounds negative array index".into()));
            }
            let i = i as usize;
            if i >= a.len() {
                a.resize(i + 1, Val::Null);
            }
            let inner = set_path(std::mem::take(&mut a[i]), rest, value)?;
            a[i] = inner;
            Ok(a.into_iter().collect())
        }
        (v, k) => Err(index_error(&v, k)),
    }
}

/// jq's deletion of one path (nothing when it is not there).
fn del_path(v: Val, path: &[Val]) -> Result<Val, Error<Val>> {
    use std::rc::Rc;
    let Some((key, rest)) = path.split_first() else {
        return Ok(Val::Null);
    };
    match (v, key) {
        (Val::Null, _) => Ok(Val::Null),
        (Val::Obj(mut o), Val::Str(k)) => {
            if rest.is_empty() {
                Rc::make_mut(&mut o).shift_remove(k);
            } else if let Some(inner) = o.get(k).cloned() {
                let inner = del_path(inner, rest)?;
                Rc::make_mut(&mut o).insert(k.clone(), inner);
            }
            Ok(Val::Obj(o))
        }
        (Val::Arr(a), k @ (Val::Int(_) | Val::Float(_) | Val::Num(_))) => {
            let mut a: Vec<Val> = a.iter().cloned().collect();
            let i = print::as_f64(k).unwrap_or(0.0) as isize;
            let i = if i < 0 { a.len() as isize + i } else { i };
            if i < 0 || i as usize >= a.len() {
                return Ok(a.into_iter().collect());
            }
            let i = i as usize;
            if rest.is_empty() {
                a.remove(i);
            } else {
                a[i] = del_path(std::mem::take(&mut a[i]), rest)?;
            }
            Ok(a.into_iter().collect())
        }
        (v, k) => Err(index_error(&v, k)),
    }
}

/// `tostream`'s events for `v` at `path`: `[path, leaf]` for each leaf, and `[path]` after
/// the last element of an array or object.
pub fn stream(v: &Val, path: &mut Vec<Val>, out: &mut Vec<Val>) {
    let children: Vec<(Val, &Val)> = match v {
        Val::Arr(a) => (a.iter().enumerate())
            .map(|(i, x)| (Val::Int(i as isize), x))
            .collect(),
        Val::Obj(o) => o.iter().map(|(k, x)| (Val::Str(k.clone()), x)).collect(),
        _ => Vec::new(),
    };
    if children.is_empty() {
        let p: Val = path.iter().cloned().collect();
        out.push([p, v.clone()].into_iter().collect());
    } else {
        let n = children.len();
        for (i, (k, x)) in children.into_iter().enumerate() {
            path.push(k);
            stream(x, path, out);
            if i + 1 == n {
                let p: Val = path.iter().cloned().collect();
                out.push([p].into_iter().collect());
            }
            path.pop();
        }
    }
}

/// The `@name` formats of jq 1.6.
fn format(name: &str, v: &Val) -> Result<Val, Error<Val>> {
    let text = || to_string(v);
    Ok(Val::from(match name {
        "text" => text(),
        "json" => print::value(v, Style::COMPACT),
        "html" => text()
            .chars()
            .map(|c| match c {
                '<' => "&lt;".into(),
                '>' => "&gt;".into(),
                '&' => "&amp;".into(),
                '\'' => "&apos;".into(),
                '"' => "&quot;".into(),
                c => c.to_string(),
            })
            .collect(),
        "uri" => {
            let mut out = String::new();
            for b in text().bytes() {
                if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
                    out.push(b as char);
                } else {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
            out
        }
        "csv" | "tsv" => {
            let Val::Arr(row) = v else {
                return Err(err(format!(
                    "{} ({}) cannot be {name}-formatted, only array",
                    type_name(v),
                    print::truncated(v)
                )));
            };
            let mut cells = Vec::new();
            for x in row.iter() {
                cells.push(match x {
                    Val::Null => String::new(),
                    Val::Bool(b) => b.to_string(),
                    Val::Int(_) | Val::Float(_) | Val::Num(_) => {
                        print::number(print::as_f64(x).unwrap_or(f64::NAN))
                    }
                    Val::Str(s) if name == "csv" => format!("\"{}\"", s.replace('"', "\"\"")),
                    Val::Str(s) => s
                        .replace('\\', "\\\\")
                        .replace('\t', "\\t")
                        .replace('\n', "\\n")
                        .replace('\r', "\\r"),
                    x => {
                        return Err(err(format!(
                            "{} ({}) is not valid in a csv row",
                            type_name(x),
                            print::truncated(x)
                        )));
                    }
                });
            }
            cells.join(if name == "csv" { "," } else { "\t" })
        }
        "sh" => {
            let one = |x: &Val| match x {
                Val::Str(s) => Ok(format!("'{}'", s.replace('\'', "'\\''"))),
                Val::Arr(_) | Val::Obj(_) => Err(err(format!(
                    "{} ({}) can not be escaped for shell",
                    type_name(x),
                    print::truncated(x)
                ))),
                x => Ok(print::value(x, Style::COMPACT)),
            };
            match v {
                Val::Arr(a) => a.iter().map(one).collect::<Result<Vec<_>, _>>()?.join(" "),
                v => one(v)?,
            }
        }
        "base64" => base64(text().as_bytes()),
        "base64d" => {
            let bytes = unbase64(&text()).ok_or_else(|| {
                err(format!(
                    "{} ({}) is not valid base64 data",
                    type_name(v),
                    print::truncated(v)
                ))
            })?;
            String::from_utf8_lossy(&bytes).into_owned()
        }
        other => return Err(err(format!("{other} is not a valid format"))),
    }))
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.len();
        let word = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= n {
                out.push(B64[(word >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// jq 1.6 decodes what it can: trailing `=` and a last partial group are fine.
fn unbase64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.trim_end_matches('=').bytes() {
        let d = B64.iter().position(|&b| b == c)? as u32;
        acc = (acc << 6) | d;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// jq 1.6's `_match_impl`: the match objects of `re` in the input (all of them with `g`),
/// or with `test` whether there is one. Offsets and lengths count code points.
fn regex_match(input: &Val, re: &Val, flags: &Val, test: bool) -> Result<Val, Error<Val>> {
    let Val::Str(s) = input else {
        return Err(err(format!(
            "{} ({}) cannot be matched, as it is not a string",
            type_name(input),
            print::truncated(input)
        )));
    };
    let Val::Str(pattern) = re else {
        return Err(err(format!(
            "{} ({}) cannot be matched, as it is not a string",
            type_name(re),
            print::truncated(re)
        )));
    };
    let flags = match flags {
        Val::Null => String::new(),
        Val::Str(f) => f.to_string(),
        f => {
            return Err(err(format!(
                "{} ({}) is not a string",
                type_name(f),
                print::truncated(f)
            )));
        }
    };
    let mut builder = regex::RegexBuilder::new(pattern);
    let (mut global, mut skip_empty) = (false, false);
    for c in flags.chars() {
        match c {
            'g' => global = true,
            'i' => {
                builder.case_insensitive(true);
            }
            'x' => {
                builder.ignore_whitespace(true);
            }
            'n' => skip_empty = true,
            'p' => {
                builder.dot_matches_new_line(true);
            }
            // Oniguruma's single-line mode (`$` only at the end) is the regex crate's own;
            // longest-match has no equivalent and is rarely what changes a match.
            's' | 'l' => {}
            _ => return Err(err(format!("{flags} is not a valid modifier string"))),
        }
    }
    let re = builder.build().map_err(|e| {
        let first = e.to_string();
        let last = first.lines().last().unwrap_or_default().trim().to_owned();
        err(format!(
            "{pattern} (at offset 0) is not a valid regex: {last}"
        ))
    })?;
    if test {
        return Ok(Val::Bool(re.is_match(s)));
    }
    let chars = |byte: usize| s[..byte].chars().count() as isize;
    let names: Vec<Option<&str>> = re.capture_names().collect();
    let mut out = Vec::new();
    for caps in re.captures_iter(s) {
        let whole = caps.get(0).expect("group 0");
        if skip_empty && whole.as_str().is_empty() {
            continue;
        }
        let mut captures = Vec::new();
        for (i, name) in names.iter().enumerate().skip(1) {
            let name = name.map_or(Val::Null, |n| Val::from(n.to_owned()));
            captures.push(match caps.get(i) {
                Some(m) => obj([
                    ("offset", Val::Int(chars(m.start()))),
                    ("length", Val::Int(m.as_str().chars().count() as isize)),
                    ("string", Val::from(m.as_str().to_owned())),
                    ("name", name),
                ]),
                None => obj([
                    ("offset", Val::Int(-1)),
                    ("string", Val::Null),
                    ("length", Val::Int(0)),
                    ("name", name),
                ]),
            });
        }
        out.push(obj([
            ("offset", Val::Int(chars(whole.start()))),
            ("length", Val::Int(whole.as_str().chars().count() as isize)),
            ("string", Val::from(whole.as_str().to_owned())),
            ("captures", captures.into_iter().collect()),
        ]));
        if !global {
            break;
        }
    }
    Ok(out.into_iter().collect())
}

fn obj<const N: usize>(entries: [(&str, Val); N]) -> Val {
    Val::from_map(
        entries
            .into_iter()
            .map(|(k, v)| (Val::from(k.to_owned()), v)),
    )
    .expect("string keys")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_as_jq_writes_it() {
        assert_eq!(base64(b"<&'\">"), "PCYnIj4=");
        assert_eq!(unbase64("PCYnIj4=").unwrap(), b"<&'\">");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(unbase64("YWI").unwrap(), b"ab");
    }

    #[test]
    fn formats_of_a_row() {
        let row: Val = [
            Val::Int(1),
            Val::from("a\"b".to_owned()),
            Val::Null,
            Val::Bool(true),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            to_string(&format("csv", &row).unwrap()),
            "1,\"a\"\"b\",,true"
        );
        assert_eq!(to_string(&format("tsv", &row).unwrap()), "1\ta\"b\t\ttrue");
        assert_eq!(
            to_string(&format("sh", &row).unwrap()),
            "1 'a\"b' null true"
        );
        let s = Val::from("<&'\">".to_owned());
        assert_eq!(to_string(&format("uri", &s).unwrap()), "%3C%26'%22%3E");
    }
}
