//! Cancelling a draft (an approved batch has been sent: it stays, and its outcome is watched).

use super::{get, lock_draft, Batch};
use crate::audit::Change;
use crate::decisions;
use crate::door::{self, Committed, Jobs, Who};
use crate::error::Result;
use domain::ids::FacilityId;
use sqlx::PgPool;
use uuid::Uuid;

/// Cancels a draft (an approved batch has been sent: it stays, and its outcome is watched).
pub async fn cancel(
    pool: &PgPool,
    who: &Who,
    facility_id: FacilityId,
    id: Uuid,
) -> Result<Committed<Batch>> {
    let (company_id, actor) = (who.company, &who.actor);
    let mut tx = pool.begin().await?;
    lock_draft(&mut tx, company_id, facility_id, id, "cancelled").await?;
    sqlx::query!(
        "UPDATE ecri_batches SET status = 'cancelled', cancelled_by = $2, cancelled_at = now()
         WHERE id = $1",
        id,
        actor.json()
    )
    .execute(&mut *tx)
    .await?;
    decisions::record(
        &mut tx,
        decisions::Entry {
            company_id,
            facility_id,
            action: "ecri_batch.cancelled",
            subject_id: id,
            summary: "Cancelled the ECRI batch".to_owned(),
            detail: serde_json::json!({}),
            actor,
        },
    )
    .await?;
    let change = Change::new("ecri_batch.cancel")
        .target("ecri_batch", id)
        .facility(facility_id.uuid());
    let done = door::commit(tx, who, change, (), Jobs::none()).await?;
    let batch = get(pool, company_id, facility_id, id).await?;
    Ok(done.map(|()| batch))
}
