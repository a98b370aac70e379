//! The format of an interpreter's saved state, shared by the worker (which takes and restores
//! it) and the supervisor (which keeps it, and compacts a session's log of layers off the call
//! path: [`compact`]).
//!
//! A snapshot (a layer) is the pages of a linear memory that differ from a fresh instance of the
//! same module (or, in a log, that changed since the layer before), with the few numbers the
//! host keeps beside them: magic and version, the module's identity, the cell counter, the
//! guest clock, the memory's size, the descriptors open, the page indices, then the pages in
//! chunks of [`CHUNK_PAGES`], each an LZ4 block (checkpoints, compacted logs), stored as it is,
//! or, flagged, *patched* (the worker's layers, whose speed matters more than their size until
//! they are compacted): each page either whole or as the byte runs in which it differs from the
//! same page in the layers before it ([`diff_page`], a word at a time). A call that changes a few bytes here and
//! there in a hundred pages (what an interpreter's heap does on every call) then costs a layer
//! of kilobytes, not of the hundred pages.
//!
//! A snapshot is guest-controlled bytes once written: [`Snapshot::parse`] checks every size and
//! index before anything is allocated or copied, and the caller checks the module identity and
//! the session's memory cap.

use std::collections::BTreeMap;

use thiserror::Error;

/// The first bytes of every snapshot, with the format's version in the last one.
const MAGIC: &[u8; 8] = b"SBXSNAP\x01";

/// The granularity of a snapshot: the host's page.
pub const PAGE: usize = 4096;

/// The largest linear memory a snapshot may describe (wasm32's whole address space).
const MAX_MEMORY: u64 = 4 << 30;

/// The most open descriptors a snapshot lists (more than a worker's own open-file limit).
const MAX_DESCRIPTORS: usize = 65_536;

/// The longest module identity.
const MAX_MODULE_ID: usize = 256;

/// Set in a chunk's length when the chunk is its pages as they are, not an LZ4 block.
const STORED: u32 = 1 << 31;

/// Set in a chunk's length when the chunk is a record per page ([`Entry`]): the page whole, or
/// a patch of the page as the layers before this one left it.
const PATCHED: u32 = 1 << 30;

/// The run count that says a patched chunk's record is the page whole.
const WHOLE: u16 = u16::MAX;

/// Why a snapshot cannot be read or restored.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum SnapshotError {
    #[error("not a snapshot of this server's format")]
    Format,
    #[error("the snapshot is cut short or malformed ({0})")]
    Malformed(&'static str),
    #[error(
        "the snapshot was taken of another interpreter build ({theirs}); this session runs {ours}"
    )]
    OtherModule { theirs: String, ours: String },
    #[error("the snapshot's memory ({need} bytes) is over this session's memory cap ({cap} bytes)")]
    OverCap { need: u64, cap: u64 },
    #[error("the snapshot's memory ({need} bytes) is smaller than a fresh instance's ({have})")]
    Smaller { need: u64, have: u64 },
}

/// What a snapshot holds besides the pages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotMeta {
    /// Names the module (and memory image) the snapshot was taken of.
    pub module: String,
    /// The interpreter's execution counter (cell number) at the time.
    pub cell: u64,
    /// The guest's monotonic clock at the time, so that it goes on from there.
    pub clock_ns: u64,
    /// The linear memory's size.
    pub memory_bytes: u64,
    /// Guest descriptors open at the time (past stdio and the preopens): held closed in the
    /// restored interpreter (see [`HostState::hold_descriptors`]).
    pub descriptors: Vec<u32>,
}

/// A parsed snapshot: what it says, its page indices, and its pages still compressed (they are
/// decompressed a chunk at a time straight into the memory they restore, so a restore never
/// holds a second copy of a large state).
#[derive(Debug)]
pub struct Snapshot<'a> {
    pub meta: SnapshotMeta,
    /// Page indices, strictly increasing, each below `memory_bytes / PAGE`.
    pages: Vec<u32>,
    /// The pages in order, [`CHUNK_PAGES`] to a chunk (the last may hold fewer), each an LZ4
    /// block or stored as it is.
    chunks: Vec<Chunk<'a>>,
}

/// Pages compressed together: large enough for LZ4 to find repeats, small enough that taking
/// or restoring a snapshot holds only this much uncompressed beside the memory.
pub const CHUNK_PAGES: usize = 256;

