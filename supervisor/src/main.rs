//! `sandbox-mcp`: serves MCP on stdio, or over Streamable HTTP with `--http`; `sandbox-mcp
//! check-config` checks the configuration instead. Every setting is a flag, a `SANDBOX_*`
//! environment variable or a key of the `--config` file (`sandbox-mcp --help`,
//! `config::Settings`); logs go to stderr, as text or JSON lines, never to stdout, which is the
//! MCP channel.

use std::process::ExitCode;

use sandbox_supervisor::Transport;
use sandbox_supervisor::check_config::Report;
use sandbox_supervisor::config::{LogFormat, Settings, SupervisorConfig, Task, TransportSettings};

/// The exit status of a server that cannot start with its configuration (as for a usage error).
const BAD_CONFIGURATION: u8 = 2;

fn main() -> ExitCode {
    // --help, --version and malformed settings (flags, variables, the file) end here, with
    // clap's message and status.
    let settings = Settings::try_parse_args(std::env::args_os()).unwrap_or_else(|e| e.exit());
    init_logging(&settings.transport);
    if settings.task == Some(Task::CheckConfig) {
        let report = Report::check(&settings);
        print!("{}", report.render(&settings.provenance));
        return if report.would_start() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(BAD_CONFIGURATION)
        };
    }
    // Workers and connections need descriptors, and the soft limit is low by convention
    // (descriptors::raise_limit says why raising it is ours to do).
    if let Some(open_files) = sandbox_supervisor::descriptors::raise_limit() {
        tracing::info!(open_files, "open-file limit");
    }
    if let Some(file) = &settings.provenance.file {
        tracing::info!(file = %file.display(), "settings read from the configuration file");
    }
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

/// Logs to stderr with the `--log` filter (info when unset or malformed), as text or as JSON
/// lines that carry the current span and the list of spans (a tool call's `tool`,
/// `session_id`, `execution_id`).
fn init_logging(transport: &TransportSettings) {
    let filter = transport
        .log
        .as_deref()
        .and_then(|f| tracing_subscriber::EnvFilter::try_new(f).ok())
        .unwrap_or_else(|| tracing_subscriber::EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(filter);
    match transport.log_format {
        LogFormat::Text => logs.init(),
        LogFormat::Json => logs
            .json()
            .with_current_span(true)
            .with_span_list(true)
            .init(),
    }
}
