//! Advice when the interpreter runs out of room: `out_of_memory` (large data built at once,
//! chunked processing, a bigger flavor) and `stack_overflow` (recursion rewritten as a loop).
//! The words live in `words/memory.toml`.

use sandbox_protocol::FLAVORS;
use serde_json::json;

use super::super::docs::{FUEL, JAVASCRIPT, PYTHON};
use super::super::{MAX_MEMORY_BYTES, NextCall, derived_session_id, fmt_bytes};
use super::code_lines::{block, is_name};
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
        // A recursive walk that follows a graph's edges with no visited set: the graph's cycle.
        let walk = recursive
            .as_ref()
            .and_then(|(name, line)| Some((name, line, graph_walk(self.f.code, *line as usize)?)));
        if let Some((name, line, edges)) = walk {
            self.fix(say!(
                "stack_overflow.graph_walk",
                name = name,
                line = line,
                edges = edges
            ));
        }
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

/// What a recursive function defined at `line` (1-based) walks when it follows a graph's edges:
/// its body loops over a node's neighbours (`for d in deps[name]`, `for (const d of
/// graph[node])`, `graph.get(node)`), and nothing in the code remembers the nodes already
/// visited, so a cycle recurses forever. The neighbours' expression, as written.
fn graph_walk(code: &str, line: usize) -> Option<String> {
    let lower = code.to_lowercase();
    if [
        "visited", "seen", "done", "marked", "onstack", "on_stack", "path.has", "in path",
    ]
    .iter()
    .any(|w| lower.contains(w))
    {
        return None;
    }
    let lines: Vec<&str> = code.lines().collect();
    let body = block(&lines, line.checked_sub(1).filter(|&at| at < lines.len())?);
    body.iter().find_map(|l| {
        let l = l.trim();
        let rest = l.strip_prefix("for ")?.trim_start();
        // JavaScript's `for (const x of xs) {`, Python's `for x in xs:`.
        let (javascript, rest) = match rest.strip_prefix('(') {
            Some(rest) => (true, rest),
            None => (false, rest),
        };
        let (_, iterable) = rest
            .split_once(" of ")
            .or_else(|| rest.split_once(" in "))?;
        let iterable = iterable.trim().trim_end_matches('{').trim_end();
        let iterable = if javascript {
            iterable.strip_suffix(')').unwrap_or(iterable).trim_end()
        } else {
            iterable.strip_suffix(':').unwrap_or(iterable).trim_end()
        };
        let (graph, node) = iterable
            .split_once(".get(")
            .map(|(g, n)| (g, n.split([',', ')']).next().unwrap_or("")))
            .or_else(|| {
                let (g, n) = iterable.split_once('[')?;
                Some((g, n.strip_suffix(']')?))
            })?;
        (is_name(graph.trim()) && is_name(node.trim())).then(|| iterable.to_owned())
    })
}

#[cfg(test)]
mod graph_tests {
    use super::graph_walk;

    #[test]
    fn a_recursive_walk_over_edges_without_a_visited_set_is_a_graph_walk() {
        let js = "const g = { a: ['b'], b: ['a'] };\nfunction walk(n) {\n  for (const m of g[n]) {\n    walk(m);\n  }\n}\nwalk('a');";
        assert_eq!(graph_walk(js, 2).as_deref(), Some("g[n]"));
        let py = "def reach(node):\n    out = []\n    for nxt in edges.get(node, []):\n        out += reach(nxt)\n    return out\n";
        assert_eq!(graph_walk(py, 1).as_deref(), Some("edges.get(node, [])"));
        let guarded =
            "def reach(node, seen):\n    for nxt in edges[node]:\n        reach(nxt, seen)\n";
        assert_eq!(graph_walk(guarded, 1), None);
        let tree = "def depth(t):\n    for c in t.children:\n        depth(c)\n";
        assert_eq!(graph_walk(tree, 1), None);
    }
}
