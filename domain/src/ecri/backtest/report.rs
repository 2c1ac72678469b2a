//! Runs the ECRI policies on the same draws and sums them into one table: the best fixed rule
//! is chosen on the tuning seeds (with the true reaction, by running them) and every policy is
//! then scored on the report seeds.

use super::{simulate, EcriPolicy, EcriResult, FixedRule};
use crate::analytics::ecri::EcriSettings;
use crate::ecri::EcriEngineSettings;
use crate::pricing::backtest::market::SCENARIOS;
use std::fmt::Write;

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

/// Each scenario's best fixed rule on the seeds (revenue summed over them), and the best one
/// rule for every scenario at once.
pub fn best_rules(seeds: &[u64]) -> (Vec<FixedRule>, FixedRule) {
    let grid = rule_grid();
    let revenue: Vec<Vec<f64>> = grid
        .iter()
        .map(|rule| {
            let mut sums = vec![0.0; SCENARIOS.len()];
            for &seed in seeds {
                for (sum, r) in sums.iter_mut().zip(simulate(seed, EcriPolicy::Rule(*rule))) {
                    *sum += r.revenue();
                }
            }
            sums
        })
        .collect();
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

/// One scenario over the report seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub scenario: &'static str,
    /// Revenue (year + six months of the roll) summed over the seeds.
    pub none: f64,
    pub thumb: f64,
    pub size_rule: f64,
    pub best_rule: f64,
    pub best_rule_overall: f64,
    pub engine: f64,
    pub rule: FixedRule,
    /// The engine's notices, their mean increase (%), predicted and realized 90-day stays (%).
    pub engine_notices: u32,
    /// Of those, the notices whose 90 days ended within the year (the stays are theirs).
    pub scored_notices: u32,
    pub engine_mean_increase_pct: f64,
    pub predicted_stay_pct: f64,
    pub realized_stay_pct: f64,
    pub baseline_stay_pct: f64,
    /// End occupancy (%) with no increases and under the engine, averaged over the seeds.
    pub none_end_occupancy_pct: f64,
    pub engine_end_occupancy_pct: f64,
    pub stop_loss_days: u32,
    /// Mean over seeds of the true and the learned sensitivity at the end.
    pub true_sensitivity: f64,
    pub learned_sensitivity: f64,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub tune_seeds: Vec<u64>,
    pub report_seeds: Vec<u64>,
    pub rules: Vec<FixedRule>,
    pub rule_overall: FixedRule,
    pub rows: Vec<Row>,
}

/// Tunes the fixed rules on `tune_seeds` and runs every policy on `report_seeds`.
pub fn run(tune_seeds: &[u64], report_seeds: &[u64], settings: &EcriEngineSettings) -> Report {
    let (rules, rule_overall) = best_rules(tune_seeds);
    score(tune_seeds, report_seeds, settings, rules, rule_overall)
}

/// Every policy on `report_seeds`, with the fixed rules given.
pub fn score(
    tune_seeds: &[u64],
    report_seeds: &[u64],
    settings: &EcriEngineSettings,
    rules: Vec<FixedRule>,
    rule_overall: FixedRule,
) -> Report {
    let size_settings = EcriSettings::default();
    let runs = |policy: EcriPolicy<'_>| -> Vec<Vec<EcriResult>> {
        report_seeds.iter().map(|&s| simulate(s, policy)).collect()
    };
    let none = runs(EcriPolicy::None);
    let thumb = runs(EcriPolicy::Rule(FixedRule::RULE_OF_THUMB));
    let size_rule = runs(EcriPolicy::SizeRule(&size_settings));
    let overall = runs(EcriPolicy::Rule(rule_overall));
    let engine = runs(EcriPolicy::Engine(settings));
    let n = report_seeds.len().max(1) as f64;
    let rows = SCENARIOS
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let sum = |r: &[Vec<EcriResult>]| r.iter().map(|f| f[i].revenue()).sum::<f64>();
            let best: f64 = report_seeds
                .iter()
                .map(|&seed| simulate(seed, EcriPolicy::Rule(rules[i]))[i].revenue())
                .sum();
            let e = || engine.iter().map(|f| &f[i]);
            let scored: u32 = e().map(|r| r.scored_notices).sum();
            let windows: u32 = e().map(|r| r.baseline_windows).sum();
            Row {
                scenario: s.name,
                none: sum(&none),
                thumb: sum(&thumb),
                size_rule: sum(&size_rule),
                best_rule: best,
                best_rule_overall: sum(&overall),
                engine: sum(&engine),
                rule: rules[i],
                engine_notices: e().map(|r| r.notices).sum(),
                scored_notices: scored,
                engine_mean_increase_pct: e().map(|r| r.increase_pct_sum).sum::<f64>()
                    / f64::from(e().map(|r| r.notices).sum::<u32>().max(1)),
                predicted_stay_pct: e().map(|r| r.predicted_stays).sum::<f64>()
                    / f64::from(scored.max(1))
                    * 100.0,
                realized_stay_pct: f64::from(e().map(|r| r.realized_stays).sum::<u32>())
                    / f64::from(scored.max(1))
                    * 100.0,
                baseline_stay_pct: f64::from(e().map(|r| r.baseline_stays).sum::<u32>())
                    / f64::from(windows.max(1))
                    * 100.0,
                none_end_occupancy_pct: none.iter().map(|f| f[i].end_occupancy_pct).sum::<f64>()
                    / n,
                engine_end_occupancy_pct: e().map(|r| r.end_occupancy_pct).sum::<f64>() / n,
                stop_loss_days: e().map(|r| r.stop_loss_days).sum(),
                true_sensitivity: e().map(|r| r.sensitivity).sum::<f64>() / n,
                learned_sensitivity: e().map(|r| r.learned_sensitivity).sum::<f64>() / n,
            }
        })
        .collect();
    Report {
        tune_seeds: tune_seeds.to_vec(),
        report_seeds: report_seeds.to_vec(),
        rules,
        rule_overall,
        rows,
    }
}

