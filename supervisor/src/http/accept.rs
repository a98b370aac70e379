//! Accepting connections without spinning. When `accept` fails for want of resources (no
//! descriptor left: `EMFILE`, `ENFILE`; no memory: `ENOBUFS`, `ENOMEM`; or anything unexpected)
//! the pending connection stays in the backlog, so retrying at once fails again at once: a loop
//! that retries takes a whole core and starves everything else. [`Acceptor`] waits instead, from
//! 5 ms doubling to a second, and logs a stretch of failures twice: when it starts (with the
//! error) and when it ends (with the count), not once per failure. A shortage that flaps (a
//! descriptor freed for a moment lets one connection in) warns once per [`REWARN_AFTER`]. Errors about one connection
//! (aborted before it was accepted, or a network error accept(2) reports for it) are skipped at
//! once, as accept(2) advises.

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::time::Duration;

use nix::errno::Errno;
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

/// The first pause after a failure.
const FIRST_PAUSE: Duration = Duration::from_millis(5);

/// The longest pause: a second without accepting is short for a server out of descriptors,
/// which frees them as connections and sessions end.
const LONGEST_PAUSE: Duration = Duration::from_secs(1);

/// How long after a warning a new stretch of failures is logged at debug level only: one
/// shortage that lets a connection through now and then is one problem for the operator.
const REWARN_AFTER: Duration = Duration::from_secs(60);

/// A listener and the state of its current stretch of failures.
pub struct Acceptor {
    listener: TcpListener,
    /// The failures since the last success, and when the first of them came.
    failing: Option<(u64, Instant)>,
    /// When a stretch was last warned about.
    warned_at: Option<Instant>,
    pause: Duration,
}

impl Acceptor {
    pub fn new(listener: TcpListener) -> Self {
        Acceptor {
            listener,
            failing: None,
            warned_at: None,
            pause: FIRST_PAUSE,
        }
    }

    /// The next connection; waits out failures (see the module's documentation).
    ///
    /// # Cancel safety
    /// Cancel safe: a connection is only taken from the backlog when it is returned.
    pub async fn accept(&mut self) -> (TcpStream, SocketAddr) {
        loop {
            match self.listener.accept().await {
                Ok(accepted) => {
                    if let Some((failures, since)) = self.failing.take() {
                        tracing::info!(
                            failures,
                            seconds = since.elapsed().as_secs_f64(),
                            "accepting connections again"
                        );
                    }
                    self.pause = FIRST_PAUSE;
                    return accepted;
                }
                Err(e) if about_one_connection(&e) => {
                    tracing::debug!(error = %e, "a connection failed before it was accepted");
                }
                Err(e) => {
                    match &mut self.failing {
                        Some((failures, _)) => *failures += 1,
                        None => {
                            let now = Instant::now();
                            if self
                                .warned_at
                                .is_some_and(|at| now.duration_since(at) < REWARN_AFTER)
                            {
                                tracing::debug!(error = %e, "accept failing again");
                            } else {
                                tracing::warn!(
                                    error = %e,
                                    "cannot accept connections (out of descriptors or memory?); \
                                     retrying with pauses up to a second until it works again"
                                );
                                self.warned_at = Some(now);
                            }
                            self.failing = Some((1, now));
                        }
                    }
                    tokio::time::sleep(self.pause).await;
                    self.pause = (self.pause * 2).min(LONGEST_PAUSE);
                }
            }
        }
    }
}

/// Whether a failed accept is about the connection being accepted, not the listener or the
/// process: the next accept may well succeed at once. accept(2) lists the network errors it
/// passes on for a pending connection; `EPERM` is a firewall refusing one.
fn about_one_connection(error: &std::io::Error) -> bool {
    if matches!(
        error.kind(),
        ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset | ErrorKind::Interrupted
    ) {
        return true;
    }
    let Some(code) = error.raw_os_error() else {
        return false;
    };
    matches!(
        Errno::from_raw(code),
        Errno::ENETDOWN
            | Errno::EPROTO
            | Errno::ENOPROTOOPT
            | Errno::EHOSTDOWN
            | Errno::ENONET
            | Errno::EHOSTUNREACH
            | Errno::EOPNOTSUPP
            | Errno::ENETUNREACH
            | Errno::EPERM
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_out_of_descriptors_is_not_about_one_connection() {
        for resource in [Errno::EMFILE, Errno::ENFILE, Errno::ENOBUFS, Errno::ENOMEM] {
            let error = std::io::Error::from_raw_os_error(resource as i32);
            assert!(!about_one_connection(&error), "{error}");
        }
        for transient in [
            Errno::ECONNABORTED,
            Errno::EPROTO,
            Errno::EINTR,
            Errno::ENETUNREACH,
        ] {
            let error = std::io::Error::from_raw_os_error(transient as i32);
            assert!(about_one_connection(&error), "{error}");
        }
        let unknown = std::io::Error::other("something new");
        assert!(!about_one_connection(&unknown), "waits rather than spins");
    }
}
