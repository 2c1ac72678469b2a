//! Street-rate decisions and the rates in force and approved, as the API answers them.

use super::decisions::Actor;
use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;
use uuid::Uuid;

/// A stored street-rate decision.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = RateDecisionStored)]
pub(crate) struct Decision {
    /// Id of the decision.
    pub id: Uuid,
    /// The unit type's size.
    pub size: String,
    /// The unit type's tier; empty when none.
    pub tier: String,
    /// `accept`, `override` or `reject`.
    #[schema(pattern = "^(accept|override|reject)$")]
    pub action: String,
    /// The approved rate; null for a rejection.
    pub rate: Option<f64>,
    /// The rate the run started from (the rate in force, or a rate approved before and not
    /// yet in a snapshot).
    pub previous_rate: f64,
    /// The run's recommended rate.
    pub recommended_rate: f64,
    /// Why, as given.
    pub reason: Option<String>,
    /// An override stored past the guardrails in `broken_guardrails` (with `force: true`).
    pub forced: bool,
    /// The guardrails a forced override breaks (`max_step`, `ceiling`, `floor`,
    /// `lease_up_floor`, `full_no_cut`).
    pub broken_guardrails: Vec<String>,
    /// Made by the facility's auto-accept setting when the run was stored.
    pub automatic: bool,
    /// Who decided.
    pub actor: Actor,
    /// When (ISO 8601 UTC, milliseconds).
    #[serde(serialize_with = "domain::values::millis")]
    pub decided_at: DateTime<Utc>,
}

impl From<jobs::rates::Decision> for Decision {
    fn from(d: jobs::rates::Decision) -> Self {
        Self {
            id: d.id,
            size: d.size,
            tier: d.tier,
            action: d.action,
            rate: d.rate,
            previous_rate: d.previous_rate,
            recommended_rate: d.recommended_rate,
            reason: d.reason,
            forced: d.forced,
            broken_guardrails: d.broken_guardrails,
            automatic: d.automatic,
            actor: d.actor.into(),
            decided_at: d.decided_at,
        }
    }
}

/// The decisions a request stored.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = RateDecisionsStored)]
pub(crate) struct Decided {
    /// The facility.
    pub facility_id: Uuid,
    /// The run decided on.
    pub run_id: Uuid,
    /// The decisions, in the order of the request.
    pub decisions: Vec<Decision>,
}

/// One unit type of the latest snapshot: the rate in force and the approved rate.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = RateInForce)]
pub(crate) struct RateLine {
    /// Unit size.
    pub size: String,
    /// Tier; empty when none.
    pub tier: String,
    /// The street rate of the latest snapshot.
    pub rate_in_force: f64,
    /// The date of that snapshot.
    pub rate_in_force_date: NaiveDate,
    /// The rate approved by the unit type's latest decision (accepted or overridden); null
    /// when none is (no decision, or the latest rejected the recommendation).
    pub approved_rate: Option<f64>,
    /// `recommendation` (accepted) or `override`; null without an approved rate.
    #[schema(pattern = "^(recommendation|override)$")]
    pub source: Option<&'static str>,
    /// `pending` until a snapshot dated on or after the decision day shows the rate (within
    /// half a cent), then `applied`; `not_applied` when the snapshots of `pending_days` days
    /// after the decision never showed it. Null without an approved rate.
    #[schema(pattern = "^(pending|applied|not_applied)$")]
    pub status: Option<&'static str>,
    /// The decision's id.
    pub decision_id: Option<Uuid>,
    /// When it was decided (ISO 8601 UTC).
    pub decided_at: Option<DateTime<Utc>>,
    /// Who decided.
    pub decided_by: Option<Actor>,
}

/// The facility's rates in force and approved.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = FacilityRates)]
pub(crate) struct Rates {
    /// The facility.
    pub facility_id: Uuid,
    /// The facility's name.
    pub facility_name: String,
    /// The company's currency (ISO 4217).
    pub currency: &'static str,
    /// Date of the latest snapshot; null without snapshots.
    pub snapshot_date: Option<NaiveDate>,
    /// Days of snapshots after its decision an approved rate is waited for.
    pub pending_days: i64,
    /// One per unit type of the latest snapshot.
    pub rates: Vec<RateLine>,
}

impl From<jobs::rates::Rates> for Rates {
    fn from(r: jobs::rates::Rates) -> Self {
        let date = r.snapshot_date;
        Self {
            facility_id: r.facility_id,
            facility_name: r.facility_name,
            currency: r.currency.code(),
            snapshot_date: date,
            pending_days: jobs::rates::PENDING_DAYS,
            rates: r
                .rates
                .into_iter()
                .map(|l| {
                    let a = l.approved;
                    RateLine {
                        size: l.size,
                        tier: l.tier,
                        rate_in_force: l.rate_in_force,
                        rate_in_force_date: date.unwrap_or_default(),
                        approved_rate: a.as_ref().and_then(|a| a.rate),
                        source: a.as_ref().map(|a| jobs::rates::source_of(&a.action)),
                        status: a.as_ref().and_then(|a| a.status).map(|s| s.as_str()),
                        decision_id: a.as_ref().map(|a| a.id),
                        decided_at: a.as_ref().map(|a| a.decided_at),
                        decided_by: a.map(|a| a.actor.into()),
                    }
                })
                .collect(),
        }
    }
}
