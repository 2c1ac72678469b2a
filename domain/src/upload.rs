//! Uploads of unit rates or competitor rates, as CSV or JSON rows: header synonyms, kind
//! detection, row checks with line numbers, and the templates. The caller feeds rows one at a
//! time (so a large CSV streams), collects every bad row, and writes only when none is bad.
//!
//! - Unit rates become one sync snapshot per date (`{facility, date, unit_types}`) checked by
//!   the push's parser and stored by its code; a day that already has a record keeps it and
//!   takes the uploaded unit types in (`jobs::upload::merge`).
//! - Competitor rates are upserted per competitor, size and day, like
//!   `POST .../competitor-rates`.
//! - Everything an upload writes is written in one transaction (`jobs::upload::store`).

use serde::Serialize;
use std::collections::HashMap;

/// What the rows carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum UploadKind {
    UnitRates,
    CompetitorRates,
    /// The whole rent roll of a facility on a date, one row per tenant.
    RentRoll,
}

impl UploadKind {
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_lowercase().replace('-', "_").as_str() {
            "unit_rates" | "units" | "unit_types" => Some(Self::UnitRates),
            "competitor_rates" | "competitors" => Some(Self::CompetitorRates),
            "rent_roll" | "tenants" | "roll" => Some(Self::RentRoll),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::UnitRates => "unit_rates",
            Self::CompetitorRates => "competitor_rates",
            Self::RentRoll => "rent_roll",
        }
    }
}

/// A column's meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    Date,
    Size,
    Tier,
    StreetRate,
    OccupancyPct,
    MoveInsMtd,
    TotalUnits,
    OccupiedUnits,
    Competitor,
    Rate,
    Promo,
    SourceUrl,
    TenantId,
    Rent,
    MoveInDate,
    LastIncreaseDate,
    CustomerId,
    Flags,
}

impl Field {
    pub fn name(self) -> &'static str {
        match self {
            Self::Date => "date",
            Self::Size => "size",
            Self::Tier => "tier",
            Self::StreetRate => "street_rate",
            Self::OccupancyPct => "occupancy_pct",
            Self::MoveInsMtd => "move_ins_mtd",
            Self::TotalUnits => "total_units",
            Self::OccupiedUnits => "occupied_units",
            Self::Competitor => "competitor",
            Self::Rate => "rate",
            Self::Promo => "promo",
            Self::SourceUrl => "source_url",
            Self::TenantId => "tenant_id",
            Self::Rent => "rent",
            Self::MoveInDate => "move_in_date",
            Self::LastIncreaseDate => "last_increase_date",
            Self::CustomerId => "customer_id",
            Self::Flags => "flags",
        }
    }
}

/// Spellings of a unit's size, the same in every kind.
const SIZE_SPELLINGS: &[&str] = &[
    "size",
    "unit_size",
    "dimensions",
    "unit_dimensions",
    "size_ft",
];

/// Spellings of a unit's tier, the same in unit rates, competitor rates and rent rolls.
const TIER_SPELLINGS: &[&str] = &["tier", "unit_type", "type", "category", "features"];

/// Accepted header spellings per kind, after normalisation (lower case, runs of anything other
/// than letters and digits as one `_`, `%` read as `pct`). Documented in docs/upload.md.
pub const UNIT_RATE_SYNONYMS: &[(Field, &[&str])] = &[
    (
        Field::Date,
        &[
            "date",
            "snapshot_date",
            "as_of",
            "as_of_date",
            "report_date",
        ],
    ),
    (Field::Size, SIZE_SPELLINGS),
    (Field::Tier, TIER_SPELLINGS),
    (
        Field::StreetRate,
        &[
            "street_rate",
            "street",
            "rate",
            "standard_rate",
            "web_rate",
            "online_rate",
            "monthly_rate",
            "price",
            "current_rate",
            "asking_rate",
        ],
    ),
    (
        Field::OccupancyPct,
        &[
            "occupancy_pct",
            "occupancy",
            "occ",
            "occ_pct",
            "occupancy_percent",
            "physical_occupancy",
            "unit_occupancy",
            "occupancy_rate",
        ],
    ),
    (
        Field::MoveInsMtd,
        &[
            "move_ins_mtd",
            "movein_mtd",
            "moveins_mtd",
            "mtd_move_ins",
            "move_ins",
        ],
    ),
    (
        Field::TotalUnits,
        &[
            "total_units",
            "units",
            "unit_count",
            "total",
            "units_total",
            "number_of_units",
        ],
    ),
    (
        Field::OccupiedUnits,
        &[
            "occupied_units",
            "occupied",
            "rented_units",
            "rented",
            "units_occupied",
        ],
    ),
];

