//! The seccomp layer of the jail: an allow-list of the system calls the worker makes
//! ([`ALLOWED`]); anything else fails with `EPERM`. No exec, no fork (`clone` only for threads),
//! no new sockets, no rlimit changes, no ptrace, mount, namespaces, keyrings, BPF, perf or
//! io_uring ([`DENIED`] names them).

use std::collections::BTreeMap;
use std::os::fd::RawFd;
use std::sync::Mutex;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, sock_filter,
};

use crate::snapshot::watch;

/// How one allowed system call is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Any arguments.
    Any,
    /// `clone`: threads only (`CLONE_THREAD`), and no namespace or parent flags.
    Thread,
    /// `socketpair`: `AF_UNIX` only (Tokio's signal pipe in wasmtime-wasi's runtime).
    UnixPair,
    /// `prlimit64(0, _, NULL, _)`: reading our own limits (glibc's getrlimit).
    ReadOwnLimits,
    /// `fcntl` with a command that only touches our own descriptor flags.
    FdFlags,
    /// `prctl(PR_SET_NAME | PR_GET_NAME)`: thread names.
    ThreadName,
    /// `tgkill` to a thread of this process (abort raises SIGABRT on itself).
    OwnProcess,
    /// `fchmodat`/`fchmod` without the setuid and setgid bits (argument `n` is the mode).
    /// Landlock does not govern chmod, so this is what keeps an escaped guest from planting a
    /// set-id file for another local user to run.
    PlainMode(u8),
    /// `ioctl` on the two descriptors that watch the worker's own memory (the userfaultfd and
    /// `/proc/self/pagemap`, opened before the jail: `snapshot::watch`), with only the commands
    /// that register and write-protect memory and scan for written pages. Not allowed at all
    /// when they are not open; never on any other descriptor (no terminal or device ioctls).
    WriteWatch,
    /// Answered `ENOSYS`, so glibc falls back to `clone`, whose flags seccomp can see
    /// (`clone3` passes them in memory).
    NotImplemented,
}

