//! The measured fuel cost of importing modules, per language.
//!
//! The built-in table covers the CPython stdlib and was measured through the real server: each
//! `import X` ran as the first execution of a fresh session (three times, median), minus the
//! fuel of `pass` in a fresh session. That is the cost of a *first* import; a second import of
//! the same module in the same session is nearly free, because the module stays loaded.
//! Modules share dependencies (`json`, `csv` and `string` all load `re`), so the cost of
//! several imports together lies between the largest single cost and the sum.
//!
//! Deployments add their vendored packages with `<data_dir>/import-fuel.json`, in the same
//! format: `{"python": {"<import name>": {"package": "<dist>", "fuel": N, "ms": X,
//! "category": "..."}}, "javascript": {...}}`. Entries there override the built-in ones.

use std::collections::BTreeMap;
use std::path::Path;

use sandbox_protocol::Language;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The measured stdlib table, embedded at build time.
const BUILTIN_JSON: &str = include_str!("stdlib-import-fuel.json");

/// File name of the deployment's table inside the data directory.
pub const DATA_FILE: &str = "import-fuel.json";

/// Cost of importing one module for the first time in a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImportCost {
    /// Distribution the module comes from (`stdlib` for the standard library).
    #[serde(default)]
    pub package: String,
    /// Fuel of the first import in a fresh session (10^10 is about one second of CPU).
    #[serde(default)]
    pub fuel: u64,
    /// Wall-clock milliseconds of that import on the measuring machine.
    #[serde(default)]
    pub ms: f64,
    /// Rough purpose, e.g. `data_formats`, `network`, `documents`.
    #[serde(default)]
    pub category: String,
}

/// Import costs for Python and JavaScript modules (JavaScript: `requireVendor` packages).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImportFuelTable {
    python: BTreeMap<String, ImportCost>,
    javascript: BTreeMap<String, ImportCost>,
}

impl ImportFuelTable {
    /// The embedded, measured CPython stdlib table.
    pub fn builtin() -> Self {
        // The file is part of this crate and covered by a test, so it always parses.
        Self::from_json(BUILTIN_JSON).unwrap_or_default()
    }

    /// The built-in table plus `<data_dir>/import-fuel.json` when it exists. A file that cannot
    /// be read or parsed is logged and skipped: guidance must never stop the server.
    pub fn load(data_dir: Option<&Path>) -> Self {
        let mut table = Self::builtin();
        let Some(dir) = data_dir else {
            return table;
        };
        let path = dir.join(DATA_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => match Self::from_json(&text) {
                Ok(extra) => table.merge(extra),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "ignoring the import fuel table")
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot read the import fuel table")
            }
        }
        table
    }

    /// Parses the file format. Unknown top-level keys are ignored, so the file may carry
    /// metadata next to the languages.
    ///
    /// # Errors
    /// When the text is not JSON or a language section is not a map of import costs.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        let mut raw: BTreeMap<String, serde_json::Value> = serde_json::from_str(text)?;
        let mut section = |key: &str| -> Result<BTreeMap<String, ImportCost>, serde_json::Error> {
            match raw.remove(key) {
                Some(value) => serde_json::from_value(value),
                None => Ok(BTreeMap::new()),
            }
        };
        Ok(Self {
            python: section("python")?,
            javascript: section("javascript")?,
        })
    }

    /// Adds `other`'s entries, replacing entries of the same name.
    pub fn merge(&mut self, other: Self) {
        self.python.extend(other.python);
        self.javascript.extend(other.javascript);
    }

    /// The Python module `import_name` (exact name, e.g. `xml.etree.ElementTree`).
    pub fn get(&self, import_name: &str) -> Option<&ImportCost> {
        self.python.get(import_name)
    }

    /// The module in a language's table (exact name).
    pub fn get_in(&self, language: Language, name: &str) -> Option<&ImportCost> {
        self.map(language).get(name)
    }

    /// The best entry for a module as imported: the exact name, else its closest measured
    /// parent (`openpyxl.styles` → `openpyxl`). Returns the matched name too.
    pub fn resolve(&self, language: Language, module: &str) -> Option<(&str, &ImportCost)> {
        let map = self.map(language);
        let mut name = module;
        loop {
            if let Some((key, cost)) = map.get_key_value(name) {
                return Some((key.as_str(), cost));
            }
            name = name.rsplit_once('.')?.0;
        }
    }

    /// All entries of a language, sorted by name (for `list_available_packages`).
    pub fn iter(&self, language: Language) -> impl Iterator<Item = (&str, &ImportCost)> {
        self.map(language).iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Number of entries of a language.
    pub fn len(&self, language: Language) -> usize {
        self.map(language).len()
    }

    pub fn is_empty(&self) -> bool {
        self.python.is_empty() && self.javascript.is_empty()
    }

    /// Names a typo of `name` probably meant (same language): one edit away, or two for names
    /// of six characters or more, so `jsno` finds `json` but `yaml` does not find `html`.
    pub fn similar(&self, language: Language, name: &str) -> Vec<&str> {
        if name.len() > 64 || name.len() < 3 {
            return Vec::new();
        }
        let limit = if name.chars().count() >= 6 { 2 } else { 1 };
        let wanted = name.to_lowercase();
        let mut found: Vec<(usize, &str)> = self
            .map(language)
            .keys()
            .filter(|k| k.as_str() != name && k.len().abs_diff(name.len()) <= limit)
            .filter_map(|k| {
                let d = edit_distance(&k.to_lowercase(), &wanted);
                (d <= limit).then_some((d, k.as_str()))
            })
            .collect();
        found.sort();
        found.into_iter().take(3).map(|(_, k)| k).collect()
    }

    fn map(&self, language: Language) -> &BTreeMap<String, ImportCost> {
        match language {
            Language::Python => &self.python,
            Language::JavaScript => &self.javascript,
        }
    }
}

