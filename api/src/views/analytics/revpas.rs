//! `GET /api/v1/analytics/revpas` (see `jobs::analytics::reports::revpas`).

use chrono::NaiveDate;
use domain::analytics::revenue::Revenue;
use serde::Serialize;
use uuid::Uuid;

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = RevpasFacility)]
pub(crate) struct FacilityOut {
    pub rank: Option<usize>,
    pub facility_id: Uuid,
    pub facility_name: String,
    pub as_of: Option<NaiveDate>,
    #[serde(flatten)]
    pub revenue: Revenue,
    pub reason: Option<String>,
}

impl From<jobs::analytics::reports::revpas::FacilityOut> for FacilityOut {
    fn from(r: jobs::analytics::reports::revpas::FacilityOut) -> Self {
        Self {
            rank: r.rank,
            facility_id: r.facility_id,
            facility_name: r.facility_name,
            as_of: r.as_of,
            revenue: r.revenue,
            reason: r.reason,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = RevpasMonth)]
pub(crate) struct MonthOut {
    pub month: String,
    pub facilities: usize,
    #[serde(flatten)]
    pub revenue: Revenue,
}

impl From<jobs::analytics::reports::revpas::MonthOut> for MonthOut {
    fn from(r: jobs::analytics::reports::revpas::MonthOut) -> Self {
        Self {
            month: r.month,
            facilities: r.facilities,
            revenue: r.revenue,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = RevpasReport)]
pub(crate) struct Report {
    /// The facility asked for; null for all.
    pub facility_id: Option<Uuid>,
    /// What the figures are based on (street rates before concessions).
    pub basis: &'static str,
    /// Date of the latest snapshot counted.
    pub as_of: Option<NaiveDate>,
    /// The figures over every facility.
    pub portfolio: Revenue,
    /// Best first: by RevPAF, then RevPAU; facilities without figures last, unranked.
    pub facilities: Vec<FacilityOut>,
    /// The 12 months ending with the month of `as_of`, oldest first.
    pub trend: Vec<MonthOut>,
    /// Why there are no figures, when there are none.
    pub reason: Option<String>,
}

impl From<jobs::analytics::reports::revpas::Report> for Report {
    fn from(r: jobs::analytics::reports::revpas::Report) -> Self {
        Self {
            facility_id: r.facility_id,
            basis: r.basis,
            as_of: r.as_of,
            portfolio: r.portfolio,
            facilities: r.facilities.into_iter().map(Into::into).collect(),
            trend: r.trend.into_iter().map(Into::into).collect(),
            reason: r.reason,
        }
    }
}
