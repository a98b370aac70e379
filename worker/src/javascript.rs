//! A JavaScript session: our QuickJS-NG guest (`runtimes/js-guest`), a WASI reactor whose
//! `sb_eval` export runs one snippet as global script code in a context that lives as long as
//! the instance, so `var`, `let`, `const` and functions persist.
//!
//! A reactor's wasm stack is empty between calls, so after every execution that returned a copy
//! of linear memory is a complete snapshot of the session. When an execution traps (fuel, hard
//! deadline, stack exhaustion), the snapshot is written into a fresh instance and the session
//! continues from the state before that execution: it is rolled back, not lost.

use std::path::Path;
use std::sync::Arc;

use sandbox_protocol::{
    ErrorKind, ExecuteRequest, ExecutionKind, ExecutionReport, GuestError, Language, ReadyInfo,
    Response, Restart, StateAfterRestart,
};
use serde::Deserialize;
use wasmtime::{Instance, Linker, Memory, Module, Result, Store, TypedFunc, format_err};

use crate::host::{
    Control, HostState, Outcome, SessionConfig, SoftInterrupt, classify_trap, on_epoch,
};
use crate::serve::Link;
use crate::{ReadyClock, WorkerError};

/// QuickJS-NG version vendored by rquickjs 0.14.0.
pub const QUICKJS_VERSION: &str = "0.16.2";

/// Fuel for instantiation and `sb_init` (about 2.5 × 10^6 measured).
const STARTUP_FUEL: u64 = 1_000_000_000;

/// Lists the global bindings user code created (everything not on `globalThis` when the
/// session started), as JSON. Top-level `let`/`const` live in QuickJS's script scope, not on
/// `globalThis`, and cannot be enumerated.
const INSPECT: &str = r#"(() => {
  const base = new Set(globalThis.__sandboxBaseline || []);
  const variables = [];
  for (const name of Object.getOwnPropertyNames(globalThis).sort()) {
    if (base.has(name) || name === "__sandboxBaseline") continue;
    let value;
    try { value = globalThis[name]; } catch (e) { continue; }
    const type = value === null ? "null" : Array.isArray(value) ? "array"
      : typeof value === "function" ? (/^class/.test(Function.prototype.toString.call(value)) ? "class" : "function")
      : typeof value;
    let repr;
    try { repr = typeof value === "function" ? `[${type} ${value.name}]` : JSON.stringify(value) ?? String(value); }
    catch (e) { repr = String(value); }
    if (repr.length > 120) repr = repr.slice(0, 117) + "...";
    variables.push({ name, type, repr });
  }
  return JSON.stringify({ variables, modules: [], imported: [] });
})()"#;

/// Remembers the built-in globals right after start-up, for [`INSPECT`].
const BASELINE: &str = "Object.defineProperty(globalThis, '__sandboxBaseline', { value: Object.getOwnPropertyNames(globalThis), enumerable: false }); undefined";

/// QuickJS's own heap limit, as a share of the linear-memory cap: it must trip (a catchable
/// "out of memory" with the context intact) before the host refuses `memory.grow`.
fn quickjs_heap_limit(memory_bytes: usize) -> i32 {
    i32::try_from(memory_bytes / 4 * 3).unwrap_or(i32::MAX)
}

/// The guest's answer to `sb_eval`.
#[derive(Debug, Deserialize)]
struct EvalResult {
    ok: bool,
    #[serde(default)]
    value: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    stack: Option<String>,
}

/// The instance and its exports.
struct Guest {
    store: Store<HostState>,
    instance: Instance,
    memory: Memory,
    alloc: TypedFunc<i32, i32>,
    eval: TypedFunc<(i32, i32, i32), i64>,
}

/// One JavaScript session.
pub struct JsSession<'m> {
    module: &'m Module,
    linker: &'m Linker<HostState>,
    workspace: &'m Path,
    config: SessionConfig,
    control: Arc<Control>,
    guest: Guest,
    /// Linear memory after the last execution that returned.
    snapshot: Vec<u8>,
    cell: i32,
}

