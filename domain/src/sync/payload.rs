//! The daily sync payload: parsing, validation and the normalised form that every intake path
//! (push, upload, CRM pull) produces.

use crate::validation::ValidationError;
use crate::values::{Count, HttpUrl, Money, Percent, Quantity, Text, UnitSize};
use chrono::NaiveDate;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashSet;

mod normalize;

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
impl utoipa::PartialSchema for SnapshotDate {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, SchemaFormat, SchemaType, Type};
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .format(Some(SchemaFormat::KnownFormat(
                utoipa::openapi::KnownFormat::Date,
            )))
            .description(Some("A calendar date, YYYY-MM-DD."))
            .examples(["2026-11-20"])
            .into()
    }
}
impl utoipa::ToSchema for SnapshotDate {}
impl From<SnapshotDate> for String {
    fn from(d: SnapshotDate) -> String {
        d.0.format("%Y-%m-%d").to_string()
    }
}

/// How the payload names its facility; matched in the order id, (source_system, external_id), name.
#[derive(Clone, Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[schema(as = SyncFacility)]
pub struct FacilityRef {
    /// The service's facility id; matched first.
    pub id: Option<uuid::Uuid>,
    /// The CRM's facility id; matched together with `source_system`.
    pub external_id: Option<Text<200>>,
    /// Free-form label of the originating system.
    pub source_system: Option<Text<100>>,
    /// Matched (case-insensitive) when nothing else matches; creates the facility when new.
    pub name: Option<Text<200>>,
    /// Postal address.
    pub address: Option<Text<500>>,
    /// The facility's website.
    pub website_url: Option<HttpUrl>,
    /// Rentable area in square feet, for the per-square-foot revenue figures.
    pub rentable_sqft: Option<Quantity>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
pub struct MoveIns {
    /// Move-ins on the day.
    pub daily: Option<Count>,
    /// Move-ins this month to date.
    pub mtd: Option<Count>,
    /// The month's move-in target.
    pub target_monthly: Option<Count>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
pub struct MoveOuts {
    /// Move-outs on the day.
    pub daily: Option<Count>,
    /// Move-outs this month to date.
    pub mtd: Option<Count>,
}

#[derive(Clone, Debug, Deserialize, Serialize, utoipa::ToSchema)]
pub struct UnitType {
    /// Unit size, `<width>x<depth>` in feet; one entry per size and tier.
    pub size: UnitSize,
    /// Tier of the unit type (climate controlled, drive-up...); empty when absent.
    pub tier: Option<Text<100>>,
    /// Street rate, currency per month.
    pub street_rate: Money,
    /// Occupancy of the unit type, percent.
    pub occupancy_pct: Option<Percent>,
    /// Move-ins of the unit type this month to date.
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

#[derive(Clone, Debug, Deserialize, Serialize, utoipa::ToSchema)]
pub struct Promotion {
    /// Name of the promotion.
    pub name: Text<200>,
    /// Discount depth, percent.
    pub depth_pct: Option<Percent>,
    /// What it applies to (a size, a tier, "all").
    pub applies_to: Option<Text<200>>,
}

#[derive(Clone, Debug, Deserialize, Serialize, utoipa::ToSchema)]
pub struct CompetitorRate {
    /// The competitor's name.
    pub competitor: Text<200>,
    /// Unit size of the observed rate.
    pub size: UnitSize,
    /// The competitor's street rate, currency per month.
    pub rate: Money,
    /// Free-text description of the competitor's promotion; null when there is none.
    pub promo: Option<Text<500>>,
    /// Where the rate was seen.
    pub source_url: Option<HttpUrl>,
}

#[derive(Clone, Debug, Deserialize, Serialize, utoipa::ToSchema)]
pub struct TenantRent {
    /// Unit size of the tenant cohort.
    pub size: UnitSize,
    /// Average in-place rent of the cohort, currency per month.
    pub avg_rent: Money,
    /// Tenants in the cohort.
    pub tenant_count: Count,
    /// Months since the cohort's last rent increase.
    pub months_since_last_increase: Option<Quantity>,
    /// Average rent at move-in, currency per month.
    pub original_rent: Option<Money>,
}

#[derive(Clone, Debug, Deserialize, Serialize, utoipa::ToSchema)]
pub struct Lead {
    /// Lead channel (web, phone, walk-in...); unique per snapshot, case-insensitive.
    pub channel: Text<64>,
    /// Leads from the channel on the day.
    pub count: Count,
}

/// A parsed, validated sync payload.
#[derive(Clone, Debug, Deserialize, Serialize, utoipa::ToSchema)]
pub struct SyncPayload {
    /// Identifies the facility (at least one of id, external_id, name).
    pub facility: Option<FacilityRef>,
    /// Date of the snapshot, from 2000-01-01 to tomorrow (UTC).
    pub date: SnapshotDate,
    /// Facility occupancy, percent.
    pub occupancy_pct: Option<Percent>,
    /// Move-ins of the day and month.
    pub move_ins: Option<MoveIns>,
    /// Move-outs of the day and month.
    pub move_outs: Option<MoveOuts>,
    /// Unit types with their street rates (at most 1,000).
    #[serde(default, deserialize_with = "null_as_empty")]
    #[schema(max_items = 1000)]
    pub unit_types: Vec<UnitType>,
    /// Active promotions (at most 1,000).
    #[serde(default, deserialize_with = "null_as_empty")]
    #[schema(max_items = 1000)]
    pub promotions: Vec<Promotion>,
    /// Competitor rates observed on the day (at most 1,000).
    #[serde(default, deserialize_with = "null_as_empty")]
    #[schema(max_items = 1000)]
    pub competitor_rates: Vec<CompetitorRate>,
    /// Existing-tenant rent cohorts, for the rent increase analysis (at most 1,000).
    #[serde(default, deserialize_with = "null_as_empty")]
    #[schema(max_items = 1000)]
    pub tenant_rents: Vec<TenantRent>,
    /// Leads of the day per channel (at most 1,000).
    #[serde(default, deserialize_with = "null_as_empty")]
    #[schema(max_items = 1000)]
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

/// A payload with the notes about what was normalised, ignored or left out.
#[derive(Debug)]
pub struct Parsed {
    pub payload: SyncPayload,
    /// One line per note, `<JSON path>: <reason>`: unknown fields, normalised values and items
    /// that could not be read and were left out.
    pub warnings: Vec<String>,
    /// The items and fields that were left out, with why (also among `warnings`).
    pub left_out: Vec<ValidationError>,
    /// The payload as read: normalised values, without what was left out. Its `unit_types`
    /// match `payload.unit_types` item for item.
    pub normalized: Value,
}

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
    fn only_a_snapshot_that_cannot_be_placed_is_an_error() {
        let cases: &[(&[u8], &str)] = &[
            (br#"{}"#, "date: is required"),
            (br#"[]"#, "body: must be a JSON object"),
            (
                br#"{"date": "2026-02-30"}"#,
                "date: is not a real calendar date",
            ),
            (br#"{"date": ""}"#, "date: is required"),
            (
                br#"{"date": "2026-11-24"}"#,
                "date: 2026-11-24 is in the future",
            ),
            (br#"{"date": "2026-11-21"} x"#, "body: trailing characters"),
            (
                br#"{"date": "2026-11-21", "facility": "Elm"}"#,
                "facility: must be an object",
            ),
        ];
        for (body, want) in cases {
            let e = parse(body, today()).unwrap_err().to_string();
            assert!(e.contains(want), "{e} should contain {want}");
        }
    }

    #[test]
    fn what_cannot_be_read_is_left_out_with_its_path_and_reason() {
        let body = br#"{
            "facility": {"name": "Elm St", "website_url": "not a url", "rentable_sqft": -5},
            "date": "2026-11-21",
            "occupancy_pct": 101,
            "move_ins": {"daily": 2, "mtd": 2.5, "target_monthly": 45},
            "unit_types": [
                {"size": "10x10", "street_rate": 129},
                {"size": "10", "street_rate": 99},
                {"size": "5x5", "street_rate": "cheap"},
                {"size": "10x10", "street_rate": 131},
                {"size": "5x10", "street_rate": 80, "occupancy_pct": 140},
                "5x5",
                {"size": "10x20", "street_rate": 200, "total_units": 3, "occupied_units": 4}
            ],
            "competitor_rates": [{"competitor": "A", "size": "10x10", "rate": -1}, {"competitor": "B", "size": "10x10", "rate": 140}],
            "leads": [{"channel": "web", "count": 1}, {"channel": "WEB", "count": 2}],
            "promotions": {"name": "not an array"}
        }"#;
        let p = parse(body, today()).unwrap();
        let pl = &p.payload;
        assert_eq!(
            pl.facility
                .as_ref()
                .unwrap()
                .name
                .as_ref()
                .unwrap()
                .as_str(),
            "Elm St"
        );
        assert!(pl.facility.as_ref().unwrap().website_url.is_none());
        assert!(pl.occupancy_pct.is_none());
        let mi = pl.move_ins.as_ref().unwrap();
        assert_eq!(
            (
                mi.daily.map(Count::get),
                mi.mtd,
                mi.target_monthly.map(Count::get)
            ),
            (Some(2), None, Some(45))
        );
        let units: Vec<(String, f64, Option<f64>)> = pl
            .unit_types
            .iter()
            .map(|u| {
                (
                    u.size.to_string(),
                    u.street_rate.get(),
                    u.occupancy_pct.map(Percent::get),
                )
            })
            .collect();
        // The second 10x10 repeats the first; 5x10's occupancy is left out, not the unit type.
        assert_eq!(
            units,
            vec![
                ("10x10".to_owned(), 129.0, None),
                ("5x10".to_owned(), 80.0, None)
            ]
        );
        assert_eq!(pl.competitor_rates.len(), 1);
        assert_eq!(pl.competitor_rates[0].competitor.as_str(), "B");
        assert_eq!(pl.leads.len(), 1);
        assert!(pl.promotions.is_empty());
        let w = p.warnings.join("\n");
        for want in [
            "facility.website_url: ",
            "facility.rentable_sqft: ",
            "occupancy_pct: must be a percentage from 0 to 100, got 101; left out",
            "move_ins.mtd: ",
            "unit_types[1]: left out (unit_types[1].size: must be a size like 10x10",
            "unit_types[2]: left out (unit_types[2].street_rate: ",
            "unit_types[3]: left out (unit_types[3].size: size 10x10 with tier '' appears twice)",
            "unit_types[4].occupancy_pct: must be a percentage from 0 to 100, got 140; left out",
            "unit_types[5]: left out (unit_types[5]: must be an object, got a string)",
            "unit_types[6]: left out (unit_types[6].occupied_units: 4 is more than total_units 3)",
            "competitor_rates[0]: left out (competitor_rates[0].rate: ",
            "leads[1]: left out (leads[1].channel: 'WEB' appears twice)",
            "promotions: must be an array, got an object; left out",
        ] {
            assert!(w.contains(want), "missing {want:?} in:\n{w}");
        }
        // The normalised form matches the payload item for item.
        assert_eq!(p.normalized["unit_types"].as_array().unwrap().len(), 2);
        assert!(p.normalized.get("occupancy_pct").is_none());
        assert!(parse_exact(body, today()).is_err());
    }

    #[test]
    fn what_is_clearly_meant_is_read_as_meant() {
        let body = br#"{
            "facility": {"name": "Elm St", "external_id": "", "address": "  "},
            "date": "2026-11-21",
            "occupancy_pct": "91.5%",
            "move_ins": {"daily": 2.0, "mtd": "31", "target_monthly": 45.0},
            "unit_types": [
                {"size": "10'x10'", "street_rate": "$1,299.00"},
                {"size": "10 X 10 CC", "street_rate": 150, "tier": ""},
                {"size": "5x10 Drive Up", "tier": "outdoor", "street_rate": 90}
            ],
            "competitor_rates": [
                {"competitor": "A", "size": "10x10", "rate": 140, "promo": true},
                {"competitor": "B", "size": "10x10", "rate": 141, "promo": false},
                {"competitor": "C", "size": "10X10 CC", "rate": "142", "promo": 50}
            ]
        }"#;
        let p = parse_exact(body, today()).unwrap();
        let pl = &p.payload;
        let f = pl.facility.as_ref().unwrap();
        assert!(f.external_id.is_none() && f.address.is_none());
        assert_eq!(pl.occupancy_pct.map(Percent::get), Some(91.5));
        let mi = pl.move_ins.as_ref().unwrap();
        assert_eq!(
            (mi.daily.map(Count::get), mi.mtd.map(Count::get)),
            (Some(2), Some(31))
        );
        let units: Vec<(String, String, f64)> = pl
            .unit_types
            .iter()
            .map(|u| {
                (
                    u.size.to_string(),
                    u.tier_str().to_owned(),
                    u.street_rate.get(),
                )
            })
            .collect();
        assert_eq!(
            units,
            vec![
                ("10x10".to_owned(), String::new(), 1299.0),
                ("10x10".to_owned(), "CC".to_owned(), 150.0),
                ("5x10".to_owned(), "outdoor".to_owned(), 90.0),
            ]
        );
        let promos: Vec<Option<&str>> = pl
            .competitor_rates
            .iter()
            .map(|c| c.promo.as_ref().map(Text::as_str))
            .collect();
        assert_eq!(promos, vec![Some("promotion"), None, Some("50")]);
        assert_eq!(pl.competitor_rates[2].size.to_string(), "10x10");
        assert_eq!(pl.competitor_rates[2].rate.get(), 142.0);
        let w = p.warnings.join("\n");
        assert!(
            w.contains("unit_types[1].size: '10 X 10 CC' read as size 10x10 with tier 'CC'"),
            "{w}"
        );
        assert!(
            w.contains("unit_types[2].size: '5x10 Drive Up' read as size 5x10; 'Drive Up' ignored"),
            "{w}"
        );
        assert!(
            w.contains("competitor_rates[2].size: '10X10 CC' read as size 10x10; 'CC' ignored"),
            "{w}"
        );
    }
}
