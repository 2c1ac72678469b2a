//! The payload's arrays read item by item. Each item is read on its own, but some rules span
//! items (a size and tier or a channel sent twice, totals past what the service stores, a rent
//! roll that applies only whole), so each array has its reader here with the state its rules
//! keep across items.

use super::reader::{join, kind, Reader};
use super::{Lead, RollTenant, TenantRent, UnitType, MAX_FLAGS, MAX_WARNINGS};
use crate::validation::ValidationError;
use crate::values::COUNT_MAX;
use chrono::NaiveDate;
use serde_json::Value;
use std::collections::HashSet;

/// The fields of a rent roll's tenant: each must read, or the tenant (and so the roll) is
/// unreadable.
const TENANT_FIELDS: [&str; 8] = [
    "tenant_id",
    "size",
    "tier",
    "rent",
    "move_in_date",
    "last_increase_date",
    "customer_id",
    "flags",
];

/// The unit types: occupied at most total, each size and tier once, and the facility's totals
/// of the counts so far each a count the service stores (per size and for the facility),
/// whatever the number of tiers.
pub(super) fn read_unit_types(r: &mut Reader, list: &mut Vec<Value>) -> Vec<UnitType> {
    let mut seen = HashSet::new();
    let mut sums = [0u64; 3];
    r.items(list, "unit_types", |u: &UnitType| {
        if let (Some(total), Some(occupied)) = (u.total_units, u.occupied_units) {
            if occupied > total {
                return Err(ValidationError::new(
                    "occupied_units",
                    format!(
                        "{} is more than total_units {}",
                        occupied.get(),
                        total.get()
                    ),
                ));
            }
        }
        let counts = [
            ("total_units", u.total_units),
            ("occupied_units", u.occupied_units),
            ("move_ins_mtd", u.move_ins_mtd),
        ];
        let mut next = sums;
        for ((name, count), sum) in counts.into_iter().zip(&mut next) {
            let count = count.map_or(0, |c| c.get());
            *sum = add_within(*sum, count, name, "unit types'")?;
        }
        if !seen.insert((u.size.to_string(), u.tier_str().to_lowercase())) {
            return Err(ValidationError::new(
                "size",
                format!("size {} with tier '{}' appears twice", u.size, u.tier_str()),
            ));
        }
        sums = next;
        Ok(())
    })
}

/// The tenant rents, their tenants adding up to a count the service stores.
pub(super) fn read_tenant_rents(r: &mut Reader, list: &mut Vec<Value>) -> Vec<TenantRent> {
    let mut total = 0u64;
    r.items(list, "tenant_rents", |t: &TenantRent| {
        if let Some(flagged) = t.flagged_count {
            if flagged.get() > t.tenant_count.get() {
                return Err(ValidationError::new(
                    "flagged_count",
                    format!(
                        "{} flagged tenants in a cohort of {}",
                        flagged.get(),
                        t.tenant_count.get()
                    ),
                ));
            }
        }
        total = add_within(total, t.tenant_count.get(), "tenant_count", "tenant rents'")?;
        Ok(())
    })
}

/// The leads: each channel once, their counts adding up to a count the service stores.
pub(super) fn read_leads(r: &mut Reader, list: &mut Vec<Value>) -> Vec<Lead> {
    let mut channels = HashSet::new();
    let mut total = 0u64;
    r.items(list, "leads", |l: &Lead| {
        let next = add_within(total, l.count.get(), "count", "leads'")?;
        if channels.insert(l.channel.as_str().to_lowercase()) {
            total = next;
            Ok(())
        } else {
            Err(ValidationError::new(
                "channel",
                format!("'{}' appears twice", l.channel.as_str()),
            ))
        }
    })
}

/// Reads a rent roll whole: every tenant with every field it sends, ids unique, dates that
/// fit (moved in on or before the snapshot, increased between the move-in and the snapshot).
/// One tenant that cannot be read sets the roll aside (`None`, with a warning per tenant and
/// one for the roll): a roll without a tenant says the tenant moved out.
pub(super) fn read_roll(
    r: &mut Reader,
    list: &mut [Value],
    date: NaiveDate,
) -> Option<Vec<RollTenant>> {
    let mut out = Vec::with_capacity(list.len());
    let mut ids = HashSet::with_capacity(list.len());
    let mut bad = 0usize;
    for (i, item) in list.iter_mut().enumerate() {
        let path = format!("tenants[{i}]");
        let read = match item {
            Value::Object(o) => r.object::<RollTenant>(o, &path, &TENANT_FIELDS),
            other => Err(ValidationError::new(
                path.clone(),
                format!("must be an object, got {}", kind(other)),
            )),
        }
        .and_then(|t| {
            check_tenant(&t, date, &mut ids)
                .map(|()| t)
                .map_err(|e| ValidationError::new(join(&path, &e.path), e.message))
        });
        match read {
            Ok(t) => out.push(t),
            Err(e) => {
                bad += 1;
                if bad <= MAX_WARNINGS {
                    r.note(&e.path, format!("unreadable ({})", e.message));
                }
            }
        }
    }
    if bad > 0 {
        r.leave_out(ValidationError::new(
            "tenants",
            format!(
                "the rent roll was set aside: {bad} of {} tenants could not be read, and a \
                 roll is applied only whole (a tenant missing from it counts as moved out)",
                list.len()
            ),
        ));
        return None;
    }
    Some(out)
}

/// Earliest move-in date a roll may carry.
const EARLIEST_MOVE_IN: NaiveDate = NaiveDate::from_ymd_opt(1900, 1, 1).expect("a date");

fn check_tenant(
    t: &RollTenant,
    date: NaiveDate,
    ids: &mut HashSet<String>,
) -> Result<(), ValidationError> {
    // A roll's dates are real tenancies: the year 0 (or 1066) is a CRM's placeholder, and
    // would read as a tenant of centuries to the ECRI engine.
    if t.move_in_date.0 < EARLIEST_MOVE_IN {
        return Err(ValidationError::new(
            "move_in_date",
            format!(
                "{} is before {EARLIEST_MOVE_IN}: not a real move-in",
                t.move_in_date.0
            ),
        ));
    }
    if t.move_in_date.0 > date {
        return Err(ValidationError::new(
            "move_in_date",
            format!("{} is after the snapshot's date {date}", t.move_in_date.0),
        ));
    }
    if let Some(raised) = t.last_increase_date {
        if raised.0 < t.move_in_date.0 || raised.0 > date {
            return Err(ValidationError::new(
                "last_increase_date",
                format!(
                    "{} is not between the move-in {} and the snapshot's date {date}",
                    raised.0, t.move_in_date.0
                ),
            ));
        }
    }
    if t.flags.len() > MAX_FLAGS {
        return Err(ValidationError::new(
            "flags",
            format!("at most {MAX_FLAGS} flags, got {}", t.flags.len()),
        ));
    }
    if !ids.insert(t.tenant_id.as_str().to_owned()) {
        return Err(ValidationError::new(
            "tenant_id",
            format!("'{}' appears twice", t.tenant_id.as_str()),
        ));
    }
    Ok(())
}

/// A snapshot's running total of `field` with one more item's `count`, or the error that
/// leaves that item out when it would take the total past [`COUNT_MAX`].
fn add_within(total: u64, count: u32, field: &str, whose: &str) -> Result<u64, ValidationError> {
    let next = total + u64::from(count);
    if next > u64::from(COUNT_MAX) {
        return Err(ValidationError::new(
            field,
            format!("the {whose} {field} would add up to more than {COUNT_MAX}"),
        ));
    }
    Ok(next)
}
