//! The tenants an outcome follows, as the rolls tell them: who was in place at the notice date
//! (the roll's tenants), and from the roll's events the rent in force on each day after it and
//! the day each left.

use super::super::{Batch, Line};
use crate::error::Result;
use chrono::{Duration, NaiveDate};
use domain::pricing::engine::size_key;
use sqlx::PgPool;
use std::collections::{BTreeMap, BTreeSet};

pub(super) const MONTH_DAYS: f64 = 365.25 / 12.0;

/// A tenant as the rolls tell it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Seen {
    /// The rent on the latest roll.
    pub rent: f64,
    /// The customer the tenant belongs to (`c:<id>`), or the tenant alone (`t:<id>`): the
    /// holdout draws a customer's units together, so they are one observation.
    pub cluster: String,
    /// The rent in force from each day on, ascending; the first also before its day.
    pub rents: Vec<(NaiveDate, f64)>,
    /// The first roll without the tenant after the notice (it paid until the day before).
    pub moved_out_on: Option<NaiveDate>,
}

impl Seen {
    /// The rent in force on `day`.
    pub fn rent_on(&self, day: NaiveDate) -> f64 {
        self.rents
            .iter()
            .take_while(|(d, _)| *d <= day)
            .last()
            .or(self.rents.first())
            .map_or(self.rent, |(_, r)| *r)
    }
}

pub(crate) fn in_place(t: &Seen, day: NaiveDate) -> bool {
    t.moved_out_on.is_none_or(|d| d > day)
}

/// One event of the roll of one tenant.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Event {
    pub date: NaiveDate,
    /// `moved_in`, `rent_changed` or `moved_out`.
    pub kind: String,
    pub rent_before: Option<f64>,
    pub rent_after: Option<f64>,
}

/// A tenant in place at `notice` from its events (in date order, the roll's order within a
/// day) and its row on the latest roll: the rent in force at the notice (the last rent an
/// event on or before it set, else the rent the first later change started from, else the
/// row's) and each change after it until the tenant left (its first move-out after the
/// notice; later events are another tenancy under the same id).
pub(crate) fn seen(
    events: &[Event],
    notice: NaiveDate,
    rent_now: f64,
    row_moved_out_on: Option<NaiveDate>,
    cluster: String,
) -> Seen {
    let moved_out_on = events
        .iter()
        .find(|e| e.kind == "moved_out" && e.date > notice)
        .map(|e| e.date)
        .or(row_moved_out_on);
    let tenancy: Vec<&Event> = events
        .iter()
        .filter(|e| moved_out_on.is_none_or(|m| e.date < m))
        .collect();
    let at_notice = tenancy
        .iter()
        .rev()
        .filter(|e| e.date <= notice)
        .find_map(|e| e.rent_after)
        .or_else(|| {
            tenancy
                .iter()
                .filter(|e| e.date > notice)
                .find_map(|e| e.rent_before)
        })
        .unwrap_or(rent_now);
    let mut rents = vec![(notice, at_notice)];
    for e in tenancy
        .iter()
        .filter(|e| e.date > notice && e.kind == "rent_changed")
    {
        if let Some(r) = e.rent_after {
            rents.push((e.date, r));
        }
    }
    Seen {
        rent: rent_now,
        cluster,
        rents,
        moved_out_on,
    }
}

/// Revenue of one tenant from `start` to `end` (inclusive): each day it stayed at the rent in
/// force that day, a month being 365.25 / 12 days.
pub(crate) fn revenue(t: &Seen, start: NaiveDate, end: NaiveDate) -> f64 {
    let mut total = 0.0;
    let mut day = start;
    while day <= end && in_place(t, day) {
        total += t.rent_on(day);
        day += Duration::days(1);
    }
    total / MONTH_DAYS
}

/// The tenants an outcome follows, as the rolls tell them.
pub(crate) struct Followed {
    /// The batch's tenants in place at the notice date, by tenant id.
    pub increased: BTreeMap<String, Seen>,
    /// The other tenants of the batch's sizes in place at the notice date and not increased
    /// since, each with whether it was held out.
    pub others: Vec<(Seen, bool)>,
}

