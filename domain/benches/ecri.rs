//! The ECRI engine on a 5,000-tenant rent roll: `decide` per tenant, and the facility-level
//! `decide_facility` (customer grouping and stop-loss) over the same roll; and `learn`, one
//! facility's stay model against its company's pooled cells (150 facilities, 70 increases
//! each), what every facility's stored run spends its time on once there is evidence.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use domain::ecri::evidence::{cell, cell_outcome, Cell, TENURE_BAND_MONTHS};
use domain::ecri::{
    decide, decide_facility, learn, EcriEngineSettings, Outcome, SizeMarket, StayModel, TenantInput,
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

/// A company's evidence: per facility, 70 tenants increased +8 % on rents of 80 to 300 (a
/// premium of -20 % to +30 % over the reference), a fifth of them gone within 90 days, and 400
/// tenants not increased by tenure band; pooled in cells as the nightly fit stores them, the
/// last facility's outcomes apart.
fn company(facilities: u32) -> (Vec<Outcome>, Vec<Outcome>) {
    let mut cells: BTreeMap<Cell, (u32, u32)> = BTreeMap::new();
    let mut own = Vec::new();
    let mut x = 0x2545_f491_u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % 10_000) as f64 / 10_000.0
    };
    for f in 0..facilities {
        let mut outcomes = Vec::new();
        for _ in 0..70 {
            let rent = (80.0 + 220.0 * next()).round();
            let after = (rent * 1.08).round();
            let band = (next() * 6.0) as usize;
            outcomes.push(Outcome {
                increase_pct: (after / rent - 1.0) * 100.0,
                premium_pct: -20.0 + 50.0 * next(),
                tenants: 1,
                moved_out: u32::from(next() < 0.2),
                months_since_move_in: Some(TENURE_BAND_MONTHS[band.min(5)]),
                past_increases: u32::from(next() < 0.5),
                increase_amount: after - rent,
                raised_recently: next() < 0.2,
                open_share: 0.0,
            });
        }
        for band in TENURE_BAND_MONTHS {
            outcomes.push(Outcome {
                tenants: 70,
                moved_out: 8,
                months_since_move_in: Some(band),
                ..Outcome::default()
            });
        }
        if f + 1 == facilities {
            own = outcomes;
        } else {
            for o in &outcomes {
                let c = cells.entry(cell(o)).or_default();
                c.0 += o.tenants;
                c.1 += o.moved_out;
            }
        }
    }
    let others = cells
        .iter()
        .map(|(c, (n, l))| cell_outcome(c, *n, *l))
        .collect();
    (others, own)
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
    // The same roll with each increase weighed as if it were the last: what weighing the next
    // increase (a second search per tenant) costs.
    let last_only = EcriEngineSettings {
        next_increase_pct: 0.0,
        ..settings.clone()
    };
    c.bench_function(
        "ecri decide: 5,000 tenants, the next increase not weighed",
        |b| {
            b.iter(|| {
                roll.iter()
                    .map(|t| decide(black_box(t), &markets[&t.size], &model, &last_only).increase)
                    .sum::<f64>()
            })
        },
    );
    c.bench_function("ecri decide_facility: 5,000 tenants", |b| {
        b.iter(|| decide_facility(black_box(&roll), &markets, &model, &recent, &settings).len())
    });
    let (others, own) = company(150);
    println!(
        "learn: {} company cells, {} own outcomes",
        others.len(),
        own.len()
    );
    c.bench_function("ecri learn: a facility against 149 others' cells", |b| {
        b.iter(|| learn(&settings.stay_prior, black_box(&others), &own).sensitivity)
    });
    // Where the step's figures are searched hardest: a year of a facility's own notices, one
    // outcome each, spread over 4-16 % on rents of 100-250 (amounts known), the first months'
    // open windows among them.
    let spread = spread_outcomes(600);
    c.bench_function("ecri learn: a facility of 600 spread increases", |b| {
        b.iter(|| learn(&settings.stay_prior, &[], black_box(&spread)).step_logit)
    });
}

/// `n` increased tenants, each its own outcome (4-16 %, rents 100-250, about one in five gone,
/// one in ten windows open), and 1,000 tenants not increased.
fn spread_outcomes(n: u32) -> Vec<Outcome> {
    let mut out: Vec<Outcome> = (0..n)
        .map(|i| {
            let pct = f64::from(4 + i % 13);
            let rent = f64::from(100 + (i * 37) % 151);
            Outcome {
                increase_pct: pct,
                premium_pct: f64::from(i % 21) - 10.0,
                tenants: 1,
                moved_out: u32::from(i % 5 == 0 || (pct >= 10.0 && i % 7 == 0)),
                months_since_move_in: Some(f64::from(6 + i % 40)),
                increase_amount: (rent * pct / 100.0).floor(),
                open_share: if i % 10 == 0 { 0.5 } else { 0.0 },
                ..Outcome::default()
            }
        })
        .collect();
    out.push(Outcome {
        tenants: 1_000,
        moved_out: 110,
        months_since_move_in: Some(20.0),
        ..Outcome::default()
    });
    out
}

criterion_group!(benches, bench);
criterion_main!(benches);
