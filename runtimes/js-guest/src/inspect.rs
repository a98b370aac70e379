//! The value inspector: Node-like reprs for cell results and console output.
//!
//! The formatting logic is JavaScript (`inspect.js`), evaluated once at
//! `sb_init` before any user code, because walking arbitrary JS objects is far
//! simpler there. It captures the built-ins it uses at that moment, so user
//! code cannot break it later. Rust supplies the two checks JS cannot do
//! itself (is this an Error object? what state is this Promise in?) and keeps
//! the resulting functions alive in a thread-local.

use std::cell::RefCell;

use rquickjs::{Array, CatchResultExt, Ctx, Function, Object, Persistent, Value, qjs};

use crate::util;

const SOURCE: &str = include_str!("inspect.js");

struct Inspector {
    inspect: Persistent<Function<'static>>,
    format: Persistent<Function<'static>>,
}

thread_local! {
    static INSPECTOR: RefCell<Option<Inspector>> = const { RefCell::new(None) };
}

pub fn install<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<()> {
    let mut opts = rquickjs::context::EvalOptions::default();
    opts.global = true;
    opts.strict = true;
    opts.filename = Some("<sandbox:inspect>".into());
    let factory: Function = ctx.eval_with_options(SOURCE, opts)?;

    let helpers = Object::new(ctx.clone())?;
    helpers.set(
        "isError",
        Function::new(ctx.clone(), |v: Value<'js>| v.is_error())?,
    )?;
    helpers.set(
        "promiseState",
        Function::new(ctx.clone(), |ctx: Ctx<'js>, v: Value<'js>| {
            promise_state_js(&ctx, &v)
        })?,
    )?;
    let api: Object = factory.call((helpers,))?;
    let inspect: Function = api.get("inspect")?;
    let format: Function = api.get("format")?;
    let inspector = Inspector {
        inspect: Persistent::save(ctx, inspect),
        format: Persistent::save(ctx, format),
    };
    INSPECTOR.with(|i| *i.borrow_mut() = Some(inspector));
    Ok(())
}

/// Settled state of a promise, read without running any JS.
pub enum PromiseState<'js> {
    Pending,
    Fulfilled(Value<'js>),
    Rejected(Value<'js>),
}

/// `Some(state)` if `v` is a Promise, `None` otherwise.
pub fn promise_state<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Option<PromiseState<'js>> {
    let raw_ctx = ctx.as_raw().as_ptr();
    // SAFETY: `v` is a live value of `ctx`. JS_PromiseState only reads the
    // object's class and state; JS_PromiseResult returns a new reference that
    // `Value::from_raw` takes ownership of.
    unsafe {
        let state = qjs::JS_PromiseState(raw_ctx, v.as_raw());
        let result = || Value::from_raw(ctx.clone(), qjs::JS_PromiseResult(raw_ctx, v.as_raw()));
        match state {
            qjs::JSPromiseStateEnum_JS_PROMISE_PENDING => Some(PromiseState::Pending),
            qjs::JSPromiseStateEnum_JS_PROMISE_FULFILLED => Some(PromiseState::Fulfilled(result())),
            qjs::JSPromiseStateEnum_JS_PROMISE_REJECTED => Some(PromiseState::Rejected(result())),
            _ => None,
        }
    }
}

/// `promiseState` helper for inspect.js: undefined, or [state, value].
fn promise_state_js<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> rquickjs::Result<Value<'js>> {
    let Some(state) = promise_state(ctx, v) else {
        return Ok(Value::new_undefined(ctx.clone()));
    };
    let arr = Array::new(ctx.clone())?;
    match state {
        PromiseState::Pending => arr.set(0, "pending")?,
        PromiseState::Fulfilled(x) => {
            arr.set(0, "fulfilled")?;
            arr.set(1, x)?;
        }
        PromiseState::Rejected(x) => {
            arr.set(0, "rejected")?;
            arr.set(1, x)?;
        }
    }
    Ok(arr.into_value())
}

fn with_fn<'js, R>(
    ctx: &Ctx<'js>,
    pick: impl FnOnce(&Inspector) -> Persistent<Function<'static>>,
    f: impl FnOnce(Function<'js>) -> rquickjs::Result<R>,
) -> rquickjs::Result<R> {
    let saved = INSPECTOR.with(|i| i.borrow().as_ref().map(pick));
    let Some(saved) = saved else {
        return Err(rquickjs::Error::Unknown);
    };
    f(saved.restore(ctx)?)
}

/// The repr of one value, capped at `util::MAX_TEXT` chars.
///
/// Errors (e.g. an interrupt while a getter runs) are swallowed into a
/// placeholder: the caller is producing a result document and must not fail.
pub fn repr<'js>(ctx: &Ctx<'js>, v: Value<'js>) -> String {
    let out = with_fn(ctx, |i| i.inspect.clone(), |f| f.call::<_, Value>((v,)))
        .catch(ctx)
        .ok()
        .filter(|s| s.is_string())
        .map(|s| util::string_lossy(ctx, &s))
        .unwrap_or_else(|| String::from("[uninspectable value]"));
    util::cap(out, util::MAX_TEXT)
}

/// One console line from console.* arguments. Exceptions propagate so that an
/// interrupt during formatting stops the script.
pub fn format_args<'js>(ctx: &Ctx<'js>, args: Vec<Value<'js>>) -> rquickjs::Result<String> {
    let arr = Array::new(ctx.clone())?;
    for (i, a) in args.into_iter().enumerate() {
        arr.set(i, a)?;
    }
    let s: Value = with_fn(ctx, |i| i.format.clone(), |f| f.call((arr,)))?;
    Ok(util::string_lossy(ctx, &s))
}
