//! The data of a session's `Store` ([`HostState`]): the WASI context, the captures of stdout and
//! stderr, the memory limiter, the execution in progress, the cancel control and the disk quota,
//! and how an execution starts ([`HostState::begin`]) and ends in a report
//! ([`HostState::finish`]). [`DriverChannel`] is the seam to an interpreter driver that talks to
//! the host over fd 0 (Python's); the interpreter modules implement it, the host only calls it.

use std::any::Any;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sandbox_protocol::{ExecuteRequest, ExecutionReport, GuestError, Mount, Restart};
use wasmtime::{Caller, Memory, Result};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

use super::cancel::Control;
use super::clock::{ActiveExecution, SessionMonotonicClock, SoftInterrupt};
use super::file_mode::SharedFileModes;
use super::guest_quota::{self, GuestQuota};
use super::limits::{MemoryLimiter, fuel_for};
use super::written::WrittenFiles;
use crate::capture::Capture;
use crate::quota::{Quota, QuotaLimits, SharedQuota};

/// Wiggle's hostcall fuel for the calls the host makes itself (its glue's own default).
const HOSTCALL_FUEL: usize = 128 << 20;

/// Per-session settings fixed when the worker starts.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// Extra preopened directories: `/tmp`, read-only `/data`, the shared volume.
    pub mounts: Vec<Mount>,
    /// Linear-memory cap of the interpreter.
    pub memory_bytes: usize,
    pub stdout_cap: usize,
    pub stderr_cap: usize,
    /// The disk quota of `/app` and `/tmp`, shared by every interpreter instance of the session
    /// and its shell; `None` for no quota (build steps such as `compile-python`).
    pub quota: Option<SharedQuota>,
    /// When the guest's monotonic clock reads zero: now for a new interpreter, earlier for one
    /// restored from a snapshot, so that its clock goes on from where the snapshot left it.
    pub clock_since: Option<Instant>,
}

impl SessionConfig {
    /// Whether the session preopens, after `/app` and in this order, exactly the directories
    /// `guests` (the layout an instance was imaged or woken with: wasi-libc keeps the preopen
    /// table it found then, so an instance serves only a session laid out the same way).
    pub fn preopens_in_order(&self, guests: &[impl AsRef<str>]) -> bool {
        guests.len() == self.mounts.len()
            && (guests.iter())
                .zip(&self.mounts)
                .all(|(guest, mount)| guest.as_ref() == mount.guest)
    }

    /// The same settings, with what `/app` (at `workspace`) and a writable `/tmp` mount hold
    /// together bounded by `limits`. `/data` and the shared volume are not the session's own.
    pub fn with_disk_quota(mut self, limits: QuotaLimits, workspace: &Path) -> Self {
        let mut roots = vec![("/app".to_owned(), workspace.to_path_buf())];
        roots.extend(
            self.mounts
                .iter()
                .filter(|m| m.writable && m.guest == "/tmp")
                .map(|m| (m.guest.clone(), m.host.clone())),
        );
        self.quota = Some(Quota::new(limits, roots).into_shared());
        self
    }

    /// These settings for an instance that already ran in a store whose clock read zero at
    /// `base` (an interpreter woken before its session): its clock goes on, never back, unless
    /// the session resumes a clock of its own.
    pub fn continuing_clock(&self, base: Instant) -> Self {
        Self {
            clock_since: Some(self.clock_since.unwrap_or(base)),
            ..self.clone()
        }
    }
}

/// The other end of fd 0 for an interpreter whose driver talks to the host through it (the
/// Python REPL driver): it reads its request there and writes its status record. A channel
/// that acts at each read (a measurement stamping it) implements [`DriverChannel::before_read`].
///
/// `Any` lets the interpreter module take its own channel back out of a store that ended.
pub trait DriverChannel: Any + Send {
    /// The guest wrote `bytes` to fd 0.
    fn write(&mut self, bytes: &[u8]);

    /// The guest is about to read fd 0: at a request boundary, report what finished and wait
    /// for the next request. Called with the channel taken out of the state, so the store is
    /// the channel's to use.
    ///
    /// # Errors
    /// A trap that ends the interpreter (the supervisor went away).
    fn before_read(&mut self, caller: &mut Caller<'_, HostState>) -> Result<()> {
        let _ = caller;
        Ok(())
    }

    /// Up to `max` bytes of the request being served, consumed; none is end of file.
    fn read(&mut self, max: usize) -> &[u8];

    /// Whether a request is being handed over (part of it is still unread): an interrupt now
    /// would land in the driver's read and cut the request in two.
    fn handing_over(&self) -> bool {
        false
    }
}

