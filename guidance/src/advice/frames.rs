//! Work a long loop repeats that one pass would do: a DataFrame filtered inside a per-row
//! function or loop (`df[df['id'] == x]` in the function that `.apply` calls), so each row
//! scans the whole frame again (rows × rows; a merge or a `.map` through an index is one
//! pass); and a value rebuilt whole on every pass (a string grown with `+`, a frame grown with
//! `pd.concat`) or a frame walked row by row (`df.iloc[i]`, `iterrows`), each pass paying for
//! the whole.

use super::code_lines::indent;
use crate::scan::LoopInfo;

/// A boolean-mask filter run once per row.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct FrameScan {
    /// The filter as written (`customers[customers['customer_id'] == cid]`, up to its `==`).
    pub(super) mask: String,
    /// The frame filtered.
    pub(super) frame: String,
    /// The filter's line (1-based).
    pub(super) line: usize,
    /// What runs it once per row: `.apply(tier_of)`, `for` at line 5, ...
    pub(super) per_row: String,
}

/// The first boolean-mask filter of a frame (`NAME[NAME[...] == ...]`,
/// `NAME.loc[NAME.col == ...]`) that runs once per row: on a line that calls `.apply(`/`.map(`
/// (a lambda), inside a `def` whose name `.apply`/`.map`/`.transform` is given, or inside a
/// loop.
pub(super) fn scan_per_row(code: &str, loops: &[LoopInfo]) -> Option<FrameScan> {
    let lines: Vec<&str> = code.lines().collect();
    lines.iter().enumerate().find_map(|(k, text)| {
        let (frame, mask) = mask_filter(text)?;
        let per_row = per_row_caller(&lines, k, text, loops, code)?;
        Some(FrameScan {
            mask,
            frame,
            line: k + 1,
            per_row,
        })
    })
}

/// `NAME[NAME[...] ==` or `NAME.loc[NAME....==` on one line: the frame and the mask's text.
fn mask_filter(text: &str) -> Option<(String, String)> {
    text.match_indices('[').find_map(|(at, _)| {
        let before = text[..at].strip_suffix(".loc").unwrap_or(&text[..at]);
        let start = before
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_alphanumeric() || *c == '_')
            .last()
            .map(|(i, _)| i)?;
        let name = &before[start..];
        if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        let inner = text[at + 1..].trim_start();
        let rest = inner.strip_prefix(name)?;
        if !rest.starts_with(['[', '.']) {
            return None;
        }
        let eq = rest.find("==")?;
        // The comparison belongs to this bracket: no `]` closes the outer one before it.
        let inside = &rest[..eq];
        let opens = inside.matches('[').count();
        let closes = inside.matches(']').count();
        (closes <= opens).then(|| {
            let end = text.len() - rest.len() + eq + 2;
            (name.to_owned(), text[start..end].trim().to_owned())
        })
    })
}

/// What runs line `k` once per row, if anything: `.apply(`/`.map(` on the line itself, a
/// `def` around it whose name is passed to `.apply(`, `.map(` or `.transform(`, or a loop.
fn per_row_caller(
    lines: &[&str],
    k: usize,
    text: &str,
    loops: &[LoopInfo],
    code: &str,
) -> Option<String> {
    for method in [".apply(", ".map(", ".transform("] {
        if text.contains(method) && text.contains("lambda") {
            return Some(format!("`{method}lambda ...)`"));
        }
    }
    // The enclosing `def`, by indentation.
    let own = indent(text);
    let def = lines[..k].iter().rev().find_map(|l| {
        let t = l.trim_start();
        (indent(l) < own && !t.is_empty()).then_some(t)
    });
    if let Some(name) = def
        .and_then(|t| t.strip_prefix("def "))
        .and_then(|t| t.split('(').next())
    {
        for method in [".apply(", ".map(", ".transform("] {
            let call = format!("{method}{name}");
            if code.contains(&call) {
                return Some(format!("`{call})`"));
            }
        }
    }
    let line = k as u32 + 1;
    loops
        .iter()
        .find(|l| l.line < line && line <= l.last_line)
        .map(|l| format!("`{}` at line {}", l.header, l.line))
}

