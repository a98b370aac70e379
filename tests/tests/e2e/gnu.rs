//! Comparing `execute_command` with the real tools: the same files written into a session's
//! `/app` and into a fresh directory on the host, the same line run through the server and
//! natively with `bash -c` (LC_ALL=C), stdout and exit status side by side. Used by
//! `shell_language` (bash) and `toolbox` (GNU coreutils, grep, find, sed, awk, tar, gzip).

use std::time::Duration;

use anyhow::{Context, Result, ensure};
use sandbox_tests::{Reply, Server};
use serde_json::json;

/// Runs `line` through the server in `session`, with `timeout` seconds for the call.
pub async fn command(server: &Server, session: &str, line: &str, timeout: u64) -> Result<Reply> {
    tokio::time::timeout(
        Duration::from_secs(timeout + 10),
        server.call(
            "execute_command",
            json!({ "command": line, "session_id": session, "timeout": timeout }),
        ),
    )
    .await
    .with_context(|| format!("{line}: no answer in {} s", timeout + 10))?
}

/// Writes `files` (paths relative to `/app`, and their text) into the session, byte for byte
/// and with their directories, through Python.
pub async fn write_files(server: &Server, session: &str, files: &[(String, String)]) -> Result<()> {
    let files: serde_json::Map<String, serde_json::Value> = (files.iter())
        .map(|(name, text)| (name.clone(), json!(text)))
        .collect();
    let code = format!(
        "import json, os\nfor name, text in json.loads({:?}).items():\n    \
         os.makedirs(os.path.dirname(name) or '.', exist_ok=True)\n    \
         open(name, 'w').write(text)\n    \
         os.utime(name, ({FIXTURE_MTIME}, {FIXTURE_MTIME}))",
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

/// When every fixture file was last modified, on both sides: files written a moment apart
/// may or may not share a timestamp (the kernel's clock for them is coarse), which would
/// make `find -newer` and `ls -t` differ from run to run.
const FIXTURE_MTIME: u64 = 1_700_000_000;

/// Runs `line` with bash in a fresh directory holding `files`, under the sandbox's umask (022):
/// its stdout and status.
pub fn natively(files: &[(String, String)], line: &str) -> Result<(String, u64)> {
    let dir = tempfile::tempdir()?;
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().context("a parent")?)?;
        std::fs::write(&path, text)?;
        std::fs::File::options()
            .write(true)
            .open(&path)?
            .set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(FIXTURE_MTIME))?;
    }
    let ran = std::process::Command::new("bash")
        .args(["-c", &format!("umask 022\n{line}")])
        .current_dir(dir.path())
        .env("LC_ALL", "C")
        .output()?;
    let status = ran.status.code().context("killed by a signal")?;
    Ok((
        String::from_utf8_lossy(&ran.stdout).into_owned(),
        u64::try_from(status)?,
    ))
}
