//! The facts about a snippet that code analysis, fuel analysis and failure advice share
//! ([`CodeFacts`]), so all three tell the same story about a piece of code. The words of its
//! descriptions live in `words/analysis.toml`.

use std::collections::HashSet;

use sandbox_protocol::Language;

use super::super::fmt_fuel;
use super::super::modules;
use super::super::scan::{self, ImportKind, ImportRef, Kind, LoopInfo, Source, StrLit};
use crate::inventory::imports::{ImportCost, ImportFuelTable};
use crate::words::say;

/// Analysis looks at most this much code; `execute_code` refuses more than 1 MiB anyway.
const MAX_ANALYZED_BYTES: usize = 2 << 20;

/// A first import at or above this is worth mentioning as a cost (about 5 ms).
pub(crate) const HEAVY_IMPORT_FUEL: u64 = 50_000_000;

/// Allocations at or above this are reported as large data.
const LARGE_ALLOCATION: u64 = 64 << 20;

/// The facts about a snippet that analysis, fuel analysis and advice share.
pub(crate) struct CodeFacts<'a> {
    pub src: Source<'a>,
    pub imports: Vec<ImportRef>,
    pub loops: Vec<LoopInfo>,
    pub recursion: Vec<(String, u32)>,
    /// Recursive functions that call themselves from two places, unmemoised: exponential.
    pub branching: Vec<(String, u32)>,
    pub calls: Vec<(String, u32, usize)>,
    pub strings: Vec<StrLit<'a>>,
}

impl<'a> CodeFacts<'a> {
    pub fn new(code: &'a str, language: Language) -> Self {
        let code = cut(code, MAX_ANALYZED_BYTES);
        let src = Source::new(code, language);
        Self {
            imports: scan::imports(&src),
            loops: scan::loops(&src),
            recursion: scan::recursive_functions(&src),
            branching: scan::branching_recursion(&src),
            calls: scan::calls(&src),
            strings: scan::strings(&src),
            src,
        }
    }

    pub fn language(&self) -> Language {
        self.src.language
    }

