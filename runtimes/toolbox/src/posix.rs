//! POSIX regular expressions (basic and extended, GNU flavour) translated into the `regex`
//! crate's syntax, for `grep` and `sed` (a port of the shell's own, which the host-side
//! fallbacks keep). Matching is on bytes (`regex::bytes`), so input that is not UTF-8 works.

use regex::bytes::{Regex, RegexBuilder};

/// Translates a POSIX regex (`basic`: BRE, else ERE) into `regex` syntax. `control_escapes`:
/// `\\n` and `\\t` are a newline and a tab, as sed and awk read them; GNU grep reads them as
/// the letters.
///
/// # Errors
/// For back-references (which the `regex` crate cannot match) and unterminated brackets.
pub fn translate(p: &str, basic: bool, control_escapes: bool) -> Result<String, String> {
    let c: Vec<char> = p.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    // Where `*` is literal and `^` is an anchor: at the start, after `(` and `|`.
    let mut at_start = true;
    while i < c.len() {
        let ch = c[i];
        let was_start = at_start;
        at_start = false;
        match ch {
            '\\' if i + 1 < c.len() => {
                at_start = escaped(c[i + 1], basic, control_escapes, &mut out)?;
                i += 2;
                continue;
            }
            '\\' => out.push_str("\\\\"),
            '[' => {
                let (class, used) = bracket(&c[i..])?;
                out.push_str(&class);
                i += used;
                continue;
            }
            '*' if was_start => out.push_str("\\*"),
            '^' if !was_start => out.push_str("\\^"),
            '^' => {
                out.push('^');
                at_start = true;
            }
            '$' => {
                let end = i + 1 == c.len()
                    || (basic
                        && c.get(i + 1) == Some(&'\\')
                        && matches!(c.get(i + 2), Some(')' | '|')))
                    || (!basic && matches!(c.get(i + 1), Some(')' | '|')));
                out.push_str(if end { "$" } else { "\\$" });
            }
            '(' | ')' | '|' | '+' | '?' | '{' | '}' if basic => {
                out.push('\\');
                out.push(ch);
            }
            '(' | '|' => {
                out.push(ch);
                at_start = true;
            }
            '{' => {
                // An ERE `{` that does not start a valid interval is literal.
                let rest: String = c[i + 1..].iter().take_while(|&&x| x != '}').collect();
                let valid = c[i + 1..].contains(&'}')
                    && !rest.is_empty()
                    && rest.chars().all(|x| x.is_ascii_digit() || x == ',')
                    && rest.chars().next().is_some_and(|x| x.is_ascii_digit());
                out.push_str(if valid && !was_start { "{" } else { "\\{" });
            }
            '}' => {
                // Closing an interval opened above; a stray `}` is literal.
                let open = out
                    .rfind('{')
                    .is_some_and(|o| !out[o..].contains('}') && !out[..o].ends_with('\\'));
                out.push_str(if open { "}" } else { "\\}" });
            }
            other => out.push(other),
        }
        i += 1;
    }
    Ok(out)
}

/// Translates the escape `\\n`; returns whether what follows is at the start of an
/// expression (after a BRE `\\(` or `\\|`). GNU's extensions (`\\w \\W \\s \\S \\b \\B \\< \\>`)
/// are kept; any other escaped letter is the letter itself, as GNU reads it: `\\d` is `d`, not
/// a digit (Perl's classes are grep -P's).
fn escaped(n: char, basic: bool, control_escapes: bool, out: &mut String) -> Result<bool, String> {
    match n {
        '(' | ')' | '|' | '{' | '}' | '+' | '?' if basic => {
            out.push(n);
            return Ok(n == '(' || n == '|');
        }
        '1'..='9' => return Err("back-references (\\1...) are not supported; use python -c".into()),
        '`' => out.push_str("\\A"),
        '\'' => out.push_str("\\z"),
        '<' | '>' | 'b' | 'B' | 'w' | 'W' | 's' | 'S' => out.extend(['\\', n]),
        'n' | 't' if control_escapes => out.extend(['\\', n]),
        other if other.is_ascii_alphanumeric() => out.push(other),
        other => out.extend(['\\', other]),
    }
    Ok(false)
}

/// A POSIX bracket expression starting at `c[0] == '['`, rewritten for `regex`: backslashes and
/// nested `[` are literal, `]` first is literal, `[:class:]` is kept.
fn bracket(c: &[char]) -> Result<(String, usize), String> {
    let mut out = String::from("[");
    let mut i = 1;
    if c.get(i) == Some(&'^') {
        out.push('^');
        i += 1;
    }
    let mut first = true;
    loop {
        let Some(&ch) = c.get(i) else {
            return Err("unmatched [, [^, [:, [., or [=".into());
        };
        match ch {
            ']' if !first => {
                out.push(']');
                return Ok((out, i + 1));
            }
            '[' if matches!(c.get(i + 1), Some(':' | '.' | '=')) => {
                let kind = c[i + 1];
                let rest: String = c[i + 2..].iter().collect();
                let close = format!("{kind}]");
                let Some(end) = rest.find(&close) else {
                    return Err("unmatched [, [^, [:, [., or [=".into());
                };
                let name = &rest[..end];
                if kind == ':' {
                    out.push_str(&format!("[:{name}:]"));
                } else {
                    for x in name.chars() {
                        out.push('\\');
                        out.push(x);
                    }
                }
                i += 2 + name.chars().count() + 2;
            }
            '\\' | '[' | ']' | '&' | '~' | '^' => {
                out.push('\\');
                out.push(ch);
                i += 1;
            }
            '-' if c.get(i + 1) == Some(&'-') => {
                out.push_str("\\-");
                i += 1;
            }
            other => {
                out.push(other);
                i += 1;
            }
        }
        first = false;
    }
}

