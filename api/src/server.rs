//! Serving with time limits and graceful shutdown. `axum::serve` sets no limit on how long a
//! client may take to send its headers or keep an idle connection, so this is its accept loop
//! over hyper's HTTP/1 connection, with a clock per connection ([`conn`]):
//!
//! - a request's line and headers must arrive within `HTTP_HEADER_TIMEOUT_MS` of their first
//!   byte, or the connection is closed (slowloris);
//! - a keep-alive connection with no request for `HTTP_IDLE_TIMEOUT_MS` is closed;
//! - headers over `HTTP_MAX_HEADER_BYTES` get a 431 in the JSON envelope;
//! - the body limit (`HTTP_BODY_TIMEOUT_MS`, 408) is the router's: see [`crate::body_timeout`].

mod conn;

use crate::state::AppState;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use jobs::config::HttpSettings;
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tower::ServiceExt as _;

/// How long SIGTERM waits for requests in flight before the process exits anyway (platforms
/// send SIGKILL after about as long).
const DRAIN_LIMIT: Duration = Duration::from_secs(30);

/// Serves on an already bound listener until `shutdown` resolves, then finishes the requests in
/// flight (idle connections close at once). Tests bind port 0 and pass the listener in, so no
/// sleep is needed for start-up.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let limits = state.config.http.clone();
    let app = crate::app(state);
    let (stop_tx, stop_rx) = watch::channel(false);
    let (done_tx, done_rx) = watch::channel(());
    tokio::pin!(shutdown);
    loop {
        let (stream, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: wait a little rather than spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let app = app.clone();
        let limits = limits.clone();
        let stop = stop_rx.clone();
        let done = done_rx.clone();
        tokio::spawn(async move {
            serve_connection(stream, remote, app, &limits, stop).await;
            drop(done);
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    drop(done_rx);
    if tokio::time::timeout(DRAIN_LIMIT, done_tx.closed())
        .await
        .is_err()
    {
        tracing::warn!(
            connections = done_tx.receiver_count(),
            "requests still in flight after the drain limit; exiting anyway"
        );
    }
    Ok(())
}

async fn serve_connection(
    stream: TcpStream,
    remote: SocketAddr,
    app: axum::Router,
    limits: &HttpSettings,
    mut stop: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let state = conn::ConnState::new();
    let io = TokioIo::new(conn::Watched::new(
        stream,
        state.clone(),
        limits.max_header_bytes,
    ));
    let service = {
        let state = state.clone();
        hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
            state.request_started();
            let guard = conn::InFlight(state.clone());
            let mut req = req.map(axum::body::Body::new);
            req.extensions_mut().insert(ConnectInfo(remote));
            let app = app.clone();
            async move {
                let response = app.oneshot(req).await;
                drop(guard);
                response
            }
        })
    };
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .max_header_size(limits.max_header_bytes)
        // The connection clock below owns the header limit (counted from a head's first byte,
        // not from the end of the previous answer as hyper's own would be).
        .header_read_timeout(None);
    let connection = builder.serve_connection(io, service);
    tokio::pin!(connection);
    let mut draining = *stop.borrow();
    if draining {
        connection.as_mut().graceful_shutdown();
    }
    loop {
        let deadline = state.deadline(limits.header_timeout, limits.idle_timeout);
        let wait = async {
            match deadline {
                conn::Deadline::None => std::future::pending::<()>().await,
                conn::Deadline::CloseAt(at) => tokio::time::sleep_until(at).await,
            }
        };
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(error = %e, %remote, "connection ended with an error");
                }
                return;
            }
            () = state.changed.notified() => {}
            () = wait => {
                // Re-read: a head may have started or a request begun since the deadline was
                // taken, and the notification is handled on the next turn.
                if state.deadline(limits.header_timeout, limits.idle_timeout) == deadline {
                    tracing::debug!(%remote, "connection closed: header or idle limit");
                    return;
                }
            }
            changed = stop.changed(), if !draining => {
                if changed.is_err() || *stop.borrow() {
                    draining = true;
                    connection.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

/// Resolves on SIGTERM (how platforms stop a process) or Ctrl-C.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutdown signal received; draining requests in flight");
}
