//! The HTTP connections the server holds, and the limits that keep clients without a token from
//! starving it: a connection costs a descriptor and a task before anyone knows who sent it.
//!
//! - **Timeouts** ([`Activity`]). A connection with no request in flight is *waiting*. A new
//!   connection must deliver its first request head within the header timeout of its connect.
//!   A keep-alive connection may then wait the idle timeout; once the first byte of its next
//!   head arrives, that head must be complete within the header timeout. A request in flight,
//!   until the last byte of its response (a long execution, an SSE stream), is never timed out.
//!   These are ours, not hyper's: hyper's header timeout runs while a keep-alive connection
//!   waits too, so it would be the idle timeout as well.
//! - **Caps** ([`Connections::admit`]). At most `max` connections, and at most `per_peer` from
//!   one address (IPv4, or an IPv6 /64: one host has a whole /64). A connection over a cap takes
//!   the place of the connection that has been waiting longest: the same peer's when the peer is
//!   over its share, otherwise one of the peer holding the most. That connection is closed at
//!   once. Only waiting connections are closed this way, so nothing in flight is lost; a client
//!   whose idle connection was closed opens another, as HTTP clients do. Connections that never
//!   send a request therefore cannot keep a client out, whatever their number: each new
//!   connection, the client's included, displaces the oldest of them, and a client's request
//!   follows its connect within milliseconds.
//! - **A slot held back for probes.** When the caps can make no room (every connection has a
//!   request in flight), one more connection is taken, for one request, and it answers only
//!   `/healthz` and `/readyz` (anything else: 503). What a connection wants is only known once
//!   its head has arrived, so the slot cannot be kept for probes at accept time. It is what
//!   remains when nothing can be displaced. The slot, too, goes to the newest connection while
//!   its holder is still waiting, so a client that holds it without a request is displaced by
//!   the next probe.
//! - Anything beyond that is answered 503 when the socket takes it at once, and closed.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How many connections the server holds and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Most connections at once (the probe slot not counted).
    pub max: usize,
    /// Most connections from one [`Peer`] at once.
    pub per_peer: usize,
    /// Time to deliver a request head (see the module's documentation).
    pub header_timeout: Duration,
    /// Time a keep-alive connection may wait with no request in flight.
    pub idle_timeout: Duration,
}

impl ConnectionLimits {
    /// The caps and timeouts `settings` give.
    pub fn from_settings(settings: &crate::config::TransportSettings) -> Self {
        let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        Self {
            max: count(settings.http_max_connections),
            per_peer: count(settings.http_max_connections_per_peer),
            header_timeout: Duration::from_secs(settings.http_header_timeout_secs),
            idle_timeout: Duration::from_secs(settings.http_idle_timeout_secs),
        }
    }
}

/// Where connections come from, as the per-peer share counts them: an IPv4 address, or the /64
/// of an IPv6 one (an IPv4-mapped IPv6 address is its IPv4 address).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Peer(IpAddr);

impl Peer {
    pub fn of(address: IpAddr) -> Self {
        match address.to_canonical() {
            IpAddr::V6(v6) => {
                let [a, b, c, d, ..] = v6.segments();
                Peer(IpAddr::V6(Ipv6Addr::new(a, b, c, d, 0, 0, 0, 0)))
            }
            v4 => Peer(v4),
        }
    }
}

impl std::fmt::Display for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            IpAddr::V6(v6) => write!(f, "{v6}/64"),
            v4 => write!(f, "{v4}"),
        }
    }
}

/// Why a connection's time ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// A request head was not complete within the header timeout.
    Header,
    /// No request came within the idle timeout.
    Idle,
}

/// What one connection is doing: requests in flight, or since when it has been waiting. Its
/// [`Activity::expired`] is the connection's watchdog.
#[derive(Debug)]
pub struct Activity {
    phase: Mutex<Phase>,
    /// Woken whenever the phase changes, so the watchdog's deadline follows it.
    changed: Notify,
}

