//! The messages: what the supervisor asks of a worker ([`Request`]) and what it answers
//! ([`Response`]). A worker serves exactly one session, so no message names a session.

use serde::{Deserialize, Serialize};

pub use crate::runtime::Language;

/// Supervisor → worker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Request {
    /// First message on a new connection; the worker answers [`Response::Ready`] once its
    /// interpreter is up, or [`Response::Failed`].
    Hello { protocol_version: u32 },
    /// Run code in the session's persistent interpreter.
    Execute(ExecuteRequest),
    /// Run a shell command line; answered with [`Response::Executed`].
    Command(CommandRequest),
    /// Stop the running execution with this id as soon as possible (soft interrupt first, state
    /// kept). Ignored when that execution is not running.
    Cancel { execution_id: String },
    /// Charge files the supervisor is about to move into the session (an install) to the
    /// session's disk quota, as if the guest had written them: answered with
    /// [`Response::DiskCharged`] at once, even while an execution runs. Granted space is
    /// counted from now on; a refusal changes nothing.
    ChargeDisk { bytes: u64, entries: u64 },
    /// Count `bytes` and `entries` the session keeps outside its files (its checkpoints)
    /// against its disk quota from now on, in place of what was held before: answered with
    /// [`Response::DiskCharged`] at once. Less is always granted; more only when it fits.
    HoldDisk { bytes: u64, entries: u64 },
    /// Capture the interpreter's state once the executions before it are done: answered with
    /// [`Response::SnapshotPart`]s, then [`Response::Snapshotted`].
    Snapshot,
    /// Send the interpreter's state layer now, as after an execution: a pre-started worker's
    /// first (full) layer, taken while it waits, so that its session's first call does not.
    /// Answered with [`Response::StatePart`]s only.
    SendState,
    /// One part of a state to restore (a log of layers: a full one, then changes); after the
    /// `last` one the worker replaces its interpreter with that state (or keeps it, when the
    /// state does not fit) and answers [`Response::Restored`].
    RestorePart {
        #[serde(with = "serde_bytes")]
        data: Vec<u8>,
        last: bool,
    },
    /// A state to restore, as [`Request::RestorePart`]s would carry it, in the file whose
    /// descriptor comes with this frame (`SCM_RIGHTS`, read-only): its first `len` bytes. The
    /// worker reads it itself, so the bytes cross no socket. Answered with
    /// [`Response::Restored`]; without a descriptor, refused.
    RestoreFile { len: u64 },
    /// Finish and exit. Closing the socket means the same.
    Shutdown,
}

/// One execution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecuteRequest {
    /// Chosen by the supervisor; echoed in the report and used by [`Request::Cancel`].
    pub execution_id: String,
    pub code: String,
    /// Wasmtime fuel for this execution alone (about 10^10 per second of CPU).
    pub fuel: u64,
    /// Wall-clock budget. At the deadline the guest is interrupted softly (state kept); if it
    /// does not stop within a short grace period it is trapped.
    pub timeout_ms: u64,
    /// User code, or the worker's own introspection of the session.
    pub kind: ExecutionKind,
    /// `sys.argv` / `scriptArgs` (from a shell `python FILE ARGS`); empty: unchanged.
    pub argv: Vec<String>,
    /// What the code reads from stdin (a shell pipe); empty for `execute_code`.
    #[serde(with = "serde_bytes")]
    pub stdin: Vec<u8>,
}

impl ExecuteRequest {
    /// Plain user code, as `execute_code` runs it.
    pub fn user(execution_id: String, code: String, fuel: u64, timeout_ms: u64) -> Self {
        Self {
            execution_id,
            code,
            fuel,
            timeout_ms,
            kind: ExecutionKind::User,
            argv: Vec::new(),
            stdin: Vec::new(),
        }
    }
}

/// What an [`ExecuteRequest`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExecutionKind {
    /// `code` in the session's namespace.
    User,
    /// No code: the report's `result` is a JSON document describing the session's variables
    /// and imported modules (see `get_workspace_info`).
    Inspect,
}

/// A shell command line for the session (`execute_command`), run by the worker's shell over
/// the session's files; `python`/`node` inside it run in fresh interpreters (the session's
/// files, not its variables).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandRequest {
    pub execution_id: String,
    pub command: String,
    /// Fuel for each interpreter run the command makes.
    pub fuel: u64,
    pub timeout_ms: u64,
}

/// What a state layer ([`Response::StatePart`]) holds, and so what it does to the layers the
/// supervisor has of the session before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LayerKind {
    /// The pages changed since the last layer: appended to them.
    Changes,
    /// Every page that differs from a fresh instance: replaces every layer before it.
    Full,
    /// The pages changed since the base layer of the fork server that forked the worker
    /// ([`ForkReply::Ready`]): the base and then this layer replace every layer before them.
    /// A worker adopting its fork server's woken interpreter sends its first layer so, and
    /// the few hundred pages every instance's wake writes cross the socket once per server,
    /// not once per session.
    OverBase,
}

