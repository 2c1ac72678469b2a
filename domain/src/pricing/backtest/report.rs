//! Runs every policy over scenarios and seeds and sums the results into one table.

use super::market::{Scenario, SIZES};
use super::{simulate, Policy, SizeResult, FIXED_GRID, FIXED_STEP};
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

/// Facility occupancy (%) at the end of a run: the sizes' end occupancy weighed by units.
pub(super) fn facility_occupancy(results: &[SizeResult]) -> f64 {
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

pub(super) fn pct(a: f64, b: f64) -> f64 {
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
