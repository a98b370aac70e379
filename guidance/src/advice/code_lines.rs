//! Reading a guest's code line by line, as the checks that look for a pattern in it do: how
//! deep a line is indented, which lines form the block a header opens (a `class`, `def`,
//! `for`, `while` or `except` body), and whether a piece of text is one plain name. One
//! reading for `silent`, `stops`, `limits` and `runtime`, so they agree on where a block ends.

/// How deep `line` is indented: the length in bytes of its leading whitespace. A tab counts as
/// one, like a space: a line is only ever compared with its own header and block, which a
/// working program indents alike.
pub(super) fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The lines after line `at` that are indented deeper than it, up to the first that is not:
/// the body of a Python header (`class`, `def`, `for`, `while`, `except`), or of a JavaScript
/// block whose closing `}` stands at its header's depth (the brace ends it). Blank lines are
/// part of the block wherever they fall, since Python ignores them; a comment line counts by
/// its own indentation like any other.
///
/// # Panics
///
/// When `at` is not an index of `lines`.
pub(super) fn block<'l, 'c>(lines: &'l [&'c str], at: usize) -> &'l [&'c str] {
    let header = indent(lines[at]);
    let after = &lines[at + 1..];
    let len = after
        .iter()
        .take_while(|l| l.trim().is_empty() || indent(l) > header)
        .count();
    &after[..len]
}

/// [`block`] with each line's index among `lines`, for findings that name a line.
///
/// # Panics
///
/// When `at` is not an index of `lines`.
pub(super) fn numbered_block<'c>(lines: &[&'c str], at: usize) -> Vec<(usize, &'c str)> {
    (at + 1..).zip(block(lines, at).iter().copied()).collect()
}

/// Whether `text` is one plain name (letters, digits and `_`, at least one), as a check
/// requires of a word it quotes back or builds a pattern from (`self.{name}`).
pub(super) fn is_name(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_is_the_deeper_lines_after_its_header() {
        let lines = [
            "class A(B):",
            "    def __init__(self):",
            "",
            "        self.x = 1",
            "    # a comment in the body",
            "# a comment at the header's depth ends the block",
            "after = 1",
        ];
        // A blank line stays in the block; the comment at column 0 ends it.
        assert_eq!(block(&lines, 0), &lines[1..5]);
        assert_eq!(
            numbered_block(&lines, 1),
            [(2, ""), (3, "        self.x = 1")].to_vec()
        );
        assert!(block(&lines, 6).is_empty());
        // A tab is one column: deeper than no indentation, shallower than four spaces.
        let tabs = ["def f():", "\tx = 1", "\ty = 2"];
        assert_eq!(block(&tabs, 0), &tabs[1..]);
        assert!(block(&tabs, 1).is_empty());
        assert!(block(&["    if x:", "\ty = 2"], 0).is_empty());
        // A JavaScript block ends at its closing brace, at the header's depth.
        let js = ["while (i < 3) {", "  i++;", "}", "  later();"];
        assert_eq!(numbered_block(&js, 0), [(1, "  i++;")].to_vec());
    }

    #[test]
    fn names_are_letters_digits_and_underscores() {
        assert!(is_name("seen_2"));
        assert!(is_name("café"));
        for not_a_name in ["", "a.b", "x y", "f()", "$x"] {
            assert!(!is_name(not_a_name), "{not_a_name}");
        }
    }
}
