//! The rent roll of a snapshot: read whole or set aside, and the cohorts derived from it.
//!
//! A roll is the whole list of tenants in place: a tenant of the roll in force that a new roll
//! leaves out has moved out. So a roll with an unreadable tenant is not applied at all (the
//! tenant would count as gone): the snapshot is stored without it, with a warning naming the
//! tenants that could not be read.

use super::payload::{RollTenant, TenantRent};
use crate::values::{round2, Count, Money, Quantity};
use chrono::{Datelike, NaiveDate};
use std::collections::BTreeMap;

/// Whole months from `from` to `to` (0 when `to` is not after `from`): 2025-01-31 to
/// 2025-02-28 is 0, to 2025-03-01 is 1.
pub fn whole_months(from: NaiveDate, to: NaiveDate) -> u32 {
    if to <= from {
        return 0;
    }
    let months = (to.year() - from.year()) * 12 + to.month() as i32 - from.month() as i32;
    let months = if to.day() < from.day() {
        months - 1
    } else {
        months
    };
    months.max(0) as u32
}

/// The day a tenant's rent was last set: its last increase, else its move-in.
pub fn rent_set_on(t: &RollTenant) -> NaiveDate {
    t.last_increase_date.map_or(t.move_in_date.0, |d| d.0)
}

/// The cohorts of a roll on `date`: one per size and whole months since the rent was last set
/// (the last increase, or the move-in for a tenant never increased), with the tenants' count
/// and average rent (to the cent). `original_rent` is not known from a roll. Sizes in the
/// order `UnitSize` sorts, months ascending.
pub fn cohorts(tenants: &[RollTenant], date: NaiveDate) -> Vec<TenantRent> {
    let mut groups: BTreeMap<(String, u32), (crate::values::UnitSize, u32, f64)> = BTreeMap::new();
    for t in tenants {
        let months = whole_months(rent_set_on(t), date);
        let e = groups
            .entry((t.size.to_string(), months))
            .or_insert((t.size.clone(), 0, 0.0));
        e.1 += 1;
        e.2 += t.rent.get();
    }
    groups
        .into_iter()
        .filter_map(|((_, months), (size, n, sum))| {
            Some(TenantRent {
                size,
                avg_rent: Money::new(round2(sum / f64::from(n))).ok()?,
                tenant_count: Count::new(f64::from(n)).ok()?,
                months_since_last_increase: Quantity::new(f64::from(months)).ok(),
                original_rent: None,
                flagged_count: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    fn tenant(id: &str, size: &str, rent: f64, moved_in: &str, raised: Option<&str>) -> RollTenant {
        serde_json::from_value(serde_json::json!({
            "tenant_id": id, "size": size, "rent": rent, "move_in_date": moved_in,
            "last_increase_date": raised,
        }))
        .unwrap()
    }

    #[test]
    fn months_are_whole_calendar_months() {
        assert_eq!(whole_months(d("2025-01-31"), d("2025-02-28")), 0);
        assert_eq!(whole_months(d("2025-01-31"), d("2025-03-01")), 1);
        assert_eq!(whole_months(d("2024-11-15"), d("2025-11-15")), 12);
        assert_eq!(whole_months(d("2024-11-15"), d("2025-11-14")), 11);
        assert_eq!(whole_months(d("2025-11-15"), d("2025-11-01")), 0);
    }

    #[test]
    fn a_roll_makes_cohorts_by_size_and_months_since_the_rent_was_set() {
        // On 2026-11-20: two 10x10 tenants raised 2026-02-10 (9 months), one 10x10 never
        // raised since 2026-05-01 (6 months), one 5x5 moved in 2024-11-20 (24 months).
        let roll = vec![
            tenant("a", "10x10", 120.0, "2023-01-05", Some("2026-02-10")),
            tenant("b", "10x10", 131.0, "2024-06-01", Some("2026-02-10")),
            tenant("c", "10x10", 99.99, "2026-05-01", None),
            tenant("d", "5x5", 45.1, "2024-11-20", None),
        ];
        let c = cohorts(&roll, d("2026-11-20"));
        let shown: Vec<(String, u32, f64, f64)> = c
            .iter()
            .map(|c| {
                (
                    c.size.to_string(),
                    c.tenant_count.get(),
                    c.avg_rent.get(),
                    c.months_since_last_increase.unwrap().get(),
                )
            })
            .collect();
        assert_eq!(
            shown,
            vec![
                ("10x10".into(), 1, 99.99, 6.0),
                ("10x10".into(), 2, 125.5, 9.0),
                ("5x5".into(), 1, 45.1, 24.0),
            ]
        );
        assert!(c.iter().all(|c| c.original_rent.is_none()));
    }
}
