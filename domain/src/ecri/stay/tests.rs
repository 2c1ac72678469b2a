//! The per-tenant terms of the stay model, by their values: the step at round figures, the
//! recent-increase term (12 months) and the tenure terms β and γ.

use super::*;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() < tol
}

#[test]
fn the_step_is_crossed_at_the_round_percent_or_amount_and_adds_its_logit() {
    let prior = StayPrior::default();
    let crosses = |pct: f64, amount: f64| StepFigures::of(&prior).crossed_by(pct, amount);
    assert!(!crosses(9.99, 0.0));
    assert!(crosses(10.0, 0.0));
    // Within the rounding allowance of 10 %.
    assert!(crosses(10.0 - 1e-7, 0.0));
    // The amount: 10 in currency crosses whatever the percent; 0 is unknown.
    assert!(crosses(5.0, 10.0));
    assert!(!crosses(5.0, 9.99));
    assert!(!crosses(5.0, 0.0));
    // The largest rent under both: 10 % of 80 is 8, 10 of 150 is 6.7 %.
    assert_eq!(StepFigures::of(&prior).limit(80.0), 88.0);
    assert_eq!(StepFigures::of(&prior).limit(150.0), 160.0);
    // The values, with δ = 1: (σ(-3 + 0.06 x + δ) - σ(-3)) / (1 - σ(-3)).
    let m = StayModel {
        step_logit: 1.0,
        ..StayModel::from_prior(&prior)
    };
    assert!(close(m.extra_move_out_of(9.0, 0.0, 9.0), 0.032842, 1e-5));
    assert!(close(m.extra_move_out_of(10.0, 0.0, 10.0), 0.157878, 1e-5));
    // 9 % of 150 is 13.5: the amount crosses.
    assert!(close(m.extra_move_out_of(9.0, 0.0, 13.5), 0.148063, 1e-5));
    // No increase, no extra move-out, step or not.
    assert_eq!(m.extra_move_out_of(0.0, 0.0, 20.0), 0.0);
    // δ = 0 (the prior): no jump at 10 %.
    let flat = StayModel::from_prior(&prior);
    let jump = flat.extra_move_out_of(10.0, 0.0, 10.0) - flat.extra_move_out_of(9.0, 0.0, 9.0);
    assert!(jump < 0.01, "{jump}");
}

#[test]
fn the_recent_increase_term_applies_under_twelve_months_only() {
    let m = StayModel {
        sensitivity: 1.2,
        raised_before_sensitivity: 1.5,
        recent_sensitivity: 2.0,
        ..StayModel::from_prior(&StayPrior::default())
    };
    // Tenure unknown: s1 x ρ x ρ12 under 12 months since the last increase, s1 x ρ at 12.
    let recent = m.for_tenant_since(None, 1, Some(11.9));
    assert!(close(recent.sensitivity, 1.2 * 1.5 * 2.0, 1e-12));
    assert_eq!(recent.recent_sensitivity, 1.0);
    let year = m.for_tenant_since(None, 1, Some(RECENT_INCREASE_MONTHS));
    assert!(close(year.sensitivity, 1.2 * 1.5, 1e-12));
    assert_eq!(year.recent_sensitivity, 2.0);
    // Never increased: s1 alone; the premium's sensitivity is never scaled.
    let never = m.for_tenant_since(None, 0, None);
    assert_eq!(never.sensitivity, 1.2);
    assert_eq!(recent.premium_sensitivity, m.premium_sensitivity);
    // The recent tenant's extra move-out at +10 % is the curve's at s1 = 3.6.
    let by_hand = StayModel {
        sensitivity: 3.6,
        raised_before_sensitivity: 1.0,
        recent_sensitivity: 1.0,
        ..m
    };
    assert!(close(
        recent.extra_move_out(10.0, 0.0),
        by_hand.extra_move_out(10.0, 0.0),
        1e-12
    ));
}

#[test]
fn gamma_scales_the_sensitivity_and_beta_the_baseline_by_tenure() {
    // ((1 + 99) / (1 + 24))^(-0.5) = 0.5; at 0 months (1 / 25)^(-0.5) = 5; negative months
    // count as 0.
    assert!(close(tenure_sensitivity(0.5, 24.0, 99.0), 0.5, 1e-12));
    assert!(close(tenure_sensitivity(0.5, 24.0, 0.0), 5.0, 1e-12));
    assert!(close(tenure_sensitivity(0.5, 24.0, -3.0), 5.0, 1e-12));
    assert_eq!(tenure_sensitivity(0.0, 24.0, 3.0), 1.0);
    // The baseline of 12 % at 24 months, β = 0.4: 23.36 % at 3 months, 7.08 % at 99.
    assert!(close(tenure_baseline(0.12, 0.4, 24.0, 3.0), 0.233615, 1e-5));
    assert!(close(
        tenure_baseline(0.12, 0.4, 24.0, 99.0),
        0.070790,
        1e-5
    ));
    assert!(close(tenure_baseline(0.12, 0.4, 24.0, 24.0), 0.12, 1e-12));
    let m = StayModel {
        sensitivity: 1.2,
        tenure_sensitivity_elasticity: 0.5,
        reference_months: 24.0,
        ..StayModel::from_prior(&StayPrior::default())
    };
    let settled = m.for_tenant_since(Some(99.0), 0, None);
    assert!(close(settled.sensitivity, 0.6, 1e-12));
    assert!(close(settled.baseline, 0.070790, 1e-5));
    assert_eq!(
        (
            settled.tenure_sensitivity_elasticity,
            settled.tenure_elasticity
        ),
        (0.0, 0.0)
    );
    let new = m.for_tenant_since(Some(0.0), 0, None);
    assert!(close(new.sensitivity, 6.0, 1e-12));
    // Unknown tenure: neither term applies, and both stay for a later call.
    let unknown = m.for_tenant_since(None, 0, None);
    assert_eq!(unknown.sensitivity, 1.2);
    assert_eq!(unknown.tenure_sensitivity_elasticity, 0.5);
    assert_eq!(unknown.baseline, m.baseline);
}
