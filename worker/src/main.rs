//! `sandbox-worker`: parses its command line and hands over to the library.
//!
//! - `sandbox-worker precompile --runtime-dir DIR [--cache-dir DIR]` compiles the interpreters
//!   in DIR once and prints a JSON manifest of the cached modules on stdout.
//! - `sandbox-worker serve --language L --socket PATH --workspace DIR --module CWASM
//!   --wasm-sha256 HEX [--memory-bytes N] [--stdout-cap N] [--stderr-cap N]
//!   [--mount-ro GUEST=HOST]... [--mount-rw GUEST=HOST]... [--jail LAYERS] [--require LAYERS]
//!   [--disk-quota-bytes N --disk-quota-files N]`
//!   serves one session, jailed in LAYERS (`seccomp,landlock,netns,nproc,fds`); a required
//!   layer that cannot be applied makes it refuse. The disk quota bounds what `/app` and the
//!   `/tmp` mount hold together (bytes; files, directories and links).
//! - `sandbox-worker jail-check` applies every jail layer to itself and prints what held, as
//!   JSON, on stdout (the supervisor runs it once at start-up).
//! - `sandbox-worker jail-probe <serve's options>` (tests only) starts like `serve`, then
//!   attacks its own jail and reports every attempt (see `probe`).

use std::path::PathBuf;
use std::process::ExitCode;

use sandbox_protocol::{Language, LayerSet};
use sandbox_worker::host::{Mount, SessionConfig};
use sandbox_worker::jail::{self, Early, JailArgs};
use sandbox_worker::quota::{Quota, QuotaLimits};
use sandbox_worker::serve::ServeArgs;
use sandbox_worker::{ReadyClock, WorkerError, engine};

/// The interpreters `precompile` looks for, by file name in the runtime directory.
const RUNTIMES: [(&str, &str); 2] = [
    ("python", "python-3.12.0.wasm"),
    ("javascript", "quickjs-ng.wasm"),
];

fn main() -> ExitCode {
    let ready_clock = ReadyClock::start();
    let args: Vec<String> = std::env::args().skip(1).collect();
    // The first step of the jail, before tracing or anything else can start a thread or open
    // a descriptor (see `jail::early`).
    let early = jail::early(jail::requested_by(&args));
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let result = match args.first().map(String::as_str) {
        Some("precompile") => precompile(&args[1..]),
        Some("compile-python") => compile_python(&args[1..]),
        Some("serve") => parse_serve(&args[1..], early, false)
            .and_then(|a| sandbox_worker::serve::run(a, ready_clock)),
        Some("jail-probe") => parse_serve(&args[1..], early, true)
            .and_then(|a| sandbox_worker::serve::run(a, ready_clock)),
        Some("jail-check") => {
            let report = jail::check(&early);
            println!(
                "{}",
                serde_json::to_string(&report).unwrap_or_else(|_| "{}".into())
            );
            Ok(())
        }
        _ => Err(WorkerError::Usage(
            "sandbox-worker precompile|serve|jail-check [options]".into(),
        )),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, source = ?std::error::Error::source(&e), "sandbox-worker failed");
            eprintln!("sandbox-worker: {e}");
            ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(1))
        }
    }
}

/// `--name value` pairs.
fn options(args: &[String]) -> Result<Vec<(&str, &str)>, WorkerError> {
    args.chunks(2)
        .map(|pair| match pair {
            [k, v] if k.starts_with("--") => Ok((&k[2..], v.as_str())),
            _ => Err(WorkerError::Usage(format!(
                "expected `--option value`, got {pair:?}"
            ))),
        })
        .collect()
}

fn number(name: &str, value: &str) -> Result<usize, WorkerError> {
    value
        .parse()
        .map_err(|_| WorkerError::Usage(format!("--{name} takes a number, got {value:?}")))
}

