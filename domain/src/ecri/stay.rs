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
//! Learning: `ln s` is estimated by maximum a posteriori. The company's estimate (from the other
//! facilities' outcomes) has a normal prior at `ln 1 = 0`; a facility's has a normal prior at the
//! company's estimate; both with precision `sensitivity_strength`. So while a facility's evidence
//! is thin its sensitivity stays near the company's, and the company's near the prior; the
//! share of the facility's own evidence is `I / (I + strength)`, I the Fisher information of its
//! outcomes. The baseline is shrunk the same way, as a Beta mean: the company's is
//! `(left + k x prior) / (windows + k)`, a facility's `(left + k x company) / (windows + k)`.

use crate::validation::ValidationError;
use serde::{Deserialize, Serialize};

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
    /// level. Default 4 (a standard deviation of 0.5: a facility's sensitivity within about
    /// x/÷ 1.65 of its company's before its own outcomes speak).
    pub sensitivity_strength: f64,
    /// Weight of the prior baseline, in 90-day windows of tenants not increased. Default 50.
    pub baseline_strength: f64,
}

impl Default for StayPrior {
    fn default() -> Self {
        Self {
            baseline_move_out_pct: 12.0,
            intercept: -3.0,
            per_increase_pct: 0.06,
            per_premium_pct: 0.12,
            moving_cost_pct: 20.0,
            sensitivity_strength: 4.0,
            baseline_strength: 50.0,
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
        range("baseline_strength", self.baseline_strength, 0.0, 100_000.0)
    }
}

/// What happened to tenants over the 90 days after a notice (or, for tenants not increased,
/// after the day they could have had one). One tenant, or a cohort.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// The increase given, % of the old rent; 0 for tenants not increased.
    pub increase_pct: f64,
    /// The new rent's premium over the competitor median (street when none), %.
    pub premium_pct: f64,
    /// Tenants (1 for one tenant).
    pub tenants: u32,
    /// Of those, moved out within the 90 days.
    pub moved_out: u32,
}

impl Outcome {
    pub fn increased(&self) -> bool {
        self.increase_pct > 0.0
    }
}

/// The stay model of one facility.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
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
}

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

/// The extra move-out share of the curve at sensitivities `s` (to the increase, to the
/// premium).
fn extra(prior: &StayPrior, s: [f64; 2], increase_pct: f64, premium_pct: f64) -> f64 {
    if increase_pct <= 0.0 {
        return 0.0;
    }
    let base = sigmoid(prior.intercept);
    let push = s[0] * prior.per_increase_pct * increase_pct
        + s[1] * prior.per_premium_pct * (premium_pct - prior.moving_cost_pct).max(0.0);
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
        }
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
    /// the baseline.
    pub fn extra_move_out(&self, increase_pct: f64, premium_pct: f64) -> f64 {
        extra(
            &self.prior,
            [self.sensitivity, self.premium_sensitivity],
            increase_pct,
            premium_pct,
        )
    }

    /// Chance (0..1) a tenant is still in place 90 days after a notice of this increase (after
    /// no notice when the increase is 0).
    pub fn stay_probability(&self, increase_pct: f64, premium_pct: f64) -> f64 {
        (1.0 - self.baseline) * (1.0 - self.extra_move_out(increase_pct, premium_pct))
    }
}

/// Log-likelihood of the increased outcomes at ln(sensitivities) `theta`.
fn log_likelihood(prior: &StayPrior, baseline: f64, outcomes: &[Outcome], theta: [f64; 2]) -> f64 {
    let s = [theta[0].exp(), theta[1].exp()];
    outcomes
        .iter()
        .filter(|o| o.increased() && o.tenants > 0)
        .map(|o| {
            let stay = (1.0 - baseline) * (1.0 - extra(prior, s, o.increase_pct, o.premium_pct));
            let stay = stay.clamp(1e-9, 1.0 - 1e-9);
            let left = f64::from(o.moved_out.min(o.tenants));
            left * (1.0 - stay).ln() + (f64::from(o.tenants) - left) * stay.ln()
        })
        .sum()
}

/// The bounds of ln(sensitivity): 0.05 to 20 times the prior.
const THETA_MIN: f64 = -3.0;
const THETA_MAX: f64 = 3.0;

