//! A company's status: its plan, its subscription as in force now, its usage this month and its
//! background jobs. `GET /api/v1/status` and the dashboard's overview both show [`report`].

use crate::error::Result;
use crate::runs::{JobCounts, RecentFailure};
use chrono::{DateTime, Datelike, NaiveDate, Utc};
use domain::ids::CompanyId;
use redis::aio::ConnectionManager;
use sqlx::PgPool;
use uuid::Uuid;

/// Failed jobs listed, newest first.
pub const RECENT_FAILURES: i64 = 5;

pub struct Report {
    pub company_id: Uuid,
    pub company_name: String,
    pub time_zone: String,
    pub currency: String,
    pub plan: String,
    pub subscription: Subscription,
    pub usage: Usage,
    pub jobs: JobCounts,
    /// At most [`RECENT_FAILURES`], newest first.
    pub recent_failures: Vec<RecentFailure>,
}

pub struct Subscription {
    /// In force now (a trial past its end is `expired`).
    pub state: String,
    /// As stored.
    pub stored_state: String,
    pub trial_ends_at: Option<DateTime<Utc>>,
    pub trial_days_left: Option<u64>,
    /// Whether the API answers beyond status and clean-up calls.
    pub api_access: bool,
}

pub struct Usage {
    /// `YYYY-MM`.
    pub month: String,
    pub facilities: i64,
    pub sync_records: i64,
    pub sync_records_this_month: i64,
    /// `None` when the counter (in Redis) is unavailable.
    pub api_calls_this_month: Option<u64>,
    pub active_api_keys: i64,
}

/// The company's status at `now`; `redis_prefix` is the deployment's key prefix of the usage
/// counters.
pub async fn report(
    pool: &PgPool,
    redis: &ConnectionManager,
    redis_prefix: &str,
    company_id: CompanyId,
    now: DateTime<Utc>,
) -> Result<Report> {
    let month_start =
        NaiveDate::from_ymd_opt(now.year(), now.month(), 1).unwrap_or_else(|| now.date_naive());
    let company = crate::tenancy::company(pool, company_id).await?;
    let usage = crate::tenancy::usage(pool, company_id, month_start).await?;
    let api_calls = crate::counters::api_calls_this_month(
        redis,
        redis_prefix,
        company_id.uuid(),
        &now.format("%Y%m").to_string(),
    )
    .await
    .map_err(|e| tracing::warn!(error = %e, "usage counter unavailable"))
    .ok();
    let jobs = crate::runs::company_counts(pool, company_id).await?;
    let recent_failures = crate::runs::recent_failures(pool, company_id, RECENT_FAILURES).await?;
    let effective =
        crate::tenancy::effective_state(&company.subscription_state, company.trial_ends_at, now);
    let trial_days_left =
        crate::tenancy::trial_days_left(&company.subscription_state, company.trial_ends_at, now);
    Ok(Report {
        company_id: company.id,
        company_name: company.name,
        time_zone: company.time_zone,
        currency: company.currency,
        plan: company.plan,
        subscription: Subscription {
            state: effective.to_owned(),
            api_access: crate::tenancy::has_access(effective),
            stored_state: company.subscription_state,
            trial_ends_at: company.trial_ends_at,
            trial_days_left,
        },
        usage: Usage {
            month: now.format("%Y-%m").to_string(),
            facilities: usage.facilities,
            sync_records: usage.sync_records,
            sync_records_this_month: usage.sync_records_this_month,
            api_calls_this_month: api_calls,
            active_api_keys: usage.active_api_keys,
        },
        jobs,
        recent_failures,
    })
}
