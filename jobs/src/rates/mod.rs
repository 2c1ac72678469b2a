//! Street-rate decisions: a revenue manager (or an API key, or the service's auto-accept)
//! accepts, overrides or rejects the recommendations of a facility's latest run. Owns
//! `rate_decisions`. Each decision is logged (`crate::decisions`) in its transaction, and a set
//! that approved a rate records one `rates.approved` event. An approved rate waits until a
//! snapshot shows it; meanwhile the next run starts from it (`pricing::inputs`). The checks are
//! `domain::pricing::decisions`.
//!
//! This module holds what a decision is; `decide` stores them (a person's set and the
//! service's auto-accept), `approved_event` records the event, and `in_force` reads what is in
//! force and approved.

mod approved_event;
mod decide;
mod in_force;

pub(crate) use decide::auto_accept;
pub use decide::decide;
pub use domain::pricing::decisions::{Action, Requested, Status, PENDING_DAYS};
pub(crate) use in_force::{load, pending};
pub use in_force::{rates, InForce, RateLine, Rates};

use crate::actor::Actor;
use chrono::{DateTime, Utc};
use domain::ids::{CompanyId, FacilityId, RunId};
use uuid::Uuid;

/// A stored decision.
#[derive(Clone, Debug)]
pub struct Decision {
    pub id: Uuid,
    pub run_id: Uuid,
    pub size: String,
    pub tier: String,
    /// `accept`, `override` or `reject`.
    pub action: String,
    /// The approved rate; `None` for a rejection.
    pub rate: Option<f64>,
    pub previous_rate: f64,
    pub recommended_rate: f64,
    pub reason: Option<String>,
    pub forced: bool,
    pub broken_guardrails: Vec<String>,
    pub automatic: bool,
    pub actor: Actor,
    pub decided_at: DateTime<Utc>,
}

/// Decisions stored and the `rates.approved` deliveries they recorded (to push after commit).
#[derive(Debug)]
pub struct Decided {
    pub decisions: Vec<Decision>,
    pub delivery_jobs: Vec<Uuid>,
}

/// The run the decisions are about.
pub(crate) struct RunRef<'a> {
    pub company_id: CompanyId,
    pub facility_id: FacilityId,
    pub facility_name: &'a str,
    pub run_id: RunId,
}

/// The source of an approved rate: `recommendation` or `override`.
pub fn source_of(action: &str) -> &'static str {
    if action == Action::Override.as_str() {
        "override"
    } else {
        "recommendation"
    }
}
