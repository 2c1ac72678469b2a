//! Learning the stay model: the baseline as a twice-shrunk Beta mean, then by maximum a
//! posteriori the tenure elasticity β (from the tenants not increased) and ln(sensitivities)
//! and ln ρ (from the increased ones), each under a normal prior at the company's estimate, the
//! company's under one at the prior (docs/ecri.md, "Learning, pooled and shrunk").

use super::{
    sigmoid, tenure_baseline, Outcome, StayModel, StayPrior, StepFigures, DEFAULT_REFERENCE_MONTHS,
};

mod locate;
mod newton;
mod rows;

use rows::{coarse_rows, rows, Row};

/// The bounds of ln(sensitivity) and ln ρ: 0.05 to 20 times the prior.
const THETA_MIN: f64 = -3.0;
const THETA_MAX: f64 = 3.0;
/// The bounds of the tenure elasticity β.
const BETA_MIN: f64 = -1.0;
const BETA_MAX: f64 = 3.0;

/// The maximum of a one-dimensional function on `[lo, hi]`: a grid, then golden-section
/// search around the best point of the grid.
fn maximise(lo: f64, hi: f64, f: impl Fn(f64) -> f64) -> f64 {
    const GRID: usize = 24;
    let step = (hi - lo) / GRID as f64;
    let best = (0..=GRID)
        .map(|i| lo + step * i as f64)
        .map(|t| (t, f(t)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(0.0, |(t, _)| t);
    let (mut a_lo, mut a_hi) = ((best - step).max(lo), (best + step).min(hi));
    let golden = 0.618_033_988_749_895;
    // Each step keeps one inner point of the last (the golden ratio puts it where the next
    // step's other point would be): one evaluation a step.
    let (mut a, mut b) = (a_hi - golden * (a_hi - a_lo), a_lo + golden * (a_hi - a_lo));
    let (mut fa, mut fb) = (f(a), f(b));
    for _ in 0..30 {
        if fa >= fb {
            a_hi = b;
            (b, fb) = (a, fa);
            a = a_hi - golden * (a_hi - a_lo);
            fa = f(a);
        } else {
            a_lo = a;
            (a, fa) = (b, fb);
            b = a_lo + golden * (a_hi - a_lo);
            fb = f(b);
        }
    }
    (a_lo + a_hi) / 2.0
}

/// The baseline of one level: its rate at `reference` months, β, and what it is.
#[derive(Clone, Copy)]
struct Baseline {
    rate: f64,
    beta: f64,
    reference: f64,
}

impl Baseline {
    /// The 90-day move-out rate of tenants of tenure `months` (the level's when unknown).
    fn at(&self, months: Option<f64>) -> f64 {
        match months.filter(|t| t.is_finite() && *t >= 0.0) {
            Some(t) => tenure_baseline(self.rate, self.beta, self.reference, t),
            None => self.rate,
        }
    }
}

/// Tenants not increased: (windows watched, left), a tenant watched for a share of its
/// window counting that share (`Outcome::open_share`).
fn baseline_counts(outcomes: &[Outcome]) -> (f64, f64) {
    outcomes
        .iter()
        .filter(|o| !o.increased())
        .fold((0.0, 0.0), |(w, k), o| {
            (
                w + f64::from(o.tenants) * o.seen_share(),
                k + f64::from(o.moved_out.min(o.tenants)),
            )
        })
}

/// Tenants not increased (each once, however long watched).
fn baseline_tenants(outcomes: &[Outcome]) -> u32 {
    outcomes
        .iter()
        .filter(|o| !o.increased())
        .map(|o| o.tenants)
        .fold(0u32, u32::saturating_add)
}

/// The 90-day move-out rate of `left` move-outs over `watched` windows, shrunk toward
/// `prior_rate` by `strength` windows: a gamma-Poisson mean of the hazard per window,
/// (left + k h0) / (watched + k) with h0 = -ln(1 - prior), read back as 1 - e^-h.
fn shrunk_rate(watched: f64, left: f64, prior_rate: f64, strength: f64) -> f64 {
    let h0 = -(1.0 - prior_rate.clamp(0.0, 0.99)).ln();
    let h = (left + strength * h0) / (watched + strength).max(f64::MIN_POSITIVE);
    (1.0 - (-h).exp()).clamp(0.0, 0.99)
}

/// The tenure whose rate the baseline is: the log-mean of (1 + months) less 1 over the tenants
/// not increased whose tenure is known, with how many they are; `fallback` when none is.
fn reference_months(outcomes: &[Outcome], fallback: f64) -> (f64, u32) {
    let (n, sum) = outcomes
        .iter()
        .filter(|o| !o.increased() && o.tenants > 0)
        .filter_map(|o| Some((o.tenants, o.months_since_move_in?)))
        .filter(|(_, t)| t.is_finite() && *t >= 0.0)
        .fold((0u32, 0.0), |(n, s), (k, t)| {
            (n.saturating_add(k), s + f64::from(k) * (1.0 + t).ln())
        });
    if n == 0 {
        (fallback, 0)
    } else {
        ((sum / f64::from(n)).exp() - 1.0, n)
    }
}

/// β by maximum a posteriori over the tenants not increased with a known tenure, under a
/// normal prior at `centre` of precision `strength`; with the Fisher information about it.
/// Each band's move-outs are Poisson over the windows it was watched, at the hazard
/// -ln(1 - q) of its tenure's rate q.
fn fit_tenure(
    outcomes: &[Outcome],
    rate: f64,
    reference: f64,
    centre: f64,
    strength: f64,
) -> (f64, f64) {
    let rows: Vec<(f64, f64, f64)> = outcomes
        .iter()
        .filter(|o| !o.increased() && o.tenants > 0)
        .filter_map(|o| {
            let t = o
                .months_since_move_in
                .filter(|t| t.is_finite() && *t >= 0.0)?;
            Some((
                t,
                f64::from(o.tenants) * o.seen_share(),
                f64::from(o.moved_out.min(o.tenants)),
            ))
        })
        .collect();
    if rows.is_empty() {
        return (centre, 0.0);
    }
    let hazard = |beta: f64, t: f64| {
        -(1.0 - tenure_baseline(rate, beta, reference, t).clamp(1e-9, 1.0 - 1e-9)).ln()
    };
    let ll = |beta: f64| {
        rows.iter()
            .map(|&(t, w, k)| {
                let h = hazard(beta, t);
                k * h.ln() - h * w
            })
            .sum::<f64>()
    };
    let beta = maximise(BETA_MIN, BETA_MAX, |b| {
        ll(b) - 0.5 * strength * (b - centre).powi(2)
    });
    let d = 1e-4;
    let info = rows
        .iter()
        .map(|&(t, w, _)| {
            let h = hazard(beta, t);
            let dh = (hazard(beta + d, t) - hazard(beta - d, t)) / (2.0 * d);
            w * dh * dh / h
        })
        .sum();
    (beta, info)
}

/// θ = (ln s1, ln s2, ln ρ, δ, ln ρ12, γ).
type Theta = [f64; 6];

/// Chance of staying the 90 days at θ.
fn stay(prior: &StayPrior, r: &Row, theta: Theta) -> f64 {
    r.kept() * (1.0 - r.seen * r.extra(prior, theta))
}

fn log_likelihood(prior: &StayPrior, rows: &[Row], theta: Theta) -> f64 {
    rows.iter()
        .map(|r| {
            let p = stay(prior, r, theta).clamp(1e-9, 1.0 - 1e-9);
            // A term of no tenants is 0: most of a company's cells have nobody gone, and the
            // logarithms are most of the fit's time.
            let stayed = r.tenants - r.left;
            let gone = if r.left > 0.0 {
                r.left * (1.0 - p).ln()
            } else {
                0.0
            };
            gone + if stayed > 0.0 { stayed * p.ln() } else { 0.0 }
        })
        .sum()
}

/// Maximum a posteriori θ = (ln s1, ln s2, ln ρ, δ, ln ρ12, γ) under independent normal
/// priors at `centre` (precisions τ, τ, τ_ρ, τ_δ, τ_ρ, τ_γ): coordinate rounds, then joint
/// Newton steps (`newton`); with the Fisher information about each.
fn fit(prior: &StayPrior, rows: &[Row], centre: Theta) -> (Theta, Theta) {
    if rows.is_empty() {
        return (centre, [0.0; 6]);
    }
    let objective = objective(prior, rows, centre);
    // Many rows (a company's cells): the coordinate rounds start the search on rows binned
    // coarser, the Newton steps finish it on the rows themselves; where they cannot (the
    // objective not concave on the way), the rounds run again on the rows from there.
    let theta = if rows.len() > COARSE_ABOVE {
        let coarse = coarse_rows(rows);
        let start = coordinate_rounds(
            &newton::Objective {
                rows: &coarse,
                ..objective
            },
            centre,
        );
        newton::try_refine(&objective, start)
            .unwrap_or_else(|| newton::refine(&objective, coordinate_rounds(&objective, start)))
    } else {
        newton::refine(&objective, coordinate_rounds(&objective, centre))
    };
    (theta, informed(&objective, theta))
}

/// [`fit`] from a `start` near the top (another fit's answer on rows that differ a little):
/// Newton steps from there, the whole fit where they cannot.
fn fit_near(prior: &StayPrior, rows: &[Row], centre: Theta, start: Theta) -> (Theta, Theta) {
    let objective = objective(prior, rows, centre);
    match newton::try_refine(&objective, start) {
        Some(theta) => (theta, informed(&objective, theta)),
        None => fit(prior, rows, centre),
    }
}

/// The Fisher information about each coordinate at `theta`, δ's beyond the rest of the curve.
fn informed(objective: &newton::Objective, theta: Theta) -> Theta {
    let matrix = information(objective.prior, objective.rows, theta);
    let mut info = [0, 1, 2, 3, 4, 5].map(|k| matrix[k][k]);
    info[3] = if objective.speaks[3] {
        step_information(&matrix)
    } else {
        0.0
    };
    info
}

/// The penalized log-likelihood the fit maximises over `rows`, its priors at `centre`.
fn objective<'a>(prior: &'a StayPrior, rows: &'a [Row], centre: Theta) -> newton::Objective<'a> {
    newton::Objective {
        prior,
        rows,
        centre,
        tau: [
            prior.sensitivity_strength,
            prior.sensitivity_strength,
            prior.raised_before_strength,
            prior.step_strength,
            prior.raised_before_strength,
            prior.tenure_sensitivity_strength,
        ],
        // Nothing speaks of ρ without a tenant raised before, nor of δ without an increase at
        // the round figures: each then stays at its centre.
        speaks: [
            true,
            true,
            rows.iter().any(|r| r.raised_before),
            rows.iter().any(|r| r.step),
            rows.iter().any(|r| r.recent),
            rows.iter().any(|r| r.log_tenure != 0.0),
        ],
    }
}

/// Rows above this many start their fit on [`coarse_rows`].
const COARSE_ABOVE: usize = 400;

/// Four rounds of one coordinate at a time from `start`, each the maximum on a grid refined by
/// golden-section search. (Two rounds on the coarse bins save half the time and end elsewhere
/// on the slope's ridge: δ -0.48 against -0.73 on the test's outcomes.)
fn coordinate_rounds(objective: &newton::Objective, start: Theta) -> Theta {
    let mut theta = start;
    for _ in 0..4 {
        for k in 0..6 {
            if !objective.speaks[k] {
                continue;
            }
            theta[k] = maximise(THETA_MIN, THETA_MAX, |v| {
                let mut t = theta;
                t[k] = v;
                objective.value(t)
            });
        }
    }
    theta
}

/// The expected (Fisher) information matrix about θ at `theta`, and a seventh coordinate: a
/// shift of the logit of every increased outcome. The sum over the outcomes of
/// n ∇P ∇Pᵀ / (P (1 - P)), P the chance of moving out, ∇P by central differences (the shift's
/// from the logit's derivative).
fn information(prior: &StayPrior, rows: &[Row], theta: Theta) -> [[f64; 7]; 7] {
    let h = 1e-4;
    let base = sigmoid(prior.intercept);
    let mut m = [[0.0; 7]; 7];
    for r in rows {
        let p = (1.0 - stay(prior, r, theta)).clamp(1e-9, 1.0 - 1e-9);
        let at = |k: usize, d: f64| {
            let mut t = theta;
            t[k] += d;
            stay(prior, r, t)
        };
        let mut grad = [0.0; 7];
        for (k, g) in grad.iter_mut().enumerate().take(6) {
            *g = (at(k, -h) - at(k, h)) / (2.0 * h);
        }
        // The extra move-out is (q - σ(b0)) / (1 - σ(b0)), q the logistic of the logit.
        let q = base + r.extra(prior, theta) * (1.0 - base);
        grad[6] = r.kept() * r.seen * q * (1.0 - q) / (1.0 - base);
        let w = r.tenants / (p * (1.0 - p));
        for i in 0..7 {
            for j in 0..7 {
                m[i][j] += w * grad[i] * grad[j];
            }
        }
    }
    m
}

/// The information about δ that the outcomes carry beyond what the rest of the curve can
/// explain: `I_δδ - I_δr I_rr⁻¹ I_rδ`, r the slope's parameters and a shift of the logit of
/// every increased outcome, all estimated from the same outcomes. Only outcomes on both sides
/// of the round figures carry it: those all past them say what they cost, not whether a step
/// or the slope's shape makes it (without the shift, the curve's fixed level at no increase
/// would pass for evidence of the step; with the priors' precisions, the prior on the slope
/// would). A ridge of 1e-9 of the largest information keeps `I_rr` invertible.
fn step_information(info: &[[f64; 7]; 7]) -> f64 {
    const OTHERS: [usize; 6] = [0, 1, 2, 4, 5, 6];
    let ridge = 1e-9 * (1.0 + (0..7).map(|k| info[k][k]).fold(0.0, f64::max));
    let m: Vec<Vec<f64>> = OTHERS
        .iter()
        .map(|&i| {
            OTHERS
                .iter()
                .map(|&j| info[i][j] + if i == j { ridge } else { 0.0 })
                .collect()
        })
        .collect();
    let b: Vec<f64> = OTHERS.iter().map(|&i| info[i][3]).collect();
    let Some(l) = newton::cholesky(&m) else {
        return 0.0;
    };
    let x = newton::solve(&l, &b);
    let explained: f64 = b.iter().zip(&x).map(|(u, v)| u * v).sum();
    (info[3][3] - explained).max(0.0)
}

/// The stay model of a facility from its own outcomes and the rest of the company's (the other
/// facilities' outcomes, not the facility's own). Increased outcomes above
/// [`MAX_PLAUSIBLE_INCREASE_PCT`] are not evidence of a reaction and are left out of the fit.
pub fn learn(prior: &StayPrior, company: &[Outcome], facility: &[Outcome]) -> StayModel {
    let k = prior.baseline_strength;
    let (w_c, left_c) = baseline_counts(company);
    let company_rate = shrunk_rate(w_c, left_c, prior.baseline_move_out_pct / 100.0, k);
    let (w_f, left_f) = baseline_counts(facility);
    let rate = shrunk_rate(w_f, left_f, company_rate, k);
    let (company_ref, _) = reference_months(company, DEFAULT_REFERENCE_MONTHS);
    let (reference, tenure_tenants) = reference_months(facility, company_ref);
    let (company_beta, _) = fit_tenure(
        company,
        company_rate,
        company_ref,
        prior.tenure_elasticity,
        prior.tenure_strength,
    );
    let (beta, beta_info) = fit_tenure(
        facility,
        rate,
        reference,
        company_beta,
        prior.tenure_strength,
    );
    let company_base = Baseline {
        rate: company_rate,
        beta: company_beta,
        reference: company_ref,
    };
    let base = Baseline {
        rate,
        beta,
        reference,
    };
    let rho0 = prior.raised_before_sensitivity.max(1e-6).ln();
    let (company_theta, company_info) = fit(
        prior,
        &rows(&StepFigures::of(prior), company, &company_base),
        [
            0.0,
            0.0,
            rho0,
            prior.step_logit,
            prior.recent_sensitivity.max(1e-6).ln(),
            prior.tenure_sensitivity_elasticity,
        ],
    );
    let own = rows(&StepFigures::of(prior), facility, &base);
    let at_prior = fit(prior, &own, company_theta);
    let located = locate::locate(prior, facility, &base, company_theta, own, at_prior);
    let (own, theta, info) = (located.rows, located.theta, located.info);
    let tenants = |rows: &[Row], raised_only: bool| {
        rows.iter()
            .filter(|r| !raised_only || r.raised_before)
            .map(|r| r.tenants as u32)
            .fold(0u32, u32::saturating_add)
    };
    StayModel {
        prior: *prior,
        baseline: rate,
        sensitivity: theta[0].exp(),
        premium_sensitivity: theta[1].exp(),
        company_sensitivity: company_theta[0].exp(),
        company_premium_sensitivity: company_theta[1].exp(),
        evidence_weight: info[0] / (info[0] + prior.sensitivity_strength),
        increased_tenants: tenants(&own, false),
        baseline_tenants: baseline_tenants(facility),
        tenure_elasticity: beta,
        company_tenure_elasticity: company_beta,
        tenure_evidence_weight: beta_info / (beta_info + prior.tenure_strength),
        tenure_tenants,
        reference_months: reference,
        raised_before_sensitivity: theta[2].exp(),
        company_raised_before_sensitivity: company_theta[2].exp(),
        raised_before_evidence_weight: info[2] / (info[2] + prior.raised_before_strength),
        raised_before_tenants: tenants(&own, true),
        step_logit: theta[3],
        company_step_logit: company_theta[3],
        step_evidence_weight: info[3] / (info[3] + prior.step_strength),
        company_step_evidence_weight: company_info[3] / (company_info[3] + prior.step_strength),
        company_evidence_weight: company_info[0] / (company_info[0] + prior.sensitivity_strength),
        recent_sensitivity: theta[4].exp(),
        company_recent_sensitivity: company_theta[4].exp(),
        tenure_sensitivity_elasticity: theta[5],
        company_tenure_sensitivity_elasticity: company_theta[5],
        recent_evidence_weight: info[4] / (info[4] + prior.raised_before_strength),
        company_raised_before_evidence_weight: company_info[2]
            / (company_info[2] + prior.raised_before_strength),
        company_recent_evidence_weight: company_info[4]
            / (company_info[4] + prior.raised_before_strength),
        step_figures: located.figures,
        step_figures_support: located.support,
    }
}

#[cfg(test)]
mod tests;
