//! Job rows in PostgreSQL (`job_runs`): creation in the caller's transaction, claiming with a
//! lease, completion and retry, the sweeper's selection, retention and counts.

use crate::error::Result;
use crate::payload::Payload;
use crate::queue::Kind;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use sqlx::{PgConnection, PgPool};
use std::time::Duration;
use uuid::Uuid;

pub struct NewJob {
    pub company_id: Option<Uuid>,
    pub payload: Payload,
    pub max_attempts: i32,
    /// A job with a key that already exists is not created again.
    pub dedupe_key: Option<String>,
}

impl NewJob {
    pub fn new(company_id: Option<Uuid>, payload: Payload) -> Self {
        Self {
            company_id,
            payload,
            max_attempts: 5,
            dedupe_key: None,
        }
    }
}

/// Inserts a queued job in the caller's transaction; `None` when its dedupe key exists already.
pub async fn insert(conn: &mut PgConnection, job: NewJob) -> Result<Option<Uuid>> {
    let id = Uuid::now_v7();
    Ok(sqlx::query_scalar!(
        "INSERT INTO job_runs (id, company_id, kind, payload, max_attempts, dedupe_key, enqueued_at)
         VALUES ($1, $2, $3, $4, $5, $6, now())
         ON CONFLICT (dedupe_key) DO NOTHING RETURNING id",
        id,
        job.company_id,
        job.payload.kind().as_str(),
        job.payload.to_json(),
        job.max_attempts,
        job.dedupe_key
    )
    .fetch_optional(conn)
    .await?)
}

/// A job this worker holds the lease of.
#[derive(Clone, Debug)]
pub struct Claimed {
    pub id: Uuid,
    pub kind: Kind,
    pub company_id: Option<Uuid>,
    pub payload: Value,
    pub attempts: i32,
    pub max_attempts: i32,
    pub worker: String,
}

/// Holds a claimed job for at least `lease` from now (never shortening it), for a handler about
/// to wait on an outside party longer than the platform's lease. False when the job is no
/// longer this worker's (the claim was lost).
pub async fn extend_lease(conn: &mut PgConnection, job: &Claimed, lease: Duration) -> Result<bool> {
    let held = sqlx::query!(
        "UPDATE job_runs SET lease_expires_at = greatest(lease_expires_at, now() + make_interval(secs => $3))
         WHERE id = $1 AND claimed_by = $2 AND status = 'running'",
        job.id,
        job.worker,
        lease.as_secs_f64()
    )
    .execute(&mut *conn)
    .await?;
    Ok(held.rows_affected() == 1)
}

/// Claims a job: queued and due, or running under a lease that has expired (its worker died).
/// `None` when it is finished, held by a live lease, not due, or unknown: then there is nothing
/// to do, which is what makes a duplicate delivery harmless.
pub async fn claim(
    pool: &PgPool,
    id: Uuid,
    worker: &str,
    lease: Duration,
) -> Result<Option<Claimed>> {
    let lease_ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX);
    let row = sqlx::query!(
        "UPDATE job_runs SET status = 'running', claimed_by = $2, claimed_at = now(),
                lease_expires_at = now() + make_interval(secs => $3::float8 / 1000), attempts = attempts + 1
         WHERE id = $1 AND run_at <= now()
           AND (status = 'queued' OR (status = 'running' AND lease_expires_at < now()))
         RETURNING kind, company_id, payload, attempts, max_attempts",
        id,
        worker,
        lease_ms as f64
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.and_then(|r| {
        Some(Claimed {
            id,
            kind: Kind::parse(&r.kind)?,
            company_id: r.company_id,
            payload: r.payload,
            attempts: r.attempts,
            max_attempts: r.max_attempts,
            worker: worker.to_owned(),
        })
    }))
}

