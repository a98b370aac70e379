//! `sandbox-worker`: one sandbox session in its own process.
//!
//! The supervisor starts one worker per session. The worker loads a precompiled interpreter
//! ([`engine`]), builds the sandboxed WASI host around it ([`host`]) and serves executions over
//! its socket ([`serve`]) with a Python ([`python`]) or JavaScript ([`javascript`]) session whose
//! state lives as long as the process. `sandbox-worker precompile` fills the module cache.
//! Everything the session writes into `/app` and `/tmp` is charged to its disk [`quota`].
//! Before any guest code runs, the worker jails itself ([`jail`]); [`probe`] is the test-only
//! entry that attacks that jail from inside.

pub mod capture;
pub mod command;
pub mod engine;
pub mod host;
pub mod jail;
pub mod javascript;
pub mod probe;
pub mod python;
pub mod quota;
pub mod serve;
pub mod shell;

use std::path::PathBuf;
use std::time::Instant;

/// Everything that stops a worker, each with its own exit status (see [`WorkerError::exit_code`])
/// so the supervisor can tell a setup failure from a crash from a kill.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("usage: {0}")]
    Usage(String),
    #[error("cannot connect to the supervisor at {socket}")]
    Connect {
        socket: PathBuf,
        source: std::io::Error,
    },
    #[error("i/o failed")]
    Io(#[source] std::io::Error),
    #[error(transparent)]
    Engine(#[from] engine::EngineError),
    #[error("interpreter failure: {0}")]
    Runtime(String),
    #[error("protocol version mismatch: worker speaks {ours}, supervisor {theirs}")]
    ProtocolMismatch { ours: u32, theirs: u32 },
    #[error(transparent)]
    Jail(#[from] jail::JailError),
}

impl WorkerError {
    /// The process exit status for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            WorkerError::Usage(_) => 2,
            WorkerError::Connect { .. } | WorkerError::Io(_) => 3,
            WorkerError::Engine(_) => 4,
            WorkerError::Runtime(_) => 5,
            WorkerError::ProtocolMismatch { .. } => 6,
            WorkerError::Jail(_) => 7,
        }
    }
}

/// Measures the time from process start to a ready interpreter.
#[derive(Debug, Clone, Copy)]
pub struct ReadyClock(Instant);

impl ReadyClock {
    pub fn start() -> Self {
        Self(Instant::now())
    }
    pub fn elapsed_us(&self) -> u64 {
        u64::try_from(self.0.elapsed().as_micros()).unwrap_or(u64::MAX)
    }
}
