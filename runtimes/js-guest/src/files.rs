//! Open files behind `std.open` FILE objects and `os.open` descriptors: a
//! table of handles in linear memory, C-stdio-like read buffering (for
//! `getline`, `getByte`, `eof`), and the detection of handles that a snapshot
//! restore left pointing at nothing.
//!
//! Handles are small integers that are never reused: 0, 1 and 2 are stdin,
//! stdout and stderr; files get 3, 4, ... JavaScript never sees a raw WASI
//! fd, so a stale handle cannot alias a file opened later.
//!
//! Snapshot restore: when a cell traps, the host copies the memory snapshot
//! taken after the previous cell into a *fresh* instance whose WASI context
//! has the same preopens but no other open files. This table (in memory) then
//! still lists fds the new context never opened. [`revalidate`], called at
//! the start of every cell before anything can open a file, notices that and
//! marks every file handle stale: operations on it fail cleanly, and its fd
//! number is never closed or used again (it may belong to a file the new
//! instance opens later).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;

use crate::errno::{self, Errno};

/// Most files open at once. Every open file holds a real descriptor in the
/// worker process, whose RLIMIT_NOFILE (256) also covers its own sockets and
/// the preopens: a script that hoards files gets `EMFILE` from us well before
/// the worker runs out. (Files the script drops are closed by the FILE
/// finalizer right away.)
const MAX_OPEN: usize = 128;

/// Bytes read ahead per refill of the read buffer.
const READ_CHUNK: usize = 64 * 1024;

/// Why an operation could not run at all (as opposed to an I/O error, which
/// is an [`Errno`] returned to JavaScript).
#[derive(Debug, PartialEq, Eq)]
pub enum BadHandle {
    /// Closed already, or never opened.
    Closed,
    /// Opened before a snapshot restore; the file is gone from this instance.
    Stale,
    /// stdin/stdout/stderr cannot be closed.
    Stdio,
}

struct Handle {
    /// `ManuallyDrop` because dropping a `File` closes its fd, which for a
    /// stale handle could be someone else's; only `close` drops it, for
    /// handles known to be live.
    file: ManuallyDrop<File>,
    stdio: bool,
    readable: bool,
    writable: bool,
    /// Read-ahead: bytes `rbuf[rpos..]` come before the fd's position.
    rbuf: Vec<u8>,
    rpos: usize,
    eof: bool,
    error: bool,
}

enum Slot {
    Open(Handle),
    Stale,
}

struct Table {
    slots: BTreeMap<u64, Slot>,
    next: u64,
}

