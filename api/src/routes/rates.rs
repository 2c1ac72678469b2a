//! Street-rate decisions on a facility's latest recommendation run, and the facility's rates in
//! force and approved (as JSON or as a CSV for a PMS import).

use crate::auth::Auth;
use crate::error::{ApiError, ApiResult};
use crate::extract::{parse_json, path_id, JsonBytes, Query};
use crate::requests::RateDecisions;
use crate::state::AppState;
use crate::views::rates as views;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use domain::ids::{FacilityId, RunId};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(decide))
        .routes(routes!(rates))
        .routes(routes!(rates_csv))
}

/// Accepts, overrides or rejects recommendations of the facility's latest run.
///
/// `accept` approves the recommended rate, `override` approves `rate`, `reject` records that
/// the recommendation is not taken. An override must pass the run's guardrails (`max_step`,
/// `ceiling`, `floor`, `lease_up_floor`, `full_no_cut`) or carry `force: true` and a `reason`.
/// The request is one transaction: one bad decision stores none. A later decision on a unit
/// type replaces the earlier one. A set that approved a rate sends one `rates.approved` event.
#[utoipa::path(post, path = "/api/v1/facilities/{id}/recommendation-runs/{run_id}/decisions", tag = "pricing",
    params(("id" = Uuid, Path, description = "Id of the facility."), ("run_id" = Uuid, Path, description = "The run's `recommendation_id`: the facility's latest run.")),
    request_body = RateDecisions,
    responses(
        (status = 201, description = "The decisions stored.", body = views::Decided),
        (status = 404, description = "No such facility, or no such run of it.", body = crate::openapi::ErrorBody),
        (status = 409, description = "The run is not the facility's latest run (the message names the latest).", body = crate::openapi::ErrorBody),
        (status = 422, description = "A bad decision (the message names `decisions[i]`); nothing is stored.", body = crate::openapi::ErrorBody),
    ))]
async fn decide(
    State(state): State<AppState>,
    Auth(who): Auth,
    acting: crate::access::Acting,
    Path((id, run_id)): Path<(String, String)>,
    JsonBytes(body): JsonBytes,
) -> ApiResult<(StatusCode, Json<views::Decided>)> {
    let facility_id: FacilityId = path_id(&id, "facility")?;
    let run_id: RunId = path_id(&run_id, "recommendation run")?;
    // Another company's facility is a 404 before its body is read.
    jobs::facilities::ensure_owned(&state.db, who.company_id, facility_id).await?;
    let body: RateDecisions = parse_json(&body)?;
    let requested: Vec<jobs::rates::Requested> =
        body.decisions.into_iter().map(Into::into).collect();
    let done = jobs::rates::decide(&state.db, &acting.who, facility_id, run_id, &requested).await?;
    let decided = state.finish(done).await;
    Ok((
        StatusCode::CREATED,
        Json(views::Decided {
            facility_id: facility_id.uuid(),
            run_id: run_id.uuid(),
            decisions: decided.decisions.into_iter().map(Into::into).collect(),
        }),
    ))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct RatesQuery {
    /// `json` (the default) or `csv` (the same as `GET .../rates.csv`).
    #[param(pattern = "^(json|csv)$")]
    format: Option<String>,
}

/// The facility's rates in force and the approved rates waiting to appear in a snapshot.
///
/// One line per unit type of the latest snapshot: its street rate, and the rate its latest
/// decision approved with the source, who decided and when, and the status (`pending`,
/// `applied`, `not_applied`). `format=csv` answers the CSV of `.../rates.csv`.
#[utoipa::path(get, path = "/api/v1/facilities/{id}/rates", tag = "pricing",
    params(("id" = Uuid, Path, description = "Id of the facility."), RatesQuery),
    responses(
        (status = 200, description = "The rates.", content(
            (views::Rates = "application/json"),
            (String = "text/csv", example = "size,tier,rate_to_set,rate_in_force,currency,source,decided_at,decided_by\n10x10,standard,108.00,100.00,USD,recommendation,2026-11-26T09:30:00.000Z,API key \"nightly\"\n"))),
        (status = 404, description = "No such facility.", body = crate::openapi::ErrorBody),
    ))]
async fn rates(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
    Query(q): Query<RatesQuery>,
) -> ApiResult<Response> {
    let facility_id = path_id(&id, "facility")?;
    let csv = match q.format.as_deref() {
        None | Some("json") => false,
        Some("csv") => true,
        Some(other) => {
            return Err(ApiError::Invalid(format!(
                "query parameter format: must be json or csv, got '{}'",
                other.chars().take(20).collect::<String>()
            )))
        }
    };
    let rates = jobs::rates::rates(&state.db, who.company_id, facility_id).await?;
    Ok(if csv {
        crate::csv_export::pending_rates(&rates)
    } else {
        Json(views::Rates::from(rates)).into_response()
    })
}

/// The approved rates waiting to appear in a snapshot, as a CSV for a PMS import.
///
/// One row per unit type whose approved rate is `pending`: `size`, `tier`, `rate_to_set`,
/// `rate_in_force`, `currency`, `source`, `decided_at`, `decided_by`. Rates are plain numbers
/// with the currency's minor units (`108.00`; `108` for yen), no symbol or separator.
#[utoipa::path(get, path = "/api/v1/facilities/{id}/rates.csv", tag = "pricing",
    params(("id" = Uuid, Path, description = "Id of the facility.")),
    responses(
        (status = 200, description = "The CSV.", content_type = "text/csv", body = String),
        (status = 404, description = "No such facility.", body = crate::openapi::ErrorBody),
    ))]
async fn rates_csv(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let facility_id = path_id(&id, "facility")?;
    let rates = jobs::rates::rates(&state.db, who.company_id, facility_id).await?;
    Ok(crate::csv_export::pending_rates(&rates))
}
