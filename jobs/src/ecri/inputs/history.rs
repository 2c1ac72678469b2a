//! One history of a tenant's increases, from every record that knows of one: the CRM's last
//! increase date, the roll's own upward rent changes (`rent_changed` events), and the approved
//! ECRI batches' lines (not left out) whose increase is in force; with the approved increase
//! not yet in force, and the rents in force 12 months before and on the cap's base date.
//! Two queries for all the facilities, whatever their number.

use crate::error::Result;
use chrono::{Duration, Months, NaiveDate};
use sqlx::PgPool;
use std::collections::BTreeMap;
use uuid::Uuid;

/// Dates of one increase seen by several records (the CRM's date, the roll that showed the
/// new rent, the batch's effective date) are this many days apart at most: one increase.
const SAME_INCREASE_DAYS: i64 = 45;

/// What the roll's events and the approved batches know of one tenant in place.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct Known {
    /// Dates of the upward rent changes of the roll since the tenant's move-in.
    pub(super) raised_on: Vec<NaiveDate>,
    /// Effective dates of the approved increases in force on the roll's date.
    pub(super) in_force: Vec<NaiveDate>,
    /// The earliest effective date of an approved increase not yet in force.
    pub(super) pending: Option<NaiveDate>,
    /// The rent in force 12 months before the roll's date, where the roll's events tell it.
    pub(super) rent_year_ago: Option<f64>,
    /// The rent in force on the cap's base date, where the roll's events tell it.
    pub(super) rent_at_base: Option<f64>,
}

/// A tenant's history read as the engine takes it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct History {
    /// The latest increase in force, whichever record knows of it.
    pub(super) last_increase: Option<NaiveDate>,
    /// How many increases are known (the same increase seen by several records counts once).
    pub(super) count: u32,
    pub(super) pending: Option<NaiveDate>,
}

/// Puts the CRM's dates (`pms`: its last increase date, and the one before the tenant's first
/// roll) together with what the service knows.
pub(super) fn history(pms: [Option<NaiveDate>; 2], known: Option<&Known>) -> History {
    let mut dates: Vec<NaiveDate> = pms.into_iter().flatten().collect();
    if let Some(k) = known {
        dates.extend(&k.raised_on);
        dates.extend(&k.in_force);
    }
    dates.sort_unstable();
    let mut count = 0u32;
    let mut previous: Option<NaiveDate> = None;
    for d in &dates {
        if previous.is_none_or(|p| *d - p > Duration::days(SAME_INCREASE_DAYS)) {
            count += 1;
            previous = Some(*d);
        }
    }
    History {
        last_increase: dates.last().copied(),
        count,
        pending: known.and_then(|k| k.pending),
    }
}

/// The date 12 months before `d`.
pub(super) fn year_before(d: NaiveDate) -> NaiveDate {
    d.checked_sub_months(Months::new(12))
        .unwrap_or(d - Duration::days(365))
}

