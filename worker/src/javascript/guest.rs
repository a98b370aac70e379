//! The QuickJS guest as the host calls it: an instance in its own store ([`Guest`]) with the
//! exports `sb_init`, `sb_alloc` and `sb_eval`, and what its JSON answer to `sb_eval` means
//! ([`EvalResult::into_outcome`]).

use std::path::Path;
use std::sync::Arc;

use sandbox_protocol::{ErrorKind, GuestError};
use serde::Deserialize;
use wasmtime::{Instance, Linker, Memory, Module, Result, Store, TypedFunc, format_err};

use crate::host::{Control, HostState, Outcome, SessionConfig, SoftInterrupt, new_store};

/// Fuel for instantiation and `sb_init` (about 2.5 × 10^6 measured).
pub(super) const STARTUP_FUEL: u64 = 1_000_000_000;

/// QuickJS's own heap limit, as a share of the linear-memory cap: it must trip (a catchable
/// "out of memory" with the context intact) before the host refuses `memory.grow`.
fn quickjs_heap_limit(memory_bytes: usize) -> i32 {
    i32::try_from(memory_bytes / 4 * 3).unwrap_or(i32::MAX)
}

/// The guest's answer to `sb_eval`.
#[derive(Debug, Deserialize)]
pub(super) struct EvalResult {
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

impl EvalResult {
    /// Classifies the answer, and writes an uncaught error to stderr as node would.
    pub(super) fn into_outcome(self, state: &mut HostState) -> Outcome {
        if self.ok {
            return Outcome {
                result: self.value,
                ..Outcome::default()
            };
        }
        let name = self.name.unwrap_or_else(|| "Error".into());
        let message = self.message.unwrap_or_default();
        let stack = self.stack.unwrap_or_default();
        let mut text = format!("Uncaught {name}: {message}\n{stack}");
        if !text.ends_with('\n') {
            text.push('\n');
        }
        state.stderr.push(text.as_bytes());
        let (kind, message) = match self.kind.as_deref() {
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
            // `new ArrayBuffer(8 GiB)`: QuickJS refuses a buffer the 32-bit heap cannot hold
            // before allocating; it is running out of memory all the same.
            _ if name == "RangeError" && message == "invalid array buffer length" => {
                (ErrorKind::OutOfMemory, format!("{name}: {message}"))
            }
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
}

/// The instance and its exports.
pub(super) struct Guest {
    pub(super) store: Store<HostState>,
    instance: Instance,
    pub(super) memory: Memory,
    alloc: TypedFunc<i32, i32>,
    eval: TypedFunc<(i32, i32, i32), i64>,
}

impl Guest {
    /// A fresh instance of the guest in a store of its own, its reactor initialised; no QuickJS
    /// runtime yet (see [`Guest::init`]).
    pub(super) fn instantiate(
        module: &Module,
        linker: &Linker<HostState>,
        workspace: &Path,
        config: &SessionConfig,
        control: Arc<Control>,
    ) -> Result<Guest> {
        let state = Self::host_state(workspace, config, control)?;
        let mut store = new_store(module.engine(), state, STARTUP_FUEL)?;
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

    /// The host side of an instance in `workspace`'s directories with `config`'s settings.
    pub(super) fn host_state(
        workspace: &Path,
        config: &SessionConfig,
        control: Arc<Control>,
    ) -> Result<HostState> {
        HostState::new(
            workspace,
            &[("HOME", "/app")],
            &["qjs"],
            config,
            SoftInterrupt::JsFlag,
            control,
        )
    }

    /// Creates the QuickJS runtime and context (`sb_init`), its heap limited below
    /// `memory_bytes`.
    pub(super) fn init(&mut self, memory_bytes: usize) -> Result<()> {
        let init: TypedFunc<(i32, i32), i32> =
            self.instance.get_typed_func(&mut self.store, "sb_init")?;
        let status = init.call(&mut self.store, (quickjs_heap_limit(memory_bytes), 0))?;
        if status != 0 {
            return Err(format_err!("sb_init failed with status {status}"));
        }
        Ok(())
    }

    /// Sets the created runtime's heap limit below `memory_bytes` (`sb_set_memory_limit`): an
    /// instance woken before its session takes the session's cap.
    pub(super) fn limit_heap(&mut self, memory_bytes: usize) -> Result<()> {
        let set: TypedFunc<i32, i32> = self
            .instance
            .get_typed_func(&mut self.store, "sb_set_memory_limit")?;
        let status = set.call(&mut self.store, quickjs_heap_limit(memory_bytes))?;
        if status != 0 {
            return Err(format_err!(
                "sb_set_memory_limit failed with status {status}"
            ));
        }
        Ok(())
    }

    /// Moves the instance into `state` (its session's directories, settings and cancel
    /// control), keeping its memory; `state`'s clock must go on from this one's
    /// ([`HostState::clock_base`]).
    pub(super) fn take_state(&mut self, mut state: HostState) {
        state.memory = Some(self.memory);
        state.limiter.granted = self.store.data().limiter.granted;
        drop(std::mem::replace(self.store.data_mut(), state));
    }

    /// Runs `code` as cell `cell` (`sb_eval`) and returns where its answer is: the address in
    /// the high half, the length in the low half.
    pub(super) fn run(&mut self, code: &[u8], cell: i32) -> Result<u64> {
        let len = i32::try_from(code.len()).map_err(|_| format_err!("code too large"))?;
        let ptr = self.alloc.call(&mut self.store, len)?;
        self.memory
            .write(&mut self.store, ptr as u32 as usize, code)?;
        Ok(self.eval.call(&mut self.store, (ptr, len, cell))? as u64)
    }

    /// The answer [`Guest::run`] pointed at.
    pub(super) fn answer(&self, packed: u64) -> Result<EvalResult> {
        let (at, size) = ((packed >> 32) as usize, (packed & 0xffff_ffff) as usize);
        let data = self.memory.data(&self.store);
        let bytes = data
            .get(at..at + size)
            .ok_or_else(|| format_err!("sb_eval result out of bounds"))?;
        serde_json::from_slice(bytes)
            .map_err(|e| format_err!("sb_eval result is not valid JSON: {e}"))
    }
}
