//! Stored ECRI runs: an `ecri_run` job computes a facility's suggestions ([`super::facility`])
//! and stores them; every read (the facility's ECRI answer and page, the analytics report, a
//! new batch) serves the latest stored run and never recomputes. A run is requested after each
//! ingest, after a settings change or an approval, nightly after the company's fit, and on
//! demand; a request while one is waiting for the facility joins it.

use super::sizes::{summarize, SizeSummary};
use super::FacilityEcri;
use crate::audit::Change;
use crate::door::{self, Committed, Jobs, Who};
use crate::error::{Error, Result, ValidationError};
use crate::payload::{self, Payload};
use crate::queue::Kind;
use crate::runs::{self as jobs_rows, NewJob};
use chrono::{DateTime, NaiveDate, Utc};
use domain::ecri::ENGINE_VERSION;
use domain::ids::{CompanyId, FacilityId};
use serde::{Deserialize, Serialize};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

pub mod page;

/// What asked for a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// A stored snapshot (push, upload, CRM pull) was ingested.
    Sync,
    /// The nightly run after the company's fit (tenure and cooldowns move with the calendar).
    Nightly,
    /// The facility's ECRI or pricing settings changed.
    Settings,
    /// A batch of the facility was approved.
    Batch,
    /// Someone asked for it (`?fresh=true`, the page's button).
    OnDemand,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sync => "sync",
            Self::Nightly => "nightly",
            Self::Settings => "settings",
            Self::Batch => "batch",
            Self::OnDemand => "on_demand",
        }
    }
}

/// A stored run as read back.
#[derive(Clone, Debug)]
pub struct StoredRun {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub engine_version: String,
    pub trigger: String,
    /// Why the run no longer describes the facility (a newer roll or snapshot, another engine
    /// version); None while it does.
    pub stale: Option<String>,
    pub ecri: FacilityEcri,
}

/// The facility's latest run, and the job that will replace it when one is on its way.
#[derive(Clone, Debug)]
pub struct Latest {
    pub facility_id: Uuid,
    pub facility_name: String,
    pub run: Option<StoredRun>,
    /// A queued or running `ecri_run` (or an ingest, which requests one) of the facility.
    pub pending_job: Option<Uuid>,
}

/// Computes the facility's suggestions now and stores them as run `id` (the job's id, so a job
/// delivered twice stores one run), in the caller's transaction. Returns the run's totals.
pub async fn store(
    conn: &mut PgConnection,
    company_id: CompanyId,
    id: Uuid,
    trigger: Trigger,
    f: &FacilityEcri,
) -> Result<serde_json::Value> {
    let sizes: Vec<SizeSummary> = summarize(&f.lines, &f.markets);
    let sum = |g: fn(&SizeSummary) -> f64| sizes.iter().map(g).sum::<f64>();
    let tenants: u64 = sizes.iter().map(|s| s.tenants).sum();
    let affected: u64 = sizes.iter().map(|s| s.tenants_affected).sum();
    let monthly_uplift = domain::values::round2(sum(|s| s.monthly_uplift));
    let expected_gain = domain::values::round2(sum(|s| s.expected_gain));
    let expected_move_outs = (sum(|s| s.expected_move_outs) * 10.0).round() / 10.0;
    let roll_date = match f.basis {
        Some(super::Basis::RentRoll) => f.as_of,
        _ => None,
    };
    // Written straight from the answer (no JSON tree in between): a 10,000-tenant roll's body
    // is megabytes.
    let body = sqlx::types::Json(f);
    sqlx::query!(
        "INSERT INTO ecri_runs (id, company_id, facility_id, engine_version, trigger, fit_id,
                                fitted_at, roll_date, snapshot_date, basis, tenants,
                                tenants_affected, monthly_uplift, expected_gain,
                                expected_move_outs, sizes, body, reason)
         SELECT $1, $2, $3, $4, $5, (SELECT id FROM ecri_fits WHERE id = $6), $7, $8, $9, $10,
                $11, $12, $13, $14, $15, $16, $17, $18
         WHERE EXISTS (SELECT 1 FROM facilities WHERE id = $3)
         ON CONFLICT (id) DO NOTHING",
        id,
        company_id.uuid(),
        f.facility_id,
        ENGINE_VERSION,
        trigger.as_str(),
        f.fit_id,
        f.fitted_at,
        roll_date,
        f.snapshot_date,
        f.basis.map(|b| match b {
            super::Basis::RentRoll => "rent_roll",
            super::Basis::Cohorts => "cohorts",
        }),
        i64::try_from(tenants).unwrap_or(i64::MAX),
        i64::try_from(affected).unwrap_or(i64::MAX),
        monthly_uplift,
        expected_gain,
        expected_move_outs,
        serde_json::to_value(&sizes).unwrap_or(serde_json::Value::Null),
        body as _,
        f.reason
    )
    .execute(conn)
    .await?;
    Ok(serde_json::json!({
        "tenants": tenants,
        "tenants_affected": affected,
        "monthly_uplift": monthly_uplift,
        "expected_gain": expected_gain,
        "expected_move_outs": expected_move_outs,
    }))
}

