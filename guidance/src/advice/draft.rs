//! [`Draft`]: advice under construction, shared by every family. It owns the facts, what the
//! code analysis found in the failed code, and the building blocks of advice: deduplicated
//! fixes, ordered documentation pages, quoting the exception and its place in the code, and
//! ready tool calls with valid arguments. Its own words (the fallback fixes, where in the code
//! the failure is) live in `words/draft.toml`.

use sandbox_protocol::{ErrorType, Language, Runtime};
use serde_json::{Value, json};

use super::super::analyze::CodeFacts;
use super::super::docs::ERRORS;
use super::super::{MAX_ECHOED_CODE, NextCall, clip};
use super::evidence::{Location, locate, tail, valid_session_id};
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
}

impl<'f, 'a> Draft<'f, 'a> {
    pub(super) fn new(f: &'f ErrorFacts<'a>, table: &'f ImportFuelTable) -> Self {
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
    fn location(&self) -> Option<Location> {
        locate(
            self.f.stderr,
            self.f.error_message.unwrap_or(""),
            self.f.language,
        )
    }

    /// The source line the failure points at, when it is in this call's code.
    /// The fix of the first entry of the words list `id` (`known_message`, `known_syntax`)
    /// whose needles all match: "needles => fix", needles separated by " & ", each looked for
    /// in `lower` (the lowercased error), or after `code:` in the lowercased code, after
    /// `line:` in the lowercased failing line, after `start:` at the start of that line (any
    /// line of the code when the failing one is not known).
    pub(super) fn known_fix(&self, id: &str, lower: &str) -> Option<String> {
        let code = self.f.code.to_lowercase();
        let lines: Vec<String> = match self.error_line() {
            Some(line) => vec![line.trim().to_lowercase()],
            None => code.lines().map(|l| l.trim().to_owned()).collect(),
        };
        words::list(id).iter().find_map(|entry| {
            let (needles, fix) = entry.split_once(" => ")?;
            let matches = |needle: &str| {
                if let Some(n) = needle.strip_prefix("code:") {
                    code.contains(n)
                } else if let Some(n) = needle.strip_prefix("line:") {
                    lines.iter().any(|line| line.contains(n))
                } else if let Some(n) = needle.strip_prefix("start:") {
                    lines.iter().any(|line| line.starts_with(n))
                } else {
                    lower.contains(needle)
                }
            };
            needles.split(" & ").all(matches).then(|| fix.to_owned())
        })
    }

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
