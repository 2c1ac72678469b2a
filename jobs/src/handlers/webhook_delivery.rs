//! `webhook_delivery`: one attempt of a signed webhook delivery per claim.
//!
//! The delivery row is the truth of its schedule: `attempts` (finished attempts) and
//! `next_attempt_at`. The job row only wakes the delivery up: after a failed attempt it goes back
//! to `queued` with `run_at` at the next attempt (the sweeper pushes it when due), after the last
//! one it ends `failed`, after a 2xx `succeeded`. An attempt row is written before the request,
//! so an attempt cut off by a dying worker is counted (and logged as interrupted) by the worker
//! that takes the job over, and the schedule goes on from it.

use super::{FollowUps, JobContext, JobError, Outcome};
use crate::crypto;
use crate::payload;
use crate::runs::{self, Claimed};
use crate::webhooks::attempts;
use crate::webhooks::client::{AttemptResult, Outgoing};
use chrono::{DateTime, Utc};
use secrecy::SecretString;
use serde_json::{json, Value};
use std::time::Duration;
use uuid::Uuid;

/// Lease of a job while its request is in flight: the request's timeout plus this margin.
const LEASE_MARGIN: Duration = Duration::from_secs(30);

pub async fn run(
    ctx: &JobContext,
    job: &Claimed,
    p: payload::WebhookDelivery,
) -> Result<FollowUps, JobError> {
    let delivery_id = p.delivery_id;
    let Some(d) = attempts::pending(&ctx.db, delivery_id).await? else {
        return finish(
            ctx,
            job,
            json!({ "skipped": "the delivery no longer exists" }),
        )
        .await;
    };
    if d.status == "complete" || d.status == "failed" {
        return finish(
            ctx,
            job,
            json!({ "skipped": "the delivery is finished", "status": d.status }),
        )
        .await;
    }
    let Some(sealed) = d.secret_sealed else {
        return close(ctx, job, delivery_id, "the subscription was deleted").await;
    };
    // An attempt a dead worker started and never finished counts as a failed attempt.
    if let Some((number, started_at)) = attempts::unfinished(&ctx.db, delivery_id).await? {
        let result = AttemptResult {
            delivered: false,
            http_status: None,
            error: Some(
                "interrupted: the worker making this attempt stopped before it finished \
                 (the receiver may have received it; the delivery id tells a repeat)"
                    .to_owned(),
            ),
            response_excerpt: None,
            duration: Duration::ZERO,
        };
        let attempt = Attempt {
            delivery_id,
            number,
            max_attempts: d.max_attempts,
            interrupted_at: Some(started_at),
        };
        return conclude(ctx, job, &attempt, &result).await;
    }
    if d.early {
        // Woken before the delivery's next attempt is due (the job row was changed by hand,
        // say): wait for it again without an attempt.
        let at = d.next_attempt_at.unwrap_or_else(Utc::now);
        let mut tx = ctx.db.begin().await?;
        if !runs::reschedule(&mut tx, job, at, "waiting for the next attempt").await? {
            return Err(JobError::ClaimLost);
        }
        tx.commit().await?;
        return Err(JobError::Recorded {
            outcome: Outcome::Skipped,
            message: format!("next attempt at {at}"),
        });
    }
    let secret = match crypto::open(&ctx.master_key, d.subscription_id.as_bytes(), &sealed)
        .ok()
        .and_then(|s| String::from_utf8(s).ok())
    {
        Some(s) => SecretString::from(s),
        None => {
            return close(
                ctx,
                job,
                delivery_id,
                "the subscription's secret does not open with the master key",
            )
            .await
        }
    };
    let number = d.attempts + 1;
    // Mark the attempt started (and hold the job for the whole request) before sending.
    let lease = ctx.webhooks.settings().timeout + LEASE_MARGIN;
    let mut tx = ctx.db.begin().await?;
    if !runs::extend_lease(&mut tx, job, lease).await? {
        return Err(JobError::ClaimLost);
    }
    attempts::start_attempt(&mut tx, delivery_id, number, &job.worker).await?;
    tx.commit().await?;

    let result = ctx
        .webhooks
        .send(&Outgoing {
            url: &d.url,
            event: &d.event,
            delivery_id,
            body: &d.body,
            secret: &secret,
        })
        .await;
    let attempt = Attempt {
        delivery_id,
        number,
        max_attempts: d.max_attempts,
        interrupted_at: None,
    };
    conclude_sent(ctx, job, &attempt, &result).await
}

/// How long the outcome of a sent attempt waits for a database that is away (a restart): well
/// within the lease margin the job holds after its request.
const RECORD_PATIENCE: Duration = Duration::from_secs(20);

