//! Job rows in PostgreSQL (`job_runs`): creation in the caller's transaction, claiming with a
//! lease, completion and retry, the sweeper's selection and retention. What a company or the
//! metrics read of them is in `views`.

mod views;
pub use views::{
    company_counts, company_job, open_counts, recent_failures, JobCounts, JobView, RecentFailure,
};

use crate::error::Result;
use crate::payload::Payload;
use crate::queue::Kind;
use chrono::{DateTime, Utc};
use domain::ids::{CompanyId, FacilityId};
use serde_json::Value;
use sqlx::{PgConnection, PgPool};
use std::time::Duration;
use uuid::Uuid;

pub struct NewJob {
    pub company_id: Option<CompanyId>,
    pub payload: Payload,
    pub max_attempts: i32,
    /// A job with a key that already exists is not created again.
    pub dedupe_key: Option<String>,
}

impl NewJob {
    pub fn new(company_id: Option<CompanyId>, payload: Payload) -> Self {
        Self {
            company_id,
            payload,
            max_attempts: 5,
            dedupe_key: None,
        }
    }
}

/// Inserts a queued job in the caller's transaction; `None` when its dedupe key exists already.
pub(crate) async fn insert(conn: &mut PgConnection, job: NewJob) -> Result<Option<Uuid>> {
    let id = Uuid::now_v7();
    Ok(sqlx::query_scalar!(
        "INSERT INTO job_runs (id, company_id, kind, payload, max_attempts, dedupe_key, enqueued_at)
         VALUES ($1, $2, $3, $4, $5, $6, now())
         ON CONFLICT (dedupe_key) DO NOTHING RETURNING id",
        id,
        job.company_id.map(CompanyId::uuid),
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
pub(crate) async fn extend_lease(
    conn: &mut PgConnection,
    job: &Claimed,
    lease: Duration,
) -> Result<bool> {
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
pub(crate) async fn succeed(
    conn: &mut PgConnection,
    job: &Claimed,
    result: &Value,
) -> Result<bool> {
    let done = sqlx::query!(
        "UPDATE job_runs SET status = 'succeeded', finished_at = clock_timestamp(), result = $3, last_error = NULL,
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
pub(crate) async fn give_up(conn: &mut PgConnection, job: &Claimed, error: &str) -> Result<bool> {
    let ended = sqlx::query!(
        "UPDATE job_runs SET status = 'failed', finished_at = clock_timestamp(), last_error = $3,
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
pub(crate) async fn reschedule(
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
pub(crate) async fn end_waiting_deliveries(conn: &mut PgConnection, ids: &[Uuid]) -> Result<()> {
    sqlx::query!(
        r#"UPDATE job_runs SET status = 'succeeded', finished_at = clock_timestamp(), enqueued_at = NULL,
                result = '{"skipped": "the subscription was deleted"}'
           WHERE id = ANY($1) AND status = 'queued'"#,
        ids
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// A job of `kind` for the facility that waits to start, if there is one (a pricing or ECRI
/// run is requested once however many changes ask for it before it starts).
pub(crate) async fn waiting(
    conn: &mut PgConnection,
    kind: Kind,
    company_id: CompanyId,
    facility_id: FacilityId,
) -> Result<Option<Uuid>> {
    Ok(sqlx::query_scalar!(
        "SELECT id FROM job_runs WHERE kind = $3 AND status = 'queued'
           AND company_id = $1 AND payload->>'facility_id' = $2::uuid::text LIMIT 1",
        company_id.uuid(),
        facility_id.uuid(),
        kind.as_str()
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
             finished_at = CASE WHEN $4 OR attempts >= max_attempts THEN clock_timestamp() END,
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

/// Ids of the jobs due now (queued with `run_at` reached, or running on an expired lease),
/// oldest first: what [`crate::handlers::run_due`] runs. Unlike [`take_due`] it takes no
/// sweeper lock and marks nothing pushed.
pub async fn due(pool: &PgPool, limit: i64) -> Result<Vec<Uuid>> {
    Ok(sqlx::query_scalar!(
        "SELECT id FROM job_runs
         WHERE (status = 'queued' AND run_at <= now()) OR (status = 'running' AND lease_expires_at < now())
         ORDER BY run_at, id LIMIT $1",
        limit
    )
    .fetch_all(pool)
    .await?)
}

/// Jobs due now or running: work that is not done.
pub async fn undone(pool: &PgPool) -> Result<i64> {
    Ok(sqlx::query_scalar!(
        r#"SELECT count(*) AS "n!" FROM job_runs
           WHERE status = 'running' OR (status = 'queued' AND run_at <= now())"#
    )
    .fetch_one(pool)
    .await?)
}
