//! `sandbox-worker jail-probe`, for tests only: the jail as an attacker who has escaped
//! Wasmtime and runs native code in the worker would meet it.
//!
//! The probe is started exactly like `serve` (same arguments, same start-up, same
//! [`crate::jail::enter`]), then, instead of starting an interpreter, tries what the jail exists
//! to prevent: read another session's files, the server's state directory and environment and
//! `/etc/passwd`; write the module cache; connect a TCP socket; fork, exec, raise its limits or
//! touch its parent's; make a set-user-id file. It reports each attempt over the real socket, as the `Failed` message of
//! the handshake, so the supervisor hands it to the client as the error of the first call.
//!
//! What it cannot work out itself comes from `SANDBOX_PROBE_TARGETS` (JSON, see [`Targets`]),
//! which the supervisor passes on only to a probe. The other session's directory is looked up
//! by id before the jail; every attempt happens after it.

use std::ffi::CString;
use std::path::{Path, PathBuf};

use sandbox_protocol::{JailReport, Layer};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::jail::{c_path, errno_name};

/// The environment variable holding [`Targets`].
pub const TARGETS_VAR: &str = "SANDBOX_PROBE_TARGETS";

/// What the tests point the probe at.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Targets {
    /// The id of another session of the same server.
    pub other_session: Option<String>,
    /// A file in that session's `/app`.
    pub other_file: Option<String>,
    /// A port on 127.0.0.1 where the test listens.
    pub tcp_port: Option<u16>,
}

/// Every target, as host paths, found before the jail.
#[derive(Debug, Default)]
pub struct Plan {
    other_app: Option<PathBuf>,
    other_file: Option<PathBuf>,
    state_dir: Option<PathBuf>,
    sessions_dir: Option<PathBuf>,
    module: PathBuf,
    own_app: PathBuf,
    tcp_port: Option<u16>,
}

impl Plan {
    /// Reads [`TARGETS_VAR`] and finds the paths. The workspace is
    /// `<state>/sessions/<id>.<nonce>/app`, so the state directory is three levels up.
    pub fn new(workspace: &Path, module: &Path) -> Self {
        let targets: Targets = std::env::var(TARGETS_VAR)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        let sessions_dir = workspace.parent().and_then(Path::parent);
        let state_dir = sessions_dir.and_then(Path::parent);
        let other_app = match (&targets.other_session, sessions_dir) {
            (Some(id), Some(sessions)) => std::fs::read_dir(sessions).ok().and_then(|entries| {
                entries.flatten().find_map(|e| {
                    let name = e.file_name();
                    let (session, _nonce) = name.to_str()?.rsplit_once('.')?;
                    (session == id).then(|| e.path().join("app"))
                })
            }),
            _ => None,
        };
        let other_file = match (&other_app, &targets.other_file) {
            (Some(app), Some(file)) => Some(app.join(file)),
            _ => None,
        };
        Self {
            other_file,
            other_app,
            state_dir: state_dir.map(Path::to_path_buf),
            sessions_dir: sessions_dir.map(Path::to_path_buf),
            module: module.to_path_buf(),
            own_app: workspace.to_path_buf(),
            tcp_port: targets.tcp_port,
        }
    }
}

/// One attempt's outcome: `Ok` when the forbidden thing worked, or the errno that stopped it.
type Outcome = Result<(), i32>;

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Opens `path` with `flags`, reads one byte when `read` is set, and closes it.
fn open(path: &Path, flags: i32, read: bool) -> Outcome {
    let path = c_path(path).ok_or(libc::EINVAL)?;
    // SAFETY: a valid NUL-terminated path; the descriptor is closed below.
    let fd = unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC, 0o600) };
    if fd < 0 {
        return Err(errno());
    }
    let mut outcome = Ok(());
    if read {
        let mut byte = [0u8; 1];
        // SAFETY: reads at most one byte into a one-byte buffer we own.
        if unsafe { libc::read(fd, byte.as_mut_ptr().cast(), 1) } < 0 {
            outcome = Err(errno());
        }
    }
    // SAFETY: fd was opened above and is closed once.
    unsafe { libc::close(fd) };
    outcome
}

fn create_in(dir: &Path) -> Outcome {
    let path = dir.join(format!("jail-probe-{}.tmp", std::process::id()));
    open(&path, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL, false)?;
    // The probe must not leave litter in the cache when the jail is off.
    remove(&path);
    Ok(())
}

