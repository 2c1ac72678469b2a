//! The stay model and the stop-loss of a facility's ECRI answer
//! (`GET /api/v1/facilities/{id}/ecri`), built from `jobs::ecri`.

use domain::values::round2;
use serde::Serialize;

/// The learned stay model (docs/ecri.md).
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriModel)]
pub(crate) struct Model {
    /// Share (%) of tenants not increased who move out within 90 days anyway: the move-outs
    /// per window watched (a tenant given a notice partway counts for the part before it),
    /// shrunk toward the company's and the prior's.
    baseline_move_out_pct: f64,
    /// The facility's sensitivity to the size of an increase (1 = the prior's).
    increase_sensitivity: f64,
    /// Its sensitivity to a new rent above the market (1 = the prior's).
    premium_sensitivity: f64,
    /// Weight of the facility's own outcomes against the company's and the prior (0 to 1).
    evidence_weight: f64,
    /// Increased tenants of the facility learned from: 90 days passed, or at least 9 of them
    /// (`open_windows`).
    increased_tenants: u32,
    /// Tenants not increased, watched over the last 90 days: each until it moved out, was
    /// given a notice or had its rent changed, and counted for that part of the window in
    /// `baseline_move_out_pct`.
    baseline_tenants: u32,
    /// Increased tenants of the company's other facilities.
    company_increased_tenants: u32,
    /// Of `increased_tenants`, those whose 90 days ran from their notice (an approved batch):
    /// a move-out during the notice counts as a reaction.
    from_notices: u32,
    /// Of `increased_tenants`, those whose 90 days are not over yet: counted for the move-outs
    /// of the part seen, in steps of 9 days from the 9th.
    open_windows: u32,
    /// Records of the facility's increases left out of the learning, by reason (tenants).
    left_out: LeftOut,
    /// How the baseline move-out rate falls with tenure.
    tenure: TenureEffect,
    /// How tenants increased before take an increase.
    raised_before: RaisedBeforeEffect,
    /// The round figures past which tenants react more than the slope says.
    step: StepEffect,
}

/// The step at round figures: an increase of `pct` % or more, or of `amount` or more, adds
/// `logit` to the logit of the extra move-out.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriStepEffect)]
struct StepEffect {
    /// The percent of the step (the prior's 10 unless the outcomes placed it elsewhere).
    pct: f64,
    /// The amount of the step, in the company's currency (the prior's 10 unless placed).
    amount: f64,
    /// Whether the facility's own outcomes moved the figures off the prior's.
    learned: bool,
    /// How much better the outcomes fit at the learned figures than at the prior's
    /// (log-likelihood; 0 when not learned, 2 at least when learned).
    support: f64,
    /// δ, the logit the step adds (0 = no step).
    logit: f64,
    /// Weight of the facility's own outcomes in δ (0 to 1): only outcomes on both sides of the
    /// figures count.
    evidence_weight: f64,
}

/// Records of increases the model did not learn from, by reason (docs/ecri.md).
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriLeftOut)]
struct LeftOut {
    /// Under 9 days of the 90-day window have passed (waiting, not wrong).
    incomplete: u32,
    /// The new rent not above the old one.
    not_an_increase: u32,
    /// A rent of zero or less.
    non_positive_rent: u32,
    /// An increase above 60 % (a promotion ending, a data fix).
    too_large: u32,
    /// A new rent over 200 % above its reference.
    implausible_premium: u32,
    /// Within a month of the move-in or before it (a move-in rate ending, a re-let).
    at_move_in: u32,
    /// A notice after the effective date, or more than a year before it.
    inconsistent_dates: u32,
    /// Moved out before the notice.
    gone_before_notice: u32,
    /// An approved notice whose new rent never showed, the tenant still in place.
    not_applied: u32,
    /// All but `incomplete`.
    implausible: u32,
}

