//! `get_execution_guidance`: analyses code before it runs (patterns, estimated fuel,
//! recommended settings, warnings, the runtime it needs), without executing anything.

use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{ErrorData as McpError, tool, tool_router};
use sandbox_protocol::Language;
use schemars::JsonSchema;
use serde::Deserialize;

use super::args::{LanguageArg, bounded_text};
use super::reply;
use crate::guidance;
use crate::server::SandboxServer;

/// What the model reads about `get_execution_guidance`.
pub const DESCRIPTION: &str = "Analyse code without running it: risky patterns, WebAssembly pitfalls, estimated fuel, and the fuel_budget, timeout and flavor to use.";

/// Largest `context` accepted.
const MAX_CONTEXT_BYTES: usize = 64 << 10;

/// Arguments of `get_execution_guidance`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GuidanceArgs {
    pub code: String,
    pub language: LanguageArg,
    /// What the code is for, or what failed last time.
    #[serde(default)]
    pub context: Option<String>,
}

#[tool_router(router = get_execution_guidance_router, vis = "pub(crate)")]
impl SandboxServer {
    #[tool(
        description = DESCRIPTION,
        output_schema = schema_for_output::<guidance::ExecutionGuidance>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get_execution_guidance(
        &self,
        Parameters(args): Parameters<GuidanceArgs>,
    ) -> Result<CallToolResult, McpError> {
        bounded_text("code", &args.code, self.sandbox.config.max_code_bytes)?;
        if let Some(context) = &args.context {
            bounded_text("context", context, MAX_CONTEXT_BYTES)?;
        }
        let report = guidance::analyze(
            &args.code,
            Language::from(args.language),
            args.context.as_deref(),
            &self.sandbox.imports,
            (
                self.sandbox.config.defaults.fuel,
                self.sandbox.config.defaults.timeout,
            ),
        );
        let text = format!(
            "patterns: {}; warnings: {}",
            report.detected_patterns.len(),
            report.warnings.len()
        );
        reply::structured(&report, false, text)
    }
}
