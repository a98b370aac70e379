//! What a snippet assumes about where it runs: names defined by earlier calls in the same
//! session (`state_reliance`), and the language it was sent as (`wrong_language`, which advice
//! for syntax errors uses too). What it says lives in `words/analysis.toml`.

use sandbox_protocol::Language;

use super::super::scan::{self, Kind, Source};
use super::facts::CodeFacts;
use super::findings::Analysis;
use crate::words::say;

/// Names the code uses without defining them: they must come from an earlier call.
pub(super) fn state_findings(facts: &CodeFacts<'_>, out: &mut Analysis) {
    let free = scan::free_names(&facts.src, 12);
    if free.is_empty() {
        return;
    }
    let names: Vec<&str> = free.iter().map(|(n, _)| n.as_str()).collect();
    let (first, line) = &free[0];
    let (finding, suggestion) = if names.len() == 1 {
        (
            "state_reliance.finding_one",
            "state_reliance.suggestion_one",
        )
    } else {
        (
            "state_reliance.finding_many",
            "state_reliance.suggestion_many",
        )
    };
    out.find(
        "state_reliance",
        Some(*line),
        say!(finding, names = names.join(", ")),
    );
    out.suggest(say!(suggestion, first = first, others = names.len() - 1));
}

/// Code that looks like the other language fails with a syntax error.
pub(super) fn language_mismatch(facts: &CodeFacts<'_>, out: &mut Analysis) {
    if let Some(other) = looks_like_other_language(&facts.src) {
        out.find(
            "wrong_language",
            None,
            say!("wrong_language.finding", other = other),
        );
        out.block(say!(
            "wrong_language.warning",
            other = other,
            language = facts.language()
        ));
    }
}

/// The other language's name when the code shows several of its tell-tale signs.
pub(crate) fn looks_like_other_language(src: &Source<'_>) -> Option<&'static str> {
    let t = &src.tokens;
    let mut score = 0;
    for i in 0..t.len().min(20_000) {
        // `import os` alone on its line is never JavaScript (an ES import names `from` or a
        // string), so it decides alone.
        if src.language == Language::JavaScript
            && t[i].line_start
            && t[i].text == "import"
            && src.ident(i + 1).is_some()
            && t.get(i + 2)
                .is_none_or(|n| n.line != t[i].line || n.text == ",")
        {
            return Some("Python");
        }
        let hit = match src.language {
            Language::Python => {
                (matches!(t[i].text, "const" | "let" | "var")
                    && t[i].kind == Kind::Ident
                    && src.ident(i + 1).is_some()
                    && src.is(i + 2, "="))
                    || (t[i].text == "console"
                        && src.is(i + 1, ".")
                        && src.ident(i + 2) == Some("log"))
                    || (t[i].kind == Kind::Op
                        && matches!(t[i].text, "===" | "!==" | "=>" | "&&" | "||"))
                    || (t[i].text == "function" && src.ident(i + 1).is_some() && src.is(i + 2, "("))
            }
            Language::JavaScript => {
                (t[i].line_start
                    && t[i].text == "def"
                    && src.ident(i + 1).is_some()
                    && src.is(i + 2, "("))

                    || (t[i].line_start
                        && t[i].text == "from"
                        && src.ident(i + 1).is_some()
                        && src.is(i + 2, "import"))
                    || (t[i].kind == Kind::Ident
                        && matches!(t[i].text, "elif" | "None" | "True" | "False" | "self")
                        && !src.is_member(i))
                    // `for x in ...` (JavaScript's for always takes a parenthesis), counted at
                    // `in` so that the header's `:` below is a sign of its own.
                    || (t[i].text == "in"
                        && i >= 2
                        && t[i - 2].line_start
                        && t[i - 2].text == "for"
                        && src.ident(i - 1).is_some_and(|n| n != "await"))
                    // A block header that ends with `:`, counted at the `:` so that the
                    // header's keyword (`def f(`, `for x in`) is a sign of its own.
                    || (t[i].text == ":" && t[i].kind == Kind::Op && ends_block_header(src, i))
            }
        };
        if hit {
            score += 1;
            if score >= 2 {
                return Some(match src.language {
                    Language::Python => "JavaScript",
                    Language::JavaScript => "Python",
                });
            }
        }
    }
    None
}

/// True when token `i` is the last on its line and the line starts with a Python block
/// keyword (`def`, `if`, `for`, `while`, `try`, `except`, `with`, `else`, `elif`).
fn ends_block_header(src: &Source<'_>, i: usize) -> bool {
    let t = &src.tokens;
    let line = t[i].line;
    if t.get(i + 1).is_some_and(|next| next.line == line) {
        return false;
    }
    let first = t[..i]
        .iter()
        .rev()
        .take(500)
        .take_while(|tok| tok.line == line)
        .last();
    first.is_some_and(|tok| {
        tok.line_start
            && matches!(
                tok.text,
                "def" | "if" | "elif" | "else" | "for" | "while" | "try" | "except" | "with"
            )
    })
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn other_language_needs_two_signs() {
        let cases: [(Language, &str, Option<&str>); 8] = [
            (
                Language::Python,
                "x = a === b\ny = c => d",
                Some("JavaScript"),
            ),
            (Language::Python, "console.log(1)", None),
            (
                Language::Python,
                "function f(a) { return a }\nlet y = 2",
                Some("JavaScript"),
            ),
            (
                Language::JavaScript,
                "from x import y\nelif",
                Some("Python"),
            ),
            (Language::JavaScript, "import os\nx = None", Some("Python")),
            (Language::JavaScript, "obj.self = obj.None", None),
            (
                Language::JavaScript,
                "for i in range(3):\n    print(i)",
                Some("Python"),
            ),
            (
                Language::JavaScript,
                "for (const k in o) {\n  if (k) x = a ? b : c;\n}",
                None,
            ),
        ];
        for (language, code, other) in cases {
            assert_eq!(
                looks_like_other_language(&Source::new(code, language)),
                other,
                "{code}"
            );
        }
    }
}
