//! The fork server (`sandbox-worker fork-server`): one process per runtime that does, once, what
//! every worker would do before its session's first call (exec, dynamic linking, deserialising
//! the interpreter's module, instantiating its memory image and waking it), then forks a worker
//! for each session the supervisor asks for ([`ForkRequest`]). Asked while nobody waits
//! ([`ForkAsk::Spare`]), it forks the next session's worker ahead, with namespaces of its own
//! made ahead too: the spare wakes its interpreter and waits for its session ([`Spare`]), so
//! that a new session's first call pays for neither the fork nor the wake.
//!
//! A forked worker is set up as the supervisor's `pre_exec` sets up an exec'd one (own process
//! group, parent-death signal, rlimits, no new privileges, its cgroup, `/app` as working
//! directory) and then runs exactly the `serve` it was asked for, jail included. It is forked
//! with `CLONE_PARENT`, so it is the supervisor's child, not ours: the supervisor reaps it and
//! reads its exit status as for any worker, and this server never waits for anything but its
//! next request.
//!
//! A fork copies only the calling thread, so the server never starts one: it checks that it is
//! alone before every fork and refuses (the supervisor then execs) if it is not.

use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::net::UnixStream;

use sandbox_protocol::{
    ForkAsk, ForkLimits, ForkReply, ForkRequest, Layer, WorkerExit, read_frame_blocking,
    write_frame_blocking,
};

use crate::WorkerError;
use crate::jail::SpareNamespaces;
use crate::serve::{Loaded, ServeArgs};

/// Serves fork requests on `template.socket` until the supervisor hangs up. `template` names
/// the interpreter (and placeholder directories laid out as every session's, for the image's
/// instance); `worker` runs in each forked child with the request's command line and what this
/// server loaded, and says how the worker ended.
///
/// # Errors
/// When the supervisor's socket cannot be reached or the modules cannot be mapped.
pub fn run(
    template: &ServeArgs,
    title: Option<Title>,
    worker: impl Fn(Vec<OsString>, Loaded, Option<SpareNamespaces>) -> WorkerExit,
) -> Result<(), WorkerError> {
    let mut control =
        UnixStream::connect(&template.socket).map_err(|source| WorkerError::Connect {
            socket: template.socket.clone(),
            source,
        })?;
    let supervisor = std::os::unix::process::parent_id();
    let mut loaded = Some(Loaded::load(template)?);
    if let Some(loaded) = loaded.as_mut() {
        loaded.map_companion(template);
    }
    let pristine = loaded
        .as_mut()
        .is_some_and(|loaded| loaded.instantiate_image(template));
    let base = loaded.as_mut().and_then(Loaded::take_base);
    tracing::info!(runtime = %template.runtime, pristine, base_bytes = base.as_ref().map(Vec::len), "fork server ready");
    write_frame_blocking(&mut control, &ForkReply::Ready { pristine, base }).map_err(wire)?;
    let mut namespaces = Namespaces::new(template.jail.requested.contains(Layer::Netns));
    let mut spare: Option<Spare> = None;
    loop {
        let Some(ask) = read_frame_blocking::<ForkAsk>(&mut control).map_err(wire)? else {
            return Ok(());
        };
        let reply = match ask {
            // The spare takes the session when it still reads; one that ended is the
            // supervisor's to reap, and a worker is forked now instead.
            ForkAsk::Fork(request) => match spare.take().map(|held| held.hand(&request)) {
                Some(Ok(pid)) => ForkReply::Forked { pid },
                _ => match fork_sibling() {
                    Ok(Some(pid)) => {
                        // The worker has the namespaces now; this server closes its descriptors.
                        drop(namespaces.take());
                        ForkReply::Forked { pid }
                    }
                    Ok(None) => {
                        // The child: nothing of the server's is needed but what `loaded` holds.
                        drop(control);
                        let modules = loaded.take().expect("the server's modules");
                        let joined = namespaces.take();
                        let exit = serve_request(
                            request,
                            (modules, joined),
                            supervisor,
                            title.as_ref(),
                            &worker,
                        );
                        std::process::exit(exit.code());
                    }
                    Err(e) => ForkReply::Refused {
                        message: e.to_string(),
                    },
                },
            },
            ForkAsk::Spare => match &spare {
                Some(held) => ForkReply::Spare { pid: held.pid },
                None => {
                    namespaces.make();
                    match Spare::fork() {
                        Ok(Forking::Server(held)) => {
                            // The spare has the namespaces now.
                            drop(namespaces.take());
                            let pid = held.pid;
                            spare = Some(held);
                            ForkReply::Spare { pid }
                        }
                        Ok(Forking::Spare(line)) => {
                            drop(control);
                            let modules = loaded.take().expect("the server's modules");
                            let joined = namespaces.take();
                            let exit = match Spare::wait(
                                line,
                                modules,
                                supervisor,
                                (template, title.as_ref()),
                            ) {
                                Some((request, modules)) => serve_request(
                                    request,
                                    (modules, joined),
                                    supervisor,
                                    title.as_ref(),
                                    &worker,
                                ),
                                // The server hung up before it had a session for it.
                                None => WorkerExit::Done,
                            };
                            std::process::exit(exit.code());
                        }
                        Err(e) => ForkReply::Refused {
                            message: e.to_string(),
                        },
                    }
                }
            },
        };
        write_frame_blocking(&mut control, &reply).map_err(wire)?;
    }
}

