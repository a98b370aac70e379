//! What each import of a snippet will cost or why it fails: measured first-import fuel,
//! modules missing from the sandbox's CPython, the packages compiled into it, native packages
//! it lacks, network clients, Node.js `require`, ES `import` statements, and vendored
//! JavaScript packages. What it says lives in `words/analysis.toml`.

use sandbox_protocol::Language;

use super::super::fmt_fuel;
use super::super::modules;
use super::super::scan::{ImportKind, ImportRef};
use super::ImportInfo;
use super::facts::CodeFacts;
use super::findings::Analysis;
use crate::inventory;
use crate::inventory::imports::{ImportCost, ImportFuelTable};
use crate::words::{self, say};

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
            out.suggest(say!(
                "heavy_import.suggestion",
                name = name,
                fuel = fmt_fuel(*fuel)
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
            say!("import_unavailable.finding", module = module),
        );
        out.block(say!(
            "import_unavailable.warning",
            module = module,
            line = line,
            why = why
        ));
    } else if let top = module.split('.').next().unwrap_or(module)
        && let Some((dist, d)) = inventory::catalogue().distribution(top)
    {
        info.status = "compiled_in".into();
        info.package = Some(dist.into());
        info.note = Some(say!(
            "import_compiled_in.note",
            dist = dist,
            version = d.version
        ));
        python_import_cost(import, measured, &mut info, out);
    } else if let Some((dist, alternative)) = modules::native_package(module) {
        info.status = "native".into();
        info.package = Some(dist.into());
        info.note = Some(say!("import_native.note", alternative = alternative));
        out.find(
            "native_packages",
            Some(line),
            say!("import_native.finding", module = module, dist = dist),
        );
        out.block(say!(
            "import_native.warning",
            module = module,
            line = line,
            dist = dist
        ));
        out.suggest(say!(
            "import_native.suggestion",
            module = module,
            alternative = alternative
        ));
    } else if modules::network_package(module) {
        info.status = "no_effect".into();
        info.package = Some(modules::pypi_name(module));
        info.note = Some(words::text("import_network.note").into());
        out.find(
            "network",
            Some(line),
            say!("import_network.finding", module = module),
        );
        out.block(say!("import_network.warning", module = module, line = line));
    } else {
        if let Some(why) = modules::limited_stdlib(module) {
            info.status = "no_effect".into();
            info.note = Some(why.into());
            out.find(
                limited_pattern(module),
                Some(line),
                say!("import_limited.finding", module = module, why = why),
            );
            out.warn(say!(
                "import_limited.warning",
                module = module,
                line = line,
                why = why
            ));
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
                say!(
                    "heavy_import.finding",
                    name = name,
                    fuel = fmt_fuel(cost.fuel),
                    ms = format!("{:.0}", cost.ms)
                ),
            );
        }
    } else if info.status == "unmeasured" {
        let package = modules::pypi_name(module);
        let (l, e, h) = UNMEASURED_IMPORT_FUEL;
        out.fuel
            .push((say!("import_unmeasured.fuel", module = module), l, e, h));
        out.find(
            "third_party_imports",
            Some(import.line),
            say!(
                "import_unmeasured.finding",
                module = module,
                package = package
            ),
        );
        info.package = Some(package);
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
        info.note = Some(words::text("import_not_vendored.note").into());
        out.block(say!(
            "import_not_vendored.warning",
            module = module,
            line = import.line
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
    let alternative =
        modules::node_builtin(module).unwrap_or_else(|| words::text("js_require.alternative"));
    info.note = Some(alternative.into());
    out.find(
        "js_require",
        Some(import.line),
        format!("require('{module}')"),
    );
    out.block(say!(
        "js_require.warning",
        module = module,
        line = import.line
    ));
    out.suggest(say!(
        "js_require.suggestion",
        module = module,
        alternative = alternative
    ));
    info
}

/// JavaScript `import ... from 'm'`: cells are scripts, so the statement does not parse.
fn es_module_import(import: &ImportRef, out: &mut Analysis) -> ImportInfo {
    let module = import.module.as_str();
    let mut info = unmeasured(import);
    info.status = "es_module".into();
    info.note = Some(words::text("js_import.note").into());
    out.find(
        "js_import",
        Some(import.line),
        format!("import from '{module}'"),
    );
    out.block(say!(
        "js_import.warning",
        module = module,
        line = import.line
    ));
    let alternative = modules::node_builtin(module)
        .map(str::to_owned)
        .unwrap_or_else(|| say!("js_import.alternative", module = module));
    out.suggest(say!(
        "js_import.suggestion",
        module = module,
        alternative = alternative
    ));
    info
}
