//! `execute_code`: runs Python or JavaScript in a session (created on demand) and answers with
//! the [`ExecuteCodeResult`], plus the figures the code drew and the images it wrote to /app as
//! image content.

use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, tool, tool_router};
use sandbox_protocol::{Flavor, Language};
use schemars::JsonSchema;
use serde::Deserialize;

use super::args::{LanguageArg, invalid_argument, non_blank, timeout_arg};
use super::reply;
use crate::report::ExecuteCodeResult;
use crate::server::SandboxServer;
use crate::session::Work;

/// What the model reads about `execute_code`.
pub const DESCRIPTION: &str = "Run Python or JavaScript (QuickJS) in a persistent session: variables, imports and files persist between calls. result is the last expression's repr. Files in /app (cwd); /tmp is scratch, /data read-only. No network, no subprocesses. Python 3.15 with numpy, pandas, scipy, sklearn, matplotlib (figures return as images). JavaScript is not Node.js: no require/fs; use readText/writeText/requireVendor. A call runs until its timeout (default 30 s; pass timeout for longer work). On failure follow error_type, actionable_guidance and next_call.";

/// Arguments of `execute_code`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExecuteCodeArgs {
    /// Python statements, or JavaScript global script (not a module: no `import`).
    pub code: String,
    pub language: LanguageArg,
    /// Default: your session for `language`; a new id creates one.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Seconds, 0.1 to 300 (default: the session's, 30 for small).
    #[serde(default)]
    #[schemars(range(min = 0.1, max = 300))]
    pub timeout: Option<f64>,
    /// Session size if this call creates it (default small).
    #[serde(default)]
    pub flavor: Option<Flavor>,
}

#[tool_router(router = execute_code_router, vis = "pub(crate)")]
impl SandboxServer {
    #[tool(
        description = DESCRIPTION,
        output_schema = schema_for_output::<ExecuteCodeResult>(),
        annotations(destructive_hint = false, open_world_hint = false)
    )]
    async fn execute_code(
        &self,
        Parameters(args): Parameters<ExecuteCodeArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        non_blank("code", &args.code)?;
        // Bigger code is almost certainly data that belongs in a file under /app.
        let max = self.sandbox.config.max_code_bytes;
        if args.code.len() > max {
            return Err(invalid_argument(
                "code",
                format!(
                    "code is {} bytes, the limit is {max}; write large data to a file under /app in smaller pieces",
                    args.code.len()
                ),
            ));
        }
        let language = Language::from(args.language);
        let owner = self.owner(&ctx);
        let timeout = timeout_arg(args.timeout)?;
        let session =
            match self.resolve_session(&owner, args.session_id.as_deref(), language, args.flavor) {
                Ok(session) => session,
                Err(refusal) => return self.refused(refusal, language),
            };
        let timeout = timeout.unwrap_or(session.limits().timeout);
        let result = self
            .run_work(&session, Work::Code(args.code), timeout, &ctx)
            .await;
        let mut reply = reply::execution(&result)?;
        // Images the code wrote to /app come back as image content, once: a figure it saved
        // there is already attached.
        let attached: Vec<String> = reply
            .content
            .iter()
            .filter_map(|c| c.as_image().map(|image| image.data.clone()))
            .collect();
        reply.content.extend(
            crate::resources::new_images(&session.files().app, &result.written)
                .into_iter()
                .filter(|c| c.as_image().is_none_or(|i| !attached.contains(&i.data))),
        );
        Ok(reply)
    }
}
