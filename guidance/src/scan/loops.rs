//! Loops and what is known of their size: Python `for`/`while` blocks and comprehensions,
//! JavaScript `for`/`while` statements and iteration methods (`.forEach`, `.map`, ...), with
//! their nesting, constant bounds and whether they can ever end: a condition is read against
//! what the body changes (a name only read, `lines[i]` or `len(lines)`, is not changed; a
//! counter stepped away from its limit never reaches it).

use sandbox_protocol::Language;

use super::consts::const_value;
use super::lexer::{Kind, NONE, Source};

/// One loop and what is known of its size.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LoopInfo {
    pub line: u32,
    /// 1 for a top-level loop, 2 inside another loop, ...
    pub depth: u32,
    /// Iterations of this loop per run of its enclosing code, when the bound is a constant.
    pub bound: Option<f64>,
    /// Iterations of this loop's body in total (the product of the enclosing known bounds,
    /// with unknown ones counted as `unknown_as`), for the fuel estimate.
    pub total_known: f64,
    /// How many enclosing-or-self bounds are unknown.
    pub unknown_levels: u32,
    /// The loop can never end: `while True` / `for (;;)` with no `break` anywhere in its body,
    /// or one of the other [`Endless`] causes.
    pub endless: bool,
    /// Why it never ends, when [`LoopInfo::endless`].
    pub endless_cause: Option<Endless>,
    /// Short description: `for i in range(1000000)`, `while True`, `.forEach(...)`.
    pub header: String,
    /// The last line of the loop's body (its header's line for a one-line loop).
    pub last_line: u32,
}

/// Why a loop can never end: each has its own fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Endless {
    /// An always-true condition (`while True`, `for (;;)`) and no break/return in the body.
    NoExit,
    /// Nothing in the body changes the variables of the condition (`while (i < n)` with no
    /// `i++`).
    UnchangedCondition,
    /// The counter moves away from its limit: `for (let i = 10; i >= 0; i++)`.
    WrongDirection,
    /// The condition assigns a constant instead of comparing: `while (status = 'pending')`.
    AssignmentInCondition,
}

/// Every loop, with nesting.
pub(crate) fn loops(src: &Source<'_>) -> Vec<LoopInfo> {
    match src.language {
        Language::Python => python_loops(src),
        Language::JavaScript => js_loops(src),
    }
}

/// Python block loops (nested by indentation) and comprehension loops (nested within their
/// statement).
fn python_loops(src: &Source<'_>) -> Vec<LoopInfo> {
    let t = &src.tokens;
    let mut out = Vec::new();
    // Block loops: (indent, bound, token index).
    let mut stack: Vec<(u32, Option<f64>)> = Vec::new();
    // Comprehension loops of the current statement multiply each other.
    let mut inline: Vec<Option<f64>> = Vec::new();
    // `from itertools import count`: a bare `count(...)` is the infinite one (read once).
    let imports_itertools_names = src.code.contains("from itertools import");
    for i in 0..t.len() {
        let tok = &t[i];
        if tok.line_start {
            while stack
                .last()
                .is_some_and(|(indent, _)| *indent >= tok.indent)
            {
                stack.pop();
            }
            inline.clear();
        }
        if tok.kind != Kind::Ident || !matches!(tok.text, "for" | "while") || src.is_member(i) {
            continue;
        }
        let block = tok.line_start || (i > 0 && t[i - 1].line_start && src.is(i - 1, "async"));
        let (bound, header, endless) = if tok.text == "for" {
            let (bound, header) = python_for_bound(src, i);
            // `for n in itertools.count(1):` never runs out: only a `break` ends it.
            let endless = (block
                && python_infinite_iterator(src, i, imports_itertools_names)
                && !python_body_has_break(src, i))
            .then_some(Endless::NoExit);
            (bound, header, endless)
        } else {
            let always = src.is(i + 1, "True")
                || (t
                    .get(i + 1)
                    .is_some_and(|n| n.kind == Kind::Number && n.text == "1"));
            let no_exit = block && !python_body_has_break(src, i);
            let unchanged = (!always && no_exit)
                .then(|| python_unchanged_condition(src, i))
                .flatten();
            let header = match (&unchanged, always) {
                (_, true) => "while True".to_owned(),
                (Some(condition), false) => format!("while {condition}"),
                (None, false) => "while ...".to_owned(),
            };
            let away = (!always && no_exit && unchanged.is_none())
                .then(|| python_counts_away(src, i))
                .flatten();
            let header = match &away {
                Some(condition) => format!("while {condition}"),
                None => header,
            };
            let cause = if always && no_exit {
                Some(Endless::NoExit)
            } else if away.is_some() {
                Some(Endless::WrongDirection)
            } else {
                unchanged.map(|_| Endless::UnchangedCondition)
            };
            (None, header, cause)
        };
        let enclosing: Vec<Option<f64>> = stack
            .iter()
            .map(|(_, b)| *b)
            .chain(inline.iter().copied())
            .collect();
        let mut found = loop_info(tok.line, &enclosing, bound, endless, header);
        if block {
            found.last_line = python_block_last_line(src, i);
        }
        out.push(found);
        if block {
            stack.push((tok.indent, bound));
        } else {
            inline.push(bound);
        }
    }
    out
}

/// A loop at `line` inside the `enclosing` loops (their bounds, outermost first).
fn loop_info(
    line: u32,
    enclosing: &[Option<f64>],
    bound: Option<f64>,
    endless: Option<Endless>,
    header: String,
) -> LoopInfo {
    let mut total = 1.0f64;
    let mut unknown = 0;
    for b in enclosing.iter().chain(std::iter::once(&bound)) {
        match b {
            Some(v) => total *= v.max(0.0),
            None => unknown += 1,
        }
    }
    LoopInfo {
        line,
        depth: enclosing.len() as u32 + 1,
        bound,
        total_known: total,
        unknown_levels: unknown,
        endless: endless.is_some(),
        endless_cause: endless,
        header,
        last_line: line,
    }
}

