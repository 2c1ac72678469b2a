//! `GET /api/v1/analytics/*`: read-only analytics of the key's company. Parameters are checked
//! before anything is read: a malformed value or an unknown parameter is a 422 naming it, a
//! facility id that is not one of the company's a 404. Formulas: docs/analytics.md.

use crate::auth::Auth;
use crate::error::{ApiError, ApiResult};
use crate::extract::{facility_id_param, Query};
use crate::state::AppState;
use crate::views::analytics as views;
use axum::extract::State;
use axum::Json;
use domain::analytics::AnalyticsSettings;
use domain::values::UnitSize;
use jobs::analytics::reports;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(ecri))
        .routes(routes!(portfolio))
        .routes(routes!(seasonality))
        .routes(routes!(lease_up))
        .routes(routes!(leads))
        .routes(routes!(revpas))
}

/// Parses `facility_id`: absent means every facility of the company.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct FacilityParams {
    /// One facility of the company; all of them when absent.
    #[param(value_type = Option<Uuid>)]
    facility_id: Option<String>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct EcriParams {
    /// One facility of the company; all of them when absent.
    #[param(value_type = Option<Uuid>)]
    facility_id: Option<String>,
    /// Facilities per page, 1 to 500 (100 when absent). Totals and sizes cover every page.
    limit: Option<i64>,
    /// The `next_cursor` of the previous page, as it was given (opaque).
    cursor: Option<String>,
}

#[derive(Deserialize)]
struct NoParams {}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct SeasonalityParams {
    /// One facility of the company; company-wide when absent.
    #[param(value_type = Option<Uuid>)]
    facility_id: Option<String>,
    /// One unit size (`10x10`); all sizes when absent.
    #[param(value_type = Option<domain::values::UnitSize>)]
    size: Option<String>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct LeadsParams {
    /// One facility of the company; all of them when absent.
    #[param(value_type = Option<Uuid>)]
    facility_id: Option<String>,
    /// The period: the last 30 or 90 days (default 30d).
    #[param(value_type = Option<String>, pattern = "^(30d|90d)$")]
    period: Option<String>,
}

const FACILITY_404: &str = "`facility_id` names no facility of the company.";

/// Existing-customer rent increase suggestions (ECRI) per facility and size.
///
/// Read from each facility's latest stored ECRI run (computed by the worker after each sync,
/// each settings change and nightly; `GET /api/v1/facilities/{id}/ecri?fresh=true` asks for
/// one): totals and a per-size rollup over every facility in scope, and one page of
/// facilities, the largest expected gain first (then by name and id; a facility without a run
/// last). A facility whose run predates its latest roll or snapshot says so in `run.stale`.
#[utoipa::path(
    get,
    path = "/api/v1/analytics/ecri",
    tag = "analytics",
    params(EcriParams),
    responses(
        (status = 200, description = "Existing-customer rent increase suggestions per facility and size, with guardrails.", body = views::ecri::Report),
        (status = 404, description = FACILITY_404, body = crate::openapi::ErrorBody),
        (status = 422, description = "A malformed `facility_id`, `limit` or `cursor`.", body = crate::openapi::ErrorBody),
    )
)]
async fn ecri(
    State(state): State<AppState>,
    Auth(who): Auth,
    Query(p): Query<EcriParams>,
) -> ApiResult<Json<views::ecri::Report>> {
    let facility = facility_id_param(p.facility_id.as_deref())?;
    let limit = match p.limit {
        None => None,
        Some(n) => Some(usize::try_from(n).map_err(|_| {
            ApiError::Invalid(format!("limit: must be 1 to {}", reports::ecri::MAX_LIMIT))
        })?),
    };
    let page = reports::ecri::Page {
        limit,
        cursor: p.cursor,
    };
    Ok(Json(
        reports::ecri::report(&state.db, who.company_id, facility, &who.scope, &page)
            .await?
            .into(),
    ))
}

