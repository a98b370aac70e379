//! The benchmark's one table: what each figure measured ([`Value`]), its target ([`Target`]),
//! whether it meets it, and the printing of rows for our server beside other ones.

use std::time::Duration;

use sandbox_tests::bench_support::Memory;

/// What one figure measured on one server.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Call latencies: p50 and p95 of `count` samples.
    Latency {
        p50_ms: f64,
        p95_ms: f64,
        count: usize,
    },
    /// A first import: p50 of its execute_code calls and the fuel the result reported.
    Import { p50_ms: f64, fuel: u64 },
    /// Executions completed per second.
    Rate { per_second: f64 },
    /// The memory of one process, or of a process tree (`processes` of them).
    Memory { memory: Memory, processes: usize },
    /// Idle sessions held at once: how many were admitted, what all processes held, and the
    /// refusal that stopped the run early (if one did).
    Density {
        sessions: usize,
        memory: Memory,
        processes: usize,
        refused: Option<String>,
    },
    /// Fuel metering's cost: metered against unmetered run time of the same program.
    Overhead {
        percent: f64,
        metered_ms: f64,
        unmetered_ms: f64,
    },
    /// Call latencies through the official MCP SDK: p50 and p90 of `count` samples (the
    /// percentiles issue 24 states its figures in).
    LatencyP90 {
        p50_ms: f64,
        p90_ms: f64,
        count: usize,
    },
    /// A call's latency above the same connection's MCP ping: the difference of the p50s (what
    /// a target judges) and of the p90s. What the answer itself costs the client and server.
    AbovePing { p50_ms: f64, p90_ms: f64 },
    /// The size of a JSON document (a result, a schema) in bytes; `of` names what was measured
    /// when it is not what the label says (another server's code tool).
    Size { bytes: u64, of: Option<String> },
    /// How many times longer a cell took than the same loop in native CPython (`python`, its
    /// version), comparing p50s; the native p50 goes with it.
    TimesNative {
        times: f64,
        native_ms: f64,
        python: String,
    },
    /// Not measured, and why (`n/a: ...`, `not measured: ...` or `failed: ...`).
    Missing(String),
}

impl Value {
    /// Latency percentiles of `samples` (at least one).
    pub fn latency(mut samples: Vec<Duration>) -> Value {
        samples.sort();
        Value::Latency {
            p50_ms: percentile(&samples, 0.5),
            p95_ms: percentile(&samples, 0.95),
            count: samples.len(),
        }
    }

    /// Latency p50 and p90 of `samples` (at least one).
    pub fn latency_p90(mut samples: Vec<Duration>) -> Value {
        samples.sort();
        Value::LatencyP90 {
            p50_ms: percentile(&samples, 0.5),
            p90_ms: percentile(&samples, 0.9),
            count: samples.len(),
        }
    }

    /// The p50 in milliseconds, for figures that have one (what `--check` compares).
    pub fn p50_ms(&self) -> Option<f64> {
        match self {
            Value::Latency { p50_ms, .. }
            | Value::Import { p50_ms, .. }
            | Value::LatencyP90 { p50_ms, .. } => Some(*p50_ms),
            _ => None,
        }
    }

    /// A figure that was not measured: `prefix` (`failed`, `n/a`) and why, on one line of at
    /// most 300 characters (an error chain can be long, and the table is read in a terminal).
    pub fn missing(prefix: &str, why: &str) -> Value {
        let line = why.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut short: String = line.chars().take(300).collect();
        if short.len() < line.len() {
            short.push_str("...");
        }
        Value::Missing(format!("{prefix}: {short}"))
    }

    /// Whether this is a failure of ours (not a figure that cannot be measured).
    pub fn failed(&self) -> bool {
        matches!(self, Value::Missing(why) if why.starts_with("failed"))
    }