impl<'m> JsSession<'m> {
    /// Instantiates the guest and creates its runtime and context.
    ///
    /// # Errors
    /// When the guest cannot be instantiated or initialised.
    pub fn start(
        module: &'m Module,
        linker: &'m Linker<HostState>,
        workspace: &'m Path,
        config: SessionConfig,
        control: Arc<Control>,
    ) -> Result<Self> {
        let mut guest = instantiate(module, linker, workspace, &config, control.clone())?;
        guest.store.set_fuel(STARTUP_FUEL)?;
        let snapshot = {
            let init: TypedFunc<(i32, i32), i32> = guest_func(&mut guest, "sb_init")?;
            let status = init.call(
                &mut guest.store,
                (quickjs_heap_limit(config.memory_bytes), 0),
            )?;
            if status != 0 {
                return Err(format_err!("sb_init failed with status {status}"));
            }
            let code = BASELINE.as_bytes();
            let ptr = guest.alloc.call(&mut guest.store, code.len() as i32)?;
            guest
                .memory
                .write(&mut guest.store, ptr as u32 as usize, code)?;
            guest
                .eval
                .call(&mut guest.store, (ptr, code.len() as i32, 0))?;
            guest.memory.data(&guest.store).to_vec()
        };
        Ok(Self {
            module,
            linker,
            workspace,
            config,
            control,
            guest,
            snapshot,
            cell: 0,
        })
    }

    /// Runs one execution and reports it; a trap rolls the session back.
    pub fn execute(&mut self, request: &ExecuteRequest) -> ExecutionReport {
        self.cell += 1;
        self.guest.store.data_mut().begin(request);
        let inspect;
        let request = match request.kind {
            ExecutionKind::User => request,
            ExecutionKind::Inspect => {
                inspect = ExecuteRequest {
                    code: INSPECT.into(),
                    ..request.clone()
                };
                &inspect
            }
        };
        if !request.argv.is_empty() {
            // `node FILE ARGS` from the shell: scriptArgs as in qjs.
            let args = serde_json::to_string(&request.argv).unwrap_or_else(|_| "[]".into());
            let set = ExecuteRequest {
                code: format!("globalThis.scriptArgs = {args}; undefined"),
                ..request.clone()
            };
            let _ = self.call_eval(&set);
        }
        self.guest.store.data_mut().piped_stdin = request.stdin.iter().copied().collect();
        let called = self.call_eval(request);
        self.guest.store.data_mut().piped_stdin.clear();
        let fuel_left = self.guest.store.get_fuel().unwrap_or(0);
        match called {
            Ok(result) => {
                let mut outcome = self.outcome(result);
                if request.kind == ExecutionKind::Inspect {
                    // The guest returns the repr of a JSON string: unquote it.
                    outcome.result = outcome
                        .result
                        .and_then(|r| serde_json::from_str::<String>(&r).ok());
                }
                // Even a thrown error leaves a consistent context (what ran before the throw
                // stays defined, as in Python), so it becomes the new rollback point.
                self.take_snapshot();
                self.guest.store.data_mut().finish(fuel_left, outcome, None)
            }
            Err(trap) => {
                let error = classify_trap(&trap, self.guest.store.data());
                let (stdout, stderr) = {
                    let state = self.guest.store.data_mut();
                    (state.stdout.take(), state.stderr.take())
                };
                let active = self.guest.store.data_mut().active.take();
                let restart = match self.rollback() {
                    Ok(()) => Restart {
                        reason: format!(
                            "{}; the JavaScript context was rolled back to its state before this execution",
                            error.message
                        ),
                        state: StateAfterRestart::RolledBack,
                    },
                    Err(e) => {
                        tracing::error!(error = %e, "rollback failed, starting a fresh context");
                        self.restart_fresh();
                        Restart {
                            reason: format!(
                                "{}; the JavaScript context could not be restored and was recreated",
                                error.message
                            ),
                            state: StateAfterRestart::Lost,
                        }
                    }
                };
                // Report through the new instance's state, with the old execution's data.
                let state = self.guest.store.data_mut();
                state.active = active;
                state.stdout.push(&stdout.0);
                state.stderr.push(&stderr.0);
                let mut report = state.finish(
                    fuel_left,
                    Outcome {
                        error: Some(error),
                        ..Outcome::default()
                    },
                    Some(restart),
                );
                report.stdout_truncated |= stdout.1;
                report.stderr_truncated |= stderr.1;
                report
            }
        }
    }

