//! Each unit type's daily readings before the snapshot, for the price response's demand. The
//! largest read of a run (a year of days per unit type), so its query shape is tuned (see
//! below) and kept on its own.

use crate::error::Result;
use chrono::{Datelike, NaiveDate};
use domain::ids::FacilityId;
use domain::pricing::engine::DayReading;
use domain::pricing::settings::PricingSettings;
use sqlx::PgConnection;
use std::collections::HashMap;

/// The readings of each unit type, by (size, tier), oldest first.
pub(super) async fn daily(
    conn: &mut PgConnection,
    facility_id: FacilityId,
    as_of: NaiveDate,
    settings: &PricingSettings,
) -> Result<HashMap<(String, String), Vec<DayReading>>> {
    // Each unit type's daily readings before the snapshot, for the price response's demand;
    // a day's move-ins are the rise of its month-to-date count from the day before. The rows
    // come in (size, tier, date) order from `sync_unit_types_history_idx`, so the day before is
    // the previous row of the same unit type.
    //
    // The window is bounded below only, and the snapshot's own day dropped here: the statement
    // is prepared once per connection and soon runs on its generic plan, where a range between
    // two parameters is estimated at a few rows; for those the planner took
    // `sync_unit_types_facility_idx`, visited the table and sorted the readings (7.7 to 8.1 ms
    // for a year of 10 unit types, against 1.1 to 1.6 ms from this index alone). Nothing is
    // later than the snapshot, the facility's latest, but a sync committed meanwhile could be.
    let history_days = i32::try_from(settings.response_history_days).unwrap_or(i32::MAX);
    let mut histories: HashMap<(String, String), Vec<DayReading>> = HashMap::new();
    let mut rows = sqlx::query!(
        r#"SELECT size, tier, snapshot_date, occupancy_pct, street_rate, move_ins_mtd
           FROM sync_unit_types
           WHERE facility_id = $1 AND snapshot_date >= $2::date - $3::int - 1
           ORDER BY size, tier, snapshot_date"#,
        facility_id.uuid(),
        as_of,
        history_days
    )
    .fetch_all(&mut *conn)
    .await?;
    rows.retain(|r| r.snapshot_date < as_of);
    for rows in rows.chunk_by(|a, b| a.size == b.size && a.tier == b.tier) {
        let befores = std::iter::once(None).chain(rows.iter().map(Some));
        let readings = befores
            .zip(rows)
            .filter_map(|(before, d)| {
                let days_ago = u32::try_from((as_of - d.snapshot_date).num_days()).unwrap_or(0);
                // The day before the window is read only for its month-to-date count.
                let (Some(occupancy_pct), true) =
                    (d.occupancy_pct, days_ago as i32 <= history_days)
                else {
                    return None;
                };
                let before = before.map(|b| (b.snapshot_date, b.move_ins_mtd));
                let move_ins = match (d.move_ins_mtd, before) {
                    (Some(m), _) if d.snapshot_date.day() == 1 => Some(f64::from(m)),
                    (Some(m), Some((on, Some(p))))
                        if (d.snapshot_date - on).num_days() == 1 && m >= p =>
                    {
                        Some(f64::from(m - p))
                    }
                    _ => None,
                };
                Some(DayReading {
                    days_ago,
                    occupancy_pct,
                    street_rate: d.street_rate,
                    move_ins,
                })
            })
            .collect();
        histories.insert((rows[0].size.clone(), rows[0].tier.clone()), readings);
    }
    Ok(histories)
}
