//! Reading a whole input operand for the built-ins that take a program or a list from a file
//! (`source FILE`, `./script`, `python FILE`, `pip install -r FILE`): stdin (`-`), or a guest
//! file read inside the sandbox ([`crate::shell::files`]), bounded; and splitting it into lines.

use crate::shell::exec::{Ctx, MAX_READ};

/// Reads a whole input operand (at most [`MAX_READ`] bytes); prints `NAME: ARG: error` and
/// returns `None` when it cannot.
pub(crate) fn read_input(ctx: &mut Ctx<'_, '_>, arg: &str) -> Option<Vec<u8>> {
    match arg {
        "-" | "/dev/stdin" => return Some(ctx.stdin.all().to_vec()),
        "/dev/null" => return Some(Vec::new()),
        _ => {}
    }
    match ctx.sh.read_file(arg, MAX_READ) {
        Ok((_, true)) => {
            let mib = MAX_READ >> 20;
            ctx.warn(format_args!(
                "{arg}: file too large for the shell (over {mib} MiB); use python"
            ));
            None
        }
        Ok((data, false)) => Some(data),
        Err(e) => {
            ctx.fail(arg, &e);
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
