//! resources/read of `sandbox://sessions/{id}/files/{path}` serves regular files beneath that
//! session's `/app` (following links that stay inside) and nothing else: a guest-made link out
//! of `/app` (relative, in the middle of a path, to a file, to a sibling session's workspace), a
//! host-planted absolute link, a FIFO, a device node, a directory or a missing file all get
//! JSON-RPC error -32002 promptly, whose message holds no host path and no byte of the target,
//! and nothing outside the sandbox changes.

use std::time::Duration;

use anyhow::{Context, Result, ensure};
use rmcp::model::{ErrorCode, ResourceContents};
use sandbox_tests::host::{self, HostPaths, Victim};
use sandbox_tests::{Client, Server};
use serde_json::json;

/// Set on the server so a leak of its environment (`/proc/self/environ`) is recognisable.
const ENV_SECRET: &str = "ENV-SECRET-7f3a9c41d2";

/// Enough `..` to reach `/` from any workspace: the host paths are far shallower than this.
const TO_ROOT: &str = "../../../../../../../../../../../../../../..";

fn uri(session: &str, path: &str) -> String {
    format!("sandbox://sessions/{session}/files/{path}")
}

/// The text of the first content of a served resource (base64 for binary).
fn served_text(result: &rmcp::model::ReadResourceResult) -> String {
    match result.contents.first() {
        Some(ResourceContents::TextResourceContents { text, .. }) => text.clone(),
        Some(ResourceContents::BlobResourceContents { blob, .. }) => blob.clone(),
        other => format!("{other:?}"),
    }
}

