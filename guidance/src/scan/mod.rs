//! A small lexer for Python and JavaScript and the facts the guidance reads off its tokens:
//! imports, loops with their bounds, recursion, names used but not defined, calls and path
//! literals.
//!
//! It is not a parser. It only has to be right about what matters for advice (comments and
//! string contents are not code, brackets nest, Python blocks follow indentation) and it has to
//! be safe on anything: every scan is linear in the input, recursion is depth-bounded, and
//! slicing happens only at ASCII positions, so arbitrary UTF-8 cannot make it panic.

mod calls;
mod consts;
mod imports;
mod lexer;
mod loops;
mod names;
mod recursion;
mod words;

pub(crate) use calls::{StrLit, calls, strings};
pub(crate) use consts::{const_value, number_value};
pub(crate) use imports::{ImportKind, ImportRef, imports};
pub(crate) use lexer::{Kind, NONE, Source};
pub(crate) use loops::{Endless, LoopInfo, loops};
pub(crate) use names::free_names;
pub(crate) use recursion::{branching_recursion, recursive_functions};

/// Sources for the scanners' tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use sandbox_protocol::Language;

    use super::Source;

    pub fn py(code: &str) -> Source<'_> {
        Source::new(code, Language::Python)
    }

    pub fn js(code: &str) -> Source<'_> {
        Source::new(code, Language::JavaScript)
    }
}

#[cfg(test)]
mod tests {
    use sandbox_protocol::Language;

    use super::*;

    #[test]
    fn hostile_input_does_not_panic() {
        let inputs = [
            "\"\"\"unterminated",
            "'\\",
            "`${`",
            "/[/",
            "((((",
            "))))",
            "\\\n\\",
            "f'{'",
            "r'\\'",
            "0x",
            "1e",
            "é'x",
            "\u{0}\u{1}",
            "for",
            "for (",
            "while",
            "def",
            "import",
            "from",
            "from .",
            "import (",
            "x = = =",
            "`\\",
            "/*",
            "a /",
            "for i in range(",
        ];
        for code in inputs {
            for lang in [Language::Python, Language::JavaScript] {
                let s = Source::new(code, lang);
                let _ = (
                    imports(&s),
                    loops(&s),
                    free_names(&s, 5),
                    strings(&s),
                    calls(&s),
                );
                let _ = recursive_functions(&s);
            }
        }
    }
}
