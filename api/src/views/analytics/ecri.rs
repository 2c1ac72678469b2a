//! `GET /api/v1/analytics/ecri` (see `jobs::analytics::reports::ecri`).

use chrono::NaiveDate;
use domain::analytics::ecri::{EcriSettings, SizeEcri};
use serde::Serialize;
use uuid::Uuid;

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriSize)]
pub(crate) struct SizeOut {
    pub size: String,
    /// Street rate of the size in the same snapshot; null when the snapshot has none.
    pub street_rate: Option<f64>,
    #[serde(flatten)]
    pub ecri: Option<SizeEcri>,
    /// Why there is no suggestion for the size, when there is none.
    pub reason: Option<String>,
}

impl From<jobs::analytics::reports::ecri::SizeOut> for SizeOut {
    fn from(r: jobs::analytics::reports::ecri::SizeOut) -> Self {
        Self {
            size: r.size,
            street_rate: r.street_rate,
            ecri: r.ecri,
            reason: r.reason,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriTotals)]
pub(crate) struct Totals {
    /// Tenants counted.
    pub tenants: u64,
    /// Tenants an increase is suggested for.
    pub tenants_affected: u64,
    /// Added rent per month if every suggestion is made.
    pub monthly_uplift: f64,
    /// Tenants expected to move out after the increases.
    pub expected_move_outs: f64,
    /// Monthly uplift less the rent of the expected move-outs.
    pub net_monthly_uplift: f64,
}

impl From<jobs::analytics::reports::ecri::Totals> for Totals {
    fn from(r: jobs::analytics::reports::ecri::Totals) -> Self {
        Self {
            tenants: r.tenants,
            tenants_affected: r.tenants_affected,
            monthly_uplift: r.monthly_uplift,
            expected_move_outs: r.expected_move_outs,
            net_monthly_uplift: r.net_monthly_uplift,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriFacility)]
pub(crate) struct FacilityOut {
    /// The facility.
    pub facility_id: Uuid,
    /// The facility's name.
    pub facility_name: String,
    /// Date of the snapshot the figures come from.
    pub as_of: Option<NaiveDate>,
    /// Suggestions per unit size.
    pub sizes: Vec<SizeOut>,
    /// Sums over the sizes.
    pub totals: Totals,
    /// Why there are no suggestions, when there are none.
    pub reason: Option<String>,
}

impl From<jobs::analytics::reports::ecri::FacilityOut> for FacilityOut {
    fn from(r: jobs::analytics::reports::ecri::FacilityOut) -> Self {
        Self {
            facility_id: r.facility_id,
            facility_name: r.facility_name,
            as_of: r.as_of,
            sizes: r.sizes.into_iter().map(Into::into).collect(),
            totals: r.totals.into(),
            reason: r.reason,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriReport)]
pub(crate) struct Report {
    /// The settings the suggestions were made with.
    pub settings: EcriSettings,
    /// Per facility.
    pub facilities: Vec<FacilityOut>,
    /// Sums over every facility.
    pub totals: Totals,
}

impl From<jobs::analytics::reports::ecri::Report> for Report {
    fn from(r: jobs::analytics::reports::ecri::Report) -> Self {
        Self {
            settings: r.settings,
            facilities: r.facilities.into_iter().map(Into::into).collect(),
            totals: r.totals.into(),
        }
    }
}
