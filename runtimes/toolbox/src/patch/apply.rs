//! Applying one file's hunks to its lines: each hunk is looked for at its line (moved by the
//! offset the previous hunk needed), then further and further away, first with all of its
//! context, then with up to `fuzz` context lines dropped at each end, as GNU patch does. A hunk
//! found nowhere is kept for the reject file.

use super::parse::{Hunk, Kind, Line};

/// Where and how a hunk applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    /// 0-based index in the old lines where the hunk's old lines (all of them) begin.
    pub at: usize,
    pub fuzz: usize,
}

/// How lines are compared: exactly, or with runs of white space alike (`-l`).
#[derive(Debug, Clone, Copy)]
pub struct Matcher {
    pub ignore_whitespace: bool,
}

impl Matcher {
    fn same(&self, file: &Line, hunk: &Line) -> bool {
        if !self.ignore_whitespace {
            return file.text == hunk.text;
        }
        let words = |t: &[u8]| -> Vec<Vec<u8>> {
            t.split(|b| b.is_ascii_whitespace())
                .filter(|w| !w.is_empty())
                .map(|w| w.to_vec())
                .collect()
        };
        words(&file.text) == words(&hunk.text)
    }
}

/// The old side of `hunk` matches `lines` at `at` with `top` and `bottom` lines of context
/// left unchecked.
fn matches_at(
    lines: &[Line],
    hunk: &Hunk,
    at: usize,
    top: usize,
    bottom: usize,
    matcher: Matcher,
) -> bool {
    let old: Vec<&Line> = (hunk.ops.iter())
        .filter(|o| o.kind != Kind::Add)
        .map(|o| &o.line)
        .collect();
    // Context left unchecked at the bottom may lie past the end of the file.
    if at + old.len() - bottom > lines.len() {
        return false;
    }
    let checked = top..old.len().saturating_sub(bottom).max(top);
    checked.into_iter().all(|k| {
        let (file, want) = (&lines[at + k], old[k]);
        // A line without its newline matches only one without it (as GNU compares them).
        matcher.same(file, want) && file.newline == want.newline
    })
}

/// Finds `hunk` in `lines` at or after `from`, first near `guess`; `None` if nowhere.
pub fn locate(
    lines: &[Line],
    hunk: &Hunk,
    from: usize,
    guess: isize,
    max_fuzz: usize,
    matcher: Matcher,
) -> Option<Placed> {
    locate_with(lines, hunk, from, guess, 0, max_fuzz, matcher)
}

/// [`locate`] with fuzz from `min_fuzz` to `max_fuzz` only.
pub fn locate_with(
    lines: &[Line],
    hunk: &Hunk,
    from: usize,
    guess: isize,
    min_fuzz: usize,
    max_fuzz: usize,
    matcher: Matcher,
) -> Option<Placed> {
    let old_len = hunk.old_len();
    let (prefix, suffix) = hunk.context();
    let most = prefix.max(suffix);
    let last_start = lines.len().checked_sub(old_len).unwrap_or(0);
    if old_len > lines.len() + max_fuzz {
        return None;
    }
    // Lines added with no context at all (normal diffs, `diff -U0`) go where they say, or at
    // the end of a file too short for that.
    if old_len == 0 {
        let at = (guess.max(0) as usize).clamp(from, lines.len().max(from));
        return Some(Placed { at, fuzz: 0 });
    }
    // Hunks without context (normal diffs) cannot be fuzzed.
    let max_fuzz = if most == 0 { 0 } else { max_fuzz };
    for fuzz in min_fuzz..=max_fuzz {
        // Fuzz drops context where there is the most of it first: a hunk at the start of the
        // file has less above than below.
        let top = fuzz.saturating_sub(most - prefix).min(prefix);
        let bottom = fuzz.saturating_sub(most - suffix).min(suffix);
        if fuzz > 0 && top == 0 && bottom == 0 {
            continue;
        }
        let (left_top, left_bottom) = (prefix - top, suffix - bottom);
        // Less context above than below: the hunk is at the start of the file (if it says so);
        // more above than below: at its end.
        let at_start = left_top < left_bottom && hunk.old_start <= 1;
        let at_end = left_top > left_bottom;
        let fits = |at: usize| {
            at >= from
                && at <= last_start + bottom
                && (!at_start || at == 0)
                && (!at_end || at + old_len == lines.len())
                && matches_at(lines, hunk, at, top, bottom, matcher)
        };
        let guess = guess.clamp(0, last_start as isize) as usize;
        let span = lines.len() + 1;
        for distance in 0..=span {
            if let Some(at) = guess.checked_add(distance).filter(|a| fits(*a)) {
                return Some(Placed { at, fuzz });
            }
            if distance > 0 {
                if let Some(at) = guess.checked_sub(distance).filter(|a| fits(*a)) {
                    return Some(Placed { at, fuzz });
                }
            }
        }
    }
    None
}

/// Writes `hunk`'s new side in place of its old lines at `placed.at` into `out`; the kept
/// lines are the file's own (they may differ from the hunk's under fuzz or `-l`).
pub fn splice(lines: &[Line], hunk: &Hunk, at: usize, out: &mut Vec<Line>) {
    let mut k = at;
    for op in &hunk.ops {
        match op.kind {
            Kind::Keep => {
                // (Fuzz may have let the last context lines fall past the end of the file.)
                out.extend(lines.get(k).cloned());
                k += 1;
            }
            Kind::Remove => k += 1,
            Kind::Add => out.push(op.line.clone()),
        }
    }
}
