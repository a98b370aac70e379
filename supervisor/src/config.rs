//! Where the supervisor finds its worker binary and interpreters, where it keeps sockets and
//! workspaces, and the default limits of a session. Read once at start-up from the environment.

use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Session sizes (from the seed: small 1 CPU / 1 GiB, medium 2 CPU / 2 GiB, large 4 CPU /
/// 4 GiB). A flavor sets every limit of a session; explicit arguments override single limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Flavor {
    #[default]
    Small,
    Medium,
    Large,
}

impl Flavor {
    pub const ALL: [Flavor; 3] = [Flavor::Small, Flavor::Medium, Flavor::Large];

    pub fn name(self) -> &'static str {
        match self {
            Flavor::Small => "small",
            Flavor::Medium => "medium",
            Flavor::Large => "large",
        }
    }

    /// The limits of a session of this flavor.
    ///
    /// "CPU" is a share of the machine, not a thread count: guest code always runs on one
    /// thread. With delegated cgroup v2 it is the worker's `cpu.max` quota (N × 100 ms per
    /// 100 ms); without cgroups it scales the per-execution fuel budget (CPU time allowance)
    /// and the RLIMIT_CPU backstop.
    pub fn limits(self) -> SessionLimits {
        let (cpus, gib, fuel, timeout, output, disk) = match self {
            Flavor::Small => (1, 1, 10_000_000_000, 30, 1 << 20, 256 << 20),
            Flavor::Medium => (2, 2, 50_000_000_000, 60, 4 << 20, 1 << 30),
            Flavor::Large => (4, 4, 200_000_000_000, 120, 16 << 20, 4 << 30),
        };
        // The disk quota of /app and /tmp together: bytes, and files + directories + links.
        let (quota_gib, quota_files) = match self {
            Flavor::Small => (1, 20_000),
            Flavor::Medium => (4, 50_000),
            Flavor::Large => (16, 100_000),
        };
        SessionLimits {
            flavor: self,
            cpus,
            memory_bytes: gib << 30,
            fuel,
            timeout: Duration::from_secs(timeout),
            stdout_cap: output,
            stderr_cap: output,
            disk_bytes: disk,
            disk_quota_bytes: quota_gib << 30,
            disk_quota_files: quota_files,
            auto_persist_globals: false,
        }
    }
}

/// Limits of one session. Every execution of the session runs under them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionLimits {
    /// The flavor these limits started from.
    pub flavor: Flavor,
    /// CPU share (see [`Flavor::limits`]).
    pub cpus: u32,
    /// Memory cap of the interpreter (WebAssembly linear memory, at most 4 GiB).
    pub memory_bytes: u64,
    /// Fuel per execution (about 10^10 per second of CPU).
    pub fuel: u64,
    /// Default wall-clock timeout of an execution.
    pub timeout: Duration,
    pub stdout_cap: usize,
    pub stderr_cap: usize,
    /// Largest file the session may write (RLIMIT_FSIZE of its worker).
    pub disk_bytes: u64,
    /// Most bytes the session's files in /app and /tmp may hold together (its disk quota,
    /// enforced by the worker).
    pub disk_quota_bytes: u64,
    /// Most files, directories and links /app and /tmp may hold together.
    pub disk_quota_files: u64,
    /// Save the session's variables after each success and restore them after a restart.
    pub auto_persist_globals: bool,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Flavor::default().limits()
    }
}

/// Bounds for `memory_bytes`: below 32 MiB CPython cannot start; 4 GiB is all a 32-bit
/// WebAssembly memory can address.
pub const MEMORY_RANGE: std::ops::RangeInclusive<u64> = (32 << 20)..=(4 << 30);

/// The longest timeout an execution may ask for. MCP clients give up on a request after a few
/// minutes; an execution must finish (or be stopped) well before that.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(300);

/// Bounds for `fuel_budget`: below 10^6 not even an empty cell runs; above 5×10^12 (about
/// 500 s of CPU) the budget could never be spent within [`MAX_TIMEOUT`].
pub const FUEL_RANGE: std::ops::RangeInclusive<u64> = 1_000_000..=5_000_000_000_000;

