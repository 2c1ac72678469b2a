use super::*;

fn d(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

fn obs(name: &str, rate: f64, promo: Option<&str>, on: &str) -> CompetitorObservation {
    CompetitorObservation {
        competitor: name.into(),
        rate,
        promo: promo.map(Into::into),
        observed_on: d(on),
        tier: None,
    }
}

#[test]
fn promotions_read_from_their_text() {
    assert_eq!(promo_free_months("First month free", 100.0), 1.0);
    assert_eq!(promo_free_months("2 months free!", 100.0), 2.0);
    assert_eq!(promo_free_months("50% off first month", 100.0), 0.5);
    assert_eq!(promo_free_months("50% off 2 months", 100.0), 1.0);
    assert!((promo_free_months("$1 first month", 100.0) - 0.99).abs() < 1e-9);
    assert_eq!(promo_free_months("$25 off", 100.0), 0.25);
    assert_eq!(promo_free_months("Call for specials", 100.0), 0.0);
    assert_eq!(promo_free_months("", 100.0), 0.0);
}

#[test]
fn effective_rate_spreads_the_promotion_over_the_stay() {
    // 120 with a free month over 12 months: 120 x 11/12 = 110.
    assert!((effective_rate(120.0, Some("First month free"), 12.0) - 110.0).abs() < 1e-9);
    assert_eq!(effective_rate(120.0, None, 12.0), 120.0);
    // More free months than the stay: never below zero.
    assert_eq!(effective_rate(120.0, Some("24 months free"), 12.0), 0.0);
}

#[test]
fn equal_weights_give_type_5_percentiles() {
    // Four fresh competitors at 100, 110, 120, 130: positions 1/8, 3/8, 5/8, 7/8.
    // P25 = 100 + 10 x (0.25 - 0.125) / 0.25 = 105; median 115; P75 125.
    let o = [
        obs("A", 100.0, None, "2026-11-20"),
        obs("B", 110.0, None, "2026-11-20"),
        obs("C", 120.0, None, "2026-11-20"),
        obs("D", 130.0, None, "2026-11-20"),
    ];
    let b = competitor_band(&o, d("2026-11-22"), &BandSettings::default()).unwrap();
    assert!((b.p25 - 105.0).abs() < 1e-9, "{b:?}");
    assert!((b.median - 115.0).abs() < 1e-9);
    assert!((b.p75 - 125.0).abs() < 1e-9);
    assert_eq!((b.competitors, b.stale), (4, 0));
}

#[test]
fn latest_observation_per_competitor_and_stale_ones_weigh_less() {
    let o = [
        obs("A", 90.0, None, "2026-10-01"), // replaced by A's newer price
        obs("a ", 100.0, None, "2026-11-20"),
        obs("B", 200.0, None, "2026-10-20"), // 33 days old: stale, weight 0.25
        obs("C", 100.0, None, "2026-11-21"),
        obs("D", 500.0, None, "2026-01-01"), // older than 90 days: dropped
    ];
    let b = competitor_band(&o, d("2026-11-22"), &BandSettings::default()).unwrap();
    assert_eq!((b.competitors, b.stale), (3, 1));
    assert!((b.weight - 2.25).abs() < 1e-9);
    // Sorted: 100 (w1), 100 (w1), 200 (w0.25); positions 0.222, 0.667, 0.944.
    // Median between 100 and 100 = 100; P75 = 100 + 100 x (0.75-0.667)/(0.944-0.667) = 130.
    assert!((b.median - 100.0).abs() < 1e-9);
    assert!((b.p75 - 130.0).abs() < 1e-6, "{b:?}");
}

#[test]
fn no_usable_observation_gives_no_band() {
    let o = [
        obs("A", 0.0, None, "2026-11-20"),
        obs("B", f64::NAN, None, "2026-11-20"),
    ];
    assert!(competitor_band(&o, d("2026-11-22"), &BandSettings::default()).is_none());
    assert!(competitor_band(&[], d("2026-11-22"), &BandSettings::default()).is_none());
}

#[test]
fn lease_up_fill_sits_at_p25_and_never_below_70_percent_of_street() {
    let band = |p25: f64| CompetitorBand {
        p25,
        median: p25 + 10.0,
        p75: p25 + 20.0,
        competitors: 4,
        stale: 0,
        weight: 4.0,
        newest_observed_on: d("2026-11-20"),
        oldest_observed_on: d("2026-11-20"),
    };
    let f = lease_up_fill(150.0, &band(120.4), 0.0, 0.7);
    assert_eq!((f.rate, f.floor_applied), (120.0, false));
    // P25 far below street: the floor (105) wins.
    let f = lease_up_fill(150.0, &band(80.0), 0.0, 0.7);
    assert_eq!((f.rate, f.floor_applied), (105.0, true));
    // Street already below P25: stay at street.
    let f = lease_up_fill(100.0, &band(120.0), 0.0, 0.7);
    assert_eq!(f.rate, 100.0);
}
