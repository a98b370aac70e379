//! `create_session`: a session made explicitly, with the client's own id, flavor and limits
//! (execute_code makes sessions on demand; this is for choosing them up front).

use std::time::Duration;

use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, tool, tool_router};
use sandbox_protocol::{ErrorType, Flavor, Language, Runtime};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::{
    LanguageArg, RuntimeArg, bounded, check_session_id, invalid_argument, timeout_arg,
};
use super::reply;
use super::session_info::SessionInfo;
use crate::config::{FUEL_RANGE, MEMORY_RANGE, SessionLimits, TTL_RANGE};
use crate::server::SandboxServer;
use crate::session::{CreateError, SessionSpec, Usage};

/// What the model reads about `create_session`.
pub const DESCRIPTION: &str = "Create a session with your own id, flavor or limits (execute_code otherwise creates one on demand). Fails if the id exists.";

/// Arguments of `create_session`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateSessionArgs {
    pub language: LanguageArg,
    /// The language's runtime: accepted and checked, but left out of the schema (each
    /// language has one runtime, and every tool-list byte is read by the model).
    #[serde(default)]
    #[schemars(skip)]
    pub runtime: Option<RuntimeArg>,
    /// 1-64 letters, digits, - or _ (default: generated).
    #[serde(default)]
    pub session_id: Option<String>,
    /// small (default), medium, large: 1, 2, 4 CPUs and GiB; limits below override it.
    #[serde(default)]
    pub flavor: Option<Flavor>,
    /// Fixed fuel per call, 10^6 to 5×10^12.
    #[serde(default)]
    #[schemars(range(min = 1_000_000, max = 5_000_000_000_000_u64))]
    pub fuel_budget: Option<u64>,
    /// Bytes, 32 MiB to 4 GiB.
    #[serde(default)]
    #[schemars(range(min = 33_554_432, max = 4_294_967_296_u64))]
    pub memory_bytes: Option<u64>,
    /// Seconds per execution, 0.1 to 300.
    #[serde(default)]
    #[schemars(range(min = 0.1, max = 300))]
    pub timeout: Option<f64>,
    /// Idle seconds before deletion, 1 to 2592000 (default 86400).
    #[serde(default)]
    #[schemars(range(min = 1, max = 2_592_000))]
    pub ttl_seconds: Option<u64>,
    /// Retired: every session now keeps its whole state through restarts. Still accepted
    /// (and ignored) so that older clients' calls work; left out of the schema.
    #[serde(default)]
    #[schemars(skip)]
    #[allow(dead_code, reason = "accepted for older clients, and ignored")]
    pub auto_persist_globals: Option<bool>,
}

/// The failed answer when the session cannot be had for lack of capacity.
#[derive(Debug, Serialize)]
struct NoCapacity<'a> {
    success: bool,
    error_type: ErrorType,
    error_message: String,
    /// The server's use and capacity, when the server as a whole is full.
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<&'a Usage>,
    actionable_guidance: &'static [&'static str],
}

impl NoCapacity<'_> {
    fn reply(&self) -> Result<CallToolResult, McpError> {
        let text = format!("ERROR {}: {}", self.error_type, self.error_message);
        reply::structured(self, true, text)
    }
}

