//! The backtest on the wide market: each seed draws every size's market
//! ([`SizeParams::wide`]), and the engine is compared, seed by seed, with the static policy,
//! each size's best fixed rate chosen with the seed's true demand, and (optionally) the optimal
//! policy with that demand.
//!
//! "Chosen with the true demand" means without the seed's own draws: a size's fixed rate is the
//! multiple of the starting median (0.60 to 1.40 in steps of 0.02) that earns the most over
//! `replicas` runs of the same market with other random streams, and is then scored on the
//! seed's own streams, like every other policy. The optimal policy is solved per seed and size
//! from the drawn parameters ([`OptimalPolicy::drawn`]).

use super::market::{Scenario, SizeParams, SIZES};
use super::optimal::OptimalPolicy;
use super::report::pct;
use super::{simulate_wide, Policy, SizeResult, FIXED_GRID, FIXED_STEP};
use crate::pricing::settings::PricingSettings;
use std::fmt::Write;

/// The random streams of the replicas that choose a seed's fixed rates: far from any seed a
/// report runs on.
fn replica_streams(seed: u64, replica: u64) -> u64 {
    (1 << 40) + seed * 64 + replica
}

/// What one policy did over the seeds of a scenario.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    pub revenue: f64,
    /// Facility occupancy at the end of the year and over it (%), averaged over seeds.
    pub end_occupancy_pct: f64,
    pub mean_occupancy_pct: f64,
    /// Per size and year, averaged over sizes and seeds.
    pub changes_per_size: f64,
    pub reversals_per_size: f64,
    pub max_reversals: u32,
    pub cuts_when_full: u32,
    pub floor_binds: u32,
    pub min_ratio: f64,
    pub max_ratio: f64,
    /// The lowest revenue of one seed against the best fixed rates of that seed.
    pub worst_seed_of_best_fixed: f64,
}

/// One scenario of the wide market over its seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct WideSummary {
    pub scenario: &'static str,
    /// One per engine settings given, in their order.
    pub engines: Vec<Outcome>,
    pub static_policy: Outcome,
    pub best_fixed: Outcome,
    pub optimal: Option<Outcome>,
    /// Each size's best fixed multiple, averaged over the seeds.
    pub best_fixed_multiple: Vec<f64>,
}

fn units() -> f64 {
    SIZES.iter().map(|s| f64::from(s.1)).sum()
}

fn facility(results: &[SizeResult], f: impl Fn(&SizeResult) -> f64) -> f64 {
    results
        .iter()
        .zip(SIZES)
        .map(|(r, s)| f(r) * f64::from(s.1))
        .sum::<f64>()
        / units()
}

fn outcome(runs: &[Vec<SizeResult>], best_fixed: &[f64]) -> Outcome {
    let n = runs.len().max(1) as f64;
    let all = || runs.iter().flatten();
    let sizes = all().count().max(1) as f64;
    Outcome {
        revenue: all().map(|r| r.revenue).sum(),
        end_occupancy_pct: runs
            .iter()
            .map(|r| facility(r, |s| s.end_occupancy_pct))
            .sum::<f64>()
            / n,
        mean_occupancy_pct: runs
            .iter()
            .map(|r| facility(r, |s| s.mean_occupancy_pct))
            .sum::<f64>()
            / n,
        changes_per_size: all().map(|r| f64::from(r.changes)).sum::<f64>() / sizes,
        reversals_per_size: all().map(|r| f64::from(r.reversals)).sum::<f64>() / sizes,
        max_reversals: all().map(|r| r.reversals).max().unwrap_or(0),
        cuts_when_full: all().map(|r| r.cuts_when_full).sum(),
        floor_binds: all().map(|r| r.floor_binds).sum(),
        min_ratio: all().map(|r| r.min_ratio).fold(f64::MAX, f64::min),
        max_ratio: all().map(|r| r.max_ratio).fold(f64::MIN, f64::max),
        worst_seed_of_best_fixed: runs
            .iter()
            .zip(best_fixed)
            .map(|(r, b)| r.iter().map(|s| s.revenue).sum::<f64>() / b)
            .fold(f64::MAX, f64::min),
    }
}

