//! Advice about the JavaScript host: QuickJS is neither Node.js nor a browser. `require`, Node
//! and browser globals, npm packages, ES `import` statements, and QuickJS's `[value, error]`
//! pairs used as values; and the JavaScript exceptions (`TypeError`, runtime `SyntaxError`,
//! `RangeError`) with their usual causes. The words live in `words/js_host.toml`.

use serde_json::json;

use super::super::NextCall;
use super::super::docs::JAVASCRIPT;
use super::super::modules;
use super::super::scan::ImportKind;
use super::draft::Draft;
use super::evidence::{js_undefined_name, operand_of_member, quoted};
use super::runtime::mentions;
use crate::words::{self, say};

/// Where the reasons a Node.js or browser global does not exist are, by kind
/// (`js_node_global.why.process`).
const NODE_GLOBAL_WHY: &str = "js_node_global.why.";

impl<'a> Draft<'_, 'a> {
    /// A JavaScript runtime error that is about the host rather than the logic: an undefined
    /// Node.js, browser or sandbox global, a package that cannot load, or a `[value, error]`
    /// pair used as the value. Advice and true; false for an ordinary error.
    pub(super) fn js_host_failure(&mut self, name: &str, lower: &str) -> bool {
        if let Some(missing) = js_undefined_name(self.message())
            && self.js_undefined_global(&missing)
        {
            return true;
        }
        if mentions(lower, words::list("js_module_missing.signs")) {
            let module = quoted(self.f.error_message.unwrap_or(""))
                .map(str::to_owned)
                .or_else(|| self.code.imports.first().map(|i| i.module.clone()))
                .unwrap_or_default();
            self.js_module(&module);
            return true;
        }
        let misuse = self.code.tuple_misuse();
        if !misuse.is_empty()
            && (name == "TypeError" || mentions(lower, words::list("js_pair_as_value.signs")))
        {
            self.js_tuple(&misuse);
            return true;
        }
        false
    }

    /// `missing is not defined` for a global the host does not have: `require`, a Node.js or
    /// browser global, or a sandbox helper this runtime lacks.
    fn js_undefined_global(&mut self, missing: &str) -> bool {
        // Browser code fails on whichever missing name it reaches first (`URLSearchParams`
        // of `new URLSearchParams(window.location.search)`): the browser is the cause.
        let browser = words::find(&format!("{NODE_GLOBAL_WHY}browser"));
        if js_node_global(missing) != browser
            && let Some((global, line)) = self.browser_global(browser)
        {
            self.fix(say!(
                "js_node_global.browser_code",
                global = global,
                line = line
            ));
        }
        if missing == "require" {
            self.js_require();
        } else if let Some(why) = js_node_global(missing) {
            self.js_node_api(missing, why);
        } else if words::list("js_sandbox_global.names")
            .iter()
            .any(|n| n == missing)
        {
            self.rule_with("js_sandbox_global", &[("global", &missing)]);
            self.next = Some(NextCall::new(
                "list_runtimes",
                json!({}),
                words::text("js_sandbox_global.reason"),
            ));
            self.state_note();
        } else {
            return false;
        }
        true
    }

    /// The first browser global (`window`, `document`, ...: those [`js_node_global`] explains
    /// with `browser`) the code reads as a free name, and its line.
    fn browser_global(&self, browser: Option<&str>) -> Option<(&'a str, u32)> {
        let src = &self.code.src;
        src.tokens.iter().enumerate().find_map(|(i, t)| {
            let free = t.kind == crate::scan::Kind::Ident && !src.is_member(i);
            (free && browser.is_some() && js_node_global(t.text) == browser)
                .then_some((t.text, t.line))
        })
    }

    /// A JavaScript package that cannot load: only vendored packages exist.
    pub(super) fn js_module(&mut self, module: &str) {
        self.doc(JAVASCRIPT);
        if let Some(alternative) = modules::node_builtin(module) {
            self.fix(say!(
                "js_module_missing.node_builtin",
                module = module,
                alternative = alternative
            ));
        }
        self.rule_with("js_module_missing", &[("module", &module)]);
        self.next = Some(NextCall::new(
            "list_available_packages",
            json!({"language": "javascript"}),
            words::text("js_module_missing.reason"),
        ));
    }

    fn js_require(&mut self) {
        self.doc(JAVASCRIPT);
        let modules: Vec<String> = self
            .code
            .imports
            .iter()
            .filter(|i| i.kind == ImportKind::Require)
            .map(|i| i.module.clone())
            .collect();
        for m in modules.iter().take(2) {
            if let Some(alternative) = modules::node_builtin(m) {
                self.fix(say!(
                    "js_require.instead",
                    module = m,
                    alternative = alternative
                ));
            }
        }
        self.rule("js_require");
        self.next = Some(NextCall::new(
            "list_available_packages",
            json!({"language": "javascript"}),
            words::text("js_require.reason"),
        ));
    }

    fn js_node_api(&mut self, global: &str, why: &str) {
        self.doc(JAVASCRIPT);
        self.rule_with("js_node_global", &[("global", &global), ("why", &why)]);
        self.state_note();
    }

    fn js_tuple(&mut self, misuse: &[(String, u32, String)]) {
        let (callee, line, var) = &misuse[0];
        let exception = self.exception();
        self.rule_with(
            "js_pair_as_value",
            &[
                ("exception", &exception),
                ("callee", callee),
                ("line", line),
                ("var", var),
            ],
        );
        self.doc(JAVASCRIPT);
        self.state_note();
    }

    /// A JavaScript `SyntaxError`, `ReferenceError` or `InternalError` raised while running:
    /// a name declared twice across calls, a name left uninitialized by a failed call, text
    /// that is not JSON, a string past QuickJS's limit.
    pub(super) fn js_named_error(&mut self, name: &str, lower: &str, message: &str) {
        let unnamed = words::text("js_error.unnamed");
        match name {
            "SyntaxError" if lower.contains("redeclaration of") => {
                let quoted_name = quoted(message).unwrap_or(unnamed);
                self.rule_with("js_error.redeclared", &[("name", &quoted_name)]);
            }
            "SyntaxError" if lower.contains("json") => {
                for fix in words::list("js_error.not_json") {
                    self.fix(fix);
                }
            }
            "SyntaxError" => self.fix(words::text("js_error.eval")),
            "ReferenceError" if lower.contains("is not initialized") => {
                let var = js_uninitialized_name(message).unwrap_or(unnamed);
                match used_before_declared(self.f.code, var) {
                    Some((used, declared)) => self.fix(say!(
                        "js_error.used_before_declared",
                        name = var,
                        used = used,
                        declared = declared
                    )),
                    None => self.fix(say!("js_error.uninitialized", name = var)),
                }
            }
            "ReferenceError" => self.undefined_name(message),
            "InternalError" if lower.contains("string too long") => {
                self.fix(words::text("js_error.string_too_long"));
            }
            _ => self.fixed_exception_fixes(name),
        }
    }

    /// JavaScript `TypeError`: a value that is not what the code expects.
    pub(super) fn js_type_error(&mut self, lower: &str) {
        if lower.contains("is read-only") {
            let var = quoted(self.message()).unwrap_or(words::text("js_error.unnamed"));
            self.fix(say!("js_error.read_only", name = var));
        }
        if lower.contains("of undefined") {
            self.off_by_one_fix();
        }
        if lower.contains("not a function") {
            self.fix(words::text("js_error.not_a_function"));
        } else if lower.contains("cannot read property")
            || lower.contains("of undefined")
            || lower.contains("of null")
        {
            // The operand by name when the failing line shows it: `parts[2]` of `.trim`.
            let operand = quoted(self.message()).and_then(|property| {
                let line = self.error_line()?;
                operand_of_member(line, property).map(|o| (o.to_owned(), property.to_owned()))
            });
            // A property read off text (`raw.items` after `const raw = readText('x.json')`):
            // the text was never parsed, which is why the property is missing.
            if let Some((name, source)) = operand
                .as_ref()
                .and_then(|(o, _)| text_read_as_object(self.f.code, o))
            {
                let source = super::super::clip(source, 60);
                self.fix(say!(
                    "js_error.text_as_object",
                    name = name,
                    source = source
                ));
            }
            self.fix(match operand {
                Some((o, p)) => say!("js_error.undefined_operand", operand = o, property = p),
                None => words::text("js_error.undefined_value").to_owned(),
            });
        } else if lower.contains("not iterable") {
            self.fix(words::text("js_error.not_iterable"));
        }
        self.fix(words::text("js_error.log_type"));
    }
}

