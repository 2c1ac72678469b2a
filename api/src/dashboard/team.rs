//! The Team page (members, their roles, invitations), the page an invitation's link opens, and
//! the Audit log page with its filters, CSV and retention. The same `jobs::team` and
//! `jobs::audit` functions as `/api/v1/team` and `/api/v1/audit-log`.

use super::extract::{Form, Query};
use super::page::{self, Messages, Nav, PageResult};
use super::session::{self, SignedIn};
use super::Notice;
use crate::access::{client, Acting};
use crate::extract::{path_id, PeerAddr};
use crate::routes::audit::AuditQuery;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum_extra::extract::cookie::CookieJar;
use jobs::access::{Role, Scope, ROLES};
use jobs::sessions::Session;
use maud::{html, Markup};
use serde::Deserialize;

fn role_options(s: &Session, selected: Role) -> Markup {
    html! {
        @for r in ROLES {
            // Only an owner may give the owner role.
            @if r != Role::Owner || s.role == Role::Owner {
                option value=(r.as_str()) selected[r == selected] { (r.as_str()) }
            }
        }
    }
}

/// The facility boxes of a scope: none ticked is every facility.
fn scope_boxes(facilities: &[jobs::facilities::Facility], scope: &Scope, label: &str) -> Markup {
    html! {
        details class="scope" {
            summary { (label) ": " @if let Some(ids) = scope.ids() { (ids.len()) " of " (facilities.len()) } @else { "all" } }
            p class="hint" { "Managers and viewers only. Tick none for every facility." }
            @for f in facilities {
                label class="check" {
                    input type="checkbox" name="facility_ids" value=(f.id) checked[scope.ids().is_some_and(|ids| ids.contains(&f.id))];
                    " " (f.name)
                }
            }
        }
    }
}

/// The facilities ticked in a form; `None` when none was (every facility).
fn ticked(pairs: &[(String, String)]) -> Result<Option<Vec<uuid::Uuid>>, jobs::Error> {
    let ids = pairs
        .iter()
        .filter(|(k, _)| k == "facility_ids")
        .map(|(_, v)| {
            uuid::Uuid::parse_str(v.trim()).map_err(|_| {
                jobs::ValidationError::new("facility_ids", format!("no facility with id {v}"))
                    .into()
            })
        })
        .collect::<Result<Vec<_>, jobs::Error>>()?;
    Ok((!ids.is_empty()).then_some(ids))
}

fn field<'a>(pairs: &'a [(String, String)], name: &str) -> &'a str {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map_or("", |(_, v)| v.as_str())
}

