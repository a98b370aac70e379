//! Shell patterns (`*`, `?`, `[...]` with `!` or `^`, ranges and `[:class:]`, `\` quoting)
//! matched like fnmatch without flags, compiled with `globset`: for pathname expansion, and for
//! any built-in that takes patterns (`find -name`).
//!
//! globset reads a few things differently from a shell, so patterns are translated first: braces
//! are literal (globset takes `{a,b}` as alternatives), `**` is just `*` (globset reaches across
//! directories with it), an unclosed `[` is literal, and `[:class:]` is spelled out as the ASCII
//! ranges it stands for in the C locale. globset matches bytes: `?` and a bracket expression
//! match one byte of a non-ASCII name, not one character.

use globset::{GlobBuilder, GlobMatcher};

/// The bracket classes of POSIX patterns and the ranges they stand for.
const CLASSES: [(&str, &[(char, char)]); 12] = [
    ("alpha", &[('a', 'z'), ('A', 'Z')]),
    ("digit", &[('0', '9')]),
    ("alnum", &[('a', 'z'), ('A', 'Z'), ('0', '9')]),
    ("upper", &[('A', 'Z')]),
    ("lower", &[('a', 'z')]),
    ("space", &[(' ', ' '), ('\t', '\r')]),
    ("blank", &[(' ', ' '), ('\t', '\t')]),
    ("punct", &[('!', '/'), (':', '@'), ('[', '`'), ('{', '~')]),
    ("xdigit", &[('0', '9'), ('A', 'F'), ('a', 'f')]),
    ("cntrl", &[('\0', '\x1f'), ('\x7f', '\x7f')]),
    ("print", &[(' ', '~')]),
    ("graph", &[('!', '~')]),
];

/// Longest bracket expression looked for: keeps a word of many unclosed `[` linear to translate.
const MAX_CLASS: usize = 256;

/// A compiled shell pattern, matched against a whole name or path.
#[derive(Debug, Clone)]
pub(crate) struct Glob(GlobMatcher);

impl Glob {
    /// Compiles `pattern`, where a backslash makes the next character literal.
    ///
    /// # Errors
    /// The pattern cannot match anything (an empty or reversed range such as `[z-a]`): why.
    pub(crate) fn new(pattern: &str, ignore_case: bool) -> Result<Self, String> {
        GlobBuilder::new(&to_globset(pattern)?)
            .case_insensitive(ignore_case)
            .literal_separator(false)
            .backslash_escape(true)
            .build()
            .map(|g| Self(g.compile_matcher()))
            .map_err(|e| e.kind().to_string())
    }

    /// Whether the whole of `text` matches.
    pub(crate) fn matches(&self, text: &str) -> bool {
        self.0.is_match(text)
    }
}

/// A shell pattern in globset's syntax.
///
/// # Errors
/// A bracket expression that no character matches (`[z-a]`).
fn to_globset(pattern: &str) -> Result<String, String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len());
    let mut after_star = false;
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        let star = c == '*';
        if star && after_star {
            continue;
        }
        after_star = star;
        match c {
            // A trailing backslash stands for itself.
            '\\' => {
                out.push('\\');
                out.push(chars.get(i).copied().unwrap_or('\\'));
                i += 1;
            }
            '[' => match bracket(&chars[i..]) {
                Some((Some(class), used)) => {
                    out.push_str(&class);
                    i += used;
                }
                Some((None, _)) => return Err("a bracket expression matches nothing".into()),
                None => out.push_str("\\["),
            },
            '{' | '}' | ']' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    Ok(out)
}

/// The bracket expression after a `[`, in globset's syntax (`None` when it matches no character),
/// and how many characters it used; `None` when it is not closed. A backslash quotes the next
/// member; a reversed range matches nothing.
fn bracket(chars: &[char]) -> Option<(Option<String>, usize)> {
    let negated = matches!(chars.first(), Some('!' | '^'));
    let mut i = usize::from(negated);
    let first = i;
    let mut ranges = Vec::new();
    while i < MAX_CLASS {
        let at = i;
        let (c, quoted) = member(chars, &mut i)?;
        if c == ']' && !quoted && at > first {
            return Some((class(negated, ranges), i));
        }
        if c == '[' && !quoted && chars.get(i) == Some(&':') {
            // Class names are short: look a few characters ahead, never the whole pattern.
            let ahead: String = chars[i + 1..].iter().take(8).collect();
            let known = ahead
                .split_once(":]")
                .and_then(|(name, _)| CLASSES.iter().find(|(n, _)| *n == name));
            if let Some((name, members)) = known {
                ranges.extend_from_slice(members);
                i += name.len() + 3;
                continue;
            }
        }
        if chars.get(i) == Some(&'-') && chars.get(i + 1).is_some_and(|&end| end != ']') {
            i += 1;
            let (end, _) = member(chars, &mut i)?;
            ranges.extend((c <= end).then_some((c, end)));
        } else {
            ranges.push((c, c));
        }
    }
    None
}

/// The next character of a bracket expression and whether a backslash quoted it.
fn member(chars: &[char], i: &mut usize) -> Option<(char, bool)> {
    let quoted = chars.get(*i) == Some(&'\\');
    *i += usize::from(quoted);
    let c = *chars.get(*i)?;
    *i += 1;
    Some((c, quoted))
}

