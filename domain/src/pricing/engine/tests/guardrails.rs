//! Hand-worked cases of the guardrails: step, ceiling, floor, cooldown, reversal, tolerance,
//! no raise below the band, rounding.

use super::*;

#[test]
fn max_step_caps_the_change() {
    // 4 % per point, cap 40 %: occupancy 100 gives +28 %, target 128, half the way: 114,
    // capped at +8 %: 108.
    let s = settings(json!({"occupancy_pp_per_point": 4, "occupancy_max_pp": 40}));
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
    // Competitors all at 100: ceiling 115. Rate 110 at 100 % with 4 % per point: target 128;
    // -4.55 pp (median) + 12.73 pp (occupancy) = +8.18 pp, 119.00, stepped to 118.80, stopped
    // at 115.
    let s = settings(json!({"occupancy_pp_per_point": 4, "occupancy_max_pp": 40}));
    let r = one_with(&at_100(with_occ(with_rate(base(), 110.0), 100.0)), &s);
    assert_eq!(r.recommended_rate, 115.0);
    assert_eq!(guardrails(&r), ["max_step", "ceiling"]);
}

#[test]
fn floor_stops_a_cut_below_the_competitor_p25() {
    // Competitors all at 100, floor at 95 % of the P25: 95. Rate 98 at 60 %: target 85;
    // +1.02 pp (median) - 7.65 pp (occupancy) = -6.63 pp, 91.50, stopped at 95.
    let s = settings(json!({"floor_share_of_p25": 0.95}));
    let r = one_with(&at_100(with_occ(with_rate(base(), 98.0), 60.0)), &s);
    assert_eq!(r.recommended_rate, 95.0);
    assert_eq!(guardrails(&r), ["floor"]);
}

#[test]
fn a_size_below_its_band_is_raised_only_while_it_fills_fast() {
    // Competitors all at 100, rate 80 at 85 % (3 points under the band), no earlier
    // occupancy: target 100 x (1 - 3 %) = 97; +12.50 pp (median) - 1.88 pp (occupancy) =
    // +10.62 pp, 88.50, stepped to 86.40; the size has room, so it holds.
    let i = at_100(with_occ(with_rate(base(), 80.0), 85.0));
    let r = one(&i);
    assert_eq!((r.recommended_rate, r.action), (80.0, Action::Hold));
    assert_eq!(guardrails(&r), ["max_step", "fill_first"]);
    assert_eq!(
        (r.guardrails[1].before, r.guardrails[1].after),
        (86.4, 80.0)
    );
    // The guardrail turned off (0): the raise goes through, 86.40 rounded to 86.
    let off = settings(json!({"fill_first_pp_per_week": 0}));
    assert_eq!(one_with(&i, &off).recommended_rate, 86.0);
    // 71 % four weeks ago at 80: 3.5 points a week, at least the 3 of
    // `fill_first_pp_per_week`, so it may climb: the trend adds 3.5 x 0.25 = 0.875 %
    // (+0.55 pp), the fill at 80 shows no reason to cut (price response 0): +11.17 pp, 88.94,
    // stepped to 86.40, rounded to 86.
    let mut filling = i.clone();
    filling.unit_types[0].earlier = Some(EarlierReading {
        days_ago: 28,
        occupancy_pct: Some(71.0),
        street_rate: 80.0,
    });
    let r = one(&filling);
    assert_eq!(
        (factor(&r, "occupancy_trend"), factor(&r, "price_response")),
        (0.55, 0.0)
    );
    assert_eq!(
        (r.recommended_rate, guardrails(&r)),
        (86.0, vec!["max_step"])
    );
    // In lease-up the target climbs with the fill pace instead: the guardrail does not apply.
    let mut lease_up = i;
    lease_up.mode = Mode::LeaseUp;
    let r = one(&lease_up);
    assert!(!guardrails(&r).contains(&"fill_first"), "{r:#?}");
}

#[test]
fn cooldown_holds_after_a_recent_change() {
    let mut i = with_occ(base(), 99.0);
    i.unit_types[0].last_rate_change = Some(d("2026-11-12"));
    let r = one(&i);
    assert_eq!((r.recommended_rate, r.action), (100.0, Action::Hold));
    assert_eq!(guardrails(&r), ["cooldown"]);
    // Seven days on, the change goes through.
    i.unit_types[0].last_rate_change = Some(d("2026-11-08"));
    assert_eq!(one(&i).recommended_rate, 103.0);
}

#[test]
fn turning_back_on_the_last_change_needs_a_wider_gap() {
    // At 80 % the target is 92 (8 % below); the last change, 20 days ago, was a raise: a cut
    // needs the target more than 10 % away, so the rate holds.
    let mut i = with_occ(base(), 80.0);
    i.unit_types[0].last_rate_change = Some(d("2026-10-26"));
    i.unit_types[0].last_change_raised = Some(true);
    let r = one(&i);
    assert_eq!(
        (r.recommended_rate, guardrails(&r)),
        (100.0, vec!["tolerance"])
    );
    // After a cut, another cut is no turn: 96.
    i.unit_types[0].last_change_raised = Some(false);
    assert_eq!(one(&i).recommended_rate, 96.0);
    // A raise more than 90 days back no longer counts: 96.
    i.unit_types[0].last_change_raised = Some(true);
    i.unit_types[0].last_rate_change = Some(d("2026-08-01"));
    assert_eq!(one(&i).recommended_rate, 96.0);
}

#[test]
fn tiny_changes_hold() {
    // Closing 8 % of the gap: +6 % x 0.08 = +0.48 %, under the 0.5 % worth making.
    let s = settings(json!({"target_approach_share": 0.08}));
    let r = one_with(&with_occ(base(), 99.0), &s);
    assert_eq!((r.recommended_rate, r.action), (100.0, Action::Hold));
    assert_eq!(guardrails(&r), ["min_change"]);
}

#[test]
fn rounding_to_whole_currency_or_cents() {
    // 98.3 %: +5.3 %, half the way +2.65 pp, 102.65: 103, or 102.65 without whole rounding.
    assert_eq!(one(&with_occ(base(), 98.3)).recommended_rate, 103.0);
    let s = settings(json!({"round_to_whole": false}));
    assert_eq!(
        one_with(&with_occ(base(), 98.3), &s).recommended_rate,
        102.65
    );
}
