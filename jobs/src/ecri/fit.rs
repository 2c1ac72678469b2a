//! One fit of the stay model's company evidence per company and night (`ecri_fit` jobs): the
//! outcomes of every facility's past increases and of the tenants it left alone, pooled in cells
//! and stored with each facility's own share. A facility's run reads the pooled cells less its
//! own share as "the company" and its own evidence fresh, so no request and no run refits the
//! company, and no facility counts its own outcomes twice.

use super::outcomes::{cells_of, evidence, others, Cells};
use crate::error::Result;
use crate::payload::{self, Payload};
use crate::queue::Kind;
use crate::runs::{self, NewJob};
use crate::tenancy;
use chrono::Timelike;
use chrono::{DateTime, Utc};
use domain::ecri::evidence::Cell;
use domain::ecri::{Outcome, ENGINE_VERSION};
use domain::ids::{CompanyId, FacilityId};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

/// Fits kept per company; older ones are deleted by the next fit (runs keep their `fitted_at`).
const KEEP_FITS: i64 = 3;
/// Days a facility's superseded runs are kept (the latest, and any a batch was drafted from,
/// are kept whatever their age).
pub const KEEP_RUN_DAYS: i32 = 7;
/// The hour (the company's time zone) from which its nightly fit and runs are due.
pub const NIGHTLY_HOUR: u32 = 4;

/// A stored fit as one facility reads it.
#[derive(Clone, Debug)]
pub struct FitRef {
    pub id: Uuid,
    pub fitted_at: DateTime<Utc>,
    /// The company's outcomes without the facility's own share at the fit.
    pub company: Vec<Outcome>,
}

/// Cells as stored: `[cell, tenants, moved_out]`, the cell's tenure as its f64 bits so it
/// reads back exactly.
type StoredCells = Vec<(Cell, u32, u32)>;

fn to_stored(cells: &Cells) -> serde_json::Value {
    let v: StoredCells = cells.iter().map(|(c, (n, l))| (*c, *n, *l)).collect();
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}

/// Cells as stored before they carried the increase in currency (read with it unknown).
type StoredCellsV1 = Vec<((i64, i64, Option<u64>, u32), u32, u32)>;
/// Cells as stored before open windows counted (every window in them is over).
type StoredCellsV2 = Vec<((i64, i64, Option<u64>, u32, i64, bool), u32, u32)>;

fn from_stored(v: serde_json::Value) -> Cells {
    // A fit that does not read (another version's) counts as an empty company.
    if let Ok(cells) = serde_json::from_value::<StoredCells>(v.clone()) {
        return cells.into_iter().map(|(c, n, l)| (c, (n, l))).collect();
    }
    if let Ok(cells) = serde_json::from_value::<StoredCellsV2>(v.clone()) {
        return cells
            .into_iter()
            .map(|((a, b, t, p, x, r), n, l)| ((a, b, t, p, x, r, 10), (n, l)))
            .collect();
    }
    serde_json::from_value::<StoredCellsV1>(v)
        .unwrap_or_default()
        .into_iter()
        .map(|((a, b, t, p), n, l)| ((a, b, t, p, 0, false, 10), (n, l)))
        .collect()
}

/// Fits the company's evidence and stores it; the fit's id and the facilities it covered.
pub async fn fit_company(pool: &PgPool, company_id: CompanyId) -> Result<(Uuid, usize)> {
    let all = evidence(pool, company_id, None).await?;
    let pooled = cells_of(all.values().flat_map(|f| &f.outcomes));
    let id = Uuid::now_v7();
    let mut tx = pool.begin().await?;
    sqlx::query!(
        "INSERT INTO ecri_fits (id, company_id, engine_version, facilities, cells)
         VALUES ($1, $2, $3, $4, $5)",
        id,
        company_id.uuid(),
        ENGINE_VERSION,
        i32::try_from(all.len()).unwrap_or(i32::MAX),
        to_stored(&pooled)
    )
    .execute(&mut *tx)
    .await?;
    let ids: Vec<Uuid> = all.keys().copied().collect();
    let own: Vec<serde_json::Value> = all
        .values()
        .map(|f| to_stored(&cells_of(&f.outcomes)))
        .collect();
    sqlx::query!(
        "INSERT INTO ecri_fit_facilities (fit_id, facility_id, cells)
         SELECT $1, f, c FROM unnest($2::uuid[], $3::jsonb[]) AS u(f, c)
         WHERE EXISTS (SELECT 1 FROM facilities WHERE id = f)",
        id,
        &ids,
        &own
    )
    .execute(&mut *tx)
    .await?;
    prune(&mut tx, company_id).await?;
    tx.commit().await?;
    Ok((id, all.len()))
}

