//! Advice at the limits of a call's CPU time, wall time and output: `out_of_fuel` (the loops
//! that did the work, the measured cost of the imports when they are most of the budget, and a
//! bigger budget when more fuel can help), `timeout` (endless loops, what the sleeps add up
//! to, blocking calls, a longer timeout) and `output_limit` (a file instead of stdout). Both
//! limits name a list searched on every pass of a long loop (a hidden inner loop) before any
//! budget. Memory and stack are in `memory`. The words live in `words/limits.toml`.

use sandbox_protocol::{FLAVORS, Language};
use serde_json::json;

use super::super::analyze::HEAVY_IMPORT_FUEL;
use super::super::docs::{FUEL, SESSIONS, WORKSPACE};
use super::super::{
    MAX_ECHOED_CODE, MAX_SUGGESTED_FUEL, MAX_TIMEOUT_SECS, NextCall, clip, derived_session_id,
    fmt_bytes, fmt_fuel, fmt_secs, nice_round_up,
};
use super::code_lines::{indent, numbered_block};
use super::draft::Draft;
use super::frames;
use super::stops::{self, assignments_of, leading_name};
use crate::scan::Endless;
use crate::words::{self, say};

/// The first loop of the code that can never end, and why.
struct EndlessLoop {
    header: String,
    line: u32,
    cause: Option<Endless>,
}

impl Draft<'_, '_> {
    pub(super) fn out_of_fuel(&mut self) {
        let f = self.f;
        let cpu_secs = f.fuel_budget as f64 / f.runtime.fuel_per_second() as f64;
        self.summary = say!(
            "out_of_fuel.summary",
            budget = fmt_fuel(f.fuel_budget),
            cpu_secs = format!("{cpu_secs:.1}"),
            runtime = f.runtime,
            consumed = fmt_fuel(f.fuel_consumed),
            state = words::text(if f.state_lost {
                "out_of_fuel.state_lost"
            } else {
                "out_of_fuel.state_kept"
            }),
        );
        self.restart_explained = true;
        self.doc(FUEL);
        self.doc(SESSIONS);
        let retries = self.swallowed_retry_fix();
        let endless = self.first_endless_loop();
        if let Some(endless) = &endless {
            let ids = [
                "out_of_fuel.endless_loop",
                "out_of_fuel.unchanged_condition",
                "out_of_fuel.wrong_direction",
                "out_of_fuel.assignment_in_condition",
                "out_of_fuel.never_advanced",
            ];
            self.endless_loop_fix(ids, endless);
        }
        // A loop the code shows can never end gets no bigger budget either.
        let caused = self.loop_cause_fix();
        let retried = self.endless_retry_fix();
        let never_ends = caused || retried || endless.is_some() || retries;
        self.branching_recursion_fix();
        // A list searched on every pass is the loop's cost: the set, not more fuel, fixes it.
        let searched = self.frame_scan_fix() || self.rebuilt_fix() || self.list_lookup_fix();
        // The imports go first when they are most of the budget; when the code's own work
        // used more, that work is the cause and the imports' cost comes after it.
        if self.imports_dominate() {
            self.heavy_imports_fix();
            self.unmeasured_imports_fix();
        }
        // "The loop needs more fuel" would contradict a loop shown never to end.
        if !searched && !never_ends {
            self.biggest_loop_fix();
        }
        if !self.imports_dominate() {
            self.heavy_imports_fix();
            self.unmeasured_imports_fix();
        }
        // More fuel cannot help a loop that never ends.
        if !never_ends {
            self.bigger_fuel_budget();
        }
        self.fix(words::text("out_of_fuel.split_work"));
        self.memoised_rerun();
    }

    /// What makes the code's loops long or endless, when the code shows it: a list that
    /// grows while it is iterated, or a pattern of `known_loop` (an exact float comparison, a
    /// bisection that never moves, a factorial search, trial division).
    ///
    /// True when the cause found means the loop never ends (a list grown while iterated, a
    /// graph walk without a visited set, a tolerance floats cannot reach): more fuel or time
    /// would not help.
    pub(super) fn loop_cause_fix(&mut self) -> bool {
        let before = self.fix_count();
        // An exact test stepped over or never met by floats, or a value clamped away from
        // its limit.
        if let Some(never_met) = self.loop_text().never_met() {
            self.fix(never_met.fix());
        }
        if let Some(impossible) = self.loop_text().impossible_test() {
            self.fix(impossible.fix());
        }
        if let Some((test, name, line)) = self.loop_text().exit_never_changes() {
            self.fix(say!(
                "known_loop.exit_never_changes",
                test = test,
                name = name,
                line = line,
            ));
        }
        if let Some((name, line, update)) = self.loop_text().continue_skips_update() {
            self.fix(say!(
                "known_loop.continue_skips_update",
                name = name,
                line = line,
                update = update,
            ));
        }
        if let Some((name, expr, line)) = self.loop_text().discarded_update() {
            self.fix(say!(
                "known_loop.discarded_update",
                name = name,
                expr = expr,
                line = line,
            ));
        }
        if let Some((name, value, line, test, loop_line)) = self.loop_text().reset_in_loop() {
            self.fix(say!(
                "known_loop.reset_in_loop",
                name = name,
                value = value,
                line = line,
                test = test,
                loop_line = loop_line,
            ));
        }
        if let Some((name, test, line)) = self.loop_text().update_only_in_branch() {
            self.fix(say!(
                "known_loop.update_only_in_branch",
                name = name,
                test = test,
                line = line,
            ));
        }
        if let Some((name, test, line)) = self.loop_text().counter_never_moves() {
            self.fix(say!(
                "known_loop.counter_never_moves",
                name = name,
                test = test,
                line = line,
            ));
        }
        if let Some((var, step, line)) = self.loop_text().chain_without_visited() {
            self.fix(say!(
                "known_loop.chain_without_visited",
                var = var,
                step = step,
                line = line,
            ));
        }
        if self.f.command
            && let Some(test) = stops::shell_loop_no_exit(self.f.code)
        {
            self.fix(say!("known_loop.shell_no_exit", test = test));
        }
        if self.f.command
            && let Some((test, name)) = stops::shell_loop_unchanged(self.f.code)
        {
            self.fix(say!("known_loop.shell_unchanged", test = test, name = name));
        }
        if let Some(b) = stuck_bisection(self.f.code) {
            self.fix(say!(
                "known_loop.stuck_bisection",
                bound = b.bound,
                mid = b.mid,
                line = b.line,
                test = b.test,
                next = b.next,
            ));
        }
        if let Some(list) = grows_while_iterated(self.f.code) {
            self.fix(say!("known_loop.grows_while_iterated", list = list));
        }
        if let Some(queue) = refilled_without_visited(self.f.code) {
            self.fix(say!("known_loop.refilled_without_visited", queue = queue));
        }
        if let Some(tol) = tolerance_below_float_precision(self.f.code, self.f.language) {
            self.fix(say!("known_loop.tolerance_below_precision", tol = tol));
        }
        if let Some(p) = product_never_zero(self.f.code) {
            self.fix(say!(
                "known_loop.product_never_zero",
                name = p.name,
                line = p.line,
                update = p.update,
                condition = p.condition,
            ));
        }
        if let Some(z) = zero_first_step(self.f.code) {
            self.fix(say!(
                "known_loop.zero_first_step",
                name = z.name,
                line = z.line,
                outer = z.outer,
                update = z.update,
            ));
        }
        let never_ends = self.fix_count() > before;
        let id = if self.python() {
            "known_loop.python"
        } else {
            "known_loop.javascript"
        };
        if let Some(fix) = self.known_fix(id, "") {
            self.fix(fix);
        }
        if let Some((divisor, n, line)) = trial_division_to_n(self.f.code, self.python()) {
            let id = if self.python() {
                "known_loop.trial_division_python"
            } else {
                "known_loop.trial_division_javascript"
            };
            self.fix(say!(id, divisor = divisor, n = n, line = line));
        }
        never_ends
    }

    /// A Python loop that retries behind an `except` catching everything: first, since the
    /// loop's own exit (or its absence) is not what keeps it going. True when found.
    fn swallowed_retry_fix(&mut self) -> bool {
        if !self.python() {
            let Some((clause, line)) = self.loop_text().js_swallowed_retry() else {
                return false;
            };
            self.fix(say!(
                "known_loop.swallowed_retry_javascript",
                clause = clause,
                line = line
            ));
            return true;
        }
        self.retry_fix(true)
    }

    /// The same with an `except` that names one error, in a `while True` only a success
    /// leaves: after the loop causes of the code, which say why the call keeps failing (no
    /// network) when they know. True when found.
    fn endless_retry_fix(&mut self) -> bool {
        self.python() && self.retry_fix(false)
    }

    /// The retry fix when the loop's `except` catches everything (`catch_all`) or names one
    /// error (not); true when given.
    fn retry_fix(&mut self, catch_all: bool) -> bool {
        let Some((clause, line, _)) = self
            .loop_text()
            .swallowed_retry()
            .filter(|(_, _, all)| *all == catch_all)
        else {
            return false;
        };
        let id = if catch_all {
            "known_loop.swallowed_retry"
        } else {
            "known_loop.endless_retry"
        };
        self.fix(say!(id, clause = clause, line = line));
        true
    }

