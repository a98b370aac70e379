//! `sandbox-mcp`: an MCP server that runs untrusted Python and JavaScript in per-session
//! WebAssembly workers.
//!
//! The supervisor never runs guest code itself. [`server`] speaks MCP; [`session`] keeps the
//! sessions and queues their executions; [`worker`] spawns (with [`jail`]) and talks to one
//! `sandbox-worker` process per session; [`runtimes`] makes sure the interpreters are compiled;
//! [`config`] says where everything lives.

pub mod cgroup;
pub mod config;
pub mod executions;
pub mod guidance;
pub mod http;
pub mod jail;
pub mod packages;
pub mod persist;
pub mod report;
pub mod resources;
pub mod runtimes;
pub mod server;
pub mod session;
pub mod tools;
pub mod worker;
pub mod workspace;

use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;

use crate::config::SupervisorConfig;
use crate::runtimes::Runtimes;
use crate::server::SandboxServer;
use crate::session::SessionTable;

/// Replaces the server's own directories in a message meant for a client: no host path leaves
/// the server.
pub fn redact(config: &SupervisorConfig, message: &str) -> String {
    let mut out = message.to_owned();
    for (dir, label) in [
        (&config.state_dir, "<state>"),
        (&config.cache_dir, "<cache>"),
        (&config.runtime_dir, "<runtimes>"),
    ] {
        let dir = dir.display().to_string();
        if !dir.is_empty() {
            out = out.replace(&dir, label);
        }
    }
    out
}

/// Where MCP is served.
#[derive(Debug, Clone)]
pub enum Transport {
    /// stdin/stdout: one client, the one that started us.
    Stdio,
    /// Streamable HTTP: many clients, each MCP session with its own default sandboxes.
    Http(http::HttpOptions),
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
    tracing::info!(cgroups = %config.cgroups.describe(), max_sessions = config.max_sessions, memory_budget = config.memory_budget, "supervisor starting");
    let config = Arc::new(config);
    let sessions = Arc::new(SessionTable::new(config.clone()));
    let runtimes = Arc::new(Runtimes::default());

    // Compile the interpreters (or check the cache) while the client connects.
    {
        let (config, runtimes) = (config.clone(), runtimes.clone());
        tokio::spawn(async move {
            if let Err(e) = runtimes.manifest(&config).await {
                tracing::error!(error = %e, "interpreters unavailable");
            }
        });
    }
    let reaper = {
        let (sessions, ttl) = (sessions.clone(), config.session_ttl);
        tokio::spawn(async move {
            let period = (ttl / 4).clamp(Duration::from_secs(1), Duration::from_secs(60));
            loop {
                tokio::time::sleep(period).await;
                sessions.reap_idle().await;
            }
        })
    };

    let executions = Arc::new(executions::Executions::default());
    let make_server = {
        let (config, sessions) = (config.clone(), sessions.clone());
        move || {
            SandboxServer::new(
                config.clone(),
                sessions.clone(),
                runtimes.clone(),
                executions.clone(),
            )
        }
    };
    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let stop = tokio_util::sync::CancellationToken::new();
    // Signals are watched from the start, including while a stdio client has not initialised.
    let serve = async {
        match transport {
            Transport::Stdio => {
                let running = make_server().serve(rmcp::transport::stdio()).await?;
                let quit = running.waiting().await;
                tracing::info!(reason = ?quit, "client disconnected");
                anyhow::Ok(())
            }
            Transport::Http(options) => Ok(http::serve(options, make_server, stop.clone()).await?),
        }
    };
    let served = tokio::select! {
        served = serve => served,
        _ = sigterm.recv() => { tracing::info!("SIGTERM: shutting down"); Ok(()) }
        _ = tokio::signal::ctrl_c() => { tracing::info!("SIGINT: shutting down"); Ok(()) }
    };
    stop.cancel();
    reaper.abort();
    shutdown(&config, &sessions).await;
    served
}

/// Kills every worker and removes what the server created on disk.
pub async fn shutdown(config: &SupervisorConfig, sessions: &SessionTable) {
    sessions.shutdown().await;
    if std::env::var_os("SANDBOX_KEEP_STATE").is_none() {
        if let Err(e) = std::fs::remove_dir_all(&config.state_dir) {
            tracing::warn!(error = %e, "cannot remove the state directory");
        }
    }
}
