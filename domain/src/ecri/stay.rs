//! The chance a tenant stays after a rent increase: a prior curve, then learned per facility
//! from the outcomes of its own past increases, pooled over the company (docs/ecri.md).
//!
//! Two parts, both over the 90 days after a notice:
//! - the baseline: the share of tenants *not* increased who move out within 90 days anyway;
//! - the extra move-out an increase causes, on top of the baseline:
//!   `extra(x, g) = (σ(b0 + s (b1 x + b2 max(0, g - m))) - σ(b0)) / (1 - σ(b0))`, with x the
//!   increase (% of the old rent), g the new rent's premium over the size's competitor median
//!   (% ; over the street rate when no competitor is known), m the premium moving is worth, σ
//!   the logistic function and s the facility's sensitivity (1 is the prior). It is 0 for no
//!   increase and rises toward 1.
//!
//! A tenant stays 90 days with probability `(1 - baseline) x (1 - extra)`.
//!
//! Per tenant ([`StayModel::for_tenant`]): the baseline falls with tenure, its 90-day hazard
//! `-ln(1 - baseline)` scaled by `((1 + t) / (1 + t_ref))^(-β)`, t the months since move-in and
//! t_ref the facility's typical tenure; a tenant raised before has the increase sensitivity
//! times ρ (`raised_before_sensitivity`). β and ρ are learned like the sensitivities.
//!
//! Learning: `ln s` is estimated by maximum a posteriori. The company's estimate (from the other
//! facilities' outcomes) has a normal prior at `ln 1 = 0`; a facility's has a normal prior at the
//! company's estimate; both with precision `sensitivity_strength`. So while a facility's evidence
//! is thin its sensitivity stays near the company's, and the company's near the prior; the
//! share of the facility's own evidence is `I / (I + strength)`, I the Fisher information of its
//! outcomes. The baseline is shrunk the same way, as a Beta mean: the company's is
//! `(left + k x prior) / (windows + k)`, a facility's `(left + k x company) / (windows + k)`.
//! The fit itself is in `fit`.

use crate::validation::ValidationError;
use serde::{Deserialize, Serialize};

mod fit;
mod step;
mod uncertain;
pub use fit::learn;
pub use step::{StepFigures, STEP_AMOUNTS, STEP_FIGURES_MARGIN, STEP_PCTS};
pub use uncertain::log_variance;

/// The tenure (months since move-in) whose 90-day move-out rate is the facility's baseline
/// before any tenure is known.
pub const DEFAULT_REFERENCE_MONTHS: f64 = 24.0;

/// The prior curve and how strongly it holds. Defaults from public figures: one operator saw 7 %
/// of 427 increased tenants leave within about 3 months; large increases (10-25 %) cost 3-10
/// points of occupancy; moving pays a tenant at about 20 % over market (docs/ecri.md).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct StayPrior {
    /// Share of tenants not increased who move out within 90 days (%). Default 12 (about 4 % a
    /// month).
    pub baseline_move_out_pct: f64,
    /// b0, the logistic intercept: sets how fast the extra move-out rises from 0. Default -3.
    pub intercept: f64,
    /// b1, logit per point of increase. Default 0.06 (a 10 % increase: 3.8 % extra move-outs,
    /// 25 %: 14 %).
    pub per_increase_pct: f64,
    /// b2, logit per point of premium over the competitor median beyond `moving_cost_pct`.
    /// Default 0.12 (beyond the point where moving pays, each 10 points more doubles and
    /// triples the odds of leaving).
    pub per_premium_pct: f64,
    /// m, the premium over the competitor median (%) a tenant pays before moving pays off.
    /// Default 20.
    pub moving_cost_pct: f64,
    /// Precision of the normal prior on ln(sensitivity), at the company's and each facility's
    /// level. Default 2 (a standard deviation of 0.71: a facility's sensitivity within about
    /// x/÷ 2 of its company's before its own outcomes speak; 4 before ecri-2026.12.3).
    pub sensitivity_strength: f64,
    /// Weight of the prior baseline, in 90-day windows of tenants not increased. Default 50.
    pub baseline_strength: f64,
    /// β, how fast the baseline hazard falls with tenure: a tenant `t` months in has the
    /// facility's 90-day hazard times `((1 + t) / (1 + t_ref))^(-β)`. Default 0.4 (a tenant 3
    /// months in leaves about twice as often as one 2 years in).
    pub tenure_elasticity: f64,
    /// Precision of the normal prior on β, at the company's and each facility's level. Default
    /// 25 (a standard deviation of 0.2).
    pub tenure_strength: f64,
    /// ρ, the multiplier of the increase sensitivity for tenants increased before. Default 1
    /// (no difference until the outcomes show one).
    pub raised_before_sensitivity: f64,
    /// Precision of the normal prior on ln ρ (and ln ρ12), at both levels. Default 2, like the
    /// sensitivities' (4 before ecri-2026.12.4).
    pub raised_before_strength: f64,
    /// ρ12, the multiplier of the increase sensitivity for tenants whose previous increase is
    /// under [`RECENT_INCREASE_MONTHS`] old (on top of ρ). Default 1 (learned, with the
    /// precision of ρ).
    pub recent_sensitivity: f64,
    /// γ, how the increase sensitivity falls with tenure: times `((1 + t) / (1 + t_ref))^(-γ)`,
    /// t the months since move-in and t_ref the baseline's. Default 0 (learned).
    pub tenure_sensitivity_elasticity: f64,
    /// Precision of the normal prior on γ, at both levels. Default 4.
    pub tenure_sensitivity_strength: f64,
    /// The round percent tenants notice: an increase of `step_pct` % or more (or of
    /// `step_amount` or more) adds δ to the logit of the extra move-out. Default 10.
    pub step_pct: f64,
    /// The round amount (currency) tenants notice, as `step_pct`. Default 10.
    pub step_amount: f64,
    /// δ before any outcome. Default 0 (no step until the outcomes show one).
    pub step_logit: f64,
    /// Precision of the normal prior on δ, at both levels. Default 1 (a standard deviation
    /// of 1 logit).
    pub step_strength: f64,
}

