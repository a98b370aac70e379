//! The worker's own jail (seccomp, Landlock, network namespace, RLIMIT_NPROC, closed
//! descriptors), from outside and from inside.
//!
//! From inside: `SANDBOX_WORKER_ENTRY=jail-probe` makes every worker start exactly like a
//! serving one, enter exactly the production jail, and then try what an attacker who escaped
//! Wasmtime would try (read another session's files, the state directory, the server's
//! environment, `/etc/passwd`; write the module cache; connect to a TCP listener of this test;
//! fork, exec, raise limits, touch the parent). Its report comes back as the error of the first
//! `execute_code`. From outside: `list_runtimes` health and `/proc/<pid>` of a real worker. And
//! fail closed: a required layer that is turned off means no worker at all.

use std::io::Read;
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use sandbox_tests::{Server, eventually, pinned_pool, procfs, server_binary};
use serde_json::{Value, json};

/// What one probe run reported: each layer's state, and every attempt.
struct ProbeReport {
    jail: Value,
    attempts: Vec<Value>,
}

impl ProbeReport {
    fn attempt(&self, name: &str) -> &Value {
        self.attempts
            .iter()
            .find(|a| a["attempt"] == name)
            .unwrap_or_else(|| panic!("no attempt {name} in {:#?}", self.attempts))
    }

    fn result(&self, name: &str) -> &str {
        self.attempt(name)["result"].as_str().unwrap_or_default()
    }

    /// Attempts whose result is `ok`: the forbidden thing worked.
    fn succeeded(&self) -> Vec<&str> {
        self.attempts
            .iter()
            .filter(|a| a["result"] == "ok")
            .filter_map(|a| a["attempt"].as_str())
            .collect()
    }
}

/// Every attempt of the probe.
const ATTEMPTS: [&str; 15] = [
    "open_other_session_dir",
    "read_other_session_file",
    "list_sessions_dir",
    "open_state_dir",
    "read_parent_environ",
    "read_etc_passwd",
    "open_module_for_writing",
    "create_file_in_module_cache",
    "tcp_connect_loopback",
    "fork",
    "exec_bin_true",
    "raise_nofile_above_hard_limit",
    "prlimit_parent",
    "chmod_setuid_own_file",
    "signal_parent",
];

/// The attempts that are files (Landlock's share); the rest are system calls.
const FILE_ATTEMPTS: [&str; 8] = [
    "open_other_session_dir",
    "read_other_session_file",
    "list_sessions_dir",
    "open_state_dir",
    "read_parent_environ",
    "read_etc_passwd",
    "open_module_for_writing",
    "create_file_in_module_cache",
];

/// Starts a server whose workers are probes (with `env` on top), gives it a victim session
/// with a secret file and a TCP listener to reach, and returns what the probe reported.
async fn run_probe(env: &[(&str, &str)]) -> Result<ProbeReport> {
    run_probe_as(None, env).await
}

