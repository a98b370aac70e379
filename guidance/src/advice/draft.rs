//! [`Draft`]: advice under construction, shared by every family. It owns the facts, what the
//! code analysis found in the failed code, and the building blocks of advice: deduplicated
//! fixes, ordered documentation pages, quoting the exception and its place in the code, and
//! ready tool calls with valid arguments. Its own words (the fallback fixes, where in the code
//! the failure is) live in `words/draft.toml`.
//!
//! The tables of known causes in the words files (`known_message`, `known_syntax`,
//! `command_failed.known`, `known_loop`, ...) are read here, by [`Draft::known_fix`]: each
//! entry is `"needles => fix"`, the needles separated by ` & ` (all must match), each needle
//! one or more alternatives separated by ` | ` (one must match), each alternative looked for
//! in the error, or after `code:` in the code, `line:` in the failing line, `start:` at its
//! start (`first_known_fix` has the details).

use sandbox_protocol::{ErrorType, Language, Runtime};
use serde_json::{Value, json};

use super::super::analyze::CodeFacts;
use super::super::docs::ERRORS;
use super::super::{MAX_ECHOED_CODE, NextCall, clip};
use super::evidence::{Location, locate, tail, valid_session_id};
use super::shell_habits::inline_program;
use super::stops::LoopText;
use super::{Advice, ErrorFacts};
use crate::inventory::imports::ImportFuelTable;
use crate::words::{self, say};

/// Advice under construction.
pub(super) struct Draft<'f, 'a> {
    pub(super) f: &'f ErrorFacts<'a>,
    /// Import costs, for "the first import is expensive" and "did you mean".
    pub(super) table: &'f ImportFuelTable,
    /// What the analysis finds in the failed code.
    pub(super) code: CodeFacts<'a>,
    pub(super) summary: String,
    pub(super) fixes: Vec<String>,
    docs: Vec<&'static str>,
    pub(super) next: Option<NextCall>,
    /// The restart was already explained; do not repeat it.
    pub(super) restart_explained: bool,
    /// The code's loops as the loop checks read them, read on first need.
    loop_text: std::cell::OnceCell<LoopText<'a>>,
}

impl<'f, 'a> Draft<'f, 'a> {
    pub(super) fn new(f: &'f ErrorFacts<'a>, table: &'f ImportFuelTable) -> Self {
        // A command line that ran out of time or fuel ran its inline program
        // (`python -c '...'`): that program's loops are what the limits advice reads.
        let (code, language) = match (f.command, f.error_type) {
            (true, ErrorType::Timeout | ErrorType::OutOfFuel) => {
                inline_program(f.code).unwrap_or((f.code, f.language))
            }
            _ => (f.code, f.language),
        };
        Self {
            f,
            table,
            code: CodeFacts::new(code, language),
            summary: String::new(),
            fixes: Vec::new(),
            docs: Vec::new(),
            next: None,
            restart_explained: false,
            loop_text: std::cell::OnceCell::new(),
        }
    }

