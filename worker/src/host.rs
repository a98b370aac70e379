//! The store data of a session (`HostState`) and the host side of its WASI.
//!
//! Three WASI p1 calls are shadowed; everything else is wasmtime-wasi's own implementation:
//! - `fd_write` on fd 1 and 2 goes to capped [`Capture`]s (never trapping the guest), and on fd 0
//!   to the Python driver's status channel;
//! - `fd_read` on fd 0 is the Python driver's request channel (see `python.rs`);
//! - `poll_oneoff` with only clock subscriptions (how `time.sleep` ends up here) is implemented
//!   here so a sleep wakes at the execution's soft deadline or on cancel. Epoch interruption
//!   cannot reach a guest blocked inside the host, so without this `time.sleep(100)` would
//!   ignore every timeout.
//!
//! The calls that grow files in `/app` and `/tmp` (`fd_write` and `fd_pwrite` on files,
//! `path_open` with `O_CREAT`, `path_create_directory`, links, `fd_filestat_set_size`) are
//! shadowed too, to charge the session's disk quota first (`quota::wasi`).
//!
//! The epoch callback ([`on_epoch`]) enforces each execution's deadlines: at the soft deadline
//! (or on cancel) it asks the interpreter to stop by itself, keeping its state; at the hard
//! deadline it traps.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sandbox_protocol::{ErrorKind, ExecuteRequest, ExecutionReport, GuestError, Restart};
use wasmtime::{
    Caller, Engine, Linker, Memory, ResourceLimiter, Result, StoreContextMut, Trap, UpdateDeadline,
    format_err,
};
use wasmtime_wasi::p1::{WasiP1Ctx, wasi_snapshot_preview1 as wasi};
use wasmtime_wasi::{FsPerms, HostMonotonicClock, WasiCtxBuilder};
use wiggle::GuestMemory;

use crate::capture::Capture;
use crate::python::StdinFeed;
use crate::quota::{self, SharedQuota};

/// How long an interpreter gets to stop by itself after the soft interrupt before it is trapped.
/// Long enough for a `KeyboardInterrupt` to unwind through `finally` blocks, short enough that
/// `timeout + grace` stays well inside the supervisor's own kill deadline.
pub const HARD_GRACE: Duration = Duration::from_millis(400);

/// Fuel granted beyond an execution's budget. The budget itself is enforced softly: once it is
/// used up the interpreter is interrupted like on a timeout and keeps its state. The reserve
/// (about a quarter second of CPU) pays for unwinding and printing the traceback; only code that
/// burns through it too is trapped.
pub const FUEL_RESERVE: u64 = 2_000_000_000;

/// A pessimistic rate of fuel use (units per second) for code whose fuel counter has not been
/// written back. Compiled wasm keeps fuel in a register and only stores it at calls, so a loop
/// without calls (`while True: pass` inside CPython's eval loop) shows the same reading at every
/// epoch tick; its real use is estimated from the time spent at that reading.
const STALE_FUEL_RATE: f64 = 1.2e10;

/// The fuel to put in the store for an execution with this budget.
pub fn fuel_for(budget: u64) -> u64 {
    budget.saturating_add(FUEL_RESERVE)
}

/// WASI errno values (wasi_snapshot_preview1) the shadows return.
mod errno {
    pub const SUCCESS: i32 = 0;
    pub const BADF: i32 = 8;
    pub const FAULT: i32 = 21;
    pub const INVAL: i32 = 28;
}

/// A host directory the guest sees at `guest` (besides `/app`, the workspace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub guest: String,
    pub host: std::path::PathBuf,
    pub writable: bool,
}

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
}

/// What the supervisor can tell a running worker between frames; shared with the socket reader.
#[derive(Debug, Default)]
pub struct Control {
    cancel: AtomicBool,
    current: Mutex<Option<String>>,
    /// The shell command line running, if any, and its cancel flag.
    shell: Mutex<Option<(String, Arc<AtomicBool>)>>,
}

impl Control {
    /// Asks the execution or command `execution_id` to stop; an interpreter run started by that
    /// command (id `<command id>/<n>`) stops too. Returns false when nothing matched.
    pub fn request_cancel(&self, execution_id: &str) -> bool {
        let mut found = false;
        if let Some((id, flag)) = &*self.shell.lock().unwrap_or_else(|e| e.into_inner()) {
            if id == execution_id {
                flag.store(true, Ordering::SeqCst);
                found = true;
            }
        }
        let current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        let matches = current.as_deref().is_some_and(|c| {
            c == execution_id
                || c.strip_prefix(execution_id)
                    .is_some_and(|rest| rest.starts_with('/'))
        });
        if matches {
            self.cancel.store(true, Ordering::SeqCst);
            found = true;
        }
        found
    }

    /// Registers the shell command line now running and returns its cancel flag.
    pub fn start_shell(&self, execution_id: &str) -> Arc<AtomicBool> {
        let flag = Arc::new(AtomicBool::new(false));
        *self.shell.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((execution_id.to_owned(), flag.clone()));
        flag
    }