/// Each size's fixed multiple chosen with the true demand of a seed's market: the best over
/// `replicas` runs with other random streams.
pub fn best_fixed_multiples(params: &[SizeParams], seed: u64, replicas: u64) -> Vec<f64> {
    let mut best = vec![(f64::MIN, 1.0); params.len()];
    for k in FIXED_GRID {
        let m = f64::from(k) * FIXED_STEP;
        let mut sums = vec![0.0; params.len()];
        for r in 0..replicas.max(1) {
            for (sum, res) in sums.iter_mut().zip(simulate_wide(
                params,
                replica_streams(seed, r),
                Policy::Fixed(m),
            )) {
                *sum += res.revenue;
            }
        }
        for (b, sum) in best.iter_mut().zip(sums) {
            if sum > b.0 {
                *b = (sum, m);
            }
        }
    }
    best.into_iter().map(|b| b.1).collect()
}

/// Every policy's runs of one seed: engines, static, best fixed, optimal; and the best fixed
/// multiples.
type SeedRuns = (
    Vec<Vec<SizeResult>>,
    Vec<SizeResult>,
    Vec<SizeResult>,
    Option<Vec<SizeResult>>,
    Vec<f64>,
);

fn run_seed(
    scenario: &Scenario,
    seed: u64,
    engines: &[PricingSettings],
    replicas: u64,
    optimal: bool,
) -> SeedRuns {
    let params = SizeParams::wide(scenario, seed);
    let multiples = best_fixed_multiples(&params, seed, replicas);
    let flat: Vec<[f64; 12]> = multiples.iter().map(|m| [*m; 12]).collect();
    (
        engines
            .iter()
            .map(|s| simulate_wide(&params, seed, Policy::Engine(s)))
            .collect(),
        simulate_wide(&params, seed, Policy::Static),
        simulate_wide(&params, seed, Policy::Schedule(&flat)),
        optimal.then(|| {
            let policy = OptimalPolicy::drawn(&params);
            simulate_wide(&params, seed, Policy::Optimal(&policy))
        }),
        multiples,
    )
}

/// Runs one scenario of the wide market on the seeds (on two threads: the seeds are
/// independent). `engines` are compared side by side (the engine under test first).
pub fn summarize_wide(
    scenario: &Scenario,
    seeds: &[u64],
    engines: &[PricingSettings],
    replicas: u64,
    optimal: bool,
) -> WideSummary {
    let half = seeds.len().div_ceil(2);
    let runs: Vec<SeedRuns> = std::thread::scope(|scope| {
        let handles: Vec<_> = seeds
            .chunks(half.max(1))
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|&seed| run_seed(scenario, seed, engines, replicas, optimal))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a backtest thread"))
            .collect()
    });
    let fixed_by_seed: Vec<f64> = runs
        .iter()
        .map(|r| r.2.iter().map(|s| s.revenue).sum())
        .collect();
    let collect = |f: &dyn Fn(&SeedRuns) -> Vec<SizeResult>| -> Vec<Vec<SizeResult>> {
        runs.iter().map(f).collect()
    };
    let n = runs.len().max(1) as f64;
    let mut best_fixed_multiple = vec![0.0; SIZES.len()];
    for r in &runs {
        for (sum, m) in best_fixed_multiple.iter_mut().zip(&r.4) {
            *sum += m / n;
        }
    }
    WideSummary {
        scenario: scenario.name,
        engines: (0..engines.len())
            .map(|i| outcome(&collect(&|r| r.0[i].clone()), &fixed_by_seed))
            .collect(),
        static_policy: outcome(&collect(&|r| r.1.clone()), &fixed_by_seed),
        best_fixed: outcome(&collect(&|r| r.2.clone()), &fixed_by_seed),
        optimal: optimal.then(|| {
            outcome(
                &collect(&|r| r.3.clone().unwrap_or_default()),
                &fixed_by_seed,
            )
        }),
        best_fixed_multiple,
    }
}

