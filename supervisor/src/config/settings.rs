//! Everything an operator can set, in one place: each command-line flag, its `SANDBOX_*`
//! environment variable and its key in the configuration file, grouped as `sandbox-mcp --help`
//! shows them, with defaults and bounds. A flag beats its variable, which beats the file
//! ([`super::file`]), which beats the built-in default. These are the settings as given;
//! [`super::SupervisorConfig`] is what they resolve to once the binaries, interpreters and host
//! features have been found.

use std::convert::Infallible;
use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{ArgAction, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use sandbox_protocol::{Flavor, LayerSet};

use super::file::ConfigFile;
use super::provenance::Provenance;

use super::limits::{
    DEFAULT_MAX_CODE_BYTES, DISK_QUOTA_BYTES_RANGE, DISK_QUOTA_FILES_RANGE, FUEL_RANGE,
    HTTP_CONNECTIONS_RANGE, HTTP_HEADER_TIMEOUT_SECS_RANGE, HTTP_IDLE_TIMEOUT_SECS_RANGE,
    MAX_CODE_BYTES_RANGE, MEMORY_RANGE, TIMEOUT_SECS_RANGE, TTL_RANGE,
};
use crate::jail_layers::WorkerEntry;

/// Default idle time of a session made on demand by `execute_code`: an hour.
pub const DEFAULT_SESSION_TTL_SECS: u64 = 3600;
/// Default idle time of a session made with `create_session` (the seed suggests 24 h).
pub const DEFAULT_EXPLICIT_SESSION_TTL_SECS: u64 = 24 * 3600;
/// Default most sessions at once across all clients. Memory is admitted by measured use, so
/// this only bounds processes and descriptors (about six per session).
pub const DEFAULT_MAX_SESSIONS: u64 = 256;
/// Default idle time after which a session is suspended: its worker stops, its state stays on
/// disk. Resuming a Python session costs about 35 ms, an idle worker 22 MiB or more; five
/// minutes keeps a conversation's pauses warm.
pub const DEFAULT_SUSPEND_IDLE_SECS: u64 = 300;
/// Default idle pre-started workers per runtime.
pub const DEFAULT_WORKER_POOL: &str = "python=2,javascript=2";
/// Default caps per HTTP client: sessions, and executions running or queued.
pub const DEFAULT_PRINCIPAL_MAX: u64 = 16;
/// Default time a new HTTP connection has to deliver its first request head, and a keep-alive
/// connection to finish a head it began: a client sends its headers in one go, in
/// milliseconds; ten seconds leave room for a slow link and none for a client that trickles.
pub const DEFAULT_HTTP_HEADER_TIMEOUT_SECS: u64 = 10;
/// Default time a keep-alive HTTP connection may wait with no request in flight: longer than
/// the usual client pools keep one (reqwest 90 s, httpx 5 s), so a client closes it first and
/// never sends a request into a connection the server is closing. Under pressure the caps close
/// waiting connections sooner (see `http::connections`).
pub const DEFAULT_HTTP_IDLE_TIMEOUT_SECS: u64 = 120;
/// Default most HTTP connections at once. Each holds a descriptor and a few KiB; 1,024 serve
/// hundreds of MCP clients (each holds one or two) and, with the default sessions, fit an
/// open-file limit of 4,096 (`check-config` does the sum).
pub const DEFAULT_HTTP_MAX_CONNECTIONS: u64 = 1024;
/// Default most HTTP connections from one address (an IPv6 /64): a quarter of all, so a single
/// host cannot take them all. Behind a proxy every client shares the proxy's address: raise it
/// to `http_max_connections` there (the proxy does the per-client limiting).
pub const DEFAULT_HTTP_MAX_CONNECTIONS_PER_PEER: u64 = 256;

/// What `sandbox-mcp` is told by its command line and environment.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "sandbox-mcp",
    version,
    about = "An MCP server that runs untrusted Python and JavaScript, one WebAssembly sandbox \
             process per session.",
    long_about = "An MCP server that runs untrusted Python and JavaScript, one WebAssembly \
                  sandbox process per session.\n\nServes MCP on stdin/stdout (give it to an MCP \
                  client as a command), or over Streamable HTTP with --http.",
    after_help = "Every option can also be set with its SANDBOX_* environment variable (an empty \
                  variable counts as unset) or in a TOML file given with --config (the key is the \
                  option's name in snake_case: max_sessions = 64); a flag beats its variable, \
                  which beats the file. Run `sandbox-mcp check-config` (with the same options) \
                  to see the effective settings and what would stop the server before starting \
                  it. Logs go to stderr; stdout is the MCP channel.",
    next_line_help = true,
    disable_help_subcommand = true
)]
pub struct Settings {
    /// What to do instead of serving, if anything.
    #[command(subcommand)]
    pub task: Option<Task>,
    /// A TOML file of settings (keys: the options' names in snake_case, e.g. max_sessions = 64);
    /// variables and flags override it [default: none]
    #[arg(long, value_name = "FILE", env = "SANDBOX_CONFIG")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub transport: TransportSettings,
    #[command(flatten)]
    pub admission: AdmissionSettings,
    #[command(flatten)]
    pub session: SessionSettings,
    #[command(flatten)]
    pub paths: PathSettings,
    #[command(flatten)]
    pub packages: PackageSources,
    #[command(flatten)]
    pub jail: JailSettings,
    #[command(flatten)]
    pub testing: TestSettings,
    /// Where each setting came from (flag, variable, file, default); filled by
    /// [`Settings::try_parse_args`].
    #[arg(skip)]
    pub provenance: Provenance,
}

