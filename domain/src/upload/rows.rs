//! Row checks of an upload: each row's cells read into a unit rate or a competitor rate, with
//! its line number on every error; repeated rows; the snapshot a day's unit rates become.

use super::{Columns, Field, UploadKind};
use crate::competitors::{Checked as CheckedRate, NewRate};
use crate::values::{Count, HttpUrl, Money, Percent, Text, UnitSize};
use chrono::NaiveDate;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::HashMap;

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

/// A checked tenant of an uploaded rent roll, with the date of the roll it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct RollRow {
    pub line: u64,
    pub date: NaiveDate,
    pub tenant: crate::sync::payload::RollTenant,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Row {
    Unit(UnitRateRow),
    Competitor(CheckedRate),
    Tenant(RollRow),
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

/// One row's cells by column, with its line for the errors.
struct Cells<'a> {
    line: u64,
    get: HashMap<Field, &'a str>,
}

impl<'a> Cells<'a> {
    /// The row's non-empty cells, over its own cells only: a short row under a wide header
    /// costs its length.
    fn new(cols: &Columns, line: u64, cells: &[&'a str]) -> Self {
        let mut get: HashMap<Field, &str> = HashMap::new();
        for (f, cell) in cols.fields.iter().zip(cells) {
            if let Some(f) = f {
                let cell = cell.trim();
                if !cell.is_empty() {
                    get.insert(*f, cell);
                }
            }
        }
        Self { line, get }
    }

    fn err(&self, field: Field, message: String) -> RowError {
        RowError {
            line: self.line,
            field: Some(field.name().to_owned()),
            message,
        }
    }

    fn optional(&self, f: Field) -> Option<&'a str> {
        self.get.get(&f).copied()
    }

    fn required(&self, f: Field) -> Result<&'a str, RowError> {
        self.optional(f)
            .ok_or_else(|| self.err(f, "is required".into()))
    }
}

/// Checks one row (cells in column order). `default_date` is the upload's `date` parameter.
pub fn parse_row(
    cols: &Columns,
    line: u64,
    cells: &[&str],
    default_date: Option<NaiveDate>,
    today: NaiveDate,
) -> Result<Row, RowError> {
    let c = Cells::new(cols, line, cells);
    let row_date = c
        .optional(Field::Date)
        .map(|d| date(d).map_err(|m| c.err(Field::Date, m)))
        .transpose()?
        .or(default_date);
    if let Some(d) = row_date {
        if d > today.succ_opt().unwrap_or(today) {
            return Err(c.err(Field::Date, format!("{d} is in the future")));
        }
    }
    let size = UnitSize::parse(c.required(Field::Size)?).map_err(|m| c.err(Field::Size, m))?;
    match cols.kind {
        UploadKind::UnitRates => unit_rate_row(&c, size, row_date).map(Row::Unit),
        // A roll without a date (an export "as of now") is today's.
        UploadKind::RentRoll => roll_row(&c, size, row_date.unwrap_or(today)).map(Row::Tenant),
        UploadKind::CompetitorRates => competitor_row(&c, size, row_date, today),
    }
}

/// A unit-rate row: a date (the row's or the upload's), a street rate, and the counts and
/// occupancy where given, occupied at most total.
fn unit_rate_row(
    c: &Cells<'_>,
    size: UnitSize,
    row_date: Option<NaiveDate>,
) -> Result<UnitRateRow, RowError> {
    let Some(date) = row_date else {
        return Err(c.err(
            Field::Date,
            "is required (a date column, or the upload's date parameter)".into(),
        ));
    };
    let money = |f: Field| -> Result<f64, RowError> {
        let v = number(c.required(f)?).map_err(|m| c.err(f, m))?;
        Money::new(v).map(Money::get).map_err(|m| c.err(f, m))
    };
    let count = |f: Field| -> Result<Option<u32>, RowError> {
        c.optional(f)
            .map(|cell| {
                number(cell)
                    .and_then(|v| Count::new(v).map(Count::get))
                    .map_err(|m| c.err(f, m))
            })
            .transpose()
    };
    let street_rate = money(Field::StreetRate)?;
    let occupancy_pct = c
        .optional(Field::OccupancyPct)
        .map(|cell| {
            number(cell)
                .and_then(|v| Percent::new(v).map(Percent::get))
                .map_err(|m| c.err(Field::OccupancyPct, m))
        })
        .transpose()?;
    let tier = c.optional(Field::Tier).unwrap_or("");
    if !tier.is_empty() {
        Text::<100>::parse(tier).map_err(|m| c.err(Field::Tier, m))?;
    }
    let row = UnitRateRow {
        line: c.line,
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
            return Err(c.err(
                Field::OccupiedUnits,
                format!("{o} is more than total_units {t}"),
            ));
        }
    }
    Ok(row)
}