#[derive(Debug, Clone, Copy)]
struct Phase {
    /// Requests whose response has not been sent whole.
    in_flight: usize,
    /// When the last request ended (or the connection was accepted).
    waiting_since: Instant,
    /// When the first byte of the next head arrived, while waiting.
    head_began: Option<Instant>,
    /// Requests begun on this connection.
    requests: u64,
}

impl Phase {
    fn deadline(&self, limits: &ConnectionLimits) -> Option<(Instant, Expiry)> {
        if self.in_flight > 0 {
            None
        } else if self.requests == 0 {
            Some((self.waiting_since + limits.header_timeout, Expiry::Header))
        } else if let Some(began) = self.head_began {
            Some((began + limits.header_timeout, Expiry::Header))
        } else {
            Some((self.waiting_since + limits.idle_timeout, Expiry::Idle))
        }
    }
}

impl Activity {
    fn new() -> Arc<Self> {
        Arc::new(Activity {
            phase: Mutex::new(Phase {
                in_flight: 0,
                waiting_since: Instant::now(),
                head_began: None,
                requests: 0,
            }),
            changed: Notify::new(),
        })
    }

    fn phase(&self) -> MutexGuard<'_, Phase> {
        self.phase.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A request's head has been read: the connection is busy until the returned guard is
    /// dropped, which the response body does when its last byte is sent.
    pub fn begin_request(self: &Arc<Self>) -> InFlight {
        {
            let mut phase = self.phase();
            phase.in_flight += 1;
            phase.requests += 1;
            phase.head_began = None;
        }
        self.changed.notify_waiters();
        InFlight(self.clone())
    }

    /// Bytes came in: while waiting, a head has begun.
    fn bytes_arrived(&self) {
        let began = {
            let mut phase = self.phase();
            let begins = phase.in_flight == 0 && phase.head_began.is_none();
            if begins {
                phase.head_began = Some(Instant::now());
            }
            begins
        };
        if began {
            self.changed.notify_waiters();
        }
    }

    /// Since when the connection has been waiting, or `None` while a request is in flight.
    fn waiting_since(&self) -> Option<Instant> {
        let phase = self.phase();
        (phase.in_flight == 0).then_some(phase.waiting_since)
    }

    /// Completes when the connection has run out of time under `limits`; never while a request
    /// is in flight.
    ///
    /// # Cancel safety
    /// Cancel safe: it only watches.
    pub async fn expired(&self, limits: &ConnectionLimits) -> Expiry {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            // Registered before the phase is read, so no change between the two is missed.
            changed.as_mut().enable();
            let deadline = self.phase().deadline(limits);
            match deadline {
                None => changed.await,
                Some((at, expiry)) if at <= Instant::now() => return expiry,
                Some((at, _)) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(at) => {}
                        () = changed => {}
                    }
                }
            }
        }
    }
}

/// A request in flight on a connection; dropping it ends the request.
#[derive(Debug)]
pub struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        {
            let mut phase = self.0.phase();
            phase.in_flight = phase.in_flight.saturating_sub(1);
            if phase.in_flight == 0 {
                phase.waiting_since = Instant::now();
                phase.head_began = None;
            }
        }
        self.0.changed.notify_waiters();
    }
}

/// A connection's socket, telling its [`Activity`] when bytes arrive (the start of a head).
pub struct Watched<S> {
    inner: S,
    activity: Arc<Activity>,
}

