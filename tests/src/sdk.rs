//! The official MCP Python SDK as a test client: provisions it on first use (a venv in
//! `target/mcp-sdk-venv`, made once under a file lock and reused, with the exact release pinned
//! in `tests/sdk/requirements.txt`), runs a script of `tests/sdk/` with it, and reads the
//! script's report: one JSON object per line, `{"check": NAME, ...facts}`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Map, Value};

/// The pinned SDK (the one place its version is set). The venv records the text it was made
/// from, so a new pin provisions a new venv.
pub const REQUIREMENTS: &str = include_str!("../sdk/requirements.txt");

/// Where the venv lives, next to the build: `cargo clean` removes it, nothing else does.
const VENV_DIR: &str = "mcp-sdk-venv";

/// The file in the venv holding the [`REQUIREMENTS`] it was made from, written last: a venv
/// without it (an interrupted install) is made again.
const STAMP: &str = "provisioned-from.txt";

/// A script of `tests/sdk/` by file name.
pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sdk").join(name)
}

/// The cargo target directory this test runs from (`target/<profile>/deps/<test>`).
fn target_dir() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("current_exe")?;
    let mut dir = exe
        .parent()
        .context("the test has no directory")?
        .to_path_buf();
    if dir.ends_with("deps") {
        dir.pop();
    }
    ensure!(dir.pop(), "no target directory above {}", exe.display());
    Ok(dir)
}

/// The Python of a venv with the pinned SDK, made now if needed. Tests running at the same time
/// (in this process or another) wait on a lock file and share one venv.
///
/// # Errors
/// When `python3 -m venv` or pip fails: the error quotes their output (a test needs the SDK; it
/// never skips for want of it).
pub fn provision() -> Result<PathBuf> {
    let target = target_dir()?;
    std::fs::create_dir_all(&target)?;
    let lock_path = target.join(format!("{VENV_DIR}.lock"));
    let lock = std::fs::File::create(&lock_path)
        .with_context(|| format!("creating {}", lock_path.display()))?;
    lock.lock()
        .with_context(|| format!("locking {}", lock_path.display()))?;
    let venv = target.join(VENV_DIR);
    let python = venv.join("bin/python");
    let stamp = venv.join(STAMP);
    if std::fs::read_to_string(&stamp).is_ok_and(|made_from| made_from == REQUIREMENTS) {
        return Ok(python);
    }
    if venv.exists() {
        std::fs::remove_dir_all(&venv)
            .with_context(|| format!("removing the stale {}", venv.display()))?;
    }
    run(
        Command::new("python3").args(["-m", "venv"]).arg(&venv),
        "python3 -m venv (on Debian it needs the python3-venv package)",
    )?;
    let requirements = script("requirements.txt");
    run(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "-q",
                "-r",
            ])
            .arg(&requirements),
        &format!("pip install -r {}", requirements.display()),
    )?;
    std::fs::write(&stamp, REQUIREMENTS).with_context(|| format!("writing {}", stamp.display()))?;
    Ok(python)
}