/// The allow-list: every system call the worker makes after the jail, found by tracing the
/// whole e2e suite through the worker (both languages, shell, packages, timeouts, kills,
/// restarts), plus the rest of the families WASI preview 1 maps onto (`fd_sync` → fsync,
/// `path_link` → linkat...). Anything else fails with `EPERM`.
pub const ALLOWED: &[(&str, Check)] = &[
    // Memory: allocator, Wasmtime's linear memories, guard pages and code, thread stacks.
    ("brk", Check::Any),
    ("mmap", Check::Any),
    ("munmap", Check::Any),
    ("mprotect", Check::Any),
    ("mremap", Check::Any),
    ("madvise", Check::Any),
    // Threads and synchronisation.
    ("clone", Check::Thread),
    ("clone3", Check::NotImplemented),
    ("futex", Check::Any),
    ("set_robust_list", Check::Any),
    ("rseq", Check::Any),
    ("gettid", Check::Any),
    ("getpid", Check::Any),
    ("getppid", Check::Any),
    ("sched_getaffinity", Check::Any),
    ("sched_yield", Check::Any),
    ("prctl", Check::ThreadName),
    ("exit", Check::Any),
    ("exit_group", Check::Any),
    ("tgkill", Check::OwnProcess),
    // Signals: Wasmtime turns SIGSEGV/SIGILL/SIGFPE into traps and returns from the handler.
    ("rt_sigaction", Check::Any),
    ("rt_sigprocmask", Check::Any),
    ("rt_sigreturn", Check::Any),
    ("sigaltstack", Check::Any),
    ("restart_syscall", Check::Any),
    // Time.
    ("clock_gettime", Check::Any),
    ("clock_getres", Check::Any),
    ("clock_nanosleep", Check::Any),
    ("nanosleep", Check::Any),
    ("gettimeofday", Check::Any),
    // Randomness (WASI random_get, hash seeds).
    ("getrandom", Check::Any),
    // Descriptors.
    ("close", Check::Any),
    ("dup", Check::Any),
    ("dup3", Check::Any),
    ("fcntl", Check::FdFlags),
    ("lseek", Check::Any),
    ("read", Check::Any),
    ("readv", Check::Any),
    ("pread64", Check::Any),
    ("preadv", Check::Any),
    ("preadv2", Check::Any),
    ("write", Check::Any),
    ("writev", Check::Any),
    ("pwrite64", Check::Any),
    ("pwritev", Check::Any),
    ("pwritev2", Check::Any),
    ("fstat", Check::Any),
    ("fstatfs", Check::Any),
    ("fchmod", Check::PlainMode(1)),
    ("ftruncate", Check::Any),
    ("fsync", Check::Any),
    ("fdatasync", Check::Any),
    ("fallocate", Check::Any),
    ("fadvise64", Check::Any),
    ("ppoll", Check::Any),
    ("ioctl", Check::WriteWatch),
    // Files beneath directory handles (WASI paths, the confined layer of the shell).
    ("openat", Check::Any),
    ("openat2", Check::Any),
    ("newfstatat", Check::Any),
    ("statx", Check::Any),
    ("getdents64", Check::Any),
    ("readlinkat", Check::Any),
    ("mkdirat", Check::Any),
    ("unlinkat", Check::Any),
    ("renameat2", Check::Any),
    ("symlinkat", Check::Any),
    ("linkat", Check::Any),
    ("fchmodat", Check::PlainMode(2)),
    ("utimensat", Check::Any),
    ("faccessat2", Check::Any),
    // The connected socket to the supervisor (std's UnixStream reads with recv).
    ("recvfrom", Check::Any),
    ("sendto", Check::Any),
    ("recvmsg", Check::Any),
    ("sendmsg", Check::Any),
    ("socketpair", Check::UnixPair),
    // wasmtime-wasi's Tokio runtime.
    ("epoll_create1", Check::Any),
    ("epoll_ctl", Check::Any),
    ("epoll_pwait", Check::Any),
    ("eventfd2", Check::Any),
    // Limits, read only.
    ("prlimit64", Check::ReadOwnLimits),
    // x86_64 only: the older calls glibc and std still use there.
    #[cfg(target_arch = "x86_64")]
    ("readlink", Check::Any),
    #[cfg(target_arch = "x86_64")]
    ("renameat", Check::Any),
    #[cfg(target_arch = "x86_64")]
    ("poll", Check::Any),
    #[cfg(target_arch = "x86_64")]
    ("epoll_wait", Check::Any),
    #[cfg(target_arch = "x86_64")]
    ("dup2", Check::Any),
];

/// System calls the jail exists to deny; a unit test keeps them off [`ALLOWED`].
pub const DENIED: &[&str] = &[
    "execve",
    "execveat",
    "fork",
    "vfork",
    "socket",
    "connect",
    "bind",
    "listen",
    "accept",
    "accept4",
    "setrlimit",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "mount",
    "umount2",
    "pivot_root",
    "unshare",
    "setns",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "kill",
    "chroot",
    "init_module",
    "finit_module",
    "kexec_load",
    "open_by_handle_at",
    "name_to_handle_at",
    "setuid",
    "setgid",
];

