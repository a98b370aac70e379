//! What the supervisor runs with. [`Settings`] are the command-line flags, `SANDBOX_*`
//! variables and configuration-file keys as an operator gives them (all in [`settings`], which
//! `--help` renders; the file layer in [`file`], where each value came from in [`provenance`]);
//! [`SupervisorConfig`] is what they resolve to at start-up, once the worker binary and the
//! interpreters are found, the state directory is made, and the host's cgroup and jail support
//! are detected. `sandbox-mcp check-config` (the `check_config` module, above the transports
//! whose settings it checks too) checks the same resolution beforehand, reporting every problem
//! at once. [`SessionLimits`] and the bounds of
//! every limit live in [`limits`]; the session sizes themselves are the protocol's flavor table
//! ([`Flavor`], [`FlavorSpec`]).

#[cfg(test)]
mod documentation;
mod file;
mod limits;
mod pool_sizes;
mod provenance;
mod settings;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use file::{ConfigFile, FileError, FileProblem};
pub use limits::{
    DEFAULT_MAX_CODE_BYTES, DISK_QUOTA_BYTES_RANGE, DISK_QUOTA_FILES_RANGE, FUEL_RANGE,
    HTTP_CONNECTIONS_RANGE, HTTP_HEADER_TIMEOUT_SECS_RANGE, HTTP_IDLE_TIMEOUT_SECS_RANGE,
    MAX_CODE_BYTES_RANGE, MAX_TIMEOUT, MEMORY_RANGE, SessionLimits, TIMEOUT_SECS_RANGE, TTL_RANGE,
    default_execution_fuel, flavor_execution_fuel, max_message_bytes,
};
pub use pool_sizes::PoolSizes;
pub use provenance::{Effective, MASK, Provenance, Source};
pub use sandbox_protocol::{Flavor, FlavorSpec};
pub use settings::{
    AdmissionSettings, DEFAULT_EXPLICIT_SESSION_TTL_SECS, DEFAULT_HTTP_HEADER_TIMEOUT_SECS,
    DEFAULT_HTTP_IDLE_TIMEOUT_SECS, DEFAULT_HTTP_MAX_CONNECTIONS,
    DEFAULT_HTTP_MAX_CONNECTIONS_PER_PEER, DEFAULT_MAX_SESSIONS, DEFAULT_PRINCIPAL_MAX,
    DEFAULT_SESSION_TTL_SECS, JailSettings, LogFormat, PackageSources, PathSettings,
    SessionSettings, Settings, Task, TestSettings, TransportSettings,
};

use sandbox_protocol::{JailReport, LayerSet};

use crate::cgroup::CgroupSupport;
use crate::jail_layers::{self, JailPolicy, WorkerEntry};

/// Where the shared volume (`SANDBOX_SHARED_DIR`) appears inside every sandbox.
pub const SHARED_GUEST_PATH: &str = "/shared";

/// The state directory's parts. Sessions live in `sessions/<id>.<nonce>/{app,tmp}`: a fresh
/// directory for every session, so a recreated id never finds an old session's files.
pub const STATE_SESSIONS: &str = "sessions";
/// Worker sockets (`<nonce>.<generation>.sock`), short enough for `sun_path`.
pub const STATE_SOCKETS: &str = "sockets";
/// Server-owned scratch: package downloads and unpacked wheels before they move into a session.
pub const STATE_STAGING: &str = "staging";
/// An empty directory, preopened read-only where a worker started from a memory image expects
/// a directory this server does not have (`/data`, the shared volume).
pub const STATE_EMPTY: &str = "empty";