/// What `sandbox-mcp` does instead of serving.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Subcommand)]
pub enum Task {
    /// Check the configuration without serving: effective settings and every problem, with fixes
    ///
    /// Resolves the settings exactly as start-up does, checks the files, directories, port and
    /// jail layers they name, prints the effective settings (each with its source) and every
    /// problem with its fix, and exits: 0 when the server would start (warnings allowed), 2 when
    /// it would not. Takes every option, before or after it.
    CheckConfig,
}

/// How log lines are written to stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, with the current span and the span list (tool, session_id,
    /// execution_id of a tool call).
    Json,
}

/// How clients reach the server.
#[derive(Clone, Args)]
#[command(next_help_heading = "Transport")]
pub struct TransportSettings {
    /// Serve MCP over Streamable HTTP at http://ADDR/mcp (e.g. 127.0.0.1:8765) instead of on
    /// stdin/stdout [default: stdio]
    #[arg(long, value_name = "ADDR", env = "SANDBOX_HTTP_ADDR")]
    pub http: Option<SocketAddr>,
    /// Bearer token every HTTP request must carry; each MCP session is then a client of its
    /// own. Required to listen beyond loopback [default: none]
    #[arg(
        long,
        value_name = "TOKEN",
        env = "SANDBOX_HTTP_TOKEN",
        hide_env_values = true
    )]
    pub http_token: Option<String>,
    /// File of `principal:token` lines (tokens of 16+ characters, `#` comments): the MCP
    /// sessions of one principal share its sandboxes [default: none]
    #[arg(long, value_name = "FILE", env = "SANDBOX_HTTP_TOKENS_FILE")]
    pub http_tokens_file: Option<PathBuf>,
    /// Bearer token GET /metrics requires (an HTTP token is accepted too). Without one,
    /// /metrics is open on a loopback address and needs an HTTP token beyond it
    /// [default: none]
    #[arg(
        long,
        value_name = "TOKEN",
        env = "SANDBOX_METRICS_TOKEN",
        hide_env_values = true
    )]
    pub metrics_token: Option<String>,
    /// Seconds an HTTP connection has to send a whole request head: its first one from the
    /// connect, a later one from its first byte (1–300)
    #[arg(long, value_name = "SECS", env = "SANDBOX_HTTP_HEADER_TIMEOUT_SECS",
          default_value_t = DEFAULT_HTTP_HEADER_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u64).range(HTTP_HEADER_TIMEOUT_SECS_RANGE))]
    pub http_header_timeout_secs: u64,
    /// Seconds a keep-alive HTTP connection may wait with no request in flight before it is
    /// closed; a long response (an execution, an SSE stream) is never cut (1–3600)
    #[arg(long, value_name = "SECS", env = "SANDBOX_HTTP_IDLE_TIMEOUT_SECS",
          default_value_t = DEFAULT_HTTP_IDLE_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u64).range(HTTP_IDLE_TIMEOUT_SECS_RANGE))]
    pub http_idle_timeout_secs: u64,
    /// Most HTTP connections at once. Beyond it a new connection takes the place of the one
    /// that has waited longest with no request in flight, or else is answered 503; one more is
    /// held back for /healthz and /readyz (1–1000000)
    #[arg(long, value_name = "N", env = "SANDBOX_HTTP_MAX_CONNECTIONS",
          default_value_t = DEFAULT_HTTP_MAX_CONNECTIONS,
          value_parser = clap::value_parser!(u64).range(HTTP_CONNECTIONS_RANGE))]
    pub http_max_connections: u64,
    /// Most HTTP connections from one client address (an IPv6 /64) at once; behind a proxy,
    /// set it to http_max_connections (1–1000000)
    #[arg(long, value_name = "N", env = "SANDBOX_HTTP_MAX_CONNECTIONS_PER_PEER",
          default_value_t = DEFAULT_HTTP_MAX_CONNECTIONS_PER_PEER,
          value_parser = clap::value_parser!(u64).range(HTTP_CONNECTIONS_RANGE))]
    pub http_max_connections_per_peer: u64,
    /// Log filter (tracing's EnvFilter syntax), also handed to every worker [default: info]
    #[arg(long, value_name = "FILTER", env = "RUST_LOG")]
    pub log: Option<String>,
    /// Log lines as text, or as JSON objects (one per line, with the spans of a tool call)
    #[arg(long, value_name = "FORMAT", env = "SANDBOX_LOG_FORMAT", value_enum,
          default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

