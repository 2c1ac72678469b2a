//! What the engine reads about a facility and what it answers per unit type.

use super::Mode;
use crate::pricing::band::{CompetitorBand, CompetitorObservation};
use crate::pricing::seasonality::SeasonalIndex;
use crate::pricing::tiers::{CompetitorSet, TierInversion};
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

/// Everything the engine reads about one facility.
#[derive(Debug, Clone, PartialEq)]
pub struct FacilityInput {
    /// The snapshot date the run rests on.
    pub as_of: NaiveDate,
    pub mode: Mode,
    /// Facility occupancy (%), used for unit types that do not send their own.
    pub occupancy_pct: Option<f64>,
    pub move_ins_mtd: Option<f64>,
    pub move_ins_target_monthly: Option<f64>,
    /// This month's seasonality index.
    pub seasonality: SeasonalIndex,
    /// Days of the facility's own history (snapshots).
    pub history_days: u32,
    pub unit_types: Vec<UnitTypeInput>,
    pub promotions: Vec<PromotionInput>,
    /// Competitor observations, each with its unit size.
    pub competitors: Vec<(String, CompetitorObservation)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct UnitTypeInput {
    pub size: String,
    pub tier: String,
    pub street_rate: f64,
    pub occupancy_pct: Option<f64>,
    pub total_units: Option<u32>,
    /// The last snapshot date on which this unit type's street rate changed.
    pub last_rate_change: Option<NaiveDate>,
    /// Whether that change was a raise (`None` when unknown).
    pub last_change_raised: Option<bool>,
    /// The unit type's reading `occupancy_trend_days` before the snapshot (the nearest earlier
    /// snapshot), for the occupancy trend and, without competitor rates, the anchor.
    pub earlier: Option<EarlierReading>,
    /// The unit type's daily readings before the snapshot, oldest first (empty when the
    /// caller has none): the price response learns the size's demand from them.
    pub history: Vec<DayReading>,
}

/// One day of a unit type's own history.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DayReading {
    pub days_ago: u32,
    /// Occupancy (%) in the morning.
    pub occupancy_pct: f64,
    pub street_rate: f64,
    /// Move-ins of the day, where the data counts them per unit type.
    pub move_ins: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EarlierReading {
    pub days_ago: u32,
    pub occupancy_pct: Option<f64>,
    pub street_rate: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PromotionInput {
    pub name: String,
    pub depth_pct: f64,
    /// A size (`10x10`), a size and tier, or `all`.
    pub applies_to: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(as = PricingAction)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Raise,
    Hold,
    Lower,
}

/// One factor's share of the change, in percentage points of the current rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(as = PricingFactor)]
pub struct Factor {
    pub name: String,
    pub contribution_pct: f64,
    pub detail: String,
}

/// A guardrail that changed the recommendation: the rate before and after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(as = PricingGuardrail)]
pub struct Guardrail {
    pub name: String,
    pub before: f64,
    pub after: f64,
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Recommendation {
    pub size: String,
    pub tier: String,
    pub mode: Mode,
    pub current_rate: f64,
    pub recommended_rate: f64,
    pub change_amount: f64,
    pub change_pct: f64,
    pub action: Action,
    pub confidence: f64,
    /// Occupancy the factors used (the unit type's, else the facility's).
    pub occupancy_pct: Option<f64>,
    pub factors: Vec<Factor>,
    pub guardrails: Vec<Guardrail>,
    pub competitor_band: Option<CompetitorBand>,
    /// The competitor set the band was built from (the tier's own, the size's, or the size's
    /// adjusted by the tier premium); null without a band.
    #[serde(default)]
    pub competitor_set: Option<CompetitorSet>,
    /// Set when this climate-controlled unit type would have been recommended below a plain
    /// tier of its size and was held at that tier's recommendation.
    #[serde(default)]
    pub tier_inversion: Option<TierInversion>,
}
