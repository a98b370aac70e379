//! One cell, start to finish: compile the source as global script code, run
//! it, settle everything it started (microtasks, timers when they are due, the
//! completion value if it is a Promise), classify any failure and render the
//! result JSON that `sb_eval` hands to the host.
//!
//! Global *script* (not module) code is used so that `var`, top-level
//! `let`/`const`/`class` and function declarations persist across cells, like
//! a REPL. Compiling separately from running is what distinguishes a
//! SyntaxError in the cell itself (`kind: "syntax"`) from one thrown at run
//! time by `eval()`/`new Function()` (`kind: "runtime"`).

use std::ffi::CString;

use rquickjs::{Ctx, Object, Value, qjs};

use crate::inspect::{self, PromiseState};
use crate::{engine, files, interrupt, jobs, timers, util};

/// How a cell failed; the strings are part of the host ABI.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Syntax,
    Runtime,
    Interrupted,
    OutOfMemory,
    StackOverflow,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Syntax => "syntax",
            Kind::Runtime => "runtime",
            Kind::Interrupted => "interrupted",
            Kind::OutOfMemory => "out_of_memory",
            Kind::StackOverflow => "stack_overflow",
        }
    }

    /// Aborts end the cell at once: no more jobs or timers run.
    fn is_abort(self) -> bool {
        matches!(
            self,
            Kind::Interrupted | Kind::OutOfMemory | Kind::StackOverflow
        )
    }
}

enum Outcome<'js> {
    Value(Value<'js>),
    Error(Kind, Value<'js>),
}

impl Outcome<'_> {
    fn abort(&self) -> Option<Kind> {
        match self {
            Outcome::Error(kind, _) if kind.is_abort() => Some(*kind),
            _ => None,
        }
    }
}

/// Jobs still run after an interrupt so that the next cell does not start
/// with this one's leftovers; each is cut short by the sticky interrupt flag.
const MAX_JOBS_AFTER_ABORT: usize = 10_000;

/// Entry point for `sb_eval`. `source` is the cell's UTF-8 text followed by a
/// NUL byte.
pub fn run_cell(source: &[u8], cell: u32) -> String {
    interrupt::reset();
    // Before anything can open a file: forget handles that a snapshot
    // restore into a fresh instance left without their files.
    files::revalidate();
    engine::with(|e| e.context.with(|ctx| run_in(&ctx, source, cell)))
        .unwrap_or_else(|| internal_error("sb_init has not been called"))
}

fn run_in<'js>(ctx: &Ctx<'js>, source: &[u8], cell: u32) -> String {
    let raw = ctx.as_raw().as_ptr();
    let filename = CString::new(format!("<cell {cell}>")).unwrap_or_default();

    // Compile as a plain script first. Only if that fails with a SyntaxError
    // and the cell mentions `await` is it recompiled with top-level await
    // allowed: async mode makes the completion value a Promise of
    // `{ value }`, so it is the exception, not the rule.
    let mut top_level_await = false;
    let mut compiled = compile(ctx, source, &filename, 0);
    if let Err(exc) = &compiled
        && is_syntax_error(ctx, exc)
        && contains(source, b"await")
        && let Ok(f) = compile(ctx, source, &filename, qjs::JS_EVAL_FLAG_ASYNC)
    {
        compiled = Ok(f);
        top_level_await = true;
    }

    let mut outcome = match compiled {
        Err(exc) => {
            let kind = abort_kind(ctx, &exc).unwrap_or(Kind::Syntax);
            Outcome::Error(kind, exc)
        }
        Ok(script) => {
            // SAFETY: JS_EvalFunction consumes the compiled script reference
            // and returns the completion value (a new reference) or
            // JS_EXCEPTION.
            let v = unsafe { qjs::JS_EvalFunction(raw, script) };
            // SAFETY: checking the tag of a value we own.
            if unsafe { qjs::JS_IsException(v) } {
                let exc = ctx.catch();
                let kind = abort_kind(ctx, &exc).unwrap_or(Kind::Runtime);
                Outcome::Error(kind, exc)
            } else {
                // SAFETY: `v` is an owned reference; Value takes it over.
                Outcome::Value(unsafe { Value::from_raw(ctx.clone(), v) })
            }
        }
    };

    // Even when the script threw, what it scheduled before throwing still
    // runs (REPL semantics); only an abort stops everything.
    if outcome.abort().is_none()
        && let Some(aborted) = settle(ctx)
    {
        outcome = aborted;
    }
    // A cell that ran to its end after the host asked it to stop (a sleep cut
    // short at the deadline, then fewer steps than QuickJS runs between two
    // polls) did not run as written: it ends as interrupted, like one stopped
    // mid-loop, and the host says why (timeout, cancel, fuel).
    if outcome.abort().is_none() && interrupt::poll() {
        outcome = Outcome::Error(Kind::Interrupted, interrupted_error(ctx));
    }
    if let Some(kind) = outcome.abort() {
        timers::clear_all();
        if kind != Kind::OutOfMemory {
            jobs::drain_after_abort(ctx, MAX_JOBS_AFTER_ABORT);
        }
        jobs::forget_unhandled();
        return render(ctx, outcome);
    }

    // A Promise completion value (e.g. the cell ends in an async call) is
    // replaced by what it settled to.
    let mut completion_promise = None;
    if let Outcome::Value(v) = &outcome {
        match inspect::promise_state(ctx, v) {
            Some(PromiseState::Fulfilled(x)) if top_level_await => {
                // Async script completion: `{ value: <completion> }`.
                let value = x
                    .as_object()
                    .and_then(|o| o.get::<_, Value>("value").ok())
                    .unwrap_or_else(|| Value::new_undefined(ctx.clone()));
                outcome = Outcome::Value(value);
            }
            Some(PromiseState::Fulfilled(x)) => outcome = Outcome::Value(x),
            Some(PromiseState::Rejected(reason)) => {
                completion_promise = Some(v.clone());
                let kind = abort_kind(ctx, &reason).unwrap_or(Kind::Runtime);
                outcome = Outcome::Error(kind, reason);
            }
            Some(PromiseState::Pending) | None => {}
        }
    }
    jobs::report_unhandled(ctx, completion_promise.as_ref());
    render(ctx, outcome)
}

