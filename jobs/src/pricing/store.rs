//! Reading a facility's engine inputs from the database, and storing and reading
//! recommendation runs.

use crate::error::{Error, Result, ValidationError};
use chrono::{DateTime, Datelike, NaiveDate, Utc};
use domain::pricing::band::CompetitorObservation;
use domain::pricing::engine::{
    self, EarlierReading, FacilityInput, Mode, PromotionInput, UnitTypeInput,
};
use domain::pricing::seasonality::{self, SeasonalIndex};
use domain::pricing::settings::PricingSettings;
use serde::Serialize;
use serde_json::{json, Value};
use sqlx::PgConnection;
use uuid::Uuid;

/// Own months of move-in history needed before the seasonality profile is the facility's own.
pub const SEASONALITY_MIN_OWN_MONTHS: usize = 6;
/// Snapshots a month needs to count as a month of own history.
pub const SEASONALITY_MIN_DAYS_PER_MONTH: i64 = 20;

/// What asked for a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    Api,
    Sync,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Api => "api",
            Self::Sync => "sync",
        }
    }
}

/// A stored run, as the API shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[schema(as = RecommendationRun)]
pub struct Run {
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
    /// What caused the run: `api` (a request) or `sync` (a new snapshot).
    pub trigger: String,
    /// `lease_up` or `stabilized`.
    pub mode: String,
    /// Recommendations in the run.
    pub per_size_count: i32,
    /// Per size and tier: current and recommended rate, action, confidence, factors and guardrails.
    pub recommendations: Value,
    /// The inputs the engine read, as it read them.
    pub inputs: Value,
    /// The settings in force for the run.
    pub settings: Value,
}

/// The facility's settings: defaults with its overrides.
pub async fn settings_of(
    conn: &mut PgConnection,
    company_id: Uuid,
    facility_id: Uuid,
) -> Result<(PricingSettings, Value)> {
    let overrides = sqlx::query_scalar!(
        "SELECT pricing_settings FROM facilities WHERE company_id = $1 AND id = $2",
        company_id,
        facility_id
    )
    .fetch_optional(&mut *conn)
    .await?
    .ok_or_else(|| Error::not_found(format!("no facility with id {facility_id}")))?;
    let settings = PricingSettings::with_overrides(&overrides)?;
    Ok((settings, overrides))
}

/// Replaces the facility's overrides (checked first) and returns the settings in force.
pub async fn set_overrides(
    conn: &mut PgConnection,
    company_id: Uuid,
    facility_id: Uuid,
    overrides: &Value,
) -> Result<PricingSettings> {
    let settings = PricingSettings::with_overrides(overrides)?;
    let updated = sqlx::query!(
        "UPDATE facilities SET pricing_settings = $3, updated_at = now()
         WHERE company_id = $1 AND id = $2",
        company_id,
        facility_id,
        overrides
    )
    .execute(&mut *conn)
    .await?;
    if updated.rows_affected() == 0 {
        return Err(Error::not_found(format!(
            "no facility with id {facility_id}"
        )));
    }
    Ok(settings)
}

/// Everything the engine needs for one facility, read as of its latest snapshot.
pub struct Loaded {
    pub facility_name: String,
    pub input: FacilityInput,
    pub settings: PricingSettings,
    /// A summary of the inputs, stored with the run.
    pub summary: Value,
}