impl LayerKind {
    /// Whether the layer (with the base it may need) replaces every layer before it.
    pub fn replaces(self) -> bool {
        !matches!(self, Self::Changes)
    }
}

/// Worker → supervisor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Response {
    /// The interpreter is up and waiting for code.
    Ready(ReadyInfo),
    /// The worker took the execution with this id: from now on it may run. A worker that dies
    /// before saying so never ran any of it, so the supervisor may run it on a fresh worker.
    Started { execution_id: String },
    /// The answer to [`Request::ChargeDisk`].
    DiskCharged(DiskCharge),
    /// The report of one [`Request::Execute`].
    Executed(ExecutionReport),
    /// One part of the interpreter's state after an execution that returned, sent before its
    /// report: a layer of a log ([`Request::RestorePart`] takes such a log), of `kind`.
    StatePart {
        #[serde(with = "serde_bytes")]
        data: Vec<u8>,
        last: bool,
        kind: LayerKind,
    },
    /// One part of the snapshot asked for ([`Request::Snapshot`]), in order.
    SnapshotPart {
        #[serde(with = "serde_bytes")]
        data: Vec<u8>,
    },
    /// The snapshot is complete (every part sent), or why there is none.
    Snapshotted(Result<SnapshotInfo, String>),
    /// The answer to the last [`Request::RestorePart`].
    Restored(Result<RestoreInfo, String>),
    /// The worker cannot serve: it says why and then exits.
    Failed { message: String },
}

/// The most bytes of a snapshot one frame carries.
pub const SNAPSHOT_PART: usize = 16 << 20;

/// What a snapshot cost and holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotInfo {
    /// Its size, compressed, as sent.
    pub bytes: u64,
    /// The interpreter's linear memory, and how much of it the snapshot carries (what differs
    /// from a fresh instance).
    pub memory_bytes: u64,
    pub changed_bytes: u64,
    pub took_us: u64,
    /// Guest descriptors open at the time beyond the preopened directories: a restored
    /// interpreter finds them closed.
    pub open_descriptors: Vec<u32>,
}

/// What a restore cost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestoreInfo {
    pub took_us: u64,
    pub memory_bytes: u64,
}

/// A [`Request::ChargeDisk`] granted or refused, with the numbers a refusal is explained by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskCharge {
    pub granted: bool,
    /// What the session's files held when the charge was decided (counted afresh when the
    /// charge would have crossed a limit).
    pub used_bytes: u64,
    pub used_entries: u64,
    pub quota_bytes: u64,
    pub quota_entries: u64,
    /// False when the count could not see everything: `used_*` are then lower bounds.
    pub exact: bool,
}

/// What a worker says once its interpreter is running.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadyInfo {
    pub language: Language,
    /// Exact interpreter version, e.g. `3.12.0` or `0.16.2`.
    pub runtime_version: String,
    /// Time from process start to a ready interpreter.
    pub startup_us: u64,
    /// Whether the interpreter started from the runtime's memory image (no start-up of its
    /// own, packages already imported).
    pub from_image: bool,
    /// Whether the worker was forked by a fork server (its module mapped and its interpreter
    /// instantiated before the session asked), not started by exec.
    pub forked: bool,
    /// The jail this worker is in, layer by layer.
    pub jail: crate::jail::JailReport,
}

/// Everything the supervisor needs to answer `execute_code`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionReport {
    pub execution_id: String,
    /// Raw bytes the guest wrote to fd 1, up to the cap (not necessarily UTF-8).
    #[serde(with = "serde_bytes")]
    pub stdout: Vec<u8>,
    #[serde(with = "serde_bytes")]
    pub stderr: Vec<u8>,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    /// 0 on success; the guest's `sys.exit` code when it gave one; 1 for other failures.
    pub exit_code: i32,
    /// Repr of the trailing expression, as a notebook shows it; `None` when there was none.
    pub result: Option<String>,
    /// `None` when the execution succeeded.
    pub error: Option<GuestError>,
    pub fuel_consumed: u64,
    pub duration_us: u64,
    /// Size of the interpreter's linear memory after the execution.
    pub memory_bytes: u64,
    /// Set when the interpreter had to be replaced during this execution.
    pub restart: Option<Restart>,
    /// Pictures the execution drew (matplotlib figures shown or saved as PNG), in order.
    pub figures: Vec<Figure>,
    /// Files beneath `/app` the execution opened for writing or renamed into place, relative
    /// to `/app`, in the order first seen, at most [`MAX_WRITTEN_FILES`]. Names the guest
    /// chose: whoever opens them must do so beneath `/app` (the supervisor attaches the
    /// images among them without walking the directory).
    pub written: Vec<String>,
    /// The state layer this execution left follows this report: the worker answers first
    /// and sends the pages the call changed after it ([`Response::StatePart`]s, the last one
    /// `last`). False for an execution that left no new state (not run, rolled back).
    pub state_follows: bool,
}