/// Bounds for `ttl_seconds`: at most 30 days idle. The expiry is a date: an unbounded TTL
/// overflowed the date arithmetic and hung the request.
pub const TTL_RANGE: std::ops::RangeInclusive<u64> = 1..=30 * 24 * 3600;

/// Bounds for `SANDBOX_DEFAULT_DISK_QUOTA_BYTES`: below 1 MiB a session could not even install
/// a small package; 16 TiB is beyond any disk a sandbox host should lend one session.
pub const DISK_QUOTA_BYTES_RANGE: std::ops::RangeInclusive<u64> = (1 << 20)..=(16 << 40);

/// Bounds for `SANDBOX_DEFAULT_DISK_QUOTA_FILES`: a handful of files at least; ten million
/// entries would take a count of the tree (at the limit) far longer than a call should.
pub const DISK_QUOTA_FILES_RANGE: std::ops::RangeInclusive<u64> = 10..=10_000_000;

/// The default largest `code` (execute_code, get_execution_guidance) and `command`
/// (execute_command): bigger is almost certainly data that belongs in a file under /app.
pub const DEFAULT_MAX_CODE_BYTES: usize = 1 << 20;

/// Bounds for `SANDBOX_MAX_CODE_BYTES`: a few lines at least; at most 16 MiB, well inside the
/// worker protocol's 64 MiB frame.
pub const MAX_CODE_BYTES_RANGE: std::ops::RangeInclusive<u64> = 256..=(16 << 20);

/// Where the shared volume (`SANDBOX_SHARED_DIR`) appears inside every sandbox.
pub const SHARED_GUEST_PATH: &str = "/shared";

/// Everything the supervisor needs to know at start-up.
#[derive(Debug, Clone)]
pub struct SupervisorConfig {
    pub worker_bin: PathBuf,
    /// Holds `python-3.12.0.wasm` and `quickjs-ng.wasm`.
    pub runtime_dir: PathBuf,
    /// Where the precompiled `.cwasm` files go.
    pub cache_dir: PathBuf,
    /// Private (0700) directory holding worker sockets and session workspaces; removed at
    /// shutdown.
    pub state_dir: PathBuf,
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
    /// Admission: the sum of the memory caps of all sessions may not exceed this.
    pub memory_budget: u64,
    /// Whether workers get their own cgroup.
    pub cgroups: crate::cgroup::CgroupSupport,
    /// Caps per HTTP client (a named principal, or one MCP session): sessions at once.
    pub principal_max_sessions: usize,
    /// Caps per HTTP client: executions in flight (running or queued) at once.
    pub principal_max_executions: usize,
    /// Largest `code` / `command` argument accepted (`SANDBOX_MAX_CODE_BYTES`).
    pub max_code_bytes: usize,
    /// The layers of the worker's own jail: detected, required, turned off (`jail_layers`).
    pub jail: crate::jail_layers::JailPolicy,
}

