//! How each interpreter computes fib for [`super::measure`] and how its computations are timed:
//! CPython as one `turn` whose reads of fd 0 the host stamps ([`python_laps`]), QuickJS-NG as the
//! reactor a JavaScript session drives ([`javascript_laps`]). Both run in the production host
//! state and linker, in a store set up as [`crate::host::new_store`] does.

use std::any::Any;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustix::time::{ClockId, clock_gettime};
use wasmtime::{Caller, Engine, Linker, Memory, Module, Store, TypedFunc, format_err};

use crate::host::{
    Control, DriverChannel, HostState, SessionConfig, SoftInterrupt, on_epoch, on_host_call,
};

/// The argument of the Python fib: about 250,000 calls, about 50 ms in CPython on wasm.
const PYTHON_FIB_N: u32 = 25;

/// The argument of the JavaScript fib: QuickJS is faster per call, so a larger one takes about
/// as long as the Python computation (about 30 ms).
const JAVASCRIPT_FIB_N: u32 = 27;

/// The default flavor's memory cap, far above what fib needs.
const MEMORY_BYTES: usize = 256 << 20;

/// Session settings of a measurement: no mounts, no disk quota.
fn bench_config() -> SessionConfig {
    SessionConfig {
        mounts: Vec::new(),
        memory_bytes: MEMORY_BYTES,
        stdout_cap: 1 << 20,
        stderr_cap: 1 << 20,
        quota: None,
        clock_since: None,
    }
}

/// A store as [`crate::host::new_store`] makes it, with fuel only when the engine meters it
/// (`new_store` refuses an engine that does not).
fn bench_store(engine: &Engine, state: HostState) -> wasmtime::Result<Store<HostState>> {
    let mut store = Store::new(engine, state);
    store.limiter(|s| &mut s.limiter);
    store.epoch_deadline_callback(on_epoch);
    store.set_epoch_deadline(1);
    store.call_hook(on_host_call);
    if meters_fuel(engine) {
        store.set_fuel(u64::MAX)?;
    }
    Ok(store)
}

/// Whether `engine` meters fuel: Wasmtime has no fuel to read in a store of an engine that
/// does not.
pub(super) fn meters_fuel(engine: &Engine) -> bool {
    Store::new(engine, ()).get_fuel().is_ok()
}

/// The CPython program: fib `computations` times, reading fd 0 before each and after the last,
/// then the last result on stdout.
fn python_program(computations: usize) -> String {
    format!(
        "import os\n\
         def fib(n): return n if n < 2 else fib(n-1) + fib(n-2)\n\
         for _ in range({computations}):\n    os.read(0, 1)\n    result = fib({PYTHON_FIB_N})\n\
         os.read(0, 1)\n\
         print(result)\n"
    )
}

/// The CPU time the calling thread has used so far.
fn thread_cpu_time() -> Duration {
    let now = clock_gettime(ClockId::ThreadCPUTime);
    let seconds = u64::try_from(now.tv_sec).unwrap_or(0);
    let nanos = u32::try_from(now.tv_nsec).unwrap_or(0);
    Duration::new(seconds, nanos)
}

/// Stamps every read of fd 0 with the guest thread's CPU time; the reads answer end of file.
#[derive(Default)]
struct ReadStamps(Vec<Duration>);

impl DriverChannel for ReadStamps {
    fn write(&mut self, _bytes: &[u8]) {}

    fn before_read(&mut self, _caller: &mut Caller<'_, HostState>) -> wasmtime::Result<()> {
        self.0.push(thread_cpu_time());
        Ok(())
    }

    fn read(&mut self, _max: usize) -> &[u8] {
        &[]
    }
}

/// Runs [`python_program`] in one CPython instance and returns its computations' times.
pub(super) fn python_laps(
    module: &Module,
    linker: &Linker<HostState>,
    workspace: &Path,
    computations: usize,
) -> wasmtime::Result<Vec<Duration>> {
    let program = python_program(computations);
    // Without the soft interrupt, as the other measurements (the build's addresses are not
    // needed to time a computation).
    let build = crate::python::Build::of(crate::python::PINNED_SHA256);
    let mut state = build.host_state(workspace, &bench_config(), Arc::new(Control::default()))?;
    state.soft = SoftInterrupt::None;
    state.driver = Some(Box::new(ReadStamps::default()));
    let mut store = bench_store(module.engine(), state)?;
    let ran = crate::python::run_turn_in(&mut store, module, linker, &program);
    let state = store.data_mut();
    let (stdout, stderr) = (state.stdout.take().0, state.stderr.take().0);
    let printed = String::from_utf8_lossy(&stdout);
    if ran.is_err() || printed.trim() != fib(PYTHON_FIB_N).to_string() {
        return Err(format_err!(
            "CPython failed ({ran:?}), printed {printed:?}: {}",
            String::from_utf8_lossy(&stderr)
        ));
    }
    let driver: Box<dyn Any> = state
        .driver
        .take()
        .ok_or_else(|| format_err!("the read stamps are gone"))?;
    let stamps = driver
        .downcast::<ReadStamps>()
        .map_err(|_| format_err!("the driver is not the read stamps"))?;
    gaps(&stamps.0, computations)
}

/// The times between the last `computations + 1` stamps.
fn gaps(stamps: &[Duration], computations: usize) -> wasmtime::Result<Vec<Duration>> {
    let first = stamps
        .len()
        .checked_sub(computations + 1)
        .ok_or_else(|| format_err!("{} reads of fd 0 for {computations} runs", stamps.len()))?;
    Ok(stamps[first..]
        .windows(2)
        .map(|pair| pair[1].saturating_sub(pair[0]))
        .collect())
}

