//! `execute_command`: runs a shell command line over a session's files in its worker's
//! confined shell. A line that is only `pip install ...` is answered by the server's installer
//! instead (the shell has no pip), in the same result shape. Figures a `python FILE` draws come
//! back as images, as from execute_code. A command never chooses the session's runtime: its
//! text is not Python, so a session whose first call is a command starts on the default.

use std::sync::Arc;

use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, tool, tool_router};
use sandbox_protocol::ErrorType;
use schemars::JsonSchema;
use serde::Deserialize;

use super::args::{SessionSelector, bounded_text, non_blank, timeout_arg};
use super::reply;
use crate::engine::Lesson;
use crate::packages::InstallOutcome;
use crate::packages::requirements::{Requirement, pip_install_args};
use crate::report::ExecuteCodeResult;
use crate::server::SandboxServer;
use crate::session::{Session, Work};

/// What the model reads about `execute_command`.
pub const DESCRIPTION: &str = "Run a shell command line in a session (cwd /app): bash-like (pipes, &&, ||, redirects, here-docs, globs, $VARS, $(...), $((...)), {a,b}, if/for/while/case, functions). File commands run as WebAssembly (ls, cp, grep, find, sed, awk, tar, ...; `help` lists all); `python`/`node` run fresh in any session; `pip install NAME` uses the session. Sees only /app, /tmp and /data (read-only). Result as execute_code.";

/// Arguments of `execute_command`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExecuteCommandArgs {
    pub command: String,
    #[serde(flatten)]
    pub session: SessionSelector,
    /// Seconds, 0.1 to 300 (default: the session's).
    #[serde(default)]
    #[schemars(range(min = 0.1, max = 300))]
    pub timeout: Option<f64>,
}

#[tool_router(router = execute_command_router, vis = "pub(crate)")]
impl SandboxServer {
    #[tool(
        description = DESCRIPTION,
        output_schema = schema_for_output::<ExecuteCodeResult>(),
        annotations(open_world_hint = false)
    )]
    async fn execute_command(
        &self,
        Parameters(args): Parameters<ExecuteCommandArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        non_blank("command", &args.command)?;
        bounded_text("command", &args.command, self.sandbox.config.max_code_bytes)?;
        let timeout = timeout_arg(args.timeout)?;
        let owner = self.owner(&ctx);
        let (language, session) = self.selected_session(&owner, &args.session);
        let session = match session {
            Ok(session) => session,
            Err(refusal) => return self.refused(refusal, language),
        };
        if let Some(requirements) = pip_install_args(&args.command) {
            return reply::execution(&self.pip_install(&session, requirements, &ctx).await);
        }
        let timeout = timeout.unwrap_or(session.limits().timeout);
        let result = self
            .run_work(&session, Work::Command(args.command), timeout, &ctx)
            .await;
        reply::execution(&result)
    }

    /// `pip install A B==1.0` from execute_command, answered like a shell command: a line of
    /// stdout per package installed, a line of stderr per package refused.
    async fn pip_install(
        &self,
        session: &Arc<Session>,
        requirements: Result<Vec<Requirement>, String>,
        ctx: &RequestContext<RoleServer>,
    ) -> ExecuteCodeResult {
        let (mut stdout, mut stderr) = (String::new(), String::new());
        let mut error_type: Option<ErrorType> = None;
        match requirements {
            Err(message) => {
                error_type = Some(ErrorType::InvalidPackage);
                stderr.push_str(&format!("ERROR: {message}\n"));
            }
            Ok(requirements) => {
                for requirement in &requirements {
                    let name = requirement.name.as_str();
                    let report = self
                        .install(session, name, requirement.version.as_deref(), ctx)
                        .await;
                    match report.outcome() {
                        InstallOutcome::Installed(installation) => stdout.push_str(&format!(
                            "Successfully installed {name} {}\n",
                            installation.installed_version
                        )),
                        _ => {
                            error_type = error_type.or(report.error_type());
                            stderr.push_str(&format!("ERROR: {}\n", report.message()));
                        }
                    }
                }
            }
        }
        let failed = error_type.is_some();
        let mut result = ExecuteCodeResult::refused(
            &session.id,
            session.runtime(),
            ErrorType::CommandFailed,
            String::new(),
        );
        result.success = !failed;
        result.exit_code = i32::from(failed);
        result.error_type = error_type;
        result.error_message = failed.then(|| stderr.trim().to_owned());
        result.stdout = stdout;
        result.stderr = stderr;
        // A refused package gets the packages family's advice, as install_package's refusals
        // carry it; nothing ran in the interpreter.
        self.sandbox.teach(
            &mut result,
            &Lesson::nothing_ran(session.language(), session.limits().timeout),
        );
        result
    }
}
