//! Who a session belongs to ([`Owner`]), the HTTP principal a request authenticated as
//! ([`Principal`]), and the ids a client may give its sessions. The table is
//! keyed by owner and id, so another client never sees a session and may use the same id for one
//! of its own.

use std::sync::Arc;

/// Who a request authenticated as: the HTTP transport puts it in the request's extensions, the
/// tool handlers read it back ([`principal_of`]).
#[derive(Debug, Clone)]
pub struct Principal(pub Arc<str>);

/// The HTTP principal a request authenticated as, from the extensions rmcp hands a handler.
pub fn principal_of(extensions: &rmcp::model::Extensions) -> Option<String> {
    extensions
        .get::<hyper::http::request::Parts>()?
        .extensions
        .get::<Principal>()
        .map(|p| p.0.to_string())
}

/// Session ids: what a model may choose, and safe as a file name.
pub fn valid_session_id(id: &str) -> bool {
    let mut chars = id.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric())
        && id.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Who a session belongs to. Only its owner can see it, use it, or cancel its executions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Owner {
    id: Arc<str>,
    kind: OwnerKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum OwnerKind {
    /// The one client on stdio.
    Local,
    /// One MCP session over HTTP (no named principal).
    Connection,
    /// A principal named by its HTTP token; all its MCP sessions share its sessions.
    Principal,
}

impl Owner {
    /// The stdio client.
    pub fn local() -> Self {
        Self {
            id: "local".into(),
            kind: OwnerKind::Local,
        }
    }

    /// A new HTTP connection (MCP session) of its own.
    pub fn connection() -> Self {
        Self {
            id: uuid::Uuid::new_v4().simple().to_string().into(),
            kind: OwnerKind::Connection,
        }
    }

    /// A named principal.
    pub fn principal(name: &str) -> Self {
        Self {
            id: name.into(),
            kind: OwnerKind::Principal,
        }
    }

    /// Whether its sessions end with its MCP session: an HTTP connection without a principal
    /// (nobody can reach them afterwards). A principal's outlive it; the stdio client's end
    /// with the server.
    pub fn ends_with_connection(&self) -> bool {
        self.kind == OwnerKind::Connection
    }

    /// Whether the per-client caps apply (HTTP clients; the stdio client has the server alone).
    pub fn capped(&self) -> bool {
        self.kind != OwnerKind::Local
    }
}

/// An owner who can come back after the server restarts, as a durable session's record names
/// it (`session::durable`): the stdio client, or a principal of the tokens file. A connection
/// without a principal cannot: nobody could ever prove to be it again.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LastingOwner {
    Local,
    Principal { name: String },
}

impl Owner {
    /// How a record names this owner, when it can come back.
    pub fn lasting(&self) -> Option<LastingOwner> {
        match self.kind {
            OwnerKind::Local => Some(LastingOwner::Local),
            OwnerKind::Principal => Some(LastingOwner::Principal {
                name: self.id.to_string(),
            }),
            OwnerKind::Connection => None,
        }
    }
}

impl From<LastingOwner> for Owner {
    fn from(owner: LastingOwner) -> Self {
        match owner {
            LastingOwner::Local => Owner::local(),
            LastingOwner::Principal { name } => Owner::principal(&name),
        }
    }
}

impl std::fmt::Display for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            OwnerKind::Local => f.write_str("stdio"),
            OwnerKind::Connection => write!(f, "connection {}", &self.id[..8.min(self.id.len())]),
            OwnerKind::Principal => write!(f, "principal {}", self.id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_follow_the_documented_pattern() {
        for ok in ["a", "A1", "my-session_2", &"x".repeat(64)] {
            assert!(valid_session_id(ok), "{ok}");
        }
        for bad in [
            "",
            "-a",
            "_a",
            "a b",
            "a/b",
            "../x",
            "é",
            &"x".repeat(65),
            "a.b",
        ] {
            assert!(!valid_session_id(bad), "{bad}");
        }
    }
}
