//! `ecri_run`: computes a facility's ECRI suggestions (its own evidence fresh, the company's
//! from the latest fit) and stores them as a run whose id is the job's id, so a job delivered
//! twice stores one run. The computing happens before the transaction opens: no database
//! connection is held while the engine works.

use super::{FollowUps, JobContext, JobError};
use crate::ecri::{self, runs};
use crate::payload;
use crate::runs::Claimed;
use serde_json::json;

pub async fn run(
    ctx: &JobContext,
    job: &Claimed,
    p: payload::EcriRun,
) -> Result<FollowUps, JobError> {
    let company_id: domain::ids::CompanyId = job
        .company_id
        .ok_or_else(|| JobError::Permanent("job has no company".to_owned()))?
        .into();
    let f = match ecri::facility(&ctx.db, company_id, p.facility_id).await {
        Ok(f) => f,
        Err(crate::Error::NotFound(_)) => {
            // The facility was deleted since: nothing left to do.
            let tx = ctx.db.begin().await?;
            super::commit_success(
                tx,
                job,
                &json!({ "skipped": "the facility no longer exists" }),
            )
            .await?;
            return Ok(FollowUps::none());
        }
        Err(e) => return Err(e.into()),
    };
    let mut tx = ctx.db.begin().await?;
    let totals = runs::store(&mut tx, company_id, job.id, p.trigger, &f).await?;
    let result = json!({
        "ecri_run_id": job.id,
        "trigger": p.trigger.as_str(),
        "as_of": f.as_of,
        "lines": f.lines.len(),
        "totals": totals,
    });
    super::commit_success(tx, job, &result).await?;
    Ok(FollowUps::none())
}
