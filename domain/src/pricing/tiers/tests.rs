//! Tiers banded on their own competitor sets, the fallback with the tier premium, and the
//! hold of an inverted pair. Unless a case says otherwise: default settings, 15 November,
//! seasonality index 1.0, 90 days of history, unit types 90 % occupied (inside the 88-93 %
//! band) with a reading 28 days back at the same rate (without occupancy, so no trend).

use super::*;
use crate::pricing::engine::{recommend, Action, EarlierReading, FacilityInput, Mode};
use crate::pricing::seasonality::SeasonalIndex;

fn d(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

fn unit(size: &str, tier: &str, rate: f64) -> UnitTypeInput {
    UnitTypeInput {
        size: size.into(),
        tier: tier.into(),
        street_rate: rate,
        occupancy_pct: Some(90.0),
        total_units: Some(50),
        last_rate_change: None,
        last_change_raised: None,
        history: Vec::new(),
        earlier: Some(EarlierReading {
            days_ago: 28,
            occupancy_pct: None,
            street_rate: rate,
        }),
    }
}

fn obs(competitor: &str, rate: f64, tier: Option<&str>) -> CompetitorObservation {
    CompetitorObservation {
        competitor: competitor.into(),
        rate,
        promo: None,
        observed_on: d("2026-11-14"),
        tier: tier.map(Into::into),
    }
}

fn facility(unit_types: Vec<UnitTypeInput>, rates: &[CompetitorObservation]) -> FacilityInput {
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
        unit_types,
        promotions: vec![],
        competitors: rates
            .iter()
            .map(|o| ("10x20".to_owned(), o.clone()))
            .collect(),
    }
}

/// Four competitors priced the climate tier (200, 210, 220, 230), one the drive-up tier (150),
/// one did not say (180).
fn mixed() -> Vec<CompetitorObservation> {
    vec![
        obs("A", 200.0, Some("Climate")),
        obs("B", 210.0, Some("climate ")),
        obs("C", 220.0, Some("CLIMATE")),
        obs("D", 230.0, Some("climate")),
        obs("E", 150.0, Some("Drive-Up")),
        obs("F", 180.0, None),
    ]
}

#[test]
fn climate_words_make_the_premium_class_and_negations_do_not() {
    for t in [
        "climate",
        "Climate Controlled",
        "CC",
        "climate-drive-up",
        "heated",
        "Temp Controlled",
        "Air Conditioned",
    ] {
        assert!(is_climate(t), "{t}");
    }
    for t in [
        "",
        "drive-up",
        "Drive Up",
        "standard",
        "non-climate",
        "Non Climate",
        "no climate",
        "outdoor",
        "unheated",
        "interior",
    ] {
        assert!(!is_climate(t), "{t}");
    }
}

/// `band_for` of a unit type on 15 November 2026.
fn band_of(
    ut: &UnitTypeInput,
    obs: &[CompetitorObservation],
    s: &PricingSettings,
    p: Premium,
) -> (Option<CompetitorBand>, Option<CompetitorSet>) {
    band_for((&ut.size, &ut.tier), obs, d("2026-11-15"), &s.band(), s, p)
}

#[test]
fn a_tier_with_enough_competitors_is_banded_on_its_own_set() {
    let s = PricingSettings::default();
    let p = premium(&[], &s);
    assert_eq!((p.pct, p.sizes), (20.0, 0));
    // Tiers compare trimmed and case-insensitively: all four climate rates count.
    let ut = unit("10x20", " Climate", 250.0);
    let (band, set) = band_of(&ut, &mixed(), &s, p);
    let (band, set) = (band.unwrap(), set.unwrap());
    // Hazen percentiles of 200, 210, 220, 230.
    assert_eq!((band.p25, band.median, band.p75), (205.0, 215.0, 225.0));
    assert_eq!(band.competitors, 4);
    assert_eq!(set.source, SetSource::Tier);
    assert_eq!(set.tier_competitors, 4);
    assert_eq!(set.premium_pct, None);
    assert!(
        set.detail
            .contains("the 4 competitors that priced the Climate 10x20 tier itself"),
        "{}",
        set.detail
    );
    // With `tier_min_competitors` 5 the four are too few: the fallback takes over.
    let five = PricingSettings {
        tier_min_competitors: 5,
        ..s
    };
    let (_, set) = band_of(&ut, &mixed(), &five, p);
    assert_eq!(set.unwrap().source, SetSource::SizeAdjusted);
}

