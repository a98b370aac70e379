//! The HTTP service under hostile load from clients without a token (issue 23): a head that
//! never ends is closed within the header timeout, an idle keep-alive connection within the
//! idle timeout while a long execution is not cut, one address cannot take more than its share,
//! `/healthz` is answered through the slot held back when every connection is busy, a flood of
//! 1,100 connections at systemd's default of 1,024 open files leaves `/healthz` and an
//! authenticated MCP client served with the server idle, the accept loop waits out a shortage of
//! descriptors instead of spinning, and `/metrics` takes its token.

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use sandbox_tests::{HttpServer, HttpStart, eventually, raw_http};
use serde_json::json;

const TOKEN: &str = "http-load-token-0123456789";

/// What each flood connection sends, and then nothing: the head of a request cut off in the
/// middle of a header (the issue's reproduction).
const PARTIAL_HEAD: &[u8] = b"GET /healthz HTTP/1.1\r\nX-a: ";

/// The flood of the issue: more connections than the open-file limit of 1,024.
const FLOOD: usize = 1100;

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

async fn start(how: HttpStart) -> HttpServer {
    HttpServer::start_with(how)
        .await
        .expect("the server starts")
}

fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, port))
}

/// A connection to the server from `source` (another loopback address is another peer).
async fn connect_from(source: Ipv4Addr, port: u16) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::from((source, 0))).unwrap();
    let stream = socket.connect(loopback(port)).await.unwrap();
    let stream = stream.into_std().unwrap();
    stream.set_nonblocking(false).unwrap();
    stream
}

/// Whether the server has closed `stream` (end of file or a reset) within `wait`; whatever it
/// sent before is read and dropped.
fn closed_within(stream: &mut TcpStream, wait: Duration) -> bool {
    let deadline = Instant::now() + wait;
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        stream.set_read_timeout(Some(left)).unwrap();
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return false;
            }
            Err(_) => return true,
        }
    }
}

/// Whether the server has closed `stream` already (looked at without waiting).
fn closed_now(stream: &TcpStream) -> bool {
    stream.set_nonblocking(true).unwrap();
    let mut byte = [0u8; 1];
    let closed = match stream.peek(&mut byte) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != ErrorKind::WouldBlock,
    };
    stream.set_nonblocking(false).unwrap();
    closed
}

/// Reads one HTTP/1.1 response with a `Content-Length` from a connection that stays open;
/// returns its status and body (status 0: none within `wait`).
fn read_response(stream: &mut TcpStream, wait: Duration) -> (u16, String) {
    stream.set_read_timeout(Some(wait)).unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&raw).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if body.len() >= length {
                let status = head
                    .split_whitespace()
                    .nth(1)
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                return (status, body[..length].to_owned());
            }
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return (0, text),
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
    }
}

/// `GET path` on a new connection, answered within `wait` (status 0: not answered).
fn get(port: u16, path: &str, bearer: Option<&str>, wait: Duration) -> (u16, String) {
    let Ok(mut stream) = TcpStream::connect_timeout(&loopback(port), wait) else {
        return (0, "no connection".into());
    };
    let auth = bearer.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}Connection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return (0, "not sent".into());
    }
    read_response(&mut stream, wait)
}

/// The CPU time (user and system) `pid` has used, in seconds.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let (_, fields) = stat.rsplit_once(") ").unwrap();
    let fields: Vec<&str> = fields.split_whitespace().collect();
    // utime and stime are the 14th and 15th fields; `fields` starts at the 3rd.
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf only reads a constant of the system.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    ticks as f64 / per_second
}

/// The share of one core `pid` uses over `span`. Not a speed target: a server that spins on a
/// failing accept uses all of one, an idle one almost none.
async fn cpu_share(pid: u32, span: Duration) -> f64 {
    let before = cpu_seconds(pid);
    tokio::time::sleep(span).await;
    (cpu_seconds(pid) - before) / span.as_secs_f64()
}

/// Raises this test process's soft open-file limit to hold `needed` descriptors.
fn hold_open_files(needed: u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit write or read the one struct given.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        assert!(
            limit.rlim_max >= needed,
            "this test holds {needed} sockets; the hard open-file limit is {}",
            limit.rlim_max
        );
        if limit.rlim_cur < needed {
            limit.rlim_cur = limit.rlim_max;
            assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
        }
    }
}

