//! The upper references, found with hindsight on the seeds they are scored on: the best of a
//! grid of simple dynamic rules (`Rule`) and each size's best monthly schedule.

use super::market::{Scenario, SIZES};
use super::report::pct;
use super::{simulate, Policy, Rule, FIXED_GRID, FIXED_STEP};
use crate::pricing::settings::PricingSettings;
use std::fmt::Write;

/// Each size's best monthly schedule (multiples of its starting median, `[size][month0]`),
/// found with hindsight on the seeds by coordinate descent from the best fixed rate: two passes
/// over the months, each trying every multiple of the fixed grid. Sizes do not interact under a
/// schedule (each has its own market and random streams), so one run tries a multiple for every
/// size at once. Returns the schedules and their revenue summed over sizes and seeds.
pub fn best_schedules(scenario: &Scenario, seeds: &[u64]) -> (Vec<[f64; 12]>, f64) {
    let per_size =
        |schedule: &[[f64; 12]]| per_size_revenue(scenario, seeds, Policy::Schedule(schedule));
    let grid: Vec<f64> = FIXED_GRID.map(|k| f64::from(k) * FIXED_STEP).collect();
    // Start from the best fixed rate of each size.
    let mut schedule = best_fixed_flat(scenario, seeds);
    let mut revenue = per_size(&schedule);
    for _pass in 0..2 {
        for month in 0..12 {
            for &m in &grid {
                let mut trial = schedule.clone();
                for months in &mut trial {
                    months[month] = m;
                }
                for (i, r) in per_size(&trial).into_iter().enumerate() {
                    if r > revenue[i] {
                        revenue[i] = r;
                        schedule[i][month] = m;
                    }
                }
            }
        }
    }
    (schedule, revenue.iter().sum())
}

/// The best monthly schedules of [`best_schedules`], tuned on `seeds`, against the static
/// policy and the best fixed rate: on the seeds they were tuned on (hindsight: they also learn
/// those seeds' random draws) and on `holdout` seeds they never saw (what knowing the season
/// and the demand level in advance is worth). One row per scenario, in Markdown.
pub fn reference_schedules(
    scenarios: &[&Scenario],
    seeds: &[u64],
    holdout: &[u64],
    settings: &PricingSettings,
) -> String {
    let mut out = String::from(
        "| Scenario | Tuned seeds: schedule vs static | Tuned seeds: schedule / best fixed | Held-out seeds: schedule vs static | Held-out seeds: schedule / best fixed | Held-out seeds: fixed rate tuned on the others vs static | Held-out seeds: engine vs static |\n|---|---|---|---|---|---|---|\n",
    );
    let mut totals = [0.0; 8];
    let mut schedules = String::new();
    for s in scenarios {
        let (schedule, revenue) = best_schedules(s, seeds);
        let row = [
            revenue,
            revenue_of(s, seeds, Policy::Static),
            best_fixed_revenue(s, seeds),
            revenue_of(s, holdout, Policy::Schedule(&schedule)),
            revenue_of(s, holdout, Policy::Static),
            best_fixed_revenue(s, holdout),
            revenue_of(s, holdout, Policy::Schedule(&best_fixed_flat(s, seeds))),
            revenue_of(s, holdout, Policy::Engine(settings)),
        ];
        for (t, v) in totals.iter_mut().zip(row) {
            *t += v;
        }
        let _ = writeln!(out, "{}", schedule_row(s.name, &row));
        let sizes: Vec<String> = schedule
            .iter()
            .zip(SIZES)
            .map(|(months, size)| {
                let list: Vec<String> = months.iter().map(|m| format!("{m:.2}")).collect();
                format!("{} {}", size.0, list.join(" "))
            })
            .collect();
        let _ = writeln!(schedules, "- {}: {}", s.name, sizes.join("; "));
    }
    let _ = writeln!(out, "{}", schedule_row("overall", &totals));
    out.push_str("\nSchedules (January to December, multiples of the starting median):\n");
    out.push_str(&schedules);
    out
}

fn schedule_row(name: &str, r: &[f64; 8]) -> String {
    format!(
        "| {name} | {:+.1} % | {:.1} % | {:+.1} % | {:.1} % | {:+.1} % | {:+.1} % |",
        pct(r[0], r[1]),
        r[0] / r[2] * 100.0,
        pct(r[3], r[4]),
        r[3] / r[5] * 100.0,
        pct(r[6], r[4]),
        pct(r[7], r[4])
    )
}

