//! Street-rate decisions: a revenue manager (or an API key, or the service's auto-accept)
//! accepts, overrides or rejects the recommendations of a facility's latest run. Owns
//! `rate_decisions`. Each decision is logged (`crate::decisions`) in its transaction, and a set
//! that approved a rate records one `rates.approved` event. An approved rate waits until a
//! snapshot shows it; meanwhile the next run starts from it (`pricing::inputs`). The checks are
//! `domain::pricing::decisions`.

use crate::actor::Actor;
use crate::audit::Change;
use crate::door::{self, Committed, Jobs, Who};
use crate::error::{Error, Result};
use crate::queue::Kind;
use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use domain::ids::{CompanyId, FacilityId, RunId};
use domain::pricing::decisions::{self, Checked};
use domain::pricing::engine::Recommendation;
use domain::pricing::PricingSettings;
use domain::values::Currency;
use serde::Serialize;
use serde_json::json;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

pub use decisions::{Action, Requested, Status, PENDING_DAYS};

/// A stored decision.
#[derive(Clone, Debug)]
pub struct Decision {
    pub id: Uuid,
    pub run_id: Uuid,
    pub size: String,
    pub tier: String,
    /// `accept`, `override` or `reject`.
    pub action: String,
    /// The approved rate; `None` for a rejection.
    pub rate: Option<f64>,
    pub previous_rate: f64,
    pub recommended_rate: f64,
    pub reason: Option<String>,
    pub forced: bool,
    pub broken_guardrails: Vec<String>,
    pub automatic: bool,
    pub actor: Actor,
    pub decided_at: DateTime<Utc>,
}

/// Decisions stored and the `rates.approved` deliveries they recorded (to push after commit).
#[derive(Debug)]
pub struct Decided {
    pub decisions: Vec<Decision>,
    pub delivery_jobs: Vec<Uuid>,
}

/// The run the decisions are about.
pub(crate) struct RunRef<'a> {
    pub company_id: CompanyId,
    pub facility_id: FacilityId,
    pub facility_name: &'a str,
    pub run_id: RunId,
}

/// Decides on the recommendations of the facility's latest run, in one transaction: another
/// company's facility or run, or a run of another facility, is a 404; a run that is no longer
/// the latest a 409 naming the latest; a bad decision a 422 that writes nothing.
pub async fn decide(
    pool: &PgPool,
    who: &Who,
    facility_id: FacilityId,
    run_id: RunId,
    requested: &[Requested],
) -> Result<Committed<Decided>> {
    let mut tx = pool.begin().await?;
    let decided = match decide_in(
        &mut tx,
        who.company,
        facility_id,
        run_id,
        requested,
        &who.actor,
    )
    .await
    {
        Ok(decided) => decided,
        Err(e) => {
            tx.rollback().await?;
            return Err(e);
        }
    };
    // The record names each decision: the size and tier, what was done, the rate before and
    // the rate approved, and why where a reason was given.
    let after: Vec<serde_json::Value> = decided
        .decisions
        .iter()
        .map(|d| {
            serde_json::json!({
                "size": d.size, "tier": d.tier, "action": d.action, "rate": d.rate,
                "previous_rate": d.previous_rate, "reason": d.reason, "forced": d.forced,
            })
        })
        .collect();
    let change = Change::new("rate_decision.record")
        .target("recommendation_run", run_id)
        .facility(facility_id.uuid())
        .values(None, Some(serde_json::Value::Array(after)));
    let jobs = Jobs::of(Kind::WebhookDelivery, decided.delivery_jobs.iter().copied());
    door::commit(tx, who, change, decided, jobs).await
}

