//! `less` (less 590) and `more` (util-linux 2.38) as they behave when their output is not a
//! terminal, which in the sandbox it never is: both copy their input to stdout unchanged, and
//! their paging options change nothing.
//!
//! `less`: options end at the first word that is not one (no permutation) or at `--`; they are
//! read (and `$LESS`'s first) only to know which words are values and to say what is wrong as
//! less says it (`There is no -Z option ...`, on stderr, and it goes on); `-V`/`--version`
//! prints less's version. The files are copied one after the other, each once (less keeps one
//! entry per file), `-` or none is stdin; one that cannot be read is reported and skipped, on
//! stdout as less reports it without a terminal; a directory is `NAME is a directory` there
//! too; a file that looks binary (more than 5 binary characters in its first 256 bytes) stops
//! less at its question `"NAME" may be a binary file.  See it anyway? `, which nobody can answer
//! here (exit status 1), unless `-f`. `--help`/`-?` (less's help screen) is refused by name.
//!
//! `more`: stdin is not a terminal here, so util-linux's more first copies it, then prints each
//! file under a `::::::::::::::` / name / `::::::::::::::` header; a directory is
//! `*** NAME: directory ***`, an a.out or ELF executable `******** NAME: Not a text file
//! ********`, a file that cannot be opened `more: cannot open NAME: REASON` on stderr. Exit
//! status 0 but for option errors (1). Its options (`$MORE`'s first) are checked as its
//! getopt checks them and change nothing else.

use std::fs;
use std::io::{self, Read, Write};

use crate::own::reason;

/// less's options: the letter (`'\0'` for a long-only one), its long name, and whether it
/// takes a value: `Some(true)` a number, `Some(false)` a string, `None` none.
const LESS_OPTIONS: &[(char, &str, Option<bool>)] = &[
    ('a', "search-skip-screen", None),
    ('b', "buffers", Some(true)),
    ('B', "auto-buffers", None),
    ('c', "clear-screen", None),
    ('d', "dumb", None),
    ('D', "color", Some(false)),
    ('e', "quit-at-eof", None),
    ('f', "force", None),
    ('F', "quit-if-one-screen", None),
    ('g', "hilite-search", None),
    ('h', "max-back-scroll", Some(true)),
    ('i', "ignore-case", None),
    ('j', "jump-target", Some(false)),
    ('J', "status-column", None),
    ('k', "lesskey-file", Some(false)),
    ('\0', "lesskey-src", Some(false)),
    ('K', "quit-on-intr", None),
    ('L', "no-lessopen", None),
    ('m', "long-prompt", None),
    ('n', "line-numbers", None),
    ('o', "log-file", Some(false)),
    ('O', "LOG-FILE", Some(false)),
    ('p', "pattern", Some(false)),
    ('P', "prompt", Some(false)),
    ('q', "quiet", None),
    ('q', "silent", None),
    ('r', "raw-control-chars", None),
    ('s', "squeeze-blank-lines", None),
    ('S', "chop-long-lines", None),
    ('t', "tag", Some(false)),
    ('T', "tag-file", Some(false)),
    ('u', "underline-special", None),
    ('V', "version", None),
    ('w', "hilite-unread", None),
    ('x', "tabs", Some(false)),
    ('X', "no-init", None),
    ('y', "max-forw-scroll", Some(true)),
    ('z', "window", Some(true)),
    ('"', "quotes", Some(false)),
    ('~', "tilde", None),
    ('?', "help", None),
    ('#', "shift", Some(false)),
    ('\0', "no-keypad", None),
    ('\0', "old-bot", None),
    ('\0', "follow-name", None),
    ('\0', "use-backslash", None),
    ('\0', "rscroll", Some(false)),
    ('\0', "no-histdups", None),
    ('\0', "mouse", None),
    ('\0', "wheel-lines", Some(true)),
    ('\0', "save-marks", None),
    ('\0', "line-num-width", Some(true)),
    ('\0', "status-col-width", Some(true)),
    ('\0', "incsearch", None),
    ('\0', "use-color", None),
    ('\0', "file-size", None),
    ('\0', "tty", Some(false)),
    ('\0', "rstat", Some(false)),
];

