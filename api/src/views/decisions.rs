//! Actors and the decision log, as the API answers them.

use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

/// Who made a decision.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct Actor {
    /// `user` (signed in to the dashboard), `api_key`, or `system` (an automatic decision).
    #[serde(rename = "type")]
    #[schema(pattern = "^(user|api_key|system)$")]
    pub kind: &'static str,
    /// The user's or the key's id; null for the service.
    pub id: Option<Uuid>,
    /// The user's address, the key's name, or what the service did (`auto-accept`).
    pub name: String,
}

impl From<jobs::actor::Actor> for Actor {
    fn from(a: jobs::actor::Actor) -> Self {
        use jobs::actor::ActorKind;
        Self {
            kind: match a.kind {
                ActorKind::User => "user",
                ActorKind::ApiKey => "api_key",
                ActorKind::System => "system",
            },
            id: a.id,
            name: a.name,
        }
    }
}

/// One decision of the facility's log.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct DecisionEntry {
    /// Id of the entry.
    pub id: Uuid,
    /// `ecri_batch.created`, `ecri_batch.edited`, `ecri_batch.approved`, `ecri_batch.cancelled`,
    /// `rate.accepted`, `rate.overridden` or `rate.rejected`.
    pub action: String,
    /// The ECRI batch or the rate decision it is about.
    pub subject_id: Uuid,
    /// One sentence.
    pub summary: String,
    /// The figures of the decision (lines, rates, dates).
    #[schema(value_type = Object)]
    pub detail: serde_json::Value,
    /// Who decided.
    pub actor: Actor,
    /// When.
    pub at: DateTime<Utc>,
}

impl From<jobs::decisions::Logged> for DecisionEntry {
    fn from(l: jobs::decisions::Logged) -> Self {
        Self {
            id: l.id,
            action: l.action,
            subject_id: l.subject_id,
            summary: l.summary,
            detail: l.detail,
            actor: l.actor.into(),
            at: l.at,
        }
    }
}