    pub fn end_shell(&self) {
        *self.shell.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Makes `execution_id` the current run. A run of a shell command line (`<command>/<n>`)
    /// starts already cancelled when its command was: the cancel may have reached the worker
    /// after the shell's last look at its flag. The flag is read while `current` is locked, and
    /// `request_cancel` sets the flag before it takes that lock, so one of the two always sees
    /// the other.
    fn set_current(&self, execution_id: Option<String>) {
        let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        let inherited = execution_id.as_deref().is_some_and(|id| {
            self.shell
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
                .is_some_and(|(command, flag)| {
                    flag.load(Ordering::SeqCst)
                        && id
                            .strip_prefix(command.as_str())
                            .is_some_and(|rest| rest.starts_with('/'))
                })
        });
        *current = execution_id;
        self.cancel.store(inherited, Ordering::SeqCst);
    }

    fn cancel_requested(&self) -> bool {
        self.cancel.load(Ordering::SeqCst)
    }
}

/// Why an execution was asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InterruptCause {
    Timeout,
    Cancel,
    OutOfFuel,
}

impl InterruptCause {
    pub fn kind(self) -> ErrorKind {
        match self {
            InterruptCause::Timeout => ErrorKind::Timeout,
            InterruptCause::Cancel => ErrorKind::Cancelled,
            InterruptCause::OutOfFuel => ErrorKind::OutOfFuel,
        }
    }
}

impl ActiveExecution {
    /// The error for an execution the interpreter stopped by itself after our soft interrupt
    /// (`how` names what the guest saw, e.g. "KeyboardInterrupt"); the session state is intact.
    pub fn soft_stop_error(&self, cause: InterruptCause, how: &str) -> (ErrorKind, String) {
        let message = match cause {
            InterruptCause::Timeout => format!(
                "the execution exceeded its {:.1} s timeout and was interrupted ({how}); the session state is intact",
                self.timeout.as_secs_f64()
            ),
            InterruptCause::OutOfFuel => format!(
                "the execution used up its fuel budget of {} (its CPU allowance) and was interrupted ({how}); the session state is intact",
                self.fuel_budget
            ),
            InterruptCause::Cancel => {
                format!("the execution was cancelled ({how}); the session state is intact")
            }
        };
        (cause.kind(), message)
    }
}

/// The execution in progress: its budget and deadlines.
#[derive(Debug)]
pub struct ActiveExecution {
    pub id: String,
    pub started: Instant,
    pub fuel_budget: u64,
    pub timeout: Duration,
    soft_deadline: Instant,
    hard_deadline: Instant,
    /// Set once the soft interrupt has been delivered.
    pub interrupted: Option<InterruptCause>,
    /// The last fuel reading and when it was first seen (see [`STALE_FUEL_RATE`]).
    fuel_reading: Option<(u64, Instant)>,
    /// The quota's refusal count when the execution started: a refusal after it explains a
    /// failure the interpreter only saw as an errno.
    quota_mark: u64,
}

impl ActiveExecution {
    /// Fuel left, allowing for a counter that has not been written back since the last tick.
    fn estimated_fuel_left(&mut self, reading: u64, now: Instant) -> u64 {
        match self.fuel_reading {
            Some((seen, since)) if seen == reading => {
                let stale = (now - since).as_secs_f64() * STALE_FUEL_RATE;
                reading.saturating_sub(stale as u64)
            }
            _ => {
                self.fuel_reading = Some((reading, now));
                reading
            }
        }
    }
}

