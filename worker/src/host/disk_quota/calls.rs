//! The shadows of the other calls that change what a session's files hold: set a file's size,
//! create a directory or a link, rename, delete, renumber a descriptor; and
//! [`add_to_linker`], which puts every disk-quota shadow in the linker, with the two that
//! refuse FIFOs, sockets and devices (`path_open`, `path_filestat_set_times`).

use wasmtime::{Caller, Linker, Result};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p1::wasi_snapshot_preview1 as p1;
use wasmtime_wasi::runtime::in_tokio;
use wiggle::GuestMemory;

use super::charge::{charge, is_charged, parts, regular_file, release, with_charge};
use super::write::{guest_bytes, path_filestat_set_times, path_open, write};
use crate::host::guest_memory::errno;
use crate::host::state::HostState;
use crate::quota::Amount;

const MODULE: &str = "wasi_snapshot_preview1";

/// Adds the shadows of the calls that grow or shrink files. `fd_write` is shadowed in
/// `stdio.rs` and comes here through [`write`].
///
/// # Errors
/// When Wasmtime refuses a definition (a build defect).
pub(in crate::host) fn add_to_linker(linker: &mut Linker<HostState>) -> Result<()> {
    linker.func_wrap(MODULE, "fd_pwrite", fd_pwrite)?;
    linker.func_wrap(MODULE, "path_open", path_open)?;
    linker.func_wrap(MODULE, "path_filestat_set_times", path_filestat_set_times)?;
    linker.func_wrap(MODULE, "fd_filestat_set_size", fd_filestat_set_size)?;
    linker.func_wrap(MODULE, "path_create_directory", path_create_directory)?;
    linker.func_wrap(MODULE, "path_symlink", path_symlink)?;
    linker.func_wrap(MODULE, "path_link", path_link)?;
    linker.func_wrap(MODULE, "path_rename", path_rename)?;
    linker.func_wrap(MODULE, "path_unlink_file", path_unlink_file)?;
    linker.func_wrap(MODULE, "path_remove_directory", path_remove_directory)?;
    linker.func_wrap(MODULE, "fd_renumber", fd_renumber)?;
    Ok(())
}

fn fd_pwrite(
    mut caller: Caller<'_, HostState>,
    n: i32,
    iovs: i32,
    iovs_len: i32,
    offset: i64,
    nwritten: i32,
) -> Result<i32> {
    write(&mut caller, n, iovs, iovs_len, Some(offset), nwritten)
}

/// Charges the growth of a charged file; a shrink gives its bytes back.
fn fd_filestat_set_size(mut caller: Caller<'_, HostState>, n: i32, size: i64) -> Result<i32> {
    let (mem, state) = parts(&mut caller)?;
    if let Some(guest) = state.quota.as_mut() {
        guest.forget_lengths();
    }
    let mut gm = GuestMemory::Unshared(mem);
    let current = if is_charged(state, n) {
        regular_file(&mut state.wasi, &mut gm, n).map(|s| s.size)
    } else {
        None
    };
    let wanted = size as u64;
    let growth = current.map_or(0, |c| wanted.saturating_sub(c));
    if let Err(errno) = charge(state, &mut gm, Amount::bytes(growth)) {
        return Ok(errno);
    }
    let errno = in_tokio(p1::fd_filestat_set_size(&mut state.wasi, &mut gm, n, size))?;
    if errno != errno::SUCCESS {
        release(state, Amount::bytes(growth));
    } else if let Some(current) = current {
        release(state, Amount::bytes(current.saturating_sub(wanted)));
    }
    Ok(errno)
}

/// One entry beneath `/app` or `/tmp`.
fn path_create_directory(
    mut caller: Caller<'_, HostState>,
    dirfd: i32,
    path: i32,
    len: i32,
) -> Result<i32> {
    grow_beneath(&mut caller, dirfd, Amount::entries(1), |wasi, gm| {
        in_tokio(p1::path_create_directory(wasi, gm, dirfd, path, len))
    })
}

/// One entry and the text of the link beneath `/app` or `/tmp`.
fn path_symlink(
    mut caller: Caller<'_, HostState>,
    old: i32,
    old_len: i32,
    dirfd: i32,
    new: i32,
    new_len: i32,
) -> Result<i32> {
    let growth = Amount {
        bytes: old_len as u32 as u64,
        entries: 1,
    };
    grow_beneath(&mut caller, dirfd, growth, |wasi, gm| {
        in_tokio(p1::path_symlink(
            wasi, gm, old, old_len, dirfd, new, new_len,
        ))
    })
}

/// One entry beneath `/app` or `/tmp`; `XDEV` from the writable shared volume.
#[allow(clippy::too_many_arguments, reason = "WASI p1's signature")]
fn path_link(
    mut caller: Caller<'_, HostState>,
    old_fd: i32,
    lookup: i32,
    old: i32,
    old_len: i32,
    new_fd: i32,
    new: i32,
    new_len: i32,
) -> Result<i32> {
    if would_import(caller.data(), old_fd, new_fd) {
        // Its bytes would enter the quota unseen (and could grow through the shared volume): the
        // guest copies instead.
        return Ok(errno::XDEV);
    }
    grow_beneath(&mut caller, new_fd, Amount::entries(1), |wasi, gm| {
        in_tokio(p1::path_link(
            wasi, gm, old_fd, lookup, old, old_len, new_fd, new, new_len,
        ))
    })
}

