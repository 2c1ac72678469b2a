//! What the engine is given for each facility besides the stay model: the tenants of its roll
//! (or the cohorts of its snapshot), the pace of its moves, and the market of each size.

use super::OUTCOME_DAYS;
use crate::analytics::reports::{self, StoredTenantRent, UnitRow};
use crate::error::Result;
use chrono::{Datelike, NaiveDate};
use domain::ecri::decide::market_key;
use domain::ecri::{SizeMarket, TenantInput};
use domain::sync::roll::whole_months;
use sqlx::PgPool;
use std::collections::BTreeMap;
use uuid::Uuid;

mod history;

/// The tenants in place of each roll in force, with the whole months since their rent was
/// set, by facility. `rolls` gives each roll's date and the facility's cap base date
/// (`cap_base_date`, for the rent in force then). The months since the last increase are the
/// latest of every record ([`history::history`]).
pub(super) async fn roll_inputs(
    pool: &PgPool,
    rolls: &BTreeMap<Uuid, (NaiveDate, Option<NaiveDate>)>,
) -> Result<BTreeMap<Uuid, Vec<(TenantInput, Option<f64>)>>> {
    let ids: Vec<Uuid> = rolls.keys().copied().collect();
    let rows = sqlx::query!(
        r#"SELECT facility_id, tenant_id, size, tier, rent, move_in_date, last_increase_date,
                  prior_increase_date, customer_id, flags
           FROM rent_roll_tenants WHERE facility_id = ANY($1) AND moved_out_on IS NULL
           ORDER BY facility_id, size, tenant_id"#,
        &ids
    )
    .fetch_all(pool)
    .await?;
    let known = history::known(pool, rolls).await?;
    let mut out: BTreeMap<Uuid, Vec<(TenantInput, Option<f64>)>> = BTreeMap::new();
    for r in rows {
        let Some(&(as_of, base)) = rolls.get(&r.facility_id) else {
            continue;
        };
        let k = known.get(&(r.facility_id, r.tenant_id.clone()));
        let h = history::history([r.last_increase_date, r.prior_increase_date], k);
        let months = |d: NaiveDate| f64::from(whole_months(d, as_of));
        // The rent of a date before the move-in is the move-in rent: the first the roll knows.
        let rent_on = |known: Option<f64>| known.or(Some(r.rent));
        out.entry(r.facility_id).or_default().push((
            TenantInput {
                tenant_id: r.tenant_id,
                size: r.size,
                tier: Some(r.tier).filter(|t| !t.trim().is_empty()),
                rent: r.rent,
                months_since_move_in: Some(months(r.move_in_date)),
                months_since_last_increase: h.last_increase.map(months),
                pending_increase: h.pending,
                past_increases: h.count,
                rent_12_months_ago: rent_on(k.and_then(|k| k.rent_year_ago)),
                rent_at_cap_base: base.and_then(|_| rent_on(k.and_then(|k| k.rent_at_base))),
                customer_id: r.customer_id,
                flags: r.flags,
                tenant_count: 1,
            },
            Some(months(h.last_increase.unwrap_or(r.move_in_date))),
        ));
    }
    Ok(out)
}

/// One input per cohort of the snapshot (no tenant id, no move-in known); a cohort with a
/// flagged tenant carries `do_not_increase`.
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
                    // A cohort's increase is one letter row for all its tenants: one flagged
                    // tenant holds the whole cohort.
                    flags: if r.flagged_count.unwrap_or(0) > 0 {
                        vec![domain::ecri::DO_NOT_INCREASE.to_owned()]
                    } else {
                        Vec::new()
                    },
                    tenant_count: r.tenant_count,
                    tier: None,
                    pending_increase: None,
                    past_increases: 0,
                    rent_12_months_ago: None,
                    rent_at_cap_base: None,
                },
                r.months_since_last_increase,
            )
        })
        .collect()
}

/// Move-ins and move-outs per month of each size and tier (lower-cased; '' when the roll names
/// none) over the 90 days before a roll's date.
pub(super) type Pace = BTreeMap<(String, String), (f64, f64)>;

