//! The shell's behaviour tests, through [`execute`] on a fake session: the command language
//! ([`language`]), confinement to the mounts ([`confinement`]) and the bounds of a call
//! ([`limits`]). [`Sandbox`] is the fixture the built-ins' tests use too. Its commands are the
//! real WebAssembly tools of `target/runtimes` ([`crate::toolbox::test_module`]), run with the
//! session's mounts, quota, deadline and cancel flag as the worker runs them; without a
//! toolbox these tests fail.

mod arrays;
mod confinement;
mod language;
mod limits;

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::*;
use crate::host::SessionConfig;
use crate::shell::guest_fs::tests::{names as host_names, special_files};
use crate::toolbox::Toolbox;

/// One interpreter call the fake saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Call {
    pub language: Language,
    pub code: String,
    pub argv: Vec<String>,
    pub stdin: Vec<u8>,
}

/// Stands in for the worker's interpreters: records calls, echoes what it was given; runs the
/// toolbox's commands for real.
#[derive(Debug, Default)]
pub(crate) struct FakeInterpreters {
    pub calls: Vec<Call>,
    pub installs: Vec<Vec<String>>,
    /// The session's toolbox, with the deadline and cancel flag of the running call.
    toolbox: Option<(Toolbox, Instant, Arc<AtomicBool>)>,
}

/// The fuel a command of the tests' toolbox may burn: far more than any test needs.
const TOOL_FUEL: u64 = 1 << 40;

impl Interpreters for FakeInterpreters {
    fn memory(&self) -> Option<crate::shell::Memory> {
        Some(crate::shell::Memory {
            cap: 1 << 30,
            available: 1000 << 20,
        })
    }

    fn run(
        &mut self,
        language: Language,
        code: &str,
        argv: &[String],
        stdin: &[u8],
    ) -> InterpreterRun {
        self.calls.push(Call {
            language,
            code: code.to_string(),
            argv: argv.to_vec(),
            stdin: stdin.to_vec(),
        });
        InterpreterRun {
            stdout: format!(
                "{language} ran {} line(s), stdin {} byte(s)\n",
                code.lines().count(),
                stdin.len()
            )
            .into_bytes(),
            stderr: if code.contains("fail") {
                b"Traceback: boom\n".to_vec()
            } else {
                Vec::new()
            },
            exit_code: i32::from(code.contains("fail")),
        }
    }

    fn pip_install(&mut self, requirements: &[String]) -> InterpreterRun {
        self.installs.push(requirements.to_vec());
        InterpreterRun {
            stdout: format!("Successfully installed {}\n", requirements.join(" ")).into_bytes(),
            ..InterpreterRun::default()
        }
    }

    fn narrow_deadline(&mut self, deadline: Instant) -> Instant {
        match self.toolbox.as_mut() {
            Some((_, current, _)) => std::mem::replace(current, deadline),
            None => deadline,
        }
    }

    fn toolbox(&self) -> Option<ToolBudget<'_>> {
        let (toolbox, deadline, cancel) = self.toolbox.as_ref()?;
        Some(ToolBudget {
            toolbox,
            deadline: *deadline,
            cancel,
            fuel: TOOL_FUEL,
        })
    }
}

/// A session: a temp `/app` (read-write), `/data` (read-only), `/tmp`, and a directory
/// outside every mount holding a secret.
pub(crate) struct Sandbox {
    pub app: tempfile::TempDir,
    pub data: tempfile::TempDir,
    pub tmp: tempfile::TempDir,
    pub outside: tempfile::TempDir,
    pub view: FsView,
    pub state: ShellState,
    pub interp: FakeInterpreters,
}

pub(crate) const SECRET: &str = "TOP-SECRET-CONTENT";

impl Sandbox {
    pub(crate) fn new() -> Self {
        let app = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret"), SECRET).unwrap();
        fs::write(data.path().join("d.txt"), "data line\n").unwrap();
        let view = FsView {
            mounts: vec![
                Mount {
                    guest: "/app".into(),
                    host: app.path().into(),
                    writable: true,
                },
                Mount {
                    guest: "/data".into(),
                    host: data.path().into(),
                    writable: false,
                },
                Mount {
                    guest: "/tmp".into(),
                    host: tmp.path().into(),
                    writable: true,
                },
            ],
        };
        Self {
            app,
            data,
            tmp,
            outside,
            view,
            state: ShellState::default(),
            interp: FakeInterpreters::default(),
        }
    }

