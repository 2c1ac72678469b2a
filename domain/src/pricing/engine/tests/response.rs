//! The price response, lease-up, and inputs without rates or competitors.

use super::*;

/// Competitors at 100, the reading 28 days back at `rate_then` and `occ_then`.
fn learning(occ_now: f64, occ_then: f64, rate_then: f64) -> FacilityInput {
    let mut i = at_100(with_occ(base(), occ_now));
    i.unit_types[0].earlier = Some(EarlierReading {
        days_ago: 28,
        occupancy_pct: Some(occ_then),
        street_rate: rate_then,
    });
    i
}

fn learned(i: &FacilityInput) -> crate::pricing::response::Response {
    let ut = &i.unit_types[0];
    crate::pricing::response::learned_response(i.as_of, ut, ut.occupancy_pct, 100.0, &hand_worked())
        .unwrap()
}

#[test]
fn the_price_response_finds_where_the_size_holds_its_fill_target() {
    // 90 % now, 88 % 28 days ago at 100 (the median): move-ins a day 0.02 / 28 plus the
    // move-outs of a 12-month stay, 0.89 / 365.25: 0.003151, held for 365.25 days: demand for
    // 115.1 % of the units at the median. Holding 95 % takes a share of 0.95 / 1.151 = 0.8254
    // of the median's move-ins: 1 + ln(2 / 0.8254 - 1) / 6 = 1.0588 times the median. The
    // response only ever deepens a cut: it adds nothing here, and the rate holds.
    let i = learning(90.0, 88.0, 100.0);
    let r = learned(&i);
    assert!((r.demand - 1.1509).abs() < 1e-4, "{r:?}");
    assert!((r.position - 1.0588).abs() < 1e-4, "{r:?}");
    let rec = one(&i);
    assert_eq!(factor(&rec, "price_response"), 0.0);
    assert_eq!(rec.recommended_rate, 100.0);
    // 80 % then and now at the median: demand for 80 %, 95 % takes a share of 1.1875:
    // 1 + ln(2 / 1.1875 - 1) / 6 = 0.9368, x 0.75 (`response_weight`): -4.74 %; with -8 % for
    // occupancy the target is 87.26, half the way 93.63, rounded 94.
    let i = learning(80.0, 80.0, 100.0);
    assert!((learned(&i).position - 0.9368).abs() < 1e-4);
    let rec = one(&i);
    assert_eq!(factor(&rec, "price_response"), -2.37);
    assert_eq!(rec.recommended_rate, 94.0);
    // The same fill at 110 (a share of 0.7087 won 80 %) shows more demand: it holds 95 % at
    // 1 + ln(2 / 0.8416 - 1) / 6 = 1.0532, no cut.
    let i = learning(80.0, 80.0, 110.0);
    assert!((learned(&i).position - 1.0532).abs() < 1e-4);
    assert_eq!(factor(&one(&i), "price_response"), 0.0);
    // A change 7 of the 28 days ago, from 110 to 100: the move-ins came at 1.075 on average.
    let mut i = learning(80.0, 80.0, 110.0);
    i.unit_types[0].last_rate_change = Some(i.as_of - chrono::Days::new(7));
    assert!((learned(&i).then - 1.075).abs() < 1e-9);
    // A rate 50 times the median (a share of 0 in floating point) teaches nothing.
    let mut i = learning(80.0, 80.0, 5000.0);
    i.unit_types[0].last_rate_change = None;
    let s = settings(json!({"price_elasticity": 10}));
    let ut = &i.unit_types[0];
    assert!(
        crate::pricing::response::learned_response(i.as_of, ut, Some(80.0), 100.0, &s).is_none()
    );
    assert_eq!(factor(&one_with(&i, &s), "price_response"), 0.0);
    // Turned off, it moves nothing.
    let s = settings(json!({"response_weight": 0}));
    assert_eq!(
        factor(
            &one_with(&learning(80.0, 80.0, 100.0), &s),
            "price_response"
        ),
        0.0
    );
}

