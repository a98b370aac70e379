//! Advice for `syntax_error`: the code did not parse, so nothing ran. The message is quoted
//! with the line (and column) it points at, and the usual causes follow: code in the other
//! language, indentation, unclosed brackets, Python 2 `print`, ES module statements in a
//! script, TypeScript annotations.

use sandbox_protocol::Language;
use serde_json::json;

use super::super::analyze::looks_like_other_language;
use super::super::docs::{JAVASCRIPT, PYTHON};
use super::super::scan::ImportKind;
use super::super::{MAX_ECHOED_CODE, NextCall, clip};
use super::draft::Draft;

/// Text that only TypeScript has.
const TYPESCRIPT_SIGNS: [&str; 8] = [
    "interface ",
    ": string",
    ": number",
    ": boolean",
    ": any",
    "<T>",
    " as const",
    "type ",
];

impl Draft<'_, '_> {
    pub(super) fn syntax_error(&mut self) {
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
        let other_language = self.other_language();
        if self.python() {
            self.python_syntax();
        } else if !other_language {
            // Module and TypeScript advice is wrong for code that is Python altogether.
            self.javascript_syntax();
        }
        // The usual causes only when nothing more specific was found: a known cause (a
        // redeclaration, a Python 2 form) is not a missing bracket.
        let specific = self.fix_count() > 0;
        if let Some(w) = where_.filter(|_| !specific) {
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

    /// Code in the other language: resend it as that language.
    fn other_language(&mut self) -> bool {
        let Some(other) = looks_like_other_language(&self.code.src) else {
            return false;
        };
        let other_lang = if other == "Python" {
            Language::Python
        } else {
            Language::JavaScript
        }
        .as_str();
        self.fix(format!(
            "This code looks like {other}, but it was sent as {}: resend it with language \"{other_lang}\".",
            self.lang()
        ));
        let code = self.f.code;
        if code.len() <= MAX_ECHOED_CODE {
            self.next = Some(NextCall::new(
                "execute_code",
                json!({"code": code, "language": other_lang}),
                format!("run it as {other} (in your default {other_lang} session)"),
            ));
        }
        true
    }

    fn python_syntax(&mut self) {
        let lower = self.f.error_message.unwrap_or("").to_lowercase();
        self.doc(PYTHON);
        if lower.contains("unexpected indent") && self.f.code.starts_with([' ', '\t']) {
            self.fix("The whole snippet is indented: remove the common leading indentation (top-level code must start at column 0).");
        } else if lower.contains("expected an indented block")
            && let Some(line) = self.error_line().map(str::trim).filter(|l| !l.is_empty())
        {
            self.fix(format!("Indent `{}` one level (4 spaces) under the header before it: every block after `:` must be indented one level more than its header.", clip(line, 80)));
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
        let line = self.error_line().unwrap_or("");
        self.python2_syntax(&lower, line);
        if lower.contains("expected ':'") {
            self.fix(
                "A compound statement header (if/for/while/def/class/with/try) must end with `:`.",
            );
        }
    }

    fn javascript_syntax(&mut self) {
        let code = self.f.code;
        self.doc(JAVASCRIPT);
        let lower = self.f.error_message.unwrap_or("").to_lowercase();
        if lower.contains("redefinition of lexical identifier")
            || lower.contains("redeclaration of")
        {
            let line = self.error_line().unwrap_or("");
            let name = declared_name(line).unwrap_or("that name");
            self.fix(format!(
                "`{name}` is declared twice in this code (a `let`, `const` or `class` name cannot be declared again in the same scope): drop the second `let`/`const`/`var` and assign (`{name} = ...`), or use a new name."
            ));
        }
        if self
            .code
            .imports
            .iter()
            .any(|i| i.kind == ImportKind::EsImport)
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
        if TYPESCRIPT_SIGNS.iter().any(|t| code.contains(t)) {
            self.fix("QuickJS runs JavaScript, not TypeScript: remove type annotations (`: string`), interfaces and type aliases.");
        }
    }
}

/// The name a declaration line declares: `n` from `var n = 2;` or `let total = 5;`.
fn declared_name(line: &str) -> Option<&str> {
    let mut words = line
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .filter(|w| !w.is_empty());
    while let Some(word) = words.next() {
        if matches!(word, "var" | "let" | "const" | "class" | "function") {
            return words.next();
        }
    }
    None
}
