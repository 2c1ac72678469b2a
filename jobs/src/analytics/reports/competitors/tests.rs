use super::*;

fn d(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

fn unit(size: &str, tier: &str, street_rate: f64, total_units: Option<i32>) -> UnitRow {
    UnitRow {
        size: size.into(),
        tier: tier.into(),
        street_rate,
        occupancy_pct: Some(90.0),
        total_units,
    }
}

fn rates(tier: Option<&str>, prefix: &str, values: &[f64]) -> Vec<CompetitorObservation> {
    values
        .iter()
        .enumerate()
        .map(|(i, r)| CompetitorObservation {
            competitor: format!("{prefix}{i}"),
            rate: *r,
            promo: None,
            observed_on: d("2026-11-10"),
            tier: tier.map(Into::into),
        })
        .collect()
}

fn medians(b: &[Banded]) -> Vec<(String, Option<f64>, Option<SetSource>)> {
    b.iter()
        .map(|x| (x.name(), x.band.as_ref().map(|b| b.median), x.set))
        .collect()
}

#[test]
fn a_size_whose_rates_name_no_tier_is_banded_whole_at_its_street_rate() {
    // Two tiers of 10x20 (40 units at 250, 60 at 200: 220 weighted), competitors 150-180
    // without a tier: one entry, the size's street rate, the band of every rate (median 165),
    // as before tiers. 5x5 has no rates: one entry without a band.
    let units = [
        unit("10x20", "climate", 250.0, Some(40)),
        unit("10x20", "drive-up", 200.0, Some(60)),
        unit("5x5", "", 50.0, Some(10)),
    ];
    let obs = rates(None, "D", &[150.0, 160.0, 170.0, 180.0]);
    let s = PricingSettings::default();
    let out = banded(
        &units,
        |size| (size == "10x20").then_some(obs.as_slice()),
        d("2026-11-10"),
        &s,
    );
    assert_eq!(out.len(), 2);
    assert_eq!(
        out[0],
        Banded {
            size: "10x20".into(),
            tier: None,
            street_rate: 220.0,
            band: competitor_band(&obs, d("2026-11-10"), &s.band()),
            set: None,
        }
    );
    assert_eq!(out[0].band.as_ref().unwrap().median, 165.0);
    assert_eq!(
        (out[1].name(), out[1].tier.clone(), out[1].band.clone()),
        ("5x5".to_owned(), None, None)
    );
}

#[test]
fn each_tier_is_banded_on_its_own_set_else_on_the_converted_size_set() {
    // Climate competitors at 300-330, drive-up ones at 150-180: each tier's own set (medians
    // 315 and 165), never the mixed set's 240. A unit type without a tier takes the size's
    // whole set (240).
    let units = [
        unit("10x20", "Climate", 250.0, Some(40)),
        unit("10x20", "drive-up", 200.0, Some(40)),
        unit("10x20", "", 220.0, None),
    ];
    let mut obs = rates(Some("climate"), "C", &[300.0, 310.0, 320.0, 330.0]);
    obs.extend(rates(Some("Drive-Up"), "D", &[150.0, 160.0, 170.0, 180.0]));
    let s = PricingSettings::default();
    let out = banded(&units, |_| Some(obs.as_slice()), d("2026-11-10"), &s);
    assert_eq!(
        medians(&out),
        vec![
            (
                "Climate 10x20".to_owned(),
                Some(315.0),
                Some(SetSource::Tier)
            ),
            (
                "drive-up 10x20".to_owned(),
                Some(165.0),
                Some(SetSource::Tier)
            ),
            ("10x20".to_owned(), Some(240.0), Some(SetSource::Size)),
        ]
    );
    assert_eq!(
        out.iter().map(|b| b.street_rate).collect::<Vec<_>>(),
        vec![250.0, 200.0, 220.0]
    );
    assert_eq!(out[2].tier.as_deref(), Some(""));

    // Without climate rates, climate takes the drive-up rates times 1.25, the premium of the
    // facility's own 250 over 200: 187.50-225, median 206.25 (the engine's fallback).
    let obs = rates(Some("drive-up"), "D", &[150.0, 160.0, 170.0, 180.0]);
    let out = banded(&units[..2], |_| Some(obs.as_slice()), d("2026-11-10"), &s);
    assert_eq!(
        medians(&out),
        vec![
            (
                "Climate 10x20".to_owned(),
                Some(206.25),
                Some(SetSource::SizeAdjusted)
            ),
            (
                "drive-up 10x20".to_owned(),
                Some(165.0),
                Some(SetSource::Tier)
            ),
        ]
    );
}

#[test]
fn the_bands_are_the_engines() {
    // The same unit types and rates through the engine's own `band_for`: the same bands.
    let units = [
        unit("10x20", "climate", 260.0, Some(40)),
        unit("10x20", "drive-up", 200.0, Some(40)),
        unit("10x10", "climate", 150.0, Some(40)),
        unit("10x10", "drive-up", 120.0, Some(40)),
    ];
    let mut obs = rates(Some("climate"), "C", &[300.0, 310.0]);
    obs.extend(rates(Some("drive-up"), "D", &[150.0, 160.0, 170.0, 180.0]));
    obs.extend(rates(None, "U", &[190.0]));
    let s = PricingSettings::default();
    let out = banded(&units, |_| Some(obs.as_slice()), d("2026-11-10"), &s);
    let inputs: Vec<domain::pricing::engine::UnitTypeInput> = units
        .iter()
        .map(|u| domain::pricing::engine::UnitTypeInput {
            size: u.size.clone(),
            tier: u.tier.clone(),
            street_rate: u.street_rate,
            occupancy_pct: u.occupancy_pct,
            total_units: None,
            last_rate_change: None,
            last_change_raised: None,
            earlier: None,
            history: Vec::new(),
        })
        .collect();
    let premium = tiers::premium(&inputs, &s);
    assert_eq!(out.len(), 4);
    for b in &out {
        let ut = inputs
            .iter()
            .find(|u| u.size == b.size && Some(&u.tier) == b.tier.as_ref())
            .unwrap();
        let (band, set) = tiers::band_for(
            (&ut.size, &ut.tier),
            &obs,
            d("2026-11-10"),
            &s.band(),
            &s,
            premium,
        );
        assert_eq!((b.band.clone(), b.set), (band, set.map(|x| x.source)));
    }
    // Climate 10x20 has 2 competitors of its own (fewer than 3): the size's set converted.
    assert_eq!(out[2].set, Some(SetSource::SizeAdjusted));
}
