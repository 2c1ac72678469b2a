//! The log of every decision on a facility (ECRI batches created, edited, approved, cancelled;
//! street rates accepted, overridden, rejected), each with its actor and time. Written in the
//! transaction of the decision; listed in the facility's history.

use crate::actor::Actor;
use crate::error::Result;
use chrono::{DateTime, Utc};
use domain::ids::{CompanyId, FacilityId};
use serde::Serialize;
use sqlx::PgConnection;
use uuid::Uuid;

/// Most entries one history lists.
pub const MAX_ENTRIES: i64 = 500;

/// One decision to record.
pub struct Entry<'a> {
    pub company_id: CompanyId,
    pub facility_id: FacilityId,
    /// `ecri_batch.created`, `rate.accepted`, ...
    pub action: &'a str,
    /// The batch or the rate decision.
    pub subject_id: Uuid,
    /// One sentence a person reads.
    pub summary: String,
    pub detail: serde_json::Value,
    pub actor: &'a Actor,
}

/// Records one decision.
pub(crate) async fn record(conn: &mut PgConnection, e: Entry<'_>) -> Result<()> {
    sqlx::query!(
        "INSERT INTO decision_log (id, company_id, facility_id, action, subject_id, summary, detail, actor)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        Uuid::now_v7(),
        e.company_id.uuid(),
        e.facility_id.uuid(),
        e.action,
        e.subject_id,
        e.summary,
        e.detail,
        e.actor.json()
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// A recorded decision.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Logged {
    pub id: Uuid,
    pub action: String,
    pub subject_id: Uuid,
    pub summary: String,
    pub detail: serde_json::Value,
    pub actor: Actor,
    pub at: DateTime<Utc>,
}

/// The facility's decisions since `since` (all when none), newest first, at most
/// [`MAX_ENTRIES`].
pub(crate) async fn list(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    since: Option<DateTime<Utc>>,
) -> Result<Vec<Logged>> {
    let rows = sqlx::query!(
        "SELECT id, action, subject_id, summary, detail, actor, at FROM decision_log
         WHERE company_id = $1 AND facility_id = $2 AND ($3::timestamptz IS NULL OR at >= $3)
         ORDER BY at DESC, id DESC LIMIT $4",
        company_id.uuid(),
        facility_id.uuid(),
        since,
        MAX_ENTRIES
    )
    .fetch_all(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| Logged {
            id: r.id,
            action: r.action,
            subject_id: r.subject_id,
            summary: r.summary,
            detail: r.detail,
            actor: Actor::from_json(&r.actor),
            at: r.at,
        })
        .collect())
}