pub async fn load(conn: &mut PgConnection, company_id: Uuid, facility_id: Uuid) -> Result<Loaded> {
    let facility = sqlx::query!(
        "SELECT name, mode, pricing_settings FROM facilities WHERE company_id = $1 AND id = $2",
        company_id,
        facility_id
    )
    .fetch_optional(&mut *conn)
    .await?
    .ok_or_else(|| Error::not_found(format!("no facility with id {facility_id}")))?;
    let settings = PricingSettings::with_overrides(&facility.pricing_settings)?;
    let snap = sqlx::query!(
        "SELECT id, snapshot_date, occupancy_pct, move_ins_mtd, move_ins_target_monthly, promotions
         FROM sync_records WHERE facility_id = $1 ORDER BY snapshot_date DESC LIMIT 1",
        facility_id
    )
    .fetch_optional(&mut *conn)
    .await?
    .ok_or_else(|| {
        ValidationError::new(
            "facility",
            "has no snapshot yet: push a sync or upload unit rates before asking for recommendations",
        )
    })?;
    let as_of = snap.snapshot_date;

    // Only a change inside the cooldown or the reversal window matters, so only that window
    // (and the day before it, for the comparison) is read.
    let change_window = settings.cooldown_days.max(settings.reversal_window_days) + 1;
    let changes = sqlx::query!(
        r#"SELECT DISTINCT ON (size, tier) size AS "size!", tier AS "tier!",
                  snapshot_date AS "changed_on!", street_rate > prev AS "raised!"
           FROM (SELECT size, tier, snapshot_date, street_rate,
                        lag(street_rate) OVER (PARTITION BY size, tier ORDER BY snapshot_date) AS prev
                 FROM sync_unit_types
                 WHERE facility_id = $1 AND snapshot_date BETWEEN $2::date - $3::int AND $2::date) t
           WHERE prev IS NOT NULL AND prev <> street_rate
           ORDER BY size, tier, snapshot_date DESC"#,
        facility_id,
        as_of,
        i32::try_from(change_window).unwrap_or(i32::MAX)
    )
    .fetch_all(&mut *conn)
    .await?;
    // The reading the trend is measured from: the nearest snapshot at least
    // `occupancy_trend_days` back (up to two weeks further), else the oldest one at least a
    // week back, so a young facility still gets a trend and an anchor.
    let trend_days = i32::try_from(settings.occupancy_trend_days).unwrap_or(i32::MAX);
    let earlier = sqlx::query!(
        r#"SELECT DISTINCT ON (size, tier) size, tier, snapshot_date, occupancy_pct, street_rate
           FROM sync_unit_types
           WHERE facility_id = $1
             AND snapshot_date BETWEEN $2::date - ($3::int + 14) AND $2::date - 7
           ORDER BY size, tier, (snapshot_date <= $2::date - $3::int) DESC,
                    CASE WHEN snapshot_date <= $2::date - $3::int THEN snapshot_date END DESC,
                    snapshot_date"#,
        facility_id,
        as_of,
        trend_days
    )
    .fetch_all(&mut *conn)
    .await?;
    let unit_types: Vec<UnitTypeInput> = sqlx::query!(
        "SELECT size, tier, street_rate, occupancy_pct, total_units
         FROM sync_unit_types WHERE sync_id = $1 ORDER BY width_ft * depth_ft, size, tier",
        snap.id
    )
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|u| {
        let change = changes
            .iter()
            .find(|c| c.size == u.size && c.tier == u.tier);
        UnitTypeInput {
            last_rate_change: change.map(|c| c.changed_on),
            last_change_raised: change.map(|c| c.raised),
            earlier: earlier
                .iter()
                .find(|e| e.size == u.size && e.tier == u.tier)
                .map(|e| EarlierReading {
                    days_ago: u32::try_from((as_of - e.snapshot_date).num_days()).unwrap_or(0),
                    occupancy_pct: e.occupancy_pct,
                    street_rate: e.street_rate,
                }),
            size: u.size,
            tier: u.tier,
            street_rate: u.street_rate,
            occupancy_pct: u.occupancy_pct,
            total_units: u.total_units.and_then(|n| u32::try_from(n).ok()),
        }
    })
    .collect();

    // The band counts each competitor's latest observation per size: only those are read.
    let competitors: Vec<(String, CompetitorObservation)> = sqlx::query!(
        "SELECT DISTINCT ON (size, lower(btrim(competitor)))
                size, competitor, rate, promo, observed_on
         FROM competitor_rates
         WHERE facility_id = $1 AND observed_on BETWEEN $2::date - $3::int AND $2::date
         ORDER BY size, lower(btrim(competitor)), observed_on DESC, id DESC",
        facility_id,
        as_of,
        i32::try_from(settings.competitor_max_age_days).unwrap_or(i32::MAX)
    )
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|r| {
        (
            r.size,
            CompetitorObservation {
                competitor: r.competitor,
                rate: r.rate,
                promo: r.promo,
                observed_on: r.observed_on,
            },
        )
    })
    .collect();

    let history = sqlx::query!(
        r#"SELECT count(*) AS "days!", min(snapshot_date) AS first FROM sync_records
           WHERE facility_id = $1 AND snapshot_date <= $2"#,
        facility_id,
        as_of
    )
    .fetch_one(&mut *conn)
    .await?;
    // Move-ins of each complete month (its last month-to-date figure), summed per calendar month.
    let months = sqlx::query!(
        r#"SELECT extract(month FROM mon)::int AS "month!", sum(mi)::float8 AS "total!",
                  count(*)::int AS "months!"
           FROM (SELECT date_trunc('month', snapshot_date) AS mon, max(move_ins_mtd) AS mi
                 FROM sync_records
                 WHERE facility_id = $1 AND move_ins_mtd IS NOT NULL
                   AND snapshot_date < date_trunc('month', $2::date)
                   AND snapshot_date >= date_trunc('month', $2::date) - interval '36 months'
                 GROUP BY 1 HAVING count(*) >= $3) t
           GROUP BY 1"#,
        facility_id,
        as_of,
        SEASONALITY_MIN_DAYS_PER_MONTH
    )
    .fetch_all(&mut *conn)
    .await?;
    let per_month: Vec<(u32, f64, u32)> = months
        .iter()
        .map(|m| {
            (
                u32::try_from(m.month).unwrap_or(0),
                m.total,
                u32::try_from(m.months).unwrap_or(0),
            )
        })
        .collect();
    let (profile, own_months) = seasonality::profile(&per_month, SEASONALITY_MIN_OWN_MONTHS);
    let month_ix = as_of.month0() as usize;
    let season = SeasonalIndex {
        index: profile[month_ix],
        own_data: own_months > 0,
    };

    let promotions: Vec<PromotionInput> = snap
        .promotions
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| {
                    Some(PromotionInput {
                        name: p.get("name")?.as_str()?.to_owned(),
                        depth_pct: p.get("depth_pct").and_then(Value::as_f64).unwrap_or(0.0),
                        applies_to: p
                            .get("applies_to")
                            .and_then(Value::as_str)
                            .unwrap_or("all")
                            .to_owned(),
                    })
                })
                .collect()
        })
        .unwrap_or_default();

    let mode = Mode::from_stored(&facility.mode);
    let history_days = u32::try_from(history.days).unwrap_or(u32::MAX);
    let summary = json!({
        "snapshot_date": as_of,
        "mode": mode,
        "unit_types": unit_types.len(),
        "competitor_observations": competitors.len(),
        "history_days": history_days,
        "first_snapshot_date": history.first,
        "seasonality": {
            "month": as_of.month(),
            "index": (season.index * 10_000.0).round() / 10_000.0,
            "source": if season.own_data { "own_history" } else { "national_prior" },
            "own_months": own_months,
        },
        "promotions": promotions.len(),
    });
    Ok(Loaded {
        facility_name: facility.name,
        input: FacilityInput {
            as_of,
            mode,
            occupancy_pct: snap.occupancy_pct,
            move_ins_mtd: snap.move_ins_mtd.map(f64::from),
            move_ins_target_monthly: snap.move_ins_target_monthly.map(f64::from),
            seasonality: season,
            history_days,
            unit_types,
            promotions,
            competitors,
        },
        settings,
        summary,
    })
}

