//! Microtasks: draining QuickJS's job queue (promise reactions and
//! `queueMicrotask` callbacks), the `queueMicrotask` global, and tracking of
//! unhandled promise rejections.
//!
//! Errors that escape a microtask or a rejected promise nobody handles are
//! treated the way the Node REPL does: reported on stderr as `Uncaught ...`
//! without failing the cell. Only "abort" errors (interrupt, out of memory,
//! stack exhaustion) stop the cell; `drain` hands those back to the caller.

use std::cell::RefCell;
use std::ffi::c_int;

use rquickjs::{Ctx, Exception, Function, Object, Persistent, Value, prelude::Opt, qjs};

use crate::console::{self, Stream};
use crate::{engine, eval, inspect};

type Saved = Persistent<Value<'static>>;

thread_local! {
    /// Rejected promises with no handler yet: (promise, reason).
    static UNHANDLED: RefCell<Vec<(Saved, Saved)>> = const { RefCell::new(Vec::new()) };
}

pub fn install<'js>(ctx: &Ctx<'js>, global: &Object<'js>) -> rquickjs::Result<()> {
    let f = Function::new(ctx.clone(), queue_microtask)?;
    f.set_name("queueMicrotask")?;
    engine::define_builtin(ctx, global, "queueMicrotask", f.into_value())
}

fn queue_microtask<'js>(ctx: Ctx<'js>, callback: Opt<Value<'js>>) -> rquickjs::Result<()> {
    let Some(callback) = callback.0.filter(|c| c.is_function()) else {
        return Err(Exception::throw_type(
            &ctx,
            "queueMicrotask: argument must be a function",
        ));
    };
    let mut argv = [callback.as_raw()];
    // SAFETY: JS_EnqueueJob copies (dups) the argv values into the job
    // entry, so `callback` may be dropped afterwards; `microtask_job` matches
    // the JSJobFunc signature.
    let rc = unsafe {
        qjs::JS_EnqueueJob(
            ctx.as_raw().as_ptr(),
            Some(microtask_job),
            1,
            argv.as_mut_ptr(),
        )
    };
    if rc < 0 {
        return Err(rquickjs::Error::Exception);
    }
    Ok(())
}

/// Job body for `queueMicrotask`: call the callback with no arguments. An
/// exception is returned as JS_EXCEPTION, which makes JS_ExecutePendingJob
/// report it to `drain` (unlike a promise reaction, which would swallow it
/// into a rejected promise).
unsafe extern "C" fn microtask_job(
    ctx: *mut qjs::JSContext,
    argc: c_int,
    argv: *mut qjs::JSValue,
) -> qjs::JSValue {
    if argc < 1 {
        return qjs::JS_UNDEFINED;
    }
    // SAFETY: QuickJS passes the argv we enqueued (one live value) and a live
    // context; JS_Call borrows both and returns a new value that
    // JS_ExecutePendingJob frees.
    unsafe { qjs::JS_Call(ctx, *argv, qjs::JS_UNDEFINED, 0, std::ptr::null_mut()) }
}

/// Run queued jobs until the queue is empty. Returns the exception if a job
/// was aborted (interrupt / OOM / stack); ordinary uncaught errors are
/// reported on stderr and draining continues.
pub fn drain<'js>(ctx: &Ctx<'js>) -> Option<Value<'js>> {
    loop {
        match run_one(ctx) {
            JobResult::Empty => return None,
            JobResult::Ran => {}
            JobResult::Threw(exc) => {
                if eval::abort_kind(ctx, &exc).is_some() {
                    return Some(exc);
                }
                report_uncaught(ctx, "Uncaught", exc);
            }
        }
    }
}

/// After an abort: run at most `max` more jobs (the sticky interrupt flag cuts
/// each one short at its next poll) so the next cell does not start with this
/// cell's leftovers. Exceptions are discarded.
pub fn drain_after_abort(ctx: &Ctx<'_>, max: usize) {
    for _ in 0..max {
        if let JobResult::Empty = run_one(ctx) {
            return;
        }
    }
}

enum JobResult<'js> {
    Empty,
    Ran,
    Threw(Value<'js>),
}

fn run_one<'js>(ctx: &Ctx<'js>) -> JobResult<'js> {
    let mut job_ctx: *mut qjs::JSContext = std::ptr::null_mut();
    // SAFETY: we are inside `Context::with`, so the runtime is locked by us;
    // there is a single context, so a failing job leaves its exception
    // pending on `ctx`, where `catch` takes it.
    let rc = unsafe {
        let rt = qjs::JS_GetRuntime(ctx.as_raw().as_ptr());
        qjs::JS_ExecutePendingJob(rt, &mut job_ctx)
    };
    match rc {
        0 => JobResult::Empty,
        rc if rc > 0 => JobResult::Ran,
        _ => JobResult::Threw(ctx.catch()),
    }
}

/// Print an error nobody caught, e.g. `Uncaught TypeError: x\n    at ...`.
pub fn report_uncaught<'js>(ctx: &Ctx<'js>, label: &str, exc: Value<'js>) {
    let text = if exc.is_error() {
        inspect::format_args(ctx, vec![exc]).unwrap_or_else(|_| {
            let _ = ctx.catch();
            String::from("[uninspectable error]")
        })
    } else {
        inspect::repr(ctx, exc)
    };
    console::write_line(Stream::Stderr, &format!("{label} {text}"));
}

/// Host promise rejection tracker (installed by `engine`).
pub fn track_rejection<'js>(ctx: Ctx<'js>, promise: Value<'js>, reason: Value<'js>, handled: bool) {
    UNHANDLED.with(|list| {
        let mut list = list.borrow_mut();
        if handled {
            list.retain(|(p, _)| match p.clone().restore(&ctx) {
                Ok(p) => p != promise,
                Err(_) => false,
            });
        } else {
            list.push((
                Persistent::save(&ctx, promise),
                Persistent::save(&ctx, reason),
            ));
        }
    });
}

/// Report (on stderr) every promise rejection still unhandled, except that of
/// `except` (the cell's own completion promise, which becomes the cell error
/// instead), and forget them all.
pub fn report_unhandled<'js>(ctx: &Ctx<'js>, except: Option<&Value<'js>>) {
    let pending = UNHANDLED.with(|list| std::mem::take(&mut *list.borrow_mut()));
    for (p, reason) in pending {
        let (Ok(p), Ok(reason)) = (p.restore(ctx), reason.restore(ctx)) else {
            continue;
        };
        if except == Some(&p) {
            continue;
        }
        report_uncaught(ctx, "Uncaught (in promise)", reason);
    }
}

/// Forget tracked rejections without reporting them (after an abort).
pub fn forget_unhandled() {
    UNHANDLED.with(|list| list.borrow_mut().clear());
}