impl Default for StayPrior {
    fn default() -> Self {
        Self {
            baseline_move_out_pct: 12.0,
            intercept: -3.0,
            per_increase_pct: 0.06,
            per_premium_pct: 0.12,
            moving_cost_pct: 20.0,
            sensitivity_strength: 2.0,
            baseline_strength: 50.0,
            tenure_elasticity: 0.4,
            tenure_strength: 25.0,
            raised_before_sensitivity: 1.0,
            raised_before_strength: 2.0,
            recent_sensitivity: 1.0,
            tenure_sensitivity_elasticity: 0.0,
            tenure_sensitivity_strength: 4.0,
            step_pct: 10.0,
            step_amount: 10.0,
            step_logit: 0.0,
            step_strength: 1.0,
        }
    }
}

impl StayPrior {
    pub fn validate(&self) -> Result<(), ValidationError> {
        let range = |name: &str, v: f64, min: f64, max: f64| {
            super::settings::in_range(&format!("ecri_settings.stay_prior.{name}"), v, min, max)
        };
        range(
            "baseline_move_out_pct",
            self.baseline_move_out_pct,
            0.0,
            95.0,
        )?;
        range("intercept", self.intercept, -10.0, 0.0)?;
        range("per_increase_pct", self.per_increase_pct, 0.0, 1.0)?;
        range("per_premium_pct", self.per_premium_pct, 0.0, 1.0)?;
        range("moving_cost_pct", self.moving_cost_pct, 0.0, 200.0)?;
        range(
            "sensitivity_strength",
            self.sensitivity_strength,
            0.01,
            1000.0,
        )?;
        range("baseline_strength", self.baseline_strength, 0.0, 100_000.0)?;
        range("tenure_elasticity", self.tenure_elasticity, 0.0, 2.0)?;
        range("tenure_strength", self.tenure_strength, 0.01, 100_000.0)?;
        range(
            "raised_before_sensitivity",
            self.raised_before_sensitivity,
            0.2,
            5.0,
        )?;
        range(
            "raised_before_strength",
            self.raised_before_strength,
            0.01,
            1000.0,
        )?;
        range("recent_sensitivity", self.recent_sensitivity, 0.2, 5.0)?;
        range(
            "tenure_sensitivity_elasticity",
            self.tenure_sensitivity_elasticity,
            -1.0,
            2.0,
        )?;
        range(
            "tenure_sensitivity_strength",
            self.tenure_sensitivity_strength,
            0.01,
            1000.0,
        )?;
        range("step_pct", self.step_pct, 0.0, 100.0)?;
        range("step_amount", self.step_amount, 0.0, 100_000.0)?;
        range("step_logit", self.step_logit, -3.0, 3.0)?;
        range("step_strength", self.step_strength, 0.01, 1000.0)
    }
}

