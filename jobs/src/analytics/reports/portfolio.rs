//! `GET /api/v1/analytics/portfolio`: the company rollup and, per facility, its figures and risk
//! flags, from each facility's latest snapshot.
//!
//! Month-to-date move-ins and move-outs are summed over the facilities whose latest snapshot is
//! in the month of the company's latest snapshot (an older snapshot's counters belong to
//! another month). The competitor P75 of a size is the pricing engine's band
//! (`pricing::band::competitor_band`) with the facility's pricing settings, as of the
//! facility's latest snapshot; where the size's competitor rates name a tier, each unit type of
//! the size is set against its own band as the engine builds it (`competitors::banded`).

use super::competitors::banded;
use super::{ecri_gap_pct, latest_with_units, scope, street_by_size, FacilityRow, Latest, UnitRow};
use crate::error::Result;
use chrono::{Datelike, NaiveDate};
use domain::analytics::flags::{flags, Flag, FlagInputs, FlagSettings};
use domain::analytics::revenue::{revenue, sum, Revenue};
use domain::ids::CompanyId;
use domain::pricing::band::CompetitorObservation;
use domain::pricing::settings::PricingSettings;
use domain::values::round2;
use serde::Serialize;
use sqlx::PgPool;
use std::collections::BTreeMap;
use uuid::Uuid;

#[derive(Debug, Serialize)]
pub struct Rollup {
    pub facilities: usize,
    pub facilities_with_data: usize,
    pub facilities_in_lease_up: usize,
    pub facilities_flagged: usize,
    // `total_units` comes with the revenue figures (flattened below).
    pub occupied_units: Option<i64>,
    /// occupied units / total units x 100.
    pub unit_occupancy_pct: Option<f64>,
    /// Actual (in-place) rent per month, GPR, RevPAU and the rest, with estimate flags.
    #[serde(flatten)]
    pub revenue: Revenue,
    /// Month of `as_of`; the month-to-date figures are for it.
    pub month: Option<String>,
    pub move_ins_mtd: i64,
    pub move_outs_mtd: i64,
    /// move_ins_mtd - move_outs_mtd.
    pub net_absorption_mtd: i64,
}

#[derive(Debug, Serialize)]
pub struct FacilityOut {
    pub facility_id: Uuid,
    pub facility_name: String,
    pub mode: String,
    pub as_of: Option<NaiveDate>,
    pub days_since_sync: Option<i64>,
    pub occupancy_pct: Option<f64>,
    pub previous_month_occupancy_pct: Option<f64>,
    // `total_units` comes with the revenue figures (flattened below).
    pub occupied_units: Option<i64>,
    #[serde(flatten)]
    pub revenue: Revenue,
    pub move_ins_mtd: Option<i32>,
    pub move_outs_mtd: Option<i32>,
    pub move_ins_target_monthly: Option<i32>,
    pub ecri_gap_pct: Option<f64>,
    pub flags: Vec<Flag>,
    pub reason: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Report {
    /// Date of the latest snapshot of any facility.
    pub as_of: Option<NaiveDate>,
    /// Today (UTC), for staleness.
    pub today: NaiveDate,
    /// Company-wide figures.
    pub rollup: Rollup,
    /// The risk flags' thresholds.
    pub thresholds: FlagSettings,
    /// Per facility, with its flags.
    pub facilities: Vec<FacilityOut>,
}

fn days_in_month(d: NaiveDate) -> u32 {
    let first = d.with_day(1).unwrap_or(d);
    let next = first + chrono::Months::new(1);
    u32::try_from((next - first).num_days()).unwrap_or(30)
}

/// Occupancy at the last snapshot of the month before each facility's latest snapshot: the
/// facility's second-latest month in the rollup (its latest month is the latest snapshot's).
async fn previous_month_occupancy(
    pool: &PgPool,
    facility_ids: &[Uuid],
) -> Result<BTreeMap<Uuid, Option<f64>>> {
    Ok(sqlx::query!(
        r#"SELECT f.id AS "facility_id!", m.occupancy_pct
           FROM unnest($1::uuid[]) AS f(id)
           CROSS JOIN LATERAL (
               SELECT fm.occupancy_pct FROM facility_months fm
               WHERE fm.facility_id = f.id
               ORDER BY fm.month DESC LIMIT 1 OFFSET 1
           ) m"#,
        facility_ids
    )
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(|r| (r.facility_id, r.occupancy_pct))
    .collect())
}

pub async fn report(
    pool: &PgPool,
    company_id: CompanyId,
    allowed: &crate::access::Scope,
    today: NaiveDate,
    settings: &FlagSettings,
) -> Result<Report> {
    let facilities = scope(pool, company_id, None, allowed).await?;
    let ids = super::ids(&facilities);
    // Four independent reads, each on a connection and a task of its own, so their rows are
    // decoded on every core at once rather than one after another on the request's.
    let latest_and_units = super::spawned({
        let (pool, ids) = (pool.clone(), ids.clone());
        async move { latest_with_units(&pool, &ids).await }
    });
    let previous = super::spawned({
        let (pool, ids) = (pool.clone(), ids.clone());
        async move { previous_month_occupancy(&pool, &ids).await }
    });
    let observations = super::spawned({
        let (pool, ids) = (pool.clone(), ids.clone());
        async move { super::competitors::competitor_observations(&pool, &ids).await }
    });
    let ((latest, units), previous, observations, pricing) = tokio::try_join!(
        latest_and_units,
        previous,
        observations,
        super::competitors::pricing_settings(pool, &ids),
    )?;
    let as_of = latest.values().map(|l| l.snapshot_date).max();
    let current_month = as_of.and_then(|d| d.with_day(1));
    let read = Read {
        units: &units,
        previous: &previous,
        observations: &observations,
        pricing: &pricing,
    };

    let mut out = Vec::with_capacity(facilities.len());
    let (mut mi, mut mo) = (0i64, 0i64);
    for f in &facilities {
        let Some(l) = latest.get(&f.id) else {
            out.push(no_sync(f));
            continue;
        };
        if l.snapshot_date.with_day(1) == current_month {
            mi += i64::from(l.move_ins_mtd.unwrap_or(0));
            mo += i64::from(l.move_outs_mtd.unwrap_or(0));
        }
        out.push(facility_out(f, l, &read, today, settings));
    }
    let rollup = rollup(&facilities, &latest, &out, current_month, mi, mo);
    Ok(Report {
        as_of,
        today,
        rollup,
        thresholds: settings.clone(),
        facilities: out,
    })
}

/// What the report read beside the latest snapshots, each keyed as its read returns it.
struct Read<'a> {
    units: &'a BTreeMap<Uuid, Vec<UnitRow>>,
    previous: &'a BTreeMap<Uuid, Option<f64>>,
    observations: &'a BTreeMap<(Uuid, String), Vec<CompetitorObservation>>,
    pricing: &'a BTreeMap<Uuid, PricingSettings>,
}