/// A stored run and the webhook delivery jobs it recorded (to push after commit).
pub struct Stored {
    pub run: Run,
    pub delivery_jobs: Vec<Uuid>,
}

/// Runs the engine on the facility's latest snapshot and stores the run, in the caller's
/// transaction, with a `recommendations.ready` delivery per subscription of the company.
/// `id` is the run id (a job's id, so a job delivered twice stores one run and its
/// deliveries once).
pub async fn run_and_store(
    conn: &mut PgConnection,
    company_id: Uuid,
    facility_id: Uuid,
    id: Uuid,
    trigger: Trigger,
) -> Result<Stored> {
    let loaded = load(conn, company_id, facility_id).await?;
    let recs = engine::recommend(&loaded.input, &loaded.settings);
    let recommendations = serde_json::to_value(&recs)
        .map_err(|e| Error::Internal(format!("recommendations could not be encoded: {e}")))?;
    let settings = serde_json::to_value(loaded.settings)
        .map_err(|e| Error::Internal(format!("settings could not be encoded: {e}")))?;
    let mode = loaded.input.mode.as_str();
    let per_size_count = i32::try_from(recs.len()).unwrap_or(i32::MAX);
    let generated_at = sqlx::query_scalar!(
        "INSERT INTO recommendation_runs (id, company_id, facility_id, generated_at, engine_version,
             snapshot_date, trigger, mode, per_size_count, settings, inputs, recommendations)
         VALUES ($1, $2, $3, date_trunc('milliseconds', now()), $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (id) DO UPDATE SET id = EXCLUDED.id
         RETURNING generated_at",
        id,
        company_id,
        facility_id,
        engine::ENGINE_VERSION,
        loaded.input.as_of,
        trigger.as_str(),
        mode,
        per_size_count,
        settings,
        loaded.summary,
        recommendations
    )
    .fetch_one(&mut *conn)
    .await?;
    let delivery_jobs = crate::webhooks::record_recommendations_ready(
        conn,
        &crate::webhooks::RecommendationsReady {
            company_id,
            facility_id,
            facility_name: loaded.facility_name.clone(),
            recommendation_id: id,
            generated_at,
            per_size_count,
        },
    )
    .await?;
    let run = Run {
        recommendation_id: id,
        facility_id,
        facility_name: loaded.facility_name,
        generated_at,
        engine_version: engine::ENGINE_VERSION.to_owned(),
        snapshot_date: loaded.input.as_of,
        trigger: trigger.as_str().to_owned(),
        mode: mode.to_owned(),
        per_size_count,
        recommendations,
        inputs: loaded.summary,
        settings,
    };
    Ok(Stored { run, delivery_jobs })
}

