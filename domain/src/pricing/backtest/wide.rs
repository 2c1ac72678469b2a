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
//!
//! The move-ins answer the rate by the family of demand curves the run asks for
//! ([`super::demand`], [`SizeParams::wide_in`]): every policy and every reference of the run,
//! the optimal programme and the best fixed rates' replicas included, meets the same curves.

use super::demand::Family;
use super::market::{Scenario, SizeParams, SIZES};
use super::optimal::{OptimalPolicy, YearEnd};
use super::{simulate_wide, Policy, SizeResult, FIXED_GRID, FIXED_STEP};
use crate::pricing::settings::PricingSettings;

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
    /// The revenue plus what each size's year left behind, valued by the going concern's
    /// programme ([`YearEnd::value_left`]); zero when the optimal policies were not solved.
    pub value: f64,
    /// The revenue of each seed, in the order of the seeds run, and its value as above.
    pub by_seed: Vec<f64>,
    pub value_by_seed: Vec<f64>,
    /// Each size's figures summed over the seeds, in `SIZES` order.
    pub sizes: Vec<SizeTotals>,
}

/// One size's figures under one policy, summed over the seeds of a scenario.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SizeTotals {
    pub revenue: f64,
    /// The revenue plus what the year left, valued by the going concern's programme (the
    /// revenue alone when it was not solved).
    pub value: f64,
    /// Mean occupancy over the year (%), summed over the seeds.
    pub mean_occupancy_pct: f64,
    /// Days in each band of occupancy and the sum of the rate over the median on them
    /// ([`super::occupancy_band`]).
    pub band_days: [u32; 3],
    pub band_ratio: [f64; 3],
}

/// Each size's [`SizeTotals`] over the runs of the seeds.
fn size_totals(runs: &[Vec<SizeResult>], ends: &[Option<Vec<YearEnd>>]) -> Vec<SizeTotals> {
    let mut sizes = vec![SizeTotals::default(); SIZES.len()];
    for (run, end) in runs.iter().zip(ends) {
        for (i, (t, r)) in sizes.iter_mut().zip(run).enumerate() {
            t.revenue += r.revenue;
            t.value += r.revenue + end.as_ref().map_or(0.0, |e| e[i].value_left(r));
            t.mean_occupancy_pct += r.mean_occupancy_pct;
            for b in 0..3 {
                t.band_days[b] += r.band_days[b];
                t.band_ratio[b] += r.band_ratio[b];
            }
        }
    }
    sizes
}

/// One scenario of the wide market over its seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct WideSummary {
    pub scenario: &'static str,
    /// The family of demand curves the seeds' markets were drawn in.
    pub family: Family,
    /// One per engine settings given, in their order.
    pub engines: Vec<Outcome>,
    pub static_policy: Outcome,
    pub best_fixed: Outcome,
    pub optimal: Option<Outcome>,
    /// The optimal policy of a going concern (solved over `GOING_CONCERN_YEARS`, its first
    /// year applied).
    pub going_concern: Option<Outcome>,
    /// Each size's best fixed multiple, averaged over the seeds.
    pub best_fixed_multiple: Vec<f64>,
}

/// The years the going concern's optimal policy is solved over: the first is the backtest's,
/// the others value what it leaves (a tenant stays 400 days on average, so two more years hold
/// most of a late move-in's rent).
pub const GOING_CONCERN_YEARS: u32 = 3;

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

