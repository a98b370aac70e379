//! MCP resources: the capability manifest (`sandbox://capabilities`), the documentation pages
//! (`sandbox://docs/<topic>`), and a session's files
//! (`sandbox://sessions/<session_id>/files/<path>`), plus images for tool results.
//!
//! Session files are read through the session's `/app` handle ([`Root`]): the path is resolved
//! beneath it, so a guest's symlink that leads out of `/app` is refused, and only regular files
//! are served (a FIFO or device is refused without being waited on).

use std::path::{Component, Path, PathBuf};

use rmcp::model::{ContentBlock, Resource, ResourceContents, ResourceTemplate};
use sandbox_protocol::confined::{ConfinedError, EntryKind, Follow, Root};

use crate::guidance::DOCS;

/// The capability manifest's URI.
pub const CAPABILITIES: &str = "sandbox://capabilities";

/// Largest file served as a resource or attached as an image.
const MAX_FILE_BYTES: u64 = 4 << 20;
/// Images attached to one result at most.
const MAX_IMAGES: usize = 3;

/// The static resources.
pub fn static_resources() -> Vec<Resource> {
    let mut list = vec![
        Resource::new(CAPABILITIES, "capabilities")
            .with_title("Sandbox capabilities")
            .with_description(
                "Runtimes, versions, flavors, limits, tools and the JavaScript library, as JSON",
            )
            .with_mime_type("application/json"),
    ];
    list.extend(DOCS.iter().map(|d| {
        Resource::new(d.uri, d.uri.rsplit('/').next().unwrap_or(d.uri))
            .with_title(d.title)
            .with_description(d.description)
            .with_mime_type("text/markdown")
    }));
    list
}

/// The template for session files.
pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(
            "sandbox://sessions/{session_id}/files/{path}",
            "session-file",
        )
        .with_title("A file in a session's /app")
        .with_description("Read a file the code wrote under /app (text, or base64 for binary)"),
    ]
}

/// The URI of a workspace file.
pub fn file_uri(session_id: &str, relative: &str) -> String {
    format!("sandbox://sessions/{session_id}/files/{relative}")
}

/// The first `max` regular files of a session's `/app` as resources (links, directories and
/// special files are not listed).
pub fn session_files(session_id: &str, workspace: &Root, max: usize) -> Vec<Resource> {
    crate::workspace::list(workspace, false)
        .files
        .iter()
        .filter(|f| f.kind == EntryKind::File)
        .take(max)
        .map(|f| {
            Resource::new(file_uri(session_id, &f.path), f.path.clone())
                .with_description(format!("/app/{} in session {session_id}", f.path))
        })
        .collect()
}

/// `(session_id, relative path)` of a file URI, rejecting anything that could leave /app.
pub fn parse_file_uri(uri: &str) -> Option<(&str, PathBuf)> {
    let rest = uri.strip_prefix("sandbox://sessions/")?;
    let (session, path) = rest.split_once("/files/")?;
    if !crate::owner::valid_session_id(session) {
        return None;
    }
    // Leading slashes are dropped, so a path of slashes alone names nothing (not /app itself).
    let path = path.trim_start_matches('/');
    let relative = PathBuf::from(path);
    let clean = relative
        .components()
        .all(|c| matches!(c, Component::Normal(_)));
    (clean && !path.is_empty()).then_some((session, relative))
}

/// Reads a workspace file for resources/read: text when it is UTF-8, base64 otherwise.
/// Symlinks are followed only while they stay inside `/app`.
///
/// # Errors
/// A message for the client when the file is missing, outside /app, too large, or not a
/// regular file. It names the URI only, never a host path.
pub fn read_file(workspace: &Root, relative: &Path, uri: &str) -> Result<ResourceContents, String> {
    let bytes = workspace
        .read_regular(relative, Follow::Yes, MAX_FILE_BYTES)
        .map_err(|e| match e {
            ConfinedError::Escape => format!("{uri} leads outside the session's /app"),
            ConfinedError::NotRegular(kind) => {
                format!("{uri} is not a regular file (it is a {})", kind.name())
            }
            ConfinedError::TooLarge { what, limit } => {
                format!("{uri} is too large ({what}); the limit for resources is {limit} bytes")
            }
            ConfinedError::Io(e) if e.kind() == std::io::ErrorKind::NotFound => {
                format!("no file {uri}")
            }
            other => format!("cannot read {uri}: {other}"),
        })?;
    let mime = mime_type(relative);
    Ok(match String::from_utf8(bytes) {
        Ok(text) if !mime.starts_with("image/") => {
            ResourceContents::text(text, uri).with_mime_type(mime)
        }
        Ok(text) => ResourceContents::blob(base64(text.as_bytes()), uri).with_mime_type(mime),
        Err(e) => ResourceContents::blob(base64(e.as_bytes()), uri).with_mime_type(mime),
    })
}

