//! Where a CPython build keeps its SIGINT bookkeeping in linear memory ([`SigintWords`]), and the
//! two things the host does with it: raise a `KeyboardInterrupt` exactly as CPython's C signal
//! handler would ([`raise_sigint`]), and forget one that arrived after an execution ended
//! ([`clear_sigint`]). The addresses are facts about one binary (pinned by its SHA-256 in
//! `python/build.rs`), read from its disassembly.

use wasmtime::StoreContextMut;

use super::guest_memory::{read_u32, write_u32};
use super::state::HostState;

/// How the eval loop is told that a signal is pending: a bit of a word inside the main thread
/// state (`tstate->eval_breaker` bit `_PY_SIGNALS_PENDING_BIT` since 3.13), whose address is
/// read from `pointer`.
#[derive(Debug, Clone, Copy)]
pub struct EvalBreaker {
    pub pointer: u32,
    pub offset: u32,
    pub bit: u32,
}

/// One build's SIGINT words.
#[derive(Debug, Clone, Copy)]
pub struct SigintWords {
    /// What the handler sets to 1 and the host clears before each execution:
    /// `handlers[SIGINT].tripped` and `is_tripped`.
    pub flags: &'static [u32],
    /// Left alone when clearing: it carries other requests too, and a spurious check is free.
    pub breaker: EvalBreaker,
}

/// Asks the interpreter to raise `KeyboardInterrupt` at its next eval-breaker check.
pub fn raise_sigint(ctx: &mut StoreContextMut<'_, HostState>, words: &SigintWords) {
    let Some(memory) = ctx.data().memory else {
        return;
    };
    let data = memory.data_mut(&mut *ctx);
    for &addr in words.flags {
        write_u32(data, addr as usize, 1);
    }
    let EvalBreaker {
        pointer,
        offset,
        bit,
    } = words.breaker;
    let word = read_u32(data, pointer as usize)
        .filter(|&tstate| tstate != 0)
        .map(|tstate| tstate as usize + offset as usize);
    if let Some(word) = word {
        let value = read_u32(data, word).unwrap_or(0);
        write_u32(data, word, value | bit);
    }
}

/// Forgets an interrupt that arrived after the previous execution finished.
pub fn clear_sigint(ctx: &mut StoreContextMut<'_, HostState>, words: &SigintWords) {
    let Some(memory) = ctx.data().memory else {
        return;
    };
    let data = memory.data_mut(&mut *ctx);
    for &addr in words.flags {
        write_u32(data, addr as usize, 0);
    }
}
