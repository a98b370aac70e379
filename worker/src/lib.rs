//! `sandbox-worker`: one sandbox session in its own process.
//!
//! The supervisor starts one worker per session. The worker loads a precompiled interpreter
//! ([`engine`]), builds the sandboxed WASI host around it ([`host`]) and serves executions over
//! its socket ([`serve`], [`connection`]) with a Python ([`python`]) or JavaScript
//! ([`javascript`]) session whose state lives as long as the process; shell command lines
//! ([`command`], [`shell`]) run over that session's files, their `python`/`node` in fresh
//! interpreters ([`companion`]) bounded by what the worker's limit leaves ([`data_limit`]). Everything the session writes into `/app`
//! and `/tmp` is charged to its disk [`quota`]. Before any guest code runs, the worker jails
//! itself ([`jail`]); [`probe`] is the test-only entry that attacks that jail from inside.
//! [`prepare`] holds the one-off steps that compile the interpreters for a host, and
//! [`fuel_overhead`] measures what fuel metering costs (for `sandbox-bench`).
//!
//! The library never ends the process: every path returns a value (an [`connection::Ended`] or
//! a [`WorkerError`]) up to `main`, which exits with its [`WorkerExit`] status.

pub mod capture;
pub mod command;
pub mod companion;
pub mod connection;
pub mod data_limit;
pub mod engine;
pub mod fork_server;
pub mod fuel_overhead;
pub mod host;
pub mod jail;
pub mod javascript;
pub mod prepare;
pub mod probe;
pub mod python;
pub mod quota;
pub mod serve;
pub mod shell;
pub mod snapshot;
pub mod toolbox;

use std::path::PathBuf;
use std::time::Instant;

use sandbox_protocol::WorkerExit;

/// Everything that stops a worker with an error, each with its own exit status (see
/// [`WorkerError::exit`]) so the supervisor can tell a setup failure from a crash from a kill.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("cannot connect to the supervisor at {socket}")]
    Connect {
        socket: PathBuf,
        source: std::io::Error,
    },
    #[error("i/o failed")]
    Io(#[from] std::io::Error),
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
    /// Why the process ends, as its exit status says.
    pub fn exit(&self) -> WorkerExit {
        match self {
            WorkerError::Connect { .. } | WorkerError::Io(_) => WorkerExit::Connect,
            WorkerError::Engine(_) => WorkerExit::Engine,
            WorkerError::Runtime(_) => WorkerExit::Runtime,
            WorkerError::ProtocolMismatch { .. } => WorkerExit::ProtocolMismatch,
            WorkerError::Jail(_) => WorkerExit::Jail,
        }
    }

    /// The process exit status for this error.
    pub fn exit_code(&self) -> i32 {
        self.exit().code()
    }
}

/// Measures the time from process start to a ready interpreter.
#[derive(Debug, Clone, Copy)]
pub struct ReadyClock(Instant);

impl ReadyClock {
    /// Starts measuring; `main` does this first.
    pub fn start() -> Self {
        Self(Instant::now())
    }

    /// Microseconds since [`ReadyClock::start`].
    pub fn elapsed_us(&self) -> u64 {
        u64::try_from(self.0.elapsed().as_micros()).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The statuses the supervisor names (`WorkerExit::from_code`) are the ones the worker has
    /// always exited with.
    #[test]
    fn every_error_exits_with_its_own_status() {
        let cases = [
            (WorkerError::Io(std::io::Error::other("x")), 3),
            (
                WorkerError::Connect {
                    socket: "/s".into(),
                    source: std::io::Error::other("x"),
                },
                3,
            ),
            (
                WorkerError::Engine(engine::EngineError::Config("x".into())),
                4,
            ),
            (WorkerError::Runtime("x".into()), 5),
            (WorkerError::ProtocolMismatch { ours: 3, theirs: 2 }, 6),
            (WorkerError::Jail(jail::JailError::Setup("x".into())), 7),
        ];
        for (error, code) in cases {
            assert_eq!(error.exit_code(), code, "{error}");
            assert_eq!(WorkerExit::from_code(code), Some(error.exit()));
        }
    }
}
