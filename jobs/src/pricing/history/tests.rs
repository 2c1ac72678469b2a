use super::*;

fn d(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

fn obs(competitor: &str, rate: f64, on: &str) -> CompetitorObservation {
    CompetitorObservation {
        competitor: competitor.into(),
        rate,
        promo: None,
        observed_on: d(on),
        tier: None,
    }
}

#[test]
fn a_band_uses_only_what_was_seen_by_its_day() {
    let o = vec![
        obs("A", 100.0, "2026-11-01"),
        obs("B", 120.0, "2026-11-01"),
        obs("A", 140.0, "2026-11-05"),
    ];
    let points = bands_by_day(
        &o,
        &[d("2026-10-31"), d("2026-11-02"), d("2026-11-06")],
        &BandSettings::default(),
    );
    // Nothing seen by 31 October; A at 100 then at 140.
    assert_eq!(points.len(), 2);
    assert_eq!((points[0].date, points[0].median), (d("2026-11-02"), 110.0));
    assert_eq!((points[1].date, points[1].median), (d("2026-11-06"), 130.0));
    assert_eq!(points[1].competitors, 2);
}

#[test]
fn observations_too_old_for_a_day_are_left_out_of_its_band() {
    let settings = BandSettings {
        max_age_days: 10,
        ..BandSettings::default()
    };
    let o = vec![
        obs("B", 200.0, "2026-11-12"),
        obs("A", 100.0, "2026-11-01"),
        obs("A", 120.0, "2026-11-20"),
    ];
    let points = bands_by_day(
        &o,
        &[d("2026-11-05"), d("2026-11-14"), d("2026-11-25")],
        &settings,
    );
    let medians: Vec<(NaiveDate, f64, usize)> = points
        .iter()
        .map(|p| (p.date, p.median, p.competitors))
        .collect();
    // 14 November: A's 1 November rate is 13 days old, past the limit; 25 November: B's is.
    assert_eq!(
        medians,
        vec![
            (d("2026-11-05"), 100.0, 1),
            (d("2026-11-14"), 200.0, 1),
            (d("2026-11-25"), 120.0, 1)
        ]
    );
}

#[test]
fn each_day_has_the_band_of_everything_seen_by_then() {
    // Irregular observations: names differing in case and spaces, several a day for one
    // competitor, unusable rates, promotions, stale and too old ones, equal rates of
    // different weights. Each day's band must be the band of every observation up to it, in day order.
    let settings = BandSettings {
        max_age_days: 20,
        stale_after_days: 5,
        ..BandSettings::default()
    };
    let names = ["A", " a", "B", "b ", "C", "D", "E"];
    let promos = [
        None,
        Some("First month free"),
        None,
        Some("50% off 2 months"),
    ];
    let first = d("2026-01-01");
    let mut seed: u64 = 7;
    let mut next = |n: u64| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (seed >> 33) % n
    };
    let o: Vec<CompetitorObservation> = (0..600)
        .map(|_| {
            let rate = match next(10) {
                0 => 0.0,
                1 => f64::NAN,
                2..=4 => 100.0,
                _ => 80.0 + next(40) as f64,
            };
            CompetitorObservation {
                competitor: names[next(7) as usize].into(),
                rate,
                promo: promos[next(4) as usize].map(Into::into),
                observed_on: first + chrono::Days::new(next(150)),
                tier: None,
            }
        })
        .collect();
    let dates: Vec<NaiveDate> = (0..170)
        .filter(|i| i % 3 != 1)
        .map(|i| first + chrono::Days::new(i))
        .collect();
    // What the band read before: the day-sorted observations up to the day.
    let mut sorted = o.clone();
    sorted.sort_by_key(|x| x.observed_on);
    let expected: Vec<BandPoint> = dates
        .iter()
        .filter_map(|&date| {
            let seen: Vec<CompetitorObservation> = sorted
                .iter()
                .filter(|x| x.observed_on <= date)
                .cloned()
                .collect();
            competitor_band(&seen, date, &settings).map(|b| BandPoint::of(date, &b))
        })
        .collect();
    assert!(expected.len() > 100);
    assert_eq!(bands_by_day(&o, &dates, &settings), expected);
}