/// A facility without a snapshot.
fn no_sync(f: &FacilityRow) -> FacilityOut {
    FacilityOut {
        facility_id: f.id,
        facility_name: f.name.clone(),
        mode: f.mode.clone(),
        as_of: None,
        days_since_sync: None,
        occupancy_pct: None,
        previous_month_occupancy_pct: None,
        occupied_units: None,
        revenue: Revenue::default(),
        move_ins_mtd: None,
        move_outs_mtd: None,
        move_ins_target_monthly: None,
        ecri_gap_pct: None,
        flags: Vec::new(),
        reason: Some(super::no_sync_reason()),
    }
}

/// A facility's figures and flags as of its latest snapshot `l`.
fn facility_out(
    f: &FacilityRow,
    l: &Latest,
    read: &Read<'_>,
    today: NaiveDate,
    settings: &FlagSettings,
) -> FacilityOut {
    let unit_rows = read.units.get(&l.sync_id).map_or(&[][..], Vec::as_slice);
    let street = street_by_size(unit_rows);
    let pricing = read.pricing.get(&f.id).copied().unwrap_or_default();
    let sizes_above_p75: Vec<(String, f64, f64)> = banded(
        unit_rows,
        |size| {
            read.observations
                .get(&(f.id, size.to_owned()))
                .map(Vec::as_slice)
        },
        l.snapshot_date,
        &pricing,
    )
    .into_iter()
    .filter_map(|b| {
        let p75 = b.band.as_ref()?.p75;
        (b.street_rate > p75).then(|| (b.name(), b.street_rate, round2(p75)))
    })
    .collect();
    let gap = ecri_gap_pct(&l.in_place, &street);
    let prev = read.previous.get(&f.id).copied().flatten();
    let days_since = (today - l.snapshot_date).num_days().max(0);
    let inputs = FlagInputs {
        occupancy_pct: l.occupancy_pct,
        previous_occupancy_pct: prev,
        move_ins_mtd: l.move_ins_mtd.map(i64::from),
        move_outs_mtd: l.move_outs_mtd.map(i64::from),
        move_ins_target_monthly: l.move_ins_target_monthly.map(i64::from),
        day_of_month: l.snapshot_date.day(),
        days_in_month: days_in_month(l.snapshot_date),
        days_since_sync: days_since,
        sizes_above_p75,
        ecri_gap_pct: gap,
    };
    FacilityOut {
        facility_id: f.id,
        facility_name: f.name.clone(),
        mode: f.mode.clone(),
        as_of: Some(l.snapshot_date),
        days_since_sync: Some(days_since),
        occupancy_pct: l.occupancy_pct,
        previous_month_occupancy_pct: prev,
        occupied_units: l.figures.occupied_units,
        revenue: revenue(&l.figures),
        move_ins_mtd: l.move_ins_mtd,
        move_outs_mtd: l.move_outs_mtd,
        move_ins_target_monthly: l.move_ins_target_monthly,
        ecri_gap_pct: gap.map(round2),
        flags: flags(&inputs, settings),
        reason: None,
    }
}

/// The company-wide figures; `mi` and `mo` are the month-to-date move-ins and move-outs of
/// `current_month`.
fn rollup(
    facilities: &[FacilityRow],
    latest: &BTreeMap<Uuid, Latest>,
    out: &[FacilityOut],
    current_month: Option<NaiveDate>,
    mi: i64,
    mo: i64,
) -> Rollup {
    let all: Vec<_> = latest.values().map(|l| l.figures.clone()).collect();
    let total = sum(&all);
    Rollup {
        facilities: facilities.len(),
        facilities_with_data: latest.len(),
        facilities_in_lease_up: facilities.iter().filter(|f| f.mode == "lease_up").count(),
        facilities_flagged: out.iter().filter(|f| !f.flags.is_empty()).count(),
        occupied_units: total.occupied_units,
        unit_occupancy_pct: total
            .occupied_units
            .zip(total.total_units.filter(|t| *t > 0))
            .map(|(o, t)| round2(o as f64 / t as f64 * 100.0)),
        revenue: revenue(&total),
        month: current_month.map(|m| m.format("%Y-%m").to_string()),
        move_ins_mtd: mi,
        move_outs_mtd: mo,
        net_absorption_mtd: mi - mo,
    }
}
