//! Optional cgroup v2 caps for workers: `memory.max`, `pids.max` and `cpu.max` per worker when
//! the supervisor runs in a delegated cgroup v2 subtree (e.g. a systemd unit with
//! `Delegate=yes`). Detected once at start-up; without it the rlimits of `jail.rs` stand alone.
//! A worker's cgroup is planned first ([`CgroupPlan`], part of the worker's spawn plan), then
//! created ([`WorkerCgroup::create`]).
//!
//! Layout, following youki's v2 manager: the supervisor's own cgroup `S` gets a leaf `S/server`
//! that the supervisor moves into (cgroup v2 forbids processes in a cgroup that enables
//! controllers for its children), the controllers are enabled in `S/cgroup.subtree_control`,
//! and each worker gets `S/worker-<session>-<generation>`, torn down with `cgroup.kill` and
//! `rmdir`.

use std::ffi::CString;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The controllers a worker cgroup needs.
const CONTROLLERS: [&str; 3] = ["memory", "pids", "cpu"];

/// Most tasks (threads) a worker may have: the guest thread, the epoch ticker, the socket
/// reader, the runtime wasmtime-wasi starts, and spare.
const MAX_TASKS: u32 = 64;

/// `cpu.max` period in microseconds.
const CPU_PERIOD_US: u64 = 100_000;

/// Whether worker cgroups can be used, and why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CgroupSupport {
    Delegated { root: PathBuf },
    Unavailable { reason: String },
}

impl CgroupSupport {
    /// Detects delegation on this machine and prepares the subtree.
    pub fn detect() -> Self {
        let mounts = fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        let own = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        Self::detect_in(&mounts, &own, Path::new("/"))
    }

    /// [`CgroupSupport::detect`] against given `/proc` contents and a filesystem root (tests
    /// use a temporary directory as the cgroup filesystem).
    pub fn detect_in(mounts: &str, own_cgroup: &str, fs_root: &Path) -> Self {
        let unavailable = |reason: String| CgroupSupport::Unavailable { reason };
        let Some(mount) = mounts
            .lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let (_, point, kind) = (f.next()?, f.next()?, f.next()?);
                (kind == "cgroup2").then(|| point.to_owned())
            })
            .next()
        else {
            return unavailable("no cgroup v2 filesystem is mounted (cgroup v1 only)".into());
        };
        let Some(own) = own_cgroup.lines().find_map(|l| l.strip_prefix("0::")) else {
            return unavailable("this process is not in a cgroup v2 hierarchy".into());
        };
        let root = fs_root
            .join(mount.trim_start_matches('/'))
            .join(own.trim_start_matches('/'));
        let controllers = fs::read_to_string(root.join("cgroup.controllers")).unwrap_or_default();
        let missing: Vec<&str> = CONTROLLERS
            .iter()
            .copied()
            .filter(|c| !controllers.split_whitespace().any(|x| x == *c))
            .collect();
        if !missing.is_empty() {
            return unavailable(format!(
                "controllers {} are not delegated to {}",
                missing.join(", "),
                root.display()
            ));
        }
        match enable_controllers(&root) {
            Ok(()) => CgroupSupport::Delegated { root },
            Err(e) => unavailable(format!(
                "cannot enable controllers in {}: {e}",
                root.display()
            )),
        }
    }

    /// A one-line description for clients: no host paths.
    pub fn describe_public(&self) -> &'static str {
        match self {
            CgroupSupport::Delegated { .. } => {
                "cgroup v2 delegated: each worker gets its own memory.max, pids.max and cpu.max"
            }
            CgroupSupport::Unavailable { .. } => {
                "cgroup v2 caps unavailable (no delegated cgroup v2 subtree with the memory, pids and cpu controllers); workers are limited by rlimits, fuel and deadlines"
            }
        }
    }

    /// A one-line description for the operator's logs (names host paths).
    pub fn describe(&self) -> String {
        match self {
            CgroupSupport::Delegated { root } => {
                format!(
                    "cgroup v2 delegated: each worker gets memory.max, pids.max and cpu.max under {}",
                    root.display()
                )
            }
            CgroupSupport::Unavailable { reason } => {
                format!(
                    "cgroup v2 caps unavailable ({reason}); workers are limited by rlimits, fuel and deadlines"
                )
            }
        }
    }
}

/// Moves this process into a `server` leaf and enables the controllers for children.
fn enable_controllers(root: &Path) -> io::Result<()> {
    let leaf = root.join("server");
    fs::create_dir_all(&leaf)?;
    fs::write(leaf.join("cgroup.procs"), std::process::id().to_string())?;
    let enable: Vec<String> = CONTROLLERS.iter().map(|c| format!("+{c}")).collect();
    fs::write(root.join("cgroup.subtree_control"), enable.join(" "))
}

/// Where one worker's cgroup goes and what it caps, decided before anything is created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupPlan {
    /// `<delegated root>/worker-<session>-<generation>`.
    pub dir: PathBuf,
    /// `memory.max`: the same budget as the worker's RLIMIT_DATA.
    pub memory_max: u64,
    /// `pids.max`.
    pub pids_max: u32,
    /// `cpu.max` quota per [`CPU_PERIOD_US`]: the session's CPU share.
    pub cpu_quota_us: u64,
}

