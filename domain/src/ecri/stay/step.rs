//! Where the step of the curve lies: the round figures (a percent and an amount) past which
//! an increase adds δ to the logit of the extra move-out, and the figures a facility's outcomes
//! may place it at instead of the prior's (docs/ecri.md, "Where the step lies").

use super::StayPrior;
use serde::{Deserialize, Serialize};

/// The round percents where a facility's step may lie.
pub const STEP_PCTS: [f64; 6] = [5.0, 8.0, 10.0, 12.0, 15.0, 20.0];
/// The round amounts (currency, for rents of about 50 to 300 a month) where it may lie.
pub const STEP_AMOUNTS: [f64; 6] = [5.0, 10.0, 15.0, 20.0, 25.0, 30.0];
/// The penalized log-likelihood by which other figures must beat the prior's to be taken.
pub const STEP_FIGURES_MARGIN: f64 = 2.0;

/// The round figures of the step: an increase of `pct` % or more, or of `amount` or more in
/// currency, adds δ to the logit of the extra move-out.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepFigures {
    pub pct: f64,
    pub amount: f64,
}

impl StepFigures {
    /// The prior's figures (`step_pct`, `step_amount`).
    pub fn of(prior: &StayPrior) -> Self {
        Self {
            pct: prior.step_pct,
            amount: prior.step_amount,
        }
    }

    /// Whether an increase reaches the figures: `pct` % or more, or `amount` or more in
    /// currency (an amount of 0 or less is unknown).
    pub fn crossed_by(&self, increase_pct: f64, increase_amount: f64) -> bool {
        let eps = 1e-6;
        increase_pct >= self.pct - eps
            || (increase_amount > 0.0 && increase_amount >= self.amount - eps)
    }

    /// The largest rent under both figures from `rent` (not yet floored to a whole amount).
    pub fn limit(&self, rent: f64) -> f64 {
        (rent * (1.0 + self.pct / 100.0)).min(rent + self.amount)
    }
}
