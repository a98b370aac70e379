//! Installs inside the disk quota: `install_package` (and `pip install` in `execute_command`)
//! moves files into the session, and the session's quota of bytes and entries holds for them
//! as for the guest's own writes. An install that would pass it is refused with `disk_quota`
//! and the numbers (needed, free) before anything moves, and the session is as it was; one that
//! fits exactly is installed; and the worker counts an install at once, so the guest's next
//! write past the quota is refused at once, whether the install came while the session was
//! idle or while an execution ran.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use sandbox_tests::{Reply, Server, eventually, statuses};
use serde_json::{Value, json};

use crate::packages::{wheel_of, write_wheels};

/// The quota of every session of these tests.
const QUOTA_BYTES: u64 = 1 << 20;
const QUOTA_ENTRIES: u64 = 500;
/// Bytes of the big wheels' one data file: 3 MiB, three times the quota.
const BIG_FILE: u64 = 3 << 20;

/// The wheelhouse: `big_one`, `big_two`, `big_three` (one 3 MiB file each), `many_files`
/// (3,000 small files) and `small_pkg` (one file of 2,000 bytes, `SIZE = 2000`).
fn build_wheelhouse(dir: &Path) -> Result<()> {
    let big = |dist: &str| {
        let data = format!("{dist}/data.txt");
        let init = format!("{dist}/__init__.py");
        wheel_of(
            dist,
            &[],
            &[
                (init.as_str(), json!("")),
                (data.as_str(), json!({"repeat": "x", "times": BIG_FILE})),
            ],
        )
    };
    let many: Vec<(String, Value)> = (0..3000)
        .map(|i| (format!("many_files/m{i}.py"), json!("")))
        .collect();
    let many: Vec<(&str, Value)> = many.iter().map(|(n, c)| (n.as_str(), c.clone())).collect();
    let wheels = json!([
        big("big_one"),
        big("big_two"),
        big("big_three"),
        wheel_of("many_files", &[], &many),
        wheel_of(
            "small_pkg",
            &[],
            &[(
                "small_pkg/__init__.py",
                json!(format!("SIZE = 2000\n{}\n", "#".repeat(1987))),
            )],
        ),
    ]);
    write_wheels(dir, &wheels)
}

struct Fixture {
    server: Server,
    _wheelhouse: tempfile::TempDir,
}

impl Fixture {
    async fn start() -> Result<Self> {
        let wheelhouse = tempfile::tempdir()?;
        build_wheelhouse(wheelhouse.path())?;
        let (bytes, entries) = (QUOTA_BYTES.to_string(), QUOTA_ENTRIES.to_string());
        let server = Server::start_with_env(&[
            ("SANDBOX_WHEELHOUSE", wheelhouse.path().to_str().unwrap()),
            ("SANDBOX_DEFAULT_DISK_QUOTA_BYTES", &bytes),
            ("SANDBOX_DEFAULT_DISK_QUOTA_FILES", &entries),
        ])
        .await?;
        server.forbid_host_paths(server.host_paths().with(wheelhouse.path()));
        Ok(Self {
            server,
            _wheelhouse: wheelhouse,
        })
    }

    async fn install(&self, session: &str, package: &str) -> Result<Reply> {
        self.server
            .call(
                "install_package",
                json!({ "package": package, "session_id": session }),
            )
            .await
    }

    /// (bytes, entries) the session's files hold, as `get_workspace_info` counts them.
    async fn used(&self, session: &str) -> Result<(u64, u64)> {
        let info = self
            .server
            .call("get_workspace_info", json!({ "session_id": session }))
            .await?;
        ensure!(!info.is_error, "{info:?}");
        let usage = info.field("disk_usage");
        Ok((
            usage["bytes_used"].as_u64().context("bytes_used")?,
            usage["entries_used"].as_u64().context("entries_used")?,
        ))
    }

    /// Runs `code` in `session`; a failed execution is a reply, not an error.
    async fn python(&self, session: &str, code: &str) -> Result<Reply> {
        self.server
            .exec("python", code, json!({ "session_id": session }))
            .await
    }
}

