//! `crm_pull`: fetches snapshots from a connected CRM (see `crate::crm`) and stores them through
//! the same parse and storage path as a push. All the snapshots of one pull and their `ingest`
//! jobs are stored in one transaction with the job's success, so a pull stores all of them or
//! none; the ingest jobs are pushed after commit. Stored snapshots are upserts, so a repeated
//! pull changes nothing. A failed pull records one of the fixed messages of
//! [`crate::crm::PullError`] in the source's `last_error`.

use super::{FollowUps, JobContext, JobError};
use crate::crm::{self, PullError};
use crate::queue::Kind;
use crate::runs::{self, Claimed};
use crate::sync::{self, Parsed, Source};
use chrono::{Duration, NaiveDate, Utc};
use serde_json::{json, Value};
use uuid::Uuid;

/// Time past the request's limit for parsing and storing the answer.
const LEASE_MARGIN: std::time::Duration = std::time::Duration::from_secs(30);

pub async fn run(ctx: &JobContext, job: &Claimed) -> Result<FollowUps, JobError> {
    let source_id: Uuid = job
        .payload
        .get("source_id")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| JobError::Permanent("payload has no source_id".to_owned()))?;
    let Some(src) = sqlx::query!(
        "SELECT s.company_id, s.provider, s.base_url, s.credentials_sealed, c.time_zone,
                c.subscription_state, c.trial_ends_at
         FROM data_sources s JOIN companies c ON c.id = s.company_id WHERE s.id = $1",
        source_id
    )
    .fetch_optional(&ctx.db)
    .await?
    else {
        return skip(ctx, job, "the data source was deleted").await;
    };
    // A pull recorded before the subscription lapsed is not made after: the company has no
    // access to what it would store.
    let state =
        crate::tenancy::effective_state(&src.subscription_state, src.trial_ends_at, Utc::now());
    if !crate::tenancy::has_access(state) {
        return skip(ctx, job, &format!("the company's subscription is {state}")).await;
    }
    if src.provider != "generic_json" {
        return Err(JobError::Permanent(format!(
            "no adapter for provider {}",
            src.provider
        )));
    }
    let key = crate::crypto::open(
        &ctx.master_key,
        source_id.as_bytes(),
        &src.credentials_sealed,
    )
    .map_err(|e| JobError::Permanent(format!("credential: {e}")))?;
    let key = String::from_utf8(key)
        .map_err(|_| JobError::Permanent("credential is not text".to_owned()))?;
    // The nightly pull fetches yesterday in the company's time zone; a payload may name the date.
    let tz: chrono_tz::Tz = src.time_zone.parse().unwrap_or(chrono_tz::UTC);
    let date = job
        .payload
        .get("date")
        .and_then(Value::as_str)
        .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
        .unwrap_or_else(|| (Utc::now().with_timezone(&tz) - Duration::days(1)).date_naive());

    // Hold the job for the whole request (the CRM's time limit may pass the platform's lease),
    // so no other worker takes it over meanwhile. No transaction is open while the CRM is asked.
    let lease = ctx.crm.settings().timeout + LEASE_MARGIN;
    if !runs::extend_lease(&mut *ctx.db.acquire().await?, job, lease).await? {
        return Err(JobError::ClaimLost);
    }
    let parsed = match ctx.crm.fetch(&src.base_url, &key, date).await {
        Ok(snapshots) => parse_all(&snapshots),
        Err(e) => Err(e),
    };
    let parsed = match parsed {
        Ok(p) => p,
        Err(e) => return Err(record_failure(ctx, source_id, e).await?),
    };

    let mut tx = ctx.db.begin().await?;
    let mut follow_ups = Vec::with_capacity(parsed.len());
    for (index, (p, raw)) in parsed.iter().enumerate() {
        match sync::store(&mut tx, src.company_id, &p.payload, raw, Source::Crm).await {
            Ok(outcome) => follow_ups.push((Kind::Ingest, outcome.job_id)),
            Err(crate::Error::Database(e)) => return Err(e.into()),
            Err(other) => {
                drop(tx);
                let failure = match other {
                    crate::Error::Invalid(v) => crm::snapshot_error(index, &v),
                    _ => PullError::Snapshot {
                        index,
                        reason: "conflicts with stored data".to_owned(),
                    },
                };
                return Err(record_failure(ctx, source_id, failure).await?);
            }
        }
    }
    sqlx::query!(
        "UPDATE data_sources SET last_pull_at = now(), last_pull_status = 'succeeded', last_error = NULL
         WHERE id = $1",
        source_id
    )
    .execute(&mut *tx)
    .await?;
    // What the forgiving read left out, in the fixed words of pull errors (never the CRM's
    // own text): the pull still succeeds, and its job's result says what was not taken.
    let left_out: Vec<String> = parsed
        .iter()
        .enumerate()
        .flat_map(|(index, (p, _))| {
            p.left_out
                .iter()
                .map(move |e| crm::snapshot_error(index, e).to_string())
        })
        .collect();
    let result = json!({
        "date": date,
        "snapshots": parsed.len(),
        "left_out_count": left_out.len(),
        "left_out": left_out.iter().take(20).collect::<Vec<_>>(),
    });
    if !runs::succeed(&mut tx, job, &result).await? {
        return Err(JobError::ClaimLost);
    }
    tx.commit().await?;
    Ok(follow_ups)
}

/// Checks every snapshot before anything is stored.
fn parse_all(snapshots: &[Value]) -> Result<Vec<(Parsed, String)>, PullError> {
    let today = Utc::now().date_naive();
    snapshots
        .iter()
        .enumerate()
        .map(|(index, s)| {
            let raw = s.to_string();
            sync::parse(raw.as_bytes(), today)
                .map(|p| (p, raw))
                .map_err(|e| crm::snapshot_error(index, &e))
        })
        .collect()
}

/// Records the failed pull on its source and gives the job's error, with the same text.
async fn record_failure(
    ctx: &JobContext,
    source_id: Uuid,
    failure: PullError,
) -> Result<JobError, JobError> {
    let message = failure.to_string();
    sqlx::query!(
        "UPDATE data_sources SET last_pull_at = now(), last_pull_status = 'failed', last_error = $2
         WHERE id = $1",
        source_id,
        message
    )
    .execute(&ctx.db)
    .await?;
    Ok(if failure.retryable() {
        JobError::Retryable(anyhow::anyhow!(message))
    } else {
        JobError::Permanent(message)
    })
}

async fn skip(ctx: &JobContext, job: &Claimed, why: &str) -> Result<FollowUps, JobError> {
    let mut tx = ctx.db.begin().await?;
    if !runs::succeed(&mut tx, job, &json!({ "skipped": why })).await? {
        return Err(JobError::ClaimLost);
    }
    tx.commit().await?;
    Ok(vec![])
}
