//! `execute_command`'s WebAssembly tools (uutils coreutils, run inside the session's sandbox):
//! each command line runs through the server and natively with GNU coreutils (`bash -c`, in a
//! directory holding the same files), and both must print the same stdout and exit with the same
//! status. Then the same tools against the sandbox's edges: paths outside the mounts, links
//! out, the disk quota, the deadline, and a session that goes on after each.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use sandbox_tests::{Reply, Server};
use serde_json::json;

/// The files both sides start from.
const FIXTURE: &[(&str, &str)] = &[
    ("a.txt", "apple 3\nbanana 1\ncherry 2\n"),
    ("b.txt", "one\ttwo\tthree\nfour\tfive\tsix\n"),
    ("s1.txt", "a 1\nb 2\nd 4\n"),
    ("s2.txt", "a x\nc y\nd z\n"),
    (
        "long.txt",
        "The quick brown fox jumps over the lazy dog. The quick brown fox jumps again.\n",
    ),
    ("pairs.txt", "a b\nb c\na c\n"),
    ("spaces.txt", "a       b       c\n        indented\n"),
    ("p.txt", "1\n2\n3\n4\n5\n"),
    ("q.txt", "1\nX\n3\n5\n6\n7\n"),
    ("r.txt", "0\n1\n2\n"),
];

/// Command lines compared with GNU coreutils, output and status.
const LINES: &[&str] = &[
    "sha256sum a.txt b.txt",
    "md5sum a.txt",
    "sha1sum a.txt",
    "sha224sum a.txt",
    "sha384sum a.txt",
    "sha512sum a.txt",
    "b2sum a.txt",
    "cksum a.txt",
    "sum a.txt",
    "cat a.txt | sha256sum",
    "sha256sum a.txt b.txt > sums && sha256sum -c sums",
    "md5sum missing.txt",
    "nl a.txt",
    "nl -ba -w3 -s: b.txt",
    "nl -v 10 -i 5 a.txt",
    "cat a.txt | nl",
    "paste a.txt s1.txt",
    "paste -sd, a.txt",
    "paste -d: s1.txt s2.txt",
    "comm s1.txt s2.txt",
    "comm -12 s1.txt s2.txt",
    "comm -3 s1.txt s2.txt",
    "join s1.txt s2.txt",
    "join -a1 s1.txt s2.txt",
    "fold -w 10 long.txt",
    "fold -sw 20 long.txt",
    "expand b.txt",
    "expand -t 4 b.txt",
    "unexpand -a spaces.txt",
    "expr 7 '*' 6",
    "expr length hello",
    "expr 3 '>' 5",
    "expr substr hello 2 3",
    "factor 360 1001 97",
    "factor abc",
    "base64 a.txt",
    "base64 a.txt | base64 -d",
    "base32 a.txt",
    "basenc --base16 a.txt",
    "od -An -tx1 s1.txt",
    "od -c s1.txt",
    "numfmt --to=iec 1024 1048576 123456789",
    "numfmt --from=iec 1K 1M",
    "tsort pairs.txt",
    "split -l 1 a.txt part_ && cat part_ab",
    "ln -s a.txt link && cat link",
    "cp a.txt c.txt && truncate -s 5 c.txt && cat c.txt",
    "shuf -i 1-5 | sort -n",
    "sha256sum --no-such-option a.txt",
    "diff p.txt q.txt",
    "diff q.txt p.txt",
    "diff r.txt p.txt",
    "diff p.txt r.txt",
    "diff a.txt a.txt",
    "diff -q s1.txt s2.txt",
    "diff -u p.txt q.txt | tail -n +3",
    "diff -U1 q.txt p.txt | tail -n +3",
    "diff -c p.txt q.txt | tail -n +3",
    "cat s1.txt | diff - s2.txt",
    "diff a.txt missing.txt",
    // (`cmp` without -s/-l says "byte 3" as GNU diffutils 3.9+ does; 3.8 says "char 3".)
    "cmp -s s1.txt s2.txt",
    "cmp -l s1.txt s2.txt",
    "cmp a.txt a.txt",
    "tac a.txt",
    "printf 'a\\nb' | tac",
    "printf 'a\\nb\\n' | tac -b",
    "printf 'ab,cd,ef' | tac -s ,",
    "tac a.txt missing.txt s1.txt",
    "rev a.txt",
    "rev missing.txt",
];

async fn command(server: &Server, session: &str, line: &str) -> Result<Reply> {
    tokio::time::timeout(
        Duration::from_secs(40),
        server.call(
            "execute_command",
            json!({ "command": line, "session_id": session, "timeout": 30 }),
        ),
    )
    .await
    .with_context(|| format!("{line}: no answer in 40 s"))?
}

/// Writes the fixture into the session's `/app` (through Python, byte for byte).
async fn write_fixture(server: &Server, session: &str) -> Result<()> {
    let files: serde_json::Map<String, serde_json::Value> = FIXTURE
        .iter()
        .map(|(name, text)| ((*name).to_owned(), json!(text)))
        .collect();
    let code = format!(
        "import json\nfor name, text in json.loads({:?}).items():\n    open(name, 'w').write(text)",
        serde_json::Value::Object(files).to_string()
    );
    let wrote = server
        .call(
            "execute_code",
            json!({ "code": code, "session_id": session, "language": "python" }),
        )
        .await?;
    ensure!(!wrote.is_error, "the fixture: {wrote:?}");
    Ok(())
}