/// A refusal of an install for the quota: `disk_quota`, its numbers, nothing installed.
fn assert_refused_for_quota(reply: &Reply, package: &str) {
    assert!(reply.is_error, "{package}: {reply:?}");
    assert_eq!(
        reply.str("error_type"),
        "disk_quota",
        "{package}: {reply:?}"
    );
    assert!(!reply.bool("success"), "{reply:?}");
    let message = reply.str("error_message");
    for words in [
        format!("installing {package} needs"),
        format!("{QUOTA_BYTES} bytes, {QUOTA_ENTRIES} entries"),
        "free".to_owned(),
        "nothing was installed".to_owned(),
    ] {
        assert!(message.contains(&words), "{words:?} in {message}");
    }
    let advice = reply.field("actionable_guidance").to_string();
    assert!(advice.contains("reset_workspace"), "{advice}");
}

/// Three wheels of 3 MiB each against a 1 MiB quota: each is refused before anything moves,
/// with the bytes it needs and the bytes free; the session holds what it held and stays usable.
#[tokio::test(flavor = "multi_thread")]
async fn installs_past_the_byte_quota_are_refused_before_anything_moves() -> Result<()> {
    let fx = Fixture::start().await?;
    let kept = fx
        .python(
            "bytes",
            "kept = 'yes'\nopen('notes.txt', 'w').write('n' * 1000)",
        )
        .await?;
    assert!(!kept.is_error, "{kept:?}");
    let before = fx.used("bytes").await?;
    assert_eq!(before, (1000, 1), "only notes.txt");
    for package in ["big-one", "big-two", "big-three"] {
        let refused = fx.install("bytes", package).await?;
        assert_refused_for_quota(&refused, package);
        let message = refused.str("error_message");
        assert!(
            message.contains(&format!("{} bytes free", QUOTA_BYTES - 1000))
                || message.contains(&format!("only {} bytes", QUOTA_BYTES - 1000)),
            "the free bytes: {message}"
        );
        assert_eq!(fx.used("bytes").await?, before, "{package}: nothing moved");
    }
    let app = fx.server.workspace_of("bytes").context("workspace")?;
    assert!(!app.join(".packages").exists(), "not even the directory");
    // pip through execute_command meets the same quota.
    let pip = fx
        .server
        .call(
            "execute_command",
            json!({ "command": "pip install big-one", "session_id": "bytes" }),
        )
        .await?;
    assert!(pip.is_error, "{pip:?}");
    assert_eq!(pip.str("error_type"), "disk_quota", "{pip:?}");
    assert_eq!(fx.used("bytes").await?, before);
    let still = fx.python("bytes", "kept").await?;
    assert_eq!(still.str("result"), "'yes'", "{still:?}");
    fx.server.stop().await
}

/// A wheel of 3,000 files against a 500-entry quota: refused, with the entries it needs.
#[tokio::test(flavor = "multi_thread")]
async fn an_install_past_the_entry_quota_is_refused() -> Result<()> {
    let fx = Fixture::start().await?;
    let refused = fx.install("entries", "many-files").await?;
    assert_refused_for_quota(&refused, "many-files");
    let message = refused.str("error_message");
    assert!(
        message.contains("and 3007 files, directories and links"),
        "3,000 files, their directory, the dist-info (directory and 4 files) and .packages: {message}"
    );
    assert_eq!(fx.used("entries").await?, (0, 0));
    fx.server.stop().await
}

