//! `crm_pull`: fetches snapshots from a connected CRM through its provider's adapter (see
//! `crate::crm::provider`; this handler names no provider) and stores them through the same
//! parse and storage path as a push. All the snapshots of one pull (every date of a backfill)
//! and their `ingest` jobs are stored in one transaction with the job's success and the pull's
//! row, so a pull stores all of them or none; the ingest jobs are pushed after commit. Stored
//! snapshots are upserts, so a repeated pull changes nothing. A failed pull records one of the
//! fixed messages of [`crate::crm::PullError`] on its row and in the source's `last_error`.

use super::{FollowUps, JobContext, JobError};
use crate::crm::provider::{self, Adapter};
use crate::crm::{self, PullError};
use crate::data_sources::{pulls, ForPull};
use crate::payload;
use crate::queue::Kind;
use crate::runs::{self, Claimed};
use crate::sync::{self, Source};
use chrono::{Duration, NaiveDate, Utc};
use domain::ids::CompanyId;
use domain::sync::Parsed;
use serde_json::{json, Value};
use sqlx::PgConnection;
use std::collections::HashSet;
use uuid::Uuid;

/// Time past the pull's limit for parsing and storing the answers.
const LEASE_MARGIN: std::time::Duration = std::time::Duration::from_secs(30);
/// Warnings kept on a pull's row (the count is kept in full).
const WARNINGS_KEPT: usize = 50;

pub async fn run(
    ctx: &JobContext,
    job: &Claimed,
    p: payload::CrmPull,
) -> Result<FollowUps, JobError> {
    let source_id = p.source_id;
    let Some(src) = crate::data_sources::for_pull(&ctx.db, source_id).await? else {
        return skip(ctx, job, None, "the data source was deleted").await;
    };
    let company = crate::tenancy::company(&ctx.db, src.company_id.into()).await?;
    // The dates: those the request named, else yesterday in the company's time zone.
    let tz: chrono_tz::Tz = company.time_zone.parse().unwrap_or(chrono_tz::UTC);
    let yesterday = (Utc::now().with_timezone(&tz) - Duration::days(1)).date_naive();
    let from = p.from.unwrap_or(yesterday);
    let to = p.to.unwrap_or(from).max(from);
    let dates: Vec<NaiveDate> = from.iter_days().take_while(|d| *d <= to).collect();
    let pull_id = pulls::start(
        &ctx.db,
        &pulls::Start {
            company_id: src.company_id.into(),
            source_id,
            job_id: job.id,
            trigger: p.trigger.as_str(),
            from,
            to,
        },
    )
    .await?;
    let pull = Pull {
        source_id,
        pull_id,
        from,
        to,
    };

    // A pull recorded before the subscription lapsed is not made after: the company has no
    // access to what it would store.
    let state = crate::tenancy::effective_state(
        &company.subscription_state,
        company.trial_ends_at,
        Utc::now(),
    );
    if !crate::tenancy::has_access(state) {
        let why = format!("the company's subscription is {state}");
        return skip(ctx, job, Some(pull_id), &why).await;
    }
    let (adapter, connection) = connect(ctx, &pull, &src).await?;
    let (parsed, warnings) = fetch(ctx, job, &pull, adapter, &connection, &dates).await?;

    let mut tx = ctx.db.begin().await?;
    let stored = match store_all(&mut tx, src.company_id.into(), &parsed).await? {
        Ok(stored) => stored,
        Err(failure) => {
            drop(tx);
            return Err(failed(ctx, source_id, pull_id, failure).await?);
        }
    };
    succeed(tx, job, &pull, &parsed, &warnings, stored).await
}

/// The pull being made: its data source, its row and the dates it asks for.
struct Pull {
    source_id: Uuid,
    pull_id: Uuid,
    from: NaiveDate,
    to: NaiveDate,
}

