//! Every setting of the ECRI engine, with its default. Guardrails are per facility (a facility
//! stores the settings it overrides, as with the street engine's); the stay prior is the
//! company's starting point before its own outcomes teach it.

use super::stay::StayPrior;
use crate::validation::ValidationError;
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub mod flags;

/// The flag that always excludes a tenant, whatever `excluded_flags` holds.
pub const DO_NOT_INCREASE: &str = "do_not_increase";

/// The most operator synonyms a facility keeps.
pub const MAX_FLAG_SYNONYMS: usize = 200;

/// The engine's settings. Percentages are in percent (10.0 means 10 %).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct EcriEngineSettings {
    /// Months over which an increase's expected revenue is counted. Default 12.
    pub horizon_months: f64,
    /// Guardrail `months_since_move_in`: no increase before this many months since move-in.
    /// Default 4 (strong markets now raise at 3-4 months).
    pub min_months_since_move_in: f64,
    /// Guardrail `months_since_increase`: no increase before this many months since the last
    /// one. Default 6 (operators raise every 6-9 months).
    pub min_months_since_increase: f64,
    /// Guardrail `max_step`: the largest increase in one notice, % of the current rent.
    /// Default 25.
    pub max_step_pct: f64,
    /// Guardrail `max_premium_over_street`: the new rent is at most the street rate x (1 + this
    /// / 100). Default 20: tenants in place may pay above street, up to about where moving
    /// starts to pay them.
    pub max_premium_over_street_pct: f64,
    /// Guardrail `minimum_increase`: the smallest increase worth a notice, % of the current
    /// rent ... Default 3.
    pub min_increase_pct: f64,
    /// ... or in currency, whichever is smaller (so a $40 rent can still go up by $2 and a $400
    /// one needs $5, not $12). Default 5.
    pub min_increase_amount: f64,
    /// Guardrail `jurisdiction_cap`: the legal cap on one increase (%), where one applies
    /// (e.g. 10 after a declared emergency in California). Default none.
    pub jurisdiction_cap_pct: Option<f64>,
    /// Guardrail `emergency_cap`: with a jurisdiction cap, the date the emergency began: the
    /// cap then applies to the rent in force on that date (at move-in for a tenant who came
    /// since), not to the rent now, so notices during the emergency cannot add up past it.
    /// Default none (the cap applies to the rent now).
    pub cap_base_date: Option<NaiveDate>,
    /// Guardrail `twelve_month_cap`: the new rent is at most the rent in force 12 months
    /// before (at move-in for a tenant who came since) x (1 + this / 100), whatever the
    /// notices between. Default none.
    pub cap_12_months_pct: Option<f64>,
    /// Days of written notice the jurisdiction requires before an increase takes effect, per
    /// facility. Default 30 (California).
    pub notice_days: u32,
    /// Guardrail `excluded_flag`: tenants carrying any of these flags are never increased,
    /// matched by canonical flag (case, spaces, hyphens and underscores folded, then the
    /// synonyms of [`flags::SYNONYMS`] and `flag_synonyms`: `SCRA` is `military`, `DNI` is
    /// `do_not_increase`). Default `business`, `delinquent`, `military` (servicemembers'
    /// protections), `lien` (in lien or auction) and `bankruptcy` (the automatic stay);
    /// `do_not_increase` always excludes.
    pub excluded_flags: Vec<String>,
    /// The operator's own flags and the canonical flag each means (`{"no bump": "do not
    /// increase"}`), read before the built-in synonyms. Default none.
    pub flag_synonyms: BTreeMap<String, String>,
    /// Guardrail `customer_units`: all units of one customer go up by the same percent, or none
    /// does. Default true.
    pub raise_customer_units_together: bool,
    /// Guardrail `stop_loss`: increases are held at a facility whose increased tenants moved out
    /// within 90 days at a rate more than this many points above its tenants not increased.
    /// Default 15.
    pub stop_loss_excess_move_out_pts: f64,
    /// ... once at least this many increased tenants' 90-day outcomes are known. Default 20.
    pub stop_loss_min_outcomes: u32,
    /// The prior stay curve and how strongly it holds against a facility's own outcomes.
    pub stay_prior: StayPrior,
    /// The share (%) of a batch's eligible tenants drawn at random and left out as a control
    /// group, so a batch's outcome can measure what its increases earned. Default 0 (off); at
    /// most 50.
    pub holdout_pct: f64,
    /// Guardrail `ramp`: while a facility's increase sensitivity rests mostly on the prior
    /// (on outcomes, its own or its company's, under `ramp_until_evidence_pct` of it), only a
    /// share of the tenants it would increase are: this share (%) with no evidence, growing in
    /// proportion to the evidence to all at the bar; drawn by a stable hash of the customer
    /// (else the tenant). Default 100 (off; docs/ecri.md, "Backtest", for what 30 with a bar of
    /// 40 does where tenants react unlike the prior).
    pub ramp_share_pct: f64,
    /// ... the share (%) of the sensitivity that must rest on outcomes (`model.evidence_weight`,
    /// or `model.company_evidence_weight` when higher) before every suggestion is sent.
    /// Default 50.
    pub ramp_until_evidence_pct: f64,
    /// Guardrail `step_test`: while the stay model's step at the round figures (δ, at the
    /// prior's `step_pct` % or `step_amount`) rests mostly on the prior (on outcomes, its own
    /// or its company's, under `step_test_until_evidence_pct` of it), this share (%) of the
    /// tenants whose suggested increase reaches the round figures get the largest whole
    /// increase under both instead, where the guardrails allow one and it is expected to pay:
    /// both sides of the step are then seen and δ learned. Drawn by a stable hash of the
    /// customer (else the tenant), apart from the ramp's. Default 30; 0 turns it off; at most 50.
    pub step_test_share_pct: f64,
    /// ... the share (%) of δ that must rest on outcomes (`model.step_evidence_weight`, or
    /// `model.company_step_evidence_weight` when higher) before the test stops. Default 30.
    pub step_test_until_evidence_pct: f64,
    /// How much of what the stay model does not yet know a decision weighs (%): each candidate
    /// rent's extra move-out is read at the mean of the slopes the evidence still allows (`ln` of
    /// the tenant's slope normal about its estimate, its variance from the evidence weights of s,
    /// ρ and ρ12, times this / 100), not at the estimate alone. 0 decides on the estimate.
    /// Default 100.
    pub uncertainty_pct: f64,
    /// How much of the next increase a move-out forgoes is counted in its cost (%): a tenant who
    /// stays can be raised again once `min_months_since_increase` have passed after this
    /// increase takes effect, and that increase's expected gain within the horizon (weighed as
    /// this one is, for the tenant as it will then be: raised once more, its last increase
    /// months old) is lost with the tenant. 0 weighs each increase as if it were the last.
    /// Default 100 (since ecri-2026.12.4).
    pub next_increase_pct: f64,
}

