//! What each import of a snippet will cost or why it fails: measured first-import fuel,
//! modules missing from the sandbox's CPython, the packages compiled into it, native packages
//! it lacks, network clients, Node.js
//! `require`, ES `import` statements, and vendored JavaScript packages.

use sandbox_protocol::Language;

use super::super::fmt_fuel;
use super::super::modules;
use super::super::scan::{ImportKind, ImportRef};
use super::ImportInfo;
use super::facts::CodeFacts;
use super::findings::Analysis;
use crate::inventory;
use crate::inventory::imports::{ImportCost, ImportFuelTable};

/// Assumed cost of importing a third-party module nobody measured: (low, expected, high).
/// Third-party packages are mostly heavier than stdlib modules (openpyxl takes billions).
pub(super) const UNMEASURED_IMPORT_FUEL: (u64, u64, u64) =
    (100_000_000, 1_000_000_000, 8_000_000_000);

/// A first import at or above this is a "heavy import" (3 % of the default budget or more):
/// `pathlib`, `dataclasses`, `asyncio`, most third-party packages; not `json` or `re`.
const HEAVY_PATTERN_FUEL: u64 = 300_000_000;

/// The imports the table has a cost for: (module as written, matched name, cost).
type Measured<'t> = [(String, &'t str, &'t ImportCost)];

/// Reports every import (at most 200) and the cost of the heaviest one.
pub(super) fn import_findings(facts: &CodeFacts<'_>, table: &ImportFuelTable, out: &mut Analysis) {
    let measured = facts.measured_imports(table);
    for import in facts.imports.iter().take(200) {
        let info = match import.kind {
            ImportKind::Python => python_import(import, &measured, out),
            ImportKind::Vendor => vendored_import(import, &measured, table, out),
            ImportKind::Require => node_require(import, out),
            ImportKind::EsImport => es_module_import(import, out),
        };
        out.imports.push(info);
    }
    if facts.language() == Language::Python {
        let heavy: Vec<&(String, u64)> = out
            .import_costs
            .iter()
            .filter(|(_, f)| *f >= HEAVY_PATTERN_FUEL)
            .collect();
        if let Some((name, fuel)) = heavy.iter().max_by_key(|(_, f)| *f) {
            out.suggest(format!(
                "The first import of {name} costs {} fuel; later calls in the same session reuse the loaded module for free. For a tight budget, run the imports alone in a first call.",
                fmt_fuel(*fuel)
            ));
        }
    }
}

/// An import nothing is known about yet.
fn unmeasured(import: &ImportRef) -> ImportInfo {
    ImportInfo {
        module: import.module.clone(),
        line: import.line,
        status: "unmeasured".into(),
        package: None,
        fuel: None,
        note: None,
    }
}

/// A Python import: missing from this CPython, native, a network client, limited, or priced.
fn python_import(import: &ImportRef, measured: &Measured<'_>, out: &mut Analysis) -> ImportInfo {
    let (module, line) = (import.module.as_str(), import.line);
    let mut info = unmeasured(import);
    if let Some(why) = modules::missing_stdlib(module) {
        info.status = "unavailable".into();
        info.note = Some(why.into());
        out.find(
            "unavailable_modules",
            Some(line),
            format!("{module}: not in this CPython build"),
        );
        out.block(format!("`import {module}` (line {line}) fails: the module is not in the sandbox's CPython; {why}"));
    } else if let top = module.split('.').next().unwrap_or(module)
        && let Some((dist, d)) = inventory::catalogue().distribution(top)
    {
        info.status = "compiled_in".into();
        info.package = Some(dist.into());
        info.note = Some(format!(
            "{dist} {} is compiled into the sandbox's CPython",
            d.version
        ));
        python_import_cost(import, measured, &mut info, out);
    } else if let Some((dist, alternative)) = modules::native_package(module) {
        info.status = "native".into();
        info.package = Some(dist.into());
        info.note = Some(format!("native extension; use {alternative}"));
        out.find(
            "native_packages",
            Some(line),
            format!("{module} ({dist}) has native code"),
        );
        out.block(format!("`{module}` (line {line}) is a native package ({dist}): C extensions cannot load in the WebAssembly interpreter and install_package cannot add it"));
        out.suggest(format!("Instead of {module}: {alternative}."));
    } else if modules::network_package(module) {
        info.status = "no_effect".into();
        info.package = Some(modules::pypi_name(module));
        info.note = Some("needs the network, which the sandbox does not have".into());
        out.find(
            "network",
            Some(line),
            format!("{module} is a network client"),
        );
        out.block(format!("`{module}` (line {line}) is a network client: the sandbox has no network, so every request fails"));
    } else {
        if let Some(why) = modules::limited_stdlib(module) {
            info.status = "no_effect".into();
            info.note = Some(why.into());
            out.find(
                limited_pattern(module),
                Some(line),
                format!("{module}: {why}"),
            );
            out.warn(format!("`{module}` (line {line}) {why}"));
        }
        python_import_cost(import, measured, &mut info, out);
    }
    info
}

