//! The Wasmtime engine every worker process uses, and the precompiled-module cache.
//!
//! Compiling CPython takes seconds and hundreds of MiB, so it happens once, in
//! `sandbox-worker precompile`, and sessions only map the resulting `.cwasm`. A `.cwasm` is only
//! valid for an engine configured exactly like this one, which is why both paths build their
//! engine here and the cache key includes [`Engine::precompile_compatibility_hash`].

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use sandbox_protocol::CachedModule;
use sha2::{Digest, Sha256};
use wasmtime::{Config, Engine, Module};

/// How often the epoch advances. Deadlines, soft interrupts and cancellation are checked at this
/// granularity, so it bounds how late a timeout can fire.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// WebAssembly stack per call. QuickJS-NG has no recursion check of its own on WASI, so deep JS
/// recursion ends in a stack-exhaustion trap; 8 MiB allows thousands of frames first.
const MAX_WASM_STACK: usize = 8 << 20;

/// Native stack of a thread that runs wasm (the guest thread, the shell's, a measurement's):
/// Wasmtime runs wasm on the caller's native stack, so it needs the engine's wasm stack plus the
/// host's frames; a smaller one would overflow before Wasmtime's stack limit traps.
pub const WASM_THREAD_STACK: usize = 2 * MAX_WASM_STACK;

/// Errors of engine setup and the module cache.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("wasmtime engine configuration rejected: {0}")]
    Config(String),
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {path}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("compiling {path} failed: {message}")]
    Compile { path: PathBuf, message: String },
    #[error(
        "precompiled module {path} is unusable ({message}); run `sandbox-worker precompile` again"
    )]
    Load { path: PathBuf, message: String },
}

/// Builds the one engine configuration used for compiling and for running.
///
/// # Errors
/// [`EngineError::Config`] if Wasmtime rejects the configuration.
pub fn build_engine() -> Result<Engine, EngineError> {
    Engine::new(&engine_config()).map_err(|e| EngineError::Config(e.to_string()))
}

/// The production engine settings, for [`build_engine`] and for measurements that must differ
/// from production in one setting only (`sandbox-worker fuel-overhead`).
pub fn engine_config() -> Config {
    let mut config = Config::new();
    config
        .consume_fuel(true)
        .epoch_interruption(true)
        .max_wasm_stack(MAX_WASM_STACK)
        .async_stack_size(MAX_WASM_STACK + (1 << 20))
        // The scientific CPython (C++ in its packages, setjmp/longjmp in CPython) is compiled
        // with Wasm exception handling: its throws allocate `exnref`s on the GC heap, which is
        // why the workspace builds Wasmtime with `gc` and a collector that frees (`gc-drc`).
        .wasm_exceptions(true)
        .parallel_compilation(true);
    config
}

/// The engine of this process, built on first use.
///
/// # Panics
/// If the engine configuration is rejected: a build defect, not something input can cause.
pub fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| build_engine().expect("static engine configuration is valid"))
}

/// Starts the thread that advances the epoch every [`EPOCH_TICK`] for the life of the process.
pub fn start_epoch_ticker() {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        let engine = engine().clone();
        std::thread::Builder::new()
            .name("epoch-ticker".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(EPOCH_TICK);
                    engine.increment_epoch();
                }
            })
            .expect("spawning the epoch ticker");
    });
}

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A hex digest of the engine settings that a `.cwasm` must match.
pub fn compatibility_key(engine: &Engine) -> String {
    let mut hasher = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// Makes sure `wasm` has a `.cwasm` in `cache_dir` for this engine and returns it.
///
/// The file name carries the wasm's SHA-256 and the engine key, so a changed interpreter or a
/// rebuilt worker with other settings never picks up a stale artefact. Writing goes through a
/// temporary file and a rename, so concurrent precompiles cannot expose a half-written module.
///
/// # Errors
/// Reading the wasm, compiling it, or writing the cache.
pub fn precompile(
    engine: &Engine,
    name: &str,
    wasm: &Path,
    cache_dir: &Path,
) -> Result<CachedModule, EngineError> {
    precompile_beside(engine, name, wasm, cache_dir, None)
}

/// As [`precompile`], but a module for this wasm and engine already in `shipped` (a read-only
/// cache that came with the interpreters, such as a container image's) is used where it is:
/// nothing is copied or compiled, and every process on the host maps the same file, so its
/// pages are shared. Only a module `shipped` lacks (another CPU, another build) is compiled
/// into `cache_dir`.
///
/// # Errors
/// As [`precompile`].
pub fn precompile_beside(
    engine: &Engine,
    name: &str,
    wasm: &Path,
    cache_dir: &Path,
    shipped: Option<&Path>,
) -> Result<CachedModule, EngineError> {
    let bytes = std::fs::read(wasm).map_err(|source| EngineError::Read {
        path: wasm.into(),
        source,
    })?;
    let wasm_sha256 = sha256_hex(&bytes);
    let cache = CacheDirs { cache_dir, shipped };
    let (cwasm, compiled) =
        cached_or_compiled(engine, (name, &wasm_sha256), cache, wasm, || Ok(bytes))?;
    Ok(CachedModule {
        cwasm,
        wasm_sha256,
        compiled,
        image: None,
    })
}

/// Where compiled modules are looked for: a read-only `shipped` cache first, then `cache_dir`,
/// where new ones are written.
#[derive(Debug, Clone, Copy)]
pub struct CacheDirs<'a> {
    pub cache_dir: &'a Path,
    pub shipped: Option<&'a Path>,
}

