//! `sandbox-worker fuel-overhead`: what fuel metering costs the guests (issue 14 wants at most
//! 30 % over no metering), as one JSON object ([`FuelOverhead`]).
//!
//! Each language runs a recursive fib, `fib(25)` in CPython 3.15 and `fib(27)` in
//! QuickJS-NG, once on the production engine ([`engine::build_engine`]) with fuel set to
//! `u64::MAX`, and once on an engine built from the same [`engine::engine_config`] with only
//! `consume_fuel(false)`. Both keep epoch interruption, the production store setup (memory
//! limiter, [`crate::host::on_epoch`] every tick from a ticker thread of their own,
//! [`crate::host::on_host_call`] at host calls) and the production linker
//! and host state, so the difference is fuel alone.
//!
//! Interpreter start-up is left out: each run is a fresh instance that computes fib twice, and
//! only the second computation counts (the first is the warm-up: it maps the code and grows the
//! memory). JavaScript is timed around each `sb_eval("fib(27)")` call of the reactor. CPython
//! is a command that runs to completion, so its program reads fd 0 before each computation and
//! once after the last: the host stamps those reads (a [`crate::host::DriverChannel`] that only
//! keeps the time), and the gaps between them are the computations.
//!
//! The time is the guest thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), not the wall clock: on
//! two cores shared with compilers, a run that is preempted would otherwise count time it did
//! not run, and single runs varied by half. The metered and unmetered runs alternate, so what is
//! left of a change in load (caches, frequency) hits both sides alike, and the best (minimum)
//! run of each side is the figure.
//!
//! The unmetered interpreters are compiled once into the runtime directory's `cache/` as
//! `unmetered-RUNTIME-DIGEST-KEY.cwasm`. No production name starts with `unmetered-`, and their
//! engine key differs anyway, so they never collide with what `precompile` writes. The metered
//! side only reads the production cache; without it, it compiles in memory.

mod guests;

use std::io::Write;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sandbox_protocol::Runtime;
use sandbox_protocol::confined::{ConfinedError, Root};
use serde::Serialize;
use wasmtime::{Engine, Module, format_err};

use self::guests::{javascript_laps, python_laps};
use crate::WorkerError;
use crate::engine::{self, EPOCH_TICK, EngineError};
use crate::host::build_linker;

/// The timed runs a side when the command line does not say: enough for one undisturbed run on
/// a busy machine, few enough to finish in seconds.
pub const DEFAULT_RUNS: u32 = 5;

/// Computations in each run's instance: the warm-up, then the one that is timed.
const COMPUTATIONS: usize = 2;

/// Prefix of the unmetered modules' cache names, which no runtime name starts with.
const UNMETERED_PREFIX: &str = "unmetered-";

/// The best time of one language with and without fuel metering.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Overhead {
    /// Milliseconds, to the microsecond.
    pub metered_ms: f64,
    pub unmetered_ms: f64,
    /// How much longer the metered run took, in percent of the unmetered one, to a tenth.
    pub overhead_percent: f64,
}

impl Overhead {
    /// The figures of the best run of each side; `None` when a side has no run or took no time.
    pub fn from_runs(metered: &[Duration], unmetered: &[Duration]) -> Option<Self> {
        let metered = metered.iter().min()?.as_secs_f64() * 1e3;
        let unmetered = unmetered.iter().min()?.as_secs_f64() * 1e3;
        if unmetered <= 0.0 {
            return None;
        }
        Some(Self {
            metered_ms: round_to(metered, 3),
            unmetered_ms: round_to(unmetered, 3),
            overhead_percent: round_to((metered - unmetered) / unmetered * 100.0, 1),
        })
    }
}

/// What `sandbox-worker fuel-overhead` prints.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FuelOverhead {
    pub python: Overhead,
    pub javascript: Overhead,
}

/// `value` rounded to `decimals` places.
fn round_to(value: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (value * scale).round() / scale
}