/// Everything the supervisor needs to know at start-up, resolved and checked.
#[derive(Debug, Clone)]
pub struct SupervisorConfig {
    pub worker_bin: PathBuf,
    /// Holds every [`Language::wasm_file_name`].
    pub runtime_dir: PathBuf,
    /// Where the precompiled `.cwasm` files go.
    pub cache_dir: PathBuf,
    /// Private (0700) directory holding worker sockets and session workspaces; removed at
    /// shutdown unless [`SupervisorConfig::keep_state`].
    pub state_dir: PathBuf,
    /// Leave the state directory behind at shutdown (for debugging).
    pub keep_state: bool,
    /// Sessions of owners who can come back (the stdio client, named principals) outlive the
    /// server: their directories stay in the state directory, each with its record, and the
    /// next server resumes them (`session::durable`).
    pub durable_sessions: bool,
    pub defaults: SessionLimits,
    /// Read-only `/data` in every sandbox (vendored packages under `site-packages/`).
    pub data_dir: Option<PathBuf>,
    /// The shared volume every sandbox sees at [`SHARED_GUEST_PATH`], and whether it is writable.
    pub shared_dir: Option<(PathBuf, bool)>,
    /// Idle time after which a session created on demand (by `execute_code`) is stopped and
    /// its workspace removed.
    pub session_ttl: Duration,
    /// The same for sessions made with `create_session` (the seed suggests 24 h).
    pub explicit_session_ttl: Duration,
    /// Admission: most sessions at once.
    pub max_sessions: usize,
    /// Admission: what sessions and pooled workers use, as measured, may not exceed this.
    pub memory_budget: u64,
    /// Idle pre-started workers per runtime.
    pub worker_pool: PoolSizes,
    /// Start workers by forking them from a fork server per runtime (`SANDBOX_FORK_SERVERS`).
    pub fork_servers: bool,
    /// Sessions idle this long are suspended: their workers stop, their state stays on disk
    /// and their next call resumes it. `None`: only when memory is short for a new session.
    pub suspend_idle: Option<Duration>,
    /// Whether workers get their own cgroup.
    pub cgroups: CgroupSupport,
    /// Caps per HTTP client (a named principal, or one MCP session): sessions at once.
    pub principal_max_sessions: usize,
    /// Caps per HTTP client: executions in flight (running or queued) at once.
    pub principal_max_executions: usize,
    /// Largest `code` / `command` argument accepted (`SANDBOX_MAX_CODE_BYTES`).
    pub max_code_bytes: usize,
    /// The layers of the worker's own jail: detected, required, turned off (`jail_layers`).
    pub jail: JailPolicy,
    /// Where `install_package` may get packages.
    pub packages: PackageSources,
    /// The log filter (`RUST_LOG`) as the supervisor got it: the only variable of its
    /// environment its children (workers, precompile, jail check) are given.
    pub log_filter: Option<String>,
}

/// Why the configuration is unusable.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A flag or variable is malformed or out of bounds (clap's message names it).
    #[error("{0}")]
    Settings(#[from] clap::Error),
    #[error("cannot locate the sandbox-mcp executable")]
    CurrentExe(#[source] std::io::Error),
    #[error(
        "worker binary not found at {0}; build it (cargo build --release) or set SANDBOX_WORKER_BIN"
    )]
    WorkerMissing(PathBuf),
    #[error(
        "no runtime directory with {file} found (looked in {looked}); run runtimes/prepare.sh or set SANDBOX_RUNTIME_DIR"
    )]
    RuntimesMissing { file: &'static str, looked: String },
    #[error("cannot create the state directory {path}")]
    StateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "durable sessions (SANDBOX_DURABLE_SESSIONS) need a state directory of their own that outlives the server: set SANDBOX_STATE_DIR (--state-dir)"
    )]
    DurableWithoutStateDir,
    #[error("SANDBOX_SHARED_DIR {0} is not a directory")]
    SharedMissing(PathBuf),
}