/// Every tenant of the facility in place at the notice date, with whether it was increased
/// (a rent change upward) between the notice and the last checkpoint.
pub(super) async fn follow(
    pool: &PgPool,
    batch: &Batch,
    lines: &[&Line],
    increased_ids: &BTreeSet<&str>,
    notice: NaiveDate,
    last_day: NaiveDate,
) -> Result<Followed> {
    let sizes: BTreeSet<String> = lines.iter().map(|l| size_key(&l.size)).collect();
    let rows = sqlx::query!(
        r#"SELECT t.tenant_id, t.size, t.rent, t.moved_out_on, t.customer_id,
                  EXISTS (SELECT 1 FROM rent_roll_events e
                          WHERE e.facility_id = t.facility_id AND e.tenant_id = t.tenant_id
                            AND e.kind = 'rent_changed' AND e.rent_after > e.rent_before
                            AND e.event_date > $2 AND e.event_date <= $3) AS "raised!",
                  EXISTS (SELECT 1 FROM ecri_batch_controls c
                          WHERE c.batch_id = $4 AND c.tenant_id = t.tenant_id) AS "control!"
           FROM rent_roll_tenants t
           WHERE t.facility_id = $1 AND t.first_seen_on <= $2 AND t.move_in_date <= $2
             AND (t.moved_out_on IS NULL OR t.moved_out_on > $2)"#,
        batch.facility_id,
        notice,
        last_day,
        batch.id
    )
    .fetch_all(pool)
    .await?;
    let rows: Vec<_> = rows
        .into_iter()
        .filter(|r| {
            increased_ids.contains(r.tenant_id.as_str())
                || (!r.raised && sizes.contains(&size_key(&r.size)))
        })
        .collect();
    let ids: Vec<String> = rows.iter().map(|r| r.tenant_id.clone()).collect();
    let mut events = events(pool, batch.facility_id, &ids, last_day).await?;
    let mut increased: BTreeMap<String, Seen> = BTreeMap::new();
    let mut others: Vec<(Seen, bool)> = Vec::new();
    for r in rows {
        let cluster = r
            .customer_id
            .filter(|c| !c.trim().is_empty())
            .map_or_else(|| format!("t:{}", r.tenant_id), |c| format!("c:{c}"));
        let of_tenant = events.remove(&r.tenant_id).unwrap_or_default();
        let s = seen(&of_tenant, notice, r.rent, r.moved_out_on, cluster);
        if increased_ids.contains(r.tenant_id.as_str()) {
            increased.insert(r.tenant_id, s);
        } else {
            others.push((s, r.control));
        }
    }
    Ok(Followed { increased, others })
}

/// The roll's events of the tenants `ids` up to `last_day`, by tenant, in order.
async fn events(
    pool: &PgPool,
    facility_id: uuid::Uuid,
    ids: &[String],
    last_day: NaiveDate,
) -> Result<BTreeMap<String, Vec<Event>>> {
    let rows = sqlx::query!(
        "SELECT tenant_id, event_date, kind, rent_before, rent_after
         FROM rent_roll_events
         WHERE facility_id = $1 AND tenant_id = ANY($2) AND event_date <= $3
         ORDER BY tenant_id, event_date, id",
        facility_id,
        ids,
        last_day
    )
    .fetch_all(pool)
    .await?;
    let mut out: BTreeMap<String, Vec<Event>> = BTreeMap::new();
    for r in rows {
        out.entry(r.tenant_id).or_default().push(Event {
            date: r.event_date,
            kind: r.kind,
            rent_before: r.rent_before,
            rent_after: r.rent_after,
        });
    }
    Ok(out)
}

/// A group's tenants and how many are in place on `day`.
pub(super) fn count<'a>(group: impl Iterator<Item = &'a Seen>, day: NaiveDate) -> super::Group {
    let mut g = super::Group {
        tenants: 0,
        in_place: 0,
    };
    for t in group {
        g.tenants += 1;
        g.in_place += i64::from(in_place(t, day));
    }
    g
}

