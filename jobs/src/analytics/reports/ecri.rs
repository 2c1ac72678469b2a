//! `GET /api/v1/analytics/ecri`: the ECRI engine's suggestions per facility and size, read from
//! each facility's latest stored run (`crate::ecri::runs`): totals and a per-size rollup over
//! every facility in scope, and one page of facilities (`limit`, `cursor`), the largest
//! expected gain first (`order`). Nothing here opens a run's tenant lines or recomputes
//! anything, so the cost grows with the facilities, not with their tenants.

mod order;

use super::{scope, FacilityRow};
use crate::ecri::runs::staleness;
use crate::ecri::sizes::{self, SizeSummary};
use crate::error::Result;
use chrono::{DateTime, NaiveDate, Utc};
use domain::ids::{CompanyId, FacilityId};
use domain::values::round2;
use serde::Serialize;
use sqlx::PgPool;
use std::collections::BTreeMap;
use uuid::Uuid;

/// Facilities per page unless `limit` says otherwise, and the most one page holds.
pub const DEFAULT_LIMIT: usize = 100;
pub const MAX_LIMIT: usize = 500;

#[derive(Clone, Debug, Default, Serialize)]
pub struct Totals {
    /// Tenants counted.
    pub tenants: u64,
    /// Tenants an increase is suggested for.
    pub tenants_affected: u64,
    /// Added rent per month if every suggestion is made and every tenant stays.
    pub monthly_uplift: f64,
    /// Expected revenue over each facility's horizon against no increase, net of expected
    /// move-outs and the months their units stand empty.
    pub expected_gain: f64,
    /// Tenants increased who are expected to have moved out 90 days after the notice.
    pub expected_move_outs: f64,
}

impl Totals {
    fn add(&mut self, o: &Totals) {
        self.tenants += o.tenants;
        self.tenants_affected += o.tenants_affected;
        self.monthly_uplift = round2(self.monthly_uplift + o.monthly_uplift);
        self.expected_gain = round2(self.expected_gain + o.expected_gain);
        self.expected_move_outs =
            ((self.expected_move_outs + o.expected_move_outs) * 10.0).round() / 10.0;
    }
}

/// The run a facility's figures come from.
#[derive(Clone, Debug, Serialize)]
pub struct RunRef {
    pub run_id: Uuid,
    pub generated_at: DateTime<Utc>,
    /// Why the run no longer describes the facility; null while it does.
    pub stale: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct FacilityOut {
    pub facility_id: Uuid,
    pub facility_name: String,
    /// Date of the rent roll (or snapshot, for cohorts) the suggestions are for.
    pub as_of: Option<NaiveDate>,
    /// The stored run read; null before the facility's first run.
    pub run: Option<RunRef>,
    /// Per unit size, in natural size order.
    pub sizes: Vec<SizeSummary>,
    pub totals: Totals,
    /// Why there are no suggestions, when there are none.
    pub reason: Option<String>,
}

/// How complete the figures are.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Coverage {
    /// Facilities in scope.
    pub facilities: u64,
    /// Of those, with a stored run.
    pub with_run: u64,
    /// Of those, whose run is stale (a newer roll or snapshot since).
    pub stale: u64,
    /// The oldest run read.
    pub oldest_run_at: Option<DateTime<Utc>>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Sums over every facility in scope (not only this page).
    pub totals: Totals,
    /// Per size over every facility in scope.
    pub sizes: Vec<SizeSummary>,
    pub coverage: Coverage,
    /// This page of facilities: the largest expected gain first, then by name and id; a
    /// facility without a run after every one with a run.
    pub facilities: Vec<FacilityOut>,
    /// Pass as `cursor` for the next page; null on the last.
    pub next_cursor: Option<String>,
}

/// A page request.
#[derive(Clone, Debug, Default)]
pub struct Page {
    pub limit: Option<usize>,
    pub cursor: Option<String>,
}

/// One facility's latest run, as read.
struct Row {
    run_id: Uuid,
    created_at: DateTime<Utc>,
    engine_version: String,
    roll_date: Option<NaiveDate>,
    snapshot_date: Option<NaiveDate>,
    as_of: Option<NaiveDate>,
    totals: Totals,
    sizes: Vec<SizeSummary>,
    reason: Option<String>,
}

