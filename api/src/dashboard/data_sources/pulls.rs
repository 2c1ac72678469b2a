//! One data source's page: its pulls (`GET /api/v1/data-sources/:id/pulls`) and the backfill
//! form (the rules of `POST /api/v1/data-sources/:id/pull`).

use crate::dashboard::extract::{Form, Query};
use crate::dashboard::page::{self, Messages, Nav, PageResult};
use crate::dashboard::session::SignedIn;
use crate::dashboard::{form_error, require_access, through_api, Notice};
use crate::extract::path_id;
use crate::requests::PullRange;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use jobs::data_sources::{self, DataSource, Pull};
use jobs::sessions::Session;
use maud::{html, Markup};
use std::collections::BTreeMap;

/// The backfill form: one date, or a range from / to (the rules of `POST .../pull`); a refused
/// value is shown again with the message at its field.
fn backfill_form(
    s: &Session,
    d: &DataSource,
    v: &BTreeMap<String, String>,
    error: Option<(&str, &str)>,
) -> Markup {
    let at = |field: &str| error.filter(|(f, _)| *f == field).map(|(_, m)| m);
    html! {
        form class="card stack" id="backfill" method="post" action={"/app/data-sources/" (d.id) "/backfill"} {
            h2 { "Pull dates" }
            p class="hint" { "One date, or a backfill from one date to another (at most 90 days, not later than tomorrow). Empty: yesterday in your time zone." }
            (page::csrf(s))
            @for (name, label) in [("date", "Date"), ("from", "From"), ("to", "To")] {
                label { (label)
                    input type="date" name=(name) value=[v.get(name)] aria-invalid=[at(name).map(|_| "true")];
                    @if let Some(m) = at(name) {
                        span class="field-error" id={"err-backfill-" (name)} role="alert" { (m) }
                    }
                }
            }
            div class="actions" { button type="submit" { "Pull" } }
        }
    }
}

fn pulls_table(pulls: &[Pull]) -> Markup {
    let dates = |p: &Pull| match (p.date_from, p.date_to) {
        (Some(a), Some(b)) if a == b => a.to_string(),
        (Some(a), Some(b)) => format!("{a} to {b}"),
        _ => "default (yesterday)".to_owned(),
    };
    html! {
        @if pulls.is_empty() { p class="muted" id="pulls-none" { "No pull yet." } } @else {
            div class="table-wrap" {
                table id="pulls" {
                    caption { "Latest pulls, newest first" }
                    thead { tr { th { "Requested" } th { "Trigger" } th { "Dates" } th { "Status" } th { "Started" } th { "Finished" }
                        th { "Snapshots created" } th { "Updated" } th { "Facilities created" } th { "Matched" } th { "Warnings" } th { "Error" } } }
                    tbody {
                        @for p in pulls {
                            tr data-pull-id=(p.id) {
                                td { (page::when(Some(p.requested_at))) }
                                td class="pull-trigger" { (p.trigger.replace('_', " ")) }
                                td class="pull-dates" { (dates(p)) }
                                td class="pull-status" { (p.status) }
                                td { (p.started_at.map(|t| page::when(Some(t))).unwrap_or_default()) }
                                td { (p.finished_at.map(|t| page::when(Some(t))).unwrap_or_default()) }
                                td class="num" { (p.snapshots_created) }
                                td class="num" { (p.snapshots_updated) }
                                td class="num" { (p.facilities_created) }
                                td class="num" { (p.facilities_matched) }
                                td class="pull-warnings" {
                                    @if let Some(w) = p.warnings.as_array().filter(|w| !w.is_empty()) {
                                        ul { @for x in w { li { (x.as_str().unwrap_or_default()) } } }
                                    }
                                }
                                td class="pull-error" { (p.error.as_deref().unwrap_or("")) }
                            }
                        }
                    }
                }
            }
        }
    }
}

async fn detail_page(
    state: &AppState,
    s: &Session,
    id: uuid::Uuid,
    m: &Messages<'_>,
    v: &BTreeMap<String, String>,
    error: Option<(&str, &str)>,
    status: StatusCode,
) -> PageResult {
    let d = data_sources::get(&state.db, s.company_id, id).await?;
    let pulls = data_sources::pulls::list(&state.db, s.company_id, id).await?;
    let body = html! {
        p { (d.provider) " · " (d.base_url) " · schedule " code { (d.schedule) } " · "
            @if d.enabled { "enabled" } @else { "paused" } }
        (backfill_form(s, &d, v, error))
        h2 { "Pulls" }
        (pulls_table(&pulls))
        p { a href="/app/data-sources" { "All data sources" } }
    };
    Ok(page::render_status(
        status,
        page::frame(s, Nav::DataSources, &d.name, m, body),
    ))
}

/// A data source's pulls (`GET /api/v1/data-sources/:id/pulls`) and the backfill form.
pub async fn detail(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Path(id): Path<String>,
    Query(n): Query<Notice>,
) -> PageResult {
    let id = path_id(&id, "data source")?;
    let m = Messages::notice(n.text());
    detail_page(&state, &s, id, &m, &BTreeMap::new(), None, StatusCode::OK).await
}

/// Pulls the dates of the backfill form, checked as `POST /api/v1/data-sources/:id/pull`
/// checks its body.
pub async fn backfill(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Path(id): Path<String>,
    Form(v): Form<BTreeMap<String, String>>,
) -> PageResult {
    let id = path_id(&id, "data source")?;
    require_access(&s)?;
    let body = crate::dashboard::form_json(&v, &[], false);
    let (db, who) = (&state.db, &acting.who);
    let result = through_api(&body, |range: PullRange| async move {
        data_sources::request_pull(db, who, id, &range.into()).await
    })
    .await;
    match result {
        Ok(done) => {
            state.finish(done).await;
            Ok(Redirect::to(&format!("/app/data-sources/{id}?notice=pull")).into_response())
        }
        Err(e) => {
            let m = form_error(e)?;
            // A message reads "<field>: <what is wrong>"; an unnamed one goes with the date.
            let field = m
                .split_once(": ")
                .map(|(f, _)| f)
                .filter(|f| ["date", "from", "to"].contains(f))
                .unwrap_or("date");
            let status = StatusCode::UNPROCESSABLE_ENTITY;
            let messages = Messages::error(m.clone());
            detail_page(&state, &s, id, &messages, &v, Some((field, &m)), status).await
        }
    }
}