/// As [`run_probe`], with the server running as `uid` (root only).
async fn run_probe_as(uid: Option<u32>, env: &[(&str, &str)]) -> Result<ProbeReport> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let targets = json!({
        "other_session": "victim",
        "other_file": "secret.txt",
        "tcp_port": listener.local_addr()?.port(),
    })
    .to_string();
    let mut all = vec![
        ("SANDBOX_WORKER_ENTRY", "jail-probe"),
        ("SANDBOX_PROBE_TARGETS", targets.as_str()),
    ];
    all.extend_from_slice(env);
    let server = Server::start_as(uid, &all).await?;
    server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "victim" }),
        )
        .await?;
    let victim = server
        .workspace_of("victim")
        .context("the victim session's directory")?;
    std::fs::write(victim.join("secret.txt"), "the victim's secret")?;

    let reply = server
        .exec("python", "1", json!({ "session_id": "attacker" }))
        .await?;
    ensure!(reply.is_error, "a probe never serves: {reply:?}");
    ensure!(reply.str("error_type") == "system_error", "{reply:?}");
    let message = reply.str("error_message");
    let start = message
        .find('{')
        .with_context(|| format!("no probe report in {message:?}"))?;
    let report: Value = serde_json::from_str(&message[start..])
        .with_context(|| format!("probe report {message:?}"))?;
    let report = &report["jail_probe"];
    let attempts = report["attempts"].as_array().context("attempts")?.to_vec();
    for name in ATTEMPTS {
        ensure!(
            attempts.iter().any(|a| a["attempt"] == name),
            "{name} missing from {attempts:#?}"
        );
    }
    ensure!(
        eventually(Duration::from_secs(5), || procfs::workers_of(server.pid)
            .is_empty())
        .await,
        "the probe worker is gone after its report"
    );
    // Nothing of the attempts touched the victim.
    ensure!(std::fs::read_to_string(victim.join("secret.txt"))? == "the victim's secret");
    server.stop().await?;
    Ok(ProbeReport {
        jail: report["jail"].clone(),
        attempts,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_every_layer_nothing_forbidden_works() -> Result<()> {
    let report = run_probe(&[]).await?;
    assert!(
        report.succeeded().is_empty(),
        "forbidden attempts worked: {:?}\n{:#?}",
        report.succeeded(),
        report.attempts
    );
    for name in ATTEMPTS {
        assert!(
            !report.result(name).starts_with("skipped"),
            "{name} was not tried: {:#?}",
            report.attempts
        );
    }
    assert!(
        report.jail["seccomp"]
            .as_str()
            .unwrap()
            .starts_with("enforced")
    );
    assert!(
        report.jail["landlock"]
            .as_str()
            .unwrap()
            .starts_with("enforced")
    );
    assert!(
        report.jail["netns"]
            .as_str()
            .unwrap()
            .starts_with("enforced")
    );
    // Which layer stopped what: Landlock the files, seccomp the system calls.
    for name in FILE_ATTEMPTS {
        assert_eq!(
            report.attempt(name)["stopped_by"],
            "landlock",
            "{:#?}",
            report.attempt(name)
        );
    }
    for name in ATTEMPTS.iter().filter(|a| !FILE_ATTEMPTS.contains(a)) {
        assert_eq!(
            report.attempt(name)["stopped_by"],
            "seccomp",
            "{:#?}",
            report.attempt(name)
        );
    }
    Ok(())
}

/// The control: the same probe without the jail's layers gets everything it tries (so the
/// test above shows the jail at work, not a probe that cannot do anything anyway).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_layers_the_probe_gets_through() -> Result<()> {
    let report = run_probe(&[("SANDBOX_JAIL_DISABLE", "seccomp,landlock,netns")]).await?;
    assert_eq!(report.jail["seccomp"], "not requested");
    // As root (CI), every attempt works (raising a hard limit needs CAP_SYS_RESOURCE, which a
    // container may lack); as another user, at least the files of its own uid and the network.
    let expected: Vec<&str> = if is_root() {
        ATTEMPTS
            .into_iter()
            .filter(|a| *a != "raise_nofile_above_hard_limit" || has_cap_sys_resource())
            .collect()
    } else {
        vec![
            "open_other_session_dir",
            "read_other_session_file",
            "open_state_dir",
            "read_parent_environ",
            "tcp_connect_loopback",
            "fork",
            "exec_bin_true",
        ]
    };
    for name in expected {
        assert_eq!(report.result(name), "ok", "{:#?}", report.attempts);
    }
    Ok(())
}

/// Depth: each layer alone stops its own share of the attacks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_layer_alone_holds_its_ground() -> Result<()> {
    let landlock_only = run_probe(&[("SANDBOX_JAIL_DISABLE", "seccomp,netns")]).await?;
    for name in FILE_ATTEMPTS {
        assert_eq!(
            landlock_only.result(name),
            "EACCES",
            "{:#?}",
            landlock_only.attempts
        );
    }
    // No execute right anywhere; TCP connect handled with no port allowed (ABI 4); signals
    // out of the domain scoped (ABI 6).
    assert_eq!(landlock_only.result("exec_bin_true"), "EACCES");
    assert_eq!(landlock_only.result("tcp_connect_loopback"), "EACCES");
    assert_eq!(landlock_only.result("signal_parent"), "EPERM");

    let seccomp_only = run_probe(&[("SANDBOX_JAIL_DISABLE", "landlock,netns")]).await?;
    for name in ATTEMPTS.iter().filter(|a| !FILE_ATTEMPTS.contains(a)) {
        assert_eq!(
            seccomp_only.result(name),
            "EPERM",
            "{:#?}",
            seccomp_only.attempts
        );
    }

    let netns_only = run_probe(&[("SANDBOX_JAIL_DISABLE", "seccomp,landlock")]).await?;
    assert_eq!(
        netns_only.result("tcp_connect_loopback"),
        "ENETUNREACH",
        "{:#?}",
        netns_only.attempts
    );
    // In its own user namespace a root worker has no capability over the host: it cannot
    // raise its hard limit any more.
    assert_eq!(netns_only.result("raise_nofile_above_hard_limit"), "EPERM");
    Ok(())
}

