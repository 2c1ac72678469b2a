//! The pricing engine on one facility: 20 unit types and 30 competitor rates (the shape the
//! issue names), in stabilized and lease-up mode, with and without a year of daily history per
//! unit type (the price response's demand, since 2026.11.7), plus the competitor band alone.

use chrono::NaiveDate;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use domain::pricing::engine::{DayReading, EarlierReading, PromotionInput, UnitTypeInput};
use domain::pricing::seasonality::SeasonalIndex;
use domain::pricing::{
    competitor_band, recommend, CompetitorObservation, FacilityInput, Mode, PricingSettings,
};

const SIZES: [&str; 10] = [
    "5x5", "5x10", "10x10", "10x15", "10x20", "10x30", "7.5x10", "10x25", "12x30", "15x20",
];

fn facility(mode: Mode) -> FacilityInput {
    let as_of: NaiveDate = "2026-11-15".parse().unwrap();
    FacilityInput {
        as_of,
        mode,
        occupancy_pct: Some(88.5),
        move_ins_mtd: Some(21.0),
        move_ins_target_monthly: Some(40.0),
        seasonality: SeasonalIndex {
            index: 0.92,
            own_data: true,
        },
        history_days: 365,
        unit_types: (0..20)
            .map(|i| UnitTypeInput {
                size: SIZES[i % 10].into(),
                tier: if i < 10 {
                    "climate".into()
                } else {
                    "drive-up".into()
                },
                street_rate: 60.0 + 10.0 * i as f64,
                occupancy_pct: Some(80.0 + (i % 15) as f64),
                total_units: Some(40 + i as u32),
                last_rate_change: Some(as_of - chrono::Days::new((i * 3) as u64)),
                last_change_raised: None,
                history: Vec::new(),
                earlier: Some(EarlierReading {
                    days_ago: 28,
                    occupancy_pct: Some(76.0 + (i % 15) as f64),
                    street_rate: 58.0 + 10.0 * i as f64,
                }),
            })
            .collect(),
        promotions: vec![PromotionInput {
            name: "First month free".into(),
            depth_pct: 100.0,
            applies_to: "10x10".into(),
        }],
        competitors: (0..30)
            .map(|i| {
                (
                    SIZES[i % 10].to_string(),
                    CompetitorObservation {
                        competitor: format!("Competitor {}", i / 10),
                        rate: 70.0 + 9.0 * i as f64,
                        promo: (i % 3 == 0).then(|| "First month free".to_owned()),
                        observed_on: as_of - chrono::Days::new((i % 20) as u64),
                        tier: None,
                    },
                )
            })
            .collect(),
    }
}

/// The facility with 365 daily readings per unit type: occupancy moving by a unit now and then,
/// a move-in every few days, one rate change in the year.
fn with_history(mut input: FacilityInput) -> FacilityInput {
    for (i, ut) in input.unit_types.iter_mut().enumerate() {
        let occupancy = ut.occupancy_pct.unwrap_or(85.0);
        ut.history = (1..=365u32)
            .rev()
            .map(|days_ago| DayReading {
                days_ago,
                occupancy_pct: occupancy - f64::from((days_ago + i as u32) % 4),
                street_rate: ut.street_rate * if days_ago > 180 { 0.97 } else { 1.0 },
                move_ins: Some(f64::from(u8::from((days_ago + i as u32).is_multiple_of(3)))),
            })
            .collect();
    }
    input
}

fn bench(c: &mut Criterion) {
    let settings = PricingSettings::default();
    let stabilized = facility(Mode::Stabilized);
    let history = with_history(facility(Mode::Stabilized));
    c.bench_function(
        "engine: 20 unit types, 30 competitor rates, 365 days of history each, stabilized",
        |b| b.iter(|| recommend(black_box(&history), black_box(&settings))),
    );
    let lease_up = facility(Mode::LeaseUp);
    c.bench_function(
        "engine: 20 unit types, 30 competitor rates, stabilized",
        |b| b.iter(|| recommend(black_box(&stabilized), black_box(&settings))),
    );
    c.bench_function(
        "engine: 20 unit types, 30 competitor rates, lease-up",
        |b| b.iter(|| recommend(black_box(&lease_up), black_box(&settings))),
    );
    let obs: Vec<CompetitorObservation> = stabilized
        .competitors
        .iter()
        .map(|(_, o)| o.clone())
        .collect();
    let band = settings.band();
    c.bench_function("competitor band: 30 observations", |b| {
        b.iter(|| competitor_band(black_box(&obs), stabilized.as_of, black_box(&band)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
