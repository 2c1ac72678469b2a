//! The Audit log page: its filters, a page of entries, the CSV of every matching entry and the
//! company's retention.

use crate::access::Acting;
use crate::dashboard::extract::{Form, Query};
use crate::dashboard::page::{self, Messages, Nav, PageResult};
use crate::dashboard::session::SignedIn;
use crate::dashboard::Notice;
use crate::requests::AuditQuery;
use crate::state::AppState;
use axum::extract::State;
use axum::response::{IntoResponse, Redirect};
use maud::{html, Markup};
use serde::Deserialize;

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
                thead { tr { th { "Time" } th { "Actor" } th { "Role" } th { "Action" } th { "Target" } th { "Before" } th { "After" } th { "Address" } th { "Via" } } }
                tbody {
                    @for e in &page_of_log.entries {
                        tr data-action=(e.action) {
                            td { (page::when(Some(e.at))) } td { (e.actor.label()) }
                            td { (e.role.as_deref().unwrap_or("")) } td { code { (e.action) } }
                            td { (e.target.as_deref().unwrap_or("")) }
                            td { code { (json_cell(&e.before)) } } td { code { (json_cell(&e.after)) } }
                            td { (e.client_addr.as_deref().unwrap_or("")) }
                            td { (e.via.as_deref().unwrap_or("")) }
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
    Ok(crate::exports::audit_log(&state, s.company_id, filter).await?)
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