impl SupervisorConfig {
    /// The configuration the `SANDBOX_*` environment alone describes (no command-line flags);
    /// see [`SupervisorConfig::from_settings`].
    ///
    /// # Errors
    /// See [`SupervisorConfig::from_settings`]; also a malformed or out-of-bounds variable.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_settings(&Settings::from_env()?)
    }

    /// Resolves `settings`: falls back to the layout of a cargo build (`target/release/
    /// sandbox-mcp` next to `sandbox-worker`, interpreters in `target/runtimes`), creates the
    /// state directory, runs `sandbox-worker jail-check` and detects cgroup delegation.
    ///
    /// # Errors
    /// When the worker or the interpreters cannot be found, the state directory cannot be made,
    /// or the shared directory does not exist.
    pub fn from_settings(settings: &Settings) -> Result<Self, ConfigError> {
        let paths = &settings.paths;
        let exe = std::env::current_exe().map_err(ConfigError::CurrentExe)?;
        let exe_dir = exe.parent().unwrap_or(Path::new("/")).to_path_buf();
        let worker_bin =
            absolute((paths.worker_bin.clone()).unwrap_or_else(|| exe_dir.join("sandbox-worker")));
        if !worker_bin.is_file() {
            return Err(ConfigError::WorkerMissing(worker_bin));
        }
        let runtime_dir = absolute(find_runtime_dir(paths.runtime_dir.as_deref(), &exe_dir)?);
        if paths.durable_sessions && paths.state_dir.is_none() {
            return Err(ConfigError::DurableWithoutStateDir);
        }
        let state_dir = absolute(paths.state_dir.clone().unwrap_or_else(|| {
            std::env::temp_dir().join(format!("sandbox-mcp-{}", std::process::id()))
        }));
        create_private_dir(&state_dir)?;
        let shared_dir = match &paths.shared_dir {
            Some(dir) if !dir.is_dir() => return Err(ConfigError::SharedMissing(dir.clone())),
            Some(dir) => Some((absolute(dir.clone()), paths.shared_writable)),
            None => None,
        };
        let log_filter = settings.transport.log.clone();
        let detected = jail_layers::detect(&worker_bin, log_filter.as_deref());
        let mut config = Self::new(worker_bin, runtime_dir, state_dir);
        config.apply_settings(settings);
        config.cache_dir = absolute(config.cache_dir);
        config.data_dir = config.data_dir.map(absolute);
        config.shared_dir = shared_dir;
        config.log_filter = log_filter;
        config.jail.detected = detected;
        config.cgroups = CgroupSupport::detect();
        Ok(config)
    }

    /// A configuration with every default and nothing looked up or detected: no cgroups, no
    /// jail layers, no `/data`, no shared volume. For tests and embedders, who change the
    /// fields they care about.
    pub fn new(worker_bin: PathBuf, runtime_dir: PathBuf, state_dir: PathBuf) -> Self {
        let no_jail = JailPolicy::new(
            JailReport::default(),
            LayerSet::EMPTY,
            LayerSet::EMPTY,
            WorkerEntry::Serve,
        );
        Self {
            worker_bin,
            cache_dir: runtime_dir.join("cache"),
            runtime_dir,
            state_dir,
            keep_state: false,
            durable_sessions: false,
            defaults: SessionLimits::default(),
            data_dir: None,
            shared_dir: None,
            session_ttl: Duration::from_secs(DEFAULT_SESSION_TTL_SECS),
            explicit_session_ttl: Duration::from_secs(DEFAULT_EXPLICIT_SESSION_TTL_SECS),
            max_sessions: count(DEFAULT_MAX_SESSIONS),
            memory_budget: default_memory_budget(),
            worker_pool: PoolSizes::none(),
            fork_servers: false,
            suspend_idle: None,
            cgroups: CgroupSupport::Unavailable {
                reason: "not detected".into(),
            },
            principal_max_sessions: count(DEFAULT_PRINCIPAL_MAX),
            principal_max_executions: count(DEFAULT_PRINCIPAL_MAX),
            max_code_bytes: DEFAULT_MAX_CODE_BYTES,
            jail: no_jail,
            packages: PackageSources::default(),
            log_filter: None,
        }
    }

    /// Takes over every setting that needs no lookup (the paths are resolved by the caller).
    fn apply_settings(&mut self, settings: &Settings) {
        let (session, admission) = (&settings.session, &settings.admission);
        let paths = &settings.paths;
        self.defaults = SessionLimits {
            memory_bytes: session.default_memory_bytes,
            fuel: session.default_fuel,
            timeout: Duration::from_secs(session.default_timeout_secs),
            disk_quota_bytes: session.default_disk_quota_bytes,
            disk_quota_files: session.default_disk_quota_files,
            ..SessionLimits::default()
        };
        self.max_code_bytes = count(session.max_code_bytes);
        self.session_ttl = Duration::from_secs(session.session_ttl_secs);
        self.explicit_session_ttl = Duration::from_secs(session.explicit_session_ttl_secs);
        self.max_sessions = count(admission.max_sessions);
        if let Some(budget) = admission.memory_budget_bytes {
            self.memory_budget = budget;
        }
        self.worker_pool = admission.worker_pool.clone();
        self.fork_servers = admission.fork_servers;
        self.suspend_idle = (admission.suspend_idle_secs > 0)
            .then(|| Duration::from_secs(admission.suspend_idle_secs));
        self.principal_max_sessions = count(admission.principal_max_sessions);
        self.principal_max_executions = count(admission.principal_max_executions);
        if let Some(cache) = &paths.cache_dir {
            self.cache_dir = cache.clone();
        }
        self.keep_state = paths.keep_state;
        self.durable_sessions = paths.durable_sessions;
        let data_dir = (paths.data_dir.clone()).unwrap_or_else(|| self.runtime_dir.join("data"));
        self.data_dir = data_dir.is_dir().then_some(data_dir);
        self.packages = settings.packages.clone();
        let jail = &settings.jail;
        self.jail.required = jail.require.unwrap_or_default();
        self.jail.disabled = jail.jail_disable.unwrap_or_default();
        self.jail.entry = settings.testing.worker_entry;
        self.jail.probe_targets = settings.testing.probe_targets.clone();
    }

    /// Where a worker's socket lives while it connects: named by the session's directory key
    /// (never by a client-chosen id, which two clients may share).
    pub fn socket_path(&self, key: &str, generation: u64) -> PathBuf {
        self.state_dir
            .join(STATE_SOCKETS)
            .join(format!("{key}.{generation}.sock"))
    }
}

