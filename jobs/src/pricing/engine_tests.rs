//! Hand-worked cases for each factor and guardrail, and properties that hold for any input.
//! Unless a case says otherwise: default settings, 15 November (day 15 of 30), seasonality
//! index 1.0, one 10x10 unit type at 100 with 50 units and 90 % occupancy (inside the 88-93 %
//! band), 90 days of history, no competitors, no promotions: every factor is 0.

use super::*;
use crate::pricing::band::CompetitorObservation;
use proptest::prelude::*;
use serde_json::json;

fn d(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

fn base() -> FacilityInput {
    FacilityInput {
        as_of: d("2026-11-15"),
        mode: Mode::Stabilized,
        occupancy_pct: None,
        move_ins_mtd: None,
        move_ins_target_monthly: None,
        seasonality: SeasonalIndex {
            index: 1.0,
            own_data: true,
        },
        history_days: 90,
        unit_types: vec![UnitTypeInput {
            size: "10x10".into(),
            tier: "standard".into(),
            street_rate: 100.0,
            occupancy_pct: Some(90.0),
            total_units: Some(50),
            last_rate_change: None,
        }],
        promotions: vec![],
        competitors: vec![],
    }
}

fn with_occ(mut i: FacilityInput, occ: f64) -> FacilityInput {
    i.unit_types[0].occupancy_pct = Some(occ);
    i
}

fn with_rate(mut i: FacilityInput, rate: f64) -> FacilityInput {
    i.unit_types[0].street_rate = rate;
    i
}

fn comps(mut i: FacilityInput, rates: &[f64]) -> FacilityInput {
    i.competitors = rates
        .iter()
        .enumerate()
        .map(|(n, r)| {
            (
                "10x10".to_string(),
                CompetitorObservation {
                    competitor: format!("C{n}"),
                    rate: *r,
                    promo: None,
                    observed_on: d("2026-11-14"),
                },
            )
        })
        .collect();
    i
}

fn one(i: &FacilityInput) -> Recommendation {
    one_with(i, &PricingSettings::default())
}

fn one_with(i: &FacilityInput, s: &PricingSettings) -> Recommendation {
    let mut out = recommend(i, s);
    assert_eq!(out.len(), 1);
    out.remove(0)
}

fn factor(r: &Recommendation, name: &str) -> f64 {
    r.factors
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no factor {name} in {r:#?}"))
        .contribution_pct
}

fn guardrails(r: &Recommendation) -> Vec<&str> {
    r.guardrails.iter().map(|g| g.name.as_str()).collect()
}

#[test]
fn nothing_to_act_on_holds() {
    let r = one(&base());
    assert_eq!((r.recommended_rate, r.action), (100.0, Action::Hold));
    assert!(r.factors.iter().all(|f| f.contribution_pct == 0.0));
    // 0.2 + 0.8 x (0.4 x 0 + 0.3 x 90/90 + 0.3 x 50/50) = 0.68
    assert_eq!(r.confidence, 0.68);
}

#[test]
fn occupancy_above_the_band_pushes_up() {
    // (97 - 93) x 0.5 = +2 pp: 102.
    let r = one(&with_occ(base(), 97.0));
    assert_eq!(factor(&r, "occupancy"), 2.0);
    assert_eq!((r.recommended_rate, r.action), (102.0, Action::Raise));
    assert_eq!(r.change_pct, 2.0);
}

#[test]
fn occupancy_below_the_band_eases_down_up_to_its_cap() {
    // (88 - 80) x 0.5 = -4 pp: 96.
    assert_eq!(one(&with_occ(base(), 80.0)).recommended_rate, 96.0);
    // (88 - 60) x 0.5 = -14 pp, capped at -6 pp: 94.
    let r = one(&with_occ(base(), 60.0));
    assert_eq!(factor(&r, "occupancy"), -6.0);
    assert_eq!((r.recommended_rate, r.action), (94.0, Action::Lower));
}

#[test]
fn facility_occupancy_stands_in_for_a_missing_type_occupancy() {
    let mut i = base();
    i.unit_types[0].occupancy_pct = None;
    i.occupancy_pct = Some(97.0);
    assert_eq!(one(&i).recommended_rate, 102.0);
}

#[test]
fn move_in_pace_against_the_prorated_target() {
    // Target 30 a month, day 15 of 30: prorated 15. 10 move-ins: pace 2/3,
    // (2/3 - 1) x 4 = -1.33 pp: 98.67, rounded to 99.
    let mut i = base();
    i.move_ins_target_monthly = Some(30.0);
    i.move_ins_mtd = Some(10.0);
    let r = one(&i);
    assert_eq!(factor(&r, "move_in_pace"), -1.33);
    assert_eq!((r.recommended_rate, r.action), (99.0, Action::Lower));
    // 30 move-ins: pace 2, +4 pp capped at +3 pp: 103.
    i.move_ins_mtd = Some(30.0);
    let r = one(&i);
    assert_eq!(factor(&r, "move_in_pace"), 3.0);
    assert_eq!(r.recommended_rate, 103.0);
}

#[test]
fn competitors_push_a_cheap_rate_with_healthy_occupancy_toward_the_median() {
    // Band of 120, 130, 140, 150: P25 125, median 135, P75 145, strength 4/5.
    // (135/100 - 1) x 100 x 0.5 x 0.8 = +14 pp, capped at +6 pp: 106.
    let r = one(&comps(base(), &[120.0, 130.0, 140.0, 150.0]));
    let band = r.competitor_band.clone().unwrap();
    assert_eq!((band.p25, band.median, band.p75), (125.0, 135.0, 145.0));
    assert_eq!(factor(&r, "competitors"), 6.0);
    assert_eq!(r.recommended_rate, 106.0);
}

#[test]
fn competitors_pull_an_expensive_rate_with_soft_occupancy_toward_the_median() {
    // Rate 160 above P75 145, occupancy 90 (not above the band):
    // (135/160 - 1) x 100 x 0.5 x 0.8 = -6.25 pp, capped at -6 pp: 150.4, rounded 150.
    let r = one(&comps(
        with_rate(base(), 160.0),
        &[120.0, 130.0, 140.0, 150.0],
    ));
    assert_eq!(factor(&r, "competitors"), -6.0);
    assert_eq!(r.recommended_rate, 150.0);
    // With occupancy above the band the same rate gets no competitor pull.
    let r = one(&comps(
        with_occ(with_rate(base(), 160.0), 95.0),
        &[120.0, 130.0, 140.0, 150.0],
    ));
    assert_eq!(factor(&r, "competitors"), 0.0);
}

#[test]
fn seasonality_index_moves_the_rate() {
    // Index 1.15 x 20 pp per unit: +3 pp.
    let mut i = base();
    i.seasonality.index = 1.15;
    let r = one(&i);
    assert_eq!(factor(&r, "seasonality"), 3.0);
    assert_eq!(r.recommended_rate, 103.0);
    // November prior 0.92: -1.6 pp, 98.4, rounded 98.
    i.seasonality = SeasonalIndex {
        index: crate::pricing::seasonality::NATIONAL_PRIOR[10],
        own_data: false,
    };
    let r = one(&i);
    assert_eq!(factor(&r, "seasonality"), -1.6);
    assert_eq!(r.recommended_rate, 98.0);
}

#[test]
fn an_active_promotion_offsets_downward_pressure() {
    // Occupancy 80: -4 pp. "50% off" on 10x10 is worth 50/12 = 4.17 pp over the stay; half of
    // it (2.08 pp) offsets: -1.92 pp, 98.08, rounded 98.
    let mut i = with_occ(base(), 80.0);
    i.promotions = vec![PromotionInput {
        name: "Half off".into(),
        depth_pct: 50.0,
        applies_to: "10x10".into(),
    }];
    let r = one(&i);
    assert_eq!(factor(&r, "promotion"), 2.08);
    assert_eq!(r.recommended_rate, 98.0);
    // A promotion for another size is not counted.
    i.promotions[0].applies_to = "5x5".into();
    assert!(one(&i).factors.iter().all(|f| f.name != "promotion"));
    // Without downward pressure a promotion offsets nothing.
    let mut i = with_occ(base(), 97.0);
    i.promotions = vec![PromotionInput {
        name: "Free month".into(),
        depth_pct: 100.0,
        applies_to: "all".into(),
    }];
    let r = one(&i);
    assert_eq!(factor(&r, "promotion"), 0.0);
    assert_eq!(r.recommended_rate, 102.0);
}

#[test]
fn max_step_caps_the_change() {
    // 2 pp per point, cap 20 pp: occupancy 100 gives +14 pp, 114, capped at +8 %: 108.
    let s = PricingSettings::with_overrides(&json!({
        "occupancy_pp_per_point": 2, "occupancy_max_pp": 20
    }))
    .unwrap();
    let r = one_with(&with_occ(base(), 100.0), &s);
    assert_eq!(r.recommended_rate, 108.0);
    assert_eq!(guardrails(&r), ["max_step"]);
    assert_eq!(
        (r.guardrails[0].before, r.guardrails[0].after),
        (114.0, 108.0)
    );
}

#[test]
fn ceiling_stops_a_raise_above_the_competitor_p75() {
    // Competitors all at 100: ceiling 115. Rate 112 at 100 % occupancy: +3.5 pp, 115.92,
    // stopped at 115.
    let r = one(&comps(
        with_occ(with_rate(base(), 112.0), 100.0),
        &[100.0, 100.0, 100.0, 100.0],
    ));
    assert_eq!(r.recommended_rate, 115.0);
    assert_eq!(guardrails(&r), ["ceiling"]);
}

#[test]
fn floor_stops_a_cut_below_the_competitor_p25() {
    // Competitors all at 100: floor 85. Rate 88 at 60 %: -6 pp, 82.72, stopped at 85.
    let r = one(&comps(
        with_occ(with_rate(base(), 88.0), 60.0),
        &[100.0, 100.0, 100.0, 100.0],
    ));
    assert_eq!(r.recommended_rate, 85.0);
    assert_eq!(guardrails(&r), ["floor"]);
}

#[test]
fn cooldown_holds_after_a_recent_change() {
    let mut i = with_occ(base(), 97.0);
    i.unit_types[0].last_rate_change = Some(d("2026-11-12"));
    let r = one(&i);
    assert_eq!((r.recommended_rate, r.action), (100.0, Action::Hold));
    assert_eq!(guardrails(&r), ["cooldown"]);
    // Seven days on, the change goes through.
    i.unit_types[0].last_rate_change = Some(d("2026-11-08"));
    assert_eq!(one(&i).recommended_rate, 102.0);
}

#[test]
fn tiny_changes_hold() {
    // 93.5 %: +0.25 pp, under the 0.5 % worth making.
    let r = one(&with_occ(base(), 93.5));
    assert_eq!((r.recommended_rate, r.action), (100.0, Action::Hold));
    assert_eq!(guardrails(&r), ["min_change"]);
}

#[test]
fn rounding_to_whole_currency_or_cents() {
    // 94.3 %: +0.65 pp, 100.65: 101, or 100.65 without whole rounding.
    assert_eq!(one(&with_occ(base(), 94.3)).recommended_rate, 101.0);
    let s = PricingSettings::with_overrides(&json!({"round_to_whole": false})).unwrap();
    assert_eq!(
        one_with(&with_occ(base(), 94.3), &s).recommended_rate,
        100.65
    );
}

#[test]
fn lease_up_fills_at_the_competitor_p25_never_below_70_percent() {
    let mut i = comps(with_rate(base(), 150.0), &[120.0, 130.0, 140.0, 150.0]);
    i.mode = Mode::LeaseUp;
    let r = one(&i);
    assert_eq!((r.recommended_rate, r.mode), (125.0, Mode::LeaseUp));
    assert_eq!(factor(&r, "lease_up_fill"), -16.67);
    assert!(r.guardrails.is_empty());
    // From 200 the P25 would be a 37.5 % cut: the floor of 70 % (140) holds.
    let r = one(&with_rate(i, 200.0));
    assert_eq!(r.recommended_rate, 140.0);
    assert_eq!(guardrails(&r), ["lease_up_floor"]);
}

#[test]
fn lease_up_without_competitors_uses_the_stabilized_factors() {
    let mut i = with_occ(base(), 80.0);
    i.mode = Mode::LeaseUp;
    let r = one(&i);
    assert_eq!(factor(&r, "lease_up_fill"), 0.0);
    assert_eq!(r.recommended_rate, 96.0);
}

#[test]
fn a_unit_type_without_a_rate_holds() {
    let r = one(&with_rate(base(), 0.0));
    assert_eq!(
        (r.recommended_rate, r.action, r.confidence),
        (0.0, Action::Hold, 0.0)
    );
    assert_eq!(guardrails(&r), ["no_current_rate"]);
}

#[test]
fn competitor_sizes_match_loosely_and_only_their_own_size() {
    let mut i = comps(base(), &[120.0, 130.0, 140.0, 150.0]);
    i.competitors[0].0 = "10 X 10".into();
    i.competitors[1].0 = "5x5".into();
    assert_eq!(one(&i).competitor_band.unwrap().competitors, 3);
}

// ---- properties ----

fn settings_strategy() -> impl Strategy<Value = PricingSettings> {
    (
        0.0f64..50.0,
        0.0f64..1.0,
        1.0f64..3.0,
        0i64..30,
        any::<bool>(),
        0.0f64..50.0,
        0.3f64..1.0,
    )
        .prop_map(
            |(step, floor, ceiling, cooldown, round, disc, lu_floor)| PricingSettings {
                max_step_pct: step,
                floor_share_of_p25: floor,
                ceiling_share_of_p75: ceiling,
                cooldown_days: cooldown,
                round_to_whole: round,
                lease_up_discount_pct: disc,
                lease_up_floor_share: lu_floor,
                occupancy_max_pp: 30.0,
                competitor_max_pp: 30.0,
                ..PricingSettings::default()
            },
        )
}

fn input_strategy() -> impl Strategy<Value = FacilityInput> {
    let unit = (
        prop::sample::select(vec!["5x5", "5x10", "10x10", "10x15", "10x20"]),
        0.0f64..2000.0,
        prop::option::of(0.0f64..100.0),
        prop::option::of(0u32..500),
        prop::option::of(0i64..60),
    );
    let comp = (
        prop::sample::select(vec!["5x5", "5x10", "10x10", "10x15", "10x20"]),
        prop::sample::select(vec!["A", "B", "C", "D", "E", "F"]),
        0.0f64..2000.0,
        prop::option::of(prop::sample::select(vec![
            "First month free",
            "50% off 2 months",
            "$1 first month",
            "$500 off",
            "nonsense",
        ])),
        0i64..200,
    );
    (
        any::<bool>(),
        prop::option::of(0.0f64..100.0),
        prop::option::of(0.0f64..200.0),
        prop::option::of(0.0f64..100.0),
        0.5f64..1.5,
        0u32..1000,
        prop::collection::vec(unit, 0..20),
        prop::collection::vec(comp, 0..30),
        prop::collection::vec(
            (
                0.0f64..100.0,
                prop::sample::select(vec!["all", "10x10", "5x5 standard"]),
            ),
            0..3,
        ),
        0u32..365,
    )
        .prop_map(
            |(lease_up, occ, mtd, target, season, hist, units, comps, promos, day)| {
                let as_of = d("2026-01-01") + chrono::Days::new(u64::from(day));
                FacilityInput {
                    as_of,
                    mode: if lease_up {
                        Mode::LeaseUp
                    } else {
                        Mode::Stabilized
                    },
                    occupancy_pct: occ,
                    move_ins_mtd: mtd,
                    move_ins_target_monthly: target,
                    seasonality: SeasonalIndex {
                        index: season,
                        own_data: hist > 365,
                    },
                    history_days: hist,
                    unit_types: units
                        .into_iter()
                        .map(|(size, rate, occ, n, changed)| UnitTypeInput {
                            size: size.into(),
                            tier: "standard".into(),
                            street_rate: rate,
                            occupancy_pct: occ,
                            total_units: n,
                            last_rate_change: changed.map(|c| as_of - chrono::Days::new(c as u64)),
                        })
                        .collect(),
                    promotions: promos
                        .into_iter()
                        .map(|(depth, to)| PromotionInput {
                            name: "p".into(),
                            depth_pct: depth,
                            applies_to: to.into(),
                        })
                        .collect(),
                    competitors: comps
                        .into_iter()
                        .map(|(size, name, rate, promo, age)| {
                            (
                                size.to_string(),
                                CompetitorObservation {
                                    competitor: name.into(),
                                    rate,
                                    promo: promo.map(Into::into),
                                    observed_on: as_of - chrono::Days::new(age as u64),
                                },
                            )
                        })
                        .collect(),
                }
            },
        )
}

const EPS: f64 = 1e-9;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn guardrails_hold_for_any_input(input in input_strategy(), s in settings_strategy()) {
        let out = recommend(&input, &s);
        prop_assert_eq!(out.len(), input.unit_types.len());
        for (r, ut) in out.iter().zip(&input.unit_types) {
            prop_assert_eq!(&r.size, &ut.size);
            prop_assert!(r.recommended_rate.is_finite());
            prop_assert!((0.0..=1.0).contains(&r.confidence));
            prop_assert!(r.factors.iter().all(|f| f.contribution_pct.is_finite()));
            let cur = ut.street_rate;
            if cur <= 0.0 {
                prop_assert_eq!(r.recommended_rate, cur);
                continue;
            }
            let lease_up_fill = r.mode == Mode::LeaseUp && r.competitor_band.is_some();
            if lease_up_fill {
                let band = r.competitor_band.as_ref().unwrap();
                let floor = cur * s.lease_up_floor_share;
                // Never below 70 % (the configured share) of street.
                prop_assert!(r.recommended_rate >= floor - EPS, "{r:?}");
                // At or below the P25 (unless the floor is above it), never above street.
                prop_assert!(r.recommended_rate <= band.p25.max(floor) + EPS, "{r:?}");
                prop_assert!(r.recommended_rate <= cur + EPS);
            } else {
                // The step cap is never broken.
                let step = s.max_step_pct / 100.0;
                prop_assert!(r.recommended_rate <= cur * (1.0 + step) + EPS, "{r:?}");
                prop_assert!(r.recommended_rate >= cur * (1.0 - step) - EPS, "{r:?}");
                if let Some(b) = &r.competitor_band {
                    // A raise never goes above the ceiling, a cut never below the floor.
                    if r.recommended_rate > cur {
                        prop_assert!(r.recommended_rate <= round2(b.p75 * s.ceiling_share_of_p75) + EPS, "{r:?}");
                    }
                    if r.recommended_rate < cur {
                        prop_assert!(r.recommended_rate >= round2(b.p25 * s.floor_share_of_p25) - EPS, "{r:?}");
                    }
                }
                // Inside the cooldown the rate holds.
                if ut.last_rate_change.is_some_and(|c| (input.as_of - c).num_days() < s.cooldown_days) {
                    prop_assert_eq!(r.recommended_rate, cur);
                }
            }
            let expected_action = if r.recommended_rate > cur {
                Action::Raise
            } else if r.recommended_rate < cur {
                Action::Lower
            } else {
                Action::Hold
            };
            prop_assert_eq!(r.action, expected_action);
        }
    }

    #[test]
    fn band_percentiles_are_ordered_and_inside_the_rates(
        rates in prop::collection::vec((1.0f64..5000.0, 0i64..100), 1..40)
    ) {
        let as_of = d("2026-06-01");
        let obs: Vec<CompetitorObservation> = rates
            .iter()
            .enumerate()
            .map(|(i, (r, age))| CompetitorObservation {
                competitor: format!("c{i}"),
                rate: *r,
                promo: None,
                observed_on: as_of - chrono::Days::new(*age as u64),
            })
            .collect();
        if let Some(b) = crate::pricing::band::competitor_band(&obs, as_of, &Default::default()) {
            let min = rates.iter().map(|r| r.0).fold(f64::MAX, f64::min);
            let max = rates.iter().map(|r| r.0).fold(f64::MIN, f64::max);
            prop_assert!(b.p25 <= b.median + EPS && b.median <= b.p75 + EPS);
            prop_assert!(b.p25 >= min - EPS && b.p75 <= max + EPS);
        }
    }
}
