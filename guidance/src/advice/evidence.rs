//! Reading the evidence of a failure: where in the user's code it happened (tracebacks and
//! stacks name `<cell N>`), the quoted path or module of a message, the undefined name of a
//! ReferenceError. All of it is text from the guest, so every reader is total: hostile input
//! gives `None`, never a panic. It reads and says nothing itself: the texts it looks for are the
//! guest's own (`<cell `, `No module named `), so `words/evidence.toml` stays empty.

use sandbox_protocol::Language;

/// A position in the user's code, read off a traceback or stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Location {
    pub(super) cell: u32,
    pub(super) line: u32,
    pub(super) col: Option<u32>,
    /// The innermost frame is in this call's code (not in a function from an earlier call).
    pub(super) current: bool,
}

/// Python: `File "<cell 3>", line 2` (outermost first). JavaScript: `<cell 3>:2:10` (innermost
/// first).
pub(super) fn locate(stderr: &str, message: &str, language: Language) -> Option<Location> {
    let mut frames: Vec<(u32, u32, Option<u32>)> = Vec::new();
    let text = tail(stderr, 16_000);
    let mut rest = text;
    while let Some(at) = rest.find("<cell ") {
        rest = &rest[at + 6..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let Ok(cell) = digits.parse::<u32>() else {
            continue;
        };
        let after = &rest[digits.len()..];
        match language {
            Language::Python => {
                if let Some(line) = after
                    .strip_prefix(">\", line ")
                    .or_else(|| after.strip_prefix(">, line "))
                {
                    let n: String = line.chars().take_while(char::is_ascii_digit).collect();
                    if let Ok(line) = n.parse() {
                        frames.push((cell, line, None));
                    }
                }
            }
            Language::JavaScript => {
                if let Some(pos) = after.strip_prefix(">:") {
                    let mut parts = pos.split(|c: char| !c.is_ascii_digit());
                    let line = parts.next().and_then(|l| l.parse().ok());
                    let col = parts.next().and_then(|c| c.parse().ok());
                    if let Some(line) = line {
                        frames.push((cell, line, col));
                    }
                }
            }
        }
        if frames.len() > 200 {
            break;
        }
    }
    if frames.is_empty() && language == Language::Python && !message.is_empty() {
        // SyntaxError messages: "... (<cell 1>, line 3)"
        return locate(message, "", Language::Python);
    }
    let (inner, outer) = match language {
        Language::Python => (frames.last()?, frames.first()?),
        Language::JavaScript => (frames.first()?, frames.last()?),
    };
    Some(Location {
        cell: inner.0,
        line: inner.1,
        col: inner.2,
        current: inner.0 == outer.0,
    })
}

/// The last `'...'` quoted part of a message (the path of an OSError, a module name).
pub(super) fn quoted(text: &str) -> Option<&str> {
    let end = text.rfind('\'')?;
    let start = text[..end].rfind('\'')?;
    let inner = &text[start + 1..end];
    (!inner.is_empty() && inner.len() <= 1024).then_some(inner)
}

/// `yaml` from "No module named 'yaml'" (or `_lzma`, `PIL.Image`).
pub(super) fn module_from(evidence: &str) -> Option<String> {
    let at = evidence.rfind("No module named ")?;
    let rest = &evidence[at + "No module named ".len()..];
    let rest = rest.trim_start_matches(['\'', '"']);
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.' || *c == '-')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// `x` from "x is not defined" / "'x' is not defined".
pub(super) fn js_undefined_name(message: &str) -> Option<String> {
    let at = message.find(" is not defined")?;
    let head = message[..at].trim_end().trim_matches('\'');
    let name = head.rsplit([' ', ':', '\'']).next()?;
    (!name.is_empty() && name.len() <= 64).then(|| name.to_owned())
}

/// The operand that ends at byte `end` of a source line: a name with attributes, calls and
/// indexes (`word`, `line.split(',')`, `parts[2]`, `user.profile`), read backwards. `None`
/// when what ends there is something else (a literal, an operator) or longer than 80 bytes.
pub(super) fn operand_ending_at(line: &str, end: usize) -> Option<&str> {
    let bytes = line.as_bytes();
    let mut start = end.min(bytes.len());
    while start > 0 {
        match bytes[start - 1] {
            b')' | b']' => {
                let (close, open) = if bytes[start - 1] == b')' {
                    (b')', b'(')
                } else {
                    (b']', b'[')
                };
                let mut depth = 0usize;
                let mut at = start;
                loop {
                    at = at.checked_sub(1)?;
                    if bytes[at] == close {
                        depth += 1;
                    } else if bytes[at] == open {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                }
                start = at;
            }
            c if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'$' => start -= 1,
            _ => break,
        }
    }
    let operand = line.get(start..end)?;
    let first = operand.chars().next()?;
    ((first.is_ascii_alphabetic() || first == '_' || first == '$') && operand.len() <= 80)
        .then_some(operand)
}

/// The operand that starts at byte `start` of a source line (after spaces): a name or number
/// with attributes, calls and indexes (`len(values)`, `n`, `counts['a']`), read forwards.
/// `None` when something else starts there or it is longer than 80 bytes.
pub(super) fn operand_starting_at(line: &str, start: usize) -> Option<&str> {
    let bytes = line.as_bytes();
    let mut start = start;
    while bytes.get(start) == Some(&b' ') {
        start += 1;
    }
    let mut end = start;
    while let Some(&c) = bytes.get(end) {
        match c {
            b'(' | b'[' => {
                let (open, close) = if c == b'(' {
                    (b'(', b')')
                } else {
                    (b'[', b']')
                };
                let mut depth = 0usize;
                loop {
                    match bytes.get(end)? {
                        b if *b == open => depth += 1,
                        b if *b == close => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    end += 1;
                }
                end += 1;
            }
            c if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' => end += 1,
            _ => break,
        }
    }
    let operand = line.get(start..end)?;
    let first = operand.chars().next()?;
    ((first.is_ascii_alphanumeric() || first == '_') && operand.len() <= 80).then_some(operand)
}

/// The characters of `text` outside its string literals (delimited by any of `quotes`, with
/// backslash escapes), with their byte offsets; the delimiters are not among them.
pub(super) fn outside_strings<'a>(
    text: &'a str,
    quotes: &'a [char],
) -> impl Iterator<Item = (usize, char)> + 'a {
    let mut quote = None;
    let mut escaped = false;
    text.char_indices().filter(move |&(_, c)| match quote {
        Some(q) => {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            false
        }
        None if quotes.contains(&c) => {
            quote = Some(c);
            false
        }
        None => true,
    })
}

/// The divisor of the last division or modulo on a line: `len(values)` in
/// `avg = sum(values) / len(values)`.
pub(super) fn divisor(line: &str) -> Option<&str> {
    // The last `/` or `%` outside string literals.
    let at = outside_strings(line, &['\'', '"'])
        .filter(|&(_, c)| c == '/' || c == '%')
        .last()
        .map(|(i, _)| i);
    let at = at?;
    let before = line[..at].trim_end_matches(['/', ' ']);
    let binary = before
        .chars()
        .last()
        .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ')' || c == ']');
    binary.then(|| operand_starting_at(line, at + 1)).flatten()
}

/// The sequence a line indexes first: `word` in `print(word[3])`, `line.split(',')` in
/// `city = line.split(',')[2]`.
pub(super) fn indexed_sequence(line: &str) -> Option<&str> {
    line.match_indices('[')
        .find_map(|(at, _)| operand_ending_at(line, at))
}

/// The operand a line reads `.name` of: `parts[2]` for `trim` in `parts[2].trim()`.
pub(super) fn operand_of_member<'l>(line: &'l str, name: &str) -> Option<&'l str> {
    let member = format!(".{name}");
    line.match_indices(&member)
        .filter(|(at, _)| {
            // `.name` itself, not the start of `.names`.
            line[at + member.len()..]
                .chars()
                .next()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
        })
        .find_map(|(at, _)| operand_ending_at(line, at))
}

