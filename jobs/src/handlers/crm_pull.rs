//! `crm_pull`: fetches snapshots from a connected CRM and stores each through the same parse and
//! ingest path as a push. The `generic_json` adapter GETs `{base_url}/snapshots?date=YYYY-MM-DD`
//! with `Authorization: Bearer <key>` and accepts a JSON array of sync payloads or
//! `{"snapshots": [...]}`. Stored snapshots are upserts, so a repeated pull changes nothing.

use super::{FollowUps, JobContext, JobError};
use crate::queue::Kind;
use crate::runs::{self, Claimed};
use crate::sync::{self, Source};
use chrono::{Duration, NaiveDate, Utc};
use serde_json::{json, Value};
use uuid::Uuid;

/// Most snapshots accepted from one pull.
const MAX_SNAPSHOTS: usize = 10_000;

pub async fn run(ctx: &JobContext, job: &Claimed) -> Result<FollowUps, JobError> {
    let source_id: Uuid = job
        .payload
        .get("source_id")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| JobError::Permanent("payload has no source_id".to_owned()))?;
    let Some(src) = sqlx::query!(
        "SELECT s.company_id, s.provider, s.base_url, s.credentials_sealed, c.time_zone
         FROM data_sources s JOIN companies c ON c.id = s.company_id WHERE s.id = $1",
        source_id
    )
    .fetch_optional(&ctx.db)
    .await?
    else {
        return finish(
            ctx,
            job,
            json!({ "skipped": "the data source was deleted" }),
            vec![],
        )
        .await;
    };
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

    let outcome = pull(ctx, &src.base_url, &key, date, src.company_id).await;
    let (status, error) = match &outcome {
        Ok(_) => ("succeeded", None),
        Err(e) => ("failed", Some(e.to_string())),
    };
    sqlx::query!(
        "UPDATE data_sources SET last_pull_at = now(), last_pull_status = $2, last_error = $3 WHERE id = $1",
        source_id,
        status,
        error
    )
    .execute(&ctx.db)
    .await?;
    let (stored, follow_ups) = outcome?;
    finish(
        ctx,
        job,
        json!({ "date": date, "snapshots": stored }),
        follow_ups,
    )
    .await
}

async fn pull(
    ctx: &JobContext,
    base_url: &str,
    key: &str,
    date: NaiveDate,
    company_id: Uuid,
) -> Result<(usize, FollowUps), JobError> {
    let url = format!("{base_url}/snapshots?date={date}");
    let response = ctx
        .http
        .get(&url)
        .bearer_auth(key)
        .send()
        .await
        .map_err(|e| JobError::Retryable(anyhow::anyhow!("CRM request failed: {e}")))?;
    let status = response.status();
    if status.as_u16() == 401 || status.as_u16() == 403 {
        return Err(JobError::Permanent(format!(
            "the CRM refused the credential ({status})"
        )));
    }
    if !status.is_success() {
        return Err(JobError::Retryable(anyhow::anyhow!(
            "the CRM answered {status}"
        )));
    }
    let body: Value = response
        .json()
        .await
        .map_err(|e| JobError::Permanent(format!("the CRM's answer is not JSON: {e}")))?;
    let snapshots = match body {
        Value::Array(items) => items,
        Value::Object(mut o) => match o.remove("snapshots") {
            Some(Value::Array(items)) => items,
            _ => {
                return Err(JobError::Permanent(
                    "the CRM's answer has no snapshots array".to_owned(),
                ))
            }
        },
        _ => {
            return Err(JobError::Permanent(
                "the CRM's answer is not a list of snapshots".to_owned(),
            ))
        }
    };
    if snapshots.len() > MAX_SNAPSHOTS {
        return Err(JobError::Permanent(format!(
            "more than {MAX_SNAPSHOTS} snapshots in one pull"
        )));
    }
    let today = Utc::now().date_naive();
    // Check every snapshot first: one bad snapshot stores nothing, as with an upload.
    let mut parsed = Vec::with_capacity(snapshots.len());
    for (i, s) in snapshots.iter().enumerate() {
        let raw = s.to_string();
        let p = sync::parse(raw.as_bytes(), today)
            .map_err(|e| JobError::Permanent(format!("snapshot {i}: {e}")))?;
        parsed.push((p, raw));
    }
    let mut follow_ups = Vec::new();
    for (p, raw) in &parsed {
        let outcome = sync::ingest(&ctx.db, company_id, &p.payload, raw, Source::Crm).await?;
        follow_ups.push((Kind::Ingest, outcome.job_id));
    }
    Ok((parsed.len(), follow_ups))
}

async fn finish(
    ctx: &JobContext,
    job: &Claimed,
    result: Value,
    follow_ups: FollowUps,
) -> Result<FollowUps, JobError> {
    let mut tx = ctx.db.begin().await?;
    if !runs::succeed(&mut tx, job, &result).await? {
        return Err(JobError::ClaimLost);
    }
    tx.commit().await?;
    Ok(follow_ups)
}
