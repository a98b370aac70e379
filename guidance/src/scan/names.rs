//! Names a snippet reads but never binds ([`free_names`]): in a persistent session they must
//! come from an earlier call (or they are typos), which is what `state_reliance` warns about.
//!
//! One pass over the statements collects every binding site (assignments, parameters, loop
//! targets, imports, declarations, destructuring); a second pass lists the remaining uses.

use std::collections::{HashMap, HashSet};

use sandbox_protocol::Language;

use super::lexer::{Kind, NONE, Source};
use super::words::{is_keyword, is_predefined};

/// Names the code reads but never binds: they must come from earlier calls in the same session
/// (or are typos). In order of first use, at most `limit`.
pub(crate) fn free_names(src: &Source<'_>, limit: usize) -> Vec<(String, u32)> {
    let t = &src.tokens;
    let python = src.language == Language::Python;
    let mut bindings = Bindings {
        defined: HashSet::new(),
        skip: vec![false; t.len()],
        star_import: false,
    };
    for (a, b) in src.statements() {
        if python {
            bindings.python_statement(src, a, b);
        } else {
            bindings.js_statement(src, a, b);
        }
    }
    if bindings.star_import {
        return Vec::new(); // `from m import *` can bind anything
    }
    let mut seen: HashMap<&str, u32> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for (i, tok) in t.iter().enumerate() {
        if tok.kind != Kind::Ident || bindings.skip[i] || src.is_member(i) {
            continue;
        }
        let name = tok.text;
        if bindings.defined.contains(name)
            || is_keyword(src.language, name)
            || is_predefined(src.language, name)
            || name.starts_with("__")
            || !name
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        {
            continue;
        }
        if !seen.contains_key(name) {
            seen.insert(name, tok.line);
            order.push(name);
        }
    }
    order
        .into_iter()
        .take(limit)
        .map(|n| (n.to_owned(), seen[n]))
        .collect()
}

/// What the binding pass found.
struct Bindings<'a> {
    /// Every name bound somewhere in the snippet.
    defined: HashSet<&'a str>,
    /// Tokens that are not uses: binding sites, keyword-argument names, object keys, modules.
    skip: Vec<bool>,
    /// `from m import *` was seen: any name may be bound.
    star_import: bool,
}

impl<'a> Bindings<'a> {
    /// Token `k` binds its name.
    fn bind(&mut self, src: &Source<'a>, k: usize) {
        self.defined.insert(src.tokens[k].text);
        self.skip[k] = true;
    }

    /// The bindings of the Python statement `[a, b)`.
    fn python_statement(&mut self, src: &Source<'a>, a: usize, b: usize) {
        let first = if src.is(a, "async") { a + 1 } else { a };
        match src.ident(first) {
            Some("import") | Some("from") => return self.python_import(src, first, b),
            Some("def") | Some("class") => self.python_definition(src, a, first),
            Some("global") | Some("nonlocal") => {
                self.skip[(first + 1).min(b)..b].fill(true);
                return;
            }
            _ => {}
        }
        self.python_assignment(src, a, b);
        for k in a..b {
            self.python_inner_binding(src, a, b, k);
        }
    }

    /// Modules and imported names are binding sites, not uses.
    fn python_import(&mut self, src: &Source<'a>, first: usize, b: usize) {
        let t = &src.tokens;
        let mut after_import = src.ident(first) == Some("import");
        for k in first + 1..b {
            if src.is(k, "import") {
                after_import = true;
            } else if src.is(k, "*") {
                self.star_import = true;
            } else if t[k].kind == Kind::Ident {
                self.skip[k] = true;
                // `import a as b` binds b; `import a.b` binds a; `from m import x` binds x.
                let binds = !src.is(k + 1, "as")
                    && ((k > 0 && src.is(k - 1, "as")) || (after_import && !src.is_member(k)));
                if binds {
                    self.defined.insert(t[k].text);
                }
            }
        }
    }

