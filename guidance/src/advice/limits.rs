//! Advice at the limits of a call's CPU time, wall time and output: `out_of_fuel` (the measured
//! cost of the imports, the loops that did the work, and a bigger budget when more fuel can
//! help), `timeout` (endless loops, sleeps, blocking calls, a longer timeout) and
//! `output_limit` (a file instead of stdout). Memory and stack are in `memory`.

use sandbox_protocol::FLAVORS;
use serde_json::json;

use super::super::analyze::HEAVY_IMPORT_FUEL;
use super::super::docs::{FUEL, SESSIONS, WORKSPACE};
use super::super::{
    MAX_SUGGESTED_FUEL, MAX_TIMEOUT_SECS, NextCall, clip, derived_session_id, fmt_bytes, fmt_fuel,
    fmt_secs, nice_round_up,
};
use super::draft::Draft;

impl Draft<'_, '_> {
    pub(super) fn out_of_fuel(&mut self) {
        let f = self.f;
        self.summary = format!(
            "The execution ran out of fuel: its budget is {} per call (at least {:.1} s of CPU on {}; {} counted) and it was interrupted{}.",
            fmt_fuel(f.fuel_budget),
            f.fuel_budget as f64 / f.runtime.fuel_per_second() as f64,
            f.runtime,
            fmt_fuel(f.fuel_consumed),
            if f.state_lost {
                "; the interpreter was restarted, so variables from earlier calls are gone (files in /app remain)"
            } else {
                "; the session state is intact"
            }
        );
        self.restart_explained = true;
        self.doc(FUEL);
        self.doc(SESSIONS);
        let endless = self.first_endless_loop();
        if let Some((header, line)) = &endless {
            self.fix(format!(
                "`{header}` at line {line} has no break/return, so it never ends: add an exit condition. More fuel would only delay the same failure."
            ));
        }
        self.heavy_imports_fix();
        self.unmeasured_imports_fix();
        self.biggest_loop_fix();
        // More fuel cannot help a loop that never ends.
        if endless.is_none() {
            self.bigger_fuel_budget();
        }
        self.fix("Split long work into several execute_code calls in the same session: fuel is counted per call, and variables persist between calls.");
    }

