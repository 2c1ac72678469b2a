//! The life of a pull's row (`crm_pulls`) and the last pull's state kept on its source
//! (`data_sources.last_pull_*`): started, then succeeded, failed or skipped. The `crm_pull` job
//! handler calls these; the request side is [`super::request_pull`].

use crate::error::Result;
use chrono::NaiveDate;
use serde_json::json;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

/// What a pull is about to do: its job, source and dates.
pub struct Start<'a> {
    pub company_id: Uuid,
    pub source_id: Uuid,
    pub job_id: Uuid,
    pub trigger: &'a str,
    pub from: NaiveDate,
    pub to: NaiveDate,
}

/// Marks the pull of a job running (creating its row for a scheduled pull, or again for a
/// retried attempt) and returns the row's id.
pub async fn start(pool: &PgPool, s: &Start<'_>) -> Result<Uuid> {
    Ok(sqlx::query_scalar!(
        "INSERT INTO crm_pulls (id, company_id, source_id, job_id, trigger, date_from, date_to, status, started_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'running', now())
         ON CONFLICT (job_id) DO UPDATE SET status = 'running', started_at = now(), finished_at = NULL,
             date_from = EXCLUDED.date_from, date_to = EXCLUDED.date_to, error = NULL
         RETURNING id",
        Uuid::now_v7(),
        s.company_id,
        s.source_id,
        s.job_id,
        s.trigger,
        s.from,
        s.to
    )
    .fetch_one(pool)
    .await?)
}

/// What a successful pull stored.
pub struct Counts<'a> {
    pub snapshots_created: i32,
    pub snapshots_updated: i32,
    pub facilities_created: usize,
    pub facilities_matched: usize,
    /// The warnings kept on the row.
    pub warnings: &'a [&'a String],
}

/// Records a successful pull on its row and its source, in the caller's transaction (the one
/// that stored the snapshots).
pub async fn succeeded(
    conn: &mut PgConnection,
    source_id: Uuid,
    pull_id: Uuid,
    c: &Counts<'_>,
) -> Result<()> {
    sqlx::query!(
        "UPDATE data_sources SET last_pull_at = now(), last_pull_status = 'succeeded', last_error = NULL
         WHERE id = $1",
        source_id
    )
    .execute(&mut *conn)
    .await?;
    let count = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
    sqlx::query!(
        "UPDATE crm_pulls SET status = 'succeeded', finished_at = now(), snapshots_created = $2,
             snapshots_updated = $3, facilities_created = $4, facilities_matched = $5, warnings = $6
         WHERE id = $1",
        pull_id,
        c.snapshots_created,
        c.snapshots_updated,
        count(c.facilities_created),
        count(c.facilities_matched),
        json!(c.warnings)
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Records a failed pull on its row and on its source, with the same text.
pub async fn failed(pool: &PgPool, source_id: Uuid, pull_id: Uuid, message: &str) -> Result<()> {
    let mut tx = pool.begin().await?;
    sqlx::query!(
        "UPDATE data_sources SET last_pull_at = now(), last_pull_status = 'failed', last_error = $2
         WHERE id = $1",
        source_id,
        message
    )
    .execute(&mut *tx)
    .await?;
    sqlx::query!(
        "UPDATE crm_pulls SET status = 'failed', finished_at = now(), error = $2 WHERE id = $1",
        pull_id,
        message
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Records a pull that was not made, and why, in the caller's transaction.
pub async fn skipped(conn: &mut PgConnection, pull_id: Uuid, why: &str) -> Result<()> {
    sqlx::query!(
        "UPDATE crm_pulls SET status = 'skipped', finished_at = now(), error = $2 WHERE id = $1",
        pull_id,
        why
    )
    .execute(conn)
    .await?;
    Ok(())
}