/// The number of a system call by name, on the architecture we are built for.
pub fn syscall_number(name: &str) -> Option<i64> {
    let nr = match name {
        "brk" => libc::SYS_brk,
        "mmap" => libc::SYS_mmap,
        "munmap" => libc::SYS_munmap,
        "mprotect" => libc::SYS_mprotect,
        "mremap" => libc::SYS_mremap,
        "madvise" => libc::SYS_madvise,
        "clone" => libc::SYS_clone,
        "clone3" => libc::SYS_clone3,
        "futex" => libc::SYS_futex,
        "set_robust_list" => libc::SYS_set_robust_list,
        "rseq" => libc::SYS_rseq,
        "gettid" => libc::SYS_gettid,
        "getpid" => libc::SYS_getpid,
        "getppid" => libc::SYS_getppid,
        "sched_getaffinity" => libc::SYS_sched_getaffinity,
        "sched_yield" => libc::SYS_sched_yield,
        "prctl" => libc::SYS_prctl,
        "exit" => libc::SYS_exit,
        "exit_group" => libc::SYS_exit_group,
        "tgkill" => libc::SYS_tgkill,
        "rt_sigaction" => libc::SYS_rt_sigaction,
        "rt_sigprocmask" => libc::SYS_rt_sigprocmask,
        "rt_sigreturn" => libc::SYS_rt_sigreturn,
        "sigaltstack" => libc::SYS_sigaltstack,
        "restart_syscall" => libc::SYS_restart_syscall,
        "clock_gettime" => libc::SYS_clock_gettime,
        "clock_getres" => libc::SYS_clock_getres,
        "clock_nanosleep" => libc::SYS_clock_nanosleep,
        "nanosleep" => libc::SYS_nanosleep,
        "gettimeofday" => libc::SYS_gettimeofday,
        "getrandom" => libc::SYS_getrandom,
        "close" => libc::SYS_close,
        "dup" => libc::SYS_dup,
        "dup3" => libc::SYS_dup3,
        "fcntl" => libc::SYS_fcntl,
        "lseek" => libc::SYS_lseek,
        "read" => libc::SYS_read,
        "readv" => libc::SYS_readv,
        "pread64" => libc::SYS_pread64,
        "preadv" => libc::SYS_preadv,
        "preadv2" => libc::SYS_preadv2,
        "write" => libc::SYS_write,
        "writev" => libc::SYS_writev,
        "pwrite64" => libc::SYS_pwrite64,
        "pwritev" => libc::SYS_pwritev,
        "pwritev2" => libc::SYS_pwritev2,
        "fstat" => libc::SYS_fstat,
        "fstatfs" => libc::SYS_fstatfs,
        "ftruncate" => libc::SYS_ftruncate,
        "fsync" => libc::SYS_fsync,
        "fdatasync" => libc::SYS_fdatasync,
        "fallocate" => libc::SYS_fallocate,
        "fadvise64" => libc::SYS_fadvise64,
        "ppoll" => libc::SYS_ppoll,
        "openat" => libc::SYS_openat,
        "openat2" => libc::SYS_openat2,
        "newfstatat" => libc::SYS_newfstatat,
        "statx" => libc::SYS_statx,
        "getdents64" => libc::SYS_getdents64,
        "readlinkat" => libc::SYS_readlinkat,
        "mkdirat" => libc::SYS_mkdirat,
        "unlinkat" => libc::SYS_unlinkat,
        "renameat2" => libc::SYS_renameat2,
        "symlinkat" => libc::SYS_symlinkat,
        "linkat" => libc::SYS_linkat,
        "fchmodat" => libc::SYS_fchmodat,
        "fchmod" => libc::SYS_fchmod,
        "utimensat" => libc::SYS_utimensat,
        "faccessat2" => libc::SYS_faccessat2,
        "recvfrom" => libc::SYS_recvfrom,
        "sendto" => libc::SYS_sendto,
        "recvmsg" => libc::SYS_recvmsg,
        "sendmsg" => libc::SYS_sendmsg,
        "socketpair" => libc::SYS_socketpair,
        "epoll_create1" => libc::SYS_epoll_create1,
        "epoll_ctl" => libc::SYS_epoll_ctl,
        "epoll_pwait" => libc::SYS_epoll_pwait,
        "eventfd2" => libc::SYS_eventfd2,
        "prlimit64" => libc::SYS_prlimit64,
        // The denied ones, for the tests.
        "execve" => libc::SYS_execve,
        "execveat" => libc::SYS_execveat,
        "socket" => libc::SYS_socket,
        "connect" => libc::SYS_connect,
        "bind" => libc::SYS_bind,
        "listen" => libc::SYS_listen,
        "accept4" => libc::SYS_accept4,
        "ptrace" => libc::SYS_ptrace,
        "process_vm_readv" => libc::SYS_process_vm_readv,
        "process_vm_writev" => libc::SYS_process_vm_writev,
        "mount" => libc::SYS_mount,
        "umount2" => libc::SYS_umount2,
        "pivot_root" => libc::SYS_pivot_root,
        "unshare" => libc::SYS_unshare,
        "setns" => libc::SYS_setns,
        "keyctl" => libc::SYS_keyctl,
        "add_key" => libc::SYS_add_key,
        "request_key" => libc::SYS_request_key,
        "bpf" => libc::SYS_bpf,
        "perf_event_open" => libc::SYS_perf_event_open,
        "userfaultfd" => libc::SYS_userfaultfd,
        "io_uring_setup" => libc::SYS_io_uring_setup,
        "io_uring_enter" => libc::SYS_io_uring_enter,
        "io_uring_register" => libc::SYS_io_uring_register,
        "kill" => libc::SYS_kill,
        "chroot" => libc::SYS_chroot,
        "init_module" => libc::SYS_init_module,
        "finit_module" => libc::SYS_finit_module,
        "kexec_load" => libc::SYS_kexec_load,
        "open_by_handle_at" => libc::SYS_open_by_handle_at,
        "name_to_handle_at" => libc::SYS_name_to_handle_at,
        "setuid" => libc::SYS_setuid,
        "setgid" => libc::SYS_setgid,
        "ioctl" => libc::SYS_ioctl,
        #[cfg(target_arch = "x86_64")]
        "readlink" => libc::SYS_readlink,
        #[cfg(target_arch = "x86_64")]
        "renameat" => libc::SYS_renameat,
        #[cfg(target_arch = "x86_64")]
        "poll" => libc::SYS_poll,
        #[cfg(target_arch = "x86_64")]
        "epoll_wait" => libc::SYS_epoll_wait,
        #[cfg(target_arch = "x86_64")]
        "dup2" => libc::SYS_dup2,
        #[cfg(target_arch = "x86_64")]
        "fork" => libc::SYS_fork,
        #[cfg(target_arch = "x86_64")]
        "vfork" => libc::SYS_vfork,
        #[cfg(target_arch = "x86_64")]
        "accept" => libc::SYS_accept,
        #[cfg(target_arch = "x86_64")]
        "setrlimit" => libc::SYS_setrlimit,
        _ => return None,
    };
    Some(nr)
}

