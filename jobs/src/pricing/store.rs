//! Storing and reading recommendation runs. A run's inputs are read by `super::inputs`.

use crate::error::{Error, Result};
use chrono::{DateTime, NaiveDate, Utc};
use domain::ids::{CompanyId, FacilityId, RunId};
use domain::pricing::engine;
use serde::Serialize;
use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

pub use super::inputs::Loaded;
pub(crate) use super::inputs::{load, settings_of};

/// What asked for a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    Api,
    Sync,
    /// "Run now" on the facility's dashboard page.
    Dashboard,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Api => "api",
            Self::Sync => "sync",
            Self::Dashboard => "dashboard",
        }
    }
}

/// A stored run, as the API shows it.
#[derive(Debug, Clone, Serialize)]
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

/// A stored run, the decisions its auto-accept made, and the webhook delivery jobs both
/// recorded (to push after commit).
pub struct Stored {
    pub run: Run,
    pub auto_accepted: Vec<crate::rates::Decision>,
    pub delivery_jobs: Vec<Uuid>,
}

/// Runs the engine on the facility's latest snapshot and stores the run, in the caller's
/// transaction, with a `recommendations.ready` delivery per subscription of the company, and
/// the small changes the facility accepts automatically (`rates::auto_accept`).
/// `id` is the run id (a job's id, so a job delivered twice stores one run and its
/// deliveries once).
pub(crate) async fn run_and_store(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    id: RunId,
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
        id.uuid(),
        company_id.uuid(),
        facility_id.uuid(),
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
    let mut delivery_jobs = crate::webhooks::record_recommendations_ready(
        conn,
        &crate::webhooks::RecommendationsReady {
            company_id,
            facility_id,
            facility_name: loaded.facility_name.clone(),
            recommendation_id: id.uuid(),
            generated_at,
            per_size_count,
        },
    )
    .await?;
    let auto = crate::rates::auto_accept(
        conn,
        &crate::rates::RunRef {
            company_id,
            facility_id,
            facility_name: &loaded.facility_name,
            run_id: id,
        },
        &recs,
        &loaded.settings,
    )
    .await?;
    delivery_jobs.extend(auto.delivery_jobs);
    let run = Run {
        recommendation_id: id.uuid(),
        facility_id: facility_id.uuid(),
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
    Ok(Stored {
        run,
        auto_accepted: auto.decisions,
        delivery_jobs,
    })
}

/// The latest stored run of a facility; `None` when it has none.
pub(crate) async fn latest(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
) -> Result<Option<Run>> {
    fetch_run(conn, company_id, facility_id, None).await
}

/// The id of the facility's latest stored run; `None` when it has none.
pub(crate) async fn latest_id(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
) -> Result<Option<Uuid>> {
    Ok(sqlx::query_scalar!(
        "SELECT id FROM recommendation_runs WHERE company_id = $1 AND facility_id = $2
         ORDER BY generated_at DESC, id DESC LIMIT 1",
        company_id.uuid(),
        facility_id.uuid()
    )
    .fetch_optional(conn)
    .await?)
}

/// One run of a facility of the company (the latest when `run_id` is `None`).
async fn fetch_run(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    run_id: Option<RunId>,
) -> Result<Option<Run>> {
    Ok(sqlx::query_as!(
        Run,
        r#"SELECT r.id AS recommendation_id, r.facility_id, f.name AS facility_name, r.generated_at,
                  r.engine_version, r.snapshot_date, r.trigger, r.mode, r.per_size_count,
                  r.recommendations, r.inputs, r.settings
           FROM recommendation_runs r JOIN facilities f ON f.id = r.facility_id
           WHERE r.company_id = $1 AND r.facility_id = $2 AND ($3::uuid IS NULL OR r.id = $3)
           ORDER BY r.generated_at DESC, r.id DESC LIMIT 1"#,
        company_id.uuid(),
        facility_id.uuid(),
        run_id.map(RunId::uuid)
    )
    .fetch_optional(&mut *conn)
    .await?)
}

/// One stored run in a facility's run history: when, why, on which snapshot, and how many
/// sizes it would raise, hold or lower.
#[derive(Debug, Clone, Serialize)]
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
pub(crate) async fn list_runs(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    limit: i64,
    after_run: Option<RunId>,
) -> Result<Vec<RunSummary>> {
    Ok(sqlx::query_as!(
        RunSummary,
        r#"SELECT r.id AS recommendation_id, r.generated_at, r.engine_version, r.snapshot_date,
                  r.trigger, r.mode, r.per_size_count, r.raise_count::int8 AS "raise!",
                  r.hold_count::int8 AS "hold!", r.lower_count::int8 AS "lower!"
           FROM recommendation_runs r
           WHERE r.company_id = $1 AND r.facility_id = $2
             AND ($3::uuid IS NULL OR (r.generated_at, r.id) < (
                   SELECT c.generated_at, c.id FROM recommendation_runs c
                   WHERE c.id = $3 AND c.facility_id = $2))
           ORDER BY r.generated_at DESC, r.id DESC
           LIMIT $4"#,
        company_id.uuid(),
        facility_id.uuid(),
        after_run.map(RunId::uuid),
        limit
    )
    .fetch_all(&mut *conn)
    .await?)
}

/// The latest run of each facility of the company that has one, summarised.
#[derive(Debug, Clone, Serialize)]
pub struct LatestRun {
    pub facility_id: Uuid,
    #[serde(flatten)]
    pub run: RunSummary,
}

/// The latest run of every facility of the company (facilities without a run are left out),
/// in one statement: the portfolio's recommendation summary.
pub(crate) async fn latest_runs(
    conn: &mut PgConnection,
    company_id: CompanyId,
) -> Result<Vec<LatestRun>> {
    let rows = sqlx::query!(
        r#"SELECT f.id AS "facility_id!", r.id AS "recommendation_id!", r.generated_at AS "generated_at!",
                  r.engine_version AS "engine_version!", r.snapshot_date AS "snapshot_date!",
                  r.trigger AS "trigger!", r.mode AS "mode!", r.per_size_count AS "per_size_count!",
                  r.raise_count::int8 AS "raise!", r.hold_count::int8 AS "hold!",
                  r.lower_count::int8 AS "lower!"
           FROM facilities f
           CROSS JOIN LATERAL (
               SELECT x.id, x.generated_at, x.engine_version, x.snapshot_date, x.trigger, x.mode,
                      x.per_size_count, x.raise_count, x.hold_count, x.lower_count
               FROM recommendation_runs x
               WHERE x.facility_id = f.id AND x.company_id = $1
               ORDER BY x.generated_at DESC, x.id DESC LIMIT 1) r
           WHERE f.company_id = $1
           ORDER BY f.id"#,
        company_id.uuid()
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
pub(crate) async fn run(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    run_id: RunId,
) -> Result<Option<Run>> {
    fetch_run(conn, company_id, facility_id, Some(run_id)).await
}

/// One size of a facility's latest run, as another report shows it beside its own figure.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeRecommendation {
    pub size: String,
    pub tier: String,
    pub recommended_rate: f64,
    /// The run's own sentence for its biggest factor (what moved the rate most).
    pub main_factor: Option<String>,
}

/// The latest run of each facility, per size and tier: (snapshot date, mode, sizes).
pub(crate) async fn latest_sizes(
    conn: &mut PgConnection,
    facility_ids: &[Uuid],
) -> Result<std::collections::HashMap<Uuid, (NaiveDate, String, Vec<SizeRecommendation>)>> {
    let rows = sqlx::query!(
        r#"SELECT DISTINCT ON (facility_id) facility_id, snapshot_date, mode, recommendations
           FROM recommendation_runs WHERE facility_id = ANY($1)
           ORDER BY facility_id, generated_at DESC"#,
        facility_ids
    )
    .fetch_all(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let sizes = serde_json::from_value::<Vec<engine::Recommendation>>(r.recommendations)
                .unwrap_or_default()
                .into_iter()
                .map(|rec| SizeRecommendation {
                    main_factor: rec
                        .factors
                        .iter()
                        .filter(|f| f.contribution_pct != 0.0)
                        .max_by(|a, b| {
                            a.contribution_pct
                                .abs()
                                .total_cmp(&b.contribution_pct.abs())
                        })
                        .map(|f| {
                            format!("{} {:+.1} %", f.name.replace('_', " "), f.contribution_pct)
                        }),
                    size: rec.size,
                    tier: rec.tier,
                    recommended_rate: rec.recommended_rate,
                })
                .collect();
            (r.facility_id, (r.snapshot_date, r.mode, sizes))
        })
        .collect())
}