#[tool_router(router = create_session_router, vis = "pub(crate)")]
impl SandboxServer {
    #[tool(
        description = DESCRIPTION,
        output_schema = schema_for_output::<SessionInfo>(),
        annotations(destructive_hint = false, open_world_hint = false)
    )]
    async fn create_session(
        &self,
        Parameters(args): Parameters<CreateSessionArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let owner = self.owner(&ctx);
        let id = match &args.session_id {
            Some(id) => check_session_id(id)?.to_owned(),
            None => format!(
                "session-{}",
                &uuid::Uuid::new_v4().simple().to_string()[..12]
            ),
        };
        let (limits, ttl) = self.requested_limits(&args)?;
        let language = Language::from(args.language);
        check_runtime(language, args.runtime)?;
        let spec = SessionSpec {
            runtime: Runtime::default_for(language),
            limits,
            fuel_explicit: args.fuel_budget.is_some(),
            ttl,
        };
        match self.sandbox.sessions.create(&owner, &id, spec) {
            Ok(session) => {
                session.start_ahead(self.sandbox.config.clone(), self.sandbox.runtimes.clone());
                let info = SessionInfo::of(&session);
                let text = format!(
                    "created {} session {} ({} flavor), expires {} if idle",
                    info.runtime,
                    info.session_id,
                    info.limits.flavor.name(),
                    info.expires_at
                );
                reply::structured(&info, false, text)
            }
            Err(CreateError::Exists(id)) => Err(invalid_argument(
                "session_id",
                format!(
                    "session {id:?} already exists; use it with execute_code, or destroy_session it first"
                ),
            )),
            Err(other) => creation_refused(self, other),
        }
    }

    /// The limits and idle TTL `args` ask for: the flavor's (or the defaults), then each limit
    /// given, checked against its bounds.
    fn requested_limits(
        &self,
        args: &CreateSessionArgs,
    ) -> Result<(SessionLimits, Duration), McpError> {
        let mut limits = self.sandbox.limits_for(args.flavor);
        if let Some(fuel) = args.fuel_budget {
            limits.fuel = bounded("fuel_budget", fuel, &FUEL_RANGE, "")?;
        }
        if let Some(memory) = args.memory_bytes {
            limits.memory_bytes = bounded(
                "memory_bytes",
                memory,
                &MEMORY_RANGE,
                " bytes (32 MiB to 4 GiB)",
            )?;
        }
        if let Some(timeout) = timeout_arg(args.timeout)? {
            limits.timeout = timeout;
        }
        let ttl = match args.ttl_seconds {
            Some(secs) => Duration::from_secs(bounded(
                "ttl_seconds",
                secs,
                &TTL_RANGE,
                " seconds (30 days)",
            )?),
            None => self.sandbox.config.explicit_session_ttl,
        };
        Ok((limits, ttl))
    }
}

/// Checks that a runtime named in `create_session` runs `language` (each language has one).
fn check_runtime(language: Language, runtime: Option<RuntimeArg>) -> Result<(), McpError> {
    let Some(runtime) = runtime.map(Runtime::from) else {
        return Ok(());
    };
    let runs = runtime.language();
    if runs != language {
        return Err(invalid_argument(
            "runtime",
            format!(
                "runtime {runtime} runs {runs}, not {language}; use language {:?} with it, or leave runtime out",
                runs.as_str()
            ),
        ));
    }
    Ok(())
}

/// The answer when a session cannot be created for lack of capacity (or its workspace): what
/// `create_session` and `fork_session` say.
///
/// # Errors
/// An internal error for a workspace that could not be made (a server fault).
pub(crate) fn creation_refused(
    server: &SandboxServer,
    error: CreateError,
) -> Result<CallToolResult, McpError> {
    match error {
        e @ CreateError::ClientLimit { .. } => NoCapacity {
            success: false,
            error_type: ErrorType::ResourcesExhausted,
            error_message: format!(
                "{e} ({}); destroy_session one you no longer need",
                server.sandbox.config.principal_max_sessions
            ),
            usage: None,
            actionable_guidance: &[
                "destroy_session a session you no longer need",
                "reuse an existing session by passing its session_id to execute_code",
            ],
        }
        .reply(),
        CreateError::ResourcesExhausted(usage) => NoCapacity {
            success: false,
            error_type: ErrorType::ResourcesExhausted,
            error_message: usage.to_string(),
            usage: Some(&usage),
            actionable_guidance: &[
                "wait a minute for idle sessions to expire, then retry",
                "destroy_session a session you no longer need",
                "ask for a smaller flavor or memory_bytes",
            ],
        }
        .reply(),
        other => Err(McpError::internal_error(other.to_string(), None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused_argument(error: &McpError) -> &str {
        error.data.as_ref().unwrap()["argument"].as_str().unwrap()
    }

    #[test]
    fn a_runtime_must_match_the_language() {
        check_runtime(Language::Python, None).unwrap();
        check_runtime(Language::Python, Some(RuntimeArg::Python)).unwrap();
        check_runtime(Language::JavaScript, Some(RuntimeArg::Javascript)).unwrap();
        let mismatch = check_runtime(Language::JavaScript, Some(RuntimeArg::Python)).unwrap_err();
        assert_eq!(refused_argument(&mismatch), "runtime");
        assert_eq!(
            mismatch.message,
            "runtime python runs python, not javascript; use language \"python\" with it, or leave runtime out"
        );
    }
}