/// How an interpreter is asked to stop while keeping its state.
#[derive(Debug, Clone, Copy)]
pub enum SoftInterrupt {
    /// Write 1 to CPython's SIGINT bookkeeping words, exactly what its C signal handler does; the
    /// eval loop then raises `KeyboardInterrupt`. Addresses are specific to one binary.
    PythonSignal(&'static [u32]),
    /// The QuickJS guest polls `sandbox.should_interrupt`, which returns this flag.
    JsFlag,
    /// No cooperative stop: trap at the soft deadline.
    None,
}

/// Caps linear memory and remembers that the guest hit the cap, so an allocation failure is
/// reported as `out_of_memory` without reading any message text.
#[derive(Debug)]
pub struct MemoryLimiter {
    cap: usize,
    pub hit_cap: bool,
    /// Largest size granted so far: the memory's current size, since memories never shrink.
    pub granted: usize,
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _max: Option<usize>,
    ) -> Result<bool> {
        if desired > self.cap {
            self.hit_cap = true;
            return Ok(false);
        }
        self.granted = self.granted.max(desired);
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _max: Option<usize>,
    ) -> Result<bool> {
        /// Function tables of our interpreters have a few thousand entries; growth past this is
        /// hostile or a bug.
        const MAX_TABLE_ELEMENTS: usize = 1 << 20;
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}

/// WASI's monotonic clock, counted from an instant this module also knows, so absolute-time
/// sleeps in `poll_oneoff` can be converted without asking wasmtime-wasi.
struct SessionMonotonicClock(Instant);

impl HostMonotonicClock for SessionMonotonicClock {
    fn resolution(&self) -> u64 {
        1
    }
    fn now(&self) -> u64 {
        u64::try_from(self.0.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

/// The data of a session's `Store`.
pub struct HostState {
    pub wasi: WasiP1Ctx,
    pub limiter: MemoryLimiter,
    pub stdout: Capture,
    pub stderr: Capture,
    /// The instance's exported memory, bound right after instantiation.
    pub memory: Option<Memory>,
    pub active: Option<ActiveExecution>,
    pub soft: SoftInterrupt,
    pub control: Arc<Control>,
    /// Answer of `sandbox.should_interrupt` (JavaScript).
    pub js_interrupt: bool,
    /// The Python driver's request and status channel on fd 0; `None` for JavaScript.
    pub stdin: Option<StdinFeed>,
    /// What a JavaScript execution reads from fd 0 (a shell pipe); empty otherwise.
    pub piped_stdin: std::collections::VecDeque<u8>,
    /// The disk quota and which guest descriptors it charges.
    pub(crate) quota: Option<quota::wasi::GuestQuota>,
    clock_base: Instant,
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
        let clock_base = Instant::now();
        let mut builder = WasiCtxBuilder::new();
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
        let quota = config
            .quota
            .clone()
            .map(|q| quota::wasi::GuestQuota::new(q, &mounts));
        Ok(Self {
            wasi: builder.build_p1(),
            limiter: MemoryLimiter {
                cap: config.memory_bytes,
                hit_cap: false,
                granted: 0,
            },
            stdout: Capture::new(config.stdout_cap),
            stderr: Capture::new(config.stderr_cap),
            memory: None,
            active: None,
            soft,
            control,
            js_interrupt: false,
            stdin: None,
            piped_stdin: std::collections::VecDeque::new(),
            quota,
            clock_base,
        })
    }

    /// Starts the clock and clears the per-execution state for `req`. The caller refuels.
    pub fn begin(&mut self, req: &ExecuteRequest) {
        let now = Instant::now();
        let timeout = Duration::from_millis(req.timeout_ms);
        self.stdout.clear();
        self.stderr.clear();
        self.limiter.hit_cap = false;
        self.js_interrupt = false;
        self.control.set_current(Some(req.execution_id.clone()));
        let quota_mark = self.quota.as_mut().map_or(0, |q| {
            // The shell may have changed files since the last execution.
            q.forget_lengths();
            q.refusals()
        });
        self.active = Some(ActiveExecution {
            id: req.execution_id.clone(),
            started: now,
            fuel_budget: req.fuel,
            timeout,
            soft_deadline: now + timeout,
            hard_deadline: now + timeout + HARD_GRACE,
            interrupted: None,
            fuel_reading: None,
            quota_mark,
        });
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
            quota::wasi::explain_failure(guest, active.quota_mark, error);
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
        }
    }

    /// Linear memory size as last granted by the limiter (it sees the initial allocation too).
    fn memory_size(&self) -> u64 {
        self.limiter.granted as u64
    }
}

/// What the interpreter said about one execution.
#[derive(Debug, Default)]
pub struct Outcome {
    pub result: Option<String>,
    pub error: Option<GuestError>,
    pub exit_code: Option<i32>,
}

/// Classifies a trap or error that ended a guest call during `active`.
pub fn classify_trap(err: &wasmtime::Error, state: &HostState) -> GuestError {
    let interrupted = state.active.as_ref().and_then(|a| a.interrupted);
    let timeout_secs = state
        .active
        .as_ref()
        .map_or(0.0, |a| a.timeout.as_secs_f64());
    if let Some(exit) = err.downcast_ref::<wasmtime_wasi::I32Exit>() {
        return GuestError {
            kind: ErrorKind::Exit,
            name: Some("SystemExit".into()),
            message: format!("the interpreter exited with status {}", exit.0),
        };
    }
    match err.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => GuestError {
            kind: ErrorKind::OutOfFuel,
            name: None,
            message: "the execution used up its fuel budget (its CPU allowance)".into(),
        },
        Some(Trap::Interrupt) => match interrupted.unwrap_or(InterruptCause::Timeout) {
            InterruptCause::Timeout => GuestError {
                kind: ErrorKind::Timeout,
                name: None,
                message: format!(
                    "the execution exceeded its {timeout_secs:.1} s timeout and did not stop when interrupted"
                ),
            },
            InterruptCause::Cancel => GuestError {
                kind: ErrorKind::Cancelled,
                name: None,
                message: "the execution was cancelled and did not stop when interrupted".into(),
            },
            InterruptCause::OutOfFuel => GuestError {
                kind: ErrorKind::OutOfFuel,
                name: None,
                message: "the execution used up its fuel budget (its CPU allowance) and did not stop when interrupted".into(),
            },
        },
        Some(Trap::StackOverflow) => GuestError {
            kind: ErrorKind::StackOverflow,
            name: None,
            message: "maximum call stack exceeded (recursion too deep)".into(),
        },
        _ if state.limiter.hit_cap => GuestError {
            kind: ErrorKind::OutOfMemory,
            name: None,
            message: "the interpreter ran out of memory (session memory cap reached)".into(),
        },
        Some(trap) => GuestError {
            kind: ErrorKind::System,
            name: None,
            message: format!("the interpreter crashed: {trap}"),
        },
        None => GuestError {
            kind: ErrorKind::System,
            name: None,
            message: "the interpreter failed inside the host".into(),
        },
    }
}

/// The epoch-deadline callback: runs every [`crate::engine::EPOCH_TICK`] while guest code runs.
///
/// # Errors
/// Never; the signature is Wasmtime's.
pub fn on_epoch(mut ctx: StoreContextMut<'_, HostState>) -> Result<UpdateDeadline> {
    let now = Instant::now();
    let fuel_left = ctx.get_fuel().unwrap_or(u64::MAX);
    let state = ctx.data_mut();
    let cancel = state.control.cancel_requested();
    let soft = state.soft;
    let Some(active) = state.active.as_mut() else {
        return Ok(UpdateDeadline::Continue(1));
    };
    if active.interrupted.is_none() {
        let cause = if cancel {
            Some(InterruptCause::Cancel)
        } else if active.estimated_fuel_left(fuel_left, now) <= FUEL_RESERVE {
            Some(InterruptCause::OutOfFuel)
        } else if now >= active.soft_deadline {
            Some(InterruptCause::Timeout)
        } else {
            None
        };
        if let Some(cause) = cause {
            active.interrupted = Some(cause);
            active.hard_deadline = now + HARD_GRACE;
            match soft {
                SoftInterrupt::PythonSignal(addresses) => write_words(&mut ctx, addresses, 1),
                SoftInterrupt::JsFlag => ctx.data_mut().js_interrupt = true,
                SoftInterrupt::None => return Ok(UpdateDeadline::Interrupt),
            }
            return Ok(UpdateDeadline::Continue(1));
        }
    }
    if now >= active.hard_deadline {
        return Ok(UpdateDeadline::Interrupt);
    }
    Ok(UpdateDeadline::Continue(1))
}

/// Writes `value` as a little-endian `u32` at each address of the guest's memory.
pub fn write_words(ctx: &mut StoreContextMut<'_, HostState>, addresses: &[u32], value: u32) {
    let Some(memory) = ctx.data().memory else {
        return;
    };
    let data = memory.data_mut(&mut *ctx);
    for &addr in addresses {
        let at = addr as usize;
        if let Some(word) = data.get_mut(at..at + 4) {
            word.copy_from_slice(&value.to_le_bytes());
        }
    }
}

/// Reads a little-endian integer of `N` bytes at `at`.
fn read_le<const N: usize>(mem: &[u8], at: usize) -> Option<[u8; N]> {
    mem.get(at..at.checked_add(N)?)?.try_into().ok()
}

pub fn read_u32(mem: &[u8], at: usize) -> Option<u32> {
    read_le::<4>(mem, at).map(u32::from_le_bytes)
}

fn read_u64(mem: &[u8], at: usize) -> Option<u64> {
    read_le::<8>(mem, at).map(u64::from_le_bytes)
}

pub fn write_u32(mem: &mut [u8], at: usize, value: u32) -> bool {
    match at.checked_add(4).and_then(|end| mem.get_mut(at..end)) {
        Some(slot) => {
            slot.copy_from_slice(&value.to_le_bytes());
            true
        }
        None => false,
    }
}

fn write_bytes(mem: &mut [u8], at: usize, bytes: &[u8]) -> bool {
    match at
        .checked_add(bytes.len())
        .and_then(|end| mem.get_mut(at..end))
    {
        Some(slot) => {
            slot.copy_from_slice(bytes);
            true
        }
        None => false,
    }
}

/// The `(address, length)` pairs of a guest iovec array, bounds-checked.
pub fn iovecs(mem: &[u8], ptr: i32, count: i32) -> Option<Vec<(usize, usize)>> {
    let (ptr, count) = (ptr as u32 as usize, count as u32 as usize);
    // 1024 is IOV_MAX; a larger count is hostile.
    if count > 1024 {
        return None;
    }
    (0..count)
        .map(|i| {
            let at = ptr.checked_add(i * 8)?;
            let (buf, len) = (read_u32(mem, at)? as usize, read_u32(mem, at + 4)? as usize);
            mem.get(buf..buf.checked_add(len)?)?;
            Some((buf, len))
        })
        .collect()
}

/// The guest's memory and our state, borrowed together.
pub(crate) fn memory_and_state<'a>(
    caller: &'a mut Caller<'_, HostState>,
) -> Result<(&'a mut [u8], &'a mut HostState)> {
    let memory = caller
        .data()
        .memory
        .ok_or_else(|| format_err!("guest memory is not bound"))?;
    Ok(memory.data_and_store_mut(caller))
}