/// The images among `written` (the files beneath /app an execution wrote, as its worker saw
/// them: names the guest chose), as image content blocks, read beneath `workspace` through its
/// confined handle. Only regular files count: a link named `x.png` is neither followed nor
/// attached, and a name that leads out of /app or into a system directory reads nothing.
pub fn new_images(workspace: &Root, written: &[String]) -> Vec<ContentBlock> {
    written
        .iter()
        .map(Path::new)
        .filter(|path| {
            mime_type(path).starts_with("image/")
                && !path.components().next().is_some_and(|first| {
                    crate::workspace::SYSTEM_DIRS
                        .iter()
                        .any(|dir| first.as_os_str() == *dir)
                })
        })
        .filter_map(|path| {
            let bytes = workspace
                .read_regular(path, Follow::No, MAX_FILE_BYTES)
                .ok()?;
            Some(ContentBlock::image(base64(&bytes), mime_type(path)))
        })
        .take(MAX_IMAGES)
        .collect()
}

fn mime_type(path: &Path) -> &'static str {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("svg") => "image/svg+xml",
        Some("json") => "application/json",
        Some("csv") => "text/csv",
        Some("md") => "text/markdown",
        Some("html" | "htm") => "text/html",
        Some("pdf") => "application/pdf",
        Some("xlsx") => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        _ => "text/plain",
    }
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(TABLE[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (input, output) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(input.as_bytes()), output);
        }
    }

    #[test]
    fn the_images_an_execution_wrote_are_read_beneath_app_and_nothing_else() {
        let app = tempfile::tempdir().unwrap();
        let dir = app.path();
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::create_dir_all(dir.join(".packages")).unwrap();
        std::fs::write(dir.join("a.png"), b"\x89PNG a").unwrap();
        std::fs::write(dir.join("sub/b.svg"), b"<svg/>").unwrap();
        std::fs::write(dir.join("data.csv"), b"x,y").unwrap();
        std::fs::write(dir.join(".packages/c.png"), b"\x89PNG c").unwrap();
        std::os::unix::fs::symlink(dir.join("a.png"), dir.join("link.png")).unwrap();
        std::fs::write(dir.join("old.png"), b"\x89PNG old").unwrap();
        let root = Root::open_ambient(dir).unwrap();
        let written: Vec<String> = [
            "a.png",
            "link.png",
            "data.csv",
            "sub/b.svg",
            "../outside.png",
            "/etc/x.png",
            ".packages/c.png",
            "gone.png",
        ]
        .map(String::from)
        .to_vec();
        let images: Vec<(String, String)> = new_images(&root, &written)
            .iter()
            .map(|c| {
                let image = c.as_image().unwrap();
                (image.mime_type.clone(), image.data.clone())
            })
            .collect();
        assert_eq!(
            images,
            [
                ("image/png".to_string(), base64(b"\x89PNG a")),
                ("image/svg+xml".to_string(), base64(b"<svg/>")),
            ],
            "old.png was not written by this execution"
        );
        let many: Vec<String> = (0..MAX_IMAGES + 2).map(|_| "a.png".to_string()).collect();
        assert_eq!(new_images(&root, &many).len(), MAX_IMAGES);
    }

    #[test]
    fn file_uris_cannot_leave_the_workspace() {
        assert_eq!(
            parse_file_uri("sandbox://sessions/s1/files/a/b.txt"),
            Some(("s1", PathBuf::from("a/b.txt")))
        );
        for bad in [
            "sandbox://sessions/s1/files/../etc/passwd",
            "sandbox://sessions/s1/files/a/../../x",
            "sandbox://sessions/s1/files/",
            "sandbox://sessions/s1/files//",
            "sandbox://other/s1/files/a",
        ] {
            assert_eq!(parse_file_uri(bad), None, "{bad}");
        }
        assert_eq!(
            parse_file_uri("sandbox://sessions/s1/files//etc/passwd"),
            Some(("s1", PathBuf::from("etc/passwd")))
        );
    }

    /// Fuzz target: no URI a client sends makes the parser accept a path that could leave
    /// /app: what it accepts is a non-empty path of normal components under a session id that
    /// is a plain name. (The file is then opened beneath /app, which refuses links out.)
    #[test]
    fn fuzz_file_uri_parser() {
        let seconds = std::env::var("SANDBOX_FUZZ_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(5);
        bolero::check!()
            .with_type::<(u8, String)>()
            .with_test_time(std::time::Duration::from_secs(seconds))
            .for_each(|(shape, tail)| {
                // Most inputs start like a file URI, so the interesting part is reached.
                let uri = match shape % 4 {
                    0 => tail.clone(),
                    1 => format!("sandbox://sessions/{tail}"),
                    2 => format!("sandbox://sessions/s1/files/{tail}"),
                    _ => format!("sandbox://sessions/{tail}/files/{tail}"),
                };
                if let Some((id, relative)) = parse_file_uri(&uri) {
                    assert!(!relative.as_os_str().is_empty(), "{uri:?}");
                    assert!(
                        relative
                            .components()
                            .all(|c| matches!(c, Component::Normal(_))),
                        "{uri:?} -> {relative:?}"
                    );
                    assert!(crate::owner::valid_session_id(id), "{uri:?} -> {id:?}");
                }
            });
    }
}
