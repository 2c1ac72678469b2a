//! A client on a plain TCP socket, for what a well-behaved HTTP client never does: stop halfway
//! through a head or a body, sit idle, or go away mid-request.

use serde_json::Value;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

pub struct RawConn {
    stream: TcpStream,
}

/// How a connection ended, seen from the client.
#[derive(Debug)]
pub struct Ended {
    /// Everything the server sent before closing.
    pub received: Vec<u8>,
    /// From the call to the close.
    pub after: Duration,
}

impl RawConn {
    /// Connects to a server base URL such as `http://127.0.0.1:1234`.
    pub async fn connect(base: &str) -> Self {
        let addr = base.trim_start_matches("http://");
        let stream = TcpStream::connect(addr).await.expect("server accepts");
        Self { stream }
    }

    /// Writes all of `bytes`; `false` when the server has already closed the connection.
    pub async fn send(&mut self, bytes: &[u8]) -> bool {
        self.stream.write_all(bytes).await.is_ok()
    }

    /// Reads until the server closes the connection (end of stream or reset); `None` if it is
    /// still open after `limit` (a deadline for a test that would otherwise hang).
    pub async fn wait_closed(&mut self, limit: Duration) -> Option<Ended> {
        let start = Instant::now();
        let mut received = Vec::new();
        let mut buf = vec![0u8; 64 * 1024];
        let read_all = async {
            loop {
                match self.stream.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => received.extend_from_slice(&buf[..n]),
                }
            }
        };
        tokio::time::timeout(limit, read_all).await.ok()?;
        Some(Ended {
            received,
            after: start.elapsed(),
        })
    }

    /// Reads one response (status and JSON body, by its content-length); `None` if none
    /// arrived within `limit`.
    pub async fn response(&mut self, limit: Duration) -> Option<(u16, Value)> {
        let mut received = Vec::new();
        let mut buf = vec![0u8; 64 * 1024];
        let read_one = async {
            loop {
                if let Some(parsed) = parse_response(&received) {
                    return Some(parsed);
                }
                match self.stream.read(&mut buf).await {
                    Ok(0) | Err(_) => return parse_response(&received),
                    Ok(n) => received.extend_from_slice(&buf[..n]),
                }
            }
        };
        tokio::time::timeout(limit, read_one).await.ok().flatten()
    }

    /// Drops the socket: the client goes away.
    pub fn close(self) {
        drop(self.stream);
    }
}

/// The head of a request with a body, as bytes.
pub fn head(method: &str, path: &str, api_key: &str, content_type: &str, length: usize) -> String {
    format!(
        "{method} {path} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {api_key}\r\n\
         Content-Type: {content_type}\r\nContent-Length: {length}\r\n\r\n"
    )
}

/// (status, JSON body) of a complete response in `bytes`, or `None` while incomplete.
pub fn parse_response(bytes: &[u8]) -> Option<(u16, Value)> {
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&bytes[..end]).ok()?;
    let status: u16 = head.split(' ').nth(1)?.parse().ok()?;
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    let body = bytes.get(end + 4..end + 4 + length)?;
    let text = String::from_utf8_lossy(body);
    let value = serde_json::from_str(&text).unwrap_or(Value::String(text.into_owned()));
    Some((status, value))
}