/// The two engines compared: production, and production without fuel.
struct Engines {
    metered: Engine,
    unmetered: Engine,
}

/// Measures both languages in the interpreters of `runtime_dir`, `runs` timed computations on
/// each side, and writes what it does to `progress`.
///
/// # Errors
/// A missing or broken interpreter, a cache that cannot be written, a guest that fails or
/// computes a wrong fib, or zero `runs`.
pub fn measure(
    runtime_dir: &Path,
    runs: usize,
    progress: &mut dyn Write,
) -> Result<FuelOverhead, WorkerError> {
    if runs == 0 {
        return Err(WorkerError::Runtime(
            "fuel-overhead needs at least one run".into(),
        ));
    }
    let engines = Engines {
        metered: engine::build_engine()?,
        unmetered: unmetered_engine()?,
    };
    // A fresh private directory as the guests' /app: created, never reused (a name someone
    // planted, a link included, makes this fail), and removed through the confined layer,
    // which never follows a link the guest might have left.
    let scratch = std::env::temp_dir();
    let name = format!("sandbox-fuel-{}-{}", std::process::id(), unique_suffix());
    let workspace = scratch.join(&name);
    std::fs::DirBuilder::new().mode(0o700).create(&workspace)?;
    let measured = [Runtime::Python, Runtime::JavaScript]
        .map(|runtime| compare(runtime, runtime_dir, &engines, &workspace, runs, progress));
    if let Err(e) = Root::open_ambient(&scratch)
        .map_err(ConfinedError::from)
        .and_then(|root| root.remove_tree(Path::new(&name)))
    {
        writeln!(
            progress,
            "fuel-overhead: cannot remove {}: {e}",
            workspace.display()
        )?;
    }
    let [python, javascript] = measured;
    Ok(FuelOverhead {
        python: python?,
        javascript: javascript?,
    })
}

/// The production engine with fuel metering off and every other setting kept.
///
/// # Errors
/// [`EngineError::Config`] if Wasmtime rejects the configuration.
fn unmetered_engine() -> Result<Engine, EngineError> {
    let mut config = engine::engine_config();
    config.consume_fuel(false);
    Engine::new(&config).map_err(|e| EngineError::Config(e.to_string()))
}

/// Times `runtime` on both engines, `runs` rounds of one run a side.
fn compare(
    runtime: Runtime,
    runtime_dir: &Path,
    engines: &Engines,
    workspace: &Path,
    runs: usize,
    progress: &mut dyn Write,
) -> Result<Overhead, WorkerError> {
    let wasm = runtime_dir.join(runtime.wasm_file_name());
    let cache_dir = runtime_dir.join("cache");
    let metered = metered_module(&engines.metered, runtime, &wasm, &cache_dir, progress)?;
    let unmetered = unmetered_module(&engines.unmetered, runtime, &wasm, &cache_dir, progress)?;
    let sides = [
        ("metered", &engines.metered, &metered),
        ("unmetered", &engines.unmetered, &unmetered),
    ];
    let mut timed: [Vec<Duration>; 2] = Default::default();
    for _ in 0..runs {
        for ((_, engine, module), times) in sides.iter().zip(&mut timed) {
            let laps = time_computations(runtime, engine, module, workspace)?;
            // The last computation is the one after the warm-up.
            times.extend(laps.last());
        }
    }
    for ((side, ..), times) in sides.iter().zip(&timed) {
        let shown: Vec<String> = times.iter().map(|d| format!("{:.1}", ms(*d))).collect();
        writeln!(
            progress,
            "fuel-overhead: {runtime} {side}: runs {} ms",
            shown.join(" ")
        )?;
    }
    let overhead = Overhead::from_runs(&timed[0], &timed[1])
        .ok_or_else(|| WorkerError::Runtime(format!("{runtime}: no usable run")))?;
    writeln!(
        progress,
        "fuel-overhead: {runtime}: best {} ms metered, {} ms unmetered, {:+.1} %",
        overhead.metered_ms, overhead.unmetered_ms, overhead.overhead_percent
    )?;
    Ok(overhead)
}

