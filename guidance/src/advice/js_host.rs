//! Advice about the JavaScript host: QuickJS is neither Node.js nor a browser. `require`, Node
//! and browser globals, npm packages, ES `import` statements, and QuickJS's `[value, error]`
//! pairs used as values; and the JavaScript exceptions (`TypeError`, runtime `SyntaxError`,
//! `RangeError`) with their usual causes.

use serde_json::json;

use super::super::NextCall;
use super::super::docs::JAVASCRIPT;
use super::super::modules;
use super::super::scan::ImportKind;
use super::draft::Draft;
use super::evidence::{js_undefined_name, operand_of_member, quoted};

/// Fixes for JavaScript exceptions whose advice does not depend on the message.
pub(super) const JS_EXCEPTION_FIXES: &[(&str, [&str; 2])] = &[(
    "RangeError",
    [
        "A length, index or precision is out of range (`new Array(-1)`, `toFixed(200)`), or recursion is too deep: check the value passed.",
        "For deep recursion, rewrite it as a loop with an explicit stack.",
    ],
)];

impl Draft<'_, '_> {
    /// A JavaScript runtime error that is about the host rather than the logic: an undefined
    /// Node.js, browser or sandbox global, a package that cannot load, or a `[value, error]`
    /// pair used as the value. Advice and true; false for an ordinary error.
    pub(super) fn js_host_failure(&mut self, name: &str, lower: &str) -> bool {
        if let Some(missing) = js_undefined_name(self.message())
            && self.js_undefined_global(&missing)
        {
            return true;
        }
        if lower.contains("requirevendor:")
            || lower.contains("cannot find module")
            || lower.contains("is a node.js built-in module")
        {
            let module = quoted(self.f.error_message.unwrap_or(""))
                .map(str::to_owned)
                .or_else(|| self.code.imports.first().map(|i| i.module.clone()))
                .unwrap_or_default();
            self.js_module(&module);
            return true;
        }
        let misuse = self.code.tuple_misuse();
        if !misuse.is_empty()
            && (name == "TypeError"
                || lower.contains("not a function")
                || lower.contains("cannot read property")
                || lower.contains("not iterable")
                || lower.contains("undefined"))
        {
            self.js_tuple(&misuse);
            return true;
        }
        false
    }

    /// `missing is not defined` for a global the host does not have: `require`, a Node.js or
    /// browser global, or a sandbox helper this runtime lacks.
    fn js_undefined_global(&mut self, missing: &str) -> bool {
        if missing == "require" {
            self.js_require();
        } else if let Some(why) = js_node_global(missing) {
            self.js_node_api(missing, why);
        } else if is_sandbox_js_global(missing) {
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
            self.state_note();
        } else {
            return false;
        }
        true
    }

    /// A JavaScript package that cannot load: only vendored packages exist.
    pub(super) fn js_module(&mut self, module: &str) {
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

    fn js_require(&mut self) {
        self.summary = "`require` does not exist: this is QuickJS, not Node.js.".to_owned();
        self.doc(JAVASCRIPT);
        let modules: Vec<String> = self
            .code
            .imports
            .iter()
            .filter(|i| i.kind == ImportKind::Require)
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

    /// A JavaScript `SyntaxError`, `ReferenceError` or `InternalError` raised while running:
    /// a name declared twice across calls, a name left uninitialized by a failed call, text
    /// that is not JSON, a string past QuickJS's limit.
    pub(super) fn js_named_error(&mut self, name: &str, lower: &str, message: &str) {
        let quoted_name = quoted(message).unwrap_or("the name").to_owned();
        match name {
            "SyntaxError" if lower.contains("redeclaration of") => {
                self.fix(format!(
                    "`{quoted_name}` already exists in this session (declared by an earlier call, or earlier in this code), and `var`/`function` cannot redeclare a `let`, `const` or `class` name: assign it without a keyword (`{quoted_name} = ...`), or pick a new name."
                ));
                self.fix("Top-level `let`, `const` and `class` may be declared again in a later call; mixing them with `var` or `function` for the same name is what fails.");
            }
            "SyntaxError" if lower.contains("json") => {
                self.fix("JSON.parse got text that is not JSON: log `text.slice(0, 200)`; single quotes, trailing commas and comments are not JSON.");
                self.fix("If the text comes from a file, check the file exists (std.loadFile returns null when it does not).");
            }
            "SyntaxError" => {
                self.fix("Code given to eval or new Function does not parse: log the string and check its brackets and quotes.");
            }
            "ReferenceError" if lower.contains("is not initialized") => {
                let var = js_uninitialized_name(message).unwrap_or("the name");
                self.fix(format!(
                    "`{var}` was declared with let/const/class by a call that failed before the declaration ran, so it exists but has no value: declare it again with a working value (`const {var} = ...`) in the next call."
                ));
            }
            "ReferenceError" => self.undefined_name(message),
            "InternalError" if lower.contains("string too long") => {
                self.fix("A string grew past QuickJS's maximum length: build large text in parts (push pieces to an array, or write them to a file in /app as you go) and keep only what you need.");
            }
            _ => self.fixed_exception_fixes(name),
        }
    }

    /// JavaScript `TypeError`: a value that is not what the code expects.
    pub(super) fn js_type_error(&mut self, lower: &str) {
        if lower.contains("is read-only") {
            let var = quoted(self.message()).unwrap_or("the name").to_owned();
            self.fix(format!(
                "`{var}` is a const: declare it with `let` if it must change, or assign the new value to a new name."
            ));
        }
        if lower.contains("of undefined") {
            self.off_by_one_fix();
        }
        if lower.contains("not a function") {
            self.fix("The value is not a function: a method on the wrong type (`forEach` on an object: use `Object.entries(obj).forEach`), a misspelled method, or a value that is undefined.");
        } else if lower.contains("cannot read property")
            || lower.contains("of undefined")
            || lower.contains("of null")
        {
            // The operand by name when the failing line shows it: `parts[2]` of `.trim`.
            let operand = quoted(self.message()).and_then(|property| {
                let line = self.error_line()?;
                operand_of_member(line, property).map(|o| (o.to_owned(), property.to_owned()))
            });
            self.fix(match operand {
                Some((o, p)) => format!("`{o}` is undefined or null, so `.{p}` cannot be read: a missing key, an empty result, or a file function that returned null. Check it (`if (!{o}) ...`) or use optional chaining `{o}?.{p}`."),
                None => "The value before the `.` is undefined or null: a missing key, an empty result, or a file function that returned null. Check it (`if (!x) ...`) or use optional chaining `x?.y`.".to_owned(),
            });
        } else if lower.contains("not iterable") {
            self.fix("Only arrays, strings, Maps and Sets are iterable: for objects use `Object.entries(obj)`; destructuring `const [a, b] = x` needs an array.");
        }
        self.fix("Log the value and its type just before the failing line: `console.log(typeof x, JSON.stringify(x))`.");
    }
}

/// `fs` from "fs is not initialized" (QuickJS's temporal dead zone message).
fn js_uninitialized_name(message: &str) -> Option<&str> {
    let head = message.split(" is not initialized").next()?;
    let name = head.rsplit([' ', ':', '\'']).find(|n| !n.is_empty())?;
    (name.len() <= 64 && message.contains(" is not initialized")).then_some(name)
}

/// Why a Node.js or browser global does not exist here, and what to use instead.
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
        "fs" => {
            "there is no Node.js fs module; read and write files with readText/writeText/readJson/writeJson/fileExists/listFiles (paths under /app)"
        }
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