impl Default for EcriEngineSettings {
    fn default() -> Self {
        Self {
            horizon_months: 12.0,
            min_months_since_move_in: 4.0,
            min_months_since_increase: 6.0,
            max_step_pct: 25.0,
            max_premium_over_street_pct: 20.0,
            min_increase_pct: 3.0,
            min_increase_amount: 5.0,
            jurisdiction_cap_pct: None,
            cap_base_date: None,
            cap_12_months_pct: None,
            notice_days: 30,
            excluded_flags: ["business", "delinquent", "military", "lien", "bankruptcy"]
                .map(str::to_owned)
                .to_vec(),
            flag_synonyms: BTreeMap::new(),
            raise_customer_units_together: true,
            stop_loss_excess_move_out_pts: 15.0,
            stop_loss_min_outcomes: 20,
            stay_prior: StayPrior::default(),
            holdout_pct: 0.0,
            ramp_share_pct: 100.0,
            ramp_until_evidence_pct: 50.0,
            step_test_share_pct: 30.0,
            step_test_until_evidence_pct: 30.0,
            uncertainty_pct: 100.0,
            next_increase_pct: 100.0,
        }
    }
}

/// `Ok` when `v` is a finite number from `min` to `max`; else the error naming `path`.
pub(super) fn in_range(path: &str, v: f64, min: f64, max: f64) -> Result<(), ValidationError> {
    if v.is_finite() && (min..=max).contains(&v) {
        Ok(())
    } else {
        Err(ValidationError::new(
            path,
            format!("must be between {min} and {max}"),
        ))
    }
}

