//! How much history the facility has of its own and the seasonal index it gives: both come from
//! its daily records alone, and together decide how far the engine trusts the facility's own
//! data over the national prior.

use super::SEASONALITY_MIN_DAYS_PER_MONTH;
use crate::error::Result;
use chrono::{Datelike, NaiveDate};
use domain::ids::FacilityId;
use domain::pricing::seasonality::{self, Learned, SeasonalIndex};
use sqlx::PgConnection;

/// The facility's history up to a snapshot.
pub(super) struct OwnHistory {
    /// Snapshots up to the date.
    pub days: i64,
    /// The first snapshot's date.
    pub first: Option<NaiveDate>,
    /// The seasonal index of the date's month.
    pub season: SeasonalIndex,
    /// The twelve months learned from the facility's own move-ins.
    pub learned: Learned,
}

/// The facility's history as of `as_of`.
pub(super) async fn read(
    conn: &mut PgConnection,
    facility_id: FacilityId,
    as_of: NaiveDate,
) -> Result<OwnHistory> {
    let history = sqlx::query!(
        r#"SELECT count(*) AS "days!", min(snapshot_date) AS first FROM sync_records
           WHERE facility_id = $1 AND snapshot_date <= $2"#,
        facility_id.uuid(),
        as_of
    )
    .fetch_one(&mut *conn)
    .await?;
    // Move-ins of each complete month (its last month-to-date figure), summed per calendar month.
    let months = sqlx::query!(
        r#"SELECT extract(month FROM mon)::int AS "month!", sum(mi)::float8 AS "total!",
                  count(*)::int AS "months!"
           FROM (SELECT date_trunc('month', snapshot_date) AS mon, max(move_ins_mtd) AS mi
                 FROM sync_records
                 WHERE facility_id = $1 AND move_ins_mtd IS NOT NULL
                   AND snapshot_date < date_trunc('month', $2::date)
                   AND snapshot_date >= date_trunc('month', $2::date) - interval '36 months'
                 GROUP BY 1 HAVING count(*) >= $3) t
           GROUP BY 1"#,
        facility_id.uuid(),
        as_of,
        SEASONALITY_MIN_DAYS_PER_MONTH
    )
    .fetch_all(&mut *conn)
    .await?;
    let per_month: Vec<(u32, f64, u32)> = months
        .iter()
        .map(|m| {
            (
                u32::try_from(m.month).unwrap_or(0),
                m.total,
                u32::try_from(m.months).unwrap_or(0),
            )
        })
        .collect();
    let learned = seasonality::learn(&per_month);
    Ok(OwnHistory {
        days: history.days,
        first: history.first,
        season: learned.index(as_of.month0()),
        learned,
    })
}