/// In a forked child: becomes the worker `request` asks for (see [`set_up_worker`]) and
/// serves its session with what the server loaded, and says how it ended.
fn serve_request(
    request: ForkRequest,
    (modules, namespaces): (Loaded, Option<SpareNamespaces>),
    supervisor: u32,
    title: Option<&Title>,
    worker: &impl Fn(Vec<OsString>, Loaded, Option<SpareNamespaces>) -> WorkerExit,
) -> WorkerExit {
    if let Some(title) = title {
        title.show(&request.args);
    }
    match set_up_worker(&request, supervisor) {
        Ok(()) => {
            let args = request.args.into_iter().map(OsString::from_vec).collect();
            worker(args, modules, namespaces)
        }
        Err(e) => {
            eprintln!("sandbox-worker: cannot set up a forked worker: {e}");
            WorkerExit::Jail
        }
    }
}

/// The next session's worker, forked ahead while nobody waits (the supervisor asks when it
/// has been idle a moment: [`ForkAsk::Spare`]). It wakes its copy of the interpreter at once
/// and then waits, on a socket pair with the server, for the request of the session it will
/// serve: a new session's first call then costs neither the fork nor the wake. It is the
/// supervisor's child, as every worker (`CLONE_PARENT`), and in a process group of its own
/// from birth, so the supervisor can end and reap one it never needed; it ends by itself
/// when the server goes away.
struct Spare {
    pid: u32,
    /// The server's end of the pair.
    line: UnixStream,
}

/// The two sides of [`Spare::fork`].
enum Forking {
    Server(Spare),
    /// The spare's end of the pair.
    Spare(UnixStream),
}

impl Spare {
    fn fork() -> io::Result<Forking> {
        let (server, spare) = UnixStream::pair()?;
        Ok(match fork_sibling()? {
            Some(pid) => Forking::Server(Spare { pid, line: server }),
            None => {
                drop(server);
                Forking::Spare(spare)
            }
        })
    }

    /// Hands `request` to the spare: its pid when it took it, an error when it ended.
    fn hand(mut self, request: &ForkRequest) -> io::Result<u32> {
        write_frame_blocking(&mut self.line, request).map_err(io::Error::other)?;
        Ok(self.pid)
    }

    /// In the spare: its own process group, the supervisor's death as its end, its title, its
    /// interpreter woken; then the request of its session and what it loaded, or `None` when
    /// the server hung up (or the supervisor is gone) first.
    fn wait(
        mut line: UnixStream,
        mut modules: Loaded,
        supervisor: u32,
        (template, title): (&ServeArgs, Option<&Title>),
    ) -> Option<(ForkRequest, Loaded)> {
        join_supervisor(supervisor).ok()?;
        if let Some(title) = title {
            let runtime = template.runtime.to_string().into_bytes();
            title.show(&[SPARE_TITLE.to_vec(), b"--runtime".to_vec(), runtime]);
        }
        modules.wake_ahead(template);
        crate::jail::prepare_ahead(template.jail.requested);
        let request = read_frame_blocking::<ForkRequest>(&mut line).ok()??;
        Some((request, modules))
    }
}

/// What a spare shows as its subcommand until it has a session (`sandbox-worker spare
/// --runtime python`): neither a fork server nor a `serve` worker.
const SPARE_TITLE: &[u8] = b"spare";

