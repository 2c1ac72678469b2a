//! The wide market's tables in Markdown. Every share is the mean over the seeds of each seed's
//! share (a seed is one draw of every size's market and its random streams, so the seeds are
//! independent), with its 95 % t interval across the seeds (`ecri::backtest::stats`); the
//! overall row's shares are per seed over every scenario's revenue of that seed.

use super::wide::{Outcome, WideSummary};
use crate::ecri::backtest::stats::{t_interval, Interval};
use std::fmt::Write;

/// Per seed, `num / den` in percent, and its interval across the seeds.
fn shares(num: &[f64], den: &[f64]) -> Interval {
    let values: Vec<f64> = num.iter().zip(den).map(|(a, b)| a / b * 100.0).collect();
    t_interval(&values)
}

/// Per seed, how much more `num` earned than `den`, in percent, and its interval.
fn gains(num: &[f64], den: &[f64]) -> Interval {
    let values: Vec<f64> = num
        .iter()
        .zip(den)
        .map(|(a, b)| (a / b - 1.0) * 100.0)
        .collect();
    t_interval(&values)
}

/// Per seed, a policy's revenue against another's with what each year left counted, in
/// percent: the other's revenue plus the difference of the two years' ends (valued by the
/// going concern's programme), over the other's revenue. Against the going concern's optimal
/// policy this is [`super::wide::going_concern_share`] seed by seed; against the best fixed
/// rates, the same yardstick applied to them.
pub fn left_counted_shares(policy: &Outcome, against: &Outcome) -> Interval {
    let values: Vec<f64> = (0..against.by_seed.len().min(policy.value_by_seed.len()))
        .map(|i| {
            let (g, gv) = (against.by_seed[i], against.value_by_seed[i]);
            (g - gv + policy.value_by_seed[i]) / g * 100.0
        })
        .collect();
    t_interval(&values)
}

/// One policy's revenue and value summed over the scenarios, seed by seed (the other figures
/// are per scenario and left at zero); `None` when a scenario lacks the policy.
pub fn total(
    summaries: &[WideSummary],
    f: &dyn Fn(&WideSummary) -> Option<&Outcome>,
) -> Option<Outcome> {
    let add = |a: &[f64], b: &[f64]| -> Vec<f64> {
        if a.is_empty() {
            return b.to_vec();
        }
        a.iter().zip(b).map(|(x, y)| x + y).collect()
    };
    summaries.iter().try_fold(Outcome::default(), |sum, s| {
        f(s).map(|o| Outcome {
            revenue: sum.revenue + o.revenue,
            value: sum.value + o.value,
            by_seed: add(&sum.by_seed, &o.by_seed),
            value_by_seed: add(&sum.value_by_seed, &o.value_by_seed),
            ..Outcome::default()
        })
    })
}

/// The engine's shares of one row: against the static policy, the best fixed rates, the
/// year's optimal policy and the going concern's (the last two when run).
struct Shares {
    static_gain: Interval,
    best_fixed: Interval,
    optimal: Option<Interval>,
    going_concern: Option<Interval>,
    /// Against the best fixed rates with what each year left counted (when the going concern
    /// was solved: its programme values the year's end).
    best_fixed_left: Option<Interval>,
}

impl Shares {
    fn of(
        e: &Outcome,
        [static_policy, fixed]: [&Outcome; 2],
        optimal: Option<&Outcome>,
        going: Option<&Outcome>,
    ) -> Self {
        Self {
            static_gain: gains(&e.by_seed, &static_policy.by_seed),
            best_fixed: shares(&e.by_seed, &fixed.by_seed),
            optimal: optimal.map(|o| shares(&e.by_seed, &o.by_seed)),
            going_concern: going.map(|g| left_counted_shares(e, g)),
            best_fixed_left: going.map(|_| left_counted_shares(e, fixed)),
        }
    }
}

fn or_dash(i: Option<Interval>) -> String {
    i.map_or("-".to_owned(), |i| i.share())
}

