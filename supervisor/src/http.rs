//! MCP over Streamable HTTP, for running `sandbox-mcp` as a service (see
//! `supervisor/sandbox-mcp.service`). Every MCP session gets its own `SandboxServer` (its own
//! default sandboxes); the session table, admission limits and workers are shared with the rest
//! of the server. A token is required to listen on anything but loopback: this endpoint runs
//! code.
//!
//! Tenancy: sessions belong to the client that made them. With `SANDBOX_HTTP_TOKENS_FILE`
//! (lines of `principal:token`), a request is authenticated as a named principal, and all MCP
//! sessions of that principal share its sandboxes; with the single `SANDBOX_HTTP_TOKEN` (or none
//! on loopback), every MCP session is a client of its own. The principal travels to the tool
//! handlers in the request's extensions ([`crate::owner::principal_of`]).
//!
//! Beside `/mcp`, for orchestrators and monitoring: `GET /healthz` (live) and `GET /readyz`
//! (ready: 200, or 503 with the reason; see [`crate::health`]) without a token (kubelet probes
//! carry none, and they tell nothing about clients), and `GET /metrics` (Prometheus, see
//! [`crate::metrics`]), which is open only on a loopback address without
//! `SANDBOX_METRICS_TOKEN` ([`MetricsAccess`]).
//!
//! Before any of that, a connection is a descriptor and a task that anyone can open: the
//! connections are capped and timed out ([`connections`]), and the accept loop waits out a
//! shortage of descriptors rather than spinning ([`accept`]).

mod accept;
pub mod connections;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use tower_service::Service;

use self::accept::Acceptor;
use self::connections::{Admission, ConnectionLimits, Connections, InFlight, Peer, Watched};
use crate::guard::Guarded;
use crate::health::Health;
use crate::owner::Principal;

/// The body type of every answer.
type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// How the HTTP endpoint is reached and protected.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub addr: SocketAddr,
    /// Bearer tokens accepted; none configured means no authentication (loopback only).
    pub tokens: Tokens,
    /// The connection caps and timeouts as configured (lowered at start when the open-file
    /// limit cannot hold them beside the workers).
    pub limits: ConnectionLimits,
    /// Workers the server may run at once (sessions and pooled ones): their descriptors are
    /// kept out of the connections' reach.
    pub workers: usize,
}

/// The bearer tokens the endpoint accepts.
#[derive(Clone, Default)]
pub struct Tokens {
    /// `SANDBOX_HTTP_TOKEN`: one shared token; every MCP session is its own client.
    pub shared: Option<String>,
    /// `(principal, token)` from `SANDBOX_HTTP_TOKENS_FILE`.
    pub named: Vec<(String, String)>,
    /// `SANDBOX_METRICS_TOKEN`: opens `GET /metrics` and nothing else.
    pub metrics: Option<String>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secrets themselves.
        f.debug_struct("Tokens")
            .field("shared", &self.shared.is_some())
            .field(
                "principals",
                &self.named.iter().map(|(p, _)| p).collect::<Vec<_>>(),
            )
            .field("metrics", &self.metrics.is_some())
            .finish()
    }
}

/// What [`authenticate`] decided.
#[derive(Debug, PartialEq, Eq)]
enum Access {
    Denied,
    /// No principal: the MCP session is the client.
    Anonymous,
    Principal(String),
}

impl Tokens {
    /// The `shared` token (`SANDBOX_HTTP_TOKEN`) and the principals of the tokens `file`
    /// (`SANDBOX_HTTP_TOKENS_FILE`), if any.
    ///
    /// # Errors
    /// When the file cannot be read or a line is malformed.
    pub fn load(shared: Option<String>, file: Option<&Path>) -> Result<Self, HttpError> {
        let named = match file {
            Some(path) => {
                let text =
                    std::fs::read_to_string(path).map_err(|source| HttpError::TokensFile {
                        reason: source.to_string(),
                    })?;
                parse_tokens(&text)?
            }
            None => Vec::new(),
        };
        Ok(Self {
            shared: shared.filter(|t| !t.is_empty()),
            named,
            metrics: None,
        })
    }

