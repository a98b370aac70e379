//! `list_available_packages`: what can be imported without installing (the vendored Python
//! packages by category with their first-import fuel, the JavaScript library), and what a
//! session installed.

use std::collections::BTreeMap;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, tool, tool_router};
use sandbox_protocol::Language;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::args::{LanguageArg, check_session_id, no_session};
use super::reply;
use crate::packages::catalog::{
    self, InstalledDistribution, VendoredEntry, installed_js, installed_python,
};
use crate::server::SandboxServer;

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

/// What `list_available_packages` answers; a language not asked for is left out.
#[derive(Debug, Serialize)]
struct PackageList<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    python: Option<PythonPackages<'a>>,
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
        let language = args.language.map(Language::from);
        let wants_python = language != Some(Language::JavaScript);
        let vendored = if wants_python {
            catalog::vendored_python(self.config.data_dir.as_deref())
        } else {
            BTreeMap::new()
        };
        let python = wants_python.then(|| PythonPackages {
            location: "/data/site-packages (read-only, already on sys.path)",
            import_pattern: "import name  (e.g. import yaml, from openpyxl import Workbook)",
            default_fuel_budget: self.config.defaults.fuel,
            by_category: catalog::vendored_by_category(&vendored),
            not_available: "packages with compiled extensions (numpy, pandas, scipy, lxml, pillow, ...); there is no network",
        });
        let javascript = (language != Some(Language::Python)).then(catalog::js_catalog);
        let installed = match &args.session_id {
            Some(id) => {
                check_session_id(id)?;
                let owner = self.owner(&ctx);
                let session = self
                    .sessions
                    .get(&owner, id)
                    .ok_or_else(|| no_session(id, self.sessions.expired(&owner, id)))?;
                Some(match session.language {
                    Language::Python => Installed::Python(installed_python(&session.files.app)),
                    Language::JavaScript => Installed::JavaScript(installed_js(&session.files.app)),
                })
            }
            None => None,
        };
        let text = format!(
            "{} vendored Python imports; JavaScript: {}",
            vendored.len(),
            javascript.map_or(0, |_| catalog::js_package_count())
        );
        let list = PackageList {
            python,
            javascript,
            installed,
        };
        reply::structured(&list, false, text)
    }
}
