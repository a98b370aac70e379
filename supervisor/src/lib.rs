//! `sandbox-mcp`: an MCP server that runs untrusted Python and JavaScript in per-session
//! WebAssembly workers.
//!
//! The supervisor never runs guest code itself. Its modules form layers (the list, and the test
//! that keeps it, are in `layers.rs`), bottom first: host facts and identities ([`owner`],
//! [`memory`], [`jail`], [`cgroup`], …); [`config`], every setting (flags and `SANDBOX_*`
//! variables) and what they resolve to; files ([`workspace`], [`runtimes`], [`packages`]:
//! session files only through the confined layer, `sandbox_protocol::confined`); workers
//! ([`worker`] spawns and talks to one `sandbox-worker` process per session, [`pool`],
//! [`metrics`]); [`session`], each owned by one client, queueing its executions, keeping its
//! state and checkpoints,
//! and [`executions`] in flight; answers ([`report`], [`resources`], [`health`]); the MCP
//! handler [`server`] and its [`tools`]; and the transports ([`guard`], where panics become
//! answers and [`redact`] takes host paths out; [`http`]; [`stdio`]) with [`check_config`].
//! Below them all is the `sandbox-guidance` crate: [`guidance`], pure advice, and the
//! [`inventory`] of what the interpreters hold.

pub mod background;
pub mod cgroup;
pub mod check_config;
pub mod config;
pub mod descriptors;
pub mod engine;
pub mod executions;
pub mod guard;
pub mod health;
pub mod http;
pub mod jail;
pub mod jail_layers;
#[cfg(test)]
mod layers;
pub mod memory;
pub mod metrics;
pub mod notify;
pub mod owner;
pub mod packages;
pub mod pool;
pub mod redact;
pub mod report;
pub mod resources;
pub mod runtimes;
pub mod server;
pub mod session;
pub mod stdio;
pub mod tools;
pub mod worker;
pub mod workspace;

/// Advice, code analysis and docs: a crate of its own, below everything here.
pub use sandbox_guidance as guidance;
/// What the interpreters hold (compiled-in packages, import costs), for guidance and packages.
pub use sandbox_guidance::inventory;

use std::sync::Arc;

use rmcp::ServiceExt;

use crate::background::Background;
use crate::config::{Settings, SupervisorConfig};
use crate::engine::Sandbox;
use crate::guard::Guarded;
use crate::runtimes::Runtimes;
use crate::server::SandboxServer;
use crate::session::{Owner, SessionTable};

/// Where MCP is served.
#[derive(Debug, Clone)]
pub enum Transport {
    /// stdin/stdout: one client, the one that started us.
    Stdio,
    /// Streamable HTTP: many clients, each MCP session with its own default sandboxes.
    Http(http::HttpOptions),
}

impl Transport {
    /// HTTP when the settings give an address (`--http`, `SANDBOX_HTTP_ADDR`), with their
    /// tokens; stdio otherwise.
    ///
    /// # Errors
    /// When the tokens file cannot be read or is malformed.
    pub fn from_settings(settings: &Settings) -> Result<Self, http::HttpError> {
        let transport = &settings.transport;
        let Some(addr) = transport.http else {
            return Ok(Transport::Stdio);
        };
        let tokens = http::Tokens::load(
            transport.http_token.clone(),
            transport.http_tokens_file.as_deref(),
        )?
        .with_metrics(transport.metrics_token.clone());
        let admission = &settings.admission;
        let pooled: usize = admission.worker_pool.iter().map(|(_, n)| n).sum();
        Ok(Transport::Http(http::HttpOptions {
            addr,
            tokens,
            limits: http::connections::ConnectionLimits::from_settings(transport),
            workers: usize::try_from(admission.max_sessions)
                .unwrap_or(usize::MAX)
                .saturating_add(pooled),
        }))
    }
}

/// Serves MCP on stdin/stdout until the client closes stdin or a SIGTERM/SIGINT arrives, then
/// stops every worker and removes the state directory.
///
/// # Errors
/// When the MCP handshake fails or signals cannot be installed.
pub async fn run_stdio(config: SupervisorConfig) -> anyhow::Result<()> {
    run(config, Transport::Stdio).await
}

