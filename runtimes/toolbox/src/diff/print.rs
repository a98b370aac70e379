//! One pair of files, compared and printed as GNU diff prints them: lines reduced to what the
//! `-i`/`-w`/`-b`/`-Z`/`-E`/`--strip-trailing-cr` options compare, [`myers`](super::myers)' changes
//! grouped into hunks (with `-B`, hunks whose every change is blank lines are left out), and the
//! normal, unified, context and brief formats, `\ No newline at end of file` and binary files.

use std::collections::HashMap;
use std::ops::Range;

use super::myers::{self, Change};
use super::{Format, Options};

/// One input as the printers see it: its name as shown, its lines and its time in headers.
pub struct Input<'a> {
    pub name: &'a str,
    pub bytes: &'a [u8],
    /// `YYYY-MM-DD HH:MM:SS.NNNNNNNNN +ZZZZ`, for the unified and context headers.
    pub time: String,
}

/// What comparing two inputs printed (empty when they are the same) and whether they differ.
pub fn compare(o: &Options, from: &Input, to: &Input) -> (Vec<u8>, bool) {
    let binary = |b: &[u8]| b.contains(&0);
    if from.bytes == to.bytes {
        return (Vec::new(), false);
    }
    if !o.text && (binary(from.bytes) || binary(to.bytes)) {
        let what = if o.brief { "Files" } else { "Binary files" };
        let line = format!("{what} {} and {} differ\n", from.name, to.name);
        return (line.into_bytes(), true);
    }
    let (a, b) = (lines(o, from.bytes), lines(o, to.bytes));
    let (ka, kb) = keys(o, &a, &b);
    let changes = myers::diff(&ka, &kb);
    let hunks = hunks(o, &a, &b, &changes);
    if hunks.is_empty() {
        return (Vec::new(), false);
    }
    if o.brief {
        let line = format!("Files {} and {} differ\n", from.name, to.name);
        return (line.into_bytes(), true);
    }
    let mut out = Printer {
        o,
        a: &a,
        b: &b,
        out: Vec::new(),
    };
    match o.format {
        Format::Normal => hunks.iter().for_each(|h| out.normal(h)),
        Format::Unified => {
            out.header("---", from, "+++", to);
            hunks.iter().for_each(|h| out.unified(h));
        }
        Format::Context => {
            out.header("***", from, "---", to);
            hunks.iter().for_each(|h| out.context(h));
        }
    }
    (out.out, true)
}

/// A line: its text without the newline (nor, with `--strip-trailing-cr`, the carriage return)
/// and whether a newline ended it (only the last line of a file may lack one).
struct Line<'a> {
    text: &'a [u8],
    newline: bool,
}

fn lines<'a>(o: &Options, bytes: &'a [u8]) -> Vec<Line<'a>> {
    let mut out: Vec<Line> = (bytes.split_inclusive(|b| *b == b'\n'))
        .map(|l| match l.strip_suffix(b"\n") {
            Some(text) => Line {
                text,
                newline: true,
            },
            None => Line {
                text: l,
                newline: false,
            },
        })
        .collect();
    if o.strip_trailing_cr {
        // Only before a newline: a last line without one keeps its carriage return.
        for line in out.iter_mut().filter(|l| l.newline) {
            line.text = line.text.strip_suffix(b"\r").unwrap_or(line.text);
        }
    }
    out
}

/// Each line of both files as a number, equal when the options make the lines equal.
fn keys(o: &Options, a: &[Line], b: &[Line]) -> (Vec<usize>, Vec<usize>) {
    // A missing last newline makes a line different, unless white space is ignored: GNU counts
    // the newline as white space then.
    let spaces = o.ignore_all_space || o.ignore_space_change || o.ignore_trailing_space;
    let mut seen: HashMap<(Vec<u8>, bool), usize> = HashMap::new();
    let mut key = |line: &Line| {
        let k = (normalized(o, line.text), line.newline || spaces);
        let next = seen.len();
        *seen.entry(k).or_insert(next)
    };
    let ka = a.iter().map(&mut key).collect();
    let kb = b.iter().map(&mut key).collect();
    (ka, kb)
}

