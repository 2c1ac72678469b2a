//! The audit log: a page of it as JSON, the same filters as CSV, and its retention. Owners and
//! admins only.

use crate::access::Acting;
use crate::auth::Auth;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, Query};
use crate::state::AppState;
use crate::views::audit::AuditEntry;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use domain::ids::CompanyId;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(csv))
        .routes(routes!(settings, set_settings))
}

/// Filters of the audit log; each is optional.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct AuditQuery {
    /// Only entries at or after this time (RFC 3339).
    pub since: Option<DateTime<Utc>>,
    /// Only entries of this actor: a member's address or a key's name (case-insensitive).
    #[param(max_length = 254)]
    pub actor: Option<String>,
    /// Only this action (`api_key.create`), or every action of a noun with a trailing dot
    /// (`api_key.`).
    #[param(max_length = 100)]
    pub action: Option<String>,
    /// Only entries about this facility.
    pub facility_id: Option<Uuid>,
    /// The `next` of the previous page: entries older than it.
    #[param(minimum = 1)]
    pub before: Option<i64>,
    /// Page size, 1 to 500 (default 100).
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
}

impl AuditQuery {
    pub(crate) fn filter(self, default_limit: i64) -> jobs::audit::Filter {
        jobs::audit::Filter {
            since: self.since,
            actor: self.actor.filter(|a| !a.trim().is_empty()),
            action: self.action.filter(|a| !a.trim().is_empty()),
            facility_id: self.facility_id,
            before_id: self.before,
            limit: self.limit.unwrap_or(default_limit),
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
struct AuditPage {
    /// Entries, newest first.
    entries: Vec<AuditEntry>,
    /// Pass as `before` for the next page; null on the last page.
    next: Option<i64>,
}

/// Lists the audit log, newest first.
#[utoipa::path(get, path = "/api/v1/audit-log", tag = "audit",
    params(AuditQuery),
    responses((status = 200, description = "A page of the log.", body = AuditPage)))]
async fn list(
    State(state): State<AppState>,
    Auth(who): Auth,
    Query(q): Query<AuditQuery>,
) -> ApiResult<axum::Json<AuditPage>> {
    let page = jobs::audit::list(&state.db, who.company_id, &q.filter(100)).await?;
    Ok(axum::Json(AuditPage {
        entries: page.entries.into_iter().map(Into::into).collect(),
        next: page.next,
    }))
}

/// Most rows of one CSV export.
pub(crate) const CSV_MAX_ROWS: usize = 50_000;

/// The log under `filter` as CSV rows, newest first, at most [`CSV_MAX_ROWS`].
pub(crate) async fn csv_document(
    state: &AppState,
    company: CompanyId,
    mut filter: jobs::audit::Filter,
) -> Result<Response, ApiError> {
    filter.limit = jobs::audit::MAX_PAGE;
    let mut rows: Vec<Vec<String>> = Vec::new();
    loop {
        let page = jobs::audit::list(&state.db, company, &filter).await?;
        rows.extend(page.entries.into_iter().map(|e| {
            let json = |v: Option<serde_json::Value>| v.map(|v| v.to_string()).unwrap_or_default();
            vec![
                e.at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                e.actor.label(),
                e.role.unwrap_or_default(),
                e.action,
                e.target.unwrap_or_default(),
                e.facility_id.map(|f| f.to_string()).unwrap_or_default(),
                json(e.before),
                json(e.after),
                e.client_addr.unwrap_or_default(),
            ]
        }));
        match page.next {
            Some(next) if rows.len() < CSV_MAX_ROWS => filter.before_id = Some(next),
            _ => break,
        }
    }
    rows.truncate(CSV_MAX_ROWS);
    let headers: Vec<String> = [
        "Time (UTC)",
        "Actor",
        "Role",
        "Action",
        "Target",
        "Facility id",
        "Before",
        "After",
        "Client address",
    ]
    .iter()
    .map(|h| (*h).to_owned())
    .collect();
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
            (
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"audit-log.csv\"",
            ),
        ],
        crate::csv_export::write(&headers, rows),
    )
        .into_response())
}

/// The audit log as CSV (the same filters; `before` and `limit` are ignored: every matching
/// entry, newest first, at most 50,000).
#[utoipa::path(get, path = "/api/v1/audit-log.csv", tag = "audit",
    params(AuditQuery),
    responses((status = 200, description = "The log as CSV: time, actor, role, action, target, facility, before, after, client address.", content_type = "text/csv", body = String)))]
async fn csv(
    State(state): State<AppState>,
    Auth(who): Auth,
    Query(q): Query<AuditQuery>,
) -> ApiResult<Response> {
    let mut filter = q.filter(100);
    filter.before_id = None;
    csv_document(&state, who.company_id, filter).await
}

/// How long the log keeps an entry.
#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AuditSettings {
    /// Days an entry is kept, 30 to 3,650 (default 365); older entries are deleted daily.
    #[schema(minimum = 30, maximum = 3650)]
    pub audit_retention_days: i32,
}

/// Reads the audit log's retention.
#[utoipa::path(get, path = "/api/v1/audit-log/settings", tag = "audit",
    responses((status = 200, description = "The retention.", body = AuditSettings)))]
async fn settings(
    State(state): State<AppState>,
    Auth(who): Auth,
) -> ApiResult<axum::Json<AuditSettings>> {
    Ok(axum::Json(AuditSettings {
        audit_retention_days: jobs::audit::retention_days(&state.db, who.company_id).await?,
    }))
}

/// Sets the audit log's retention.
#[utoipa::path(put, path = "/api/v1/audit-log/settings", tag = "audit",
    request_body = AuditSettings,
    responses((status = 200, description = "The retention as set.", body = AuditSettings)))]
async fn set_settings(
    State(state): State<AppState>,
    acting: Acting,
    Json(body): Json<AuditSettings>,
) -> ApiResult<axum::Json<AuditSettings>> {
    let done =
        jobs::audit::set_retention(&state.db, &acting.who, body.audit_retention_days).await?;
    state.finish(done).await;
    Ok(axum::Json(body))
}
