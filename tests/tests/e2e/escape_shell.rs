//! The worker's shell (`execute_command`) over guest-made links: every built-in that reads,
//! writes, lists, copies, moves or deletes through a link out of `/app` is refused
//! (`path_restriction` or a failing status) without reading or changing anything outside and
//! without naming a host path; `rm -rf link/` removes at most the link; a FIFO planted in the
//! workspace gets a prompt error instead of a hung command; and a guest hard link to `/data`
//! is refused with WASI's EPERM, leaving `/data` as it was.

use std::os::unix::fs::MetadataExt;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use sandbox_tests::host::{self, Victim};
use sandbox_tests::{Reply, Server};
use serde_json::json;

/// Enough `..` to reach `/` from any workspace.
const TO_ROOT: &str = "../../../../../../../../../../../../../../..";

async fn command(server: &Server, session: &str, command: &str) -> Result<Reply> {
    tokio::time::timeout(
        Duration::from_secs(30),
        server.call(
            "execute_command",
            json!({ "command": command, "session_id": session, "timeout": 20 }),
        ),
    )
    .await
    .with_context(|| format!("{command}: no answer in 30 s"))?
}

/// Whether a command result is a refusal: a tool error that is a path restriction or a
/// failing exit status.
fn refused(reply: &Reply) -> bool {
    reply.is_error && (reply.str("error_type") == "path_restriction" || reply.u64("exit_code") != 0)
}

