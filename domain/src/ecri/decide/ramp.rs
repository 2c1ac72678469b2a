//! The ramp: while a facility's stay model rests mostly on the prior, its suggested increases
//! go out a share at a time. The prior is a guess about tenants the engine has never seen
//! raised; a first share of notices teaches the model (their 90-day windows) before the rest
//! are decided with what they showed. Which tenants go first is a stable hash of the customer
//! (else the tenant), so a customer's units go together and the same tenants are picked from
//! one run to the next: the others wait, whatever the day, until the model has learned.

use super::explain::held;
use super::{reason, Guardrail, Suggestion, TenantInput};
use crate::ecri::settings::EcriEngineSettings;
use crate::ecri::stay::StayModel;

/// Whether the ramp holds increases back under this model.
pub fn ramping(model: &StayModel, s: &EcriEngineSettings) -> bool {
    s.ramp_share_pct < 100.0 && model.evidence_weight * 100.0 < s.ramp_until_evidence_pct
}

/// A stable position (0 to 100) of a tenant in the ramp's draw: FNV-1a of its customer id
/// (else its tenant id).
pub fn draw(t: &TenantInput) -> f64 {
    let key = t.customer_id.as_deref().unwrap_or(&t.tenant_id);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (h % 10_000) as f64 / 100.0
}

/// Holds back the increases of the tenants outside the ramp's share while it applies.
pub(super) fn hold_back(
    roll: &[TenantInput],
    model: &StayModel,
    s: &EcriEngineSettings,
    out: &mut [Suggestion],
) {
    if !ramping(model, s) {
        return;
    }
    for (t, o) in roll.iter().zip(out.iter_mut()) {
        if o.increase > 0.0 && draw(t) >= s.ramp_share_pct {
            *o = held(
                t,
                model,
                Guardrail::Ramp,
                reason(
                    "ramp",
                    model.evidence_weight * 100.0,
                    format!(
                        "the facility's model rests {:.0} % on its own outcomes, under the {:.0} % required: {:.0} % of its increases go first (this tenant's would be +{:.1} %), the rest once their outcomes are learned",
                        model.evidence_weight * 100.0,
                        s.ramp_until_evidence_pct,
                        s.ramp_share_pct,
                        o.increase_pct
                    ),
                ),
            );
        }
    }
}