impl std::fmt::Debug for TransportSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token itself: settings end up in logs.
        f.debug_struct("TransportSettings")
            .field("http", &self.http)
            .field("http_token", &self.http_token.is_some())
            .field("http_tokens_file", &self.http_tokens_file)
            .field("metrics_token", &self.metrics_token.is_some())
            .field("http_header_timeout_secs", &self.http_header_timeout_secs)
            .field("http_idle_timeout_secs", &self.http_idle_timeout_secs)
            .field("http_max_connections", &self.http_max_connections)
            .field(
                "http_max_connections_per_peer",
                &self.http_max_connections_per_peer,
            )
            .field("log", &self.log)
            .field("log_format", &self.log_format)
            .finish()
    }
}

/// How much the server takes on at once.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Admission")]
pub struct AdmissionSettings {
    /// Most sessions at once, across all clients (at least 1)
    #[arg(long, value_name = "N", env = "SANDBOX_MAX_SESSIONS",
          default_value_t = DEFAULT_MAX_SESSIONS, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_sessions: u64,
    /// Most memory sessions and pre-started workers may use together, as measured (PSS plus a
    /// quarter, at least each runtime's expected use; a session's memory cap is a limit, not a
    /// reservation). New sessions are also refused while the host's available memory is short
    /// (at least 32 MiB) [default: three quarters of RAM]
    #[arg(long, value_name = "BYTES", env = "SANDBOX_MEMORY_BUDGET_BYTES",
          value_parser = clap::value_parser!(u64).range(*MEMORY_RANGE.start()..))]
    pub memory_budget_bytes: Option<u64>,
    /// Idle workers started ahead of sessions, per runtime (RUNTIME=COUNT,…; 0 for none): a new
    /// session's first call then skips interpreter start-up
    #[arg(long, value_name = "SIZES", env = "SANDBOX_WORKER_POOL",
          default_value = DEFAULT_WORKER_POOL)]
    pub worker_pool: super::PoolSizes,
    /// Fork each runtime's workers from a fork server that has mapped the interpreter and
    /// instantiated its memory image (a new session's first call then skips process and
    /// interpreter start-up); false or 0: exec every worker [default: true]
    #[arg(long, value_name = "BOOL", env = "SANDBOX_FORK_SERVERS", default_value = "true",
          value_parser = off_for_zero_or_false, action = ArgAction::Set)]
    pub fork_servers: bool,
    /// Suspend a session idle this many seconds: its worker stops, its state stays on disk and
    /// its next call resumes it (0: only when memory is short for a new session)
    #[arg(long, value_name = "SECS", env = "SANDBOX_SUSPEND_IDLE_SECS",
          default_value_t = DEFAULT_SUSPEND_IDLE_SECS)]
    pub suspend_idle_secs: u64,
    /// Most sessions one HTTP client (a principal, or an MCP session without one) holds at once
    /// (at least 1)
    #[arg(long, value_name = "N", env = "SANDBOX_PRINCIPAL_MAX_SESSIONS",
          default_value_t = DEFAULT_PRINCIPAL_MAX, value_parser = clap::value_parser!(u64).range(1..))]
    pub principal_max_sessions: u64,
    /// Most executions one HTTP client has running or queued at once (at least 1)
    #[arg(long, value_name = "N", env = "SANDBOX_PRINCIPAL_MAX_EXECUTIONS",
          default_value_t = DEFAULT_PRINCIPAL_MAX, value_parser = clap::value_parser!(u64).range(1..))]
    pub principal_max_executions: u64,
}