/// The error QuickJS throws when its interrupt handler stops a script.
fn interrupted_error<'js>(ctx: &Ctx<'js>) -> Value<'js> {
    let Ok(exc) = rquickjs::Exception::from_message(ctx.clone(), "interrupted") else {
        return Value::new_undefined(ctx.clone());
    };
    let _ = exc.as_object().set("name", "InternalError");
    exc.into_value()
}

/// Compile `source` (NUL-terminated) as global script code without running
/// it. `extra_flags` may add JS_EVAL_FLAG_ASYNC.
fn compile<'js>(
    ctx: &Ctx<'js>,
    source: &[u8],
    filename: &CString,
    extra_flags: u32,
) -> Result<qjs::JSValue, Value<'js>> {
    let flags = (qjs::JS_EVAL_TYPE_GLOBAL | qjs::JS_EVAL_FLAG_COMPILE_ONLY | extra_flags) as i32;
    let code_len = source.len().saturating_sub(1);
    // SAFETY: `source` is NUL-terminated at `code_len` as JS_Eval requires and
    // outlives the call; `filename` likewise. The result is either
    // JS_EXCEPTION (exception pending on `ctx`) or a new reference to the
    // compiled script, which the caller must consume.
    unsafe {
        let f = qjs::JS_Eval(
            ctx.as_raw().as_ptr(),
            source.as_ptr().cast(),
            code_len as _,
            filename.as_ptr(),
            flags,
        );
        if qjs::JS_IsException(f) {
            Err(ctx.catch())
        } else {
            Ok(f)
        }
    }
}

fn is_syntax_error<'js>(ctx: &Ctx<'js>, exc: &Value<'js>) -> bool {
    exc.is_error()
        && exc
            .as_object()
            .and_then(|o| string_prop(ctx, o, "name"))
            .is_some_and(|n| n == "SyntaxError")
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Run microtasks, then timers in virtual-time order (microtasks after each),
/// until nothing is left. Returns the outcome if an abort happened.
fn settle<'js>(ctx: &Ctx<'js>) -> Option<Outcome<'js>> {
    loop {
        if let Some(exc) = jobs::drain(ctx) {
            let kind = abort_kind(ctx, &exc).unwrap_or(Kind::Interrupted);
            return Some(Outcome::Error(kind, exc));
        }
        match timers::run_next(ctx) {
            timers::Ran::Idle => return None,
            timers::Ran::Stopped => {
                return Some(Outcome::Error(Kind::Interrupted, interrupted_error(ctx)));
            }
            timers::Ran::Ok => {}
            timers::Ran::Threw(exc) => {
                if let Some(kind) = abort_kind(ctx, &exc) {
                    return Some(Outcome::Error(kind, exc));
                }
                jobs::report_uncaught(ctx, "Uncaught", exc);
            }
        }
    }
}

