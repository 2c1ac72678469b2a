//! Storing decisions: a person's set, checked against the facility's latest run, and the
//! small changes the service accepts by itself when it stores a run. Each is logged in its
//! transaction.

use super::approved_event::record_approved;
use super::{Decided, Decision, RunRef};
use crate::actor::Actor;
use crate::audit::Change;
use crate::door::{self, Committed, Jobs, Who};
use crate::error::{Error, Result};
use crate::queue::Kind;
use domain::ids::{CompanyId, FacilityId, RunId};
use domain::pricing::decisions::{self, Checked, Requested};
use domain::pricing::engine::Recommendation;
use domain::pricing::PricingSettings;
use serde_json::json;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

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
    let (decided, before) = match decide_in(
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
    // The record names each decision: before, the unit type's rate in force and the rate an
    // earlier decision approved; after, what was done, the rate that is to be in force, the
    // recommendation, and why where a reason was given.
    let after: Vec<serde_json::Value> = decided
        .decisions
        .iter()
        .zip(&before)
        .map(|(d, b)| {
            let rate_after = d.rate.unwrap_or(b.rate_in_force);
            serde_json::json!({
                "size": d.size, "tier": d.tier, "action": d.action, "rate": d.rate,
                "rate_after": rate_after, "recommended_rate": d.recommended_rate,
                "previous_rate": d.previous_rate, "reason": d.reason, "forced": d.forced,
            })
        })
        .collect();
    let before: Vec<serde_json::Value> = before.iter().map(Before::json).collect();
    let change = Change::new("rate_decision.record")
        .target("recommendation_run", run_id)
        .facility(facility_id.uuid())
        .values(
            Some(serde_json::Value::Array(before)),
            Some(serde_json::Value::Array(after)),
        );
    let jobs = Jobs::of(Kind::WebhookDelivery, decided.delivery_jobs.iter().copied());
    door::commit(tx, who, change, decided, jobs).await
}

/// A unit type as it stood before a decision: the rate in force (the latest snapshot's) and
/// the rate an earlier decision approved, if one is in force.
struct Before {
    size: String,
    tier: String,
    rate_in_force: f64,
    approved_rate: Option<f64>,
    approved_status: Option<&'static str>,
}

impl Before {
    fn json(&self) -> serde_json::Value {
        json!({
            "size": self.size, "tier": self.tier, "rate_in_force": self.rate_in_force,
            "approved_rate": self.approved_rate, "approved_status": self.approved_status,
        })
    }
}

/// What each checked decision's unit type stood at, read under the facility's lock.
async fn before_of(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    checked: &[Checked],
) -> Result<Vec<Before>> {
    let rates = super::load(conn, company_id, facility_id).await?;
    Ok(checked
        .iter()
        .map(|c| {
            let line = rates
                .rates
                .iter()
                .find(|l| l.size == c.size && l.tier == c.tier);
            let approved = line.and_then(|l| l.approved.as_ref());
            Before {
                size: c.size.clone(),
                tier: c.tier.clone(),
                rate_in_force: line.map_or(c.previous_rate, |l| l.rate_in_force),
                approved_rate: approved.and_then(|a| a.rate),
                approved_status: approved.and_then(|a| a.status).map(|s| s.as_str()),
            }
        })
        .collect())
}

async fn decide_in(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    run_id: RunId,
    requested: &[Requested],
    actor: &Actor,
) -> Result<(Decided, Vec<Before>)> {
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
    let before = before_of(conn, company_id, facility_id, &checked).await?;
    let at = RunRef {
        company_id,
        facility_id,
        facility_name: &facility_name,
        run_id,
    };
    Ok((store(conn, &at, &checked, actor, false).await?, before))
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
