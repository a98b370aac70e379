//! The one QuickJS runtime + context of this instance: creation, limits,
//! handlers, and installation of the globals the other modules provide.
//!
//! The engine lives for the life of the instance (it is never dropped), in a
//! thread-local, i.e. in linear memory: that is what lets the host snapshot
//! and restore the whole sandbox by copying memory.

use std::cell::RefCell;

use rquickjs::{Context, Ctx, Function, Object, Runtime, Value, qjs};

use crate::{console, inspect, interrupt, jobs, library, timers};

pub struct Engine {
    // Field order matters only for drop, which never happens; the runtime is
    // kept so the context's runtime stays alive, for job execution and for
    // `sb_set_memory_limit`.
    pub runtime: Runtime,
    pub context: Context,
}

thread_local! {
    static ENGINE: RefCell<Option<Engine>> = const { RefCell::new(None) };
}

/// Run `f` with the engine, or return `None` if `sb_init` has not run.
///
/// Only a shared borrow is taken, so re-entrant calls from JS into Rust
/// (console.log, setTimeout, ...) never conflict with it: those modules keep
/// their own state and never touch `ENGINE`.
pub fn with<R>(f: impl FnOnce(&Engine) -> R) -> Option<R> {
    ENGINE.with(|e| e.borrow().as_ref().map(f))
}

/// Implementation of `sb_init`. See `lib.rs` for the return codes.
pub fn init(memory_limit: u32) -> i32 {
    if ENGINE.with(|e| e.borrow().is_some()) {
        return 2;
    }
    let Ok(runtime) = Runtime::new() else {
        return 1;
    };
    if memory_limit != 0 {
        runtime.set_memory_limit(memory_limit as usize);
    }
    runtime.set_interrupt_handler(Some(Box::new(interrupt::poll)));
    runtime.set_host_promise_rejection_tracker(Some(Box::new(jobs::track_rejection)));

    let Ok(context) = Context::full(&runtime) else {
        return 1;
    };
    let installed = context.with(|ctx| install_globals(&ctx).is_ok());
    if !installed {
        return 1;
    }
    ENGINE.with(|e| *e.borrow_mut() = Some(Engine { runtime, context }));
    0
}

/// Implementation of `sb_set_memory_limit`. See `lib.rs` for the return codes.
pub fn set_memory_limit(memory_limit: u32) -> i32 {
    with(|engine| engine.runtime.set_memory_limit(memory_limit as usize)).map_or(1, |()| 0)
}

fn install_globals(ctx: &Ctx<'_>) -> rquickjs::Result<()> {
    let global = ctx.globals();
    // Order: the inspector first, because console formatting depends on it.
    inspect::install(ctx)?;
    console::install(ctx, &global)?;
    timers::install(ctx, &global)?;
    jobs::install(ctx, &global)?;
    // Last: the library captures the timer globals for os.setTimeout.
    library::install(ctx)?;
    let lexicals = Function::new(ctx.clone(), lexical_names)?;
    define_builtin(ctx, &global, "__sandboxLexicals", lexicals.into_value())?;
    Ok(())
}

// Added by js-guest/patches/quickjs-repl-lexicals.patch.
unsafe extern "C" {
    fn JS_SandboxGlobalLexicals(ctx: *mut qjs::JSContext) -> qjs::JSValue;
}

/// `__sandboxLexicals()`: the names of the global scope's `let`/`const`/`class`
/// bindings. QuickJS keeps them off `globalThis`, so the host's workspace
/// listing asks for them by name. Only names leave: a binding still in its
/// temporal dead zone holds a value no script may see.
fn lexical_names(ctx: Ctx<'_>) -> rquickjs::Result<Vec<String>> {
    // SAFETY: the context is live for the call; the function returns a new
    // reference (js_dup) to the context's lexical-scope object, which
    // `Value::from_raw` takes over and frees on drop.
    let scope =
        unsafe { Value::from_raw(ctx.clone(), JS_SandboxGlobalLexicals(ctx.as_raw().as_ptr())) };
    match scope.into_object() {
        Some(scope) => scope.keys::<String>().collect(),
        None => Ok(Vec::new()),
    }
}

/// Define a global the way built-ins are defined: writable and configurable
/// but not enumerable, so `for (k in globalThis)` and `Object.keys(globalThis)`
/// list only what the user created.
pub fn define_builtin<'js>(
    ctx: &Ctx<'js>,
    target: &Object<'js>,
    name: &str,
    value: Value<'js>,
) -> rquickjs::Result<()> {
    let cname = std::ffi::CString::new(name)?;
    let flags = (qjs::JS_PROP_WRITABLE | qjs::JS_PROP_CONFIGURABLE) as i32;
    // SAFETY: `target` and `value` belong to `ctx`; JS_DefinePropertyValueStr
    // takes ownership of the value reference we hand it (hence the dup), and
    // `cname` outlives the call.
    let rc = unsafe {
        qjs::JS_DefinePropertyValueStr(
            ctx.as_raw().as_ptr(),
            target.as_raw(),
            cname.as_ptr(),
            qjs::JS_DupValue(ctx.as_raw().as_ptr(), value.as_raw()),
            flags,
        )
    };
    if rc < 0 {
        return Err(rquickjs::Error::Exception);
    }
    Ok(())
}
