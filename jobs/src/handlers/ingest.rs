//! `ingest`: what follows a stored snapshot (push, upload or CRM pull). The snapshot was parsed
//! and normalised before it was stored; here the facility's lease-up mode is re-evaluated over
//! its history in date order, and a pricing run is requested.

use super::{FollowUps, JobContext, JobError};
use crate::payload::{self, Payload};
use crate::queue::Kind;
use crate::runs::{self, Claimed, NewJob};
use serde_json::json;

pub async fn run(
    ctx: &JobContext,
    job: &Claimed,
    p: payload::Ingest,
) -> Result<FollowUps, JobError> {
    let sync_id = p.sync_id;
    let mut tx = ctx.db.begin().await?;
    let Some(record) = sqlx::query!(
        "SELECT facility_id, company_id FROM sync_records WHERE id = $1",
        sync_id
    )
    .fetch_optional(&mut *tx)
    .await?
    else {
        // The facility (and its records) was deleted since: nothing left to do.
        super::commit_success(
            tx,
            job,
            &json!({ "skipped": "the sync record no longer exists" }),
        )
        .await?;
        return Ok(vec![]);
    };
    // One ingest at a time per facility, so mode histories are computed over a stable set.
    sqlx::query!(
        "SELECT id FROM facilities WHERE id = $1 FOR UPDATE",
        record.facility_id
    )
    .fetch_one(&mut *tx)
    .await?;
    let recorded =
        crate::lease_up::record(&mut tx, record.company_id.into(), record.facility_id.into())
            .await?;
    // Request a pricing run unless one is already waiting for this facility.
    let waiting =
        runs::waiting_pricing_run(&mut tx, record.company_id.into(), record.facility_id.into())
            .await?;
    let mut follow_ups = Vec::new();
    let pricing_run = match waiting {
        Some(id) => id,
        None => {
            let id = runs::insert(
                &mut tx,
                NewJob::new(
                    Some(record.company_id.into()),
                    Payload::PricingRun(payload::PricingRun {
                        facility_id: record.facility_id.into(),
                        sync_id: Some(sync_id),
                    }),
                ),
            )
            .await?
            .ok_or_else(|| JobError::Permanent("pricing run could not be recorded".to_owned()))?;
            follow_ups.push((Kind::PricingRun, id));
            id
        }
    };
    let result = json!({ "mode": recorded.mode, "mode_events": recorded.events, "pricing_run": pricing_run });
    super::commit_success(tx, job, &result).await?;
    Ok(follow_ups)
}
