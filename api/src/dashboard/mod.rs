//! The dashboard: server-rendered HTML (maud) for the people of a company, at `/`, `/login`,
//! `/signup`, the reset pages and `/app/...`. Parity is the rule: every action calls the same
//! `jobs` function (or the same shared handler code) as its `/api/v1` route; nothing here holds
//! SQL or a business rule. Forms work without JavaScript; htmx only refreshes parts of a page.

mod account;
mod analytics;
mod assets;
mod chart;
mod data_sources;
pub(crate) mod ecri;
mod extract;
mod facilities;
mod facility;
pub(crate) mod figures;
mod keys;
mod overview;
pub mod page;
mod portfolio;
pub mod session;
mod team;
mod upload;
mod webhooks;

use crate::state::AppState;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{header, HeaderValue};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use serde::Deserialize;
use std::collections::BTreeMap;

/// Content-Security-Policy of every page: scripts, styles and everything else from this
/// origin only (no inline script or style), no framing, forms posted only here.
pub(crate) const CSP: &str =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

pub fn router(state: AppState) -> Router<AppState> {
    Router::new()
        .merge(public_routes())
        .merge(app_routes(&state))
        .route_layer(middleware::from_fn_with_state(state, session::same_site))
        .route_layer(middleware::from_fn(security_headers))
        // Added after the layers, which so leave it alone: an asset carries its own headers
        // (cached for a year, where a page is `no-store`).
        .route("/assets/{name}", get(assets::serve))
        // Browsers ask for this address on their own, whatever the page names.
        .route("/favicon.ico", get(assets::favicon))
}

/// The pages before signing in: sign-in, sign-up and its confirmation, the password reset and
/// an invitation's acceptance.
fn public_routes() -> Router<AppState> {
    Router::new()
        .route("/", get(account::root))
        .route("/login", get(account::login_page).post(account::login))
        .route("/signup", get(account::signup_page).post(account::signup))
        .route(
            "/signup/confirm",
            get(account::confirm_page).post(account::confirm),
        )
        .route(
            "/forgot-password",
            get(account::forgot_page).post(account::forgot),
        )
        .route(
            "/reset-password",
            get(account::reset_page).post(account::reset),
        )
        .route(
            "/invitations/accept",
            get(team::accept_page).post(team::accept),
        )
}

/// The signed-in pages, each behind the session check and, inside it, the role check.
fn app_routes(state: &AppState) -> Router<AppState> {
    Router::new()
        .merge(home_routes())
        .merge(account_routes())
        .merge(facility_routes())
        .merge(ecri_routes())
        .merge(upload_routes())
        .merge(connection_routes())
        .merge(team_routes())
        // The role check runs inside the session check, which puts the session in place.
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            session::authorize,
        ))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            session::require_session,
        ))
        // Uploads are multipart; the limit is the upload's own (see `routes::upload`).
        .layer(DefaultBodyLimit::max(upload::MAX_FILE_BYTES + 64 * 1024))
}

/// The overview, the company's name, the portfolio and the analytics pages.
fn home_routes() -> Router<AppState> {
    Router::new()
        .route("/app", get(overview::show))
        .route("/app/company", post(overview::save_company))
        .route("/app/portfolio", get(portfolio::show))
        .route("/app/analytics/ecri", get(analytics::ecri))
        .route("/app/analytics/seasonality", get(analytics::seasonality))
        .route("/app/analytics/lease-up", get(analytics::lease_up))
        .route("/app/analytics/leads", get(analytics::leads))
        .route("/app/analytics/revpas", get(analytics::revpas))
}

/// Signing out (here or everywhere) and the API keys.
fn account_routes() -> Router<AppState> {
    Router::new()
        .route("/app/logout-everywhere", post(account::logout_everywhere))
        .route("/logout", post(account::logout))
        .route("/app/keys", get(keys::list).post(keys::create))
        .route(
            "/app/keys/{id}/revoke",
            get(keys::confirm_revoke).post(keys::revoke),
        )
}

