//! Data sources (connected CRMs): the providers from the registry (live ones selectable, the
//! others shown as coming soon), the connect form (tested before it is stored unless unticked;
//! the key is sealed and only its masked hint is ever shown), pull now, the last pull's time,
//! status and error, schedule, enable / disable, a new key, delete. Same `jobs::data_sources`
//! functions as `/api/v1/data-sources`.

use super::extract::{Form, Query};
use super::page::{self, Messages, Nav, PageResult};
use super::session::SignedIn;
use super::{form_error, require_access, through_api, Notice};
use crate::extract::path_id;
use crate::requests::{NewDataSource, UpdateDataSource};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use jobs::crm::provider::{self, State as ProviderState};
use jobs::data_sources::{self, DataSource, PullRange};
use jobs::sessions::Session;
use maud::{html, Markup};
use serde::Deserialize;
use std::collections::BTreeMap;

mod pulls;
pub use pulls::{backfill, detail};

fn connect_form(s: &Session, v: &BTreeMap<String, String>) -> Markup {
    let get = |k: &str| v.get(k).cloned().unwrap_or_default();
    html! {
        section class="card" {
            h2 { "Connect a CRM" }
            form class="stack" method="post" action="/app/data-sources" {
                (page::csrf(s))
                label { "Provider"
                    select name="provider" {
                        @for p in provider::PROVIDERS.iter().filter(|p| p.info.state == ProviderState::Live) {
                            option value=(p.info.name) selected[get("provider") == p.info.name] { (p.info.name) }
                        }
                        @for p in provider::PROVIDERS.iter().filter(|p| p.info.state == ProviderState::ComingSoon) {
                            option value=(p.info.name) disabled { (p.info.name) " (coming soon)" }
                        }
                    }
                }
                label { "Name" input type="text" name="name" maxlength="200" value=(get("name")); }
                label { "CRM address" span class="hint" { "https:// base URL of its API; may stay empty for storEDGE (its public address is used)." }
                    input type="url" name="base_url" value=(get("base_url")); }
                label { "Read-only API key" span class="hint" { "Sealed at once; only its last characters are shown again." }
                    input type="password" name="api_key" required autocomplete="off"; }
                label { "API secret" span class="hint" { "storEDGE only: the secret that goes with the key." }
                    input type="password" name="api_secret" autocomplete="off"; }
                label { "CRM account id" span class="hint" { "storEDGE only: your storEDGE company id." }
                    input type="text" name="account_id" maxlength="100" value=(get("account_id")); }
                label class="inline" { input type="checkbox" name="verify" value="true" checked; " Test the connection before saving" }
                label { "Schedule" span class="hint" { "Cron with seconds, at most hourly; default nightly at 02:00." }
                    input type="text" name="schedule" value=(v.get("schedule").cloned().unwrap_or_else(|| data_sources::DEFAULT_SCHEDULE.to_owned())); }
                div { button type="submit" { "Connect" } }
            }
        }
    }
}

fn table(s: &Session, items: &[DataSource]) -> Markup {
    html! {
        @if items.is_empty() { p class="muted" { "No CRM connected yet." } } @else {
            div class="table-wrap" {
                table id="data-sources" {
                    thead { tr { th { "Name" } th { "Provider" } th { "Key" } th { "Schedule" } th { "Enabled" } th { "Last pull" } th { "Status" } th { "Error" } th { span class="skip" { "Actions" } } } }
                    tbody {
                        @for d in items {
                            tr data-source-id=(d.id) {
                                td { (d.name) br; span class="muted" { (d.base_url) } }
                                td { (d.provider) }
                                td { code { (d.credential_hint) } }
                                td { code { (d.schedule) } }
                                td { @if d.enabled { "yes" } @else { "no" } }
                                td class="last-pull" { (page::when(d.last_pull_at)) }
                                td class="pull-status" { (d.last_pull_status.as_deref().unwrap_or("none yet")) }
                                td { (d.last_error.as_deref().unwrap_or("")) }
                                td { div class="actions" {
                                    form method="post" action={"/app/data-sources/" (d.id) "/pull"} hx-boost="true" {
                                        (page::csrf(s))
                                        button class="secondary" type="submit" { "Pull now" }
                                    }
                                    a href={"/app/data-sources/" (d.id)} { "Pulls" }
                                    a href={"/app/data-sources/" (d.id) "/edit"} { "Edit" }
                                    a href={"/app/data-sources/" (d.id) "/delete"} { "Delete" }
                                } }
                            }
                        }
                    }
                }
            }
        }
    }
}

async fn list_page(
    state: &AppState,
    s: &Session,
    m: &Messages<'_>,
    v: &BTreeMap<String, String>,
    status: StatusCode,
) -> PageResult {
    let items = data_sources::list(&state.db, s.company_id).await?;
    let body = html! {
        (table(s, &items))
        (connect_form(s, v))
        p class="muted" { "Coming soon: " (provider::names(ProviderState::ComingSoon).join(", ")) "." }
    };
    Ok(page::render_status(
        status,
        page::frame(s, Nav::DataSources, "Data sources", m, body),
    ))
}

pub async fn list(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Query(n): Query<Notice>,
) -> PageResult {
    list_page(
        &state,
        &s,
        &Messages::notice(n.text()),
        &BTreeMap::new(),
        StatusCode::OK,
    )
    .await
}