/// The facility's latest stored run (read, not recomputed) and any job on its way; 404 for a
/// facility of another company.
pub async fn latest(
    pool: &PgPool,
    company_id: CompanyId,
    facility_id: FacilityId,
) -> Result<Latest> {
    read(pool, company_id, facility_id, None).await
}

/// As [`latest`], but the run `run_id` of the facility when one is named (a page's cursor
/// keeps to the run its walk began on): a 422 naming `cursor` when the facility has no such
/// run (another facility's, or pruned), and `stale` says when a newer run replaced it.
pub async fn read(
    pool: &PgPool,
    company_id: CompanyId,
    facility_id: FacilityId,
    run_id: Option<Uuid>,
) -> Result<Latest> {
    let f = sqlx::query!(
        r#"SELECT f.name, f.rent_roll_date,
                  (SELECT max(snapshot_date) FROM sync_records s WHERE s.facility_id = f.id)
                    AS "snapshot_date?",
                  (SELECT j.id FROM job_runs j
                    WHERE j.kind IN ('ecri_run', 'ingest') AND j.status IN ('queued', 'running')
                      AND j.payload->>'facility_id' = f.id::text
                    ORDER BY j.created_at DESC LIMIT 1) AS "pending_job?"
           FROM facilities f WHERE f.company_id = $1 AND f.id = $2"#,
        company_id.uuid(),
        facility_id.uuid()
    )
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| Error::not_found(format!("no facility with id {facility_id}")))?;
    let row = sqlx::query!(
        r#"SELECT r.id, r.created_at, r.engine_version, r.trigger, r.roll_date, r.snapshot_date,
                  r.body::text AS "body!",
                  (SELECT n.id FROM ecri_runs n
                    WHERE n.facility_id = r.facility_id AND n.created_at > r.created_at
                    ORDER BY n.created_at DESC LIMIT 1) AS "newer?"
           FROM ecri_runs r WHERE r.facility_id = $1 AND ($2::uuid IS NULL OR r.id = $2)
           ORDER BY r.created_at DESC LIMIT 1"#,
        facility_id.uuid(),
        run_id
    )
    .fetch_optional(pool)
    .await?;
    if let (Some(id), None) = (run_id, &row) {
        return Err(ValidationError::new(
            "cursor",
            format!("run {id} of this facility is no longer kept: start again without a cursor"),
        )
        .into());
    }
    let run = row.and_then(|r| {
        // A body another version wrote that no longer reads is no run: the next one replaces it.
        let mut ecri: FacilityEcri = serde_json::from_str(&r.body).ok()?;
        ecri.facility_name.clone_from(&f.name);
        let stale = match r.newer {
            Some(newer) => Some(format!(
                "run {newer} replaced it; a walk through pages keeps to the run it began on"
            )),
            None => staleness(
                &r.engine_version,
                (r.roll_date, f.rent_roll_date),
                (r.snapshot_date, f.snapshot_date),
            ),
        };
        Some(StoredRun {
            id: r.id,
            created_at: r.created_at,
            engine_version: r.engine_version,
            trigger: r.trigger,
            stale,
            ecri,
        })
    });
    Ok(Latest {
        facility_id: facility_id.uuid(),
        facility_name: f.name,
        run,
        pending_job: f.pending_job,
    })
}

