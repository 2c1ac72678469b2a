//! The route tree. Each module exports its own `router()`.

pub(crate) mod analytics;
mod api_keys;
mod data_sources;
mod facilities;
mod health;
mod job_status;
pub(crate) mod password;
mod pricing;
pub(crate) mod status;
mod sync;
pub(crate) mod upload;
mod webhooks;

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
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

/// A job recorded by a request, to follow at `GET /api/v1/jobs/{id}`.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub(crate) struct JobRef {
    /// Id of the job.
    pub id: Uuid,
    /// Kind of job: `ingest`, `pricing_run`, `webhook_delivery` or `crm_pull`.
    #[schema(value_type = String)]
    pub kind: &'static str,
}

/// The routes that need an API key, each with its documentation.
fn protected() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(sync::router())
        .merge(analytics::router())
        .merge(facilities::router())
        .merge(api_keys::router())
        .merge(data_sources::router())
        .merge(status::router())
        .merge(job_status::router())
        .merge(pricing::router())
        .merge(upload::router())
        .merge(webhooks::router())
}

/// The public `/api/v1` routes, each with its documentation.
fn public() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(password::router())
        .routes(routes!(crate::openapi::openapi_json))
}

/// The OpenAPI document of every `/api/v1` route.
pub fn document() -> utoipa::openapi::OpenApi {
    crate::openapi::finish(
        OpenApiRouter::with_openapi(crate::openapi::base())
            .merge(protected())
            .merge(public())
            .into_openapi(),
    )
}

/// The whole application, ready to serve.
pub fn app(state: AppState) -> Router {
    let (protected, _) = protected().split_for_parts();
    let protected = protected.route_layer(middleware::from_fn_with_state(
        state.clone(),
        crate::auth::require_key,
    ));
    let (public, _) = public().split_for_parts();
    Router::new()
        .merge(protected)
        .merge(public)
        .merge(health::router())
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
        .layer(middleware::from_fn(log_request))
        .with_state(state)
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
