//! The in-process server's log lines, captured for a test. `#[tokio::test]` runs the server's
//! tasks on the test's own thread, so a thread-local subscriber sees every request line.

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// JSON log lines written on this thread while it is alive.
pub struct LogCapture {
    lines: Shared,
    _guard: tracing::subscriber::DefaultGuard,
}

impl LogCapture {
    pub fn start() -> Self {
        use tracing_subscriber::util::SubscriberInitExt as _;
        let lines = Shared::default();
        let writer = lines.clone();
        let guard = tracing_subscriber::fmt()
            .json()
            .with_max_level(tracing_subscriber::filter::LevelFilter::INFO)
            .with_writer(move || writer.clone())
            .finish()
            .set_default();
        Self {
            lines,
            _guard: guard,
        }
    }

    /// The request lines (one per finished request) whose path is `path`, parsed.
    pub fn requests(&self, path: &str) -> Vec<serde_json::Value> {
        let bytes = self
            .lines
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        String::from_utf8_lossy(&bytes)
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["fields"]["message"] == "request" && v["span"]["path"] == path)
            .collect()
    }
}