fn tcp_connect(port: u16) -> Outcome {
    // SAFETY: socket takes plain integers.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(errno());
    }
    let addr = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: addr is a valid sockaddr_in of the size we pass; fd is ours and closed below.
    let rc = unsafe {
        libc::connect(
            fd,
            (&raw const addr).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    let outcome = if rc == 0 { Ok(()) } else { Err(errno()) };
    // SAFETY: closes the socket opened above.
    unsafe { libc::close(fd) };
    outcome
}

/// Forks a child that runs `in_child` (which must only make async-signal-safe calls and end
/// in `_exit`) and returns the child's exit status.
fn fork_and_wait(in_child: impl FnOnce()) -> Result<i32, i32> {
    // SAFETY: the probe is single-threaded here (it runs before any thread starts), so the
    // child is a full copy; it only calls execve/_exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(errno());
    }
    if pid == 0 {
        in_child();
        // SAFETY: _exit is async-signal-safe; only reached if `in_child` returned.
        unsafe { libc::_exit(127) };
    }
    let mut status = 0;
    // SAFETY: waits for the child we just forked.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    Ok(libc::WEXITSTATUS(status))
}

fn fork() -> Outcome {
    // SAFETY: _exit is async-signal-safe.
    fork_and_wait(|| unsafe { libc::_exit(0) }).map(|_| ())
}

/// `execve("/bin/true")`: in a child when fork works, so a successful exec does not end the
/// probe; in the probe itself otherwise (if that exec worked, the probe would vanish and the
/// test would see a worker that died instead of a report: a failure either way).
fn exec() -> Outcome {
    let (Ok(program), Ok(arg0)) = (CString::new("/bin/true"), CString::new("true")) else {
        return Err(libc::EINVAL);
    };
    let argv = [arg0.as_ptr(), std::ptr::null()];
    let envp = [std::ptr::null()];
    let attempt = || -> i32 {
        // SAFETY: program, argv and envp are NUL-terminated and outlive the call.
        unsafe { libc::execve(program.as_ptr(), argv.as_ptr(), envp.as_ptr()) };
        errno()
    };
    match fork_and_wait(|| {
        let e = attempt();
        // SAFETY: _exit is async-signal-safe; the errno is the child's exit status.
        unsafe { libc::_exit(e) }
    }) {
        Ok(0) => Ok(()),
        Ok(e) => Err(e),
        Err(_) => Err(attempt()),
    }
}

/// RLIMIT_NOFILE above its hard limit.
fn raise_limit() -> Outcome {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(errno());
    }
    let raised = libc::rlimit {
        rlim_cur: limit.rlim_max + 1,
        rlim_max: limit.rlim_max + 1,
    };
    // SAFETY: setrlimit reads the struct we pass.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
        return Err(errno());
    }
    Ok(())
}

/// Reads the parent's RLIMIT_NOFILE, then writes the same value back (harmless if it works).
fn parent_limit(parent: libc::pid_t) -> Outcome {
    let mut old = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: prlimit writes `old`, which we own; no new limit is passed.
    if unsafe { libc::prlimit(parent, libc::RLIMIT_NOFILE, std::ptr::null(), &mut old) } != 0 {
        return Err(errno());
    }
    // SAFETY: prlimit reads `old`; the parent's limit is set to what it already is.
    if unsafe { libc::prlimit(parent, libc::RLIMIT_NOFILE, &old, std::ptr::null_mut()) } != 0 {
        return Err(errno());
    }
    Ok(())
}

/// A set-user-id file in the probe's own `/app` (its own file: harmless when it works).
fn setuid_file(app: &Path) -> Outcome {
    let path = app.join(format!(".jail-probe-{}", std::process::id()));
    open(&path, libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC, false)?;
    let outcome = (|| {
        let c = c_path(&path).ok_or(libc::EINVAL)?;
        // SAFETY: a valid NUL-terminated path.
        if unsafe { libc::chmod(c.as_ptr(), 0o4755) } != 0 {
            return Err(errno());
        }
        Ok(())
    })();
    remove(&path);
    outcome
}

/// Removes a file the probe made, with `unlinkat`: std's `remove_file` uses the older `unlink`,
/// which the seccomp allow-list does not have (the worker itself never calls it).
fn remove(path: &Path) {
    if let Some(c) = c_path(path) {
        // SAFETY: a valid NUL-terminated path.
        unsafe { libc::unlinkat(libc::AT_FDCWD, c.as_ptr(), 0) };
    }
}

