//! API keys: list, create (the full key shown once, with a copy button), revoke after a
//! confirmation. Same `jobs::tenancy` functions as `/api/v1/api-keys`.

use super::extract::{Form, Query};
use super::page::{self, Messages, Nav, PageResult};
use super::session::SignedIn;
use super::Notice;
use crate::extract::path_id;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use jobs::sessions::Session;
use jobs::tenancy::{self, CreatedKey};
use maud::html;
use serde::Deserialize;

async fn list_page(
    state: &AppState,
    s: &Session,
    m: &Messages<'_>,
    created: Option<&CreatedKey>,
) -> PageResult {
    let keys = tenancy::list_api_keys(&state.db, s.company_id).await?;
    let body = html! {
        @if let Some(k) = created {
            section class="card" id="new-key" aria-labelledby="new-key-h" {
                h2 id="new-key-h" { "Your new key “" (k.name) "”" }
                p { "Copy it now: it is shown only this once. Send it as " code { "Authorization: Bearer <key>" } "." }
                code class="secret" id="new-key-value" { (k.api_key) }
                p { button type="button" class="secondary" data-copy="new-key-value" { "Copy" } }
            }
        }
        section class="card" aria-labelledby="create-h" {
            h2 id="create-h" { "Create a key" }
            form class="stack" method="post" action="/app/keys" {
                (page::csrf(s))
                label { "Name" span class="hint" { "What will use it, e.g. the CRM's nightly push." }
                    input type="text" name="name" required maxlength="100"; }
                label { "Role" span class="hint" { "Admin: everything but owners. Manager: pricing and ECRI decisions, pushes and uploads. Viewer: reads only, for a BI tool." }
                    select name="role" {
                        option value="admin" selected { "admin" }
                        option value="manager" { "manager" }
                        option value="viewer" { "viewer" }
                    }
                }
                div { button type="submit" { "Create key" } }
            }
        }
        h2 { "Keys" }
        div class="table-wrap" {
            table id="keys" {
                thead { tr { th { "Name" } th { "Role" } th { "Prefix" } th { "Created" } th { "Last used" } th { "Revoked" } th { span class="skip" { "Actions" } } } }
                tbody {
                    @for k in &keys {
                        tr data-key-id=(k.id) {
                            td { (k.name) } td { (k.role) } td { code { (k.prefix) "…" } }
                            td { (page::when(Some(k.created_at))) } td { (page::when(k.last_used_at)) }
                            td { @if let Some(r) = k.revoked_at { (page::when(Some(r))) } @else { "active" } }
                            td { @if k.revoked_at.is_none() { a href={"/app/keys/" (k.id) "/revoke"} { "Revoke" } } }
                        }
                    }
                }
            }
        }
    };
    Ok(page::render(page::frame(s, Nav::Keys, "API keys", m, body)))
}

pub async fn list(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Query(n): Query<Notice>,
) -> PageResult {
    list_page(&state, &s, &Messages::notice(n.text()), None).await
}

#[derive(Deserialize)]
pub struct NewKey {
    name: String,
    role: Option<String>,
}

pub async fn create(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Form(f): Form<NewKey>,
) -> PageResult {
    // As `POST /api/v1/api-keys`: a new key needs a plan (listing and revoking do not).
    super::require_access(&s)?;
    let created = match f.role.as_deref().map(|r| {
        jobs::access::Role::parse(r).ok_or_else(|| {
            jobs::Error::from(jobs::ValidationError::new(
                "role",
                "must be admin, manager or viewer",
            ))
        })
    }) {
        Some(Err(e)) => Err(e),
        role => {
            let role = role
                .and_then(Result::ok)
                .unwrap_or(jobs::access::Role::Admin);
            tenancy::create_api_key_with(&state.db, &state.hasher, &acting.who, &f.name, role, None)
                .await
        }
    };
    match created {
        Ok(done) => {
            let k = state.finish(done).await;
            list_page(
                &state,
                &s,
                &Messages::notice(Some("Key created.")),
                Some(&k),
            )
            .await
        }
        Err(jobs::Error::Invalid(v)) => {
            let mut r = list_page(&state, &s, &Messages::error(v.to_string()), None).await?;
            *r.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
            Ok(r)
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn confirm_revoke(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Path(id): Path<String>,
) -> PageResult {
    let id: uuid::Uuid = path_id(&id, "API key")?;
    let keys = tenancy::list_api_keys(&state.db, s.company_id).await?;
    let key = keys
        .iter()
        .find(|k| k.id == id)
        .ok_or_else(|| crate::error::ApiError::NotFound(format!("no API key with id {id}")))?;
    Ok(page::confirm(
        &s,
        page::Confirm {
            nav: Nav::Keys,
            title: "Revoke a key",
            question: format!(
                "Revoke the key “{}”? Anything that uses it gets 401 from then on. This cannot be undone.",
                key.name
            ),
            action: format!("/app/keys/{id}/revoke"),
            button: "Revoke key",
            back: "/app/keys",
        },
    ))
}

pub async fn revoke(
    State(state): State<AppState>,
    acting: crate::access::Acting,
    Path(id): Path<String>,
) -> PageResult {
    let id: uuid::Uuid = path_id(&id, "API key")?;
    let done = tenancy::revoke_api_key(&state.db, &acting.who, id).await?;
    state.finish(done).await;
    Ok(Redirect::to("/app/keys?notice=revoked").into_response())
}
