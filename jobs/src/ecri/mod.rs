//! Rent increases for existing tenants, by the engine of `domain::ecri`: per tenant of the
//! facility's rent roll (per cohort of its latest snapshot when it has no roll), with the stay
//! model learned from the outcomes of the facility's own past increases, pooled over the
//! company. `GET /api/v1/facilities/:id/ecri` answers [`facility`]; the per-size cohorts of
//! `GET /api/v1/analytics/ecri` come from the same suggestions ([`cohorts`]).
//!
//! What the engine is given, all from stored data:
//! - per size, and per size and tier, from the latest snapshot: the street rate (blended over
//!   the tiers for the size), units and occupancy; the competitor band as the pricing engine
//!   sees it; the move-ins and move-outs per month of the last 90 days of the roll's events
//!   (from the month's move-ins to date when there is no roll);
//! - per tenant of a roll, one history of its increases (the CRM's date, the roll's upward
//!   rent changes, the approved batches' increases in force, the one not yet in force) and
//!   its rents of 12 months before and of the cap's base date (`inputs`);
//! - outcomes, from the roll's events and the approved batches' notices: each increase whose
//!   90 days (from its notice where known) have passed, and whether the tenant moved out within
//!   them (during the notice too); implausible records left out and counted; and per facility
//!   the tenants in place 90 days ago neither increased nor notified since, and how many of
//!   them moved out, by tenure. The facility's own outcomes are shrunk toward the company's,
//!   and those toward the prior (`outcomes`, `domain::ecri::evidence`).
//!
//! This module holds the use cases and puts a facility's answer together; `inputs` reads what
//! the engine is given, `outcomes` the evidence its stay model learns from, and `cohort_lines`
//! groups the suggestions for the analytics report.

mod cohort_lines;
pub mod fit;
mod inputs;
mod outcomes;
pub mod runs;
pub mod sizes;

pub use cohort_lines::{cohorts, CohortLine};

use crate::analytics::reports::{self, UnitRow};
use crate::error::{Error, Result};
use chrono::NaiveDate;
use domain::ecri::evidence::LeftOut;
use domain::ecri::{
    decide_facility, learn, stop_loss, EcriEngineSettings, Outcome, SizeMarket, StayModel,
    Suggestion, TenantInput,
};
use domain::ids::{CompanyId, FacilityId};
use domain::pricing::band::{competitor_band, CompetitorObservation};
use domain::pricing::settings::PricingSettings;
use domain::pricing::tiers::tier_key;
use domain::values::round2;
use inputs::{cohort_inputs, markets, roll_inputs, roll_pace};
use outcomes::FacilityEvidence;
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use std::collections::BTreeMap;
use uuid::Uuid;

/// Days after a notice over which a move-out counts as caused by it.
pub const OUTCOME_DAYS: i64 = 90;

/// Where the facility's suggestions come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// One suggestion per tenant of the rent roll in force.
    RentRoll,
    /// One per cohort of the latest snapshot's `tenant_rents`.
    Cohorts,
}

/// One suggestion with what it is about.
#[derive(Clone, Debug, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ModelSummary {
    pub model: StayModel,
    /// Outcomes of the facility's own increases the model learned from (tenants).
    pub increased_tenants: u32,
    /// Tenants not increased, observed over 90 days.
    pub baseline_tenants: u32,
    /// Outcomes of the company's other facilities (tenants increased).
    pub company_increased_tenants: u32,
    /// Of the facility's increased tenants, those whose 90 days ran from their notice (an
    /// approved batch) rather than from the day the new rent took effect.
    pub from_notices: u32,
    /// Of the facility's increased tenants, those whose window is still open (counted for the
    /// share of it seen).
    #[serde(default)]
    pub open_windows: u32,
    /// The facility's records of increases left out of the learning, by reason.
    pub left_out: LeftOut,
}

/// The stop-loss in force: increases are held.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct StopLoss {
    pub increased_move_out_pct: f64,
    pub baseline_move_out_pct: f64,
    pub increased_tenants: u32,
}

/// A facility's suggestions: what an ECRI run computes and stores (`runs`), and what an
/// approval, an edit or a letter weighs afresh.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FacilityEcri {
    pub facility_id: Uuid,
    pub facility_name: String,
    /// Date of the roll (or snapshot) the suggestions are for.
    pub as_of: Option<NaiveDate>,
    /// The latest snapshot's date when the suggestions were made.
    #[serde(default)]
    pub snapshot_date: Option<NaiveDate>,
    /// The company fit the stay model read (`fit`).
    #[serde(default)]
    pub fit_id: Option<Uuid>,
    #[serde(default)]
    pub fitted_at: Option<chrono::DateTime<chrono::Utc>>,
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

