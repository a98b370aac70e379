//! Snapshots of an interpreter at rest: the pages of its linear memory that differ from what a
//! fresh instance of the same module starts with, with the few numbers the host keeps beside
//! them (the format: `sandbox_protocol::snapshot`). Taken between executions (the wasm stack is
//! empty, the module's mutable globals hold their initial values, exactly what a memory image
//! relies on), restored only into a fresh instance of the same module.
//!
//! Which pages differ is asked of the kernel, not found by comparing: a page of a fresh instance
//! is either the module's initial memory, mapped copy-on-write from the module (present as a
//! file or shared page, or not present at all), or fresh zeros (not present, or the zero page).
//! A page the guest wrote is private and anonymous (or swapped out). The kernel says which is
//! which ([`watch::written_pages`]), so a snapshot reads only the pages the session changed;
//! without it every page that is not zero is taken, which is only slower and larger. After each
//! call only the pages that call wrote are looked at ([`Watch`]), and a [`Tracker`] sends those
//! whose content changed as a layer, uncompressed (the supervisor compacts its log of them).
//! A checkpoint's snapshot is compressed.
//!
//! A snapshot is guest-controlled bytes once written: [`Snapshot::parse`] checks every size and
//! index before anything is allocated or copied, and the caller checks the module identity and
//! the session's memory cap.

pub mod watch;

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

pub use sandbox_protocol::LayerKind;
use sandbox_protocol::SnapshotInfo;
pub use sandbox_protocol::snapshot::{
    Entry, PAGE, Packing, Patch, Snapshot, SnapshotError, SnapshotMeta, diff_page, framed_layer,
    parse_layers,
};
use wasmtime::{Memory, Store};

use crate::host::HostState;
use watch::{Watch, written_pages};

/// The snapshot of `memory`, whose first `base_bytes` are the module's initial memory (the rest
/// started as zeros), described by `meta`; and how many pages it carries. `sent` is the
/// memory's tracker, whose sent pages it adds to those the kernel calls written (see
/// [`watch::written_pages`]).
pub fn capture(
    memory: &[u8],
    base_bytes: usize,
    meta: &SnapshotMeta,
    sent: &Tracker,
) -> (Vec<u8>, usize) {
    let candidates = sent.with_sent(written_pages(memory), memory.len().div_ceil(PAGE));
    let pages = changed_pages(memory, base_bytes, candidates, None);
    let page_of = |page: u32| page_bytes(memory, page);
    let bytes = sandbox_protocol::snapshot::encode(meta, &pages, page_of, Packing::Compressed);
    (bytes, pages.len())
}