/// `duration` in milliseconds.
/// Nanoseconds of the clock: with the pid, a name no earlier run left behind.
fn unique_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// The production module of `runtime`: read from the production cache, never written there;
/// compiled in memory when that cache does not have it.
fn metered_module(
    engine: &Engine,
    runtime: Runtime,
    wasm: &Path,
    cache_dir: &Path,
    progress: &mut dyn Write,
) -> Result<Module, WorkerError> {
    let bytes = std::fs::read(wasm).map_err(|source| EngineError::Read {
        path: wasm.into(),
        source,
    })?;
    let cwasm = engine::cwasm_path(
        engine,
        runtime.as_str(),
        &engine::sha256_hex(&bytes),
        cache_dir,
    );
    if cwasm.is_file() {
        return Ok(engine::load_module(engine, &cwasm)?);
    }
    writeln!(
        progress,
        "fuel-overhead: no precompiled {runtime} in {}, compiling it in memory \
         (`sandbox-worker precompile` makes this faster)",
        cache_dir.display()
    )?;
    Module::new(engine, &bytes).map_err(|e| {
        WorkerError::Engine(EngineError::Compile {
            path: wasm.into(),
            message: e.to_string(),
        })
    })
}

/// The unmetered module of `runtime`, compiled into `cache_dir` under its own name the first
/// time.
fn unmetered_module(
    engine: &Engine,
    runtime: Runtime,
    wasm: &Path,
    cache_dir: &Path,
    progress: &mut dyn Write,
) -> Result<Module, WorkerError> {
    let started = Instant::now();
    let name = format!("{UNMETERED_PREFIX}{runtime}");
    let cached = engine::precompile(engine, &name, wasm, cache_dir)?;
    if cached.compiled {
        writeln!(
            progress,
            "fuel-overhead: compiled the unmetered {runtime} in {:.1} s into {}",
            started.elapsed().as_secs_f64(),
            cached.cwasm.display()
        )?;
    }
    Ok(engine::load_module(engine, &cached.cwasm)?)
}

/// The times of [`COMPUTATIONS`] computations of `runtime` in one fresh instance, on a guest
/// thread while a ticker advances `engine`'s epoch as production does.
fn time_computations(
    runtime: Runtime,
    engine: &Engine,
    module: &Module,
    workspace: &Path,
) -> Result<Vec<Duration>, WorkerError> {
    let linker = build_linker(engine).map_err(|e| WorkerError::Runtime(format!("{e:#}")))?;
    let stop_ticker = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !stop_ticker.load(Ordering::Relaxed) {
                std::thread::sleep(EPOCH_TICK);
                engine.increment_epoch();
            }
        });
        let guest = std::thread::Builder::new()
            .name("guest".into())
            .stack_size(crate::engine::WASM_THREAD_STACK)
            .spawn_scoped(scope, || match runtime {
                Runtime::JavaScript => javascript_laps(module, &linker, workspace, COMPUTATIONS),
                Runtime::Python => python_laps(module, &linker, workspace, COMPUTATIONS),
            });
        let laps = match guest {
            Ok(guest) => guest
                .join()
                .unwrap_or_else(|_| Err(format_err!("the guest panicked"))),
            Err(e) => Err(e.into()),
        };
        stop_ticker.store(true, Ordering::Relaxed);
        laps.map_err(|e| WorkerError::Runtime(format!("{runtime}: {e:#}")))
    })
}

#[cfg(test)]
mod tests {

    use wasmtime::{Instance, Store, Trap, UpdateDeadline};

    use super::*;

    use crate::engine::tests::SPIN;

    fn millis(values: &[u64]) -> Vec<Duration> {
        values.iter().map(|&v| Duration::from_millis(v)).collect()
    }