/// The increased tenants in place on the latest roll (of `roll`): their added rent per month,
/// and how many pay the new rent.
pub(super) fn realized_uplift(
    lines: &[&Line],
    increased: &BTreeMap<String, Seen>,
    roll: NaiveDate,
) -> (f64, i64) {
    let mut uplift = 0.0;
    let mut applied = 0;
    for l in lines {
        let Some(t) = l.tenant_id.as_deref().and_then(|id| increased.get(id)) else {
            continue;
        };
        if in_place(t, roll) {
            uplift += t.rent - l.current_rent;
            if t.rent >= l.new_rent - 0.005 {
                applied += 1;
            }
        }
    }
    (uplift, applied)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    fn ev(date: &str, kind: &str, before: Option<f64>, after: Option<f64>) -> Event {
        Event {
            date: d(date),
            kind: kind.to_owned(),
            rent_before: before,
            rent_after: after,
        }
    }

    #[test]
    fn revenue_counts_each_day_at_the_rent_then_in_force() {
        // In at 100, raised to 110 on 2026-01-11 and to 121 on 2026-01-21; the latest roll
        // shows 121. January from the 1st: 10 days at 100, 10 at 110, 11 at 121.
        let events = [
            ev("2024-03-01", "moved_in", None, Some(100.0)),
            ev("2026-01-11", "rent_changed", Some(100.0), Some(110.0)),
            ev("2026-01-21", "rent_changed", Some(110.0), Some(121.0)),
        ];
        let t = seen(&events, d("2025-12-01"), 121.0, None, "t:A".into());
        assert_eq!(t.rent_on(d("2026-01-10")), 100.0);
        assert_eq!(t.rent_on(d("2026-01-11")), 110.0);
        assert_eq!(t.rent_on(d("2026-01-31")), 121.0);
        let r = revenue(&t, d("2026-01-01"), d("2026-01-31"));
        let by_hand = (10.0 * 100.0 + 10.0 * 110.0 + 11.0 * 121.0) / MONTH_DAYS;
        assert!((r - by_hand).abs() < 1e-9, "{r} {by_hand}");
        // Today's rent for every day would have counted 31 x 121.
        assert!(r < 31.0 * 121.0 / MONTH_DAYS - 10.0);
    }

    #[test]
    fn a_leaver_pays_until_the_day_before_the_first_roll_without_it() {
        // Gone on the 11th (the roll of that day missed it): 10 days paid, at the rent it
        // last had; the id let again on the 20th is another tenancy and is not counted.
        let events = [
            ev("2024-03-01", "moved_in", None, Some(90.0)),
            ev("2025-06-01", "rent_changed", Some(90.0), Some(100.0)),
            ev("2026-01-11", "moved_out", Some(100.0), None),
            ev("2026-01-20", "moved_in", None, Some(300.0)),
        ];
        let t = seen(&events, d("2025-12-01"), 300.0, None, "t:B".into());
        assert_eq!(t.moved_out_on, Some(d("2026-01-11")));
        let r = revenue(&t, d("2026-01-01"), d("2026-01-31"));
        assert!((r - 100.0 * 10.0 / MONTH_DAYS).abs() < 1e-9);
        assert_eq!(revenue(&t, d("2026-02-01"), d("2026-02-28")), 0.0);
    }

    #[test]
    fn without_events_before_the_notice_the_first_change_tells_the_rent_then() {
        // The first roll that knew the tenant came after its move-in event was recorded: the
        // change's rent before is the rent at the notice. No events at all: the row's rent.
        let events = [ev("2026-01-16", "rent_changed", Some(80.0), Some(95.0))];
        let t = seen(&events, d("2026-01-01"), 95.0, None, "c:X".into());
        assert_eq!(t.rent_on(d("2026-01-01")), 80.0);
        assert_eq!(t.rent_on(d("2026-01-16")), 95.0);
        let r = revenue(&t, d("2026-01-01"), d("2026-01-31"));
        assert!((r - (15.0 * 80.0 + 16.0 * 95.0) / MONTH_DAYS).abs() < 1e-9);
        let bare = seen(
            &[],
            d("2026-01-01"),
            70.0,
            Some(d("2026-01-03")),
            "t:Y".into(),
        );
        assert!(
            (revenue(&bare, d("2026-01-01"), d("2026-01-31")) - 140.0 / MONTH_DAYS).abs() < 1e-9
        );
    }
}