    /// These tokens, and `metrics` for `GET /metrics`.
    pub fn with_metrics(mut self, metrics: Option<String>) -> Self {
        self.metrics = metrics.filter(|t| !t.is_empty());
        self
    }

    /// Whether any token for `/mcp` is configured (the metrics token opens nothing there).
    pub fn any(&self) -> bool {
        self.shared.is_some() || !self.named.is_empty()
    }
}

/// Who may read `GET /metrics`. The metrics tell no client's data, but they do tell how busy
/// the server is and what fails in it, which is nobody's business beyond the operator's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricsAccess {
    /// Anyone who reaches the port: no metrics token, and a loopback address (as before the
    /// token existed: a local Prometheus or a proxy scrapes it).
    Open,
    /// A bearer token: the metrics token, or any HTTP token (whoever holds one may run code
    /// here, which tells more than the metrics). Beyond loopback without a metrics token, only
    /// an HTTP token opens it: a scrape from the network must authenticate like a client.
    Token,
}

impl MetricsAccess {
    /// The access for a server on `addr` with `tokens`.
    pub fn of(addr: SocketAddr, tokens: &Tokens) -> Self {
        if tokens.metrics.is_none() && addr.ip().is_loopback() {
            MetricsAccess::Open
        } else {
            MetricsAccess::Token
        }
    }
}

/// `principal:token` lines; blank lines and `#` comments are skipped.
fn parse_tokens(text: &str) -> Result<Vec<(String, String)>, HttpError> {
    let mut named: Vec<(String, String)> = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |reason: &str| HttpError::TokensFile {
            reason: format!("line {}: {reason}", number + 1),
        };
        let (principal, token) = line
            .split_once(':')
            .ok_or_else(|| bad("expected principal:token"))?;
        let (principal, token) = (principal.trim(), token.trim());
        if !crate::owner::valid_session_id(principal) {
            return Err(bad(
                "a principal is 1-64 letters, digits, '-' or '_', starting with a letter or digit",
            ));
        }
        if token.len() < 16 {
            return Err(bad("a token has at least 16 characters"));
        }
        if named.iter().any(|(p, t)| p == principal || t == token) {
            return Err(bad("each principal and each token may appear once"));
        }
        named.push((principal.to_owned(), token.to_owned()));
    }
    Ok(named)
}

/// Why the endpoint cannot start.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error(
        "refusing to serve code execution on {0} without SANDBOX_HTTP_TOKEN; bind 127.0.0.1 or set a token"
    )]
    Unprotected(SocketAddr),
    #[error("cannot listen on {addr}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("SANDBOX_HTTP_TOKENS_FILE: {reason}")]
    TokensFile { reason: String },
}

