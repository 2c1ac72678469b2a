//! Recommendations (the pricing engine), a facility's pricing settings, and its competitor
//! rates.

use crate::auth::Auth;
use crate::error::{ApiError, ApiResult};
use crate::extract::{path_id, JsonBytes, Query};
use crate::state::AppState;
use crate::views::pricing as views;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use chrono::{NaiveDate, Utc};
use domain::ids::{FacilityId, RunId};
use domain::pricing::PricingSettings;
use domain::sync::payload::EARLIEST_DATE;
use domain::values::UnitSize;
use jobs::competitors::{self, ListQuery};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(recommendations))
        .routes(routes!(history))
        .routes(routes!(list_runs))
        .routes(routes!(latest_runs))
        .routes(routes!(one_run))
        .routes(routes!(read_settings, write_settings))
        .routes(routes!(list_rates, add_rates))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct RecommendationsQuery {
    /// `0` (or `false`) returns the latest stored run without running the engine; `1` (or
    /// `true`, the default) runs it.
    #[param(value_type = Option<String>, pattern = "^(0|1|true|false)$")]
    regenerate: Option<String>,
}

/// Runs the engine and stores a new run; `regenerate=0` returns the latest stored run instead.
#[utoipa::path(get, path = "/api/v1/facilities/{id}/recommendations", tag = "pricing",
    params(("id" = Uuid, Path, description = "Id of the facility."), RecommendationsQuery),
    responses(
        (status = 200, description = "The run, per size: current and recommended rate, action, confidence, factors and guardrails.", body = views::Run),
        (status = 404, description = "No such facility, or (with `regenerate=0`) no stored run yet.", body = crate::openapi::ErrorBody),
    ))]
async fn recommendations(
    State(state): State<AppState>,
    Auth(who): Auth,
    acting: crate::access::Acting,
    Path(id): Path<String>,
    Query(q): Query<RecommendationsQuery>,
) -> ApiResult<Json<views::Run>> {
    let facility_id = path_id(&id, "facility")?;
    let regenerate = match q.regenerate.as_deref() {
        None | Some("1") | Some("true") => true,
        Some("0") | Some("false") => false,
        Some(other) => {
            return Err(ApiError::Invalid(format!(
                "query parameter regenerate: must be 0 or 1, got '{}'",
                other.chars().take(20).collect::<String>()
            )))
        }
    };
    let currency = jobs::tenancy::currency(&state.db, who.company_id).await?;
    if !regenerate {
        let run = jobs::pricing::latest_run(&state.db, who.company_id, facility_id)
            .await?
            .ok_or_else(|| {
                ApiError::NotFound(format!(
                    "facility {facility_id} has no stored recommendation run yet: call without \
                     regenerate=0 to run the engine"
                ))
            })?;
        return Ok(Json(views::Run::of(run, currency)));
    }
    let done = jobs::pricing::run_now(&state.db, &acting.who, facility_id).await?;
    let stored = state.finish(done).await;
    Ok(Json(views::Run::of(stored.run, currency)))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct RunsQuery {
    /// Page size, 1 to 200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    limit: Option<i64>,
    /// The `recommendation_id` of the last run of the previous page.
    #[param(value_type = Option<Uuid>)]
    after: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct RunList {
    /// The facility.
    facility_id: Uuid,
    /// Runs on this page.
    count: usize,
    /// The runs, newest first.
    runs: Vec<views::RunSummary>,
}

/// Largest page of the run history.
const MAX_RUNS: i64 = 200;

/// A facility's stored recommendation runs, newest first.
///
/// `limit` (1-200, default 50) and `after` (the
/// `recommendation_id` of the last run of the page before, for the next page).
#[utoipa::path(get, path = "/api/v1/facilities/{id}/recommendation-runs", tag = "pricing",
    params(("id" = Uuid, Path, description = "Id of the facility."), RunsQuery),
    responses((status = 200, description = "A page of the facility's stored runs.", body = RunList)))]
async fn list_runs(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
    Query(q): Query<RunsQuery>,
) -> ApiResult<Json<RunList>> {
    let facility_id = path_id(&id, "facility")?;
    let limit = bounded("limit", q.limit, 50, MAX_RUNS)?;
    let after = q
        .after
        .map(|a| a.parse::<RunId>())
        .transpose()
        .map_err(|_| {
            ApiError::Invalid(
                "query parameter after: must be the recommendation_id of a run".into(),
            )
        })?;
    let runs = jobs::pricing::runs(&state.db, who.company_id, facility_id, limit, after).await?;
    Ok(Json(RunList {
        facility_id: facility_id.uuid(),
        count: runs.len(),
        runs: runs.into_iter().map(Into::into).collect(),
    }))
}