impl CgroupPlan {
    /// The cgroup `name` under `root` for a worker of a session with `cpus` CPUs, whose process
    /// may use `data_bytes` of memory.
    pub fn for_worker(root: &Path, name: &str, cpus: u32, data_bytes: u64) -> Self {
        Self {
            dir: root.join(name),
            memory_max: data_bytes,
            pids_max: MAX_TASKS,
            cpu_quota_us: CPU_PERIOD_US * u64::from(cpus.max(1)),
        }
    }
}

/// One worker's cgroup.
#[derive(Debug)]
pub struct WorkerCgroup {
    dir: PathBuf,
}

impl WorkerCgroup {
    /// Creates the cgroup and writes its limits; the worker joins it itself (see `jail.rs`).
    ///
    /// # Errors
    /// When the cgroup cannot be created or configured.
    pub fn create(plan: &CgroupPlan) -> io::Result<Self> {
        fs::create_dir_all(&plan.dir)?;
        let cgroup = Self {
            dir: plan.dir.clone(),
        };
        fs::write(cgroup.dir.join("memory.max"), plan.memory_max.to_string())?;
        fs::write(cgroup.dir.join("pids.max"), plan.pids_max.to_string())?;
        fs::write(
            cgroup.dir.join("cpu.max"),
            format!("{} {CPU_PERIOD_US}", plan.cpu_quota_us),
        )?;
        Ok(cgroup)
    }

    /// The `cgroup.procs` path for the worker's `pre_exec` hook.
    pub fn procs_path(&self) -> Option<CString> {
        CString::new(self.dir.join("cgroup.procs").as_os_str().as_bytes()).ok()
    }

    /// Kills anything left in the cgroup and removes it (retrying: removal fails while the
    /// kernel still reaps tasks).
    pub fn remove(&self) {
        let _ = fs::write(self.dir.join("cgroup.kill"), "1");
        for _ in 0..20 {
            if fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        tracing::warn!(cgroup = %self.dir.display(), "cannot remove worker cgroup");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workers_cgroup_is_planned_from_its_session() {
        let plan = CgroupPlan::for_worker(Path::new("/cg/svc"), "worker-s.k-2", 4, 9 << 30);
        assert_eq!(plan.dir, Path::new("/cg/svc/worker-s.k-2"));
        assert_eq!(
            (plan.memory_max, plan.pids_max, plan.cpu_quota_us),
            (9 << 30, 64, 400_000)
        );
    }

    #[test]
    fn v1_or_hybrid_machines_are_reported_unavailable() {
        let root = tempfile::tempdir().unwrap();
        let v1 = "cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n";
        let got = CgroupSupport::detect_in(v1, "4:memory:/x\n", root.path());
        assert!(
            matches!(got, CgroupSupport::Unavailable { ref reason } if reason.contains("v1")),
            "{got:?}"
        );
        assert!(got.describe().contains("rlimits"));
    }

    #[test]
    fn missing_controllers_are_named() {
        let root = tempfile::tempdir().unwrap();
        let cg = root.path().join("sys/fs/cgroup/svc");
        fs::create_dir_all(&cg).unwrap();
        fs::write(cg.join("cgroup.controllers"), "cpu io\n").unwrap();
        let mounts = "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n";
        let got = CgroupSupport::detect_in(mounts, "0::/svc\n", root.path());
        assert!(
            matches!(got, CgroupSupport::Unavailable { ref reason } if reason.contains("memory, pids")),
            "{got:?}"
        );
    }

    #[test]
    fn delegated_subtree_gets_controllers_and_worker_limits() {
        let root = tempfile::tempdir().unwrap();
        let cg = root.path().join("sys/fs/cgroup/svc");
        fs::create_dir_all(&cg).unwrap();
        fs::write(cg.join("cgroup.controllers"), "cpu memory pids io\n").unwrap();
        let got = CgroupSupport::detect_in(
            "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n",
            "0::/svc\n",
            root.path(),
        );
        let CgroupSupport::Delegated { root: delegated } = got else {
            panic!("{got:?}")
        };
        assert_eq!(
            fs::read_to_string(cg.join("cgroup.subtree_control")).unwrap(),
            "+memory +pids +cpu"
        );
        assert_eq!(
            fs::read_to_string(cg.join("server/cgroup.procs")).unwrap(),
            std::process::id().to_string()
        );

        let plan = CgroupPlan::for_worker(&delegated, "worker-s-1", 2, 3 << 30);
        let worker = WorkerCgroup::create(&plan).unwrap();
        let dir = delegated.join("worker-s-1");
        assert_eq!(
            fs::read_to_string(dir.join("memory.max")).unwrap(),
            (3u64 << 30).to_string()
        );
        assert_eq!(fs::read_to_string(dir.join("pids.max")).unwrap(), "64");
        assert_eq!(
            fs::read_to_string(dir.join("cpu.max")).unwrap(),
            "200000 100000"
        );
        assert!(
            worker
                .procs_path()
                .unwrap()
                .to_str()
                .unwrap()
                .ends_with("worker-s-1/cgroup.procs")
        );
        // A plain directory with files cannot be rmdir'ed: removal gives up without panicking.
        worker.remove();
        assert_eq!(fs::read_to_string(dir.join("cgroup.kill")).unwrap(), "1");
    }
}
