//! Shell wildcard patterns (`*`, `?`, `[...]` with `!` or `^`, ranges and `[:class:]`, `\`
//! quoting), matched as fnmatch(3) without flags matches them, by characters (a UTF-8 locale:
//! `?` is one character, not one byte). The one matcher of the sandbox's shell: the toolbox's
//! `find -name`/`-path`, grep's `--include`/`--exclude`, tar's and du's `--exclude`, and the
//! worker's shell (pathname expansion, `case`, `[[ == ]]`, `${NAME#pattern}`), which includes
//! this file.
//!
//! Matching keeps one backtrack point, for the last `*`: time is at most the pattern's length
//! times the text's. A bracket expression is looked for over [`MAX_CLASS`] characters at most,
//! so a word of many unclosed `[` stays linear too.

/// The longest bracket expression looked for; an unclosed or longer one is a literal `[`.
const MAX_CLASS: usize = 256;

/// A pattern ready to match whole names or paths (`/` is an ordinary character).
#[derive(Debug, Clone)]
pub struct Glob {
    pattern: Vec<char>,
    fold: bool,
}

impl Glob {
    /// `pattern`, where a backslash makes the next character literal; `fold` ignores case
    /// (find's `-iname`).
    pub fn new(pattern: &str, fold: bool) -> Self {
        Self {
            pattern: pattern.chars().collect(),
            fold,
        }
    }

    /// Whether the whole of `text` matches.
    pub fn matches(&self, text: &str) -> bool {
        let (p, fold) = (self.pattern.as_slice(), self.fold);
        let n: Vec<char> = text.chars().collect();
        let eq = |a: char, b: char| a == b || (fold && a.to_lowercase().eq(b.to_lowercase()));
        let (mut pi, mut ni) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while ni < n.len() {
            let step = match p.get(pi) {
                Some('*') => {
                    star = Some((pi, ni));
                    pi += 1;
                    continue;
                }
                Some('?') => Some(pi + 1),
                Some('[') => match bracket(&p[pi..], n[ni], fold) {
                    Some((hit, used)) => hit.then_some(pi + used),
                    None => eq('[', n[ni]).then_some(pi + 1),
                },
                // A trailing backslash stands for itself.
                Some('\\') if pi + 1 < p.len() => eq(p[pi + 1], n[ni]).then_some(pi + 2),
                Some(&c) => eq(c, n[ni]).then_some(pi + 1),
                None => None,
            };
            match (step, star) {
                (Some(next), _) => {
                    pi = next;
                    ni += 1;
                }
                (None, Some((sp, sn))) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                (None, None) => return false,
            }
        }
        p[pi..].iter().all(|&c| c == '*')
    }
}

/// Whether `c` is of the POSIX class `name`; `None` for a name that is not one.
fn in_class(name: &str, c: char) -> Option<bool> {
    Some(match name {
        "alpha" => c.is_alphabetic(),
        "digit" => c.is_ascii_digit(),
        "alnum" => c.is_alphanumeric(),
        "upper" => c.is_uppercase(),
        "lower" => c.is_lowercase(),
        "space" => c.is_whitespace(),
        "blank" => c == ' ' || c == '\t',
        "punct" => c.is_ascii_punctuation(),
        "xdigit" => c.is_ascii_hexdigit(),
        "cntrl" => c.is_control(),
        "print" => !c.is_control(),
        "graph" => !c.is_control() && !c.is_whitespace(),
        _ => return None,
    })
}

/// A bracket expression at `p[0] == '['` against `c`: whether it matches and how many pattern
/// characters it took; `None` when it is not closed within [`MAX_CLASS`] (then `[` is
/// literal). A backslash quotes the next member; a reversed range (`z-a`) matches nothing.
fn bracket(p: &[char], c: char, fold: bool) -> Option<(bool, usize)> {
    let p = &p[..p.len().min(MAX_CLASS)];
    let negate = matches!(p.get(1), Some('!' | '^'));
    let first = 1 + usize::from(negate);
    let lower = |x: char| {
        if fold {
            x.to_lowercase().next().unwrap_or(x)
        } else {
            x
        }
    };
    let c = lower(c);
    let mut hit = false;
    let mut i = first;
    loop {
        let &x = p.get(i)?;
        if x == ']' && i > first {
            return Some((hit != negate, i + 1));
        }
        if x == '[' && p.get(i + 1) == Some(&':') {
            // Class names are short: look a few characters ahead, never the whole pattern.
            let ahead: String = p[i + 2..].iter().take(8).collect();
            if let Some((name, _)) = ahead.split_once(":]")
                && let Some(member) = in_class(name, c)
            {
                hit |= member;
                i += name.len() + 4;
                continue;
            }
        }
        let (lo, next) = member(p, i)?;
        if p.get(next) == Some(&'-') && p.get(next + 1).is_some_and(|&e| e != ']') {
            let (hi, after) = member(p, next + 1)?;
            hit |= lower(lo) <= c && c <= lower(hi);
            i = after;
        } else {
            hit |= lower(lo) == c;
            i = next;
        }
    }
}

