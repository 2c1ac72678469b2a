//! `GET /api/v1/analytics/ecri`: per facility and size, from the latest snapshot's tenant rents
//! and street rates.

use super::{latest_with_units, scope, street_by_size, FacilityRow};
use crate::error::Result;
use chrono::NaiveDate;
use domain::analytics::ecri::{size_ecri, Cohort, EcriSettings, SizeEcri};
use domain::ids::{CompanyId, FacilityId};
use domain::values::round2;
use serde::Serialize;
use sqlx::PgPool;
use std::collections::BTreeMap;
use uuid::Uuid;

#[derive(Debug, Serialize)]
pub struct SizeOut {
    pub size: String,
    /// Street rate of the size in the same snapshot; null when the snapshot has none.
    pub street_rate: Option<f64>,
    #[serde(flatten)]
    pub ecri: Option<SizeEcri>,
    /// Why there is no suggestion for the size, when there is none.
    pub reason: Option<String>,
    /// The ECRI engine's suggestions for the size's tenants, grouped by whole months since
    /// their rent was last set (`crate::ecri`).
    pub cohorts: Vec<crate::ecri::CohortLine>,
}

#[derive(Debug, Default, Serialize)]
pub struct Totals {
    /// Tenants counted.
    pub tenants: u64,
    /// Tenants an increase is suggested for.
    pub tenants_affected: u64,
    /// Added rent per month if every suggestion is made.
    pub monthly_uplift: f64,
    /// Tenants expected to move out after the increases.
    pub expected_move_outs: f64,
    /// Monthly uplift less the rent of the expected move-outs.
    pub net_monthly_uplift: f64,
}

impl Totals {
    fn add(&mut self, e: &SizeEcri) {
        // u64: a company's facilities together may pass a u32 of tenants.
        self.tenants += u64::from(e.tenants);
        self.tenants_affected += u64::from(e.tenants_affected);
        self.monthly_uplift = round2(self.monthly_uplift + e.monthly_uplift);
        self.expected_move_outs =
            ((self.expected_move_outs + e.expected_move_outs) * 10.0).round() / 10.0;
        self.net_monthly_uplift = round2(self.net_monthly_uplift + e.net_monthly_uplift);
    }
}

#[derive(Debug, Serialize)]
pub struct FacilityOut {
    /// The facility.
    pub facility_id: Uuid,
    /// The facility's name.
    pub facility_name: String,
    /// Date of the snapshot the figures come from.
    pub as_of: Option<NaiveDate>,
    /// Suggestions per unit size.
    pub sizes: Vec<SizeOut>,
    /// Sums over the sizes.
    pub totals: Totals,
    /// Why there are no suggestions, when there are none.
    pub reason: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Report {
    /// The settings the suggestions were made with.
    pub settings: EcriSettings,
    /// Per facility.
    pub facilities: Vec<FacilityOut>,
    /// Sums over every facility.
    pub totals: Totals,
}

pub async fn report(
    pool: &PgPool,
    company_id: CompanyId,
    facility: Option<FacilityId>,
    allowed: &crate::access::Scope,
    settings: &EcriSettings,
) -> Result<Report> {
    let scope_rows = scope(pool, company_id, facility, allowed).await?;
    let (latest, units) = latest_with_units(pool, &super::ids(&scope_rows)).await?;
    let named: Vec<(Uuid, String)> = scope_rows.iter().map(|f| (f.id, f.name.clone())).collect();
    let engine = crate::ecri::facilities(pool, company_id, &named, &latest, &units).await?;
    let mut cohorts: BTreeMap<(Uuid, String), Vec<crate::ecri::CohortLine>> = BTreeMap::new();
    for f in &engine {
        for c in crate::ecri::cohorts(&f.lines) {
            cohorts
                .entry((f.facility_id, c.size.clone()))
                .or_default()
                .push(c);
        }
    }
    let mut totals = Totals::default();
    let facilities = scope_rows
        .iter()
        .map(|f| {
            let mut out = facility_out(f, latest.get(&f.id), &units, settings);
            for s in &mut out.sizes {
                s.cohorts = cohorts.remove(&(f.id, s.size.clone())).unwrap_or_default();
            }
            for s in &out.sizes {
                if let Some(e) = &s.ecri {
                    totals.add(e);
                }
            }
            out
        })
        .collect();
    Ok(Report {
        settings: settings.clone(),
        facilities,
        totals,
    })
}

fn facility_out(
    f: &FacilityRow,
    latest: Option<&super::Latest>,
    units: &BTreeMap<Uuid, Vec<super::UnitRow>>,
    settings: &EcriSettings,
) -> FacilityOut {
    let mut out = FacilityOut {
        facility_id: f.id,
        facility_name: f.name.clone(),
        as_of: latest.map(|l| l.snapshot_date),
        sizes: Vec::new(),
        totals: Totals::default(),
        reason: None,
    };
    let Some(l) = latest else {
        out.reason = Some(super::no_sync_reason());
        return out;
    };
    let rents = &l.tenant_rents;
    if rents.is_empty() {
        out.reason = Some(format!(
            "the latest snapshot ({}) carries no tenant rents",
            l.snapshot_date
        ));
        return out;
    }
    let street = street_by_size(units.get(&l.sync_id).map_or(&[][..], Vec::as_slice));
    let mut by_size: BTreeMap<String, Vec<Cohort>> = BTreeMap::new();
    for r in rents {
        by_size.entry(r.size.clone()).or_default().push(Cohort {
            tenant_count: r.tenant_count,
            avg_rent: r.avg_rent,
            months_since_last_increase: r.months_since_last_increase,
        });
    }
    for (size, cohorts) in by_size {
        let street_rate = street.get(&size).copied();
        let (ecri, reason) = match street_rate {
            Some(s) => {
                let e = size_ecri(&cohorts, s, settings);
                out.totals.add(&e);
                (Some(e), None)
            }
            None => (
                None,
                Some("no street rate for this size in the same snapshot".to_owned()),
            ),
        };
        out.sizes.push(SizeOut {
            size,
            street_rate,
            ecri,
            reason,
            cohorts: Vec::new(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn company_totals_pass_a_u32_of_tenants() {
        // 430 facilities of 10,000,000 tenants each (the most one snapshot may hold), every one
        // paying under the street rate: 4.3 billion tenants, past u32::MAX (4,294,967,295).
        let cohort = Cohort {
            tenant_count: 10_000_000,
            avg_rent: 100.0,
            months_since_last_increase: Some(24.0),
        };
        let size = size_ecri(&[cohort], 130.0, &EcriSettings::default());
        assert_eq!(
            (size.tenants, size.tenants_affected),
            (10_000_000, 10_000_000)
        );
        let mut totals = Totals::default();
        for _ in 0..430 {
            totals.add(&size);
        }
        assert_eq!(totals.tenants, 4_300_000_000);
        assert_eq!(totals.tenants_affected, 4_300_000_000);
        assert!(totals.monthly_uplift > 0.0);
    }
}
