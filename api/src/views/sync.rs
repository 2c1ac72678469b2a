//! What the API answers for a stored snapshot, built from `jobs::sync::store`.

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

impl From<jobs::sync::store::FacilityOutcome> for FacilityOutcome {
    fn from(r: jobs::sync::store::FacilityOutcome) -> Self {
        Self {
            id: r.id,
            name: r.name,
            created: r.created,
        }
    }
}
