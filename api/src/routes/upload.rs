//! `POST /api/v1/facilities/:id/upload`: unit rates or competitor rates as CSV (streamed) or
//! JSON `{rows: [...]}`; and the CSV templates.
//!
//! The body is read to its end and every row checked first, holding no database connection
//! (`jobs::upload::collect`); one bad row rejects the upload with every bad row's line and
//! reason. Only then is a connection taken, and everything the upload writes is written in one
//! transaction (`jobs::upload::store`).

use crate::auth::Auth;
use crate::error::{ApiError, ApiResult};
use crate::extract::{path_id, Query};
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use chrono::{NaiveDate, Utc};
use domain::upload::{self, RowError, UploadKind};
use futures::TryStreamExt as _;
use jobs::upload::Collected;
use serde::{Deserialize, Serialize};
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(upload))
        .routes(routes!(template))
}

/// The CSV template of an upload kind: the header and an example row.
#[utoipa::path(get, path = "/api/v1/upload-templates/{kind}", tag = "uploads",
    params(("kind" = String, Path, pattern = "^(unit_rates|competitor_rates|rent_roll)(\\.csv)?$",
        description = "`unit_rates`, `competitor_rates` or `rent_roll` (`.csv` may follow).")),
    responses((status = 200, description = "The template.", content_type = "text/csv", body = String)))]