/// The `.cwasm` of `name` for a wasm of digest `digest` (hex) when the cache already holds it
/// (the shipped cache first).
pub fn cached(
    engine: &Engine,
    (name, digest): (&str, &str),
    dirs: CacheDirs<'_>,
) -> Option<PathBuf> {
    dirs.shipped
        .into_iter()
        .chain([dirs.cache_dir])
        .map(|dir| cwasm_path(engine, name, digest, dir))
        .find(|cwasm| cwasm.is_file())
}

/// The `.cwasm` of `name` for a wasm of digest `digest` (hex), found in the cache or compiled
/// into it from what `wasm` makes (only then is it called; `source` names it in errors): the
/// file, and whether it was compiled now. Writing goes through a temporary file and a rename,
/// so concurrent precompiles cannot expose a half-written module.
///
/// # Errors
/// What `wasm` fails with, compiling, or writing the cache.
pub fn cached_or_compiled(
    engine: &Engine,
    (name, digest): (&str, &str),
    CacheDirs { cache_dir, shipped }: CacheDirs<'_>,
    source: &Path,
    wasm: impl FnOnce() -> Result<Vec<u8>, EngineError>,
) -> Result<(PathBuf, bool), EngineError> {
    if let Some(cwasm) = cached(engine, (name, digest), CacheDirs { cache_dir, shipped }) {
        return Ok((cwasm, false));
    }
    let cwasm = cwasm_path(engine, name, digest, cache_dir);
    std::fs::create_dir_all(cache_dir).map_err(|source| EngineError::Write {
        path: cache_dir.into(),
        source,
    })?;
    // Precompiles started together (servers starting at once, tests) compile a module once:
    // the others wait for the first (a lock on the cache directory, so nothing is left behind)
    // and find its file. A compile takes minutes and gigabytes.
    let lock = std::fs::File::open(cache_dir)
        .and_then(|dir| {
            rustix::fs::flock(&dir, rustix::fs::FlockOperation::LockExclusive)?;
            Ok(dir)
        })
        .map_err(|source| EngineError::Write {
            path: cache_dir.into(),
            source,
        })?;
    if cwasm.is_file() {
        return Ok((cwasm, false));
    }
    let bytes = wasm()?;
    let compiled = engine
        .precompile_module(&bytes)
        .map_err(|e| EngineError::Compile {
            path: source.into(),
            message: e.to_string(),
        })?;
    let tmp = cwasm.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, &compiled)
        .and_then(|()| std::fs::rename(&tmp, &cwasm))
        .map_err(|source| EngineError::Write {
            path: cwasm.clone(),
            source,
        })?;
    drop(lock);
    Ok((cwasm, true))
}

/// Where [`precompile`] keeps `name`'s module for a wasm of digest `wasm_sha256` (hex) and
/// `engine`'s settings, so a reader can find it without compiling.
pub fn cwasm_path(engine: &Engine, name: &str, wasm_sha256: &str, cache_dir: &Path) -> PathBuf {
    let digest = wasm_sha256.get(..16).unwrap_or(wasm_sha256);
    cache_dir.join(format!(
        "{name}-{digest}-{}.cwasm",
        compatibility_key(engine)
    ))
}

/// Maps a `.cwasm` written by [`precompile`].
///
/// # Errors
/// [`EngineError::Load`] when the file is missing, corrupt or built by another engine.
pub fn load_module(engine: &Engine, cwasm: &Path) -> Result<Module, EngineError> {
    // SAFETY: `cwasm` is only ever written by `precompile` above through `precompile_module` of
    // an engine built by `build_engine`; Wasmtime still checks the header and the engine
    // compatibility hash and refuses a mismatched file. The file lives in a cache directory
    // owned by the operator, not anything a guest can write.
    unsafe { Module::deserialize_file(engine, cwasm) }.map_err(|e| EngineError::Load {
        path: cwasm.into(),
        message: e.to_string(),
    })
}

