//! The names a snippet may use without defining them: each language's keywords and builtins,
//! and the globals of the sandbox's JavaScript runtime (QuickJS `std`/`os` and the helpers).
//! The lists live in `words/scan.toml`.

use sandbox_protocol::Language;

use crate::words::list;

/// A keyword of `language` (Python's soft ones and `_` too): never a name from an earlier call.
pub(super) fn is_keyword(language: Language, word: &str) -> bool {
    let keywords = match language {
        Language::Python => list("scan.py_keywords"),
        Language::JavaScript => list("scan.js_keywords"),
    };
    keywords.iter().any(|k| k == word)
}

/// A name the runtime defines: Python's builtins (and `self` and `cls`, which every method
/// binds), or the JavaScript sandbox's globals.
pub(super) fn is_predefined(language: Language, word: &str) -> bool {
    let names = match language {
        Language::Python => list("scan.py_builtins"),
        Language::JavaScript => list("scan.js_globals"),
    };
    names.iter().any(|n| n == word)
}
