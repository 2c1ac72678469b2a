//! Who is signed in, and the checks that keep another site from acting for them:
//!
//! - the session cookie is `HttpOnly`, `SameSite=Lax`, and `Secure` when the service is reached
//!   over https;
//! - every state-changing request to the dashboard must come from this site
//!   (`Sec-Fetch-Site`, or `Origin` where a browser sends no fetch metadata);
//! - every state-changing form of a signed-in user carries the session's CSRF token (field
//!   `csrf`, or the `csrf` query parameter for a file upload).

use super::page::{self, error_page};
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::{header, request::Parts, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use axum_extra::extract::cookie::{Cookie, CookieJar, SameSite};
use jobs::sessions::Session;

pub const COOKIE: &str = "ssp_session";
/// Largest form body read to find its CSRF token (files go through multipart, checked by query).
const FORM_LIMIT: usize = 1024 * 1024;

/// The signed-in user of a dashboard request (put there by [`require_session`]).
pub struct SignedIn(pub Session);

impl<S: Send + Sync> FromRequestParts<S> for SignedIn {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Session>()
            .cloned()
            .map(SignedIn)
            .ok_or_else(|| Redirect::to("/login").into_response())
    }
}

/// The session cookie for a new session.
pub fn session_cookie(state: &AppState, token: String) -> Cookie<'static> {
    let mut c = Cookie::new(COOKIE, token);
    c.set_http_only(true);
    c.set_same_site(SameSite::Lax);
    c.set_path("/");
    c.set_secure(state.config.public_base_url.starts_with("https://"));
    c.set_max_age(time_from(jobs::sessions::ABSOLUTE_LIFETIME));
    c
}

fn time_from(d: chrono::Duration) -> time::Duration {
    time::Duration::seconds(d.num_seconds())
}

pub fn clear_cookie() -> Cookie<'static> {
    let mut c = Cookie::from(COOKIE);
    c.set_path("/");
    c
}

/// The live session behind the request's cookie, if any.
pub async fn current(
    state: &AppState,
    jar: &CookieJar,
) -> Result<Option<Session>, page::PageError> {
    match jar.get(COOKIE) {
        Some(c) => Ok(jobs::sessions::lookup(&state.db, c.value()).await?),
        None => Ok(None),
    }
}

fn is_safe(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Whether a request that changes something comes from this site. Browsers send
/// `Sec-Fetch-Site`; older ones at least `Origin` on a cross-site form post. A client that sends
/// neither is not a browser a third-party page can drive, and the form token still applies.
pub fn from_this_site(headers: &HeaderMap, public_base_url: &str) -> bool {
    if let Some(site) = headers.get("sec-fetch-site") {
        return matches!(site.as_bytes(), b"same-origin" | b"none");
    }
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let public = public_base_url.trim_end_matches('/');
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    origin == public || origin == format!("http://{host}") || origin == format!("https://{host}")
}

fn refused() -> Response {
    error_page(
        StatusCode::FORBIDDEN,
        "This form was not sent from this site or its security token is missing or stale. Go back, reload the page and try again.",
    )
}

/// Every dashboard request: a state-changing one must come from this site.
pub async fn same_site(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if !is_safe(req.method()) && !from_this_site(req.headers(), &state.config.public_base_url) {
        return refused();
    }
    next.run(req).await
}

/// Every `/app` request: a live session (else to the login page), and on a state-changing
/// request the session's CSRF token.
pub async fn require_session(
    State(state): State<AppState>,
    jar: CookieJar,
    req: Request,
    next: Next,
) -> Response {
    let session = match current(&state, &jar).await {
        Ok(Some(s)) => s,
        Ok(None) => return Redirect::to("/login").into_response(),
        Err(e) => return e.into_response(),
    };
    tracing::Span::current().record("company_id", tracing::field::display(session.company_id));
    let mut req = if is_safe(req.method()) {
        req
    } else {
        match checked_token(req, &session.csrf_token).await {
            Some(req) => req,
            None => return refused(),
        }
    };
    req.extensions_mut().insert(session);
    next.run(req).await
}

fn same_token(given: &str, expected: &str) -> bool {
    // Constant time over the expected length.
    given.len() == expected.len()
        && given
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

fn token_in(query_or_form: &[u8]) -> Option<String> {
    form_urlencoded::parse(query_or_form)
        .find(|(k, _)| k == "csrf")
        .map(|(_, v)| v.into_owned())
}

/// The request back, when it carries `expected` as its `csrf` query parameter or form field.
async fn checked_token(req: Request, expected: &str) -> Option<Request> {
    if let Some(t) = req.uri().query().and_then(|q| token_in(q.as_bytes())) {
        return same_token(&t, expected).then_some(req);
    }
    let is_form = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    if !is_form {
        return None;
    }
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, FORM_LIMIT).await.ok()?;
    let token = token_in(&bytes)?;
    same_token(&token, expected).then(|| Request::from_parts(parts, Body::from(bytes)))
}

/// Every `/app` request: the user's role must allow the page or form (a 403 page otherwise,
/// before anything is read or written), and a facility outside their scope is answered as
/// another company's (404). The permission table is `crate::access`'s, the API's too.
pub async fn authorize(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let Some(session) = req.extensions().get::<Session>().cloned() else {
        return Redirect::to("/login").into_response();
    };
    let method = req.method().clone();
    let (req, call) = crate::access::call_of(&state, req).await;
    let op = crate::access::page(&method, &call.route);
    let access = session.access();
    if !access.role.allows(op.permission) {
        return error_page(StatusCode::FORBIDDEN, &crate::access::refusal(&access, op));
    }
    if call.outside(&access).is_some() {
        return page::PageError(crate::error::ApiError::NotFound(String::new())).into_response();
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(
                axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    #[test]
    fn only_this_site_may_post() {
        let base = "https://pricing.example.com";
        assert!(from_this_site(
            &headers(&[("sec-fetch-site", "same-origin")]),
            base
        ));
        assert!(!from_this_site(
            &headers(&[("sec-fetch-site", "cross-site")]),
            base
        ));
        assert!(!from_this_site(
            &headers(&[("sec-fetch-site", "same-site")]),
            base
        ));
        assert!(from_this_site(&headers(&[("origin", base)]), base));
        assert!(!from_this_site(
            &headers(&[
                ("origin", "https://evil.example"),
                ("host", "pricing.example.com")
            ]),
            base
        ));
        assert!(from_this_site(
            &headers(&[("origin", "http://127.0.0.1:9"), ("host", "127.0.0.1:9")]),
            base
        ));
        assert!(!from_this_site(&headers(&[("origin", "null")]), base));
        assert!(same_token("abc", "abc"));
        assert!(!same_token("abd", "abc"));
        assert!(!same_token("", "abc"));
    }
}