    /// `def f(a, *b, **c)` / `class K`: the name and the parameters.
    fn python_definition(&mut self, src: &Source<'a>, a: usize, first: usize) {
        let t = &src.tokens;
        let base = t[a].depth;
        if src.ident(first + 1).is_some() {
            self.bind(src, first + 1);
        }
        if src.ident(first) == Some("def") && src.is(first + 2, "(") {
            let close = src.partner[first + 2];
            if close != NONE {
                for k in first + 3..close {
                    let param = t[k].kind == Kind::Ident
                        && t[k].depth == base + 1
                        && (src.is(k - 1, "(")
                            || src.is(k - 1, ",")
                            || src.is(k - 1, "*")
                            || src.is(k - 1, "**"));
                    if param {
                        self.bind(src, k);
                    }
                }
            }
        }
    }

    /// Targets before each top-level `=` (chained assignment binds them all), and annotated
    /// assignments `x: int = 1` / `x: int`.
    fn python_assignment(&mut self, src: &Source<'a>, a: usize, b: usize) {
        let t = &src.tokens;
        let base = t[a].depth;
        let eqs: Vec<usize> = (a..b)
            .filter(|&k| src.is(k, "=") && t[k].depth == base)
            .collect();
        if let Some(&last) = eqs.last() {
            for k in a..last {
                if is_python_target(src, k) {
                    self.bind(src, k);
                }
            }
        }
        if eqs.is_empty()
            && src
                .ident(a)
                .is_some_and(|w| !is_keyword(Language::Python, w))
            && src.is(a + 1, ":")
        {
            self.bind(src, a);
        }
    }

    /// Bindings anywhere in a statement at token `k`: loop targets (blocks and comprehensions),
    /// `as` names, lambda parameters, walrus targets; keyword-argument names are not uses.
    fn python_inner_binding(&mut self, src: &Source<'a>, a: usize, b: usize, k: usize) {
        let t = &src.tokens;
        let tok = &t[k];
        if tok.kind == Kind::Op && tok.text == ":=" && k > a && t[k - 1].kind == Kind::Ident {
            self.bind(src, k - 1);
            return;
        }
        if tok.kind != Kind::Ident {
            return;
        }
        match tok.text {
            "for" => {
                // for x, y in ...: comprehension and block loops alike.
                let mut j = k + 1;
                while j < b && !(src.is(j, "in") && t[j].depth == tok.depth) {
                    if t[j].kind == Kind::Ident && !src.is_member(j) {
                        self.bind(src, j);
                    }
                    j += 1;
                }
            }
            "as" => {
                if src.ident(k + 1).is_some() {
                    self.bind(src, k + 1);
                }
            }
            "lambda" => {
                let mut j = k + 1;
                while j < b && !(src.is(j, ":") && t[j].depth == tok.depth) {
                    if t[j].kind == Kind::Ident
                        && (src.is(j - 1, "lambda") || src.is(j - 1, ",") || src.is(j - 1, "*"))
                    {
                        self.bind(src, j);
                    }
                    j += 1;
                }
            }
            _ => {
                // Keyword argument `f(name=...)`.
                if tok.depth > t[a].depth
                    && src.is(k + 1, "=")
                    && k > 0
                    && (src.is(k - 1, "(") || src.is(k - 1, ","))
                {
                    self.skip[k] = true;
                }
            }
        }
    }

    /// The bindings of the JavaScript statement `[a, b)`.
    fn js_statement(&mut self, src: &Source<'a>, a: usize, b: usize) {
        let t = &src.tokens;
        for k in a..b {
            let tok = &t[k];
            if tok.kind == Kind::Op {
                if tok.text == "=>" && k > 0 {
                    self.arrow_parameters(src, k);
                }
                continue;
            }
            if tok.kind != Kind::Ident || src.is_member(k) {
                continue;
            }
            match tok.text {
                "let" | "const" | "var" => self.js_declaration(src, k, b),
                "function" | "class" => self.js_function_or_class(src, k),
                "catch" if src.is(k + 1, "(") && src.partner[k + 1] != NONE => {
                    self.pattern(src, k + 1, src.partner[k + 1]);
                }
                "import" => {
                    let mut j = k + 1;
                    while j < b && t[j].kind != Kind::Str {
                        if t[j].kind == Kind::Ident && !matches!(t[j].text, "from" | "as") {
                            self.skip[j] = true;
                            if !src.is(j + 1, "as") {
                                self.defined.insert(t[j].text);
                            }
                        }
                        j += 1;
                    }
                }
                _ => self.js_key_or_method(src, k),
            }
        }
    }

