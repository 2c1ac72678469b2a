//! One connection's clock and its socket. The clock says, at any moment, what the connection is
//! waiting for and until when: the first byte of a next request (idle limit), the rest of a
//! request's head (header limit), or nothing while a request is being answered. The socket
//! wrapper feeds it the first byte of each head, and gives hyper's own error answers (to heads
//! it cannot parse) the JSON envelope every other answer has.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::Instant;

#[derive(Debug)]
struct Track {
    /// Requests whose head was parsed and whose answer is not ready yet.
    in_flight: usize,
    /// Since when no request has been in flight (accept, or the last answer).
    idle_since: Instant,
    /// The first byte of the next head, while it is being read.
    head_started: Option<Instant>,
}

/// What the connection waits for next, and what happens when the wait runs out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deadline {
    /// A request is being answered: no limit here (the body limit is the router's).
    None,
    /// Close the connection at this instant.
    CloseAt(Instant),
}

#[derive(Debug)]
pub struct ConnState {
    track: Mutex<Track>,
    /// Woken on every change that moves the deadline.
    pub changed: Notify,
}

impl ConnState {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            track: Mutex::new(Track {
                in_flight: 0,
                idle_since: Instant::now(),
                head_started: None,
            }),
            changed: Notify::new(),
        })
    }

    fn with<T>(&self, f: impl FnOnce(&mut Track) -> T) -> T {
        f(&mut self.track.lock().unwrap_or_else(PoisonError::into_inner))
    }

    pub fn deadline(&self, header: Duration, idle: Duration) -> Deadline {
        self.with(|t| {
            if t.in_flight > 0 {
                Deadline::None
            } else if let Some(start) = t.head_started {
                Deadline::CloseAt(start + header)
            } else {
                Deadline::CloseAt(t.idle_since + idle)
            }
        })
    }

    /// A head was parsed: the router has the request.
    pub fn request_started(&self) {
        self.with(|t| {
            t.in_flight += 1;
            t.head_started = None;
        });
        self.changed.notify_one();
    }

    /// The router's answer is ready (hyper writes it next).
    pub fn request_answered(&self) {
        self.with(|t| {
            t.in_flight = t.in_flight.saturating_sub(1);
            if t.in_flight == 0 {
                t.idle_since = Instant::now();
            }
        });
        self.changed.notify_one();
    }

    fn bytes_read(&self) {
        let started = self.with(|t| {
            if t.in_flight == 0 && t.head_started.is_none() {
                t.head_started = Some(Instant::now());
                true
            } else {
                false
            }
        });
        if started {
            self.changed.notify_one();
        }
    }

    fn answering(&self) -> bool {
        self.with(|t| t.in_flight > 0)
    }
}

/// Marks a request answered when dropped, so a request whose handler is cancelled (the client
/// went away) does not keep the connection counted as busy.
pub struct InFlight(pub Arc<ConnState>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.request_answered();
    }
}

/// The TCP stream of one connection, reporting to its [`ConnState`].
pub struct Watched<IO> {
    io: IO,
    state: Arc<ConnState>,
    max_header_bytes: usize,
    /// A rewritten automatic answer being written: (bytes, written so far, length hyper gave).
    rewrite: Option<(Vec<u8>, usize, usize)>,
}

impl<IO> Watched<IO> {
    pub fn new(io: IO, state: Arc<ConnState>, max_header_bytes: usize) -> Self {
        Self {
            io,
            state,
            max_header_bytes,
            rewrite: None,
        }
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Watched<IO> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        ready!(Pin::new(&mut self.io).poll_read(cx, buf))?;
        if buf.filled().len() > before {
            self.state.bytes_read();
        }
        Poll::Ready(Ok(()))
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Watched<IO> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.rewrite.is_none() && !this.state.answering() {
            if let Some(bytes) = enveloped(buf, this.max_header_bytes) {
                this.rewrite = Some((bytes, 0, buf.len()));
            }
        }
        if let Some((bytes, written, claimed)) = &mut this.rewrite {
            while *written < bytes.len() {
                let n = ready!(Pin::new(&mut this.io).poll_write(cx, &bytes[*written..]))?;
                if n == 0 {
                    return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
                }
                *written += n;
            }
            // hyper closes the connection after its own error answers; nothing follows.
            return Poll::Ready(Ok(*claimed));
        }
        Pin::new(&mut this.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// hyper answers a head it cannot parse itself (400, 414, 431) with an empty body and no
/// content type, which no answer of the router has (its errors are all JSON). Such an answer,
/// written whole while no request is in flight, is given the envelope; anything else is `None`.
fn enveloped(buf: &[u8], max_header_bytes: usize) -> Option<Vec<u8>> {
    if buf.len() > 1024 || !buf.ends_with(b"\r\n\r\n") {
        return None;
    }
    let head = std::str::from_utf8(buf).ok()?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next()?;
    let code: u16 = status_line
        .strip_prefix("HTTP/1.1 ")
        .or_else(|| status_line.strip_prefix("HTTP/1.0 "))?
        .get(..3)?
        .parse()
        .ok()?;
    if !(400..600).contains(&code) {
        return None;
    }
    let mut date = None;
    let mut empty = false;
    for line in lines.filter(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':')?;
        match name.trim().to_ascii_lowercase().as_str() {
            "content-type" => return None,
            "content-length" => empty = value.trim() == "0",
            "date" => date = Some(value.trim().to_owned()),
            _ => {}
        }
    }
    if !empty {
        return None;
    }
    let message = match code {
        431 => format!("the request line and headers are larger than {max_header_bytes} bytes"),
        414 => "the request target is too long".to_owned(),
        400 => "the request is not well-formed HTTP/1.1".to_owned(),
        _ => axum::http::StatusCode::from_u16(code)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("error")
            .to_lowercase(),
    };
    let body = serde_json::json!({ "error": message }).to_string();
    let mut out = format!(
        "{status_line}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    if let Some(d) = date {
        out.push_str(&format!("date: {d}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(&body);
    Some(out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn automatic_answers_get_the_envelope_and_router_answers_do_not() {
        let bare = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\ndate: Mon, 23 Nov 2026 10:00:00 GMT\r\n\r\n";
        let out = String::from_utf8(enveloped(bare, 32_768).unwrap()).unwrap();
        let (head, body) = out.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
        assert!(head.contains("content-type: application/json"));
        assert!(head.contains("date: Mon, 23 Nov 2026 10:00:00 GMT"));
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert!(v["error"].as_str().unwrap().contains("32768 bytes"));
        let routed = b"HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 0\r\n\r\n";
        assert!(enveloped(routed, 1).is_none());
        let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
        assert!(enveloped(ok, 1).is_none());
        let with_body = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\n{}";
        assert!(enveloped(with_body, 1).is_none());
    }
}
