//! `sandbox.file_mode` and `sandbox.set_file_mode`: a file's permission bits, the one thing
//! about files that WASI preview 1 cannot say or set (its `filestat` has no mode, and it has no
//! chmod). The toolbox reads them for `ls -l`, `ls -F`, `stat`, `find -perm`/`-executable` and
//! `tar c`, and sets them for `cp` (a copy keeps its source's bits), `cp -p`, `mkdir -m` and
//! `tar x`. Without them `chmod +x run.sh` then `ls -l` said `-rw-r--r--`, and `mkdir -m 700`
//! made a 0755 directory: silent deviations from GNU.
//!
//! The guest names an absolute guest path; the session's view of its mounts ([`FileModes`],
//! the shell's confined guest filesystem) resolves it beneath a mount's root handle, as every
//! other host access to session files does. Reading answers twelve bits, or [`UNKNOWN`] when it
//! cannot (outside the mounts, missing, refused, or no view bound: an interpreter's instance),
//! and the guest then shows the sandbox's defaults. Setting answers 0 or a WASI errno, with the
//! rules of the shell's `chmod`: a mount point keeps its mode, and set-user-ID or set-group-ID
//! bits are refused. Nothing else about the file crosses.
//!
//! CPython has no import of its own for these, but its build has a door to its host,
//! `host.call` (`_host.call(frame) -> bytes` in Python): the same two questions go through it
//! as frames ([`door`]), so the driver's `os.chmod`, `os.stat` and `os.access` see and set the
//! bits the tools do. Without it `os.chmod` did nothing and said nothing (CPython's WASI build
//! ignores the missing call), `os.stat` showed no permission bits at all, and a script written
//! and made executable in Python failed as `./script` in `execute_command`.

use std::sync::Arc;

use wasmtime::{Caller, Linker, Memory, Result};

use super::state::HostState;

/// What the call answers when it has no mode to give.
pub const UNKNOWN: i32 = -1;

/// The longest path the call reads from the guest (Linux's `PATH_MAX`).
const MAX_PATH: usize = 4096;

/// A session's files as the host may look at them: the permission bits of a guest path.
pub trait FileModes: Send + Sync + std::fmt::Debug {
    /// The permission bits (`0o7777` at most) of the absolute guest path `guest_path`, its last
    /// component followed when `follow`; `None` when the path is outside the session's mounts,
    /// refused, or missing.
    fn mode(&self, guest_path: &str, follow: bool) -> Option<u32>;

    /// Sets the permission bits of the absolute guest path `guest_path` (a link is followed).
    ///
    /// # Errors
    /// As the host's chmod fails, or `EPERM` for a mount point or set-user-ID/set-group-ID bits,
    /// `EROFS` on a read-only mount, `EACCES` for a path refused by confinement.
    fn set_mode(&self, guest_path: &str, mode: u32) -> std::io::Result<()>;
}

/// The view a store's `sandbox.file_mode` answers from.
pub type SharedFileModes = Arc<dyn FileModes>;

/// Adds `sandbox.file_mode(path, len, follow) -> mode or -1` and `sandbox.set_file_mode`.
///
/// # Errors
/// When Wasmtime refuses the definition (a build defect).
pub(super) fn add_to_linker(linker: &mut Linker<HostState>) -> Result<()> {
    linker.func_wrap(
        "sandbox",
        "file_mode",
        |mut caller: Caller<'_, HostState>, path: i32, len: i32, follow: i32| -> i32 {
            let Some((modes, memory)) = view_and_memory(&mut caller) else {
                return UNKNOWN;
            };
            match guest_path(memory.data(&caller), path, len) {
                Some(path) => modes
                    .mode(path, follow != 0)
                    .map_or(UNKNOWN, |mode| (mode & 0o7777) as i32),
                None => UNKNOWN,
            }
        },
    )?;
    add_set_to_linker(linker)
}

/// What `host.call` answers when no view is bound to the store: the guest raises
/// `ConnectionRefusedError`.
pub const NO_HOST: i32 = -1;

/// What `host.call` answers for a frame it does not take (the guest raises `OSError`).
const REFUSED_FRAME: i32 = 1;

/// A door frame's first byte: the bits of a path (the next four bytes: 1 to follow a last
/// link, else 0), answered as [`UNKNOWN`] or the bits.
pub const DOOR_MODE: u8 = b'M';

/// A door frame's first byte: set the bits of a path (the next four bytes: the mode), answered
/// as 0 or a WASI errno.
pub const DOOR_SET_MODE: u8 = b'S';

