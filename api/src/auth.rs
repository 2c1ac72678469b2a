//! Authentication, rate limiting and subscription checks for every `/api/v1` route but the
//! public ones. Order: key (401), rate limit (429), subscription (402, except the calls of
//! [`works_without_access`]).

use crate::error::ApiError;
use crate::ratelimit::Bucket;
use crate::state::AppState;
use axum::extract::{FromRequestParts, MatchedPath, Request, State};
use axum::http::{header, request::Parts, HeaderMap, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use jobs::tenancy::Principal;

/// The authenticated company of a request.
#[derive(Clone, Debug)]
pub struct Auth(pub Principal);

impl<S: Send + Sync> FromRequestParts<S> for Auth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Principal>()
            .cloned()
            .map(Auth)
            .ok_or_else(|| ApiError::Unauthorized("missing API key".to_owned()))
    }
}

fn bearer(headers: &HeaderMap) -> Result<&str, ApiError> {
    let value = headers.get(header::AUTHORIZATION).ok_or_else(|| {
        ApiError::Unauthorized("missing API key: send Authorization: Bearer <key>".to_owned())
    })?;
    let value = value
        .to_str()
        .map_err(|_| ApiError::Unauthorized("malformed Authorization header".to_owned()))?;
    let (scheme, token) = value.split_once(' ').ok_or_else(|| {
        ApiError::Unauthorized("malformed Authorization header: expected Bearer <key>".to_owned())
    })?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return Err(ApiError::Unauthorized(
            "malformed Authorization header: expected Bearer <key>".to_owned(),
        ));
    }
    Ok(token.trim())
}

fn rate_headers(response: &mut Response, d: &crate::ratelimit::Decision) {
    let h = response.headers_mut();
    h.insert("ratelimit-limit", HeaderValue::from(d.limit));
    h.insert("ratelimit-remaining", HeaderValue::from(d.remaining));
    h.insert(
        "ratelimit-reset",
        HeaderValue::from(d.reset_ms.div_ceil(1000)),
    );
}

pub async fn require_key(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_default();
    tracing::Span::current().record("route", route.as_str());
    let principal = match authenticate(&state, req.headers()).await {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    tracing::Span::current().record("company_id", tracing::field::display(principal.company_id));

    let bucket = if req.method() == Method::POST && route == "/api/v1/sync" {
        Bucket::Sync
    } else {
        Bucket::General
    };
    let now = Utc::now();
    let month = now.format("%Y%m").to_string();
    let decision = match state
        .limiter
        .check(principal.company_id.uuid(), bucket, &month)
        .await
    {
        Ok(d) => Some(d),
        Err(e) => {
            // Fail open: a Redis outage must not take the API down with it.
            tracing::warn!(error = %e, "rate limiter unavailable; request allowed");
            None
        }
    };
    if let Some(d) = decision.filter(|d| !d.allowed) {
        let mut response = ApiError::RateLimited {
            limit: d.limit,
            retry_after_secs: d.retry_after_ms.div_ceil(1000).max(1),
        }
        .into_response();
        rate_headers(&mut response, &d);
        return response;
    }

    let state_now = principal.effective_state(now).to_owned();
    let exempt = works_without_access(req.method(), &route);
    let mut response = if !jobs::tenancy::has_access(&state_now) && !exempt {
        ApiError::PaymentRequired(format!(
            "the company's subscription is {state_now}: choose a plan to continue (status, key, webhook and data-source listings and removals still answer)"
        ))
        .into_response()
    } else {
        req.extensions_mut().insert(principal);
        next.run(req).await
    };
    if let Some(d) = decision {
        rate_headers(&mut response, &d);
    }
    response
}

/// Calls a company can make in every subscription state: reading its status, and seeing and
/// removing what acts on its behalf (keys, webhook subscriptions, data sources), so a lapsed
/// company can still close its accounts down.
pub(crate) fn works_without_access(method: &Method, route: &str) -> bool {
    matches!(
        (method.as_str(), route),
        ("GET", "/api/v1/status")
            | ("GET", "/api/v1/api-keys")
            | ("DELETE", "/api/v1/api-keys/{id}")
            | ("GET", "/api/v1/webhooks")
            | ("DELETE", "/api/v1/webhooks/{id}")
            | ("GET", "/api/v1/data-sources")
            | ("DELETE", "/api/v1/data-sources/{id}")
    )
}

async fn authenticate(state: &AppState, headers: &HeaderMap) -> Result<Principal, ApiError> {
    let key = bearer(headers)?;
    jobs::tenancy::authenticate(&state.db, &state.hasher, key)
        .await?
        .ok_or_else(|| ApiError::Unauthorized("invalid or revoked API key".to_owned()))
}