/// Clone flags that a thread never needs and that would leave the worker's namespaces,
/// re-parent the child or make it a vfork.
const CLONE_FORBIDDEN: u64 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_PARENT
    | libc::CLONE_VFORK
    | libc::CLONE_PTRACE
    | libc::CLONE_UNTRACED) as u64;

/// `fcntl` commands on our own descriptors: duplicate, get/set close-on-exec, get/set status
/// flags (non-blocking). Not F_SETOWN/F_SETSIG (signals to others), not leases or locks.
const FCNTL_ALLOWED: [u64; 6] = [
    libc::F_DUPFD as u64,
    libc::F_DUPFD_CLOEXEC as u64,
    libc::F_GETFD as u64,
    libc::F_SETFD as u64,
    libc::F_GETFL as u64,
    libc::F_SETFL as u64,
];

fn condition(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, String> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Qword, op, value).map_err(|e| e.to_string())
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(conditions).map_err(|e| e.to_string())
}

/// The rules allowing `check`'s forms of a call; `None` when no form of it is allowed here.
fn rules_for(check: Check, pid: u64) -> Result<Option<Vec<SeccompRule>>, String> {
    Ok(Some(match check {
        Check::Any | Check::NotImplemented => Vec::new(),
        Check::Thread => vec![rule(vec![
            condition(
                0,
                SeccompCmpOp::MaskedEq(libc::CLONE_THREAD as u64),
                libc::CLONE_THREAD as u64,
            )?,
            condition(0, SeccompCmpOp::MaskedEq(CLONE_FORBIDDEN), 0)?,
        ])?],
        Check::UnixPair => vec![rule(vec![condition(
            0,
            SeccompCmpOp::Eq,
            libc::AF_UNIX as u64,
        )?])?],
        Check::ReadOwnLimits => vec![rule(vec![
            condition(0, SeccompCmpOp::Eq, 0)?,
            condition(2, SeccompCmpOp::Eq, 0)?,
        ])?],
        Check::FdFlags => FCNTL_ALLOWED
            .iter()
            .map(|cmd| rule(vec![condition(1, SeccompCmpOp::Eq, *cmd)?]))
            .collect::<Result<_, _>>()?,
        Check::ThreadName => [libc::PR_SET_NAME, libc::PR_GET_NAME]
            .iter()
            .map(|op| rule(vec![condition(0, SeccompCmpOp::Eq, *op as u64)?]))
            .collect::<Result<_, _>>()?,
        Check::OwnProcess => vec![rule(vec![condition(0, SeccompCmpOp::Eq, pid)?])?],
        Check::PlainMode(arg) => vec![rule(vec![condition(
            arg,
            SeccompCmpOp::MaskedEq(u64::from(libc::S_ISUID | libc::S_ISGID)),
            0,
        )?])?],
        Check::WriteWatch => {
            let Some((faults, pagemap)) = watch::descriptors() else {
                return Ok(None);
            };
            use watch::{PAGEMAP_SCAN, UFFDIO_REGISTER, UFFDIO_WRITEPROTECT};
            [
                (faults, UFFDIO_REGISTER),
                (faults, UFFDIO_WRITEPROTECT),
                (pagemap, PAGEMAP_SCAN),
            ]
            .iter()
            .map(|&(fd, request)| {
                // Both are `int`-sized in the kernel: compare the low 32 bits only.
                let dword = |arg, value| {
                    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value)
                        .map_err(|e| e.to_string())
                };
                rule(vec![dword(0, fd as u64)?, dword(1, request)?])
            })
            .collect::<Result<_, _>>()?
        }
    }))
}