/// What a long loop rebuilds or walks on every pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Rebuilt {
    /// A string grown with `s = s + ...` / `s += ...`: each pass copies all of it.
    String,
    /// A DataFrame grown with `pd.concat([df, ...])` (or `df.append`, `df.loc[len(df)] =`):
    /// each pass copies every row so far.
    Frame,
    /// A DataFrame read or written one row at a time (`df.iloc[i]`, `df.at[i, c]` in a loop,
    /// `iterrows`): each access builds a Series or goes through the index.
    Rows,
}

/// A value a long loop rebuilds whole, or a frame it walks row by row: the kind, the name,
/// the line (1-based) and the loop's line.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct RebuiltEachPass {
    pub(super) kind: Rebuilt,
    pub(super) name: String,
    pub(super) line: usize,
    pub(super) loop_line: u32,
}

/// The first value a long loop (unknown size, or 10,000 passes or more) rebuilds on every
/// pass, or the frame it walks row by row (see [`Rebuilt`]).
pub(super) fn rebuilt_each_pass(code: &str, loops: &[LoopInfo]) -> Option<RebuiltEachPass> {
    let lines: Vec<&str> = code.lines().collect();
    let pandas = code.contains("pandas");
    loops.iter().find_map(|l| {
        let long = l.bound.is_none_or(|b| b >= 10_000.0);
        if !long || l.last_line <= l.line {
            return None;
        }
        let body =
            (l.line as usize..l.last_line as usize).filter_map(|k| Some((k, *lines.get(k)?)));
        let found = body.clone().find_map(|(k, text)| {
            let t = text.trim().trim_end_matches(';');
            let (name, kind) = grown_string(t, &lines[..l.line as usize - 1])
                .map(|n| (n, Rebuilt::String))
                .or_else(|| grown_frame(t).map(|n| (n, Rebuilt::Frame)))?;
            Some(RebuiltEachPass {
                kind,
                name: name.to_owned(),
                line: k + 1,
                loop_line: l.line,
            })
        });
        found.or_else(|| {
            if !pandas {
                return None;
            }
            let header = lines.get(l.line as usize - 1)?;
            let frame = walked_by_rows(header)?;
            // A body that only prints is about its output (see `prints_every_iteration`).
            let works = body.clone().any(|(_, t)| {
                let t = t.trim();
                !t.is_empty() && !t.starts_with("print(") && !t.starts_with('#')
            });
            let touched = header.contains(".iterrows()")
                || body.clone().any(|(_, t)| {
                    [".iloc[", ".loc[", ".at[", ".iat["]
                        .iter()
                        .any(|a| t.contains(&format!("{frame}{a}")))
                });
            let touched = touched && works;
            touched.then(|| RebuiltEachPass {
                kind: Rebuilt::Rows,
                name: frame.to_owned(),
                line: l.line as usize,
                loop_line: l.line,
            })
        })
    })
}

/// `s = s + ...` or `s += ...` where the lines before the loop start `s` as a string
/// (`s = ''`, `let s = ""`): the name.
fn grown_string<'t>(text: &'t str, before: &[&str]) -> Option<&'t str> {
    let name = text
        .split(['=', '+', ' '])
        .next()
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_alphanumeric() || c == '_'))?;
    let rest = text[name.len()..].trim_start();
    let grows = rest.starts_with("+=")
        || rest.strip_prefix('=').is_some_and(|r| {
            !r.starts_with('=') && r.trim_start().starts_with(&format!("{name} +"))
        });
    let started_empty = before.iter().any(|l| {
        let l = l.trim();
        let l = ["let ", "var "]
            .iter()
            .find_map(|k| l.strip_prefix(k))
            .unwrap_or(l);
        l.strip_prefix(name)
            .map(str::trim_start)
            .and_then(|r| r.strip_prefix('='))
            .map(|r| r.trim().trim_end_matches(';'))
            .is_some_and(|v| matches!(v, "''" | "\"\"" | "``"))
    });
    (grows && started_empty).then_some(name)
}

