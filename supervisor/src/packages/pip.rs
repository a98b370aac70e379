//! The one pip command the server runs: `pip download` of a checked requirement into a
//! server-owned staging directory, pure-Python wheels for the session's Python version only (nothing is built, so no package code
//! runs on the host), with a clean environment (none of the server's variables, such as
//! `SANDBOX_HTTP_TOKEN`, reach pip), pip's isolated mode (no user or site configuration) and
//! the staging directory as its working directory and home (no local project paths).

use std::path::{Path, PathBuf};
use std::process::Stdio;

use super::Sources;
use super::provided::Provided;

/// Variables passed through to pip: the proxy and certificate settings an operator may need to
/// reach the index. Everything else of the server's environment stays behind.
const PASSED_THROUGH: [&str; 8] = [
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "NO_PROXY",
    "no_proxy",
];

/// The PATH pip's process gets.
const CLEAN_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// The host's `python3`, looked up once in the server's own PATH (the child gets a clean one).
pub fn python3() -> PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("python3"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("/usr/bin/python3"))
}

/// The `pip download` command for `requirement` (a checked `name` or `name==version`), resolved
/// for the guest's Python `python_version` (`3.15`): pip then picks releases whose
/// `Requires-Python` admits it, whatever Python runs pip on the host. With `provided`, what
/// the runtime has compiled in satisfies dependencies on it, at its version.
pub fn download_command(
    python: &Path,
    requirement: &str,
    python_version: &str,
    (staging, dest): (&Path, &Path),
    sources: &Sources,
    provided: Option<&Provided>,
) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(python);
    command
        .env_clear()
        .envs(
            PASSED_THROUGH
                .iter()
                .filter_map(|k| std::env::var_os(k).map(|v| (*k, v))),
        )
        .env("PATH", CLEAN_PATH)
        .env("HOME", staging)
        .env("LANG", "C.UTF-8")
        .env("PYTHONNOUSERSITE", "1")
        .current_dir(staging)
        // -I: Python's isolated mode (no PYTHON* variables, no user site-packages).
        .args(["-I", "-m", "pip", "download"])
        .args([
            "--isolated",
            "--no-input",
            "--disable-pip-version-check",
            "--no-cache-dir",
            "--only-binary=:all:",
            "--platform",
            "any",
            "--python-version",
            python_version,
            "--implementation",
            "py",
            "--abi",
            "none",
        ])
        .arg("--dest")
        .arg(dest);
    if let Some(wheelhouse) = &sources.wheelhouse {
        command.arg("--find-links").arg(wheelhouse);
    }
    if !sources.index {
        command.arg("--no-index");
    }
    match provided {
        // Not quiet: pip names the requirements of a conflict at its normal verbosity only.
        Some(provided) => {
            command
                .arg("--find-links")
                .arg(&provided.find_links)
                .arg("--constraint")
                .arg(&provided.constraints);
        }
        None => {
            command.arg("--quiet");
        }
    }
    command
        // `--` ends the options: the requirement can never be read as one.
        .arg("--")
        .arg(requirement)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(name: &str) -> bool {
        [
            "PATH",
            "HOME",
            "LANG",
            "PYTHONNOUSERSITE",
            "PWD",
            "SHLVL",
            "_",
        ]
        .contains(&name)
            || PASSED_THROUGH.contains(&name)
    }

    #[test]
    fn pip_gets_a_plain_requirement_after_its_options() {
        let command = download_command(
            Path::new("/usr/bin/python3"),
            "tabulate==0.9.0",
            "3.15",
            (
                Path::new("/state/staging/x"),
                Path::new("/state/staging/x/dl"),
            ),
            &Sources {
                wheelhouse: Some(PathBuf::from("/srv/wheels")),
                index: false,
                js_packages: None,
            },
            Some(&Provided {
                find_links: PathBuf::from("/state/staging/x/provided"),
                constraints: PathBuf::from("/state/staging/x/provided-constraints.txt"),
            }),
        );
        let std = command.as_std();
        let args: Vec<String> = std
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(args[..4], ["-I", "-m", "pip", "download"]);
        for flag in [
            "--isolated",
            "--only-binary=:all:",
            "--no-index",
            "--no-cache-dir",
        ] {
            assert!(args.contains(&flag.to_owned()), "{flag}");
        }
        assert_eq!(args[args.len() - 2..], ["--", "tabulate==0.9.0"]);
        let target = args.iter().position(|a| a == "--python-version").unwrap();
        assert_eq!(args[target + 1], "3.15", "resolved for the guest's Python");
        let joined = args.join(" ");
        assert!(
            joined.contains("--find-links /srv/wheels")
                && joined.contains("--find-links /state/staging/x/provided --constraint /state/staging/x/provided-constraints.txt"),
            "{joined}"
        );
        assert_eq!(std.get_current_dir(), Some(Path::new("/state/staging/x")));
    }

    /// Runs the command with a stand-in for python3 that records the environment it got.
    #[tokio::test]
    async fn pip_inherits_none_of_the_servers_environment() {
        assert!(
            std::env::vars().any(|(k, _)| !allowed(&k)),
            "the test needs a variable in its own environment that pip must not get"
        );
        let staging = tempfile::tempdir().unwrap();
        let fake = staging.path().join("python3");
        std::fs::write(&fake, "#!/bin/sh\nenv > \"$HOME/env.txt\"\n").unwrap();
        std::fs::set_permissions(
            &fake,
            <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755),
        )
        .unwrap();
        let status = download_command(
            &fake,
            "x",
            "3.15",
            (staging.path(), staging.path()),
            &Sources::default(),
            None,
        )
        .status()
        .await
        .unwrap();
        assert!(status.success());
        let env = std::fs::read_to_string(staging.path().join("env.txt")).unwrap();
        for line in env.lines() {
            let name = line.split('=').next().unwrap_or_default();
            assert!(allowed(name), "{name} reached pip");
        }
        assert!(env.contains(&format!("HOME={}", staging.path().display())));
    }
}
