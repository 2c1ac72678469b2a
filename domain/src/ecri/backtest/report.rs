//! Runs the ECRI policies on the same draws, per reaction family: the best fixed rules are
//! chosen on the tuning seeds (with the true reaction, by running them) and every policy is
//! then scored on the report seeds, each figure a mean across the report seeds with its 95 %
//! t interval (`stats`). The tables are in `table`.

use super::seeds::{ReportSeeds, TuneSeeds};
use super::stats::{t_interval, Interval};
use super::{simulate, EcriPolicy, EcriResult, Family, FixedRule, Quarter, Years};
use crate::ecri::EcriEngineSettings;
use crate::pricing::backtest::market::SCENARIOS;

pub use super::table::markdown;

/// The fixed rules tried: step x months x cap over street, 9 x 4 x 5 = 180 rules.
pub fn rule_grid() -> Vec<FixedRule> {
    let mut grid = Vec::new();
    for step_pct in [5.0, 8.0, 10.0, 12.0, 15.0, 18.0, 22.0, 26.0, 30.0] {
        for months in [4.0, 6.0, 9.0, 12.0] {
            for cap_over_street_pct in [None, Some(0.0), Some(10.0), Some(20.0), Some(35.0)] {
                grid.push(FixedRule {
                    step_pct,
                    months,
                    cap_over_street_pct,
                    notice_days: 30,
                });
            }
        }
    }
    grid
}

/// `f` over `items` on as many threads as the machine has, in order.
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = items.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|c| s.spawn(|| c.iter().map(&f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a simulation thread"))
            .collect()
    })
}

/// Each scenario's best fixed rule on the tuning seeds (revenue summed over them) with the
/// family's true reaction, and the best one rule for every scenario at once.
pub fn best_rules(family: Family, seeds: &TuneSeeds, years: Years) -> (Vec<FixedRule>, FixedRule) {
    let grid = rule_grid();
    let revenue: Vec<Vec<f64>> = par_map(&grid, |rule| {
        let mut sums = vec![0.0; SCENARIOS.len()];
        for &seed in seeds.seeds() {
            for (sum, r) in
                sums.iter_mut()
                    .zip(simulate(seed, family, EcriPolicy::Rule(*rule), years))
            {
                *sum += r.revenue();
            }
        }
        sums
    });
    let per_scenario = (0..SCENARIOS.len())
        .map(|s| {
            let best = (0..grid.len())
                .max_by(|&a, &b| revenue[a][s].total_cmp(&revenue[b][s]))
                .expect("a grid");
            grid[best]
        })
        .collect();
    let overall = (0..grid.len())
        .max_by(|&a, &b| {
            revenue[a]
                .iter()
                .sum::<f64>()
                .total_cmp(&revenue[b].iter().sum::<f64>())
        })
        .expect("a grid");
    (per_scenario, grid[overall])
}

/// One scenario (or all of them, `overall`) over the report seeds: lifts over no increases
/// (%), each a mean across seeds with its 95 % interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub scenario: &'static str,
    pub thumb: Interval,
    /// The best fixed rule of the scenario (overall: each scenario under its own).
    pub best_rule: Interval,
    pub best_rule_overall: Interval,
    pub engine: Interval,
    /// The engine's lift less the best fixed rule's (per scenario), in points, seed by seed.
    pub engine_less_best: Interval,
    /// The engine's notices over the seeds and their mean increase (%).
    pub engine_notices: u32,
    pub engine_mean_increase_pct: f64,
    /// The engine's predicted and the realized 90-day stay of its notices (%), and the gap
    /// (predicted less realized, points), over the notices whose 90 days ended in the year.
    pub predicted_stay: Interval,
    pub realized_stay: Interval,
    pub stay_gap: Interval,
    /// Mean over seeds of the facilities' true sensitivity and the engine's learned one.
    pub true_sensitivity: f64,
    pub learned_sensitivity: f64,
}

/// One reaction family's comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct FamilyReport {
    pub family: Family,
    pub rules: Vec<FixedRule>,
    pub rule_overall: FixedRule,
    /// One row per scenario, then `overall`.
    pub rows: Vec<Row>,
    /// The engine's notices by quarter of the year, every scenario and seed pooled.
    pub quarters: [Quarter; 4],
    /// The same by the tenant's history at the notice (`EcriResult::by_history`).
    pub histories: [Quarter; 3],
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The runs' length (only the last year counted), the rules tuned on the same.
    pub years: Years,
    pub tune_seeds: TuneSeeds,
    pub report_seeds: ReportSeeds,
    pub families: Vec<FamilyReport>,
}

/// Tunes the fixed rules of each family on `tune` and runs every policy on `report`.
pub fn run(
    families: &[Family],
    tune: &TuneSeeds,
    report: &ReportSeeds,
    settings: &EcriEngineSettings,
    years: Years,
) -> Report {
    let families = families
        .iter()
        .map(|&family| {
            let (rules, rule_overall) = best_rules(family, tune, years);
            score(family, report, settings, (rules, rule_overall), years)
        })
        .collect();
    Report {
        years,
        tune_seeds: tune.clone(),
        report_seeds: report.clone(),
        families,
    }
}

/// Every policy's results on one seed, per scenario.
struct SeedRuns {
    none: Vec<EcriResult>,
    thumb: Vec<EcriResult>,
    /// Scenario i under its own best rule.
    best: Vec<EcriResult>,
    overall: Vec<EcriResult>,
    engine: Vec<EcriResult>,
}

