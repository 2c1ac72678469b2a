//! The audit log, as the API answers it.

use super::decisions::Actor;
use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

/// One recorded change.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct AuditEntry {
    /// Id of the entry; entries are listed by it, newest first.
    pub id: i64,
    /// When it happened.
    pub at: DateTime<Utc>,
    /// Who did it.
    pub actor: Actor,
    /// The actor's role at the time; null for the service and for a failed sign-in.
    pub role: Option<String>,
    /// What was done, as `noun.verb` (`api_key.create`, `pricing_settings.update`,
    /// `user.sign_in_failed`); docs/security.md lists them.
    pub action: String,
    /// What it was done to, as `kind:id`.
    pub target: Option<String>,
    /// The facility it concerns, if one.
    pub facility_id: Option<Uuid>,
    /// A setting's value before the change.
    #[schema(value_type = Option<Object>)]
    pub before: Option<serde_json::Value>,
    /// A setting's value after the change.
    #[schema(value_type = Option<Object>)]
    pub after: Option<serde_json::Value>,
    /// The client's address.
    pub client_addr: Option<String>,
    /// Where the change came from: `api` (a key's request), `dashboard` (a signed-in
    /// person's click) or `service`; null for entries recorded before it was kept.
    pub via: Option<String>,
}

impl From<jobs::audit::Entry> for AuditEntry {
    fn from(e: jobs::audit::Entry) -> Self {
        Self {
            id: e.id,
            at: e.at,
            actor: e.actor.into(),
            role: e.role,
            action: e.action,
            target: e.target,
            facility_id: e.facility_id,
            before: e.before,
            after: e.after,
            client_addr: e.client_addr,
            via: e.via,
        }
    }
}
