//! What the server's open files go to, and whether its open-file limit (`RLIMIT_NOFILE`) covers
//! them. Every live worker (a session's or a pooled one) holds descriptors in the supervisor,
//! every HTTP connection holds one, and the server keeps some of its own. When the limit runs
//! out, nothing works: a worker cannot start, `accept` fails, a package cannot be unpacked. So
//! [`Demand`] is the sum for a configuration, `check-config` warns when the limit is below it,
//! the HTTP endpoint caps its connections to what is left once the workers' share is kept aside
//! ([`connections_within`]), and the server raises its soft limit to the hard one at start
//! ([`raise_limit`]).

use nix::sys::resource::{Resource, getrlimit, setrlimit};

/// Descriptors the supervisor holds for one live worker (a session's or a pooled one).
/// Measured with 16 sessions over HTTP: 6 each (its socket, the pipe of its stderr, two pidfds
/// (ours, and the runtime's for reaping it), the directory handles of its `app` and `tmp`).
/// 8 leaves room for a worker being replaced (the old one's close as the new one's open) and a
/// cgroup directory where cgroups are delegated.
pub const PER_WORKER: u64 = 8;

/// The server's own descriptors, with no session and no connection, plus the short-lived ones.
/// Measured: 15 open after start-up without a pool (stdio, the runtime's epoll and wakers, the
/// listener, the state directory's lock and handles); the rest is room for a worker start's
/// pipes and socket, package downloads and unpacks, the tokens file and `/proc` reads.
pub const BASE: u64 = 128;

/// The descriptors a configuration may need at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Demand {
    /// HTTP connections: the cap, the slot held back for probes and one being refused (none on
    /// stdio).
    pub connections: u64,
    /// Workers at once: every session, and every pooled worker.
    pub workers: u64,
}

impl Demand {
    /// The demand of `connections` HTTP connections at most (`None` on stdio), with
    /// `max_sessions` sessions and `pooled` pre-started workers.
    pub fn new(connections: Option<usize>, max_sessions: usize, pooled: usize) -> Self {
        // The probe slot and the connection accepted only to be refused.
        let beyond_the_cap = 2;
        Demand {
            connections: connections.map_or(0, |n| n as u64 + beyond_the_cap),
            workers: (max_sessions + pooled) as u64,
        }
    }

    /// Every descriptor the configuration may hold at once.
    pub fn total(&self) -> u64 {
        self.connections
            .saturating_add(self.workers.saturating_mul(PER_WORKER))
            .saturating_add(BASE)
    }

    /// The sum, as an operator reads it: "N descriptors (the parts)".
    pub fn describe(&self) -> String {
        let workers = format!(
            "{} workers × {PER_WORKER} (sessions and pooled workers)",
            self.workers
        );
        let own = format!("{BASE} for the server itself");
        let parts = if self.connections == 0 {
            format!("{workers} + {own}")
        } else {
            format!("{} HTTP connections + {workers} + {own}", self.connections)
        };
        format!("{} descriptors ({parts})", self.total())
    }
}

/// How many HTTP connections fit under an open-file limit of `limit` once `workers` workers and
/// the server itself have their descriptors (see [`Demand`]).
pub fn connections_within(limit: u64, workers: usize) -> u64 {
    let kept = Demand::new(Some(0), workers, 0);
    limit.saturating_sub(kept.total())
}

/// The open-file limit (soft, hard), if it can be read.
pub fn limit() -> Option<(u64, u64)> {
    getrlimit(Resource::RLIMIT_NOFILE).ok()
}

/// Raises the soft open-file limit to the hard one, and returns the soft limit now in force.
/// The soft limit is low by convention (systemd's 1024, for programs that still use
/// `select()`), and a program that needs more raises it itself (systemd.exec(5),
/// `LimitNOFILE=`); the server waits with epoll. Workers are unaffected: each gets its own
/// limit between fork and exec (`jail::apply`).
pub fn raise_limit() -> Option<u64> {
    let (soft, hard) = limit()?;
    if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
        return Some(hard);
    }
    Some(soft)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demand_adds_connections_workers_and_the_servers_own() {
        let http = Demand::new(Some(1024), 256, 5);
        assert_eq!(http.connections, 1026);
        assert_eq!(http.workers, 261);
        assert_eq!(http.total(), 1026 + 261 * PER_WORKER + BASE);
        let described = format!("{} descriptors (1026 HTTP connections + ", http.total());
        assert!(
            http.describe().starts_with(&described),
            "{}",
            http.describe()
        );
        let stdio = Demand::new(None, 256, 5);
        assert_eq!(stdio.total(), 261 * PER_WORKER + BASE);
        assert!(!stdio.describe().contains("HTTP"), "{}", stdio.describe());
    }

    #[test]
    fn connections_get_what_workers_leave() {
        // The probe slot and a connection being refused come on top of the cap.
        let kept = 16 * PER_WORKER + BASE + 2;
        assert_eq!(connections_within(1024, 16), 1024 - kept);
        assert_eq!(
            connections_within(100, 16),
            0,
            "nothing left, not an underflow"
        );
    }

    #[test]
    fn the_default_configuration_fits_the_units_limit() {
        // supervisor/sandbox-mcp.service sets LimitNOFILE to what the defaults need, with room.
        let unit = include_str!("../sandbox-mcp.service");
        let limit: u64 = unit
            .lines()
            .find_map(|l| l.strip_prefix("LimitNOFILE="))
            .expect("the unit sets LimitNOFILE")
            .parse()
            .expect("LimitNOFILE is a number");
        let settings = crate::config::Settings::try_parse_args(["sandbox-mcp"]).unwrap();
        let pooled = settings.admission.worker_pool.iter().map(|(_, n)| n).sum();
        let demand = Demand::new(
            Some(settings.transport.http_max_connections as usize),
            settings.admission.max_sessions as usize,
            pooled,
        );
        assert!(
            demand.total() * 2 <= limit,
            "LimitNOFILE={limit} leaves no room above {}",
            demand.describe()
        );
    }
}
