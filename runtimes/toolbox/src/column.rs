//! `column` as util-linux 2.38 prints it: a table (`-t`) of the input's fields, split on runs
//! of whitespace or on each of `-s`'s characters, each column as wide as its widest cell and
//! joined by two spaces (`-o`), with `-N` names on top and `-R` columns aligned right; or, by
//! default, the input's lines filled into as many tab-aligned columns as `-c` (or `$COLUMNS`,
//! else 80) characters hold, down the columns first (across with `-x`). Its other options (JSON,
//! tree, wrapping, truncation...) are refused by name rather than ignored.

use crate::getopt::{Long, parse_or_say, words};
use crate::own::{emit, read_input, reason};

const LONG: &[Long] = &[
    ("table", 't', false),
    ("separator", 's', true),
    ("output-separator", 'o', true),
    ("table-columns", 'N', true),
    ("table-right", 'R', true),
    ("output-width", 'c', true),
    ("fillrows", 'x', false),
    ("help", 'h', false),
];

const USAGE: &str = "Usage: column [-t [-s SEP] [-o SEP] [-N NAMES] [-R COLUMNS]] [-c WIDTH] [-x] \
                     [FILE]...\nColumnate lists (util-linux's; -J, -T, -E, -W, -H, -O, -r, -l, \
                     -L, -n, -d, -e are not here).";

/// A tab stop, as the fill modes align to.
const TAB: usize = 8;

pub fn main(args: super::Args) -> i32 {
    let args = words(args);
    let Some(o) = parse_or_say("column", &args, "ts:o:N:R:c:xh", LONG) else {
        return 1;
    };
    if o.has('h') {
        println!("{USAGE}");
        return 0;
    }
    let width = match o
        .value('c')
        .map(str::to_owned)
        .or_else(|| std::env::var("COLUMNS").ok())
    {
        None => 80,
        Some(w) => match w.parse::<usize>() {
            Ok(w) if w > 0 => w,
            _ => {
                eprintln!("column: invalid columns argument: '{w}'");
                return 1;
            }
        },
    };
    let mut files = o.operands.clone();
    if files.is_empty() {
        files.push("-".into());
    }
    let mut lines = Vec::new();
    let mut status = 0;
    for file in &files {
        match read_input(file) {
            Ok(bytes) => lines.extend(
                String::from_utf8_lossy(&bytes)
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(str::to_owned),
            ),
            Err(e) => {
                eprintln!("column: cannot open {file}: {}", reason(&e));
                status = 1;
            }
        }
    }
    let out = if o.has('t') {
        let names: Vec<String> = o.value('N').map_or_else(Vec::new, split_list);
        let right = match right_columns(o.value('R'), &names) {
            Ok(right) => right,
            Err(bad) => {
                eprintln!("column: undefined column name '{bad}'");
                return 1;
            }
        };
        let mut rows: Vec<Vec<String>> = Vec::new();
        if !names.is_empty() {
            rows.push(names);
        }
        rows.extend(lines.iter().map(|l| cells(l, o.value('s'))));
        table(&rows, o.value('o').unwrap_or("  "), &right)
    } else {
        fill(&lines, width, o.has('x'))
    };
    if !emit(out.as_bytes()) {
        return 1;
    }
    status
}

/// `-N`'s and `-R`'s comma-separated lists.
fn split_list(list: &str) -> Vec<String> {
    list.split(',').map(str::to_owned).collect()
}

/// The 0-based columns `-R` names (1-based numbers, or `-N` names); the name it does not know.
fn right_columns(list: Option<&str>, names: &[String]) -> Result<Vec<usize>, String> {
    let Some(list) = list else {
        return Ok(Vec::new());
    };
    split_list(list)
        .into_iter()
        .map(|item| match item.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n - 1),
            _ => names.iter().position(|n| *n == item).ok_or(item),
        })
        .collect()
}

/// A line's cells: split on runs of whitespace (leading ones ignored), or on every one of
/// `separators`' characters (empty cells kept), as util-linux does.
fn cells(line: &str, separators: Option<&str>) -> Vec<String> {
    match separators {
        None => line.split_whitespace().map(str::to_owned).collect(),
        Some(seps) => line
            .split(|c| seps.contains(c))
            .map(str::to_owned)
            .collect(),
    }
}

fn width(s: &str) -> usize {
    s.chars().count()
}

/// The rows as a table: every row as many cells as the widest (missing ones empty), each
/// column padded to its widest cell but the last, joined by `separator`.
fn table(rows: &[Vec<String>], separator: &str, right: &[usize]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0; columns];
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(width(cell));
        }
    }
    let mut out = String::new();
    for row in rows {
        for (i, &w) in widths.iter().enumerate() {
            let cell = row.get(i).map_or("", String::as_str);
            if i > 0 {
                out.push_str(separator);
            }
            let pad = " ".repeat(w - width(cell));
            if right.contains(&i) {
                out.push_str(&pad);
                out.push_str(cell);
            } else {
                out.push_str(cell);
                if i + 1 < columns {
                    out.push_str(&pad);
                }
            }
        }
        out.push('\n');
    }
    out
}

/// The lines filled into columns `width` characters hold, each column a tab stop past the
/// longest line, down the columns (across them when `across`), as util-linux does.
fn fill(lines: &[String], width: usize, across: bool) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let longest = lines.iter().map(|l| self::width(l)).max().unwrap_or(0);
    let step = (longest + TAB) & !(TAB - 1);
    let columns = (width / step).max(1);
    let rows = lines.len().div_ceil(columns);
    let order: Vec<Vec<&String>> = if across {
        lines
            .chunks(columns)
            .map(|row| row.iter().collect())
            .collect()
    } else {
        (0..rows)
            .map(|r| lines.iter().skip(r).step_by(rows).collect())
            .collect()
    };
    let mut out = String::new();
    for row in order {
        let mut at = 0;
        for (i, line) in row.iter().enumerate() {
            if i > 0 {
                // Tabs to the next column's stop.
                let stop = i * step;
                while at < stop {
                    out.push('\t');
                    at = (at + TAB) & !(TAB - 1);
                }
            }
            out.push_str(line);
            at += self::width(line);
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str, seps: Option<&str>) -> Vec<Vec<String>> {
        text.lines().map(|l| cells(l, seps)).collect()
    }

    #[test]
    fn tables_as_util_linux_prints_them() {
        assert_eq!(
            table(&rows("x y z\n1 2", None), "  ", &[]),
            "x  y  z\n1  2  \n"
        );
        assert_eq!(
            table(&rows("a,,b\nc,d,e", Some(",")), "  ", &[]),
            "a     b\nc  d  e\n"
        );
        assert_eq!(
            table(&rows("x y z\n1 22", None), "  ", &[1]),
            "x   y  z\n1  22  \n"
        );
        assert_eq!(table(&rows("\tx  y", None), "|", &[]), "x|y\n");
    }

    #[test]
    fn fills_as_util_linux_does() {
        let numbers: Vec<String> = (1..=20).map(|n| n.to_string()).collect();
        assert!(fill(&numbers, 40, false).starts_with("1\t5\t9\t13\t17\n2\t6\t"));
        let seven: Vec<String> = (1..=7).map(|n| n.to_string()).collect();
        assert_eq!(fill(&seven, 30, true), "1\t2\t3\n4\t5\t6\n7\n");
        let words = ["a", "bbbbbbbbb", "c"].map(str::to_owned);
        assert_eq!(fill(&words, 25, false), "a\nbbbbbbbbb\nc\n");
    }
}
