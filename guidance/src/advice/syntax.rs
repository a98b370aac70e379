//! Advice for `syntax_error`: the code did not parse, so nothing ran. The message is quoted
//! with the line (and column) it points at, and the usual causes follow: code in the other
//! language, indentation, unclosed brackets, Python 2 `print`, ES module statements in a
//! script, TypeScript annotations; in a command line, bash's arrays and Python sent as a command.
//! The words live in `words/syntax.toml`.

use sandbox_protocol::Language;
use serde_json::json;

use super::super::analyze::looks_like_other_language;
use super::super::docs::{JAVASCRIPT, PYTHON};
use super::super::scan::{ImportKind, Kind, NONE, Source};
use super::super::{MAX_ECHOED_CODE, NextCall, clip};
use super::draft::Draft;
use super::runtime::mentions;
use super::shell_habits;
use crate::words::{self, say};

impl Draft<'_, '_> {
    pub(super) fn syntax_error(&mut self) {
        let where_ = self.where_text();
        let message = self.exception();
        self.summary = match &where_ {
            Some(place) => say!(
                "syntax_error.does_not_parse_at",
                message = message,
                place = place
            ),
            None => say!("syntax_error.does_not_parse", message = message),
        };
        self.restart_explained = true;
        if self.f.command {
            self.summary = say!("syntax_error.command_does_not_parse", message = message);
            self.shell_syntax();
            return;
        }
        if self.shell_as_code() || (self.python() && self.notebook_habit()) {
            self.fix(words::text("syntax_error.check_first"));
            return;
        }
        let lower = self.evidence().to_lowercase();
        let known = if self.python() {
            self.known_fix("known_syntax.python", &lower)
        } else {
            self.known_fix("known_syntax.javascript", &lower)
        };
        if let Some(fix) = known {
            self.fix(fix);
        }
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
        if let Some(place) = where_.filter(|_| !specific) {
            let id = if self.python() {
                "syntax_error.usual_cause_python"
            } else {
                "syntax_error.usual_cause_javascript"
            };
            self.fix(say!(id, place = place));
        }
        self.fix(words::text("syntax_error.check_first"));
    }

    /// An `execute_command` line that does not parse as sh: Python sent as a command line or
    /// bash's arrays (the cause, alone), else its quotes, then the shell's grammar; never "run
    /// it with execute_command", which is what was done.
    fn shell_syntax(&mut self) {
        let code = self.f.code;
        if shell_habits::is_python(code) {
            self.fix(words::text("syntax_error.shell_python"));
            if code.len() <= MAX_ECHOED_CODE {
                self.next = Some(NextCall::new(
                    "execute_code",
                    json!({"code": code, "language": Language::Python.as_str()}),
                    words::text("syntax_error.shell_python_reason").to_owned(),
                ));
            }
            return;
        }
        let lower = self.evidence().to_lowercase();
        // The shell has bash's indexed arrays; what it refuses of them it names.
        if lower.contains("array") && shell_habits::bash_array(code).is_some() {
            self.fix(words::text("syntax_error.shell_array"));
            return;
        }
        if let Some(fix) = self.known_fix("known_syntax.shell", &lower) {
            self.fix(fix);
        }
        self.fix(words::text("syntax_error.shell"));
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
        let language = self.lang();
        let values: [(&str, &dyn std::fmt::Display); 3] = [
            ("other", &other),
            ("language", &language),
            ("other_language", &other_lang),
        ];
        self.rule_with("other_language", &values);
        let code = self.f.code;
        if code.len() <= MAX_ECHOED_CODE {
            self.next = Some(NextCall::new(
                "execute_code",
                json!({"code": code, "language": other_lang}),
                words::fill(words::text("other_language.reason"), &values),
            ));
        }
        true
    }

    fn python_syntax(&mut self) {
        let lower = self.f.error_message.unwrap_or("").to_lowercase();
        self.doc(PYTHON);
        if lower.contains("unexpected indent") && self.f.code.starts_with([' ', '\t']) {
            self.fix(words::text("python_syntax.indented_snippet"));
        } else if lower.contains("expected an indented block")
            && let Some(line) = self.error_line().map(str::trim).filter(|l| !l.is_empty())
        {
            self.fix(say!("python_syntax.indent_block", line = clip(line, 80)));
        } else if lower.contains("indent") || lower.contains("tab") {
            self.fix(words::text("python_syntax.indent_consistently"));
        }
        if mentions(&lower, words::list("python_syntax.unclosed_signs")) {
            self.fix(words::text("python_syntax.unclosed"));
        }
        let line = self.error_line().unwrap_or("");
        // CPython says "Maybe you meant '=='" for a statement's test (a known cause), and only
        // "invalid syntax" for a comprehension's filter.
        if lower.contains("invalid syntax")
            && !lower.contains("maybe you meant")
            && let Some(test) = assignment_in_test(line)
        {
            let fixed = test.replacen(" = ", " == ", 1);
            self.fix(say!(
                "python_syntax.assignment_in_test",
                test = clip(&test, 100),
                fixed = clip(&fixed, 100),
            ));
        }
        if lower.contains("invalid syntax")
            && self.fix_count() == 0
            && let Some(keyword) = keyword_as_name(line)
        {
            self.fix(say!("python_syntax.keyword_as_name", keyword = keyword));
        }
        self.python2_syntax(&lower, line);
        if lower.contains("expected ':'") {
            self.fix(words::text("python_syntax.expected_colon"));
        }
    }

