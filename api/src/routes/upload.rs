//! `POST /api/v1/facilities/:id/upload`: unit rates or competitor rates as CSV (streamed) or
//! JSON `{rows: [...]}`; and the CSV templates.
//!
//! The body is read to its end and every row checked first, holding no database connection
//! ([`read`]); one bad row rejects the upload with every bad row's line and reason. Only then
//! is a connection taken, and everything the upload writes is written in one transaction.

pub(crate) mod read;

use crate::auth::Auth;
use crate::error::{ApiError, ApiResult};
use crate::extract::{path_id, Query};
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::Utc;
use jobs::competitors;
use jobs::upload::{self, UploadKind};
use read::Collected;
use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/facilities/{id}/upload", post(upload))
        .route("/api/v1/upload-templates/{kind}", get(template))
}

async fn template(Path(kind): Path<String>) -> ApiResult<Response> {
    let kind = UploadKind::parse(kind.trim_end_matches(".csv")).ok_or_else(|| {
        ApiError::NotFound(format!(
            "no template '{kind}': use unit_rates or competitor_rates"
        ))
    })?;
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{}.csv\"", kind.as_str()),
            ),
        ],
        upload::template(kind),
    )
        .into_response())
}

#[derive(Deserialize)]
struct UploadQuery {
    kind: Option<String>,
    date: Option<String>,
}

async fn upload(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
    Query(q): Query<UploadQuery>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let facility_id = path_id(&id, "facility")?;
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let declared_length = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let request = Request {
        company_id: who.company_id,
        facility_id,
        kind: q.kind.as_deref(),
        date: q.date.as_deref(),
        content_type,
        declared_length,
    };
    let collected = collect(&state, &request, body).await?;
    if collected.error_count > 0 {
        return Ok(rejection(&collected));
    }
    Ok(Json(store(&state, &request, collected).await?).into_response())
}

/// One upload, as the API and the dashboard's upload page both describe it.
pub(crate) struct Request<'a> {
    pub company_id: Uuid,
    pub facility_id: Uuid,
    /// `unit_rates`, `competitor_rates`, or `None` to detect it from the columns.
    pub kind: Option<&'a str>,
    /// The date of rows that carry none.
    pub date: Option<&'a str>,
    pub content_type: &'a str,
    pub declared_length: Option<u64>,
}

/// Reads and checks every row of an upload, writing nothing; a missing or another company's
/// facility is a 404 before any of the body is read.
pub(crate) async fn collect(state: &AppState, r: &Request<'_>, body: Body) -> ApiResult<Collected> {
    jobs::facilities::ensure_owned(&state.db, r.company_id, r.facility_id).await?;
    let kind = r
        .kind
        .map(|k| {
            UploadKind::parse(k).ok_or_else(|| {
                ApiError::Invalid(
                    "query parameter kind: must be unit_rates or competitor_rates".into(),
                )
            })
        })
        .transpose()?;
    let date = r
        .date
        .map(|d| {
            jobs::sync::payload::SnapshotDate::parse(d)
                .map(|d| d.0)
                .map_err(|m| ApiError::Invalid(format!("query parameter date: {m}")))
        })
        .transpose()?;
    let content_type = r
        .content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let today = Utc::now().date_naive();
    let cancel = read::Cancel::default();
    let collected = match content_type.as_str() {
        "text/csv" | "application/csv" | "text/plain" => {
            if r.declared_length
                .is_some_and(|n| n > read::CSV_MAX_BYTES as u64)
            {
                return Err(ApiError::PayloadTooLarge(format!(
                    "a CSV upload may be at most {} MiB",
                    read::CSV_MAX_BYTES / (1024 * 1024)
                )));
            }
            read::csv(body, kind, date, today, &cancel).await?
        }
        "application/json" => read::json(body, kind, date, today).await?,
        other => {
            return Err(ApiError::UnsupportedMediaType(format!(
                "Content-Type must be text/csv or application/json, got '{}'",
                if other.is_empty() { "none" } else { other }
            )))
        }
    };
    if collected.rows == 0 {
        return Err(ApiError::Invalid(
            "the upload has no rows (only a header, or nothing)".into(),
        ));
    }
    Ok(collected)
}

/// Writes an upload whose every row passed [`collect`]; the API's answer.
pub(crate) async fn store(
    state: &AppState,
    r: &Request<'_>,
    collected: Collected,
) -> ApiResult<serde_json::Value> {
    match collected.kind {
        UploadKind::CompetitorRates => {
            store_competitor_rates(state, r.company_id, r.facility_id, collected).await
        }
        UploadKind::UnitRates => {
            let today = Utc::now().date_naive();
            store_unit_rates(state, r.company_id, r.facility_id, collected, today).await
        }
    }
}

pub(crate) fn rejection(c: &Collected) -> Response {
    let listed: Vec<String> = c
        .errors
        .iter()
        .take(5)
        .map(|e| {
            format!(
                "line {}: {}{}",
                e.line,
                e.field
                    .as_deref()
                    .map(|f| format!("{f}: "))
                    .unwrap_or_default(),
                e.message
            )
        })
        .collect();
    let more = if c.error_count > 5 {
        format!("; and {} more", c.error_count - 5)
    } else {
        String::new()
    };
    let body = json!({
        "error": format!(
            "{} of {} rows are invalid, nothing was written: {}{more}",
            c.error_count,
            c.rows,
            listed.join("; ")
        ),
        "error_count": c.error_count,
        "errors": c.errors,
    });
    (StatusCode::UNPROCESSABLE_ENTITY, Json(body)).into_response()
}

async fn store_competitor_rates(
    state: &AppState,
    company_id: Uuid,
    facility_id: Uuid,
    collected: Collected,
) -> ApiResult<serde_json::Value> {
    let mut tx = state.db.begin().await?;
    let (inserted, updated) = competitors::upsert(
        &mut tx,
        company_id,
        facility_id,
        "upload",
        &collected.competitors,
    )
    .await?;
    tx.commit().await?;
    Ok(json!({
        "ok": true,
        "kind": UploadKind::CompetitorRates,
        "rows": collected.rows,
        "inserted": inserted,
        "updated": updated,
        "warnings": collected.warnings,
    }))
}

/// Each date's rows become the payload a push of that day would send, merged into the day's
/// record when it has one; all days and their ingest jobs in one transaction, the jobs pushed
/// once it committed.
async fn store_unit_rates(
    state: &AppState,
    company_id: Uuid,
    facility_id: Uuid,
    collected: Collected,
    today: chrono::NaiveDate,
) -> ApiResult<serde_json::Value> {
    let mut tx = state.db.begin().await?;
    let days = upload::store::unit_rates(&mut tx, company_id, facility_id, &collected.units, today)
        .await?;
    tx.commit().await?;
    let job_ids: Vec<Uuid> = days.iter().map(|d| d.job_id).collect();
    state
        .push_after_commit(jobs::queue::Kind::Ingest, &job_ids)
        .await;
    let snapshots: Vec<_> = days
        .iter()
        .map(|d| {
            json!({
                "date": d.date,
                "sync_id": d.sync_id,
                "merged": d.merged,
                "idempotent": d.idempotent,
                "unit_types": d.unit_types,
                "job": { "id": d.job_id, "kind": "ingest" },
            })
        })
        .collect();
    Ok(json!({
        "ok": true,
        "kind": UploadKind::UnitRates,
        "rows": collected.rows,
        "snapshots": snapshots,
        "warnings": collected.warnings,
    }))
}
