//! The range every setting accepts, in one place: the table forms show next to each field
//! ([`RANGES`]) and the check that enforces it on a facility's overrides
//! ([`PricingSettings::check`]), so the two are read side by side (a test holds them equal).

use super::PricingSettings;
use crate::validation::ValidationError;
use serde::Serialize;

/// The range a setting accepts (as [`PricingSettings::check`] enforces it), for forms that show
/// it next to the field. `whole` settings take whole numbers; `round_to_whole` is a yes/no
/// setting and has no range.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Range {
    pub name: &'static str,
    pub min: f64,
    pub max: f64,
    pub whole: bool,
}

const fn r(name: &'static str, min: f64, max: f64) -> Range {
    Range {
        name,
        min,
        max,
        whole: false,
    }
}

const fn whole(name: &'static str, min: f64, max: f64) -> Range {
    Range {
        name,
        min,
        max,
        whole: true,
    }
}

/// Every numeric setting with its range, in the order of the struct.
pub const RANGES: [Range; 46] = [
    r("occupancy_target_low_pct", 0.0, 100.0),
    r("occupancy_target_high_pct", 0.0, 100.0),
    r("occupancy_pp_per_point", 0.0, 10.0),
    r("occupancy_max_pp", 0.0, 50.0),
    r("pace_pp_per_unit", 0.0, 50.0),
    r("pace_max_pp", 0.0, 50.0),
    r("competitor_pull", 0.0, 1.0),
    r("competitor_max_pp", 0.0, 50.0),
    r("target_approach_share", 0.0, 1.0),
    r("target_tolerance_pct", 0.0, 50.0),
    r("reversal_tolerance_pct", 0.0, 50.0),
    whole("reversal_window_days", 0.0, 365.0),
    whole("occupancy_trend_days", 7.0, 180.0),
    r("trend_pp_per_weekly_point", 0.0, 20.0),
    r("trend_max_pp", 0.0, 50.0),
    r("full_cut_above_p75_pct", 0.0, 100.0),
    r("seasonality_pp_per_index", 0.0, 100.0),
    r("promotion_offset_share", 0.0, 1.0),
    r("max_step_pct", 0.0, 50.0),
    r("floor_share_of_p25", 0.0, 1.0),
    r("ceiling_share_of_p75", 1.0, 3.0),
    whole("cooldown_days", 0.0, 365.0),
    r("min_change_pct", 0.0, 50.0),
    r("lease_up_discount_pct", 0.0, 100.0),
    r("lease_up_floor_share", 0.0, 1.0),
    r("lease_up_climb_pp_per_week", 0.0, 20.0),
    r("fill_first_pp_per_week", 0.0, 20.0),
    r("response_weight", 0.0, 1.0),
    r("price_elasticity", 0.5, 10.0),
    r("response_fill_pct", 50.0, 100.0),
    r("response_max_pp", 0.0, 50.0),
    r("probe_relet_days", 0.0, 60.0),
    r("probe_step_pct", 0.0, 20.0),
    whole("probe_interval_days", 7.0, 365.0),
    r("probe_retreat_pp", 0.0, 50.0),
    r("weak_gap_pp", 0.0, 50.0),
    whole("response_history_days", 0.0, 730.0),
    whole("response_half_life_days", 7.0, 730.0),
    r("response_evidence_move_ins", 0.0, 1000.0),
    r("expected_stay_months", 1.0, 120.0),
    whole("competitor_stale_after_days", 0.0, 3650.0),
    r("competitor_stale_weight", 0.0, 1.0),
    whole("competitor_max_age_days", 0.0, 3650.0),
    whole("tier_min_competitors", 1.0, 50.0),
    r("tier_premium_pct", 0.0, 200.0),
    r("auto_accept_within_pct", 0.0, 20.0),
];

impl PricingSettings {
    /// Checks every value's range.
    pub fn check(&self) -> Result<(), ValidationError> {
        self.check_occupancy_factors()?;
        self.check_target()?;
        self.check_guardrails()?;
        self.check_lease_up()?;
        self.check_price_response()?;
        self.check_probe_and_weak_close()?;
        self.check_response_history()?;
        self.check_competitor_band()?;
        days("tier_min_competitors", self.tier_min_competitors, 1, 50)?;
        within("tier_premium_pct", self.tier_premium_pct, 0.0, 200.0)?;
        within(
            "auto_accept_within_pct",
            self.auto_accept_within_pct,
            0.0,
            20.0,
        )
    }

    /// The occupancy band (its low end not above its high end) and the factors of the
    /// previous engines.
    fn check_occupancy_factors(&self) -> Result<(), ValidationError> {
        within(
            "occupancy_target_low_pct",
            self.occupancy_target_low_pct,
            0.0,
            100.0,
        )?;
        within(
            "occupancy_target_high_pct",
            self.occupancy_target_high_pct,
            0.0,
            100.0,
        )?;
        if self.occupancy_target_low_pct > self.occupancy_target_high_pct {
            return Err(ValidationError::new(
                "settings.occupancy_target_low_pct",
                "must not be above occupancy_target_high_pct",
            ));
        }
        within(
            "occupancy_pp_per_point",
            self.occupancy_pp_per_point,
            0.0,
            10.0,
        )?;
        within("occupancy_max_pp", self.occupancy_max_pp, 0.0, 50.0)?;
        within("pace_pp_per_unit", self.pace_pp_per_unit, 0.0, 50.0)?;
        within("pace_max_pp", self.pace_max_pp, 0.0, 50.0)?;
        within("competitor_pull", self.competitor_pull, 0.0, 1.0)?;
        within("competitor_max_pp", self.competitor_max_pp, 0.0, 50.0)
    }

