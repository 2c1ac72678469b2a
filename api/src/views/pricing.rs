//! What the pricing routes answer: stored recommendation runs, the run history and a facility's
//! daily history, built from the rows `jobs::pricing` returns.

use chrono::{DateTime, NaiveDate, Utc};
use domain::values::Currency;
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

/// A stored run, as the API shows it.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = RecommendationRun)]
pub(crate) struct Run {
    /// Id of the run.
    pub recommendation_id: Uuid,
    /// The facility.
    pub facility_id: Uuid,
    /// The facility's name.
    pub facility_name: String,
    /// When the run was made (ISO 8601 UTC, milliseconds).
    #[serde(serialize_with = "domain::values::millis")]
    pub generated_at: DateTime<Utc>,
    /// Version of the pricing engine.
    pub engine_version: String,
    /// Date of the snapshot the run priced.
    pub snapshot_date: NaiveDate,
    /// What caused the run: `api` (a request), `dashboard` ("Run now" on the facility's page)
    /// or `sync` (a new snapshot).
    pub trigger: String,
    /// `lease_up` or `stabilized`.
    pub mode: String,
    /// Recommendations in the run.
    pub per_size_count: i32,
    /// Per size and tier: current and recommended rate, action, confidence, factors and
    /// guardrails. Each factor's and guardrail's `detail` writes its amounts in the company's
    /// currency as it is when the run is read (`target $72.93`).
    pub recommendations: Value,
    /// The inputs the engine read, as it read them.
    pub inputs: Value,
    /// The settings in force for the run.
    pub settings: Value,
    /// The unit types the run started from an approved rate that no snapshot showed yet
    /// (accepted or overridden, `pending`): the engine took it as the current rate, changed on
    /// the decision's day (so the cooldown and the reversal window count from it). Also in
    /// `inputs.pending_approved_rates`.
    pub pending_approved_rates: Vec<PendingApprovedRate>,
    /// The climate-controlled unit types the engine would have recommended below a plain
    /// tier of their size, each held at that tier's recommendation, with the reason (also in
    /// the recommendation's `tier_inversion` and its `tier_order` guardrail). Empty when no
    /// size is inverted, and in runs of engines before 2026.11.9.
    pub tier_inversions: Vec<TierInversion>,
}

/// A climate-controlled unit type held at the recommendation of a plain tier of its size.
#[derive(Serialize, serde::Deserialize, utoipa::ToSchema)]
pub(crate) struct TierInversion {
    /// Unit size.
    pub size: String,
    /// The climate-controlled tier.
    pub tier: String,
    /// The plain tier it fell below.
    pub plain_tier: String,
    /// That tier's recommendation.
    pub plain_rate: f64,
    /// What the other rules recommended for this unit type.
    pub recommended_rate: f64,
    /// Where it is held: the plain tier's recommendation.
    pub held_at: f64,
    /// The reason, its amounts in the company's currency.
    pub reason: String,
}

/// The run's held inversions, read from its (already currency-written) recommendations.
fn tier_inversions(recommendations: &Value) -> Vec<TierInversion> {
    recommendations
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|rec| {
            let mut flag = rec.get("tier_inversion")?.as_object()?.clone();
            flag.insert("size".into(), rec.get("size")?.clone());
            flag.insert("tier".into(), rec.get("tier")?.clone());
            serde_json::from_value(Value::Object(flag)).ok()
        })
        .collect()
}

/// A unit type the run started from an approved rate instead of its snapshot's rate.
#[derive(Serialize, serde::Deserialize, utoipa::ToSchema)]
pub(crate) struct PendingApprovedRate {
    /// Unit size.
    pub size: String,
    /// Tier; empty when none.
    pub tier: String,
    /// The street rate of the snapshot the run priced.
    pub snapshot_rate: f64,
    /// The approved rate the run started from.
    pub approved_rate: f64,
    /// When it was approved (ISO 8601 UTC, milliseconds).
    pub decided_at: String,
}

