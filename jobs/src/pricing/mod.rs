//! Pricing with IO. The use cases the API and the dashboard call are the functions of this
//! module (run the engine now, read runs, history and settings, change the settings): each
//! takes the pool and opens and ends its own transaction. `store` owns `recommendation_runs`,
//! `inputs` loads a facility's engine inputs, `history` reads the daily series the charts
//! show. The engine itself is `domain::pricing`.

pub mod history;
pub(crate) mod inputs;
pub(crate) mod store;

use crate::audit::Change;
use crate::door::{self, Committed, Jobs, Who};
use crate::error::Result;
use crate::queue::Kind;
use domain::ids::{CompanyId, FacilityId, RunId};
use domain::pricing::PricingSettings;
use serde_json::Value;
use sqlx::PgPool;
use store::Trigger;
pub use store::{LatestRun, Loaded, Run, RunSummary, SizeRecommendation, Stored};
use uuid::Uuid;

/// Runs the engine now on the facility's latest snapshot and stores the run with its
/// `recommendations.ready` deliveries and the small changes the facility accepts on its own,
/// recorded as `pricing_run.start`, in one transaction; the deliveries are the jobs to push.
/// On an error the transaction is rolled back before returning, so the caller may take a
/// connection of its own at once (a page that renders the refusal does).
pub async fn run_now(
    pool: &PgPool,
    who: &Who,
    facility_id: FacilityId,
) -> Result<Committed<Stored>> {
    let mut tx = pool.begin().await?;
    let stored = match store::run_and_store(
        &mut tx,
        who.company,
        facility_id,
        Uuid::now_v7().into(),
        match who.via {
            crate::door::Via::Dashboard => Trigger::Dashboard,
            crate::door::Via::Api | crate::door::Via::Service => Trigger::Api,
        },
    )
    .await
    {
        Ok(stored) => stored,
        Err(e) => {
            tx.rollback().await?;
            return Err(e);
        }
    };
    let change = Change::new("pricing_run.start")
        .target("recommendation_run", stored.run.recommendation_id)
        .facility(facility_id.uuid());
    let jobs = Jobs::of(Kind::WebhookDelivery, stored.delivery_jobs.iter().copied());
    door::commit(tx, who, change, stored, jobs).await
}

/// The engine's inputs for the facility as a run would read them now (404 for a facility that
/// is not the company's).
pub async fn inputs(
    pool: &PgPool,
    company_id: CompanyId,
    facility_id: FacilityId,
) -> Result<store::Loaded> {
    let mut conn = pool.acquire().await?;
    store::load(&mut conn, company_id, facility_id).await
}

/// The facility's latest stored run: 404 for a facility that is not the company's, `None` for
/// one without runs.
pub async fn latest_run(
    pool: &PgPool,
    company_id: CompanyId,
    facility_id: FacilityId,
) -> Result<Option<Run>> {
    let mut conn = pool.acquire().await?;
    // The facility first, so an unknown one is told apart from one without runs.
    store::settings_of(&mut conn, company_id, facility_id).await?;
    store::latest(&mut conn, company_id, facility_id).await
}

/// One stored run of a facility of the company; `None` when there is no such run.
pub async fn run(
    pool: &PgPool,
    company_id: CompanyId,
    facility_id: FacilityId,
    run_id: RunId,
) -> Result<Option<Run>> {
    let mut conn = pool.acquire().await?;
    store::run(&mut conn, company_id, facility_id, run_id).await
}

/// A page of the facility's run history, newest first (404 for another company's facility).
pub async fn runs(
    pool: &PgPool,
    company_id: CompanyId,
    facility_id: FacilityId,
    limit: i64,
    after: Option<RunId>,
) -> Result<Vec<RunSummary>> {
    crate::facilities::ensure_owned(pool, company_id, facility_id).await?;
    let mut conn = pool.acquire().await?;
    store::list_runs(&mut conn, company_id, facility_id, limit, after).await
}

/// The latest run of every facility of the company that has one.
pub async fn latest_runs(pool: &PgPool, company_id: CompanyId) -> Result<Vec<LatestRun>> {
    let mut conn = pool.acquire().await?;
    store::latest_runs(&mut conn, company_id).await
}

/// The latest run of each of `facility_ids`, per size and tier (for reports that show the
/// engine's rate beside their own).
pub async fn latest_sizes(
    pool: &PgPool,
    facility_ids: &[Uuid],
) -> Result<
    std::collections::HashMap<Uuid, (chrono::NaiveDate, String, Vec<store::SizeRecommendation>)>,
> {
    let mut conn = pool.acquire().await?;
    store::latest_sizes(&mut conn, facility_ids).await
}

/// The facility's daily history over its last `days` days.
pub async fn history(
    pool: &PgPool,
    company_id: CompanyId,
    facility_id: FacilityId,
    days: i64,
) -> Result<history::History> {
    let mut conn = pool.acquire().await?;
    history::load(&mut conn, company_id, facility_id, days).await
}

/// The facility's settings in force and its stored overrides.
pub async fn settings(
    pool: &PgPool,
    company_id: CompanyId,
    facility_id: FacilityId,
) -> Result<(PricingSettings, Value)> {
    let mut conn = pool.acquire().await?;
    store::settings_of(&mut conn, company_id, facility_id).await
}

/// Replaces the facility's overrides with `body`, a JSON object (checked first: a bad one is a
/// 422 and writes nothing), recorded with the overrides before and after; the settings now in
/// force and the overrides as stored.
pub async fn set_settings(
    pool: &PgPool,
    who: &Who,
    facility_id: FacilityId,
    body: &[u8],
) -> Result<Committed<(PricingSettings, Value)>> {
    crate::facilities::replace_overrides(
        pool,
        who,
        facility_id,
        crate::facilities::Overrides::Pricing,
        body,
        |o| Ok(PricingSettings::with_overrides(o)?),
    )
    .await
}

/// Everything a facility's pricing page shows, read on one connection.
pub struct Overview {
    pub facility: crate::facilities::Facility,
    pub latest: Option<Run>,
    pub runs: Vec<RunSummary>,
    pub history: history::History,
    pub rates: crate::competitors::Listing,
    pub settings: PricingSettings,
    /// The rates in force and approved (`GET .../rates`).
    pub rates_in_force: crate::rates::Rates,
}

/// A facility's pricing at a glance: its latest run, its `runs` newest runs, `days` of history,
/// up to `rates` competitor rates, its settings and its rates in force and approved (404 for
/// another company's facility).
pub async fn overview(
    pool: &PgPool,
    company_id: CompanyId,
    facility_id: FacilityId,
    days: i64,
    runs: i64,
    rates: i64,
    today: chrono::NaiveDate,
) -> Result<Overview> {
    let facility = crate::facilities::get(pool, company_id, facility_id).await?;
    let mut conn = pool.acquire().await?;
    let latest = store::latest(&mut conn, company_id, facility_id).await?;
    let runs = store::list_runs(&mut conn, company_id, facility_id, runs, None).await?;
    let history = history::load(&mut conn, company_id, facility_id, days).await?;
    let rates = crate::competitors::list(
        &mut conn,
        company_id,
        facility_id,
        &crate::competitors::ListQuery {
            size: None,
            since: None,
            limit: rates,
        },
        today,
    )
    .await?;
    let (settings, _) = store::settings_of(&mut conn, company_id, facility_id).await?;
    let rates_in_force = crate::rates::load(&mut conn, company_id, facility_id).await?;
    Ok(Overview {
        facility,
        latest,
        runs,
        history,
        rates,
        settings,
        rates_in_force,
    })
}
