//! The wire contract between the `sandbox-mcp` supervisor and its `sandbox-worker` processes.
//!
//! Every message is one frame: a big-endian `u32` length followed by a bincode payload of at most
//! [`MAX_FRAME_LEN`] bytes. [`message`] holds the message types, [`frame`] the only code that
//! touches the codec, and [`error`] what can go wrong on the wire.

pub mod error;
pub mod frame;
pub mod message;

pub use error::FrameError;
pub use frame::{
    MAX_FRAME_LEN, read_frame, read_frame_blocking, write_frame, write_frame_blocking,
};
pub use message::*;

/// Bumped whenever a message changes shape; the worker refuses a supervisor that speaks another.
pub const PROTOCOL_VERSION: u32 = 2;