/// Letters whose upper case is the same option's other setting (less's TRIPLE options).
const LESS_TRIPLE: &str = "acegimnqruw";

const LESS_VERSION: &str = "less 590 (GNU regular expressions)
Copyright (C) 1984-2021  Mark Nudelman

less comes with NO WARRANTY, to the extent permitted by law.
For information about the terms of redistribution,
see the file named README in the less distribution.
Home page: https://greenwoodsoftware.com/less
";

/// What reading less's options came to.
enum Scan {
    Go,
    /// Exit now with this status (`-V`, a refused option).
    Exit(i32),
}

#[derive(Default)]
struct LessState {
    force: bool,
    /// An option still waiting for its value (the next word): its letter and long name.
    pending: Option<(char, &'static str, bool)>,
}

fn less_name(letter: char, long: &str) -> String {
    if letter == '\0' {
        format!("--{long}")
    } else {
        format!("-{letter} (--{long})")
    }
}

impl LessState {
    /// The value `value` for the option `letter`/`long` (a number when `number`).
    fn value(&mut self, letter: char, long: &str, number: bool, value: &str) {
        if number
            && !value
                .trim_start()
                .starts_with(|c: char| c.is_ascii_digit() || c == '-')
        {
            eprintln!("Number is required after {}", less_name(letter, long));
            return;
        }
        match letter {
            'j' if !value
                .trim_start_matches('-')
                .starts_with(|c: char| c.is_ascii_digit() || c == '.') =>
            {
                eprintln!("Invalid line number");
            }
            'j' if value.starts_with('.') && value.len() == 1 => {
                eprintln!("Invalid line fraction");
            }
            '#' if value.is_empty() => eprintln!("Invalid column number"),
            _ => {}
        }
        if letter == 'k' || long == "lesskey-src" {
            if fs::metadata(value).is_err() {
                let what = if letter == 'k' {
                    "lesskey file"
                } else {
                    "lesskey source file"
                };
                eprintln!("Cannot use {what} \"{value}\"");
            }
        }
    }

    /// One option word (less's `scan_option`).
    fn scan(&mut self, word: &str) -> Scan {
        if let Some((letter, long, number)) = self.pending.take() {
            self.value(letter, long, number, word);
            return Scan::Go;
        }
        if word.starts_with('+') {
            // An initial command: nothing to do when the output is not a terminal.
            return Scan::Go;
        }
        let Some(body) = word.strip_prefix('-') else {
            return Scan::Go;
        };
        if let Some(long) = body.strip_prefix('-') {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let lower = name.to_ascii_lowercase();
            let exact: Vec<_> = LESS_OPTIONS
                .iter()
                .filter(|o| o.1.eq_ignore_ascii_case(&lower))
                .collect();
            let found: Vec<_> = if exact.is_empty() {
                LESS_OPTIONS
                    .iter()
                    .filter(|o| o.1.to_ascii_lowercase().starts_with(&lower))
                    .collect()
            } else {
                exact
            };
            let option = match found.as_slice() {
                [] => {
                    eprintln!("There is no {name} option (\"less --help\" for help)");
                    return Scan::Go;
                }
                [one] => **one,
                [first, ..] if found.iter().all(|o| o.0 == first.0 && o.0 != '\0') => **first,
                _ => {
                    eprintln!("{name} is an ambiguous abbreviation (\"less --help\" for help)");
                    return Scan::Go;
                }
            };
            return self.option(option, inline);
        }
        let chars: Vec<char> = body.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            i += 1;
            // `-+X` resets X, `$` ends a value: nothing to do for either here.
            if c == '+' || c == '-' || c == '$' {
                continue;
            }
            let upper_of_triple = c.is_ascii_uppercase()
                && LESS_TRIPLE.contains(c.to_ascii_lowercase())
                && !LESS_OPTIONS.iter().any(|o| o.0 == c);
            let option = if upper_of_triple {
                let lower = c.to_ascii_lowercase();
                LESS_OPTIONS.iter().find(|o| o.0 == lower).copied()
            } else {
                LESS_OPTIONS.iter().find(|o| o.0 == c && c != '\0').copied()
            };
            let Some(option) = option else {
                eprintln!("There is no -{c} option (\"less --help\" for help)");
                return Scan::Go;
            };
            match option.2 {
                None => {
                    if let Scan::Exit(code) = self.option(option, None) {
                        return Scan::Exit(code);
                    }
                }
                // The value is the next word.
                Some(_) if i == chars.len() => return self.option(option, None),
                // A number in the word: its digits, then the word's letters go on (from
                // the one that is no digit, when there are none).
                Some(true) => {
                    let mut at = i;
                    if chars[at] == '-' {
                        at += 1;
                    }
                    let digits = chars[at..]
                        .iter()
                        .take_while(|d| d.is_ascii_digit())
                        .count();
                    if digits == 0 {
                        eprintln!("Number is required after -{c}");
                    } else {
                        i = at + digits;
                    }
                }
                // A string: to the word's end, a `$`, or (tab stops, shift, jump target) the
                // first character that cannot be in it.
                Some(false) => {
                    let valid = match c {
                        'j' => Some("0123456789.-"),
                        'x' => Some("0123456789,"),
                        '#' => Some("0123456789."),
                        _ => None,
                    };
                    let mut value = String::new();
                    while i < chars.len()
                        && chars[i] != '$'
                        && valid.is_none_or(|v| v.contains(chars[i]))
                    {
                        value.push(chars[i]);
                        i += 1;
                    }
                    self.option(option, Some(&value));
                }
            }
        }
        Scan::Go
    }

