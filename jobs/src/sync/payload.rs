//! The daily sync payload: parsing, validation and the normalised form that every intake path
//! (push, upload, CRM pull) produces.

use crate::domain::values::{Count, HttpUrl, Money, Percent, Quantity, Text, UnitSize};
use crate::error::ValidationError;
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// Longest accepted array in a payload (unit types, promotions, competitor rates, rents, leads).
pub const MAX_ITEMS: usize = 1_000;

/// The earliest snapshot date accepted.
pub const EARLIEST_DATE: NaiveDate = match NaiveDate::from_ymd_opt(2000, 1, 1) {
    Some(d) => d,
    None => panic!("valid constant date"),
};

/// A `YYYY-MM-DD` calendar date.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SnapshotDate(pub NaiveDate);

impl SnapshotDate {
    pub fn parse(raw: &str) -> Result<Self, String> {
        let shown: String = raw.chars().take(30).collect();
        let well_formed = raw.len() == 10
            && raw.char_indices().all(|(i, c)| {
                if i == 4 || i == 7 {
                    c == '-'
                } else {
                    c.is_ascii_digit()
                }
            });
        if !well_formed {
            return Err(format!(
                "must be a date in the form YYYY-MM-DD, got '{shown}'"
            ));
        }
        NaiveDate::parse_from_str(raw, "%Y-%m-%d")
            .map(Self)
            .map_err(|_| format!("is not a real calendar date: '{shown}'"))
    }
}
impl TryFrom<String> for SnapshotDate {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        Self::parse(&s)
    }
}
impl From<SnapshotDate> for String {
    fn from(d: SnapshotDate) -> String {
        d.0.format("%Y-%m-%d").to_string()
    }
}