/// The [`Pace`] of each roll, from its events (a tenant's tier is the roll's), by facility.
pub(super) async fn roll_pace(
    pool: &PgPool,
    rolls: &BTreeMap<Uuid, NaiveDate>,
) -> Result<BTreeMap<Uuid, Pace>> {
    let ids: Vec<Uuid> = rolls.keys().copied().collect();
    let dates: Vec<NaiveDate> = rolls.values().copied().collect();
    let rows = sqlx::query!(
        r#"SELECT e.facility_id, e.size, lower(btrim(coalesce(t.tier, ''))) AS "tier!",
                  count(*) FILTER (WHERE e.kind = 'moved_in') AS "ins!",
                  count(*) FILTER (WHERE e.kind = 'moved_out') AS "outs!"
           FROM UNNEST($1::uuid[], $2::date[]) AS r(id, d)
           JOIN rent_roll_events e ON e.facility_id = r.id
           LEFT JOIN rent_roll_tenants t ON t.facility_id = e.facility_id AND t.tenant_id = e.tenant_id
           WHERE e.event_date > r.d - $3::int AND e.event_date <= r.d
             AND e.kind IN ('moved_in', 'moved_out')
           GROUP BY 1, 2, 3"#,
        &ids,
        &dates,
        OUTCOME_DAYS as i32
    )
    .fetch_all(pool)
    .await?;
    let months = OUTCOME_DAYS as f64 / (365.25 / 12.0);
    let mut out: BTreeMap<Uuid, Pace> = BTreeMap::new();
    for r in rows {
        out.entry(r.facility_id).or_default().insert(
            (r.size, r.tier),
            (r.ins as f64 / months, r.outs as f64 / months),
        );
    }
    Ok(out)
}

/// Units and occupied units of each size, and of each size and tier (lower-cased).
type Units = BTreeMap<(String, Option<String>), (f64, f64)>;

fn unit_counts(units: &[UnitRow]) -> Units {
    let mut total = Units::new();
    for u in units {
        let n = f64::from(u.total_units.unwrap_or(0).max(0));
        let occupied = u.occupancy_pct.map_or(0.0, |o| n * o / 100.0);
        let tier = u.tier.trim().to_lowercase();
        for key in [None, Some(tier).filter(|t| !t.is_empty())] {
            let e = total.entry((u.size.clone(), key)).or_default();
            e.0 += n;
            e.1 += occupied;
        }
    }
    total
}

/// The competitor band of each size (tier '') and of each tier banded on its own (the tier as
/// compared, `tiers::tier_key`).
pub(super) type Bands = BTreeMap<(String, String), domain::pricing::band::CompetitorBand>;

/// The market of each size of the snapshot (keyed by size), and of each of its tiers (keyed by
/// [`market_key`]: the tier's street rate, band, units, occupancy and, from a roll, move-ins).
pub(super) fn markets(
    units: &[UnitRow],
    bands: &Bands,
    pace: &Pace,
    from_roll: bool,
    date: NaiveDate,
    facility_move_ins_mtd: Option<i32>,
) -> BTreeMap<String, SizeMarket> {
    let counts = unit_counts(units);
    let all_units: f64 = counts
        .iter()
        .filter(|((_, tier), _)| tier.is_none())
        .map(|(_, c)| c.0)
        .sum();
    // Without a roll, the facility's move-ins this month spread over sizes by their units.
    let facility_pace = facility_move_ins_mtd
        .map(|m| f64::from(m.max(0)) / f64::from(date.day()) * (365.25 / 12.0));
    let pace_of = |size: &str, tier: Option<&str>, n: f64| -> (f64, Option<f64>) {
        if from_roll {
            pace.iter()
                .filter(|((s, t), _)| s == size && tier.is_none_or(|tier| t == tier))
                .fold((0.0, Some(0.0)), |(i, o), (_, (pi, po))| {
                    (i + pi, o.map(|o| o + po))
                })
        } else {
            let share = if all_units > 0.0 { n / all_units } else { 0.0 };
            (facility_pace.map_or(0.0, |p| p * share), None)
        }
    };
    let market = |size: &str, tier: Option<&str>, street_rate: f64| {
        let key = (size.to_owned(), tier.map(str::to_owned));
        let (n, occupied) = counts.get(&key).copied().unwrap_or_default();
        let band = tier
            .and_then(|t| bands.get(&(size.to_owned(), t.to_owned())))
            .or_else(|| bands.get(&(size.to_owned(), String::new())));
        let (ins, outs) = pace_of(size, tier, n);
        SizeMarket {
            street_rate,
            of_tier: tier.is_some(),
            competitor_low: band.map(|b| b.p25),
            competitor_median: band.map(|b| b.median),
            competitor_high: band.map(|b| b.p75),
            units: n.round() as u32,
            occupancy_pct: if n > 0.0 { occupied / n * 100.0 } else { 0.0 },
            move_ins_per_month: ins,
            move_outs_per_month: outs,
        }
    };
    let mut out: BTreeMap<String, SizeMarket> = reports::street_by_size(units)
        .into_iter()
        .map(|(size, street)| {
            let m = market(&size, None, street);
            (size, m)
        })
        .collect();
    for u in units {
        let tier = u.tier.trim().to_lowercase();
        if !tier.is_empty() && u.street_rate.is_finite() && u.street_rate > 0.0 {
            let m = market(&u.size, Some(&tier), u.street_rate);
            out.insert(market_key(&u.size, &tier), m);
        }
    }
    out
}
