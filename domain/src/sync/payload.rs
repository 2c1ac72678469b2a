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
    CompetitorRate, FacilityRef, Lead, MoveIns, MoveOuts, Parsed, Promotion, SnapshotDate,
    SyncPayload, TenantRent, UnitType, EARLIEST_DATE, MAX_ITEMS,
};

/// Most warnings listed in one response; the rest are counted.
const MAX_WARNINGS: usize = 50;

/// The top-level fields this version reads.
const FIELDS: [&str; 10] = [
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