#[derive(Serialize, utoipa::ToSchema)]
struct LatestRunList {
    /// Facilities with a run.
    count: usize,
    /// The latest run of each, by facility id.
    runs: Vec<views::LatestRun>,
}

/// The latest run of every facility of the company, summarised.
///
/// Each entry is a run-history entry (with its `raise`, `hold` and `lower` counts) and its
/// `facility_id`; facilities without a run are left out.
#[utoipa::path(get, path = "/api/v1/recommendation-runs/latest", tag = "pricing",
    responses((status = 200, description = "The latest run of each facility that has one.", body = LatestRunList)))]
async fn latest_runs(
    State(state): State<AppState>,
    Auth(who): Auth,
) -> ApiResult<Json<LatestRunList>> {
    let mut runs = jobs::pricing::latest_runs(&state.db, who.company_id).await?;
    runs.retain(|r| who.scope.sees(r.facility_id));
    Ok(Json(LatestRunList {
        count: runs.len(),
        runs: runs.into_iter().map(Into::into).collect(),
    }))
}

/// One stored run of the facility, whole (as `GET .../recommendations` answers it).
#[utoipa::path(get, path = "/api/v1/facilities/{id}/recommendation-runs/{run_id}", tag = "pricing",
    params(("id" = Uuid, Path, description = "Id of the facility."), ("run_id" = Uuid, Path, description = "The run's `recommendation_id`.")),
    responses((status = 200, description = "The run.", body = views::Run)))]
async fn one_run(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path((id, run_id)): Path<(String, String)>,
) -> ApiResult<Json<views::Run>> {
    let facility_id = path_id(&id, "facility")?;
    let run_id = path_id(&run_id, "recommendation run")?;
    let currency = jobs::tenancy::currency(&state.db, who.company_id).await?;
    jobs::pricing::run(&state.db, who.company_id, facility_id, run_id)
        .await?
        .map(|run| Json(views::Run::of(run, currency)))
        .ok_or_else(|| ApiError::NotFound(format!("no recommendation run with id {run_id}")))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct HistoryQuery {
    /// Days of history, 1 to 730 (default 90).
    #[param(minimum = 1, maximum = 730)]
    days: Option<i64>,
}

/// A facility's daily history ending at its latest snapshot: `days` 1-730 (default 90).
#[utoipa::path(get, path = "/api/v1/facilities/{id}/history", tag = "pricing",
    params(("id" = Uuid, Path, description = "Id of the facility."), HistoryQuery),
    responses((status = 200, description = "Occupancy, move-ins against target, rates per unit type and the competitor band per day.", body = views::History)))]
async fn history(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
    Query(q): Query<HistoryQuery>,
) -> ApiResult<Json<views::History>> {
    let facility_id = path_id(&id, "facility")?;
    let days = bounded("days", q.days, 90, jobs::pricing::history::MAX_DAYS)?;
    Ok(Json(
        jobs::pricing::history(&state.db, who.company_id, facility_id, days)
            .await?
            .into(),
    ))
}

/// The facility's pricing settings in force, its overrides and the defaults.
#[utoipa::path(get, path = "/api/v1/facilities/{id}/pricing-settings", tag = "pricing",
    params(("id" = Uuid, Path, description = "Id of the facility.")),
    responses((status = 200, description = "The settings.", body = SettingsBody)))]
async fn read_settings(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
) -> ApiResult<Json<SettingsBody>> {
    let facility_id = path_id(&id, "facility")?;
    let (settings, overrides) =
        jobs::pricing::settings(&state.db, who.company_id, facility_id).await?;
    Ok(Json(settings_body(facility_id, settings, overrides)))
}

/// Replaces the facility's overrides with the body's object (`{}` returns to the defaults).
#[utoipa::path(put, path = "/api/v1/facilities/{id}/pricing-settings", tag = "pricing",
    params(("id" = Uuid, Path, description = "Id of the facility.")),
    request_body(content = Object, description = "Overrides: any fields of the settings (see `defaults`); `{}` returns to the defaults.", content_type = "application/json"),
    responses((status = 200, description = "The settings now in force.", body = SettingsBody)))]
async fn write_settings(
    State(state): State<AppState>,
    acting: crate::access::Acting,
    Path(id): Path<String>,
    JsonBytes(body): JsonBytes,
) -> ApiResult<Json<SettingsBody>> {
    let facility_id = path_id(&id, "facility")?;
    let done = jobs::pricing::set_settings(&state.db, &acting.who, facility_id, &body).await?;
    let (settings, overrides) = state.finish(done).await;
    Ok(Json(settings_body(facility_id, settings, overrides)))
}

