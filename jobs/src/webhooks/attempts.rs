//! The life of one delivery as its job makes it: the delivery as the job finds it, an attempt
//! started and finished
//! (`webhook_attempts`), and the delivery's state after it (`webhook_deliveries`): complete,
//! retrying at a time, failed, or closed unsent. The `webhook_delivery` job handler calls these
//! in its own transactions.

use crate::error::Result;
use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

/// A delivery as its job finds it, with its subscription's sealed secret (`None` when the
/// subscription was deleted).
pub struct Pending {
    pub subscription_id: Uuid,
    pub event: String,
    pub url: String,
    pub body: String,
    pub status: String,
    /// Finished attempts.
    pub attempts: i32,
    pub max_attempts: i32,
    /// Whether the next attempt is not due yet.
    pub early: bool,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub secret_sealed: Option<Vec<u8>>,
}

/// The delivery `delivery_id`; `None` when it no longer exists.
pub async fn pending(pool: &PgPool, delivery_id: Uuid) -> Result<Option<Pending>> {
    Ok(sqlx::query_as!(
        Pending,
        r#"SELECT d.subscription_id, d.event, d.url, d.body, d.status, d.attempts, d.max_attempts,
                  coalesce(d.next_attempt_at > now(), false) AS "early!",
                  d.next_attempt_at, s.secret_sealed AS "secret_sealed?"
           FROM webhook_deliveries d LEFT JOIN webhook_subscriptions s ON s.id = d.subscription_id
           WHERE d.id = $1"#,
        delivery_id
    )
    .fetch_optional(pool)
    .await?)
}

/// The latest attempt of a delivery that was started and never finished (its worker died), as
/// (number, started at).
pub async fn unfinished(pool: &PgPool, delivery_id: Uuid) -> Result<Option<(i32, DateTime<Utc>)>> {
    Ok(sqlx::query!(
        "SELECT attempt, started_at FROM webhook_attempts
         WHERE delivery_id = $1 AND finished_at IS NULL ORDER BY attempt DESC LIMIT 1",
        delivery_id
    )
    .fetch_optional(pool)
    .await?
    .map(|r| (r.attempt, r.started_at)))
}

/// Records attempt `number` of a delivery as started by `worker`, before its request is sent.
pub(crate) async fn start_attempt(
    conn: &mut PgConnection,
    delivery_id: Uuid,
    number: i32,
    worker: &str,
) -> Result<()> {
    sqlx::query!(
        "INSERT INTO webhook_attempts (delivery_id, attempt, started_at, worker) VALUES ($1, $2, now(), $3)",
        delivery_id,
        number,
        worker
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// What became of an attempt.
pub struct Finished<'a> {
    pub delivery_id: Uuid,
    pub number: i32,
    /// Unknown for an interrupted attempt.
    pub duration_ms: Option<i32>,
    pub http_status: Option<i32>,
    pub error: Option<&'a str>,
    pub response_excerpt: Option<&'a str>,
}

/// Records the outcome of an attempt that was started.
pub(crate) async fn finish_attempt(conn: &mut PgConnection, f: &Finished<'_>) -> Result<()> {
    sqlx::query!(
        "UPDATE webhook_attempts SET finished_at = now(), duration_ms = $3, http_status = $4, error = $5,
                response_excerpt = $6
         WHERE delivery_id = $1 AND attempt = $2 AND finished_at IS NULL",
        f.delivery_id,
        f.number,
        f.duration_ms,
        f.http_status,
        f.error,
        f.response_excerpt
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Marks a delivery complete after attempt `number`; false when it was closed meanwhile.
pub(crate) async fn mark_complete(
    conn: &mut PgConnection,
    delivery_id: Uuid,
    number: i32,
    http_status: Option<i32>,
) -> Result<bool> {
    let updated = sqlx::query!(
            "UPDATE webhook_deliveries SET status = 'complete', attempts = $2, last_http_status = $3,
                    last_error = NULL, next_attempt_at = NULL, finished_at = now(), updated_at = now()
             WHERE id = $1 AND status IN ('queued', 'retrying')",
            delivery_id,
            number,
            http_status
        )
    .execute(conn)
    .await?;
    Ok(updated.rows_affected() == 1)
}

/// Marks a delivery retrying after a failed attempt `number`, its next attempt `wait` after
/// `from` (now when `None`) and never before now; returns that time, or `None` when the
/// delivery was closed meanwhile.
pub(crate) async fn mark_retrying(
    conn: &mut PgConnection,
    f: &Finished<'_>,
    from: Option<DateTime<Utc>>,
    wait: std::time::Duration,
) -> Result<Option<DateTime<Utc>>> {
    Ok(sqlx::query_scalar!(
                r#"UPDATE webhook_deliveries SET status = 'retrying', attempts = $2, last_http_status = $3,
                        last_error = $4, updated_at = now(),
                        next_attempt_at = greatest(now(), coalesce($5, now()) + make_interval(secs => $6))
                   WHERE id = $1 AND status IN ('queued', 'retrying')
                   RETURNING next_attempt_at AS "next!""#,
                f.delivery_id,
                f.number,
                f.http_status,
                f.error,
                from,
                wait.as_secs_f64()
            )
    .fetch_optional(conn)
    .await?)
}

/// Marks a delivery failed for good after attempt `number`.
pub(crate) async fn mark_failed(conn: &mut PgConnection, f: &Finished<'_>) -> Result<()> {
    sqlx::query!(
                "UPDATE webhook_deliveries SET status = 'failed', attempts = $2, last_http_status = $3,
                        last_error = $4, next_attempt_at = NULL, finished_at = now(), updated_at = now()
                 WHERE id = $1 AND status IN ('queued', 'retrying')",
                f.delivery_id,
                f.number,
                f.http_status,
                f.error
            )
    .execute(conn)
    .await?;
    Ok(())
}

/// Closes a delivery that cannot be sent any more as failed, with why.
pub(crate) async fn close(conn: &mut PgConnection, delivery_id: Uuid, why: &str) -> Result<()> {
    sqlx::query!(
        "UPDATE webhook_deliveries SET status = 'failed', last_error = $2, next_attempt_at = NULL,
                finished_at = now(), updated_at = now()
         WHERE id = $1 AND status IN ('queued', 'retrying')",
        delivery_id,
        why
    )
    .execute(conn)
    .await?;
    Ok(())
}
