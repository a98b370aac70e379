//! Commands no uutils crate builds for WASI: `tac` (uu_tac maps its input with mmap) and `rev`
//! (util-linux). They follow GNU tac and util-linux rev, and refuse what they do not do. And
//! what the toolbox adds around uutils' commands: [`refuse_not_gnu`] before any of them,
//! [`refuse_unreachable`] before `ls`, [`missing_dirs`] and [`remove_made`] around `mkdir`.

use std::ffi::OsString;
use std::io::{Read, Write};

/// Where a command's output goes: stdout, written once.
pub fn emit(out: &[u8]) -> bool {
    std::io::stdout().write_all(out).is_ok()
}

/// The bytes of `path` (`-`: stdin).
pub fn read_input(path: &str) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    if path == "-" {
        std::io::stdin().read_to_end(&mut bytes)?;
    } else {
        std::fs::File::open(path)?.read_to_end(&mut bytes)?;
    }
    Ok(bytes)
}

/// What the OS says of `error`, without Rust's " (os error N)".
pub fn reason(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

fn strings(args: super::Args) -> Result<Vec<String>, String> {
    args.skip(1)
        .map(|a: OsString| {
            a.into_string()
                .map_err(|a| format!("{}: not UTF-8", a.display()))
        })
        .collect()
}

/// `tac [-b] [-s SEP] [FILE]...`: each file's records (ending with SEP, a newline by default)
/// last to first; with `-b` a separator begins its record instead. `-r` (a regular-expression
/// separator) is refused.
pub fn tac(args: super::Args) -> i32 {
    let args = match strings(args) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("tac: {e}");
            return 1;
        }
    };
    let usage = "Try 'tac --help' for more information.";
    let (mut before, mut separator, mut files) = (false, b"\n".to_vec(), Vec::new());
    let mut words = args.into_iter();
    let mut options = true;
    while let Some(word) = words.next() {
        if !options || word == "-" || !word.starts_with('-') {
            files.push(word);
            continue;
        }
        match word.as_str() {
            "--" => options = false,
            "-b" | "--before" => before = true,
            "-s" | "--separator" => match words.next() {
                Some(sep) => separator = sep.into_bytes(),
                None => {
                    eprintln!("tac: option requires an argument -- 's'\n{usage}");
                    return 1;
                }
            },
            "-r" | "--regex" => {
                eprintln!("tac: -r (a regular-expression separator) is not supported here");
                return 1;
            }
            "--help" => {
                println!(
                    "Usage: tac [OPTION]... [FILE]...\nWrite each FILE to standard output, last line first.\n\n  -b, --before             attach the separator before instead of after\n  -s, --separator=STRING   use STRING as the separator instead of newline"
                );
                return 0;
            }
            other if other.starts_with("--separator=") => {
                separator = other["--separator=".len()..].as_bytes().to_vec();
            }
            other if other.starts_with("-s") && other.len() > 2 => {
                separator = other[2..].as_bytes().to_vec();
            }
            other if other.starts_with("--") => {
                eprintln!("tac: unrecognized option '{other}'\n{usage}");
                return 1;
            }
            other => {
                eprintln!("tac: invalid option -- '{}'\n{usage}", &other[1..2]);
                return 1;
            }
        }
    }
    if separator.is_empty() {
        eprintln!("tac: separator cannot be empty");
        return 1;
    }
    each_input(
        files,
        |file, e| eprintln!("tac: failed to open '{file}' for reading: {e}"),
        |bytes| reversed_records(bytes, &separator, before),
    )
}

/// Writes `transform` of each of `files` (`-`: stdin, also when there are none) to stdout, in
/// order; an input that cannot be read is reported by `unreadable` and makes the status 1.
fn each_input(
    mut files: Vec<String>,
    unreadable: impl Fn(&str, String),
    transform: impl Fn(&[u8]) -> Vec<u8>,
) -> i32 {
    if files.is_empty() {
        files.push("-".into());
    }
    let mut status = 0;
    for file in files {
        match read_input(&file) {
            Ok(bytes) => {
                if !emit(&transform(&bytes)) {
                    return 1;
                }
            }
            Err(e) => {
                unreadable(&file, reason(&e));
                status = 1;
            }
        }
    }
    status
}

