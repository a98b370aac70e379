//! `setTimeout` / `setInterval` / `clearTimeout` / `clearInterval`, as in
//! Node: a timer fires after its delay, and pending timers run before the
//! call ends.
//!
//! Once a cell's script and its microtasks are done, `eval` repeatedly takes
//! the earliest timer (by due time, then creation order), sleeps until it is
//! due, runs it and drains microtasks, until no timer is left. The sleep is
//! the host's `poll_oneoff` shadow, which wakes at the call's deadline or on
//! cancel: a timer due after the deadline never runs, and the call ends as a
//! timeout (so does an interval nobody clears). Runaway intervals are also
//! stopped by the host's interrupt, which fires inside timer callbacks.
//!
//! Delays follow Node: not a number, < 1 or > 2^31-1 become 1 ms; fractions
//! are truncated. Timer ids are positive integers (not Node's Timeout
//! objects), shared between timeouts and intervals like in browsers.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use rquickjs::{
    Ctx, Exception, Function, Object, Persistent, Value,
    function::Args,
    prelude::{Opt, Rest},
};

use crate::{engine, interrupt};

const TIMEOUT_MAX: f64 = 2147483647.0;

struct Timer {
    id: u32,
    callback: Persistent<Function<'static>>,
    args: Vec<Persistent<Value<'static>>>,
    /// `Some(period)` for intervals.
    repeat: Option<u64>,
}

/// When a timer is due, then its creation sequence: the order it runs in.
type Key = (Instant, u64);

#[derive(Default)]
struct Queue {
    next_id: u32,
    next_seq: u64,
    /// Ordered by (due time, creation sequence).
    pending: BTreeMap<Key, Timer>,
    /// id -> key in `pending`, for clearTimeout.
    by_id: HashMap<u32, Key>,
}

thread_local! {
    static QUEUE: RefCell<Option<Queue>> = const { RefCell::new(None) };
}

fn with_queue<R>(f: impl FnOnce(&mut Queue) -> R) -> R {
    QUEUE.with(|q| f(q.borrow_mut().get_or_insert_with(Queue::default)))
}

impl Queue {
    fn schedule(&mut self, timer: Timer, delay: u64) {
        let now = Instant::now();
        let due = now.checked_add(Duration::from_millis(delay)).unwrap_or(now);
        let key = (due, self.next_seq);
        self.next_seq += 1;
        self.by_id.insert(timer.id, key);
        self.pending.insert(key, timer);
    }
}

pub fn install<'js>(ctx: &Ctx<'js>, global: &Object<'js>) -> rquickjs::Result<()> {
    let set_timeout = Function::new(
        ctx.clone(),
        |ctx: Ctx<'js>, cb: Opt<Value<'js>>, delay: Opt<Value<'js>>, args: Rest<Value<'js>>| {
            add(&ctx, cb.0, delay.0, args.0, false)
        },
    )?;
    let set_interval = Function::new(
        ctx.clone(),
        |ctx: Ctx<'js>, cb: Opt<Value<'js>>, delay: Opt<Value<'js>>, args: Rest<Value<'js>>| {
            add(&ctx, cb.0, delay.0, args.0, true)
        },
    )?;
    let clear = |id: Opt<Value<'js>>| clear(id.0);
    let fns = [
        ("setTimeout", set_timeout),
        ("setInterval", set_interval),
        ("clearTimeout", Function::new(ctx.clone(), clear)?),
        ("clearInterval", Function::new(ctx.clone(), clear)?),
    ];
    for (name, f) in fns {
        f.set_name(name)?;
        engine::define_builtin(ctx, global, name, f.into_value())?;
    }
    Ok(())
}

fn normalize_delay(delay: &Value<'_>) -> u64 {
    // Node: `after *= 1; if (!(after >= 1 && after <= TIMEOUT_MAX)) after = 1`.
    // Only plain numbers are honoured (no valueOf calls into user code).
    let ms = delay.as_number().unwrap_or(f64::NAN);
    if (1.0..=TIMEOUT_MAX).contains(&ms) {
        ms as u64
    } else {
        1
    }
}

