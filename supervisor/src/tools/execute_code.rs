//! `execute_code`: runs Python or JavaScript in a session (created on demand) and answers with
//! the [`ExecuteCodeResult`], plus the figures the code drew and the images it wrote to /app as
//! image content.
//!
//! The first code of a Python session also picks its runtime (seed 002: the system chooses the
//! image itself): a session whose creator named no runtime and whose worker has not started yet
//! moves to python-scientific when that code imports a module only the scientific runtime has,
//! if that runtime is installed and the memory budget has room for it. The result says so in a
//! note; from then on the runtime is the session's for good.

use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, tool, tool_router};
use sandbox_protocol::{Flavor, Language, Runtime};
use schemars::JsonSchema;
use serde::Deserialize;

use super::args::{LanguageArg, invalid_argument, non_blank, timeout_arg};
use super::reply;
use crate::packages::scientific::{STACK, first_scientific_import};
use crate::report::ExecuteCodeResult;
use crate::server::SandboxServer;
use crate::session::{MoveError, Session, SessionTable, Work};

/// What the model reads about `execute_code`.
pub const DESCRIPTION: &str = "Run Python or JavaScript (QuickJS) in a persistent session: variables, imports and files persist between calls. Returns stdout, stderr, exit_code, result (the last expression's repr). Files in /app (cwd); /tmp is scratch, /data read-only. No network, no subprocesses. Python 3.12; a new session whose first code imports numpy, pandas, scipy, sklearn or matplotlib gets 3.15 with them (figures return as images). JavaScript is not Node.js: no require/fs; use readText/writeText/requireVendor. A call runs until its timeout (default 30 s; pass timeout for longer work). On failure follow error_type, actionable_guidance and next_call.";

/// Arguments of `execute_code`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExecuteCodeArgs {
    /// Python statements, or JavaScript global script (not a module: no `import`).
    pub code: String,
    pub language: LanguageArg,
    /// Default: your session for `language`; a new id (1-64 letters, digits, - or _) creates
    /// one.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Seconds, from 0.1 to 300 (default: the session's, 30 for small).
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
        annotations(title = "Execute code", destructive_hint = false, open_world_hint = false)
    )]
    async fn execute_code(
        &self,
        Parameters(args): Parameters<ExecuteCodeArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        non_blank("code", &args.code)?;
        // Bigger code is almost certainly data that belongs in a file under /app.
        let max = self.config.max_code_bytes;
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
        let note = self.choose_runtime(&session, &args.code).await;
        let timeout = timeout.unwrap_or(session.limits().timeout);
        let started = std::time::SystemTime::now();
        let mut result = self
            .run_work(&session, Work::Code(args.code), timeout, &ctx)
            .await;
        result.notes.extend(note);
        let mut reply = reply::execution(&result)?;
        // Images the code wrote to /app come back as image content, once: a figure it saved
        // there is already attached.
        let attached: Vec<String> = reply
            .content
            .iter()
            .filter_map(|c| c.as_image().map(|image| image.data.clone()))
            .collect();
        reply.content.extend(
            crate::resources::new_images(&session.files().app, started)
                .into_iter()
                .filter(|c| c.as_image().is_none_or(|i| !attached.contains(&i.data))),
        );
        Ok(reply)
    }

    /// Moves a new Python session to python-scientific when `code` is its first and imports a
    /// module only that runtime has (see the module docs). Returns the note for the result.
    async fn choose_runtime(&self, session: &Session, code: &str) -> Option<String> {
        if !session.may_move_to(Runtime::PythonScientific) {
            return None;
        }
        let module = first_scientific_import(code)?;
        let installed = self
            .runtimes
            .manifest(&self.config)
            .await
            .is_ok_and(|manifest| manifest.module(Runtime::PythonScientific).is_some());
        move_for_import(&self.sessions, session, &module, installed)
    }
}