#[test]
fn the_price_response_stops_at_the_revenue_best_position_when_nothing_fills() {
    // Rent per unit, x times the share, peaks where 1 + q = 6x q, q = e^(6 (x - 1)): 0.7822.
    let best = crate::pricing::response::revenue_best_position(3.0);
    assert!((best - 0.7822).abs() < 1e-4, "{best}");
    // 40 % now and 28 days ago: demand for 40 % of the units, no rate wins the 2.4 times the
    // median's share that 95 % would take: it stops at 0.7822, x 0.75: -16.33 %, capped at
    // 10 % (`response_max_pp`), half the way -5 pp.
    let rec = one(&learning(40.0, 40.0, 100.0));
    assert!(
        (factor(&rec, "price_response") + 5.0).abs() < 1e-9,
        "{rec:#?}"
    );
    assert!(
        rec.factors
            .iter()
            .any(|f| f.detail.contains("no rate near it fills")),
        "{rec:#?}"
    );
}

#[test]
fn a_full_size_learns_no_lower_position_than_it_had() {
    // 100 % then and now at 104: the move-ins seen only replaced the move-outs, demand for
    // 1 / 0.8806 = 113.6 % at the median (a lower bound: what a full size turned away went
    // unseen): 95 % holds at 1 + ln(2 / 0.8366 - 1) / 6 = 1.0550.
    let r = learned(&with_rate(learning(100.0, 100.0, 104.0), 104.0));
    assert!(r.censored && (r.position - 1.0550).abs() < 1e-4, "{r:?}");
    // Full then, 96 % now: the move-ins seen (4 points lost, 7.5 points of move-outs) would
    // put the size near 0.61 times the median, but while it was full it turned demand away
    // unseen: it stands at the 1.04 it had, not at the revenue-best 0.7822, and is not cut.
    let i = with_rate(learning(96.0, 100.0, 104.0), 104.0);
    let r = learned(&i);
    assert!(r.censored && (r.position - 1.04).abs() < 1e-9, "{r:?}");
    assert_eq!(factor(&one(&i), "price_response"), 0.0);
}

#[test]
fn lease_up_targets_the_p25_and_climbs_toward_the_median_when_filling_fast() {
    // The start at the P25 itself (`lease_up_discount_pct` 0, the default before 2026.11.6),
    // the full climb at 3 points a week (the default before 2026.11.10).
    let one = |i: &FacilityInput| {
        one_with(
            i,
            &settings(json!({"lease_up_discount_pct": 0, "lease_up_climb_pp_per_week": 3})),
        )
    };
    // P25 125, median 135. From 150 without a trend: target 125, half the way -8.33 pp, 137.50,
    // stepped to 138.
    let mut i = comps(with_rate(base(), 150.0), &[120.0, 130.0, 140.0, 150.0]);
    i.mode = Mode::LeaseUp;
    // With the default 3 % under the P25 (10 % from 2026.11.6 to 2026.11.9) the target is
    // 121.25: half the way -9.58 pp, 135.63, stepped to 138 as well.
    let r = super::one(&i);
    assert_eq!(factor(&r, "lease_up_fill"), -9.58);
    assert_eq!(r.recommended_rate, 138.0);
    let r = one(&i);
    assert_eq!((r.recommended_rate, r.mode), (138.0, Mode::LeaseUp));
    assert_eq!(factor(&r, "lease_up_fill"), -8.33);
    assert_eq!(guardrails(&r), ["max_step"]);
    // At the P25 (125), 50 % occupied after 38 % 28 days ago: +3 points a week, the full climb
    // (3 a week): target the median 135, half the way: 130.
    let mut i = with_occ(with_rate(i, 125.0), 50.0);
    i.unit_types[0].earlier = Some(EarlierReading {
        days_ago: 28,
        occupancy_pct: Some(38.0),
        street_rate: 125.0,
    });
    assert_eq!(one(&i).recommended_rate, 130.0);
    // +2 points a week: two thirds of the climb, target 131.67, half the way: 128.33, rounded
    // 128.
    i.unit_types[0].earlier.as_mut().unwrap().occupancy_pct = Some(42.0);
    assert_eq!(one(&i).recommended_rate, 128.0);
    // With the defaults 2 points a week is the full climb (since 2026.11.10): the median 135,
    // half the way: 130.
    assert_eq!(super::one(&i).recommended_rate, 130.0);
    // +1 point a week: a third of the climb, target 128.33, 2.7 % away: inside the tolerance.
    i.unit_types[0].earlier.as_mut().unwrap().occupancy_pct = Some(46.0);
    assert_eq!(one(&i).recommended_rate, 125.0);
}

