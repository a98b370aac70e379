//! The zip file format as Info-ZIP's zip 3.0 and unzip 6.0 (the `zip` and `unzip` commands of
//! src/zip.rs and src/unzip.rs) read and write it: the central directory (zip64's end records
//! and sizes read, never written), local headers, data descriptors (their sizes are the central
//! directory's), the stored and deflate methods (on flate2), CRC-32, MS-DOS times and the
//! extended timestamp extra field (`UT`, Unix seconds). Everything else a member may be
//! (encrypted, bzip2, LZMA, ...) is told apart so that the commands can refuse it by name.

use std::io::{Read, Write};

use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;
use flate2::{Compression, Crc};

/// The method of a member kept as it is.
pub const STORED: u16 = 0;
/// The method of a deflated member.
pub const DEFLATED: u16 = 8;
/// The extended timestamp extra field's tag (`UT`): modification time in Unix seconds.
const EXTENDED_TIME: u16 = 0x5455;
/// The zip64 extra field's tag: sizes and offsets that do not fit 32 bits.
const ZIP64: u16 = 0x0001;
/// "Version made by" of what we write: Unix (3), format 3.0, as Info-ZIP zip 3.0 writes.
const MADE_BY_UNIX: u16 = 0x031e;
/// The largest size or offset written without zip64 (which is not written here).
const MAX_32: u64 = 0xffff_fffe;

/// One member, as the central directory describes it.
#[derive(Debug, Clone, Default)]
pub struct Member {
    /// The name as stored (UTF-8 or not: shown lossily).
    pub name: String,
    /// General purpose flags (bit 0: encrypted; bit 3: sizes in a data descriptor).
    pub flags: u16,
    pub method: u16,
    pub dos_time: u16,
    pub dos_date: u16,
    pub crc: u32,
    pub compressed: u64,
    pub size: u64,
    /// Upper byte: the system that wrote it (3 is Unix, whose mode is `external >> 16`).
    pub made_by: u16,
    /// Internal attributes: bit 0 says the member is text (zipinfo's `t`).
    pub internal: u16,
    pub external: u32,
    /// Where its local header is (from the archive's start).
    pub offset: u64,
    /// The `UT` field's modification time, which Info-ZIP prefers to the DOS time.
    pub mtime: Option<i64>,
}

impl Member {
    /// Whether the name says it is a directory.
    pub fn is_dir(&self) -> bool {
        self.name.ends_with('/')
    }

    /// The Unix mode (type and permission bits) when a Unix system wrote it, else `None`.
    pub fn unix_mode(&self) -> Option<u32> {
        let mode = self.external >> 16;
        (self.made_by >> 8 == 3 && mode != 0).then_some(mode)
    }

    /// Whether it is a symbolic link (a Unix mode of type `S_IFLNK`): its data is the target.
    pub fn is_symlink(&self) -> bool {
        self.unix_mode().is_some_and(|m| m & 0o170000 == 0o120000)
    }

    pub fn is_encrypted(&self) -> bool {
        self.flags & 1 != 0
    }

    /// Its modification time in Unix seconds: the `UT` field's, else the DOS time's (UTC: the
    /// sandbox has no other zone).
    pub fn modified(&self) -> i64 {
        self.mtime
            .unwrap_or_else(|| from_dos(self.dos_date, self.dos_time))
    }
}

/// An archive read into memory, with its members in central directory order.
pub struct Archive {
    pub data: Vec<u8>,
    pub members: Vec<Member>,
}

/// Why a member's data could not be had.
#[derive(Debug)]
pub enum DataError {
    Encrypted,
    Method(u16),
    /// The data is cut short or not what its method says.
    Corrupt,
    /// The CRC-32 computed, and the one stored.
    Crc(u32, u32),
}