async fn team_page(state: &AppState, s: &Session, m: &Messages<'_>) -> PageResult {
    let members = jobs::team::members(&state.db, s.company_id).await?;
    let invitations = jobs::team::open_invitations(&state.db, s.company_id).await?;
    let facilities = jobs::facilities::list(&state.db, s.company_id, &Scope::All).await?;
    // The last owner can be neither removed nor demoted (409): no link that can only fail.
    let owners = members.iter().filter(|m| m.role == Role::Owner).count();
    let body = html! {
        section class="card" aria-labelledby="invite-h" {
            h2 id="invite-h" { "Invite a colleague" }
            form class="stack" method="post" action="/app/team/invitations" {
                (page::csrf(s))
                label { "E-mail" input type="email" name="email" required maxlength="254"; }
                label { "Role"
                    span class="hint" { "Manager: pricing, ECRI and rate decisions, uploads. Viewer: reads only. Admin: everything but owners." }
                    select name="role" { (role_options(s, Role::Manager)) }
                }
                (scope_boxes(&facilities, &Scope::All, "Facilities"))
                div { button type="submit" { "Send the invitation" } }
            }
        }
        h2 { "Members" }
        div class="table-wrap" {
            table id="members" {
                thead { tr { th { "E-mail" } th { "Role and facilities" } th { "Last sign-in" } th { "Joined" } th { span class="skip" { "Actions" } } } }
                tbody {
                    @for mem in &members {
                        tr data-member-id=(mem.id) {
                            td { (mem.email) @if mem.id == s.user_id { " (you)" } }
                            td {
                                @if mem.role != Role::Owner || s.role == Role::Owner {
                                    form class="inline" method="post" action={"/app/team/members/" (mem.id)} {
                                        (page::csrf(s))
                                        select name="role" aria-label={"Role of " (mem.email)} { (role_options(s, mem.role)) }
                                        @if mem.role != Role::Owner {
                                            (scope_boxes(&facilities, &mem.scope, "Facilities"))
                                        }
                                        button class="secondary" type="submit" { "Change" }
                                    }
                                } @else { (mem.role.as_str()) }
                            }
                            td { (page::when(mem.last_sign_in_at)) }
                            td { (page::when(Some(mem.created_at))) }
                            td { @if mem.role == Role::Owner && owners == 1 {
                                span class="muted" { "The only owner: make another member owner to remove or demote them." }
                            } @else if mem.role != Role::Owner || s.role == Role::Owner {
                                a href={"/app/team/members/" (mem.id) "/remove"} { "Remove" }
                            } }
                        }
                    }
                }
            }
        }
        h2 { "Open invitations" }
        @if invitations.is_empty() { p class="muted" { "None." } } @else {
            div class="table-wrap" {
                table id="invitations" {
                    thead { tr { th { "E-mail" } th { "Role" } th { "Facilities" } th { "Invited by" } th { "Expires" } th { span class="skip" { "Actions" } } } }
                    tbody {
                        @for i in &invitations {
                            tr data-invitation-id=(i.id) {
                                td { (i.email) } td { (i.role.as_str()) }
                                td { @if let Some(ids) = i.scope.ids() { (ids.len()) } @else { "all" } }
                                td { (i.invited_by.label()) }
                                td { (page::when(Some(i.expires_at))) }
                                td { form class="inline" method="post" action={"/app/team/invitations/" (i.id) "/revoke"} {
                                    (page::csrf(s))
                                    button class="secondary" type="submit" { "Revoke" }
                                } }
                            }
                        }
                    }
                }
            }
        }
    };
    Ok(page::render(page::frame(s, Nav::Team, "Team", m, body)))
}

pub async fn show(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Query(n): Query<Notice>,
) -> PageResult {
    team_page(&state, &s, &Messages::notice(n.text())).await
}

/// A refused change (422, 409 or 403) shown on the Team page with the status the API answers;
/// anything else is the error page.
async fn refused(state: &AppState, s: &Session, e: jobs::Error) -> PageResult {
    let e = crate::error::ApiError::from(e);
    let status = e.status();
    if ![
        StatusCode::UNPROCESSABLE_ENTITY,
        StatusCode::CONFLICT,
        StatusCode::FORBIDDEN,
    ]
    .contains(&status)
    {
        return Err(e.into());
    }
    let mut r = team_page(state, s, &Messages::error(e.to_string())).await?;
    *r.status_mut() = status;
    Ok(r)
}

fn parse_role(raw: &str) -> Result<Role, jobs::Error> {
    Role::parse(raw).ok_or_else(|| {
        jobs::ValidationError::new("role", "must be owner, admin, manager or viewer").into()
    })
}

pub async fn invite(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: Acting,
    Form(f): Form<Vec<(String, String)>>,
) -> PageResult {
    let result = match (parse_role(field(&f, "role")), ticked(&f)) {
        (Ok(role), Ok(facility_ids)) => {
            jobs::team::invite(
                &state.db,
                &state.config.master_key,
                &state.config.public_base_url,
                &acting.who,
                jobs::team::NewInvitation {
                    email: field(&f, "email").to_owned(),
                    role,
                    facility_ids,
                },
            )
            .await
        }
        (Err(e), _) | (_, Err(e)) => Err(e),
    };
    match result {
        Ok(done) => {
            state.finish(done).await;
            Ok(Redirect::to("/app/team?notice=invited").into_response())
        }
        Err(e) => refused(&state, &s, e).await,
    }
}

pub async fn revoke_invitation(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: Acting,
    Path(id): Path<String>,
) -> PageResult {
    let id = path_id(&id, "invitation")?;
    match jobs::team::revoke_invitation(&state.db, &acting.who, id).await {
        Ok(done) => {
            state.finish(done).await;
            Ok(Redirect::to("/app/team?notice=revoked-invitation").into_response())
        }
        Err(e) => refused(&state, &s, e).await,
    }
}