/// The QuickJS reactor's exports that a measurement calls.
struct JsReactor {
    store: Store<HostState>,
    memory: Memory,
    alloc: TypedFunc<i32, i32>,
    eval: TypedFunc<(i32, i32, i32), i64>,
    cell: i32,
}

impl JsReactor {
    /// A fresh instance with its QuickJS runtime and context, as a session starts it.
    fn start(
        module: &Module,
        linker: &Linker<HostState>,
        workspace: &Path,
    ) -> wasmtime::Result<Self> {
        let config = bench_config();
        let state = HostState::new(
            workspace,
            &[("HOME", "/app")],
            &["qjs"],
            &config,
            SoftInterrupt::JsFlag,
            Arc::new(Control::default()),
        )?;
        let mut store = bench_store(module.engine(), state)?;
        let instance = linker.instantiate(&mut store, module)?;
        let memory = instance
            .get_memory(&mut store, "memory")
            .ok_or_else(|| format_err!("the guest exports no memory"))?;
        store.data_mut().memory = Some(memory);
        if let Ok(initialize) = instance.get_typed_func::<(), ()>(&mut store, "_initialize") {
            initialize.call(&mut store, ())?;
        }
        // The session's QuickJS heap limit: three quarters of the memory cap.
        let heap_limit = i32::try_from(config.memory_bytes / 4 * 3).unwrap_or(i32::MAX);
        let init: TypedFunc<(i32, i32), i32> = instance.get_typed_func(&mut store, "sb_init")?;
        let status = init.call(&mut store, (heap_limit, 0))?;
        if status != 0 {
            return Err(format_err!("sb_init failed with status {status}"));
        }
        Ok(Self {
            alloc: instance.get_typed_func(&mut store, "sb_alloc")?,
            eval: instance.get_typed_func(&mut store, "sb_eval")?,
            store,
            memory,
            cell: 0,
        })
    }

    /// Runs `code` as the next cell and returns the repr of its value.
    fn eval(&mut self, code: &str) -> wasmtime::Result<String> {
        self.cell += 1;
        let len = i32::try_from(code.len())?;
        let at = self.alloc.call(&mut self.store, len)?;
        self.memory
            .write(&mut self.store, at as u32 as usize, code.as_bytes())?;
        let packed = self.eval.call(&mut self.store, (at, len, self.cell))? as u64;
        let (at, size) = ((packed >> 32) as usize, (packed & 0xffff_ffff) as usize);
        let answer = self
            .memory
            .data(&self.store)
            .get(at..at + size)
            .ok_or_else(|| format_err!("sb_eval answer out of bounds"))?;
        let answer: serde_json::Value = serde_json::from_slice(answer)?;
        match (&answer["ok"], &answer["value"]) {
            (serde_json::Value::Bool(true), serde_json::Value::String(value)) => Ok(value.clone()),
            (serde_json::Value::Bool(true), _) => Ok(String::new()),
            _ => Err(format_err!("{code}: {answer}")),
        }
    }
}

/// Defines fib in one QuickJS instance and times `computations` evaluations of it.
pub(super) fn javascript_laps(
    module: &Module,
    linker: &Linker<HostState>,
    workspace: &Path,
    computations: usize,
) -> wasmtime::Result<Vec<Duration>> {
    let mut reactor = JsReactor::start(module, linker, workspace)?;
    reactor.eval("function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) }")?;
    let call = format!("fib({JAVASCRIPT_FIB_N})");
    let expected = fib(JAVASCRIPT_FIB_N).to_string();
    let mut laps = Vec::with_capacity(computations);
    for _ in 0..computations {
        let started = thread_cpu_time();
        let value = reactor.eval(&call)?;
        laps.push(thread_cpu_time().saturating_sub(started));
        if value != expected {
            return Err(format_err!("{call} returned {value}, not {expected}"));
        }
    }
    Ok(laps)
}

/// The `n`th Fibonacci number, to check what the guests computed.
fn fib(n: u32) -> u64 {
    (0..n).fold((0u64, 1u64), |(a, b), _| (b, a + b)).0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn millis(values: &[u64]) -> Vec<Duration> {
        values.iter().map(|&v| Duration::from_millis(v)).collect()
    }

    /// The clock counts this thread's work, not the time it waits: a sleep adds next to nothing.
    #[test]
    fn the_clock_is_the_thread_cpu_time() {
        let before = thread_cpu_time();
        std::thread::sleep(Duration::from_millis(100));
        let slept = thread_cpu_time() - before;
        assert!(slept < Duration::from_millis(50), "{slept:?}");
    }

    #[test]
    fn computations_are_the_gaps_between_the_last_reads() {
        let stamps = millis(&[3, 5, 12, 20, 40]);
        assert_eq!(gaps(&stamps, 2).unwrap(), millis(&[8, 20]));
        assert_eq!(gaps(&stamps, 4).unwrap(), millis(&[2, 7, 8, 20]));
        assert!(gaps(&stamps, 5).is_err(), "too few reads");
    }

    #[test]
    fn the_checks_know_fib_and_the_program_reads_around_each_run() {
        assert_eq!([0, 1, 2, 10, 25, 27].map(fib), [0, 1, 1, 55, 75025, 196418]);
        let program = python_program(6);
        assert!(program.contains("for _ in range(6):\n    os.read(0, 1)\n    result = fib(25)\n"));
        assert!(
            program.ends_with("os.read(0, 1)\nprint(result)\n"),
            "{program}"
        );
    }
}
