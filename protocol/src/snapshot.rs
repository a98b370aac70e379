//! The format of an interpreter's saved state, shared by the worker (which takes and restores
//! it) and the supervisor (which keeps it, and compacts a session's log of layers off the call
//! path: [`compact`]).
//!
//! A snapshot (a layer) is the pages of a linear memory that differ from a fresh instance of the
//! same module (or, in a log, that changed since the layer before), with the few numbers the
//! host keeps beside them: magic and version, the module's identity, the cell counter, the
//! guest clock, the memory's size, the descriptors open, the page indices, then the pages in
//! chunks of [`CHUNK_PAGES`], each an LZ4 block or, flagged, stored as it is (the per-call
//! layers, whose speed matters more than their size until they are compacted).
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

/// Why a snapshot cannot be read or restored.
#[derive(Debug, Error, PartialEq, Eq)]
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
            if len & STORED == 0 {
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

    /// Writes the pages into `memory`, which must already be `meta.memory_bytes` long.
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
        self.for_each_page(|page, bytes| {
            let at = page as usize * PAGE;
            memory[at..at + PAGE].copy_from_slice(bytes);
        })
    }

    /// Calls `each` with every page's index and bytes, in order, a chunk decompressed at a
    /// time.
    ///
    /// # Errors
    /// When a chunk does not decompress to exactly its pages (the pages before it were seen).
    pub fn for_each_page(&self, mut each: impl FnMut(u32, &[u8])) -> Result<(), SnapshotError> {
        let mut scratch = vec![0u8; CHUNK_PAGES * PAGE];
        for (pages, chunk) in self.pages.chunks(CHUNK_PAGES).zip(&self.chunks) {
            let want = pages.len() * PAGE;
            let bytes = match chunk {
                Chunk::Stored(bytes) => *bytes,
                Chunk::Compressed(block) => {
                    match lz4_flex::block::decompress_into(block, &mut scratch[..want]) {
                        Ok(n) if n == want => &scratch[..want],
                        _ => return Err(SnapshotError::Malformed("payload")),
                    }
                }
            };
            for (page, bytes) in pages.iter().zip(bytes.chunks_exact(PAGE)) {
                each(*page, bytes);
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
    /// The pages as they are: a per-call layer, replaced by the next compaction.
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

/// [`encode_framed`] with [`Packing::Stored`], handed to `emit` in parts of at most
/// `part_bytes` as they are made (`true` with the last one), so that a layer as large as the
/// memory it comes from never needs a second copy of that memory at once: only one part is
/// held. The frame's length is known before the first byte, since stored pages have a size.
///
/// # Errors
/// The first error `emit` returns; nothing more is emitted after it.
pub fn encode_framed_parts<'m, E>(
    meta: &SnapshotMeta,
    pages: &[u32],
    page_of: impl Fn(u32) -> &'m [u8],
    part_bytes: usize,
    emit: impl FnMut(Vec<u8>, bool) -> Result<(), E>,
) -> Result<(), E> {
    let len = stored_len(meta, pages);
    let part_bytes = part_bytes.max(1);
    let mut parts = Parts {
        buffer: Vec::with_capacity((8 + len).min(part_bytes)),
        part_bytes,
        emit,
        failed: None,
    };
    parts.put(&(len as u64).to_le_bytes());
    encode_into(&mut parts, meta, pages, page_of, Packing::Stored);
    if let Some(e) = parts.failed {
        return Err(e);
    }
    let last = std::mem::take(&mut parts.buffer);
    (parts.emit)(last, true)
}

/// The exact length of [`encode`]'s bytes with [`Packing::Stored`].
fn stored_len(meta: &SnapshotMeta, pages: &[u32]) -> usize {
    let descriptors = meta.descriptors.len().min(MAX_DESCRIPTORS);
    MAGIC.len()
        + 4
        + meta.module.len()
        + 3 * 8
        + 4
        + 4 * descriptors
        + 4
        + 4 * pages.len()
        + 4 * pages.len().div_ceil(CHUNK_PAGES)
        + PAGE * pages.len()
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
        layer.for_each_page(|page, bytes| match pages.get_mut(&page) {
            Some(kept) => kept.copy_from_slice(bytes),
            None => {
                pages.insert(page, bytes.into());
            }
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

    #[test]
    fn a_layer_in_parts_is_the_framed_layer_cut_at_the_part_size() {
        let memory: Vec<u8> = (0..300 * PAGE)
            .map(|i| (i / PAGE) as u8 ^ i as u8)
            .collect();
        let pages: Vec<u32> = (0..300).filter(|p| p % 3 != 1).collect();
        let page_of = |p: u32| &memory[p as usize * PAGE..(p as usize + 1) * PAGE];
        let whole = encode_framed(
            &meta(memory.len() as u64, 4),
            &pages,
            page_of,
            Packing::Stored,
        );
        for part_bytes in [1, 7, PAGE, 100_000, whole.len() - 1, whole.len(), 1 << 30] {
            let mut parts: Vec<(Vec<u8>, bool)> = Vec::new();
            let emitted = encode_framed_parts(
                &meta(memory.len() as u64, 4),
                &pages,
                page_of,
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
        let refused = encode_framed_parts(&meta(0, 1), &pages, page_of, PAGE, |_, _| {
            calls += 1;
            if calls == 3 { Err("gone") } else { Ok(()) }
        });
        assert_eq!((refused, calls), (Err("gone"), 3));
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