    /// The header and line of the first loop that never ends.
    fn first_endless_loop(&self) -> Option<(String, u32)> {
        self.code
            .loops
            .iter()
            .find(|l| l.endless)
            .map(|l| (l.header.clone(), l.line))
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
                format!(
                    "{n} {} ({:.0}% of the budget)",
                    fmt_fuel(*fuel),
                    *fuel as f64 / budget.max(1) as f64 * 100.0
                )
            })
            .collect();
        let names: Vec<&str> = heavy.iter().take(4).map(|(n, _)| n.as_str()).collect();
        self.fix(format!(
            "The first import is expensive: {} (measured in a fresh session). Run `import {}` alone in one call, then the rest in the next: every call gets the full budget and imported modules stay loaded in the session.",
            list.join(", "),
            names.join(", ")
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
            self.fix(format!(
                "Third-party imports ({}) can take billions of fuel the first time: import them alone in a first call.",
                unmeasured.join(", ")
            ));
        }
    }

    /// The loop with the most work (data-dependent levels first, then iterations).
    fn biggest_loop_fix(&mut self) {
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
        let size = if unknown == 0 {
            format!("{} iterations", fmt_fuel(total as u64))
        } else {
            "a data-dependent number of iterations".to_owned()
        };
        self.fix(format!(
            "The loop `{}` at line {line} ({size}{}) does most of the work: process the data in chunks over several calls (keep the running result in a variable or a file in /app), or precompute lookups (dict/set) to avoid inner loops.",
            clip(&header, 60),
            if depth > 1 { format!(", nested {depth} deep") } else { String::new() }
        ));
    }

    /// A new session with three times the fuel this call used, up to the largest budget
    /// guidance proposes.
    fn bigger_fuel_budget(&mut self) {
        let (budget, consumed) = (self.f.fuel_budget, self.f.fuel_consumed);
        let suggested =
            nice_round_up(consumed.max(budget).max(1).saturating_mul(3)).min(MAX_SUGGESTED_FUEL);
        if suggested <= budget {
            self.fix(format!(
                "The budget is already at the maximum guidance proposes ({}): split the work across several calls.",
                fmt_fuel(MAX_SUGGESTED_FUEL)
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
        const EMPTY: &str = "A new session starts empty: re-run setup code and recreate files, since /app is per session.";
        // A flavor's executions get fuel that lasts until their timeout: without a fuel_budget
        // (a fixed cap) the timeout is what stops the code, softly.
        if let Some(flavor) = FLAVORS.iter().find(|fl| self.flavor_fuel(fl) >= suggested) {
            let (name, fuel) = (flavor.name(), fmt_fuel(self.flavor_fuel(flavor)));
            let timeout = fmt_secs(flavor.timeout_secs as f64);
            self.fix(format!(
                "Raise the budget: create_session {{{}, session_id: \"{id}\", flavor: \"{name}\"}} with no fuel_budget: each call then gets {fuel} fuel, enough to run until its {timeout} timeout (a fuel_budget is a fixed cap: fuel_budget: {suggested} gives {} exactly). Re-run there. {EMPTY}",
                self.new_session_text(),
                fmt_fuel(suggested),
            ));
            self.next = Some(NextCall::new(
                "create_session",
                self.new_session_args(json!({"session_id": id, "flavor": name})),
                format!(
                    "a {name} session whose calls get {fuel} fuel (over 3x what this call used) and stop at their timeout; then run the code there with execute_code"
                ),
            ));
            return;
        }
        self.fix(format!(
            "Raise the budget: create_session {{{}, session_id: \"{id}\", fuel_budget: {suggested}}} ({}), then re-run there. {EMPTY}",
            self.new_session_text(),
            fmt_fuel(suggested),
        ));
        self.next = Some(NextCall::new(
            "create_session",
            self.new_session_args(json!({"session_id": id, "fuel_budget": suggested})),
            format!(
                "a session with {} fuel per call (3x what this call used); then run the code there with execute_code",
                fmt_fuel(suggested)
            ),
        ));
    }

    pub(super) fn timeout(&mut self) {
        let f = self.f;
        let t = f.timeout_secs;
        self.summary = if f.state_lost {
            format!(
                "The execution hit its {} timeout and ignored the interrupt, so it was stopped by force: variables, functions and imports from earlier calls are gone; files in /app remain.",
                fmt_secs(t)
            )
        } else {
            format!(
                "The execution hit its {} timeout and was interrupted; the session kept its state (variables assigned before the interrupt hold partial results).",
                fmt_secs(t)
            )
        };
        self.restart_explained = true;
        self.doc(FUEL);
        self.doc(SESSIONS);
        let endless = self.first_endless_loop();
        if let Some((header, line)) = &endless {
            self.fix(format!(
                "`{header}` at line {line} never ends (no break/return): add an exit condition; a longer timeout will not help."
            ));
        }
        let sleep = self.first_sleep_line();
        if let Some(line) = sleep {
            self.fix(format!(
                "The code sleeps (line {line}); sleeping counts against the wall-clock timeout. Remove or shorten the waits: nothing outside the sandbox changes while you wait."
            ));
        }
        if f.state_lost {
            self.fix("Re-run your setup code (imports, data loading) before continuing: the interpreter is fresh.");
        }
        let longer = ((t * 2.0).ceil() as u64).clamp(60, MAX_TIMEOUT_SECS);
        if endless.is_none() && (t as u64) < MAX_TIMEOUT_SECS {
            self.fix(format!(
                "If the work is simply long, pass a longer timeout: execute_code {{..., timeout: {longer}}} (at most {MAX_TIMEOUT_SECS} s), or create_session with flavor \"{}\" ({} s default) or \"{}\" ({} s).",
                FLAVORS[1].name(),
                FLAVORS[1].timeout_secs,
                FLAVORS[2].name(),
                FLAVORS[2].timeout_secs
            ));
            self.next = self.rerun(
                Some(longer),
                &format!("the same code with a {longer} s timeout"),
            );
        }
        self.fix("Process the data in chunks across several calls and save progress (a variable or a file in /app) so an interrupted call does not lose everything.");
        if f.fuel_budget > 0
            && (f.fuel_consumed as f64) < 0.05 * f.fuel_budget as f64
            && sleep.is_none()
        {
            self.fix(format!(
                "The call used only {} fuel in {t:.0} s, so it mostly waited rather than computed: look for blocking calls (input(), reading a pipe, waiting on a lock or a thread).",
                fmt_fuel(f.fuel_consumed)
            ));
        }
    }

    /// The line of the first call that sleeps (Python or JavaScript).
    fn first_sleep_line(&self) -> Option<u32> {
        self.code
            .calls
            .iter()
            .find(|(c, _, _)| {
                matches!(
                    c.as_str(),
                    "time.sleep"
                        | "sleep"
                        | "asyncio.sleep"
                        | "os.sleep"
                        | "setTimeout"
                        | "os.setTimeout"
                )
            })
            .map(|(_, line, _)| *line)
    }

    pub(super) fn output_limit(&mut self) {
        self.summary = "The output exceeded the session's cap and was cut.".to_owned();
        self.doc(WORKSPACE);
        self.doc(FUEL);
        if self.python() {
            self.fix("Write the full output to a file and read it back in parts: `open('output.txt', 'w').write(text)`, then `print(open('output.txt').read()[:20000])` in the next call.");
            self.fix("Print a summary instead of everything: counts, `rows[:20]`, totals; `pprint.pformat(obj)[:5000]` for big structures.");
        } else {
            self.fix("Write the full output to a file and read it back in parts: `writeText('output.txt', text)`, then `readText('output.txt').slice(0, 20000)` in the next call.");
            self.fix("Log a summary instead of everything: counts, `rows.slice(0, 20)`, totals.");
        }
        let cap = |i: usize| fmt_bytes(FLAVORS[i].output_bytes as u64);
        self.fix(format!(
            "Larger flavors have larger output caps: {} ({}) and {} ({}) instead of {}.",
            cap(1),
            FLAVORS[1].name(),
            cap(2),
            FLAVORS[2].name(),
            cap(0)
        ));
    }
}