/// Runs a provisioning step; a failure carries the step's own output.
fn run(command: &mut Command, what: &str) -> Result<()> {
    let output = command
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("{what}: cannot start"))?;
    if !output.status.success() {
        bail!(
            "{what} failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}

/// What a script reported, with its stderr (the SDK's log) to show when a check fails.
#[derive(Debug)]
pub struct Report {
    checks: Vec<(String, Map<String, Value>)>,
    /// The script's stderr.
    pub stderr: String,
}

impl Report {
    /// Reads a script's stdout: each non-empty line a JSON object with a string `check`.
    ///
    /// # Errors
    /// On any other line: the script's output is its report, nothing else may be in it.
    pub fn parse(stdout: &str, stderr: String) -> Result<Self> {
        let mut checks = Vec::new();
        for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
            let Ok(Value::Object(mut facts)) = serde_json::from_str::<Value>(line) else {
                bail!("not a JSON object: {line}\nstderr:\n{stderr}");
            };
            let Some(Value::String(name)) = facts.remove("check") else {
                bail!("no \"check\" name: {line}\nstderr:\n{stderr}");
            };
            checks.push((name, facts));
        }
        Ok(Self { checks, stderr })
    }

    /// The facts of check `name`.
    ///
    /// # Panics
    /// When the script did not report it, or reported that the step failed (an exception or a
    /// timeout): the message shows the error and the script's stderr.
    pub fn check(&self, name: &str) -> Value {
        let Some((_, facts)) = self.checks.iter().find(|(n, _)| n == name) else {
            let reported: Vec<&str> = self.checks.iter().map(|(n, _)| n.as_str()).collect();
            panic!(
                "the SDK script did not report {name:?} (reported: {reported:?})\nstderr:\n{}",
                self.stderr
            );
        };
        if let Some(error) = facts.get("error") {
            panic!(
                "the SDK check {name:?} failed:\n{}\nstderr:\n{}",
                error
                    .as_str()
                    .map_or_else(|| error.to_string(), str::to_owned),
                self.stderr
            );
        }
        Value::Object(facts.clone())
    }

    /// Judges the facts of check `name` with `verdict`.
    ///
    /// # Panics
    /// As [`Report::check`], and when `verdict` fails: the message shows why, the facts and the
    /// script's stderr.
    pub fn judge(&self, name: &str, verdict: impl FnOnce(&Value) -> Result<()>) {
        let facts = self.check(name);
        if let Err(why) = verdict(&facts) {
            panic!(
                "the SDK check {name:?}: {why:#}\nfacts: {facts:#}\nstderr:\n{}",
                self.stderr
            );
        }
    }
}

/// Runs `script` with the SDK's Python (from [`provision`]) and `args`, within `limit`.
///
/// # Errors
/// When it cannot start, runs past `limit` (it is killed), exits non-zero, or prints anything
/// but its report; the error shows its stdout and stderr.
pub async fn run_script(
    python: &Path,
    script: &Path,
    args: &[&str],
    limit: Duration,
) -> Result<Report> {
    let child = tokio::process::Command::new(python)
        .arg(script)
        .args(args)
        // No __pycache__ among the test sources.
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONUNBUFFERED", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("starting {} {}", python.display(), script.display()))?;
    let Output {
        status,
        stdout,
        stderr,
    } = tokio::time::timeout(limit, child.wait_with_output())
        .await
        .with_context(|| format!("{} ran past {limit:?} (killed)", script.display()))??;
    let (stdout, stderr) = (
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    );
    ensure!(
        status.success(),
        "{} exited with {status}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        script.display()
    );
    Report::parse(&stdout, stderr)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn panic_message(f: impl FnOnce()) -> String {
        let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
            .expect_err("the read must panic");
        payload
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default()
    }

    #[test]
    fn a_report_is_one_check_per_line() {
        let report = Report::parse(
            "{\"check\": \"a\", \"n\": 1}\n\n{\"check\": \"b\", \"error\": \"Traceback: boom\"}\n",
            "the log".into(),
        )
        .unwrap();
        assert_eq!(report.check("a"), json!({ "n": 1 }));
        let failed = panic_message(|| {
            report.check("b");
        });
        assert!(
            failed.contains("\"b\" failed")
                && failed.contains("boom")
                && failed.contains("the log"),
            "{failed}"
        );
        let missing = panic_message(|| {
            report.check("c");
        });
        assert!(
            missing.contains("did not report \"c\"") && missing.contains(r#"["a", "b"]"#),
            "{missing}"
        );
    }

    #[test]
    fn a_failed_verdict_shows_the_facts_and_the_log() {
        let report = Report::parse("{\"check\": \"a\", \"n\": 1}\n", "the log".into()).unwrap();
        report.judge("a", |facts| {
            ensure!(facts["n"] == 1, "n is 1");
            Ok(())
        });
        let failed = panic_message(|| {
            report.judge("a", |facts| {
                ensure!(facts["n"] == 2, "n is 2");
                Ok(())
            });
        });
        assert!(
            failed.contains("\"a\": n is 2")
                && failed.contains("\"n\": 1")
                && failed.contains("the log"),
            "{failed}"
        );
    }

    #[test]
    fn anything_but_checks_on_stdout_is_refused() {
        for stdout in [
            "hello\n",
            "[1]\n",
            "{\"name\": \"a\"}\n",
            "{\"check\": 3}\n",
        ] {
            let refused = Report::parse(stdout, "log".into()).unwrap_err();
            assert!(refused.to_string().contains("log"), "{stdout}: {refused}");
        }
    }

    /// A failed provisioning step fails the test with the step's own words (pip's message).
    #[test]
    fn a_failed_step_quotes_its_output() {
        let failed = run(
            Command::new("sh").args([
                "-c",
                "echo collecting; echo 'No matching distribution' >&2; exit 1",
            ]),
            "pip install",
        )
        .unwrap_err()
        .to_string();
        assert!(
            failed.starts_with("pip install failed")
                && failed.contains("collecting")
                && failed.contains("No matching distribution"),
            "{failed}"
        );
        run(&mut Command::new("true"), "true").unwrap();
        let missing = run(&mut Command::new("/nonexistent/python3"), "venv").unwrap_err();
        assert!(missing.to_string().contains("cannot start"), "{missing}");
    }

    #[test]
    fn the_pin_is_exact() {
        let pins: Vec<&str> = REQUIREMENTS
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        assert_eq!(pins.len(), 1, "{pins:?}");
        let (name, version) = pins[0].split_once("==").expect("an exact pin");
        assert_eq!(name, "mcp");
        assert!(
            version.split('.').count() == 3 && version.split('.').all(|p| p.parse::<u32>().is_ok()),
            "{version}"
        );
    }
}