    fn javascript_syntax(&mut self) {
        let code = self.f.code;
        self.doc(JAVASCRIPT);
        if let Some((open, line)) = unclosed_bracket(&self.code.src) {
            let close = match open {
                "(" => ")",
                "[" => "]",
                _ => "}",
            };
            let source = code.lines().nth(line as usize - 1).unwrap_or("").trim();
            self.fix(say!(
                "javascript_syntax.unclosed",
                open = open,
                close = close,
                line = line,
                source = clip(source, 100),
            ));
        }
        let lower = self.f.error_message.unwrap_or("").to_lowercase();
        // An object's entries on their own lines, one without its comma: the parser stops at
        // the next entry's name.
        if lower.contains("unexpected")
            && self.fix_count() == 0
            && let Some(loc) = self.location().filter(|l| l.current)
            && let Some((line, source)) = entry_without_comma(code, loc.line as usize)
        {
            self.fix(say!(
                "javascript_syntax.missing_comma",
                line = line,
                source = clip(source, 100),
            ));
        }
        if lower.contains("redefinition of lexical identifier")
            || lower.contains("redeclaration of")
        {
            let line = self.error_line().unwrap_or("");
            let name =
                declared_name(line).unwrap_or_else(|| words::text("javascript_syntax.unnamed"));
            self.fix(say!("javascript_syntax.redeclared", name = name));
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
            self.fix(words::text("javascript_syntax.es_module"));
            if self.next.is_none() {
                self.next = Some(NextCall::new(
                    "list_available_packages",
                    json!({"language": "javascript"}),
                    words::text("javascript_syntax.es_module_reason"),
                ));
            }
        }
        if mentions(code, words::list("javascript_syntax.typescript_signs")) {
            self.fix(words::text("javascript_syntax.typescript"));
        }
    }
}

/// The bracket that is never closed, and its line: the first opening bracket with no
/// partner, or, when a block's `}` starts a line less indented than the block's own line
/// (the `}` of an `if` missing, so the function's `}` closes it), that block's `{`.
fn unclosed_bracket<'s>(src: &'s Source<'_>) -> Option<(&'s str, u32)> {
    let t = &src.tokens;
    let open = |k: usize| t[k].kind == Kind::Op && matches!(t[k].text, "(" | "[" | "{");
    let first = (0..t.len()).find(|&k| open(k) && src.partner[k] == NONE)?;
    let indent_of_line = |k: usize| {
        (0..=k)
            .rev()
            .find(|&j| t[j].line_start)
            .map_or(0, |j| t[j].indent)
    };
    let misplaced = (0..t.len()).find(|&k| {
        let close = src.partner[k];
        open(k)
            && t[k].text == "{"
            && close != NONE
            && close > k
            && t[close].line_start
            && t[close].line > t[k].line
            && t[close].indent < indent_of_line(k)
    });
    let at = misplaced.unwrap_or(first);
    Some((t[at].text, t[at].line))
}

/// The test of an `if`/`elif`/`while` (a statement's, or a comprehension's filter) that holds a
/// lone `=` outside brackets: `r["k"] = "FR"` in `[r for r in rows if r["k"] = "FR"]`.
fn assignment_in_test(line: &str) -> Option<String> {
    let trimmed = line.trim();
    let after = ["if ", "elif ", "while "]
        .iter()
        .find_map(|k| trimmed.strip_prefix(k))
        .or_else(|| trimmed.split_once(" if ").map(|(_, rest)| rest))?;
    let bytes = after.as_bytes();
    let mut depth = 0i32;
    let mut quote: Option<u8> = None;
    for (i, &b) in bytes.iter().enumerate() {
        if let Some(q) = quote {
            if b == q {
                quote = None;
            }
            continue;
        }
        match b {
            b'\'' | b'"' => quote = Some(b),
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth < 0 {
                    return None;
                }
            }
            b':' if depth == 0 && bytes.get(i + 1) != Some(&b'=') => return None,
            b'=' if depth == 0 => {
                let prev = i.checked_sub(1).map(|p| bytes[p]);
                let next = bytes.get(i + 1).copied();
                let lone =
                    !prev.is_some_and(|p| b"=<>!:+-*/%&|^@".contains(&p)) && next != Some(b'=');
                if lone {
                    let end = after[i..]
                        .find([']', ')', '}', ':'])
                        .map_or(after.len(), |e| i + e);
                    return Some(after[..end].trim().to_owned());
                }
            }
            _ => {}
        }
    }
    None
}

