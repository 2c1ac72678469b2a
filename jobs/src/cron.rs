//! The cron tick for connected CRMs: each data source's schedule, read in its company's time
//! zone, turns into one `crm_pull` job per tick. Every worker replica runs this check; the job's
//! dedupe key (source and tick time) makes the tick fire once however many replicas see it.

use crate::error::Result;
use crate::queue::Kind;
use crate::runs::{self, NewJob};
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

/// The latest tick of `schedule` in `(since, now]`, in time zone `tz`.
pub fn latest_tick(
    schedule: &cron::Schedule,
    tz: chrono_tz::Tz,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    schedule
        .after(&since.with_timezone(&tz))
        .take_while(|t| t.with_timezone(&Utc) <= now)
        .last()
        .map(|t| t.with_timezone(&Utc))
}

/// Records the pull jobs of every tick that has come due since each source's last tick (only
/// the latest tick of a gap: a pull fetches the latest data anyway). Returns the new job ids.
pub async fn tick(pool: &PgPool, now: DateTime<Utc>) -> Result<Vec<(Kind, Uuid)>> {
    let sources = sqlx::query!(
        "SELECT s.id, s.company_id, s.schedule, coalesce(s.last_tick_at, s.created_at) AS \"since!\", c.time_zone
         FROM data_sources s JOIN companies c ON c.id = s.company_id WHERE s.enabled"
    )
    .fetch_all(pool)
    .await?;
    let mut created = Vec::new();
    for s in sources {
        let Ok(schedule) = crate::data_sources::parse_schedule(&s.schedule) else {
            continue;
        };
        let tz: chrono_tz::Tz = s.time_zone.parse().unwrap_or(chrono_tz::UTC);
        let Some(at) = latest_tick(&schedule, tz, s.since, now) else {
            continue;
        };
        let mut tx = pool.begin().await?;
        let mut job = NewJob::new(
            Kind::CrmPull,
            Some(s.company_id),
            serde_json::json!({ "source_id": s.id, "trigger": "schedule", "tick": at }),
        );
        job.dedupe_key = Some(format!("crm_pull:{}:{}", s.id, at.timestamp()));
        if let Some(id) = runs::insert(&mut tx, job).await? {
            created.push((Kind::CrmPull, id));
        }
        sqlx::query!(
            "UPDATE data_sources SET last_tick_at = greatest(coalesce(last_tick_at, $2), $2) WHERE id = $1",
            s.id,
            at
        )
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
    }
    Ok(created)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use std::str::FromStr;

    #[test]
    fn nightly_tick_in_the_company_time_zone() {
        let schedule = cron::Schedule::from_str("0 0 2 * * *").unwrap();
        let tz: chrono_tz::Tz = "America/New_York".parse().unwrap();
        // 02:00 in New York in November (EST, UTC-5) is 07:00 UTC.
        let since = Utc.with_ymd_and_hms(2026, 11, 20, 12, 0, 0).unwrap();
        let now = Utc.with_ymd_and_hms(2026, 11, 21, 7, 0, 30).unwrap();
        assert_eq!(
            latest_tick(&schedule, tz, since, now),
            Some(Utc.with_ymd_and_hms(2026, 11, 21, 7, 0, 0).unwrap())
        );
        let before = Utc.with_ymd_and_hms(2026, 11, 21, 6, 59, 59).unwrap();
        assert_eq!(latest_tick(&schedule, tz, since, before), None);
        // A gap of several nights gives only the latest tick.
        let later = Utc.with_ymd_and_hms(2026, 11, 24, 8, 0, 0).unwrap();
        assert_eq!(
            latest_tick(&schedule, tz, since, later),
            Some(Utc.with_ymd_and_hms(2026, 11, 24, 7, 0, 0).unwrap())
        );
    }
}