/// Builds a regex for a list of patterns.
///
/// # Errors
/// The translation's or the regex crate's message.
pub fn build(
    patterns: &[String],
    mode: Syntax,
    ignore_case: bool,
    whole_line: bool,
    control_escapes: bool,
) -> Result<Regex, String> {
    let mut alternatives = Vec::new();
    for p in patterns {
        let translated = match mode {
            Syntax::Fixed => regex::escape(p),
            Syntax::Basic => translate(p, true, control_escapes)?,
            Syntax::Extended => translate(p, false, control_escapes)?,
            Syntax::Perl => perl(p)?,
        };
        alternatives.push(format!("(?:{translated})"));
    }
    let mut re = alternatives.join("|");
    if whole_line {
        re = format!("^(?:{re})$");
    }
    RegexBuilder::new(&re)
        .case_insensitive(ignore_case)
        .size_limit(16 << 20)
        .build()
        .map_err(|e| match e {
            regex::Error::Syntax(s) => s
                .lines()
                .last()
                .unwrap_or("invalid regular expression")
                .trim()
                .to_string(),
            other => other.to_string(),
        })
}

/// How patterns are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    Basic,
    Extended,
    Fixed,
    /// grep -P: the `regex` crate's own syntax, which is Perl's without look-around and
    /// back-references.
    Perl,
}

/// A `-P` pattern as the `regex` crate takes it, or why it cannot be.
fn perl(p: &str) -> Result<String, String> {
    for (look, what) in [
        ("(?=", "look-ahead"),
        ("(?!", "negative look-ahead"),
        ("(?<=", "look-behind"),
        ("(?<!", "negative look-behind"),
    ] {
        if p.contains(look) {
            return Err(format!(
                "-P: {what} ({look}...) is not supported here (the regex crate's syntax: no \
                 look-around, no back-references); match more and trim with -o/sed, or use \
                 python -c"
            ));
        }
    }
    if p.chars()
        .zip(p.chars().skip(1))
        .any(|(a, b)| a == '\\' && b.is_ascii_digit() && b != '0')
    {
        return Err("-P: back-references (\\1...) are not supported here; use python -c".into());
    }
    Ok(p.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bre(p: &str) -> String {
        translate(p, true, false).unwrap()
    }

    fn ere(p: &str) -> String {
        translate(p, false, false).unwrap()
    }

    fn is_match(p: &str, basic: bool, s: &str) -> bool {
        let mode = if basic {
            Syntax::Basic
        } else {
            Syntax::Extended
        };
        build(&[p.to_string()], mode, false, false, false)
            .unwrap()
            .is_match(s.as_bytes())
    }

    #[test]
    fn basic_regex_translation() {
        assert_eq!(bre("a\\(b\\)*c"), "a(b)*c");
        assert_eq!(bre("a+b?(c)|d{2}"), "a\\+b\\?\\(c\\)\\|d\\{2\\}");
        assert_eq!(bre("x\\{2,3\\}"), "x{2,3}");
        assert_eq!(bre("*a"), "\\*a");
        assert_eq!(bre("a^b$c$"), "a\\^b\\$c$");
        assert_eq!(bre("[]a\\[]"), "[\\]a\\\\\\[]");
        assert_eq!(bre("[[:digit:]]"), "[[:digit:]]");
        assert!(translate("\\(a\\)\\1", true, false).is_err());
        assert!(translate("[abc", true, false).is_err());
        assert!(is_match("^foo.*bar$", true, "foo x bar"));
        assert!(is_match("a\\|b", true, "b"));
        assert!(is_match("a+", true, "a+"));
        assert!(!is_match("a+", true, "aa"));
        assert!(is_match("\\<word\\>", true, "a word here"));
    }

    #[test]
    fn extended_regex_translation() {
        assert_eq!(ere("(a|b)+{2}"), "(a|b)+{2}");
        assert_eq!(ere("a{"), "a\\{");
        assert_eq!(ere("a{x}"), "a\\{x\\}");
        assert!(is_match("^(ab)+$", false, "abab"));
        assert!(is_match("[0-9]{3}-[0-9]{4}", false, "555-1234"));
        assert!(is_match("a{", false, "a{"));
    }

    #[test]
    fn escaped_letters_are_read_as_gnu_reads_them() {
        // GNU grep -E '\d' matches the letter d, never a digit; `\t` is the letter t.
        assert!(!is_match("\\d+\\.\\d+", false, "v1.25"));
        assert!(is_match("\\d+\\.\\d+", false, "dd.d"));
        assert!(is_match("\\D", true, "D"));
        assert!(is_match("a\\tb", true, "atb"));
        assert!(!is_match("a\\tb", true, "a\tb"));
        // sed and awk read `\t` and `\n` as a tab and a newline.
        assert_eq!(translate("a\\tb\\n", false, true).unwrap(), "a\\tb\\n");
        // GNU's own classes stay classes.
        assert!(is_match("\\w+\\s\\S", false, "ab c"));
    }
}