    #[test]
    fn the_overhead_compares_the_best_runs() {
        let overhead = Overhead::from_runs(&millis(&[130, 125, 140]), &millis(&[101, 100, 120]));
        assert_eq!(
            overhead,
            Some(Overhead {
                metered_ms: 125.0,
                unmetered_ms: 100.0,
                overhead_percent: 25.0,
            })
        );
        // Rounded to the microsecond and to a tenth of a percent; faster metered is negative.
        let odd = Overhead::from_runs(
            &[Duration::from_nanos(2_000_400)],
            &[Duration::from_nanos(3_000_600)],
        )
        .unwrap();
        assert_eq!((odd.metered_ms, odd.unmetered_ms), (2.0, 3.001));
        assert_eq!(odd.overhead_percent, -33.3);
        assert_eq!(Overhead::from_runs(&[], &millis(&[1])), None);
        assert_eq!(Overhead::from_runs(&millis(&[1]), &millis(&[0])), None);
    }

    #[test]
    fn the_report_is_one_json_object_by_language() {
        let overhead = Overhead {
            metered_ms: 1.5,
            unmetered_ms: 1.25,
            overhead_percent: 20.0,
        };
        let report = FuelOverhead {
            python: overhead,
            javascript: overhead,
        };
        let json = serde_json::to_value(report).unwrap();
        let side = serde_json::json!({
            "metered_ms": 1.5, "unmetered_ms": 1.25, "overhead_percent": 20.0
        });
        assert_eq!(
            json,
            serde_json::json!({ "python": side, "javascript": side })
        );
    }

    /// The unmetered engine differs from production in fuel only: no fuel to set, epochs still
    /// interrupt, and its modules cannot be mistaken for production ones.
    #[test]
    fn the_unmetered_engine_keeps_epochs_and_drops_fuel() {
        let unmetered = unmetered_engine().unwrap();
        assert!(!guests::meters_fuel(&unmetered));
        assert!(guests::meters_fuel(engine::engine()));
        assert_ne!(
            engine::compatibility_key(&unmetered),
            engine::compatibility_key(engine::engine())
        );
        let module = Module::new(&unmetered, SPIN).unwrap();
        let mut store = Store::new(&unmetered, 0u32);
        assert!(store.set_fuel(1).is_err());
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|mut ctx| {
            *ctx.data_mut() += 1;
            Ok(if *ctx.data() >= 2 {
                UpdateDeadline::Interrupt
            } else {
                UpdateDeadline::Continue(1)
            })
        });
        let instance = Instance::new(&mut store, &module, &[]).unwrap();
        let spin = instance
            .get_typed_func::<(), ()>(&mut store, "spin")
            .unwrap();
        let ticker = std::thread::spawn({
            let engine = unmetered.clone();
            move || {
                for _ in 0..2 {
                    std::thread::sleep(Duration::from_millis(5));
                    engine.increment_epoch();
                }
            }
        });
        let error = spin.call(&mut store, ()).unwrap_err();
        ticker.join().unwrap();
        assert_eq!(error.downcast_ref::<Trap>(), Some(&Trap::Interrupt));
    }

    /// The whole measurement on the prepared interpreters, one run a side: about a second when
    /// the unmetered modules are cached; a cold cache first compiles them into the shared
    /// runtime directory (5 s on two idle cores).
    #[test]
    fn both_languages_are_measured_end_to_end() {
        let dir = crate::engine::test_runtime_dir();
        let mut progress = Vec::new();
        let report = measure(&dir, 1, &mut progress).unwrap();
        let progress = String::from_utf8(progress).unwrap();
        eprintln!("{progress}{}", serde_json::to_string(&report).unwrap());
        for side in [report.python, report.javascript] {
            assert!(side.metered_ms > 0.0 && side.unmetered_ms > 0.0, "{side:?}");
        }
        assert_eq!(progress.matches("metered: runs ").count(), 4, "{progress}");
    }
}