/// The bound of `for ... in range(...)` or of a literal list, and a short header.
fn python_for_bound(src: &Source<'_>, i: usize) -> (Option<f64>, String) {
    let t = &src.tokens;
    let depth = t[i].depth;
    let limit = (i + 200).min(t.len());
    let Some(in_at) = (i + 1..limit).find(|&k| src.is(k, "in") && t[k].depth == depth) else {
        return (None, "for ...".to_owned());
    };
    let target: Vec<&str> = t[i + 1..in_at].iter().map(|t| t.text).collect();
    let target = target.join(" ").replace(" ,", ",");
    let j = in_at + 1;
    if src.ident(j) == Some("range") && src.is(j + 1, "(") && src.partner[j + 1] != NONE {
        let close = src.partner[j + 1];
        let args = top_level_args(src, j + 1, close);
        let value = |(a, b): &(usize, usize)| const_value(src, *a, *b);
        let bound = (|| match args.as_slice() {
            [stop] => value(stop),
            [start, stop] => Some(value(stop)? - value(start)?),
            [start, stop, step] => {
                let step = value(step)?;
                (step != 0.0).then_some(())?;
                Some(((value(stop)? - value(start)?) / step).ceil())
            }
            _ => None,
        })()
        .map(|v| v.max(0.0));
        return (bound, src.text(i, close).to_owned());
    }
    if (src.is(j, "[") || src.is(j, "(")) && src.partner[j] != NONE {
        let close = src.partner[j];
        let has_for = (j + 1..close).any(|k| src.is(k, "for"));
        if !has_for && close > j + 1 {
            let count = top_level_args(src, j, close).len();
            return (
                Some(count as f64),
                format!("for {target} in [{count} items]"),
            );
        }
    }
    let what = src
        .dotted(j)
        .map(|(name, _)| name)
        .unwrap_or_else(|| "...".into());
    (None, format!("for {target} in {what}"))
}

/// Comma-separated argument spans inside the brackets `open`..`close`.
fn top_level_args(src: &Source<'_>, open: usize, close: usize) -> Vec<(usize, usize)> {
    let depth = src.tokens[open].depth + 1;
    let mut spans = Vec::new();
    let mut start = open + 1;
    for k in open + 1..close {
        if src.is(k, ",") && src.tokens[k].depth == depth {
            spans.push((start, k));
            start = k + 1;
        }
    }
    if start < close {
        spans.push((start, close));
    }
    spans
}

/// The last line of the block of the loop whose keyword is at `header`.
fn python_block_last_line(src: &Source<'_>, header: usize) -> u32 {
    let t = &src.tokens;
    let indent = t[header].indent;
    (header + 1..t.len())
        .take_while(|&k| !(t[k].line_start && t[k].indent <= indent))
        .last()
        .map_or(t[header].line, |k| t[k].line)
}

/// True when the block of the loop at `header` can leave it (`break`, `return`, `raise`).
fn python_body_has_break(src: &Source<'_>, header: usize) -> bool {
    let t = &src.tokens;
    let indent = t[header].indent;
    let mut k = header + 1;
    while k < t.len() {
        if t[k].line_start && t[k].indent <= indent {
            return false;
        }
        if t[k].kind == Kind::Ident && matches!(t[k].text, "break" | "return" | "raise") {
            return true;
        }
        k += 1;
    }
    false
}

/// True when the `for` at `i` iterates an iterator that never runs out: `itertools.count()`,
/// `itertools.cycle(xs)`, `itertools.repeat(x)` with no count (also imported by name, `from
/// itertools import count`).
fn python_infinite_iterator(src: &Source<'_>, i: usize, imports_itertools_names: bool) -> bool {
    let t = &src.tokens;
    let depth = t[i].depth;
    let limit = (i + 200).min(t.len());
    let Some(in_at) = (i + 1..limit).find(|&k| src.is(k, "in") && t[k].depth == depth) else {
        return false;
    };
    let Some((name, after)) = src.dotted(in_at + 1) else {
        return false;
    };
    let bare = name.strip_prefix("itertools.").unwrap_or(&name);
    let from_itertools = name.starts_with("itertools.") || imports_itertools_names;
    if !from_itertools || !src.is(after, "(") || src.partner[after] == NONE {
        return false;
    }
    let close = src.partner[after];
    match bare {
        "count" | "cycle" => src.is(close + 1, ":"),
        // `repeat(x, 3)` stops; `repeat(x)` does not.
        "repeat" => src.is(close + 1, ":") && top_level_args(src, after, close).len() == 1,
        _ => false,
    }
}

/// Calls a `while` condition may make without changing anything: they read their arguments
/// (`len(lines)`, `abs(x)`), so the condition changes only when those do.
const PURE_CALLS: [&str; 10] = [
    "len", "abs", "int", "float", "round", "min", "max", "sum", "bool", "str",
];

/// The names a Python `while` condition reads (the header's keyword at `header`, its `:` at
/// `colon`), and among them the containers (the arguments of `len(...)` and the like), or
/// `None` when it reads anything else (an attribute, a subscript, another call, `:=`), which
/// the body may change unseen.
fn python_condition_names<'a>(
    src: &Source<'a>,
    header: usize,
    colon: usize,
) -> Option<(Vec<&'a str>, Vec<&'a str>)> {
    let t = &src.tokens;
    let (mut names, mut containers) = (Vec::new(), Vec::new());
    // The closing brackets of the pure calls open at this point.
    let mut open_calls: Vec<usize> = Vec::new();
    for (at, tok) in t.iter().enumerate().take(colon).skip(header + 1) {
        if open_calls.last() == Some(&at) {
            open_calls.pop();
            continue;
        }
        match tok.kind {
            Kind::Ident if matches!(tok.text, "not" | "and" | "or" | "in" | "is" | "None") => {}
            Kind::Ident
                if src.is(at + 1, "(")
                    && PURE_CALLS.contains(&tok.text)
                    && !src.is_member(at)
                    && src.partner[at + 1] != NONE
                    && src.partner[at + 1] < colon =>
            {
                open_calls.push(src.partner[at + 1]);
            }
            // The `(` of the pure call just pushed.
            Kind::Op
                if tok.text == "("
                    && open_calls
                        .last()
                        .is_some_and(|close| src.partner[at] == *close) => {}
            Kind::Ident if src.is(at + 1, "(") || src.is(at + 1, ".") || src.is(at + 1, "[") => {
                return None;
            }
            Kind::Ident => {
                names.push(tok.text);
                if !open_calls.is_empty() {
                    containers.push(tok.text);
                }
            }
            Kind::Op if matches!(tok.text, "." | "[" | "(" | ":=") => return None,
            _ => {}
        }
    }
    Some((names, containers))
}