thread_local! {
    static TABLE: RefCell<Table> = RefCell::new(Table::new());
    /// Handles whose FILE object was freed while the table was borrowed.
    static DROPPED: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

impl Table {
    fn new() -> Self {
        let mut slots = BTreeMap::new();
        for (id, readable) in [(0u64, true), (1, false), (2, false)] {
            // SAFETY: fds 0-2 exist in every WASI instance (the host provides
            // and shadows them). The `File` is never dropped (ManuallyDrop and
            // `close` refuses stdio), so it never closes them.
            let file = unsafe { File::from_raw_fd(id as i32) };
            slots.insert(
                id,
                Slot::Open(Handle {
                    file: ManuallyDrop::new(file),
                    stdio: true,
                    readable,
                    writable: !readable,
                    rbuf: Vec::new(),
                    rpos: 0,
                    eof: false,
                    error: false,
                }),
            );
        }
        Table { slots, next: 3 }
    }

    fn open_files(&self) -> usize {
        self.slots
            .values()
            .filter(|s| matches!(s, Slot::Open(h) if !h.stdio))
            .count()
    }
}

fn with_handle<R>(id: u64, f: impl FnOnce(&mut Handle) -> R) -> Result<R, BadHandle> {
    TABLE.with(|t| match t.borrow_mut().slots.get_mut(&id) {
        Some(Slot::Open(h)) => Ok(f(h)),
        Some(Slot::Stale) => Err(BadHandle::Stale),
        None => Err(BadHandle::Closed),
    })
}

/// Called at the start of each cell: if the open files' fds are not open in
/// this instance any more (the memory was restored into a fresh instance),
/// mark every file handle stale. One cheap host call per cell, and only when
/// files are open.
pub fn revalidate() {
    TABLE.with(|t| {
        let mut t = t.borrow_mut();
        let probe = t.slots.values().find_map(|s| match s {
            Slot::Open(h) if !h.stdio => Some(h.file.metadata()),
            _ => None,
        });
        let Some(Err(e)) = probe else { return };
        if Errno::from(e) != errno::EBADF {
            return;
        }
        for slot in t.slots.values_mut() {
            if matches!(slot, Slot::Open(h) if !h.stdio) {
                // Replacing the slot drops the Handle, but its File is in a
                // ManuallyDrop, so the dead fd number is not closed.
                *slot = Slot::Stale;
            }
        }
    });
}

/// What `fopen`'s mode string asks for.
struct Mode {
    options: OpenOptions,
    readable: bool,
    writable: bool,
}

/// Parse a C `fopen` mode: `r`, `w`, `a`, optionally followed by `+`, `b`
/// (ignored) and `x` (exclusive create). `None` when it is not one.
fn parse_mode(mode: &str) -> Option<Mode> {
    let mut chars = mode.chars();
    let first = chars.next()?;
    let (mut plus, mut excl) = (false, false);
    for c in chars {
        match c {
            '+' => plus = true,
            'b' => {}
            'x' => excl = true,
            _ => return None,
        }
    }
    let mut options = OpenOptions::new();
    let (readable, writable) = match first {
        'r' => {
            options.read(true).write(plus);
            (true, plus)
        }
        'w' => {
            options.read(plus).write(true).truncate(true);
            if excl {
                options.create_new(true);
            } else {
                options.create(true);
            }
            (plus, true)
        }
        'a' => {
            options.read(plus).append(true);
            if excl {
                options.create_new(true);
            } else {
                options.create(true);
            }
            (plus, true)
        }
        _ => return None,
    };
    Some(Mode {
        options,
        readable,
        writable,
    })
}

/// Whether `mode` is a valid `fopen` mode.
pub fn valid_mode(mode: &str) -> bool {
    parse_mode(mode).is_some()
}

/// wasi-libc's `open(2)` flag values, which `os.O_*` expose.
mod oflags {
    pub const APPEND: i32 = 0x0001;
    pub const CREAT: i32 = 0x1000;
    pub const EXCL: i32 = 0x4000;
    pub const TRUNC: i32 = 0x8000;
    pub const RDONLY: i32 = 0x0400_0000;
    pub const WRONLY: i32 = 0x1000_0000;
}

/// The `fopen` equivalent of `open(2)` flags (`os.open`).
fn flags_mode(flags: i32) -> Option<Mode> {
    let readable = flags & oflags::RDONLY != 0;
    let writable = flags & oflags::WRONLY != 0;
    if !readable && !writable {
        return None;
    }
    let mut options = OpenOptions::new();
    options.read(readable);
    if flags & oflags::APPEND != 0 {
        options.append(true);
    } else {
        options.write(writable);
    }
    if flags & oflags::EXCL != 0 && flags & oflags::CREAT != 0 {
        options.create_new(true);
    } else {
        options.create(flags & oflags::CREAT != 0);
    }
    options.truncate(flags & oflags::TRUNC != 0 && writable);
    Some(Mode {
        options,
        readable,
        writable,
    })
}

/// Open `abs` (a resolved guest path) with a C `fopen` mode. Returns the new
/// handle id.
pub fn open(abs: &str, mode: &str) -> Result<u64, Errno> {
    open_with(abs, parse_mode(mode).ok_or(errno::EINVAL)?)
}

/// Open `abs` with `open(2)` flags (`os.open`). Returns the new handle id.
pub fn open_flags(abs: &str, flags: i32) -> Result<u64, Errno> {
    open_with(abs, flags_mode(flags).ok_or(errno::EINVAL)?)
}

/// Whether `id` is open (0), unknown or closed (1), or stale (2).
pub fn state(id: u64) -> i32 {
    TABLE.with(|t| match t.borrow().slots.get(&id) {
        Some(Slot::Open(_)) => 0,
        None => 1,
        Some(Slot::Stale) => 2,
    })
}

fn open_with(abs: &str, mode: Mode) -> Result<u64, Errno> {
    let dropped = DROPPED.with(|d| std::mem::take(&mut *d.borrow_mut()));
    for id in dropped {
        close_dropped(id);
    }
    if TABLE.with(|t| t.borrow().open_files()) >= MAX_OPEN {
        return Err(errno::EMFILE);
    }
    let file = mode.options.open(abs)?;
    if file.metadata().is_ok_and(|m| m.is_dir()) && mode.writable {
        return Err(errno::EISDIR);
    }
    let handle = Handle {
        file: ManuallyDrop::new(file),
        stdio: false,
        readable: mode.readable,
        writable: mode.writable,
        rbuf: Vec::new(),
        rpos: 0,
        eof: false,
        error: false,
    };
    Ok(TABLE.with(|t| {
        let mut t = t.borrow_mut();
        let id = t.next;
        t.next += 1;
        t.slots.insert(id, Slot::Open(handle));
        id
    }))
}

/// Close a handle. Closing a stale handle just forgets it (its file is
/// already gone) and succeeds.
pub fn close(id: u64) -> Result<Result<(), Errno>, BadHandle> {
    TABLE.with(|t| close_in(&mut t.borrow_mut(), id)).map(Ok)
}

/// Close the handle of a FILE object the script no longer references (called
/// by its finalizer, which QuickJS may run whenever a value is freed). If the
/// table is busy the close waits for the next `open`.
pub fn close_dropped(id: u64) {
    let done = TABLE.with(|t| match t.try_borrow_mut() {
        Ok(mut t) => {
            let _ = close_in(&mut t, id);
            true
        }
        Err(_) => false,
    });
    if !done {
        DROPPED.with(|d| d.borrow_mut().push(id));
    }
}

fn close_in(t: &mut Table, id: u64) -> Result<(), BadHandle> {
    match t.slots.get(&id) {
        None => return Err(BadHandle::Closed),
        Some(Slot::Open(h)) if h.stdio => return Err(BadHandle::Stdio),
        _ => {}
    }
    if let Some(Slot::Open(h)) = t.slots.remove(&id) {
        // A live handle: dropping the File closes its fd. WASI's fd_close
        // has no deferred write errors to report. A stale one is just
        // forgotten: its file is already gone.
        drop(ManuallyDrop::into_inner(h.file));
    }
    Ok(())
}

impl Handle {
    /// Give back read-ahead so the fd's position is the logical one again
    /// (before writing, seeking or telling).
    fn unread(&mut self) -> Result<(), Errno> {
        let ahead = self.rbuf.len() - self.rpos;
        self.rbuf.clear();
        self.rpos = 0;
        if ahead > 0 && !self.stdio {
            self.file.seek(SeekFrom::Current(-(ahead as i64)))?;
        }
        Ok(())
    }

    /// Make sure unread bytes are buffered; `false` at end of file or error
    /// (flags set accordingly).
    fn fill(&mut self) -> bool {
        if self.rpos < self.rbuf.len() {
            return true;
        }
        if !self.readable {
            self.error = true;
            return false;
        }
        self.rbuf.clear();
        self.rpos = 0;
        self.rbuf.resize(READ_CHUNK, 0);
        let n = loop {
            match self.file.read(&mut self.rbuf) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.rbuf.clear();
                    self.error = true;
                    return false;
                }
            }
        };
        self.rbuf.truncate(n);
        if n == 0 {
            self.eof = true;
            return false;
        }
        true
    }

    /// Up to `max` bytes (everything to the end of file when `None`).
    fn read(&mut self, max: Option<usize>) -> Result<Vec<u8>, Errno> {
        let mut out = Vec::new();
        while max.is_none_or(|m| out.len() < m) {
            if !self.fill() {
                break;
            }
            let avail = &self.rbuf[self.rpos..];
            let take = max.map_or(avail.len(), |m| avail.len().min(m - out.len()));
            out.try_reserve(take).map_err(|_| errno::ENOMEM)?;
            out.extend_from_slice(&avail[..take]);
            self.rpos += take;
        }
        Ok(out)
    }

    /// The next line without its `\n`, `None` at end of file.
    fn getline(&mut self) -> Result<Option<Vec<u8>>, Errno> {
        let mut line = Vec::new();
        let mut any = false;
        while self.fill() {
            any = true;
            let avail = &self.rbuf[self.rpos..];
            if let Some(nl) = avail.iter().position(|&b| b == b'\n') {
                line.try_reserve(nl).map_err(|_| errno::ENOMEM)?;
                line.extend_from_slice(&avail[..nl]);
                self.rpos += nl + 1;
                return Ok(Some(line));
            }
            line.try_reserve(avail.len()).map_err(|_| errno::ENOMEM)?;
            line.extend_from_slice(avail);
            self.rpos = self.rbuf.len();
        }
        Ok(any.then_some(line))
    }

    fn get_byte(&mut self) -> Option<u8> {
        if !self.fill() {
            return None;
        }
        let b = self.rbuf[self.rpos];
        self.rpos += 1;
        Some(b)
    }

    fn write(&mut self, data: &[u8]) -> Result<usize, Errno> {
        if !self.writable {
            self.error = true;
            return Err(errno::EBADF);
        }
        if let Err(e) = self.unread() {
            self.error = true;
            return Err(e);
        }
        match self.file.write_all(data).and_then(|()| self.file.flush()) {
            Ok(()) => Ok(data.len()),
            Err(e) => {
                self.error = true;
                Err(e.into())
            }
        }
    }

    fn tell(&mut self) -> Result<u64, Errno> {
        if self.stdio {
            return Err(errno::ESPIPE);
        }
        let pos = self.file.stream_position()?;
        Ok(pos.saturating_sub((self.rbuf.len() - self.rpos) as u64))
    }

    fn seek(&mut self, offset: i64, whence: i32) -> Result<u64, Errno> {
        if self.stdio {
            return Err(errno::ESPIPE);
        }
        let target = match whence {
            0 => SeekFrom::Start(u64::try_from(offset).map_err(|_| errno::EINVAL)?),
            1 => {
                let ahead = (self.rbuf.len() - self.rpos) as i64;
                SeekFrom::Current(offset.checked_sub(ahead).ok_or(errno::EINVAL)?)
            }
            2 => SeekFrom::End(offset),
            _ => return Err(errno::EINVAL),
        };
        self.rbuf.clear();
        self.rpos = 0;
        let pos = self.file.seek(target)?;
        self.eof = false;
        Ok(pos)
    }
}