/// Sets the soft open-file limit of process `pid` (its hard limit stays).
fn set_open_file_limit(pid: u32, soft: u64) {
    let mut old = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: prlimit reads `new` and writes `old`, both valid; `pid` is our own child.
    unsafe {
        assert_eq!(
            libc::prlimit(pid as i32, libc::RLIMIT_NOFILE, std::ptr::null(), &mut old),
            0
        );
        let new = libc::rlimit {
            rlim_cur: soft,
            rlim_max: old.rlim_max,
        };
        assert_eq!(
            libc::prlimit(pid as i32, libc::RLIMIT_NOFILE, &new, std::ptr::null_mut()),
            0,
            "{}",
            std::io::Error::last_os_error()
        );
    }
}

/// Lines of the server's log containing `text`.
fn log_lines(log: &Path, text: &str) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(text))
        .map(str::to_owned)
        .collect()
}

/// Opens `count` connections that send [`PARTIAL_HEAD`] and then nothing. Those the server
/// closes at once are kept open on this side all the same: the flood is held.
fn flood(port: u16, count: usize) -> Vec<TcpStream> {
    (0..count)
        .filter_map(|_| {
            let stream =
                TcpStream::connect_timeout(&loopback(port), Duration::from_secs(2)).ok()?;
            let _ = (&stream).write_all(PARTIAL_HEAD);
            Some(stream)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_head_that_never_ends_is_closed_within_the_header_timeout() {
    let header_timeout = Duration::from_secs(2);
    let server = start(HttpStart {
        env: env(&[
            ("SANDBOX_HTTP_HEADER_TIMEOUT_SECS", "2"),
            // Far longer: a close within seconds is the header timeout's.
            ("SANDBOX_HTTP_IDLE_TIMEOUT_SECS", "60"),
        ]),
        ..HttpStart::default()
    })
    .await;
    let port = server.port();
    let slack = Duration::from_secs(5);
    // Each case: a connection, and since when its head has been running.
    let silent = || (TcpStream::connect(loopback(port)).unwrap(), Instant::now());
    let cut_off = || {
        let (mut stream, since) = silent();
        stream.write_all(PARTIAL_HEAD).unwrap();
        (stream, since)
    };
    let keep_alive = || {
        let (mut stream, _) = silent();
        let request = format!("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
        stream.write_all(request.as_bytes()).unwrap();
        let (status, _) = read_response(&mut stream, Duration::from_secs(10));
        assert_eq!(status, 200);
        stream.write_all(PARTIAL_HEAD).unwrap();
        (stream, Instant::now())
    };
    let results: Vec<(&str, bool, Duration)> = std::thread::scope(|scope| {
        let cases: Vec<(&str, Box<dyn Fn() -> (TcpStream, Instant) + Send + Sync>)> = vec![
            ("a connection that sends nothing", Box::new(silent)),
            ("a head cut off in a header", Box::new(cut_off)),
            (
                "the next head of a keep-alive connection",
                Box::new(keep_alive),
            ),
            (
                // A byte every half second does not restart the first head's clock.
                "a head trickled a byte at a time",
                Box::new(|| {
                    let (stream, since) = silent();
                    let mut writer = stream.try_clone().unwrap();
                    std::thread::spawn(move || {
                        for byte in PARTIAL_HEAD.iter().cycle().take(40) {
                            if writer.write_all(&[*byte]).is_err() {
                                break;
                            }
                            std::thread::sleep(Duration::from_millis(500));
                        }
                    });
                    (stream, since)
                }),
            ),
        ];
        let handles: Vec<_> = cases
            .into_iter()
            .map(|(name, open)| {
                scope.spawn(move || {
                    let (mut stream, since) = open();
                    let closed = closed_within(&mut stream, header_timeout + slack);
                    (name, closed, since.elapsed())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (name, closed, after) in results {
        assert!(closed, "{name}: still open after {after:?}");
        assert!(
            after >= header_timeout - Duration::from_millis(100),
            "{name}: closed after {after:?}, before the header timeout"
        );
    }
    // The server serves on.
    let (status, _) = get(port, "/healthz", None, Duration::from_secs(10));
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_connection_is_closed_but_a_long_execution_is_not() {
    let idle_timeout = Duration::from_secs(2);
    let server = start(HttpStart {
        env: env(&[
            ("SANDBOX_HTTP_TOKEN", TOKEN),
            ("SANDBOX_HTTP_IDLE_TIMEOUT_SECS", "2"),
            ("SANDBOX_HTTP_HEADER_TIMEOUT_SECS", "2"),
        ]),
        ..HttpStart::default()
    })
    .await;
    let port = server.port();
    let client = server.connect(Some(TOKEN)).await.unwrap();
    // An execution three times as long as the idle timeout, over Streamable HTTP: its request
    // is in flight until the answer's last byte.
    let execution = tokio::spawn(async move {
        let code = "import time\ntime.sleep(6)\nprint('still here')";
        let reply = client.exec("python", code, json!({})).await;
        (reply, client)
    });
    let mut idle = TcpStream::connect(loopback(port)).unwrap();
    let request = format!("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    idle.write_all(request.as_bytes()).unwrap();
    assert_eq!(read_response(&mut idle, Duration::from_secs(10)).0, 200);
    let idle_since = Instant::now();
    let closed = tokio::task::spawn_blocking(move || {
        closed_within(&mut idle, idle_timeout + Duration::from_secs(5))
    })
    .await
    .unwrap();
    let after = idle_since.elapsed();
    assert!(
        closed,
        "an idle keep-alive connection still open after {after:?}"
    );
    assert!(
        after >= idle_timeout - Duration::from_millis(100),
        "{after:?}"
    );

    let (reply, client) = execution.await.unwrap();
    let reply = reply.expect("the long execution is answered");
    assert!(!reply.is_error, "{reply:?}");
    assert_eq!(reply.str("stdout"), "still here\n");
    assert!(
        reply.elapsed >= Duration::from_secs(6),
        "{:?}",
        reply.elapsed
    );
    // The client's own idle connections were closed meanwhile; it opens new ones.
    let again = client
        .exec("python", "print(6 * 7)", json!({}))
        .await
        .unwrap();
    assert_eq!(again.str("stdout"), "42\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_over_its_share_loses_its_own_oldest_connections() {
    let share = 4;
    let server = start(HttpStart {
        env: env(&[
            ("SANDBOX_HTTP_MAX_CONNECTIONS", "64"),
            ("SANDBOX_HTTP_MAX_CONNECTIONS_PER_PEER", "4"),
            // Only the caps close connections here.
            ("SANDBOX_HTTP_HEADER_TIMEOUT_SECS", "300"),
        ]),
        ..HttpStart::default()
    })
    .await;
    let port = server.port();
    // Another address's connection, opened first: the longest waiting of all.
    let mut other = connect_from(Ipv4Addr::new(127, 0, 0, 3), port).await;
    other.write_all(PARTIAL_HEAD).unwrap();
    let mut crowd = Vec::new();
    for _ in 0..10 {
        let mut stream = connect_from(Ipv4Addr::new(127, 0, 0, 2), port).await;
        stream.write_all(PARTIAL_HEAD).unwrap();
        crowd.push(stream);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The crowd's six oldest were closed, promptly; its four newest and the other address's
    // connection are open.
    let (oldest, newest) = crowd.split_at_mut(10 - share);
    for (i, stream) in oldest.iter_mut().enumerate() {
        assert!(
            closed_within(stream, Duration::from_secs(5)),
            "connection {i} of the crowd is still open"
        );
    }
    for (i, stream) in newest.iter().enumerate() {
        assert!(!closed_now(stream), "the crowd's newest {i} was closed");
    }
    assert!(
        !closed_now(&other),
        "another address's connection was closed"
    );
    let (status, _) = get(port, "/healthz", None, Duration::from_secs(10));
    assert_eq!(status, 200);
    assert!(
        !closed_now(&other),
        "closed for a probe from a third address"
    );
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_is_answered_through_the_held_back_slot_when_every_connection_is_busy() {
    let server = start(HttpStart {
        env: env(&[
            ("SANDBOX_HTTP_MAX_CONNECTIONS", "4"),
            ("SANDBOX_HTTP_HEADER_TIMEOUT_SECS", "300"),
        ]),
        ..HttpStart::default()
    })
    .await;
    let port = server.port();
    // Four requests in flight: MCP messages whose body never comes whole (on loopback without
    // a token, anyone may send one). They cannot be displaced: a request in flight is never cut.
    let mut busy = Vec::new();
    for _ in 0..4 {
        let mut stream = TcpStream::connect(loopback(port)).unwrap();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{{"
        );
        stream.write_all(head.as_bytes()).unwrap();
        busy.push(stream);
    }
    // Time for the server to read their heads (milliseconds; a second for a loaded machine):
    // until then they are waiting, and a new connection could displace one.
    tokio::time::sleep(Duration::from_secs(1)).await;
    // A probe still gets its answer, on the held-back slot, which closes after it.
    let mut probe = TcpStream::connect(loopback(port)).unwrap();
    let request = format!("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    probe.write_all(request.as_bytes()).unwrap();
    let (status, body) = read_response(&mut probe, Duration::from_secs(10));
    assert_eq!((status, body.as_str()), (200, r#"{"status":"ok"}"#));
    assert!(
        closed_within(&mut probe, Duration::from_secs(5)),
        "one request only"
    );
    let (status, _) = get(port, "/readyz", None, Duration::from_secs(10));
    assert!(status == 200 || status == 503, "{status}");
    // Anything else on that slot is told to come back, at once.
    let refused = raw_http::exchange(
        port,
        "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n",
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    );
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(refused.header("retry-after").as_deref(), Some("1"));
    for stream in &busy {
        assert!(!closed_now(stream), "a request in flight was cut");
    }
    // Once the busy requests end, everything is served again.
    drop(busy);
    let served = eventually(Duration::from_secs(10), || {
        raw_http::exchange(port, "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n", "{}").status != 503
    })
    .await;
    assert!(served, "still at the connection limit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_without_a_token_at_1024_open_files_leaves_health_and_clients_served() {
    hold_open_files(FLOOD as u64 + 256);
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("server.log");
    let server = start(HttpStart {
        env: env(&[
            ("SANDBOX_HTTP_TOKEN", TOKEN),
            ("RUST_LOG", "info"),
            // Sessions whose descriptors fit under 1,024 beside the connections.
            ("SANDBOX_MAX_SESSIONS", "32"),
            // Only the caps defend here: no flood connection times out during the test.
            ("SANDBOX_HTTP_HEADER_TIMEOUT_SECS", "300"),
        ]),
        // systemd's default for a service.
        open_files: Some(1024),
        log: Some(log.clone()),
        ..HttpStart::default()
    })
    .await;
    let port = server.port();
    let before = get(port, "/healthz", None, Duration::from_secs(10));
    assert_eq!(before.0, 200);

    let held = tokio::task::spawn_blocking(move || flood(port, FLOOD))
        .await
        .unwrap();
    let share = cpu_share(server.pid, Duration::from_secs(2)).await;
    assert!(
        share < 0.3,
        "the server used {:.0} % of a core",
        share * 100.0
    );
    let (status, body) = get(port, "/healthz", None, Duration::from_secs(10));
    assert_eq!((status, body.as_str()), (200, r#"{"status":"ok"}"#));
    let client = tokio::time::timeout(Duration::from_secs(30), server.connect(Some(TOKEN)))
        .await
        .expect("the MCP handshake under the flood")
        .unwrap();
    let reply = client
        .exec("python", "print(6 * 7)", json!({}))
        .await
        .unwrap();
    assert_eq!(reply.str("stdout"), "42\n", "{reply:?}");
    // The flood's connections beyond its address's share were closed, not left hanging.
    let open = held.iter().filter(|s| !closed_now(s)).count();
    assert!(open <= 256, "{open} of the flood's connections are open");
    let (status, _) = get(port, "/healthz", None, Duration::from_secs(10));
    assert_eq!(status, 200);
    assert_eq!(
        log_lines(&log, "HTTP connection caps reached").len(),
        1,
        "one line for the whole flood"
    );

    drop(held);
    let (status, _) = get(port, "/healthz", None, Duration::from_secs(10));
    assert_eq!(status, 200, "after the flood");
    let again = client
        .exec("python", "print(7 * 6)", json!({}))
        .await
        .unwrap();
    assert_eq!(again.str("stdout"), "42\n", "{again:?}");
    let fresh = server.connect(Some(TOKEN)).await.unwrap();
    let reply = fresh
        .exec("python", "print(1 + 1)", json!({}))
        .await
        .unwrap();
    assert_eq!(reply.str("stdout"), "2\n", "{reply:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_waits_out_a_shortage_of_descriptors_without_spinning() {
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("server.log");
    let server = start(HttpStart {
        env: env(&[
            ("RUST_LOG", "info"),
            ("SANDBOX_WORKER_POOL", "0"),
            ("SANDBOX_HTTP_HEADER_TIMEOUT_SECS", "300"),
        ]),
        log: Some(log.clone()),
        ..HttpStart::default()
    })
    .await;
    let port = server.port();
    let ready = eventually(Duration::from_secs(60), || {
        get(port, "/readyz", None, Duration::from_secs(5)).0 == 200
    })
    .await;
    assert!(ready, "never ready");
    // A few descriptors left: the server runs out after a few connections, and the rest wait
    // in the backlog while accept fails with EMFILE.
    let open_now = std::fs::read_dir(format!("/proc/{}/fd", server.pid))
        .unwrap()
        .count() as u64;
    set_open_file_limit(server.pid, open_now + 4);
    let held = tokio::task::spawn_blocking(move || flood(port, 40))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let share = cpu_share(server.pid, Duration::from_secs(2)).await;
    assert!(
        share < 0.3,
        "the server used {:.0} % of a core",
        share * 100.0
    );
    // One warning for the shortage, even when a descriptor freed for a moment lets a
    // connection through and the failures start again (seen on loaded machines).
    let failing = log_lines(&log, "cannot accept connections");
    assert_eq!(failing.len(), 1, "one line for the shortage: {failing:#?}");

    set_open_file_limit(server.pid, 1024);
    drop(held);
    let (status, _) = get(port, "/healthz", None, Duration::from_secs(10));
    assert_eq!(status, 200);
    // Each stretch's end is logged with its count (one stretch, or more when it flapped).
    let recovered = log_lines(&log, "accepting connections again");
    assert!(!recovered.is_empty(), "{recovered:#?}");
    let failures: u64 = recovered
        .iter()
        .filter_map(|line| {
            let (_, rest) = line.split_once("failures=")?;
            rest.split_whitespace().next()?.parse::<u64>().ok()
        })
        .sum();
    assert!(
        failures >= 2,
        "the stretches counted their failures: {recovered:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_take_their_token() {
    let wait = Duration::from_secs(10);
    // On loopback without a metrics token: open, as before.
    let open = start(HttpStart::default()).await;
    assert_eq!(get(open.port(), "/metrics", None, wait).0, 200);
    drop(open);
    // With one: 401 without it or with a wrong one, 200 with it.
    let guarded = start(HttpStart {
        env: env(&[("SANDBOX_METRICS_TOKEN", "metrics-secret-42")]),
        ..HttpStart::default()
    })
    .await;
    let port = guarded.port();
    assert_eq!(get(port, "/metrics", None, wait).0, 401);
    assert_eq!(get(port, "/metrics", Some("metrics-secret-4"), wait).0, 401);
    let (status, body) = get(port, "/metrics", Some("metrics-secret-42"), wait);
    assert_eq!(status, 200);
    assert!(body.contains("sandbox_max_sessions"), "{body}");
    assert_eq!(get(port, "/healthz", None, wait).0, 200, "probes need none");
    drop(guarded);
    // Beyond loopback without a metrics token: an HTTP token opens it, nothing else does.
    let exposed = start(HttpStart {
        env: env(&[("SANDBOX_HTTP_TOKEN", TOKEN)]),
        listen_ip: Some(IpAddr::V4(Ipv4Addr::UNSPECIFIED)),
        ..HttpStart::default()
    })
    .await;
    let port = exposed.port();
    assert_eq!(get(port, "/metrics", None, wait).0, 401);
    assert_eq!(get(port, "/metrics", Some(TOKEN), wait).0, 200);
}
