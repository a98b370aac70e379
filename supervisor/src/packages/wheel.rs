//! Wheels, unpacked by the server into its own staging directory before anything moves into a
//! session.
//!
//! An archive is hostile until every entry passes: its name must be a plain relative path (no
//! absolute path, no `..` or `.` component, no backslash, drive letter or NUL), it must be a
//! regular file or a directory (no link, device or FIFO), pure Python (no compiled library), and
//! the archive is bounded in entries and in unpacked bytes (a zip bomb stops at the bound).
//! Refusal is all or nothing: the caller discards the staging directory.
//!
//! `<name>.data/` directories are laid out as an installer does: `purelib` and `platlib` go to
//! the root; scripts, headers and data files are dropped (nothing could run them in a sandbox).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sandbox_protocol::confined::{ConfinedError, EntryKind, Follow, Root};

/// Suffixes of compiled code, which cannot load in WebAssembly.
const NATIVE_SUFFIXES: [&str; 4] = [".so", ".pyd", ".dll", ".dylib"];

/// Longest entry name accepted (PATH_MAX).
const MAX_NAME_BYTES: usize = 4096;

/// Bounds of one install (all wheels of it together).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_entries: usize,
    pub max_bytes: u64,
}

/// Why a wheel was not unpacked.
#[derive(Debug, thiserror::Error)]
pub enum WheelError {
    /// The archive breaks a rule: `invalid_package`.
    #[error("{wheel}: {reason}")]
    Refused { wheel: String, reason: String },
    /// It holds compiled code: `native_package`.
    #[error("{wheel} contains compiled code ({entry}), which cannot run in WebAssembly")]
    Native { wheel: String, entry: String },
    /// The server could not read or write it: `system_error`.
    #[error("{wheel}: {reason}")]
    Io { wheel: String, reason: String },
}

/// What [`unpack`] counted so far, across the wheels of one install.
#[derive(Debug, Default)]
pub struct Budget {
    entries: usize,
    bytes: u64,
}

/// Where an archive entry goes: a path under the root, or nowhere (dropped `.data` parts).
fn destination(name: &str) -> Result<Option<PathBuf>, String> {
    if name.is_empty() || name.len() > MAX_NAME_BYTES {
        return Err("an entry has an empty or over-long name".into());
    }
    if name.contains(['\\', '\0']) {
        return Err(format!("entry {name:?} has a backslash or NUL in its name"));
    }
    if name.starts_with('/') {
        return Err(format!("entry {name:?} is an absolute path"));
    }
    let trimmed = name.strip_suffix('/').unwrap_or(name);
    let parts: Vec<&str> = trimmed.split('/').collect();
    if parts.first().is_some_and(|p| p.contains(':')) {
        return Err(format!("entry {name:?} names a drive or URL"));
    }
    if parts
        .iter()
        .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        return Err(format!(
            "entry {name:?} has an empty, '.' or '..' path component"
        ));
    }
    if parts.iter().any(|p| p.len() > 255) {
        return Err(format!("entry {name:?} has an over-long path component"));
    }
    // `<dist>.data/<category>/<path>`.
    if parts[0].ends_with(".data") {
        return Ok(match parts.get(1) {
            Some(&("purelib" | "platlib")) if parts.len() > 2 => Some(parts[2..].iter().collect()),
            _ => None,
        });
    }
    Ok(Some(parts.iter().collect()))
}

/// Unpacks one wheel (already open) into `into`, counting against `budget`.
///
/// # Errors
/// See [`WheelError`]; on error `into` may hold part of the archive and must be discarded.
pub fn unpack(
    wheel: std::fs::File,
    wheel_name: &str,
    into: &Root,
    limits: Limits,
    budget: &mut Budget,
) -> Result<(), WheelError> {
    let refused = |reason: String| WheelError::Refused {
        wheel: wheel_name.to_owned(),
        reason,
    };
    let io = |reason: String| WheelError::Io {
        wheel: wheel_name.to_owned(),
        reason,
    };
    let mut archive = zip::ZipArchive::new(std::io::BufReader::new(wheel))
        .map_err(|e| refused(format!("not a readable zip archive ({e})")))?;
    for index in 0..archive.len() {
        budget.entries += 1;
        if budget.entries > limits.max_entries {
            return Err(refused(format!(
                "more than {} entries in one install",
                limits.max_entries
            )));
        }
        let mut entry = archive
            .by_index(index)
            .map_err(|e| refused(format!("entry {index} cannot be read ({e})")))?;
        let name = String::from_utf8_lossy(entry.name_raw()).into_owned();
        if entry.encrypted() {
            return Err(refused(format!("entry {name:?} is encrypted")));
        }
        // File type from the Unix mode bits, when the archive records them: only regular
        // files and directories.
        let file_type = entry.unix_mode().map(|m| m & 0o170_000).unwrap_or(0);
        if entry.is_symlink() || !matches!(file_type, 0 | 0o100_000 | 0o040_000) {
            return Err(refused(format!(
                "entry {name:?} is a link or special file, which a wheel may not contain"
            )));
        }
        let Some(target) = destination(&name).map_err(&refused)? else {
            continue;
        };
        let lower = name.to_ascii_lowercase();
        if NATIVE_SUFFIXES.iter().any(|s| lower.ends_with(s)) || lower.contains(".so.") {
            return Err(WheelError::Native {
                wheel: wheel_name.to_owned(),
                entry: name,
            });
        }
        if entry.is_dir() || file_type == 0o040_000 {
            into.dir()
                .create_dir_all(&target)
                .map_err(|e| io(format!("cannot create {name:?}: {e}")))?;
            continue;
        }
        let mut output = match into.create_new_file(&target) {
            Ok(file) => file,
            Err(ConfinedError::Io(e)) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(refused(format!("entry {name:?} appears twice")));
            }
            Err(e) => return Err(refused(format!("entry {name:?} cannot be written: {e}"))),
        };
        let remaining = limits.max_bytes.saturating_sub(budget.bytes);
        let mut limited = (&mut entry).take(remaining + 1);
        let copied = std::io::copy(&mut limited, &mut output)
            .map_err(|e| refused(format!("entry {name:?} is corrupt ({e})")))?;
        budget.bytes += copied;
        if budget.bytes > limits.max_bytes {
            return Err(refused(format!(
                "it unpacks to more than {} bytes",
                limits.max_bytes
            )));
        }
        output
            .flush()
            .map_err(|e| io(format!("cannot write {name:?}: {e}")))?;
    }
    Ok(())
}

