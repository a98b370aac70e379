//! The JavaScript library every context has: the QuickJS `std` and `os`
//! modules as globals (`stdlib.js`), the file helpers and `requireVendor`
//! (`helpers.js`), both built on the native functions of `natives.rs`.
//!
//! `sb_init` only evaluates `loader.js`, which defines the globals as lazy
//! accessors; the first use of any of them calls [`load`], which creates the
//! natives and evaluates the two library files, each a factory function that
//! receives what it builds on and returns what it provides. The natives
//! object never becomes reachable from user code. The globals are
//! non-enumerable, like built-ins, so `Object.keys(globalThis)` lists only
//! what the user created.

use rquickjs::{Array, Ctx, Function, Object, Value};

use crate::natives;

const LOADER: &str = include_str!("loader.js");
const STDLIB: &str = include_str!("stdlib.js");
const HELPERS: &str = include_str!("helpers.js");

/// Globals from `stdlib.js`.
const STDLIB_GLOBALS: [&str; 2] = ["std", "os"];

/// Globals from `helpers.js`.
const HELPER_GLOBALS: [&str; 8] = [
    "readText",
    "writeText",
    "appendText",
    "readJson",
    "writeJson",
    "fileExists",
    "listFiles",
    "requireVendor",
];

/// Define the library globals (lazily). Must run after the timer globals
/// exist and before any user code.
pub fn install<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<()> {
    let names = Array::new(ctx.clone())?;
    for (i, name) in STDLIB_GLOBALS.iter().chain(&HELPER_GLOBALS).enumerate() {
        names.set(i, *name)?;
    }
    let load = Function::new(ctx.clone(), load)?;
    factory(ctx, LOADER, "<sandbox:loader>")?.call::<_, ()>((load, names))
}

/// Load the library: `{ std, os, readText, ... }`. `timers` holds the
/// original timer functions for `os.setTimeout` and friends.
fn load<'js>(ctx: Ctx<'js>, timers: Object<'js>) -> rquickjs::Result<Object<'js>> {
    let native = natives::create(&ctx)?;
    let stdlib: Object =
        factory(&ctx, STDLIB, "<sandbox:stdlib>")?.call((native.clone(), timers))?;
    let helpers: Object =
        factory(&ctx, HELPERS, "<sandbox:helpers>")?.call((native, stdlib.clone()))?;
    let out = Object::new(ctx.clone())?;
    for name in STDLIB_GLOBALS {
        out.set(name, stdlib.get::<_, Value>(name)?)?;
    }
    for name in HELPER_GLOBALS {
        out.set(name, helpers.get::<_, Value>(name)?)?;
    }
    Ok(out)
}

/// Evaluate a library file, whose completion value is its factory function.
fn factory<'js>(ctx: &Ctx<'js>, source: &str, filename: &str) -> rquickjs::Result<Function<'js>> {
    let mut opts = rquickjs::context::EvalOptions::default();
    opts.global = true;
    opts.strict = true;
    opts.filename = Some(filename.into());
    ctx.eval_with_options(source, opts)
}