/// `df = pd.concat([df, ...])`, `df = df.append(...)` or `df.loc[len(df)] = ...`: the frame.
fn grown_frame(text: &str) -> Option<&str> {
    let (lhs, rhs) = text.split_once('=')?;
    let name = lhs.trim();
    if let Some(frame) = name
        .strip_suffix(")]")
        .and_then(|n| n.split_once(".loc[len("))
        .filter(|(a, b)| a == b)
        .map(|(a, _)| a)
    {
        return Some(frame);
    }
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let rhs = rhs.trim().replace(' ', "");
    (rhs.starts_with(&format!("pd.concat([{name},"))
        || rhs.starts_with(&format!("pd.concat([{name}]"))
        || rhs.starts_with(&format!("{name}.append(")))
    .then_some(name)
}

/// The frame a loop header walks by position or by row: `for i in range(len(df))`,
/// `for i, row in df.iterrows()`.
fn walked_by_rows(header: &str) -> Option<&str> {
    let h = header.trim();
    if let Some(at) = h.find(".iterrows()") {
        let before = &h[..at];
        let start = before
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |i| i + 1);
        return Some(&h[start..at]).filter(|n| !n.is_empty());
    }
    let inner = h.split("range(len(").nth(1)?;
    let name = inner.split(')').next()?;
    (!name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::{self, Source};
    use sandbox_protocol::Language;

    fn scan(code: &str) -> Option<FrameScan> {
        let src = Source::new(code, Language::Python);
        scan_per_row(code, &scan::loops(&src))
    }

    #[test]
    fn a_filter_in_an_applied_function_is_found() {
        let code = "def tier_of(cid):\n    return customers.loc[customers[\"customer_id\"] == cid, \"tier\"].iloc[0]\n\norders[\"tier\"] = orders[\"customer_id\"].apply(tier_of)\n";
        let found = scan(code).unwrap();
        assert_eq!(found.frame, "customers");
        assert_eq!(found.mask, "customers.loc[customers[\"customer_id\"] ==");
        assert_eq!(found.line, 2);
        assert_eq!(found.per_row, "`.apply(tier_of)`");
    }

    #[test]
    fn a_filter_in_a_lambda_or_a_loop_is_found() {
        let lambda =
            "o['p'] = o['pid'].apply(lambda p: prods[prods['pid'] == p]['price'].values[0])";
        assert_eq!(scan(lambda).unwrap().frame, "prods");
        let looped = "for i, row in df.iterrows():\n    m = df[df.k == row.k].v.mean()\n";
        assert!(scan(looped).unwrap().per_row.contains("line 1"));
    }

    #[test]
    fn a_filter_run_once_is_not_flagged() {
        assert_eq!(scan("big = df[df['n'] == 'z']\nprint(big)"), None);
        assert_eq!(
            scan("def f(x):\n    return df[df.a == x]\nprint(f(1))"),
            None
        );
    }

    fn rebuilt(code: &str) -> Option<(Rebuilt, String, usize)> {
        let src = Source::new(code, Language::Python);
        rebuilt_each_pass(code, &scan::loops(&src)).map(|r| (r.kind, r.name, r.line))
    }

    #[test]
    fn values_rebuilt_on_every_pass_are_found() {
        let text = "out = ''\nfor i in range(2_000_000):\n    out = out + str(i)\n";
        assert_eq!(rebuilt(text), Some((Rebuilt::String, "out".into(), 3)));
        let plus = "out = \"\"\nfor w in words:\n    out += w\n";
        assert_eq!(rebuilt(plus).map(|r| r.0), Some(Rebuilt::String));
        let frame = "import pandas as pd\ndf = pd.DataFrame()\nfor i in range(20000):\n    df = pd.concat([df, pd.DataFrame({'a': [i]})])\n";
        assert_eq!(rebuilt(frame), Some((Rebuilt::Frame, "df".into(), 4)));
        let rows =
            "import pandas as pd\nfor i in range(len(df)):\n    out.append(df.iloc[i]['a'])\n";
        assert_eq!(rebuilt(rows), Some((Rebuilt::Rows, "df".into(), 2)));
    }

    #[test]
    fn sums_short_loops_and_lists_are_not_flagged() {
        assert_eq!(
            rebuilt("total = 0\nfor x in xs:\n    total = total + x\n"),
            None
        );
        assert_eq!(
            rebuilt("s = ''\nfor i in range(10):\n    s += str(i)\n"),
            None
        );
        assert_eq!(
            rebuilt("parts = []\nfor x in xs:\n    parts += [x]\n"),
            None
        );
    }
}