/// `GUEST=HOST`, e.g. `/data=/srv/sandbox/data`.
fn mount(value: &str, writable: bool) -> Result<Mount, WorkerError> {
    match value.split_once('=') {
        Some((guest, host)) if guest.starts_with('/') && !host.is_empty() => Ok(Mount {
            guest: guest.to_owned(),
            host: PathBuf::from(host),
            writable,
        }),
        _ => Err(WorkerError::Usage(format!(
            "--mount-ro/--mount-rw take GUEST=HOST, got {value:?}"
        ))),
    }
}

/// A `--jail`/`--require` value.
fn layers(name: &str, value: &str) -> Result<LayerSet, WorkerError> {
    LayerSet::parse(value).map_err(|e| WorkerError::Usage(format!("--{name}: {e}")))
}

fn parse_serve(args: &[String], early: Early, probe: bool) -> Result<ServeArgs, WorkerError> {
    let mut language = None;
    let mut jail = JailArgs {
        early,
        ..JailArgs::default()
    };
    let (mut socket, mut workspace, mut module, mut sha) = (None, None, None, String::new());
    let (mut quota_bytes, mut quota_files) = (None, None);
    let mut config = SessionConfig {
        mounts: Vec::new(),
        memory_bytes: 256 << 20,
        stdout_cap: 1 << 20,
        stderr_cap: 1 << 20,
        quota: None,
    };
    for (key, value) in options(args)? {
        match key {
            "language" => {
                language = Some(match value {
                    "python" => Language::Python,
                    "javascript" => Language::JavaScript,
                    other => return Err(WorkerError::Usage(format!("unknown language {other:?}"))),
                })
            }
            "socket" => socket = Some(PathBuf::from(value)),
            "workspace" => workspace = Some(PathBuf::from(value)),
            "module" => module = Some(PathBuf::from(value)),
            "wasm-sha256" => sha = value.to_owned(),
            "memory-bytes" => config.memory_bytes = number(key, value)?,
            "stdout-cap" => config.stdout_cap = number(key, value)?,
            "stderr-cap" => config.stderr_cap = number(key, value)?,
            "mount-ro" | "mount-rw" => config.mounts.push(mount(value, key == "mount-rw")?),
            "disk-quota-bytes" => quota_bytes = Some(number(key, value)? as u64),
            "disk-quota-files" => quota_files = Some(number(key, value)? as u64),
            "jail" => jail.requested = layers(key, value)?,
            "require" => jail.required = layers(key, value)?,
            other => return Err(WorkerError::Usage(format!("unknown option --{other}"))),
        }
    }
    let missing = |what: &str| WorkerError::Usage(format!("serve needs --{what}"));
    let workspace = workspace.ok_or_else(|| missing("workspace"))?;
    if quota_bytes.is_some() || quota_files.is_some() {
        let limits = QuotaLimits {
            bytes: quota_bytes.unwrap_or(u64::MAX),
            entries: quota_files.unwrap_or(u64::MAX),
        };
        // The session's own directories; `/data` and the shared volume are not the session's.
        let mut roots = vec![("/app".to_owned(), workspace.clone())];
        roots.extend(
            config
                .mounts
                .iter()
                .filter(|m| m.writable && m.guest == "/tmp")
                .map(|m| (m.guest.clone(), m.host.clone())),
        );
        config.quota = Some(Quota::new(limits, roots).into_shared());
    }
    Ok(ServeArgs {
        language: language.ok_or_else(|| missing("language"))?,
        socket: socket.ok_or_else(|| missing("socket"))?,
        workspace,
        module: module.ok_or_else(|| missing("module"))?,
        wasm_sha256: sha,
        config,
        jail,
        probe,
    })
}

