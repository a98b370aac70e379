//! Reading a patch: the unified (`---`/`+++`/`@@`), context (`***`/`---`/`***************`)
//! and normal (`2c2`, `<`/`---`/`>`) diffs in it, one [`FilePatch`] per file, with the text
//! leading up to each (GNU shows it when it cannot find the file) and every hunk turned into
//! one list of [`Op`]s whatever its format, so that applying never looks at the format again.

/// One line of a file or of a hunk: its bytes without the newline, and whether it had one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub text: Vec<u8>,
    pub newline: bool,
}

/// What a hunk does with one line: keep it (context), remove it, or add it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Keep,
    Remove,
    Add,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    pub kind: Kind,
    pub line: Line,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Unified,
    Context,
    Normal,
}

/// One hunk: where its old lines begin and its lines in order.
#[derive(Debug, Clone)]
pub struct Hunk {
    /// The first line numbers of the old and new sides as the header gives them (for an empty
    /// side, the line before it: `@@ -4,0 +5,2 @@`).
    pub old_start: usize,
    pub new_start: usize,
    pub ops: Vec<Op>,
}

impl Hunk {
    pub fn old_len(&self) -> usize {
        self.ops.iter().filter(|o| o.kind != Kind::Add).count()
    }

    pub fn new_len(&self) -> usize {
        self.ops.iter().filter(|o| o.kind != Kind::Remove).count()
    }

    /// The 0-based index of the old file's line where the hunk's old lines begin.
    pub fn old_at(&self) -> usize {
        if self.old_len() == 0 {
            self.old_start
        } else {
            self.old_start.saturating_sub(1)
        }
    }

    /// The same hunk undoing itself (`-R`).
    pub fn reversed(&self) -> Hunk {
        let mut ops = Vec::with_capacity(self.ops.len());
        // A change (removals, then additions) stays in that order: the additions, now
        // removals, go first.
        let mut i = 0;
        while i < self.ops.len() {
            if self.ops[i].kind == Kind::Keep {
                ops.push(self.ops[i].clone());
                i += 1;
                continue;
            }
            let start = i;
            while i < self.ops.len() && self.ops[i].kind != Kind::Keep {
                i += 1;
            }
            let run = &self.ops[start..i];
            let flip = |k: Kind| {
                if k == Kind::Add {
                    Kind::Remove
                } else {
                    Kind::Add
                }
            };
            for want in [Kind::Add, Kind::Remove] {
                for op in run.iter().filter(|o| o.kind == want) {
                    ops.push(Op {
                        kind: flip(op.kind),
                        line: op.line.clone(),
                    });
                }
            }
        }
        Hunk {
            old_start: self.new_start,
            new_start: self.old_start,
            ops,
        }
    }

    /// Keep lines at the top and at the bottom.
    pub fn context(&self) -> (usize, usize) {
        let top = self.ops.iter().take_while(|o| o.kind == Kind::Keep).count();
        let bottom = self
            .ops
            .iter()
            .rev()
            .take_while(|o| o.kind == Kind::Keep)
            .count();
        if top == self.ops.len() {
            (top, 0)
        } else {
            (top, bottom)
        }
    }
}

/// One file's part of the patch.
#[derive(Debug, Clone)]
pub struct FilePatch {
    pub format: Format,
    /// The names in the `---`/`+++` (or `***`/`---`) lines, without their dates; `None` for
    /// a normal diff.
    pub old_name: Option<String>,
    pub new_name: Option<String>,
    /// The name of an `Index:` line in the leading text.
    pub index_name: Option<String>,
    /// Whether each side is absent: `/dev/null`, or the epoch date `diff -N` gives.
    pub old_absent: bool,
    pub new_absent: bool,
    /// The header lines as given (the reject file repeats them).
    pub header: Vec<Vec<u8>>,
    /// The text from the end of the previous file's part up to and with the header.
    pub leading: Vec<Vec<u8>>,
    /// The 1-based line of the patch where the first hunk begins.
    pub first_hunk_line: usize,
    pub hunks: Vec<Hunk>,
}

/// What went wrong reading the patch: GNU's message, without `patch: **** `.
#[derive(Debug)]
pub struct Malformed(pub String);

/// The patch's lines, each with and without its newline.
fn split_lines(bytes: &[u8]) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        match rest.iter().position(|b| *b == b'\n') {
            Some(at) => {
                lines.push(Line {
                    text: rest[..at].to_vec(),
                    newline: true,
                });
                rest = &rest[at + 1..];
            }
            None => {
                lines.push(Line {
                    text: rest.to_vec(),
                    newline: false,
                });
                rest = &[];
            }
        }
    }
    lines
}