/// One chunk of a snapshot's pages.
#[derive(Debug, Clone, Copy)]
enum Chunk<'a> {
    Compressed(&'a [u8]),
    Stored(&'a [u8]),
    /// Records checked by [`check_records`]: every page's is whole.
    Patched(&'a [u8]),
}

/// What a layer says of one page.
#[derive(Debug, Clone, Copy)]
pub enum PageContent<'a> {
    /// The page's bytes.
    Whole(&'a [u8]),
    /// The runs in which the page differs from what the layers before left in it.
    Patch(Patch<'a>),
}

/// A page's differing runs, as [`diff_page`] wrote them and [`Snapshot::parse`] checked them:
/// ascending, apart, within the page.
#[derive(Debug, Clone, Copy)]
pub struct Patch<'a> {
    runs: u16,
    bytes: &'a [u8],
}

impl<'a> Patch<'a> {
    /// The patch of a record [`diff_page`] just wrote (made here, so not checked as a parsed
    /// one is).
    pub fn written(record: &'a [u8]) -> Self {
        Self {
            runs: u16::from_le_bytes([record[0], record[1]]),
            bytes: &record[2..],
        }
    }

    /// The page it was made against did not differ.
    pub fn is_empty(&self) -> bool {
        self.runs == 0
    }

    /// Writes the runs into `page` (a whole page).
    pub fn apply(&self, page: &mut [u8]) {
        let mut bytes = self.bytes;
        for _ in 0..self.runs {
            let at = usize::from(u16::from_le_bytes([bytes[0], bytes[1]]));
            let len = usize::from(u16::from_le_bytes([bytes[2], bytes[3]]));
            page[at..at + len].copy_from_slice(&bytes[4..4 + len]);
            bytes = &bytes[4 + len..];
        }
    }
}

/// What the worker sends of one page in a patched layer.
#[derive(Debug, Clone, Copy)]
pub enum Entry<'m> {
    /// The page's bytes.
    Whole(&'m [u8]),
    /// A record [`diff_page`] wrote.
    Patch(&'m [u8]),
}

impl Entry<'_> {
    fn len(&self) -> usize {
        match self {
            Entry::Whole(_) => 2 + PAGE,
            Entry::Patch(record) => record.len(),
        }
    }
}

/// Appends to `out` the record of how page `new` differs from `old` (both a whole page), and
/// says whether it did: not when the record would be as large as the page itself, which is
/// then better sent whole. Runs are whole 8-byte words, compared a word at a time: a run ends
/// at the first equal word, so changes closer than a word merge into one run.
pub fn diff_page(old: &[u8], new: &[u8], out: &mut Vec<u8>) -> bool {
    debug_assert!(old.len() == PAGE && new.len() == PAGE);
    let word = |page: &[u8], w: usize| -> u64 {
        u64::from_ne_bytes(page[w * 8..w * 8 + 8].try_into().expect("eight bytes"))
    };
    let differs = |w: usize| word(old, w) != word(new, w);
    // Eight words that are all equal (the common case: a call changes a few runs of a page)
    // are passed over at once, in one comparison the compiler vectorises.
    let block_differs =
        |w: usize| (w..w + 8).fold(0, |acc, w| acc | (word(old, w) ^ word(new, w))) != 0;
    let start = out.len();
    out.extend_from_slice(&[0, 0]);
    let mut runs: u16 = 0;
    let mut w = 0;
    while w < PAGE / 8 {
        if w % 8 == 0 && !block_differs(w) {
            w += 8;
            continue;
        }
        if !differs(w) {
            w += 1;
            continue;
        }
        let begin = w;
        while w < PAGE / 8 && differs(w) {
            w += 1;
        }
        let (at, end) = (begin * 8, w * 8);
        out.extend_from_slice(&(at as u16).to_le_bytes());
        out.extend_from_slice(&((end - at) as u16).to_le_bytes());
        out.extend_from_slice(&new[at..end]);
        runs += 1;
        if out.len() - start >= 2 + PAGE {
            out.truncate(start);
            return false;
        }
    }
    out[start..start + 2].copy_from_slice(&runs.to_le_bytes());
    true
}

/// Checks the records of a patched chunk of `pages` pages, which must fill it exactly.
fn check_records(mut bytes: &[u8], pages: usize) -> Result<(), SnapshotError> {
    let bad = SnapshotError::Malformed("patched chunk");
    for _ in 0..pages {
        let (count, rest) = bytes.split_first_chunk::<2>().ok_or(bad.clone())?;
        bytes = rest;
        let count = u16::from_le_bytes(*count);
        if count == WHOLE {
            bytes = bytes.get(PAGE..).ok_or(bad.clone())?;
            continue;
        }
        let mut end = 0;
        for _ in 0..count {
            let (head, rest) = bytes.split_first_chunk::<4>().ok_or(bad.clone())?;
            let at = usize::from(u16::from_le_bytes([head[0], head[1]]));
            let len = usize::from(u16::from_le_bytes([head[2], head[3]]));
            if len == 0 || at < end || at + len > PAGE {
                return Err(bad);
            }
            end = at + len;
            bytes = rest.get(len..).ok_or(bad.clone())?;
        }
    }
    if bytes.is_empty() { Ok(()) } else { Err(bad) }
}

/// The records of a checked patched chunk, one per page.
fn records(mut bytes: &[u8]) -> impl Iterator<Item = PageContent<'_>> {
    std::iter::from_fn(move || {
        let (count, rest) = bytes.split_first_chunk::<2>()?;
        let count = u16::from_le_bytes(*count);
        if count == WHOLE {
            let (page, rest) = rest.split_at(PAGE);
            bytes = rest;
            return Some(PageContent::Whole(page));
        }
        let mut len = 0;
        for _ in 0..count {
            let run = usize::from(u16::from_le_bytes([rest[len + 2], rest[len + 3]]));
            len += 4 + run;
        }
        let (runs, rest) = rest.split_at(len);
        bytes = rest;
        Some(PageContent::Patch(Patch {
            runs: count,
            bytes: runs,
        }))
    })
}

/// Reads fields off the front of a snapshot.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn take(&mut self, len: usize, what: &'static str) -> Result<&'a [u8], SnapshotError> {
        if self.0.len() < len {
            return Err(SnapshotError::Malformed(what));
        }
        let (head, rest) = self.0.split_at(len);
        self.0 = rest;
        Ok(head)
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, SnapshotError> {
        Ok(u32::from_le_bytes(
            self.take(4, what)?.try_into().expect("four bytes"),
        ))
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, SnapshotError> {
        Ok(u64::from_le_bytes(
            self.take(8, what)?.try_into().expect("eight bytes"),
        ))
    }
}

/// The most layers a log holds (the supervisor compacts a log long before).
const MAX_LAYERS: usize = 1 << 16;

/// Parses a log of layers ([`framed_layer`] each), oldest first.
///
/// # Errors
/// When any layer is malformed, or the log is cut short.
pub fn parse_layers(mut bytes: &[u8]) -> Result<Vec<Snapshot<'_>>, SnapshotError> {
    let mut layers = Vec::new();
    while !bytes.is_empty() {
        if layers.len() == MAX_LAYERS {
            return Err(SnapshotError::Malformed("too many layers"));
        }
        let mut fields = Fields(bytes);
        let len = usize::try_from(fields.u64("layer length")?)
            .map_err(|_| SnapshotError::Malformed("layer length"))?;
        layers.push(Snapshot::parse(fields.take(len, "layer")?)?);
        bytes = fields.0;
    }
    if layers.is_empty() {
        return Err(SnapshotError::Malformed("no layer"));
    }
    Ok(layers)
}

