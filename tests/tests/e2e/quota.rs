//! The disk quota of a session: bytes and entries (files, directories, links) of `/app` and
//! `/tmp` together. Python, JavaScript and the shell that try to go past it are refused with
//! `disk_quota` and advice quoting the real numbers, the host directories never hold more than
//! the quota, and the session stays usable: its variables survive, and deleting files (or
//! `reset_workspace`) makes writes work again. Also the configurable code size limit.

use std::path::Path;

use anyhow::{Context, Result, ensure};
use sandbox_tests::{Reply, Server, rpc_error_type};
use serde_json::{Value, json};

/// The quota every test server runs with (through the defaults' environment variables).
const QUOTA_BYTES: u64 = 5_000_000;
const QUOTA_FILES: u64 = 200;

async fn server() -> Result<Server> {
    let server = Server::start_with_env(&[
        ("SANDBOX_DEFAULT_DISK_QUOTA_BYTES", "5000000"),
        ("SANDBOX_DEFAULT_DISK_QUOTA_FILES", "200"),
    ])
    .await?;
    server.forbid_own_host_paths();
    Ok(server)
}

/// What a directory holds on the host: (bytes of files and link texts, entries below it).
fn held_in(dir: &Path) -> (u64, u64) {
    let (mut bytes, mut entries) = (0, 0);
    let Ok(list) = std::fs::read_dir(dir) else {
        return (0, 0);
    };
    for entry in list.flatten() {
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        entries += 1;
        if meta.is_dir() {
            let (b, e) = held_in(&entry.path());
            bytes += b;
            entries += e;
        } else {
            bytes += meta.len();
        }
    }
    (bytes, entries)
}

/// What a session's `/app` and `/tmp` hold together on the host, checked against the quota.
fn assert_within_quota(server: &Server, session: &str) -> Result<(u64, u64)> {
    let app = server.workspace_of(session).context("no /app")?;
    let tmp = server.tmp_of(session).context("no /tmp")?;
    let (a, b) = (held_in(&app), held_in(&tmp));
    let held = (a.0 + b.0, a.1 + b.1);
    ensure!(
        held.0 <= QUOTA_BYTES && held.1 <= QUOTA_FILES,
        "the host directories hold {held:?}, over the quota"
    );
    Ok(held)
}

/// The quota's numbers as the refusals write them: [`QUOTA_BYTES`] in MiB, and
/// [`QUOTA_FILES`] entries.
const QUOTA_BYTES_SHOWN: &str = "4.77 MiB";
const QUOTA_FILES_SHOWN: &str = "200 files";

/// A failed result classified `disk_quota`, whose message (the error, or the shell's stderr)
/// and advice carry the quota's numbers: a model can act on them.
fn assert_disk_quota(reply: &Reply, what: &str) -> Result<()> {
    ensure!(reply.is_error, "{what}: not refused: {reply:?}");
    ensure!(
        reply.opt_str("error_type") == Some("disk_quota"),
        "{what}: {reply:?}"
    );
    let message = format!(
        "{}\n{}",
        reply.opt_str("error_message").unwrap_or_default(),
        reply.str("stderr")
    );
    ensure!(
        message.contains(QUOTA_BYTES_SHOWN) && message.contains(QUOTA_FILES_SHOWN),
        "{what}: the refusal does not name the quota ({QUOTA_BYTES_SHOWN}, {QUOTA_FILES_SHOWN}): {message}"
    );
    let summary = reply.opt_str("guidance_summary").unwrap_or_default();
    ensure!(
        summary.contains(&format!(
            "may hold {QUOTA_BYTES_SHOWN} in {QUOTA_FILES} files"
        )),
        "{what}: the advice does not name the quota: {summary}"
    );
    Ok(())
}