/// Serves MCP on `options.addr` at `/mcp` until `shutdown` is cancelled. A request body past
/// `max_body_bytes` ([`crate::config::max_message_bytes`]) is answered 413 as it crosses it.
///
/// # Errors
/// See [`HttpError`].
pub async fn serve(
    options: HttpOptions,
    max_body_bytes: usize,
    make_server: impl Fn() -> Guarded + Send + Sync + 'static,
    health: Arc<Health>,
    shutdown: CancellationToken,
) -> Result<(), HttpError> {
    if !options.tokens.any() && !options.addr.ip().is_loopback() {
        return Err(HttpError::Unprotected(options.addr));
    }
    let mut config =
        StreamableHttpServerConfig::default().with_max_request_body_bytes(max_body_bytes);
    config.cancellation_token = shutdown.child_token();
    if !options.addr.ip().is_loopback() {
        // Behind a token, any Host may reach us (DNS-rebinding protection is for loopback).
        config.allowed_hosts.clear();
    }
    let service = StreamableHttpService::new(
        move || Ok(make_server()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let listener = tokio::net::TcpListener::bind(options.addr)
        .await
        .map_err(|source| HttpError::Bind {
            addr: options.addr,
            source,
        })?;
    let limits = fit_open_file_limit(options.limits, options.workers);
    tracing::info!(
        addr = %options.addr,
        max_connections = limits.max,
        per_peer = limits.per_peer,
        header_timeout_secs = limits.header_timeout.as_secs_f64(),
        idle_timeout_secs = limits.idle_timeout.as_secs_f64(),
        "serving MCP over Streamable HTTP at /mcp"
    );
    health.mark_serving();
    let routes = Arc::new(Routes {
        metrics: MetricsAccess::of(options.addr, &options.tokens),
        tokens: options.tokens,
        service,
        health,
    });
    let connections = Connections::new(limits);
    let mut acceptor = Acceptor::new(listener);
    let mut pressure = Pressure::default();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = acceptor.accept() => accepted,
            () = shutdown.cancelled() => return Ok(()),
        };
        let peer = Peer::of(peer.ip());
        let (slot, probe_only) = match connections.admit(peer) {
            Admission::Slot { slot, displaced } => {
                pressure.note(displaced.then_some(Strain::Displaced), &connections);
                (slot, false)
            }
            Admission::Probe(slot) => {
                pressure.note(Some(Strain::ProbeOnly), &connections);
                (slot, true)
            }
            Admission::Refused => {
                pressure.note(Some(Strain::Refused), &connections);
                refuse(stream);
                continue;
            }
        };
        let (routes, shutdown) = (routes.clone(), shutdown.clone());
        tokio::spawn(async move {
            let activity = slot.activity.clone();
            let handler = hyper::service::service_fn(move |request: Request<Incoming>| {
                // Counted from the moment the head is read (not when the future first runs),
                // so the watchdog never sees a parsed request as waiting.
                let in_flight = activity.begin_request();
                let routes = routes.clone();
                async move {
                    let response = if probe_only {
                        routes.probe(&request)
                    } else {
                        routes.answer(request).await
                    };
                    Ok::<_, Infallible>(response.map(|body| Tracked {
                        body,
                        _in_flight: in_flight,
                    }))
                }
            });
            let io = TokioIo::new(Watched::new(stream, slot.activity.clone()));
            let serving = hyper::server::conn::http1::Builder::new()
                // The header timeout is the watchdog's (see `connections`): hyper's would also
                // run while a keep-alive connection waits.
                .header_read_timeout(None)
                // The probe slot serves one request, then makes room.
                .keep_alive(!probe_only)
                .serve_connection(io, handler);
            tokio::select! {
                served = serving => if let Err(e) = served {
                    tracing::debug!(%peer, error = %e, "connection ended");
                },
                expiry = slot.activity.expired(&limits) => {
                    tracing::debug!(%peer, ?expiry, "connection timed out");
                }
                () = slot.closed.cancelled() => {
                    tracing::debug!(%peer, "connection closed for a newer one");
                }
                () = shutdown.cancelled() => {}
            }
        });
    }
}

/// `limits` with the connection caps lowered, if need be, to what the open-file limit holds
/// once `workers` workers and the server have their descriptors (a connection that takes the
/// last descriptor stops workers from starting). Never below [`FEWEST_CONNECTIONS`].
fn fit_open_file_limit(limits: ConnectionLimits, workers: usize) -> ConnectionLimits {
    let Some((soft, _)) = crate::descriptors::limit() else {
        return limits;
    };
    let room = crate::descriptors::connections_within(soft, workers);
    let fitted = fit_connections(limits, room);
    if fitted.max < limits.max {
        let demand = crate::descriptors::Demand::new(Some(limits.max), workers, 0);
        tracing::warn!(
            open_file_limit = soft,
            needed = %demand.describe(),
            max_connections = fitted.max,
            "the open-file limit cannot hold the configured HTTP connections beside the \
             workers: connections capped lower (raise LimitNOFILE, or lower \
             http_max_connections or max_sessions)"
        );
    }
    fitted
}

/// The fewest connections the server takes, whatever the open-file limit: with fewer, one
/// client's connections would keep every other out.
const FEWEST_CONNECTIONS: usize = 16;

/// `limits` with at most `room` connections (but [`FEWEST_CONNECTIONS`]), and a per-peer share
/// no larger than the whole.
fn fit_connections(limits: ConnectionLimits, room: u64) -> ConnectionLimits {
    let room = usize::try_from(room).unwrap_or(usize::MAX);
    let max = limits.max.min(room.max(FEWEST_CONNECTIONS.min(limits.max)));
    ConnectionLimits {
        max,
        per_peer: limits.per_peer.min(max),
        ..limits
    }
}