    /// `(a, b) => ...` / `a => ...` with the `=>` at `k`.
    fn arrow_parameters(&mut self, src: &Source<'a>, k: usize) {
        let t = &src.tokens;
        if t[k - 1].kind == Kind::Ident {
            self.bind(src, k - 1);
        } else if src.is(k - 1, ")") && src.partner[k - 1] != NONE {
            self.pattern(src, src.partner[k - 1], k - 1);
        }
    }

    /// `let a = 1, [b, c] = d, {e} = f` at `k`: every declarator up to `b`.
    fn js_declaration(&mut self, src: &Source<'a>, k: usize, b: usize) {
        let t = &src.tokens;
        let depth = t[k].depth;
        let mut j = k + 1;
        loop {
            if src.ident(j).is_some() {
                self.bind(src, j);
            } else if (src.is(j, "[") || src.is(j, "{")) && src.partner[j] != NONE {
                self.pattern(src, j, src.partner[j]);
            }
            // Next declarator: the `,` at this depth before the statement ends.
            let mut next = None;
            let mut m = j + 1;
            while m < t.len() && m < b.max(j + 1) {
                if t[m].depth == depth && src.is(m, ",") {
                    next = Some(m + 1);
                    break;
                }
                if t[m].depth < depth
                    || (t[m].depth == depth
                        && (src.is(m, ";") || src.is(m, "of") || src.is(m, "in")))
                {
                    break;
                }
                m += 1;
            }
            match next {
                Some(n) if n > j => j = n,
                _ => break,
            }
        }
    }

    /// `function* name(params)` / `class Name` at `k`.
    fn js_function_or_class(&mut self, src: &Source<'a>, k: usize) {
        let mut j = k + 1;
        if src.is(j, "*") {
            j += 1;
        }
        if src.ident(j).is_some() {
            self.bind(src, j);
            j += 1;
        }
        if src.is(k, "function") && src.is(j, "(") && src.partner[j] != NONE {
            self.pattern(src, j, src.partner[j]);
        }
    }

    /// An identifier at `k` that is an object key (`{ name: value }`) or declares a method or
    /// function (`name(params) {`).
    fn js_key_or_method(&mut self, src: &Source<'a>, k: usize) {
        // Object key `{ name: value }`; a shorthand key `{ name, ... }` stays a use.
        if src.is(k + 1, ":") && k > 0 && (src.is(k - 1, "{") || src.is(k - 1, ",")) {
            self.skip[k] = true;
        }
        if src.is(k + 1, "(") && src.partner[k + 1] != NONE {
            let close = src.partner[k + 1];
            if src.is(close + 1, "{") && !is_keyword(Language::JavaScript, src.tokens[k].text) {
                self.bind(src, k);
                self.pattern(src, k + 1, close);
            }
        }
    }

    /// Binds the names of a parameter list or destructuring pattern between `open` and
    /// `close`: identifiers not used as keys (`{ key: name }` binds `name`) and not default
    /// values.
    fn pattern(&mut self, src: &Source<'a>, open: usize, close: usize) {
        let t = &src.tokens;
        let mut in_default = false;
        for j in open + 1..close.min(t.len()) {
            if src.is(j, "=") {
                in_default = true;
                continue;
            }
            if src.is(j, ",") || src.is(j, "{") || src.is(j, "[") {
                in_default = false;
                continue;
            }
            if t[j].kind == Kind::Ident && !in_default && !src.is_member(j) {
                self.skip[j] = true;
                if !src.is(j + 1, ":") {
                    self.defined.insert(t[j].text);
                }
            }
        }
    }
}