fn u16_at(d: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(d.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(d: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(d.get(at..at + 8)?.try_into().ok()?))
}

/// Why an archive could not be read.
#[derive(Debug, PartialEq)]
pub enum ReadError {
    /// No end of central directory record: not a zip file (unzip's status 9).
    NotZip,
    /// The central directory is not where the end record says, or is cut short (status 3).
    Broken,
}

impl Archive {
    /// Reads the central directory of `data`. Data before the archive (a self-extracting
    /// stub) is allowed for, as Info-ZIP allows for it: offsets are taken from where the
    /// central directory really is.
    ///
    /// # Errors
    ///
    /// [`ReadError::NotZip`] without an end record, [`ReadError::Broken`] when what it points
    /// at is not a central directory.
    pub fn read(data: Vec<u8>) -> Result<Archive, ReadError> {
        let d = &data;
        let from = d.len().saturating_sub(22 + 0xffff);
        let end = (from..=d.len().saturating_sub(22))
            .rev()
            .find(|&i| d[i..].starts_with(b"PK\x05\x06"))
            .ok_or(ReadError::NotZip)?;
        let mut count = u64::from(u16_at(d, end + 10).ok_or(ReadError::NotZip)?);
        let mut cd_size = u64::from(u32_at(d, end + 12).ok_or(ReadError::NotZip)?);
        let mut cd_offset = u64::from(u32_at(d, end + 16).ok_or(ReadError::NotZip)?);
        let mut cd_end = end as u64;
        // zip64: the locator just before the end record points at the zip64 end record.
        if end >= 20 && d[end - 20..].starts_with(b"PK\x06\x07") {
            let at = u64_at(d, end - 12).ok_or(ReadError::Broken)? as usize;
            let at = if d.get(at..).is_some_and(|r| r.starts_with(b"PK\x06\x06")) {
                at
            } else {
                // Moved by data in front, as the central directory may be.
                (end - 20)
                    .checked_sub(56)
                    .filter(|&a| d[a..].starts_with(b"PK\x06\x06"))
                    .ok_or(ReadError::Broken)?
            };
            count = u64_at(d, at + 32).ok_or(ReadError::Broken)?;
            cd_size = u64_at(d, at + 40).ok_or(ReadError::Broken)?;
            cd_offset = u64_at(d, at + 48).ok_or(ReadError::Broken)?;
            cd_end = at as u64;
        }
        let cd_start = cd_end.checked_sub(cd_size).ok_or(ReadError::Broken)?;
        let shift = cd_start.wrapping_sub(cd_offset);
        let mut members = Vec::new();
        let mut at = cd_start as usize;
        for _ in 0..count {
            if !d.get(at..).is_some_and(|r| r.starts_with(b"PK\x01\x02")) {
                return Err(ReadError::Broken);
            }
            let field = |o: usize| u16_at(d, at + o).ok_or(ReadError::Broken);
            let long = |o: usize| u32_at(d, at + o).ok_or(ReadError::Broken);
            let (name_len, extra_len, comment_len) = (
                field(28)? as usize,
                field(30)? as usize,
                field(32)? as usize,
            );
            let name = d
                .get(at + 46..at + 46 + name_len)
                .ok_or(ReadError::Broken)?;
            let extra = d
                .get(at + 46 + name_len..at + 46 + name_len + extra_len)
                .ok_or(ReadError::Broken)?;
            let mut m = Member {
                name: String::from_utf8_lossy(name).into_owned(),
                made_by: field(4)?,
                flags: field(8)?,
                method: field(10)?,
                dos_time: field(12)?,
                dos_date: field(14)?,
                crc: long(16)?,
                compressed: u64::from(long(20)?),
                size: u64::from(long(24)?),
                internal: field(36)?,
                external: long(38)?,
                offset: u64::from(long(42)?),
                mtime: None,
            };
            read_extra(extra, &mut m);
            m.offset = m.offset.wrapping_add(shift);
            members.push(m);
            at += 46 + name_len + extra_len + comment_len;
        }
        Ok(Archive { data, members })
    }

    /// Where a member's data starts, after its local header.
    fn data_start(&self, m: &Member) -> Option<usize> {
        let at = usize::try_from(m.offset).ok()?;
        if !self.data.get(at..)?.starts_with(b"PK\x03\x04") {
            return None;
        }
        let name_len = u16_at(&self.data, at + 26)? as usize;
        let extra_len = u16_at(&self.data, at + 28)? as usize;
        Some(at + 30 + name_len + extra_len)
    }

    /// A member's data as stored (compressed, for the writer to copy).
    pub fn raw(&self, m: &Member) -> Option<&[u8]> {
        let start = self.data_start(m)?;
        self.data
            .get(start..start.checked_add(usize::try_from(m.compressed).ok()?)?)
    }

    /// A member's data, uncompressed and checked against its CRC-32.
    ///
    /// # Errors
    ///
    /// A [`DataError`] for an encrypted member, another method, bad data or a bad CRC.
    pub fn contents(&self, m: &Member) -> Result<Vec<u8>, DataError> {
        if m.is_encrypted() {
            return Err(DataError::Encrypted);
        }
        if m.method != STORED && m.method != DEFLATED {
            return Err(DataError::Method(m.method));
        }
        let raw = self.raw(m).ok_or(DataError::Corrupt)?;
        let out = if m.method == STORED {
            raw.to_vec()
        } else {
            // Never more than the size said (a bomb's lie stops there).
            let mut out = Vec::with_capacity(m.size.min(1 << 26) as usize);
            DeflateDecoder::new(raw)
                .take(m.size)
                .read_to_end(&mut out)
                .map_err(|_| DataError::Corrupt)?;
            out
        };
        if out.len() as u64 != m.size {
            return Err(DataError::Corrupt);
        }
        let crc = crc32(&out);
        if crc != m.crc {
            return Err(DataError::Crc(crc, m.crc));
        }
        Ok(out)
    }
}

/// Reads the fields of an extra block that matter here: zip64's sizes and offset (each there
/// only when its 32-bit field is all ones) and `UT`'s modification time.
fn read_extra(mut extra: &[u8], m: &mut Member) {
    while extra.len() >= 4 {
        let tag = u16::from_le_bytes([extra[0], extra[1]]);
        let len = (u16::from_le_bytes([extra[2], extra[3]]) as usize).min(extra.len() - 4);
        let body = &extra[4..4 + len];
        if tag == ZIP64 {
            let mut at = 0;
            for field in [&mut m.size, &mut m.compressed, &mut m.offset] {
                if *field == 0xffff_ffff
                    && let Some(v) = u64_at(body, at)
                {
                    *field = v;
                    at += 8;
                }
            }
        } else if tag == EXTENDED_TIME && body.first().is_some_and(|f| f & 1 != 0) {
            m.mtime = u32_at(body, 1).map(|t| i64::from(t as i32));
        }
        extra = &extra[4 + len..];
    }
}

/// CRC-32 as zip stores it.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = Crc::new();
    crc.update(data);
    crc.sum()
}