/// The provider's adapter and where and as whom it asks; a source that cannot be asked fails
/// the pull for good.
async fn connect(
    ctx: &JobContext,
    pull: &Pull,
    src: &ForPull,
) -> Result<(&'static dyn Adapter, provider::Connection), JobError> {
    let (source_id, pull_id) = (pull.source_id, pull.pull_id);
    let Some(adapter) = provider::find(&src.provider).and_then(|p| p.adapter) else {
        let failure = format!("no adapter for provider {}", src.provider);
        pulls::failed(&ctx.db, source_id, pull_id, &failure).await?;
        return Err(JobError::Permanent(failure));
    };
    let credential = match crate::data_sources::open_credential(
        &ctx.master_key,
        source_id,
        &src.provider,
        &src.credentials_sealed,
    ) {
        Ok(c) => c,
        Err(e) => {
            let failure = "the stored credential could not be opened; enter it again";
            pulls::failed(&ctx.db, source_id, pull_id, failure).await?;
            return Err(JobError::Permanent(e));
        }
    };
    let connection = provider::Connection {
        base_url: src.base_url.clone(),
        credential,
        account_id: src.account_id.clone(),
    };
    Ok((adapter, connection))
}

/// Asks the CRM for the dates' snapshots and checks them all; the parsed snapshots with their
/// bodies, and the adapter's warnings. A failure is recorded on the pull.
async fn fetch(
    ctx: &JobContext,
    job: &Claimed,
    pull: &Pull,
    adapter: &dyn Adapter,
    connection: &provider::Connection,
    dates: &[NaiveDate],
) -> Result<(Vec<(Parsed, String)>, Vec<String>), JobError> {
    // Hold the job for the whole pull (the CRM's time may pass the platform's lease), so no
    // other worker takes it over meanwhile. No transaction is open while the CRM is asked.
    let lease = crm::PULL_BUDGET + ctx.crm.settings().timeout + LEASE_MARGIN;
    if !runs::extend_lease(&mut *ctx.db.acquire().await?, job, lease).await? {
        return Err(JobError::ClaimLost);
    }
    let fetched = adapter
        .fetch(&mut ctx.crm.session(), connection, dates)
        .await;
    match fetched.and_then(|f| Ok((parse_all(&f.snapshots)?, f.warnings))) {
        Ok(p) => Ok(p),
        Err(e) => Err(failed(ctx, pull.source_id, pull.pull_id, e).await?),
    }
}

/// What storing a pull's snapshots did.
struct Stored {
    follow_ups: FollowUps,
    created: i32,
    updated: i32,
    facilities_created: HashSet<Uuid>,
    facilities_matched: HashSet<Uuid>,
}

/// Stores the snapshots on the pull's transaction. A snapshot the service cannot store fails
/// the pull (the inner error: the same data would fail again); a database error is the job's.
async fn store_all(
    conn: &mut PgConnection,
    company_id: CompanyId,
    parsed: &[(Parsed, String)],
) -> Result<Result<Stored, PullError>, JobError> {
    let mut s = Stored {
        follow_ups: FollowUps::none(),
        created: 0,
        updated: 0,
        facilities_created: HashSet::new(),
        facilities_matched: HashSet::new(),
    };
    for (index, (p, raw)) in parsed.iter().enumerate() {
        match sync::store(&mut *conn, company_id, &p.payload, raw, Source::Crm).await {
            Ok(outcome) => {
                s.follow_ups.add(Kind::Ingest, outcome.job_id);
                if outcome.idempotent == "created" {
                    s.created += 1;
                } else {
                    s.updated += 1;
                }
                if outcome.facility.created {
                    s.facilities_created.insert(outcome.facility.id);
                } else {
                    s.facilities_matched.insert(outcome.facility.id);
                }
            }
            Err(crate::Error::Database(e)) if !crate::error::is_out_of_range(&e) => {
                return Err(e.into())
            }
            Err(other) => {
                return Ok(Err(match other {
                    crate::Error::Invalid(v) => crm::snapshot_error(index, &v),
                    // The same data would fail again: the pull fails now rather than retry.
                    crate::Error::Database(_) => PullError::Snapshot {
                        index,
                        reason: "has a value outside the range the service stores".to_owned(),
                    },
                    _ => PullError::Snapshot {
                        index,
                        reason: "conflicts with stored data".to_owned(),
                    },
                }));
            }
        }
    }
    // A facility created by one date of a backfill is matched by the next: it counts once.
    let created = &s.facilities_created;
    s.facilities_matched.retain(|id| !created.contains(id));
    Ok(Ok(s))
}