async fn command(server: &Server, session: &str, line: &str) -> Result<Reply> {
    server
        .call(
            "execute_command",
            json!({ "command": line, "session_id": session }),
        )
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn python_many_small_files_stop_at_the_entry_quota_with_state_kept() -> Result<()> {
    let server = server().await?;
    server.python("py", "kept = 42\nmade = 0").await?;
    let many = "for i in range(1000):\n    with open(f'f{i}.txt', 'w') as f:\n        f.write('x' * 100)\n    made += 1";
    let reply = server
        .exec("python", many, json!({ "session_id": "py" }))
        .await?;
    assert_disk_quota(&reply, "many files")?;
    let message = reply.opt_str("error_message").unwrap_or_default();
    ensure!(
        message.contains("[Errno 19]") && message.contains("disk_quota: "),
        "{message}"
    );
    let held = assert_within_quota(&server, "py")?;
    ensure!(
        held.1 >= QUOTA_FILES - 5,
        "stopped near the quota: {held:?}"
    );
    // The interpreter is intact: the loop's progress and earlier variables are there.
    let state = server.python("py", "(kept, made)").await?;
    let made: u64 = state
        .str("result")
        .trim_matches(|c| c == '(' || c == ')')
        .rsplit(", ")
        .next()
        .and_then(|n| n.parse().ok())
        .context("made")?;
    ensure!(
        state.str("result").starts_with("(42, ") && (190..=QUOTA_FILES).contains(&made),
        "{state:?}"
    );
    // Deleting files makes writes work again, in the same session.
    let deleted = command(&server, "py", "rm f1*.txt").await?;
    ensure!(!deleted.is_error, "{deleted:?}");
    server
        .python("py", "open('after.txt', 'w').write('ok')\nkept")
        .await?;
    assert_within_quota(&server, "py")?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn one_big_file_and_tmp_count_against_the_byte_quota() -> Result<()> {
    let server = server().await?;
    let big = "with open('big.bin', 'wb') as f:\n    for _ in range(100):\n        f.write(bytes(100_000))";
    let reply = server
        .exec("python", big, json!({ "session_id": "big" }))
        .await?;
    assert_disk_quota(&reply, "one big file")?;
    let held = assert_within_quota(&server, "big")?;
    ensure!(
        held.0 > QUOTA_BYTES - 200_000,
        "stopped near the quota: {held:?}"
    );
    let size = std::fs::metadata(server.workspace_of("big").context("app")?.join("big.bin"))?.len();
    ensure!(size <= QUOTA_BYTES, "big.bin is {size} bytes");
    // /tmp counts too: with /app nearly full, 1 MB there does not fit...
    let reply = server
        .exec(
            "python",
            "open('/tmp/scratch.bin', 'wb').write(bytes(1_000_000))",
            json!({ "session_id": "big" }),
        )
        .await?;
    assert_disk_quota(&reply, "/tmp")?;
    assert_within_quota(&server, "big")?;
    // ...and after removing the big file, /tmp takes most of the quota and /app the rest.
    server
        .python(
            "big",
            "import os\nos.remove('big.bin')\nopen('/tmp/scratch.bin', 'wb').write(bytes(3_000_000))",
        )
        .await?;
    let reply = server
        .exec(
            "python",
            "open('more.bin', 'wb').write(bytes(3_000_000))",
            json!({ "session_id": "big" }),
        )
        .await?;
    assert_disk_quota(&reply, "/app after /tmp")?;
    assert_within_quota(&server, "big")?;
    // A file deleted while still open keeps its space until it is closed: it counts.
    let hidden = "import os\nh = open('/tmp/hidden.bin', 'wb')\nos.remove('/tmp/hidden.bin')\nos.remove('/tmp/scratch.bin')\nh.write(bytes(3_000_000))\nh.flush()\nopen('visible.bin', 'wb').write(bytes(3_000_000))";
    let reply = server
        .exec("python", hidden, json!({ "session_id": "big" }))
        .await?;
    assert_disk_quota(&reply, "beside a deleted open file")?;
    // reset_workspace empties /app and /tmp: the same session writes again.
    let reset = server
        .call("reset_workspace", json!({ "session_id": "big" }))
        .await?;
    ensure!(!reset.is_error, "{reset:?}");
    server
        .python("big", "open('again.bin', 'wb').write(bytes(4_000_000))")
        .await?;
    assert_within_quota(&server, "big")?;
    // Rewriting a file in place many times is not growth: it always fits.
    server
        .python(
            "big",
            "for i in range(30):\n    with open('again.bin', 'wb') as f:\n        f.write(bytes(4_000_000))\n    with open('/tmp/log', 'w') as f:\n        f.write(str(i))",
        )
        .await?;
    assert_within_quota(&server, "big")?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_shared_volume_is_not_charged_and_moves_from_it_are_copies() -> Result<()> {
    let shared = tempfile::tempdir()?;
    let shared_path = shared.path().to_string_lossy().into_owned();
    let server = Server::start_with_env(&[
        ("SANDBOX_DEFAULT_DISK_QUOTA_BYTES", "5000000"),
        ("SANDBOX_DEFAULT_DISK_QUOTA_FILES", "200"),
        ("SANDBOX_SHARED_DIR", &shared_path),
        ("SANDBOX_SHARED_WRITABLE", "1"),
    ])
    .await?;
    // 9 MB on the shared volume: not the session's, not charged.
    server
        .python(
            "sv",
            "for name in 'abc':\n    open(f'/shared/{name}.bin', 'wb').write(bytes(3_000_000))",
        )
        .await?;
    // A rename into /app would bring them in unseen: it is EXDEV, and shutil.move copies.
    let moved = server
        .python(
            "sv",
            "import errno, os, shutil\ntry:\n    os.rename('/shared/a.bin', '/app/a.bin')\n    r = 'renamed'\nexcept OSError as e:\n    r = errno.errorcode[e.errno]\nshutil.move('/shared/a.bin', '/app/a.bin')\nr",
        )
        .await?;
    ensure!(moved.str("result") == "'EXDEV'", "{moved:?}");
    let reply = server
        .exec(
            "python",
            "import shutil\nshutil.move('/shared/b.bin', '/app/b.bin')",
            json!({ "session_id": "sv" }),
        )
        .await?;
    assert_disk_quota(&reply, "the second move")?;
    assert_within_quota(&server, "sv")?;
    // The same through the shell: `mv` copies, and the copy does not fit.
    let reply = command(&server, "sv", "rm -f b.bin && mv /shared/c.bin c.bin").await?;
    assert_disk_quota(&reply, "mv")?;
    ensure!(
        shared.path().join("c.bin").exists(),
        "a refused move keeps its source"
    );
    assert_within_quota(&server, "sv")?;
    // One write larger than what a host call may copy (128 MiB) lands whole on the shared
    // volume too (it used to fail "Out of memory").
    let big = server
        .python(
            "sv",
            "open('/shared/big.bin', 'wb').write(bytes(200 << 20))",
        )
        .await?;
    ensure!(big.str("result") == (200u64 << 20).to_string(), "{big:?}");
    ensure!(std::fs::metadata(shared.path().join("big.bin"))?.len() == 200 << 20);
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn javascript_hits_the_quota_as_disk_quota() -> Result<()> {
    let server = server().await?;
    let session = json!({ "session_id": "js" });
    let made = server
        .exec("javascript", "var kept = 7; var made = 0;", session.clone())
        .await?;
    ensure!(!made.is_error, "{made:?}");
    let many =
        "for (let i = 0; i < 1000; i++) { writeText('f' + i + '.txt', 'x'.repeat(100)); made++; }";
    let reply = server.exec("javascript", many, session.clone()).await?;
    assert_disk_quota(&reply, "JavaScript files")?;
    ensure!(
        reply
            .opt_str("error_message")
            .is_some_and(|m| m.contains("EDQUOT") && m.contains("disk_quota: ")),
        "{reply:?}"
    );
    assert_within_quota(&server, "js")?;
    let state = server
        .exec("javascript", "[kept, made].join(',')", session.clone())
        .await?;
    ensure!(
        state
            .opt_str("result")
            .and_then(|r| r
                .strip_prefix("\"7,")?
                .strip_suffix('"')?
                .parse::<u64>()
                .ok())
            .is_some_and(|made| (190..=QUOTA_FILES).contains(&made)),
        "the context survived: {state:?}"
    );
    // One big file, through the std FILE API (QuickJS's own [value, err] style).
    // An error of its own, thrown when the FILE reports a write error: still `disk_quota`,
    // because the worker saw the refusal.
    let big = "const f = std.open('big.bin', 'w'); const chunk = 'y'.repeat(100000); for (let i = 0; i < 100; i++) { f.puts(chunk); } const failed = f.error(); f.close(); if (failed) throw new Error('write failed');";
    let _ = command(&server, "js", "rm f*.txt").await?;
    let reply = server.exec("javascript", big, session.clone()).await?;
    assert_disk_quota(&reply, "JavaScript big file")?;
    let size = std::fs::metadata(server.workspace_of("js").context("app")?.join("big.bin"))?.len();
    ensure!(
        size <= QUOTA_BYTES && size > 4_000_000,
        "big.bin is {size} bytes"
    );
    assert_within_quota(&server, "js")?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_shell_is_refused_with_disk_quota() -> Result<()> {
    let server = server().await?;
    server.python("sh", "x = 1").await?;
    // A redirect that would write 15 MB.
    let reply = command(&server, "sh", "seq 1 2000000 > big.txt").await?;
    assert_disk_quota(&reply, "redirect")?;
    // The write is the WASI layer's, as a tool's: its errno on stderr, the refusal's numbers
    // in the outcome.
    ensure!(
        reply
            .str("stderr")
            .contains("big.txt: write error: Quota exceeded"),
        "{reply:?}"
    );
    ensure!(
        reply.str("error_message").starts_with("disk_quota: "),
        "{reply:?}"
    );
    let held = assert_within_quota(&server, "sh")?;
    // cp of a 3 MB file beside it: refused whole.
    let make = command(
        &server,
        "sh",
        "rm big.txt && seq 1 400000 > three.txt && du -b three.txt",
    )
    .await?;
    ensure!(!make.is_error, "{make:?}");
    let reply = command(&server, "sh", "cp three.txt copy.txt").await?;
    assert_disk_quota(&reply, "cp")?;
    assert_within_quota(&server, "sh")?;
    // mkdir -p deeper than the entries left: nothing is made.
    let deep = (0..250)
        .map(|i| format!("d{i}"))
        .collect::<Vec<_>>()
        .join("/");
    let reply = command(&server, "sh", &format!("mkdir -p {deep}")).await?;
    assert_disk_quota(&reply, "mkdir -p")?;
    ensure!(
        !server
            .workspace_of("sh")
            .context("app")?
            .join("d0")
            .exists(),
        "a refused mkdir -p makes nothing"
    );
    // Many small files through `touch`.
    let names = (0..300)
        .map(|i| format!("n{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    let reply = command(&server, "sh", &format!("touch {names}")).await?;
    assert_disk_quota(&reply, "touch")?;
    let after = assert_within_quota(&server, "sh")?;
    ensure!(
        after.1 == QUOTA_FILES,
        "touch stopped at the quota: {after:?} (before {held:?})"
    );
    // The session is usable: delete and write again; Python's variables are intact.
    let ok = command(
        &server,
        "sh",
        "rm n* copy.txt && seq 1 1000 > fits.txt && mkdir -p a/b/c",
    )
    .await?;
    ensure!(!ok.is_error, "{ok:?}");
    let state = server.python("sh", "x").await?;
    ensure!(state.str("result") == "1", "{state:?}");
    assert_within_quota(&server, "sh")?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn advice_and_tools_quote_the_real_quota() -> Result<()> {
    let server = server().await?;
    let reply = server
        .exec(
            "python",
            "for i in range(500):\n    open(f'n{i}', 'w').close()",
            json!({ "session_id": "adv" }),
        )
        .await?;
    assert_disk_quota(&reply, "files")?;
    let summary = reply.opt_str("guidance_summary").unwrap_or_default();
    ensure!(
        summary.contains("4.77 MiB in 200 files, directories and links")
            && summary.contains(" in 200."),
        "{summary}"
    );
    let fixes = reply.field("actionable_guidance").to_string();
    for needle in [
        "du -sh /app /tmp",
        "rm -r /app/",
        "reset_workspace",
        "flavor",
    ] {
        ensure!(fixes.contains(needle), "{needle}: {fixes}");
    }
    let next = reply.field("next_call");
    ensure!(
        next["tool"] == "execute_command" && next["arguments"]["command"] == "du -sh /app /tmp",
        "{next}"
    );
    // The advised call works and shows the space used.
    let du = server
        .call("execute_command", next["arguments"].clone())
        .await?;
    ensure!(!du.is_error && du.str("stdout").contains("/app"), "{du:?}");
    // get_workspace_info reports the quota and what is used.
    let info = server
        .call("get_workspace_info", json!({ "session_id": "adv" }))
        .await?;
    let usage = info.field("disk_usage");
    ensure!(
        usage["bytes_quota"] == QUOTA_BYTES
            && usage["entries_quota"] == QUOTA_FILES
            && usage["entries_used"] == QUOTA_FILES,
        "{usage}"
    );
    ensure!(
        info.field("limits")["disk_quota_files"] == QUOTA_FILES,
        "{info:?}"
    );
    // create_session and list_runtimes show the limits too.
    let created = server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "big-one", "flavor": "large" }),
        )
        .await?;
    let limits = created.field("limits");
    ensure!(
        limits["disk_quota_bytes"] == 16u64 << 30 && limits["disk_quota_files"] == 100_000,
        "{limits}"
    );
    let runtimes = server.call("list_runtimes", json!({})).await?;
    let flavors = runtimes.field("flavors");
    ensure!(
        flavors["small"]["disk_quota_bytes"] == 1u64 << 30
            && flavors["medium"]["disk_quota_files"] == 50_000,
        "{flavors}"
    );
    let defaults: &Value = &runtimes.field("runtimes")[0]["default_limits"];
    ensure!(defaults["disk_quota_bytes"] == QUOTA_BYTES, "{defaults}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn code_longer_than_the_configured_limit_is_an_invalid_argument() -> Result<()> {
    let server = Server::start_with_env(&[("SANDBOX_MAX_CODE_BYTES", "1000")]).await?;
    let fits = format!("x = 1{}", " ".repeat(995));
    let long = format!("x = 1{}", " ".repeat(996));
    let ok = server
        .exec("python", &fits, json!({ "session_id": "code" }))
        .await?;
    ensure!(!ok.is_error, "{ok:?}");
    for (tool, args) in [
        (
            "execute_code",
            json!({ "language": "python", "code": long, "session_id": "code" }),
        ),
        (
            "execute_command",
            json!({ "command": format!("echo {}", "a".repeat(1000)), "session_id": "code" }),
        ),
        (
            "get_execution_guidance",
            json!({ "language": "python", "code": long }),
        ),
    ] {
        let refused = server.call_refused(tool, args).await?;
        ensure!(
            rpc_error_type(&refused) == Some("invalid_argument")
                && refused.message.contains("the limit is 1000"),
            "{tool}: {refused:?}"
        );
    }
    Ok(())
}

/// One write larger than the file cap (256 MiB in the small flavor) and larger than what a
/// host call may copy (128 MiB): the write is shortened at the cap as on Linux, the next one
/// fails with `EFBIG`, and both languages report `disk_quota` with the per-file advice (it
/// used to be "Out of memory", a `runtime_error`).
#[tokio::test(flavor = "multi_thread")]
async fn one_write_past_the_file_cap_is_disk_quota() -> Result<()> {
    let server = Server::start().await?;
    server.forbid_own_host_paths();
    const CAP: u64 = 256 << 20;
    let cases = [
        ("python", "open('big.bin', 'wb').write(bytes(300 << 20))"),
        ("javascript", "writeText('big.bin', 'x'.repeat(300 << 20))"),
    ];
    for (language, code) in cases {
        let session = format!("cap-{language}");
        let reply = server
            .exec(language, code, json!({ "session_id": session }))
            .await?;
        ensure!(
            reply.opt_str("error_type") == Some("disk_quota"),
            "{language}: {reply:?}"
        );
        ensure!(
            reply.str("error_message").contains("File too large"),
            "{language}: {reply:?}"
        );
        ensure!(
            reply
                .opt_str("guidance_summary")
                .is_some_and(|s| s.contains("largest size a file may have")),
            "{language}: {reply:?}"
        );
        let app = server.workspace_of(&session).context("no /app")?;
        let size = std::fs::metadata(app.join("big.bin"))?.len();
        ensure!(
            size == CAP,
            "{language}: the write stops at the cap: {size}"
        );
        std::fs::remove_file(app.join("big.bin"))?;
    }
    server.stop().await
}