/// `data` deflated at `level` (1 to 9, zip's `-1` to `-9`). flate2's miniz_oxide does not make
/// the bytes Info-ZIP's own deflate makes, so sizes and the percentages zip reports may differ
/// from the native zip's by a little (73 bytes of the e2e fixture: 71 here, 68 there).
pub fn deflate(data: &[u8], level: u32) -> Vec<u8> {
    let mut encoder = DeflateEncoder::new(Vec::new(), Compression::new(level));
    // Writing into a Vec cannot fail.
    let _ = encoder.write_all(data);
    encoder.finish().unwrap_or_default()
}

/// Info-ZIP's guess that a member is text (zipinfo's `t`, the internal attribute's bit 0): no
/// control characters but the usual white space.
pub fn looks_like_text(data: &[u8]) -> bool {
    !data.is_empty()
        && data
            .iter()
            .all(|&b| b >= 0x20 || matches!(b, b'\t' | b'\n' | b'\r' | 0x0c | 0x1b))
}

/// Info-ZIP's percentage of `size` saved by storing it in `compressed` bytes (its `percent`,
/// rounded half up).
pub fn percent(size: u64, compressed: u64) -> i64 {
    if size == 0 {
        return 0;
    }
    let (n, m) = (i128::from(size), i128::from(compressed));
    ((200 * (n - m) / n + 1) / 2) as i64
}

