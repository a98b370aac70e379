//! A memory image of an interpreter: the module it ran, written back with the memory it had at
//! a moment when its wasm stack was empty (after a `turn` returned), so that a new instance
//! starts there instead of starting the interpreter again.
//!
//! The rewrite touches two sections and copies every other one byte for byte:
//! - the memory section: the memory's minimum grows to the image's size;
//! - the data section: the module's own active segments are emptied (the image holds what they
//!   wrote, and what the program made of it), passive ones are kept (code may still
//!   `memory.init` them by index), and one active segment per run of non-zero pages of the
//!   image follows them. The data count section, when there is one, follows suit.
//!
//! Wasmtime maps such a module's initial memory copy-on-write from its `.cwasm`, so every worker
//! started from the image shares its pages until it writes them.
//!
//! What the image cannot carry is the host's side: the WASI descriptors (an instance started
//! from it must be given the same preopens, in the same order, as the one it was taken from)
//! and the module's mutable globals, which must hold their initial values at that moment (true
//! of a C program's stack pointer once its calls have returned; the caller checks it by running
//! the image).

use thiserror::Error;

/// The version of what an image is made of and how: part of its cache key, raised when either
/// changes.
pub const FORMAT: u32 = 2;

/// The WebAssembly page.
const PAGE: usize = 65536;
/// The granularity of the image's segments: runs of pages of this size that are not all zero.
/// Smaller than a wasm page, so mostly-empty pages cost little in the module.
const CHUNK: usize = 4096;

const SECTION_CUSTOM: u8 = 0;
const SECTION_MEMORY: u8 = 5;
const SECTION_CODE: u8 = 10;
const SECTION_DATA: u8 = 11;
const SECTION_DATA_COUNT: u8 = 12;

/// Why a module cannot be imaged.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ImageError {
    #[error("not a WebAssembly module (bad header)")]
    Header,
    #[error("the module is cut short or malformed at byte {0}")]
    Malformed(usize),
    #[error("the module must define exactly one memory of its own (it has {0})")]
    Memories(u32),
    #[error("a 64-bit or shared memory cannot be imaged")]
    MemoryKind,
    #[error("the image ({image} bytes) is not a whole number of pages")]
    NotPages { image: usize },
    #[error("the image ({pages} pages) is past the memory's maximum ({max} pages)")]
    PastMaximum { pages: u64, max: u64 },
    #[error("a data segment of an unknown kind ({0})")]
    SegmentKind(u32),
}

/// `wasm` rewritten to start with `memory` as its memory 0 (see the module docs).
///
/// # Errors
/// When `wasm` is not a module this rewrite understands, or `memory` does not fit it.
pub fn with_memory_image(wasm: &[u8], memory: &[u8]) -> Result<Vec<u8>, ImageError> {
    if wasm.get(..8) != Some(b"\0asm\x01\0\0\0") {
        return Err(ImageError::Header);
    }
    if !memory.len().is_multiple_of(PAGE) {
        return Err(ImageError::NotPages {
            image: memory.len(),
        });
    }
    let pages = (memory.len() / PAGE) as u64;
    let image_segments = image_segments(memory);
    let sections = sections(wasm)?;
    let has_data = sections.iter().any(|(id, _)| *id == SECTION_DATA);
    let mut out = Vec::with_capacity(wasm.len() + memory.len() / 2);
    out.extend_from_slice(&wasm[..8]);
    for (id, body) in sections {
        match id {
            SECTION_MEMORY => push_section(&mut out, id, &grown_memory(body, pages)?),
            SECTION_DATA_COUNT => {
                let count = Reader { bytes: body, at: 0 }.u32()? + image_segments.len() as u32;
                push_section(&mut out, id, &leb_u32(count));
            }
            SECTION_DATA => {
                push_section(
                    &mut out,
                    id,
                    &rewritten_data(body, memory, &image_segments)?,
                );
            }
            // The name section (14 MB of function names in the scientific CPython) only names
            // frames in backtraces, which no report shows; every worker would pay for
            // deserialising its table.
            SECTION_CUSTOM if custom_section_name(body) == Some(b"name".as_slice()) => {}
            _ => {
                push_section(&mut out, id, body);
                // The data section follows the code section; a module without one gets it
                // there.
                if id == SECTION_CODE && !has_data {
                    let body = rewritten_data(&leb_u32(0), memory, &image_segments)?;
                    push_section(&mut out, SECTION_DATA, &body);
                }
            }
        }
    }
    Ok(out)
}