async fn decide_in(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    run_id: RunId,
    requested: &[Requested],
    actor: &Actor,
) -> Result<Decided> {
    // Decisions of one facility are made one at a time, so "the latest run" and "the latest
    // decision" stay what each of them read.
    let facility_name = crate::facilities::lock_owned(conn, company_id, facility_id).await?;
    let run = crate::pricing::store::run(conn, company_id, facility_id, run_id)
        .await?
        .ok_or_else(|| Error::not_found(format!("no recommendation run with id {run_id}")))?;
    let latest = crate::pricing::store::latest_id(conn, company_id, facility_id).await?;
    if latest != Some(run.recommendation_id) {
        return Err(Error::Conflict(format!(
            "run {run_id} is not the facility's latest run: decide on the latest run, {}",
            latest.map(|l| l.to_string()).unwrap_or_default()
        )));
    }
    let recs: Vec<Recommendation> = serde_json::from_value(run.recommendations)
        .map_err(|e| Error::Internal(format!("a stored run could not be read: {e}")))?;
    let settings: PricingSettings = serde_json::from_value(run.settings)
        .map_err(|e| Error::Internal(format!("a stored run's settings could not be read: {e}")))?;
    let checked = decisions::check(requested, &recs, &settings)?;
    let at = RunRef {
        company_id,
        facility_id,
        facility_name: &facility_name,
        run_id,
    };
    store(conn, &at, &checked, actor, false).await
}

/// Accepts the run's small changes by itself (the facility's `auto_accept_within_pct`), in the
/// transaction that stores the run.
pub(crate) async fn auto_accept(
    conn: &mut PgConnection,
    at: &RunRef<'_>,
    recs: &[Recommendation],
    settings: &PricingSettings,
) -> Result<Decided> {
    let checked = decisions::auto_accepted(recs, settings);
    // A run stored again (its job delivered twice) accepts nothing twice.
    let done = sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM rate_decisions WHERE run_id = $1 AND automatic) AS "done!""#,
        at.run_id.uuid()
    )
    .fetch_one(&mut *conn)
    .await?;
    if checked.is_empty() || done {
        return Ok(Decided {
            decisions: Vec::new(),
            delivery_jobs: Vec::new(),
        });
    }
    store(conn, at, &checked, &Actor::system("auto-accept"), true).await
}

/// Stores checked decisions with their log entries and, when one approved a rate, one
/// `rates.approved` event.
async fn store(
    conn: &mut PgConnection,
    at: &RunRef<'_>,
    checked: &[Checked],
    actor: &Actor,
    automatic: bool,
) -> Result<Decided> {
    let currency = crate::tenancy::currency_of(conn, at.company_id).await?;
    let mut stored = Vec::with_capacity(checked.len());
    for c in checked {
        let id = Uuid::now_v7();
        let decided_at = sqlx::query_scalar!(
            "INSERT INTO rate_decisions (id, company_id, facility_id, run_id, size, tier, action,
                 rate, previous_rate, recommended_rate, reason, forced, broken, automatic, actor,
                 decided_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,
                     date_trunc('milliseconds', clock_timestamp()))
             RETURNING decided_at",
            id,
            at.company_id.uuid(),
            at.facility_id.uuid(),
            at.run_id.uuid(),
            c.size,
            c.tier,
            c.action.as_str(),
            c.rate,
            c.previous_rate,
            c.recommended_rate,
            c.reason,
            c.forced,
            &c.broken,
            automatic,
            actor.json()
        )
        .fetch_one(&mut *conn)
        .await?;
        crate::decisions::record(
            conn,
            crate::decisions::Entry {
                company_id: at.company_id,
                facility_id: at.facility_id,
                action: c.action.log_action(),
                subject_id: id,
                summary: decisions::summary(c, currency, automatic),
                detail: json!({
                    "run_id": at.run_id.uuid(),
                    "size": c.size,
                    "tier": c.tier,
                    "rate": c.rate,
                    "previous_rate": c.previous_rate,
                    "recommended_rate": c.recommended_rate,
                    "reason": c.reason,
                    "forced": c.forced,
                    "broken_guardrails": c.broken,
                    "automatic": automatic,
                }),
                actor,
            },
        )
        .await?;
        stored.push(Decision {
            id,
            run_id: at.run_id.uuid(),
            size: c.size.clone(),
            tier: c.tier.clone(),
            action: c.action.as_str().to_owned(),
            rate: c.rate,
            previous_rate: c.previous_rate,
            recommended_rate: c.recommended_rate,
            reason: c.reason.clone(),
            forced: c.forced,
            broken_guardrails: c.broken.clone(),
            automatic,
            actor: actor.clone(),
            decided_at,
        });
    }
    let delivery_jobs = record_approved(conn, at, &stored).await?;
    Ok(Decided {
        decisions: stored,
        delivery_jobs,
    })
}

