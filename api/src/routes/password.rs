//! Public password-reset endpoints. `forgot` always answers `{"ok": true}`, whatever the input,
//! so it cannot be used to find accounts: it only records the request (one insert, the same
//! for every address) and the worker does the rest. It is limited silently per client address
//! (past the limit it still answers the same and records nothing); a user gets at most one
//! mail per five minutes (see `jobs::password_reset`). `reset` is limited per client (429).

use crate::error::{ApiError, ApiResult};
use crate::extract::{client_address, Json, PeerAddr};
use crate::state::AppState;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Reset requests per client address per hour.
const FORGOT_PER_CLIENT_PER_HOUR: u64 = 30;
/// Reset attempts (token and new password) per client address per hour.
const RESET_PER_CLIENT_PER_HOUR: u64 = 30;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(forgot))
        .routes(routes!(reset))
}

#[derive(Deserialize, utoipa::ToSchema)]
struct Forgot {
    /// The account's e-mail address.
    #[schema(format = Email, max_length = 320)]
    email: String,
}

/// The answer of both password calls.
#[derive(Serialize, utoipa::ToSchema)]
struct Done {
    /// Always true.
    ok: bool,
}

/// Requests a password-reset e-mail.
///
/// Public; the answer is `{"ok": true}` whatever the input,
/// so it tells nothing about which addresses have accounts.
#[utoipa::path(post, path = "/api/v1/auth/forgot", tag = "auth", security(()),
    request_body(content = Forgot, description = "Any body is taken; only a JSON object with `email` is acted on."),
    responses((status = 200, description = "Always.", body = Done)))]
async fn forgot(
    State(state): State<AppState>,
    PeerAddr(peer): PeerAddr,
    headers: HeaderMap,
    body: Bytes,
) -> axum::Json<Done> {
    if let Ok(Forgot { email }) = serde_json::from_slice::<Forgot>(&body) {
        record_forgot(&state, peer, &headers, &email).await;
    }
    axum::Json(Done { ok: true })
}

/// Records a reset request within the per-client limit (silently dropped past it); shared
/// with the dashboard's forgot page.
pub(crate) async fn record_forgot(
    state: &AppState,
    peer: Option<std::net::SocketAddr>,
    headers: &HeaderMap,
    email: &str,
) {
    let client = client_address(headers, peer, state.config.trusted_proxies);
    let prefix = &state.config.redis_key_prefix;
    let by_client = crate::ratelimit::count_in_window(
        &state.redis,
        &format!("{prefix}:forgot:client:{client}"),
        3600,
    )
    .await;
    match by_client {
        Ok(n) if n <= FORGOT_PER_CLIENT_PER_HOUR => {
            if let Err(e) = jobs::password_reset::record_request(&state.db, email).await {
                tracing::error!(error = %e, "password reset request could not be recorded");
            }
        }
        Ok(_) => tracing::warn!("password reset request dropped by the per-client limit"),
        Err(e) => {
            tracing::warn!(error = %e, "password reset request dropped: limiter unavailable")
        }
    }
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Reset {
    /// The token of the mailed link (valid one hour, once).
    token: String,
    /// The new password.
    password: String,
}

/// Sets a new password with the mailed token; ends every session of the user. Public.
#[utoipa::path(post, path = "/api/v1/auth/reset", tag = "auth", security(()),
    request_body = Reset,
    responses(
        (status = 200, description = "The password was changed.", body = Done),
        (status = 429, description = "Too many attempts from this address (30 an hour).", body = crate::openapi::ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds until a request will pass."))),
    ))]
async fn reset(
    State(state): State<AppState>,
    PeerAddr(peer): PeerAddr,
    headers: HeaderMap,
    Json(body): Json<Reset>,
) -> ApiResult<axum::Json<Done>> {
    complete_reset(&state, peer, &headers, &body.token, &body.password).await?;
    Ok(axum::Json(Done { ok: true }))
}

/// Sets a new password with a mailed token, within the per-client limit; shared with the
/// dashboard's reset page.
pub(crate) async fn complete_reset(
    state: &AppState,
    peer: Option<std::net::SocketAddr>,
    headers: &HeaderMap,
    token: &str,
    password: &str,
) -> ApiResult<()> {
    let client = client_address(headers, peer, state.config.trusted_proxies);
    let prefix = &state.config.redis_key_prefix;
    // Fails open like the other limits: an outage of Redis should not stop resets.
    if let Ok(n) = crate::ratelimit::count_in_window(
        &state.redis,
        &format!("{prefix}:reset:client:{client}"),
        3600,
    )
    .await
    {
        if n > RESET_PER_CLIENT_PER_HOUR {
            return Err(ApiError::TooManyAttempts {
                limit: RESET_PER_CLIENT_PER_HOUR as u32,
                retry_after_secs: 3600,
            });
        }
    }
    let email = jobs::password_reset::complete(&state.db, token, password).await?;
    // The lockout page says a reset lets the owner back in: whoever ran up the failed logins
    // no longer counts against the new password.
    let key = crate::ratelimit::login_account_key(&state.config.redis_key_prefix, &email);
    if let Err(e) = crate::ratelimit::clear(&state.redis, &key).await {
        tracing::warn!(error = %e, "login throttle unavailable");
    }
    Ok(())
}
