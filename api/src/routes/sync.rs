//! `POST /api/v1/sync`: the idempotent upsert of one facility's dated snapshot.

use super::JobRef;
use crate::access::Acting;
use crate::auth::Auth;
use crate::error::{ApiError, ApiResult};
use crate::extract::JsonBytes;
use crate::state::AppState;
use axum::extract::State;
use axum::Json;
use chrono::{NaiveDate, Utc};
use jobs::sync::Source;
use serde::Serialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(sync))
        .layer(axum::extract::DefaultBodyLimit::max(
            crate::extract::SYNC_BODY_LIMIT,
        ))
}

/// The answer of a sync: how the snapshot was placed and stored.
#[derive(Serialize, utoipa::ToSchema)]
pub struct SyncAnswer {
    /// Always true on success.
    ok: bool,
    /// `created` for the first snapshot of the facility and date, `updated` after.
    #[schema(value_type = String, pattern = "^(created|updated)$")]
    idempotent: &'static str,
    /// The facility the snapshot was placed on.
    facility: crate::views::sync::FacilityOutcome,
    /// Id of the stored snapshot.
    sync_id: Uuid,
    /// Date of the snapshot.
    date: NaiveDate,
    /// `<JSON path>: <reason>` for each field ignored, read differently or left out (at most 50
    /// lines, then a count).
    warnings: Vec<String>,
    /// The `ingest` job recorded with the snapshot (follow it at `GET /api/v1/jobs/{id}`).
    job: JobRef,
    /// What the snapshot's rent roll (`tenants`) changed; absent when it carried none.
    #[serde(skip_serializing_if = "Option::is_none")]
    rent_roll: Option<crate::views::sync::RollOutcome>,
}

/// Upserts one facility's dated snapshot.
///
/// Clear intent is normalised (blank strings as absent,
/// sizes such as `10'x10'`, numbers sent as text); an item that still cannot be read is left
/// out and named in `warnings`; only a snapshot that cannot be placed is refused.
#[utoipa::path(
    post,
    path = "/api/v1/sync",
    tag = "sync",
    request_body = domain::sync::payload::SyncPayload,
    responses(
        (status = 200, description = "Stored (`idempotent` says whether created or updated).", body = SyncAnswer),
        (status = 404, description = "`facility.id` alone names no facility of the company.", body = crate::openapi::ErrorBody),
        (status = 409, description = "The facility could not be created: another has its name or external id.", body = crate::openapi::ErrorBody),
        (status = 422, description = "The snapshot cannot be placed: not a JSON object, no or an impossible date, nothing to identify the facility by, an array over 1,000 entries (`tenants`: 10,000).", body = crate::openapi::ErrorBody),
    )
)]
async fn sync(
    State(state): State<AppState>,
    Auth(who): Auth,
    acting: Acting,
    JsonBytes(body): JsonBytes,
) -> ApiResult<Json<SyncAnswer>> {
    let parsed = domain::sync::parse(&body, Utc::now().date_naive())?;
    // The parser accepted the body, so it is UTF-8; the check keeps that an invariant.
    let raw = std::str::from_utf8(&body)
        .map_err(|_| ApiError::Invalid("body: is not UTF-8".to_owned()))?;
    let done = jobs::sync::ingest(
        &state.db,
        &acting.who,
        &who.scope,
        &parsed.payload,
        raw,
        Source::Push,
    )
    .await?;
    let outcome = state.finish(done).await;
    let mut warnings = parsed.warnings;
    warnings.extend(outcome.warnings);
    Ok(Json(SyncAnswer {
        ok: true,
        idempotent: outcome.idempotent,
        facility: outcome.facility.into(),
        sync_id: outcome.sync_id,
        date: outcome.date,
        warnings,
        job: JobRef {
            id: outcome.job_id,
            kind: "ingest",
        },
        rent_roll: outcome.rent_roll.map(Into::into),
    }))
}
