//! The page an invitation's link opens, and joining with a password (public: the invited
//! person has no session yet).

use crate::access::client;
use crate::dashboard::extract::{Form, Query};
use crate::dashboard::page::{self, PageResult};
use crate::dashboard::session;
use crate::extract::PeerAddr;
use crate::state::AppState;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum_extra::extract::cookie::CookieJar;
use maud::{html, Markup};
use serde::Deserialize;

/// The token of an invitation's link.
#[derive(Deserialize)]
pub struct TokenQuery {
    token: Option<String>,
}

fn accept_refused(message: String) -> Response {
    page::render_status(
        StatusCode::UNPROCESSABLE_ENTITY,
        page::public(
            "Join your team",
            &[message],
            None,
            html! { p { a href="/login" { "Log in" } } },
        ),
    )
}

fn accept_form(token: &str) -> Markup {
    html! {
        form class="stack" method="post" action="/invitations/accept" {
            input type="hidden" name="token" value=(token);
            label { "Choose a password" span class="hint" { "At least 8 characters." }
                input type="password" name="password" autocomplete="new-password" required minlength="8"; }
            button type="submit" { "Join" }
        }
    }
}

/// What an invitation's link opens: who invites whom, as what, and the password form. Opening
/// it changes nothing.
pub async fn accept_page(State(state): State<AppState>, Query(q): Query<TokenQuery>) -> PageResult {
    let token = q.token.unwrap_or_default();
    match jobs::team::pending(&state.db, &token).await {
        Ok(p) => Ok(page::render(page::public(
            "Join your team",
            &[],
            Some(&format!(
                "Join {} as {} with the login {}.",
                p.company_name, p.role, p.email
            )),
            accept_form(&token),
        ))),
        Err(jobs::Error::Invalid(m)) => Ok(accept_refused(m.to_string())),
        Err(e) => Err(e.into()),
    }
}

#[derive(Deserialize)]
pub struct AcceptForm {
    token: String,
    password: String,
}

/// Accepts an invitation: the member is created with the chosen password and signed in.
pub async fn accept(
    State(state): State<AppState>,
    headers: HeaderMap,
    peer: PeerAddr,
    jar: CookieJar,
    Form(f): Form<AcceptForm>,
) -> PageResult {
    let addr = client(&state, &headers, &peer);
    match jobs::team::accept(&state.db, &f.token, &f.password, Some(&addr)).await {
        Ok(started) => Ok((
            jar.add(session::session_cookie(&state, started.token)),
            Redirect::to(crate::dashboard::account::LANDING),
        )
            .into_response()),
        Err(jobs::Error::Invalid(m)) if m.to_string().starts_with("password") => {
            Ok(page::render_status(
                StatusCode::UNPROCESSABLE_ENTITY,
                page::public(
                    "Join your team",
                    &[m.to_string()],
                    None,
                    accept_form(&f.token),
                ),
            ))
        }
        Err(jobs::Error::Invalid(m)) => Ok(accept_refused(m.to_string())),
        Err(jobs::Error::Conflict(m)) => Ok(accept_refused(m)),
        Err(e) => Err(e.into()),
    }
}
