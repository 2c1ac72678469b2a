//! Hand-worked cases of each factor of the target.

use super::*;

#[test]
fn nothing_to_act_on_holds() {
    let r = one(&base());
    assert_eq!((r.recommended_rate, r.action), (100.0, Action::Hold));
    assert!(r.factors.iter().all(|f| f.contribution_pct == 0.0));
    // 0.2 + 0.8 x (0.4 x 0 + 0.3 x 90/90 + 0.3 x 50/50) = 0.68
    assert_eq!(r.confidence, 0.68);
}

#[test]
fn occupancy_above_the_band_raises_the_target() {
    // (99 - 93) x 1 = +6 %: target 106, half the way: +3 pp, 103.
    let r = one(&with_occ(base(), 99.0));
    assert_eq!(factor(&r, "occupancy"), 3.0);
    assert_eq!((r.recommended_rate, r.action), (103.0, Action::Raise));
    assert_eq!(r.change_pct, 3.0);
    // At 97 %: +4 %, target 104, inside the 5 % tolerance: it holds.
    let r = one(&with_occ(base(), 97.0));
    assert_eq!(
        (r.recommended_rate, guardrails(&r)),
        (100.0, vec!["tolerance"])
    );
    // With the tolerance of engines before 2026.11.4 (3 %) it moved half the way: 102.
    let s = settings(json!({"target_tolerance_pct": 3}));
    assert_eq!(
        one_with(&with_occ(base(), 97.0), &s).recommended_rate,
        102.0
    );
}

#[test]
fn occupancy_below_the_band_lowers_the_target_up_to_its_cap() {
    // (88 - 80) x 1 = -8 %: target 92, half the way: 96.
    assert_eq!(one(&with_occ(base(), 80.0)).recommended_rate, 96.0);
    // (88 - 60) x 1 = -28 %, capped at -15 %: target 85, half the way: -7.5 pp, 92.50,
    // rounded 93.
    let r = one(&with_occ(base(), 60.0));
    assert_eq!(factor(&r, "occupancy"), -7.5);
    assert_eq!((r.recommended_rate, r.action), (93.0, Action::Lower));
}

#[test]
fn facility_occupancy_stands_in_for_a_missing_type_occupancy() {
    let mut i = base();
    i.unit_types[0].occupancy_pct = None;
    i.occupancy_pct = Some(99.0);
    assert_eq!(one(&i).recommended_rate, 103.0);
}

#[test]
fn a_lasting_signal_gives_the_same_target_run_after_run() {
    // Competitors at 100, occupancy 75: the target is 87 whatever the rate. From 100: 93.50,
    // rounded 94. From 94: +3.19 pp (median) - 6.91 pp (occupancy) = -3.72 pp, 90.50, rounded
    // 91. From 91 the last 4.4 % are inside the 5 % tolerance: it holds, where the old engine
    // cut again.
    let i = at_100(with_occ(base(), 75.0));
    assert_eq!(one(&i).recommended_rate, 94.0);
    let r = one(&with_rate(i.clone(), 94.0));
    assert_eq!(factor(&r, "competitors"), 3.19);
    assert_eq!(factor(&r, "occupancy"), -6.91);
    assert_eq!(r.recommended_rate, 91.0);
    let r = one(&with_rate(i, 91.0));
    assert_eq!(
        (r.recommended_rate, guardrails(&r)),
        (91.0, vec!["tolerance"])
    );
}

#[test]
fn occupancy_trend_moves_the_target() {
    // 80 % now, 76 % 28 days ago: +1 point a week, x 0.25 = +0.25 %; with -8 % for occupancy
    // the target is 92.25, half the way: +0.125 pp (0.13) - 4 pp, 96.13, rounded 96.
    let mut i = with_occ(base(), 80.0);
    i.unit_types[0].earlier = Some(EarlierReading {
        days_ago: 28,
        occupancy_pct: Some(76.0),
        street_rate: 100.0,
    });
    let r = one(&i);
    assert_eq!(factor(&r, "occupancy_trend"), 0.13);
    assert_eq!(factor(&r, "occupancy"), -4.0);
    assert_eq!(r.recommended_rate, 96.0);
    // Losing 2 points a week: -0.5 %, half of it in the move; capped at -4 % only beyond 16
    // points a week.
    i.unit_types[0].earlier.as_mut().unwrap().occupancy_pct = Some(88.0);
    assert_eq!(factor(&one(&i), "occupancy_trend"), -0.25);
}

#[test]
fn without_competitors_the_anchor_is_the_rate_of_a_few_weeks_ago() {
    // Rate 96 now, 100 28 days ago, occupancy 75: target 100 x 0.87 = 87; anchor factor
    // 0.5 x (100/96 - 1) x 100 = +2.08 pp, occupancy 0.5 x -13 x 100/96 = -6.77 pp:
    // -4.69 pp, 91.50, rounded 91. Run again on the same snapshot from 91: the target is
    // still 87, 4.4 % away: it holds.
    let mut i = with_occ(with_rate(base(), 96.0), 75.0);
    i.unit_types[0].earlier = Some(EarlierReading {
        days_ago: 28,
        occupancy_pct: Some(75.0),
        street_rate: 100.0,
    });
    let r = one(&i);
    assert_eq!(factor(&r, "competitors"), 2.08);
    assert_eq!(factor(&r, "occupancy"), -6.77);
    assert_eq!(r.recommended_rate, 91.0);
    let r = one(&with_rate(i, 91.0));
    assert_eq!(r.action, Action::Hold);
}