/// How the caps strained on one admission.
#[derive(Debug, Clone, Copy)]
enum Strain {
    /// A waiting connection was closed for the new one.
    Displaced,
    /// The new one got only the probe slot.
    ProbeOnly,
    /// The new one was refused.
    Refused,
}

/// A stretch of admissions that strained the caps, logged when it begins and when it ends,
/// never once per connection: a flood would otherwise flood the logs as well. A stretch ends at
/// the first admission with room to spare after [`Pressure::QUIET`] without strain (under a
/// held flood, room comes and goes with every connection that ends).
#[derive(Debug, Default)]
struct Pressure {
    stretch: Option<Stretch>,
}

#[derive(Debug)]
struct Stretch {
    /// Admissions that displaced, got only the probe slot, were refused (by [`Strain`]).
    counts: [u64; 3],
    began: tokio::time::Instant,
    last: tokio::time::Instant,
}

impl Pressure {
    const QUIET: Duration = Duration::from_secs(10);

    fn note(&mut self, strain: Option<Strain>, connections: &Connections) {
        let now = tokio::time::Instant::now();
        let Some(strain) = strain else {
            if self
                .stretch
                .as_ref()
                .is_some_and(|s| now - s.last >= Self::QUIET)
                && let Some(Stretch { counts, began, .. }) = self.stretch.take()
            {
                let [displaced, probe_only, refused] = counts;
                tracing::info!(
                    displaced,
                    probe_only,
                    refused,
                    seconds = (now - began).as_secs_f64(),
                    "HTTP connections below their caps again"
                );
            }
            return;
        };
        let stretch = self.stretch.get_or_insert_with(|| {
            let limits = connections.limits();
            tracing::warn!(
                open = connections.open(),
                max_connections = limits.max,
                per_peer = limits.per_peer,
                "HTTP connection caps reached: new connections displace those waiting \
                 longest, or are refused"
            );
            Stretch {
                counts: [0; 3],
                began: now,
                last: now,
            }
        });
        stretch.counts[strain as usize] += 1;
        stretch.last = now;
    }
}

/// Answers a connection there is no room for, if its socket takes the answer at once, and
/// closes it: a client learns why, and the server never waits for it.
fn refuse(stream: tokio::net::TcpStream) {
    const FULL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\
        Retry-After: 1\r\nContent-Length: 0\r\n\r\n";
    let _ = stream.try_write(FULL);
}