/// The most written files one report names; an execution that writes more names the first.
pub const MAX_WRITTEN_FILES: usize = 64;

/// One picture an execution produced, returned to the client as image content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Figure {
    /// `image/png`.
    pub mime: String,
    #[serde(with = "serde_bytes")]
    pub data: Vec<u8>,
}

/// The most pictures one execution returns, and the most bytes they may take together: a cell
/// that draws in a loop gets the first ones and a note on stderr, not a frame over the limit.
pub const MAX_FIGURES: usize = 8;
pub const MAX_FIGURE_BYTES: usize = 8 << 20;

/// A failed execution, classified from the interpreter and the trap, not from message text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuestError {
    pub kind: ErrorKind,
    /// Exception type or JS error name (`ZeroDivisionError`, `TypeError`), when there is one.
    pub name: Option<String>,
    /// One line for the model; the full traceback is already in stderr.
    pub message: String,
}

/// Classes of failure a worker can tell apart by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ErrorKind {
    Syntax,
    Runtime,
    MissingModule,
    Timeout,
    Cancelled,
    OutOfFuel,
    OutOfMemory,
    StackOverflow,
    /// The guest called `sys.exit` / `exit` with a non-zero status.
    Exit,
    /// A path outside the sandbox's mounts, or a write to a read-only one.
    PathRestriction,
    /// A file grew past the session's disk cap.
    DiskQuota,
    /// A shell command line exited with a non-zero status (no other failure).
    CommandFailed,
    /// The worker's own machinery failed (a bug, or the host refused something).
    System,
}

/// The interpreter was replaced during an execution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Restart {
    /// Why, in words a model can act on.
    pub reason: String,
    pub state: StateAfterRestart,
}

/// What survived a restart (clients see `"resumed"`, `"rolled_back"` or `"lost"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum StateAfterRestart {
    /// A new worker took over the session's state after the last call that returned: nothing
    /// was lost.
    Resumed,
    /// Variables and functions from before this execution are back.
    RolledBack,
    /// A fresh interpreter: every variable, function and import is gone. Files in /app remain.
    Lost,
}

/// What the supervisor asks of a fork server (`sandbox-worker fork-server`), one question at a
/// time, each answered by one [`ForkReply`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ForkAsk {
    /// A worker for one session: `Forked` (the spare, when the server holds a live one) or
    /// `Refused`.
    Fork(ForkRequest),
    /// The next session's worker, made ahead while nobody waits: forked and woken, it waits
    /// for the server to hand it the next `Fork`. `Spare` (the one held, if any) or `Refused`.
    Spare,
}

/// A worker for one session, exactly as `sandbox-worker serve` would run with `args` (the
/// subcommand first), set up as the supervisor's `pre_exec` sets up an exec'd one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkRequest {
    /// The worker's command line after the program name: `serve` and its options, as bytes.
    pub args: Vec<Vec<u8>>,
    /// Its working directory (the session's `/app`), as bytes.
    pub cwd: Vec<u8>,
    pub limits: ForkLimits,
    /// The `cgroup.procs` file the worker moves itself into before anything else, when cgroups
    /// are delegated.
    pub cgroup_procs: Option<Vec<u8>>,
}

/// The rlimits of a forked worker, as the supervisor sets them on an exec'd one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkLimits {
    pub data_bytes: u64,
    pub open_files: u64,
    pub file_bytes: u64,
    pub cpu_seconds: u64,
}

/// A fork server's answers: one `Ready` when it is up, then one answer per [`ForkAsk`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ForkReply {
    /// The server has mapped its module (and instantiated its interpreter, when `pristine`)
    /// and takes requests. `base`: the full state layer of the interpreter it holds, woken,
    /// when it holds one: the layer its workers' first [`LayerKind::OverBase`] layers apply to.
    Ready {
        pristine: bool,
        #[serde(with = "serde_bytes")]
        base: Option<Vec<u8>>,
    },
    /// A worker was forked: a child of the supervisor (`CLONE_PARENT`), which it reaps. It is
    /// the spare when the server held one.
    Forked { pid: u32 },
    /// The spare: the supervisor's child too, idle until a `Fork` hands it a session. The
    /// supervisor reaps it if it ends unused.
    Spare { pid: u32 },
    /// Nothing was forked; the supervisor starts the worker by exec instead.
    Refused { message: String },
}
