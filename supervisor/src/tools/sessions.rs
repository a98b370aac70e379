//! Which session a call acts on. The tools that run work (`execute_code`, `execute_command`,
//! `install_package`) get one created on demand; the tools that inspect or clear one
//! (`get_workspace_info`, `reset_workspace`) need it to exist. When none can be had the call is
//! refused: a protocol error for a bad argument, or a [`Refusal::Tool`] the model can act on.

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use sandbox_protocol::{ErrorType, Flavor, Language};
use serde_json::json;

use super::args::{
    SessionSelector, check_session_id, expired_message, invalid_argument, no_session,
};
use crate::server::SandboxServer;
use crate::session::{CreateError, Owner, Session, SessionSpec};

/// Why a call could not get its session: a protocol error for bad arguments, or a failed
/// result the model can act on (no capacity, an expired session).
pub(crate) enum Refusal {
    Invalid(McpError),
    Tool {
        error_type: ErrorType,
        message: String,
        session_id: String,
    },
}

impl From<McpError> for Refusal {
    fn from(e: McpError) -> Self {
        Refusal::Invalid(e)
    }
}

impl SandboxServer {
    /// The session a selector names for a call that runs work, created on demand, and the
    /// language the call is in: the session's own when it exists, else the one asked for,
    /// else Python.
    pub(crate) fn selected_session(
        &self,
        owner: &Owner,
        selector: &SessionSelector,
    ) -> (Language, Result<Arc<Session>, Refusal>) {
        let id = selector.session_id.as_deref();
        let language = id
            .and_then(|id| self.sandbox.sessions.get(owner, id))
            .map(|s| s.language())
            .or(selector.language())
            .unwrap_or(Language::Python);
        (language, self.resolve_session(owner, id, language, None))
    }

    /// The session `id` (or this connection's default one for `language`), created on demand
    /// with `flavor`'s limits.
    pub(crate) fn resolve_session(
        &self,
        owner: &Owner,
        id: Option<&str>,
        language: Language,
        flavor: Option<Flavor>,
    ) -> Result<Arc<Session>, Refusal> {
        let id = match id {
            Some(id) => check_session_id(id)?.to_owned(),
            None => self.default_sessions.id_for(language),
        };
        if let Some(session) = self.sandbox.sessions.get(owner, &id) {
            let runs = session.language();
            if runs != language {
                return Err(invalid_argument(
                    "language",
                    format!(
                        "session {id:?} runs {runs}, not {language}; use language {:?} or another session_id",
                        runs.as_str()
                    ),
                )
                .into());
            }
            return Ok(session);
        }
        if self.sandbox.sessions.expired(owner, &id) {
            return Err(Refusal::Tool {
                error_type: ErrorType::InvalidSession,
                message: expired_message(&id),
                session_id: id,
            });
        }
        self.create_on_demand(owner, id, language, flavor)
    }

    fn create_on_demand(
        &self,
        owner: &Owner,
        id: String,
        language: Language,
        flavor: Option<Flavor>,
    ) -> Result<Arc<Session>, Refusal> {
        let spec = SessionSpec::new(
            language,
            self.sandbox.limits_for(flavor),
            self.sandbox.config.session_ttl,
        );
        let created = self.sandbox.sessions.create(owner, &id, spec);
        match created {
            Ok(session) => Ok(session),
            // Two calls raced to create it: use the winner's.
            Err(CreateError::Exists(_)) => self
                .sandbox
                .sessions
                .get(owner, &id)
                .ok_or_else(|| no_session(&id, false).into()),
            Err(CreateError::ResourcesExhausted(usage)) => Err(Refusal::Tool {
                error_type: ErrorType::ResourcesExhausted,
                message: format!(
                    "{usage}; wait for idle sessions to expire and retry, or destroy_session one you no longer need"
                ),
                session_id: id,
            }),
            Err(e @ CreateError::ClientLimit { .. }) => Err(Refusal::Tool {
                error_type: ErrorType::ResourcesExhausted,
                message: format!(
                    "{e} ({}); destroy_session one you no longer need, or reuse one with session_id",
                    self.sandbox.config.principal_max_sessions
                ),
                session_id: id,
            }),
            Err(e) => Err(Refusal::Invalid(McpError::internal_error(
                e.to_string(),
                None,
            ))),
        }
    }

    /// An existing session for the tools that inspect or clear one: `session_id`, else the
    /// default session for `language` (without one: Python's, then JavaScript's).
    pub(crate) fn existing_session(
        &self,
        owner: &Owner,
        selector: &SessionSelector,
    ) -> Result<Arc<Session>, McpError> {
        if let Some(id) = selector.session_id.as_deref() {
            check_session_id(id)?;
            return self
                .sandbox
                .sessions
                .get(owner, id)
                .ok_or_else(|| no_session(id, self.sandbox.sessions.expired(owner, id)));
        }
        let order = match selector.language() {
            Some(language) => vec![language],
            None => vec![Language::Python, Language::JavaScript],
        };
        order
            .into_iter()
            .find_map(|language| {
                let id = self.default_sessions.get(language)?;
                self.sandbox.sessions.get(owner, &id)
            })
            .ok_or_else(|| {
                McpError::invalid_params(
                    "no default session yet: run execute_code first, or pass session_id",
                    Some(json!({ "error_type": ErrorType::InvalidSession })),
                )
            })
    }
}