/// A response body that keeps its request in flight until hyper drops it, after its last byte
/// (or when the connection ends): a streamed answer is a request in flight to the end.
struct Tracked {
    body: Body,
    _in_flight: InFlight,
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        std::pin::Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// What answers a request, shared by every connection.
struct Routes<S> {
    tokens: Tokens,
    metrics: MetricsAccess,
    service: S,
    health: Arc<Health>,
}

impl<S> Routes<S>
where
    S: Service<Request<Incoming>, Response = Response<Body>, Error = Infallible> + Clone,
{
    async fn answer(&self, request: Request<Incoming>) -> Response<Body> {
        match request.uri().path() {
            "/mcp" => mcp(self.service.clone(), request, &self.tokens).await,
            "/metrics" if request.method() == hyper::Method::GET => {
                if self.metrics == MetricsAccess::Open || metrics_authorized(&request, &self.tokens)
                {
                    metrics(&self.health)
                } else {
                    let mut refused = plain(StatusCode::UNAUTHORIZED, "missing or wrong token");
                    refused.headers_mut().insert(
                        hyper::header::WWW_AUTHENTICATE,
                        hyper::header::HeaderValue::from_static("Bearer"),
                    );
                    refused
                }
            }
            _ => self.probe(&request),
        }
    }

    /// The answers that need no token and no body: the probes, and the refusals of everything
    /// else. All a connection in the probe slot gets.
    fn probe<B>(&self, request: &Request<B>) -> Response<Body> {
        match request.uri().path() {
            "/healthz" | "/readyz" | "/metrics" if request.method() != hyper::Method::GET => {
                plain(StatusCode::METHOD_NOT_ALLOWED, "GET only")
            }
            "/healthz" => json(StatusCode::OK, &serde_json::json!({"status": "ok"})),
            "/readyz" => {
                let readiness = self.health.readiness();
                let status = if readiness.ready {
                    StatusCode::OK
                } else {
                    StatusCode::SERVICE_UNAVAILABLE
                };
                json(status, &readiness)
            }
            "/mcp" | "/metrics" => {
                let mut full = plain(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the server is at its connection limit; retry shortly",
                );
                full.headers_mut().insert(
                    hyper::header::RETRY_AFTER,
                    hyper::header::HeaderValue::from_static("1"),
                );
                full
            }
            _ => plain(StatusCode::NOT_FOUND, "MCP lives at /mcp"),
        }
    }
}

/// An MCP request, once authenticated, to rmcp's service. A session DELETE that rmcp accepts
/// (202) is answered 204: the request is done, not queued, and clients (the official Python
/// SDK) take only 200 or 204 as a terminated session.
async fn mcp<S>(mut service: S, mut request: Request<Incoming>, tokens: &Tokens) -> Response<Body>
where
    S: Service<Request<Incoming>, Response = Response<Body>, Error = Infallible>,
{
    match authenticate(&request, tokens) {
        Access::Denied => {
            return plain(StatusCode::UNAUTHORIZED, "missing or wrong bearer token");
        }
        Access::Anonymous => {}
        Access::Principal(name) => {
            request.extensions_mut().insert(Principal(name.into()));
        }
    }
    let delete = request.method() == hyper::Method::DELETE;
    let Ok(mut response) = service.call(request).await;
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
        *response.body_mut() = Full::new(Bytes::new()).boxed();
    }
    response
}

/// `GET /metrics`: the server's metrics, with the session table's levels as of now.
fn metrics(health: &Health) -> Response<Body> {
    let text = crate::metrics::global().encode(&health.sessions().levels());
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(crate::metrics::CONTENT_TYPE),
    );
    response
}