pub async fn report(
    pool: &PgPool,
    company_id: CompanyId,
    facility: Option<FacilityId>,
    allowed: &crate::access::Scope,
    page: &Page,
) -> Result<Report> {
    let limit = page.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(crate::error::ValidationError::new(
            "limit",
            format!("must be between 1 and {MAX_LIMIT}"),
        )
        .into());
    }
    let all = scope(pool, company_id, facility, allowed).await?;
    let ids: Vec<Uuid> = all.iter().map(|f| f.id).collect();
    let mut runs = latest_runs(pool, &ids).await?;
    let mut all: Vec<(order::Place, FacilityRow)> = all
        .into_iter()
        .map(|f| {
            let place = order::Place {
                gain: runs.get(&f.id).map(|(r, _, _)| r.totals.expected_gain),
                name: f.name.clone(),
                id: f.id,
            };
            (place, f)
        })
        .collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    let places: Vec<order::Place> = all.iter().map(|(p, _)| p.clone()).collect();
    let start = match &page.cursor {
        None => 0,
        Some(c) => order::start_after(&places, c)?,
    };
    let mut report = Report {
        totals: Totals::default(),
        sizes: Vec::new(),
        coverage: Coverage {
            facilities: all.len() as u64,
            ..Coverage::default()
        },
        facilities: Vec::new(),
        next_cursor: None,
    };
    let mut every_size = Vec::new();
    let mut stale_of: BTreeMap<Uuid, Option<String>> = BTreeMap::new();
    for (id, (r, now_roll, now_snapshot)) in &runs {
        let stale = staleness(
            &r.engine_version,
            (r.roll_date, *now_roll),
            (r.snapshot_date, *now_snapshot),
        );
        let c = &mut report.coverage;
        c.with_run += 1;
        c.stale += u64::from(stale.is_some());
        c.oldest_run_at = Some(
            c.oldest_run_at
                .map_or(r.created_at, |o| o.min(r.created_at)),
        );
        report.totals.add(&r.totals);
        every_size.extend(r.sizes.iter().cloned());
        stale_of.insert(*id, stale);
    }
    report.sizes = sizes::sum(every_size);
    let end = (start + limit).min(all.len());
    for (_, f) in all.get(start..end).unwrap_or_default() {
        report.facilities.push(facility_out(
            f,
            runs.remove(&f.id),
            stale_of.remove(&f.id).flatten(),
        ));
    }
    if end < all.len() {
        report.next_cursor = places.get(end - 1).map(order::Place::cursor);
    }
    Ok(report)
}

fn facility_out(
    f: &FacilityRow,
    run: Option<(Row, Option<NaiveDate>, Option<NaiveDate>)>,
    stale: Option<String>,
) -> FacilityOut {
    match run {
        None => FacilityOut {
            facility_id: f.id,
            facility_name: f.name.clone(),
            as_of: None,
            run: None,
            sizes: Vec::new(),
            totals: Totals::default(),
            reason: Some("no ECRI run yet: one follows the facility's next sync, or ask for one with `GET /api/v1/facilities/{id}/ecri?fresh=true`".replace("{id}", &f.id.to_string())),
        },
        Some((r, _, _)) => FacilityOut {
            facility_id: f.id,
            facility_name: f.name.clone(),
            as_of: r.as_of,
            run: Some(RunRef {
                run_id: r.run_id,
                generated_at: r.created_at,
                stale,
            }),
            sizes: r.sizes,
            totals: r.totals,
            reason: r.reason,
        },
    }
}

/// Each facility's latest run, with its roll in force and latest snapshot date now.
async fn latest_runs(
    pool: &PgPool,
    ids: &[Uuid],
) -> Result<BTreeMap<Uuid, (Row, Option<NaiveDate>, Option<NaiveDate>)>> {
    let rows = sqlx::query!(
        r#"SELECT f.id AS "facility_id!", f.rent_roll_date AS now_roll,
                  (SELECT max(s.snapshot_date) FROM sync_records s WHERE s.facility_id = f.id)
                    AS "now_snapshot?",
                  r.id AS "run_id!", r.created_at AS "created_at!",
                  r.engine_version AS "engine_version!", r.roll_date, r.snapshot_date,
                  r.basis, r.tenants AS "tenants!", r.tenants_affected AS "tenants_affected!",
                  r.monthly_uplift AS "monthly_uplift!", r.expected_gain AS "expected_gain!",
                  r.expected_move_outs AS "expected_move_outs!", r.sizes AS "sizes!", r.reason
           FROM facilities f
           CROSS JOIN LATERAL (
             SELECT * FROM ecri_runs e WHERE e.facility_id = f.id
             ORDER BY e.created_at DESC LIMIT 1) r
           WHERE f.id = ANY($1)"#,
        ids
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let as_of = match r.basis.as_deref() {
                Some("rent_roll") => r.roll_date,
                _ => r.snapshot_date,
            };
            let row = Row {
                run_id: r.run_id,
                created_at: r.created_at,
                engine_version: r.engine_version,
                roll_date: r.roll_date,
                snapshot_date: r.snapshot_date,
                as_of,
                totals: Totals {
                    tenants: u64::try_from(r.tenants).unwrap_or(0),
                    tenants_affected: u64::try_from(r.tenants_affected).unwrap_or(0),
                    monthly_uplift: r.monthly_uplift,
                    expected_gain: r.expected_gain,
                    expected_move_outs: r.expected_move_outs,
                },
                // Sizes another version stored that no longer read are left out.
                sizes: serde_json::from_value(r.sizes).unwrap_or_default(),
                reason: r.reason,
            };
            (r.facility_id, (row, r.now_roll, r.now_snapshot))
        })
        .collect())
}