/// The measured cost of a Python import, or the assumed cost of a third-party one.
fn python_import_cost(
    import: &ImportRef,
    measured: &Measured<'_>,
    info: &mut ImportInfo,
    out: &mut Analysis,
) {
    let module = import.module.as_str();
    if let Some((_, name, cost)) = measured
        .iter()
        .find(|(wanted, _, _)| *wanted == module || wanted.starts_with(&format!("{module}.")))
    {
        if info.status == "unmeasured" {
            info.status = "measured".into();
        }
        info.fuel = Some(cost.fuel);
        info.package = Some(cost.package.clone());
        out.import_costs.push(((*name).to_owned(), cost.fuel));
        if cost.fuel >= HEAVY_PATTERN_FUEL {
            out.find(
                "heavy_imports",
                Some(import.line),
                format!(
                    "import {name}: {} fuel, {:.0} ms on first import",
                    fmt_fuel(cost.fuel),
                    cost.ms
                ),
            );
        }
    } else if info.status == "unmeasured" {
        info.package = Some(modules::pypi_name(module));
        let (l, e, h) = UNMEASURED_IMPORT_FUEL;
        out.fuel
            .push((format!("import {module} (not measured)"), l, e, h));
        out.find(
            "third_party_imports",
            Some(import.line),
            format!(
                "{module}: cost not measured; if it is not vendored, install_package {} first",
                modules::pypi_name(module)
            ),
        );
    }
}

/// The finding pattern for a stdlib module that imports but cannot do its job.
fn limited_pattern(module: &str) -> &'static str {
    match module.split('.').next().unwrap_or(module) {
        "subprocess" | "asyncio" => "subprocess",
        "threading" | "concurrent" => "threads",
        _ => "network",
    }
}

/// JavaScript `requireVendor('m')`: priced when measured, flagged when the deployment lists its
/// vendored packages and `m` is not one of them.
fn vendored_import(
    import: &ImportRef,
    measured: &Measured<'_>,
    table: &ImportFuelTable,
    out: &mut Analysis,
) -> ImportInfo {
    let module = import.module.as_str();
    let mut info = unmeasured(import);
    info.status = "vendored".into();
    if let Some((_, name, cost)) = measured.iter().find(|(w, _, _)| *w == module) {
        info.fuel = Some(cost.fuel);
        info.package = Some(cost.package.clone());
        info.status = "measured".into();
        out.import_costs.push(((*name).to_owned(), cost.fuel));
    } else if table.len(Language::JavaScript) > 0 {
        info.note = Some("not in the vendored package list".into());
        out.block(format!(
            "requireVendor('{module}') (line {}): '{module}' is not a known vendored package; call list_available_packages {{\"language\": \"javascript\"}}",
            import.line
        ));
    }
    out.find(
        "vendored_packages",
        Some(import.line),
        format!("requireVendor('{module}')"),
    );
    info
}

/// JavaScript `require('m')`: there is no `require` in QuickJS.
fn node_require(import: &ImportRef, out: &mut Analysis) -> ImportInfo {
    let module = import.module.as_str();
    let mut info = unmeasured(import);
    info.status = if modules::node_builtin(module).is_some() {
        "node_builtin".into()
    } else {
        "unavailable".into()
    };
    let alternative = modules::node_builtin(module).unwrap_or(
        "a vendored package via requireVendor(name), if list_available_packages lists one",
    );
    info.note = Some(alternative.into());
    out.find(
        "js_require",
        Some(import.line),
        format!("require('{module}')"),
    );
    out.block(format!(
        "require('{module}') (line {}) fails: this is QuickJS, not Node.js, and `require` does not exist",
        import.line
    ));
    out.suggest(format!("Instead of require('{module}'): {alternative}."));
    info
}

/// JavaScript `import ... from 'm'`: cells are scripts, so the statement does not parse.
fn es_module_import(import: &ImportRef, out: &mut Analysis) -> ImportInfo {
    let module = import.module.as_str();
    let mut info = unmeasured(import);
    info.status = "es_module".into();
    info.note = Some("cells are scripts; import statements are syntax errors".into());
    out.find(
        "js_import",
        Some(import.line),
        format!("import from '{module}'"),
    );
    out.block(format!(
        "`import ... from '{module}'` (line {}) is a syntax error: each cell runs as a script, not an ES module",
        import.line
    ));
    let alternative = modules::node_builtin(module)
        .map(str::to_owned)
        .unwrap_or_else(|| format!("const lib = requireVendor('{module}') if it is vendored (see list_available_packages)"));
    out.suggest(format!("Instead of importing '{module}': {alternative}."));
    info
}
