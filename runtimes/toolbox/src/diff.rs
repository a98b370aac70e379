//! `diff`: GNU diff's options, operands and statuses (0 when the inputs are the same, 1 when
//! they differ, 2 on trouble: an unknown option, an unreadable input). The lines are compared by
//! [`myers`] and printed by [`print`] (normal, unified, context and brief formats, with
//! `-i -w -b -B -E -Z --strip-trailing-cr`); directories are walked by [`tree`] (`-r -N -x -X`).
//! A GNU option this diff does not have is refused by name, never ignored: its output would
//! not be GNU's.

mod myers;
mod print;
mod tree;

use crate::getopt::{self, Long, refused};

/// The output formats printed here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Normal,
    Unified,
    Context,
}

/// What the command line asked for.
#[derive(Debug, Clone)]
pub struct Options {
    pub format: Format,
    pub context: usize,
    pub brief: bool,
    pub report_identical: bool,
    pub text: bool,
    pub ignore_case: bool,
    pub ignore_all_space: bool,
    pub ignore_space_change: bool,
    pub ignore_trailing_space: bool,
    pub ignore_tab_expansion: bool,
    pub ignore_blank_lines: bool,
    pub strip_trailing_cr: bool,
    pub expand_tabs: bool,
    pub tabsize: usize,
    pub recursive: bool,
    pub new_file: bool,
    /// `-x` and `-X` patterns, matched against each name in a directory.
    pub exclude: Vec<crate::glob::Glob>,
    /// `diff` and the option words as given, shell-quoted: the line GNU prints before each pair
    /// of files it compares inside directories.
    pub command: String,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            format: Format::Normal,
            context: 3,
            brief: false,
            report_identical: false,
            text: false,
            ignore_case: false,
            ignore_all_space: false,
            ignore_space_change: false,
            ignore_trailing_space: false,
            ignore_tab_expansion: false,
            ignore_blank_lines: false,
            strip_trailing_cr: false,
            expand_tabs: false,
            tabsize: 8,
            recursive: false,
            new_file: false,
            exclude: Vec::new(),
            command: "diff".to_owned(),
        }
    }
}

/// Letters standing for GNU's long-only options (private-use characters, never typed).
const STRIP_CR: char = '\u{e000}';
const TABSIZE: char = '\u{e001}';
const NORMAL: char = '\u{e002}';
const NO_OP: char = '\u{e003}';
/// GNU's long-only options this diff refuses: each its own letter ([`getopt::refused`]).
const REFUSED_LONG: &[&str] = &[
    "ignore-file-name-case",
    "speed-large-files",
    "horizon-lines",
    "left-column",
    "suppress-common-lines",
    "suppress-blank-empty",
    "old-line-format",
    "new-line-format",
    "unchanged-line-format",
    "line-format",
    "old-group-format",
    "new-group-format",
    "unchanged-group-format",
    "changed-group-format",
    "from-file",
    "to-file",
    "no-dereference",
    "color",
    "palette",
    "help",
];
/// The long-only refused options that take a value.
const REFUSED_VALUED: &[&str] = &[
    "horizon-lines",
    "old-line-format",
    "new-line-format",
    "unchanged-line-format",
    "line-format",
    "old-group-format",
    "new-group-format",
    "unchanged-group-format",
    "changed-group-format",
    "from-file",
    "to-file",
    "palette",
];

/// Every short letter of GNU diff (`:` after one taking a value; `#`: `-NUM`).
const SHORT: &str = "abBcC:dD:eEfF:HiI:lL:nNpPqrsS:tTuU:vwW:x:X:yZ#";