/// The lines of a file to patch.
pub fn file_lines(bytes: &[u8]) -> Vec<Line> {
    split_lines(bytes)
}

/// A header's name and whether its date says the file is absent: `NAME\tDATE`, or for names
/// without a tab, the first word.
fn header_name(rest: &[u8]) -> (String, bool) {
    let text = String::from_utf8_lossy(rest).into_owned();
    let text = text.trim_end_matches('\r');
    let (name, date) = match text.split_once('\t') {
        Some((n, d)) => (n.to_owned(), d.to_owned()),
        None => match text.split_once(' ') {
            Some((n, d)) => (n.to_owned(), d.to_owned()),
            None => (text.to_owned(), String::new()),
        },
    };
    let name = name.trim_matches('"').to_owned();
    // diff -N marks a missing side with the epoch (in any time zone: 1969-12-31 or 1970-01-01).
    let epoch = date.starts_with("1970-01-01 00:00:00") || date.starts_with("1969-12-31");
    let absent = name == "/dev/null" || epoch;
    (name, absent)
}

/// `A` or `A,B` as a start and a count, given how a bare `A` counts.
fn range(text: &str, bare_count: impl Fn(usize) -> usize) -> Option<(usize, usize)> {
    match text.split_once(',') {
        Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
        None => {
            let a = text.parse().ok()?;
            Some((a, bare_count(a)))
        }
    }
}

/// `@@ -A,B +C,D @@` as its four numbers.
fn unified_header(line: &[u8]) -> Option<(usize, usize, usize, usize)> {
    let text = std::str::from_utf8(line).ok()?;
    let rest = text.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let (new, _) = rest.split_once(" @@")?;
    let (a, b) = range(old, |_| 1)?;
    let (c, d) = range(new, |_| 1)?;
    Some((a, b, c, d))
}

/// `*** A,B ****` or `--- A,B ----` as a start and an end (inclusive; 0 count when empty).
fn context_range(line: &[u8], lead: &str, tail: &str) -> Option<(usize, usize)> {
    let text = std::str::from_utf8(line).ok()?.trim_end_matches('\r');
    let inner = text.strip_prefix(lead)?.strip_suffix(tail)?;
    let (a, b) = range(inner, |a| a)?;
    // `A,B` is lines A to B; a bare `0` is an empty file.
    let count = if b < a || (a == 0 && b == 0) {
        0
    } else {
        b - a + 1
    };
    Some((a, count))
}

/// A normal diff's command line `A[,B]{a,c,d}C[,D]`: its letter and two ranges (start, end).
fn normal_command(line: &[u8]) -> Option<(u8, (usize, usize), (usize, usize))> {
    let text = std::str::from_utf8(line).ok()?.trim_end_matches('\r');
    let at = text.find(['a', 'c', 'd'])?;
    let letter = text.as_bytes()[at];
    let number = |s: &str| -> Option<(usize, usize)> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit() || b == b',') {
            return None;
        }
        range(s, |a| a)
    };
    Some((letter, number(&text[..at])?, number(&text[at + 1..])?))
}

fn no_newline_marker(line: &Line) -> bool {
    line.text.starts_with(b"\\ ")
}

/// Reads all of the patch: each file's part, with the text before it.
pub fn parse(bytes: &[u8]) -> Result<Vec<FilePatch>, Malformed> {
    let lines = split_lines(bytes);
    let mut files = Vec::new();
    let mut leading: Vec<Vec<u8>> = Vec::new();
    let mut index_name = None;
    let mut i = 0;
    let starts = |i: usize, prefix: &[u8]| lines.get(i).is_some_and(|l| l.text.starts_with(prefix));
    while i < lines.len() {
        let line = &lines[i].text;
        if let Some(rest) = line.strip_prefix(b"Index: ") {
            index_name = Some(String::from_utf8_lossy(rest).trim().to_owned());
        }
        let unified = starts(i, b"--- ") && starts(i + 1, b"+++ ") && starts(i + 2, b"@@ -");
        let context = starts(i, b"*** ") && starts(i + 1, b"--- ") && starts(i + 2, b"********");
        let normal = normal_command(line).is_some();
        if !(unified || context || normal) {
            leading.push(line.clone());
            i += 1;
            continue;
        }
        let (format, header) = if unified {
            (Format::Unified, 2)
        } else if context {
            (Format::Context, 2)
        } else {
            (Format::Normal, 0)
        };
        let mut file = FilePatch {
            format,
            old_name: None,
            new_name: None,
            index_name: index_name.take(),
            old_absent: false,
            new_absent: false,
            header: lines[i..i + header]
                .iter()
                .map(|l| l.text.clone())
                .collect(),
            leading: std::mem::take(&mut leading),
            first_hunk_line: i + header + 1,
            hunks: Vec::new(),
        };
        file.leading.extend(file.header.iter().cloned());
        if header == 2 {
            let (old, old_absent) = header_name(&lines[i].text[4..]);
            let (new, new_absent) = header_name(&lines[i + 1].text[4..]);
            file.old_name = Some(old);
            file.new_name = Some(new);
            file.old_absent = old_absent;
            file.new_absent = new_absent;
        }
        i += header;
        loop {
            let next = match format {
                Format::Unified => unified_hunk(&lines, &mut i)?,
                Format::Context => context_hunk(&lines, &mut i)?,
                Format::Normal => normal_hunk(&lines, &mut i)?,
            };
            match next {
                Some(h) => file.hunks.push(h),
                None => break,
            }
        }
        files.push(file);
    }
    Ok(files)
}

