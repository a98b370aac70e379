//! Fork servers: one `sandbox-worker fork-server` per runtime, which maps the interpreter's
//! module and instantiates its memory image once, then forks a worker for each session
//! ([`ForkServer::fork`]). A new session's worker then skips exec, dynamic linking,
//! deserialising the module and instantiating it. Once a server has had nothing to do for
//! [`SPARE_DELAY`], it is asked to fork the next session's worker ahead (its spare, which
//! wakes its interpreter and waits): the first call of a session without a pool then costs the
//! jail and settling the interpreter into the session's directories. The spare is the
//! supervisor's child too, held here ([`Line`]) and reaped here if it ends unused.
//!
//! A forked worker is the supervisor's child (the server forks with `CLONE_PARENT`), so it is
//! reaped here through a pidfd ([`Forked`]) and killed by process group like an exec'd one.
//! Everything else about a worker is unchanged: the same plan, socket, peer check, jail and
//! handshake. A fork server that is not up, refuses, or dies costs nothing but speed: the
//! worker is exec'd as before ([`ForkServers::get`] hands out only live servers, and
//! [`ForkServers::keep_up`] starts them again).

use std::collections::HashMap;
use std::ffi::CString;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use interprocess::local_socket::tokio::Stream;
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use sandbox_protocol::{
    CachedModule, ForkAsk, ForkLimits, ForkReply, ForkRequest, Runtime, read_frame, write_frame,
};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::sync::oneshot;

use super::plan::{SpawnPlan, SpawnRequest};
use super::spawn::{self, SpawnGuard};
use super::{STARTUP_TIMEOUT, kill_group};
use crate::config::{STATE_EMPTY, SupervisorConfig};
use crate::jail::JailLimits;
use crate::runtimes::Extras;

/// How long a fork may take: a fork of a process with the image mapped takes about a
/// millisecond; this only guards against a wedged server.
const FORK_TIMEOUT: Duration = Duration::from_secs(5);

/// The memory cap of the server's own instance: the image is whatever size it is, and no guest
/// code runs in the server to grow it.
const SERVER_MEMORY_BYTES: u64 = 4 << 30;

/// The worker's subcommand for a fork server.
const FORK_SERVER_ENTRY: &str = "fork-server";

/// Bytes of padding in a fork server's command line (see the worker's `Title`).
const TITLE_ROOM: usize = 2048;

/// How often [`ForkServers::keep_up`] looks for a server to start or replace.
const UPKEEP_PERIOD: Duration = Duration::from_secs(2);

/// How long a server must have had no fork to do before it is asked for a spare
/// ([`ForkServer::spare_when_idle`]): long enough that the worker just forked has answered its
/// first call (on two cores, the spare's fork and wake would otherwise take a core from it),
/// short beside the time between sessions.
const SPARE_DELAY: Duration = Duration::from_millis(40);

/// The fork servers of a supervisor, one per runtime of the manifest.
#[derive(Debug, Default)]
pub struct ForkServers {
    enabled: bool,
    servers: Mutex<HashMap<Runtime, Arc<ForkServer>>>,
    /// Counts the servers started: each gets a socket of its own.
    started: AtomicU64,
}

