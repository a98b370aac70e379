//! The words guidance says, kept as data: one TOML file per family under `guidance/words/`
//! (`runtime.toml` for runtime exceptions, `loops.toml` for the loop findings, ...), compiled
//! in and parsed once. The code decides *which* rule applies and computes the numbers; the
//! files hold what is said, keyed by rule id, with `{name}` placeholders for the values.
//!
//! A rule is a table (`[no_processes]` with `summary = "..."` and `fixes = [...]`) or a single
//! text; ids are dotted paths (`no_processes.fixes`) and unique across all families, so code
//! names a rule without naming its file. A test checks that every id the code names exists and
//! that every rule in the files is named by some code.
//!
//! Guidance must never panic: an unknown id (a bug the test above catches) yields an empty
//! text and an error in the log, never a crash in a tool call.

use std::collections::HashMap;
use std::fmt::Display;
use std::sync::LazyLock;

/// Every family's file, by name.
const FAMILIES: &[(&str, &str)] = &[
    ("analysis", include_str!("../words/analysis.toml")),
    ("command", include_str!("../words/command.toml")),
    ("draft", include_str!("../words/draft.toml")),
    ("evidence", include_str!("../words/evidence.toml")),
    ("files", include_str!("../words/files.toml")),
    ("fuel", include_str!("../words/fuel.toml")),
    ("js_host", include_str!("../words/js_host.toml")),
    ("limits", include_str!("../words/limits.toml")),
    ("memory", include_str!("../words/memory.toml")),
    ("modules", include_str!("../words/modules.toml")),
    ("names", include_str!("../words/names.toml")),
    ("packages", include_str!("../words/packages.toml")),
    ("python2", include_str!("../words/python2.toml")),
    ("runtime", include_str!("../words/runtime.toml")),
    ("scan", include_str!("../words/scan.toml")),
    ("session", include_str!("../words/session.toml")),
    ("syntax", include_str!("../words/syntax.toml")),
];

/// One rule's words: a text, or a list of texts (fixes, a word list).
#[derive(Debug)]
enum Entry {
    One(String),
    Many(Vec<String>),
}

/// Every id of every family, flattened (`no_processes.fixes`).
static WORDS: LazyLock<HashMap<String, Entry>> = LazyLock::new(|| {
    let mut words = HashMap::new();
    for (family, source) in FAMILIES {
        match source.parse::<toml::Table>() {
            Ok(table) => flatten("", &toml::Value::Table(table), &mut words),
            Err(e) => tracing::error!(family, "guidance words do not parse: {e}"),
        }
    }
    words
});

fn flatten(prefix: &str, value: &toml::Value, out: &mut HashMap<String, Entry>) {
    match value {
        toml::Value::Table(table) => {
            for (key, value) in table {
                let id = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(&id, value, out);
            }
        }
        toml::Value::String(text) => {
            out.insert(prefix.to_owned(), Entry::One(text.clone()));
        }
        toml::Value::Array(items) => {
            let texts = items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect();
            out.insert(prefix.to_owned(), Entry::Many(texts));
        }
        _ => tracing::error!(id = prefix, "guidance words hold only texts and lists"),
    }
}

/// The text `id`, or `None` when there is none (for rules looked up by a computed id, such
/// as an exception's name).
pub(crate) fn find(id: &str) -> Option<&'static str> {
    match WORDS.get(id) {
        Some(Entry::One(text)) => Some(text),
        _ => None,
    }
}

/// The list `id`, or `None`.
pub(crate) fn find_list(id: &str) -> Option<&'static [String]> {
    match WORDS.get(id) {
        Some(Entry::Many(texts)) => Some(texts),
        _ => None,
    }
}

/// Every text under the table `prefix` (`modules.pypi`), as (key, text), the key with any
/// dots it has (`google.protobuf`): for tables read backwards (a PyPI name to its import name).
pub(crate) fn texts_under(prefix: &str) -> impl Iterator<Item = (&'static str, &'static str)> {
    let prefix = format!("{prefix}.");
    WORDS.iter().filter_map(move |(id, entry)| match entry {
        Entry::One(text) => id
            .strip_prefix(prefix.as_str())
            .map(|key| (key, text.as_str())),
        Entry::Many(_) => None,
    })
}

/// The text `id`; empty (and logged) if the files lack it.
pub(crate) fn text(id: &str) -> &'static str {
    find(id).unwrap_or_else(|| {
        tracing::error!(id, "guidance text missing");
        ""
    })
}

/// The list `id`; empty (and logged) if the files lack it.
pub(crate) fn list(id: &str) -> &'static [String] {
    find_list(id).unwrap_or_else(|| {
        tracing::error!(id, "guidance list missing");
        &[]
    })
}

