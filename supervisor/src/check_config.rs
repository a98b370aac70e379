//! `sandbox-mcp check-config`: the settings resolved as start-up resolves them (the worker
//! binary and interpreters next to the executable, the state directory in `$TMPDIR`, …) and
//! checked without starting or creating anything: every problem at once, each with a concrete
//! fix. Start-up ([`crate::config::SupervisorConfig::from_settings`]) stops at its first
//! problem; this is for the operator before that. It sits above the transports, whose settings
//! (the HTTP tokens) it checks too.

use std::net::TcpListener;
use std::path::{Path, PathBuf};

use clap::CommandFactory;
use rustix::fs::Access;
use sandbox_protocol::{Layer, LayerState, PYTHON_DIR, Runtime};

mod dirs;

use crate::config::{ConfigError, Provenance, Settings, absolute, find_runtime_dir};
use crate::descriptors::{self, Demand};
use crate::http::{MetricsAccess, Tokens};
use crate::jail_layers::{self, JailPolicy};

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Checked and fine; said so the operator sees what was resolved.
    Ok,
    /// The server starts, but something will not work as the operator probably expects.
    Warning,
    /// The server would not start, or could not run any code.
    Error,
}

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    Worker,
    Interpreters,
    CacheDir,
    StateDir,
    DataDir,
    SharedDir,
    Packages,
    Http,
    /// The open-file limit against what the caps may need.
    OpenFiles,
    Jail,
    Logging,
}

/// One thing checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub subject: Subject,
    pub severity: Severity,
    pub message: String,
    /// What to do about it (none for [`Severity::Ok`]).
    pub fix: Option<String>,
}

/// Everything `check-config` found.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub findings: Vec<Finding>,
}

impl Report {
    /// Checks `settings` as the running executable would start with them.
    pub fn check(settings: &Settings) -> Self {
        match std::env::current_exe() {
            Ok(exe) => Self::check_from(settings, exe.parent().unwrap_or(Path::new("/"))),
            Err(e) => {
                let mut report = Report::default();
                let message = ConfigError::CurrentExe(e).to_string();
                report.error(
                    Subject::Worker,
                    message,
                    "run sandbox-mcp from a path that exists",
                );
                report
            }
        }
    }

    /// Checks `settings` for an executable in `exe_dir` (where the defaults are looked for).
    pub fn check_from(settings: &Settings, exe_dir: &Path) -> Self {
        Self::check_with(settings, exe_dir, descriptors::limit())
    }

    /// Checks `settings` for an executable in `exe_dir`, with the open-file limit (soft,
    /// hard) `open_files` (`None`: unknown).
    pub fn check_with(settings: &Settings, exe_dir: &Path, open_files: Option<(u64, u64)>) -> Self {
        let mut report = Report::default();
        let worker = report.worker(settings, exe_dir);
        let runtime_dir = report.interpreters(settings, exe_dir);
        report.cache_dir(settings, runtime_dir.as_deref());
        report.state_dir(settings);
        report.data_dir(settings, runtime_dir.as_deref());
        report.shared_dir(settings);
        report.package_sources(settings);
        report.http(settings);
        report.open_files(settings, open_files);
        report.jail(settings, worker.as_deref());
        report.logging(settings);
        report
    }

    /// Whether the server would start: no [`Severity::Error`].
    pub fn would_start(&self) -> bool {
        self.findings.iter().all(|f| f.severity != Severity::Error)
    }

