//! The audit log: a page of it as JSON, the same filters as CSV, and its retention. Owners and
//! admins only.

use crate::access::Acting;
use crate::auth::Auth;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, Query};
use crate::requests::AuditQuery;
use crate::state::AppState;
use crate::views::audit::AuditEntry;
use axum::extract::State;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(csv))
        .routes(routes!(settings, set_settings))
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

/// The audit log as CSV.
///
/// The same filters as the list, newest first, from `before` when it is given; `limit` (1 to
/// 500) rows when it is given, otherwise every matching entry up to 50,000.
#[utoipa::path(get, path = "/api/v1/audit-log.csv", tag = "audit",
    params(AuditQuery),
    responses((status = 200, description = "The log as CSV: time, actor, role, action, target, facility, before, after, client address.", content_type = "text/csv", body = String)))]
async fn csv(
    State(state): State<AppState>,
    Auth(who): Auth,
    Query(q): Query<AuditQuery>,
) -> ApiResult<Response> {
    let limit = q.limit;
    let filter = q.filter(jobs::audit::MAX_PAGE);
    match limit {
        None => crate::exports::audit_log(&state, who.company_id, filter).await,
        Some(n) if (1..=jobs::audit::MAX_PAGE).contains(&n) => {
            crate::exports::audit_log_rows(&state, who.company_id, filter, n as usize).await
        }
        Some(_) => Err(ApiError::Invalid(format!(
            "limit: must be 1 to {}",
            jobs::audit::MAX_PAGE
        ))),
    }
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