fn target_arch() -> Result<seccompiler::TargetArch, String> {
    std::env::consts::ARCH
        .try_into()
        .map_err(|_| format!("no seccomp support for {}", std::env::consts::ARCH))
}

/// The audit architecture the kernel reports for our system calls (`AUDIT_ARCH_*` of
/// `<linux/audit.h>`: the ELF machine, 64-bit, little-endian).
const AUDIT_ARCH: u32 = {
    const BIT64_LE: u32 = 0x8000_0000 | 0x4000_0000;
    #[cfg(target_arch = "x86_64")]
    let machine = 62;
    #[cfg(target_arch = "aarch64")]
    let machine = 183;
    #[cfg(target_arch = "riscv64")]
    let machine = 243;
    machine | BIT64_LE
};

/// Classic BPF instructions, as the kernel's `<linux/filter.h>` spells them.
fn statement(code: u32, k: u32) -> sock_filter {
    jump(code, k, 0, 0)
}

fn jump(code: u32, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    }
}

const LOAD_WORD: u32 = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
const JUMP_IF_EQUAL: u32 = libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K;
const JUMP_IF_AT_LEAST: u32 = libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K;
const JUMP_ALWAYS: u32 = libc::BPF_JMP | libc::BPF_JA;
const RETURN: u32 = libc::BPF_RET | libc::BPF_K;
/// Offsets in `struct seccomp_data`.
const NR_OFFSET: u32 = 0;
const ARCH_OFFSET: u32 = 4;
const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const KILL: u32 = libc::SECCOMP_RET_KILL_PROCESS;

fn errno(code: i32) -> u32 {
    libc::SECCOMP_RET_ERRNO | (code as u32 & libc::SECCOMP_RET_DATA)
}

/// At most this many numbers are compared one after the other; above it, the search halves.
const LEAF: usize = 8;

/// The instructions that find the accumulator's number among `numbers` (sorted) and return
/// its action, or `EPERM`: a binary search down to a few comparisons in a row.
///
/// # Errors
/// A jump farther than classic BPF's 255 instructions (far more calls than we allow).
fn search(numbers: &[(u32, u32)]) -> Result<BpfProgram, String> {
    if numbers.len() <= LEAF {
        // `jeq nr` to the return of its action, for each; then EPERM; then one return per
        // action. From comparison `at`, the jump passes the rest of them and the EPERM.
        let mut actions: Vec<u32> = numbers.iter().map(|&(_, action)| action).collect();
        actions.sort_unstable();
        actions.dedup();
        let mut leaf = BpfProgram::new();
        for (at, &(nr, action)) in numbers.iter().enumerate() {
            let which = actions
                .iter()
                .position(|&a| a == action)
                .unwrap_or_default();
            let to_return = numbers.len() - at + which;
            leaf.push(jump(JUMP_IF_EQUAL, nr, to_return as u8, 0));
        }
        leaf.push(statement(RETURN, errno(libc::EPERM)));
        leaf.extend(actions.iter().map(|&action| statement(RETURN, action)));
        return Ok(leaf);
    }
    let (below, above) = numbers.split_at(numbers.len() / 2);
    let below_program = search(below)?;
    let skip = u8::try_from(below_program.len())
        .map_err(|_| "the seccomp filter's search jumps too far".to_string())?;
    // `nr >= first of above`: skip the lower half.
    let mut node = vec![jump(JUMP_IF_AT_LEAST, above[0].0, skip, 0)];
    node.extend(below_program);
    node.extend(search(above)?);
    Ok(node)
}