/// The name at the root of `operand` (`raw` of `raw.items`) and what the code sets it to,
/// when that is text: a string literal, or a call that returns a file's text (`readText(...)`,
/// the `js_error.text_sources` list). A property of text is undefined, the usual sign that
/// JSON was read and never parsed.
fn text_read_as_object<'c>(code: &'c str, operand: &str) -> Option<(String, &'c str)> {
    let name = super::stops::leading_name(operand)?;
    // A property path (`raw.users`), not a call's result (`text.match(...)` is not text).
    let path = &operand[name.len()..];
    (path.starts_with('.') && !path.contains('(')).then_some(())?;
    // Parsed somewhere (`data = JSON.parse(data)`): the text is not what is read.
    if code.contains(&format!("{name} = JSON.parse(")) {
        return None;
    }
    let sources = words::list("js_error.text_sources");
    code.lines().find_map(|line| {
        let line = line.trim();
        let rest = ["const ", "let ", "var "]
            .iter()
            .find_map(|k| line.strip_prefix(k))
            .unwrap_or(line);
        let value = rest
            .strip_prefix(name)?
            .trim_start()
            .strip_prefix('=')?
            .trim();
        let text = value.starts_with(['\'', '"', '`'])
            || sources.iter().any(|s| value.starts_with(s.as_str()));
        (text && !value.starts_with("==")).then(|| (name.to_owned(), value.trim_end_matches(';')))
    })
}