pub const COMPETITOR_RATE_SYNONYMS: &[(Field, &[&str])] = &[
    (
        Field::Date,
        &[
            "observed_on",
            "date",
            "observed",
            "observed_date",
            "collected_on",
            "scraped_on",
            "as_of",
        ],
    ),
    (
        Field::Competitor,
        &[
            "competitor",
            "competitor_name",
            "competitor_facility",
            "store_name",
            "operator",
        ],
    ),
    (Field::Size, SIZE_SPELLINGS),
    (Field::Tier, TIER_SPELLINGS),
    (
        Field::Rate,
        &[
            "rate",
            "price",
            "street_rate",
            "web_rate",
            "online_rate",
            "monthly_rate",
            "in_store_rate",
            "standard_rate",
        ],
    ),
    (
        Field::Promo,
        &[
            "promo",
            "promotion",
            "special",
            "specials",
            "offer",
            "discount",
        ],
    ),
    (
        Field::SourceUrl,
        &["source_url", "url", "link", "source", "website"],
    ),
];

pub const RENT_ROLL_SYNONYMS: &[(Field, &[&str])] = &[
    (
        Field::Date,
        &[
            "date",
            "as_of",
            "as_of_date",
            "roll_date",
            "snapshot_date",
            "report_date",
        ],
    ),
    (
        Field::TenantId,
        &[
            "tenant_id",
            "tenant",
            "tenancy_id",
            "rental_id",
            "lease_id",
            "ledger_id",
            "occupancy_id",
        ],
    ),
    (Field::Size, SIZE_SPELLINGS),
    (Field::Tier, TIER_SPELLINGS),
    (
        Field::Rent,
        &[
            "rent",
            "current_rent",
            "rent_rate",
            "monthly_rent",
            "in_place_rent",
            "current_rate",
            "rate",
            "tenant_rate",
        ],
    ),
    (
        Field::MoveInDate,
        &[
            "move_in_date",
            "move_in",
            "moved_in",
            "movein_date",
            "move_in_dt",
            "lease_start",
            "start_date",
        ],
    ),
    (
        Field::LastIncreaseDate,
        &[
            "last_increase_date",
            "last_increase",
            "last_rent_increase",
            "last_rate_change",
            "rate_change_date",
            "last_ecri",
            "last_ecri_date",
        ],
    ),
    (
        Field::CustomerId,
        &[
            "customer_id",
            "customer",
            "account_id",
            "account",
            "tenant_account",
        ],
    ),
    (Field::Flags, &["flags", "flag", "tags", "markers"]),
];

/// The template of a kind: a header line and one example row.
pub fn template(kind: UploadKind) -> &'static str {
    match kind {
        UploadKind::UnitRates => {
            "date,size,tier,street_rate,occupancy_pct,move_ins_mtd,total_units,occupied_units\n\
             2026-11-21,10x10,climate,149,91.5,6,120,110\n"
        }
        UploadKind::CompetitorRates => {
            "observed_on,competitor,size,tier,rate,promo,source_url\n\
             2026-11-21,Public Storage,10x10,climate,139,First month free,https://example.com/10x10\n"
        }
        UploadKind::RentRoll => {
            "date,tenant_id,size,tier,rent,move_in_date,last_increase_date,customer_id,flags\n\
             2026-11-21,T-1042,10x10,climate,131.00,2024-03-15,2025-09-01,C-77,military\n"
        }
    }
}

/// Most columns or problems named in one message; the rest are counted. A header of a million
/// columns must not become a message of megabytes.
pub const MAX_LISTED: usize = 100;

/// Longest column name shown in a message (in characters).
const MAX_NAME_SHOWN: usize = 60;

/// A column name as shown in messages: trimmed and cut to [`MAX_NAME_SHOWN`] characters.
pub fn shown_name(h: &str) -> String {
    let t = h.trim();
    if t.chars().count() > MAX_NAME_SHOWN {
        format!("{}...", t.chars().take(MAX_NAME_SHOWN).collect::<String>())
    } else {
        t.to_owned()
    }
}

/// The first [`MAX_LISTED`] names, comma-separated, and how many more there are.
pub fn shown_list(names: &[String]) -> String {
    let mut out = names
        .iter()
        .take(MAX_LISTED)
        .map(|h| shown_name(h))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > MAX_LISTED {
        out.push_str(&format!(" and {} more", names.len() - MAX_LISTED));
    }
    out
}

