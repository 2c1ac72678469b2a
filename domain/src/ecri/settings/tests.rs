//! Every range a facility's settings are checked against, at both ends.

use super::*;
use serde_json::{json, Value};

/// (field, lowest allowed, highest allowed); a `stay_prior.` field is set inside the prior.
const RANGES: [(&str, f64, f64); 37] = [
    ("horizon_months", 1.0, 60.0),
    ("min_months_since_move_in", 0.0, 120.0),
    ("min_months_since_increase", 0.0, 120.0),
    ("max_step_pct", 0.0, 100.0),
    ("max_premium_over_street_pct", -50.0, 300.0),
    ("min_increase_pct", 0.0, 100.0),
    ("min_increase_amount", 0.0, 10_000.0),
    ("jurisdiction_cap_pct", 0.0, 100.0),
    ("cap_12_months_pct", 0.0, 100.0),
    ("notice_days", 0.0, 365.0),
    ("stop_loss_excess_move_out_pts", 0.0, 100.0),
    ("stop_loss_min_outcomes", 1.0, 100_000.0),
    ("holdout_pct", 0.0, 50.0),
    ("ramp_share_pct", 0.0, 100.0),
    ("ramp_until_evidence_pct", 0.0, 100.0),
    ("step_test_share_pct", 0.0, 50.0),
    ("step_test_until_evidence_pct", 0.0, 100.0),
    ("uncertainty_pct", 0.0, 100.0),
    ("next_increase_pct", 0.0, 100.0),
    ("stay_prior.baseline_move_out_pct", 0.0, 95.0),
    ("stay_prior.intercept", -10.0, 0.0),
    ("stay_prior.per_increase_pct", 0.0, 1.0),
    ("stay_prior.per_premium_pct", 0.0, 1.0),
    ("stay_prior.moving_cost_pct", 0.0, 200.0),
    ("stay_prior.sensitivity_strength", 0.01, 1000.0),
    ("stay_prior.baseline_strength", 0.0, 100_000.0),
    ("stay_prior.tenure_elasticity", 0.0, 2.0),
    ("stay_prior.tenure_strength", 0.01, 100_000.0),
    ("stay_prior.raised_before_sensitivity", 0.2, 5.0),
    ("stay_prior.raised_before_strength", 0.01, 1000.0),
    ("stay_prior.recent_sensitivity", 0.2, 5.0),
    ("stay_prior.tenure_sensitivity_elasticity", -1.0, 2.0),
    ("stay_prior.tenure_sensitivity_strength", 0.01, 1000.0),
    ("stay_prior.step_pct", 0.0, 100.0),
    ("stay_prior.step_amount", 0.0, 100_000.0),
    ("stay_prior.step_logit", -3.0, 3.0),
    ("stay_prior.step_strength", 0.01, 1000.0),
];

/// The overrides setting `field` to `v`; an integer field gets an integer.
fn overrides(field: &str, v: f64) -> Value {
    let value = if matches!(field, "notice_days" | "stop_loss_min_outcomes") {
        json!(v as i64)
    } else {
        json!(v)
    };
    match field.strip_prefix("stay_prior.") {
        Some(inner) => json!({ "stay_prior": { inner: value } }),
        None => json!({ field: value }),
    }
}

#[test]
fn every_setting_is_accepted_at_both_ends_of_its_range_and_refused_past_them() {
    for (field, min, max) in RANGES {
        for v in [min, max] {
            let s = EcriEngineSettings::with_overrides(&overrides(field, v));
            assert!(s.is_ok(), "{field} = {v}: {:?}", s.err());
        }
        // Just past each end (a whole one for the integer fields, which 0.5 would not parse
        // as).
        let integer = matches!(field, "notice_days" | "stop_loss_min_outcomes");
        let past = if integer { 1.0 } else { (max - min) * 1e-3 };
        for v in [min - past, max + past] {
            if integer && v < 0.0 {
                continue;
            }
            let err = EcriEngineSettings::with_overrides(&overrides(field, v))
                .expect_err(&format!("{field} = {v} accepted"));
            assert_eq!(err.path, format!("ecri_settings.{field}"), "{field} = {v}");
            assert!(
                err.message.contains(&format!("between {min} and {max}")),
                "{field}: {}",
                err.message
            );
        }
    }
}

#[test]
fn a_value_that_is_not_a_number_is_refused() {
    let s = EcriEngineSettings {
        stay_prior: StayPrior {
            step_logit: f64::NAN,
            ..StayPrior::default()
        },
        ..EcriEngineSettings::default()
    };
    assert_eq!(
        s.validate().unwrap_err().path,
        "ecri_settings.stay_prior.step_logit"
    );
    let s = EcriEngineSettings {
        horizon_months: f64::INFINITY,
        ..EcriEngineSettings::default()
    };
    assert_eq!(
        s.validate().unwrap_err().path,
        "ecri_settings.horizon_months"
    );
}
