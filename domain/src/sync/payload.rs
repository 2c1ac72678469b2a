//! The daily sync payload: parsing, validation and the normalised form that every intake path
//! (push, upload, CRM pull) produces.

use crate::validation::ValidationError;
use crate::values::Percent;
use chrono::NaiveDate;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::HashSet;

mod normalize;

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
                    if !seen.insert((u.size.to_string(), u.tier_str().to_lowercase())) {
                        return Err(ValidationError::new(
                            "size",
                            format!("size {} with tier '{}' appears twice", u.size, u.tier_str()),
                        ));
                    }
                    Ok(())
                });
            }
            "promotions" => payload.promotions = r.items(list, key, |_: &Promotion| Ok(())),
            "competitor_rates" => {
                payload.competitor_rates = r.items(list, key, |_: &CompetitorRate| Ok(()));
            }
            "tenant_rents" => payload.tenant_rents = r.items(list, key, |_: &TenantRent| Ok(())),
            _ => {
                let mut channels = HashSet::new();
                payload.leads = r.items(list, key, |l: &Lead| {
                    if channels.insert(l.channel.as_str().to_lowercase()) {
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

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn join(prefix: &str, path: &str) -> String {
    match (prefix.is_empty(), path.is_empty() || path == "body") {
        (true, _) => path.to_owned(),
        (false, true) => prefix.to_owned(),
        (false, false) if path.starts_with('[') => format!("{prefix}{path}"),
        (false, false) => format!("{prefix}.{path}"),
    }
}

/// Reads values out of the payload, collecting what it noted.
#[derive(Default)]
struct Reader {
    warnings: Vec<String>,
    left_out: Vec<ValidationError>,
}

impl Reader {
    fn note(&mut self, path: &str, what: impl std::fmt::Display) {
        self.warnings.push(format!("{path}: {what}"));
    }

    fn leave_out(&mut self, e: ValidationError) {
        self.warnings
            .push(format!("{}: {}; left out", e.path, e.message));
        self.left_out.push(e);
    }

    /// Deserialises one value, noting unknown fields; errors carry the full path.
    fn value<T: DeserializeOwned>(&mut self, v: &Value, path: &str) -> Result<T, ValidationError> {
        let mut unknown = Vec::new();
        let result = {
            let mut seen = |p: serde_ignored::Path<'_>| unknown.push(p.to_string());
            serde_path_to_error::deserialize(serde_ignored::Deserializer::new(v, &mut seen))
        };
        match result {
            Ok(t) => {
                for u in unknown {
                    self.note(&join(path, &display_path(&u)), "unknown field, ignored");
                }
                Ok(t)
            }
            Err(e) => {
                let root = matches!(e.path().to_string().as_str(), "." | "");
                let e = ValidationError::from_serde(e);
                // At the root of this value, `from_serde` speaks of the whole body.
                let message = match (root, e.message.strip_prefix("must be a JSON object (")) {
                    (true, Some(inner)) if e.path == "body" => {
                        inner.strip_suffix(')').unwrap_or(inner).to_owned()
                    }
                    _ => e.message,
                };
                Err(ValidationError::new(join(path, &e.path), message))
            }
        }
    }

    /// Deserialises an object, leaving out (and noting) each optional field that cannot be
    /// read. A required field that cannot be read, or one of `strict`, is the object's error.
    fn object<T: DeserializeOwned>(
        &mut self,
        obj: &mut Map<String, Value>,
        path: &str,
        strict: &[&str],
    ) -> Result<T, ValidationError> {
        let mut dropped: Vec<ValidationError> = Vec::new();
        loop {
            let mut trial = Reader::default();
            match trial.value::<T>(&Value::Object(obj.clone()), path) {
                Ok(t) => {
                    self.warnings.extend(trial.warnings);
                    for e in dropped {
                        self.leave_out(e);
                    }
                    return Ok(t);
                }
                Err(e) => {
                    let within = if path.is_empty() {
                        e.path.as_str()
                    } else {
                        e.path
                            .strip_prefix(path)
                            .map_or("", |p| p.trim_start_matches('.'))
                    };
                    let field = within.split(['.', '[']).next().unwrap_or("");
                    let removable = !field.is_empty()
                        && !strict.contains(&field)
                        && e.message != "is required"
                        && remove_path(obj, within);
                    if !removable || dropped.len() > 32 {
                        // A required field that was left out for its value: its first error
                        // says more than "is required".
                        let first = dropped.into_iter().find(|d| d.path == e.path);
                        return Err(first.unwrap_or(e));
                    }
                    dropped.push(e);
                }
            }
        }
    }

    /// Reads each item of an array on its own: one that cannot be read (or that `check`
    /// refuses) is left out of the result and of `list`, and noted with its path.
    fn items<T: DeserializeOwned>(
        &mut self,
        list: &mut Vec<Value>,
        key: &str,
        mut check: impl FnMut(&T) -> Result<(), ValidationError>,
    ) -> Vec<T> {
        let mut out = Vec::with_capacity(list.len());
        let mut index = 0;
        list.retain_mut(|item| {
            let path = format!("{key}[{index}]");
            index += 1;
            let read = match item {
                Value::Object(o) => self.object::<T>(o, &path, &[]),
                other => Err(ValidationError::new(
                    path.clone(),
                    format!("must be an object, got {}", kind(other)),
                )),
            };
            match read.and_then(|t| {
                check(&t).map_err(|e| ValidationError::new(join(&path, &e.path), e.message))?;
                Ok(t)
            }) {
                Ok(t) => {
                    out.push(t);
                    true
                }
                Err(e) => {
                    self.warnings
                        .push(format!("{path}: left out ({}: {})", e.path, e.message));
                    self.left_out.push(e);
                    false
                }
            }
        });
        out
    }
}

/// Removes the value at a path such as `move_ins.mtd` or `website_url`; false when there is
/// nothing there to remove.
fn remove_path(obj: &mut Map<String, Value>, path: &str) -> bool {
    match path.split_once('.') {
        None => obj.remove(path).is_some(),
        Some((head, rest)) => match obj.get_mut(head) {
            Some(Value::Object(inner)) => remove_path(inner, rest),
            _ => obj.remove(head).is_some(),
        },
    }
}

/// Renders a serde_ignored path (`unit_types.?.0.extra`) in the style of error paths
/// (`unit_types[0].extra`): option markers dropped, indexes in brackets.
fn display_path(raw: &str) -> String {
    let mut out = String::new();
    for seg in raw.split('.').filter(|s| *s != "?" && !s.is_empty()) {
        if seg.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{seg}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(seg);
        }
    }
    out
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
