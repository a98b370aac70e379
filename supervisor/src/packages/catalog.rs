//! What is available without installing, and what a session installed: the vendored Python
//! imports (`import-fuel.json` in the data directory, with their measured first-import fuel),
//! the JavaScript catalogue (embedded at build time), and the packages in a session's
//! `/app/.packages` and `/app/node_modules`. Each source is parsed here and nowhere else.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::LazyLock;

use sandbox_protocol::confined::{EntryKind, Root};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{JS_PACKAGES_DIR, PYTHON_PACKAGES_DIR, entry_names};

/// The catalogue of the JavaScript standard library, helpers and vendored packages.
const JS_CATALOG: &str = include_str!("../../../vendor/js/catalog.json");

/// The JavaScript catalogue, parsed once (modules, helpers and packages with signatures,
/// examples and API notes such as the `[value, err]` tuple returns).
pub fn js_catalog() -> &'static Value {
    static PARSED: LazyLock<Value> =
        LazyLock::new(|| serde_json::from_str(JS_CATALOG).unwrap_or_default());
    &PARSED
}

/// How many packages the JavaScript catalogue vendors (for `requireVendor`).
pub fn js_package_count() -> usize {
    js_catalog()["packages"]
        .as_object()
        .map_or(0, serde_json::Map::len)
}

/// One vendored Python import, from `import-fuel.json`.
#[derive(Debug, Clone, Deserialize)]
pub struct VendoredImport {
    pub package: String,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub fuel: Option<u64>,
    #[serde(default)]
    pub ms: Option<f64>,
    #[serde(default)]
    pub over_default_budget: Option<bool>,
}

/// The vendored Python imports (import name → details), read from the data directory (the
/// operator's, not a session's).
pub fn vendored_python(data_dir: Option<&Path>) -> BTreeMap<String, VendoredImport> {
    #[derive(Deserialize)]
    struct File {
        python: BTreeMap<String, VendoredImport>,
    }
    data_dir
        .and_then(|d| std::fs::read_to_string(d.join("import-fuel.json")).ok())
        .and_then(|text| serde_json::from_str::<File>(&text).ok())
        .map(|f| f.python)
        .unwrap_or_default()
}

/// The vendored import that provides distribution `package`, if one does: `(import name,
/// details)`.
pub fn vendored_import<'a>(
    vendored: &'a BTreeMap<String, VendoredImport>,
    package: &str,
) -> Option<(&'a str, &'a VendoredImport)> {
    let wanted = super::normalize(package);
    vendored
        .iter()
        .find(|(_, v)| super::normalize(&v.package) == wanted)
        .map(|(import, v)| (import.as_str(), v))
}

/// One vendored import as `list_available_packages` shows it.
#[derive(Debug, Serialize)]
pub struct VendoredEntry<'a> {
    pub import: &'a str,
    pub package: &'a str,
    pub version: Option<&'a str>,
    pub first_import_fuel: Option<u64>,
    pub first_import_ms: Option<f64>,
    /// The first import alone costs more than the default fuel budget.
    pub needs_bigger_fuel_budget: bool,
}

/// The vendored imports grouped by category ("other" when the measurement names none).
pub fn vendored_by_category(
    vendored: &BTreeMap<String, VendoredImport>,
) -> BTreeMap<String, Vec<VendoredEntry<'_>>> {
    let mut categories: BTreeMap<String, Vec<VendoredEntry<'_>>> = BTreeMap::new();
    for (import, v) in vendored {
        let category = v.category.clone().unwrap_or_else(|| "other".into());
        categories.entry(category).or_default().push(VendoredEntry {
            import,
            package: &v.package,
            version: v.version.as_deref(),
            first_import_fuel: v.fuel,
            first_import_ms: v.ms,
            needs_bigger_fuel_budget: v.over_default_budget.unwrap_or(false),
        });
    }
    categories
}

/// The vendored distributions by name, sorted, once each (the standard library left out).
pub fn vendored_distributions(vendored: &BTreeMap<String, VendoredImport>) -> Vec<String> {
    let mut names: Vec<String> = vendored
        .values()
        .map(|v| v.package.clone())
        .filter(|p| p != "stdlib")
        .collect();
    names.sort();
    names.dedup();
    names
}

