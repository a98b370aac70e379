//! What `sandbox-bench` needs beyond the test harness: the memory of processes (RSS and PSS from
//! `/proc/PID/smaps_rollup`) and of a server's process tree, and an MCP client over any server
//! command ([`CommandServer`]): our server with its default configuration, or another MCP server
//! measured with the same calls.

use std::path::PathBuf;
use std::process::Stdio;

use anyhow::{Context, Result, bail, ensure};
use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;

use crate::{Client, Recorder, procfs, server_binary};

/// Resident memory of one process or a sum over several, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Memory {
    /// Resident set size: every page the process maps that is in RAM, shared pages counted in
    /// full by each process that maps them (so a sum over processes overstates RAM use).
    pub rss_bytes: u64,
    /// Proportional set size: shared pages split between the processes that map them, so a sum
    /// over processes is what they cost the host together.
    pub pss_bytes: u64,
}

impl std::ops::Add for Memory {
    type Output = Memory;

    fn add(self, other: Memory) -> Memory {
        Memory {
            rss_bytes: self.rss_bytes + other.rss_bytes,
            pss_bytes: self.pss_bytes + other.pss_bytes,
        }
    }
}

impl std::iter::Sum for Memory {
    fn sum<I: Iterator<Item = Memory>>(memories: I) -> Memory {
        memories.fold(Memory::default(), |total, m| total + m)
    }
}

/// The `Rss:` and `Pss:` lines (in kB) of a `/proc/PID/smaps_rollup`.
///
/// # Errors
/// When either line is missing or not a number: a kernel without the file's usual shape must
/// not read as a process that uses no memory.
pub fn parse_smaps_rollup(text: &str) -> Result<Memory> {
    let kilobytes = |key: &str| -> Result<u64> {
        let line = text
            .lines()
            .find_map(|line| line.strip_prefix(key))
            .with_context(|| format!("smaps_rollup has no {key:?} line"))?;
        let number = line
            .trim()
            .strip_suffix("kB")
            .with_context(|| format!("{key} {line:?} is not in kB"))?;
        number
            .trim()
            .parse::<u64>()
            .with_context(|| format!("{key} {line:?} is not a number"))
    };
    Ok(Memory {
        rss_bytes: kilobytes("Rss:")? * 1024,
        pss_bytes: kilobytes("Pss:")? * 1024,
    })
}

/// The memory of process `pid` now.
///
/// # Errors
/// When the process is gone or its `smaps_rollup` cannot be read or parsed.
pub fn memory_of(pid: u32) -> Result<Memory> {
    let path = format!("/proc/{pid}/smaps_rollup");
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
    parse_smaps_rollup(&text).with_context(|| path)
}

/// The processes below `root` in `(pid, ppid)` pairs: children, their children and so on
/// (`root` itself excluded), in no particular order.
pub fn descendants_in(processes: &[(u32, u32)], root: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for &(pid, ppid) in processes {
            if ppid == parent && pid != root && !found.contains(&pid) {
                found.push(pid);
                frontier.push(pid);
            }
        }
    }
    found
}

/// The live (not zombie) processes below `root` now.
pub fn descendants(root: u32) -> Vec<u32> {
    let processes: Vec<(u32, u32)> = procfs::processes()
        .into_iter()
        .filter(|(_, _, state, _)| *state != 'Z')
        .map(|(pid, ppid, ..)| (pid, ppid))
        .collect();
    descendants_in(&processes, root)
}

/// The memory of `root` and every process below it, and how many processes that is. Processes
/// that exit while they are read are left out.
///
/// # Errors
/// When `root` itself cannot be read.
pub fn tree_memory(root: u32) -> Result<(Memory, usize)> {
    let mut total = memory_of(root)?;
    let mut count = 1;
    for pid in descendants(root) {
        if let Ok(memory) = memory_of(pid) {
            total = total + memory;
            count += 1;
        }
    }
    Ok((total, count))
}

/// Any MCP server started from a command line and connected over stdio with the same client
/// the tests use. Derefs to its [`Client`]. Its stderr goes to a file, shown by
/// [`CommandServer::stderr_tail`] when something fails.
pub struct CommandServer {
    client: Client,
    /// Process id of the server.
    pub pid: u32,
    /// Where the server's stderr goes (kept out of the benchmark's output).
    stderr_log: tempfile::NamedTempFile,
    /// The scratch directory holding our server's state directory (see
    /// [`CommandServer::sandbox_mcp`]); removed when the server is dropped.
    scratch: Option<tempfile::TempDir>,
}

impl std::ops::Deref for CommandServer {
    type Target = Client;

    fn deref(&self) -> &Client {
        &self.client
    }
}

impl CommandServer {
    /// Starts `command` (program first, then its arguments) and completes the MCP handshake.
    ///
    /// # Errors
    /// When the command is empty or cannot be started, or the handshake fails (the error
    /// quotes the end of the server's stderr).
    pub async fn start(command: &[String]) -> Result<Self> {
        Self::spawn(command, &[], None).await
    }

    /// `sandbox-mcp` ([`server_binary`]) as a user runs it: its default configuration, or what
    /// the environment's `SANDBOX_*` settings say (unlike [`crate::Server::start`], which sets
    /// the tests' small worker pool), with its state directory in a scratch directory so
    /// [`procfs::worker_of_session`] finds its sessions' workers.
    ///
    /// # Errors
    /// As [`CommandServer::start`].
    pub async fn sandbox_mcp() -> Result<Self> {
        Self::sandbox_mcp_with(&[]).await
    }

