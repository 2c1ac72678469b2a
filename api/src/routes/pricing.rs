//! Recommendations (the pricing engine), a facility's pricing settings, and its competitor
//! rates.

use crate::auth::Auth;
use crate::error::{ApiError, ApiResult};
use crate::extract::{path_id, JsonBytes, Query};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use chrono::{NaiveDate, Utc};
use jobs::competitors::{self, ListQuery};
use jobs::domain::values::UnitSize;
use jobs::pricing::store::{self, Trigger};
use jobs::pricing::PricingSettings;
use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/api/v1/facilities/{id}/recommendations",
            get(recommendations),
        )
        .route("/api/v1/facilities/{id}/history", get(history))
        .route("/api/v1/recommendation-runs/latest", get(latest_runs))
        .route(
            "/api/v1/facilities/{id}/recommendation-runs",
            get(list_runs),
        )
        .route(
            "/api/v1/facilities/{id}/recommendation-runs/{run_id}",
            get(one_run),
        )
        .route(
            "/api/v1/facilities/{id}/pricing-settings",
            get(read_settings).put(write_settings),
        )
        .route(
            "/api/v1/facilities/{id}/competitor-rates",
            get(list_rates).post(add_rates),
        )
}

#[derive(Deserialize)]
struct RecommendationsQuery {
    regenerate: Option<String>,
}

/// Runs the engine and stores a new run; `regenerate=0` returns the latest stored run instead.
async fn recommendations(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
    Query(q): Query<RecommendationsQuery>,
) -> ApiResult<Json<store::Run>> {
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
    let mut tx = state.db.begin().await.map_err(jobs::Error::from)?;
    if !regenerate {
        // The facility first, so an unknown one is told apart from one without runs.
        store::settings_of(&mut tx, who.company_id, facility_id).await?;
        let run = store::latest(&mut tx, who.company_id, facility_id)
            .await?
            .ok_or_else(|| {
                ApiError::NotFound(format!(
                    "facility {facility_id} has no stored recommendation run yet: call without \
                     regenerate=0 to run the engine"
                ))
            })?;
        return Ok(Json(run));
    }
    let stored = store::run_and_store(
        &mut tx,
        who.company_id,
        facility_id,
        Uuid::now_v7(),
        Trigger::Api,
    )
    .await?;
    tx.commit().await.map_err(jobs::Error::from)?;
    state
        .push_after_commit(jobs::queue::Kind::WebhookDelivery, &stored.delivery_jobs)
        .await;
    Ok(Json(stored.run))
}

#[derive(Deserialize)]
struct RunsQuery {
    limit: Option<i64>,
    after: Option<String>,
}

/// Largest page of the run history.
const MAX_RUNS: i64 = 200;

/// A facility's stored runs, newest first: `limit` (1-200, default 50) and `after` (the
/// `recommendation_id` of the last run of the page before, for the next page).
async fn list_runs(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
    Query(q): Query<RunsQuery>,
) -> ApiResult<Json<Value>> {
    let facility_id = path_id(&id, "facility")?;
    let limit = bounded("limit", q.limit, 50, MAX_RUNS)?;
    let after = q
        .after
        .map(|a| Uuid::parse_str(&a))
        .transpose()
        .map_err(|_| {
            ApiError::Invalid(
                "query parameter after: must be the recommendation_id of a run".into(),
            )
        })?;
    jobs::facilities::ensure_owned(&state.db, who.company_id, facility_id).await?;
    let mut conn = state.db.acquire().await.map_err(jobs::Error::from)?;
    let runs = store::list_runs(&mut conn, who.company_id, facility_id, limit, after).await?;
    Ok(Json(
        json!({ "facility_id": facility_id, "count": runs.len(), "runs": runs }),
    ))
}

/// The latest run of every facility of the company, summarised (the raise / hold / lower
/// counts); facilities without a run are left out.
async fn latest_runs(State(state): State<AppState>, Auth(who): Auth) -> ApiResult<Json<Value>> {
    let mut conn = state.db.acquire().await.map_err(jobs::Error::from)?;
    let runs = store::latest_runs(&mut conn, who.company_id).await?;
    Ok(Json(json!({ "count": runs.len(), "runs": runs })))
}