pub async fn update_member(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: Acting,
    Path(id): Path<String>,
    Form(f): Form<Vec<(String, String)>>,
) -> PageResult {
    let id = path_id(&id, "member")?;
    let result = match (parse_role(field(&f, "role")), ticked(&f)) {
        (Ok(role), Ok(facility_ids)) => {
            jobs::team::update_member(
                &state.db,
                &acting.who,
                id,
                jobs::team::MemberChange {
                    role: Some(role),
                    // The page's boxes are the whole scope; a role that sees every facility
                    // ignores them.
                    facility_ids: Some(facility_ids.filter(|_| role.may_be_scoped())),
                },
            )
            .await
        }
        (Err(e), _) | (_, Err(e)) => Err(e),
    };
    match result {
        Ok(done) => {
            state.finish(done).await;
            Ok(Redirect::to("/app/team?notice=updated").into_response())
        }
        Err(e) => refused(&state, &s, e).await,
    }
}

pub async fn confirm_remove(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Path(id): Path<String>,
) -> PageResult {
    let id: uuid::Uuid = path_id(&id, "member")?;
    let members = jobs::team::members(&state.db, s.company_id).await?;
    let member = members
        .iter()
        .find(|m| m.id == id)
        .ok_or_else(|| crate::error::ApiError::NotFound(format!("no member with id {id}")))?;
    Ok(page::confirm(
        &s,
        page::Confirm {
            nav: Nav::Team,
            title: "Remove a member",
            question: format!(
                "Remove {} ({})? Their account is deleted and every session of it ends at once. What they decided stays in the history and the audit log.",
                member.email, member.role
            ),
            action: format!("/app/team/members/{id}/remove"),
            button: "Remove member",
            back: "/app/team",
        },
    ))
}

pub async fn remove_member(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: Acting,
    jar: CookieJar,
    Path(id): Path<String>,
) -> PageResult {
    let id = path_id(&id, "member")?;
    let removed = match jobs::team::remove_member(&state.db, &acting.who, id).await {
        Ok(done) => state.finish(done).await,
        Err(e) => return refused(&state, &s, e).await,
    };
    // Who removed themselves has no session left.
    if removed.id == s.user_id {
        Ok((jar.remove(session::clear_cookie()), Redirect::to("/login")).into_response())
    } else {
        Ok(Redirect::to("/app/team?notice=removed").into_response())
    }
}

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
            Redirect::to("/app"),
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

fn audit_filters(q: &AuditFilterForm) -> Markup {
    html! {
        form class="inline" method="get" action="/app/audit" id="audit-filters" {
            label { "Since" input type="date" name="since" value=(q.since.as_deref().unwrap_or("")); }
            label { "Actor" input type="text" name="actor" maxlength="254" value=(q.actor.as_deref().unwrap_or("")); }
            label { "Action" input type="text" name="action" maxlength="100" placeholder="api_key." value=(q.action.as_deref().unwrap_or("")); }
            label { "Facility id" input type="text" name="facility_id" maxlength="36" value=(q.facility_id.as_deref().unwrap_or("")); }
            button type="submit" { "Filter" }
        }
    }
}

/// The Audit page's filters as typed in a form (a date rather than a time; empty fields).
#[derive(Deserialize, Default)]
pub struct AuditFilterForm {
    since: Option<String>,
    actor: Option<String>,
    action: Option<String>,
    facility_id: Option<String>,
    before: Option<i64>,
}

