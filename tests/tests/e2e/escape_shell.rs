//! The worker's shell (`execute_command`) over guest-made links: every built-in that reads,
//! writes, lists, copies, moves or deletes through a link out of `/app` is refused with
//! `path_restriction`, by the shell itself (the jail's Landlock and seccomp layers are off, and
//! each command first works on a real directory in `/app`), without reading or changing
//! anything outside and without naming a host path; `rm -rf link/` removes at most the link;
//! a FIFO planted in the workspace gets a prompt error instead of a hung command; and a guest
//! hard link to `/data` is refused with WASI's EPERM, leaving `/data` as it was.

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

/// Whether a command result is a refusal by the shell's confinement: a tool error classified
/// `path_restriction` with a failing exit status. (Any other failure, such as the jail's
/// EACCES, is not the shell's defence at work.)
fn refused(reply: &Reply) -> bool {
    reply.is_error && reply.str("error_type") == "path_restriction" && reply.u64("exit_code") != 0
}

/// The commands of the link test, over a link (or a directory) `up` that leads to `/`, one
/// `vic` that leads to the victim directory, and `v`, the victim's absolute path (so
/// `{up}{v}` is the victim through `up`).
fn link_commands(up: &str, vic: &str, v: &str) -> Vec<String> {
    vec![
        format!("cat {up}/etc/hostname"),
        format!("cat {up}/etc/passwd"),
        format!("ls {up}/"),
        format!("ls {up}/etc"),
        format!("ls -la {vic}/"),
        format!("cat {vic}/secret.txt"),
        format!("cp {up}/etc/hostname x"),
        format!("cp {vic}/secret.txt y"),
        format!("cp -r {vic}/ z"),
        format!("echo x > {up}{v}/secret.txt"),
        format!("echo x > {up}{v}/new.txt"),
        format!("echo x >> {vic}/secret.txt"),
        format!("echo x > {vic}/new.txt"),
        format!("echo x | tee {vic}/tee.txt"),
        format!("mkdir -p {up}{v}/made"),
        format!("mkdir -p {vic}/made"),
        format!("touch {vic}/touched"),
        format!("grep -r root {up}/etc"),
        format!("grep -r VICTIM {vic}/"),
        format!("head -c 100 {up}/etc/passwd"),
        format!("tail {up}/etc/passwd"),
        format!("wc -c {vic}/secret.txt"),
        format!("sed -n 1p {up}/etc/passwd"),
        format!("sed -i s/VICTIM/x/ {vic}/secret.txt"),
        format!("sort {vic}/secret.txt"),
        format!("du -a {vic}/"),
        format!("mv {vic}/secret.txt stolen.txt"),
        format!("rm {vic}/secret.txt"),
        format!("rm -rf {vic}/sub"),
        format!("chmod 777 {vic}/secret.txt"),
        format!("cd {up} && cat etc/passwd"),
        format!("cd {vic} && cat secret.txt"),
    ]
}

/// What the commands write in `/app` when they work (the control's side effects).
const MADE_BY_COMMANDS: [&str; 4] = ["x", "y", "z", "stolen.txt"];

/// Plants the control beside the links: real directories in `/app` shaped like what the links
/// reach (`ctl_up` like `/`, with `etc` and the victim's path beneath it; `ctl_vic` like the
/// victim), holding the word `root` and `VICTIM` as the commands expect, but no secret. Made
/// afresh before each command (some move, edit or delete what they find), with what earlier
/// commands made removed.
fn plant_control(app: &std::path::Path, victim_path: &str) -> Result<()> {
    for name in ["ctl_up", "ctl_vic"].iter().chain(&MADE_BY_COMMANDS) {
        let path = app.join(name);
        if path.is_dir() {
            std::fs::remove_dir_all(&path)?;
        } else if path.exists() {
            std::fs::remove_file(&path)?;
        }
    }
    let etc = app.join("ctl_up/etc");
    std::fs::create_dir_all(&etc)?;
    std::fs::write(etc.join("passwd"), "root:control\n")?;
    std::fs::write(etc.join("hostname"), "control-host\n")?;
    let victims = [
        app.join("ctl_vic"),
        app.join(format!("ctl_up{victim_path}")),
    ];
    for dir in victims {
        std::fs::create_dir_all(dir.join("sub"))?;
        std::fs::write(dir.join("secret.txt"), "VICTIM-CONTROL\n")?;
        std::fs::write(dir.join("sub/nested.txt"), "nested\n")?;
    }
    Ok(())
}

