//! The suggestion a decision ends in, and the reasons a person reads with it: what the stay
//! model learned, what a move-out would cost, where the rent stands and what is expected.

use super::plan::{evaluate, Plan};
use super::{reason, Guardrail, Reason, Suggestion, TenantInput, MONTH_DAYS};
use crate::ecri::settings::EcriEngineSettings;
use crate::ecri::stay::StayModel;
use crate::values::round2;

/// The suggestion of a plan at a new rent (None: no increase).
pub(super) fn suggestion(
    p: &Plan<'_>,
    new_rent: Option<f64>,
    binding: Option<Guardrail>,
    s: &EcriEngineSettings,
    mut reasons: Vec<Reason>,
) -> Suggestion {
    let t = p.tenant;
    let n = f64::from(t.tenant_count);
    let rent = t.rent;
    let model = p.model;
    reasons.push(reason(
        "sensitivity",
        model.sensitivity,
        format!(
            "this tenant's move-out sensitivity is {:.2} x the prior: the facility's ({:.0} % from its own {} increased tenants, the rest from the company's {:.2}) adjusted for its tenure and past increases; tenants like it not increased leave at {:.1} % in 90 days",
            model.sensitivity,
            model.evidence_weight * 100.0,
            model.increased_tenants,
            model.company_sensitivity,
            model.baseline * 100.0
        ),
    ));
    reasons.push(reason(
        "move_out_cost",
        p.move_out_cost,
        format!(
            "a move-out would leave the unit empty about {:.0} days, then re-let at {} {:.2}: {:.2} lost over {:.0} months{}",
            p.vacant_months * MONTH_DAYS,
            match (p.of_tier, t.tier.as_deref()) {
                (true, Some(tier)) => format!("the {} {tier} street rate", t.size),
                _ => format!("the {} street rate", t.size),
            },
            p.street,
            p.move_out_cost,
            s.horizon_months,
            if p.next_increase > 0.0 {
                format!(
                    ", {:.2} of it the next increase a tenant who stays could be given",
                    p.next_increase
                )
            } else {
                String::new()
            }
        ),
    ));
    reasons.push(reason(
        "rent_against_street",
        (rent / p.street - 1.0) * 100.0,
        format!(
            "the rent {:.2} is {:+.1} % against the street rate {:.2}",
            rent,
            (rent / p.street - 1.0) * 100.0,
            p.street
        ),
    ));
    let (new_rent, gain, extra, increase_pct, premium_pct) = match new_rent {
        Some(r) => {
            let (gain, extra, inc, prem) = evaluate(p, r);
            (r, gain, extra, inc, prem)
        }
        None => (rent, 0.0, 0.0, 0.0, (rent / p.reference - 1.0) * 100.0),
    };
    let stay = (1.0 - model.baseline) * (1.0 - extra);
    reasons.push(reason(
        "stay_probability",
        stay * 100.0,
        if new_rent > rent {
            format!(
                "{:.1} % expected to stay 90 days at +{increase_pct:.1} % ({:.1} % extra move-outs), the new rent {premium_pct:+.1} % against the market {:.2}",
                stay * 100.0,
                extra * 100.0,
                p.reference
            )
        } else {
            format!(
                "{:.1} % expected to stay 90 days with no increase, the rent {premium_pct:+.1} % against the market {:.2}",
                stay * 100.0,
                p.reference
            )
        },
    ));
    reasons.push(reason(
        "expected_gain",
        gain * n,
        format!(
            "{:+.2} expected over {:.0} months against no increase{}",
            gain * n,
            s.horizon_months,
            if n > 1.0 {
                format!(" ({n:.0} tenants)")
            } else {
                String::new()
            }
        ),
    ));
    Suggestion {
        tenant_id: t.tenant_id.clone(),
        tenant_count: t.tenant_count,
        current_rent: round2(rent),
        new_rent: round2(new_rent),
        increase: round2(new_rent - rent),
        increase_pct: round2(increase_pct),
        stay_probability: round2(stay * 100.0),
        expected_gain: round2(gain * n),
        binding_guardrail: binding,
        reasons,
    }
}

/// The suggestion for a tenant a guardrail holds back: the rent stays, with that guardrail's
/// reason alone.
pub(super) fn held(
    t: &TenantInput,
    model: &StayModel,
    guardrail: Guardrail,
    why: Reason,
) -> Suggestion {
    Suggestion {
        tenant_id: t.tenant_id.clone(),
        tenant_count: t.tenant_count,
        current_rent: round2(t.rent),
        new_rent: round2(t.rent),
        increase: 0.0,
        increase_pct: 0.0,
        stay_probability: round2((1.0 - model.baseline) * 100.0),
        expected_gain: 0.0,
        binding_guardrail: Some(guardrail),
        reasons: vec![why],
    }
}