impl AuditFilterForm {
    fn query(&self) -> Result<AuditQuery, crate::error::ApiError> {
        let bad = |field: &str, what: &str| {
            crate::error::ApiError::Invalid(format!("{field}: must be {what}"))
        };
        let since = match self
            .since
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            None => None,
            Some(d) => Some(
                chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d")
                    .map_err(|_| bad("since", "a date (YYYY-MM-DD)"))?
                    .and_hms_opt(0, 0, 0)
                    .map(|t| t.and_utc())
                    .ok_or_else(|| bad("since", "a date (YYYY-MM-DD)"))?,
            ),
        };
        let facility_id = match self
            .facility_id
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            None => None,
            Some(id) => {
                Some(uuid::Uuid::parse_str(id).map_err(|_| bad("facility_id", "a facility's id"))?)
            }
        };
        Ok(AuditQuery {
            since,
            actor: self.actor.clone(),
            action: self.action.clone(),
            facility_id,
            before: self.before,
            limit: None,
        })
    }

    /// The filters as a query string (for the next page and the CSV link).
    fn query_string(&self, before: Option<i64>) -> String {
        let mut q = form_urlencoded::Serializer::new(String::new());
        for (k, v) in [
            ("since", &self.since),
            ("actor", &self.actor),
            ("action", &self.action),
            ("facility_id", &self.facility_id),
        ] {
            if let Some(v) = v.as_deref().filter(|v| !v.trim().is_empty()) {
                q.append_pair(k, v);
            }
        }
        if let Some(b) = before {
            q.append_pair("before", &b.to_string());
        }
        q.finish()
    }
}

fn json_cell(v: &Option<serde_json::Value>) -> String {
    v.as_ref().map(|v| v.to_string()).unwrap_or_default()
}

pub async fn audit(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Query(f): Query<AuditFilterForm>,
    Query(n): Query<Notice>,
) -> PageResult {
    let query = f.query()?;
    let page_of_log = jobs::audit::list(&state.db, s.company_id, &query.filter(100)).await?;
    let retention = jobs::audit::retention_days(&state.db, s.company_id).await?;
    let body = html! {
        (audit_filters(&f))
        p { a href={"/app/audit.csv?" (f.query_string(None))} download { "Download as CSV" } }
        div class="table-wrap" {
            table id="audit" {
                thead { tr { th { "Time" } th { "Actor" } th { "Role" } th { "Action" } th { "Target" } th { "Before" } th { "After" } th { "Address" } } }
                tbody {
                    @for e in &page_of_log.entries {
                        tr data-action=(e.action) {
                            td { (page::when(Some(e.at))) } td { (e.actor.label()) }
                            td { (e.role.as_deref().unwrap_or("")) } td { code { (e.action) } }
                            td { (e.target.as_deref().unwrap_or("")) }
                            td { code { (json_cell(&e.before)) } } td { code { (json_cell(&e.after)) } }
                            td { (e.client_addr.as_deref().unwrap_or("")) }
                        }
                    }
                }
            }
        }
        @if page_of_log.entries.is_empty() { p class="muted" { "No entries match." } }
        @if let Some(next) = page_of_log.next {
            p { a href={"/app/audit?" (f.query_string(Some(next)))} { "Older entries" } }
        }
        section class="card" aria-labelledby="retention-h" {
            h2 id="retention-h" { "Retention" }
            form class="inline" method="post" action="/app/audit/settings" {
                (page::csrf(&s))
                label { "Keep entries for (days)" input type="number" name="audit_retention_days" min="30" max="3650" required value=(retention); }
                button type="submit" { "Save" }
            }
        }
    };
    Ok(page::render(page::frame(
        &s,
        Nav::Audit,
        "Audit log",
        &Messages::notice(n.text()),
        body,
    )))
}

pub async fn audit_csv(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Query(f): Query<AuditFilterForm>,
) -> PageResult {
    let mut filter = f.query()?.filter(100);
    filter.before_id = None;
    Ok(crate::routes::audit::csv_document(&state, s.company_id, filter).await?)
}

#[derive(Deserialize)]
pub struct RetentionForm {
    audit_retention_days: String,
}

pub async fn save_retention(
    State(state): State<AppState>,
    acting: Acting,
    Form(f): Form<RetentionForm>,
) -> PageResult {
    let days: i32 = f.audit_retention_days.trim().parse().map_err(|_| {
        crate::error::ApiError::Invalid(
            "audit_retention_days: must be a whole number of days".into(),
        )
    })?;
    let done = jobs::audit::set_retention(&state.db, &acting.who, days).await?;
    state.finish(done).await;
    Ok(Redirect::to("/app/audit?notice=updated").into_response())
}