impl<'a> Snapshot<'a> {
    /// Parses `bytes`, checking every size and index (the pages are decompressed, and checked,
    /// as they are written).
    ///
    /// # Errors
    /// When `bytes` is not a well-formed snapshot.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, SnapshotError> {
        let mut fields = Fields(bytes);
        if fields
            .take(MAGIC.len(), "magic")
            .map_err(|_| SnapshotError::Format)?
            != MAGIC
        {
            return Err(SnapshotError::Format);
        }
        let module_len = fields.u32("module")? as usize;
        if module_len > MAX_MODULE_ID {
            return Err(SnapshotError::Malformed("module identity too long"));
        }
        let module = std::str::from_utf8(fields.take(module_len, "module")?)
            .map_err(|_| SnapshotError::Malformed("module identity"))?
            .to_owned();
        let cell = fields.u64("cell")?;
        let clock_ns = fields.u64("clock")?;
        let memory_bytes = fields.u64("memory size")?;
        if memory_bytes > MAX_MEMORY || !memory_bytes.is_multiple_of(65536) {
            return Err(SnapshotError::Malformed("memory size"));
        }
        let descriptor_count = fields.u32("descriptor count")? as usize;
        if descriptor_count > MAX_DESCRIPTORS {
            return Err(SnapshotError::Malformed("too many descriptors"));
        }
        let descriptors = fields
            .take(descriptor_count * 4, "descriptors")?
            .chunks_exact(4)
            .map(|raw| u32::from_le_bytes(raw.try_into().expect("four bytes")))
            .collect();
        let limit = memory_bytes / PAGE as u64;
        let count = fields.u32("page count")? as u64;
        if count > limit {
            return Err(SnapshotError::Malformed("more pages than the memory has"));
        }
        let index_bytes = fields.take(count as usize * 4, "page indices")?;
        let mut pages = Vec::with_capacity(count as usize);
        for raw in index_bytes.chunks_exact(4) {
            let page = u32::from_le_bytes(raw.try_into().expect("four bytes"));
            if u64::from(page) >= limit || pages.last().is_some_and(|last| *last >= page) {
                return Err(SnapshotError::Malformed("page indices"));
            }
            pages.push(page);
        }
        let mut chunks = Vec::with_capacity(pages.len().div_ceil(CHUNK_PAGES));
        for in_chunk in pages.chunks(CHUNK_PAGES).map(<[u32]>::len) {
            let len = fields.u32("chunk length")?;
            if len & (STORED | PATCHED) == PATCHED {
                let records = fields.take((len & !PATCHED) as usize, "chunk")?;
                check_records(records, in_chunk)?;
                chunks.push(Chunk::Patched(records));
            } else if len & STORED == 0 {
                chunks.push(Chunk::Compressed(fields.take(len as usize, "chunk")?));
            } else if (len & !STORED) as usize == in_chunk * PAGE {
                chunks.push(Chunk::Stored(fields.take(in_chunk * PAGE, "chunk")?));
            } else {
                return Err(SnapshotError::Malformed("stored chunk length"));
            }
        }
        if !fields.0.is_empty() {
            return Err(SnapshotError::Malformed("bytes after the payload"));
        }
        Ok(Self {
            meta: SnapshotMeta {
                module,
                cell,
                clock_ns,
                memory_bytes,
                descriptors,
            },
            pages,
            chunks,
        })
    }

    /// Checks that this snapshot fits a fresh instance of `module` whose memory has `have`
    /// bytes and may grow to `cap`: the same module, a memory at least as large, within the cap.
    ///
    /// # Errors
    /// The first of those that fails.
    pub fn check_fits(&self, module: &str, have: u64, cap: u64) -> Result<(), SnapshotError> {
        if self.meta.module != module {
            return Err(SnapshotError::OtherModule {
                theirs: self.meta.module.clone(),
                ours: module.to_owned(),
            });
        }
        if self.meta.memory_bytes > cap {
            return Err(SnapshotError::OverCap {
                need: self.meta.memory_bytes,
                cap,
            });
        }
        if self.meta.memory_bytes < have {
            return Err(SnapshotError::Smaller {
                need: self.meta.memory_bytes,
                have,
            });
        }
        Ok(())
    }

    /// Writes the pages into `memory`, which must already be `meta.memory_bytes` long: whole
    /// pages as they are, patches onto what the layers before left there.
    ///
    /// # Errors
    /// When a chunk does not decompress to exactly its pages (what was written before it is
    /// then in `memory`: the caller throws the instance away).
    pub fn write_into(&self, memory: &mut [u8]) -> Result<(), SnapshotError> {
        if (memory.len() as u64) < self.meta.memory_bytes {
            return Err(SnapshotError::Malformed(
                "a memory smaller than the snapshot's",
            ));
        }
        self.for_each_page(|page, content| {
            let at = page as usize * PAGE;
            let target = &mut memory[at..at + PAGE];
            match content {
                PageContent::Whole(bytes) => target.copy_from_slice(bytes),
                PageContent::Patch(patch) => patch.apply(target),
            }
            Ok(())
        })
    }

    /// Calls `each` with every page's index and content, in order, a chunk decompressed at a
    /// time.
    ///
    /// # Errors
    /// When a chunk does not decompress to exactly its pages (the pages before it were seen),
    /// or the first error of `each`.
    pub fn for_each_page(
        &self,
        mut each: impl FnMut(u32, PageContent<'_>) -> Result<(), SnapshotError>,
    ) -> Result<(), SnapshotError> {
        // Only compressed chunks need room to expand into; a patched layer (one per call) has
        // none, and a megabyte of zeroes per layer would cost it more than its pages.
        let mut scratch = Vec::new();
        for (pages, chunk) in self.pages.chunks(CHUNK_PAGES).zip(&self.chunks) {
            let want = pages.len() * PAGE;
            let bytes = match chunk {
                Chunk::Stored(bytes) => *bytes,
                Chunk::Compressed(block) => {
                    scratch.resize(want.max(scratch.len()), 0);
                    match lz4_flex::block::decompress_into(block, &mut scratch[..want]) {
                        Ok(n) if n == want => &scratch[..want],
                        _ => return Err(SnapshotError::Malformed("payload")),
                    }
                }
                Chunk::Patched(records) => {
                    for (page, content) in pages.iter().zip(self::records(records)) {
                        each(*page, content)?;
                    }
                    continue;
                }
            };
            for (page, bytes) in pages.iter().zip(bytes.chunks_exact(PAGE)) {
                each(*page, PageContent::Whole(bytes))?;
            }
        }
        Ok(())
    }

    /// How many pages it carries.
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }
}