/// One engine's table over the scenarios, against the static policy, the best fixed rates
/// and the optimal policy (when run), in Markdown.
pub fn markdown_wide(summaries: &[WideSummary], engine: usize) -> String {
    let mut out = String::from(
        "| Scenario | Revenue vs static | Revenue / best fixed (worst seed) | Revenue / optimal | End occupancy (static / best fixed / optimal) | Mean occupancy (best fixed / optimal) | Changes per size | Reversals per size (max) | Cuts at >= 93 % | Floor binds | Rate / median |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let opt = |s: &WideSummary, f: &dyn Fn(&Outcome) -> String| {
        s.optimal.as_ref().map_or("-".to_owned(), f)
    };
    for s in summaries {
        let e = &s.engines[engine];
        let _ = writeln!(
            out,
            "| {} | {:+.1} % | {:.1} % ({:.1} %) | {} | {:.1} % ({:.1} / {:.1} / {}) | {:.1} % ({:.1} / {}) | {:.1} | {:.1} ({}) | {} | {} | {:.2}-{:.2} |",
            s.scenario,
            pct(e.revenue, s.static_policy.revenue),
            e.revenue / s.best_fixed.revenue * 100.0,
            e.worst_seed_of_best_fixed * 100.0,
            opt(s, &|o| format!("{:.1} %", e.revenue / o.revenue * 100.0)),
            e.end_occupancy_pct,
            s.static_policy.end_occupancy_pct,
            s.best_fixed.end_occupancy_pct,
            opt(s, &|o| format!("{:.1}", o.end_occupancy_pct)),
            e.mean_occupancy_pct,
            s.best_fixed.mean_occupancy_pct,
            opt(s, &|o| format!("{:.1}", o.mean_occupancy_pct)),
            e.changes_per_size,
            e.reversals_per_size,
            e.max_reversals,
            e.cuts_when_full,
            e.floor_binds,
            e.min_ratio,
            e.max_ratio,
        );
    }
    let sum = |f: &dyn Fn(&WideSummary) -> f64| summaries.iter().map(f).sum::<f64>();
    let engine_total = sum(&|s| s.engines[engine].revenue);
    let optimal_total = summaries
        .iter()
        .all(|s| s.optimal.is_some())
        .then(|| sum(&|s| s.optimal.as_ref().map_or(0.0, |o| o.revenue)));
    let k = summaries.len().max(1) as f64;
    let _ = writeln!(
        out,
        "| overall | {:+.1} % | {:.1} % | {} | | | {:.1} | {:.1} ({}) | {} | {} | |",
        pct(engine_total, sum(&|s| s.static_policy.revenue)),
        engine_total / sum(&|s| s.best_fixed.revenue) * 100.0,
        optimal_total.map_or("-".to_owned(), |o| format!(
            "{:.1} %",
            engine_total / o * 100.0
        )),
        sum(&|s| s.engines[engine].changes_per_size) / k,
        sum(&|s| s.engines[engine].reversals_per_size) / k,
        summaries
            .iter()
            .map(|s| s.engines[engine].max_reversals)
            .max()
            .unwrap_or(0),
        summaries
            .iter()
            .map(|s| s.engines[engine].cuts_when_full)
            .sum::<u32>(),
        summaries
            .iter()
            .map(|s| s.engines[engine].floor_binds)
            .sum::<u32>(),
    );
    out
}

/// The references of the wide market: the best fixed rates and the optimal policy against the
/// static policy, and the best fixed multiples, in Markdown.
pub fn markdown_references(summaries: &[WideSummary]) -> String {
    let mut out = String::from(
        "| Scenario | Best fixed vs static | Optimal vs static | Optimal / best fixed | Best fixed multiple per size (mean over seeds) |\n|---|---|---|---|---|\n",
    );
    for s in summaries {
        let list: Vec<String> = s
            .best_fixed_multiple
            .iter()
            .map(|m| format!("{m:.2}"))
            .collect();
        let _ = writeln!(
            out,
            "| {} | {:+.1} % | {} | {} | {} |",
            s.scenario,
            pct(s.best_fixed.revenue, s.static_policy.revenue),
            s.optimal.as_ref().map_or("-".to_owned(), |o| format!(
                "{:+.1} %",
                pct(o.revenue, s.static_policy.revenue)
            )),
            s.optimal.as_ref().map_or("-".to_owned(), |o| format!(
                "{:.1} %",
                o.revenue / s.best_fixed.revenue * 100.0
            )),
            list.join(", ")
        );
    }
    out
}