/// What the roll's events and the approved batches know of each tenant in place, by facility
/// and tenant; `rolls` gives each facility's roll date and its cap's base date.
pub(super) async fn known(
    pool: &PgPool,
    rolls: &BTreeMap<Uuid, (NaiveDate, Option<NaiveDate>)>,
) -> Result<BTreeMap<(Uuid, String), Known>> {
    let ids: Vec<Uuid> = rolls.keys().copied().collect();
    let dates: Vec<NaiveDate> = rolls.values().map(|(d, _)| *d).collect();
    let year_ago: Vec<NaiveDate> = dates.iter().map(|d| year_before(*d)).collect();
    let bases: Vec<Option<NaiveDate>> = rolls.values().map(|(_, b)| *b).collect();
    let mut out: BTreeMap<(Uuid, String), Known> = BTreeMap::new();
    // The rent in force on a date: the rent before the first change after it (the rent now
    // when none); at move-in for a tenant who came since.
    let events = sqlx::query!(
        r#"SELECT e.facility_id, e.tenant_id,
                  array_agg(e.event_date ORDER BY e.event_date)
                      FILTER (WHERE e.rent_after > e.rent_before) AS raised_on,
                  (array_agg(e.rent_before ORDER BY e.event_date, e.id)
                      FILTER (WHERE e.event_date > r.year_ago))[1] AS rent_year_ago,
                  (array_agg(e.rent_before ORDER BY e.event_date, e.id)
                      FILTER (WHERE e.event_date > r.base))[1] AS rent_at_base
           FROM UNNEST($1::uuid[], $2::date[], $3::date[], $4::date[]) AS r(id, d, year_ago, base)
           JOIN rent_roll_tenants t ON t.facility_id = r.id AND t.moved_out_on IS NULL
           JOIN rent_roll_events e ON e.facility_id = t.facility_id AND e.tenant_id = t.tenant_id
           WHERE e.kind = 'rent_changed' AND e.event_date >= t.move_in_date AND e.event_date <= r.d
           GROUP BY e.facility_id, e.tenant_id"#,
        &ids,
        &dates,
        &year_ago,
        &bases as &[Option<NaiveDate>]
    )
    .fetch_all(pool)
    .await?;
    for r in events {
        out.insert(
            (r.facility_id, r.tenant_id),
            Known {
                raised_on: r.raised_on.unwrap_or_default(),
                rent_year_ago: r.rent_year_ago,
                rent_at_base: r.rent_at_base,
                ..Known::default()
            },
        );
    }
    let batches = sqlx::query!(
        r#"SELECT b.facility_id, l.tenant_id AS "tenant_id!",
                  array_agg(b.effective_date) FILTER (WHERE b.effective_date <= r.d) AS in_force,
                  min(b.effective_date) FILTER (WHERE b.effective_date > r.d) AS pending
           FROM UNNEST($1::uuid[], $2::date[]) AS r(id, d)
           JOIN ecri_batches b ON b.facility_id = r.id AND b.status = 'approved'
           JOIN ecri_batch_lines l ON l.batch_id = b.id
           JOIN rent_roll_tenants t ON t.facility_id = b.facility_id AND t.tenant_id = l.tenant_id
                AND t.moved_out_on IS NULL
           WHERE NOT l.excluded AND l.tenant_id IS NOT NULL
             AND b.effective_date >= t.move_in_date
           GROUP BY b.facility_id, l.tenant_id"#,
        &ids,
        &dates
    )
    .fetch_all(pool)
    .await?;
    for r in batches {
        let k = out.entry((r.facility_id, r.tenant_id)).or_default();
        k.in_force = r.in_force.unwrap_or_default();
        k.pending = r.pending;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn one_increase_seen_by_three_records_counts_once_and_the_latest_wins() {
        let known = Known {
            raised_on: vec![d("2026-03-01"), d("2026-09-20")],
            in_force: vec![d("2026-09-05")],
            pending: Some(d("2026-12-01")),
            ..Known::default()
        };
        let h = history([Some(d("2026-09-05")), None], Some(&known));
        assert_eq!(h.last_increase, Some(d("2026-09-20")));
        assert_eq!(h.count, 2);
        assert_eq!(h.pending, Some(d("2026-12-01")));
        // The CRM's field alone, or nothing.
        assert_eq!(history([Some(d("2025-01-01")), None], None).count, 1);
        assert_eq!(history([None, None], None).last_increase, None);
        // Raised before the first roll and since: two increases, the later the last.
        let since = Known {
            raised_on: vec![d("2026-06-01")],
            ..Known::default()
        };
        let h = history([Some(d("2026-06-01")), Some(d("2025-08-01"))], Some(&since));
        assert_eq!((h.count, h.last_increase), (2, Some(d("2026-06-01"))));
        assert_eq!(year_before(d("2026-02-28")), d("2025-02-28"));
    }
}
