//! What the server counts for Prometheus (`GET /metrics` on the HTTP transport, in the
//! OpenMetrics text format written by `prometheus-client`).
//!
//! Events are counted where they happen (an execution's outcome, a worker killed or crashed, a
//! session reaped, a refusal) in the one process-wide set, [`global`]: like the process they
//! describe they need no owner, and the session code need not carry a handle for them. Levels
//! (sessions and workers by runtime, the pool, memory) are not kept up to date by each change,
//! which could drift; they are read from the session table at each scrape ([`Levels`]).
//!
//! Every label value comes from a closed set (runtimes, tools, error types, reasons): nothing a
//! client sends (session ids, code) becomes a label, so the series stay few and tell nothing
//! about any one client.

use std::sync::{LazyLock, Mutex};
use std::time::Instant;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};
use sandbox_protocol::{ErrorType, Runtime};

/// The content type of [`Metrics::encode`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The server's metrics.
pub fn global() -> &'static Metrics {
    static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);
    &METRICS
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ExecutionLabels {
    tool: &'static str,
    language: &'static str,
    runtime: &'static str,
    outcome: &'static str,
}

/// A runtime and its language (a query by language needs no mapping of runtimes).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RuntimeLabels {
    language: &'static str,
    runtime: &'static str,
}

impl RuntimeLabels {
    fn of(runtime: Runtime) -> Self {
        Self {
            language: runtime.language().as_str(),
            runtime: runtime.as_str(),
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    language: &'static str,
    runtime: &'static str,
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StartLabels {
    language: &'static str,
    runtime: &'static str,
    /// `pool`: a session adopted a pre-started worker; `spawn`: it started its own;
    /// `pooled`: a worker was started for the pool.
    how: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ShortageLabels {
    limit: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WorkerLabels {
    language: &'static str,
    runtime: &'static str,
    /// `session` or `pooled`.
    role: &'static str,
}

impl WorkerLabels {
    fn of(runtime: Runtime, role: &'static str) -> Self {
        Self {
            language: runtime.language().as_str(),
            runtime: runtime.as_str(),
            role,
        }
    }
}

/// Why a worker was killed (not a crash: the supervisor decided).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kill {
    /// It did not answer the interrupt at an execution's deadline.
    Timeout,
    /// It did not answer the interrupt of a cancel.
    Cancel,
    /// Its session was suspended (idle, or for memory): its state stays on disk.
    Suspended,
}

impl Kill {
    fn as_str(self) -> &'static str {
        match self {
            Kill::Timeout => "timeout",
            Kill::Cancel => "cancel",
            Kill::Suspended => "suspended",
        }
    }
}

/// When a worker died on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Crash {
    /// While running an execution.
    Execution,
    /// While idle between calls.
    Idle,
}

/// Which limit refused a new session or an execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The most sessions at once.
    Sessions,
    /// The memory budget.
    MemoryBudget,
    /// The host's available memory.
    HostMemory,
    /// A client's most sessions.
    ClientSessions,
    /// A client's most executions in flight.
    ClientExecutions,
}

impl Refusal {
    fn as_str(self) -> &'static str {
        match self {
            Refusal::Sessions => "sessions",
            Refusal::MemoryBudget => "memory_budget",
            Refusal::HostMemory => "host_memory",
            Refusal::ClientSessions => "client_sessions",
            Refusal::ClientExecutions => "client_executions",
        }
    }
}

/// One finished execution, as counted.
#[derive(Debug, Clone, Copy)]
pub struct ExecutionRecord {
    /// `execute_code` or `execute_command`.
    pub tool: &'static str,
    pub runtime: Runtime,
    /// Its `error_type`; none for a success.
    pub error_type: Option<ErrorType>,
    pub seconds: f64,
    pub fuel: u64,
}