/// The namespaces made ahead for the next worker (see `jail/namespaces.rs`).
struct Namespaces {
    /// Whether workers ask for the `netns` layer and the kernel has not refused the making.
    wanted: bool,
    next: Option<SpareNamespaces>,
}

impl Namespaces {
    fn new(wanted: bool) -> Self {
        Self { wanted, next: None }
    }

    /// Makes the next worker's namespaces, unless they are made or the kernel refused once
    /// (each worker then makes its own).
    fn make(&mut self) {
        if !self.wanted || self.next.is_some() {
            return;
        }
        match SpareNamespaces::make() {
            Ok(made) => self.next = Some(made),
            Err(why) => {
                tracing::debug!(%why, "no namespaces made ahead: each worker makes its own");
                self.wanted = false;
            }
        }
    }

    fn take(&mut self) -> Option<SpareNamespaces> {
        self.next.take()
    }
}

/// A failure on the supervisor's connection.
fn wire(e: sandbox_protocol::FrameError) -> WorkerError {
    WorkerError::Io(io::Error::other(e))
}

/// Forks this process as a sibling (`CLONE_PARENT`): `Some(pid)` here, `None` in the child.
///
/// # Errors
/// When this process has more than one thread (the child would lack them, and any lock they
/// held), or the kernel refuses.
fn fork_sibling() -> io::Result<Option<u32>> {
    let threads = std::fs::read_dir("/proc/self/task")?.count();
    if threads != 1 {
        return Err(io::Error::other(format!(
            "the fork server has {threads} threads; it forks only while alone"
        )));
    }
    let flags = (libc::CLONE_PARENT | libc::SIGCHLD) as libc::c_ulong;
    // SAFETY: with no new stack the child continues here on a copy of this stack, as after
    // fork(2). This process has one thread (checked above), so no lock is held by a thread the
    // child lacks; the child only returns into `run`, which ends it with `exit`.
    let pid = unsafe { libc::syscall(libc::SYS_clone, flags, 0usize, 0usize, 0usize, 0usize) };
    match pid {
        -1 => Err(io::Error::last_os_error()),
        0 => {
            // The thread-local generator that wasmtime-wasi seeds every WASI context from is a
            // copy of the server's: each child would hand its guest the numbers of every other
            // (a raw clone runs no atfork handler). New seeds from the kernel, or no child.
            if let Err(e) = rand::rng().reseed() {
                eprintln!("sandbox-worker: cannot reseed a forked worker's generator: {e}");
                std::process::exit(WorkerExit::Runtime.code());
            }
            Ok(None)
        }
        pid => Ok(Some(u32::try_from(pid).map_err(io::Error::other)?)),
    }
}

/// Fails with the last OS error when a system call returned -1.
fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// In a forked child (a spare at its birth, a worker forked for a request): a process group of
/// its own, so that the supervisor can kill all of it, and the supervisor's death as its own.
///
/// # Errors
/// When the kernel refuses, or the supervisor (the parent, by `CLONE_PARENT`) is already gone.
fn join_supervisor(supervisor: u32) -> io::Result<()> {
    // SAFETY: plain system calls on this process, with valid arguments.
    unsafe {
        check(libc::setpgid(0, 0))?;
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
    }
    // The supervisor may have died before the prctl: then nobody would kill us.
    // SAFETY: getppid has no preconditions.
    if u32::try_from(unsafe { libc::getppid() }).ok() != Some(supervisor) {
        return Err(io::Error::from_raw_os_error(libc::ESRCH));
    }
    Ok(())
}

/// In the forked child: what the supervisor's `pre_exec` does for an exec'd worker, in its
/// order, and the working directory. (A spare joined the supervisor at its birth; joining again
/// changes nothing.)
fn set_up_worker(request: &ForkRequest, supervisor: u32) -> io::Result<()> {
    join_supervisor(supervisor)?;
    // SAFETY: plain system calls on this process, with valid arguments.
    unsafe {
        set_limits(request.limits)?;
        // A write past RLIMIT_FSIZE must fail with EFBIG for the guest to see, not kill us.
        if libc::signal(libc::SIGXFSZ, libc::SIG_IGN) == libc::SIG_ERR {
            return Err(io::Error::last_os_error());
        }
        check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
    }
    if let Some(procs) = &request.cgroup_procs {
        std::fs::write(OsString::from_vec(procs.clone()), b"0")?;
    }
    std::env::set_current_dir(OsString::from_vec(request.cwd.clone()))
}

