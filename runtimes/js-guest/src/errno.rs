//! Error numbers as the JavaScript library reports them: WASI's errno values
//! (what quickjs-libc built for WASI returns, so `std.Error.ENOENT` is 44, not
//! Linux's 2), conversion from `std::io::Error`, and their descriptions.

use std::io;

/// A positive WASI errno value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Errno(pub i32);

pub const EACCES: Errno = Errno(2);
pub const EBADF: Errno = Errno(8);
pub const EEXIST: Errno = Errno(20);
pub const EINVAL: Errno = Errno(28);
pub const EIO: Errno = Errno(29);
pub const EISDIR: Errno = Errno(31);
pub const ELOOP: Errno = Errno(32);
pub const EMFILE: Errno = Errno(33);
pub const ENAMETOOLONG: Errno = Errno(37);
pub const ENOENT: Errno = Errno(44);
pub const ENOMEM: Errno = Errno(48);
pub const ENOTDIR: Errno = Errno(54);
pub const ESPIPE: Errno = Errno(70);

impl Errno {
    /// What the JavaScript side receives for a failure: `-errno`.
    pub fn negated(self) -> f64 {
        -f64::from(self.0)
    }
}

impl From<io::Error> for Errno {
    fn from(e: io::Error) -> Self {
        if let Some(code) = e.raw_os_error() {
            return Errno(code);
        }
        // Errors std creates itself (no OS code behind them).
        match e.kind() {
            io::ErrorKind::NotFound => ENOENT,
            io::ErrorKind::PermissionDenied => EACCES,
            io::ErrorKind::AlreadyExists => EEXIST,
            io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData => EINVAL,
            io::ErrorKind::OutOfMemory => ENOMEM,
            io::ErrorKind::IsADirectory => EISDIR,
            io::ErrorKind::NotADirectory => ENOTDIR,
            _ => EIO,
        }
    }
}

/// The C library's description of `code` ("No such file or directory"), as
/// `strerror` gives it.
pub fn describe(code: i32) -> String {
    // std renders OS errors as "<strerror text> (os error N)", taking the text
    // from wasi-libc's strerror_r; keep just the text.
    let text = io::Error::from_raw_os_error(code).to_string();
    match text.rfind(" (os error ") {
        Some(cut) => text[..cut].to_owned(),
        None => text,
    }
}