/// Expects resources/read of `uri` to be refused with -32002 within 5 s, with no host path and
/// none of `forbidden` in the error.
async fn expect_not_found(
    client: &Client,
    uri: &str,
    paths: &HostPaths,
    forbidden: &[&str],
) -> Result<()> {
    let error = client.read_refused(uri).await?;
    ensure!(
        error.code == ErrorCode::RESOURCE_NOT_FOUND,
        "{uri}: expected -32002, got {error:?}"
    );
    paths.check_error(uri, &error);
    let everything = format!("{} {:?}", error.message, error.data);
    for bad in forbidden {
        ensure!(
            !everything.contains(bad),
            "{uri}: the error quotes {bad:?}: {everything}"
        );
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn files_and_links_that_stay_inside_app_are_served() -> Result<()> {
    let server = Server::start().await?;
    server.forbid_own_host_paths();
    let made = server
        .exec(
            "python",
            "import os\nos.makedirs('sub/deeper')\nopen('a.txt', 'w').write('alpha')\nopen('sub/deeper/b.txt', 'w').write('beta')\nos.symlink('sub/deeper/b.txt', 'to_b')\nos.symlink('sub', 'subdir')\nos.symlink('../../a.txt', 'sub/deeper/up_a')\n'ok'",
            json!({ "session_id": "inside" }),
        )
        .await?;
    ensure!(!made.is_error, "{made:?}");
    for (path, want) in [
        ("a.txt", "alpha"),
        ("sub/deeper/b.txt", "beta"),
        ("to_b", "beta"),
        ("subdir/deeper/b.txt", "beta"),
        ("sub/deeper/up_a", "alpha"),
    ] {
        let read = server
            .read_resource(&uri("inside", path))
            .await
            .with_context(|| format!("{path} must be served (links inside /app are followed)"))?;
        assert_eq!(served_text(&read), want, "{path}");
    }
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn links_out_of_app_are_not_followed() -> Result<()> {
    let victim = Victim::new()?;
    let server = Server::start_with_env(&[("SANDBOX_TEST_SECRET", ENV_SECRET)]).await?;
    server.forbid_own_host_paths();
    let made = server
        .exec(
            "python",
            &format!(
                "import os\nos.symlink('{TO_ROOT}', 'up')\nos.makedirs('mid/deep')\nos.symlink('{TO_ROOT}', 'mid/deep/hop')\nos.symlink('{TO_ROOT}/etc/passwd', 'pw')\n'ok'"
            ),
            json!({ "session_id": "out" }),
        )
        .await?;
    ensure!(!made.is_error, "guest code makes the links: {made:?}");
    let app = server.workspace_of("out").context("workspace of 'out'")?;
    // A link to the victim by the relative path a guest can compute, and absolute links (which
    // a guest cannot make through WASI) planted on the host.
    let to_victim = host::relative_path(&app, &victim.path());
    let made = server
        .exec(
            "python",
            &format!("import os\nos.symlink({:?}, 'vic')", to_victim.display()),
            json!({ "session_id": "out" }),
        )
        .await?;
    ensure!(!made.is_error, "{made:?}");
    std::os::unix::fs::symlink("/etc", app.join("abs_etc"))?;
    std::os::unix::fs::symlink(victim.path(), app.join("abs_victim"))?;
    std::os::unix::fs::symlink(victim.file(), app.join("abs_secret"))?;
    std::os::unix::fs::symlink("/proc/self/environ", app.join("abs_environ"))?;
    // The links really lead out: the host follows them.
    ensure!(app.join("up/etc/passwd").is_file());
    ensure!(app.join("mid/deep/hop/etc/passwd").is_file());
    assert_eq!(
        std::fs::read_to_string(app.join("vic/secret.txt"))?,
        victim.secret
    );

    let victim_path = victim.path().display().to_string();
    let uris = [
        "up/etc/passwd".to_owned(),
        "up/etc/hostname".to_owned(),
        "up/proc/self/environ".to_owned(),
        format!("up/proc/{}/environ", server.pid),
        format!("up{victim_path}/secret.txt"),
        "mid/deep/hop/etc/passwd".to_owned(),
        format!("mid/deep/hop{victim_path}/sub/nested.txt"),
        "pw".to_owned(),
        "vic/secret.txt".to_owned(),
        "vic/sub/nested.txt".to_owned(),
        "abs_etc/passwd".to_owned(),
        "abs_victim/secret.txt".to_owned(),
        "abs_secret".to_owned(),
        "abs_environ".to_owned(),
    ];
    let paths = server.host_paths().with(&app);
    let forbidden = ["root:x:0:0", ENV_SECRET, &victim.secret];
    let mut served = Vec::new();
    for path in &uris {
        if let Err(e) = expect_not_found(&server, &uri("out", path), &paths, &forbidden).await {
            served.push(format!("{e:#}"));
        }
    }
    ensure!(
        served.is_empty(),
        "{} of {} leaked:\n{}",
        served.len(),
        uris.len(),
        served.join("\n")
    );
    victim.assert_unchanged("after reading through links");
    let alive = server
        .exec("python", "1 + 1", json!({ "session_id": "out" }))
        .await?;
    assert_eq!(alive.str("result"), "2", "the session still works");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_link_into_a_sibling_sessions_workspace_is_not_followed() -> Result<()> {
    let server = Server::start().await?;
    server.forbid_own_host_paths();
    let secret = "SIBLING-SECRET-0d9e2b";
    let b = server
        .exec(
            "python",
            &format!("open('secret.txt', 'w').write('{secret}')"),
            json!({ "session_id": "victim-b" }),
        )
        .await?;
    ensure!(!b.is_error, "{b:?}");
    server
        .exec("python", "1", json!({ "session_id": "attacker-a" }))
        .await?;
    let a_app = server.workspace_of("attacker-a").context("A's workspace")?;
    let b_app = server.workspace_of("victim-b").context("B's workspace")?;
    let b_before = host::Snapshot::of(&b_app);
    let to_b = host::relative_path(&a_app, &b_app);
    let made = server
        .exec(
            "python",
            &format!(
                "import os\nos.symlink({:?}, 'sib')\nos.symlink({:?}, 'sibfile')",
                to_b.display(),
                to_b.join("secret.txt").display()
            ),
            json!({ "session_id": "attacker-a" }),
        )
        .await?;
    ensure!(!made.is_error, "{made:?}");
    assert_eq!(
        std::fs::read_to_string(a_app.join("sib/secret.txt"))?,
        secret,
        "the link leads to B's file on the host"
    );
    let peek = server
        .exec(
            "python",
            "import os\ntry:\n    r = open('sib/secret.txt').read()\nexcept OSError as e:\n    r = type(e).__name__\nr",
            json!({ "session_id": "attacker-a" }),
        )
        .await?;
    ensure!(
        !peek.str("result").contains(secret),
        "the guest itself reads B: {peek:?}"
    );

    let paths = server.host_paths();
    for path in ["sib/secret.txt", "sibfile"] {
        expect_not_found(&server, &uri("attacker-a", path), &paths, &[secret]).await?;
    }
    assert_eq!(
        host::Snapshot::of(&b_app),
        b_before,
        "B's files are unchanged"
    );
    let own = server.read_resource(&uri("victim-b", "secret.txt")).await?;
    assert_eq!(served_text(&own), secret, "B still reads its own file");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn fifos_devices_directories_and_missing_files_are_refused_promptly() -> Result<()> {
    host::require_root("device nodes (mknod)")?;
    let server = Server::start().await?;
    server.forbid_own_host_paths();
    let made = server
        .exec(
            "python",
            "import os\nos.makedirs('dir/inner')\nopen('dir/inner/f.txt', 'w').write('x')\nos.symlink('fifo', 'to_fifo')\nos.symlink('dir', 'to_dir')\nos.symlink('missing.txt', 'dangling')",
            json!({ "session_id": "odd" }),
        )
        .await?;
    ensure!(!made.is_error, "{made:?}");
    let app = server.workspace_of("odd").context("workspace")?;
    host::mkfifo(&app.join("fifo"))?;
    host::mkfifo(&app.join("dir/inner/fifo2"))?;
    let mut odd = vec![
        "fifo",
        "to_fifo",
        "dir/inner/fifo2",
        "dir",
        "dir/",
        "dir/inner",
        "to_dir",
        "missing.txt",
        "dir/missing",
        "dangling",
        "dir/inner/f.txt/below",
    ];
    ensure!(host::mknod_char(&app.join("null"), 1, 3)?, "mknod as root");
    ensure!(host::mknod_char(&app.join("zero"), 1, 5)?, "mknod as root");
    odd.extend(["null", "zero"]);
    let paths = server.host_paths();
    for path in odd {
        let started = std::time::Instant::now();
        expect_not_found(&server, &uri("odd", path), &paths, &[]).await?;
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{path}: {:?}",
            started.elapsed()
        );
    }
    expect_not_found(&server, &uri("nobody", "a.txt"), &paths, &[]).await?;
    let alive = server
        .exec("python", "1 + 1", json!({ "session_id": "odd" }))
        .await?;
    assert_eq!(alive.str("result"), "2");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_javascript_guest_link_out_of_app_is_not_followed() -> Result<()> {
    let victim = Victim::new()?;
    let server = Server::start().await?;
    server.forbid_own_host_paths();
    server
        .exec("javascript", "1", json!({ "session_id": "jsout" }))
        .await?;
    let app = server.workspace_of("jsout").context("workspace")?;
    let to_victim = host::relative_path(&app, &victim.path());
    let made = server
        .exec(
            "javascript",
            &format!(
                "typeof os.symlink === 'function' ? JSON.stringify([os.symlink({TO_ROOT:?}, 'up'), os.symlink({:?}, 'vic')]) : 'no os.symlink'",
                to_victim.display().to_string()
            ),
            json!({ "session_id": "jsout" }),
        )
        .await?;
    ensure!(!made.is_error, "{made:?}");
    if made.str("result").contains("no os.symlink") {
        // This QuickJS build has no os.symlink: plant what it would have made.
        eprintln!("QuickJS has no os.symlink here: the links are planted on the host");
        std::os::unix::fs::symlink(TO_ROOT, app.join("up"))?;
        std::os::unix::fs::symlink(&to_victim, app.join("vic"))?;
    } else {
        assert_eq!(made.str("result"), "\"[0,0]\"", "{made:?}");
    }
    ensure!(app.join("up/etc/passwd").is_file());
    ensure!(app.join("vic/secret.txt").is_file());
    let paths = server.host_paths();
    let forbidden = ["root:x:0:0", victim.secret.as_str()];
    for path in ["up/etc/passwd", "up/proc/self/environ", "vic/secret.txt"] {
        expect_not_found(&server, &uri("jsout", path), &paths, &forbidden).await?;
    }
    victim.assert_unchanged("after a JavaScript link out");
    server.stop().await
}
