//! Reading a whole input operand for the built-ins that take a program or a list from a file
//! (`source FILE`, `./script`, `python FILE`, `pip install -r FILE`): stdin (`-`), or a guest
//! file read through the shell's guest filesystem, bounded; and splitting it into lines.

use std::io::Read;

use crate::shell::exec::{Ctx, MAX_READ};
use crate::shell::guest_fs::{Access, FsError};

/// Reads a whole input operand (at most [`MAX_READ`] bytes); prints `NAME: ARG: error` and
/// returns `None` when it cannot.
pub(crate) fn read_input(ctx: &mut Ctx<'_, '_>, arg: &str) -> Option<Vec<u8>> {
    match arg {
        "-" | "/dev/stdin" => return Some(ctx.stdin.all().to_vec()),
        "/dev/null" => return Some(Vec::new()),
        _ => {}
    }
    let opened = (ctx.resolve(arg, Access::Read, true)).and_then(|r| ctx.fs().open_read(&r));
    let file = match opened {
        Ok(file) => file,
        Err(e) => {
            ctx.fail(arg, &e);
            return None;
        }
    };
    let mut data = Vec::new();
    match file.take(MAX_READ + 1).read_to_end(&mut data) {
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

/// The lines of `data`, without their newlines; a last line without one counts.
pub(crate) fn lines(data: &[u8]) -> Vec<&[u8]> {
    let mut v: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if data.is_empty() || data.ends_with(b"\n") {
        v.pop();
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_splitting() {
        assert_eq!(lines(b"a\nb\n"), vec![&b"a"[..], b"b"]);
        assert_eq!(lines(b"a\nb"), vec![&b"a"[..], b"b"]);
        assert_eq!(lines(b""), Vec::<&[u8]>::new());
        assert_eq!(lines(b"\n"), vec![&b""[..]]);
    }
}
