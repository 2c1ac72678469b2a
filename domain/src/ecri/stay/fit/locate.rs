//! Where a facility's step lies: the round figures (a percent and an amount) its own outcomes
//! favour, by profile likelihood over [`STEP_PCTS`] x [`STEP_AMOUNTS`], kept at the prior's
//! unless another pair beats them by [`STEP_FIGURES_MARGIN`] (docs/ecri.md, "Where the step
//! lies").

use super::super::{Outcome, StayPrior, StepFigures, STEP_AMOUNTS, STEP_FIGURES_MARGIN, STEP_PCTS};
use super::rows::{plausible, rows, Row};
use super::{fit_near, maximise, newton, objective, Baseline, Theta, THETA_MAX, THETA_MIN};
use std::collections::HashSet;

/// The facility's fit at the figures chosen.
pub(super) struct Located {
    /// None: the prior's.
    pub(super) figures: Option<StepFigures>,
    /// The penalized log-likelihood gained over the prior's figures (0 at them).
    pub(super) support: f64,
    pub(super) rows: Vec<Row>,
    pub(super) theta: Theta,
    pub(super) info: Theta,
}

/// The pairs tried besides the prior's, nearest to it first (the distance the sum of the
/// figures' log-ratios), so that among pairs the outcomes cannot tell apart (an amount when
/// no increase's amount is known) the one nearest the prior's is kept.
fn candidates(prior: &StepFigures) -> Vec<StepFigures> {
    let distance = |c: &StepFigures| {
        let ratio = |a: f64, b: f64| (a.max(1e-9) / b.max(1e-9)).ln().abs();
        ratio(c.pct, prior.pct) + ratio(c.amount, prior.amount)
    };
    let mut all: Vec<StepFigures> = STEP_PCTS
        .iter()
        .flat_map(|&pct| {
            STEP_AMOUNTS
                .iter()
                .map(move |&amount| StepFigures { pct, amount })
        })
        .filter(|c| c != prior)
        .collect();
    all.sort_by(|a, b| distance(a).total_cmp(&distance(b)));
    all
}

/// The penalized log-likelihood of `rows` at its best δ, the rest as fitted at the prior's
/// figures (`start`): the cheap profile every pair is ranked by; with that θ. δ alone by the
/// fit's Newton steps (the other coordinates held where `start` has them); where the objective
/// is not concave in δ on the way, the grid and golden section instead.
fn step_profile(objective: &newton::Objective, centre: Theta, start: Theta) -> (f64, Theta) {
    let with_delta = |d: f64| {
        let mut t = start;
        t[3] = d;
        t
    };
    if !objective.speaks[3] {
        let theta = with_delta(centre[3]);
        return (objective.value(theta), theta);
    }
    let delta_only = newton::Objective {
        speaks: [false, false, false, true, false, false],
        ..*objective
    };
    let theta = newton::try_refine(&delta_only, start).unwrap_or_else(|| {
        with_delta(maximise(THETA_MIN, THETA_MAX, |d| {
            objective.value(with_delta(d))
        }))
    });
    (objective.value(theta), theta)
}

/// How many of the best-ranked pairs get joint Newton steps before the best is chosen.
const REFINED: usize = 3;

/// The facility's fit with its step where its outcomes put it: `at_prior` is its fit (θ and
/// the information) on `own`, its rows at the prior's figures, under the company's `centre`.
pub(super) fn locate(
    prior: &StayPrior,
    facility: &[Outcome],
    base: &Baseline,
    centre: Theta,
    own: Vec<Row>,
    at_prior: (Theta, Theta),
) -> Located {
    let keep = |own: Vec<Row>| Located {
        figures: None,
        support: 0.0,
        rows: own,
        theta: at_prior.0,
        info: at_prior.1,
    };
    // Nothing to place a step by without increases on both sides of some figure.
    if own.len() < 2 {
        return keep(own);
    }
    let figures = StepFigures::of(prior);
    let null = objective(prior, &own, centre).value(at_prior.0);
    // Which increased outcomes the fit reads reach a pair's figures: pairs that split them
    // alike fit alike, so each split is tried once (the prior's not at all).
    let split = |c: &StepFigures| -> Vec<bool> {
        plausible(facility)
            .map(|o| c.crossed_by(o.increase_pct, o.increase_amount))
            .collect()
    };
    let mut splits = HashSet::from([split(&figures)]);
    let mut ranked: Vec<(StepFigures, Vec<Row>, f64, Theta)> = candidates(&figures)
        .into_iter()
        .filter(|c| splits.insert(split(c)))
        .map(|c| {
            let r = rows(&c, facility, base);
            let (value, theta) = step_profile(&objective(prior, &r, centre), centre, at_prior.0);
            (c, r, value, theta)
        })
        .filter(|(.., v, _)| v.is_finite())
        .collect();
    // Best first; among equals the nearest the prior's (the sort is stable).
    ranked.sort_by(|a, b| b.2.total_cmp(&a.2));
    ranked.truncate(REFINED);
    // The first of the best after Newton steps: a later pair must beat it by more than rounding.
    let best = ranked
        .into_iter()
        .map(|(c, r, _, theta)| {
            let (theta, info) = fit_near(prior, &r, centre, theta);
            let value = objective(prior, &r, centre).value(theta);
            (c, r, value, theta, info)
        })
        .fold(
            None,
            |best: Option<Refined>, (c, r, v, theta, info)| match best {
                Some((_, _, b, ..)) if v <= b + 1e-9 => best,
                _ => Some((c, r, v, theta, info)),
            },
        );
    match best {
        Some((c, rows, value, theta, info)) if value - null >= STEP_FIGURES_MARGIN => Located {
            figures: Some(c),
            support: value - null,
            rows,
            theta,
            info,
        },
        _ => keep(own),
    }
}

/// A pair after its Newton steps: its figures, rows, value, θ and information.
type Refined = (StepFigures, Vec<Row>, f64, Theta, Theta);
