//! The tenants not increased that the stay model's baseline learns from.

use super::super::OUTCOME_DAYS;
use crate::error::Result;
use domain::ecri::evidence::{baseline_outcome, TENURE_EDGES};
use domain::ecri::Outcome;
use domain::ids::CompanyId;
use sqlx::PgPool;
use std::collections::BTreeMap;
use uuid::Uuid;

/// The tenants of each facility in place 90 days before its roll's date that no approved
/// notice's 90 days (or effective date) reached into yet, nor the 90 days of a rise of rent the
/// roll showed (an increase's outcome, counted from the change), each watched until it moved
/// out, was given a notice or had its rent changed, or the roll's date; how many left while
/// watched, by tenure band at the window's start and tenths of the window watched
/// (`evidence::baseline_outcome`). A tenant given a notice within the window counts for the
/// days before it: left out altogether, the tenants who left before any notice reached them
/// would be the baseline's only leavers, and its rate read high.
pub(super) async fn baseline(
    pool: &PgPool,
    company_id: CompanyId,
    only: Option<&[Uuid]>,
) -> Result<BTreeMap<Uuid, Vec<Outcome>>> {
    let rows = sqlx::query!(
        r#"WITH watched AS (
             SELECT t.facility_id, t.move_in_date, t.moved_out_on,
                    f.rent_roll_date - $2::int AS watched_from, f.rent_roll_date AS roll,
                    least(
                      (SELECT min(e.event_date) FROM rent_roll_events e
                       WHERE e.facility_id = t.facility_id AND e.tenant_id = t.tenant_id
                         AND e.kind = 'rent_changed'
                         AND e.event_date > f.rent_roll_date - $2::int
                         AND e.event_date <= f.rent_roll_date),
                      (SELECT min(b.notice_date) FROM ecri_batch_lines l
                       JOIN ecri_batches b ON b.id = l.batch_id
                       WHERE l.tenant_id = t.tenant_id AND b.facility_id = t.facility_id
                         AND b.status = 'approved' AND NOT l.excluded
                         AND b.notice_date > f.rent_roll_date - $2::int
                         AND b.notice_date <= f.rent_roll_date)) AS censored_on
             FROM rent_roll_tenants t
             JOIN facilities f ON f.id = t.facility_id
             WHERE t.company_id = $1 AND f.rent_roll_date IS NOT NULL
               AND ($4::uuid[] IS NULL OR t.facility_id = ANY($4))
               AND t.first_seen_on <= f.rent_roll_date - $2::int
               AND t.move_in_date <= f.rent_roll_date - $2::int
               AND (t.moved_out_on IS NULL OR t.moved_out_on > f.rent_roll_date - $2::int)
               AND NOT EXISTS (SELECT 1 FROM ecri_batch_lines l
                               JOIN ecri_batches b ON b.id = l.batch_id
                               WHERE l.tenant_id = t.tenant_id AND b.facility_id = t.facility_id
                                 AND b.status = 'approved' AND NOT l.excluded
                                 AND b.notice_date <= f.rent_roll_date - $2::int
                                 AND greatest(b.notice_date + $2::int, b.effective_date)
                                     > f.rent_roll_date - $2::int)
               AND NOT EXISTS (SELECT 1 FROM rent_roll_events e
                               WHERE e.facility_id = t.facility_id AND e.tenant_id = t.tenant_id
                                 AND e.kind = 'rent_changed' AND e.rent_after > e.rent_before
                                 AND e.event_date <= f.rent_roll_date - $2::int
                                 AND e.event_date > f.rent_roll_date - 2 * $2::int)
           ), gone AS (
             SELECT facility_id, move_in_date, watched_from,
                    coalesce(moved_out_on < coalesce(censored_on, roll + 1), false) AS moved,
                    CASE WHEN moved_out_on < coalesce(censored_on, roll + 1) THEN moved_out_on
                         ELSE coalesce(censored_on, roll) END AS last_day
             FROM watched
           )
           SELECT facility_id AS "facility_id!",
                  width_bucket((watched_from - move_in_date)::float8 / 30.4375,
                               $3::float8[]) AS "band!",
                  round(10.0 * (last_day - watched_from) / $2::int)::int AS "tenths!",
                  count(*) AS "tenants!",
                  count(*) FILTER (WHERE moved) AS "left!"
           FROM gone
           GROUP BY 1, 2, 3"#,
        company_id.uuid(),
        OUTCOME_DAYS as i32,
        &TENURE_EDGES[..],
        only
    )
    .fetch_all(pool)
    .await?;
    let mut out: BTreeMap<Uuid, Vec<Outcome>> = BTreeMap::new();
    for r in rows {
        if r.tenants > 0 {
            let band = usize::try_from(r.band).ok();
            out.entry(r.facility_id).or_default().push(baseline_outcome(
                band,
                u32::try_from(r.tenants).unwrap_or(u32::MAX),
                u32::try_from(r.left).unwrap_or(u32::MAX),
                f64::from(r.tenths) / 10.0,
            ));
        }
    }
    Ok(out)
}
