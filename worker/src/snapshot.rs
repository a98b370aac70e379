//! Snapshots of an interpreter at rest: the pages of its linear memory that differ from what a
//! fresh instance of the same module starts with, compressed, with the few numbers the host
//! keeps beside them. Taken between executions (the wasm stack is empty, the module's mutable
//! globals hold their initial values, exactly what a memory image relies on), restored only into
//! a fresh instance of the same module.
//!
//! Which pages differ is asked of the kernel, not found by comparing: a page of a fresh instance
//! is either the module's initial memory, mapped copy-on-write from the module (present as a
//! file or shared page, or not present at all), or fresh zeros (not present). A page the guest
//! wrote is private and anonymous (or swapped out). `/proc/self/pagemap` says which is which for
//! every page of the memory at eight bytes a page, so a snapshot reads only the pages the
//! session changed. It is opened before the jail ([`open_pagemap`]); without it every page that
//! is not zero is taken, which is only slower and larger.
//!
//! A snapshot is guest-controlled bytes once written: [`Snapshot::parse`] checks every size and
//! index before anything is allocated or copied, and the caller checks the module identity and
//! the session's memory cap.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sandbox_protocol::SnapshotInfo;
use thiserror::Error;
use wasmtime::{Memory, Store};

use crate::host::HostState;

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
    /// block.
    chunks: Vec<&'a [u8]>,
}

/// Pages compressed together: large enough for LZ4 to find repeats, small enough that taking
/// or restoring a snapshot holds only this much uncompressed beside the memory.
const CHUNK_PAGES: usize = 256;

/// `/proc/self/pagemap`, opened before the jail hides `/proc` (see [`open_pagemap`]).
static PAGEMAP: Mutex<Option<File>> = Mutex::new(None);

/// Opens this process's `/proc/self/pagemap` for later snapshots: called by a worker before
/// it enters its jail (a forked worker calls it itself: the file names the process that opened
/// it, and replaces one it may have inherited). Without it snapshots take every page that is
/// not zero.
pub fn open_pagemap() {
    let opened = File::open("/proc/self/pagemap")
        .inspect_err(
            |e| tracing::debug!(error = %e, "no pagemap: snapshots take every non-zero page"),
        )
        .ok();
    *PAGEMAP.lock().unwrap_or_else(|e| e.into_inner()) = opened;
}

/// Pagemap bits (see the kernel's `Documentation/admin-guide/mm/pagemap.rst`).
const PM_PRESENT: u64 = 1 << 63;
const PM_SWAPPED: u64 = 1 << 62;
const PM_FILE_OR_SHARED: u64 = 1 << 61;

/// For each page of `memory`, whether it may differ from a fresh instance's: private anonymous
/// or swapped out. `None` when the kernel cannot say.
fn written_pages(memory: &[u8]) -> Option<Vec<bool>> {
    let pagemap = PAGEMAP.lock().unwrap_or_else(|e| e.into_inner());
    let file = pagemap.as_ref()?;
    let start = memory.as_ptr() as usize;
    if !start.is_multiple_of(PAGE) {
        return None;
    }
    let count = memory.len().div_ceil(PAGE);
    let mut raw = vec![0u8; count * 8];
    let offset = (start / PAGE) as u64 * 8;
    file.read_exact_at(&mut raw, offset).ok()?;
    Some(
        raw.chunks_exact(8)
            .map(|entry| {
                let bits = u64::from_le_bytes(entry.try_into().expect("eight bytes"));
                bits & PM_SWAPPED != 0 || (bits & PM_PRESENT != 0 && bits & PM_FILE_OR_SHARED == 0)
            })
            .collect(),
    )
}

/// The snapshot of `memory`, whose first `base_bytes` are the module's initial memory (the rest
/// started as zeros), described by `meta`; and how many pages it carries.
pub fn capture(memory: &[u8], base_bytes: usize, meta: &SnapshotMeta) -> (Vec<u8>, usize) {
    capture_since(memory, base_bytes, meta, None)
}