/// `host.call(frame, len, reply_at, reply_len_at) -> status`: CPython's door, serving mode
/// frames. A frame is one byte ([`DOOR_MODE`] or [`DOOR_SET_MODE`]), a little-endian `u32` and
/// the absolute guest path; the reply is a little-endian `i32` in a buffer the guest allocates
/// (its `host_alloc` export), whose address and length go to `reply_at` and `reply_len_at`.
/// The status is 0, [`NO_HOST`] when the store has no view, or [`REFUSED_FRAME`] for a frame
/// that is not one of these or a reply that cannot be placed.
///
/// # Errors
/// A trap of the guest's allocator.
pub fn door(
    caller: &mut Caller<'_, HostState>,
    frame: i32,
    len: i32,
    reply_at: i32,
    reply_len_at: i32,
) -> Result<i32> {
    let Some((modes, memory)) = view_and_memory(caller) else {
        return Ok(NO_HOST);
    };
    let (frame, len) = (frame as u32 as usize, len as u32 as usize);
    let answer = {
        let data = memory.data(&*caller);
        let Some(bytes) = frame.checked_add(len).and_then(|end| data.get(frame..end)) else {
            return Ok(REFUSED_FRAME);
        };
        let Some(answer) = answer_frame(modes.as_ref(), bytes) else {
            return Ok(REFUSED_FRAME);
        };
        answer
    };
    let Some(alloc) = caller
        .get_export("host_alloc")
        .and_then(wasmtime::Extern::into_func)
    else {
        return Ok(REFUSED_FRAME);
    };
    let reply = answer.to_le_bytes();
    let at = alloc
        .typed::<i32, i32>(&*caller)?
        .call(&mut *caller, reply.len() as i32)?;
    let placed = memory
        .write(&mut *caller, at as u32 as usize, &reply)
        .is_ok()
        && (memory.write(&mut *caller, reply_at as u32 as usize, &at.to_le_bytes())).is_ok()
        && (memory.write(
            &mut *caller,
            reply_len_at as u32 as usize,
            &4u32.to_le_bytes(),
        ))
        .is_ok();
    Ok(if placed { 0 } else { REFUSED_FRAME })
}

/// The answer to one door frame, as [`door`] reads it; `None` for a frame it does not take.
fn answer_frame(modes: &dyn FileModes, frame: &[u8]) -> Option<i32> {
    let (&op, rest) = frame.split_first()?;
    let field = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?);
    let path = rest.get(4..)?;
    if path.len() > MAX_PATH {
        // As the file system answers such a path (`os.stat` already did, through WASI).
        return match op {
            DOOR_MODE => Some(UNKNOWN),
            DOOR_SET_MODE => Some(wasi_errno::NAMETOOLONG),
            _ => None,
        };
    }
    let path = checked_path(path)?;
    match op {
        DOOR_MODE => Some(
            modes
                .mode(path, field != 0)
                .map_or(UNKNOWN, |mode| (mode & 0o7777) as i32),
        ),
        DOOR_SET_MODE if field <= 0o7777 => Some(match modes.set_mode(path, field) {
            Ok(()) => 0,
            Err(e) => wasi_errno::of(&e),
        }),
        DOOR_SET_MODE => Some(wasi_errno::INVAL),
        _ => None,
    }
}

/// The store's view of modes and the guest's memory, when both are there.
fn view_and_memory(caller: &mut Caller<'_, HostState>) -> Option<(SharedFileModes, Memory)> {
    let modes = caller.data().file_modes.clone()?;
    let memory = caller.data().memory.or_else(|| {
        caller
            .get_export("memory")
            .and_then(wasmtime::Extern::into_memory)
    })?;
    Some((modes, memory))
}

/// Adds `sandbox.set_file_mode(path, len, mode) -> 0 or a WASI errno`.
fn add_set_to_linker(linker: &mut Linker<HostState>) -> Result<()> {
    linker.func_wrap(
        "sandbox",
        "set_file_mode",
        |mut caller: Caller<'_, HostState>, path: i32, len: i32, mode: i32| -> i32 {
            let Some((modes, memory)) = view_and_memory(&mut caller) else {
                return wasi_errno::NOSYS;
            };
            let Some(path) = guest_path(memory.data(&caller), path, len) else {
                return wasi_errno::INVAL;
            };
            match u32::try_from(mode).ok().filter(|m| *m <= 0o7777) {
                Some(mode) => match modes.set_mode(path, mode) {
                    Ok(()) => 0,
                    Err(e) => wasi_errno::of(&e),
                },
                None => wasi_errno::INVAL,
            }
        },
    )?;
    Ok(())
}

/// The WASI preview 1 errno values `sandbox.set_file_mode` answers with.
mod wasi_errno {
    pub use super::super::guest_memory::errno::*;

    /// The WASI errno of a host error (Linux's numbers), `EIO` for the rest.
    pub fn of(e: &std::io::Error) -> i32 {
        use rustix::io::Errno;
        let Some(raw) = e.raw_os_error() else {
            return IO;
        };
        match Errno::from_raw_os_error(raw) {
            Errno::PERM => PERM,
            Errno::NOENT => NOENT,
            Errno::ACCESS => ACCES,
            Errno::EXIST => EXIST,
            Errno::NOTDIR => NOTDIR,
            Errno::INVAL => INVAL,
            Errno::ROFS => ROFS,
            Errno::LOOP => LOOP,
            Errno::NAMETOOLONG => NAMETOOLONG,
            _ => IO,
        }
    }
}