pub async fn create(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Form(v): Form<BTreeMap<String, String>>,
) -> PageResult {
    require_access(&s)?;
    let crm = state.crm_client()?;
    // An unticked box is not sent: the test is skipped only when asked.
    let mut fields = v.clone();
    let verify = fields.remove("verify").is_some();
    let mut body: serde_json::Value =
        serde_json::from_slice(&super::form_json(&fields, &[], false)).unwrap_or_default();
    body["verify"] = serde_json::Value::Bool(verify);
    let body = serde_json::to_vec(&body).unwrap_or_default();
    let result = through_api(&body, |new: NewDataSource| {
        data_sources::create(
            &state.db,
            &state.config.master_key,
            &state.config.outbound.private_targets,
            &crm,
            &acting.who,
            new.into(),
        )
    })
    .await;
    match result {
        Ok(done) => {
            state.finish(done).await;
            Ok(Redirect::to("/app/data-sources?notice=created").into_response())
        }
        Err(e) => {
            let m = form_error(e)?;
            let status = StatusCode::UNPROCESSABLE_ENTITY;
            list_page(&state, &s, &Messages::error(m), &v, status).await
        }
    }
}

pub async fn pull(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Path(id): Path<String>,
) -> PageResult {
    let id = path_id(&id, "data source")?;
    require_access(&s)?;
    let range = PullRange::default();
    let done = data_sources::request_pull(&state.db, &acting.who, id, &range).await?;
    state.finish(done).await;
    Ok(Redirect::to("/app/data-sources?notice=pull").into_response())
}

fn edit_form(s: &Session, d: &DataSource) -> Markup {
    html! {
        form class="stack card" method="post" action={"/app/data-sources/" (d.id)} {
            (page::csrf(s))
            label { "Name" input type="text" name="name" required maxlength="200" value=(d.name); }
            label { "Schedule" span class="hint" { "Cron with seconds, at most hourly." }
                input type="text" name="schedule" required value=(d.schedule); }
            label { "Enabled"
                select name="enabled" {
                    option value="true" selected[d.enabled] { "yes: pull on the schedule" }
                    option value="false" selected[!d.enabled] { "no: pause scheduled pulls" }
                }
            }
            label { "New read-only API key" span class="hint" { "Leave empty to keep the current one (" (d.credential_hint) ")." }
                input type="password" name="api_key" autocomplete="off"; }
            div class="actions" {
                button type="submit" { "Save" }
                a class="button secondary" href="/app/data-sources" { "Cancel" }
            }
        }
    }
}

pub async fn edit_page(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Path(id): Path<String>,
) -> PageResult {
    let id = path_id(&id, "data source")?;
    let d = data_sources::get(&state.db, s.company_id, id).await?;
    Ok(page::render(page::frame(
        &s,
        Nav::DataSources,
        &format!("Edit {}", d.name),
        &Messages::default(),
        edit_form(&s, &d),
    )))
}

#[derive(Deserialize)]
pub struct Change {
    name: String,
    schedule: String,
    enabled: String,
    #[serde(default)]
    api_key: String,
}

pub async fn update(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Path(id): Path<String>,
    Form(f): Form<Change>,
) -> PageResult {
    let id = path_id(&id, "data source")?;
    require_access(&s)?;
    let mut body = serde_json::json!({
        "name": f.name.trim(),
        "schedule": f.schedule.trim(),
        "enabled": f.enabled == "true",
    });
    if !f.api_key.trim().is_empty() {
        body["api_key"] = serde_json::Value::from(f.api_key.trim());
    }
    let body = serde_json::to_vec(&body).unwrap_or_default();
    let result = through_api(&body, |change: UpdateDataSource| {
        data_sources::update(
            &state.db,
            &state.config.master_key,
            &acting.who,
            id,
            change.into(),
        )
    })
    .await;
    match result {
        Ok(done) => {
            state.finish(done).await;
            Ok(Redirect::to("/app/data-sources?notice=updated").into_response())
        }
        Err(e) => {
            let m = form_error(e)?;
            let d = data_sources::get(&state.db, s.company_id, id).await?;
            Ok(page::render_status(
                StatusCode::UNPROCESSABLE_ENTITY,
                page::frame(
                    &s,
                    Nav::DataSources,
                    &format!("Edit {}", d.name),
                    &Messages::error(m),
                    edit_form(&s, &d),
                ),
            ))
        }
    }
}

pub async fn confirm_delete(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Path(id): Path<String>,
) -> PageResult {
    let id = path_id(&id, "data source")?;
    let d = data_sources::get(&state.db, s.company_id, id).await?;
    Ok(page::confirm(
        &s,
        page::Confirm {
            nav: Nav::DataSources,
            title: "Delete a data source",
            question: format!(
                "Disconnect {}? Its sealed key is deleted; data already pulled stays.",
                d.name
            ),
            action: format!("/app/data-sources/{id}/delete"),
            button: "Delete data source",
            back: "/app/data-sources",
        },
    ))
}

pub async fn delete(
    State(state): State<AppState>,
    acting: crate::access::Acting,
    Path(id): Path<String>,
) -> PageResult {
    let id = path_id(&id, "data source")?;
    let done = data_sources::delete(&state.db, &acting.who, id).await?;
    state.finish(done).await;
    Ok(Redirect::to("/app/data-sources?notice=deleted").into_response())
}