    fn call_eval(&mut self, request: &ExecuteRequest) -> Result<EvalResult> {
        let guest = &mut self.guest;
        guest.store.set_fuel(crate::host::fuel_for(request.fuel))?;
        let code = request.code.as_bytes();
        let len = i32::try_from(code.len()).map_err(|_| format_err!("code too large"))?;
        let ptr = guest.alloc.call(&mut guest.store, len)?;
        guest
            .memory
            .write(&mut guest.store, ptr as u32 as usize, code)?;
        let packed = guest.eval.call(&mut guest.store, (ptr, len, self.cell))? as u64;
        let (at, size) = ((packed >> 32) as usize, (packed & 0xffff_ffff) as usize);
        let data = guest.memory.data(&guest.store);
        let bytes = data
            .get(at..at + size)
            .ok_or_else(|| format_err!("sb_eval result out of bounds"))?;
        serde_json::from_slice(bytes)
            .map_err(|e| format_err!("sb_eval result is not valid JSON: {e}"))
    }

    /// Classifies the guest's answer, and writes an uncaught error to stderr as node would.
    fn outcome(&mut self, result: EvalResult) -> Outcome {
        if result.ok {
            return Outcome {
                result: result.value,
                ..Outcome::default()
            };
        }
        let state = self.guest.store.data_mut();
        let name = result.name.unwrap_or_else(|| "Error".into());
        let message = result.message.unwrap_or_default();
        let stack = result.stack.unwrap_or_default();
        let mut text = format!("Uncaught {name}: {message}\n{stack}");
        if !text.ends_with('\n') {
            text.push('\n');
        }
        state.stderr.push(text.as_bytes());
        let (kind, message) = match result.kind.as_deref() {
            Some("syntax") => (ErrorKind::Syntax, format!("{name}: {message}")),
            Some("interrupted") => match state
                .active
                .as_ref()
                .and_then(|a| Some((a, a.interrupted?)))
            {
                Some((active, cause)) => {
                    active.soft_stop_error(cause, "InternalError: interrupted")
                }
                None => (ErrorKind::Timeout, format!("{name}: {message}")),
            },
            Some("out_of_memory") => (ErrorKind::OutOfMemory, format!("{name}: {message}")),
            Some("stack_overflow") => (ErrorKind::StackOverflow, format!("{name}: {message}")),
            _ => (ErrorKind::Runtime, format!("{name}: {message}")),
        };
        Outcome {
            error: Some(GuestError {
                kind,
                name: Some(name),
                message,
            }),
            ..Outcome::default()
        }
    }

    fn take_snapshot(&mut self) {
        let data = self.guest.memory.data(&self.guest.store);
        self.snapshot.clear();
        self.snapshot.extend_from_slice(data);
    }

    /// Writes the snapshot into a fresh instance; no `sb_init`, the memory already holds the
    /// initialised runtime.
    fn rollback(&mut self) -> Result<()> {
        let mut guest = instantiate(
            self.module,
            self.linker,
            self.workspace,
            &self.config,
            self.control.clone(),
        )?;
        let have = guest.memory.data_size(&guest.store);
        if self.snapshot.len() > have {
            let pages = (self.snapshot.len() - have).div_ceil(65536) as u64;
            guest.memory.grow(&mut guest.store, pages)?;
        }
        guest.memory.data_mut(&mut guest.store)[..self.snapshot.len()]
            .copy_from_slice(&self.snapshot);
        self.guest = guest;
        Ok(())
    }

    /// Last resort when the snapshot cannot be restored: a brand-new context.
    fn restart_fresh(&mut self) {
        match Self::start(
            self.module,
            self.linker,
            self.workspace,
            self.config.clone(),
            self.control.clone(),
        ) {
            Ok(fresh) => {
                self.guest = fresh.guest;
                self.snapshot = fresh.snapshot;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot recreate the JavaScript context");
                std::process::exit(WorkerError::Runtime(String::new()).exit_code());
            }
        }
    }
}

fn guest_func<P: wasmtime::WasmParams, R: wasmtime::WasmResults>(
    guest: &mut Guest,
    name: &str,
) -> Result<TypedFunc<P, R>> {
    guest.instance.get_typed_func(&mut guest.store, name)
}

fn instantiate(
    module: &Module,
    linker: &Linker<HostState>,
    workspace: &Path,
    config: &SessionConfig,
    control: Arc<Control>,
) -> Result<Guest> {
    let state = HostState::new(
        workspace,
        &[("HOME", "/app")],
        &["qjs"],
        config,
        SoftInterrupt::JsFlag,
        control,
    )?;
    let mut store = Store::new(module.engine(), state);
    store.limiter(|s| &mut s.limiter);
    store.epoch_deadline_callback(on_epoch);
    store.set_epoch_deadline(1);
    store.set_fuel(STARTUP_FUEL)?;
    let instance = linker.instantiate(&mut store, module)?;
    let memory = instance
        .get_memory(&mut store, "memory")
        .ok_or_else(|| format_err!("the guest exports no memory"))?;
    store.data_mut().memory = Some(memory);
    if let Ok(init) = instance.get_typed_func::<(), ()>(&mut store, "_initialize") {
        init.call(&mut store, ())?;
    }
    let alloc = instance.get_typed_func(&mut store, "sb_alloc")?;
    let eval = instance.get_typed_func(&mut store, "sb_eval")?;
    Ok(Guest {
        store,
        instance,
        memory,
        alloc,
        eval,
    })
}