    /// A loop that prints on every iteration of a long run: the output, not the work, is what
    /// takes the time (and would be cut at the output cap anyway).
    fn prints_every_iteration_fix(&mut self) {
        let prints = words::list("timeout.print_calls");
        // Only a loop known to be long: a short loop that prints and waits is about the wait.
        if self.first_sleep_line().is_some() {
            return;
        }
        let prints_on = |line: u32| {
            self.code
                .calls
                .iter()
                .any(|(call, at, _)| *at == line && prints.contains(call))
        };
        let found = self.code.loops.iter().find_map(|l| {
            // A body that only prints (`for i, row in df.iterrows(): print(row)`): whatever
            // the loop's size, the output is its work; so is a body whose output was cut.
            let body = if l.last_line > l.line {
                l.line + 1..=l.last_line
            } else {
                l.line..=l.line
            };
            let only_prints = body.into_iter().all(|line| {
                prints_on(line)
                    || self
                        .f
                        .code
                        .lines()
                        .nth(line as usize - 1)
                        .is_some_and(|text| text.trim().is_empty())
            });
            let big = l.bound.is_some_and(|b| b >= 10_000.0)
                || l.total_known >= 10_000.0
                || (l.bound.is_none() && (only_prints || self.f.stdout_truncated));
            // A one-line loop prints on its header's line (`for (...) console.log(i);`), after
            // its keyword (not `print(sum(x for x in xs))`, which prints once).
            let after_header = |call: &str| {
                let text = self.f.code.lines().nth(l.line as usize - 1).unwrap_or("");
                let keyword = l.header.split([' ', '(']).next().unwrap_or("for");
                text.find(keyword)
                    .is_some_and(|at| text[at..].contains(&format!("{call}(")))
            };
            let printed = self.code.calls.iter().find(|(call, line, _)| {
                prints.contains(call)
                    && ((*line > l.line && *line <= l.last_line)
                        || (*line == l.line && l.last_line == l.line && after_header(call)))
            });
            big.then_some(printed)
                .flatten()
                .map(|(call, line, _)| (l, call, *line))
        });
        if let Some((l, call, line)) = found {
            let fix = say!(
                "timeout.prints_every_iteration",
                header = l.header,
                loop_line = l.line,
                call = call,
                line = line,
            );
            self.fix(fix);
        }
    }

    /// A function that calls itself twice per call, unmemoised: its work doubles with each
    /// level, so memoising it is the fix, not a bigger budget or timeout.
    fn branching_recursion_fix(&mut self) {
        if let Some((name, line)) = self.orderings_recursion() {
            self.fix(say!(
                "branching_recursion.orderings",
                name = name,
                line = line
            ));
            return;
        }
        if let Some((name, line)) = self.code.branching.first().cloned() {
            let id = if self.python() {
                "branching_recursion.python"
            } else {
                "branching_recursion.javascript"
            };
            self.fix(say!(id, name = name, line = line));
        }
    }

    /// A function that calls itself from a loop, on what is left after taking one item out
    /// (`for p in perms(s[:i] + s[i+1:])`, `for (const p of perms(a.slice(...)))`): one call
    /// per remaining item at every level, n! in all, which no memo shortens. The function
    /// and its definition's line.
    fn orderings_recursion(&self) -> Option<(String, u32)> {
        self.code.recursion.iter().find_map(|(name, line)| {
            let call = format!("{name}(");
            self.f
                .code
                .lines()
                .enumerate()
                .skip((*line as usize).saturating_sub(1))
                .any(|(k, l)| {
                    // Inside a body (indented, or a one-line function), not a call of the
                    // function from the top level.
                    let inside = k + 1 == *line as usize || l.starts_with([' ', '\t']);
                    // A `for` statement: JavaScript's anywhere, Python's at the line's start
                    // (not a comprehension's `for`, as in a quicksort's partitions).
                    let from_loop = ["for (", "for("]
                        .iter()
                        .filter_map(|f| l.find(f))
                        .min()
                        .map(|at| &l[at..])
                        .or_else(|| l.trim_start().strip_prefix("for "));
                    inside
                        && from_loop.is_some_and(|rest| {
                            rest.contains(&call)
                                && ["slice(", "[:", ":]", "splice(", "filter("]
                                    .iter()
                                    .any(|cut| rest.contains(cut))
                        })
                })
                .then(|| (name.clone(), *line))
        })
    }

    /// For Python, the next call is the same code with the branching function memoised
    /// (`@functools.cache` above its `def`): the one change that makes it finish.
    fn memoised_rerun(&mut self) {
        let Some((name, line)) = self.code.branching.first().cloned() else {
            return;
        };
        if !self.python() || self.orderings_recursion().is_some() {
            return;
        }
        let mut lines: Vec<&str> = self.f.code.lines().collect();
        let Some(def) = line.checked_sub(1).and_then(|l| lines.get(l as usize)) else {
            return;
        };
        let margin = &def[..indent(def)];
        let decorator = format!("{margin}@__import__('functools').cache");
        lines.insert(line as usize - 1, &decorator);
        let code = lines.join("\n");
        if code.len() <= MAX_ECHOED_CODE {
            let args = self.session_args(json!({"code": code, "language": "python"}));
            let reason = say!("branching_recursion.reason", name = name);
            self.next = Some(NextCall::new("execute_code", args, reason));
        }
    }

    /// The loop that never ends, by why: no exit from `while True`, or a condition nothing
    /// in the body changes (`while count < 10` without `count += 1`).
    /// The fix for a loop that never ends, worded by its cause: `ids` are the family's
    /// no-exit, unchanged-condition, wrong-direction and assignment-in-condition words.
    fn endless_loop_fix(&mut self, ids: [&str; 5], endless: &EndlessLoop) {
        let [
            no_exit,
            unchanged,
            wrong_direction,
            assignment,
            never_advanced,
        ] = ids;
        // A node tested but never moved along its links (`while (node)` without
        // `node = node.next`): the fix names the link.
        if endless.cause == Some(Endless::UnchangedCondition)
            && let Some((name, field)) = unadvanced_link(&endless.header, self.f.code)
        {
            let fix = say!(
                never_advanced,
                header = endless.header,
                line = endless.line,
                name = name,
                field = field,
            );
            self.fix(fix);
            return;
        }
        let id = match endless.cause {
            Some(Endless::UnchangedCondition) => unchanged,
            Some(Endless::WrongDirection) => wrong_direction,
            Some(Endless::AssignmentInCondition) => assignment,
            Some(Endless::NoExit) | None => no_exit,
        };
        let fix = say!(id, header = endless.header, line = endless.line);
        self.fix(fix);
    }

    /// The first loop that never ends.
    fn first_endless_loop(&self) -> Option<EndlessLoop> {
        self.code
            .loops
            .iter()
            .find(|l| l.endless)
            .map(|l| EndlessLoop {
                header: l.header.clone(),
                line: l.line,
                cause: l.endless_cause,
            })
    }

    /// True when the expensive imports' measured cost is at least half the budget: then they,
    /// not the code's own work, are what used it up.
    fn imports_dominate(&self) -> bool {
        let heavy: u64 = self
            .code
            .measured_imports(self.table)
            .iter()
            .map(|m| m.2.fuel)
            .filter(|fuel| *fuel >= HEAVY_IMPORT_FUEL)
            .sum();
        heavy > 0 && heavy.saturating_mul(2) >= self.f.fuel_budget
    }

    /// A membership test on a list inside a long loop (`x in seen` for `seen = []`,
    /// `xs.includes(x)`): a hidden inner loop, quadratic in the data. The set is the fix.
    /// A value a long loop rebuilds whole on every pass (a string grown with `+`, a frame
    /// grown with `pd.concat`) or a frame it walks row by row. True when found.
    fn rebuilt_fix(&mut self) -> bool {
        let Some(found) = frames::rebuilt_each_pass(self.f.code, &self.code.loops) else {
            return false;
        };
        let id = match found.kind {
            frames::Rebuilt::String if self.python() => "known_loop.rebuilt.string_python",
            frames::Rebuilt::String => "known_loop.rebuilt.string_javascript",
            frames::Rebuilt::Frame => "known_loop.rebuilt.frame",
            frames::Rebuilt::Rows => "known_loop.rebuilt.rows",
        };
        self.fix(say!(
            id,
            name = found.name,
            line = found.line,
            loop_line = found.loop_line,
        ));
        true
    }

    /// A DataFrame filtered once per row (in the function `.apply` calls, or in a loop): a
    /// quadratic scan that a merge or a `.map` removes. True when found.
    fn frame_scan_fix(&mut self) -> bool {
        if !self.python() {
            return false;
        }
        let Some(found) = frames::scan_per_row(self.f.code, &self.code.loops) else {
            return false;
        };
        self.fix(say!(
            "known_loop.frame_scan",
            mask = found.mask,
            frame = found.frame,
            line = found.line,
            per_row = found.per_row,
        ));
        true
    }

    fn list_lookup_fix(&mut self) -> bool {
        let Some(found) = list_lookup_in_loop(self.f.code, &self.code.loops) else {
            return false;
        };
        let id = if self.python() {
            "known_loop.list_lookup.python"
        } else {
            "known_loop.list_lookup.javascript"
        };
        self.fix(say!(
            id,
            test = found.test,
            line = found.line,
            list = found.list,
            loop_line = found.loop_line,
        ));
        true
    }

    /// The measured first-import cost of the expensive imports, as a share of the budget.
    fn heavy_imports_fix(&mut self) {
        let budget = self.f.fuel_budget;
        let mut measured = self.code.measured_imports(self.table);
        measured.sort_by_key(|m| std::cmp::Reverse(m.2.fuel));
        let heavy: Vec<(String, u64)> = measured
            .iter()
            .filter(|m| m.2.fuel >= HEAVY_IMPORT_FUEL)
            .map(|m| (m.1.to_owned(), m.2.fuel))
            .collect();
        if heavy.is_empty() {
            return;
        }
        let list: Vec<String> = heavy
            .iter()
            .take(4)
            .map(|(n, fuel)| {
                let share = *fuel as f64 / budget.max(1) as f64 * 100.0;
                say!(
                    "out_of_fuel.heavy_import",
                    module = n,
                    fuel = fmt_fuel(*fuel),
                    share = format!("{share:.0}"),
                )
            })
            .collect();
        let names: Vec<&str> = heavy.iter().take(4).map(|(n, _)| n.as_str()).collect();
        self.fix(say!(
            "out_of_fuel.heavy_imports",
            imports = list.join(", "),
            names = names.join(", "),
        ));
    }