    /// The failed code's loops, read once however many checks ask ([`LoopText`]).
    pub(super) fn loop_text(&self) -> &LoopText<'a> {
        self.loop_text.get_or_init(|| LoopText::read(self.f.code))
    }

    /// Adds a fix unless the same text is already there.
    pub(super) fn fix(&mut self, text: impl Into<String>) {
        let text = text.into();
        if !self.fixes.contains(&text) {
            self.fixes.push(text);
        }
    }

    /// Applies rule `id` of the words files: its `summary`, when it has one, and each of its
    /// `fixes`, in order.
    pub(super) fn rule(&mut self, id: &str) {
        self.rule_with(id, &[]);
    }

    /// [`Draft::rule`] with the `{name}` placeholders filled from `values`.
    pub(super) fn rule_with(&mut self, id: &str, values: &[(&str, &dyn std::fmt::Display)]) {
        let summary = words::find(&format!("{id}.summary"));
        let fixes = words::find_list(&format!("{id}.fixes"));
        if summary.is_none() && fixes.is_none() {
            tracing::error!(id, "guidance rule missing");
        }
        if let Some(summary) = summary {
            self.summary = words::fill(summary, values);
        }
        for fix in fixes.unwrap_or(&[]) {
            self.fix(words::fill(fix, values));
        }
    }

    /// How many fixes the advice has so far.
    pub(super) fn fix_count(&self) -> usize {
        self.fixes.len()
    }

    /// Adds a documentation page unless it is already there.
    pub(super) fn doc(&mut self, uri: &'static str) {
        if !self.docs.contains(&uri) {
            self.docs.push(uri);
        }
    }

    /// The most relevant page goes first, even when a more general one was added before.
    pub(super) fn doc_first(&mut self, uri: &'static str) {
        self.docs.retain(|d| *d != uri);
        self.docs.insert(0, uri);
    }

    pub(super) fn python(&self) -> bool {
        self.f.language == Language::Python
    }

    /// The language's name in tool arguments.
    pub(super) fn lang(&self) -> &'static str {
        self.f.language.as_str()
    }

    /// The message without a leading `Name: ` (Python's messages repeat the class).
    pub(super) fn message(&self) -> &'a str {
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
    pub(super) fn exception(&self) -> String {
        let m = clip(self.message(), 300);
        match self.f.error_name {
            Some(name) if !m.is_empty() => format!("{name}: {m}"),
            Some(name) => name.to_owned(),
            None => m,
        }
    }

    /// Everything the evidence says, for substring checks.
    pub(super) fn evidence(&self) -> String {
        format!(
            "{} {} {}",
            self.f.error_name.unwrap_or(""),
            self.f.error_message.unwrap_or(""),
            tail(self.f.stderr, 4000)
        )
    }

    /// `args` with this session's id, when it is a valid one.
    pub(super) fn session_args(&self, mut args: Value) -> Value {
        if valid_session_id(self.f.session_id) {
            args["session_id"] = json!(self.f.session_id);
        }
        args
    }

    /// `create_session` arguments for a session like this one (its language, and its runtime
    /// when that is not the language's default, so the code finds the same packages) with
    /// `extra` settings.
    pub(super) fn new_session_args(&self, extra: Value) -> Value {
        let mut args = json!({"language": self.lang()});
        if self.f.runtime != Runtime::default_for(self.f.language) {
            args["runtime"] = json!(self.f.runtime.as_str());
        }
        if let (Some(args), Value::Object(extra)) = (args.as_object_mut(), extra) {
            args.extend(extra);
        }
        args
    }

    /// How [`Draft::new_session_args`] reads in a fix: `language: "python"` (with the runtime
    /// when it is not the default), to go inside `create_session {...}`.
    pub(super) fn new_session_text(&self) -> String {
        if self.f.runtime == Runtime::default_for(self.f.language) {
            format!("language: \"{}\"", self.lang())
        } else {
            format!(
                "language: \"{}\", runtime: \"{}\"",
                self.lang(),
                self.f.runtime
            )
        }
    }

    /// The fuel per call a session of `flavor` gets on this session's runtime by default.
    pub(super) fn flavor_fuel(&self, flavor: &sandbox_protocol::FlavorSpec) -> u64 {
        sandbox_protocol::flavor_execution_fuel(flavor, self.f.runtime)
    }

    /// `execute_code` with this call's code (only when it is short enough to repeat).
    pub(super) fn rerun(&self, timeout: Option<u64>, reason: &str) -> Option<NextCall> {
        if self.f.code.trim().is_empty() || self.f.code.len() > MAX_ECHOED_CODE {
            return None;
        }
        // A command line is run again as one: execute_code would read it as the language's code.
        let (tool, mut args) = if self.f.command {
            let args = json!({"command": self.f.code, "language": self.lang()});
            ("execute_command", self.session_args(args))
        } else {
            let args = json!({"code": self.f.code, "language": self.lang()});
            ("execute_code", self.session_args(args))
        };
        if let Some(t) = timeout {
            args["timeout"] = json!(t);
        }
        Some(NextCall::new(tool, args, reason))
    }

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
    pub(super) fn workspace_info_call(&self, reason: &str) -> NextCall {
        NextCall::new("get_workspace_info", self.session_or_language(), reason)
    }

    /// `execute_code` listing /app, in the session's language.
    pub(super) fn list_files_call(&self, reason: &str) -> NextCall {
        let code = words::text(if self.python() {
            "list_files.python"
        } else {
            "list_files.javascript"
        });
        NextCall::new(
            "execute_code",
            self.session_args(json!({"code": code, "language": self.lang()})),
            reason,
        )
    }

    /// Where the failure happened, read off the traceback or stack.
    pub(super) fn location(&self) -> Option<Location> {
        locate(
            self.f.stderr,
            self.f.error_message.unwrap_or(""),
            self.f.language,
        )
    }

    /// The fix of the first entry of the words list `id` (`known_message`, `known_syntax`,
    /// `command_failed.known`, `known_loop`, ...) whose needles all match `lower` (the
    /// lowercased error), this call's code and its failing line; see [`first_known_fix`] for
    /// the form of the entries.
    pub(super) fn known_fix(&self, id: &str, lower: &str) -> Option<String> {
        let code = self.f.code.to_lowercase();
        let lines: Vec<String> = match self.error_line() {
            Some(line) => vec![line.trim().to_lowercase()],
            None => code.lines().map(|l| l.trim().to_owned()).collect(),
        };
        let haystack = Haystack {
            lower,
            code: &code,
            lines: &lines,
        };
        first_known_fix(words::list(id), &haystack).map(str::to_owned)
    }

    /// The source line the failure points at, when it is in this call's code.
    pub(super) fn error_line(&self) -> Option<&'a str> {
        let loc = self.location().filter(|l| l.current)?;
        self.f.code.lines().nth(loc.line.checked_sub(1)? as usize)
    }

    /// "line 3: `d['k']`" for the current cell, or where in an earlier cell.
    pub(super) fn where_text(&self) -> Option<String> {
        let loc = self.location()?;
        if !loc.current {
            return Some(say!("where.earlier_cell", cell = loc.cell, line = loc.line));
        }
        let source = self
            .f
            .code
            .lines()
            .nth(loc.line.checked_sub(1)? as usize)?
            .trim();
        let column = loc
            .col
            .map(|c| say!("where.column", column = c))
            .unwrap_or_default();
        Some(if source.is_empty() {
            say!("where.line", line = loc.line, column = column)
        } else {
            say!(
                "where.line_source",
                line = loc.line,
                column = column,
                source = clip(source, 120),
            )
        })
    }

    /// After a restart, say so once.
    pub(super) fn state_note(&mut self) {
        if self.f.state_lost && !self.restart_explained {
            self.restart_explained = true;
            self.fix(words::text("draft.state_lost"));
        }
    }

    /// The advice: at least two fixes, a summary, the errors page last.
    pub(super) fn finish(mut self) -> Advice {
        if self.f.stdout_truncated && self.f.error_type != ErrorType::OutputLimit {
            self.fix(words::text("draft.stdout_truncated"));
        }
        // Every advice has at least two concrete steps.
        for fallback in words::list("draft.fallback_fixes") {
            if self.fixes.len() >= 2 {
                break;
            }
            self.fix(fallback.as_str());
        }
        if self.summary.is_empty() {
            self.summary = say!("draft.failed", error_type = self.f.error_type);
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

/// What the needles of a known-cause entry are looked for in (all lowercased).
struct Haystack<'h> {
    /// The error: name, message, stderr (or whatever text the caller checks).
    lower: &'h str,
    /// The call's code.
    code: &'h str,
    /// The failing line, trimmed; every line of the code when the failing one is not known.
    lines: &'h [String],
}

/// The fix of the first of `entries` whose needles all match `haystack`.
///
/// Each entry is `"needles => fix"` (split at the first ` => `, so a fix may hold one and a
/// needle may not). The needles are separated by ` & `, and every one must match. A needle
/// may hold alternatives separated by ` | `, any one of which matching is enough: ` | ` binds
/// tighter than ` & `, so `code:exists( | code:isfile( & line:while` means (`exists(` or
/// `isfile(` in the code) and `while` in the failing line. Each alternative is, by its prefix:
///
/// - `code:TEXT`: TEXT is in the lowercased code;
/// - `line:TEXT`: TEXT is in the lowercased failing line (any line of the code when the
///   failing one is not known);
/// - `start:TEXT`: that line starts with TEXT;
/// - `TEXT` (no prefix): TEXT is in the lowercased error.
///
/// Needles are matched as written (spaces included: `code:get ` wants the space), and none
/// can hold a literal ` & ` or ` | `; write `code:cat x |` or `code:| grep` for a pipe.
fn first_known_fix<'e>(entries: &'e [String], haystack: &Haystack) -> Option<&'e str> {
    entries.iter().find_map(|entry| {
        let (needles, fix) = entry.split_once(" => ")?;
        needles
            .split(" & ")
            .all(|needle| needle.split(" | ").any(|alt| haystack.matches(alt)))
            .then_some(fix)
    })
}