/// A name being assigned: bare (not `x.a`, `x[i]` or `f(x)`), in a target list.
fn is_python_target(src: &Source<'_>, k: usize) -> bool {
    let t = &src.tokens;
    if t[k].kind != Kind::Ident || src.is_member(k) || is_keyword(Language::Python, t[k].text) {
        return false;
    }
    let next_ok = match t.get(k + 1) {
        None => true,
        Some(n) => n.kind == Kind::Op && matches!(n.text, "," | "=" | ")" | "]" | ":"),
    };
    let prev_ok = k == 0
        || t[k].line_start
        || src.is(k - 1, ",")
        || src.is(k - 1, "*")
        || src.is(k - 1, "=")
        || src.is(k - 1, ";")
        || (src.is(k - 1, "(") || src.is(k - 1, "[")) && !is_subscript_or_call(src, k - 1);
    next_ok && prev_ok
}

/// `x[`, `f(`, `)(`: the bracket at `open` applies to what precedes it.
fn is_subscript_or_call(src: &Source<'_>, open: usize) -> bool {
    open > 0
        && match src.tokens[open - 1].kind {
            Kind::Ident => !is_keyword(Language::Python, src.tokens[open - 1].text),
            Kind::Str | Kind::Number => true,
            Kind::Op => matches!(src.tokens[open - 1].text, ")" | "]"),
            Kind::Regex => false,
        }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{js, py};
    use super::*;

    #[test]
    fn python_free_names() {
        let s = py(
            "import json as j\nfrom os import path\ndef f(a, b=2, *args, **kw):\n    return a + b + c\n\
             class K: pass\nx, (y, z) = 1, (2, 3)\nfor i, v in enumerate(data):\n    total += v\n\
             d[key] = f(x, flag=True)\nw = [q for q in rows]\nwith open('a') as fh: pass\n\
             print(j, path, K, y, z, w, (m := 3), m, lambda u: u)\nobj.attr = 1\n",
        );
        let names: Vec<String> = free_names(&s, 20).into_iter().map(|n| n.0).collect();
        assert_eq!(names, ["c", "data", "total", "d", "key", "rows", "obj"]);
    }

    #[test]
    fn js_free_names() {
        let s = js(
            "const [files, err] = os.readdir('/app');\nlet a = 1, b = {k: 2};\nfunction f(p, q = r) { return p + q }\n\
             const g = (u, v) => u + v; const h = w => w;\nclass C { m(x) { return x + y } }\n\
             try { z() } catch (e) { console.log(e, obj.prop, {key: val}) }\nconsole.log(files, err, a, b, f, g, h, C, df);",
        );
        let names: Vec<String> = free_names(&s, 20).into_iter().map(|n| n.0).collect();
        assert_eq!(names, ["r", "y", "z", "obj", "val", "df"]);
    }

    #[test]
    fn star_import_disables_free_names() {
        assert!(free_names(&py("from math import *\nprint(pi)"), 10).is_empty());
    }

    #[test]
    fn binding_forms_table() {
        let cases: [(Language, &str, &[&str]); 8] = [
            (Language::Python, "global g\ng = h", &["h"]),
            (
                Language::Python,
                "async def f(a):\n    return a + b",
                &["b"],
            ),
            (Language::Python, "n: int = m", &["m"]),
            (Language::Python, "a = b = c", &["c"]),
            (Language::Python, "f(key=v)", &["f", "v"]),
            (
                Language::JavaScript,
                "for (const x of xs) { y += x }",
                &["xs", "y"],
            ),
            (
                Language::JavaScript,
                "const {a: b, c = d} = e; b + c",
                &["d", "e"],
            ),
            (
                Language::JavaScript,
                "import x, {y as z} from 'm'; x + y + z",
                &["y"],
            ),
        ];
        for (language, code, want) in cases {
            let names: Vec<String> = free_names(&Source::new(code, language), 10)
                .into_iter()
                .map(|n| n.0)
                .collect();
            assert_eq!(names, want, "{code}");
        }
    }
}
