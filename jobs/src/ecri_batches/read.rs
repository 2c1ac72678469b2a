//! Reading batches: one with its lines, or a facility's list, as every page and route shows
//! them (the verbs answer the batch they changed through [`get`] too).

use super::{Batch, Dropped, Line, Status, Totals, MAX_LISTED};
use crate::actor::Actor;
use crate::ecri::Basis;
use crate::error::{Error, Result};
use domain::ids::{CompanyId, FacilityId};
use sqlx::{PgConnection, PgPool};
use std::collections::BTreeMap;
use uuid::Uuid;

/// A batch as lists show it: the batch (its lines read once, for the totals and for pages that
/// chart the batches' outcomes) with its totals.
#[derive(Clone, Debug)]
pub struct Summary {
    pub batch: Batch,
    pub totals: Totals,
}

/// The facility's batches, newest first (of one status when given), at most [`MAX_LISTED`].
pub async fn list(
    pool: &PgPool,
    company_id: CompanyId,
    facility_id: FacilityId,
    status: Option<Status>,
) -> Result<Vec<Summary>> {
    crate::facilities::ensure_owned(pool, company_id, facility_id).await?;
    let ids: Vec<Uuid> = sqlx::query_scalar!(
        "SELECT id FROM ecri_batches
         WHERE company_id = $1 AND facility_id = $2 AND ($3::text IS NULL OR status = $3)
         ORDER BY created_at DESC, id DESC LIMIT $4",
        company_id.uuid(),
        facility_id.uuid(),
        status.map(Status::as_str),
        MAX_LISTED
    )
    .fetch_all(pool)
    .await?;
    let batches = load(&mut *pool.acquire().await?, company_id, &ids).await?;
    Ok(batches
        .into_iter()
        .map(|b| Summary {
            totals: b.totals(),
            batch: b,
        })
        .collect())
}

/// One batch with its lines (404 unless it is the company's and the facility's).
pub async fn get(
    pool: &PgPool,
    company_id: CompanyId,
    facility_id: FacilityId,
    id: Uuid,
) -> Result<Batch> {
    get_in(&mut *pool.acquire().await?, company_id, facility_id, id).await
}

/// [`get`] on a connection: a verb reads the batch it holds locked in its own transaction.
pub(super) async fn get_in(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    id: Uuid,
) -> Result<Batch> {
    load(conn, company_id, &[id])
        .await?
        .into_iter()
        .find(|b| b.facility_id == facility_id.uuid())
        .ok_or_else(|| Error::not_found(format!("no ECRI batch with id {id}")))
}

/// Batches of the company by id, in the order given, with their lines.
async fn load(conn: &mut PgConnection, company_id: CompanyId, ids: &[Uuid]) -> Result<Vec<Batch>> {
    let rows = sqlx::query!(
        r#"SELECT b.id, b.facility_id, f.name AS facility_name, b.status, b.basis, b.as_of,
                  b.notice_days, b.horizon_months, b.holdout_pct, b.created_by, b.created_at,
                  b.approved_by, b.approved_at, b.notice_date, b.effective_date, b.cancelled_by,
                  b.cancelled_at, b.holdout_seed, b.holdout_strata,
                  (SELECT count(*) FROM ecri_batch_controls c WHERE c.batch_id = b.id) AS "held_out!"
           FROM ecri_batches b JOIN facilities f ON f.id = b.facility_id
           WHERE b.company_id = $1 AND b.id = ANY($2)"#,
        company_id.uuid(),
        ids
    )
    .fetch_all(&mut *conn)
    .await?;
    let lines = sqlx::query!(
        r#"SELECT batch_id, line_no, tenant_id, customer_id, size, months_since_last_increase,
                  tenant_count, current_rent, suggested_rent, new_rent, stay_probability,
                  expected_gain, edited, excluded, reasons, dropped_guardrail, dropped_reason
           FROM ecri_batch_lines WHERE batch_id = ANY($1) ORDER BY batch_id, line_no"#,
        ids
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut by_batch: BTreeMap<Uuid, Vec<Line>> = BTreeMap::new();
    for l in lines {
        by_batch.entry(l.batch_id).or_default().push(Line {
            line: l.line_no,
            tenant_id: l.tenant_id,
            customer_id: l.customer_id,
            size: l.size,
            months_since_last_increase: l.months_since_last_increase,
            tenant_count: l.tenant_count,
            current_rent: l.current_rent,
            suggested_rent: l.suggested_rent,
            new_rent: l.new_rent,
            stay_probability: l.stay_probability,
            expected_gain: l.expected_gain,
            edited: l.edited,
            excluded: l.excluded,
            reasons: l.reasons,
            dropped: l.dropped_guardrail.map(|guardrail| Dropped {
                guardrail,
                reason: l.dropped_reason.unwrap_or_default(),
            }),
        });
    }
    let mut batches: BTreeMap<Uuid, Batch> = rows
        .into_iter()
        .map(|r| {
            let b = Batch {
                id: r.id,
                facility_id: r.facility_id,
                facility_name: r.facility_name,
                status: Status::parse(&r.status).unwrap_or(Status::Draft),
                basis: if r.basis == "cohorts" {
                    Basis::Cohorts
                } else {
                    Basis::RentRoll
                },
                as_of: r.as_of,
                notice_days: r.notice_days,
                horizon_months: r.horizon_months,
                holdout_pct: r.holdout_pct,
                held_out: r.held_out,
                holdout_seed: r.holdout_seed,
                holdout_strata: r.holdout_strata,
                created_by: Actor::from_json(&r.created_by),
                created_at: r.created_at,
                approved_by: r.approved_by.as_ref().map(Actor::from_json),
                approved_at: r.approved_at,
                notice_date: r.notice_date,
                effective_date: r.effective_date,
                cancelled_by: r.cancelled_by.as_ref().map(Actor::from_json),
                cancelled_at: r.cancelled_at,
                lines: by_batch.remove(&r.id).unwrap_or_default(),
            };
            (r.id, b)
        })
        .collect();
    Ok(ids.iter().filter_map(|id| batches.remove(id)).collect())
}