/// One engine's table over the scenarios, against the static policy, the best fixed rates
/// and the optimal policies (when run), in Markdown.
pub fn markdown_wide(summaries: &[WideSummary], engine: usize) -> String {
    let mut out = String::from(
        "| Scenario | Revenue vs static | Revenue / best fixed (worst seed) | Revenue / optimal | Revenue / going concern's optimal, what the year left counted | Revenue / best fixed, what the year left counted | End occupancy (static / best fixed / optimal) | Mean occupancy (best fixed / optimal) | Changes per size | Reversals per size (max) | Cuts at >= 93 % | Floor binds | Rate / median |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let opt = |s: &WideSummary, f: &dyn Fn(&Outcome) -> String| {
        s.optimal.as_ref().map_or("-".to_owned(), f)
    };
    for s in summaries {
        let e = &s.engines[engine];
        let sh = Shares::of(
            e,
            [&s.static_policy, &s.best_fixed],
            s.optimal.as_ref(),
            s.going_concern.as_ref(),
        );
        let _ = writeln!(
            out,
            "| {} | {} | {} ({:.1} %) | {} | {} | {} | {:.1} % ({:.1} / {:.1} / {}) | {:.1} % ({:.1} / {}) | {:.1} | {:.1} ({}) | {} | {} | {:.2}-{:.2} |",
            s.scenario,
            sh.static_gain.pct(),
            sh.best_fixed.share(),
            e.worst_seed_of_best_fixed * 100.0,
            or_dash(sh.optimal),
            or_dash(sh.going_concern),
            or_dash(sh.best_fixed_left),
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
    let of = |f: &dyn Fn(&WideSummary) -> Option<&Outcome>| total(summaries, f);
    let (e, st, fixed) = (
        of(&|s| Some(&s.engines[engine])).unwrap_or_default(),
        of(&|s| Some(&s.static_policy)).unwrap_or_default(),
        of(&|s| Some(&s.best_fixed)).unwrap_or_default(),
    );
    let (year, going) = (
        of(&|s| s.optimal.as_ref()),
        of(&|s| s.going_concern.as_ref()),
    );
    let sh = Shares::of(&e, [&st, &fixed], year.as_ref(), going.as_ref());
    let k = summaries.len().max(1) as f64;
    let each =
        |f: &dyn Fn(&Outcome) -> f64| summaries.iter().map(|s| f(&s.engines[engine])).sum::<f64>();
    let _ = writeln!(
        out,
        "| overall | {} | {} | {} | {} | {} | | | {:.1} | {:.1} ({}) | {} | {} | |",
        sh.static_gain.pct(),
        sh.best_fixed.share(),
        or_dash(sh.optimal),
        or_dash(sh.going_concern),
        or_dash(sh.best_fixed_left),
        each(&|o| o.changes_per_size) / k,
        each(&|o| o.reversals_per_size) / k,
        summaries
            .iter()
            .map(|s| s.engines[engine].max_reversals)
            .max()
            .unwrap_or(0),
        each(&|o| f64::from(o.cuts_when_full)),
        each(&|o| f64::from(o.floor_binds)),
    );
    out
}

/// The references of the wide market: the best fixed rates and the optimal policies against
/// the static policy, and the best fixed multiples, in Markdown.
pub fn markdown_references(summaries: &[WideSummary]) -> String {
    let mut out = String::from(
        "| Scenario | Best fixed vs static | Optimal vs static | Optimal / best fixed | Going concern's optimal: revenue / the year's optimal | The year's optimal / going concern's, what the year left counted | Best fixed / going concern's, the same | Best fixed multiple per size (mean over seeds) |\n|---|---|---|---|---|---|---|---|\n",
    );
    for s in summaries {
        let list: Vec<String> = s
            .best_fixed_multiple
            .iter()
            .map(|m| format!("{m:.2}"))
            .collect();
        reference_row(
            &mut out,
            s.scenario,
            [&s.static_policy, &s.best_fixed],
            s.optimal.as_ref().zip(s.going_concern.as_ref()),
            &list.join(", "),
        );
    }
    if summaries.len() > 1 {
        let (fixed, static_policy) = (
            total(summaries, &|s| Some(&s.best_fixed)).unwrap_or_default(),
            total(summaries, &|s| Some(&s.static_policy)).unwrap_or_default(),
        );
        let (year, going) = (
            total(summaries, &|s| s.optimal.as_ref()),
            total(summaries, &|s| s.going_concern.as_ref()),
        );
        reference_row(
            &mut out,
            "overall",
            [&static_policy, &fixed],
            year.as_ref().zip(going.as_ref()),
            "",
        );
    }
    out
}

/// One row of [`markdown_references`]: `[static, best fixed]`, and the year's and the going
/// concern's optimal policies when run.
fn reference_row(
    out: &mut String,
    name: &str,
    [static_policy, fixed]: [&Outcome; 2],
    optimal: Option<(&Outcome, &Outcome)>,
    multiples: &str,
) {
    let or_dash =
        |f: &dyn Fn(&Outcome, &Outcome) -> String| optimal.map_or("-".to_owned(), |(o, g)| f(o, g));
    let _ = writeln!(
        out,
        "| {name} | {} | {} | {} | {} | {} | {} | {multiples} |",
        gains(&fixed.by_seed, &static_policy.by_seed).pct(),
        or_dash(&|o, _| gains(&o.by_seed, &static_policy.by_seed).pct()),
        or_dash(&|o, _| shares(&o.by_seed, &fixed.by_seed).share()),
        or_dash(&|o, g| shares(&g.by_seed, &o.by_seed).share()),
        or_dash(&|o, g| left_counted_shares(o, g).share()),
        or_dash(&|_, g| left_counted_shares(fixed, g).share()),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(by_seed: &[f64], value_by_seed: &[f64]) -> Outcome {
        Outcome {
            revenue: by_seed.iter().sum(),
            value: value_by_seed.iter().sum(),
            by_seed: by_seed.to_vec(),
            value_by_seed: value_by_seed.to_vec(),
            ..Outcome::default()
        }
    }

    #[test]
    fn shares_are_per_seed_with_their_interval() {
        // Two seeds: 99 % and 101 % of the best fixed rates: mean 100, sd sqrt(2), se 1,
        // t(1) 12.706.
        let s = shares(&[99.0, 202.0], &[100.0, 200.0]);
        assert!((s.mean - 100.0).abs() < 1e-9);
        assert!((s.high - 100.0 - 12.706).abs() < 1e-3, "{s:?}");
        // Revenue 100 and 200 where the going concern earned 110 and 210, the going concern
        // valued at 300 and 400 with what it left, the policy at 290 and 395: the policy is
        // 10 and 5 short, 90.9 % and 97.6 % of the going concern's year.
        let (p, g) = (
            outcome(&[100.0, 200.0], &[290.0, 395.0]),
            outcome(&[110.0, 210.0], &[300.0, 400.0]),
        );
        let i = left_counted_shares(&p, &g);
        let expected = ((100.0 / 110.0) + (205.0 / 210.0)) / 2.0 * 100.0;
        assert!((i.mean - expected).abs() < 1e-9, "{i:?}");
        assert!((left_counted_shares(&g, &g).mean - 100.0).abs() < 1e-9);
        // Against the best fixed rates the same: at 100 and 210 valued at 280 and 400, the
        // policy left 10 more on the first seed and 5 less on the second, 110 % and 97.6 %.
        let fixed = outcome(&[100.0, 210.0], &[280.0, 400.0]);
        let i = left_counted_shares(&p, &fixed);
        assert!(
            (i.mean - (110.0 + 205.0 / 210.0 * 100.0) / 2.0).abs() < 1e-9,
            "{i:?}"
        );
    }

    #[test]
    fn the_total_adds_each_seed_over_the_scenarios() {
        let summary = |o: Outcome| WideSummary {
            scenario: "t",
            family: crate::pricing::backtest::demand::Family::Logistic,
            engines: vec![o.clone()],
            static_policy: o.clone(),
            best_fixed: o,
            optimal: None,
            going_concern: None,
            best_fixed_multiple: Vec::new(),
        };
        let all = [
            summary(outcome(&[1.0, 2.0], &[0.0, 0.0])),
            summary(outcome(&[10.0, 20.0], &[0.0, 0.0])),
        ];
        let t = total(&all, &|s| Some(&s.engines[0])).unwrap();
        assert_eq!((t.revenue, t.by_seed), (33.0, vec![11.0, 22.0]));
        assert!(total(&all, &|s| s.optimal.as_ref()).is_none());
    }
}
