//! `GET /docs`: the API reference, rendered in the browser by Redoc from
//! `/api/v1/openapi.json`. Redoc's standalone bundle is vendored from its npm package
//! (`redoc` 2.5.4, MIT; licences in `api/assets/`), embedded in the binary and served under a
//! name that carries a hash of its content, so it is cached for a year. No CDN, nothing
//! fetched from elsewhere. The page holds no inline script: the bundle finds the `<redoc>`
//! element and its `spec-url` itself.

use axum::extract::Path;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use sha2::{Digest, Sha256};
use std::sync::LazyLock;

const REDOC: &[u8] = include_bytes!("../assets/redoc-2.5.4.standalone.js");

/// The bundle's served name: `redoc-<hash>.js`.
static REDOC_NAME: LazyLock<String> =
    LazyLock::new(|| format!("redoc-{}.js", hex::encode(&Sha256::digest(REDOC)[..6])));

/// The dashboard's policy, relaxed only where Redoc needs it: it styles its components with
/// `<style>` elements it writes at run time (`style-src 'unsafe-inline'`) and runs its search
/// index in a worker made from a `blob:` URL (`worker-src blob:`). Scripts still come from this
/// origin only, and the document from `connect-src 'self'`.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
img-src 'self' data:; font-src 'self'; connect-src 'self'; worker-src blob:; \
frame-ancestors 'none'; base-uri 'none'; form-action 'none'; object-src 'none'";

pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/docs", get(page))
        .route("/docs/assets/{name}", get(asset))
}

async fn page() -> Response {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>API reference: self-storage pricing service</title></head>\
<body><redoc spec-url=\"/api/v1/openapi.json\"></redoc>\
<script src=\"/docs/assets/{}\"></script></body></html>\n",
        *REDOC_NAME
    );
    let mut response = Html(html).into_response();
    let h = response.headers_mut();
    crate::dashboard::page_security_headers(h, CSP);
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    response
}

async fn asset(Path(name): Path<String>) -> Response {
    if name != *REDOC_NAME {
        return (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "no such asset",
        )
            .into_response();
    }
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        REDOC,
    )
        .into_response()
}