/// The facilities: their list and forms, and each one's pricing page with its actions.
fn facility_routes() -> Router<AppState> {
    Router::new()
        .route(
            "/app/facilities",
            get(facilities::list).post(facilities::create),
        )
        .route("/app/facilities/new", get(facilities::new_page))
        .route(
            "/app/facilities/{id}",
            get(facility::show).post(facilities::update),
        )
        .route("/app/facilities/{id}/run", post(facility::run_now))
        .route(
            "/app/facilities/{id}/rent-roll/confirm",
            post(facility::confirm_roll),
        )
        .route("/app/facilities/{id}/decisions", post(facility::decide))
        .route("/app/facilities/{id}/rates.csv", get(facility::rates_csv))
        .route(
            "/app/facilities/{id}/competitor-rates",
            post(facility::add_rate),
        )
        .route(
            "/app/facilities/{id}/settings",
            post(facility::save_settings),
        )
        .route("/app/facilities/{id}/edit", get(facilities::edit_page))
        .route(
            "/app/facilities/{id}/delete",
            get(facilities::confirm_delete).post(facilities::delete),
        )
}

/// A facility's rent increases: its suggestions and its batches, from draft to letters.
fn ecri_routes() -> Router<AppState> {
    Router::new()
        .route("/app/facilities/{id}/ecri", get(ecri::show))
        .route("/app/facilities/{id}/ecri-run", post(ecri::run_now))
        .route("/app/facilities/{id}/ecri-batches", post(ecri::create))
        .route("/app/facilities/{id}/ecri-batches/{bid}", get(ecri::batch))
        .route(
            "/app/facilities/{id}/ecri-batches/{bid}/edit",
            post(ecri::edit),
        )
        .route(
            "/app/facilities/{id}/ecri-batches/{bid}/approve",
            post(ecri::approve),
        )
        .route(
            "/app/facilities/{id}/ecri-batches/{bid}/cancel",
            post(ecri::cancel),
        )
        .route(
            "/app/facilities/{id}/ecri-batches/{bid}/letters.csv",
            get(ecri::letters),
        )
}

/// The upload page and its templates.
fn upload_routes() -> Router<AppState> {
    Router::new()
        .route("/app/upload", get(upload::page).post(upload::submit))
        .route("/app/upload/templates/{kind}", get(upload::template))
}

/// The connections to other systems: webhooks out and data sources in.
fn connection_routes() -> Router<AppState> {
    Router::new()
        .route("/app/webhooks", get(webhooks::list).post(webhooks::create))
        .route("/app/webhooks/{id}/test", post(webhooks::test_ping))
        .route(
            "/app/webhooks/{id}/delete",
            get(webhooks::confirm_delete).post(webhooks::delete),
        )
        .route(
            "/app/data-sources",
            get(data_sources::list).post(data_sources::create),
        )
        .route(
            "/app/data-sources/{id}",
            get(data_sources::detail).post(data_sources::update),
        )
        .route(
            "/app/data-sources/{id}/backfill",
            post(data_sources::backfill),
        )
        .route("/app/data-sources/{id}/edit", get(data_sources::edit_page))
        .route("/app/data-sources/{id}/pull", post(data_sources::pull))
        .route(
            "/app/data-sources/{id}/delete",
            get(data_sources::confirm_delete).post(data_sources::delete),
        )
}

/// The team (members and invitations) and the audit log with its retention.
fn team_routes() -> Router<AppState> {
    Router::new()
        .route("/app/team", get(team::show))
        .route("/app/team/invitations", post(team::invite))
        .route(
            "/app/team/invitations/{id}/revoke",
            post(team::revoke_invitation),
        )
        .route("/app/team/members/{id}", post(team::update_member))
        .route(
            "/app/team/members/{id}/remove",
            get(team::confirm_remove).post(team::remove_member),
        )
        .route("/app/audit", get(team::audit))
        .route("/app/audit.csv", get(team::audit_csv))
        .route("/app/audit/settings", post(team::save_retention))
}