impl EcriEngineSettings {
    /// The first of these flags that excludes a tenant (`do_not_increase` always does), as
    /// written, followed by its canonical flag when that reads otherwise (`DNI
    /// (do_not_increase)`).
    pub fn excludes(&self, flags: &[String]) -> Option<String> {
        let excluded: Vec<String> = self
            .excluded_flags
            .iter()
            .map(|e| flags::canonical(e, &self.flag_synonyms))
            .collect();
        flags.iter().find_map(|f| {
            let c = flags::canonical(f, &self.flag_synonyms);
            (c == DO_NOT_INCREASE || excluded.contains(&c)).then(|| {
                if f.trim() == c {
                    c
                } else {
                    format!("{} ({c})", f.trim())
                }
            })
        })
    }

    /// The defaults with a facility's stored overrides put over them (`stay_prior` field by
    /// field), checked: an unknown field, a wrong type or a value out of range names the field.
    pub fn with_overrides(overrides: &serde_json::Value) -> Result<Self, ValidationError> {
        let Some(obj) = overrides.as_object() else {
            return Err(ValidationError::new("settings", "must be a JSON object"));
        };
        let mut merged = serde_json::to_value(Self::default())
            .map_err(|e| ValidationError::new("settings", e.to_string()))?;
        let target = merged
            .as_object_mut()
            .ok_or_else(|| ValidationError::new("settings", "must be a JSON object"))?;
        for (k, v) in obj {
            let Some(current) = target.get_mut(k) else {
                return Err(ValidationError::new(
                    format!("settings.{k}"),
                    "is not an ECRI setting",
                ));
            };
            match (current.as_object_mut(), v.as_object()) {
                // A map of the operator's own (its keys are not settings) is replaced whole.
                (Some(inner), Some(over)) if k != "flag_synonyms" => {
                    for (ik, iv) in over {
                        if !inner.contains_key(ik) {
                            return Err(ValidationError::new(
                                format!("settings.{k}.{ik}"),
                                "is not an ECRI setting",
                            ));
                        }
                        inner.insert(ik.clone(), iv.clone());
                    }
                }
                _ => *current = v.clone(),
            }
        }
        let s: Self = serde_path_to_error::deserialize(merged).map_err(|e| {
            ValidationError::new(
                format!("settings.{}", e.path()),
                format!("has a value of the wrong type ({})", e.inner()),
            )
        })?;
        s.validate()?;
        Ok(s)
    }