#[test]
fn the_target_is_prorated_to_the_day() {
    assert_eq!(prorated(30.0, d("2026-11-15")), 15.0);
    assert_eq!(prorated(31.0, d("2026-12-31")), 31.0);
    assert_eq!(prorated(28.0, d("2026-02-07")), 7.0);
}

fn tiered(competitor: &str, tier: &str, rate: f64, on: &str) -> CompetitorObservation {
    CompetitorObservation {
        tier: Some(tier.into()),
        ..obs(competitor, rate, on)
    }
}

fn series(size: &str, tier: &str, rates: &[(&str, f64)]) -> UnitTypeSeries {
    UnitTypeSeries {
        size: size.into(),
        tier: tier.into(),
        points: rates
            .iter()
            .map(|(on, r)| UnitTypePoint {
                date: d(on),
                street_rate: *r,
                occupancy_pct: Some(90.0),
            })
            .collect(),
    }
}

/// A band point's day and median (to cents).
type Median = (NaiveDate, f64);

#[test]
fn each_tier_has_a_band_of_its_own_set_else_of_the_size_converted_by_the_days_premium() {
    // 10x20: one climate competitor (C0) until C1 and C2 come on 8 November; four drive-up
    // ones at 150-180. The facility's climate is at 250 on 1 November, 300 from 5 November,
    // its drive-up at 200: a premium of 25 % then 50 %.
    let mut o = vec![tiered("C0", "Climate", 300.0, "2026-11-01")];
    for (i, r) in [150.0, 160.0, 170.0, 180.0].into_iter().enumerate() {
        o.push(tiered(&format!("D{i}"), "drive-up", r, "2026-11-01"));
    }
    o.push(tiered("C1", "climate", 310.0, "2026-11-08"));
    o.push(tiered("C2", "climate", 320.0, "2026-11-08"));
    let mut observations = BTreeMap::new();
    observations.insert("10x20".to_owned(), o);
    // 5x5: rates without a tier. 10x10: a tier named, but no unit type of the size.
    observations.insert("5x5".to_owned(), vec![obs("X", 50.0, "2026-11-01")]);
    observations.insert(
        "10x10".to_owned(),
        vec![tiered("Y", "climate", 100.0, "2026-11-01")],
    );
    let dates = [d("2026-11-01"), d("2026-11-05"), d("2026-11-08")];
    let unit_types = [
        series("5x5", "", &[("2026-11-01", 55.0)]),
        series(
            "10x20",
            "climate",
            &[
                ("2026-11-01", 250.0),
                ("2026-11-05", 300.0),
                ("2026-11-08", 300.0),
            ],
        ),
        series(
            "10x20",
            "drive-up",
            &[
                ("2026-11-01", 200.0),
                ("2026-11-05", 200.0),
                ("2026-11-08", 200.0),
            ],
        ),
    ];
    let out = band_series(
        observations.clone(),
        &unit_types,
        &dates,
        &PricingSettings::default(),
    );
    let brief: Vec<(&str, Option<&str>, Vec<Median>)> = out
        .iter()
        .map(|s| {
            (
                s.size.as_str(),
                s.tier.as_deref(),
                s.points
                    .iter()
                    .map(|p| (p.date, (p.median * 100.0).round() / 100.0))
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        brief,
        vec![
            ("10x10", None, dates.iter().map(|&x| (x, 100.0)).collect()),
            (
                "10x20",
                Some("climate"),
                vec![
                    // Too few of its own: C0's 300 and the drive-up rates x 1.25, 187.50-225.
                    (dates[0], 212.5),
                    // x 1.5: 225-270 and 300.
                    (dates[1], 255.0),
                    // Three climate competitors of its own: 300, 310, 320.
                    (dates[2], 310.0),
                ]
            ),
            (
                "10x20",
                Some("drive-up"),
                dates.iter().map(|&x| (x, 165.0)).collect()
            ),
            ("5x5", None, dates.iter().map(|&x| (x, 50.0)).collect()),
        ]
    );
    // A size whose rates name no tier has the series it had: `bands_by_day` of its set.
    assert_eq!(
        out[3].points,
        bands_by_day(&observations["5x5"], &dates, &BandSettings::default())
    );
}