/// Records the pull's success with its counts and warnings, and the job's, on the pull's
/// transaction; the ingest jobs to push.
async fn succeed(
    mut tx: sqlx::Transaction<'_, sqlx::Postgres>,
    job: &Claimed,
    pull: &Pull,
    parsed: &[(Parsed, String)],
    warnings: &[String],
    stored: Stored,
) -> Result<FollowUps, JobError> {
    // What the adapter could not map and what the forgiving read left out, in the fixed words
    // of pull errors (never the CRM's own text): the pull still succeeds and says so.
    let left_out: Vec<String> = parsed
        .iter()
        .enumerate()
        .flat_map(|(index, (p, _))| {
            p.left_out
                .iter()
                .map(move |e| crm::snapshot_error(index, e).to_string())
        })
        .collect();
    let kept: Vec<&String> = warnings
        .iter()
        .chain(&left_out)
        .take(WARNINGS_KEPT)
        .collect();
    let counts = pulls::Counts {
        snapshots_created: stored.created,
        snapshots_updated: stored.updated,
        facilities_created: stored.facilities_created.len(),
        facilities_matched: stored.facilities_matched.len(),
        warnings: &kept,
    };
    pulls::succeeded(&mut tx, pull.source_id, pull.pull_id, &counts).await?;
    let result = json!({
        "pull_id": pull.pull_id,
        "date": pull.from,
        "from": pull.from,
        "to": pull.to,
        "snapshots": parsed.len(),
        "unmapped": warnings.iter().take(WARNINGS_KEPT).collect::<Vec<_>>(),
        "left_out_count": left_out.len(),
        "left_out": left_out.iter().take(20).collect::<Vec<_>>(),
    });
    super::commit_success(tx, job, &result).await?;
    Ok(stored.follow_ups)
}

/// Checks every snapshot before anything is stored.
fn parse_all(snapshots: &[Value]) -> Result<Vec<(Parsed, String)>, PullError> {
    let today = Utc::now().date_naive();
    snapshots
        .iter()
        .enumerate()
        .map(|(index, s)| {
            let raw = s.to_string();
            domain::sync::parse(raw.as_bytes(), today)
                .map(|p| (p, raw))
                .map_err(|e| crm::snapshot_error(index, &e))
        })
        .collect()
}

/// Records a failed pull and gives the job's error, with the same text.
async fn failed(
    ctx: &JobContext,
    source_id: Uuid,
    pull_id: Uuid,
    failure: PullError,
) -> Result<JobError, JobError> {
    let message = failure.to_string();
    pulls::failed(&ctx.db, source_id, pull_id, &message).await?;
    Ok(if failure.retryable() {
        JobError::Retryable(anyhow::anyhow!(message))
    } else {
        JobError::Permanent(message)
    })
}

async fn skip(
    ctx: &JobContext,
    job: &Claimed,
    pull_id: Option<Uuid>,
    why: &str,
) -> Result<FollowUps, JobError> {
    let mut tx = ctx.db.begin().await?;
    if let Some(pull_id) = pull_id {
        pulls::skipped(&mut tx, pull_id, why).await?;
    }
    super::commit_success(tx, job, &json!({ "skipped": why })).await?;
    Ok(FollowUps::none())
}