/// What happened to tenants over the 90 days after a notice (or, for tenants not increased,
/// after the day they could have had one). One tenant, or a cohort of alike tenants.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Outcome {
    /// The increase given, % of the old rent; 0 for tenants not increased.
    pub increase_pct: f64,
    /// The new rent's premium over the competitor median (street when none), %.
    pub premium_pct: f64,
    /// Tenants (1 for one tenant).
    pub tenants: u32,
    /// Of those, moved out within the 90 days.
    pub moved_out: u32,
    /// Months since move-in when the window started (`evidence` gives the middle of the
    /// tenure band); None when unknown.
    pub months_since_move_in: Option<f64>,
    /// Increases the tenants had before this one (0 for tenants not increased).
    pub past_increases: u32,
    /// The increase in currency, where known (0: unknown, the step judged by the percent).
    pub increase_amount: f64,
    /// Whether the tenants' previous increase was under [`RECENT_INCREASE_MONTHS`] before
    /// this one.
    pub raised_recently: bool,
    /// The share of the 90-day window not yet seen: 0 once it is over; for a window still
    /// open, the move-outs are those seen so far (`evidence::increase_outcomes` with its open
    /// windows; docs/ecri.md, "Open windows"). For tenants not increased, the share of the
    /// window each was not watched: a tenant is watched until it moves out, is given a notice
    /// or the window ends (`evidence::baseline_outcome`), so the baseline is a rate per
    /// window watched and the tenants a notice took out early count for the time they were
    /// watched, not as a whole window.
    pub open_share: f64,
}

impl Outcome {
    pub fn increased(&self) -> bool {
        self.increase_pct > 0.0
    }

    /// The share of the window seen (1 once it is over).
    pub fn seen_share(&self) -> f64 {
        (1.0 - self.open_share).clamp(0.0, 1.0)
    }
}

/// The stay model of one facility.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StayModel {
    pub prior: StayPrior,
    /// 90-day move-out rate of tenants not increased (0..1).
    pub baseline: f64,
    /// Multiplier of the prior's slope on the increase, b1 (1 = the prior).
    pub sensitivity: f64,
    /// Multiplier of the prior's slope on the premium, b2 (1 = the prior).
    pub premium_sensitivity: f64,
    /// The company's sensitivities this facility's are shrunk toward.
    pub company_sensitivity: f64,
    pub company_premium_sensitivity: f64,
    /// Share (0..1) of the sensitivity to the increase that rests on the facility's own
    /// outcomes.
    pub evidence_weight: f64,
    /// Increased tenants and those not increased whose 90-day outcomes the fit used.
    pub increased_tenants: u32,
    pub baseline_tenants: u32,
    /// β, how fast the baseline hazard falls with tenure (see [`StayPrior::tenure_elasticity`]),
    /// the company's it is shrunk toward, and the share that rests on the facility's own
    /// tenants not increased whose tenure is known (`tenure_tenants`).
    pub tenure_elasticity: f64,
    pub company_tenure_elasticity: f64,
    pub tenure_evidence_weight: f64,
    pub tenure_tenants: u32,
    /// t_ref, the tenure (months) whose 90-day move-out rate is `baseline`: the facility's
    /// tenants not increased, their log-mean of (1 + months) less 1.
    pub reference_months: f64,
    /// ρ, the increase sensitivity of tenants raised before against the others', the company's,
    /// and the share that rests on the facility's own increased tenants raised before
    /// (`raised_before_tenants`).
    pub raised_before_sensitivity: f64,
    pub company_raised_before_sensitivity: f64,
    pub raised_before_evidence_weight: f64,
    pub raised_before_tenants: u32,
    /// δ, the logit an increase adds once it reaches the prior's round figures (`step_pct`,
    /// `step_amount`), the company's, and the share that rests on the facility's own outcomes.
    #[serde(default)]
    pub step_logit: f64,
    /// ρ12 and γ as learned (see [`StayPrior::recent_sensitivity`] and
    /// [`StayPrior::tenure_sensitivity_elasticity`]), with the company's.
    #[serde(default = "one")]
    pub recent_sensitivity: f64,
    #[serde(default = "one")]
    pub company_recent_sensitivity: f64,
    #[serde(default)]
    pub tenure_sensitivity_elasticity: f64,
    #[serde(default)]
    pub company_tenure_sensitivity_elasticity: f64,
    #[serde(default)]
    pub company_step_logit: f64,
    /// The share (0..1) of δ that rests on the facility's own outcomes, and of the company's
    /// δ on the other facilities': δ's information given the slope's parameters learned from
    /// the same outcomes, so outcomes all past the round figures carry little of it.
    #[serde(default)]
    pub step_evidence_weight: f64,
    #[serde(default)]
    pub company_step_evidence_weight: f64,
    /// Share (0..1) of the company's sensitivity to the increase (the one the facility's is
    /// shrunk toward) that rests on the other facilities' outcomes.
    #[serde(default)]
    pub company_evidence_weight: f64,
    /// The shares (0..1) of ρ12 that rest on the facility's own outcomes, and of the company's
    /// ρ and ρ12 on the other facilities' (0 in models stored before they were kept).
    #[serde(default)]
    pub recent_evidence_weight: f64,
    #[serde(default)]
    pub company_raised_before_evidence_weight: f64,
    #[serde(default)]
    pub company_recent_evidence_weight: f64,
    /// Where the step lies for this facility: the round figures its outcomes favour over the
    /// prior's by [`STEP_FIGURES_MARGIN`] of log-likelihood or more, among [`STEP_PCTS`] and
    /// [`STEP_AMOUNTS`]; None (and in models stored before they were learned) the prior's.
    #[serde(default)]
    pub step_figures: Option<StepFigures>,
    /// How much better (penalized log-likelihood) the outcomes fit at `step_figures` than at
    /// the prior's (0 when they are the prior's).
    #[serde(default)]
    pub step_figures_support: f64,
}

