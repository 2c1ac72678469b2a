//! The application's assembly: the `/api/v1` tree (`crate::routes`), the dashboard's pages
//! (`crate::dashboard`), health checks and the API reference page under one router, with the
//! fallbacks for unknown routes and methods and the layers every answer passes through (body
//! limit, panic guard, error envelope, body time limit, request log).

use crate::error::ApiError;
use crate::extract::JSON_BODY_LIMIT;
use crate::state::AppState;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{header, HeaderValue, Method, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use std::time::Instant;
use tower_http::catch_panic::CatchPanicLayer;
use tracing::Instrument as _;

/// The whole application, ready to serve.
pub fn app(state: AppState) -> Router {
    Router::new()
        .merge(crate::routes::api_v1(state.clone()))
        .merge(crate::health::router())
        .merge(crate::docs_page::router())
        .merge(crate::dashboard::router(state.clone()))
        .fallback(unknown_route)
        .method_not_allowed_fallback(wrong_method)
        .layer(DefaultBodyLimit::max(JSON_BODY_LIMIT))
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(middleware::from_fn(envelope_errors))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            crate::body_timeout::limit,
        ))
        .layer(middleware::from_fn(baseline_headers))
        .layer(middleware::from_fn(log_request))
        .with_state(state)
}

/// Headers of every answer, whichever part of the app (or fallback) made it: `nosniff`, so no
/// answer is read as another type than it says, and on an HTML page made outside the
/// dashboard's own layer (the not-found page of an unknown address, say) the pages' security
/// headers.
async fn baseline_headers(req: Request, next: Next) -> Response {
    let mut response = next.run(req).await;
    let h = response.headers_mut();
    let html = h
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/html"));
    if html && !h.contains_key(header::CONTENT_SECURITY_POLICY) {
        crate::dashboard::page_security_headers(h, crate::dashboard::CSP);
        h.entry(header::CACHE_CONTROL)
            .or_insert(HeaderValue::from_static("no-store"));
    }
    h.entry(header::X_CONTENT_TYPE_OPTIONS)
        .or_insert(HeaderValue::from_static("nosniff"));
    response
}

async fn unknown_route(method: Method, uri: Uri, headers: axum::http::HeaderMap) -> Response {
    let wants_html = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/html"));
    if wants_html && method == Method::GET && !uri.path().starts_with("/api/") {
        // A browser's wrong address gets a page; any other client the JSON envelope.
        return crate::dashboard::page::error_page(
            axum::http::StatusCode::NOT_FOUND,
            "This page does not exist.",
        );
    }
    ApiError::NotFound(format!("no such endpoint: {method} {}", uri.path())).into_response()
}

async fn wrong_method(method: Method, uri: Uri) -> ApiError {
    ApiError::MethodNotAllowed(format!("method {method} is not allowed on {}", uri.path()))
}

fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    ApiError::Internal(anyhow::anyhow!("handler panicked")).into_response()
}

/// Wraps any error answer that is not JSON yet (rejections of framework extractors, say) in the
/// `{"error": "..."}` envelope, keeping its status and headers.
async fn envelope_errors(req: Request, next: Next) -> Response {
    let response = next.run(req).await;
    let status = response.status();
    let already_shaped = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| {
            // JSON from the API, or a page of the dashboard.
            v.as_bytes().starts_with(b"application/json") || v.as_bytes().starts_with(b"text/html")
        });
    if !(status.is_client_error() || status.is_server_error()) || already_shaped {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 16 * 1024)
        .await
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&text).trim().to_owned();
    let message = if text.is_empty() || status.is_server_error() {
        status.canonical_reason().unwrap_or("error").to_lowercase()
    } else {
        text
    };
    let mut wrapped = (status, axum::Json(serde_json::json!({ "error": message }))).into_response();
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            wrapped.headers_mut().insert(name.clone(), value.clone());
        }
    }
    wrapped
}

/// One structured log line per request (method, route, company, status, latency), and an
/// `x-request-id` on every response.
async fn log_request(req: Request, next: Next) -> Response {
    let start = Instant::now();
    let request_id = uuid::Uuid::new_v4();
    let span = tracing::info_span!(
        "request",
        %request_id,
        method = %req.method(),
        path = %req.uri().path(),
        route = tracing::field::Empty,
        company_id = tracing::field::Empty,
    );
    let mut response = next.run(req).instrument(span.clone()).await;
    let status = response.status().as_u16();
    let latency_ms = start.elapsed().as_secs_f64() * 1000.0;
    span.in_scope(|| {
        if status >= 500 {
            tracing::error!(status, latency_ms, "request");
        } else {
            tracing::info!(status, latency_ms, "request");
        }
    });
    if let Ok(v) = HeaderValue::from_str(&request_id.to_string()) {
        response.headers_mut().insert("x-request-id", v);
    }
    response
}
