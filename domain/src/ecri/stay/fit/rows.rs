//! The rows the sensitivity fit reads: the increased outcomes with their level's baseline,
//! alike ones merged, and a coarser binning of them to start the search on.

use super::super::{extra_at, Outcome, Push, StayPrior, StepFigures};
use super::{Baseline, Theta};
use crate::ecri::evidence::MAX_PLAUSIBLE_INCREASE_PCT;
use std::collections::BTreeMap;

/// An increased outcome as the sensitivity fit sees it.
#[derive(Clone, Copy)]
pub(super) struct Row {
    pub(super) increase_pct: f64,
    pub(super) premium_pct: f64,
    pub(super) tenants: f64,
    pub(super) left: f64,
    pub(super) raised_before: bool,
    /// Whether the increase reaches the step's round figures.
    pub(super) step: bool,
    /// Whether the previous increase was recent, and ln((1 + t) / (1 + t_ref)) of the tenure
    /// (0 when unknown).
    pub(super) recent: bool,
    pub(super) log_tenure: f64,
    pub(super) baseline: f64,
    /// The share of the window seen (1 once it is over).
    pub(super) seen: f64,
    /// `(1 - baseline)^seen`, see [`Row::kept`].
    pub(super) kept: f64,
}

/// What the fit reads of a row besides its counts (increase, premium, raised before, past the
/// round figures, recent, tenure, baseline, share seen): rows alike in all of it are one.
type RowKey = (u64, u64, bool, bool, bool, u64, u64, u64);

/// The increased outcomes within the plausible bound, each with its level's baseline at its
/// tenure; those the fit cannot tell apart merged (their counts summed: the binomial
/// log-likelihood of the merged row is the sum of theirs). A company's cells differ by the
/// increase in currency, which the fit reads only as whether it reaches the round figures, so
/// thousands of cells are a few thousand rows fewer.
pub(super) fn rows(figures: &StepFigures, outcomes: &[Outcome], base: &Baseline) -> Vec<Row> {
    let mut merged: BTreeMap<RowKey, Row> = BTreeMap::new();
    for o in plausible(outcomes) {
        let baseline = base.at(o.months_since_move_in);
        let seen = o.seen_share();
        let r = Row {
            increase_pct: o.increase_pct,
            premium_pct: o.premium_pct,
            tenants: f64::from(o.tenants),
            left: f64::from(o.moved_out.min(o.tenants)),
            raised_before: o.past_increases > 0,
            step: figures.crossed_by(o.increase_pct, o.increase_amount),
            recent: o.raised_recently,
            log_tenure: o
                .months_since_move_in
                .filter(|t| t.is_finite() && *t >= 0.0)
                .map_or(0.0, |t| ((1.0 + t) / (1.0 + base.reference.max(0.0))).ln()),
            baseline,
            seen,
            kept: (1.0 - baseline).max(0.0).powf(seen),
        };
        merged
            .entry(r.key(r.increase_pct.to_bits(), r.premium_pct.to_bits()))
            .and_modify(|m| {
                m.tenants += r.tenants;
                m.left += r.left;
            })
            .or_insert(r);
    }
    merged.into_values().collect()
}

/// The increased outcomes the fit reads: some tenants, within the plausible bound, a premium
/// known.
pub(super) fn plausible(outcomes: &[Outcome]) -> impl Iterator<Item = &Outcome> {
    outcomes
        .iter()
        .filter(|o| o.increased() && o.tenants > 0)
        .filter(|o| o.increase_pct <= MAX_PLAUSIBLE_INCREASE_PCT && o.premium_pct.is_finite())
}

impl Row {
    /// The row's key with its increase and premium given (as bits, or as bins).
    fn key(&self, increase: u64, premium: u64) -> RowKey {
        (
            increase,
            premium,
            self.raised_before,
            self.step,
            self.recent,
            self.log_tenure.to_bits(),
            self.baseline.to_bits(),
            self.seen.to_bits(),
        )
    }

    /// The extra move-out of the whole window at θ.
    pub(super) fn extra(&self, prior: &StayPrior, theta: Theta) -> f64 {
        let rho = if self.raised_before { theta[2] } else { 0.0 };
        let recent = if self.recent { theta[4] } else { 0.0 };
        let s = [
            (theta[0] + rho + recent - theta[5] * self.log_tenure).exp(),
            theta[1].exp(),
        ];
        let x = Push {
            increase_pct: self.increase_pct,
            premium_pct: self.premium_pct,
            step: self.step,
        };
        extra_at(prior, s, theta[3], x)
    }

    /// The chance of not leaving anyway over the part of the window seen: `(1 - baseline)` to
    /// the power of the share seen (the baseline's hazard is even over the window). The move-outs
    /// an increase causes are taken to come evenly over the window too, so a share `seen` of them
    /// shows: real reactions come mostly around the effective date, early in the window, so an
    /// open window reads the sensitivity high rather than low.
    pub(super) fn kept(&self) -> f64 {
        self.kept
    }
}

/// The rows binned to a whole point of increase and two points of premium (each bin at its
/// tenants' mean increase and premium), alike in everything else: a start for the search,
/// never its answer.
pub(super) fn coarse_rows(rows: &[Row]) -> Vec<Row> {
    let mut bins: BTreeMap<RowKey, Row> = BTreeMap::new();
    for r in rows {
        // The bins' numbers as bits: only equality matters.
        let key = r.key(
            r.increase_pct.round() as i64 as u64,
            (r.premium_pct / 2.0).round() as i64 as u64,
        );
        let b = bins.entry(key).or_insert(Row {
            increase_pct: 0.0,
            premium_pct: 0.0,
            tenants: 0.0,
            left: 0.0,
            ..*r
        });
        b.increase_pct += r.increase_pct * r.tenants;
        b.premium_pct += r.premium_pct * r.tenants;
        b.tenants += r.tenants;
        b.left += r.left;
    }
    bins.into_values()
        .map(|mut b| {
            b.increase_pct /= b.tenants;
            b.premium_pct /= b.tenants;
            b
        })
        .collect()
}