    /// Third-party imports nobody measured.
    fn unmeasured_imports_fix(&mut self) {
        let unmeasured: Vec<String> = self
            .code
            .unmeasured_imports(self.table)
            .iter()
            .map(|i| i.module.clone())
            .take(3)
            .collect();
        if !unmeasured.is_empty() {
            self.fix(say!(
                "out_of_fuel.unmeasured_imports",
                modules = unmeasured.join(", ")
            ));
        }
    }

    /// The loop with the most work (data-dependent levels first, then iterations).
    fn biggest_loop_fix(&mut self) {
        self.loop_work_fix(false);
    }

    /// The loop with the most work, when it sits inside other loops (`nested_only`), or
    /// whatever its depth. Nested loops multiply their counts: the fix names the algorithm
    /// (a lookup, sorting, a sieve) before the budget or the timeout.
    fn loop_work_fix(&mut self, nested_only: bool) {
        let big_loop = self
            .code
            .loops
            .iter()
            .filter(|l| !l.endless)
            .max_by(|a, b| {
                (a.unknown_levels, a.total_known as u64)
                    .cmp(&(b.unknown_levels, b.total_known as u64))
            })
            .map(|l| {
                (
                    l.header.clone(),
                    l.line,
                    l.depth,
                    l.unknown_levels,
                    l.total_known,
                )
            });
        let Some((header, line, depth, unknown, total)) = big_loop else {
            return;
        };
        // An inner loop that strides by the outer loop's variable (a sieve's
        // `range(p * p, n, p)`) does n/p steps: n log n in all, not a power of n.
        let depth = if depth > 1 && strided_by_outer(&self.code.loops, line, &header) {
            1
        } else {
            depth
        };
        if nested_only && depth < 2 {
            return;
        }
        let size = if unknown == 0 {
            say!("out_of_fuel.iterations", count = fmt_fuel(total as u64))
        } else {
            words::text("out_of_fuel.unknown_iterations").to_owned()
        };
        let header = clip(&header, 60);
        self.fix(if depth > 1 {
            say!(
                "out_of_fuel.biggest_nested_loop",
                header = header,
                line = line,
                size = size,
                depth = depth,
            )
        } else {
            say!(
                "out_of_fuel.biggest_loop",
                header = header,
                line = line,
                size = size,
            )
        });
    }

    /// A new session with three times the fuel this call used, up to the largest budget
    /// guidance proposes.
    fn bigger_fuel_budget(&mut self) {
        let (budget, consumed) = (self.f.fuel_budget, self.f.fuel_consumed);
        let suggested =
            nice_round_up(consumed.max(budget).max(1).saturating_mul(3)).min(MAX_SUGGESTED_FUEL);
        if suggested <= budget {
            self.fix(say!(
                "fuel_budget.at_maximum",
                max = fmt_fuel(MAX_SUGGESTED_FUEL)
            ));
            return;
        }
        let id = derived_session_id(
            self.f.session_id,
            &format!(
                "fuel-{}",
                fmt_fuel(suggested).to_lowercase().replace('.', "_")
            ),
        );
        // A flavor's executions get fuel that lasts until their timeout: without a fuel_budget
        // (a fixed cap) the timeout is what stops the code, softly.
        if let Some(flavor) = FLAVORS.iter().find(|fl| self.flavor_fuel(fl) >= suggested) {
            let (name, fuel) = (flavor.name(), fmt_fuel(self.flavor_fuel(flavor)));
            let timeout = fmt_secs(flavor.timeout_secs as f64);
            self.fix(say!(
                "fuel_budget.flavor",
                session = self.new_session_text(),
                id = id,
                flavor = name,
                fuel = fuel,
                timeout = timeout,
                suggested = suggested,
                suggested_fuel = fmt_fuel(suggested),
            ));
            self.next = Some(NextCall::new(
                "create_session",
                self.new_session_args(json!({"session_id": id, "flavor": name})),
                say!("fuel_budget.flavor_reason", flavor = name, fuel = fuel),
            ));
            return;
        }
        self.fix(say!(
            "fuel_budget.fixed",
            session = self.new_session_text(),
            id = id,
            suggested = suggested,
            suggested_fuel = fmt_fuel(suggested),
        ));
        self.next = Some(NextCall::new(
            "create_session",
            self.new_session_args(json!({"session_id": id, "fuel_budget": suggested})),
            say!("fuel_budget.fixed_reason", fuel = fmt_fuel(suggested)),
        ));
    }

    pub(super) fn timeout(&mut self) {
        let f = self.f;
        let t = f.timeout_secs;
        let summary = if f.state_lost {
            "timeout.summary_lost"
        } else {
            "timeout.summary_kept"
        };
        self.summary = say!(summary, timeout = fmt_secs(t));
        self.restart_explained = true;
        self.doc(FUEL);
        self.doc(SESSIONS);
        // A job meant to run beside the rest (a server, a watcher) ran to completion first.
        if f.command && super::shell_habits::starts_background_job(f.code) {
            self.fix(say!("timeout.background_job"));
        }
        let retries = self.swallowed_retry_fix();
        let endless = self.first_endless_loop();
        if let Some(endless) = &endless {
            let ids = [
                "timeout.endless_loop",
                "timeout.unchanged_condition",
                "timeout.wrong_direction",
                "timeout.assignment_in_condition",
                "timeout.never_advanced",
            ];
            self.endless_loop_fix(ids, endless);
        }
        // A loop the code shows can never end gets no longer timeout either.
        let caused = self.loop_cause_fix();
        let retried = self.endless_retry_fix();
        let never_ends = caused || retried || endless.is_some() || retries;
        self.branching_recursion_fix();
        if f.command
            && let Some(count) = super::shell_habits::many_files(f.code)
        {
            self.fix(say!("timeout.many_files", count = count));
        }
        if !never_ends {
            if !self.frame_scan_fix() && !self.rebuilt_fix() {
                self.list_lookup_fix();
            }
            self.prints_every_iteration_fix();
        }
        let sleep = self.first_sleep_line();
        let timer = (!self.python()).then(|| js_timer(f.code)).flatten();
        let mut longer = ((t * 2.0).ceil() as u64).clamp(60, MAX_TIMEOUT_SECS);
        if let Some(JsTimer::Timeout { delay_ms, .. }) = timer {
            longer = longer.max(timer_timeout(delay_ms));
        }
        let timer_fixed = match &timer {
            Some(JsTimer::Interval { line }) => {
                self.fix(say!("timeout.interval_never_cleared", line = line));
                true
            }
            Some(JsTimer::Timeout { line, delay_ms }) if *delay_ms as f64 >= t * 1000.0 => {
                self.fix(say!(
                    "timeout.timer_past_timeout",
                    line = line,
                    delay = fmt_secs(*delay_ms as f64 / 1000.0),
                    timeout = fmt_secs(t),
                    longer = longer,
                    max = MAX_TIMEOUT_SECS,
                ));
                true
            }
            _ => false,
        };
        let waits = (!timer_fixed)
            .then(|| self.total_wait())
            .flatten()
            .filter(|w| w.secs >= t);
        if let Some(w) = &waits {
            longer = longer.max(((w.secs + 10.0).ceil() as u64).min(MAX_TIMEOUT_SECS));
            let tool = if f.command {
                "execute_command"
            } else {
                "execute_code"
            };
            self.fix(say!(
                "timeout.waits_add_up",
                line = w.line,
                total = fmt_secs(w.secs),
                detail = w.detail,
                timeout = fmt_secs(t),
                tool = tool,
                longer = longer,
                max = MAX_TIMEOUT_SECS,
            ));
        } else if let Some(line) = sleep.filter(|_| !timer_fixed) {
            self.fix(say!("timeout.sleeps", line = line));
        } else if !never_ends && sleep.is_none() {
            // Loops inside loops: a longer timeout rarely covers a brute-force search.
            self.loop_work_fix(true);
        }
        if f.state_lost {
            self.fix(words::text("timeout.state_lost"));
        }
        // An interval nobody clears never ends either: a longer timeout only waits longer.
        let endless_interval = matches!(timer, Some(JsTimer::Interval { .. }));
        if !never_ends && !endless_interval && (t as u64) < MAX_TIMEOUT_SECS {
            let (tool, what) = if f.command {
                ("execute_command", "command line")
            } else {
                ("execute_code", "code")
            };
            self.fix(say!(
                "timeout.longer",
                tool = tool,
                longer = longer,
                max = MAX_TIMEOUT_SECS,
                medium = FLAVORS[1].name(),
                medium_secs = FLAVORS[1].timeout_secs,
                large = FLAVORS[2].name(),
                large_secs = FLAVORS[2].timeout_secs,
            ));
            self.next = self.rerun(
                Some(longer),
                &say!("timeout.longer_reason", what = what, longer = longer),
            );
        }
        self.fix(words::text("timeout.chunks"));
        self.memoised_rerun();
        if f.fuel_budget > 0
            && (f.fuel_consumed as f64) < 0.05 * f.fuel_budget as f64
            && sleep.is_none()
        {
            self.fix(say!(
                "timeout.waited",
                fuel = fmt_fuel(f.fuel_consumed),
                secs = format!("{t:.0}"),
            ));
        }
    }

