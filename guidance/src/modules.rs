//! What the guidance knows about modules beyond their import cost: which Python modules cannot
//! work under WASI, which packages are native (C/Rust extensions that cannot load in a WASM
//! interpreter), which need a network, what a module is called on PyPI, and which Node.js
//! built-ins a JavaScript snippet may reach for.
//!
//! The stdlib facts were checked against the sandbox's CPython 3.15 build (the `import` of each
//! was tried in a fresh session, 2026-11-27); the package facts are about how the packages are
//! built. The facts themselves, keyed by module name, live in `words/modules.toml`.

use crate::words;

// The tables of `words/modules.toml`, looked up by module name under these prefixes.
const MISSING_STDLIB: &str = "modules.missing_stdlib.";
const LIMITED_STDLIB: &str = "modules.limited_stdlib.";
const NATIVE: &str = "modules.native.";
const NATIVE_BY_PYPI: &str = "modules.native_by_pypi.";
const PYPI: &str = "modules.pypi.";
const NODE_BUILTINS: &str = "modules.node_builtins.";

/// Why a stdlib module is missing and what to use, when it is.
pub(crate) fn missing_stdlib(module: &str) -> Option<&'static str> {
    words::find(&format!("{MISSING_STDLIB}{module}"))
        .or_else(|| words::find(&format!("{MISSING_STDLIB}{}", top_level(module))))
}

/// How a module that imports is still limited in the sandbox. An entry with a dot
/// (`urllib.request`) is that module only; the others cover their submodules too.
pub(crate) fn limited_stdlib(module: &str) -> Option<&'static str> {
    words::find(&format!("{LIMITED_STDLIB}{module}"))
        .or_else(|| words::find(&format!("{LIMITED_STDLIB}{}", top_level(module))))
}

/// (PyPI name, alternatives) of a native package.
pub(crate) fn native_package(module: &str) -> Option<(&'static str, &'static str)> {
    let top = top_level(module);
    let dist = words::find(&format!("{NATIVE}{top}.pypi"))?;
    let alternative = words::find(&format!("{NATIVE}{top}.instead"))?;
    Some((dist, alternative))
}

/// What to use instead of a native package named by its import name (`sklearn`) or its
/// distribution name as installers write it (`scikit-learn`, `Scikit_Learn`).
pub(crate) fn native_alternative(name: &str) -> Option<&'static str> {
    let normal = |s: &str| s.to_ascii_lowercase().replace('_', "-");
    let wanted = normal(name);
    // A PyPI name is the import name unless the index says otherwise.
    let import = words::find(&format!("{NATIVE_BY_PYPI}{wanted}")).unwrap_or(wanted.as_str());
    native_package(name)
        .or_else(|| native_package(import).filter(|(dist, _)| normal(dist) == wanted))
        .map(|(_, alt)| alt)
}

/// True for client libraries whose only job is the network, which the sandbox does not have.
pub(crate) fn network_package(module: &str) -> bool {
    let top = top_level(module);
    words::list("modules.network_packages")
        .iter()
        .any(|name| name == top)
}

/// The PyPI name for an import name: the known mapping, else the name with `_` as `-`.
pub(crate) fn pypi_name(module: &str) -> String {
    if let Some(dist) = words::find(&format!("{PYPI}{module}"))
        .or_else(|| words::find(&format!("{PYPI}{}", top_level(module))))
    {
        return dist.to_owned();
    }
    if let Some((dist, _)) = native_package(module) {
        return dist.to_owned();
    }
    top_level(module).replace('_', "-")
}

/// The import name of a package written by its PyPI distribution name (`opencv_python`,
/// `PyYAML`, `beautifulsoup4`, `python-dateutil` in any spelling), when the two differ: pip
/// installs `opencv-python`, the code imports `cv2`. From the tables of both directions.
pub(crate) fn import_name_of_dist(name: &str) -> Option<String> {
    let normal = |s: &str| s.to_ascii_lowercase().replace(['_', '.'], "-");
    let wanted = normal(name);
    let import = words::find(&format!("{NATIVE_BY_PYPI}{wanted}"))
        .map(str::to_owned)
        .or_else(|| {
            words::texts_under("modules.pypi")
                .find(|(_, dist)| normal(dist) == wanted)
                .map(|(import, _)| import.to_owned())
        })?;
    (normal(&import) != wanted).then_some(import)
}

