//! Public password-reset endpoints. `forgot` always answers `{"ok": true}`, whatever the input,
//! so it cannot be used to find accounts: it only records the request (one insert, the same
//! for every address) and the worker does the rest. It is limited silently per client address
//! (past the limit it still answers the same and records nothing); a user gets at most one
//! mail per five minutes (see `jobs::password_reset`). `reset` is limited per client (429).

use crate::error::ApiResult;
use crate::extract::{client_address, Json, PeerAddr};
use crate::state::AppState;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

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
        let client = client_address(&headers, peer, state.config.trusted_proxies);
        jobs::password_reset::request(&state.db, state.counters(), &client, &email).await;
    }
    axum::Json(Done { ok: true })
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
    let client = client_address(&headers, peer, state.config.trusted_proxies);
    jobs::password_reset::complete(
        &state.db,
        state.counters(),
        &client,
        &body.token,
        &body.password,
    )
    .await?;
    Ok(axum::Json(Done { ok: true }))
}
