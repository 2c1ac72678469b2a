//! Every threshold of the engine, with its default. A facility stores only the settings it
//! overrides (`facilities.pricing_settings`, a JSON object); the rest come from here.

use super::band::BandSettings;
use crate::validation::ValidationError;
use serde::{Deserialize, Serialize};

mod ranges;
pub use ranges::{Range, RANGES};

/// The engine's settings. Percentages are in percent (8.0 means 8 %); "pp" is percentage points
/// of the street rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PricingSettings {
    /// Occupancy target band, low end (%). Below it the occupancy factor eases the rate down.
    pub occupancy_target_low_pct: f64,
    /// Occupancy target band, high end (%). Above it the occupancy factor pushes the rate up.
    pub occupancy_target_high_pct: f64,
    /// pp of rate change per point of occupancy outside the band.
    pub occupancy_pp_per_point: f64,
    /// Largest contribution of the occupancy factor, either way (pp).
    pub occupancy_max_pp: f64,
    /// pp of rate change per 100 % of move-in pace ahead of (or behind) the prorated target.
    pub pace_pp_per_unit: f64,
    /// Largest contribution of the pace factor, either way (pp).
    pub pace_max_pp: f64,
    /// Kept so stored overrides stay valid; the target-rate engine starts from the competitor
    /// median instead of pulling toward it (no effect since engine 2026.11.2).
    pub competitor_pull: f64,
    /// Kept so stored overrides stay valid (no effect since engine 2026.11.2).
    pub competitor_max_pp: f64,
    /// Share of the gap between the rate and its target closed in one run (0..=1).
    pub target_approach_share: f64,
    /// The rate holds while it is within this much (%) of its target.
    pub target_tolerance_pct: f64,
    /// The tolerance (%) for a move against the direction of the last change.
    pub reversal_tolerance_pct: f64,
    /// Days a change counts as the last change for `reversal_tolerance_pct`.
    pub reversal_window_days: i64,
    /// Days back to the reading the occupancy trend is measured from.
    pub occupancy_trend_days: i64,
    /// pp of the target per point of occupancy gained (or lost) per week.
    pub trend_pp_per_weekly_point: f64,
    /// Largest contribution of the occupancy trend, either way (pp).
    pub trend_max_pp: f64,
    /// A size at or above the top of the band is cut only when its rate is more than this (%)
    /// above the competitor P75.
    pub full_cut_above_p75_pct: f64,
    /// pp per unit of seasonality index away from 1.0 (index 1.15 with 20 gives +3 pp).
    pub seasonality_pp_per_index: f64,
    /// Share of an active promotion's spread-out value that offsets downward pressure (0..=1).
    pub promotion_offset_share: f64,
    /// Guardrail: largest change per run, either way (%).
    pub max_step_pct: f64,
    /// Guardrail: never recommended below this share of the competitor P25 (by a lowering).
    pub floor_share_of_p25: f64,
    /// Guardrail: never recommended above this share of the competitor P75 (by a raise).
    pub ceiling_share_of_p75: f64,
    /// Guardrail: days after the unit type's last rate change during which the rate holds.
    pub cooldown_days: i64,
    /// Changes smaller than this (%) are not worth making: the action is hold.
    pub min_change_pct: f64,
    /// Round recommendations to whole currency units (within the guardrails).
    pub round_to_whole: bool,
    /// Lease-up: suggested at this much (%) below the competitor P25.
    pub lease_up_discount_pct: f64,
    /// Lease-up: never below this share of the current street rate.
    pub lease_up_floor_share: f64,
    /// Lease-up: occupancy gained per week (points) at which the target reaches the competitor
    /// median (less gain climbs part of the way from the P25; 0 keeps it at the P25).
    pub lease_up_climb_pp_per_week: f64,
    /// Outside lease-up, a size below the band's low end is not raised unless it gains at least
    /// this many points of occupancy a week (0 turns the `fill_first` guardrail off).
    pub fill_first_pp_per_week: f64,
    /// Share (0..=1) of the learned price response's position that moves the target (0 turns
    /// the `price_response` factor off).
    pub response_weight: f64,
    /// Move-in elasticity the price response assumes at the competitor median: move-ins fall
    /// this many percent per percent of rate above the median.
    pub price_elasticity: f64,
    /// Occupancy (%) the learned price response aims to hold a size at.
    pub response_fill_pct: f64,
    /// Largest contribution of the price response, either way (pp).
    pub response_max_pp: f64,
    /// A size at or above the top of its band at both ends of the trend window whose vacant
    /// units re-let within this many days on average (vacant units x the expected stay /
    /// occupied units, over the two readings) is probed upward (0 turns probing off).
    pub probe_relet_days: f64,
    /// The raise of one probe (%), at most up to halfway to where `full_no_cut` stops
    /// protecting a full size (half of `full_cut_above_p75_pct` above the P75) and the ceiling.
    pub probe_step_pct: f64,
    /// A probe needs the size's last change at least this many days old (and, when that change
    /// was a cut, older than `reversal_window_days`).
    pub probe_interval_days: i64,
    /// A probe (a raise above the target of a size at or above the top of its band) is undone
    /// when, within the trend window, the size has fallen below the top and lost at least this
    /// many points (0 turns the retreat off).
    pub probe_retreat_pp: f64,
    /// Points under the band's low end at which a size that is not gaining occupancy is
    /// clearly weak: from half of them to all of them the share of the gap a run closes rises
    /// from `target_approach_share` to all of it (0 turns the fast close off).
    pub weak_gap_pp: f64,
    /// Days of the size's own daily history the price response learns its demand from (0
    /// learns from the trend window's two readings alone, as engine 2026.11.6 did).
    pub response_history_days: i64,
    /// A day of that history weighs half as much as one this many days more recent.
    pub response_half_life_days: i64,
    /// Move-ins the history would have brought at a demand that keeps every unit let at the
    /// median (weighed like its days) at which the learned demand counts half; more history
    /// counts more (0 trusts any history fully).
    pub response_evidence_move_ins: f64,
    /// Competitor band settings.
    pub expected_stay_months: f64,
    /// Competitor observations older than this (days) are stale.
    pub competitor_stale_after_days: i64,
    /// Weight of a stale observation (a fresh one weighs 1).
    pub competitor_stale_weight: f64,
    /// Competitor observations older than this (days) are ignored.
    pub competitor_max_age_days: i64,
    /// A tier of a size is banded against its own competitors (rates that name that tier) when
    /// at least this many competitors priced it; otherwise against the size's whole set,
    /// adjusted by the tier premium.
    pub tier_min_competitors: i64,
    /// Premium (%) of a climate-controlled tier over a plain tier of the same size, used when
    /// the facility's own street rates show none (no size with both, or climate priced under
    /// plain).
    pub tier_premium_pct: f64,
    /// Not the engine's: a recommended change within this much (%) of the rate in force is
    /// accepted automatically when a run is stored (0, the default, turns it off).
    pub auto_accept_within_pct: f64,
}

