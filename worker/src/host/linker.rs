//! The linker both interpreters are instantiated with ([`build_linker`]): wasmtime-wasi's WASI
//! p1, our shadows over it (stdio, sleep, disk quota), and `sandbox.should_interrupt`, the flag
//! the QuickJS guest polls to stop by itself.

use wasmtime::{Caller, Engine, Linker, Result};

use super::state::HostState;
use super::{disk_quota, sleep, stdio};

/// Builds the linker shared by both runtimes: wasmtime-wasi's p1 plus our shadows.
///
/// # Errors
/// When Wasmtime refuses a definition (a build defect).
pub fn build_linker(engine: &Engine) -> Result<Linker<HostState>> {
    let mut linker: Linker<HostState> = Linker::new(engine);
    wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |s: &mut HostState| &mut s.wasi)?;
    linker.allow_shadowing(true);
    stdio::add_to_linker(&mut linker)?;
    sleep::add_to_linker(&mut linker)?;
    disk_quota::add_to_linker(&mut linker)?;
    linker.func_wrap(
        "sandbox",
        "should_interrupt",
        |caller: Caller<'_, HostState>| -> i32 { i32::from(caller.data().js_interrupt) },
    )?;
    Ok(linker)
}