/// The maximum of a one-dimensional function on the bounds: a grid, then golden-section
/// search around the best point of the grid.
fn maximise(f: impl Fn(f64) -> f64) -> f64 {
    const GRID: usize = 24;
    let step = (THETA_MAX - THETA_MIN) / GRID as f64;
    let best = (0..=GRID)
        .map(|i| THETA_MIN + step * i as f64)
        .map(|t| (t, f(t)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(0.0, |(t, _)| t);
    let (mut lo, mut hi) = ((best - step).max(THETA_MIN), (best + step).min(THETA_MAX));
    let golden = 0.618_033_988_749_895;
    for _ in 0..30 {
        let a = hi - golden * (hi - lo);
        let b = lo + golden * (hi - lo);
        if f(a) >= f(b) {
            hi = b;
        } else {
            lo = a;
        }
    }
    (lo + hi) / 2.0
}

/// Maximum a posteriori ln(sensitivities) under independent normal priors at `centre`, by
/// coordinate ascent. Returns them and the Fisher information of the outcomes about each.
fn fit(
    prior: &StayPrior,
    baseline: f64,
    outcomes: &[Outcome],
    centre: [f64; 2],
) -> ([f64; 2], [f64; 2]) {
    let tau = prior.sensitivity_strength;
    if !outcomes.iter().any(|o| o.increased() && o.tenants > 0) {
        return (centre, [0.0; 2]);
    }
    let ll = |t: [f64; 2]| log_likelihood(prior, baseline, outcomes, t);
    let penalty =
        |t: [f64; 2]| 0.5 * tau * ((t[0] - centre[0]).powi(2) + (t[1] - centre[1]).powi(2));
    let mut theta = centre;
    for _ in 0..4 {
        for k in 0..2 {
            let best = maximise(|v| {
                let mut t = theta;
                t[k] = v;
                ll(t) - penalty(t)
            });
            theta[k] = best;
        }
    }
    // Expected (Fisher) information about each ln(sensitivity): sum of n P'^2 / (P (1 - P)),
    // P the chance of moving out, P' its derivative (by central differences).
    let h = 1e-4;
    let info = [0, 1].map(|k| {
        let stay_at = |o: &Outcome, d: f64| {
            let mut t = theta;
            t[k] += d;
            (1.0 - baseline)
                * (1.0
                    - extra(
                        prior,
                        [t[0].exp(), t[1].exp()],
                        o.increase_pct,
                        o.premium_pct,
                    ))
        };
        outcomes
            .iter()
            .filter(|o| o.increased() && o.tenants > 0)
            .map(|o| {
                let p = (1.0 - stay_at(o, 0.0)).clamp(1e-9, 1.0 - 1e-9);
                let dp = (stay_at(o, -h) - stay_at(o, h)) / (2.0 * h);
                f64::from(o.tenants) * dp * dp / (p * (1.0 - p))
            })
            .sum::<f64>()
    });
    (theta, info)
}

/// Baseline move-outs of tenants not increased: (tenants, left).
fn baseline_counts(outcomes: &[Outcome]) -> (f64, f64) {
    outcomes
        .iter()
        .filter(|o| !o.increased())
        .fold((0.0, 0.0), |(n, k), o| {
            (
                n + f64::from(o.tenants),
                k + f64::from(o.moved_out.min(o.tenants)),
            )
        })
}

/// The stay model of a facility from its own outcomes and the rest of the company's (the other
/// facilities' outcomes, not the facility's own).
pub fn learn(prior: &StayPrior, company: &[Outcome], facility: &[Outcome]) -> StayModel {
    let k = prior.baseline_strength;
    let (n_c, left_c) = baseline_counts(company);
    let company_baseline =
        (left_c + k * prior.baseline_move_out_pct / 100.0) / (n_c + k).max(f64::MIN_POSITIVE);
    let (n_f, left_f) = baseline_counts(facility);
    let baseline = (left_f + k * company_baseline) / (n_f + k).max(f64::MIN_POSITIVE);
    let (company_theta, _) = fit(prior, company_baseline, company, [0.0; 2]);
    let (theta, info) = fit(prior, baseline, facility, company_theta);
    let count = |o: &[Outcome], increased: bool| {
        o.iter()
            .filter(|o| o.increased() == increased)
            .map(|o| o.tenants)
            .fold(0u32, u32::saturating_add)
    };
    StayModel {
        prior: *prior,
        baseline: baseline.clamp(0.0, 0.99),
        sensitivity: theta[0].exp(),
        premium_sensitivity: theta[1].exp(),
        company_sensitivity: company_theta[0].exp(),
        company_premium_sensitivity: company_theta[1].exp(),
        evidence_weight: info[0] / (info[0] + prior.sensitivity_strength),
        increased_tenants: count(facility, true),
        baseline_tenants: count(facility, false),
    }
}
