//! Host APIs a snippet reaches for that the sandbox does not have: processes, threads, the
//! network and stdin in Python; Node.js and browser globals, the network, processes and the
//! `[value, error]` pairs of QuickJS's `os` functions in JavaScript. The callees it matches and
//! what it says live in `words/analysis.toml`.

use std::collections::HashSet;

use sandbox_protocol::Language;

use super::super::scan::Kind;
use super::facts::CodeFacts;
use super::findings::Analysis;
use crate::words::{self, say};

/// The why of each Node.js and browser global QuickJS does not have, keyed by its name.
const NODE_GLOBAL_WHY: &str = "node_global.why.";

/// Reports the unavailable host APIs of the snippet's language.
pub(super) fn api_findings(facts: &CodeFacts<'_>, out: &mut Analysis) {
    match facts.language() {
        Language::Python => python_api_findings(facts, out),
        Language::JavaScript => {
            js_call_findings(facts, out);
            node_global_findings(facts, out);
            tuple_api_findings(facts, out);
        }
    }
}

/// Python calls that need processes, threads, the network or stdin, and `__file__`.
fn python_api_findings(facts: &CodeFacts<'_>, out: &mut Analysis) {
    for (callee, line, _) in facts.calls.iter() {
        let (c, line) = (callee.as_str(), *line);
        let listed = |id: &str| words::list(id).contains(callee);
        if listed("py_process.calls") || c.starts_with("subprocess.") {
            out.find("subprocess", Some(line), format!("{c}(...)"));
            out.block(say!("py_process.warning", callee = c, line = line));
            out.suggest(words::text("py_process.suggestion"));
        } else if listed("py_thread.calls") {
            out.find("threads", Some(line), format!("{c}(...)"));
            out.block(say!("py_thread.warning", callee = c, line = line));
            out.suggest(words::text("py_thread.suggestion"));
        } else if listed("py_network.calls") {
            out.find("network", Some(line), format!("{c}(...)"));
            out.block(say!("py_network.warning", callee = c, line = line));
            out.suggest(words::text("py_network.suggestion"));
        } else if c == "input" {
            out.find("stdin", Some(line), words::text("py_input.finding"));
            out.block(say!("py_input.warning", line = line));
        } else if c == "sys.setrecursionlimit" {
            out.warn(say!("py_recursion_limit.warning", line = line));
        }
    }
    if facts
        .src
        .tokens
        .iter()
        .any(|t| t.kind == Kind::Ident && t.text == "__file__")
    {
        out.block(words::text("py_dunder_file.warning"));
    }
}

/// JavaScript calls that need the network, processes or threads.
fn js_call_findings(facts: &CodeFacts<'_>, out: &mut Analysis) {
    for (callee, line, _) in facts.calls.iter() {
        let listed = |id: &str| words::list(id).contains(callee);
        if listed("js_network.calls") {
            out.find("network", Some(*line), format!("{callee}(...)"));
            out.block(say!("js_network.warning", callee = callee, line = line));
        } else if listed("js_process.calls") {
            out.find("subprocess", Some(*line), format!("{callee}(...)"));
            out.block(say!("js_process.warning", callee = callee, line = line));
        }
    }
}

/// Node.js and browser globals used as free names (not members, not object keys).
fn node_global_findings(facts: &CodeFacts<'_>, out: &mut Analysis) {
    let src = &facts.src;
    let mut flagged = HashSet::new();
    for (i, t) in src.tokens.iter().enumerate() {
        if t.kind != Kind::Ident || src.is_member(i) || src.is(i + 1, ":") {
            continue;
        }
        if let Some(why) = words::find(&format!("{NODE_GLOBAL_WHY}{}", t.text))
            && flagged.insert(t.text)
        {
            let name = t.text;
            out.find("node_apis", Some(t.line), format!("`{name}`"));
            out.block(say!(
                "node_global.warning",
                name = name,
                line = t.line,
                why = why
            ));
        }
    }
}

/// QuickJS `std`/`os` use, and `[value, error]` pairs assigned as if they were the value.
fn tuple_api_findings(facts: &CodeFacts<'_>, out: &mut Analysis) {
    if facts
        .calls
        .iter()
        .any(|(c, _, _)| c.starts_with("os.") || c.starts_with("std."))
    {
        out.find(
            "quickjs_tuple_api",
            None,
            words::text("quickjs_std_os.finding"),
        );
    }
    for (callee, line, var) in facts.tuple_misuse().into_iter().take(10) {
        let (callee, var) = (callee.as_str(), var.as_str());
        out.find(
            "quickjs_tuple_api",
            Some(line),
            say!("quickjs_tuple.finding", var = var, callee = callee),
        );
        out.block(say!(
            "quickjs_tuple.warning",
            callee = callee,
            line = line,
            var = var
        ));
        out.suggest(say!("quickjs_tuple.suggestion", var = var, callee = callee));
    }
}