/// A distribution installed into a session's `/app/.packages`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct InstalledDistribution {
    pub package: String,
    pub version: String,
}

/// Distributions installed into a workspace (from their `.dist-info` directories). Names only:
/// nothing inside the guest-writable directory is read.
pub fn installed_python(app: &Root) -> Vec<InstalledDistribution> {
    let Ok(packages) = app.open_dir_nofollow(Path::new(PYTHON_PACKAGES_DIR)) else {
        return Vec::new();
    };
    let mut found: Vec<InstalledDistribution> = entry_names(&packages)
        .into_iter()
        .filter_map(|(name, _)| {
            let stem = name.strip_suffix(".dist-info")?;
            let (dist, version) = stem.rsplit_once('-')?;
            Some(InstalledDistribution {
                package: dist.to_owned(),
                version: version.to_owned(),
            })
        })
        .collect();
    found.sort();
    found
}

/// JavaScript packages installed into a workspace: real directories in `node_modules`, and
/// `@scope/name` one level down.
pub fn installed_js(app: &Root) -> Vec<String> {
    let Ok(modules) = app.open_dir_nofollow(Path::new(JS_PACKAGES_DIR)) else {
        return Vec::new();
    };
    let mut names = Vec::new();
    for (name, kind) in entry_names(&modules) {
        if kind != EntryKind::Dir {
            continue;
        }
        if name.starts_with('@') {
            if let Ok(scope) = modules.open_dir_nofollow(Path::new(&name)) {
                names.extend(
                    entry_names(&scope)
                        .into_iter()
                        .filter(|(_, k)| *k == EntryKind::Dir)
                        .map(|(pkg, _)| format!("{name}/{pkg}")),
                );
            }
        } else {
            names.push(name);
        }
    }
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_js_catalog_is_embedded() {
        assert!(js_catalog()["packages"]["csv-simple"].is_object());
        assert!(js_package_count() > 0);
    }

    #[test]
    fn vendored_imports_are_found_by_distribution_and_grouped() {
        let data = tempfile::tempdir().unwrap();
        std::fs::write(
            data.path().join("import-fuel.json"),
            r#"{"python": {
                "yaml": {"package": "PyYAML", "version": "6.0", "category": "formats", "fuel": 5},
                "json": {"package": "stdlib"},
                "dateutil": {"package": "python_dateutil", "over_default_budget": true}
            }}"#,
        )
        .unwrap();
        let vendored = vendored_python(Some(data.path()));
        assert_eq!(vendored.len(), 3);
        assert_eq!(
            vendored_import(&vendored, "pyyaml").map(|(i, _)| i),
            Some("yaml")
        );
        assert_eq!(
            vendored_import(&vendored, "Python-Dateutil").map(|(i, _)| i),
            Some("dateutil")
        );
        assert!(vendored_import(&vendored, "tabulate").is_none());
        assert_eq!(
            vendored_distributions(&vendored),
            ["PyYAML", "python_dateutil"]
        );
        let categories = vendored_by_category(&vendored);
        assert_eq!(categories["formats"][0].first_import_fuel, Some(5));
        assert!(
            categories["other"]
                .iter()
                .any(|e| e.needs_bigger_fuel_budget)
        );
        assert!(vendored_python(None).is_empty());
    }

    #[test]
    fn installed_distributions_come_from_dist_info_names() {
        let state = tempfile::tempdir().unwrap();
        let dirs = crate::workspace::StateDirs::create(state.path()).unwrap();
        let files = dirs.create_session("s").unwrap();
        assert!(installed_python(&files.app).is_empty());
        for dir in [
            "tabulate-0.9.0.dist-info",
            "tabulate",
            "attrs-23.1.0.dist-info",
        ] {
            std::fs::create_dir_all(files.app_path.join(".packages").join(dir)).unwrap();
        }
        let found = installed_python(&files.app);
        assert_eq!(
            serde_json::to_value(&found).unwrap(),
            serde_json::json!([
                {"package": "attrs", "version": "23.1.0"},
                {"package": "tabulate", "version": "0.9.0"},
            ])
        );
    }
}
