//! Lease-up mode kept on the facility: the rule of `domain::lease_up` evaluated over the
//! facility's whole snapshot history in date order (so days that arrive out of order give the
//! same history), its mode changes stored as events, and the facility's mode set. The ingest job
//! and the demo seed both call [`record`].

use crate::error::Result;
use chrono::NaiveDate;
use domain::ids::{CompanyId, FacilityId};
use domain::lease_up::{self, Mode};
use sqlx::PgConnection;

/// What [`record`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recorded {
    /// The facility's mode after its latest snapshot.
    pub mode: Mode,
    /// Mode changes in its history.
    pub events: usize,
}

/// Re-evaluates a facility's lease-up history on the caller's connection: events that no longer
/// hold are deleted, changed ones updated, and the facility's mode set. The caller holds the
/// facility's row lock when writes may race (the ingest job does).
pub(crate) async fn record(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
) -> Result<Recorded> {
    let readings: Vec<(NaiveDate, f64)> = sqlx::query!(
        r#"SELECT snapshot_date, occupancy_pct AS "occupancy_pct!" FROM sync_records
           WHERE facility_id = $1 AND occupancy_pct IS NOT NULL"#,
        facility_id.uuid()
    )
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|r| (r.snapshot_date, r.occupancy_pct))
    .collect();
    let (mode, events) = lease_up::history(&readings);
    let dates: Vec<NaiveDate> = events.iter().map(|e| e.date).collect();
    sqlx::query!(
        "DELETE FROM lease_up_events WHERE facility_id = $1 AND NOT (snapshot_date = ANY($2))",
        facility_id.uuid(),
        &dates
    )
    .execute(&mut *conn)
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
            facility_id.uuid(),
            company_id.uuid(),
            e.date,
            e.from.as_str(),
            e.to.as_str(),
            e.occupancy_pct
        )
        .execute(&mut *conn)
        .await?;
    }
    crate::facilities::set_mode(conn, facility_id, mode).await?;
    Ok(Recorded {
        mode,
        events: events.len(),
    })
}
