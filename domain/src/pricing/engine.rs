//! The street-rate engine: one recommendation per unit type of a facility, each with the factors
//! that moved it, the guardrails that clipped it, a confidence and the competitor band used.
//! The formulas are written out in `docs/pricing.md`.
//!
//! Per unit type: the target (`pricing::target`), the run's move toward it split into factors
//! (`factors`, with the rules that read the current rate in `rules`), then the guardrails in
//! order (`guardrails`).

use super::band::{CompetitorBand, CompetitorObservation};
use super::settings::PricingSettings;
use super::target;
use super::tiers;
use crate::values::round2;
use chrono::{Datelike, NaiveDate};

/// Bumped whenever the maths changes, and stored with every run.
pub const ENGINE_VERSION: &str = "2026.11.11";

pub use crate::lease_up::Mode;

mod factors;
mod guardrails;
mod rules;
mod types;
pub use types::{
    Action, DayReading, EarlierReading, FacilityInput, Factor, Guardrail, PromotionInput,
    Recommendation, UnitTypeInput,
};

/// Canonical form of a size for matching: lower case, no spaces, `X` as `x`.
pub fn size_key(size: &str) -> String {
    size.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Runs the engine: one recommendation per unit type, in input order. Never panics.
pub fn recommend(input: &FacilityInput, s: &PricingSettings) -> Vec<Recommendation> {
    let band_settings = s.band();
    // Observations by size; each unit type is banded on its tier's set or its size's
    // (`tiers::band_for`).
    let mut by_size: std::collections::HashMap<String, Vec<CompetitorObservation>> =
        std::collections::HashMap::new();
    for (size, o) in &input.competitors {
        by_size.entry(size_key(size)).or_default().push(o.clone());
    }
    let premium = tiers::premium(&input.unit_types, s);
    let mut recs: Vec<Recommendation> = input
        .unit_types
        .iter()
        .map(|ut| {
            let obs = by_size
                .get(&size_key(&ut.size))
                .map_or(&[][..], Vec::as_slice);
            let (band, set) = tiers::band_for(
                (&ut.size, &ut.tier),
                obs,
                input.as_of,
                &band_settings,
                s,
                premium,
            );
            let mut rec = recommend_one(input, ut, band, s);
            if let (Some(set), Some(anchor)) = (&set, rec.factors.first_mut()) {
                if !set.detail.is_empty() {
                    anchor.detail = format!("{}; {}", anchor.detail, set.detail);
                }
            }
            rec.competitor_set = set;
            rec
        })
        .collect();
    tiers::hold_tier_order(&mut recs, set_rate);
    recs
}

/// What every step of one unit type's recommendation reads.
struct Inputs<'a> {
    input: &'a FacilityInput,
    ut: &'a UnitTypeInput,
    s: &'a PricingSettings,
    band: Option<&'a CompetitorBand>,
    occupancy: Option<f64>,
    /// The street rate in force (finite and positive).
    current: f64,
}

/// One unit type's recommendation: its target, the run's move toward it, then the guardrails.
fn recommend_one(
    input: &FacilityInput,
    ut: &UnitTypeInput,
    band: Option<CompetitorBand>,
    s: &PricingSettings,
) -> Recommendation {
    let current = ut.street_rate;
    let occupancy = ut
        .occupancy_pct
        .or(input.occupancy_pct)
        .filter(|o| o.is_finite());
    let confidence = confidence(input, ut, band.as_ref());
    let mut rec = Recommendation {
        size: ut.size.clone(),
        tier: ut.tier.clone(),
        mode: input.mode,
        current_rate: current,
        recommended_rate: current,
        change_amount: 0.0,
        change_pct: 0.0,
        action: Action::Hold,
        confidence,
        occupancy_pct: occupancy,
        factors: Vec::new(),
        guardrails: Vec::new(),
        // Shown to cents; the engine worked with the band unrounded.
        competitor_band: band.as_ref().map(CompetitorBand::rounded),
        competitor_set: None,
        tier_inversion: None,
    };
    if !(current.is_finite() && current > 0.0) {
        rec.guardrails.push(Guardrail {
            name: "no_current_rate".into(),
            before: current,
            after: current,
            detail: "the unit type has no positive street rate to move from".into(),
        });
        rec.confidence = 0.0;
        return rec;
    }
    let u = Inputs {
        input,
        ut,
        s,
        band: band.as_ref(),
        occupancy,
        current,
    };
    let t = target::target(input, ut, occupancy, band.as_ref(), s);
    let (kind, trend) = (t.kind, t.trend);
    let m = factors::toward_target(&u, t);
    let rate = guardrails::clip(&u, &m, kind, trend, &mut rec.guardrails);
    rec.factors = m.factors;
    finish(rec, rate)
}

fn finish(mut rec: Recommendation, rate: f64) -> Recommendation {
    set_rate(&mut rec, rate);
    rec
}

/// Sets the recommended rate (already rounded within the guardrails by the caller), with its
/// change and action.
fn set_rate(rec: &mut Recommendation, rate: f64) {
    let current = rec.current_rate;
    rec.recommended_rate = rate;
    rec.change_amount = round2(rec.recommended_rate - current);
    rec.change_pct = round2((rec.recommended_rate / current - 1.0) * 100.0);
    rec.action = if rec.recommended_rate > current {
        Action::Raise
    } else if rec.recommended_rate < current {
        Action::Lower
    } else {
        Action::Hold
    };
}

/// 0..=1 from data depth: competitor band strength (40 %), days of history against 90 (30 %),
/// units in the type against 50 (30 %; half credit when unit counts are not sent), on a base of 0.2.
fn confidence(input: &FacilityInput, ut: &UnitTypeInput, band: Option<&CompetitorBand>) -> f64 {
    let comp = band.map_or(0.0, CompetitorBand::strength);
    let hist = (f64::from(input.history_days) / 90.0).clamp(0.0, 1.0);
    let units = ut
        .total_units
        .map_or(0.5, |n| (f64::from(n) / 50.0).clamp(0.0, 1.0));
    round2(0.2 + 0.8 * (0.4 * comp + 0.3 * hist + 0.3 * units))
}

pub fn days_in_month(d: NaiveDate) -> u32 {
    let (y, m) = (d.year(), d.month());
    let next = if m == 12 {
        NaiveDate::from_ymd_opt(y + 1, 1, 1)
    } else {
        NaiveDate::from_ymd_opt(y, m + 1, 1)
    };
    next.and_then(|n| n.pred_opt()).map_or(30, |l| l.day())
}

pub(crate) fn month_name(m: u32) -> &'static str {
    const NAMES: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    NAMES[(m.clamp(1, 12) - 1) as usize]
}

#[cfg(test)]
mod tests;