    /// What the code's sleeps add up to, when every one has a delay written as a number and
    /// sits in loops of known size: `time.sleep(5)` in `for r in range(12)` is 60 s, and a
    /// JavaScript helper that wraps setTimeout (`const sleep = ms => new Promise(r =>
    /// setTimeout(r, ms))`) counts with the delays it is called with.
    fn total_wait(&self) -> Option<TotalWait> {
        let sleeps = words::list("timeout.sleep_calls");
        let helpers = if self.python() {
            Vec::new()
        } else {
            js_sleep_helpers(self.f.code)
        };
        let src = &self.code.src;
        let mut total = 0.0f64;
        let mut first: Option<(u32, String)> = None;
        for (callee, line, open) in &self.code.calls {
            let helper = helpers.iter().any(|h| h == callee);
            if !helper && !sleeps.contains(callee) {
                continue;
            }
            let close = src.partner.get(*open).copied()?;
            let args = call_arguments(src.text(open + 1, close));
            // setTimeout(fn, ms): the delay is its second argument.
            let timer = callee.ends_with("setTimeout");
            let delay = if timer { args.get(1) } else { args.first() };
            let Some(delay) = delay.and_then(|a| product_f64(a)) else {
                // A delay that is a name (the helper's own setTimeout) is counted at its calls.
                if timer && !helpers.is_empty() {
                    continue;
                }
                return None;
            };
            // Python sleeps take seconds; QuickJS's os.sleep, timers and their helpers, ms.
            let secs = if self.python() { delay } else { delay / 1000.0 };
            let around = self
                .code
                .loops
                .iter()
                .filter(|l| l.line <= *line && *line <= l.last_line)
                .max_by_key(|l| l.depth);
            let times = match around {
                Some(l) if l.unknown_levels == 0 => l.total_known,
                Some(_) => return None,
                None => 1.0,
            };
            total += secs * times;
            if first.is_none() {
                let each = fmt_secs(secs);
                let detail = if times > 1.0 {
                    format!("{} × {each}", fmt_count(times))
                } else {
                    each
                };
                first = Some((*line, detail));
            }
        }
        let (line, detail) = first?;
        Some(TotalWait {
            line,
            secs: total,
            detail,
        })
    }

    /// The line of the first call that sleeps (Python or JavaScript).
    /// A JavaScript timer whose delays are all known and short (under a second) is not a
    /// sleep: it fires after its delay and the call goes on.
    fn first_sleep_line(&self) -> Option<u32> {
        let sleeps = words::list("timeout.sleep_calls");
        let short_timers = !self.python()
            && matches!(js_timer(self.f.code), Some(JsTimer::Timeout { delay_ms, .. }) if delay_ms < 1000)
            && !self.f.code.contains("setTimeout(resolve")
            && self
                .code
                .calls
                .iter()
                .all(|(c, _, _)| c != "sleep" && c != "os.sleep");
        self.code
            .calls
            .iter()
            .filter(|(c, _, _)| !(short_timers && c.ends_with("setTimeout")))
            .find(|(c, _, _)| sleeps.contains(c))
            .map(|(_, line, _)| *line)
    }

    pub(super) fn output_limit(&mut self) {
        self.rule("output_limit");
        self.doc(WORKSPACE);
        self.doc(FUEL);
        self.output_cause_fix();
        self.rule(if self.python() {
            "output_limit.python"
        } else {
            "output_limit.javascript"
        });
        let cap = |i: usize| fmt_bytes(FLAVORS[i].output_bytes as u64);
        self.fix(say!(
            "output_limit.larger_flavors",
            medium_cap = cap(1),
            medium = FLAVORS[1].name(),
            large_cap = cap(2),
            large = FLAVORS[2].name(),
            small_cap = cap(0),
        ));
    }
}

impl Draft<'_, '_> {
    /// What filled the output, read off the code: a print on every pass of a loop, or one
    /// print of a whole large value (a DataFrame, a long list, a JSON text), each with its
    /// line; the cause comes before the generic "write it to a file".
    fn output_cause_fix(&mut self) {
        let prints = words::list("timeout.print_calls");
        let lines: Vec<&str> = self.f.code.lines().collect();
        let printed: Vec<(&str, u32)> = self
            .code
            .calls
            .iter()
            .filter(|(call, _, _)| prints.contains(call))
            .map(|(call, line, _)| (call.as_str(), *line))
            .collect();
        // A one-line loop prints on its header's line, after its keyword (`for (...)
        // console.log(i);`), not before it (`print(sum(x for x in xs))` prints once).
        let after_keyword = |l: &crate::scan::LoopInfo, call: &str| {
            let text = lines.get(l.line as usize - 1).copied().unwrap_or("");
            let keyword = l.header.split([' ', '(']).next().unwrap_or("for");
            text.find(keyword)
                .is_some_and(|at| text[at..].contains(&format!("{call}(")))
        };
        let in_loop = printed.iter().find_map(|&(call, line)| {
            self.code
                .loops
                .iter()
                .find(|l| {
                    (line > l.line && line <= l.last_line)
                        || (line == l.line && l.last_line == l.line && after_keyword(l, call))
                })
                .map(|l| (call, line, l))
        });
        if let Some((call, line, l)) = in_loop {
            let size = match l.bound {
                Some(b) => say!("out_of_fuel.iterations", count = fmt_fuel(b as u64)),
                None => words::text("out_of_fuel.unknown_iterations").to_owned(),
            };
            self.fix(say!(
                "output_limit.in_loop",
                call = call,
                line = line,
                header = l.header,
                loop_line = l.line,
                size = size,
            ));
            return;
        }
        let Some(&(call, line)) = printed.first() else {
            return;
        };
        let text = lines.get(line as usize - 1).map_or("", |t| t.trim());
        let arg = text
            .find(&format!("{call}("))
            .map(|at| &text[at + call.len() + 1..])
            .and_then(|rest| rest.rfind(')').map(|end| rest[..end].trim()))
            .filter(|arg| !arg.is_empty())
            .unwrap_or("the value");
        let frames = ["pandas", "DataFrame", "pd.", "polars"];
        let id = if self.python() && frames.iter().any(|w| self.f.code.contains(w)) {
            "output_limit.whole_frame"
        } else if self.python() {
            "output_limit.whole_value_python"
        } else {
            "output_limit.whole_value_javascript"
        };
        self.fix(say!(id, call = call, line = line, arg = clip(arg, 60)));
    }
}

/// The variable a `while` header tests for being there (`while (node)`, `while node is not
/// None`, `while (cur !== null)`) and the link field the code gives its items (`next`,
/// `parent`, ... from `known_loop.link_fields`, as `.next` or a `next:` key), when it has one.
fn unadvanced_link<'h>(header: &'h str, code: &str) -> Option<(&'h str, String)> {
    let test = header.strip_prefix("while")?.trim();
    let test = test
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or(test)
        .trim();
    let name = [
        " is not None",
        " !== null",
        " != null",
        " != None",
        " !== undefined",
    ]
    .iter()
    .find_map(|suffix| test.strip_suffix(suffix))
    .unwrap_or(test)
    .trim();
    if leading_name(name) != Some(name) {
        return None;
    }
    let bounded = |at: usize, len: usize| {
        let after = code[at + len..].chars().next();
        !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
    };
    let field = words::list("known_loop.links.fields")
        .iter()
        .find(|field| {
            let dotted = format!(".{field}");
            code.match_indices(&dotted)
                .any(|(at, _)| bounded(at, dotted.len()))
                || [
                    format!("{field}:"),
                    format!("\"{field}\""),
                    format!("'{field}'"),
                ]
                .iter()
                .any(|key| {
                    code.match_indices(key.as_str()).any(|(at, _)| {
                        !code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_')
                    })
                })
        })?;
    Some((name, field.clone()))
}

/// True when the loop at `line` (header `header`) steps by the variable of a loop around it:
/// Python `for m in range(a, b, p)` or JavaScript `for (...; ...; m += p)` inside `for p ...`.
fn strided_by_outer(loops: &[crate::scan::LoopInfo], line: u32, header: &str) -> bool {
    let step = if let Some(args) = header
        .split_once("range(")
        .and_then(|(_, a)| a.strip_suffix(')'))
    {
        let parts: Vec<&str> = args.split(',').map(str::trim).collect();
        match parts.as_slice() {
            [_, _, step] => *step,
            _ => return false,
        }
    } else if let Some((_, step)) = header.rsplit_once("+=") {
        step.trim().trim_end_matches(')').trim()
    } else {
        return false;
    };
    if leading_name(step) != Some(step) {
        return false;
    }
    loops.iter().any(|outer| {
        outer.line < line && outer.last_line >= line && loop_variable(&outer.header) == Some(step)
    })
}

/// The variable a `for` header binds: `p` of `for p in range(2, n)` or of
/// `for (let p = 2; ...)`.
fn loop_variable(header: &str) -> Option<&str> {
    let rest = header.strip_prefix("for ")?;
    let rest = rest.strip_prefix('(').map_or(rest, |r| {
        ["let ", "var ", "const "]
            .iter()
            .find_map(|k| r.strip_prefix(k))
            .unwrap_or(r)
    });
    leading_name(rest.trim_start())
}

/// A membership test on a list inside a long loop (see [`list_lookup_in_loop`]).
#[derive(Debug, Clone, PartialEq, Eq)]
struct ListLookup {
    /// The test as written (`key in seen`, `seen.includes(key)`).
    test: String,
    /// Its line (1-based).
    line: usize,
    list: String,
    /// The line of the innermost long loop around it.
    loop_line: u32,
}

/// Fewer passes than this make a list search cheap enough.
const LONG_LOOP: f64 = 1_000.0;

