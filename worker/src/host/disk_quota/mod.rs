//! The WASI p1 calls that grow a session's files, shadowed (like `fd_write` in `stdio.rs`) so the
//! quota is charged before wasmtime-wasi does the work, and a growth that does not fit is refused
//! with errno `DQUOT` (19): Python raises `OSError(errno.EDQUOT, ...)`, which its driver
//! classifies `disk_quota`, and QuickJS's helpers throw an `EDQUOT` error.
//!
//! Which descriptors are charged: the preopens of `/app` and `/tmp`, and every descriptor opened
//! beneath them (the session's `GuestQuota` knows where each descriptor was opened, updated by `path_open`
//! and `fd_renumber`). Writes to stdout/stderr, `/data` and the shared volume are not charged.
//!
//! What is charged, before the call (and given back when the call fails):
//! - `path_open` with `O_CREAT` of a file that did not exist: one entry (see `write.rs`);
//! - `path_create_directory`, `path_link`: one entry; `path_symlink`: one entry and its text;
//! - `fd_write`/`fd_pwrite` on a charged regular file: the bytes past its current end (appends
//!   always grow), adjusted to what was really written;
//! - `fd_filestat_set_size`: the growth (a shrink is released).
//!
//! `path_unlink_file` and `path_remove_directory` release one entry each; bytes of deleted files
//! come back at the next recount (a deleted file may still be open). `path_rename` and
//! `path_link` from the writable shared volume into `/app` or `/tmp` answer `XDEV`, so the guest
//! copies instead, and the copy is charged (Python's `shutil.move` does that); from a read-only
//! mount wasmtime-wasi refuses them itself (`EPERM`).
//!
//! The books of one interpreter instance (which descriptors are charged, the length of the file
//! written last) are its `GuestQuota`, in `guest_quota.rs`; here `charge.rs` charges and
//! releases against the session's shared quota, `write.rs` shadows the writes and `path_open`,
//! and `calls.rs` the other calls and puts them all in the linker.

mod calls;
mod charge;
mod write;

pub(super) use calls::add_to_linker;
pub(super) use write::write;