/// Builds the linker shared by both runtimes: wasmtime-wasi's p1 plus our shadows.
///
/// # Errors
/// When Wasmtime refuses a definition (a build defect).
pub fn build_linker(engine: &Engine) -> Result<Linker<HostState>> {
    let mut linker: Linker<HostState> = Linker::new(engine);
    wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |s: &mut HostState| &mut s.wasi)?;
    linker.allow_shadowing(true);

    linker.func_wrap(
        "wasi_snapshot_preview1",
        "fd_write",
        |mut caller: Caller<'_, HostState>,
         fd: i32,
         iovs: i32,
         iovs_len: i32,
         nwritten: i32|
         -> Result<i32> {
            if !(0..=2).contains(&fd) {
                // Files: charged to the disk quota when they are in /app or /tmp.
                return quota::wasi::write(&mut caller, fd, iovs, iovs_len, None, nwritten);
            }
            let (mem, state) = memory_and_state(&mut caller)?;
            if fd == 0 && state.stdin.is_none() {
                return Ok(errno::BADF);
            }
            let Some(vecs) = iovecs(mem, iovs, iovs_len) else {
                return Ok(errno::FAULT);
            };
            let mut total = 0usize;
            for (buf, len) in vecs {
                let bytes = &mem[buf..buf + len];
                match fd {
                    0 => state
                        .stdin
                        .as_mut()
                        .expect("checked above")
                        .status
                        .extend_from_slice(bytes),
                    1 => state.stdout.push(bytes),
                    _ => state.stderr.push(bytes),
                }
                total += len;
            }
            if !write_u32(mem, nwritten as u32 as usize, total as u32) {
                return Ok(errno::FAULT);
            }
            Ok(errno::SUCCESS)
        },
    )?;

    linker.func_wrap(
        "wasi_snapshot_preview1",
        "fd_read",
        |mut caller: Caller<'_, HostState>,
         fd: i32,
         iovs: i32,
         iovs_len: i32,
         nread: i32|
         -> Result<i32> {
            if fd == 0 {
                return crate::python::read_stdin(&mut caller, iovs, iovs_len, nread);
            }
            let (mem, state) = memory_and_state(&mut caller)?;
            let mut gm = GuestMemory::Unshared(mem);
            wasmtime_wasi::runtime::in_tokio(wasi::fd_read(
                &mut state.wasi,
                &mut gm,
                fd,
                iovs,
                iovs_len,
                nread,
            ))
        },
    )?;

    linker.func_wrap(
        "wasi_snapshot_preview1",
        "poll_oneoff",
        |mut caller: Caller<'_, HostState>,
         subs: i32,
         events: i32,
         count: i32,
         nevents: i32|
         -> Result<i32> {
            let (mem, state) = memory_and_state(&mut caller)?;
            if let Some(errno) = poll_clocks(mem, state, subs, events, count, nevents) {
                return Ok(errno);
            }
            let mut gm = GuestMemory::Unshared(mem);
            wasmtime_wasi::runtime::in_tokio(wasi::poll_oneoff(
                &mut state.wasi,
                &mut gm,
                subs,
                events,
                count,
                nevents,
            ))
        },
    )?;

    quota::wasi::add_to_linker(&mut linker)?;

    linker.func_wrap(
        "sandbox",
        "should_interrupt",
        |caller: Caller<'_, HostState>| -> i32 { i32::from(caller.data().js_interrupt) },
    )?;
    Ok(linker)
}