/// Serves MCP on `transport` until it ends (stdio) or a SIGTERM/SIGINT arrives, then stops
/// every worker and removes the state directory.
///
/// # Errors
/// When the transport cannot start or signals cannot be installed.
pub async fn run(config: SupervisorConfig, transport: Transport) -> anyhow::Result<()> {
    tracing::info!(cgroups = %config.cgroups.describe(), max_sessions = config.max_sessions, memory_budget = config.memory_budget, worker_pool = %config.worker_pool, "supervisor starting");
    tracing::info!(
        jail = %config.jail.requested(),
        required = %config.jail.required,
        disabled = %config.jail.disabled,
        detected = ?config.jail.detected,
        "worker jail layers"
    );
    guard::install_panic_hook();
    let config = Arc::new(config);
    let sessions = Arc::new(SessionTable::new(config.clone())?);
    // Servers that died without cleaning up (SIGKILL) left their sessions' files in $TMPDIR.
    {
        let own = config.state_dir.clone();
        tokio::task::spawn_blocking(move || {
            let removed = workspace::sweep_stale(&std::env::temp_dir(), &own);
            if !removed.is_empty() {
                tracing::info!(dirs = ?removed, "removed the state directories of dead servers");
            }
        });
    }
    let redactor = Arc::new(redact::Redactor::new(&config, &config.packages));
    let runtimes = Arc::new(Runtimes::default());
    let health = Arc::new(health::Health::new(
        config.clone(),
        runtimes.clone(),
        sessions.clone(),
        redactor.clone(),
    ));
    // Readiness needs a worker to have started: with no pool to start one, a probe does.
    let probe = health.needs_probe() && matches!(transport, Transport::Http(_));
    let background = Background::start(
        &background::Shared {
            config: config.clone(),
            sessions: sessions.clone(),
            runtimes: runtimes.clone(),
            health: health.clone(),
        },
        probe,
    );

    // One server per MCP session (one on stdio). Over HTTP each is a client of its own unless
    // its token names a principal (see `http`).
    let sandbox = Arc::new(Sandbox::new(
        config.clone(),
        sessions.clone(),
        runtimes,
        Arc::new(executions::Executions::default()),
    ));
    // One server per MCP session (one on stdio). Over HTTP each is a client of its own unless
    // its token names a principal (see `http`).
    let make_server = move |owner: Owner| {
        Guarded::new(SandboxServer::new(sandbox.clone(), owner), redactor.clone())
    };
    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let stop = background.stop_token();
    // The largest message read from a client: what the largest code needs (an HTTP body, a
    // stdio line).
    let max_message = config::max_message_bytes(config.max_code_bytes);
    // Signals are watched from the start, including while a stdio client has not initialised.
    let serve = async {
        match transport {
            Transport::Stdio => {
                health.mark_serving();
                use rmcp::transport::async_rw::{AsyncRwTransport, DEFAULT_MAX_LINE_LENGTH};
                let (input, output) = stdio::channel();
                // Never below rmcp's own line limit: a larger code limit needs more.
                let transport = AsyncRwTransport::new_server(input, output)
                    .with_max_line_length(max_message.max(DEFAULT_MAX_LINE_LENGTH));
                let running = make_server(Owner::local()).serve(transport).await?;
                let quit = running.waiting().await;
                tracing::info!(reason = ?quit, "client disconnected");
                anyhow::Ok(())
            }
            Transport::Http(options) => Ok(http::serve(
                options,
                max_message,
                move || make_server(Owner::connection()),
                health.clone(),
                stop.clone(),
            )
            .await?),
        }
    };
    let served = tokio::select! {
        served = serve => served,
        _ = sigterm.recv() => { tracing::info!("SIGTERM: shutting down"); Ok(()) }
        _ = tokio::signal::ctrl_c() => { tracing::info!("SIGINT: shutting down"); Ok(()) }
    };
    notify::stopping();
    // Every loop ends before the table shuts down, so no worker is pooled after the pool was
    // emptied.
    background.stop().await;
    shutdown(&config, &sessions).await;
    served
}

/// Kills every worker and removes what the server created on disk, whatever guests left in
/// their workspaces (through the confined layer: links are not followed, locked or huge trees
/// are removed).
pub async fn shutdown(config: &SupervisorConfig, sessions: &SessionTable) {
    sessions.shutdown().await;
    // Durable sessions stay for the next server, which clears the rest (sockets, scratch).
    if config.keep_state || config.durable_sessions {
        return;
    }
    let state_dir = config.state_dir.clone();
    let removed = tokio::task::spawn_blocking(move || {
        let (Some(parent), Some(name)) = (state_dir.parent(), state_dir.file_name()) else {
            return Err("the state directory has no parent".to_owned());
        };
        sandbox_protocol::confined::Root::open_ambient(parent)
            .map_err(|e| e.to_string())?
            .remove_tree(std::path::Path::new(name))
            .map_err(|e| e.to_string())
    })
    .await;
    match removed {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!(error = %e, "cannot remove the state directory"),
        Err(e) => tracing::error!(error = %e, "removing the state directory panicked"),
    }
}
