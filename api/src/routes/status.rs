//! `GET /api/v1/status`: plan, subscription and usage. Answers even when the trial has ended,
//! so a client can tell why other calls get 402.

use crate::auth::Auth;
use crate::error::ApiResult;
use crate::extract::{parse_json, JsonBytes};
use crate::requests::CompanySettings;
use crate::state::AppState;
use axum::extract::State;
use axum::Json;
use chrono::{DateTime, Utc};
use domain::ids::CompanyId;
use serde::Serialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(status))
        .routes(routes!(update_company))
}

/// The company's plan, subscription, usage, jobs and limits.
#[derive(Serialize, utoipa::ToSchema)]
struct Status {
    /// The company of the key.
    company: Company,
    /// The company's plan.
    plan: String,
    /// The subscription as in force now.
    subscription: Subscription,
    /// Usage counts.
    usage: Usage,
    /// The company's jobs by state, and the latest failures.
    jobs: Jobs,
    /// Rate limits of the API.
    limits: Limits,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = StatusCompany)]
struct Company {
    /// Id of the company.
    id: Uuid,
    /// Name of the company.
    name: String,
    /// IANA time zone of the company.
    time_zone: String,
    /// ISO 4217 code of the currency the company's figures are shown in (`USD` unless set).
    /// Amounts are never converted.
    currency: String,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = StatusSubscription)]
struct Subscription {
    /// State in force now: `trialing`, `active`, `past_due`, `canceled` or `expired` (a trial
    /// past its end is `expired`).
    state: String,
    /// State as stored.
    stored_state: String,
    /// End of the trial, when trialing.
    trial_ends_at: Option<DateTime<Utc>>,
    /// Whole days left of the trial.
    trial_days_left: Option<u64>,
    /// Whether the API answers beyond status and clean-up calls.
    api_access: bool,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = StatusUsage)]
struct Usage {
    /// The month counted, `YYYY-MM`.
    month: String,
    /// Facilities of the company.
    facilities: i64,
    /// Stored sync records.
    sync_records: i64,
    /// Sync records received this month.
    sync_records_this_month: i64,
    /// API calls this month; null when the counter is unavailable.
    api_calls_this_month: Option<u64>,
    /// API keys not revoked.
    active_api_keys: i64,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = StatusJobs)]
struct Jobs {
    #[serde(flatten)]
    counts: crate::views::job_runs::JobCounts,
    /// The latest failed jobs, newest first (at most 5).
    recent_failures: Vec<crate::views::job_runs::RecentFailure>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = StatusLimits)]
struct Limits {
    /// General requests per minute per company.
    requests_per_minute: u32,
    /// `POST /api/v1/sync` requests per minute per company.
    sync_requests_per_minute: u32,
}

/// The company's plan, subscription state, usage counts, jobs and limits.
///
/// Answers in every subscription state. The usage counts are the account's; a key limited to
/// some facilities gets no `recent_failures` (a failed job may concern another facility).
#[utoipa::path(get, path = "/api/v1/status", tag = "account",
    responses((status = 200, description = "The status.", body = Status)))]
async fn status(State(state): State<AppState>, Auth(who): Auth) -> ApiResult<Json<Status>> {
    let mut status = status_of(&state, who.company_id).await?;
    if !who.scope.is_all() {
        status.jobs.recent_failures.clear();
    }
    Ok(Json(status))
}

/// Changes the company's settings: an absent field stays.
#[utoipa::path(patch, path = "/api/v1/company", tag = "account",
    request_body = CompanySettings,
    responses((status = 200, description = "The company with its settings.", body = Company)))]
async fn update_company(
    State(state): State<AppState>,
    acting: crate::access::Acting,
    JsonBytes(body): JsonBytes,
) -> ApiResult<Json<Company>> {
    let input: CompanySettings = parse_json(&body)?;
    let done = jobs::tenancy::update_company(&state.db, &acting.who, input.currency).await?;
    let c = state.finish(done).await;
    Ok(Json(Company {
        id: c.id,
        name: c.name,
        time_zone: c.time_zone,
        currency: c.currency,
    }))
}

async fn status_of(state: &AppState, company_id: CompanyId) -> ApiResult<Status> {
    let r = jobs::status::report(
        &state.db,
        &state.redis,
        &state.config.redis_key_prefix,
        company_id,
        Utc::now(),
    )
    .await?;
    Ok(Status {
        subscription: Subscription {
            state: r.subscription.state,
            api_access: r.subscription.api_access,
            stored_state: r.subscription.stored_state,
            trial_ends_at: r.subscription.trial_ends_at,
            trial_days_left: r.subscription.trial_days_left,
        },
        company: Company {
            id: r.company_id,
            name: r.company_name,
            time_zone: r.time_zone,
            currency: r.currency,
        },
        plan: r.plan,
        usage: Usage {
            month: r.usage.month,
            facilities: r.usage.facilities,
            sync_records: r.usage.sync_records,
            sync_records_this_month: r.usage.sync_records_this_month,
            api_calls_this_month: r.usage.api_calls_this_month,
            active_api_keys: r.usage.active_api_keys,
        },
        jobs: Jobs {
            counts: r.jobs.into(),
            recent_failures: r.recent_failures.into_iter().map(Into::into).collect(),
        },
        limits: Limits {
            requests_per_minute: state.config.rate_limit_per_minute,
            sync_requests_per_minute: state.config.rate_limit_sync_per_minute,
        },
    })
}