pub fn normalise_header(h: &str) -> String {
    let mut out = String::new();
    for c in h.trim().trim_start_matches('\u{feff}').chars() {
        if c == '%' {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            out.push_str("pct");
        } else if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    // "Street Rate ($)" ends in "_": trim it.
    out.trim_matches('_').to_owned()
}

fn lookup(table: &[(Field, &[&str])], normalised: &str) -> Option<Field> {
    table
        .iter()
        .find(|(_, names)| names.contains(&normalised))
        .map(|(f, _)| *f)
}

/// The columns of an upload: each header's field (or `None`, ignored).
#[derive(Debug, Clone)]
pub struct Columns {
    pub kind: UploadKind,
    pub fields: Vec<Option<Field>>,
    /// Headers that mean nothing to this kind (ignored, reported as warnings).
    pub ignored: Vec<String>,
}

/// Maps the headers, detecting the kind when `kind` is `None`. Errors are whole-upload errors.
pub fn map_headers(headers: &[String], kind: Option<UploadKind>) -> Result<Columns, String> {
    if headers.iter().all(|h| h.trim().is_empty()) {
        return Err("the file has no header row".into());
    }
    let normalised: Vec<String> = headers.iter().map(|h| normalise_header(h)).collect();
    let has_competitor = normalised
        .iter()
        .any(|h| lookup(COMPETITOR_RATE_SYNONYMS, h) == Some(Field::Competitor));
    let has_tenant = normalised
        .iter()
        .any(|h| lookup(RENT_ROLL_SYNONYMS, h) == Some(Field::TenantId));
    let kind = match kind {
        Some(UploadKind::UnitRates) if has_competitor => {
            return Err(
                "kind is unit_rates but the file has a competitor column: it looks like \
                        competitor_rates"
                    .into(),
            )
        }
        Some(k) => k,
        None if has_competitor => UploadKind::CompetitorRates,
        None if has_tenant => UploadKind::RentRoll,
        None if normalised
            .iter()
            .any(|h| lookup(UNIT_RATE_SYNONYMS, h) == Some(Field::StreetRate)) =>
        {
            UploadKind::UnitRates
        }
        None => {
            return Err(format!(
                "cannot tell whether the file holds unit_rates, competitor_rates or rent_roll \
                 from its columns ({}); pass kind",
                shown_list(headers)
            ))
        }
    };
    let table = match kind {
        UploadKind::UnitRates => UNIT_RATE_SYNONYMS,
        UploadKind::CompetitorRates => COMPETITOR_RATE_SYNONYMS,
        UploadKind::RentRoll => RENT_ROLL_SYNONYMS,
    };
    let mut fields = Vec::with_capacity(headers.len());
    let mut ignored = Vec::new();
    let mut seen: HashMap<Field, &str> = HashMap::new();
    for (raw, norm) in headers.iter().zip(&normalised) {
        let field = lookup(table, norm);
        if let Some(f) = field {
            if let Some(first) = seen.insert(f, raw) {
                return Err(format!(
                    "columns '{}' and '{}' both mean {}",
                    shown_name(first),
                    shown_name(raw),
                    f.name()
                ));
            }
        } else if !raw.trim().is_empty() {
            ignored.push(raw.trim().to_owned());
        }
        fields.push(field);
    }
    let required: &[Field] = match kind {
        UploadKind::UnitRates => &[Field::Size, Field::StreetRate],
        UploadKind::CompetitorRates => &[Field::Competitor, Field::Size, Field::Rate],
        UploadKind::RentRoll => &[Field::TenantId, Field::Size, Field::Rent, Field::MoveInDate],
    };
    let missing: Vec<&str> = required
        .iter()
        .filter(|f| !seen.contains_key(f))
        .map(|f| f.name())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "{} needs the columns {}; missing: {} (found: {})",
            kind.as_str(),
            required
                .iter()
                .map(|f| f.name())
                .collect::<Vec<_>>()
                .join(", "),
            missing.join(", "),
            shown_list(headers)
        ));
    }
    Ok(Columns {
        kind,
        fields,
        ignored,
    })
}

mod rows;
pub use rows::{
    json_cells, parse_row, unit_rates_payload, DuplicateCheck, RollRow, Row, RowError, UnitRateRow,
};

#[cfg(test)]
mod tests;
