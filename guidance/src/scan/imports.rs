//! Imports as written: Python `import`/`from`/`__import__`/`importlib.import_module` and
//! JavaScript `requireVendor`/`require`/`import`, with the module name and line of each.

use sandbox_protocol::Language;

use super::lexer::{Kind, NONE, Source};

/// How a module is brought in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ImportKind {
    /// Python `import` / `from ... import` / `__import__("x")` / `importlib.import_module("x")`.
    Python,
    /// JavaScript `requireVendor("x")`.
    Vendor,
    /// JavaScript `require("x")` (Node, not available).
    Require,
    /// JavaScript `import ... from "x"` or `import("x")` (modules, not available in cells).
    EsImport,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ImportRef {
    /// Full dotted module name as written (`xml.etree.ElementTree`, `os.path`, `csv-simple`).
    pub module: String,
    /// For `from m import a, b`: the imported names (they may be submodules).
    pub names: Vec<String>,
    pub line: u32,
    pub kind: ImportKind,
}

impl ImportRef {
    fn new(module: impl Into<String>, line: u32, kind: ImportKind) -> Self {
        Self {
            module: module.into(),
            names: Vec::new(),
            line,
            kind,
        }
    }
}

/// Every import in the source, in order of appearance.
pub(crate) fn imports(src: &Source<'_>) -> Vec<ImportRef> {
    let mut out = Vec::new();
    let t = &src.tokens;
    for i in 0..t.len() {
        if t[i].kind != Kind::Ident {
            continue;
        }
        // `importlib.import_module("x")` is a member call; `x.import` is not an import.
        if src.is_member(i) && t[i].text != "import_module" {
            continue;
        }
        let line = t[i].line;
        let kind = match (src.language, t[i].text) {
            (Language::Python, "import") => {
                // `from m import ...` is handled at `from`; here only the plain form.
                if !statement_starts_with_from(src, i) {
                    python_import(src, i, &mut out);
                }
                continue;
            }
            (Language::Python, "from") => {
                out.extend(python_from_import(src, i));
                continue;
            }
            (Language::JavaScript, "import") => {
                out.extend(es_import(src, i));
                continue;
            }
            (Language::Python, "__import__" | "import_module") => ImportKind::Python,
            (Language::JavaScript, "require") => ImportKind::Require,
            (Language::JavaScript, "requireVendor") => ImportKind::Vendor,
            _ => continue,
        };
        if let Some(module) = string_arg(src, i + 1) {
            out.push(ImportRef::new(module, line, kind));
        }
    }
    out
}

/// `import a.b, c as d` at `i`: one import per module.
fn python_import(src: &Source<'_>, i: usize, out: &mut Vec<ImportRef>) {
    let line = src.tokens[i].line;
    let mut j = i + 1;
    while let Some((module, next)) = src.dotted(j) {
        out.push(ImportRef::new(module, line, ImportKind::Python));
        j = next;
        if src.is(j, "as") {
            j += 2;
        }
        if !src.is(j, ",") {
            break;
        }
        j += 1;
    }
}

/// `from m import a, b` / `from m import (a,\n b)` at `i`; relative imports are the user's own.
fn python_from_import(src: &Source<'_>, i: usize) -> Option<ImportRef> {
    if src.is(i + 1, ".") || src.is(i + 1, "...") {
        return None;
    }
    let (module, mut j) = src.dotted(i + 1)?;
    if !src.is(j, "import") {
        return None;
    }
    j += 1;
    let close = if src.is(j, "(") { src.partner[j] } else { NONE };
    if close != NONE {
        j += 1;
    }
    let mut names = Vec::new();
    while let Some(name) = src.ident(j).or_else(|| src.is(j, "*").then_some("*")) {
        names.push(name.to_owned());
        j += 1;
        if src.is(j, "as") {
            j += 2;
        }
        if !src.is(j, ",") {
            break;
        }
        j += 1;
    }
    Some(ImportRef {
        names,
        ..ImportRef::new(module, src.tokens[i].line, ImportKind::Python)
    })
}

/// JavaScript `import("m")`, `import x from "m"`, `import {a} from "m"` or `import "m"` at `i`.
fn es_import(src: &Source<'_>, i: usize) -> Option<ImportRef> {
    let t = &src.tokens;
    let line = t[i].line;
    if let Some(module) = string_arg(src, i + 1) {
        return Some(ImportRef::new(module, line, ImportKind::EsImport));
    }
    let mut j = i + 1;
    let limit = (i + 64).min(t.len());
    while j < limit && t[j].kind != Kind::Str && !src.is(j, ";") {
        j += 1;
    }
    (j < limit && t[j].kind == Kind::Str && (src.is(j - 1, "from") || j == i + 1))
        .then(|| ImportRef::new(t[j].text, line, ImportKind::EsImport))
}