const LONG: &[Long] = &[
    ("brief", 'q', false),
    ("report-identical-files", 's', false),
    ("recursive", 'r', false),
    ("new-file", 'N', false),
    ("unidirectional-new-file", 'P', false),
    ("starting-file", 'S', true),
    ("exclude", 'x', true),
    ("exclude-from", 'X', true),
    ("text", 'a', false),
    ("strip-trailing-cr", STRIP_CR, false),
    ("ignore-case", 'i', false),
    ("ignore-tab-expansion", 'E', false),
    ("ignore-trailing-space", 'Z', false),
    ("ignore-space-change", 'b', false),
    ("ignore-all-space", 'w', false),
    ("ignore-blank-lines", 'B', false),
    ("ignore-matching-lines", 'I', true),
    ("minimal", 'd', false),
    ("context", 'c', false),
    ("unified", 'u', false),
    ("normal", NORMAL, false),
    ("ed", 'e', false),
    ("forward-ed", 'f', false),
    ("rcs", 'n', false),
    ("ifdef", 'D', true),
    ("side-by-side", 'y', false),
    ("width", 'W', true),
    ("label", 'L', true),
    ("show-c-function", 'p', false),
    ("show-function-line", 'F', true),
    ("expand-tabs", 't', false),
    ("initial-tab", 'T', false),
    ("tabsize", TABSIZE, true),
    ("paginate", 'l', false),
    ("version", 'v', false),
    // Without effect on POSIX systems, or what this diff does anyway.
    ("binary", NO_OP, false),
    ("no-ignore-file-name-case", NO_OP, false),
    ("ignore-file-name-case", refused(0), false),
    ("speed-large-files", refused(1), false),
    ("horizon-lines", refused(2), true),
    ("left-column", refused(3), false),
    ("suppress-common-lines", refused(4), false),
    ("suppress-blank-empty", refused(5), false),
    ("old-line-format", refused(6), true),
    ("new-line-format", refused(7), true),
    ("unchanged-line-format", refused(8), true),
    ("line-format", refused(9), true),
    ("old-group-format", refused(10), true),
    ("new-group-format", refused(11), true),
    ("unchanged-group-format", refused(12), true),
    ("changed-group-format", refused(13), true),
    ("from-file", refused(14), true),
    ("to-file", refused(15), true),
    ("no-dereference", refused(16), false),
    ("color", refused(17), false),
    ("palette", refused(18), true),
    ("help", refused(19), false),
];

/// Runs `diff` with `args` (`args[0]` is the command's name).
pub fn main(args: super::Args) -> i32 {
    let words = getopt::words(args);
    let options = match parse(&words) {
        Ok(parsed) => parsed,
        Err(Some(message)) => {
            eprintln!("diff: {message}\ndiff: Try 'diff --help' for more information.");
            return 2;
        }
        Err(None) => return 2,
    };
    let (options, from, to) = options;
    let mut out = std::io::stdout().lock();
    tree::top(&options, &from, &to, &mut out)
}

/// The options and the two operands; `Err(Some)`: GNU's usage error, `Err(None)`: refused (the
/// reason said).
fn parse(words: &[String]) -> Result<(Options, String, String), Option<String>> {
    // `--context=N` and `--unified=N` (an optional value, which the parser does not have) as
    // the `-CN` and `-UN` they mean, word for word.
    let mut rewritten = words.to_vec();
    for word in rewritten.iter_mut().take_while(|w| *w != "--") {
        let Some((name, value)) = word.strip_prefix("--").and_then(|w| w.split_once('=')) else {
            continue;
        };
        let letters: Vec<char> = (LONG.iter())
            .filter(|l| l.0.starts_with(name))
            .map(|l| l.1)
            .collect();
        let exact = LONG.iter().find(|l| l.0 == name).map(|l| l.1);
        let letter = exact.or_else(|| letters.iter().all(|c| *c == letters[0]).then(|| letters[0]));
        match letter {
            Some('c') if !letters.is_empty() => *word = format!("-C{value}"),
            Some('u') if !letters.is_empty() => *word = format!("-U{value}"),
            _ => {}
        }
    }
    let parsed = getopt::parse(&rewritten, SHORT, LONG).map_err(Some)?;
    let mut o = Options::default();
    let mut format = None;
    let mut context = None;
    let mut set_format = |f: Format| match format.replace(f) {
        Some(old) if old != f => Err(Some("conflicting output style options".to_owned())),
        _ => Ok(()),
    };
    let number = |v: &str| v.parse::<usize>().ok();
    for (c, value) in &parsed.opts {
        let value = value.as_deref().unwrap_or("");
        match c {
            'q' => o.brief = true,
            's' => o.report_identical = true,
            'r' => o.recursive = true,
            'N' => o.new_file = true,
            'x' => o.exclude.push(crate::glob::Glob::new(value, false)),
            'X' => match std::fs::read(value) {
                Ok(bytes) => {
                    let text = String::from_utf8_lossy(&bytes);
                    for line in text.lines() {
                        o.exclude.push(crate::glob::Glob::new(line, false));
                    }
                }
                Err(e) => {
                    eprintln!("diff: {value}: {}", crate::diff::tree::reason(&e));
                    return Err(None);
                }
            },
            'a' => o.text = true,
            'i' => o.ignore_case = true,
            'E' => o.ignore_tab_expansion = true,
            'Z' => o.ignore_trailing_space = true,
            'b' => o.ignore_space_change = true,
            'w' => o.ignore_all_space = true,
            'B' => o.ignore_blank_lines = true,
            't' => o.expand_tabs = true,
            'd' => {}
            'c' => set_format(Format::Context)?,
            'u' => set_format(Format::Unified)?,
            'C' | 'U' => {
                set_format(if *c == 'C' {
                    Format::Context
                } else {
                    Format::Unified
                })?;
                // `--unified=` (no number) is plain -u.
                if !value.is_empty() {
                    let n = number(value)
                        .ok_or_else(|| Some(format!("invalid context length '{value}'")))?;
                    context = Some(n);
                }
            }
            '#' => context = number(value).or(Some(usize::MAX)),
            'W' => {
                number(value)
                    .filter(|n| *n > 0)
                    .ok_or_else(|| Some(format!("invalid width '{value}'")))?;
            }
            _ if *c == NORMAL => set_format(Format::Normal)?,
            _ if *c == NO_OP => {}
            _ if *c == STRIP_CR => o.strip_trailing_cr = true,
            _ if *c == TABSIZE => {
                o.tabsize = number(value)
                    .filter(|n| *n > 0)
                    .ok_or_else(|| Some(format!("invalid tabsize '{value}'")))?;
            }
            _ => {
                refuse(*c);
                return Err(None);
            }
        }
    }
    o.format = format.unwrap_or(Format::Normal);
    if let Some(n) = context {
        o.context = n;
    }
    match parsed.operands.as_slice() {
        [from, to] => {
            let mut command = String::from("diff");
            for (at, word) in words.iter().enumerate() {
                if !parsed.operand_at.contains(&at) {
                    command.push(' ');
                    command.push_str(&shell_quoted(word));
                }
            }
            o.command = command;
            Ok((o, from.clone(), to.clone()))
        }
        [] => Err(Some("missing operand after 'diff'".to_owned())),
        [one] => Err(Some(format!("missing operand after '{one}'"))),
        [_, _, extra, ..] => Err(Some(format!("extra operand '{extra}'"))),
    }
}

