//! The guest's linear memory as the WASI shadows see it: bounds-checked little-endian reads and
//! writes, iovec arrays, the memory and the host state borrowed together, and the errno values
//! the shadows answer with. Every pointer comes from the guest, so nothing here trusts one.

use wasmtime::{Caller, Result, format_err};

use super::state::HostState;

/// WASI errno values (wasi_snapshot_preview1) the shadows answer with themselves.
pub(super) mod errno {
    pub const SUCCESS: i32 = 0;
    pub const ACCES: i32 = 2;
    pub const BADF: i32 = 8;
    pub const BUSY: i32 = 10;
    pub const DQUOT: i32 = 19;
    pub const EXIST: i32 = 20;
    pub const FAULT: i32 = 21;
    pub const FBIG: i32 = 22;
    pub const INVAL: i32 = 28;
    pub const IO: i32 = 29;
    pub const LOOP: i32 = 32;
    pub const NAMETOOLONG: i32 = 37;
    pub const NOENT: i32 = 44;
    pub const NOSYS: i32 = 52;
    pub const NOTDIR: i32 = 54;
    pub const NXIO: i32 = 60;
    pub const PERM: i32 = 63;
    pub const ROFS: i32 = 69;
    pub const XDEV: i32 = 75;
}

/// `IOV_MAX`: an iovec array longer than this is hostile.
const IOV_MAX: usize = 1024;

/// Reads a little-endian integer of `N` bytes at `at`.
pub(super) fn read_le<const N: usize>(mem: &[u8], at: usize) -> Option<[u8; N]> {
    mem.get(at..at.checked_add(N)?)?.try_into().ok()
}

/// The little-endian `u32` at `at`, if it is inside `mem`.
pub fn read_u32(mem: &[u8], at: usize) -> Option<u32> {
    read_le::<4>(mem, at).map(u32::from_le_bytes)
}

/// The little-endian `u64` at `at`, if it is inside `mem`.
pub(super) fn read_u64(mem: &[u8], at: usize) -> Option<u64> {
    read_le::<8>(mem, at).map(u64::from_le_bytes)
}

/// Writes `value` little-endian at `at`; false when it does not fit.
pub fn write_u32(mem: &mut [u8], at: usize, value: u32) -> bool {
    write_bytes(mem, at, &value.to_le_bytes())
}

/// Copies `bytes` to `at`; false when they do not fit.
pub(super) fn write_bytes(mem: &mut [u8], at: usize, bytes: &[u8]) -> bool {
    match at
        .checked_add(bytes.len())
        .and_then(|end| mem.get_mut(at..end))
    {
        Some(slot) => {
            slot.copy_from_slice(bytes);
            true
        }
        None => false,
    }
}

/// The `(address, length)` pairs of a guest iovec array, bounds-checked.
pub fn iovecs(mem: &[u8], ptr: i32, count: i32) -> Option<Vec<(usize, usize)>> {
    let (ptr, count) = (ptr as u32 as usize, count as u32 as usize);
    if count > IOV_MAX {
        return None;
    }
    (0..count)
        .map(|i| {
            let at = ptr.checked_add(i * 8)?;
            let (buf, len) = (read_u32(mem, at)? as usize, read_u32(mem, at + 4)? as usize);
            mem.get(buf..buf.checked_add(len)?)?;
            Some((buf, len))
        })
        .collect()
}

/// The guest's memory and our state, borrowed together.
///
/// # Errors
/// Before the instance's memory is bound (a host defect).
pub(crate) fn memory_and_state<'a>(
    caller: &'a mut Caller<'_, HostState>,
) -> Result<(&'a mut [u8], &'a mut HostState)> {
    let memory = caller
        .data()
        .memory
        .ok_or_else(|| format_err!("guest memory is not bound"))?;
    Ok(memory.data_and_store_mut(caller))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guest_memory_is_read_and_written_within_bounds() {
        let mut mem = vec![0u8; 32];
        assert!(write_u32(&mut mem, 28, 0xdead_beef));
        assert_eq!(read_u32(&mem, 28), Some(0xdead_beef));
        assert!(!write_u32(&mut mem, 29, 1), "would cross the end");
        assert!(!write_u32(&mut mem, usize::MAX - 1, 1), "no overflow");
        assert_eq!(read_u32(&mem, 30), None);
        assert!(!write_bytes(&mut mem, 31, b"ab"));
        assert!(write_bytes(&mut mem, 30, b"ab"));

        // Two iovecs at 0: (buf 16, len 4) and (buf 20, len 12).
        let mut mem = vec![0u8; 32];
        for (at, v) in [(0, 16), (4, 4), (8, 20), (12, 12)] {
            write_u32(&mut mem, at, v);
        }
        assert_eq!(iovecs(&mem, 0, 2), Some(vec![(16, 4), (20, 12)]));
        write_u32(&mut mem, 12, 13);
        assert_eq!(iovecs(&mem, 0, 2), None, "a buffer past the end");
        assert_eq!(iovecs(&mem, 0, 1025), None, "more than IOV_MAX");
        assert_eq!(iovecs(&mem, 0, 0), Some(vec![]));
        assert_eq!(iovecs(&mem, -8, 1), None, "a negative pointer is far out");
    }
}