#[test]
fn lease_up_never_goes_below_its_share_of_street() {
    // With 97 % of street as the lease-up floor: 145.50, rounded up to 146 inside the bounds.
    let mut i = comps(with_rate(base(), 150.0), &[120.0, 130.0, 140.0, 150.0]);
    i.mode = Mode::LeaseUp;
    let s = settings(json!({"lease_up_floor_share": 0.97}));
    let r = one_with(&i, &s);
    assert_eq!(r.recommended_rate, 146.0);
    assert_eq!(guardrails(&r), ["max_step", "lease_up_floor"]);
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
fn without_competitors_or_an_earlier_rate_the_rate_holds() {
    let mut i = with_occ(base(), 70.0);
    i.unit_types[0].earlier = None;
    let r = one(&i);
    assert_eq!((r.recommended_rate, r.action), (100.0, Action::Hold));
    assert!(r.factors[0].detail.contains("the rate holds"), "{r:?}");
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

#[test]
fn every_factor_explains_itself_in_one_sentence() {
    let mut i = comps(with_occ(base(), 80.0), &[120.0, 130.0, 140.0, 150.0]);
    i.move_ins_target_monthly = Some(30.0);
    i.move_ins_mtd = Some(10.0);
    i.unit_types[0].earlier = Some(EarlierReading {
        days_ago: 28,
        occupancy_pct: Some(76.0),
        street_rate: 100.0,
    });
    i.promotions = vec![PromotionInput {
        name: "Half off".into(),
        depth_pct: 50.0,
        applies_to: "all".into(),
    }];
    let r = one(&i);
    assert_eq!(r.factors.len(), 7, "{r:#?}");
    for f in &r.factors {
        let d = f.detail.trim_end_matches('.');
        assert!(
            !d.is_empty() && !d.contains(". "),
            "{}: {}",
            f.name,
            f.detail
        );
    }
}

/// The sentence of a factor.
fn detail(rec: &Recommendation, name: &str) -> String {
    rec.factors
        .iter()
        .find(|f| f.name == name)
        .map(|f| f.detail.clone())
        .unwrap_or_default()
}

#[test]
fn the_price_response_sentence_cites_the_figures_it_rests_on() {
    // 99 % full four weeks ago, 96.7 % now, at the median: the move-ins of the window would keep
    // fewer units let than the size holds today. The sentence says so from the fill it saw,
    // instead of "demand for N %" next to a size almost full.
    let i = learning(96.7, 99.0, 100.0);
    let rec = one(&i);
    let d = detail(&rec, "price_response");
    assert!(
        d.starts_with("over the last 28 days the size went from 99% to 97% full at 100% of the competitor median"),
        "{d}"
    );
    let r = learned(&i);
    if factor(&rec, "price_response") < 0.0 {
        assert!(
            d.contains(&format!(
                "move-ins at that pace would keep {}% of its units let at the median rate",
                (r.demand * 100.0).round()
            )),
            "{d}"
        );
    }
    // 62 % full for 120 days at 1.27 times the median: it does not hold its fill target where
    // it stands, and the sentence does not say it would; it says where the fill target lies.
    let mut i = with_rate(learning(62.0, 62.0, 127.0), 127.0);
    i.unit_types[0].earlier.as_mut().unwrap().days_ago = 120;
    let r = learned(&i);
    let rec = one(&i);
    let d = detail(&rec, "price_response");
    assert_eq!(factor(&rec, "price_response"), 0.0);
    assert!(
        d.starts_with("over the last 120 days the size went from 62% to 62% full at 127% of the competitor median"),
        "{d}"
    );
    assert!(
        d.contains(&format!(
            "would reach its fill target (response_fill_pct) at about {}% of the median",
            (r.position * 100.0).round()
        )),
        "{d}"
    );
    assert!(
        r.position < 1.27,
        "its fill target lies below where it stands: {r:?}"
    );
    assert!(!d.contains("would hold its fill target at or above"), "{d}");
}
