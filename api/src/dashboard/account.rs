//! Sign-up (by mail: the form does not tell which addresses have accounts, see
//! `jobs::sign_up`), login (throttled per account and per client), logout, "log out everywhere", and the
//! forgot / reset pages the reset mail links to. Reset and forgot go through the same `jobs`
//! functions and limits as `POST /api/v1/auth/forgot` and `/auth/reset`.

use super::extract::{Form, Query};
use super::page::{self, PageResult};
use super::session::{self, SignedIn};
use crate::error::ApiError;
use crate::extract::{client_address, PeerAddr};
use crate::state::AppState;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum_extra::extract::cookie::CookieJar;

/// Where a person lands after logging in (or on `/` while logged in): the portfolio, the
/// morning view of a revenue manager. A new account (sign-up) lands on the overview instead,
/// which says what to do first.
pub const LANDING: &str = "/app/portfolio";
use maud::{html, Markup};
use serde::Deserialize;

/// Failed logins of one account in [`ACCOUNT_WINDOW_SECS`] before it must wait.
const FAILURES_PER_ACCOUNT: u64 = 10;
const ACCOUNT_WINDOW_SECS: u64 = 15 * 60;
/// Failed logins from one client address in an hour before it must wait.
const FAILURES_PER_CLIENT: u64 = 50;
/// Sign-ups from one client address per hour.
const SIGNUPS_PER_CLIENT: u64 = 20;

#[derive(Deserialize)]
pub struct Notice {
    notice: Option<String>,
}

fn notice_text(code: Option<&str>) -> Option<&'static str> {
    match code? {
        "logged-out" => Some("You are logged out."),
        "everywhere" => Some("You are logged out on every device."),
        "reset" => Some("Your password is changed. Log in with the new one."),
        _ => None,
    }
}

pub async fn root(State(state): State<AppState>, jar: CookieJar) -> PageResult {
    Ok(match session::current(&state, &jar).await? {
        Some(_) => Redirect::to(LANDING).into_response(),
        None => Redirect::to("/login").into_response(),
    })
}

fn login_form(email: &str) -> Markup {
    html! {
        form class="stack" method="post" action="/login" {
            label { "E-mail" input type="email" name="email" autocomplete="username" required value=(email); }
            label { "Password" input type="password" name="password" autocomplete="current-password" required; }
            button type="submit" { "Log in" }
        }
        p { a href="/forgot-password" { "Forgot your password?" } }
        p { "New here? " a href="/signup" { "Create an account" } }
    }
}

pub async fn login_page(
    State(state): State<AppState>,
    jar: CookieJar,
    Query(q): Query<Notice>,
) -> PageResult {
    if session::current(&state, &jar).await?.is_some() {
        return Ok(Redirect::to(LANDING).into_response());
    }
    Ok(page::render(page::public(
        "Log in",
        &[],
        notice_text(q.notice.as_deref()),
        login_form(""),
    )))
}

#[derive(Deserialize)]
pub struct Login {
    email: String,
    password: String,
}

fn prefix(state: &AppState) -> &str {
    &state.config.redis_key_prefix
}

/// Counts a login attempt against a throttle key before its password is checked, and returns
/// the count including it (0 when Redis is away: the limits fail open). Counting first, not
/// after a failed check, is what holds the limit against attempts sent all at once: each
/// one's count is its own, so only the first ones in a window reach the check.
async fn count_attempt(state: &AppState, key: &str, window: u64) -> u64 {
    jobs::counters::count_in_window(&state.redis, key, window)
        .await
        .unwrap_or_else(|e| {
            tracing::warn!(error = %e, "login throttle unavailable");
            0
        })
}

/// Takes back an attempt that turned out not to be a failure.
async fn uncount_attempt(state: &AppState, key: &str) {
    if let Err(e) = jobs::counters::uncount(&state.redis, key).await {
        tracing::warn!(error = %e, "login throttle unavailable");
    }
}

/// The answer of a failed login, whatever failed. An address past the longest an account can
/// have is shown cut to that length.
fn wrong_login(email: &str) -> Response {
    page::render_status(
        StatusCode::UNAUTHORIZED,
        page::public(
            "Log in",
            &["Wrong e-mail or password.".to_owned()],
            None,
            login_form(&cut(email)),
        ),
    )
}

/// The address as the form shows it again: at most as long as an account's can be.
fn cut(email: &str) -> String {
    email
        .chars()
        .take(jobs::counters::MAX_LOGIN_EMAIL_BYTES)
        .collect()
}

