//! Uploads of unit rates or competitor rates (CSV or JSON). The use cases are [`collect`] (read
//! and check every row, writing nothing and holding no database connection while the body
//! arrives) and [`store`] (write a checked upload in one transaction). `read` streams and
//! checks the rows, `merge` merges uploaded unit types into a stored day, and `store` (the
//! module) writes them; row parsing is `domain::upload`. The API's upload route and the
//! dashboard's upload page both call these.

pub mod merge;
pub mod read;
pub mod store;

use crate::error::Error;
use bytes::Bytes;
use chrono::{NaiveDate, Utc};
use domain::ids::{CompanyId, FacilityId};
use domain::upload::UploadKind;
use futures::Stream;
pub use read::{Collected, Fatal};
use sqlx::PgPool;
use uuid::Uuid;

/// One upload, as the API and the dashboard's upload page both describe it.
pub struct Request<'a> {
    pub company_id: CompanyId,
    pub facility_id: FacilityId,
    /// `unit_rates`, `competitor_rates`, or `None` to detect it from the columns.
    pub kind: Option<&'a str>,
    /// The date of rows that carry none.
    pub date: Option<&'a str>,
    pub content_type: &'a str,
    pub declared_length: Option<u64>,
}

/// Why an upload was not read: the facility (or the database) said no, or the upload itself.
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    #[error(transparent)]
    Data(#[from] Error),
    #[error(transparent)]
    Upload(#[from] Fatal),
}

/// Reads and checks every row of an upload, writing nothing; a missing or another company's
/// facility is a 404 before any of the body is read. Rows that fail their checks are in the
/// answer (`error_count`, `errors`): nothing may be written then.
pub async fn collect<S>(pool: &PgPool, r: &Request<'_>, body: S) -> Result<Collected, CollectError>
where
    S: Stream<Item = std::io::Result<Bytes>> + Send + Unpin + 'static,
{
    crate::facilities::ensure_owned(pool, r.company_id, r.facility_id).await?;
    let kind = r
        .kind
        .map(|k| {
            UploadKind::parse(k).ok_or_else(|| {
                Fatal::Invalid(
                    "query parameter kind: must be unit_rates, competitor_rates or rent_roll"
                        .into(),
                )
            })
        })
        .transpose()?;
    let date = r
        .date
        .map(|d| {
            domain::sync::payload::SnapshotDate::parse(d)
                .map(|d| d.0)
                .map_err(|m| Fatal::Invalid(format!("query parameter date: {m}")))
        })
        .transpose()?;
    let content_type = r
        .content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let today = Utc::now().date_naive();
    let cancel = read::Cancel::default();
    let collected = match content_type.as_str() {
        "text/csv" | "application/csv" | "text/plain" => {
            if r.declared_length
                .is_some_and(|n| n > read::CSV_MAX_BYTES as u64)
            {
                return Err(Fatal::TooLarge(format!(
                    "a CSV upload may be at most {} MiB",
                    read::CSV_MAX_BYTES / (1024 * 1024)
                ))
                .into());
            }
            read::csv(body, kind, date, today, &cancel).await?
        }
        "application/json" => read::json(body, kind, date, today).await?,
        other => {
            return Err(Fatal::UnsupportedMediaType(format!(
                "Content-Type must be text/csv or application/json, got '{}'",
                if other.is_empty() { "none" } else { other }
            ))
            .into())
        }
    };
    if collected.rows == 0 {
        return Err(
            Fatal::Invalid("the upload has no rows (only a header, or nothing)".into()).into(),
        );
    }
    Ok(collected)
}

/// What [`store`] wrote.
pub enum Stored {
    /// Competitor rates: rows read, observations added and replaced.
    Competitors {
        rows: u64,
        inserted: u64,
        updated: u64,
        warnings: Vec<String>,
    },
    /// Unit rates: one snapshot per date of the rows, each with its `ingest` job.
    Units {
        rows: u64,
        days: Vec<store::DayOutcome>,
        warnings: Vec<String>,
    },
    /// A rent roll: per date of the rows, the day's snapshot with the roll (merged into the day
    /// it already has), each with its `ingest` job and what the roll changed.
    Rolls {
        rows: u64,
        days: Vec<store::DayOutcome>,
        warnings: Vec<String>,
    },
}

impl Stored {
    /// The `ingest` jobs recorded with the upload, to push once it has returned.
    pub fn ingest_jobs(&self) -> Vec<Uuid> {
        match self {
            Self::Competitors { .. } => Vec::new(),
            Self::Units { days, .. } | Self::Rolls { days, .. } => {
                days.iter().map(|d| d.job_id).collect()
            }
        }
    }
}

/// Writes an upload whose every row passed [`collect`], all of it in one transaction: the
/// competitor rates, or each date's rows as that day's snapshot (merged into a stored day) with
/// its `ingest` job.
/// Recorded as `upload.create` with its kind and counts; the ingest jobs are the ones to push.
pub async fn store(
    pool: &PgPool,
    who: &crate::door::Who,
    facility_id: FacilityId,
    collected: Collected,
    today: NaiveDate,
) -> crate::Result<crate::door::Committed<Stored>> {
    let company_id = who.company;
    let kind = collected.kind;
    let mut tx = pool.begin().await?;
    // The facility's row first, as every writer of its snapshots takes it: the days' records
    // are locked after it (`store`), so an upload and a push of one day wait on each other
    // instead of deadlocking (each holding what the other takes next).
    crate::sync::write::lock_facility(&mut tx, facility_id.uuid()).await?;
    let stored = match collected.kind {
        UploadKind::CompetitorRates => {
            let (inserted, updated) = crate::competitors::upsert(
                &mut tx,
                company_id,
                facility_id,
                "upload",
                &collected.competitors,
            )
            .await?;
            Stored::Competitors {
                rows: collected.rows,
                inserted,
                updated,
                warnings: collected.warnings,
            }
        }
        UploadKind::UnitRates => {
            let days = store::unit_rates(&mut tx, company_id, facility_id, &collected.units, today)
                .await?;
            Stored::Units {
                rows: collected.rows,
                days,
                warnings: collected.warnings,
            }
        }
        UploadKind::RentRoll => {
            let days = store::rent_rolls(&mut tx, company_id, facility_id, &collected.rolls, today)
                .await?;
            Stored::Rolls {
                rows: collected.rows,
                days,
                warnings: collected.warnings,
            }
        }
    };
    let rows = match &stored {
        Stored::Competitors { rows, .. }
        | Stored::Units { rows, .. }
        | Stored::Rolls { rows, .. } => *rows,
    };
    let change = crate::audit::Change::new("upload.create")
        .target("facility", facility_id)
        .facility(facility_id.uuid())
        .values(
            None,
            Some(serde_json::json!({ "kind": kind.as_str(), "rows": rows })),
        );
    let jobs = crate::door::Jobs::of(crate::queue::Kind::Ingest, stored.ingest_jobs());
    crate::door::commit(tx, who, change, stored, jobs).await
}