/// Free within the quota; `XDEV` from the writable shared volume.
fn path_rename(
    mut caller: Caller<'_, HostState>,
    old_fd: i32,
    old: i32,
    old_len: i32,
    new_fd: i32,
    new: i32,
    new_len: i32,
) -> Result<i32> {
    if would_import(caller.data(), old_fd, new_fd) {
        // A tree from the shared volume would enter the quota unseen: copy instead.
        return Ok(errno::XDEV);
    }
    let (mem, state) = parts(&mut caller)?;
    let mut gm = GuestMemory::Unshared(&mut *mem);
    let errno = in_tokio(p1::path_rename(
        &mut state.wasi,
        &mut gm,
        old_fd,
        old,
        old_len,
        new_fd,
        new,
        new_len,
    ))?;
    if errno == errno::SUCCESS
        && let Some(name) = guest_bytes(mem, new, new_len)
    {
        state.written.renamed_to(new_fd, name);
    }
    Ok(errno)
}

/// Whether moving or linking from `old_fd` to `new_fd` would bring files of the writable shared
/// volume into the quota without charging them.
fn would_import(state: &HostState, old_fd: i32, new_fd: i32) -> bool {
    state
        .quota
        .as_ref()
        .is_some_and(|g| g.would_import(old_fd, new_fd))
}

