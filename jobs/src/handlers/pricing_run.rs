//! `pricing_run`: runs the pricing engine on the facility's latest snapshot and stores the run.
//! The run's id is the job's id, so a job delivered twice stores one run.

use super::{FollowUps, JobContext, JobError};
use crate::pricing::store::{self, Trigger};
use crate::runs::{self, Claimed};
use serde_json::json;
use uuid::Uuid;

pub async fn run(ctx: &JobContext, job: &Claimed) -> Result<FollowUps, JobError> {
    let facility_id = job
        .payload
        .get("facility_id")
        .and_then(|v| v.as_str())
        .and_then(|s| s.parse::<Uuid>().ok())
        .ok_or_else(|| JobError::Permanent("payload has no facility_id".to_owned()))?;
    let company_id = job
        .company_id
        .ok_or_else(|| JobError::Permanent("job has no company".to_owned()))?;
    let mut tx = ctx.db.begin().await?;
    let run = store::run_and_store(&mut tx, company_id, facility_id, job.id, Trigger::Sync).await?;
    let result = json!({
        "recommendation_id": run.recommendation_id,
        "per_size_count": run.per_size_count,
        "snapshot_date": run.snapshot_date,
    });
    if !runs::succeed(&mut tx, job, &result).await? {
        return Err(JobError::ClaimLost);
    }
    tx.commit().await?;
    Ok(vec![])
}
