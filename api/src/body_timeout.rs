//! The request body time limit: a body the server has waited on for longer than
//! `HTTP_BODY_TIMEOUT_MS` fails to read, and the request is answered 408 in the JSON envelope
//! (whatever error the handler made of the failed read), and the connection is closed. The
//! clock runs only while the server waits on the client: a body that is always ready when
//! read is never cut, however long the handler takes over it.

use crate::state::AppState;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::{Body as HttpBody, Frame, SizeHint};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep};

/// The error a timed-out body read gives.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {} ms", .0.as_millis())]
pub struct BodyTimedOut(pub Duration);

/// Middleware: gives each request body the deadline and answers 408 when it expired.
pub async fn limit(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let limit = state.config.http.body_timeout;
    let expired = Arc::new(AtomicBool::new(false));
    let req = req.map(|body| {
        Body::new(TimedBody {
            inner: body,
            limit,
            sleep: Box::pin(tokio::time::sleep_until(Instant::now() + limit)),
            expired: expired.clone(),
        })
    });
    let response = next.run(req).await;
    if !expired.load(Ordering::Acquire) {
        return response;
    }
    let mut response = (
        StatusCode::REQUEST_TIMEOUT,
        axum::Json(serde_json::json!({ "error": BodyTimedOut(limit).to_string() })),
    )
        .into_response();
    // The rest of the body is still on its way; the connection cannot carry another request.
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

struct TimedBody {
    inner: Body,
    limit: Duration,
    sleep: Pin<Box<Sleep>>,
    expired: Arc<AtomicBool>,
}

impl HttpBody for TimedBody {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        if this.expired.load(Ordering::Acquire) {
            return Poll::Ready(Some(Err(BodyTimedOut(this.limit).into())));
        }
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        if this.sleep.as_mut().poll(cx).is_ready() {
            this.expired.store(true, Ordering::Release);
            return Poll::Ready(Some(Err(BodyTimedOut(this.limit).into())));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