    fn option(
        &mut self,
        (letter, long, takes): (char, &'static str, Option<bool>),
        value: Option<&str>,
    ) -> Scan {
        match long {
            "version" => {
                print!("{LESS_VERSION}");
                return Scan::Exit(0);
            }
            "help" => {
                eprintln!("less: --help (-?, less's help screen) is not supported here");
                return Scan::Exit(1);
            }
            "force" => self.force = true,
            _ => {}
        }
        if let Some(number) = takes {
            match value {
                Some(v) => self.value(letter, long, number, v),
                None => self.pending = Some((letter, long, number)),
            }
        }
        Scan::Go
    }
}

/// Whether less would call these first bytes of a file binary: more than 5 control characters
/// other than backspace, tab, newline, carriage return, form feed (and, but in a UTF-8
/// locale, bytes past ASCII; in one, ill-formed UTF-8) in its first 256 bytes.
fn looks_binary(head: &[u8], utf8: bool) -> bool {
    let mut count = 0;
    if utf8 {
        let mut rest = head;
        while !rest.is_empty() {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    count += text.chars().filter(|&c| binary_char(c)).count();
                    break;
                }
                Err(e) => {
                    let good = e.valid_up_to();
                    let text = std::str::from_utf8(&rest[..good]).unwrap_or_default();
                    count += text.chars().filter(|&c| binary_char(c)).count();
                    match e.error_len() {
                        Some(bad) => {
                            count += 1;
                            rest = &rest[good + bad..];
                        }
                        // Cut off by the 256 bytes: not counted.
                        None => break,
                    }
                }
            }
        }
    } else {
        count = head
            .iter()
            .filter(|&&b| b >= 0x80 || binary_char(char::from(b)))
            .count();
    }
    count > 5
}

fn binary_char(c: char) -> bool {
    (c.is_control() && !matches!(c, '\u{8}' | '\t' | '\n' | '\r' | '\u{c}')) && (c as u32) < 0x80
        || ('\u{80}'..='\u{9f}').contains(&c)
}

fn copy_stdin(out: &mut impl Write) -> io::Result<()> {
    io::copy(&mut io::stdin().lock(), out).map(|_| ())
}