/// `path` from the supervisor's working directory, taken once at start-up: a worker runs in its
/// workspace, where a relative path would name something else. (Left as is in the unlikely
/// case the working directory is gone; the spawn plan then refuses it.)
pub(crate) fn absolute(path: PathBuf) -> PathBuf {
    std::path::absolute(&path).unwrap_or(path)
}

/// A count from the settings as the server uses it (they are far below `usize::MAX` on any
/// host this runs on; saturating keeps a 32-bit build honest).
fn count(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

/// The given runtime directory, or the first of `runtimes` and `../runtimes` next to the
/// executable, that holds the Python interpreter.
pub(crate) fn find_runtime_dir(
    given: Option<&Path>,
    exe_dir: &Path,
) -> Result<PathBuf, ConfigError> {
    let file = sandbox_protocol::Runtime::Python.wasm_file_name();
    let candidates: Vec<PathBuf> = match given {
        Some(dir) => vec![dir.to_path_buf()],
        None => vec![exe_dir.join("runtimes"), exe_dir.join("../runtimes")],
    };
    candidates
        .iter()
        .find(|d| d.join(file).is_file())
        .cloned()
        .ok_or_else(|| ConfigError::RuntimesMissing {
            file,
            looked: candidates
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// Three quarters of the machine's memory (the rest is for the supervisor, the page cache and
/// everything else on the host); 4 GiB when /proc/meminfo cannot be read.
fn default_memory_budget() -> u64 {
    let total_kib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        });
    total_kib.map_or(4 << 30, |kib| kib * 1024 / 4 * 3)
}

/// Creates `path` (and parents) with mode 0700: sockets and workspaces are nobody else's.
///
/// # Errors
/// When the directory cannot be created or its mode set.
pub fn create_private_dir(path: &Path) -> Result<(), ConfigError> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let wrap = |source| ConfigError::StateDir {
        path: path.to_path_buf(),
        source,
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
        .map_err(wrap)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700)).map_err(wrap)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(args: &[&str]) -> Settings {
        Settings::try_parse_args(std::iter::once("sandbox-mcp").chain(args.iter().copied()))
            .unwrap()
    }

    fn config(args: &[&str]) -> SupervisorConfig {
        let mut config = SupervisorConfig::new("/w".into(), "/r".into(), "/s".into());
        config.apply_settings(&settings(args));
        config
    }

    #[test]
    fn settings_become_the_default_limits_and_caps() {
        let config = config(&[
            "--default-memory-bytes",
            "67108864",
            "--default-timeout-secs",
            "300",
            "--default-disk-quota-files",
            "200",
            "--max-code-bytes",
            "1000",
            "--session-ttl-secs",
            "1",
            "--max-sessions",
            "2",
            "--memory-budget-bytes",
            "17592186044416",
            "--principal-max-executions",
            "1",
            "--cache-dir",
            "/c",
        ]);
        let d = &config.defaults;
        assert_eq!((d.memory_bytes, d.timeout), (64 << 20, MAX_TIMEOUT));
        assert_eq!((d.disk_quota_files, d.disk_quota_bytes), (200, 1 << 30));
        assert_eq!(
            (d.flavor, d.cpus, d.fuel),
            (Flavor::Small, 1, 10_000_000_000)
        );
        assert_eq!(d.disk_bytes, Flavor::Small.spec().disk_file_bytes);
        assert_eq!(config.max_code_bytes, 1000);
        assert_eq!(config.session_ttl, Duration::from_secs(1));
        assert_eq!(config.explicit_session_ttl, Duration::from_secs(86400));
        assert_eq!((config.max_sessions, config.memory_budget), (2, 1 << 44));
        assert_eq!(
            (
                config.principal_max_sessions,
                config.principal_max_executions
            ),
            (16, 1)
        );
        assert_eq!(config.cache_dir, Path::new("/c"));
    }

    #[test]
    fn without_settings_the_defaults_are_the_small_flavor() {
        let config = config(&[]);
        assert_eq!(config.defaults, SessionLimits::from(Flavor::Small));
        assert_eq!(config.cache_dir, Path::new("/r/cache"));
        assert_eq!(config.memory_budget, default_memory_budget());
        assert!(config.memory_budget > 0);
        assert_eq!(config.data_dir, None, "no /r/data on this host");
        assert!(!config.keep_state);
    }

    #[test]
    fn jail_and_package_settings_reach_their_readers() {
        let config = config(&[
            "--require",
            "seccomp",
            "--jail-disable",
            "netns",
            "--worker-entry",
            "jail-probe",
            "--probe-targets",
            "{}",
            "--wheelhouse",
            "/wheels",
            "--allow-pypi",
            "--keep-state",
        ]);
        assert_eq!(config.jail.required, LayerSet::parse("seccomp").unwrap());
        assert_eq!(config.jail.disabled, LayerSet::parse("netns").unwrap());
        assert_eq!(config.jail.entry, WorkerEntry::JailProbe);
        assert_eq!(config.jail.probe_targets.as_deref(), Some("{}".as_ref()));
        assert_eq!(
            config.packages.wheelhouse.as_deref(),
            Some(Path::new("/wheels"))
        );
        assert!(config.packages.index && config.keep_state);
    }

    #[test]
    fn a_data_dir_is_used_only_when_it_exists() {
        let runtimes = tempfile::tempdir().unwrap();
        std::fs::create_dir(runtimes.path().join("data")).unwrap();
        let mut config =
            SupervisorConfig::new("/w".into(), runtimes.path().to_path_buf(), "/s".into());
        config.apply_settings(&settings(&[]));
        assert_eq!(config.data_dir, Some(runtimes.path().join("data")));
        config.apply_settings(&settings(&["--data-dir", "/nonexistent/data"]));
        assert_eq!(config.data_dir, None);
    }

    #[test]
    fn the_runtime_directory_is_the_one_holding_python() {
        let root = tempfile::tempdir().unwrap();
        let (runtimes, exe_dir) = (root.path().join("runtimes"), root.path().join("release"));
        std::fs::create_dir(&runtimes).unwrap();
        std::fs::create_dir(&exe_dir).unwrap();
        let missing = find_runtime_dir(Some(&runtimes), &exe_dir).unwrap_err();
        let wanted = sandbox_protocol::Runtime::Python.wasm_file_name();
        assert!(missing.to_string().contains(wanted), "{missing}");
        let wasm = runtimes.join(wanted);
        std::fs::create_dir_all(wasm.parent().unwrap()).unwrap();
        std::fs::write(&wasm, b"").unwrap();
        assert_eq!(
            find_runtime_dir(Some(&runtimes), &exe_dir).unwrap(),
            runtimes
        );
        // A cargo build: target/release/sandbox-mcp, interpreters in target/runtimes.
        assert_eq!(
            find_runtime_dir(None, &exe_dir).unwrap(),
            exe_dir.join("../runtimes")
        );
    }
}