/// The limits of a session that names no flavor (the small flavor's unless changed), and how
/// long idle sessions live.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Session defaults")]
pub struct SessionSettings {
    /// Interpreter memory cap of a default session (32 MiB–4 GiB)
    #[arg(long, value_name = "BYTES", env = "SANDBOX_DEFAULT_MEMORY_BYTES",
          default_value_t = Flavor::Small.spec().memory_bytes,
          value_parser = clap::value_parser!(u64).range(MEMORY_RANGE))]
    pub default_memory_bytes: u64,
    /// The least fuel (CPU budget) per execution of a default session; an execution gets more
    /// when its timeout needs it (10^6–5×10^12)
    #[arg(long, value_name = "FUEL", env = "SANDBOX_DEFAULT_FUEL",
          default_value_t = Flavor::Small.spec().fuel,
          value_parser = clap::value_parser!(u64).range(FUEL_RANGE))]
    pub default_fuel: u64,
    /// Wall-clock timeout of an execution that sets none, in seconds (1–300)
    #[arg(long, value_name = "SECS", env = "SANDBOX_DEFAULT_TIMEOUT_SECS",
          default_value_t = Flavor::Small.spec().timeout_secs,
          value_parser = clap::value_parser!(u64).range(TIMEOUT_SECS_RANGE))]
    pub default_timeout_secs: u64,
    /// Disk quota of a default session's /app and /tmp together, in bytes (1 MiB–16 TiB)
    #[arg(long, value_name = "BYTES", env = "SANDBOX_DEFAULT_DISK_QUOTA_BYTES",
          default_value_t = Flavor::Small.spec().disk_quota_bytes,
          value_parser = clap::value_parser!(u64).range(DISK_QUOTA_BYTES_RANGE))]
    pub default_disk_quota_bytes: u64,
    /// Files, directories and links a default session's /app and /tmp may hold together
    /// (10–10,000,000)
    #[arg(long, value_name = "N", env = "SANDBOX_DEFAULT_DISK_QUOTA_FILES",
          default_value_t = Flavor::Small.spec().disk_quota_files,
          value_parser = clap::value_parser!(u64).range(DISK_QUOTA_FILES_RANGE))]
    pub default_disk_quota_files: u64,
    /// Largest `code` or `command` argument accepted, in bytes (256–16 MiB)
    #[arg(long, value_name = "BYTES", env = "SANDBOX_MAX_CODE_BYTES",
          default_value_t = DEFAULT_MAX_CODE_BYTES as u64,
          value_parser = clap::value_parser!(u64).range(MAX_CODE_BYTES_RANGE))]
    pub max_code_bytes: u64,
    /// Idle seconds before a session made on demand (by execute_code) is stopped and deleted
    /// (1–2592000, 30 days)
    #[arg(long, value_name = "SECS", env = "SANDBOX_SESSION_TTL_SECS",
          default_value_t = DEFAULT_SESSION_TTL_SECS,
          value_parser = clap::value_parser!(u64).range(TTL_RANGE))]
    pub session_ttl_secs: u64,
    /// Idle seconds before a session made with create_session is stopped and deleted
    /// (1–2592000)
    #[arg(long, value_name = "SECS", env = "SANDBOX_EXPLICIT_SESSION_TTL_SECS",
          default_value_t = DEFAULT_EXPLICIT_SESSION_TTL_SECS,
          value_parser = clap::value_parser!(u64).range(TTL_RANGE))]
    pub explicit_session_ttl_secs: u64,
}