    /// As [`CommandServer::sandbox_mcp`], with `env` added to the server's environment.
    ///
    /// # Errors
    /// As [`CommandServer::start`].
    pub async fn sandbox_mcp_with(env: &[(&str, &str)]) -> Result<Self> {
        let bin = server_binary();
        ensure!(
            bin.is_file(),
            "{} not found: run `cargo build --release --workspace` first",
            bin.display()
        );
        let command = [bin.to_string_lossy().into_owned()];
        Self::spawn(&command, env, Some(tempfile::tempdir()?)).await
    }

    async fn spawn(
        command: &[String],
        env: &[(&str, &str)],
        scratch: Option<tempfile::TempDir>,
    ) -> Result<Self> {
        let (program, args) = command.split_first().context("an empty server command")?;
        let stderr_log = tempfile::NamedTempFile::new()?;
        let mut spawn = tokio::process::Command::new(PathBuf::from(program));
        spawn.args(args).envs(env.iter().copied());
        if let Some(scratch) = &scratch {
            spawn.env("SANDBOX_STATE_DIR", scratch.path().join("state"));
        }
        let (transport, _) = TokioChildProcess::builder(spawn)
            .stderr(Stdio::from(stderr_log.reopen()?))
            .spawn()
            .with_context(|| format!("starting {program}"))?;
        let pid = transport.id().context("the server's pid")?;
        let service = match Recorder::default().serve(transport).await {
            Ok(service) => service,
            Err(error) => bail!(
                "MCP initialize with {}: {error}; its stderr ends: {}",
                command.join(" "),
                tail_of(&stderr_log)
            ),
        };
        Ok(CommandServer {
            client: Client::new(service),
            pid,
            stderr_log,
            scratch,
        })
    }

    /// The state directory the server was given (`SANDBOX_STATE_DIR`), when this started it
    /// in a scratch directory of its own.
    pub fn state_dir(&self) -> Option<PathBuf> {
        self.scratch.as_ref().map(|s| s.path().join("state"))
    }

    /// The last lines the server wrote to stderr (for error messages).
    pub fn stderr_tail(&self) -> String {
        tail_of(&self.stderr_log)
    }

    /// Closes the connection (stdin EOF), which ends a well-behaved stdio server.
    ///
    /// # Errors
    /// When the client task failed.
    pub async fn stop(self) -> Result<()> {
        self.client.stop().await
    }
}

/// The last 5 lines of a log file, joined with " | ".
fn tail_of(log: &tempfile::NamedTempFile) -> String {
    let text = std::fs::read_to_string(log.path()).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(5)..].join(" | ");
    if tail.is_empty() {
        "(nothing)".into()
    } else {
        tail
    }
}

/// Checks that a [`Memory`] is plausible for a live process (both figures non-zero and PSS not
/// above RSS).
///
/// # Errors
/// When it is not.
pub fn ensure_plausible(memory: Memory) -> Result<Memory> {
    ensure!(
        memory.rss_bytes > 0 && memory.pss_bytes > 0 && memory.pss_bytes <= memory.rss_bytes,
        "implausible memory figures {memory:?}"
    );
    Ok(memory)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROLLUP: &str = "\
55d0c8a4d000-7ffd3c5f1000 ---p 00000000 00:00 0                          [rollup]
Rss:               21504 kB
Pss:                5632 kB
Pss_Dirty:          3000 kB
Shared_Clean:      16000 kB
";

    #[test]
    fn smaps_rollup_gives_rss_and_pss_in_bytes() {
        let memory = parse_smaps_rollup(ROLLUP).unwrap();
        assert_eq!(
            memory,
            Memory {
                rss_bytes: 21504 * 1024,
                pss_bytes: 5632 * 1024
            }
        );
        // `Pss_Dirty:` must not be taken for `Pss:` when the order differs.
        let reordered = "Pss_Dirty: 7 kB\nRss: 10 kB\nPss: 4 kB\n";
        assert_eq!(parse_smaps_rollup(reordered).unwrap().pss_bytes, 4096);
    }

    #[test]
    fn a_malformed_smaps_rollup_is_an_error() {
        assert!(parse_smaps_rollup("Rss: 10 kB\n").is_err(), "no Pss");
        assert!(parse_smaps_rollup("Rss: ten kB\nPss: 1 kB\n").is_err());
        assert!(parse_smaps_rollup("Rss: 10 MB\nPss: 1 kB\n").is_err());
    }

    #[test]
    fn memory_adds_up() {
        let one = Memory {
            rss_bytes: 3,
            pss_bytes: 1,
        };
        let total: Memory = [one, one, one].into_iter().sum();
        assert_eq!(
            total,
            Memory {
                rss_bytes: 9,
                pss_bytes: 3
            }
        );
    }

    #[test]
    fn descendants_include_grandchildren_but_not_siblings() {
        let processes = [
            (1, 0),
            (10, 1),
            (11, 10),
            (12, 11),
            (20, 1),
            (30, 20),
            (40, 99),
        ];
        let mut below = descendants_in(&processes, 10);
        below.sort_unstable();
        assert_eq!(below, [11, 12]);
        let mut all = descendants_in(&processes, 1);
        all.sort_unstable();
        assert_eq!(all, [10, 11, 12, 20, 30]);
        assert!(descendants_in(&processes, 12).is_empty());
    }

    #[test]
    fn the_live_process_tree_of_this_test_is_read() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let below = descendants(std::process::id());
        let (memory, count) = tree_memory(std::process::id()).unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(below.contains(&child.id()), "{below:?}");
        assert!(count >= 2, "{count}");
        ensure_plausible(memory).unwrap();
    }
}