    /// Python imports with their table entry: (module as written, matched name, cost).
    pub fn measured_imports<'t>(
        &self,
        table: &'t ImportFuelTable,
    ) -> Vec<(String, &'t str, &'t ImportCost)> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for import in &self.imports {
            let language = match import.kind {
                ImportKind::Python => Language::Python,
                ImportKind::Vendor => Language::JavaScript,
                _ => continue,
            };
            // `from xml.etree import ElementTree` imports the submodule.
            let submodule = import
                .names
                .iter()
                .map(|n| format!("{}.{n}", import.module))
                .find_map(|full| table.get_in(language, &full).map(|_| full));
            let wanted = submodule.unwrap_or_else(|| import.module.clone());
            if let Some((name, cost)) = table.resolve(language, &wanted)
                && seen.insert(name)
            {
                out.push((wanted, name, cost));
            }
        }
        out
    }

    /// Third-party Python imports that the table does not know (their cost is a guess).
    pub fn unmeasured_imports(&self, table: &ImportFuelTable) -> Vec<&ImportRef> {
        self.imports
            .iter()
            .filter(|i| i.kind == ImportKind::Python)
            .filter(|i| table.resolve(Language::Python, &i.module).is_none())
            .filter(|i| {
                modules::missing_stdlib(&i.module).is_none()
                    && modules::native_package(&i.module).is_none()
                    && !modules::network_package(&i.module)
            })
            .collect()
    }

    /// Calls to QuickJS functions that return `[value, error]`, assigned without destructuring:
    /// (callee, line, variable).
    pub fn tuple_misuse(&self) -> Vec<(String, u32, String)> {
        if self.language() != Language::JavaScript {
            return Vec::new();
        }
        let t = &self.src.tokens;
        let mut out = Vec::new();
        for (callee, line, open) in &self.calls {
            if !is_tuple_api(callee) {
                continue;
            }
            let parts = callee.matches('.').count() + 1;
            let start = open.saturating_sub(2 * parts - 1);
            // `<decl> name = os.readdir(` or `name = os.readdir(`
            if start >= 2 && self.src.is(start - 1, "=") && t[start - 2].kind == Kind::Ident {
                let name = t[start - 2].text;
                if !matches!(name, "let" | "const" | "var") {
                    out.push((callee.clone(), *line, name.to_owned()));
                }
            }
        }
        out
    }

    /// Big constant allocations: (description, line, estimated bytes).
    pub fn large_allocations(&self) -> Vec<(String, u32, u64)> {
        let mut out = self.call_allocations();
        if self.language() == Language::Python {
            out.extend(self.repeated_sequences());
        }
        out
    }

    /// Calls that allocate their argument's worth: `bytearray(N)`, `new Float64Array(N)`,
    /// `'x'.repeat(N)`, `list(range(N))`, `np.zeros((R, C))` (a shape counts its product).
    fn call_allocations(&self) -> Vec<(String, u32, u64)> {
        let src = &self.src;
        let t = &src.tokens;
        let arg_value = |open: usize| -> Option<f64> {
            let close = *src.partner.get(open)?;
            if close == scan::NONE {
                return None;
            }
            let end = (open + 1..close)
                .find(|&k| src.is(k, ",") && t[k].depth == t[open].depth + 1)
                .unwrap_or(close);
            // A shape, `(R, C)` or `[R, C]`: the product of its constant parts.
            let shape_close = src
                .partner
                .get(open + 1)
                .copied()
                .filter(|&c| c != scan::NONE && c + 1 == end);
            if let Some(shape_close) =
                shape_close.filter(|_| src.is(open + 1, "(") || src.is(open + 1, "["))
            {
                let depth = t[open + 1].depth + 1;
                let mut product = 1.0;
                let mut from = open + 2;
                for k in open + 2..=shape_close {
                    if k == shape_close || (src.is(k, ",") && t[k].depth == depth) {
                        if k > from {
                            product *= scan::const_value(src, from, k)?;
                        }
                        from = k + 1;
                    }
                }
                return Some(product);
            }
            scan::const_value(src, open + 1, end)
        };
        let mut out = Vec::new();
        for (callee, line, open) in &self.calls {
            let Some((bytes_each, unit)) = self.allocation_unit(callee, *open) else {
                continue;
            };
            if let Some(n) = arg_value(*open) {
                let bytes = (n * bytes_each).max(0.0);
                if bytes >= LARGE_ALLOCATION as f64 {
                    out.push((
                        say!(
                            "large_data.call",
                            callee = callee,
                            count = fmt_count(n),
                            unit = unit
                        ),
                        *line,
                        saturate(bytes),
                    ));
                }
            }
        }
        out
    }

    /// Bytes per unit of the argument of an allocating call, and the unit's name.
    fn allocation_unit(&self, callee: &str, open: usize) -> Option<(f64, &'static str)> {
        match (self.language(), callee) {
            (Language::Python, "bytearray" | "bytes") => Some((1.0, "bytes")),
            (Language::JavaScript, "Uint8Array" | "Int8Array" | "ArrayBuffer") => {
                Some((1.0, "bytes"))
            }
            (Language::JavaScript, "Float64Array" | "BigInt64Array") => Some((8.0, "items")),
            (Language::JavaScript, "Float32Array" | "Int32Array" | "Uint32Array") => {
                Some((4.0, "items"))
            }
            (Language::JavaScript, "Array") => Some((16.0, "items")),
            (
                Language::Python,
                "np.zeros" | "np.ones" | "np.empty" | "numpy.zeros" | "numpy.ones" | "numpy.empty",
            ) => Some((8.0, "float64 items")),
            (_, "repeat") => Some((1.0, "characters")),
            (Language::Python, "range") => {
                // Only a materialised range costs memory.
                let outer = self.calls.iter().find(|(c, _, o)| {
                    matches!(c.as_str(), "list" | "set" | "tuple" | "sorted") && *o + 1 == open - 1
                });
                outer.map(|_| (36.0, "ints"))
            }
            _ => None,
        }
    }

    /// Python sequence repetition: `[0] * N`, `"x" * N`, `N * "x"`.
    fn repeated_sequences(&self) -> Vec<(String, u32, u64)> {
        let src = &self.src;
        let t = &src.tokens;
        let number_at = |k: usize| -> Option<f64> {
            let tok = t.get(k)?;
            if tok.kind != Kind::Number {
                return None;
            }
            // `10**8` is the usual way to write a big size.
            if src.is(k + 1, "**") {
                scan::const_value(src, k, k + 3)
            } else {
                scan::number_value(tok.text)
            }
        };
        let mut out = Vec::new();
        for k in 1..t.len().saturating_sub(1) {
            if !src.is(k, "*") {
                continue;
            }
            let (left, right) = (&t[k - 1], &t[k + 1]);
            let (n, item_bytes, what) = if left.text == "]" && left.kind == Kind::Op {
                (number_at(k + 1), 8.0, "list")
            } else if left.kind == Kind::Str {
                (number_at(k + 1), left.text.len().max(1) as f64, "string")
            } else if right.kind == Kind::Str && left.kind == Kind::Number {
                (number_at(k - 1), right.text.len().max(1) as f64, "string")
            } else {
                continue;
            };
            if let Some(n) = n {
                let bytes = n * item_bytes;
                if bytes >= LARGE_ALLOCATION as f64 {
                    out.push((
                        say!("large_data.repeated", what = what, count = fmt_count(n)),
                        left.line,
                        saturate(bytes),
                    ));
                }
            }
        }
        out
    }
}