pub async fn login(
    State(state): State<AppState>,
    PeerAddr(peer): PeerAddr,
    headers: HeaderMap,
    jar: CookieJar,
    Form(form): Form<Login>,
) -> PageResult {
    let client = client_address(&headers, peer, state.config.trusted_proxies);
    let email = form.email.trim().to_lowercase();
    let account_key = jobs::counters::login_account_key(prefix(&state), &email);
    let client_key = format!("{}:login:client:{client}", prefix(&state));
    // No account has an address this long: the usual failed login, counted against the client
    // only, with no lookup, no password check and nothing recorded.
    let too_long = email.len() > jobs::counters::MAX_LOGIN_EMAIL_BYTES;
    let account_n = if too_long {
        0
    } else {
        count_attempt(&state, &account_key, ACCOUNT_WINDOW_SECS).await
    };
    let client_n = count_attempt(&state, &client_key, 3600).await;
    if account_n > FAILURES_PER_ACCOUNT || client_n > FAILURES_PER_CLIENT {
        return Ok(page::render_status(
            StatusCode::TOO_MANY_REQUESTS,
            page::public(
                "Log in",
                &["Too many failed attempts. Wait 15 minutes, or reset your password.".to_owned()],
                None,
                login_form(&cut(&form.email)),
            ),
        ));
    }
    if too_long {
        return Ok(wrong_login(&form.email));
    }
    let verified = jobs::tenancy::verify_password(&state.db, &email, &form.password).await?;
    // No session when the password was wrong, or was changed by a reset since it was checked.
    let started = match &verified {
        Some(v) => jobs::sessions::start(&state.db, v).await?,
        None => None,
    };
    let Some(started) = started else {
        // Counted already, before the check.
        jobs::audit::sign_in_failed(&state.db, &email, &client).await?;
        return Ok(wrong_login(&form.email));
    };
    uncount_attempt(&state, &account_key).await;
    uncount_attempt(&state, &client_key).await;
    if let Some(v) = &verified {
        jobs::audit::signed_in(&state.db, v.user_id, &client).await?;
    }
    Ok((
        jar.add(session::session_cookie(&state, started.token)),
        Redirect::to(LANDING),
    )
        .into_response())
}

fn signup_form(name: &str, email: &str) -> Markup {
    html! {
        form class="stack" method="post" action="/signup" {
            label { "Company name" input type="text" name="company" required maxlength="200" value=(name); }
            label { "Your e-mail" input type="email" name="email" autocomplete="username" required value=(email); }
            label { "Password" span class="hint" { "At least 8 characters." }
                input type="password" name="password" autocomplete="new-password" required minlength="8"; }
            button type="submit" { "Start the free trial" }
        }
        p { "Have an account? " a href="/login" { "Log in" } }
    }
}

pub async fn signup_page(State(state): State<AppState>) -> Response {
    page::render(page::public(
        "Create an account",
        &[],
        Some(&format!(
            "A new company starts on a {}-day free trial.",
            state.config.trial_days
        )),
        signup_form("", ""),
    ))
}

#[derive(Deserialize)]
pub struct SignUp {
    company: String,
    email: String,
    password: String,
}

pub async fn signup(
    State(state): State<AppState>,
    PeerAddr(peer): PeerAddr,
    headers: HeaderMap,
    Form(form): Form<SignUp>,
) -> PageResult {
    let client = client_address(&headers, peer, state.config.trusted_proxies);
    let key = format!("{}:signup:client:{client}", prefix(&state));
    if let Ok(n) = jobs::counters::count_in_window(&state.redis, &key, 3600).await {
        if n > SIGNUPS_PER_CLIENT {
            return Err(ApiError::TooManyAttempts {
                limit: SIGNUPS_PER_CLIENT as u32,
                retry_after_secs: 3600,
            }
            .into());
        }
    }
    // The same answer whether or not the address has an account: the mail tells which.
    let recorded =
        jobs::sign_up::request(&state.db, &form.company, &form.email, &form.password).await;
    match recorded {
        Ok(()) => Ok(page::render(page::public(
            "Check your mail",
            &[],
            Some("We sent a mail to this address. Open its link within 24 hours to finish creating the account. If the address already has an account, the mail says how to log in instead."),
            html! { p { a href="/login" { "Back to log in" } } },
        ))),
        Err(e @ jobs::Error::Invalid(_)) => Ok(page::render_status(
            StatusCode::UNPROCESSABLE_ENTITY,
            page::public(
                "Create an account",
                &[ApiError::from(e).to_string()],
                None,
                signup_form(&form.company, &form.email),
            ),
        )),
        Err(e) => Err(e.into()),
    }
}

#[derive(Deserialize)]
pub struct ConfirmForm {
    token: String,
}

fn confirm_refused(message: String) -> Response {
    page::render_status(
        StatusCode::UNPROCESSABLE_ENTITY,
        page::public(
            "Finish creating your account",
            &[message],
            None,
            html! { p { a href="/signup" { "Sign up again" } " or " a href="/login" { "log in" } } },
        ),
    )
}

/// The page a sign-up mail links to: what the link creates, and the button that creates it
/// (opening the link alone changes nothing, so a mail scanner following it does no harm).
pub async fn confirm_page(
    State(state): State<AppState>,
    Query(q): Query<TokenQuery>,
) -> PageResult {
    let token = q.token.unwrap_or_default();
    match jobs::sign_up::pending(&state.db, &token).await {
        Ok(p) => Ok(page::render(page::public(
            "Finish creating your account",
            &[],
            Some(&format!(
                "Create the account of {} for {}, on a {}-day free trial.",
                p.company_name, p.email, state.config.trial_days
            )),
            html! {
                form class="stack" method="post" action="/signup/confirm" {
                    input type="hidden" name="token" value=(token);
                    button type="submit" { "Create the account" }
                }
            },
        ))),
        Err(jobs::Error::Invalid(m)) => Ok(confirm_refused(m.to_string())),
        Err(e) => Err(e.into()),
    }
}