impl ForkServers {
    /// No server is ever started unless `enabled` (`SANDBOX_FORK_SERVERS`).
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            ..Self::default()
        }
    }

    /// The live server of `runtime` that serves `module` with `extras`, if there is one.
    pub fn get(
        &self,
        runtime: Runtime,
        module: &CachedModule,
        extras: &Extras,
    ) -> Option<Arc<ForkServer>> {
        let servers = self.servers.lock().unwrap_or_else(|e| e.into_inner());
        let server = servers.get(&runtime)?;
        let serves = server.module == *module && server.extras == *extras;
        (server.is_alive() && serves).then(|| server.clone())
    }

    /// Makes sure each runtime of `modules` has a live server for its module (and extras),
    /// starting the missing ones (one at a time; a failure is logged and tried again on the
    /// next round).
    pub async fn keep_up(&self, config: &SupervisorConfig, modules: &Wanted) {
        if !self.enabled {
            return;
        }
        for (runtime, module, extras) in modules {
            if self
                .get(*runtime, module, extras)
                .is_some_and(|server| server.check_alive())
            {
                continue;
            }
            let generation = self.started.fetch_add(1, Ordering::Relaxed) + 1;
            let serving = (module, extras);
            match ForkServer::start(config, *runtime, serving, generation).await {
                Ok(server) => {
                    tracing::info!(%runtime, pid = server.pid, pristine = server.pristine, "fork server up");
                    let server = Arc::new(server);
                    server.spare_when_idle();
                    let old = (self.servers.lock().unwrap_or_else(|e| e.into_inner()))
                        .insert(*runtime, server);
                    drop(old);
                }
                Err(e) => {
                    tracing::warn!(%runtime, error = %e, "no fork server: workers are exec'd")
                }
            }
        }
    }

    /// [`ForkServers::keep_up`] every [`UPKEEP_PERIOD`], with the modules `modules` returns.
    pub async fn keep_up_forever<F, Fut>(&self, config: &SupervisorConfig, modules: F)
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Wanted>,
    {
        if !self.enabled {
            return;
        }
        loop {
            let wanted = modules().await;
            self.keep_up(config, &wanted).await;
            tokio::time::sleep(UPKEEP_PERIOD).await;
        }
    }

    /// Stops every server (at shutdown).
    pub fn stop(&self) {
        self.servers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}

/// One fork server process and its connection. Dropping it kills the server (never the workers
/// it forked: they are the supervisor's children, owned by their sessions).
/// The interpreters fork servers are wanted for, and what else their workers load.
pub type Wanted = Vec<(Runtime, CachedModule, Extras)>;

#[derive(Debug)]
pub struct ForkServer {
    module: CachedModule,
    extras: Extras,
    pid: u32,
    /// Whether it holds an instantiated interpreter for its workers to adopt.
    pristine: bool,
    /// The full state layer of that interpreter, woken, when it sent one: the base of its
    /// workers' first layers ([`sandbox_protocol::LayerKind::OverBase`]).
    base: Option<Arc<Vec<u8>>>,
    line: tokio::sync::Mutex<Line>,
    alive: AtomicBool,
    /// Counts the forks asked for, so that a spare is asked for only once none was for
    /// [`SPARE_DELAY`].
    forks: AtomicU64,
}

#[derive(Debug)]
struct Line {
    stream: Stream,
    /// Kills the server when dropped.
    process: SpawnGuard,
    /// The spare the server holds: the next fork's worker, ended and reaped here if it is
    /// never needed (it is the supervisor's child, as every worker).
    spare: Option<Forked>,
}

impl ForkServer {
    /// Starts the server of `runtime` for `module` and waits until it is ready, on placeholder
    /// directories laid out as every session's (so its instance fits the memory image).
    ///
    /// # Errors
    /// When it cannot be planned, started, or does not report ready in time.
    async fn start(
        config: &SupervisorConfig,
        runtime: Runtime,
        (module, extras): (&CachedModule, &Extras),
        generation: u64,
    ) -> Result<Self, String> {
        let placeholder = config.state_dir.join(STATE_EMPTY);
        let request = SpawnRequest {
            session: &format!("fork-server-{runtime}"),
            key: &format!("fork-{runtime}"),
            app: &placeholder,
            tmp: &placeholder,
            generation,
            runtime,
            limits: &config.defaults,
            module,
            extras,
            resume: false,
        };
        let mut plan = SpawnPlan::build(config, &request).map_err(|e| e.to_string())?;
        plan.args[0] = FORK_SERVER_ENTRY.into();
        plan.args.push("--memory-bytes".into());
        plan.args.push(SERVER_MEMORY_BYTES.to_string().into());
        // A forked worker shows its own command line in the server's: longer session paths
        // need the room.
        plan.args
            .push(format!("--title-room={}", ".".repeat(TITLE_ROOM)).into());
        plan.rlimits = JailLimits::FORK_SERVER;
        plan.cgroup = None;
        let (guard, mut stream) = spawn::launch(&plan, None)
            .await
            .map_err(|e| e.to_string())?;
        let pid = guard.pid();
        let ready = tokio::time::timeout(STARTUP_TIMEOUT, read_frame::<ForkReply>(&mut stream));
        match ready.await {
            Ok(Ok(Some(ForkReply::Ready { pristine, base }))) => Ok(Self {
                module: module.clone(),
                extras: extras.clone(),
                pid,
                pristine,
                base: base.map(Arc::new),
                line: tokio::sync::Mutex::new(Line {
                    stream,
                    process: guard,
                    spare: None,
                }),
                alive: AtomicBool::new(true),
                forks: AtomicU64::new(0),
            }),
            Ok(Ok(other)) => Err(format!("the fork server said {other:?} first")),
            Ok(Err(e)) => Err(format!("the fork server broke the protocol: {e}")),
            Err(_) => Err("the fork server did not report ready in time".into()),
        }
    }

