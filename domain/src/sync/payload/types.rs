//! The types of the daily snapshot, as every intake path produces them once read.

use crate::validation::ValidationError;
use crate::values::{Count, HttpUrl, Money, Percent, Quantity, Text, UnitSize};
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Longest accepted array in a payload (unit types, promotions, competitor rates, rents, leads).
pub const MAX_ITEMS: usize = 1_000;

/// Most tenants in one snapshot's rent roll.
pub const MAX_TENANTS: usize = 10_000;

/// Most flags on one tenant of a rent roll.
pub const MAX_FLAGS: usize = 10;

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
    /// Optional addition: the unit tier the rate is for (climate controlled, drive-up...),
    /// when the source knows it; empty or absent when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<Text<100>>,
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
    /// Tenants of the cohort the PMS flags as not to be increased (do not increase, military,
    /// lien, delinquent, ...); at most `tenant_count`. A cohort's increase is one letter row for
    /// all its tenants, so a cohort with a flagged tenant is never increased (send a rent roll
    /// to raise the others).
    #[serde(default)]
    pub flagged_count: Option<Count>,
}

/// One tenant of a rent roll: a unit rented, its rent and its history of increases.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, utoipa::ToSchema)]
pub struct RollTenant {
    /// The CRM's id of the tenancy (one unit rented by one customer); unique in a roll.
    pub tenant_id: Text<100>,
    /// Unit size rented.
    pub size: UnitSize,
    /// Tier of the unit (climate, drive-up...).
    pub tier: Option<Text<64>>,
    /// Rent in place, currency per month.
    pub rent: Money,
    /// Day the tenant moved in; on or before the snapshot's date.
    pub move_in_date: SnapshotDate,
    /// Day of the tenant's last rent increase; null or absent when never increased. On or
    /// after the move-in and on or before the snapshot's date.
    pub last_increase_date: Option<SnapshotDate>,
    /// Groups the units of one customer (all raised together, one letter for them all).
    pub customer_id: Option<Text<100>>,
    /// The unit's number or name at the facility (`B-112`), for the letter.
    #[serde(default)]
    pub unit_id: Option<Text<40>>,
    /// The customer's name as letters address it. Personal data: shown only to roles that
    /// may act on tenants (manager and above).
    #[serde(default)]
    pub customer_name: Option<Text<200>>,
    /// The customer's mailing address, first line (personal data, as `customer_name`).
    #[serde(default)]
    pub address_line1: Option<Text<200>>,
    /// Second line of the mailing address.
    #[serde(default)]
    pub address_line2: Option<Text<200>>,
    /// City of the mailing address.
    #[serde(default)]
    pub city: Option<Text<100>>,
    /// State, province or region of the mailing address.
    #[serde(default)]
    pub region: Option<Text<100>>,
    /// Postal code of the mailing address.
    #[serde(default)]
    pub postal_code: Option<Text<20>>,
    /// Markers such as `business`, `delinquent`, `military`, `do_not_increase` (at most 10,
    /// case-insensitive; stored lower-cased).
    #[serde(default, deserialize_with = "null_as_empty")]
    #[schema(max_items = 10)]
    pub flags: Vec<Text<40>>,
}

impl RollTenant {
    /// The tier, or `""` when none was sent.
    pub fn tier_str(&self) -> &str {
        self.tier.as_ref().map_or("", |t| t.as_str())
    }

    /// Whether the tenant carries `flag` (case-insensitive).
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags
            .iter()
            .any(|f| f.as_str().eq_ignore_ascii_case(flag))
    }
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
    /// The whole rent roll of the day, tenant by tenant (at most 10,000). A tenant of the
    /// roll in force missing from it has moved out. Absent: the roll in force is unchanged.
    /// When it is sent without `tenant_rents`, the cohorts are derived from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_items = 10000)]
    pub tenants: Option<Vec<RollTenant>>,
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
