//! One `sandbox-worker` process as the supervisor sees it: how it is spawned (jailed, with its
//! own process group and no inherited stdout), the typed request/response exchange over its
//! socket, and the hard kill.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

#[allow(deprecated, reason = "see Worker")]
use interprocess::local_socket::tokio::{RecvHalf, SendHalf, prelude::*};
use interprocess::local_socket::{GenericFilePath, ListenerOptions};
use interprocess::os::unix::local_socket::ListenerOptionsExt;
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use sandbox_protocol::{
    ExecutionReport, FrameError, Language, Layer, PROTOCOL_VERSION, ReadyInfo, Request, Response,
    read_frame, write_frame,
};
use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

use crate::cgroup::{CgroupSupport, WorkerCgroup};
use crate::config::{SessionLimits, SupervisorConfig};
use crate::jail::JailLimits;
use crate::jail_layers::{PROBE_TARGETS_VAR, WorkerEntry};
use crate::runtimes::CachedModule;
use crate::workspace::SessionFiles;

/// How long a new worker may take to connect and report a ready interpreter. CPython starts in
/// about 60 ms; this only guards against a wedged process.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(20);

/// How long after an execution's timeout the supervisor waits for the worker's own answer before
/// killing it. The worker interrupts at the timeout, traps 0.4 s later if the guest ignores the
/// interrupt, and may need a few tens of milliseconds to start a fresh interpreter.
pub const KILL_GRACE: Duration = Duration::from_millis(1500);

/// Only these variables reach a worker; everything else of the supervisor's environment stays.
const ENV_ALLOW_LIST: [&str; 1] = ["RUST_LOG"];

/// Why a worker could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
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
    /// Refused before starting anything: the operator requires a jail layer this server cannot
    /// give (see `jail_layers`).
    #[error("the jail layer {layer} is required but unavailable: {why}")]
    JailRequired { layer: Layer, why: String },
}

/// Why an execution got no report from the worker.
#[derive(Debug)]
pub enum ExecFailure {
    /// The worker did not answer by `timeout + KILL_GRACE` and was killed.
    Killed { cancelled: bool },
    /// The worker died or broke the protocol; `exit` says how it ended.
    Crashed { exit: String },
    /// Cancelled while waiting for the session's previous execution: nothing ran.
    CancelledWhileQueued,
}

/// A running worker and its connection.
#[derive(Debug)]
#[allow(
    deprecated,
    reason = "split halves let a cancel be written while a reply is being read"
)]
pub struct Worker {
    child: Child,
    pid: u32,
    reader: RecvHalf,
    writer: SendHalf,
    cgroup: Option<WorkerCgroup>,
}

impl Drop for Worker {
    fn drop(&mut self) {
        // kill_on_drop reaps the process; the cgroup is ours to remove.
        kill_group(self.pid);
        if let Some(cgroup) = self.cgroup.take() {
            cgroup.remove();
        }
    }
}