pub fn less(args: super::Args) -> i32 {
    let args: Vec<String> = args
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut state = LessState::default();
    if let Ok(env) = std::env::var("LESS") {
        for word in env.split_whitespace() {
            let word = if word.starts_with(['-', '+']) || state.pending.is_some() {
                word.to_owned()
            } else {
                format!("-{word}")
            };
            if let Scan::Exit(code) = state.scan(&word) {
                return code;
            }
        }
    }
    let mut at = 0;
    while at < args.len() {
        let word = &args[at];
        let option = (word.starts_with(['-', '+']) && word.len() > 1) || state.pending.is_some();
        if !option {
            break;
        }
        at += 1;
        if word == "--" && state.pending.is_none() {
            break;
        }
        if let Scan::Exit(code) = state.scan(word) {
            return code;
        }
    }
    if let Some((letter, long, _)) = state.pending {
        eprintln!("Value is required after {}", less_name(letter, long));
        return 0;
    }
    let mut files: Vec<&String> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for file in &args[at..] {
        let key = if file == "-" {
            "-".to_owned()
        } else {
            crate::tree::resolve(file)
        };
        if !seen.contains(&key) {
            seen.push(key);
            files.push(file);
        }
    }
    let stdout = io::stdout();
    let mut out = stdout.lock();
    if files.is_empty() {
        return i32::from(copy_stdin(&mut out).is_err());
    }
    let utf8 = crate::tree::utf8_locale();
    for file in files {
        if file == "-" {
            if copy_stdin(&mut out).is_err() {
                return 1;
            }
            continue;
        }
        match fs::metadata(file) {
            // With no terminal, less says these on stdout, where the files go.
            Ok(meta) if meta.is_dir() => {
                let _ = writeln!(out, "{file} is a directory");
                continue;
            }
            Ok(meta) if !meta.is_file() && !state.force => {
                let _ = writeln!(out, "{file} is not a regular file (use -f to see it)");
                continue;
            }
            _ => {}
        }
        let bytes = match fs::read(file) {
            Ok(bytes) => bytes,
            Err(e) => {
                let _ = writeln!(out, "{file}: {}", reason(&e));
                continue;
            }
        };
        if !state.force && looks_binary(&bytes[..bytes.len().min(256)], utf8) {
            // less asks on its terminal, and there is none to answer.
            let _ = write!(out, "\"{file}\" may be a binary file.  See it anyway? ");
            let _ = out.flush();
            return 1;
        }
        if out.write_all(&bytes).is_err() {
            return 1;
        }
    }
    0
}

const MORE_USAGE: &str = "
Usage:
 more [options] <file>...

A file perusal filter for CRT viewing.

Options:
 -d, --silent          display help instead of ringing bell
 -f, --logical         count logical rather than screen lines
 -l, --no-pause        suppress pause after form feed
 -c, --print-over      do not scroll, display text and clean line ends
 -p, --clean-print     do not scroll, clean screen and display text
 -e, --exit-on-eof     exit on end-of-file
 -s, --squeeze         squeeze multiple blank lines into one
 -u, --plain           suppress underlining and bold
 -n, --lines <number>  the number of lines per screenful
 -<number>             same as --lines
 +<number>             display file beginning from line number
 +/<pattern>           display file beginning from pattern match

 -h, --help            display this help
 -V, --version         display version

For more details see more(1).
";

const MORE_LONG: &[crate::getopt::Long] = &[
    ("silent", 'd', false),
    ("logical", 'f', false),
    ("no-pause", 'l', false),
    ("print-over", 'c', false),
    ("clean-print", 'p', false),
    ("exit-on-eof", 'e', false),
    ("squeeze", 's', false),
    ("plain", 'u', false),
    ("lines", 'n', true),
    ("version", 'V', false),
    ("help", 'h', false),
];

enum MoreScan {
    Files(Vec<String>),
    Exit(i32),
}