#[test]
fn a_tier_with_too_few_competitors_falls_back_to_the_size_converted_by_the_premium() {
    let s = PricingSettings::default();
    let p = premium(&[], &s);
    // Drive-up has one competitor of its own (fewer than 3): the size's six rates, the four
    // climate ones divided by 1.20 (the default premium): 166.67, 175, 183.33, 191.67, with
    // drive-up's 150 and the untiered 180 as they are. Sorted: 150, 166.67, 175, 180, 183.33,
    // 191.67 at positions 1/12, 3/12, ... 11/12: P25 166.67, median (175 + 180) / 2, P75
    // 183.33.
    let ut = unit("10x20", "drive-up", 200.0);
    let (band, set) = band_of(&ut, &mixed(), &s, p);
    let (band, set) = (band.unwrap(), set.unwrap());
    assert_eq!(band.competitors, 6);
    assert!((band.p25 - 200.0 / 1.2).abs() < 1e-9, "{band:?}");
    assert!((band.median - 177.5).abs() < 1e-9, "{band:?}");
    assert!((band.p75 - 220.0 / 1.2).abs() < 1e-9, "{band:?}");
    assert_eq!(set.source, SetSource::SizeAdjusted);
    assert_eq!(
        (set.tier_competitors, set.premium_pct, set.premium_sizes),
        (1, Some(20.0), Some(0))
    );
    assert!(
        set.detail.contains("fewer than 3")
            && set.detail.contains("climate premium of 20.0% (the default"),
        "{}",
        set.detail
    );
    // Without any rate naming a tier the size's set is used as it is, as before tiers.
    let plain: Vec<CompetitorObservation> = mixed()
        .into_iter()
        .map(|o| CompetitorObservation { tier: None, ..o })
        .collect();
    let (band, set) = band_of(&ut, &plain, &s, p);
    assert_eq!(
        band,
        crate::pricing::band::competitor_band(&plain, d("2026-11-15"), &s.band())
    );
    assert_eq!(set.unwrap().source, SetSource::Size);
}

#[test]
fn the_premium_is_learned_from_the_facilitys_own_rates_where_a_size_has_both() {
    let s = PricingSettings::default();
    // 10x10: 120 / 100 = 1.2; 5x10: 99 / 90 = 1.1; the geometric mean sqrt(1.32) = 1.1489.
    let units = [
        unit("10x10", "climate", 120.0),
        unit("10x10", "drive-up", 100.0),
        unit("5x10", "Climate Controlled", 99.0),
        unit("5x10", "outdoor", 90.0),
        unit("10x20", "climate", 300.0),
    ];
    let p = premium(&units, &s);
    assert_eq!(p.sizes, 2);
    assert!(
        (p.pct - (1.32f64.sqrt() - 1.0) * 100.0).abs() < 1e-9,
        "{p:?}"
    );
    // Climate priced under plain is no premium to learn: the default applies.
    let inverted = [
        unit("10x10", "climate", 90.0),
        unit("10x10", "drive-up", 100.0),
    ];
    assert_eq!(premium(&inverted, &s).sizes, 0);
    assert_eq!(premium(&inverted, &s).pct, 20.0);

    // Through the engine: the facility prices 10x20 climate at 250 and drive-up at 200 (a
    // premium of 25 %); four competitors priced drive-up (180, 190, 200, 210), none climate.
    // Climate is banded on them times 1.25: 225, 237.5, 250, 262.5, median 243.75.
    let rates: Vec<CompetitorObservation> = [180.0, 190.0, 200.0, 210.0]
        .iter()
        .enumerate()
        .map(|(i, r)| obs(&format!("C{i}"), *r, Some("drive-up")))
        .collect();
    let input = facility(
        vec![
            unit("10x20", "climate", 250.0),
            unit("10x20", "drive-up", 200.0),
        ],
        &rates,
    );
    let recs = recommend(&input, &s);
    let climate = &recs[0];
    let band = climate.competitor_band.as_ref().unwrap();
    assert_eq!((band.p25, band.median, band.p75), (231.25, 243.75, 256.25));
    let set = climate.competitor_set.as_ref().unwrap();
    assert_eq!(set.source, SetSource::SizeAdjusted);
    assert_eq!((set.premium_pct, set.premium_sizes), (Some(25.0), Some(1)));
    assert!(
        climate.factors[0]
            .detail
            .contains("learned from the facility's own rates of 1 size"),
        "{}",
        climate.factors[0].detail
    );
    // Drive-up follows its own four: median 195.
    let drive = &recs[1];
    assert_eq!(drive.competitor_band.as_ref().unwrap().median, 195.0);
    assert_eq!(
        drive.competitor_set.as_ref().unwrap().source,
        SetSource::Tier
    );
}