/// Company-wide rollup and risk flags per facility.
#[utoipa::path(
    get,
    path = "/api/v1/analytics/portfolio",
    tag = "analytics",
    responses(
        (status = 200, description = "Company-wide rollup and risk flags per facility.", body = views::portfolio::Report),
    )
)]
async fn portfolio(
    State(state): State<AppState>,
    Auth(who): Auth,
    Query(NoParams {}): Query<NoParams>,
) -> ApiResult<Json<views::portfolio::Report>> {
    let settings = AnalyticsSettings::default();
    let today = chrono::Utc::now().date_naive();
    Ok(Json(
        reports::portfolio::report(
            &state.db,
            who.company_id,
            &who.scope,
            today,
            &settings.flags,
        )
        .await?
        .into(),
    ))
}

/// The 12-month demand profile (company, facility or size), with a reading of the current
/// month and a soft advisory.
#[utoipa::path(
    get,
    path = "/api/v1/analytics/seasonality",
    tag = "analytics",
    params(SeasonalityParams),
    responses(
        (status = 200, description = "12-month demand profile, the current month's reading and a soft advisory.", body = views::seasonality::Report),
        (status = 404, description = FACILITY_404, body = crate::openapi::ErrorBody),
    )
)]
async fn seasonality(
    State(state): State<AppState>,
    Auth(who): Auth,
    Query(p): Query<SeasonalityParams>,
) -> ApiResult<Json<views::seasonality::Report>> {
    let facility = facility_id_param(p.facility_id.as_deref())?;
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
            &who.scope,
            size.as_ref(),
            settings.seasonality_min_facility_days,
        )
        .await?
        .into(),
    ))
}

/// Lease-up mode per facility, its event history and aggressive-fill suggestions.
#[utoipa::path(
    get,
    path = "/api/v1/analytics/lease-up",
    tag = "analytics",
    params(FacilityParams),
    responses(
        (status = 200, description = "Lease-up mode per facility, mode events and fill suggestions.", body = views::lease_up::Report),
        (status = 404, description = FACILITY_404, body = crate::openapi::ErrorBody),
    )
)]
async fn lease_up(
    State(state): State<AppState>,
    Auth(who): Auth,
    Query(p): Query<FacilityParams>,
) -> ApiResult<Json<views::lease_up::Report>> {
    let facility = facility_id_param(p.facility_id.as_deref())?;
    Ok(Json(
        reports::lease_up::report(&state.db, who.company_id, facility, &who.scope)
            .await?
            .into(),
    ))
}

/// Lead sources and the conversion funnel.
#[utoipa::path(
    get,
    path = "/api/v1/analytics/leads",
    tag = "analytics",
    params(LeadsParams),
    responses(
        (status = 200, description = "Lead counts per channel, mix, conversion and dead channels.", body = views::leads::Report),
        (status = 404, description = FACILITY_404, body = crate::openapi::ErrorBody),
    )
)]
async fn leads(
    State(state): State<AppState>,
    Auth(who): Auth,
    Query(p): Query<LeadsParams>,
) -> ApiResult<Json<views::leads::Report>> {
    let facility = facility_id_param(p.facility_id.as_deref())?;
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
        reports::leads::report(&state.db, who.company_id, facility, &who.scope, days)
            .await?
            .into(),
    ))
}

/// Revenue per available unit and per available square foot (RevPAU, RevPAF).
#[utoipa::path(
    get,
    path = "/api/v1/analytics/revpas",
    tag = "analytics",
    params(FacilityParams),
    responses(
        (status = 200, description = "Revenue per available unit and square foot, ranking and 12-month trend.", body = views::revpas::Report),
        (status = 404, description = FACILITY_404, body = crate::openapi::ErrorBody),
    )
)]
async fn revpas(
    State(state): State<AppState>,
    Auth(who): Auth,
    Query(p): Query<FacilityParams>,
) -> ApiResult<Json<views::revpas::Report>> {
    let facility = facility_id_param(p.facility_id.as_deref())?;
    Ok(Json(
        reports::revpas::report(&state.db, who.company_id, facility, &who.scope)
            .await?
            .into(),
    ))
}