/// The absolute guest path at `ptr..ptr+len` of the guest's memory, if it is one: inside the
/// memory, at most [`MAX_PATH`] bytes, UTF-8, starting with `/`, with no NUL.
fn guest_path(mem: &[u8], ptr: i32, len: i32) -> Option<&str> {
    let (ptr, len) = (ptr as u32 as usize, len as u32 as usize);
    checked_path(mem.get(ptr..ptr.checked_add(len)?)?)
}

/// `bytes` as an absolute guest path: at most [`MAX_PATH`] bytes, UTF-8, starting with `/`,
/// with no NUL.
fn checked_path(bytes: &[u8]) -> Option<&str> {
    if bytes.len() > MAX_PATH {
        return None;
    }
    let path = std::str::from_utf8(bytes).ok()?;
    (path.starts_with('/') && !path.contains('\0')).then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_absolute_path_inside_the_memory_is_read() {
        let mut mem = vec![0u8; 64];
        mem[8..16].copy_from_slice(b"/app/run");
        assert_eq!(guest_path(&mem, 8, 8), Some("/app/run"));
        assert_eq!(guest_path(&mem, 9, 7), None, "relative");
        assert_eq!(guest_path(&mem, 60, 8), None, "past the end");
        assert_eq!(
            guest_path(&mem, -1, 8),
            None,
            "a negative pointer is far out"
        );
        assert_eq!(guest_path(&mem, 8, -1), None, "a negative length is huge");
        mem[12] = 0;
        assert_eq!(guest_path(&mem, 8, 8), None, "a NUL inside");
        mem[12] = 0xff;
        assert_eq!(guest_path(&mem, 8, 8), None, "not UTF-8");
        let long = vec![b'/'; MAX_PATH + 1];
        assert_eq!(
            guest_path(&long, 0, (MAX_PATH + 1) as i32),
            None,
            "too long"
        );
        assert!(guest_path(&long, 0, MAX_PATH as i32).is_some());
    }

    #[test]
    fn door_frames_are_read_strictly() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("run.sh"), "x").unwrap();
        let modes = crate::shell::FsView::of_session(dir.path(), &[]).file_modes();
        let frame = |op: u8, field: u32, path: &str| {
            let mut f = vec![op];
            f.extend(field.to_le_bytes());
            f.extend(path.as_bytes());
            answer_frame(modes.as_ref(), &f)
        };
        assert_eq!(frame(DOOR_SET_MODE, 0o750, "/app/run.sh"), Some(0));
        let host = std::fs::metadata(dir.path().join("run.sh")).unwrap();
        assert_eq!(host.permissions().mode() & 0o7777, 0o750);
        assert_eq!(frame(DOOR_MODE, 1, "/app/run.sh"), Some(0o750));
        assert_eq!(frame(DOOR_MODE, 1, "/app/missing"), Some(UNKNOWN));
        assert_eq!(
            frame(DOOR_SET_MODE, 0o4755, "/app/run.sh"),
            Some(wasi_errno::PERM)
        );
        assert_eq!(
            frame(DOOR_SET_MODE, 0o10000, "/app/run.sh"),
            Some(wasi_errno::INVAL)
        );
        assert_eq!(
            frame(DOOR_SET_MODE, 0o777, "/app"),
            Some(wasi_errno::PERM),
            "mount point"
        );
        assert_eq!(
            frame(DOOR_SET_MODE, 0o777, "/etc/passwd"),
            Some(wasi_errno::ACCES)
        );
        assert_eq!(frame(b'X', 0, "/app/run.sh"), None, "an unknown frame");
        let long = format!("/app/{}", "d/".repeat(MAX_PATH));
        assert_eq!(
            frame(DOOR_SET_MODE, 0o644, &long),
            Some(wasi_errno::NAMETOOLONG)
        );
        assert_eq!(frame(DOOR_MODE, 1, &long), Some(UNKNOWN));
        assert_eq!(frame(DOOR_MODE, 1, "app/run.sh"), None, "a relative path");
        assert_eq!(
            answer_frame(modes.as_ref(), &[DOOR_MODE, 1, 0]),
            None,
            "too short"
        );
        assert_eq!(answer_frame(modes.as_ref(), &[]), None);
    }

    #[test]
    fn host_errors_become_wasi_errnos() {
        use std::io::Error;
        assert_eq!(
            wasi_errno::of(&Error::from_raw_os_error(1)),
            wasi_errno::PERM
        );
        assert_eq!(
            wasi_errno::of(&Error::from_raw_os_error(2)),
            wasi_errno::NOENT
        );
        assert_eq!(
            wasi_errno::of(&Error::from_raw_os_error(13)),
            wasi_errno::ACCES
        );
        assert_eq!(
            wasi_errno::of(&Error::from_raw_os_error(30)),
            wasi_errno::ROFS
        );
        assert_eq!(wasi_errno::of(&Error::other("no errno")), wasi_errno::IO);
    }
}
