//! `list_available_packages`: what can be imported without installing (the vendored Python
//! packages by category with their first-import fuel, the packages compiled into the
//! python-scientific runtime with their import cost and memory, the JavaScript library), and
//! what a session installed. About a session, it shows what that session's runtime imports.

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
use crate::packages::catalog::{
    self, InstalledDistribution, VendoredEntry, installed_js, installed_python,
};
use crate::packages::scientific::{self, Catalogue};
use crate::runtimes::{Availability, SCIENTIFIC_CHOICE, SCIENTIFIC_INSTALL_HINT};
use crate::server::SandboxServer;
use crate::session::Session;

/// What the model reads about `list_available_packages`.
pub const DESCRIPTION: &str = "List what imports without installing: vendored Python packages by category with first-import fuel, and JavaScript modules, helpers and requireVendor packages.";

/// Arguments of `list_available_packages`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListPackagesArgs {
    /// Default: both.
    #[serde(default)]
    pub language: Option<LanguageArg>,
    /// Also list what this session installed (default: none).
    #[serde(default)]
    pub session_id: Option<String>,
}

/// What `list_available_packages` answers; a language not asked for is left out, and so is a
/// Python runtime the session asked about is not on.
#[derive(Debug, Serialize)]
struct PackageList<'a> {
    /// The session asked about: its runtime, which decides what it imports.
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<SessionRuntime>,
    #[serde(skip_serializing_if = "Option::is_none")]
    python: Option<PythonPackages<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    python_scientific: Option<ScientificPackages>,
    /// The JavaScript catalogue as shipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    javascript: Option<&'static Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    installed: Option<Installed>,
}

/// The vendored Python packages.
#[derive(Debug, Serialize)]
struct PythonPackages<'a> {
    location: &'static str,
    import_pattern: &'static str,
    default_fuel_budget: u64,
    by_category: BTreeMap<String, Vec<VendoredEntry<'a>>>,
    not_available: &'static str,
}

/// The runtime of the session asked about.
#[derive(Debug, Serialize)]
struct SessionRuntime {
    session_id: String,
    runtime: Runtime,
    imports_from: &'static str,
}

/// The packages compiled into the python-scientific runtime.
#[derive(Debug, Serialize)]
struct ScientificPackages {
    runtime: Runtime,
    interpreter: &'static str,
    /// `installed`, `preparing` or `not_installed` on this server.
    status: &'static str,
    how_to_use: String,
    /// A scientific session's fuel per execution unless fuel_budget is given.
    default_fuel_budget: u64,
    /// Guest memory of a fresh session; each entry says what it holds after its import.
    fresh_session_memory_mib: f64,
    by_category: BTreeMap<&'static str, Vec<ScientificEntry>>,
}

/// One module compiled into the scientific runtime, with its measured first import.
#[derive(Debug, Serialize)]
struct ScientificEntry {
    import: &'static str,
    package: &'static str,
    version: &'static str,
    /// Part of it is compiled code (it cannot run on the default runtime).
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
            title = "List available packages",
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
                    self.sessions
                        .get(&owner, id)
                        .ok_or_else(|| no_session(id, self.sessions.expired(&owner, id)))?,
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
        let vendored = if wants_python && runtime != Some(Runtime::PythonScientific) {
            catalog::vendored_python(self.config.data_dir.as_deref())
        } else {
            BTreeMap::new()
        };
        let python = (wants_python && runtime != Some(Runtime::PythonScientific)).then(|| {
            PythonPackages {
                location: "/data/site-packages (read-only, already on sys.path)",
                import_pattern: "import name  (e.g. import yaml, from openpyxl import Workbook)",
                default_fuel_budget: crate::config::default_execution_fuel(
                    self.config.defaults.fuel,
                    Runtime::Python,
                    self.config.defaults.timeout,
                ),
                by_category: catalog::vendored_by_category(&vendored),
                not_available: "packages with compiled extensions: numpy, pandas, scipy, lxml, pillow and the rest of python_scientific run on that runtime, others (torch, cryptography) nowhere; there is no network",
            }
        });
        let availability = self
            .runtimes
            .availability(Runtime::PythonScientific, &self.config);
        let python_scientific = wants_python.then(|| {
            let fuel = crate::config::default_execution_fuel(
                self.config.defaults.fuel,
                Runtime::PythonScientific,
                self.config.defaults.timeout,
            );
            scientific_packages(scientific::catalogue(), &availability, runtime, fuel)
        });
        let javascript = (language != Some(Language::Python)).then(catalog::js_catalog);
        let installed = session.as_ref().map(|s| installed_in(s));
        let text = match &python_scientific {
            Some(sci) => format!(
                "{} vendored Python imports; python-scientific ({}): {} compiled-in imports; JavaScript: {}",
                vendored.len(),
                sci.status,
                sci.by_category.values().map(Vec::len).sum::<usize>(),
                javascript.map_or(0, |_| catalog::js_package_count())
            ),
            None => format!(
                "{} vendored Python imports; JavaScript: {}",
                vendored.len(),
                javascript.map_or(0, |_| catalog::js_package_count())
            ),
        };
        let list = PackageList {
            session: session.as_ref().map(|s| session_runtime(s)),
            python,
            python_scientific,
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
            Runtime::PythonScientific => "python_scientific (plus what it installed)",
            Runtime::Python => {
                "python (plus what it installed); python_scientific needs a session on that runtime"
            }
            Runtime::JavaScript => "javascript (plus what it installed)",
        },
    }
}