/// Unix seconds as an MS-DOS date and time (UTC), rounded up to an even second as Info-ZIP
/// rounds them; before 1980 is 1980-01-01 00:00.
pub fn to_dos(unix: i64) -> (u16, u16) {
    let t = (unix + 1) & !1;
    let (y, mo, d, h, mi, s, _) = crate::find::civil(t);
    if y < 1980 {
        return ((1 << 5) | 1, 0);
    }
    let y = y.min(2107) as u16;
    let date = ((y - 1980) << 9) | ((mo as u16) << 5) | d as u16;
    let time = ((h as u16) << 11) | ((mi as u16) << 5) | (s as u16 / 2);
    (date, time)
}

/// An MS-DOS date and time (taken as UTC) in Unix seconds.
pub fn from_dos(date: u16, time: u16) -> i64 {
    let y = 1980 + i64::from(date >> 9);
    let m = i64::from((date >> 5) & 0xf).clamp(1, 12);
    let d = i64::from(date & 0x1f).max(1);
    // Howard Hinnant's days_from_civil.
    let yy = if m <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    days * 86400
        + i64::from(time >> 11) * 3600
        + i64::from((time >> 5) & 0x3f) * 60
        + i64::from(time & 0x1f) * 2
}

/// A member to write: its description (offset aside) and its data as it goes in.
pub struct Output<'a> {
    pub member: Member,
    pub data: std::borrow::Cow<'a, [u8]>,
}

/// A member for a file, directory or link: mode (type and permission bits), modification time
/// and data as given; the caller sets method, sizes, CRC.
pub fn new_member(name: &str, mode: u32, mtime: i64) -> Member {
    let (dos_date, dos_time) = to_dos(mtime);
    Member {
        name: name.to_owned(),
        made_by: MADE_BY_UNIX,
        dos_date,
        dos_time,
        external: (mode << 16) | u32::from(mode & 0o170000 == 0o040000) << 4,
        mtime: Some(mtime),
        ..Member::default()
    }
}