/// True when the token at `k`, a use of a name, may change what the name holds: it is
/// assigned, rebound (`for`, `del`, `as`, a tuple target), mutated through a method call or an
/// item or attribute assignment; a container (`containers`) also when it is handed to a call,
/// which may fill or empty it. Reading it (`x[i]`, `node.value`) changes nothing.
fn python_changes_name(src: &Source<'_>, k: usize, containers: &[&str]) -> bool {
    let t = &src.tokens;
    let assignment = |j: usize| {
        t.get(j).is_some_and(|n| {
            n.kind == Kind::Op
                && n.text.ends_with('=')
                && !matches!(n.text, "==" | "!=" | "<=" | ">=")
        })
    };
    if assignment(k + 1) {
        return true;
    }
    if k > 0 && matches!(t[k - 1].text, "for" | "del" | "as") && t[k - 1].kind != Kind::Str {
        return true;
    }
    // `a, x = ...` rebinds it; `print('left', x)` only hands it to a call (below).
    let listed = (k > 0 && src.is(k - 1, ",")) || src.is(k + 1, ",");
    if listed && t[k].depth == 0 {
        return true;
    }
    // `x.append(v)` may change it; `x.attr = v` changes what it holds.
    if src.is(k + 1, ".") {
        return src.is(k + 3, "(") || assignment(k + 3);
    }
    // `x[i] = v` changes it; `x[i]` reads it.
    if src.is(k + 1, "[") {
        let close = src.partner[k + 1];
        return close == NONE || assignment(close + 1);
    }
    let handed = k > 0 && (src.is(k - 1, "(") || src.is(k - 1, ",")) && t[k].depth > 0;
    handed && containers.contains(&t[k].text)
}

/// The condition of the `while` at `header` (`count < 10`) when nothing in the loop's body
/// can change it: its names are plain variables (or the arguments of `len(...)` and the like)
/// that the body never assigns, rebinds with `for`, deletes or calls a method on, and no
/// function declares global. Such a loop never ends once it starts (the counter that is never
/// incremented, the index of `while i < len(lines)` never moved). `None` for conditions with
/// other calls, attributes or subscripts, which the body may change unseen.
fn python_unchanged_condition(src: &Source<'_>, header: usize) -> Option<String> {
    let t = &src.tokens;
    let colon = (header + 1..t.len().min(header + 64))
        .find(|&k| src.is(k, ":") && t[k].depth == t[header].depth)?;
    let (names, containers) = python_condition_names(src, header, colon)?;
    if names.is_empty() || declared_global(src, &names) {
        return None;
    }
    let indent = t[header].indent;
    let mut k = colon + 1;
    while k < t.len() && !(t[k].line_start && t[k].indent <= indent) {
        if t[k].kind == Kind::Ident
            && names.contains(&t[k].text)
            && !src.is_member(k)
            && python_changes_name(src, k, &containers)
        {
            return None;
        }
        k += 1;
    }
    Some(src.text(header + 1, colon - 1).to_owned())
}

/// True when a `global` or `nonlocal` line names one of `names`: a function may change it.
fn declared_global(src: &Source<'_>, names: &[&str]) -> bool {
    let t = &src.tokens;
    t.iter().enumerate().any(|(k, tok)| {
        matches!(tok.text, "global" | "nonlocal") && tok.kind == Kind::Ident && {
            let line = tok.line;
            t[k..]
                .iter()
                .take_while(|n| n.line == line)
                .any(|n| names.contains(&n.text))
        }
    })
}

/// The condition of the `while` at `header` when its counter only moves away from its limit:
/// `while remaining > 0:` whose body only adds a positive number to `remaining` (`+= 1`,
/// `= remaining + 2`), or `while i < n:` whose body only subtracts. Once the loop starts, the
/// test stays true. The limit's names must not change in the body either.
fn python_counts_away(src: &Source<'_>, header: usize) -> Option<String> {
    let t = &src.tokens;
    let colon = (header + 1..t.len().min(header + 64))
        .find(|&k| src.is(k, ":") && t[k].depth == t[header].depth)?;
    let cmp = (header + 1..colon)
        .find(|&k| t[k].kind == Kind::Op && matches!(t[k].text, "<" | "<=" | ">" | ">="))?;
    let plain = |from: usize, to: usize| {
        (from..to).all(|k| match t[k].kind {
            Kind::Ident => !src.is(k + 1, "(") && !src.is(k + 1, ".") && !src.is(k + 1, "["),
            Kind::Number => true,
            Kind::Op => matches!(t[k].text, "+" | "-" | "*" | "/" | "//"),
            _ => false,
        })
    };
    if !plain(header + 1, cmp) || !plain(cmp + 1, colon) {
        return None;
    }
    // The counter is alone on one side; "up" means the test holds while it is large.
    let (counter, holds_when_large) = if cmp == header + 2 && t[header + 1].kind == Kind::Ident {
        (t[header + 1].text, matches!(t[cmp].text, ">" | ">="))
    } else if cmp + 2 == colon && t[cmp + 1].kind == Kind::Ident {
        (t[cmp + 1].text, matches!(t[cmp].text, "<" | "<="))
    } else {
        return None;
    };
    let limit_names: Vec<&str> = (header + 1..colon)
        .filter(|&k| t[k].kind == Kind::Ident && t[k].text != counter)
        .map(|k| t[k].text)
        .collect();
    if declared_global(src, &[counter]) {
        return None;
    }
    let indent = t[header].indent;
    let mut k = colon + 1;
    let mut direction: Option<bool> = None;
    while k < t.len() && !(t[k].line_start && t[k].indent <= indent) {
        if t[k].kind == Kind::Ident && !src.is_member(k) {
            if matches!(t[k].text, "break" | "return" | "raise") {
                return None;
            }
            if limit_names.contains(&t[k].text) && python_changes_name(src, k, &[]) {
                return None;
            }
            if t[k].text == counter && python_changes_name(src, k, &[]) {
                let step = python_constant_step(src, k, counter)?;
                let up = step > 0.0;
                if direction.is_some_and(|d| d != up) {
                    return None;
                }
                direction = Some(up);
            }
        }
        k += 1;
    }
    (direction? == holds_when_large).then(|| src.text(header + 1, colon - 1).to_owned())
}

