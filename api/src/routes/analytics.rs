//! `GET /api/v1/analytics/*`: read-only analytics of the key's company. Parameters are checked
//! before anything is read: a malformed value or an unknown parameter is a 422 naming it, a
//! facility id that is not one of the company's a 404. Formulas: docs/analytics.md.

use crate::auth::Auth;
use crate::error::{ApiError, ApiResult};
use crate::extract::Query;
use crate::state::AppState;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use jobs::analytics::{reports, AnalyticsSettings};
use jobs::domain::values::UnitSize;
use serde::Deserialize;
use uuid::Uuid;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/analytics/ecri", get(ecri))
        .route("/api/v1/analytics/portfolio", get(portfolio))
        .route("/api/v1/analytics/seasonality", get(seasonality))
        .route("/api/v1/analytics/lease-up", get(lease_up))
        .route("/api/v1/analytics/leads", get(leads))
        .route("/api/v1/analytics/revpas", get(revpas))
}

/// Parses `facility_id`: absent means every facility of the company.
pub(crate) fn facility_id(raw: Option<&str>) -> ApiResult<Option<Uuid>> {
    raw.map(|s| {
        Uuid::parse_str(s.trim()).map_err(|_| {
            let shown: String = s.chars().take(60).collect();
            ApiError::Invalid(format!(
                "query parameter facility_id: must be a facility id (UUID), got '{shown}'"
            ))
        })
    })
    .transpose()
}

#[derive(Deserialize)]
struct FacilityParams {
    facility_id: Option<String>,
}

#[derive(Deserialize)]
struct NoParams {}

#[derive(Deserialize)]
struct SeasonalityParams {
    facility_id: Option<String>,
    size: Option<String>,
}

#[derive(Deserialize)]
struct LeadsParams {
    facility_id: Option<String>,
    period: Option<String>,
}

async fn ecri(
    State(state): State<AppState>,
    Auth(who): Auth,
    Query(p): Query<FacilityParams>,
) -> ApiResult<Json<reports::ecri::Report>> {
    let facility = facility_id(p.facility_id.as_deref())?;
    let settings = AnalyticsSettings::default();
    Ok(Json(
        reports::ecri::report(&state.db, who.company_id, facility, &settings.ecri).await?,
    ))
}

async fn portfolio(
    State(state): State<AppState>,
    Auth(who): Auth,
    Query(NoParams {}): Query<NoParams>,
) -> ApiResult<Json<reports::portfolio::Report>> {
    let settings = AnalyticsSettings::default();
    let today = chrono::Utc::now().date_naive();
    Ok(Json(
        reports::portfolio::report(&state.db, who.company_id, today, &settings.flags).await?,
    ))
}

async fn seasonality(
    State(state): State<AppState>,
    Auth(who): Auth,
    Query(p): Query<SeasonalityParams>,
) -> ApiResult<Json<reports::seasonality::Report>> {
    let facility = facility_id(p.facility_id.as_deref())?;
    let size = p
        .size
        .as_deref()
        .map(|s| {
            UnitSize::parse(s).map_err(|e| ApiError::Invalid(format!("query parameter size: {e}")))
        })
        .transpose()?;
    let settings = AnalyticsSettings::default();
    Ok(Json(
        reports::seasonality::report(
            &state.db,
            who.company_id,
            facility,
            size.as_ref(),
            settings.seasonality_min_facility_days,
        )
        .await?,
    ))
}

async fn lease_up(
    State(state): State<AppState>,
    Auth(who): Auth,
    Query(p): Query<FacilityParams>,
) -> ApiResult<Json<reports::lease_up::Report>> {
    let facility = facility_id(p.facility_id.as_deref())?;
    Ok(Json(
        reports::lease_up::report(&state.db, who.company_id, facility).await?,
    ))
}

async fn leads(
    State(state): State<AppState>,
    Auth(who): Auth,
    Query(p): Query<LeadsParams>,
) -> ApiResult<Json<reports::leads::Report>> {
    let facility = facility_id(p.facility_id.as_deref())?;
    let days = match p.period.as_deref() {
        None | Some("30d") => 30,
        Some("90d") => 90,
        Some(other) => {
            let shown: String = other.chars().take(30).collect();
            return Err(ApiError::Invalid(format!(
                "query parameter period: must be 30d or 90d, got '{shown}'"
            )));
        }
    };
    Ok(Json(
        reports::leads::report(&state.db, who.company_id, facility, days).await?,
    ))
}

async fn revpas(
    State(state): State<AppState>,
    Auth(who): Auth,
    Query(p): Query<FacilityParams>,
) -> ApiResult<Json<reports::revpas::Report>> {
    let facility = facility_id(p.facility_id.as_deref())?;
    Ok(Json(
        reports::revpas::report(&state.db, who.company_id, facility).await?,
    ))
}