/// A tenant of a rent roll dated `date`: read as the sync payload reads one, with dates that
/// fit (moved in by the roll's date, increased between the move-in and it).
fn roll_row(c: &Cells<'_>, size: UnitSize, date: NaiveDate) -> Result<RollRow, RowError> {
    let rent = number(c.required(Field::Rent)?).map_err(|m| c.err(Field::Rent, m))?;
    let move_in =
        self::date(c.required(Field::MoveInDate)?).map_err(|m| c.err(Field::MoveInDate, m))?;
    let raised = c
        .optional(Field::LastIncreaseDate)
        .map(|d| self::date(d).map_err(|m| c.err(Field::LastIncreaseDate, m)))
        .transpose()?;
    let flags: Vec<&str> = c.optional(Field::Flags).map_or(Vec::new(), |cell| {
        cell.split([';', '|', ','])
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .collect()
    });
    let value = json!({
        "tenant_id": c.required(Field::TenantId)?,
        "size": size.to_string(),
        "tier": c.get.get(&Field::Tier),
        "rent": rent,
        "move_in_date": move_in.to_string(),
        "last_increase_date": raised.map(|d| d.to_string()),
        "customer_id": c.get.get(&Field::CustomerId),
        "flags": flags,
    });
    let tenant: crate::sync::payload::RollTenant = serde_path_to_error::deserialize(value)
        .map_err(|e| {
            let field = match e.path().to_string().split(['.', '[']).next() {
                Some("tenant_id") => Field::TenantId,
                Some("tier") => Field::Tier,
                Some("rent") => Field::Rent,
                Some("customer_id") => Field::CustomerId,
                Some("flags") => Field::Flags,
                _ => Field::TenantId,
            };
            c.err(field, e.into_inner().to_string())
        })?;
    if move_in > date {
        return Err(c.err(
            Field::MoveInDate,
            format!("{move_in} is after the roll's date {date}"),
        ));
    }
    if let Some(r) = raised {
        if r < move_in || r > date {
            return Err(c.err(
                Field::LastIncreaseDate,
                format!("{r} is not between the move-in {move_in} and the roll's date {date}"),
            ));
        }
    }
    if tenant.flags.len() > crate::sync::payload::MAX_FLAGS {
        return Err(c.err(
            Field::Flags,
            format!(
                "at most {} flags, got {}",
                crate::sync::payload::MAX_FLAGS,
                tenant.flags.len()
            ),
        ));
    }
    Ok(RollRow {
        line: c.line,
        date,
        tenant,
    })
}

/// A competitor's rate, checked as one entered by hand is (`competitors::NewRate::check`).
fn competitor_row(
    c: &Cells<'_>,
    size: UnitSize,
    row_date: Option<NaiveDate>,
    today: NaiveDate,
) -> Result<Row, RowError> {
    let rate_cell = c.required(Field::Rate)?;
    let rate = number(rate_cell).map_err(|m| c.err(Field::Rate, m))?;
    let new = NewRate {
        competitor: Text::parse(c.required(Field::Competitor)?)
            .map_err(|m| c.err(Field::Competitor, m))?,
        size,
        rate: Money::new(rate).map_err(|m| c.err(Field::Rate, m))?,
        tier: c.optional(Field::Tier).map(str::to_owned),
        promo: c
            .optional(Field::Promo)
            .map(|p| Text::parse(p).map_err(|m| c.err(Field::Promo, m)))
            .transpose()?,
        source_url: c
            .optional(Field::SourceUrl)
            .map(|u| HttpUrl::parse(u).map_err(|m| c.err(Field::SourceUrl, m)))
            .transpose()?,
        observed_on: row_date.map(crate::sync::payload::SnapshotDate),
    };
    let field_of = |name: &str| match name {
        "observed_on" => Field::Date,
        "rate" => Field::Rate,
        "tier" => Field::Tier,
        _ => Field::Competitor,
    };
    new.check(today)
        .map(Row::Competitor)
        .map_err(|(f, m)| c.err(field_of(&f), m))
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
            // A list of words (a tenant's flags) reads as one cell, `;`-separated.
            Some(Value::Array(a)) if a.iter().all(Value::is_string) => Ok(a
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(";")),
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