/// Moves `session` to python-scientific because its first code imports `module`, when the
/// runtime is `installed` and the budget allows; the note for the result, if there is one to
/// tell. Without the runtime (`prepare.sh --no-scientific`) the session stays, silently: the
/// import then fails as `missing_module`, whose guidance says why.
fn move_for_import(
    sessions: &SessionTable,
    session: &Session,
    module: &str,
    installed: bool,
) -> Option<String> {
    if !installed {
        tracing::debug!(session = %session.id, module, "python-scientific is not installed");
        return None;
    }
    match sessions.move_to(session, Runtime::PythonScientific) {
        Ok(()) => {
            tracing::info!(session = %session.id, module, "python-scientific chosen by the first code's import");
            Some(format!(
                "started on python-scientific ({STACK}) because the code imports {module}"
            ))
        }
        Err(MoveError::Fixed) => None,
        Err(MoveError::ResourcesExhausted(usage)) => {
            tracing::info!(session = %session.id, module, %usage, "no room for python-scientific");
            Some(format!(
                "the code imports {module}, which only the python-scientific runtime has, but the server has no memory for it now ({usage}); it ran on the default runtime"
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use sandbox_protocol::Flavor;

    use super::*;
    use crate::config::SessionLimits;
    use crate::session::{Owner, SessionSpec};

    fn python(sessions: &SessionTable, id: &str) -> std::sync::Arc<Session> {
        let spec = SessionSpec::new(
            Language::Python,
            SessionLimits::from(Flavor::Small),
            Duration::from_secs(60),
        );
        sessions.create(&Owner::local(), id, spec).unwrap()
    }

    #[test]
    fn a_first_scientific_import_moves_the_session_and_says_so() {
        let (_state, sessions) = SessionTable::for_tests(u64::MAX / 2);
        let session = python(&sessions, "s");
        let note = move_for_import(&sessions, &session, "pandas", true).unwrap();
        assert!(
            note.starts_with("started on python-scientific (CPython 3.15 with numpy, pandas")
                && note.ends_with("because the code imports pandas"),
            "{note}"
        );
        assert_eq!(session.runtime(), Runtime::PythonScientific);
        assert_eq!(
            move_for_import(&sessions, &session, "numpy", true),
            None,
            "moved once"
        );
    }

    #[tokio::test]
    async fn only_a_new_unpinned_python_sessions_first_scientific_code_chooses() {
        let (_dir, server) = SandboxServer::for_tests(&Runtime::ALL);
        let session = python(&server.sessions, "s");
        assert_eq!(server.choose_runtime(&session, "x = 1").await, None);
        assert_eq!(
            session.runtime(),
            Runtime::Python,
            "plain code keeps the default"
        );
        let note = server
            .choose_runtime(&session, "import numpy as np\nnp.eye(2)")
            .await
            .unwrap();
        assert!(note.ends_with("because the code imports numpy"), "{note}");
        assert_eq!(session.runtime(), Runtime::PythonScientific);

        let pinned = SessionSpec {
            runtime_explicit: true,
            ..SessionSpec::new(
                Language::Python,
                SessionLimits::default(),
                Duration::from_secs(60),
            )
        };
        let pinned = server
            .sessions
            .create(&Owner::local(), "pinned", pinned)
            .unwrap();
        assert_eq!(server.choose_runtime(&pinned, "import pandas").await, None);
        assert_eq!(pinned.runtime(), Runtime::Python);

        let (_dir, without) = SandboxServer::for_tests(&[Runtime::Python]);
        let session = python(&without.sessions, "s");
        assert_eq!(
            without.choose_runtime(&session, "import pandas").await,
            None
        );
        assert_eq!(
            session.runtime(),
            Runtime::Python,
            "prepare.sh --no-scientific: the session stays"
        );
    }

    #[test]
    fn without_the_runtime_or_the_memory_the_session_stays() {
        let (_state, sessions) = SessionTable::for_tests(u64::MAX / 2);
        let session = python(&sessions, "s");
        assert_eq!(move_for_import(&sessions, &session, "pandas", false), None);
        assert_eq!(session.runtime(), Runtime::Python);

        // Room for the session on 3.12, not for what it would use on the scientific runtime.
        let budget = Runtime::PythonScientific.expected_use_bytes() - 1;
        let (_state, tight) = SessionTable::for_tests(budget);
        let session = python(&tight, "s");
        let note = move_for_import(&tight, &session, "sklearn", true).unwrap();
        assert!(
            note.starts_with("the code imports sklearn, which only the python-scientific runtime has, but the server has no memory for it now (the memory budget is used up"),
            "{note}"
        );
        assert_eq!(session.runtime(), Runtime::Python);
    }
}