/// What the session table holds at a scrape.
#[derive(Debug, Clone, Default)]
pub struct Levels {
    /// Per session: its runtime and whether it has a live worker.
    pub sessions: Vec<(Runtime, bool)>,
    /// Per pooled worker: its runtime.
    pub pooled: Vec<Runtime>,
    /// The configured pool size per runtime.
    pub pool_target: Vec<(Runtime, usize)>,
    /// Measured resident and proportional memory per runtime and role (`session`, `pooled`).
    pub memory: Vec<(Runtime, &'static str, crate::memory::Footprint)>,
    /// Admission's figures.
    pub admission: AdmissionLevels,
}

/// Admission at a scrape: memory counted, the budget, the session limit, the host's available
/// memory (when read).
#[derive(Debug, Clone, Default)]
pub struct AdmissionLevels {
    pub memory_in_use_bytes: u64,
    pub memory_budget_bytes: u64,
    pub max_sessions: usize,
    pub host_available_bytes: Option<u64>,
}

/// The last worker start, for readiness.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LastStart {
    /// No worker has started yet.
    None,
    Succeeded(Instant),
    Failed(String),
}

/// The server's metrics: counters and histograms updated as things happen, gauges set at each
/// scrape.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    executions: Family<ExecutionLabels, Counter>,
    duration: Family<RuntimeLabels, Histogram, fn() -> Histogram>,
    fuel: Family<RuntimeLabels, Histogram, fn() -> Histogram>,
    worker_starts: Family<StartLabels, Counter>,
    worker_start_failures: Family<RuntimeLabels, Counter>,
    kills: Family<ReasonLabels, Counter>,
    restarts: Family<ReasonLabels, Counter>,
    crashes: Family<ReasonLabels, Counter>,
    reaped: Family<RuntimeLabels, Counter>,
    refusals: Family<ShortageLabels, Counter>,
    sessions: Family<RuntimeLabels, Gauge>,
    workers: Family<WorkerLabels, Gauge>,
    pool_target: Family<RuntimeLabels, Gauge>,
    resident: Family<WorkerLabels, Gauge>,
    proportional: Family<WorkerLabels, Gauge>,
    memory_in_use: Gauge,
    memory_budget: Gauge,
    host_available: Gauge,
    max_sessions: Gauge,
    last_start: Mutex<LastStart>,
    /// Scrapes set the gauges, then encode: one at a time, so none sees another's half.
    scrape: Mutex<()>,
}

/// Wall time of executions, 1 ms to about 9 minutes.
fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 20))
}

/// Fuel of executions, 10^5 to 10^13 (a large flavor's budget is 2×10^11, the most 5×10^12).
fn fuel_histogram() -> Histogram {
    Histogram::new(exponential_buckets(1e5, 10.0, 9))
}

impl Metrics {
    fn new() -> Self {
        let mut registry = Registry::with_prefix("sandbox");
        let metrics = Self {
            executions: Family::default(),
            duration: Family::new_with_constructor(duration_histogram),
            fuel: Family::new_with_constructor(fuel_histogram),
            worker_starts: Family::default(),
            worker_start_failures: Family::default(),
            kills: Family::default(),
            restarts: Family::default(),
            crashes: Family::default(),
            reaped: Family::default(),
            refusals: Family::default(),
            sessions: Family::default(),
            workers: Family::default(),
            pool_target: Family::default(),
            resident: Family::default(),
            proportional: Family::default(),
            memory_in_use: Gauge::default(),
            memory_budget: Gauge::default(),
            host_available: Gauge::default(),
            max_sessions: Gauge::default(),
            last_start: Mutex::new(LastStart::None),
            scrape: Mutex::new(()),
            registry: Registry::default(),
        };
        metrics.register(&mut registry);
        Self {
            registry,
            ..metrics
        }
    }