/// The records of `bytes` last to first. A record ends with `separator` (or, `before`, starts
/// with it); text after the last separator is the last record, without one.
fn reversed_records(bytes: &[u8], separator: &[u8], before: bool) -> Vec<u8> {
    let mut cuts = vec![0];
    let mut at = 0;
    while let Some(found) = find(&bytes[at..], separator) {
        let start = at + found;
        cuts.push(if before {
            start
        } else {
            start + separator.len()
        });
        at = start + separator.len();
    }
    cuts.push(bytes.len());
    cuts.dedup();
    let mut out = Vec::with_capacity(bytes.len());
    for pair in cuts.windows(2).rev() {
        out.extend_from_slice(&bytes[pair[0]..pair[1]]);
    }
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// `rev [FILE]...`: each line's characters right to left (bytes, where a line is not UTF-8).
pub fn rev(args: super::Args) -> i32 {
    let args = match strings(args) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("rev: {e}");
            return 1;
        }
    };
    let mut files = Vec::new();
    for word in args {
        match word.as_str() {
            "-h" | "--help" => {
                println!("Usage: rev [options] [file ...]\n\nReverse lines characterwise.");
                return 0;
            }
            "-" => files.push(word),
            option if option.starts_with('-') => {
                eprintln!(
                    "rev: invalid option -- '{}'\nTry 'rev --help' for more information.",
                    option.trim_start_matches('-')
                );
                return 1;
            }
            _ => files.push(word),
        }
    }
    each_input(
        files,
        |file, e| eprintln!("rev: cannot open {file}: {e}"),
        reversed_lines,
    )
}

/// Each line of `bytes` right to left: its characters when it is UTF-8, else its bytes.
fn reversed_lines(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for line in bytes.split_inclusive(|b| *b == b'\n') {
        let (text, newline) = match line.strip_suffix(b"\n") {
            Some(text) => (text, true),
            None => (line, false),
        };
        match std::str::from_utf8(text) {
            Ok(text) => out.extend(text.chars().rev().collect::<String>().bytes()),
            Err(_) => out.extend(text.iter().rev()),
        }
        if newline {
            out.push(b'\n');
        }
    }
    out
}

/// Short options uutils accepts that GNU's command does not, per command, with the command's
/// short options that take a value (the letters after one of them are its value): BSD's `-D`
/// (decode) of the base64 family. GNU behaviour is the spec: a script that works here must not
/// fail on a GNU system.
const NOT_GNU_SHORT: &[(&str, char, &str)] = &[
    ("base32", 'D', "w"),
    ("base64", 'D', "w"),
    ("basenc", 'D', "w"),
];

/// Refuses an operand that names a FIFO, socket or device, as the sandbox's WASI layer refuses
/// to open one (a read of it could block past the deadline), with the same `ENXIO`; whether it
/// did. Said up front, so that each command says it alike (uutils' `cat` would print its own
/// debugging text for a file type it does not know). A walk (`cp -r`, `grep -r`) meets the
/// WASI layer's refusal itself.
pub fn refuse_special_operand(name: &str, args: &[OsString]) -> bool {
    let special = args.iter().skip(1).find(|arg| {
        !arg.to_string_lossy().starts_with('-')
            && std::fs::metadata(arg).is_ok_and(|m| !m.is_file() && !m.is_dir())
    });
    if let Some(arg) = special {
        eprintln!(
            "{name}: {}: No such device or address",
            arg.to_string_lossy()
        );
    }
    special.is_some()
}

/// Refuses, as GNU's getopt does, a short option of [`NOT_GNU_SHORT`]; whether it did.
pub fn refuse_not_gnu(name: &str, args: &[OsString]) -> bool {
    let Some(&(_, refused, valued)) = NOT_GNU_SHORT.iter().find(|(n, ..)| *n == name) else {
        return false;
    };
    let mut value_next = false;
    for arg in args.iter().skip(1) {
        let text = arg.to_string_lossy();
        if std::mem::take(&mut value_next) {
            continue;
        }
        if text == "--" {
            break;
        }
        let Some(letters) = text
            .strip_prefix('-')
            .filter(|l| !l.is_empty() && !l.starts_with('-'))
        else {
            continue;
        };
        for (at, letter) in letters.char_indices() {
            if letter == refused {
                eprintln!(
                    "{name}: invalid option -- '{letter}'\nTry '{name} --help' for more information."
                );
                return true;
            }
            if valued.contains(letter) {
                value_next = at + letter.len_utf8() == letters.len();
                break;
            }
        }
    }
    false
}