/// Whether `exc` must end the cell, and as what.
pub fn abort_kind<'js>(ctx: &Ctx<'js>, exc: &Value<'js>) -> Option<Kind> {
    // The stack guard works by interrupting, so check it first.
    if interrupt::stack_exhausted() {
        return Some(Kind::StackOverflow);
    }
    if interrupt::interrupted() || exc.is_uncatchable_error() {
        return Some(Kind::Interrupted);
    }
    if !exc.is_error() {
        return None;
    }
    let obj = exc.as_object()?;
    let name = string_prop(ctx, obj, "name");
    let message = string_prop(ctx, obj, "message");
    match (name.as_deref(), message.as_deref()) {
        (Some("InternalError"), Some("out of memory")) => Some(Kind::OutOfMemory),
        (Some("InternalError"), Some("stack overflow"))
        | (Some("RangeError"), Some("Maximum call stack size exceeded")) => {
            Some(Kind::StackOverflow)
        }
        _ => None,
    }
}

/// `obj[key]` converted with ToString, or `None` if missing/throwing.
fn string_prop<'js>(ctx: &Ctx<'js>, obj: &Object<'js>, key: &str) -> Option<String> {
    match obj.get::<_, Value>(key) {
        Ok(v) if v.is_undefined() => None,
        Ok(v) => util::to_string(ctx, &v).or_else(|| {
            let _ = ctx.catch();
            None
        }),
        Err(_) => {
            let _ = ctx.catch();
            None
        }
    }
}

/// (name, message, stack) of a thrown value. Non-Error throws get the name
/// `"Uncaught"` and their string form (raw for strings, the inspector repr
/// otherwise) as message, e.g. `throw 5` -> ("Uncaught", "5", "").
fn describe<'js>(ctx: &Ctx<'js>, exc: &Value<'js>) -> (String, String, String) {
    if let (true, Some(obj)) = (exc.is_error(), exc.as_object()) {
        let name = string_prop(ctx, obj, "name").unwrap_or_else(|| "Error".into());
        let message = string_prop(ctx, obj, "message").unwrap_or_default();
        let stack = match obj.get::<_, Value>("stack") {
            Ok(s) if s.is_string() => util::string_lossy(ctx, &s),
            Ok(_) => String::new(),
            Err(_) => {
                let _ = ctx.catch();
                String::new()
            }
        };
        return (name, message, stack);
    }
    let message = if exc.is_string() {
        util::string_lossy(ctx, exc)
    } else {
        inspect::repr(ctx, exc.clone())
    };
    ("Uncaught".into(), message, String::new())
}

fn render<'js>(ctx: &Ctx<'js>, outcome: Outcome<'js>) -> String {
    let mut out = String::new();
    match outcome {
        Outcome::Value(v) => {
            let repr = (!v.is_undefined()).then(|| inspect::repr(ctx, v));
            if interrupt::interrupted() {
                // The host's deadline passed while inspecting the value (a
                // getter or huge structure): the cell did not finish in time.
                push_error(
                    &mut out,
                    Kind::Interrupted,
                    "InternalError",
                    "interrupted",
                    "",
                );
                return out;
            }
            out.push_str("{\"ok\":true,\"value\":");
            match repr {
                None => out.push_str("null"),
                Some(r) => util::push_json_str(&mut out, &r),
            }
            out.push('}');
        }
        Outcome::Error(kind, exc) => {
            let (mut name, mut message, stack) = describe(ctx, &exc);
            if kind == Kind::StackOverflow && interrupt::stack_exhausted() {
                // Our guard stopped the cell through the interrupt mechanism,
                // so QuickJS says "InternalError: interrupted"; say what
                // actually happened, in the words QuickJS-NG itself uses.
                name = "RangeError".into();
                message = "Maximum call stack size exceeded".into();
            }
            push_error(&mut out, kind, &name, &message, &stack);
        }
    }
    out
}

fn push_error(out: &mut String, kind: Kind, name: &str, message: &str, stack: &str) {
    out.push_str("{\"ok\":false,\"kind\":");
    util::push_json_str(out, kind.as_str());
    out.push_str(",\"name\":");
    util::push_json_str(out, &util::cap(name.to_owned(), 200));
    out.push_str(",\"message\":");
    util::push_json_str(out, &util::cap(message.to_owned(), util::MAX_TEXT));
    out.push_str(",\"stack\":");
    util::push_json_str(out, &util::cap(stack.to_owned(), util::MAX_TEXT));
    out.push('}');
}

/// A failure of the sandbox itself (not of the cell's code), reported with
/// kind "runtime" so the host needs no extra case.
pub fn internal_error(message: &str) -> String {
    let mut out = String::new();
    push_error(&mut out, Kind::Runtime, "InternalError", message, "");
    out
}
