//! The host side of a session's WebAssembly: the data of its `Store` and the WASI around it.
//!
//! - [`state`]: [`HostState`], the store data, with the per-session settings ([`SessionConfig`])
//!   and what an execution ends with ([`Outcome`]); [`DriverChannel`] is how an interpreter's
//!   driver (Python's) exchanges requests and status records over fd 0.
//! - [`cancel`]: [`Control`], what the supervisor's `Cancel` sets while the guest runs.
//! - [`limits`]: the memory cap ([`MemoryLimiter`]) and the fuel budget ([`fuel_for`]).
//! - [`clock`]: an execution's deadlines ([`ActiveExecution`]), how an interpreter is asked to
//!   stop ([`SoftInterrupt`]) and the session's monotonic clock; [`epoch`] acts on them while
//!   guest code runs: every tick ([`on_epoch`]) and, for fuel, at every host call
//!   ([`on_host_call`]).
//! - [`traps`]: what a trap that ended a guest call means for the client ([`classify_trap`]).
//! - The WASI shadows, each in its own file: [`stdio`] (`fd_write`/`fd_read` on fds 0 to 2, and
//!   [`BrokenPipe`], the end of a guest whose stdout pipe is full),
//!   [`sleep`] (`poll_oneoff` for plain sleeps) and [`disk_quota`] (the calls that grow files);
//!   [`linker`] puts them over wasmtime-wasi's own implementation ([`build_linker`]).
//! - [`file_mode`]: `sandbox.file_mode`, the permission bits WASI cannot say, looked up through
//!   a session's view of its mounts ([`FileModes`]) for the toolbox's `ls -l` and `stat`.
//! - [`guest_quota`]: the disk quota's books for one interpreter instance, which the
//!   [`disk_quota`] shadows keep.
//! - [`guest_memory`]: bounds-checked reads and writes of the guest's linear memory.
//! - [`sigint`]: where a CPython build keeps its SIGINT words, and raising/clearing them.
//!
//! The files depend on each other in one direction only: `state` on `cancel`, `limits`, `clock`
//! and `guest_quota`; `guest_memory`, `epoch`, `traps` and the shadows on `state`; `linker` on
//! the shadows.

pub mod cancel;
pub mod clock;
pub mod disk_quota;
pub mod epoch;
pub mod file_mode;
pub mod guest_memory;
pub mod guest_quota;
pub mod limits;
pub mod linker;
pub mod sigint;
pub mod sleep;
pub mod state;
pub mod stdio;
pub mod traps;
pub mod written;

pub use cancel::Control;
pub use clock::{ActiveExecution, HARD_GRACE, InterruptCause, SoftInterrupt};
pub use epoch::{new_store, on_epoch, on_host_call};
pub use file_mode::{FileModes, SharedFileModes};
pub use guest_memory::{iovecs, read_u32, write_u32};
pub use limits::{FUEL_RESERVE, MemoryLimiter, fuel_for};
pub use linker::build_linker;
pub use sigint::{EvalBreaker, SigintWords, clear_sigint, raise_sigint};
pub use state::{DriverChannel, HostState, Outcome, SessionConfig};
pub use stdio::BrokenPipe;
pub use traps::classify_trap;