/// The tenure effect: a tenant `t` months in has the 90-day hazard of the baseline times
/// `((1 + t) / (1 + reference_months))^(-elasticity)`.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriTenureEffect)]
struct TenureEffect {
    /// β learned for the facility (the prior's 0.4 unless set).
    elasticity: f64,
    /// The company's β it is shrunk toward.
    company_elasticity: f64,
    /// The tenure (months) whose rate is `baseline_move_out_pct`.
    reference_months: f64,
    /// Weight of the facility's own tenants against the company's and the prior (0 to 1).
    evidence_weight: f64,
    /// Tenants not increased with a known tenure it learned from.
    tenants: u32,
}

/// The increase sensitivity of tenants increased before, against the others'.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriRaisedBeforeEffect)]
struct RaisedBeforeEffect {
    /// ρ, the multiplier of `increase_sensitivity` for them (1 = no difference).
    sensitivity: f64,
    /// The company's ρ it is shrunk toward.
    company_sensitivity: f64,
    /// Weight of the facility's own outcomes (0 to 1).
    evidence_weight: f64,
    /// Increased tenants raised before it learned from.
    tenants: u32,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriStopLoss)]
pub(crate) struct StopLoss {
    /// Share (%) of recently increased tenants who left within 90 days.
    increased_move_out_pct: f64,
    /// Share (%) of tenants not increased who left over 90 days.
    baseline_move_out_pct: f64,
    /// Recently increased tenants counted.
    increased_tenants: u32,
}

impl From<jobs::ecri::StopLoss> for StopLoss {
    fn from(s: jobs::ecri::StopLoss) -> Self {
        Self {
            increased_move_out_pct: s.increased_move_out_pct,
            baseline_move_out_pct: s.baseline_move_out_pct,
            increased_tenants: s.increased_tenants,
        }
    }
}

impl Model {
    /// The stay model as answered.
    pub(crate) fn of(m: &jobs::ecri::ModelSummary) -> Self {
        Self {
            baseline_move_out_pct: round2(m.model.baseline * 100.0),
            increase_sensitivity: round2(m.model.sensitivity),
            premium_sensitivity: round2(m.model.premium_sensitivity),
            evidence_weight: round2(m.model.evidence_weight),
            increased_tenants: m.increased_tenants,
            baseline_tenants: m.baseline_tenants,
            company_increased_tenants: m.company_increased_tenants,
            from_notices: m.from_notices,
            open_windows: m.open_windows,
            left_out: LeftOut {
                incomplete: m.left_out.incomplete,
                not_an_increase: m.left_out.not_an_increase,
                non_positive_rent: m.left_out.non_positive_rent,
                too_large: m.left_out.too_large,
                implausible_premium: m.left_out.implausible_premium,
                at_move_in: m.left_out.at_move_in,
                inconsistent_dates: m.left_out.inconsistent_dates,
                gone_before_notice: m.left_out.gone_before_notice,
                not_applied: m.left_out.not_applied,
                implausible: m.left_out.implausible(),
            },
            tenure: TenureEffect {
                elasticity: round2(m.model.tenure_elasticity),
                company_elasticity: round2(m.model.company_tenure_elasticity),
                reference_months: round2(m.model.reference_months),
                evidence_weight: round2(m.model.tenure_evidence_weight),
                tenants: m.model.tenure_tenants,
            },
            raised_before: RaisedBeforeEffect {
                sensitivity: round2(m.model.raised_before_sensitivity),
                company_sensitivity: round2(m.model.company_raised_before_sensitivity),
                evidence_weight: round2(m.model.raised_before_evidence_weight),
                tenants: m.model.raised_before_tenants,
            },
            step: {
                let figures = m.model.step_figures();
                StepEffect {
                    pct: round2(figures.pct),
                    amount: round2(figures.amount),
                    learned: m.model.step_figures.is_some(),
                    support: round2(m.model.step_figures_support),
                    logit: round2(m.model.step_logit),
                    evidence_weight: round2(m.model.step_evidence_weight),
                }
            },
        }
    }
}