    /// The base layer of the workers this server forks (see [`ForkServer::base`]'s field).
    pub fn base(&self) -> Option<Arc<Vec<u8>>> {
        self.base.clone()
    }

    fn is_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }

    /// Whether the process still runs (killed, it is reaped here and no longer handed out).
    /// A server busy forking is alive.
    fn check_alive(&self) -> bool {
        if let Ok(mut line) = self.line.try_lock() {
            if !matches!(line.process.try_wait(), Ok(None)) {
                tracing::warn!(pid = self.pid, "the fork server died");
                self.alive.store(false, Ordering::SeqCst);
            }
            // A spare that ended unused is reaped now, not at the next fork.
            if (line.spare.as_mut()).is_some_and(|spare| !matches!(spare.try_wait(), Ok(None))) {
                tracing::debug!(pid = self.pid, "the fork server's spare ended unused");
                line.spare = None;
            }
        }
        self.is_alive()
    }

    /// Forks the worker `plan` describes (its rlimits and working directory, and `cgroup_procs`
    /// to join). The worker is reaped and killed through the returned [`Forked`], even if the
    /// caller gives up before the answer arrives.
    ///
    /// # Errors
    /// When the server refuses, breaks the protocol, or does not answer in time (then it is
    /// no longer handed out).
    pub async fn fork(
        self: &Arc<Self>,
        plan: &SpawnPlan,
        cgroup_procs: Option<&CString>,
    ) -> Result<Forked, String> {
        let request = ForkRequest {
            args: plan
                .args
                .iter()
                .map(|arg| arg.as_bytes().to_vec())
                .collect(),
            cwd: plan.cwd.as_os_str().as_bytes().to_vec(),
            limits: ForkLimits {
                data_bytes: plan.rlimits.data_bytes,
                open_files: plan.rlimits.open_files,
                file_bytes: plan.rlimits.file_bytes,
                cpu_seconds: plan.rlimits.cpu_seconds,
            },
            cgroup_procs: cgroup_procs.map(|procs| procs.as_bytes().to_vec()),
        };
        // The exchange runs on its own task: a caller that gives up must not leave the line in
        // the middle of a frame, nor a forked worker that nobody reaps.
        let (answer, answered) = oneshot::channel();
        let server = self.clone();
        self.forks.fetch_add(1, Ordering::SeqCst);
        tokio::spawn(async move {
            let forked = server.exchange_fork(request).await;
            // Undelivered, a `Forked` kills and reaps its worker as it drops.
            let _ = answer.send(forked);
            server.spare_when_idle();
        });
        answered
            .await
            .unwrap_or_else(|_| Err("the fork was abandoned".into()))
    }

    /// Asks for a spare once this server has had no fork to do for [`SPARE_DELAY`] (a fork
    /// asked for meanwhile asks again after itself).
    fn spare_when_idle(self: &Arc<Self>) {
        let forks = self.forks.load(Ordering::SeqCst);
        let server = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(SPARE_DELAY).await;
            if server.forks.load(Ordering::SeqCst) != forks {
                return;
            }
            if let Err(e) = server.exchange_spare().await {
                tracing::debug!(error = %e, "the fork server keeps no spare");
            }
        });
    }

    /// Sends `ask` on the held line and reads the server's reply. A refusal is an error; a
    /// broken line, a hang-up or a late answer also mark the server gone.
    async fn ask(&self, line: &mut Line, ask: &ForkAsk) -> Result<ForkReply, String> {
        if !self.is_alive() {
            return Err("the fork server is gone".into());
        }
        let asked = async {
            write_frame(&mut line.stream, ask).await?;
            read_frame::<ForkReply>(&mut line.stream).await
        };
        let failure = match tokio::time::timeout(FORK_TIMEOUT, asked).await {
            Ok(Ok(Some(ForkReply::Refused { message }))) => return Err(message),
            Ok(Ok(Some(reply))) => return Ok(reply),
            Ok(Ok(None)) => "the fork server hung up".to_owned(),
            Ok(Err(e)) => format!("the fork server's line failed: {e}"),
            Err(_) => "the fork server did not answer in time".to_owned(),
        };
        self.alive.store(false, Ordering::SeqCst);
        Err(failure)
    }

    /// A reply that does not answer what was asked: the server is no longer trusted.
    fn misanswered(&self, reply: &ForkReply) -> String {
        self.alive.store(false, Ordering::SeqCst);
        format!("the fork server answered {reply:?}")
    }

    /// Asks for a worker: the spare the server held, when it handed it the session, or one
    /// forked anew.
    async fn exchange_fork(&self, request: ForkRequest) -> Result<Forked, String> {
        let mut line = self.line.lock().await;
        match self.ask(&mut line, &ForkAsk::Fork(request)).await? {
            ForkReply::Forked { pid } => match line.spare.take() {
                Some(spare) if spare.pid() == pid => Ok(spare),
                // Forked anew: the spare held had ended (dropped, it is reaped).
                _ => watch(pid),
            },
            other => Err(self.misanswered(&other)),
        }
    }

    /// Asks for a spare, held here from then on: under the same lock, so that no fork can take
    /// it before it is watched.
    async fn exchange_spare(&self) -> Result<(), String> {
        let mut line = self.line.lock().await;
        match self.ask(&mut line, &ForkAsk::Spare).await? {
            ForkReply::Spare { pid } => {
                if line.spare.as_ref().is_none_or(|held| held.pid() != pid) {
                    line.spare = Some(watch(pid)?);
                }
                Ok(())
            }
            other => Err(self.misanswered(&other)),
        }
    }
}