/// [`capture`] of the pages that changed since `tracker` last saw them (all of them when it
/// never did), recording what they hold now.
fn capture_since(
    memory: &[u8],
    base_bytes: usize,
    meta: &SnapshotMeta,
    mut tracker: Option<&mut Tracker>,
) -> (Vec<u8>, usize) {
    let written = written_pages(memory);
    if let Some(tracker) = tracker.as_deref_mut() {
        tracker.hashes.resize(memory.len().div_ceil(PAGE), 0);
    }
    let mut pages = Vec::new();
    for (index, page) in memory.chunks(PAGE).enumerate() {
        if !written.as_ref().is_none_or(|w| w[index]) {
            continue;
        }
        let hash = tracker.as_deref_mut().map(|tracker| {
            let hash = page_hash(page);
            let seen = std::mem::replace(&mut tracker.hashes[index], hash);
            (hash, seen)
        });
        if hash.is_some_and(|(hash, seen)| hash == seen) {
            continue; // as it was when last sent
        }
        // A zero page past the initial memory is what a fresh instance has there too.
        let never_sent = hash.is_none_or(|(_, seen)| seen == 0);
        if never_sent && index * PAGE >= base_bytes && page.iter().all(|b| *b == 0) {
            continue;
        }
        pages.push(u32::try_from(index).expect("a wasm32 memory has fewer than 2^32 pages"));
    }
    let module = meta.module.as_bytes();
    let mut out = Vec::with_capacity(64 + module.len() + pages.len() * (4 + PAGE / 2));
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(module.len() as u32).to_le_bytes());
    out.extend_from_slice(module);
    for n in [meta.cell, meta.clock_ns, meta.memory_bytes] {
        out.extend_from_slice(&n.to_le_bytes());
    }
    let descriptors = &meta.descriptors[..meta.descriptors.len().min(MAX_DESCRIPTORS)];
    out.extend_from_slice(&(descriptors.len() as u32).to_le_bytes());
    for fd in descriptors {
        out.extend_from_slice(&fd.to_le_bytes());
    }
    out.extend_from_slice(&(pages.len() as u32).to_le_bytes());
    for page in &pages {
        out.extend_from_slice(&page.to_le_bytes());
    }
    let mut scratch = Vec::with_capacity(CHUNK_PAGES * PAGE);
    for chunk in pages.chunks(CHUNK_PAGES) {
        scratch.clear();
        for &page in chunk {
            let at = page as usize * PAGE;
            scratch.extend_from_slice(&memory[at..at + PAGE]);
        }
        let compressed = lz4_flex::block::compress(&scratch);
        out.extend_from_slice(&(compressed.len() as u32).to_le_bytes());
        out.extend_from_slice(&compressed);
    }
    (out, pages.len())
}

/// A hash of one page (never 0, which [`Tracker`] reads as "never sent"): XXH3, fast enough
/// to run over every written page after each execution. Not cryptographic: a guest that forges
/// a collision only keeps a page of its own session's saved state stale.
fn page_hash(page: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(page) | 1
}

/// What the pages of an interpreter's memory held when its state was last sent to the
/// supervisor, so that the state after each execution costs only the pages it changed (a
/// layer). The first layer after a reset is full: every page that differs from a fresh
/// instance. Once the layers sent since then outweigh it, the next is full again, so the
/// supervisor's log of them stays within about twice the state.
#[derive(Debug, Default)]
pub struct Tracker {
    /// Per page: the hash last sent, 0 for never.
    hashes: Vec<u64>,
    /// Bytes of the last full layer, and of the layers sent since.
    last_full: u64,
    since_full: u64,
}

/// The least a log of layers may grow to before a full one replaces it.
const MIN_LOG_BYTES: u64 = 4 << 20;

impl Tracker {
    /// Forgets what was sent: the next layer is full (a new interpreter, a rollback).
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// Records `memory` as sent (an interpreter just restored from the supervisor's state).
    pub fn sync(&mut self, memory: &[u8]) {
        self.hashes.clear();
        self.hashes.resize(memory.len().div_ceil(PAGE), 0);
        let written = written_pages(memory);
        for (index, page) in memory.chunks(PAGE).enumerate() {
            if written.as_ref().is_none_or(|w| w[index]) {
                self.hashes[index] = page_hash(page);
            }
        }
        self.since_full = 0;
        self.last_full = MIN_LOG_BYTES;
    }