/// The body of `rates.approved` after `event` and `company_id`.
#[derive(Serialize)]
struct RatesApproved<'a> {
    facility_id: Uuid,
    facility_name: &'a str,
    run_id: Uuid,
    /// ISO 8601 UTC with milliseconds.
    approved_at: String,
    rates: Vec<ApprovedRate<'a>>,
}

#[derive(Serialize)]
struct ApprovedRate<'a> {
    size: &'a str,
    tier: &'a str,
    rate: f64,
    previous_rate: f64,
    /// `recommendation` (accepted) or `override`.
    source: &'static str,
    decided_by: &'a Actor,
}

/// The source of an approved rate: `recommendation` or `override`.
pub fn source_of(action: &str) -> &'static str {
    if action == Action::Override.as_str() {
        "override"
    } else {
        "recommendation"
    }
}

/// Records one `rates.approved` event for the decisions that approved a rate (none when none
/// did); the delivery jobs to push after commit.
async fn record_approved(
    conn: &mut PgConnection,
    at: &RunRef<'_>,
    stored: &[Decision],
) -> Result<Vec<Uuid>> {
    let rates: Vec<ApprovedRate> = stored
        .iter()
        .filter_map(|d| {
            Some(ApprovedRate {
                size: &d.size,
                tier: &d.tier,
                rate: d.rate?,
                previous_rate: d.previous_rate,
                source: source_of(&d.action),
                decided_by: &d.actor,
            })
        })
        .collect();
    let Some(approved_at) = stored.iter().map(|d| d.decided_at).max() else {
        return Ok(Vec::new());
    };
    if rates.is_empty() {
        return Ok(Vec::new());
    }
    let body = crate::webhooks::event_body(
        crate::webhooks::RATES_APPROVED,
        at.company_id,
        RatesApproved {
            facility_id: at.facility_id.uuid(),
            facility_name: at.facility_name,
            run_id: at.run_id.uuid(),
            approved_at: approved_at.to_rfc3339_opts(SecondsFormat::Millis, true),
            rates,
        },
    );
    crate::webhooks::record_event(
        conn,
        at.company_id,
        crate::webhooks::RATES_APPROVED,
        Uuid::now_v7(),
        &body,
    )
    .await
}

/// The decision in force of a unit type (its latest), with where its approved rate stands as
/// of a snapshot date.
#[derive(Clone, Debug)]
pub struct InForce {
    pub id: Uuid,
    pub size: String,
    pub tier: String,
    pub action: String,
    pub rate: Option<f64>,
    pub decided_at: DateTime<Utc>,
    pub actor: Actor,
    /// `None` for a rejection (nothing approved).
    pub status: Option<Status>,
}

impl InForce {
    /// The UTC day of the decision.
    pub fn decided_on(&self) -> NaiveDate {
        self.decided_at.date_naive()
    }
}

/// The decision in force of each unit type of the facility, with its status as of the
/// snapshot of `as_of` (snapshots after it are not counted).
pub(crate) async fn in_force(
    conn: &mut PgConnection,
    facility_id: FacilityId,
    as_of: NaiveDate,
) -> Result<Vec<InForce>> {
    let rows = sqlx::query!(
        // The latest decision of each unit type first, then the one snapshot lookup each.
        r#"SELECT d.id AS "id!", d.size AS "size!", d.tier AS "tier!", d.action AS "action!",
                  d.rate, d.decided_at AS "decided_at!", d.actor AS "actor!",
                  (SELECT min(u.snapshot_date) FROM sync_unit_types u
                   WHERE u.facility_id = $1 AND u.size = d.size AND u.tier = d.tier
                     AND u.snapshot_date >= (d.decided_at AT TIME ZONE 'UTC')::date
                     AND u.snapshot_date <= $2
                     AND abs(u.street_rate - d.rate) < 0.005) AS shown_on
           FROM (SELECT DISTINCT ON (size, tier) id, size, tier, action, rate, decided_at, actor
                 FROM rate_decisions WHERE facility_id = $1
                 ORDER BY size, tier, decided_at DESC, id DESC) d"#,
        facility_id.uuid(),
        as_of
    )
    .fetch_all(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let decided_on = r.decided_at.date_naive();
            InForce {
                status: r
                    .rate
                    .map(|_| decisions::status(decided_on, r.shown_on, Some(as_of))),
                id: r.id,
                size: r.size,
                tier: r.tier,
                action: r.action,
                rate: r.rate,
                decided_at: r.decided_at,
                actor: Actor::from_json(&r.actor),
            }
        })
        .collect())
}

