//! What the API answers for facilities, built from `jobs::facilities`.

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;
use uuid::Uuid;

#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct Facility {
    /// The service's id of the facility.
    pub id: Uuid,
    /// The CRM's facility id.
    pub external_id: Option<String>,
    /// Free-form label of the originating system.
    pub source_system: Option<String>,
    /// Name, unique within the company.
    pub name: String,
    /// Postal address.
    pub address: Option<String>,
    /// The facility's website.
    pub website_url: Option<String>,
    /// Rentable area in square feet.
    pub rentable_sqft: Option<f64>,
    /// When the facility was created.
    pub created_at: DateTime<Utc>,
    /// When it was last changed.
    pub updated_at: DateTime<Utc>,
    /// Date of the latest sync record, if any.
    pub last_sync_date: Option<NaiveDate>,
}

impl From<jobs::facilities::Facility> for Facility {
    fn from(r: jobs::facilities::Facility) -> Self {
        Self {
            id: r.id,
            external_id: r.external_id,
            source_system: r.source_system,
            name: r.name,
            address: r.address,
            website_url: r.website_url,
            rentable_sqft: r.rentable_sqft,
            created_at: r.created_at,
            updated_at: r.updated_at,
            last_sync_date: r.last_sync_date,
        }
    }
}