/// The filter, built once per worker: on another architecture the process is killed (as
/// seccompiler's filters do); the calls allowed only in some forms (`clone` for threads,
/// `fcntl` on our own flags...: every [`Check`] with rules) go to seccompiler's checks of
/// their arguments (a form not allowed: `EPERM`); every other allowed call gets its action
/// (`clone3`: `ENOSYS`, so glibc falls back to `clone`, whose flags seccomp can see) through a
/// binary search of the numbers; anything else `EPERM`.
///
/// Why not seccompiler for all of it: it compares the number with each allowed call in turn,
/// and the kernel, to cache which calls a filter always allows, runs the filter for every
/// system call number when it is installed: 0.4-0.6 ms for our hundred calls in a chain, on
/// every new session's first call. The search takes a few comparisons per number. One filter,
/// not two: every filter but the last would refuse the `prctl` and `seccomp` calls that
/// install the next.
///
/// # Errors
/// When a name has no number here or seccompiler rejects a rule: a defect of this file.
pub fn filter() -> Result<BpfProgram, String> {
    // SAFETY: plain getter.
    let pid = unsafe { libc::getpid() } as u64;
    let mut numbers: BTreeMap<u32, u32> = BTreeMap::new();
    let mut checked: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for (name, check) in ALLOWED {
        let nr = syscall_number(name).ok_or_else(|| format!("no syscall number for {name}"))?;
        let Some(rules) = rules_for(*check, pid)? else {
            continue;
        };
        if !rules.is_empty() {
            checked.insert(nr, rules);
            continue;
        }
        let action = if *check == Check::NotImplemented {
            errno(libc::ENOSYS)
        } else {
            ALLOW
        };
        numbers.insert(nr as u32, action);
    }
    let gate: Vec<u32> = checked.keys().map(|&nr| nr as u32).collect();
    let checks = SeccompFilter::new(
        checked,
        SeccompAction::Errno(libc::EPERM as u32),
        SeccompAction::Allow,
        target_arch()?,
    )
    .and_then(BpfProgram::try_from)
    .map_err(|e| e.to_string())?;
    let numbers: Vec<(u32, u32)> = numbers.into_iter().collect();
    let search = search(&numbers)?;
    let mut program = vec![
        statement(LOAD_WORD, ARCH_OFFSET),
        jump(JUMP_IF_EQUAL, AUDIT_ARCH, 1, 0),
        statement(RETURN, KILL),
        statement(LOAD_WORD, NR_OFFSET),
    ];
    // The gate: each checked call jumps (`ja`, which goes farther than a conditional jump's
    // 255) past the rest of the gate and the search, to seccompiler's checks at the end.
    for (at, &nr) in gate.iter().enumerate() {
        let rest_of_gate = 2 * (gate.len() - at - 1);
        program.push(jump(JUMP_IF_EQUAL, nr, 0, 1));
        program.push(statement(JUMP_ALWAYS, (rest_of_gate + search.len()) as u32));
    }
    program.extend(search);
    program.extend(checks);
    Ok(program)
}

/// A filter compiled ahead ([`prepare`]): for which process, with which watch descriptors
/// (its ioctl rules name them), and the program.
type Prepared = (u32, Option<(RawFd, RawFd)>, BpfProgram);

static PREPARED: Mutex<Option<Prepared>> = Mutex::new(None);

/// Compiles this process's filter ahead of its jail: a spare does while it waits for its
/// session, whose first call then only installs it. A failure is left for the jail to meet.
pub(super) fn prepare() {
    if let Ok(program) = filter() {
        let prepared = (std::process::id(), watch::descriptors(), program);
        *PREPARED.lock().unwrap_or_else(|e| e.into_inner()) = Some(prepared);
    }
}