/// GNU's white space: isspace in the C locale (the newline is never in a line).
fn space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\x0b' | b'\x0c' | b'\r')
}

/// A line as the options compare it.
fn normalized(o: &Options, text: &[u8]) -> Vec<u8> {
    let mut line = text.to_vec();
    if o.ignore_tab_expansion && !o.ignore_all_space {
        line = diffutilslib::utils::do_expand_tabs(&line, o.tabsize);
    }
    if o.ignore_all_space {
        line.retain(|b| !space(*b));
    } else if o.ignore_space_change {
        let mut out = Vec::with_capacity(line.len());
        let mut pending = false;
        for &b in &line {
            if space(b) {
                pending = true;
            } else {
                // A run of white space is one space; a trailing one is none.
                if pending {
                    out.push(b' ');
                }
                pending = false;
                out.push(b);
            }
        }
        line = out;
    } else if o.ignore_trailing_space {
        while line.last().is_some_and(|b| space(*b)) {
            line.pop();
        }
    }
    if o.ignore_case {
        line.make_ascii_lowercase();
    }
    line
}

/// A hunk: the changes printed together, and the lines (of each file) it shows with context.
struct Hunk<'c> {
    changes: &'c [Change],
    old: Range<usize>,
    new: Range<usize>,
}

/// The changes grouped as GNU groups them: a change joins the hunk before it when at most
/// twice the context of unchanged lines lie between, or, for a change `-B` ignores (blank
/// lines only), fewer than the context; a hunk of ignored changes only is left out.
fn hunks<'c>(o: &Options, a: &[Line], b: &[Line], changes: &'c [Change]) -> Vec<Hunk<'c>> {
    let context = match o.format {
        Format::Normal => 0,
        _ => o.context,
    };
    let ignored = |c: &Change| {
        o.ignore_blank_lines
            && (a[c.old.clone()].iter().chain(&b[c.new.clone()])).all(|l| blank(o, l.text))
    };
    let mut out = Vec::new();
    let mut first = 0;
    while first < changes.len() {
        let mut last = first;
        while let Some(next) = changes.get(last + 1) {
            let gap = next.old.start - changes[last].old.end;
            let fits = if ignored(next) {
                gap < context
            } else {
                gap <= 2 * context
            };
            if !fits {
                break;
            }
            last += 1;
        }
        let group = &changes[first..=last];
        first = last + 1;
        if group.iter().all(ignored) {
            continue;
        }
        let (start, end) = (&group[0], &group[group.len() - 1]);
        let before = context.min(start.old.start);
        let after = context.min(a.len() - end.old.end);
        out.push(Hunk {
            changes: group,
            old: start.old.start - before..end.old.end + after,
            new: start.new.start - before..end.new.end + after,
        });
    }
    out
}

/// A line `-B` ignores: empty, or white space only when white space is ignored.
fn blank(o: &Options, text: &[u8]) -> bool {
    let spaces = o.ignore_all_space || o.ignore_space_change || o.ignore_trailing_space;
    text.is_empty() || spaces && text.iter().all(|b| space(*b))
}

struct Printer<'a> {
    o: &'a Options,
    a: &'a [Line<'a>],
    b: &'a [Line<'a>],
    out: Vec<u8>,
}

