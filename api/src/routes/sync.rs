//! `POST /api/v1/sync`: the idempotent upsert of one facility's dated snapshot.

use crate::auth::Auth;
use crate::error::{ApiError, ApiResult};
use crate::extract::JsonBytes;
use crate::state::AppState;
use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use chrono::Utc;
use jobs::sync::Source;
use serde_json::{json, Value};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/v1/sync", post(sync))
}

async fn sync(
    State(state): State<AppState>,
    Auth(who): Auth,
    JsonBytes(body): JsonBytes,
) -> ApiResult<Json<Value>> {
    let parsed = jobs::sync::parse(&body, Utc::now().date_naive())?;
    // The parser accepted the body, so it is UTF-8; the check keeps that an invariant.
    let raw = std::str::from_utf8(&body)
        .map_err(|_| ApiError::Invalid("body: is not UTF-8".to_owned()))?;
    let outcome = jobs::sync::ingest(
        &state.db,
        who.company_id,
        &parsed.payload,
        raw,
        Source::Push,
    )
    .await?;
    state
        .push_after_commit(jobs::queue::Kind::Ingest, &[outcome.job_id])
        .await;
    let mut warnings = parsed.warnings;
    warnings.extend(outcome.warnings);
    Ok(Json(json!({
        "ok": true,
        "idempotent": outcome.idempotent,
        "facility": outcome.facility,
        "sync_id": outcome.sync_id,
        "date": outcome.date,
        "warnings": warnings,
        "job": { "id": outcome.job_id, "kind": "ingest" },
    })))
}