fn set_limits(limits: ForkLimits) -> io::Result<()> {
    let set = |resource, soft: u64, hard: u64| {
        let limit = libc::rlimit {
            rlim_cur: soft,
            rlim_max: hard,
        };
        // SAFETY: setrlimit with a valid resource and a pointer to a live rlimit.
        if unsafe { libc::setrlimit(resource, &limit) } == -1 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    };
    set(libc::RLIMIT_CORE, 0, 0)?;
    set(libc::RLIMIT_DATA, limits.data_bytes, limits.data_bytes)?;
    set(libc::RLIMIT_NOFILE, limits.open_files, limits.open_files)?;
    set(libc::RLIMIT_FSIZE, limits.file_bytes, limits.file_bytes)?;
    // SIGXCPU at the soft limit ends the worker; the hard limit is the SIGKILL behind it.
    set(
        libc::RLIMIT_CPU,
        limits.cpu_seconds,
        limits.cpu_seconds.saturating_add(5),
    )
}

/// The command line a process shows (`ps`, `/proc/<pid>/cmdline`): the memory of its argument
/// strings, which a forked worker overwrites with its own `serve` command line, so that an
/// operator (or a test) sees whose worker it is exactly as for an exec'd one. The supervisor
/// gives the fork server a command line with room to spare (`--title-room`).
#[derive(Debug)]
pub struct Title {
    start: *mut u8,
    len: usize,
    /// The program as this process was started: `argv[0]`.
    program: Vec<u8>,
}

impl Title {
    /// This process's argument strings, if they are where glibc says (`argv[0]` onwards) and
    /// hold what the kernel shows.
    pub fn capture() -> Option<Self> {
        unsafe extern "C" {
            /// glibc's `argv[0]`.
            static program_invocation_name: *mut libc::c_char;
        }
        let shown = std::fs::read("/proc/self/cmdline").ok()?;
        // SAFETY: glibc sets it before main, to argv[0], and never changes it.
        let start = unsafe { program_invocation_name }.cast::<u8>();
        if start.is_null() || shown.is_empty() {
            return None;
        }
        // SAFETY: the kernel just showed `shown.len()` bytes of argument strings from argv[0]
        // on; they are this process's memory. They are compared, not trusted.
        let here = unsafe { std::slice::from_raw_parts(start, shown.len()) };
        let program = shown.split(|&b| b == 0).next().unwrap_or_default().to_vec();
        (here == shown.as_slice()).then_some(Self {
            start,
            len: shown.len(),
            program,
        })
    }

    /// Shows `PROGRAM ARGS…` ([`title_line`]).
    fn show(&self, args: &[Vec<u8>]) {
        let line = title_line(&self.program, args, self.len);
        // SAFETY: the argument strings' own memory, `len` bytes from `start` (see `capture`);
        // nothing in this process reads them any more (the command line was parsed).
        unsafe { std::ptr::copy_nonoverlapping(line.as_ptr(), self.start, self.len) };
    }
}

/// `program` and `args` as the kernel shows a command line (NUL after each), cut to `len`
/// bytes with a NUL last, the rest NUL. A NUL inside an argument would split it: it shows as
/// `?`.
fn title_line(program: &[u8], args: &[Vec<u8>], len: usize) -> Vec<u8> {
    let mut line = program.to_vec();
    for arg in args {
        line.push(0);
        line.extend(arg.iter().map(|&b| if b == 0 { b'?' } else { b }));
    }
    line.truncate(len.saturating_sub(1));
    line.resize(len, 0);
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_fills_the_room_and_ends_in_nul() {
        let args = [
            b"serve".to_vec(),
            b"--workspace".to_vec(),
            b"/s/a\0b".to_vec(),
        ];
        let line = title_line(b"/bin/w", &args, 40);
        assert_eq!(line.len(), 40);
        assert!(line.starts_with(b"/bin/w\0serve\0--workspace\0/s/a?b\0"));
        assert!(line[31..].iter().all(|&b| b == 0));
        let cut = title_line(b"/bin/w", &args, 10);
        assert_eq!(cut, b"/bin/w\0se\0");
        assert!(title_line(b"w", &[], 0).is_empty());
    }

    #[test]
    fn this_process_shows_its_own_command_line() {
        let title = Title::capture().expect("glibc's argv[0] is the kernel's command line");
        let shown = std::fs::read("/proc/self/cmdline").unwrap();
        assert_eq!(title.len, shown.len());
        assert!(shown.starts_with(&title.program));
    }
}
