//! Advice when the interpreter runs out of room: `out_of_memory` (large data built at once,
//! chunked processing, a bigger flavor) and `stack_overflow` (recursion rewritten as a loop).
//! The words live in `words/memory.toml`.

use sandbox_protocol::FLAVORS;
use serde_json::json;

use super::super::docs::{FUEL, JAVASCRIPT, PYTHON};
use super::super::{MAX_MEMORY_BYTES, NextCall, derived_session_id, fmt_bytes};
use super::draft::Draft;
use super::stops;
use crate::words::{self, say};

impl Draft<'_, '_> {
    pub(super) fn out_of_memory(&mut self) {
        let f = self.f;
        let cap = f.memory_cap;
        self.summary = if cap > 0 {
            say!(
                "out_of_memory.summary_cap",
                cap = fmt_bytes(cap),
                used = fmt_bytes(f.memory_bytes),
                state = words::text(if f.state_lost {
                    "out_of_memory.state_lost"
                } else {
                    "out_of_memory.state_kept"
                }),
            )
        } else {
            words::text("out_of_memory.summary_no_cap").to_owned()
        };
        self.restart_explained = true;
        self.doc(FUEL);
        // A cause the code shows (a join that multiplies rows) comes before the sizes.
        if self.python()
            && let Some(fix) = self.known_fix("out_of_memory.known", "")
        {
            self.fix(fix);
        }
        if self.python()
            && let Some((call, line)) = stops::infinite_iterator_collected(self.f.code)
        {
            self.fix(say!(
                "out_of_memory.infinite_iterator",
                call = call,
                line = line
            ));
        }
        if let Some(l) = self.code.loops.iter().find(|l| l.endless) {
            // Why it never ends, as the timeout and fuel advice say it.
            let why = match l.endless_cause {
                Some(crate::scan::Endless::UnchangedCondition) => {
                    "out_of_memory.endless_why.unchanged"
                }
                Some(crate::scan::Endless::WrongDirection) => "out_of_memory.endless_why.away",
                Some(crate::scan::Endless::AssignmentInCondition) => {
                    "out_of_memory.endless_why.assigns"
                }
                _ => "out_of_memory.endless_why.no_exit",
            };
            self.fix(say!(
                "out_of_memory.endless_loop",
                header = l.header,
                line = l.line,
                why = words::text(why),
            ));
        }
        // What keeps a loop going while it fills memory (a stop condition never met).
        self.loop_cause_fix();
        let allocations = self.code.large_allocations();
        let largest = allocations.iter().map(|(_, _, bytes)| *bytes).max();
        for (what, line, bytes) in allocations.into_iter().take(2) {
            self.fix(say!(
                "out_of_memory.large_allocation",
                line = line,
                what = what,
                size = fmt_bytes(bytes),
            ));
        }
        let array_modules = words::list("out_of_memory.array_modules");
        let arrays = self.code.imports.iter().any(|i| {
            i.module
                .split('.')
                .next()
                .is_some_and(|top| array_modules.iter().any(|m| m == top))
        });
        if self.python() && arrays {
            self.fix(words::text("out_of_memory.arrays"));
        }
        self.rule(if self.python() {
            "out_of_memory.python"
        } else {
            "out_of_memory.javascript"
        });
        // A size refused before any allocation (CPython's index type, numpy's dimension
        // check, QuickJS's buffer length) or larger than the biggest session: no session helps.
        let refused = matches!(
            f.error_name,
            Some("OverflowError" | "ValueError" | "RangeError")
        );
        if refused || largest.is_some_and(|bytes| bytes > MAX_MEMORY_BYTES) {
            self.fix(say!(
                "out_of_memory.beyond_any_session",
                max = fmt_bytes(MAX_MEMORY_BYTES)
            ));
        } else {
            self.more_memory(cap);
        }
    }

    /// A session of the next flavor with more memory than `cap`, while one exists.
    fn more_memory(&mut self, cap: u64) {
        // Medium at least: "small" is the default, so it is rarely more than the session has.
        let next_flavor = FLAVORS[1..].iter().find(|fl| fl.memory_bytes > cap);
        match next_flavor {
            Some(fl) if cap < MAX_MEMORY_BYTES => {
                let id = derived_session_id(self.f.session_id, &format!("mem-{}", fl.name()));
                self.fix(say!(
                    "out_of_memory.more",
                    session = self.new_session_text(),
                    id = id,
                    flavor = fl.name(),
                    memory = fmt_bytes(fl.memory_bytes),
                    max = fmt_bytes(MAX_MEMORY_BYTES),
                ));
                self.next = Some(NextCall::new(
                    "create_session",
                    self.new_session_args(json!({"session_id": id, "flavor": fl.name()})),
                    say!(
                        "out_of_memory.more_reason",
                        flavor = fl.name(),
                        memory = fmt_bytes(fl.memory_bytes),
                    ),
                ));
            }
            _ => self.fix(say!(
                "out_of_memory.at_maximum",
                max = fmt_bytes(MAX_MEMORY_BYTES)
            )),
        }
    }

    pub(super) fn stack_overflow(&mut self) {
        let summary = if self.f.error_name == Some("RecursionError") {
            "stack_overflow.summary_recursion_error"
        } else {
            "stack_overflow.summary"
        };
        self.summary = words::text(summary).to_owned();
        self.doc(if self.python() { PYTHON } else { JAVASCRIPT });
        let recursive = self.code.recursion.first().cloned();
        match recursive {
            Some((name, line)) => {
                let recursive = if self.python() {
                    "stack_overflow.recursive_python"
                } else {
                    "stack_overflow.recursive_javascript"
                };
                self.fix(say!(recursive, name = name, line = line));
            }
            // No function calls itself by name: an attribute hook or repr may reach itself.
            None => {
                let hooks = if self.python() {
                    "stack_overflow.hooks"
                } else {
                    "stack_overflow.hooks_javascript"
                };
                match self.known_fix(hooks, "") {
                    Some(fix) => self.fix(fix),
                    None => self.fix(words::text("stack_overflow.unknown_recursion")),
                }
            }
        }
        self.rule(if self.python() {
            "stack_overflow.python"
        } else {
            "stack_overflow.javascript"
        });
    }
}