/// The latest stored run of a facility; `None` when it has none.
pub async fn latest(
    conn: &mut PgConnection,
    company_id: Uuid,
    facility_id: Uuid,
) -> Result<Option<Run>> {
    fetch_run(conn, company_id, facility_id, None).await
}

/// One run of a facility of the company (the latest when `run_id` is `None`).
async fn fetch_run(
    conn: &mut PgConnection,
    company_id: Uuid,
    facility_id: Uuid,
    run_id: Option<Uuid>,
) -> Result<Option<Run>> {
    Ok(sqlx::query_as!(
        Run,
        r#"SELECT r.id AS recommendation_id, r.facility_id, f.name AS facility_name, r.generated_at,
                  r.engine_version, r.snapshot_date, r.trigger, r.mode, r.per_size_count,
                  r.recommendations, r.inputs, r.settings
           FROM recommendation_runs r JOIN facilities f ON f.id = r.facility_id
           WHERE r.company_id = $1 AND r.facility_id = $2 AND ($3::uuid IS NULL OR r.id = $3)
           ORDER BY r.generated_at DESC, r.id DESC LIMIT 1"#,
        company_id,
        facility_id,
        run_id
    )
    .fetch_optional(&mut *conn)
    .await?)
}

/// One stored run in a facility's run history: when, why, on which snapshot, and how many
/// sizes it would raise, hold or lower.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[schema(as = RecommendationRunSummary)]
pub struct RunSummary {
    /// Id of the run.
    pub recommendation_id: Uuid,
    /// When the run was made (ISO 8601 UTC, milliseconds).
    #[serde(serialize_with = "domain::values::millis")]
    pub generated_at: DateTime<Utc>,
    /// Version of the pricing engine.
    pub engine_version: String,
    /// Date of the snapshot the run priced.
    pub snapshot_date: NaiveDate,
    /// What caused the run.
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

/// A facility's stored runs, newest first, at most `limit`; with `after_run`, those that come
/// after that run in this order (the next page). The caller checks that the facility is the
/// company's.
pub async fn list_runs(
    conn: &mut PgConnection,
    company_id: Uuid,
    facility_id: Uuid,
    limit: i64,
    after_run: Option<Uuid>,
) -> Result<Vec<RunSummary>> {
    Ok(sqlx::query_as!(
        RunSummary,
        r#"SELECT r.id AS recommendation_id, r.generated_at, r.engine_version, r.snapshot_date,
                  r.trigger, r.mode, r.per_size_count,
                  count(*) FILTER (WHERE e->>'action' = 'raise') AS "raise!",
                  count(*) FILTER (WHERE e->>'action' = 'hold') AS "hold!",
                  count(*) FILTER (WHERE e->>'action' = 'lower') AS "lower!"
           FROM recommendation_runs r
           LEFT JOIN LATERAL jsonb_array_elements(r.recommendations) e ON true
           WHERE r.company_id = $1 AND r.facility_id = $2
             AND ($3::uuid IS NULL OR (r.generated_at, r.id) < (
                   SELECT c.generated_at, c.id FROM recommendation_runs c
                   WHERE c.id = $3 AND c.facility_id = $2))
           GROUP BY r.id
           ORDER BY r.generated_at DESC, r.id DESC
           LIMIT $4"#,
        company_id,
        facility_id,
        after_run,
        limit
    )
    .fetch_all(&mut *conn)
    .await?)
}

/// The latest run of each facility of the company that has one, summarised.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct LatestRun {
    pub facility_id: Uuid,
    #[serde(flatten)]
    pub run: RunSummary,
}

