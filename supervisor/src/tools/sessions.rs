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
use crate::engine::Unavailable;
use crate::server::SandboxServer;
use crate::session::{Owner, Session};

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
        let why = match self.sandbox.session_for(owner, &id, language, flavor) {
            Ok(session) => return Ok(session),
            Err(why) => why,
        };
        Err(match why {
            Unavailable::OtherLanguage(runs) => invalid_argument(
                "language",
                format!(
                    "session {id:?} runs {runs}, not {language}; use language {:?} or another session_id",
                    runs.as_str()
                ),
            )
            .into(),
            Unavailable::Expired => Refusal::Tool {
                error_type: ErrorType::InvalidSession,
                message: expired_message(&id),
                session_id: id,
            },
            Unavailable::Vanished => no_session(&id, false).into(),
            Unavailable::Refused {
                error_type,
                message,
            } => Refusal::Tool {
                error_type,
                message,
                session_id: id,
            },
            Unavailable::Internal(e) => Refusal::Invalid(McpError::internal_error(e, None)),
        })
    }

    /// The existing session `id` of the caller (the state tools name theirs).
    pub(crate) fn named_session(
        &self,
        ctx: &rmcp::service::RequestContext<rmcp::RoleServer>,
        id: String,
    ) -> Result<Arc<Session>, McpError> {
        let selector = SessionSelector {
            session_id: Some(id),
            language: None,
        };
        self.existing_session(&self.owner(ctx), &selector)
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