/// The constant step of the update of `name` at `k`: `+= 2` gives 2, `-= 1` gives -1,
/// `= name + 3` gives 3; `None` for any other update.
fn python_constant_step(src: &Source<'_>, k: usize, name: &str) -> Option<f64> {
    let t = &src.tokens;
    let number = |j: usize| {
        let tok = t.get(j).filter(|n| n.kind == Kind::Number)?;
        let ends = t
            .get(j + 1)
            .is_none_or(|n| n.line_start || n.line != tok.line);
        ends.then(|| tok.text.replace('_', "").parse::<f64>().ok())
            .flatten()
            .filter(|v| *v > 0.0)
    };
    match t.get(k + 1).map(|n| n.text)? {
        "+=" => number(k + 2),
        "-=" => number(k + 2).map(|v| -v),
        "=" if src.is(k + 2, name) => match t.get(k + 3).map(|n| n.text)? {
            "+" => number(k + 4),
            "-" => number(k + 4).map(|v| -v),
            _ => None,
        },
        _ => None,
    }
}

/// A JavaScript `for`/`while` statement as found at its keyword.
struct JsLoop {
    bound: Option<f64>,
    header: String,
    endless: Option<Endless>,
    /// Index of the token that ends the body.
    body_end: usize,
}

/// JavaScript loops, nested by the extent of their bodies.
fn js_loops(src: &Source<'_>) -> Vec<LoopInfo> {
    let t = &src.tokens;
    let mut out = Vec::new();
    // Open loops: (index where the body ends, bound).
    let mut stack: Vec<(usize, Option<f64>)> = Vec::new();
    let enclosing = |stack: &[(usize, Option<f64>)]| -> Vec<Option<f64>> {
        stack.iter().map(|(_, b)| *b).collect()
    };
    for i in 0..t.len() {
        while stack.last().is_some_and(|(end, _)| i > *end) {
            stack.pop();
        }
        if let Some((header, close)) = js_iteration_method(src, i) {
            let mut info = loop_info(t[i].line, &enclosing(&stack), None, None, header);
            info.last_line = t.get(close).map_or(t[i].line, |end| end.line);
            out.push(info);
            if close != NONE {
                stack.push((close, None));
            }
        } else if let Some(found) = js_statement_loop(src, i).or_else(|| js_do_while(src, i)) {
            let mut info = loop_info(
                t[i].line,
                &enclosing(&stack),
                found.bound,
                found.endless,
                found.header,
            );
            info.last_line = t.get(found.body_end).map_or(t[i].line, |end| end.line);
            out.push(info);
            stack.push((found.body_end, found.bound));
        }
    }
    out
}

/// `.forEach(` and friends at `i`: the header and the index of the call's `)`.
fn js_iteration_method(src: &Source<'_>, i: usize) -> Option<(String, usize)> {
    let tok = &src.tokens[i];
    let method = tok.kind == Kind::Ident
        && src.is_member(i)
        && matches!(
            tok.text,
            "forEach" | "map" | "filter" | "reduce" | "some" | "every" | "find" | "flatMap"
        )
        && src.is(i + 1, "(");
    method.then(|| (format!(".{}(...)", tok.text), src.partner[i + 1]))
}

/// A `for (...)` or `while (...)` statement at `i` (not the `while` of a `do { } while`).
fn js_statement_loop(src: &Source<'_>, i: usize) -> Option<JsLoop> {
    let t = &src.tokens;
    let tok = &t[i];
    if tok.kind != Kind::Ident || src.is_member(i) || !matches!(tok.text, "for" | "while") {
        return None;
    }
    let mut open = i + 1;
    if src.is(open, "await") {
        open += 1;
    }
    if !src.is(open, "(") || src.partner[open] == NONE {
        return None;
    }
    let close = src.partner[open];
    // `do { } while (x);`: the loop was the `do` block, nothing to push.
    if tok.text == "while" && i > 0 && src.is(i - 1, "}") {
        let block_open = src.partner[i - 1];
        if block_open != NONE && block_open > 0 && src.is(block_open - 1, "do") {
            return None;
        }
    }
    let (bound, header, always) = if tok.text == "for" {
        js_for_bound(src, open, close)
    } else {
        js_while_head(src, open, close)
    };
    let body_end = js_body_end(src, close).min(t.len());
    let leaves = (close + 1..body_end)
        .any(|k| t[k].kind == Kind::Ident && matches!(t[k].text, "break" | "return" | "throw"));
    let endless = if leaves {
        None
    } else if always {
        Some(Endless::NoExit)
    } else if tok.text == "while" && js_assigns_constant(src, open, close) {
        Some(Endless::AssignmentInCondition)
    } else if tok.text == "while" && js_unchanged_condition(src, open, close, close + 1..body_end) {
        Some(Endless::UnchangedCondition)
    } else if (tok.text == "for" && js_counts_away(src, open, close))
        || (tok.text == "while" && js_while_counts_away(src, open, close, close + 1..body_end))
    {
        Some(Endless::WrongDirection)
    } else {
        None
    };
    let header = match endless {
        Some(_) if tok.text == "while" && !always => format!("while {}", src.text(open, close)),
        _ => header,
    };
    Some(JsLoop {
        bound,
        header,
        endless,
        body_end,
    })
}

/// A `do { ... } while (...)` at its `do`: the body runs first, then the same tests as a
/// `while` (always true, an assignment, a condition nothing in the body changes, a counter
/// moving away). Its `body_end` is the `)` of the condition, where the statement ends.
fn js_do_while(src: &Source<'_>, i: usize) -> Option<JsLoop> {
    let t = &src.tokens;
    if !src.is(i, "do") || src.is_member(i) || !src.is(i + 1, "{") {
        return None;
    }
    let block_close = src.partner[i + 1];
    if block_close == NONE || !src.is(block_close + 1, "while") {
        return None;
    }
    let open = block_close + 2;
    if !src.is(open, "(") || src.partner[open] == NONE {
        return None;
    }
    let close = src.partner[open];
    let body = i + 2..block_close;
    let (_, _, always) = js_while_head(src, open, close);
    let leaves = body
        .clone()
        .any(|k| t[k].kind == Kind::Ident && matches!(t[k].text, "break" | "return" | "throw"));
    let endless = if leaves {
        None
    } else if always {
        Some(Endless::NoExit)
    } else if js_assigns_constant(src, open, close) {
        Some(Endless::AssignmentInCondition)
    } else if js_unchanged_condition(src, open, close, body.clone()) {
        Some(Endless::UnchangedCondition)
    } else if js_while_counts_away(src, open, close, body) {
        Some(Endless::WrongDirection)
    } else {
        None
    };
    Some(JsLoop {
        bound: None,
        header: format!("do {{ ... }} while {}", src.text(open, close)),
        endless,
        body_end: close,
    })
}