fn one() -> f64 {
    1.0
}

/// Months within which a previous increase makes a tenant's increase "recent".
pub const RECENT_INCREASE_MONTHS: f64 = 12.0;

/// Whether an increase `months_since_last_increase` after the previous one is recent (under
/// [`RECENT_INCREASE_MONTHS`]); a tenant never raised (None) is not.
pub fn raised_recently(months_since_last_increase: Option<f64>) -> bool {
    months_since_last_increase.is_some_and(|m| m < RECENT_INCREASE_MONTHS)
}

/// The factor of the increase sensitivity at tenure `months`: `((1 + months) / (1 +
/// reference))^(-elasticity)`.
pub fn tenure_sensitivity(elasticity: f64, reference_months: f64, months: f64) -> f64 {
    ((1.0 + months.max(0.0)) / (1.0 + reference_months.max(0.0))).powf(-elasticity)
}

/// The 90-day move-out rate at tenure `months` of a facility whose rate at `reference_months`
/// is `baseline`, the hazard scaled by `((1 + months) / (1 + reference_months))^(-elasticity)`.
pub fn tenure_baseline(baseline: f64, elasticity: f64, reference_months: f64, months: f64) -> f64 {
    let hazard = -(1.0 - baseline.clamp(0.0, 0.99)).ln();
    let scale = ((1.0 + months.max(0.0)) / (1.0 + reference_months.max(0.0))).powf(-elasticity);
    (1.0 - (-hazard * scale).exp()).clamp(0.0, 0.99)
}

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

/// One increase as the curve reads it: percent, premium over the reference (%), and whether
/// it reaches the round figures.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Push {
    pub(crate) increase_pct: f64,
    pub(crate) premium_pct: f64,
    pub(crate) step: bool,
}

/// The extra move-out share of the curve at sensitivities `s` (to the increase, to the
/// premium) and step δ.
fn extra_at(prior: &StayPrior, s: [f64; 2], delta: f64, x: Push) -> f64 {
    if x.increase_pct <= 0.0 {
        return 0.0;
    }
    let base = sigmoid(prior.intercept);
    let step = if x.step { delta } else { 0.0 };
    let push = s[0] * prior.per_increase_pct * x.increase_pct
        + s[1] * prior.per_premium_pct * (x.premium_pct - prior.moving_cost_pct).max(0.0)
        + step;
    ((sigmoid(prior.intercept + push) - base) / (1.0 - base)).clamp(0.0, 1.0)
}

