//! Functions that call themselves (Python `def`, JavaScript `function` and arrow functions
//! bound to a name): deep recursion overflows the interpreter's fixed WebAssembly stack, and a
//! function that calls itself from two places or more (naive `fib`) does work exponential in
//! its argument unless it is memoised.

use sandbox_protocol::Language;

use super::lexer::{Kind, NONE, Source};

/// Functions that call themselves: (name, line of the definition).
pub(crate) fn recursive_functions(src: &Source<'_>) -> Vec<(String, u32)> {
    self_calls(src)
        .into_iter()
        .map(|(name, line, _)| (name, line))
        .collect()
}

/// Functions that call themselves from two places or more (`fib(n - 1) + fib(n - 2)`), when
/// nothing in the code memoises: (name, line of the definition). Their calls grow
/// exponentially with the argument.
pub(crate) fn branching_recursion(src: &Source<'_>) -> Vec<(String, u32)> {
    self_calls(src)
        .into_iter()
        .filter(|(name, line, sites)| *sites >= 2 && !memoised(src, name, *line))
        .map(|(name, line, _)| (name, line))
        .collect()
}

/// Names that say a function's results are kept: a decorator (`@cache`), a wrapper
/// (`memoize(f)`) or the table the function reads (`memo[n]`, `cache.get(n)`, a `Map`).
fn is_memo_name(text: &str) -> bool {
    matches!(
        text,
        "cache" | "lru_cache" | "memo" | "memoize" | "memoized" | "cached" | "Map"
    )
}

/// Whether the function `name` defined at `line` is memoised: a memo name in its decorators,
/// in its own body, or wrapping it (`fib = lru_cache(None)(fib)`, `memoize(fib)`). A table
/// declared and never read by the function (`const memo = {};` beside a naive `fib`) is not.
fn memoised(src: &Source<'_>, name: &str, line: u32) -> bool {
    let t = &src.tokens;
    let Some(def) = t.iter().position(|tok| tok.line == line && tok.line_start) else {
        return true;
    };
    // The decorator lines just above a Python `def`.
    let mut start = def;
    while let Some(prev) = (0..start).rev().find(|&k| t[k].line_start)
        && src.is(prev, "@")
    {
        start = prev;
    }
    let end = match src.language {
        Language::Python => (def + 1..t.len())
            .find(|&k| t[k].line_start && t[k].indent <= t[def].indent)
            .map_or(t.len(), |k| k),
        Language::JavaScript => (def..t.len())
            .take_while(|&k| t[k].line == line)
            .find_map(|k| js_function_at(src, k).filter(|(n, _)| *n == name))
            .map_or(t.len(), |(_, end)| end + 1),
    };
    let in_reach = t[start..end]
        .iter()
        .any(|tok| tok.kind == Kind::Ident && is_memo_name(tok.text));
    // A memo name called with the function as an argument, anywhere.
    let wrapped = (0..t.len()).any(|k| {
        t[k].kind == Kind::Ident
            && is_memo_name(t[k].text)
            && src.is(k + 1, "(")
            && src.partner[k + 1] != NONE
            && t[k + 2..src.partner[k + 1]]
                .iter()
                .any(|tok| tok.text == name)
    });
    in_reach || wrapped || lru_wrapped(src, name)
}

/// `lru_cache(maxsize=None)(fib)`: the wrapper's second call holds the function.
fn lru_wrapped(src: &Source<'_>, name: &str) -> bool {
    let t = &src.tokens;
    (0..t.len()).any(|k| {
        is_memo_name(t[k].text)
            && src.is(k + 1, "(")
            && src.partner[k + 1] != NONE
            && src.is(src.partner[k + 1] + 1, "(")
            && src.is(src.partner[k + 1] + 2, name)
    })
}