/// The scientific runtime's packages by category, with their measured import costs. A session
/// on the default runtime (`current`) is told that these need another session.
fn scientific_packages(
    catalogue: &'static Catalogue,
    availability: &Availability,
    current: Option<Runtime>,
    default_fuel_budget: u64,
) -> ScientificPackages {
    let mut by_category: BTreeMap<&'static str, Vec<ScientificEntry>> = BTreeMap::new();
    for (import, entry) in catalogue.imports.iter().filter(|(_, e)| e.available) {
        let Some((_, dist)) = catalogue.distribution(&entry.package) else {
            continue;
        };
        by_category
            .entry(dist.category.as_str())
            .or_default()
            .push(ScientificEntry {
                import,
                package: &entry.package,
                version: &entry.version,
                native: dist.native,
                first_import_fuel: entry.fuel,
                first_import_ms: entry.ms,
                memory_after_import_mib: entry.memory_mib,
            });
    }
    let (status, how_to_use) = match availability {
        Availability::Installed | Availability::Preparing
            if current == Some(Runtime::PythonScientific) =>
        {
            (
                "installed",
                "this session runs on it: import directly".to_owned(),
            )
        }
        Availability::Installed | Availability::Preparing => (
            if *availability == Availability::Installed {
                "installed"
            } else {
                "preparing"
            },
            format!(
                "a session gets it {SCIENTIFIC_CHOICE}; variables and files do not carry over between sessions"
            ),
        ),
        Availability::NotInstalled | Availability::Failed(_) => (
            "not_installed",
            format!("not on this server: {SCIENTIFIC_INSTALL_HINT}"),
        ),
    };
    ScientificPackages {
        runtime: Runtime::PythonScientific,
        interpreter: &catalogue.meta.interpreter,
        status,
        how_to_use,
        default_fuel_budget,
        fresh_session_memory_mib: catalogue.memory.baseline_mib,
        by_category,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scientific_packages_carry_costs_and_say_how_to_get_them() {
        let catalogue = scientific::catalogue();
        let list = scientific_packages(catalogue, &Availability::Installed, None, 5);
        assert_eq!(list.status, "installed");
        assert!(
            list.how_to_use
                .contains("\"runtime\": \"python-scientific\"")
        );
        let science = &list.by_category["data science"];
        let pandas = science.iter().find(|e| e.import == "pandas").unwrap();
        assert_eq!(pandas.version, catalogue.distributions["pandas"].version);
        // Preloaded in every scientific worker: already in a fresh session's memory.
        assert!(pandas.native && pandas.first_import_fuel < 1_000_000);
        let sklearn = &list.by_category["data science"];
        let sklearn = sklearn.iter().find(|e| e.import == "sklearn").unwrap();
        assert!(sklearn.native && sklearn.first_import_fuel > 1_000_000_000);
        assert!(sklearn.memory_after_import_mib > list.fresh_session_memory_mib);
        let pyplot = &list.by_category["plotting/images"];
        assert!(pyplot.iter().any(|e| e.import == "matplotlib.pyplot"));

        let own = scientific_packages(
            catalogue,
            &Availability::Installed,
            Some(Runtime::PythonScientific),
            5,
        );
        assert!(own.how_to_use.contains("this session runs on it"));

        let missing = scientific_packages(catalogue, &Availability::NotInstalled, None, 5);
        assert_eq!(missing.status, "not_installed");
        assert!(
            missing
                .how_to_use
                .contains("prepare.sh without --no-scientific")
        );
    }
}