/// Deletes the company's fits older than the latest [`KEEP_FITS`], and its superseded runs
/// older than [`KEEP_RUN_DAYS`] that no batch was drafted from.
async fn prune(conn: &mut PgConnection, company_id: CompanyId) -> Result<()> {
    sqlx::query!(
        "DELETE FROM ecri_fits WHERE company_id = $1 AND id NOT IN
           (SELECT id FROM ecri_fits WHERE company_id = $1 ORDER BY fitted_at DESC LIMIT $2)",
        company_id.uuid(),
        KEEP_FITS
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        "DELETE FROM ecri_runs r
         WHERE r.company_id = $1 AND r.created_at < now() - make_interval(days => $2)
           AND EXISTS (SELECT 1 FROM ecri_runs n
                       WHERE n.facility_id = r.facility_id AND n.created_at > r.created_at)
           AND NOT EXISTS (SELECT 1 FROM ecri_batches b WHERE b.ecri_run_id = r.id)",
        company_id.uuid(),
        KEEP_RUN_DAYS
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// The latest fit of the company as `facility_id` reads it: the pooled cells less the
/// facility's share in them. None when the company was never fitted.
pub async fn latest(
    pool: &PgPool,
    company_id: CompanyId,
    facility_id: FacilityId,
) -> Result<Option<FitRef>> {
    let Some(row) = sqlx::query!(
        r#"SELECT f.id, f.fitted_at, f.cells, p.cells AS "own?"
           FROM ecri_fits f
           LEFT JOIN ecri_fit_facilities p ON p.fit_id = f.id AND p.facility_id = $2
           WHERE f.company_id = $1
           ORDER BY f.fitted_at DESC LIMIT 1"#,
        company_id.uuid(),
        facility_id.uuid()
    )
    .fetch_optional(pool)
    .await?
    else {
        return Ok(None);
    };
    let pooled = from_stored(row.cells);
    let own = row.own.map(from_stored).unwrap_or_default();
    Ok(Some(FitRef {
        id: row.id,
        fitted_at: row.fitted_at,
        company: others(&pooled, &own),
    }))
}

/// The latest fit, fitting the company first when it never was (its first run).
pub async fn latest_or_fit(
    pool: &PgPool,
    company_id: CompanyId,
    facility_id: FacilityId,
) -> Result<FitRef> {
    if let Some(f) = latest(pool, company_id, facility_id).await? {
        return Ok(f);
    }
    fit_company(pool, company_id).await?;
    latest(pool, company_id, facility_id)
        .await?
        .ok_or_else(|| crate::Error::Internal("the company's fit was not stored".to_owned()))
}

/// The nightly `ecri_fit` jobs due at `now`: one per company with a facility and API access, on
/// each day of its time zone from [`NIGHTLY_HOUR`] (the dedupe key, company and local date,
/// makes it once a day however many worker replicas tick). Returns the new job ids.
pub async fn nightly_tick(pool: &PgPool, now: DateTime<Utc>) -> Result<Vec<(Kind, Uuid)>> {
    let companies = sqlx::query!(
        "SELECT c.id, c.time_zone, c.subscription_state, c.trial_ends_at FROM companies c
         WHERE EXISTS (SELECT 1 FROM facilities f WHERE f.company_id = c.id)"
    )
    .fetch_all(pool)
    .await?;
    let mut due: Vec<(Uuid, String)> = Vec::new();
    for c in companies {
        let tz: chrono_tz::Tz = c.time_zone.parse().unwrap_or(chrono_tz::UTC);
        let local = now.with_timezone(&tz);
        let state = tenancy::effective_state(&c.subscription_state, c.trial_ends_at, now);
        if local.hour() >= NIGHTLY_HOUR && tenancy::has_access(state) {
            due.push((c.id, format!("ecri_fit:{}:{}", c.id, local.date_naive())));
        }
    }
    let keys: Vec<String> = due.iter().map(|(_, k)| k.clone()).collect();
    let done: std::collections::BTreeSet<String> = sqlx::query_scalar!(
        r#"SELECT dedupe_key AS "k!" FROM job_runs WHERE dedupe_key = ANY($1)"#,
        &keys
    )
    .fetch_all(pool)
    .await?
    .into_iter()
    .collect();
    let mut created = Vec::new();
    for (company_id, key) in due.into_iter().filter(|(_, k)| !done.contains(k)) {
        let mut job = NewJob::new(
            Some(company_id.into()),
            Payload::EcriFit(payload::EcriFit { then_run: true }),
        );
        job.dedupe_key = Some(key);
        let mut conn = pool.acquire().await?;
        if let Some(id) = runs::insert(&mut conn, job).await? {
            created.push((Kind::EcriFit, id));
        }
    }
    Ok(created)
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::ecri::evidence::cell_outcome;
    use serde_json::json;

    #[test]
    fn stored_cells_of_every_version_read_back() {
        // Now: the tenths of the window seen are kept (3: an open window, 30 % seen).
        let now: Cells = [((20, 10, None, 1, 21, true, 3), (4, 1))].into();
        assert_eq!(from_stored(to_stored(&now)), now);
        // Before open windows counted: every window in them was over.
        let v2 = json!([[[20, 10, null, 1, 21, true], 4, 1]]);
        let read = from_stored(v2);
        assert_eq!(read, [((20, 10, None, 1, 21, true, 10), (4, 1))].into());
        let o = cell_outcome(read.keys().next().unwrap(), 4, 1);
        assert_eq!((o.open_share, o.seen_share()), (0.0, 1.0));
        // Before the increase in currency: unknown amount, not recent, windows over.
        let v1 = json!([[[20, 10, null, 1], 4, 1]]);
        assert_eq!(
            from_stored(v1),
            [((20, 10, None, 1, 0, false, 10), (4, 1))].into()
        );
        // Another shape altogether: an empty company.
        assert!(from_stored(json!({"cells": 3})).is_empty());
    }
}
