//! Runs every policy over scenarios and seeds and sums the results into one table.

use super::market::{Scenario, SIZES};
use super::{simulate, Policy, Rule, SizeResult, FIXED_GRID, FIXED_STEP};
use crate::pricing::settings::PricingSettings;
use std::fmt::Write;

/// One scenario over all seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub scenario: &'static str,
    pub engine_revenue: f64,
    pub static_revenue: f64,
    /// Each size at its best fixed rate (one multiple of the median for all seeds).
    pub best_fixed_revenue: f64,
    /// The best fixed rate of each size, as a multiple of its starting median.
    pub best_fixed: Vec<f64>,
    /// Facility occupancy at the end of the year (%), averaged over seeds.
    pub end_occupancy_pct: f64,
    pub static_end_occupancy_pct: f64,
    pub best_fixed_end_occupancy_pct: f64,
    /// Facility occupancy averaged over the year and the seeds (%).
    pub mean_occupancy_pct: f64,
    /// Per size and year, averaged over sizes and seeds.
    pub changes_per_size: f64,
    pub reversals_per_size: f64,
    /// The most reversals of one size in one run.
    pub max_reversals: u32,
    pub cuts_when_full: u32,
    pub floor_binds: u32,
    pub min_ratio: f64,
    pub max_ratio: f64,
}

fn facility_occupancy(results: &[SizeResult]) -> f64 {
    let units: f64 = SIZES.iter().map(|s| f64::from(s.1)).sum();
    results
        .iter()
        .zip(SIZES)
        .map(|(r, s)| r.end_occupancy_pct * f64::from(s.1))
        .sum::<f64>()
        / units
}

fn mean_occupancy(results: &[SizeResult]) -> f64 {
    let units: f64 = SIZES.iter().map(|s| f64::from(s.1)).sum();
    results
        .iter()
        .zip(SIZES)
        .map(|(r, s)| r.mean_occupancy_pct * f64::from(s.1))
        .sum::<f64>()
        / units
}

/// Runs one scenario on the seeds.
pub fn summarize(scenario: &Scenario, seeds: &[u64], settings: &PricingSettings) -> Summary {
    let n = seeds.len().max(1) as f64;
    let engine: Vec<Vec<SizeResult>> = seeds
        .iter()
        .map(|&s| simulate(scenario, s, Policy::Engine(settings)))
        .collect();
    let fixed_static: Vec<Vec<SizeResult>> = seeds
        .iter()
        .map(|&s| simulate(scenario, s, Policy::Static))
        .collect();
    // Per multiple of the median: the runs of every seed.
    let grid: Vec<(f64, Vec<Vec<SizeResult>>)> = FIXED_GRID
        .map(|k| {
            let m = f64::from(k) * FIXED_STEP;
            let runs = seeds
                .iter()
                .map(|&s| simulate(scenario, s, Policy::Fixed(m)))
                .collect();
            (m, runs)
        })
        .collect();
    let mut best_fixed = Vec::new();
    let mut best_fixed_revenue = 0.0;
    let mut best_end = 0.0;
    for (i, size) in SIZES.iter().enumerate() {
        let (m, revenue, end) = grid
            .iter()
            .map(|(m, runs)| {
                let revenue: f64 = runs.iter().map(|r| r[i].revenue).sum();
                let end: f64 = runs.iter().map(|r| r[i].end_occupancy_pct).sum::<f64>() / n;
                (*m, revenue, end)
            })
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap_or((1.0, 0.0, 0.0));
        best_fixed.push(m);
        best_fixed_revenue += revenue;
        best_end += end * f64::from(size.1);
    }
    let units: f64 = SIZES.iter().map(|s| f64::from(s.1)).sum();
    let all = || engine.iter().flatten();
    let sizes = all().count().max(1) as f64;
    Summary {
        scenario: scenario.name,
        engine_revenue: all().map(|r| r.revenue).sum(),
        static_revenue: fixed_static.iter().flatten().map(|r| r.revenue).sum(),
        best_fixed_revenue,
        best_fixed,
        end_occupancy_pct: engine.iter().map(|r| facility_occupancy(r)).sum::<f64>() / n,
        static_end_occupancy_pct: fixed_static
            .iter()
            .map(|r| facility_occupancy(r))
            .sum::<f64>()
            / n,
        best_fixed_end_occupancy_pct: best_end / units,
        mean_occupancy_pct: engine.iter().map(|r| mean_occupancy(r)).sum::<f64>() / n,
        changes_per_size: all().map(|r| f64::from(r.changes)).sum::<f64>() / sizes,
        reversals_per_size: all().map(|r| f64::from(r.reversals)).sum::<f64>() / sizes,
        max_reversals: all().map(|r| r.reversals).max().unwrap_or(0),
        cuts_when_full: all().map(|r| r.cuts_when_full).sum(),
        floor_binds: all().map(|r| r.floor_binds).sum(),
        min_ratio: all().map(|r| r.min_ratio).fold(f64::MAX, f64::min),
        max_ratio: all().map(|r| r.max_ratio).fold(f64::MIN, f64::max),
    }
}