/// Compiles the vendored Python packages (`DATA/site-packages`) to bytecode under
/// `DATA/pycache` with the sandbox's own CPython, so imports in sessions skip compiling source
/// (3–7× less fuel). Uses unchecked-hash pycs: /data is read-only, sources never change.
fn compile_python(args: &[String]) -> Result<(), WorkerError> {
    let (mut runtime_dir, mut data_dir) = (None, None);
    for (key, value) in options(args)? {
        match key {
            "runtime-dir" => runtime_dir = Some(PathBuf::from(value)),
            "data-dir" => data_dir = Some(PathBuf::from(value)),
            other => return Err(WorkerError::Usage(format!("unknown option --{other}"))),
        }
    }
    let runtime_dir = runtime_dir
        .ok_or_else(|| WorkerError::Usage("compile-python needs --runtime-dir".into()))?;
    let data_dir = data_dir.unwrap_or_else(|| runtime_dir.join("data"));
    let engine = engine::engine();
    let cached = engine::precompile(
        engine,
        "python",
        &runtime_dir.join(RUNTIMES[0].1),
        &runtime_dir.join("cache"),
    )?;
    let module = engine::load_module(engine, &cached.cwasm)?;
    let linker = sandbox_worker::host::build_linker(engine)
        .map_err(|e| WorkerError::Runtime(format!("{e:#}")))?;
    let pycache = data_dir.join("pycache");
    std::fs::create_dir_all(&pycache).map_err(WorkerError::Io)?;
    let scratch = std::env::temp_dir().join(format!("sandbox-compile-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(WorkerError::Io)?;
    let config = SessionConfig {
        mounts: vec![
            Mount {
                guest: "/data".into(),
                host: data_dir.clone(),
                writable: false,
            },
            Mount {
                guest: "/data/pycache".into(),
                host: pycache,
                writable: true,
            },
        ],
        memory_bytes: 1 << 30,
        stdout_cap: 1 << 20,
        stderr_cap: 1 << 20,
        quota: None,
    };
    let argv = [
        "python",
        "-I",
        "-S",
        "-X",
        "utf8",
        "-X",
        "pycache_prefix=/data/pycache",
        "-m",
        "compileall",
        "-q",
        "--invalidation-mode",
        "unchecked-hash",
        "/data/site-packages",
    ];
    let started = std::time::Instant::now();
    let ran = sandbox_worker::python::run_to_completion(
        &module,
        &linker,
        &argv,
        &scratch,
        &config,
        u64::MAX / 4,
    );
    let _ = std::fs::remove_dir_all(&scratch);
    let (status, _stdout, stderr) =
        ran.map_err(|e| WorkerError::Runtime(format!("compileall failed: {e:#}")))?;
    // Status 1 means some file did not compile (e.g. a Python 2 test file shipped in a
    // package): its import would fail anyway; everything else has bytecode.
    if status > 1 {
        return Err(WorkerError::Runtime(format!(
            "compileall exited with {status}: {}",
            String::from_utf8_lossy(&stderr)
        )));
    }
    tracing::info!(
        status,
        ms = started.elapsed().as_millis() as u64,
        "vendored packages compiled"
    );
    Ok(())
}

fn precompile(args: &[String]) -> Result<(), WorkerError> {
    let (mut runtime_dir, mut cache_dir) = (None, None);
    for (key, value) in options(args)? {
        match key {
            "runtime-dir" => runtime_dir = Some(PathBuf::from(value)),
            "cache-dir" => cache_dir = Some(PathBuf::from(value)),
            other => return Err(WorkerError::Usage(format!("unknown option --{other}"))),
        }
    }
    let runtime_dir =
        runtime_dir.ok_or_else(|| WorkerError::Usage("precompile needs --runtime-dir".into()))?;
    let cache_dir = cache_dir.unwrap_or_else(|| runtime_dir.join("cache"));
    let engine = engine::engine();
    let mut manifest = serde_json::Map::new();
    for (name, file) in RUNTIMES {
        let started = std::time::Instant::now();
        let cached = engine::precompile(engine, name, &runtime_dir.join(file), &cache_dir)?;
        tracing::info!(
            runtime = name,
            compiled = cached.compiled,
            ms = started.elapsed().as_millis() as u64,
            "module ready"
        );
        manifest.insert(
            name.into(),
            serde_json::json!({ "cwasm": cached.cwasm, "wasm_sha256": cached.wasm_sha256 }),
        );
    }
    println!("{}", serde_json::Value::Object(manifest));
    Ok(())
}
