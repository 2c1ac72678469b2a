//! What the stay model does not yet know, weighed into a decision. A learned sensitivity is a
//! best estimate with a spread: the fit's information about it and the precision of its prior.
//! The fit's estimate is the centre of `ln` of the slope, its median; the slope's mean is above
//! it, by `exp(variance / 2)` for a normal `ln`. Read at the median, an increase is chosen where
//! the estimate is most flattering (the tenants whose slope the model most underrates look the
//! most worth raising), and the less is known the more it flatters. A decision under
//! uncertainty reads the curve at the slope's mean: `ln` of the tenant's slope normal about its
//! estimate, its variance the sum of the parts the tenant's slope is made of (s, and ρ and ρ12
//! where they apply), each from its evidence weight. The premium's slope, the tenure factor γ
//! and the step δ are read at their estimates.
//!
//! The mean, not an average of the curve over the slope's spread: that average is no longer
//! monotone in the slope once the curve saturates (a tenant the model takes for very sensitive
//! would be raised more, on the small chance that it is not), and a more sensitive tenant must
//! never get a larger increase.

use super::{raised_recently, StayModel};

/// The variance of the log of a facility's parameter under a normal prior of precision `tau`
/// at its company's estimate, itself normal about the prior's centre with the same precision:
/// the company's variance `(1 - company_weight) / tau`, the facility's prior variance `1 / tau`
/// plus that, and the facility's information `tau w / (1 - w)` from its own evidence weight `w`.
/// With no evidence anywhere `2 / tau`; it falls toward 0 as the facility's evidence grows.
pub fn log_variance(own_weight: f64, company_weight: f64, tau: f64) -> f64 {
    if tau.is_nan() || tau <= 0.0 {
        return 0.0;
    }
    let w = own_weight.clamp(0.0, 1.0 - 1e-9);
    let company = (1.0 - company_weight.clamp(0.0, 1.0)) / tau;
    let prior = 1.0 / tau + company;
    1.0 / (tau * w / (1.0 - w) + 1.0 / prior)
}

impl StayModel {
    /// The variance of `ln` of a tenant's slope on the increase under this (facility) model:
    /// s's, plus ρ's when the tenant was raised before, plus ρ12's when its last increase is
    /// recent ([`raised_recently`]). Call it on the facility's model, before
    /// [`Self::for_tenant_since`].
    pub fn slope_variance(
        &self,
        past_increases: u32,
        months_since_last_increase: Option<f64>,
    ) -> f64 {
        let p = &self.prior;
        let mut v = log_variance(
            self.evidence_weight,
            self.company_evidence_weight,
            p.sensitivity_strength,
        );
        if past_increases > 0 {
            v += log_variance(
                self.raised_before_evidence_weight,
                self.company_raised_before_evidence_weight,
                p.raised_before_strength,
            );
        }
        if raised_recently(months_since_last_increase) {
            v += log_variance(
                self.recent_evidence_weight,
                self.company_recent_evidence_weight,
                p.raised_before_strength,
            );
        }
        v
    }

    /// The same model with its slope on the increase at the mean of one whose `ln` is normal
    /// about this model's with `variance` (0: the estimate's own): the slope times
    /// `exp(variance / 2)`. Call it on the tenant's model ([`Self::for_tenant_since`]).
    pub fn at_mean_slope(self, variance: f64) -> Self {
        if !(variance > 0.0 && variance.is_finite()) {
            return self;
        }
        Self {
            sensitivity: self.sensitivity * (variance / 2.0).exp(),
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecri::stay::StayPrior;

    #[test]
    fn the_variance_is_two_over_the_precision_with_no_evidence_and_falls_with_it() {
        assert!((log_variance(0.0, 0.0, 4.0) - 0.5).abs() < 1e-12);
        // The company knows all: only the facility's own deviation is unknown.
        assert!((log_variance(0.0, 1.0, 4.0) - 0.25).abs() < 1e-12);
        // Half the facility's slope rests on its outcomes: information = prior precision.
        assert!((log_variance(0.5, 1.0, 4.0) - 0.125).abs() < 1e-12);
        assert!(log_variance(0.99, 0.0, 4.0) < 0.01);
        assert_eq!(log_variance(0.3, 0.3, 0.0), 0.0);
    }

    #[test]
    fn a_tenant_raised_recently_is_less_known_than_one_never_raised() {
        let m = StayModel::from_prior(&StayPrior::default());
        let first = m.slope_variance(0, None);
        let before = m.slope_variance(1, Some(20.0));
        let recent = m.slope_variance(1, Some(7.0));
        // 2 / τ for each: τ = 2 for the slope, τ_ρ = 2 for ρ and ρ12.
        assert!((first - 1.0).abs() < 1e-12, "{first}");
        assert!((before - 2.0).abs() < 1e-12, "{before}");
        assert!((recent - 3.0).abs() < 1e-12, "{recent}");
    }

    #[test]
    fn the_extra_is_the_point_one_without_spread_and_above_it_with_one() {
        let m = StayModel::from_prior(&StayPrior::default());
        let point = m.extra_move_out_of(12.0, 0.0, 12.0);
        assert_eq!(
            m.at_mean_slope(0.0).extra_move_out_of(12.0, 0.0, 12.0),
            point
        );
        let spread = m.at_mean_slope(0.5).extra_move_out_of(12.0, 0.0, 12.0);
        // The mean of a log-normal slope of variance 0.5: the estimate times e^0.25.
        let at_mean = StayModel {
            sensitivity: m.sensitivity * 0.25f64.exp(),
            ..m
        };
        assert_eq!(spread, at_mean.extra_move_out_of(12.0, 0.0, 12.0));
        assert!(spread > point * 1.1 && spread < 1.0, "{point} {spread}");
        assert_eq!(m.at_mean_slope(0.5).extra_move_out_of(0.0, 0.0, 0.0), 0.0);
    }
}