/// Size of a WASI p1 `subscription` and of an `event`.
const SUBSCRIPTION_SIZE: usize = 48;
const EVENT_SIZE: usize = 32;

/// `poll_oneoff` for clock-only subscriptions; `None` hands the call to wasmtime-wasi.
///
/// Sleeps until the earliest subscription is due, but never past the execution's soft deadline,
/// and wakes early on cancel. An early wake reports the earliest clock as fired: the guest sees a
/// completed sleep, and the pending soft interrupt stops it at its next instruction.
fn poll_clocks(
    mem: &mut [u8],
    state: &HostState,
    subs: i32,
    events: i32,
    count: i32,
    nevents: i32,
) -> Option<i32> {
    let (subs, events, count) = (
        subs as u32 as usize,
        events as u32 as usize,
        count as u32 as usize,
    );
    if count == 0 || count > 4096 {
        return Some(errno::INVAL);
    }
    let mut due = Vec::with_capacity(count);
    for i in 0..count {
        let at = subs.checked_add(i * SUBSCRIPTION_SIZE)?;
        let userdata = read_u64(mem, at)?;
        if *mem.get(at + 8)? != 0 {
            return None; // an fd subscription: let wasmtime-wasi handle it
        }
        let clock_id = read_u32(mem, at + 16)?;
        let timeout = read_u64(mem, at + 24)?;
        let absolute = read_le::<2>(mem, at + 40).map(u16::from_le_bytes)? & 1 == 1;
        let wait = if absolute {
            let now = match clock_id {
                0 => SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .ok()?
                    .as_nanos(),
                1 => state.clock_base.elapsed().as_nanos(),
                _ => return Some(errno::INVAL),
            };
            Duration::from_nanos(u64::try_from(u128::from(timeout).saturating_sub(now)).ok()?)
        } else {
            Duration::from_nanos(timeout)
        };
        due.push((userdata, wait));
    }
    let start = Instant::now();
    let earliest = due.iter().map(|(_, w)| *w).min()?;
    let mut wake = start + earliest;
    if let Some(active) = &state.active {
        let limit = if active.interrupted.is_some() {
            start
        } else {
            active.soft_deadline
        };
        wake = wake.min(limit.max(start));
    }
    // Sleep in slices so a cancel is noticed within a tick.
    loop {
        let now = Instant::now();
        if now >= wake || (state.active.is_some() && state.control.cancel_requested()) {
            break;
        }
        std::thread::sleep((wake - now).min(crate::engine::EPOCH_TICK));
    }
    let elapsed = start.elapsed();
    let mut fired: Vec<u64> = due
        .iter()
        .filter(|(_, wait)| *wait <= elapsed)
        .map(|(userdata, _)| *userdata)
        .collect();
    if fired.is_empty() {
        // Woken early by the deadline or a cancel: report the earliest clock as fired.
        fired.extend(
            due.iter()
                .find(|(_, wait)| *wait == earliest)
                .map(|(u, _)| *u),
        );
    }
    let mut written = 0usize;
    for userdata in fired {
        let at = events.checked_add(written * EVENT_SIZE)?;
        let mut event = [0u8; EVENT_SIZE];
        event[..8].copy_from_slice(&userdata.to_le_bytes());
        // error = 0 (success), type = 0 (clock); the fd_readwrite part stays zero.
        if !write_bytes(mem, at, &event) {
            return Some(errno::FAULT);
        }
        written += 1;
    }
    if !write_u32(mem, nevents as u32 as usize, written as u32) {
        return Some(errno::FAULT);
    }
    Some(errno::SUCCESS)
}

#[cfg(test)]
mod tests {
    use wasmtime::{AsContextMut, Store};

    use super::*;