/// The latest run of every facility of the company (facilities without a run are left out),
/// in one statement: the portfolio's recommendation summary.
pub async fn latest_runs(conn: &mut PgConnection, company_id: Uuid) -> Result<Vec<LatestRun>> {
    let rows = sqlx::query!(
        r#"SELECT f.id AS "facility_id!", r.id AS "recommendation_id!", r.generated_at AS "generated_at!",
                  r.engine_version AS "engine_version!", r.snapshot_date AS "snapshot_date!",
                  r.trigger AS "trigger!", r.mode AS "mode!", r.per_size_count AS "per_size_count!",
                  c.raise AS "raise!", c.hold AS "hold!", c.lower AS "lower!"
           FROM facilities f
           CROSS JOIN LATERAL (
               SELECT * FROM recommendation_runs x
               WHERE x.facility_id = f.id AND x.company_id = $1
               ORDER BY x.generated_at DESC, x.id DESC LIMIT 1) r
           CROSS JOIN LATERAL (
               SELECT count(*) FILTER (WHERE e->>'action' = 'raise') AS raise,
                      count(*) FILTER (WHERE e->>'action' = 'hold') AS hold,
                      count(*) FILTER (WHERE e->>'action' = 'lower') AS lower
               FROM jsonb_array_elements(r.recommendations) e) c
           WHERE f.company_id = $1
           ORDER BY f.id"#,
        company_id
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| LatestRun {
            facility_id: r.facility_id,
            run: RunSummary {
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
            },
        })
        .collect())
}

/// One stored run of a facility of the company; `None` when there is no such run.
pub async fn run(
    conn: &mut PgConnection,
    company_id: Uuid,
    facility_id: Uuid,
    run_id: Uuid,
) -> Result<Option<Run>> {
    fetch_run(conn, company_id, facility_id, Some(run_id)).await
}
