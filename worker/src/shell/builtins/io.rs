//! What the built-ins share around their inputs and operands: opening an input (stdin or a
//! confined file) and reading it a line or a chunk at a time under the deadline, reading one
//! whole (bounded), splitting text into lines, running an operation per operand with
//! coreutils-style error reports, writing a whole file, and human-readable sizes.

use std::fmt::Display;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write as _};

use crate::shell::exec::{Abort, Ctx, Input, MAX_READ};
use crate::shell::path::{Access, FsError};

/// Where a filter reads: stdin (`-`), or a confined file.
pub(crate) type Source = Box<dyn BufRead>;

/// A confined file that is already open, as a [`Source`].
pub(crate) fn file_source(f: File) -> Source {
    Box::new(BufReader::with_capacity(64 << 10, f))
}

/// Opens an input operand; prints `NAME: ARG: error` and returns `None` when it cannot.
pub(crate) fn open_input(ctx: &mut Ctx<'_, '_>, arg: &str) -> Option<Source> {
    match arg {
        "-" | "/dev/stdin" => return Some(Box::new(ctx.stdin.reader())),
        "/dev/null" => return Some(Box::new(Input::default().reader())),
        _ => {}
    }
    let opened = ctx
        .resolve(arg, Access::Read, true)
        .and_then(|r| ctx.fs().open_read(&r));
    match opened {
        Ok(f) => Some(file_source(f)),
        Err(e) => {
            ctx.fail(arg, &e);
            None
        }
    }
}

/// Reads a whole input operand (at most [`MAX_READ`] bytes); prints the error and returns `None`
/// when it cannot.
pub(crate) fn read_input(ctx: &mut Ctx<'_, '_>, arg: &str) -> Option<Vec<u8>> {
    if arg == "-" || arg == "/dev/stdin" {
        return Some(ctx.stdin.all().to_vec());
    }
    let src = open_input(ctx, arg)?;
    let mut data = Vec::new();
    match src.take(MAX_READ + 1).read_to_end(&mut data) {
        Ok(_) if data.len() as u64 > MAX_READ => {
            let mib = MAX_READ >> 20;
            ctx.warn(format_args!(
                "{arg}: file too large for the shell (over {mib} MiB); use python"
            ));
            None
        }
        Ok(_) => Some(data),
        Err(e) => {
            ctx.fail(arg, &FsError::Io(e));
            None
        }
    }
}

/// How [`each_unit`] hands an input over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// One line at a time, with its `\n` (the last line may lack it).
    Line,
    /// Whatever the buffer holds: for filters that do not care about lines.
    Chunk,
}

/// How reading one input ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// Read to the end.
    Done,
    /// It could not be opened or read (reported).
    Failed,
    /// The callback said stop (its output is closed, or it has seen enough).
    Stopped,
}

/// Hands `src` to `each` a line or a chunk at a time, checking the deadline; a read error is
/// reported under `name`. `each` returns `false` to stop.
pub(crate) fn each_unit(
    ctx: &mut Ctx<'_, '_>,
    src: &mut Source,
    name: &str,
    unit: Unit,
    mut each: impl FnMut(&mut Ctx<'_, '_>, &[u8]) -> bool,
) -> Result<Ended, Abort> {
    let mut line = Vec::new();
    loop {
        ctx.check()?;
        let read = match unit {
            Unit::Line => {
                line.clear();
                src.read_until(b'\n', &mut line)
                    .map(|n| (n > 0).then_some(&line[..]))
            }
            Unit::Chunk => src.fill_buf().map(|c| (!c.is_empty()).then_some(c)),
        };
        let more = match read {
            Ok(Some(data)) => {
                let n = data.len();
                let go_on = each(ctx, data);
                if unit == Unit::Chunk {
                    src.consume(n);
                }
                go_on
            }
            Ok(None) => return Ok(Ended::Done),
            Err(e) => {
                ctx.fail(name, &FsError::Io(e));
                return Ok(Ended::Failed);
            }
        };
        if !more {
            return Ok(Ended::Stopped);
        }
    }
}

/// Opens an input operand and hands it to `each` as [`each_unit`] does.
pub(crate) fn read_each(
    ctx: &mut Ctx<'_, '_>,
    arg: &str,
    unit: Unit,
    each: impl FnMut(&mut Ctx<'_, '_>, &[u8]) -> bool,
) -> Result<Ended, Abort> {
    match open_input(ctx, arg) {
        Some(mut src) => each_unit(ctx, &mut src, arg, unit, each),
        None => Ok(Ended::Failed),
    }
}

/// Runs [`read_each`] over several inputs in turn: the status is 1 when one could not be read,
/// and a stop ends them all.
pub(crate) fn each_input(
    ctx: &mut Ctx<'_, '_>,
    inputs: &[String],
    unit: Unit,
    mut each: impl FnMut(&mut Ctx<'_, '_>, &[u8]) -> bool,
) -> Result<i32, Abort> {
    let mut status = 0;
    for f in inputs {
        match read_each(ctx, f, unit, &mut each)? {
            Ended::Done => {}
            Ended::Failed => status = 1,
            Ended::Stopped => break,
        }
    }
    Ok(status)
}

