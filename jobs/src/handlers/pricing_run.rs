//! `pricing_run`: runs the pricing engine on the facility's latest snapshot and stores the run.
//! The run's id is the job's id, so a job delivered twice stores one run. The run records a
//! `recommendations.ready` delivery per webhook subscription, pushed as follow-up work.

use super::{FollowUps, JobContext, JobError};
use crate::payload;
use crate::pricing::store::{self, Trigger};
use crate::queue::Kind;
use crate::runs::Claimed;
use serde_json::json;

pub async fn run(
    ctx: &JobContext,
    job: &Claimed,
    p: payload::PricingRun,
) -> Result<FollowUps, JobError> {
    let facility_id = p.facility_id;
    let company_id = job
        .company_id
        .ok_or_else(|| JobError::Permanent("job has no company".to_owned()))?;
    let mut tx = ctx.db.begin().await?;
    let stored = store::run_and_store(
        &mut tx,
        company_id.into(),
        facility_id,
        job.id.into(),
        Trigger::Sync,
    )
    .await?;
    let run = &stored.run;
    let result = json!({
        "recommendation_id": run.recommendation_id,
        "per_size_count": run.per_size_count,
        "snapshot_date": run.snapshot_date,
        "auto_accepted": stored.auto_accepted.len(),
        "webhook_deliveries": stored.delivery_jobs.len(),
    });
    super::commit_success(tx, job, &result).await?;
    Ok(FollowUps::of(Kind::WebhookDelivery, stored.delivery_jobs))
}
