//! `diff FROM TO` over uutils diffutils' library: its option parser and output formats
//! (normal, unified, context, brief), made to print what GNU diff prints. GNU's statuses: 0 when the inputs are
//! the same, 1 when they differ, 2 on trouble (an unknown option, an unreadable input).

use std::ffi::OsString;
use std::io::{Read, Write};

use diffutilslib::params::{Format, Params, parse_params};

/// Runs `diff` with `args` (`args[0]` is the command's name).
pub fn main(args: super::Args) -> i32 {
    let params = match parse_params(args.peekable()) {
        Ok(params) => params,
        Err(error) => {
            // GNU's form: the tool's name first, then where to look. Options GNU has and this
            // diff does not are named as such, not as unknown.
            let error = error.to_string();
            let unsupported = ["-r", "-i", "-w", "-b", "-B", "-N", "-x", "--recursive"]
                .iter()
                .find(|option| error.contains(&format!("'{option}'")));
            match unsupported {
                Some(option) => eprintln!(
                    "diff: {option} is not supported here: compare one pair of files at a time \
                     (diff -u FROM TO), or use Python's filecmp and difflib"
                ),
                None => eprintln!("diff: {error}\ndiff: Try 'diff --help' for more information."),
            }
            return 2;
        }
    };
    let (Some(from), Some(to)) = (read(&params, &params.from), read(&params, &params.to)) else {
        return 2;
    };
    let out = match params.format {
        Format::Normal => gnu_ranges(&diffutilslib::normal_diff(&from, &to, &params)),
        Format::Unified => diffutilslib::unified_diff(&from, &to, &params),
        Format::Context => diffutilslib::context_diff(&from, &to, &params),
        // Their output is not GNU's (an ed script's hunks come first to last, so applying it
        // shifts the lines of the later ones; changed lines side by side are not paired with
        // `|`): refused, never printed wrong.
        Format::Ed | Format::SideBySide => {
            eprintln!(
                "{}: {} output is not supported here; use diff -u (or -c, or the default format)",
                params.executable.to_string_lossy(),
                if params.format == Format::Ed {
                    "ed script (-e)"
                } else {
                    "side-by-side (-y)"
                },
            );
            return 2;
        }
    };
    let differs = !out.is_empty();
    if params.brief && differs {
        println!(
            "Files {} and {} differ",
            shown(&params.from),
            shown(&params.to)
        );
    } else {
        write_out(&out);
    }
    if !differs && params.report_identical_files {
        println!(
            "Files {} and {} are identical",
            shown(&params.from),
            shown(&params.to)
        );
    }
    i32::from(differs)
}

/// The bytes of input `path` (`-`: stdin), or `None` after saying why not, as GNU does.
fn read(params: &Params, path: &OsString) -> Option<Vec<u8>> {
    let read = if path == "-" {
        let mut bytes = Vec::new();
        std::io::stdin().read_to_end(&mut bytes).map(|_| bytes)
    } else {
        std::fs::read(path)
    };
    read.map_err(|error| {
        diffutilslib::utils::report_failure_to_read_input_file(&params.executable, path, &error);
    })
    .ok()
}

fn shown(path: &OsString) -> std::borrow::Cow<'_, str> {
    path.to_string_lossy()
}

fn write_out(bytes: &[u8]) {
    let _ = std::io::stdout().write_all(bytes);
}

/// Normal-format output with GNU's line ranges: a range of one line is that line's number
/// (`4d3`, `3a4`), where the library writes `4,4d3` and `3a4,4`. Only hunk headers change:
/// every other line starts with `<`, `>` or is `---`.
fn gnu_ranges(out: &[u8]) -> Vec<u8> {
    let mut fixed = Vec::with_capacity(out.len());
    for line in out.split_inclusive(|b| *b == b'\n') {
        let header = !matches!(line.first(), Some(b'<' | b'>' | b'-' | b'\\'));
        match std::str::from_utf8(line).ok().filter(|_| header) {
            Some(text) => fixed.extend_from_slice(collapse_header(text).as_bytes()),
            None => fixed.extend_from_slice(line),
        }
    }
    fixed
}

/// `4,4d3` -> `4d3`, `3a4,4` -> `3a4`; any other line as it is.
fn collapse_header(line: &str) -> String {
    let body = line.trim_end_matches('\n');
    let Some(at) = body.find(['a', 'c', 'd']) else {
        return line.to_owned();
    };
    let collapse = |range: &str| match range.split_once(',') {
        Some((first, last)) if first == last => first.to_owned(),
        _ => range.to_owned(),
    };
    let (left, right) = (&body[..at], &body[at + 1..]);
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit() || c == ',') && !s.is_empty();
    if !digits(left) || !digits(right) {
        return line.to_owned();
    }
    let newline = if line.ends_with('\n') { "\n" } else { "" };
    format!(
        "{}{}{}{newline}",
        collapse(left),
        &body[at..=at],
        collapse(right)
    )
}