    /// The layer of the state now, and whether it is full (it then replaces every layer
    /// before it).
    pub fn layer(
        &mut self,
        memory: &[u8],
        base_bytes: usize,
        meta: &SnapshotMeta,
    ) -> (Vec<u8>, bool) {
        if self.since_full > self.last_full.max(MIN_LOG_BYTES) {
            self.reset();
        }
        let full = self.hashes.is_empty();
        let (layer, _) = capture_since(memory, base_bytes, meta, Some(self));
        let framed = framed_layer(&layer);
        if full {
            self.last_full = framed.len() as u64;
            self.since_full = 0;
        } else {
            self.since_full += framed.len() as u64;
        }
        (framed, full)
    }
}

/// `layer` as one entry of a log of layers: its length (`u64`, little-endian), then it.
pub fn framed_layer(layer: &[u8]) -> Vec<u8> {
    let mut framed = Vec::with_capacity(8 + layer.len());
    framed.extend_from_slice(&(layer.len() as u64).to_le_bytes());
    framed.extend_from_slice(layer);
    framed
}

/// Names what a fresh instance's memory is made of, for [`Snapshot::check_fits`]: the wasm
/// (`wasm_sha256`) alone for a module's own initial memory, or the memory image's file too
/// (`image`: its name, size and time, which change whenever the image is made again).
pub fn module_identity(wasm_sha256: &str, image: Option<&Path>) -> String {
    let wasm = wasm_sha256.get(..16).unwrap_or(wasm_sha256);
    let Some(image) = image else {
        return format!("wasm:{wasm}");
    };
    let name = image.file_name().map(|n| n.to_string_lossy().into_owned());
    let stamp = std::fs::metadata(image).ok().map(|m| {
        let modified = (m.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        format!("{}:{modified}", m.len())
    });
    format!(
        "wasm:{wasm}:image:{}:{}",
        name.unwrap_or_default(),
        stamp.unwrap_or_default()
    )
}

/// An instance at rest, as a snapshot sees it.
pub struct AtRest<'a> {
    pub store: &'a mut Store<HostState>,
    pub memory: Memory,
    /// The size of a fresh instance's memory (what the module starts with).
    pub base_bytes: usize,
    pub module: &'a str,
    pub cell: u64,
    /// The first guest descriptor past stdio and the preopened directories.
    pub first_free: u32,
}

impl AtRest<'_> {
    /// What a snapshot of the instance says besides its pages.
    fn meta(&mut self) -> SnapshotMeta {
        let descriptors = self.store.data_mut().open_descriptors(self.first_free);
        SnapshotMeta {
            module: self.module.to_owned(),
            cell: self.cell,
            clock_ns: self.store.data().clock_ns(),
            memory_bytes: self.memory.data_size(&*self.store) as u64,
            descriptors,
        }
    }
}

/// Takes the snapshot of `instance` and says what it holds.
pub fn take(mut instance: AtRest<'_>) -> (Vec<u8>, SnapshotInfo) {
    let started = Instant::now();
    let meta = instance.meta();
    let memory = instance.memory.data(&*instance.store);
    let (layer, pages) = capture(memory, instance.base_bytes, &meta);
    let bytes = framed_layer(&layer);
    let info = SnapshotInfo {
        bytes: bytes.len() as u64,
        memory_bytes: meta.memory_bytes,
        changed_bytes: (pages * PAGE) as u64,
        took_us: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
        open_descriptors: meta.descriptors,
    };
    tracing::debug!(?info, "snapshot taken");
    (bytes, info)
}

