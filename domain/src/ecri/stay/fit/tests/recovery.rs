//! The fit recovers the parameters tenants were simulated from.

use super::super::*;
use crate::ecri::evidence::baseline_outcome;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;

/// The parameters the tenants are simulated from, away from the prior's centres (s = 1, ρ = 1,
/// ρ12 = 1, δ = 0, γ = 0, β = 0.4) so that a fit held at the prior fails.
struct Truth {
    baseline: f64,
    beta: f64,
    s1: f64,
    s2: f64,
    rho: f64,
    delta: f64,
    rho12: f64,
    gamma: f64,
}

const TRUTH: Truth = Truth {
    baseline: 0.12,
    beta: 0.6,
    s1: 1.3,
    s2: 0.7,
    rho: 1.4,
    delta: 1.0,
    rho12: 1.6,
    gamma: 0.5,
};

const TENURES: [f64; 6] = [2.0, 5.0, 12.0, 24.0, 48.0, 96.0];

/// The log-mean of (1 + months) less 1 over equal numbers of tenants at each tenure.
fn reference() -> f64 {
    let mean = TENURES.iter().map(|t| (1.0 + t).ln()).sum::<f64>() / TENURES.len() as f64;
    mean.exp() - 1.0
}

fn true_model(prior: &StayPrior) -> StayModel {
    StayModel {
        baseline: TRUTH.baseline,
        tenure_elasticity: TRUTH.beta,
        reference_months: reference(),
        sensitivity: TRUTH.s1,
        premium_sensitivity: TRUTH.s2,
        raised_before_sensitivity: TRUTH.rho,
        step_logit: TRUTH.delta,
        recent_sensitivity: TRUTH.rho12,
        tenure_sensitivity_elasticity: TRUTH.gamma,
        ..StayModel::from_prior(prior)
    }
}

/// Key of a cell of alike tenants: tenure, history (0 never raised, 1 raised over a year
/// before, 2 within the year), increase %, rent, premium %.
type Cell = (usize, u8, u32, u32, i32);

/// `per_band` tenants not increased at each tenure, and `increased` tenants with their
/// covariates drawn at random, each staying or leaving as the true model says; pooled in cells.
fn simulate(seed: u64, per_band: u32, increased: u32) -> Vec<Outcome> {
    let prior = StayPrior::default();
    let truth = true_model(&prior);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::new();
    for &t in &TENURES {
        let p = truth.for_tenant(Some(t), 0).baseline;
        out.extend(watched(&mut rng, p, per_band, Some(t), 0.0).0);
    }
    let mut cells: BTreeMap<Cell, (u32, u32)> = BTreeMap::new();
    for _ in 0..increased {
        let tenure = rng.gen_range(0..TENURES.len());
        let history: u8 = rng.gen_range(0..3);
        let pct = [3u32, 5, 7, 9, 10, 12, 15, 20, 25][rng.gen_range(0..9)];
        let rent = [80u32, 150][rng.gen_range(0..2)];
        let premium = [-10i32, 0, 15, 25, 35, 45][rng.gen_range(0..6)];
        let since = match history {
            0 => None,
            1 => Some(20.0),
            _ => Some(7.0),
        };
        let m = truth.for_tenant_since(Some(TENURES[tenure]), u32::from(history > 0), since);
        let amount = f64::from(pct * rent) / 100.0;
        let extra = m.extra_move_out_of(f64::from(pct), f64::from(premium), amount);
        let stay = (1.0 - m.baseline) * (1.0 - extra);
        let cell = cells
            .entry((tenure, history, pct, rent, premium))
            .or_default();
        cell.0 += 1;
        cell.1 += u32::from(!rng.gen_bool(stay));
    }
    for ((tenure, history, pct, rent, premium), (n, left)) in cells {
        out.push(Outcome {
            increase_pct: f64::from(pct),
            premium_pct: f64::from(premium),
            tenants: n,
            moved_out: left,
            months_since_move_in: Some(TENURES[tenure]),
            past_increases: u32::from(history > 0),
            increase_amount: f64::from(pct * rent) / 100.0,
            raised_recently: history == 2,
            open_share: 0.0,
        });
    }
    out
}