/// Creates the account of a sign-up link and signs its user in.
pub async fn confirm(
    State(state): State<AppState>,
    jar: CookieJar,
    Form(form): Form<ConfirmForm>,
) -> PageResult {
    match jobs::sign_up::confirm(
        &state.db,
        &state.hasher,
        &form.token,
        state.config.trial_days,
    )
    .await
    {
        Ok(started) => Ok((
            jar.add(session::session_cookie(&state, started.token)),
            Redirect::to("/app"),
        )
            .into_response()),
        Err(jobs::Error::Invalid(m)) => Ok(confirm_refused(m.to_string())),
        Err(jobs::Error::Conflict(_)) => Ok(confirm_refused(
            "This address has an account already: log in, or choose a new password.".to_owned(),
        )),
        Err(e) => Err(e.into()),
    }
}

pub async fn logout(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    jar: CookieJar,
) -> PageResult {
    let done = jobs::sessions::end(&state.db, &acting.who, &s).await?;
    state.finish(done).await;
    Ok((
        jar.remove(session::clear_cookie()),
        Redirect::to("/login?notice=logged-out"),
    )
        .into_response())
}

pub async fn logout_everywhere(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    jar: CookieJar,
) -> PageResult {
    let done = jobs::sessions::end_everywhere(&state.db, &acting.who, &s).await?;
    state.finish(done).await;
    Ok((
        jar.remove(session::clear_cookie()),
        Redirect::to("/login?notice=everywhere"),
    )
        .into_response())
}

fn forgot_form() -> Markup {
    html! {
        form class="stack" method="post" action="/forgot-password" {
            label { "E-mail" input type="email" name="email" autocomplete="username" required; }
            button type="submit" { "Send the reset link" }
        }
        p { a href="/login" { "Back to log in" } }
    }
}

pub async fn forgot_page() -> Response {
    page::render(page::public(
        "Forgot your password?",
        &[],
        None,
        forgot_form(),
    ))
}

#[derive(Deserialize)]
pub struct Forgot {
    email: String,
}

pub async fn forgot(
    State(state): State<AppState>,
    PeerAddr(peer): PeerAddr,
    headers: HeaderMap,
    Form(form): Form<Forgot>,
) -> Response {
    let client = client_address(&headers, peer, state.config.trusted_proxies);
    jobs::password_reset::request(&state.db, state.counters(), &client, &form.email).await;
    page::render(page::public(
        "Check your mail",
        &[],
        Some("If an account uses this address, a link to choose a new password is on its way. It works once, within one hour."),
        html! { p { a href="/login" { "Back to log in" } } },
    ))
}

#[derive(Deserialize)]
pub struct TokenQuery {
    token: Option<String>,
}

fn reset_form(token: &str) -> Markup {
    html! {
        form class="stack" method="post" action="/reset-password" {
            input type="hidden" name="token" value=(token);
            label { "New password" span class="hint" { "At least 8 characters." }
                input type="password" name="password" autocomplete="new-password" required minlength="8"; }
            button type="submit" { "Set the new password" }
        }
    }
}

pub async fn reset_page(Query(q): Query<TokenQuery>) -> Response {
    let token = q.token.unwrap_or_default();
    if token.is_empty() {
        return page::render_status(
            StatusCode::UNPROCESSABLE_ENTITY,
            page::public(
                "Choose a new password",
                &[
                    "This link has no token: open the link from the mail, or ask for a new one."
                        .to_owned(),
                ],
                None,
                html! { p { a href="/forgot-password" { "Ask for a new link" } } },
            ),
        );
    }
    page::render(page::public(
        "Choose a new password",
        &[],
        None,
        reset_form(&token),
    ))
}

#[derive(Deserialize)]
pub struct Reset {
    token: String,
    password: String,
}

pub async fn reset(
    State(state): State<AppState>,
    PeerAddr(peer): PeerAddr,
    headers: HeaderMap,
    Form(form): Form<Reset>,
) -> PageResult {
    let client = client_address(&headers, peer, state.config.trusted_proxies);
    match jobs::password_reset::complete(
        &state.db,
        state.counters(),
        &client,
        &form.token,
        &form.password,
    )
    .await
    {
        Ok(()) => Ok(Redirect::to("/login?notice=reset").into_response()),
        Err(jobs::Error::Invalid(m)) => Ok(page::render_status(
            StatusCode::UNPROCESSABLE_ENTITY,
            page::public(
                "Choose a new password",
                &[m.to_string()],
                None,
                html! {
                    (reset_form(&form.token))
                    p { a href="/forgot-password" { "Ask for a new link" } }
                },
            ),
        )),
        Err(e) => Err(e.into()),
    }
}