/// Watches the supervisor's child `pid` that a fork server forked; kills it when it cannot.
fn watch(pid: u32) -> Result<Forked, String> {
    Forked::open(pid).map_err(|e| {
        kill_group(pid);
        format!("cannot watch the forked worker {pid}: {e}")
    })
}

/// A forked worker, the supervisor's child, watched through a pidfd. Dropping it before it was
/// reaped kills it and reaps it.
#[derive(Debug)]
pub struct Forked {
    pid: u32,
    pidfd: Option<AsyncFd<OwnedFd>>,
    status: Option<ExitStatus>,
}

impl Forked {
    /// Watches the child `pid` (must be called inside the runtime).
    fn open(pid: u32) -> std::io::Result<Self> {
        let raw = i32::try_from(pid).map_err(std::io::Error::other)?;
        // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, raw, 0) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a descriptor the kernel just gave us, owned by nothing else.
        let owned = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        // SAFETY: `owned` is open and moves into the AsyncFd, which alone closes it.
        let pidfd = unsafe { AsyncFd::register_with_interest(owned, Interest::READABLE) }
            .map_err(std::io::Error::from)?;
        Ok(Self {
            pid,
            pidfd: Some(pidfd),
            status: None,
        })
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// How it ended, reaping it, or `None` while it runs.
    ///
    /// # Errors
    /// When waitid fails (it is not our child).
    pub fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        if self.status.is_some() {
            return Ok(self.status);
        }
        let Some(pidfd) = &self.pidfd else {
            return Ok(None);
        };
        self.status = reaped(pidfd)?;
        Ok(self.status)
    }

    /// Waits until it ends and reaps it.
    ///
    /// # Errors
    /// When waitid fails.
    pub async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let Some(pidfd) = &self.pidfd else {
            return Err(std::io::Error::other("no pidfd"));
        };
        let status = reap(pidfd).await?;
        self.status = Some(status);
        Ok(status)
    }
}

/// The child behind `pidfd` reaped, if it has ended.
fn reaped(pidfd: &AsyncFd<OwnedFd>) -> std::io::Result<Option<ExitStatus>> {
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG;
    Ok(match waitid(Id::PIDFd(pidfd.get_ref().as_fd()), flags)? {
        WaitStatus::Exited(_, code) => Some(ExitStatus::from_raw((code & 0xff) << 8)),
        WaitStatus::Signaled(_, signal, core) => Some(ExitStatus::from_raw(
            signal as i32 | if core { 0x80 } else { 0 },
        )),
        _ => None,
    })
}