    fn host_state(soft: SoftInterrupt) -> (tempfile::TempDir, HostState) {
        let workspace = tempfile::tempdir().unwrap();
        let config = SessionConfig {
            mounts: Vec::new(),
            memory_bytes: 64 << 20,
            stdout_cap: 8,
            stderr_cap: 4,
            quota: None,
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

    fn request(id: &str, fuel: u64, timeout_ms: u64) -> ExecuteRequest {
        ExecuteRequest::user(id.into(), "1".into(), fuel, timeout_ms)
    }

    #[test]
    fn a_cancel_reaches_the_execution_and_its_interpreter_runs_only() {
        let control = Control::default();
        assert!(!control.request_cancel("exec-1"), "nothing runs");
        control.set_current(Some("exec-1/2".into()));
        assert!(!control.request_cancel("exec-10"), "not a prefix match");
        assert!(!control.request_cancel("exec-1/"), "not a child of exec-1/");
        assert!(!control.cancel_requested());
        assert!(
            control.request_cancel("exec-1"),
            "a command's run is its child"
        );
        assert!(control.cancel_requested());
        // The next execution starts uncancelled.
        control.set_current(Some("exec-2".into()));
        assert!(!control.cancel_requested());
        assert!(control.request_cancel("exec-2"));

        let flag = control.start_shell("exec-3");
        assert!(control.request_cancel("exec-3"), "the shell's own line");
        assert!(flag.load(Ordering::SeqCst));
        control.end_shell();
        control.set_current(None);
        assert!(!control.request_cancel("exec-3"), "ended");
    }

    #[test]
    fn fuel_and_memory_bounds() {
        assert_eq!(fuel_for(10), 10 + FUEL_RESERVE);
        assert_eq!(fuel_for(u64::MAX), u64::MAX, "saturates");

        let mut limiter = MemoryLimiter {
            cap: 100,
            hit_cap: false,
            granted: 0,
        };
        assert!(limiter.memory_growing(0, 60, None).unwrap());
        assert!(limiter.memory_growing(60, 100, None).unwrap());
        assert!(!limiter.hit_cap);
        assert!(!limiter.memory_growing(100, 101, None).unwrap());
        assert!(
            limiter.hit_cap,
            "the refusal is remembered for out_of_memory"
        );
        assert_eq!(limiter.granted, 100, "a refused size is never granted");
        assert!(limiter.table_growing(0, 1 << 20, None).unwrap());
        assert!(!limiter.table_growing(0, (1 << 20) + 1, None).unwrap());
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
        assert_eq!(
            state.control.current.lock().unwrap().as_deref(),
            Some("exec-1")
        );
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
        assert!(state.control.current.lock().unwrap().is_none());

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
    fn traps_are_classified_by_what_stopped_the_guest() {
        let (_dir, mut state) = host_state(SoftInterrupt::JsFlag);
        state.begin(&request("exec-1", 1_000, 2_500));
        let kind = |error: wasmtime::Error, state: &HostState| {
            let classified = classify_trap(&error, state);
            (classified.kind, classified.message)
        };
        assert_eq!(kind(Trap::OutOfFuel.into(), &state).0, ErrorKind::OutOfFuel);
        assert_eq!(
            kind(Trap::StackOverflow.into(), &state).0,
            ErrorKind::StackOverflow
        );
        assert_eq!(
            kind(Trap::Interrupt.into(), &state),
            (
                ErrorKind::Timeout,
                "the execution exceeded its 2.5 s timeout and did not stop when interrupted".into()
            ),
            "an interrupt without a recorded cause is the deadline"
        );
        for (cause, expected) in [
            (InterruptCause::Cancel, ErrorKind::Cancelled),
            (InterruptCause::OutOfFuel, ErrorKind::OutOfFuel),
            (InterruptCause::Timeout, ErrorKind::Timeout),
        ] {
            state.active.as_mut().unwrap().interrupted = Some(cause);
            let (kind, message) = kind(Trap::Interrupt.into(), &state);
            assert_eq!(kind, expected);
            assert!(
                message.ends_with("did not stop when interrupted"),
                "{message}"
            );
        }
        let exit = classify_trap(&wasmtime_wasi::I32Exit(3).into(), &state);
        assert_eq!(
            (exit.kind, exit.name.as_deref()),
            (ErrorKind::Exit, Some("SystemExit"))
        );
        assert_eq!(
            kind(Trap::MemoryOutOfBounds.into(), &state).0,
            ErrorKind::System
        );
        assert_eq!(
            kind(format_err!("host failure"), &state).0,
            ErrorKind::System
        );
        // A refused memory.grow explains the crash that follows it.
        state.limiter.hit_cap = true;
        assert_eq!(
            kind(Trap::UnreachableCodeReached.into(), &state).0,
            ErrorKind::OutOfMemory
        );
        assert_eq!(
            kind(Trap::OutOfFuel.into(), &state).0,
            ErrorKind::OutOfFuel,
            "fuel is named before memory"
        );
    }

    #[test]
    fn soft_stops_say_that_the_state_is_intact() {
        let (_dir, mut state) = host_state(SoftInterrupt::JsFlag);
        state.begin(&request("exec-1", 77, 1_500));
        let active = state.active.as_ref().unwrap();
        assert_eq!(
            active.soft_stop_error(InterruptCause::Timeout, "KeyboardInterrupt"),
            (
                ErrorKind::Timeout,
                "the execution exceeded its 1.5 s timeout and was interrupted (KeyboardInterrupt); the session state is intact".into()
            )
        );
        assert_eq!(
            active.soft_stop_error(InterruptCause::OutOfFuel, "x").1,
            "the execution used up its fuel budget of 77 (its CPU allowance) and was interrupted (x); the session state is intact"
        );
        assert_eq!(
            active.soft_stop_error(InterruptCause::Cancel, "x"),
            (
                ErrorKind::Cancelled,
                "the execution was cancelled (x); the session state is intact".into()
            )
        );
    }

    #[test]
    fn a_fuel_counter_that_is_not_written_back_is_estimated_from_time() {
        let (_dir, mut state) = host_state(SoftInterrupt::JsFlag);
        state.begin(&request("exec-1", 1_000, 30_000));
        let active = state.active.as_mut().unwrap();
        let start = Instant::now();
        assert_eq!(
            active.estimated_fuel_left(5_000_000_000, start),
            5_000_000_000
        );
        // The same reading 0.1 s later: 0.1 s at the pessimistic rate is presumed spent.
        let later = start + Duration::from_millis(100);
        assert_eq!(
            active.estimated_fuel_left(5_000_000_000, later),
            5_000_000_000 - (0.1 * STALE_FUEL_RATE) as u64
        );
        assert_eq!(
            active.estimated_fuel_left(1_000, later + Duration::from_secs(1)),
            1_000,
            "a new reading is taken as is"
        );
        assert_eq!(
            active.estimated_fuel_left(1_000, later + Duration::from_secs(2)),
            0,
            "never below zero"
        );
    }

    /// Runs the epoch callback once on a store holding `state`.
    fn tick(store: &mut Store<HostState>) -> UpdateDeadline {
        on_epoch(store.as_context_mut()).unwrap()
    }

    fn is_interrupt(update: &UpdateDeadline) -> bool {
        matches!(update, UpdateDeadline::Interrupt)
    }

    #[test]
    fn the_epoch_callback_interrupts_softly_then_traps() {
        let engine = crate::engine::engine();
        let (_dir, state) = host_state(SoftInterrupt::JsFlag);
        let mut store = Store::new(engine, state);
        store.set_fuel(u64::MAX).unwrap();
        assert!(
            !is_interrupt(&tick(&mut store)),
            "no execution: nothing to do"
        );

        // Cancel: the soft interrupt first, the trap only at the hard deadline.
        store
            .data_mut()
            .begin(&request("exec-1", 1_000_000, 30_000));
        assert!(store.data().control.request_cancel("exec-1"));
        assert!(!is_interrupt(&tick(&mut store)));
        assert!(store.data().js_interrupt, "QuickJS is asked to stop");
        let active = store.data().active.as_ref().unwrap();
        assert_eq!(active.interrupted, Some(InterruptCause::Cancel));
        assert!(active.hard_deadline <= Instant::now() + HARD_GRACE);
        assert!(!is_interrupt(&tick(&mut store)), "grace for the guest");
        store.data_mut().active.as_mut().unwrap().hard_deadline = Instant::now();
        assert!(is_interrupt(&tick(&mut store)), "the hard deadline traps");

        // The soft deadline, and fuel down to the reserve.
        store.data_mut().begin(&request("exec-2", 1_000_000, 0));
        assert!(!is_interrupt(&tick(&mut store)));
        assert_eq!(
            store.data().active.as_ref().unwrap().interrupted,
            Some(InterruptCause::Timeout)
        );
        store
            .data_mut()
            .begin(&request("exec-3", 1_000_000, 30_000));
        store.set_fuel(FUEL_RESERVE).unwrap();
        assert!(!is_interrupt(&tick(&mut store)));
        assert_eq!(
            store.data().active.as_ref().unwrap().interrupted,
            Some(InterruptCause::OutOfFuel)
        );

        // Without a cooperative stop, the soft deadline traps at once.
        let (_dir, state) = host_state(SoftInterrupt::None);
        let mut store = Store::new(engine, state);
        store.set_fuel(u64::MAX).unwrap();
        store.data_mut().begin(&request("exec-4", 1_000_000, 0));
        assert!(is_interrupt(&tick(&mut store)));
    }

    #[test]
    fn guest_memory_is_read_and_written_within_bounds() {
        let mut mem = vec![0u8; 32];
        assert!(write_u32(&mut mem, 28, 0xdead_beef));
        assert_eq!(read_u32(&mem, 28), Some(0xdead_beef));
        assert!(!write_u32(&mut mem, 29, 1), "would cross the end");
        assert!(!write_u32(&mut mem, usize::MAX - 1, 1), "no overflow");
        assert_eq!(read_u32(&mem, 30), None);
        assert!(!write_bytes(&mut mem, 31, b"ab"));
        assert!(write_bytes(&mut mem, 30, b"ab"));

        // Two iovecs at 0: (buf 16, len 4) and (buf 20, len 12).
        let mut mem = vec![0u8; 32];
        for (at, v) in [(0, 16), (4, 4), (8, 20), (12, 12)] {
            write_u32(&mut mem, at, v);
        }
        assert_eq!(iovecs(&mem, 0, 2), Some(vec![(16, 4), (20, 12)]));
        write_u32(&mut mem, 12, 13);
        assert_eq!(iovecs(&mem, 0, 2), None, "a buffer past the end");
        assert_eq!(iovecs(&mem, 0, 1025), None, "more than IOV_MAX");
        assert_eq!(iovecs(&mem, 0, 0), Some(vec![]));
        assert_eq!(iovecs(&mem, -8, 1), None, "a negative pointer is far out");
    }

    /// Guest memory holding `subs` clock subscriptions at 0 (`(userdata, clock, timeout ns,
    /// absolute)`), events at 512 and `nevents` at 1020.
    fn subscriptions(subs: &[(u64, u32, u64, bool)]) -> Vec<u8> {
        let mut mem = vec![0u8; 1024];
        for (i, (userdata, clock, timeout, absolute)) in subs.iter().enumerate() {
            let at = i * SUBSCRIPTION_SIZE;
            mem[at..at + 8].copy_from_slice(&userdata.to_le_bytes());
            mem[at + 8] = 0; // a clock subscription
            mem[at + 16..at + 20].copy_from_slice(&clock.to_le_bytes());
            mem[at + 24..at + 32].copy_from_slice(&timeout.to_le_bytes());
            mem[at + 40..at + 42].copy_from_slice(&u16::from(*absolute).to_le_bytes());
        }
        mem
    }

    /// The userdata of the events `poll_clocks` wrote.
    fn fired(mem: &[u8]) -> Vec<u64> {
        let n = read_u32(mem, 1020).unwrap() as usize;
        (0..n)
            .map(|i| read_u64(mem, 512 + i * EVENT_SIZE).unwrap())
            .collect()
    }

    fn poll(mem: &mut [u8], state: &HostState, count: i32) -> Option<i32> {
        poll_clocks(mem, state, 0, 512, count, 1020)
    }

    #[test]
    fn sleeps_end_at_their_time_or_at_the_soft_deadline() {
        let (_dir, mut state) = host_state(SoftInterrupt::JsFlag);
        // No execution: a short sleep is slept; the earlier of two clocks fires.
        let mut mem = subscriptions(&[(7, 1, 3_600_000_000_000, false), (9, 1, 1_000_000, false)]);
        assert_eq!(poll(&mut mem, &state, 2), Some(errno::SUCCESS));
        assert_eq!(fired(&mem), [9]);
        // An absolute deadline in the past fires at once.
        let mut mem = subscriptions(&[(5, 1, 0, true), (6, 0, 0, true)]);
        assert_eq!(poll(&mut mem, &state, 2), Some(errno::SUCCESS));
        assert_eq!(fired(&mem), [5, 6]);

        // An interrupted execution sleeps no more: the hour-long sleep returns at once,
        // reported as fired so the guest reaches the pending interrupt.
        state.begin(&request("exec-1", 1_000, 30_000));
        state.active.as_mut().unwrap().interrupted = Some(InterruptCause::Timeout);
        let started = Instant::now();
        let mut mem = subscriptions(&[(1, 1, 3_600_000_000_000, false)]);
        assert_eq!(poll(&mut mem, &state, 1), Some(errno::SUCCESS));
        assert_eq!(fired(&mem), [1]);
        assert!(started.elapsed() < Duration::from_secs(60));

        // A cancel wakes a sleeping execution.
        state.begin(&request("exec-2", 1_000, 3_600_000));
        assert!(state.control.request_cancel("exec-2"));
        let started = Instant::now();
        let mut mem = subscriptions(&[(2, 1, 3_600_000_000_000, false)]);
        assert_eq!(poll(&mut mem, &state, 1), Some(errno::SUCCESS));
        assert_eq!(fired(&mem), [2]);
        assert!(started.elapsed() < Duration::from_secs(60));
    }

    #[test]
    fn polls_that_are_not_plain_sleeps_go_to_wasi() {
        let (_dir, state) = host_state(SoftInterrupt::JsFlag);
        let mut mem = subscriptions(&[(1, 1, 0, false)]);
        assert_eq!(
            poll(&mut mem, &state, 0),
            Some(errno::INVAL),
            "no subscription"
        );
        assert_eq!(poll(&mut mem, &state, 4097), Some(errno::INVAL), "too many");
        mem[8] = 1; // an fd_read subscription
        assert_eq!(poll(&mut mem, &state, 1), None);
        let mut mem = subscriptions(&[(1, 7, 0, true)]);
        assert_eq!(
            poll(&mut mem, &state, 1),
            Some(errno::INVAL),
            "an absolute time on an unknown clock"
        );
        let mut mem = subscriptions(&[(1, 1, 0, false)]);
        assert_eq!(
            poll(&mut mem, &state, 30),
            None,
            "subscriptions past the end of memory"
        );
        assert_eq!(
            poll_clocks(&mut mem, &state, 0, 1020, 1, 1020),
            Some(errno::FAULT),
            "no room for the event"
        );
    }

    /// A cancel that reaches the worker while a command line is between two commands is not
    /// lost: the next interpreter run of that command starts cancelled; other runs do not.
    #[test]
    fn a_commands_cancel_reaches_a_run_that_starts_after_it() {
        let control = Control::default();
        let _flag = control.start_shell("exec-cmd");
        assert!(control.request_cancel("exec-cmd"));
        control.set_current(Some("exec-cmd/1".into()));
        assert!(control.cancel_requested());
        control.set_current(Some("exec-cmdx/1".into()));
        assert!(!control.cancel_requested());
        control.set_current(Some("exec-other".into()));
        assert!(!control.cancel_requested());
        control.end_shell();
        control.set_current(Some("exec-cmd/2".into()));
        assert!(!control.cancel_requested());
    }
}
