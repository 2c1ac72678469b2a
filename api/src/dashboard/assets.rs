//! Static files of the dashboard, embedded in the binary and served under a name that carries
//! a hash of their content, so they can be cached for a year and a new build is fetched anew.
//! htmx is vendored from its npm package (`htmx.org` 2.0.11, licence in `api/assets/`).

use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use std::sync::LazyLock;

struct Asset {
    logical: &'static str,
    served: String,
    content_type: &'static str,
    bytes: &'static [u8],
}

static ASSETS: LazyLock<Vec<Asset>> = LazyLock::new(|| {
    [
        (
            "htmx.js",
            "text/javascript; charset=utf-8",
            include_bytes!("../../assets/htmx-2.0.11.min.js").as_slice(),
        ),
        (
            "app.js",
            "text/javascript; charset=utf-8",
            include_bytes!("../../assets/app.js").as_slice(),
        ),
        (
            "app.css",
            "text/css; charset=utf-8",
            include_bytes!("../../assets/app.css").as_slice(),
        ),
        (
            "favicon.svg",
            "image/svg+xml",
            include_bytes!("../../assets/favicon.svg").as_slice(),
        ),
    ]
    .into_iter()
    .map(|(logical, content_type, bytes)| {
        let hash = hex::encode(&Sha256::digest(bytes)[..6]);
        let (stem, ext) = logical.rsplit_once('.').unwrap_or((logical, ""));
        Asset {
            logical,
            served: format!("{stem}-{hash}.{ext}"),
            content_type,
            bytes,
        }
    })
    .collect()
});

/// The URL of an asset by its plain name (`htmx.js`).
pub fn url(logical: &str) -> String {
    ASSETS
        .iter()
        .find(|a| a.logical == logical)
        .map(|a| format!("/assets/{}", a.served))
        .unwrap_or_default()
}

pub async fn serve(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|a| a.served == name) {
        Some(a) => (
            [
                (header::CONTENT_TYPE, a.content_type),
                (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            ],
            a.bytes,
        )
            .into_response(),
        None => (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "no such asset",
        )
            .into_response(),
    }
}

/// `/favicon.ico`: the icon's hashed address (the pages link it; a browser asks this address
/// on its own).
pub async fn favicon() -> Response {
    axum::response::Redirect::permanent(&url("favicon.svg")).into_response()
}
