//! Where a CPython build keeps its SIGINT bookkeeping in linear memory ([`SigintWords`]), and the
//! two things the host does with it: raise a `KeyboardInterrupt` exactly as CPython's C signal
//! handler would ([`raise_sigint`]), and forget one that arrived after an execution ended
//! ([`clear_sigint`]). The addresses are facts about one binary (pinned by its SHA-256 in
//! `python.rs`), read from its DWARF (3.12) or its disassembly (3.15).

use wasmtime::StoreContextMut;

use super::guest_memory::{read_u32, write_u32};
use super::state::HostState;

/// How the eval loop is told that a signal is pending.
#[derive(Debug, Clone, Copy)]
pub enum EvalBreaker {
    /// A word of its own (3.12: the main interpreter's `ceval.eval_breaker`), set to 1.
    At(u32),
    /// A bit of a word inside the main thread state (3.15: `tstate->eval_breaker` bit
    /// `_PY_SIGNALS_PENDING_BIT`): the thread state's address is read from `pointer`.
    InThreadState { pointer: u32, offset: u32, bit: u32 },
}

/// One build's SIGINT words.
#[derive(Debug, Clone, Copy)]
pub struct SigintWords {
    /// What the handler sets to 1 and the host clears before each execution:
    /// `handlers[SIGINT].tripped`, `is_tripped` (and 3.12's `ceval.signals_pending`).
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
    match words.breaker {
        EvalBreaker::At(addr) => {
            write_u32(data, addr as usize, 1);
        }
        EvalBreaker::InThreadState {
            pointer,
            offset,
            bit,
        } => {
            let word = read_u32(data, pointer as usize)
                .filter(|&tstate| tstate != 0)
                .map(|tstate| tstate as usize + offset as usize);
            if let Some(word) = word {
                let value = read_u32(data, word).unwrap_or(0);
                write_u32(data, word, value | bit);
            }
        }
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
