//! Writing an upload whose every row has been checked, on the caller's one transaction: all of
//! its snapshots and their ingest jobs (or all of its competitor rates), or nothing. A retry
//! after a failure therefore finds nothing half-done to duplicate.

use super::merge::{self, MergeReport};
use crate::error::{Error, Result, ValidationError};
use crate::sync::{self, Source};
use chrono::NaiveDate;
use domain::ids::{CompanyId, FacilityId};
use domain::upload::{RollRow, UnitRateRow};
use serde::Serialize;
use sqlx::PgConnection;
use std::collections::BTreeMap;
use uuid::Uuid;

/// What an upload did to one day.
#[derive(Clone, Debug, Serialize)]
pub struct DayOutcome {
    pub date: NaiveDate,
    pub sync_id: Uuid,
    /// The day had a record (from a push, a CRM pull or an earlier upload) and the upload was
    /// merged into it; `false`: the upload created the day.
    pub merged: bool,
    /// `created` or `updated`, as a push answers.
    pub idempotent: &'static str,
    pub unit_types: MergeReport,
    /// The `ingest` job recorded with the snapshot; push it once committed.
    pub job_id: Uuid,
    /// What the day's roll changed (a rent-roll upload).
    pub rent_roll: Option<crate::rent_roll::RollOutcome>,
}

/// Stores each date's rows as that day's snapshot, merged into the record the day already has,
/// in date order (the analytics triggers lock per company and day in that order too).
pub(crate) async fn unit_rates(
    tx: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    days: &BTreeMap<NaiveDate, Vec<UnitRateRow>>,
    today: NaiveDate,
) -> Result<Vec<DayOutcome>> {
    let mut out = Vec::with_capacity(days.len());
    for (date, rows) in days {
        out.push(one_day(tx, company_id, facility_id, *date, rows, today).await?);
    }
    Ok(out)
}

async fn one_day(
    tx: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    date: NaiveDate,
    rows: &[UnitRateRow],
    today: NaiveDate,
) -> Result<DayOutcome> {
    let in_rows = |e: ValidationError| {
        Error::Invalid(ValidationError::new(
            format!("rows dated {date} (lines {})", lines(rows)),
            e.to_string(),
        ))
    };
    let uploaded_raw = domain::upload::unit_rates_payload(facility_id.uuid(), date, rows);
    let uploaded = domain::sync::parse_exact(uploaded_raw.to_string().as_bytes(), today)
        .map_err(in_rows)?
        .payload;
    let stored_raw = lock_day(tx, company_id, facility_id, date).await?;
    let (raw, mut payload, report) = match &stored_raw {
        None => (
            uploaded_raw.to_string(),
            uploaded.clone(),
            merge::new_day(&uploaded),
        ),
        Some(stored_raw) => {
            // The day as it was read: what could not be read then is left out of the merge.
            let stored =
                domain::sync::parse(stored_raw.to_string().as_bytes(), today).map_err(|e| {
                    Error::Conflict(format!(
                        "the stored record of {date} cannot be merged with the upload ({e}); \
                     push that day again first"
                    ))
                })?;
            let (merged, report) = merge::merge_day(
                &stored.normalized,
                &stored.payload,
                &uploaded_raw,
                &uploaded,
            )
            .map_err(in_rows)?;
            let raw = merged.to_string();
            let payload = domain::sync::parse_exact(raw.as_bytes(), today)
                .map_err(in_rows)?
                .payload;
            (raw, payload, report)
        }
    };
    // The day belongs to the facility of the upload's path, whatever the stored payload named
    // it by (a name may have changed since); the raw payload keeps what was sent.
    payload.facility = Some(domain::sync::payload::FacilityRef {
        id: Some(facility_id.uuid()),
        ..Default::default()
    });
    let outcome = store_day(tx, company_id, &payload, &raw, date, stored_raw.is_some()).await?;
    Ok(DayOutcome {
        date,
        sync_id: outcome.sync_id,
        merged: stored_raw.is_some(),
        idempotent: outcome.idempotent,
        unit_types: report,
        job_id: outcome.job_id,
        rent_roll: None,
    })
}

