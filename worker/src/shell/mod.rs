//! A small POSIX-like shell for the `execute_command` tool, run host-side in the worker (not in
//! WebAssembly) over the session's files.
//!
//! It owns the command language (tokens from [`lexer`], grammar in [`parser`], expansion in
//! [`expand`], execution in [`exec`]), the built-in commands ([`builtins`]) and the confinement of
//! every file access to the session's mounts ([`path`]). Nothing else of the host is reachable:
//! there are no external programs, only built-ins; the interpreters are reached through the
//! [`Interpreters`] the worker passes in; every path goes through [`path::Fs`], which refuses
//! anything outside the mounts, writes to read-only mounts, and symlinks leading out, and does
//! every file operation through a handle on the mount's root (never through a host path); and no
//! message ever contains a host path.
//!
//! Output is capped like the interpreters' (truncation is flagged, never an error); the deadline
//! and the cancel flag are checked between commands and inside every loop that can be long.
//! Everything a command adds to `/app` and `/tmp` (files, directories, links, bytes) is charged
//! to the session's disk quota first, and a refusal makes the outcome `disk_quota`.

mod builtins;
mod exec;
mod expand;
mod lexer;
mod parser;
mod path;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use sandbox_protocol::Language;

use crate::quota::{self, SharedQuota};
use exec::{Abort, Shell};

/// Exit status of a command line stopped at its deadline (as `timeout(1)`).
pub const EXIT_TIMEOUT: i32 = 124;

/// Exit status of a cancelled command line (as after SIGINT).
pub const EXIT_CANCELLED: i32 = 130;

/// Exit status of a script with a syntax error (as bash).
pub const EXIT_SYNTAX: i32 = 2;

/// Exit status when a built-in panicked (EX_SOFTWARE); the outcome then has no `error`, only
/// this status and a message on stderr.
pub const EXIT_INTERNAL: i32 = 70;

/// One guest-visible directory tree and where it lives on the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountPoint {
    /// `/app`, `/tmp`, `/data`, `/shared`.
    pub guest: String,
    pub host: PathBuf,
    pub writable: bool,
}

/// The guest's view of the filesystem: `/app` is read-write and the home and initial cwd.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FsView {
    pub mounts: Vec<MountPoint>,
}

/// State that persists between `execute_command` calls of one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellState {
    /// Guest path of the working directory; starts at `/app`.
    pub cwd: String,
    /// Shell variables (all exported: `env` shows them).
    pub vars: BTreeMap<String, String>,
}

impl Default for ShellState {
    fn default() -> Self {
        let vars = [
            ("HOME", "/app"),
            ("PWD", "/app"),
            // Cosmetic: every command is built in; `/bin/NAME` runs the built-in NAME.
            ("PATH", "/bin"),
            ("LANG", "C.UTF-8"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        Self {
            cwd: "/app".into(),
            vars,
        }
    }
}

/// What a command that needs an interpreter asks of the worker.
pub trait Interpreters {
    /// `python FILE [ARGS]`, `python -c CODE [ARGS]`, `node|qjs FILE`, `node|qjs -e CODE`: run
    /// `code` in the session's interpreter for `language` (the persistent one when the session is
    /// of that language), with `argv` (`sys.argv` / `scriptArgs`) and the piped `stdin` bytes.
    fn run(
        &mut self,
        language: Language,
        code: &str,
        argv: &[String],
        stdin: &[u8],
    ) -> InterpreterRun;

    /// `pip install NAME[==VER] ...`: the session's `install_package`.
    fn pip_install(&mut self, requirements: &[String]) -> InterpreterRun;
}

/// The result of one interpreter run or package install.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InterpreterRun {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub exit_code: i32,
}

/// The bounds of one `execute` call.
#[derive(Debug, Clone)]
pub struct ShellLimits {
    /// Bytes of stdout kept; the rest is dropped and flagged.
    pub stdout_cap: usize,
    pub stderr_cap: usize,
    /// When the command line is stopped ([`ShellError::Timeout`]).
    pub deadline: Instant,
    /// Set by the worker to stop the command line ([`ShellError::Cancelled`]).
    pub cancel: Arc<AtomicBool>,
    /// The session's disk quota, charged for what commands write into `/app` and `/tmp`.
    pub quota: Option<SharedQuota>,
}

/// What went wrong with a command line as a whole (a command failing is just its exit code).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShellError {
    #[error("syntax error: {0}")]
    Syntax(String),
    #[error("the command line timed out")]
    Timeout,
    #[error("the command line was cancelled")]
    Cancelled,
    /// The first path refused by confinement, in guest form.
    #[error("path_restriction: {0} is outside the sandbox's mounts or not writable")]
    PathRestriction(String),
    /// A write the disk quota refused: the refusal, with the quota's numbers.
    #[error("{0}")]
    DiskQuota(String),
}

impl ShellError {
    /// A stable name for the error, for structured results (`syntax_error`, `timeout`,
    /// `cancelled`, `path_restriction`, `disk_quota`).
    pub fn kind(&self) -> &'static str {
        match self {
            ShellError::Syntax(_) => "syntax_error",
            ShellError::Timeout => "timeout",
            ShellError::Cancelled => "cancelled",
            ShellError::PathRestriction(_) => "path_restriction",
            ShellError::DiskQuota(_) => "disk_quota",
        }
    }
}

/// The result of one `execute` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellOutcome {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    /// The last command's status, like bash (124 on timeout, 130 on cancel, 2 on syntax errors).
    pub exit_code: i32,
    /// Syntax error, timeout or cancel; otherwise the first confinement refusal, if any, else
    /// the last disk quota refusal (the script went on after it, like after any failing
    /// command).
    pub error: Option<ShellError>,
}