impl Printer<'_> {
    fn header(&mut self, from_mark: &str, from: &Input, to_mark: &str, to: &Input) {
        for (mark, input) in [(from_mark, from), (to_mark, to)] {
            let name = super::tree::c_quoted(input.name);
            let line = format!("{mark} {name}\t{}\n", input.time);
            self.out.extend_from_slice(line.as_bytes());
        }
    }

    /// `prefix` and the line, and GNU's note when the file ends without a newline there.
    fn line(&mut self, prefix: &str, line: &Line) {
        self.out.extend_from_slice(prefix.as_bytes());
        if self.o.expand_tabs {
            let text = diffutilslib::utils::do_expand_tabs(line.text, self.o.tabsize);
            self.out.extend_from_slice(&text);
        } else {
            self.out.extend_from_slice(line.text);
        }
        self.out.push(b'\n');
        if !line.newline {
            self.out
                .extend_from_slice(b"\\ No newline at end of file\n");
        }
    }

    fn text(&mut self, text: &str) {
        self.out.extend_from_slice(text.as_bytes());
    }

    /// `4`, `4,6`; an empty range is the line before it (`3a4`).
    fn normal(&mut self, hunk: &Hunk) {
        let range = |r: &Range<usize>| match r.len() {
            0 => r.start.to_string(),
            1 => r.end.to_string(),
            _ => format!("{},{}", r.start + 1, r.end),
        };
        for c in hunk.changes {
            let kind = match (c.old.is_empty(), c.new.is_empty()) {
                (true, _) => 'a',
                (_, true) => 'd',
                _ => 'c',
            };
            self.text(&format!("{}{kind}{}\n", range(&c.old), range(&c.new)));
            let (a, b) = (self.a, self.b);
            a[c.old.clone()].iter().for_each(|l| self.line("< ", l));
            if kind == 'c' {
                self.text("---\n");
            }
            b[c.new.clone()].iter().for_each(|l| self.line("> ", l));
        }
    }

    /// `@@ -1,3 +1,4 @@`: a range of one line is its number, an empty one the line before.
    fn unified(&mut self, hunk: &Hunk) {
        let range = |r: &Range<usize>| match r.len() {
            1 => r.end.to_string(),
            0 => format!("{},0", r.start),
            n => format!("{},{n}", r.start + 1),
        };
        self.text(&format!(
            "@@ -{} +{} @@\n",
            range(&hunk.old),
            range(&hunk.new)
        ));
        let (a, b) = (self.a, self.b);
        let mut at = hunk.old.start;
        for c in hunk.changes {
            a[at..c.old.start].iter().for_each(|l| self.line(" ", l));
            a[c.old.clone()].iter().for_each(|l| self.line("-", l));
            b[c.new.clone()].iter().for_each(|l| self.line("+", l));
            at = c.old.end;
        }
        a[at..hunk.old.end].iter().for_each(|l| self.line(" ", l));
    }

    /// `*** 1,4 ****` then the old lines (only if the hunk deletes some), `--- 1,5 ----` then
    /// the new ones (only if it adds some); `!` marks the lines of a change that does both.
    fn context(&mut self, hunk: &Hunk) {
        let range = |r: &Range<usize>| match r.len() {
            0 | 1 => r.end.to_string(),
            _ => format!("{},{}", r.start + 1, r.end),
        };
        self.text("***************\n");
        let (a, b) = (self.a, self.b);
        let sides: [(&str, &str, &str, &Range<usize>, &[Line]); 2] = [
            ("***", "****", "-", &hunk.old, a),
            ("---", "----", "+", &hunk.new, b),
        ];
        for (side, (mark, end, only, range_of, lines)) in sides.into_iter().enumerate() {
            let ours = |c: &Change| {
                if side == 0 {
                    c.old.clone()
                } else {
                    c.new.clone()
                }
            };
            let theirs = |c: &Change| {
                if side == 0 {
                    c.new.clone()
                } else {
                    c.old.clone()
                }
            };
            self.text(&format!("{mark} {} {end}\n", range(range_of)));
            if hunk.changes.iter().all(|c| ours(c).is_empty()) {
                continue;
            }
            let mut at = range_of.start;
            for c in hunk.changes {
                let r = ours(c);
                lines[at..r.start].iter().for_each(|l| self.line("  ", l));
                let prefix = if theirs(c).is_empty() { only } else { "!" };
                let prefix = format!("{prefix} ");
                lines[r.clone()].iter().for_each(|l| self.line(&prefix, l));
                at = r.end;
            }
            lines[at..range_of.end]
                .iter()
                .for_each(|l| self.line("  ", l));
        }
    }
}
