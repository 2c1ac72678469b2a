//! The ECRI engine on a 5,000-tenant rent roll: `decide` per tenant, and the facility-level
//! `decide_facility` (customer grouping and stop-loss) over the same roll.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use domain::ecri::{
    decide, decide_facility, EcriEngineSettings, Outcome, SizeMarket, StayModel, TenantInput,
};
use std::collections::BTreeMap;

const SIZES: [(&str, f64); 10] = [
    ("5x5", 60.0),
    ("5x10", 95.0),
    ("10x10", 140.0),
    ("10x15", 180.0),
    ("10x20", 230.0),
    ("10x30", 320.0),
    ("7.5x10", 110.0),
    ("10x25", 280.0),
    ("12x30", 360.0),
    ("15x20", 300.0),
];

fn roll() -> Vec<TenantInput> {
    (0..5_000)
        .map(|i| {
            let (size, street) = SIZES[i % SIZES.len()];
            TenantInput {
                tenant_id: format!("t{i}"),
                size: size.to_owned(),
                rent: (street * (0.75 + (i % 41) as f64 / 100.0)).round(),
                months_since_move_in: Some(2.0 + (i % 48) as f64),
                months_since_last_increase: (i % 3 != 0).then_some((i % 14) as f64),
                customer_id: (i % 20 == 0).then(|| format!("c{}", i / 40)),
                flags: if i % 50 == 0 {
                    vec!["business".to_owned()]
                } else {
                    Vec::new()
                },
                tenant_count: 1,
                tier: None,
                pending_increase: None,
                past_increases: 0,
                rent_12_months_ago: None,
                rent_at_cap_base: None,
            }
        })
        .collect()
}

fn markets() -> BTreeMap<String, SizeMarket> {
    SIZES
        .iter()
        .enumerate()
        .map(|(i, (size, street))| {
            (
                (*size).to_owned(),
                SizeMarket {
                    street_rate: *street,
                    of_tier: false,
                    competitor_low: Some(street * 0.88),
                    competitor_median: Some(*street),
                    competitor_high: Some(street * 1.12),
                    units: 500,
                    occupancy_pct: 85.0 + i as f64,
                    move_ins_per_month: 20.0,
                    move_outs_per_month: Some(17.0),
                },
            )
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let roll = roll();
    let markets = markets();
    let settings = EcriEngineSettings::default();
    let model = StayModel::from_prior(&settings.stay_prior);
    // Increased tenants leave 10 points faster than the others: under the stop-loss.
    let recent = [
        Outcome {
            increase_pct: 12.0,
            premium_pct: 5.0,
            tenants: 200,
            moved_out: 40,
            ..Outcome::default()
        },
        Outcome {
            increase_pct: 0.0,
            premium_pct: 0.0,
            tenants: 1_000,
            moved_out: 100,
            ..Outcome::default()
        },
    ];
    c.bench_function("ecri decide: 5,000 tenants", |b| {
        b.iter(|| {
            roll.iter()
                .map(|t| decide(black_box(t), &markets[&t.size], &model, &settings).increase)
                .sum::<f64>()
        })
    });
    c.bench_function("ecri decide_facility: 5,000 tenants", |b| {
        b.iter(|| decide_facility(black_box(&roll), &markets, &model, &recent, &settings).len())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