fn malformed(lines: &[Line], i: usize) -> Malformed {
    let text = lines
        .get(i)
        .map(|l| String::from_utf8_lossy(&l.text).into_owned())
        .unwrap_or_default();
    Malformed(format!("malformed patch at line {}: {text}", i + 1))
}

/// Marks the last op's line as without a newline if a `\ No newline` line follows.
fn take_marker(lines: &[Line], i: &mut usize, last: Option<&mut Op>) {
    if lines.get(*i).is_some_and(no_newline_marker) {
        if let Some(op) = last {
            op.line.newline = false;
        }
        *i += 1;
    }
}

fn unified_hunk(lines: &[Line], i: &mut usize) -> Result<Option<Hunk>, Malformed> {
    let Some((a, b, c, d)) = lines.get(*i).and_then(|l| unified_header(&l.text)) else {
        return Ok(None);
    };
    *i += 1;
    let (mut old, mut new) = (0, 0);
    let mut ops: Vec<Op> = Vec::new();
    while old < b || new < d {
        let Some(line) = lines.get(*i) else {
            return Err(Malformed(format!(
                "unexpected end of file in patch at line {}",
                *i
            )));
        };
        let (kind, text) = match line.text.first() {
            Some(b' ') => (Kind::Keep, &line.text[1..]),
            Some(b'-') => (Kind::Remove, &line.text[1..]),
            Some(b'+') => (Kind::Add, &line.text[1..]),
            // An empty line is an empty context line whose space was lost (by an editor).
            None => (Kind::Keep, &line.text[..]),
            // Any other line starting with a backslash is malformed (GNU's words), and
            // stopping here is what keeps this loop moving.
            Some(b'\\') if no_newline_marker(line) => {
                take_marker(lines, i, ops.last_mut());
                continue;
            }
            _ => return Err(malformed(lines, *i)),
        };
        match kind {
            Kind::Keep => {
                old += 1;
                new += 1;
            }
            Kind::Remove => old += 1,
            Kind::Add => new += 1,
        }
        if old > b || new > d {
            return Err(malformed(lines, *i));
        }
        ops.push(Op {
            kind,
            line: Line {
                text: text.to_vec(),
                newline: true,
            },
        });
        *i += 1;
    }
    take_marker(lines, i, ops.last_mut());
    Ok(Some(Hunk {
        old_start: a,
        new_start: c,
        ops,
    }))
}

/// A context diff's section lines (`  `, `- `, `+ `, `! ` and a text), up to `end`.
fn context_section(
    lines: &[Line],
    i: &mut usize,
    count: usize,
    stop: &dyn Fn(&Line) -> bool,
) -> Result<Vec<(u8, Line)>, Malformed> {
    let mut out: Vec<(u8, Line)> = Vec::new();
    while out.len() < count {
        let Some(line) = lines.get(*i) else { break };
        if stop(line) {
            break;
        }
        if no_newline_marker(line) {
            if let Some(last) = out.last_mut() {
                last.1.newline = false;
            }
            *i += 1;
            continue;
        }
        let mark = line.text.first().copied().unwrap_or(b' ');
        if !matches!(mark, b' ' | b'-' | b'+' | b'!')
            || line.text.get(1).is_some_and(|b| *b != b' ')
        {
            return Err(malformed(lines, *i));
        }
        let text = line.text.get(2..).unwrap_or(&[]).to_vec();
        out.push((
            mark,
            Line {
                text,
                newline: true,
            },
        ));
        *i += 1;
    }
    if lines.get(*i).is_some_and(no_newline_marker) {
        if let Some(last) = out.last_mut() {
            last.1.newline = false;
        }
        *i += 1;
    }
    Ok(out)
}