/// The `.dist-info` directory of `dist` among the unpacked entries, if there is exactly one.
pub fn dist_info(unpacked: &Root, dist: &str) -> Option<String> {
    let wanted = super::normalize(dist);
    let mut found = unpacked.dir().entries().ok()?.flatten().filter_map(|e| {
        let name = e.file_name().into_string().ok()?;
        let stem = name.strip_suffix(".dist-info")?;
        let (d, _version) = stem.rsplit_once('-')?;
        (super::normalize(d) == wanted).then_some(name)
    });
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// The import names a distribution provides: its `top_level.txt`, or else the first path parts
/// in its `RECORD`. Only identifiers are kept: the text came from an archive.
pub fn top_level_names(unpacked: &Root, dist_info: &str) -> Vec<String> {
    let read = |file: &str, limit: u64| {
        unpacked
            .read_regular(&Path::new(dist_info).join(file), Follow::No, limit)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    };
    let mut names: Vec<String> = match read("top_level.txt", 64 << 10) {
        Some(text) => text.lines().map(|l| l.trim().to_owned()).collect(),
        None => read("RECORD", 4 << 20)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split(',').next())
            .filter_map(|p| p.split('/').next())
            .filter(|p| !p.ends_with(".dist-info") && !p.ends_with(".data"))
            .map(|p| p.trim_end_matches(".py").to_owned())
            .collect(),
    };
    names.retain(|n| {
        n.split('.').all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_alphanumeric() || c == '_')
        })
    });
    names.sort();
    names.dedup();
    names
}