/// Runs a command line over the session's files. `state` keeps the cwd and variables for the
/// next call; a multi-stage pipeline's changes do not persist (bash runs those in subshells).
pub fn execute(
    script: &str,
    fs: &FsView,
    state: &mut ShellState,
    interpreters: &mut dyn Interpreters,
    limits: &ShellLimits,
) -> ShellOutcome {
    let parsed = match parser::parse(script) {
        Ok(p) => p,
        Err(msg) => {
            let mut stderr = format!("sh: {msg}\n").into_bytes();
            let truncated = stderr.len() > limits.stderr_cap;
            stderr.truncate(limits.stderr_cap);
            return ShellOutcome {
                stdout: Vec::new(),
                stderr,
                stdout_truncated: false,
                stderr_truncated: truncated,
                exit_code: EXIT_SYNTAX,
                error: Some(ShellError::Syntax(msg)),
            };
        }
    };
    // Refusals of this call, including those of interpreter runs it makes, are the ones after
    // this mark.
    let quota_mark = limits.quota.as_ref().map(|q| quota::lock(q).refusals());
    let fs = path::Fs::new(fs).with_quota(limits.quota.clone());
    let mut shell = Shell::new(fs, state, interpreters, limits);
    // A panic in a built-in must not take the worker (and the session's interpreter) down with
    // it. The shell's state is plain data, so what a half-run command left behind is consistent
    // enough to report and go on.
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        shell.check().and_then(|()| shell.run_script(&parsed))
    }));
    let (exit_code, error) = match run {
        Ok(Ok(code) | Err(Abort::Exit(code))) => {
            let refused = limits.quota.as_ref().zip(quota_mark).and_then(|(q, mark)| {
                let q = quota::lock(q);
                q.refusal_since(mark)
                    .map(|r| ShellError::DiskQuota(r.to_string()))
            });
            // A command line whose writes were refused failed, even when the command that
            // wrote (a producer cut short) did not say so.
            let code = if refused.is_some() && code == 0 {
                1
            } else {
                code
            };
            let restricted = shell.restriction.take().map(ShellError::PathRestriction);
            (code, restricted.or(refused))
        }
        Ok(Err(Abort::Timeout)) => {
            shell.io.write(
                exec::Target::Stderr,
                b"sh: timed out: the command line ran past its deadline\n",
            );
            (EXIT_TIMEOUT, Some(ShellError::Timeout))
        }
        Ok(Err(Abort::Cancelled)) => {
            shell.io.write(exec::Target::Stderr, b"sh: cancelled\n");
            (EXIT_CANCELLED, Some(ShellError::Cancelled))
        }
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".into());
            shell.io.write(
                exec::Target::Stderr,
                format!("sh: internal error: {msg}\n").as_bytes(),
            );
            (EXIT_INTERNAL, None)
        }
    };
    shell.io.close_files(0);
    ShellOutcome {
        stdout: std::mem::take(&mut shell.io.stdout.buf),
        stderr: std::mem::take(&mut shell.io.stderr.buf),
        stdout_truncated: shell.io.stdout.truncated,
        stderr_truncated: shell.io.stderr.truncated,
        exit_code,
        error,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::fs;
    use std::os::unix::fs::{PermissionsExt, symlink};
    use std::sync::atomic::Ordering;
    use std::time::Duration;

    use super::*;

    /// One interpreter call the fake saw.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub(crate) struct Call {
        pub language: Language,
        pub code: String,
        pub argv: Vec<String>,
        pub stdin: Vec<u8>,
    }

    /// Stands in for the worker's interpreters: records calls, echoes what it was given.
    #[derive(Debug, Default)]
    pub(crate) struct FakeInterpreters {
        pub calls: Vec<Call>,
        pub installs: Vec<Vec<String>>,
    }

    impl Interpreters for FakeInterpreters {
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
                    MountPoint {
                        guest: "/app".into(),
                        host: app.path().into(),
                        writable: true,
                    },
                    MountPoint {
                        guest: "/data".into(),
                        host: data.path().into(),
                        writable: false,
                    },
                    MountPoint {
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

    #[test]
    fn lists_and_status() {
        let mut s = Sandbox::new();
        assert_eq!(s.ok("echo a; echo b\necho c"), "a\nb\nc\n");
        assert_eq!(
            s.ok("true && echo y; false && echo n; false || echo y2; true || echo n2"),
            "y\ny2\n"
        );
        assert_eq!(s.ok("false && echo a || echo b"), "b\n");
        assert_eq!(s.ok("false; echo $?; true; echo $?"), "1\n0\n");
        assert_eq!(s.ok("! false && echo negated"), "negated\n");
        assert_eq!(s.sh("false").2, 1);
        assert_eq!(s.sh("true; false").2, 1);
        assert_eq!(s.sh("false; true").2, 0);
        assert_eq!(
            s.sh("exit 3; echo never"),
            (String::new(), String::new(), 3)
        );
        assert_eq!(s.ok("sh -c 'exit 4'; echo $?"), "4\n");
        assert_eq!(s.ok(""), "");
        assert_eq!(s.ok("# only a comment\n\n"), "");
        assert_eq!(s.ok("echo a # trailing comment"), "a\n");
        assert_eq!(s.ok("echo a#b"), "a#b\n");
    }

    #[test]
    fn pipes() {
        let mut s = Sandbox::new();
        assert_eq!(s.ok("echo hello | tr a-z A-Z"), "HELLO\n");
        assert_eq!(s.ok("printf 'b\\na\\nc\\n' | sort | head -n 2"), "a\nb\n");
        assert_eq!(s.sh("false | true").2, 0);
        assert_eq!(s.sh("true | false").2, 1);
        // stderr of every stage reaches the outcome; stdout only from the last.
        let (out, err, code) = s.sh("ls /app/nope | echo last");
        assert_eq!(out, "last\n");
        assert!(
            err.contains("ls: cannot access '/app/nope': No such file or directory"),
            "{err}"
        );
        assert_eq!(code, 0);
        assert_eq!(s.ok("ls /app/nope 2>&1 | wc -l"), "1\n");
        assert_eq!(s.ok("echo x |& cat"), "x\n");
        // A pipeline runs like a subshell: its cd and assignments do not stay.
        assert_eq!(
            s.ok("mkdir d; cd d | true; pwd; X=1 | true; echo \"[$X]\""),
            "/app\n[]\n"
        );
    }

    #[test]
    fn redirections() {
        let mut s = Sandbox::new();
        assert_eq!(s.ok("echo hi > f; echo more >> f; cat f"), "hi\nmore\n");
        assert_eq!(s.read("f"), "hi\nmore\n");
        assert_eq!(s.ok("echo new > f; cat < f"), "new\n");
        let (out, err, _) = s.sh("ls nope 2> err; cat err");
        assert!(out.contains("No such file or directory") && err.is_empty());
        s.ok("ls nope 2>> err; true");
        assert_eq!(s.read("err").lines().count(), 2);
        s.ok("ls nope f > both 2>&1; true");
        assert!(s.read("both").contains("nope") && s.read("both").contains("f\n"));
        // Order matters: 2>&1 before > keeps stderr on the old stdout.
        let (out, _, _) = s.sh("ls nope 2>&1 > only_out");
        assert!(out.contains("nope"));
        assert_eq!(s.read("only_out"), "");
        s.ok("ls nope f &> amp; true");
        assert!(s.read("amp").contains("nope"));
        s.ok("echo again &>> amp");
        assert!(s.read("amp").ends_with("again\n"));
        let (out, err, _) = s.sh("echo to-err >&2; echo to-err2 1>&2");
        assert_eq!((out.as_str(), err.as_str()), ("", "to-err\nto-err2\n"));
        assert_eq!(
            s.ok("ls nope 2>/dev/null; echo x > /dev/null; cat /dev/null; echo done"),
            "done\n"
        );
        assert_eq!(s.ok("> created"), "");
        assert!(s.exists("created"));
        assert_eq!(s.ok("cat < f > g; cat g"), "new\n");
        let (_, err, code) = s.sh("cat < missing; echo $?");
        assert!(err.contains("sh: missing: No such file or directory"));
        assert_eq!(code, 0);
        let (_, err, code) = s.sh("echo x > sub/none");
        assert!(
            err.contains("sh: sub/none: No such file or directory") && code == 1,
            "{err}"
        );
        let (_, err, _) = s.sh("mkdir dir; echo x > dir");
        assert!(err.contains("Is a directory"));
        let (_, err, code) = s.sh("X='a b'; echo x > $X");
        assert!(err.contains("ambiguous redirect") && code == 1);
    }

    #[test]
    fn here_documents() {
        let mut s = Sandbox::new();
        assert_eq!(
            s.ok("N=world\ncat <<EOF\nhello $N\n  \\$N\nEOF\necho after"),
            "hello world\n  $N\nafter\n"
        );
        assert_eq!(
            s.ok("cat <<'EOF' > script.py\nprint(\"$HOME\")\nEOF\ncat script.py"),
            "print(\"$HOME\")\n"
        );
        assert_eq!(s.ok("cat <<-END\n\tindented\n\tEND"), "indented\n");
        assert_eq!(s.ok("tr a-z A-Z <<< \"up $HOME\""), "UP /APP\n");
        assert_eq!(s.ok("cat <<A; cat <<B\n1\nA\n2\nB"), "1\n2\n");
    }

    #[test]
    fn quoting() {
        let mut s = Sandbox::new();
        assert_eq!(s.ok("echo 'a  b' \"c  d\" e\\ \\ f"), "a  b c  d e  f\n");
        assert_eq!(s.ok("echo \"$HOME\" '$HOME' \\$HOME"), "/app $HOME $HOME\n");
        assert_eq!(s.ok("echo \"a\\\"b\" 'it'\\''s'"), "a\"b it's\n");
        assert_eq!(s.ok("printf '[%s]' '' \"\" x; echo"), "[][][x]\n");
        assert_eq!(s.ok("echo \"multi\nline\""), "multi\nline\n");
        assert_eq!(s.ok("echo a\\\nb"), "ab\n");
        assert_eq!(s.ok("echo \"\\n\" '\\n'"), "\\n \\n\n");
        assert_eq!(s.ok("echo ';' '|' '&&' \"#\""), "; | && #\n");
        let o = s.run("echo 'unterminated");
        assert_eq!(o.exit_code, 2);
        assert!(matches!(o.error, Some(ShellError::Syntax(_))));
    }

    #[test]
    fn variables() {
        let mut s = Sandbox::new();
        assert_eq!(
            s.ok("A=1; echo $A ${A}x \"${B:-def}\" ${B-unset} ${A:-no}"),
            "1 1x def unset 1\n"
        );
        assert_eq!(s.ok("echo $A"), "1\n", "variables persist between calls");
        assert_eq!(s.state.vars.get("A").map(String::as_str), Some("1"));
        assert_eq!(s.ok("A=2 printenv A; echo $A"), "2\n1\n");
        assert_eq!(s.ok("export B=3 C; echo $B"), "3\n");
        assert_eq!(s.ok("unset A; echo \"[$A]\""), "[]\n");
        assert_eq!(
            s.ok("X='a  b'; printf '<%s>' $X \"$X\"; echo"),
            "<a><b><a  b>\n"
        );
        assert_eq!(s.ok("E=; printf '<%s>' $E \"$E\"; echo"), "<>\n");
        assert_eq!(s.ok("echo ~ ~/x '~'"), "/app /app/x ~\n");
        assert_eq!(s.ok("echo $HOME $LANG $PATH"), "/app C.UTF-8 /bin\n");
        assert!(s.ok("env").contains("LANG=C.UTF-8\n"));
        assert!(s.ok("export").contains("declare -x B=\"3\"\n"));
        assert_eq!(s.ok("V=x; sh -c 'echo $V; V=y'; echo $V"), "x\nx\n");
        assert_eq!(s.ok("sh -c 'echo $0 $1 $#' n a b"), "n a 2\n");
        assert!(s.run("echo ${A/x/y}").error.is_some());
    }

    #[test]
    fn globbing() {
        let mut s = Sandbox::new();
        for f in ["a.txt", "b.txt", "c.py", ".hidden.txt", "sub/x.txt"] {
            s.write(f, "");
        }
        assert_eq!(s.ok("echo *.txt"), "a.txt b.txt\n");
        assert_eq!(
            s.ok("echo ?.py [ab].txt [!a].txt"),
            "c.py a.txt b.txt b.txt\n"
        );
        assert_eq!(s.ok("echo *.zz '*.txt' \"*\""), "*.zz *.txt *\n");
        assert_eq!(
            s.ok("echo */*.txt /app/s*/x.*"),
            "sub/x.txt /app/sub/x.txt\n"
        );
        assert_eq!(s.ok("echo .*.txt"), ".hidden.txt\n");
        assert_eq!(s.ok("echo /*"), "/app /data /tmp\n");
        assert_eq!(s.ok("echo /etc/* /proc/*"), "/etc/* /proc/*\n");
        assert_eq!(s.ok("cd sub; echo ../*.py"), "../c.py\n");
        assert_eq!(s.ok("rm /app/*.txt; ls /app"), "c.py\nsub\n");
    }

    #[test]
    fn cd_persists() {
        let mut s = Sandbox::new();
        s.write("sub/deeper/f", "content\n");
        assert_eq!(s.ok("cd sub; pwd"), "/app/sub\n");
        assert_eq!(s.ok("pwd; cat deeper/f"), "/app/sub\ncontent\n");
        assert_eq!(s.state.cwd, "/app/sub");
        assert_eq!(
            s.ok("cd deeper && cat f && cd .. && pwd"),
            "content\n/app/sub\n"
        );
        assert_eq!(
            s.ok("cd /tmp; echo $PWD $OLDPWD; cd -"),
            "/tmp /app/sub\n/app/sub\n"
        );
        assert_eq!(s.ok("cd; pwd"), "/app\n");
        assert_eq!(s.ok("cd /; ls; cd /data; pwd"), "app\ndata\ntmp\n/data\n");
        let (_, err, code) = s.sh("cd nope");
        assert_eq!(
            (err.as_str(), code),
            ("cd: nope: No such file or directory\n", 1)
        );
        let (_, err, code) = s.sh("cd /app/sub/deeper/f");
        assert_eq!(
            (err.as_str(), code),
            ("cd: /app/sub/deeper/f: Not a directory\n", 1)
        );
        assert_eq!(s.ok("pwd"), "/data\n");
    }

    #[test]
    fn syntax_errors_run_nothing() {
        let mut s = Sandbox::new();
        for script in [
            "echo before; if true; then echo x; fi",
            "echo before; for i in 1 2; do echo $i; done",
            "echo before\nwhile true; do :; done",
            "echo before; echo $(ls)",
            "echo before; echo `ls`",
            "echo before; (cd /tmp)",
            "echo before; sleep 1 &",
            "echo before; f() { ls; }",
            "echo before |",
            "echo before; case x in x) ;; esac",
        ] {
            let o = s.run(script);
            assert_eq!(o.exit_code, EXIT_SYNTAX, "{script}");
            assert!(o.stdout.is_empty(), "{script} ran something");
            assert!(matches!(o.error, Some(ShellError::Syntax(_))), "{script}");
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.starts_with("sh: "), "{err}");
        }
        let err = String::from_utf8(s.run("if true; then echo; fi").stderr).unwrap();
        assert!(
            err.contains("not supported; use python -c or node -e"),
            "{err}"
        );
        assert_eq!(ShellError::Syntax("x".into()).kind(), "syntax_error");
    }

    #[test]
    fn unknown_commands_exit_127_with_the_list() {
        let mut s = Sandbox::new();
        let (out, err, code) = s.sh("frobnicate --now");
        assert_eq!(code, 127);
        assert!(out.is_empty());
        assert!(err.starts_with("frobnicate: command not found\n"), "{err}");
        for name in ["cat", "grep", "python", "sed", "xargs"] {
            assert!(err.contains(name), "{name} missing from {err}");
        }
        assert_eq!(s.ok("frobnicate 2>/dev/null; echo $?"), "127\n");
        assert_eq!(
            s.ok("/bin/echo via-path; /usr/bin/env printenv HOME"),
            "via-path\n/app\n"
        );
        assert_eq!(s.sh("/opt/bin/echo x").2, 127);
    }

    #[test]
    fn scripts_and_nesting() {
        let mut s = Sandbox::new();
        s.write("s.sh", "echo script $1 $#\ncd /tmp\nX=in\n");
        assert_eq!(
            s.ok("sh s.sh a b; pwd; echo \"[$X]\""),
            "script a 2\n/app\n[]\n"
        );
        assert_eq!(s.ok("bash -c 'echo $0' zero"), "zero\n");
        assert_eq!(
            s.ok("source s.sh q; pwd; echo $X; cd /app"),
            "script q 1\n/tmp\nin\n"
        );
        assert_eq!(s.ok(". /app/s.sh; cd /app"), "script 0\n");
        assert_eq!(s.ok("./s.sh z"), "script z 1\n");
        assert_eq!(s.ok("echo 'echo from stdin' | sh"), "from stdin\n");
        assert_eq!(s.ok("echo 'cat' > c.sh; echo piped | sh c.sh"), "");
        s.write("loop.sh", "sh /app/loop.sh\n");
        let (_, err, code) = s.sh("sh loop.sh");
        assert!(err.contains("nested too deeply"), "{err}");
        assert_eq!(code, 126);
        let (_, err, code) = s.sh("sh -c 'if'");
        assert!(err.contains("not supported") && code == 2, "{err}");
        let (_, err, code) = s.sh("./missing.sh");
        assert!(err.contains("No such file") && code == 127, "{err}");
    }

    #[test]
    fn interpreters_get_code_argv_and_stdin() {
        let mut s = Sandbox::new();
        s.write("prog.py", "import sys\nprint(sys.argv)\n");
        s.write("sub/app.js", "console.log(1)\n");
        assert_eq!(
            s.ok("python -c 'print(1)' a b"),
            "python ran 1 line(s), stdin 0 byte(s)\n"
        );
        assert_eq!(
            s.interp.calls[0],
            super::tests::Call {
                language: Language::Python,
                code: "print(1)".into(),
                argv: vec!["-c".into(), "a".into(), "b".into()],
                stdin: Vec::new(),
            }
        );
        s.ok("cd sub; echo data | python3 ../prog.py x");
        let c = &s.interp.calls[1];
        assert_eq!(c.code, "import sys\nprint(sys.argv)\n");
        assert_eq!(c.argv, ["/app/prog.py", "x"]);
        assert_eq!(c.stdin, b"data\n");
        s.ok("node app.js 1; qjs -e 'console.log(2)'; cd /app");
        assert_eq!(s.interp.calls[2].language, Language::JavaScript);
        assert_eq!(s.interp.calls[2].argv, ["/app/sub/app.js", "1"]);
        assert_eq!(s.interp.calls[3].code, "console.log(2)");
        s.ok("echo 'print(3)' | python");
        assert_eq!(s.interp.calls[4].code, "print(3)\n");
        assert!(s.interp.calls[4].stdin.is_empty());
        s.ok("python -m json.tool x.json >/dev/null");
        assert!(s.interp.calls[5].code.contains("run_module(\"json.tool\""));
        assert_eq!(s.interp.calls[5].argv, ["json.tool", "x.json"]);
        s.write("run", "#!/usr/bin/env python3\nprint(1)\n");
        s.ok("./run arg");
        assert_eq!(s.interp.calls[6].argv, ["/app/run", "arg"]);
        // Failures: exit code and stderr pass through.
        let (_, err, code) = s.sh("python -c 'fail()'");
        assert_eq!((err.as_str(), code), ("Traceback: boom\n", 1));
        let (_, err, code) = s.sh("python missing.py");
        assert!(
            err.contains("python: missing.py: No such file or directory") && code == 2,
            "{err}"
        );
        let o = s.run("python /etc/passwd");
        assert_eq!(
            o.error,
            Some(ShellError::PathRestriction("/etc/passwd".into()))
        );
        let calls = s.interp.calls.len();
        assert_eq!(s.sh("python").2, 2);
        assert_eq!(s.interp.calls.len(), calls);
    }

    #[test]
    fn pip_installs_through_the_worker() {
        let mut s = Sandbox::new();
        s.write(
            "requirements.txt",
            "# deps\nrequests==2.31\n\n-e .\nnumpy  # fast\n",
        );
        assert_eq!(
            s.ok("pip install -q pandas==2.1 tqdm"),
            "Successfully installed pandas==2.1 tqdm\n"
        );
        s.ok("pip3 install -r requirements.txt");
        s.ok("python -m pip install --upgrade rich");
        assert_eq!(
            s.interp.installs,
            vec![
                vec!["pandas==2.1".to_string(), "tqdm".into()],
                vec!["requests==2.31".to_string(), "numpy".into()],
                vec!["rich".to_string()],
            ]
        );
        assert_eq!(s.sh("pip install").2, 1);
        assert_eq!(s.sh("pip uninstall x").2, 1);
        s.ok("pip list");
        assert!(
            s.interp
                .calls
                .last()
                .unwrap()
                .code
                .contains("importlib.metadata")
        );
    }

    #[test]
    fn confinement_refuses_paths_outside_the_mounts() {
        let mut s = Sandbox::new();
        s.write("a.txt", "a\n");
        let host_app = fs::canonicalize(s.app.path())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let outside = s
            .outside
            .path()
            .join("secret")
            .to_string_lossy()
            .into_owned();
        for (script, path) in [
            ("cat /etc/passwd", "/etc/passwd"),
            ("cat /proc/self/environ", "/proc/self/environ"),
            ("ls /app/../../etc", "/etc"),
            ("cat ../../../etc/shadow", "/etc/shadow"),
            ("cd /app/sub/../../../root", "/root"),
            ("head /dev/zero", "/dev/zero"),
            ("grep -r root /etc", "/etc"),
            ("find /proc -name x", "/proc"),
            ("cp /etc/hosts /app/", "/etc/hosts"),
            ("echo x > /etc/evil", "/etc/evil"),
            ("touch /evil", "/evil"),
            ("mkdir /newtop", "/newtop"),
            ("wc -l < /etc/passwd", "/etc/passwd"),
            ("du -s /home", "/home"),
        ] {
            let o = s.run(script);
            // The command's usual failure status: 1, or 2 for ls and grep (as coreutils).
            let expected = if script.starts_with("ls") || script.starts_with("grep") {
                2
            } else {
                1
            };
            assert_eq!(
                o.exit_code,
                expected,
                "{script}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            assert_eq!(
                o.error,
                Some(ShellError::PathRestriction(path.into())),
                "{script}"
            );
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.contains("path_restriction"), "{script}: {err}");
            s.assert_no_host_paths(&o);
        }
        // Host paths are not a way in either: they are guest paths like any other (here under
        // the guest /tmp, where they do not exist).
        let o = s.run(&format!("cat {host_app}/a.txt; cat {outside}"));
        assert_eq!(o.exit_code, 1);
        assert!(o.stdout.is_empty());
        assert!(!String::from_utf8_lossy(&o.stderr).contains(SECRET));
        // The error names only the first refusal; the script went on.
        let o = s.run("cat /etc/a; echo still; cat /etc/b");
        assert_eq!(o.stdout, b"still\n");
        assert_eq!(o.error, Some(ShellError::PathRestriction("/etc/a".into())));
        assert!(!fs::exists("/evil").unwrap_or(false));
    }

    #[test]
    fn confinement_refuses_symlinks_out_of_a_mount() {
        let mut s = Sandbox::new();
        let a = s.app.path().to_path_buf();
        symlink(s.outside.path(), a.join("link")).unwrap();
        symlink(s.outside.path().join("secret"), a.join("secret_link")).unwrap();
        symlink(s.outside.path().join("new_file"), a.join("dangling")).unwrap();
        symlink("../../../../../../../../etc", a.join("relative")).unwrap();
        s.write("inner/ok.txt", "fine\n");
        symlink("inner", a.join("good")).unwrap();
        for script in [
            "cat link/secret",
            "cat secret_link",
            "ls link",
            "ls link/",
            "cd link",
            "echo pwned > link/new",
            "echo pwned > dangling",
            "echo pwned >> secret_link",
            "mkdir -p link/x",
            "touch link/t",
            "cp secret_link copy",
            "cp -r link/ copy",
            "cat relative/passwd",
            "head link/secret",
            "grep TOP link/secret",
            "wc -c secret_link",
            "sort secret_link",
            "sed -i s/TOP/x/ secret_link",
            "tee link/t2 < /dev/null",
            "python link/secret",
            "rm link/secret",
            "mv link/secret /app/stolen",
            "du -s link/",
        ] {
            s.assert_restricted(script);
        }
        assert!(!s.outside.path().join("new").exists());
        assert!(!s.outside.path().join("new_file").exists());
        assert!(!s.outside.path().join("x").exists());
        assert!(s.outside.path().join("secret").exists());
        assert_eq!(
            fs::read_to_string(s.outside.path().join("secret")).unwrap(),
            SECRET
        );
        // Walks see the links but never go through them.
        for script in [
            "grep -r TOP .",
            "grep -rl TOP /app",
            "find . -name secret",
            "ls -R",
            "du -a .",
            "cat *",
        ] {
            let o = s.run(script);
            s.assert_no_host_paths(&o);
        }
        assert_eq!(
            s.ok("find . -type l | sort"),
            "./dangling\n./good\n./link\n./relative\n./secret_link\n"
        );
        assert!(s.ok("ls -l").contains("link -> <outside the sandbox>"));
        assert!(
            s.ok("ls -l relative")
                .contains("relative -> ../../../../../../../../etc")
        );
        // Links inside the mount work.
        assert_eq!(
            s.ok("cat good/ok.txt; cd good; pwd; cd /app"),
            "fine\n/app/good\n"
        );
        assert_eq!(s.ok("realpath good/ok.txt"), "/app/inner/ok.txt\n");
        // Removing a link removes the link, never its target.
        s.ok("rm link secret_link dangling; rm -rf relative");
        assert!(!s.exists("link") && !s.exists("relative"));
        assert!(s.outside.path().join("secret").exists());
        // rm -r of a tree holding a link out leaves the outside alone.
        s.write("tree/f", "x");
        symlink(s.outside.path(), a.join("tree/out")).unwrap();
        s.ok("rm -rf tree");
        assert!(!s.exists("tree"));
        assert_eq!(
            fs::read_to_string(s.outside.path().join("secret")).unwrap(),
            SECRET
        );
        // Copying a tree with a link copies the link, not what it points to.
        s.write("t2/f", "x");
        symlink(s.outside.path(), a.join("t2/out")).unwrap();
        s.ok("cp -r t2 t3");
        assert!(
            fs::symlink_metadata(a.join("t3/out"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_link(a.join("t3/out")).unwrap(), s.outside.path());
        assert!(s.run("cat t3/out/secret").error.is_some());
    }

    use crate::shell::path::tests::names as host_names;

    impl Sandbox {
        /// The outside directory holds only its secret, with its content and mode.
        fn assert_outside_untouched(&self, mode: u32) {
            assert_eq!(host_names(self.outside.path()), ["secret"]);
            let secret = self.outside.path().join("secret");
            assert_eq!(fs::read_to_string(&secret).unwrap(), SECRET);
            let now = fs::metadata(&secret).unwrap().permissions().mode() & 0o7777;
            assert_eq!(now, mode, "the secret's mode changed");
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

    /// A symlink in the middle of a path (`sub/out/...` with `out -> ../../<outside>`, and
    /// `sub/up -> ../../../../../../..`) is refused by every command that would go through it,
    /// and walks over the tree never enter it.
    #[test]
    fn confinement_refuses_links_in_the_middle_of_a_path() {
        let mut s = Sandbox::new();
        let a = s.app.path().to_path_buf();
        let secret_mode = fs::metadata(s.outside.path().join("secret"))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777;
        let outside_name = s
            .outside
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        s.write("a.txt", "a\n");
        s.write("d/f", "f\n");
        fs::create_dir(a.join("sub")).unwrap();
        symlink(format!("../../{outside_name}"), a.join("sub/out")).unwrap();
        symlink("../../../../../../..", a.join("sub/up")).unwrap();
        for script in [
            "cat sub/out/secret",
            "head sub/up/etc/passwd",
            "cat < sub/out/secret",
            "wc -c < sub/out/secret",
            "echo pwned > sub/out/new",
            "echo pwned >> sub/out/secret",
            "mkdir -p sub/out/x/y",
            "mkdir sub/out/x",
            "touch sub/out/t",
            "cp sub/out/secret copy",
            "cp a.txt sub/out/",
            "cp a.txt sub/out/new",
            "cp -r sub/out/ copy2",
            "cp -r d sub/out/d",
            "mv sub/out/secret stolen",
            "mv a.txt sub/out/new",
            "rm sub/out/secret",
            "rm -rf sub/out/secret",
            "rm -rf sub/up/tmp",
            "rmdir sub/up/tmp",
            "ls sub/out/",
            "ls -R sub/up/tmp",
            "find sub/up/tmp -name x",
            "find sub/out/x",
            "grep -r TOP sub/out/",
            "grep TOP sub/out/secret",
            "du -s sub/out/",
            "chmod 777 sub/out/secret",
            "sed -i s/TOP/x/ sub/out/secret",
            "tee sub/out/t2 < /dev/null",
            "sort -o sub/out/s a.txt",
            "python sub/out/secret",
            "cd sub/out",
            "realpath -e sub/out/secret",
        ] {
            s.assert_restricted(script);
            s.ok("cd /app");
        }
        s.assert_outside_untouched(secret_mode);
        // Walks see the links and never go through them.
        for script in [
            "ls -R",
            "ls -laR sub",
            "find .",
            "find . -name secret",
            "grep -r TOP .",
            "grep -rl TOP /app",
            "du -a .",
            "chmod -R 777 .",
            "cp -r sub sub2",
            "rm -rf sub2",
            "find . -name 'x*' -delete",
        ] {
            let o = s.run(script);
            s.assert_no_host_paths(&o);
            assert!(
                !String::from_utf8_lossy(&o.stdout).contains("secret"),
                "{script}"
            );
        }
        s.assert_outside_untouched(secret_mode);
        assert_eq!(s.ok("find sub -type l | sort"), "sub/out\nsub/up\n");
        // The links themselves are removed, never what they point to.
        s.ok("rm -r sub");
        assert!(!s.exists("sub"));
        s.assert_outside_untouched(secret_mode);
    }

    /// Reading or writing a FIFO, a socket or a link to one is refused at once instead of
    /// blocking the shell (and the session) until the deadline.
    #[test]
    fn fifos_and_sockets_are_refused_promptly() {
        let s = Sandbox::new();
        let a = s.app.path().to_path_buf();
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            a.join("fifo"),
            rustix::fs::Mode::from_raw_mode(0o644),
        )
        .unwrap();
        let _listener = std::os::unix::net::UnixListener::bind(a.join("sock")).unwrap();
        symlink("fifo", a.join("to_fifo")).unwrap();
        let mut s = s;
        for script in [
            "cat fifo",
            "cat to_fifo",
            "cat sock",
            "head -n 1 fifo",
            "tail fifo",
            "grep x fifo",
            "wc -l fifo",
            "wc -l < fifo",
            "sort fifo",
            "sed s/a/b/ fifo",
            "sh fifo",
            "python fifo",
            "echo x > fifo",
            "echo x >> to_fifo",
            "echo x > sock",
            "tee fifo < /dev/null",
            "cp fifo copy",
            "cp a_file_that_is_missing fifo",
            "touch fifo",
        ] {
            let started = Instant::now();
            let (back, o) = s.run_promptly(script);
            s = back;
            assert_ne!(o.exit_code, 0, "{script}");
            assert!(started.elapsed() < Duration::from_secs(5), "{script}");
        }
        let (back, o) = s.run_promptly("cat fifo; echo x > fifo");
        s = back;
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            err,
            "cat: fifo: not a regular file\nsh: fifo: not a regular file\n"
        );
        // Walks list them without opening them.
        let (back, o) = s.run_promptly("grep -r x .; ls -l; find . -type f; cp -r /app /tmp/copy");
        s = back;
        assert!(String::from_utf8_lossy(&o.stdout).contains("prw-r--r--"));
        assert!(!s.tmp.path().join("copy/fifo").exists());
    }

    /// Hard links inside a mount are the same file: writing through one is allowed, copying one
    /// onto the other is refused like coreutils does, and nothing appears outside.
    #[test]
    fn hard_links_inside_a_mount_stay_inside() {
        let mut s = Sandbox::new();
        let a = s.app.path().to_path_buf();
        let secret_mode = fs::metadata(s.outside.path().join("secret"))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777;
        s.write("orig", "o\n");
        fs::hard_link(a.join("orig"), a.join("hard")).unwrap();
        s.ok("echo more >> hard");
        assert_eq!(s.read("orig"), "o\nmore\n");
        assert_eq!(s.ok("cat hard"), "o\nmore\n");
        assert!(s.ok("ls -l orig").starts_with("-rw-r--r-- 2 "));
        let (_, err, code) = s.sh("cp orig hard");
        assert_eq!(
            (err.as_str(), code),
            ("cp: 'orig' and 'hard' are the same file\n", 1)
        );
        assert_eq!(s.read("orig"), "o\nmore\n");
        s.ok("cp hard /tmp/copy; mv hard moved; rm moved");
        assert_eq!(s.read("orig"), "o\nmore\n");
        assert_eq!(
            fs::read_to_string(s.tmp.path().join("copy")).unwrap(),
            "o\nmore\n"
        );
        s.assert_outside_untouched(secret_mode);
    }

    #[test]
    fn read_only_mounts_refuse_every_write() {
        let mut s = Sandbox::new();
        s.write("a.txt", "a\n");
        assert_eq!(s.ok("cat /data/d.txt; ls /data"), "data line\nd.txt\n");
        for script in [
            "touch /data/x",
            "echo x > /data/x",
            "echo x >> /data/d.txt",
            "rm /data/d.txt",
            "rm -rf /data",
            "rm -rf /data/",
            "mkdir /data/n",
            "cp a.txt /data/",
            "mv /data/d.txt /app/",
            "mv a.txt /data/",
            "sed -i s/data/x/ /data/d.txt",
            "tee /data/t < a.txt",
            "chmod 777 /data/d.txt",
            "rmdir /data",
            "cd /data; touch here",
            "sort -o /data/s a.txt",
            "find /data -delete",
        ] {
            let o = s.run(script);
            assert_ne!(o.exit_code, 0, "{script}");
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                matches!(o.error, Some(ShellError::PathRestriction(_))),
                "{script}: {err}"
            );
            assert!(
                err.contains("path_restriction: /data is read-only")
                    || err.contains("Device or resource busy"),
                "{script}: {err}"
            );
            s.ok("cd /app");
        }
        assert_eq!(
            fs::read_to_string(s.data.path().join("d.txt")).unwrap(),
            "data line\n"
        );
        assert_eq!(fs::read_dir(s.data.path()).unwrap().count(), 1);
        assert_eq!(s.read("a.txt"), "a\n");
    }

    #[test]
    fn rm_rf_never_removes_mounts_or_the_root() {
        let mut s = Sandbox::new();
        s.write("keep/me.txt", "x");
        let o = s.run("rm -rf /");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("dangerous to operate recursively on '/'") && o.exit_code == 1,
            "{err}"
        );
        assert!(err.contains("path_restriction: / is read-only"), "{err}");
        assert_eq!(o.error, Some(ShellError::PathRestriction("/".into())));
        for script in ["rm -rf /app/..", "rm -rf ..", "rm -rf .", "rm -rf /app/."] {
            let (_, err, code) = s.sh(script);
            assert!(
                code == 1 && (err.contains("refusing") || err.contains("dangerous")),
                "{script}: {err}"
            );
        }
        assert!(s.exists("keep/me.txt"));
        let (_, err, code) = s.sh("rm -rf /app");
        assert_eq!(code, 0);
        assert!(err.contains("mount point"));
        assert!(s.app.path().is_dir());
        assert_eq!(fs::read_dir(s.app.path()).unwrap().count(), 0);
        s.write("again.txt", "x");
        fs::write(s.tmp.path().join("t"), "t").unwrap();
        let o = s.run("rm -rf /*");
        assert_eq!(o.error, Some(ShellError::PathRestriction("/data".into())));
        assert!(s.app.path().is_dir() && s.tmp.path().is_dir());
        assert_eq!(fs::read_dir(s.app.path()).unwrap().count(), 0);
        assert_eq!(fs::read_dir(s.tmp.path()).unwrap().count(), 0);
        assert!(s.data.path().join("d.txt").exists());
        assert!(s.outside.path().join("secret").exists());
        let (_, err, code) = s.sh("rmdir /app");
        assert!(
            err.contains("Device or resource busy") && code == 1,
            "{err}"
        );
        let (_, err, _) = s.sh("mkdir x; mv /app /app/x/y; mv /tmp /app/t");
        assert!(err.matches("Device or resource busy").count() == 2, "{err}");
        assert!(s.app.path().is_dir());
        assert_eq!(s.sh("rm -r /app; ls -A /app; pwd").0, "/app\n");
    }

    #[test]
    fn no_host_paths_in_any_output() {
        let mut s = Sandbox::new();
        s.write("f.txt", "x\n");
        for script in [
            "ls -la; ls -laR /",
            "cat nope; cat /app; cat /",
            "cd /app/none",
            "realpath f.txt /app /; env; export",
            "mkdir f.txt; rmdir f.txt; rm -r nope; cp nope x; mv nope x",
            "du -a /; find / | head",
            "grep -r x /; grep x nope",
            "echo x > /app; echo x < nope",
            "python nope.py; node nope.js; sh nope.sh; source nope",
            "ls -l /data /tmp",
        ] {
            let o = s.run(script);
            s.assert_no_host_paths(&o);
        }
    }

    #[test]
    fn output_caps_truncate_and_stop_producers() {
        let mut s = Sandbox::new();
        let mut limits = s.limits();
        limits.stdout_cap = 100;
        limits.stderr_cap = 30;
        let started = Instant::now();
        let o = s.run_with("seq 1 1e12; ls nope nope2 nope3", &limits);
        assert_eq!(o.stdout.len(), 100);
        assert!(o.stdout_truncated && o.stderr_truncated);
        assert_eq!(o.stderr.len(), 30);
        assert_eq!(o.exit_code, 2);
        assert_eq!(o.error, None);
        assert!(started.elapsed() < Duration::from_secs(5));
        let o = s.run_with("echo 12345", &limits);
        assert!(!o.stdout_truncated);
        // A pipe stops its producer like SIGPIPE would.
        let started = Instant::now();
        assert_eq!(s.ok("seq 1 1e12 | head -n 2"), "1\n2\n");
        assert!(started.elapsed() < Duration::from_secs(10));
        // ...and a consumer that needed all of it is told the input was cut.
        let (out, err, _) = s.sh("seq 1 1e12 | wc -l");
        assert!(err.contains("was cut at 32 MiB"), "{err}");
        assert!(out.trim().parse::<u64>().unwrap() > 1_000_000);
    }

    #[test]
    fn deadline_and_cancel_stop_everything() {
        let mut s = Sandbox::new();
        let mut limits = s.limits();
        limits.deadline = Instant::now();
        let o = s.run_with("echo never", &limits);
        assert_eq!(
            (o.exit_code, o.error.clone()),
            (EXIT_TIMEOUT, Some(ShellError::Timeout))
        );
        assert!(o.stdout.is_empty());
        for script in [
            "sleep 30",
            "seq 1 1e15 > /app/big",
            "echo a; sleep 30; echo b",
            "sh -c 'sleep 30'",
            "seq 1 1e15 | sort",
        ] {
            let mut limits = s.limits();
            limits.deadline = Instant::now() + Duration::from_millis(300);
            let started = Instant::now();
            let o = s.run_with(script, &limits);
            assert_eq!(o.exit_code, EXIT_TIMEOUT, "{script}");
            assert_eq!(o.error, Some(ShellError::Timeout), "{script}");
            assert!(String::from_utf8_lossy(&o.stderr).contains("timed out"));
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "{script} took {:?}",
                started.elapsed()
            );
        }
        s.ok("rm -f /app/big");
        let limits = s.limits();
        limits.cancel.store(true, Ordering::Relaxed);
        let o = s.run_with("echo never", &limits);
        assert_eq!(
            (o.exit_code, o.error),
            (EXIT_CANCELLED, Some(ShellError::Cancelled))
        );
        let limits = s.limits();
        let flag = Arc::clone(&limits.cancel);
        let setter = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            flag.store(true, Ordering::Relaxed);
        });
        let started = Instant::now();
        let o = s.run_with("echo first; sleep 30; echo never", &limits);
        setter.join().unwrap();
        assert_eq!(
            (o.exit_code, o.error),
            (EXIT_CANCELLED, Some(ShellError::Cancelled))
        );
        assert_eq!(o.stdout, b"first\n");
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn resource_abuse_is_bounded() {
        let mut s = Sandbox::new();
        let started = Instant::now();
        let doubling = format!("A=0123456789\n{}echo done", "A=$A$A\n".repeat(40));
        let (out, err, code) = s.sh(&doubling);
        assert_eq!((out.as_str(), code), ("done\n", 0));
        assert!(err.contains("expansion too long (over 16 MiB)"), "{err}");
        assert!(s.state.vars["A"].len() <= expand::MAX_EXPANSION);
        let many = format!("B=\"$A$A$A$A$A$A$A$A\"; echo {} | wc -c", "$A ".repeat(200));
        let (_, err, code) = s.sh(&many);
        assert!(err.contains("too long") && code == 0, "{err}");
        assert!(started.elapsed() < Duration::from_secs(10));
        let vars = "C=\"$A\"; D=\"$A\"; E=\"$A\"; F=\"$A\"; G=\"$A\"";
        let (_, err, code) = s.sh(vars);
        assert!(err.contains("variables too large") && code == 1, "{err}");
        let total: usize = s.state.vars.values().map(String::len).sum();
        assert!(total <= exec::MAX_VARS);
        assert_eq!(s.ok("printf '%999999999999s' x | wc -c"), "1048576\n");
        assert_eq!(s.ok("printf '%.99999999f' 1 | wc -c"), "4098\n");
        assert_eq!(s.ok("printf '%.99999e' 1 | wc -c"), "4102\n");
        let (out, _, _) = s.sh(&format!("seq 0.{}1 1 1 | wc -c", "0".repeat(70_000)));
        assert_eq!(out, "8198\n");
        // An `exit` in a pipeline stage ends only that stage.
        assert_eq!(s.ok("exit 3 | echo x; echo after"), "x\nafter\n");
        s.ok("seq 1 300000 > nums");
        let amplify = format!("sed 's/[0-9]/{}/g' nums > /dev/null", "&".repeat(100));
        let (_, err, code) = s.sh(&amplify);
        assert!(err.contains("output over 64 MiB") && code == 4, "{err}");
        assert!(started.elapsed() < Duration::from_secs(30));
    }

    #[test]
    fn default_state() {
        let st = ShellState::default();
        assert_eq!(st.cwd, "/app");
        assert_eq!(st.vars.get("HOME").map(String::as_str), Some("/app"));
        assert_eq!(st.vars.get("PWD").map(String::as_str), Some("/app"));
        assert_eq!(st.vars.len(), 4);
    }
}
