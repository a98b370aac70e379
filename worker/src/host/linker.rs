//! The linker every interpreter is instantiated with ([`build_linker`]): wasmtime-wasi's WASI
//! p1, our shadows over it (stdio, sleep, disk quota), `sandbox.file_mode` (the toolbox's view of
//! modes, [`super::file_mode`]), `sandbox.should_interrupt`, the flag the
//! QuickJS guest polls to stop by itself, and `host.call`, CPython's door to its host, which
//! takes the same mode questions as frames and nothing else.

use wasmtime::{Caller, Engine, Linker, Result};

use super::state::HostState;
use super::{disk_quota, file_mode, sleep, stdio};

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
    // `_host.call(frame)` in the guest (CPython's door): the mode frames of its driver's
    // `os.chmod` and `os.stat`, when the store has a view of the session's files; -1 (no host,
    // `ConnectionRefusedError` in the guest) otherwise. Requests and status travel over fd 0.
    linker.func_wrap(
        "host",
        "call",
        |mut caller: Caller<'_, HostState>, frame: i32, len: i32, at: i32, reply_len: i32| {
            file_mode::door(&mut caller, frame, len, at, reply_len)
        },
    )?;
    Ok(linker)
}