/// What the interpreter said about one execution.
#[derive(Debug, Default)]
pub struct Outcome {
    pub result: Option<String>,
    pub error: Option<GuestError>,
    pub exit_code: Option<i32>,
    pub figures: Vec<sandbox_protocol::Figure>,
}

/// The data of a session's `Store`.
pub struct HostState {
    pub wasi: WasiP1Ctx,
    pub limiter: MemoryLimiter,
    pub stdout: Capture,
    /// Stdout is a shell pipe that takes no more than `stdout`'s cap (a command of the toolbox
    /// in a pipeline): a write past it ends the guest with [`super::stdio::BrokenPipe`], as
    /// SIGPIPE ends a process whose reader is gone, instead of running on for nothing.
    pub stdout_is_pipe: bool,
    pub stderr: Capture,
    /// The instance's exported memory, bound right after instantiation.
    pub memory: Option<Memory>,
    pub active: Option<ActiveExecution>,
    pub soft: SoftInterrupt,
    pub control: Arc<Control>,
    /// Answer of `sandbox.should_interrupt` (JavaScript).
    pub js_interrupt: bool,
    /// The driver's request and status channel on fd 0; `None` for JavaScript.
    pub driver: Option<Box<dyn DriverChannel>>,
    /// What a JavaScript execution reads from fd 0 (a shell pipe); empty otherwise.
    pub piped_stdin: VecDeque<u8>,
    /// The disk quota and which guest descriptors it charges.
    pub(super) quota: Option<GuestQuota>,
    /// Where the guest's monotonic clock starts.
    pub(super) clock_base: Instant,
    /// The files beneath `/app` the execution in progress wrote.
    pub written: WrittenFiles,
    /// Where `sandbox.file_mode` looks modes up: the shell's view of the session's mounts for a
    /// command of the toolbox, none for an interpreter.
    pub file_modes: Option<SharedFileModes>,
}

impl HostState {
    /// A fresh state: `/app` preopened read-write and the initial cwd, no environment from the
    /// host, no network, stdio handled by the shadows.
    ///
    /// # Errors
    /// When the workspace cannot be preopened.
    pub fn new(
        workspace: &Path,
        env: &[(&str, &str)],
        args: &[&str],
        config: &SessionConfig,
        soft: SoftInterrupt,
        control: Arc<Control>,
    ) -> Result<Self> {
        let clock_base = config.clock_since.unwrap_or_else(Instant::now);
        let mut builder = WasiCtxBuilder::new();
        // Guests run synchronously: a blocking file operation may block this thread instead of
        // going through Tokio's spawn_blocking and back, which cost a thread hand-off per call
        // (a file read is four or five calls: ~250 µs each time, `grep -r` over 1,000 files
        // took 350 ms).
        builder.allow_blocking_current_thread(true);
        builder
            .args(args)
            .envs(env)
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .monotonic_clock(SessionMonotonicClock(clock_base))
            .preopened_dir(workspace, "/app", FsPerms::ReadWrite)?;
        for mount in &config.mounts {
            let perms = if mount.writable {
                FsPerms::ReadWrite
            } else {
                FsPerms::ReadOnly
            };
            builder.preopened_dir(&mount.host, &mount.guest, perms)?;
        }
        let mounts: Vec<(&str, bool)> = config
            .mounts
            .iter()
            .map(|m| (m.guest.as_str(), m.writable))
            .collect();
        let quota = config.quota.clone().map(|q| GuestQuota::new(q, &mounts));
        Ok(Self {
            wasi: builder.build_p1(),
            limiter: MemoryLimiter::new(config.memory_bytes),
            stdout: Capture::new(config.stdout_cap),
            stdout_is_pipe: false,
            stderr: Capture::new(config.stderr_cap),
            memory: None,
            active: None,
            soft,
            control,
            js_interrupt: false,
            driver: None,
            piped_stdin: VecDeque::new(),
            quota,
            clock_base,
            written: WrittenFiles::default(),
            file_modes: None,
        })
    }

    /// Starts the clock and clears the per-execution state for `req`. The caller refuels.
    pub fn begin(&mut self, req: &ExecuteRequest) {
        self.stdout.clear();
        self.stderr.clear();
        self.written.clear();
        self.limiter.hit_cap = false;
        self.js_interrupt = false;
        self.control.set_current(Some(req.execution_id.clone()));
        let quota_mark = self.quota.as_mut().map_or(0, |q| {
            // The shell may have changed files since the last execution.
            q.begin_execution();
            q.refusals()
        });
        self.active = Some(ActiveExecution::start(req, quota_mark));
    }

