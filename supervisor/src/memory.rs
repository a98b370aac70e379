//! Admission by what workers really use, as container orchestrators schedule by requests and
//! enforce limits: a session's memory cap is a limit (its worker's guest cannot grow past it),
//! not a reservation. What a session counts for is its worker's measured proportional set size
//! (PSS: pages shared with other workers, such as the compiled interpreter, are split among
//! them) plus a quarter for growth, and never less than its runtime's expected use
//! ([`Runtime::expected_use_bytes`]), which is also what a session counts for before its worker
//! has been measured. A new session is admitted while the total stays within the memory budget
//! and the host's `MemAvailable` keeps [`host_reserve`] free after it.
//!
//! Measuring reads `/proc/PID/smaps_rollup` (about 0.1 ms a worker), so it is done by a
//! background sampler every [`SAMPLE_PERIOD`], never on a call's path; `/proc/meminfo` is read
//! at each admission (a few microseconds).

use std::collections::HashMap;
use std::time::Duration;

use sandbox_protocol::Runtime;

/// How often the workers' memory is measured.
pub const SAMPLE_PERIOD: Duration = Duration::from_secs(2);

/// The least memory the host keeps free whatever its size.
const MIN_HOST_RESERVE: u64 = 256 << 20;

/// One process's resident memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Footprint {
    /// Resident set size: every page it maps that is in memory.
    pub rss: u64,
    /// Proportional set size: its private pages plus its share of the shared ones.
    pub pss: u64,
}

/// The host's memory, from `/proc/meminfo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostMemory {
    pub total: u64,
    /// `MemAvailable`: what can be allocated without swapping.
    pub available: u64,
}

/// Where the kernel's process and memory files are (`/proc`; a fake tree in tests).
#[derive(Debug, Clone)]
pub struct ProcFs(pub std::path::PathBuf);

impl Default for ProcFs {
    fn default() -> Self {
        Self("/proc".into())
    }
}

impl ProcFs {
    /// The footprint of process `pid`, when it exists and is ours to read.
    pub fn footprint(&self, pid: u32) -> Option<Footprint> {
        let text =
            std::fs::read_to_string(self.0.join(pid.to_string()).join("smaps_rollup")).ok()?;
        parse_smaps_rollup(&text)
    }

    /// The host's total and available memory.
    pub fn host_memory(&self) -> Option<HostMemory> {
        parse_meminfo(&std::fs::read_to_string(self.0.join("meminfo")).ok()?)
    }

    /// Measures every pid of `pids` that still exists.
    pub fn footprints(&self, pids: impl IntoIterator<Item = u32>) -> HashMap<u32, Footprint> {
        pids.into_iter()
            .filter_map(|pid| Some((pid, self.footprint(pid)?)))
            .collect()
    }
}

/// A `kB` figure of a `/proc` file (`Name:   1234 kB`), in bytes.
fn field_bytes(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let value = line.strip_prefix(name)?.strip_prefix(':')?;
        let kib: u64 = value.trim().strip_suffix("kB")?.trim().parse().ok()?;
        Some(kib * 1024)
    })
}

fn parse_smaps_rollup(text: &str) -> Option<Footprint> {
    let rss = field_bytes(text, "Rss")?;
    // Kernels before 4.14 have no PSS here: count the whole RSS.
    let pss = field_bytes(text, "Pss").unwrap_or(rss);
    Some(Footprint { rss, pss })
}

fn parse_meminfo(text: &str) -> Option<HostMemory> {
    let total = field_bytes(text, "MemTotal")?;
    // Before Linux 3.14 there is no MemAvailable; free memory is the closest figure.
    let available = field_bytes(text, "MemAvailable").or_else(|| field_bytes(text, "MemFree"))?;
    Some(HostMemory { total, available })
}