#[tokio::test(flavor = "multi_thread")]
async fn shell_commands_do_not_follow_links_out_of_app() -> Result<()> {
    let victim = Victim::new()?;
    let server = Server::start().await?;
    server.forbid_own_host_paths();
    let made = server
        .exec(
            "python",
            "open('mine.txt', 'w').write('mine')",
            json!({ "session_id": "sh" }),
        )
        .await?;
    ensure!(!made.is_error, "{made:?}");
    let app = server.workspace_of("sh").context("workspace")?;
    // The shell has no `ln` today; whichever made it, the guest owns the link.
    let ln = command(&server, "sh", &format!("ln -s {TO_ROOT} up")).await?;
    let made = server
        .exec(
            "python",
            &format!(
                "import os\nos.path.islink('up') or os.symlink('{TO_ROOT}', 'up')\nos.symlink({:?}, 'vic')",
                host::relative_path(&app, &victim.path()).display()
            ),
            json!({ "session_id": "sh" }),
        )
        .await?;
    ensure!(!made.is_error, "ln: {ln:?}\npython: {made:?}");
    ensure!(app.join("up/etc/passwd").is_file(), "the links lead out");
    ensure!(app.join("vic/secret.txt").is_file());

    let v = victim.path().display().to_string();
    let hostname = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
    let mut forbidden = vec!["root:x:0:0", victim.secret.as_str()];
    if hostname.trim().len() >= 4 {
        forbidden.push(hostname.trim());
    }
    let commands = [
        "cat up/etc/hostname".to_owned(),
        "cat up/etc/passwd".to_owned(),
        "ls up/".to_owned(),
        "ls up/etc".to_owned(),
        "ls -la vic/".to_owned(),
        "cat vic/secret.txt".to_owned(),
        "cp up/etc/hostname x".to_owned(),
        "cp vic/secret.txt y".to_owned(),
        "cp -r vic/ z".to_owned(),
        format!("echo x > up{v}/secret.txt"),
        format!("echo x > up{v}/new.txt"),
        "echo x >> vic/secret.txt".to_owned(),
        "echo x > vic/new.txt".to_owned(),
        "echo x | tee vic/tee.txt".to_owned(),
        format!("mkdir -p up{v}/made"),
        "mkdir -p vic/made".to_owned(),
        "touch vic/touched".to_owned(),
        "grep -r root up/etc".to_owned(),
        "grep -r VICTIM vic/".to_owned(),
        "head -c 100 up/etc/passwd".to_owned(),
        "tail up/etc/passwd".to_owned(),
        "wc -c vic/secret.txt".to_owned(),
        "sed -n 1p up/etc/passwd".to_owned(),
        "sed -i s/VICTIM/x/ vic/secret.txt".to_owned(),
        "sort vic/secret.txt".to_owned(),
        "du -a vic/".to_owned(),
        "mv vic/secret.txt stolen.txt".to_owned(),
        "rm vic/secret.txt".to_owned(),
        "rm -rf vic/sub".to_owned(),
        "chmod 777 vic/secret.txt".to_owned(),
        "cd up && cat etc/passwd".to_owned(),
        "cd vic && cat secret.txt".to_owned(),
    ];
    let paths = server.host_paths();
    for line in &commands {
        let reply = command(&server, "sh", line).await?;
        ensure!(refused(&reply), "{line}: not refused: {reply:?}");
        paths.check_reply(line, &reply);
        let out = format!("{}{}", reply.str("stdout"), reply.str("stderr"));
        for bad in &forbidden {
            ensure!(
                !out.contains(bad),
                "{line}: output holds {bad:?}: {reply:?}"
            );
        }
        victim.assert_unchanged(line);
    }
    for made in ["x", "y", "z", "stolen.txt"] {
        ensure!(!app.join(made).exists(), "{made} was created");
    }
    ensure!(app.join("mine.txt").is_file(), "mine.txt stayed");

    // find: refused, or it lists the link itself without following it.
    for (line, start) in [
        ("find up", "up"),
        ("find up/", "up/"),
        ("find vic/ -name '*.txt'", "vic/"),
        ("find vic/ -type f", "vic/"),
    ] {
        let find = command(&server, "sh", line).await?;
        paths.check_reply(line, &find);
        let listed: Vec<&str> = find.str("stdout").lines().collect();
        ensure!(
            refused(&find) || listed.iter().all(|l| *l == start),
            "{line}: {find:?}"
        );
        victim.assert_unchanged(line);
    }
    // Removing through the trailing slash deletes at most the link.
    for link in ["up", "vic"] {
        let rm = command(&server, "sh", &format!("rm -rf {link}/")).await?;
        paths.check_reply("rm -rf", &rm);
        victim.assert_unchanged("rm -rf link/");
        let gone = std::fs::symlink_metadata(app.join(link)).is_err();
        ensure!(
            (!rm.is_error && gone) || (refused(&rm) && !gone),
            "rm -rf {link}/: {rm:?} (link gone: {gone})"
        );
    }
    // Moving onto a link to a directory: refused, or the link itself replaced; never into
    // the victim.
    std::os::unix::fs::symlink(host::relative_path(&app, &victim.path()), app.join("vic2"))?;
    let mv = command(&server, "sh", "mv mine.txt vic2/").await?;
    paths.check_reply("mv", &mv);
    victim.assert_unchanged("mv mine.txt vic2/");
    ensure!(std::path::Path::new("/etc/passwd").is_file());
    victim.assert_unchanged("the end");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fifo_in_the_workspace_gets_a_prompt_error() -> Result<()> {
    let server = Server::start().await?;
    server.forbid_own_host_paths();
    server
        .exec(
            "python",
            "open('a.txt', 'w').write('a')",
            json!({ "session_id": "fifo" }),
        )
        .await?;
    let app = server.workspace_of("fifo").context("workspace")?;
    host::mkfifo(&app.join("fifo"))?;
    for line in [
        "cat fifo",
        "head fifo",
        "tail fifo",
        "wc -l fifo",
        "grep x fifo",
        "sort fifo",
        "sed -n 1p fifo",
        "cp fifo copy",
        "cat a.txt fifo",
    ] {
        let reply = command(&server, "fifo", line).await?;
        ensure!(reply.is_error, "{line}: {reply:?}");
        ensure!(
            reply.elapsed < Duration::from_secs(5),
            "{line}: took {:?}: {reply:?}",
            reply.elapsed
        );
        server.host_paths().check_reply(line, &reply);
    }
    let alive = command(&server, "fifo", "cat a.txt").await?;
    assert_eq!(alive.str("stdout"), "a", "{alive:?}");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn guest_hard_links_are_refused_and_data_is_untouched() -> Result<()> {
    let victim = Victim::new()?;
    let data = host::data_dir().context("the data directory")?;
    let fuel_file = data.join("import-fuel.json");
    let before = (
        std::fs::read(&fuel_file)?,
        std::fs::metadata(&fuel_file)?.nlink(),
    );
    let listing = |dir: &std::path::Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    };
    let data_names = listing(&data);
    let server = Server::start().await?;
    server.forbid_own_host_paths();
    server
        .exec("python", "1", json!({ "session_id": "hl" }))
        .await?;
    let app = server.workspace_of("hl").context("workspace")?;
    let relative = host::relative_path(&app, &victim.path());
    let reply = server
        .exec(
            "python",
            &format!(
                "import os\nos.symlink({:?}, 'vic')\nout = []\nfor src, dst in [('/data/import-fuel.json', '/app/hl'), ('vic/secret.txt', 'hl2')]:\n    try:\n        os.link(src, dst)\n        out.append('linked')\n    except OSError as e:\n        out.append((e.errno, e.strerror))\nout",
                relative.display()
            ),
            json!({ "session_id": "hl" }),
        )
        .await?;
    ensure!(!reply.is_error, "{reply:?}");
    let result = reply.str("result");
    ensure!(
        result.starts_with("[(63, 'Operation not permitted'), ("),
        "WASI's EPERM for /data, an error through the link: {reply:?}"
    );
    ensure!(!result.contains("linked"), "{reply:?}");
    assert_eq!(
        std::fs::metadata(victim.file())?.nlink(),
        1,
        "no link to the victim"
    );
    server.host_paths().check_reply("os.link", &reply);
    ensure!(std::fs::symlink_metadata(app.join("hl")).is_err());
    ensure!(std::fs::symlink_metadata(app.join("hl2")).is_err());
    let after = (
        std::fs::read(&fuel_file)?,
        std::fs::metadata(&fuel_file)?.nlink(),
    );
    ensure!(
        before == after,
        "/data/import-fuel.json changed (content or link count)"
    );
    assert_eq!(listing(&data), data_names, "/data holds nothing new");
    victim.assert_unchanged("os.link");
    server.stop().await
}
