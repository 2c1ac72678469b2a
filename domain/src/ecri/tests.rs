use super::backtest::report::{markdown, run};
use super::*;
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;

/// The prior with no baseline move-outs, so the hand-worked figures pay whole months.
fn flat_prior() -> StayPrior {
    StayPrior {
        baseline_move_out_pct: 0.0,
        ..StayPrior::default()
    }
}

/// Settings for figures worked by hand: the curve read at the estimate (`uncertainty_pct` 0;
/// the slope's mean has its own worked case), each increase weighed as if it were the last
/// (`next_increase_pct` 0; the next increase has its own worked case), no notice delay, the
/// prior above.
fn hand_settings() -> EcriEngineSettings {
    EcriEngineSettings {
        notice_days: 0,
        stay_prior: flat_prior(),
        uncertainty_pct: 0.0,
        next_increase_pct: 0.0,
        ..EcriEngineSettings::default()
    }
}

fn tenant(id: &str, rent: f64, count: u32) -> TenantInput {
    TenantInput {
        tenant_id: id.to_owned(),
        size: "10x10".to_owned(),
        rent,
        months_since_move_in: Some(20.0),
        months_since_last_increase: Some(12.0),
        customer_id: None,
        flags: Vec::new(),
        tenant_count: count,
        tier: None,
        pending_increase: None,
        past_increases: 0,
        rent_12_months_ago: None,
        rent_at_cap_base: None,
    }
}

fn market(street: f64, median: f64, occupancy: f64, ins: f64, outs: f64) -> SizeMarket {
    SizeMarket {
        street_rate: street,
        of_tier: false,
        competitor_low: Some(median * 0.9),
        competitor_median: Some(median),
        competitor_high: Some(median * 1.1),
        units: 100,
        occupancy_pct: occupancy,
        move_ins_per_month: ins,
        move_outs_per_month: Some(outs),
    }
}

// Extra move-outs of the prior: e(x, g) = (σ(-3 + 0.06 x + 0.12 max(0, g - 20)) - σ(-3)) /
// (1 - σ(-3)), σ(-3) = 0.047426. With no baseline and no notice delay a staying tenant pays
// the new rent 12 months; gain = (1 - e) x 12 x increase - e x move-out cost.