#[test]
fn a_climate_tier_recommended_under_its_drive_up_twin_is_held_at_the_twins_rate() {
    let s = PricingSettings::default();
    // Five competitors at 230 for the size, none naming a tier: both tiers target 230.
    // Climate at 216: 6.5 % under the target, a run moves half way: 223. Drive-up at 255:
    // 9.8 % over, half way: 242.5, rounded to 243. Climate at 223 would sit under drive-up
    // at 243: it is held at 243.
    let rates: Vec<CompetitorObservation> =
        (0..5).map(|i| obs(&format!("C{i}"), 230.0, None)).collect();
    let input = facility(
        vec![
            unit("10x20", "climate", 216.0),
            unit("10x20", "drive-up", 255.0),
        ],
        &rates,
    );
    let recs = recommend(&input, &s);
    let (climate, drive) = (&recs[0], &recs[1]);
    assert_eq!(drive.recommended_rate, 243.0);
    assert_eq!(drive.action, Action::Lower);
    assert!(drive.tier_inversion.is_none());
    assert_eq!(climate.recommended_rate, 243.0);
    assert_eq!((climate.change_amount, climate.change_pct), (27.0, 12.5));
    assert_eq!(climate.action, Action::Raise);
    let inv = climate.tier_inversion.as_ref().unwrap();
    assert_eq!(
        (inv.recommended_rate, inv.plain_rate, inv.held_at),
        (223.0, 243.0, 243.0)
    );
    assert_eq!(inv.plain_tier, "drive-up");
    let g = climate.guardrails.last().unwrap();
    assert_eq!(
        (g.name.as_str(), g.before, g.after),
        ("tier_order", 223.0, 243.0)
    );
    assert!(
        g.detail.contains(
            "the climate 10x20 would be recommended at 223.00, below the drive-up 10x20 at 243.00"
        ),
        "{}",
        g.detail
    );
    // A climate tier already at or above its twin is left alone.
    let input = facility(
        vec![
            unit("10x20", "climate", 260.0),
            unit("10x20", "drive-up", 255.0),
        ],
        &rates,
    );
    let recs = recommend(&input, &s);
    assert!(recs.iter().all(|r| r.tier_inversion.is_none()));
    assert!(recs[0].recommended_rate >= recs[1].recommended_rate);
    // Two plain tiers (drive-up and interior) of a size are not ordered against each other.
    let input = facility(
        vec![
            unit("10x20", "interior", 216.0),
            unit("10x20", "drive-up", 255.0),
        ],
        &rates,
    );
    let recs = recommend(&input, &s);
    assert_eq!(recs[0].recommended_rate, 223.0);
    assert!(recs[0].tier_inversion.is_none());
}
