//! The ramp: while a facility's stay model rests mostly on the prior, its suggested increases
//! go out a share at a time, the share growing with the evidence. The prior is a guess about
//! tenants the engine has never seen raised; a first share of notices teaches the model (their
//! 90-day windows) before the rest are decided with what they showed. Which tenants go first
//! is a stable hash of the customer (else the tenant), so a customer's units go together and
//! the same tenants are picked from one run to the next: the others wait, whatever the day,
//! until the model has learned.

use super::explain::held;
use super::{reason, Guardrail, Suggestion, TenantInput};
use crate::ecri::settings::EcriEngineSettings;
use crate::ecri::stay::StayModel;

/// The share (0..1) of the model's sensitivity that rests on outcomes: the facility's own, or
/// the company's it is shrunk toward when that knows more (a facility new to increases in a
/// company that has raised for months is not guessing).
pub fn evidence(model: &StayModel) -> f64 {
    model.evidence_weight.max(model.company_evidence_weight)
}

/// Whether the ramp holds increases back under this model.
pub fn ramping(model: &StayModel, s: &EcriEngineSettings) -> bool {
    s.ramp_share_pct < 100.0 && evidence(model) * 100.0 < s.ramp_until_evidence_pct
}

/// The share (%) of the tenants the engine would raise that go now: `ramp_share_pct` with no
/// evidence, rising in proportion to the evidence to all of them once it reaches
/// `ramp_until_evidence_pct` (100 when not ramping). Tenants go by their stable draw, so those
/// let through stay let through as the share grows.
pub fn share(model: &StayModel, s: &EcriEngineSettings) -> f64 {
    if !ramping(model, s) {
        return 100.0;
    }
    let reached = (evidence(model) * 100.0 / s.ramp_until_evidence_pct).clamp(0.0, 1.0);
    s.ramp_share_pct + (100.0 - s.ramp_share_pct) * reached
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
    let share = share(model, s);
    if share >= 100.0 {
        return;
    }
    for (t, o) in roll.iter().zip(out.iter_mut()) {
        if o.increase > 0.0 && draw(t) >= share {
            *o = held(
                t,
                model,
                Guardrail::Ramp,
                reason(
                    "ramp",
                    evidence(model) * 100.0,
                    format!(
                        "the facility's model rests {:.0} % on outcomes (its own or its company's), under the {:.0} % required: {:.0} % of its increases go now ({:.0} % with none, all at {:.0} %; this tenant's would be +{:.1} %), the rest as outcomes are learned",
                        evidence(model) * 100.0,
                        s.ramp_until_evidence_pct,
                        share,
                        s.ramp_share_pct,
                        s.ramp_until_evidence_pct,
                        o.increase_pct
                    ),
                ),
            );
        }
    }
}
