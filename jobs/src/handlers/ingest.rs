//! `ingest`: what follows a stored snapshot (push, upload or CRM pull). The snapshot was parsed
//! and normalised before it was stored; here the facility's lease-up mode is re-evaluated over
//! its history in date order, and a pricing run is requested.

use super::{FollowUps, JobContext, JobError};
use crate::payload::{self, Payload};
use crate::queue::Kind;
use crate::runs::{self, Claimed, NewJob};
use chrono::NaiveDate;
use domain::lease_up;
use serde_json::json;

pub async fn run(
    ctx: &JobContext,
    job: &Claimed,
    p: payload::Ingest,
) -> Result<FollowUps, JobError> {
    let sync_id = p.sync_id;
    let mut tx = ctx.db.begin().await?;
    let Some(record) = sqlx::query!(
        "SELECT facility_id, company_id FROM sync_records WHERE id = $1",
        sync_id
    )
    .fetch_optional(&mut *tx)
    .await?
    else {
        // The facility (and its records) was deleted since: nothing left to do.
        super::commit_success(
            tx,
            job,
            &json!({ "skipped": "the sync record no longer exists" }),
        )
        .await?;
        return Ok(vec![]);
    };
    // One ingest at a time per facility, so mode histories are computed over a stable set.
    sqlx::query!(
        "SELECT id FROM facilities WHERE id = $1 FOR UPDATE",
        record.facility_id
    )
    .fetch_one(&mut *tx)
    .await?;
    let readings: Vec<(NaiveDate, f64)> = sqlx::query!(
        r#"SELECT snapshot_date, occupancy_pct AS "occupancy_pct!" FROM sync_records
           WHERE facility_id = $1 AND occupancy_pct IS NOT NULL"#,
        record.facility_id
    )
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .map(|r| (r.snapshot_date, r.occupancy_pct))
    .collect();
    let (mode, events) = lease_up::history(&readings);
    let dates: Vec<NaiveDate> = events.iter().map(|e| e.date).collect();
    sqlx::query!(
        "DELETE FROM lease_up_events WHERE facility_id = $1 AND NOT (snapshot_date = ANY($2))",
        record.facility_id,
        &dates
    )
    .execute(&mut *tx)
    .await?;
    for e in &events {
        sqlx::query!(
            "INSERT INTO lease_up_events (facility_id, company_id, snapshot_date, from_mode, to_mode, occupancy_pct)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (facility_id, snapshot_date) DO UPDATE SET
                 from_mode = EXCLUDED.from_mode, to_mode = EXCLUDED.to_mode,
                 occupancy_pct = EXCLUDED.occupancy_pct, recorded_at = now()
             WHERE (lease_up_events.from_mode, lease_up_events.to_mode, lease_up_events.occupancy_pct)
                   IS DISTINCT FROM (EXCLUDED.from_mode, EXCLUDED.to_mode, EXCLUDED.occupancy_pct)",
            record.facility_id,
            record.company_id,
            e.date,
            e.from.as_str(),
            e.to.as_str(),
            e.occupancy_pct
        )
        .execute(&mut *tx)
        .await?;
    }
    sqlx::query!(
        "UPDATE facilities SET mode = $2 WHERE id = $1 AND mode <> $2",
        record.facility_id,
        mode.as_str()
    )
    .execute(&mut *tx)
    .await?;
    // Request a pricing run unless one is already waiting for this facility.
    let waiting = runs::waiting_pricing_run(&mut tx, record.company_id, record.facility_id).await?;
    let mut follow_ups = Vec::new();
    let pricing_run = match waiting {
        Some(id) => id,
        None => {
            let id = runs::insert(
                &mut tx,
                NewJob::new(
                    Some(record.company_id),
                    Payload::PricingRun(payload::PricingRun {
                        facility_id: record.facility_id,
                        sync_id: Some(sync_id),
                    }),
                ),
            )
            .await?
            .ok_or_else(|| JobError::Permanent("pricing run could not be recorded".to_owned()))?;
            follow_ups.push((Kind::PricingRun, id));
            id
        }
    };
    let result = json!({ "mode": mode, "mode_events": events.len(), "pricing_run": pricing_run });
    super::commit_success(tx, job, &result).await?;
    Ok(follow_ups)
}