    fn register(&self, r: &mut Registry) {
        r.register(
            "executions",
            "Executions finished, by tool, language, runtime and outcome (success or the result's error_type)",
            self.executions.clone(),
        );
        r.register_with_unit(
            "execution_duration",
            "Wall time of executions, queueing included",
            Unit::Seconds,
            self.duration.clone(),
        );
        r.register(
            "execution_fuel",
            "Fuel executions consumed",
            self.fuel.clone(),
        );
        r.register(
            "worker_starts",
            "Workers started: adopted from the pool (pool), started by a session (spawn), or for the pool (pooled)",
            self.worker_starts.clone(),
        );
        r.register(
            "worker_start_failures",
            "Worker starts that failed",
            self.worker_start_failures.clone(),
        );
        r.register(
            "worker_kills",
            "Workers killed: by a timeout or cancel they did not answer, or evicted for memory",
            self.kills.clone(),
        );
        r.register(
            "interpreter_restarts",
            "Interpreters stopped by force inside their worker (code that ignored the interrupt at its deadline or a cancel), by what the session kept: lost (Python) or rolled_back (JavaScript)",
            self.restarts.clone(),
        );
        r.register(
            "worker_crashes",
            "Workers that died on their own, during an execution or while idle",
            self.crashes.clone(),
        );
        r.register(
            "sessions_reaped",
            "Sessions removed after their idle time to live",
            self.reaped.clone(),
        );
        r.register(
            "admission_refusals",
            "New sessions or executions refused, by the limit they hit",
            self.refusals.clone(),
        );
        r.register(
            "sessions",
            "Sessions now, by runtime",
            self.sessions.clone(),
        );
        r.register(
            "workers",
            "Live worker processes now, by runtime and role (session or pooled)",
            self.workers.clone(),
        );
        r.register(
            "pool_target",
            "Pre-started workers the pool keeps, by runtime",
            self.pool_target.clone(),
        );
        r.register_with_unit(
            "worker_resident_memory",
            "Resident set size of the workers (RSS, shared pages counted in each), as last sampled",
            Unit::Bytes,
            self.resident.clone(),
        );
        r.register_with_unit(
            "worker_proportional_memory",
            "Proportional set size of the workers (PSS: shared pages split among them), as last sampled",
            Unit::Bytes,
            self.proportional.clone(),
        );
        r.register_with_unit(
            "memory_in_use",
            "Memory admission counts for sessions and pooled workers",
            Unit::Bytes,
            self.memory_in_use.clone(),
        );
        r.register_with_unit(
            "memory_budget",
            "Memory admission lets sessions and pooled workers use",
            Unit::Bytes,
            self.memory_budget.clone(),
        );
        r.register_with_unit(
            "host_available_memory",
            "The host's MemAvailable at the last admission check",
            Unit::Bytes,
            self.host_available.clone(),
        );
        r.register(
            "max_sessions",
            "The most sessions at once",
            self.max_sessions.clone(),
        );
    }

    /// Counts a finished execution.
    pub fn execution(&self, record: &ExecutionRecord) {
        let runtime = record.runtime.as_str();
        self.executions
            .get_or_create(&ExecutionLabels {
                tool: record.tool,
                language: record.runtime.language().as_str(),
                runtime,
                outcome: record.error_type.map_or("success", ErrorType::as_str),
            })
            .inc();
        let labels = RuntimeLabels::of(record.runtime);
        self.duration.get_or_create(&labels).observe(record.seconds);
        self.fuel.get_or_create(&labels).observe(record.fuel as f64);
    }

    /// Counts a worker started for a session (`adopted` from the pool, or its own) or for the
    /// pool (`pooled`), and remembers that starting works.
    pub fn worker_started(&self, runtime: Runtime, how: &'static str) {
        self.worker_starts
            .get_or_create(&StartLabels {
                language: runtime.language().as_str(),
                runtime: runtime.as_str(),
                how,
            })
            .inc();
        *self.last_start.lock().unwrap_or_else(|e| e.into_inner()) =
            LastStart::Succeeded(Instant::now());
    }

    /// Counts a worker that could not start, and remembers why (readiness reports it).
    pub fn worker_start_failed(&self, runtime: Runtime, why: &str) {
        self.worker_start_failures
            .get_or_create(&RuntimeLabels::of(runtime))
            .inc();
        *self.last_start.lock().unwrap_or_else(|e| e.into_inner()) =
            LastStart::Failed(format!("{runtime}: {why}"));
    }