/// What a worker of `runtime` counts for: its measured PSS plus a quarter for growth, never less
/// than the runtime's expected use (which is also the figure before any measurement).
pub fn demand(runtime: Runtime, measured: Option<Footprint>) -> u64 {
    let expected = runtime.expected_use_bytes();
    measured.map_or(expected, |m| (m.pss + m.pss / 4).max(expected))
}

/// What the host keeps free: a twentieth of its memory, at least [`MIN_HOST_RESERVE`].
pub fn host_reserve(host: HostMemory) -> u64 {
    (host.total / 20).max(MIN_HOST_RESERVE)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROLLUP: &str = "\
55d0c0000000-7ffd5a3f2000 ---p 00000000 00:00 0                          [rollup]
Rss:               21504 kB
Pss:                5632 kB
Pss_Anon:           3000 kB
Shared_Clean:      16000 kB
";

    #[test]
    fn proc_files_are_read_in_bytes() {
        assert_eq!(
            parse_smaps_rollup(ROLLUP),
            Some(Footprint {
                rss: 21504 * 1024,
                pss: 5632 * 1024
            })
        );
        assert_eq!(
            parse_smaps_rollup("Rss: 100 kB\n"),
            Some(Footprint {
                rss: 102_400,
                pss: 102_400
            }),
            "no PSS: the RSS counts"
        );
        assert_eq!(parse_smaps_rollup("Pss: 1 kB\n"), None);
        assert_eq!(parse_smaps_rollup("Rss: lots kB\n"), None);
        let meminfo =
            "MemTotal:       24000000 kB\nMemFree:         1000 kB\nMemAvailable:   12000000 kB\n";
        assert_eq!(
            parse_meminfo(meminfo),
            Some(HostMemory {
                total: 24_000_000 * 1024,
                available: 12_000_000 * 1024
            })
        );
        assert_eq!(
            parse_meminfo("MemTotal: 10 kB\nMemFree: 4 kB\n").map(|h| h.available),
            Some(4096)
        );
        assert_eq!(parse_meminfo("MemFree: 4 kB\n"), None);
    }

    #[test]
    fn a_fake_proc_tree_is_read_like_the_real_one() {
        let proc = tempfile::tempdir().unwrap();
        std::fs::create_dir(proc.path().join("42")).unwrap();
        std::fs::write(proc.path().join("42/smaps_rollup"), ROLLUP).unwrap();
        std::fs::write(
            proc.path().join("meminfo"),
            "MemTotal: 2048 kB\nMemAvailable: 1024 kB\n",
        )
        .unwrap();
        let fs = ProcFs(proc.path().to_path_buf());
        let measured = fs.footprints([42, 43]);
        assert_eq!(measured.len(), 1, "a pid that is gone is skipped");
        assert_eq!(measured[&42].pss, 5632 * 1024);
        assert_eq!(
            fs.host_memory(),
            Some(HostMemory {
                total: 2 << 20,
                available: 1 << 20
            })
        );
        // Our own process is always readable on Linux.
        let own = ProcFs::default().footprint(std::process::id()).unwrap();
        assert!(own.rss > 0 && own.pss > 0 && own.pss <= own.rss, "{own:?}");
    }

    #[test]
    fn a_worker_counts_for_its_measured_use_plus_headroom_never_less_than_expected() {
        let expected = Runtime::Python.expected_use_bytes();
        assert_eq!(demand(Runtime::Python, None), expected);
        let small = Footprint {
            rss: 21 << 20,
            pss: 6 << 20,
        };
        assert_eq!(demand(Runtime::Python, Some(small)), expected);
        let large = Footprint {
            rss: 900 << 20,
            pss: 800 << 20,
        };
        assert_eq!(demand(Runtime::Python, Some(large)), 1000 << 20);
        let host = |total| HostMemory {
            total,
            available: 0,
        };
        assert_eq!(host_reserve(host(24 << 30)), (24 << 30) / 20);
        assert_eq!(host_reserve(host(1 << 30)), MIN_HOST_RESERVE);
    }
}
