//! The Landlock layer of the jail: files only beneath the session's directories (read-write),
//! `/data`, the shared volume as mounted and the module cache (read-only); no execute right
//! anywhere; no TCP (ABI 4), no abstract Unix sockets or signals out of the worker (ABI 6).

use super::{JailSpec, threads};

/// The newest Landlock ABI this code knows the rights of. Best effort: on an older kernel the
/// rights it lacks are not handled (the kernel cannot deny what it does not know).
const LANDLOCK_ABI: landlock::ABI = landlock::ABI::V10;

/// Restricts this process to what `spec` allows; says which ABI is in force.
///
/// # Errors
/// Why Landlock is not in force, in words for the report.
pub(super) fn landlock(spec: &JailSpec) -> Result<String, String> {
    use landlock::{
        Access, AccessFs, AccessNet, BitFlags, LandlockStatus, PathBeneath, PathFd,
        RestrictSelfAttr, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
    };

    let abi = LANDLOCK_ABI;
    let handled = AccessFs::from_all(abi);
    // Read and list; never execute.
    let read = AccessFs::ReadFile | AccessFs::ReadDir;
    // Everything a guest does to its own files, through WASI or the shell. Not: execute,
    // device nodes, FIFOs, sockets (nothing binds one), device ioctls, connecting to sockets.
    let write = read
        | AccessFs::WriteFile
        | AccessFs::RemoveDir
        | AccessFs::RemoveFile
        | AccessFs::MakeDir
        | AccessFs::MakeReg
        | AccessFs::MakeSym
        | AccessFs::Refer
        | AccessFs::Truncate;
    // cap-std changes permissions through /proc/self/fd (fchmod cannot use an O_PATH handle);
    // opening that directory later would be denied, so open and cache it now. The handle
    // grants nothing: Landlock checks each file reached through it by its real path.
    let _ = rustix_linux_procfs::proc_self_fd();
    let running = threads();
    let error = |e: landlock::RulesetError| e.to_string();
    let ruleset = Ruleset::default()
        .handle_access(handled)
        .map_err(error)?
        .handle_access(AccessNet::from_all(abi))
        .map_err(error)?
        .scope(Scope::from_all(abi))
        .map_err(error)?;
    let mut created = ruleset
        .create()
        .map_err(error)?
        // Landlock ABI 8 restricts every thread at once; older kernels drop the flag (best
        // effort) and restrict only this thread, which is why the worker starts its threads
        // after the jail (checked below).
        .all_threads(true)
        .map_err(error)?;
    let allowed = (spec.read_write.iter().map(|p| (p, write)))
        .chain(spec.read_only.iter().map(|p| (p, read)));
    for (path, access) in allowed {
        let Ok(fd) = PathFd::new(path) else {
            // Nothing there means nothing to allow: a rule would only widen access.
            tracing::warn!(path = %path.display(), "no Landlock rule for a missing path");
            continue;
        };
        let access: BitFlags<AccessFs> = if path.is_dir() {
            access
        } else {
            access & AccessFs::from_file(abi)
        };
        created = created
            .add_rule(PathBeneath::new(fd, access & handled))
            .map_err(error)?;
    }
    let status = created.restrict_self().map_err(error)?;
    let abi = match status.landlock {
        LandlockStatus::Available { effective_abi, .. } => effective_abi as i32,
        LandlockStatus::NotEnabled => return Err("Landlock is built but not enabled".into()),
        LandlockStatus::NotImplemented => return Err("the kernel has no Landlock".into()),
    };
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(format!("Landlock ABI {abi} enforced nothing"));
    }
    if !status.all_threads && running > 1 {
        // Only this thread is restricted: not a jail. (A defect of ours: the worker starts
        // its threads after the jail.)
        return Err(format!(
            "Landlock ABI {abi} restricts only the calling thread and {running} threads run"
        ));
    }
    Ok(format!("ABI {abi}"))
}