/// Where the server finds its parts and keeps its state.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Files and directories")]
pub struct PathSettings {
    /// The sandbox-worker binary [default: sandbox-worker next to sandbox-mcp]
    #[arg(long, value_name = "FILE", env = "SANDBOX_WORKER_BIN")]
    pub worker_bin: Option<PathBuf>,
    /// Directory holding the interpreters (the CPython and QuickJS .wasm files) [default:
    /// runtimes or ../runtimes next to sandbox-mcp]
    #[arg(long, value_name = "DIR", env = "SANDBOX_RUNTIME_DIR")]
    pub runtime_dir: Option<PathBuf>,
    /// Where the compiled interpreters (.cwasm) are cached [default: RUNTIME_DIR/cache]
    #[arg(long, value_name = "DIR", env = "SANDBOX_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Private (0700) directory of session workspaces, worker sockets and downloads; one per
    /// server [default: $TMPDIR/sandbox-mcp-<pid>]
    #[arg(long, value_name = "DIR", env = "SANDBOX_STATE_DIR")]
    pub state_dir: Option<PathBuf>,
    /// Keep the state directory at exit (the variable: set to anything but false, even empty)
    /// [default: off]
    #[arg(long, env = "SANDBOX_KEEP_STATE", action = ArgAction::SetTrue,
          value_parser = set_means_on)]
    pub keep_state: bool,
    /// Keep sessions across a restart of the server, even a SIGKILL: their variables, files
    /// and checkpoints stay in --state-dir (which must be set), and a new server on it
    /// resumes them for the same owner (the stdio client, a principal of the tokens file);
    /// on only for true or 1 (an opt-in: anything else keeps sessions ending with the server)
    /// [default: false]
    #[arg(long, value_name = "BOOL", env = "SANDBOX_DURABLE_SESSIONS", default_value = "false",
          value_parser = one_or_true, action = ArgAction::Set)]
    pub durable_sessions: bool,
    /// Read-only /data in every sandbox (vendored packages) [default: RUNTIME_DIR/data, if it
    /// exists]
    #[arg(long, value_name = "DIR", env = "SANDBOX_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// A host directory every sandbox sees at /shared, read-only unless --shared-writable
    /// [default: none]
    #[arg(long, value_name = "DIR", env = "SANDBOX_SHARED_DIR")]
    pub shared_dir: Option<PathBuf>,
    /// Let sandboxes write to /shared (the variable takes 1 or true) [default: off]
    #[arg(long, env = "SANDBOX_SHARED_WRITABLE", action = ArgAction::SetTrue,
          value_parser = one_or_true)]
    pub shared_writable: bool,
}

/// Where `install_package` may get packages from.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Packages")]
pub struct PackageSources {
    /// Directory of pure-Python wheels install_package may use, offline [default: none]
    #[arg(long, value_name = "DIR", env = "SANDBOX_WHEELHOUSE")]
    pub wheelhouse: Option<PathBuf>,
    /// Let install_package download pure-Python wheels from PyPI, through the server (the
    /// variable takes 1 or true) [default: off]
    #[arg(long = "allow-pypi", env = "SANDBOX_ALLOW_PYPI", action = ArgAction::SetTrue,
          value_parser = one_or_true)]
    pub index: bool,
    /// Directory of pure-JavaScript packages install_package may copy into a session
    /// [default: none]
    #[arg(long, value_name = "DIR", env = "SANDBOX_JS_PACKAGES")]
    pub js_packages: Option<PathBuf>,
}

/// The worker's own jail layers: seccomp, landlock, netns, nproc, fds.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Worker jail")]
pub struct JailSettings {
    /// Jail layers every worker must have, comma-separated (seccomp, landlock, netns, nproc,
    /// fds): without one, no worker starts [default: none, best effort]
    #[arg(long, value_name = "LAYERS", env = "SANDBOX_REQUIRE", value_parser = LayerSet::parse)]
    pub require: Option<LayerSet>,
    /// Jail layers to turn off, comma-separated (e.g. on a kernel where one misbehaves)
    /// [default: none]
    #[arg(long, value_name = "LAYERS", env = "SANDBOX_JAIL_DISABLE",
          value_parser = LayerSet::parse)]
    pub jail_disable: Option<LayerSet>,
}

