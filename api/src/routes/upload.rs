//! `POST /api/v1/facilities/:id/upload`: unit rates or competitor rates as CSV (streamed) or
//! JSON `{rows: [...]}`; and the CSV templates. Every row is checked before anything is
//! written; one bad row rejects the upload with every bad row's line and reason.

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
use chrono::{NaiveDate, Utc};
use futures::{StreamExt as _, TryStreamExt as _};
use jobs::competitors;
use jobs::upload::{self, Columns, DuplicateCheck, Row, RowError, UnitRateRow, UploadKind};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use uuid::Uuid;

/// Largest CSV body (streamed).
pub const CSV_MAX_BYTES: usize = 64 * 1024 * 1024;
/// Largest JSON body (read whole).
pub const JSON_MAX_BYTES: usize = 16 * 1024 * 1024;
/// Most rows in one upload.
pub const MAX_ROWS: u64 = 200_000;
/// Most distinct dates in one unit-rates upload.
pub const MAX_DATES: usize = 400;
/// Bad rows listed in a rejection (all are counted).
const MAX_ERRORS_LISTED: usize = 1_000;
/// Competitor rates written per statement.
const CHUNK: usize = 5_000;

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
#[serde(deny_unknown_fields)]
struct UploadQuery {
    kind: Option<String>,
    date: Option<String>,
}

/// Whole-upload failures (as opposed to bad rows).
enum Fatal {
    Invalid(String),
    TooLarge(String),
}

impl From<Fatal> for ApiError {
    fn from(f: Fatal) -> Self {
        match f {
            Fatal::Invalid(m) => ApiError::Invalid(m),
            Fatal::TooLarge(m) => ApiError::PayloadTooLarge(m),
        }
    }
}

enum Msg {
    Columns(Columns),
    Rows(Vec<Result<Row, RowError>>),
    Fatal(Fatal),
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
    let exists = sqlx::query_scalar!(
        "SELECT id FROM facilities WHERE company_id = $1 AND id = $2",
        who.company_id,
        facility_id
    )
    .fetch_optional(&state.db)
    .await?;
    if exists.is_none() {
        return Err(ApiError::NotFound(format!(
            "no facility with id {facility_id}"
        )));
    }
    let kind = q
        .kind
        .as_deref()
        .map(|k| {
            UploadKind::parse(k).ok_or_else(|| {
                ApiError::Invalid(
                    "query parameter kind: must be unit_rates or competitor_rates".into(),
                )
            })
        })
        .transpose()?;
    let date = q
        .date
        .as_deref()
        .map(|d| {
            jobs::sync::payload::SnapshotDate::parse(d)
                .map(|d| d.0)
                .map_err(|m| ApiError::Invalid(format!("query parameter date: {m}")))
        })
        .transpose()?;
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let today = Utc::now().date_naive();
    let (tx, rx) = tokio::sync::mpsc::channel::<Msg>(8);
    match content_type.as_str() {
        "text/csv" | "application/csv" | "text/plain" => {
            read_csv(body, kind, date, today, tx);
        }
        "application/json" => {
            tokio::spawn(read_json(body, kind, date, today, tx));
        }
        other => {
            return Err(ApiError::UnsupportedMediaType(format!(
                "Content-Type must be text/csv or application/json, got '{}'",
                if other.is_empty() { "none" } else { other }
            )))
        }
    }
    let mut db = state.db.begin().await?;
    let collected = collect(rx, &mut db, who.company_id, facility_id).await?;
    if collected.rows == 0 {
        return Err(ApiError::Invalid(
            "the upload has no rows (only a header, or nothing)".into(),
        ));
    }
    if collected.error_count > 0 {
        drop(db); // rolls back whatever was written
        return Ok(rejection(&collected));
    }
    let kind = collected.kind;
    match kind {
        UploadKind::CompetitorRates => {
            db.commit().await?;
            Ok(Json(json!({
                "ok": true,
                "kind": kind,
                "rows": collected.rows,
                "inserted": collected.inserted,
                "updated": collected.updated,
                "warnings": collected.warnings,
            }))
            .into_response())
        }
        UploadKind::UnitRates => {
            drop(db);
            store_unit_rates(&state, who.company_id, facility_id, collected, today).await
        }
    }
}

