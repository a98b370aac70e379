//! The line diff every `diff` output uses: Myers' O(ND) algorithm in linear space (the 1986
//! paper's middle snake, divide and conquer), over lines already reduced to numbers (equal
//! numbers: lines equal under `-i`/`-w`/`-b`/...), then each run of changed lines slid to where
//! GNU diff prints it. The result is the list of changes, each a range of the old lines replaced
//! by a range of the new ones.

use std::ops::Range;

/// One change: `old` lines (indexes from 0) replaced by `new` lines; either may be empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub old: Range<usize>,
    pub new: Range<usize>,
}

/// The changes that turn `a` into `b`, in order, none adjacent to another.
pub fn diff(a: &[usize], b: &[usize]) -> Vec<Change> {
    // A line found nowhere in the other file is changed in every script: left out of the
    // search, as GNU leaves it out, so that the search pairs the lines GNU pairs.
    let mut counts = vec![[0_usize; 2]; a.iter().chain(b).max().map_or(0, |m| m + 1)];
    a.iter().for_each(|&k| counts[k][0] += 1);
    b.iter().for_each(|&k| counts[k][1] += 1);
    let kept = |lines: &[usize], other: usize| -> Vec<usize> {
        (0..lines.len())
            .filter(|&i| counts[lines[i]][other] > 0)
            .collect()
    };
    let (ka, kb) = (kept(a, 1), kept(b, 0));
    let (ra, rb): (Vec<usize>, Vec<usize>) = (
        ka.iter().map(|&i| a[i]).collect(),
        kb.iter().map(|&i| b[i]).collect(),
    );
    let mut gone_kept = vec![false; ra.len()];
    let mut added_kept = vec![false; rb.len()];
    let mut search = Search {
        a: &ra,
        b: &rb,
        forward: Vec::new(),
        backward: Vec::new(),
    };
    search.compare(0..ra.len(), 0..rb.len(), &mut gone_kept, &mut added_kept);
    let mut gone = vec![true; a.len()];
    let mut added = vec![true; b.len()];
    ka.iter().zip(&gone_kept).for_each(|(&i, &g)| gone[i] = g);
    kb.iter().zip(&added_kept).for_each(|(&i, &g)| added[i] = g);
    // Among the equally short scripts, GNU's puts a run of changes as late as it can go, or
    // where it meets a change in the other file: the same lines, so the same hunks.
    slide(a, &mut gone, &added);
    slide(b, &mut added, &gone);
    changes(&gone, &added)
}

struct Search<'a> {
    a: &'a [usize],
    b: &'a [usize],
    /// The furthest x on each diagonal, forward and backward (reused between calls).
    forward: Vec<usize>,
    backward: Vec<usize>,
}

