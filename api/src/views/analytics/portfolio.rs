//! `GET /api/v1/analytics/portfolio` (see `jobs::analytics::reports::portfolio`).

use chrono::NaiveDate;
use domain::analytics::flags::{Flag, FlagSettings};
use domain::analytics::revenue::Revenue;
use serde::Serialize;
use uuid::Uuid;

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = PortfolioRollup)]
pub(crate) struct Rollup {
    pub facilities: usize,
    pub facilities_with_data: usize,
    pub facilities_in_lease_up: usize,
    pub facilities_flagged: usize,
    pub occupied_units: Option<i64>,
    /// occupied units / total units x 100.
    pub unit_occupancy_pct: Option<f64>,
    /// Actual (in-place) rent per month, GPR, RevPAU and the rest, with estimate flags.
    #[serde(flatten)]
    pub revenue: Revenue,
    /// Month of `as_of`; the month-to-date figures are for it.
    pub month: Option<String>,
    pub move_ins_mtd: i64,
    pub move_outs_mtd: i64,
    /// move_ins_mtd - move_outs_mtd.
    pub net_absorption_mtd: i64,
}

impl From<jobs::analytics::reports::portfolio::Rollup> for Rollup {
    fn from(r: jobs::analytics::reports::portfolio::Rollup) -> Self {
        Self {
            facilities: r.facilities,
            facilities_with_data: r.facilities_with_data,
            facilities_in_lease_up: r.facilities_in_lease_up,
            facilities_flagged: r.facilities_flagged,
            occupied_units: r.occupied_units,
            unit_occupancy_pct: r.unit_occupancy_pct,
            revenue: r.revenue,
            month: r.month,
            move_ins_mtd: r.move_ins_mtd,
            move_outs_mtd: r.move_outs_mtd,
            net_absorption_mtd: r.net_absorption_mtd,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = PortfolioFacility)]
pub(crate) struct FacilityOut {
    pub facility_id: Uuid,
    pub facility_name: String,
    pub mode: String,
    pub as_of: Option<NaiveDate>,
    pub days_since_sync: Option<i64>,
    pub occupancy_pct: Option<f64>,
    pub previous_month_occupancy_pct: Option<f64>,
    pub occupied_units: Option<i64>,
    #[serde(flatten)]
    pub revenue: Revenue,
    pub move_ins_mtd: Option<i32>,
    pub move_outs_mtd: Option<i32>,
    pub move_ins_target_monthly: Option<i32>,
    pub ecri_gap_pct: Option<f64>,
    pub flags: Vec<Flag>,
    pub reason: Option<String>,
}

impl From<jobs::analytics::reports::portfolio::FacilityOut> for FacilityOut {
    fn from(r: jobs::analytics::reports::portfolio::FacilityOut) -> Self {
        Self {
            facility_id: r.facility_id,
            facility_name: r.facility_name,
            mode: r.mode,
            as_of: r.as_of,
            days_since_sync: r.days_since_sync,
            occupancy_pct: r.occupancy_pct,
            previous_month_occupancy_pct: r.previous_month_occupancy_pct,
            occupied_units: r.occupied_units,
            revenue: r.revenue,
            move_ins_mtd: r.move_ins_mtd,
            move_outs_mtd: r.move_outs_mtd,
            move_ins_target_monthly: r.move_ins_target_monthly,
            ecri_gap_pct: r.ecri_gap_pct,
            flags: r.flags,
            reason: r.reason,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = PortfolioReport)]
pub(crate) struct Report {
    /// Date of the latest snapshot of any facility.
    pub as_of: Option<NaiveDate>,
    /// Today (UTC), for staleness.
    pub today: NaiveDate,
    /// Company-wide figures.
    pub rollup: Rollup,
    /// The risk flags' thresholds.
    pub thresholds: FlagSettings,
    /// Per facility, with its flags.
    pub facilities: Vec<FacilityOut>,
}

impl From<jobs::analytics::reports::portfolio::Report> for Report {
    fn from(r: jobs::analytics::reports::portfolio::Report) -> Self {
        Self {
            as_of: r.as_of,
            today: r.today,
            rollup: r.rollup.into(),
            thresholds: r.thresholds,
            facilities: r.facilities.into_iter().map(Into::into).collect(),
        }
    }
}
