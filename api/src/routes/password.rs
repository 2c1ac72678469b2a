//! Public password-reset endpoints. `forgot` always answers `{"ok": true}`, whatever the input,
//! so it cannot be used to find accounts; it is limited silently per client address and per
//! e-mail (past the limit it still answers the same, and queues nothing).

use crate::error::ApiResult;
use crate::extract::{Json, PeerAddr};
use crate::state::AppState;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::post;
use axum::Router;
use serde::Deserialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// Reset requests per e-mail address per hour.
const PER_EMAIL_PER_HOUR: u64 = 5;
/// Reset requests per client address per hour.
const PER_CLIENT_PER_HOUR: u64 = 30;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/auth/forgot", post(forgot))
        .route("/api/v1/auth/reset", post(reset))
}

#[derive(Deserialize)]
struct Forgot {
    email: String,
}

/// The client address: the first `X-Forwarded-For` hop when a platform router sets it,
/// otherwise the peer.
fn client(headers: &HeaderMap, peer: Option<std::net::SocketAddr>) -> String {
    headers
        .get("x-forwarded-for")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(',').next())
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .or_else(|| peer.map(|p| p.ip().to_string()))
        .unwrap_or_else(|| "unknown".to_owned())
}

async fn forgot(
    State(state): State<AppState>,
    PeerAddr(peer): PeerAddr,
    headers: HeaderMap,
    body: Bytes,
) -> axum::Json<Value> {
    if let Ok(Forgot { email }) = serde_json::from_slice::<Forgot>(&body) {
        let email_key = hex::encode(Sha256::digest(email.trim().to_lowercase().as_bytes()));
        let prefix = &state.config.redis_key_prefix;
        let by_email = crate::ratelimit::count_in_window(
            &state.redis,
            &format!("{prefix}:forgot:email:{email_key}"),
            3600,
        )
        .await;
        let by_client = crate::ratelimit::count_in_window(
            &state.redis,
            &format!("{prefix}:forgot:client:{}", client(&headers, peer)),
            3600,
        )
        .await;
        let within = matches!((by_email, by_client), (Ok(e), Ok(c)) if e <= PER_EMAIL_PER_HOUR && c <= PER_CLIENT_PER_HOUR);
        if within {
            if let Err(e) =
                jobs::password_reset::request(&state.db, &email, &state.config.public_base_url)
                    .await
            {
                tracing::error!(error = %e, "password reset request could not be recorded");
            }
        } else {
            tracing::warn!(
                "password reset request dropped by its limit (or the limiter is unavailable)"
            );
        }
    }
    axum::Json(json!({ "ok": true }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Reset {
    token: String,
    password: String,
}

async fn reset(
    State(state): State<AppState>,
    Json(body): Json<Reset>,
) -> ApiResult<axum::Json<Value>> {
    jobs::password_reset::complete(&state.db, &body.token, &body.password).await?;
    Ok(axum::Json(json!({ "ok": true })))
}