fn lift(a: f64, base: f64) -> f64 {
    if base > 0.0 {
        (a / base - 1.0) * 100.0
    } else {
        0.0
    }
}

/// Every policy of one family on the report seeds, with the fixed rules given.
pub fn score(
    family: Family,
    report: &ReportSeeds,
    settings: &EcriEngineSettings,
    (rules, rule_overall): (Vec<FixedRule>, FixedRule),
    years: Years,
) -> FamilyReport {
    let runs: Vec<SeedRuns> = par_map(report.seeds(), |&seed| {
        let run = |p: EcriPolicy<'_>| simulate(seed, family, p, years);
        let mut distinct: Vec<(FixedRule, Vec<EcriResult>)> = Vec::new();
        let best = rules
            .iter()
            .enumerate()
            .map(|(i, rule)| {
                if let Some((_, r)) = distinct.iter().find(|(d, _)| d == rule) {
                    return r[i].clone();
                }
                let r = run(EcriPolicy::Rule(*rule));
                let out = r[i].clone();
                distinct.push((*rule, r));
                out
            })
            .collect();
        SeedRuns {
            none: run(EcriPolicy::None),
            thumb: run(EcriPolicy::Rule(FixedRule::RULE_OF_THUMB)),
            best,
            overall: run(EcriPolicy::Rule(rule_overall)),
            engine: run(EcriPolicy::Engine(settings)),
        }
    });
    let mut rows: Vec<Row> = (0..SCENARIOS.len())
        .map(|i| row(SCENARIOS[i].name, &runs, &[i]))
        .collect();
    let all: Vec<usize> = (0..SCENARIOS.len()).collect();
    rows.push(row("overall", &runs, &all));
    let mut quarters = [Quarter::default(); 4];
    let mut histories = [Quarter::default(); 3];
    for r in runs.iter().flat_map(|s| &s.engine) {
        add(&mut quarters, &r.by_quarter);
        add(&mut histories, &r.by_history);
    }
    FamilyReport {
        family,
        rules,
        rule_overall,
        rows,
        quarters,
        histories,
    }
}

/// Adds `from`'s notice figures to `into`'s, group by group.
fn add(into: &mut [Quarter], from: &[Quarter]) {
    for (q, x) in into.iter_mut().zip(from) {
        q.notices += x.notices;
        q.increase_pct_sum += x.increase_pct_sum;
        q.scored += x.scored;
        q.predicted += x.predicted;
        q.realized += x.realized;
        q.predicted_baseline += x.predicted_baseline;
        q.natural += x.natural;
    }
}

/// The row of the scenarios `of` (one, or all for `overall`), summed within each seed.
fn row(scenario: &'static str, runs: &[SeedRuns], of: &[usize]) -> Row {
    let sum = |r: &[EcriResult], f: &dyn Fn(&EcriResult) -> f64| of.iter().map(|&i| f(&r[i])).sum();
    let revenue = |r: &[EcriResult]| sum(r, &|x| x.revenue());
    let lifts = |pick: &dyn Fn(&SeedRuns) -> &[EcriResult]| -> Vec<f64> {
        runs.iter()
            .map(|s| lift(revenue(pick(s)), revenue(&s.none)))
            .collect()
    };
    let engine = lifts(&|s| &s.engine);
    let best = lifts(&|s| &s.best);
    let less: Vec<f64> = engine.iter().zip(&best).map(|(e, b)| e - b).collect();
    // Stays of the seeds whose engine gave notices that could be scored.
    let mut predicted = Vec::new();
    let mut realized = Vec::new();
    for s in runs {
        let scored: f64 = sum(&s.engine, &|x| f64::from(x.scored_notices));
        if scored > 0.0 {
            predicted.push(sum(&s.engine, &|x| x.predicted_stays) / scored * 100.0);
            realized.push(sum(&s.engine, &|x| f64::from(x.realized_stays)) / scored * 100.0);
        }
    }
    let gap: Vec<f64> = predicted
        .iter()
        .zip(&realized)
        .map(|(p, r)| p - r)
        .collect();
    let notices: f64 = runs
        .iter()
        .map(|s| sum(&s.engine, &|x| f64::from(x.notices)))
        .sum();
    let increase: f64 = runs
        .iter()
        .map(|s| sum(&s.engine, &|x| x.increase_pct_sum))
        .sum();
    let per_facility = (runs.len() * of.len()).max(1) as f64;
    let mean_of = |f: &dyn Fn(&EcriResult) -> f64| -> f64 {
        runs.iter().map(|s| sum(&s.engine, f)).sum::<f64>() / per_facility
    };
    Row {
        scenario,
        thumb: t_interval(&lifts(&|s| &s.thumb)),
        best_rule: t_interval(&best),
        best_rule_overall: t_interval(&lifts(&|s| &s.overall)),
        engine: t_interval(&engine),
        engine_less_best: t_interval(&less),
        engine_notices: notices as u32,
        engine_mean_increase_pct: increase / notices.max(1.0),
        predicted_stay: t_interval(&predicted),
        realized_stay: t_interval(&realized),
        stay_gap: t_interval(&gap),
        true_sensitivity: mean_of(&|x| x.sensitivity),
        learned_sensitivity: mean_of(&|x| x.learned_sensitivity),
    }
}
