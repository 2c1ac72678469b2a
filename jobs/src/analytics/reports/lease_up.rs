//! `GET /api/v1/analytics/lease-up`: per facility its mode (hysteresis of the interface: enter
//! below 60 %, leave at or above 70 %, unchanged between), the mode event history recorded at
//! ingest in snapshot-date order, and for facilities in lease-up the per-size aggressive-fill
//! suggestions of the pricing engine (`pricing::band::lease_up_fill`: at or below the
//! competitor P25, never below 70 % of the current street rate). Where a size's competitor
//! rates name a tier, each unit type of the size has its own suggestion, from its band as the
//! engine builds it (`competitors::banded`).

use super::competitors::{banded, Banded};
use super::{latest, scope, unit_types, Latest, UnitRow};
use crate::error::Result;
use crate::pricing::SizeRecommendation;
use chrono::{DateTime, NaiveDate, Utc};
use domain::ids::{CompanyId, FacilityId};
use domain::lease_up::{ENTER_BELOW_PCT, LEAVE_AT_PCT};
use domain::pricing::band::{lease_up_fill, CompetitorObservation};
use domain::pricing::settings::PricingSettings;
use domain::pricing::tiers::{tier_key, SetSource};
use serde::Serialize;
use sqlx::PgPool;
use std::collections::{BTreeMap, HashMap};
use uuid::Uuid;

#[derive(Debug, Serialize)]
pub struct Event {
    /// Snapshot date that changed the mode.
    pub date: NaiveDate,
    /// Mode before.
    pub from: String,
    /// Mode after.
    pub to: String,
    /// Occupancy that caused the change, percent.
    pub occupancy_pct: f64,
    /// When the change was recorded.
    pub recorded_at: DateTime<Utc>,
}

#[derive(Debug, Serialize)]
pub struct Fill {
    /// Unit size.
    pub size: String,
    /// The unit type's tier (empty when it has none) when the size's competitor rates name a
    /// tier, so each unit type of the size has a suggestion of its own; null for a suggestion
    /// for the size as a whole.
    pub tier: Option<String>,
    /// The competitor set of a unit type's band (`tier`, `size_adjusted` or `size`, as a
    /// run's `competitor_set.source`); null for the size as a whole.
    pub competitor_set_source: Option<SetSource>,
    /// Current street rate, currency per month.
    pub street_rate: f64,
    /// Suggested street rate, at or below the competitor P25.
    pub suggested_rate: f64,
    /// Competitor 25th percentile.
    pub competitor_p25: f64,
    /// lease_up_floor_share x street rate.
    pub floor: f64,
    /// True when the floor, not the percentile, set the rate.
    pub floor_applied: bool,
    /// Competitors counted.
    pub competitors: usize,
    /// Of which stale.
    pub stale_competitors: usize,
    /// The pricing engine's recommended street rate for the size in the facility's latest run
    /// (the mean of its tiers'), or for the unit type when the suggestion is one's; null when
    /// no run covers it.
    pub engine_rate: Option<f64>,
    /// Whether the two agree, and why they differ when they do.
    pub engine_note: String,
}

