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
    /// The ECRI engine's suggestions for the size's tenants (docs/ecri.md), one line per
    /// whole months since the rent was last set; empty when the size has no tenants.
    pub cohorts: Vec<Cohort>,
}

/// Tenants of a size who share the months since their rent was last set, with the engine's
/// suggestion for them.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriCohort)]
pub(crate) struct Cohort {
    /// Months since the last increase: as the cohort was sent, or whole months from a rent
    /// roll (since the move-in for tenants never increased).
    pub months_since_last_increase: Option<f64>,
    /// Tenants.
    pub tenant_count: u32,
    /// Their average rent, currency per month.
    pub avg_rent: f64,
    /// The suggested increase per tenant, currency per month (0 for none).
    pub increase: f64,
    /// The average rent after the suggested increases.
    pub new_rent: f64,
    /// The chance a tenant stays through the 90 days after the notice (0 to 1).
    pub stay_probability: f64,
}

impl From<jobs::ecri::CohortLine> for Cohort {
    fn from(c: jobs::ecri::CohortLine) -> Self {
        Self {
            months_since_last_increase: c.months_since_last_increase,
            tenant_count: c.tenant_count,
            avg_rent: c.avg_rent,
            increase: c.increase,
            new_rent: c.new_rent,
            stay_probability: c.stay_probability,
        }
    }
}

impl From<jobs::analytics::reports::ecri::SizeOut> for SizeOut {
    fn from(r: jobs::analytics::reports::ecri::SizeOut) -> Self {
        Self {
            size: r.size,
            street_rate: r.street_rate,
            ecri: r.ecri,
            reason: r.reason,
            cohorts: r.cohorts.into_iter().map(Into::into).collect(),
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