#[test]
fn a_tenant_at_market_in_a_full_size_goes_to_the_street_cap() {
    // Rent 100 = street = median; the size is full (100 of 100) with 10 move-ins a month: the
    // vacated unit is the one vacant, let in D = 1 x (2.957 + 1) / (10 x 2.957 + 1 / 1.5) =
    // 0.1309 month. Move-out cost = 100 x 12 - 100 x (12 - 0.1309) = 13.09.
    // Caps: step 25 % -> 125, street + 20 % -> 120. At 120 (+20 %, no premium beyond 20 %):
    // e = (σ(-1.8) - 0.047426) / 0.952574 = (0.141851 - 0.047426) / 0.952574 = 0.099126;
    // gain = 0.900874 x 12 x 20 - 0.099126 x 13.09 = 216.21 - 1.30 = 214.91. At 121 it would
    // be 219.23 (e = 0.123643): still rising, so the street cap binds.
    let s = hand_settings();
    let model = StayModel::from_prior(&s.stay_prior);
    let r = decide(
        &tenant("a", 100.0, 1),
        &market(100.0, 100.0, 100.0, 10.0, 10.0),
        &model,
        &s,
    );
    assert_eq!(
        (r.new_rent, r.increase, r.increase_pct),
        (120.0, 20.0, 20.0)
    );
    assert_eq!(r.stay_probability, 90.09);
    assert_eq!(r.expected_gain, 214.91);
    assert_eq!(
        r.binding_guardrail,
        Some(decide::Guardrail::MaxPremiumOverStreet)
    );
    let names: Vec<&str> = r.reasons.iter().map(|r| r.name.as_str()).collect();
    for name in [
        "max_premium_over_street",
        "sensitivity",
        "move_out_cost",
        "stay_probability",
        "expected_gain",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
}

#[test]
fn a_tenant_far_above_market_in_an_emptying_size_gets_nothing() {
    // Rent 100 against a street rate and median of 80 (25 % above, beyond the 20 % moving
    // pays); 70 % occupied (30 vacant), 5 move-ins a month: a vacant unit re-lets in
    // D = 30 x (2.957 + 1) / (5 x 2.957 + 30 / 1.5) = 3.41 months, and a move-out costs
    // 12 x 100 - 80 x (12 - 3.41) = 513.01. Smallest increase: min(3 % of 100, 5) = 3 -> 103,
    // 28.75 % over the median: e = (σ(-3 + 0.18 + 0.12 x 8.75) - 0.047426) / 0.952574 =
    // 0.103001; gain = 0.896999 x 36 - 0.103001 x 513.01 = 32.29 - 52.84 = -20.55. Larger
    // increases lose more. Best: none, and no guardrail is to blame.
    let s = EcriEngineSettings {
        max_premium_over_street_pct: 50.0,
        ..hand_settings()
    };
    let model = StayModel::from_prior(&s.stay_prior);
    let r = decide(
        &tenant("b", 100.0, 1),
        &market(80.0, 80.0, 70.0, 5.0, 6.0),
        &model,
        &s,
    );
    assert_eq!((r.new_rent, r.increase), (100.0, 0.0));
    assert_eq!(r.binding_guardrail, None);
    assert_eq!(r.expected_gain, 0.0);
    assert_eq!(r.stay_probability, 100.0);
    assert!(r.reasons.iter().any(|r| r.name == "no_increase_pays"));
}

#[test]
fn a_cohort_below_street_is_raised_to_where_the_gain_peaks() {
    // 10 tenants at 80, street and median 100; 90 of 100 units let and one move-in a month:
    // a vacant unit re-lets in D = 10 x (2.957 + 1) / (1 x 2.957 + 10 / 1.5) = 4.112 months,
    // and a move-out costs 80 x 12 - 100 x (12 - 4.112) = 171.17. Caps at 50 % leave room up
    // to 120. The gain peaks at 109 (+36.25 %): e = (σ(-3 + 2.175) - 0.047426) / 0.952574 =
    // 0.270087; gain per tenant = 0.729913 x 12 x 29 - 0.270087 x 171.17 = 254.01 - 46.23 =
    // 207.78; 2077.8 for the cohort.
    let s = EcriEngineSettings {
        max_step_pct: 50.0,
        max_premium_over_street_pct: 50.0,
        ..hand_settings()
    };
    let model = StayModel::from_prior(&s.stay_prior);
    // Move-outs unknown: the vacated unit re-lets at the gross pace (with 6 move-outs a month
    // against 1 move-in the size empties, and it would stay empty the whole horizon).
    let m = SizeMarket {
        move_outs_per_month: None,
        ..market(100.0, 100.0, 90.0, 1.0, 6.0)
    };
    let r = decide(&tenant("c", 80.0, 10), &m, &model, &s);
    assert_eq!(
        (r.new_rent, r.increase, r.increase_pct),
        (109.0, 29.0, 36.25)
    );
    assert_eq!(r.stay_probability, 72.99);
    assert_eq!(r.expected_gain, 2077.8);
    assert_eq!(r.binding_guardrail, None);
    // At twice the prior's sensitivity the peak is at 93 (+16.25 %, e = 0.222344):
    // 0.777656 x 12 x 13 - 0.222344 x 171.17 = 121.31 - 38.06 = 83.26 per tenant (832.56
    // for the cohort, unrounded).
    let r = decide(&tenant("c", 80.0, 10), &m, &model.with_sensitivity(2.0), &s);
    assert_eq!((r.new_rent, r.expected_gain), (93.0, 832.56));
    // The same cohort weighing what the prior leaves unknown (`uncertainty_pct` 100): with no
    // outcomes `ln` of the slope has variance 2 / 2 = 1 and the curve is read at the slope's
    // mean, 1 x e^0.5 = 1.648721. The peak moves down to 96 (+20 %):
    // e = (σ(-3 + 0.06 x 1.648721 x 20) - 0.047426) / 0.952574 = 0.228122;
    // gain = 0.771878 x 12 x 16 - 0.228122 x 171.17 = 148.20 - 39.05 = 109.15 per tenant
    // (1091.54 for the cohort, unrounded).
    let unsure = EcriEngineSettings {
        uncertainty_pct: 100.0,
        ..s.clone()
    };
    let r = decide(&tenant("c", 80.0, 10), &m, &model, &unsure);
    assert_eq!(
        (
            r.new_rent,
            r.increase_pct,
            r.stay_probability,
            r.expected_gain
        ),
        (96.0, 20.0, 77.19, 1091.54)
    );
    // Half of it: variance 0.25, slope e^0.125.
    let half = EcriEngineSettings {
        uncertainty_pct: 50.0,
        ..s.clone()
    };
    // Half the spread: between the two (102, the whole spread of a prior of precision 4).
    let r = decide(&tenant("c", 80.0, 10), &m, &model, &half);
    assert!(r.new_rent > 96.0 && r.new_rent < 109.0, "{}", r.new_rent);
}

#[test]
fn eligibility_guardrails_hold_an_increase_with_their_reason() {
    let s = EcriEngineSettings::default();
    let model = StayModel::from_prior(&s.stay_prior);
    let m = market(130.0, 130.0, 95.0, 10.0, 8.0);
    let cases = [
        (
            TenantInput {
                flags: vec!["Business".to_owned()],
                ..tenant("f", 100.0, 1)
            },
            decide::Guardrail::ExcludedFlag,
        ),
        (
            TenantInput {
                flags: vec!["do_not_increase".to_owned()],
                ..tenant("f", 100.0, 1)
            },
            decide::Guardrail::ExcludedFlag,
        ),
        (
            TenantInput {
                months_since_move_in: Some(2.0),
                months_since_last_increase: None,
                ..tenant("f", 100.0, 1)
            },
            decide::Guardrail::MonthsSinceMoveIn,
        ),
        (
            TenantInput {
                months_since_last_increase: Some(3.0),
                ..tenant("f", 100.0, 1)
            },
            decide::Guardrail::MonthsSinceIncrease,
        ),
        (
            tenant("f", 200.0, 1),
            decide::Guardrail::MaxPremiumOverStreet,
        ),
    ];
    for (t, g) in cases {
        let r = decide(&t, &m, &model, &s);
        assert_eq!((r.increase, r.binding_guardrail), (0.0, Some(g)), "{t:?}");
        assert!(!r.reasons.is_empty());
    }
    // The excluded flags are a setting: without `business` in it, the tenant is increased.
    let open = EcriEngineSettings {
        excluded_flags: vec!["delinquent".to_owned()],
        ..s.clone()
    };
    let t = TenantInput {
        flags: vec!["business".to_owned()],
        ..tenant("f", 100.0, 1)
    };
    assert!(decide(&t, &m, &model, &open).increase > 0.0);
    // A legal cap of 7 %: at most +7 on 100.
    let capped = EcriEngineSettings {
        jurisdiction_cap_pct: Some(7.0),
        ..s.clone()
    };
    let r = decide(&tenant("j", 100.0, 1), &m, &model, &capped);
    assert_eq!(
        (r.increase, r.binding_guardrail),
        (7.0, Some(decide::Guardrail::JurisdictionCap))
    );
}

fn roll_markets() -> BTreeMap<String, SizeMarket> {
    BTreeMap::from([("10x10".to_owned(), market(130.0, 130.0, 95.0, 10.0, 8.0))])
}

#[test]
fn a_customers_units_go_up_by_one_percent_or_not_at_all() {
    let s = EcriEngineSettings::default();
    let model = StayModel::from_prior(&s.stay_prior);
    let unit = |id: &str, rent: f64, since: f64| TenantInput {
        customer_id: Some("c1".to_owned()),
        months_since_last_increase: Some(since),
        ..tenant(id, rent, 1)
    };
    let roll = vec![unit("u1", 100.0, 12.0), unit("u2", 120.0, 12.0)];
    let out = decide_facility(&roll, &roll_markets(), &model, &[], &s);
    assert!(out[0].increase > 0.0 && out[1].increase > 0.0, "{out:?}");
    assert!(
        (out[0].increase_pct - out[1].increase_pct).abs() < 1.0,
        "{out:?}"
    );
    // One unit too recently increased: neither is.
    let roll = vec![unit("u1", 100.0, 12.0), unit("u2", 120.0, 2.0)];
    let out = decide_facility(&roll, &roll_markets(), &model, &[], &s);
    assert_eq!((out[0].increase, out[1].increase), (0.0, 0.0));
    assert_eq!(
        out[0].binding_guardrail,
        Some(decide::Guardrail::CustomerUnits)
    );
    // The rule off: each on its own.
    let apart = EcriEngineSettings {
        raise_customer_units_together: false,
        ..s
    };
    let out = decide_facility(&roll, &roll_markets(), &model, &[], &apart);
    assert!(out[0].increase > 0.0 && out[1].increase == 0.0);
}

#[test]
fn the_stop_loss_holds_a_facility_whose_increased_tenants_leave_fast() {
    let s = EcriEngineSettings::default();
    let model = StayModel::from_prior(&s.stay_prior);
    let outcome = |inc: f64, tenants: u32, left: u32| Outcome {
        increase_pct: inc,
        premium_pct: 0.0,
        tenants,
        moved_out: left,
        ..Outcome::default()
    };
    // 40 % of 30 increased tenants left against 10 % of those not increased: 30 points over.
    let recent = [outcome(12.0, 30, 12), outcome(0.0, 200, 20)];
    assert_eq!(stop_loss(&recent, &s), Some((40.0, 10.0, 30)));
    let out = decide_facility(
        &[tenant("t", 100.0, 1)],
        &roll_markets(),
        &model,
        &recent,
        &s,
    );
    assert_eq!(
        (out[0].increase, out[0].binding_guardrail),
        (0.0, Some(decide::Guardrail::StopLoss))
    );
    // Under the minimum of outcomes, or within the margin, no hold.
    assert_eq!(stop_loss(&[outcome(12.0, 10, 8)], &s), None);
    assert_eq!(
        stop_loss(&[outcome(12.0, 30, 7), outcome(0.0, 100, 10)], &s),
        None
    );
}

#[test]
fn settings_name_the_bad_field() {
    assert!(EcriEngineSettings::default().validate().is_ok());
    let bad = EcriEngineSettings {
        max_step_pct: -1.0,
        ..EcriEngineSettings::default()
    };
    assert_eq!(
        bad.validate().unwrap_err().path,
        "ecri_settings.max_step_pct"
    );
    let bad = EcriEngineSettings {
        stay_prior: StayPrior {
            intercept: 2.0,
            ..StayPrior::default()
        },
        ..EcriEngineSettings::default()
    };
    assert_eq!(
        bad.validate().unwrap_err().path,
        "ecri_settings.stay_prior.intercept"
    );
    let parsed: EcriEngineSettings =
        serde_json::from_str(r#"{"jurisdiction_cap_pct": 10, "notice_days": 45}"#).unwrap();
    assert_eq!(parsed.jurisdiction_cap_pct, Some(10.0));
    assert_eq!(parsed.max_step_pct, 25.0);
    assert!(serde_json::from_str::<EcriEngineSettings>(r#"{"max_stp": 1}"#).is_err());
}

/// Outcomes drawn from the prior curve at sensitivity `s` (both slopes) and baseline `b`.
fn simulated_outcomes(seed: u64, n: usize, s: f64, b: f64) -> Vec<Outcome> {
    let truth = StayModel {
        baseline: b,
        ..StayModel::from_prior(&StayPrior::default()).with_sensitivity(s)
    };
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let (inc, premium) = if i % 2 == 0 {
                (rng.gen_range(3.0..30.0), rng.gen_range(-20.0..45.0))
            } else {
                (0.0, rng.gen_range(-20.0..20.0))
            };
            let stay = truth.stay_probability(inc, premium);
            let left = rng.gen::<f64>() > stay;
            if inc == 0.0 {
                // Not increased: watched until it leaves (the day drawn at the even hazard
                // of the baseline, given that it left within the window) or the window ends.
                let h = -(1.0 - b).ln();
                let watched = if left {
                    -(1.0 - rng.gen::<f64>() * b).ln() / h
                } else {
                    1.0
                };
                return Outcome {
                    premium_pct: premium,
                    ..evidence::baseline_outcome(None, 1, u32::from(left), watched)
                };
            }
            Outcome {
                increase_pct: inc,
                premium_pct: premium,
                tenants: 1,
                moved_out: u32::from(left),
                ..Outcome::default()
            }
        })
        .collect()
}

/// The median over three seeds of 20,000 tenants each: one seed's slope at 0.5 lands anywhere
/// in 0.4-0.8 (the prior's pull toward 1 and the noise of a few hundred extra move-outs), the
/// median within a quarter of the truth.
#[test]
fn learning_recovers_a_known_sensitivity_and_baseline() {
    let prior = StayPrior::default();
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for s in [0.5, 2.0] {
        let models: Vec<StayModel> = (1..=3)
            .map(|seed| learn(&prior, &[], &simulated_outcomes(seed, 20_000, s, 0.15)))
            .collect();
        let increase = median(models.iter().map(|m| m.sensitivity).collect());
        let premium = median(models.iter().map(|m| m.premium_sensitivity).collect());
        assert!(
            (increase / s - 1.0).abs() < 0.25,
            "increase slope {increase} for {s}"
        );
        assert!(
            (premium / s - 1.0).abs() < 0.25,
            "premium slope {premium} for {s}"
        );
        for m in &models {
            assert!((m.baseline - 0.15).abs() < 0.01, "{}", m.baseline);
            assert!(m.evidence_weight > 0.85, "{}", m.evidence_weight);
        }
    }
}

#[test]
fn thin_evidence_stays_near_the_prior_and_the_company_fills_in() {
    let prior = StayPrior::default();
    // Five increased tenants of a facility twice as sensitive as the prior: moved toward it,
    // the estimate resting on them for less than half (1.75 since the prior's precision is 2;
    // 1.4 at 4).
    let thin = simulated_outcomes(3, 10, 2.0, 0.12);
    let m = learn(&prior, &[], &thin);
    assert!((1.0..2.0).contains(&m.sensitivity), "{}", m.sensitivity);
    assert!(m.evidence_weight < 0.5, "{}", m.evidence_weight);
    // No outcome of its own: the prior exactly.
    let none = learn(&prior, &[], &[]);
    assert_eq!(
        (none.sensitivity, none.baseline),
        (1.0, prior.baseline_move_out_pct / 100.0)
    );
    // The rest of the company saw a sensitivity of 2: a new facility starts near it.
    let company = simulated_outcomes(4, 6_000, 2.0, 0.12);
    let m = learn(&prior, &company, &[]);
    assert!((1.6..2.5).contains(&m.sensitivity), "{}", m.sensitivity);
    assert_eq!(m.evidence_weight, 0.0);
}

fn settings_strategy() -> impl Strategy<Value = EcriEngineSettings> {
    (
        (0.0f64..12.0, 0.0f64..12.0, 0.0f64..50.0, -10.0f64..60.0),
        (
            0.0f64..10.0,
            0.0f64..20.0,
            proptest::option::of(0.0f64..20.0),
        ),
        (0u32..90, 1.0f64..36.0),
    )
        .prop_map(
            |((move_in, since, step, premium), (min_pct, min_amount, cap), (notice, horizon))| {
                EcriEngineSettings {
                    min_months_since_move_in: move_in,
                    min_months_since_increase: since,
                    max_step_pct: step,
                    max_premium_over_street_pct: premium,
                    min_increase_pct: min_pct,
                    min_increase_amount: min_amount,
                    jurisdiction_cap_pct: cap,
                    notice_days: notice,
                    horizon_months: horizon,
                    ..EcriEngineSettings::default()
                }
            },
        )
}

fn tenant_strategy() -> impl Strategy<Value = TenantInput> {
    (
        5.0f64..800.0,
        proptest::option::of(0.0f64..60.0),
        proptest::option::of(0.0f64..30.0),
        1u32..50,
        proptest::sample::select(vec!["", "business", "delinquent", "do_not_increase", "vip"]),
    )
        .prop_map(|(rent, move_in, since, count, flag)| TenantInput {
            tenant_id: "p".to_owned(),
            size: "10x10".to_owned(),
            rent,
            months_since_move_in: move_in,
            months_since_last_increase: since,
            customer_id: None,
            flags: if flag.is_empty() {
                Vec::new()
            } else {
                vec![flag.to_owned()]
            },
            tenant_count: count,
            tier: None,
            pending_increase: None,
            past_increases: 0,
            rent_12_months_ago: None,
            rent_at_cap_base: None,
        })
}

fn market_strategy() -> impl Strategy<Value = SizeMarket> {
    (
        5.0f64..800.0,
        0.5f64..1.5,
        0.0f64..100.0,
        0.0f64..30.0,
        0.0f64..30.0,
    )
        .prop_map(|(street, median, occupancy, ins, outs)| SizeMarket {
            street_rate: street,
            of_tier: false,
            competitor_low: None,
            competitor_median: Some(street * median),
            competitor_high: None,
            units: 100,
            occupancy_pct: occupancy,
            move_ins_per_month: ins,
            move_outs_per_month: Some(outs),
        })
}

/// Every guardrail a suggested increase must respect.
fn check_guardrails(
    t: &TenantInput,
    m: &SizeMarket,
    s: &EcriEngineSettings,
    r: &Suggestion,
) -> Result<(), TestCaseError> {
    prop_assert!(r.increase >= 0.0);
    if r.increase == 0.0 {
        prop_assert_eq!(r.new_rent, round(t.rent));
        return Ok(());
    }
    let inc = r.new_rent - t.rent;
    prop_assert_eq!(r.new_rent, r.new_rent.floor(), "whole currency");
    prop_assert!(s.excludes(&t.flags).is_none());
    let tenure = t.months_since_move_in.or(t.months_since_last_increase);
    prop_assert!(tenure.is_some_and(|m| m >= s.min_months_since_move_in));
    if let Some(since) = t.months_since_last_increase {
        prop_assert!(since >= s.min_months_since_increase);
    }
    prop_assert!(inc <= t.rent * s.max_step_pct / 100.0 + 1e-6);
    prop_assert!(
        r.new_rent <= m.street_rate * (1.0 + s.max_premium_over_street_pct / 100.0) + 1e-6
    );
    if let Some(cap) = s.jurisdiction_cap_pct {
        prop_assert!(inc <= t.rent * cap / 100.0 + 1e-6);
    }
    prop_assert!(inc >= (t.rent * s.min_increase_pct / 100.0).min(s.min_increase_amount) - 1e-6);
    prop_assert!(r.expected_gain >= 0.0);
    Ok(())
}

fn round(v: f64) -> f64 {
    crate::values::round2(v)
}

proptest! {
    /// Whatever the tenant, market, model and settings, an increase breaks no guardrail.
    #[test]
    fn an_increase_never_breaks_a_guardrail(
        t in tenant_strategy(),
        m in market_strategy(),
        s in settings_strategy(),
        sensitivity in 0.05f64..5.0,
        baseline in 0.0f64..60.0,
    ) {
        let model = StayModel::from_prior(&StayPrior {
            baseline_move_out_pct: baseline,
            ..StayPrior::default()
        })
        .with_sensitivity(sensitivity);
        let r = decide(&t, &m, &model, &s);
        check_guardrails(&t, &m, &s, &r)?;
    }

    /// The same over a roll of one customer's units and lone tenants, with the stop-loss.
    #[test]
    fn a_roll_never_breaks_a_guardrail(
        tenants in proptest::collection::vec((tenant_strategy(), any::<bool>()), 1..6),
        m in market_strategy(),
        s in settings_strategy(),
        left in 0u32..30,
    ) {
        let roll: Vec<TenantInput> = tenants
            .into_iter()
            .map(|(t, shared)| TenantInput {
                customer_id: shared.then(|| "c".to_owned()),
                ..t
            })
            .collect();
        let markets = BTreeMap::from([("10x10".to_owned(), m)]);
        let model = StayModel::from_prior(&s.stay_prior);
        let recent = [Outcome { increase_pct: 10.0, premium_pct: 0.0, tenants: 30, moved_out: left, ..Outcome::default() }];
        let out = decide_facility(&roll, &markets, &model, &recent, &s);
        let held = stop_loss(&recent, &s).is_some();
        for (t, r) in roll.iter().zip(&out) {
            check_guardrails(t, &m, &s, r)?;
            prop_assert!(!(held && r.increase > 0.0), "stop-loss");
        }
        if s.raise_customer_units_together {
            let shared: Vec<&Suggestion> = roll
                .iter()
                .zip(&out)
                .filter(|(t, _)| t.customer_id.is_some())
                .map(|(_, r)| r)
                .collect();
            if shared.len() > 1 {
                let raised = shared.iter().filter(|r| r.increase > 0.0).count();
                prop_assert!(raised == 0 || raised == shared.len(), "all or none");
            }
        }
    }

    /// A facility more sensitive to increases never gets a larger one.
    #[test]
    fn a_larger_sensitivity_never_gives_a_larger_increase(
        t in tenant_strategy(),
        m in market_strategy(),
        s in settings_strategy(),
        low in 0.05f64..4.0,
        factor in 1.0f64..4.0,
    ) {
        let model = StayModel::from_prior(&s.stay_prior);
        let a = decide(&t, &m, &model.with_sensitivity(low), &s);
        let b = decide(&t, &m, &model.with_sensitivity(low * factor), &s);
        prop_assert!(b.increase <= a.increase, "{} then {}", a.increase, b.increase);
        prop_assert!(b.expected_gain <= a.expected_gain + 0.01);
    }

    /// A cohort is its tenants alike: the same increase for any count, the gain in proportion.
    #[test]
    fn a_cohort_gets_the_increase_of_one_tenant_and_gains_in_proportion(
        t in tenant_strategy(),
        m in market_strategy(),
        n in 2u32..200,
    ) {
        let s = EcriEngineSettings::default();
        let model = StayModel::from_prior(&s.stay_prior);
        let one = decide(&TenantInput { tenant_count: 1, ..t.clone() }, &m, &model, &s);
        let many = decide(&TenantInput { tenant_count: n, ..t }, &m, &model, &s);
        prop_assert_eq!(one.new_rent, many.new_rent);
        prop_assert_eq!(one.stay_probability, many.stay_probability);
        prop_assert!((many.expected_gain - one.expected_gain * f64::from(n)).abs() <= 0.01 * f64::from(n));
    }
}

#[test]
#[ignore = "the backtest, run by hand (tests/src/bin/ecri_backtest.rs prints the same)"]
fn backtest_by_hand() {
    let tune = super::backtest::seeds::TuneSeeds::engine();
    let report_seeds = super::backtest::seeds::ReportSeeds::range(101, 10).expect("report seeds");
    let settings: EcriEngineSettings = std::env::var("ECRI_SETTINGS")
        .map(|s| serde_json::from_str(&s).expect("settings JSON"))
        .unwrap_or_default();
    let families = super::backtest::Family::ALL;
    println!(
        "{}",
        markdown(&run(
            &families,
            &tune,
            &report_seeds,
            &settings,
            super::backtest::Years::ONE
        ))
    );
}

#[test]
fn a_rent_set_by_hand_passes_every_guardrail_of_the_engine_or_names_the_one_it_breaks() {
    let s = hand_settings();
    let model = StayModel::from_prior(&s.stay_prior);
    let m = market(100.0, 100.0, 100.0, 10.0, 0.0);
    let t = tenant("A", 100.0, 1);
    // Within the caps (step 125, street + 20 % = 120) and above the minimum (3): priced with
    // the same stay model as the engine's own choice.
    let at = reprice(&t, &m, &model, &s, 110.0).expect("110 is allowed");
    assert_eq!(at.new_rent, 110.0);
    assert_eq!(at.increase, 10.0);
    let engine = decide(&t, &m, &model, &s);
    let same = reprice(&t, &m, &model, &s, engine.new_rent).expect("the engine's rent");
    assert_eq!(same.expected_gain, engine.expected_gain);
    assert_eq!(same.stay_probability, engine.stay_probability);
    assert!(at.reasons.iter().any(|r| r.name == "edited"));
    // Each guardrail by name.
    let refused = |t: &TenantInput, s: &EcriEngineSettings, rent: f64| {
        reprice(t, &m, &model, s, rent).unwrap_err().guardrail
    };
    assert_eq!(refused(&t, &s, 121.0), Guardrail::MaxPremiumOverStreet);
    let wide = EcriEngineSettings {
        max_premium_over_street_pct: 100.0,
        ..s.clone()
    };
    assert_eq!(refused(&t, &wide, 126.0), Guardrail::MaxStep);
    let capped = EcriEngineSettings {
        jurisdiction_cap_pct: Some(10.0),
        ..s.clone()
    };
    assert_eq!(refused(&t, &capped, 111.0), Guardrail::JurisdictionCap);
    assert!(reprice(&t, &m, &model, &capped, 110.0).is_ok());
    assert_eq!(refused(&t, &s, 102.0), Guardrail::MinimumIncrease);
    assert_eq!(refused(&t, &s, 100.0), Guardrail::MinimumIncrease);
    assert_eq!(refused(&t, &s, f64::NAN), Guardrail::MinimumIncrease);
    let flagged = TenantInput {
        flags: vec!["delinquent".to_owned()],
        ..t.clone()
    };
    assert_eq!(refused(&flagged, &s, 110.0), Guardrail::ExcludedFlag);
    let new = TenantInput {
        months_since_move_in: Some(2.0),
        months_since_last_increase: None,
        ..t.clone()
    };
    assert_eq!(refused(&new, &s, 110.0), Guardrail::MonthsSinceMoveIn);
    let text = reprice(&t, &m, &model, &s, 121.0).unwrap_err().text;
    assert!(text.contains("120.00"), "{text}");
}