    /// The last worker start's outcome.
    pub fn last_start(&self) -> LastStart {
        self.last_start
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn worker_killed(&self, runtime: Runtime, why: Kill) {
        self.kills
            .get_or_create(&ReasonLabels {
                language: runtime.language().as_str(),
                runtime: runtime.as_str(),
                reason: why.as_str(),
            })
            .inc();
    }

    /// Counts an interpreter its worker stopped by force and restarted; `kept` is what the
    /// session kept (`lost`, `rolled_back`).
    pub fn interpreter_restarted(&self, runtime: Runtime, kept: &'static str) {
        self.restarts
            .get_or_create(&ReasonLabels {
                language: runtime.language().as_str(),
                runtime: runtime.as_str(),
                reason: kept,
            })
            .inc();
    }

    pub fn worker_crashed(&self, runtime: Runtime, when: Crash) {
        let reason = match when {
            Crash::Execution => "execution",
            Crash::Idle => "idle",
        };
        self.crashes
            .get_or_create(&ReasonLabels {
                language: runtime.language().as_str(),
                runtime: runtime.as_str(),
                reason,
            })
            .inc();
    }

    pub fn session_reaped(&self, runtime: Runtime) {
        self.reaped.get_or_create(&RuntimeLabels::of(runtime)).inc();
    }

    pub fn refused(&self, limit: Refusal) {
        self.refusals
            .get_or_create(&ShortageLabels {
                limit: limit.as_str(),
            })
            .inc();
    }

    /// The exposition: the gauges set from `levels`, then everything encoded.
    pub fn encode(&self, levels: &Levels) -> String {
        let _one_at_a_time = self.scrape.lock().unwrap_or_else(|e| e.into_inner());
        self.set_levels(levels);
        let mut text = String::new();
        // Writing to a String cannot fail; an encoder error would be a bug in a metric.
        if let Err(e) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::error!(error = %e, "cannot encode the metrics");
        }
        text
    }

    fn set_levels(&self, levels: &Levels) {
        for family in [&self.sessions, &self.pool_target] {
            family.clear();
        }
        for family in [&self.workers, &self.resident, &self.proportional] {
            family.clear();
        }
        // Every runtime appears, at zero when it has nothing: a series that vanishes reads as
        // missing data rather than as none.
        for runtime in Runtime::ALL {
            let labels = RuntimeLabels::of(runtime);
            self.sessions.get_or_create(&labels).set(0);
            for role in ["session", "pooled"] {
                let labels = WorkerLabels::of(runtime, role);
                self.workers.get_or_create(&labels).set(0);
                self.resident.get_or_create(&labels).set(0);
                self.proportional.get_or_create(&labels).set(0);
            }
        }
        for (runtime, has_worker) in &levels.sessions {
            self.sessions
                .get_or_create(&RuntimeLabels::of(*runtime))
                .inc();
            if *has_worker {
                let labels = WorkerLabels::of(*runtime, "session");
                self.workers.get_or_create(&labels).inc();
            }
        }
        for runtime in &levels.pooled {
            let labels = WorkerLabels::of(*runtime, "pooled");
            self.workers.get_or_create(&labels).inc();
        }
        for (runtime, size) in &levels.pool_target {
            let labels = RuntimeLabels::of(*runtime);
            self.pool_target
                .get_or_create(&labels)
                .set(gauge(*size as u64));
        }
        for (runtime, role, footprint) in &levels.memory {
            let labels = WorkerLabels::of(*runtime, role);
            self.resident
                .get_or_create(&labels)
                .inc_by(gauge(footprint.rss));
            self.proportional
                .get_or_create(&labels)
                .inc_by(gauge(footprint.pss));
        }
        let usage = &levels.admission;
        self.memory_in_use.set(gauge(usage.memory_in_use_bytes));
        self.memory_budget.set(gauge(usage.memory_budget_bytes));
        self.max_sessions.set(gauge(usage.max_sessions as u64));
        if let Some(available) = usage.host_available_bytes {
            self.host_available.set(gauge(available));
        }
    }
}

