//! The facility row and its latest snapshot: what every other input is read as of. Apart so
//! the loader's first step, the one that can refuse a run (no such facility, no snapshot), reads
//! as one.

use crate::error::{Error, Result, ValidationError};
use chrono::NaiveDate;
use domain::ids::{CompanyId, FacilityId};
use domain::pricing::engine::PromotionInput;
use domain::pricing::settings::PricingSettings;
use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

/// The facility as the engine needs it.
pub(super) struct Facility {
    pub name: String,
    /// The mode as stored.
    pub mode: String,
    pub settings: PricingSettings,
}

/// The facility, with its settings (404 for a facility that is not the company's).
pub(super) async fn facility(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
) -> Result<Facility> {
    let facility = sqlx::query!(
        "SELECT name, mode, pricing_settings FROM facilities WHERE company_id = $1 AND id = $2",
        company_id.uuid(),
        facility_id.uuid()
    )
    .fetch_optional(&mut *conn)
    .await?
    .ok_or_else(|| Error::not_found(format!("no facility with id {facility_id}")))?;
    let settings = PricingSettings::with_overrides(&facility.pricing_settings)?;
    Ok(Facility {
        name: facility.name,
        mode: facility.mode,
        settings,
    })
}

/// The facility-wide figures of a snapshot.
pub(super) struct Snapshot {
    pub id: Uuid,
    pub snapshot_date: NaiveDate,
    pub occupancy_pct: Option<f64>,
    pub move_ins_mtd: Option<i32>,
    pub move_ins_target_monthly: Option<i32>,
    pub promotions: Value,
}

/// The facility's latest snapshot; a facility without one cannot be priced yet.
pub(super) async fn latest(conn: &mut PgConnection, facility_id: FacilityId) -> Result<Snapshot> {
    Ok(sqlx::query_as!(
        Snapshot,
        "SELECT id, snapshot_date, occupancy_pct, move_ins_mtd, move_ins_target_monthly, promotions
         FROM sync_records WHERE facility_id = $1 ORDER BY snapshot_date DESC LIMIT 1",
        facility_id.uuid()
    )
    .fetch_optional(&mut *conn)
    .await?
    .ok_or_else(|| {
        ValidationError::new(
            "facility",
            "has no snapshot yet: push a sync or upload unit rates before asking for recommendations",
        )
    })?)
}

/// The snapshot's promotions as the engine reads them; one without a name is left out.
pub(super) fn promotions(stored: &Value) -> Vec<PromotionInput> {
    stored
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| {
                    Some(PromotionInput {
                        name: p.get("name")?.as_str()?.to_owned(),
                        depth_pct: p.get("depth_pct").and_then(Value::as_f64).unwrap_or(0.0),
                        applies_to: p
                            .get("applies_to")
                            .and_then(Value::as_str)
                            .unwrap_or("all")
                            .to_owned(),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}
