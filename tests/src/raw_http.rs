//! One HTTP/1.1 exchange over a plain TCP connection (`Connection: close`), for tests that must
//! see exactly what the server sends: status lines, headers, endpoints beside `/mcp`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// What came back.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    /// The raw header lines, after the status line.
    head: String,
    /// The body, de-chunked.
    pub body: String,
}

impl Response {
    /// The value of header `name` (case-insensitive), if present.
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    }
}

/// Sends `head` (the request line and headers, each ending in CRLF, without the blank line)
/// and `body` to 127.0.0.1:`port`, and reads the whole answer (30 s at most).
///
/// # Panics
/// When the connection cannot be made or written to: a test's failure.
pub fn exchange(port: u16, head: &str, body: &str) -> Response {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "{head}Host: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut response = Response {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    };
    if response
        .header("transfer-encoding")
        .is_some_and(|v| v.contains("chunked"))
    {
        response.body = dechunk(body);
    }
    response
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}