fn context_hunk(lines: &[Line], i: &mut usize) -> Result<Option<Hunk>, Malformed> {
    if !lines
        .get(*i)
        .is_some_and(|l| l.text.starts_with(b"***************"))
    {
        return Ok(None);
    }
    let Some((a, old_count)) = lines
        .get(*i + 1)
        .and_then(|l| context_range(&l.text, "*** ", " ****"))
    else {
        return Err(malformed(lines, *i + 1));
    };
    *i += 2;
    let is_new_header = |l: &Line| context_range(&l.text, "--- ", " ----").is_some();
    let old = context_section(lines, i, old_count, &is_new_header)?;
    let Some((c, new_count)) = lines
        .get(*i)
        .and_then(|l| context_range(&l.text, "--- ", " ----"))
    else {
        return Err(malformed(lines, *i));
    };
    *i += 1;
    let is_next_hunk = |l: &Line| l.text.starts_with(b"***************");
    let new = context_section(lines, i, new_count, &is_next_hunk)?;
    let op = |kind, line: &Line| Op {
        kind,
        line: line.clone(),
    };
    let mut ops = Vec::new();
    if old.is_empty() {
        ops.extend(
            new.iter()
                .map(|(m, l)| op(if *m == b' ' { Kind::Keep } else { Kind::Add }, l)),
        );
    } else if new.is_empty() {
        ops.extend(
            old.iter()
                .map(|(m, l)| op(if *m == b' ' { Kind::Keep } else { Kind::Remove }, l)),
        );
    } else {
        let (mut o, mut n) = (0, 0);
        while o < old.len() || n < new.len() {
            let om = old.get(o).map(|x| x.0);
            let nm = new.get(n).map(|x| x.0);
            if om == Some(b'-') {
                ops.push(op(Kind::Remove, &old[o].1));
                o += 1;
            } else if nm == Some(b'+') {
                ops.push(op(Kind::Add, &new[n].1));
                n += 1;
            } else if om == Some(b'!') {
                while old.get(o).is_some_and(|x| x.0 == b'!') {
                    ops.push(op(Kind::Remove, &old[o].1));
                    o += 1;
                }
                while new.get(n).is_some_and(|x| x.0 == b'!') {
                    ops.push(op(Kind::Add, &new[n].1));
                    n += 1;
                }
            } else if nm == Some(b'!') {
                ops.push(op(Kind::Add, &new[n].1));
                n += 1;
            } else if om.is_some() && nm.is_some() {
                // Context on both sides: the old side's copy.
                ops.push(op(Kind::Keep, &old[o].1));
                o += 1;
                n += 1;
            } else {
                return Err(malformed(lines, *i));
            }
        }
    }
    let hunk = Hunk {
        old_start: a,
        new_start: c,
        ops,
    };
    if hunk.old_len() != old_count || hunk.new_len() != new_count {
        return Err(malformed(lines, *i));
    }
    Ok(Some(hunk))
}

fn normal_hunk(lines: &[Line], i: &mut usize) -> Result<Option<Hunk>, Malformed> {
    let Some((letter, (a, b), (c, d))) = lines.get(*i).and_then(|l| normal_command(&l.text)) else {
        return Ok(None);
    };
    *i += 1;
    let old_count = if letter == b'a' {
        0
    } else {
        b + 1 - a.min(b + 1)
    };
    let new_count = if letter == b'd' {
        0
    } else {
        d + 1 - c.min(d + 1)
    };
    let mut ops: Vec<Op> = Vec::new();
    let mut read = |prefix: &[u8], kind, count: usize, i: &mut usize| -> Result<(), Malformed> {
        for _ in 0..count {
            match lines.get(*i) {
                Some(l) if l.text.starts_with(prefix) => {
                    ops.push(Op {
                        kind,
                        line: Line {
                            text: l.text[prefix.len()..].to_vec(),
                            newline: true,
                        },
                    });
                    *i += 1;
                    take_marker(lines, i, ops.last_mut());
                }
                _ => return Err(malformed(lines, *i)),
            }
        }
        Ok(())
    };
    read(b"< ", Kind::Remove, old_count, i)?;
    if letter == b'c' {
        if !lines.get(*i).is_some_and(|l| l.text == b"---") {
            return Err(malformed(lines, *i));
        }
        *i += 1;
    }
    read(b"> ", Kind::Add, new_count, i)?;
    // `4a5` adds after line 4: the hunk's old side is empty and begins after line 4.
    Ok(Some(Hunk {
        old_start: a,
        new_start: c,
        ops,
    }))
}
