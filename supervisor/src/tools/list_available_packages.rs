//! `list_available_packages`: what can be imported without installing (the packages compiled
//! into CPython with their import cost and memory, the vendored pure-Python packages by
//! category, the JavaScript library), and what a session installed.

use std::collections::BTreeMap;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, tool, tool_router};
use sandbox_protocol::{Language, Runtime};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::args::{LanguageArg, check_session_id, no_session};
use super::reply;
use crate::inventory::{self, Catalogue};
use crate::packages::catalog::{
    self, InstalledDistribution, VendoredEntry, installed_js, installed_python,
};
use crate::server::SandboxServer;
use crate::session::Session;

/// What the model reads about `list_available_packages`.
pub const DESCRIPTION: &str = "List what imports without installing: Python packages built in and vendored (with first-import fuel), JavaScript modules and requireVendor packages.";

/// Arguments of `list_available_packages`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListPackagesArgs {
    /// Default: both.
    #[serde(default)]
    pub language: Option<LanguageArg>,
    /// Also list what this session installed.
    #[serde(default)]
    pub session_id: Option<String>,
}

/// What `list_available_packages` answers; a language not asked for is left out.
#[derive(Debug, Serialize)]
struct PackageList<'a> {
    /// The session asked about: its runtime, which decides what it imports.
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<SessionRuntime>,
    #[serde(skip_serializing_if = "Option::is_none")]
    python: Option<PythonPackages<'a>>,
    /// The JavaScript catalogue as shipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    javascript: Option<&'static Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    installed: Option<Installed>,
}

/// What a Python session imports: the packages compiled into the interpreter, and the vendored
/// pure-Python ones.
#[derive(Debug, Serialize)]
struct PythonPackages<'a> {
    interpreter: &'static str,
    /// An execution's fuel unless fuel_budget is given.
    default_fuel_budget: u64,
    import_pattern: &'static str,
    compiled_in: CompiledIn,
    vendored: Vendored<'a>,
    not_available: &'static str,
}

/// The vendored pure-Python packages.
#[derive(Debug, Serialize)]
struct Vendored<'a> {
    location: &'static str,
    by_category: BTreeMap<String, Vec<VendoredEntry<'a>>>,
}

/// The runtime of the session asked about.
#[derive(Debug, Serialize)]
struct SessionRuntime {
    session_id: String,
    runtime: Runtime,
    imports_from: &'static str,
}

/// The packages compiled into the interpreter.
#[derive(Debug, Serialize)]
struct CompiledIn {
    /// Guest memory of a fresh session; each entry says what it holds after its import.
    fresh_session_memory_mib: f64,
    by_category: BTreeMap<&'static str, Vec<CompiledEntry>>,
}

/// One module compiled into the interpreter, with its measured first import.
#[derive(Debug, Serialize)]
struct CompiledEntry {
    import: &'static str,
    package: &'static str,
    version: &'static str,
    /// Part of it is compiled code (install_package could not add it).
    native: bool,
    first_import_fuel: u64,
    first_import_ms: f64,
    memory_after_import_mib: f64,
}

/// What a session installed, in its language.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Installed {
    Python(Vec<InstalledDistribution>),
    JavaScript(Vec<String>),
}