/// Settings only the end-to-end tests use; `-h` leaves them out, `--help` shows them.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Testing only")]
pub struct TestSettings {
    /// What every worker runs
    #[arg(long, value_name = "ENTRY", env = "SANDBOX_WORKER_ENTRY", value_enum,
          default_value_t = WorkerEntry::Serve, hide_short_help = true)]
    pub worker_entry: WorkerEntry,
    /// What a jail-probe worker attacks (JSON); given to probes only [default: none]
    #[arg(
        long,
        value_name = "JSON",
        env = "SANDBOX_PROBE_TARGETS",
        hide_short_help = true
    )]
    pub probe_targets: Option<OsString>,
}

impl Settings {
    /// Parses `args` (the program name first) and the `SANDBOX_*` environment.
    ///
    /// # Errors
    /// A malformed or out-of-bounds value, an unknown flag, or a request for `--help` or
    /// `--version` (whose text the error carries; `clap::Error::exit` prints it).
    /// The configuration file (`--config`, `SANDBOX_CONFIG`) is read between two parses: the
    /// first finds it (and ends `--help` and malformed flags early), the second parses with the
    /// file's values as the options' defaults, so a flag or variable still wins.
    pub fn try_parse_args<I, T>(args: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        let mut command = Settings::command_line();
        let matches = parse_matches(&mut command, &args)?;
        let Some(path) = matches.get_one::<PathBuf>("config") else {
            return Settings::from_matches(&mut command, &matches, None);
        };
        let file = ConfigFile::read(path, &command).map_err(|e| {
            clap::Error::raw(clap::error::ErrorKind::InvalidValue, e.to_string())
                .format(&mut command)
        })?;
        let mut command = file.apply(Settings::command_line());
        let matches = parse_matches(&mut command, &args)?;
        Settings::from_matches(&mut command, &matches, Some(&file))
    }

    /// The command line as parsed: every option is global, so it works before or after a
    /// subcommand (`sandbox-mcp check-config --http ...`), and empty variables count as unset.
    pub fn command_line() -> clap::Command {
        empty_variables_unset(Settings::command().mut_args(|arg| arg.global(true)))
    }

    fn from_matches(
        command: &mut clap::Command,
        matches: &clap::ArgMatches,
        file: Option<&ConfigFile>,
    ) -> Result<Self, clap::Error> {
        let mut settings = Settings::from_arg_matches(matches).map_err(|e| e.format(command))?;
        settings.provenance = Provenance::record(command, matches, file);
        Ok(settings)
    }

    /// The settings of the environment alone (no command-line flags).
    ///
    /// # Errors
    /// As [`Settings::try_parse_args`].
    pub fn from_env() -> Result<Self, clap::Error> {
        Settings::try_parse_args(["sandbox-mcp"])
    }
}

/// One parse of `args`; a bad value that came from a variable names the variable.
fn parse_matches(
    command: &mut clap::Command,
    args: &[OsString],
) -> Result<clap::ArgMatches, clap::Error> {
    command
        .try_get_matches_from_mut(args.iter().cloned())
        .map_err(|e| name_the_variable(e, command, args))
}

/// An empty variable has always meant "unset" (`SANDBOX_STATE_DIR=` picks the default); clap
/// would parse it as an empty value. Switches are exempt: for them presence is the value.
fn empty_variables_unset(command: clap::Command) -> clap::Command {
    command.mut_args(|arg| {
        let empty = arg
            .get_env()
            .is_some_and(|name| std::env::var_os(name).is_some_and(|v| v.is_empty()));
        if empty && arg.get_action().takes_values() {
            arg.env(None)
        } else {
            arg
        }
    })
}

