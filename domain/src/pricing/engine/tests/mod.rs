//! Hand-worked cases for each factor and guardrail, and properties that hold for any input.
//! Unless a case says otherwise: default settings, 15 November (day 15 of 30), seasonality
//! index 1.0, one 10x10 unit type at 100 with 50 units and 90 % occupancy (inside the 88-93 %
//! band), 90 days of history, a reading 28 days back at the same rate (without occupancy, so no
//! trend), no competitors, no promotions.
//!
//! The engine computes a target: an anchor (the competitor median; without competitors the
//! rate of 28 days ago, here 100) times 1 + the offsets / 100; a run moves
//! half the way (`target_approach_share` 0.5) when the target is at least 5 % away
//! (`target_tolerance_pct`, 3 % before engine 2026.11.4). Each factor's contribution is its share of that move in points
//! of the current rate: half its offset x anchor / rate, and for the anchor half the gap
//! between the anchor and the rate.

use super::*;
use crate::pricing::band::CompetitorObservation;
use crate::pricing::seasonality::SeasonalIndex;
use proptest::prelude::*;
use serde_json::json;

fn d(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

fn base() -> FacilityInput {
    FacilityInput {
        as_of: d("2026-11-15"),
        mode: Mode::Stabilized,
        occupancy_pct: None,
        move_ins_mtd: None,
        move_ins_target_monthly: None,
        seasonality: SeasonalIndex {
            index: 1.0,
            own_data: true,
        },
        history_days: 90,
        unit_types: vec![UnitTypeInput {
            size: "10x10".into(),
            tier: "standard".into(),
            street_rate: 100.0,
            occupancy_pct: Some(90.0),
            total_units: Some(50),
            last_rate_change: None,
            last_change_raised: None,
            history: Vec::new(),
            earlier: Some(EarlierReading {
                days_ago: 28,
                occupancy_pct: None,
                street_rate: 100.0,
            }),
        }],
        promotions: vec![],
        competitors: vec![],
    }
}

fn with_occ(mut i: FacilityInput, occ: f64) -> FacilityInput {
    i.unit_types[0].occupancy_pct = Some(occ);
    i
}

fn with_rate(mut i: FacilityInput, rate: f64) -> FacilityInput {
    i.unit_types[0].street_rate = rate;
    i
}

fn comps(mut i: FacilityInput, rates: &[f64]) -> FacilityInput {
    i.competitors = rates
        .iter()
        .enumerate()
        .map(|(n, r)| {
            (
                "10x10".to_string(),
                CompetitorObservation {
                    competitor: format!("C{n}"),
                    rate: *r,
                    promo: None,
                    observed_on: d("2026-11-14"),
                    tier: None,
                },
            )
        })
        .collect();
    i
}

/// Five fresh competitors at 100: P25, median and P75 100, full strength.
fn at_100(i: FacilityInput) -> FacilityInput {
    comps(i, &[100.0; 5])
}

/// The hand-worked cases were worked at the price response's weight and cap of engine
/// 2026.11.6 (0.75 and 10 points), which they keep; the daily history's response
/// (`tests/history.rs`) runs at the defaults.
fn one(i: &FacilityInput) -> Recommendation {
    one_with(i, &hand_worked())
}

fn hand_worked() -> PricingSettings {
    PricingSettings {
        response_weight: 0.75,
        response_max_pp: 10.0,
        ..PricingSettings::default()
    }
}

fn one_with(i: &FacilityInput, s: &PricingSettings) -> Recommendation {
    let mut out = recommend(i, s);
    assert_eq!(out.len(), 1);
    out.remove(0)
}

fn factor(r: &Recommendation, name: &str) -> f64 {
    r.factors
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no factor {name} in {r:#?}"))
        .contribution_pct
}

fn guardrails(r: &Recommendation) -> Vec<&str> {
    r.guardrails.iter().map(|g| g.name.as_str()).collect()
}

fn settings(v: serde_json::Value) -> PricingSettings {
    PricingSettings::with_overrides(&v).unwrap()
}

mod factors;
mod guardrails;
mod history;
mod properties;
mod response;
mod rules;