    /// How the target is approached and what moves it.
    fn check_target(&self) -> Result<(), ValidationError> {
        within(
            "target_approach_share",
            self.target_approach_share,
            0.0,
            1.0,
        )?;
        within("target_tolerance_pct", self.target_tolerance_pct, 0.0, 50.0)?;
        within(
            "reversal_tolerance_pct",
            self.reversal_tolerance_pct,
            0.0,
            50.0,
        )?;
        days("reversal_window_days", self.reversal_window_days, 0, 365)?;
        days("occupancy_trend_days", self.occupancy_trend_days, 7, 180)?;
        within(
            "trend_pp_per_weekly_point",
            self.trend_pp_per_weekly_point,
            0.0,
            20.0,
        )?;
        within("trend_max_pp", self.trend_max_pp, 0.0, 50.0)?;
        within(
            "full_cut_above_p75_pct",
            self.full_cut_above_p75_pct,
            0.0,
            100.0,
        )?;
        within(
            "seasonality_pp_per_index",
            self.seasonality_pp_per_index,
            0.0,
            100.0,
        )?;
        within(
            "promotion_offset_share",
            self.promotion_offset_share,
            0.0,
            1.0,
        )
    }

    /// The guardrails on a run's change.
    fn check_guardrails(&self) -> Result<(), ValidationError> {
        within("max_step_pct", self.max_step_pct, 0.0, 50.0)?;
        within("floor_share_of_p25", self.floor_share_of_p25, 0.0, 1.0)?;
        within("ceiling_share_of_p75", self.ceiling_share_of_p75, 1.0, 3.0)?;
        days("cooldown_days", self.cooldown_days, 0, 365)?;
        within("min_change_pct", self.min_change_pct, 0.0, 50.0)
    }

    /// Lease-up, and its mirror outside lease-up (`fill_first`).
    fn check_lease_up(&self) -> Result<(), ValidationError> {
        within(
            "lease_up_discount_pct",
            self.lease_up_discount_pct,
            0.0,
            100.0,
        )?;
        within("lease_up_floor_share", self.lease_up_floor_share, 0.0, 1.0)?;
        within(
            "lease_up_climb_pp_per_week",
            self.lease_up_climb_pp_per_week,
            0.0,
            20.0,
        )?;
        within(
            "fill_first_pp_per_week",
            self.fill_first_pp_per_week,
            0.0,
            20.0,
        )
    }

    /// The learned price response.
    fn check_price_response(&self) -> Result<(), ValidationError> {
        within("response_weight", self.response_weight, 0.0, 1.0)?;
        within("price_elasticity", self.price_elasticity, 0.5, 10.0)?;
        within("response_fill_pct", self.response_fill_pct, 50.0, 100.0)?;
        within("response_max_pp", self.response_max_pp, 0.0, 50.0)
    }

    /// The rules that read the current rate: the probe, its retreat and the weak size's fast
    /// close.
    fn check_probe_and_weak_close(&self) -> Result<(), ValidationError> {
        within("probe_relet_days", self.probe_relet_days, 0.0, 60.0)?;
        within("probe_step_pct", self.probe_step_pct, 0.0, 20.0)?;
        days("probe_interval_days", self.probe_interval_days, 7, 365)?;
        within("probe_retreat_pp", self.probe_retreat_pp, 0.0, 50.0)?;
        within("weak_gap_pp", self.weak_gap_pp, 0.0, 50.0)
    }

    /// The history the price response learns from.
    fn check_response_history(&self) -> Result<(), ValidationError> {
        days("response_history_days", self.response_history_days, 0, 730)?;
        days(
            "response_half_life_days",
            self.response_half_life_days,
            7,
            730,
        )?;
        within(
            "response_evidence_move_ins",
            self.response_evidence_move_ins,
            0.0,
            1000.0,
        )
    }

    /// The competitor band.
    fn check_competitor_band(&self) -> Result<(), ValidationError> {
        within(
            "expected_stay_months",
            self.expected_stay_months,
            1.0,
            120.0,
        )?;
        days(
            "competitor_stale_after_days",
            self.competitor_stale_after_days,
            0,
            3650,
        )?;
        days(
            "competitor_max_age_days",
            self.competitor_max_age_days,
            0,
            3650,
        )?;
        within(
            "competitor_stale_weight",
            self.competitor_stale_weight,
            0.0,
            1.0,
        )
    }
}

/// The error naming setting `name` unless `v` is a finite number within `min..=max`.
fn within(name: &str, v: f64, min: f64, max: f64) -> Result<(), ValidationError> {
    if v.is_finite() && (min..=max).contains(&v) {
        Ok(())
    } else {
        Err(ValidationError::new(
            format!("settings.{name}"),
            format!("must be between {min} and {max}"),
        ))
    }
}

/// The error naming setting `name` unless the whole number `v` is within `min..=max`.
fn days(name: &str, v: i64, min: i64, max: i64) -> Result<(), ValidationError> {
    if (min..=max).contains(&v) {
        Ok(())
    } else {
        Err(ValidationError::new(
            format!("settings.{name}"),
            format!("must be between {min} and {max}"),
        ))
    }
}