impl StayModel {
    /// The prior, before any outcome.
    pub fn from_prior(prior: &StayPrior) -> Self {
        Self {
            prior: *prior,
            baseline: prior.baseline_move_out_pct / 100.0,
            sensitivity: 1.0,
            premium_sensitivity: 1.0,
            company_sensitivity: 1.0,
            company_premium_sensitivity: 1.0,
            evidence_weight: 0.0,
            increased_tenants: 0,
            baseline_tenants: 0,
            tenure_elasticity: prior.tenure_elasticity,
            company_tenure_elasticity: prior.tenure_elasticity,
            tenure_evidence_weight: 0.0,
            tenure_tenants: 0,
            reference_months: DEFAULT_REFERENCE_MONTHS,
            raised_before_sensitivity: prior.raised_before_sensitivity,
            company_raised_before_sensitivity: prior.raised_before_sensitivity,
            raised_before_evidence_weight: 0.0,
            raised_before_tenants: 0,
            step_logit: prior.step_logit,
            company_step_logit: prior.step_logit,
            recent_sensitivity: prior.recent_sensitivity,
            company_recent_sensitivity: prior.recent_sensitivity,
            tenure_sensitivity_elasticity: prior.tenure_sensitivity_elasticity,
            company_tenure_sensitivity_elasticity: prior.tenure_sensitivity_elasticity,
            step_evidence_weight: 0.0,
            company_step_evidence_weight: 0.0,
            company_evidence_weight: 0.0,
            recent_evidence_weight: 0.0,
            company_raised_before_evidence_weight: 0.0,
            company_recent_evidence_weight: 0.0,
            step_figures: None,
            step_figures_support: 0.0,
        }
    }

    /// The round figures of the facility's step: learned, else the prior's.
    pub fn step_figures(&self) -> StepFigures {
        self.step_figures
            .unwrap_or_else(|| StepFigures::of(&self.prior))
    }

    /// The model for one tenant: the baseline at its tenure (unchanged when unknown), and the
    /// increase sensitivity times ρ when it was increased before. The adjustments are applied
    /// once: the model returned has β = 0 and ρ = 1, so adjusting it again changes nothing.
    pub fn for_tenant(&self, months_since_move_in: Option<f64>, past_increases: u32) -> StayModel {
        self.for_tenant_since(months_since_move_in, past_increases, None)
    }

    /// [`Self::for_tenant`], with the months since the tenant's last increase (None: never, or
    /// unknown): the sensitivity also times γ's tenure factor, and ρ12 when the last increase
    /// is under [`RECENT_INCREASE_MONTHS`] old.
    pub fn for_tenant_since(
        &self,
        months_since_move_in: Option<f64>,
        past_increases: u32,
        months_since_last_increase: Option<f64>,
    ) -> StayModel {
        let mut m = *self;
        if let Some(t) = months_since_move_in.filter(|t| t.is_finite() && *t >= 0.0) {
            m.baseline = tenure_baseline(
                self.baseline,
                self.tenure_elasticity,
                self.reference_months,
                t,
            );
            m.tenure_elasticity = 0.0;
            m.sensitivity *=
                tenure_sensitivity(self.tenure_sensitivity_elasticity, self.reference_months, t);
            m.tenure_sensitivity_elasticity = 0.0;
        }
        if past_increases > 0 {
            m.sensitivity *= self.raised_before_sensitivity;
            m.raised_before_sensitivity = 1.0;
        }
        if raised_recently(months_since_last_increase) {
            m.sensitivity *= self.recent_sensitivity;
            m.recent_sensitivity = 1.0;
        }
        m
    }

    /// The same model with both sensitivities at `sensitivity`.
    pub fn with_sensitivity(self, sensitivity: f64) -> Self {
        Self {
            sensitivity,
            premium_sensitivity: sensitivity,
            ..self
        }
    }

    /// Share (0..1) of tenants who move out within 90 days because of this increase, beyond
    /// the baseline (the step judged by the percent alone).
    pub fn extra_move_out(&self, increase_pct: f64, premium_pct: f64) -> f64 {
        self.extra_move_out_of(increase_pct, premium_pct, 0.0)
    }

    /// [`Self::extra_move_out`] of an increase of `increase_amount` in currency too.
    pub fn extra_move_out_of(
        &self,
        increase_pct: f64,
        premium_pct: f64,
        increase_amount: f64,
    ) -> f64 {
        extra_at(
            &self.prior,
            [self.sensitivity, self.premium_sensitivity],
            self.step_logit,
            Push {
                increase_pct,
                premium_pct,
                step: self
                    .step_figures()
                    .crossed_by(increase_pct, increase_amount),
            },
        )
    }

    /// Chance (0..1) a tenant is still in place 90 days after a notice of this increase (after
    /// no notice when the increase is 0).
    pub fn stay_probability(&self, increase_pct: f64, premium_pct: f64) -> f64 {
        (1.0 - self.baseline) * (1.0 - self.extra_move_out(increase_pct, premium_pct))
    }
}

#[cfg(test)]
mod tests;
