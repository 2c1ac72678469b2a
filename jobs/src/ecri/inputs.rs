//! What the engine is given for each facility besides the stay model: the tenants of its roll
//! (or the cohorts of its snapshot), the pace of its moves, and the market of each size.

use super::OUTCOME_DAYS;
use crate::analytics::reports::{self, StoredTenantRent, UnitRow};
use crate::error::Result;
use chrono::{Datelike, NaiveDate};
use domain::ecri::{SizeMarket, TenantInput};
use domain::sync::roll::whole_months;
use sqlx::PgPool;
use std::collections::BTreeMap;
use uuid::Uuid;

/// The tenants in place of each roll in force, with the whole months since their rent was
/// set, by facility.
pub(super) async fn roll_inputs(
    pool: &PgPool,
    rolls: &BTreeMap<Uuid, NaiveDate>,
) -> Result<BTreeMap<Uuid, Vec<(TenantInput, Option<f64>)>>> {
    let ids: Vec<Uuid> = rolls.keys().copied().collect();
    let rows = sqlx::query!(
        r#"SELECT facility_id, tenant_id, size, rent, move_in_date, last_increase_date,
                  customer_id, flags
           FROM rent_roll_tenants WHERE facility_id = ANY($1) AND moved_out_on IS NULL
           ORDER BY facility_id, size, tenant_id"#,
        &ids
    )
    .fetch_all(pool)
    .await?;
    let mut out: BTreeMap<Uuid, Vec<(TenantInput, Option<f64>)>> = BTreeMap::new();
    for r in rows {
        let Some(&as_of) = rolls.get(&r.facility_id) else {
            continue;
        };
        let since_set = whole_months(r.last_increase_date.unwrap_or(r.move_in_date), as_of);
        out.entry(r.facility_id).or_default().push((
            TenantInput {
                tenant_id: r.tenant_id,
                size: r.size,
                rent: r.rent,
                months_since_move_in: Some(f64::from(whole_months(r.move_in_date, as_of))),
                months_since_last_increase: r
                    .last_increase_date
                    .map(|d| f64::from(whole_months(d, as_of))),
                customer_id: r.customer_id,
                flags: r.flags,
                tenant_count: 1,
            },
            Some(f64::from(since_set)),
        ));
    }
    Ok(out)
}

/// One input per cohort of the snapshot (no tenant id, no move-in known).
pub(super) fn cohort_inputs(rents: &[StoredTenantRent]) -> Vec<(TenantInput, Option<f64>)> {
    rents
        .iter()
        .filter(|r| r.tenant_count > 0)
        .map(|r| {
            (
                TenantInput {
                    tenant_id: String::new(),
                    size: r.size.clone(),
                    rent: r.avg_rent,
                    months_since_move_in: r.months_since_last_increase,
                    months_since_last_increase: r.months_since_last_increase,
                    customer_id: None,
                    flags: Vec::new(),
                    tenant_count: r.tenant_count,
                },
                r.months_since_last_increase,
            )
        })
        .collect()
}

/// Move-ins and move-outs per month per size over the 90 days before each roll's date, from
/// its events, by facility.
pub(super) async fn roll_pace(
    pool: &PgPool,
    rolls: &BTreeMap<Uuid, NaiveDate>,
) -> Result<BTreeMap<Uuid, BTreeMap<String, (f64, f64)>>> {
    let ids: Vec<Uuid> = rolls.keys().copied().collect();
    let dates: Vec<NaiveDate> = rolls.values().copied().collect();
    let rows = sqlx::query!(
        r#"SELECT e.facility_id, e.size,
                  count(*) FILTER (WHERE e.kind = 'moved_in') AS "ins!",
                  count(*) FILTER (WHERE e.kind = 'moved_out') AS "outs!"
           FROM UNNEST($1::uuid[], $2::date[]) AS r(id, d)
           JOIN rent_roll_events e ON e.facility_id = r.id
           WHERE e.event_date > r.d - $3::int AND e.event_date <= r.d
             AND e.kind IN ('moved_in', 'moved_out')
           GROUP BY e.facility_id, e.size"#,
        &ids,
        &dates,
        OUTCOME_DAYS as i32
    )
    .fetch_all(pool)
    .await?;
    let months = OUTCOME_DAYS as f64 / (365.25 / 12.0);
    let mut out: BTreeMap<Uuid, BTreeMap<String, (f64, f64)>> = BTreeMap::new();
    for r in rows {
        out.entry(r.facility_id)
            .or_default()
            .insert(r.size, (r.ins as f64 / months, r.outs as f64 / months));
    }
    Ok(out)
}

/// The market of each size of the snapshot.
pub(super) fn markets(
    units: &[UnitRow],
    bands: &BTreeMap<String, domain::pricing::band::CompetitorBand>,
    pace: &BTreeMap<String, (f64, f64)>,
    from_roll: bool,
    date: NaiveDate,
    facility_move_ins_mtd: Option<i32>,
) -> BTreeMap<String, SizeMarket> {
    let street = reports::street_by_size(units);
    let mut total: BTreeMap<&str, (f64, f64, f64)> = BTreeMap::new();
    for u in units {
        let n = f64::from(u.total_units.unwrap_or(0).max(0));
        let occupied = u.occupancy_pct.map_or(0.0, |o| n * o / 100.0);
        let e = total.entry(u.size.as_str()).or_default();
        e.0 += n;
        e.1 += occupied;
    }
    let all_units: f64 = total.values().map(|t| t.0).sum();
    // Without a roll, the facility's move-ins this month spread over sizes by their units.
    let facility_pace = facility_move_ins_mtd
        .map(|m| f64::from(m.max(0)) / f64::from(date.day()) * (365.25 / 12.0));
    street
        .into_iter()
        .map(|(size, street_rate)| {
            let (n, occupied, _) = total.get(size.as_str()).copied().unwrap_or_default();
            let band = bands.get(&size);
            let (ins, outs) = match pace.get(&size) {
                Some((i, o)) => (*i, Some(*o)),
                None if from_roll => (0.0, Some(0.0)),
                None => (
                    facility_pace.map_or(0.0, |p| {
                        if all_units > 0.0 {
                            p * n / all_units
                        } else {
                            0.0
                        }
                    }),
                    None,
                ),
            };
            let market = SizeMarket {
                street_rate,
                competitor_low: band.map(|b| b.p25),
                competitor_median: band.map(|b| b.median),
                competitor_high: band.map(|b| b.p75),
                units: n.round() as u32,
                occupancy_pct: if n > 0.0 { occupied / n * 100.0 } else { 0.0 },
                move_ins_per_month: ins,
                move_outs_per_month: outs,
            };
            (size, market)
        })
        .collect()
}
