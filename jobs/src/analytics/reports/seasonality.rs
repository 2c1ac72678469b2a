//! `GET /api/v1/analytics/seasonality`: the move-in pace profile of the company, a facility, or
//! one size, from the monthly rollup (`facility_months`).
//!
//! Move-ins of a facility-month: the month-to-date move-ins of its latest snapshot over the day
//! of month of that snapshot (facility-days); without month-to-date figures, the sum of the
//! daily move-ins over the days reported. For a size: the size's `move_ins_mtd` (summed over
//! its tiers) in the month's latest snapshot, from the per-size rollup (`facility_size_months`).
//! The profile rests on the months before the current one (the month of the latest snapshot);
//! the current month gives the reading.

use crate::error::Result;
use chrono::{Datelike, NaiveDate};
use domain::analytics::seasonality::{
    advisory, profile, reading, MonthIndex, MonthTotals, Reading,
};
use domain::ids::{CompanyId, FacilityId};
use domain::values::UnitSize;
use serde::Serialize;
use sqlx::PgPool;
use uuid::Uuid;

#[derive(Debug, Serialize)]
pub struct Report {
    /// The facility asked for; null for company-wide.
    pub facility_id: Option<Uuid>,
    /// The unit size asked for; null for all sizes.
    pub size: Option<String>,
    /// `company`, `facility` or `size`.
    pub scope: &'static str,
    /// Date of the latest snapshot in scope.
    pub as_of: Option<NaiveDate>,
    /// The 12 months, January first.
    pub months: Vec<MonthIndex>,
    /// Months with enough own data.
    pub own_data_months: usize,
    /// Months taken from the prior.
    pub prior_months: usize,
    /// Facility-days a month needs to count as own data.
    pub min_facility_days_per_month: f64,
    /// The current month's reading, when there is data.
    pub current_month: Option<Reading>,
    /// A soft advisory from the past move-in pace (no forecast).
    pub advisory: String,
    /// Why there is no profile of own data, when there is none.
    pub reason: Option<String>,
}

struct Row {
    month: NaiveDate,
    move_ins: f64,
    facility_days: f64,
}

pub async fn report(
    pool: &PgPool,
    company_id: CompanyId,
    facility: Option<FacilityId>,
    allowed: &crate::access::Scope,
    size: Option<&UnitSize>,
    min_facility_days: f64,
) -> Result<Report> {
    // Checks the facility is the company's and the reader's (404 otherwise); the company, and
    // the reader's facilities when limited to some, scope every query.
    super::scope(pool, company_id, facility, allowed).await?;
    let narrowed = super::narrowed(facility, allowed);
    let as_of: Option<NaiveDate> = sqlx::query_scalar!(
        "SELECT max(last_date) FROM facility_months WHERE company_id = $1 AND ($2::uuid IS NULL OR facility_id = $2)
           AND ($3::uuid[] IS NULL OR facility_id = ANY($3))",
        company_id.uuid(),
        facility.map(FacilityId::uuid),
        narrowed.as_deref()
    )
    .fetch_one(pool)
    .await?;
    let rows = month_rows(pool, company_id, facility, narrowed.as_deref(), size).await?;
    let current_start = as_of.and_then(|d| d.with_day(1));
    let (totals, cur_mi, cur_days) = split_current(&rows, current_start);
    let p = profile(&totals, min_facility_days);
    let current = match (as_of, cur_days > 0.0) {
        (Some(d), true) => Some(reading(&p, d.month(), cur_mi / cur_days)),
        _ => None,
    };
    let advice = match &current {
        Some(r) => advisory(r, p.own_months),
        None => "No move-in figures for the current month yet. This describes past move-in pace only; it is not a forecast or a price instruction.".to_owned(),
    };
    let reason = reason(
        rows.is_empty(),
        as_of,
        size,
        p.own_months,
        min_facility_days,
    );
    Ok(Report {
        facility_id: facility.map(FacilityId::uuid),
        size: size.map(ToString::to_string),
        scope: match (facility, size) {
            (_, Some(_)) => "size",
            (Some(_), None) => "facility",
            (None, None) => "company",
        },
        as_of,
        months: p.months,
        own_data_months: p.own_months,
        prior_months: p.prior_months,
        min_facility_days_per_month: min_facility_days,
        current_month: current,
        advisory: advice,
        reason,
    })
}

/// The move-ins and facility-days of each facility-month in scope, of one size when asked.
async fn month_rows(
    pool: &PgPool,
    company_id: CompanyId,
    facility: Option<FacilityId>,
    narrowed: Option<&[Uuid]>,
    size: Option<&UnitSize>,
) -> Result<Vec<Row>> {
    Ok(match size {
        None => sqlx::query_as!(
            Row,
            r#"SELECT month,
                      (CASE WHEN move_ins_mtd IS NOT NULL THEN move_ins_mtd ELSE move_ins_daily_sum END)::float8 AS "move_ins!",
                      (CASE WHEN move_ins_mtd IS NOT NULL THEN extract(day FROM last_date)::int ELSE days_reported END)::float8 AS "facility_days!"
               FROM facility_months
               WHERE company_id = $1 AND ($2::uuid IS NULL OR facility_id = $2)
                 AND ($3::uuid[] IS NULL OR facility_id = ANY($3))
                 AND (move_ins_mtd IS NOT NULL OR move_ins_daily_sum IS NOT NULL)"#,
            company_id.uuid(),
            facility.map(FacilityId::uuid),
            narrowed
        )
        .fetch_all(pool)
        .await?,
        Some(size) => sqlx::query_as!(
            Row,
            r#"SELECT month, move_ins_mtd::float8 AS "move_ins!", extract(day FROM last_date)::float8 AS "facility_days!"
               FROM facility_size_months
               WHERE company_id = $1 AND ($2::uuid IS NULL OR facility_id = $2) AND size = $3
                 AND ($4::uuid[] IS NULL OR facility_id = ANY($4))"#,
            company_id.uuid(),
            facility.map(FacilityId::uuid),
            size.to_string(),
            narrowed
        )
        .fetch_all(pool)
        .await?,
    })
}

/// The totals of each calendar month before the current one (starting `current_start`), and
/// the current month's move-ins and facility-days.
fn split_current(rows: &[Row], current_start: Option<NaiveDate>) -> ([MonthTotals; 12], f64, f64) {
    let mut totals = [MonthTotals::default(); 12];
    let (mut cur_mi, mut cur_days) = (0.0, 0.0);
    for r in rows {
        if Some(r.month) == current_start {
            cur_mi += r.move_ins;
            cur_days += r.facility_days;
        } else {
            let t = &mut totals[r.month.month0() as usize];
            t.move_ins += r.move_ins;
            t.facility_days += r.facility_days;
        }
    }
    (totals, cur_mi, cur_days)
}

/// Why the profile is the national prior, when it is.
fn reason(
    no_rows: bool,
    as_of: Option<NaiveDate>,
    size: Option<&UnitSize>,
    own_months: usize,
    min_facility_days: f64,
) -> Option<String> {
    if no_rows {
        Some(match (as_of, size) {
            (None, _) => {
                "no sync has been received in this scope yet; the profile is the national prior"
                    .to_owned()
            }
            (Some(_), Some(s)) => {
                format!("no move-in figures for size {s} yet; the profile is the national prior")
            }
            (Some(_), None) => {
                "no move-in figures yet; the profile is the national prior".to_owned()
            }
        })
    } else if own_months == 0 {
        Some(format!(
            "no calendar month before the current one has {min_facility_days} facility-days of move-in figures yet; the profile is the national prior"
        ))
    } else {
        None
    }
}