/// Stores each date's roll as that day's snapshot's `tenants`, merged into the record the day
/// already has (its unit types and the rest kept; its tenant rents replaced by the cohorts of
/// the roll), oldest first, so each roll is compared with the one before it.
pub(crate) async fn rent_rolls(
    tx: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    days: &BTreeMap<NaiveDate, Vec<RollRow>>,
    today: NaiveDate,
) -> Result<Vec<DayOutcome>> {
    let mut out = Vec::with_capacity(days.len());
    for (date, rows) in days {
        out.push(roll_day(tx, company_id, facility_id, *date, rows, today).await?);
    }
    Ok(out)
}

async fn roll_day(
    tx: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    date: NaiveDate,
    rows: &[RollRow],
    today: NaiveDate,
) -> Result<DayOutcome> {
    let stored_raw = lock_day(tx, company_id, facility_id, date).await?;
    let mut day = match &stored_raw {
        Some(serde_json::Value::Object(o)) => o.clone(),
        Some(_) => {
            return Err(Error::Conflict(format!(
            "the stored record of {date} cannot be merged with the roll; push that day again first"
        )))
        }
        None => serde_json::Map::new(),
    };
    day.insert("date".into(), serde_json::json!(date.to_string()));
    day.remove("tenant_rents");
    let tenants: Vec<&domain::sync::payload::RollTenant> = rows.iter().map(|r| &r.tenant).collect();
    day.insert(
        "tenants".into(),
        serde_json::to_value(&tenants).map_err(|e| Error::Internal(format!("roll: {e}")))?,
    );
    let raw = serde_json::Value::Object(day).to_string();
    let parsed = domain::sync::parse(raw.as_bytes(), today).map_err(|e| {
        Error::Invalid(ValidationError::new(
            format!("roll of {date}"),
            e.to_string(),
        ))
    })?;
    let mut payload = parsed.payload;
    if payload.tenants.is_none() {
        return Err(Error::Invalid(ValidationError::new(
            format!("roll of {date}"),
            parsed.warnings.join("; "),
        )));
    }
    payload.facility = Some(domain::sync::payload::FacilityRef {
        id: Some(facility_id.uuid()),
        ..Default::default()
    });
    let outcome = store_day(tx, company_id, &payload, &raw, date, stored_raw.is_some()).await?;
    Ok(DayOutcome {
        date,
        sync_id: outcome.sync_id,
        merged: stored_raw.is_some(),
        idempotent: outcome.idempotent,
        unit_types: MergeReport::default(),
        job_id: outcome.job_id,
        rent_roll: outcome.rent_roll,
    })
}

/// The day's stored body, its record locked: the lock keeps a concurrent push of the day from
/// landing between read and write.
async fn lock_day(
    tx: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    date: NaiveDate,
) -> Result<Option<serde_json::Value>> {
    Ok(sqlx::query_scalar!(
        r#"SELECT raw_payload AS "raw!" FROM sync_records
           WHERE company_id = $1 AND facility_id = $2 AND snapshot_date = $3 FOR UPDATE"#,
        company_id.uuid(),
        facility_id.uuid(),
        date
    )
    .fetch_optional(&mut *tx)
    .await?)
}

/// Stores the day as the sync does; a day that had no record when it was locked and has one
/// now was created by a push meanwhile, and merging now would drop what it sent.
async fn store_day(
    tx: &mut PgConnection,
    company_id: CompanyId,
    payload: &domain::sync::SyncPayload,
    raw: &str,
    date: NaiveDate,
    had_record: bool,
) -> Result<sync::store::Outcome> {
    let outcome = sync::store(&mut *tx, company_id, payload, raw, Source::Upload).await?;
    if !had_record && outcome.idempotent != "created" {
        return Err(Error::Conflict(format!(
            "the record of {date} was created while the upload was being stored; \
             nothing was written, send the upload again"
        )));
    }
    Ok(outcome)
}

fn lines(rows: &[UnitRateRow]) -> String {
    let first = rows.first().map_or(0, |r| r.line);
    let last = rows.last().map_or(0, |r| r.line);
    format!("{first}-{last}")
}
