//! Errors of the framing layer: I/O, oversized frames and payloads that do not decode.

use std::io;

/// Why a frame could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The socket failed underneath us.
    #[error("frame i/o failed")]
    Io(#[from] io::Error),
    /// A length prefix larger than [`crate::MAX_FRAME_LEN`]: refused before allocating anything.
    #[error("frame of {len} bytes exceeds the {max} byte limit")]
    TooLarge { len: usize, max: usize },
    /// The peer closed the stream in the middle of a frame.
    #[error("connection closed in the middle of a frame")]
    Truncated,
    /// The payload is not a valid message of the expected type.
    #[error("frame payload does not decode")]
    Decode(#[source] bincode::error::DecodeError),
    /// The message could not be encoded (a bug on our side, never guest-controlled).
    #[error("message does not encode")]
    Encode(#[source] bincode::error::EncodeError),
    /// The payload decoded but left bytes unread, so it was not the message we expected.
    #[error("frame payload has {0} trailing bytes")]
    TrailingBytes(usize),
}