impl FacilityEcri {
    /// A facility's answer before its first stored run: no lines, and `reason` says why.
    pub fn without_run(facility_id: Uuid, facility_name: String, reason: String) -> Self {
        let settings = EcriEngineSettings::default();
        Self {
            facility_id,
            facility_name,
            as_of: None,
            snapshot_date: None,
            fit_id: None,
            fitted_at: None,
            basis: None,
            model: ModelSummary {
                model: learn(&settings.stay_prior, &[], &[]),
                increased_tenants: 0,
                baseline_tenants: 0,
                company_increased_tenants: 0,
                from_notices: 0,
                open_windows: 0,
                left_out: LeftOut::default(),
            },
            settings,
            stop_loss: None,
            lines: Vec::new(),
            markets: BTreeMap::new(),
            reason: Some(reason),
        }
    }
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

/// The facility's suggestions as of now, with its own settings: its own evidence read fresh,
/// the company's from the latest fit (`fit`). What an ECRI run stores, and what an approval,
/// an edit or a letter weighs again.
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
    let fit = fit::latest_or_fit(pool, company_id, facility_id).await?;
    let scope = [(f.id, f.name)];
    let (latest, units) = reports::latest_with_units(pool, &[f.id]).await?;
    let g = gather(pool, company_id, &scope).await?;
    let settings = g.settings.get(&f.id).cloned().unwrap_or_default();
    let (mut out, recent) = learned(f.id, &scope[0].1, &settings, &g.own, fit.company);
    out.fit_id = Some(fit.id);
    out.fitted_at = Some(fit.fitted_at);
    match latest.get(&f.id) {
        Some(l) => {
            out.snapshot_date = Some(l.snapshot_date);
            // A facility without a roll is suggested from its snapshot's cohorts.
            let cohorts = if g.roll_dates.contains_key(&f.id) {
                Vec::new()
            } else {
                reports::tenant_rents_of(pool, l.sync_id).await?
            };
            suggest(&mut out, l, &cohorts, &g, &units, &recent);
        }
        None => out.reason = Some(reports::no_sync_reason()),
    }
    Ok(out)
}

/// What [`facility`] reads.
struct Gathered {
    /// The date of each facility's rent roll in force, for those that have one.
    roll_dates: BTreeMap<Uuid, NaiveDate>,
    /// Each facility's ECRI settings in force.
    settings: BTreeMap<Uuid, EcriEngineSettings>,
    /// Each facility's own evidence (all its outcomes, the recent ones).
    own: BTreeMap<Uuid, FacilityEvidence>,
    /// The tenants of each roll in force, with the months since their rent was set.
    rolls: BTreeMap<Uuid, Vec<(TenantInput, Option<f64>)>>,
    /// Move-ins and move-outs per month per size and tier before each roll's date.
    pace: BTreeMap<Uuid, inputs::Pace>,
    /// Competitor rates per facility and size.
    observations: BTreeMap<(Uuid, String), Vec<CompetitorObservation>>,
    /// Each facility's pricing settings (for the competitor band).
    pricing: BTreeMap<Uuid, PricingSettings>,
}

async fn gather(
    pool: &PgPool,
    company_id: CompanyId,
    scope: &[(Uuid, String)],
) -> Result<Gathered> {
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
    let settings: BTreeMap<Uuid, EcriEngineSettings> = rows
        .iter()
        .map(|r| (r.id, in_force(&r.ecri_settings)))
        .collect();
    let own = outcomes::evidence(pool, company_id, Some(&ids)).await?;
    let with_base: BTreeMap<Uuid, (NaiveDate, Option<NaiveDate>)> = roll_dates
        .iter()
        .map(|(id, d)| (*id, (*d, settings.get(id).and_then(|s| s.cap_base_date))))
        .collect();
    let rolls = roll_inputs(pool, &with_base).await?;
    let pace = roll_pace(pool, &roll_dates).await?;
    let observations = reports::competitors::competitor_observations(pool, &ids).await?;
    let pricing = reports::competitors::pricing_settings(pool, &ids).await?;
    Ok(Gathered {
        roll_dates,
        settings,
        own,
        rolls,
        pace,
        observations,
        pricing,
    })
}