/// Why a run built on `(run's, now's)` roll and snapshot dates by `version` is out of date.
pub(crate) fn staleness(
    version: &str,
    roll: (Option<NaiveDate>, Option<NaiveDate>),
    snapshot: (Option<NaiveDate>, Option<NaiveDate>),
) -> Option<String> {
    if version != ENGINE_VERSION {
        return Some(format!(
            "built by engine {version}; the engine is now {ENGINE_VERSION}"
        ));
    }
    match roll {
        (Some(then), Some(now)) if now > then => {
            return Some(format!(
                "built on the rent roll of {then}; the roll in force is of {now}"
            ))
        }
        (None, Some(now)) => {
            return Some(format!("built before the rent roll of {now} arrived"));
        }
        _ => {}
    }
    match snapshot {
        (Some(then), Some(now)) if now > then => Some(format!(
            "built on the snapshot of {then}; the latest snapshot is of {now}"
        )),
        (None, Some(now)) => Some(format!("built before the snapshot of {now} arrived")),
        _ => None,
    }
}

/// Records an `ecri_run` job for the facility in the caller's transaction, unless one is
/// already queued for it: `(job id, whether it is new)`. A new job must be pushed once the
/// transaction has committed.
pub async fn request(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    trigger: Trigger,
) -> Result<(Uuid, bool)> {
    if let Some(id) = jobs_rows::waiting(conn, Kind::EcriRun, company_id, facility_id).await? {
        return Ok((id, false));
    }
    let id = jobs_rows::insert(
        conn,
        NewJob::new(
            Some(company_id),
            Payload::EcriRun(payload::EcriRun {
                facility_id,
                trigger,
            }),
        ),
    )
    .await?
    .ok_or_else(|| Error::Internal("the ECRI run could not be recorded".to_owned()))?;
    Ok((id, true))
}

/// Adds a run request for the facility to `jobs` (when a new job was recorded).
pub async fn request_into(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    trigger: Trigger,
    jobs: &mut Jobs,
) -> Result<()> {
    let (id, new) = request(conn, company_id, facility_id, trigger).await?;
    if new {
        jobs.add(Kind::EcriRun, id);
    }
    Ok(())
}

/// Someone asks for a new run of the facility now: the job to follow (a waiting one when there
/// is one), recorded as `ecri_run.request`.
pub async fn run_now(pool: &PgPool, who: &Who, facility_id: FacilityId) -> Result<Committed<Uuid>> {
    let mut tx = pool.begin().await?;
    let known = sqlx::query_scalar!(
        "SELECT id FROM facilities WHERE company_id = $1 AND id = $2",
        who.company.uuid(),
        facility_id.uuid()
    )
    .fetch_optional(&mut *tx)
    .await?;
    if known.is_none() {
        return Err(Error::not_found(format!(
            "no facility with id {facility_id}"
        )));
    }
    let (id, new) = request(&mut tx, who.company, facility_id, Trigger::OnDemand).await?;
    let change = Change::new("ecri_run.request")
        .target("job", id)
        .facility(facility_id.uuid())
        .values(
            None,
            Some(serde_json::json!({ "job_id": id, "joined_a_waiting_run": !new })),
        );
    let jobs = if new {
        Jobs::one(Kind::EcriRun, id)
    } else {
        Jobs::none()
    };
    door::commit(tx, who, change, id, jobs).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_stale_once_a_newer_roll_or_snapshot_or_engine_arrives() {
        let d = |day| NaiveDate::from_ymd_opt(2026, 11, day);
        assert_eq!(staleness(ENGINE_VERSION, (d(1), d(1)), (d(2), d(2))), None);
        assert!(staleness(ENGINE_VERSION, (d(1), d(3)), (d(3), d(3)))
            .is_some_and(|s| s.contains("roll in force is of 2026-11-03")));
        assert!(staleness(ENGINE_VERSION, (None, None), (d(2), d(4)))
            .is_some_and(|s| s.contains("snapshot is of 2026-11-04")));
        assert!(staleness("ecri-2020.1.1", (d(1), d(1)), (d(1), d(1)))
            .is_some_and(|s| s.contains("ecri-2020.1.1")));
    }
}