impl Search<'_> {
    /// Marks the lines of `a[xs]` and `b[ys]` outside a longest common subsequence.
    fn compare(
        &mut self,
        mut xs: Range<usize>,
        mut ys: Range<usize>,
        gone: &mut [bool],
        added: &mut [bool],
    ) {
        // Common ends first: they are in every longest common subsequence.
        while !xs.is_empty() && !ys.is_empty() && self.a[xs.start] == self.b[ys.start] {
            xs.start += 1;
            ys.start += 1;
        }
        while !xs.is_empty() && !ys.is_empty() && self.a[xs.end - 1] == self.b[ys.end - 1] {
            xs.end -= 1;
            ys.end -= 1;
        }
        if xs.is_empty() || ys.is_empty() {
            gone[xs].fill(true);
            added[ys].fill(true);
            return;
        }
        // Both ends differ, so the script costs at least one edit and the middle snake splits
        // it into two strictly cheaper halves.
        let (x, y, u, v) = self.middle_snake(xs.clone(), ys.clone());
        self.compare(xs.start..x, ys.start..y, gone, added);
        self.compare(u..xs.end, v..ys.end, gone, added);
    }

    /// The paper's middle snake of `a[xs]` against `b[ys]`: a run of equal lines `(x, y)` to
    /// `(u, v)` (absolute indexes) on some shortest edit path, about halfway along it.
    fn middle_snake(&mut self, xs: Range<usize>, ys: Range<usize>) -> (usize, usize, usize, usize) {
        let (a, b) = (&self.a[xs.clone()], &self.b[ys.clone()]);
        let (n, m) = (a.len() as isize, b.len() as isize);
        let delta = n - m;
        let odd = delta & 1 != 0;
        let max = ((n + m + 1) / 2 + 1) as usize;
        // Diagonal k is at index k + offset; one more on each side for the k-1 and k+1 reads.
        let offset = max as isize + 1;
        let size = 2 * max + 3;
        self.forward.clear();
        self.forward.resize(size, 0);
        // Backward paths hold x too, in forward coordinates, and start at the far corner.
        self.backward.clear();
        self.backward.resize(size, n as usize);
        let at = |k: isize| (k + offset) as usize;
        for d in 0..=max as isize {
            // Diagonals from the highest down, in both directions: where several meet at once,
            // the first found splits the script as GNU's does.
            for k in (-d..=d).rev().step_by(2) {
                let f = &self.forward;
                let mut x = if k == -d || (k != d && f[at(k - 1)] < f[at(k + 1)]) {
                    f[at(k + 1)] as isize
                } else {
                    f[at(k - 1)] as isize + 1
                };
                let mut y = x - k;
                let (x0, y0) = (x, y);
                while x < n && y < m && a[x as usize] == b[y as usize] {
                    x += 1;
                    y += 1;
                }
                self.forward[at(k)] = x as usize;
                // Backward diagonal c = k - delta reached d - 1 edits from the far corner.
                let c = k - delta;
                if odd && c >= -(d - 1) && c <= d - 1 && x >= self.backward[at(c)] as isize {
                    let abs = |x: isize, y: isize| (xs.start + x as usize, ys.start + y as usize);
                    let ((sx, sy), (ex, ey)) = (abs(x0, y0), abs(x, y));
                    return (sx, sy, ex, ey);
                }
            }
            for c in (-d..=d).rev().step_by(2) {
                // Backward diagonal c is forward diagonal c + delta; its x only decreases.
                let r = &self.backward;
                let mut x = if c == d || (c != -d && r[at(c - 1)] < r[at(c + 1)]) {
                    r[at(c - 1)] as isize
                } else {
                    r[at(c + 1)] as isize - 1
                };
                let mut y = x - (c + delta);
                let (x0, y0) = (x, y);
                while x > 0 && y > 0 && a[x as usize - 1] == b[y as usize - 1] {
                    x -= 1;
                    y -= 1;
                }
                self.backward[at(c)] = x as usize;
                let k = c + delta;
                if !odd && k >= -d && k <= d && self.forward[at(k)] as isize >= x {
                    let abs = |x: isize, y: isize| (xs.start + x as usize, ys.start + y as usize);
                    let ((sx, sy), (ex, ey)) = (abs(x, y), abs(x0, y0));
                    return (sx, sy, ex, ey);
                }
            }
        }
        unreachable!("a middle snake within (n + m) / 2 + 1 edits")
    }
}

/// Slides each run of changed lines of one file (`changed`, over its `lines`) where GNU diff
/// has it: up as far as it goes (joining the runs it meets), then down as far as it goes
/// (joining again), then back up to the last place where it faced a change in the other file
/// (`other`), if it passed one, so that a deletion and an insertion print as one change. A run
/// moves by one when the line leaving it equals the line joining it, which keeps the script's
/// length and its other file's side as they are.
fn slide(lines: &[usize], changed: &mut [bool], other: &[bool]) {
    let n = changed.len();
    // `j` walks the other file in step: the unchanged lines of both pair off in order.
    let (mut i, mut j) = (0, 0);
    let skip_other = |j: &mut usize| {
        while *j < other.len() && other[*j] {
            *j += 1;
        }
    };
    loop {
        skip_other(&mut j);
        while i < n && !changed[i] {
            i += 1;
            j += 1;
            skip_other(&mut j);
        }
        if i == n {
            return;
        }
        let mut start = i;
        let mut end = i;
        while end < n && changed[end] {
            end += 1;
        }
        // Here `j` is where the other file's unchanged line facing `end` is, past any change
        // of the other file facing this run.
        loop {
            let size = end - start;
            while start > 0 && lines[start - 1] == lines[end - 1] {
                start -= 1;
                end -= 1;
                changed[start] = true;
                changed[end] = false;
                while start > 0 && changed[start - 1] {
                    start -= 1;
                }
                // The line now ending the run pairs with the other's unchanged line before.
                j = unchanged_before(other, j);
            }
            // Where the run's end last faced a change in the other file.
            let mut facing = (j > 0 && other[j - 1]).then_some(end);
            while end < n && lines[start] == lines[end] {
                changed[start] = false;
                changed[end] = true;
                start += 1;
                end += 1;
                while end < n && changed[end] {
                    end += 1;
                }
                j += 1;
                if j < other.len() && other[j] {
                    skip_other(&mut j);
                    facing = Some(end);
                }
            }
            if end - start == size {
                if let Some(to) = facing {
                    while end > to {
                        start -= 1;
                        end -= 1;
                        changed[start] = true;
                        changed[end] = false;
                        j = unchanged_before(other, j);
                    }
                }
                break;
            }
        }
        i = end;
    }
}

