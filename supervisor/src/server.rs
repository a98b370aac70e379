//! The MCP service: [`SandboxServer`] holds the engine every connection shares
//! ([`crate::engine::Sandbox`]: the configuration, the session table, the running executions,
//! measured import costs) and this connection's default sessions, and routes requests. Tools live one per file under `tools/`, each with its own
//! router, combined there (`SandboxServer::tool_router`). Resources are answered from
//! [`crate::resources`].
//!
//! Guest failures (an exception, a timeout) are tool results with `isError: true` and the
//! structured details; protocol errors (`invalid_params`) are only for arguments that make no
//! sense, as the rmcp docs recommend. Those carry a machine-readable `data.error_type`:
//! `invalid_argument` (with the argument's name) or `invalid_session`.
//!
//! Every session-scoped call acts for the client that made it ([`Owner`]): a stdio client, an
//! HTTP principal named by its token, or one HTTP MCP session. Another client's session is
//! answered exactly like one that does not exist.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    Implementation, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ResourceContents,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, tool_handler};
use sandbox_protocol::Language;

use crate::engine::Sandbox;
use crate::guidance;
use crate::resources;
use crate::session::{Owner, SessionTable};

const INSTRUCTIONS: &str = "Runs Python (CPython 3.15 with numpy, pandas, scipy, scikit-learn, matplotlib) and JavaScript (QuickJS-NG) in WebAssembly sandboxes. \
Each session keeps its interpreter alive between calls, so variables, functions and imports persist. \
Files live under /app (the working directory). No network, no subprocesses. \
Start with execute_code; call list_runtimes for versions and limits.";

/// Most session files listed as resources per default session.
const MAX_LISTED_FILES: usize = 100;

/// The MCP server. Cloned per request by rmcp; the session table is shared by all connections,
/// default sessions belong to this connection.
#[derive(Clone)]
pub struct SandboxServer {
    /// The engine every connection shares.
    pub(crate) sandbox: Arc<Sandbox>,
    pub(crate) default_sessions: Arc<DefaultSessions>,
    /// Who this connection acts for, unless a request names an HTTP principal.
    connection_owner: Owner,
    /// Held by every clone of this server: when the last goes (the MCP session ended), the
    /// connection's own sessions go too.
    _lease: Arc<ConnectionLease>,
}

/// The sessions of an HTTP connection without a principal are unreachable once its MCP
/// session ends (DELETE, or the transport closing it): they are destroyed then, not left
/// holding workers until their idle TTL.
struct ConnectionLease {
    owner: Owner,
    sessions: Arc<SessionTable>,
}

impl Drop for ConnectionLease {
    fn drop(&mut self) {
        if !self.owner.ends_with_connection() {
            return;
        }
        // Dropped on the runtime that served the connection; at shutdown the table is being
        // emptied anyway.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (owner, sessions) = (self.owner.clone(), self.sessions.clone());
        runtime.spawn(async move {
            let destroyed = sessions.destroy_all_of(&owner).await;
            if destroyed > 0 {
                tracing::info!(%owner, sessions = destroyed, "MCP session ended: its sessions were destroyed");
            }
        });
    }
}

/// A connection's default sessions: the one per language that calls without `session_id` use,
/// named when first needed.
#[derive(Debug, Default)]
pub struct DefaultSessions(Mutex<HashMap<Language, String>>);

impl DefaultSessions {
    fn ids(&self) -> std::sync::MutexGuard<'_, HashMap<Language, String>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The id of the default session for `language`, named now if it has none yet.
    pub fn id_for(&self, language: Language) -> String {
        self.ids()
            .entry(language)
            .or_insert_with(|| {
                format!(
                    "default-{language}-{}",
                    &uuid::Uuid::new_v4().simple().to_string()[..8]
                )
            })
            .clone()
    }

    /// The id of the default session for `language`, if it has been named.
    pub fn get(&self, language: Language) -> Option<String> {
        self.ids().get(&language).cloned()
    }

    /// Every default session's id.
    pub fn all(&self) -> Vec<String> {
        self.ids().values().cloned().collect()
    }

    /// Forgets `id` as a default (it was destroyed): the next call names a new one.
    pub fn forget(&self, id: &str) {
        self.ids().retain(|_, default| default != id);
    }
}

impl SandboxServer {
    /// The handler of one MCP session (one connection) acting for `connection_owner`.
    pub fn new(sandbox: Arc<Sandbox>, connection_owner: Owner) -> Self {
        let lease = Arc::new(ConnectionLease {
            owner: connection_owner.clone(),
            sessions: sandbox.sessions.clone(),
        });
        Self {
            sandbox,
            default_sessions: Arc::default(),
            connection_owner,
            _lease: lease,
        }
    }

    /// Who a request acts for: the HTTP principal its token names, else this connection.
    pub(crate) fn owner(&self, ctx: &RequestContext<RoleServer>) -> Owner {
        crate::owner::principal_of(&ctx.extensions).map_or_else(
            || self.connection_owner.clone(),
            |name| Owner::principal(&name),
        )
    }
}

#[tool_handler]
impl ServerHandler for SandboxServer {
    /// The static resources, and the files of this client's default sessions.
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let owner = self.owner(&context);
        let mut list = resources::static_resources();
        for id in self.default_sessions.all() {
            if let Some(session) = self.sandbox.sessions.get(&owner, &id) {
                list.extend(resources::session_files(
                    &id,
                    &session.files().app,
                    MAX_LISTED_FILES,
                ));
            }
        }
        Ok(ListResourcesResult::with_all_items(list))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri.as_str();
        let contents = if uri == resources::CAPABILITIES {
            ResourceContents::text(self.capabilities().to_string(), uri)
                .with_mime_type("application/json")
        } else if let Some(doc) = guidance::doc(uri) {
            ResourceContents::text(doc.markdown, uri).with_mime_type("text/markdown")
        } else if let Some((id, relative)) = resources::parse_file_uri(uri) {
            // Another client's session reads exactly like one that does not exist.
            let session = self
                .sandbox
                .sessions
                .get(&self.owner(&context), id)
                .ok_or_else(|| McpError::resource_not_found(format!("no session {id:?}"), None))?;
            resources::read_file(&session.files().app, &relative, uri)
                .map_err(|message| McpError::resource_not_found(message, None))?
        } else {
            return Err(McpError::resource_not_found(
                format!("unknown resource {uri}"),
                None,
            ));
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new(
            "sandbox-mcp",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(INSTRUCTIONS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_sessions_are_named_once_per_language() {
        let defaults = DefaultSessions::default();
        assert_eq!(defaults.get(Language::Python), None);
        let python = defaults.id_for(Language::Python);
        assert!(python.starts_with("default-python-"), "{python}");
        assert_eq!(defaults.id_for(Language::Python), python);
        assert_ne!(defaults.id_for(Language::JavaScript), python);
        defaults.forget(&python);
        assert_eq!(defaults.get(Language::Python), None);
        assert_eq!(defaults.all().len(), 1);
    }
}