    /// Ends the execution in progress and assembles its report.
    pub fn finish(
        &mut self,
        fuel_remaining: u64,
        outcome: Outcome,
        restart: Option<Restart>,
    ) -> ExecutionReport {
        let active = self.active.take();
        self.control.set_current(None);
        let (stdout, stdout_truncated) = self.stdout.take();
        let (stderr, stderr_truncated) = self.stderr.take();
        let memory_bytes = self.memory_size();
        let (id, duration, fuel_consumed) = match &active {
            Some(a) => (
                a.id.clone(),
                a.started.elapsed(),
                fuel_for(a.fuel_budget).saturating_sub(fuel_remaining),
            ),
            None => (String::new(), Duration::ZERO, 0),
        };
        let exit_code = match &outcome.error {
            None => 0,
            Some(_) => outcome.exit_code.filter(|c| *c != 0).unwrap_or(1),
        };
        let mut outcome = outcome;
        if let (Some(error), Some(active), Some(guest)) = (&mut outcome.error, &active, &self.quota)
        {
            guest_quota::explain_failure(guest, active.quota_mark, error);
        }
        ExecutionReport {
            execution_id: id,
            stdout,
            stderr,
            stdout_truncated,
            stderr_truncated,
            exit_code,
            result: outcome.result,
            error: outcome.error,
            fuel_consumed,
            duration_us: u64::try_from(duration.as_micros()).unwrap_or(u64::MAX),
            memory_bytes,
            restart,
            figures: outcome.figures,
            written: self.written.take(),
            state_follows: false,
        }
    }

    /// When the guest's monotonic clock read zero (see [`SessionConfig::continuing_clock`]).
    pub fn clock_base(&self) -> Instant {
        self.clock_base
    }