/// Records the outcome of an attempt that was sent, waiting out a database that is away for a
/// moment: otherwise the job would be taken over when its lease expires and the receiver,
/// which may have accepted the attempt, would get the delivery again.
async fn conclude_sent(
    ctx: &JobContext,
    job: &Claimed,
    attempt: &Attempt,
    result: &AttemptResult,
) -> Result<FollowUps, JobError> {
    let deadline = tokio::time::Instant::now() + RECORD_PATIENCE;
    loop {
        match conclude(ctx, job, attempt, result).await {
            Err(JobError::Retryable(e))
                if tokio::time::Instant::now() < deadline
                    && e.downcast_ref::<sqlx::Error>()
                        .is_some_and(crate::error::is_unavailable) =>
            {
                tracing::warn!(delivery_id = %attempt.delivery_id, error = %e, "the database is away; recording the attempt again");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            other => return other,
        }
    }
}

struct Attempt {
    delivery_id: Uuid,
    number: i32,
    max_attempts: i32,
    /// When the attempt was an interrupted one: when it started (its wait counts from then).
    interrupted_at: Option<DateTime<Utc>>,
}

/// Records an attempt's outcome, the delivery's new state and the job's, in one transaction.
async fn conclude(
    ctx: &JobContext,
    job: &Claimed,
    attempt: &Attempt,
    result: &AttemptResult,
) -> Result<FollowUps, JobError> {
    let http_status = result.http_status.map(i32::from);
    // An interrupted attempt's duration is unknown.
    let duration_ms = attempt
        .interrupted_at
        .is_none()
        .then(|| i32::try_from(result.duration.as_millis()).unwrap_or(i32::MAX));
    let error: Option<String> = result
        .error
        .as_ref()
        .map(|e| e.chars().filter(|c| *c != '\0').take(2000).collect());
    let finished = attempts::Finished {
        delivery_id: attempt.delivery_id,
        number: attempt.number,
        duration_ms,
        http_status,
        error: error.as_deref(),
        response_excerpt: result.response_excerpt.as_deref(),
    };
    let mut tx = ctx.db.begin().await?;
    attempts::finish_attempt(&mut tx, &finished).await?;
    let span = tracing::Span::current();
    if result.delivered {
        let open =
            attempts::mark_complete(&mut tx, attempt.delivery_id, attempt.number, http_status)
                .await?;
        let outcome = json!({
            "delivery_id": attempt.delivery_id,
            "attempt": attempt.number,
            "http_status": http_status,
            "delivery_open": open,
        });
        super::commit_success(tx, job, &outcome).await?;
        tracing::info!(parent: &span, delivery_id = %attempt.delivery_id, attempt = attempt.number, http_status, "webhook delivered");
        return Ok(FollowUps::none());
    }
    let error = error
        .clone()
        .unwrap_or_else(|| "the attempt failed".to_owned());
    let finished = attempts::Finished {
        error: Some(&error),
        ..finished
    };
    let wait = (attempt.number < attempt.max_attempts)
        .then(|| ctx.webhooks.settings().wait_after(attempt.number))
        .flatten();
    match wait {
        Some(wait) => {
            // The wait counts from the end of the attempt (from the start of an interrupted one,
            // whose end is unknown), never before now.
            let next =
                attempts::mark_retrying(&mut tx, &finished, attempt.interrupted_at, wait).await?;
            let Some(next) = next else {
                // Closed meanwhile (its subscription was deleted): nothing more to send.
                let outcome = json!({ "skipped": "the delivery was closed during the attempt" });
                super::commit_success(tx, job, &outcome).await?;
                return Ok(FollowUps::none());
            };
            if !runs::reschedule(&mut tx, job, next, &error).await? {
                return Err(JobError::ClaimLost);
            }
            tx.commit().await?;
            Err(JobError::Recorded {
                outcome: Outcome::Retrying,
                message: format!(
                    "webhook attempt {} of {} failed ({error}); next attempt at {next}",
                    attempt.number, attempt.max_attempts
                ),
            })
        }
        None => {
            attempts::mark_failed(&mut tx, &finished).await?;
            if !runs::give_up(&mut tx, job, &error).await? {
                return Err(JobError::ClaimLost);
            }
            tx.commit().await?;
            Err(JobError::Recorded {
                outcome: Outcome::Failed,
                message: format!(
                    "webhook delivery failed after {} attempts ({error})",
                    attempt.number
                ),
            })
        }
    }
}

/// Closes a delivery that cannot be sent any more as failed, and finishes its job.
async fn close(
    ctx: &JobContext,
    job: &Claimed,
    delivery_id: Uuid,
    why: &str,
) -> Result<FollowUps, JobError> {
    let mut tx = ctx.db.begin().await?;
    attempts::close(&mut tx, delivery_id, why).await?;
    super::commit_success(tx, job, &json!({ "skipped": why })).await?;
    Ok(FollowUps::none())
}

async fn finish(ctx: &JobContext, job: &Claimed, result: Value) -> Result<FollowUps, JobError> {
    let tx = ctx.db.begin().await?;
    super::commit_success(tx, job, &result).await?;
    Ok(FollowUps::none())
}