/// The member of a bracket expression at `p[i]` (a backslash quotes it) and where the next one
/// starts.
fn member(p: &[char], i: usize) -> Option<(char, usize)> {
    match p.get(i)? {
        '\\' => Some((*p.get(i + 1)?, i + 2)),
        &c => Some((c, i + 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::Glob;

    fn m(pattern: &str, text: &str) -> bool {
        Glob::new(pattern, false).matches(text)
    }

    #[test]
    fn wildcards_match_like_fnmatch() {
        assert!(m("*.py", "a.py") && !m("*.py", "a.pyc"));
        assert!(m("*.txt", ".hidden.txt"));
        assert!(m("a*b*c", "axxbyyc") && m("a*b*c", "aXbYbc"));
        assert!(m("a?c", "abc") && m("[a-c]x", "bx") && m("[!a-c]x", "dx"));
        assert!(m("?b[cd]", "abd") && !m("?b[!cd]", "abd"));
        assert!(m("[^a]", "b") && !m("[^a]", "a"));
        assert!(
            Glob::new("*.TXT", true).matches("a.txt") && Glob::new("A.TXT", true).matches("a.txt")
        );
        assert!(m("a\\*", "a*") && !m("a\\*", "ab") && m("a\\", "a\\"));
        assert!(m("[ab", "[ab") && m("x]", "x]"));
        assert!(m("*", "") && m("*/*", "a/b") && m("*sub/*.py", "d/sub/b.py"));
        assert!(m("héllo*", "héllo wörld") && m("h?llo", "héllo"));
        assert!(m("{a,b}", "{a,b}") && !m("{a,b}", "a"));
        assert!(m("a**b", "a/x/b") && m("**", "x"));
    }

    #[test]
    fn bracket_expressions() {
        assert!(m("[[:digit:]]x", "7x") && !m("[[:digit:]]x", "ax"));
        assert!(m("[[:alpha:]_][[:alnum:]]", "x1"));
        assert!(m("[![:space:]]", "a") && !m("[![:space:]]", " "));
        assert!(m("[[:punct:]]", "]") && m("[[:punct:]]", "!") && !m("[[:punct:]]", "a"));
        assert!(!m("[[:upper:]]", "a") && m("[[:blank:]]", "\t") && m("[[:graph:]]", "x"));
        assert!(m("[]]", "]") && m("[]a]", "a") && m("[!]]", "a"));
        assert!(m("[\\]]", "]") && m("[!\\]]", "a") && !m("[!\\]]", "]"));
        assert!(m("[a\\-z]", "-") && !m("[a\\-z]", "b"));
        assert!(m("[\\!]", "!") && !m("[\\!]", "a") && m("[\\^a]", "a"));
        assert!(m("[]-]", "-") && m("[]-]", "]") && !m("[]-]", "a"));
        assert!(m("[!-/]", "a") && !m("[!-/]", "-"));
        assert!(m("[ab\\]", "[ab]") && !m("[ab\\]", "a"));
        assert!(m("[a-cz-x]", "b") && !m("[a-cz-x]", "y"));
        assert!(m("[!z-x]", "q") && !m("[z-a]", "q") && !m("[z-a]", "z"));
    }

    #[test]
    fn unclosed_brackets_stay_linear() {
        let started = std::time::Instant::now();
        let pattern = "[".repeat(50_000) + "[:alpha:]";
        assert!(m(&pattern, &("[".repeat(50_000) + "a")));
        let stars = "*a".repeat(2_000);
        assert!(!m(&stars, &"a".repeat(1_999)));
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
    }
}