/// A count or a size as a gauge value (an i64; sizes never come near its limit).
fn gauge(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Footprint;

    /// The value of the series whose line starts with `series` (name and labels).
    fn value(text: &str, series: &str) -> Option<f64> {
        text.lines()
            .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
    }

    #[test]
    fn events_and_levels_are_exposed_with_their_labels() {
        let metrics = Metrics::new();
        for error_type in [None, None, Some(ErrorType::Timeout)] {
            metrics.execution(&ExecutionRecord {
                tool: "execute_code",
                runtime: Runtime::Python,
                error_type,
                seconds: 0.004,
                fuel: 2_000_000,
            });
        }
        metrics.worker_killed(Runtime::JavaScript, Kill::Timeout);
        metrics.worker_crashed(Runtime::Python, Crash::Idle);
        metrics.session_reaped(Runtime::Python);
        metrics.refused(Refusal::MemoryBudget);
        metrics.worker_started(Runtime::Python, "pool");
        let levels = Levels {
            sessions: vec![(Runtime::Python, true), (Runtime::Python, false)],
            pooled: vec![Runtime::JavaScript],
            pool_target: vec![(Runtime::JavaScript, 2)],
            memory: vec![
                (Runtime::Python, "session", Footprint { rss: 100, pss: 40 }),
                (
                    Runtime::JavaScript,
                    "pooled",
                    Footprint { rss: 30, pss: 10 },
                ),
            ],
            admission: AdmissionLevels {
                max_sessions: 256,
                memory_budget_bytes: 1 << 30,
                ..Default::default()
            },
        };
        let text = metrics.encode(&levels);
        let expect = |series: &str, want: f64| {
            assert_eq!(value(&text, series), Some(want), "{series} in:\n{text}");
        };
        expect(
            r#"sandbox_executions_total{tool="execute_code",language="python",runtime="python",outcome="success"}"#,
            2.0,
        );
        expect(
            r#"sandbox_executions_total{tool="execute_code",language="python",runtime="python",outcome="timeout"}"#,
            1.0,
        );
        expect(
            r#"sandbox_execution_duration_seconds_count{language="python",runtime="python"}"#,
            3.0,
        );
        expect(
            r#"sandbox_execution_fuel_bucket{le="1000000.0",language="python",runtime="python"}"#,
            0.0,
        );
        expect(
            r#"sandbox_execution_fuel_bucket{le="10000000.0",language="python",runtime="python"}"#,
            3.0,
        );
        expect(
            r#"sandbox_worker_kills_total{language="javascript",runtime="javascript",reason="timeout"}"#,
            1.0,
        );
        expect(
            r#"sandbox_worker_crashes_total{language="python",runtime="python",reason="idle"}"#,
            1.0,
        );
        expect(
            r#"sandbox_sessions_reaped_total{language="python",runtime="python"}"#,
            1.0,
        );
        expect(
            r#"sandbox_admission_refusals_total{limit="memory_budget"}"#,
            1.0,
        );
        expect(
            r#"sandbox_sessions{language="python",runtime="python"}"#,
            2.0,
        );
        expect(
            r#"sandbox_sessions{language="javascript",runtime="javascript"}"#,
            0.0,
        );
        expect(
            r#"sandbox_workers{language="python",runtime="python",role="session"}"#,
            1.0,
        );
        expect(
            r#"sandbox_workers{language="javascript",runtime="javascript",role="pooled"}"#,
            1.0,
        );
        expect(
            r#"sandbox_pool_target{language="javascript",runtime="javascript"}"#,
            2.0,
        );
        expect(
            r#"sandbox_worker_resident_memory_bytes{language="python",runtime="python",role="session"}"#,
            100.0,
        );
        expect(
            r#"sandbox_worker_proportional_memory_bytes{language="javascript",runtime="javascript",role="pooled"}"#,
            10.0,
        );
        expect("sandbox_max_sessions", 256.0);
        expect("sandbox_memory_budget_bytes", f64::from(1u32 << 30));
        assert!(text.ends_with("# EOF\n"), "OpenMetrics ends with EOF");
        assert!(matches!(metrics.last_start(), LastStart::Succeeded(_)));
        metrics.worker_start_failed(Runtime::Python, "no binary");
        assert_eq!(
            metrics.last_start(),
            LastStart::Failed("python: no binary".into())
        );
    }

    #[test]
    fn levels_are_replaced_at_each_scrape_not_added_up() {
        let metrics = Metrics::new();
        let one = Levels {
            sessions: vec![(Runtime::JavaScript, true)],
            ..Default::default()
        };
        metrics.encode(&one);
        let text = metrics.encode(&one);
        assert_eq!(
            value(
                &text,
                r#"sandbox_sessions{language="javascript",runtime="javascript"}"#
            ),
            Some(1.0),
            "{text}"
        );
        let text = metrics.encode(&Levels::default());
        assert_eq!(
            value(
                &text,
                r#"sandbox_sessions{language="javascript",runtime="javascript"}"#
            ),
            Some(0.0),
            "{text}"
        );
    }
}