/// An install that fits exactly is installed; one byte more is refused. Then the worker counts
/// it at once: a write of the last free byte succeeds, and one byte more is refused (the worker
/// had counted the session's files before the install, so only a charge of the install itself
/// makes it see them).
#[tokio::test(flavor = "multi_thread")]
async fn an_install_that_fits_exactly_installs_and_is_counted_at_once() -> Result<()> {
    let fx = Fixture::start().await?;
    // What small-pkg adds to an empty session.
    let probe = fx.install("probe", "small-pkg").await?;
    assert!(!probe.is_error, "{probe:?}");
    let (needed_bytes, needed_entries) = fx.used("probe").await?;
    // .packages, small_pkg/, __init__.py (2,000 bytes), the dist-info and its four files.
    assert!(
        needed_bytes > 2000 && needed_entries == 8,
        "{needed_bytes} {needed_entries}"
    );

    // A filler leaves exactly the room small-pkg needs (less one byte in `over`). The write
    // is charged: the worker's count of the session's files starts before the install.
    let fill = |free: u64| {
        format!(
            "with open('filler', 'wb') as f:\n    f.write(b'f' * {})",
            QUOTA_BYTES - free
        )
    };
    let exact = fx.python("exact", &fill(needed_bytes)).await?;
    assert!(!exact.is_error, "{exact:?}");
    let over = fx.python("over", &fill(needed_bytes - 1)).await?;
    assert!(!over.is_error, "{over:?}");

    let refused = fx.install("over", "small-pkg").await?;
    assert_refused_for_quota(&refused, "small-pkg");
    assert!(
        refused
            .str("error_message")
            .contains(&format!("needs {needed_bytes} bytes")),
        "{refused:?}"
    );
    assert_eq!(fx.used("over").await?, (QUOTA_BYTES - needed_bytes + 1, 1));

    let installed = fx.install("exact", "small-pkg").await?;
    assert!(!installed.is_error, "{installed:?}");
    assert_eq!(installed.str("installed_version"), "1.0.0");
    assert_eq!(
        fx.used("exact").await?,
        (QUOTA_BYTES, needed_entries + 1),
        "full to the byte"
    );
    let imported = fx
        .python("exact", "import small_pkg\nsmall_pkg.SIZE")
        .await?;
    assert_eq!(imported.str("result"), "2000", "{imported:?}");
    // Full: the next byte is refused at once (an install the worker had not counted would let
    // this write through, its running total being below the quota).
    // (`with`: an error in an unnamed file's implicit close is silenced by CPython.)
    let one_more = fx
        .python(
            "exact",
            "with open('filler', 'ab') as f:\n    f.write(b'+')",
        )
        .await?;
    assert!(one_more.is_error, "{one_more:?}");
    assert_eq!(one_more.str("error_type"), "disk_quota", "{one_more:?}");
    // Freeing space makes room again.
    let freed = fx
        .python(
            "exact",
            "import os\nos.remove('filler')\nopen('x', 'wb').write(b'1' * 10)",
        )
        .await?;
    assert!(!freed.is_error, "{freed:?}");
    fx.server.stop().await
}

/// While an execution runs, an install is charged by the running worker at once (it does not
/// wait for the execution): one past the quota is refused at once, one that fits moves in at
/// once, and the running execution's next write past what is left is refused.
#[tokio::test(flavor = "multi_thread")]
async fn installs_during_an_execution_are_charged_by_the_running_worker() -> Result<()> {
    let fx = std::sync::Arc::new(Fixture::start().await?);
    let ready = fx
        .python(
            "busy",
            "import os, time\nopen('w', 'wb').write(b'w' * 1000)",
        )
        .await?;
    assert!(!ready.is_error, "{ready:?}");
    let running = {
        let fx = fx.clone();
        tokio::spawn(async move {
            fx.server
                .exec(
                    "python",
                    &format!(
                        "while not os.path.exists('gate'):\n    time.sleep(0.01)\n\
                         try:\n    open('w', 'ab').write(b'z' * {})\n    r = 'written'\n\
                         except OSError as e:\n    r = 'refused: ' + str(e.errno)\nr",
                        QUOTA_BYTES - 1000
                    ),
                    json!({ "session_id": "busy", "timeout": 60 }),
                )
                .await
        })
    };
    fx.server
        .wait_for_executions("busy", Duration::from_secs(10), |l| {
            statuses(l) == ["running"]
        })
        .await?;
    let refused = tokio::time::timeout(Duration::from_secs(30), fx.install("busy", "big-one"))
        .await
        .context("an install does not wait for the running execution")??;
    assert_refused_for_quota(&refused, "big-one");
    // One that fits moves in at once; its answer waits for the interpreter's import caches to
    // be refreshed, a call queued behind the running execution.
    let installing = {
        let fx = fx.clone();
        tokio::spawn(async move { fx.install("busy", "small-pkg").await })
    };
    let app = fx.server.workspace_of("busy").context("workspace")?;
    assert!(
        eventually(Duration::from_secs(30), || {
            app.join(".packages/small_pkg/__init__.py").is_file()
        })
        .await,
        "the package moved in while the execution ran"
    );
    let listed = fx
        .server
        .wait_for_executions("busy", Duration::from_secs(10), |l| l.len() == 2)
        .await?;
    assert_eq!(statuses(&listed), ["running", "queued"], "{listed:?}");
    std::fs::write(app.join("gate"), "")?;
    let installed = installing.await??;
    assert!(!installed.is_error, "{installed:?}");
    let ran = running.await??;
    assert!(!ran.is_error, "{ran:?}");
    // The rest of the quota after the 1,000 bytes would fit without small-pkg: refused only
    // because the worker counted the install (a recount happens only at a crossing).
    assert!(ran.str("result").starts_with("'refused: "), "{ran:?}");
    let fx = std::sync::Arc::into_inner(fx).context("sole owner")?;
    fx.server.stop().await
}