    /// The findings about `subject`.
    pub fn about(&self, subject: Subject) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.subject == subject)
    }

    /// The whole report for the operator: the file, the effective settings, the findings and
    /// the verdict.
    pub fn render(&self, provenance: &Provenance) -> String {
        let file = match &provenance.file {
            Some(path) => path.display().to_string(),
            None => "none (give one with --config FILE or SANDBOX_CONFIG)".into(),
        };
        let mut text = format!(
            "configuration file: {file}\n\neffective settings (key, value, source):\n{}\nchecks:\n",
            provenance.render()
        );
        for finding in &self.findings {
            let label = match finding.severity {
                Severity::Ok => "ok",
                Severity::Warning => "warning",
                Severity::Error => "error",
            };
            text.push_str(&format!("  {label:8} {}\n", finding.message));
            if let Some(fix) = &finding.fix {
                text.push_str(&format!("           fix: {fix}\n"));
            }
        }
        let count = |severity| {
            self.findings
                .iter()
                .filter(|f| f.severity == severity)
                .count()
        };
        let (errors, warnings) = (count(Severity::Error), count(Severity::Warning));
        let verdict = if errors > 0 {
            "sandbox-mcp would not start (or could run no code) with this configuration"
        } else {
            "sandbox-mcp would start with this configuration"
        };
        let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        text.push_str(&format!(
            "\n{}, {}: {verdict}\n",
            plural(errors, "error"),
            plural(warnings, "warning")
        ));
        text
    }

    fn push(&mut self, subject: Subject, severity: Severity, message: String, fix: Option<String>) {
        self.findings.push(Finding {
            subject,
            severity,
            message,
            fix,
        });
    }

    fn ok(&mut self, subject: Subject, message: String) {
        self.push(subject, Severity::Ok, message, None);
    }

    fn warn(&mut self, subject: Subject, message: String, fix: impl Into<String>) {
        self.push(subject, Severity::Warning, message, Some(fix.into()));
    }

    fn error(&mut self, subject: Subject, message: String, fix: impl Into<String>) {
        self.push(subject, Severity::Error, message, Some(fix.into()));
    }

    /// The worker binary, if it is there and executable.
    fn worker(&mut self, settings: &Settings, exe_dir: &Path) -> Option<PathBuf> {
        let given = settings.paths.worker_bin.clone();
        let bin = absolute(given.unwrap_or_else(|| exe_dir.join("sandbox-worker")));
        let fix = format!(
            "build it (cargo build --release -p sandbox-worker) or set {}",
            setting("worker_bin")
        );
        if !bin.is_file() {
            self.error(
                Subject::Worker,
                format!("no worker binary at {}", bin.display()),
                fix,
            );
            return None;
        }
        if rustix::fs::access(&bin, Access::EXEC_OK).is_err() {
            let message = format!("the worker binary {} is not executable", bin.display());
            self.error(
                Subject::Worker,
                message,
                format!("chmod 755 {}", bin.display()),
            );
            return None;
        }
        self.ok(Subject::Worker, format!("worker binary {}", bin.display()));
        Some(bin)
    }

    /// The runtime directory, if it holds the Python interpreter start-up requires; the other
    /// runtimes are optional.
    fn interpreters(&mut self, settings: &Settings, exe_dir: &Path) -> Option<PathBuf> {
        let dir = match find_runtime_dir(settings.paths.runtime_dir.as_deref(), exe_dir) {
            Ok(dir) => absolute(dir),
            Err(ConfigError::RuntimesMissing { file, looked }) => {
                let message = format!("no runtime directory holds {file} (looked in {looked})");
                let fix = format!(
                    "run runtimes/prepare.sh (it fills target/runtimes), or set {}",
                    setting("runtime_dir")
                );
                self.error(Subject::Interpreters, message, fix);
                return None;
            }
            Err(other) => {
                self.error(Subject::Interpreters, other.to_string(), "see the message");
                return None;
            }
        };
        let (present, missing): (Vec<Runtime>, Vec<Runtime>) = Runtime::ALL
            .into_iter()
            .partition(|r| dir.join(r.wasm_file_name()).is_file());
        let names: Vec<&str> = present.iter().map(|r| r.as_str()).collect();
        let message = format!("interpreters in {}: {}", dir.display(), names.join(", "));
        self.ok(Subject::Interpreters, message);
        for runtime in missing {
            let message = format!(
                "runtime {runtime} is not installed ({} missing): list_runtimes reports it \
                 unavailable",
                runtime.wasm_file_name()
            );
            self.warn(
                Subject::Interpreters,
                message,
                "run runtimes/prepare.sh to add it",
            );
        }
        if present.contains(&Runtime::Python) {
            for (_, host) in Runtime::Python.support_mounts() {
                if !dir.join(host).is_dir() {
                    let message = format!(
                        "the Python runtime lacks {host} in {}: its imports will fail",
                        dir.display()
                    );
                    let fix = format!("run runtimes/prepare.sh again (it unpacks {PYTHON_DIR})");
                    self.warn(Subject::Interpreters, message, fix);
                }
            }
        }
        Some(dir)
    }

    /// The tokens, the address and whether it can be bound, as `--http` needs them.
    fn http(&mut self, settings: &Settings) {
        let transport = &settings.transport;
        let Some(addr) = transport.http else {
            if transport.http_token.is_some()
                || transport.http_tokens_file.is_some()
                || transport.metrics_token.is_some()
            {
                let message =
                    "http_token, http_tokens_file and metrics_token are ignored on stdio".into();
                self.warn(
                    Subject::Http,
                    message,
                    format!("set {} to serve over HTTP, or drop them", setting("http")),
                );
            }
            return self.ok(
                Subject::Http,
                "serving on stdin/stdout (no http address)".into(),
            );
        };
        let tokens = Tokens::load(
            transport.http_token.clone(),
            transport.http_tokens_file.as_deref(),
        )
        .map(|tokens| tokens.with_metrics(transport.metrics_token.clone()));
        match tokens {
            Err(e) => {
                let fix = "one principal:token line each, tokens of 16+ characters, # comments";
                self.error(Subject::Http, e.to_string(), fix);
            }
            Ok(tokens) if !tokens.any() && !addr.ip().is_loopback() => {
                let message = crate::http::HttpError::Unprotected(addr).to_string();
                let fix = format!(
                    "set {} or http_tokens_file, or listen on 127.0.0.1",
                    setting("http_token")
                );
                self.error(Subject::Http, message, fix);
            }
            Ok(tokens) => {
                let who = if tokens.any() {
                    "clients with a token"
                } else {
                    "clients on this host, no token"
                };
                let metrics = match MetricsAccess::of(addr, &tokens) {
                    MetricsAccess::Open => "open on loopback",
                    MetricsAccess::Token if tokens.metrics.is_some() => "with the metrics token",
                    MetricsAccess::Token => "with an HTTP token (no metrics token)",
                };
                let limits = crate::http::connections::ConnectionLimits::from_settings(transport);
                self.ok(
                    Subject::Http,
                    format!(
                        "HTTP at http://{addr}/mcp for {who}; at most {} connections ({} per \
                         address), header timeout {} s, idle timeout {} s; /metrics {metrics}",
                        limits.max,
                        limits.per_peer.min(limits.max),
                        limits.header_timeout.as_secs(),
                        limits.idle_timeout.as_secs()
                    ),
                );
            }
        }
        if let Err(e) = TcpListener::bind(addr) {
            let message = format!("cannot listen on {addr}: {e}");
            let fix = format!(
                "stop what listens there (ss -ltnp 'sport = :{}') or choose another port in {}",
                addr.port(),
                setting("http")
            );
            self.error(Subject::Http, message, fix);
        }
    }

    /// Whether the open-file limit holds what the caps may need at once: every HTTP connection,
    /// every worker's descriptors in the server, and the server's own (`descriptors`). The
    /// server raises its soft limit to the hard one at start, so the hard limit is the one that
    /// counts.
    fn open_files(&mut self, settings: &Settings, limit: Option<(u64, u64)>) {
        let admission = &settings.admission;
        let connections = settings.transport.http.map(|_| {
            usize::try_from(settings.transport.http_max_connections).unwrap_or(usize::MAX)
        });
        let demand = Demand::new(
            connections,
            usize::try_from(admission.max_sessions).unwrap_or(usize::MAX),
            admission.worker_pool.iter().map(|(_, n)| n).sum(),
        );
        let Some((soft, hard)) = limit else {
            let message = "cannot read the open-file limit (RLIMIT_NOFILE)".into();
            return self.warn(Subject::OpenFiles, message, "check ulimit -n");
        };
        let needed = demand.total();
        if hard < needed {
            let message = format!(
                "the open-file limit (RLIMIT_NOFILE) is {hard}, below what the caps may need at \
                 once, {}: past it, workers cannot start and connections fail",
                demand.describe()
            );
            let fix = format!(
                "raise the limit to at least {needed} (systemd: LimitNOFILE={needed}; a shell: \
                 ulimit -n {needed}; a container: --ulimit nofile={needed}), or lower {} or {}",
                setting("http_max_connections"),
                setting("max_sessions")
            );
            return self.warn(Subject::OpenFiles, message, fix);
        }
        let raised = if soft < needed {
            format!(" (the server raises the soft limit {soft} to it)")
        } else {
            String::new()
        };
        let message = format!(
            "open-file limit {hard}{raised} holds what the caps may need, {}",
            demand.describe()
        );
        self.ok(Subject::OpenFiles, message);
    }

    /// Runs the worker's `jail-check` as start-up does, and says which required layers no
    /// worker could get (each would make every worker refuse to start).
    fn jail(&mut self, settings: &Settings, worker: Option<&Path>) {
        let (jail, entry) = (&settings.jail, settings.testing.worker_entry);
        let (required, disabled) = (
            jail.require.unwrap_or_default(),
            jail.jail_disable.unwrap_or_default(),
        );
        let Some(worker) = worker else {
            if !required.is_empty() {
                let message = format!(
                    "the required jail layers ({required}) cannot be checked without the worker \
                     binary"
                );
                self.error(Subject::Jail, message, "fix the worker binary first");
            }
            return;
        };
        let detected = jail_layers::detect(worker, settings.transport.log.as_deref());
        for layer in required.iter() {
            let one = JailPolicy::new(
                detected.clone(),
                std::iter::once(layer).collect(),
                disabled,
                entry,
            );
            if let Err(missing) = one.check_required() {
                let message = format!(
                    "required jail layer {} is unavailable: {}",
                    layer.name(),
                    missing.why
                );
                let fix = if disabled.contains(layer) {
                    format!("remove {} from {}", layer.name(), setting("jail_disable"))
                } else {
                    format!(
                        "remove {} from {}, or run on a host that supports it",
                        layer.name(),
                        setting("require")
                    )
                };
                self.error(Subject::Jail, message, fix);
            }
        }
        let policy = JailPolicy::new(detected, required, disabled, entry);
        let layers: Vec<String> = Layer::ALL
            .into_iter()
            .map(|layer| match policy.detected.state(layer) {
                _ if disabled.contains(layer) => format!("{} turned off", layer.name()),
                LayerState::Enforced(_) => layer.name().to_owned(),
                state => format!("{} {}", layer.name(), state.describe()),
            })
            .collect();
        self.ok(
            Subject::Jail,
            format!("worker jail layers: {}", layers.join("; ")),
        );
    }

    fn logging(&mut self, settings: &Settings) {
        let Some(filter) = &settings.transport.log else {
            return;
        };
        if let Err(e) = tracing_subscriber::EnvFilter::try_new(filter) {
            let message = format!(
                "the log filter {filter:?} is invalid ({e}): the server logs at info instead"
            );
            self.warn(Subject::Logging, message, format!("fix {}", setting("log")));
        }
    }
}

