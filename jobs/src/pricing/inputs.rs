//! A facility's engine inputs read from the database as of its latest snapshot, and its
//! pricing settings (defaults with its overrides).

use crate::error::{Error, Result, ValidationError};
use chrono::Datelike;
use domain::ids::{CompanyId, FacilityId};
use domain::pricing::band::CompetitorObservation;
use domain::pricing::engine::{
    DayReading, EarlierReading, FacilityInput, Mode, PromotionInput, UnitTypeInput,
};
use domain::pricing::seasonality::{self, SeasonalIndex};
use domain::pricing::settings::PricingSettings;
use serde_json::{json, Value};
use sqlx::PgConnection;

/// Own months of move-in history needed before the seasonality profile is the facility's own.
pub const SEASONALITY_MIN_OWN_MONTHS: usize = 6;
/// Snapshots a month needs to count as a month of own history.
pub const SEASONALITY_MIN_DAYS_PER_MONTH: i64 = 20;

/// The facility's settings: defaults with its overrides.
pub(crate) async fn settings_of(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
) -> Result<(PricingSettings, Value)> {
    let overrides = sqlx::query_scalar!(
        "SELECT pricing_settings FROM facilities WHERE company_id = $1 AND id = $2",
        company_id.uuid(),
        facility_id.uuid()
    )
    .fetch_optional(&mut *conn)
    .await?
    .ok_or_else(|| Error::not_found(format!("no facility with id {facility_id}")))?;
    let settings = PricingSettings::with_overrides(&overrides)?;
    Ok((settings, overrides))
}

/// Everything the engine needs for one facility, read as of its latest snapshot.
pub struct Loaded {
    pub facility_name: String,
    pub input: FacilityInput,
    pub settings: PricingSettings,
    /// A summary of the inputs, stored with the run.
    pub summary: Value,
}

pub(crate) async fn load(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
) -> Result<Loaded> {
    let facility = sqlx::query!(
        "SELECT name, mode, pricing_settings FROM facilities WHERE company_id = $1 AND id = $2",
        company_id.uuid(),
        facility_id.uuid()
    )
    .fetch_optional(&mut *conn)
    .await?
    .ok_or_else(|| Error::not_found(format!("no facility with id {facility_id}")))?;
    let settings = PricingSettings::with_overrides(&facility.pricing_settings)?;
    let snap = sqlx::query!(
        "SELECT id, snapshot_date, occupancy_pct, move_ins_mtd, move_ins_target_monthly, promotions
         FROM sync_records WHERE facility_id = $1 ORDER BY snapshot_date DESC LIMIT 1",
        facility_id.uuid()
    )
    .fetch_optional(&mut *conn)
    .await?
    .ok_or_else(|| {
        ValidationError::new(
            "facility",
            "has no snapshot yet: push a sync or upload unit rates before asking for recommendations",
        )
    })?;
    let as_of = snap.snapshot_date;

    // Only a change inside the cooldown or the reversal window matters, so only that window
    // (and the day before it, for the comparison) is read.
    let change_window = settings.cooldown_days.max(settings.reversal_window_days) + 1;
    let changes = sqlx::query!(
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
    .await?;
    // The reading the trend is measured from: the nearest snapshot at least
    // `occupancy_trend_days` back (up to two weeks further), else the oldest one at least a
    // week back, so a young facility still gets a trend and an anchor.
    let trend_days = i32::try_from(settings.occupancy_trend_days).unwrap_or(i32::MAX);
    let earlier = sqlx::query!(
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
    .await?;
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
    let mut histories: std::collections::HashMap<(String, String), Vec<DayReading>> =
        std::collections::HashMap::new();
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
    let mut unit_types: Vec<UnitTypeInput> = sqlx::query!(
        "SELECT size, tier, street_rate, occupancy_pct, total_units
         FROM sync_unit_types WHERE sync_id = $1 ORDER BY width_ft * depth_ft, size, tier",
        snap.id
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
    .collect();

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

    // The band counts each competitor's latest observation per size: only those are read.
    let competitors: Vec<(String, CompetitorObservation)> = sqlx::query!(
        "SELECT DISTINCT ON (size, lower(btrim(competitor)))
                size, competitor, rate, promo, observed_on
         FROM competitor_rates
         WHERE facility_id = $1 AND observed_on BETWEEN $2::date - $3::int AND $2::date
         ORDER BY size, lower(btrim(competitor)), observed_on DESC, id DESC",
        facility_id.uuid(),
        as_of,
        i32::try_from(settings.competitor_max_age_days).unwrap_or(i32::MAX)
    )
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|r| {
        (
            r.size,
            CompetitorObservation {
                competitor: r.competitor,
                rate: r.rate,
                promo: r.promo,
                observed_on: r.observed_on,
            },
        )
    })
    .collect();

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
    let (profile, own_months) = seasonality::profile(&per_month, SEASONALITY_MIN_OWN_MONTHS);
    let month_ix = as_of.month0() as usize;
    let season = SeasonalIndex {
        index: profile[month_ix],
        own_data: own_months > 0,
    };

    let promotions: Vec<PromotionInput> = snap
        .promotions
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| {
                    Some(PromotionInput {
                        name: p.get("name")?.as_str()?.to_owned(),
                        depth_pct: p.get("depth_pct").and_then(Value::as_f64).unwrap_or(0.0),
                        applies_to: p
                            .get("applies_to")
                            .and_then(Value::as_str)
                            .unwrap_or("all")
                            .to_owned(),
                    })
                })
                .collect()
        })
        .unwrap_or_default();

    let mode = Mode::from_stored(&facility.mode);
    let history_days = u32::try_from(history.days).unwrap_or(u32::MAX);
    let summary = json!({
        "snapshot_date": as_of,
        "mode": mode,
        "unit_types": unit_types.len(),
        "competitor_observations": competitors.len(),
        "history_days": history_days,
        "first_snapshot_date": history.first,
        "seasonality": {
            "month": as_of.month(),
            "index": (season.index * 10_000.0).round() / 10_000.0,
            "source": if season.own_data { "own_history" } else { "national_prior" },
            "own_months": own_months,
        },
        "promotions": promotions.len(),
        "pending_approved_rates": pending_approved,
    });
    Ok(Loaded {
        facility_name: facility.name,
        input: FacilityInput {
            as_of,
            mode,
            occupancy_pct: snap.occupancy_pct,
            move_ins_mtd: snap.move_ins_mtd.map(f64::from),
            move_ins_target_monthly: snap.move_ins_target_monthly.map(f64::from),
            seasonality: season,
            history_days,
            unit_types,
            promotions,
            competitors,
        },
        settings,
        summary,
    })
}