/// Marks a claimed job done inside the transaction that holds its effects. `false` when the
/// claim was lost (the lease expired and another worker took the job): the caller must roll
/// back, so the effects happen once.
pub async fn succeed(conn: &mut PgConnection, job: &Claimed, result: &Value) -> Result<bool> {
    let done = sqlx::query!(
        "UPDATE job_runs SET status = 'succeeded', finished_at = now(), result = $3, last_error = NULL,
                lease_expires_at = NULL
         WHERE id = $1 AND claimed_by = $2 AND status = 'running'",
        job.id,
        job.worker,
        result
    )
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Marks a claimed job failed for good inside the caller's transaction, for a handler that keeps
/// its own attempt count (a webhook delivery). `false` when the claim was lost.
pub async fn give_up(conn: &mut PgConnection, job: &Claimed, error: &str) -> Result<bool> {
    let ended = sqlx::query!(
        "UPDATE job_runs SET status = 'failed', finished_at = now(), last_error = $3,
                        claimed_by = NULL, lease_expires_at = NULL, enqueued_at = NULL
                 WHERE id = $1 AND claimed_by = $2 AND status = 'running'",
        job.id,
        job.worker,
        error
    )
    .execute(conn)
    .await?;
    Ok(ended.rows_affected() == 1)
}

/// Puts a claimed job back to `queued` until `at` without counting a failure: the delivery keeps
/// its own count. `false` when the claim was lost.
pub async fn reschedule(
    conn: &mut PgConnection,
    job: &Claimed,
    at: DateTime<Utc>,
    note: &str,
) -> Result<bool> {
    let done = sqlx::query!(
        "UPDATE job_runs SET status = 'queued', run_at = $3, enqueued_at = NULL, claimed_by = NULL,
                lease_expires_at = NULL, last_error = $4
         WHERE id = $1 AND claimed_by = $2 AND status = 'running'",
        job.id,
        job.worker,
        at,
        note
    )
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Ends the delivery jobs of a deleted subscription that wait for their next attempt; one running
/// now finds its delivery closed.
pub async fn end_waiting_deliveries(conn: &mut PgConnection, ids: &[Uuid]) -> Result<()> {
    sqlx::query!(
        r#"UPDATE job_runs SET status = 'succeeded', finished_at = now(), enqueued_at = NULL,
                result = '{"skipped": "the subscription was deleted"}'
           WHERE id = ANY($1) AND status = 'queued'"#,
        ids
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// A pricing run of the facility that waits to start, if there is one.
pub async fn waiting_pricing_run(
    conn: &mut PgConnection,
    company_id: Uuid,
    facility_id: Uuid,
) -> Result<Option<Uuid>> {
    Ok(sqlx::query_scalar!(
        "SELECT id FROM job_runs WHERE kind = 'pricing_run' AND status = 'queued'
           AND company_id = $1 AND payload->>'facility_id' = $2::uuid::text LIMIT 1",
        company_id,
        facility_id
    )
    .fetch_optional(conn)
    .await?)
}

/// What became of a failed attempt.
#[derive(Clone, Debug, PartialEq)]
pub enum Failure {
    RetryAt(DateTime<Utc>),
    GaveUp,
    ClaimLost,
}

/// Records a failed attempt: queued again after `delay`, or `failed` once the attempts are used
/// up (or at once when `permanent`).
pub async fn fail(
    pool: &PgPool,
    job: &Claimed,
    error: &str,
    delay: Duration,
    permanent: bool,
) -> Result<Failure> {
    let delay_ms = i64::try_from(delay.as_millis()).unwrap_or(i64::MAX) as f64;
    let error: String = error.chars().take(2000).collect();
    let row = sqlx::query!(
        "UPDATE job_runs SET
             status = CASE WHEN $4 OR attempts >= max_attempts THEN 'failed' ELSE 'queued' END,
             finished_at = CASE WHEN $4 OR attempts >= max_attempts THEN now() END,
             run_at = now() + make_interval(secs => $5::float8 / 1000),
             enqueued_at = NULL, last_error = $3, claimed_by = NULL, lease_expires_at = NULL
         WHERE id = $1 AND claimed_by = $2 AND status = 'running'
         RETURNING status, run_at",
        job.id,
        job.worker,
        error,
        permanent,
        delay_ms
    )
    .fetch_optional(pool)
    .await?;
    Ok(match row {
        None => Failure::ClaimLost,
        Some(r) if r.status == "failed" => Failure::GaveUp,
        Some(r) => Failure::RetryAt(r.run_at),
    })
}

/// The advisory lock that makes one replica at a time the sweeper.
const SWEEPER_LOCK: i64 = 0x0053_5745_4550_4552;

/// Jobs the sweeper must (re)push: queued and due but not pushed for `repush_after` (a push
/// that failed after commit, a flushed Redis, a retry that came due), and running jobs whose
/// lease expired (their worker died). Marks them pushed. `None` when another replica holds the
/// sweeper's lock (it is the sweeper now).
pub async fn take_due(
    pool: &PgPool,
    repush_after: Duration,
    limit: i64,
) -> Result<Option<Vec<(Uuid, Kind)>>> {
    let mut tx = pool.begin().await?;
    let leader = sqlx::query_scalar!(
        r#"SELECT pg_try_advisory_xact_lock($1) AS "leader!""#,
        SWEEPER_LOCK
    )
    .fetch_one(&mut *tx)
    .await?;
    if !leader {
        return Ok(None);
    }
    let after_ms = i64::try_from(repush_after.as_millis()).unwrap_or(i64::MAX) as f64;
    let rows = sqlx::query!(
        "UPDATE job_runs SET enqueued_at = now()
         WHERE id IN (
             SELECT id FROM job_runs
             WHERE ((status = 'queued' AND run_at <= now()) OR (status = 'running' AND lease_expires_at < now()))
               AND (enqueued_at IS NULL
                    OR enqueued_at < now() - make_interval(secs => $1::float8 / 1000))
             ORDER BY run_at LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING id, kind",
        after_ms,
        limit
    )
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Some(
        rows.into_iter()
            .filter_map(|r| Some((r.id, Kind::parse(&r.kind)?)))
            .collect(),
    ))
}

/// Deletes finished jobs older than `older_than`; returns how many.
pub async fn trim_finished(pool: &PgPool, older_than: Duration, limit: i64) -> Result<u64> {
    let secs = older_than.as_secs_f64();
    let done = sqlx::query!(
        "DELETE FROM job_runs WHERE id IN (
             SELECT id FROM job_runs WHERE status IN ('succeeded', 'failed')
               AND finished_at < now() - make_interval(secs => $1) LIMIT $2)",
        secs,
        limit
    )
    .execute(pool)
    .await?;
    Ok(done.rows_affected())
}

#[derive(Debug, Default, Serialize, utoipa::ToSchema)]
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
pub async fn company_counts(pool: &PgPool, company_id: Uuid) -> Result<JobCounts> {
    let rows = sqlx::query!(
        r#"SELECT status AS "status!", count(*) AS "n!" FROM job_runs WHERE company_id = $1 GROUP BY status"#,
        company_id
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

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = RecentJobFailure)]
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
    company_id: Uuid,
    limit: i64,
) -> Result<Vec<RecentFailure>> {
    Ok(sqlx::query_as!(
        RecentFailure,
        "SELECT id, kind, attempts, last_error, finished_at FROM job_runs
         WHERE company_id = $1 AND status = 'failed' ORDER BY finished_at DESC LIMIT $2",
        company_id,
        limit
    )
    .fetch_all(pool)
    .await?)
}

/// One job as the company that caused it sees it (`GET /api/v1/jobs/:id`). The payload stays
/// internal; `error` is the last attempt's error and `result` what a finished job reported.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = Job)]
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
pub async fn company_job(pool: &PgPool, company_id: Uuid, id: Uuid) -> Result<Option<JobView>> {
    Ok(sqlx::query_as!(
        JobView,
        r#"SELECT id, kind, status, attempts, max_attempts, created_at,
                  CASE WHEN status = 'queued' THEN run_at END AS next_attempt_at,
                  finished_at, last_error AS error, result
           FROM job_runs WHERE id = $1 AND company_id = $2"#,
        id,
        company_id
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