/// A server that is not root: the same jail, and RLIMIT_NPROC binds too (uid 0 is exempt).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_root_worker_gets_every_layer_and_nproc() -> Result<()> {
    sandbox_tests::host::require_root("starting the server as nobody")?;
    let report = run_probe_as(
        Some(NOBODY),
        &[("SANDBOX_REQUIRE", "seccomp,landlock,netns,nproc,fds")],
    )
    .await?;
    assert!(
        report.succeeded().is_empty(),
        "forbidden attempts worked: {:?}\n{:#?}",
        report.succeeded(),
        report.attempts
    );
    assert!(
        report.jail["nproc"]
            .as_str()
            .unwrap()
            .starts_with("enforced ("),
        "{}",
        report.jail
    );

    // And a real session lives under that limit: Python, a shell command, threads of its own.
    let server = Server::start_as(Some(NOBODY), &[("SANDBOX_REQUIRE", "nproc")]).await?;
    server.python("n", "print(sum(range(10)))").await?;
    let listed = server
        .call(
            "execute_command",
            json!({ "session_id": "n", "command": "echo hi > f && cat f && python -c 'print(2)'" }),
        )
        .await?;
    assert!(!listed.is_error, "{listed:?}");
    assert_eq!(listed.str("stdout"), "hi\n2\n");
    let pid = procfs::worker_of_session(server.pid, "n").context("worker pid")?;
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits"))?;
    let nproc = limits
        .lines()
        .find(|l| l.starts_with("Max processes"))
        .unwrap_or_default()
        .to_owned();
    assert!(!nproc.contains("unlimited"), "{nproc}");
    let health = server.call("list_runtimes", json!({})).await?;
    assert!(
        health.value["health"]["jail"]["nproc"].as_u64().is_some(),
        "{:?}",
        health.value["health"]["jail"]
    );
    server.stop().await?;
    Ok(())
}

/// The uid of `nobody`.
const NOBODY: u32 = 65534;

/// Fail closed: a required layer that is turned off means no worker, and an answer naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_required_layer_that_is_missing_refuses_the_worker() -> Result<()> {
    for layer in ["landlock", "seccomp", "netns"] {
        let server =
            Server::start_with_env(&[("SANDBOX_JAIL_DISABLE", layer), ("SANDBOX_REQUIRE", layer)])
                .await?;
        server.forbid_own_host_paths();
        let reply = server
            .exec("python", "print('never')", json!({ "session_id": "s" }))
            .await?;
        assert!(reply.is_error, "{reply:?}");
        assert_eq!(reply.str("error_type"), "system_error", "{reply:?}");
        let message = reply.str("error_message");
        assert!(
            message.contains(&format!(
                "the jail layer {layer} is required but unavailable"
            )),
            "{message}"
        );
        assert!(
            procfs::workers_of(server.pid).is_empty(),
            "no worker for {layer}: {:?}",
            procfs::workers_of(server.pid)
        );
        let health = server.call("list_runtimes", json!({})).await?;
        let jail = &health.value["health"]["jail"];
        assert_eq!(jail["required"], json!([layer]), "{jail}");
        assert_eq!(jail["disabled"], json!([layer]), "{jail}");
        server.stop().await?;
    }
    Ok(())
}