/// Takes out of `ls`'s operands those WASI refuses to reach (a link out of its mount: EPERM,
/// ENOTCAPABLE), saying so as GNU ls says an inaccessible operand. uutils' ls would fall back to
/// the link itself and list `up/` as if it were a file, exiting 0; GNU's follows the link of an
/// operand, which the sandbox refuses. Whether any was taken out.
pub fn refuse_unreachable(name: &str, args: &mut Vec<OsString>) -> bool {
    let mut refused = false;
    let mut operands = true;
    let mut kept = vec![args[0].clone()];
    for arg in args.drain(..).skip(1) {
        let text = arg.to_string_lossy().into_owned();
        if text == "--" {
            operands = false;
        }
        let option = operands && text.starts_with('-') && text != "-";
        if !option && text != "--" {
            if let Err(e) = std::fs::metadata(&arg)
                && matches!(e.kind(), std::io::ErrorKind::PermissionDenied)
                    | (e.raw_os_error() == Some(76))
            {
                eprintln!("{name}: cannot access '{text}': {}", reason(&e));
                refused = true;
                continue;
            }
        }
        kept.push(arg);
    }
    *args = kept;
    refused
}

/// For each of `mkdir`'s operands, the directories it names (itself and, for `-p`, its parents)
/// that do not exist yet, deepest first.
pub fn missing_dirs(args: &[OsString]) -> Vec<Vec<std::path::PathBuf>> {
    let mut all = Vec::new();
    let mut operands = true;
    let mut takes_value = false;
    for arg in args.iter().skip(1) {
        let text = arg.to_string_lossy();
        if takes_value {
            takes_value = false;
            continue;
        }
        if operands && text == "--" {
            operands = false;
            continue;
        }
        if operands && text.starts_with('-') {
            // -m MODE, --mode MODE (GNU mkdir's only option with a value).
            takes_value = text == "-m" || text == "--mode";
            continue;
        }
        let mut missing = Vec::new();
        for dir in std::path::Path::new(arg).ancestors() {
            if dir.as_os_str().is_empty() || std::fs::symlink_metadata(dir).is_ok() {
                break;
            }
            missing.push(dir.to_path_buf());
        }
        all.push(missing);
    }
    all
}

/// After a failed `mkdir`: an operand that was not made has what was made on its way removed
/// (empty directories only), so a `mkdir -p a/b/c/...` that the disk quota stops half way
/// leaves nothing behind; the operands that were made stay, as GNU's do.
pub fn remove_made(missing: &[Vec<std::path::PathBuf>]) {
    for chain in missing {
        let Some(target) = chain.first() else {
            continue;
        };
        if std::fs::symlink_metadata(target).is_err() {
            for dir in chain {
                let _ = std::fs::remove_dir(dir);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(name: &str, line: &[&str]) -> bool {
        let args: Vec<OsString> = std::iter::once(name)
            .chain(line.iter().copied())
            .map(OsString::from)
            .collect();
        refuse_not_gnu(name, &args)
    }

    #[test]
    fn options_gnu_lacks_are_refused_and_values_are_not_options() {
        assert!(refused("base64", &["-D", "a.txt"]));
        assert!(refused("base64", &["-iD"]));
        assert!(refused("base32", &["a.txt", "-D"]));
        assert!(!refused("base64", &["-d", "a.txt"]));
        // The value of -w, attached or apart, and operands after `--` are no options.
        assert!(!refused("base64", &["-w", "-D"]));
        assert!(!refused("base64", &["-wD"]));
        assert!(!refused("base64", &["--", "-D"]));
        assert!(!refused("base64", &["--decode", "-"]));
        assert!(!refused("cat", &["-D"]));
    }
}
