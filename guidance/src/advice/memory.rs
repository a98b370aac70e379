//! Advice when the interpreter runs out of room: `out_of_memory` (large data built at once,
//! chunked processing, a bigger flavor) and `stack_overflow` (recursion rewritten as a loop).

use sandbox_protocol::FLAVORS;
use serde_json::json;

use super::super::docs::{FUEL, JAVASCRIPT, PYTHON};
use super::super::{MAX_MEMORY_BYTES, NextCall, derived_session_id, fmt_bytes};
use super::draft::Draft;

impl Draft<'_, '_> {
    pub(super) fn out_of_memory(&mut self) {
        let f = self.f;
        let cap = f.memory_cap;
        self.summary = if cap > 0 {
            format!(
                "The interpreter ran out of memory (cap {}, {} in use at the end){}.",
                fmt_bytes(cap),
                fmt_bytes(f.memory_bytes),
                if f.state_lost {
                    "; it was restarted, so earlier variables are gone"
                } else {
                    "; the session is still usable"
                }
            )
        } else {
            "The interpreter ran out of memory.".to_owned()
        };
        self.restart_explained = true;
        self.doc(FUEL);
        if let Some(l) = self.code.loops.iter().find(|l| l.endless) {
            self.fix(format!(
                "`{}` at line {} never ends, so anything it appends to grows until memory runs out: add an exit condition.",
                l.header, l.line
            ));
        }
        for (what, line, bytes) in self.code.large_allocations().into_iter().take(2) {
            self.fix(format!(
                "Line {line} builds {what} (about {}): make it smaller or produce it lazily (a generator / range instead of a list).",
                fmt_bytes(bytes)
            ));
        }
        let arrays = self.code.imports.iter().any(|i| {
            matches!(
                i.module.split('.').next(),
                Some("numpy" | "pandas" | "scipy" | "sklearn")
            )
        });
        if self.python() && arrays {
            self.fix("numpy and pandas allocate each array whole (rows × columns × 8 bytes for float64; one array must stay under 2 GiB on wasm32): use fewer rows, a smaller dtype (`float32`, `int32`, `category`), or read in pieces with `pd.read_csv(path, chunksize=100_000)` and keep only aggregates; check sizes with `df.memory_usage(deep=True).sum()`.");
        }
        if self.python() {
            self.fix("Process data in chunks: iterate over a file line by line (`for line in open(path)`), or read fixed-size blocks (`f.read(1 << 20)`), instead of `.read()`, `.readlines()` or `json.load` on a huge file; keep only aggregates.");
            self.fix("Free what you no longer need: objects from earlier calls stay alive in the session (`del big_list`), and compact types help (`array('d')` instead of a list of floats, tuples instead of dicts per row).");
        } else {
            self.fix("Process data in chunks: read the file with std.open and `.getline()` in a loop instead of loading it whole, and keep only aggregates.");
            self.fix("Free what you no longer need (`bigArray = null`): globals from earlier calls stay alive; typed arrays (Float64Array) are far smaller than arrays of objects.");
        }
        self.more_memory(cap);
    }

    /// A session of the next flavor with more memory than `cap`, while one exists.
    fn more_memory(&mut self, cap: u64) {
        // Medium at least: "small" is the default, so it is rarely more than the session has.
        let next_flavor = FLAVORS[1..].iter().find(|fl| fl.memory_bytes > cap);
        match next_flavor {
            Some(fl) if cap < MAX_MEMORY_BYTES => {
                let id = derived_session_id(self.f.session_id, &format!("mem-{}", fl.name()));
                self.fix(format!(
                    "Use more memory: create_session {{{}, session_id: \"{id}\", flavor: \"{}\"}} ({}; or memory_bytes up to {}), then re-run there (a new session starts without this one's variables and files).",
                    self.new_session_text(),
                    fl.name(),
                    fmt_bytes(fl.memory_bytes),
                    fmt_bytes(MAX_MEMORY_BYTES)
                ));
                self.next = Some(NextCall::new(
                    "create_session",
                    self.new_session_args(json!({"session_id": id, "flavor": fl.name()})),
                    format!("a {} session has {} of memory", fl.name(), fmt_bytes(fl.memory_bytes)),
                ));
            }
            _ => self.fix(format!(
                "The session already has the maximum of {}: the data must be streamed or reduced, not held in memory at once.",
                fmt_bytes(MAX_MEMORY_BYTES)
            )),
        }
    }

    pub(super) fn stack_overflow(&mut self) {
        self.summary = format!(
            "Recursion went deeper than the interpreter's stack allows{}.",
            if self.f.error_name == Some("RecursionError") {
                " (RecursionError)"
            } else {
                ""
            }
        );
        self.doc(if self.python() { PYTHON } else { JAVASCRIPT });
        let recursive = self.code.recursion.first().cloned();
        match recursive {
            Some((name, line)) => self.fix(format!(
                "`{name}` (defined at line {line}) calls itself: rewrite it with a loop and an explicit stack, e.g. {}",
                if self.python() { "`stack = [start]` / `while stack: item = stack.pop()` / push children instead of recursing" } else { "`const stack = [start]; while (stack.length) { const item = stack.pop(); ... }`" }
            )),
            None => self.fix("Find the function that calls itself (the traceback repeats its line) and rewrite it as a loop with an explicit stack."),
        }
        if self.python() {
            self.fix("Raising sys.setrecursionlimit is not a fix here: the WebAssembly stack has a fixed size, so deeper recursion crashes the interpreter instead of raising RecursionError.");
            self.fix("If the recursion is accidental: a property, __getattr__ or __repr__ that refers to itself, or two functions calling each other without a base case.");
        } else {
            self.fix("If the recursion is accidental: a getter or toString that refers to itself, or two functions calling each other without a base case.");
            self.fix(
                "The context was rolled back to before this call, so earlier globals are intact.",
            );
        }
        self.fix(if self.python() {
            "If the same subproblems repeat (Fibonacci-like), memoize them with @functools.cache and fill the cache bottom-up in a loop: that removes the depth as well."
        } else {
            "If the same subproblems repeat (Fibonacci-like), memoize them in a Map and fill it bottom-up in a loop: that removes the depth as well."
        });
    }
}