impl Default for PricingSettings {
    fn default() -> Self {
        let band = BandSettings::default();
        Self {
            occupancy_target_low_pct: 88.0,
            occupancy_target_high_pct: 93.0,
            occupancy_pp_per_point: 1.0,
            occupancy_max_pp: 15.0,
            pace_pp_per_unit: 4.0,
            pace_max_pp: 3.0,
            competitor_pull: 0.5,
            competitor_max_pp: 6.0,
            target_approach_share: 0.5,
            target_tolerance_pct: 5.0,
            reversal_tolerance_pct: 20.0,
            reversal_window_days: 90,
            occupancy_trend_days: 28,
            trend_pp_per_weekly_point: 0.25,
            trend_max_pp: 4.0,
            full_cut_above_p75_pct: 10.0,
            seasonality_pp_per_index: 20.0,
            promotion_offset_share: 0.5,
            max_step_pct: 8.0,
            floor_share_of_p25: 0.85,
            ceiling_share_of_p75: 1.15,
            cooldown_days: 7,
            min_change_pct: 0.5,
            round_to_whole: true,
            lease_up_discount_pct: 3.0,
            lease_up_floor_share: 0.70,
            lease_up_climb_pp_per_week: 2.0,
            fill_first_pp_per_week: 3.0,
            response_weight: 1.0,
            price_elasticity: 3.0,
            response_fill_pct: 95.0,
            response_max_pp: 15.0,
            probe_relet_days: 4.0,
            probe_step_pct: 2.0,
            probe_interval_days: 56,
            probe_retreat_pp: 10.0,
            weak_gap_pp: 30.0,
            response_history_days: 365,
            response_half_life_days: 120,
            response_evidence_move_ins: 16.0,
            expected_stay_months: band.expected_stay_months,
            competitor_stale_after_days: band.stale_after_days,
            competitor_stale_weight: band.stale_weight,
            competitor_max_age_days: band.max_age_days,
            tier_min_competitors: 3,
            tier_premium_pct: 20.0,
            auto_accept_within_pct: 0.0,
        }
    }
}

impl PricingSettings {
    /// The previous engine's defaults (2026.11.6): the price response learned from the trend
    /// window alone, at its weight and cap of then, for the backtest's side-by-side figures.
    pub fn previous_engine() -> Self {
        Self {
            response_history_days: 0,
            response_weight: 0.75,
            response_max_pp: 10.0,
            ..Self::default()
        }
    }

    pub fn band(&self) -> BandSettings {
        BandSettings {
            expected_stay_months: self.expected_stay_months,
            stale_after_days: self.competitor_stale_after_days,
            stale_weight: self.competitor_stale_weight,
            max_age_days: self.competitor_max_age_days,
        }
    }

    /// The defaults with a facility's overrides (a JSON object of some of the fields) applied,
    /// checked. Unknown names and bad values are validation errors naming the field.
    pub fn with_overrides(overrides: &serde_json::Value) -> Result<Self, ValidationError> {
        let mut merged = serde_json::to_value(Self::default()).expect("settings serialize");
        let Some(obj) = overrides.as_object() else {
            return Err(ValidationError::new("settings", "must be a JSON object"));
        };
        let target = merged.as_object_mut().expect("settings are an object");
        for (k, v) in obj {
            if !target.contains_key(k) {
                return Err(ValidationError::new(
                    format!("settings.{k}"),
                    "is not a pricing setting",
                ));
            }
            target.insert(k.clone(), v.clone());
        }
        let s: Self = serde_json::from_value(merged).map_err(|e| {
            ValidationError::new("settings", format!("has a value of the wrong type: {e}"))
        })?;
        s.check()?;
        Ok(s)
    }
}

#[cfg(test)]
mod tests;