impl<S> Watched<S> {
    pub fn new(inner: S, activity: Arc<Activity>) -> Self {
        Watched { inner, activity }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.activity.bytes_arrived();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// Every connection the server holds, and the caps ([`ConnectionLimits`]).
#[derive(Debug)]
pub struct Connections {
    limits: ConnectionLimits,
    table: Mutex<Table>,
}

#[derive(Debug, Default)]
struct Table {
    next_id: u64,
    /// Connections in the general slots, by id.
    held: HashMap<u64, Held>,
    /// How many of `held` each peer has (no entry for none).
    per_peer: HashMap<Peer, usize>,
    /// The connection in the slot held back for probes.
    probe: Option<(u64, Held)>,
}

#[derive(Debug)]
struct Held {
    peer: Peer,
    activity: Arc<Activity>,
    /// Cancelled to close the connection (displaced by a newer one).
    close: CancellationToken,
}

impl Table {
    /// The connection among `held` matching `which` that has been waiting longest, preferring
    /// the peers holding most (`by_crowd`).
    fn longest_waiting(&self, which: impl Fn(&Held) -> bool, by_crowd: bool) -> Option<u64> {
        self.held
            .iter()
            .filter(|(_, held)| which(held))
            .filter_map(|(id, held)| {
                let since = held.activity.waiting_since()?;
                let crowd = if by_crowd {
                    self.per_peer.get(&held.peer).copied().unwrap_or(0)
                } else {
                    0
                };
                Some((crowd, std::cmp::Reverse(since), *id))
            })
            .max()
            .map(|(_, _, id)| id)
    }

    /// Closes a held connection and frees its slot at once (its task ends on the signal).
    fn displace(&mut self, id: u64) {
        if let Some(held) = self.held.remove(&id) {
            held.close.cancel();
            self.forget_peer(held.peer);
        }
    }

    fn forget_peer(&mut self, peer: Peer) {
        if let Some(count) = self.per_peer.get_mut(&peer) {
            *count -= 1;
            if *count == 0 {
                self.per_peer.remove(&peer);
            }
        }
    }
}

/// What [`Connections::admit`] decided for a new connection.
#[derive(Debug)]
pub enum Admission {
    /// A general slot; `displaced` says whether a waiting connection was closed for it.
    Slot { slot: Slot, displaced: bool },
    /// The slot held back for probes: one request, `/healthz` and `/readyz` only.
    Probe(Slot),
    /// No room: answer 503 if the socket takes it at once, and close.
    Refused,
}

/// A connection's place among the server's connections, given up when dropped.
#[derive(Debug)]
pub struct Slot {
    connections: Arc<Connections>,
    id: u64,
    probe: bool,
    pub activity: Arc<Activity>,
    /// Cancelled when a newer connection takes this one's place: close it.
    pub closed: CancellationToken,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut table = self.connections.table();
        if self.probe {
            if table.probe.as_ref().is_some_and(|(id, _)| *id == self.id) {
                table.probe = None;
            }
        } else if let Some(held) = table.held.remove(&self.id) {
            table.forget_peer(held.peer);
        }
    }
}

impl Connections {
    pub fn new(limits: ConnectionLimits) -> Arc<Self> {
        Arc::new(Connections {
            limits,
            table: Mutex::default(),
        })
    }

