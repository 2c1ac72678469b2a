//! The frame every page shares (company, subscription state, navigation, notices and errors),
//! the page for visitors who are not signed in, and the HTML form of errors.

use super::assets;
use crate::error::ApiError;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use chrono::{DateTime, Utc};
use jobs::sessions::Session;
use maud::{html, Markup, DOCTYPE};

/// The sections of the navigation.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    Portfolio,
    Analytics,
    Overview,
    Keys,
    Facilities,
    Upload,
    DataSources,
    Webhooks,
    Team,
    Audit,
}

const SECTIONS: [(Nav, &str, &str); 10] = [
    (Nav::Portfolio, "/app/portfolio", "Portfolio"),
    (Nav::Analytics, "/app/analytics/revpas", "Analytics"),
    (Nav::Overview, "/app", "Overview"),
    (Nav::Keys, "/app/keys", "API keys"),
    (Nav::Facilities, "/app/facilities", "Facilities"),
    (Nav::Upload, "/app/upload", "Upload"),
    (Nav::DataSources, "/app/data-sources", "Data sources"),
    (Nav::Webhooks, "/app/webhooks", "Webhooks"),
    (Nav::Team, "/app/team", "Team"),
    (Nav::Audit, "/app/audit", "Audit log"),
];

/// Whether the signed-in user's role may use `href` (the menu hides the rest): open it, and
/// for the Upload page, whose only use is its form, send it.
fn may_open(s: &Session, href: &str) -> bool {
    use axum::http::Method;
    let method = if href == "/app/upload" {
        Method::POST
    } else {
        Method::GET
    };
    s.role.allows(crate::access::page(&method, href).permission)
}

/// Whether the signed-in user's role may send a form to the dashboard's `route` (as the
/// router names it, `/app/facilities/{id}/run`): a page shows only the controls its reader's
/// role may use, and says in words why the others are missing ([`role_note`]).
pub fn may_post(s: &Session, route: &str) -> bool {
    s.role
        .allows(crate::access::page(&axum::http::Method::POST, route).permission)
}

/// Why a page shows no control for `what` (`"decide rates, run the engine or change settings"`):
/// the reader's role, and who may.
pub fn role_note(s: &Session, what: &str, who_may: &str) -> Markup {
    html! {
        p class="muted role-note" {
            "Your role (" (s.role.as_str()) ") may read this but not " (what) "; " (who_may) " may."
        }
    }
}

fn head(title: &str) -> Markup {
    html! {
        meta charset="utf-8";
        meta name="viewport" content="width=device-width, initial-scale=1";
        // htmx would otherwise add an inline <style>, which the CSP refuses.
        // A refused form (422) is swapped in like a success, so its messages show at the fields.
        meta name="htmx-config" content=r#"{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"responseHandling":[{"code":"204","swap":false},{"code":"[23]..","swap":true},{"code":"422","swap":true},{"code":"[45]..","swap":false,"error":true},{"code":"...","swap":false}]}"#;
        title { (title) " · Self-Storage Pricing" }
        link rel="icon" href=(assets::url("favicon.svg")) type="image/svg+xml";
        link rel="stylesheet" href=(assets::url("app.css"));
        script src=(assets::url("htmx.js")) defer {}
        script src=(assets::url("app.js")) defer {}
    }
}

/// What a signed-in page says besides its body.
#[derive(Default)]
pub struct Messages<'a> {
    pub notice: Option<&'a str>,
    pub errors: Vec<String>,
}

impl<'a> Messages<'a> {
    pub fn notice(text: Option<&'a str>) -> Self {
        Self {
            notice: text,
            errors: Vec::new(),
        }
    }

    pub fn error(text: impl Into<String>) -> Self {
        Self {
            notice: None,
            errors: vec![text.into()],
        }
    }
}

fn messages(m: &Messages<'_>) -> Markup {
    // One element around both, so a form that swaps its own fragment (htmx) refreshes them too.
    html! {
        div id="flash" {
        div id="messages" role="status" aria-live="polite" {
            @if let Some(n) = m.notice { p class="notice" { (n) } }
        }
        @if !m.errors.is_empty() {
            div class="error" role="alert" id="errors" {
                @if m.errors.len() == 1 { (m.errors[0]) } @else {
                    "Please correct these:"
                    ul { @for e in &m.errors { li { (e) } } }
                }
            }
        }
        }
    }
}

/// How the frame describes the subscription.
fn subscription_line(s: &Session, now: DateTime<Utc>) -> String {
    let state = s.effective_state(now);
    match (state, s.trial_days_left(now)) {
        ("trialing", Some(1)) => "Trial: 1 day left".to_owned(),
        ("trialing", Some(d)) => format!("Trial: {d} days left"),
        (other, _) => format!("Subscription: {}", other.replace('_', " ")),
    }
}