/// The top-level entries of an unpacked install, to move into `.packages` one by one.
///
/// # Errors
/// When the staging directory cannot be read.
pub fn top_level_entries(unpacked: &Root) -> std::io::Result<Vec<(PathBuf, EntryKind)>> {
    let mut entries = Vec::new();
    for entry in unpacked.dir().entries()? {
        let entry = entry?;
        let kind = EntryKind::of(entry.metadata()?.file_type());
        entries.push((PathBuf::from(entry.file_name()), kind));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zip archive written by hand (stored, no compression), with chosen names and modes.
    pub(crate) fn zip_bytes(entries: &[(&str, &[u8], u32)]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut central = Vec::new();
        for (name, data, mode) in entries {
            let offset = out.len() as u32;
            let crc = crc32(data);
            let local = |sig: u32, central_dir: bool| {
                let mut h = Vec::new();
                h.extend(sig.to_le_bytes());
                if central_dir {
                    h.extend(0x031e_u16.to_le_bytes()); // made by: Unix, 3.0
                }
                h.extend(20u16.to_le_bytes()); // needed
                h.extend(0u16.to_le_bytes()); // flags
                h.extend(0u16.to_le_bytes()); // stored
                h.extend(0u32.to_le_bytes()); // time, date
                h.extend(crc.to_le_bytes());
                h.extend((data.len() as u32).to_le_bytes());
                h.extend((data.len() as u32).to_le_bytes());
                h.extend((name.len() as u16).to_le_bytes());
                h.extend(0u16.to_le_bytes()); // extra
                if central_dir {
                    h.extend(0u16.to_le_bytes()); // comment
                    h.extend(0u16.to_le_bytes()); // disk
                    h.extend(0u16.to_le_bytes()); // internal attrs
                    h.extend((mode << 16).to_le_bytes());
                    h.extend(offset.to_le_bytes());
                }
                h.extend(name.as_bytes());
                h
            };
            out.extend(local(0x0403_4b50, false));
            out.extend(*data);
            central.extend(local(0x0201_4b50, true));
        }
        let cd_offset = out.len() as u32;
        out.extend(&central);
        out.extend(0x0605_4b50_u32.to_le_bytes());
        out.extend([0u8; 4]);
        out.extend((entries.len() as u16).to_le_bytes());
        out.extend((entries.len() as u16).to_le_bytes());
        out.extend((central.len() as u32).to_le_bytes());
        out.extend(cd_offset.to_le_bytes());
        out.extend(0u16.to_le_bytes());
        out
    }

    fn crc32(data: &[u8]) -> u32 {
        let mut crc = !0u32;
        for byte in data {
            crc ^= u32::from(*byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    const LIMITS: Limits = Limits {
        max_entries: 100,
        max_bytes: 1 << 20,
    };

    fn unpack_bytes(bytes: &[u8], into: &Root) -> Result<(), WheelError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.whl");
        std::fs::write(&path, bytes).unwrap();
        unpack(
            std::fs::File::open(&path).unwrap(),
            "w.whl",
            into,
            LIMITS,
            &mut Budget::default(),
        )
    }

    const FILE: u32 = 0o100_644;

    #[test]
    fn a_pure_wheel_unpacks_with_its_data_directories_laid_out() {
        let stage = tempfile::tempdir().unwrap();
        let root = Root::open_ambient(stage.path()).unwrap();
        let bytes = zip_bytes(&[
            ("tiny/__init__.py", b"X = 1\n", FILE),
            ("tiny-1.0.dist-info/top_level.txt", b"tiny\n../evil\n", FILE),
            ("tiny-1.0.dist-info/RECORD", b"", FILE),
            ("tiny-1.0.data/purelib/extra.py", b"", FILE),
            ("tiny-1.0.data/scripts/tool", b"#!/bin/sh", FILE),
        ]);
        unpack_bytes(&bytes, &root).unwrap();
        assert!(stage.path().join("tiny/__init__.py").is_file());
        assert!(stage.path().join("extra.py").is_file());
        assert!(!stage.path().join("tiny-1.0.data").exists());
        let info = dist_info(&root, "Tiny").unwrap();
        assert_eq!(info, "tiny-1.0.dist-info");
        assert_eq!(top_level_names(&root, &info), ["tiny"]);
    }

    #[test]
    fn hostile_entries_are_refused() {
        for (name, mode) in [
            ("../evil.py", FILE),
            ("/tmp/abs-evil.py", FILE),
            ("pkg/../../evil.py", FILE),
            ("pkg/./x.py", FILE),
            ("pkg//x.py", FILE),
            ("C:/evil.py", FILE),
            ("pkg\\..\\evil.py", FILE),
            ("link", 0o120_777),
            ("fifo", 0o010_644),
            ("dev", 0o020_644),
        ] {
            let stage = tempfile::tempdir().unwrap();
            let root = Root::open_ambient(stage.path()).unwrap();
            let bytes = zip_bytes(&[("ok.py", b"", FILE), (name, b"/etc/passwd", mode)]);
            let err = unpack_bytes(&bytes, &root).unwrap_err();
            assert!(matches!(err, WheelError::Refused { .. }), "{name}: {err}");
        }
        let stage = tempfile::tempdir().unwrap();
        let root = Root::open_ambient(stage.path()).unwrap();
        let err = unpack_bytes(&zip_bytes(&[("m/_speedups.so", b"", FILE)]), &root).unwrap_err();
        assert!(matches!(err, WheelError::Native { .. }));
        // The zip reader keeps one entry per name; either way one file results, never a
        // write through an existing one.
        let stage = tempfile::tempdir().unwrap();
        let root = Root::open_ambient(stage.path()).unwrap();
        let _ = unpack_bytes(
            &zip_bytes(&[("a.py", b"1", FILE), ("a.py", b"2", FILE)]),
            &root,
        );
        assert_eq!(std::fs::read_dir(stage.path()).unwrap().count(), 1);
        assert!(matches!(
            unpack_bytes(b"not a zip", &root),
            Err(WheelError::Refused { .. })
        ));
    }

    #[test]
    fn bounds_stop_bombs() {
        let stage = tempfile::tempdir().unwrap();
        let root = Root::open_ambient(stage.path()).unwrap();
        let big = vec![b'x'; 2 << 20];
        let err = unpack_bytes(&zip_bytes(&[("big.txt", &big, FILE)]), &root).unwrap_err();
        assert!(err.to_string().contains("more than"), "{err}");
        let many: Vec<String> = (0..101).map(|i| format!("f{i}.py")).collect();
        let entries: Vec<(&str, &[u8], u32)> =
            many.iter().map(|n| (n.as_str(), &b""[..], FILE)).collect();
        let stage = tempfile::tempdir().unwrap();
        let root = Root::open_ambient(stage.path()).unwrap();
        let err = unpack_bytes(&zip_bytes(&entries), &root).unwrap_err();
        assert!(err.to_string().contains("entries"), "{err}");
    }
}