fn signal(parent: libc::pid_t) -> Outcome {
    // SAFETY: signal 0 only checks that the signal could be sent.
    if unsafe { libc::kill(parent, 0) } != 0 {
        return Err(errno());
    }
    Ok(())
}

/// Which layer most likely stopped an attempt, when the errno and the layers in force tell.
fn stopped_by(kind: Kind, errno: i32, jail: &JailReport) -> Option<Layer> {
    let on = |layer| jail.state(layer).is_enforced();
    match (kind, errno) {
        // A filtered call fails with the filter's EPERM before the kernel looks further.
        (Kind::Syscall, libc::EPERM) if on(Layer::Seccomp) => Some(Layer::Seccomp),
        (Kind::File | Kind::Syscall, libc::EACCES) if on(Layer::Landlock) => Some(Layer::Landlock),
        (Kind::Syscall, libc::EPERM) if on(Layer::Landlock) => Some(Layer::Landlock),
        (Kind::Syscall, libc::ENETUNREACH | libc::ENETDOWN) if on(Layer::Netns) => {
            Some(Layer::Netns)
        }
        _ => None,
    }
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    File,
    Syscall,
}

/// Tries everything and returns the JSON report.
pub fn attack(plan: &Plan, jail: &JailReport) -> String {
    // SAFETY: plain getter.
    let parent = unsafe { libc::getppid() };
    let read_only = libc::O_RDONLY;
    let directory = libc::O_RDONLY | libc::O_DIRECTORY;
    let attempts: Vec<(&str, Kind, Option<Outcome>)> = vec![
        (
            "open_other_session_dir",
            Kind::File,
            plan.other_app.as_deref().map(|p| open(p, directory, false)),
        ),
        (
            "read_other_session_file",
            Kind::File,
            plan.other_file.as_deref().map(|p| open(p, read_only, true)),
        ),
        (
            "list_sessions_dir",
            Kind::File,
            plan.sessions_dir
                .as_deref()
                .map(|p| open(p, directory, false)),
        ),
        (
            "open_state_dir",
            Kind::File,
            plan.state_dir.as_deref().map(|p| open(p, directory, false)),
        ),
        (
            "read_parent_environ",
            Kind::File,
            Some(open(
                Path::new(&format!("/proc/{parent}/environ")),
                read_only,
                true,
            )),
        ),
        (
            "read_etc_passwd",
            Kind::File,
            Some(open(Path::new("/etc/passwd"), read_only, true)),
        ),
        (
            "open_module_for_writing",
            Kind::File,
            Some(open(&plan.module, libc::O_WRONLY, false)),
        ),
        (
            "create_file_in_module_cache",
            Kind::File,
            plan.module.parent().map(create_in),
        ),
        (
            "tcp_connect_loopback",
            Kind::Syscall,
            plan.tcp_port.map(tcp_connect),
        ),
        ("fork", Kind::Syscall, Some(fork())),
        ("exec_bin_true", Kind::Syscall, Some(exec())),
        (
            "raise_nofile_above_hard_limit",
            Kind::Syscall,
            Some(raise_limit()),
        ),
        ("prlimit_parent", Kind::Syscall, Some(parent_limit(parent))),
        (
            "chmod_setuid_own_file",
            Kind::Syscall,
            Some(setuid_file(&plan.own_app)),
        ),
        ("signal_parent", Kind::Syscall, Some(signal(parent))),
    ];
    let attempts: Vec<Value> = attempts
        .into_iter()
        .map(|(name, kind, outcome)| match outcome {
            None => json!({ "attempt": name, "result": "skipped: no target" }),
            Some(Ok(())) => json!({ "attempt": name, "result": "ok" }),
            Some(Err(e)) => json!({
                "attempt": name,
                "result": errno_name(e),
                "stopped_by": stopped_by(kind, e, jail).map(Layer::name),
            }),
        })
        .collect();
    let layers: serde_json::Map<String, Value> = Layer::ALL
        .iter()
        .map(|l| (l.name().to_owned(), json!(jail.state(*l).describe())))
        .collect();
    json!({ "jail_probe": { "jail": layers, "attempts": attempts } }).to_string()
}