/// A `.cwasm` mapped when it is first needed, or at once ([`LazyModule::mapped`]).
#[derive(Debug)]
pub struct LazyModule {
    cwasm: PathBuf,
    module: std::cell::OnceCell<Module>,
}

impl LazyModule {
    /// `cwasm`, not mapped yet.
    pub fn new(cwasm: PathBuf) -> Self {
        Self {
            cwasm,
            module: std::cell::OnceCell::new(),
        }
    }

    /// `cwasm`, mapped now.
    ///
    /// # Errors
    /// As [`load_module`].
    pub fn mapped(cwasm: PathBuf) -> Result<Self, EngineError> {
        let lazy = Self::new(cwasm);
        lazy.get()?;
        Ok(lazy)
    }

    /// The module, mapped on the first call.
    ///
    /// # Errors
    /// As [`load_module`].
    pub fn get(&self) -> Result<&Module, EngineError> {
        if let Some(module) = self.module.get() {
            return Ok(module);
        }
        let module = load_module(engine(), &self.cwasm)?;
        Ok(self.module.get_or_init(|| module))
    }
}

/// The runtime directory of `runtimes/prepare.sh` that the worker's unit tests run against:
/// `SANDBOX_RUNTIME_DIR`, else the workspace's `target/runtimes`.
#[cfg(test)]
pub(crate) fn test_runtime_dir() -> PathBuf {
    std::env::var_os("SANDBOX_RUNTIME_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/runtimes"))
}

#[cfg(test)]
pub(crate) mod tests {
    use wasmtime::{Instance, Store, Trap};

    use super::*;

    /// `(module (func (export "spin") (loop (br 0))))`, assembled by hand (no `wat` here).
    pub(crate) const SPIN: &[u8] = &[
        0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version 1
        0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // types: () -> ()
        0x03, 0x02, 0x01, 0x00, // functions: one of type 0
        0x07, 0x08, 0x01, 0x04, b's', b'p', b'i', b'n', 0x00, 0x00, // export "spin"
        0x0a, 0x09, 0x01, 0x07, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b, // loop { br 0 }
    ];

    #[test]
    fn digests_are_lower_case_hex_sha256() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let key = compatibility_key(engine());
        assert_eq!(key.len(), 16);
        assert!(
            key.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert_eq!(key, compatibility_key(&build_engine().unwrap()), "stable");
    }

    #[test]
    fn the_engine_meters_fuel_and_a_guest_loop_runs_out() {
        let module = Module::new(engine(), SPIN).unwrap();
        let mut store = Store::new(engine(), ());
        store.set_fuel(10_000).unwrap();
        store.epoch_deadline_callback(|_| Ok(wasmtime::UpdateDeadline::Continue(1)));
        let instance = Instance::new(&mut store, &module, &[]).unwrap();
        let spin = instance
            .get_typed_func::<(), ()>(&mut store, "spin")
            .unwrap();
        let error = spin.call(&mut store, ()).unwrap_err();
        assert_eq!(
            error.downcast_ref::<Trap>(),
            Some(&Trap::OutOfFuel),
            "{error:?}"
        );
        assert_eq!(store.get_fuel().unwrap(), 0);
    }

    #[test]
    fn epochs_interrupt_a_guest_loop() {
        start_epoch_ticker();
        let module = Module::new(engine(), SPIN).unwrap();
        let mut store = Store::new(engine(), 0u32);
        store.set_fuel(u64::MAX).unwrap();
        store.set_epoch_deadline(1);
        // Three ticks, then stop: what `host::on_epoch` does at a hard deadline.
        store.epoch_deadline_callback(|mut ctx| {
            *ctx.data_mut() += 1;
            if *ctx.data() >= 3 {
                Ok(wasmtime::UpdateDeadline::Interrupt)
            } else {
                Ok(wasmtime::UpdateDeadline::Continue(1))
            }
        });
        let instance = Instance::new(&mut store, &module, &[]).unwrap();
        let spin = instance
            .get_typed_func::<(), ()>(&mut store, "spin")
            .unwrap();
        let error = spin.call(&mut store, ()).unwrap_err();
        assert_eq!(
            error.downcast_ref::<Trap>(),
            Some(&Trap::Interrupt),
            "{error:?}"
        );
        assert_eq!(*store.data(), 3);
    }