    pub fn limits(&self) -> &ConnectionLimits {
        &self.limits
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Connections held now (the probe slot's included).
    pub fn open(&self) -> usize {
        let table = self.table();
        table.held.len() + usize::from(table.probe.is_some())
    }

    /// Finds a place for a new connection from `peer` (see the module's documentation).
    pub fn admit(self: &Arc<Self>, peer: Peer) -> Admission {
        let mut table = self.table();
        let from_peer = table.per_peer.get(&peer).copied().unwrap_or(0);
        let peer_full = from_peer >= self.limits.per_peer;
        let all_full = table.held.len() >= self.limits.max;
        let mut displaced = false;
        if peer_full || all_full {
            let victim = if peer_full {
                table.longest_waiting(|held| held.peer == peer, false)
            } else {
                table.longest_waiting(|_| true, true)
            };
            let Some(victim) = victim else {
                return self.admit_probe(table);
            };
            table.displace(victim);
            displaced = true;
        }
        table.next_id += 1;
        let (id, activity, close) = (table.next_id, Activity::new(), CancellationToken::new());
        table.held.insert(
            id,
            Held {
                peer,
                activity: activity.clone(),
                close: close.clone(),
            },
        );
        *table.per_peer.entry(peer).or_default() += 1;
        let slot = Slot {
            connections: self.clone(),
            id,
            probe: false,
            activity,
            closed: close,
        };
        Admission::Slot { slot, displaced }
    }

    /// The probe slot, if it is free or its holder is still waiting (which is then closed).
    fn admit_probe(self: &Arc<Self>, mut table: MutexGuard<'_, Table>) -> Admission {
        if let Some((_, holder)) = &table.probe {
            if holder.activity.waiting_since().is_none() {
                return Admission::Refused;
            }
            holder.close.cancel();
        }
        table.next_id += 1;
        let (id, activity, close) = (table.next_id, Activity::new(), CancellationToken::new());
        // The probe slot's connection counts for no peer: any address may probe.
        let holder = Held {
            peer: Peer::of(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED)),
            activity: activity.clone(),
            close: close.clone(),
        };
        table.probe = Some((id, holder));
        Admission::Probe(Slot {
            connections: self.clone(),
            id,
            probe: true,
            activity,
            closed: close,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max: usize, per_peer: usize) -> ConnectionLimits {
        ConnectionLimits {
            max,
            per_peer,
            header_timeout: Duration::from_millis(200),
            idle_timeout: Duration::from_millis(600),
        }
    }

    fn peer(last: u8) -> Peer {
        Peer::of(IpAddr::from([10, 0, 0, last]))
    }

    fn slot(admission: Admission) -> Slot {
        match admission {
            Admission::Slot { slot, .. } | Admission::Probe(slot) => slot,
            Admission::Refused => panic!("refused"),
        }
    }

    /// Lets the clock move on, so that connections admitted before and after wait for
    /// different times.
    fn tick() {
        std::thread::sleep(Duration::from_millis(2));
    }

    #[test]
    fn an_ipv6_peer_is_its_64_and_a_mapped_ipv4_is_its_ipv4() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::2".parse().unwrap();
        let other: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(Peer::of(a), Peer::of(b));
        assert_ne!(Peer::of(a), Peer::of(other));
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        assert_eq!(Peer::of(mapped), peer(1));
        assert_eq!(Peer::of(a).to_string(), "2001:db8:1:2::/64");
    }

    #[test]
    fn a_peer_over_its_share_displaces_its_own_longest_waiting_connection() {
        let connections = Connections::new(limits(10, 2));
        let other = slot(connections.admit(peer(9)));
        tick();
        let first = slot(connections.admit(peer(1)));
        tick();
        let second = slot(connections.admit(peer(1)));
        tick();
        let third = connections.admit(peer(1));
        assert!(matches!(
            third,
            Admission::Slot {
                displaced: true,
                ..
            }
        ));
        assert!(first.closed.is_cancelled(), "the oldest of the peer's own");
        assert!(!second.closed.is_cancelled());
        assert!(
            !other.closed.is_cancelled(),
            "waited longer, but another peer's"
        );
        assert_eq!(connections.open(), 3);
        drop(first);
        assert_eq!(connections.open(), 3, "a displaced slot is not freed twice");
        drop(second);
        assert_eq!(connections.open(), 2);
    }

    #[test]
    fn over_the_cap_the_crowded_peer_loses_a_waiting_connection_never_a_busy_one() {
        let connections = Connections::new(limits(3, 3));
        let lone = slot(connections.admit(peer(1)));
        tick();
        let busy = slot(connections.admit(peer(2)));
        let _request = busy.activity.begin_request();
        let crowd = slot(connections.admit(peer(2)));
        tick();
        assert!(matches!(
            connections.admit(peer(3)),
            Admission::Slot {
                displaced: true,
                ..
            }
        ));
        assert!(crowd.closed.is_cancelled(), "the peer holding most");
        assert!(
            !lone.closed.is_cancelled(),
            "waited longer, but its peer holds one"
        );
        assert!(
            !busy.closed.is_cancelled(),
            "a request in flight is never cut"
        );
    }

    #[test]
    fn when_every_connection_is_busy_one_more_gets_the_probe_slot() {
        let connections = Connections::new(limits(1, 1));
        let busy = slot(connections.admit(peer(1)));
        let _request = busy.activity.begin_request();
        let Admission::Probe(probe) = connections.admit(peer(1)) else {
            panic!("no probe slot")
        };
        // A newer connection takes the probe slot from a holder that sent nothing ...
        let Admission::Probe(newer) = connections.admit(peer(2)) else {
            panic!("no probe slot")
        };
        assert!(probe.closed.is_cancelled());
        drop(probe);
        // ... but not from one whose request is in flight.
        let _answering = newer.activity.begin_request();
        assert!(matches!(connections.admit(peer(3)), Admission::Refused));
        assert_eq!(connections.open(), 2);
        drop(newer);
        assert_eq!(connections.open(), 1);
    }

    #[test]
    fn the_deadline_follows_the_phase() {
        let limits = limits(1, 1);
        let at = Instant::now();
        let later = at + Duration::from_secs(7);
        let phase = |in_flight, requests, head_began| Phase {
            in_flight,
            waiting_since: at,
            head_began,
            requests,
        };
        let header = Some((at + limits.header_timeout, Expiry::Header));
        // The first head: the header timeout from the connect, whenever its first byte came.
        assert_eq!(phase(0, 0, None).deadline(&limits), header);
        assert_eq!(phase(0, 0, Some(later)).deadline(&limits), header);
        // Between requests: the idle timeout, then the header timeout from the first byte.
        let idle = Some((at + limits.idle_timeout, Expiry::Idle));
        assert_eq!(phase(0, 3, None).deadline(&limits), idle);
        let began = Some((later + limits.header_timeout, Expiry::Header));
        assert_eq!(phase(0, 3, Some(later)).deadline(&limits), began);
        // A request in flight: none.
        assert_eq!(phase(1, 3, None).deadline(&limits), None);
    }

    /// Runs the watchdog of `activity` and returns why and after how long it fired.
    async fn watch(activity: &Activity, limits: &ConnectionLimits) -> (Expiry, Duration) {
        let started = Instant::now();
        let expiry = tokio::time::timeout(Duration::from_secs(30), activity.expired(limits))
            .await
            .expect("the watchdog fired");
        (expiry, started.elapsed())
    }

    /// Not before `wanted` (a timer never fires early), and not forever.
    fn after(elapsed: Duration, wanted: Duration) -> bool {
        elapsed >= wanted && elapsed < wanted + Duration::from_secs(10)
    }

    #[tokio::test]
    async fn a_keep_alive_connection_waits_the_idle_timeout_then_has_the_header_timeout() {
        let connections = Connections::new(limits(1, 1));
        let slot = slot(connections.admit(peer(1)));
        let limits = *connections.limits();
        let (expiry, elapsed) = watch(&slot.activity, &limits).await;
        assert_eq!(expiry, Expiry::Header, "the first head");
        assert!(after(elapsed, limits.header_timeout), "{elapsed:?}");

        drop(slot.activity.begin_request());
        let (expiry, elapsed) = watch(&slot.activity, &limits).await;
        assert_eq!(expiry, Expiry::Idle);
        assert!(after(elapsed, limits.idle_timeout), "{elapsed:?}");

        drop(slot.activity.begin_request());
        // The head's first byte, while the watchdog waits for the idle timeout: the deadline
        // moves to the header timeout from that byte.
        let head = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            slot.activity.bytes_arrived();
        };
        let ((expiry, elapsed), ()) = tokio::join!(watch(&slot.activity, &limits), head);
        assert_eq!(expiry, Expiry::Header);
        assert!(after(elapsed, limits.header_timeout), "{elapsed:?}");
    }

    #[tokio::test]
    async fn a_request_in_flight_is_never_timed_out() {
        let connections = Connections::new(limits(1, 1));
        let slot = slot(connections.admit(peer(1)));
        let limits = *connections.limits();
        let request = slot.activity.begin_request();
        let longer = 3 * limits.idle_timeout;
        let cut = tokio::time::timeout(longer, slot.activity.expired(&limits)).await;
        assert!(cut.is_err(), "expired with a request in flight: {cut:?}");
        drop(request);
        let (expiry, elapsed) = watch(&slot.activity, &limits).await;
        assert_eq!(expiry, Expiry::Idle);
        assert!(after(elapsed, limits.idle_timeout), "{elapsed:?}");
    }
}