/// clap names the flag a bad value was given for. When the flag is not on the command line, the
/// value came from its variable, which is what the operator set: say so.
fn name_the_variable(
    mut error: clap::Error,
    command: &clap::Command,
    args: &[OsString],
) -> clap::Error {
    use clap::error::{ContextKind, ContextValue};
    let Some(ContextValue::String(invalid)) = error.get(ContextKind::InvalidArg) else {
        return error;
    };
    let flag = invalid
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_owned();
    let given = args.iter().filter_map(|a| a.to_str()).any(|a| {
        a == flag
            || a.strip_prefix(flag.as_str())
                .is_some_and(|rest| rest.starts_with('='))
    });
    let variable = command
        .get_arguments()
        .find(|arg| {
            arg.get_long()
                .is_some_and(|long| flag == format!("--{long}"))
        })
        .and_then(|arg| arg.get_env())
        .map(|name| name.to_string_lossy().into_owned());
    if let (false, Some(variable)) = (given, variable) {
        let tip = format!("the value comes from the environment variable {variable}");
        error.insert(
            ContextKind::Suggested,
            ContextValue::StyledStrs(vec![tip.into()]),
        );
    }
    error
}

/// A switch variable that is on when set, even to nothing. Only `false`, which clap itself
/// passes for an absent switch, is off.
fn set_means_on(value: &str) -> Result<bool, Infallible> {
    Ok(value != "false")
}

/// A switch that is on unless it is `0` or `false`.
fn off_for_zero_or_false(value: &str) -> Result<bool, Infallible> {
    Ok(!matches!(value, "0" | "false"))
}