fn json(status: StatusCode, value: &impl serde::Serialize) -> Response<Body> {
    let body = serde_json::to_vec(value).unwrap_or_default();
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

/// The token of an `Authorization: Bearer` header, if there is one.
fn bearer<B>(request: &Request<B>) -> Option<&str> {
    request
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
}

/// Checks the bearer token against every configured one (each comparison in constant time:
/// tokens are secrets, see [`same_secret`]) and says who the request is.
fn authenticate<B>(request: &Request<B>, tokens: &Tokens) -> Access {
    if !tokens.any() {
        return Access::Anonymous;
    }
    let Some(presented) = bearer(request) else {
        return Access::Denied;
    };
    let presented = presented.as_bytes();
    // Every token is compared, whichever matches: the time tells nothing about which did.
    let mut access = Access::Denied;
    for (principal, token) in &tokens.named {
        if same_secret(presented, token.as_bytes()) {
            access = Access::Principal(principal.clone());
        }
    }
    if (tokens.shared.as_deref()).is_some_and(|token| same_secret(presented, token.as_bytes())) {
        access = Access::Anonymous;
    }
    access
}

/// Whether a request for `/metrics` carries the metrics token or an HTTP token (see
/// [`MetricsAccess::Token`]).
fn metrics_authorized<B>(request: &Request<B>, tokens: &Tokens) -> bool {
    let metrics_token = bearer(request).is_some_and(|presented| {
        (tokens.metrics.as_deref())
            .is_some_and(|token| same_secret(presented.as_bytes(), token.as_bytes()))
    });
    let http_token = tokens.any() && authenticate(request, tokens) != Access::Denied;
    metrics_token | http_token
}

/// Whether `presented` is `secret`, in a time that depends on the secret's length alone: every
/// byte of the secret is compared, whatever was presented (a byte missing from a shorter token
/// compares as a difference), and the differences are gathered without a branch. A comparison
/// that stopped at the first difference (`==`) would tell an attacker, by its time, how many
/// leading bytes were right.
fn same_secret(presented: &[u8], secret: &[u8]) -> bool {
    let mut differences = u8::from(presented.len() != secret.len());
    for (i, &expected) in secret.iter().enumerate() {
        let given = presented.get(i).copied().unwrap_or(!expected);
        differences |= given ^ expected;
        #[cfg(test)]
        tests::COMPARED_BYTES.with(|compared| compared.set(compared.get() + 1));
    }
    // Kept opaque so the optimiser cannot turn the loop into one that stops early.
    std::hint::black_box(differences) == 0
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    thread_local! {
        /// Secret bytes [`same_secret`] compared on this thread.
        pub(super) static COMPARED_BYTES: Cell<usize> = const { Cell::new(0) };
    }

    /// How many secret bytes `check` made [`same_secret`] compare.
    fn bytes_compared(check: impl FnOnce()) -> usize {
        COMPARED_BYTES.with(|compared| compared.set(0));
        check();
        COMPARED_BYTES.with(Cell::get)
    }

    fn request(auth: Option<&str>) -> Request<()> {
        let mut builder = Request::builder().uri("/mcp");
        if let Some(a) = auth {
            builder = builder.header("authorization", a);
        }
        builder.body(()).unwrap()
    }

    #[test]
    fn bearer_tokens_are_checked() {
        let open = Tokens::default();
        assert_eq!(authenticate(&request(None), &open), Access::Anonymous);
        let shared = Tokens {
            shared: Some("s3cret".into()),
            ..Tokens::default()
        };
        assert_eq!(authenticate(&request(None), &shared), Access::Denied);
        assert_eq!(
            authenticate(&request(Some("Bearer nope")), &shared),
            Access::Denied
        );
        assert_eq!(
            authenticate(&request(Some("s3cret")), &shared),
            Access::Denied
        );
        assert_eq!(
            authenticate(&request(Some("Bearer s3cret")), &shared),
            Access::Anonymous
        );
    }

    #[test]
    fn tokens_are_loaded_from_the_settings() {
        let none = Tokens::load(None, None).unwrap();
        assert!(!none.any());
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tokens");
        std::fs::write(&file, "alice:aaaaaaaaaaaaaaaa1\n").unwrap();
        let both = Tokens::load(Some("s3cret".into()), Some(&file)).unwrap();
        assert_eq!(both.shared.as_deref(), Some("s3cret"));
        assert_eq!(
            both.named,
            [("alice".to_owned(), "aaaaaaaaaaaaaaaa1".to_owned())]
        );
        let missing = Tokens::load(None, Some(&dir.path().join("nope"))).unwrap_err();
        assert!(
            missing.to_string().contains("SANDBOX_HTTP_TOKENS_FILE"),
            "{missing}"
        );
    }

    #[test]
    fn named_tokens_name_their_principal() {
        let tokens = Tokens {
            named: parse_tokens("# team\nalice: aaaaaaaaaaaaaaaa1\n\nbob:bbbbbbbbbbbbbbbb2\n")
                .unwrap(),
            ..Tokens::default()
        };
        assert_eq!(
            authenticate(&request(Some("Bearer aaaaaaaaaaaaaaaa1")), &tokens),
            Access::Principal("alice".into())
        );
        assert_eq!(
            authenticate(&request(Some("Bearer bbbbbbbbbbbbbbbb2")), &tokens),
            Access::Principal("bob".into())
        );
        assert_eq!(
            authenticate(&request(Some("Bearer aaaaaaaaaaaaaaaa")), &tokens),
            Access::Denied
        );
        for bad in [
            "alice",
            "alice:short",
            "../x:aaaaaaaaaaaaaaaa1",
            "a:aaaaaaaaaaaaaaaa1\na:bbbbbbbbbbbbbbbb2",
            "a:aaaaaaaaaaaaaaaa1\nb:aaaaaaaaaaaaaaaa1",
        ] {
            assert!(parse_tokens(bad).is_err(), "{bad}");
        }
        assert!(
            !format!("{tokens:?}").contains("aaaa"),
            "secrets stay out of logs"
        );
    }

    #[test]
    fn tokens_are_compared_in_constant_time() {
        let tokens = Tokens {
            shared: Some("shared-token-0123".into()),
            named: parse_tokens("alice:aaaaaaaaaaaaaaaa1\nbob:bbbbbbbbbbbbbbbb2").unwrap(),
            metrics: Some("metrics-token-456".into()),
        };
        let every_byte = 17 + 17 + 17;
        // Whatever is presented, every byte of every HTTP token is compared: wrong at the first
        // byte, wrong at the last, right (alice's, which matches first), too short, too long.
        // A comparison that stops early (`==`, a loop that breaks) compares fewer, or none.
        for presented in [
            "Xaaaaaaaaaaaaaaa1",
            "aaaaaaaaaaaaaaaaX",
            "aaaaaaaaaaaaaaaa1",
            "a",
            "aaaaaaaaaaaaaaaa1aaaaaaaaaaaaaaaaaaaaaa",
        ] {
            let request = request(Some(&format!("Bearer {presented}")));
            let compared = bytes_compared(|| {
                authenticate(&request, &tokens);
            });
            assert_eq!(compared, every_byte, "{presented}");
        }
        // /metrics compares the metrics token as well, and still every HTTP token.
        let request = request(Some("Bearer metrics-token-45X"));
        let compared = bytes_compared(|| {
            assert!(!metrics_authorized(&request, &tokens));
        });
        assert_eq!(compared, every_byte + 17);
        assert!(same_secret(b"abc", b"abc"));
        for wrong in [&b"abd"[..], b"ab", b"abcd", b"", b"xbc"] {
            assert!(!same_secret(wrong, b"abc"), "{wrong:?}");
        }
    }

    #[test]
    fn metrics_are_open_on_loopback_without_a_metrics_token_only() {
        let loopback: SocketAddr = "127.0.0.1:8765".parse().unwrap();
        let anywhere: SocketAddr = "0.0.0.0:8765".parse().unwrap();
        let http = Tokens {
            shared: Some("http-token".into()),
            ..Tokens::default()
        };
        assert_eq!(
            MetricsAccess::of(loopback, &Tokens::default()),
            MetricsAccess::Open
        );
        assert_eq!(MetricsAccess::of(loopback, &http), MetricsAccess::Open);
        assert_eq!(MetricsAccess::of(anywhere, &http), MetricsAccess::Token);
        let metrics = Tokens::default().with_metrics(Some("m".into()));
        assert_eq!(MetricsAccess::of(loopback, &metrics), MetricsAccess::Token);
        assert_eq!(
            Tokens::default().with_metrics(Some(String::new())).metrics,
            None,
            "an empty token is none"
        );
        // With a token required: the metrics token or an HTTP token; never "no HTTP token
        // configured" (which lets anyone into /mcp on loopback).
        let both = http.clone().with_metrics(Some("metrics-token".into()));
        assert!(metrics_authorized(
            &request(Some("Bearer metrics-token")),
            &both
        ));
        assert!(metrics_authorized(
            &request(Some("Bearer http-token")),
            &both
        ));
        assert!(!metrics_authorized(&request(Some("Bearer nope")), &both));
        assert!(!metrics_authorized(&request(None), &both));
        assert!(!metrics_authorized(&request(None), &metrics));
        assert!(
            !format!("{both:?}").contains("metrics-token"),
            "secrets stay out of logs"
        );
    }

    #[test]
    fn connection_caps_fit_what_the_open_file_limit_leaves() {
        let limits = ConnectionLimits {
            max: 1024,
            per_peer: 256,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
        };
        assert_eq!(fit_connections(limits, 5000), limits);
        let fitted = fit_connections(limits, 200);
        assert_eq!((fitted.max, fitted.per_peer), (200, 200));
        let floor = fit_connections(limits, 3);
        assert_eq!(
            (floor.max, floor.per_peer),
            (FEWEST_CONNECTIONS, FEWEST_CONNECTIONS)
        );
        let small = ConnectionLimits { max: 4, ..limits };
        assert_eq!(
            fit_connections(small, 0).max,
            4,
            "never above the configured cap"
        );
    }
}