/// How the payload names its facility; matched in the order id, (source_system, external_id), name.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
pub struct FacilityRef {
    pub id: Option<uuid::Uuid>,
    pub external_id: Option<Text<200>>,
    pub source_system: Option<Text<100>>,
    pub name: Option<Text<200>>,
    pub address: Option<Text<500>>,
    pub website_url: Option<HttpUrl>,
    pub rentable_sqft: Option<Quantity>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
pub struct MoveIns {
    pub daily: Option<Count>,
    pub mtd: Option<Count>,
    pub target_monthly: Option<Count>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
pub struct MoveOuts {
    pub daily: Option<Count>,
    pub mtd: Option<Count>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct UnitType {
    pub size: UnitSize,
    pub tier: Option<Text<100>>,
    pub street_rate: Money,
    pub occupancy_pct: Option<Percent>,
    pub move_ins_mtd: Option<Count>,
    /// Optional addition: units of this type in the facility.
    pub total_units: Option<Count>,
    /// Optional addition: occupied units of this type.
    pub occupied_units: Option<Count>,
}

impl UnitType {
    /// The tier as stored: empty when not given.
    pub fn tier_str(&self) -> &str {
        self.tier.as_ref().map_or("", Text::as_str)
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Promotion {
    pub name: Text<200>,
    pub depth_pct: Option<Percent>,
    pub applies_to: Option<Text<200>>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct CompetitorRate {
    pub competitor: Text<200>,
    pub size: UnitSize,
    pub rate: Money,
    /// Free-text description of the competitor's promotion; null when there is none.
    pub promo: Option<Text<500>>,
    pub source_url: Option<HttpUrl>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct TenantRent {
    pub size: UnitSize,
    pub avg_rent: Money,
    pub tenant_count: Count,
    pub months_since_last_increase: Option<Quantity>,
    pub original_rent: Option<Money>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Lead {
    pub channel: Text<64>,
    pub count: Count,
}

/// A parsed, validated sync payload.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct SyncPayload {
    pub facility: Option<FacilityRef>,
    pub date: SnapshotDate,
    pub occupancy_pct: Option<Percent>,
    pub move_ins: Option<MoveIns>,
    pub move_outs: Option<MoveOuts>,
    #[serde(default, deserialize_with = "null_as_empty")]
    pub unit_types: Vec<UnitType>,
    #[serde(default, deserialize_with = "null_as_empty")]
    pub promotions: Vec<Promotion>,
    #[serde(default, deserialize_with = "null_as_empty")]
    pub competitor_rates: Vec<CompetitorRate>,
    #[serde(default, deserialize_with = "null_as_empty")]
    pub tenant_rents: Vec<TenantRent>,
    #[serde(default, deserialize_with = "null_as_empty")]
    pub leads: Vec<Lead>,
}

/// Accepts `null` for an array as the empty array: several CRMs send null for "none".
fn null_as_empty<'de, D, T>(de: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(de)?.unwrap_or_default())
}

/// A payload with the notes about what was ignored.
#[derive(Debug)]
pub struct Parsed {
    pub payload: SyncPayload,
    /// One line per ignored (unknown) field, by JSON path.
    pub warnings: Vec<String>,
}

/// Most warnings listed in one response; the rest are counted.
const MAX_WARNINGS: usize = 50;

/// Parses and validates a JSON body. `today` is the server's current UTC date: a snapshot may
/// be dated at most one day ahead of it (time zones east of UTC are already on the next day).
pub fn parse(body: &[u8], today: NaiveDate) -> Result<Parsed, ValidationError> {
    crate::error::require_object(body)?;
    let mut ignored = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(body);
    let payload: SyncPayload = {
        let mut note = |path: serde_ignored::Path<'_>| ignored.push(path.to_string());
        let tracked = serde_ignored::Deserializer::new(&mut de, &mut note);
        serde_path_to_error::deserialize(tracked).map_err(ValidationError::from_serde)?
    };
    de.end().map_err(|e| {
        ValidationError::new(
            "body",
            format!("trailing characters after the JSON object ({e})"),
        )
    })?;
    payload.check(today)?;
    let mut warnings: Vec<String> = ignored
        .iter()
        .take(MAX_WARNINGS)
        .map(|p| format!("{}: unknown field, ignored", display_path(p)))
        .collect();
    if ignored.len() > MAX_WARNINGS {
        warnings.push(format!(
            "{} more unknown fields ignored",
            ignored.len() - MAX_WARNINGS
        ));
    }
    Ok(Parsed { payload, warnings })
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
    /// Checks the rules that span fields: the date window, array lengths, duplicate keys, and
    /// counts that must agree.
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
        let mut seen = HashSet::new();
        for (i, u) in self.unit_types.iter().enumerate() {
            if !seen.insert((u.size.to_string(), u.tier_str().to_lowercase())) {
                return Err(ValidationError::new(
                    format!("unit_types[{i}]"),
                    format!("size {} with tier '{}' appears twice", u.size, u.tier_str()),
                ));
            }
            if let (Some(total), Some(occupied)) = (u.total_units, u.occupied_units) {
                if occupied > total {
                    return Err(ValidationError::new(
                        format!("unit_types[{i}].occupied_units"),
                        format!(
                            "{} is more than total_units {}",
                            occupied.get(),
                            total.get()
                        ),
                    ));
                }
            }
        }
        let mut channels = HashSet::new();
        for (i, l) in self.leads.iter().enumerate() {
            if !channels.insert(l.channel.as_str().to_lowercase()) {
                return Err(ValidationError::new(
                    format!("leads[{i}].channel"),
                    format!("'{}' appears twice", l.channel.as_str()),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn today() -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 11, 22).unwrap()
    }

    #[test]
    fn parses_a_full_payload_and_warns_about_unknown_fields() {
        let body = br#"{
            "facility": {"external_id": "F-1", "source_system": "sitelink", "name": "Elm St", "colour": "red"},
            "date": "2026-11-21",
            "occupancy_pct": 91.5,
            "move_ins": {"daily": 2, "mtd": 31, "target_monthly": 45},
            "move_outs": {"daily": 1, "mtd": 20},
            "unit_types": [{"size": "10X10", "tier": "climate", "street_rate": 129.999, "occupancy_pct": 93, "move_ins_mtd": 4, "extra": 1}],
            "promotions": [{"name": "First month free", "depth_pct": 100, "applies_to": "5x5"}],
            "competitor_rates": [{"competitor": "Public Storage", "size": "10x10", "rate": 139, "promo": null, "source_url": "https://example.com"}],
            "tenant_rents": [{"size": "10x10", "avg_rent": 118, "tenant_count": 40, "months_since_last_increase": 9, "original_rent": 99}],
            "leads": [{"channel": "web", "count": 4}]
        }"#;
        let parsed = parse(body, today()).unwrap();
        assert_eq!(parsed.payload.unit_types[0].size.to_string(), "10x10");
        assert_eq!(parsed.payload.unit_types[0].street_rate.get(), 130.0);
        assert_eq!(
            parsed.warnings,
            vec![
                "facility.colour: unknown field, ignored",
                "unit_types[0].extra: unknown field, ignored"
            ]
        );
    }

    #[test]
    fn errors_name_the_path() {
        let cases: &[(&[u8], &str)] = &[
            (br#"{}"#, "date: is required"),
            (
                br#"{"date": "2026-02-30"}"#,
                "date: is not a real calendar date",
            ),
            (
                br#"{"date": "2026-11-21", "occupancy_pct": 101}"#,
                "occupancy_pct: must be a percentage",
            ),
            (
                br#"{"date": "2026-11-21", "unit_types": [{"size": "10", "street_rate": 1}]}"#,
                "unit_types[0].size:",
            ),
            (
                br#"{"date": "2026-11-24"}"#,
                "date: 2026-11-24 is in the future",
            ),
            (br#"{"date": "2026-11-21"} x"#, "body: trailing characters"),
        ];
        for (body, want) in cases {
            let e = parse(body, today()).unwrap_err().to_string();
            assert!(e.contains(want), "{e} should contain {want}");
        }
    }
}