/// `layer` as one entry of a log of layers: its length (`u64`, little-endian), then it.
pub fn framed_layer(layer: &[u8]) -> Vec<u8> {
    let mut framed = Vec::with_capacity(8 + layer.len());
    framed.extend_from_slice(&(layer.len() as u64).to_le_bytes());
    framed.extend_from_slice(layer);
    framed
}

/// How a snapshot's chunks are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packing {
    /// LZ4 blocks: what is kept for long (checkpoints, full layers, compacted logs).
    Compressed,
    /// The pages as they are (what the worker's layers were before they were patched; still
    /// read in the logs of durable sessions).
    Stored,
}

/// The snapshot described by `meta` of `pages` (ascending indices), whose bytes `page_of`
/// gives.
pub fn encode<'m>(
    meta: &SnapshotMeta,
    pages: &[u32],
    page_of: impl Fn(u32) -> &'m [u8],
    packing: Packing,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(encoded_capacity(meta, pages, packing));
    encode_into(&mut out, meta, pages, page_of, packing);
    out
}

/// [`encode`] as one entry of a log of layers, as [`framed_layer`] makes it, without copying
/// the layer to frame it.
pub fn encode_framed<'m>(
    meta: &SnapshotMeta,
    pages: &[u32],
    page_of: impl Fn(u32) -> &'m [u8],
    packing: Packing,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + encoded_capacity(meta, pages, packing));
    out.extend_from_slice(&[0; 8]);
    encode_into(&mut out, meta, pages, page_of, packing);
    let len = (out.len() - 8) as u64;
    out[..8].copy_from_slice(&len.to_le_bytes());
    out
}