/// Python's keywords that can never stand alone as a value (`None`, `True`, `lambda`, `yield`
/// and `await` can, and `not` starts one).
const STATEMENT_KEYWORDS: [&str; 28] = [
    "class", "def", "return", "pass", "import", "from", "global", "nonlocal", "in", "is", "and",
    "or", "if", "else", "elif", "while", "for", "try", "except", "finally", "with", "as", "del",
    "assert", "break", "continue", "raise", "async",
];

/// A Python keyword used as a name on `line`: assigned (`class = 'A'`, `lambda = 3`), a
/// parameter or keyword argument (`def f(lambda):`, `f(from=1)`), a loop variable (`for
/// class in ...`) or a lone argument (`print(class)`).
fn keyword_as_name(line: &str) -> Option<&str> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let trimmed = line.trim();
    let def_line = trimmed.starts_with("def ") || trimmed.starts_with("async def ");
    let mut at = 0;
    while at < line.len() {
        let rest = &line[at..];
        let Some(start) = rest.find(|c: char| is_word(c)) else {
            break;
        };
        let word_len = rest[start..]
            .find(|c: char| !is_word(c))
            .unwrap_or(rest.len() - start);
        let word = &rest[start..start + word_len];
        let before = line[..at + start].trim_end();
        let after = rest[start + word_len..].trim_start();
        at += start + word_len;
        let any_keyword = STATEMENT_KEYWORDS.contains(&word)
            || matches!(
                word,
                "None" | "True" | "False" | "lambda" | "yield" | "await"
            );
        if !any_keyword || before.ends_with('.') {
            continue;
        }
        let assigned = after.starts_with('=') && !after.starts_with("==");
        let first = before.is_empty();
        let in_call = before.ends_with(['(', ',']);
        let loop_variable = before.ends_with("for") && after.starts_with("in ");
        let found = (first && assigned)
            || (in_call && assigned)
            || (in_call && def_line && after.starts_with([')', ',', ':']))
            || (in_call && STATEMENT_KEYWORDS.contains(&word) && after.starts_with([')', ',']))
            || (loop_variable && word != "in");
        if found {
            return Some(word);
        }
    }
    None
}

/// The line (1-based) and text of the entry before line `at` (1-based) that lacks its comma,
/// when line `at` starts an object entry (`port: 80`, `'port': 80`) and the last code line
/// before it ends with a value, not with `,`, `{`, `[` or `(`.
fn entry_without_comma(code: &str, at: usize) -> Option<(usize, &str)> {
    let lines: Vec<&str> = code.lines().collect();
    let here = lines.get(at.checked_sub(1)?)?.trim();
    let key = here.split_once(':')?.0.trim();
    let quoted = key.len() >= 2
        && (key.starts_with('"') && key.ends_with('"')
            || key.starts_with('\'') && key.ends_with('\''));
    let named = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    if !(quoted || named) || here.starts_with("case ") || here.starts_with("default") {
        return None;
    }
    let (k, before) = lines[..at - 1]
        .iter()
        .enumerate()
        .rev()
        .map(|(k, l)| (k, l.trim()))
        .find(|(_, l)| !l.is_empty() && !l.starts_with("//"))?;
    let open = before.ends_with([',', '{', '[', '(', ':', ';']) || before.ends_with("=>");
    (!open).then_some((k + 1, before))
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

#[cfg(test)]
mod tests {
    use super::{entry_without_comma, keyword_as_name};

    #[test]
    fn keywords_where_names_go() {
        assert_eq!(keyword_as_name("class = 'A'"), Some("class"));
        assert_eq!(keyword_as_name("def f(lambda):"), Some("lambda"));
        assert_eq!(keyword_as_name("for class in classes:"), Some("class"));
        assert_eq!(keyword_as_name("json.dumps(x, from=2)"), Some("from"));
        assert_eq!(keyword_as_name("print(class)"), Some("class"));
        // Keywords doing their own work.
        assert_eq!(keyword_as_name("key = lambda: 0"), None);
        assert_eq!(keyword_as_name("f(lambda x: x, None)"), None);
        assert_eq!(
            keyword_as_name("xs = [x for x in ys if x is not None]"),
            None
        );
        assert_eq!(keyword_as_name("obj.class = 1"), None);
    }

    #[test]
    fn entries_on_their_own_lines() {
        let code = "const cfg = {\n  host: 'a'\n  port: 80\n};";
        assert_eq!(entry_without_comma(code, 3), Some((2, "host: 'a'")));
        let ok = "const cfg = {\n  host: 'a',\n  port: 80\n};";
        assert_eq!(entry_without_comma(ok, 3), None);
        let switch = "switch (x) {\n  case 1: f()\n  default: g()\n}";
        assert_eq!(entry_without_comma(switch, 3), None);
    }
}