fn lift(a: f64, base: f64) -> f64 {
    if base > 0.0 {
        (a / base - 1.0) * 100.0
    } else {
        0.0
    }
}

fn seeds(s: &[u64]) -> String {
    match (s.first(), s.last()) {
        (Some(a), Some(b)) if a != b => format!("{a}-{b}"),
        (Some(a), _) => a.to_string(),
        _ => String::new(),
    }
}

fn rule_text(r: &FixedRule) -> String {
    format!(
        "+{:.0} % every {:.0} months, {}",
        r.step_pct,
        r.months,
        match r.cap_over_street_pct {
            Some(c) => format!("at most {c:.0} % over street"),
            None => "no cap".to_owned(),
        }
    )
}

/// The table in Markdown: revenue lifts over no increases (all on top of the street engine),
/// the engine's stay predictions against what happened, and the rules chosen.
pub fn markdown(r: &Report) -> String {
    let mut out = format!(
        "Fixed rules tuned on seeds {}; every figure below on seeds {} (not used for tuning). \
         Revenue = the year's rent + six months of the rent roll left at its end, summed over \
         the seeds; lifts against no increases, all under the street engine.\n\n",
        seeds(&r.tune_seeds),
        seeds(&r.report_seeds)
    );
    out.push_str(
        "| Scenario | +10 % a year | Per-size rule | Best fixed rule (per scenario) | Best fixed rule (one for all) | Engine | Engine notices (mean increase) | Predicted / realized 90-day stay | Not increased: 90-day stay | End occupancy (none / engine) | Sensitivity true / learned |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut t = [0.0; 6];
    let (mut pred, mut real, mut scored) = (0.0, 0.0, 0.0);
    for row in &r.rows {
        let _ = writeln!(
            out,
            "| {} | {:+.1} % | {:+.1} % | {:+.1} % | {:+.1} % | {:+.1} % | {} ({:.1} %) | {:.1} % / {:.1} % | {:.1} % | {:.1} % / {:.1} % | {:.2} / {:.2} |",
            row.scenario,
            lift(row.thumb, row.none),
            lift(row.size_rule, row.none),
            lift(row.best_rule, row.none),
            lift(row.best_rule_overall, row.none),
            lift(row.engine, row.none),
            row.engine_notices,
            row.engine_mean_increase_pct,
            row.predicted_stay_pct,
            row.realized_stay_pct,
            row.baseline_stay_pct,
            row.none_end_occupancy_pct,
            row.engine_end_occupancy_pct,
            row.true_sensitivity,
            row.learned_sensitivity,
        );
        for (acc, v) in t.iter_mut().zip([
            row.none,
            row.thumb,
            row.size_rule,
            row.best_rule,
            row.best_rule_overall,
            row.engine,
        ]) {
            *acc += v;
        }
        let n = f64::from(row.scored_notices);
        pred += row.predicted_stay_pct * n;
        real += row.realized_stay_pct * n;
        scored += n;
    }
    let _ = writeln!(
        out,
        "| overall | {:+.2} % | {:+.2} % | {:+.2} % | {:+.2} % | {:+.2} % | {} | {:.1} % / {:.1} % | | | |",
        lift(t[1], t[0]),
        lift(t[2], t[0]),
        lift(t[3], t[0]),
        lift(t[4], t[0]),
        lift(t[5], t[0]),
        r.rows.iter().map(|r| r.engine_notices).sum::<u32>(),
        pred / scored.max(1.0),
        real / scored.max(1.0),
    );
    out.push_str("\nBest fixed rules (tuned with the true reaction on the tuning seeds):\n");
    for row in &r.rows {
        let _ = writeln!(out, "- {}: {}", row.scenario, rule_text(&row.rule));
    }
    let _ = writeln!(out, "- one for all: {}", rule_text(&r.rule_overall));
    out
}