/// How an operator sets the option with file key `key`: the key, the flag and the variable.
fn setting(key: &str) -> String {
    let command = Settings::command();
    let arg = command.get_arguments().find(|arg| {
        arg.get_long()
            .is_some_and(|long| long.replace('-', "_") == key)
    });
    match arg {
        Some(arg) => {
            let env = arg.get_env().map(|e| format!(", {}", e.to_string_lossy()));
            format!(
                "{key} (--{}{})",
                arg.get_long().unwrap_or(key),
                env.unwrap_or_default()
            )
        }
        None => key.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    /// A cargo-like layout in a temporary directory: `release/` (the executable's directory,
    /// with a worker whose jail check fails, as on a host without any layer) and `runtimes/`
    /// with the interpreters named.
    fn layout(runtimes: &[Runtime]) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("release")).unwrap();
        let worker = root.path().join("release/sandbox-worker");
        std::fs::write(&worker, "#!/bin/sh\nexit 1\n").unwrap();
        std::fs::set_permissions(&worker, std::fs::Permissions::from_mode(0o755)).unwrap();
        for runtime in runtimes {
            let wasm = root.path().join("runtimes").join(runtime.wasm_file_name());
            std::fs::create_dir_all(wasm.parent().unwrap()).unwrap();
            std::fs::write(wasm, b"").unwrap();
            for (_, dir) in runtime.support_mounts() {
                std::fs::create_dir_all(root.path().join("runtimes").join(dir)).unwrap();
            }
        }
        root
    }

    /// The report on `layout` with `args` (the state directory inside it unless given).
    fn check(layout: &tempfile::TempDir, args: &[&str]) -> Report {
        let state = layout.path().join("state");
        let mut line = vec!["sandbox-mcp", "--state-dir", state.to_str().unwrap()];
        line.extend(args);
        let settings = Settings::try_parse_args(line).unwrap();
        // A limit that holds every configuration here (the open-file tests give their own).
        Report::check_with(
            &settings,
            &layout.path().join("release"),
            Some((1 << 20, 1 << 20)),
        )
    }

    fn severities(report: &Report, subject: Subject) -> Vec<Severity> {
        report.about(subject).map(|f| f.severity).collect()
    }

    #[test]
    fn a_complete_layout_would_start() {
        let root = layout(&Runtime::ALL);
        let report = check(&root, &[]);
        assert!(report.would_start(), "{report:#?}");
        assert!(
            report.findings.iter().all(|f| f.severity == Severity::Ok),
            "{report:#?}"
        );
        let text = report.render(&Provenance::default());
        assert!(
            text.contains("0 errors, 0 warnings: sandbox-mcp would start"),
            "{text}"
        );
        assert!(text.contains("worker jail layers: "), "{text}");
    }

    #[test]
    fn a_missing_worker_and_interpreters_are_errors_with_fixes() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("release")).unwrap();
        let report = check(&root, &["--require", "seccomp"]);
        assert!(!report.would_start());
        let worker = report.about(Subject::Worker).next().unwrap();
        assert_eq!(worker.severity, Severity::Error);
        assert!(worker.message.contains("no worker binary at"), "{worker:?}");
        let fix = worker.fix.as_deref().unwrap();
        assert!(fix.contains("--worker-bin, SANDBOX_WORKER_BIN"), "{fix}");
        let runtimes = report.about(Subject::Interpreters).next().unwrap();
        assert_eq!(runtimes.severity, Severity::Error);
        assert!(runtimes.message.contains(Runtime::Python.wasm_file_name()));
        assert!(
            runtimes
                .fix
                .as_deref()
                .unwrap()
                .contains("runtimes/prepare.sh")
        );
        assert_eq!(severities(&report, Subject::Jail), [Severity::Error]);
        let text = report.render(&Provenance::default());
        assert!(
            text.contains("3 errors, 0 warnings: sandbox-mcp would not start"),
            "{text}"
        );
    }

    #[test]
    fn a_worker_that_is_not_executable_is_an_error() {
        let root = layout(&[Runtime::Python]);
        let worker = root.path().join("release/sandbox-worker");
        std::fs::set_permissions(&worker, std::fs::Permissions::from_mode(0o644)).unwrap();
        let report = check(&root, &[]);
        let finding = report.about(Subject::Worker).next().unwrap();
        assert!(finding.message.contains("not executable"), "{finding:?}");
        assert!(!report.would_start());
    }

    #[test]
    fn a_missing_javascript_runtime_is_a_warning() {
        let report = check(&layout(&[Runtime::Python]), &[]);
        assert!(report.would_start(), "{report:#?}");
        let warnings: Vec<&str> = report
            .about(Subject::Interpreters)
            .filter(|f| f.severity == Severity::Warning)
            .map(|f| f.message.as_str())
            .collect();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("javascript"));
    }

    #[test]
    fn every_required_layer_the_host_lacks_is_named() {
        let report = check(&layout(&Runtime::ALL), &["--require", "seccomp,netns"]);
        let jail: Vec<&Finding> = report.about(Subject::Jail).collect();
        assert_eq!(
            jail.len(),
            3,
            "two missing layers and the summary: {jail:#?}"
        );
        for layer in ["seccomp", "netns"] {
            let wanted = format!("required jail layer {layer} is unavailable: this host");
            assert!(
                jail.iter().any(|f| f.message.contains(&wanted)),
                "{jail:#?}"
            );
        }
        assert!(jail[0].fix.as_deref().unwrap().contains("--require"));
        let disabled = check(
            &layout(&Runtime::ALL),
            &["--require", "fds", "--jail-disable", "fds"],
        );
        let fix = disabled
            .about(Subject::Jail)
            .next()
            .unwrap()
            .fix
            .clone()
            .unwrap();
        assert!(fix.contains("--jail-disable"), "{fix}");
    }

    #[test]
    fn http_without_a_token_beyond_loopback_or_on_a_busy_port_is_an_error() {
        let root = layout(&Runtime::ALL);
        let open = check(&root, &["--http", "0.0.0.0:0"]);
        let finding = open.about(Subject::Http).next().unwrap();
        assert_eq!(finding.severity, Severity::Error);
        assert!(finding.message.contains("refusing"), "{finding:?}");
        let token = ["--http", "0.0.0.0:0", "--http-token", "a-long-enough-token"];
        assert_eq!(
            severities(&check(&root, &token), Subject::Http),
            [Severity::Ok]
        );
        let busy = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = busy.local_addr().unwrap().to_string();
        let report = check(&root, &["--http", &addr]);
        let finding = report.about(Subject::Http).nth(1).unwrap();
        assert!(
            finding
                .message
                .contains(&format!("cannot listen on {addr}")),
            "{finding:?}"
        );
        assert!(!report.would_start());
        let tokens = root.path().join("tokens");
        std::fs::write(&tokens, "alice:short\n").unwrap();
        let bad = check(
            &root,
            &[
                "--http",
                "127.0.0.1:0",
                "--http-tokens-file",
                tokens.to_str().unwrap(),
            ],
        );
        let finding = bad.about(Subject::Http).next().unwrap();
        assert!(finding.message.contains("line 1"), "{finding:?}");
        let stray = check(&root, &["--http-token", "a-long-enough-token"]);
        assert_eq!(
            severities(&stray, Subject::Http),
            [Severity::Warning, Severity::Ok]
        );
    }

    #[test]
    fn a_malformed_log_filter_is_a_warning() {
        let report = check(&layout(&Runtime::ALL), &["--log", "info,[unclosed"]);
        assert_eq!(severities(&report, Subject::Logging), [Severity::Warning]);
        assert!(report.would_start());
    }

    #[test]
    fn fixes_name_the_key_the_flag_and_the_variable() {
        assert_eq!(
            setting("state_dir"),
            "state_dir (--state-dir, SANDBOX_STATE_DIR)"
        );
        assert_eq!(
            setting("allow_pypi"),
            "allow_pypi (--allow-pypi, SANDBOX_ALLOW_PYPI)"
        );
    }

    #[test]
    fn an_open_file_limit_below_what_the_caps_need_is_a_warning_with_the_sum() {
        let root = layout(&Runtime::ALL);
        let state = root.path().join("state");
        let settings = |args: &[&str]| {
            let mut line = vec!["sandbox-mcp", "--state-dir", state.to_str().unwrap()];
            line.extend(args);
            Settings::try_parse_args(line).unwrap()
        };
        let exe_dir = root.path().join("release");
        let http = settings(&["--http", "127.0.0.1:0", "--max-sessions", "100"]);
        let pooled = 4;
        let needed = Demand::new(Some(1024), 100, pooled).total();
        // systemd's default: soft 1024, hard 524288, which the server raises to.
        let report = Report::check_with(&http, &exe_dir, Some((1024, 524_288)));
        let finding = report.about(Subject::OpenFiles).next().unwrap();
        assert_eq!(finding.severity, Severity::Ok, "{finding:?}");
        assert!(
            finding.message.contains("raises the soft limit 1024"),
            "{finding:?}"
        );
        // Soft and hard at 1024: 1,024 connections alone would take them all.
        let report = Report::check_with(&http, &exe_dir, Some((1024, 1024)));
        let finding = report.about(Subject::OpenFiles).next().unwrap();
        assert_eq!(finding.severity, Severity::Warning, "{finding:?}");
        assert!(
            finding.message.contains(&format!(
                "is 1024, below what the caps may need at once, {needed} descriptors (1026 HTTP"
            )),
            "{finding:?}"
        );
        let fix = finding.fix.as_deref().unwrap();
        assert!(fix.contains(&format!("LimitNOFILE={needed}")), "{fix}");
        assert!(fix.contains("--http-max-connections") && fix.contains("--max-sessions"));
        assert!(report.would_start(), "a warning, not an error");
        // Caps that fit: no warning; on stdio connections do not count.
        let fitting = settings(&[
            "--http",
            "127.0.0.1:0",
            "--max-sessions",
            "16",
            "--http-max-connections",
            "256",
        ]);
        let report = Report::check_with(&fitting, &exe_dir, Some((1024, 1024)));
        assert_eq!(severities(&report, Subject::OpenFiles), [Severity::Ok]);
        let stdio = settings(&["--max-sessions", "100"]);
        let report = Report::check_with(&stdio, &exe_dir, Some((1024, 1024)));
        assert_eq!(severities(&report, Subject::OpenFiles), [Severity::Ok]);
    }

    #[test]
    fn the_http_finding_states_the_connection_caps_and_who_reads_metrics() {
        let root = layout(&Runtime::ALL);
        let open = check(
            &root,
            &["--http", "127.0.0.1:0", "--http-max-connections", "64"],
        );
        let finding = open.about(Subject::Http).next().unwrap();
        assert!(
            finding
                .message
                .contains("at most 64 connections (64 per address)"),
            "{finding:?}"
        );
        assert!(
            finding.message.contains("/metrics open on loopback"),
            "{finding:?}"
        );
        let token = ["--http", "127.0.0.1:0", "--metrics-token", "scrape-me"];
        let finding = check(&root, &token)
            .about(Subject::Http)
            .next()
            .cloned()
            .unwrap();
        assert!(
            finding.message.contains("/metrics with the metrics token"),
            "{finding:?}"
        );
        let stray = check(&root, &["--metrics-token", "scrape-me"]);
        assert_eq!(
            severities(&stray, Subject::Http),
            [Severity::Warning, Severity::Ok]
        );
    }
}