    pub(crate) fn limits(&self) -> ShellLimits {
        ShellLimits {
            stdout_cap: 1 << 20,
            stderr_cap: 1 << 20,
            deadline: Instant::now() + Duration::from_secs(20),
            cancel: Arc::new(AtomicBool::new(false)),
            quota: None,
        }
    }

    pub(crate) fn run_with(&mut self, script: &str, limits: &ShellLimits) -> ShellOutcome {
        let config = SessionConfig {
            mounts: (self.view.mounts.iter())
                .filter(|m| m.guest != "/app")
                .cloned()
                .collect(),
            memory_bytes: 256 << 20,
            stdout_cap: limits.stdout_cap,
            stderr_cap: limits.stderr_cap,
            quota: limits.quota.clone(),
            clock_since: None,
        };
        let toolbox = crate::toolbox::test_module().for_session(self.app.path(), &config);
        self.interp.toolbox = Some((toolbox, limits.deadline, limits.cancel.clone()));
        execute(
            script,
            &self.view,
            &mut self.state,
            &mut self.interp,
            limits,
        )
    }

    pub(crate) fn run(&mut self, script: &str) -> ShellOutcome {
        let limits = self.limits();
        self.run_with(script, &limits)
    }

    /// Stdout of a script that must succeed without any stderr.
    pub(crate) fn ok(&mut self, script: &str) -> String {
        let o = self.run(script);
        assert_eq!(
            o.exit_code,
            0,
            "{script}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            o.stderr.is_empty(),
            "{script}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(o.error, None);
        String::from_utf8(o.stdout).unwrap()
    }

    /// (stdout, stderr, exit code).
    pub(crate) fn sh(&mut self, script: &str) -> (String, String, i32) {
        let o = self.run(script);
        (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
            o.exit_code,
        )
    }

    pub(crate) fn write(&self, rel: &str, content: &str) {
        let p = self.app.path().join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
    }

    pub(crate) fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.app.path().join(rel)).unwrap()
    }

    pub(crate) fn exists(&self, rel: &str) -> bool {
        fs::symlink_metadata(self.app.path().join(rel)).is_ok()
    }

    /// Host paths that must never show up in any output.
    fn host_paths(&self) -> Vec<String> {
        [
            self.app.path(),
            self.data.path(),
            self.tmp.path(),
            self.outside.path(),
        ]
        .iter()
        .flat_map(|p| {
            [
                p.to_string_lossy().into_owned(),
                fs::canonicalize(p).unwrap().to_string_lossy().into_owned(),
            ]
        })
        .collect()
    }

    /// Runs `script` and expects a path_restriction refusal that leaks no host path.
    fn assert_restricted(&mut self, script: &str) -> ShellOutcome {
        let o = self.run(script);
        assert_ne!(o.exit_code, 0, "{script} succeeded");
        assert!(
            matches!(o.error, Some(ShellError::PathRestriction(_))),
            "{script}: {:?} {}",
            o.error,
            String::from_utf8_lossy(&o.stderr)
        );
        self.assert_no_host_paths(&o);
        o
    }

    fn assert_no_host_paths(&self, o: &ShellOutcome) {
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        for p in self.host_paths() {
            assert!(!text.contains(&p), "host path {p} leaked in: {text}");
        }
        assert!(!text.contains(SECRET), "secret leaked: {text}");
    }
}

impl Sandbox {
    /// The permission bits of the secret outside every mount, to check later that no command
    /// changed them.
    fn secret_mode(&self) -> u32 {
        let secret = self.outside.path().join("secret");
        fs::metadata(secret).unwrap().permissions().mode() & 0o7777
    }

    /// The outside directory holds only its secret, with its content and mode.
    fn assert_outside_untouched(&self, mode: u32) {
        assert_eq!(host_names(self.outside.path()), ["secret"]);
        let secret = self.outside.path().join("secret");
        assert_eq!(fs::read_to_string(&secret).unwrap(), SECRET);
        assert_eq!(self.secret_mode(), mode, "the secret's mode changed");
    }

    /// Runs a script on another thread and fails the test if it takes more than 5 s (a
    /// blocked open never returns, so the caller must not wait on it).
    fn run_promptly(self, script: &str) -> (Self, ShellOutcome) {
        let (done, finished) = std::sync::mpsc::channel();
        let script = script.to_string();
        std::thread::spawn(move || {
            let mut s = self;
            let o = s.run(&script);
            let _ = done.send((s, o));
        });
        finished
            .recv_timeout(Duration::from_secs(5))
            .expect("the command line blocked")
    }
}
