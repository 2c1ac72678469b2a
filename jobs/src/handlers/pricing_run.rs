//! `pricing_run`: runs the pricing engine for a facility. The engine arrives with the pricing
//! capability; until then the job records that no engine ran, so the pipeline (request, claim,
//! completion) is complete and observable.

use super::{FollowUps, JobContext, JobError};
use crate::runs::{self, Claimed};
use serde_json::json;

pub async fn run(ctx: &JobContext, job: &Claimed) -> Result<FollowUps, JobError> {
    let mut tx = ctx.db.begin().await?;
    let result =
        json!({ "engine_ran": false, "reason": "the pricing engine is not part of this version" });
    if !runs::succeed(&mut tx, job, &result).await? {
        return Err(JobError::ClaimLost);
    }
    tx.commit().await?;
    Ok(vec![])
}
