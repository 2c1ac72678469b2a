//! The cron tick for connected CRMs (and the nightly ECRI fit, `crate::ecri::fit::nightly_tick`): each data source's schedule, read in its company's time
//! zone, turns into one `crm_pull` job per tick. Every worker replica runs this check; the job's
//! dedupe key (source and tick time) makes the tick fire once however many replicas see it.
//! A source fires at most once per [`MIN_SCHEDULE_INTERVAL`] whatever its stored schedule says,
//! and the sources of a company without API access (the rule of the api's 402) do not fire.

use crate::data_sources::MIN_SCHEDULE_INTERVAL;
use crate::error::Result;
use crate::payload::{self, Payload, PullTrigger};
use crate::queue::Kind;
use crate::runs::{self, NewJob};
use crate::tenancy;
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

/// Where the search for a source's next tick starts: its last tick plus the minimum interval
/// (less one second, as ticks fall on whole seconds and a tick exactly an hour later may fire),
/// or its creation when it never ticked.
pub fn search_from(last_tick: Option<DateTime<Utc>>, created: DateTime<Utc>) -> DateTime<Utc> {
    match last_tick {
        Some(t) => t + MIN_SCHEDULE_INTERVAL - chrono::TimeDelta::seconds(1),
        None => created,
    }
}

/// Records the pull jobs of every tick that has come due since each source's last tick (only
/// the latest tick of a gap: a pull fetches the latest data anyway). A tick of a company without
/// API access is passed over: recorded as the last tick, with no job. Returns the new job ids.
pub async fn tick(
    pool: &PgPool,
    now: DateTime<Utc>,
    ecri_nightly: bool,
) -> Result<Vec<(Kind, Uuid)>> {
    let sources = sqlx::query!(
        "SELECT s.id, s.company_id, s.schedule, s.last_tick_at, s.created_at, c.time_zone,
                c.subscription_state, c.trial_ends_at
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
        let since = search_from(s.last_tick_at, s.created_at);
        let Some(at) = latest_tick(&schedule, tz, since, now) else {
            continue;
        };
        let state = tenancy::effective_state(&s.subscription_state, s.trial_ends_at, now);
        let mut tx = pool.begin().await?;
        if tenancy::has_access(state) {
            let mut job = NewJob::new(
                Some(s.company_id.into()),
                Payload::CrmPull(payload::CrmPull {
                    source_id: s.id,
                    trigger: PullTrigger::Schedule,
                    from: None,
                    to: None,
                    tick: Some(at),
                }),
            );
            job.dedupe_key = Some(format!("crm_pull:{}:{}", s.id, at.timestamp()));
            if let Some(id) = runs::insert(&mut tx, job).await? {
                created.push((Kind::CrmPull, id));
            }
        }
        crate::data_sources::mark_ticked(&mut tx, s.id, at).await?;
        tx.commit().await?;
    }
    if ecri_nightly {
        created.extend(crate::ecri::fit::nightly_tick(pool, now).await?);
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

    #[test]
    fn a_source_ticks_at_most_hourly() {
        let every_second = cron::Schedule::from_str("* * * * * *").unwrap();
        let t0 = Utc.with_ymd_and_hms(2026, 11, 21, 7, 0, 0).unwrap();
        let created = t0 - chrono::TimeDelta::minutes(5);
        // The first tick after creation fires.
        assert_eq!(
            latest_tick(
                &every_second,
                chrono_tz::UTC,
                search_from(None, created),
                t0
            ),
            Some(t0)
        );
        // Nothing more until an hour after it, then the latest due tick.
        let since = search_from(Some(t0), created);
        for later in [1, 60, 3599] {
            let now = t0 + chrono::TimeDelta::seconds(later);
            assert_eq!(latest_tick(&every_second, chrono_tz::UTC, since, now), None);
        }
        let hour = t0 + chrono::TimeDelta::hours(1);
        assert_eq!(
            latest_tick(&every_second, chrono_tz::UTC, since, hour),
            Some(hour)
        );
    }
}