#[tool_router(router = list_available_packages_router, vis = "pub(crate)")]
impl SandboxServer {
    #[tool(
        description = DESCRIPTION,
        annotations(
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn list_available_packages(
        &self,
        Parameters(args): Parameters<ListPackagesArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let session = match &args.session_id {
            Some(id) => {
                check_session_id(id)?;
                let owner = self.owner(&ctx);
                Some(
                    self.sandbox
                        .sessions
                        .get(&owner, id)
                        .ok_or_else(|| no_session(id, self.sandbox.sessions.expired(&owner, id)))?,
                )
            }
            None => None,
        };
        // A session's own language and runtime decide; without one, what was asked for.
        let runtime = session.as_ref().map(|s| s.runtime());
        let language = runtime
            .map(Runtime::language)
            .or(args.language.map(Language::from));
        let wants_python = language != Some(Language::JavaScript);
        let vendored = if wants_python {
            catalog::vendored_python(self.sandbox.config.data_dir.as_deref())
        } else {
            BTreeMap::new()
        };
        let catalogue = inventory::catalogue();
        let python = wants_python.then(|| PythonPackages {
            interpreter: &catalogue.meta.interpreter,
            default_fuel_budget: crate::config::default_execution_fuel(
                self.sandbox.config.defaults.fuel,
                Runtime::Python,
                self.sandbox.config.defaults.timeout,
            ),
            import_pattern: "import name  (e.g. import pandas as pd, from openpyxl import Workbook)",
            compiled_in: compiled_in(catalogue),
            vendored: Vendored {
                location: "/data/site-packages (read-only, already on sys.path)",
                by_category: catalog::vendored_by_category(&vendored),
            },
            not_available: "other packages with compiled extensions (torch, cryptography); there is no network",
        });
        let javascript = (language != Some(Language::Python)).then(catalog::js_catalog);
        let installed = session.as_ref().map(|s| installed_in(s));
        let text = format!(
            "Python: {} compiled-in and {} vendored imports; JavaScript: {}",
            python.as_ref().map_or(0, |p| p
                .compiled_in
                .by_category
                .values()
                .map(Vec::len)
                .sum()),
            vendored.len(),
            javascript.map_or(0, |_| catalog::js_package_count())
        );
        let list = PackageList {
            session: session.as_ref().map(|s| session_runtime(s)),
            python,
            javascript,
            installed,
        };
        reply::structured(&list, false, text)
    }
}

/// What a session installed into its workspace.
fn installed_in(session: &Session) -> Installed {
    match session.language() {
        Language::Python => Installed::Python(installed_python(&session.files().app)),
        Language::JavaScript => Installed::JavaScript(installed_js(&session.files().app)),
    }
}

/// Which section a session imports from.
fn session_runtime(session: &Session) -> SessionRuntime {
    let runtime = session.runtime();
    SessionRuntime {
        session_id: session.id.clone(),
        runtime,
        imports_from: match runtime {
            Runtime::Python => "python (plus what it installed)",
            Runtime::JavaScript => "javascript (plus what it installed)",
        },
    }
}

/// The interpreter's compiled-in packages by category, with their measured import costs.
fn compiled_in(catalogue: &'static Catalogue) -> CompiledIn {
    let mut by_category: BTreeMap<&'static str, Vec<CompiledEntry>> = BTreeMap::new();
    for (import, entry) in catalogue.imports.iter().filter(|(_, e)| e.available) {
        let Some((_, dist)) = catalogue.distribution(&entry.package) else {
            continue;
        };
        by_category
            .entry(dist.category.as_str())
            .or_default()
            .push(CompiledEntry {
                import,
                package: &entry.package,
                version: &entry.version,
                native: dist.native,
                first_import_fuel: entry.fuel,
                first_import_ms: entry.ms,
                memory_after_import_mib: entry.memory_mib,
            });
    }
    CompiledIn {
        fresh_session_memory_mib: catalogue.memory.baseline_mib,
        by_category,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_in_packages_carry_their_costs() {
        let catalogue = inventory::catalogue();
        let list = compiled_in(catalogue);
        let science = &list.by_category["data science"];
        let pandas = science.iter().find(|e| e.import == "pandas").unwrap();
        assert_eq!(pandas.version, catalogue.distributions["pandas"].version);
        // Preloaded in the memory image: already in a fresh session's memory.
        assert!(pandas.native && pandas.first_import_fuel < 1_000_000);
        let sklearn = science.iter().find(|e| e.import == "sklearn").unwrap();
        assert!(sklearn.native && sklearn.first_import_fuel > 1_000_000_000);
        assert!(sklearn.memory_after_import_mib > list.fresh_session_memory_mib);
        let pyplot = &list.by_category["plotting/images"];
        assert!(pyplot.iter().any(|e| e.import == "matplotlib.pyplot"));
    }
}
