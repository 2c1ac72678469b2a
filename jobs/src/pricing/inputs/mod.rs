//! A facility's engine inputs read from the database as of its latest snapshot, and its
//! pricing settings (defaults with its overrides).
//!
//! Every engine run starts here, so each source the engine draws on has a module of its own
//! that reads only the window the engine uses of it: `snapshot` (the facility and its latest
//! snapshot), `unit_types` (the snapshot's unit types with their last changes and the rates
//! approved since), `readings` (each unit type's daily history), `competitors`, and
//! `own_history` (how much history the facility has and its seasonal profile). [`load`] puts
//! them together in the order the reads have always run.

mod competitors;
mod own_history;
mod readings;
mod snapshot;
mod unit_types;

use crate::error::{Error, Result};
use chrono::Datelike;
use domain::ids::{CompanyId, FacilityId};
use domain::pricing::engine::{FacilityInput, Mode};
use domain::pricing::settings::PricingSettings;
use serde_json::{json, Value};
use sqlx::PgConnection;

/// Snapshots a month needs to count as a full month of own history (its move-ins are the
/// last month-to-date count; the season is learned by `domain::pricing::seasonality::learn`).
pub const SEASONALITY_MIN_DAYS_PER_MONTH: i64 = 20;

/// The facility's settings: defaults with its overrides.
pub(crate) async fn settings_of(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
) -> Result<(PricingSettings, Value)> {
    let overrides = sqlx::query_scalar!(
        "SELECT pricing_settings FROM facilities WHERE company_id = $1 AND id = $2",
        company_id.uuid(),
        facility_id.uuid()
    )
    .fetch_optional(&mut *conn)
    .await?
    .ok_or_else(|| Error::not_found(format!("no facility with id {facility_id}")))?;
    let settings = PricingSettings::with_overrides(&overrides)?;
    Ok((settings, overrides))
}

/// Everything the engine needs for one facility, read as of its latest snapshot.
pub struct Loaded {
    pub facility_name: String,
    pub input: FacilityInput,
    pub settings: PricingSettings,
    /// A summary of the inputs, stored with the run.
    pub summary: Value,
}

pub(crate) async fn load(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
) -> Result<Loaded> {
    let facility = snapshot::facility(&mut *conn, company_id, facility_id).await?;
    let settings = facility.settings;
    let snap = snapshot::latest(&mut *conn, facility_id).await?;
    let as_of = snap.snapshot_date;
    let mut unit_types =
        unit_types::of_snapshot(&mut *conn, facility_id, snap.id, as_of, &settings).await?;
    let pending_approved =
        unit_types::apply_pending(&mut *conn, facility_id, as_of, &mut unit_types).await?;
    let competitors = competitors::latest(&mut *conn, facility_id, as_of, &settings).await?;
    let own = own_history::read(&mut *conn, facility_id, as_of).await?;
    let promotions = snapshot::promotions(&snap.promotions);

    let mode = Mode::from_stored(&facility.mode);
    let history_days = u32::try_from(own.days).unwrap_or(u32::MAX);
    let summary = json!({
        "snapshot_date": as_of,
        "mode": mode,
        "unit_types": unit_types.len(),
        "competitor_observations": competitors.len(),
        "history_days": history_days,
        "first_snapshot_date": own.first,
        "seasonality": {
            "month": as_of.month(),
            "index": (own.season.index * 10_000.0).round() / 10_000.0,
            "source": if own.season.own_data { "own_history" } else { "national_prior" },
            "own_months": own.learned.own_months,
            "full_months": own.learned.full_months,
            "profile": own.learned.profile.map(|v| (v * 10_000.0).round() / 10_000.0),
        },
        "promotions": promotions.len(),
        "pending_approved_rates": pending_approved,
    });
    Ok(Loaded {
        facility_name: facility.name,
        input: FacilityInput {
            as_of,
            mode,
            occupancy_pct: snap.occupancy_pct,
            move_ins_mtd: snap.move_ins_mtd.map(f64::from),
            move_ins_target_monthly: snap.move_ins_target_monthly.map(f64::from),
            seasonality: own.season,
            history_days,
            unit_types,
            promotions,
            competitors,
        },
        settings,
        summary,
    })
}
