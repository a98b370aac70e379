//! `install_package`: makes a package importable in a session (see `packages` for how), and
//! the install step `execute_command` shares for `pip install` lines.

use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

use super::args::{SessionSelector, bounded_text};
use super::reply;
use super::sessions::Refusal;
use crate::packages::{self, InstallRefusal, InstallReport, names};
use crate::server::SandboxServer;
use crate::session::{Session, Work};

/// What the model reads about `install_package`.
pub const DESCRIPTION: &str = "Install a package into a session, importable at once. Python: pure-Python wheels (numpy, pandas, scipy are built in). JavaScript: vendored packages, for requireVendor(name). Check list_available_packages first.";

/// How long a running interpreter may take to notice newly installed packages.
const REFRESH_TIMEOUT: Duration = Duration::from_secs(10);

/// Arguments of `install_package`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct InstallPackageArgs {
    /// A PyPI or npm name only (e.g. "tabulate"): no paths, URLs, extras or options.
    pub package: String,
    /// Exact (default: newest pure-Python release).
    #[serde(default)]
    pub version: Option<String>,
    #[serde(flatten)]
    pub session: SessionSelector,
}

#[tool_router(router = install_package_router, vis = "pub(crate)")]
impl SandboxServer {
    #[tool(
        description = DESCRIPTION,
        annotations(
            destructive_hint = false,
            open_world_hint = true
        )
    )]
    async fn install_package(
        &self,
        Parameters(args): Parameters<InstallPackageArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        // Generous bounds: the names are checked properly by the installer, with advice.
        bounded_text("package", &args.package, names::MAX_NAME_LEN * 4)?;
        if let Some(version) = &args.version {
            bounded_text("version", version, names::MAX_VERSION_LEN * 4)?;
        }
        let owner = self.owner(&ctx);
        let report = match self.selected_session(&owner, &args.session).1 {
            Ok(session) => {
                self.install(&session, &args.package, args.version.as_deref(), &ctx)
                    .await
            }
            Err(Refusal::Invalid(e)) => return Err(e),
            Err(Refusal::Tool {
                error_type,
                message,
                ..
            }) => InstallReport::no_session(error_type, message),
        };
        reply::structured(&report, !report.succeeded(), report.message().to_owned())
    }

    /// Installs a package into a session and makes its running interpreter see it.
    pub(crate) async fn install(
        &self,
        session: &Arc<Session>,
        package: &str,
        version: Option<&str>,
        ctx: &RequestContext<RoleServer>,
    ) -> InstallReport {
        let runtime = session.runtime();
        let staged = packages::stage(
            runtime,
            package,
            version,
            self.sandbox.sessions.dirs(),
            self.sandbox.config.data_dir.as_deref(),
            &self.sandbox.config.packages,
        )
        .await;
        let installed = match staged {
            Ok(staged) => move_in(session, package, staged).await,
            Err(refusal) => Err(refusal),
        };
        let refresh = installed
            .as_ref()
            .is_ok_and(|installation| installation.refresh_interpreter);
        if refresh && session.has_worker() {
            // What the refresh answers does not matter: a fresh interpreter sees the packages.
            let refresh = Work::Code(packages::python::PYTHON_REFRESH.into());
            self.run_work(session, refresh, REFRESH_TIMEOUT, ctx).await;
        }
        InstallReport::new(package, &session.id, installed)
    }
}

/// Moves a staged install into the session, within its disk quota: what it adds is measured,
/// the session's worker charges it (or the files are counted without one), and only a granted
/// install moves; a refused one leaves the session as it was.
async fn move_in(
    session: &Session,
    package: &str,
    staged: packages::Staged,
) -> Result<packages::Installation, InstallRefusal> {
    let files = session.files();
    let growth = staged.growth(&files.app)?;
    let grant = session
        .reserve_disk(growth)
        .await
        .map_err(|charge| InstallRefusal::disk_quota(package, growth, &charge))?;
    let moved = staged.move_in(&files.app);
    drop(grant);
    moved
}