struct Collected {
    kind: UploadKind,
    rows: u64,
    error_count: u64,
    errors: Vec<RowError>,
    warnings: Vec<String>,
    units: BTreeMap<NaiveDate, Vec<UnitRateRow>>,
    inserted: u64,
    updated: u64,
}

/// Receives checked rows; competitor rates are written in chunks inside the caller's
/// transaction while no row has failed (so memory stays flat), unit rates are kept by date.
async fn collect(
    mut rx: tokio::sync::mpsc::Receiver<Msg>,
    db: &mut sqlx::PgConnection,
    company_id: Uuid,
    facility_id: Uuid,
) -> ApiResult<Collected> {
    let cols = match rx.recv().await {
        Some(Msg::Columns(c)) => c,
        Some(Msg::Fatal(f)) => return Err(f.into()),
        Some(Msg::Rows(_)) | None => {
            return Err(ApiError::Invalid("the upload has no header row".into()))
        }
    };
    let mut out = Collected {
        kind: cols.kind,
        rows: 0,
        error_count: 0,
        errors: Vec::new(),
        warnings: cols
            .ignored
            .iter()
            .map(|c| {
                format!(
                    "column '{c}' is not used for {} and was ignored",
                    cols.kind.as_str()
                )
            })
            .collect(),
        units: BTreeMap::new(),
        inserted: 0,
        updated: 0,
    };
    let mut dup = DuplicateCheck::default();
    let mut pending: Vec<competitors::Checked> = Vec::new();
    let bad = |out: &mut Collected, e: RowError| {
        out.error_count += 1;
        if out.errors.len() < MAX_ERRORS_LISTED {
            out.errors.push(e);
        }
    };
    while let Some(msg) = rx.recv().await {
        let rows = match msg {
            Msg::Rows(r) => r,
            Msg::Fatal(f) => return Err(f.into()),
            Msg::Columns(_) => continue,
        };
        for row in rows {
            out.rows += 1;
            if out.rows > MAX_ROWS {
                return Err(ApiError::PayloadTooLarge(format!(
                    "an upload may have at most {MAX_ROWS} rows"
                )));
            }
            match row {
                Err(e) => bad(&mut out, e),
                Ok(Row::Unit(u)) => {
                    if let Err(e) = dup.check(&u) {
                        bad(&mut out, e);
                        continue;
                    }
                    let d = u.date.unwrap_or_default();
                    if !out.units.contains_key(&d) && out.units.len() >= MAX_DATES {
                        bad(
                            &mut out,
                            RowError {
                                line: u.line,
                                field: Some("date".into()),
                                message: format!("an upload may cover at most {MAX_DATES} dates"),
                            },
                        );
                        continue;
                    }
                    out.units.entry(d).or_default().push(u);
                }
                Ok(Row::Competitor(c)) => {
                    if out.error_count == 0 {
                        pending.push(c);
                        if pending.len() >= CHUNK {
                            let (i, u) = competitors::upsert(
                                db,
                                company_id,
                                facility_id,
                                "upload",
                                &pending,
                            )
                            .await?;
                            out.inserted += i;
                            out.updated += u;
                            pending.clear();
                        }
                    }
                }
            }
        }
    }
    if out.error_count == 0 && !pending.is_empty() {
        let (i, u) = competitors::upsert(db, company_id, facility_id, "upload", &pending).await?;
        out.inserted += i;
        out.updated += u;
    }
    Ok(out)
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

/// Each date's rows become the payload a push of that day would send, checked by the same
/// parser and stored by the same code, one snapshot per date.
async fn store_unit_rates(
    state: &AppState,
    company_id: Uuid,
    facility_id: Uuid,
    collected: Collected,
    today: NaiveDate,
) -> ApiResult<Response> {
    let mut parsed = Vec::with_capacity(collected.units.len());
    for (date, rows) in &collected.units {
        let payload = upload::unit_rates_payload(facility_id, *date, rows);
        let raw = payload.to_string();
        let p = jobs::sync::parse(raw.as_bytes(), today).map_err(|e| {
            ApiError::Invalid(format!("rows dated {date} (lines {}): {e}", lines(rows)))
        })?;
        parsed.push((p.payload, raw));
    }
    let mut days = Vec::with_capacity(parsed.len());
    for (payload, raw) in &parsed {
        let outcome = jobs::sync::ingest(
            &state.db,
            company_id,
            payload,
            raw,
            jobs::sync::Source::Upload,
        )
        .await?;
        state
            .push_after_commit(jobs::queue::Kind::Ingest, &[outcome.job_id])
            .await;
        days.push(json!({
            "date": outcome.date,
            "sync_id": outcome.sync_id,
            "idempotent": outcome.idempotent,
            "unit_types": payload.unit_types.len(),
            "job": { "id": outcome.job_id, "kind": "ingest" },
        }));
    }
    Ok(Json(json!({
        "ok": true,
        "kind": UploadKind::UnitRates,
        "rows": collected.rows,
        "snapshots": days,
        "warnings": collected.warnings,
    }))
    .into_response())
}

fn lines(rows: &[UnitRateRow]) -> String {
    let first = rows.first().map_or(0, |r| r.line);
    let last = rows.last().map_or(0, |r| r.line);
    format!("{first}-{last}")
}

/// Streams a CSV body through the `csv` reader on a blocking thread, sending checked rows in
/// batches. The body is never held whole.
fn read_csv(
    body: Body,
    kind: Option<UploadKind>,
    date: Option<NaiveDate>,
    today: NaiveDate,
    tx: tokio::sync::mpsc::Sender<Msg>,
) {
    let mut seen = 0usize;
    let stream = body
        .into_data_stream()
        .map_err(std::io::Error::other)
        .map(move |chunk| {
            let chunk = chunk?;
            seen += chunk.len();
            if seen > CSV_MAX_BYTES {
                Err(std::io::Error::new(
                    std::io::ErrorKind::FileTooLarge,
                    "too large",
                ))
            } else {
                Ok(chunk)
            }
        });
    let reader = tokio_util::io::StreamReader::new(stream);
    tokio::task::spawn_blocking(move || {
        let bridge = tokio_util::io::SyncIoBridge::new(reader);
        let mut rdr = csv::ReaderBuilder::new().flexible(true).from_reader(bridge);
        let fatal_io = |e: &csv::Error| -> Option<Fatal> {
            match e.kind() {
                csv::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::FileTooLarge => {
                    Some(Fatal::TooLarge(format!(
                        "a CSV upload may be at most {} MiB",
                        CSV_MAX_BYTES / (1024 * 1024)
                    )))
                }
                csv::ErrorKind::Io(io) => {
                    Some(Fatal::Invalid(format!("the body could not be read: {io}")))
                }
                _ => None,
            }
        };
        let headers: Vec<String> = match rdr.headers() {
            Ok(h) => h.iter().map(str::to_owned).collect(),
            Err(e) => {
                let f = fatal_io(&e).unwrap_or_else(|| {
                    Fatal::Invalid(format!("the header row cannot be read: {e}"))
                });
                let _ = tx.blocking_send(Msg::Fatal(f));
                return;
            }
        };
        if headers.is_empty() {
            let _ = tx.blocking_send(Msg::Fatal(Fatal::Invalid(
                "the upload is empty: it has no header row".into(),
            )));
            return;
        }
        let cols = match upload::map_headers(&headers, kind) {
            Ok(c) => c,
            Err(m) => {
                let _ = tx.blocking_send(Msg::Fatal(Fatal::Invalid(m)));
                return;
            }
        };
        if tx.blocking_send(Msg::Columns(cols.clone())).is_err() {
            return;
        }
        let mut batch = Vec::with_capacity(1_000);
        let mut record = csv::StringRecord::new();
        loop {
            match rdr.read_record(&mut record) {
                Ok(false) => break,
                Ok(true) => {
                    if record.iter().all(|c| c.trim().is_empty()) {
                        continue;
                    }
                    let line = record.position().map_or(0, csv::Position::line);
                    let cells: Vec<&str> = record.iter().collect();
                    batch.push(upload::parse_row(&cols, line, &cells, date, today));
                }
                Err(e) => {
                    if let Some(f) = fatal_io(&e) {
                        let _ = tx.blocking_send(Msg::Fatal(f));
                        return;
                    }
                    let line = e.position().map_or(0, csv::Position::line);
                    batch.push(Err(RowError {
                        line,
                        field: None,
                        message: format!("cannot be read: {e}"),
                    }));
                }
            }
            if batch.len() >= 1_000
                && tx
                    .blocking_send(Msg::Rows(std::mem::take(&mut batch)))
                    .is_err()
            {
                return;
            }
        }
        if !batch.is_empty() {
            let _ = tx.blocking_send(Msg::Rows(batch));
        }
    });
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonUpload {
    kind: Option<String>,
    date: Option<String>,
    rows: Vec<Value>,
}

/// A JSON body `{"kind"?, "date"?, "rows": [{column: value}]}`, read whole (up to
/// [`JSON_MAX_BYTES`]); its rows take the same path as CSV rows, the row's position from 1
/// standing for the line. Keys are columns, with the same synonyms.
async fn read_json(
    body: Body,
    kind: Option<UploadKind>,
    date: Option<NaiveDate>,
    today: NaiveDate,
    tx: tokio::sync::mpsc::Sender<Msg>,
) {
    let send_fatal = |f: Fatal| {
        let tx = tx.clone();
        async move {
            let _ = tx.send(Msg::Fatal(f)).await;
        }
    };
    let bytes = match axum::body::to_bytes(body, JSON_MAX_BYTES).await {
        Ok(b) => b,
        Err(_) => {
            return send_fatal(Fatal::TooLarge(format!(
                "a JSON upload may be at most {} MiB; send large files as text/csv",
                JSON_MAX_BYTES / (1024 * 1024)
            )))
            .await
        }
    };
    if let Err(e) = jobs::error::require_object(&bytes) {
        return send_fatal(Fatal::Invalid(e.to_string())).await;
    }
    let de = &mut serde_json::Deserializer::from_slice(&bytes);
    let parsed: JsonUpload = match serde_path_to_error::deserialize(de) {
        Ok(p) => p,
        Err(e) => {
            return send_fatal(Fatal::Invalid(
                jobs::ValidationError::from_serde(e).to_string(),
            ))
            .await
        }
    };
    let kind = match (kind, parsed.kind.as_deref()) {
        (Some(k), _) => Some(k),
        (None, None) => None,
        (None, Some(k)) => match UploadKind::parse(k) {
            Some(k) => Some(k),
            None => {
                return send_fatal(Fatal::Invalid(
                    "kind: must be unit_rates or competitor_rates".into(),
                ))
                .await
            }
        },
    };
    let date = match (date, parsed.date.as_deref()) {
        (Some(d), _) => Some(d),
        (None, None) => None,
        (None, Some(d)) => match jobs::sync::payload::SnapshotDate::parse(d) {
            Ok(d) => Some(d.0),
            Err(m) => return send_fatal(Fatal::Invalid(format!("date: {m}"))).await,
        },
    };
    // Columns: every key seen, in first-seen order.
    let mut headers: Vec<String> = Vec::new();
    for (i, row) in parsed.rows.iter().enumerate() {
        let Some(obj) = row.as_object() else {
            return send_fatal(Fatal::Invalid(format!("rows[{i}]: must be an object"))).await;
        };
        for k in obj.keys() {
            if !headers.contains(k) {
                if headers.len() >= 100 {
                    return send_fatal(Fatal::Invalid("rows: more than 100 distinct keys".into()))
                        .await;
                }
                headers.push(k.clone());
            }
        }
    }
    if parsed.rows.is_empty() {
        let _ = tx
            .send(Msg::Columns(Columns {
                kind: kind.unwrap_or(UploadKind::UnitRates),
                fields: vec![],
                ignored: vec![],
            }))
            .await;
        return;
    }
    let cols = match upload::map_headers(&headers, kind) {
        Ok(c) => c,
        Err(m) => return send_fatal(Fatal::Invalid(m)).await,
    };
    if tx.send(Msg::Columns(cols.clone())).await.is_err() {
        return;
    }
    let empty = Map::new();
    let mut batch = Vec::with_capacity(parsed.rows.len().min(1_000));
    for (i, row) in parsed.rows.iter().enumerate() {
        let line = i as u64 + 1;
        let obj = row.as_object().unwrap_or(&empty);
        let result = match upload::json_cells(obj, &headers) {
            Ok(cells) => {
                let refs: Vec<&str> = cells.iter().map(String::as_str).collect();
                upload::parse_row(&cols, line, &refs, date, today)
            }
            Err((field, message)) => Err(RowError {
                line,
                field: Some(field),
                message,
            }),
        };
        batch.push(result);
        if batch.len() >= 1_000
            && tx
                .send(Msg::Rows(std::mem::take(&mut batch)))
                .await
                .is_err()
        {
            return;
        }
    }
    if !batch.is_empty() {
        let _ = tx.send(Msg::Rows(batch)).await;
    }
}