/// True for an id the tools accept: `^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`.
pub(super) fn valid_session_id(id: &str) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && id.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The last `max` bytes of `s`, on a character boundary.
pub(super) fn tail(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_are_read_back_from_indexes_and_members() {
        assert_eq!(indexed_sequence("print(word[3])"), Some("word"));
        assert_eq!(
            indexed_sequence("city = line.split(',')[2]"),
            Some("line.split(',')")
        );
        assert_eq!(indexed_sequence("header = rows[0]"), Some("rows"));
        assert_eq!(indexed_sequence("x = [1, 2][5]"), None);
        assert_eq!(indexed_sequence("print('abc'[3])"), None);
        assert_eq!(indexed_sequence("no index here"), None);
        assert_eq!(
            operand_of_member("console.log(parts[2].trim());", "trim"),
            Some("parts[2]")
        );
        assert_eq!(
            operand_of_member("console.log(user.profile.name);", "name"),
            Some("user.profile")
        );
        assert_eq!(
            operand_of_member("const header = rows[0].split(',');", "split"),
            Some("rows[0]")
        );
        assert_eq!(operand_of_member("a.names + 1", "name"), None);
        assert_eq!(
            divisor("avg = sum(values) / len(values)"),
            Some("len(values)")
        );
        assert_eq!(divisor("r = total // n"), Some("n"));
        assert_eq!(divisor("r = x % counts['a'] + 1"), Some("counts['a']"));
        assert_eq!(divisor("open('/app/x.txt')"), None);
        assert_eq!(divisor("r = 1 / (a - b)"), None);
        assert_eq!(operand_of_member("stack.pop()", "pop"), Some("stack"));
        // Hostile lines never panic: unbalanced brackets, multi-byte text.
        for line in [
            "]]]]x[", ")(.a", "é[0]", "x)[0]", "[", ".", "ü.pop()", "x / (", "x / é",
        ] {
            let _ = indexed_sequence(line);
            let _ = operand_of_member(line, "pop");
            let _ = divisor(line);
        }
    }

    #[test]
    fn locations_table() {
        let py_tb = "Traceback (most recent call last):\n  File \"<cell 5>\", line 1, in <module>\n  File \"<cell 2>\", line 3, in helper\nKeyError: 'x'\n";
        let cases: [(&str, &str, Language, Option<(u32, u32, Option<u32>, bool)>); 6] = [
            (py_tb, "", Language::Python, Some((2, 3, None, false))),
            (
                "  File \"<cell 4>\", line 2, in <module>\n",
                "",
                Language::Python,
                Some((4, 2, None, true)),
            ),
            (
                "",
                "SyntaxError: '(' was never closed (<cell 1>, line 3)",
                Language::Python,
                Some((1, 3, None, true)),
            ),
            (
                "Uncaught TypeError\n    at f (<cell 3>:2:36)\n    at <cell 4>:1:1\n",
                "",
                Language::JavaScript,
                Some((3, 2, Some(36), false)),
            ),
            ("<cell x>, line 2", "", Language::Python, None),
            (
                "<cell 99999999999999999999>, line x",
                "",
                Language::Python,
                None,
            ),
        ];
        for (stderr, message, language, want) in cases {
            let got = locate(stderr, message, language).map(|l| (l.cell, l.line, l.col, l.current));
            assert_eq!(got, want, "{stderr:?} {message:?}");
        }
    }

    #[test]
    fn string_literals_are_skipped_escapes_included() {
        let code: String = outside_strings(r#"a / "b / \" c" % 'd'"#, &['"', '\''])
            .map(|(_, c)| c)
            .collect();
        assert_eq!(code, "a /  % ");
        assert_eq!(divisor(r#"x = "50%" + str(a / len(b))"#), Some("len(b)"));
    }

    #[test]
    fn quoted_parts_and_names_table() {
        assert_eq!(
            quoted("No such file or directory: '/etc/passwd'"),
            Some("/etc/passwd")
        );
        assert_eq!(quoted("''"), None);
        assert_eq!(quoted("'"), None);
        assert_eq!(
            module_from("ModuleNotFoundError: No module named 'PIL.Image'"),
            Some("PIL.Image".to_owned())
        );
        assert_eq!(module_from("No module named "), None);
        assert_eq!(
            js_undefined_name("ReferenceError: 'df' is not defined"),
            Some("df".to_owned())
        );
        assert_eq!(
            js_undefined_name("require is not defined"),
            Some("require".to_owned())
        );
        assert_eq!(js_undefined_name("x is defined"), None);
        for (id, valid) in [
            ("s1", true),
            ("-x", false),
            ("", false),
            ("a b", false),
            ("work-fuel_2", true),
        ] {
            assert_eq!(valid_session_id(id), valid, "{id}");
        }
        assert_eq!(tail("héllo", 4), "llo");
        assert_eq!(tail("abc", 10), "abc");
    }
}