/// A switch variable that is on only for `1` or `true` (anything else is off).
fn one_or_true(value: &str) -> Result<bool, Infallible> {
    Ok(value == "1" || value == "true")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Settings, clap::Error> {
        Settings::try_parse_args(std::iter::once("sandbox-mcp").chain(args.iter().copied()))
    }

    #[test]
    fn the_definition_is_consistent() {
        Settings::command().debug_assert();
    }

    #[test]
    fn defaults_are_the_small_flavor_and_the_documented_numbers() {
        let s = parse(&[]).unwrap();
        assert_eq!(s.transport.http, None);
        assert_eq!(s.session.default_memory_bytes, 1 << 30);
        assert_eq!(s.session.default_fuel, 10_000_000_000);
        assert_eq!(s.session.default_timeout_secs, 30);
        assert_eq!(s.session.default_disk_quota_bytes, 1 << 30);
        assert_eq!(s.session.default_disk_quota_files, 20_000);
        assert_eq!(s.session.max_code_bytes, 1 << 20);
        assert_eq!(
            (
                s.session.session_ttl_secs,
                s.session.explicit_session_ttl_secs
            ),
            (3600, 86400)
        );
        assert_eq!(s.admission.max_sessions, 256);
        assert_eq!(s.admission.memory_budget_bytes, None);
        assert_eq!(s.admission.worker_pool, crate::config::PoolSizes::default());
        assert_eq!(s.admission.suspend_idle_secs, 300);
        assert_eq!(
            (
                s.admission.principal_max_sessions,
                s.admission.principal_max_executions
            ),
            (16, 16)
        );
        assert!(!s.paths.keep_state && !s.paths.shared_writable && !s.packages.index);
        assert_eq!((s.jail.require, s.jail.jail_disable), (None, None));
        assert_eq!(s.testing.worker_entry, WorkerEntry::Serve);
    }

    #[test]
    fn flags_set_what_the_variables_set() {
        let s = parse(&[
            "--http",
            "127.0.0.1:8765",
            "--max-code-bytes",
            "1000",
            "--require",
            "seccomp,landlock",
            "--allow-pypi",
            "--shared-writable",
            "--worker-entry",
            "jail-probe",
        ])
        .unwrap();
        assert_eq!(s.transport.http, Some("127.0.0.1:8765".parse().unwrap()));
        assert_eq!(s.session.max_code_bytes, 1000);
        assert_eq!(
            s.jail.require,
            Some(LayerSet::parse("landlock,seccomp").unwrap())
        );
        assert!(s.packages.index && s.paths.shared_writable);
        assert_eq!(s.testing.worker_entry, WorkerEntry::JailProbe);
    }

    #[test]
    fn out_of_bounds_values_are_refused_with_the_flag_and_the_bounds() {
        for (flag, value) in [
            ("--max-code-bytes", "10"),
            ("--default-disk-quota-bytes", "1000"),
            ("--default-disk-quota-files", "5"),
            ("--session-ttl-secs", "0"),
            ("--explicit-session-ttl-secs", "99999999999"),
            ("--default-memory-bytes", "1024"),
            ("--default-fuel", "1"),
            ("--default-timeout-secs", "301"),
            ("--max-sessions", "0"),
        ] {
            let error = parse(&[flag, value]).unwrap_err().to_string();
            assert!(
                error.contains(flag) && error.contains(value),
                "{flag}: {error}"
            );
            assert!(error.contains("not in"), "{flag}: {error}");
        }
        let error = parse(&["--max-sessions", "many"]).unwrap_err().to_string();
        assert!(error.contains("invalid digit"), "{error}");
        let error = parse(&["--require", "seccomp,teleport"])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("--require") && error.contains("teleport"),
            "{error}"
        );
        let error = parse(&["--http", "localhost"]).unwrap_err().to_string();
        assert!(error.contains("--http"), "{error}");
        let error = parse(&["--worker-pool", "python=2,ruby=1"])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("--worker-pool") && error.contains("unknown runtime \"ruby\""),
            "{error}"
        );
        let pool = parse(&["--worker-pool", "javascript=4"]).unwrap();
        assert_eq!(pool.admission.worker_pool.to_string(), "javascript=4");
    }

    #[test]
    fn a_bad_value_from_a_variable_names_the_variable() {
        let error = parse(&["--max-code-bytes", "10"]).unwrap_err();
        assert!(!error.to_string().contains("environment"), "{error}");
        // The same error, had the value come from the environment (no flag on the line).
        let from_env = name_the_variable(error, &Settings::command(), &["sandbox-mcp".into()]);
        let text = from_env.to_string();
        assert!(
            text.contains("--max-code-bytes") && text.contains("10 is not in"),
            "{text}"
        );
        assert!(
            text.contains("environment variable SANDBOX_MAX_CODE_BYTES"),
            "{text}"
        );
    }

    #[test]
    fn help_names_every_variable_and_hides_the_token() {
        let command = Settings::command();
        let help = command.clone().render_long_help().to_string();
        // Every option has its variable; the README's table checks their names.
        for arg in command.get_arguments() {
            let variable = arg.get_env().map(|v| v.to_string_lossy().into_owned());
            let variable = variable.unwrap_or_else(|| panic!("{:?} has no variable", arg.get_id()));
            assert!(
                help.contains(&format!("[env: {variable}")),
                "{variable} missing:\n{help}"
            );
        }
        assert!(help.contains("[env: SANDBOX_HTTP_TOKEN]"), "no value shown");
        assert!(help.contains("check-config") && help.contains("--config <FILE>"));
        for heading in [
            "Transport:",
            "Admission:",
            "Session defaults:",
            "Worker jail:",
        ] {
            assert!(help.contains(heading), "{heading}");
        }
        let short = Settings::command().render_help().to_string();
        assert!(
            !short.contains("SANDBOX_PROBE_TARGETS"),
            "tests-only settings stay out of -h"
        );
    }

    #[test]
    fn switch_variables_keep_their_meaning() {
        assert_eq!(one_or_true("1"), Ok(true));
        assert_eq!(one_or_true("true"), Ok(true));
        for off in ["", "0", "false", "yes"] {
            assert_eq!(one_or_true(off), Ok(false), "{off:?}");
        }
        assert_eq!(set_means_on(""), Ok(true));
        assert_eq!(set_means_on("1"), Ok(true));
        assert_eq!(set_means_on("false"), Ok(false));
    }

    #[test]
    fn durable_sessions_are_on_only_when_asked_for_plainly() {
        let durable = |value: &str| {
            parse(&["--durable-sessions", value])
                .unwrap()
                .paths
                .durable_sessions
        };
        assert!(durable("true") && durable("1"));
        for off in ["false", "0", "off", "no", ""] {
            assert!(!durable(off), "{off:?} turned durable sessions on");
        }
        assert!(!parse(&[]).unwrap().paths.durable_sessions);
    }
}