fn outcome(runs: &[Vec<SizeResult>], best_fixed: &[f64], ends: &[Option<Vec<YearEnd>>]) -> Outcome {
    let n = runs.len().max(1) as f64;
    let all = || runs.iter().flatten();
    let sizes = all().count().max(1) as f64;
    let value_by_seed: Vec<f64> = runs
        .iter()
        .zip(ends)
        .map(|(r, e)| {
            e.as_ref().map_or(0.0, |e| {
                r.iter()
                    .zip(e)
                    .map(|(s, e)| s.revenue + e.value_left(s))
                    .sum()
            })
        })
        .collect();
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
        value: value_by_seed.iter().sum(),
        by_seed: runs
            .iter()
            .map(|r| r.iter().map(|s| s.revenue).sum())
            .collect(),
        value_by_seed,
        sizes: size_totals(runs, ends),
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

/// Every policy's runs of one seed.
struct SeedRuns {
    engines: Vec<Vec<SizeResult>>,
    static_policy: Vec<SizeResult>,
    best_fixed: Vec<SizeResult>,
    /// With the optimal policies: the year's, and the going concern's (its first year), and
    /// how the going concern values each size's year end.
    optimal: Option<Vec<SizeResult>>,
    going_concern: Option<Vec<SizeResult>>,
    ends: Option<Vec<YearEnd>>,
    multiples: Vec<f64>,
}

fn run_seed(
    scenario: &Scenario,
    seed: u64,
    engines: &[PricingSettings],
    replicas: u64,
    optimal: Option<u32>,
    family: Family,
) -> SeedRuns {
    let params = SizeParams::wide_in(scenario, seed, family);
    let multiples = best_fixed_multiples(&params, seed, replicas);
    let flat: Vec<[f64; 12]> = multiples.iter().map(|m| [*m; 12]).collect();
    let going = optimal.map(|years| OptimalPolicy::going_concern(&params, years));
    SeedRuns {
        engines: engines
            .iter()
            .map(|s| simulate_wide(&params, seed, Policy::Engine(s)))
            .collect(),
        static_policy: simulate_wide(&params, seed, Policy::Static),
        best_fixed: simulate_wide(&params, seed, Policy::Schedule(&flat)),
        optimal: optimal.map(|_| {
            let policy = OptimalPolicy::drawn(&params);
            simulate_wide(&params, seed, Policy::Optimal(&policy))
        }),
        going_concern: going
            .as_ref()
            .map(|p| simulate_wide(&params, seed, Policy::Optimal(p))),
        ends: going.as_ref().map(OptimalPolicy::year_ends),
        multiples,
    }
}

/// Runs one scenario of the wide market on the seeds (on two threads: the seeds are
/// independent), its demand curves of `family`. `engines` are compared side by side (the
/// engine under test first). With `optimal`, the year's optimal policy and the going
/// concern's, solved over that many years ([`GOING_CONCERN_YEARS`] by default), are run too.
pub fn summarize_wide(
    scenario: &Scenario,
    seeds: &[u64],
    engines: &[PricingSettings],
    replicas: u64,
    optimal: Option<u32>,
    family: Family,
) -> WideSummary {
    let half = seeds.len().div_ceil(2);
    let runs: Vec<SeedRuns> = std::thread::scope(|scope| {
        let handles: Vec<_> = seeds
            .chunks(half.max(1))
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|&seed| run_seed(scenario, seed, engines, replicas, optimal, family))
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
        .map(|r| r.best_fixed.iter().map(|s| s.revenue).sum())
        .collect();
    let ends: Vec<Option<Vec<YearEnd>>> = runs.iter().map(|r| r.ends.clone()).collect();
    let of = |f: &dyn Fn(&SeedRuns) -> Vec<SizeResult>| -> Outcome {
        let all: Vec<Vec<SizeResult>> = runs.iter().map(f).collect();
        outcome(&all, &fixed_by_seed, &ends)
    };
    let n = runs.len().max(1) as f64;
    let mut best_fixed_multiple = vec![0.0; SIZES.len()];
    for r in &runs {
        for (sum, m) in best_fixed_multiple.iter_mut().zip(&r.multiples) {
            *sum += m / n;
        }
    }
    WideSummary {
        scenario: scenario.name,
        family,
        engines: (0..engines.len())
            .map(|i| of(&|r| r.engines[i].clone()))
            .collect(),
        static_policy: of(&|r| r.static_policy.clone()),
        best_fixed: of(&|r| r.best_fixed.clone()),
        optimal: optimal.map(|_| of(&|r| r.optimal.clone().unwrap_or_default())),
        going_concern: optimal.map(|_| of(&|r| r.going_concern.clone().unwrap_or_default())),
        best_fixed_multiple,
    }
}

/// A policy's revenue against the going concern's optimal policy's, what each year left
/// counted: the policy's revenue plus the value it left over the going concern's, over the
/// going concern's revenue. A shortfall reads in the year's revenue, as "revenue / optimal"
/// does, rather than diluted by the years after.
pub fn going_concern_share(policy: &Outcome, going_concern: &Outcome) -> f64 {
    (going_concern.revenue - going_concern.value + policy.value) / going_concern.revenue
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pricing::backtest::market::SCENARIOS;

    #[test]
    fn the_going_concern_scores_its_own_optimum_first_and_charges_the_years_for_its_end() {
        // High demand, two seeds, the going concern solved over two years.
        let s = summarize_wide(
            &SCENARIOS[2],
            &[1, 2],
            &[PricingSettings::default()],
            1,
            Some(2),
            Family::Logistic,
        );
        let (year, going) = (s.optimal.unwrap(), s.going_concern.unwrap());
        for o in [
            &s.engines[0],
            &s.static_policy,
            &s.best_fixed,
            &year,
            &going,
        ] {
            // Tenants in place at the year's end and vacant units both carry value.
            assert!(o.value > o.revenue * 1.5, "{o:?}");
        }
        assert!((going_concern_share(&going, &going) - 1.0).abs() < 1e-12);
        // The year's optimum earns about what the going concern's does within the year, but
        // fills its last weeks at the one day's best rate, and those tenants keep it: counted
        // with what the year left, it is well short (98.3 % on seeds 1-15 of the wide market).
        assert!((0.99..1.01).contains(&(year.revenue / going.revenue)));
        let share = going_concern_share(&year, &going);
        // On these seeds the year's optimum earns 100.5 % of the going concern's revenue and
        // 98.5 % counted as a going concern; the static policy, which ends the year emptier
        // and at its starting rates, 95.6 % and 89.7 %.
        assert!(share < year.revenue / going.revenue - 0.01, "{share}");
        let kept = going_concern_share(&s.static_policy, &going);
        assert!(
            kept < s.static_policy.revenue / going.revenue - 0.03,
            "{kept}"
        );
    }
}
