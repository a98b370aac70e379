//! `sandbox.file_mode`: a file's permission bits, the one thing about files that WASI preview 1
//! cannot say (its `filestat` has no mode), for the toolbox's `ls -l`, `ls -F`, `stat` and
//! `find -perm`/`-executable`. Without it those showed fixed modes, so `chmod +x run.sh` then
//! `ls -l` said `-rw-r--r--`: a silent deviation from GNU.
//!
//! The guest names an absolute guest path; the session's view of its mounts ([`FileModes`],
//! the shell's confined guest filesystem) resolves it beneath a mount's root handle, as every
//! other host access to session files does, and answers twelve bits, or [`UNKNOWN`] when it
//! cannot: outside the mounts, missing, refused, or no view bound (an interpreter's instance).
//! The guest then shows the sandbox's defaults. Nothing else about the file crosses.

use std::sync::Arc;

use wasmtime::{Caller, Linker, Result};

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
}

/// The view a store's `sandbox.file_mode` answers from.
pub type SharedFileModes = Arc<dyn FileModes>;

/// Adds `sandbox.file_mode(path, len, follow) -> mode or -1`.
///
/// # Errors
/// When Wasmtime refuses the definition (a build defect).
pub(super) fn add_to_linker(linker: &mut Linker<HostState>) -> Result<()> {
    linker.func_wrap(
        "sandbox",
        "file_mode",
        |mut caller: Caller<'_, HostState>, path: i32, len: i32, follow: i32| -> i32 {
            let Some(modes) = caller.data().file_modes.clone() else {
                return UNKNOWN;
            };
            let Some(memory) = caller.data().memory.or_else(|| {
                caller
                    .get_export("memory")
                    .and_then(wasmtime::Extern::into_memory)
            }) else {
                return UNKNOWN;
            };
            let bytes = memory.data(&caller);
            match guest_path(bytes, path, len) {
                Some(path) => modes
                    .mode(path, follow != 0)
                    .map_or(UNKNOWN, |mode| (mode & 0o7777) as i32),
                None => UNKNOWN,
            }
        },
    )?;
    Ok(())
}

/// The absolute guest path at `ptr..ptr+len` of the guest's memory, if it is one: inside the
/// memory, at most [`MAX_PATH`] bytes, UTF-8, starting with `/`, with no NUL.
fn guest_path(mem: &[u8], ptr: i32, len: i32) -> Option<&str> {
    let (ptr, len) = (ptr as u32 as usize, len as u32 as usize);
    if len > MAX_PATH {
        return None;
    }
    let bytes = mem.get(ptr..ptr.checked_add(len)?)?;
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
}
