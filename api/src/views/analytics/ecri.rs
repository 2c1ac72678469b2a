//! `GET /api/v1/analytics/ecri` (see `jobs::analytics::reports::ecri`): read from each
//! facility's latest stored ECRI run.

use chrono::{DateTime, NaiveDate, Utc};
use jobs::analytics::reports::ecri as r;
use serde::Serialize;
use std::collections::BTreeMap;
use uuid::Uuid;

/// One unit size: of one facility's run, or summed over the facilities in scope.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriSize)]
pub(crate) struct Size {
    /// Unit size (`10x10`).
    pub size: String,
    /// Tenants of the size.
    pub tenants: u64,
    /// Tenants an increase is suggested for.
    pub tenants_affected: u64,
    /// Added rent per month if every suggestion is made and every tenant stays (currency).
    pub monthly_uplift: f64,
    /// Expected revenue over the horizon against no increase, net of expected move-outs and
    /// the months their units stand empty (currency).
    pub expected_gain: f64,
    /// Tenants increased who are expected to have moved out 90 days after the notice.
    pub expected_move_outs: f64,
    /// Average suggested increase of the tenants increased, % of their rent.
    pub avg_increase_pct: f64,
    /// Median suggested increase of the tenants increased, % (over many facilities: the
    /// average of their medians, weighted by tenants increased).
    pub median_increase_pct: f64,
    /// Street rate of the size (one facility's run only; null in sums).
    pub street_rate: Option<f64>,
    /// Tenants per guardrail that held their increase back or capped it.
    pub guardrails: BTreeMap<String, u64>,
}

impl From<jobs::ecri::sizes::SizeSummary> for Size {
    fn from(s: jobs::ecri::sizes::SizeSummary) -> Self {
        Self {
            size: s.size,
            tenants: s.tenants,
            tenants_affected: s.tenants_affected,
            monthly_uplift: s.monthly_uplift,
            expected_gain: s.expected_gain,
            expected_move_outs: s.expected_move_outs,
            avg_increase_pct: s.avg_increase_pct,
            median_increase_pct: s.median_increase_pct,
            street_rate: s.street_rate,
            guardrails: s.guardrails,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriTotals)]
pub(crate) struct Totals {
    /// Tenants counted.
    pub tenants: u64,
    /// Tenants an increase is suggested for.
    pub tenants_affected: u64,
    /// Added rent per month if every suggestion is made and every tenant stays (currency).
    pub monthly_uplift: f64,
    /// Expected revenue over each facility's horizon against no increase (currency).
    pub expected_gain: f64,
    /// Tenants increased who are expected to have moved out 90 days after the notice.
    pub expected_move_outs: f64,
}

impl From<r::Totals> for Totals {
    fn from(t: r::Totals) -> Self {
        Self {
            tenants: t.tenants,
            tenants_affected: t.tenants_affected,
            monthly_uplift: t.monthly_uplift,
            expected_gain: t.expected_gain,
            expected_move_outs: t.expected_move_outs,
        }
    }
}

/// The stored run a facility's figures come from.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriRunRef)]
pub(crate) struct RunRef {
    /// Id of the stored run (`GET /api/v1/facilities/{id}/ecri` serves the same).
    pub run_id: Uuid,
    /// When the worker computed it.
    pub generated_at: DateTime<Utc>,
    /// Why the run no longer describes the facility (a newer roll or snapshot, another engine
    /// version); null while it does.
    pub stale: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriFacility)]
pub(crate) struct FacilityOut {
    /// The facility.
    pub facility_id: Uuid,
    /// The facility's name.
    pub facility_name: String,
    /// Date of the rent roll (or snapshot, for cohorts) the suggestions are for.
    pub as_of: Option<NaiveDate>,
    /// The run read; null before the facility's first run.
    pub run: Option<RunRef>,
    /// Per unit size, in natural size order (5x5 < 5x10 < 10x10).
    pub sizes: Vec<Size>,
    /// Sums over the sizes.
    pub totals: Totals,
    /// Why there are no suggestions, when there are none.
    pub reason: Option<String>,
}

impl From<r::FacilityOut> for FacilityOut {
    fn from(f: r::FacilityOut) -> Self {
        Self {
            facility_id: f.facility_id,
            facility_name: f.facility_name,
            as_of: f.as_of,
            run: f.run.map(|x| RunRef {
                run_id: x.run_id,
                generated_at: x.generated_at,
                stale: x.stale,
            }),
            sizes: f.sizes.into_iter().map(Into::into).collect(),
            totals: f.totals.into(),
            reason: f.reason,
        }
    }
}

/// How complete the figures are.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriCoverage)]
pub(crate) struct Coverage {
    /// Facilities in scope.
    pub facilities: u64,
    /// Of those, with a stored run.
    pub with_run: u64,
    /// Of those, whose run is stale.
    pub stale: u64,
    /// The oldest run read.
    pub oldest_run_at: Option<DateTime<Utc>>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriReport)]
pub(crate) struct Report {
    /// Sums over every facility in scope (every page).
    pub totals: Totals,
    /// Per unit size over every facility in scope, in natural size order.
    pub sizes: Vec<Size>,
    /// How many facilities in scope have a stored run, and how many of those are stale.
    pub coverage: Coverage,
    /// This page of facilities: the largest expected gain first, then by name and id; a
    /// facility without a run after every one with a run.
    pub facilities: Vec<FacilityOut>,
    /// Pass as `cursor` for the next page, as it is (opaque); null on the last page.
    pub next_cursor: Option<String>,
}

impl From<r::Report> for Report {
    fn from(x: r::Report) -> Self {
        Self {
            totals: x.totals.into(),
            sizes: x.sizes.into_iter().map(Into::into).collect(),
            coverage: Coverage {
                facilities: x.coverage.facilities,
                with_run: x.coverage.with_run,
                stale: x.coverage.stale,
                oldest_run_at: x.coverage.oldest_run_at,
            },
            facilities: x.facilities.into_iter().map(Into::into).collect(),
            next_cursor: x.next_cursor,
        }
    }
}