/// Each size's best fixed rate on the seeds, as a flat schedule.
fn best_fixed_flat(scenario: &Scenario, seeds: &[u64]) -> Vec<[f64; 12]> {
    let mut best = vec![(f64::MIN, 1.0); SIZES.len()];
    for k in FIXED_GRID {
        let m = f64::from(k) * FIXED_STEP;
        for (b, revenue) in best
            .iter_mut()
            .zip(per_size_revenue(scenario, seeds, Policy::Fixed(m)))
        {
            if revenue > b.0 {
                *b = (revenue, m);
            }
        }
    }
    best.iter().map(|b| [b.1; 12]).collect()
}

/// Revenue of each size under a policy, summed over the seeds.
fn per_size_revenue(scenario: &Scenario, seeds: &[u64], policy: Policy<'_>) -> Vec<f64> {
    let mut sums = vec![0.0; SIZES.len()];
    for &s in seeds {
        for (sum, r) in sums.iter_mut().zip(simulate(scenario, s, policy)) {
            *sum += r.revenue;
        }
    }
    sums
}

/// Revenue of each size at its own best fixed rate, summed over sizes and seeds.
fn best_fixed_revenue(scenario: &Scenario, seeds: &[u64]) -> f64 {
    let flat = best_fixed_flat(scenario, seeds);
    per_size_revenue(scenario, seeds, Policy::Schedule(&flat))
        .iter()
        .sum()
}

/// The grid of [`Rule`]s the reference sweep tries: 6 x 5 x 3 x 3 = 270 rules.
pub fn rule_grid() -> Vec<Rule> {
    let mut grid = Vec::new();
    for base in [0.85, 0.90, 0.95, 1.00, 1.05, 1.10] {
        for per_point in [0.0, 0.5, 1.0, 2.0, 3.0] {
            for pivot in [85.0, 90.0, 95.0] {
                for season in [0.0, 0.5, 1.0] {
                    grid.push(Rule {
                        base,
                        per_point,
                        pivot,
                        season,
                    });
                }
            }
        }
    }
    grid
}

/// Revenue of a policy on a scenario, summed over the seeds and sizes.
fn revenue_of(scenario: &Scenario, seeds: &[u64], policy: Policy<'_>) -> f64 {
    seeds
        .iter()
        .map(|&s| {
            simulate(scenario, s, policy)
                .iter()
                .map(|r| r.revenue)
                .sum::<f64>()
        })
        .sum()
}

/// The best rule of the grid, chosen with hindsight, against the static policy: one rule for
/// all scenarios (the overall row) and the best rule of each scenario on its own. An upper
/// reference for what an engine of simple signals can earn in this market.
pub fn reference_rules(scenarios: &[&Scenario], seeds: &[u64]) -> String {
    let statics: Vec<f64> = scenarios
        .iter()
        .map(|s| revenue_of(s, seeds, Policy::Static))
        .collect();
    let grid = rule_grid();
    let table: Vec<Vec<f64>> = grid
        .iter()
        .map(|r| {
            scenarios
                .iter()
                .map(|s| revenue_of(s, seeds, Policy::Rule(*r)))
                .collect()
        })
        .collect();
    let pct = |v: f64, base: f64| (v / base - 1.0) * 100.0;
    let describe = |r: &Rule| {
        format!(
            "{:.2} + {:.1} x (occupancy - {:.0}) / 100 + {:.1} x (season - 1)",
            r.base, r.per_point, r.pivot, r.season
        )
    };
    let mut out = String::from(
        "| Scenario | Best rule vs static | Rule (multiple of the median) |\n|---|---|---|\n",
    );
    for (i, s) in scenarios.iter().enumerate() {
        let (best, rule) = table
            .iter()
            .zip(&grid)
            .map(|(row, r)| (row[i], r))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .expect("a non-empty grid");
        let _ = writeln!(
            out,
            "| {} | {:+.1} % | {} |",
            s.name,
            pct(best, statics[i]),
            describe(rule)
        );
    }
    let total_static: f64 = statics.iter().sum();
    let (best, rule) = table
        .iter()
        .zip(&grid)
        .map(|(row, r)| (row.iter().sum::<f64>(), r))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .expect("a non-empty grid");
    let _ = writeln!(
        out,
        "| one rule for all | {:+.1} % | {} |",
        pct(best, total_static),
        describe(rule)
    );
    out
}