/// A page of the signed-in dashboard.
pub fn frame(s: &Session, nav: Nav, title: &str, m: &Messages<'_>, body: Markup) -> Markup {
    let now = Utc::now();
    html! {
        (DOCTYPE)
        html lang="en" {
            head { (head(title)) }
            body {
                a class="skip" href="#content" { "Skip to content" }
                header class="top" {
                    span class="company" { (s.company_name) }
                    span class="state" id="subscription" { (subscription_line(s, now)) }
                    form method="post" action="/logout" {
                        input type="hidden" name="csrf" value=(s.csrf_token);
                        span class="muted" { (s.email) }
                        button class="secondary" type="submit" { "Log out" }
                    }
                }
                nav class="main" aria-label="Main" {
                    @for (section, href, label) in SECTIONS.into_iter().filter(|(_, h, _)| may_open(s, h)) {
                        @if section == nav {
                            a href=(href) aria-current="page" { (label) }
                        } @else {
                            a href=(href) { (label) }
                        }
                    }
                }
                main id="content" {
                    @if !s.has_access(now) {
                        p class="banner" id="lapsed" role="alert" {
                            "Your " (s.effective_state(now).replace('_', " ")) " subscription no longer gives access to the API. "
                            "You can still see your status, keys, webhooks and data sources and remove them; "
                            "choose a plan to sync, upload and change facilities again."
                        }
                    }
                    h1 { (title) }
                    (messages(m))
                    (body)
                }
            }
        }
    }
}

/// A page for visitors who are not signed in (login, sign-up, reset).
pub fn public(title: &str, errors: &[String], notice: Option<&str>, body: Markup) -> Markup {
    let m = Messages {
        notice,
        errors: errors.to_vec(),
    };
    html! {
        (DOCTYPE)
        html lang="en" {
            head { (head(title)) }
            body {
                main id="content" class="auth" {
                    h1 { (title) }
                    (messages(&m))
                    (body)
                }
            }
        }
    }
}

pub fn render(markup: Markup) -> Response {
    Html(markup.into_string()).into_response()
}

pub fn render_status(status: StatusCode, markup: Markup) -> Response {
    (status, Html(markup.into_string())).into_response()
}

/// The CSRF token field every form of the signed-in dashboard carries.
pub fn csrf(s: &Session) -> Markup {
    html! { input type="hidden" name="csrf" value=(s.csrf_token); }
}

/// What a removal's confirmation page says and where its buttons go.
pub struct Confirm<'a> {
    pub nav: Nav,
    pub title: &'a str,
    pub question: String,
    pub action: String,
    pub button: &'a str,
    pub back: &'a str,
}

/// The confirmation step of a removal: what will happen, the button that does it (a form
/// with the CSRF token), and a way back.
pub fn confirm(s: &Session, c: Confirm<'_>) -> Response {
    let (question, action, button, back) = (&c.question, &c.action, c.button, c.back);
    let body = html! {
        section class="card" {
            p { (question) }
            div class="actions" {
                form method="post" action=(action) {
                    (csrf(s))
                    button class="danger" type="submit" { (button) }
                }
                a class="button secondary" href=(back) { "Cancel" }
            }
        }
    };
    render(frame(s, c.nav, c.title, &Messages::default(), body))
}

pub fn when(t: Option<DateTime<Utc>>) -> String {
    t.map_or_else(
        || "never".to_owned(),
        |t| t.format("%Y-%m-%d %H:%M UTC").to_string(),
    )
}

/// An error answered as a page (the JSON envelope is for `/api/v1`).
pub struct PageError(pub ApiError);

impl<E: Into<ApiError>> From<E> for PageError {
    fn from(e: E) -> Self {
        Self(e.into())
    }
}

pub type PageResult = Result<Response, PageError>;

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let status = self.0.status();
        if status.is_server_error() {
            // Logged once with its cause by the envelope's own conversion.
            let _ = self.0.into_response();
            return error_page(
                status,
                "Something went wrong on our side. Please try again in a moment.",
            );
        }
        let text = match status {
            StatusCode::NOT_FOUND => {
                "This page does not exist, or it belongs to another account.".to_owned()
            }
            _ => self.0.to_string(),
        };
        error_page(status, &text)
    }
}

pub fn error_page(status: StatusCode, text: &str) -> Response {
    let title = match status {
        StatusCode::NOT_FOUND => "Not found",
        StatusCode::FORBIDDEN => "Refused",
        StatusCode::TOO_MANY_REQUESTS => "Too many attempts",
        s if s.is_server_error() => "Error",
        _ => "Cannot do that",
    };
    render_status(
        status,
        public(
            title,
            &[text.to_owned()],
            None,
            html! { p { a href="/app" { "Back to the dashboard" } } },
        ),
    )
}
