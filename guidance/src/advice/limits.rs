//! Advice at the limits of a call's CPU time, wall time and output: `out_of_fuel` (the measured
//! cost of the imports, the loops that did the work, and a bigger budget when more fuel can
//! help), `timeout` (endless loops, sleeps, blocking calls, a longer timeout) and
//! `output_limit` (a file instead of stdout). Memory and stack are in `memory`. The words live
//! in `words/limits.toml`.

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
            ];
            self.endless_loop_fix(ids, endless);
        }
        // A loop the code shows can never end gets no bigger budget either.
        let never_ends = self.loop_cause_fix() || endless.is_some() || retries;
        self.branching_recursion_fix();
        self.heavy_imports_fix();
        self.unmeasured_imports_fix();
        self.biggest_loop_fix();
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
            && let Some((test, name)) = stops::shell_loop_unchanged(self.f.code)
        {
            self.fix(say!("known_loop.shell_unchanged", test = test, name = name));
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
        never_ends
    }

    /// A Python loop that retries behind an `except` catching everything: first, since the
    /// loop's own exit (or its absence) is not what keeps it going. True when found.
    fn swallowed_retry_fix(&mut self) -> bool {
        if !self.python() {
            return false;
        }
        let Some((clause, line)) = self.loop_text().swallowed_retry() else {
            return false;
        };
        self.fix(say!(
            "known_loop.swallowed_retry",
            clause = clause,
            line = line
        ));
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
        let found = self.code.loops.iter().find_map(|l| {
            let big = l.bound.is_some_and(|b| b >= 10_000.0) || l.total_known >= 10_000.0;
            let printed = self.code.calls.iter().find(|(call, line, _)| {
                prints.contains(call) && *line > l.line && *line <= l.last_line
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
        if let Some((name, line)) = self.code.branching.first().cloned() {
            let id = if self.python() {
                "branching_recursion.python"
            } else {
                "branching_recursion.javascript"
            };
            self.fix(say!(id, name = name, line = line));
        }
    }

    /// For Python, the next call is the same code with the branching function memoised
    /// (`@functools.cache` above its `def`): the one change that makes it finish.
    fn memoised_rerun(&mut self) {
        let Some((name, line)) = self.code.branching.first().cloned() else {
            return;
        };
        if !self.python() {
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
    fn endless_loop_fix(&mut self, ids: [&str; 4], endless: &EndlessLoop) {
        let [no_exit, unchanged, wrong_direction, assignment] = ids;
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
        let retries = self.swallowed_retry_fix();
        let endless = self.first_endless_loop();
        if let Some(endless) = &endless {
            let ids = [
                "timeout.endless_loop",
                "timeout.unchanged_condition",
                "timeout.wrong_direction",
                "timeout.assignment_in_condition",
            ];
            self.endless_loop_fix(ids, endless);
        }
        // A loop the code shows can never end gets no longer timeout either.
        let never_ends = self.loop_cause_fix() || endless.is_some() || retries;
        self.branching_recursion_fix();
        if !never_ends {
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
        if let Some(line) = sleep.filter(|_| !timer_fixed) {
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
/// (`for item in queue:` ... `queue.append(x)`, `for (const v of arr)` ... `arr.push(x)`):
/// such a loop reaches no end.
fn grows_while_iterated(code: &str) -> Option<String> {
    let lines: Vec<&str> = code.lines().collect();
    for (at, line) in lines.iter().enumerate() {
        let header = line.trim();
        let list = if let Some(rest) = header.strip_prefix("for (") {
            // JavaScript: `for (const v of name)`
            rest.split_once(" of ")
                .and_then(|(_, it)| it.split(')').next())
                .map(str::trim)
        } else if let Some(rest) = header.strip_prefix("for ") {
            // Python: `for x in name:`
            rest.split_once(" in ")
                .map(|(_, it)| it.trim_end_matches(':').trim())
        } else {
            None
        };
        let Some(list) = list.filter(|l| {
            !l.is_empty()
                && l.chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
        }) else {
            continue;
        };
        let depth = indent(line);
        let grows = lines[at + 1..]
            .iter()
            .take_while(|l| {
                l.trim().is_empty() || indent(l) > depth || l.trim_start().starts_with('}')
            })
            .any(|l| {
                [".append(", ".extend(", ".insert(", ".push(", ".unshift("]
                    .iter()
                    .any(|m| l.contains(&format!("{list}{m}")))
            });
        if grows {
            return Some(list.to_owned());
        }
    }
    None
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