#[derive(Debug, Serialize)]
pub struct FacilityOut {
    /// The facility.
    pub facility_id: Uuid,
    /// The facility's name.
    pub facility_name: String,
    /// `lease_up` or `stabilized`.
    pub mode: String,
    /// Latest occupancy, percent.
    pub occupancy_pct: Option<f64>,
    /// Date of the latest snapshot.
    pub as_of: Option<NaiveDate>,
    /// Mode changes, newest first.
    pub events: Vec<Event>,
    /// Per-size fill suggestions, when in lease-up.
    pub fill_suggestions: Vec<Fill>,
    /// Sizes in lease-up without a suggestion, and why.
    pub sizes_without_suggestion: Vec<SizeReason>,
    /// Why there are no suggestions, when there are none.
    pub reason: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct SizeReason {
    /// Unit size.
    pub size: String,
    /// The unit type's tier when the size's competitor rates name a tier (as in `Fill`); null
    /// for the size as a whole.
    pub tier: Option<String>,
    /// Why it has no suggestion.
    pub reason: String,
}

#[derive(Debug, Serialize)]
pub struct Thresholds {
    /// Occupancy below which a facility enters lease-up, percent.
    pub enter_below_pct: f64,
    /// Occupancy at or above which it leaves, percent.
    pub leave_at_or_above_pct: f64,
}

#[derive(Debug, Serialize)]
pub struct Report {
    /// When a facility enters and leaves lease-up.
    pub thresholds: Thresholds,
    /// Facilities in lease-up now.
    pub facilities_in_lease_up: usize,
    /// Per facility.
    pub facilities: Vec<FacilityOut>,
}

pub async fn report(
    pool: &PgPool,
    company_id: CompanyId,
    facility: Option<FacilityId>,
    allowed: &crate::access::Scope,
) -> Result<Report> {
    let facilities = scope(pool, company_id, facility, allowed).await?;
    let ids = super::ids(&facilities);
    let latest = latest(pool, &ids).await?;
    let mut events = events_by_facility(pool, company_id, &ids).await?;
    let in_lease_up: Vec<Uuid> = facilities
        .iter()
        .filter(|f| f.mode == "lease_up")
        .map(|f| f.id)
        .collect();
    let sync_ids: Vec<Uuid> = in_lease_up
        .iter()
        .filter_map(|id| latest.get(id).map(|l| l.sync_id))
        .collect();
    let read = Read {
        units: unit_types(pool, &sync_ids).await?,
        observations: super::competitors::competitor_observations(pool, &in_lease_up).await?,
        pricing: super::competitors::pricing_settings(pool, &in_lease_up).await?,
        runs: crate::pricing::latest_sizes(pool, &in_lease_up).await?,
    };
    let out: Vec<FacilityOut> = facilities
        .iter()
        .map(|f| {
            let l = latest.get(&f.id);
            let mut o = FacilityOut {
                facility_id: f.id,
                facility_name: f.name.clone(),
                mode: f.mode.clone(),
                occupancy_pct: l.and_then(|l| l.occupancy_pct),
                as_of: l.map(|l| l.snapshot_date),
                events: events.remove(&f.id).unwrap_or_default(),
                fill_suggestions: Vec::new(),
                sizes_without_suggestion: Vec::new(),
                reason: None,
            };
            let Some(l) = l else {
                o.reason = Some(super::no_sync_reason());
                return o;
            };
            if f.mode != "lease_up" {
                o.reason = Some(
                    "not in lease-up: aggressive-fill suggestions apply only in lease-up"
                        .to_owned(),
                );
                return o;
            }
            suggest(&mut o, f.id, l, &read);
            o
        })
        .collect();
    Ok(Report {
        thresholds: Thresholds {
            enter_below_pct: ENTER_BELOW_PCT,
            leave_at_or_above_pct: LEAVE_AT_PCT,
        },
        facilities_in_lease_up: in_lease_up.len(),
        facilities: out,
    })
}

/// The latest engine run of a facility: its snapshot date, mode and per-size rates.
type EngineRun = (NaiveDate, String, Vec<SizeRecommendation>);

/// What the report reads of the facilities in lease-up, each keyed as its read returns it.
struct Read {
    units: BTreeMap<Uuid, Vec<UnitRow>>,
    observations: BTreeMap<(Uuid, String), Vec<CompetitorObservation>>,
    pricing: BTreeMap<Uuid, PricingSettings>,
    runs: HashMap<Uuid, EngineRun>,
}

/// The mode changes of each facility, oldest first.
async fn events_by_facility(
    pool: &PgPool,
    company_id: CompanyId,
    ids: &[Uuid],
) -> Result<BTreeMap<Uuid, Vec<Event>>> {
    let mut events: BTreeMap<Uuid, Vec<Event>> = BTreeMap::new();
    for e in sqlx::query!(
        "SELECT facility_id, snapshot_date, from_mode, to_mode, occupancy_pct, recorded_at
         FROM lease_up_events WHERE company_id = $1 AND facility_id = ANY($2)
         ORDER BY facility_id, snapshot_date",
        company_id.uuid(),
        ids
    )
    .fetch_all(pool)
    .await?
    {
        events.entry(e.facility_id).or_default().push(Event {
            date: e.snapshot_date,
            from: e.from_mode,
            to: e.to_mode,
            occupancy_pct: e.occupancy_pct,
            recorded_at: e.recorded_at,
        });
    }
    Ok(events)
}

/// Fills in the per-size (or per unit type) suggestions of `o`, facility `id` in lease-up,
/// from its latest snapshot `l`, and the sizes without one.
fn suggest(o: &mut FacilityOut, id: Uuid, l: &Latest, read: &Read) {
    let s = read.pricing.get(&id).copied().unwrap_or_default();
    let units = read.units.get(&l.sync_id).map_or(&[][..], Vec::as_slice);
    if units.is_empty() {
        o.reason = Some(format!(
            "the latest snapshot ({}) has no unit types",
            l.snapshot_date
        ));
    }
    let obs = |size: &str| {
        read.observations
            .get(&(id, size.to_owned()))
            .map(Vec::as_slice)
    };
    for b in banded(units, obs, l.snapshot_date, &s) {
        let Banded {
            size,
            tier,
            street_rate: rate,
            band,
            set,
        } = b;
        match band {
            Some(b) => {
                let fill = lease_up_fill(rate, &b, s.lease_up_discount_pct, s.lease_up_floor_share);
                let (engine_rate, engine_note) = engine_beside(
                    read.runs.get(&id),
                    &size,
                    tier.as_deref(),
                    fill.rate,
                    s.max_step_pct,
                );
                o.fill_suggestions.push(Fill {
                    engine_rate,
                    engine_note,
                    size,
                    tier,
                    competitor_set_source: set,
                    street_rate: rate,
                    suggested_rate: fill.rate,
                    competitor_p25: domain::values::round2(fill.p25),
                    floor: domain::values::round2(fill.floor),
                    floor_applied: fill.floor_applied,
                    competitors: b.competitors,
                    stale_competitors: b.stale,
                });
            }
            None => o.sizes_without_suggestion.push(SizeReason {
                size,
                tier,
                reason: format!(
                    "no competitor rate for this size in the last {} days",
                    s.competitor_max_age_days
                ),
            }),
        }
    }
}

/// The engine's rate for `size` (of `tier` when the suggestion is a unit type's) in the latest
/// run, and a sentence on how it stands against the fill suggestion: the suggestion goes
/// straight to the competitor P25 (or the floor), the engine moves part of the way from the
/// current rate each run, within `max_step_pct`, and weighs occupancy, its trend, the price
/// response and the season too.
fn engine_beside(
    run: Option<&EngineRun>,
    size: &str,
    tier: Option<&str>,
    suggested: f64,
    max_step_pct: f64,
) -> (Option<f64>, String) {
    let Some((date, mode, sizes)) = run else {
        return (
            None,
            "no engine run yet: the engine's rate appears after its first run".to_owned(),
        );
    };
    let of_size: Vec<_> = sizes
        .iter()
        .filter(|r| r.size == size && tier.is_none_or(|t| tier_key(&r.tier) == tier_key(t)))
        .collect();
    if of_size.is_empty() {
        let what = if tier.is_some() { "unit type" } else { "size" };
        return (
            None,
            format!("the engine's run of {date} has no rate for this {what}"),
        );
    }
    let engine = domain::values::round2(
        of_size.iter().map(|r| r.recommended_rate).sum::<f64>() / of_size.len() as f64,
    );
    let main = of_size
        .iter()
        .find_map(|r| r.main_factor.clone())
        .map(|f| format!("; its biggest factor: {f}"))
        .unwrap_or_default();
    let note = if (engine - suggested).abs() < 1.0 {
        format!("the engine's run of {date} agrees")
    } else if mode != "lease_up" {
        format!(
            "the engine's run of {date} priced the facility as stabilized, not in lease-up{main}"
        )
    } else if engine > suggested {
        format!(
            "the engine's run of {date} holds more: it moves part of the way toward its target each run, \
             at most {max_step_pct}% a step, and weighs occupancy and its trend besides the P25{main}"
        )
    } else {
        format!(
            "the engine's run of {date} goes lower: occupancy, its trend or the price response \
             took its target below the P25{main}"
        )
    };
    (Some(engine), note)
}
