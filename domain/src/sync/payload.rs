//! The daily sync payload: parsing, validation and the normalised form that every intake path
//! (push, upload, CRM pull) produces.

use crate::validation::ValidationError;
use crate::values::Percent;
use chrono::NaiveDate;
use serde::Deserialize;
use serde_json::{Map, Value};

mod items;
mod normalize;
mod reader;
use items::{read_leads, read_roll, read_tenant_rents, read_unit_types};
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

/// Parses a JSON body the way a nightly sync needs it read: forgiving. What is clearly meant is
/// normalised (see `normalize`); a field or an array item that still cannot be read is left out
/// and reported in `warnings`. Only a snapshot that cannot be placed is an error: a body that is
/// not a JSON object, a missing or impossible `date`, a `facility` that is not an object, an
/// array over [`MAX_ITEMS`]. `today` is the server's current UTC date: a snapshot may be dated at
/// most one day ahead of it (time zones east of UTC are already on the next day).
pub fn parse(body: &[u8], today: NaiveDate) -> Result<Parsed, ValidationError> {
    let mut obj = read_object(body)?;
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
    let roll = obj.remove("tenants");
    let arrays: Vec<(&str, Value)> = [
        "unit_types",
        "promotions",
        "competitor_rates",
        "tenant_rents",
        "leads",
    ]
    .into_iter()
    .map(|k| take_array(&mut r, &mut obj, k).map(|v| (k, v)))
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
    payload.tenants = take_roll(&mut r, roll, date.0)?;
    for (key, mut items) in arrays {
        let Value::Array(list) = &mut items else {
            continue;
        };
        match key {
            "unit_types" => payload.unit_types = read_unit_types(&mut r, list),
            "promotions" => payload.promotions = r.items(list, key, |_: &Promotion| Ok(())),
            "competitor_rates" => {
                payload.competitor_rates = r.items(list, key, |_: &CompetitorRate| Ok(()));
            }
            "tenant_rents" => payload.tenant_rents = read_tenant_rents(&mut r, list),
            _ => payload.leads = read_leads(&mut r, list),
        }
        obj.insert(key.to_owned(), items);
    }
    cohorts_of_roll(&mut r, &mut payload, &mut obj);
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

/// The body as a JSON object, or the error that rejects it whole.
fn read_object(body: &[u8]) -> Result<Map<String, Value>, ValidationError> {
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
    let Value::Object(obj) = root else {
        return Err(ValidationError::new("body", "must be a JSON object"));
    };
    Ok(obj)
}

/// Takes the array `key` out of the payload: empty when absent, left out (empty) when not an
/// array; one over [`MAX_ITEMS`] is the snapshot's error.
fn take_array(
    r: &mut Reader,
    obj: &mut Map<String, Value>,
    key: &str,
) -> Result<Value, ValidationError> {
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
}

/// The rent roll sent as `tenants`, if any and readable whole (see [`read_roll`]); one over
/// [`MAX_TENANTS`] is the snapshot's error.
fn take_roll(
    r: &mut Reader,
    roll: Option<Value>,
    date: NaiveDate,
) -> Result<Option<Vec<RollTenant>>, ValidationError> {
    Ok(match roll {
        None | Some(Value::Null) => None,
        Some(Value::Array(list)) if list.len() > MAX_TENANTS => {
            return Err(ValidationError::new(
                "tenants",
                format!("at most {MAX_TENANTS} entries, got {}", list.len()),
            ))
        }
        Some(Value::Array(mut list)) => read_roll(r, &mut list, date),
        Some(other) => {
            r.leave_out(ValidationError::new(
                "tenants",
                format!("must be an array, got {}", kind(&other)),
            ));
            None
        }
    })
}

/// A roll sent without cohorts gives them; the stored snapshot keeps the cohorts, not the
/// roll (the roll's state and its changes are kept per tenant, see `jobs::rent_roll`).
fn cohorts_of_roll(r: &mut Reader, payload: &mut SyncPayload, obj: &mut Map<String, Value>) {
    let Some(roll) = &payload.tenants else {
        return;
    };
    if payload.tenant_rents.is_empty() && !roll.is_empty() {
        payload.tenant_rents = super::roll::cohorts(roll, payload.date.0);
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