/// The whole archive for `members`, in order: local header and data each, then the central
/// directory. A member written before (copied from an archive being updated) keeps what it
/// said, data descriptor aside (its sizes go into its local header now).
///
/// # Errors
///
/// A message when a size or offset needs zip64, which is not written here.
pub fn write(members: &[Output<'_>]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for Output { member: m, data } in members {
        let offset = out.len() as u64;
        if offset > MAX_32 || m.size > MAX_32 || data.len() as u64 > MAX_32 {
            return Err(format!(
                "{}: archives over 4 GiB (zip64) are not supported here",
                m.name
            ));
        }
        let needed: u16 = if m.method == DEFLATED || m.is_dir() {
            20
        } else {
            10
        };
        let flags = m.flags & !8;
        let name = m.name.as_bytes();
        let (local_extra, central_extra) = match m.mtime {
            Some(t) => {
                let t = (t as u32).to_le_bytes();
                let mut local = vec![0x55, 0x54, 9, 0, 3];
                local.extend_from_slice(&t);
                local.extend_from_slice(&t);
                let mut central = vec![0x55, 0x54, 5, 0, 3];
                central.extend_from_slice(&t);
                (local, central)
            }
            None => (Vec::new(), Vec::new()),
        };
        let common = |buf: &mut Vec<u8>| {
            buf.extend_from_slice(&needed.to_le_bytes());
            buf.extend_from_slice(&flags.to_le_bytes());
            buf.extend_from_slice(&m.method.to_le_bytes());
            buf.extend_from_slice(&m.dos_time.to_le_bytes());
            buf.extend_from_slice(&m.dos_date.to_le_bytes());
            buf.extend_from_slice(&m.crc.to_le_bytes());
            buf.extend_from_slice(&(data.len() as u32).to_le_bytes());
            buf.extend_from_slice(&(m.size as u32).to_le_bytes());
            buf.extend_from_slice(&(name.len() as u16).to_le_bytes());
        };
        out.extend_from_slice(b"PK\x03\x04");
        common(&mut out);
        out.extend_from_slice(&(local_extra.len() as u16).to_le_bytes());
        out.extend_from_slice(name);
        out.extend_from_slice(&local_extra);
        out.extend_from_slice(data);

        central.extend_from_slice(b"PK\x01\x02");
        central.extend_from_slice(&m.made_by.to_le_bytes());
        common(&mut central);
        central.extend_from_slice(&(central_extra.len() as u16).to_le_bytes());
        central.extend_from_slice(&[0, 0, 0, 0]); // comment length, disk
        central.extend_from_slice(&m.internal.to_le_bytes());
        central.extend_from_slice(&m.external.to_le_bytes());
        central.extend_from_slice(&(offset as u32).to_le_bytes());
        central.extend_from_slice(name);
        central.extend_from_slice(&central_extra);
    }
    let cd_offset = out.len() as u64;
    if cd_offset > MAX_32 || members.len() > 0xfffe {
        return Err("archives over 4 GiB or 65534 members (zip64) are not supported here".into());
    }
    let count = (members.len() as u16).to_le_bytes();
    out.extend_from_slice(&central);
    out.extend_from_slice(b"PK\x05\x06\0\0\0\0");
    out.extend_from_slice(&count);
    out.extend_from_slice(&count);
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&(cd_offset as u32).to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dos_times_round_up_to_even_seconds() {
        // 2023-11-14 22:13:20 UTC, and an odd second after it.
        let (date, time) = to_dos(1_700_000_000);
        assert_eq!(from_dos(date, time), 1_700_000_000);
        let (date, time) = to_dos(1_700_000_001);
        assert_eq!(from_dos(date, time), 1_700_000_002);
        assert_eq!(to_dos(0), (0x21, 0));
    }

    #[test]
    fn percentages_are_info_zips() {
        assert_eq!(percent(73, 68), 7);
        assert_eq!(percent(5000, 23), 100);
        assert_eq!(percent(26, 26), 0);
        assert_eq!(percent(0, 0), 0);
    }

    #[test]
    fn what_is_written_reads_back() {
        let text = b"hello hello hello hello hello\n".repeat(20);
        let packed = deflate(&text, 6);
        let mut file = new_member("d/a.txt", 0o100644, 1_700_000_000);
        file.method = DEFLATED;
        file.size = text.len() as u64;
        file.crc = crc32(&text);
        file.compressed = packed.len() as u64;
        let dir = new_member("d/", 0o040755, 1_700_000_000);
        let bytes = write(&[
            Output {
                member: dir,
                data: (&[][..]).into(),
            },
            Output {
                member: file,
                data: packed.into(),
            },
        ])
        .unwrap();
        let mut stub = b"#!/bin/sh\nexit\n".to_vec();
        stub.extend_from_slice(&bytes);
        for data in [bytes, stub] {
            let archive = Archive::read(data).unwrap();
            let [d, a] = archive.members.as_slice() else {
                panic!("two members")
            };
            assert!(d.is_dir() && d.unix_mode() == Some(0o040755) && d.external & 0x10 != 0);
            assert_eq!(a.modified(), 1_700_000_000);
            assert_eq!(archive.contents(a).unwrap(), text);
        }
        assert_eq!(
            Archive::read(b"not a zip".to_vec()).err(),
            Some(ReadError::NotZip)
        );
    }
}