/// The approved rates of the facility still waiting, as of the snapshot of `as_of`, to appear
/// in a snapshot: where the next run starts from.
pub(crate) async fn pending(
    conn: &mut PgConnection,
    facility_id: FacilityId,
    as_of: NaiveDate,
) -> Result<Vec<InForce>> {
    Ok(in_force(conn, facility_id, as_of)
        .await?
        .into_iter()
        .filter(|d| d.status == Some(Status::Pending) && d.rate.is_some())
        .collect())
}

/// One unit type of the facility's latest snapshot: the rate in force and the approved rate.
#[derive(Clone, Debug)]
pub struct RateLine {
    pub size: String,
    pub tier: String,
    /// The street rate of the latest snapshot.
    pub rate_in_force: f64,
    /// The latest approved rate (accepted or overridden) when the unit type's latest decision
    /// approved one; its status says whether a snapshot shows it yet.
    pub approved: Option<InForce>,
}

/// The rates of a facility: in force and approved.
#[derive(Clone, Debug)]
pub struct Rates {
    pub facility_id: Uuid,
    pub facility_name: String,
    /// The company's currency (the CSV writes its minor units).
    pub currency: Currency,
    /// The latest snapshot's date; `None` without snapshots.
    pub snapshot_date: Option<NaiveDate>,
    pub rates: Vec<RateLine>,
}

impl Rates {
    /// The lines whose approved rate waits to appear in a snapshot (what a PMS is to set).
    pub fn pending(&self) -> impl Iterator<Item = (&RateLine, &InForce)> {
        self.rates.iter().filter_map(|l| {
            l.approved
                .as_ref()
                .filter(|a| a.status == Some(Status::Pending))
                .map(|a| (l, a))
        })
    }
}

/// The facility's rates in force and approved (404 for another company's facility).
pub async fn rates(pool: &PgPool, company_id: CompanyId, facility_id: FacilityId) -> Result<Rates> {
    let mut conn = pool.acquire().await?;
    load(&mut conn, company_id, facility_id).await
}

/// [`rates`] on the caller's connection.
pub(crate) async fn load(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
) -> Result<Rates> {
    let facility_name = crate::facilities::name_of(conn, company_id, facility_id).await?;
    let currency = crate::tenancy::currency_of(conn, company_id).await?;
    let units = sqlx::query!(
        "SELECT u.snapshot_date, u.size, u.tier, u.street_rate
         FROM sync_unit_types u
         WHERE u.sync_id = (SELECT id FROM sync_records WHERE facility_id = $1
                            ORDER BY snapshot_date DESC LIMIT 1)
         ORDER BY u.width_ft * u.depth_ft, u.size, u.tier",
        facility_id.uuid()
    )
    .fetch_all(&mut *conn)
    .await?;
    let Some(snapshot_date) = units.first().map(|u| u.snapshot_date) else {
        return Ok(Rates {
            facility_id: facility_id.uuid(),
            facility_name,
            currency,
            snapshot_date: None,
            rates: Vec::new(),
        });
    };
    let mut decided = in_force(conn, facility_id, snapshot_date).await?;
    let rates = units
        .into_iter()
        .map(|u| {
            let approved = decided
                .iter()
                .position(|d| d.size == u.size && d.tier == u.tier)
                .map(|i| decided.swap_remove(i))
                .filter(|d| d.rate.is_some());
            RateLine {
                size: u.size,
                tier: u.tier,
                rate_in_force: u.street_rate,
                approved,
            }
        })
        .collect();
    Ok(Rates {
        facility_id: facility_id.uuid(),
        facility_name,
        currency,
        snapshot_date: Some(snapshot_date),
        rates,
    })
}
