//! Advice for a failed execution ("results that teach"): at least two concrete fixes that name
//! the module, path, line or numbers involved, the documentation pages to read, and when one
//! exists the tool call to make next, with valid arguments.
//!
//! The advice is derived from the error type and the raw evidence (exception name and message,
//! stderr, the code itself), so it also catches what the error type alone hides: a
//! `runtime_error` that is really a path outside the sandbox, a QuickJS `[value, error]` pair
//! used as a value, or a name lost in an interpreter restart.

use sandbox_protocol::Language;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

use super::analyze::{
    CodeFacts, HEAVY_IMPORT_FUEL, PathClass, classify_path, looks_like_other_language,
};
use super::docs::{ERRORS, FUEL, JAVASCRIPT, PYTHON, SESSIONS, WORKSPACE};
use super::imports::ImportFuelTable;
use super::{
    FLAVORS, MAX_ECHOED_CODE, MAX_MEMORY_BYTES, MAX_SUGGESTED_FUEL, MAX_TIMEOUT_SECS, NextCall,
    clip, derived_session_id, fmt_bytes, fmt_fuel, modules, nice_round_up,
};

/// What is known about a failed execution.
#[derive(Debug, Clone, Copy)]
pub struct ErrorFacts<'a> {
    pub language: Language,
    /// syntax_error, runtime_error, missing_module, timeout, cancelled, out_of_fuel,
    /// out_of_memory, stack_overflow, output_limit, path_restriction, disk_quota,
    /// worker_crashed, resources_exhausted, invalid_session, system_error.
    pub error_type: &'a str,
    /// Exception class or JS error name.
    pub error_name: Option<&'a str>,
    pub error_message: Option<&'a str>,
    pub stderr: &'a str,
    pub code: &'a str,
    pub session_id: &'a str,
    pub fuel_consumed: u64,
    pub fuel_budget: u64,
    /// Interpreter memory after the execution.
    pub memory_bytes: u64,
    /// The session's memory cap.
    pub memory_cap: u64,
    /// The timeout this execution ran under.
    pub timeout_secs: f64,
    pub stdout_truncated: bool,
    /// True when variables, functions and imports from earlier calls are gone.
    pub state_lost: bool,
    /// The session's disk quota and what its files use, for `disk_quota` (when known).
    pub disk: Option<DiskFacts>,
}

/// A session's disk limits and what its files in /app and /tmp hold, as counted after the
/// failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiskFacts {
    /// Most bytes /app and /tmp may hold together.
    pub quota_bytes: u64,
    /// Most files, directories and links /app and /tmp may hold together.
    pub quota_files: u64,
    pub used_bytes: u64,
    pub used_files: u64,
    /// The largest single file (RLIMIT_FSIZE).
    pub file_cap_bytes: u64,
}

impl<'a> ErrorFacts<'a> {
    /// Facts with the essentials; numbers zero and flags false until set.
    pub fn new(
        language: Language,
        error_type: &'a str,
        code: &'a str,
        session_id: &'a str,
    ) -> Self {
        Self {
            language,
            error_type,
            error_name: None,
            error_message: None,
            stderr: "",
            code,
            session_id,
            fuel_consumed: 0,
            fuel_budget: 0,
            memory_bytes: 0,
            memory_cap: 0,
            timeout_secs: 0.0,
            stdout_truncated: false,
            state_lost: false,
            disk: None,
        }
    }
}

/// Advice for one failure.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Advice {
    /// What went wrong, in this sandbox's terms.
    pub summary: String,
    /// Concrete fixes, most likely first (at least two).
    pub actionable_guidance: Vec<String>,
    /// Documentation resources to read (`sandbox://docs/...`).
    pub related_docs: Vec<String>,
    /// A ready tool call that moves things forward, when there is one.
    pub next_call: Option<NextCall>,
}

/// Advice for a failure, with import costs from the built-in stdlib table.
pub fn advise(facts: &ErrorFacts) -> Advice {
    advise_with(facts, ImportFuelTable::builtin_shared())
}

/// Advice for a failure, with import costs from `table` (built-in plus vendored packages).
pub fn advise_with(facts: &ErrorFacts, table: &ImportFuelTable) -> Advice {
    let mut d = Draft::new(facts, table);
    match facts.error_type {
        "out_of_fuel" => d.out_of_fuel(),
        "timeout" => d.timeout(),
        "cancelled" => d.cancelled(),
        "out_of_memory" => d.out_of_memory(),
        "stack_overflow" => d.stack_overflow(),
        "output_limit" => d.output_limit(),
        "path_restriction" => d.path_restriction(),
        "disk_quota" => d.disk_quota(),
        "worker_crashed" => d.worker_crashed(),
        "resources_exhausted" => d.resources_exhausted(),
        "invalid_session" => d.invalid_session(),
        "system_error" => d.system_error(),
        "command_failed" => d.command_failed(),
        "missing_module" => d.missing_module(),
        "syntax_error" => d.syntax_error(),
        _ => d.runtime_error(),
    }
    d.finish()
}

/// Advice under construction.
struct Draft<'f, 'a> {
    f: &'f ErrorFacts<'a>,
    table: &'f ImportFuelTable,
    code: CodeFacts<'a>,
    summary: String,
    fixes: Vec<String>,
    docs: Vec<&'static str>,
    next: Option<NextCall>,
    /// The restart was already explained; do not repeat it.
    restart_explained: bool,
}

impl<'f, 'a> Draft<'f, 'a> {
    fn new(f: &'f ErrorFacts<'a>, table: &'f ImportFuelTable) -> Self {
        Self {
            f,
            table,
            code: CodeFacts::new(f.code, f.language),
            summary: String::new(),
            fixes: Vec::new(),
            docs: Vec::new(),
            next: None,
            restart_explained: false,
        }
    }

    fn fix(&mut self, text: impl Into<String>) {
        let text = text.into();
        if !self.fixes.contains(&text) {
            self.fixes.push(text);
        }
    }

    fn doc(&mut self, uri: &'static str) {
        if !self.docs.contains(&uri) {
            self.docs.push(uri);
        }
    }

    /// The most relevant page goes first, even when a more general one was added before.
    fn doc_first(&mut self, uri: &'static str) {
        self.docs.retain(|d| *d != uri);
        self.docs.insert(0, uri);
    }

    fn python(&self) -> bool {
        self.f.language == Language::Python
    }

