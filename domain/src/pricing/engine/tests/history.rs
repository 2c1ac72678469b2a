//! The price response learned from the size's daily history (engine 2026.11.7).

use super::*;
use crate::pricing::response::{demand_level, learned_response, response_share};

/// Competitors at 100; `days` daily readings before the snapshot at `rate`, `occupancy` %, and
/// `per_day` move-ins each.
fn with_history(days: u32, rate: f64, occupancy: f64, per_day: f64) -> FacilityInput {
    let mut i = at_100(with_occ(base(), occupancy));
    i.unit_types[0].street_rate = rate;
    i.unit_types[0].history = (1..=days)
        .rev()
        .map(|days_ago| DayReading {
            days_ago,
            occupancy_pct: occupancy,
            street_rate: rate,
            move_ins: Some(per_day),
        })
        .collect();
    i
}

#[test]
fn demand_is_move_ins_over_those_the_rates_would_win_at_the_medians_demand() {
    // 50 units, 12-month stays: a demand of 1 brings 50 / 365.25 move-ins a day at the
    // median. At 105 (share 2 / (1 + e^0.3) = 0.851) a size taking 0.07 a day shows demand
    // 0.07 / (0.1369 x 0.851) = 0.601; every day weighs the same when they are alike.
    let i = with_history(120, 105.0, 85.0, 0.07);
    let s = PricingSettings::default();
    let ut = &i.unit_types[0];
    let r = learned_response(i.as_of, ut, ut.occupancy_pct, 100.0, &s).unwrap();
    let expected_a_day = 50.0 / 365.25 * response_share(1.05, 3.0);
    assert!((r.demand - 0.07 / expected_a_day).abs() < 1e-9, "{r:?}");
    let h = r.history.unwrap();
    assert!((h.move_ins - 8.4).abs() < 1e-9, "{h:?}");
    assert!((h.expected - 120.0 * expected_a_day).abs() < 1e-9, "{h:?}");
    // The level at 85 % (taken at the band's low end, 88 %): 0.94 + 0.21 ln(0.601 / 0.95)
    // - 0.01 = 0.834.
    assert!((r.position - demand_level(r.demand, 85.0, &s)).abs() < 1e-12);
    assert!((r.position - 0.834).abs() < 1e-3, "{r:?}");
}

#[test]
fn a_weak_size_with_more_history_is_cut_more_and_a_full_day_teaches_nothing() {
    let s = PricingSettings::default();
    let cut = |days| {
        let rec = one_with(&with_history(days, 100.0, 80.0, 0.07), &s);
        factor(&rec, "price_response")
    };
    // Demand 0.07 / 0.1369 = 0.511: the level at 80 % (taken at 88 %) is 0.94 + 0.21
    // ln(0.511 / 0.95) - 0.01 = 0.800, an offset of -20.0 % counted at the history's trust.
    // 14 days expect 1.9 move-ins (recent days weighing more), trust 1.9 / (1.9 + 16) = 0.10;
    // 180 days 15.3, trust 0.49: -9.8 points, half of which a run moves.
    let (short, long) = (cut(14), cut(180));
    assert!((short + 1.05).abs() < 0.1, "{short}");
    assert!((long + 4.9).abs() < 0.1, "{long}");
    // Days without a vacant unit turned demand away unseen: with only those, the response
    // falls back to the trend window's two readings.
    let mut full = with_history(60, 100.0, 100.0, 0.0);
    full.unit_types[0].occupancy_pct = Some(80.0);
    let ut = &full.unit_types[0];
    let r = learned_response(full.as_of, ut, ut.occupancy_pct, 100.0, &s);
    assert!(r.is_none_or(|r| r.history.is_none()), "{r:?}");
}

#[test]
fn a_strong_size_gets_no_cut_and_the_sentence_cites_its_counts() {
    // 0.2 move-ins a day at the median: demand 1.46, level 0.94 + 0.21 ln(1.46 / 0.95) at 90 %
    // = 1.03 with 1 point inside the band from 92: no cut (the response never raises).
    let rec = one_with(
        &with_history(90, 100.0, 92.0, 0.2),
        &PricingSettings::default(),
    );
    let f = rec
        .factors
        .iter()
        .find(|f| f.name == "price_response")
        .unwrap();
    assert!(
        f.detail.starts_with(
            "over the last 90 days the size took 18 move-ins on its days with a vacant unit, at \
             100% of the competitor median on average, where a demand that keeps all its units \
             let at the median would have brought 12.3"
        ),
        "{}",
        f.detail
    );
    assert!(f.contribution_pct.abs() < 1e-9, "{f:?}");
}

#[test]
fn the_demand_level_matches_the_optimal_policy_of_the_engines_model() {
    // The going concern's optimal policy (dynamic programming with the true demand over three
    // years, `backtest::optimal`) of a 10x10 (120 units, elasticity 3), in the first March, at
    // 90 % occupancy, against the fit. The policy of one year prices 0.03 to 0.05 lower there
    // (0.84, 0.90, 0.96): it lets cheaper for tenants whose rent after 31 December it does not
    // count.
    use crate::pricing::backtest::optimal::Problem;
    let s = PricingSettings::default();
    for demand in [0.7, 0.95, 1.3] {
        let solved = Problem::engines_model(demand, 3).solve().multiple(60, 108);
        let fitted = demand_level(demand, 90.0, &s);
        assert!(
            (solved - fitted).abs() <= 0.015,
            "{demand}: {solved} against {fitted}"
        );
    }
}
