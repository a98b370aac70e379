//! Python bugs that raise nothing themselves and show only as a wrong value, which an `assert`
//! (or reading back an empty file) then reports: a mutable default argument, functions made
//! in a loop that see the loop variable's last value, a class attribute shared by every
//! instance, one inner list repeated, a list changed while a loop walks it, and a file written
//! through `f = open(...)` that was never closed. Each is read from the code's lines; the
//! words are `silent_bug.*` in `words/runtime.toml`.

use super::code_lines::{block, indent, is_name};
use crate::words::say;

/// The first of the bugs above that `code` shows, as its fix.
pub(super) fn silent_bug(code: &str) -> Option<String> {
    let lines: Vec<&str> = code.lines().collect();
    mutable_default(&lines)
        .or_else(|| late_binding(&lines))
        .or_else(|| late_binding_in_comprehension(&lines))
        .or_else(|| class_attribute(&lines, code))
        .or_else(|| repeated_list(&lines))
        .or_else(|| removed_while_iterating(&lines))
        .or_else(|| unclosed_write(&lines, code))
}

/// An empty container as a default's text, and what to create inside instead.
const MUTABLE_VALUES: [&str; 5] = ["[]", "{}", "set()", "dict()", "list()"];

/// Whether `text` holds `word` as a whole identifier.
fn has_word(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// `[lambda: i for i in range(3)]`: lambdas made by a comprehension read its variable when
/// they are called, after the comprehension has finished, so all of them see its last value.
fn late_binding_in_comprehension(lines: &[&str]) -> Option<String> {
    lines.iter().find_map(|line| {
        let (_, after) = line.split_once("lambda")?;
        let (params, rest) = after.split_once(':')?;
        let (expression, tail) = rest.split_once(" for ")?;
        let var = tail.split(" in ").next()?.trim();
        let bound = format!("{var}={var}");
        (is_name(var) && has_word(expression, var) && !params.replace(' ', "").contains(&bound))
            .then(|| say!("silent_bug.late_binding", var = var))
    })
}

/// `def f(x, seen=[])`.
fn mutable_default(lines: &[&str]) -> Option<String> {
    lines.iter().find_map(|line| {
        let rest = line.trim_start().strip_prefix("def ")?;
        let (function, params) = rest.split_once('(')?;
        let params = params.rsplit_once(')')?.0;
        params.split(',').find_map(|param| {
            let (name, default) = param.split_once('=')?;
            let name = name.split(':').next()?.trim();
            let default = default.trim();
            (is_name(name) && MUTABLE_VALUES.contains(&default)).then(|| {
                say!(
                    "silent_bug.mutable_default",
                    function = function.trim(),
                    name = name,
                    empty = default,
                )
            })
        })
    })
}

/// `for i in ...:` with a `lambda` or a nested `def` in its block that reads `i` and does not
/// bind it as a default.
fn late_binding(lines: &[&str]) -> Option<String> {
    lines.iter().enumerate().find_map(|(at, line)| {
        let var = line
            .trim_start()
            .strip_prefix("for ")?
            .split(" in ")
            .next()?
            .trim();
        if !is_name(var) {
            return None;
        }
        let body = block(lines, at);
        let bound = format!("{var}={var}");
        let late = body.iter().enumerate().any(|(i, l)| {
            let compact: String = l.chars().filter(|c| *c != ' ').collect();
            if let Some((_, after)) = l.split_once("lambda") {
                let (params, expression) = after.split_once(':').unwrap_or(("", after));
                return has_word(expression, var) && !params.replace(' ', "").contains(&bound);
            }
            if l.trim_start().starts_with("def ") && !compact.contains(&bound) {
                return block(body, i).iter().any(|inner| has_word(inner, var));
            }
            false
        });
        late.then(|| say!("silent_bug.late_binding", var = var))
    })
}

/// `class C:` whose body (its own level) sets `name = []` (or `{}`...) that methods use as
/// `self.name`.
fn class_attribute(lines: &[&str], code: &str) -> Option<String> {
    lines.iter().enumerate().find_map(|(at, line)| {
        line.trim_start().strip_prefix("class ")?;
        let body = block(lines, at);
        let level = body
            .iter()
            .find(|l| !l.trim().is_empty())
            .map(|l| indent(l))?;
        body.iter()
            .filter(|l| indent(l) == level && !l.trim().is_empty())
            .find_map(|l| {
                let (name, value) = l.trim().split_once('=')?;
                let (name, value) = (name.trim(), value.trim());
                let used = code.contains(&format!("self.{name}"));
                (is_name(name) && MUTABLE_VALUES.contains(&value) && used)
                    .then(|| say!("silent_bug.class_attribute", name = name, value = value))
            })
    })
}

/// `[[0] * 3] * 3`: one inner list, three times.
fn repeated_list(lines: &[&str]) -> Option<String> {
    lines
        .iter()
        .map(|l| l.replace(' ', ""))
        .any(|l| l.contains("[[") && l.contains("]*") && l.matches("]*").count() >= 2)
        .then(|| say!("silent_bug.repeated_list"))
}

/// `for x in xs:` whose block calls `xs.remove(`, `xs.pop(` or `del xs[`.
fn removed_while_iterating(lines: &[&str]) -> Option<String> {
    lines.iter().enumerate().find_map(|(at, line)| {
        let (_, iterated) = line.trim_start().strip_prefix("for ")?.split_once(" in ")?;
        let list = iterated.trim().strip_suffix(':')?.trim();
        if !is_name(list) {
            return None;
        }
        let changes = [
            format!("{list}.remove("),
            format!("{list}.pop("),
            format!("del {list}["),
        ];
        block(lines, at)
            .iter()
            .any(|l| changes.iter().any(|c| l.contains(c.as_str())))
            .then(|| say!("silent_bug.removed_while_iterating", list = list))
    })
}

/// `f = open(path, 'w')` never closed (nor flushed), in code that opens a file again.
fn unclosed_write(lines: &[&str], code: &str) -> Option<String> {
    if code.matches("open(").count() < 2 {
        return None;
    }
    lines.iter().find_map(|line| {
        let (file, call) = line.trim().split_once('=')?;
        let file = file.trim();
        let writes = ["'w'", "\"w\"", "'a'", "\"a\""]
            .iter()
            .any(|mode| call.contains(mode));
        let kept_open =
            !code.contains(&format!("{file}.close(")) && !code.contains(&format!("{file}.flush("));
        (is_name(file) && call.trim_start().starts_with("open(") && writes && kept_open)
            .then(|| say!("silent_bug.unclosed_write", file = file))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn says(code: &str, needle: &str) {
        let fix = silent_bug(code).unwrap_or_else(|| panic!("no bug found in:\n{code}"));
        assert!(fix.contains(needle), "{fix}");
    }

    #[test]
    fn each_bug_is_read_from_the_code() {
        says("def f(x, seen=[]):\n    seen.append(x)\n", "`seen=[]`");
        says(
            "fs = []\nfor i in range(3):\n    fs.append(lambda: i)\n",
            "late binding",
        );
        says(
            "for n in names:\n    def cb():\n        return n\n    out[n] = cb\n",
            "late binding",
        );
        says(
            "class Cache:\n    data = {}\n    def set(self, k, v):\n        self.data[k] = v\n",
            "class attribute",
        );
        says(
            "fs = [lambda x: x * k for k in range(3)]\nprint([f(1) for f in fs])\n",
            "late binding",
        );
        says("board = [[0] * 3] * 3\n", "comprehension");
        says(
            "for n in nums:\n    if n % 2 == 0:\n        nums.remove(n)\n",
            "copy",
        );
        says(
            "f = open('a.json', 'w')\njson.dump(d, f)\nwith open('a.json') as g:\n    g.read()\n",
            "close",
        );
    }

    #[test]
    fn correct_code_shows_none() {
        for code in [
            "def f(x, seen=None):\n    seen = seen or []\n",
            "fs = []\nfor i in range(3):\n    fs.append(lambda i=i: i)\n",
            "fs = [lambda i=i: i for i in range(3)]\n",
            "key = sorted(rows, key=lambda r: r[0])\nout = [r for r in rows]\n",
            "class Cache:\n    def __init__(self):\n        self.data = {}\n",
            "board = [[0] * 3 for _ in range(3)]\n",
            "for n in nums[:]:\n    nums.remove(n)\n",
            "with open('a', 'w') as f:\n    f.write('x')\nopen('a').read()\n",
            "f = open('a', 'w')\nf.write('x')\nf.close()\nopen('a').read()\n",
        ] {
            assert_eq!(silent_bug(code), None, "{code}");
        }
    }
}