/// One stored run of the facility, whole (as `GET .../recommendations` answers it).
async fn one_run(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path((id, run_id)): Path<(String, String)>,
) -> ApiResult<Json<store::Run>> {
    let facility_id = path_id(&id, "facility")?;
    let run_id = path_id(&run_id, "recommendation run")?;
    let mut conn = state.db.acquire().await.map_err(jobs::Error::from)?;
    store::run(&mut conn, who.company_id, facility_id, run_id)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::NotFound(format!("no recommendation run with id {run_id}")))
}

#[derive(Deserialize)]
struct HistoryQuery {
    days: Option<i64>,
}

/// A facility's daily history ending at its latest snapshot: `days` 1-730 (default 90).
async fn history(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
    Query(q): Query<HistoryQuery>,
) -> ApiResult<Json<jobs::pricing::history::History>> {
    let facility_id = path_id(&id, "facility")?;
    let days = bounded("days", q.days, 90, jobs::pricing::history::MAX_DAYS)?;
    let mut conn = state.db.acquire().await.map_err(jobs::Error::from)?;
    Ok(Json(
        jobs::pricing::history::load(&mut conn, who.company_id, facility_id, days).await?,
    ))
}

async fn read_settings(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let facility_id = path_id(&id, "facility")?;
    let mut conn = state.db.acquire().await.map_err(jobs::Error::from)?;
    let (settings, overrides) = store::settings_of(&mut conn, who.company_id, facility_id).await?;
    Ok(Json(settings_body(facility_id, settings, overrides)))
}

/// Replaces the facility's overrides with the body's object (`{}` returns to the defaults).
async fn write_settings(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
    JsonBytes(body): JsonBytes,
) -> ApiResult<Json<Value>> {
    let facility_id = path_id(&id, "facility")?;
    jobs::facilities::ensure_owned(&state.db, who.company_id, facility_id).await?;
    jobs::error::require_object(&body)?;
    let overrides: Value = serde_json::from_slice(&body)
        .map_err(|e| ApiError::Invalid(format!("body: is not valid JSON ({e})")))?;
    let mut conn = state.db.acquire().await.map_err(jobs::Error::from)?;
    let settings = store::set_overrides(&mut conn, who.company_id, facility_id, &overrides).await?;
    Ok(Json(settings_body(facility_id, settings, overrides)))
}

fn settings_body(facility_id: Uuid, settings: PricingSettings, overrides: Value) -> Value {
    json!({
        "facility_id": facility_id,
        "settings": settings,
        "overrides": overrides,
        "defaults": PricingSettings::default(),
    })
}

#[derive(Deserialize)]
struct RatesQuery {
    size: Option<String>,
    since: Option<String>,
    limit: Option<i64>,
}

/// Largest page of competitor rates.
const MAX_LIMIT: i64 = 5_000;

async fn list_rates(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
    Query(q): Query<RatesQuery>,
) -> ApiResult<Json<competitors::Listing>> {
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
        .map_err(|_| ApiError::Invalid("query parameter since: must be YYYY-MM-DD".into()))?;
    let limit = bounded("limit", q.limit, 500, MAX_LIMIT)?;
    let mut conn = state.db.acquire().await.map_err(jobs::Error::from)?;
    let listing = competitors::list(
        &mut conn,
        who.company_id,
        facility_id,
        &ListQuery { size, since, limit },
        Utc::now().date_naive(),
    )
    .await?;
    Ok(Json(listing))
}

async fn add_rates(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
    JsonBytes(body): JsonBytes,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let facility_id = path_id(&id, "facility")?;
    jobs::facilities::ensure_owned(&state.db, who.company_id, facility_id).await?;
    let rates = competitors::parse_body(&body, Utc::now().date_naive())?;
    let mut tx = state.db.begin().await.map_err(jobs::Error::from)?;
    let (inserted, updated) =
        competitors::upsert(&mut tx, who.company_id, facility_id, "api", &rates).await?;
    tx.commit().await.map_err(jobs::Error::from)?;
    Ok((
        StatusCode::CREATED,
        Json(json!({ "ok": true, "inserted": inserted, "updated": updated })),
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