/// The sections of a module, in order: (id, body).
fn sections(wasm: &[u8]) -> Result<Vec<(u8, &[u8])>, ImageError> {
    let mut reader = Reader { bytes: wasm, at: 8 };
    let mut sections = Vec::new();
    while reader.at < wasm.len() {
        let id = reader.byte()?;
        let size = reader.u32()? as usize;
        sections.push((id, reader.take(size)?));
    }
    Ok(sections)
}

/// The memory section with its one memory's minimum raised to `pages`.
fn grown_memory(body: &[u8], pages: u64) -> Result<Vec<u8>, ImageError> {
    let mut reader = Reader { bytes: body, at: 0 };
    let count = reader.u32()?;
    if count != 1 {
        return Err(ImageError::Memories(count));
    }
    let flags = reader.byte()?;
    if flags & !1 != 0 {
        return Err(ImageError::MemoryKind);
    }
    let min = u64::from(reader.u32()?);
    let max = if flags & 1 == 1 {
        Some(u64::from(reader.u32()?))
    } else {
        None
    };
    if let Some(max) = max
        && pages > max
    {
        return Err(ImageError::PastMaximum { pages, max });
    }
    let mut out = leb_u32(1);
    out.push(flags);
    out.extend(leb_u32(min.max(pages) as u32));
    if let Some(max) = max {
        out.extend(leb_u32(max as u32));
    }
    Ok(out)
}

/// The data section: the module's segments (active ones emptied), then the image's.
fn rewritten_data(
    body: &[u8],
    memory: &[u8],
    image: &[(usize, usize)],
) -> Result<Vec<u8>, ImageError> {
    let mut reader = Reader { bytes: body, at: 0 };
    let count = reader.u32()?;
    let mut out = leb_u32(count + image.len() as u32);
    for _ in 0..count {
        let start = reader.at;
        let kind = reader.u32()?;
        match kind {
            // Active, memory 0: its offset expression, then its bytes (emptied).
            0 => {
                let offset = reader.const_expr()?;
                reader.bytes_vec()?;
                out.extend(leb_u32(0));
                out.extend_from_slice(offset);
                out.extend(leb_u32(0));
            }
            // Passive: kept as it is.
            1 => {
                reader.bytes_vec()?;
                out.extend_from_slice(&body[start..reader.at]);
            }
            // Active with an explicit memory index (memory 0 is the only one).
            2 => {
                let memory_index = reader.u32()?;
                let offset = reader.const_expr()?;
                reader.bytes_vec()?;
                out.extend(leb_u32(2));
                out.extend(leb_u32(memory_index));
                out.extend_from_slice(offset);
                out.extend(leb_u32(0));
            }
            other => return Err(ImageError::SegmentKind(other)),
        }
    }
    for &(start, end) in image {
        out.extend(leb_u32(0));
        out.push(0x41); // i32.const
        out.extend(leb_i32(start as i32));
        out.push(0x0b); // end
        out.extend(leb_u32((end - start) as u32));
        out.extend_from_slice(&memory[start..end]);
    }
    Ok(out)
}

