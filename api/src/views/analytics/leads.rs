//! `GET /api/v1/analytics/leads` (see `jobs::analytics::reports::leads`).

use chrono::NaiveDate;
use domain::analytics::leads::Funnel;
use serde::Serialize;
use uuid::Uuid;

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = LeadsReport)]
pub(crate) struct Report {
    pub facility_id: Option<Uuid>,
    pub period: String,
    pub as_of: Option<NaiveDate>,
    pub period_start: Option<NaiveDate>,
    pub previous_period_start: Option<NaiveDate>,
    #[serde(flatten)]
    pub funnel: Funnel,
    /// Snapshots in the period, and how many of them carried daily move-ins.
    pub snapshots: i64,
    pub snapshots_with_move_ins: i64,
    /// Snapshots in the period that sent leads: only their move-ins count in the conversion.
    pub snapshots_with_leads: i64,
    /// Facilities with a snapshot in the period.
    pub facilities_reporting: i64,
    /// Of those, the facilities that sent leads in the period.
    pub facilities_with_leads: i64,
    /// Days of the period on or after the first data in scope (the period's length when full).
    pub period_days_covered: i64,
    /// Days of the previous period on or after the first data in scope: less than the period's
    /// length when the data began within it, so its counts are not a full period's.
    pub previous_period_days_covered: i64,
    pub per_channel_conversion: &'static str,
    pub reason: Option<String>,
}

impl From<jobs::analytics::reports::leads::Report> for Report {
    fn from(r: jobs::analytics::reports::leads::Report) -> Self {
        Self {
            facility_id: r.facility_id,
            period: r.period,
            as_of: r.as_of,
            period_start: r.period_start,
            previous_period_start: r.previous_period_start,
            funnel: r.funnel,
            snapshots: r.snapshots,
            snapshots_with_move_ins: r.snapshots_with_move_ins,
            snapshots_with_leads: r.snapshots_with_leads,
            facilities_reporting: r.facilities_reporting,
            facilities_with_leads: r.facilities_with_leads,
            period_days_covered: r.period_days_covered,
            previous_period_days_covered: r.previous_period_days_covered,
            per_channel_conversion: r.per_channel_conversion,
            reason: r.reason,
        }
    }
}