/// `template` with each `{name}` of `values` replaced by its value; other braces (code in the
/// advice, such as `{...}` or `f'{x!r}'`) stay as they are.
pub(crate) fn fill(template: &str, values: &[(&str, &dyn Display)]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let value = after.find('}').and_then(|close| {
            let name = &after[..close];
            values
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (close, v))
        });
        match value {
            Some((close, v)) => {
                out.push_str(&v.to_string());
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The text of rule `id` with its `{name}` placeholders filled:
/// `say!("index_short", name = var, len = n)`. A name alone fills its placeholder from the
/// variable of that name, as in a struct literal: `say!("known_loop.clamped", var, line)`.
macro_rules! say {
    (@value $name:ident) => {
        &$name as &dyn ::std::fmt::Display
    };
    (@value $name:ident = $value:expr) => {
        &$value as &dyn ::std::fmt::Display
    };
    ($id:expr $(, $name:ident $(= $value:expr)?)* $(,)?) => {
        $crate::words::fill(
            $crate::words::text($id),
            &[$((stringify!($name), $crate::words::say!(@value $name $(= $value)?))),*],
        )
    };
}
pub(crate) use say;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_and_code_braces_kept() {
        let n = 3;
        assert_eq!(
            fill("{n} items in `{...}`, f'{x!r}' {n}", &[("n", &n)]),
            "3 items in `{...}`, f'{x!r}' 3"
        );
        assert_eq!(fill("unclosed {n", &[("n", &n)]), "unclosed {n");
        assert_eq!(fill("", &[]), "");
    }

    #[test]
    fn say_takes_a_name_alone_as_its_own_value() {
        let (var, clamp, line, test, bound) = ("b", "b = max(b, 1)", 4, "b > 0", "1");
        assert_eq!(
            say!("known_loop.clamped", var, clamp, line = line, test, bound),
            say!(
                "known_loop.clamped",
                var = var,
                clamp = clamp,
                line = line,
                test = test,
                bound = bound,
            )
        );
    }

    #[test]
    fn every_family_parses_and_ids_are_unique() {
        let mut seen: HashMap<String, &str> = HashMap::new();
        for (family, source) in FAMILIES {
            let table: toml::Table = source
                .parse()
                .unwrap_or_else(|e| panic!("words/{family}.toml: {e}"));
            let mut ids = HashMap::new();
            flatten("", &toml::Value::Table(table), &mut ids);
            for (id, entry) in ids {
                match &entry {
                    Entry::One(t) => assert!(!t.trim().is_empty(), "{family}: {id} is empty"),
                    Entry::Many(ts) => assert!(
                        ts.iter().all(|t| !t.trim().is_empty()),
                        "{family}: {id} has an empty text"
                    ),
                }
                if let Some(other) = seen.insert(id.clone(), family) {
                    panic!("{id} is in both {other} and {family}");
                }
            }
        }
    }

    /// Every Rust source file of the crate, read once for both reference checks.
    fn rust_sources() -> Vec<String> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut sources = Vec::new();
        let mut pending = vec![root];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    pending.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    sources.push(std::fs::read_to_string(&path).unwrap());
                }
            }
        }
        sources
    }

    /// Every string literal of the crate's non-test code, for the reference check.
    fn literals(sources: &[String]) -> Vec<String> {
        sources
            .iter()
            .flat_map(|source| {
                let code = source.split("#[cfg(test)]\nmod tests").next().unwrap();
                string_literals(code)
            })
            .collect()
    }

    /// The string literals of Rust `code`, past comments and char literals (`'"'`).
    fn string_literals(code: &str) -> Vec<String> {
        let mut found = Vec::new();
        let mut chars = code.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '/' if chars.peek() == Some(&'/') => {
                    chars.by_ref().find(|&c| c == '\n');
                }
                '\'' => {
                    // A char literal ('x', '\'', '\u{22}'), or a lifetime ('a), left as it is.
                    let ahead: String = chars.clone().take(12).collect();
                    let end = if ahead.starts_with('\\') {
                        ahead.find('\'').filter(|&e| e > 1)
                    } else {
                        ahead
                            .char_indices()
                            .nth(1)
                            .filter(|(_, c)| *c == '\'')
                            .map(|(e, _)| e)
                    };
                    if let Some(end) = end {
                        let skip = ahead[..=end].chars().count();
                        chars.by_ref().take(skip).for_each(drop);
                    }
                }
                '"' => {
                    let mut text = String::new();
                    while let Some(c) = chars.next() {
                        match c {
                            '\\' => text.extend(chars.next()),
                            '"' => break,
                            c => text.push(c),
                        }
                    }
                    found.push(text);
                }
                _ => {}
            }
        }
        found
    }

    #[test]
    fn literals_are_read_past_chars_and_comments() {
        let code = "let q = '\"'; // \"not\"\nf(\"a\", '\\'', \"b\\\"c\"); fn x<'a>() -> &'a str { \"d\" }";
        assert_eq!(string_literals(code), ["a", "b\"c", "d"]);
    }

    #[test]
    fn every_id_is_named_by_code_and_every_named_id_exists() {
        let sources = rust_sources();
        let literals = literals(&sources);
        let named = |id: &str| {
            // Named whole, or through a computed id under a named prefix (`exception.`).
            literals.iter().any(|l| {
                l == id
                    || id
                        .strip_prefix(l.as_str())
                        .is_some_and(|_| l.ends_with('.'))
            }) || id.rsplit_once('.').is_some_and(|(rule, part)| {
                matches!(part, "summary" | "fixes") && literals.iter().any(|l| l == rule)
            })
        };
        let unused: Vec<&String> = WORDS.keys().filter(|id| !named(id)).collect();
        assert!(unused.is_empty(), "words no code names: {unused:?}");
        let source_ids = crate_ids(&sources);
        let missing: Vec<&String> = source_ids
            .iter()
            .filter(|id| {
                !WORDS.contains_key(id.as_str())
                    && !WORDS.keys().any(|k| k.starts_with(&format!("{id}.")))
            })
            .collect();
        assert!(
            missing.is_empty(),
            "ids the code names that no file has: {missing:?}"
        );
    }

    /// The ids passed literally to `say!`, `text`, `list` and `rule`.
    fn crate_ids(sources: &[String]) -> Vec<String> {
        let mut ids = Vec::new();
        for source in sources {
            let source: String = source
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            for call in ["say!(\"", "text(\"", "list(\"", "rule(\""] {
                for (at, _) in source.match_indices(call) {
                    let rest = &source[at + call.len()..];
                    if let Some(end) = rest.find('"') {
                        ids.push(rest[..end].to_owned());
                    }
                }
            }
        }
        ids.retain(|id| !id.is_empty() && !id.contains(' '));
        ids
    }
}