/// The last unchanged line of `other` before `j` (there is one: it paired with the line that
/// just joined the run).
fn unchanged_before(other: &[bool], mut j: usize) -> usize {
    j -= 1;
    while other[j] {
        j -= 1;
    }
    j
}

/// The runs of `gone` and `added` paired into changes, walking both files in step.
fn changes(gone: &[bool], added: &[bool]) -> Vec<Change> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < gone.len() || j < added.len() {
        if gone.get(i) == Some(&false) && added.get(j) == Some(&false) {
            i += 1;
            j += 1;
            continue;
        }
        let (i0, j0) = (i, j);
        while i < gone.len() && gone[i] {
            i += 1;
        }
        while j < added.len() && added[j] {
            j += 1;
        }
        out.push(Change {
            old: i0..i,
            new: j0..j,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(text: &str) -> Vec<usize> {
        text.bytes().map(usize::from).collect()
    }

    /// The common lines a script keeps: each change replaced by nothing.
    fn kept(a: &[usize], changes: &[Change]) -> Vec<usize> {
        let mut out = Vec::new();
        let mut at = 0;
        for c in changes {
            out.extend_from_slice(&a[at..c.old.start]);
            at = c.old.end;
        }
        out.extend_from_slice(&a[at..]);
        out
    }

    /// The length of a longest common subsequence, by the quadratic table.
    fn lcs(a: &[usize], b: &[usize]) -> usize {
        let mut row = vec![0; b.len() + 1];
        for x in a {
            let mut diag = 0;
            for (j, y) in b.iter().enumerate() {
                let up = row[j + 1];
                row[j + 1] = if x == y { diag + 1 } else { up.max(row[j]) };
                diag = up;
            }
        }
        row[b.len()]
    }

    #[test]
    fn edges() {
        assert_eq!(diff(&[], &[]), []);
        assert_eq!(
            diff(&[], &ids("ab")),
            [Change {
                old: 0..0,
                new: 0..2
            }]
        );
        assert_eq!(
            diff(&ids("ab"), &[]),
            [Change {
                old: 0..2,
                new: 0..0
            }]
        );
        assert_eq!(diff(&ids("abc"), &ids("abc")), []);
        assert_eq!(
            diff(&ids("abc"), &ids("axc")),
            [Change {
                old: 1..2,
                new: 1..2
            }]
        );
        // An inserted repeat goes last, as GNU prints it (`1a2`).
        assert_eq!(
            diff(&ids("a"), &ids("aa")),
            [Change {
                old: 1..1,
                new: 1..2
            }]
        );
    }

    /// Every script is minimal and keeps the same lines of both sides, on many small inputs.
    #[test]
    fn minimal_and_consistent() {
        let mut seed = 0x2545_f491_u64;
        let mut next = move |bound: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % bound) as usize
        };
        for _ in 0..3000 {
            let a: Vec<usize> = (0..next(12)).map(|_| next(4)).collect();
            let b: Vec<usize> = (0..next(12)).map(|_| next(4)).collect();
            let script = diff(&a, &b);
            let common = kept(&a, &script);
            let new: Vec<Change> = (script.iter())
                .map(|c| Change {
                    old: c.new.clone(),
                    new: c.old.clone(),
                })
                .collect();
            assert_eq!(common, kept(&b, &new), "{a:?} {b:?}");
            assert_eq!(common.len(), lcs(&a, &b), "{a:?} {b:?}");
            for pair in script.windows(2) {
                assert!(pair[0].old.end < pair[1].old.start || pair[0].new.end < pair[1].new.start);
            }
        }
    }
}
