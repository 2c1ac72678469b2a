//! `GET /api/v1/analytics/seasonality` (see `jobs::analytics::reports::seasonality`).

use chrono::NaiveDate;
use domain::analytics::seasonality::{MonthIndex, Reading};
use domain::values::{round2, round4};
use serde::Serialize;
use uuid::Uuid;

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = SeasonalityReport)]
pub(crate) struct Report {
    /// The facility asked for; null for company-wide.
    pub facility_id: Option<Uuid>,
    /// The unit size asked for; null for all sizes.
    pub size: Option<String>,
    /// `company`, `facility` or `size`.
    pub scope: &'static str,
    /// Date of the latest snapshot in scope.
    pub as_of: Option<NaiveDate>,
    /// The 12 months, January first.
    pub months: Vec<MonthIndex>,
    /// Months with enough own data.
    pub own_data_months: usize,
    /// Months taken from the prior.
    pub prior_months: usize,
    /// Facility-days a month needs to count as own data.
    pub min_facility_days_per_month: f64,
    /// The current month's reading, when there is data.
    pub current_month: Option<Reading>,
    /// A soft advisory from the past move-in pace (no forecast).
    pub advisory: String,
    /// Why there is no profile of own data, when there is none.
    pub reason: Option<String>,
}

/// Indexes and paces are ratios near 1 (four decimals); percents have two.
impl From<jobs::analytics::reports::seasonality::Report> for Report {
    fn from(r: jobs::analytics::reports::seasonality::Report) -> Self {
        Self {
            facility_id: r.facility_id,
            size: r.size,
            scope: r.scope,
            as_of: r.as_of,
            months: r
                .months
                .into_iter()
                .map(|m| MonthIndex {
                    index: round4(m.index),
                    pace: m.pace.map(round4),
                    ..m
                })
                .collect(),
            own_data_months: r.own_data_months,
            prior_months: r.prior_months,
            min_facility_days_per_month: r.min_facility_days_per_month,
            current_month: r.current_month.map(|c| Reading {
                index: round4(c.index),
                pace: round4(c.pace),
                expected_pace: c.expected_pace.map(round4),
                vs_profile_pct: c.vs_profile_pct.map(round2),
                ..c
            }),
            advisory: r.advisory,
            reason: r.reason,
        }
    }
}
