//! Pulls (`crm_pulls`): a pull requested (a date or a backfill range) and listed, and the life
//! of its row with the last pull's state kept on its source (`data_sources.last_pull_*`):
//! started, then succeeded, failed or skipped, as the `crm_pull` job handler reports.

use super::{MAX_PULL_DAYS, PULLS_LISTED};
use crate::error::{Error, Result, ValidationError};
use crate::payload::{self, Payload, PullTrigger};
use chrono::{DateTime, NaiveDate, Utc};
use domain::ids::CompanyId;
use domain::sync::payload::EARLIEST_DATE;
use serde::Serialize;
use serde_json::json;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

/// The dates a pull asks for: one `date`, a `from`/`to` range (both ends included, at most
/// [`MAX_PULL_DAYS`] days), or neither (yesterday in the company's time zone, when it runs).
#[derive(Debug, Default)]
pub struct PullRange {
    /// One date to pull (`YYYY-MM-DD`).
    pub date: Option<NaiveDate>,
    /// First date of a backfill, given with `to`.
    pub from: Option<NaiveDate>,
    /// Last date of a backfill (at most 90 days after `from`, not later than tomorrow).
    pub to: Option<NaiveDate>,
}

impl PullRange {
    /// The checked range, `None` for the default date.
    pub fn check(
        &self,
        today: NaiveDate,
    ) -> Result<Option<(NaiveDate, NaiveDate)>, ValidationError> {
        let range = match (self.date, self.from, self.to) {
            (None, None, None) => return Ok(None),
            (Some(d), None, None) => (d, d),
            (None, Some(from), Some(to)) => (from, to),
            (Some(_), _, _) => {
                return Err(ValidationError::new(
                    "date",
                    "give either date or from and to, not both",
                ))
            }
            (None, _, _) => {
                return Err(ValidationError::new(
                    "from",
                    "from and to are given together",
                ))
            }
        };
        if range.1 < range.0 {
            return Err(ValidationError::new("to", "must not be before from"));
        }
        if range.0 < EARLIEST_DATE {
            return Err(ValidationError::new(
                if self.date.is_some() { "date" } else { "from" },
                format!("must not be before {EARLIEST_DATE}, the earliest snapshot date"),
            ));
        }
        if (range.1 - range.0).num_days() + 1 > MAX_PULL_DAYS {
            return Err(ValidationError::new(
                "to",
                format!("a pull covers at most {MAX_PULL_DAYS} days"),
            ));
        }
        if range.1 > today + chrono::TimeDelta::days(1) {
            return Err(ValidationError::new(
                "to",
                "must not be later than tomorrow",
            ));
        }
        Ok(Some(range))
    }
}

/// A recorded pull.
#[derive(Debug, Serialize)]
pub struct Pull {
    /// Id of the pull.
    pub id: Uuid,
    /// Id of its data source.
    pub source_id: Uuid,
    /// The `crm_pull` job running it.
    pub job_id: Uuid,
    /// `on_demand` or `schedule`.
    pub trigger: String,
    /// First date pulled (set when the pull starts, for a default date).
    pub date_from: Option<NaiveDate>,
    /// Last date pulled.
    pub date_to: Option<NaiveDate>,
    /// `queued`, `running`, `succeeded`, `failed` or `skipped`.
    pub status: String,
    /// When the pull was requested.
    pub requested_at: DateTime<Utc>,
    /// When it (last) started.
    pub started_at: Option<DateTime<Utc>>,
    /// When it finished.
    pub finished_at: Option<DateTime<Utc>>,
    /// Snapshots stored for a facility and date not seen before.
    pub snapshots_created: i32,
    /// Snapshots that replaced a stored one (a repeated pull changes nothing).
    pub snapshots_updated: i32,
    /// Facilities the pull created.
    pub facilities_created: i32,
    /// Facilities the pull matched.
    pub facilities_matched: i32,
    /// What could not be mapped or was left out, in fixed words (the first 50).
    pub warnings: serde_json::Value,
    /// A failed or skipped pull's reason, in fixed words.
    pub error: Option<String>,
}

/// Records a pull request as a `crm_pull` job and its `crm_pulls` row, in one transaction.
/// Recorded as `data_source.pull` with the dates asked for.
pub async fn request_pull(
    pool: &PgPool,
    who: &crate::door::Who,
    id: Uuid,
    range: &PullRange,
) -> Result<crate::door::Committed<Pull>> {
    let company_id = who.company;
    let dates = range.check(Utc::now().date_naive())?;
    super::get(pool, company_id, id).await?;
    let (from, to) = (dates.map(|d| d.0), dates.map(|d| d.1));
    let mut tx = pool.begin().await?;
    let job = crate::runs::insert(
        &mut tx,
        crate::runs::NewJob::new(
            Some(company_id),
            Payload::CrmPull(payload::CrmPull {
                source_id: id,
                trigger: PullTrigger::OnDemand,
                from,
                to,
                tick: None,
            }),
        ),
    )
    .await?
    .ok_or_else(|| Error::Conflict("the pull could not be recorded".to_owned()))?;
    let pull = sqlx::query_as!(
        Pull,
        "INSERT INTO crm_pulls (id, company_id, source_id, job_id, trigger, date_from, date_to)
         VALUES ($1, $2, $3, $4, 'on_demand', $5, $6)
         RETURNING id, source_id, job_id, trigger, date_from, date_to, status, requested_at, started_at,
                   finished_at, snapshots_created, snapshots_updated, facilities_created,
                   facilities_matched, warnings, error",
        Uuid::now_v7(),
        company_id.uuid(),
        id,
        job,
        from,
        to
    )
    .fetch_one(&mut *tx)
    .await?;
    let change = crate::audit::Change::new("data_source.pull")
        .target("data_source", id)
        .values(None, Some(serde_json::json!({ "from": from, "to": to })));
    let jobs = crate::door::Jobs::one(crate::queue::Kind::CrmPull, pull.job_id);
    crate::door::commit(tx, who, change, pull, jobs).await
}

/// The latest pulls of a source, newest first.
pub async fn list(pool: &PgPool, company_id: CompanyId, id: Uuid) -> Result<Vec<Pull>> {
    super::get(pool, company_id, id).await?;
    Ok(sqlx::query_as!(
        Pull,
        "SELECT id, source_id, job_id, trigger, date_from, date_to, status, requested_at, started_at,
                finished_at, snapshots_created, snapshots_updated, facilities_created,
                facilities_matched, warnings, error
         FROM crm_pulls WHERE company_id = $1 AND source_id = $2
         ORDER BY requested_at DESC, id DESC LIMIT $3",
        company_id.uuid(),
        id,
        PULLS_LISTED
    )
    .fetch_all(pool)
    .await?)
}

/// What a pull is about to do: its job, source and dates.
pub struct Start<'a> {
    pub company_id: CompanyId,
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
        s.company_id.uuid(),
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
pub(crate) async fn succeeded(
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
pub(crate) async fn skipped(conn: &mut PgConnection, pull_id: Uuid, why: &str) -> Result<()> {
    sqlx::query!(
        "UPDATE crm_pulls SET status = 'skipped', finished_at = now(), error = $2 WHERE id = $1",
        pull_id,
        why
    )
    .execute(conn)
    .await?;
    Ok(())
}
