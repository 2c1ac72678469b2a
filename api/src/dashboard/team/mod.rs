//! The Team page (members, their roles, invitations) and its forms; the page an invitation's
//! link opens (`accept`); the Audit log page with its filters, CSV and retention (`audit`).
//! The same `jobs::team` and `jobs::audit` use cases as `/api/v1/team` and `/api/v1/audit-log`.

mod accept;
mod audit;

pub use accept::{accept, accept_page};
pub use audit::{audit, audit_csv, save_retention};

use super::extract::{Form, Query};
use super::page::{self, Messages, Nav, PageResult};
use super::session::{self, SignedIn};
use super::Notice;
use crate::access::Acting;
use crate::extract::path_id;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use axum_extra::extract::cookie::CookieJar;
use jobs::access::{Role, Scope, ROLES};
use jobs::sessions::Session;
use maud::{html, Markup};

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
        StatusCode::TOO_MANY_REQUESTS,
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