    fn lang(&self) -> &'static str {
        self.f.language.as_str()
    }

    /// The message without a leading `Name: ` (Python's messages repeat the class).
    fn message(&self) -> &'a str {
        let m = self.f.error_message.unwrap_or("").trim();
        match self.f.error_name {
            Some(name) => m
                .strip_prefix(name)
                .and_then(|rest| rest.strip_prefix(':'))
                .map_or(m, str::trim),
            None => m,
        }
    }

    /// `Name: message`, for quoting.
    fn exception(&self) -> String {
        let m = clip(self.message(), 300);
        match self.f.error_name {
            Some(name) if !m.is_empty() => format!("{name}: {m}"),
            Some(name) => name.to_owned(),
            None => m,
        }
    }

    /// Everything the evidence says, for substring checks.
    fn evidence(&self) -> String {
        format!(
            "{} {} {}",
            self.f.error_name.unwrap_or(""),
            self.f.error_message.unwrap_or(""),
            tail(self.f.stderr, 4000)
        )
    }

    fn session_args(&self, mut args: Value) -> Value {
        if valid_session_id(self.f.session_id) {
            args["session_id"] = json!(self.f.session_id);
        }
        args
    }

    /// `execute_code` with this call's code (only when it is short enough to repeat).
    fn rerun(&self, timeout: Option<u64>, reason: &str) -> Option<NextCall> {
        if self.f.code.trim().is_empty() || self.f.code.len() > MAX_ECHOED_CODE {
            return None;
        }
        let mut args = self.session_args(json!({"code": self.f.code, "language": self.lang()}));
        if let Some(t) = timeout {
            args["timeout"] = json!(t);
        }
        Some(NextCall::new("execute_code", args, reason))
    }

    /// `execute_code` listing /app, in the session's language.
    /// The session's id, or its language when there is no valid id (the tools that take an
    /// optional session then pick the default session of that language).
    fn session_or_language(&self) -> Value {
        if valid_session_id(self.f.session_id) {
            json!({"session_id": self.f.session_id})
        } else {
            json!({"language": self.lang()})
        }
    }

    /// `get_workspace_info`: variables, files in /app with sizes, limits; runs no code.
    fn workspace_info_call(&self, reason: &str) -> NextCall {
        NextCall::new("get_workspace_info", self.session_or_language(), reason)
    }

    fn list_files_call(&self, reason: &str) -> NextCall {
        let code = if self.python() {
            "import os\nprint(sorted(os.listdir('/app')))"
        } else {
            "const [names, err] = os.readdir('/app');\nconsole.log(err ? 'readdir error ' + err : JSON.stringify(names.filter(n => n !== '.' && n !== '..').sort()))"
        };
        NextCall::new(
            "execute_code",
            self.session_args(json!({"code": code, "language": self.lang()})),
            reason,
        )
    }

    fn location(&self) -> Option<Location> {
        locate(
            self.f.stderr,
            self.f.error_message.unwrap_or(""),
            self.f.language,
        )
    }

    /// "line 3: `d['k']`" for the current cell, or where in an earlier cell.
    fn where_text(&self) -> Option<String> {
        let loc = self.location()?;
        if !loc.current {
            return Some(format!(
                "in code from an earlier call (<cell {}>, line {})",
                loc.cell, loc.line
            ));
        }
        let source = self
            .f
            .code
            .lines()
            .nth(loc.line.checked_sub(1)? as usize)?
            .trim();
        let col = loc.col.map(|c| format!(", column {c}")).unwrap_or_default();
        Some(if source.is_empty() {
            format!("line {}{col}", loc.line)
        } else {
            format!("line {}{col}: `{}`", loc.line, clip(source, 120))
        })
    }

    // -----------------------------------------------------------------------------------------
    // Resource limits.

    fn out_of_fuel(&mut self) {
        let f = self.f;
        let budget = f.fuel_budget;
        let consumed = f.fuel_consumed;
        self.summary = format!(
            "The execution ran out of fuel: its budget is {} per call (about {:.1} s of CPU; {} counted) and it was interrupted{}.",
            fmt_fuel(budget),
            budget as f64 / 1e10,
            fmt_fuel(consumed),
            if f.state_lost {
                "; the interpreter was restarted, so variables from earlier calls are gone (files in /app remain)"
            } else {
                "; the session state is intact"
            }
        );
        self.restart_explained = true;
        self.doc(FUEL);
        self.doc(SESSIONS);

        let endless: Vec<(String, u32)> = self
            .code
            .loops
            .iter()
            .filter(|l| l.endless)
            .map(|l| (l.header.clone(), l.line))
            .collect();
        for (header, line) in endless.iter().take(1) {
            self.fix(format!(
                "`{header}` at line {line} has no break/return, so it never ends: add an exit condition. More fuel would only delay the same failure."
            ));
        }

        let mut measured = self.code.measured_imports(self.table);
        measured.sort_by_key(|m| std::cmp::Reverse(m.2.fuel));
        let heavy: Vec<(String, u64)> = measured
            .iter()
            .filter(|m| m.2.fuel >= HEAVY_IMPORT_FUEL)
            .map(|m| (m.1.to_owned(), m.2.fuel))
            .collect();
        if !heavy.is_empty() {
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
        if let Some((header, line, depth, unknown, total)) = big_loop {
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

        // A bigger budget in a new session.
        if endless.is_empty() {
            let suggested = nice_round_up(consumed.max(budget).max(1).saturating_mul(3))
                .min(MAX_SUGGESTED_FUEL);
            if suggested > budget {
                let id = derived_session_id(
                    f.session_id,
                    &format!(
                        "fuel-{}",
                        fmt_fuel(suggested).to_lowercase().replace('.', "_")
                    ),
                );
                let flavor = FLAVORS.iter().find(|fl| fl.fuel >= suggested);
                self.fix(format!(
                    "Raise the budget: create_session {{language: \"{}\", session_id: \"{id}\", fuel_budget: {suggested}}} ({}){}, then re-run there. A new session starts empty: re-run setup code and recreate files, since /app is per session.",
                    self.lang(),
                    fmt_fuel(suggested),
                    flavor.map(|fl| format!(" or flavor \"{}\" ({} per call)", fl.name, fmt_fuel(fl.fuel))).unwrap_or_default()
                ));
                self.next = Some(NextCall::new(
                    "create_session",
                    json!({"language": self.lang(), "session_id": id, "fuel_budget": suggested}),
                    format!(
                        "a session with {} fuel per call (3x what this call used); then run the code there with execute_code",
                        fmt_fuel(suggested)
                    ),
                ));
            } else {
                self.fix(format!(
                    "The budget is already at the maximum guidance proposes ({}): split the work across several calls.",
                    fmt_fuel(MAX_SUGGESTED_FUEL)
                ));
            }
        }
        self.fix("Split long work into several execute_code calls in the same session: fuel is counted per call, and variables persist between calls.");
    }

    fn timeout(&mut self) {
        let f = self.f;
        let t = f.timeout_secs;
        self.summary = if f.state_lost {
            format!(
                "The execution hit its {t:.0} s timeout and ignored the interrupt, so it was stopped by force: variables, functions and imports from earlier calls are gone; files in /app remain."
            )
        } else {
            format!(
                "The execution hit its {t:.0} s timeout and was interrupted; the session kept its state (variables assigned before the interrupt hold partial results)."
            )
        };
        self.restart_explained = true;
        self.doc(FUEL);
        self.doc(SESSIONS);
        let endless: Option<(String, u32)> = self
            .code
            .loops
            .iter()
            .find(|l| l.endless)
            .map(|l| (l.header.clone(), l.line));
        if let Some((header, line)) = &endless {
            self.fix(format!(
                "`{header}` at line {line} never ends (no break/return): add an exit condition; a longer timeout will not help."
            ));
        }
        let sleeps: Vec<u32> = self
            .code
            .calls
            .iter()
            .filter(|(c, _, _)| {
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
            .collect();
        if let Some(line) = sleeps.first() {
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
                "If the work is simply long, pass a longer timeout: execute_code {{..., timeout: {longer}}} (at most {MAX_TIMEOUT_SECS} s), or create_session with flavor \"medium\" (60 s default) or \"large\" (120 s)."
            ));
            self.next = self.rerun(
                Some(longer),
                &format!("the same code with a {longer} s timeout"),
            );
        }
        self.fix("Process the data in chunks across several calls and save progress (a variable or a file in /app) so an interrupted call does not lose everything.");
        if f.fuel_budget > 0
            && (f.fuel_consumed as f64) < 0.05 * f.fuel_budget as f64
            && sleeps.is_empty()
        {
            self.fix(format!(
                "The call used only {} fuel in {t:.0} s, so it mostly waited rather than computed: look for blocking calls (input(), reading a pipe, waiting on a lock or a thread).",
                fmt_fuel(f.fuel_consumed)
            ));
        }
    }

    fn cancelled(&mut self) {
        self.summary = if self.f.state_lost {
            "The execution was cancelled by the client and had to be stopped by force: variables from earlier calls are gone; files in /app remain.".to_owned()
        } else {
            "The execution was cancelled by the client; the session kept its state.".to_owned()
        };
        self.restart_explained = true;
        self.doc(SESSIONS);
        self.fix("Re-run the code when ready; if it was cancelled for taking too long, check it first with get_execution_guidance {code, language} for endless loops and expensive imports.");
        self.fix("Make long work resumable: process in chunks across calls and keep progress in a variable or a file in /app.");
        if self.f.state_lost {
            self.fix("Re-run your setup code (imports, data loading): the interpreter is fresh.");
        }
        self.next =
            Some(self.workspace_info_call("see which variables and files the session still has"));
    }

    fn out_of_memory(&mut self) {
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
        if self.python() {
            self.fix("Process data in chunks: iterate over a file line by line (`for line in open(path)`), or read fixed-size blocks (`f.read(1 << 20)`), instead of `.read()`, `.readlines()` or `json.load` on a huge file; keep only aggregates.");
            self.fix("Free what you no longer need: objects from earlier calls stay alive in the session (`del big_list`), and compact types help (`array('d')` instead of a list of floats, tuples instead of dicts per row).");
        } else {
            self.fix("Process data in chunks: read the file with std.open and `.getline()` in a loop instead of loading it whole, and keep only aggregates.");
            self.fix("Free what you no longer need (`bigArray = null`): globals from earlier calls stay alive; typed arrays (Float64Array) are far smaller than arrays of objects.");
        }
        // Medium at least: "small" is the default, so it is rarely more than the session has.
        let next_flavor = FLAVORS[1..].iter().find(|fl| fl.memory_bytes > cap);
        match next_flavor {
            Some(fl) if cap < MAX_MEMORY_BYTES => {
                let id = derived_session_id(f.session_id, &format!("mem-{}", fl.name));
                self.fix(format!(
                    "Use more memory: create_session {{language: \"{}\", session_id: \"{id}\", flavor: \"{}\"}} ({}; or memory_bytes up to {}), then re-run there (a new session starts without this one's variables and files).",
                    self.lang(),
                    fl.name,
                    fmt_bytes(fl.memory_bytes),
                    fmt_bytes(MAX_MEMORY_BYTES)
                ));
                self.next = Some(NextCall::new(
                    "create_session",
                    json!({"language": self.lang(), "session_id": id, "flavor": fl.name}),
                    format!("a {} session has {} of memory", fl.name, fmt_bytes(fl.memory_bytes)),
                ));
            }
            _ => self.fix(format!(
                "The session already has the maximum of {}: the data must be streamed or reduced, not held in memory at once.",
                fmt_bytes(MAX_MEMORY_BYTES)
            )),
        }
    }

    fn stack_overflow(&mut self) {
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

    fn output_limit(&mut self) {
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
        self.fix("Larger flavors have larger output caps: 4 MiB (medium) and 16 MiB (large) instead of 1 MiB.");
    }

    fn path_restriction(&mut self) {
        let path = quoted(self.f.error_message.unwrap_or(""))
            .or_else(|| quoted(tail(self.f.stderr, 2000)))
            .map(str::to_owned)
            .or_else(|| self.outside_path_in_code());
        let path = path.as_deref().unwrap_or("that path");
        // The server reports writes to read-only mounts the same way.
        let read_only = ["/data", "/shared"]
            .iter()
            .any(|root| path == *root || path.starts_with(&format!("{root}/")));
        let class = if read_only {
            PathClass::ReadOnly
        } else {
            PathClass::Outside
        };
        self.path_advice(path, class);
    }

    /// The first path literal in the code that is outside the sandbox.
    fn outside_path_in_code(&self) -> Option<String> {
        self.code
            .strings
            .iter()
            .find(|s| {
                let in_call = s.call.as_deref().is_some_and(super::analyze::is_file_call);
                matches!(
                    classify_path(s.text, in_call),
                    PathClass::Outside | PathClass::ReadOnly
                )
            })
            .map(|s| s.text.to_owned())
    }

    fn path_advice(&mut self, path: &str, class: PathClass) {
        let name = path
            .rsplit(['/', '\\'])
            .find(|p| !p.is_empty() && *p != ".." && *p != "." && *p != "~")
            .unwrap_or("data.txt");
        let name = clip(name, 60);
        self.doc_first(WORKSPACE);
        if class == PathClass::ReadOnly {
            let root = if path.starts_with("/shared") {
                "/shared (the shared volume)"
            } else {
                "/data (vendored packages)"
            };
            self.summary = format!("'{}' is on a read-only mount: {root}.", clip(path, 200));
            self.fix(format!("Write to /app instead: '{name}' (relative to the working directory /app) or '/app/{name}'; use /tmp for scratch files."));
            self.fix("Reading there works; only writes, deletes and renames fail.");
        } else {
            self.summary = format!(
                "'{}' is outside the sandbox's file system: only /app, /tmp, /data and /shared exist.",
                clip(path, 200)
            );
            self.fix(format!(
                "/app is the session's workspace and the working directory: copy what you need there and use a relative name such as '{name}' (or '/app/{name}')."
            ));
            self.fix("Only /app (read-write), /tmp (scratch, read-write), /data (read-only vendored packages) and /shared (if configured) exist; host paths such as /etc, /home, /Users, /mnt/data, C:\\ or ~, and `..` above /app, cannot be reached.");
            self.fix("The sandbox cannot see the user's machine: to work on a user's file, get its content and write it into /app from code first.");
        }
        self.next =
            Some(self.workspace_info_call("lists the files that exist in /app, with sizes"));
    }

    fn disk_quota(&mut self) {
        // RLIMIT_FSIZE (one file too large) or the quota of all files together.
        let evidence = self.evidence();
        let one_file = ["File too large", "EFBIG", "Errno 27"]
            .iter()
            .any(|e| evidence.contains(e));
        let disk = self.f.disk;
        self.summary = match (disk, one_file) {
            (Some(d), true) => format!(
                "A single file reached the largest size a file may have in this session, {} (all files together may hold {}).",
                fmt_bytes(d.file_cap_bytes),
                fmt_bytes(d.quota_bytes)
            ),
            (None, true) => "A single file reached the largest size a file may have in this session.".to_owned(),
            (Some(d), false) => format!(
                "The session's files reached its disk quota: /app and /tmp together may hold {} in {} files, directories and links, and now hold {} in {}.",
                fmt_bytes(d.quota_bytes),
                d.quota_files,
                fmt_bytes(d.used_bytes),
                d.used_files
            ),
            (None, false) => "A write hit the session's disk quota: the bytes or the number of files, directories and links in /app and /tmp together.".to_owned(),
        };
        self.doc(WORKSPACE);
        self.fix("See what uses the space: execute_command `du -sh /app /tmp` for the totals, `du -ab /app | sort -n | tail -20` for the largest files and directories, `find /app | wc -l` for the number of entries.");
        self.fix(if self.python() {
            "Delete what you no longer need, and write again: execute_command `rm -r /app/PATH`, or `os.remove(path)` / `shutil.rmtree(dir)` in code. Writes work again at once, in the same session, with your variables intact."
        } else {
            "Delete what you no longer need, and write again: execute_command `rm -r /app/PATH`, or `os.remove(path)` in code. Writes work again at once, in the same session, with your variables intact."
        });
        if self.python() {
            self.fix("Write less: aggregates instead of raw rows, or compress what you keep: `gzip.open('out.csv.gz', 'wt')` is often 5-10x smaller.");
        }
        self.fix("reset_workspace deletes every file in /app and /tmp at once; it also clears the session's variables and imports (irreversible).");
        let bigger: Vec<String> = FLAVORS
            .iter()
            .filter(|fl| match disk {
                Some(d) if one_file => fl.disk_file_bytes > d.file_cap_bytes,
                Some(d) => {
                    fl.disk_quota_bytes > d.quota_bytes || fl.disk_quota_files > d.quota_files
                }
                // Unknown: the flavors above the default one.
                None => fl.name != "small",
            })
            .map(|fl| {
                if one_file {
                    format!(
                        "\"{}\" ({} per file)",
                        fl.name,
                        fmt_bytes(fl.disk_file_bytes)
                    )
                } else {
                    format!(
                        "\"{}\" ({} in {} files)",
                        fl.name,
                        fmt_bytes(fl.disk_quota_bytes),
                        fl.disk_quota_files
                    )
                }
            })
            .collect();
        if !bigger.is_empty() {
            self.fix(format!(
                "A larger flavor allows more: create_session {{language, flavor}} with {}; it is a new session, so write or copy the files you need there.",
                bigger.join(" or ")
            ));
        }
        self.next = if valid_session_id(self.f.session_id) {
            Some(NextCall::new(
                "execute_command",
                json!({"command": "du -sh /app /tmp", "session_id": self.f.session_id}),
                "shows how much /app and /tmp use, before deciding what to delete",
            ))
        } else {
            Some(self.workspace_info_call("see the files in the session and what uses the space"))
        };
    }

    fn worker_crashed(&mut self) {
        let f = self.f;
        self.summary = "The sandbox process died during the call. The next call starts a fresh interpreter: variables, functions and imports are gone; files in /app are kept.".to_owned();
        self.restart_explained = true;
        self.doc(SESSIONS);
        self.fix("Re-run your setup code (imports, variable definitions, data loading) before continuing.");
        if f.memory_cap > 0 && f.memory_bytes as f64 >= 0.9 * f.memory_cap as f64 {
            self.fix(format!(
                "Memory was at {} of the {} cap when it died: reduce memory use (process in chunks) or use flavor \"medium\"/\"large\".",
                fmt_bytes(f.memory_bytes),
                fmt_bytes(f.memory_cap)
            ));
        }
        if let Some((name, line)) = self.code.recursion.first().cloned() {
            self.fix(format!("`{name}` (line {line}) is recursive: very deep recursion can crash the interpreter; rewrite it as a loop."));
        }
        self.fix("If the same code crashes again, it is the cause: split it into smaller calls to find the part that fails.");
        self.next = self.rerun(None, "the session restarts with a fresh interpreter on this call; files in /app are still there").or_else(|| {
            Some(self.list_files_call("check that the session is back; files in /app survived"))
        });
    }

    fn resources_exhausted(&mut self) {
        self.summary =
            "The server is at capacity (sessions or memory) and could not run this call now."
                .to_owned();
        self.doc(SESSIONS);
        self.fix("Destroy sessions you no longer need with destroy_session {session_id}: each one holds memory until it is destroyed or expires.");
        self.fix("Retry in a few seconds: idle sessions expire and running calls finish.");
        self.fix("Ask for less: flavor \"small\" or a lower memory_bytes, and reuse your default session (omit session_id) instead of creating new ones.");
        self.next = Some(self.workspace_info_call(
            "see the session's state before deciding which sessions to destroy",
        ));
    }

    fn invalid_session(&mut self) {
        let id = self.f.session_id;
        self.summary = format!(
            "Session '{}' does not exist: it was never created, was destroyed, or expired after being idle (its files were deleted).",
            clip(id, 64)
        );
        self.restart_explained = true;
        self.doc(SESSIONS);
        self.fix("Run without session_id to use your default session for the language, or create a new one with create_session.");
        self.fix("State does not carry over: re-run the setup code and recreate the files the old session had.");
        if !valid_session_id(id) {
            self.fix("Session ids are 1-64 letters, digits, '-' or '_', starting with a letter or digit.");
        }
        self.next = if !self.f.code.trim().is_empty() && self.f.code.len() <= MAX_ECHOED_CODE {
            Some(NextCall::new(
                "execute_code",
                json!({"code": self.f.code, "language": self.lang()}),
                "run the code in your default session",
            ))
        } else {
            Some(NextCall::new(
                "create_session",
                json!({"language": self.lang()}),
                "a new session to run the code in",
            ))
        };
    }

    fn system_error(&mut self) {
        self.summary = format!(
            "The sandbox failed internally ({}); this is not a bug in your code.",
            clip(self.message(), 200)
        );
        self.doc(ERRORS);
        self.fix("Retry the call once: most internal failures are transient.");
        self.fix("If it fails again, use a new session (create_session) and re-run the setup code there.");
        self.next = self.rerun(None, "retry once").or_else(|| {
            Some(NextCall::new(
                "create_session",
                json!({"language": self.lang()}),
                "a fresh session",
            ))
        });
    }

    fn command_failed(&mut self) {
        let message = clip(self.message(), 200);
        self.summary = if message.is_empty() {
            "The command exited with a non-zero status.".to_owned()
        } else {
            format!("The command failed: {message}.")
        };
        self.doc(WORKSPACE);
        self.fix("Read stderr: the command's own error message says what went wrong (a missing file, a bad option).");
        self.fix("Commands run inside the sandbox, not on the host: only the sandbox's own commands exist, paths resolve under /app, and there is no network.");
        self.fix(format!(
            "For anything non-trivial, do the work in code with execute_code ({}), which reports structured errors.",
            self.lang()
        ));
    }

    // -----------------------------------------------------------------------------------------
    // Code problems.

    fn missing_module(&mut self) {
        let evidence = self.evidence();
        let module = module_from(&evidence)
            .or_else(|| self.code.imports.first().map(|i| i.module.clone()))
            .unwrap_or_default();
        if self.f.language == Language::JavaScript {
            return self.js_module(&module);
        }
        self.doc(PYTHON);
        if module.is_empty() {
            self.summary =
                "An import failed: the module is not available in this session.".to_owned();
            self.fix("Vendored packages in /data/site-packages import directly; list_available_packages {language: \"python\"} lists them.");
            self.fix("Pure-Python packages from PyPI can be added with install_package {package}; native ones (numpy, pandas, pillow) cannot load in WebAssembly.");
            self.next = Some(NextCall::new(
                "list_available_packages",
                json!({"language": "python"}),
                "see which packages are available",
            ));
            return;
        }
        let top = module.split('.').next().unwrap_or(&module).to_owned();
        let list_call = NextCall::new(
            "list_available_packages",
            json!({"language": "python"}),
            "see the vendored packages (already importable) and their import fuel",
        );
        if let Some(why) = modules::missing_stdlib(&module) {
            self.summary =
                format!("`{module}` is not part of the sandbox's CPython 3.12 (WASI build).");
            self.fix(format!("Instead of {top}: {why}."));
            self.fix("No package can add it: it needs operating-system features WebAssembly does not have.");
            self.next = Some(list_call);
            return;
        }
        if let Some((dist, alternative)) = modules::native_package(&module) {
            self.summary = format!(
                "`{top}` ({dist}) is a native package: its C/Rust extensions cannot load in the WebAssembly interpreter, and install_package cannot add it."
            );
            self.fix(format!("Instead of {top}: {alternative}."));
            self.fix("Check list_available_packages for a vendored pure-Python package that does the job.");
            self.next = Some(list_call);
            return;
        }
        if modules::network_package(&module) {
            self.summary = format!("`{top}` is a network client, and the sandbox has no network.");
            self.fix("Have the data passed in (in the code, or written to a file under /app) instead of fetching it.");
            self.fix(format!(
                "Installing {top} would not help: every connection fails in the sandbox."
            ));
            self.next = Some(list_call);
            return;
        }
        let similar: Vec<String> = self
            .table
            .similar(Language::Python, &top)
            .into_iter()
            .map(str::to_owned)
            .collect();
        let dist = modules::pypi_name(&module);
        self.summary = format!("No module named '{module}' in this session.");
        if let Some(best) = similar.first() {
            self.fix(format!("Did you mean `{best}`? (`import {best}`)"));
        }
        if let Some((name, cost)) = self.table.resolve(Language::Python, &module)
            && cost.package != "stdlib"
        {
            self.fix(format!(
                    "{name} is listed as vendored ({}), so it should import directly; if it does not, install it into the session with install_package {{package: \"{}\"}}.",
                    cost.package, cost.package
                ));
        }
        let session = if valid_session_id(self.f.session_id) {
            format!(", session_id: \"{}\"", self.f.session_id)
        } else {
            String::new()
        };
        self.fix(format!(
            "Install it into this session: install_package {{package: \"{dist}\"{session}}} (the PyPI name of `{top}`), then run the import again. Only pure-Python packages work; ones with C extensions cannot load in WebAssembly."
        ));
        self.fix(format!(
            "Check list_available_packages {{language: \"python\"}}: vendored packages in /data/site-packages are already on sys.path. If `{top}` is your own module, write {top}.py into /app first (/app is on sys.path)."
        ));
        self.next = Some(NextCall::new(
            "install_package",
            self.session_args(json!({"package": dist})),
            format!("`{top}` is published on PyPI as {dist}"),
        ));
    }

    fn js_module(&mut self, module: &str) {
        self.doc(JAVASCRIPT);
        self.summary =
            format!("The JavaScript package '{module}' is not available in this sandbox.");
        if let Some(alternative) = modules::node_builtin(module) {
            self.fix(format!(
                "'{module}' is a Node.js built-in; QuickJS has none. Instead: {alternative}."
            ));
        }
        self.fix("Only vendored packages load, with `const lib = requireVendor('name')`; list_available_packages {language: \"javascript\"} lists them.");
        self.fix("For small utilities, write the function inline: there is no npm install in the sandbox.");
        self.next = Some(NextCall::new(
            "list_available_packages",
            json!({"language": "javascript"}),
            "see which JavaScript packages requireVendor can load",
        ));
    }

    fn syntax_error(&mut self) {
        let where_ = self.where_text();
        let message = self.exception();
        self.summary = match &where_ {
            Some(w) => format!(
                "The code does not parse: {message} at {w}. Nothing ran; the session is unchanged."
            ),
            None => format!(
                "The code does not parse: {message}. Nothing ran; the session is unchanged."
            ),
        };
        self.restart_explained = true;
        let other = looks_like_other_language(&self.code.src);
        let lower = self.f.error_message.unwrap_or("").to_lowercase();
        let code = self.f.code;
        if let Some(other) = other {
            let other_lang = if other == "Python" {
                "python"
            } else {
                "javascript"
            };
            self.fix(format!(
                "This code looks like {other}, but it was sent as {}: resend it with language \"{other_lang}\".",
                self.lang()
            ));
            if code.len() <= MAX_ECHOED_CODE {
                self.next = Some(NextCall::new(
                    "execute_code",
                    json!({"code": code, "language": other_lang}),
                    format!("run it as {other} (in your default {other_lang} session)"),
                ));
            }
        }
        if self.python() {
            self.doc(PYTHON);
            if lower.contains("unexpected indent") && code.starts_with([' ', '\t']) {
                self.fix("The whole snippet is indented: remove the common leading indentation (top-level code must start at column 0).");
            } else if lower.contains("indent") || lower.contains("tab") {
                self.fix("Indent consistently with 4 spaces (no tabs); every block after `:` must be indented one level more than its header.");
            }
            if lower.contains("never closed")
                || lower.contains("unexpected eof")
                || lower.contains("unterminated")
                || lower.contains("was not closed")
            {
                self.fix("A bracket or quote opened there is not closed: count ( [ { and quotes on that line and the lines before it.");
            }
            if lower.contains("missing parentheses in call to 'print'") {
                self.fix("This is Python 3: `print(x)`, not `print x`.");
            }
            if lower.contains("expected ':'") {
                self.fix("A compound statement header (if/for/while/def/class/with/try) must end with `:`.");
            }
        } else {
            self.doc(JAVASCRIPT);
            if self
                .code
                .imports
                .iter()
                .any(|i| i.kind == super::scan::ImportKind::EsImport)
                || code.trim_start().starts_with("import ")
                || code.contains("\nimport ")
                || code.contains("export ")
            {
                self.fix("Cells are scripts, not ES modules: `import`/`export` statements are syntax errors. Load vendored packages with `const lib = requireVendor('name')`; QuickJS's `std` and `os` are already globals.");
                if self.next.is_none() {
                    self.next = Some(NextCall::new(
                        "list_available_packages",
                        json!({"language": "javascript"}),
                        "see which packages requireVendor can load",
                    ));
                }
            }
            let typescript = [
                "interface ",
                ": string",
                ": number",
                ": boolean",
                ": any",
                "<T>",
                " as const",
                "type ",
            ]
            .iter()
            .any(|t| code.contains(t));
            if typescript {
                self.fix("QuickJS runs JavaScript, not TypeScript: remove type annotations (`: string`), interfaces and type aliases.");
            }
        }
        if let Some(w) = where_ {
            self.fix(format!(
                "Fix {w}: look at that line and the one before it; {} there is the usual cause.",
                if self.python() {
                    "a missing `)`, `]`, `}`, `,` or `:`"
                } else {
                    "a missing `)`, `]`, `}` or `,`"
                }
            ));
        }
        self.fix(
            "Check the snippet before running it with get_execution_guidance {code, language}.",
        );
    }

    fn runtime_error(&mut self) {
        let name = self.f.error_name.unwrap_or("");
        let lower = self.evidence().to_lowercase();
        if self.python() {
            self.doc(PYTHON);
        } else {
            self.doc(JAVASCRIPT);
        }

        // Evidence that points at something other than a bug in the logic.
        if let Some(path) = self.file_error_path(&lower) {
            let in_call = true;
            match classify_path(&path, in_call) {
                class @ (PathClass::Outside | PathClass::ReadOnly) => {
                    self.path_advice(&path, class);
                    return self.state_note();
                }
                _ => return self.file_not_found(&path),
            }
        }
        if self.python() {
            if lower.contains("does not support processes")
                || lower.contains("has no attribute 'system'")
                || lower.contains("has no attribute 'popen'")
                || lower.contains("has no attribute 'fork'")
            {
                return self.no_processes();
            }
            if lower.contains("getaddrinfo")
                || lower.contains("urlerror")
                || lower.contains("connectionrefused")
                || lower.contains("gaierror")
                || lower.contains("network is unreachable")
            {
                return self.no_network();
            }
            if lower.contains("can't start new thread") {
                return self.no_threads();
            }
            if name == "EOFError"
                && (lower.contains("reading a line")
                    || self.code.calls.iter().any(|(c, _, _)| c == "input"))
            {
                self.summary =
                    "input() found no stdin: the sandbox has no interactive input.".to_owned();
                self.fix("Put the values in the code (e.g. `answer = 'yes'`) or read them from a file in /app.");
                self.fix("If a library prompts for input, pass the value as an argument instead.");
                return self.state_note();
            }
            if name == "ModuleNotFoundError" {
                return self.missing_module();
            }
        } else {
            if let Some(missing) = js_undefined_name(self.message()) {
                if missing == "require" {
                    return self.js_require();
                }
                if let Some(why) = js_node_global(&missing) {
                    return self.js_node_api(&missing, why);
                }
                if is_sandbox_js_global(&missing) {
                    self.summary = format!(
                        "`{missing}` is one of the sandbox's JavaScript globals, but this runtime does not provide it."
                    );
                    self.fix("Check list_runtimes for what this server's JavaScript runtime offers; plain ECMAScript (JSON, Math, Array, Map, console.log) always works.");
                    self.fix("Keep data in the code for now, or run the file work in Python, whose open()/os/pathlib always work under /app.");
                    self.next = Some(NextCall::new(
                        "list_runtimes",
                        json!({}),
                        "see the JavaScript runtime's capabilities",
                    ));
                    return self.state_note();
                }
            }
            if lower.contains("requirevendor:")
                || lower.contains("cannot find module")
                || lower.contains("is a node.js built-in module")
            {
                let module = quoted(self.f.error_message.unwrap_or(""))
                    .map(str::to_owned)
                    .or_else(|| self.code.imports.first().map(|i| i.module.clone()))
                    .unwrap_or_default();
                return self.js_module(&module);
            }
            let misuse = self.code.tuple_misuse();
            if !misuse.is_empty()
                && (name == "TypeError"
                    || lower.contains("not a function")
                    || lower.contains("cannot read property")
                    || lower.contains("not iterable")
                    || lower.contains("undefined"))
            {
                return self.js_tuple(&misuse);
            }
        }
        self.runtime_by_name(name, &lower);
        self.state_note();
    }

    /// The path of a failed file operation, when the evidence is one.
    fn file_error_path(&self, lower: &str) -> Option<String> {
        let name = self.f.error_name.unwrap_or("");
        let file_error = matches!(
            name,
            "FileNotFoundError" | "PermissionError" | "IsADirectoryError" | "NotADirectoryError"
        ) || lower.contains("no such file")
            || lower.contains("enoent")
            || lower.contains("operation not permitted")
            || lower.contains("read-only file system");
        if !file_error {
            // QuickJS: std.open / std.loadFile return null and the next call fails on it.
            let js_null = self.f.language == Language::JavaScript
                && lower.contains("null")
                && self.code.calls.iter().any(|(c, _, _)| {
                    matches!(
                        c.as_str(),
                        "std.open" | "std.loadFile" | "readText" | "readJson"
                    )
                });
            if !js_null {
                return None;
            }
            return self.outside_path_in_code().or_else(|| {
                self.code
                    .strings
                    .iter()
                    .find(|s| {
                        s.call.as_deref().is_some_and(|c| {
                            matches!(c, "std.open" | "std.loadFile" | "readText" | "readJson")
                        })
                    })
                    .map(|s| s.text.to_owned())
            });
        }
        quoted(self.f.error_message.unwrap_or(""))
            .or_else(|| quoted(tail(self.f.stderr, 2000)))
            .map(str::to_owned)
            .or_else(|| self.outside_path_in_code())
    }

    fn file_not_found(&mut self, path: &str) {
        let shown = clip(path, 200);
        self.summary =
            format!("'{shown}' does not exist in this session's /app (the working directory).");
        self.doc(WORKSPACE);
        self.fix("List what is there first; check the name's spelling, case and extension.");
        self.fix("Create the file before reading it: every session has its own /app, and a new, reset or expired session starts empty, so files written in another session are not here.");
        if self.f.state_lost {
            self.fix("The interpreter restarted, but files in /app survive restarts: a missing file was never written in this session.");
        }
        self.next =
            Some(self.workspace_info_call("lists the files that exist in /app, with sizes"));
    }

    fn no_processes(&mut self) {
        self.summary = "Running other programs is impossible here: the sandbox has no processes (os.system does not exist under WASI; subprocess fails).".to_owned();
        self.fix("Do the work in Python itself: shutil/pathlib for file operations, zipfile/tarfile/gzip for archives, sqlite3 for databases, json/csv for data.");
        self.fix("If you needed a command-line tool's output, compute it in code or ask for the result to be provided as a file in /app.");
        self.state_note();
    }

    fn no_network(&mut self) {
        self.summary = "The code tried to reach the network, and the sandbox has none.".to_owned();
        self.fix("Have the data passed in: put it in the code, or write it to a file under /app and read it from there.");
        self.fix("Nothing network-related can be installed around this: sockets, DNS and HTTP all fail by design.");
        self.state_note();
    }

    fn no_threads(&mut self) {
        self.summary = "A thread could not start: the interpreter is single-threaded (no parallelism in this sandbox).".to_owned();
        self.fix(
            "Run the tasks one after another: there is no speed-up to gain from threads here.",
        );
        self.fix("For cooperative waiting use asyncio (it runs on one thread); for long work, split it across calls.");
        self.state_note();
    }

    fn js_require(&mut self) {
        self.summary = "`require` does not exist: this is QuickJS, not Node.js.".to_owned();
        self.doc(JAVASCRIPT);
        let modules: Vec<String> = self
            .code
            .imports
            .iter()
            .filter(|i| i.kind == super::scan::ImportKind::Require)
            .map(|i| i.module.clone())
            .collect();
        for m in modules.iter().take(2) {
            if let Some(alt) = modules::node_builtin(m) {
                self.fix(format!("Instead of require('{m}'): {alt}."));
            }
        }
        self.fix("Load vendored packages with `const lib = requireVendor('name')`; list_available_packages {language: \"javascript\"} lists them.");
        self.fix("QuickJS's `std` and `os` modules are globals already: `std.loadFile(path)`, `const [names, err] = os.readdir('/app')`.");
        self.next = Some(NextCall::new(
            "list_available_packages",
            json!({"language": "javascript"}),
            "see which packages requireVendor can load",
        ));
    }

    fn js_node_api(&mut self, global: &str, why: &str) {
        self.summary =
            format!("`{global}` does not exist: this is QuickJS, not Node.js or a browser.");
        self.doc(JAVASCRIPT);
        self.fix(format!("`{global}`: {why}."));
        self.fix("Available instead: console.log, the std/os globals, the file helpers readText/writeText/readJson/writeJson/fileExists/listFiles, and requireVendor(name) for vendored packages.");
        self.state_note();
    }

    fn js_tuple(&mut self, misuse: &[(String, u32, String)]) {
        let (callee, line, var) = misuse[0].clone();
        self.summary = format!(
            "{}: {callee} returns a [value, error] pair, and line {line} uses the pair as the value.",
            self.exception()
        );
        self.doc(JAVASCRIPT);
        self.fix(format!(
            "Destructure the pair: `const [{var}, err] = {callee}(...); if (err) throw new Error('{callee} failed: ' + err);` instead of `const {var} = {callee}(...)`."
        ));
        self.fix(format!(
            "Without destructuring, `{var}.length` is always 2 and `{var}.forEach` visits the array and the error code, so methods like `.endsWith` fail on the first element."
        ));
        self.fix("The same pair shape comes from os.readdir, os.stat, os.lstat, os.getcwd, os.realpath and os.readlink; the helpers listFiles(dir) and fileExists(path) return plain values.");
        self.state_note();
    }

    /// Per-exception advice for an ordinary runtime error.
    fn runtime_by_name(&mut self, name: &str, lower: &str) {
        let exception = self.exception();
        let where_ = self.where_text();
        let exception = exception.trim_end_matches('.');
        self.summary = match &where_ {
            Some(w) => format!("{exception} at {w}."),
            None => format!("{exception}."),
        };
        let msg = self.message().to_owned();
        match name {
            "KeyError" => {
                let key = msg.trim();
                self.fix(format!("The key {key} is not in the dict: print the real keys (`print(list(d.keys())[:20])`) and compare case, spaces and type (1 vs '1')."));
                self.fix(format!(
                    "Use `d.get({key}, default)` or check `{key} in d` when the key may be missing."
                ));
                if self
                    .code
                    .calls
                    .iter()
                    .any(|(c, _, _)| c.ends_with("DictReader"))
                {
                    self.fix("csv.DictReader keys are the header cells as written: strip spaces, and open with encoding='utf-8-sig' to drop a BOM.");
                }
            }
            "IndexError" => {
                self.fix("The sequence is shorter than the index: print `len(x)` before indexing; an empty list usually means an earlier filter, split or parse found nothing.");
                self.fix("Guard it (`if x:` / `x[-1] if x else None`) or use slicing, which never raises (`x[:1]`).");
            }
            "TypeError" if self.python() => {
                if lower.contains("nonetype") {
                    self.fix("A value is None where an object was expected: a function returned None (list.sort(), dict.update(), re.match with no match, a function without return). Check the call that produced it.");
                } else if lower.contains("not callable") {
                    self.fix("A variable shadows a function (e.g. `list = ...`, `sum = 0`, `max = ...`): in a persistent session that shadowing stays for later calls too. Rename the variable and `del` it to restore the builtin.");
                } else if lower.contains("unsupported operand")
                    || lower.contains("can only concatenate")
                    || lower.contains("must be str")
                {
                    self.fix("Mixed types in an operation: convert explicitly (`int(s)`, `float(s)`, `str(n)`) or use an f-string for text.");
                } else if lower.contains("positional argument")
                    || lower.contains("keyword argument")
                {
                    self.fix("The call's arguments do not match the function's signature: check `help(func)` or the definition (a method needs `self`).");
                }
                self.fix("Print the types involved just before the failing line: `print(type(a), type(b))`.");
            }
            "AttributeError" => {
                if lower.contains("'nonetype'") {
                    self.fix("The object is None: the call that produced it found nothing (re.match/search, dict.get, a function without return). Check for None first.");
                } else if let Some(module) = lower
                    .split("module '")
                    .nth(1)
                    .and_then(|r| r.split('\'').next())
                {
                    self.fix(format!("`{module}` has no such attribute: check the spelling and the version (this is Python 3.12), and make sure no file /app/{module}.py shadows the real module."));
                } else {
                    self.fix("The object is of a different type than expected: `print(type(obj), dir(obj))` shows what it offers.");
                }
                self.fix("Check the exact attribute name in the library's documentation for the installed version.");
            }
            "NameError" | "ReferenceError" => {
                let missing = quoted(&msg)
                    .map(str::to_owned)
                    .or_else(|| js_undefined_name(&msg))
                    .unwrap_or_default();
                if self.f.state_lost {
                    self.fix(format!("The interpreter was restarted, so `{missing}` from an earlier call is gone: re-run the code that defined it (imports included). Files in /app survived."));
                    self.restart_explained = true;
                } else {
                    self.fix(format!(
                        "`{missing}` is not defined in this session: define it in this code, or run the code that defines it first in the same session{}. Sessions never share variables.",
                        if valid_session_id(self.f.session_id) { format!(" ('{}')", self.f.session_id) } else { String::new() }
                    ));
                }
                if self.python() && self.table.get(&missing).is_some() {
                    self.fix(format!("`{missing}` is a module: add `import {missing}`."));
                } else {
                    self.fix(
                        "Check the spelling and case of the name against where it is defined.",
                    );
                }
            }
            "UnboundLocalError" => {
                self.fix("A function assigns to a name that also exists globally, which makes it local everywhere in the function: declare `global name` (or pass it as an argument).");
                self.fix("Or rename the local variable so it does not shadow the global one.");
            }
            "ValueError" => {
                if lower.contains("invalid literal") || lower.contains("could not convert") {
                    self.fix("A string is not a number: clean it first (`s.strip()`, remove thousands separators and units) and skip empty cells.");
                } else if lower.contains("unpack") {
                    self.fix("The number of values does not match the number of names: print the item to see its real shape.");
                }
                self.fix("Print the offending value with repr() just before the failing line to see exactly what it contains.");
            }
            "ZeroDivisionError" => {
                self.fix("A denominator is zero: guard it (`x / n if n else 0`); an average over an empty list is the usual cause.");
                self.fix("Check why the count is 0: an earlier filter or parse may have matched nothing.");
            }
            "UnicodeDecodeError" => {
                self.fix("The file is not UTF-8: open it with `encoding='latin-1'` (never fails) or `errors='replace'`, or read bytes with 'rb'.");
                self.fix("Use encoding='utf-8-sig' for files that start with a byte-order mark (Excel CSV exports).");
            }
            "JSONDecodeError" => {
                if lower.contains("line 1 column 1") {
                    self.fix("The text is empty or not JSON at all (HTML, CSV, an error page): print `repr(text[:200])` to see it.");
                }
                if lower.contains("double quotes") {
                    self.fix("JSON needs double quotes; for Python-literal text (single quotes, True/None) use `ast.literal_eval`.");
                }
                self.fix("Look at the reported position (`text[pos-40:pos+40]`): trailing commas, comments and NaN are not JSON.");
            }
            "FileExistsError" => {
                self.fix("Use `os.makedirs(path, exist_ok=True)`; open with mode 'w' to overwrite a file.");
                self.fix("Files persist in /app between calls, so setup code that creates them fails on the second run unless it tolerates existing files.");
            }
            "ImportError" => {
                self.fix("The module exists but lacks that name: check the spelling and the module's version (CPython 3.12, or the vendored package's version).");
                self.fix("A file in /app with the same name as a package shadows it (/app comes first on sys.path): rename your file.");
            }
            "AssertionError" => {
                self.fix("Print the values the assert checks just before it to see which condition failed.");
                self.fix("Give the assert a message: `assert cond, f'x={x!r}'`.");
            }
            "StopIteration" => {
                self.fix("next() reached the end of an iterator: use `next(it, None)` and check for None.");
                self.fix("Iterators are consumed once: re-create them (e.g. reopen the file) for a second pass.");
            }
            "OverflowError" => {
                self.fix("The number is too large for a float: use integers, decimal.Decimal, or work with logarithms.");
                self.fix("Check for runaway growth (exponentials in a loop).");
            }
            "OperationalError" => {
                if lower.contains("no such table") {
                    self.fix("Create the table first (CREATE TABLE IF NOT EXISTS ...); an in-memory database (':memory:') is empty in every new connection.");
                }
                self.fix("Keep database files under /app (e.g. sqlite3.connect('data.db')).");
            }
            "TypeError" => {
                // JavaScript
                if lower.contains("not a function") {
                    self.fix("The value is not a function: a method on the wrong type (`forEach` on an object: use `Object.entries(obj).forEach`), a misspelled method, or a value that is undefined.");
                } else if lower.contains("cannot read property")
                    || lower.contains("of undefined")
                    || lower.contains("of null")
                {
                    self.fix("The value before the `.` is undefined or null: a missing key, an empty result, or a file function that returned null. Check it (`if (!x) ...`) or use optional chaining `x?.y`.");
                } else if lower.contains("not iterable") {
                    self.fix("Only arrays, strings, Maps and Sets are iterable: for objects use `Object.entries(obj)`; destructuring `const [a, b] = x` needs an array.");
                }
                self.fix("Log the value and its type just before the failing line: `console.log(typeof x, JSON.stringify(x))`.");
            }
            "SyntaxError" => {
                // A runtime SyntaxError: JSON.parse, eval or new Function.
                self.fix("JSON.parse got text that is not JSON: log `text.slice(0, 200)`; single quotes, trailing commas and comments are not JSON.");
                self.fix("If the text comes from a file, check the file exists (std.loadFile returns null when it does not).");
            }
            "RangeError" => {
                self.fix("A length, index or precision is out of range (`new Array(-1)`, `toFixed(200)`), or recursion is too deep: check the value passed.");
                self.fix("For deep recursion, rewrite it as a loop with an explicit stack.");
            }
            _ => {}
        }
        let generic_where = match &where_ {
            Some(w) => format!("Start at {w}: print the values it uses just before it to see which one is not what you expect."),
            None => "Read the last frame of the traceback that points into your code (<cell N>) and print the values used there.".to_owned(),
        };
        self.fix(generic_where);
    }

    /// After a restart, say so once.
    fn state_note(&mut self) {
        if self.f.state_lost && !self.restart_explained {
            self.restart_explained = true;
            self.fix("The interpreter was restarted during this call: variables, functions and imports from earlier calls are gone (files in /app remain); re-run your setup code.");
        }
    }

    fn finish(mut self) -> Advice {
        if self.f.stdout_truncated && self.f.error_type != "output_limit" {
            self.fix("stdout was cut at the output cap: write large output to a file in /app and read it in parts.");
        }
        // Every advice has at least two concrete steps.
        let fallbacks = [
            "Check the code before the next run with get_execution_guidance {code, language}: it reports imports and their fuel, loops, paths and unavailable APIs.",
            "Read sandbox://docs/errors for what each error type means and how to recover.",
        ];
        for fallback in fallbacks {
            if self.fixes.len() >= 2 {
                break;
            }
            self.fix(fallback);
        }
        if self.summary.is_empty() {
            self.summary = format!("The execution failed ({}).", self.f.error_type);
        }
        self.fixes.truncate(8);
        self.doc(ERRORS);
        Advice {
            summary: self.summary,
            actionable_guidance: self.fixes,
            related_docs: self.docs.into_iter().map(str::to_owned).collect(),
            next_call: self.next,
        }
    }
}

/// A position in the user's code, read off a traceback or stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Location {
    cell: u32,
    line: u32,
    col: Option<u32>,
    /// The innermost frame is in this call's code (not in a function from an earlier call).
    current: bool,
}

/// Python: `File "<cell 3>", line 2` (outermost first). JavaScript: `<cell 3>:2:10` (innermost
/// first).
fn locate(stderr: &str, message: &str, language: Language) -> Option<Location> {
    let mut frames: Vec<(u32, u32, Option<u32>)> = Vec::new();
    let text = tail(stderr, 16_000);
    let mut rest = text;
    while let Some(at) = rest.find("<cell ") {
        rest = &rest[at + 6..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let Ok(cell) = digits.parse::<u32>() else {
            continue;
        };
        let after = &rest[digits.len()..];
        match language {
            Language::Python => {
                if let Some(line) = after
                    .strip_prefix(">\", line ")
                    .or_else(|| after.strip_prefix(">, line "))
                {
                    let n: String = line.chars().take_while(char::is_ascii_digit).collect();
                    if let Ok(line) = n.parse() {
                        frames.push((cell, line, None));
                    }
                }
            }
            Language::JavaScript => {
                if let Some(pos) = after.strip_prefix(">:") {
                    let mut parts = pos.split(|c: char| !c.is_ascii_digit());
                    let line = parts.next().and_then(|l| l.parse().ok());
                    let col = parts.next().and_then(|c| c.parse().ok());
                    if let Some(line) = line {
                        frames.push((cell, line, col));
                    }
                }
            }
        }
        if frames.len() > 200 {
            break;
        }
    }
    if frames.is_empty() && language == Language::Python && !message.is_empty() {
        // SyntaxError messages: "... (<cell 1>, line 3)"
        return locate(message, "", Language::Python);
    }
    let (inner, outer) = match language {
        Language::Python => (frames.last()?, frames.first()?),
        Language::JavaScript => (frames.first()?, frames.last()?),
    };
    Some(Location {
        cell: inner.0,
        line: inner.1,
        col: inner.2,
        current: inner.0 == outer.0,
    })
}

/// The last `'...'` quoted part of a message (the path of an OSError, a module name).
fn quoted(text: &str) -> Option<&str> {
    let end = text.rfind('\'')?;
    let start = text[..end].rfind('\'')?;
    let inner = &text[start + 1..end];
    (!inner.is_empty() && inner.len() <= 1024).then_some(inner)
}

/// `yaml` from "No module named 'yaml'" (or `_lzma`, `PIL.Image`).
fn module_from(evidence: &str) -> Option<String> {
    let at = evidence.rfind("No module named ")?;
    let rest = &evidence[at + "No module named ".len()..];
    let rest = rest.trim_start_matches(['\'', '"']);
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.' || *c == '-')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// `x` from "x is not defined" / "'x' is not defined".
fn js_undefined_name(message: &str) -> Option<String> {
    let at = message.find(" is not defined")?;
    let head = message[..at].trim_end().trim_matches('\'');
    let name = head.rsplit([' ', ':', '\'']).next()?;
    (!name.is_empty() && name.len() <= 64).then(|| name.to_owned())
}

fn js_node_global(name: &str) -> Option<&'static str> {
    Some(match name {
        "process" => {
            "there is no process object (no env, argv or exit); keep configuration in code or in files under /app"
        }
        "Buffer" => "there is no Buffer; use Uint8Array/ArrayBuffer for bytes and strings for text",
        "fetch" | "XMLHttpRequest" | "WebSocket" => {
            "there is no network in the sandbox; have the data passed in or written to /app"
        }
        "__dirname" | "__filename" => "cells have no file; the workspace is /app",
        "module" | "exports" => {
            "there is no CommonJS; define globals, and load vendored packages with requireVendor"
        }
        "window" | "document" | "localStorage" | "alert" => {
            "there is no browser; use globalThis, console.log and files under /app"
        }
        "setImmediate" => "there is no setImmediate; use Promise.resolve().then(fn)",
        _ => return None,
    })
}

/// Globals the sandbox's JavaScript runtime is meant to provide.
fn is_sandbox_js_global(name: &str) -> bool {
    matches!(
        name,
        "std"
            | "os"
            | "requireVendor"
            | "readJson"
            | "writeJson"
            | "readText"
            | "writeText"
            | "appendText"
            | "fileExists"
            | "listFiles"
    )
}

fn valid_session_id(id: &str) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && id.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The last `max` bytes of `s`, on a character boundary.
fn tail(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tools' argument schemas, for checking every `next_call`.
    fn check_arguments(call: &NextCall) {
        let args = call
            .arguments
            .as_object()
            .unwrap_or_else(|| panic!("{call:?}: arguments must be an object"));
        let (required, optional): (&[&str], &[&str]) = match call.tool.as_str() {
            "execute_code" => (&["code", "language"], &["session_id", "timeout"]),
            "execute_command" => (&["command"], &["session_id", "timeout"]),
            "create_session" => (
                &["language"],
                &[
                    "session_id",
                    "flavor",
                    "fuel_budget",
                    "memory_bytes",
                    "timeout",
                    "ttl_seconds",
                    "auto_persist_globals",
                ],
            ),
            "destroy_session" => (&["session_id"], &[]),
            "reset_workspace" | "get_workspace_info" => (&[], &["session_id", "language"]),
            "install_package" => (&["package"], &["version", "session_id", "language"]),
            "list_available_packages" => (&[], &["language", "session_id"]),
            "get_execution_guidance" => (&["code", "language"], &["context"]),
            "list_runtimes" => (&[], &[]),
            other => panic!("unknown tool {other}"),
        };
        for key in required {
            assert!(args.contains_key(*key), "{call:?}: missing {key}");
        }
        for (key, value) in args {
            assert!(
                required.contains(&key.as_str()) || optional.contains(&key.as_str()),
                "{call:?}: unexpected {key}"
            );
            match key.as_str() {
                "language" => assert!(
                    matches!(value.as_str(), Some("python" | "javascript")),
                    "{call:?}"
                ),
                "session_id" => assert!(valid_session_id(value.as_str().unwrap()), "{call:?}"),
                "flavor" => assert!(
                    matches!(value.as_str(), Some("small" | "medium" | "large")),
                    "{call:?}"
                ),
                "fuel_budget" => {
                    let v = value.as_u64().unwrap();
                    assert!(v > 0 && v <= MAX_SUGGESTED_FUEL, "{call:?}");
                }
                "memory_bytes" => {
                    assert!((32 << 20..=MAX_MEMORY_BYTES).contains(&value.as_u64().unwrap()))
                }
                "timeout" => {
                    let t = value.as_f64().unwrap();
                    assert!(t > 0.0 && t <= MAX_TIMEOUT_SECS as f64, "{call:?}");
                }
                "code" | "package" | "command" => {
                    assert!(!value.as_str().unwrap().trim().is_empty(), "{call:?}")
                }
                "auto_persist_globals" => assert!(value.is_boolean()),
                _ => {}
            }
        }
        assert!(!call.reason.is_empty());
    }

    fn check(advice: &Advice) {
        assert!(advice.actionable_guidance.len() >= 2, "{advice:#?}");
        assert!(!advice.summary.is_empty());
        assert!(
            advice
                .related_docs
                .iter()
                .all(|d| super::super::docs::doc(d).is_some()),
            "{advice:?}"
        );
        if let Some(call) = &advice.next_call {
            check_arguments(call);
        }
    }

    fn facts<'a>(language: Language, error_type: &'a str, code: &'a str) -> ErrorFacts<'a> {
        let mut f = ErrorFacts::new(language, error_type, code, "s1");
        f.fuel_budget = 10_000_000_000;
        f.memory_cap = 1 << 30;
        f.timeout_secs = 30.0;
        f
    }

    fn py_error<'a>(
        error_type: &'a str,
        code: &'a str,
        name: &'a str,
        message: &'a str,
        stderr: &'a str,
    ) -> Advice {
        let mut f = facts(Language::Python, error_type, code);
        f.error_name = Some(name);
        f.error_message = Some(message);
        f.stderr = stderr;
        let advice = advise(&f);
        check(&advice);
        advice
    }

    fn js_error<'a>(
        error_type: &'a str,
        code: &'a str,
        name: &'a str,
        message: &'a str,
        stderr: &'a str,
    ) -> Advice {
        let mut f = facts(Language::JavaScript, error_type, code);
        f.error_name = Some(name);
        f.error_message = Some(message);
        f.stderr = stderr;
        let advice = advise(&f);
        check(&advice);
        advice
    }

    fn says(advice: &Advice, needle: &str) -> bool {
        advice.summary.contains(needle)
            || advice
                .actionable_guidance
                .iter()
                .any(|g| g.contains(needle))
    }

    #[test]
    fn out_of_fuel_after_a_heavy_import_quotes_the_measured_cost() {
        let mut f = facts(
            Language::Python,
            "out_of_fuel",
            "import asyncio\nimport json\nfor x in data:\n    process(x)\n",
        );
        f.fuel_consumed = 10_000_000_000;
        f.error_name = Some("KeyboardInterrupt");
        let a = advise(&f);
        check(&a);
        let asyncio = ImportFuelTable::builtin().get("asyncio").unwrap().fuel;
        assert!(
            says(&a, &format!("asyncio {}", fmt_fuel(asyncio))),
            "{a:#?}"
        );
        assert!(says(&a, "import asyncio, json"));
        let call = a.next_call.unwrap();
        assert_eq!(call.tool, "create_session");
        assert_eq!(call.arguments["fuel_budget"], 30_000_000_000u64);
        assert_eq!(call.arguments["language"], "python");
        assert_ne!(call.arguments["session_id"], "s1");
        assert!(a.related_docs.contains(&FUEL.to_owned()));
    }

    #[test]
    fn out_of_fuel_budget_is_capped_and_endless_loops_get_no_bigger_budget() {
        let mut f = facts(Language::Python, "out_of_fuel", "x = 1");
        f.fuel_budget = 500_000_000_000;
        f.fuel_consumed = 500_000_000_000;
        let a = advise(&f);
        check(&a);
        assert_eq!(
            a.next_call.unwrap().arguments["fuel_budget"],
            MAX_SUGGESTED_FUEL
        );

        f.fuel_budget = MAX_SUGGESTED_FUEL;
        let a = advise(&f);
        check(&a);
        assert!(a.next_call.is_none());

        let f = facts(Language::Python, "out_of_fuel", "while True:\n    pass\n");
        let a = advise(&f);
        check(&a);
        assert!(says(&a, "never ends"));
        assert!(a.next_call.is_none());
    }

    #[test]
    fn path_outside_app_from_python_file_errors() {
        let a = py_error(
            "runtime_error",
            "open('/etc/passwd').read()",
            "FileNotFoundError",
            "FileNotFoundError: [Errno 44] No such file or directory: '/etc/passwd'",
            "Traceback (most recent call last):\n  File \"<cell 1>\", line 1, in <module>\nFileNotFoundError: [Errno 44] No such file or directory: '/etc/passwd'\n",
        );
        assert!(a.summary.contains("'/etc/passwd' is outside"), "{a:#?}");
        assert!(says(&a, "'passwd'"));
        assert!(says(&a, "/tmp (scratch"));
        assert!(says(&a, "/data (read-only"));
        assert_eq!(a.next_call.unwrap().tool, "get_workspace_info");
        assert_eq!(a.related_docs[0], WORKSPACE);

        let a = py_error(
            "runtime_error",
            "open('../x.txt')",
            "PermissionError",
            "PermissionError: [Errno 63] Operation not permitted: '../x.txt'",
            "",
        );
        assert!(a.summary.contains("outside"), "{a:#?}");

        let a = py_error(
            "runtime_error",
            "open('/data/x.txt', 'w')",
            "FileNotFoundError",
            "FileNotFoundError: [Errno 44] No such file or directory: '/data/x.txt'",
            "",
        );
        assert!(a.summary.contains("read-only"), "{a:#?}");

        let a = py_error(
            "runtime_error",
            "open('missing.csv')",
            "FileNotFoundError",
            "FileNotFoundError: [Errno 44] No such file or directory: 'missing.csv'",
            "",
        );
        assert!(
            a.summary.contains("does not exist in this session's /app"),
            "{a:#?}"
        );
    }

    #[test]
    fn path_restriction_error_type() {
        let mut f = facts(
            Language::JavaScript,
            "path_restriction",
            "const t = std.loadFile('/home/me/notes.txt');",
        );
        f.error_message = Some("access to '/home/me/notes.txt' is outside the sandbox");
        let a = advise(&f);
        check(&a);
        assert!(a.summary.contains("/home/me/notes.txt"));
        assert!(says(&a, "'notes.txt'"));
        let call = a.next_call.unwrap();
        assert_eq!(call.tool, "get_workspace_info");
        assert_eq!(call.arguments, json!({"session_id": "s1"}));
        let mut f = facts(Language::JavaScript, "path_restriction", "x");
        f.session_id = "";
        let call = advise(&f).next_call.unwrap();
        assert_eq!(call.arguments, json!({"language": "javascript"}));

        let mut f = facts(
            Language::Python,
            "path_restriction",
            "open('/data/out.txt', 'w')",
        );
        f.error_message = Some("PermissionError: write to a read-only mount: '/data/out.txt'");
        let a = advise(&f);
        check(&a);
        assert!(a.summary.contains("read-only mount: /data"), "{a:#?}");

        let f = facts(
            Language::Python,
            "path_restriction",
            "open('/Users/x/a.csv')",
        );
        let a = advise(&f);
        check(&a);
        assert!(a.summary.contains("/Users/x/a.csv"), "{a:#?}");
    }

    #[test]
    fn quickjs_tuple_destructuring_mistake() {
        let a = js_error(
            "runtime_error",
            "const files = os.readdir('.');\nconst txt = files.filter(f => f.endsWith('.txt'));",
            "TypeError",
            "TypeError: not a function",
            "Uncaught TypeError: not a function\n    at <anonymous> (<cell 1>:2:36)\n",
        );
        assert!(says(&a, "const [files, err] = os.readdir(...)"), "{a:#?}");
        assert!(says(&a, "files.length` is always 2"));
        assert_eq!(a.related_docs[0], JAVASCRIPT);

        let a = js_error(
            "runtime_error",
            "const st = os.stat('a.txt');\nconsole.log(st.size.toFixed(1));",
            "TypeError",
            "TypeError: cannot read property 'toFixed' of undefined",
            "",
        );
        assert!(says(&a, "const [st, err] = os.stat(...)"), "{a:#?}");
    }

    #[test]
    fn python_missing_modules() {
        let a = py_error(
            "missing_module",
            "import yaml",
            "ModuleNotFoundError",
            "No module named 'yaml'",
            "",
        );
        let call = a.next_call.clone().unwrap();
        assert_eq!(call.tool, "install_package");
        assert_eq!(call.arguments["package"], "pyyaml");
        assert_eq!(call.arguments["session_id"], "s1");
        assert!(says(&a, "list_available_packages"));

        let a = py_error(
            "missing_module",
            "from bs4 import BeautifulSoup",
            "ModuleNotFoundError",
            "No module named 'bs4'",
            "",
        );
        assert_eq!(a.next_call.unwrap().arguments["package"], "beautifulsoup4");

        for (module, alternative) in [
            ("PIL", "SVG"),
            ("numpy", "statistics"),
            ("pandas", "csv.DictReader"),
            ("sklearn", "pure-Python"),
            ("scipy", "statistics"),
        ] {
            let code = format!("import {module}");
            let message = format!("No module named '{module}'");
            let a = py_error("missing_module", &code, "ModuleNotFoundError", &message, "");
            assert!(a.summary.contains("native"), "{module}: {a:#?}");
            assert!(says(&a, alternative), "{module}: {a:#?}");
            assert_eq!(a.next_call.unwrap().tool, "list_available_packages");
        }

        let a = py_error(
            "missing_module",
            "import lzma",
            "ModuleNotFoundError",
            "No module named '_lzma'",
            "",
        );
        assert!(says(&a, "gzip"), "{a:#?}");

        let a = py_error(
            "missing_module",
            "import jsno",
            "ModuleNotFoundError",
            "No module named 'jsno'",
            "",
        );
        assert!(says(&a, "Did you mean `json`"), "{a:#?}");

        let a = py_error(
            "missing_module",
            "import requests",
            "ModuleNotFoundError",
            "No module named 'requests'",
            "",
        );
        assert!(a.summary.contains("no network"));
    }

    #[test]
    fn javascript_require_import_and_missing_packages() {
        let a = js_error(
            "runtime_error",
            "const fs = require('fs');",
            "ReferenceError",
            "ReferenceError: require is not defined",
            "",
        );
        assert!(says(&a, "requireVendor"));
        assert!(says(&a, "Instead of require('fs')"));
        let call = a.next_call.unwrap();
        assert_eq!(call.tool, "list_available_packages");
        assert_eq!(call.arguments["language"], "javascript");

        let a = js_error(
            "syntax_error",
            "import fs from 'fs'",
            "SyntaxError",
            "SyntaxError: Unexpected identifier 'fs'",
            "Uncaught SyntaxError: Unexpected identifier 'fs'\n    at <cell 1>:1:8\n",
        );
        assert!(says(&a, "not ES modules"), "{a:#?}");
        assert!(a.summary.contains("line 1, column 8"), "{a:#?}");

        let a = js_error(
            "missing_module",
            "const x = requireVendor('lodash')",
            "Error",
            "cannot find vendored package 'lodash'",
            "",
        );
        assert_eq!(a.next_call.unwrap().arguments["language"], "javascript");

        let a = js_error(
            "runtime_error",
            "const _ = requireVendor('lodash')",
            "Error",
            "Error: requireVendor: no vendored package 'lodash' (available: csv-simple, string-utils)",
            "",
        );
        assert!(a.summary.contains("'lodash'"), "{a:#?}");
        assert_eq!(a.next_call.unwrap().tool, "list_available_packages");

        let a = js_error(
            "runtime_error",
            "fetch('http://x')",
            "ReferenceError",
            "ReferenceError: fetch is not defined",
            "",
        );
        assert!(says(&a, "no network"), "{a:#?}");
        let a = js_error(
            "runtime_error",
            "process.env.HOME",
            "ReferenceError",
            "ReferenceError: process is not defined",
            "",
        );
        assert!(a.summary.contains("QuickJS"), "{a:#?}");
    }

    #[test]
    fn memory_exhaustion() {
        let mut f = facts(Language::Python, "out_of_memory", "xs = [0] * 10**9");
        f.memory_bytes = 1 << 30;
        f.error_name = Some("MemoryError");
        let a = advise(&f);
        check(&a);
        assert!(says(&a, "Line 1 builds a list"), "{a:#?}");
        assert!(says(&a, "chunks"));
        let call = a.next_call.unwrap();
        assert_eq!(call.tool, "create_session");
        assert_eq!(call.arguments["flavor"], "medium");

        f.memory_cap = 256 << 20;
        assert_eq!(advise(&f).next_call.unwrap().arguments["flavor"], "medium");
        f.memory_cap = 2 << 30;
        assert_eq!(advise(&f).next_call.unwrap().arguments["flavor"], "large");
        f.memory_cap = 4 << 30;
        let a = advise(&f);
        check(&a);
        assert!(a.next_call.is_none());
        assert!(says(&a, "maximum"));

        let mut f = facts(
            Language::JavaScript,
            "out_of_memory",
            "let a = []; while (true) a.push(new Array(1e6).fill(1))",
        );
        f.error_name = Some("InternalError");
        check(&advise(&f));
    }

    #[test]
    fn timeouts_with_state_kept_or_lost() {
        let mut f = facts(
            Language::Python,
            "timeout",
            "import time\nfor i in range(100):\n    time.sleep(1)\n",
        );
        let a = advise(&f);
        check(&a);
        assert!(a.summary.contains("kept its state"));
        assert!(says(&a, "sleeps (line 3)"), "{a:#?}");
        let call = a.next_call.unwrap();
        assert_eq!(call.tool, "execute_code");
        assert_eq!(call.arguments["timeout"], 60);
        assert_eq!(call.arguments["session_id"], "s1");

        f.state_lost = true;
        f.timeout_secs = 300.0;
        let a = advise(&f);
        check(&a);
        assert!(a.summary.contains("gone"));
        assert!(a.next_call.is_none(), "already at the maximum");

        let f = facts(Language::JavaScript, "timeout", "while (true) {}");
        let a = advise(&f);
        check(&a);
        assert!(says(&a, "never ends"));
        assert!(a.next_call.is_none());
    }

    #[test]
    fn stack_overflow_suggests_iteration_not_recursion_limit() {
        let a = py_error(
            "stack_overflow",
            "def depth(n):\n    return 1 + depth(n - 1)\ndepth(10**5)",
            "RecursionError",
            "RecursionError: maximum recursion depth exceeded",
            "",
        );
        assert!(
            says(&a, "`depth` (defined at line 1) calls itself"),
            "{a:#?}"
        );
        assert!(says(&a, "sys.setrecursionlimit is not a fix"));
        let mut f = facts(
            Language::JavaScript,
            "stack_overflow",
            "function f(){return f()+1}; f()",
        );
        f.error_message = Some("maximum call stack exceeded (recursion too deep)");
        let a = advise(&f);
        check(&a);
        assert!(says(&a, "`f`"));
    }

    #[test]
    fn syntax_errors_quote_line_and_column() {
        let a = py_error(
            "syntax_error",
            "x = [1,\n  2\nprint(x",
            "SyntaxError",
            "SyntaxError: '(' was never closed (<cell 1>, line 3)",
            "  File \"<cell 1>\", line 3\n    print(x\n         ^\nSyntaxError: '(' was never closed\n",
        );
        assert!(a.summary.contains("line 3: `print(x`"), "{a:#?}");
        assert!(says(&a, "not closed"));

        let a = py_error(
            "syntax_error",
            "  x = 1",
            "IndentationError",
            "IndentationError: unexpected indent (<cell 1>, line 1)",
            "  File \"<cell 1>\", line 1\n    x=1\nIndentationError: unexpected indent\n",
        );
        assert!(says(&a, "common leading indentation"), "{a:#?}");

        let a = py_error(
            "syntax_error",
            "const x = 1;\nconsole.log(x);",
            "SyntaxError",
            "SyntaxError: invalid syntax (<cell 1>, line 1)",
            "",
        );
        let call = a.next_call.unwrap();
        assert_eq!(call.arguments["language"], "javascript");
        assert!(call.arguments.get("session_id").is_none());

        let a = js_error(
            "syntax_error",
            "let x: number = 1;",
            "SyntaxError",
            "SyntaxError: unexpected token in expression: ':'",
            "Uncaught SyntaxError: unexpected token\n    at <cell 2>:1:6\n",
        );
        assert!(says(&a, "not TypeScript"), "{a:#?}");
    }

    #[test]
    fn output_limit() {
        let mut f = facts(Language::Python, "output_limit", "print('x' * 10**7)");
        f.stdout_truncated = true;
        let a = advise(&f);
        check(&a);
        assert!(says(&a, "open('output.txt', 'w')"));
        let f = facts(
            Language::JavaScript,
            "output_limit",
            "console.log('x'.repeat(1e7))",
        );
        let a = advise(&f);
        check(&a);
        assert!(says(&a, "writeText('output.txt'"));
    }

    #[test]
    fn worker_crash_reruns_in_the_same_session() {
        let mut f = facts(
            Language::Python,
            "worker_crashed",
            "import json\ndata = json.load(open('big.json'))",
        );
        f.state_lost = true;
        f.memory_bytes = 1000 << 20;
        let a = advise(&f);
        check(&a);
        assert!(a.summary.contains("files in /app are kept"));
        assert!(says(&a, "Memory was at"));
        let call = a.next_call.unwrap();
        assert_eq!(call.tool, "execute_code");
        assert_eq!(call.arguments["session_id"], "s1");
        let long = "x = 1\n".repeat(2000);
        let f = facts(Language::Python, "worker_crashed", &long);
        let a = advise(&f);
        check(&a);
        assert!(
            a.next_call.unwrap().arguments["code"]
                .as_str()
                .unwrap()
                .len()
                < 100
        );
    }

    #[test]
    fn invalid_session_and_capacity_and_system_errors() {
        let mut f = facts(Language::Python, "invalid_session", "print(1)");
        f.session_id = "old-session";
        let a = advise(&f);
        check(&a);
        let call = a.next_call.unwrap();
        assert_eq!(call.tool, "execute_code");
        assert!(call.arguments.get("session_id").is_none());
        let long = "#\n".repeat(5000);
        let f = facts(Language::Python, "invalid_session", &long);
        assert_eq!(advise(&f).next_call.unwrap().tool, "create_session");

        let f = facts(Language::JavaScript, "resources_exhausted", "1");
        let a = advise(&f);
        check(&a);
        assert!(says(&a, "destroy_session"));
        assert_eq!(a.next_call.unwrap().tool, "get_workspace_info");

        let mut f = facts(Language::Python, "system_error", "print(1)");
        f.error_message = Some("worker protocol error");
        let a = advise(&f);
        check(&a);
        assert_eq!(a.next_call.unwrap().tool, "execute_code");

        let f = facts(
            Language::Python,
            "disk_quota",
            "open('big', 'w').write('x' * 10**9)",
        );
        let a = advise(&f);
        check(&a);
        assert!(says(&a, "gzip"));

        let f = facts(Language::Python, "cancelled", "x = 1");
        let a = advise(&f);
        check(&a);
        assert_eq!(a.next_call.unwrap().tool, "get_workspace_info");
    }

    #[test]
    fn python_runtime_errors_by_exception() {
        let tb = "Traceback (most recent call last):\n  File \"<cell 1>\", line 2, in <module>\n    d['k']\nKeyError: 'k'\n";
        let a = py_error(
            "runtime_error",
            "d = {}\nd['k']",
            "KeyError",
            "KeyError: 'k'",
            tb,
        );
        assert!(
            a.summary.contains("KeyError: 'k' at line 2: `d['k']`"),
            "{a:#?}"
        );
        assert!(says(&a, "d.get('k', default)"));

        let cases = [
            (
                "IndexError",
                "IndexError: list index out of range",
                "len(x)",
            ),
            (
                "TypeError",
                "TypeError: 'NoneType' object is not subscriptable",
                "returned None",
            ),
            (
                "TypeError",
                "TypeError: 'int' object is not callable",
                "shadows a function",
            ),
            (
                "TypeError",
                "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
                "convert explicitly",
            ),
            (
                "AttributeError",
                "AttributeError: 'NoneType' object has no attribute 'group'",
                "is None",
            ),
            (
                "AttributeError",
                "AttributeError: module 'json' has no attribute 'laods'",
                "/app/json.py",
            ),
            (
                "ValueError",
                "ValueError: invalid literal for int() with base 10: 'abc'",
                "not a number",
            ),
            (
                "ZeroDivisionError",
                "ZeroDivisionError: division by zero",
                "denominator",
            ),
            (
                "UnicodeDecodeError",
                "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 0",
                "latin-1",
            ),
            (
                "JSONDecodeError",
                "JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
                "empty or not JSON",
            ),
            (
                "FileExistsError",
                "FileExistsError: [Errno 20] File exists: 'out'",
                "exist_ok=True",
            ),
            (
                "UnboundLocalError",
                "UnboundLocalError: cannot access local variable 'n'",
                "global name",
            ),
            (
                "ImportError",
                "ImportError: cannot import name 'x' from 'json'",
                "shadows it",
            ),
            ("StopIteration", "StopIteration", "next(it, None)"),
            (
                "OperationalError",
                "OperationalError: no such table: users",
                "CREATE TABLE",
            ),
            ("WeirdError", "WeirdError: something", "print the values"),
        ];
        for (name, message, needle) in cases {
            let a = py_error("runtime_error", "x = 1", name, message, "");
            assert!(says(&a, needle), "{name}: {a:#?}");
        }
    }

    #[test]
    fn name_errors_explain_lost_state() {
        let mut f = facts(Language::Python, "runtime_error", "print(df.head())");
        f.error_name = Some("NameError");
        f.error_message = Some("NameError: name 'df' is not defined");
        let a = advise(&f);
        check(&a);
        assert!(says(&a, "`df` is not defined in this session"), "{a:#?}");
        f.state_lost = true;
        let a = advise(&f);
        check(&a);
        assert!(says(&a, "restarted, so `df`"), "{a:#?}");
        assert_eq!(
            a.actionable_guidance
                .iter()
                .filter(|g| g.contains("restarted"))
                .count(),
            1
        );

        f.error_message = Some("NameError: name 'json' is not defined");
        f.state_lost = false;
        assert!(says(&advise(&f), "add `import json`"));
    }

    #[test]
    fn wasi_limits_as_runtime_errors() {
        let a = py_error(
            "runtime_error",
            "import subprocess\nsubprocess.run(['ls'])",
            "OSError",
            "OSError: [Errno 58] wasi does not support processes.",
            "",
        );
        assert!(a.summary.contains("no processes"));
        let a = py_error(
            "runtime_error",
            "import os; os.system('ls')",
            "AttributeError",
            "AttributeError: module 'os' has no attribute 'system'",
            "",
        );
        assert!(a.summary.contains("no processes"));
        let a = py_error(
            "runtime_error",
            "import socket",
            "AttributeError",
            "AttributeError: module '_socket' has no attribute 'getaddrinfo'",
            "",
        );
        assert!(a.summary.contains("network"));
        let a = py_error(
            "runtime_error",
            "t.start()",
            "RuntimeError",
            "RuntimeError: can't start new thread",
            "",
        );
        assert!(a.summary.contains("single-threaded"));
        let a = py_error(
            "runtime_error",
            "x = input()",
            "EOFError",
            "EOFError: EOF when reading a line",
            "",
        );
        assert!(a.summary.contains("stdin"));
    }

    #[test]
    fn earlier_cell_frames_are_not_quoted_as_this_code() {
        let stderr = "Traceback (most recent call last):\n  File \"<cell 5>\", line 1, in <module>\n  File \"<cell 2>\", line 3, in helper\nKeyError: 'x'\n";
        let a = py_error(
            "runtime_error",
            "helper()",
            "KeyError",
            "KeyError: 'x'",
            stderr,
        );
        assert!(
            a.summary.contains("earlier call (<cell 2>, line 3)"),
            "{a:#?}"
        );
    }

    #[test]
    fn every_error_type_gets_two_fixes_for_both_languages() {
        let types = [
            "syntax_error",
            "runtime_error",
            "missing_module",
            "timeout",
            "cancelled",
            "out_of_fuel",
            "out_of_memory",
            "stack_overflow",
            "output_limit",
            "path_restriction",
            "disk_quota",
            "worker_crashed",
            "resources_exhausted",
            "invalid_session",
            "system_error",
            "command_failed",
            "something_new",
        ];
        for language in [Language::Python, Language::JavaScript] {
            for error_type in types {
                for code in ["", "x = 1", "é\u{0}'\"`"] {
                    let mut f = ErrorFacts::new(language, error_type, code, "");
                    check(&advise(&f));
                    f.state_lost = true;
                    f.stdout_truncated = true;
                    check(&advise(&f));
                }
            }
        }
    }

    #[test]
    fn hostile_evidence_does_not_panic() {
        let junk = [
            "'",
            "''",
            "<cell ",
            "<cell 99999999999999999999>, line x",
            "No module named ",
            "\u{fffd}'é'",
            " is not defined",
            "<cell 1>:",
        ];
        for s in junk {
            for language in [Language::Python, Language::JavaScript] {
                let mut f = ErrorFacts::new(language, "runtime_error", s, s);
                f.error_name = Some(s);
                f.error_message = Some(s);
                f.stderr = s;
                check(&advise(&f));
                f.error_type = "missing_module";
                check(&advise(&f));
                f.error_type = "syntax_error";
                check(&advise(&f));
            }
        }
    }

    #[test]
    fn disk_quota_quotes_the_real_quota_and_only_real_fixes() {
        let disk = DiskFacts {
            quota_bytes: 5_000_000,
            quota_files: 200,
            used_bytes: 4_900_000,
            used_files: 200,
            file_cap_bytes: 256 << 20,
        };
        for language in [Language::Python, Language::JavaScript] {
            let mut f = facts(
                language,
                "disk_quota",
                "for i in range(10**6): open(f'f{i}', 'w')",
            );
            f.error_message = Some("OSError: [Errno 19] Disk quota exceeded");
            f.disk = Some(disk);
            let a = advise(&f);
            check(&a);
            assert!(
                a.summary
                    .contains("4.77 MiB in 200 files, directories and links")
                    && a.summary.contains("now hold 4.67 MiB in 200."),
                "{a:#?}"
            );
            for needle in [
                "du -sh /app /tmp",
                "rm -r /app/",
                "reset_workspace",
                "\"medium\" (4 GiB in 50000 files)",
            ] {
                assert!(says(&a, needle), "{needle}: {a:#?}");
            }
            let call = a.next_call.unwrap();
            assert_eq!(
                (call.tool.as_str(), call.arguments["command"].as_str()),
                ("execute_command", Some("du -sh /app /tmp"))
            );
        }
        // The largest flavor's quota: no bigger flavor is proposed.
        let mut f = facts(Language::Python, "disk_quota", "x");
        f.disk = Some(DiskFacts {
            quota_bytes: 16 << 30,
            quota_files: 100_000,
            ..disk
        });
        let a = advise(&f);
        check(&a);
        assert!(!says(&a, "larger flavor"), "{a:#?}");
        // One file too large is the per-file limit, not the quota.
        let mut f = facts(Language::Python, "disk_quota", "x");
        f.error_message = Some("OSError: [Errno 27] File too large");
        f.disk = Some(disk);
        let a = advise(&f);
        check(&a);
        assert!(
            a.summary.contains("single file") && a.summary.contains("256 MiB"),
            "{a:#?}"
        );
        assert!(says(&a, "\"large\" (4 GiB per file)"), "{a:#?}");
    }
}