/// Byte ranges of `memory` made of [`CHUNK`]s that are not all zero, adjacent chunks merged.
fn image_segments(memory: &[u8]) -> Vec<(usize, usize)> {
    let mut segments: Vec<(usize, usize)> = Vec::new();
    for (index, chunk) in memory.chunks(CHUNK).enumerate() {
        if chunk.iter().all(|&b| b == 0) {
            continue;
        }
        let start = index * CHUNK;
        let end = start + chunk.len();
        match segments.last_mut() {
            Some(last) if last.1 == start => last.1 = end,
            _ => segments.push((start, end)),
        }
    }
    segments
}

/// The name of a custom section, from its body.
fn custom_section_name(body: &[u8]) -> Option<&[u8]> {
    let mut reader = Reader { bytes: body, at: 0 };
    let len = reader.u32().ok()? as usize;
    reader.take(len).ok()
}

fn push_section(out: &mut Vec<u8>, id: u8, body: &[u8]) {
    out.push(id);
    out.extend(leb_u32(body.len() as u32));
    out.extend_from_slice(body);
}

fn leb_u32(mut value: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(5);
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

fn leb_i32(mut value: i32) -> Vec<u8> {
    let mut out = Vec::with_capacity(5);
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        let done = (value == 0 && byte & 0x40 == 0) || (value == -1 && byte & 0x40 != 0);
        if done {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

/// A cursor over a module's bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Result<u8, ImageError> {
        let byte = *self
            .bytes
            .get(self.at)
            .ok_or(ImageError::Malformed(self.at))?;
        self.at += 1;
        Ok(byte)
    }

    fn u32(&mut self) -> Result<u32, ImageError> {
        let start = self.at;
        let mut value: u64 = 0;
        for shift in (0..35).step_by(7) {
            let byte = self.byte()?;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return u32::try_from(value).map_err(|_| ImageError::Malformed(start));
            }
        }
        Err(ImageError::Malformed(start))
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], ImageError> {
        let end = self
            .at
            .checked_add(len)
            .filter(|&end| end <= self.bytes.len())
            .ok_or(ImageError::Malformed(self.at))?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn bytes_vec(&mut self) -> Result<&'a [u8], ImageError> {
        let len = self.u32()? as usize;
        self.take(len)
    }

    /// A constant expression up to and including its `end`: the offset of a segment. Only the
    /// forms a segment offset takes here (`i32.const`, `global.get`).
    fn const_expr(&mut self) -> Result<&'a [u8], ImageError> {
        let start = self.at;
        loop {
            match self.byte()? {
                0x0b => return Ok(&self.bytes[start..self.at]),
                0x41 | 0x23 => {
                    // i32.const (signed LEB) or global.get (index): skip the immediate.
                    while self.byte()? & 0x80 != 0 {}
                }
                _ => return Err(ImageError::Malformed(self.at - 1)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module with one memory of `min` pages, an active segment writing `hello` at 16 and a
    /// passive one, a data count section, and an exported function reading a byte.
    fn module(min: u8) -> Vec<u8> {
        let mut m = b"\0asm\x01\0\0\0".to_vec();
        // type: (i32) -> i32
        push_section(&mut m, 1, &[1, 0x60, 1, 0x7f, 1, 0x7f]);
        push_section(&mut m, 3, &[1, 0]);
        push_section(&mut m, SECTION_MEMORY, &[1, 0, min]);
        let mut exports = vec![2];
        exports.extend([6]);
        exports.extend(b"memory");
        exports.extend([2, 0]);
        exports.extend([4]);
        exports.extend(b"peek");
        exports.extend([0, 0]);
        push_section(&mut m, 7, &exports);
        push_section(&mut m, SECTION_DATA_COUNT, &[2]);
        // code: local.get 0; i32.load8_u; end
        push_section(&mut m, 10, &[1, 7, 0, 0x20, 0, 0x2d, 0, 0, 0x0b]);
        let mut data = vec![2, 0, 0x41, 16, 0x0b, 5];
        data.extend(b"hello");
        data.extend([1, 3]);
        data.extend(b"abc");
        push_section(&mut m, SECTION_DATA, &data);
        push_section(&mut m, 0, &[4, b'n', b'a', b'm', b'e']);
        push_section(&mut m, 0, &[4, b'k', b'e', b'e', b'p', 1]);
        m
    }

    #[test]
    fn the_name_section_goes_and_other_custom_sections_stay() {
        let imaged = with_memory_image(&module(1), &vec![0u8; PAGE]).unwrap();
        let customs: Vec<&[u8]> = sections(&imaged)
            .unwrap()
            .into_iter()
            .filter(|(id, _)| *id == SECTION_CUSTOM)
            .filter_map(|(_, body)| custom_section_name(body))
            .collect();
        assert_eq!(customs, [b"keep".as_slice()]);
    }

    fn instantiate(wasm: &[u8]) -> (wasmtime::Store<()>, wasmtime::Instance) {
        let engine = wasmtime::Engine::default();
        let module = wasmtime::Module::new(&engine, wasm).unwrap();
        let mut store = wasmtime::Store::new(&engine, ());
        let instance = wasmtime::Instance::new(&mut store, &module, &[]).unwrap();
        (store, instance)
    }

    #[test]
    fn a_new_instance_starts_with_the_image() {
        let original = module(1);
        let (mut store, instance) = instantiate(&original);
        let memory = instance.get_memory(&mut store, "memory").unwrap();
        assert_eq!(&memory.data(&store)[16..21], b"hello");
        memory.grow(&mut store, 2).unwrap();
        memory.data_mut(&mut store)[16..21].copy_from_slice(b"HELLO");
        memory.data_mut(&mut store)[3 * PAGE - 1] = 7;
        let image = memory.data(&store).to_vec();

        let imaged = with_memory_image(&original, &image).unwrap();
        let (mut store, instance) = instantiate(&imaged);
        let memory = instance.get_memory(&mut store, "memory").unwrap();
        assert_eq!(
            memory.data(&store),
            &image[..],
            "every byte, the grown pages too"
        );
        let peek = instance
            .get_typed_func::<i32, i32>(&mut store, "peek")
            .unwrap();
        assert_eq!(peek.call(&mut store, 16).unwrap(), i32::from(b'H'));
        // Only the non-zero chunks are carried: the module stays small.
        assert!(
            imaged.len() < original.len() + 2 * CHUNK + 64,
            "{}",
            imaged.len()
        );
    }

    #[test]
    fn segments_cover_the_non_zero_chunks_only() {
        let mut memory = vec![0u8; 4 * CHUNK];
        memory[1] = 1;
        memory[CHUNK + 5] = 1;
        memory[3 * CHUNK + 9] = 1;
        assert_eq!(
            image_segments(&memory),
            [(0, 2 * CHUNK), (3 * CHUNK, 4 * CHUNK)]
        );
        assert!(image_segments(&vec![0; PAGE]).is_empty());
    }

    #[test]
    fn what_cannot_be_imaged_is_refused() {
        let original = module(1);
        assert_eq!(with_memory_image(b"nope", &[]), Err(ImageError::Header));
        assert_eq!(
            with_memory_image(&original, &[0; 10]),
            Err(ImageError::NotPages { image: 10 })
        );
        let cut = &original[..original.len() - 3];
        assert!(matches!(
            with_memory_image(cut, &vec![0; PAGE]),
            Err(ImageError::Malformed(_))
        ));
    }

    #[test]
    fn leb_encodings_round_trip() {
        for value in [0u32, 1, 127, 128, 300, 65536, u32::MAX] {
            let bytes = leb_u32(value);
            assert_eq!(
                Reader {
                    bytes: &bytes,
                    at: 0
                }
                .u32()
                .unwrap(),
                value
            );
        }
        assert_eq!(leb_i32(0), [0]);
        assert_eq!(leb_i32(64), [0xc0, 0]);
        assert_eq!(leb_i32(-1), [0x7f]);
    }
}
