//! `sandbox-mcp`: serves MCP on stdio, or over Streamable HTTP with `--http`. Every setting is
//! a flag or a `SANDBOX_*` environment variable (`sandbox-mcp --help`, `config::Settings`); logs
//! go to stderr, never stdout, which is the MCP channel.

use std::process::ExitCode;

use sandbox_supervisor::Transport;
use sandbox_supervisor::config::{Settings, SupervisorConfig};

/// The exit status of a server that cannot start with its configuration (as for a usage error).
const BAD_CONFIGURATION: u8 = 2;

fn main() -> ExitCode {
    // --help, --version and malformed settings end here, with clap's message and status.
    let settings = Settings::try_parse_args(std::env::args_os()).unwrap_or_else(|e| e.exit());
    let filter = settings
        .transport
        .log
        .as_deref()
        .and_then(|f| tracing_subscriber::EnvFilter::try_new(f).ok())
        .unwrap_or_else(|| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(filter)
        .init();
    let config = match SupervisorConfig::from_settings(&settings) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("sandbox-mcp: {e}");
            return ExitCode::from(BAD_CONFIGURATION);
        }
    };
    let transport = match Transport::from_settings(&settings) {
        Ok(transport) => transport,
        Err(e) => {
            eprintln!("sandbox-mcp: {e}");
            return ExitCode::from(BAD_CONFIGURATION);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("sandbox-mcp: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(sandbox_supervisor::run(config, transport));
    // The stdin reader is a blocking thread that may never return (a client that keeps stdin
    // open after a SIGTERM): do not wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sandbox-mcp: {e:#}");
            ExitCode::FAILURE
        }
    }
}
