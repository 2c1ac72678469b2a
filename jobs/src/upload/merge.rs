//! Merging uploaded unit rates into a day that already has a record (from a push, a CRM pull or
//! an earlier upload). An upload carries unit types only, so it must not take the rest of the
//! day with it: the stored payload is kept whole and only its `unit_types` change. An uploaded
//! unit type updates the stored one of the same size and tier, field by field: what the upload
//! carries replaces the stored value, what it does not carry (occupancy, move-ins, unit counts
//! of a rate-only file) stays. New ones are added; the others stay.

use crate::error::ValidationError;
use domain::sync::SyncPayload;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;

/// A unit type's identity within a day: its size and tier, as the sync payload's duplicate
/// check compares them (normalised size, tier without case).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
pub struct UnitKey {
    /// Unit size.
    pub size: String,
    /// Tier; empty when none.
    pub tier: String,
}

impl UnitKey {
    fn of(u: &domain::sync::payload::UnitType) -> Self {
        Self {
            size: u.size.to_string(),
            tier: u.tier_str().to_lowercase(),
        }
    }
}

/// What an upload did to one day's unit types.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MergeReport {
    /// Stored unit types that an uploaded one updated (the fields it carried).
    pub replaced: Vec<UnitKey>,
    /// Uploaded unit types the day did not have.
    pub added: Vec<UnitKey>,
    /// Stored unit types the upload did not mention, kept as they were.
    pub kept: Vec<UnitKey>,
}

/// The stored payload `stored_raw` (already parsed as `stored`) with the unit types of
/// `uploaded` (a payload built from upload rows) merged in. Everything else of the stored
/// payload, including fields this version does not know, is kept as stored.
pub fn merge_day(
    stored_raw: &Value,
    stored: &SyncPayload,
    uploaded_raw: &Value,
    uploaded: &SyncPayload,
) -> Result<(Value, MergeReport), ValidationError> {
    let Some(stored_obj) = stored_raw.as_object() else {
        return Err(ValidationError::new(
            "stored record",
            "its payload is not a JSON object",
        ));
    };
    let stored_items = json_items(stored_raw, stored.unit_types.len())?;
    let uploaded_items = json_items(uploaded_raw, uploaded.unit_types.len())?;
    let upload_index: HashMap<UnitKey, usize> = uploaded
        .unit_types
        .iter()
        .enumerate()
        .map(|(i, u)| (UnitKey::of(u), i))
        .collect();
    let mut report = MergeReport::default();
    let mut used = vec![false; uploaded.unit_types.len()];
    let mut merged = Vec::with_capacity(stored_items.len() + uploaded_items.len());
    // Stored order first, so a day reads the same before and after; additions at the end.
    for (u, item) in stored.unit_types.iter().zip(stored_items) {
        let key = UnitKey::of(u);
        match upload_index.get(&key) {
            Some(&i) => {
                used[i] = true;
                merged.push(overlay(item, &uploaded_items[i]));
                report.replaced.push(key);
            }
            None => {
                merged.push(item.clone());
                report.kept.push(key);
            }
        }
    }
    for (i, u) in uploaded.unit_types.iter().enumerate() {
        if !used[i] {
            merged.push(uploaded_items[i].clone());
            report.added.push(UnitKey::of(u));
        }
    }
    let mut out = stored_obj.clone();
    out.insert("unit_types".to_owned(), Value::Array(merged));
    Ok((Value::Object(out), report))
}

/// The stored unit type with each field the uploaded one carries put over it.
fn overlay(stored: &Value, uploaded: &Value) -> Value {
    match (stored.as_object(), uploaded.as_object()) {
        (Some(stored), Some(uploaded)) => {
            let mut out = stored.clone();
            for (k, v) in uploaded.iter().filter(|(_, v)| !v.is_null()) {
                out.insert(k.clone(), v.clone());
            }
            Value::Object(out)
        }
        _ => uploaded.clone(),
    }
}