/// Edit distance with adjacent transpositions counted as one edit (optimal string alignment),
/// so `jsno` is one edit from `json`. Both inputs are short import names.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for i in 0..=a.len() {
        d[i * width] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_table_parses_and_has_the_measured_modules() {
        let parsed = ImportFuelTable::from_json(BUILTIN_JSON).expect("embedded table parses");
        assert!(parsed.len(Language::Python) >= 100);
        for name in [
            "json",
            "re",
            "csv",
            "datetime",
            "decimal",
            "sqlite3",
            "hashlib",
            "pathlib",
            "collections",
            "itertools",
            "statistics",
            "random",
            "math",
            "fractions",
            "typing",
            "dataclasses",
            "zoneinfo",
            "email",
            "html",
            "xml.etree.ElementTree",
            "urllib.parse",
            "base64",
            "zlib",
            "gzip",
            "bz2",
            "tarfile",
            "zipfile",
            "textwrap",
            "string",
            "difflib",
            "pprint",
            "copy",
            "functools",
            "heapq",
            "bisect",
            "uuid",
            "calendar",
            "struct",
            "unicodedata",
            "asyncio",
            "logging",
            "argparse",
            "shutil",
            "tempfile",
            "glob",
            "enum",
            "inspect",
            "ast",
            "traceback",
        ] {
            let cost = parsed.get(name).unwrap_or_else(|| panic!("{name} missing"));
            assert_eq!(cost.package, "stdlib");
        }
        // Sanity of the measurement: modules preloaded by the driver cost about nothing,
        // asyncio is among the most expensive.
        assert!(parsed.get("os").unwrap().fuel < 1_000_000);
        assert!(parsed.get("asyncio").unwrap().fuel > 1_000_000_000);
        assert!(parsed.get("json").unwrap().fuel > parsed.get("math").unwrap().fuel);
    }

    #[test]
    fn load_merges_the_data_file_and_survives_bad_ones() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            ImportFuelTable::load(Some(dir.path())),
            ImportFuelTable::builtin()
        );
        assert_eq!(ImportFuelTable::load(None), ImportFuelTable::builtin());

        std::fs::write(
            dir.path().join(DATA_FILE),
            r#"{"python": {"openpyxl": {"package": "openpyxl", "fuel": 7000000000, "ms": 900.5, "category": "documents"},
                           "json": {"package": "stdlib", "fuel": 1}},
                "javascript": {"csv-simple": {"package": "csv-simple", "fuel": 2000000, "ms": 1.0, "category": "data"}},
                "generated_at": "2026-11-22"}"#,
        )
        .unwrap();
        let table = ImportFuelTable::load(Some(dir.path()));
        assert_eq!(table.get("openpyxl").unwrap().fuel, 7_000_000_000);
        assert_eq!(
            table.get("json").unwrap().fuel,
            1,
            "the data file overrides"
        );
        assert_eq!(
            table
                .resolve(Language::Python, "openpyxl.styles.fonts")
                .unwrap()
                .0,
            "openpyxl"
        );
        assert!(table.resolve(Language::Python, "nothing.here").is_none());
        assert_eq!(table.iter(Language::JavaScript).count(), 1);
        assert!(table.get_in(Language::JavaScript, "csv-simple").is_some());

        std::fs::write(dir.path().join(DATA_FILE), "{not json").unwrap();
        assert_eq!(
            ImportFuelTable::load(Some(dir.path())),
            ImportFuelTable::builtin()
        );
        std::fs::write(dir.path().join(DATA_FILE), r#"{"python": [1, 2]}"#).unwrap();
        assert_eq!(
            ImportFuelTable::load(Some(dir.path())),
            ImportFuelTable::builtin()
        );
    }

    #[test]
    fn iteration_is_sorted_and_similar_names_are_found() {
        let table = ImportFuelTable::builtin();
        let names: Vec<&str> = table.iter(Language::Python).map(|(n, _)| n).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert_eq!(table.similar(Language::Python, "jsno"), ["json"]);
        assert!(table.similar(Language::Python, "yaml").is_empty());
        assert_eq!(
            table.similar(Language::Python, "colections"),
            ["collections"]
        );
        assert_eq!(edit_distance("jsno", "json"), 1);
        assert!(
            table
                .similar(Language::Python, "x".repeat(100).as_str())
                .is_empty()
        );
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
