//! Existing-customer rent increases (ECRI) that earn: per tenant (per cohort when only cohorts
//! are known), the increase that maximises expected revenue over a horizon, against the chance
//! the tenant leaves and what a move-out costs, within named guardrails (docs/ecri.md).
//!
//! - `settings`: every guardrail and the horizon, with their defaults;
//! - `stay`: the stay model, its prior curve and how it learns from a facility's outcomes;
//! - `decide`: the decision for one tenant and for a facility's rent roll;
//! - `backtest`: the simulated rent roll whose tenants react to increases, and the policies
//!   compared on it.
//!
//! Pure: plain values in, plain values out. Every ECRI figure of the service comes from this
//! engine (the earlier per-size rule is gone).

pub mod backtest;
pub mod decide;
pub mod evidence;
pub mod lift;
pub mod settings;
pub mod stay;

pub use decide::{
    decide, decide_facility, reprice, stop_loss, Guardrail, Reason, Refused, SizeMarket,
    Suggestion, TenantInput,
};
pub use settings::{EcriEngineSettings, DO_NOT_INCREASE};
pub use stay::{learn, Outcome, StayModel, StayPrior};

/// The version of the ECRI engine and of its stored runs: a run built by another version is
/// reported stale, and the next night's run replaces it.
pub const ENGINE_VERSION: &str = "ecri-2026.12.5";

#[cfg(test)]
mod tests;