/// Waits until the child behind `pidfd` ends and reaps it.
async fn reap(pidfd: &AsyncFd<OwnedFd>) -> std::io::Result<ExitStatus> {
    loop {
        if let Some(status) = reaped(pidfd)? {
            return Ok(status);
        }
        let mut ready = pidfd.readable().await?;
        ready.clear_ready();
    }
}

impl Drop for Forked {
    fn drop(&mut self) {
        if matches!(self.try_wait(), Ok(Some(_)) | Err(_)) {
            return;
        }
        kill_group(self.pid);
        // A SIGKILLed process is gone in moments; it is reaped off the caller's path. The task
        // owns the descriptor only, never a `Forked`: a runtime shutting down drops a task
        // spawned on it at once, and a `Forked` dropped there would spawn again, without end.
        // Dropped so, the child is left to init, as the server is exiting.
        match (tokio::runtime::Handle::try_current(), self.pidfd.take()) {
            (Ok(runtime), Some(pidfd)) => {
                runtime.spawn(async move {
                    let _ = reap(&pidfd).await;
                });
            }
            _ => {
                let _ = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(self.pid as i32), None);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;
    use crate::worker::describe_exit;

    /// A child of this process that only a [`Forked`] reaps, as a fork server's worker is.
    fn child(script: &str) -> u32 {
        let child = Command::new("sh").args(["-c", script]).spawn().unwrap();
        let pid = child.id();
        // std's handle would never wait: the pidfd does.
        std::mem::forget(child);
        pid
    }

    #[tokio::test]
    async fn a_child_is_reaped_through_its_pidfd_with_its_status() {
        for (script, described) in [
            ("exit 42", "exit status 42"),
            (
                "exit 7",
                "exit status 7 (could not apply a required jail layer)",
            ),
            ("kill -9 $$", "killed by SIGKILL"),
        ] {
            let mut forked = Forked::open(child(script)).unwrap();
            let status = forked.wait().await.unwrap();
            assert_eq!(describe_exit(Some(status)), described, "{script}");
            assert_eq!(
                forked.try_wait().unwrap(),
                Some(status),
                "a reaped status is remembered"
            );
        }
    }

    #[tokio::test]
    async fn a_running_child_is_seen_running_and_dropping_it_kills_and_reaps_it() {
        let pid = child("exec sleep 100");
        let mut forked = Forked::open(pid).unwrap();
        assert_eq!(forked.try_wait().unwrap(), None);
        drop(forked);
        let gone = async {
            while std::path::Path::new(&format!("/proc/{pid}")).exists() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(5), gone)
            .await
            .expect("killed and reaped: not even a zombie is left");
    }

    /// A task holding a running child's `Forked` is dropped as its runtime shuts down (as the
    /// server's tasks are at exit): the reaping it spawns is dropped at once too, and must not
    /// spawn another while the child is still dying, which once spawned without end and
    /// overflowed the stack. A child with much memory takes long enough to die (as a worker
    /// does), and a small stack is soon full, for that to show every time.
    #[test]
    fn a_child_dropped_while_its_runtime_shuts_down_is_killed_once() {
        let pid =
            child("exec python3 -c 'import time; held = b\"x\" * (256 << 20); time.sleep(100)'");
        let resident_mib = || {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            (status.lines())
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .map_or(0, |kib| kib >> 10)
        };
        // A child that never gets there (no python3, no memory) fails the test, never hangs it.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while resident_mib() < 256 {
            assert!(
                std::time::Instant::now() < deadline,
                "the child never held 256 MiB"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_stack_size(32 * 1024)
            .enable_all()
            .build()
            .unwrap();
        let (held, holding) = std::sync::mpsc::channel();
        runtime.spawn(async move {
            let forked = Forked::open(pid).unwrap();
            held.send(()).unwrap();
            std::future::pending::<()>().await;
            drop(forked);
        });
        holding.recv().unwrap();
        drop(runtime);
        // Killed, and reaped by whoever outlives the runtime (init, for the server) unless
        // the reaping ran first.
        let status = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(pid as i32), None);
        assert!(
            matches!(
                status,
                Ok(WaitStatus::Signaled(
                    _,
                    nix::sys::signal::Signal::SIGKILL,
                    _
                )) | Err(nix::errno::Errno::ECHILD)
            ),
            "{status:?}"
        );
    }
}
