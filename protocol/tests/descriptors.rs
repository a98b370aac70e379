//! The confined layer under a low descriptor limit. These run in a process of their own (an
//! integration test binary) because they lower RLIMIT_NOFILE, which would starve the unit
//! tests running beside them.

use std::path::Path;

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
use sandbox_protocol::confined::{EntryKind, Root, WalkLimits};

/// The soft descriptor limit these tests run under: far below the directories they create.
const LIMIT: u64 = 128;

/// More subdirectories side by side than the process may hold descriptors: each is listed with
/// what it holds. Opening every subdirectory before descending ran out of descriptors and
/// silently left the rest out.
#[test]
fn walk_lists_more_sibling_directories_than_descriptors_allow() {
    let dir = tempfile::tempdir().unwrap();
    let siblings = 4 * LIMIT as usize;
    for i in 0..siblings {
        let sub = dir.path().join(format!("d{i}"));
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("f"), b"x").unwrap();
    }
    // A deep chain too, deeper than the limit would allow one descriptor per level.
    let mut deep = dir.path().join("deep");
    for _ in 0..(2 * LIMIT) {
        deep.push("d");
    }
    std::fs::create_dir_all(&deep).unwrap();
    let root = Root::open_ambient(dir.path()).unwrap();

    let before = getrlimit(Resource::Nofile);
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(LIMIT),
            maximum: before.maximum,
        },
    )
    .unwrap();
    let limits = WalkLimits {
        max_entries: 10 * siblings,
        max_depth: 4 * LIMIT as usize,
    };
    let walk = root.walk(limits, &[]);
    setrlimit(Resource::Nofile, before).unwrap();

    assert!(!walk.truncated);
    let files = walk.entries.iter().filter(|e| e.kind == EntryKind::File);
    assert_eq!(files.count(), siblings, "every directory's file is listed");
    let chain = walk.entries.iter().filter(|e| e.path.starts_with("deep"));
    assert_eq!(
        chain.count(),
        1 + 2 * LIMIT as usize,
        "the deep chain is listed whole"
    );
    assert!(
        walk.entries
            .iter()
            .any(|e| Path::new(&e.path).ends_with("d0/f"))
    );
}