async fn template(Path(kind): Path<String>) -> ApiResult<Response> {
    let kind = UploadKind::parse(kind.trim_end_matches(".csv")).ok_or_else(|| {
        ApiError::NotFound(format!(
            "no template '{kind}': use unit_rates, competitor_rates or rent_roll"
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

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct UploadQuery {
    /// What the rows carry; detected from the columns when absent.
    #[param(value_type = Option<UploadKind>)]
    kind: Option<String>,
    /// The date of rows that carry none (`YYYY-MM-DD`, not after tomorrow).
    #[param(value_type = Option<chrono::NaiveDate>)]
    date: Option<String>,
}

/// A JSON upload: rows of column names and values, as the CSV's header and lines would give.
#[derive(Deserialize, utoipa::ToSchema)]
#[allow(dead_code)] // read by `read::json`; this is its schema
struct JsonUpload {
    /// The rows (at most 100,000): `size`, `street_rate`, `tier`, `date`... for unit rates,
    /// `competitor`, `size`, `rate`, `promo`... for competitor rates (header synonyms apply).
    #[schema(max_items = 100000)]
    rows: Vec<serde_json::Map<String, serde_json::Value>>,
}

/// The 422 of an upload: the error envelope, and when rows were bad (nothing was written) the
/// bad rows themselves.
#[derive(Serialize, utoipa::ToSchema)]
struct UploadRejection {
    /// What is wrong; with bad rows, a summary naming the first ones.
    error: String,
    /// Bad rows in all (only when rows were bad).
    #[schema(required = false)]
    error_count: u64,
    /// The bad rows, each with its line and reason (the first 100; only when rows were bad).
    #[schema(required = false)]
    errors: Vec<RowError>,
}

/// What an upload stored.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(untagged)]
enum Stored {
    Competitors(CompetitorRatesStored),
    Units(UnitRatesStored),
    Rolls(RentRollStored),
}

#[derive(Serialize, utoipa::ToSchema)]
struct RentRollStored {
    /// Always true on success.
    ok: bool,
    /// `rent_roll`.
    #[schema(value_type = String, pattern = "^rent_roll$")]
    kind: UploadKind,
    /// Rows (tenants) read.
    rows: u64,
    /// One per date of the rows: the day's snapshot with its roll.
    snapshots: Vec<UploadedRoll>,
    /// Notes on columns ignored and values read differently.
    warnings: Vec<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct UploadedRoll {
    /// The roll's date.
    date: NaiveDate,
    /// The day's sync record.
    sync_id: Uuid,
    /// True when merged into a record the day had; false when the upload created it.
    merged: bool,
    /// `created` or `updated`, as a push answers.
    #[schema(value_type = String)]
    idempotent: &'static str,
    /// What the roll changed in the roll in force.
    rent_roll: Option<crate::views::sync::RollOutcome>,
    /// The `ingest` job recorded with the day.
    job: super::JobRef,
}

#[derive(Serialize, utoipa::ToSchema)]
struct CompetitorRatesStored {
    /// Always true on success.
    ok: bool,
    /// `competitor_rates`.
    #[schema(value_type = String, pattern = "^competitor_rates$")]
    kind: UploadKind,
    /// Rows read.
    rows: u64,
    /// Observations added.
    inserted: u64,
    /// Observations replaced.
    updated: u64,
    /// Notes on columns ignored and values read differently.
    warnings: Vec<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct UnitRatesStored {
    /// Always true on success.
    ok: bool,
    /// `unit_rates`.
    #[schema(value_type = String, pattern = "^unit_rates$")]
    kind: UploadKind,
    /// Rows read.
    rows: u64,
    /// One per date of the rows.
    snapshots: Vec<UploadedDay>,
    /// Notes on columns ignored and values read differently.
    warnings: Vec<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct UploadedDay {
    /// The date.
    date: NaiveDate,
    /// The day's sync record.
    sync_id: Uuid,
    /// True when merged into a record the day had; false when the upload created it.
    merged: bool,
    /// `created` or `updated`, as a push answers.
    #[schema(value_type = String)]
    idempotent: &'static str,
    /// Unit types replaced, added and kept.
    unit_types: crate::views::upload::MergeReport,
    /// The `ingest` job recorded with the day.
    job: super::JobRef,
}

/// Uploads unit rates, competitor rates or a rent roll.
///
/// A rent roll (`kind=rent_roll`, detected from a tenant-id column) is the whole roll of its
/// date (today when the rows carry none): a tenant of the roll in force missing from it has
/// moved out. CSV (streamed, up to 64 MiB) or JSON `{rows: [...]}` (up to 16 MiB). Every row is checked first; one bad row refuses the upload with every bad row's
/// line and reason, and nothing is written.
#[utoipa::path(post, path = "/api/v1/facilities/{id}/upload", tag = "uploads",
    params(("id" = Uuid, Path, description = "Id of the facility."), UploadQuery),
    request_body(content(
        (JsonUpload = "application/json"),
        (String = "text/csv", example = "size,tier,street_rate\n10x10,,129.00\n"),
    )),
    responses(
        (status = 200, description = "Stored: competitor rates, or unit rates or a rent roll per day.", body = Stored),
        (status = 409, description = "A day of the upload changed while it was merged; send it again.", body = crate::openapi::ErrorBody),
        (status = 413, description = "Over 64 MiB of CSV, 16 MiB of JSON or 100,000 rows.", body = crate::openapi::ErrorBody),
        (status = 415, description = "Content-Type is neither text/csv nor application/json.", body = crate::openapi::ErrorBody),
        (status = 422, description = "Bad rows (each listed; nothing written), no rows, or a bad parameter.", body = UploadRejection),
    ))]
async fn upload(
    State(state): State<AppState>,
    Auth(who): Auth,
    acting: crate::access::Acting,
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
    let request = jobs::upload::Request {
        company_id: who.company_id,
        facility_id,
        kind: q.kind.as_deref(),
        date: q.date.as_deref(),
        content_type,
        declared_length,
    };
    let collected = jobs::upload::collect(
        &state.db,
        &request,
        body.into_data_stream().map_err(std::io::Error::other),
    )
    .await
    .map_err(crate::error::upload_refused)?;
    if collected.error_count > 0 {
        return Ok(rejection(&collected));
    }
    let stored = jobs::upload::store(
        &state.db,
        &acting.who,
        facility_id,
        collected,
        Utc::now().date_naive(),
    )
    .await?;
    let stored = state.finish(stored).await;
    Ok(Json(answer(stored)).into_response())
}

fn rejection(c: &Collected) -> Response {
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
    let body = UploadRejection {
        error: format!(
            "{} of {} rows are invalid, nothing was written: {}{more}",
            c.error_count,
            c.rows,
            listed.join("; ")
        ),
        error_count: c.error_count,
        errors: c.errors.clone(),
    };
    (StatusCode::UNPROCESSABLE_ENTITY, Json(body)).into_response()
}

/// The API's answer for what an upload stored.
fn answer(stored: jobs::upload::Stored) -> Stored {
    match stored {
        jobs::upload::Stored::Competitors {
            rows,
            inserted,
            updated,
            warnings,
        } => Stored::Competitors(CompetitorRatesStored {
            ok: true,
            kind: UploadKind::CompetitorRates,
            rows,
            inserted,
            updated,
            warnings,
        }),
        jobs::upload::Stored::Units {
            rows,
            days,
            warnings,
        } => Stored::Units(UnitRatesStored {
            ok: true,
            kind: UploadKind::UnitRates,
            rows,
            snapshots: days
                .into_iter()
                .map(|d| UploadedDay {
                    date: d.date,
                    sync_id: d.sync_id,
                    merged: d.merged,
                    idempotent: d.idempotent,
                    unit_types: d.unit_types.into(),
                    job: super::JobRef {
                        id: d.job_id,
                        kind: "ingest",
                    },
                })
                .collect(),
            warnings,
        }),
        jobs::upload::Stored::Rolls {
            rows,
            days,
            warnings,
        } => Stored::Rolls(RentRollStored {
            ok: true,
            kind: UploadKind::RentRoll,
            rows,
            snapshots: days
                .into_iter()
                .map(|d| UploadedRoll {
                    date: d.date,
                    sync_id: d.sync_id,
                    merged: d.merged,
                    idempotent: d.idempotent,
                    rent_roll: d.rent_roll.map(Into::into),
                    job: super::JobRef {
                        id: d.job_id,
                        kind: "ingest",
                    },
                })
                .collect(),
            warnings,
        }),
    }
}