/// The sandbox equivalent of a Node.js built-in, when `name` is one (`node:fs` too).
pub(crate) fn node_builtin(name: &str) -> Option<&'static str> {
    let name = name.strip_prefix("node:").unwrap_or(name);
    words::find(&format!("{NODE_BUILTINS}{name}"))
}

fn top_level(module: &str) -> &str {
    module.split('.').next().unwrap_or(module)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pypi_names_map_common_imports() {
        assert_eq!(pypi_name("yaml"), "pyyaml");
        assert_eq!(pypi_name("bs4"), "beautifulsoup4");
        assert_eq!(pypi_name("PIL"), "pillow");
        assert_eq!(pypi_name("PIL.Image"), "pillow");
        assert_eq!(pypi_name("sklearn"), "scikit-learn");
        assert_eq!(pypi_name("google.protobuf"), "protobuf");
        assert_eq!(pypi_name("more_itertools"), "more-itertools");
        assert_eq!(pypi_name("tabulate"), "tabulate");
    }

    #[test]
    fn distribution_names_map_back_to_import_names() {
        assert_eq!(import_name_of_dist("opencv_python").as_deref(), Some("cv2"));
        assert_eq!(import_name_of_dist("PyYAML").as_deref(), Some("yaml"));
        assert_eq!(
            import_name_of_dist("beautifulsoup4").as_deref(),
            Some("bs4")
        );
        assert_eq!(
            import_name_of_dist("python_dateutil").as_deref(),
            Some("dateutil")
        );
        assert_eq!(import_name_of_dist("Pillow").as_deref(), Some("PIL"));
        assert_eq!(
            import_name_of_dist("more_itertools"),
            None,
            "imports as it is spelt"
        );
        assert_eq!(
            import_name_of_dist("protobuf").as_deref(),
            Some("google.protobuf")
        );
        assert_eq!(import_name_of_dist("numpy"), None);
        assert_eq!(import_name_of_dist("yaml"), None);
    }

    #[test]
    fn module_classes() {
        assert!(missing_stdlib("ssl").is_some());
        assert!(missing_stdlib("_curses").is_some());
        assert!(missing_stdlib("tkinter.ttk").is_some());
        assert!(missing_stdlib("lzma").is_none(), "CPython 3.15 has it");
        assert!(limited_stdlib("multiprocessing").is_some());
        assert!(missing_stdlib("json").is_none());
        assert!(limited_stdlib("subprocess").is_some());
        assert!(limited_stdlib("urllib.request").is_some());
        assert!(limited_stdlib("urllib.parse").is_none());
        assert!(native_package("numpy.linalg").is_some());
        assert!(native_package("yaml").is_none());
        assert!(network_package("requests"));
        assert!(node_builtin("node:fs").is_some());
        assert!(node_builtin("lodash").is_none());
        for (name, found) in [
            ("numpy", true),
            ("sklearn", true),
            ("scikit-learn", true),
            ("Scikit_Learn", true),
            ("PIL.Image", true),
            ("tabulate", false),
        ] {
            assert_eq!(native_alternative(name).is_some(), found, "{name}");
        }
    }

    /// Installers name a package by its PyPI name, which `native_by_pypi` maps back to the
    /// import name where they differ.
    #[test]
    fn every_native_package_is_found_by_both_names() {
        let file: toml::Table = include_str!("../words/modules.toml").parse().unwrap();
        for (import, package) in file["modules"]["native"].as_table().unwrap() {
            let pypi = package["pypi"].as_str().unwrap();
            let instead = package["instead"].as_str();
            assert_eq!(native_package(import).map(|(dist, _)| dist), Some(pypi));
            assert_eq!(native_alternative(import), instead, "{import}");
            assert_eq!(native_alternative(pypi), instead, "{pypi}");
            assert_eq!(native_alternative(&pypi.to_uppercase()), instead, "{pypi}");
        }
    }
}