/// True when the `import` at `i` belongs to a `from m import ...` statement.
fn statement_starts_with_from(src: &Source<'_>, i: usize) -> bool {
    let mut k = i;
    while k > 0 && !src.tokens[k].line_start && !src.is(k - 1, ";") {
        k -= 1;
        if src.is(k, "from") {
            return true;
        }
    }
    src.is(k, "from")
}

/// `("x")` right at `open`: the string literal argument.
fn string_arg<'a>(src: &Source<'a>, open: usize) -> Option<&'a str> {
    if !src.is(open, "(") {
        return None;
    }
    let t = src.tokens.get(open + 1)?;
    (t.kind == Kind::Str).then_some(t.text)
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{js, py};
    use super::*;

    #[test]
    fn python_comments_and_strings_are_not_code() {
        let s = py("x = 'import os'  # import sys\ny = \"\"\"\nimport re\n\"\"\"\nimport json");
        let mods: Vec<String> = imports(&s).into_iter().map(|i| i.module).collect();
        assert_eq!(mods, ["json"]);
        assert_eq!(s.tokens.last().unwrap().line, 5);
    }

    #[test]
    fn python_imports_in_all_forms() {
        let s = py(
            "import os.path, json as j\nfrom xml.etree import ElementTree as ET\nfrom . import local\n\
             from collections import (Counter,\n  defaultdict)\nmod = __import__('yaml')\n\
             import importlib; m = importlib.import_module('bs4')",
        );
        let got: Vec<(String, Vec<String>)> = imports(&s)
            .into_iter()
            .map(|i| (i.module, i.names))
            .collect();
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            got,
            vec![
                ("os.path".to_string(), vec![]),
                ("json".to_string(), vec![]),
                ("xml.etree".to_string(), names(&["ElementTree"])),
                (
                    "collections".to_string(),
                    names(&["Counter", "defaultdict"])
                ),
                ("yaml".to_string(), vec![]),
                ("importlib".to_string(), vec![]),
                ("bs4".to_string(), vec![]),
            ]
        );
    }

    #[test]
    fn js_imports_requires_and_regexes() {
        let s = js(
            "const csv = requireVendor('csv-simple'); // require('x')\nconst fs = require(\"fs\");\n\
             import path from 'path';\nconst r = /require\\('y'\\)/g; const q = a / b / c;\n\
             const t = `import ${x} from 'z'`;",
        );
        let got: Vec<(String, ImportKind)> = imports(&s)
            .into_iter()
            .map(|i| (i.module, i.kind))
            .collect();
        assert_eq!(
            got,
            vec![
                ("csv-simple".to_string(), ImportKind::Vendor),
                ("fs".to_string(), ImportKind::Require),
                ("path".to_string(), ImportKind::EsImport),
            ]
        );
        assert!(s.tokens.iter().any(|t| t.kind == Kind::Regex));
    }

    #[test]
    fn import_forms_table() {
        let cases: [(Language, &str, &[(&str, ImportKind)]); 6] = [
            (
                Language::Python,
                "import a.b as c, d",
                &[("a.b", ImportKind::Python), ("d", ImportKind::Python)],
            ),
            (
                Language::Python,
                "from .x import y\nfrom m import *",
                &[("m", ImportKind::Python)],
            ),
            (
                Language::Python,
                "x.import_module('z')\ny.import",
                &[("z", ImportKind::Python)],
            ),
            (
                Language::JavaScript,
                "const m = import('dyn');",
                &[("dyn", ImportKind::EsImport)],
            ),
            (
                Language::JavaScript,
                "import 'side-effect';\nimport {a, b} from \"m\";",
                &[
                    ("side-effect", ImportKind::EsImport),
                    ("m", ImportKind::EsImport),
                ],
            ),
            (Language::JavaScript, "x.require('no'); require(name)", &[]),
        ];
        for (language, code, want) in cases {
            let s = Source::new(code, language);
            let got: Vec<(String, ImportKind)> = imports(&s)
                .into_iter()
                .map(|i| (i.module, i.kind))
                .collect();
            let want: Vec<(String, ImportKind)> =
                want.iter().map(|(m, k)| (m.to_string(), *k)).collect();
            assert_eq!(got, want, "{code}");
        }
    }
}