/// The first membership test on a list that sits inside a long loop (a thousand passes or
/// more, or a number that depends on the data): Python's `x in NAME`, `x not in NAME`,
/// `NAME.count(x)` and `NAME.index(x)`, JavaScript's `NAME.includes(x)` and
/// `NAME.indexOf(x)`, where NAME is a list that grows (`append`, `push`) or was built from
/// data (a comprehension, `list(...)`). Each test searches the list from its start, so the
/// loop's work is quadratic in the data.
fn list_lookup_in_loop(code: &str, loops: &[crate::scan::LoopInfo]) -> Option<ListLookup> {
    let lines: Vec<&str> = code.lines().collect();
    // Which lines lie inside a long loop (the innermost one's line), in one pass.
    let mut inside: Vec<Option<u32>> = vec![None; lines.len() + 2];
    // Deeply nested loops mark their lines once per level: bounded, so hostile code stays
    // cheap.
    let mut marks = 0usize;
    let mut lists = std::collections::HashSet::new();
    let mut grown = std::collections::HashSet::new();
    for l in loops {
        // The collection a loop walks is as long as the data: searching it is a loop too.
        if let Some(walked) = walked_collection(&l.header) {
            lists.insert(walked.to_owned());
            grown.insert(walked.to_owned());
        }
        let long = l.unknown_levels > 0 || l.total_known >= LONG_LOOP;
        if !long || marks > 4 * lines.len() + 10_000 {
            continue;
        }
        // A loop on one line (a comprehension, `.filter(...)`) holds its own line.
        let from = if l.last_line == l.line {
            l.line as usize
        } else {
            l.line as usize + 1
        };
        let to = (l.last_line as usize).min(lines.len());
        for slot in inside.iter_mut().take(to + 1).skip(from) {
            // Loops come in order of their lines: a later one is the inner one.
            *slot = Some(l.line);
            marks += 1;
        }
    }
    // `xs.filter(...)`, `xs.forEach(...)`: the receiver is walked.
    for method in [
        ".filter(",
        ".map(",
        ".forEach(",
        ".some(",
        ".every(",
        ".reduce(",
    ] {
        for (at, _) in code.match_indices(method) {
            if let Some(name) = trailing_name(&code[..at]) {
                lists.insert(name.to_owned());
                grown.insert(name.to_owned());
            }
        }
    }
    for line in &lines {
        let l = line.trim().trim_end_matches(';');
        let l = ["let ", "var ", "const "]
            .iter()
            .find_map(|k| l.strip_prefix(k))
            .unwrap_or(l);
        if let Some((name, value)) = l.split_once('=') {
            let (name, value) = (name.trim(), value.trim());
            if leading_name(name) == Some(name)
                && !value.starts_with('=')
                && (value.starts_with('[') || value.starts_with("list("))
            {
                // Built from data (a comprehension, `list(...)` of something): as long as the
                // data. A literal of a few items (`['a', 'e', 'i']`) is a cheap search.
                let built =
                    value.contains(" for ") || (value.starts_with("list(") && value != "list()");
                if built {
                    grown.insert(name.to_owned());
                }
                lists.insert(name.to_owned());
            }
        }
        for grow in [".append(", ".push(", ".extend(", ".insert("] {
            for (at, _) in line.match_indices(grow) {
                if let Some(name) = trailing_name(&line[..at]) {
                    grown.insert(name.to_owned());
                }
            }
        }
    }
    // Sets and dicts (and their JavaScript kin) find a key at once.
    let hashed: std::collections::HashSet<&str> = lines
        .iter()
        .filter_map(|line| {
            let l = line.trim();
            let l = ["let ", "var ", "const "]
                .iter()
                .find_map(|k| l.strip_prefix(k))
                .unwrap_or(l);
            let (name, value) = l.split_once('=')?;
            let (name, value) = (name.trim(), value.trim());
            let hash = [
                "{",
                "set(",
                "dict(",
                "frozenset(",
                "Counter(",
                "defaultdict(",
                "new Set",
                "new Map",
            ]
            .iter()
            .any(|h| value.starts_with(h));
            (hash && leading_name(name) == Some(name)).then_some(name)
        })
        .collect();
    let is_list =
        |name: &str| lists.contains(name) && grown.contains(name) && !hashed.contains(name);
    for (k, line) in lines.iter().enumerate() {
        let Some(loop_line) = inside.get(k + 1).copied().flatten() else {
            continue;
        };
        let trimmed = line.trim_start();
        if !trimmed.starts_with("for ") {
            for (at, _) in line.match_indices(" in ") {
                let after = &line[at + 4..];
                let Some(list) = leading_name(after).filter(|n| is_list(n)) else {
                    continue;
                };
                if after[list.len()..].starts_with(['.', '[', '(']) {
                    continue;
                }
                let head = line[..at].trim_end();
                // `for x in xs` walks the list; only a test searches it.
                if head.rsplit_once("for ").is_some_and(|(_, target)| {
                    target
                        .chars()
                        .all(|c| c.is_alphanumeric() || matches!(c, '_' | ',' | ' ' | '(' | ')'))
                }) {
                    continue;
                }
                let (head, not) = match head.strip_suffix(" not") {
                    Some(h) => (h.trim_end(), " not"),
                    None => (head, ""),
                };
                let Some(value) = trailing_name(head) else {
                    continue;
                };
                return Some(ListLookup {
                    test: format!("{value}{not} in {list}"),
                    line: k + 1,
                    list: list.to_owned(),
                    loop_line,
                });
            }
        }
        for method in [".includes(", ".indexOf(", ".count(", ".index("] {
            for (at, _) in line.match_indices(method) {
                let Some(list) = trailing_name(&line[..at]).filter(|n| is_list(n)) else {
                    continue;
                };
                let args = &line[at + method.len()..];
                let arg = args.split(')').next().unwrap_or("").trim();
                return Some(ListLookup {
                    test: format!("{list}{method}{})", clip(arg, 30)),
                    line: k + 1,
                    list: list.to_owned(),
                    loop_line,
                });
            }
        }
    }
    None
}

/// The plain name a loop header walks: `xs` of `for x in xs` or of `for (const x of xs)`.
fn walked_collection(header: &str) -> Option<&str> {
    let what = if let Some(rest) = header.strip_prefix("for (") {
        rest.split_once(" of ")?.1.trim_end_matches(')').trim()
    } else {
        header.strip_prefix("for ")?.split_once(" in ")?.1.trim()
    };
    (leading_name(what) == Some(what)).then_some(what)
}

/// The identifier at the end of `text`, if any (`seen` of `if key in seen`).
fn trailing_name(text: &str) -> Option<&str> {
    let start = text
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphanumeric() || *c == '_' || *c == '$')
        .last()
        .map(|(i, _)| i)?;
    let name = &text[start..];
    let member = text[..start].ends_with('.');
    (!member)
        .then_some(name)
        .filter(|n| leading_name(n) == Some(*n))
}

/// What a call's sleeps add up to ([`Draft::total_wait`]).
struct TotalWait {
    /// The line of the first sleep.
    line: u32,
    secs: f64,
    /// How the first one adds up: `3 × 15 s`, or its delay alone.
    detail: String,
}

/// A count as written in advice: `3`, `100`, `1.5K`.
fn fmt_count(n: f64) -> String {
    if n < 10_000.0 {
        format!("{}", n as u64)
    } else {
        fmt_fuel(n as u64)
    }
}

/// A product of number literals (`60 * 1000`, `0.5`, `1e4`) as a number.
fn product_f64(text: &str) -> Option<f64> {
    text.split('*').try_fold(1f64, |acc, factor| {
        let factor: f64 = factor.trim().replace('_', "").parse().ok()?;
        (factor.is_finite() && factor >= 0.0).then_some(acc * factor)
    })
}

/// The names of JavaScript functions that sleep by wrapping setTimeout around their own
/// parameter: `const sleep = ms => new Promise(r => setTimeout(r, ms))`,
/// `function wait(ms) { return new Promise(res => setTimeout(res, ms)); }`.
fn js_sleep_helpers(code: &str) -> Vec<String> {
    let mut delays: Vec<&str> = Vec::new();
    for (at, _) in code.match_indices("setTimeout(") {
        let args = call_arguments(&code[at + "setTimeout(".len()..]);
        if let Some(delay) = args.get(1).filter(|d| leading_name(d) == Some(**d)) {
            delays.push(delay);
        }
    }
    if delays.is_empty() {
        return Vec::new();
    }
    let mut helpers = Vec::new();
    for line in code.lines() {
        let l = line.trim();
        let l = ["const ", "let ", "var ", "async "]
            .iter()
            .fold(l, |l, k| l.strip_prefix(k).unwrap_or(l));
        let (name, params) = if let Some(rest) = l.strip_prefix("function ") {
            let Some((name, rest)) = rest.split_once('(') else {
                continue;
            };
            (name.trim(), rest.split(')').next().unwrap_or(""))
        } else if let Some((name, rest)) = l.split_once('=') {
            let rest = rest.trim();
            let rest = rest.strip_prefix("async").map_or(rest, str::trim_start);
            let Some((params, _)) = rest.split_once("=>") else {
                continue;
            };
            (name.trim(), params.trim().trim_matches(['(', ')']))
        } else {
            continue;
        };
        let param = params.split(',').next().unwrap_or("").trim();
        if leading_name(name) == Some(name) && !param.is_empty() && delays.contains(&param) {
            helpers.push(name.to_owned());
        }
    }
    helpers
}

/// A JavaScript timer that keeps a call waiting: pending timers run before the call ends, each
/// after its delay (as in Node).
#[derive(Debug, Clone, PartialEq, Eq)]
enum JsTimer {
    /// `setInterval` with no `clearInterval` anywhere in the code: it repeats until the timeout.
    Interval { line: usize },
    /// The `setTimeout` with the longest delay the code writes as a number.
    Timeout { line: usize, delay_ms: u64 },
}