/// The one shape of the calls that add an entry beneath the directory `dirfd`: `growth` is
/// charged when `dirfd` is beneath `/app` or `/tmp` (and given back if `call` fails), nothing
/// otherwise.
fn grow_beneath(
    caller: &mut Caller<'_, HostState>,
    dirfd: i32,
    growth: Amount,
    call: impl FnOnce(&mut WasiP1Ctx, &mut GuestMemory<'_>) -> Result<i32>,
) -> Result<i32> {
    let (mem, state) = parts(caller)?;
    let mut gm = GuestMemory::Unshared(mem);
    let growth = if is_charged(state, dirfd) {
        growth
    } else {
        Amount::ZERO
    };
    with_charge(state, &mut gm, growth, call)
}

fn path_unlink_file(caller: Caller<'_, HostState>, dirfd: i32, path: i32, len: i32) -> Result<i32> {
    remove(caller, dirfd, |wasi, gm| {
        in_tokio(p1::path_unlink_file(wasi, gm, dirfd, path, len))
    })
}

/// A mount point itself (`rmdir /app`, the end of `rm -r /tmp`) is `BUSY`, as Linux answers
/// for a mount point; the sandbox would refuse it anyway, with a misleading `INVAL`.
fn path_remove_directory(
    mut caller: Caller<'_, HostState>,
    dirfd: i32,
    path: i32,
    len: i32,
) -> Result<i32> {
    if is_mount_point(&mut caller, dirfd, path, len)? {
        return Ok(errno::BUSY);
    }
    remove(caller, dirfd, |wasi, gm| {
        in_tokio(p1::path_remove_directory(wasi, gm, dirfd, path, len))
    })
}

/// Whether `path` beneath `dirfd` is a preopened directory itself (`.` of one, as wasi-libc
/// names `/app`).
fn is_mount_point(
    caller: &mut Caller<'_, HostState>,
    dirfd: i32,
    path: i32,
    len: i32,
) -> Result<bool> {
    use wasmtime_wasi::p1::wasi_snapshot_preview1::WasiSnapshotPreview1;
    let (mem, state) = parts(caller)?;
    let itself = guest_bytes(mem, path, len).is_some_and(|p| {
        p.split(|&b| b == b'/')
            .all(|part| matches!(part, b"" | b"."))
    });
    if !itself {
        return Ok(false);
    }
    let mut gm = GuestMemory::Unshared(mem);
    Ok(state
        .wasi
        .fd_prestat_get(&mut gm, super::charge::fd(dirfd))
        .is_ok())
}

/// `path_unlink_file` or `path_remove_directory` (`delegate`): one entry less beneath `/app` or
/// `/tmp`, exactly; the bytes come back at the next count.
fn remove(
    mut caller: Caller<'_, HostState>,
    dirfd: i32,
    delegate: impl FnOnce(&mut WasiP1Ctx, &mut GuestMemory<'_>) -> Result<i32>,
) -> Result<i32> {
    let (mem, state) = parts(&mut caller)?;
    let mut gm = GuestMemory::Unshared(mem);
    let errno = delegate(&mut state.wasi, &mut gm)?;
    if errno == errno::SUCCESS && is_charged(state, dirfd) {
        release(state, Amount::entries(1));
    }
    Ok(errno)
}

/// Moves the marks of descriptor `from` to `to`.
fn fd_renumber(mut caller: Caller<'_, HostState>, from: i32, to: i32) -> Result<i32> {
    let (mem, state) = parts(&mut caller)?;
    let mut gm = GuestMemory::Unshared(mem);
    let errno = in_tokio(p1::fd_renumber(&mut state.wasi, &mut gm, from, to))?;
    if errno == errno::SUCCESS
        && let Some(guest) = state.quota.as_mut()
    {
        guest.forget_lengths();
        guest.fds.remove(&(to as u32));
        if let Some(opened) = guest.fds.remove(&(from as u32)) {
            guest.fds.insert(to as u32, opened);
        }
    }
    Ok(errno)
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use wasmtime::Linker;

    use crate::engine;
    use crate::host::{HostState, SessionConfig, build_linker};
    use crate::quota::{Quota, QuotaLimits};

    /// Writes timings of write-heavy loops to `/app/timings`, best of three: 10,000 buffered
    /// and 10,000 unbuffered writes of 100 bytes, and 2,000 small files.
    const BENCH: &str = r#"
import os, time
best = {}
for round in range(3):
    for name in ('buffered', 'unbuffered', 'files'):
        start = time.perf_counter()
        if name == 'buffered':
            with open('/app/w.txt', 'w') as f:
                for i in range(10000):
                    f.write('x' * 100)
        elif name == 'unbuffered':
            with open('/app/u.bin', 'wb', buffering=0) as f:
                for i in range(10000):
                    f.write(b'x' * 100)
        else:
            os.mkdir(f'/app/d{round}')
            for i in range(2000):
                with open(f'/app/d{round}/f{i}', 'w') as f:
                    f.write('y' * 100)
        took = time.perf_counter() - start
        best[name] = min(best.get(name, took), took)
with open('/app/timings', 'w') as f:
    f.write(' '.join(f'{k}={v * 1000:.2f}' for k, v in sorted(best.items())))
"#;

    fn timings(linker: &Linker<HostState>, quota: Option<QuotaLimits>) -> String {
        let engine = engine::engine();
        let dir = engine::test_runtime_dir();
        let cached = engine::precompile(
            engine,
            "python",
            &dir.join(sandbox_protocol::Runtime::Python.wasm_file_name()),
            &dir.join("cache"),
        )
        .expect("python module");
        let module = engine::load_module(engine, &cached.cwasm).expect("load");
        let app = tempfile::tempdir().expect("tempdir");
        let config = SessionConfig {
            mounts: Vec::new(),
            memory_bytes: 1 << 30,
            stdout_cap: 1 << 20,
            stderr_cap: 1 << 20,
            quota: quota.map(|limits| {
                Quota::new(limits, vec![("/app".into(), app.path().to_path_buf())]).into_shared()
            }),
            clock_since: None,
        };
        let build = crate::python::Build::of(&cached.wasm_sha256);
        crate::python::run_once(
            &module,
            linker,
            app.path(),
            &config,
            build,
            (BENCH, u64::MAX / 4),
        )
        .expect("run");
        std::fs::read_to_string(app.path().join("timings")).expect("timings")
    }

    /// The overhead of the quota's shadows on write-heavy guest code: wasmtime-wasi alone, our
    /// linker without a quota, and with one (that never refuses). Needs `target/runtimes`
    /// (`runtimes/prepare.sh`); run with `TMPDIR=/dev/shm cargo test --release -p
    /// sandbox-worker -- --ignored --nocapture overhead` (tmpfs keeps the disk's noise out).
    #[test]
    #[ignore = "benchmark; needs target/runtimes"]
    fn overhead_of_the_quota_shadows() {
        let engine = engine::engine();
        let mut plain: Linker<HostState> = Linker::new(engine);
        wasmtime_wasi::p1::add_to_linker_sync(&mut plain, |s: &mut HostState| &mut s.wasi)
            .expect("linker");
        let ours = build_linker(engine).expect("linker");
        let limits = QuotaLimits {
            bytes: 1 << 40,
            entries: 1 << 30,
        };
        let started = Instant::now();
        // Best of rounds, interleaved, so a busy machine disturbs all three alike.
        let mut best: Vec<std::collections::BTreeMap<String, f64>> = vec![Default::default(); 3];
        for round in 0..4 {
            let results = [
                timings(&plain, None),
                timings(&ours, None),
                timings(&ours, Some(limits)),
            ];
            for (i, t) in results.iter().enumerate() {
                println!("round {round}, setup {i}: {t}");
                for pair in t.split_whitespace() {
                    if let Some((name, ms)) = pair.split_once('=')
                        && let Ok(ms) = ms.parse::<f64>()
                    {
                        let slot = best[i].entry(name.to_owned()).or_insert(ms);
                        *slot = slot.min(ms);
                    }
                }
            }
        }
        for (what, b) in [
            "wasmtime-wasi only",
            "shadows, no quota",
            "shadows and quota",
        ]
        .iter()
        .zip(&best)
        {
            println!("best: {what:20} {b:?} (ms)");
        }
        println!("took {:?}", started.elapsed());
    }
}