/// Security headers of every dashboard answer (pages, redirects and errors alike).
async fn security_headers(req: Request, next: Next) -> Response {
    let mut response = next.run(req).await;
    let h = response.headers_mut();
    page_security_headers(h, CSP);
    h.entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    response
}

/// The security headers of every HTML page the service serves, with the page's policy.
pub(crate) fn page_security_headers(h: &mut axum::http::HeaderMap, csp: &'static str) {
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(csp),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // No referrer at all: the reset page's address carries its token.
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
}

/// The outcome named in a redirect after a change (`?notice=...`): fixed texts only, so the
/// address cannot put words on the page.
#[derive(Deserialize)]
pub struct Notice {
    notice: Option<String>,
}

impl Notice {
    pub fn text(&self) -> Option<&'static str> {
        Some(match self.notice.as_deref()? {
            "created" => "Created.",
            "updated" => "Saved.",
            "deleted" => "Deleted.",
            "revoked" => "The key is revoked: it no longer works.",
            "invited" => "Invitation sent: its link works once, for 7 days.",
            "revoked-invitation" => "The invitation is revoked: its link no longer works.",
            "removed" => "The member is removed: their sessions have ended.",
            "pull" => "Pull queued: the worker fetches the data now.",
            "ping" => "Test ping queued: its delivery appears in the log below.",
            "run" => "The engine ran: the new run is shown below.",
            "rate" => "Competitor rate saved.",
            "settings" => "Pricing settings saved: the next run uses them.",
            "decision" => "Decision saved: the approved rates below show it.",
            "accepted" => "The selected rates are accepted: the approved rates below show them.",
            "roll" => "The held rent roll is applied: it is the roll in force now.",
            _ => return None,
        })
    }
}

/// Pages that act through the API say so when the subscription has lapsed (the API's 402).
pub fn require_access(s: &jobs::sessions::Session) -> Result<(), page::PageError> {
    let now = chrono::Utc::now();
    if s.has_access(now) {
        return Ok(());
    }
    Err(crate::error::ApiError::PaymentRequired(format!(
        "Your subscription is {}: choose a plan to do this. Status, keys, webhooks and data sources can still be seen and removed.",
        s.effective_state(now).replace('_', " ")
    ))
    .into())
}

/// A form's JSON body (see [`form_json`]) parsed by the API's parser and handed to `act`, the
/// `jobs` function of the API route; a failure of either is the error the API would answer.
pub async fn through_api<T, R, Fut>(
    body: &[u8],
    act: impl FnOnce(T) -> Fut,
) -> Result<R, crate::error::ApiError>
where
    T: serde::de::DeserializeOwned,
    Fut: std::future::Future<Output = jobs::Result<R>>,
{
    act(crate::extract::parse_json(body)?)
        .await
        .map_err(crate::error::ApiError::from)
}

/// The message a form shows again for refused input (the API's 422 or 409); any other failure
/// stays an error page.
pub fn form_error(e: crate::error::ApiError) -> Result<String, page::PageError> {
    match e {
        crate::error::ApiError::Invalid(m) | crate::error::ApiError::Conflict(m) => Ok(m),
        other => Err(other.into()),
    }
}

/// A submitted form as the JSON body of the matching API route, so the API's parser applies
/// its rules: `csrf` is dropped, fields named in `numbers` become numbers when they parse as
/// one (else stay text, for the parser to name), and an empty field is left out, or sent as
/// `null` (clearing it) when `clear_empty`.
pub fn form_json(
    values: &BTreeMap<String, String>,
    numbers: &[&str],
    clear_empty: bool,
) -> Vec<u8> {
    let mut object = serde_json::Map::new();
    for (k, v) in values {
        let v = v.trim();
        if k == "csrf" {
            continue;
        }
        let value = if v.is_empty() {
            if !clear_empty {
                continue;
            }
            serde_json::Value::Null
        } else if numbers.contains(&k.as_str()) {
            v.parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map_or_else(|| serde_json::Value::from(v), serde_json::Value::Number)
        } else {
            serde_json::Value::from(v)
        };
        object.insert(k.clone(), value);
    }
    serde_json::to_vec(&object).unwrap_or_default()
}
