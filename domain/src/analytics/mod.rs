//! Analytics: portfolio rollup and risk flags, seasonality,
//! lead funnel, revenue per available unit and square foot, lease-up status.
//!
//! The maths are plain functions over plain structs, unit-tested alone; `jobs::analytics::reports`
//! loads from PostgreSQL, calls them and shapes the answers. Formulas: docs/analytics.md.

pub mod flags;
pub mod leads;
pub mod revenue;
pub mod seasonality;

use serde::Serialize;

/// Every threshold of the analytics, named (defaults from the domain notes).
#[derive(Clone, Debug, Serialize)]
pub struct AnalyticsSettings {
    pub flags: flags::FlagSettings,
    /// A calendar month counts as own seasonality data from this many facility-days.
    pub seasonality_min_facility_days: f64,
}

impl Default for AnalyticsSettings {
    fn default() -> Self {
        Self {
            flags: flags::FlagSettings::default(),
            seasonality_min_facility_days: 20.0,
        }
    }
}