pub(super) fn seccomp() -> Result<(), String> {
    let prepared = PREPARED.lock().unwrap_or_else(|e| e.into_inner()).take();
    let program = match prepared {
        Some((pid, watching, program))
            if pid == std::process::id() && watching == watch::descriptors() =>
        {
            program
        }
        _ => filter()?,
    };
    seccompiler::apply_filter_all_threads(&program)
        .map_err(|e| format!("the kernel refused the seccomp filter: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_allowed_and_denied_call_has_a_number() {
        for (name, _) in ALLOWED {
            assert!(syscall_number(name).is_some(), "{name}");
        }
        for name in DENIED {
            assert!(syscall_number(name).is_some(), "{name}");
        }
    }

    #[test]
    fn the_allow_list_omits_what_the_jail_is_for() {
        let allowed: Vec<&str> = ALLOWED.iter().map(|(n, _)| *n).collect();
        for name in DENIED {
            assert!(!allowed.contains(name), "{name} must not be allowed");
        }
        // Present, but only in their harmless forms.
        let check = |n: &str| ALLOWED.iter().find(|(a, _)| *a == n).map(|(_, c)| *c);
        assert_eq!(check("clone"), Some(Check::Thread));
        assert_eq!(check("clone3"), Some(Check::NotImplemented));
        assert_eq!(check("socketpair"), Some(Check::UnixPair));
        assert_eq!(check("prlimit64"), Some(Check::ReadOwnLimits));
        assert_eq!(check("fcntl"), Some(Check::FdFlags));
        assert_eq!(check("fchmodat"), Some(Check::PlainMode(2)));
        assert_eq!(check("ioctl"), Some(Check::WriteWatch));
        // What the worker provably needs.
        for needed in [
            "rt_sigreturn",
            "openat2",
            "recvfrom",
            "sendto",
            "exit_group",
        ] {
            assert!(allowed.contains(&needed), "{needed}");
        }
        let mut sorted = allowed.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), allowed.len(), "no duplicates");
    }

    /// What classic BPF `program` answers for system call `nr` on architecture `arch`: an
    /// interpreter of the instructions the filters use (loads, jumps on `k`, returns; the
    /// arguments read as zero).
    fn run(program: &[sock_filter], nr: u32, arch: u32) -> u32 {
        let (mut pc, mut accumulator) = (0usize, 0u32);
        loop {
            let op = &program[pc];
            let code = u32::from(op.code);
            pc += 1;
            match code {
                LOAD_WORD => {
                    accumulator = match op.k {
                        NR_OFFSET => nr,
                        ARCH_OFFSET => arch,
                        _ => 0,
                    }
                }
                RETURN => return op.k,
                _ if code & 0x07 == libc::BPF_JMP => {
                    let taken = match code & 0xf0 {
                        c if c == libc::BPF_JEQ => accumulator == op.k,
                        c if c == libc::BPF_JGE => accumulator >= op.k,
                        c if c == libc::BPF_JGT => accumulator > op.k,
                        c if c == libc::BPF_JSET => accumulator & op.k != 0,
                        c if c == libc::BPF_JA => {
                            pc += op.k as usize;
                            continue;
                        }
                        other => panic!("jump {other:#x}"),
                    };
                    pc += usize::from(if taken { op.jt } else { op.jf });
                }
                _ if code & 0x07 == libc::BPF_ALU => {
                    accumulator &= op.k; // seccompiler's masks
                }
                other => panic!("instruction {other:#x}"),
            }
        }
    }

    #[test]
    fn the_filter_finds_every_allowed_call_and_nothing_else() {
        // As the other tests of this process do (it is idempotent): the ioctl rules depend on it.
        crate::snapshot::watch::open();
        let filter = filter().unwrap();
        // Far below the kernel's 4096 instructions.
        assert!(filter.len() < 1024);
        let allowed: BTreeMap<u32, Check> = (ALLOWED.iter())
            .map(|(name, check)| (syscall_number(name).unwrap() as u32, *check))
            .collect();
        let watching = crate::snapshot::watch::descriptors().is_some();
        for nr in 0..1024 {
            let wanted = match allowed.get(&nr) {
                Some(Check::NotImplemented) => errno(libc::ENOSYS),
                Some(Check::WriteWatch) if !watching => errno(libc::EPERM),
                Some(_) => ALLOW,
                None => errno(libc::EPERM),
            };
            // Calls checked by their arguments are run for real in the forked child below
            // (with every argument zero, this interpreter sees only some of their forms).
            let checked = !matches!(
                allowed.get(&nr),
                Some(Check::Any | Check::NotImplemented) | None
            );
            if !checked {
                assert_eq!(run(&filter, nr, AUDIT_ARCH), wanted, "call {nr}");
            }
            // x32's numbers (bit 30) are other calls.
            assert_eq!(
                run(&filter, nr | 0x4000_0000, AUDIT_ARCH),
                errno(libc::EPERM)
            );
            assert_eq!(run(&filter, nr, AUDIT_ARCH ^ 0x8000_0000), KILL);
        }
        // DENIED is refused by number.
        for name in DENIED {
            let nr = syscall_number(name).unwrap() as u32;
            assert_eq!(run(&filter, nr, AUDIT_ARCH), errno(libc::EPERM), "{name}");
        }
        // A checked call reaches its checks: clone without CLONE_THREAD is refused.
        let clone = syscall_number("clone").unwrap() as u32;
        assert_eq!(run(&filter, clone, AUDIT_ARCH), errno(libc::EPERM));
    }

    /// The filters at work, in a forked child (the test process must stay unfiltered).

    #[test]
    fn the_filters_deny_and_allow_what_they_should() {
        crate::snapshot::watch::open();
        let watch = crate::snapshot::watch::descriptors();
        let filter = filter().unwrap();
        fn errno() -> i32 {
            // SAFETY: reads this thread's errno.
            unsafe { *libc::__errno_location() }
        }
        // SAFETY: the child only makes raw system calls (no allocation, no locks: the test
        // harness has other threads) and ends in _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let code = (|| {
                if seccompiler::apply_filter(&filter).is_err() {
                    return 10;
                }
                // SAFETY: plain system calls with valid or null arguments, here and below.
                if unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) } != -1
                    || errno() != libc::EPERM
                {
                    return 11;
                }
                // SAFETY: see above.
                if unsafe { libc::syscall(libc::SYS_clone3, std::ptr::null::<u8>(), 0) } != -1
                    || errno() != libc::ENOSYS
                {
                    return 12;
                }
                // SAFETY: see above.
                if unsafe { libc::syscall(libc::SYS_clone, libc::SIGCHLD, 0, 0, 0, 0) } != -1
                    || errno() != libc::EPERM
                {
                    return 13;
                }
                let limit = libc::rlimit {
                    rlim_cur: 1,
                    rlim_max: 1,
                };
                // SAFETY: see above.
                if unsafe { libc::prlimit(0, libc::RLIMIT_NOFILE, &limit, std::ptr::null_mut()) }
                    != -1
                    || errno() != libc::EPERM
                {
                    return 14;
                }
                let mut old = limit;
                // SAFETY: see above.
                if unsafe { libc::prlimit(0, libc::RLIMIT_NOFILE, std::ptr::null(), &mut old) } != 0
                {
                    return 15;
                }
                // SAFETY: see above.
                if unsafe { libc::getppid() } <= 0 {
                    return 16;
                }
                let mut size = [0u16; 4];
                // SAFETY: see above.
                if unsafe { libc::ioctl(0, libc::TIOCGWINSZ, size.as_mut_ptr()) } != -1
                    || errno() != libc::EPERM
                {
                    return 17;
                }
                if let Some((faults, pagemap)) = watch {
                    // Only the watch's own commands, only on its own descriptors.
                    // SAFETY: see above.
                    if unsafe { libc::ioctl(pagemap, libc::TIOCGWINSZ, size.as_mut_ptr()) } != -1
                        || errno() != libc::EPERM
                    {
                        return 18;
                    }
                    let scan = crate::snapshot::watch::PAGEMAP_SCAN;
                    // SAFETY: see above.
                    if unsafe { libc::ioctl(faults, scan as _, std::ptr::null_mut::<u8>()) } != -1
                        || errno() != libc::EPERM
                    {
                        return 19;
                    }
                    // SAFETY: see above (the kernel refuses the null argument, not seccomp).
                    if unsafe { libc::ioctl(pagemap, scan as _, std::ptr::null_mut::<u8>()) } != -1
                        || errno() == libc::EPERM
                    {
                        return 20;
                    }
                }
                0
            })();
            // SAFETY: ends the child without running the parent's destructors.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status), "status {status:#x}");
        assert_eq!(libc::WEXITSTATUS(status), 0, "see the step numbers above");
    }
}
