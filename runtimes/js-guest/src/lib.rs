//! ABI glue: the wasm exports the host calls (`_initialize`, `sb_init`,
//! `sb_alloc`, `sb_free`, `sb_eval`) and the guest-owned buffers that cross
//! the boundary. Everything JavaScript-specific lives in the other modules;
//! this file only moves bytes and pointers.
//!
//! Host contract (kept in sync with the host crate, which is written against
//! it):
//! - Call `_initialize` once, then `sb_init(memory_limit, 0)` once.
//! - For each cell: `p = sb_alloc(len)`, write `len` bytes of UTF-8 source at
//!   `p`, then `r = sb_eval(p, len, cell)`; the result JSON is the `r & 0xffff_ffff`
//!   bytes at `r >> 32` and stays valid until the next `sb_eval`.
//! - All guest state lives in linear memory and the `__stack_pointer`
//!   global, so the host may snapshot memory after a call and restore it into
//!   a fresh instance (without calling `sb_init` again).

mod console;
mod engine;
mod errno;
mod eval;
mod file_class;
mod files;
/// Guest paths made absolute: the toolbox's rule, so that JavaScript, the shell and the
/// toolbox agree on what a path names.
#[path = "../../toolbox/src/guest_path.rs"]
mod guest_path;
mod inspect;
mod interrupt;
mod jobs;
mod library;
mod natives;
mod paths;
mod printf;
mod timers;
mod util;

use std::alloc::{Layout, alloc, dealloc};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};

thread_local! {
    /// The JSON document returned by the previous `sb_eval`. It is kept alive
    /// here so the host can read it after the call returns, and dropped (freed)
    /// when the next `sb_eval` replaces it.
    static LAST_RESULT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Set once `_initialize` has run. It lives in linear memory, so a snapshot
/// restored into a fresh instance already carries it and a second
/// `_initialize` there is a harmless no-op instead of re-running constructors
/// over live state.
static INITIALIZED: AtomicBool = AtomicBool::new(false);

unsafe extern "C" {
    /// Synthesized by wasm-ld: runs the C/Rust static constructors.
    fn __wasm_call_ctors();
}

/// WASI reactor entry point.
///
/// Referencing `__wasm_call_ctors` ourselves is also what makes wasm-ld treat
/// this module as a reactor: without it, wasm-ld wraps every export in a
/// "command export" shim that runs `__wasm_call_dtors` (atexit handlers,
/// stdio teardown) after *each* call. Stable rustc has no
/// `-Zwasi-exec-model=reactor`, so we provide the reactor entry by hand.
#[unsafe(no_mangle)]
pub extern "C" fn _initialize() {
    if INITIALIZED.swap(true, Ordering::Relaxed) {
        return;
    }
    // SAFETY: `__wasm_call_ctors` is the linker-generated constructor runner;
    // the flag above guarantees it runs at most once per linear memory, before
    // any other export touches libc or Rust std state.
    unsafe { __wasm_call_ctors() };
}

/// Create the single QuickJS runtime + context. Returns 0 on success, 1 if the
/// engine could not be created, 2 if `sb_init` was already called.
#[unsafe(no_mangle)]
pub extern "C" fn sb_init(memory_limit_bytes: i32, flags: i32) -> i32 {
    let _ = flags; // reserved, must be 0
    engine::init(memory_limit_bytes as u32)
}

/// Sets the heap limit of the engine `sb_init` created: an instance woken before its session
/// (a fork server's spare) takes its session's memory cap. Returns 0, or 1 if `sb_init` has
/// not run.
#[unsafe(no_mangle)]
pub extern "C" fn sb_set_memory_limit(memory_limit_bytes: i32) -> i32 {
    engine::set_memory_limit(memory_limit_bytes as u32)
}

/// Layout of a host-visible buffer of `len` bytes. One extra byte is reserved
/// so `sb_eval` can NUL-terminate the source in place (QuickJS's parser wants
/// `input[len] == 0`) without copying it.
fn buffer_layout(len: i32) -> Option<Layout> {
    let len = usize::try_from(len).ok()?;
    Layout::from_size_align(len.checked_add(1)?, 1).ok()
}

/// Allocate a guest buffer of `len` bytes for the host to write into.
/// Returns 0 if `len` is negative or memory is exhausted.
#[unsafe(no_mangle)]
pub extern "C" fn sb_alloc(len: i32) -> i32 {
    let Some(layout) = buffer_layout(len) else {
        return 0;
    };
    // SAFETY: `layout` has a non-zero size (len + 1 >= 1).
    let ptr = unsafe { alloc(layout) };
    ptr as usize as i32
}

/// Release a buffer from `sb_alloc` that the host did not pass to `sb_eval`.
#[unsafe(no_mangle)]
pub extern "C" fn sb_free(ptr: i32, len: i32) {
    let Some(layout) = buffer_layout(len) else {
        return;
    };
    if ptr == 0 {
        return;
    }
    // SAFETY: the host contract says `ptr` came from `sb_alloc(len)` with the
    // same `len` and has not been freed or passed to `sb_eval`, so it was
    // allocated with exactly this layout.
    unsafe { dealloc(ptr as u32 as usize as *mut u8, layout) };
}

/// Evaluate one cell. Takes ownership of (and frees) the source buffer.
/// Returns `(result_ptr << 32) | result_len` for a UTF-8 JSON document.
#[unsafe(no_mangle)]
pub extern "C" fn sb_eval(ptr: i32, len: i32, cell: i32) -> i64 {
    // Free the previous result first: the host has finished reading it.
    LAST_RESULT.with(|r| *r.borrow_mut() = Vec::new());

    let json = match buffer_layout(len) {
        Some(layout) if ptr != 0 => {
            let base = ptr as u32 as usize as *mut u8;
            let len = len as usize;
            // SAFETY: per the contract `base` came from `sb_alloc(len)`, so it
            // is valid for `len + 1` bytes; the host wrote the first `len`, and
            // the extra byte is ours to use as the NUL terminator.
            let source = unsafe {
                *base.add(len) = 0;
                std::slice::from_raw_parts(base, len + 1)
            };
            let json = eval::run_cell(source, cell as u32);
            // SAFETY: same allocation and layout as created by `sb_alloc`;
            // `source` is no longer used after `run_cell` returned.
            unsafe { dealloc(base, layout) };
            json
        }
        _ => eval::internal_error("sb_eval: invalid source buffer"),
    };

    LAST_RESULT.with(|r| {
        let mut r = r.borrow_mut();
        *r = json.into_bytes();
        ((r.as_ptr() as usize as i64) << 32) | (r.len() as i64)
    })
}
