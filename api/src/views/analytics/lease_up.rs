//! `GET /api/v1/analytics/lease-up` (see `jobs::analytics::reports::lease_up`).

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;
use uuid::Uuid;

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = LeaseUpEvent)]
pub(crate) struct Event {
    /// Snapshot date that changed the mode.
    pub date: NaiveDate,
    /// Mode before.
    pub from: String,
    /// Mode after.
    pub to: String,
    /// Occupancy that caused the change, percent.
    pub occupancy_pct: f64,
    /// When the change was recorded.
    pub recorded_at: DateTime<Utc>,
}

impl From<jobs::analytics::reports::lease_up::Event> for Event {
    fn from(r: jobs::analytics::reports::lease_up::Event) -> Self {
        Self {
            date: r.date,
            from: r.from,
            to: r.to,
            occupancy_pct: r.occupancy_pct,
            recorded_at: r.recorded_at,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = LeaseUpFillSuggestion)]
pub(crate) struct Fill {
    /// Unit size.
    pub size: String,
    /// The unit type's tier (empty when it has none) when the size's competitor rates name a
    /// tier: each unit type of the size then has a suggestion of its own, from its band as the
    /// pricing engine builds it. Null for a suggestion for the size as a whole.
    pub tier: Option<String>,
    /// The competitor set of a unit type's band: `tier` (its tier's own rates),
    /// `size_adjusted` (the size's rates, the other class's converted by the tier premium) or
    /// `size`, as a run's `competitor_set.source`. Null for the size as a whole.
    pub competitor_set_source: Option<domain::pricing::tiers::SetSource>,
    /// Current street rate, currency per month.
    pub street_rate: f64,
    /// Suggested street rate, at or below the competitor P25.
    pub suggested_rate: f64,
    /// Competitor 25th percentile.
    pub competitor_p25: f64,
    /// lease_up_floor_share x street rate.
    pub floor: f64,
    /// True when the floor, not the percentile, set the rate.
    pub floor_applied: bool,
    /// Competitors counted.
    pub competitors: usize,
    /// Of which stale.
    pub stale_competitors: usize,
    /// The pricing engine's recommended street rate for the size in the facility's latest run
    /// (the mean of its tiers'), or for the unit type when the suggestion is one's; null when
    /// no run covers it.
    pub engine_rate: Option<f64>,
    /// Whether the suggestion and the engine agree, and why they differ when they do.
    pub engine_note: String,
}

impl From<jobs::analytics::reports::lease_up::Fill> for Fill {
    fn from(r: jobs::analytics::reports::lease_up::Fill) -> Self {
        Self {
            size: r.size,
            tier: r.tier,
            competitor_set_source: r.competitor_set_source,
            street_rate: r.street_rate,
            suggested_rate: r.suggested_rate,
            competitor_p25: r.competitor_p25,
            floor: r.floor,
            floor_applied: r.floor_applied,
            competitors: r.competitors,
            stale_competitors: r.stale_competitors,
            engine_rate: r.engine_rate,
            engine_note: r.engine_note,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = LeaseUpFacility)]
pub(crate) struct FacilityOut {
    /// The facility.
    pub facility_id: Uuid,
    /// The facility's name.
    pub facility_name: String,
    /// `lease_up` or `stabilized`.
    pub mode: String,
    /// Latest occupancy, percent.
    pub occupancy_pct: Option<f64>,
    /// Date of the latest snapshot.
    pub as_of: Option<NaiveDate>,
    /// Mode changes, newest first.
    pub events: Vec<Event>,
    /// Per-size fill suggestions, when in lease-up.
    pub fill_suggestions: Vec<Fill>,
    /// Sizes in lease-up without a suggestion, and why.
    pub sizes_without_suggestion: Vec<SizeReason>,
    /// Why there are no suggestions, when there are none.
    pub reason: Option<String>,
}

impl From<jobs::analytics::reports::lease_up::FacilityOut> for FacilityOut {
    fn from(r: jobs::analytics::reports::lease_up::FacilityOut) -> Self {
        Self {
            facility_id: r.facility_id,
            facility_name: r.facility_name,
            mode: r.mode,
            occupancy_pct: r.occupancy_pct,
            as_of: r.as_of,
            events: r.events.into_iter().map(Into::into).collect(),
            fill_suggestions: r.fill_suggestions.into_iter().map(Into::into).collect(),
            sizes_without_suggestion: r
                .sizes_without_suggestion
                .into_iter()
                .map(Into::into)
                .collect(),
            reason: r.reason,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = LeaseUpSizeReason)]
pub(crate) struct SizeReason {
    /// Unit size.
    pub size: String,
    /// The unit type's tier when the size's competitor rates name a tier (as a suggestion's);
    /// null for the size as a whole.
    pub tier: Option<String>,
    /// Why it has no suggestion.
    pub reason: String,
}

impl From<jobs::analytics::reports::lease_up::SizeReason> for SizeReason {
    fn from(r: jobs::analytics::reports::lease_up::SizeReason) -> Self {
        Self {
            size: r.size,
            tier: r.tier,
            reason: r.reason,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = LeaseUpThresholds)]
pub(crate) struct Thresholds {
    /// Occupancy below which a facility enters lease-up, percent.
    pub enter_below_pct: f64,
    /// Occupancy at or above which it leaves, percent.
    pub leave_at_or_above_pct: f64,
}

impl From<jobs::analytics::reports::lease_up::Thresholds> for Thresholds {
    fn from(r: jobs::analytics::reports::lease_up::Thresholds) -> Self {
        Self {
            enter_below_pct: r.enter_below_pct,
            leave_at_or_above_pct: r.leave_at_or_above_pct,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = LeaseUpReport)]
pub(crate) struct Report {
    /// When a facility enters and leaves lease-up.
    pub thresholds: Thresholds,
    /// Facilities in lease-up now.
    pub facilities_in_lease_up: usize,
    /// Per facility.
    pub facilities: Vec<FacilityOut>,
}

impl From<jobs::analytics::reports::lease_up::Report> for Report {
    fn from(r: jobs::analytics::reports::lease_up::Report) -> Self {
        Self {
            thresholds: r.thresholds.into(),
            facilities_in_lease_up: r.facilities_in_lease_up,
            facilities: r.facilities.into_iter().map(Into::into).collect(),
        }
    }
}