/// `while (true)` / `while (1)` loop forever unless the body leaves; other conditions are
/// unknown.
fn js_while_head(src: &Source<'_>, open: usize, close: usize) -> (Option<f64>, String, bool) {
    let always = close == open + 2
        && (src.is(open + 1, "true")
            || src
                .tokens
                .get(open + 1)
                .is_some_and(|n| n.kind == Kind::Number && n.text == "1"));
    let header = if always {
        "while (true)"
    } else {
        "while (...)"
    };
    (None, header.to_owned(), always)
}

/// The end of the body after the loop head's `)` at `close`: its `}`, or the `;` of a single
/// statement.
fn js_body_end(src: &Source<'_>, close: usize) -> usize {
    let t = &src.tokens;
    if src.is(close + 1, "{") && src.partner[close + 1] != NONE {
        src.partner[close + 1]
    } else {
        let depth = t.get(close + 1).map_or(0, |t| t.depth);
        (close + 1..t.len())
            .find(|&k| src.is(k, ";") && t[k].depth == depth)
            .unwrap_or(t.len())
    }
}

/// `while (x = 'pending')`: the condition assigns a constant (a string, a non-zero number,
/// `true`), so it is always true; `===` was meant.
fn js_assigns_constant(src: &Source<'_>, open: usize, close: usize) -> bool {
    let t = &src.tokens;
    close == open + 4
        && t[open + 1].kind == Kind::Ident
        && src.is(open + 2, "=")
        && match t[open + 3].kind {
            Kind::Str => !t[open + 3].text.is_empty(),
            Kind::Number => t[open + 3].text.parse::<f64>().is_ok_and(|v| v != 0.0),
            _ => src.is(open + 3, "true"),
        }
}

/// A `while (...)` whose condition reads only plain variables (and their `.length`) that
/// nothing in the body (`close`..`body_end`) assigns, increments or mutates through a method
/// call, and with no function call in it: it can never change once the loop runs.
fn js_unchanged_condition(
    src: &Source<'_>,
    open: usize,
    close: usize,
    body: std::ops::Range<usize>,
) -> bool {
    let (body_start, body_end) = (body.start, body.end);
    let t = &src.tokens;
    let mut names: Vec<&str> = Vec::new();
    // `this.pos`: a field of the object, read like a variable (changed through `this.pos`).
    let mut fields: Vec<&str> = Vec::new();
    let this_field = |k: usize| k >= 2 && src.is_member(k) && src.is(k - 2, "this");
    for (k, tok) in t.iter().enumerate().take(close).skip(open + 1) {
        match tok.kind {
            Kind::Ident if this_field(k) && !src.is(k + 1, "(") && !src.is(k + 1, "[") => {
                fields.push(tok.text);
            }
            Kind::Ident if src.is_member(k) && tok.text != "length" => return false,
            Kind::Ident if src.is_member(k) => {}
            Kind::Ident if tok.text == "this" && src.is(k + 1, ".") => {}
            Kind::Ident if matches!(tok.text, "true" | "false" | "null" | "undefined") => {}
            Kind::Ident if src.is(k + 1, "(") || src.is(k + 1, "[") => return false,
            Kind::Ident => names.push(tok.text),
            Kind::Op if matches!(tok.text, "(" | "[" | "=" | "++" | "--") => return false,
            _ => {}
        }
    }
    if names.is_empty() && fields.is_empty() {
        return false;
    }
    let changes = |k: usize| {
        let next = t.get(k + 1);
        let assigned = next.is_some_and(|n| {
            n.kind == Kind::Op
                && (n.text == "++"
                    || n.text == "--"
                    || (n.text.ends_with('=')
                        && !matches!(n.text, "==" | "===" | "!=" | "!==" | "<=" | ">=")))
        });
        // `++i`, and `++this.pos` for a field (its `++` before `this`).
        let prefixed = (k > 0 && matches!(t[k - 1].text, "++" | "--"))
            || (this_field(k) && k >= 3 && matches!(t[k - 3].text, "++" | "--"));
        // `xs.push(v)`, `xs[i] = v`, `xs.length = 0`: the variable's value changes in place.
        let through_member = src.is(k + 1, ".")
            && t.get(k + 2)
                .is_some_and(|m| src.is(k + 3, "(") || (m.text == "length" && src.is(k + 3, "=")));
        let through_index = src.is(k + 1, "[")
            && src.partner[k + 1] != NONE
            && t.get(src.partner[k + 1] + 1).is_some_and(|n| {
                n.kind == Kind::Op
                    && n.text.ends_with('=')
                    && !matches!(n.text, "==" | "===" | "!=" | "!==" | "<=" | ">=")
            });
        // A declaration or a destructuring assignment (`[done, v] = next()`) rebinds it.
        let declared = k > 0 && matches!(t[k - 1].text, "let" | "var" | "const");
        let destructured = (body_start..body_end).any(|j| {
            matches!(t[j].text, "]" | "}")
                && src.is(j + 1, "=")
                && src.partner[j] != NONE
                && src.partner[j] < k
                && k < j
        });
        assigned || prefixed || through_member || through_index || declared || destructured
    };
    let calls_unknown = (body_start..body_end).any(|k| {
        // A function the body calls may change a variable of the enclosing scope; a method of
        // the object (`this.advance()`), a field of it.
        t[k].kind == Kind::Ident
            && (!src.is_member(k) || (!fields.is_empty() && this_field(k)))
            && src.is(k + 1, "(")
            && !matches!(
                t[k].text,
                "if" | "for" | "while" | "switch" | "catch" | "function"
            )
    });
    // A field is changed only through `this`; another object's field of the same name is
    // another value, and anything else handed `this` may change it.
    let hands_this = !fields.is_empty()
        && (body_start..body_end).any(|k| src.is(k, "this") && !src.is(k + 1, "."));
    !calls_unknown
        && !hands_this
        && !(body_start..body_end).any(|k| {
            t[k].kind == Kind::Ident
                && ((!src.is_member(k) && names.contains(&t[k].text))
                    || (this_field(k) && fields.contains(&t[k].text)))
                && changes(k)
        })
}

