//! Rent increases for existing tenants, by the engine of `domain::ecri`: per tenant of the
//! facility's rent roll (per cohort of its latest snapshot when it has no roll), with the stay
//! model learned from the outcomes of the facility's own past increases, pooled over the
//! company. `GET /api/v1/facilities/:id/ecri` answers [`facility`]; the per-size cohorts of
//! `GET /api/v1/analytics/ecri` come from the same suggestions ([`cohorts`]).
//!
//! What the engine is given, all from stored data:
//! - per size, from the latest snapshot: the street rate (the lowest tier's), units and
//!   occupancy (summed over tiers); the competitor band as the pricing engine sees it; the
//!   move-ins and move-outs per month of the last 90 days of the roll's events (from the
//!   month's move-ins to date when there is no roll);
//! - outcomes, from the roll's events: each increase (a rent change upward) whose 90 days have
//!   passed, and whether the tenant moved out within them; and per facility the tenants in
//!   place 90 days ago who were not increased since, and how many of them moved out. The
//!   facility's own outcomes are shrunk toward the company's, and those toward the prior.

use crate::analytics::reports::{self, StoredTenantRent, UnitRow};
use crate::error::{Error, Result};
use chrono::{Datelike, Duration, NaiveDate};
use domain::ecri::{
    decide_facility, learn, stop_loss, EcriEngineSettings, Outcome, SizeMarket, StayModel,
    Suggestion, TenantInput,
};
use domain::ids::{CompanyId, FacilityId};
use domain::pricing::band::competitor_band;
use domain::sync::roll::whole_months;
use domain::values::round2;
use sqlx::PgPool;
use std::collections::BTreeMap;
use uuid::Uuid;

/// Days after a notice over which a move-out counts as caused by it.
pub const OUTCOME_DAYS: i64 = 90;

/// Where the facility's suggestions come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// One suggestion per tenant of the rent roll in force.
    RentRoll,
    /// One per cohort of the latest snapshot's `tenant_rents`.
    Cohorts,
}

/// One suggestion with what it is about.
#[derive(Clone, Debug)]
pub struct TenantLine {
    pub size: String,
    /// Whole months since the rent was last set: the cohort's as sent, or from the tenant's
    /// last increase (its move-in when never increased).
    pub months_since_last_increase: Option<f64>,
    pub suggestion: Suggestion,
    /// What the engine was given for it.
    pub input: TenantInput,
}

/// The learned stay model, as reported.
#[derive(Clone, Debug)]
pub struct ModelSummary {
    pub model: StayModel,
    /// Outcomes of the facility's own increases the model learned from (tenants).
    pub increased_tenants: u32,
    /// Tenants not increased, observed over 90 days.
    pub baseline_tenants: u32,
    /// Outcomes of the company's other facilities (tenants increased).
    pub company_increased_tenants: u32,
}

/// The stop-loss in force: increases are held.
#[derive(Clone, Copy, Debug)]
pub struct StopLoss {
    pub increased_move_out_pct: f64,
    pub baseline_move_out_pct: f64,
    pub increased_tenants: u32,
}

pub struct FacilityEcri {
    pub facility_id: Uuid,
    pub facility_name: String,
    /// Date of the roll (or snapshot) the suggestions are for.
    pub as_of: Option<NaiveDate>,
    pub basis: Option<Basis>,
    pub settings: EcriEngineSettings,
    pub model: ModelSummary,
    pub stop_loss: Option<StopLoss>,
    pub lines: Vec<TenantLine>,
    /// The market of each size the suggestions weighed.
    pub markets: BTreeMap<String, SizeMarket>,
    /// Why there are no suggestions, when there are none.
    pub reason: Option<String>,
}

/// The facility's ECRI settings in force (the defaults with its overrides) and its stored
/// overrides.
pub async fn settings(
    pool: &PgPool,
    company_id: CompanyId,
    facility_id: FacilityId,
) -> Result<(EcriEngineSettings, serde_json::Value)> {
    let overrides = sqlx::query_scalar!(
        "SELECT ecri_settings FROM facilities WHERE company_id = $1 AND id = $2",
        company_id.uuid(),
        facility_id.uuid()
    )
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| Error::not_found(format!("no facility with id {facility_id}")))?;
    Ok((in_force(&overrides), overrides))
}

/// Replaces the facility's overrides with `body`, a JSON object (checked first: a bad one is a
/// 422 and writes nothing), recorded with the overrides before and after; the settings now in
/// force and the overrides as stored.
pub async fn set_settings(
    pool: &PgPool,
    who: &crate::door::Who,
    facility_id: FacilityId,
    body: &[u8],
) -> Result<crate::door::Committed<(EcriEngineSettings, serde_json::Value)>> {
    crate::facilities::replace_overrides(
        pool,
        who,
        facility_id,
        crate::facilities::Overrides::Ecri,
        body,
        |o| Ok(EcriEngineSettings::with_overrides(o)?),
    )
    .await
}