/// util-linux more's `argscan`: `-NUMBER`, `+NUMBER` and `+/PATTERN` taken out first, then
/// getopt's options. `program` is how errors are prefixed (`$MORE`'s are the variable's).
fn more_scan(program: &str, words: Vec<String>) -> MoreScan {
    let mut rest = Vec::new();
    for word in words {
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if let Some(n) = word.strip_prefix('-').filter(|n| digits(n)) {
            if n.parse::<i16>().is_err() {
                eprintln!("more: failed to parse number: '{word}'");
                return MoreScan::Exit(1);
            }
            continue;
        }
        if let Some(n) = word.strip_prefix('+') {
            if digits(n) {
                if n.parse::<i32>().is_err() {
                    eprintln!("more: failed to parse number: '{word}'");
                    return MoreScan::Exit(1);
                }
                continue;
            }
            if n.starts_with('/') {
                continue;
            }
        }
        rest.push(word);
    }
    let parsed = match crate::getopt::parse(&rest, "dflcpsun:eVh", MORE_LONG) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{program}: {e}\nTry 'more --help' for more information.");
            return MoreScan::Exit(1);
        }
    };
    for (c, value) in &parsed.opts {
        match c {
            'V' => {
                println!("more from util-linux 2.38.1");
                return MoreScan::Exit(0);
            }
            'h' => {
                print!("{MORE_USAGE}");
                return MoreScan::Exit(0);
            }
            'n' => {
                let v = value.as_deref().unwrap_or_default();
                if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
                    if v.parse::<u16>().is_err() {
                        eprintln!("more: argument error: '{v}': Numerical result out of range");
                        return MoreScan::Exit(1);
                    }
                } else {
                    eprintln!("more: argument error: '{v}'");
                    return MoreScan::Exit(1);
                }
            }
            _ => {}
        }
    }
    MoreScan::Files(parsed.operands)
}

pub fn more(args: super::Args) -> i32 {
    let words: Vec<String> = args
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if let Ok(env) = std::env::var("MORE") {
        let env_words = env.split_whitespace().map(str::to_owned).collect();
        if let MoreScan::Exit(code) = more_scan("MORE environment variable", env_words) {
            return code;
        }
    }
    let files = match more_scan("more", words) {
        MoreScan::Files(files) => files,
        MoreScan::Exit(code) => return code,
    };
    let stdout = io::stdout();
    let mut out = stdout.lock();
    // stdin is never a terminal here: more copies it first, as util-linux's does.
    if copy_stdin(&mut out).is_err() {
        return 1;
    }
    for file in &files {
        let _ = out.flush();
        let mut handle = match fs::File::open(file) {
            Ok(h) => h,
            Err(e) => {
                eprintln!("more: cannot open {file}: {}", reason(&e));
                continue;
            }
        };
        let meta = handle.metadata();
        if meta.as_ref().is_ok_and(fs::Metadata::is_dir) {
            let _ = write!(out, "\n*** {file}: directory ***\n\n");
            continue;
        }
        let mut bytes = Vec::new();
        if let Err(e) = handle.read_to_end(&mut bytes) {
            let _ = out.flush();
            eprintln!("more: {file}: {}", reason(&e));
            continue;
        }
        if meta.is_ok_and(|m| m.len() > 0) && bytes.len() >= 2 {
            let word = i32::from(bytes[0] as i8) + (i32::from(bytes[1] as i8) << 8);
            if matches!(word, 0o407 | 0o410 | 0o413 | 0o405 | 0o411 | 0x457f) {
                let _ = write!(out, "\n******** {file}: Not a text file ********\n\n");
                continue;
            }
        }
        let header = format!("::::::::::::::\n{file}\n::::::::::::::\n");
        if out.write_all(header.as_bytes()).is_err() || out.write_all(&bytes).is_err() {
            return 1;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_as_less_sees_it() {
        assert!(!looks_binary(b"one\ntwo\tthree\r\n\x0c", false));
        assert!(looks_binary(b"\x7fELF\x02\x01\x01\x00\x00\x00\x00", false));
        assert!(!looks_binary("caf\u{e9} na\u{ef}ve".as_bytes(), true));
        assert!(looks_binary(b"\xff\xfe\xfd\xfc\xfb\xfa", true));
    }
}
