//! MCP over Streamable HTTP, for running `sandbox-mcp` as a service (see
//! `supervisor/sandbox-mcp.service`). Every MCP session gets its own `SandboxServer` (its own
//! default sandboxes); the session table, admission limits and workers are shared with the rest
//! of the server. Requests need `Authorization: Bearer $SANDBOX_HTTP_TOKEN` when a token is set,
//! and a token is required to listen on anything but loopback: this endpoint runs code.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use tower_service::Service;

use crate::server::SandboxServer;

/// How the HTTP endpoint is reached and protected.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub addr: SocketAddr,
    /// Required bearer token (`SANDBOX_HTTP_TOKEN`), if any.
    pub token: Option<String>,
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
}

/// Serves MCP on `options.addr` at `/mcp` until `shutdown` is cancelled.
///
/// # Errors
/// See [`HttpError`].
pub async fn serve(
    options: HttpOptions,
    make_server: impl Fn() -> SandboxServer + Send + Sync + 'static,
    shutdown: CancellationToken,
) -> Result<(), HttpError> {
    if options.token.is_none() && !options.addr.ip().is_loopback() {
        return Err(HttpError::Unprotected(options.addr));
    }
    let mut config = StreamableHttpServerConfig::default();
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
    tracing::info!(addr = %options.addr, "serving MCP over Streamable HTTP at /mcp");
    let token: Option<Arc<str>> = options.token.map(Into::into);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    continue;
                }
            },
            () = shutdown.cancelled() => return Ok(()),
        };
        let (service, token, shutdown) = (service.clone(), token.clone(), shutdown.clone());
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(move |request: Request<Incoming>| {
                let mut service = service.clone();
                let token = token.clone();
                async move {
                    if request.uri().path() != "/mcp" {
                        return Ok::<_, Infallible>(plain(
                            StatusCode::NOT_FOUND,
                            "MCP lives at /mcp",
                        ));
                    }
                    if !authorized(&request, token.as_deref()) {
                        return Ok(plain(
                            StatusCode::UNAUTHORIZED,
                            "missing or wrong bearer token",
                        ));
                    }
                    service.call(request).await
                }
            });
            let connection = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            let serving = connection.serve_connection(TokioIo::new(stream), handler);
            tokio::select! {
                served = serving => if let Err(e) = served {
                    tracing::debug!(%peer, error = %e, "connection ended");
                },
                () = shutdown.cancelled() => {}
            }
        });
    }
}

fn authorized<B>(request: &Request<B>, token: Option<&str>) -> bool {
    let Some(token) = token else { return true };
    let presented = request
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    // Constant-time comparison: the token is a secret.
    presented.is_some_and(|p| {
        p.len() == token.len()
            && p.bytes()
                .zip(token.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    })
}

fn plain(
    status: StatusCode,
    text: &'static str,
) -> Response<http_body_util::combinators::BoxBody<Bytes, Infallible>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_are_checked() {
        let request = |auth: Option<&str>| {
            let mut builder = Request::builder().uri("/mcp");
            if let Some(a) = auth {
                builder = builder.header("authorization", a);
            }
            builder.body(()).unwrap()
        };
        assert!(authorized(&request(None), None));
        assert!(!authorized(&request(None), Some("s3cret")));
        assert!(!authorized(&request(Some("Bearer nope")), Some("s3cret")));
        assert!(!authorized(&request(Some("s3cret")), Some("s3cret")));
        assert!(authorized(&request(Some("Bearer s3cret")), Some("s3cret")));
    }
}