impl Worker {
    /// Starts a worker for one session and waits until its interpreter is ready.
    ///
    /// # Errors
    /// See [`SpawnError`].
    pub async fn spawn(
        config: &SupervisorConfig,
        module: &CachedModule,
        files: &SessionFiles,
        generation: u64,
        language: Language,
        limits: &SessionLimits,
    ) -> Result<(Self, ReadyInfo), SpawnError> {
        // Fail closed: no worker at all rather than one without a required layer. (The worker
        // checks again for itself: `--require` below.)
        config
            .jail
            .check_required()
            .map_err(|m| SpawnError::JailRequired {
                layer: m.layer,
                why: m.why,
            })?;
        // The socket and cgroup are named by the session's unique key; the directory name
        // (`<id>.<key>`) in the worker's command line tells an operator whose worker it is.
        let session_id = files.name.as_str();
        let workspace = files.app_path.as_path();
        let socket = config.socket_path(&files.key, generation);
        let _ = std::fs::remove_file(&socket);
        let name = socket
            .as_path()
            .to_fs_name::<GenericFilePath>()
            .map_err(SpawnError::Listen)?;
        // Mode 0600 is applied before bind, and the directory is 0700 anyway.
        let listener = ListenerOptions::new()
            .name(name)
            .mode(0o600)
            .create_tokio()
            .map_err(SpawnError::Listen)?;

        let mut command = Command::new(&config.worker_bin);
        command
            .arg(config.jail.entry.subcommand())
            .args(["--language", language.as_str()])
            .arg("--socket")
            .arg(&socket)
            .arg("--workspace")
            .arg(workspace)
            .arg("--module")
            .arg(&module.cwasm)
            .args(["--wasm-sha256", &module.wasm_sha256])
            .args(["--memory-bytes", &limits.memory_bytes.to_string()])
            .args(["--stdout-cap", &limits.stdout_cap.to_string()])
            .args(["--stderr-cap", &limits.stderr_cap.to_string()])
            .args(["--disk-quota-bytes", &limits.disk_quota_bytes.to_string()])
            .args(["--disk-quota-files", &limits.disk_quota_files.to_string()])
            .arg("--mount-rw")
            .arg(mount_arg("/tmp", &files.tmp_path));
        if let Some(data) = &config.data_dir {
            command.arg("--mount-ro").arg(mount_arg("/data", data));
        }
        if let Some((shared, writable)) = &config.shared_dir {
            command
                .arg(if *writable {
                    "--mount-rw"
                } else {
                    "--mount-ro"
                })
                .arg(mount_arg(crate::config::SHARED_GUEST_PATH, shared));
        }
        command.args(config.jail.worker_args());
        command
            .env_clear()
            .envs(
                ENV_ALLOW_LIST
                    .iter()
                    .filter_map(|k| std::env::var_os(k).map(|v| (*k, v))),
            )
            .current_dir(workspace)
            .stdin(Stdio::null())
            // The supervisor's stdout is the MCP channel: a worker never gets it.
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if config.jail.entry == WorkerEntry::JailProbe {
            // Tests only: what the probe attacks. Never given to a serving worker.
            if let Some(targets) = std::env::var_os(PROBE_TARGETS_VAR) {
                command.env(PROBE_TARGETS_VAR, targets);
            }
        }
        let jail = JailLimits::for_session(limits, language);
        let cgroup = match &config.cgroups {
            CgroupSupport::Delegated { root } => {
                match WorkerCgroup::create(
                    root,
                    &format!("worker-{session_id}-{generation}"),
                    limits,
                    jail.data_bytes,
                ) {
                    Ok(cgroup) => Some(cgroup),
                    Err(e) => {
                        tracing::warn!(session = %session_id, error = %e, "no cgroup for this worker");
                        None
                    }
                }
            }
            CgroupSupport::Unavailable { .. } => None,
        };
        crate::jail::apply(
            &mut command,
            jail,
            cgroup.as_ref().and_then(WorkerCgroup::procs_path),
        );
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                if let Some(cgroup) = &cgroup {
                    cgroup.remove();
                }
                return Err(SpawnError::Exec(e));
            }
        };
        let pid = child.id().unwrap_or_default();
        if let Some(stderr) = child.stderr.take() {
            forward_stderr(stderr, session_id.to_owned(), pid);
        }

        let accepted = tokio::select! {
            accepted = listener.accept() => accepted.map_err(SpawnError::Listen),
            status = child.wait() => Err(SpawnError::Died(describe_exit(status.ok()))),
            () = tokio::time::sleep(STARTUP_TIMEOUT) => Err(SpawnError::ConnectTimeout),
        };
        drop(listener); // unlinks the socket file: nothing else can connect from now on
        let _ = std::fs::remove_file(&socket);
        let stream = match accepted {
            Ok(stream) => stream,
            Err(e) => {
                kill_group(pid);
                let _ = child.wait().await;
                if let Some(cgroup) = &cgroup {
                    cgroup.remove();
                }
                return Err(e);
            }
        };
        let peer = stream
            .peer_creds()
            .ok()
            .and_then(|c| c.pid())
            .map(|p| p as u32);
        if peer != Some(pid) {
            kill_group(pid);
            let _ = child.wait().await;
            if let Some(cgroup) = &cgroup {
                cgroup.remove();
            }
            return Err(SpawnError::WrongPeer(peer));
        }
        #[allow(deprecated, reason = "see Worker")]
        let (reader, writer) = stream.split();
        let mut worker = Self {
            child,
            pid,
            reader,
            writer,
            cgroup,
        };
        let ready = tokio::time::timeout(STARTUP_TIMEOUT, worker.handshake()).await;
        match ready {
            Ok(Ok(info)) => {
                config.jail.record(&info.jail);
                Ok((worker, info))
            }
            Ok(Err(e)) => {
                let exit = worker.kill().await;
                Err(match e {
                    SpawnError::Died(_) => SpawnError::Died(exit),
                    other => other,
                })
            }
            Err(_) => {
                worker.kill().await;
                Err(SpawnError::ConnectTimeout)
            }
        }
    }

    async fn handshake(&mut self) -> Result<ReadyInfo, SpawnError> {
        let died = |e: FrameError| SpawnError::Died(e.to_string());
        write_frame(
            &mut self.writer,
            &Request::Hello {
                protocol_version: PROTOCOL_VERSION,
            },
        )
        .await
        .map_err(died)?;
        match read_frame::<Response>(&mut self.reader)
            .await
            .map_err(died)?
        {
            Some(Response::Ready(info)) => Ok(info),
            Some(Response::Failed { message }) => Err(SpawnError::Failed(message)),
            Some(other) => Err(SpawnError::Failed(format!(
                "unexpected first message {other:?}"
            ))),
            None => Err(SpawnError::Died(String::new())),
        }
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Runs one execution. Cancelling `cancel` asks the worker to interrupt it (state kept); a
    /// worker that does not answer by `timeout + KILL_GRACE` (or `KILL_GRACE` after a cancel) is
    /// killed.
    ///
    /// # Errors
    /// [`ExecFailure`] when no report came; the worker is dead afterwards either way.
    pub async fn execute(
        &mut self,
        request: Request,
        cancel: &CancellationToken,
    ) -> Result<ExecutionReport, ExecFailure> {
        let (execution_id, timeout_ms) = match &request {
            Request::Execute(r) => (r.execution_id.clone(), r.timeout_ms),
            Request::Command(c) => (c.execution_id.clone(), c.timeout_ms),
            other => unreachable!("not an execution: {other:?}"),
        };
        let timeout = Duration::from_millis(timeout_ms);
        if write_frame(&mut self.writer, &request).await.is_err() {
            return Err(ExecFailure::Crashed {
                exit: self.kill().await,
            });
        }
        let outcome = {
            let deadline = tokio::time::sleep(timeout + KILL_GRACE);
            tokio::pin!(deadline);
            let mut cancelled = false;
            let (reader, writer) = (&mut self.reader, &mut self.writer);
            // Pinned once: the frame reader is not cancel safe, so it must survive loop turns.
            let reply = read_frame::<Response>(reader);
            tokio::pin!(reply);
            loop {
                tokio::select! {
                    reply = &mut reply => break Ok(reply),
                    () = &mut deadline => break Err(ExecFailure::Killed { cancelled }),
                    () = cancel.cancelled(), if !cancelled => {
                        cancelled = true;
                        let cancel = Request::Cancel { execution_id: execution_id.clone() };
                        let _ = write_frame(writer, &cancel).await;
                        let sooner = tokio::time::Instant::now() + KILL_GRACE;
                        if sooner < deadline.deadline() {
                            deadline.as_mut().reset(sooner);
                        }
                    }
                }
            }
        };
        match outcome {
            Ok(Ok(Some(Response::Executed(report)))) if report.execution_id == execution_id => {
                Ok(report)
            }
            Ok(Ok(Some(other))) => {
                tracing::error!(pid = self.pid, reply = ?other, "worker broke the protocol");
                Err(ExecFailure::Crashed {
                    exit: self.kill().await,
                })
            }
            Ok(Ok(None) | Err(_)) => Err(ExecFailure::Crashed {
                exit: self.wait_or_kill().await,
            }),
            Err(killed) => {
                self.kill().await;
                Err(killed)
            }
        }
    }

    /// How the worker ended, if it has (reaping it); `None` while it runs.
    pub fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(describe_exit(Some(status))),
            Ok(None) => None,
            Err(_) => Some("unknown".into()),
        }
    }

    /// Kills the whole process group and reaps the worker. Returns how it ended.
    pub async fn kill(&mut self) -> String {
        kill_group(self.pid);
        describe_exit(self.child.wait().await.ok())
    }

    /// A worker whose socket closed is usually dead already: give it a moment to be reaped with
    /// its real exit status (the signal that killed it), then make sure.
    async fn wait_or_kill(&mut self) -> String {
        match tokio::time::timeout(Duration::from_millis(500), self.child.wait()).await {
            Ok(status) => describe_exit(status.ok()),
            Err(_) => self.kill().await,
        }
    }

    /// Asks the worker to exit, then kills it regardless.
    pub async fn shutdown(mut self) {
        let _ = write_frame(&mut self.writer, &Request::Shutdown).await;
        if tokio::time::timeout(Duration::from_millis(200), self.child.wait())
            .await
            .is_err()
        {
            self.kill().await;
        }
    }
}