/// The settings of stored overrides; overrides that no longer read (checked when written)
/// fall back to the defaults rather than failing the answer.
fn in_force(overrides: &serde_json::Value) -> EcriEngineSettings {
    match overrides.as_object() {
        Some(o) if o.is_empty() => EcriEngineSettings::default(),
        _ => EcriEngineSettings::with_overrides(overrides).unwrap_or_default(),
    }
}

/// The facility's suggestions, with its own settings.
pub async fn facility(
    pool: &PgPool,
    company_id: CompanyId,
    facility_id: FacilityId,
) -> Result<FacilityEcri> {
    let f = sqlx::query!(
        "SELECT id, name FROM facilities WHERE company_id = $1 AND id = $2",
        company_id.uuid(),
        facility_id.uuid()
    )
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| Error::not_found(format!("no facility with id {facility_id}")))?;
    let scope = [(f.id, f.name)];
    let (latest, units) = reports::latest_with_units(pool, &[f.id]).await?;
    let mut all = facilities(pool, company_id, &scope, &latest, &units).await?;
    all.pop()
        .ok_or_else(|| Error::Internal("no answer for the facility".to_owned()))
}

/// The suggestions of each facility of `scope` (id, name), from their latest snapshots, each
/// with its own settings: a handful of queries whatever the number of facilities.
pub async fn facilities(
    pool: &PgPool,
    company_id: CompanyId,
    scope: &[(Uuid, String)],
    latest: &BTreeMap<Uuid, reports::Latest>,
    units: &BTreeMap<Uuid, Vec<UnitRow>>,
) -> Result<Vec<FacilityEcri>> {
    let ids: Vec<Uuid> = scope.iter().map(|(id, _)| *id).collect();
    let rows = sqlx::query!(
        "SELECT id, rent_roll_date, ecri_settings FROM facilities WHERE id = ANY($1)",
        &ids
    )
    .fetch_all(pool)
    .await?;
    let roll_dates: BTreeMap<Uuid, NaiveDate> = rows
        .iter()
        .filter_map(|r| r.rent_roll_date.map(|d| (r.id, d)))
        .collect();
    let all_settings: BTreeMap<Uuid, EcriEngineSettings> = rows
        .iter()
        .map(|r| (r.id, in_force(&r.ecri_settings)))
        .collect();
    let outcomes = outcomes(pool, company_id).await?;
    let rolls = roll_inputs(pool, &roll_dates).await?;
    let pace = roll_pace(pool, &roll_dates).await?;
    let observations = reports::competitors::competitor_observations(pool, &ids).await?;
    let pricing = reports::competitors::pricing_settings(pool, &ids).await?;
    let mut out = Vec::with_capacity(scope.len());
    let defaults = EcriEngineSettings::default();
    for (id, name) in scope {
        let settings = all_settings.get(id).unwrap_or(&defaults);
        let own: Vec<Outcome> = outcomes
            .get(id)
            .map(|o| o.iter().map(|(o, _)| *o).collect())
            .unwrap_or_default();
        // The stop-loss looks at the increases of the last quarter whose 90 days have passed
        // (and the baseline of the same window), not at the facility's whole history.
        let recent: Vec<Outcome> = outcomes
            .get(id)
            .map(|o| o.iter().filter(|(_, r)| *r).map(|(o, _)| *o).collect())
            .unwrap_or_default();
        let company: Vec<Outcome> = outcomes
            .iter()
            .filter(|(other, _)| *other != id)
            .flat_map(|(_, o)| o.iter().map(|(o, _)| *o))
            .collect();
        let model = learn(&settings.stay_prior, &company, &own);
        let mut f = FacilityEcri {
            facility_id: *id,
            facility_name: name.clone(),
            as_of: None,
            basis: None,
            settings: settings.clone(),
            model: ModelSummary {
                model,
                increased_tenants: own
                    .iter()
                    .filter(|o| o.increased())
                    .map(|o| o.tenants)
                    .sum(),
                baseline_tenants: own
                    .iter()
                    .filter(|o| !o.increased())
                    .map(|o| o.tenants)
                    .sum(),
                company_increased_tenants: company
                    .iter()
                    .filter(|o| o.increased())
                    .map(|o| o.tenants)
                    .sum(),
            },
            stop_loss: stop_loss(&recent, settings).map(|(inc, base, n)| StopLoss {
                increased_move_out_pct: round2(inc),
                baseline_move_out_pct: round2(base),
                increased_tenants: n,
            }),
            lines: Vec::new(),
            markets: BTreeMap::new(),
            reason: None,
        };
        let Some(l) = latest.get(id) else {
            f.reason = Some(reports::no_sync_reason());
            out.push(f);
            continue;
        };
        let (roll, basis, as_of) = match roll_dates.get(id) {
            Some(date) => (
                rolls.get(id).cloned().unwrap_or_default(),
                Basis::RentRoll,
                *date,
            ),
            None => (
                cohort_inputs(&l.tenant_rents),
                Basis::Cohorts,
                l.snapshot_date,
            ),
        };
        f.as_of = Some(as_of);
        f.basis = Some(basis);
        if roll.is_empty() {
            f.reason = Some(match basis {
                Basis::RentRoll => format!("the rent roll of {as_of} has no tenant"),
                Basis::Cohorts => format!(
                    "no rent roll, and the latest snapshot ({}) carries no tenant rents",
                    l.snapshot_date
                ),
            });
            out.push(f);
            continue;
        }
        let band_settings = pricing.get(id).copied().unwrap_or_default().band();
        let unit_rows = units.get(&l.sync_id).map_or(&[][..], Vec::as_slice);
        let bands: BTreeMap<String, domain::pricing::band::CompetitorBand> = unit_rows
            .iter()
            .filter_map(|u| {
                let obs = observations.get(&(*id, u.size.clone()))?;
                Some((
                    u.size.clone(),
                    competitor_band(obs, l.snapshot_date, &band_settings)?,
                ))
            })
            .collect();
        let no_pace = BTreeMap::new();
        let size_pace = match basis {
            Basis::RentRoll => pace.get(id).unwrap_or(&no_pace),
            Basis::Cohorts => &no_pace,
        };
        let markets = markets(
            unit_rows,
            &bands,
            size_pace,
            basis == Basis::RentRoll,
            l.snapshot_date,
            l.move_ins_mtd,
        );
        let inputs: Vec<TenantInput> = roll.iter().map(|(t, _)| t.clone()).collect();
        let suggestions = decide_facility(&inputs, &markets, &model, &recent, settings);
        f.lines = roll
            .into_iter()
            .zip(suggestions)
            .map(|((t, months), suggestion)| TenantLine {
                size: t.size.clone(),
                months_since_last_increase: months,
                suggestion,
                input: t,
            })
            .collect();
        f.markets = markets;
        out.push(f);
    }
    Ok(out)
}