fn pct(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        (a / b - 1.0) * 100.0
    } else {
        0.0
    }
}

/// The table of the summaries, with an overall row, in Markdown.
pub fn markdown(summaries: &[Summary]) -> String {
    let mut out = String::from(
        "| Scenario | Revenue vs static | Revenue / best fixed | End occupancy (static / best fixed) | Mean occupancy | Changes per size | Reversals per size (max) | Cuts at >= 93 % | Floor binds | Rate / median |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for s in summaries {
        let _ = writeln!(
            out,
            "| {} | {:+.1} % | {:.1} % | {:.1} % ({:.1} / {:.1}) | {:.1} % | {:.1} | {:.1} ({}) | {} | {} | {:.2}-{:.2} |",
            s.scenario,
            pct(s.engine_revenue, s.static_revenue),
            s.engine_revenue / s.best_fixed_revenue.max(f64::MIN_POSITIVE) * 100.0,
            s.end_occupancy_pct,
            s.static_end_occupancy_pct,
            s.best_fixed_end_occupancy_pct,
            s.mean_occupancy_pct,
            s.changes_per_size,
            s.reversals_per_size,
            s.max_reversals,
            s.cuts_when_full,
            s.floor_binds,
            s.min_ratio,
            s.max_ratio,
        );
    }
    let (e, st, b): (f64, f64, f64) = summaries.iter().fold((0.0, 0.0, 0.0), |acc, s| {
        (
            acc.0 + s.engine_revenue,
            acc.1 + s.static_revenue,
            acc.2 + s.best_fixed_revenue,
        )
    });
    let k = summaries.len().max(1) as f64;
    let _ = writeln!(
        out,
        "| overall | {:+.1} % | {:.1} % | | | {:.1} | {:.1} ({}) | {} | {} | |",
        pct(e, st),
        e / b.max(f64::MIN_POSITIVE) * 100.0,
        summaries.iter().map(|s| s.changes_per_size).sum::<f64>() / k,
        summaries.iter().map(|s| s.reversals_per_size).sum::<f64>() / k,
        summaries.iter().map(|s| s.max_reversals).max().unwrap_or(0),
        summaries.iter().map(|s| s.cuts_when_full).sum::<u32>(),
        summaries.iter().map(|s| s.floor_binds).sum::<u32>(),
    );
    let _ = writeln!(
        out,
        "\nBest fixed rate per size ({}), as a multiple of the starting median:",
        SIZES.map(|s| s.0).join(", ")
    );
    for s in summaries {
        let list: Vec<String> = s.best_fixed.iter().map(|m| format!("{m:.2}")).collect();
        let _ = writeln!(out, "- {}: {}", s.scenario, list.join(", "));
    }
    out
}

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