/// `for (let i = 10; i >= 0; i++)`: the counter tested against a limit moves away from it
/// (increments with `>`/`>=`, decrements with `<`/`<=`), and the body never assigns it.
fn js_counts_away(src: &Source<'_>, open: usize, close: usize) -> bool {
    let t = &src.tokens;
    let depth = t[open].depth + 1;
    let semis: Vec<usize> = (open + 1..close)
        .filter(|&k| src.is(k, ";") && t[k].depth == depth)
        .collect();
    let [first, second] = semis.as_slice() else {
        return false;
    };
    // The test: `NAME OP ...` with a comparison right after the counter.
    let (Some(name), Some(op)) = (t.get(first + 1), t.get(first + 2)) else {
        return false;
    };
    if name.kind != Kind::Ident || !matches!(op.text, "<" | "<=" | ">" | ">=") {
        return false;
    }
    let update: Vec<&str> = (second + 1..close).map(|k| t[k].text).collect();
    let up = matches!(update.as_slice(), [n, "++"] | ["++", n] if *n == name.text)
        || matches!(update.as_slice(), [n, "+=", v] if *n == name.text && v.parse::<f64>().is_ok_and(|v| v > 0.0));
    let down = matches!(update.as_slice(), [n, "--"] | ["--", n] if *n == name.text)
        || matches!(update.as_slice(), [n, "-=", v] if *n == name.text && v.parse::<f64>().is_ok_and(|v| v > 0.0));
    let body_end = js_body_end(src, close).min(t.len());
    let assigned_in_body = (close + 1..body_end).any(|k| {
        t[k].text == name.text
            && !src.is_member(k)
            && t.get(k + 1).is_some_and(|n| {
                n.kind == Kind::Op
                    && (matches!(n.text, "++" | "--")
                        || (n.text.ends_with('=')
                            && !matches!(n.text, "==" | "===" | "!=" | "!==" | "<=" | ">=")))
            })
    });
    let away = (up && matches!(op.text, ">" | ">=")) || (down && matches!(op.text, "<" | "<="));
    away && !assigned_in_body
}

/// `while (n > 0) { n++; }`: the counter the condition tests against a limit only moves away
/// from it in the body (`++`, `+= 2`, `n = n + 1` under `>`/`>=`; their opposites under
/// `<`/`<=`), and nothing changes the limit's names.
fn js_while_counts_away(
    src: &Source<'_>,
    open: usize,
    close: usize,
    body: std::ops::Range<usize>,
) -> bool {
    let (body_start, body_end) = (body.start, body.end);
    let t = &src.tokens;
    let Some(cmp) = (open + 1..close)
        .find(|&k| t[k].kind == Kind::Op && matches!(t[k].text, "<" | "<=" | ">" | ">="))
    else {
        return false;
    };
    let plain = |from: usize, to: usize| {
        (from..to).all(|k| match t[k].kind {
            Kind::Ident => !src.is(k + 1, "(") && !src.is(k + 1, "[") && !src.is_member(k),
            Kind::Number => true,
            Kind::Op => matches!(t[k].text, "+" | "-" | "*" | "/"),
            _ => false,
        })
    };
    if !plain(open + 1, cmp) || !plain(cmp + 1, close) {
        return false;
    }
    let (counter, holds_when_large) = if cmp == open + 2 && t[open + 1].kind == Kind::Ident {
        (t[open + 1].text, matches!(t[cmp].text, ">" | ">="))
    } else if cmp + 2 == close && t[cmp + 1].kind == Kind::Ident {
        (t[cmp + 1].text, matches!(t[cmp].text, "<" | "<="))
    } else {
        return false;
    };
    let limits: Vec<&str> = (open + 1..close)
        .filter(|&k| t[k].kind == Kind::Ident && t[k].text != counter)
        .map(|k| t[k].text)
        .collect();
    let positive = |j: usize| {
        t.get(j).is_some_and(|n| {
            n.kind == Kind::Number
                && n.text
                    .replace('_', "")
                    .parse::<f64>()
                    .is_ok_and(|v| v > 0.0)
        }) && t
            .get(j + 1)
            .is_none_or(|n| matches!(n.text, ";" | "}") || n.line != t[j].line)
    };
    let mut direction: Option<bool> = None;
    for k in body_start..body_end.min(t.len()) {
        if t[k].kind != Kind::Ident || src.is_member(k) {
            continue;
        }
        if matches!(t[k].text, "break" | "return" | "throw") {
            return false;
        }
        let next = t.get(k + 1).map_or("", |n| n.text);
        let prev = if k > 0 { t[k - 1].text } else { "" };
        let writes = matches!(next, "++" | "--")
            || matches!(prev, "++" | "--")
            || (next.ends_with('=') && !matches!(next, "==" | "===" | "!=" | "!==" | "<=" | ">="));
        if !writes {
            continue;
        }
        if limits.contains(&t[k].text) {
            return false;
        }
        if t[k].text != counter {
            continue;
        }
        let up = match (prev, next) {
            (_, "++") | ("++", _) => true,
            (_, "--") | ("--", _) => false,
            (_, "+=") if positive(k + 2) => true,
            (_, "-=") if positive(k + 2) => false,
            (_, "=") if src.is(k + 2, counter) && src.is(k + 3, "+") && positive(k + 4) => true,
            (_, "=") if src.is(k + 2, counter) && src.is(k + 3, "-") && positive(k + 4) => false,
            _ => return false,
        };
        if direction.is_some_and(|d| d != up) {
            return false;
        }
        direction = Some(up);
    }
    direction == Some(holds_when_large)
}