/// The patched layer described by `meta` of `pages` (ascending indices), whose records
/// `entry_of` gives, as one entry of a log of layers ([`framed_layer`]'s form), handed to
/// `emit` in parts of at most `part_bytes` as they are made (`true` with the last one), so that
/// a layer as large as the memory it comes from never needs a second copy of that memory at
/// once: only one part is held. The frame's length is known before the first byte, since every
/// entry has a size.
///
/// # Errors
/// The first error `emit` returns; nothing more is emitted after it.
pub fn encode_framed_parts<'m, E>(
    meta: &SnapshotMeta,
    pages: &[u32],
    entry_of: impl Fn(u32) -> Entry<'m>,
    part_bytes: usize,
    emit: impl FnMut(Vec<u8>, bool) -> Result<(), E>,
) -> Result<(), E> {
    let chunk_lens: Vec<usize> = pages
        .chunks(CHUNK_PAGES)
        .map(|chunk| chunk.iter().map(|&page| entry_of(page).len()).sum())
        .collect();
    let len = header_len(meta, pages) + chunk_lens.iter().map(|len| 4 + len).sum::<usize>();
    let part_bytes = part_bytes.max(1);
    let mut parts = Parts {
        buffer: Vec::with_capacity((8 + len).min(part_bytes)),
        part_bytes,
        emit,
        failed: None,
    };
    parts.put(&(len as u64).to_le_bytes());
    put_header(&mut parts, meta, pages);
    for (chunk, len) in pages.chunks(CHUNK_PAGES).zip(chunk_lens) {
        parts.put(&(len as u32 | PATCHED).to_le_bytes());
        for &page in chunk {
            match entry_of(page) {
                Entry::Whole(bytes) => {
                    parts.put(&WHOLE.to_le_bytes());
                    parts.put(bytes);
                }
                Entry::Patch(record) => parts.put(record),
            }
        }
    }
    if let Some(e) = parts.failed {
        return Err(e);
    }
    let last = std::mem::take(&mut parts.buffer);
    (parts.emit)(last, true)
}

/// The length of a snapshot's fields before its chunks.
fn header_len(meta: &SnapshotMeta, pages: &[u32]) -> usize {
    let descriptors = meta.descriptors.len().min(MAX_DESCRIPTORS);
    MAGIC.len() + 4 + meta.module.len() + 3 * 8 + 4 + 4 * descriptors + 4 + 4 * pages.len()
}

/// Where [`encode_into`] writes: a buffer, or [`Parts`] handed on as they fill.
trait Sink {
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// Bytes cut into parts of `part_bytes`: a full part is emitted only when more bytes come, so
/// the last part (emitted by its owner) is never empty unless everything was.
struct Parts<F, E> {
    buffer: Vec<u8>,
    part_bytes: usize,
    emit: F,
    failed: Option<E>,
}

impl<F: FnMut(Vec<u8>, bool) -> Result<(), E>, E> Sink for Parts<F, E> {
    fn put(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() && self.failed.is_none() {
            if self.buffer.len() == self.part_bytes {
                let full = std::mem::replace(&mut self.buffer, Vec::with_capacity(self.part_bytes));
                if let Err(e) = (self.emit)(full, false) {
                    self.failed = Some(e);
                    return;
                }
            }
            let room = self.part_bytes - self.buffer.len();
            let (now, rest) = bytes.split_at(room.min(bytes.len()));
            self.buffer.extend_from_slice(now);
            bytes = rest;
        }
    }
}

/// Writes a snapshot's fields before its chunks.
fn put_header(out: &mut impl Sink, meta: &SnapshotMeta, pages: &[u32]) {
    let module = meta.module.as_bytes();
    out.put(MAGIC);
    out.put(&(module.len() as u32).to_le_bytes());
    out.put(module);
    for n in [meta.cell, meta.clock_ns, meta.memory_bytes] {
        out.put(&n.to_le_bytes());
    }
    let descriptors = &meta.descriptors[..meta.descriptors.len().min(MAX_DESCRIPTORS)];
    out.put(&(descriptors.len() as u32).to_le_bytes());
    for fd in descriptors {
        out.put(&fd.to_le_bytes());
    }
    out.put(&(pages.len() as u32).to_le_bytes());
    for page in pages {
        out.put(&page.to_le_bytes());
    }
}

/// Room for [`encode`]'s bytes: exact when stored, a guess when compressed.
fn encoded_capacity(meta: &SnapshotMeta, pages: &[u32], packing: Packing) -> usize {
    let page_bytes = match packing {
        Packing::Stored => PAGE,
        Packing::Compressed => PAGE / 2,
    };
    let chunks = pages.len().div_ceil(CHUNK_PAGES);
    64 + meta.module.len()
        + 4 * meta.descriptors.len()
        + pages.len() * (4 + page_bytes)
        + 4 * chunks
}

fn encode_into<'m>(
    out: &mut impl Sink,
    meta: &SnapshotMeta,
    pages: &[u32],
    page_of: impl Fn(u32) -> &'m [u8],
    packing: Packing,
) {
    put_header(out, meta, pages);
    let mut scratch = Vec::new();
    for chunk in pages.chunks(CHUNK_PAGES) {
        match packing {
            Packing::Stored => {
                let len = (chunk.len() * PAGE) as u32 | STORED;
                out.put(&len.to_le_bytes());
                for &page in chunk {
                    out.put(page_of(page));
                }
            }
            Packing::Compressed => {
                scratch.clear();
                for &page in chunk {
                    scratch.extend_from_slice(page_of(page));
                }
                let compressed = lz4_flex::block::compress(&scratch);
                out.put(&(compressed.len() as u32).to_le_bytes());
                out.put(&compressed);
            }
        }
    }
}