/// Functions that call themselves: (name, line of the definition, how many places call it).
fn self_calls(src: &Source<'_>) -> Vec<(String, u32, u32)> {
    let t = &src.tokens;
    let mut found: Vec<(String, u32, u32)> = Vec::new();
    match src.language {
        Language::Python => {
            // Open defs: (indent, name, line).
            let mut open: Vec<(u32, &str, u32)> = Vec::new();
            for i in 0..t.len() {
                if t[i].line_start {
                    while open.last().is_some_and(|(ind, _, _)| *ind >= t[i].indent) {
                        open.pop();
                    }
                    let def_at = if src.is(i, "async") { i + 1 } else { i };
                    if src.is(def_at, "def")
                        && let Some(name) = src.ident(def_at + 1)
                    {
                        open.push((t[i].indent, name, t[i].line));
                        continue;
                    }
                }
                if t[i].kind == Kind::Ident
                    && src.is(i + 1, "(")
                    && (!src.is_member(i) || on_own_object(src, i))
                    && let Some((_, name, line)) =
                        open.iter().rev().find(|(_, n, _)| *n == t[i].text)
                    && !src.is(i.wrapping_sub(1), "def")
                {
                    count(&mut found, name, *line);
                }
            }
        }
        Language::JavaScript => {
            // Open functions: (index of the body's closing brace, name, line).
            let mut open: Vec<(usize, &str, u32)> = Vec::new();
            for i in 0..t.len() {
                while open.last().is_some_and(|(end, _, _)| i > *end) {
                    open.pop();
                }
                if let Some((name, end)) = js_function_at(src, i) {
                    if end != NONE {
                        open.push((end, name, t[i].line));
                    }
                    continue;
                }
                if t[i].kind == Kind::Ident
                    && src.is(i + 1, "(")
                    && (!src.is_member(i) || on_own_object(src, i))
                    && let Some((_, name, line)) =
                        open.iter().rev().find(|(_, n, _)| *n == t[i].text)
                {
                    count(&mut found, name, *line);
                }
            }
        }
    }
    found
}

/// A method called on the object it belongs to (`self.best(`, `cls.walk(`, `this.visit(`):
/// inside a method of that name, a call to itself like a plain `best(`.
fn on_own_object(src: &Source<'_>, i: usize) -> bool {
    let owner = i.checked_sub(2).and_then(|k| src.ident(k));
    let owners: &[&str] = match src.language {
        Language::Python => &["self", "cls"],
        Language::JavaScript => &["this"],
    };
    src.is(i - 1, ".") && owner.is_some_and(|o| owners.contains(&o))
}

/// One more place that calls `name` (defined at `line`).
fn count(found: &mut Vec<(String, u32, u32)>, name: &str, line: u32) {
    match found.iter_mut().find(|(n, _, _)| n == name) {
        Some((_, _, sites)) => *sites += 1,
        None => found.push((name.to_owned(), line, 1)),
    }
}

/// A named JavaScript function starting at `i`: `function f(...) {`, `const f = (...) => {`,
/// `const f = function (...) {`, or an arrow with an expression body (`const fib = n => n < 2 ?
/// n : fib(n - 1) + fib(n - 2);`). Returns the name and the index of the body's last token
/// (its `}`, or the end of the expression: a `;` at its depth, or a new line that starts a
/// statement at the definition's depth).
fn js_function_at<'a>(src: &Source<'a>, i: usize) -> Option<(&'a str, usize)> {
    if src.is(i, "function") {
        let mut j = i + 1;
        if src.is(j, "*") {
            j += 1;
        }
        let name = src.ident(j)?;
        let close = *src.partner.get(j + 1).filter(|_| src.is(j + 1, "("))?;
        return (close != NONE && src.is(close + 1, "{")).then(|| (name, src.partner[close + 1]));
    }
    if matches!(src.ident(i), Some("const" | "let" | "var")) && src.is(i + 2, "=") {
        let name = src.ident(i + 1)?;
        let mut j = i + 3;
        if src.is(j, "async") {
            j += 1;
        }
        if src.is(j, "function") {
            j += 1;
            if src.ident(j).is_some() {
                j += 1;
            }
        }
        let close = if src.is(j, "(") {
            src.partner[j]
        } else if src.ident(j).is_some() && src.is(j + 1, "=>") {
            j
        } else {
            return None;
        };
        if close == NONE {
            return None;
        }
        let mut k = close + 1;
        let arrow = src.is(k, "=>");
        if arrow {
            k += 1;
        }
        if src.is(k, "{") {
            return Some((name, src.partner[k]));
        }
        if !arrow || k >= t_len(src) {
            return None;
        }
        let t = &src.tokens;
        let depth = t[i].depth;
        let end = (k..t.len())
            .find(|&e| {
                (t[e].depth == depth && src.is(e, ";"))
                    || (e > k && t[e].line_start && t[e].depth <= depth)
            })
            .map_or(t.len() - 1, |e| {
                e.saturating_sub(usize::from(!src.is(e, ";")))
            });
        return Some((name, end));
    }
    None
}