/// Says why option `c` is refused: GNU diff has it, this one does not.
fn refuse(c: char) {
    let format = |what: &str| {
        eprintln!(
            "diff: {what} output is not supported here; use diff -u (or -c, or the default format)"
        )
    };
    match c {
        // Their output is not printed here: refused, never printed wrong.
        'e' => format("ed script (-e)"),
        'f' => format("forward ed script (-f)"),
        'n' => format("RCS (-n)"),
        'y' => format("side-by-side (-y)"),
        'D' => format("#ifdef (-D)"),
        _ => {
            let name = match c {
                'P' => "-P (--unidirectional-new-file)",
                'S' => "-S (--starting-file)",
                'I' => "-I (--ignore-matching-lines)",
                'L' => "-L (--label)",
                'p' => "-p (--show-c-function)",
                'F' => "-F (--show-function-line)",
                'T' => "-T (--initial-tab)",
                'l' => "-l (--paginate)",
                'v' => "-v (--version)",
                'H' => "-H",
                _ => {
                    let name = getopt::refused_name(c, REFUSED_LONG, REFUSED_VALUED);
                    eprintln!("diff: {name} is not supported here");
                    return;
                }
            };
            eprintln!("diff: {name} is not supported here");
        }
    }
}

/// A word as GNU diff repeats it in its `diff ...` lines: as it is when the shell would read it
/// back the same, else in single quotes (double quotes when the word's only special character is
/// a single quote, white space aside).
fn shell_quoted(word: &str) -> String {
    let plain = |c: char| {
        c.is_ascii_alphanumeric() || "%+,-./:@]_{}#~".contains(c) || !c.is_ascii() || {
            c.is_ascii_control() && !matches!(c, '\t' | '\n' | '\r')
        }
    };
    let at_start = word.starts_with(['#', '~']);
    if !word.is_empty() && !at_start && word.chars().all(plain) {
        return word.to_owned();
    }
    let doubled = word.contains('\'')
        && (word.chars()).all(|c| {
            c == '\'' || c == ' ' || c.is_ascii_alphanumeric() || "%+,-./:@]_{}".contains(c)
        });
    if doubled {
        return format!("\"{word}\"");
    }
    format!("'{}'", word.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests;
