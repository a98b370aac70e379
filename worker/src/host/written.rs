//! The files beneath `/app` one execution opened for writing or renamed into place
//! ([`WrittenFiles`]), noted by the `path_open` and `path_rename` shadows and sent with the
//! execution's report: the supervisor attaches the images among them without walking `/app`.
//!
//! Only opens through the `/app` preopen count, which is how wasi-libc resolves every absolute
//! `/app/...` path and every relative path from the default working directory. The names are
//! the guest's own and stay hostile: they are normalised here only so that one file is named
//! once, and the supervisor opens them beneath `/app` through its confined handle.

use sandbox_protocol::MAX_WRITTEN_FILES;

/// The guest descriptor of the `/app` preopen (wasmtime-wasi numbers preopens from 3, `/app`
/// first).
const APP_FD: i32 = 3;

/// The longest name noted, in bytes; a longer one is not an image anyone asked for.
const MAX_NAME_BYTES: usize = 1024;

/// `fd_write` in a WASI p1 rights mask.
const RIGHT_FD_WRITE: i64 = 1 << 6;

/// What one execution wrote beneath `/app`, in the order first seen.
#[derive(Debug, Default)]
pub struct WrittenFiles {
    names: Vec<String>,
}

impl WrittenFiles {
    /// Notes a successful `path_open` of `path` beneath `dirfd` whose `oflags` create or
    /// truncate, or whose `rights` allow writing.
    pub(super) fn opened(&mut self, dirfd: i32, path: &[u8], oflags: i32, rights: i64) {
        const CREAT_OR_TRUNC: i32 = 1 | 8;
        const DIRECTORY: i32 = 2;
        let writes = oflags & CREAT_OR_TRUNC != 0 || rights & RIGHT_FD_WRITE != 0;
        if writes && oflags & DIRECTORY == 0 {
            self.note(dirfd, path);
        }
    }

    /// Notes a successful `path_rename` to `path` beneath `dirfd`.
    pub(super) fn renamed_to(&mut self, dirfd: i32, path: &[u8]) {
        self.note(dirfd, path);
    }

    fn note(&mut self, dirfd: i32, path: &[u8]) {
        if dirfd != APP_FD || self.names.len() >= MAX_WRITTEN_FILES || path.len() > MAX_NAME_BYTES {
            return;
        }
        let Some(name) = std::str::from_utf8(path).ok().and_then(normalise) else {
            return;
        };
        if !self.names.contains(&name) {
            self.names.push(name);
        }
    }

    /// Forgets what an earlier execution wrote.
    pub fn clear(&mut self) {
        self.names.clear();
    }

    /// What this execution wrote, for its report.
    pub fn take(&mut self) -> Vec<String> {
        std::mem::take(&mut self.names)
    }
}

/// `path` relative to `/app` with `.` and `..` resolved by name, or `None` when it leaves
/// `/app`, names `/app` itself or holds a NUL.
fn normalise(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            _ if part.contains('\0') => return None,
            _ => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_beneath_app_are_named_once_in_order() {
        let mut written = WrittenFiles::default();
        written.opened(APP_FD, b"plot.png", 1 | 8, RIGHT_FD_WRITE);
        written.opened(APP_FD, b"./out//b.svg", 1, 0);
        written.opened(APP_FD, b"out/../plot.png", 8, 0);
        written.opened(APP_FD, b"data.csv", 0, RIGHT_FD_WRITE);
        written.renamed_to(APP_FD, b"final.png");
        assert_eq!(
            written.take(),
            ["plot.png", "out/b.svg", "data.csv", "final.png"]
        );
        assert!(written.take().is_empty(), "taken once");
    }

    #[test]
    fn reads_other_mounts_directories_and_escapes_are_not_named() {
        let mut written = WrittenFiles::default();
        written.opened(APP_FD, b"input.csv", 0, 1 << 1);
        written.opened(APP_FD, b"figures", 1 | 2, RIGHT_FD_WRITE);
        written.opened(APP_FD + 1, b"scratch.png", 1, RIGHT_FD_WRITE);
        written.opened(APP_FD, b"../etc/passwd", 1, RIGHT_FD_WRITE);
        written.opened(APP_FD, b"a/../..", 1, RIGHT_FD_WRITE);
        written.opened(APP_FD, b".", 1, RIGHT_FD_WRITE);
        written.opened(APP_FD, b"bad\xff.png", 1, RIGHT_FD_WRITE);
        written.opened(APP_FD, &[b'x'; MAX_NAME_BYTES + 1], 1, RIGHT_FD_WRITE);
        assert!(written.take().is_empty());
    }

    #[test]
    fn an_execution_names_at_most_the_cap() {
        let mut written = WrittenFiles::default();
        for i in 0..MAX_WRITTEN_FILES + 10 {
            written.opened(APP_FD, format!("f{i}.png").as_bytes(), 1, 0);
        }
        let names = written.take();
        assert_eq!(names.len(), MAX_WRITTEN_FILES);
        assert_eq!(names[0], "f0.png");
        written.opened(APP_FD, b"again.png", 1, 0);
        written.clear();
        assert!(written.take().is_empty());
    }
}