/// One full layer (framed) holding what the log of layers `log` holds: each page as its
/// newest layer has it, the newest layer's numbers, compressed. What the supervisor replaces a
/// grown log with, so that the worker never has to send a full layer again after each call.
///
/// The pages are held in memory while it works, at most `cap` bytes of them (the session's
/// memory cap: no real state is larger, and a forged log that decompresses to more is
/// refused before it is expanded).
///
/// # Errors
/// When the log is malformed or over `cap` (a log the worker could not restore either).
pub fn compact(log: &[u8], cap: u64) -> Result<Vec<u8>, SnapshotError> {
    let layers = parse_layers(log)?;
    let last = layers.last().expect("parse_layers refuses an empty log");
    let mut pages: BTreeMap<u32, Box<[u8]>> = BTreeMap::new();
    for layer in &layers {
        if layer.meta.memory_bytes > cap {
            return Err(SnapshotError::OverCap {
                need: layer.meta.memory_bytes,
                cap,
            });
        }
        if layer.meta.memory_bytes > last.meta.memory_bytes {
            return Err(SnapshotError::Malformed("a memory that shrinks"));
        }
        layer.for_each_page(|page, content| {
            match (pages.get_mut(&page), content) {
                (Some(kept), PageContent::Whole(bytes)) => kept.copy_from_slice(bytes),
                (None, PageContent::Whole(bytes)) => {
                    pages.insert(page, bytes.into());
                }
                (Some(kept), PageContent::Patch(patch)) => patch.apply(kept),
                // Only a page a layer before holds can be patched: the worker keeps no
                // page it has not sent.
                (None, PageContent::Patch(_)) => {
                    return Err(SnapshotError::Malformed("a patch of a page never sent"));
                }
            }
            Ok(())
        })?;
    }
    let indices: Vec<u32> = pages.keys().copied().collect();
    Ok(encode_framed(
        &last.meta,
        &indices,
        |page| &pages[&page],
        Packing::Compressed,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(memory_bytes: u64, cell: u64) -> SnapshotMeta {
        SnapshotMeta {
            module: "python-3.15/abc".into(),
            cell,
            clock_ns: 123,
            memory_bytes,
            descriptors: vec![5, 9],
        }
    }

    /// The layer of `memory`'s pages `pages`.
    fn layer(memory: &[u8], pages: &[u32], cell: u64, packing: Packing) -> Vec<u8> {
        let page_of = |p: u32| &memory[p as usize * PAGE..(p as usize + 1) * PAGE];
        framed_layer(&encode(
            &meta(memory.len() as u64, cell),
            pages,
            page_of,
            packing,
        ))
    }

    /// A patched layer of `pages`, each sent as a patch against `before` when it differs
    /// little, otherwise whole (and pages not in `before` whole), in one part.
    fn patched(before: Option<&[u8]>, memory: &[u8], pages: &[u32], cell: u64) -> Vec<u8> {
        let page = |m: &[u8], p: u32| -> Vec<u8> {
            m[p as usize * PAGE..(p as usize + 1) * PAGE].to_vec()
        };
        let records: BTreeMap<u32, Vec<u8>> = pages
            .iter()
            .filter_map(|&p| {
                let old = before?;
                let mut record = Vec::new();
                diff_page(&page(old, p), &page(memory, p), &mut record).then_some((p, record))
            })
            .collect();
        let entry_of = |p: u32| match records.get(&p) {
            Some(record) => Entry::Patch(record),
            None => Entry::Whole(&memory[p as usize * PAGE..(p as usize + 1) * PAGE]),
        };
        let mut out = Vec::new();
        let made = encode_framed_parts(
            &meta(memory.len() as u64, cell),
            pages,
            entry_of,
            usize::MAX,
            |part, _| {
                out.extend_from_slice(&part);
                Ok::<(), ()>(())
            },
        );
        assert!(made.is_ok());
        out
    }

    #[test]
    fn a_layer_in_parts_is_the_layer_cut_at_the_part_size() {
        let memory: Vec<u8> = (0..320 * PAGE)
            .map(|i| (i / PAGE) as u8 ^ i as u8)
            .collect();
        let pages: Vec<u32> = (0..300).filter(|p| p % 3 != 1).collect();
        let entry_of = |p: u32| Entry::Whole(&memory[p as usize * PAGE..(p as usize + 1) * PAGE]);
        let whole = patched(None, &memory, &pages, 4);
        assert_eq!(parse_layers(&whole).unwrap()[0].page_count(), pages.len());
        for part_bytes in [1, 7, PAGE, 100_000, whole.len() - 1, whole.len(), 1 << 30] {
            let mut parts: Vec<(Vec<u8>, bool)> = Vec::new();
            let emitted = encode_framed_parts(
                &meta(memory.len() as u64, 4),
                &pages,
                entry_of,
                part_bytes,
                |part, last| {
                    parts.push((part, last));
                    Ok::<(), ()>(())
                },
            );
            assert!(emitted.is_ok());
            let lasts: Vec<bool> = parts.iter().map(|(_, last)| *last).collect();
            assert_eq!(lasts.iter().filter(|l| **l).count(), 1, "{part_bytes}");
            assert_eq!(lasts.last(), Some(&true), "{part_bytes}");
            assert!(
                parts
                    .iter()
                    .all(|(p, _)| !p.is_empty() && p.len() <= part_bytes)
            );
            let joined: Vec<u8> = parts.iter().flat_map(|(p, _)| p.iter().copied()).collect();
            assert_eq!(joined, whole, "{part_bytes}");
            let inner = &parts[..parts.len() - 1];
            assert!(
                inner.iter().all(|(p, _)| p.len() == part_bytes),
                "{part_bytes}"
            );
        }
        // The first refusal stops it: nothing more is emitted, and it is the answer.
        let mut calls = 0;
        let refused = encode_framed_parts(&meta(0, 1), &pages, entry_of, PAGE, |_, _| {
            calls += 1;
            if calls == 3 { Err("gone") } else { Ok(()) }
        });
        assert_eq!((refused, calls), (Err("gone"), 3));
    }

    /// A page's record, applied to the page it was made against, gives the new page; a page
    /// changed nearly everywhere is not worth a record.
    #[test]
    fn a_page_patch_turns_the_old_page_into_the_new() {
        let old: Vec<u8> = (0..PAGE).map(|i| (i * 7 % 251) as u8).collect();
        let mut new = old.clone();
        for at in [0, 1, 9, 100, 101, 110, 2000, PAGE - 1] {
            new[at] ^= 0x55;
        }
        let mut record = vec![0xAA]; // appended after what is there
        assert!(diff_page(&old, &new, &mut record));
        assert_eq!(record[0], 0xAA);
        assert!(
            record.len() < 80,
            "a few runs, not a page: {}",
            record.len()
        );
        check_records(&record[1..], 1).unwrap();
        let Some(PageContent::Patch(patch)) = records(&record[1..]).next() else {
            panic!("a patch")
        };
        let mut page = old.clone();
        patch.apply(&mut page);
        assert_eq!(page, new);
        let mut written = old.clone();
        Patch::written(&record[1..]).apply(&mut written);
        assert_eq!(written, new, "the record as written, unparsed");
        let mut none = Vec::new();
        assert!(diff_page(&old, &old, &mut none));
        assert_eq!(none, [0, 0], "an unchanged page: no runs");
        assert!(Patch::written(&none).is_empty());
        let everywhere: Vec<u8> = old.iter().map(|b| !b).collect();
        let mut whole = vec![1, 2, 3];
        assert!(!diff_page(&old, &everywhere, &mut whole));
        assert_eq!(whole, [1, 2, 3], "nothing appended");
    }

    #[test]
    fn fuzz_page_patches() {
        bolero::check!()
            .with_type::<(Vec<(u16, u8)>, u8)>()
            .for_each(|(changes, seed)| {
                let old: Vec<u8> = (0..PAGE).map(|i| (i as u8).wrapping_mul(*seed)).collect();
                let mut new = old.clone();
                for (at, byte) in changes {
                    new[usize::from(*at) % PAGE] = *byte;
                }
                let mut record = Vec::new();
                if diff_page(&old, &new, &mut record) {
                    check_records(&record, 1).unwrap();
                    let Some(PageContent::Patch(patch)) = records(&record).next() else {
                        panic!("a patch")
                    };
                    let mut page = old.clone();
                    patch.apply(&mut page);
                    assert!(page == new);
                }
            });
    }

    /// Records that run past their page, overlap, are empty, or do not fill their chunk are
    /// refused when the layer is parsed.
    #[test]
    fn patched_chunks_are_checked_when_parsed() {
        let run = |at: u16, len: u16| {
            let mut r = Vec::new();
            r.extend_from_slice(&at.to_le_bytes());
            r.extend_from_slice(&len.to_le_bytes());
            r.extend(std::iter::repeat_n(7, usize::from(len)));
            r
        };
        let record = |runs: &[Vec<u8>]| {
            let mut r = (runs.len() as u16).to_le_bytes().to_vec();
            runs.iter().for_each(|x| r.extend_from_slice(x));
            r
        };
        assert!(check_records(&record(&[run(0, 4), run(10, 2)]), 1).is_ok());
        for bad in [
            record(&[run(4090, 8)]),           // past the page
            record(&[run(10, 4), run(12, 2)]), // overlapping
            record(&[run(10, 0)]),             // empty
            record(&[run(10, 4), run(2, 2)]),  // out of order
        ] {
            assert!(check_records(&bad, 1).is_err());
        }
        let mut trailing = record(&[run(0, 1)]);
        trailing.push(0);
        assert!(check_records(&trailing, 1).is_err());
        assert!(
            check_records(&record(&[run(0, 1)]), 2).is_err(),
            "a page short"
        );
        let mut cut = WHOLE.to_le_bytes().to_vec();
        cut.extend(vec![0; PAGE - 1]);
        assert!(check_records(&cut, 1).is_err());
    }

    fn replay(log: &[u8], len: usize) -> Vec<u8> {
        let mut memory = vec![0u8; len];
        for layer in parse_layers(log).unwrap() {
            layer.write_into(&mut memory).unwrap();
        }
        memory
    }

    /// A log of a compressed full layer and stored per-call layers (one of them after the
    /// memory grew) compacts into one compressed layer that restores the same memory, with the
    /// newest layer's numbers.
    #[test]
    fn a_log_compacts_into_one_layer_that_restores_the_same_state() {
        let len = 4 * 65536;
        let mut memory: Vec<u8> = (0..len)
            .map(|i: usize| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let mut log = layer(
            &memory[..len / 2],
            &(0..32).collect::<Vec<_>>(),
            1,
            Packing::Compressed,
        );
        memory[3 * PAGE] ^= 1;
        log.extend(layer(&memory[..len / 2], &[3], 2, Packing::Stored));
        memory[3 * PAGE] ^= 2;
        memory[40 * PAGE + 9] = 7;
        log.extend(layer(&memory, &[3, 40], 3, Packing::Stored));
        let compacted = compact(&log, len as u64).unwrap();
        assert!(matches!(
            compact(&log, len as u64 / 2),
            Err(SnapshotError::OverCap { .. })
        ));
        let layers = parse_layers(&compacted).unwrap();
        assert_eq!(layers.len(), 1);
        assert_eq!(layers[0].meta, meta(len as u64, 3));
        assert_eq!(layers[0].page_count(), 33);
        assert!(replay(&compacted, len) == replay(&log, len));
        assert!(compacted.len() < log.len());
    }

    /// Patched layers (each page whole or a patch of what the layers before left) replay and
    /// compact to the same state; a patch of a page no layer before holds is refused.
    #[test]
    fn patched_layers_replay_and_compact_to_the_same_state() {
        let len = 2 * 65536;
        let mut memory: Vec<u8> = (0..len)
            .map(|i: usize| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let all: Vec<u32> = (0..(len / PAGE) as u32).collect();
        let mut log = patched(None, &memory, &all, 1);
        let mut before = memory.clone();
        for cell in 2..6u64 {
            memory[3 * PAGE + cell as usize] ^= 1;
            memory[20 * PAGE + 100..20 * PAGE + 300].fill(cell as u8);
            let everywhere = 7 * PAGE..8 * PAGE;
            memory[everywhere]
                .iter_mut()
                .for_each(|b| *b = b.wrapping_add(1));
            let layer = patched(Some(&before), &memory, &[3, 7, 20], cell);
            assert!(layer.len() < PAGE + 2 * 600, "two patches and a whole page");
            log.extend(layer);
            before.clone_from(&memory);
        }
        assert!(replay(&log, len) == memory);
        let compacted = compact(&log, len as u64).unwrap();
        assert!(replay(&compacted, len) == memory);
        assert_eq!(
            parse_layers(&compacted).unwrap()[0].meta,
            meta(len as u64, 5)
        );
        // Page 3 patched over a log that never held it.
        let orphan = patched(Some(&before), &memory, &[3], 9);
        let only_page_4 = patched(None, &memory, &[4], 1);
        let mut forged = only_page_4;
        forged.extend(orphan);
        assert_eq!(
            compact(&forged, len as u64).unwrap_err(),
            SnapshotError::Malformed("a patch of a page never sent")
        );
    }

    #[test]
    fn stored_chunks_must_hold_exactly_their_pages() {
        let memory = vec![1u8; 65536];
        let good = layer(&memory, &[0, 1], 1, Packing::Stored);
        let bytes = &good[8..];
        assert!(Snapshot::parse(bytes).is_ok());
        // The chunk's length field sits right before its two pages.
        let at = bytes.len() - 2 * PAGE - 4;
        let mut forged = bytes.to_vec();
        forged[at..at + 4].copy_from_slice(&(PAGE as u32 | STORED).to_le_bytes());
        assert!(Snapshot::parse(&forged).is_err());
        assert!(compact(b"\x04\0\0\0\0\0\0\0nope", 1 << 30).is_err());
    }

    #[test]
    fn fuzz_compaction() {
        bolero::check!().for_each(|bytes: &[u8]| {
            let _ = compact(bytes, 1 << 24);
        });
    }
}