impl Run {
    /// The stored run `r` as answered, its explanations in `currency`.
    pub fn of(r: jobs::pricing::Run, currency: Currency) -> Self {
        // Runs stored before decisions existed carry none.
        let pending_approved_rates = r
            .inputs
            .get("pending_approved_rates")
            .cloned()
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        let recommendations = details_in(r.recommendations, currency);
        Self {
            pending_approved_rates,
            tier_inversions: tier_inversions(&recommendations),
            recommendation_id: r.recommendation_id,
            facility_id: r.facility_id,
            facility_name: r.facility_name,
            generated_at: r.generated_at,
            engine_version: r.engine_version,
            snapshot_date: r.snapshot_date,
            trigger: r.trigger,
            mode: r.mode,
            per_size_count: r.per_size_count,
            recommendations,
            inputs: r.inputs,
            settings: r.settings,
        }
    }
}

/// The stored recommendations with each factor's and guardrail's `detail` in `currency`: the
/// engine stores them without one, and the company may change its currency after the run.
fn details_in(mut recommendations: Value, currency: Currency) -> Value {
    for rec in recommendations.as_array_mut().into_iter().flatten() {
        for list in ["factors", "guardrails"] {
            let items = rec.get_mut(list).and_then(Value::as_array_mut);
            for item in items.into_iter().flatten() {
                if let Some(Value::String(detail)) = item.get_mut("detail") {
                    *detail = domain::prose::with_money(detail, currency);
                }
            }
        }
        let flag = rec
            .get_mut("tier_inversion")
            .and_then(|f| f.get_mut("reason"));
        if let Some(Value::String(reason)) = flag {
            *reason = domain::prose::with_money(reason, currency);
        }
    }
    recommendations
}

/// One stored run in a facility's run history: when, why, on which snapshot, and how many
/// sizes it would raise, hold or lower.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = RecommendationRunSummary)]
pub(crate) struct RunSummary {
    /// Id of the run.
    pub recommendation_id: Uuid,
    /// When the run was made (ISO 8601 UTC, milliseconds).
    #[serde(serialize_with = "domain::values::millis")]
    pub generated_at: DateTime<Utc>,
    /// Version of the pricing engine.
    pub engine_version: String,
    /// Date of the snapshot the run priced.
    pub snapshot_date: NaiveDate,
    /// What caused the run: `api`, `dashboard` or `sync`.
    pub trigger: String,
    /// `lease_up` or `stabilized`.
    pub mode: String,
    /// Recommendations in the run.
    pub per_size_count: i32,
    /// Recommendations to raise.
    pub raise: i64,
    /// Recommendations to hold.
    pub hold: i64,
    /// Recommendations to lower.
    pub lower: i64,
}

impl From<jobs::pricing::RunSummary> for RunSummary {
    fn from(r: jobs::pricing::RunSummary) -> Self {
        Self {
            recommendation_id: r.recommendation_id,
            generated_at: r.generated_at,
            engine_version: r.engine_version,
            snapshot_date: r.snapshot_date,
            trigger: r.trigger,
            mode: r.mode,
            per_size_count: r.per_size_count,
            raise: r.raise,
            hold: r.hold,
            lower: r.lower,
        }
    }
}

/// The latest run of each facility of the company that has one, summarised.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct LatestRun {
    pub facility_id: Uuid,
    #[serde(flatten)]
    pub run: RunSummary,
}