#[test]
fn move_in_pace_against_what_vacancy_allows() {
    // Competitors all at 100 (the anchor is the rate). Target 30 a month, day 15 of 30:
    // prorated 15; 92 % of 50 units leaves 4 vacant, so at most 10 + 4 = 14 could have moved
    // in. Pace 10/14 = 0.714: (0.714 - 1) x 4 = -1.14 %, weighed by 15/30: -0.57 %, half the
    // way: -0.29 pp. The target is 0.6 % away: inside the tolerance, the rate holds.
    let mut i = at_100(with_occ(base(), 92.0));
    i.move_ins_target_monthly = Some(30.0);
    i.move_ins_mtd = Some(10.0);
    let r = one(&i);
    assert_eq!(factor(&r, "move_in_pace"), -0.29);
    assert_eq!(
        (r.recommended_rate, guardrails(&r)),
        (100.0, vec!["tolerance"])
    );
    // 30 move-ins: pace 2, +4 % capped at +3 %, weighed by 15/30: +1.5 %, half the way: 0.75.
    i.move_ins_mtd = Some(30.0);
    assert_eq!(factor(&one(&i), "move_in_pace"), 0.75);
    // A size at the top of its band cannot take move-ins: a short pace is not weak demand.
    let mut i = with_occ(i, 95.0);
    i.move_ins_mtd = Some(2.0);
    let r = one(&i);
    assert_eq!(factor(&r, "move_in_pace"), 0.0);
    assert!(r.factors.iter().any(|f| f.detail.contains("not counted")));
}

#[test]
fn the_target_starts_from_the_competitor_median() {
    // Band of 120, 130, 140, 150: P25 125, median 135, P75 145. Rate 100 at 90 %: target 135,
    // half the way: +17.5 pp, 117.50, stopped by the 8 % step at 108.
    let r = one(&comps(base(), &[120.0, 130.0, 140.0, 150.0]));
    let band = r.competitor_band.clone().unwrap();
    assert_eq!((band.p25, band.median, band.p75), (125.0, 135.0, 145.0));
    assert_eq!(factor(&r, "competitors"), 17.5);
    assert_eq!(r.recommended_rate, 108.0);
    assert_eq!(guardrails(&r), ["max_step"]);
    // Rate 160 at 90 %: (135/160 - 1) x 100 x 0.5 = -7.81 pp: 147.50, rounded 148.
    let r = one(&comps(
        with_rate(base(), 160.0),
        &[120.0, 130.0, 140.0, 150.0],
    ));
    assert_eq!(factor(&r, "competitors"), -7.81);
    assert_eq!(r.recommended_rate, 148.0);
}

#[test]
fn a_full_size_is_not_cut_unless_far_above_the_p75() {
    // Rate 150 at 95 %: target 135 x 1.02 = 137.70; the move (-5 pp for the median, +0.9 pp
    // for occupancy) would be a cut, but 150 is only 3.4 % above the P75 of 145: it holds.
    let band = [120.0, 130.0, 140.0, 150.0];
    let r = one(&comps(with_occ(with_rate(base(), 150.0), 95.0), &band));
    assert_eq!(
        (r.recommended_rate, guardrails(&r)),
        (150.0, vec!["full_no_cut"])
    );
    // At 160, more than 10 % above the P75 (159.50): -7.81 + 0.84 = -6.97 pp, 148.85: 149.
    let r = one(&comps(with_occ(with_rate(base(), 160.0), 95.0), &band));
    assert_eq!(factor(&r, "occupancy"), 0.84);
    assert_eq!(r.recommended_rate, 149.0);
}

#[test]
fn seasonality_moves_the_target_but_does_not_cut_a_size_in_its_band() {
    // Competitors at 100. Index 1.3 x 20: +6 %, target 106, half the way: 103.
    let mut i = at_100(base());
    i.seasonality.index = 1.3;
    let r = one(&i);
    assert_eq!(factor(&r, "seasonality"), 3.0);
    assert_eq!(r.recommended_rate, 103.0);
    // November prior 0.92 (-1.6 %) at 90 %: inside the band, no winter cut.
    i.seasonality = SeasonalIndex {
        index: crate::pricing::seasonality::NATIONAL_PRIOR[10],
        own_data: false,
    };
    let r = one(&i);
    assert_eq!(factor(&r, "seasonality"), 0.0);
    assert_eq!(r.action, Action::Hold);
    // At 80 %: -8 % for occupancy and -1.6 % for the season: target 90.40, half the way: 95.20,
    // rounded 95.
    let r = one(&with_occ(i, 80.0));
    assert_eq!(factor(&r, "seasonality"), -0.8);
    assert_eq!(r.recommended_rate, 95.0);
}

#[test]
fn an_active_promotion_offsets_downward_pressure() {
    // Competitors at 100, occupancy 80: -8 %. "50% off" on 10x10 is worth 50/12 = 4.17 % over
    // the stay; half of it (2.08 %) offsets: target 94.08, half the way: -4 + 1.04 = -2.96 pp,
    // 97.04, rounded 97.
    let mut i = at_100(with_occ(base(), 80.0));
    i.promotions = vec![PromotionInput {
        name: "Half off".into(),
        depth_pct: 50.0,
        applies_to: "10x10".into(),
    }];
    let r = one(&i);
    assert_eq!(factor(&r, "promotion"), 1.04);
    assert_eq!(r.recommended_rate, 97.0);
    // A promotion for another size is not counted.
    i.promotions[0].applies_to = "5x5".into();
    assert!(one(&i).factors.iter().all(|f| f.name != "promotion"));
    // Without downward pressure a promotion offsets nothing.
    let mut i = with_occ(base(), 99.0);
    i.promotions = vec![PromotionInput {
        name: "Free month".into(),
        depth_pct: 100.0,
        applies_to: "all".into(),
    }];
    let r = one(&i);
    assert_eq!(factor(&r, "promotion"), 0.0);
    assert_eq!(r.recommended_rate, 103.0);
}