/// A new day: every uploaded unit type is an addition.
pub fn new_day(uploaded: &SyncPayload) -> MergeReport {
    MergeReport {
        added: uploaded.unit_types.iter().map(UnitKey::of).collect(),
        ..MergeReport::default()
    }
}

/// The `unit_types` array of a raw payload, which must match its parsed form item for item.
fn json_items(raw: &Value, expected: usize) -> Result<&[Value], ValidationError> {
    let items = match raw.get("unit_types") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(a)) => a.as_slice(),
        Some(_) => return Err(ValidationError::new("unit_types", "must be an array")),
    };
    if items.len() != expected {
        return Err(ValidationError::new(
            "unit_types",
            "the stored payload does not match its parsed form",
        ));
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: &Value) -> SyncPayload {
        let today = "2026-11-22".parse().unwrap();
        domain::sync::parse(v.to_string().as_bytes(), today)
            .unwrap()
            .payload
    }

    fn key(size: &str, tier: &str) -> UnitKey {
        UnitKey {
            size: size.into(),
            tier: tier.into(),
        }
    }

    #[test]
    fn uploaded_sizes_update_their_own_and_everything_else_stays() {
        let stored = json!({
            "facility": {"name": "Elm St", "external_id": "F-1"},
            "date": "2026-11-20",
            "occupancy_pct": 91.5,
            "move_ins": {"daily": 2, "mtd": 21},
            "unit_types": [
                {"size": "10X10", "tier": "Climate", "street_rate": 100, "total_units": 50,
                 "occupancy_pct": 90, "move_ins_mtd": 3},
                {"size": "5x5", "street_rate": 40}
            ],
            "tenant_rents": [{"size": "10x10", "avg_rent": 90, "tenant_count": 40}],
            "leads": [{"channel": "web", "count": 4}],
            "vendor_extra": {"kept": true}
        });
        let uploaded = json!({
            "facility": {"id": "00000000-0000-0000-0000-000000000001"},
            "date": "2026-11-20",
            "unit_types": [
                {"size": "10x20", "street_rate": 180},
                {"size": "10x10", "tier": "climate", "street_rate": 120, "move_ins_mtd": 4}
            ]
        });
        let (merged, report) =
            merge_day(&stored, &parse(&stored), &uploaded, &parse(&uploaded)).unwrap();
        assert_eq!(report.replaced, vec![key("10x10", "climate")]);
        assert_eq!(report.kept, vec![key("5x5", "")]);
        assert_eq!(report.added, vec![key("10x20", "")]);
        assert_eq!(
            merged["unit_types"],
            // The rate and move-ins the upload carried, in its spelling; the units and the
            // occupancy it did not carry, as pushed.
            json!([
                {"size": "10x10", "tier": "climate", "street_rate": 120, "total_units": 50,
                 "occupancy_pct": 90, "move_ins_mtd": 4},
                {"size": "5x5", "street_rate": 40},
                {"size": "10x20", "street_rate": 180}
            ])
        );
        for field in [
            "facility",
            "occupancy_pct",
            "move_ins",
            "tenant_rents",
            "leads",
            "vendor_extra",
        ] {
            assert_eq!(merged[field], stored[field], "{field}");
        }
    }

    #[test]
    fn a_day_without_unit_types_gains_the_uploaded_ones() {
        let stored = json!({"facility": {"name": "A"}, "date": "2026-11-20", "occupancy_pct": 80});
        let uploaded =
            json!({"date": "2026-11-20", "unit_types": [{"size": "5x5", "street_rate": 40}]});
        let (merged, report) =
            merge_day(&stored, &parse(&stored), &uploaded, &parse(&uploaded)).unwrap();
        assert_eq!(report.added, vec![key("5x5", "")]);
        assert!(report.replaced.is_empty() && report.kept.is_empty());
        assert_eq!(merged["occupancy_pct"], 80);
        assert_eq!(merged["unit_types"].as_array().unwrap().len(), 1);
    }
}