/// The timer in JavaScript `code` that keeps the call waiting longest (see [`JsTimer`]), read
/// off the text: a delay counts when it is a number or a product of numbers (`45000`,
/// `45_000`, `60 * 1000`, `1e4`).
fn js_timer(code: &str) -> Option<JsTimer> {
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    if !code.contains("clearInterval")
        && let Some(at) = code.find("setInterval(")
    {
        return Some(JsTimer::Interval { line: line_of(at) });
    }
    let mut longest: Option<JsTimer> = None;
    for (at, _) in code.match_indices("setTimeout(") {
        let open = at + "setTimeout(".len();
        let Some(delay) = call_arguments(&code[open..])
            .get(1)
            .and_then(|a| product(a))
        else {
            continue;
        };
        let longer = match &longest {
            Some(JsTimer::Timeout { delay_ms, .. }) => delay > *delay_ms,
            _ => true,
        };
        if longer {
            longest = Some(JsTimer::Timeout {
                line: line_of(at),
                delay_ms: delay,
            });
        }
    }
    longest
}

/// The top-level arguments of a call whose text starts just after its `(`, up to the matching
/// `)` (strings and nested brackets skipped); empty when it does not close.
fn call_arguments(text: &str) -> Vec<&str> {
    let (mut depth, mut start) = (0usize, 0usize);
    let mut args = Vec::new();
    for (i, c) in super::evidence::outside_strings(text, &['\'', '"', '`']) {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth > 0 => depth -= 1,
            ')' => {
                args.push(text[start..i].trim());
                return args;
            }
            ',' if depth == 0 => {
                args.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    Vec::new()
}

/// A product of number literals (`60 * 1000`, `45_000`, `1e4`) as a whole number.
fn product(text: &str) -> Option<u64> {
    text.split('*').try_fold(1u64, |acc, factor| {
        let factor: f64 = factor.trim().replace('_', "").parse().ok()?;
        (factor.is_finite() && factor >= 0.0).then(|| acc.saturating_mul(factor as u64))
    })
}

/// A timeout (seconds) that lets a timer of `delay_ms` fire: its delay and ten seconds more,
/// within the most a call may have.
fn timer_timeout(delay_ms: u64) -> u64 {
    (delay_ms.div_ceil(1000) + 10).min(MAX_TIMEOUT_SECS)
}

/// The name of a list the code iterates over while appending to it in the loop
/// (`for item in queue:` ... `queue.append(x)`, `for (const v of arr)` ... `arr.push(x)`, a
/// Set's `add`): such a loop reaches no end.
fn grows_while_iterated(code: &str) -> Option<String> {
    let lines: Vec<&str> = code.lines().collect();
    for (at, line) in lines.iter().enumerate() {
        let header = line.trim();
        // `indexed`: an index loop that reads the length again on every test
        // (`for (let i = 0; i < name.length; i++)`, `while i < len(name):`); it never ends
        // when every pass appends, not when only some do (a walk that queues what it has
        // not seen yet).
        let (list, indexed) = if let Some(rest) = header.strip_prefix("for (") {
            // JavaScript: `for (const v of name)`
            match rest
                .split_once(" of ")
                .and_then(|(_, it)| it.split(')').next())
            {
                Some(it) => (Some(it.trim()), false),
                None => (rest.split(';').nth(1).and_then(length_tested), true),
            }
        } else if let Some(rest) = header
            .strip_prefix("while (")
            .or_else(|| header.strip_prefix("while "))
        {
            let test = rest.trim_end_matches(['{', ':', ' ']).trim_end_matches(')');
            (length_tested(test), true)
        } else if let Some(rest) = header.strip_prefix("for ") {
            // Python: `for x in name:`
            let it = rest
                .split_once(" in ")
                .map(|(_, it)| it.trim_end_matches(':').trim());
            (it, false)
        } else {
            (None, false)
        };
        let Some(list) = list.filter(|l| {
            !l.is_empty()
                && l.chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
        }) else {
            continue;
        };
        let depth = indent(line);
        let body: Vec<&str> = lines[at + 1..]
            .iter()
            .take_while(|l| {
                l.trim().is_empty() || indent(l) > depth || l.trim_start().starts_with('}')
            })
            .copied()
            .collect();
        let body_indent = body
            .iter()
            .find(|l| !l.trim().is_empty())
            .map_or(0, |l| indent(l));
        let grows = body.iter().any(|l| {
            // A JavaScript Set or Map iterated with for...of visits what is added to it
            // during the loop too (`.add(`, `.set(` with a new key).
            let appends = [
                ".append(",
                ".extend(",
                ".insert(",
                ".push(",
                ".unshift(",
                ".add(",
                ".set(",
            ]
            .iter()
            .any(|m| l.contains(&format!("{list}{m}")));
            let every_pass = indent(l) == body_indent && !l.trim_start().starts_with("if");
            appends && (!indexed || every_pass)
        });
        if grows {
            return Some(list.to_owned());
        }
    }
    None
}

/// The list whose length a loop test reads (`i < name.length`, `i < len(name)`), with the
/// index counting up to it.
fn length_tested(test: &str) -> Option<&str> {
    let (_, limit) = test.split_once('<')?;
    let limit = limit.trim_start_matches('=').trim();
    limit
        .strip_suffix(".length")
        .or_else(|| limit.strip_prefix("len(")?.strip_suffix(')'))
        .map(str::trim)
}

/// A variable of a loop's condition and the one line of the loop's body that changes it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LoopUpdate {
    /// The variable the condition tests.
    name: String,
    /// The line (1-based) of its update.
    line: usize,
    /// The update as written (`n = n * 2`).
    update: String,
    /// The loop's condition (for [`product_never_zero`]) or the enclosing loop's variable
    /// (for [`zero_first_step`]).
    condition: String,
    outer: String,
}

/// A `while` loop that waits for a variable to reach 0 (`while n != 0`, `while (n > 0)`)
/// while its body only multiplies it by a number of 1 or more (`n = n * 2`, `n *= 3`): a
/// product of nonzero numbers never becomes 0, so the loop never ends.
fn product_never_zero(code: &str) -> Option<LoopUpdate> {
    let lines: Vec<&str> = code.lines().collect();
    for (at, line) in lines.iter().enumerate() {
        let Some(rest) = line.trim().strip_prefix("while") else {
            continue;
        };
        let condition = rest
            .trim()
            .trim_end_matches('{')
            .trim_end_matches(':')
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')')
            .trim();
        // `len(text) > 0` and `text.length > 0` wait on a length, which doubling only grows.
        let measured = condition
            .strip_prefix("len(")
            .and_then(|r| r.split_once(')'))
            .map(|(name, rest)| (name.trim(), rest))
            .or_else(|| {
                let name = leading_name(condition)?;
                condition[name.len()..]
                    .strip_prefix(".length")
                    .map(|rest| (name, rest))
            });
        let Some((name, test)) = measured
            .or_else(|| leading_name(condition).map(|name| (name, &condition[name.len()..])))
        else {
            continue;
        };
        if leading_name(name) != Some(name) {
            continue;
        }
        let test = test.trim().replace(' ', "");
        if !["!=0", "!==0", ">0"].contains(&test.as_str()) {
            continue;
        }
        let body = numbered_block(&lines, at);
        let updates = assignments_of(&body, name);
        let [(k, update)] = updates.as_slice() else {
            continue;
        };
        let rest = update.strip_prefix(name).map(str::trim);
        let factor = rest
            .and_then(|r| {
                r.strip_prefix("*=").or_else(|| {
                    r.strip_prefix('=')
                        .map(str::trim)
                        .and_then(|r| r.strip_prefix(name))
                        .and_then(|r| r.trim().strip_prefix('*'))
                })
            })
            .map(|f| f.trim().trim_end_matches(';').trim());
        // `x = x + x` and `x += x` double it.
        let doubled = rest.is_some_and(|r| {
            let r = r.trim_end_matches(';').replace(' ', "");
            r == format!("+={name}") || r == format!("={name}+{name}")
        });
        if doubled
            || factor
                .and_then(|f| f.parse::<f64>().ok())
                .is_some_and(|f| f >= 1.0)
        {
            return Some(LoopUpdate {
                name: name.to_owned(),
                line: k + 1,
                update: update.trim_end_matches(';').to_owned(),
                condition: condition.to_owned(),
                outer: String::new(),
            });
        }
    }
    None
}

/// A `while` loop inside `for i in range(n)` (or `for (let i = 0; ...)`) whose condition
/// variable only grows by the outer loop's variable (`total += i`): on the first pass `i` is 0,
/// so the variable never changes and the inner loop never ends.
fn zero_first_step(code: &str) -> Option<LoopUpdate> {
    let lines: Vec<&str> = code.lines().collect();
    for (at, line) in lines.iter().enumerate() {
        let header = line.trim();
        let outer = if let Some(rest) = header.strip_prefix("for (") {
            // JavaScript: `for (let i = 0; ...)`.
            rest.split(';').next().and_then(|init| {
                let init = init.trim_start_matches("let ").trim_start_matches("var ");
                init.split_once('=')
                    .filter(|(_, v)| v.trim() == "0")
                    .map(|(var, _)| var.trim())
            })
        } else if let Some(rest) = header.strip_prefix("for ") {
            // Python: `for i in range(n):` or `range(0, n)`.
            rest.split_once(" in range(").and_then(|(var, args)| {
                let first = args.split([',', ')']).next()?.trim();
                let starts_at_zero = !args.contains(',') || first == "0";
                starts_at_zero.then(|| var.trim())
            })
        } else {
            None
        };
        let Some(outer) = outer.filter(|o| leading_name(o) == Some(*o)) else {
            continue;
        };
        let body = numbered_block(&lines, at);
        for (w, inner) in &body {
            let Some(rest) = inner.trim().strip_prefix("while") else {
                continue;
            };
            let condition = rest.trim().trim_start_matches('(');
            let Some(name) = leading_name(condition) else {
                continue;
            };
            let inner_body = numbered_block(&lines, *w);
            let updates = assignments_of(&inner_body, name);
            let [(k, update)] = updates.as_slice() else {
                continue;
            };
            let step = update
                .strip_prefix(name)
                .map(str::trim)
                .and_then(|r| r.strip_prefix("+=").or_else(|| r.strip_prefix("-=")))
                .map(|r| r.trim().trim_end_matches(';').trim());
            if step == Some(outer) {
                return Some(LoopUpdate {
                    name: name.to_owned(),
                    line: k + 1,
                    update: update.trim_end_matches(';').to_owned(),
                    condition: String::new(),
                    outer: outer.to_owned(),
                });
            }
        }
    }
    None
}