/// `GUEST=HOST` for the worker's `--mount-*` options.
fn mount_arg(guest: &str, host: &Path) -> std::ffi::OsString {
    let mut arg = std::ffi::OsString::from(format!("{guest}="));
    arg.push(host);
    arg
}

/// SIGKILL to the worker's process group, then to the worker itself in case the group is gone.
pub fn kill_group(pid: u32) {
    let Ok(raw) = i32::try_from(pid) else { return };
    if raw <= 0 {
        return;
    }
    let _ = killpg(Pid::from_raw(raw), Signal::SIGKILL);
    let _ = kill(Pid::from_raw(raw), Signal::SIGKILL);
}

/// "exit status 3", "killed by SIGKILL", or "unknown".
pub fn describe_exit(status: Option<std::process::ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(s) => match (s.code(), s.signal()) {
            (Some(code), _) => format!("exit status {code}"),
            (None, Some(sig)) => match Signal::try_from(sig) {
                Ok(signal) => format!("killed by {signal}"),
                Err(_) => format!("killed by signal {sig}"),
            },
            _ => "unknown".into(),
        },
        None => "unknown".into(),
    }
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

#[cfg(test)]
mod tests {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;

    use super::*;

    #[test]
    fn exits_are_described_for_the_operator_and_the_client() {
        // A wait status: exit code in the high byte, or the signal in the low bits.
        assert_eq!(
            describe_exit(Some(ExitStatus::from_raw(0))),
            "exit status 0"
        );
        assert_eq!(
            describe_exit(Some(ExitStatus::from_raw(5 << 8))),
            "exit status 5"
        );
        assert_eq!(
            describe_exit(Some(ExitStatus::from_raw(Signal::SIGKILL as i32))),
            "killed by SIGKILL"
        );
        assert_eq!(
            describe_exit(Some(ExitStatus::from_raw(Signal::SIGSEGV as i32))),
            "killed by SIGSEGV"
        );
        assert_eq!(
            describe_exit(Some(ExitStatus::from_raw(100))),
            "killed by signal 100",
            "a signal number nix does not know"
        );
        assert_eq!(describe_exit(None), "unknown");
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
    fn killing_a_group_never_signals_ourselves_or_everyone() {
        // 0 would be our own process group, and -1 (u32::MAX) every process we may signal.
        kill_group(0);
        kill_group(u32::MAX);
        kill_group(1 << 31);
        // Still here.
        assert!(std::process::id() > 0);
    }

    #[test]
    fn a_worker_gets_its_own_hard_deadline_before_it_is_killed() {
        /// The worker traps an execution that ignores its interrupt this long after the
        /// timeout (`HARD_GRACE` in the worker's `host.rs`), then reports.
        const WORKER_HARD_GRACE: Duration = Duration::from_millis(400);
        assert!(
            KILL_GRACE >= WORKER_HARD_GRACE * 3,
            "the supervisor kills only a worker that missed its own deadline by far"
        );
        assert_eq!(ENV_ALLOW_LIST, ["RUST_LOG"]);
    }
}
