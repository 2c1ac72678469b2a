//! Joint Newton steps on the penalized log-likelihood of θ = (ln s1, ln s2, ln ρ, δ, ln ρ12, γ)
//! after the coordinate rounds. The parameters of the increase's slope (s1, ρ, ρ12, γ) and the
//! step δ trade off against each other: one coordinate at a time crawls along that ridge and
//! stops far from its top; steps over all of them at once, with the full Hessian, reach it.
//!
//! Each step solves `-H d = g` on the coordinates the outcomes speak of (the others stay at
//! their centres), halves `d` until the objective is no worse, and stops after
//! [`MAX_ITERATIONS`] or once the step is negligible. Where `-H` is not positive definite (the
//! objective not concave there) the coordinate answer stands.

use super::super::{sigmoid, StayPrior};
use super::{log_likelihood, Row, Theta, THETA_MAX, THETA_MIN};

/// At most this many Newton steps.
const MAX_ITERATIONS: usize = 25;
/// At most this many halvings of one step.
const MAX_HALVINGS: usize = 30;
/// A step whose every coordinate moves less than this ends the search.
const TOLERANCE: f64 = 1e-9;

/// The penalized log-likelihood of θ: the outcomes' log-likelihood less the normal priors'
/// `τ_k (θ_k - centre_k)² / 2`.
pub(super) struct Objective<'a> {
    pub(super) prior: &'a StayPrior,
    pub(super) rows: &'a [Row],
    pub(super) centre: Theta,
    pub(super) tau: Theta,
    /// Whether any outcome speaks of each coordinate; the others are held at their centres.
    pub(super) speaks: [bool; 6],
}

type Matrix = [[f64; 6]; 6];

impl Objective<'_> {
    pub(super) fn value(&self, theta: Theta) -> f64 {
        let penalty = (0..6)
            .map(|k| 0.5 * self.tau[k] * (theta[k] - self.centre[k]).powi(2))
            .sum::<f64>();
        log_likelihood(self.prior, self.rows, theta) - penalty
    }

    /// The gradient and the Hessian of [`Self::value`] at θ.
    pub(super) fn derivatives(&self, theta: Theta) -> (Theta, Matrix) {
        let prior = self.prior;
        let base = sigmoid(prior.intercept);
        let mut g = [0.0; 6];
        let mut h = [[0.0; 6]; 6];
        for r in self.rows {
            // z, the push on the logit, is A + B + δ [step]: A = e^(θ0 + θ2 rb + θ4 rec -
            // θ5 lt) b1 x, B = e^θ1 b2 max(0, g - m). `c` is A's exponent's gradient.
            let c = [
                1.0,
                0.0,
                f64::from(u8::from(r.raised_before)),
                0.0,
                f64::from(u8::from(r.recent)),
                -r.log_tenure,
            ];
            let exponent: f64 = (0..6).map(|k| c[k] * theta[k]).sum();
            let a = exponent.exp() * prior.per_increase_pct * r.increase_pct;
            let b = theta[1].exp()
                * prior.per_premium_pct
                * (r.premium_pct - prior.moving_cost_pct).max(0.0);
            let step = if r.step { 1.0 } else { 0.0 };
            let q = sigmoid(prior.intercept + a + b + step * theta[3]);
            // The chance of staying over what was seen, p = kept (1 - seen (q - σ(b0)) / (1 -
            // σ(b0))) (kept = 1 - baseline, seen = 1 once the window is over: (1 - baseline)(1 -
            // q) / (1 - σ(b0))), and its derivatives in z.
            let kept = r.kept();
            let scale = kept * r.seen / (1.0 - base);
            let p = (kept - scale * (q - base)).clamp(1e-9, 1.0 - 1e-9);
            let dp = -scale * q * (1.0 - q);
            let d2p = dp * (1.0 - 2.0 * q);
            let stayed = r.tenants - r.left;
            let lp = -r.left / (1.0 - p) + stayed / p;
            let lpp = -r.left / (1.0 - p).powi(2) - stayed / (p * p);
            let lz = lp * dp;
            let lzz = lpp * dp * dp + lp * d2p;
            let mut dz = c.map(|ck| a * ck);
            dz[1] = b;
            dz[3] = step;
            for i in 0..6 {
                g[i] += lz * dz[i];
                for j in 0..6 {
                    h[i][j] += lzz * dz[i] * dz[j];
                }
            }
            for i in [0, 2, 4, 5] {
                for j in [0, 2, 4, 5] {
                    h[i][j] += lz * a * c[i] * c[j];
                }
            }
            h[1][1] += lz * b;
        }
        for k in 0..6 {
            g[k] -= self.tau[k] * (theta[k] - self.centre[k]);
            h[k][k] -= self.tau[k];
        }
        (g, h)
    }
}

/// The lower triangle L of `m = L Lᵀ`; None when `m` is not positive definite.
pub(super) fn cholesky(m: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = m.len();
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let sum: f64 = (0..j).map(|k| l[i][k] * l[j][k]).sum();
            if i == j {
                let d = m[i][i] - sum;
                if !(d > 0.0 && d.is_finite()) {
                    return None;
                }
                l[i][i] = d.sqrt();
            } else {
                l[i][j] = (m[i][j] - sum) / l[j][j];
            }
        }
    }
    Some(l)
}

/// x with `L Lᵀ x = b`.
pub(super) fn solve(l: &[Vec<f64>], b: &[f64]) -> Vec<f64> {
    let n = b.len();
    let mut y = vec![0.0; n];
    for i in 0..n {
        y[i] = (b[i] - (0..i).map(|k| l[i][k] * y[k]).sum::<f64>()) / l[i][i];
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        x[i] = (y[i] - (i + 1..n).map(|k| l[k][i] * x[k]).sum::<f64>()) / l[i][i];
    }
    x
}

/// Newton steps from `start` (the coordinate answer) with a step-halving line search, so the
/// objective never falls below its value at `start`; `start` itself where the Hessian is not
/// negative definite.
pub(super) fn refine(objective: &Objective, start: Theta) -> Theta {
    try_refine(objective, start).unwrap_or(start)
}

/// [`refine`], None where `-H` is not positive definite on the way.
pub(super) fn try_refine(objective: &Objective, start: Theta) -> Option<Theta> {
    let free: Vec<usize> = (0..6).filter(|&k| objective.speaks[k]).collect();
    if free.is_empty() {
        return Some(start);
    }
    let mut theta = start;
    let mut value = objective.value(start);
    for _ in 0..MAX_ITERATIONS {
        let (g, h) = objective.derivatives(theta);
        let minus_h: Vec<Vec<f64>> = free
            .iter()
            .map(|&i| free.iter().map(|&j| -h[i][j]).collect())
            .collect();
        let l = cholesky(&minus_h)?;
        let d = solve(&l, &free.iter().map(|&i| g[i]).collect::<Vec<_>>());
        let mut t = 1.0;
        let mut moved = None;
        for _ in 0..MAX_HALVINGS {
            let mut candidate = theta;
            for (k, &i) in free.iter().enumerate() {
                candidate[i] = (theta[i] + t * d[k]).clamp(THETA_MIN, THETA_MAX);
            }
            let v = objective.value(candidate);
            if v >= value {
                moved = Some((candidate, v));
                break;
            }
            t /= 2.0;
        }
        let Some((candidate, v)) = moved else {
            break;
        };
        let change = (0..6)
            .map(|k| (candidate[k] - theta[k]).abs())
            .fold(0.0, f64::max);
        theta = candidate;
        value = v;
        if change < TOLERANCE {
            break;
        }
    }
    Some(theta)
}

#[cfg(test)]
mod tests;
