//! A planned worker brought to life: [`launch`] creates the socket and the cgroup, starts the
//! process (jailed between fork and exec by `jail.rs`) and waits for its connection, all owned
//! by a [`SpawnGuard`] that kills the process group and removes the socket and cgroup when
//! dropped, so a failed or cancelled start-up leaves nothing behind. Once the worker is
//! connected, the guard is disarmed and hands the [`WorkerProcess`] to its `Worker`.

use std::path::PathBuf;
use std::sync::Arc;

use interprocess::local_socket::tokio::{Stream, prelude::*};
use interprocess::local_socket::{GenericFilePath, ListenerOptions};
use interprocess::os::unix::local_socket::ListenerOptionsExt;
use tokio::io::AsyncBufReadExt;
use tokio::process::Child;

use super::fork_server::{ForkServer, Forked};
use super::plan::{PlanError, SpawnPlan};
use super::{STARTUP_TIMEOUT, describe_exit, kill_group};
use crate::cgroup::WorkerCgroup;

/// Why a worker could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// Refused before anything was created (a required jail layer is missing, or the plan
    /// breaks a rule).
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error("cannot create the worker socket")]
    Listen(#[source] std::io::Error),
    #[error("cannot start the worker process")]
    Exec(#[source] std::io::Error),
    #[error("the worker did not connect in time")]
    ConnectTimeout,
    #[error("a process other than our worker connected (pid {0:?})")]
    WrongPeer(Option<u32>),
    #[error("the worker failed to start: {0}")]
    Failed(String),
    #[error("the worker died during start-up: {0}")]
    Died(String),
}

/// A started worker process and the cgroup made for it. Dropping it kills the process group
/// and removes the cgroup (tokio, or [`Forked`], reaps the process).
#[derive(Debug)]
pub struct WorkerProcess {
    started: Started,
    pub pid: u32,
    cgroup: Option<WorkerCgroup>,
}

/// How a worker was started, which says how it is reaped.
#[derive(Debug)]
enum Started {
    /// Exec'd by the supervisor (`kill_on_drop` has tokio reap it).
    Exec(Child),
    /// Forked by a fork server as the supervisor's child.
    Forked(Forked),
}

impl WorkerProcess {
    /// Kills the whole process group and reaps the worker. Returns how it ended.
    pub async fn kill(&mut self) -> String {
        kill_group(self.pid);
        describe_exit(self.wait().await)
    }

    /// Waits until the worker ends and reaps it: how it ended, if that can be known.
    pub async fn wait(&mut self) -> Option<std::process::ExitStatus> {
        match &mut self.started {
            Started::Exec(child) => child.wait().await.ok(),
            Started::Forked(forked) => forked.wait().await.ok(),
        }
    }

    /// How the worker ended, reaping it, or `None` while it runs.
    ///
    /// # Errors
    /// When the process cannot be waited for.
    pub fn try_wait(&mut self) -> std::io::Result<Option<std::process::ExitStatus>> {
        match &mut self.started {
            Started::Exec(child) => child.try_wait(),
            Started::Forked(forked) => forked.try_wait(),
        }
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        kill_group(self.pid);
        if let Some(cgroup) = self.cgroup.take() {
            cgroup.remove();
        }
    }
}

/// The start-up of one worker: its process, and the socket file it connects to. Dropping the
/// guard (a failed or cancelled start-up) kills the process group and removes the socket and
/// the cgroup; [`SpawnGuard::disarm`] hands the process over instead.
#[derive(Debug)]
pub struct SpawnGuard {
    process: WorkerProcess,
    _socket: SocketFile,
}

impl SpawnGuard {
    /// The started process's pid.
    pub fn pid(&self) -> u32 {
        self.process.pid
    }

    /// How the process ended, reaping it, or `None` while it runs.
    ///
    /// # Errors
    /// When it cannot be waited for.
    pub fn try_wait(&mut self) -> std::io::Result<Option<std::process::ExitStatus>> {
        self.process.try_wait()
    }

    /// The worker is connected and becomes its `Worker`'s, whose drop ends it from now on.
    pub fn disarm(self) -> WorkerProcess {
        self.process
    }
}

/// A socket path that is unlinked when dropped.
#[derive(Debug)]
struct SocketFile(PathBuf);

impl Drop for SocketFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Carries `plan` out: creates the socket and the cgroup, starts the process (forked by
/// `fork_server` when one is given and answers, otherwise exec'd, jailed between fork and exec)
/// and waits until it connects.
///
/// # Errors
/// When the socket cannot be made, the process cannot start, dies or does not connect within
/// the start-up timeout, or another process connects; nothing created is left behind.
pub async fn launch(
    plan: &SpawnPlan,
    fork_server: Option<&Arc<ForkServer>>,
) -> Result<(SpawnGuard, Stream), SpawnError> {
    let socket = SocketFile(plan.socket.clone());
    let _ = std::fs::remove_file(&socket.0);
    let name = socket
        .0
        .as_path()
        .to_fs_name::<GenericFilePath>()
        .map_err(SpawnError::Listen)?;
    // Mode 0600 is applied before bind, and the directory is 0700 anyway.
    let listener = ListenerOptions::new()
        .name(name)
        .mode(0o600)
        .create_tokio()
        .map_err(SpawnError::Listen)?;
    let cgroup = plan.cgroup.as_ref().and_then(|cgroup| {
        WorkerCgroup::create(cgroup)
            .inspect_err(|e| {
                tracing::warn!(session = %plan.session, error = %e, "no cgroup for this worker");
            })
            .ok()
    });
    let procs = cgroup.as_ref().and_then(WorkerCgroup::procs_path);
    let forked = match fork_server {
        Some(server) => server
            .fork(plan, procs.as_ref())
            .await
            .inspect_err(|e| tracing::warn!(session = %plan.session, error = %e, "fork server failed: exec'ing the worker"))
            .ok(),
        None => None,
    };
    let (started, pid) = match forked {
        Some(forked) => {
            let pid = forked.pid();
            (Started::Forked(forked), pid)
        }
        None => {
            let mut command = plan.command();
            crate::jail::apply(&mut command, plan.rlimits, procs);
            let mut child = match command.spawn() {
                Ok(child) => child,
                Err(e) => {
                    if let Some(cgroup) = cgroup {
                        cgroup.remove();
                    }
                    return Err(SpawnError::Exec(e));
                }
            };
            let pid = child.id().unwrap_or_default();
            if let Some(stderr) = child.stderr.take() {
                forward_stderr(stderr, plan.session.clone(), pid);
            }
            (Started::Exec(child), pid)
        }
    };
    let mut guard = SpawnGuard {
        process: WorkerProcess {
            started,
            pid,
            cgroup,
        },
        _socket: socket,
    };
    let accepted = tokio::select! {
        accepted = listener.accept() => accepted.map_err(SpawnError::Listen),
        status = guard.process.wait() => Err(SpawnError::Died(describe_exit(status))),
        () = tokio::time::sleep(STARTUP_TIMEOUT) => Err(SpawnError::ConnectTimeout),
    };
    drop(listener); // unlinks the socket file: nothing else can connect from now on
    let _ = std::fs::remove_file(&plan.socket);
    let stream = match accepted {
        Ok(stream) => stream,
        Err(e) => {
            guard.process.kill().await;
            return Err(e);
        }
    };
    let peer = stream
        .peer_creds()
        .ok()
        .and_then(|c| c.pid())
        .and_then(|p| u32::try_from(p).ok());
    if peer != Some(pid) {
        guard.process.kill().await;
        return Err(SpawnError::WrongPeer(peer));
    }
    Ok((guard, stream))
}

/// Re-emits the worker's log lines through our tracing, under its session.
fn forward_stderr(stderr: tokio::process::ChildStderr, session: String, pid: u32) {
    /// Longest log line passed on; a worker has no reason to write more.
    const MAX_LINE: usize = 4096;
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        while let Ok(Some(mut line)) = lines.next_line().await {
            if line.len() > MAX_LINE {
                let mut cut = MAX_LINE;
                while !line.is_char_boundary(cut) {
                    cut -= 1;
                }
                line.truncate(cut);
            }
            tracing::info!(target: "sandbox_worker", session = %session, pid, "{line}");
        }
    });
}