/// The shell's own confinement, with the jail's Landlock and seccomp layers off (as
/// `jail::without_the_layers_the_probe_gets_through` runs the probe): the worker could then
/// read and write anything its user can, so only the shell keeps its commands in `/app`. Each
/// command first works on real directories inside `/app` shaped like what the links reach (the
/// control: the command itself works, and a refusal below is about the link), then is refused
/// through the links with `path_restriction`, without reading or changing anything outside.
#[tokio::test(flavor = "multi_thread")]
async fn shell_commands_do_not_follow_links_out_of_app() -> Result<()> {
    let victim = Victim::new()?;
    let server = Server::start_with_env(&[("SANDBOX_JAIL_DISABLE", "landlock,seccomp")]).await?;
    server.forbid_own_host_paths();
    let made = server
        .exec(
            "python",
            "open('mine.txt', 'w').write('mine')",
            json!({ "session_id": "sh" }),
        )
        .await?;
    ensure!(!made.is_error, "{made:?}");
    let health = server.call("list_runtimes", json!({})).await?;
    let disabled = health.field("health")["jail"]["disabled"].to_string();
    ensure!(
        disabled.contains("landlock") && disabled.contains("seccomp"),
        "the worker runs without Landlock and seccomp: {disabled}"
    );
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
    let paths = server.host_paths();
    let controls = link_commands("ctl_up", "ctl_vic", &v);
    for (line, control) in link_commands("up", "vic", &v).iter().zip(&controls) {
        plant_control(&app, &v)?;
        let worked = command(&server, "sh", control).await?;
        ensure!(
            !worked.is_error && worked.u64("exit_code") == 0,
            "the control {control}: {worked:?}"
        );
        // The working directory persists between calls: back to /app after a control's `cd`.
        let back = command(&server, "sh", "cd /app").await?;
        ensure!(!back.is_error, "{back:?}");
        plant_control(&app, &v)?;
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
        for made in MADE_BY_COMMANDS {
            ensure!(!app.join(made).exists(), "{line}: {made} was created");
        }
    }
    ensure!(app.join("mine.txt").is_file(), "mine.txt stayed");

    // find: refused, or it lists the link itself without following it.
    for (line, start) in [
        ("find up", "up"),
        ("find up/", "up/"),
        ("find vic/ -name '*.txt'", "vic/"),
        ("find vic/ -type f", "vic/"),
    ] {
        let control = line.replace("up", "ctl_up").replace("vic", "ctl_vic");
        let listed = command(&server, "sh", &control).await?;
        ensure!(
            !listed.is_error && listed.str("stdout").contains("secret.txt"),
            "the control {control}: {listed:?}"
        );
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
        // A walk that opens what it finds: the open is refused beneath the tool, in WASI.
        "mkdir -p /tmp/c && cp -r . /tmp/c",
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
    // Walks that need not open it do as GNU's do: tar stores a FIFO as one, grep -r skips it.
    let archived = command(
        &server,
        "fifo",
        "tar cf /tmp/all.tar . && tar tvf /tmp/all.tar",
    )
    .await?;
    ensure!(!archived.is_error, "{archived:?}");
    ensure!(
        archived
            .str("stdout")
            .lines()
            .any(|l| l.starts_with('p') && l.ends_with("fifo")),
        "{archived:?}"
    );
    let grepped = command(&server, "fifo", "grep -r a .").await?;
    assert_eq!(grepped.str("stdout"), "./a.txt:a\n", "{grepped:?}");
    assert_eq!(grepped.str("stderr"), "", "{grepped:?}");
    // The interpreters get ENXIO at once, as Linux answers for a socket, and keep their state.
    server
        .exec("javascript", "1", json!({ "session_id": "fifo-js" }))
        .await?;
    let js_app = server.workspace_of("fifo-js").context("workspace")?;
    host::mkfifo(&js_app.join("fifo"))?;
    for (session, language, code, said) in [
        (
            "fifo",
            "python",
            "import errno\ntry:\n    open('fifo')\nexcept OSError as e:\n    print(e.errno == errno.ENXIO, e.strerror)",
            "True No such device or address",
        ),
        (
            "fifo-js",
            "javascript",
            "const f = std.open('fifo', 'r'); console.log(f === null)",
            "true",
        ),
    ] {
        let reply = server
            .exec(language, code, json!({ "session_id": session }))
            .await?;
        ensure!(!reply.is_error, "{session}: {reply:?}");
        ensure!(
            reply.elapsed < Duration::from_secs(5),
            "{session}: {reply:?}"
        );
        assert_eq!(reply.str("stdout").trim(), said, "{session}: {reply:?}");
    }
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