/// A set of ranges in globset's class syntax, which has no escapes: `]` is a member only first,
/// `-` only first or last, and `!` or `^` first negates. Those characters are taken out of the
/// ranges and written where they mean themselves. `None` for an empty set, which no character
/// matches.
fn class(negated: bool, ranges: Vec<(char, char)>) -> Option<String> {
    const AWKWARD: [char; 4] = [']', '-', '!', '^'];
    let mut plain = String::new();
    let mut awkward = Vec::new();
    for (lo, hi) in ranges {
        // Awkward characters are ASCII: stepping over them never meets a gap in `char`.
        let (mut lo, mut hi) = (lo, hi);
        while lo < hi && AWKWARD.contains(&lo) {
            awkward.push(lo);
            lo = char::from(lo as u8 + 1);
        }
        while lo < hi && AWKWARD.contains(&hi) {
            awkward.push(hi);
            hi = char::from(hi as u8 - 1);
        }
        if AWKWARD.contains(&lo) {
            awkward.push(lo);
            continue;
        }
        plain.push(lo);
        if lo < hi {
            plain.push('-');
            plain.push(hi);
        }
    }
    let has = |c| awkward.contains(&c);
    let mut out = String::from(if negated { "[!" } else { "[" });
    if has(']') {
        out.push(']');
    } else if has('-') {
        out.push('-');
    } else if plain.is_empty() && !negated {
        // Only `!` and `^` (or nothing): a class would read them as a negation.
        return match (has('!'), has('^')) {
            (true, true) => Some("{\\!,\\^}".into()),
            (true, false) => Some("\\!".into()),
            (false, true) => Some("\\^".into()),
            (false, false) => None,
        };
    } else if plain.is_empty() && awkward.is_empty() {
        return Some("?".into());
    }
    out.push_str(&plain);
    out.extend(['!', '^'].into_iter().filter(|&c| has(c)));
    if has(']') && has('-') {
        out.push('-');
    }
    out.push(']');
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, text: &str) -> bool {
        Glob::new(pattern, false).unwrap().matches(text)
    }

    #[test]
    fn globs_match_like_fnmatch() {
        assert!(matches("*.rs", "main.rs") && !matches("*.rs", "main.rsx"));
        assert!(matches("*.txt", ".hidden.txt"));
        assert!(matches("a*b*c", "aXbYbc"));
        assert!(matches("[a-c]?", "bz") && !matches("[a-c]?", "dz"));
        assert!(matches("?b[cd]", "abd") && !matches("?b[!cd]", "abd"));
        assert!(matches("[^a]", "b") && !matches("[^a]", "a"));
        assert!(matches("[]]", "]") && matches("[]a]", "a") && matches("[!]]", "a"));
        assert!(matches("a\\*", "a*") && !matches("a\\*", "ab"));
        assert!(matches("a\\", "a\\"));
        assert!(matches("[ab", "[ab") && matches("x]", "x]"));
        assert!(matches("*", "") && matches("*/*", "a/b"));
        assert!(matches("*sub/*.py", "d/sub/b.py"));
        assert!(matches("héllo*", "héllo wörld"));
        assert!(Glob::new("A.TXT", true).unwrap().matches("a.txt"));
    }

    #[test]
    fn shell_syntax_that_globset_reads_differently() {
        assert!(matches("[[:digit:]]x", "7x") && !matches("[[:digit:]]x", "ax"));
        assert!(matches("[[:alpha:]_][[:alnum:]]", "x1"));
        assert!(matches("[![:space:]]", "a") && !matches("[![:space:]]", " "));
        assert!(matches("[[:punct:]]", "]") && !matches("[[:punct:]]", "a"));
        assert!(!matches("[[:upper:]]", "a"));
        assert!(matches("{a,b}", "{a,b}") && !matches("{a,b}", "a"));
        assert!(matches("a**b", "a/x/b") && matches("**", "x"));
    }

    #[test]
    fn bracket_members_globset_cannot_spell() {
        assert!(matches("[[:punct:]]", "!") && matches("[[:punct:]]", "-"));
        assert!(matches("[\\]]", "]") && matches("[!\\]]", "a") && !matches("[!\\]]", "]"));
        assert!(matches("[a\\-z]", "-") && !matches("[a\\-z]", "b"));
        assert!(matches("[\\!]", "!") && !matches("[\\!]", "a"));
        assert!(matches("[\\!\\^]", "^") && matches("[\\^a]", "a"));
        assert!(matches("[]-]", "-") && matches("[]-]", "]") && !matches("[]-]", "a"));
        assert!(matches("[!-/]", "a") && !matches("[!-/]", "-"));
        assert!(matches("[ab\\]", "[ab]") && !matches("[ab\\]", "a"));
        assert!(matches("[a-cz-x]", "b") && !matches("[a-cz-x]", "y"));
        assert!(matches("[!z-x]", "q"));
        assert!(Glob::new("[z-a]", false).is_err());
    }

    #[test]
    fn unclosed_brackets_stay_linear() {
        let started = std::time::Instant::now();
        let pattern = "[".repeat(50_000) + "[:alpha:]";
        assert!(matches(&pattern, &("[".repeat(50_000) + "a")));
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }
}