/// `for (let i = A; i < B; i++)` gives B - A; `for (...;;)` is endless; `of`/`in` are unknown.
fn js_for_bound(src: &Source<'_>, open: usize, close: usize) -> (Option<f64>, String, bool) {
    let t = &src.tokens;
    let depth = t[open].depth + 1;
    let semis: Vec<usize> = (open + 1..close)
        .filter(|&k| src.is(k, ";") && t[k].depth == depth)
        .collect();
    let shown = || {
        let text = src.text(open, close);
        let mut end = text.len().min(60);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let ellipsis = if end < text.len() { " ...)" } else { "" };
        format!("for {}{ellipsis}", &text[..end])
    };
    let [first, second] = semis.as_slice() else {
        return (None, shown(), false);
    };
    if *second == first + 1 {
        return (None, "for (;;)".to_owned(), true);
    }
    let cmp = (first + 1..*second).find(|&k| {
        t[k].kind == Kind::Op && matches!(t[k].text, "<" | "<=" | ">" | ">=") && t[k].depth == depth
    });
    let start = (open + 1..*first)
        .find(|&k| src.is(k, "=") && t[k].depth == depth)
        .and_then(|eq| const_value(src, eq + 1, *first));
    let bound = cmp.and_then(|c| {
        let limit = const_value(src, c + 1, *second)?;
        let from = start?;
        let inclusive = matches!(t[c].text, "<=" | ">=");
        let span = if matches!(t[c].text, "<" | "<=") {
            limit - from
        } else {
            from - limit
        };
        Some((span + if inclusive { 1.0 } else { 0.0 }).max(0.0))
    });
    (bound, shown(), false)
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{js, py};
    use super::*;

    #[test]
    fn python_loop_bounds_and_nesting() {
        let s = py(
            "for i in range(10**6):\n    x = i\nfor a in range(1, 101):\n    for b in range(0, 50, 2):\n        pass\n\
             total = sum(x*y for x in range(1_000) for y in range(10))\nwhile True:\n    pass\n",
        );
        let l = loops(&s);
        assert_eq!(l.len(), 6, "{l:?}");
        assert_eq!(l[0].bound, Some(1e6));
        assert_eq!(l[0].depth, 1);
        assert_eq!((l[1].bound, l[1].depth), (Some(100.0), 1));
        assert_eq!((l[2].bound, l[2].depth), (Some(25.0), 2));
        assert_eq!(l[2].total_known, 2500.0);
        assert_eq!(l[4].total_known, 10_000.0);
        assert!(l[5].endless);
        assert!(!l[0].endless);
    }

    #[test]
    fn a_while_whose_condition_never_changes_is_endless() {
        let s = py("count = 0\nwhile count < 10:\n    print(count)\n");
        let l = loops(&s);
        assert!(l[0].endless, "{:?}", l[0].header);
        assert_eq!(l[0].header, "while count < 10");
        for changes in [
            "count = 0\nwhile count < 10:\n    count += 1\n",
            "i = 0\nwhile i < 3:\n    i = i + 1\n",
            "xs = [1]\nwhile xs:\n    xs.pop()\n",
            "n = 5\nwhile n:\n    a, n = n, n - 1\n",
            "done = False\ndef step():\n    global done\n    done = True\nwhile not done:\n    step()\n",
            "while queue_size() > 0:\n    work()\n",
            "x = 3\nwhile x > 0:\n    if x:\n        break\n",
        ] {
            assert!(!loops(&py(changes)).iter().any(|l| l.endless), "{changes}");
        }
    }

    #[test]
    fn what_the_body_reads_does_not_change_the_condition() {
        // `len(lines)` reads `lines`, and `lines[i]` reads it too: `i` never moves.
        let code = "lines = ['a', '']\ni = 0\nn = 0\nwhile i < len(lines):\n    if lines[i]:\n        n += 1\n";
        let l = loops(&py(code));
        assert_eq!(l[0].endless_cause, Some(Endless::UnchangedCondition));
        assert_eq!(l[0].header, "while i < len(lines)");
        // A node read but never advanced.
        let l = loops(&py("while node:\n    total += node.value\n"));
        assert_eq!(l[0].endless_cause, Some(Endless::UnchangedCondition));
        for changes in [
            "while i < len(lines):\n    i += 1\n",
            "while len(xs) < 5:\n    xs.append(1)\n",
            "while len(xs) < 5:\n    fill(xs)\n",
            "while len(d) < 5:\n    d[k] = 1\n",
            "while node:\n    node = node.next\n",
            "while i < len(f(xs)):\n    pass\n",
        ] {
            assert!(!loops(&py(changes)).iter().any(|l| l.endless), "{changes}");
        }
    }

    #[test]
    fn a_python_counter_moving_away_from_its_limit_never_ends() {
        let l = loops(&py(
            "remaining = 10\nwhile remaining > 0:\n    remaining += 1\n",
        ));
        assert_eq!(l[0].endless_cause, Some(Endless::WrongDirection));
        assert_eq!(l[0].header, "while remaining > 0");
        let l = loops(&py("while 0 < n:\n    n = n + 2\n"));
        assert_eq!(l[0].endless_cause, Some(Endless::WrongDirection));
        let l = loops(&py("while i < 10:\n    i -= 1\n"));
        assert_eq!(l[0].endless_cause, Some(Endless::WrongDirection));
        // Handed to a call beside other arguments, the counter is read, not rebound.
        let l = loops(&py(
            "n = 10\nwhile n > 0:\n    print('left', n)\n    n += 1\n",
        ));
        assert_eq!(l[0].endless_cause, Some(Endless::WrongDirection));
        for ends in [
            "while remaining > 0:\n    remaining -= 1\n",
            "while i < n:\n    i += 1\n",
            "while i < n:\n    i -= 1\n    n -= 2\n",
            "while x > 0:\n    x += 1\n    if x > 99:\n        break\n",
            "while x > 0:\n    x += 1\n    x -= 3\n",
            "while x > 0:\n    x += step\n",
        ] {
            assert!(!loops(&py(ends)).iter().any(|l| l.endless), "{ends}");
        }
    }

    #[test]
    fn javascript_loops_that_cannot_end_and_why() {
        let endless = [
            (
                "let i = 0, t = 0;\nwhile (i < items.length) {\n  t += items[i];\n}",
                Endless::UnchangedCondition,
                "while (i < items.length)",
            ),
            (
                "for (let i = 10; i >= 0; i++) {\n  x.push(i);\n}",
                Endless::WrongDirection,
                "for (let i = 10; i >= 0; i++)",
            ),
            (
                "for (let i = 0; i < 10; i -= 1) {}",
                Endless::WrongDirection,
                "for (let i = 0; i < 10; i -= 1)",
            ),
            (
                "while (status = 'pending') {\n  status = poll();\n}",
                Endless::AssignmentInCondition,
                "while (status = 'pending')",
            ),
            (
                "let left = 3;\nwhile (left > 0) {\n  left++;\n}",
                Endless::WrongDirection,
                "while (left > 0)",
            ),
            (
                "while (i < n) {\n  i = i - 1;\n}",
                Endless::WrongDirection,
                "while (i < n)",
            ),
        ];
        for (code, cause, header) in endless {
            let l = loops(&js(code));
            assert_eq!(
                (l[0].endless_cause, l[0].header.as_str()),
                (Some(cause), header),
                "{code}"
            );
            assert!(l[0].last_line > 1 || !code.contains('\n'), "{code}: {l:?}");
        }
        for ends in [
            "while (i < n) { i++; }",
            "while (i < n) { ++i; }",
            "while (i < n) i += 2;",
            "while (xs.length) { xs.pop(); }",
            "while (xs.length > 0) { xs.length = 0; }",
            "while (q.length) { step(); }",
            "while (i < n) { if (x) break; }",
            "while (done === false) { [done, v] = next(); }",
            "while (ok()) { }",
            "for (let i = 10; i >= 0; i--) {}",
            "for (let i = 10; i >= 0; i++) { i -= 2; }",
            "while (s = read()) { use(s); }",
            "while (left > 0) { left--; }",
            "while (left > 0) { left++; left -= 2; }",
            "while (i < n) { i--; n -= 2; }",
            "while (x > 0) { x++; if (x > 9) break; }",
        ] {
            let l = loops(&js(ends));
            assert!(!l[0].endless, "{ends}: {:?}", l[0]);
        }
    }

    #[test]
    fn infinite_iterators_and_do_while_loops() {
        let py = |code| Source::new(code, Language::Python);
        for endless in [
            "import itertools\nfor n in itertools.count(1):\n    xs.append(n)\n",
            "from itertools import count\nfor k in count():\n    total += k\n",
            "import itertools\nfor c in itertools.cycle('ab'):\n    print(c)\n",
        ] {
            let l = loops(&py(endless));
            assert_eq!(l[0].endless_cause, Some(Endless::NoExit), "{endless}");
        }
        for ends in [
            "import itertools\nfor n in itertools.count(1):\n    if n > 9:\n        break\n",
            "import itertools\nfor x in itertools.repeat(0, 3):\n    print(x)\n",
            "for k in count():\n    total += k\n",
        ] {
            assert!(!loops(&py(ends))[0].endless, "{ends}");
        }
        let js = |code| Source::new(code, Language::JavaScript);
        let l = loops(&js(
            "let page = 1;\ndo {\n  items.push(page);\n} while (page <= 10);",
        ));
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].endless_cause, Some(Endless::UnchangedCondition));
        assert_eq!(l[0].header, "do { ... } while (page <= 10)");
        assert_eq!((l[0].line, l[0].last_line), (2, 4));
        let l = loops(&js("do {\n  n++;\n} while (n > 0);"));
        assert_eq!(l[0].endless_cause, Some(Endless::WrongDirection));
        for ends in [
            "do {\n  n--;\n} while (n > 0);",
            "do {\n  if (x) break;\n} while (true);",
            "do {\n  ok = f();\n} while (!ok);",
        ] {
            assert!(!loops(&js(ends))[0].endless, "{ends}");
        }
    }

    #[test]
    fn loops_know_their_last_line() {
        let l = loops(&py(
            "for i in range(9):\n    a = i\n    print(a)\nprint('done')\n",
        ));
        assert_eq!((l[0].line, l[0].last_line), (1, 3));
        let l = loops(&js("for (let i = 0; i < 9; i++) {\n  a = i;\n}\nlog(a);"));
        assert_eq!((l[0].line, l[0].last_line), (1, 3));
    }

    #[test]
    fn python_while_true_with_break_is_not_endless() {
        let s = py("while True:\n    if done():\n        break\nprint(1)");
        assert!(!loops(&s)[0].endless);
    }

    #[test]
    fn js_loop_bounds_and_nesting() {
        let s = js(
            "for (let i = 0; i < 1e6; i++) { for (let j = 0; j <= 9; j++) s += j; }\n\
             for (const f of files) {}\nwhile (true) { x++ }\nitems.forEach(x => total += x);\n\
             do { n-- } while (n > 0);\nfor (;;) { if (x) break; }",
        );
        let l = loops(&s);
        let headers: Vec<&str> = l.iter().map(|l| l.header.as_str()).collect();
        // The `do { } while` is a loop of its own (a data-dependent one that ends).
        assert_eq!(l.len(), 7, "{headers:?}");
        assert_eq!(l[0].bound, Some(1e6));
        assert_eq!((l[1].bound, l[1].depth), (Some(10.0), 2));
        assert_eq!(l[2].bound, None);
        assert!(l[3].endless);
        assert_eq!(l[4].header, ".forEach(...)");
        assert_eq!(
            (l[5].header.as_str(), l[5].endless),
            ("do { ... } while (n > 0)", false)
        );
        assert!(!l[6].endless);
    }

    #[test]
    fn loop_headers_and_endlessness_table() {
        let cases: [(Language, &str, &str, bool); 9] = [
            (Language::Python, "while 1:\n    x = 2", "while True", true),
            (Language::Python, "while x:\n    pass", "while x", true),
            (
                Language::Python,
                "while x:\n    x = f()",
                "while ...",
                false,
            ),
            (
                Language::Python,
                "while True:\n    return",
                "while True",
                false,
            ),
            (
                Language::Python,
                "for k in d.items():\n    pass",
                "for k in d.items",
                false,
            ),
            (
                Language::Python,
                "for x in [1, 2, 3]:\n    pass",
                "for x in [3 items]",
                false,
            ),
            (
                Language::JavaScript,
                "while (1) { x++ }",
                "while (true)",
                true,
            ),
            (
                Language::JavaScript,
                "while (true) { throw e }",
                "while (true)",
                false,
            ),
            (Language::JavaScript, "for (;;) x++;", "for (;;)", true),
        ];
        for (language, code, header, endless) in cases {
            let found = loops(&Source::new(code, language));
            assert_eq!(found.len(), 1, "{code}: {found:?}");
            assert_eq!(
                (found[0].header.as_str(), found[0].endless),
                (header, endless),
                "{code}"
            );
        }
    }
}
