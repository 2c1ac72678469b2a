//! Job handlers and the one path every job takes: claim the row, run the handler, record the
//! outcome, push follow-up work. A handler does its effects and `runs::succeed` in one
//! transaction, so a job delivered twice (a duplicate push, a sweep racing a live worker, a
//! worker killed mid-job) has its effects once.

pub mod crm_pull;
pub mod ecri_fit;
pub mod ecri_run;
pub mod ingest;
pub mod pricing_run;
pub mod webhook_delivery;

use crate::config::{JobSettings, MasterKey};
use crate::payload::Payload;
use crate::queue::Queues;
use crate::runs::{self, Claimed, Failure};
use sqlx::PgPool;
use std::sync::Arc;
use std::time::Duration;
use tracing::Instrument;
use uuid::Uuid;

/// What handlers share.
#[derive(Clone)]
pub struct JobContext {
    pub db: PgPool,
    pub queues: Queues,
    /// The process's worker name, recorded as `claimed_by`.
    pub worker: Arc<str>,
    pub settings: JobSettings,
    pub master_key: MasterKey,
    /// The outbound client of CRM pulls.
    pub crm: crate::crm::CrmClient,
    /// The outbound client and schedule of webhook deliveries.
    pub webhooks: crate::webhooks::client::WebhookClient,
}

#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// Worth another attempt later (a database or network blip).
    #[error(transparent)]
    Retryable(#[from] anyhow::Error),
    /// Will fail the same way every time: marked failed at once.
    #[error("{0}")]
    Permanent(String),
    /// The lease expired and another worker took the job; this run's effects were rolled back.
    #[error("claim lost")]
    ClaimLost,
    /// The handler recorded the outcome itself, in its own transaction (a webhook delivery keeps
    /// its own retry schedule): nothing more to write.
    #[error("{message}")]
    Recorded { outcome: Outcome, message: String },
}

impl From<crate::Error> for JobError {
    fn from(e: crate::Error) -> Self {
        match e {
            crate::Error::Database(db) => Self::Retryable(db.into()),
            other => Self::Permanent(other.to_string()),
        }
    }
}

impl From<sqlx::Error> for JobError {
    fn from(e: sqlx::Error) -> Self {
        Self::Retryable(e.into())
    }
}

/// Work a handler created, to push once its transaction has committed: the same jobs a use
/// case's `Committed` carries.
pub type FollowUps = crate::door::Jobs;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Succeeded,
    Retrying,
    Failed,
    /// Nothing to do: finished already, held by a live lease, or not due.
    Skipped,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Succeeded => "succeeded",
            Self::Retrying => "retrying",
            Self::Failed => "failed",
            Self::Skipped => "skipped",
        }
    }
}

/// Backoff before attempt `attempts + 1`: base x 2^(attempts - 1), at most an hour.
pub fn retry_delay(base: Duration, attempts: i32) -> Duration {
    let exp = u32::try_from(attempts.clamp(1, 12) - 1).unwrap_or(0);
    (base * 2u32.pow(exp)).min(Duration::from_secs(3600))
}

async fn dispatch(ctx: &JobContext, job: &Claimed) -> Result<FollowUps, JobError> {
    match Payload::parse(job.kind, &job.payload).map_err(JobError::Permanent)? {
        Payload::Ingest(p) => ingest::run(ctx, job, p).await,
        Payload::PricingRun(p) => pricing_run::run(ctx, job, p).await,
        Payload::CrmPull(p) => crm_pull::run(ctx, job, p).await,
        Payload::WebhookDelivery(p) => webhook_delivery::run(ctx, job, p).await,
        Payload::EcriRun(p) => ecri_run::run(ctx, job, p).await,
        Payload::EcriFit(p) => ecri_fit::run(ctx, job, p).await,
    }
}

/// Records the job's success in the transaction that holds its effects, and commits both. When
/// the claim was lost (another worker took the job over) nothing is committed: the effects roll
/// back with the transaction, so they happen once.
pub(crate) async fn commit_success(
    mut tx: sqlx::Transaction<'_, sqlx::Postgres>,
    job: &Claimed,
    result: &serde_json::Value,
) -> Result<(), JobError> {
    if !runs::succeed(&mut tx, job, result).await? {
        return Err(JobError::ClaimLost);
    }
    tx.commit().await?;
    Ok(())
}

/// Runs the job with row id `id`, start to finish.
pub async fn execute(ctx: &JobContext, id: Uuid) -> crate::Result<Outcome> {
    let Some(job) = runs::claim(&ctx.db, id, &ctx.worker, ctx.settings.lease).await? else {
        return Ok(Outcome::Skipped);
    };
    // Every line the handler logs carries the job's id, kind and attempt.
    let span = tracing::info_span!("job", job_id = %job.id, kind = job.kind.as_str(), attempt = job.attempts);
    match dispatch(ctx, &job).instrument(span.clone()).await {
        Ok(follow_ups) => {
            // A failed push is logged in the job's span and repaired by the sweeper; the rows
            // are committed.
            ctx.queues
                .push_jobs(&follow_ups)
                .instrument(span.clone())
                .await;
            tracing::info!(parent: &span, "job succeeded");
            Ok(Outcome::Succeeded)
        }
        Err(JobError::ClaimLost) => {
            tracing::warn!(parent: &span, "job claim lost to another worker; effects rolled back");
            Ok(Outcome::Skipped)
        }
        Err(JobError::Recorded { outcome, message }) => {
            match outcome {
                Outcome::Failed => {
                    tracing::error!(parent: &span, error = message, "job failed for good")
                }
                Outcome::Retrying => {
                    tracing::warn!(parent: &span, error = message, "job failed; will retry")
                }
                _ => tracing::info!(parent: &span, message, "job recorded its outcome"),
            }
            Ok(outcome)
        }
        Err(e) => {
            let permanent = matches!(e, JobError::Permanent(_));
            let message = format!("{e:#}");
            let delay = retry_delay(ctx.settings.retry_base, job.attempts);
            Ok(
                match runs::fail(&ctx.db, &job, &message, delay, permanent).await? {
                    Failure::RetryAt(at) => {
                        tracing::warn!(parent: &span, error = message, retry_at = %at, "job failed; will retry");
                        Outcome::Retrying
                    }
                    Failure::GaveUp => {
                        tracing::error!(parent: &span, error = message, "job failed for good");
                        Outcome::Failed
                    }
                    Failure::ClaimLost => Outcome::Skipped,
                },
            )
        }
    }
}

/// Runs every job that is due, in this process, through [`execute`], until none is due (the
/// follow-up work each one records included); returns how many runs were made. Jobs scheduled
/// later (a webhook's next attempt) are left for their time. A worker consumes its queues
/// instead; this is how a test, or a one-off drain, gets due work done without one. Stops after
/// `max_runs`, so a job that makes itself due again cannot loop for ever.
pub async fn run_due(ctx: &JobContext, max_runs: usize) -> crate::Result<usize> {
    let mut runs = 0;
    loop {
        let ids = runs::due(&ctx.db, 100).await?;
        if ids.is_empty() || runs >= max_runs {
            return Ok(runs);
        }
        for id in ids {
            execute(ctx, id).await?;
            runs += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let base = Duration::from_secs(10);
        assert_eq!(retry_delay(base, 1), Duration::from_secs(10));
        assert_eq!(retry_delay(base, 2), Duration::from_secs(20));
        assert_eq!(retry_delay(base, 4), Duration::from_secs(80));
        assert_eq!(retry_delay(base, 40), Duration::from_secs(3600));
    }
}