/// The pages `candidates` names (ascending) that differ from what a fresh instance has; with
/// a `tracker`, only those that changed since it last saw them, recording what they hold now.
fn changed_pages(
    memory: &[u8],
    base_bytes: usize,
    candidates: Vec<usize>,
    mut tracker: Option<&mut Tracker>,
) -> Vec<u32> {
    let mut pages = Vec::new();
    for index in candidates {
        let page = &memory[index * PAGE..((index + 1) * PAGE).min(memory.len())];
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
    pages
}

/// Page `page` of `memory`.
fn page_bytes(memory: &[u8], page: u32) -> &[u8] {
    let at = page as usize * PAGE;
    &memory[at..at + PAGE]
}

/// The indices of the pages `written` flags, or of all `count` pages when the kernel could not
/// say.
fn flagged(written: Option<Vec<bool>>, count: usize) -> Vec<usize> {
    match written {
        Some(flags) => (flags.iter().enumerate())
            .filter_map(|(index, w)| w.then_some(index))
            .collect(),
        None => (0..count).collect(),
    }
}

/// A hash of one page (never 0, which [`Tracker`] reads as "never sent"): XXH3, fast enough
/// to run over every written page after each execution. Not cryptographic: a guest that forges
/// a collision only keeps a page of its own session's saved state stale.
fn page_hash(page: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(page) | 1
}

/// The most pages whose last-sent bytes a [`Tracker`] keeps (2 MiB): the pages an interpreter
/// rewrites on every call are a few hundred at most.
const MAX_KEPT_PAGES: usize = 512;

/// What the pages of an interpreter's memory held when its state was last sent to the
/// supervisor, so that the state after each execution costs only the pages it changed (a
/// layer). The first layer after a reset is full: every page that differs from a fresh
/// instance; the supervisor compacts the log of layers after it (`sandbox_protocol::snapshot::
/// compact`), so no full layer is ever due again.
///
/// The pages a call's layer sends are kept as sent (up to [`MAX_KEPT_PAGES`]): those are the
/// pages the interpreter rewrites on every call (its heap's free lists, the frame it runs in,
/// counters), and each time it changes only a few bytes of them. A kept page that changed again
/// is sent as a patch of the bytes that differ ([`diff_page`]): a trivial call's layer is then a
/// few kilobytes instead of a hundred pages.
///
/// A fork server's tracker sends its woken interpreter's full layer once, as the base of the
/// workers it forks ([`Tracker::made_base`]); each worker's copy then sends its first layer
/// over that base ([`LayerKind::OverBase`]): the pages its own wake and first call changed.
#[derive(Debug)]
pub struct Tracker {
    /// Per page: the hash last sent, 0 for never (stale for a kept page, which is compared
    /// with its copy instead).
    hashes: Vec<u64>,
    /// Pages as last sent in a call's layer, by index.
    kept: HashMap<usize, Box<[u8]>>,
    /// Whether the next layer is the first (full) one.
    first: bool,
    /// Whether the next layer is the first over a fork server's base.
    over_base: bool,
    /// The last layer looked at every written page: the kernel is to watch the memory from
    /// now on ([`Tracker::watch_from_now`]).
    watch_due: bool,
    /// The kernel's record of the pages written since the last layer, when it keeps one.
    watch: Option<Watch>,
    /// The pages the last layer sent, and its kind ([`Tracker::last_changes`]).
    last_sent: (Vec<u32>, LayerKind),
}

impl Default for Tracker {
    fn default() -> Self {
        Self {
            hashes: Vec::new(),
            kept: HashMap::new(),
            first: true,
            over_base: false,
            watch_due: false,
            watch: None,
            last_sent: (Vec::new(), LayerKind::Full),
        }
    }
}

/// The pages a layer sends, and the patches among them.
#[derive(Debug, Default)]
struct Changes {
    pages: Vec<u32>,
    /// Page index to its record's place in `records`; the other pages go whole.
    patched: HashMap<u32, std::ops::Range<usize>>,
    records: Vec<u8>,
}

impl Tracker {
    /// Forgets what was sent: the next layer is full (a new interpreter, a rollback).
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// Records `memory` as sent (an interpreter just restored from the supervisor's state).
    pub fn sync(&mut self, memory: &[u8]) {
        self.kept.clear();
        self.hashes.clear();
        self.hashes.resize(memory.len().div_ceil(PAGE), 0);
        for index in flagged(written_pages(memory), self.hashes.len()) {
            let page = &memory[index * PAGE..((index + 1) * PAGE).min(memory.len())];
            self.hashes[index] = page_hash(page);
        }
        self.watch = Watch::arm(memory);
        self.first = false;
    }

    /// The interpreter's memory is another mapping now, holding what was last sent (a rollback
    /// copied it into a fresh instance): the next layer looks at every written page again.
    pub fn memory_replaced(&mut self) {
        self.watch = None;
    }

    /// Has the kernel watch `memory`, whose state the last layer sent, when that layer had to
    /// look at every written page: called once the layer's call is answered, since protecting
    /// a whole memory costs a few milliseconds (a new session's first call would wait for
    /// it otherwise). Nothing may write the memory between that layer and this call: a write
    /// then would be in neither. Without this call, the next layer looks at every written page
    /// again, which is only slower.
    pub fn watch_from_now(&mut self, memory: &[u8]) {
        if std::mem::take(&mut self.watch_due) && self.watch.is_none() {
            self.watch = Watch::arm(memory);
        }
    }

    /// The pages whose content changed between the last layer and the one before it (those it
    /// sent), when it was a layer of changes; every other page of the memory holds what it
    /// held at the layer before (a page past that memory's end held zeros). `None` after a
    /// full layer, which sends what differs from a fresh instance instead.
    pub fn last_changes(&self) -> Option<&[u32]> {
        let (pages, kind) = &self.last_sent;
        (*kind == LayerKind::Changes).then_some(pages.as_slice())
    }

    /// The full layer just taken of `memory` is a fork server's base: the copies of this
    /// tracker in the workers it forks send their first layer over it, from memories of their
    /// own (a process's userfaultfd watches only its own, so none is kept). The pages the base
    /// sent are kept as sent (up to [`MAX_KEPT_PAGES`]): a worker inherits the copies without
    /// copying them (until it changes one), and sends the pages its wake and first call
    /// change as patches against them, not whole.
    pub fn made_base(&mut self, memory: &[u8]) {
        self.over_base = true;
        self.watch = None;
        self.kept.clear();
        for &page in self.last_sent.0.iter().take(MAX_KEPT_PAGES) {
            let _ = self
                .kept
                .insert(page as usize, page_bytes(memory, page).into());
        }
    }

    /// The pages `written` flags (all `count` when the kernel could not say), and those this
    /// tracker sent.
    fn with_sent(&self, written: Option<Vec<bool>>, count: usize) -> Vec<usize> {
        let Some(mut flags) = written else {
            return (0..count).collect();
        };
        for (flag, hash) in flags.iter_mut().zip(&self.hashes) {
            *flag |= *hash != 0;
        }
        flagged(Some(flags), count)
    }

    /// The pages of `memory` that may have changed since the last layer: those the kernel saw
    /// written since then, or (without a watch) every page written since the instance began,
    /// after which the kernel is to watch it ([`Tracker::watch_from_now`]).
    fn candidates(&mut self, memory: &[u8]) -> Vec<usize> {
        self.hashes.resize(memory.len().div_ceil(PAGE), 0);
        if let Some(written) = self.watch.as_mut().and_then(|w| w.take_written(memory)) {
            return written.into_iter().flatten().collect();
        }
        let written = flagged(written_pages(memory), self.hashes.len());
        self.watch_due = true;
        written
    }

    /// The layer of the state now, and its kind.
    pub fn layer(
        &mut self,
        memory: &[u8],
        base_bytes: usize,
        meta: &SnapshotMeta,
    ) -> (Vec<u8>, LayerKind) {
        let mut layer = Vec::new();
        let kind = self.next_kind();
        let made = self.layer_in_parts(memory, base_bytes, meta, usize::MAX, |part| {
            layer.extend_from_slice(&part.data);
            Ok::<(), std::convert::Infallible>(())
        });
        let Ok(()) = made;
        (layer, kind)
    }

    /// What the next layer will be.
    fn next_kind(&self) -> LayerKind {
        if self.first {
            LayerKind::Full
        } else if self.over_base {
            LayerKind::OverBase
        } else {
            LayerKind::Changes
        }
    }

    /// The layer of the state now, handed to `emit` in [`LayerPart`]s of at most `part_bytes`
    /// as it is made: a session that filled its memory writes a layer as large as that memory,
    /// and the worker must not need a second copy of it at once (the allocation would fail
    /// under the worker's rlimits and abort it).
    ///
    /// # Errors
    /// The first error of `emit`.
    pub fn layer_in_parts<E>(
        &mut self,
        memory: &[u8],
        base_bytes: usize,
        meta: &SnapshotMeta,
        part_bytes: usize,
        mut emit: impl FnMut(LayerPart) -> Result<(), E>,
    ) -> Result<(), E> {
        let kind = self.next_kind();
        let started = Instant::now();
        let candidates = self.candidates(memory);
        let asked_us = started.elapsed().as_micros();
        let changes = self.changes(memory, base_bytes, candidates);
        self.last_sent = (changes.pages.clone(), kind);
        self.first = false;
        self.over_base = false;
        tracing::debug!(
            asked_us,
            compared_us = started.elapsed().as_micros() - asked_us,
            pages = changes.pages.len(),
            patched = changes.patched.len(),
            "state layer's pages"
        );
        // Not compressed, even the first (full) one: compressing it would cost more than the
        // call (the supervisor compresses the log when it compacts it). Framed as it is made.
        let entry_of = |page: u32| match changes.patched.get(&page) {
            Some(record) => Entry::Patch(&changes.records[record.clone()]),
            None => Entry::Whole(page_bytes(memory, page)),
        };
        sandbox_protocol::snapshot::encode_framed_parts(
            meta,
            &changes.pages,
            entry_of,
            part_bytes,
            |data, last| emit(LayerPart { data, last, kind }),
        )
    }

    /// The pages of `candidates` that changed since they were last sent: kept pages compared
    /// with their copy (and patched), the others by hash as [`changed_pages`] does; a call's
    /// layer keeps what it sends, while there is room.
    fn changes(&mut self, memory: &[u8], base_bytes: usize, candidates: Vec<usize>) -> Changes {
        let mut changes = Changes::default();
        let mut hashed = Vec::new();
        for index in candidates {
            let Some(kept) = self.kept.get_mut(&index) else {
                hashed.push(index);
                continue;
            };
            let page = &memory[index * PAGE..(index + 1) * PAGE];
            let page_index =
                u32::try_from(index).expect("a wasm32 memory has fewer than 2^32 pages");
            // One pass: the patch says whether the page changed at all, and which runs of
            // the kept copy to bring up to date.
            let start = changes.records.len();
            if diff_page(kept, page, &mut changes.records) {
                let patch = Patch::written(&changes.records[start..]);
                if patch.is_empty() {
                    changes.records.truncate(start);
                    continue;
                }
                patch.apply(kept);
                let _ = changes
                    .patched
                    .insert(page_index, start..changes.records.len());
            } else {
                kept.copy_from_slice(page);
            }
            changes.pages.push(page_index);
        }
        let whole = changed_pages(memory, base_bytes, hashed, Some(self));
        if !self.first {
            for &page in &whole {
                if self.kept.len() == MAX_KEPT_PAGES {
                    break;
                }
                let kept = page_bytes(memory, page).into();
                let _ = self.kept.insert(page as usize, kept);
            }
        }
        changes.pages.extend(whole);
        changes.pages.sort_unstable();
        changes
    }
}

/// One part of a state layer as [`Tracker::layer_in_parts`] makes it.
#[derive(Debug)]
pub struct LayerPart {
    pub data: Vec<u8>,
    /// The layer's last part.
    pub last: bool,
    pub kind: LayerKind,
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

/// Takes the snapshot of `instance`, whose memory `tracker` follows, and says what it holds.
pub fn take(mut instance: AtRest<'_>, tracker: &Tracker) -> (Vec<u8>, SnapshotInfo) {
    let started = Instant::now();
    let meta = instance.meta();
    let memory = instance.memory.data(&*instance.store);
    let (layer, pages) = capture(memory, instance.base_bytes, &meta, tracker);
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

/// The layer of `instance`'s state that `tracker` says the supervisor does not have yet,
/// handed to `emit` in parts of at most `part_bytes`.
///
/// # Errors
/// The first error of `emit`.
pub fn layer_of<E>(
    mut instance: AtRest<'_>,
    tracker: &mut Tracker,
    part_bytes: usize,
    mut emit: impl FnMut(LayerPart) -> Result<(), E>,
) -> Result<(), E> {
    let started = Instant::now();
    let meta = instance.meta();
    let memory = instance.memory.data(&*instance.store);
    let mut bytes = 0;
    let mut kind = LayerKind::Changes;
    let sent = tracker.layer_in_parts(memory, instance.base_bytes, &meta, part_bytes, |part| {
        bytes += part.data.len();
        kind = part.kind;
        emit(part)
    });
    let us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    tracing::debug!(bytes, ?kind, us, "state layer");
    sent
}

/// When the monotonic clock of an interpreter restored from `layers` must read zero.
pub fn clock_since(layers: &[Snapshot<'_>]) -> Instant {
    let elapsed = Duration::from_nanos(layers.last().map_or(0, |l| l.meta.clock_ns));
    Instant::now()
        .checked_sub(elapsed)
        .unwrap_or_else(Instant::now)
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
        let (bytes, pages) = capture(memory, 65536, &meta(len as u64), &Tracker::default());
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
        assert_eq!(full, LayerKind::Full);
        memory[3 * PAGE] ^= 1;
        memory[len - 1] ^= 1;
        let (second, full) = tracker.layer(memory, 0, &meta(len as u64));
        assert_eq!(full, LayerKind::Changes);
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

    /// A fork server's base is a full layer; the layer after it (a forked worker's first) is
    /// sent over it with only the pages changed since, and the base and it replay to the
    /// memory. The layer after that is an ordinary one.
    #[test]
    fn a_layer_over_a_base_carries_only_what_changed_since_the_base() {
        let len = 8 * 65536;
        let (mut buffer, skip) = aligned(len);
        let memory = &mut buffer[skip..skip + len];
        for (i, byte) in memory.iter_mut().enumerate() {
            *byte = (i.wrapping_mul(2_654_435_761) >> 13) as u8;
        }
        let mut tracker = Tracker::default();
        let (base, kind) = tracker.layer(memory, 0, &meta(len as u64));
        assert_eq!(kind, LayerKind::Full);
        tracker.made_base(memory);
        memory[5 * PAGE + 9] ^= 0x55;
        let (over, kind) = tracker.layer(memory, 0, &meta(len as u64));
        assert_eq!(kind, LayerKind::OverBase);
        assert!(
            over.len() < 400,
            "a patch of the base's page: {} bytes",
            over.len()
        );
        let mut log = base;
        log.extend_from_slice(&over);
        let layers = parse_layers(&log).unwrap();
        assert_eq!(
            layers[1].page_count(),
            1,
            "only the page changed since the base"
        );
        let mut fresh = vec![0u8; len];
        for layer in &layers {
            layer.write_into(&mut fresh).unwrap();
        }
        assert!(
            fresh == memory,
            "the state after the base and the layer over it"
        );
        let compacted = sandbox_protocol::snapshot::compact(&log, len as u64).expect("compacts");
        let mut from_compacted = vec![0u8; len];
        for layer in parse_layers(&compacted).unwrap() {
            layer.write_into(&mut from_compacted).unwrap();
        }
        assert!(
            from_compacted == memory,
            "the compacted log is the same state"
        );
        memory[6 * PAGE] ^= 1;
        let (_, kind) = tracker.layer(memory, 0, &meta(len as u64));
        assert_eq!(kind, LayerKind::Changes);
    }

    /// A page a call's layer sent is kept, and when a later call changes a few of its bytes
    /// only those are sent: the log still replays to the memory, and compacts to it.
    #[test]
    fn pages_that_change_again_are_sent_as_patches() {
        let len = 8 * 65536;
        let (mut buffer, skip) = aligned(len);
        let memory = &mut buffer[skip..skip + len];
        for (i, byte) in memory.iter_mut().enumerate() {
            *byte = (i.wrapping_mul(2_654_435_761) >> 13) as u8;
        }
        let mut tracker = Tracker::default();
        let (mut log, full) = tracker.layer(memory, 0, &meta(len as u64));
        assert_eq!(full, LayerKind::Full);
        let mut sizes = Vec::new();
        for call in 0..4u8 {
            memory[3 * PAGE + 17] = call;
            memory[3 * PAGE + 2000..3 * PAGE + 2010].fill(call);
            memory[90 * PAGE + usize::from(call)] ^= 0xff;
            let (layer, full) = tracker.layer(memory, 0, &meta(len as u64));
            assert_eq!(full, LayerKind::Changes);
            sizes.push(layer.len());
            log.extend_from_slice(&layer);
        }
        // The first call's layer sends both pages whole; the later ones a few runs of them.
        assert!(sizes[0] > 2 * PAGE, "{sizes:?}");
        assert!(sizes[1..].iter().all(|&size| size < 200), "{sizes:?}");
        let mut fresh = vec![0u8; len];
        for layer in parse_layers(&log).unwrap() {
            layer.write_into(&mut fresh).unwrap();
        }
        assert!(fresh == memory, "the state after every layer");
        let compacted = sandbox_protocol::snapshot::compact(&log, len as u64).unwrap();
        let mut again = vec![0u8; len];
        parse_layers(&compacted).unwrap()[0]
            .write_into(&mut again)
            .unwrap();
        assert!(again == memory, "the compacted state");
        // Restored from the supervisor's state, nothing is kept: the next change goes whole.
        tracker.sync(memory);
        memory[3 * PAGE] ^= 1;
        let (layer, _) = tracker.layer(memory, 0, &meta(len as u64));
        assert!(layer.len() > PAGE);
    }

    #[test]
    fn malformed_snapshots_are_refused_before_anything_is_copied() {
        let len = 65536;
        let (mut buffer, skip) = aligned(len);
        let memory = &mut buffer[skip..skip + len];
        memory[0] = 9;
        let (good, _) = capture(memory, len, &meta(len as u64), &Tracker::default());
        assert!(Snapshot::parse(&good).is_ok());
        assert_eq!(Snapshot::parse(b"nope").unwrap_err(), SnapshotError::Format);
        for cut in [9, 20, good.len() - 1] {
            assert!(Snapshot::parse(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = good.clone();
        longer.push(0);
        assert!(Snapshot::parse(&longer).is_err());
        // A memory size that is not whole wasm pages, or past 4 GiB.
        let size_at = 8 + 4 + meta(0).module.len() + 16; // magic, module, cell, clock
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
