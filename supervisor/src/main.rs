//! `sandbox-mcp`: serves MCP on stdio. Configuration comes from `SANDBOX_*` environment
//! variables (see the README); logs go to stderr, never stdout, which is the MCP channel.

use std::process::ExitCode;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    if std::env::args()
        .nth(1)
        .is_some_and(|a| a == "--version" || a == "-V")
    {
        println!("sandbox-mcp {}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    let config = match sandbox_supervisor::config::SupervisorConfig::from_env() {
        Ok(config) => config,
        Err(e) => {
            eprintln!("sandbox-mcp: {e}");
            return ExitCode::from(2);
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
    // `--http ADDR` (or SANDBOX_HTTP_ADDR) serves Streamable HTTP; otherwise stdio.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let http_addr = match args.as_slice() {
        [flag, addr] if flag == "--http" => Some(addr.clone()),
        [] => std::env::var("SANDBOX_HTTP_ADDR")
            .ok()
            .filter(|a| !a.is_empty()),
        _ => {
            eprintln!("usage: sandbox-mcp [--http ADDR]   (stdio without --http)");
            return ExitCode::from(2);
        }
    };
    let transport = match http_addr {
        None => sandbox_supervisor::Transport::Stdio,
        Some(addr) => {
            let Ok(addr) = addr.parse() else {
                eprintln!("sandbox-mcp: --http takes an address like 127.0.0.1:8765, got {addr:?}");
                return ExitCode::from(2);
            };
            let tokens = match sandbox_supervisor::http::Tokens::from_env() {
                Ok(tokens) => tokens,
                Err(e) => {
                    eprintln!("sandbox-mcp: {e}");
                    return ExitCode::from(2);
                }
            };
            sandbox_supervisor::Transport::Http(sandbox_supervisor::http::HttpOptions {
                addr,
                tokens,
            })
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
