//! `GET /api/v1/analytics/revpas`: RevPAU and RevPAF per facility from its latest snapshot,
//! ranked best first, the portfolio's figures, and a 12-month trend from each month's latest
//! snapshot per facility (`facility_months`).

use crate::error::Result;
use chrono::{Datelike, Months, NaiveDate};
use domain::analytics::revenue::{rank_key, revenue, sum, Figures, Revenue};
use domain::ids::{CompanyId, FacilityId};
use serde::Serialize;
use sqlx::PgPool;
use std::collections::BTreeMap;
use uuid::Uuid;

#[derive(Debug, Serialize)]
pub struct FacilityOut {
    pub rank: Option<usize>,
    pub facility_id: Uuid,
    pub facility_name: String,
    pub as_of: Option<NaiveDate>,
    #[serde(flatten)]
    pub revenue: Revenue,
    pub reason: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct MonthOut {
    pub month: String,
    pub facilities: usize,
    #[serde(flatten)]
    pub revenue: Revenue,
}

#[derive(Debug, Serialize)]
pub struct Report {
    /// The facility asked for; null for all.
    pub facility_id: Option<Uuid>,
    /// What the figures are based on (street rates before concessions).
    pub basis: &'static str,
    /// Date of the latest snapshot counted.
    pub as_of: Option<NaiveDate>,
    /// The figures over every facility.
    pub portfolio: Revenue,
    /// Best first: by RevPAF, then RevPAU; facilities without figures last, unranked.
    pub facilities: Vec<FacilityOut>,
    /// The 12 months ending with the month of `as_of`, oldest first.
    pub trend: Vec<MonthOut>,
    /// Why there are no figures, when there are none.
    pub reason: Option<String>,
}

pub async fn report(
    pool: &PgPool,
    company_id: CompanyId,
    facility: Option<FacilityId>,
    allowed: &crate::access::Scope,
) -> Result<Report> {
    let scope = super::scope(pool, company_id, facility, allowed).await?;
    let ids = super::ids(&scope);
    let narrowed = super::narrowed(facility, allowed);
    // The latest snapshots and the rollup's last 12 months are read at once.
    let (latest, months) = tokio::try_join!(
        super::latest(pool, &ids),
        trend_rows(pool, company_id, facility, narrowed.as_deref())
    )?;
    let as_of = latest.values().map(|l| l.snapshot_date).max();
    let mut facilities: Vec<FacilityOut> = scope
        .iter()
        .map(|f| {
            let l = latest.get(&f.id);
            FacilityOut {
                rank: None,
                facility_id: f.id,
                facility_name: f.name.clone(),
                as_of: l.map(|l| l.snapshot_date),
                revenue: l.map(|l| revenue(&l.figures)).unwrap_or_default(),
                reason: match l {
                    None => Some(super::no_sync_reason()),
                    Some(l) if l.figures.total_units.is_none() => Some(
                        "the latest snapshot has no unit counts and the facility no rentable area, so units could not be estimated".to_owned(),
                    ),
                    Some(_) => None,
                },
            }
        })
        .collect();
    facilities.sort_by(|a, b| {
        rank_key(&a.revenue)
            .partial_cmp(&rank_key(&b.revenue))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut next = 1;
    for f in &mut facilities {
        if f.revenue.revpaf.is_some() || f.revenue.revpau.is_some() {
            f.rank = Some(next);
            next += 1;
        }
    }
    let all: Vec<Figures> = latest.values().map(|l| l.figures.clone()).collect();
    let trend = match as_of {
        Some(d) => trend(months, d),
        None => Vec::new(),
    };
    Ok(Report {
        facility_id: facility.map(FacilityId::uuid),
        basis: "street rates before concessions; promotions are not subtracted",
        as_of,
        portfolio: revenue(&sum(&all)),
        facilities,
        trend,
        reason: as_of
            .is_none()
            .then(|| "no sync has been received in this scope yet".to_owned()),
    })
}

/// Each facility's rollup rows of the 12 months ending with the latest month in scope.
async fn trend_rows(
    pool: &PgPool,
    company_id: CompanyId,
    facility: Option<FacilityId>,
    narrowed: Option<&[Uuid]>,
) -> Result<BTreeMap<NaiveDate, Vec<Figures>>> {
    let rows = sqlx::query!(
        r#"SELECT month, total_units, occupied_units, units_estimated, rentable_sqft,
                  rentable_sqft_estimated, gross_potential_rent, actual_rent, actual_rent_estimated,
                  actual_rent_coverage_pct, occupied_potential_rent
           FROM facility_months
           WHERE company_id = $1 AND ($2::uuid IS NULL OR facility_id = $2)
             AND ($3::uuid[] IS NULL OR facility_id = ANY($3))
             AND month >= (SELECT (max(month) - interval '11 months')::date FROM facility_months
                           WHERE company_id = $1 AND ($2::uuid IS NULL OR facility_id = $2)
                             AND ($3::uuid[] IS NULL OR facility_id = ANY($3)))"#,
        company_id.uuid(),
        facility.map(FacilityId::uuid),
        narrowed
    )
    .fetch_all(pool)
    .await?;
    let mut by_month: BTreeMap<NaiveDate, Vec<Figures>> = BTreeMap::new();
    for r in rows {
        by_month.entry(r.month).or_default().push(Figures {
            total_units: r.total_units.map(i64::from),
            occupied_units: r.occupied_units.map(i64::from),
            units_estimated: r.units_estimated,
            rentable_sqft: r.rentable_sqft,
            rentable_sqft_estimated: r.rentable_sqft_estimated,
            gross_potential_rent: r.gross_potential_rent,
            actual_rent: r.actual_rent,
            actual_rent_estimated: r.actual_rent_estimated,
            actual_rent_coverage_pct: r.actual_rent_coverage_pct,
            occupied_potential_rent: r.occupied_potential_rent,
        });
    }
    Ok(by_month)
}

/// The 12 months ending with the month of `as_of`, oldest first, summed over facilities.
fn trend(mut by_month: BTreeMap<NaiveDate, Vec<Figures>>, as_of: NaiveDate) -> Vec<MonthOut> {
    let last = as_of.with_day(1).unwrap_or(as_of);
    let first = last - Months::new(11);
    (0..12)
        .map(|i| {
            let m = first + Months::new(i);
            let figs = by_month.remove(&m).unwrap_or_default();
            MonthOut {
                month: m.format("%Y-%m").to_string(),
                facilities: figs.len(),
                revenue: revenue(&sum(&figs)),
            }
        })
        .collect()
}
