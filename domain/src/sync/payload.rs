//! The daily sync payload: parsing, validation and the normalised form that every intake path
//! (push, upload, CRM pull) produces.

use crate::validation::ValidationError;
use crate::values::{Percent, COUNT_MAX};
use chrono::NaiveDate;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::HashSet;

mod normalize;
mod reader;
use reader::{join, kind, Reader};

mod types;
pub use types::{
    CompetitorRate, FacilityRef, Lead, MoveIns, MoveOuts, Parsed, Promotion, RollTenant,
    SnapshotDate, SyncPayload, TenantRent, UnitType, EARLIEST_DATE, MAX_FLAGS, MAX_ITEMS,
    MAX_TENANTS,
};

/// Most warnings listed in one response; the rest are counted.
const MAX_WARNINGS: usize = 50;

/// The top-level fields this version reads.
const FIELDS: [&str; 11] = [
    "facility",
    "date",
    "occupancy_pct",
    "move_ins",
    "move_outs",
    "unit_types",
    "promotions",
    "competitor_rates",
    "tenant_rents",
    "leads",
    "tenants",
];

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

/// Parses a JSON body the way a nightly sync needs it read: forgiving. What is clearly meant is
/// normalised (see `normalize`); a field or an array item that still cannot be read is left out
/// and reported in `warnings`. Only a snapshot that cannot be placed is an error: a body that is
/// not a JSON object, a missing or impossible `date`, a `facility` that is not an object, an
/// array over [`MAX_ITEMS`]. `today` is the server's current UTC date: a snapshot may be dated at
/// most one day ahead of it (time zones east of UTC are already on the next day).
pub fn parse(body: &[u8], today: NaiveDate) -> Result<Parsed, ValidationError> {
    crate::validation::require_object(body)?;
    let mut de = serde_json::Deserializer::from_slice(body);
    let root: Value =
        serde_path_to_error::deserialize(&mut de).map_err(ValidationError::from_serde)?;
    de.end().map_err(|e| {
        ValidationError::new(
            "body",
            format!("trailing characters after the JSON object ({e})"),
        )
    })?;
    let Value::Object(mut obj) = root else {
        return Err(ValidationError::new("body", "must be a JSON object"));
    };
    let mut r = Reader::default();
    for key in obj.keys().filter(|k| !FIELDS.contains(&k.as_str())) {
        r.note(key, "unknown field, ignored");
    }
    normalize::clean(&mut obj, "", &mut r);

    let date: SnapshotDate = match obj.get("date") {
        None => return Err(ValidationError::new("date", "is required")),
        Some(v) => r.value(v, "date")?,
    };
    let facility = match obj.get_mut("facility") {
        None => None,
        Some(Value::Object(f)) => Some(r.object::<FacilityRef>(
            f,
            "facility",
            &["id", "external_id", "source_system", "name"],
        )?),
        Some(_) => return Err(ValidationError::new("facility", "must be an object")),
    };
    let mut take = |obj: &mut Map<String, Value>, key: &str| -> Result<Value, ValidationError> {
        match obj.remove(key) {
            None => Ok(Value::Array(Vec::new())),
            Some(Value::Array(a)) if a.len() > MAX_ITEMS => Err(ValidationError::new(
                key,
                format!("at most {MAX_ITEMS} entries, got {}", a.len()),
            )),
            Some(v @ Value::Array(_)) => Ok(v),
            Some(other) => {
                r.leave_out(ValidationError::new(
                    key,
                    format!("must be an array, got {}", kind(&other)),
                ));
                Ok(Value::Array(Vec::new()))
            }
        }
    };
    let roll = obj.remove("tenants");
    let arrays: Vec<(&str, Value)> = [
        "unit_types",
        "promotions",
        "competitor_rates",
        "tenant_rents",
        "leads",
    ]
    .into_iter()
    .map(|k| take(&mut obj, k).map(|v| (k, v)))
    .collect::<Result<_, _>>()?;
    // The scalar fields, each left out on its own when it cannot be read.
    let mut scalars: Map<String, Value> = ["occupancy_pct", "move_ins", "move_outs"]
        .into_iter()
        .filter_map(|k| obj.remove(k).map(|v| (k.to_owned(), v)))
        .collect();
    let rest: Scalars = r.object(&mut scalars, "", &[])?;
    obj.extend(scalars);

    let mut payload = SyncPayload {
        facility,
        date,
        occupancy_pct: rest.occupancy_pct,
        move_ins: rest.move_ins,
        move_outs: rest.move_outs,
        unit_types: Vec::new(),
        promotions: Vec::new(),
        competitor_rates: Vec::new(),
        tenant_rents: Vec::new(),
        leads: Vec::new(),
        tenants: None,
    };
    payload.tenants = match roll {
        None | Some(Value::Null) => None,
        Some(Value::Array(list)) if list.len() > MAX_TENANTS => {
            return Err(ValidationError::new(
                "tenants",
                format!("at most {MAX_TENANTS} entries, got {}", list.len()),
            ))
        }
        Some(Value::Array(mut list)) => read_roll(&mut r, &mut list, date.0),
        Some(other) => {
            r.leave_out(ValidationError::new(
                "tenants",
                format!("must be an array, got {}", kind(&other)),
            ));
            None
        }
    };
    for (key, mut items) in arrays {
        let Value::Array(list) = &mut items else {
            continue;
        };
        match key {
            "unit_types" => {
                let mut seen = HashSet::new();
                // Facility totals of the counts so far: each must stay a count the service
                // stores (per size and for the facility), whatever the number of tiers.
                let mut sums = [0u64; 3];
                payload.unit_types = r.items(list, key, |u: &UnitType| {
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
                });
            }
            "promotions" => payload.promotions = r.items(list, key, |_: &Promotion| Ok(())),
            "competitor_rates" => {
                payload.competitor_rates = r.items(list, key, |_: &CompetitorRate| Ok(()));
            }
            "tenant_rents" => {
                let mut total = 0u64;
                payload.tenant_rents = r.items(list, key, |t: &TenantRent| {
                    total =
                        add_within(total, t.tenant_count.get(), "tenant_count", "tenant rents'")?;
                    Ok(())
                });
            }
            _ => {
                let mut channels = HashSet::new();
                let mut total = 0u64;
                payload.leads = r.items(list, key, |l: &Lead| {
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
                });
            }
        }
        obj.insert(key.to_owned(), items);
    }
    // A roll sent without cohorts gives them; the stored snapshot keeps the cohorts, not the
    // roll (the roll's state and its changes are kept per tenant, see `jobs::rent_roll`).
    if let Some(roll) = &payload.tenants {
        if payload.tenant_rents.is_empty() && !roll.is_empty() {
            payload.tenant_rents = super::roll::cohorts(roll, date.0);
            if payload.tenant_rents.len() > MAX_ITEMS {
                payload.tenant_rents.truncate(MAX_ITEMS);
                r.note(
                    "tenants",
                    format!("more than {MAX_ITEMS} cohorts: the first {MAX_ITEMS} kept"),
                );
            }
            obj.insert(
                "tenant_rents".to_owned(),
                serde_json::to_value(&payload.tenant_rents).unwrap_or(Value::Null),
            );
        }
    }
    payload.check(today)?;
    let mut warnings = r.warnings;
    if warnings.len() > MAX_WARNINGS {
        let more = warnings.len() - MAX_WARNINGS;
        warnings.truncate(MAX_WARNINGS);
        warnings.push(format!("{more} more warnings"));
    }
    Ok(Parsed {
        payload,
        warnings,
        left_out: r.left_out,
        normalized: Value::Object(obj),
    })
}