/// Trial division by every number below n: a loop `for d in range(2, n)` (`for (let d = 2;
/// d < n; d++)`) whose body tests `n % d`, whatever the names. Dividing up to the square root
/// is enough, so the loop does √n times too much work. The divisor, n and the loop's line.
fn trial_division_to_n(code: &str, python: bool) -> Option<(String, String, usize)> {
    let is_name = |s: &str| {
        !s.is_empty()
            && s.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !s.starts_with(|c: char| c.is_ascii_digit())
    };
    let lines: Vec<&str> = code.lines().collect();
    for (at, line) in lines.iter().enumerate() {
        let squeezed = line.replace(' ', "");
        let (divisor, n) = if python {
            let Some(rest) = squeezed.strip_prefix("for") else {
                continue;
            };
            let Some((var, range)) = rest.split_once("inrange(2,") else {
                continue;
            };
            let Some(n) = range.strip_suffix("):") else {
                continue;
            };
            (var.to_owned(), n.to_owned())
        } else {
            let Some(rest) = squeezed
                .strip_prefix("for(let")
                .or_else(|| squeezed.strip_prefix("for(var"))
            else {
                continue;
            };
            let Some((var, rest)) = rest.split_once("=2;") else {
                continue;
            };
            let Some(n) = rest
                .strip_prefix(&format!("{var}<"))
                .and_then(|r| r.split(';').next())
            else {
                continue;
            };
            (var.to_owned(), n.to_owned())
        };
        if !is_name(&divisor) || !is_name(&n) {
            continue;
        }
        let depth = indent(line);
        let tests = lines[at + 1..]
            .iter()
            .take_while(|l| l.trim().is_empty() || indent(l) > depth || l.trim() == "}")
            .chain(std::iter::once(line))
            .any(|l| l.replace(' ', "").contains(&format!("{n}%{divisor}")));
        if tests {
            return Some((divisor, n, at + 1));
        }
    }
    None
}

/// A bisection whose bound is set to the midpoint itself (`lo = mid`).
#[derive(Debug, PartialEq, Eq)]
struct StuckBisection {
    /// The bound assigned the midpoint (`lo`).
    bound: String,
    /// The midpoint's name (`mid`).
    mid: String,
    /// The line (1-based) of `bound = mid`.
    line: usize,
    /// The loop's test, as written (`lo < hi`).
    test: String,
    /// What the bound should be set to instead (`mid + 1`).
    next: String,
}

/// A bisection that can stop shrinking: `mid = (lo + hi) // 2` (`Math.floor((lo + hi) / 2)`,
/// `(lo + hi) >> 1`, `lo + (hi - lo) // 2`) with a loop tested `lo < hi` or `lo <= hi`, and a
/// body that sets the low bound to the midpoint itself (`lo = mid`): when hi is lo + 1 the
/// midpoint rounds down to lo, so nothing changes again. Under `lo <= hi`, `hi = mid` sticks
/// too (when lo == hi). The names are the code's own, whatever they are (`left`, `start`, `a`).
fn stuck_bisection(code: &str) -> Option<StuckBisection> {
    let lines: Vec<&str> = code.lines().collect();
    let ident = |s: &str| {
        let s = s.trim();
        (!s.is_empty()
            && s.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !s.starts_with(|c: char| c.is_ascii_digit()))
        .then(|| s.to_owned())
    };
    for (at, line) in lines.iter().enumerate() {
        let text = line.trim().trim_end_matches(';');
        let text = ["let ", "const ", "var "]
            .iter()
            .find_map(|k| text.strip_prefix(k))
            .unwrap_or(text);
        let Some((mid, rhs)) = text.split_once(" = ") else {
            continue;
        };
        let Some(mid) = ident(mid) else { continue };
        let rhs = rhs.replace(' ', "");
        if !(rhs.contains("//2") || rhs.contains("/2)") || rhs.contains(">>1")) {
            continue;
        }
        // The two bounds, from the innermost parentheses: `(lo+hi)`, or `lo+(hi-lo)`.
        let Some((lo, hi)) = rhs.match_indices('(').find_map(|(p, _)| {
            let inner = rhs[p + 1..].split(')').next()?;
            if inner.contains('(') {
                return None;
            }
            if let Some((a, b)) = inner.split_once('+') {
                return Some((ident(a)?, ident(b)?));
            }
            let (b, a) = inner.split_once('-')?;
            let before = rhs[..p].strip_suffix('+')?;
            before.ends_with(a).then(|| Some((ident(a)?, ident(b)?)))?
        }) else {
            continue;
        };
        // The loop around it, tested `lo < hi` or `lo <= hi`.
        let depth = indent(line);
        let Some(header) = lines[..at]
            .iter()
            .rev()
            .find(|l| indent(l) < depth && !l.trim().is_empty())
        else {
            continue;
        };
        let squeezed = header.replace(' ', "");
        let inclusive = squeezed.contains(&format!("{lo}<={hi}"));
        if !(inclusive || squeezed.contains(&format!("{lo}<{hi}")))
            || !squeezed.trim_start().starts_with("while")
        {
            continue;
        }
        let test = if inclusive {
            format!("{lo} <= {hi}")
        } else {
            format!("{lo} < {hi}")
        };
        let assigned = |bound: &str| {
            lines[at + 1..]
                .iter()
                .take_while(|l| l.trim().is_empty() || indent(l) >= depth || l.trim() == "}")
                .position(|l| {
                    // `lo = mid` as a statement of its own (`else lo = mid;`, `if ok: lo = mid`),
                    // not `lo = mid + 1` nor a comparison.
                    let mut squeezed = (*l).to_owned();
                    while squeezed.contains(" =") || squeezed.contains("= ") {
                        squeezed = squeezed.replace(" =", "=").replace("= ", "=");
                    }
                    let statement = format!("{bound}={mid}");
                    squeezed.match_indices(&statement).any(|(p, _)| {
                        let before = squeezed[..p].chars().next_back();
                        let after = squeezed[p + statement.len()..].chars().next();
                        before.is_none_or(|c| !(c.is_alphanumeric() || "_=<>!.".contains(c)))
                            && after.is_none_or(|c| c == ';' || c == '}')
                    })
                })
                .map(|k| at + 1 + k + 1)
        };
        if let Some(found) = assigned(&lo) {
            return Some(StuckBisection {
                bound: lo,
                next: format!("{mid} + 1"),
                mid,
                line: found,
                test,
            });
        }
        if inclusive && let Some(found) = assigned(&hi) {
            return Some(StuckBisection {
                bound: hi,
                next: format!("{mid} - 1"),
                mid,
                line: found,
                test,
            });
        }
    }
    None
}

/// The queue (or stack) of a graph walk that never remembers where it has been: a
/// `while queue:` / `while (queue.length)` loop whose body refills the same list, in code that
/// keeps no `visited` or `seen` record. On a graph with a cycle it never ends.
fn refilled_without_visited(code: &str) -> Option<String> {
    let lower = code.to_lowercase();
    if ["visited", "seen", "discovered", "explored"]
        .iter()
        .any(|w| lower.contains(w))
    {
        return None;
    }
    let is_name = |n: &str| {
        !n.is_empty()
            && n.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !n.starts_with(|c: char| c.is_ascii_digit())
    };
    let lines: Vec<&str> = code.lines().collect();
    lines.iter().enumerate().find_map(|(at, line)| {
        let rest = line.trim().strip_prefix("while")?;
        // Python `while queue:` / `while len(queue) > 0:`; JavaScript `while (queue.length)`.
        let condition = rest.trim().trim_end_matches(['{', ':']).trim();
        let condition = condition.trim_start_matches('(').trim_end_matches(')');
        let name = condition
            .strip_prefix("len(")
            .map_or(condition, |r| r.split(')').next().unwrap_or(r));
        let name = name.split(".length").next().unwrap_or(name).trim();
        if !is_name(name) || matches!(name, "True" | "true" | "1") {
            return None;
        }
        let refilled = lines[at + 1..].iter().any(|l| {
            [".append(", ".extend(", ".push(", ".unshift(", ".insert("]
                .iter()
                .any(|m| l.contains(&format!("{name}{m}")))
        });
        let taken = lines[at + 1..].iter().any(|l| {
            [".pop(", ".popleft(", ".shift("]
                .iter()
                .any(|m| l.contains(&format!("{name}{m}")))
        });
        (refilled && taken).then(|| name.to_owned())
    })
}

/// A numeric literal smaller than doubles can resolve (`1e-20`, `1e-16`), in code with a
/// `while` loop: a convergence test against it may never pass.
fn tolerance_below_float_precision(code: &str, language: Language) -> Option<String> {
    if !code.lines().any(|l| l.trim_start().starts_with("while")) {
        return None;
    }
    let src = crate::scan::Source::new(code, language);
    src.tokens
        .iter()
        .filter(|t| t.kind == crate::scan::Kind::Number)
        .map(|t| t.text)
        .find(|text| {
            let lower = text.to_lowercase();
            lower.contains("e-")
                && lower
                    .replace('_', "")
                    .parse::<f64>()
                    .is_ok_and(|v| v > 0.0 && v < 1e-15)
        })
        .map(str::to_owned)
}