/// Writes `layers` (a full state and the changes after it, oldest first) into the fresh instance
/// of `module` in `store`, growing its memory (through the session's limiter) to the last
/// layer's size first, and holds the descriptors the last one lists closed.
///
/// # Errors
/// When a layer is of another module, past the memory cap, or the memory cannot grow.
pub fn restore_into(
    layers: &[Snapshot<'_>],
    store: &mut Store<HostState>,
    memory: Memory,
    module: &str,
    cap: usize,
) -> wasmtime::Result<()> {
    let Some(last) = layers.last() else {
        return Err(SnapshotError::Malformed("no layer").into());
    };
    let have = memory.data_size(&*store) as u64;
    for layer in layers {
        layer.check_fits(module, have, cap as u64)?;
        if layer.meta.memory_bytes > last.meta.memory_bytes {
            return Err(SnapshotError::Malformed("a memory that shrinks").into());
        }
    }
    let grow = (last.meta.memory_bytes - have) / 65536;
    if grow > 0 {
        memory.grow(&mut *store, grow)?;
    }
    for layer in layers {
        layer.write_into(memory.data_mut(&mut *store))?;
    }
    let unheld = store.data_mut().hold_descriptors(&last.meta.descriptors);
    if !unheld.is_empty() {
        tracing::warn!(
            ?unheld,
            "descriptors of the snapshot that could not be held closed"
        );
    }
    Ok(())
}

/// The layer of `instance`'s state that `tracker` says the supervisor does not have yet, and
/// whether it is full.
pub fn layer_of(mut instance: AtRest<'_>, tracker: &mut Tracker) -> (Vec<u8>, bool) {
    let started = Instant::now();
    let meta = instance.meta();
    let memory = instance.memory.data(&*instance.store);
    let (layer, full) = tracker.layer(memory, instance.base_bytes, &meta);
    let us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    tracing::debug!(bytes = layer.len(), full, us, "state layer");
    (layer, full)
}

/// When the monotonic clock of an interpreter restored from `layers` must read zero.
pub fn clock_since(layers: &[Snapshot<'_>]) -> Instant {
    let elapsed = Duration::from_nanos(layers.last().map_or(0, |l| l.meta.clock_ns));
    Instant::now()
        .checked_sub(elapsed)
        .unwrap_or_else(Instant::now)
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

/// The most layers a log holds (a full one is sent at least every few megabytes).
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
        for _ in 0..pages.len().div_ceil(CHUNK_PAGES) {
            let len = fields.u32("chunk length")? as usize;
            chunks.push(fields.take(len, "chunk")?);
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
        let mut scratch = vec![0u8; CHUNK_PAGES * PAGE];
        for (pages, chunk) in self.pages.chunks(CHUNK_PAGES).zip(&self.chunks) {
            let want = pages.len() * PAGE;
            match lz4_flex::block::decompress_into(chunk, &mut scratch[..want]) {
                Ok(n) if n == want => {}
                _ => return Err(SnapshotError::Malformed("payload")),
            }
            for (page, bytes) in pages.iter().zip(scratch.chunks_exact(PAGE)) {
                let at = *page as usize * PAGE;
                memory[at..at + PAGE].copy_from_slice(bytes);
            }
        }
        Ok(())
    }

    /// How many pages it carries.
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(memory_bytes: u64) -> SnapshotMeta {
        SnapshotMeta {
            module: "python-3.15/abc".into(),
            cell: 7,
            clock_ns: 123,
            memory_bytes,
            descriptors: vec![5, 9],
        }
    }

    /// A page-aligned buffer of `len` bytes (a Vec's own alignment is not a page's).
    fn aligned(len: usize) -> (Vec<u8>, usize) {
        let buffer = vec![0u8; len + PAGE];
        let skip = buffer.as_ptr().align_offset(PAGE);
        (buffer, skip)
    }

    #[test]
    fn a_snapshot_round_trips_and_carries_the_written_pages_only() {
        let len = 4 * 65536;
        let (mut buffer, skip) = aligned(len);
        let memory = &mut buffer[skip..skip + len];
        memory[10] = 1;
        memory[5 * PAGE + 3] = 2;
        memory[len - 1] = 3;
        let (bytes, pages) = capture(memory, 65536, &meta(len as u64));
        let snapshot = Snapshot::parse(&bytes).unwrap();
        assert_eq!(snapshot.meta, meta(len as u64));
        // Zero pages past the initial memory are left out, whatever the kernel says.
        assert!(snapshot.page_count() >= 3 && snapshot.page_count() <= 17);
        assert_eq!(snapshot.page_count(), pages);
        let mut fresh = vec![0u8; len];
        snapshot.write_into(&mut fresh).unwrap();
        assert_eq!(fresh, memory);
        assert!(
            snapshot
                .check_fits("python-3.15/abc", 65536, len as u64)
                .is_ok()
        );
        assert!(matches!(
            snapshot.check_fits("python-3.15/other", 65536, len as u64),
            Err(SnapshotError::OtherModule { .. })
        ));
        assert!(matches!(
            snapshot.check_fits("python-3.15/abc", 65536, 65536),
            Err(SnapshotError::OverCap { .. })
        ));
        assert!(matches!(
            snapshot.check_fits("python-3.15/abc", 8 * 65536, 1 << 30),
            Err(SnapshotError::Smaller { .. })
        ));
    }

    /// A state of many chunks (and a last, shorter one) comes back byte for byte, and the
    /// tracker then sends only the pages that change.
    #[test]
    fn large_states_round_trip_in_chunks_and_layers_carry_only_changes() {
        let len = 40 * 65536;
        let (mut buffer, skip) = aligned(len);
        let memory = &mut buffer[skip..skip + len];
        for (i, byte) in memory.iter_mut().enumerate() {
            *byte = (i.wrapping_mul(2_654_435_761) >> 13) as u8;
        }
        let mut tracker = Tracker::default();
        let (first, full) = tracker.layer(memory, 0, &meta(len as u64));
        assert!(full);
        memory[3 * PAGE] ^= 1;
        memory[len - 1] ^= 1;
        let (second, full) = tracker.layer(memory, 0, &meta(len as u64));
        assert!(!full);
        let mut log = first;
        log.extend_from_slice(&second);
        let layers = parse_layers(&log).unwrap();
        assert_eq!(layers.len(), 2);
        assert_eq!(layers[1].page_count(), 2, "only the two pages changed");
        let mut fresh = vec![0u8; len];
        for layer in &layers {
            layer.write_into(&mut fresh).unwrap();
        }
        assert!(fresh == memory, "the state after both layers");
    }

    #[test]
    fn the_kernel_tells_written_pages_from_untouched_ones() {
        open_pagemap();
        let len = 16 * PAGE;
        // SAFETY: a fresh private anonymous mapping, unmapped below; nothing else refers to it.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED);
        // SAFETY: the mapping is `len` bytes, readable and writable, and ours alone.
        let memory = unsafe { std::slice::from_raw_parts_mut(base.cast::<u8>(), len) };
        memory[3 * PAGE + 1] = 1;
        let written = written_pages(memory);
        // SAFETY: the mapping made above, no longer borrowed.
        unsafe { libc::munmap(base, len) };
        let Some(written) = written else {
            return; // no pagemap here: snapshots compare instead
        };
        assert_eq!(written.len(), 16);
        assert!(written[3], "the written page");
        assert!(!written[0] && !written[15], "pages never touched");
    }

    #[test]
    fn malformed_snapshots_are_refused_before_anything_is_copied() {
        let len = 65536;
        let (mut buffer, skip) = aligned(len);
        let memory = &mut buffer[skip..skip + len];
        memory[0] = 9;
        let (good, _) = capture(memory, len, &meta(len as u64));
        assert!(Snapshot::parse(&good).is_ok());
        assert_eq!(Snapshot::parse(b"nope").unwrap_err(), SnapshotError::Format);
        for cut in [9, 20, good.len() - 1] {
            assert!(Snapshot::parse(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = good.clone();
        longer.push(0);
        assert!(Snapshot::parse(&longer).is_err());
        // A memory size that is not whole wasm pages, or past 4 GiB.
        let size_at = MAGIC.len() + 4 + meta(0).module.len() + 16;
        let index_at = size_at + 8 + 4 + 2 * 4 + 4;
        for bad in [1u64, 5 << 30] {
            let mut forged = good.clone();
            forged[size_at..size_at + 8].copy_from_slice(&bad.to_le_bytes());
            assert!(Snapshot::parse(&forged).is_err(), "{bad}");
        }
        // A page index past the memory.
        let mut forged = good.clone();
        forged[index_at..index_at + 4].copy_from_slice(&1000u32.to_le_bytes());
        assert!(Snapshot::parse(&forged).is_err());
        // A corrupt payload parses, and is refused as it is written.
        let mut forged = good;
        let last = forged.len() - 1;
        forged[last] ^= 0xff;
        forged[last - 1] ^= 0x5a;
        if let Ok(snapshot) = Snapshot::parse(&forged) {
            let mut fresh = vec![0u8; len];
            let _ = snapshot.write_into(&mut fresh);
        }
    }

    #[test]
    fn fuzz_snapshot_parser() {
        bolero::check!().for_each(|bytes: &[u8]| {
            let _ = Snapshot::parse(bytes);
        });
    }
}
