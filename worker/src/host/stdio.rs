//! The shadows of `fd_write` and `fd_read` on the guest's standard streams.
//!
//! - `fd_write` on fd 1 and 2 goes to the capped captures (never trapping the guest, see
//!   `capture.rs`, except a command whose stdout is a full pipe: [`BrokenPipe`]), and on fd 0
//!   to the driver's status channel ([`DriverChannel::write`]); writes to files go to the disk
//!   quota's shadow.
//! - `fd_read` on fd 0 is the driver's request channel when there is one (Python); otherwise it
//!   serves what a shell command piped in (JavaScript), then end of file. Other descriptors go
//!   to wasmtime-wasi.

use wasmtime::{Caller, Linker, Result};
use wasmtime_wasi::p1::wasi_snapshot_preview1 as wasi;
use wiggle::GuestMemory;

use super::disk_quota;
use super::guest_memory::{errno, iovecs, memory_and_state, write_u32};
use super::state::HostState;

/// Adds the shadows of `fd_write` and `fd_read`.
///
/// # Errors
/// When Wasmtime refuses a definition (a build defect).
pub(super) fn add_to_linker(linker: &mut Linker<HostState>) -> Result<()> {
    linker.func_wrap(
        "wasi_snapshot_preview1",
        "fd_write",
        |mut caller: Caller<'_, HostState>,
         fd: i32,
         iovs: i32,
         iovs_len: i32,
         nwritten: i32|
         -> Result<i32> {
            if !(0..=2).contains(&fd) {
                // Files: charged to the disk quota when they are in /app or /tmp.
                return disk_quota::write(&mut caller, fd, iovs, iovs_len, None, nwritten);
            }
            write_stdio(&mut caller, fd, iovs, iovs_len, nwritten)
        },
    )?;

    linker.func_wrap(
        "wasi_snapshot_preview1",
        "fd_read",
        |mut caller: Caller<'_, HostState>,
         fd: i32,
         iovs: i32,
         iovs_len: i32,
         nread: i32|
         -> Result<i32> {
            if fd == 0 {
                return read_stdin(&mut caller, iovs, iovs_len, nread);
            }
            let (mem, state) = memory_and_state(&mut caller)?;
            let mut gm = GuestMemory::Unshared(mem);
            wasmtime_wasi::runtime::in_tokio(wasi::fd_read(
                &mut state.wasi,
                &mut gm,
                fd,
                iovs,
                iovs_len,
                nread,
            ))
        },
    )?;
    Ok(())
}

/// What ends a guest whose stdout is a pipe that takes no more ([`HostState::stdout_is_pipe`]),
/// as SIGPIPE ends a process whose reader has gone: at once, without a message. What fitted is
/// in the capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BrokenPipe;

impl std::fmt::Display for BrokenPipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("its stdout is a full pipe (SIGPIPE)")
    }
}

impl std::error::Error for BrokenPipe {}

/// `fd_write` on fd 0 (the driver's status channel), 1 or 2 (the captures).
///
/// # Errors
/// [`BrokenPipe`] when stdout is a pipe and this write does not fit in it.
fn write_stdio(
    caller: &mut Caller<'_, HostState>,
    fd: i32,
    iovs: i32,
    iovs_len: i32,
    nwritten: i32,
) -> Result<i32> {
    let (mem, state) = memory_and_state(caller)?;
    if fd == 0 && state.driver.is_none() {
        return Ok(errno::BADF);
    }
    let Some(vecs) = iovecs(mem, iovs, iovs_len) else {
        return Ok(errno::FAULT);
    };
    let mut total = 0usize;
    for (buf, len) in vecs {
        let bytes = &mem[buf..buf + len];
        match (fd, state.driver.as_mut()) {
            (0, Some(driver)) => driver.write(bytes),
            (1, _) => {
                if !state.stdout.push(bytes) && state.stdout_is_pipe {
                    return Err(BrokenPipe.into());
                }
            }
            _ => {
                state.stderr.push(bytes);
            }
        }
        total += len;
    }
    if !write_u32(mem, nwritten as u32 as usize, total as u32) {
        return Ok(errno::FAULT);
    }
    Ok(errno::SUCCESS)
}

/// `fd_read(0, ..)`: the driver's channel, or the bytes piped in.
///
/// # Errors
/// A trap from the driver that ends the interpreter (the supervisor went away).
fn read_stdin(
    caller: &mut Caller<'_, HostState>,
    iovs: i32,
    iovs_len: i32,
    nread: i32,
) -> Result<i32> {
    if let Some(mut driver) = caller.data_mut().driver.take() {
        let prepared = driver.before_read(caller);
        // Back in the state even when the interpreter is ending: its session takes it from there.
        caller.data_mut().driver = Some(driver);
        prepared?;
    }
    let (mem, state) = memory_and_state(caller)?;
    let Some(vecs) = iovecs(mem, iovs, iovs_len) else {
        return Ok(errno::FAULT);
    };
    let copied = match state.driver.as_mut() {
        Some(driver) => copy_into(mem, &vecs, |dest| {
            let bytes = driver.read(dest.len());
            dest[..bytes.len()].copy_from_slice(bytes);
            bytes.len()
        }),
        None => copy_into(mem, &vecs, |dest| {
            let n = state.piped_stdin.len().min(dest.len());
            for (slot, byte) in dest.iter_mut().zip(state.piped_stdin.drain(..n)) {
                *slot = byte;
            }
            n
        }),
    };
    if !write_u32(mem, nread as u32 as usize, copied as u32) {
        return Ok(errno::FAULT);
    }
    Ok(errno::SUCCESS)
}

/// Fills the guest buffers `vecs` in order with `fill`, which returns how many bytes it put in
/// the buffer it was given, until one is not filled up; returns the bytes copied.
fn copy_into(
    mem: &mut [u8],
    vecs: &[(usize, usize)],
    mut fill: impl FnMut(&mut [u8]) -> usize,
) -> usize {
    let mut copied = 0;
    for &(buf, len) in vecs {
        let n = fill(&mut mem[buf..buf + len]);
        copied += n;
        if n < len {
            break;
        }
    }
    copied
}