/// A facility's pricing settings.
#[derive(Serialize, utoipa::ToSchema)]
struct SettingsBody {
    /// The facility.
    facility_id: Uuid,
    /// The settings in force: the defaults with the overrides applied.
    settings: PricingSettings,
    /// The facility's overrides as stored.
    overrides: Value,
    /// The defaults.
    defaults: PricingSettings,
}

fn settings_body(
    facility_id: FacilityId,
    settings: PricingSettings,
    overrides: Value,
) -> SettingsBody {
    SettingsBody {
        facility_id: facility_id.uuid(),
        settings,
        overrides,
        defaults: PricingSettings::default(),
    }
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct RatesQuery {
    /// Only this unit size (`10x10`).
    #[param(value_type = Option<domain::values::UnitSize>)]
    size: Option<String>,
    /// Only rates observed on or after this date (`YYYY-MM-DD`).
    #[param(value_type = Option<chrono::NaiveDate>)]
    since: Option<String>,
    /// Most rates listed, 1 to 5,000 (default 500).
    #[param(minimum = 1, maximum = 5000)]
    limit: Option<i64>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct RatesStored {
    /// Always true on success.
    ok: bool,
    /// Observations added.
    inserted: u64,
    /// Observations replaced (same competitor, size and day).
    updated: u64,
}

/// What `POST .../competitor-rates` takes: `{"competitor_rates": [...]}`, a bare array, or a
/// single record.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(untagged)]
#[allow(dead_code)] // read by `domain::competitors::parse_body`, which forgives more; this is its schema
enum RatesBody {
    Wrapped {
        /// The records (at most 1,000).
        #[schema(max_items = 1000)]
        competitor_rates: Vec<domain::competitors::NewRate>,
    },
    List(Vec<domain::competitors::NewRate>),
    One(domain::competitors::NewRate),
}

/// Largest page of competitor rates.
const MAX_LIMIT: i64 = 5_000;

/// The facility's competitor rates, newest first, with freshness and the band per size.
#[utoipa::path(get, path = "/api/v1/facilities/{id}/competitor-rates", tag = "competitor-rates",
    params(("id" = Uuid, Path, description = "Id of the facility."), RatesQuery),
    responses((status = 200, description = "The rates and bands.", body = crate::views::competitors::Listing)))]
async fn list_rates(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
    Query(q): Query<RatesQuery>,
) -> ApiResult<Json<crate::views::competitors::Listing>> {
    let facility_id = path_id(&id, "facility")?;
    let size = q
        .size
        .map(|s| UnitSize::parse(&s).map(|u| u.to_string()))
        .transpose()
        .map_err(|e| ApiError::Invalid(format!("query parameter size: {e}")))?;
    let since = q
        .since
        .map(|s| s.parse::<NaiveDate>())
        .transpose()
        .map_err(|_| ApiError::Invalid("query parameter since: must be YYYY-MM-DD".into()))?
        // No rate is older than the earliest snapshot date; a date before it asks for them all
        // (and years before 4713 BC are past what the database's dates hold).
        .map(|d| d.max(EARLIEST_DATE));
    let limit = bounded("limit", q.limit, 500, MAX_LIMIT)?;
    let listing = competitors::listing(
        &state.db,
        who.company_id,
        facility_id,
        &ListQuery { size, since, limit },
        Utc::now().date_naive(),
    )
    .await?;
    Ok(Json(listing.into()))
}

/// Adds competitor rates (a record per competitor, size and day; a repeat replaces it).
#[utoipa::path(post, path = "/api/v1/facilities/{id}/competitor-rates", tag = "competitor-rates",
    params(("id" = Uuid, Path, description = "Id of the facility.")),
    request_body = RatesBody,
    responses((status = 201, description = "Stored.", body = RatesStored)))]
async fn add_rates(
    State(state): State<AppState>,
    acting: crate::access::Acting,
    Path(id): Path<String>,
    JsonBytes(body): JsonBytes,
) -> ApiResult<(StatusCode, Json<RatesStored>)> {
    let facility_id = path_id(&id, "facility")?;
    let today = Utc::now().date_naive();
    let done = competitors::add(&state.db, &acting.who, facility_id, &body, today).await?;
    let competitors::Added { inserted, updated } = state.finish(done).await;
    Ok((
        StatusCode::CREATED,
        Json(RatesStored {
            ok: true,
            inserted,
            updated,
        }),
    ))
}

/// A whole-number query parameter: `default` when absent, else 1 to `max`.
fn bounded(name: &str, value: Option<i64>, default: i64, max: i64) -> ApiResult<i64> {
    let value = value.unwrap_or(default);
    if (1..=max).contains(&value) {
        Ok(value)
    } else {
        Err(ApiError::Invalid(format!(
            "query parameter {name}: must be between 1 and {max}"
        )))
    }
}