/// `tenants` not increased, each leaving at an even hazard whose 90-day rate is `p` and
/// watched until it leaves or the window ends, or, for a share `noticed` of them, until a
/// notice on a day drawn evenly over the window; grouped as the service groups them (tenths
/// of the window watched, `evidence::baseline_outcome`).
/// With them, (tenants, left) of those no notice reached: the count that leaves the noticed
/// out altogether.
fn watched(
    rng: &mut StdRng,
    p: f64,
    tenants: u32,
    t: Option<f64>,
    noticed: f64,
) -> (Vec<Outcome>, (u32, u32)) {
    let hazard = -(1.0 - p).ln();
    let mut groups: BTreeMap<u8, (u32, u32)> = BTreeMap::new();
    let mut unnoticed = (0u32, 0u32);
    for _ in 0..tenants {
        let leaves = -(1.0 - rng.gen::<f64>()).ln() / hazard;
        let until = if rng.gen_bool(noticed) {
            rng.gen::<f64>()
        } else {
            1.0
        };
        let gone = leaves < until;
        let share = if gone { leaves } else { until };
        if gone || until >= 1.0 {
            unnoticed.0 += 1;
            unnoticed.1 += u32::from(gone);
        }
        let g = groups.entry((share * 10.0).round() as u8).or_default();
        g.0 += 1;
        g.1 += u32::from(gone);
    }
    let band = t.map(crate::ecri::evidence::tenure_band);
    let outcomes = groups
        .into_iter()
        .map(|(tenths, (n, left))| {
            let mut o = baseline_outcome(band, n, left, f64::from(tenths) / 10.0);
            o.months_since_move_in = t;
            o
        })
        .collect();
    (outcomes, unnoticed)
}

/// The baseline from tenants a notice takes out of the window partway: each counted for the
/// part watched, the rate is the truth's; counted as whole windows (or left out) it is not.
#[test]
fn tenants_given_a_notice_within_the_window_count_for_the_part_watched() {
    let prior = StayPrior {
        baseline_strength: 0.0,
        ..StayPrior::default()
    };
    let mut rng = StdRng::seed_from_u64(11);
    for p in [0.1, 0.2, 0.35] {
        // Half the tenants given a notice at some day of the window.
        let (outcomes, (n_kept, left_kept)) = watched(&mut rng, p, 40_000, None, 0.5);
        let m = learn(&prior, &[], &outcomes);
        assert!((m.baseline - p).abs() < 0.006, "{p}: {}", m.baseline);
        // What counting each tenant for a whole window would read: too few leavers per
        // window, and the tenants noticed left out altogether would read too many.
        let (n, left) = outcomes
            .iter()
            .fold((0u32, 0u32), |a, o| (a.0 + o.tenants, a.1 + o.moved_out));
        let whole = f64::from(left) / f64::from(n);
        assert!(p - whole > 0.02, "{p}: {whole}");
        let dropped = f64::from(left_kept) / f64::from(n_kept);
        assert!(dropped - p > 0.02, "{p}: {dropped}");
    }
}

/// Each parameter within its tolerance of the truth (the sensitivities and ρ on the log
/// scale), for two seeds.
#[test]
fn the_fit_recovers_the_parameters_tenants_were_simulated_from() {
    let prior = StayPrior::default();
    // The baseline is learned as the pooled 90-day rate of the tenants not increased (a
    // Beta mean), not as the rate at the reference tenure: the truth's mean over the bands.
    let truth = true_model(&prior);
    let pooled = TENURES
        .iter()
        .map(|&t| truth.for_tenant(Some(t), 0).baseline)
        .sum::<f64>()
        / TENURES.len() as f64;
    for seed in [7, 8] {
        let m = learn(&prior, &[], &simulate(seed, 4000, 60_000));
        let checks = [
            ("baseline", m.baseline, pooled, 0.01),
            ("β", m.tenure_elasticity, TRUTH.beta, 0.1),
            ("ln s1", m.sensitivity.ln(), TRUTH.s1.ln(), 0.15),
            ("ln s2", m.premium_sensitivity.ln(), TRUTH.s2.ln(), 0.2),
            (
                "ln ρ",
                m.raised_before_sensitivity.ln(),
                TRUTH.rho.ln(),
                0.15,
            ),
            ("δ", m.step_logit, TRUTH.delta, 0.25),
            ("ln ρ12", m.recent_sensitivity.ln(), TRUTH.rho12.ln(), 0.15),
            ("γ", m.tenure_sensitivity_elasticity, TRUTH.gamma, 0.12),
        ];
        let misses: Vec<String> = checks
            .iter()
            .filter(|(_, got, want, tol)| (got - want).abs() > *tol)
            .map(|(name, got, want, tol)| format!("{name} {got:.3} (truth {want:.3} ± {tol})"))
            .collect();
        assert!(misses.is_empty(), "seed {seed}: {misses:?}\n{m:?}");
    }
}