/// The worker checks for itself too: asked to require a layer it was not asked to apply, it
/// says so on its socket and exits, whatever the supervisor thought.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_worker_itself_refuses_without_a_required_layer() -> Result<()> {
    let worker = server_binary().with_file_name("sandbox-worker");
    let module = cached_module("python")?;
    let scratch = tempfile::tempdir()?;
    let app = scratch.path().join("app");
    std::fs::create_dir(&app)?;
    let socket = scratch.path().join("w.sock");
    let listener = UnixListener::bind(&socket)?;
    let mut child = std::process::Command::new(&worker)
        .arg("serve")
        .args(["--runtime", "python", "--wasm-sha256", ""])
        .arg("--socket")
        .arg(&socket)
        .arg("--workspace")
        .arg(&app)
        .arg("--module")
        .arg(&module)
        .args(["--jail", "seccomp,fds", "--require", "landlock"])
        .env_clear()
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let (mut stream, _) = listener.accept()?;
    stream.set_read_timeout(Some(Duration::from_secs(20)))?;
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let mut frame = vec![0u8; u32::from_be_bytes(len) as usize];
    stream.read_exact(&mut frame)?;
    let text = String::from_utf8_lossy(&frame);
    assert!(
        text.contains("the jail layer landlock is required but unavailable"),
        "{text}"
    );
    drop(stream); // the worker waits for us to hang up, then exits
    let status = child.wait()?;
    assert_eq!(
        status.code(),
        Some(7),
        "a jail failure has its own exit code"
    );
    Ok(())
}

/// `list_runtimes` health: the start-up check before any worker, then what the last worker
/// applied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_shows_the_layers() -> Result<()> {
    let server = Server::start_with_env(&[("SANDBOX_REQUIRE", "seccomp,landlock,netns")]).await?;
    server.forbid_own_host_paths();
    let before = server.call("list_runtimes", json!({})).await?;
    let jail = &before.value["health"]["jail"];
    assert!(
        jail["source"].as_str().unwrap().contains("start-up"),
        "{jail}"
    );
    assert_eq!(jail["seccomp"], "available", "{jail}");
    assert_eq!(jail["required"], json!(["netns", "landlock", "seccomp"]));

    server.python("h", "print('jailed')").await?;
    let after = server.call("list_runtimes", json!({})).await?;
    let health = &after.value["health"];
    let jail = &health["jail"];
    assert!(
        jail["source"].as_str().unwrap().contains("worker"),
        "{jail}"
    );
    assert_eq!(jail["seccomp"], "enforced", "{jail}");
    assert!(
        jail["landlock"]
            .as_str()
            .unwrap()
            .starts_with("enforced (ABI "),
        "{jail}"
    );
    assert!(
        jail["network"]
            .as_str()
            .unwrap()
            .contains("own network namespace"),
        "{jail}"
    );
    assert_eq!(jail["inherited_fds"], "closed", "{jail}");
    if is_root() {
        assert!(jail["nproc"].as_str().unwrap().contains("uid 0"), "{jail}");
    } else {
        assert!(jail["nproc"].as_u64().unwrap() > 4, "{jail}");
    }
    let isolation = health["isolation"].as_str().unwrap();
    assert!(
        isolation.contains("seccomp allow-list") && isolation.contains("Landlock"),
        "{isolation}"
    );
    server.stop().await?;
    Ok(())
}

