//! Which layers of the worker's own jail (seccomp, Landlock, network namespace, RLIMIT_NPROC,
//! closed descriptors; applied inside the worker by `sandbox-worker`'s `jail` module) every
//! worker gets: what this host supports (`sandbox-worker jail-check`, run once at start-up),
//! what the operator requires (`SANDBOX_REQUIRE`, fail closed) or turns off
//! (`SANDBOX_JAIL_DISABLE`), the refusal when a required layer is missing, and the `jail` part of
//! `list_runtimes` health. The settings themselves are read with all others (`config`).
//!
//! Test-only: `SANDBOX_WORKER_ENTRY=jail-probe` starts every worker as `sandbox-worker
//! jail-probe`, which attacks its own jail and reports instead of serving; only then does the
//! worker get `SANDBOX_PROBE_TARGETS`.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sandbox_protocol::{JailReport, Layer, LayerSet, LayerState};
use serde_json::{Value, json};

/// The setting that turns layers off, named in what clients and operators are told.
pub const DISABLE_VAR: &str = "SANDBOX_JAIL_DISABLE";
/// Test-only: the variable a probe reads its targets from (the worker's name for it, and the
/// supervisor's setting of the same name).
pub const PROBE_TARGETS_VAR: &str = "SANDBOX_PROBE_TARGETS";

/// How long `jail-check` may take; it normally answers in a few milliseconds.
const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// The `sandbox-worker` subcommand every worker runs (`SANDBOX_WORKER_ENTRY`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WorkerEntry {
    /// Serve a session (always, outside the tests).
    Serve,
    /// Tests only: attack the jail and report (see the worker's `probe` module).
    JailProbe,
}

impl WorkerEntry {
    /// Its name on the worker's command line.
    pub fn subcommand(self) -> &'static str {
        match self {
            WorkerEntry::Serve => "serve",
            WorkerEntry::JailProbe => "jail-probe",
        }
    }
}

/// The jail configuration of this server.
#[derive(Debug, Clone)]
pub struct JailPolicy {
    /// What `jail-check` found this host supports.
    pub detected: JailReport,
    pub required: LayerSet,
    pub disabled: LayerSet,
    pub entry: WorkerEntry,
    /// Test-only: what a [`WorkerEntry::JailProbe`] worker attacks (JSON); never given to a
    /// serving worker.
    pub probe_targets: Option<OsString>,
    /// What the last started worker said it applied.
    last: Arc<Mutex<Option<JailReport>>>,
}

/// A required layer this server cannot give a worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingLayer {
    pub layer: Layer,
    pub why: String,
}

impl JailPolicy {
    /// A policy for a host where `jail-check` found `detected`.
    pub fn new(
        detected: JailReport,
        required: LayerSet,
        disabled: LayerSet,
        entry: WorkerEntry,
    ) -> Self {
        Self {
            detected,
            required,
            disabled,
            entry,
            probe_targets: None,
            last: Arc::default(),
        }
    }

    /// The layers every worker is asked for: what the host supports, minus what is turned off.
    pub fn requested(&self) -> LayerSet {
        self.detected.enforced().without(self.disabled)
    }

    /// The first required layer a worker could not get.
    ///
    /// # Errors
    /// That layer, and why (no host path in it: it goes to clients).
    pub fn check_required(&self) -> Result<(), MissingLayer> {
        for layer in self.required.iter() {
            if self.disabled.contains(layer) {
                return Err(MissingLayer {
                    layer,
                    why: format!("it is turned off ({DISABLE_VAR})"),
                });
            }
            match self.detected.state(layer) {
                LayerState::Enforced(_) => {}
                LayerState::Unavailable(why) => {
                    return Err(MissingLayer {
                        layer,
                        why: format!("this host does not support it ({why})"),
                    });
                }
                LayerState::NotRequested => {
                    return Err(MissingLayer {
                        layer,
                        why: "the start-up check did not test it".into(),
                    });
                }
            }
        }
        Ok(())
    }

    /// `--jail LAYERS --require LAYERS` for a worker's command line.
    pub fn worker_args(&self) -> [String; 4] {
        [
            "--jail".into(),
            self.requested().to_string(),
            "--require".into(),
            self.required.to_string(),
        ]
    }

    /// Remembers what a worker that just started applied.
    pub fn record(&self, report: &JailReport) {
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(report.clone());
    }

    /// The `jail` object of `list_runtimes` health: per layer what the last started worker
    /// applied (or, before any worker, what the start-up check found), and the policy.
    pub fn health(&self) -> Value {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let (report, source, verb) = match &last {
            Some(report) => (report, "the last started worker", "enforced"),
            None => (
                &self.detected,
                "the start-up check (no worker started yet)",
                "available",
            ),
        };
        let text = |layer: Layer| -> String {
            match report.state(layer) {
                LayerState::Enforced(how) if how.is_empty() => verb.to_owned(),
                LayerState::Enforced(how) => format!("{verb} ({how})"),
                LayerState::NotRequested if self.disabled.contains(layer) => {
                    format!("turned off ({DISABLE_VAR})")
                }
                // Not asked for because the host lacks it: say why.
                LayerState::NotRequested => self.detected.state(layer).describe(),
                other => other.describe(),
            }
        };
        let network = if report.netns.is_enforced() {
            format!("{verb}: own network namespace (no interface but a down loopback)")
        } else if report.seccomp.is_enforced() {
            format!(
                "host network namespace ({}); seccomp denies creating sockets",
                text(Layer::Netns)
            )
        } else {
            format!("not isolated ({})", text(Layer::Netns))
        };
        let nproc = match report.nproc {
            LayerState::Enforced(_) => json!(report.nproc_limit),
            _ => json!(text(Layer::Nproc)),
        };
        let names = |set: LayerSet| -> Vec<&'static str> { set.iter().map(Layer::name).collect() };
        json!({
            "seccomp": text(Layer::Seccomp),
            "landlock": text(Layer::Landlock),
            "network": network,
            "nproc": nproc,
            "inherited_fds": match (&report.fds, last.is_some()) {
                (LayerState::Enforced(_), true) => "closed".to_owned(),
                _ => text(Layer::Fds),
            },
            "required": names(self.required),
            "disabled": names(self.disabled),
            "source": source,
        })
    }

