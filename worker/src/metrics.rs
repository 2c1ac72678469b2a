//! Prometheus text metrics on a port of the worker's own: job outcomes counted in this process,
//! open jobs per kind and state from PostgreSQL, and queue depth in Redis.

use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use jobs::handlers::{JobContext, Outcome};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt as _;

#[derive(Default)]
pub struct Metrics {
    succeeded: AtomicU64,
    retrying: AtomicU64,
    failed: AtomicU64,
    skipped: AtomicU64,
    errors: AtomicU64,
}

impl Metrics {
    pub fn record(&self, outcome: Outcome) {
        let counter = match outcome {
            Outcome::Succeeded => &self.succeeded,
            Outcome::Retrying => &self.retrying,
            Outcome::Failed => &self.failed,
            Outcome::Skipped => &self.skipped,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub fn record_error(&self) {
        self.errors.fetch_add(1, Ordering::Relaxed);
    }

    pub async fn render(&self, ctx: &JobContext) -> String {
        let mut out = String::new();
        out.push_str("# HELP ssp_job_outcomes_total Job executions by outcome in this process.\n");
        out.push_str("# TYPE ssp_job_outcomes_total counter\n");
        for (name, c) in [
            ("succeeded", &self.succeeded),
            ("retrying", &self.retrying),
            ("failed", &self.failed),
            ("skipped", &self.skipped),
            ("error", &self.errors),
        ] {
            let _ = writeln!(
                out,
                "ssp_job_outcomes_total{{outcome=\"{name}\"}} {}",
                c.load(Ordering::Relaxed)
            );
        }
        out.push_str(
            "# HELP ssp_jobs Open jobs in PostgreSQL by kind and status.\n# TYPE ssp_jobs gauge\n",
        );
        if let Ok(rows) = jobs::runs::open_counts(&ctx.db).await {
            for (kind, status, n) in rows {
                let _ = writeln!(out, "ssp_jobs{{kind=\"{kind}\",status=\"{status}\"}} {n}");
            }
        }
        out.push_str("# HELP ssp_queue_depth Task ids waiting in Redis by queue.\n# TYPE ssp_queue_depth gauge\n");
        for kind in crate::QUEUES {
            if let Ok(n) = ctx.queues.depth(kind).await {
                let _ = writeln!(out, "ssp_queue_depth{{queue=\"{}\"}} {n}", kind.as_str());
            }
        }
        out
    }
}

/// How long one metrics connection may last, request and answer together. A scrape is one
/// request answered in milliseconds; a client that sends its headers slowly or keeps the
/// connection open is cut off here, so it neither holds a socket nor delays shutdown.
const CONNECTION_LIMIT: Duration = Duration::from_secs(10);

/// Serves `/metrics` until `stop`, one request per connection, each connection within
/// [`CONNECTION_LIMIT`]. Unlike `axum::serve`, it does not wait on open connections when it
/// stops: a half-sent request cannot hold the worker's shutdown.
pub async fn serve(port: u16, metrics: Arc<Metrics>, ctx: JobContext, stop: CancellationToken) {
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let (metrics, ctx) = (metrics.clone(), ctx.clone());
            async move { metrics.render(&ctx).await }
        }),
    );
    let listener = match tokio::net::TcpListener::bind(("0.0.0.0", port)).await {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(port, error = %e, "metrics port unavailable; metrics are off");
            return;
        }
    };
    tracing::info!(port, "metrics on /metrics");
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors and the like: wait a little rather than spin.
                    tracing::warn!(error = %e, "metrics accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = stop.cancelled() => return,
        };
        let app = app.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
                app.clone().oneshot(req.map(axum::body::Body::new))
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .keep_alive(false)
                .serve_connection(TokioIo::new(stream), service);
            if tokio::time::timeout(CONNECTION_LIMIT, connection)
                .await
                .is_err()
            {
                tracing::debug!("metrics connection closed: over its time limit");
            }
        });
    }
}