/// Read up to `max` bytes (to end of file when `None`).
pub fn read(id: u64, max: Option<usize>) -> Result<Result<Vec<u8>, Errno>, BadHandle> {
    with_handle(id, |h| h.read(max))
}

/// The next line without its line feed; `None` at end of file.
pub fn getline(id: u64) -> Result<Result<Option<Vec<u8>>, Errno>, BadHandle> {
    with_handle(id, |h| h.getline())
}

/// The next byte, `None` at end of file or on error.
pub fn get_byte(id: u64) -> Result<Option<u8>, BadHandle> {
    with_handle(id, |h| h.get_byte())
}

/// Write all of `data` (unbuffered: it reaches the file before the call
/// returns, so nothing waits in memory across a snapshot). Returns the byte
/// count.
pub fn write(id: u64, data: &[u8]) -> Result<Result<usize, Errno>, BadHandle> {
    with_handle(id, |h| h.write(data))
}

/// The logical position (what has been consumed, not what was read ahead).
pub fn tell(id: u64) -> Result<Result<u64, Errno>, BadHandle> {
    with_handle(id, |h| h.tell())
}

/// Seek like `fseek` (`whence`: 0 set, 1 current, 2 end); clears `eof`.
/// Returns the new position.
pub fn seek(id: u64, offset: i64, whence: i32) -> Result<Result<u64, Errno>, BadHandle> {
    with_handle(id, |h| h.seek(offset, whence))
}

/// `feof`, `ferror`.
pub fn flags(id: u64) -> Result<(bool, bool), BadHandle> {
    with_handle(id, |h| (h.eof, h.error))
}

/// `clearerr`: reset the end-of-file and error flags.
pub fn clear_flags(id: u64) -> Result<(), BadHandle> {
    with_handle(id, |h| {
        h.eof = false;
        h.error = false;
    })
}