/// The lines (1-based) where `code` first uses `name` and where it declares it with
/// let/const/class, when the use comes first: the code itself reads it too early.
fn used_before_declared(code: &str, name: &str) -> Option<(usize, usize)> {
    let is_word = |line: &str| {
        line.match_indices(name).any(|(at, _)| {
            let before = line[..at].chars().next_back();
            let after = line[at + name.len()..].chars().next();
            let ident =
                |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$');
            !ident(before) && !ident(after)
        })
    };
    let declares = |line: &str| {
        ["class ", "const ", "let "]
            .iter()
            .any(|kw| line.trim_start().starts_with(kw) && line.contains(&format!("{kw}{name}")))
    };
    let declared = code.lines().position(declares)? + 1;
    let used = code.lines().position(|l| is_word(l) && !declares(l))? + 1;
    (used < declared).then_some((used, declared))
}

/// `fs` from "fs is not initialized" (QuickJS's temporal dead zone message).
fn js_uninitialized_name(message: &str) -> Option<&str> {
    let head = message.split(" is not initialized").next()?;
    let name = head.rsplit([' ', ':', '\'']).find(|n| !n.is_empty())?;
    (name.len() <= 64 && message.contains(" is not initialized")).then_some(name)
}

/// Why a Node.js or browser global does not exist here, and what to use instead.
fn js_node_global(name: &str) -> Option<&'static str> {
    let kind = match name {
        "process" | "Buffer" | "setImmediate" | "fs" => name,
        "fetch" | "XMLHttpRequest" | "WebSocket" | "AbortController" | "Headers" | "Request"
        | "Response" | "FormData" | "EventSource" => "network",
        "__dirname" | "__filename" => "file",
        "module" | "exports" => "commonjs",
        "window"
        | "document"
        | "localStorage"
        | "sessionStorage"
        | "navigator"
        | "alert"
        | "location"
        | "history"
        | "requestAnimationFrame"
        | "HTMLElement"
        | "Event"
        | "CustomEvent"
        | "EventTarget" => "browser",
        "TextEncoder" | "TextDecoder" => "text",
        "Worker" | "SharedWorker" => "threads",
        "sleep" | "global" | "crypto" => name,
        "prompt" | "confirm" => "stdin",
        "Intl" => "intl",
        "URL" | "URLSearchParams" => "url",
        "structuredClone" => "clone",
        _ => return None,
    };
    words::find(&format!("{NODE_GLOBAL_WHY}{kind}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_name_read_above_its_declaration_is_found() {
        let code = "const c = new Counter();\nclass Counter {}\n";
        assert_eq!(super::used_before_declared(code, "Counter"), Some((1, 2)));
        assert_eq!(
            super::used_before_declared("class A {}\nnew A();", "A"),
            None
        );
        assert_eq!(super::used_before_declared("x = 1", "x"), None);
    }
}
