//! What is read of job rows: a company's counts, its recent failures and one job as it sees
//! it (`GET /api/v1/jobs/:id`), and the open jobs per kind for metrics.

use crate::error::Result;
use chrono::{DateTime, Utc};
use domain::ids::CompanyId;
use serde::Serialize;
use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

#[derive(Debug, Default, Serialize)]
pub struct JobCounts {
    /// Jobs waiting (also between attempts).
    pub queued: i64,
    /// Jobs running now.
    pub running: i64,
    /// Jobs that failed for good.
    pub failed: i64,
    /// Jobs that succeeded.
    pub succeeded: i64,
}

/// A company's jobs by state (failed and succeeded: those still kept).
pub async fn company_counts(pool: &PgPool, company_id: CompanyId) -> Result<JobCounts> {
    let rows = sqlx::query!(
        r#"SELECT status AS "status!", count(*) AS "n!" FROM job_runs WHERE company_id = $1 GROUP BY status"#,
        company_id.uuid()
    )
    .fetch_all(pool)
    .await?;
    let mut c = JobCounts::default();
    for r in rows {
        match r.status.as_str() {
            "queued" => c.queued = r.n,
            "running" => c.running = r.n,
            "failed" => c.failed = r.n,
            "succeeded" => c.succeeded = r.n,
            _ => {}
        }
    }
    Ok(c)
}

#[derive(Debug, Serialize)]
pub struct RecentFailure {
    /// Id of the job.
    pub id: Uuid,
    /// Kind of job.
    pub kind: String,
    /// Attempts made.
    pub attempts: i32,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// When it failed for good.
    pub finished_at: Option<DateTime<Utc>>,
}

pub async fn recent_failures(
    pool: &PgPool,
    company_id: CompanyId,
    limit: i64,
) -> Result<Vec<RecentFailure>> {
    Ok(sqlx::query_as!(
        RecentFailure,
        "SELECT id, kind, attempts, last_error, finished_at FROM job_runs
         WHERE company_id = $1 AND status = 'failed' ORDER BY finished_at DESC LIMIT $2",
        company_id.uuid(),
        limit
    )
    .fetch_all(pool)
    .await?)
}

/// One job as the company that caused it sees it (`GET /api/v1/jobs/:id`). The payload stays
/// internal; `error` is the last attempt's error and `result` what a finished job reported.
#[derive(Debug, Serialize)]
pub struct JobView {
    /// Id of the job.
    pub id: Uuid,
    /// `ingest`, `pricing_run`, `webhook_delivery` or `crm_pull`.
    pub kind: String,
    /// `queued` (also between attempts), `running`, `succeeded` or `failed`.
    pub status: String,
    /// Attempts made.
    pub attempts: i32,
    /// Attempts allowed.
    pub max_attempts: i32,
    /// When the job was recorded.
    pub created_at: DateTime<Utc>,
    /// When a queued job runs next (its first run or its next attempt); null otherwise.
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// When it succeeded or finally failed.
    pub finished_at: Option<DateTime<Utc>>,
    /// Why the last attempt failed, when it did.
    pub error: Option<String>,
    /// What the job produced, when it succeeded (its shape depends on the kind).
    pub result: Option<Value>,
}

/// A job of the company, or `None` when it does not exist, belongs to another company or was
/// already removed by retention.
/// A job of the company; for a reader limited to some facilities, only a job about one of
/// them (its payload's `facility_id`).
pub async fn company_job(
    pool: &PgPool,
    company_id: CompanyId,
    allowed: &crate::access::Scope,
    id: Uuid,
) -> Result<Option<JobView>> {
    let allowed: Option<Vec<String>> = allowed
        .ids()
        .map(|ids| ids.iter().map(Uuid::to_string).collect());
    Ok(sqlx::query_as!(
        JobView,
        r#"SELECT id, kind, status, attempts, max_attempts, created_at,
                  CASE WHEN status = 'queued' THEN run_at END AS next_attempt_at,
                  finished_at, last_error AS error, result
           FROM job_runs WHERE id = $1 AND company_id = $2
             AND ($3::text[] IS NULL OR payload->>'facility_id' = ANY($3))"#,
        id,
        company_id.uuid(),
        allowed.as_deref()
    )
    .fetch_optional(pool)
    .await?)
}

/// Unfinished jobs per kind and state across all companies, for metrics.
pub async fn open_counts(pool: &PgPool) -> Result<Vec<(String, String, i64)>> {
    let rows = sqlx::query!(
        r#"SELECT kind AS "kind!", status AS "status!", count(*) AS "n!" FROM job_runs
           WHERE status IN ('queued', 'running') GROUP BY kind, status"#
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|r| (r.kind, r.status, r.n)).collect())
}