#[cfg(test)]
mod loop_update_tests {
    use super::*;

    #[test]
    fn a_product_never_reaches_zero() {
        let js = "let n = 1;\nlet steps = 0;\nwhile (n != 0) {\n  n = n * 2;\n  steps++;\n}";
        let found = product_never_zero(js).expect("doubling never reaches 0");
        assert_eq!((found.name.as_str(), found.line), ("n", 4));
        assert_eq!(found.update, "n = n * 2");
        let py = "x = 3\nwhile x > 0:\n    x *= 2\n";
        assert_eq!(product_never_zero(py).map(|p| p.line), Some(3));
        // Halving, or a second update, can end it.
        assert_eq!(product_never_zero("while n != 0:\n    n = n // 2\n"), None);
        assert_eq!(
            product_never_zero("while n > 0:\n    n *= 2\n    n -= 100\n"),
            None
        );
        assert_eq!(product_never_zero("while n != 0:\n    n *= 0.5\n"), None);
    }

    #[test]
    fn a_step_of_zero_on_the_first_pass_never_moves() {
        let py = "total = 0\nfor i in range(10):\n    while total < 100:\n        total += i\nprint(total)";
        let found = zero_first_step(py).expect("i is 0 on the first pass");
        assert_eq!((found.name.as_str(), found.outer.as_str()), ("total", "i"));
        assert_eq!(found.line, 4);
        let js =
            "let t = 0;\nfor (let i = 0; i < 5; i++) {\n  while (t < 50) {\n    t += i;\n  }\n}";
        assert_eq!(zero_first_step(js).map(|z| z.line), Some(4));
        // A range from 1, or a step that is not the outer variable, moves.
        assert_eq!(
            zero_first_step("for i in range(1, 10):\n    while t < 100:\n        t += i\n"),
            None
        );
        assert_eq!(
            zero_first_step("for i in range(10):\n    while t < 100:\n        t += 1\n"),
            None
        );
    }

    #[test]
    fn trial_division_by_every_number_below_n() {
        let py = "def check(num):\n    for k in range(2, num):\n        if num % k == 0:\n            return False\n    return True\n";
        assert_eq!(
            trial_division_to_n(py, true),
            Some(("k".into(), "num".into(), 2))
        );
        let js = "function isP(x) {\n  for (let f = 2; f < x; f++) {\n    if (x % f === 0) return false;\n  }\n  return x > 1;\n}";
        assert_eq!(
            trial_division_to_n(js, false),
            Some(("f".into(), "x".into(), 2))
        );
        let sqrt = "for d in range(2, math.isqrt(n) + 1):\n    if n % d == 0:\n        break\n";
        assert_eq!(trial_division_to_n(sqrt, true), None);
    }

    #[test]
    fn a_bound_set_to_the_midpoint_stops_the_bisection() {
        let py = "a, b = 0, 100\nwhile a < b:\n    m = (a + b) // 2\n    if m * m < 2000:\n        a = m\n    else:\n        b = m\n";
        let found = stuck_bisection(py).expect("a = m sticks");
        assert_eq!((found.bound.as_str(), found.line), ("a", 5));
        assert_eq!(
            (found.test.as_str(), found.next.as_str()),
            ("a < b", "m + 1")
        );
        let js = "let start = 0, end = xs.length - 1;\nwhile (start <= end) {\n  const middle = Math.floor(start + (end - start) / 2);\n  if (xs[middle] < t) start = middle + 1;\n  else end = middle;\n}";
        let found = stuck_bisection(js).expect("end = middle sticks under <=");
        assert_eq!(
            (found.bound.as_str(), found.next.as_str()),
            ("end", "middle - 1")
        );
        // The usual forms move past the midpoint.
        let fine = "while lo < hi:\n    mid = (lo + hi) // 2\n    if ok(mid):\n        hi = mid\n    else:\n        lo = mid + 1\n";
        assert_eq!(stuck_bisection(fine), None);
        let gap = "while hi - lo > 1:\n    mid = (lo + hi) // 2\n    if ok(mid):\n        hi = mid\n    else:\n        lo = mid\n";
        assert_eq!(stuck_bisection(gap), None);
    }
}

#[cfg(test)]
mod list_lookup_tests {
    use sandbox_protocol::Language;

    use super::list_lookup_in_loop;
    use crate::scan::{Source, loops};

    fn found(code: &str, language: Language) -> Option<(String, usize, u32)> {
        let src = Source::new(code, language);
        list_lookup_in_loop(code, &loops(&src)).map(|f| (f.test, f.line, f.loop_line))
    }

    #[test]
    fn a_list_searched_in_a_long_loop() {
        let py = "seen = []\nfor i in range(100_000):\n    k = i % 7\n    if k in seen:\n        continue\n    seen.append(k)\n";
        assert_eq!(
            found(py, Language::Python),
            Some(("k in seen".into(), 4, 2))
        );
        let counted = "xs = [w for w in text.split()]\nfor w in xs:\n    n = xs.count(w)\n";
        assert_eq!(
            found(counted, Language::Python).map(|f| f.0),
            Some("xs.count(w)".into())
        );
        let js = "const ids = [];\nfor (const r of rows) {\n  if (!ids.includes(r.id)) ids.push(r.id);\n}";
        assert_eq!(
            found(js, Language::JavaScript).map(|f| f.0),
            Some("ids.includes(r.id)".into())
        );
        // A list searched while it is walked.
        let dupes = "dupes = [x for x in ids if ids.count(x) > 1]\n";
        assert_eq!(
            found(dupes, Language::Python).map(|f| f.0),
            Some("ids.count(x)".into())
        );
        let unique = "const u = names.filter((n, i) => names.indexOf(n) === i);";
        assert_eq!(
            found(unique, Language::JavaScript).map(|f| f.0),
            Some("names.indexOf(n)".into())
        );
        // A few constant items, a short loop, or a set: no quadratic search.
        for cheap in [
            "vowels = ['a', 'e']\nfor ch in text:\n    if ch in vowels:\n        n += 1\n",
            "seen = []\nfor i in range(10):\n    if i in seen:\n        pass\n    seen.append(i)\n",
            "seen = set()\nfor i in data:\n    if i in seen:\n        pass\n    seen.add(i)\n",
            "total = sum(x for x in xs)\n",
            "stop = {'a', 'the'}\nfor s in stop:\n    pass\nfor w in words:\n    if w in stop:\n        n += 1\n",
            "for row in rows:\n    for cell in row:\n        pass\n",
        ] {
            assert_eq!(found(cheap, Language::Python), None, "{cheap}");
        }
    }
}

#[cfg(test)]
mod timer_tests {
    use super::*;

    #[test]
    fn the_timer_that_waits_longest_is_found() {
        let code = "setTimeout(() => log('a'), 100);\nsetTimeout(() => { f(1, 2); }, 45_000);\n";
        assert_eq!(
            js_timer(code),
            Some(JsTimer::Timeout {
                line: 2,
                delay_ms: 45_000
            })
        );
        let code = "await new Promise(resolve => setTimeout(resolve, 60 * 1000));";
        assert_eq!(
            js_timer(code),
            Some(JsTimer::Timeout {
                line: 1,
                delay_ms: 60_000
            })
        );
        // A delay that is not a number is not guessed.
        assert_eq!(js_timer("setTimeout(f, delay)"), None);
        assert_eq!(js_timer("setTimeout(f, ')', 5)"), None);
        assert_eq!(js_timer("setTimeout(f"), None);
    }

    #[test]
    fn an_interval_nobody_clears_repeats_until_the_timeout() {
        let code = "let n = 0;\nsetInterval(() => n++, 1000);";
        assert_eq!(js_timer(code), Some(JsTimer::Interval { line: 2 }));
        let cleared = "const id = setInterval(() => { if (++n > 3) clearInterval(id); }, 10);";
        assert_eq!(js_timer(cleared), None);
    }

    #[test]
    fn a_timer_gets_a_timeout_it_fits_in() {
        assert_eq!(timer_timeout(45_000), 55);
        assert_eq!(timer_timeout(1), 11);
        assert_eq!(timer_timeout(u64::MAX / 2), MAX_TIMEOUT_SECS);
        assert_eq!(product("1e4"), Some(10_000));
        assert_eq!(product("x * 2"), None);
    }
}

#[cfg(test)]
mod loop_cause_tests {
    use sandbox_protocol::Language::Python;

    use super::{refilled_without_visited, tolerance_below_float_precision};

    #[test]
    fn graph_walks_without_a_visited_set() {
        let bfs = "queue = ['A']\nwhile queue:\n    node = queue.pop(0)\n    queue.extend(g[node])";
        assert_eq!(refilled_without_visited(bfs).as_deref(), Some("queue"));
        let js = "const stack = [0];\nwhile (stack.length) {\n  const n = stack.pop();\n  stack.push(...g[n]);\n}";
        assert_eq!(refilled_without_visited(js).as_deref(), Some("stack"));
        let with_seen = format!("{bfs}\nseen = set()");
        assert_eq!(refilled_without_visited(&with_seen), None);
        // A work list that only shrinks is no graph walk.
        assert_eq!(
            refilled_without_visited("xs = [1]\nwhile xs:\n    xs.pop()"),
            None
        );
    }

    #[test]
    fn tolerances_below_double_precision() {
        let newton = "def f(x, tol=1e-20):\n    g = x\n    while abs(g * g - x) > tol:\n        g = (g + x / g) / 2";
        assert_eq!(
            tolerance_below_float_precision(newton, Python).as_deref(),
            Some("1e-20")
        );
        assert_eq!(
            tolerance_below_float_precision(&newton.replace("1e-20", "1e-9"), Python),
            None
        );
        // No loop: a tiny constant is just a constant.
        assert_eq!(tolerance_below_float_precision("eps = 1e-30", Python), None);
    }
}
