//! `ingest`: what follows a stored snapshot (push, upload or CRM pull). The snapshot was parsed
//! and normalised before it was stored; here the facility's lease-up mode is re-evaluated over
//! its history in date order, and a pricing run and an ECRI run are requested.

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
    let Some((company_id, facility_id)) = crate::sync::write::owner_of(&mut tx, sync_id).await?
    else {
        // The facility (and its records) was deleted since: nothing left to do.
        super::commit_success(
            tx,
            job,
            &json!({ "skipped": "the sync record no longer exists" }),
        )
        .await?;
        return Ok(FollowUps::none());
    };
    // One ingest at a time per facility, so mode histories are computed over a stable set.
    crate::facilities::lock(&mut tx, facility_id).await?;
    let recorded = crate::lease_up::record(&mut tx, company_id, facility_id).await?;
    // Request a pricing run unless one is already waiting for this facility.
    let waiting = runs::waiting(&mut tx, Kind::PricingRun, company_id, facility_id).await?;
    let mut follow_ups = FollowUps::none();
    let pricing_run = match waiting {
        Some(id) => id,
        None => {
            let id = runs::insert(
                &mut tx,
                NewJob::new(
                    Some(company_id),
                    Payload::PricingRun(payload::PricingRun {
                        facility_id,
                        sync_id: Some(sync_id),
                    }),
                ),
            )
            .await?
            .ok_or_else(|| JobError::Permanent("pricing run could not be recorded".to_owned()))?;
            follow_ups.add(Kind::PricingRun, id);
            id
        }
    };
    // The roll or the market may have changed: the facility's ECRI suggestions are run again.
    let (ecri_run, new) = crate::ecri::runs::request(
        &mut tx,
        company_id,
        facility_id,
        crate::ecri::runs::Trigger::Sync,
    )
    .await?;
    if new {
        follow_ups.add(Kind::EcriRun, ecri_run);
    }
    let result = json!({ "mode": recorded.mode, "mode_events": recorded.events, "pricing_run": pricing_run, "ecri_run": ecri_run });
    super::commit_success(tx, job, &result).await?;
    Ok(follow_ups)
}