    fn render(&self) -> String {
        match self {
            Value::Latency {
                p50_ms,
                p95_ms,
                count,
            } => format!("p50 {} (p95 {}, n={count})", ms(*p50_ms), ms(*p95_ms)),
            Value::Import { p50_ms, fuel } => {
                format!("p50 {}, fuel {:.2e}", ms(*p50_ms), *fuel as f64)
            }
            Value::Rate { per_second } => format!("{per_second:.0} executions/s"),
            Value::Memory { memory, processes } => {
                let of = if *processes == 1 {
                    String::new()
                } else {
                    format!(" ({processes} processes)")
                };
                format!(
                    "RSS {}, PSS {}{of}",
                    bytes(memory.rss_bytes),
                    bytes(memory.pss_bytes)
                )
            }
            Value::Density {
                sessions,
                memory,
                processes,
                refused,
            } => {
                let held = format!(
                    "{sessions} sessions: RSS {}, PSS {} ({processes} processes)",
                    bytes(memory.rss_bytes),
                    bytes(memory.pss_bytes)
                );
                match refused {
                    Some(why) => format!("refused session {}: {why}; {held}", sessions + 1),
                    None => held,
                }
            }
            Value::Overhead {
                percent,
                metered_ms,
                unmetered_ms,
            } => format!(
                "{percent:+.1} % (metered {}, unmetered {})",
                ms(*metered_ms),
                ms(*unmetered_ms)
            ),
            Value::LatencyP90 {
                p50_ms,
                p90_ms,
                count,
            } => format!("p50 {} (p90 {}, n={count})", ms(*p50_ms), ms(*p90_ms)),
            Value::AbovePing { p50_ms, p90_ms } => {
                format!("p50 {} (p90 {})", signed_ms(*p50_ms), signed_ms(*p90_ms))
            }
            Value::Size { bytes, of } => match of {
                Some(of) => format!("{bytes} bytes ({of})"),
                None => format!("{bytes} bytes"),
            },
            Value::TimesNative {
                times,
                native_ms,
                python,
            } => format!(
                "{times:.1}x (native CPython {python}: best {})",
                ms(*native_ms)
            ),
            Value::Missing(why) => why.clone(),
        }
    }
}

/// The target a figure is held to, as the issue states it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// p50 at most this many milliseconds.
    AtMostMs(f64),
    /// At least this many executions per second.
    AtLeastPerSecond(f64),
    /// All sessions admitted, and their total RSS at most this many bytes.
    AtMostBytes(u64),
    /// The memory of one process (a mean one, where the label says so): PSS at most this many
    /// bytes.
    PssAtMostBytes(u64),
    /// Overhead at most this many percent.
    AtMostPercent(f64),
    /// A JSON document of at most this many bytes.
    AtMostSize(u64),
    /// At most this many times native CPython's time.
    AtMostTimesNative(f64),
    /// Printed for information.
    None,
}

impl Target {
    /// Whether `value` meets the target; `None` when there is no target or no figure.
    pub fn meets(self, value: &Value) -> Option<bool> {
        match (self, value) {
            (Target::AtMostMs(limit), Value::Latency { p50_ms, .. })
            | (Target::AtMostMs(limit), Value::Import { p50_ms, .. })
            | (Target::AtMostMs(limit), Value::LatencyP90 { p50_ms, .. })
            | (Target::AtMostMs(limit), Value::AbovePing { p50_ms, .. }) => Some(*p50_ms <= limit),
            (Target::AtLeastPerSecond(floor), Value::Rate { per_second }) => {
                Some(*per_second >= floor)
            }
            (
                Target::AtMostBytes(limit),
                Value::Density {
                    memory, refused, ..
                },
            ) => Some(refused.is_none() && memory.rss_bytes <= limit),
            (Target::AtMostBytes(limit), Value::Memory { memory, .. }) => {
                Some(memory.rss_bytes <= limit)
            }
            (Target::PssAtMostBytes(limit), Value::Memory { memory, .. }) => {
                Some(memory.pss_bytes <= limit)
            }
            (Target::AtMostPercent(limit), Value::Overhead { percent, .. }) => {
                Some(*percent <= limit)
            }
            (Target::AtMostSize(limit), Value::Size { bytes, .. }) => Some(*bytes <= limit),
            (Target::AtMostTimesNative(limit), Value::TimesNative { times, .. }) => {
                Some(*times <= limit)
            }
            _ => None,
        }
    }

    fn render(self) -> String {
        match self {
            Target::AtMostMs(limit) => format!("p50 <= {}", ms(limit)),
            Target::AtLeastPerSecond(floor) => format!(">= {floor:.0}/s"),
            Target::AtMostBytes(limit) => format!("RSS <= {}", bytes(limit)),
            Target::PssAtMostBytes(limit) => format!("PSS <= {}", bytes(limit)),
            Target::AtMostPercent(limit) => format!("<= {limit:.0} %"),
            Target::AtMostSize(limit) => format!("<= {limit} bytes"),
            Target::AtMostTimesNative(limit) => format!("<= {limit:.0}x native"),
            Target::None => "-".into(),
        }
    }
}

/// One row: a figure's label (stable: `--check` finds README references by it), its target,
/// our value, and the values of the other servers compared, by column ([`render`]'s `others`).
#[derive(Debug, Clone)]
pub struct Row {
    pub label: String,
    pub target: Target,
    pub ours: Value,
    /// Another server's value in each column; `None` (or a missing entry) where that server
    /// was not measured for this row (the table shows `-`).
    pub others: Vec<Option<Value>>,
}