/// Why the configuration is unusable.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot locate the sandbox-mcp executable")]
    CurrentExe(#[source] std::io::Error),
    #[error(
        "worker binary not found at {0}; build it (cargo build --release) or set SANDBOX_WORKER_BIN"
    )]
    WorkerMissing(PathBuf),
    #[error(
        "no runtime directory with python-3.12.0.wasm found (looked in {0}); run ./setup.sh or set SANDBOX_RUNTIME_DIR"
    )]
    RuntimesMissing(String),
    #[error("cannot create the state directory {path}")]
    StateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("SANDBOX_SHARED_DIR {0} is not a directory")]
    SharedMissing(PathBuf),
    #[error("{name}: {message}")]
    BadJail { name: &'static str, message: String },
    #[error("{name} must be a number, got {value:?}")]
    BadNumber { name: &'static str, value: String },
    #[error("{name} must be between {min} and {max}, got {value}")]
    OutOfRange {
        name: &'static str,
        value: u64,
        min: u64,
        max: u64,
    },
}

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn env_number(name: &'static str) -> Result<Option<u64>, ConfigError> {
    match std::env::var(name) {
        Ok(value) if !value.is_empty() => value
            .parse()
            .map(Some)
            .map_err(|_| ConfigError::BadNumber { name, value }),
        _ => Ok(None),
    }
}

/// A number from the environment that must lie in `range`.
fn env_bounded(
    name: &'static str,
    range: &std::ops::RangeInclusive<u64>,
) -> Result<Option<u64>, ConfigError> {
    match env_number(name)? {
        Some(value) if !range.contains(&value) => Err(ConfigError::OutOfRange {
            name,
            value,
            min: *range.start(),
            max: *range.end(),
        }),
        other => Ok(other),
    }
}

impl SupervisorConfig {
    /// Reads `SANDBOX_WORKER_BIN`, `SANDBOX_RUNTIME_DIR`, `SANDBOX_CACHE_DIR`,
    /// `SANDBOX_STATE_DIR`, `SANDBOX_SESSION_TTL_SECS`, `SANDBOX_MAX_CODE_BYTES`, the
    /// `SANDBOX_DEFAULT_*` limits (the disk quota's too) and the jail's
    /// `SANDBOX_REQUIRE`/`SANDBOX_JAIL_DISABLE` (running `sandbox-worker jail-check`), and falls
    /// back to the layout of a cargo build (`target/release/sandbox-mcp` next to
    /// `sandbox-worker`, interpreters in `target/runtimes`).
    ///
    /// # Errors
    /// When the worker or the interpreters cannot be found, or a number does not parse.
    pub fn from_env() -> Result<Self, ConfigError> {
        let exe = std::env::current_exe().map_err(ConfigError::CurrentExe)?;
        let exe_dir = exe.parent().unwrap_or(Path::new("/")).to_path_buf();
        let worker_bin =
            env_path("SANDBOX_WORKER_BIN").unwrap_or_else(|| exe_dir.join("sandbox-worker"));
        if !worker_bin.is_file() {
            return Err(ConfigError::WorkerMissing(worker_bin));
        }
        let candidates: Vec<PathBuf> = match env_path("SANDBOX_RUNTIME_DIR") {
            Some(dir) => vec![dir],
            None => vec![exe_dir.join("runtimes"), exe_dir.join("../runtimes")],
        };
        let runtime_dir = candidates
            .iter()
            .find(|d| d.join("python-3.12.0.wasm").is_file())
            .cloned()
            .ok_or_else(|| {
                ConfigError::RuntimesMissing(
                    candidates
                        .iter()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                )
            })?;
        let cache_dir = env_path("SANDBOX_CACHE_DIR").unwrap_or_else(|| runtime_dir.join("cache"));
        let state_dir = match env_path("SANDBOX_STATE_DIR") {
            Some(dir) => dir,
            None => std::env::temp_dir().join(format!("sandbox-mcp-{}", std::process::id())),
        };
        create_private_dir(&state_dir)?;
        let mut defaults = SessionLimits::default();
        if let Some(v) = env_number("SANDBOX_DEFAULT_MEMORY_BYTES")? {
            defaults.memory_bytes = v;
        }
        if let Some(v) = env_number("SANDBOX_DEFAULT_FUEL")? {
            defaults.fuel = v;
        }
        if let Some(v) = env_number("SANDBOX_DEFAULT_TIMEOUT_SECS")? {
            defaults.timeout = Duration::from_secs(v).min(MAX_TIMEOUT);
        }
        if let Some(v) = env_bounded("SANDBOX_DEFAULT_DISK_QUOTA_BYTES", &DISK_QUOTA_BYTES_RANGE)? {
            defaults.disk_quota_bytes = v;
        }
        if let Some(v) = env_bounded("SANDBOX_DEFAULT_DISK_QUOTA_FILES", &DISK_QUOTA_FILES_RANGE)? {
            defaults.disk_quota_files = v;
        }
        let max_code_bytes = env_bounded("SANDBOX_MAX_CODE_BYTES", &MAX_CODE_BYTES_RANGE)?
            .map_or(DEFAULT_MAX_CODE_BYTES, |v| v as usize);
        let ttl = |name, default| -> Result<Duration, ConfigError> {
            let secs = env_number(name)?.unwrap_or(default);
            if !TTL_RANGE.contains(&secs) {
                return Err(ConfigError::OutOfRange {
                    name,
                    value: secs,
                    min: *TTL_RANGE.start(),
                    max: *TTL_RANGE.end(),
                });
            }
            Ok(Duration::from_secs(secs))
        };
        let session_ttl = ttl("SANDBOX_SESSION_TTL_SECS", 3600)?;
        let explicit_session_ttl = ttl("SANDBOX_EXPLICIT_SESSION_TTL_SECS", 24 * 3600)?;
        let max_sessions = env_number("SANDBOX_MAX_SESSIONS")?.unwrap_or(64) as usize;
        let principal_max_sessions =
            env_number("SANDBOX_PRINCIPAL_MAX_SESSIONS")?.unwrap_or(16) as usize;
        let principal_max_executions =
            env_number("SANDBOX_PRINCIPAL_MAX_EXECUTIONS")?.unwrap_or(16) as usize;
        let memory_budget = match env_number("SANDBOX_MEMORY_BUDGET_BYTES")? {
            Some(v) => v,
            None => default_memory_budget(),
        };
        let data_dir = env_path("SANDBOX_DATA_DIR")
            .or_else(|| Some(runtime_dir.join("data")))
            .filter(|d| d.is_dir());
        let shared_dir = env_path("SANDBOX_SHARED_DIR").map(|dir| {
            let writable =
                std::env::var("SANDBOX_SHARED_WRITABLE").is_ok_and(|v| v == "1" || v == "true");
            (dir, writable)
        });
        if let Some((dir, _)) = &shared_dir {
            if !dir.is_dir() {
                return Err(ConfigError::SharedMissing(dir.clone()));
            }
        }
        let jail = crate::jail_layers::JailPolicy::from_env(&worker_bin)
            .map_err(|(name, message)| ConfigError::BadJail { name, message })?;
        Ok(Self {
            jail,
            worker_bin,
            runtime_dir,
            cache_dir,
            state_dir,
            defaults,
            data_dir,
            shared_dir,
            session_ttl,
            explicit_session_ttl,
            max_sessions,
            memory_budget,
            cgroups: crate::cgroup::CgroupSupport::detect(),
            principal_max_sessions,
            principal_max_executions,
            max_code_bytes,
        })
    }

    /// Where a worker's socket lives while it connects: named by the session's directory key
    /// (never by a client-chosen id, which two clients may share).
    pub fn socket_path(&self, key: &str, generation: u64) -> PathBuf {
        self.state_dir
            .join(STATE_SOCKETS)
            .join(format!("{key}.{generation}.sock"))
    }
}

/// The state directory's parts. Sessions live in `sessions/<id>.<nonce>/{app,tmp}`: a fresh
/// directory for every session, so a recreated id never finds an old session's files.
pub const STATE_SESSIONS: &str = "sessions";
/// Worker sockets (`<nonce>.<generation>.sock`), short enough for `sun_path`.
pub const STATE_SOCKETS: &str = "sockets";
/// Server-owned scratch: package downloads and unpacked wheels before they move into a session.
pub const STATE_STAGING: &str = "staging";

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

    /// The guidance module quotes flavor numbers in its advice; they must be the real ones.
    #[test]
    fn guidance_quotes_the_real_flavors() {
        for (spec, flavor) in crate::guidance::FLAVORS.iter().zip(Flavor::ALL) {
            let limits = flavor.limits();
            assert_eq!(spec.name, flavor.name());
            assert_eq!(u64::from(spec.cpus), u64::from(limits.cpus));
            assert_eq!(spec.memory_bytes as u64, limits.memory_bytes);
            assert_eq!(spec.fuel, limits.fuel);
            assert_eq!(spec.timeout_secs as u64, limits.timeout.as_secs());
            assert_eq!(spec.disk_quota_bytes, limits.disk_quota_bytes);
            assert_eq!(spec.disk_quota_files, limits.disk_quota_files);
            assert_eq!(spec.disk_file_bytes, limits.disk_bytes);
        }
    }
}
