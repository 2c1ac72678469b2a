//! What the API answers for a stored snapshot, built from `jobs::sync`.

use serde::Serialize;
use uuid::Uuid;

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = SyncFacilityOutcome)]
pub(crate) struct FacilityOutcome {
    /// Id of the facility.
    pub id: Uuid,
    /// The facility's name.
    pub name: String,
    /// True when the sync created the facility.
    pub created: bool,
}

impl From<jobs::sync::FacilityOutcome> for FacilityOutcome {
    fn from(r: jobs::sync::FacilityOutcome) -> Self {
        Self {
            id: r.id,
            name: r.name,
            created: r.created,
        }
    }
}

/// What a snapshot's rent roll changed in the roll in force.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = SyncRollOutcome)]
pub(crate) struct RollOutcome {
    /// False when the roll was older than the roll in force, or held, and left it as it was.
    pub applied: bool,
    /// True when the roll was held: it would move out more than the facility's share of the
    /// tenants in force (`move_out_hold_pct`, 20 % unless set). The roll in force stays until
    /// the held roll is confirmed (`POST /api/v1/facilities/{id}/rent-roll/confirm`) or a later
    /// roll within the share replaces it; `warnings` says how many it would move out.
    pub held: bool,
    /// Tenants in the roll.
    pub tenants: usize,
    /// Tenants new to the roll.
    pub moved_in: usize,
    /// Tenants of the roll in force that this roll leaves out.
    pub moved_out: usize,
    /// Tenants whose rent changed.
    pub rent_changed: usize,
    /// Tenants whose other fields changed (size, tier, flags, customer, dates).
    pub updated: usize,
    /// Date of the roll in force after this one.
    pub roll_date: Option<chrono::NaiveDate>,
}

impl From<jobs::rent_roll::RollOutcome> for RollOutcome {
    fn from(r: jobs::rent_roll::RollOutcome) -> Self {
        Self {
            applied: r.applied,
            held: r.held.is_some(),
            tenants: r.tenants,
            moved_in: r.moved_in,
            moved_out: r.moved_out,
            rent_changed: r.rent_changed,
            updated: r.updated,
            roll_date: r.roll_date,
        }
    }
}