    /// Checks every value's range; the error names the field.
    pub fn validate(&self) -> Result<(), ValidationError> {
        let range = |name: &str, v: f64, min: f64, max: f64| {
            in_range(&format!("ecri_settings.{name}"), v, min, max)
        };
        range("horizon_months", self.horizon_months, 1.0, 60.0)?;
        range(
            "min_months_since_move_in",
            self.min_months_since_move_in,
            0.0,
            120.0,
        )?;
        range(
            "min_months_since_increase",
            self.min_months_since_increase,
            0.0,
            120.0,
        )?;
        range("max_step_pct", self.max_step_pct, 0.0, 100.0)?;
        range(
            "max_premium_over_street_pct",
            self.max_premium_over_street_pct,
            -50.0,
            300.0,
        )?;
        range("min_increase_pct", self.min_increase_pct, 0.0, 100.0)?;
        range(
            "min_increase_amount",
            self.min_increase_amount,
            0.0,
            10_000.0,
        )?;
        if let Some(cap) = self.jurisdiction_cap_pct {
            range("jurisdiction_cap_pct", cap, 0.0, 100.0)?;
        }
        self.check_compliance()?;
        range("notice_days", f64::from(self.notice_days), 0.0, 365.0)?;
        if self.excluded_flags.len() > crate::sync::payload::MAX_FLAGS * 2 {
            return Err(ValidationError::new(
                "ecri_settings.excluded_flags",
                format!(
                    "at most {} flags, got {}",
                    crate::sync::payload::MAX_FLAGS * 2,
                    self.excluded_flags.len()
                ),
            ));
        }
        if let Some(i) = self
            .excluded_flags
            .iter()
            .position(|f| f.chars().count() > 40)
        {
            return Err(ValidationError::new(
                format!("ecri_settings.excluded_flags[{i}]"),
                "must be at most 40 characters (a tenant's flag is)",
            ));
        }
        if let Some(i) = self
            .excluded_flags
            .iter()
            .position(|f| f.contains(crate::values::is_forbidden_in_text))
        {
            return Err(ValidationError::new(
                format!("ecri_settings.excluded_flags[{i}]"),
                "must not contain control characters or invisible text-direction or formatting characters",
            ));
        }
        if let Some(i) = self.excluded_flags.iter().position(|f| f.trim().is_empty()) {
            return Err(ValidationError::new(
                format!("ecri_settings.excluded_flags[{i}]"),
                "must not be empty",
            ));
        }
        range(
            "stop_loss_excess_move_out_pts",
            self.stop_loss_excess_move_out_pts,
            0.0,
            100.0,
        )?;
        range(
            "stop_loss_min_outcomes",
            f64::from(self.stop_loss_min_outcomes),
            1.0,
            100_000.0,
        )?;
        range("holdout_pct", self.holdout_pct, 0.0, 50.0)?;
        range("ramp_share_pct", self.ramp_share_pct, 0.0, 100.0)?;
        range(
            "ramp_until_evidence_pct",
            self.ramp_until_evidence_pct,
            0.0,
            100.0,
        )?;
        range("step_test_share_pct", self.step_test_share_pct, 0.0, 50.0)?;
        range(
            "step_test_until_evidence_pct",
            self.step_test_until_evidence_pct,
            0.0,
            100.0,
        )?;
        range("uncertainty_pct", self.uncertainty_pct, 0.0, 100.0)?;
        range("next_increase_pct", self.next_increase_pct, 0.0, 100.0)?;
        self.stay_prior.validate()
    }

    /// The caps over time and the flag synonyms: a 12-month cap from 0 to 100 %, a cap base
    /// date only with a jurisdiction cap (from 2000 to 2100), synonyms of 1 to 40 characters.
    fn check_compliance(&self) -> Result<(), ValidationError> {
        if let Some(cap) = self.cap_12_months_pct {
            in_range("ecri_settings.cap_12_months_pct", cap, 0.0, 100.0)?;
        }
        if let Some(d) = self.cap_base_date {
            if self.jurisdiction_cap_pct.is_none() {
                return Err(ValidationError::new(
                    "ecri_settings.cap_base_date",
                    "applies the jurisdiction cap from that date: set jurisdiction_cap_pct too",
                ));
            }
            let (from, to) = (
                NaiveDate::from_ymd_opt(2000, 1, 1),
                NaiveDate::from_ymd_opt(2100, 12, 31),
            );
            if from.is_some_and(|f| d < f) || to.is_some_and(|t| d > t) {
                return Err(ValidationError::new(
                    "ecri_settings.cap_base_date",
                    "must be a date from 2000-01-01 to 2100-12-31",
                ));
            }
        }
        if self.flag_synonyms.len() > MAX_FLAG_SYNONYMS {
            return Err(ValidationError::new(
                "ecri_settings.flag_synonyms",
                format!(
                    "at most {MAX_FLAG_SYNONYMS} synonyms, got {}",
                    self.flag_synonyms.len()
                ),
            ));
        }
        for (k, v) in &self.flag_synonyms {
            for text in [k, v] {
                if flags::fold(text).is_empty() || text.chars().count() > 40 {
                    return Err(ValidationError::new(
                        format!("ecri_settings.flag_synonyms.{k}"),
                        "a flag and its canonical flag must each be 1 to 40 characters",
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