impl Row {
    pub fn new(label: impl Into<String>, target: Target, ours: Value) -> Row {
        Row {
            label: label.into(),
            target,
            ours,
            others: Vec::new(),
        }
    }

    /// Puts another server's value in `column`.
    pub fn set_other(&mut self, column: usize, value: Value) {
        if self.others.len() <= column {
            self.others.resize(column + 1, None);
        }
        self.others[column] = Some(value);
    }

    /// The value in another server's `column`, if it was measured for this row.
    pub fn other(&self, column: usize) -> Option<&Value> {
        self.others.get(column).and_then(Option::as_ref)
    }
}

/// The table as Markdown, padded to line up in a terminal: figure, our value, each other
/// server's value (a column per name in `others`), target, and whether ours meets it.
pub fn render(rows: &[Row], others: &[String]) -> String {
    let mut header = vec!["figure".to_owned(), "sandbox-mcp".to_owned()];
    header.extend(others.iter().cloned());
    header.extend(["target".to_owned(), "meets?".to_owned()]);
    let mut lines = vec![header];
    for row in rows {
        let verdict = match row.target.meets(&row.ours) {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "-",
        };
        let mut cells = vec![row.label.clone(), row.ours.render()];
        for column in 0..others.len() {
            cells.push(
                row.other(column)
                    .map_or_else(|| "-".to_owned(), Value::render),
            );
        }
        cells.extend([row.target.render(), verdict.to_owned()]);
        lines.push(cells);
    }
    let widths: Vec<usize> = (0..lines[0].len())
        .map(|column| {
            lines
                .iter()
                .map(|l| l[column].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        format!("| {} |", padded.join(" | "))
    };
    let separator: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    let mut out = vec![line(&lines[0]), line(&separator)];
    out.extend(lines[1..].iter().map(|cells| line(cells)));
    out.join("\n")
}

/// The sample at fraction `p` of `sorted` (nearest rank).
pub fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1000.0
}

/// Milliseconds with the precision that matters at their size.
fn ms(value: f64) -> String {
    if value < 10.0 {
        format!("{value:.2} ms")
    } else {
        format!("{value:.0} ms")
    }
}

/// A difference in milliseconds, with its sign.
fn signed_ms(value: f64) -> String {
    let sign = if value < 0.0 { "-" } else { "+" };
    format!("{sign}{}", ms(value.abs()))
}

/// Bytes in MiB, or GiB from 1 GiB up.
fn bytes(value: u64) -> String {
    let mib = value as f64 / (1024.0 * 1024.0);
    if mib >= 1024.0 {
        format!("{:.2} GiB", mib / 1024.0)
    } else {
        format!("{mib:.1} MiB")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn latency(p50_ms: f64) -> Value {
        Value::Latency {
            p50_ms,
            p95_ms: p50_ms * 2.0,
            count: 10,
        }
    }

    fn memory(rss_mib: u64) -> Memory {
        Memory {
            rss_bytes: rss_mib << 20,
            pss_bytes: (rss_mib << 20) / 4,
        }
    }

    #[test]
    fn latency_takes_nearest_rank_percentiles() {
        let samples = (1..=100).rev().map(Duration::from_millis).collect();
        assert_eq!(
            Value::latency(samples),
            Value::Latency {
                p50_ms: 51.0,
                p95_ms: 95.0,
                count: 100
            }
        );
        assert_eq!(
            Value::latency(vec![Duration::from_micros(500)]).p50_ms(),
            Some(0.5)
        );
    }

    #[test]
    fn targets_judge_only_the_figures_they_apply_to() {
        assert_eq!(Target::AtMostMs(1.0).meets(&latency(1.0)), Some(true));
        assert_eq!(Target::AtMostMs(1.0).meets(&latency(1.01)), Some(false));
        let import = Value::Import {
            p50_ms: 40.0,
            fuel: 1,
        };
        assert_eq!(Target::AtMostMs(50.0).meets(&import), Some(true));
        let rate = Value::Rate { per_second: 1499.0 };
        assert_eq!(Target::AtLeastPerSecond(1500.0).meets(&rate), Some(false));
        let overhead = Value::Overhead {
            percent: 30.0,
            metered_ms: 13.0,
            unmetered_ms: 10.0,
        };
        assert_eq!(Target::AtMostPercent(30.0).meets(&overhead), Some(true));
        assert_eq!(Target::AtMostMs(1.0).meets(&rate), None, "a mismatch");
        assert_eq!(Target::None.meets(&latency(1.0)), None);
        let missing = Value::Missing("n/a: no sessions".into());
        assert_eq!(Target::AtMostMs(1.0).meets(&missing), None);
    }

    #[test]
    fn density_meets_its_target_only_when_every_session_was_admitted() {
        let four_gib = 4 << 30;
        let held = |refused: Option<&str>| Value::Density {
            sessions: 64,
            memory: memory(1024),
            processes: 66,
            refused: refused.map(str::to_owned),
        };
        assert_eq!(Target::AtMostBytes(four_gib).meets(&held(None)), Some(true));
        assert_eq!(
            Target::AtMostBytes(four_gib).meets(&held(Some("resources_exhausted"))),
            Some(false)
        );
        let over = Value::Density {
            sessions: 100,
            memory: memory(5000),
            processes: 101,
            refused: None,
        };
        assert_eq!(Target::AtMostBytes(four_gib).meets(&over), Some(false));
    }

    #[test]
    fn values_render_with_units() {
        assert_eq!(latency(0.456).render(), "p50 0.46 ms (p95 0.91 ms, n=10)");
        assert_eq!(latency(117.4).render(), "p50 117 ms (p95 235 ms, n=10)");
        let tree = Value::Memory {
            memory: memory(21),
            processes: 3,
        };
        assert_eq!(tree.render(), "RSS 21.0 MiB, PSS 5.2 MiB (3 processes)");
        let refused = Value::Density {
            sessions: 64,
            memory: memory(2048),
            processes: 65,
            refused: Some("resources_exhausted: full".into()),
        };
        assert_eq!(
            refused.render(),
            "refused session 65: resources_exhausted: full; 64 sessions: RSS 2.00 GiB, PSS 512.0 MiB (65 processes)"
        );
        assert!(Value::Missing("failed: x".into()).failed());
        assert_eq!(
            Value::missing("n/a", "a\n  b"),
            Value::Missing("n/a: a b".into())
        );
        let long = Value::missing("failed", &"x".repeat(400));
        assert!(matches!(&long, Value::Missing(w) if w.len() == 311 && w.ends_with("x...")));
        assert!(!Value::Missing("n/a: x".into()).failed());
    }

    #[test]
    fn the_table_lines_up_and_shows_the_other_server_only_when_compared() {
        let mut row = Row::new("warm", Target::AtMostMs(1.0), latency(0.5));
        let alone = render(std::slice::from_ref(&row), &[]);
        let lines: Vec<&str> = alone.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("| figure | sandbox-mcp"), "{alone}");
        assert!(lines[2].ends_with("| p50 <= 1.00 ms | yes    |"), "{alone}");
        assert!(lines.iter().all(|l| l.len() == lines[0].len()), "{alone}");
        row.set_other(1, latency(2.0));
        let compared = render(
            &[row.clone(), Row::new("x", Target::None, latency(1.0))],
            &["--against peer".to_owned(), "SDK: other".to_owned()],
        );
        let lines: Vec<&str> = compared.lines().collect();
        assert!(
            lines[0].contains("| --against peer | SDK: other"),
            "{compared}"
        );
        assert!(
            lines[2].contains("| -              | p50 2.00 ms"),
            "{compared}"
        );
        assert!(lines[3].contains("| -              | -"), "{compared}");
        assert!(
            lines.iter().all(|l| l.len() == lines[0].len()),
            "{compared}"
        );
    }

    #[test]
    fn sdk_figures_render_and_meet_their_targets() {
        let samples = (1..=10).map(Duration::from_millis).collect();
        let p90 = Value::latency_p90(samples);
        assert_eq!(p90.render(), "p50 6.00 ms (p90 9.00 ms, n=10)");
        assert_eq!(Target::AtMostMs(6.0).meets(&p90), Some(true));
        let above = Value::AbovePing {
            p50_ms: 0.85,
            p90_ms: -0.1,
        };
        assert_eq!(above.render(), "p50 +0.85 ms (p90 -0.10 ms)");
        assert_eq!(Target::AtMostMs(0.8).meets(&above), Some(false));
        let size = Value::Size {
            bytes: 400,
            of: None,
        };
        assert_eq!(size.render(), "400 bytes");
        assert_eq!(Target::AtMostSize(400).meets(&size), Some(true));
        assert_eq!(Target::AtMostSize(399).meets(&size), Some(false));
        assert_eq!(Target::AtMostSize(399).render(), "<= 399 bytes");
        let theirs = Value::Size {
            bytes: 125,
            of: Some("run_python's".into()),
        };
        assert_eq!(theirs.render(), "125 bytes (run_python's)");
    }
}