/// The facility's answer before its suggestions: its settings, the stay model learned from
/// its own outcomes and the company's others, and the stop-loss in force; with the recent
/// outcomes the stop-loss and the engine weigh.
fn learned(
    id: Uuid,
    name: &str,
    settings: &EcriEngineSettings,
    own: &BTreeMap<Uuid, FacilityEvidence>,
    company: Vec<Outcome>,
) -> (FacilityEcri, Vec<Outcome>) {
    let none = FacilityEvidence::default();
    let mine = own.get(&id).unwrap_or(&none);
    // The stop-loss looks at the increases of the last quarter whose 90 days have passed
    // (and the baseline of the same window), not at the facility's whole history.
    let recent = mine.recent.clone();
    let model = learn(&settings.stay_prior, &company, &mine.outcomes);
    let tenants = |o: &[Outcome], increased: bool| {
        o.iter()
            .filter(|o| o.increased() == increased)
            .map(|o| o.tenants)
            .fold(0u32, u32::saturating_add)
    };
    let f = FacilityEcri {
        facility_id: id,
        facility_name: name.to_owned(),
        as_of: None,
        snapshot_date: None,
        fit_id: None,
        fitted_at: None,
        basis: None,
        settings: settings.clone(),
        model: ModelSummary {
            model,
            increased_tenants: tenants(&mine.outcomes, true),
            baseline_tenants: tenants(&mine.outcomes, false),
            company_increased_tenants: tenants(&company, true),
            from_notices: mine.from_notices,
            open_windows: mine.open,
            left_out: mine.left_out,
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
    (f, recent)
}

/// The facility's suggestions from its latest snapshot `l` (from its roll when it has one, else
/// from the snapshot's tenant-rent `cohorts`), or the reason there are none.
fn suggest(
    f: &mut FacilityEcri,
    l: &reports::Latest,
    cohorts: &[reports::StoredTenantRent],
    g: &Gathered,
    units: &BTreeMap<Uuid, Vec<UnitRow>>,
    recent: &[Outcome],
) {
    let id = &f.facility_id;
    let (roll, basis, as_of) = match g.roll_dates.get(id) {
        Some(date) => (
            g.rolls.get(id).cloned().unwrap_or_default(),
            Basis::RentRoll,
            *date,
        ),
        None => (cohort_inputs(cohorts), Basis::Cohorts, l.snapshot_date),
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
        return;
    }
    let markets = facility_markets(f.facility_id, l, basis, g, units);
    let inputs: Vec<TenantInput> = roll.iter().map(|(t, _)| t.clone()).collect();
    let suggestions = decide_facility(&inputs, &markets, &f.model.model, recent, &f.settings);
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
}

/// The market of each size of the facility's latest snapshot `l` and of each of its tiers,
/// with its competitor band and (from a roll) its pace. Each unit type is banded as the
/// pricing engine bands it (`reports::competitors::banded`: where the size's rates name a
/// tier, its tier's own set or the size's converted by the tier premium); a tenant with no
/// tier, or one the snapshot does not list, against its size's whole set.
fn facility_markets(
    id: Uuid,
    l: &reports::Latest,
    basis: Basis,
    g: &Gathered,
    units: &BTreeMap<Uuid, Vec<UnitRow>>,
) -> BTreeMap<String, SizeMarket> {
    let pricing = g.pricing.get(&id).copied().unwrap_or_default();
    let unit_rows = units.get(&l.sync_id).map_or(&[][..], Vec::as_slice);
    let obs = |size: &str| {
        g.observations
            .get(&(id, size.to_owned()))
            .map(Vec::as_slice)
    };
    let mut bands = inputs::Bands::new();
    for b in reports::competitors::banded(unit_rows, obs, l.snapshot_date, &pricing) {
        if let Some(band) = b.band {
            let tier = b.tier.as_deref().map(tier_key).unwrap_or_default();
            bands.insert((b.size, tier), band);
        }
    }
    // Where the size's tiers were banded apart, a tenant without a tier reads the whole set.
    for u in unit_rows {
        let whole = (u.size.clone(), String::new());
        if bands.contains_key(&whole) {
            continue;
        }
        if let Some(band) =
            obs(&u.size).and_then(|o| competitor_band(o, l.snapshot_date, &pricing.band()))
        {
            bands.insert(whole, band);
        }
    }
    let no_pace = inputs::Pace::new();
    let size_pace = match basis {
        Basis::RentRoll => g.pace.get(&id).unwrap_or(&no_pace),
        Basis::Cohorts => &no_pace,
    };
    markets(
        unit_rows,
        &bands,
        size_pace,
        basis == Basis::RentRoll,
        l.snapshot_date,
        l.move_ins_mtd,
    )
}
