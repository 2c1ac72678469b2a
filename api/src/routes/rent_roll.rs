//! A facility's rent roll at a glance and the roll guard: `GET /api/v1/facilities/:id/rent-roll`
//! (the roll in force, the share a roll may move out, a held roll), its confirmation and the
//! share's setting.

use crate::auth::Auth;
use crate::error::ApiResult;
use crate::extract::{parse_json, path_id, JsonBytes};
use crate::requests::RentRollSettings;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::Json;
use chrono::{DateTime, NaiveDate, Utc};
use domain::ids::FacilityId;
use serde::Serialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(read_state))
        .routes(routes!(confirm))
        .routes(routes!(write_settings))
}

/// A roll held back because it would move out more than the facility's share.
#[derive(Serialize, utoipa::ToSchema)]
struct HeldRentRoll {
    /// Date of the held roll.
    roll_date: NaiveDate,
    /// Tenants in the held roll.
    tenants: i32,
    /// Tenants in force when it was held.
    in_force: i32,
    /// How many of them it would have moved out then.
    moving_out: i32,
    /// The facility's share when it was held (percent).
    hold_pct: f64,
    /// When it was held.
    held_at: DateTime<Utc>,
}

/// A facility's rent roll at a glance.
#[derive(Serialize, utoipa::ToSchema)]
struct RentRollState {
    /// The facility.
    facility_id: Uuid,
    /// Date of the roll in force; null before the first roll.
    roll_date: Option<NaiveDate>,
    /// Tenants in place in the roll in force.
    tenants_in_force: i64,
    /// The share of the tenants in force a roll may move out before it is held (percent; 100
    /// never holds). A roll moving out fewer than 5 tenants is never held.
    move_out_hold_pct: f64,
    /// The roll held back, waiting for a confirmation; null when none is.
    held: Option<HeldRentRoll>,
}

/// The facility's rent roll: the roll in force, the share a roll may move out before it is
/// held, and the held roll if any.
#[utoipa::path(get, path = "/api/v1/facilities/{id}/rent-roll", tag = "sync",
    params(("id" = Uuid, Path, description = "Id of the facility.")),
    responses((status = 200, description = "The rent roll's state.", body = RentRollState)))]
async fn read_state(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
) -> ApiResult<Json<RentRollState>> {
    let facility_id: FacilityId = path_id(&id, "facility")?;
    let s = jobs::rent_roll::state(&state.db, who.company_id, facility_id).await?;
    Ok(Json(RentRollState {
        facility_id: facility_id.uuid(),
        roll_date: s.roll_date,
        tenants_in_force: s.tenants_in_force,
        move_out_hold_pct: s.move_out_hold_pct,
        held: s.held.map(|h| HeldRentRoll {
            roll_date: h.roll_date,
            tenants: h.tenants,
            in_force: h.in_force,
            moving_out: h.moving_out,
            hold_pct: h.hold_pct,
            held_at: h.held_at,
        }),
    }))
}

/// What a confirmation applied.
#[derive(Serialize, utoipa::ToSchema)]
struct RentRollConfirmed {
    /// Always true on success.
    ok: bool,
    /// What the held roll changed in the roll in force.
    rent_roll: crate::views::sync::RollOutcome,
}

/// Applies the facility's held roll against the roll in force now, whatever it moves out
/// (recorded as `rent_roll.confirm`).
#[utoipa::path(post, path = "/api/v1/facilities/{id}/rent-roll/confirm", tag = "sync",
    params(("id" = Uuid, Path, description = "Id of the facility.")),
    responses(
        (status = 200, description = "Applied.", body = RentRollConfirmed),
        (status = 404, description = "No such facility, or no roll is held for it.", body = crate::openapi::ErrorBody),
    ))]
async fn confirm(
    State(state): State<AppState>,
    acting: crate::access::Acting,
    Path(id): Path<String>,
) -> ApiResult<Json<RentRollConfirmed>> {
    let facility_id: FacilityId = path_id(&id, "facility")?;
    let done = jobs::rent_roll::confirm(&state.db, &acting.who, facility_id).await?;
    let out = state.finish(done).await;
    Ok(Json(RentRollConfirmed {
        ok: true,
        rent_roll: out.into(),
    }))
}

/// The share now in force.
#[derive(Serialize, utoipa::ToSchema)]
struct RentRollSettingsBody {
    /// The facility.
    facility_id: Uuid,
    /// The share of the tenants in force a roll may move out before it is held (percent).
    move_out_hold_pct: f64,
}

/// Sets the share of the tenants in force a roll may move out before it is held (recorded as
/// `rent_roll_settings.update`).
#[utoipa::path(put, path = "/api/v1/facilities/{id}/rent-roll/settings", tag = "sync",
    params(("id" = Uuid, Path, description = "Id of the facility.")),
    request_body = RentRollSettings,
    responses(
        (status = 200, description = "The share now in force.", body = RentRollSettingsBody),
        (status = 422, description = "Not a number from 0 to 100.", body = crate::openapi::ErrorBody),
    ))]
async fn write_settings(
    State(state): State<AppState>,
    acting: crate::access::Acting,
    Path(id): Path<String>,
    JsonBytes(body): JsonBytes,
) -> ApiResult<Json<RentRollSettingsBody>> {
    let facility_id: FacilityId = path_id(&id, "facility")?;
    let input: RentRollSettings = parse_json(&body)?;
    let done =
        jobs::rent_roll::set_hold_pct(&state.db, &acting.who, facility_id, input.move_out_hold_pct)
            .await?;
    let pct = state.finish(done).await;
    Ok(Json(RentRollSettingsBody {
        facility_id: facility_id.uuid(),
        move_out_hold_pct: pct,
    }))
}