/// Runs the JavaScript session until the supervisor goes away.
///
/// # Errors
/// When the guest cannot start.
pub fn serve(
    module: &Module,
    linker: &Linker<HostState>,
    workspace: &Path,
    config: &SessionConfig,
    link: Link,
    ready_clock: ReadyClock,
) -> Result<(), WorkerError> {
    let mut session = JsSession::start(
        module,
        linker,
        workspace,
        config.clone(),
        link.control.clone(),
    )
    .map_err(|e| WorkerError::Runtime(format!("QuickJS failed to start: {e:#}")))?;
    let ready = Response::Ready(ReadyInfo {
        language: Language::JavaScript,
        runtime_version: QUICKJS_VERSION.into(),
        startup_us: ready_clock.elapsed_us(),
        jail: link.jail.clone(),
    });
    if link.send(&ready).is_err() {
        return Ok(());
    }
    while let Ok(job) = link.requests.recv() {
        let report = session.execute(&job.request);
        if link.deliver(job.reply, report).is_err() {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::OnceLock;

    use super::*;
    use crate::engine::{compatibility_key, engine, load_module, sha256_hex};
    use crate::host::build_linker;

    /// The memory cap of the test sessions.
    const MEMORY: usize = 64 << 20;

    /// The QuickJS guest of `runtimes/prepare.sh`: its precompiled module when the cache has
    /// one, else compiled here.
    fn quickjs() -> &'static Module {
        static MODULE: OnceLock<Module> = OnceLock::new();
        MODULE.get_or_init(|| {
            let dir = std::env::var_os("SANDBOX_RUNTIME_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/runtimes")
                });
            let wasm = dir.join("quickjs-ng.wasm");
            let bytes = std::fs::read(&wasm).unwrap_or_else(|e| {
                panic!("{}: {e} (run runtimes/prepare.sh first)", wasm.display())
            });
            let cwasm = dir.join("cache").join(format!(
                "javascript-{}-{}.cwasm",
                &sha256_hex(&bytes)[..16],
                compatibility_key(engine())
            ));
            if cwasm.is_file() {
                load_module(engine(), &cwasm).unwrap()
            } else {
                Module::new(engine(), &bytes).unwrap()
            }
        })
    }

    /// Runs `test` with a fresh session on a thread with the guest thread's stack (Wasmtime
    /// runs wasm on the caller's native stack; the default 2 MiB is less than the wasm stack).
    fn with_session(test: impl FnOnce(&mut JsSession<'_>, &Path) + Send + 'static) {
        std::thread::Builder::new()
            .stack_size(16 << 20)
            .spawn(move || {
                let linker = build_linker(engine()).unwrap();
                let workspace = tempfile::tempdir().unwrap();
                let config = SessionConfig {
                    mounts: Vec::new(),
                    memory_bytes: MEMORY,
                    stdout_cap: 1 << 20,
                    stderr_cap: 1 << 20,
                    quota: None,
                };
                let mut session = JsSession::start(
                    quickjs(),
                    &linker,
                    workspace.path(),
                    config,
                    Arc::new(Control::default()),
                )
                .unwrap();
                test(&mut session, workspace.path());
            })
            .unwrap()
            .join()
            .unwrap();
    }

    fn request(code: &str) -> ExecuteRequest {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        ExecuteRequest::user(format!("exec-{n}"), code.into(), 10_000_000_000, 30_000)
    }

    fn run(session: &mut JsSession<'_>, code: &str) -> ExecutionReport {
        session.execute(&request(code))
    }

    /// The result of code that must succeed.
    fn value(session: &mut JsSession<'_>, code: &str) -> String {
        let report = run(session, code);
        assert!(report.error.is_none(), "{code}: {report:?}");
        report.result.unwrap_or_default()
    }

    const DEEP: &str = "var lost = 1; console.log('before'); function down(n) { let a = [n, n + 1, n + 2]; return down(n + 1) + a[0] } down(0)";

    #[test]
    fn a_trap_restores_the_state_after_the_last_call_that_returned() {
        with_session(|session, _| {
            value(session, "var kept = 'still here'");
            // A thrown error is not a trap: what ran before the throw stays.
            let thrown = run(session, "var partial = 1; null.x");
            assert_eq!(thrown.error.unwrap().kind, ErrorKind::Runtime);
            assert!(thrown.restart.is_none());

            let deep = run(session, DEEP);
            assert_eq!(deep.error.as_ref().unwrap().kind, ErrorKind::StackOverflow);
            let restart = deep.restart.expect("a restart");
            assert_eq!(restart.state, StateAfterRestart::RolledBack);
            assert!(restart.reason.ends_with(
                "; the JavaScript context was rolled back to its state before this execution"
            ));
            assert_eq!(deep.stdout, b"before\n", "output before the trap is kept");
            assert_eq!(
                value(session, "[typeof lost, kept, partial].join()"),
                r#""undefined,still here,1""#
            );
        });
    }

    #[test]
    fn a_rollback_that_cannot_be_restored_starts_a_fresh_context() {
        with_session(|session, _| {
            value(session, "var kept = 'still here'");
            // A snapshot larger than the memory cap: the fresh instance cannot grow to hold it.
            session.snapshot = vec![0; MEMORY + 65536];
            let deep = run(session, DEEP);
            assert_eq!(deep.error.as_ref().unwrap().kind, ErrorKind::StackOverflow);
            let restart = deep.restart.expect("a restart");
            assert_eq!(restart.state, StateAfterRestart::Lost);
            assert!(
                restart
                    .reason
                    .ends_with("; the JavaScript context could not be restored and was recreated"),
                "{}",
                restart.reason
            );
            assert_eq!(deep.stdout, b"before\n");
            assert_eq!(
                value(session, "[typeof lost, typeof kept].join()"),
                r#""undefined,undefined""#,
                "nothing of before survives"
            );
            // The fresh context has a snapshot of its own: the next trap rolls back to it.
            value(session, "var again = 2");
            let deep = run(session, DEEP);
            assert_eq!(deep.restart.unwrap().state, StateAfterRestart::RolledBack);
            assert_eq!(value(session, "again + (typeof lost)"), r#""2undefined""#);
        });
    }

    #[test]
    fn inspect_lists_what_user_code_defined() {
        with_session(|session, _| {
            value(
                session,
                "var greeting = 'hi'; function f() {} var list = [1, 2]; let hidden = 1; class Hidden {}",
            );
            let report = session.execute(&ExecuteRequest {
                kind: ExecutionKind::Inspect,
                ..request("ignored")
            });
            let state: serde_json::Value =
                serde_json::from_str(&report.result.expect("a listing")).unwrap();
            // Top-level `let` and `class` live in the script scope, which cannot be listed.
            assert_eq!(
                state["variables"],
                serde_json::json!([
                    { "name": "f", "type": "function", "repr": "[function f]" },
                    { "name": "greeting", "type": "string", "repr": "\"hi\"" },
                    { "name": "list", "type": "array", "repr": "[1,2]" },
                ])
            );
        });
    }

    #[test]
    fn node_runs_get_script_args_and_piped_stdin() {
        with_session(|session, _| {
            let report = session.execute(&ExecuteRequest {
                argv: vec!["-e".into(), "a".into(), "b".into()],
                stdin: b"piped".to_vec(),
                ..request("scriptArgs.join() + '|' + std.in.readAsString()")
            });
            assert_eq!(report.result.as_deref(), Some(r#""-e,a,b|piped""#));
            // Nothing is left for the next execution.
            assert_eq!(value(session, "std.in.readAsString()"), r#""""#);
        });
    }

    #[test]
    fn a_cancel_interrupts_and_keeps_the_context() {
        crate::engine::start_epoch_ticker();
        with_session(|session, _| {
            value(session, "var kept = 1");
            let control = session.control.clone();
            let request = request("var during = 1; for (;;) {}");
            let id = request.execution_id.clone();
            let canceller = std::thread::spawn(move || {
                while !control.request_cancel(&id) {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
            });
            let report = session.execute(&request);
            canceller.join().unwrap();
            let error = report.error.expect("cancelled");
            assert_eq!(error.kind, ErrorKind::Cancelled, "{error:?}");
            assert_eq!(
                error.message,
                "the execution was cancelled (InternalError: interrupted); the session state is intact"
            );
            assert!(report.restart.is_none());
            assert_eq!(value(session, "kept + during"), "2");
        });
    }
}