/// Runs `line` with GNU coreutils in a fresh copy of the fixture: stdout and status.
fn natively(line: &str) -> Result<(String, u64)> {
    let dir = tempfile::tempdir()?;
    for (name, text) in FIXTURE {
        std::fs::write(dir.path().join(name), text)?;
    }
    let ran = std::process::Command::new("bash")
        .args(["-c", line])
        .current_dir(dir.path())
        .env("LC_ALL", "C")
        .output()?;
    let status = ran.status.code().context("killed by a signal")?;
    Ok((
        String::from_utf8_lossy(&ran.stdout).into_owned(),
        u64::try_from(status)?,
    ))
}

#[tokio::test(flavor = "multi_thread")]
async fn webassembly_tools_behave_like_gnu_coreutils_on_the_same_files() -> Result<()> {
    let server = Server::start().await?;
    let mut differ = Vec::new();
    for (n, line) in LINES.iter().enumerate() {
        // A session per line: each starts from the fixture, as the native side does.
        let session = format!("gnu-{n}");
        server
            .call(
                "create_session",
                json!({ "language": "python", "session_id": session }),
            )
            .await?;
        write_fixture(&server, &session).await?;
        let ours = command(&server, &session, line).await?;
        let (stdout, status) = natively(line)?;
        let same = ours.str("stdout") == stdout && ours.u64("exit_code") == status;
        if !same {
            differ.push(format!(
                "{line}\n  GNU:  {status} {stdout:?}\n  ours: {} {:?} (stderr {:?})",
                ours.u64("exit_code"),
                ours.str("stdout"),
                ours.str("stderr")
            ));
        }
        server
            .call("destroy_session", json!({ "session_id": session }))
            .await?;
    }
    ensure!(
        differ.is_empty(),
        "{} of {} lines differ from GNU coreutils:\n{}",
        differ.len(),
        LINES.len(),
        differ.join("\n")
    );
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn webassembly_tools_stay_inside_the_sandbox_and_its_limits() -> Result<()> {
    let server = Server::start().await?;
    let session = "edges";
    server
        .call(
            "create_session",
            json!({ "language": "javascript", "session_id": session }),
        )
        .await?;
    let workspace = server
        .call("get_workspace_info", json!({ "session_id": session }))
        .await?;
    ensure!(!workspace.is_error, "{workspace:?}");

    // Listed where an agent looks, in a JavaScript session too.
    let which = command(
        &server,
        session,
        "which sha256sum && type nl && help | grep -c 'WebAssembly tools'",
    )
    .await?;
    ensure!(
        which.str("stdout")
            == "/usr/bin/sha256sum\nnl is /usr/bin/nl (a WebAssembly tool in the sandbox)\n1\n",
        "{which:?}"
    );

    // Nothing outside the mounts is there to read, by any path.
    for line in [
        "sha256sum /etc/passwd",
        "sha256sum ../../../../../../../../../../etc/passwd",
        "cd /tmp && md5sum ../etc/hostname",
        "nl /proc/self/environ",
    ] {
        let reply = command(&server, session, line).await?;
        ensure!(
            reply.u64("exit_code") != 0 && reply.str("stdout").is_empty(),
            "{line}: {reply:?}"
        );
        ensure!(
            !reply.text.contains("/work/") && !reply.text.contains("/tmp/."),
            "{line}: a host path: {}",
            reply.text
        );
    }
    // An output format the library does not print as GNU does is refused, not printed wrong.
    for line in ["diff -e a b", "diff -y a b"] {
        let reply = command(
            &server,
            session,
            &format!("printf 1 > a; printf 2 > b; {line}"),
        )
        .await?;
        ensure!(
            reply.u64("exit_code") == 2 && reply.str("stderr").contains("use diff -u"),
            "{line}: {reply:?}"
        );
    }
    // rev reverses characters, not bytes (the session's locale is C.UTF-8).
    let reversed = command(
        &server,
        session,
        "printf 'h\\xc3\\xa9llo\\nw\\xc3\\xb6rld' | rev",
    )
    .await?;
    ensure!(reversed.str("stdout") == "olléh\ndlröw", "{reversed:?}");
    // A link out of the sandbox is refused where it is made.
    let link = command(&server, session, "ln -s /etc/passwd out").await?;
    ensure!(link.u64("exit_code") == 1, "{link:?}");
    let listed = command(&server, session, "ls").await?;
    ensure!(!listed.str("stdout").contains("out"), "{listed:?}");

    // The disk quota holds for tools as for code.
    let big = command(&server, session, "truncate -s 20G big").await?;
    ensure!(big.str("error_type") == "disk_quota", "{big:?}");

    // The deadline stops a tool that would run forever, and the session goes on.
    let started = std::time::Instant::now();
    let endless = tokio::time::timeout(
        Duration::from_secs(20),
        server.call(
            "execute_command",
            json!({ "command": "shuf -r -i 1-9", "session_id": session, "timeout": 1 }),
        ),
    )
    .await??;
    ensure!(endless.str("error_type") == "timeout", "{endless:?}");
    ensure!(
        started.elapsed() < Duration::from_secs(10),
        "stopped late: {:?}",
        started.elapsed()
    );
    let after = command(&server, session, "printf 'x\\n' | sha256sum").await?;
    ensure!(
        after.str("stdout")
            == "73cb3858a687a8494ca3323053016282f3dad39d42cf62ca4e79dda2aac7d9ac  -\n",
        "{after:?}"
    );
    server.stop().await
}

/// The toolbox is where `prepare.sh` puts it.
#[test]
fn the_toolbox_is_prepared() {
    let runtime_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/runtimes");
    assert!(
        runtime_dir.join(sandbox_protocol::TOOLBOX_FILE).is_file(),
        "runtimes/prepare.sh builds target/runtimes/toolbox.wasm"
    );
}