/// Reads a rent roll whole: every tenant with every field it sends, ids unique, dates that
/// fit (moved in on or before the snapshot, increased between the move-in and the snapshot).
/// One tenant that cannot be read sets the roll aside (`None`, with a warning per tenant and
/// one for the roll): a roll without a tenant says the tenant moved out.
fn read_roll(r: &mut Reader, list: &mut [Value], date: NaiveDate) -> Option<Vec<RollTenant>> {
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

fn check_tenant(
    t: &RollTenant,
    date: NaiveDate,
    ids: &mut HashSet<String>,
) -> Result<(), ValidationError> {
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

/// [`parse`] for payloads the service builds itself (from upload rows): anything left out is
/// an error, since the rows were checked before.
pub fn parse_exact(body: &[u8], today: NaiveDate) -> Result<Parsed, ValidationError> {
    let parsed = parse(body, today)?;
    match parsed.left_out.first() {
        Some(e) => Err(e.clone()),
        None => Ok(parsed),
    }
}

/// The payload's scalar fields, read together so each can be left out on its own.
#[derive(Deserialize)]
struct Scalars {
    occupancy_pct: Option<Percent>,
    move_ins: Option<MoveIns>,
    move_outs: Option<MoveOuts>,
}

impl SyncPayload {
    /// Checks the rules that place the snapshot: the date window and the array lengths (items
    /// that disagree with each other are left out while reading).
    pub fn check(&self, today: NaiveDate) -> Result<(), ValidationError> {
        let latest = today.succ_opt().unwrap_or(today);
        if self.date.0 > latest {
            return Err(ValidationError::new(
                "date",
                format!(
                    "{} is in the future (latest accepted: {latest})",
                    self.date.0
                ),
            ));
        }
        if self.date.0 < EARLIEST_DATE {
            return Err(ValidationError::new(
                "date",
                format!("must not be before {EARLIEST_DATE}"),
            ));
        }
        for (name, len) in [
            ("unit_types", self.unit_types.len()),
            ("promotions", self.promotions.len()),
            ("competitor_rates", self.competitor_rates.len()),
            ("tenant_rents", self.tenant_rents.len()),
            ("leads", self.leads.len()),
        ] {
            if len > MAX_ITEMS {
                return Err(ValidationError::new(
                    name,
                    format!("at most {MAX_ITEMS} entries, got {len}"),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
