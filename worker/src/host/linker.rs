//! The linker every interpreter is instantiated with ([`build_linker`]): wasmtime-wasi's WASI
//! p1, our shadows over it (stdio, sleep, disk quota), `sandbox.file_mode` (the toolbox's view of
//! modes, [`super::file_mode`]), `sandbox.should_interrupt`, the flag the
//! QuickJS guest polls to stop by itself, and `host.call`, the scientific CPython's door to its
//! host, which stays shut.

use wasmtime::{Caller, Engine, Linker, Result};

use super::state::HostState;
use super::{disk_quota, file_mode, sleep, stdio};

/// What `host.call` answers: the door has no host behind it.
const NO_HOST: i32 = -1;

/// Builds the linker shared by every runtime: wasmtime-wasi's p1 plus our shadows.
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
    file_mode::add_to_linker(&mut linker)?;
    linker.func_wrap(
        "sandbox",
        "should_interrupt",
        |caller: Caller<'_, HostState>| -> i32 { i32::from(caller.data().js_interrupt) },
    )?;
    // `_host.call(request)` in the guest: -1 is "no host is bound to the door", which the guest
    // raises as `ConnectionRefusedError`. Nothing the session needs goes through it (requests
    // and status travel over fd 0, like the default CPython's), so it is one less way in.
    linker.func_wrap(
        "host",
        "call",
        |_: Caller<'_, HostState>, _: i32, _: i32, _: i32, _: i32| -> i32 { NO_HOST },
    )?;
    Ok(linker)
}
