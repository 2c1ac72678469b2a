//! The snapshot's unit types as the engine starts from them: each with its last rate change,
//! its earlier reading for the trend, its daily history, and a rate approved since the snapshot
//! in place of the snapshot's. The per-type lookups are read in bulk here, once per run, rather
//! than per unit type.

use super::readings;
use crate::error::Result;
use chrono::NaiveDate;
use domain::ids::FacilityId;
use domain::pricing::engine::{EarlierReading, UnitTypeInput};
use domain::pricing::settings::PricingSettings;
use serde_json::{json, Value};
use sqlx::PgConnection;
use uuid::Uuid;

/// A unit type's last street-rate change inside the window read.
struct RateChange {
    size: String,
    tier: String,
    changed_on: NaiveDate,
    raised: bool,
}

/// A unit type's reading the occupancy trend is measured from.
struct Earlier {
    size: String,
    tier: String,
    snapshot_date: NaiveDate,
    occupancy_pct: Option<f64>,
    street_rate: f64,
}

/// The last rate change of each unit type in the cooldown or reversal window.
async fn rate_changes(
    conn: &mut PgConnection,
    facility_id: FacilityId,
    as_of: NaiveDate,
    settings: &PricingSettings,
) -> Result<Vec<RateChange>> {
    // Only a change inside the cooldown or the reversal window matters, so only that window
    // (and the day before it, for the comparison) is read.
    let change_window = settings.cooldown_days.max(settings.reversal_window_days) + 1;
    Ok(sqlx::query_as!(
        RateChange,
        r#"SELECT DISTINCT ON (size, tier) size AS "size!", tier AS "tier!",
                  snapshot_date AS "changed_on!", street_rate > prev AS "raised!"
           FROM (SELECT size, tier, snapshot_date, street_rate,
                        lag(street_rate) OVER (PARTITION BY size, tier ORDER BY snapshot_date) AS prev
                 FROM sync_unit_types
                 WHERE facility_id = $1 AND snapshot_date BETWEEN $2::date - $3::int AND $2::date) t
           WHERE prev IS NOT NULL AND prev <> street_rate
           ORDER BY size, tier, snapshot_date DESC"#,
        facility_id.uuid(),
        as_of,
        i32::try_from(change_window).unwrap_or(i32::MAX)
    )
    .fetch_all(&mut *conn)
    .await?)
}

/// Each unit type's reading the trend is measured from.
async fn earlier_readings(
    conn: &mut PgConnection,
    facility_id: FacilityId,
    as_of: NaiveDate,
    settings: &PricingSettings,
) -> Result<Vec<Earlier>> {
    // The reading the trend is measured from: the nearest snapshot at least
    // `occupancy_trend_days` back (up to two weeks further), else the oldest one at least a
    // week back, so a young facility still gets a trend and an anchor.
    let trend_days = i32::try_from(settings.occupancy_trend_days).unwrap_or(i32::MAX);
    Ok(sqlx::query_as!(
        Earlier,
        r#"SELECT DISTINCT ON (size, tier) size, tier, snapshot_date, occupancy_pct, street_rate
           FROM sync_unit_types
           WHERE facility_id = $1
             AND snapshot_date BETWEEN $2::date - ($3::int + 14) AND $2::date - 7
           ORDER BY size, tier, (snapshot_date <= $2::date - $3::int) DESC,
                    CASE WHEN snapshot_date <= $2::date - $3::int THEN snapshot_date END DESC,
                    snapshot_date"#,
        facility_id.uuid(),
        as_of,
        trend_days
    )
    .fetch_all(&mut *conn)
    .await?)
}

/// The unit types of the snapshot `sync_id` of `as_of`, smallest first, each with its last
/// change, earlier reading and daily history.
pub(super) async fn of_snapshot(
    conn: &mut PgConnection,
    facility_id: FacilityId,
    sync_id: Uuid,
    as_of: NaiveDate,
    settings: &PricingSettings,
) -> Result<Vec<UnitTypeInput>> {
    let changes = rate_changes(&mut *conn, facility_id, as_of, settings).await?;
    let earlier = earlier_readings(&mut *conn, facility_id, as_of, settings).await?;
    let mut histories = readings::daily(&mut *conn, facility_id, as_of, settings).await?;
    Ok(sqlx::query!(
        "SELECT size, tier, street_rate, occupancy_pct, total_units
         FROM sync_unit_types WHERE sync_id = $1 ORDER BY width_ft * depth_ft, size, tier",
        sync_id
    )
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|u| {
        let change = changes
            .iter()
            .find(|c| c.size == u.size && c.tier == u.tier);
        UnitTypeInput {
            history: histories
                .remove(&(u.size.clone(), u.tier.clone()))
                .unwrap_or_default(),
            last_rate_change: change.map(|c| c.changed_on),
            last_change_raised: change.map(|c| c.raised),
            earlier: earlier
                .iter()
                .find(|e| e.size == u.size && e.tier == u.tier)
                .map(|e| EarlierReading {
                    days_ago: u32::try_from((as_of - e.snapshot_date).num_days()).unwrap_or(0),
                    occupancy_pct: e.occupancy_pct,
                    street_rate: e.street_rate,
                }),
            size: u.size,
            tier: u.tier,
            street_rate: u.street_rate,
            occupancy_pct: u.occupancy_pct,
            total_units: u.total_units.and_then(|n| u32::try_from(n).ok()),
        }
    })
    .collect())
}

/// Starts each unit type with a rate approved and not yet shown by a snapshot; the rates so
/// applied, for the run's summary.
pub(super) async fn apply_pending(
    conn: &mut PgConnection,
    facility_id: FacilityId,
    as_of: NaiveDate,
    unit_types: &mut [UnitTypeInput],
) -> Result<Vec<Value>> {
    // A rate approved and not yet shown by a snapshot is the rate the engine starts from, and
    // the unit type counts as changed on the decision's day (the cooldown and the reversal
    // window see it).
    let mut pending_approved = Vec::new();
    for p in crate::rates::pending(conn, facility_id, as_of).await? {
        let (Some(ut), Some(rate)) = (
            unit_types
                .iter_mut()
                .find(|u| u.size == p.size && u.tier == p.tier),
            p.rate,
        ) else {
            continue;
        };
        pending_approved.push(json!({
            "size": ut.size,
            "tier": ut.tier,
            "snapshot_rate": ut.street_rate,
            "approved_rate": rate,
            "decided_at": p.decided_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        }));
        if rate != ut.street_rate {
            ut.last_change_raised = Some(rate > ut.street_rate);
            ut.last_rate_change = Some(p.decided_on());
            ut.street_rate = rate;
        }
    }
    Ok(pending_approved)
}