/// The tenants in place of each roll in force, with the whole months since their rent was
/// set, by facility.
async fn roll_inputs(
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
fn cohort_inputs(rents: &[StoredTenantRent]) -> Vec<(TenantInput, Option<f64>)> {
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
async fn roll_pace(
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
fn markets(
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

/// The outcomes per facility of the company: each increase whose 90 days have passed (one
/// per tenant, with its increase, its new rent against the size's street rate of the latest
/// snapshot, and whether the tenant left within the 90 days), and per facility the tenants in
/// place 90 days before its roll's date who were not increased since, and how many left. Each
/// with whether it is recent (an increase of the last 180 days, and the baseline). Outcomes
/// are counted as of the company's latest roll, so every facility's model is learned from the
/// same evidence.
async fn outcomes(
    pool: &PgPool,
    company_id: CompanyId,
) -> Result<BTreeMap<Uuid, Vec<(Outcome, bool)>>> {
    let mut out: BTreeMap<Uuid, Vec<(Outcome, bool)>> = BTreeMap::new();
    let as_of = sqlx::query_scalar!(
        "SELECT max(rent_roll_date) FROM facilities WHERE company_id = $1",
        company_id.uuid()
    )
    .fetch_one(pool)
    .await?;
    let Some(as_of) = as_of else {
        return Ok(out);
    };
    let window_start = as_of - Duration::days(OUTCOME_DAYS);
    // Increases alike (same facility, rents, street rate and window) are one outcome of their
    // tenants: the stay model's likelihood adds them up the same way, and the fits run over
    // far fewer rows. The street rate of each size is read once per facility.
    let increases = sqlx::query!(
        r#"WITH latest AS (
               SELECT f.id AS facility_id,
                      (SELECT max(r.snapshot_date) FROM sync_records r WHERE r.facility_id = f.id) AS d
               FROM facilities f WHERE f.company_id = $1
           ), street AS (
               SELECT u.facility_id, u.size, min(u.street_rate) AS rate
               FROM latest l JOIN sync_unit_types u
                 ON u.facility_id = l.facility_id AND u.snapshot_date = l.d
               GROUP BY u.facility_id, u.size
           ), increased AS (
               SELECT e.facility_id, e.size, e.rent_before, e.rent_after,
                      e.event_date > $2::date - $3::int AS recent,
                      EXISTS (SELECT 1 FROM rent_roll_events o
                              WHERE o.facility_id = e.facility_id AND o.tenant_id = e.tenant_id
                                AND o.kind = 'moved_out' AND o.event_date > e.event_date
                                AND o.event_date <= e.event_date + $3::int) AS gone
               FROM rent_roll_events e
               WHERE e.company_id = $1 AND e.kind = 'rent_changed'
                 AND e.rent_after > e.rent_before AND e.rent_before > 0 AND e.event_date <= $2
           )
           SELECT i.facility_id AS "facility_id!", i.rent_before AS "before!",
                  i.rent_after AS "after!", s.rate AS "street?", i.recent AS "recent!",
                  count(*) AS "tenants!", count(*) FILTER (WHERE i.gone) AS "left!"
           FROM increased i LEFT JOIN street s ON s.facility_id = i.facility_id AND s.size = i.size
           GROUP BY i.facility_id, i.rent_before, i.rent_after, s.rate, i.recent"#,
        company_id.uuid(),
        window_start,
        OUTCOME_DAYS as i32
    )
    .fetch_all(pool)
    .await?;
    for r in increases {
        let premium = r
            .street
            .filter(|s| *s > 0.0)
            .map_or(0.0, |s| (r.after / s - 1.0) * 100.0);
        out.entry(r.facility_id).or_default().push((
            Outcome {
                increase_pct: (r.after / r.before - 1.0) * 100.0,
                premium_pct: premium,
                tenants: u32::try_from(r.tenants).unwrap_or(u32::MAX),
                moved_out: u32::try_from(r.left).unwrap_or(u32::MAX),
            },
            r.recent,
        ));
    }
    let baseline = sqlx::query!(
        r#"SELECT t.facility_id, count(*) AS "tenants!",
                  count(*) FILTER (WHERE t.moved_out_on IS NOT NULL AND t.moved_out_on <= $3) AS "left!"
           FROM rent_roll_tenants t
           WHERE t.company_id = $1 AND t.first_seen_on <= $2 AND t.move_in_date <= $2
             AND (t.moved_out_on IS NULL OR t.moved_out_on > $2)
             AND NOT EXISTS (SELECT 1 FROM rent_roll_events e
                             WHERE e.facility_id = t.facility_id AND e.tenant_id = t.tenant_id
                               AND e.kind = 'rent_changed' AND e.event_date > $2
                               AND e.event_date <= $3)
           GROUP BY t.facility_id"#,
        company_id.uuid(),
        window_start,
        as_of
    )
    .fetch_all(pool)
    .await?;
    for r in baseline {
        if r.tenants > 0 {
            out.entry(r.facility_id).or_default().push((
                Outcome {
                    increase_pct: 0.0,
                    premium_pct: 0.0,
                    tenants: u32::try_from(r.tenants).unwrap_or(u32::MAX),
                    moved_out: u32::try_from(r.left).unwrap_or(u32::MAX),
                },
                true,
            ));
        }
    }
    Ok(out)
}

/// The suggestions grouped per size and whole months since the rent was set: tenants, their
/// average rent, and the average increase, new rent and stay probability.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CohortLine {
    #[serde(skip)]
    pub size: String,
    pub months_since_last_increase: Option<f64>,
    pub tenant_count: u32,
    pub avg_rent: f64,
    /// Per tenant, currency per month (0 for none).
    pub increase: f64,
    pub new_rent: f64,
    pub stay_probability: f64,
}

pub fn cohorts(lines: &[TenantLine]) -> Vec<CohortLine> {
    let mut groups: BTreeMap<(String, Option<u64>), Vec<&TenantLine>> = BTreeMap::new();
    for l in lines {
        let months = l
            .months_since_last_increase
            .map(|m| (m * 100.0).round() as u64);
        groups.entry((l.size.clone(), months)).or_default().push(l);
    }
    groups
        .into_iter()
        .map(|((size, _), ls)| {
            let n: u32 = ls.iter().map(|l| l.suggestion.tenant_count.max(1)).sum();
            let w = |f: &dyn Fn(&Suggestion) -> f64| {
                ls.iter()
                    .map(|l| f(&l.suggestion) * f64::from(l.suggestion.tenant_count.max(1)))
                    .sum::<f64>()
                    / f64::from(n.max(1))
            };
            CohortLine {
                size,
                months_since_last_increase: ls[0].months_since_last_increase,
                tenant_count: n,
                avg_rent: round2(w(&|s| s.current_rent)),
                increase: round2(w(&|s| s.increase)),
                new_rent: round2(w(&|s| s.new_rent)),
                // The engine's chance is a percent; the answer's a probability.
                stay_probability: (w(&|s| s.stay_probability) * 100.0).round() / 10_000.0,
            }
        })
        .collect()
}