/// How many tokens `src` has.
fn t_len(src: &Source<'_>) -> usize {
    src.tokens.len()
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{js, py};
    use super::*;

    #[test]
    fn recursion_is_found() {
        let s = py("def fib(n):\n    return n if n < 2 else fib(n-1) + fib(n-2)\nprint(fib(10))");
        assert_eq!(recursive_functions(&s), vec![("fib".to_string(), 1)]);
        let s = py("def f(x):\n    return g(x)\ndef g(x):\n    return x\nf(1)");
        assert!(recursive_functions(&s).is_empty());
        let s = js(
            "function walk(n) { return n ? walk(n - 1) : 0 }\nconst go = (x) => { return go(x) }",
        );
        let names: Vec<String> = recursive_functions(&s).into_iter().map(|r| r.0).collect();
        assert_eq!(names, ["walk", "go"]);
    }

    #[test]
    fn a_method_that_calls_itself_through_self_recurses() {
        let s = py(
            "class S:\n    def best(self, i):\n        if i == 0:\n            return 0\n        return max(self.best(i - 1), 1 + self.best(i - 1))\nS().best(30)",
        );
        assert_eq!(branching_recursion(&s), vec![("best".to_string(), 2)]);
        // Another object's method of the same name is not a call to itself.
        let s = py("class P:\n    def size(self):\n        return self.child.size()");
        assert!(recursive_functions(&s).is_empty());
    }

    #[test]
    fn two_calls_to_itself_branch_unless_memoised() {
        let fib = "def fib(n):\n    return n if n < 2 else fib(n-1) + fib(n-2)\nprint(fib(40))";
        assert_eq!(branching_recursion(&py(fib)), vec![("fib".to_string(), 1)]);
        let memoised = format!("from functools import cache\n@cache\n{fib}");
        assert!(branching_recursion(&py(&memoised)).is_empty());
        let walk = "def walk(n):\n    return walk(n - 1) if n else 0";
        assert!(branching_recursion(&py(walk)).is_empty());
        let s = js("function f(n) { return n < 2 ? n : f(n - 1) + f(n - 2) }\nf(35)");
        assert_eq!(branching_recursion(&s), vec![("f".to_string(), 1)]);
        // An arrow with an expression body, then a loop that calls it.
        let s = js(
            "const fib = n => (n < 2 ? n : fib(n - 1) + fib(n - 2));\nconst out = [];\nfor (let n = 25; n <= 32; n++) out.push(fib(n));",
        );
        assert_eq!(branching_recursion(&s), vec![("fib".to_string(), 1)]);
        let s = js("const twice = n => n * 2\nconst go = x => go(x) + go(x)\ntwice(go(1))");
        assert_eq!(branching_recursion(&s), vec![("go".to_string(), 2)]);
    }

    #[test]
    fn a_memo_table_counts_only_when_the_function_reads_it() {
        let fib =
            "function fib(n) {\n  if (n <= 1) return n;\n  return fib(n - 1) + fib(n - 2);\n}";
        let unused = format!("const memo = {{}};\n{fib}\nconsole.log(fib(38));");
        let unused = js(&unused);
        assert_eq!(branching_recursion(&unused), vec![("fib".to_string(), 2)]);
        let read = js(
            "const memo = new Map();\nfunction fib(n) {\n  if (memo.has(n)) return memo.get(n);\n  const v = n < 2 ? n : fib(n - 1) + fib(n - 2);\n  memo.set(n, v);\n  return v;\n}",
        );
        assert!(branching_recursion(&read).is_empty());
        let py_table = py(
            "memo = {}\ndef f(n):\n    if n in memo:\n        return memo[n]\n    memo[n] = n if n < 2 else f(n - 1) + f(n - 2)\n    return memo[n]",
        );
        assert!(branching_recursion(&py_table).is_empty());
        let wrapped = py(
            "import functools\ndef f(n):\n    return n if n < 2 else f(n - 1) + f(n - 2)\nf = functools.lru_cache(maxsize=None)(f)",
        );
        assert!(branching_recursion(&wrapped).is_empty());
    }
}
