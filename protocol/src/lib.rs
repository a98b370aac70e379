//! What the `sandbox-mcp` supervisor and its `sandbox-worker` processes share: the wire
//! contract, and the confined filesystem layer both sides use to touch a session's files.
//!
//! Every message is one frame: a big-endian `u32` length followed by a bincode payload of at most
//! [`MAX_FRAME_LEN`] bytes. [`message`] holds the message types, [`frame`] the only code that
//! touches the codec, and [`error`] what can go wrong on the wire. [`confined`] is the only way
//! host-side code opens, lists, moves or deletes anything in a session's directories. [`jail`]
//! names the layers of the jail around a worker and what a worker reports it applied.
//!
//! The facts both sides must agree on are stated here once: [`outcome`] names every error
//! class, [`flavor`] the session sizes, [`runtime`] the languages, interpreter files, mounts,
//! cached modules and worker exit statuses. [`snapshot`] is the format of an interpreter's
//! saved state, which the worker writes and the supervisor keeps and compacts.

pub mod confined;
pub mod error;
pub mod flavor;
pub mod frame;
pub mod jail;
pub mod message;
pub mod outcome;
pub mod runtime;
pub mod snapshot;

pub use error::FrameError;
pub use flavor::{
    FLAVORS, FUEL_RANGE, Flavor, FlavorSpec, MAX_TIMEOUT, MEMORY_RANGE, default_execution_fuel,
    flavor_execution_fuel,
};
pub use frame::{
    MAX_FRAME_LEN, encode, read_frame, read_frame_blocking, write_frame, write_frame_blocking,
};
pub use jail::{JailReport, Layer, LayerSet, LayerState};
pub use message::*;
pub use outcome::ErrorType;
pub use runtime::{
    CachedModule, IMAGED_SESSION_MOUNTS, Language, ModuleManifest, Mount, PYTHON_DIR, Runtime,
    TOOLBOX_FILE, WorkerExit,
};

/// Bumped whenever a message changes shape; the worker refuses a supervisor that speaks another.
pub const PROTOCOL_VERSION: u32 = 10;