    #[test]
    fn precompiles_at_once_compile_a_module_once() {
        let dir = tempfile::tempdir().unwrap();
        let wasm = dir.path().join("spin.wasm");
        std::fs::write(&wasm, SPIN).unwrap();
        let cache = dir.path().join("cache");
        let compiled: Vec<bool> = std::thread::scope(|scope| {
            let runs: Vec<_> = (0..4)
                .map(|_| scope.spawn(|| precompile(engine(), "spin", &wasm, &cache).unwrap()))
                .collect();
            runs.into_iter()
                .map(|r| r.join().unwrap().compiled)
                .collect()
        });
        assert_eq!(compiled.iter().filter(|c| **c).count(), 1, "{compiled:?}");
        let files: Vec<_> = std::fs::read_dir(&cache).unwrap().flatten().collect();
        assert_eq!(files.len(), 1, "only the module: {files:?}");
    }

    #[test]
    fn precompiled_modules_are_cached_by_content_and_engine() {
        let dir = tempfile::tempdir().unwrap();
        let wasm = dir.path().join("spin.wasm");
        std::fs::write(&wasm, SPIN).unwrap();
        let cache = dir.path().join("cache");
        let first = precompile(engine(), "spin", &wasm, &cache).unwrap();
        assert!(first.compiled);
        assert_eq!(first.wasm_sha256, sha256_hex(SPIN));
        assert_eq!(
            first.cwasm,
            cache.join(format!(
                "spin-{}-{}.cwasm",
                &first.wasm_sha256[..16],
                compatibility_key(engine())
            ))
        );
        // Only the module is left in the cache: no temporary file.
        let files: Vec<_> = std::fs::read_dir(&cache).unwrap().flatten().collect();
        assert_eq!(files.len(), 1, "{files:?}");
        let again = precompile(engine(), "spin", &wasm, &cache).unwrap();
        assert!(!again.compiled, "the second call uses the cache");
        assert_eq!(again.cwasm, first.cwasm);
        let module = load_module(engine(), &first.cwasm).unwrap();
        assert!(module.get_export("spin").is_some());

        // Another interpreter gets another file.
        let mut other = SPIN.to_vec();
        other.extend_from_slice(&[0x00, 0x03, 0x02, b'h', b'i']); // a custom section
        std::fs::write(&wasm, &other).unwrap();
        let changed = precompile(engine(), "spin", &wasm, &cache).unwrap();
        assert!(changed.compiled);
        assert_ne!(changed.cwasm, first.cwasm);
    }

    #[test]
    fn a_shipped_module_is_used_where_it_is_and_only_a_missing_one_is_compiled() {
        let dir = tempfile::tempdir().unwrap();
        let wasm = dir.path().join("spin.wasm");
        std::fs::write(&wasm, SPIN).unwrap();
        let (shipped, cache) = (dir.path().join("shipped"), dir.path().join("cache"));
        let built = precompile(engine(), "spin", &wasm, &shipped).unwrap();
        let found = precompile_beside(engine(), "spin", &wasm, &cache, Some(&shipped)).unwrap();
        assert!(!found.compiled);
        assert_eq!(found.cwasm, built.cwasm, "the shipped file itself");
        assert!(!cache.exists(), "nothing copied into the writable cache");
        // A module the shipped cache lacks (here: another interpreter) is compiled into the
        // writable cache.
        let mut other = SPIN.to_vec();
        other.extend_from_slice(&[0x00, 0x03, 0x02, b'h', b'i']);
        std::fs::write(&wasm, &other).unwrap();
        let compiled = precompile_beside(engine(), "spin", &wasm, &cache, Some(&shipped)).unwrap();
        assert!(compiled.compiled);
        assert!(compiled.cwasm.starts_with(&cache), "{:?}", compiled.cwasm);
    }

    #[test]
    fn broken_inputs_are_errors_that_say_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.wasm");
        assert!(matches!(
            precompile(engine(), "x", &missing, dir.path()),
            Err(EngineError::Read { path, .. }) if path == missing
        ));
        let junk = dir.path().join("junk.wasm");
        std::fs::write(&junk, b"not wasm").unwrap();
        assert!(matches!(
            precompile(engine(), "x", &junk, dir.path()),
            Err(EngineError::Compile { .. })
        ));
        let cwasm = dir.path().join("corrupt.cwasm");
        std::fs::write(&cwasm, b"\x7fELF but not a module").unwrap();
        let error = load_module(engine(), &cwasm).unwrap_err();
        assert!(matches!(error, EngineError::Load { .. }), "{error:?}");
        assert!(
            error
                .to_string()
                .ends_with("; run `sandbox-worker precompile` again"),
            "{error}"
        );
        assert!(matches!(
            load_module(engine(), &dir.path().join("absent.cwasm")),
            Err(EngineError::Load { .. })
        ));
    }
}