impl From<jobs::pricing::LatestRun> for LatestRun {
    fn from(r: jobs::pricing::LatestRun) -> Self {
        Self {
            facility_id: r.facility_id,
            run: r.run.into(),
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = FacilityHistory)]
pub(crate) struct History {
    /// The facility.
    pub facility_id: Uuid,
    /// First and last day of the range asked for (the last is the latest snapshot).
    pub from: Option<NaiveDate>,
    /// Last day of the range (the latest snapshot).
    pub to: Option<NaiveDate>,
    /// One entry per snapshot day, oldest first.
    pub days: Vec<Day>,
    /// Street rate per unit type and day.
    pub unit_types: Vec<UnitTypeSeries>,
    /// Competitor band per size and day; where the size's competitor rates name a tier, one
    /// band per tier of the size's unit types, built as the pricing engine builds it.
    pub competitor_bands: Vec<BandSeries>,
    /// The decisions made on the facility (ECRI batches, street rates) since the range's first
    /// day, newest first, each with who made it; every decision when it has no snapshot.
    pub decisions: Vec<super::decisions::DecisionEntry>,
}

impl From<jobs::pricing::history::History> for History {
    fn from(r: jobs::pricing::history::History) -> Self {
        Self {
            facility_id: r.facility_id,
            from: r.from,
            to: r.to,
            days: r.days.into_iter().map(Into::into).collect(),
            unit_types: r.unit_types.into_iter().map(Into::into).collect(),
            competitor_bands: r.competitor_bands.into_iter().map(Into::into).collect(),
            decisions: r.decisions.into_iter().map(Into::into).collect(),
        }
    }
}

/// One snapshot day of the facility.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = HistoryDay)]
pub(crate) struct Day {
    /// The day.
    pub date: NaiveDate,
    /// Facility occupancy, percent.
    pub occupancy_pct: Option<f64>,
    /// Move-ins on the day.
    pub move_ins_daily: Option<i32>,
    /// Move-ins this month to the day.
    pub move_ins_mtd: Option<i32>,
    /// The month's move-in target.
    pub move_ins_target_monthly: Option<i32>,
    /// The monthly target times the share of the month gone by this day.
    pub move_ins_target_to_date: Option<f64>,
}

impl From<jobs::pricing::history::Day> for Day {
    fn from(r: jobs::pricing::history::Day) -> Self {
        Self {
            date: r.date,
            occupancy_pct: r.occupancy_pct,
            move_ins_daily: r.move_ins_daily,
            move_ins_mtd: r.move_ins_mtd,
            move_ins_target_monthly: r.move_ins_target_monthly,
            move_ins_target_to_date: r.move_ins_target_to_date,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = HistoryUnitType)]
pub(crate) struct UnitTypeSeries {
    /// Unit size.
    pub size: String,
    /// Tier; empty when none.
    pub tier: String,
    /// Rate per day, oldest first.
    pub points: Vec<UnitTypePoint>,
}

impl From<jobs::pricing::history::UnitTypeSeries> for UnitTypeSeries {
    fn from(r: jobs::pricing::history::UnitTypeSeries) -> Self {
        Self {
            size: r.size,
            tier: r.tier,
            points: r.points.into_iter().map(Into::into).collect(),
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = HistoryUnitTypePoint)]
pub(crate) struct UnitTypePoint {
    /// The day.
    pub date: NaiveDate,
    /// Street rate, currency per month.
    pub street_rate: f64,
    /// Occupancy of the unit type, percent.
    pub occupancy_pct: Option<f64>,
}

impl From<jobs::pricing::history::UnitTypePoint> for UnitTypePoint {
    fn from(r: jobs::pricing::history::UnitTypePoint) -> Self {
        Self {
            date: r.date,
            street_rate: r.street_rate,
            occupancy_pct: r.occupancy_pct,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = HistoryBand)]
pub(crate) struct BandSeries {
    /// Unit size.
    pub size: String,
    /// The tier of the size's unit types this band is of (empty for a unit type without one),
    /// when the size's competitor rates name a tier: each is banded as the pricing engine bands
    /// it (its tier's own rates, else the size's converted by the tier premium). Null for the
    /// band of the size's whole set.
    pub tier: Option<String>,
    /// The band per day, oldest first.
    pub points: Vec<BandPoint>,
}

impl From<jobs::pricing::history::BandSeries> for BandSeries {
    fn from(r: jobs::pricing::history::BandSeries) -> Self {
        Self {
            size: r.size,
            tier: r.tier,
            points: r.points.into_iter().map(Into::into).collect(),
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = HistoryBandPoint)]
pub(crate) struct BandPoint {
    /// The day.
    pub date: NaiveDate,
    /// 25th percentile of the effective competitor rates.
    pub p25: f64,
    /// Median of the effective competitor rates.
    pub median: f64,
    /// 75th percentile of the effective competitor rates.
    pub p75: f64,
    /// Competitors counted.
    pub competitors: usize,
    /// Of which stale.
    pub stale: usize,
}

impl From<jobs::pricing::history::BandPoint> for BandPoint {
    fn from(r: jobs::pricing::history::BandPoint) -> Self {
        Self {
            date: r.date,
            p25: r.p25,
            median: r.median,
            p75: r.p75,
            competitors: r.competitors,
            stale: r.stale,
        }
    }
}