/// A real worker, seen in /proc: seccomp filter mode, no_new_privs, a network namespace that
/// is not the server's, and only the descriptors it needs. Both kinds, each pinned: a worker
/// the session started (no pool), and a pre-started one it adopted (jailed before any session
/// existed; the test waits for the pool).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_worker_is_jailed_as_reported() -> Result<()> {
    for adopted in [false, true] {
        real_worker_is_jailed(adopted)
            .await
            .with_context(|| format!("adopted: {adopted}"))?;
    }
    Ok(())
}

async fn real_worker_is_jailed(adopted: bool) -> Result<()> {
    let server = Server::start_with_env(&[pinned_pool(adopted)]).await?;
    let pid = server.first_call("real", adopted, "x = 1").await?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(field("Seccomp:"), "2", "filter mode\n{status}");
    assert_eq!(field("NoNewPrivs:"), "1", "{status}");
    // Capabilities are those of its own user namespace, none over the host.
    let ns = |pid: u32, kind: &str| std::fs::read_link(format!("/proc/{pid}/ns/{kind}"));
    assert_ne!(ns(pid, "net")?, ns(server.pid, "net")?);
    assert_ne!(ns(pid, "user")?, ns(server.pid, "user")?);
    let uid_map = std::fs::read_to_string(format!("/proc/{pid}/uid_map"))?;
    let uid = field("Uid:")
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(
        uid_map.split_whitespace().collect::<Vec<_>>(),
        [uid.as_str(), uid.as_str(), "1"],
        "own uid mapped 1:1"
    );

    // Canonical: an adopted session's directory is a link to the pooled one the worker uses.
    let app = server.workspace_of("real").context("workspace")?;
    let session_dir = app.parent().context("session dir")?.canonicalize()?;
    let fds = open_fds(pid)?;
    // Where the memory image expects a shared volume this server has none: an empty
    // read-only directory of the server's own.
    let placeholder = server.state_dir.canonicalize()?.join("empty");
    let runtimes = sandbox_tests::host::runtime_dir()
        .context("runtime dir")?
        .canonicalize()?;
    for (fd, target) in &fds {
        let expected = target == "/dev/null"
            || Path::new(target) == placeholder
            // The interpreter's own read-only directories (its standard library, data files).
            || Path::new(target).starts_with(&runtimes)
            || target.starts_with("pipe:")
            || target.starts_with("socket:")
            || target.starts_with("anon_inode:")
            || target.starts_with(&session_dir.to_string_lossy().to_string())
            || target.ends_with(".cwasm")
            || target.ends_with("/data")
            || target == "/proc"
            || *target == format!("/proc/{pid}")
            || target.starts_with(&format!("/proc/{pid}/"));
        assert!(expected, "unexpected descriptor {fd} -> {target}\n{fds:#?}");
    }
    assert!(fds.len() < 32, "{fds:#?}");
    server.stop().await?;
    Ok(())
}

fn open_fds(pid: u32) -> Result<Vec<(String, String)>> {
    let mut fds = Vec::new();
    for entry in std::fs::read_dir(format!("/proc/{pid}/fd"))? {
        let entry = entry?;
        let target = std::fs::read_link(entry.path())
            .map(|t| t.to_string_lossy().into_owned())
            .unwrap_or_default();
        fds.push((entry.file_name().to_string_lossy().into_owned(), target));
    }
    Ok(fds)
}

/// The `.cwasm` of `language` in the cache the server uses.
fn cached_module(language: &str) -> Result<PathBuf> {
    let data = sandbox_tests::host::data_dir().context("runtimes/data")?;
    let cache = data.parent().unwrap_or(Path::new("/")).join("cache");
    for entry in std::fs::read_dir(&cache)? {
        let path = entry?.path();
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        if name.starts_with(&format!("{language}-")) && name.ends_with(".cwasm") {
            return Ok(path);
        }
    }
    bail!("no {language} module in {}", cache.display())
}

/// Whether this process holds CAP_SYS_RESOURCE (bit 24 of CapEff).
fn has_cap_sys_resource() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .is_some_and(|caps| caps & (1 << 24) != 0)
}

fn is_root() -> bool {
    sandbox_tests::host::is_root()
}
