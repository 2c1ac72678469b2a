//! The step test: while the stay model cannot yet tell what the round figures cost (δ, the
//! logit an increase adds once it reaches `step_pct` % or `step_amount`), a stable share of
//! the tenants whose suggested increase reaches them get the largest whole increase under both
//! instead. An engine whose every increase lies past the round figures never sees what a
//! smaller one costs, so its outcomes cannot tell a step from a steep slope; the test's
//! tenants show both sides. Once δ rests on outcomes (the facility's own, or its company's
//! when that knows more: [`evidence`]) the test stops and the search weighs every rent with
//! the learned curve. Who is tested is a stable hash of the customer (else the tenant), salted
//! so that it is drawn apart from the ramp's.

use super::explain::suggestion;
use super::plan::{evaluate, Plan};
use super::{reason, Guardrail, Reason, Suggestion, TenantInput};
use crate::ecri::settings::EcriEngineSettings;
use crate::ecri::stay::StayModel;
use std::collections::BTreeMap;

/// What the test's draw hashes before the customer's id, so that it is drawn apart from the
/// ramp's ([`super::ramp::draw`]).
const SALT: &str = "step-test/";

/// The share (0..1) of the step δ that rests on outcomes: the facility's own, or the company's
/// it is shrunk toward when that knows more. Both weigh δ's information given the slope's
/// parameters, so outcomes that all lie past the round figures do not count as evidence of it.
pub fn evidence(model: &StayModel) -> f64 {
    model
        .step_evidence_weight
        .max(model.company_step_evidence_weight)
}

/// Whether the test holds a share of the increases under the round figures under this model.
pub fn testing(model: &StayModel, s: &EcriEngineSettings) -> bool {
    s.step_test_share_pct > 0.0 && evidence(model) * 100.0 < s.step_test_until_evidence_pct
}

/// A stable position (0 to 100) of a tenant in the test's draw: FNV-1a of the salt and its
/// customer id (else its tenant id), mixed by the SplitMix64 finaliser.
pub fn draw(t: &TenantInput) -> f64 {
    let key = t.customer_id.as_deref().unwrap_or(&t.tenant_id);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in SALT.bytes().chain(key.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^= h >> 31;
    (h % 10_000) as f64 / 100.0
}

/// The largest whole new rent of the plan under both round figures, within its guardrails
/// (from its minimum increase to its cap) and expected to pay; None when there is none.
pub(super) fn under_step(p: &Plan<'_>) -> Option<f64> {
    let rent = p.tenant.rent;
    let figures = p.model.step_figures();
    let crosses = |r: f64| figures.crossed_by((r / rent - 1.0) * 100.0, r - rent);
    let mut r = (figures.limit(rent) + 1e-9).floor().min(p.last);
    while r >= p.first && crosses(r) {
        r -= 1.0;
    }
    (r >= p.first && evaluate(p, r).0 > 0.0).then_some(r)
}

/// Holds the increases of the test's share of tenants just under the round figures while the
/// step is unknown: those whose suggestion reaches them and who have a rent under them within
/// the guardrails. A customer's units raised together are left as the customer rule set them.
pub(super) fn hold_under(
    roll: &[TenantInput],
    plans: &[Result<Plan<'_>, (Guardrail, Reason)>],
    model: &StayModel,
    s: &EcriEngineSettings,
    out: &mut [Suggestion],
) {
    if !testing(model, s) {
        return;
    }
    let mut units: BTreeMap<&str, usize> = BTreeMap::new();
    for c in roll.iter().filter_map(|t| t.customer_id.as_deref()) {
        *units.entry(c).or_default() += 1;
    }
    let together = |t: &TenantInput| {
        s.raise_customer_units_together
            && t.customer_id
                .as_deref()
                .is_some_and(|c| units.get(c).is_some_and(|&n| n > 1))
    };
    let figures = model.step_figures();
    for ((t, p), o) in roll.iter().zip(plans).zip(out.iter_mut()) {
        let Ok(p) = p else { continue };
        if o.increase <= 0.0 || draw(t) >= s.step_test_share_pct || together(t) {
            continue;
        }
        let amount = o.new_rent - t.rent;
        if !figures.crossed_by(amount / t.rent * 100.0, amount) {
            continue;
        }
        let Some(r) = under_step(p) else { continue };
        let why = reason(
            "step_test",
            evidence(model) * 100.0,
            format!(
                "the facility's model cannot yet tell what an increase of {:.0} % or {:.2} costs ({:.0} % of its step rests on outcomes, its own or its company's, under the {:.0} % required): {:.0} % of the tenants whose increase reaches them get one just under (this tenant's would be +{:.1} %)",
                figures.pct,
                figures.amount,
                evidence(model) * 100.0,
                s.step_test_until_evidence_pct,
                s.step_test_share_pct,
                o.increase_pct
            ),
        );
        *o = suggestion(p, Some(r), Some(Guardrail::StepTest), s, vec![why]);
    }
}

#[cfg(test)]
mod tests;
