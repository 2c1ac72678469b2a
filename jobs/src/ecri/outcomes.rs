//! The evidence the stay model learns from: the outcomes of the company's past increases and
//! of the tenants it left alone, read from the rent rolls' events.

use super::OUTCOME_DAYS;
use crate::error::Result;
use chrono::Duration;
use domain::ecri::Outcome;
use domain::ids::CompanyId;
use sqlx::PgPool;
use std::collections::BTreeMap;
use uuid::Uuid;

/// The outcomes per facility of the company: each increase whose 90 days have passed (one
/// per tenant, with its increase, its new rent against the size's street rate of the latest
/// snapshot, and whether the tenant left within the 90 days), and per facility the tenants in
/// place 90 days before its roll's date who were not increased since, and how many left. Each
/// with whether it is recent (an increase of the last 180 days, and the baseline). Outcomes
/// are counted as of the company's latest roll, so every facility's model is learned from the
/// same evidence.
pub(super) async fn outcomes(
    pool: &PgPool,
    company_id: CompanyId,
) -> Result<BTreeMap<Uuid, Vec<(Outcome, bool)>>> {
    let mut out: BTreeMap<Uuid, Vec<(Outcome, bool)>> = BTreeMap::new();
    let as_of = sqlx::query_scalar!(
        "SELECT max(rent_roll_date) FROM facilities WHERE company_id = $1",
        company_id.uuid()
    )
    .fetch_one(pool)
    .await?;
    let Some(as_of) = as_of else {
        return Ok(out);
    };
    let window_start = as_of - Duration::days(OUTCOME_DAYS);
    // Increases alike (same facility, rents, street rate and window) are one outcome of their
    // tenants: the stay model's likelihood adds them up the same way, and the fits run over
    // far fewer rows. The street rate of each size is read once per facility.
    let increases = sqlx::query!(
        r#"WITH latest AS (
               SELECT f.id AS facility_id,
                      (SELECT max(r.snapshot_date) FROM sync_records r WHERE r.facility_id = f.id) AS d
               FROM facilities f WHERE f.company_id = $1
           ), street AS (
               SELECT u.facility_id, u.size, min(u.street_rate) AS rate
               FROM latest l JOIN sync_unit_types u
                 ON u.facility_id = l.facility_id AND u.snapshot_date = l.d
               GROUP BY u.facility_id, u.size
           ), increased AS (
               SELECT e.facility_id, e.size, e.rent_before, e.rent_after,
                      e.event_date > $2::date - $3::int AS recent,
                      EXISTS (SELECT 1 FROM rent_roll_events o
                              WHERE o.facility_id = e.facility_id AND o.tenant_id = e.tenant_id
                                AND o.kind = 'moved_out' AND o.event_date > e.event_date
                                AND o.event_date <= e.event_date + $3::int) AS gone
               FROM rent_roll_events e
               WHERE e.company_id = $1 AND e.kind = 'rent_changed'
                 AND e.rent_after > e.rent_before AND e.rent_before > 0 AND e.event_date <= $2
           )
           SELECT i.facility_id AS "facility_id!", i.rent_before AS "before!",
                  i.rent_after AS "after!", s.rate AS "street?", i.recent AS "recent!",
                  count(*) AS "tenants!", count(*) FILTER (WHERE i.gone) AS "left!"
           FROM increased i LEFT JOIN street s ON s.facility_id = i.facility_id AND s.size = i.size
           GROUP BY i.facility_id, i.rent_before, i.rent_after, s.rate, i.recent"#,
        company_id.uuid(),
        window_start,
        OUTCOME_DAYS as i32
    )
    .fetch_all(pool)
    .await?;
    for r in increases {
        let premium = r
            .street
            .filter(|s| *s > 0.0)
            .map_or(0.0, |s| (r.after / s - 1.0) * 100.0);
        out.entry(r.facility_id).or_default().push((
            Outcome {
                increase_pct: (r.after / r.before - 1.0) * 100.0,
                premium_pct: premium,
                tenants: u32::try_from(r.tenants).unwrap_or(u32::MAX),
                moved_out: u32::try_from(r.left).unwrap_or(u32::MAX),
            },
            r.recent,
        ));
    }
    let baseline = sqlx::query!(
        r#"SELECT t.facility_id, count(*) AS "tenants!",
                  count(*) FILTER (WHERE t.moved_out_on IS NOT NULL AND t.moved_out_on <= $3) AS "left!"
           FROM rent_roll_tenants t
           WHERE t.company_id = $1 AND t.first_seen_on <= $2 AND t.move_in_date <= $2
             AND (t.moved_out_on IS NULL OR t.moved_out_on > $2)
             AND NOT EXISTS (SELECT 1 FROM rent_roll_events e
                             WHERE e.facility_id = t.facility_id AND e.tenant_id = t.tenant_id
                               AND e.kind = 'rent_changed' AND e.event_date > $2
                               AND e.event_date <= $3)
           GROUP BY t.facility_id"#,
        company_id.uuid(),
        window_start,
        as_of
    )
    .fetch_all(pool)
    .await?;
    for r in baseline {
        if r.tenants > 0 {
            out.entry(r.facility_id).or_default().push((
                Outcome {
                    increase_pct: 0.0,
                    premium_pct: 0.0,
                    tenants: u32::try_from(r.tenants).unwrap_or(u32::MAX),
                    moved_out: u32::try_from(r.left).unwrap_or(u32::MAX),
                },
                true,
            ));
        }
    }
    Ok(out)
}