impl Haystack<'_> {
    /// Whether one alternative of a needle (`code:x`, `line:x`, `start:x` or `x`) matches.
    fn matches(&self, alternative: &str) -> bool {
        if let Some(n) = alternative.strip_prefix("code:") {
            self.code.contains(n)
        } else if let Some(n) = alternative.strip_prefix("line:") {
            self.lines.iter().any(|line| line.contains(n))
        } else if let Some(n) = alternative.strip_prefix("start:") {
            self.lines.iter().any(|line| line.starts_with(n))
        } else {
            self.lower.contains(alternative)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word lists read by [`Draft::known_fix`].
    const KNOWN_LISTS: &[&str] = &[
        "known_message.python",
        "known_message.javascript",
        "known_syntax.python",
        "known_syntax.javascript",
        "known_syntax.shell",
        "command_failed.known",
        "out_of_memory.known",
        "known_loop.python",
        "known_loop.javascript",
        "stack_overflow.hooks",
        "stack_overflow.hooks_javascript",
        "missing_module.known.list",
    ];

    /// The fix `entries` give for this error, code and failing line (all lowercase already).
    fn fix<'e>(entries: &'e [String], lower: &str, code: &str, line: &str) -> Option<&'e str> {
        let lines = [line.to_owned()];
        let haystack = Haystack {
            lower,
            code,
            lines: &lines,
        };
        first_known_fix(entries, &haystack)
    }

    fn entries(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|t| (*t).to_owned()).collect()
    }

    #[test]
    fn one_matching_alternative_is_enough() {
        let e = entries(&["code:os.path.exists | code:os.path.isfile & line:while => wait"]);
        for code in [
            "os.path.exists(p)",
            "os.path.isfile(p)",
            "os.path.isfile(p) os.path.exists(p)",
        ] {
            assert_eq!(fix(&e, "", code, "while x:"), Some("wait"), "{code}");
        }
        // Alternatives of plain needles, in the error.
        let e = entries(&["cannot mix bigint | cannot convert bigint => bigint"]);
        assert_eq!(
            fix(&e, "typeerror: cannot convert bigint to number", "", ""),
            Some("bigint")
        );
        assert_eq!(
            fix(&e, "typeerror: cannot mix bigint and other types", "", ""),
            Some("bigint")
        );
    }

    #[test]
    fn no_matching_alternative_is_no_match() {
        let e = entries(&["code:os.path.exists | code:os.path.isfile & line:while => wait"]);
        assert_eq!(fix(&e, "", "os.path.isdir(p)", "while x:"), None);
        assert_eq!(fix(&e, "", "os.path.isfile(p)", "if x:"), None);
        let e = entries(&["a | b => x"]);
        assert_eq!(fix(&e, "c", "a b", "a b"), None);
        assert_eq!(fix(&e, "", "", ""), None);
    }

    #[test]
    fn alternatives_bind_tighter_than_and() {
        // (a or b) and (c or d): one alternative of each needle.
        let e = entries(&["a | b & c | d => x"]);
        assert_eq!(fix(&e, "a c", "", ""), Some("x"));
        assert_eq!(fix(&e, "b d", "", ""), Some("x"));
        assert_eq!(fix(&e, "a d", "", ""), Some("x"));
        // Not (a) or (b and c) or (d): every needle must still match.
        assert_eq!(fix(&e, "a b", "", ""), None);
        assert_eq!(fix(&e, "d", "", ""), None);
        // The line needle is still required when an alternative of the first matches.
        let e = entries(&["code:exists( | code:isfile( & line:while => wait"]);
        assert_eq!(fix(&e, "", "isfile(p)", "if isfile(p):"), None);
        assert_eq!(
            fix(&e, "", "isfile(p)", "while not isfile(p):"),
            Some("wait")
        );
    }

    #[test]
    fn each_alternative_has_its_own_prefix() {
        let e = entries(&["code:alpha | line:beta | start:gamma | delta => x"]);
        assert_eq!(fix(&e, "", "alpha", ""), Some("x"));
        assert_eq!(fix(&e, "", "", "a beta"), Some("x"));
        assert_eq!(fix(&e, "", "", "gamma = 1"), Some("x"));
        assert_eq!(fix(&e, "delta", "", ""), Some("x"));
        // Each text only where its own prefix says: no prefix is inherited from the first.
        assert_eq!(
            fix(&e, "alpha beta", "beta gamma delta", "a gamma, delta"),
            None
        );
        let e = entries(&["code:alpha | beta => x"]);
        assert_eq!(fix(&e, "", "beta", "beta"), None);
        assert_eq!(fix(&e, "beta", "", ""), Some("x"));
    }

    #[test]
    fn the_first_matching_entry_wins_and_a_bare_bar_is_text() {
        let e = entries(&[
            "x & code:a | code:b => first",
            "x | y => second",
            "code:a|b => third",
        ]);
        assert_eq!(fix(&e, "x", "b", ""), Some("first"));
        assert_eq!(fix(&e, "y", "b", ""), Some("second"));
        assert_eq!(fix(&e, "", "a|b", ""), Some("third"));
        assert_eq!(fix(&e, "", "a b", ""), None);
        // A fix may hold ` => ` and ` | `: the needles end at the first ` => `.
        let e = entries(&["code:map( => use `xs.map(x => x | 1)` | or not"]);
        assert_eq!(
            fix(&e, "", "map(", ""),
            Some("use `xs.map(x => x | 1)` | or not")
        );
    }

    /// The real lists, through [`Draft::known_fix`]: the folded file-wait entry matches each of
    /// the forms it replaced, and nothing else.
    #[test]
    fn known_fix_reads_alternatives_in_the_word_lists() {
        let table = ImportFuelTable::default();
        let known = |language, code: &str, lower: &str, id: &str| {
            let f = ErrorFacts::new(language, ErrorType::Timeout, code, "");
            Draft::new(&f, &table).known_fix(id, lower)
        };
        let wait = |code: &str| known(Language::Python, code, "", "known_loop.python");
        for code in [
            "import os, time\nwhile not os.path.exists('/app/done'):\n    time.sleep(1)",
            "import os, time\nwhile not os.path.isfile('/app/done'):\n    time.sleep(1)",
            "until [ -f /app/done ]; do sleep 1; done",
            "while [ ! -e /app/done ]; do sleep 1; done",
        ] {
            let fix = wait(code).unwrap_or_else(|| panic!("no fix for {code:?}"));
            assert!(fix.starts_with("Nothing will create that file"), "{fix}");
        }
        assert_eq!(wait("import time\ntime.sleep(1)"), None);
        assert_eq!(wait("import os\nprint(os.path.isfile('/app/done'))"), None);
        let network = wait("import requests, time\nrequests.get(u)\ntime.sleep(5)").unwrap();
        assert!(network.starts_with("There is no network here"), "{network}");

        let json = |code: &str, lower: &str| {
            known(
                Language::JavaScript,
                code,
                lower,
                "known_message.javascript",
            )
        };
        let text = "const data = JSON.parse(text);";
        for lower in [
            "syntaxerror: unexpected token }",
            "syntaxerror: bad control character",
        ] {
            assert!(json(text, lower).is_some_and(|f| f.starts_with("JSON.parse found")));
        }
        assert_eq!(
            json("const n = 1;", "syntaxerror: bad control character"),
            None
        );
    }

    /// Every entry of every list has needles and a fix, no alternative is empty (an empty
    /// text matches everything), and a fix is said once per list: entries that share one are
    /// folded into alternatives, except where an entry between them must keep winning.
    #[test]
    fn known_lists_are_well_formed_and_fold_repeated_fixes() {
        // (list, fix start): repeated because an entry between the two copies could match the
        // same evidence with another fix, so moving one copy to the other would change which
        // entry wins.
        let kept_apart = [
            (
                "known_message.python",
                "A text column is among those aggregated",
            ),
            ("command_failed.known", "The `(` opens a regex group"),
        ];
        for id in KNOWN_LISTS {
            let list = words::find_list(id).unwrap_or_else(|| panic!("{id} is missing"));
            let mut seen: Vec<&str> = Vec::new();
            for entry in list {
                let (needles, fix) = entry
                    .split_once(" => ")
                    .unwrap_or_else(|| panic!("{id}: no ` => ` in {entry:?}"));
                assert!(!fix.trim().is_empty(), "{id}: no fix in {entry:?}");
                for alternative in needles.split(" & ").flat_map(|n| n.split(" | ")) {
                    let text = ["code:", "line:", "start:"]
                        .iter()
                        .find_map(|p| alternative.strip_prefix(p))
                        .unwrap_or(alternative);
                    assert!(!text.trim().is_empty(), "{id}: empty needle in {entry:?}");
                }
                if seen.contains(&fix) {
                    assert!(
                        kept_apart
                            .iter()
                            .any(|(list, start)| list == id && fix.starts_with(start)),
                        "{id}: the fix {fix:?} is repeated: fold its needles into alternatives"
                    );
                }
                seen.push(fix);
            }
        }
    }
}