fn add<'js>(
    ctx: &Ctx<'js>,
    callback: Option<Value<'js>>,
    delay: Option<Value<'js>>,
    args: Vec<Value<'js>>,
    repeat: bool,
) -> rquickjs::Result<u32> {
    let Some(callback) = callback.and_then(|c| c.into_function()) else {
        return Err(Exception::throw_type(
            ctx,
            "The \"callback\" argument must be of type function",
        ));
    };
    let delay = delay.map_or(1, |d| normalize_delay(&d));
    let callback = Persistent::save(ctx, callback);
    let args = args.into_iter().map(|a| Persistent::save(ctx, a)).collect();
    Ok(with_queue(|q| {
        q.next_id = q.next_id.checked_add(1).unwrap_or(1);
        let id = q.next_id;
        let timer = Timer {
            id,
            callback,
            args,
            repeat: repeat.then_some(delay),
        };
        q.schedule(timer, delay);
        id
    }))
}

fn clear(id: Option<Value<'_>>) {
    let Some(id) = id.and_then(|v| v.as_number()) else {
        return;
    };
    if !(id >= 1.0 && id <= u32::MAX as f64) || id.fract() != 0.0 {
        return;
    }
    let id = id as u32;
    // Drop the removed timer only after the queue borrow ends: dropping
    // Persistent values frees JS objects, which must not re-enter the queue.
    let removed = with_queue(|q| q.by_id.remove(&id).and_then(|key| q.pending.remove(&key)));
    drop(removed);
}

/// What `run_next` did.
pub enum Ran<'js> {
    /// No timer left.
    Idle,
    /// A callback ran and returned normally.
    Ok,
    /// A callback threw this value.
    Threw(Value<'js>),
    /// The host asked the cell to stop (its deadline, a cancel) while it
    /// waited for the earliest timer, which did not run.
    Stopped,
}

/// Run the earliest pending timer once it is due, sleeping until then.
pub fn run_next<'js>(ctx: &Ctx<'js>) -> Ran<'js> {
    let next = with_queue(|q| {
        let (key, timer) = q.pending.pop_first()?;
        q.by_id.remove(&timer.id);
        Some((key.0, timer))
    });
    let Some((due, timer)) = next else {
        return Ran::Idle;
    };
    // The host's poll_oneoff shadow wakes us early at the deadline or on
    // cancel, and raises the interrupt at its next epoch tick (so a wake
    // before `due` sleeps again, and returns at once until then): a timer
    // that is not due when the host asks us to stop does not run.
    loop {
        let wait = due.saturating_duration_since(Instant::now());
        if wait.is_zero() {
            break;
        }
        std::thread::sleep(wait);
        if interrupt::poll() {
            drop(timer);
            return Ran::Stopped;
        }
    }

    // Restore the callback and arguments before rescheduling, since an
    // interval's next occurrence keeps the saved handles.
    let callback = timer.callback.clone().restore(ctx);
    let args: Vec<_> = timer.args.iter().map(|a| a.clone().restore(ctx)).collect();
    if let Some(period) = timer.repeat {
        // Reschedule before running, so `clearInterval(id)` inside the
        // callback cancels the next occurrence.
        with_queue(|q| q.schedule(timer, period));
    } else {
        drop(timer);
    }

    let Ok(callback) = callback else {
        return Ran::Ok;
    };
    let mut call_args = Args::new(ctx.clone(), args.len());
    for a in args.into_iter().flatten() {
        if call_args.push_arg(a).is_err() {
            return Ran::Threw(ctx.catch());
        }
    }
    match callback.call_arg::<Value>(call_args) {
        Ok(_) => Ran::Ok,
        Err(rquickjs::Error::Exception) => Ran::Threw(ctx.catch()),
        Err(_) => Ran::Threw(ctx.catch()),
    }
}

/// Drop every pending timer (after an abort: the cell is over, and a call must
/// not leave timers behind).
pub fn clear_all() {
    let old = with_queue(|q| {
        q.by_id.clear();
        std::mem::take(&mut q.pending)
    });
    drop(old);
}