    /// For the `isolation` text: the layers workers are asked for.
    pub fn summary(&self) -> String {
        let requested = self.requested();
        let parts: Vec<&str> = requested
            .iter()
            .map(|layer| match layer {
                Layer::Seccomp => "seccomp allow-list",
                Layer::Landlock => "Landlock (own session files only)",
                Layer::Netns => "own network namespace",
                Layer::Nproc => "RLIMIT_NPROC",
                Layer::Fds => "no inherited descriptors",
            })
            .collect();
        if parts.is_empty() {
            "no jail layers (none available or all turned off)".into()
        } else {
            format!("jail: {} (see jail)", parts.join(", "))
        }
    }
}

/// Runs `sandbox-worker jail-check` (with `log_filter` as its `RUST_LOG`) and reads its report.
/// A check that cannot run marks every layer unavailable, with the reason.
pub fn detect(worker_bin: &Path, log_filter: Option<&str>) -> JailReport {
    match run_check(worker_bin, log_filter) {
        Ok(report) => report,
        Err(why) => {
            tracing::warn!(error = %why, "jail check failed: workers get no jail layers");
            let mut report = JailReport::default();
            for layer in Layer::ALL {
                *report.state_mut(layer) = LayerState::Unavailable(why.clone());
            }
            report
        }
    }
}

fn run_check(worker_bin: &Path, log_filter: Option<&str>) -> Result<JailReport, String> {
    let mut child = Command::new(worker_bin)
        .arg("jail-check")
        .env_clear()
        .envs(log_filter.map(|v| ("RUST_LOG", v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run the jail check: {e}"))?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < CHECK_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Ok(None) | Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("the jail check did not finish".into());
            }
        }
    };
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        use std::io::Read;
        let _ = stdout.read_to_string(&mut out);
    }
    if !status.success() {
        return Err(format!("the jail check failed ({status})"));
    }
    serde_json::from_str(out.trim()).map_err(|e| format!("the jail check printed no report: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detected() -> JailReport {
        JailReport {
            seccomp: LayerState::Enforced(String::new()),
            landlock: LayerState::Enforced("ABI 7".into()),
            netns: LayerState::Unavailable("no user namespaces".into()),
            nproc: LayerState::Unavailable("uid 0".into()),
            fds: LayerState::Enforced("closed".into()),
            nproc_limit: 0,
        }
    }

    #[test]
    fn workers_get_what_the_host_has_minus_what_is_off() {
        let set = |s| LayerSet::parse(s).unwrap();
        let policy = JailPolicy::new(
            detected(),
            set("seccomp"),
            set("landlock"),
            WorkerEntry::Serve,
        );
        assert_eq!(policy.requested(), set("seccomp,fds"));
        assert_eq!(
            policy.worker_args(),
            ["--jail", "fds,seccomp", "--require", "seccomp"].map(String::from)
        );
        assert_eq!(policy.check_required(), Ok(()));
    }

    #[test]
    fn a_required_layer_that_is_off_or_missing_refuses() {
        let set = |s| LayerSet::parse(s).unwrap();
        let off = JailPolicy::new(
            detected(),
            set("landlock"),
            set("landlock"),
            WorkerEntry::Serve,
        );
        let missing = off.check_required().unwrap_err();
        assert_eq!(missing.layer, Layer::Landlock);
        assert!(missing.why.contains(DISABLE_VAR), "{}", missing.why);
        let unsupported = JailPolicy::new(
            detected(),
            set("netns"),
            LayerSet::EMPTY,
            WorkerEntry::Serve,
        );
        let missing = unsupported.check_required().unwrap_err();
        assert_eq!(missing.layer, Layer::Netns);
        assert!(
            missing.why.contains("no user namespaces"),
            "{}",
            missing.why
        );
    }

    #[test]
    fn health_shows_the_check_then_the_last_worker() {
        let policy = JailPolicy::new(
            detected(),
            LayerSet::parse("seccomp").unwrap(),
            LayerSet::EMPTY,
            WorkerEntry::Serve,
        );
        let before = policy.health();
        assert_eq!(before["landlock"], "available (ABI 7)");
        assert!(before["source"].as_str().unwrap().contains("start-up"));
        assert!(before["network"].as_str().unwrap().contains("seccomp"));
        let mut applied = detected();
        applied.netns = LayerState::Enforced("own network namespace".into());
        applied.nproc = LayerState::Enforced("34 threads".into());
        applied.nproc_limit = 34;
        policy.record(&applied);
        let after = policy.health();
        assert_eq!(after["seccomp"], "enforced");
        assert_eq!(after["landlock"], "enforced (ABI 7)");
        assert_eq!(after["nproc"], 34);
        assert_eq!(after["inherited_fds"], "closed");
        assert_eq!(after["required"], json!(["seccomp"]));
        assert!(
            after["network"]
                .as_str()
                .unwrap()
                .contains("own network namespace")
        );
    }

    #[test]
    fn a_check_that_cannot_run_leaves_every_layer_unavailable() {
        let report = detect(Path::new("/nonexistent/sandbox-worker"), None);
        assert!(report.enforced().is_empty());
        assert!(matches!(report.seccomp, LayerState::Unavailable(_)));
    }
}
