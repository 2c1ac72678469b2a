//! `ecri_fit`: fits the company's stay-model evidence once (`crate::ecri::fit`) and, for the
//! nightly work, requests a run of each of its facilities; the runs read the stored fit.

use super::{FollowUps, JobContext, JobError};
use crate::ecri::{fit, runs};
use crate::payload;
use crate::runs::Claimed;
use serde_json::json;

pub async fn run(
    ctx: &JobContext,
    job: &Claimed,
    p: payload::EcriFit,
) -> Result<FollowUps, JobError> {
    let company_id: domain::ids::CompanyId = job
        .company_id
        .ok_or_else(|| JobError::Permanent("job has no company".to_owned()))?
        .into();
    let (fit_id, facilities) = fit::fit_company(&ctx.db, company_id).await?;
    let mut tx = ctx.db.begin().await?;
    let mut follow_ups = FollowUps::none();
    if p.then_run {
        let ids = sqlx::query_scalar!(
            "SELECT id FROM facilities WHERE company_id = $1 ORDER BY id",
            company_id.uuid()
        )
        .fetch_all(&mut *tx)
        .await?;
        for id in ids {
            runs::request_into(
                &mut tx,
                company_id,
                id.into(),
                runs::Trigger::Nightly,
                &mut follow_ups,
            )
            .await?;
        }
    }
    let result = json!({
        "ecri_fit_id": fit_id,
        "facilities_fitted": facilities,
        "runs_requested": follow_ups.ids(crate::queue::Kind::EcriRun).len(),
    });
    super::commit_success(tx, job, &result).await?;
    Ok(follow_ups)
}