/// QuickJS functions that return `[value, error]`.
fn is_tuple_api(callee: &str) -> bool {
    matches!(
        callee,
        "os.readdir" | "os.stat" | "os.lstat" | "os.getcwd" | "os.realpath" | "os.readlink"
    )
}

/// A float as a `u64`, clamped (NaN is 0).
pub(super) fn saturate(x: f64) -> u64 {
    if x.is_nan() {
        0
    } else {
        x.min(u64::MAX as f64) as u64
    }
}

/// A count as a model reads it best (`1M`, `2.5B`).
pub(super) fn fmt_count(n: f64) -> String {
    fmt_fuel(saturate(n))
}

/// `s` cut to at most `max` bytes on a character boundary.
fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_allocations_table() {
        let cases: [(Language, &str, &[(&str, u32)]); 8] = [
            (
                Language::Python,
                "buf = bytearray(3 * 10**9)",
                &[("bytearray(...) of 3B bytes", 1)],
            ),
            (
                Language::Python,
                "xs = [0] * 10**8",
                &[("a list of 100M items", 1)],
            ),
            (
                Language::Python,
                "s = 'ab' * 10**9\nt = 10**9 * 'x'",
                &[("a string of 1B items", 1)],
            ),
            (
                Language::Python,
                "xs = list(range(10**8))\nys = range(10**9)",
                &[("range(...) of 100M ints", 1)],
            ),
            (Language::Python, "small = [0] * 1000", &[]),
            (
                Language::JavaScript,
                "const a = new Float64Array(1e8);",
                &[("Float64Array(...) of 100M items", 1)],
            ),
            (
                Language::JavaScript,
                "'x'.repeat(1e9)",
                &[("repeat(...) of 1B characters", 1)],
            ),
            (
                Language::Python,
                "import numpy as np\nsmall = np.zeros((10, 10))\nframe = np.zeros((40000, 40000))",
                &[("np.zeros(...) of 1.6B float64 items", 3)],
            ),
        ];
        for (language, code, want) in cases {
            let facts = CodeFacts::new(code, language);
            let got: Vec<(String, u32)> = facts
                .large_allocations()
                .into_iter()
                .map(|(what, line, _)| (what, line))
                .collect();
            let want: Vec<(String, u32)> = want.iter().map(|(w, l)| (w.to_string(), *l)).collect();
            assert_eq!(got, want, "{code}");
        }
    }

    #[test]
    fn tuple_misuse_needs_an_undestructured_assignment() {
        let misuse = |code: &str| CodeFacts::new(code, Language::JavaScript).tuple_misuse();
        assert_eq!(
            misuse("const files = os.readdir('.');"),
            [("os.readdir".to_string(), 1, "files".to_string())]
        );
        assert!(misuse("const [files, err] = os.readdir('.');").is_empty());
        assert!(misuse("let x = std.loadFile('a');").is_empty());
        assert!(
            CodeFacts::new("x = os.stat('a')", Language::Python)
                .tuple_misuse()
                .is_empty()
        );
    }

    #[test]
    fn measured_and_unmeasured_imports() {
        let table = ImportFuelTable::builtin();
        let facts = CodeFacts::new(
            "import json\nfrom xml.etree import ElementTree\nimport json\nimport tabulate, numpy",
            Language::Python,
        );
        let measured: Vec<(String, &str)> = facts
            .measured_imports(&table)
            .into_iter()
            .map(|(wanted, name, _)| (wanted, name))
            .collect();
        assert_eq!(
            measured,
            [
                ("json".to_string(), "json"),
                ("xml.etree.ElementTree".to_string(), "xml.etree.ElementTree"),
            ]
        );
        let facts = CodeFacts::new(
            "import json, humanize, numpy, requests, ssl",
            Language::Python,
        );
        let unmeasured: Vec<&str> = facts
            .unmeasured_imports(&table)
            .into_iter()
            .map(|i| i.module.as_str())
            .collect();
        assert_eq!(unmeasured, ["humanize"]);
    }
}
