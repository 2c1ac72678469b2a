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

use crate::competitors::{Checked as CheckedRate, NewRate};
use crate::values::{Count, HttpUrl, Money, Percent, Text, UnitSize};
use chrono::NaiveDate;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// What the rows carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum UploadKind {
    UnitRates,
    CompetitorRates,
}

impl UploadKind {
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_lowercase().replace('-', "_").as_str() {
            "unit_rates" | "units" | "unit_types" => Some(Self::UnitRates),
            "competitor_rates" | "competitors" => Some(Self::CompetitorRates),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::UnitRates => "unit_rates",
            Self::CompetitorRates => "competitor_rates",
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
        }
    }
}

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
    (
        Field::Size,
        &[
            "size",
            "unit_size",
            "dimensions",
            "unit_dimensions",
            "size_ft",
        ],
    ),
    (
        Field::Tier,
        &["tier", "unit_type", "type", "category", "features"],
    ),
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
    (
        Field::Size,
        &[
            "size",
            "unit_size",
            "dimensions",
            "unit_dimensions",
            "size_ft",
        ],
    ),
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

/// The template of a kind: a header line and one example row.
pub fn template(kind: UploadKind) -> &'static str {
    match kind {
        UploadKind::UnitRates => {
            "date,size,tier,street_rate,occupancy_pct,move_ins_mtd,total_units,occupied_units\n\
             2026-11-21,10x10,climate,149,91.5,6,120,110\n"
        }
        UploadKind::CompetitorRates => {
            "observed_on,competitor,size,rate,promo,source_url\n\
             2026-11-21,Public Storage,10x10,139,First month free,https://example.com/10x10\n"
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
        None if normalised
            .iter()
            .any(|h| lookup(UNIT_RATE_SYNONYMS, h) == Some(Field::StreetRate)) =>
        {
            UploadKind::UnitRates
        }
        None => {
            return Err(format!(
                "cannot tell whether the file holds unit_rates or competitor_rates from its \
                 columns ({}); pass kind",
                shown_list(headers)
            ))
        }
    };
    let table = match kind {
        UploadKind::UnitRates => UNIT_RATE_SYNONYMS,
        UploadKind::CompetitorRates => COMPETITOR_RATE_SYNONYMS,
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

/// One bad row: its line (CSV: the file line, header = 1; JSON: the row's position from 1),
/// the column and the reason.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[schema(as = UploadRowError)]
pub struct RowError {
    /// The line (CSV, header = 1) or the row (JSON, from 1).
    pub line: u64,
    /// The column, when one is at fault.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

/// A checked unit-rate row.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitRateRow {
    pub line: u64,
    pub date: Option<NaiveDate>,
    pub size: UnitSize,
    pub tier: String,
    pub street_rate: f64,
    pub occupancy_pct: Option<f64>,
    pub move_ins_mtd: Option<u32>,
    pub total_units: Option<u32>,
    pub occupied_units: Option<u32>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Row {
    Unit(UnitRateRow),
    Competitor(CheckedRate),
}

/// Reads a number from a cell: `$1,234.50`, `92.5%` and ` 149 ` are accepted.
fn number(cell: &str) -> Result<f64, String> {
    let cleaned: String = cell
        .chars()
        .filter(|c| !matches!(c, '$' | ',' | '%' | ' ' | '€' | '£'))
        .collect();
    cleaned
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| {
            format!(
                "is not a number: '{}'",
                cell.chars().take(40).collect::<String>()
            )
        })
}

fn date(cell: &str) -> Result<NaiveDate, String> {
    crate::sync::payload::SnapshotDate::parse(cell).map(|d| d.0)
}

/// Checks one row (cells in column order). `default_date` is the upload's `date` parameter.
pub fn parse_row(
    cols: &Columns,
    line: u64,
    cells: &[&str],
    default_date: Option<NaiveDate>,
    today: NaiveDate,
) -> Result<Row, RowError> {
    let err = |field: Field, message: String| RowError {
        line,
        field: Some(field.name().to_owned()),
        message,
    };
    let mut get: HashMap<Field, &str> = HashMap::new();
    for (i, f) in cols.fields.iter().enumerate() {
        if let (Some(f), Some(cell)) = (f, cells.get(i)) {
            let cell = cell.trim();
            if !cell.is_empty() {
                get.insert(*f, cell);
            }
        }
    }
    let required = |f: Field| {
        get.get(&f)
            .copied()
            .ok_or_else(|| err(f, "is required".into()))
    };
    let row_date = get
        .get(&Field::Date)
        .map(|c| date(c).map_err(|m| err(Field::Date, m)))
        .transpose()?
        .or(default_date);
    if let Some(d) = row_date {
        if d > today.succ_opt().unwrap_or(today) {
            return Err(err(Field::Date, format!("{d} is in the future")));
        }
    }
    let size = UnitSize::parse(required(Field::Size)?).map_err(|m| err(Field::Size, m))?;
    match cols.kind {
        UploadKind::UnitRates => {
            let Some(date) = row_date else {
                return Err(err(
                    Field::Date,
                    "is required (a date column, or the upload's date parameter)".into(),
                ));
            };
            let money = |f: Field| -> Result<f64, RowError> {
                let v = number(required(f)?).map_err(|m| err(f, m))?;
                Money::new(v).map(Money::get).map_err(|m| err(f, m))
            };
            let count = |f: Field| -> Result<Option<u32>, RowError> {
                get.get(&f)
                    .map(|c| {
                        number(c)
                            .and_then(|v| Count::new(v).map(Count::get))
                            .map_err(|m| err(f, m))
                    })
                    .transpose()
            };
            let street_rate = money(Field::StreetRate)?;
            let occupancy_pct = get
                .get(&Field::OccupancyPct)
                .map(|c| {
                    number(c)
                        .and_then(|v| Percent::new(v).map(Percent::get))
                        .map_err(|m| err(Field::OccupancyPct, m))
                })
                .transpose()?;
            let tier = get.get(&Field::Tier).copied().unwrap_or("");
            if !tier.is_empty() {
                Text::<100>::parse(tier).map_err(|m| err(Field::Tier, m))?;
            }
            let row = UnitRateRow {
                line,
                date: Some(date),
                size,
                tier: tier.to_owned(),
                street_rate,
                occupancy_pct,
                move_ins_mtd: count(Field::MoveInsMtd)?,
                total_units: count(Field::TotalUnits)?,
                occupied_units: count(Field::OccupiedUnits)?,
            };
            if let (Some(t), Some(o)) = (row.total_units, row.occupied_units) {
                if o > t {
                    return Err(err(
                        Field::OccupiedUnits,
                        format!("{o} is more than total_units {t}"),
                    ));
                }
            }
            Ok(Row::Unit(row))
        }
        UploadKind::CompetitorRates => {
            let rate_cell = required(Field::Rate)?;
            let rate = number(rate_cell).map_err(|m| err(Field::Rate, m))?;
            let new = NewRate {
                competitor: Text::parse(required(Field::Competitor)?)
                    .map_err(|m| err(Field::Competitor, m))?,
                size,
                rate: Money::new(rate).map_err(|m| err(Field::Rate, m))?,
                promo: get
                    .get(&Field::Promo)
                    .map(|p| Text::parse(p).map_err(|m| err(Field::Promo, m)))
                    .transpose()?,
                source_url: get
                    .get(&Field::SourceUrl)
                    .map(|u| HttpUrl::parse(u).map_err(|m| err(Field::SourceUrl, m)))
                    .transpose()?,
                observed_on: row_date.map(crate::sync::payload::SnapshotDate),
            };
            let field_of = |name: &str| match name {
                "observed_on" => Field::Date,
                "rate" => Field::Rate,
                _ => Field::Competitor,
            };
            new.check(today)
                .map(Row::Competitor)
                .map_err(|(f, m)| err(field_of(&f), m))
        }
    }
}

/// A JSON row's cells in the order of `headers` (its keys, in first-seen order across rows).
pub fn json_cells(
    row: &Map<String, Value>,
    headers: &[String],
) -> Result<Vec<String>, (String, String)> {
    headers
        .iter()
        .map(|h| match row.get(h) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(Value::Number(n)) => Ok(n.to_string()),
            Some(Value::Bool(b)) => Ok(b.to_string()),
            Some(_) => Err((h.clone(), "must be a string or a number".to_owned())),
        })
        .collect()
}

/// Checks that no size and tier repeats within a date; the repeats are row errors.
#[derive(Default)]
pub struct DuplicateCheck {
    seen: HashMap<(NaiveDate, String, String), u64>,
}

impl DuplicateCheck {
    pub fn check(&mut self, row: &UnitRateRow) -> Result<(), RowError> {
        let key = (
            row.date.unwrap_or_default(),
            row.size.to_string(),
            row.tier.to_lowercase(),
        );
        if let Some(first) = self.seen.insert(key, row.line) {
            return Err(RowError {
                line: row.line,
                field: Some("size".into()),
                message: format!(
                    "{} {} on {} already appears on line {first}",
                    row.size,
                    if row.tier.is_empty() {
                        "(no tier)"
                    } else {
                        &row.tier
                    },
                    row.date.unwrap_or_default()
                ),
            });
        }
        Ok(())
    }
}

/// The sync payload (as JSON) of one facility's uploaded unit rates for one date.
pub fn unit_rates_payload(facility_id: uuid::Uuid, date: NaiveDate, rows: &[UnitRateRow]) -> Value {
    let unit_types: Vec<Value> = rows
        .iter()
        .map(|r| {
            let mut o = json!({ "size": r.size.to_string(), "street_rate": r.street_rate });
            let m = o.as_object_mut().expect("object");
            if !r.tier.is_empty() {
                m.insert("tier".into(), json!(r.tier));
            }
            if let Some(v) = r.occupancy_pct {
                m.insert("occupancy_pct".into(), json!(v));
            }
            if let Some(v) = r.move_ins_mtd {
                m.insert("move_ins_mtd".into(), json!(v));
            }
            if let Some(v) = r.total_units {
                m.insert("total_units".into(), json!(v));
            }
            if let Some(v) = r.occupied_units {
                m.insert("occupied_units".into(), json!(v));
            }
            o
        })
        .collect();
    json!({ "facility": { "id": facility_id }, "date": date, "unit_types": unit_types })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    fn today() -> NaiveDate {
        "2026-11-22".parse().unwrap()
    }

    #[test]
    fn headers_normalise() {
        assert_eq!(normalise_header(" Street Rate ($) "), "street_rate");
        assert_eq!(normalise_header("Occupancy %"), "occupancy_pct");
        assert_eq!(normalise_header("Move-Ins MTD"), "move_ins_mtd");
        assert_eq!(normalise_header("\u{feff}Unit Size"), "unit_size");
    }

    #[test]
    fn kind_is_detected_from_the_columns() {
        let c = map_headers(&h(&["Unit Size", "Web Rate", "Occupancy %", "Notes"]), None).unwrap();
        assert_eq!(c.kind, UploadKind::UnitRates);
        assert_eq!(
            c.fields,
            vec![
                Some(Field::Size),
                Some(Field::StreetRate),
                Some(Field::OccupancyPct),
                None
            ]
        );
        assert_eq!(c.ignored, vec!["Notes"]);
        let c = map_headers(&h(&["Competitor Name", "Size", "Price", "Special"]), None).unwrap();
        assert_eq!(c.kind, UploadKind::CompetitorRates);
        assert!(map_headers(&h(&["foo", "bar"]), None)
            .unwrap_err()
            .contains("pass kind"));
    }

    #[test]
    fn wrong_kind_and_missing_columns_are_reported() {
        let e = map_headers(
            &h(&["competitor", "size", "rate"]),
            Some(UploadKind::UnitRates),
        )
        .unwrap_err();
        assert!(e.contains("looks like competitor_rates"), "{e}");
        let e = map_headers(&h(&["size", "rate"]), Some(UploadKind::CompetitorRates)).unwrap_err();
        assert!(e.contains("missing: competitor"), "{e}");
        let e = map_headers(&h(&["size", "rate", "price"]), None).unwrap_err();
        assert!(e.contains("both mean street_rate"), "{e}");
    }

    #[test]
    fn rows_are_checked_with_their_line() {
        let c = map_headers(&h(&["date", "size", "street_rate", "occupancy"]), None).unwrap();
        let ok = parse_row(
            &c,
            2,
            &["2026-11-20", "10x10", "$1,149.50", "91.5%"],
            None,
            today(),
        );
        let Ok(Row::Unit(r)) = ok else {
            panic!("{ok:?}")
        };
        assert_eq!((r.street_rate, r.occupancy_pct), (1149.5, Some(91.5)));
        let e = parse_row(&c, 3, &["2026-11-20", "10x10", "abc", ""], None, today()).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (3, Some("street_rate")));
        let e =
            parse_row(&c, 4, &["2026-11-20", "10x10", "100", "140"], None, today()).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("occupancy_pct"));
        let e = parse_row(&c, 5, &["", "10x10", "100", ""], None, today()).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("date"));
        // The upload's date stands in for a missing date column.
        assert!(parse_row(&c, 6, &["", "10x10", "100", ""], Some(today()), today()).is_ok());
        let e = parse_row(&c, 7, &["2026-11-20", "ten", "100", ""], None, today()).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("size"));
    }

    #[test]
    fn duplicates_within_a_date_name_the_first_line() {
        let c = map_headers(&h(&["date", "size", "street_rate"]), None).unwrap();
        let mut dup = DuplicateCheck::default();
        for (line, cells) in [
            (2, ["2026-11-20", "10x10", "1"]),
            (3, ["2026-11-21", "10x10", "1"]),
        ] {
            let Ok(Row::Unit(r)) = parse_row(&c, line, &cells, None, today()) else {
                panic!()
            };
            dup.check(&r).unwrap();
        }
        let Ok(Row::Unit(r)) = parse_row(&c, 4, &["2026-11-20", "10X10", "2"], None, today())
        else {
            panic!()
        };
        assert!(dup.check(&r).unwrap_err().message.contains("line 2"));
    }
}