    /// The guest's monotonic clock now, in nanoseconds.
    pub fn clock_ns(&self) -> u64 {
        u64::try_from(self.clock_base.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// The guest descriptors open from `first` on (past stdio and the preopened directories):
    /// what a snapshot cannot carry. Probed through WASI up to the highest number the quota
    /// tracker has seen opened (`path_open` and `fd_renumber` are the only ways to get one).
    pub fn open_descriptors(&mut self, first: u32) -> Vec<u32> {
        use wasmtime_wasi::p1::types::Fd;
        use wasmtime_wasi::p1::wasi_snapshot_preview1::WasiSnapshotPreview1;
        let highest = (self.quota.as_ref())
            .and_then(|q| q.fds.keys().max().copied())
            .unwrap_or(0)
            .max(first);
        let mut no_memory: [u8; 0] = [];
        let mut gm = wiggle::GuestMemory::Unshared(&mut no_memory);
        (first..=highest)
            .filter(|n| {
                wasmtime_wasi::runtime::in_tokio(self.wasi.fd_fdstat_get(&mut gm, Fd::from(*n)))
                    .is_ok()
            })
            .collect()
    }

    /// Holds descriptor numbers `fds` (open in the interpreter a snapshot was taken of) with
    /// a read-only handle on `/app`'s directory each, so that a restored interpreter's stale
    /// file objects fail (a directory cannot be read or written as a file) instead of reaching
    /// whatever file would otherwise be opened under their number. WASI gives a new descriptor
    /// the lowest free number, so handles are opened until every number is held, and the ones
    /// opened on the way are closed. Returns the numbers that could not be held.
    pub fn hold_descriptors(&mut self, fds: &[u32]) -> Vec<u32> {
        use std::collections::BTreeSet;
        use wasmtime_wasi::p1::types::{Fd, Fdflags, Lookupflags, Oflags, Rights};
        use wasmtime_wasi::p1::wasi_snapshot_preview1::WasiSnapshotPreview1;
        use wasmtime_wasi::runtime::in_tokio;
        const APP: u32 = 3;
        let mut wanted: BTreeSet<u32> = fds.iter().copied().collect();
        let highest = wanted.last().copied().unwrap_or(0);
        let mut path = *b".";
        let mut gm = wiggle::GuestMemory::Unshared(&mut path);
        let mut passing = Vec::new();
        // What wiggle's glue sets before each call it makes: reading the path spends it.
        self.wasi.set_hostcall_fuel(HOSTCALL_FUEL);
        while !wanted.is_empty() {
            let opened = in_tokio(self.wasi.path_open(
                &mut gm,
                Fd::from(APP),
                Lookupflags::empty(),
                wiggle::GuestPtr::new((0, 1)),
                Oflags::DIRECTORY,
                Rights::FD_READDIR,
                Rights::empty(),
                Fdflags::empty(),
            ));
            let fd = match opened {
                Ok(fd) => u32::from(fd),
                Err(e) => {
                    tracing::debug!(error = ?e, "cannot open a descriptor to hold");
                    break;
                }
            };
            if !wanted.remove(&fd) {
                passing.push(fd);
            }
            if fd >= highest {
                break;
            }
        }
        for fd in passing {
            let _ = in_tokio(self.wasi.fd_close(&mut gm, Fd::from(fd)));
        }
        wanted.into_iter().collect()
    }

    /// Linear memory size as last granted by the limiter (it sees the initial allocation too).
    fn memory_size(&self) -> u64 {
        self.limiter.granted as u64
    }
}

#[cfg(test)]
pub(super) mod tests {
    use sandbox_protocol::ErrorKind;

    use super::*;

    /// A state over a fresh workspace, with 8 bytes of stdout and 4 of stderr.
    pub(in crate::host) fn host_state(soft: SoftInterrupt) -> (tempfile::TempDir, HostState) {
        let workspace = tempfile::tempdir().unwrap();
        let config = SessionConfig {
            mounts: Vec::new(),
            memory_bytes: 64 << 20,
            stdout_cap: 8,
            stderr_cap: 4,
            quota: None,
            clock_since: None,
        };
        let state = HostState::new(
            workspace.path(),
            &[],
            &["test"],
            &config,
            soft,
            Arc::new(Control::default()),
        )
        .unwrap();
        (workspace, state)
    }

    pub(in crate::host) fn request(id: &str, fuel: u64, timeout_ms: u64) -> ExecuteRequest {
        ExecuteRequest::user(id.into(), "1".into(), fuel, timeout_ms)
    }

    #[test]
    fn an_execution_is_reported_with_its_fuel_output_and_exit_code() {
        let (_dir, mut state) = host_state(SoftInterrupt::JsFlag);
        state.limiter.hit_cap = true;
        state.js_interrupt = true;
        state.stdout.push(b"stale");
        state.begin(&request("exec-1", 1_000, 30_000));
        assert!(
            !state.limiter.hit_cap && !state.js_interrupt,
            "reset by begin"
        );
        assert_eq!(state.control.current().as_deref(), Some("exec-1"));
        state.stdout.push(b"0123456789");
        state.stderr.push(b"err");
        let report = state.finish(fuel_for(1_000) - 250, Outcome::default(), None);
        assert_eq!(report.execution_id, "exec-1");
        assert_eq!(report.fuel_consumed, 250);
        assert_eq!(
            (report.stdout.as_slice(), report.stdout_truncated),
            (&b"01234567"[..], true)
        );
        assert_eq!(
            (report.stderr.as_slice(), report.stderr_truncated),
            (&b"err"[..], false)
        );
        assert_eq!((report.exit_code, report.error.is_none()), (0, true));
        assert!(state.active.is_none());
        assert!(state.control.current().is_none());

        let failed = |exit_code| Outcome {
            error: Some(GuestError {
                kind: ErrorKind::Runtime,
                name: None,
                message: "boom".into(),
            }),
            exit_code,
            ..Outcome::default()
        };
        for (exit_code, reported) in [(None, 1), (Some(0), 1), (Some(3), 3)] {
            state.begin(&request("exec-2", 1_000, 30_000));
            let report = state.finish(0, failed(exit_code), None);
            assert_eq!(report.exit_code, reported, "{exit_code:?}");
            assert_eq!(
                report.fuel_consumed,
                fuel_for(1_000),
                "the reserve counts too"
            );
            assert!(
                !report.stdout_truncated,
                "a new execution starts with empty captures"
            );
        }
    }

    #[test]
    fn the_disk_quota_covers_the_workspace_and_a_writable_tmp_only() {
        let config = SessionConfig {
            mounts: vec![
                Mount {
                    guest: "/tmp".into(),
                    host: "/srv/tmp".into(),
                    writable: true,
                },
                Mount {
                    guest: "/data".into(),
                    host: "/srv/data".into(),
                    writable: false,
                },
                Mount {
                    guest: "/shared".into(),
                    host: "/srv/shared".into(),
                    writable: true,
                },
            ],
            memory_bytes: 1,
            stdout_cap: 1,
            stderr_cap: 1,
            quota: None,
            clock_since: None,
        };
        let limits = QuotaLimits {
            bytes: 10,
            entries: 2,
        };
        let config = config.with_disk_quota(limits, Path::new("/srv/app"));
        let quota = crate::quota::lock(config.quota.as_ref().unwrap());
        assert_eq!(quota.limits(), limits);
        assert!(quota.covers("/app") && quota.covers("/tmp"));
        assert!(!quota.covers("/data") && !quota.covers("/shared"));
    }
}