/// Splits text into lines without their `\n` (a last line without one counts too).
pub(crate) fn lines(data: &[u8]) -> Vec<&[u8]> {
    let mut v: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if data.is_empty() || data.ends_with(b"\n") {
        v.pop();
    }
    v
}

/// Offsets just after each line (the last line may lack its `\n`).
pub(crate) fn line_ends(data: &[u8]) -> Vec<usize> {
    let mut ends: Vec<usize> = (0..data.len())
        .filter(|&i| data[i] == b'\n')
        .map(|i| i + 1)
        .collect();
    if !data.is_empty() && !data.ends_with(b"\n") {
        ends.push(data.len());
    }
    ends
}

/// Why an operation on one operand failed.
#[derive(Debug)]
pub(crate) enum Fail {
    /// Report it as `NAME: WHAT: error`.
    Fs(FsError),
    /// Already reported in words of its own.
    Said,
    /// Stop the whole command (deadline, cancel, `exit`).
    Abort(Abort),
}

impl From<FsError> for Fail {
    fn from(e: FsError) -> Self {
        Fail::Fs(e)
    }
}

impl From<Abort> for Fail {
    fn from(a: Abort) -> Self {
        Fail::Abort(a)
    }
}

/// Runs `op` on each operand under the deadline. A failure is reported as
/// `NAME: WHAT: error`, with `{}` in `what` standing for the operand, and makes the status 1.
pub(crate) fn each_operand(
    ctx: &mut Ctx<'_, '_>,
    operands: &[String],
    what: &str,
    mut op: impl FnMut(&mut Ctx<'_, '_>, &str) -> Result<(), Fail>,
) -> Result<i32, Abort> {
    let mut status = 0;
    for arg in operands {
        ctx.check()?;
        match op(ctx, arg) {
            Ok(()) => {}
            Err(Fail::Fs(e)) => {
                ctx.fail(what.replace("{}", arg), &e);
                status = 1;
            }
            Err(Fail::Said) => status = 1,
            Err(Fail::Abort(a)) => return Err(a),
        }
    }
    Ok(status)
}

/// Reports a failed operation as `NAME: WHAT: error`, in the caller's words, and fails the
/// operand with it; other failures pass through.
pub(crate) fn reported<T, E: Into<Fail>>(
    ctx: &mut Ctx<'_, '_>,
    what: impl Display,
    r: Result<T, E>,
) -> Result<T, Fail> {
    match r.map_err(Into::into) {
        Err(Fail::Fs(e)) => {
            ctx.fail(what, &e);
            Err(Fail::Said)
        }
        other => other,
    }
}

/// Prints `NAME: msg` and fails the operand with it.
pub(crate) fn say(ctx: &mut Ctx<'_, '_>, msg: impl Display) -> Fail {
    ctx.warn(msg);
    Fail::Said
}

/// Writes `data` as the whole new content of `path` (`sort -o`, `sed -i`), counted against the
/// call's write budget and the disk quota like any other write.
pub(crate) fn write_file(ctx: &mut Ctx<'_, '_>, path: &str, data: &[u8]) -> Result<(), FsError> {
    let target = ctx.resolve(path, Access::Write, true)?;
    let mut file = ctx.fs().open_write(&target, false)?;
    ctx.sh.io.written += data.len() as u64;
    file.write_all(data).map_err(FsError::Io)
}

/// Sizes as `ls -h` and `du -h` print them: `512`, `4.0K`, `1.5M`, `12G` (rounded up).
pub(crate) fn human(n: u64) -> String {
    const UNITS: [&str; 6] = ["K", "M", "G", "T", "P", "E"];
    if n < 1024 {
        return n.to_string();
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if value < 10.0 {
        let tenths = (value * 10.0).ceil() / 10.0;
        return if tenths < 10.0 {
            format!("{tenths:.1}{}", UNITS[unit])
        } else {
            format!("10{}", UNITS[unit])
        };
    }
    let whole = value.ceil();
    if whole >= 1024.0 && unit < UNITS.len() - 1 {
        return format!("1.0{}", UNITS[unit + 1]);
    }
    format!("{whole:.0}{}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes_round_up_like_coreutils() {
        assert_eq!(human(0), "0");
        assert_eq!(human(1023), "1023");
        assert_eq!(human(1024), "1.0K");
        assert_eq!(human(1025), "1.1K");
        assert_eq!(human(4096), "4.0K");
        assert_eq!(human(10 * 1024 - 1), "10K");
        assert_eq!(human(123_456), "121K");
        assert_eq!(human(1536 * 1024), "1.5M");
        assert_eq!(human(1024 * 1024 * 1024 - 1), "1.0G");
    }

    #[test]
    fn line_splitting() {
        assert_eq!(lines(b"a\nb\n"), vec![&b"a"[..], b"b"]);
        assert_eq!(lines(b"a\nb"), vec![&b"a"[..], b"b"]);
        assert_eq!(lines(b""), Vec::<&[u8]>::new());
        assert_eq!(lines(b"\n"), vec![&b""[..]]);
        assert_eq!(line_ends(b"a\nbc"), vec![2, 4]);
    }
}
