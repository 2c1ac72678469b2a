//! `GET /api/v1/status`: plan, subscription and usage. Answers even when the trial has ended,
//! so a client can tell why other calls get 402.

use crate::auth::Auth;
use crate::error::ApiResult;
use crate::state::AppState;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use chrono::{Datelike, NaiveDate, Utc};
use serde_json::{json, Value};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/v1/status", get(status))
}

async fn status(State(state): State<AppState>, Auth(who): Auth) -> ApiResult<Json<Value>> {
    report(&state, who.company_id).await.map(Json)
}

/// The status of a company, as the API answers it and the dashboard's overview shows it.
pub(crate) async fn report(state: &AppState, company_id: uuid::Uuid) -> ApiResult<Value> {
    let now = Utc::now();
    let month_start =
        NaiveDate::from_ymd_opt(now.year(), now.month(), 1).unwrap_or_else(|| now.date_naive());
    let company = jobs::tenancy::company(&state.db, company_id).await?;
    let usage = jobs::tenancy::usage(&state.db, company_id, month_start).await?;
    let api_calls = crate::ratelimit::api_calls_this_month(
        &state.redis,
        &state.config.redis_key_prefix,
        company_id,
        &now.format("%Y%m").to_string(),
    )
    .await
    .map_err(|e| tracing::warn!(error = %e, "usage counter unavailable"))
    .ok();
    let jobs = jobs::runs::company_counts(&state.db, company_id).await?;
    let failures = jobs::runs::recent_failures(&state.db, company_id, 5).await?;
    let effective =
        jobs::tenancy::effective_state(&company.subscription_state, company.trial_ends_at, now);
    let trial_days_left =
        jobs::tenancy::trial_days_left(&company.subscription_state, company.trial_ends_at, now);
    Ok(json!({
        "company": { "id": company.id, "name": company.name, "time_zone": company.time_zone },
        "plan": company.plan,
        "subscription": {
            "state": effective,
            "stored_state": company.subscription_state,
            "trial_ends_at": company.trial_ends_at,
            "trial_days_left": trial_days_left,
            "api_access": jobs::tenancy::has_access(effective),
        },
        "usage": {
            "month": now.format("%Y-%m").to_string(),
            "facilities": usage.facilities,
            "sync_records": usage.sync_records,
            "sync_records_this_month": usage.sync_records_this_month,
            "api_calls_this_month": api_calls,
            "active_api_keys": usage.active_api_keys,
        },
        "jobs": {
            "queued": jobs.queued,
            "running": jobs.running,
            "failed": jobs.failed,
            "succeeded": jobs.succeeded,
            "recent_failures": failures,
        },
        "limits": {
            "requests_per_minute": state.config.rate_limit_per_minute,
            "sync_requests_per_minute": state.config.rate_limit_sync_per_minute,
        },
    }))
}
