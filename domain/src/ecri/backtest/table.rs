//! The backtest's tables in Markdown: per reaction family, the lifts over no increases (all on
//! top of the street engine) with their intervals across seeds, the engine's stay predictions
//! against what happened, the rules chosen, and the aims checked.

use super::report::{FamilyReport, Report, Row};
use super::{FixedRule, Quarter};
use std::fmt::Write;

fn seeds(s: &[u64]) -> String {
    let contiguous = s.windows(2).all(|w| w[1] == w[0] + 1);
    match (s.first(), s.last()) {
        (Some(a), Some(b)) if a != b && contiguous => format!("{a}-{b}"),
        _ => s.iter().map(u64::to_string).collect::<Vec<_>>().join(", "),
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

fn line(out: &mut String, r: &Row) {
    let _ = writeln!(
        out,
        "| {} | {} | {} | {} | {} | {} | {} ({:.1} %) | {} | {} | {} | {:.2} / {:.2} |",
        r.scenario,
        r.thumb.pct(),
        r.best_rule.pct(),
        r.best_rule_overall.pct(),
        r.engine.pct(),
        r.engine_less_best.points(),
        r.engine_notices,
        r.engine_mean_increase_pct,
        r.predicted_stay.share(),
        r.realized_stay.share(),
        r.stay_gap.points(),
        r.true_sensitivity,
        r.learned_sensitivity,
    );
}

/// The aims, checked on the means: the engine at least the best fixed rule overall (the better
/// of per scenario and one for all), above no increase in every scenario, and its predicted
/// stay within 3 points of the realized one in every scenario.
fn aims(out: &mut String, f: &FamilyReport) {
    let Some((overall, scenarios)) = f.rows.split_last() else {
        return;
    };
    let best = overall.best_rule.mean.max(overall.best_rule_overall.mean);
    let ahead = overall.engine.mean - best;
    let lowest = scenarios
        .iter()
        .min_by(|a, b| a.engine.mean.total_cmp(&b.engine.mean));
    let widest = scenarios
        .iter()
        .max_by(|a, b| a.stay_gap.mean.abs().total_cmp(&b.stay_gap.mean.abs()));
    let met = |ok: bool| if ok { "met" } else { "missed" };
    let _ = writeln!(
        out,
        "\nAims ({}): engine at least the best fixed rule overall: {} ({:+.2} points against \
         {:+.2} %); positive in every scenario: {}{}; predicted stay within 3 points of \
         realized in every scenario: {}{}.",
        f.family.name(),
        met(ahead >= 0.0),
        ahead,
        best,
        met(lowest.is_some_and(|r| r.engine.mean > 0.0)),
        lowest.map_or(String::new(), |r| format!(
            " (lowest {} {:+.1} %)",
            r.scenario, r.engine.mean
        )),
        met(widest.is_some_and(|r| r.stay_gap.mean.abs() <= 3.0)),
        widest.map_or(String::new(), |r| format!(
            " (largest gap {} {:+.1} points)",
            r.scenario, r.stay_gap.mean
        )),
    );
}

/// The engine's notices by quarter: whether what it learns moves its increases and its
/// predictions toward what happens.
fn quarters(out: &mut String, f: &FamilyReport) {
    out.push_str(
        "\nThe engine by quarter of notice (every scenario and seed): notices, mean increase, \
         predicted / realized 90-day stay of those whose 90 days ended in the year, and the \
         stay without the increase the engine predicted / the simulator's own draws would have \
         given (a diagnosis: the engine never sees the draws):",
    );
    groups(out, &["Q1", "Q2", "Q3", "Q4"], &f.quarters);
    out.push_str(
        "\nThe same by the tenant's history at the notice (the first increase; raised before, the \
         last 12 months or more before; the last under 12 months before):",
    );
    groups(
        out,
        &[
            "first",
            "raised 12+ months before",
            "raised under 12 months before",
        ],
        &f.histories,
    );
}

/// Each group's notices, mean increase and predicted / realized stay, on one line.
fn groups(out: &mut String, names: &[&str], groups: &[Quarter]) {
    for (i, (name, q)) in names.iter().zip(groups).enumerate() {
        let scored = f64::from(q.scored.max(1));
        let _ = write!(
            out,
            " {name} {} ({:.1} %, {:.1} % / {:.1} %, without the increase {:.1} % / {:.1} %){}",
            q.notices,
            q.increase_pct_sum / f64::from(q.notices.max(1)),
            q.predicted / scored * 100.0,
            f64::from(q.realized) / scored * 100.0,
            q.predicted_baseline / scored * 100.0,
            f64::from(q.natural) / scored * 100.0,
            if i + 1 == groups.len() { "." } else { ";" }
        );
    }
    out.push('\n');
}

/// One family's table, its rules and its aims.
pub fn family_markdown(f: &FamilyReport) -> String {
    let mut out = format!("#### Family `{}`\n\n", f.family.name());
    out.push_str(
        "| Scenario | +10 % a year | Best fixed rule (per scenario) | Best fixed rule (one for all) | Engine | Engine - best rule (per scenario) | Engine notices (mean increase) | Predicted 90-day stay | Realized 90-day stay | Predicted - realized | Sensitivity true / learned |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in &f.rows {
        line(&mut out, r);
    }
    out.push_str("\nBest fixed rules (tuned with the true reaction on the tuning seeds):\n");
    for (r, rule) in f.rows.iter().zip(&f.rules) {
        let _ = writeln!(out, "- {}: {}", r.scenario, rule_text(rule));
    }
    let _ = writeln!(out, "- one for all: {}", rule_text(&f.rule_overall));
    quarters(&mut out, f);
    aims(&mut out, f);
    out
}

/// Every family's table, after a line saying which seeds tuned and which report.
pub fn markdown(r: &Report) -> String {
    let on = if r.report_seeds.held_out() {
        "(never tuned on)"
    } else {
        "(TUNING seeds, not held out: figures to choose settings on, never to report)"
    };
    let mut out = format!(
        "Fixed rules tuned per family on seeds {} with the true reaction; every figure on \
         seeds {} {on}: the mean across seeds and its 95 % t interval. Lifts: \
         revenue (the year's rent + six months of the rent roll left at its end) against no \
         increases on the same seed, all under the street engine.\n\n",
        seeds(r.tune_seeds.seeds()),
        seeds(r.report_seeds.seeds())
    );
    if r.years.get() > 1 {
        out.push_str(&format!(
            "Runs of {} years, each policy the whole time (the fixed rules tuned on runs as \
             long); only the last year is counted: its rent, its notices (stays of those \
             whose 90 days ended in it) and the six months of the rent roll it leaves.\n\n",
            r.years.get()
        ));
    }
    for f in &r.families {
        out.push_str(&family_markdown(f));
        out.push('\n');
    }
    out
}
